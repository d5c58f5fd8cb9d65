/* AVX-512 dvpp_norm row kernels; built with -mavx512f/bw/dq/vl, reached via
 * dispatch. Blocks of 16 pixels: the pixels' bytes are widened to one dword
 * per pixel, and every output vector is one gather from the plan's tables
 * with indices (dword[perm] >> 8*src_index & 0xff) + 256*channel, laid out
 * in the output's own order (NCHW planes, NHWC interleaved, NC1HWC0 four
 * lanes per pixel), so the stores are plain. Tails use the scalar kernel. */
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

typedef struct vdesc {
    __m512i perm, shift, off;
    __mmask16 m;
} vdesc;

/* Descriptors of the vectors of one 16-pixel block; returns their count. */
static unsigned make_desc(const dvpp_norm_plan *p, dvpp_layout l, vdesc *d)
{
    const unsigned C = p->channels;
    unsigned nv = l == DVPP_LAYOUT_NC1HWC0 ? 4 : C;
    for (unsigned k = 0; k < nv; k++) {
        int32_t perm[16], shift[16], off[16];
        unsigned m = 0;
        for (unsigned i = 0; i < 16; i++) {
            unsigned px, ch;
            if (l == DVPP_LAYOUT_NCHW)
                px = i, ch = k;
            else if (l == DVPP_LAYOUT_NHWC)
                px = (16 * k + i) / C, ch = (16 * k + i) % C;
            else
                px = 4 * k + i / 4, ch = i % 4;
            bool live = ch < C;
            perm[i] = (int32_t)px;
            shift[i] = live ? 8 * p->src_index[ch] : 0;
            off[i] = live ? (int32_t)(256 * ch) : 0;
            m |= (unsigned)live << i;
        }
        d[k].perm = _mm512_loadu_si512(perm);
        d[k].shift = _mm512_loadu_si512(shift);
        d[k].off = _mm512_loadu_si512(off);
        d[k].m = (__mmask16)m;
    }
    return nv;
}

static inline __m512i lookup_idx(__m512i px, const vdesc *d)
{
    __m512i v = _mm512_permutexvar_epi32(d->perm, px);
    v = _mm512_and_si512(_mm512_srlv_epi32(v, d->shift), _mm512_set1_epi32(0xff));
    return _mm512_add_epi32(v, d->off);
}

