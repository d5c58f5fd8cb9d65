/* SSE4.1 colour-conversion kernels; built with -msse4.1, reached via
 * dispatch. The 128-bit form of csc_avx2.c (16 pixels per step, same
 * exact pmaddwd arithmetic, same pi-ordered shuffles); tails go to the
 * scalar kernels.
 */
#include <smmintrin.h>
#include <string.h>

#include "../csc_int.h"

static inline __m128i ld(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

static inline void st(uint8_t *p, __m128i x)
{
    _mm_storeu_si128((__m128i *)p, x);
}

/* ------------------------------------------------------------------ */
/* YUV -> RGB                                                          */
/* ------------------------------------------------------------------ */

typedef struct yk {
    __m128i yoff;  /* Y offset, bytes */
    __m128i cy;    /* (lo, hi) of cy for (Y', Y'<<7) */
    __m128i r0;    /* R: lo parts for chroma pairs */
    __m128i r1;    /* R: hi parts for pairs << 7 */
    __m128i g0;    /* G: lo */
    __m128i g1;    /* G: hi */
    __m128i b0;    /* B: lo */
    __m128i b1;    /* B: hi */
    __m128i half;  /* rounding */
    __m128i c128;  /* chroma offset, words */
    __m128i ff;    /* low-byte mask, words */
    __m128i alpha; /* alpha bytes */
} yk;

static inline __m128i pair2(int32_t a, int32_t b, int swap)
{
    return _mm_set1_epi32(swap ? dvpp__csc_pair((int16_t)b, (int16_t)a)
                               : dvpp__csc_pair((int16_t)a, (int16_t)b));
}

static void yk_init(yk *k, const dvpp__csc_coef *c, const dvpp__csc_pix *o,
                    int swap)
{
    k->yoff = _mm_set1_epi8((char)c->y_off);
    k->cy = _mm_set1_epi32(dvpp__csc_pair(dvpp__csc_lo(c->cy),
                                          dvpp__csc_hi(c->cy)));
    k->r0 = pair2(0, dvpp__csc_lo(c->cvr), swap);
    k->r1 = pair2(0, dvpp__csc_hi(c->cvr), swap);
    k->g0 = pair2(dvpp__csc_lo(c->cug), dvpp__csc_lo(c->cvg), swap);
    k->g1 = pair2(dvpp__csc_hi(c->cug), dvpp__csc_hi(c->cvg), swap);
    k->b0 = pair2(dvpp__csc_lo(c->cub), 0, swap);
    k->b1 = pair2(dvpp__csc_hi(c->cub), 0, swap);
    k->half = _mm_set1_epi32(DVPP__CSC_HALF);
    k->c128 = _mm_set1_epi16(128);
    k->ff = _mm_set1_epi16(0xff);
    k->alpha = _mm_set1_epi8((char)o->alpha);
}

static inline __m128i cterm(__m128i p, __m128i p7, __m128i k0, __m128i k1,
                            __m128i half)
{
    return _mm_add_epi32(_mm_add_epi32(_mm_madd_epi16(p, k0),
                                       _mm_madd_epi16(p7, k1)),
                         half);
}

/* Chroma terms of 8 samples from @ci: t[0..1] R, t[2..3] G, t[4..5] B,
 * samples 0-3 then 4-7. */
static inline void chroma8(const dvpp__yuv_rows *r, size_t ci, const yk *k,
                           __m128i t[6])
{
    __m128i lo, hi, lo7, hi7;

    if (r->cstep == 2) {
        __m128i uv = ld((r->u < r->v ? r->u : r->v) + 2 * ci);
        lo = _mm_unpacklo_epi8(uv, _mm_setzero_si128());
        hi = _mm_unpackhi_epi8(uv, _mm_setzero_si128());
    } else {
        __m128i u = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(r->u + ci)));
        __m128i v = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(r->v + ci)));
        lo = _mm_unpacklo_epi16(u, v);
        hi = _mm_unpackhi_epi16(u, v);
    }
    lo = _mm_sub_epi16(lo, k->c128);
    hi = _mm_sub_epi16(hi, k->c128);
    lo7 = _mm_slli_epi16(lo, 7);
    hi7 = _mm_slli_epi16(hi, 7);
    t[0] = cterm(lo, lo7, k->r0, k->r1, k->half);
    t[1] = cterm(hi, hi7, k->r0, k->r1, k->half);
    t[2] = cterm(lo, lo7, k->g0, k->g1, k->half);
    t[3] = cterm(hi, hi7, k->g0, k->g1, k->half);
    t[4] = cterm(lo, lo7, k->b0, k->b1, k->half);
    t[5] = cterm(hi, hi7, k->b0, k->b1, k->half);
}

