/* AVX2 resize kernels (built with -mavx2 -mfma -mf16c -mbmi2; reached only
 * via dispatch). Bit-exact with resize_scalar.c: integer sums are exact and
 * float kernels use separate mul and add (never FMA) in the scalar order.
 * Shapes without an AVX2 path use the SSE4.1 kernels, which run on any
 * AVX2 CPU. */
#include <immintrin.h>
#include <string.h>

#include "../resize_int.h"

#define Z (-1) /* pshufb: zero this byte */

#if defined(__clang__)
/* The float kernels must not be contracted into FMA. */
#pragma clang fp contract(off)
#endif

static inline __m128i load_u32(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return _mm_cvtsi32_si128(v);
}

static inline __m256i gather_u32(const uint8_t *base, __m256i byte_ofs)
{
    return _mm256_i32gather_epi32((const int *)(const void *)base, byte_ofs,
                                  1);
}

/* --- nearest ------------------------------------------------------------- */

void dvpp__resize_nearest_avx2(const uint8_t *src, uint8_t *dst,
                               const int32_t *xofs, uint32_t pixels,
                               unsigned cn)
{
    const __m256i c3 = _mm256_setr_epi8(
        0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, Z, Z, Z, Z, 0, 1, 2, 4, 5, 6,
        8, 9, 10, 12, 13, 14, Z, Z, Z, Z);
    const __m256i c1 = _mm256_setr_epi8(
        0, 4, 8, 12, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 0, 4, 8, 12, Z, Z, Z,
        Z, Z, Z, Z, Z, Z, Z, Z, Z);
    uint32_t x = 0;

    for (; cn != 2 && x + 8 <= pixels; x += 8) {
        __m256i v = gather_u32(src, _mm256_loadu_si256(
                                        (const __m256i *)(xofs + x)));
        if (cn == 4) {
            _mm256_storeu_si256((__m256i *)(dst + 4 * x), v);
        } else if (cn == 3) {
            v = _mm256_permutevar8x32_epi32(
                _mm256_shuffle_epi8(v, c3),
                _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
            _mm_storeu_si128((__m128i *)(dst + 3 * x),
                             _mm256_castsi256_si128(v));
            _mm_storel_epi64((__m128i *)(dst + 3 * x + 16),
                             _mm256_extracti128_si256(v, 1));
        } else {
            v = _mm256_permutevar8x32_epi32(
                _mm256_shuffle_epi8(v, c1),
                _mm256_setr_epi32(0, 4, 1, 2, 3, 5, 6, 7));
            _mm_storel_epi64((__m128i *)(dst + x), _mm256_castsi256_si128(v));
        }
    }
    dvpp__resize_nearest_sse41(src, dst + x * cn, xofs + x, pixels - x, cn);
}

/* --- cv2 horizontal ------------------------------------------------------- */

static void cv_h2_c1(const uint8_t *src, int32_t *dst, const resize_tab *t)
{
    const __m256i sh = _mm256_setr_epi8(
        0, Z, 1, Z, 4, Z, 5, Z, 8, Z, 9, Z, 12, Z, 13, Z, 0, Z, 1, Z, 4, Z, 5,
        Z, 8, Z, 9, Z, 12, Z, 13, Z);
    uint32_t x = 0;

    for (; x + 8 <= t->n; x += 8) {
        __m256i v = gather_u32(src, _mm256_loadu_si256(
                                        (const __m256i *)(t->start + x)));
        __m256i w = _mm256_loadu_si256((const __m256i *)(t->w16 + 2 * x));
        _mm256_storeu_si256((__m256i *)(dst + x),
                            _mm256_madd_epi16(_mm256_shuffle_epi8(v, sh), w));
    }
    dvpp__resize_cv_h_cols_scalar(src, dst, t, 1, x, t->n);
}

static void cv_h4_c1(const uint8_t *src, int32_t *dst, const resize_tab *t)
{
    uint32_t x = 0;

    for (; x + 8 <= t->n; x += 8) {
        __m256i v = gather_u32(src, _mm256_loadu_si256(
                                        (const __m256i *)(t->start + x)));
        __m256i lo = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(v));
        __m256i hi = _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v, 1));
        lo = _mm256_madd_epi16(
            lo, _mm256_loadu_si256((const __m256i *)(t->w16 + 4 * x)));
        hi = _mm256_madd_epi16(
            hi, _mm256_loadu_si256((const __m256i *)(t->w16 + 4 * x + 16)));
        /* hadd works per 128-bit lane: columns come out 0 1 4 5 | 2 3 6 7. */
        v = _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi),
                                     _MM_SHUFFLE(3, 1, 2, 0));
        _mm256_storeu_si256((__m256i *)(dst + x), v);
    }
    dvpp__resize_cv_h_cols_scalar(src, dst, t, 1, x, t->n);
}

