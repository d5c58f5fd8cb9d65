/* AVX2 dvpp_norm kernels; built with -mavx2 -mfma -mf16c -mbmi2, reached via
 * dispatch.
 *
 * Measured on Zen 4 (224x224x3, GB/s of output): vpgatherdd-based kernels
 * (8 pixels a gather, indices in output order) lost to the scalar table
 * loops everywhere: f32 NCHW 6.9 against 12.8, f32 NHWC 7.5 against 12.5,
 * f16 NHWC 3.3 against 6.8, i8 NCHW 1.7 against 3.2. Gathers are also slow
 * on Intel cores with the Gather Data Sampling microcode, so this level
 * keeps the scalar lookups for NCHW and NHWC and only widens SSE4.1's
 * NC1HWC0 assembly: one pixel's four lanes (spare lanes from a zero table)
 * and the zeros of the rest of its C0 block go out in 32-byte stores. */
#include <immintrin.h>

#include "../norm_int.h"


static void nc1_f32(const dvpp_norm_plan *p, const uint8_t *src,
                    size_t stride, uint32_t w, uint32_t h, void *dst,
                    ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const void *t[4];
    unsigned off[4];
    const unsigned sc = p->src_channels;
    const __m256 z = _mm256_setzero_ps();

    (void)cs;
    (void)ps;
    dvpp__norm_lanes(p, 4, t, off);
    const float *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        float *o = (float *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < w; x++, s += sc, o += 16) {
            __m128 v = _mm_setr_ps(t0[s[off[0]]], t1[s[off[1]]], t2[s[off[2]]],
                                   t3[s[off[3]]]);
            _mm256_storeu_ps(o, _mm256_zextps128_ps256(v));
            _mm256_storeu_ps(o + 8, z);
        }
    }
}

static void nc1_f16(const dvpp_norm_plan *p, const uint8_t *src,
                    size_t stride, uint32_t w, uint32_t h, void *dst,
                    ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const void *t[4];
    unsigned off[4];
    const unsigned sc = p->src_channels;

    (void)cs;
    (void)ps;
    dvpp__norm_lanes(p, 2, t, off);
    const uint16_t *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        uint16_t *o = (uint16_t *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < w; x++, s += sc, o += 16) {
            uint64_t v = (uint64_t)t0[s[off[0]]] |
                         (uint64_t)t1[s[off[1]]] << 16 |
                         (uint64_t)t2[s[off[2]]] << 32 |
                         (uint64_t)t3[s[off[3]]] << 48;
            _mm256_storeu_si256((__m256i *)o, _mm256_zextsi128_si256(
                                                  _mm_cvtsi64_si128((long long)v)));
        }
    }
}

static void nc1_u8(const dvpp_norm_plan *p, const uint8_t *src,
                   size_t stride, uint32_t w, uint32_t h, void *dst,
                   ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const void *t[4];
    unsigned off[4];
    const unsigned sc = p->src_channels;

    (void)cs;
    (void)ps;
    dvpp__norm_lanes(p, 1, t, off);
    const uint8_t *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        uint8_t *o = (uint8_t *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < w; x++, s += sc, o += 32) {
            uint32_t v = (uint32_t)t0[s[off[0]]] | (uint32_t)t1[s[off[1]]] << 8 |
                         (uint32_t)t2[s[off[2]]] << 16 |
                         (uint32_t)t3[s[off[3]]] << 24;
            _mm256_storeu_si256((__m256i *)o, _mm256_zextsi128_si256(
                                                  _mm_cvtsi32_si128((int)v)));
        }
    }
}

void dvpp__norm_kern_avx2(dvpp_norm_kern *k)
{
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_F32] = nc1_f32;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_F16] = nc1_f16;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_U8] = nc1_u8;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_I8] = nc1_u8;
}
