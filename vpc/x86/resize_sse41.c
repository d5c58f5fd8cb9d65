/* SSE4.1 resize kernels (built with -msse4.1; reached only via dispatch).
 * Each equals its scalar reference in resize_scalar.c bit for bit: the
 * integer ones compute the same exact sums, the float ones the same
 * operations in the same order (separate mul and add, cvtps rounding half
 * to even). Shapes without a vector path go to the scalar code. */
#include <immintrin.h>
#include <string.h>

#include "../resize_int.h"

#define Z (-1) /* pshufb: zero this byte */

static inline __m128i load_u32(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return _mm_cvtsi32_si128(v);
}

static inline int ld_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void store_u32(void *p, __m128i v)
{
    int32_t x = _mm_cvtsi128_si32(v);
    memcpy(p, &x, sizeof(x));
}

/* --- nearest ------------------------------------------------------------- */

/* Whole 4-byte words per pixel (the extra bytes of a 3-byte pixel are
 * overwritten by the next one); the last pixel is copied exactly. */
void dvpp__resize_nearest_sse41(const uint8_t *src, uint8_t *dst,
                                const int32_t *xofs, uint32_t pixels,
                                unsigned cn)
{
    uint32_t x = 0;

    if (cn == 3 || cn == 4) {
        for (; x + 1 < pixels; x++)
            memcpy(dst + x * cn, src + xofs[x], 4);
    }
    dvpp__resize_nearest_scalar(src, dst + x * cn, xofs + x, pixels - x, cn);
}

/* --- cv2 horizontal: u8 -> i32, 11-bit weights --------------------------- */

/* One i32 holding the weight pair (w[0], w[1]), broadcast. */
static inline __m128i pair_bcast(const int16_t *w)
{
    int32_t v;
    memcpy(&v, w, sizeof(v));
    return _mm_set1_epi32(v);
}

static void cv_h2_c1(const uint8_t *src, int32_t *dst, const resize_tab *t)
{
    const __m128i sh = _mm_setr_epi8(0, Z, 1, Z, 4, Z, 5, Z, 8, Z, 9, Z, 12,
                                     Z, 13, Z);
    uint32_t x = 0;

    for (; x + 4 <= t->n; x += 4) {
        __m128i v = _mm_setr_epi32(ld_u16(src + t->start[x]),
                                   ld_u16(src + t->start[x + 1]),
                                   ld_u16(src + t->start[x + 2]),
                                   ld_u16(src + t->start[x + 3]));
        v = _mm_shuffle_epi8(v, sh);
        __m128i w = _mm_loadu_si128((const __m128i *)(t->w16 + 2 * x));
        _mm_storeu_si128((__m128i *)(dst + x), _mm_madd_epi16(v, w));
    }
    dvpp__resize_cv_h_cols_scalar(src, dst, t, 1, x, t->n);
}

/* Pixels p0, p1 of @cn channels from 8 bytes -> pairs (p0.c, p1.c). */
static void cv_h2_c34(const uint8_t *src, int32_t *dst, const resize_tab *t,
                      unsigned cn)
{
    const __m128i sh3 = _mm_setr_epi8(0, Z, 3, Z, 1, Z, 4, Z, 2, Z, 5, Z, Z,
                                      Z, Z, Z);
    const __m128i sh4 = _mm_setr_epi8(0, Z, 4, Z, 1, Z, 5, Z, 2, Z, 6, Z, 3,
                                      Z, 7, Z);
    const __m128i sh = cn == 3 ? sh3 : sh4;

    /* cn == 3 stores a fourth (junk) word: ring rows have room. */
    for (uint32_t x = 0; x < t->n; x++) {
        __m128i v = _mm_loadl_epi64(
            (const __m128i *)(src + (size_t)t->start[x] * cn));
        v = _mm_shuffle_epi8(v, sh);
        _mm_storeu_si128((__m128i *)(dst + x * cn),
                         _mm_madd_epi16(v, pair_bcast(t->w16 + 2 * x)));
    }
}