/* Two pixels per register: pixel x in the low lane, x + 1 in the high. */
static void cv_h2_c34(const uint8_t *src, int32_t *dst, const resize_tab *t,
                      unsigned cn)
{
    const __m256i sh3 = _mm256_setr_epi8(
        0, Z, 3, Z, 1, Z, 4, Z, 2, Z, 5, Z, Z, Z, Z, Z, 0, Z, 3, Z, 1, Z, 4, Z,
        2, Z, 5, Z, Z, Z, Z, Z);
    const __m256i sh4 = _mm256_setr_epi8(
        0, Z, 4, Z, 1, Z, 5, Z, 2, Z, 6, Z, 3, Z, 7, Z, 0, Z, 4, Z, 1, Z, 5, Z,
        2, Z, 6, Z, 3, Z, 7, Z);
    const __m256i sh = cn == 3 ? sh3 : sh4;
    const __m256i bc = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    const __m256i pk3 = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    uint32_t x = 0;

    for (; x + 2 <= t->n; x += 2) {
        __m128i a = _mm_loadl_epi64(
            (const __m128i *)(src + (size_t)t->start[x] * cn));
        __m128i b = _mm_loadl_epi64(
            (const __m128i *)(src + (size_t)t->start[x + 1] * cn));
        __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
        __m256i w = _mm256_permutevar8x32_epi32(
            _mm256_castsi128_si256(
                _mm_loadl_epi64((const __m128i *)(t->w16 + 2 * x))),
            bc);
        v = _mm256_madd_epi16(_mm256_shuffle_epi8(v, sh), w);
        if (cn == 3) /* ring rows take the two junk words past the end */
            v = _mm256_permutevar8x32_epi32(v, pk3);
        _mm256_storeu_si256((__m256i *)(dst + x * cn), v);
    }
    dvpp__resize_cv_h_cols_scalar(src, dst, t, cn, x, t->n);
}

void dvpp__resize_cv_h_avx2(const uint8_t *src, int32_t *dst,
                            const resize_tab *t, unsigned cn)
{
    if (t->taps == 2 && cn == 1)
        cv_h2_c1(src, dst, t);
    else if (t->taps == 4 && cn == 1)
        cv_h4_c1(src, dst, t);
    else if (t->taps == 2 && (cn == 3 || cn == 4))
        cv_h2_c34(src, dst, t, cn);
    else
        dvpp__resize_cv_h_sse41(src, dst, t, cn);
}

/* --- cv2 vertical -------------------------------------------------------- */

static inline __m256i cv_v2_16(const int32_t *s0, const int32_t *s1,
                               __m256i b0, __m256i b1)
{
    __m256i a = _mm256_packs_epi32(
        _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)s0), 4),
        _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(s0 + 8)), 4));
    __m256i b = _mm256_packs_epi32(
        _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)s1), 4),
        _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(s1 + 8)), 4));
    __m256i v = _mm256_add_epi16(_mm256_mulhi_epi16(a, b0),
                                 _mm256_mulhi_epi16(b, b1));
    return _mm256_srai_epi16(_mm256_add_epi16(v, _mm256_set1_epi16(2)), 2);
}

