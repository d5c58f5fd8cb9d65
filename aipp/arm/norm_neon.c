/* NEON dvpp_norm kernels (ARMv8.0 Advanced SIMD, no extension); reached
 * via dispatch.
 *
 * The entries are the ones x86 has (NCHW f32/f16, NHWC f32, NC1HWC0 every
 * dtype). ARMv8.0 has no gather, so every lookup is one table load, but
 * it goes straight into a vector lane (ld1 {v.s}[i]) and the vectors leave
 * in whole-register stores:
 *   NCHW f32/f16   plane by plane, 4 floats or 8 halves a store
 *   NHWC f32       one lane vector per channel, interleaved by vst2q/3q/4q
 *   NC1HWC0        one pixel's four lanes (spare lanes from the zero table)
 *                  in one store, beside zero stores for the rest of its C0
 *                  block (as SSE4.1 does)
 * The tables are the plan's, as at every level, so the bits are scalar's.
 * Pixels past the last whole vector use the scalar kernel. Nothing is
 * read past pixel w - 1 of a row, and nothing is written outside the
 * block. */
#include <arm_neon.h>

#include "../norm_int.h"

/* Table @t at the source byte @s of 4 pixels, @sc bytes apart. */
static inline __attribute__((always_inline)) float32x4_t
gather4_f32(const float *t, const uint8_t *s, unsigned sc)
{
    float32x4_t v = vld1q_dup_f32(t + s[0]);
    v = vld1q_lane_f32(t + s[sc], v, 1);
    v = vld1q_lane_f32(t + s[2 * sc], v, 2);
    return vld1q_lane_f32(t + s[3 * sc], v, 3);
}

/* Table @t at the source byte @s of 8 pixels, @sc bytes apart. */
static inline __attribute__((always_inline)) uint16x8_t
gather8_u16(const uint16_t *t, const uint8_t *s, unsigned sc)
{
    uint16x8_t v = vld1q_dup_u16(t + s[0]);
    v = vld1q_lane_u16(t + s[sc], v, 1);
    v = vld1q_lane_u16(t + s[2 * sc], v, 2);
    v = vld1q_lane_u16(t + s[3 * sc], v, 3);
    v = vld1q_lane_u16(t + s[4 * sc], v, 4);
    v = vld1q_lane_u16(t + s[5 * sc], v, 5);
    v = vld1q_lane_u16(t + s[6 * sc], v, 6);
    return vld1q_lane_u16(t + s[7 * sc], v, 7);
}

/* ---- NCHW -------------------------------------------------------------- */

static void nchw_f32(const dvpp_norm_plan *p, const uint8_t *src,
                     size_t stride, uint32_t w, uint32_t h, void *dst,
                     ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const unsigned sc = p->src_channels;
    const uint32_t n = w & ~3u;

    (void)ps;
    for (unsigned c = 0; c < p->channels && n; c++) {
        const float *t = p->lut.f32[c];
        for (uint32_t y = 0; y < h; y++) {
            const uint8_t *s = src + (size_t)y * stride + p->src_index[c];
            float *o = (float *)dst + (ptrdiff_t)c * cs + (ptrdiff_t)y * rs;
            for (uint32_t x = 0; x < n; x += 4, s += 4 * sc)
                vst1q_f32(o + x, gather4_f32(t, s, sc));
        }
    }
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NCHW, DVPP_DTYPE_F32)(
            p, src + (size_t)n * sc, stride, w - n, h, (float *)dst + n, rs,
            cs, 1);
}

static void nchw_f16(const dvpp_norm_plan *p, const uint8_t *src,
                     size_t stride, uint32_t w, uint32_t h, void *dst,
                     ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const unsigned sc = p->src_channels;
    const uint32_t n = w & ~7u;

    (void)ps;
    for (unsigned c = 0; c < p->channels && n; c++) {
        const uint16_t *t = p->lut.f16[c];
        for (uint32_t y = 0; y < h; y++) {
            const uint8_t *s = src + (size_t)y * stride + p->src_index[c];
            uint16_t *o =
                (uint16_t *)dst + (ptrdiff_t)c * cs + (ptrdiff_t)y * rs;
            for (uint32_t x = 0; x < n; x += 8, s += 8 * sc)
                vst1q_u16(o + x, gather8_u16(t, s, sc));
        }
    }
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NCHW, DVPP_DTYPE_F16)(
            p, src + (size_t)n * sc, stride, w - n, h, (uint16_t *)dst + n,
            rs, cs, 1);
}

/* ---- NHWC -------------------------------------------------------------- */

/* @n pixels (a multiple of 4) of each row, @C a constant once inlined:
 * channel c's four values are one vector, the vstNq stores interleave
 * them into pixels. */