static void cv_h4_c34(const uint8_t *src, int32_t *dst, const resize_tab *t,
                      unsigned cn)
{
    const __m128i a3 = _mm_setr_epi8(0, Z, 3, Z, 1, Z, 4, Z, 2, Z, 5, Z, Z, Z,
                                     Z, Z);
    const __m128i b3 = _mm_setr_epi8(6, Z, 9, Z, 7, Z, 10, Z, 8, Z, 11, Z, Z,
                                     Z, Z, Z);
    const __m128i a4 = _mm_setr_epi8(0, Z, 4, Z, 1, Z, 5, Z, 2, Z, 6, Z, 3, Z,
                                     7, Z);
    const __m128i b4 = _mm_setr_epi8(8, Z, 12, Z, 9, Z, 13, Z, 10, Z, 14, Z,
                                     11, Z, 15, Z);
    const __m128i sa = cn == 3 ? a3 : a4, sb = cn == 3 ? b3 : b4;

    for (uint32_t x = 0; x < t->n; x++) {
        __m128i v = _mm_loadu_si128(
            (const __m128i *)(src + (size_t)t->start[x] * cn));
        __m128i lo = _mm_madd_epi16(_mm_shuffle_epi8(v, sa),
                                    pair_bcast(t->w16 + 4 * x));
        __m128i hi = _mm_madd_epi16(_mm_shuffle_epi8(v, sb),
                                    pair_bcast(t->w16 + 4 * x + 2));
        _mm_storeu_si128((__m128i *)(dst + x * cn), _mm_add_epi32(lo, hi));
    }
}

static void cv_h4_c1(const uint8_t *src, int32_t *dst, const resize_tab *t)
{
    const __m128i sh = _mm_setr_epi8(0, Z, 1, Z, 2, Z, 3, Z, 4, Z, 5, Z, 6, Z,
                                     7, Z);
    uint32_t x = 0;

    for (; x + 4 <= t->n; x += 4) {
        __m128i a = _mm_unpacklo_epi32(load_u32(src + t->start[x]),
                                       load_u32(src + t->start[x + 1]));
        __m128i b = _mm_unpacklo_epi32(load_u32(src + t->start[x + 2]),
                                       load_u32(src + t->start[x + 3]));
        __m128i wa = _mm_loadu_si128((const __m128i *)(t->w16 + 4 * x));
        __m128i wb = _mm_loadu_si128((const __m128i *)(t->w16 + 4 * x + 8));
        a = _mm_madd_epi16(_mm_shuffle_epi8(a, sh), wa);
        b = _mm_madd_epi16(_mm_shuffle_epi8(b, sh), wb);
        _mm_storeu_si128((__m128i *)(dst + x), _mm_hadd_epi32(a, b));
    }
    dvpp__resize_cv_h_cols_scalar(src, dst, t, 1, x, t->n);
}

void dvpp__resize_cv_h_sse41(const uint8_t *src, int32_t *dst,
                             const resize_tab *t, unsigned cn)
{
    if (t->taps == 2 && cn == 1)
        cv_h2_c1(src, dst, t);
    else if (t->taps == 2 && (cn == 3 || cn == 4))
        cv_h2_c34(src, dst, t, cn);
    else if (t->taps == 4 && cn == 1)
        cv_h4_c1(src, dst, t);
    else if (t->taps == 4 && (cn == 3 || cn == 4))
        cv_h4_c34(src, dst, t, cn);
    else
        dvpp__resize_cv_h_scalar(src, dst, t, cn);
}

/* --- cv2 vertical -------------------------------------------------------- */

static inline __m128i cv_v2_8(const int32_t *s0, const int32_t *s1,
                              __m128i b0, __m128i b1)
{
    __m128i a = _mm_packs_epi32(
        _mm_srai_epi32(_mm_loadu_si128((const __m128i *)s0), 4),
        _mm_srai_epi32(_mm_loadu_si128((const __m128i *)(s0 + 4)), 4));
    __m128i b = _mm_packs_epi32(
        _mm_srai_epi32(_mm_loadu_si128((const __m128i *)s1), 4),
        _mm_srai_epi32(_mm_loadu_si128((const __m128i *)(s1 + 4)), 4));
    __m128i v = _mm_add_epi16(_mm_mulhi_epi16(a, b0), _mm_mulhi_epi16(b, b1));
    return _mm_srai_epi16(_mm_add_epi16(v, _mm_set1_epi16(2)), 2);
}