void dvpp__resize_cv_v2_avx2(const int32_t *s0, const int32_t *s1,
                             const int16_t *beta, uint8_t *dst, size_t n)
{
    const __m256i b0 = _mm256_set1_epi16(beta[0]);
    const __m256i b1 = _mm256_set1_epi16(beta[1]);
    /* packs/packus interleave 128-bit lanes; this puts dwords back. */
    const __m256i fix = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t x = 0;

    for (; x + 32 <= n; x += 32) {
        __m256i lo = cv_v2_16(s0 + x, s1 + x, b0, b1);
        __m256i hi = cv_v2_16(s0 + x + 16, s1 + x + 16, b0, b1);
        __m256i v = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(lo, hi),
                                                fix);
        _mm256_storeu_si256((__m256i *)(dst + x), v);
    }
    dvpp__resize_cv_v2_sse41(s0 + x, s1 + x, beta, dst + x, n - x);
}

static inline __m256i cv_v4_8(const int32_t *const *r, size_t x,
                              const __m256 f[4])
{
    __m256 t = _mm256_mul_ps(
        _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(r[3] + x))),
        f[3]);
    for (int k = 2; k >= 0; k--)
        t = _mm256_add_ps(
            _mm256_mul_ps(_mm256_cvtepi32_ps(
                              _mm256_loadu_si256((const __m256i *)(r[k] + x))),
                          f[k]),
            t);
    return _mm256_cvtps_epi32(t);
}

void dvpp__resize_cv_v4_avx2(const int32_t *const *rows, const int16_t *beta,
                             uint8_t *dst, size_t n, size_t nf)
{
    const float scale = 1.f / (2048 * 2048);
    const __m256 f[4] = {_mm256_set1_ps(beta[0] * scale),
                         _mm256_set1_ps(beta[1] * scale),
                         _mm256_set1_ps(beta[2] * scale),
                         _mm256_set1_ps(beta[3] * scale)};
    const int32_t *r[4];
    size_t x = 0;

    for (; x + 8 <= nf; x += 8) {
        __m256i v = cv_v4_8(rows, x, f);
        __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v),
                                    _mm256_extracti128_si256(v, 1));
        _mm_storel_epi64((__m128i *)(dst + x), _mm_packus_epi16(w, w));
    }
    for (int k = 0; k < 4; k++)
        r[k] = rows[k] + x;
    dvpp__resize_cv_v4_scalar(r, beta, dst + x, n - x, nf - x);
}

/* --- Pillow horizontal ----------------------------------------------------- */

#define INLINE static inline __attribute__((always_inline))

/* One step of @n taps (n = 4, 2 or 1) of one column: the pixels spread
 * to 4 lanes each (tap 2i in lanes 0-3 of a register, 2i+1 in 4-7), times
 * their weights, into @acc. @cn is a constant at every call. */
INLINE __m256i pil_step(__m256i acc, const uint8_t *s, const int32_t *w,
                        int n, unsigned cn)
{
    /* 3 channels, 4 taps: 16 bytes in both halves, shuffled straight to
     * dwords (pixels 0|1, then 2|3). */
    const __m256i ma = _mm256_setr_epi8(
        0, Z, Z, Z, 1, Z, Z, Z, 2, Z, Z, Z, Z, Z, Z, Z, 3, Z, Z, Z, 4, Z, Z, Z,
        5, Z, Z, Z, Z, Z, Z, Z);
    const __m256i mb = _mm256_setr_epi8(
        6, Z, Z, Z, 7, Z, Z, Z, 8, Z, Z, Z, Z, Z, Z, Z, 9, Z, Z, Z, 10, Z, Z, Z,
        11, Z, Z, Z, Z, Z, Z, Z);
    const __m128i sh3 = _mm_setr_epi8(0, 1, 2, Z, 3, 4, 5, Z, Z, Z, Z, Z, Z, Z,
                                      Z, Z);
    __m256i p, q;

    if (n == 4) {
        if (cn == 3) {
            __m256i b = _mm256_broadcastsi128_si256(
                _mm_loadu_si128((const __m128i *)s));
            p = _mm256_shuffle_epi8(b, ma);
            q = _mm256_shuffle_epi8(b, mb);
        } else {
            p = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)s));
            q = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + 8)));
        }
        acc = _mm256_add_epi32(
            acc, _mm256_mullo_epi32(p, _mm256_loadu_si256((const __m256i *)w)));
        return _mm256_add_epi32(
            acc, _mm256_mullo_epi32(q, _mm256_loadu_si256(
                                           (const __m256i *)(w + 8))));
    }
    if (n == 2) {
        __m128i b = _mm_loadl_epi64((const __m128i *)s);
        if (cn == 3)
            b = _mm_shuffle_epi8(b, sh3);
        return _mm256_add_epi32(
            acc, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(b),
                                    _mm256_loadu_si256((const __m256i *)w)));
    }
    /* One tap: the pixel's upper lanes are zero, so whatever the upper
     * weight lanes hold adds nothing. */
    p = _mm256_cvtepu8_epi32(load_u32(s));
    q = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)w));
    return _mm256_add_epi32(acc, _mm256_mullo_epi32(p, q));
}

