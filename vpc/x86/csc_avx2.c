/* AVX2 colour-conversion kernels; built with -mavx2, reached via dispatch.
 *
 * Same integer formulas as the scalar references in dvpp_csc.c, 32 pixels
 * per step. Products that need more than 16 bits use pmaddwd on a split
 * coefficient (csc_int.h dvpp__csc_lo/hi), so every sum is the exact
 * 32-bit value the scalar code computes and the results are bit-exact.
 * Each 128-bit lane holds 16 consecutive pixels (lane 0: 0-15, lane 1:
 * 16-31); tails go to the scalar kernels.
 */
#include <immintrin.h>
#include <string.h>

#include "../csc_int.h"

static inline __m256i bcast16(const uint8_t *p)
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
}

static inline __m256i load2x16(const uint8_t *lo, const uint8_t *hi)
{
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)lo)),
        _mm_loadu_si128((const __m128i *)hi), 1);
}

/* ------------------------------------------------------------------ */
/* YUV -> RGB                                                          */
/* ------------------------------------------------------------------ */

/* Per-call constants. Chroma pairs are (first, second) in memory order,
 * so NV21 only swaps the coefficient pairs. */
typedef struct yk {
    __m256i yoff;  /* Y offset, bytes */
    __m256i cy;    /* (lo, hi) of cy for (Y', Y'<<7) */
    __m256i r0;    /* R from chroma pairs: lo parts */
    __m256i r1;    /* R: hi parts, applied to pairs << 7 */
    __m256i g0;    /* G: lo parts */
    __m256i g1;    /* G: hi parts */
    __m256i b0;    /* B: lo parts */
    __m256i b1;    /* B: hi parts */
    __m256i half;  /* rounding */
    __m256i c128;  /* chroma offset, words */
    __m256i ff;    /* low-byte mask, words */
    __m256i alpha; /* alpha bytes */
} yk;

static inline __m256i pair2(int32_t a, int32_t b, int swap)
{
    return _mm256_set1_epi32(swap ? dvpp__csc_pair((int16_t)b, (int16_t)a)
                                  : dvpp__csc_pair((int16_t)a, (int16_t)b));
}

static void yk_init(yk *k, const dvpp__csc_coef *c, const dvpp__csc_pix *o,
                    int swap)
{
    k->yoff = _mm256_set1_epi8((char)c->y_off);
    k->cy = _mm256_set1_epi32(dvpp__csc_pair(dvpp__csc_lo(c->cy),
                                             dvpp__csc_hi(c->cy)));
    k->r0 = pair2(0, dvpp__csc_lo(c->cvr), swap);
    k->r1 = pair2(0, dvpp__csc_hi(c->cvr), swap);
    k->g0 = pair2(dvpp__csc_lo(c->cug), dvpp__csc_lo(c->cvg), swap);
    k->g1 = pair2(dvpp__csc_hi(c->cug), dvpp__csc_hi(c->cvg), swap);
    k->b0 = pair2(dvpp__csc_lo(c->cub), 0, swap);
    k->b1 = pair2(dvpp__csc_hi(c->cub), 0, swap);
    k->half = _mm256_set1_epi32(DVPP__CSC_HALF);
    k->c128 = _mm256_set1_epi16(128);
    k->ff = _mm256_set1_epi16(0xff);
    k->alpha = _mm256_set1_epi8((char)o->alpha);
}

static inline __m256i cterm(__m256i p, __m256i p7, __m256i k0, __m256i k1,
                            __m256i half)
{
    return _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(p, k0),
                                             _mm256_madd_epi16(p7, k1)),
                            half);
}

/* Chroma terms for 16 samples from index @ci: t[0..1] R, t[2..3] G,
 * t[4..5] B; [even] samples 0-3|8-11, [odd] 4-7|12-15. */
