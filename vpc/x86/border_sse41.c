/* SSE4.1 CONSTANT row fill for make-border; built with -msse4.1, reached
 * via dispatch. As border_avx2.c with 16-byte stores and a 48-byte
 * pattern (a multiple of 1, 2, 3 and 4-byte pixels). */
#include <smmintrin.h>
#include <string.h>

#include "../csc_int.h"

void dvpp__fill_sse41(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn)
{
    uint8_t pat[48];
    size_t bytes = n * cn, i = 0;
    __m128i v0, v1, v2;

    for (size_t b = 0; b < sizeof(pat); b++)
        pat[b] = px[b % cn];
    v0 = _mm_loadu_si128((const __m128i *)pat);
    v1 = _mm_loadu_si128((const __m128i *)(pat + 16));
    v2 = _mm_loadu_si128((const __m128i *)(pat + 32));
    for (; i + 48 <= bytes; i += 48) {
        _mm_storeu_si128((__m128i *)(dst + i), v0);
        _mm_storeu_si128((__m128i *)(dst + i + 16), v1);
        _mm_storeu_si128((__m128i *)(dst + i + 32), v2);
    }
    if (i < bytes)
        memcpy(dst + i, pat, bytes - i);
}