static inline void luma16(const uint8_t *y, const yk *k, __m128i l[4])
{
    __m128i yy = _mm_subs_epu8(ld(y), k->yoff);
    __m128i e = _mm_and_si128(yy, k->ff), o = _mm_srli_epi16(yy, 8);
    __m128i e7 = _mm_slli_epi16(e, 7), o7 = _mm_slli_epi16(o, 7);

    l[0] = _mm_madd_epi16(_mm_unpacklo_epi16(e, e7), k->cy);
    l[1] = _mm_madd_epi16(_mm_unpackhi_epi16(e, e7), k->cy);
    l[2] = _mm_madd_epi16(_mm_unpacklo_epi16(o, o7), k->cy);
    l[3] = _mm_madd_epi16(_mm_unpackhi_epi16(o, o7), k->cy);
}

static inline __m128i chan(const __m128i l[4], __m128i tlo, __m128i thi)
{
    __m128i el = _mm_srai_epi32(_mm_add_epi32(l[0], tlo), DVPP__CSC_SHIFT);
    __m128i ol = _mm_srai_epi32(_mm_add_epi32(l[2], tlo), DVPP__CSC_SHIFT);
    __m128i eh = _mm_srai_epi32(_mm_add_epi32(l[1], thi), DVPP__CSC_SHIFT);
    __m128i oh = _mm_srai_epi32(_mm_add_epi32(l[3], thi), DVPP__CSC_SHIFT);

    return _mm_packus_epi16(_mm_packs_epi32(el, ol), _mm_packs_epi32(eh, oh));
}

static inline __m128i pshufb_tab(__m128i x, const uint8_t *mask)
{
    return _mm_shuffle_epi8(x, ld(mask));
}

static inline void store3(uint8_t *d, __m128i c0, __m128i c1, __m128i c2)
{
    for (int m = 0; m < 3; m++)
        st(d + 16 * m,
           _mm_or_si128(_mm_or_si128(pshufb_tab(c0, dvpp__csc_pi_rgb3[0][m]),
                                     pshufb_tab(c1, dvpp__csc_pi_rgb3[1][m])),
                        pshufb_tab(c2, dvpp__csc_pi_rgb3[2][m])));
}

static inline void store4(uint8_t *d, __m128i p0, __m128i p1, __m128i p2,
                          __m128i p3)
{
    __m128i lo01 = _mm_unpacklo_epi8(p0, p1), hi01 = _mm_unpackhi_epi8(p0, p1);
    __m128i lo23 = _mm_unpacklo_epi8(p2, p3), hi23 = _mm_unpackhi_epi8(p2, p3);

    st(d, _mm_unpacklo_epi16(lo01, lo23));
    st(d + 16, _mm_unpackhi_epi16(lo01, lo23));
    st(d + 32, _mm_unpacklo_epi16(hi01, hi23));
    st(d + 48, _mm_unpackhi_epi16(hi01, hi23));
}

static inline void row16(const uint8_t *y, uint8_t *d, const __m128i t[6],
                         const yk *k, const dvpp__csc_pix *o)
{
    __m128i l[4], r, g, b, x;

    luma16(y, k, l);
    r = chan(l, t[0], t[1]);
    g = chan(l, t[2], t[3]);
    b = chan(l, t[4], t[5]);
    if (o->swap_rb) {
        x = r;
        r = b;
        b = x;
    }
    if (o->cn == 3) {
        store3(d, r, g, b);
        return;
    }
    r = pshufb_tab(r, dvpp__csc_pi_inv);
    g = pshufb_tab(g, dvpp__csc_pi_inv);
    b = pshufb_tab(b, dvpp__csc_pi_inv);
    if (o->alpha_first)
        store4(d, k->alpha, r, g, b);
    else
        store4(d, r, g, b, k->alpha);
}