static inline void chroma16(const dvpp__yuv_rows *r, size_t ci, const yk *k,
                            __m256i t[6])
{
    __m256i lo, hi, lo7, hi7;

    if (r->cstep == 2) {
        const uint8_t *base = (r->u < r->v ? r->u : r->v) + 2 * ci;
        __m256i uv = _mm256_loadu_si256((const __m256i *)base);
        lo = _mm256_unpacklo_epi8(uv, _mm256_setzero_si256());
        hi = _mm256_unpackhi_epi8(uv, _mm256_setzero_si256());
    } else {
        __m256i u = _mm256_cvtepu8_epi16(
            _mm_loadu_si128((const __m128i *)(r->u + ci)));
        __m256i v = _mm256_cvtepu8_epi16(
            _mm_loadu_si128((const __m128i *)(r->v + ci)));
        lo = _mm256_unpacklo_epi16(u, v);
        hi = _mm256_unpackhi_epi16(u, v);
    }
    lo = _mm256_sub_epi16(lo, k->c128);
    hi = _mm256_sub_epi16(hi, k->c128);
    lo7 = _mm256_slli_epi16(lo, 7);
    hi7 = _mm256_slli_epi16(hi, 7);
    t[0] = cterm(lo, lo7, k->r0, k->r1, k->half);
    t[1] = cterm(hi, hi7, k->r0, k->r1, k->half);
    t[2] = cterm(lo, lo7, k->g0, k->g1, k->half);
    t[3] = cterm(hi, hi7, k->g0, k->g1, k->half);
    t[4] = cterm(lo, lo7, k->b0, k->b1, k->half);
    t[5] = cterm(hi, hi7, k->b0, k->b1, k->half);
}

/* Y' * cy for 32 luma pixels: l[0] even 0-3|8-11, l[1] even 4-7|12-15,
 * l[2], l[3] the odd ones (index = chroma sample). */
static inline void luma32(const uint8_t *y, const yk *k, __m256i l[4])
{
    __m256i yy = _mm256_subs_epu8(_mm256_loadu_si256((const __m256i *)y),
                                  k->yoff);
    __m256i e = _mm256_and_si256(yy, k->ff), o = _mm256_srli_epi16(yy, 8);
    __m256i e7 = _mm256_slli_epi16(e, 7), o7 = _mm256_slli_epi16(o, 7);

    l[0] = _mm256_madd_epi16(_mm256_unpacklo_epi16(e, e7), k->cy);
    l[1] = _mm256_madd_epi16(_mm256_unpackhi_epi16(e, e7), k->cy);
    l[2] = _mm256_madd_epi16(_mm256_unpacklo_epi16(o, o7), k->cy);
    l[3] = _mm256_madd_epi16(_mm256_unpackhi_epi16(o, o7), k->cy);
}

/* One channel of 32 pixels, saturated to bytes, each lane in pi order. */
static inline __m256i chan(const __m256i l[4], __m256i tlo, __m256i thi)
{
    __m256i el = _mm256_srai_epi32(_mm256_add_epi32(l[0], tlo), DVPP__CSC_SHIFT);
    __m256i ol = _mm256_srai_epi32(_mm256_add_epi32(l[2], tlo), DVPP__CSC_SHIFT);
    __m256i eh = _mm256_srai_epi32(_mm256_add_epi32(l[1], thi), DVPP__CSC_SHIFT);
    __m256i oh = _mm256_srai_epi32(_mm256_add_epi32(l[3], thi), DVPP__CSC_SHIFT);

    return _mm256_packus_epi16(_mm256_packs_epi32(el, ol),
                               _mm256_packs_epi32(eh, oh));
}

static inline __m256i pshufb_tab(__m256i x, const uint8_t *mask)
{
    return _mm256_shuffle_epi8(x, bcast16(mask));
}

/* 32 pixels of 3 bytes from pi-ordered channels c0, c1, c2 (memory order). */
static inline void store3(uint8_t *d, __m256i c0, __m256i c1, __m256i c2)
{
    __m256i o[3];

    for (int m = 0; m < 3; m++)
        o[m] = _mm256_or_si256(
            _mm256_or_si256(pshufb_tab(c0, dvpp__csc_pi_rgb3[0][m]),
                            pshufb_tab(c1, dvpp__csc_pi_rgb3[1][m])),
            pshufb_tab(c2, dvpp__csc_pi_rgb3[2][m]));
    _mm256_storeu_si256((__m256i *)d, _mm256_permute2x128_si256(o[0], o[1], 0x20));
    _mm256_storeu_si256((__m256i *)(d + 32),
                        _mm256_permute2x128_si256(o[2], o[0], 0x30));
    _mm256_storeu_si256((__m256i *)(d + 64),
                        _mm256_permute2x128_si256(o[1], o[2], 0x31));
}

