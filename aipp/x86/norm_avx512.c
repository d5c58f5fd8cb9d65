/* AVX-512 dvpp_norm kernels; built with -mavx512f/bw/dq/vl, reached via
 * dispatch. Tails (w not a multiple of 32) use the scalar kernel.
 *
 * The tables are looked up in registers, no gathers: vpgatherdd versions
 * (16 pixels a gather, indices in output order) measured slower than the
 * scalar loops on Zen 4 (f32 NCHW 2.0 GB/s, f16 NHWC 3.1 against 6.8, f32
 * NC1HWC0 23.6 against SSE4.1's 43), so they are gone. A 16-bit table is 8
 * zmm; vpermi2w picks within 64-entry pairs, chained with merge masks by
 * bits 7:6 of the index (4 permutes per 32 lookups). f32 tables are split
 * once per call into their low and high 16-bit halves and looked up the
 * same way (two lookups sharing the masks, one unpack): half the permutes
 * of a 16-zmm vpermt2ps tree.
 *   f32 NCHW      plane by plane, tables held across the rows
 *   f16 NCHW      the same, 16-bit
 *   f32 NHWC      planes of a few rows on the stack, interleaved by
 *                 vpermt2ps + masked vpermps
 *   f16 NC1HWC0   planes of a row, then one 64-bit group (4 lanes) per
 *                 pixel placed in its zeroed 32-byte C0 block, two pixels
 *                 per store
 * Other cases keep the lower levels' kernels (scalar lookups). */
#include <immintrin.h>
#include <string.h>

#include "../norm_int.h"

/* 16 pixels of @sc bytes -> 16 dwords, byte k of dword i = byte k of pixel i. */
static inline __attribute__((always_inline)) __m512i px16(const uint8_t *s, unsigned sc)
{
    switch (sc) {
    case 1: return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)s));
    case 2:
        return _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)s));
    case 3: {
        const __m512i perm = _mm512_setr_epi32(0, 1, 2, 2, 3, 4, 5, 5, 6, 7, 8,
                                               8, 9, 10, 11, 11);
        const __m512i shuf = _mm512_broadcast_i32x4(_mm_setr_epi8(
            0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1));
        __m512i b = _mm512_maskz_loadu_epi8(0xFFFFFFFFFFFFull, s);
        return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(perm, b), shuf);
    }
    default: return _mm512_loadu_si512(s);
    }
}

/* A 256-entry 16-bit table: 8 zmm of 32 words. vpermi2w picks within a
 * 64-entry pair by the low 6 bits; the four pairs are applied in a chain
 * with merge masks (lanes whose bits 7:6 select that pair), so lanes not
 * yet looked up keep their index for the next pair: 4 permutes, no blends. */
typedef struct lut16 {
    __m512i t0, t1, t2, t3, t4, t5, t6, t7;
} lut16;

typedef struct sel4 {
    __mmask32 k0, k1, k2, k3;
} sel4;

static inline __attribute__((always_inline)) sel4 sel4_make(__m512i idx)
{
    __m512i q = _mm512_srli_epi16(idx, 6);
    sel4 k = {_mm512_cmpeq_epi16_mask(q, _mm512_setzero_si512()),
              _mm512_cmpeq_epi16_mask(q, _mm512_set1_epi16(1)),
              _mm512_cmpeq_epi16_mask(q, _mm512_set1_epi16(2)),
              _mm512_cmpeq_epi16_mask(q, _mm512_set1_epi16(3))};
    return k;
}

static inline __attribute__((always_inline)) lut16 lut16_load(const uint16_t *l)
{
    lut16 T = {_mm512_loadu_si512(l), _mm512_loadu_si512(l + 32),
               _mm512_loadu_si512(l + 64), _mm512_loadu_si512(l + 96),
               _mm512_loadu_si512(l + 128), _mm512_loadu_si512(l + 160),
               _mm512_loadu_si512(l + 192), _mm512_loadu_si512(l + 224)};
    return T;
}