void dvpp__yuv_rgb_sub_sse41(const dvpp__yuv_rows *r, size_t w,
                             const dvpp__csc_coef *c, const dvpp__csc_pix *o)
{
    yk k;
    size_t i = 0;

    yk_init(&k, c, o, r->cstep == 2 && r->v < r->u);
    for (; i + 16 <= w; i += 16) {
        __m128i t[6];
        chroma8(r, i / 2, &k, t);
        row16(r->y0 + i, r->d0 + i * o->cn, t, &k, o);
        if (r->y1)
            row16(r->y1 + i, r->d1 + i * o->cn, t, &k, o);
    }
    if (i < w) {
        dvpp__yuv_rows t = dvpp__yuv_rows_at(r, i, o->cn);
        dvpp__yuv_rgb_sub_scalar(&t, w - i, c, o);
    }
}

/* ------------------------------------------------------------------ */
/* RGB -> YUV                                                          */
/* ------------------------------------------------------------------ */

typedef struct dot3 {
    __m128i rg0;  /* (lo kr, lo kg) */
    __m128i rg1;  /* (hi kr, hi kg) */
    __m128i bb;   /* (lo kb, hi kb) */
    __m128i bias; /* rounding and offset */
} dot3;

typedef struct rk {
    dot3 y;     /* luma */
    dot3 u;     /* U */
    dot3 v;     /* V */
    __m128i ff; /* low-byte mask, words */
} rk;

static dot3 dot3_make(int32_t kr, int32_t kg, int32_t kb, int32_t bias)
{
    dot3 d = {_mm_set1_epi32(dvpp__csc_pair(dvpp__csc_lo(kr), dvpp__csc_lo(kg))),
              _mm_set1_epi32(dvpp__csc_pair(dvpp__csc_hi(kr), dvpp__csc_hi(kg))),
              _mm_set1_epi32(dvpp__csc_pair(dvpp__csc_lo(kb), dvpp__csc_hi(kb))),
              _mm_set1_epi32(bias)};
    return d;
}

static void rk_init(rk *k, const dvpp__csc_coef *c)
{
    k->y = dot3_make(c->yr, c->yg, c->yb, c->y_bias);
    k->u = dot3_make(c->ur, c->ug, c->ub, DVPP__CSC_CBIAS);
    k->v = dot3_make(c->vr, c->vg, c->vb, DVPP__CSC_CBIAS);
    k->ff = _mm_set1_epi16(0xff);
}

static inline __m128i dot4(__m128i rg, __m128i bb, const dot3 *d)
{
    __m128i s = _mm_add_epi32(_mm_madd_epi16(rg, d->rg0),
                              _mm_madd_epi16(_mm_slli_epi16(rg, 7), d->rg1));
    s = _mm_add_epi32(s, _mm_add_epi32(_mm_madd_epi16(bb, d->bb), d->bias));
    return _mm_srai_epi32(s, DVPP__CSC_SHIFT);
}

static inline __m128i dot8w(__m128i r, __m128i g, __m128i b, const dot3 *d)
{
    __m128i b7 = _mm_slli_epi16(b, 7);
    return _mm_packs_epi32(
        dot4(_mm_unpacklo_epi16(r, g), _mm_unpacklo_epi16(b, b7), d),
        dot4(_mm_unpackhi_epi16(r, g), _mm_unpackhi_epi16(b, b7), d));
}

static inline void load_rgb16(const uint8_t *s, const dvpp__csc_pix *in,
                              __m128i ch[4])
{
    if (in->cn == 3) {
        __m128i a = ld(s), b = ld(s + 16), c = ld(s + 32);
        for (int x = 0; x < 3; x++)
            ch[x] = _mm_or_si128(_mm_or_si128(pshufb_tab(a, dvpp__csc_de3[x][0]),
                                              pshufb_tab(b, dvpp__csc_de3[x][1])),
                                 pshufb_tab(c, dvpp__csc_de3[x][2]));
        ch[3] = ch[0];
    } else {
        __m128i t[4];
        for (int q = 0; q < 4; q++)
            t[q] = pshufb_tab(ld(s + 16 * q), dvpp__csc_de4);
        __m128i a01 = _mm_unpacklo_epi32(t[0], t[1]);
        __m128i b01 = _mm_unpackhi_epi32(t[0], t[1]);
        __m128i a23 = _mm_unpacklo_epi32(t[2], t[3]);
        __m128i b23 = _mm_unpackhi_epi32(t[2], t[3]);
        ch[0] = _mm_unpacklo_epi64(a01, a23);
        ch[1] = _mm_unpackhi_epi64(a01, a23);
        ch[2] = _mm_unpacklo_epi64(b01, b23);
        ch[3] = _mm_unpackhi_epi64(b01, b23);
    }
}

