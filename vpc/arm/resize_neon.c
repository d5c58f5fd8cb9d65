/* NEON resize kernels (ARMv8.0 Advanced SIMD, no extension), reached only
 * via dispatch.
 *
 * Each equals its scalar reference in resize_scalar.c bit for bit. The
 * integer kernels form the same exact sums (NEON multiplies 32-bit lanes,
 * so Pillow's 22-bit weights are used whole, and cv2's linear vertical
 * pass is the scalar int expression itself, lane by lane). The float
 * kernels do the same operations in the same order: separate vmulq and
 * vaddq, never vfmaq (the scalar file is built without contraction), and
 * fcvtns rounds half to even like lrintf; its saturation, then two
 * saturating narrows, give the scalar clamp to 0..255.
 *
 * Memory (resize_int.h): source rows are read at most a few bytes past a
 * pixel (RESIZE_OVERREAD), except by the kernels that read the caller's
 * plane directly (pil_v without a horizontal pass, area_fast), which read
 * only the bytes of their own pixels. Ring rows may get one junk lane past
 * their end (RESIZE_OVERWRITE); destination rows are written exactly.
 * Shapes without a vector path, and tails, go to the scalar code.
 */
#include <arm_neon.h>
#include <string.h>

#include "../resize_int.h"

#define INLINE static inline __attribute__((always_inline))

static inline uint32_t ld_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint16_t ld_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void st_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, sizeof(v));
}

/* 4 bytes (one pixel of 3 or 4 channels, or 4 taps of one) as u32 lanes. */
static inline uint32x4_t load4_u32(const uint8_t *p)
{
    uint8x8_t b = vreinterpret_u8_u32(vdup_n_u32(ld_u32(p)));
    return vmovl_u16(vget_low_u16(vmovl_u8(b)));
}

static inline float32x4_t load4_f32(const uint8_t *p)
{
    return vcvtq_f32_u32(load4_u32(p));
}

/* sat_u8 of 16 int32 lanes: the unsigned then u8 saturating narrows clamp
 * to 0..255 as the scalar comparison does. */
static inline uint8x16_t sat_pack16(int32x4_t a, int32x4_t b, int32x4_t c,
                                    int32x4_t d)
{
    uint16x8_t lo = vcombine_u16(vqmovun_s32(a), vqmovun_s32(b));
    uint16x8_t hi = vcombine_u16(vqmovun_s32(c), vqmovun_s32(d));
    return vcombine_u8(vqmovn_u16(lo), vqmovn_u16(hi));
}

/* round_sat_u8 of 16 floats: fcvtns is lrintf's half-to-even rounding. */
static inline uint8x16_t round_pack16(float32x4_t a, float32x4_t b,
                                      float32x4_t c, float32x4_t d)
{
    return sat_pack16(vcvtnq_s32_f32(a), vcvtnq_s32_f32(b), vcvtnq_s32_f32(c),
                      vcvtnq_s32_f32(d));
}

/* sat_u8 of 4 int32 lanes, as the low 4 bytes of a u32. */
static inline uint32_t sat_pack4(int32x4_t v)
{
    uint16x4_t h = vqmovun_s32(v);
    return vget_lane_u32(vreinterpret_u32_u8(vqmovn_u16(vcombine_u16(h, h))),
                         0);
}

/* Store pixel @v of @cn (3 or 4) bytes at @d: a 4-byte store (a 3-byte
 * pixel's extra byte is the next pixel's first, written after it) unless
 * @exact, where nothing past the pixel may be written. */
static inline void store_px(uint8_t *d, uint32_t v, unsigned cn, int exact)
{
    if (cn == 4 || !exact)
        st_u32(d, v);
    else
        memcpy(d, &v, 3); /* little-endian: the low 3 bytes */
}

/* --- nearest ------------------------------------------------------------- */

/* A fixed-size copy per pixel; 3-channel pixels move as 4-byte words (the
 * extra byte is overwritten by the next pixel), the last one exactly. */
void dvpp__resize_nearest_neon(const uint8_t *src, uint8_t *dst,
                               const int32_t *xofs, uint32_t pixels,
                               unsigned cn)
{
    uint32_t x = 0;

    if (cn == 2) {
        for (; x < pixels; x++)
            memcpy(dst + x * 2, src + xofs[x], 2);
    } else if (cn == 3 || cn == 4) {
        for (; x + 1 < pixels; x++)
            memcpy(dst + x * cn, src + xofs[x], 4);
    }
    dvpp__resize_nearest_scalar(src, dst + x * cn, xofs + x, pixels - x, cn);
}

/* --- cv2 horizontal: u8 -> i32, 11-bit weights --------------------------- */

/* Bytes widened to i16 lanes (values 0..255 are the same in s16). */
static inline int16x8_t widen8_s16(uint8x8_t b)
{
    return vreinterpretq_s16_u16(vmovl_u8(b));
}

