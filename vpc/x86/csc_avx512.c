/* AVX-512 (F/BW) colour-conversion kernels (YUV -> RGB, RGB -> YUV, luma,
 * channel reorder); built with -mavx512bw, reached via dispatch. The
 * 512-bit form of csc_avx2.c: 64 pixels per step (reorder: 16), each
 * 128-bit lane holding 16 consecutive pixels in pi order, same exact
 * pmaddwd arithmetic; cross-lane moves only in loads and stores. Tails go
 * to the AVX2 kernels (then scalar).
 */
#include <immintrin.h>
#include <string.h>

#include "../csc_int.h"

static inline __m512i bcast16(const uint8_t *p)
{
    return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)p));
}

typedef struct yk {
    __m512i yoff;  /* Y offset, bytes */
    __m512i cy;    /* (lo, hi) of cy for (Y', Y'<<7) */
    __m512i r0;    /* R: lo parts for chroma pairs */
    __m512i r1;    /* R: hi parts for pairs << 7 */
    __m512i g0;    /* G: lo */
    __m512i g1;    /* G: hi */
    __m512i b0;    /* B: lo */
    __m512i b1;    /* B: hi */
    __m512i half;  /* rounding */
    __m512i c128;  /* chroma offset, words */
    __m512i ff;    /* low-byte mask, words */
    __m512i alpha; /* alpha bytes */
} yk;

static inline __m512i pair2(int32_t a, int32_t b, int swap)
{
    return _mm512_set1_epi32(swap ? dvpp__csc_pair((int16_t)b, (int16_t)a)
                                  : dvpp__csc_pair((int16_t)a, (int16_t)b));
}

static void yk_init(yk *k, const dvpp__csc_coef *c, const dvpp__csc_pix *o,
                    int swap)
{
    k->yoff = _mm512_set1_epi8((char)c->y_off);
    k->cy = _mm512_set1_epi32(dvpp__csc_pair(dvpp__csc_lo(c->cy),
                                             dvpp__csc_hi(c->cy)));
    k->r0 = pair2(0, dvpp__csc_lo(c->cvr), swap);
    k->r1 = pair2(0, dvpp__csc_hi(c->cvr), swap);
    k->g0 = pair2(dvpp__csc_lo(c->cug), dvpp__csc_lo(c->cvg), swap);
    k->g1 = pair2(dvpp__csc_hi(c->cug), dvpp__csc_hi(c->cvg), swap);
    k->b0 = pair2(dvpp__csc_lo(c->cub), 0, swap);
    k->b1 = pair2(dvpp__csc_hi(c->cub), 0, swap);
    k->half = _mm512_set1_epi32(DVPP__CSC_HALF);
    k->c128 = _mm512_set1_epi16(128);
    k->ff = _mm512_set1_epi16(0xff);
    k->alpha = _mm512_set1_epi8((char)o->alpha);
}

static inline __m512i cterm(__m512i p, __m512i p7, __m512i k0, __m512i k1,
                            __m512i half)
{
    return _mm512_add_epi32(_mm512_add_epi32(_mm512_madd_epi16(p, k0),
                                             _mm512_madd_epi16(p7, k1)),
                            half);
}

/* Chroma terms of 32 samples from @ci; lane L of [even] holds samples
 * 8L..8L+3, of [odd] 8L+4..8L+7. */
static inline void chroma32(const dvpp__yuv_rows *r, size_t ci, const yk *k,
                            __m512i t[6])
{
    __m512i lo, hi, lo7, hi7;

    if (r->cstep == 2) {
        const uint8_t *base = (r->u < r->v ? r->u : r->v) + 2 * ci;
        __m512i uv = _mm512_loadu_si512((const void *)base);
        lo = _mm512_unpacklo_epi8(uv, _mm512_setzero_si512());
        hi = _mm512_unpackhi_epi8(uv, _mm512_setzero_si512());
    } else {
        __m512i u = _mm512_cvtepu8_epi16(
            _mm256_loadu_si256((const __m256i *)(r->u + ci)));
        __m512i v = _mm512_cvtepu8_epi16(
            _mm256_loadu_si256((const __m256i *)(r->v + ci)));
        lo = _mm512_unpacklo_epi16(u, v);
        hi = _mm512_unpackhi_epi16(u, v);
    }
    lo = _mm512_sub_epi16(lo, k->c128);
    hi = _mm512_sub_epi16(hi, k->c128);
    lo7 = _mm512_slli_epi16(lo, 7);
    hi7 = _mm512_slli_epi16(hi, 7);
    t[0] = cterm(lo, lo7, k->r0, k->r1, k->half);
    t[1] = cterm(hi, hi7, k->r0, k->r1, k->half);
    t[2] = cterm(lo, lo7, k->g0, k->g1, k->half);
    t[3] = cterm(hi, hi7, k->g0, k->g1, k->half);
    t[4] = cterm(lo, lo7, k->b0, k->b1, k->half);
    t[5] = cterm(hi, hi7, k->b0, k->b1, k->half);
}

