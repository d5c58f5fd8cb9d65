/* AVX2 chroma (de)interleave; built with -mavx2, reached via dispatch. */
#include <immintrin.h>

#include "../core_kern.h"

void dvpp__interleave_uv_avx2(const uint8_t *a, const uint8_t *b, uint8_t *dst,
                              size_t n)
{
    size_t i = 0;

    for (; i + 32 <= n; i += 32) {
        __m256i va = _mm256_loadu_si256((const __m256i *)(a + i));
        __m256i vb = _mm256_loadu_si256((const __m256i *)(b + i));
        __m256i lo = _mm256_unpacklo_epi8(va, vb); /* lanes: 0-7,16-23 */
        __m256i hi = _mm256_unpackhi_epi8(va, vb); /* lanes: 8-15,24-31 */
        _mm256_storeu_si256((__m256i *)(dst + 2 * i),
                            _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(dst + 2 * i + 32),
                            _mm256_permute2x128_si256(lo, hi, 0x31));
    }
    for (; i < n; i++) {
        dst[2 * i] = a[i];
        dst[2 * i + 1] = b[i];
    }
}

void dvpp__deinterleave_uv_avx2(const uint8_t *src, uint8_t *a, uint8_t *b,
                                size_t n)
{
    const __m256i even = _mm256_setr_epi8(
        0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
        0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    size_t i = 0;

    for (; i + 32 <= n; i += 32) {
        /* Per 128-bit lane: 8 a-bytes then 8 b-bytes. */
        __m256i x = _mm256_shuffle_epi8(
            _mm256_loadu_si256((const __m256i *)(src + 2 * i)), even);
        __m256i y = _mm256_shuffle_epi8(
            _mm256_loadu_si256((const __m256i *)(src + 2 * i + 32)), even);
        /* Gather the 64-bit a-halves in order: x0 x2 y0 y2 (quad indices). */
        __m256i xa = _mm256_permute4x64_epi64(x, 0xD8); /* a0 a1 b0 b1 */
        __m256i ya = _mm256_permute4x64_epi64(y, 0xD8);
        _mm256_storeu_si256((__m256i *)(a + i),
                            _mm256_permute2x128_si256(xa, ya, 0x20));
        _mm256_storeu_si256((__m256i *)(b + i),
                            _mm256_permute2x128_si256(xa, ya, 0x31));
    }
    for (; i < n; i++) {
        a[i] = src[2 * i];
        b[i] = src[2 * i + 1];
    }
}