/* Two taps, one channel, 4 columns per step: the pixel pairs and the
 * weight pairs keep the table's interleaving (p0 w0, p1 w1), so one
 * pairwise add of the products gives each column's sum. */
static void cv_h2_c1(const uint8_t *src, int32_t *dst, const resize_tab *t)
{
    uint32_t x = 0;

    for (; x + 4 <= t->n; x += 4) {
        uint16x4_t g = vdup_n_u16(0);
        g = vset_lane_u16(ld_u16(src + t->start[x]), g, 0);
        g = vset_lane_u16(ld_u16(src + t->start[x + 1]), g, 1);
        g = vset_lane_u16(ld_u16(src + t->start[x + 2]), g, 2);
        g = vset_lane_u16(ld_u16(src + t->start[x + 3]), g, 3);
        int16x8_t p = widen8_s16(vreinterpret_u8_u16(g));
        int16x8_t w = vld1q_s16(t->w16 + 2 * x);
        int32x4_t lo = vmull_s16(vget_low_s16(p), vget_low_s16(w));
        int32x4_t hi = vmull_high_s16(p, w);
        vst1q_s32(dst + x, vpaddq_s32(lo, hi));
    }
    dvpp__resize_cv_h_cols_scalar(src, dst, t, 1, x, t->n);
}

/* Four taps, one channel, 4 columns per step: 4 bytes per column, the
 * products of a column in 4 lanes, two rounds of pairwise adds. */
static void cv_h4_c1(const uint8_t *src, int32_t *dst, const resize_tab *t)
{
    uint32_t x = 0;

    for (; x + 4 <= t->n; x += 4) {
        uint32x4_t g = vdupq_n_u32(0);
        g = vsetq_lane_u32(ld_u32(src + t->start[x]), g, 0);
        g = vsetq_lane_u32(ld_u32(src + t->start[x + 1]), g, 1);
        g = vsetq_lane_u32(ld_u32(src + t->start[x + 2]), g, 2);
        g = vsetq_lane_u32(ld_u32(src + t->start[x + 3]), g, 3);
        uint8x16_t b = vreinterpretq_u8_u32(g);
        int16x8_t p01 = widen8_s16(vget_low_u8(b));
        int16x8_t p23 = vreinterpretq_s16_u16(vmovl_high_u8(b));
        int16x8_t w01 = vld1q_s16(t->w16 + 4 * x);
        int16x8_t w23 = vld1q_s16(t->w16 + 4 * x + 8);
        int32x4_t m0 = vmull_s16(vget_low_s16(p01), vget_low_s16(w01));
        int32x4_t m1 = vmull_high_s16(p01, w01);
        int32x4_t m2 = vmull_s16(vget_low_s16(p23), vget_low_s16(w23));
        int32x4_t m3 = vmull_high_s16(p23, w23);
        vst1q_s32(dst + x, vpaddq_s32(vpaddq_s32(m0, m1), vpaddq_s32(m2, m3)));
    }
    dvpp__resize_cv_h_cols_scalar(src, dst, t, 1, x, t->n);
}

/* 3 or 4 channels: one column per step, the channels of each tap's pixel
 * in 4 lanes (a 3-channel pixel's fourth lane is the next pixel's first
 * byte: its junk sum is stored one word past the column and overwritten
 * by the next one, or lands in the ring row's slack). */
INLINE void cv_h2_c34(const uint8_t *src, int32_t *dst, const resize_tab *t,
                      unsigned cn)
{
    for (uint32_t x = 0; x < t->n; x++) {
        const int16_t *w = t->w16 + 2 * x;
        int16x8_t v = widen8_s16(vld1_u8(src + (size_t)t->start[x] * cn));
        int16x4_t p1 = cn == 4 ? vget_high_s16(v)
                               : vget_low_s16(vextq_s16(v, v, 3));
        int32x4_t acc = vmull_n_s16(vget_low_s16(v), w[0]);
        vst1q_s32(dst + x * cn, vmlal_n_s16(acc, p1, w[1]));
    }
}

INLINE void cv_h4_c34(const uint8_t *src, int32_t *dst, const resize_tab *t,
                      unsigned cn)
{
    for (uint32_t x = 0; x < t->n; x++) {
        const int16_t *w = t->w16 + 4 * x;
        uint8x16_t b = vld1q_u8(src + (size_t)t->start[x] * cn);
        int16x8_t lo = widen8_s16(vget_low_u8(b));
        int16x8_t hi = vreinterpretq_s16_u16(vmovl_high_u8(b));
        int16x4_t p1, p2, p3;
        if (cn == 4) {
            p1 = vget_high_s16(lo);
            p2 = vget_low_s16(hi);
            p3 = vget_high_s16(hi);
        } else { /* pixels start at bytes 3, 6 and 9 */
            p1 = vget_low_s16(vextq_s16(lo, hi, 3));
            p2 = vget_low_s16(vextq_s16(lo, hi, 6));
            p3 = vget_low_s16(vextq_s16(hi, hi, 1));
        }
        int32x4_t acc = vmull_n_s16(vget_low_s16(lo), w[0]);
        acc = vmlal_n_s16(acc, p1, w[1]);
        acc = vmlal_n_s16(acc, p2, w[2]);
        vst1q_s32(dst + x * cn, vmlal_n_s16(acc, p3, w[3]));
    }
}