/* 32 pixels of 4 bytes from natural-order channels p0..p3. */
static inline void store4(uint8_t *d, __m256i p0, __m256i p1, __m256i p2,
                          __m256i p3)
{
    __m256i lo01 = _mm256_unpacklo_epi8(p0, p1), hi01 = _mm256_unpackhi_epi8(p0, p1);
    __m256i lo23 = _mm256_unpacklo_epi8(p2, p3), hi23 = _mm256_unpackhi_epi8(p2, p3);
    __m256i w0 = _mm256_unpacklo_epi16(lo01, lo23); /* px 0-3 | 16-19 */
    __m256i w1 = _mm256_unpackhi_epi16(lo01, lo23); /* px 4-7 | 20-23 */
    __m256i w2 = _mm256_unpacklo_epi16(hi01, hi23); /* px 8-11 | 24-27 */
    __m256i w3 = _mm256_unpackhi_epi16(hi01, hi23); /* px 12-15 | 28-31 */

    _mm256_storeu_si256((__m256i *)d, _mm256_permute2x128_si256(w0, w1, 0x20));
    _mm256_storeu_si256((__m256i *)(d + 32), _mm256_permute2x128_si256(w2, w3, 0x20));
    _mm256_storeu_si256((__m256i *)(d + 64), _mm256_permute2x128_si256(w0, w1, 0x31));
    _mm256_storeu_si256((__m256i *)(d + 96), _mm256_permute2x128_si256(w2, w3, 0x31));
}

static inline void row32(const uint8_t *y, uint8_t *d, const __m256i t[6],
                         const yk *k, const dvpp__csc_pix *o)
{
    __m256i l[4], r, g, b, x;

    luma32(y, k, l);
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

void dvpp__yuv_rgb_sub_avx2(const dvpp__yuv_rows *r, size_t w,
                            const dvpp__csc_coef *c, const dvpp__csc_pix *o)
{
    yk k;
    size_t i = 0;

    yk_init(&k, c, o, r->cstep == 2 && r->v < r->u);
    for (; i + 32 <= w; i += 32) {
        __m256i t[6];
        chroma16(r, i / 2, &k, t);
        row32(r->y0 + i, r->d0 + i * o->cn, t, &k, o);
        if (r->y1)
            row32(r->y1 + i, r->d1 + i * o->cn, t, &k, o);
    }
    if (i < w) {
        dvpp__yuv_rows t = dvpp__yuv_rows_at(r, i, o->cn);
        dvpp__yuv_rgb_sub_scalar(&t, w - i, c, o);
    }
}

/* ------------------------------------------------------------------ */
/* RGB -> YUV                                                          */
/* ------------------------------------------------------------------ */

/* A dot product R*kr + G*kg + B*kb + bias as three pmaddwd on
 * (R,G), (R<<7,G<<7), (B,B<<7) pairs. */
typedef struct dot3 {
    __m256i rg0;  /* (lo kr, lo kg) */
    __m256i rg1;  /* (hi kr, hi kg) */
    __m256i bb;   /* (lo kb, hi kb) */
    __m256i bias; /* rounding and offset */
} dot3;

typedef struct rk {
    dot3 y;       /* luma */
    dot3 u;       /* U */
    dot3 v;       /* V */
    __m256i ff;   /* low-byte mask, words */
} rk;

static dot3 dot3_make(int32_t kr, int32_t kg, int32_t kb, int32_t bias)
{
    dot3 d = {
        _mm256_set1_epi32(dvpp__csc_pair(dvpp__csc_lo(kr), dvpp__csc_lo(kg))),
        _mm256_set1_epi32(dvpp__csc_pair(dvpp__csc_hi(kr), dvpp__csc_hi(kg))),
        _mm256_set1_epi32(dvpp__csc_pair(dvpp__csc_lo(kb), dvpp__csc_hi(kb))),
        _mm256_set1_epi32(bias)};
    return d;
}

static void rk_init(rk *k, const dvpp__csc_coef *c)
{
    k->y = dot3_make(c->yr, c->yg, c->yb, c->y_bias);
    k->u = dot3_make(c->ur, c->ug, c->ub, DVPP__CSC_CBIAS);
    k->v = dot3_make(c->vr, c->vg, c->vb, DVPP__CSC_CBIAS);
    k->ff = _mm256_set1_epi16(0xff);
}

/* 8 results (int32) from (R,G) word pairs and (B, B<<7) pairs. */
static inline __m256i dot8(__m256i rg, __m256i bb, const dot3 *d)
{
    __m256i s = _mm256_add_epi32(_mm256_madd_epi16(rg, d->rg0),
                                 _mm256_madd_epi16(_mm256_slli_epi16(rg, 7), d->rg1));
    s = _mm256_add_epi32(s, _mm256_add_epi32(_mm256_madd_epi16(bb, d->bb), d->bias));
    return _mm256_srai_epi32(s, DVPP__CSC_SHIFT);
}

/* 16 results per lane from 16 words of R, G, B per lane (as two halves). */
static inline __m256i dot16(__m256i rl, __m256i gl, __m256i bl, __m256i rh,
                            __m256i gh, __m256i bh, const dot3 *d)
{
    __m256i bl7 = _mm256_slli_epi16(bl, 7), bh7 = _mm256_slli_epi16(bh, 7);
    __m256i a = dot8(_mm256_unpacklo_epi16(rl, gl), _mm256_unpacklo_epi16(bl, bl7), d);
    __m256i b = dot8(_mm256_unpackhi_epi16(rl, gl), _mm256_unpackhi_epi16(bl, bl7), d);
    __m256i c = dot8(_mm256_unpacklo_epi16(rh, gh), _mm256_unpacklo_epi16(bh, bh7), d);
    __m256i e = dot8(_mm256_unpackhi_epi16(rh, gh), _mm256_unpackhi_epi16(bh, bh7), d);

    return _mm256_packus_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, e));
}

