/* NEON colour-conversion kernels (ARMv8.0 Advanced SIMD, no extension),
 * reached via dispatch.
 *
 * Same integer formulas as the scalar references in dvpp_csc.c, 16 pixels
 * per step. NEON multiplies 32-bit lanes, so every coefficient is used
 * whole (x86 splits them for pmaddwd's 16-bit operands): each sum is the
 * int32 the scalar code forms, and >> then two saturating narrows is its
 * clamp_u8, hence bit-exact results. vld2/3/4 and vst2/3/4 split and
 * rebuild the pixels, so a step reads and writes only the bytes of its own
 * 16 pixels (8 chroma samples) and nothing past the row. Tails, and
 * arguments outside what dvpp_csc builds (a layout index past the pixel,
 * paired chroma that is not adjacent), go to the scalar kernels.
 */
#include <arm_neon.h>

#include "../csc_int.h"

/* clamp_u8(x >> SHIFT) of 8 int32 lanes: the shift floors as the scalar
 * >> does, the int16 then uint8 saturating narrows clamp to 0..255. */
static inline uint8x8_t shift_clamp8(int32x4_t lo, int32x4_t hi)
{
    return vqmovun_s16(vcombine_s16(vqmovn_s32(vshrq_n_s32(lo, DVPP__CSC_SHIFT)),
                                    vqmovn_s32(vshrq_n_s32(hi, DVPP__CSC_SHIFT))));
}

static inline int32x4_t s32_of_u16(uint16x4_t x)
{
    return vreinterpretq_s32_u32(vmovl_u16(x));
}

/* The layout indexes the kernels use stay inside the pixel; an output
 * layout (@out) must also name every byte once, as vst3/vst4 write them
 * all (the scalar kernel would leave a byte nobody names untouched). */
static int pix_ok(const dvpp__csc_pix *p, int out)
{
    unsigned seen;

    if (p->cn != 3 && p->cn != 4)
        return 0;
    if (p->ri >= p->cn || p->gi >= p->cn || p->bi >= p->cn)
        return 0;
    if (!out)
        return 1;
    seen = (1u << p->ri) | (1u << p->gi) | (1u << p->bi);
    if (p->cn == 4)
        seen |= p->ai < 4 ? 1u << p->ai : 0;
    return seen == (1u << p->cn) - 1;
}

/* Paired chroma (cstep 2) is one row of (first, second) byte pairs. */
static int pairs_adjacent(const uint8_t *u, const uint8_t *v)
{
    return u + 1 == v || v + 1 == u;
}

/* ------------------------------------------------------------------ */
/* YUV -> RGB                                                          */
/* ------------------------------------------------------------------ */

typedef struct yk {
    uint8x8_t yoff;    /* Y offset, bytes (saturating subtract = max(0, .)) */
    int16x8_t c128;    /* chroma offset */
    int32x4_t half;    /* rounding */
    uint8x16_t alpha;  /* alpha bytes */
    int32_t cy, cvr, cug, cvg, cub;
} yk;

static void yk_init(yk *k, const dvpp__csc_coef *c, const dvpp__csc_pix *o)
{
    k->yoff = vdup_n_u8((uint8_t)c->y_off);
    k->c128 = vdupq_n_s16(128);
    k->half = vdupq_n_s32(DVPP__CSC_HALF);
    k->alpha = vdupq_n_u8(o->alpha);
    k->cy = c->cy;
    k->cvr = c->cvr;
    k->cug = c->cug;
    k->cvg = c->cvg;
    k->cub = c->cub;
}

/* Chroma terms of 8 samples, [0] samples 0-3, [1] samples 4-7, rounding
 * half included (the scalar chroma_terms). */
typedef struct cterms {
    int32x4_t r[2], g[2], b[2];
} cterms;

static inline void load_chroma8(const dvpp__yuv_rows *r, size_t ci,
                                uint8x8_t *u, uint8x8_t *v)
{
    if (r->cstep == 1) {
        *u = vld1_u8(r->u + ci);
        *v = vld1_u8(r->v + ci);
        return;
    }
    if (r->u < r->v) {
        uint8x8x2_t p = vld2_u8(r->u + 2 * ci);
        *u = p.val[0];
        *v = p.val[1];
    } else {
        uint8x8x2_t p = vld2_u8(r->v + 2 * ci);
        *u = p.val[1];
        *v = p.val[0];
    }
}