void dvpp__resize_cv_v2_sse41(const int32_t *s0, const int32_t *s1,
                              const int16_t *beta, uint8_t *dst, size_t n)
{
    const __m128i b0 = _mm_set1_epi16(beta[0]), b1 = _mm_set1_epi16(beta[1]);
    size_t x = 0;

    for (; x + 16 <= n; x += 16) {
        __m128i lo = cv_v2_8(s0 + x, s1 + x, b0, b1);
        __m128i hi = cv_v2_8(s0 + x + 8, s1 + x + 8, b0, b1);
        _mm_storeu_si128((__m128i *)(dst + x), _mm_packus_epi16(lo, hi));
    }
    dvpp__resize_cv_v2_scalar(s0 + x, s1 + x, beta, dst + x, n - x);
}

static inline __m128i cv_v4_4(const int32_t *const *r, size_t x,
                              const __m128 f[4])
{
    __m128 t = _mm_mul_ps(
        _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)(r[3] + x))), f[3]);
    for (int k = 2; k >= 0; k--)
        t = _mm_add_ps(
            _mm_mul_ps(
                _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)(r[k] + x))),
                f[k]),
            t);
    return _mm_cvtps_epi32(t);
}

void dvpp__resize_cv_v4_sse41(const int32_t *const *rows, const int16_t *beta,
                              uint8_t *dst, size_t n, size_t nf)
{
    const float scale = 1.f / (2048 * 2048);
    const __m128 f[4] = {_mm_set1_ps(beta[0] * scale),
                         _mm_set1_ps(beta[1] * scale),
                         _mm_set1_ps(beta[2] * scale),
                         _mm_set1_ps(beta[3] * scale)};
    const int32_t *r[4];
    size_t x = 0;

    for (; x + 8 <= nf; x += 8) {
        __m128i v = _mm_packs_epi32(cv_v4_4(rows, x, f),
                                    cv_v4_4(rows, x + 4, f));
        _mm_storel_epi64((__m128i *)(dst + x), _mm_packus_epi16(v, v));
    }
    for (int k = 0; k < 4; k++)
        r[k] = rows[k] + x;
    dvpp__resize_cv_v4_scalar(r, beta, dst + x, n - x, nf - x);
}

/* --- Pillow horizontal: u8 -> u8, 22-bit weights ------------------------- */

/* Pillow's clip8 of 4 sums (the 2^21 bias is already in). */
static inline __m128i pil_pack(__m128i acc)
{
    __m128i v = _mm_srai_epi32(acc, 22);
    v = _mm_packs_epi32(v, v);
    return _mm_packus_epi16(v, v);
}

#define INLINE static inline __attribute__((always_inline))

/* One pixel of 3 or 4 channels: a 4-byte load per tap (a 3-channel
 * pixel's fourth byte meets a zero weight in RESIZE_WQ). */
INLINE __m128i pil_px(const uint8_t *s, const int32_t *w, uint32_t taps,
                      unsigned cn)
{
    __m128i acc = _mm_set1_epi32(1 << 21);

    for (uint32_t i = 0; i < taps; i++, s += cn, w += 4) {
        __m128i p = _mm_cvtepu8_epi32(load_u32(s));
        acc = _mm_add_epi32(
            acc, _mm_mullo_epi32(p, _mm_loadu_si128((const __m128i *)w)));
    }
    return pil_pack(acc);
}