static inline void luma64(const uint8_t *y, const yk *k, __m512i l[4])
{
    __m512i yy = _mm512_subs_epu8(_mm512_loadu_si512((const void *)y), k->yoff);
    __m512i e = _mm512_and_si512(yy, k->ff), o = _mm512_srli_epi16(yy, 8);
    __m512i e7 = _mm512_slli_epi16(e, 7), o7 = _mm512_slli_epi16(o, 7);

    l[0] = _mm512_madd_epi16(_mm512_unpacklo_epi16(e, e7), k->cy);
    l[1] = _mm512_madd_epi16(_mm512_unpackhi_epi16(e, e7), k->cy);
    l[2] = _mm512_madd_epi16(_mm512_unpacklo_epi16(o, o7), k->cy);
    l[3] = _mm512_madd_epi16(_mm512_unpackhi_epi16(o, o7), k->cy);
}

static inline __m512i chan(const __m512i l[4], __m512i tlo, __m512i thi)
{
    __m512i el = _mm512_srai_epi32(_mm512_add_epi32(l[0], tlo), DVPP__CSC_SHIFT);
    __m512i ol = _mm512_srai_epi32(_mm512_add_epi32(l[2], tlo), DVPP__CSC_SHIFT);
    __m512i eh = _mm512_srai_epi32(_mm512_add_epi32(l[1], thi), DVPP__CSC_SHIFT);
    __m512i oh = _mm512_srai_epi32(_mm512_add_epi32(l[3], thi), DVPP__CSC_SHIFT);

    return _mm512_packus_epi16(_mm512_packs_epi32(el, ol),
                               _mm512_packs_epi32(eh, oh));
}

static inline __m512i pshufb_tab(__m512i x, const uint8_t *mask)
{
    return _mm512_shuffle_epi8(x, bcast16(mask));
}

/* 64 pixels of 3 bytes. Per lane L the shuffles give chunks o0.L, o1.L,
 * o2.L (pixels 16L..16L+15); the output is the chunks lane-major. */
static inline void store3(uint8_t *d, __m512i c0, __m512i c1, __m512i c2)
{
    __m512i o[3], x;

    for (int m = 0; m < 3; m++)
        o[m] = _mm512_or_si512(
            _mm512_or_si512(pshufb_tab(c0, dvpp__csc_pi_rgb3[0][m]),
                            pshufb_tab(c1, dvpp__csc_pi_rgb3[1][m])),
            pshufb_tab(c2, dvpp__csc_pi_rgb3[2][m]));
    /* [o0.0 o1.0 o2.0 o0.1] */
    x = _mm512_permutex2var_epi64(o[0], _mm512_setr_epi64(0, 1, 8, 9, 0, 0, 2, 3), o[1]);
    x = _mm512_mask_permutexvar_epi64(x, 0x30, _mm512_setr_epi64(0, 0, 0, 0, 0, 1, 0, 0), o[2]);
    _mm512_storeu_si512((void *)d, x);
    /* [o1.1 o2.1 o0.2 o1.2] */
    x = _mm512_permutex2var_epi64(o[0], _mm512_setr_epi64(10, 11, 0, 0, 4, 5, 12, 13), o[1]);
    x = _mm512_mask_permutexvar_epi64(x, 0x0C, _mm512_setr_epi64(0, 0, 2, 3, 0, 0, 0, 0), o[2]);
    _mm512_storeu_si512((void *)(d + 64), x);
    /* [o2.2 o0.3 o1.3 o2.3] */
    x = _mm512_permutex2var_epi64(o[0], _mm512_setr_epi64(0, 0, 6, 7, 14, 15, 0, 0), o[1]);
    x = _mm512_mask_permutexvar_epi64(x, 0xC3, _mm512_setr_epi64(4, 5, 0, 0, 0, 0, 6, 7), o[2]);
    _mm512_storeu_si512((void *)(d + 128), x);
}