/* Sums of two columns with the same tap count, in one loop. */
INLINE void pil_acc2(const uint8_t *sa, const uint8_t *sb, const int32_t *wa,
                     const int32_t *wb, uint32_t taps, unsigned cn,
                     __m256i *ra, __m256i *rb)
{
    __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
    uint32_t j = 0;

    for (; j + 4 <= taps; j += 4) {
        a = pil_step(a, sa + j * cn, wa + 4 * j, 4, cn);
        b = pil_step(b, sb + j * cn, wb + 4 * j, 4, cn);
    }
    if (j + 2 <= taps) {
        a = pil_step(a, sa + j * cn, wa + 4 * j, 2, cn);
        b = pil_step(b, sb + j * cn, wb + 4 * j, 2, cn);
        j += 2;
    }
    if (j < taps) {
        a = pil_step(a, sa + j * cn, wa + 4 * j, 1, cn);
        b = pil_step(b, sb + j * cn, wb + 4 * j, 1, cn);
    }
    *ra = a;
    *rb = b;
}

/* clip8 of the 4-lane sums in each 128-bit half: bytes 0-3 of each half. */
static inline __m256i pil_pack2(__m256i sum)
{
    __m256i v = _mm256_srai_epi32(
        _mm256_add_epi32(sum, _mm256_set1_epi32(1 << 21)), 22);
    v = _mm256_packs_epi32(v, v);
    return _mm256_packus_epi16(v, v);
}

static inline void store_px(uint8_t *d, int32_t v, unsigned cn, int last)
{
    /* 4-byte stores; the last 3-channel pixel must not pass the row. */
    memcpy(d, &v, cn == 4 || !last ? 4 : 3);
}

INLINE void pil_h_cols(const uint8_t *src, uint8_t *dst, const resize_tab *t,
                       unsigned cn, uint32_t x0, uint32_t x1)
{
    const size_t step = (size_t)t->taps * 4; /* weights per column */
    const int32_t *w = t->wq + x0 * step;
    uint32_t x = x0;

    for (; x + 2 <= x1; x += 2, w += 2 * step) {
        __m256i a, b, v;
        pil_acc2(src + (size_t)t->start[x] * cn,
                 src + (size_t)t->start[x + 1] * cn, w, w + step, t->taps, cn,
                 &a, &b);
        /* [a.lo + a.hi | b.lo + b.hi]: the two pixels' channel sums. */
        v = pil_pack2(_mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                                       _mm256_permute2x128_si256(a, b, 0x31)));
        store_px(dst + x * cn, _mm256_cvtsi256_si32(v), cn, 0);
        store_px(dst + (x + 1) * cn,
                 _mm_cvtsi128_si32(_mm256_extracti128_si256(v, 1)), cn,
                 x + 2 == t->n);
    }
    if (x < x1) {
        /* The last column, paired with itself. */
        const uint8_t *s = src + (size_t)t->start[x] * cn;
        __m256i a, b, v;
        pil_acc2(s, s, w, w, t->taps, cn, &a, &b);
        v = pil_pack2(
            _mm256_add_epi32(a, _mm256_permute2x128_si256(a, a, 0x01)));
        store_px(dst + x * cn, _mm256_cvtsi256_si32(v), cn, x + 1 == t->n);
    }
}

