/* AVX-512 (F/BW/DQ/VL) resize kernels (built with the AVX-512 flags;
 * reached only via dispatch). Bit-exact with resize_scalar.c: integer sums
 * are exact and float kernels use separate mul and add (never FMA) in the
 * scalar order; tails and other shapes use the AVX2 kernels. */
#include <immintrin.h>
#include <string.h>

#include "../resize_int.h"

#define Z (-1) /* pshufb: zero this byte */

/* --- Pillow horizontal, 3 or 4 channels ------------------------------------ */

#define INLINE static inline __attribute__((always_inline))

/* One group of four taps of one column (tap q in lanes 4q..4q+3; 3-channel
 * pixels are spread to 4 lanes first), weights masked by @m. @cn is a
 * constant at every call. */
INLINE __m512i pil_group(__m512i acc, const uint8_t *s, const int32_t *w,
                         __mmask16 m, unsigned cn)
{
    const __m128i sh3 = _mm_setr_epi8(0, 1, 2, Z, 3, 4, 5, Z, 6, 7, 8, Z, 9,
                                      10, 11, Z);
    __m128i b = _mm_loadu_si128((const __m128i *)s);
    __m512i k = m == 0xffff ? _mm512_loadu_si512(w)
                            : _mm512_maskz_loadu_epi32(m, w);

    if (cn == 3)
        b = _mm_shuffle_epi8(b, sh3);
    return _mm512_add_epi32(acc,
                            _mm512_mullo_epi32(_mm512_cvtepu8_epi32(b), k));
}

/* Sums of four columns (same tap count) in one loop; a last partial group
 * loads only its weights (@tail), so its other lanes add zero. */
INLINE void pil_acc4(const uint8_t *const s[4], const int32_t *w, size_t step,
                     uint32_t taps, __mmask16 tail, unsigned cn, __m512i r[4])
{
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    uint32_t j = 0;

    for (; j + 4 <= taps; j += 4) {
        a0 = pil_group(a0, s[0] + j * cn, w + 4 * j, 0xffff, cn);
        a1 = pil_group(a1, s[1] + j * cn, w + step + 4 * j, 0xffff, cn);
        a2 = pil_group(a2, s[2] + j * cn, w + 2 * step + 4 * j, 0xffff, cn);
        a3 = pil_group(a3, s[3] + j * cn, w + 3 * step + 4 * j, 0xffff, cn);
    }
    if (tail) {
        a0 = pil_group(a0, s[0] + j * cn, w + 4 * j, tail, cn);
        a1 = pil_group(a1, s[1] + j * cn, w + step + 4 * j, tail, cn);
        a2 = pil_group(a2, s[2] + j * cn, w + 2 * step + 4 * j, tail, cn);
        a3 = pil_group(a3, s[3] + j * cn, w + 3 * step + 4 * j, tail, cn);
    }
    r[0] = a0, r[1] = a1, r[2] = a2, r[3] = a3;
}

/* Four columns at once: the 4-lane quarters of each sum are added across
 * registers (two rounds of 128-bit shuffles), then clip8 for all 16 lanes. */
INLINE __m128i pil_four(__m512i a, __m512i b, __m512i c, __m512i d)
{
    __m512i ab = _mm512_add_epi32(
        _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
        _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
    __m512i cd = _mm512_add_epi32(
        _mm512_shuffle_i64x2(c, d, _MM_SHUFFLE(1, 0, 1, 0)),
        _mm512_shuffle_i64x2(c, d, _MM_SHUFFLE(3, 2, 3, 2)));
    __m512i v = _mm512_add_epi32(
        _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)),
        _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)));

    v = _mm512_srai_epi32(_mm512_add_epi32(v, _mm512_set1_epi32(1 << 21)), 22);
    /* vpmovusdb saturates as unsigned: negatives go to 0 first. */
    return _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, _mm512_setzero_si512()));
}