static inline __attribute__((always_inline)) __m512i
lut16_get(const lut16 *T, __m512i idx, const sel4 *k)
{
    __m512i v = _mm512_mask2_permutex2var_epi16(T->t0, idx, k->k0, T->t1);
    v = _mm512_mask2_permutex2var_epi16(T->t2, v, k->k1, T->t3);
    v = _mm512_mask2_permutex2var_epi16(T->t4, v, k->k2, T->t5);
    return _mm512_mask2_permutex2var_epi16(T->t6, v, k->k3, T->t7);
}

/* The bytes of channel source byte @b of 16 pixels, as dwords. */
static inline __attribute__((always_inline)) __m512i
chan16(const uint8_t *s, unsigned sc, __m128i sh)
{
    return _mm512_and_si512(_mm512_srl_epi32(px16(s, sc), sh),
                            _mm512_set1_epi32(0xff));
}

/* 32 word indices of channel byte @b of pixels 0..31, ordered so that
 * qword 2L holds pixels 4L..4L+3 and qword 2L+1 pixels 16+4L..16+4L+3:
 * unpacklo/hi_epi16 of two lookups then give floats 0..15 and 16..31 in
 * order. For 3 and 4 bytes per pixel, each 128-bit lane gets its 4 + 4
 * pixels' bytes by one vpermd (3 bytes) and two pshufb. */
typedef struct idxsel {
    __m512i pa, pb;
    __m128i sh;
} idxsel;

static inline __attribute__((always_inline)) idxsel idxsel_make(unsigned sc,
                                                               unsigned b)
{
    /* pa: bytes sc*i + b at even bytes 0..6, pb: the same at 8..14. */
    const __m512i s3 = _mm512_broadcast_i32x4(_mm_setr_epi8(
        0, -1, 3, -1, 6, -1, 9, -1, 0, -1, 3, -1, 6, -1, 9, -1));
    const __m512i s4 = _mm512_broadcast_i32x4(_mm_setr_epi8(
        0, -1, 4, -1, 8, -1, 12, -1, 0, -1, 4, -1, 8, -1, 12, -1));
    __m512i base = sc == 3 ? s3 : s4;
    base = _mm512_mask_add_epi8(base, 0x5555555555555555ull, base,
                                _mm512_set1_epi8((char)b));
    idxsel r;
    r.pa = _mm512_mask_mov_epi8(_mm512_set1_epi8(-1), 0x00FF00FF00FF00FFull, base);
    r.pb = _mm512_mask_mov_epi8(_mm512_set1_epi8(-1), 0xFF00FF00FF00FF00ull, base);
    r.sh = _mm_cvtsi32_si128((int)(8 * b));
    return r;
}

static inline __attribute__((always_inline)) __m512i
idx32(const uint8_t *s, unsigned sc, const idxsel *q)
{
    if (sc == 3 || sc == 4) {
        __m512i a, b;
        if (sc == 3) {
            const __m512i perm = _mm512_setr_epi32(0, 1, 2, 2, 3, 4, 5, 5, 6, 7,
                                                   8, 8, 9, 10, 11, 11);
            a = _mm512_permutexvar_epi32(
                perm, _mm512_maskz_loadu_epi8(0xFFFFFFFFFFFFull, s));
            b = _mm512_permutexvar_epi32(
                perm, _mm512_maskz_loadu_epi8(0xFFFFFFFFFFFFull, s + 48));
        } else {
            a = _mm512_loadu_si512(s);
            b = _mm512_loadu_si512(s + 64);
        }
        return _mm512_or_si512(_mm512_shuffle_epi8(a, q->pa),
                               _mm512_shuffle_epi8(b, q->pb));
    }
    if (sc == 1)
        return _mm512_permutexvar_epi64(
            _mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7),
            _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)s)));
    __m256i lo = _mm512_cvtepi32_epi16(chan16(s, sc, q->sh));
    __m256i hi = _mm512_cvtepi32_epi16(chan16(s + 16 * sc, sc, q->sh));
    return _mm512_permutex2var_epi64(_mm512_castsi256_si512(lo),
                                     _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11),
                                     _mm512_castsi256_si512(hi));
}