void dvpp__resize_cv_h_neon(const uint8_t *src, int32_t *dst,
                            const resize_tab *t, unsigned cn)
{
    if (t->taps == 2 && cn == 1)
        cv_h2_c1(src, dst, t);
    else if (t->taps == 2 && cn == 3)
        cv_h2_c34(src, dst, t, 3);
    else if (t->taps == 2 && cn == 4)
        cv_h2_c34(src, dst, t, 4);
    else if (t->taps == 4 && cn == 1)
        cv_h4_c1(src, dst, t);
    else if (t->taps == 4 && cn == 3)
        cv_h4_c34(src, dst, t, 3);
    else if (t->taps == 4 && cn == 4)
        cv_h4_c34(src, dst, t, 4);
    else
        dvpp__resize_cv_h_scalar(src, dst, t, cn);
}

/* --- cv2 vertical -------------------------------------------------------- */

/* The scalar int expression on 4 lanes: ((b0 * (s0 >> 4)) >> 16) +
 * ((b1 * (s1 >> 4)) >> 16), then (v + 2) >> 2; 32-bit lanes throughout,
 * so no narrowing can differ from the scalar code. */
static inline int32x4_t cv_v2_4(const int32_t *s0, const int32_t *s1,
                                int32x4_t b0, int32x4_t b1)
{
    int32x4_t a = vshrq_n_s32(vmulq_s32(b0, vshrq_n_s32(vld1q_s32(s0), 4)), 16);
    int32x4_t b = vshrq_n_s32(vmulq_s32(b1, vshrq_n_s32(vld1q_s32(s1), 4)), 16);
    return vshrq_n_s32(vaddq_s32(vaddq_s32(a, b), vdupq_n_s32(2)), 2);
}

void dvpp__resize_cv_v2_neon(const int32_t *s0, const int32_t *s1,
                             const int16_t *beta, uint8_t *dst, size_t n)
{
    const int32x4_t b0 = vdupq_n_s32(beta[0]), b1 = vdupq_n_s32(beta[1]);
    size_t x = 0;

    for (; x + 16 <= n; x += 16)
        vst1q_u8(dst + x, sat_pack16(cv_v2_4(s0 + x, s1 + x, b0, b1),
                                     cv_v2_4(s0 + x + 4, s1 + x + 4, b0, b1),
                                     cv_v2_4(s0 + x + 8, s1 + x + 8, b0, b1),
                                     cv_v2_4(s0 + x + 12, s1 + x + 12, b0, b1)));
    dvpp__resize_cv_v2_scalar(s0 + x, s1 + x, beta, dst + x, n - x);
}

/* OpenCV's float order: t = s3 * f3, then t = sk * fk + t for k = 2..0. */
static inline float32x4_t cv_v4_4(const int32_t *const *r, size_t x,
                                  const float32x4_t f[4])
{
    float32x4_t t = vmulq_f32(vcvtq_f32_s32(vld1q_s32(r[3] + x)), f[3]);
    for (int k = 2; k >= 0; k--)
        t = vaddq_f32(vmulq_f32(vcvtq_f32_s32(vld1q_s32(r[k] + x)), f[k]), t);
    return t;
}

void dvpp__resize_cv_v4_neon(const int32_t *const *rows, const int16_t *beta,
                             uint8_t *dst, size_t n, size_t nf)
{
    const float scale = 1.f / (2048 * 2048);
    const float32x4_t f[4] = {vdupq_n_f32(beta[0] * scale),
                              vdupq_n_f32(beta[1] * scale),
                              vdupq_n_f32(beta[2] * scale),
                              vdupq_n_f32(beta[3] * scale)};
    const int32_t *r[4];
    size_t x = 0;

    for (; x + 16 <= nf; x += 16)
        vst1q_u8(dst + x, round_pack16(cv_v4_4(rows, x, f),
                                       cv_v4_4(rows, x + 4, f),
                                       cv_v4_4(rows, x + 8, f),
                                       cv_v4_4(rows, x + 12, f)));
    for (int k = 0; k < 4; k++)
        r[k] = rows[k] + x;
    dvpp__resize_cv_v4_scalar(r, beta, dst + x, n - x, nf - x);
}

/* --- Pillow horizontal: u8 -> u8, 22-bit weights ------------------------- */

/* One pixel of 3 or 4 channels: a 4-byte load per tap times RESIZE_WQ's
 * 4-lane tap (a 3-channel pixel's fourth byte meets a zero weight). The
 * 2^21 bias starts the sum as in the scalar code. */