INLINE void pil_h_c34(const uint8_t *src, uint8_t *dst, const resize_tab *t,
                      unsigned cn)
{
    const size_t step = (size_t)t->taps * 4; /* weights per column */
    const int32_t *w = t->wq;

    /* A 4-byte store per pixel; the last pixel of a 3-channel row is
     * stored byte by byte so nothing past the row is written. */
    for (uint32_t x = 0; x < t->n; x++, w += step) {
        __m128i v = pil_px(src + (size_t)t->start[x] * cn, w, t->taps, cn);
        if (cn == 4 || x + 1 < t->n) {
            store_u32(dst + x * cn, v);
        } else {
            uint8_t b[4];
            store_u32(b, v);
            memcpy(dst + x * cn, b, 3);
        }
    }
}

static inline int32_t hsum_epi32(__m128i v)
{
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(v);
}

static void pil_h_c1(const uint8_t *src, uint8_t *dst, const resize_tab *t)
{
    for (uint32_t x = 0; x < t->n; x++) {
        const uint8_t *s = src + t->start[x];
        const int32_t *k = t->w32 + (size_t)x * t->taps;
        __m128i acc = _mm_setzero_si128();
        int32_t ss;
        for (uint32_t i = 0; i < t->taps; i += 4)
            acc = _mm_add_epi32(
                acc, _mm_mullo_epi32(_mm_cvtepu8_epi32(load_u32(s + i)),
                                     _mm_loadu_si128((const __m128i *)(k + i))));
        ss = (1 << 21) + hsum_epi32(acc);
        ss >>= 22;
        dst[x] = (uint8_t)(ss < 0 ? 0 : ss > 255 ? 255 : ss);
    }
}

void dvpp__resize_pil_h_sse41(const uint8_t *src, uint8_t *dst,
                              const resize_tab *t, unsigned cn)
{
    if (cn == 3 && t->wq)
        pil_h_c34(src, dst, t, 3);
    else if (cn == 4 && t->wq)
        pil_h_c34(src, dst, t, 4);
    else if (cn == 1 && t->taps % 4 == 0)
        pil_h_c1(src, dst, t);
    else
        dvpp__resize_pil_h_scalar(src, dst, t, cn);
}

/* --- Pillow vertical ------------------------------------------------------ */

void dvpp__resize_pil_v_sse41(const uint8_t *const *rows, const int32_t *k,
                              uint32_t taps, uint8_t *dst, size_t n)
{
    size_t x = 0;

    for (; x + 16 <= n; x += 16) {
        __m128i a0 = _mm_set1_epi32(1 << 21), a1 = a0, a2 = a0, a3 = a0;
        for (uint32_t i = 0; i < taps; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(rows[i] + x));
            __m128i w = _mm_set1_epi32(k[i]);
            a0 = _mm_add_epi32(a0, _mm_mullo_epi32(_mm_cvtepu8_epi32(v), w));
            a1 = _mm_add_epi32(a1, _mm_mullo_epi32(
                _mm_cvtepu8_epi32(_mm_srli_si128(v, 4)), w));
            a2 = _mm_add_epi32(a2, _mm_mullo_epi32(
                _mm_cvtepu8_epi32(_mm_srli_si128(v, 8)), w));
            a3 = _mm_add_epi32(a3, _mm_mullo_epi32(
                _mm_cvtepu8_epi32(_mm_srli_si128(v, 12)), w));
        }
        a0 = _mm_packs_epi32(_mm_srai_epi32(a0, 22), _mm_srai_epi32(a1, 22));
        a2 = _mm_packs_epi32(_mm_srai_epi32(a2, 22), _mm_srai_epi32(a3, 22));
        _mm_storeu_si128((__m128i *)(dst + x), _mm_packus_epi16(a0, a2));
    }
    dvpp__resize_pil_v_from_scalar(rows, k, taps, dst, x, n);
}

/* --- cv2 area and tf vertical (float) ------------------------------------- */

static inline __m128i round_pack4(__m128 a, __m128 b, __m128 c, __m128 d)
{
    __m128i lo = _mm_packs_epi32(_mm_cvtps_epi32(a), _mm_cvtps_epi32(b));
    __m128i hi = _mm_packs_epi32(_mm_cvtps_epi32(c), _mm_cvtps_epi32(d));
    return _mm_packus_epi16(lo, hi);
}