INLINE void pil_h_cn(const uint8_t *src, uint8_t *dst, const resize_tab *t,
                     unsigned cn)
{
    const __m128i c3 = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, Z,
                                     Z, Z, Z);
    const __mmask16 tail = (__mmask16)((1u << (4 * (t->taps % 4))) - 1);
    const size_t step = (size_t)t->taps * 4; /* weights per column */
    const int32_t *w = t->wq;
    uint32_t x = 0;

    for (; x + 4 <= t->n; x += 4, w += 4 * step) {
        const uint8_t *s[4];
        __m512i a[4];
        __m128i v;
        for (int i = 0; i < 4; i++)
            s[i] = src + (size_t)t->start[x + i] * cn;
        pil_acc4(s, w, step, t->taps, tail, cn, a);
        v = pil_four(a[0], a[1], a[2], a[3]);
        if (cn == 4) {
            _mm_storeu_si128((__m128i *)(dst + 4 * x), v);
        } else {
            int32_t last;
            v = _mm_shuffle_epi8(v, c3);
            _mm_storel_epi64((__m128i *)(dst + 3 * x), v);
            last = _mm_extract_epi32(v, 2);
            memcpy(dst + 3 * x + 8, &last, 4);
        }
    }
    dvpp__resize_pil_h_cols_avx2(src, dst, t, cn, x, t->n);
}

void dvpp__resize_pil_h_avx512(const uint8_t *src, uint8_t *dst,
                               const resize_tab *t, unsigned cn)
{
    if (cn == 3 && t->wq)
        pil_h_cn(src, dst, t, 3);
    else if (cn == 4 && t->wq)
        pil_h_cn(src, dst, t, 4);
    else
        dvpp__resize_pil_h_avx2(src, dst, t, cn);
}

/* --- Pillow vertical ------------------------------------------------------- */

void dvpp__resize_pil_v_avx512(const uint8_t *const *rows, const int32_t *k,
                               uint32_t taps, uint8_t *dst, size_t n)
{
    size_t x = 0;

    for (; x + 64 <= n; x += 64) {
        __m512i a[4];
        for (int j = 0; j < 4; j++)
            a[j] = _mm512_set1_epi32(1 << 21);
        for (uint32_t i = 0; i < taps; i++) {
            __m512i w = _mm512_set1_epi32(k[i]);
            for (int j = 0; j < 4; j++) {
                __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(
                    (const __m128i *)(rows[i] + x + 16 * j)));
                a[j] = _mm512_add_epi32(a[j], _mm512_mullo_epi32(v, w));
            }
        }
        /* Shift, then saturate to u8 lane by lane (vpmovusdb saturates
         * unsigned, so clamp negatives to 0 first). */
        for (int j = 0; j < 4; j++) {
            __m512i v = _mm512_max_epi32(_mm512_srai_epi32(a[j], 22),
                                         _mm512_setzero_si512());
            _mm_storeu_si128((__m128i *)(dst + x + 16 * j),
                             _mm512_cvtusepi32_epi8(v));
        }
    }
    dvpp__resize_pil_v_from_scalar(rows, k, taps, dst, x, n);
}

/* --- shared helpers ---------------------------------------------------------- */

#if defined(__clang__)
/* The float kernels below must not be contracted into FMA. */
#pragma clang fp contract(off)
#endif

/* packs/packus work per 128-bit lane: after packing four registers of 16
 * dwords (a, b, c, d), lane i holds dword i of each; this transposes the
 * 4x4 dwords back into element order. */
static inline __m512i lane_fix(void)
{
    return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11,
                             15);
}

/* Four registers of 16 int32 -> 64 u8 in order, saturated as packs_epi32
 * then packus_epi16 (the AVX2 kernels' clamp to [0, 255]). */
static inline __m512i pack64_u8(__m512i a, __m512i b, __m512i c, __m512i d)
{
    return _mm512_permutexvar_epi32(
        lane_fix(),
        _mm512_packus_epi16(_mm512_packs_epi32(a, b), _mm512_packs_epi32(c, d)));
}

/* 16 int32 -> 16 u8, clamped to [0, 255] like pack64_u8. */
static inline __m128i pack16_u8(__m512i v)
{
    return _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, _mm512_setzero_si512()));
}

/* --- nearest --------------------------------------------------------------- */