INLINE int32x4_t pil_px(const uint8_t *s, const int32_t *w, uint32_t taps,
                        unsigned cn)
{
    int32x4_t acc = vdupq_n_s32(1 << 21);

    for (uint32_t i = 0; i < taps; i++, s += cn, w += 4)
        acc = vmlaq_s32(acc, vreinterpretq_s32_u32(load4_u32(s)),
                        vld1q_s32(w));
    return acc;
}

/* Two columns per step (two independent sums in flight); pil_h may write
 * the destination row itself, so a 3-channel row's last pixel is stored
 * exactly. */
INLINE void pil_h_c34(const uint8_t *src, uint8_t *dst, const resize_tab *t,
                      unsigned cn)
{
    const size_t step = (size_t)t->taps * 4; /* RESIZE_WQ lanes per column */
    uint32_t x = 0;

    for (; x + 2 <= t->n; x += 2) {
        const int32_t *w = RESIZE_WQ(t, x, 0);
        int32x4_t a = pil_px(src + (size_t)t->start[x] * cn, w, t->taps, cn);
        int32x4_t b = pil_px(src + (size_t)t->start[x + 1] * cn, w + step,
                             t->taps, cn);
        uint16x8_t h = vcombine_u16(vqmovun_s32(vshrq_n_s32(a, 22)),
                                    vqmovun_s32(vshrq_n_s32(b, 22)));
        uint32x2_t v = vreinterpret_u32_u8(vqmovn_u16(h));
        store_px(dst + x * cn, vget_lane_u32(v, 0), cn, 0);
        store_px(dst + (x + 1) * cn, vget_lane_u32(v, 1), cn, x + 2 == t->n);
    }
    if (x < t->n) {
        int32x4_t a = pil_px(src + (size_t)t->start[x] * cn,
                             RESIZE_WQ(t, x, 0), t->taps, cn);
        store_px(dst + x * cn, sat_pack4(vshrq_n_s32(a, 22)), cn, 1);
    }
}

/* One channel: 4 taps per multiply, the leftover taps in scalar; integer
 * sums are exact in any order. */
static void pil_h_c1(const uint8_t *src, uint8_t *dst, const resize_tab *t)
{
    for (uint32_t x = 0; x < t->n; x++) {
        const uint8_t *s = src + t->start[x];
        const int32_t *k = t->w32 + (size_t)x * t->taps;
        int32x4_t acc = vdupq_n_s32(0);
        uint32_t i = 0;
        int32_t ss;
        for (; i + 4 <= t->taps; i += 4)
            acc = vmlaq_s32(acc, vreinterpretq_s32_u32(load4_u32(s + i)),
                            vld1q_s32(k + i));
        ss = (1 << 21) + vaddvq_s32(acc);
        for (; i < t->taps; i++)
            ss += s[i] * k[i];
        ss >>= 22;
        dst[x] = (uint8_t)(ss < 0 ? 0 : ss > 255 ? 255 : ss);
    }
}

void dvpp__resize_pil_h_neon(const uint8_t *src, uint8_t *dst,
                             const resize_tab *t, unsigned cn)
{
    if (cn == 3 && t->wq)
        pil_h_c34(src, dst, t, 3);
    else if (cn == 4 && t->wq)
        pil_h_c34(src, dst, t, 4);
    else if (cn == 1 && t->taps >= 4)
        pil_h_c1(src, dst, t);
    else
        dvpp__resize_pil_h_scalar(src, dst, t, cn);
}

/* --- Pillow vertical ------------------------------------------------------ */

/* 16 bytes per step: rows may be the caller's plane (no horizontal pass),
 * so loads stay inside [0, n) and the tail is scalar. */
void dvpp__resize_pil_v_neon(const uint8_t *const *rows, const int32_t *k,
                             uint32_t taps, uint8_t *dst, size_t n)
{
    size_t x = 0;

    for (; x + 16 <= n; x += 16) {
        int32x4_t a0 = vdupq_n_s32(1 << 21), a1 = a0, a2 = a0, a3 = a0;
        for (uint32_t i = 0; i < taps; i++) {
            uint8x16_t v = vld1q_u8(rows[i] + x);
            int32x4_t w = vdupq_n_s32(k[i]);
            uint16x8_t lo = vmovl_u8(vget_low_u8(v)), hi = vmovl_high_u8(v);
            a0 = vmlaq_s32(a0, vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo))), w);
            a1 = vmlaq_s32(a1, vreinterpretq_s32_u32(vmovl_high_u16(lo)), w);
            a2 = vmlaq_s32(a2, vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi))), w);
            a3 = vmlaq_s32(a3, vreinterpretq_s32_u32(vmovl_high_u16(hi)), w);
        }
        vst1q_u8(dst + x, sat_pack16(vshrq_n_s32(a0, 22), vshrq_n_s32(a1, 22),
                                     vshrq_n_s32(a2, 22), vshrq_n_s32(a3, 22)));
    }
    dvpp__resize_pil_v_from_scalar(rows, k, taps, dst, x, n);
}