/* 32 pixels' R, G, B bytes in natural order (lane 0: 0-15, lane 1: 16-31). */
static inline void load_rgb32(const uint8_t *s, const dvpp__csc_pix *in,
                              __m256i ch[4])
{
    if (in->cn == 3) {
        __m256i a = load2x16(s, s + 48), b = load2x16(s + 16, s + 64);
        __m256i c = load2x16(s + 32, s + 80);
        for (int x = 0; x < 3; x++)
            ch[x] = _mm256_or_si256(
                _mm256_or_si256(pshufb_tab(a, dvpp__csc_de3[x][0]),
                                pshufb_tab(b, dvpp__csc_de3[x][1])),
                pshufb_tab(c, dvpp__csc_de3[x][2]));
        ch[3] = ch[0];
    } else {
        __m256i t[4];
        for (int q = 0; q < 4; q++)
            t[q] = pshufb_tab(load2x16(s + 16 * q, s + 64 + 16 * q),
                              dvpp__csc_de4);
        __m256i a01 = _mm256_unpacklo_epi32(t[0], t[1]);
        __m256i b01 = _mm256_unpackhi_epi32(t[0], t[1]);
        __m256i a23 = _mm256_unpacklo_epi32(t[2], t[3]);
        __m256i b23 = _mm256_unpackhi_epi32(t[2], t[3]);
        ch[0] = _mm256_unpacklo_epi64(a01, a23);
        ch[1] = _mm256_unpackhi_epi64(a01, a23);
        ch[2] = _mm256_unpacklo_epi64(b01, b23);
        ch[3] = _mm256_unpackhi_epi64(b01, b23);
    }
}

static inline __m256i luma_row32(const __m256i ch[4], const dvpp__csc_pix *in,
                                 const rk *k)
{
    __m256i z = _mm256_setzero_si256();
    __m256i r = ch[in->ri], g = ch[in->gi], b = ch[in->bi];

    return dot16(_mm256_unpacklo_epi8(r, z), _mm256_unpacklo_epi8(g, z),
                 _mm256_unpacklo_epi8(b, z), _mm256_unpackhi_epi8(r, z),
                 _mm256_unpackhi_epi8(g, z), _mm256_unpackhi_epi8(b, z), &k->y);
}

/* U and V of the 16 even pixels of 32: lane L = [u 8L..8L+7, v 8L..8L+7]. */
static inline __m256i chroma_row32(const __m256i ch[4], const dvpp__csc_pix *in,
                                   const rk *k)
{
    __m256i re = _mm256_and_si256(ch[in->ri], k->ff);
    __m256i ge = _mm256_and_si256(ch[in->gi], k->ff);
    __m256i be = _mm256_and_si256(ch[in->bi], k->ff);
    __m256i be7 = _mm256_slli_epi16(be, 7);
    __m256i rgl = _mm256_unpacklo_epi16(re, ge), rgh = _mm256_unpackhi_epi16(re, ge);
    __m256i bbl = _mm256_unpacklo_epi16(be, be7), bbh = _mm256_unpackhi_epi16(be, be7);
    __m256i u = _mm256_packs_epi32(dot8(rgl, bbl, &k->u), dot8(rgh, bbh, &k->u));
    __m256i v = _mm256_packs_epi32(dot8(rgl, bbl, &k->v), dot8(rgh, bbh, &k->v));

    return _mm256_packus_epi16(u, v);
}