/* Low and high 16-bit halves of a 256-entry f32 table. */
static void split_f32(const float *lut, uint16_t *lo, uint16_t *hi)
{
    for (int i = 0; i < 256; i += 16) {
        __m512i v = _mm512_loadu_si512(lut + i);
        _mm256_storeu_si256((__m256i *)(lo + i), _mm512_cvtepi32_epi16(v));
        _mm256_storeu_si256((__m256i *)(hi + i),
                            _mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16)));
    }
}

/* One channel (source byte @b) of @n pixels (a multiple of 32) of each of
 * @h rows into f32 planes (@ors elements apart). */
static inline __attribute__((always_inline)) void
plane_f32_sc(const uint16_t *lo, const uint16_t *hi, const uint8_t *src,
             size_t stride, unsigned sc, unsigned b, uint32_t n, uint32_t h,
             float *out, ptrdiff_t ors)
{
    const lut16 L = lut16_load(lo), H = lut16_load(hi);
    const idxsel q = idxsel_make(sc, b);
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        float *o = out + (ptrdiff_t)y * ors;
        for (uint32_t x = 0; x < n; x += 32) {
            __m512i idx = idx32(s + (size_t)x * sc, sc, &q);
            const sel4 k = sel4_make(idx);
            __m512i vl = lut16_get(&L, idx, &k);
            __m512i vh = lut16_get(&H, idx, &k);
            _mm512_storeu_si512(o + x, _mm512_unpacklo_epi16(vl, vh));
            _mm512_storeu_si512(o + x + 16, _mm512_unpackhi_epi16(vl, vh));
        }
    }
}

static void plane_f32(const uint16_t *lo, const uint16_t *hi,
                      const uint8_t *src, size_t stride, unsigned sc,
                      unsigned b, uint32_t n, uint32_t h, float *out,
                      ptrdiff_t ors)
{
    switch (sc) {
    case 1: plane_f32_sc(lo, hi, src, stride, 1, b, n, h, out, ors); break;
    case 2: plane_f32_sc(lo, hi, src, stride, 2, b, n, h, out, ors); break;
    case 3: plane_f32_sc(lo, hi, src, stride, 3, b, n, h, out, ors); break;
    default: plane_f32_sc(lo, hi, src, stride, 4, b, n, h, out, ors); break;
    }
}

static inline __attribute__((always_inline)) void
plane_u16_sc(const uint16_t *lut, const uint8_t *src, unsigned sc, unsigned b,
             uint32_t n, uint16_t *out)
{
    const lut16 T = lut16_load(lut);
    const idxsel q = idxsel_make(sc, b);
    for (uint32_t x = 0; x < n; x += 32) {
        __m512i idx = idx32(src + (size_t)x * sc, sc, &q);
        const sel4 k = sel4_make(idx);
        _mm512_storeu_si512(out + x, lut16_get(&T, idx, &k));
    }
}

/* One channel of @n pixels (a multiple of 32) into halves, in idx32's
 * order within each 32 pixels. */
static void plane_u16(const uint16_t *lut, const uint8_t *src, unsigned sc,
                      unsigned b, uint32_t n, uint16_t *out)
{
    switch (sc) {
    case 1: plane_u16_sc(lut, src, 1, b, n, out); break;
    case 2: plane_u16_sc(lut, src, 2, b, n, out); break;
    case 3: plane_u16_sc(lut, src, 3, b, n, out); break;
    default: plane_u16_sc(lut, src, 4, b, n, out); break;
    }
}

#define CHUNK 256

/* f32 NCHW: plane by plane over all rows, straight into the tensor. */
static void nchw_f32(const dvpp_norm_plan *p, const uint8_t *src,
                     size_t stride, uint32_t w, uint32_t h, void *dst,
                     ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    uint16_t lo[256] __attribute__((aligned(64)));
    uint16_t hi[256] __attribute__((aligned(64)));
    const unsigned sc = p->src_channels;
    uint32_t n = w & ~31u;

    (void)ps;
    if (n) {
        for (unsigned c = 0; c < p->channels; c++) {
            split_f32(p->lut.f32[c], lo, hi);
            plane_f32(lo, hi, src, stride, sc, p->src_index[c], n, h,
                      (float *)dst + (ptrdiff_t)c * cs, rs);
        }
    }
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NCHW, DVPP_DTYPE_F32)(
            p, src + (size_t)n * sc, stride, w - n, h, (float *)dst + n, rs,
            cs, 1);
}