/* --- cv2 area, horizontal: u8 -> f32 --------------------------------------- */

/* 3 or 4 channels, two columns per step (two sums in flight), each tap's
 * pixel in 4 lanes, the sum in tap order from 0 as the scalar. A
 * 3-channel column's fourth lane is junk: the next column's store
 * overwrites it, the last one lands in the ring row's slack. */
INLINE void area_h_c34(const uint8_t *src, float *dst, const resize_tab *t,
                       unsigned cn)
{
    uint32_t x = 0;

    for (; x + 2 <= t->n; x += 2) {
        const uint8_t *a = src + (size_t)t->start[x] * cn;
        const uint8_t *b = src + (size_t)t->start[x + 1] * cn;
        const float *wa = t->wf + (size_t)x * t->taps, *wb = wa + t->taps;
        float32x4_t sa = vdupq_n_f32(0.f), sb = sa;
        for (uint32_t k = 0; k < t->taps; k++) {
            sa = vaddq_f32(sa, vmulq_n_f32(load4_f32(a + k * cn), wa[k]));
            sb = vaddq_f32(sb, vmulq_n_f32(load4_f32(b + k * cn), wb[k]));
        }
        vst1q_f32(dst + x * cn, sa);
        vst1q_f32(dst + (x + 1) * cn, sb);
    }
    dvpp__resize_area_h_cols_scalar(src, dst, t, cn, x, t->n);
}

/* The low and high 4 of 8 u16 lanes as floats (exact). */
static inline float32x4_t lo4_f32(uint16x8_t v)
{
    return vcvtq_f32_u32(vmovl_u16(vget_low_u16(v)));
}

static inline float32x4_t hi4_f32(uint16x8_t v)
{
    return vcvtq_f32_u32(vmovl_high_u16(v));
}

/* 4 consecutive taps of 4 columns, transposed so that lane j of out[k]
 * is tap k of column j. */
static inline void transpose4(const float *w0, const float *w1,
                              const float *w2, const float *w3,
                              float32x4_t out[4])
{
    float32x4_t t0 = vtrn1q_f32(vld1q_f32(w0), vld1q_f32(w1));
    float32x4_t t1 = vtrn2q_f32(vld1q_f32(w0), vld1q_f32(w1));
    float32x4_t t2 = vtrn1q_f32(vld1q_f32(w2), vld1q_f32(w3));
    float32x4_t t3 = vtrn2q_f32(vld1q_f32(w2), vld1q_f32(w3));
    out[0] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t0),
                                              vreinterpretq_f64_f32(t2)));
    out[1] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t1),
                                              vreinterpretq_f64_f32(t3)));
    out[2] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t0),
                                              vreinterpretq_f64_f32(t2)));
    out[3] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t1),
                                              vreinterpretq_f64_f32(t3)));
}

/* One channel: 4 columns in the lanes (each lane still sums its own taps
 * in order). Taps come 4 at a time: 4 bytes per column, regrouped by tap
 * with one table lookup, the weights by a 4x4 transpose; leftover taps
 * one by one. Every read lies inside a column's window and weights. */
static void area_h_c1(const uint8_t *src, float *dst, const resize_tab *t)
{
    static const uint8_t by_tap[16] = {0, 4, 8, 12, 1, 5, 9, 13,
                                       2, 6, 10, 14, 3, 7, 11, 15};
    const uint8x16_t tbl = vld1q_u8(by_tap);
    const uint32_t taps = t->taps;
    uint32_t x = 0;

    for (; x + 4 <= t->n; x += 4) {
        const uint8_t *s0 = src + t->start[x], *s1 = src + t->start[x + 1];
        const uint8_t *s2 = src + t->start[x + 2], *s3 = src + t->start[x + 3];
        const float *w0 = t->wf + (size_t)x * taps, *w1 = w0 + taps;
        const float *w2 = w1 + taps, *w3 = w2 + taps;
        float32x4_t sum = vdupq_n_f32(0.f);
        uint32_t k = 0;
        for (; k + 4 <= taps; k += 4) {
            uint32x4_t g = vdupq_n_u32(0);
            float32x4_t w[4];
            g = vsetq_lane_u32(ld_u32(s0 + k), g, 0);
            g = vsetq_lane_u32(ld_u32(s1 + k), g, 1);
            g = vsetq_lane_u32(ld_u32(s2 + k), g, 2);
            g = vsetq_lane_u32(ld_u32(s3 + k), g, 3);
            uint8x16_t p = vqtbl1q_u8(vreinterpretq_u8_u32(g), tbl);
            uint16x8_t p01 = vmovl_u8(vget_low_u8(p)), p23 = vmovl_high_u8(p);
            transpose4(w0 + k, w1 + k, w2 + k, w3 + k, w);
            sum = vaddq_f32(sum, vmulq_f32(lo4_f32(p01), w[0]));
            sum = vaddq_f32(sum, vmulq_f32(hi4_f32(p01), w[1]));
            sum = vaddq_f32(sum, vmulq_f32(lo4_f32(p23), w[2]));
            sum = vaddq_f32(sum, vmulq_f32(hi4_f32(p23), w[3]));
        }
        for (; k < taps; k++) {
            uint32x4_t g = vdupq_n_u32(s0[k]);
            float32x4_t w = vdupq_n_f32(w0[k]);
            g = vsetq_lane_u32(s1[k], g, 1);
            g = vsetq_lane_u32(s2[k], g, 2);
            g = vsetq_lane_u32(s3[k], g, 3);
            w = vsetq_lane_f32(w1[k], w, 1);
            w = vsetq_lane_f32(w2[k], w, 2);
            w = vsetq_lane_f32(w3[k], w, 3);
            sum = vaddq_f32(sum, vmulq_f32(vcvtq_f32_u32(g), w));
        }
        vst1q_f32(dst + x, sum);
    }
    dvpp__resize_area_h_cols_scalar(src, dst, t, 1, x, t->n);
}