void dvpp__resize_pil_h_cols_avx2(const uint8_t *src, uint8_t *dst,
                                  const resize_tab *t, unsigned cn,
                                  uint32_t x0, uint32_t x1)
{
    if (cn == 3)
        pil_h_cols(src, dst, t, 3, x0, x1);
    else
        pil_h_cols(src, dst, t, 4, x0, x1);
}

static void pil_h_c1(const uint8_t *src, uint8_t *dst, const resize_tab *t)
{
    for (uint32_t x = 0; x < t->n; x++) {
        const uint8_t *s = src + t->start[x];
        const int32_t *k = t->w32 + (size_t)x * t->taps;
        __m256i acc = _mm256_setzero_si256();
        __m128i a;
        int32_t ss;
        for (uint32_t i = 0; i < t->taps; i += 8)
            acc = _mm256_add_epi32(
                acc,
                _mm256_mullo_epi32(
                    _mm256_cvtepu8_epi32(
                        _mm_loadl_epi64((const __m128i *)(s + i))),
                    _mm256_loadu_si256((const __m256i *)(k + i))));
        a = _mm_add_epi32(_mm256_castsi256_si128(acc),
                          _mm256_extracti128_si256(acc, 1));
        a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(1, 0, 3, 2)));
        a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
        ss = ((1 << 21) + _mm_cvtsi128_si32(a)) >> 22;
        dst[x] = (uint8_t)(ss < 0 ? 0 : ss > 255 ? 255 : ss);
    }
}

void dvpp__resize_pil_h_avx2(const uint8_t *src, uint8_t *dst,
                             const resize_tab *t, unsigned cn)
{
    if ((cn == 3 || cn == 4) && t->wq)
        dvpp__resize_pil_h_cols_avx2(src, dst, t, cn, 0, t->n);
    else if (cn == 1 && t->taps % 8 == 0)
        pil_h_c1(src, dst, t);
    else
        dvpp__resize_pil_h_sse41(src, dst, t, cn);
}

/* --- Pillow vertical --------------------------------------------------------- */

static inline __m256i pil_v_mac(__m256i acc, const uint8_t *p, __m256i w)
{
    __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
    return _mm256_add_epi32(acc, _mm256_mullo_epi32(v, w));
}

void dvpp__resize_pil_v_avx2(const uint8_t *const *rows, const int32_t *k,
                             uint32_t taps, uint8_t *dst, size_t n)
{
    const __m256i fix = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t x = 0;

    for (; x + 32 <= n; x += 32) {
        __m256i a[4];
        for (int j = 0; j < 4; j++)
            a[j] = _mm256_set1_epi32(1 << 21);
        for (uint32_t i = 0; i < taps; i++) {
            __m256i w = _mm256_set1_epi32(k[i]);
            for (int j = 0; j < 4; j++)
                a[j] = pil_v_mac(a[j], rows[i] + x + 8 * j, w);
        }
        for (int j = 0; j < 4; j++)
            a[j] = _mm256_srai_epi32(a[j], 22);
        a[0] = _mm256_packs_epi32(a[0], a[1]);
        a[2] = _mm256_packs_epi32(a[2], a[3]);
        _mm256_storeu_si256(
            (__m256i *)(dst + x),
            _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a[0], a[2]), fix));
    }
    dvpp__resize_pil_v_from_scalar(rows, k, taps, dst, x, n);
}

/* --- cv2 area horizontal --------------------------------------------------- */

/* 3 or 4 channels, two pixels per register (x low, x + 1 high): one
 * 4-byte load per pixel and tap, the sum in tap order as the scalar. */