/* 64 pixels of 4 bytes from natural-order channels p0..p3. */
static inline void store4(uint8_t *d, __m512i p0, __m512i p1, __m512i p2,
                          __m512i p3)
{
    __m512i lo01 = _mm512_unpacklo_epi8(p0, p1), hi01 = _mm512_unpackhi_epi8(p0, p1);
    __m512i lo23 = _mm512_unpacklo_epi8(p2, p3), hi23 = _mm512_unpackhi_epi8(p2, p3);
    __m512i w0 = _mm512_unpacklo_epi16(lo01, lo23); /* lane L: px 16L+0..3 */
    __m512i w1 = _mm512_unpackhi_epi16(lo01, lo23); /* 16L+4..7 */
    __m512i w2 = _mm512_unpacklo_epi16(hi01, hi23); /* 16L+8..11 */
    __m512i w3 = _mm512_unpackhi_epi16(hi01, hi23); /* 16L+12..15 */
    /* Transpose the 4x4 grid of 128-bit lanes. */
    __m512i t0 = _mm512_shuffle_i64x2(w0, w1, 0x44); /* w0.0 w0.1 w1.0 w1.1 */
    __m512i t1 = _mm512_shuffle_i64x2(w0, w1, 0xEE); /* w0.2 w0.3 w1.2 w1.3 */
    __m512i t2 = _mm512_shuffle_i64x2(w2, w3, 0x44);
    __m512i t3 = _mm512_shuffle_i64x2(w2, w3, 0xEE);

    _mm512_storeu_si512((void *)d, _mm512_shuffle_i64x2(t0, t2, 0x88));
    _mm512_storeu_si512((void *)(d + 64), _mm512_shuffle_i64x2(t0, t2, 0xDD));
    _mm512_storeu_si512((void *)(d + 128), _mm512_shuffle_i64x2(t1, t3, 0x88));
    _mm512_storeu_si512((void *)(d + 192), _mm512_shuffle_i64x2(t1, t3, 0xDD));
}