void dvpp__resize_area_h_neon(const uint8_t *src, float *dst,
                              const resize_tab *t, unsigned cn)
{
    if (cn == 3)
        area_h_c34(src, dst, t, 3);
    else if (cn == 4)
        area_h_c34(src, dst, t, 4);
    else if (cn == 1)
        area_h_c1(src, dst, t);
    else
        dvpp__resize_area_h_scalar(src, dst, t, cn);
}

/* --- cv2 area and tf vertical (float) -------------------------------------- */

void dvpp__resize_area_v_neon(const float *const *rows, const float *beta,
                              uint32_t taps, uint8_t *dst, size_t n)
{
    size_t x = 0;

    for (; x + 16 <= n; x += 16) {
        float32x4_t s[4] = {vdupq_n_f32(0.f), vdupq_n_f32(0.f),
                            vdupq_n_f32(0.f), vdupq_n_f32(0.f)};
        for (uint32_t k = 0; k < taps; k++) {
            float32x4_t b = vdupq_n_f32(beta[k]);
            for (int j = 0; j < 4; j++)
                s[j] = vaddq_f32(s[j], vmulq_f32(b, vld1q_f32(rows[k] + x + 4 * j)));
        }
        vst1q_u8(dst + x, round_pack16(s[0], s[1], s[2], s[3]));
    }
    dvpp__resize_area_v_from_scalar(rows, beta, taps, dst, x, n);
}

/* top + (bot - top) * lerp, as the scalar spells it. */
static inline float32x4_t tf_lerp4(const float *t, const float *b,
                                   float32x4_t l)
{
    float32x4_t top = vld1q_f32(t);
    return vaddq_f32(top, vmulq_f32(vsubq_f32(vld1q_f32(b), top), l));
}

void dvpp__resize_tf_v_neon(const float *top, const float *bot, float lerp,
                            uint8_t *dst, size_t n)
{
    const float32x4_t l = vdupq_n_f32(lerp);
    size_t x = 0;

    for (; x + 16 <= n; x += 16)
        vst1q_u8(dst + x, round_pack16(tf_lerp4(top + x, bot + x, l),
                                       tf_lerp4(top + x + 4, bot + x + 4, l),
                                       tf_lerp4(top + x + 8, bot + x + 8, l),
                                       tf_lerp4(top + x + 12, bot + x + 12, l)));
    dvpp__resize_tf_v_scalar(top + x, bot + x, lerp, dst + x, n - x);
}

/* --- TensorFlow horizontal: u8 -> f32 ---------------------------------------- */

/* a + (b - a) * lerp per channel, as the scalar spells it. 3 or 4
 * channels: one pixel per step in 4 lanes (a 3-channel pixel's junk fourth
 * lane is overwritten by the next pixel or lands in the ring's slack). */
INLINE void tf_h_c34(const uint8_t *src, float *dst, const int32_t *x0,
                     const int32_t *x1, const float *lerp, uint32_t pixels,
                     unsigned cn)
{
    for (uint32_t x = 0; x < pixels; x++) {
        float32x4_t a = load4_f32(src + (size_t)x0[x] * cn);
        float32x4_t b = load4_f32(src + (size_t)x1[x] * cn);
        vst1q_f32(dst + x * cn, vaddq_f32(a, vmulq_n_f32(vsubq_f32(b, a), lerp[x])));
    }
}

