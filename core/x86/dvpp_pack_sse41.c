/* SSE4.1 chroma (de)interleave; built with -msse4.1, reached via dispatch. */
#include <immintrin.h>

#include "../core_kern.h"

void dvpp__interleave_uv_sse41(const uint8_t *a, const uint8_t *b, uint8_t *dst,
                               size_t n)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        __m128i va = _mm_loadu_si128((const __m128i *)(a + i));
        __m128i vb = _mm_loadu_si128((const __m128i *)(b + i));
        _mm_storeu_si128((__m128i *)(dst + 2 * i), _mm_unpacklo_epi8(va, vb));
        _mm_storeu_si128((__m128i *)(dst + 2 * i + 16), _mm_unpackhi_epi8(va, vb));
    }
    for (; i < n; i++) {
        dst[2 * i] = a[i];
        dst[2 * i + 1] = b[i];
    }
}

void dvpp__deinterleave_uv_sse41(const uint8_t *src, uint8_t *a, uint8_t *b,
                                 size_t n)
{
    const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9,
                                       11, 13, 15);
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        __m128i lo = _mm_shuffle_epi8(
            _mm_loadu_si128((const __m128i *)(src + 2 * i)), even);
        __m128i hi = _mm_shuffle_epi8(
            _mm_loadu_si128((const __m128i *)(src + 2 * i + 16)), even);
        _mm_storeu_si128((__m128i *)(a + i), _mm_unpacklo_epi64(lo, hi));
        _mm_storeu_si128((__m128i *)(b + i), _mm_unpackhi_epi64(lo, hi));
    }
    for (; i < n; i++) {
        a[i] = src[2 * i];
        b[i] = src[2 * i + 1];
    }
}