static void area_h_c34(const uint8_t *src, float *dst, const resize_tab *t,
                       unsigned cn)
{
    uint32_t x = 0;

    for (; x + 2 <= t->n; x += 2) {
        const uint8_t *a = src + (size_t)t->start[x] * cn;
        const uint8_t *b = src + (size_t)t->start[x + 1] * cn;
        const float *wa = t->wf + (size_t)x * t->taps, *wb = wa + t->taps;
        __m256 sum = _mm256_setzero_ps();
        for (uint32_t k = 0; k < t->taps; k++) {
            __m128i px = _mm_unpacklo_epi32(load_u32(a + k * cn),
                                            load_u32(b + k * cn));
            __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(px));
            __m256 w = _mm256_set_m128(_mm_set1_ps(wb[k]), _mm_set1_ps(wa[k]));
            sum = _mm256_add_ps(sum, _mm256_mul_ps(v, w));
        }
        /* 3 channels: the fourth lane of each pixel is junk that the next
         * store overwrites (ring rows have room past the end). */
        _mm_storeu_ps(dst + x * cn, _mm256_castps256_ps128(sum));
        _mm_storeu_ps(dst + (x + 1) * cn, _mm256_extractf128_ps(sum, 1));
    }
    dvpp__resize_area_h_cols_scalar(src, dst, t, cn, x, t->n);
}

/* One channel: eight columns per register, gathered. */
static void area_h_c1(const uint8_t *src, float *dst, const resize_tab *t)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i bytes = _mm256_set1_epi32(0xff);
    const __m256i taps = _mm256_set1_epi32((int)t->taps);
    uint32_t x = 0;

    for (; x + 8 <= t->n; x += 8) {
        __m256i ofs = _mm256_loadu_si256((const __m256i *)(t->start + x));
        __m256i widx = _mm256_mullo_epi32(
            _mm256_add_epi32(lane, _mm256_set1_epi32((int)x)), taps);
        __m256 sum = _mm256_setzero_ps();
        for (uint32_t k = 0; k < t->taps; k++) {
            __m256i px = _mm256_and_si256(gather_u32(src, ofs), bytes);
            __m256 w = _mm256_i32gather_ps(t->wf, widx, 4);
            sum = _mm256_add_ps(sum,
                                _mm256_mul_ps(_mm256_cvtepi32_ps(px), w));
            ofs = _mm256_add_epi32(ofs, _mm256_set1_epi32(1));
            widx = _mm256_add_epi32(widx, _mm256_set1_epi32(1));
        }
        _mm256_storeu_ps(dst + x, sum);
    }
    dvpp__resize_area_h_cols_scalar(src, dst, t, 1, x, t->n);
}

void dvpp__resize_area_h_avx2(const uint8_t *src, float *dst,
                              const resize_tab *t, unsigned cn)
{
    if (cn == 3 || cn == 4)
        area_h_c34(src, dst, t, cn);
    else if (cn == 1)
        area_h_c1(src, dst, t);
    else
        dvpp__resize_area_h_scalar(src, dst, t, cn);
}

/* --- cv2 area and tf vertical ------------------------------------------------ */

static inline void store8_u8(uint8_t *d, __m256 a)
{
    __m256i v = _mm256_cvtps_epi32(a);
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v),
                                _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)d, _mm_packus_epi16(w, w));
}

void dvpp__resize_area_v_avx2(const float *const *rows, const float *beta,
                              uint32_t taps, uint8_t *dst, size_t n)
{
    size_t x = 0;

    for (; x + 32 <= n; x += 32) {
        __m256 s[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(),
                       _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (uint32_t k = 0; k < taps; k++) {
            __m256 b = _mm256_set1_ps(beta[k]);
            for (int j = 0; j < 4; j++)
                s[j] = _mm256_add_ps(
                    s[j], _mm256_mul_ps(b, _mm256_loadu_ps(rows[k] + x + 8 * j)));
        }
        for (int j = 0; j < 4; j++)
            store8_u8(dst + x + 8 * j, s[j]);
    }
    dvpp__resize_area_v_from_scalar(rows, beta, taps, dst, x, n);
}

void dvpp__resize_tf_v_avx2(const float *top, const float *bot, float lerp,
                            uint8_t *dst, size_t n)
{
    const __m256 l = _mm256_set1_ps(lerp);
    size_t x = 0;

    for (; x + 8 <= n; x += 8) {
        __m256 t = _mm256_loadu_ps(top + x);
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(bot + x), t);
        store8_u8(dst + x, _mm256_add_ps(t, _mm256_mul_ps(d, l)));
    }
    dvpp__resize_tf_v_scalar(top + x, bot + x, lerp, dst + x, n - x);
}