static inline void chroma8(const dvpp__yuv_rows *r, size_t ci, const yk *k,
                           cterms *t)
{
    uint8x8_t u8, v8;
    int16x8_t uu, vv;

    load_chroma8(r, ci, &u8, &v8);
    uu = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(u8)), k->c128);
    vv = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(v8)), k->c128);
    for (int h = 0; h < 2; h++) {
        int32x4_t u = vmovl_s16(h ? vget_high_s16(uu) : vget_low_s16(uu));
        int32x4_t v = vmovl_s16(h ? vget_high_s16(vv) : vget_low_s16(vv));
        t->r[h] = vmlaq_n_s32(k->half, v, k->cvr);
        t->g[h] = vmlaq_n_s32(vmlaq_n_s32(k->half, v, k->cvg), u, k->cug);
        t->b[h] = vmlaq_n_s32(k->half, u, k->cub);
    }
}

/* max(0, Y - y_off) * cy of 8 pixels, [0] pixels 0-3, [1] 4-7. */
static inline void luma8(uint8x8_t y, const yk *k, int32x4_t l[2])
{
    uint16x8_t w = vmovl_u8(vqsub_u8(y, k->yoff));

    l[0] = vmulq_n_s32(s32_of_u16(vget_low_u16(w)), k->cy);
    l[1] = vmulq_n_s32(s32_of_u16(vget_high_u16(w)), k->cy);
}

/* One channel of 16 pixels in natural order from the even and odd luma
 * terms (pixel pair j shares chroma term j). */
static inline uint8x16_t chan16(const int32x4_t le[2], const int32x4_t lo[2],
                                const int32x4_t t[2])
{
    uint8x8_t e = shift_clamp8(vaddq_s32(le[0], t[0]), vaddq_s32(le[1], t[1]));
    uint8x8_t o = shift_clamp8(vaddq_s32(lo[0], t[0]), vaddq_s32(lo[1], t[1]));

    return vcombine_u8(vzip1_u8(e, o), vzip2_u8(e, o));
}

static inline void store_px16(uint8_t *d, uint8x16_t r, uint8x16_t g,
                              uint8x16_t b, const yk *k,
                              const dvpp__csc_pix *o)
{
    if (o->cn == 3) {
        uint8x16x3_t x;
        x.val[o->ri] = r;
        x.val[o->gi] = g;
        x.val[o->bi] = b;
        vst3q_u8(d, x);
    } else {
        uint8x16x4_t x;
        x.val[o->ri] = r;
        x.val[o->gi] = g;
        x.val[o->bi] = b;
        x.val[o->ai] = k->alpha;
        vst4q_u8(d, x);
    }
}

static inline void row16(const uint8_t *y, uint8_t *d, const cterms *t,
                         const yk *k, const dvpp__csc_pix *o)
{
    uint8x8x2_t eo = vld2_u8(y); /* even pixels, odd pixels */
    int32x4_t le[2], lo[2];

    luma8(eo.val[0], k, le);
    luma8(eo.val[1], k, lo);
    store_px16(d, chan16(le, lo, t->r), chan16(le, lo, t->g),
               chan16(le, lo, t->b), k, o);
}

static int yuv_args_ok(const dvpp__yuv_rows *r, const dvpp__csc_coef *c,
                       const dvpp__csc_pix *o)
{
    if (!pix_ok(o, 1) || c->y_off < 0 || c->y_off > 255)
        return 0;
    return r->cstep == 1 || (r->cstep == 2 && pairs_adjacent(r->u, r->v));
}

void dvpp__yuv_rgb_sub_neon(const dvpp__yuv_rows *r, size_t w,
                            const dvpp__csc_coef *c, const dvpp__csc_pix *o)
{
    yk k;
    size_t i = 0;

    yk_init(&k, c, o);
    if (yuv_args_ok(r, c, o)) {
        for (; i + 16 <= w; i += 16) {
            cterms t;
            chroma8(r, i / 2, &k, &t);
            row16(r->y0 + i, r->d0 + i * o->cn, &t, &k, o);
            if (r->y1)
                row16(r->y1 + i, r->d1 + i * o->cn, &t, &k, o);
        }
    }
    if (i < w) {
        dvpp__yuv_rows t = dvpp__yuv_rows_at(r, i, o->cn);
        dvpp__yuv_rgb_sub_scalar(&t, w - i, c, o);
    }
}

/* ------------------------------------------------------------------ */
/* RGB -> YUV                                                          */
/* ------------------------------------------------------------------ */