static inline void row64(const uint8_t *y, uint8_t *d, const __m512i t[6],
                         const yk *k, const dvpp__csc_pix *o)
{
    __m512i l[4], r, g, b, x;

    luma64(y, k, l);
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

void dvpp__yuv_rgb_sub_avx512(const dvpp__yuv_rows *r, size_t w,
                              const dvpp__csc_coef *c, const dvpp__csc_pix *o)
{
    yk k;
    size_t i = 0;

    yk_init(&k, c, o, r->cstep == 2 && r->v < r->u);
    for (; i + 64 <= w; i += 64) {
        __m512i t[6];
        chroma32(r, i / 2, &k, t);
        row64(r->y0 + i, r->d0 + i * o->cn, t, &k, o);
        if (r->y1)
            row64(r->y1 + i, r->d1 + i * o->cn, t, &k, o);
    }
    /* The AVX2 kernel takes 32 more pixels, then scalar the rest. */
    if (i < w) {
        dvpp__yuv_rows t = dvpp__yuv_rows_at(r, i, o->cn);
        dvpp__yuv_rgb_sub_avx2(&t, w - i, c, o);
    }
}

/* ------------------------------------------------------------------ */
/* RGB -> YUV                                                          */
/* ------------------------------------------------------------------ */

/* As csc_avx2.c: R*kr + G*kg + B*kb + bias as three pmaddwd on (R,G),
 * (R<<7,G<<7), (B,B<<7) word pairs with split coefficients, exact. */
typedef struct dot3 {
    __m512i rg0;  /* (lo kr, lo kg) */
    __m512i rg1;  /* (hi kr, hi kg) */
    __m512i bb;   /* (lo kb, hi kb) */
    __m512i bias; /* rounding and offset */
} dot3;

typedef struct rk {
    dot3 y;     /* luma */
    dot3 u;     /* U */
    dot3 v;     /* V */
    __m512i ff; /* low-byte mask, words */
} rk;

static dot3 dot3_make(int32_t kr, int32_t kg, int32_t kb, int32_t bias)
{
    dot3 d = {
        _mm512_set1_epi32(dvpp__csc_pair(dvpp__csc_lo(kr), dvpp__csc_lo(kg))),
        _mm512_set1_epi32(dvpp__csc_pair(dvpp__csc_hi(kr), dvpp__csc_hi(kg))),
        _mm512_set1_epi32(dvpp__csc_pair(dvpp__csc_lo(kb), dvpp__csc_hi(kb))),
        _mm512_set1_epi32(bias)};
    return d;
}

static void rk_init(rk *k, const dvpp__csc_coef *c)
{
    k->y = dot3_make(c->yr, c->yg, c->yb, c->y_bias);
    k->u = dot3_make(c->ur, c->ug, c->ub, DVPP__CSC_CBIAS);
    k->v = dot3_make(c->vr, c->vg, c->vb, DVPP__CSC_CBIAS);
    k->ff = _mm512_set1_epi16(0xff);
}

static inline __m512i dot16x(__m512i rg, __m512i bb, const dot3 *d)
{
    __m512i s = _mm512_add_epi32(_mm512_madd_epi16(rg, d->rg0),
                                 _mm512_madd_epi16(_mm512_slli_epi16(rg, 7), d->rg1));
    s = _mm512_add_epi32(s, _mm512_add_epi32(_mm512_madd_epi16(bb, d->bb), d->bias));
    return _mm512_srai_epi32(s, DVPP__CSC_SHIFT);
}

/* 16 results per lane from 16 words of R, G, B per lane (two halves). */
static inline __m512i dot64(__m512i rl, __m512i gl, __m512i bl, __m512i rh,
                            __m512i gh, __m512i bh, const dot3 *d)
{
    __m512i bl7 = _mm512_slli_epi16(bl, 7), bh7 = _mm512_slli_epi16(bh, 7);
    __m512i a = dot16x(_mm512_unpacklo_epi16(rl, gl), _mm512_unpacklo_epi16(bl, bl7), d);
    __m512i b = dot16x(_mm512_unpackhi_epi16(rl, gl), _mm512_unpackhi_epi16(bl, bl7), d);
    __m512i c = dot16x(_mm512_unpacklo_epi16(rh, gh), _mm512_unpacklo_epi16(bh, bh7), d);
    __m512i e = dot16x(_mm512_unpackhi_epi16(rh, gh), _mm512_unpackhi_epi16(bh, bh7), d);

    return _mm512_packus_epi16(_mm512_packs_epi32(a, b), _mm512_packs_epi32(c, e));
}

/* Four 16-byte loads, lane L from @p + L * @stride. */
static inline __m512i load4x16(const uint8_t *p, size_t stride)
{
    __m512i x = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p));
    x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(p + stride)), 1);
    x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(p + 2 * stride)), 2);
    return _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(p + 3 * stride)), 3);
}

/* 64 pixels' channel bytes in natural order (lane L: pixels 16L..16L+15). */
static inline void load_rgb64(const uint8_t *s, const dvpp__csc_pix *in,
                              __m512i ch[4])
{
    if (in->cn == 3) {
        __m512i a = load4x16(s, 48), b = load4x16(s + 16, 48);
        __m512i c = load4x16(s + 32, 48);
        for (int x = 0; x < 3; x++)
            ch[x] = _mm512_or_si512(
                _mm512_or_si512(pshufb_tab(a, dvpp__csc_de3[x][0]),
                                pshufb_tab(b, dvpp__csc_de3[x][1])),
                pshufb_tab(c, dvpp__csc_de3[x][2]));
        ch[3] = ch[0];
    } else {
        __m512i t[4];
        for (int q = 0; q < 4; q++)
            t[q] = pshufb_tab(load4x16(s + 16 * q, 64), dvpp__csc_de4);
        __m512i a01 = _mm512_unpacklo_epi32(t[0], t[1]);
        __m512i b01 = _mm512_unpackhi_epi32(t[0], t[1]);
        __m512i a23 = _mm512_unpacklo_epi32(t[2], t[3]);
        __m512i b23 = _mm512_unpackhi_epi32(t[2], t[3]);
        ch[0] = _mm512_unpacklo_epi64(a01, a23);
        ch[1] = _mm512_unpackhi_epi64(a01, a23);
        ch[2] = _mm512_unpacklo_epi64(b01, b23);
        ch[3] = _mm512_unpackhi_epi64(b01, b23);
    }
}