/* One channel: 4 pixels in the lanes. */
static void tf_h_c1(const uint8_t *src, float *dst, const int32_t *x0,
                    const int32_t *x1, const float *lerp, uint32_t pixels)
{
    uint32_t x = 0;

    for (; x + 4 <= pixels; x += 4) {
        uint32x4_t l = vdupq_n_u32(src[x0[x]]), r = vdupq_n_u32(src[x1[x]]);
        l = vsetq_lane_u32(src[x0[x + 1]], l, 1);
        l = vsetq_lane_u32(src[x0[x + 2]], l, 2);
        l = vsetq_lane_u32(src[x0[x + 3]], l, 3);
        r = vsetq_lane_u32(src[x1[x + 1]], r, 1);
        r = vsetq_lane_u32(src[x1[x + 2]], r, 2);
        r = vsetq_lane_u32(src[x1[x + 3]], r, 3);
        float32x4_t a = vcvtq_f32_u32(l), b = vcvtq_f32_u32(r);
        vst1q_f32(dst + x, vaddq_f32(a, vmulq_f32(vsubq_f32(b, a),
                                                  vld1q_f32(lerp + x))));
    }
    dvpp__resize_tf_h_scalar(src, dst + x, x0 + x, x1 + x, lerp + x,
                             pixels - x, 1);
}

void dvpp__resize_tf_h_neon(const uint8_t *src, float *dst, const int32_t *x0,
                            const int32_t *x1, const float *lerp,
                            uint32_t pixels, unsigned cn)
{
    if (cn == 3)
        tf_h_c34(src, dst, x0, x1, lerp, pixels, 3);
    else if (cn == 4)
        tf_h_c34(src, dst, x0, x1, lerp, pixels, 4);
    else if (cn == 1)
        tf_h_c1(src, dst, x0, x1, lerp, pixels);
    else
        dvpp__resize_tf_h_scalar(src, dst, x0, x1, lerp, pixels, cn);
}

/* --- cv2 area, integer factors ------------------------------------------------ */

/* (sum of a 2-pixel pair) + the pair below, then (sum + 2) >> 2: a
 * pairwise widening add per row and vrshrn's rounding narrow. */
static inline uint8x8_t quad8(uint8x16_t top, uint8x16_t bot)
{
    return vrshrn_n_u16(vpadalq_u8(vpaddlq_u8(top), bot), 2);
}

/* OpenCV's 2x2 path (1, 3 or 4 channels: the plan never rounds up for 2),
 * 8 output pixels per step: vld1/3/4 split 16 source pixels by channel, so
 * a step reads and writes only its own pixels (the source here is the
 * caller's plane, not a padded row). */
static void area_2x2(const uint8_t *src, size_t stride, uint8_t *dst,
                     uint32_t pixels, unsigned cn, float scale)
{
    const uint8_t *r1 = src + stride;
    uint32_t x = 0;

    for (; x + 8 <= pixels; x += 8) {
        const size_t i = (size_t)x * 2 * cn, o = (size_t)x * cn;
        if (cn == 1) {
            vst1_u8(dst + o, quad8(vld1q_u8(src + i), vld1q_u8(r1 + i)));
        } else if (cn == 3) {
            uint8x16x3_t a = vld3q_u8(src + i), b = vld3q_u8(r1 + i);
            uint8x8x3_t v = {{quad8(a.val[0], b.val[0]),
                              quad8(a.val[1], b.val[1]),
                              quad8(a.val[2], b.val[2])}};
            vst3_u8(dst + o, v);
        } else {
            uint8x16x4_t a = vld4q_u8(src + i), b = vld4q_u8(r1 + i);
            uint8x8x4_t v = {{quad8(a.val[0], b.val[0]),
                              quad8(a.val[1], b.val[1]),
                              quad8(a.val[2], b.val[2]),
                              quad8(a.val[3], b.val[3])}};
            vst4_u8(dst + o, v);
        }
    }
    dvpp__resize_area_fast_scalar(src + (size_t)x * 2 * cn, stride,
                                  dst + (size_t)x * cn, pixels - x, cn, 2, 2,
                                  scale, 1);
}

#define AREA_SEG 2048 /* u16 column sums per segment (4 KiB of stack) */

/* Column sums of @ky rows over @n bytes (u16: ky <= 257 keeps them exact).
 * Loads stay inside the @n bytes of each row. */
static void area_vsum(const uint8_t *s, size_t stride, uint32_t ky, size_t n,
                      uint16_t *vs)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        uint16x8_t lo = vdupq_n_u16(0), hi = lo;
        for (uint32_t j = 0; j < ky; j++) {
            uint8x16_t v = vld1q_u8(s + j * stride + i);
            lo = vaddw_u8(lo, vget_low_u8(v));
            hi = vaddw_high_u8(hi, v);
        }
        vst1q_u16(vs + i, lo);
        vst1q_u16(vs + i + 8, hi);
    }
    for (; i < n; i++) {
        uint32_t sum = 0;
        for (uint32_t j = 0; j < ky; j++)
            sum += s[j * stride + i];
        vs[i] = (uint16_t)sum;
    }
}

/* lrintf((float)sum * scale), saturated: the integer sum is exact, its
 * conversion rounds as (float) does, fcvtns rounds as lrintf. */
