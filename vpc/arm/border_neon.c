/* NEON CONSTANT row fill for make-border (ARMv8.0 Advanced SIMD), reached
 * via dispatch. As border_sse41.c: a 48-byte pattern (a whole number of
 * 1-, 2-, 3- and 4-byte pixels, so every 48-byte block starts on a pixel)
 * stored 16 bytes at a time, the last partial block copied from it. */
#include <arm_neon.h>
#include <string.h>

#include "../csc_int.h"

#define PAT 48

void dvpp__fill_neon(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn)
{
    uint8_t pat[PAT];
    size_t bytes = n * cn, i = 0;
    uint8x16_t v0, v1, v2;

    /* A pixel size the pattern does not hold whole is the scalar's. */
    if (cn == 0 || PAT % cn) {
        dvpp__fill_scalar(dst, n, px, cn);
        return;
    }
    for (size_t b = 0; b < sizeof(pat); b++)
        pat[b] = px[b % cn];
    v0 = vld1q_u8(pat);
    v1 = vld1q_u8(pat + 16);
    v2 = vld1q_u8(pat + 32);
    for (; i + PAT <= bytes; i += PAT) {
        vst1q_u8(dst + i, v0);
        vst1q_u8(dst + i + 16, v1);
        vst1q_u8(dst + i + 32, v2);
    }
    if (i < bytes)
        memcpy(dst + i, pat, bytes - i);
}
