/* NEON chroma (de)interleave (ARMv8.0 Advanced SIMD), reached via
 * dispatch. vst2/vld2 pair and split the bytes of 16 samples at a time,
 * touching only those 32 bytes; the tail is the scalar loop. */
#include <arm_neon.h>

#include "../core_kern.h"

void dvpp__interleave_uv_neon(const uint8_t *a, const uint8_t *b, uint8_t *dst,
                              size_t n)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        uint8x16x2_t x = {{vld1q_u8(a + i), vld1q_u8(b + i)}};
        vst2q_u8(dst + 2 * i, x);
    }
    for (; i < n; i++) {
        dst[2 * i] = a[i];
        dst[2 * i + 1] = b[i];
    }
}

void dvpp__deinterleave_uv_neon(const uint8_t *src, uint8_t *a, uint8_t *b,
                                size_t n)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        uint8x16x2_t x = vld2q_u8(src + 2 * i);
        vst1q_u8(a + i, x.val[0]);
        vst1q_u8(b + i, x.val[1]);
    }
    for (; i < n; i++) {
        a[i] = src[2 * i];
        b[i] = src[2 * i + 1];
    }
}