/* kr*R + kg*G + kb*B + bias, the scalar rgb_luma / rgb_chroma sums. */
typedef struct dot3 {
    int32_t kr, kg, kb;
    int32x4_t bias;
} dot3;

static dot3 dot3_make(int32_t kr, int32_t kg, int32_t kb, int32_t bias)
{
    dot3 d = {kr, kg, kb, vdupq_n_s32(bias)};
    return d;
}

static inline int32x4_t dot4(uint16x4_t r, uint16x4_t g, uint16x4_t b,
                             const dot3 *d)
{
    int32x4_t s = vmlaq_n_s32(d->bias, s32_of_u16(r), d->kr);
    s = vmlaq_n_s32(s, s32_of_u16(g), d->kg);
    return vmlaq_n_s32(s, s32_of_u16(b), d->kb);
}

/* The clamped, shifted dot product of 8 pixels. */
static inline uint8x8_t dot8(uint16x8_t r, uint16x8_t g, uint16x8_t b,
                             const dot3 *d)
{
    return shift_clamp8(
        dot4(vget_low_u16(r), vget_low_u16(g), vget_low_u16(b), d),
        dot4(vget_high_u16(r), vget_high_u16(g), vget_high_u16(b), d));
}

/* R, G, B of 16 pixels in natural order. */
typedef struct rgb16 {
    uint8x16_t r, g, b;
} rgb16;

static inline rgb16 load_rgb16(const uint8_t *s, const dvpp__csc_pix *in)
{
    rgb16 p;

    if (in->cn == 3) {
        uint8x16x3_t x = vld3q_u8(s);
        p.r = x.val[in->ri];
        p.g = x.val[in->gi];
        p.b = x.val[in->bi];
    } else {
        uint8x16x4_t x = vld4q_u8(s);
        p.r = x.val[in->ri];
        p.g = x.val[in->gi];
        p.b = x.val[in->bi];
    }
    return p;
}

static inline uint8x16_t luma16(const rgb16 *p, const dot3 *d)
{
    return vcombine_u8(dot8(vmovl_u8(vget_low_u8(p->r)), vmovl_u8(vget_low_u8(p->g)),
                            vmovl_u8(vget_low_u8(p->b)), d),
                       dot8(vmovl_u8(vget_high_u8(p->r)), vmovl_u8(vget_high_u8(p->g)),
                            vmovl_u8(vget_high_u8(p->b)), d));
}

/* The 8 even pixels of 16 (chroma comes from each pair's first pixel). */
static inline uint16x8_t even8(uint8x16_t x)
{
    return vmovl_u8(vget_low_u8(vuzp1q_u8(x, x)));
}

typedef struct rk {
    dot3 y, u, v;
} rk;

static void rk_init(rk *k, const dvpp__csc_coef *c)
{
    k->y = dot3_make(c->yr, c->yg, c->yb, c->y_bias);
    k->u = dot3_make(c->ur, c->ug, c->ub, DVPP__CSC_CBIAS);
    k->v = dot3_make(c->vr, c->vg, c->vb, DVPP__CSC_CBIAS);
}

/* U and V of the even pixels of @p as chroma samples @ci..@ci+7. */
static inline void chroma_store8(const dvpp__rgb_rows *r, size_t ci,
                                 const rgb16 *p, const rk *k)
{
    uint16x8_t re = even8(p->r), ge = even8(p->g), be = even8(p->b);
    uint8x8_t u = dot8(re, ge, be, &k->u), v = dot8(re, ge, be, &k->v);

    if (r->cstep == 1) {
        vst1_u8(r->u + ci, u);
        vst1_u8(r->v + ci, v);
    } else if (r->u < r->v) {
        uint8x8x2_t x = {{u, v}};
        vst2_u8(r->u + 2 * ci, x);
    } else {
        uint8x8x2_t x = {{v, u}};
        vst2_u8(r->v + 2 * ci, x);
    }
}

static int rgb_args_ok(const dvpp__rgb_rows *r, const dvpp__csc_pix *in)
{
    if (!pix_ok(in, 0))
        return 0;
    return !r->u || r->cstep == 1 ||
           (r->cstep == 2 && pairs_adjacent(r->u, r->v));
}