static inline uint8_t area_round1(uint32_t sum, float scale)
{
    int32_t r = vcvtns_s32_f32((float)sum * scale);
    return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

/* 8 block sums (u32) times @scale, rounded, as 8 bytes. */
static inline uint8x8_t area_round8(uint32x4_t lo, uint32x4_t hi,
                                    float32x4_t f)
{
    int32x4_t a = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_u32(lo), f));
    int32x4_t b = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_u32(hi), f));
    return vqmovn_u16(vcombine_u16(vqmovun_s32(a), vqmovun_s32(b)));
}

/* One channel, kx <= 4: vld2..4 split 8 pixels' kx column sums so that
 * val[m] holds sum m of each pixel; other kx one pixel at a time. */
static void area_hsum_c1(const uint16_t *vs, uint8_t *dst, uint32_t n,
                         uint32_t kx, float scale)
{
    const float32x4_t f = vdupq_n_f32(scale);
    uint32_t x = 0;

    for (; kx <= 4 && x + 8 <= n; x += 8) {
        const uint16_t *p = vs + (size_t)x * kx;
        uint32x4_t lo, hi;
        if (kx == 1) {
            uint16x8_t v = vld1q_u16(p);
            lo = vmovl_u16(vget_low_u16(v));
            hi = vmovl_high_u16(v);
        } else if (kx == 2) {
            uint16x8x2_t v = vld2q_u16(p);
            lo = vaddl_u16(vget_low_u16(v.val[0]), vget_low_u16(v.val[1]));
            hi = vaddl_high_u16(v.val[0], v.val[1]);
        } else if (kx == 3) {
            uint16x8x3_t v = vld3q_u16(p);
            lo = vaddl_u16(vget_low_u16(v.val[0]), vget_low_u16(v.val[1]));
            hi = vaddl_high_u16(v.val[0], v.val[1]);
            lo = vaddw_u16(lo, vget_low_u16(v.val[2]));
            hi = vaddw_high_u16(hi, v.val[2]);
        } else {
            uint16x8x4_t v = vld4q_u16(p);
            lo = vaddl_u16(vget_low_u16(v.val[0]), vget_low_u16(v.val[1]));
            hi = vaddl_high_u16(v.val[0], v.val[1]);
            lo = vaddq_u32(lo, vaddl_u16(vget_low_u16(v.val[2]),
                                         vget_low_u16(v.val[3])));
            hi = vaddq_u32(hi, vaddl_high_u16(v.val[2], v.val[3]));
        }
        vst1_u8(dst + x, area_round8(lo, hi, f));
    }
    for (; x < n; x++) {
        const uint16_t *p = vs + (size_t)x * kx;
        uint32_t sum = 0;
        for (uint32_t m = 0; m < kx; m++)
            sum += p[m];
        dst[x] = area_round1(sum, scale);
    }
}

/* 3 or 4 channels: one pixel per step, its channels in 4 lanes (for 3,
 * the fourth lane sums the next pixel's first column, or the 0 after the
 * segment). A 3-channel row's last pixel is stored exactly. */
static void area_hsum_c34(const uint16_t *vs, uint8_t *dst, uint32_t n,
                          unsigned cn, uint32_t kx, float scale, int row_end)
{
    const float32x4_t f = vdupq_n_f32(scale);

    for (uint32_t x = 0; x < n; x++) {
        const uint16_t *p = vs + (size_t)x * kx * cn;
        uint32x4_t acc = vdupq_n_u32(0);
        for (uint32_t m = 0; m < kx; m++)
            acc = vaddw_u16(acc, vld1_u16(p + m * cn));
        int32x4_t r = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_u32(acc), f));
        store_px(dst + x * cn, sat_pack4(r), cn, row_end && x + 1 == n);
    }
}

void dvpp__resize_area_fast_neon(const uint8_t *src, size_t stride,
                                 uint8_t *dst, uint32_t pixels, unsigned cn,
                                 uint32_t kx, uint32_t ky, float scale,
                                 int round_up)
{
    /* +4: a 3-channel pixel's 4-lane load may read one sum past the end. */
    uint16_t vs[AREA_SEG + 4];
    uint32_t per = 0;

    if (round_up && kx == 2 && ky == 2 && cn != 2) {
        area_2x2(src, stride, dst, pixels, cn, scale);
        return;
    }
    if (!round_up && cn != 2 && ky <= 257 && (size_t)kx * cn <= AREA_SEG)
        per = AREA_SEG / (kx * cn);
    if (!per) {
        dvpp__resize_area_fast_scalar(src, stride, dst, pixels, cn, kx, ky,
                                      scale, round_up);
        return;
    }
    for (uint32_t x = 0; x < pixels; x += per) {
        uint32_t n = pixels - x < per ? pixels - x : per;
        size_t bytes = (size_t)n * kx * cn;
        area_vsum(src + (size_t)x * kx * cn, stride, ky, bytes, vs);
        vs[bytes] = 0; /* the junk lane reads a defined 0 */
        if (cn == 1)
            area_hsum_c1(vs, dst + x, n, kx, scale);
        else
            area_hsum_c34(vs, dst + (size_t)x * cn, n, cn, kx, scale,
                          x + n == pixels);
    }
}