void dvpp__resize_area_v_sse41(const float *const *rows, const float *beta,
                               uint32_t taps, uint8_t *dst, size_t n)
{
    size_t x = 0;

    for (; x + 16 <= n; x += 16) {
        __m128 s[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(),
                       _mm_setzero_ps()};
        for (uint32_t k = 0; k < taps; k++) {
            __m128 b = _mm_set1_ps(beta[k]);
            for (int j = 0; j < 4; j++)
                s[j] = _mm_add_ps(
                    s[j], _mm_mul_ps(b, _mm_loadu_ps(rows[k] + x + 4 * j)));
        }
        _mm_storeu_si128((__m128i *)(dst + x),
                         round_pack4(s[0], s[1], s[2], s[3]));
    }
    dvpp__resize_area_v_from_scalar(rows, beta, taps, dst, x, n);
}

static inline __m128 tf_lerp4(const float *t, const float *b, __m128 l)
{
    __m128 top = _mm_loadu_ps(t);
    return _mm_add_ps(top, _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(b), top), l));
}

void dvpp__resize_tf_v_sse41(const float *top, const float *bot, float lerp,
                             uint8_t *dst, size_t n)
{
    const __m128 l = _mm_set1_ps(lerp);
    size_t x = 0;

    for (; x + 16 <= n; x += 16)
        _mm_storeu_si128((__m128i *)(dst + x),
                         round_pack4(tf_lerp4(top + x, bot + x, l),
                                     tf_lerp4(top + x + 4, bot + x + 4, l),
                                     tf_lerp4(top + x + 8, bot + x + 8, l),
                                     tf_lerp4(top + x + 12, bot + x + 12, l)));
    dvpp__resize_tf_v_scalar(top + x, bot + x, lerp, dst + x, n - x);
}

/* --- cv2 area, integer factors ------------------------------------------------ */

/* (r0[i] + r0[i+cn] + r1[i] + r1[i+cn] + 2) >> 2 for 8 positions i. */
static inline __m128i quad8(const uint8_t *a, const uint8_t *b, unsigned cn)
{
    __m128i s = _mm_add_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)a)),
                              _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(a + cn))));
    s = _mm_add_epi16(s, _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)b)));
    s = _mm_add_epi16(s, _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(b + cn))));
    return _mm_srli_epi16(_mm_add_epi16(s, _mm_set1_epi16(2)), 2);
}

/* OpenCV's 2x2 path: every position of 16 gets its block sum, a shuffle
 * keeps the positions that start a block (16 source bytes -> 8 for 1 and
 * 4 channels, 18 -> 9 for 3). Loads stay inside the two rows; the rest of
 * the row goes to the scalar kernel. */
static void area_2x2(const uint8_t *src, size_t stride, uint8_t *dst,
                     uint32_t pixels, unsigned cn, float scale)
{
    const __m128i keep1 = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, Z, Z, Z, Z,
                                        Z, Z, Z, Z);
    const __m128i keep3 = _mm_setr_epi8(0, 1, 2, 6, 7, 8, 12, 13, 14, Z, Z, Z,
                                        Z, Z, Z, Z);
    const __m128i keep4 = _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, Z, Z, Z, Z,
                                        Z, Z, Z, Z);
    const __m128i keep = cn == 1 ? keep1 : cn == 3 ? keep3 : keep4;
    const size_t in_step = cn == 3 ? 18 : 16, out_step = in_step / 2;
    const size_t row = (size_t)pixels * 2 * cn;
    const uint8_t *r1 = src + stride;
    size_t i = 0, o = 0;

    for (; i + 16 + cn <= row; i += in_step, o += out_step) {
        __m128i v = _mm_packus_epi16(quad8(src + i, r1 + i, cn),
                                     quad8(src + i + 8, r1 + i + 8, cn));
        v = _mm_shuffle_epi8(v, keep);
        _mm_storel_epi64((__m128i *)(dst + o), v);
        if (cn == 3)
            dst[o + 8] = (uint8_t)_mm_extract_epi8(v, 8);
    }
    dvpp__resize_area_fast_scalar(src + i, stride, dst + o,
                                  pixels - (uint32_t)(o / cn), cn, 2, 2, scale,
                                  1);
}