void dvpp__rgb_yuv_sub_neon(const dvpp__rgb_rows *r, size_t w,
                            const dvpp__csc_coef *c, const dvpp__csc_pix *in)
{
    rk k;
    size_t i = 0;

    rk_init(&k, c);
    if (rgb_args_ok(r, in)) {
        for (; i + 16 <= w; i += 16) {
            rgb16 p = load_rgb16(r->s0 + i * in->cn, in);
            vst1q_u8(r->y0 + i, luma16(&p, &k.y));
            if (r->u)
                chroma_store8(r, i / 2, &p, &k);
            if (r->s1) {
                p = load_rgb16(r->s1 + i * in->cn, in);
                vst1q_u8(r->y1 + i, luma16(&p, &k.y));
            }
        }
    }
    if (i < w) {
        dvpp__rgb_rows t = dvpp__rgb_rows_at(r, i, in->cn);
        dvpp__rgb_yuv_sub_scalar(&t, w - i, c, in);
    }
}

void dvpp__rgb_y_neon(const uint8_t *s, uint8_t *y, size_t w,
                      const dvpp__csc_coef *c, const dvpp__csc_pix *in)
{
    rk k;
    size_t i = 0;

    rk_init(&k, c);
    if (pix_ok(in, 0)) {
        for (; i + 16 <= w; i += 16) {
            rgb16 p = load_rgb16(s + i * in->cn, in);
            vst1q_u8(y + i, luma16(&p, &k.y));
        }
    }
    if (i < w)
        dvpp__rgb_y_scalar(s + i * in->cn, y + i, w - i, c, in);
}

/* ------------------------------------------------------------------ */
/* Channel reorder                                                     */
/* ------------------------------------------------------------------ */

/* The scalar kernel defines every index; these are the ones a planar
 * table lookup reproduces (a byte of the same pixel, or the alpha). */
static int shuf_ok(const dvpp__csc_shuf *m)
{
    if ((m->scn != 1 && m->scn != 3 && m->scn != 4) ||
        (m->dcn != 3 && m->dcn != 4))
        return 0;
    for (unsigned c = 0; c < m->dcn; c++)
        if (m->idx[c] != DVPP__SHUF_ALPHA && m->idx[c] >= m->scn)
            return 0;
    return 1;
}

/* 16 pixels split into planes: plane c = byte c of each pixel; the planes
 * past @scn are zero (never selected). */
static inline uint8x16x4_t load_planes16(const uint8_t *s, unsigned scn)
{
    uint8x16x4_t x;
    uint8x16_t z = vdupq_n_u8(0);

    if (scn == 4)
        return vld4q_u8(s);
    if (scn == 3) {
        uint8x16x3_t t = vld3q_u8(s);
        x.val[0] = t.val[0];
        x.val[1] = t.val[1];
        x.val[2] = t.val[2];
    } else {
        x.val[0] = vld1q_u8(s);
        x.val[1] = z;
        x.val[2] = z;
    }
    x.val[3] = z;
    return x;
}

void dvpp__shuffle_neon(const uint8_t *s, uint8_t *d, size_t w,
                        const dvpp__csc_shuf *m)
{
    static const uint8_t lane[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                     8, 9, 10, 11, 12, 13, 14, 15};
    const unsigned scn = m->scn, dcn = m->dcn;
    uint8x16_t sel[4], add[4];
    size_t i = 0;

    if (!shuf_ok(m)) {
        dvpp__shuffle_scalar(s, d, w, m);
        return;
    }
    /* Output plane c is a lookup in the 64 bytes of the four input planes:
     * byte idx*16 + lane; an alpha plane looks up 0xFF (out of the table:
     * zero) and ORs the constant in. */
    for (unsigned c = 0; c < 4; c++) {
        int a = c >= dcn || m->idx[c] == DVPP__SHUF_ALPHA;
        sel[c] = a ? vdupq_n_u8(0xFF)
                   : vaddq_u8(vld1q_u8(lane), vdupq_n_u8((uint8_t)(m->idx[c] * 16)));
        add[c] = vdupq_n_u8(a ? m->alpha : 0);
    }
    for (; i + 16 <= w; i += 16) {
        uint8x16x4_t x = load_planes16(s + i * scn, scn);
        if (dcn == 3) {
            uint8x16x3_t y;
            for (unsigned c = 0; c < 3; c++)
                y.val[c] = vorrq_u8(vqtbl4q_u8(x, sel[c]), add[c]);
            vst3q_u8(d + i * 3, y);
        } else {
            uint8x16x4_t y;
            for (unsigned c = 0; c < 4; c++)
                y.val[c] = vorrq_u8(vqtbl4q_u8(x, sel[c]), add[c]);
            vst4q_u8(d + i * 4, y);
        }
    }
    if (i < w)
        dvpp__shuffle_scalar(s + i * scn, d + i * dcn, w - i, m);
}