static inline __attribute__((always_inline)) void
row_body(const dvpp_norm_plan *p, const uint8_t *src, uint32_t w, void *dst,
         ptrdiff_t cs, dvpp_layout l, unsigned es)
{
    vdesc d[4];
    const unsigned C = p->channels, sc = p->src_channels;
    const unsigned nv = make_desc(p, l, d);
    const void *lut = &p->lut;
    uint8_t *o = dst;
    uint32_t x = 0;

    /* The 16-pixel load reads sc*16 bytes, 64 for sc 4: stay inside. */
    for (; x + 16 <= w; x += 16) {
        __m512i px = px16(src + (size_t)x * sc, sc);
        for (unsigned k = 0; k < nv; k++) {
            __m512i idx = lookup_idx(px, &d[k]);
            __m512i g;
            if (es == 4)
                g = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), d[k].m,
                                                idx, lut, 4);
            else if (es == 2)
                g = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), d[k].m,
                                                idx, lut, 2);
            else
                g = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), d[k].m,
                                                idx, lut, 1);
            if (l != DVPP_LAYOUT_NC1HWC0) {
                uint8_t *q = l == DVPP_LAYOUT_NCHW
                                 ? o + ((ptrdiff_t)k * cs + x) * (ptrdiff_t)es
                                 : o + ((size_t)x * C + 16 * k) * es;
                if (es == 4)
                    _mm512_storeu_si512(q, g);
                else if (es == 2)
                    _mm256_storeu_si256((__m256i *)q, _mm512_cvtepi32_epi16(g));
                else
                    _mm_storeu_si128((__m128i *)q, _mm512_cvtepi32_epi8(g));
                continue;
            }
            /* NC1HWC0: vector k holds pixels 4k..4k+3, four lanes each. */
            uint8_t *q = o + (size_t)(x + 4 * k) * 16 * es * (es == 1 ? 2 : 1);
            if (es == 4) {
                _mm512_storeu_si512(q, _mm512_maskz_shuffle_i32x4(0x000F, g, g, 0));
                _mm512_storeu_si512(q + 64, _mm512_maskz_shuffle_i32x4(0x000F, g, g, 1));
                _mm512_storeu_si512(q + 128, _mm512_maskz_shuffle_i32x4(0x000F, g, g, 2));
                _mm512_storeu_si512(q + 192, _mm512_maskz_shuffle_i32x4(0x000F, g, g, 3));
            } else if (es == 2) {
                __m512i h = _mm512_zextsi256_si512(_mm512_cvtepi32_epi16(g));
                _mm512_storeu_si512(q, _mm512_maskz_permutexvar_epi64(
                    0x11, _mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1), h));
                _mm512_storeu_si512(q + 64, _mm512_maskz_permutexvar_epi64(
                    0x11, _mm512_setr_epi64(2, 2, 2, 2, 3, 3, 3, 3), h));
            } else {
                __m512i b = _mm512_zextsi128_si512(_mm512_cvtepi32_epi8(g));
                _mm512_storeu_si512(q, _mm512_maskz_permutexvar_epi32(
                    0x0101, _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1,
                                              1, 1, 1, 1, 1), b));
                _mm512_storeu_si512(q + 64, _mm512_maskz_permutexvar_epi32(
                    0x0101, _mm512_setr_epi32(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3,
                                              3, 3, 3, 3, 3), b));
            }
        }
    }
    if (x < w) {
        size_t po = l == DVPP_LAYOUT_NCHW ? x
                    : l == DVPP_LAYOUT_NHWC ? (size_t)x * C
                                            : (size_t)x * (es == 1 ? 32 : 16);
        dvpp__norm_scalar_row(l, es == 4 ? DVPP_DTYPE_F32
                                 : es == 2 ? DVPP_DTYPE_F16 : DVPP_DTYPE_U8)(
            p, src + (size_t)x * sc, w - x, o + po * es, cs,
            l == DVPP_LAYOUT_NCHW ? 1
            : l == DVPP_LAYOUT_NHWC ? (ptrdiff_t)C
                                    : (es == 1 ? 32 : 16));
    }
}

/* ---- in-register table lookups (no gathers: slow on some cores) ------- */

/* f32: the 256-entry table as 16 zmm; vpermt2ps picks within 32-entry
 * pairs by the low 5 bits, then bits 5, 6, 7 select among the pairs. */
#define LUT_F32_DECL(T, lut)                                                   \
    const __m512 T##0 = _mm512_loadu_ps((lut) + 0),                            \
                 T##1 = _mm512_loadu_ps((lut) + 16),                           \
                 T##2 = _mm512_loadu_ps((lut) + 32),                           \
                 T##3 = _mm512_loadu_ps((lut) + 48),                           \
                 T##4 = _mm512_loadu_ps((lut) + 64),                           \
                 T##5 = _mm512_loadu_ps((lut) + 80),                           \
                 T##6 = _mm512_loadu_ps((lut) + 96),                           \
                 T##7 = _mm512_loadu_ps((lut) + 112),                          \
                 T##8 = _mm512_loadu_ps((lut) + 128),                          \
                 T##9 = _mm512_loadu_ps((lut) + 144),                          \
                 T##10 = _mm512_loadu_ps((lut) + 160),                         \
                 T##11 = _mm512_loadu_ps((lut) + 176),                         \
                 T##12 = _mm512_loadu_ps((lut) + 192),                         \
                 T##13 = _mm512_loadu_ps((lut) + 208),                         \
                 T##14 = _mm512_loadu_ps((lut) + 224),                         \
                 T##15 = _mm512_loadu_ps((lut) + 240)