static inline void store_chroma16(const dvpp__rgb_rows *r, size_t ci, __m256i x)
{
    if (r->cstep == 1) {
        x = _mm256_permute4x64_epi64(x, 0xD8); /* u0-7 u8-15 | v0-7 v8-15 */
        _mm_storeu_si128((__m128i *)(r->u + ci), _mm256_castsi256_si128(x));
        _mm_storeu_si128((__m128i *)(r->v + ci), _mm256_extracti128_si256(x, 1));
        return;
    }
    if (r->u < r->v)
        x = _mm256_shuffle_epi8(x, _mm256_setr_epi8(
            0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
            0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
    else
        x = _mm256_shuffle_epi8(x, _mm256_setr_epi8(
            8, 0, 9, 1, 10, 2, 11, 3, 12, 4, 13, 5, 14, 6, 15, 7,
            8, 0, 9, 1, 10, 2, 11, 3, 12, 4, 13, 5, 14, 6, 15, 7));
    _mm256_storeu_si256((__m256i *)((r->u < r->v ? r->u : r->v) + 2 * ci), x);
}

void dvpp__rgb_yuv_sub_avx2(const dvpp__rgb_rows *r, size_t w,
                            const dvpp__csc_coef *c, const dvpp__csc_pix *in)
{
    rk k;
    size_t i = 0;

    rk_init(&k, c);
    for (; i + 32 <= w; i += 32) {
        __m256i ch[4];
        load_rgb32(r->s0 + i * in->cn, in, ch);
        _mm256_storeu_si256((__m256i *)(r->y0 + i), luma_row32(ch, in, &k));
        if (r->u)
            store_chroma16(r, i / 2, chroma_row32(ch, in, &k));
        if (r->s1) {
            load_rgb32(r->s1 + i * in->cn, in, ch);
            _mm256_storeu_si256((__m256i *)(r->y1 + i), luma_row32(ch, in, &k));
        }
    }
    if (i < w) {
        dvpp__rgb_rows t = dvpp__rgb_rows_at(r, i, in->cn);
        dvpp__rgb_yuv_sub_scalar(&t, w - i, c, in);
    }
}

void dvpp__rgb_y_avx2(const uint8_t *s, uint8_t *y, size_t w,
                      const dvpp__csc_coef *c, const dvpp__csc_pix *in)
{
    rk k;
    size_t i = 0;

    rk_init(&k, c);
    for (; i + 32 <= w; i += 32) {
        __m256i ch[4];
        load_rgb32(s + i * in->cn, in, ch);
        _mm256_storeu_si256((__m256i *)(y + i), luma_row32(ch, in, &k));
    }
    if (i < w)
        dvpp__rgb_y_scalar(s + i * in->cn, y + i, w - i, c, in);
}

/* ------------------------------------------------------------------ */
/* Channel reorder                                                     */
/* ------------------------------------------------------------------ */

/* The shuffle of 4 pixels (one lane) and the alpha bytes it ORs in. */
static void shuf_masks(const dvpp__csc_shuf *m, uint8_t mask[16],
                       uint8_t alpha[16])
{
    memset(mask, 0x80, 16);
    memset(alpha, 0, 16);
    for (unsigned p = 0; p < 4; p++) {
        for (unsigned c = 0; c < m->dcn; c++) {
            unsigned o = p * m->dcn + c;
            if (m->idx[c] == DVPP__SHUF_ALPHA)
                alpha[o] = m->alpha;
            else
                mask[o] = (uint8_t)(p * m->scn + m->idx[c]);
        }
    }
}

static inline __m128i load_px4(const uint8_t *s, unsigned scn)
{
    int32_t v;

    if (scn != 1)
        return _mm_loadu_si128((const __m128i *)s);
    memcpy(&v, s, 4);
    return _mm_cvtsi32_si128(v);
}

void dvpp__shuffle_avx2(const uint8_t *s, uint8_t *d, size_t w,
                        const dvpp__csc_shuf *m)
{
    uint8_t mask[16], alpha[16];
    const unsigned scn = m->scn, dcn = m->dcn;
    const __m256i pack3 = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    __m256i vm, va;
    size_t i = 0;

    shuf_masks(m, mask, alpha);
    vm = bcast16(mask);
    va = bcast16(alpha);
    /* 8 pixels per step; the margin of 4 pixels covers the 16-byte loads
     * of 3-byte pixels and the 32-byte store of 24 bytes. */
    for (; i + 12 <= w; i += 8) {
        const uint8_t *sp = s + i * scn;
        __m256i x = _mm256_inserti128_si256(
            _mm256_castsi128_si256(load_px4(sp, scn)), load_px4(sp + 4 * scn, scn), 1);
        x = _mm256_or_si256(_mm256_shuffle_epi8(x, vm), va);
        if (dcn == 3)
            x = _mm256_permutevar8x32_epi32(x, pack3);
        _mm256_storeu_si256((__m256i *)(d + i * dcn), x);
    }
    if (i < w)
        dvpp__shuffle_scalar(s + i * scn, d + i * dcn, w - i, m);
}