static inline __m512i luma_row64(const __m512i ch[4], const dvpp__csc_pix *in,
                                 const rk *k)
{
    __m512i z = _mm512_setzero_si512();
    __m512i r = ch[in->ri], g = ch[in->gi], b = ch[in->bi];

    return dot64(_mm512_unpacklo_epi8(r, z), _mm512_unpacklo_epi8(g, z),
                 _mm512_unpacklo_epi8(b, z), _mm512_unpackhi_epi8(r, z),
                 _mm512_unpackhi_epi8(g, z), _mm512_unpackhi_epi8(b, z), &k->y);
}

/* Luma of 64 4-byte pixels without the lane inserts: plain 64-byte loads
 * leave pixels 16j+4L..16j+4L+3 in dword j of lane L of the result, and
 * one dword permute puts them back in natural order. */
static inline __m512i luma_rgba64(const uint8_t *s, const dvpp__csc_pix *in,
                                  const rk *k)
{
    const __m512i fix = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13,
                                          2, 6, 10, 14, 3, 7, 11, 15);
    __m512i t[4], ch[4];

    for (int q = 0; q < 4; q++)
        t[q] = pshufb_tab(_mm512_loadu_si512((const void *)(s + 64 * q)),
                          dvpp__csc_de4);
    __m512i a01 = _mm512_unpacklo_epi32(t[0], t[1]);
    __m512i b01 = _mm512_unpackhi_epi32(t[0], t[1]);
    __m512i a23 = _mm512_unpacklo_epi32(t[2], t[3]);
    __m512i b23 = _mm512_unpackhi_epi32(t[2], t[3]);
    ch[0] = _mm512_unpacklo_epi64(a01, a23);
    ch[1] = _mm512_unpackhi_epi64(a01, a23);
    ch[2] = _mm512_unpacklo_epi64(b01, b23);
    ch[3] = _mm512_unpackhi_epi64(b01, b23);
    return _mm512_permutexvar_epi32(fix, luma_row64(ch, in, k));
}

/* U and V of the 32 even pixels of 64: lane L = [u 8L..8L+7, v 8L..8L+7]. */
static inline __m512i chroma_row64(const __m512i ch[4], const dvpp__csc_pix *in,
                                   const rk *k)
{
    __m512i re = _mm512_and_si512(ch[in->ri], k->ff);
    __m512i ge = _mm512_and_si512(ch[in->gi], k->ff);
    __m512i be = _mm512_and_si512(ch[in->bi], k->ff);
    __m512i be7 = _mm512_slli_epi16(be, 7);
    __m512i rgl = _mm512_unpacklo_epi16(re, ge), rgh = _mm512_unpackhi_epi16(re, ge);
    __m512i bbl = _mm512_unpacklo_epi16(be, be7), bbh = _mm512_unpackhi_epi16(be, be7);
    __m512i u = _mm512_packs_epi32(dot16x(rgl, bbl, &k->u), dot16x(rgh, bbh, &k->u));
    __m512i v = _mm512_packs_epi32(dot16x(rgl, bbl, &k->v), dot16x(rgh, bbh, &k->v));

    return _mm512_packus_epi16(u, v);
}

static inline void store_chroma32(const dvpp__rgb_rows *r, size_t ci, __m512i x)
{
    if (r->cstep == 1) {
        /* u0-7 u8-15 u16-23 u24-31 | v0-7 ... v24-31 */
        x = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), x);
        _mm256_storeu_si256((__m256i *)(r->u + ci), _mm512_castsi512_si256(x));
        _mm256_storeu_si256((__m256i *)(r->v + ci), _mm512_extracti64x4_epi64(x, 1));
        return;
    }
    if (r->u < r->v)
        x = _mm512_shuffle_epi8(x, _mm512_broadcast_i32x4(_mm_setr_epi8(
            0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15)));
    else
        x = _mm512_shuffle_epi8(x, _mm512_broadcast_i32x4(_mm_setr_epi8(
            8, 0, 9, 1, 10, 2, 11, 3, 12, 4, 13, 5, 14, 6, 15, 7)));
    _mm512_storeu_si512((void *)((r->u < r->v ? r->u : r->v) + 2 * ci), x);
}