/* Interleave @m (a multiple of 16) floats of each of C planes into NHWC. */
static inline __attribute__((always_inline)) void
interleave_f32(const float *t0, const float *t1, const float *t2,
               const float *t3, unsigned C, uint32_t m, float *o)
{
    if (C == 3) {
        /* Lanes of channels 0 and 1 by vpermt2ps, then channel 2's merged
         * in by a masked vpermps. */
        const __m512i i0 = _mm512_setr_epi32(0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
        const __m512i i1 = _mm512_setr_epi32(21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
        const __m512i i2 = _mm512_setr_epi32(0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
        const __m512i b0 = _mm512_setr_epi32(0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0);
        const __m512i b1 = _mm512_setr_epi32(0, 5, 0, 0, 6, 0, 0, 7, 0, 0, 8, 0, 0, 9, 0, 0);
        const __m512i b2 = _mm512_setr_epi32(10, 0, 0, 11, 0, 0, 12, 0, 0, 13, 0, 0, 14, 0, 0, 15);
        for (uint32_t x = 0; x < m; x += 16) {
            __m512 v0 = _mm512_load_ps(t0 + x), v1 = _mm512_load_ps(t1 + x);
            __m512 v2 = _mm512_load_ps(t2 + x);
            float *q = o + (size_t)x * 3;
            _mm512_storeu_ps(q, _mm512_mask_permutexvar_ps(
                                    _mm512_permutex2var_ps(v0, i0, v1), 0x4924, b0, v2));
            _mm512_storeu_ps(q + 16, _mm512_mask_permutexvar_ps(
                                         _mm512_permutex2var_ps(v0, i1, v1), 0x2492, b1, v2));
            _mm512_storeu_ps(q + 32, _mm512_mask_permutexvar_ps(
                                         _mm512_permutex2var_ps(v0, i2, v1), 0x9249, b2, v2));
        }
        return;
    }
    /* Output vector k, lane i: pixel (16k+i)/C, channel (16k+i)%C; the
     * channel pairs (0,1) and (2,3) are read with one vpermt2ps each. */
    __m512i idx[DVPP_NORM_MAX_CH];
    __mmask16 upper[DVPP_NORM_MAX_CH];
    for (unsigned k = 0; k < C; k++) {
        int32_t v[16];
        unsigned bits = 0;
        for (unsigned i = 0; i < 16; i++) {
            unsigned px = (16 * k + i) / C, ch = (16 * k + i) % C;
            v[i] = (int32_t)(px + 16 * (ch & 1));
            bits |= (unsigned)(ch >= 2) << i;
        }
        idx[k] = _mm512_loadu_si512(v);
        upper[k] = (__mmask16)bits;
    }
    for (uint32_t x = 0; x < m; x += 16) {
        __m512 v0 = _mm512_load_ps(t0 + x), v1 = _mm512_load_ps(t1 + x);
        __m512 v2 = _mm512_load_ps(t2 + x), v3 = _mm512_load_ps(t3 + x);
        float *q = o + (size_t)x * C;
        for (unsigned k = 0; k < C; k++) {
            __m512 a = _mm512_permutex2var_ps(v0, idx[k], v1);
            __m512 b = _mm512_permutex2var_ps(v2, idx[k], v3);
            _mm512_storeu_ps(q + 16 * k, _mm512_mask_blend_ps(upper[k], a, b));
        }
    }
}

#define TMPN 1024

/* f16 NCHW: plane by plane; idx32's qword order undone by one vpermq. */
static void nchw_f16(const dvpp_norm_plan *p, const uint8_t *src,
                     size_t stride, uint32_t w, uint32_t h, void *dst,
                     ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const unsigned sc = p->src_channels;
    const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    uint32_t n = w & ~31u;

    (void)ps;
    for (unsigned c = 0; c < p->channels && n; c++) {
        const lut16 T = lut16_load(p->lut.f16[c]);
        const idxsel q = idxsel_make(sc, p->src_index[c]);
        for (uint32_t y = 0; y < h; y++) {
            const uint8_t *s = src + (size_t)y * stride;
            uint16_t *o = (uint16_t *)dst + (ptrdiff_t)c * cs + (ptrdiff_t)y * rs;
            for (uint32_t x = 0; x < n; x += 32) {
                __m512i idx = idx32(s + (size_t)x * sc, sc, &q);
                const sel4 k = sel4_make(idx);
                _mm512_storeu_si512(o + x, _mm512_permutexvar_epi64(
                                               order, lut16_get(&T, idx, &k)));
            }
        }
    }
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NCHW, DVPP_DTYPE_F16)(
            p, src + (size_t)n * sc, stride, w - n, h, (uint16_t *)dst + n, rs,
            cs, 1);
}

/* f32 NHWC: planes of a few rows (or of a chunk of a long row) on the
 * stack, tables held across those rows, then interleaved. */
static void nhwc_f32(const dvpp_norm_plan *p, const uint8_t *src,
                     size_t stride, uint32_t w, uint32_t h, void *dst,
                     ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    float tmp[DVPP_NORM_MAX_CH][TMPN + 48] __attribute__((aligned(64))); /* + 48: planes not 4 KiB apart */
    uint16_t lo[DVPP_NORM_MAX_CH][256] __attribute__((aligned(64)));
    uint16_t hi[DVPP_NORM_MAX_CH][256] __attribute__((aligned(64)));
    const unsigned C = p->channels, sc = p->src_channels;
    uint32_t n = w & ~31u;

    (void)cs;
    (void)ps;
    if (n) {
        for (unsigned c = 0; c < C; c++)
            split_f32(p->lut.f32[c], lo[c], hi[c]);
        for (unsigned c = C; c < DVPP_NORM_MAX_CH; c++)
            memset(tmp[c], 0, sizeof(tmp[c]));
    }
    if (n && n <= TMPN) {
        uint32_t batch = TMPN / n;
        for (uint32_t y = 0; y < h; y += batch) {
            uint32_t rb = h - y < batch ? h - y : batch;
            for (unsigned c = 0; c < C; c++)
                plane_f32(lo[c], hi[c], src + (size_t)y * stride, stride, sc,
                          p->src_index[c], n, rb, tmp[c], n);
            for (uint32_t r = 0; r < rb; r++)
                interleave_f32(tmp[0] + r * n, tmp[1] + r * n, tmp[2] + r * n,
                               tmp[3] + r * n, C, n,
                               (float *)dst + (ptrdiff_t)(y + r) * rs);
        }
    } else if (n) {
        for (uint32_t y = 0; y < h; y++) {
            const uint8_t *row = src + (size_t)y * stride;
            float *o = (float *)dst + (ptrdiff_t)y * rs;
            for (uint32_t x0 = 0; x0 < n; x0 += TMPN) {
                uint32_t m = n - x0 < TMPN ? n - x0 : TMPN;
                for (unsigned c = 0; c < C; c++)
                    plane_f32(lo[c], hi[c], row + (size_t)x0 * sc, 0, sc,
                              p->src_index[c], m, 1, tmp[c], 0);
                interleave_f32(tmp[0], tmp[1], tmp[2], tmp[3], C, m,
                               o + (size_t)x0 * C);
            }
        }
    }
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NHWC, DVPP_DTYPE_F32)(
            p, src + (size_t)n * sc, stride, w - n, h,
            (float *)dst + (size_t)n * C, rs, 1, C);
}

/* f16 NC1HWC0: planes of a chunk, then one 64-bit group (4 lanes) per
 * pixel placed in its zeroed 32-byte C0 block, two pixels per store. */
static void nc1_f16(const dvpp_norm_plan *p, const uint8_t *src,
                    size_t stride, uint32_t w, uint32_t h, void *dst,
                    ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    uint16_t tmp[DVPP_NORM_MAX_CH][CHUNK] __attribute__((aligned(64)));
    const unsigned C = p->channels, sc = p->src_channels;
    uint32_t n = w & ~31u;

    (void)cs;
    (void)ps;
    for (unsigned c = C; c < DVPP_NORM_MAX_CH; c++)
        memset(tmp[c], 0, sizeof(tmp[c]));
    for (uint32_t y = 0; y < h && n; y++) {
        const uint8_t *row = src + (size_t)y * stride;
        uint16_t *o = (uint16_t *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x0 = 0; x0 < n; x0 += CHUNK) {
            uint32_t m = n - x0 < CHUNK ? n - x0 : CHUNK;
            for (unsigned c = 0; c < C; c++)
                plane_u16(p->lut.f16[c], row + (size_t)x0 * sc, sc,
                          p->src_index[c], m, tmp[c]);
            for (uint32_t x = 0; x < m; x += 32) {
                __m512i v0 = _mm512_load_si512(tmp[0] + x);
                __m512i v1 = _mm512_load_si512(tmp[1] + x);
                __m512i v2 = _mm512_load_si512(tmp[2] + x);
                __m512i v3 = _mm512_load_si512(tmp[3] + x);
                __m512i l01 = _mm512_unpacklo_epi16(v0, v1);
                __m512i h01 = _mm512_unpackhi_epi16(v0, v1);
                __m512i l23 = _mm512_unpacklo_epi16(v2, v3);
                __m512i h23 = _mm512_unpackhi_epi16(v2, v3);
                /* Planes in idx32's order: q0 (q1, q2, q3), 128-bit lane L
                 * holds pixels 4L (4L+2, 16+4L, 18+4L) and the next one;
                 * each store takes one such pair into two C0 blocks. */
                __m512i q0 = _mm512_unpacklo_epi32(l01, l23);
                __m512i q1 = _mm512_unpackhi_epi32(l01, l23);
                __m512i q2 = _mm512_unpacklo_epi32(h01, h23);
                __m512i q3 = _mm512_unpackhi_epi32(h01, h23);
                uint16_t *out = o + (size_t)(x0 + x) * 16;
#define NC1_PAIR(qv, L, px)                                                    \
    _mm512_storeu_si512(out + (px) * 16,                                       \
                        _mm512_maskz_permutexvar_epi64(                        \
                            0x11, _mm512_setr_epi64(2 * (L), 0, 0, 0,          \
                                                    2 * (L) + 1, 0, 0, 0),     \
                            qv))
                NC1_PAIR(q0, 0, 0), NC1_PAIR(q1, 0, 2);
                NC1_PAIR(q0, 1, 4), NC1_PAIR(q1, 1, 6);
                NC1_PAIR(q0, 2, 8), NC1_PAIR(q1, 2, 10);
                NC1_PAIR(q0, 3, 12), NC1_PAIR(q1, 3, 14);
                NC1_PAIR(q2, 0, 16), NC1_PAIR(q3, 0, 18);
                NC1_PAIR(q2, 1, 20), NC1_PAIR(q3, 1, 22);
                NC1_PAIR(q2, 2, 24), NC1_PAIR(q3, 2, 26);
                NC1_PAIR(q2, 3, 28), NC1_PAIR(q3, 3, 30);
#undef NC1_PAIR
            }
        }
    }
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NC1HWC0, DVPP_DTYPE_F16)(
            p, src + (size_t)n * sc, stride, w - n, h,
            (uint16_t *)dst + (size_t)n * 16, rs, 1, 16);
}

void dvpp__norm_kern_avx512(dvpp_norm_kern *k)
{
    k->row[DVPP_LAYOUT_NCHW][DVPP_DTYPE_F32] = nchw_f32;
    k->row[DVPP_LAYOUT_NCHW][DVPP_DTYPE_F16] = nchw_f16;
    k->row[DVPP_LAYOUT_NHWC][DVPP_DTYPE_F32] = nhwc_f32;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_F16] = nc1_f16;
}