static inline __attribute__((always_inline)) void
nhwc_f32_c(const dvpp_norm_plan *p, const uint8_t *src, size_t stride,
           uint32_t n, uint32_t h, float *dst, ptrdiff_t rs, const unsigned C)
{
    const unsigned sc = p->src_channels;
    const float *t0 = p->lut.f32[0], *t1 = p->lut.f32[1];
    const float *t2 = p->lut.f32[2], *t3 = p->lut.f32[3];
    const unsigned i0 = p->src_index[0], i1 = p->src_index[1];
    const unsigned i2 = p->src_index[2], i3 = p->src_index[3];

    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        float *o = dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < n; x += 4, s += 4 * sc, o += 4 * C) {
            float32x4_t v0 = gather4_f32(t0, s + i0, sc);
            if (C == 1) {
                vst1q_f32(o, v0);
            } else if (C == 2) {
                float32x4x2_t v = {{v0, gather4_f32(t1, s + i1, sc)}};
                vst2q_f32(o, v);
            } else if (C == 3) {
                float32x4x3_t v = {{v0, gather4_f32(t1, s + i1, sc),
                                    gather4_f32(t2, s + i2, sc)}};
                vst3q_f32(o, v);
            } else {
                float32x4x4_t v = {{v0, gather4_f32(t1, s + i1, sc),
                                    gather4_f32(t2, s + i2, sc),
                                    gather4_f32(t3, s + i3, sc)}};
                vst4q_f32(o, v);
            }
        }
    }
}

static void nhwc_f32(const dvpp_norm_plan *p, const uint8_t *src,
                     size_t stride, uint32_t w, uint32_t h, void *dst,
                     ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const unsigned C = p->channels, sc = p->src_channels;
    const uint32_t n = w & ~3u;

    (void)cs;
    (void)ps;
    if (n) {
        switch (C) {
        case 1: nhwc_f32_c(p, src, stride, n, h, (float *)dst, rs, 1); break;
        case 2: nhwc_f32_c(p, src, stride, n, h, (float *)dst, rs, 2); break;
        case 3: nhwc_f32_c(p, src, stride, n, h, (float *)dst, rs, 3); break;
        default: nhwc_f32_c(p, src, stride, n, h, (float *)dst, rs, 4); break;
        }
    }
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NHWC, DVPP_DTYPE_F32)(
            p, src + (size_t)n * sc, stride, w - n, h,
            (float *)dst + (size_t)n * C, rs, 1, C);
}

/* ---- NC1HWC0 ----------------------------------------------------------- */

/* Each pixel's C0 block: its lanes 0..3 (lanes >= C read the zero table,
 * see dvpp__norm_lanes) in the first store, zeros in the others. Every
 * pixel is whole, so there is no tail. */
static void nc1_f32(const dvpp_norm_plan *p, const uint8_t *src,
                    size_t stride, uint32_t w, uint32_t h, void *dst,
                    ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const void *t[4];
    unsigned off[4];
    const unsigned sc = p->src_channels;
    const float32x4_t z = vdupq_n_f32(0);

    (void)cs;
    (void)ps;
    dvpp__norm_lanes(p, 4, t, off);
    const float *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        float *o = (float *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < w; x++, s += sc, o += 16) {
            float32x4_t v = vld1q_dup_f32(t0 + s[off[0]]);
            v = vld1q_lane_f32(t1 + s[off[1]], v, 1);
            v = vld1q_lane_f32(t2 + s[off[2]], v, 2);
            v = vld1q_lane_f32(t3 + s[off[3]], v, 3);
            vst1q_f32(o, v);
            vst1q_f32(o + 4, z);
            vst1q_f32(o + 8, z);
            vst1q_f32(o + 12, z);
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
    const uint16x8_t z = vdupq_n_u16(0);

    (void)cs;
    (void)ps;
    dvpp__norm_lanes(p, 2, t, off);
    const uint16_t *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        uint16_t *o = (uint16_t *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < w; x++, s += sc, o += 16) {
            /* Lanes 4..7 of the first store stay zero from @z. */
            uint16x8_t v = vld1q_lane_u16(t0 + s[off[0]], z, 0);
            v = vld1q_lane_u16(t1 + s[off[1]], v, 1);
            v = vld1q_lane_u16(t2 + s[off[2]], v, 2);
            v = vld1q_lane_u16(t3 + s[off[3]], v, 3);
            vst1q_u16(o, v);
            vst1q_u16(o + 8, z);
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
    const uint8x16_t z = vdupq_n_u8(0);

    (void)cs;
    (void)ps;
    dvpp__norm_lanes(p, 1, t, off);
    const uint8_t *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        uint8_t *o = (uint8_t *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < w; x++, s += sc, o += 32) {
            /* Bytes 4..15 of the first store stay zero from @z. */
            uint8x16_t v = vld1q_lane_u8(t0 + s[off[0]], z, 0);
            v = vld1q_lane_u8(t1 + s[off[1]], v, 1);
            v = vld1q_lane_u8(t2 + s[off[2]], v, 2);
            v = vld1q_lane_u8(t3 + s[off[3]], v, 3);
            vst1q_u8(o, v);
            vst1q_u8(o + 16, z);
        }
    }
}

void dvpp__norm_kern_neon(dvpp_norm_kern *k)
{
    k->row[DVPP_LAYOUT_NCHW][DVPP_DTYPE_F32] = nchw_f32;
    k->row[DVPP_LAYOUT_NCHW][DVPP_DTYPE_F16] = nchw_f16;
    k->row[DVPP_LAYOUT_NHWC][DVPP_DTYPE_F32] = nhwc_f32;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_F32] = nc1_f32;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_F16] = nc1_f16;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_U8] = nc1_u8;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_I8] = nc1_u8;
}