void dvpp__resize_nearest_avx512(const uint8_t *src, uint8_t *dst,
                                 const int32_t *xofs, uint32_t pixels,
                                 unsigned cn)
{
    const __m512i c3 = _mm512_broadcast_i32x4(_mm_setr_epi8(
        0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, Z, Z, Z, Z));
    const __m512i p3 = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13,
                                         14, 3, 7, 11, 15);
    uint32_t x = 0;

    for (; cn != 2 && x + 16 <= pixels; x += 16) {
        __m512i v = _mm512_i32gather_epi32(
            _mm512_loadu_si512(xofs + x), (const void *)src, 1);
        if (cn == 4) {
            _mm512_storeu_si512(dst + 4 * x, v);
        } else if (cn == 3) {
            v = _mm512_permutexvar_epi32(p3, _mm512_shuffle_epi8(v, c3));
            _mm512_mask_storeu_epi32(dst + 3 * x, 0x0fff, v);
        } else {
            _mm_storeu_si128((__m128i *)(dst + x), _mm512_cvtepi32_epi8(v));
        }
    }
    dvpp__resize_nearest_avx2(src, dst + x * cn, xofs + x, pixels - x, cn);
}

/* --- cv2 horizontal, 3 or 4 channels ----------------------------------------- */

/* 16 bytes from each of four pixels' windows, one per 128-bit lane. */
static inline __m512i load4x16(const uint8_t *src, const int32_t *start,
                               unsigned cn)
{
    __m512i v = _mm512_castsi128_si512(
        _mm_loadu_si128((const __m128i *)(src + (size_t)start[0] * cn)));
    v = _mm512_inserti32x4(
        v, _mm_loadu_si128((const __m128i *)(src + (size_t)start[1] * cn)), 1);
    v = _mm512_inserti32x4(
        v, _mm_loadu_si128((const __m128i *)(src + (size_t)start[2] * cn)), 2);
    return _mm512_inserti32x4(
        v, _mm_loadu_si128((const __m128i *)(src + (size_t)start[3] * cn)), 3);
}

/* Lane i (pixel x + i) holds its cn sums (3 channels: plus a junk dword);
 * store the cn * 4 dwords exactly. */
static inline void store_c34(int32_t *d, __m512i v, unsigned cn)
{
    if (cn == 4) {
        _mm512_storeu_si512(d, v);
    } else {
        const __m512i p3 = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10, 12,
                                             13, 14, 3, 7, 11, 15);
        _mm512_mask_storeu_epi32(d, 0x0fff, _mm512_permutexvar_epi32(p3, v));
    }
}

/* Two taps: pixels p0, p1 of a window -> pairs (p0.c, p1.c), times the
 * column's weight pair (as the SSE4.1 and AVX2 kernels). */
INLINE void cv_h2_c34(const uint8_t *src, int32_t *dst, const resize_tab *t,
                      unsigned cn)
{
    const __m512i sh3 = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, Z, 3, Z, 1, Z, 4, Z, 2, Z, 5, Z, Z, Z, Z, Z));
    const __m512i sh4 = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, Z, 4, Z, 1, Z, 5, Z, 2, Z, 6, Z, 3, Z, 7, Z));
    const __m512i sh = cn == 3 ? sh3 : sh4;
    const __m512i bc = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                         3, 3, 3, 3);
    uint32_t x = 0;

    for (; x + 4 <= t->n; x += 4) {
        __m512i v = load4x16(src, t->start + x, cn);
        __m512i w = _mm512_permutexvar_epi32(
            bc, _mm512_castsi128_si512(
                    _mm_loadu_si128((const __m128i *)(t->w16 + 2 * x))));
        store_c34(dst + x * cn, _mm512_madd_epi16(_mm512_shuffle_epi8(v, sh), w),
                  cn);
    }
    dvpp__resize_cv_h_cols_scalar(src, dst, t, cn, x, t->n);
}

/* Four taps: pairs of taps 0-1 and 2-3, each times its weight pair, then
 * added (as the SSE4.1 kernel). */
