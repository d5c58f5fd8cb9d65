/* AVX2 CONSTANT row fill for make-border; built with -mavx2, reached via
 * dispatch. The pixel is repeated into a 96-byte pattern (a multiple of
 * 1, 2, 3 and 4-byte pixels and of the 32-byte store); the tail is copied
 * from the same pattern, so the bytes equal the scalar fill's. */
#include <immintrin.h>
#include <string.h>

#include "../csc_int.h"

void dvpp__fill_avx2(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn)
{
    uint8_t pat[96];
    size_t bytes = n * cn, i = 0;
    __m256i v0, v1, v2;

    for (size_t b = 0; b < sizeof(pat); b++)
        pat[b] = px[b % cn];
    v0 = _mm256_loadu_si256((const __m256i *)pat);
    v1 = _mm256_loadu_si256((const __m256i *)(pat + 32));
    v2 = _mm256_loadu_si256((const __m256i *)(pat + 64));
    for (; i + 96 <= bytes; i += 96) {
        _mm256_storeu_si256((__m256i *)(dst + i), v0);
        _mm256_storeu_si256((__m256i *)(dst + i + 32), v1);
        _mm256_storeu_si256((__m256i *)(dst + i + 64), v2);
    }
    /* i is a multiple of 96, hence of the period: the pattern restarts. */
    if (i < bytes)
        memcpy(dst + i, pat, bytes - i);
}