#define LUT_F32(T, idx)                                                        \
    lut_f32_sel(idx, _mm512_permutex2var_ps(T##0, idx, T##1),                  \
                _mm512_permutex2var_ps(T##2, idx, T##3),                       \
                _mm512_permutex2var_ps(T##4, idx, T##5),                       \
                _mm512_permutex2var_ps(T##6, idx, T##7),                       \
                _mm512_permutex2var_ps(T##8, idx, T##9),                       \
                _mm512_permutex2var_ps(T##10, idx, T##11),                     \
                _mm512_permutex2var_ps(T##12, idx, T##13),                     \
                _mm512_permutex2var_ps(T##14, idx, T##15))

static inline __attribute__((always_inline)) __m512
lut_f32_sel(__m512i idx, __m512 r0, __m512 r1, __m512 r2, __m512 r3, __m512 r4,
            __m512 r5, __m512 r6, __m512 r7)
{
    __mmask16 m5 = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(32));
    __mmask16 m6 = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(64));
    __mmask16 m7 = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(128));
    __m512 a0 = _mm512_mask_blend_ps(m5, r0, r1);
    __m512 a1 = _mm512_mask_blend_ps(m5, r2, r3);
    __m512 a2 = _mm512_mask_blend_ps(m5, r4, r5);
    __m512 a3 = _mm512_mask_blend_ps(m5, r6, r7);
    __m512 b0 = _mm512_mask_blend_ps(m6, a0, a1);
    __m512 b1 = _mm512_mask_blend_ps(m6, a2, a3);
    return _mm512_mask_blend_ps(m7, b0, b1);
}

/* f16 (or any 16-bit table): 8 zmm of 32 words; vpermt2w picks within
 * 64-entry pairs, bits 6 and 7 select. @idx holds 32 word indices. */
static inline __attribute__((always_inline)) __m512i
lut_u16(__m512i T0, __m512i T1, __m512i T2, __m512i T3, __m512i T4, __m512i T5,
        __m512i T6, __m512i T7, __m512i idx)
{
    __m512i r0 = _mm512_permutex2var_epi16(T0, idx, T1);
    __m512i r1 = _mm512_permutex2var_epi16(T2, idx, T3);
    __m512i r2 = _mm512_permutex2var_epi16(T4, idx, T5);
    __m512i r3 = _mm512_permutex2var_epi16(T6, idx, T7);
    __mmask32 m6 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(64));
    __mmask32 m7 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(128));
    __m512i a0 = _mm512_mask_blend_epi16(m6, r0, r1);
    __m512i a1 = _mm512_mask_blend_epi16(m6, r2, r3);
    return _mm512_mask_blend_epi16(m7, a0, a1);
}

/* The bytes of channel source byte @b of 16 pixels, as dwords. */
static inline __attribute__((always_inline)) __m512i
chan16(const uint8_t *s, unsigned sc, __m128i sh)
{
    return _mm512_and_si512(_mm512_srl_epi32(px16(s, sc), sh),
                            _mm512_set1_epi32(0xff));
}

static inline __attribute__((always_inline)) void
plane_f32_sc(const float *lut, const uint8_t *src, unsigned sc, unsigned b,
             uint32_t n, float *out)
{
    LUT_F32_DECL(T, lut);
    const __m128i sh = _mm_cvtsi32_si128((int)(8 * b));
    for (uint32_t x = 0; x < n; x += 16) {
        __m512i idx = chan16(src + (size_t)x * sc, sc, sh);
        _mm512_storeu_ps(out + x, LUT_F32(T, idx));
    }
}

/* One channel of @n pixels (n a multiple of 16) into a plane of floats. */
static void plane_f32(const float *lut, const uint8_t *src, unsigned sc,
                      unsigned b, uint32_t n, float *out)
{
    switch (sc) {
    case 1: plane_f32_sc(lut, src, 1, b, n, out); break;
    case 2: plane_f32_sc(lut, src, 2, b, n, out); break;
    case 3: plane_f32_sc(lut, src, 3, b, n, out); break;
    default: plane_f32_sc(lut, src, 4, b, n, out); break;
    }
}

static inline __attribute__((always_inline)) void
plane_u16_sc(const uint16_t *lut, const uint8_t *src, unsigned sc, unsigned b,
             uint32_t n, uint16_t *out)
{
    const __m512i T0 = _mm512_loadu_si512(lut), T1 = _mm512_loadu_si512(lut + 32),
                  T2 = _mm512_loadu_si512(lut + 64), T3 = _mm512_loadu_si512(lut + 96),
                  T4 = _mm512_loadu_si512(lut + 128), T5 = _mm512_loadu_si512(lut + 160),
                  T6 = _mm512_loadu_si512(lut + 192), T7 = _mm512_loadu_si512(lut + 224);
    const __m128i sh = _mm_cvtsi32_si128((int)(8 * b));
    for (uint32_t x = 0; x < n; x += 32) {
        const uint8_t *s = src + (size_t)x * sc;
        __m256i lo = _mm512_cvtepi32_epi16(chan16(s, sc, sh));
        __m256i hi = _mm512_cvtepi32_epi16(chan16(s + 16 * sc, sc, sh));
        __m512i idx = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
        _mm512_storeu_si512(out + x, lut_u16(T0, T1, T2, T3, T4, T5, T6, T7, idx));
    }
}

/* One channel of @n pixels (n a multiple of 32) into a plane of halves. */
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

/* f32 NCHW: plane by plane, straight into the tensor. */
static void nchw_f32(const dvpp_norm_plan *p, const uint8_t *src, uint32_t w,
                     void *dst, ptrdiff_t cs, ptrdiff_t ps)
{
    uint32_t n = w & ~15u;
    (void)ps;
    for (unsigned c = 0; c < p->channels; c++)
        plane_f32(p->lut.f32[c], src, p->src_channels, p->src_index[c], n,
                  (float *)dst + (ptrdiff_t)c * cs);
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NCHW, DVPP_DTYPE_F32)(
            p, src + (size_t)n * p->src_channels, w - n, (float *)dst + n, cs, 1);
}

/* f32 NHWC: planes of a chunk on the stack, then interleaved. */
static void nhwc_f32(const dvpp_norm_plan *p, const uint8_t *src, uint32_t w,
                     void *dst, ptrdiff_t cs, ptrdiff_t ps)
{
    float tmp[DVPP_NORM_MAX_CH][CHUNK] __attribute__((aligned(64)));
    const unsigned C = p->channels, sc = p->src_channels;
    __m512i idx[DVPP_NORM_MAX_CH];
    __mmask16 hi[DVPP_NORM_MAX_CH];
    float *o = dst;
    uint32_t n = w & ~15u;

    (void)cs;
    (void)ps;
    /* Output vector k, lane i: pixel (16k+i)/C, channel (16k+i)%C; the
     * channel pairs (0,1) and (2,3) are read with one vpermt2ps each. */
    for (unsigned k = 0; k < C; k++) {
        int32_t v[16];
        unsigned m = 0;
        for (unsigned i = 0; i < 16; i++) {
            unsigned px = (16 * k + i) / C, ch = (16 * k + i) % C;
            v[i] = (int32_t)(px + 16 * (ch & 1));
            m |= (unsigned)(ch >= 2) << i;
        }
        idx[k] = _mm512_loadu_si512(v);
        hi[k] = (__mmask16)m;
    }
    for (unsigned c = C; c < DVPP_NORM_MAX_CH; c++)
        memset(tmp[c], 0, sizeof(tmp[c]));
    for (uint32_t x0 = 0; x0 < n; x0 += CHUNK) {
        uint32_t m = n - x0 < CHUNK ? n - x0 : CHUNK;
        for (unsigned c = 0; c < C; c++)
            plane_f32(p->lut.f32[c], src + (size_t)x0 * sc, sc, p->src_index[c],
                      m, tmp[c]);
        for (uint32_t x = 0; x < m; x += 16) {
            __m512 v0 = _mm512_load_ps(tmp[0] + x), v1 = _mm512_load_ps(tmp[1] + x);
            __m512 v2 = _mm512_load_ps(tmp[2] + x), v3 = _mm512_load_ps(tmp[3] + x);
            float *q = o + (size_t)(x0 + x) * C;
            for (unsigned k = 0; k < C; k++) {
                __m512 a = _mm512_permutex2var_ps(v0, idx[k], v1);
                __m512 b = _mm512_permutex2var_ps(v2, idx[k], v3);
                _mm512_storeu_ps(q + 16 * k, _mm512_mask_blend_ps(hi[k], a, b));
            }
        }
    }
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NHWC, DVPP_DTYPE_F32)(
            p, src + (size_t)n * sc, w - n, o + (size_t)n * C, 1, C);
}

/* f16 NC1HWC0: planes of a chunk, then one 64-bit group (4 lanes) per
 * pixel placed in its zeroed 32-byte C0 block, two pixels per store. */
static void nc1_f16(const dvpp_norm_plan *p, const uint8_t *src, uint32_t w,
                    void *dst, ptrdiff_t cs, ptrdiff_t ps)
{
    uint16_t tmp[DVPP_NORM_MAX_CH][CHUNK] __attribute__((aligned(64)));
    const unsigned C = p->channels, sc = p->src_channels;
    uint16_t *o = dst;
    uint32_t n = w & ~31u;

    (void)cs;
    (void)ps;
    for (unsigned c = C; c < DVPP_NORM_MAX_CH; c++)
        memset(tmp[c], 0, sizeof(tmp[c]));
    for (uint32_t x0 = 0; x0 < n; x0 += CHUNK) {
        uint32_t m = n - x0 < CHUNK ? n - x0 : CHUNK;
        for (unsigned c = 0; c < C; c++)
            plane_u16(p->lut.f16[c], src + (size_t)x0 * sc, sc, p->src_index[c],
                      m, tmp[c]);
        for (uint32_t x = 0; x < m; x += 32) {
            __m512i v0 = _mm512_load_si512(tmp[0] + x);
            __m512i v1 = _mm512_load_si512(tmp[1] + x);
            __m512i v2 = _mm512_load_si512(tmp[2] + x);
            __m512i v3 = _mm512_load_si512(tmp[3] + x);
            __m512i l01 = _mm512_unpacklo_epi16(v0, v1);
            __m512i h01 = _mm512_unpackhi_epi16(v0, v1);
            __m512i l23 = _mm512_unpacklo_epi16(v2, v3);
            __m512i h23 = _mm512_unpackhi_epi16(v2, v3);
            /* q[j]: 128-bit lane L holds pixels 8L+2j, 8L+2j+1. */
            __m512i q[4] = {
                _mm512_unpacklo_epi32(l01, l23), _mm512_unpackhi_epi32(l01, l23),
                _mm512_unpacklo_epi32(h01, h23), _mm512_unpackhi_epi32(h01, h23)};
            uint16_t *out = o + (size_t)(x0 + x) * 16;
            for (int L = 0; L < 4; L++) {
                const __m512i sel = _mm512_setr_epi64(2 * L, 0, 0, 0, 2 * L + 1,
                                                      0, 0, 0);
                for (int j = 0; j < 4; j++)
                    _mm512_storeu_si512(out + (8 * L + 2 * j) * 16,
                                        _mm512_maskz_permutexvar_epi64(0x11, sel, q[j]));
            }
        }
    }
    if (n < w)
        dvpp__norm_scalar_row(DVPP_LAYOUT_NC1HWC0, DVPP_DTYPE_F16)(
            p, src + (size_t)n * sc, w - n, o + (size_t)n * 16, 1, 16);
}

#define ROW(name, L, ES)                                                       \
    static void name(const dvpp_norm_plan *p, const uint8_t *src, uint32_t w, \
                     void *dst, ptrdiff_t cs, ptrdiff_t ps)                    \
    {                                                                          \
        (void)ps;                                                              \
        row_body(p, src, w, dst, cs, L, ES);                                   \
    }

ROW(nchw_1, DVPP_LAYOUT_NCHW, 1)
ROW(nchw_2, DVPP_LAYOUT_NCHW, 2)
ROW(nchw_4, DVPP_LAYOUT_NCHW, 4)
ROW(nhwc_1, DVPP_LAYOUT_NHWC, 1)
ROW(nhwc_2, DVPP_LAYOUT_NHWC, 2)
ROW(nhwc_4, DVPP_LAYOUT_NHWC, 4)
ROW(nc1_1, DVPP_LAYOUT_NC1HWC0, 1)
ROW(nc1_2, DVPP_LAYOUT_NC1HWC0, 2)
ROW(nc1_4, DVPP_LAYOUT_NC1HWC0, 4)

void dvpp__norm_kern_avx512(dvpp_norm_kern *k)
{
    static const dvpp_norm_row_fn t[3][3] = {
        {nchw_1, nchw_2, nchw_4},
        {nhwc_1, nhwc_2, nhwc_4},
        {nc1_1, nc1_2, nc1_4},
    };
    for (int l = 0; l < 3; l++) {
        k->row[l][DVPP_DTYPE_U8] = t[l][0];
        k->row[l][DVPP_DTYPE_I8] = t[l][0];
        k->row[l][DVPP_DTYPE_F16] = t[l][1];
        k->row[l][DVPP_DTYPE_F32] = t[l][2];
    }
    k->row[DVPP_LAYOUT_NCHW][DVPP_DTYPE_F32] = nchw_f32;
    k->row[DVPP_LAYOUT_NHWC][DVPP_DTYPE_F32] = nhwc_f32;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_F16] = nc1_f16;
}
