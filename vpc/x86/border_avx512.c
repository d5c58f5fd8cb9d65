/* AVX-512 CONSTANT row fill for make-border; built with -mavx512*, reached
 * via dispatch. The pixel is repeated into a 192-byte pattern (a multiple
 * of 1, 2, 3 and 4-byte pixels and of the 64-byte store); the tail is
 * written from the same pattern with byte-masked stores, so the bytes
 * equal the scalar fill's and nothing past @n pixels is touched. */
#include <immintrin.h>
#include <string.h>

#include "../csc_int.h"

void dvpp__fill_avx512(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn)
{
    uint8_t pat[192];
    size_t bytes = n * cn, i = 0;
    __m512i v[3];

    /* Set up by doubling (no per-byte division): pat[len + j] = pat[j]
     * holds as len is cn times a power of two. */
    memcpy(pat, px, cn);
    for (size_t len = cn; len < sizeof(pat); len *= 2)
        memcpy(pat + len, pat,
               len < sizeof(pat) - len ? len : sizeof(pat) - len);
    v[0] = _mm512_loadu_si512((const void *)pat);
    v[1] = _mm512_loadu_si512((const void *)(pat + 64));
    v[2] = _mm512_loadu_si512((const void *)(pat + 128));
    for (; i + 192 <= bytes; i += 192) {
        _mm512_storeu_si512((void *)(dst + i), v[0]);
        _mm512_storeu_si512((void *)(dst + i + 64), v[1]);
        _mm512_storeu_si512((void *)(dst + i + 128), v[2]);
    }
    /* i is a multiple of 192, hence of the period: the pattern restarts. */
    for (int k = 0; i < bytes; k++, i += 64) {
        size_t r = bytes - i;
        if (r >= 64)
            _mm512_storeu_si512((void *)(dst + i), v[k]);
        else
            _mm512_mask_storeu_epi8(dst + i, (__mmask64)((1ULL << r) - 1),
                                    v[k]);
    }
}