#define AREA_SEG 2048 /* u16 column sums per segment (4 KiB of stack) */

/* Column sums of @ky rows over @n bytes (u16: ky <= 257 keeps them exact). */
static void area_vsum(const uint8_t *s, size_t stride, uint32_t ky, size_t n,
                      uint16_t *vs)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        __m128i lo = _mm_setzero_si128(), hi = lo;
        for (uint32_t j = 0; j < ky; j++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + j * stride + i));
            lo = _mm_add_epi16(lo, _mm_cvtepu8_epi16(v));
            hi = _mm_add_epi16(hi, _mm_cvtepu8_epi16(_mm_srli_si128(v, 8)));
        }
        _mm_storeu_si128((__m128i *)(vs + i), lo);
        _mm_storeu_si128((__m128i *)(vs + i + 8), hi);
    }
    for (; i < n; i++) {
        uint32_t sum = 0;
        for (uint32_t j = 0; j < ky; j++)
            sum += s[j * stride + i];
        vs[i] = (uint16_t)sum;
    }
}

/* Block sums of @n pixels from the column sums, times @scale, rounded
 * half to even (cvtps), as the scalar kernel's lrintf((float)sum * scale). */
static void area_hsum(const uint16_t *vs, uint8_t *dst, uint32_t n,
                      unsigned cn, uint32_t kx, float scale, int row_end)
{
    const __m128 f = _mm_set1_ps(scale);

    for (uint32_t x = 0; x < n; x++) {
        const uint16_t *p = vs + (size_t)x * kx * cn;
        if (cn == 3 || cn == 4) {
            __m128i acc = _mm_setzero_si128(), v;
            for (uint32_t m = 0; m < kx; m++)
                acc = _mm_add_epi32(acc, _mm_cvtepu16_epi32(_mm_loadl_epi64(
                                             (const __m128i *)(p + m * cn))));
            v = _mm_cvtps_epi32(_mm_mul_ps(_mm_cvtepi32_ps(acc), f));
            v = _mm_packus_epi16(_mm_packs_epi32(v, v), v);
            if (cn == 4 || x + 1 < n || !row_end) {
                store_u32(dst + x * cn, v);
            } else {
                uint8_t b[4];
                store_u32(b, v);
                memcpy(dst + x * cn, b, 3);
            }
        } else {
            uint32_t sum = 0;
            for (uint32_t m = 0; m < kx * cn; m++)
                sum += p[m];
            int r = _mm_cvtss_si32(_mm_mul_ss(
                _mm_cvtsi32_ss(_mm_setzero_ps(), (int)sum), f));
            dst[x] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
        }
    }
}

void dvpp__resize_area_fast_sse41(const uint8_t *src, size_t stride,
                                  uint8_t *dst, uint32_t pixels, unsigned cn,
                                  uint32_t kx, uint32_t ky, float scale,
                                  int round_up)
{
    /* +4: a 3-channel pixel's 4-lane load may read one sum past the end. */
    uint16_t vs[AREA_SEG + 4];
    uint32_t per = 0;

    if (round_up) {
        area_2x2(src, stride, dst, pixels, cn, scale);
        return;
    }
    if (cn != 2 && ky <= 257 && (size_t)kx * cn <= AREA_SEG)
        per = AREA_SEG / (kx * cn);
    if (!per) {
        dvpp__resize_area_fast_scalar(src, stride, dst, pixels, cn, kx, ky,
                                      scale, 0);
        return;
    }
    for (uint32_t x = 0; x < pixels; x += per) {
        uint32_t n = pixels - x < per ? pixels - x : per;
        area_vsum(src + (size_t)x * kx * cn, stride, ky, (size_t)n * kx * cn,
                  vs);
        vs[(size_t)n * kx * cn] = 0; /* the junk lane reads a defined 0 */
        area_hsum(vs, dst + (size_t)x * cn, n, cn, kx, scale,
                  x + n == pixels);
    }
}