INLINE void cv_h4_c34(const uint8_t *src, int32_t *dst, const resize_tab *t,
                      unsigned cn)
{
    const __m512i a3 = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, Z, 3, Z, 1, Z, 4, Z, 2, Z, 5, Z, Z, Z, Z, Z));
    const __m512i b3 = _mm512_broadcast_i32x4(
        _mm_setr_epi8(6, Z, 9, Z, 7, Z, 10, Z, 8, Z, 11, Z, Z, Z, Z, Z));
    const __m512i a4 = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, Z, 4, Z, 1, Z, 5, Z, 2, Z, 6, Z, 3, Z, 7, Z));
    const __m512i b4 = _mm512_broadcast_i32x4(
        _mm_setr_epi8(8, Z, 12, Z, 9, Z, 13, Z, 10, Z, 14, Z, 11, Z, 15, Z));
    const __m512i sa = cn == 3 ? a3 : a4, sb = cn == 3 ? b3 : b4;
    const __m512i ba = _mm512_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4,
                                         6, 6, 6, 6);
    const __m512i bb = _mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5,
                                         7, 7, 7, 7);
    uint32_t x = 0;

    for (; x + 4 <= t->n; x += 4) {
        __m512i v = load4x16(src, t->start + x, cn);
        __m512i w = _mm512_castsi256_si512(
            _mm256_loadu_si256((const __m256i *)(t->w16 + 4 * x)));
        __m512i lo = _mm512_madd_epi16(_mm512_shuffle_epi8(v, sa),
                                       _mm512_permutexvar_epi32(ba, w));
        __m512i hi = _mm512_madd_epi16(_mm512_shuffle_epi8(v, sb),
                                       _mm512_permutexvar_epi32(bb, w));
        store_c34(dst + x * cn, _mm512_add_epi32(lo, hi), cn);
    }
    dvpp__resize_cv_h_cols_scalar(src, dst, t, cn, x, t->n);
}

void dvpp__resize_cv_h_avx512(const uint8_t *src, int32_t *dst,
                              const resize_tab *t, unsigned cn)
{
    if (t->taps == 2 && cn == 3)
        cv_h2_c34(src, dst, t, 3);
    else if (t->taps == 2 && cn == 4)
        cv_h2_c34(src, dst, t, 4);
    else if (t->taps == 4 && cn == 3)
        cv_h4_c34(src, dst, t, 3);
    else if (t->taps == 4 && cn == 4)
        cv_h4_c34(src, dst, t, 4);
    else
        dvpp__resize_cv_h_avx2(src, dst, t, cn);
}

/* --- cv2 vertical ---------------------------------------------------------- */

/* 32 elements as int16, in packs' lane order (as the AVX2 kernel). */
static inline __m512i cv_v2_32(const int32_t *s0, const int32_t *s1,
                               __m512i b0, __m512i b1)
{
    __m512i a = _mm512_packs_epi32(
        _mm512_srai_epi32(_mm512_loadu_si512(s0), 4),
        _mm512_srai_epi32(_mm512_loadu_si512(s0 + 16), 4));
    __m512i b = _mm512_packs_epi32(
        _mm512_srai_epi32(_mm512_loadu_si512(s1), 4),
        _mm512_srai_epi32(_mm512_loadu_si512(s1 + 16), 4));
    __m512i v = _mm512_add_epi16(_mm512_mulhi_epi16(a, b0),
                                 _mm512_mulhi_epi16(b, b1));
    return _mm512_srai_epi16(_mm512_add_epi16(v, _mm512_set1_epi16(2)), 2);
}

void dvpp__resize_cv_v2_avx512(const int32_t *s0, const int32_t *s1,
                               const int16_t *beta, uint8_t *dst, size_t n)
{
    const __m512i b0 = _mm512_set1_epi16(beta[0]);
    const __m512i b1 = _mm512_set1_epi16(beta[1]);
    size_t x = 0;

    for (; x + 64 <= n; x += 64) {
        __m512i lo = cv_v2_32(s0 + x, s1 + x, b0, b1);
        __m512i hi = cv_v2_32(s0 + x + 32, s1 + x + 32, b0, b1);
        /* lane i: bytes of dwords i of s+0, +16, +32, +48 */
        _mm512_storeu_si512(dst + x, _mm512_permutexvar_epi32(
                                         lane_fix(),
                                         _mm512_packus_epi16(lo, hi)));
    }
    dvpp__resize_cv_v2_avx2(s0 + x, s1 + x, beta, dst + x, n - x);
}