void dvpp__rgb_yuv_sub_avx512(const dvpp__rgb_rows *r, size_t w,
                              const dvpp__csc_coef *c, const dvpp__csc_pix *in)
{
    rk k;
    size_t i = 0;

    rk_init(&k, c);
    for (; i + 64 <= w; i += 64) {
        __m512i ch[4];
        load_rgb64(r->s0 + i * in->cn, in, ch);
        _mm512_storeu_si512((void *)(r->y0 + i), luma_row64(ch, in, &k));
        if (r->u)
            store_chroma32(r, i / 2, chroma_row64(ch, in, &k));
        if (r->s1 && in->cn == 4) {
            _mm512_storeu_si512((void *)(r->y1 + i),
                                luma_rgba64(r->s1 + i * 4, in, &k));
        } else if (r->s1) {
            load_rgb64(r->s1 + i * in->cn, in, ch);
            _mm512_storeu_si512((void *)(r->y1 + i), luma_row64(ch, in, &k));
        }
    }
    /* The AVX2 kernel takes 32 more pixels, then scalar the rest. */
    if (i < w) {
        dvpp__rgb_rows t = dvpp__rgb_rows_at(r, i, in->cn);
        dvpp__rgb_yuv_sub_avx2(&t, w - i, c, in);
    }
}

void dvpp__rgb_y_avx512(const uint8_t *s, uint8_t *y, size_t w,
                        const dvpp__csc_coef *c, const dvpp__csc_pix *in)
{
    rk k;
    size_t i = 0;

    rk_init(&k, c);
    if (in->cn == 4) {
        for (; i + 64 <= w; i += 64)
            _mm512_storeu_si512((void *)(y + i), luma_rgba64(s + i * 4, in, &k));
    }
    for (; i + 64 <= w; i += 64) {
        __m512i ch[4];
        load_rgb64(s + i * in->cn, in, ch);
        _mm512_storeu_si512((void *)(y + i), luma_row64(ch, in, &k));
    }
    if (i < w)
        dvpp__rgb_y_avx2(s + i * in->cn, y + i, w - i, c, in);
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

void dvpp__shuffle_avx512(const uint8_t *s, uint8_t *d, size_t w,
                          const dvpp__csc_shuf *m)
{
    uint8_t mask[16], alpha[16];
    const unsigned scn = m->scn, dcn = m->dcn;
    /* Lane L gets pixels 4L..4L+3 at byte 0 of the lane. */
    const __m512i spread1 = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1,
                                              2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i spread3 = _mm512_setr_epi32(0, 1, 2, 3, 3, 4, 5, 6,
                                              6, 7, 8, 9, 9, 10, 11, 12);
    const __m512i pack3 = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10,
                                            12, 13, 14, 15, 15, 15, 15);
    const __mmask64 in_mask = scn == 1   ? 0xFFFFULL
                              : scn == 3 ? 0xFFFFFFFFFFFFULL
                                         : ~0ULL;
    const __mmask64 out_mask = dcn == 3 ? 0xFFFFFFFFFFFFULL : ~0ULL;
    __m512i vm, va;
    size_t i = 0;

    shuf_masks(m, mask, alpha);
    vm = bcast16(mask);
    va = bcast16(alpha);
    /* 16 pixels per step; masked loads and stores touch exactly those
     * pixels' bytes. */
    for (; i + 16 <= w; i += 16) {
        __m512i x = _mm512_maskz_loadu_epi8(in_mask, s + i * scn);
        if (scn == 1)
            x = _mm512_permutexvar_epi32(spread1, x);
        else if (scn == 3)
            x = _mm512_permutexvar_epi32(spread3, x);
        x = _mm512_or_si512(_mm512_shuffle_epi8(x, vm), va);
        if (dcn == 3)
            x = _mm512_permutexvar_epi32(pack3, x);
        _mm512_mask_storeu_epi8(d + i * dcn, out_mask, x);
    }
    if (i < w)
        dvpp__shuffle_avx2(s + i * scn, d + i * dcn, w - i, m);
}