static inline __m128i luma_row16(const __m128i ch[4], const dvpp__csc_pix *in,
                                 const rk *k)
{
    __m128i z = _mm_setzero_si128();
    __m128i r = ch[in->ri], g = ch[in->gi], b = ch[in->bi];

    return _mm_packus_epi16(
        dot8w(_mm_unpacklo_epi8(r, z), _mm_unpacklo_epi8(g, z),
              _mm_unpacklo_epi8(b, z), &k->y),
        dot8w(_mm_unpackhi_epi8(r, z), _mm_unpackhi_epi8(g, z),
              _mm_unpackhi_epi8(b, z), &k->y));
}

/* [u0-7, v0-7] of the 8 even pixels of 16. */
static inline __m128i chroma_row16(const __m128i ch[4], const dvpp__csc_pix *in,
                                   const rk *k)
{
    __m128i re = _mm_and_si128(ch[in->ri], k->ff);
    __m128i ge = _mm_and_si128(ch[in->gi], k->ff);
    __m128i be = _mm_and_si128(ch[in->bi], k->ff);

    return _mm_packus_epi16(dot8w(re, ge, be, &k->u), dot8w(re, ge, be, &k->v));
}

static inline void store_chroma8(const dvpp__rgb_rows *r, size_t ci, __m128i x)
{
    if (r->cstep == 1) {
        _mm_storel_epi64((__m128i *)(r->u + ci), x);
        _mm_storel_epi64((__m128i *)(r->v + ci), _mm_srli_si128(x, 8));
        return;
    }
    if (r->u < r->v)
        x = _mm_shuffle_epi8(x, _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12,
                                              5, 13, 6, 14, 7, 15));
    else
        x = _mm_shuffle_epi8(x, _mm_setr_epi8(8, 0, 9, 1, 10, 2, 11, 3, 12, 4,
                                              13, 5, 14, 6, 15, 7));
    st((r->u < r->v ? r->u : r->v) + 2 * ci, x);
}

void dvpp__rgb_yuv_sub_sse41(const dvpp__rgb_rows *r, size_t w,
                             const dvpp__csc_coef *c, const dvpp__csc_pix *in)
{
    rk k;
    size_t i = 0;

    rk_init(&k, c);
    for (; i + 16 <= w; i += 16) {
        __m128i ch[4];
        load_rgb16(r->s0 + i * in->cn, in, ch);
        st(r->y0 + i, luma_row16(ch, in, &k));
        if (r->u)
            store_chroma8(r, i / 2, chroma_row16(ch, in, &k));
        if (r->s1) {
            load_rgb16(r->s1 + i * in->cn, in, ch);
            st(r->y1 + i, luma_row16(ch, in, &k));
        }
    }
    if (i < w) {
        dvpp__rgb_rows t = dvpp__rgb_rows_at(r, i, in->cn);
        dvpp__rgb_yuv_sub_scalar(&t, w - i, c, in);
    }
}

/* ------------------------------------------------------------------ */
/* Channel reorder                                                     */
/* ------------------------------------------------------------------ */

void dvpp__shuffle_sse41(const uint8_t *s, uint8_t *d, size_t w,
                         const dvpp__csc_shuf *m)
{
    uint8_t mask[16], alpha[16];
    const unsigned scn = m->scn, dcn = m->dcn;
    __m128i vm, va;
    size_t i = 0;

    memset(mask, 0x80, sizeof(mask));
    memset(alpha, 0, sizeof(alpha));
    for (unsigned p = 0; p < 4; p++) {
        for (unsigned c = 0; c < dcn; c++) {
            if (m->idx[c] == DVPP__SHUF_ALPHA)
                alpha[p * dcn + c] = m->alpha;
            else
                mask[p * dcn + c] = (uint8_t)(p * scn + m->idx[c]);
        }
    }
    vm = ld(mask);
    va = ld(alpha);
    /* 4 pixels per step; the margin of 2 covers the 16-byte load of 3-byte
     * pixels and the 16-byte store of 12. */
    for (; i + 6 <= w; i += 4) {
        __m128i x;
        if (scn == 1) {
            int32_t v;
            memcpy(&v, s + i, 4);
            x = _mm_cvtsi32_si128(v);
        } else {
            x = ld(s + i * scn);
        }
        st(d + i * dcn, _mm_or_si128(_mm_shuffle_epi8(x, vm), va));
    }
    if (i < w)
        dvpp__shuffle_scalar(s + i * scn, d + i * dcn, w - i, m);
}
