/* AVX-512 (F/BW) chroma (de)interleave; built with -mavx512*, reached via
 * dispatch. Tails fall back to the AVX2 kernel. */
#include <immintrin.h>

#include "../core_kern.h"

void dvpp__interleave_uv_avx512(const uint8_t *a, const uint8_t *b,
                                uint8_t *dst, size_t n)
{
    /* Spread the inputs so 128-bit lane L holds quads L and L+4: unpacklo
     * then yields pairs 8L..8L+7 (output 0..63) and unpackhi pairs
     * 32+8L..32+8L+7 (output 64..127), already in order. One-source
     * vpermq measured faster than a two-source permute after the unpack. */
    const __m512i spread = _mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7);
    size_t i = 0;

    for (; i + 64 <= n; i += 64) {
        __m512i va = _mm512_permutexvar_epi64(
            spread, _mm512_loadu_si512((const void *)(a + i)));
        __m512i vb = _mm512_permutexvar_epi64(
            spread, _mm512_loadu_si512((const void *)(b + i)));
        _mm512_storeu_si512((void *)(dst + 2 * i), _mm512_unpacklo_epi8(va, vb));
        _mm512_storeu_si512((void *)(dst + 2 * i + 64),
                            _mm512_unpackhi_epi8(va, vb));
    }
    if (i < n)
        dvpp__interleave_uv_avx2(a + i, b + i, dst + 2 * i, n - i);
}

void dvpp__deinterleave_uv_avx512(const uint8_t *src, uint8_t *a, uint8_t *b,
                                  size_t n)
{
    const __m512i even = _mm512_broadcast_i32x4(_mm_setr_epi8(
        0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    /* Per 128-bit lane: quad 2k = a-bytes, quad 2k+1 = b-bytes. */
    const __m512i ia = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    const __m512i ib = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    size_t i = 0;

    for (; i + 64 <= n; i += 64) {
        __m512i x = _mm512_shuffle_epi8(
            _mm512_loadu_si512((const void *)(src + 2 * i)), even);
        __m512i y = _mm512_shuffle_epi8(
            _mm512_loadu_si512((const void *)(src + 2 * i + 64)), even);
        _mm512_storeu_si512((void *)(a + i),
                            _mm512_permutex2var_epi64(x, ia, y));
        _mm512_storeu_si512((void *)(b + i),
                            _mm512_permutex2var_epi64(x, ib, y));
    }
    if (i < n)
        dvpp__deinterleave_uv_avx2(src + 2 * i, a + i, b + i, n - i);
}