/* 16 elements of the float part: r3*f3, then + r2*f2, r1*f1, r0*f0, in
 * that order (separate mul and add), rounded half to even. */
static inline __m512i cv_v4_16(const int32_t *const *r, size_t x,
                               const __m512 f[4])
{
    __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(r[3] + x)),
                             f[3]);
    for (int k = 2; k >= 0; k--)
        t = _mm512_add_ps(
            _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(r[k] + x)),
                          f[k]),
            t);
    return _mm512_cvtps_epi32(t);
}

void dvpp__resize_cv_v4_avx512(const int32_t *const *rows,
                               const int16_t *beta, uint8_t *dst, size_t n,
                               size_t nf)
{
    const float scale = 1.f / (2048 * 2048);
    const __m512 f[4] = {_mm512_set1_ps(beta[0] * scale),
                         _mm512_set1_ps(beta[1] * scale),
                         _mm512_set1_ps(beta[2] * scale),
                         _mm512_set1_ps(beta[3] * scale)};
    const int32_t *r[4];
    size_t x = 0;

    for (; x + 64 <= nf; x += 64)
        _mm512_storeu_si512(dst + x, pack64_u8(cv_v4_16(rows, x, f),
                                               cv_v4_16(rows, x + 16, f),
                                               cv_v4_16(rows, x + 32, f),
                                               cv_v4_16(rows, x + 48, f)));
    for (; x + 16 <= nf; x += 16)
        _mm_storeu_si128((__m128i *)(dst + x),
                         pack16_u8(cv_v4_16(rows, x, f)));
    for (int k = 0; k < 4; k++)
        r[k] = rows[k] + x;
    dvpp__resize_cv_v4_avx2(r, beta, dst + x, n - x, nf - x);
}

/* --- cv2 area and tf vertical -------------------------------------------- */

void dvpp__resize_area_v_avx512(const float *const *rows, const float *beta,
                                uint32_t taps, uint8_t *dst, size_t n)
{
    size_t x = 0;

    for (; x + 64 <= n; x += 64) {
        __m512 s[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(),
                       _mm512_setzero_ps(), _mm512_setzero_ps()};
        for (uint32_t k = 0; k < taps; k++) {
            __m512 b = _mm512_set1_ps(beta[k]);
            for (int j = 0; j < 4; j++)
                s[j] = _mm512_add_ps(
                    s[j], _mm512_mul_ps(b, _mm512_loadu_ps(rows[k] + x + 16 * j)));
        }
        _mm512_storeu_si512(dst + x, pack64_u8(_mm512_cvtps_epi32(s[0]),
                                               _mm512_cvtps_epi32(s[1]),
                                               _mm512_cvtps_epi32(s[2]),
                                               _mm512_cvtps_epi32(s[3])));
    }
    dvpp__resize_area_v_from_scalar(rows, beta, taps, dst, x, n);
}

static inline __m512i tf_lerp16(const float *top, const float *bot, __m512 l)
{
    __m512 t = _mm512_loadu_ps(top);
    __m512 d = _mm512_sub_ps(_mm512_loadu_ps(bot), t);
    return _mm512_cvtps_epi32(_mm512_add_ps(t, _mm512_mul_ps(d, l)));
}

void dvpp__resize_tf_v_avx512(const float *top, const float *bot, float lerp,
                              uint8_t *dst, size_t n)
{
    const __m512 l = _mm512_set1_ps(lerp);
    size_t x = 0;

    for (; x + 64 <= n; x += 64)
        _mm512_storeu_si512(dst + x,
                            pack64_u8(tf_lerp16(top + x, bot + x, l),
                                      tf_lerp16(top + x + 16, bot + x + 16, l),
                                      tf_lerp16(top + x + 32, bot + x + 32, l),
                                      tf_lerp16(top + x + 48, bot + x + 48, l)));
    for (; x + 16 <= n; x += 16)
        _mm_storeu_si128((__m128i *)(dst + x),
                         pack16_u8(tf_lerp16(top + x, bot + x, l)));
    dvpp__resize_tf_v_avx2(top + x, bot + x, lerp, dst + x, n - x);
}
