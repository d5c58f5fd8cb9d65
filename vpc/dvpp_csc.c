/* dvpp_csc: colour conversion driver, coefficient tables and the scalar
 * reference kernels.
 *
 * Conversions are routed by the two formats' layouts (RGB family, grey,
 * Y-only, semi-planar, planar, packed 4:2:2, packed 4:4:4) to one of six
 * paths; each walks the image row by row and hands the pixel work to the
 * kernels of csc_int.h. Temporary rows come from one scratch slot
 * (SCRATCH_SLOT), sized once per call, so nothing is allocated per row.
 *
 * Semantics worth knowing (also in dvpp_csc.h):
 *  - GRAY is a picture's luma in full range: RGB -> GRAY is the full-range
 *    luma of the chosen matrix (BT.601 = cv2 COLOR_RGB2GRAY bit for bit),
 *    GRAY -> RGB replicates. YUV400 is the Y plane of a YUV picture: to and
 *    from RGB it goes through the matrix and range like any YUV format
 *    (neutral chroma). Between any YUV format and GRAY/YUV400 the Y plane is
 *    copied and chroma is dropped or set to 128, as cv2 COLOR_YUV2GRAY_*.
 *  - RGB -> YUV with subsampled chroma takes the chroma of the top-left
 *    pixel of each block, as OpenCV's RGB2YUV420p does (cv2 4.6 checked):
 *    that is what makes COLOR_RGB2YUV_I420 parity exact.
 *  - YUV -> YUV replicates chroma up and takes the rounded mean of the
 *    covered samples down ((a+b+1)>>1, (a+b+c+d+2)>>2; a block cut by an
 *    odd edge averages the samples it has).
 */
#include "dvpp_csc.h"

#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "csc_int.h"
#include "dvpp_mem.h"
#include "dvpp_pack.h"

/* The slot (of the caller's dvpp_scratch, 4..7 belong to vpc) that holds
 * every temporary row of one conversion. */
#define SCRATCH_SLOT 4
/* Temporary rows one conversion may need at once (see conv_yuv_yuv). */
#define TMP_ROWS 8

/* ---------------------------------------------------------------------
 * Coefficient tables, [matrix][full_range], 20 fractional bits.
 *
 * BT.601 narrow is OpenCV's (color_yuv.simd.hpp ITUR_BT_601_*): 1.164,
 * 1.596, -0.391, -0.813, 2.018 and 0.257, 0.504, 0.098 / -0.148, -0.291,
 * 0.439 / 0.439, -0.368, -0.071, each times 2^20 and truncated; this is
 * what makes cvtColor parity exact. Note OpenCV's V row reuses its U
 * coefficient for R (ITUR_BT_601_CBU), kept here.
 *
 * The others are derived from Kr/Kb (BT.601 0.299/0.114, BT.709
 * 0.2126/0.0722, Kg = 1-Kr-Kb) and rounded to nearest:
 *   YUV->RGB full:  R = Y + 2(1-Kr)V', G = Y - 2Kb(1-Kb)/Kg U' -
 *                   2Kr(1-Kr)/Kg V', B = Y + 2(1-Kb)U' (U',V' = minus 128)
 *   narrow: Y scale 255/219 (after Y-16), chroma scales times 255/224.
 *   RGB->YUV full:  Y = Kr R + Kg G + Kb B, U = (B-Y)/(2(1-Kb)) + 128,
 *                   V = (R-Y)/(2(1-Kr)) + 128; narrow: Y row times 219/255
 *                   plus 16, chroma rows times 224/255.
 * G's luma coefficient absorbs the rounding so a row sums to exactly 2^20
 * (full) or round(2^20 * 219/255) (narrow), and chroma rows sum to 0, so
 * white stays 255 (235) and every grey keeps U = V = 128. The full-range
 * luma rows are 15-bit grey weights times 32: BT.601 is what OpenCV 4.6's
 * COLOR_RGB2GRAY computes, (9798 R + 19235 G + 3735 B + 2^14) >> 15
 * (checked against cv2: the 14-bit 4899/9617/1868 form differs from it
 * by 1 on ~0.25% of random pixels), BT.709 is (6966, 23436, 2366); hence
 * RGB -> GRAY and the Y of full-range RGB -> YUV agree with cv2 exactly.
 * ------------------------------------------------------------------- */
/* Pillow's grey (Convert.c: L24 = rgb[0] * 19595 + rgb[1] * 38470 +
 * rgb[2] * 7471 + 0x8000, >> 16): 16-bit weights times 16 in the 20-bit
 * fixed point, so the one luma kernel of every level computes it exactly
 * (the kernels split any 20-bit weight into 7-bit halves). Only the luma
 * row is used (RGB -> GRAY). */
static const dvpp__csc_coef k_pil_luma = {
    .yr = 19595 << 4, .yg = 38470 << 4, .yb = 7471 << 4, .y_bias = DVPP__CSC_HALF,
};

static const dvpp__csc_coef k_coef[2][2] = {
    [DVPP_CSC_BT601] = {
        [0] = {16, 1220542, 1673527, -409993, -852492, 2116026,
               269484, 528482, 102760, (16 << DVPP__CSC_SHIFT) + DVPP__CSC_HALF,
               -155188, -305135, 460324, 460324, -385875, -74448},
        [1] = {0, 1048576, 1470104, -360853, -748826, 1858077,
               9798 << 5, 19235 << 5, 3735 << 5, DVPP__CSC_HALF,
               -176932, -347356, 524288, 524288, -439026, -85262},
    },
    [DVPP_CSC_BT709] = {
        [0] = {16, 1220945, 1879825, -223607, -558796, 2215014,
               191455, 644068, 65019, (16 << DVPP__CSC_SHIFT) + DVPP__CSC_HALF,
               -105533, -355018, 460551, 460551, -418321, -42230},
        [1] = {0, 1048576, 1651297, -196424, -490864, 1945738,
               6966 << 5, 23436 << 5, 2366 << 5, DVPP__CSC_HALF,
               -120138, -404150, 524288, 524288, -476214, -48074},
    },
};

const dvpp__csc_coef *dvpp__csc_coef_get(int matrix, int full_range)
{
    if (matrix < DVPP_CSC_BT601 || matrix > DVPP_CSC_BT709)
        return NULL;
    return &k_coef[matrix][full_range ? 1 : 0];
}

/* ---------------------------------------------------------------------
 * Byte-shuffle tables shared by the x86 kernels (declared in csc_int.h).
 *
 * The YUV->RGB kernels split a run of 16 luma pixels into even (E) and
 * odd (O) ones so that both halves line up with one chroma sample each;
 * after packing, a 16-byte channel holds pixels in "pi order"
 * E0-3 O0-3 E4-7 O4-7 = 0,2,4,6, 1,3,5,7, 8,10,12,14, 9,11,13,15.
 * ------------------------------------------------------------------- */
#define Z 0x80 /* pshufb: write a zero */

/* pi order -> natural pixel order. */
const uint8_t dvpp__csc_pi_inv[16] = {0, 4, 1, 5, 2, 6, 3, 7,
                                      8, 12, 9, 13, 10, 14, 11, 15};

/* [channel][output chunk]: three pi-ordered channels -> 48 bytes of
 * 3-byte pixels (out = OR over channels of pshufb(channel, mask)). */
const uint8_t dvpp__csc_pi_rgb3[3][3][16] = {
    {
        {0, Z, Z, 4, Z, Z, 1, Z, Z, 5, Z, Z, 2, Z, Z, 6},
        {Z, Z, 3, Z, Z, 7, Z, Z, 8, Z, Z, 12, Z, Z, 9, Z},
        {Z, 13, Z, Z, 10, Z, Z, 14, Z, Z, 11, Z, Z, 15, Z, Z},
    },
    {
        {Z, 0, Z, Z, 4, Z, Z, 1, Z, Z, 5, Z, Z, 2, Z, Z},
        {6, Z, Z, 3, Z, Z, 7, Z, Z, 8, Z, Z, 12, Z, Z, 9},
        {Z, Z, 13, Z, Z, 10, Z, Z, 14, Z, Z, 11, Z, Z, 15, Z},
    },
    {
        {Z, Z, 0, Z, Z, 4, Z, Z, 1, Z, Z, 5, Z, Z, 2, Z},
        {Z, 6, Z, Z, 3, Z, Z, 7, Z, Z, 8, Z, Z, 12, Z, Z},
        {9, Z, Z, 13, Z, Z, 10, Z, Z, 14, Z, Z, 11, Z, Z, 15},
    },
};

/* [channel][input chunk]: 48 bytes of 3-byte pixels -> the 16 bytes of
 * one channel in natural order (OR over the three input chunks). */
const uint8_t dvpp__csc_de3[3][3][16] = {
    {
        {0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z},
        {Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14, Z, Z, Z, Z, Z},
        {Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 1, 4, 7, 10, 13},
    },
    {
        {1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z},
        {Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15, Z, Z, Z, Z, Z},
        {Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 2, 5, 8, 11, 14},
    },
    {
        {2, 5, 8, 11, 14, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z},
        {Z, Z, Z, Z, Z, 1, 4, 7, 10, 13, Z, Z, Z, Z, Z, Z},
        {Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 0, 3, 6, 9, 12, 15},
    },
};

/* 16 bytes of 4-byte pixels -> channel 0 of pixels 0-3, channel 1, ... */
const uint8_t dvpp__csc_de4[16] = {0, 4, 8, 12, 1, 5, 9, 13,
                                   2, 6, 10, 14, 3, 7, 11, 15};
#undef Z

/* ---------------------------------------------------------------------
 * Scalar reference kernels.
 * ------------------------------------------------------------------- */

static inline uint8_t clamp_u8(int32_t v)
{
    return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

/* Luma term of YUV->RGB: OpenCV's max(0, Y - 16) * CY. */
static inline int32_t luma_term(uint8_t y, const dvpp__csc_coef *k)
{
    int32_t v = (int32_t)y - k->y_off;
    return (v < 0 ? 0 : v) * k->cy;
}

/* Chroma terms of YUV->RGB, rounding half included. Arithmetic right
 * shifts of negative sums floor, as OpenCV's do (gcc and clang). */
typedef struct uv_terms {
    int32_t r, g, b;
} uv_terms;

static inline uv_terms chroma_terms(uint8_t u, uint8_t v,
                                    const dvpp__csc_coef *k)
{
    int32_t uu = (int32_t)u - 128, vv = (int32_t)v - 128;
    uv_terms t = {DVPP__CSC_HALF + k->cvr * vv,
                  DVPP__CSC_HALF + k->cvg * vv + k->cug * uu,
                  DVPP__CSC_HALF + k->cub * uu};
    return t;
}

static inline void put_rgb(uint8_t *d, int32_t yy, uv_terms t,
                           const dvpp__csc_pix *o)
{
    d[o->ri] = clamp_u8((yy + t.r) >> DVPP__CSC_SHIFT);
    d[o->gi] = clamp_u8((yy + t.g) >> DVPP__CSC_SHIFT);
    d[o->bi] = clamp_u8((yy + t.b) >> DVPP__CSC_SHIFT);
    if (o->cn == 4)
        d[o->ai] = o->alpha;
}

void dvpp__yuv_rgb_sub_scalar(const dvpp__yuv_rows *r, size_t w,
                              const dvpp__csc_coef *k, const dvpp__csc_pix *o)
{
    const size_t cn = o->cn;

    for (size_t i = 0; i < w; i += 2) {
        size_t c = i / 2 * r->cstep;
        uv_terms t = chroma_terms(r->u[c], r->v[c], k);
        size_t end = i + 2 < w ? i + 2 : w;
        for (size_t x = i; x < end; x++) {
            put_rgb(r->d0 + x * cn, luma_term(r->y0[x], k), t, o);
            if (r->y1)
                put_rgb(r->d1 + x * cn, luma_term(r->y1[x], k), t, o);
        }
    }
}

static void yuv_rgb_444_scalar(const dvpp__yuv_rows *r, size_t w,
                               const dvpp__csc_coef *k, const dvpp__csc_pix *o)
{
    for (size_t x = 0; x < w; x++) {
        uv_terms t = chroma_terms(r->u[x * r->cstep], r->v[x * r->cstep], k);
        put_rgb(r->d0 + x * o->cn, luma_term(r->y0[x], k), t, o);
    }
}

static inline uint8_t rgb_luma(const uint8_t *p, const dvpp__csc_coef *k,
                               const dvpp__csc_pix *in)
{
    return clamp_u8((k->yr * p[in->ri] + k->yg * p[in->gi] +
                     k->yb * p[in->bi] + k->y_bias) >> DVPP__CSC_SHIFT);
}

static inline void rgb_chroma(const uint8_t *p, const dvpp__csc_coef *k,
                              const dvpp__csc_pix *in, uint8_t *u, uint8_t *v)
{
    int32_t r = p[in->ri], g = p[in->gi], b = p[in->bi];
    *u = clamp_u8((k->ur * r + k->ug * g + k->ub * b + DVPP__CSC_CBIAS) >>
                  DVPP__CSC_SHIFT);
    *v = clamp_u8((k->vr * r + k->vg * g + k->vb * b + DVPP__CSC_CBIAS) >>
                  DVPP__CSC_SHIFT);
}

void dvpp__rgb_y_scalar(const uint8_t *s, uint8_t *y, size_t w,
                        const dvpp__csc_coef *k, const dvpp__csc_pix *in)
{
    for (size_t x = 0; x < w; x++)
        y[x] = rgb_luma(s + x * in->cn, k, in);
}

void dvpp__rgb_yuv_sub_scalar(const dvpp__rgb_rows *r, size_t w,
                              const dvpp__csc_coef *k, const dvpp__csc_pix *in)
{
    dvpp__rgb_y_scalar(r->s0, r->y0, w, k, in);
    if (r->s1)
        dvpp__rgb_y_scalar(r->s1, r->y1, w, k, in);
    if (!r->u)
        return;
    for (size_t i = 0; i < (w + 1) / 2; i++)
        rgb_chroma(r->s0 + 2 * i * in->cn, k, in, r->u + i * r->cstep,
                   r->v + i * r->cstep);
}

static void rgb_yuv_444_scalar(const dvpp__rgb_rows *r, size_t w,
                               const dvpp__csc_coef *k, const dvpp__csc_pix *in)
{
    dvpp__rgb_y_scalar(r->s0, r->y0, w, k, in);
    if (!r->u)
        return;
    for (size_t x = 0; x < w; x++)
        rgb_chroma(r->s0 + x * in->cn, k, in, r->u + x * r->cstep,
                   r->v + x * r->cstep);
}

void dvpp__shuffle_scalar(const uint8_t *s, uint8_t *d, size_t w,
                          const dvpp__csc_shuf *m)
{
    for (size_t x = 0; x < w; x++, s += m->scn, d += m->dcn)
        for (unsigned c = 0; c < m->dcn; c++)
            d[c] = m->idx[c] == DVPP__SHUF_ALPHA ? m->alpha : s[m->idx[c]];
}

/* ---------------------------------------------------------------------
 * Dispatch tables.
 * ------------------------------------------------------------------- */

void dvpp__csc_kern_init(dvpp__csc_kern *k, dvpp_simd_level level)
{
    k->level = DVPP_SIMD_SCALAR;
    k->yuv_rgb_sub = dvpp__yuv_rgb_sub_scalar;
    k->yuv_rgb_444 = yuv_rgb_444_scalar;
    k->rgb_yuv_sub = dvpp__rgb_yuv_sub_scalar;
    k->rgb_yuv_444 = rgb_yuv_444_scalar;
    k->rgb_y = dvpp__rgb_y_scalar;
    k->shuffle = dvpp__shuffle_scalar;
#if defined(__x86_64__)
    if (level >= DVPP_SIMD_SSE41) {
        k->level = DVPP_SIMD_SSE41;
        k->yuv_rgb_sub = dvpp__yuv_rgb_sub_sse41;
        k->rgb_yuv_sub = dvpp__rgb_yuv_sub_sse41;
        k->shuffle = dvpp__shuffle_sse41;
    }
    if (level >= DVPP_SIMD_AVX2) {
        k->level = DVPP_SIMD_AVX2;
        k->yuv_rgb_sub = dvpp__yuv_rgb_sub_avx2;
        k->rgb_yuv_sub = dvpp__rgb_yuv_sub_avx2;
        k->rgb_y = dvpp__rgb_y_avx2;
        k->shuffle = dvpp__shuffle_avx2;
    }
    if (level >= DVPP_SIMD_AVX512) {
        k->level = DVPP_SIMD_AVX512;
        k->yuv_rgb_sub = dvpp__yuv_rgb_sub_avx512;
        k->rgb_yuv_sub = dvpp__rgb_yuv_sub_avx512;
        k->rgb_y = dvpp__rgb_y_avx512;
        k->shuffle = dvpp__shuffle_avx512;
    }
#elif defined(__aarch64__)
    if (level >= DVPP_SIMD_NEON) {
        k->level = DVPP_SIMD_NEON;
        k->yuv_rgb_sub = dvpp__yuv_rgb_sub_neon;
        k->rgb_yuv_sub = dvpp__rgb_yuv_sub_neon;
        k->rgb_y = dvpp__rgb_y_neon;
        k->shuffle = dvpp__shuffle_neon;
    }
#else
    (void)level;
#endif
}

static pthread_once_t g_csc_once = PTHREAD_ONCE_INIT;
static dvpp__csc_kern g_csc[DVPP_SIMD_LEVELS]; /* written once */

static void csc_once(void)
{
    for (int l = DVPP_SIMD_SCALAR; l < DVPP_SIMD_LEVELS; l++)
        dvpp__csc_kern_init(&g_csc[l], (dvpp_simd_level)l);
}

const dvpp__csc_kern *dvpp__csc_kern_get(dvpp_simd_level level)
{
    dvpp_simd_level active = dvpp_simd_active();

    pthread_once(&g_csc_once, csc_once);
    if ((int)level < DVPP_SIMD_SCALAR || level > active)
        level = active;
    return &g_csc[level];
}

/* ---------------------------------------------------------------------
 * Formats.
 * ------------------------------------------------------------------- */

typedef enum fmt_lay {
    LAY_RGB,   /* packed RGB family */
    LAY_GRAY,  /* full-range luma */
    LAY_Y,     /* YUV400: a Y plane */
    LAY_SP,    /* Y plane + interleaved chroma plane */
    LAY_P,     /* Y, U, V planes */
    LAY_PK422, /* two pixels in four bytes */
    LAY_PK444, /* Y, U, V per pixel */
} fmt_lay;

typedef struct fmt_desc {
    dvpp_pixfmt fmt;
    uint8_t lay;     /* fmt_lay */
    uint8_t sx;      /* log2 horizontal chroma subsampling */
    uint8_t sy;      /* log2 vertical chroma subsampling */
    uint8_t v_first; /* SP: V byte first; P: V plane first */
    uint8_t off[4];  /* PK422: Y0,U,Y1,V bytes; PK444: Y,U,V; RGB: R,G,B,A */
    uint8_t cn;      /* RGB: bytes per pixel */
} fmt_desc;

static const fmt_desc k_fmts[] = {
    {DVPP_PIXEL_YUV400, LAY_Y, 0, 0, 0, {0}, 1},
    {DVPP_PIXEL_GRAY, LAY_GRAY, 0, 0, 0, {0}, 1},
    {DVPP_PIXEL_NV12, LAY_SP, 1, 1, 0, {0}, 1},
    {DVPP_PIXEL_NV21, LAY_SP, 1, 1, 1, {0}, 1},
    {DVPP_PIXEL_YUV422SP, LAY_SP, 1, 0, 0, {0}, 1},
    {DVPP_PIXEL_YVU422SP, LAY_SP, 1, 0, 1, {0}, 1},
    {DVPP_PIXEL_YUV444SP, LAY_SP, 0, 0, 0, {0}, 1},
    {DVPP_PIXEL_YVU444SP, LAY_SP, 0, 0, 1, {0}, 1},
    {DVPP_PIXEL_YUV440SP, LAY_SP, 0, 1, 0, {0}, 1},
    {DVPP_PIXEL_YVU440SP, LAY_SP, 0, 1, 1, {0}, 1},
    {DVPP_PIXEL_I420, LAY_P, 1, 1, 0, {0}, 1},
    {DVPP_PIXEL_YVU_PLANAR_420, LAY_P, 1, 1, 1, {0}, 1},
    {DVPP_PIXEL_YUYV, LAY_PK422, 1, 0, 0, {0, 1, 2, 3}, 2},
    {DVPP_PIXEL_UYVY, LAY_PK422, 1, 0, 0, {1, 0, 3, 2}, 2},
    {DVPP_PIXEL_YVYU, LAY_PK422, 1, 0, 0, {0, 3, 2, 1}, 2},
    {DVPP_PIXEL_VYUY, LAY_PK422, 1, 0, 0, {1, 2, 3, 0}, 2},
    /* DVPP does not document the byte order of packed 4:4:4; Y,U,V. */
    {DVPP_PIXEL_YUV_PACKED_444, LAY_PK444, 0, 0, 0, {0, 1, 2}, 3},
    {DVPP_PIXEL_RGB, LAY_RGB, 0, 0, 0, {0, 1, 2, 0}, 3},
    {DVPP_PIXEL_BGR, LAY_RGB, 0, 0, 0, {2, 1, 0, 0}, 3},
    {DVPP_PIXEL_RGBA, LAY_RGB, 0, 0, 0, {0, 1, 2, 3}, 4},
    {DVPP_PIXEL_BGRA, LAY_RGB, 0, 0, 0, {2, 1, 0, 3}, 4},
    {DVPP_PIXEL_ARGB, LAY_RGB, 0, 0, 0, {1, 2, 3, 0}, 4},
    {DVPP_PIXEL_ABGR, LAY_RGB, 0, 0, 0, {3, 2, 1, 0}, 4},
};

static const fmt_desc *fmt_find(dvpp_pixfmt f)
{
    for (size_t i = 0; i < sizeof(k_fmts) / sizeof(k_fmts[0]); i++)
        if (k_fmts[i].fmt == f)
            return &k_fmts[i];
    return NULL;
}

static bool lay_is_yuv(unsigned lay)
{
    return lay != LAY_RGB && lay != LAY_GRAY;
}

/* The kernel view of an RGB-family layout. */
static dvpp__csc_pix pix_of(const fmt_desc *f, uint8_t alpha)
{
    dvpp__csc_pix p = {f->cn, f->off[0], f->off[1], f->off[2], f->off[3],
                       f->off[2] < f->off[0], f->cn == 4 && f->off[3] == 0,
                       alpha};
    return p;
}

/* ---------------------------------------------------------------------
 * Public helpers.
 * ------------------------------------------------------------------- */

void dvpp_csc_init(dvpp_csc *c)
{
    c->matrix = DVPP_CSC_BT601;
    c->full_range = false;
    c->alpha = -1;
    c->level = DVPP_SIMD_BEST;
    c->pil_luma = false;
}

bool dvpp_csc_parse_matrix(const char *s, dvpp_csc_matrix *out)
{
    if (strcasecmp(s, "bt601") == 0 || strcasecmp(s, "601") == 0) {
        *out = DVPP_CSC_BT601;
        return true;
    }
    if (strcasecmp(s, "bt709") == 0 || strcasecmp(s, "709") == 0) {
        *out = DVPP_CSC_BT709;
        return true;
    }
    return false;
}

bool dvpp_csc_parse_range(const char *s, bool *full_range)
{
    if (strcasecmp(s, "full") == 0 || strcasecmp(s, "jpeg") == 0) {
        *full_range = true;
        return true;
    }
    if (strcasecmp(s, "narrow") == 0 || strcasecmp(s, "limited") == 0 ||
        strcasecmp(s, "video") == 0) {
        *full_range = false;
        return true;
    }
    return false;
}

bool dvpp_csc_supported(dvpp_pixfmt from, dvpp_pixfmt to)
{
    return fmt_find(from) && fmt_find(to);
}

/* ---------------------------------------------------------------------
 * The conversion job: both images, their layouts and the temporary rows.
 * ------------------------------------------------------------------- */

typedef struct csc_job {
    const dvpp_image *src;
    dvpp_image *dst;
    dvpp_planes ps;          /* source planes */
    dvpp_planes pd;          /* destination planes */
    const fmt_desc *fs;      /* source format */
    const fmt_desc *fd;      /* destination format */
    const dvpp__csc_coef *k; /* matrix for YUV <-> RGB and RGB -> YUV400 */
    const dvpp__csc_coef *kg;/* full-range luma for RGB -> GRAY */
    const dvpp__csc_kern *kern;
    uint8_t alpha;           /* alpha for outputs whose source has none */
    uint32_t w, h;
    uint8_t *tmp[TMP_ROWS];  /* temporary rows, each >= w bytes */
    uint8_t *neutral;        /* a row of 128s (chroma of grey) */
} csc_job;

static inline const uint8_t *srow(const csc_job *j, int plane, uint32_t y)
{
    return dvpp_image_row(j->src, &j->ps, plane, y);
}

static inline uint8_t *drow(const csc_job *j, int plane, uint32_t y)
{
    return dvpp_image_row(j->dst, &j->pd, plane, y);
}

/* Carve TMP_ROWS rows out of the scratch slot; the last one is neutral. */
static dvpp_status job_rows(csc_job *j, dvpp_scratch *s, dvpp_err *err)
{
    size_t cap = (size_t)dvpp_align_up(j->w, 64) + 64, total;
    uint8_t *block;

    if (!dvpp_size_mul(cap, TMP_ROWS, &total))
        return dvpp_err_set(err, DVPP_EOVERFLOW, "width",
                            "temporary rows for width %u overflow", j->w);
    block = dvpp_scratch_get(s, SCRATCH_SLOT, total);
    if (!block)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL,
                            "cannot allocate %zu bytes of conversion rows",
                            total);
    for (int i = 0; i < TMP_ROWS; i++)
        j->tmp[i] = block + (size_t)i * cap;
    j->neutral = j->tmp[TMP_ROWS - 1];
    memset(j->neutral, 128, j->w);
    return DVPP_OK;
}

static inline uint32_t chroma_w(const fmt_desc *f, uint32_t w)
{
    return (w + f->sx) >> f->sx;
}

/* Y of row @y of a YUV or grey source: the row itself, or the luma bytes
 * of a packed row gathered into @tmp. */
static const uint8_t *src_luma(const csc_job *j, uint32_t y, uint8_t *tmp)
{
    const fmt_desc *f = j->fs;
    const uint8_t *row = srow(j, 0, y);

    if (f->lay == LAY_PK422) {
        for (uint32_t x = 0; x < j->w; x++)
            tmp[x] = row[(x >> 1) * 4 + f->off[(x & 1) ? 2 : 0]];
        return tmp;
    }
    if (f->lay == LAY_PK444) {
        for (uint32_t x = 0; x < j->w; x++)
            tmp[x] = row[3 * x + f->off[0]];
        return tmp;
    }
    return row;
}

/* Chroma row @cr of the source as U and V sample pointers with a step:
 * straight into the image for planar and semi-planar layouts, gathered
 * into @tu/@tv for packed ones, the neutral row for grey and YUV400. */
typedef struct chroma_ref {
    const uint8_t *u;
    const uint8_t *v;
    uint32_t step;
} chroma_ref;

static chroma_ref src_chroma(const csc_job *j, uint32_t cr, uint8_t *tu,
                             uint8_t *tv)
{
    const fmt_desc *f = j->fs;
    uint32_t cw = chroma_w(f, j->w);
    chroma_ref c = {j->neutral, j->neutral, 1};
    const uint8_t *row;

    switch (f->lay) {
    case LAY_SP:
        row = srow(j, 1, cr);
        c.u = row + f->v_first;
        c.v = row + !f->v_first;
        c.step = 2;
        break;
    case LAY_P:
        c.u = srow(j, f->v_first ? 2 : 1, cr);
        c.v = srow(j, f->v_first ? 1 : 2, cr);
        break;
    case LAY_PK422:
    case LAY_PK444: {
        unsigned bpc = f->lay == LAY_PK422 ? 4 : 3; /* bytes per sample */
        unsigned ou = f->off[1], ov = f->off[f->lay == LAY_PK422 ? 3 : 2];
        row = srow(j, 0, cr);
        for (uint32_t i = 0; i < cw; i++) {
            tu[i] = row[bpc * i + ou];
            tv[i] = row[bpc * i + ov];
        }
        c.u = tu;
        c.v = tv;
        break;
    }
    default:
        break;
    }
    return c;
}

/* The destination's chroma row @cr as writable U/V pointers with a step
 * (semi-planar and planar layouts only). */
typedef struct chroma_out {
    uint8_t *u;
    uint8_t *v;
    uint32_t step;
} chroma_out;

static chroma_out dst_chroma(const csc_job *j, uint32_t cr)
{
    const fmt_desc *f = j->fd;
    chroma_out c;

    if (f->lay == LAY_SP) {
        uint8_t *row = drow(j, 1, cr);
        c.u = row + f->v_first;
        c.v = row + !f->v_first;
        c.step = 2;
    } else {
        c.u = drow(j, f->v_first ? 2 : 1, cr);
        c.v = drow(j, f->v_first ? 1 : 2, cr);
        c.step = 1;
    }
    return c;
}

/* Store luma @l as row @y of the destination. An odd-width packed 4:2:2
 * row repeats its last Y in the unused half of the final pair so the
 * whole row is defined. */
static void put_luma(const csc_job *j, uint32_t y, const uint8_t *l)
{
    const fmt_desc *f = j->fd;
    uint8_t *row = drow(j, 0, y);

    if (f->lay == LAY_PK422) {
        for (uint32_t x = 0; x < j->w; x++)
            row[(x >> 1) * 4 + f->off[(x & 1) ? 2 : 0]] = l[x];
        if (j->w & 1)
            row[(j->w >> 1) * 4 + f->off[2]] = l[j->w - 1];
    } else if (f->lay == LAY_PK444) {
        for (uint32_t x = 0; x < j->w; x++)
            row[3 * x + f->off[0]] = l[x];
    } else if (row != l) {
        memcpy(row, l, j->w);
    }
}

/* Store planar chroma @u/@v (destination resolution) as chroma row @cr of
 * a packed destination. */
static void put_packed_chroma(const csc_job *j, uint32_t cr, const uint8_t *u,
                              const uint8_t *v)
{
    const fmt_desc *f = j->fd;
    uint8_t *row = drow(j, 0, cr);
    unsigned bpc = f->lay == LAY_PK422 ? 4 : 3;
    unsigned ou = f->off[1], ov = f->off[f->lay == LAY_PK422 ? 3 : 2];

    for (uint32_t i = 0; i < chroma_w(f, j->w); i++) {
        row[bpc * i + ou] = u[i];
        row[bpc * i + ov] = v[i];
    }
}

/* ---------------------------------------------------------------------
 * Paths.
 * ------------------------------------------------------------------- */

/* Same format: copy the meaningful bytes of every plane row. */
static void conv_copy(const csc_job *j)
{
    for (int p = 0; p < j->ps.count; p++)
        for (uint32_t y = 0; y < j->ps.p[p].rows; y++)
            memcpy(drow(j, p, y), srow(j, p, y), j->ps.p[p].row_bytes);
}

/* RGB family <-> RGB family, and grey -> RGB (replicate). */
static void conv_shuffle(const csc_job *j)
{
    const fmt_desc *fs = j->fs, *fd = j->fd;
    dvpp__csc_shuf m = {fs->cn, fd->cn, {0, 0, 0, 0}, j->alpha};

    for (unsigned c = 0; c < 3; c++)
        m.idx[fd->off[c]] = fs->lay == LAY_GRAY ? 0 : fs->off[c];
    if (fd->cn == 4)
        m.idx[fd->off[3]] = fs->cn == 4 ? fs->off[3] : DVPP__SHUF_ALPHA;
    for (uint32_t y = 0; y < j->h; y++)
        j->kern->shuffle(srow(j, 0, y), drow(j, 0, y), j->w, &m);
}

/* RGB -> GRAY (full-range luma) or YUV400 (the matrix's luma). */
static void conv_rgb_luma(const csc_job *j)
{
    dvpp__csc_pix in = pix_of(j->fs, 0);
    const dvpp__csc_coef *k = j->fd->lay == LAY_GRAY ? j->kg : j->k;

    for (uint32_t y = 0; y < j->h; y++)
        j->kern->rgb_y(srow(j, 0, y), drow(j, 0, y), j->w, k, &in);
}

typedef enum hmode { H_COPY, H_DOWN, H_UP } hmode;

/* One destination chroma row from one or two source rows (@b may be
 * NULL): replicate up, rounded mean of the covered samples down. */
static void resample_row(const uint8_t *a, const uint8_t *b, uint32_t scw,
                         uint8_t *out, uint32_t dcw, hmode hm)
{
    if (hm == H_COPY && !b) {
        memcpy(out, a, dcw);
        return;
    }
    for (uint32_t x = 0; x < dcw; x++) {
        uint32_t i = hm == H_DOWN ? 2 * x : hm == H_UP ? x >> 1 : x;
        uint32_t s = a[i], n = 1;
        if (hm == H_DOWN && i + 1 < scw) {
            s += a[i + 1];
            n = 2;
        }
        if (b) {
            s += b[i] + (n == 2 ? b[i + 1] : 0);
            n *= 2;
        }
        out[x] = (uint8_t)(n == 1 ? s : n == 2 ? (s + 1) >> 1 : (s + 2) >> 2);
    }
}

/* Chroma row @cr of the source as two planar rows (@tu/@tv when the
 * samples are interleaved or packed). */
static chroma_ref src_chroma_planar(const csc_job *j, uint32_t cr, uint8_t *tu,
                                    uint8_t *tv)
{
    chroma_ref c = src_chroma(j, cr, tu, tv);

    if (c.step == 2) {
        const uint8_t *base = c.u < c.v ? c.u : c.v;
        uint8_t *first = c.u < c.v ? tu : tv, *second = c.u < c.v ? tv : tu;
        dvpp_pack_kern_get()->deinterleave(base, first, second,
                                           chroma_w(j->fs, j->w));
        c.u = tu;
        c.v = tv;
        c.step = 1;
    }
    return c;
}

/* Write one destination chroma row of a YUV -> YUV conversion. */
static void yuv_chroma_row(const csc_job *j, uint32_t cr)
{
    const fmt_desc *fs = j->fs, *fd = j->fd;
    uint32_t scw = chroma_w(fs, j->w), dcw = chroma_w(fd, j->w);
    uint32_t srows = fs->sy ? (j->h + 1) / 2 : j->h;
    hmode hm = fs->sx == fd->sx ? H_COPY : fs->sx ? H_UP : H_DOWN;
    uint8_t *du = j->tmp[4], *dv = j->tmp[5];
    chroma_ref a, b = {NULL, NULL, 1};
    uint32_t r0 = cr;

    if (fd->lay == LAY_P) {
        chroma_out o = dst_chroma(j, cr);
        du = o.u;
        dv = o.v;
    }
    if (fs->sy != fd->sy)
        r0 = fs->sy ? cr >> 1 : 2 * cr;
    if (!lay_is_yuv(fs->lay) || fs->lay == LAY_Y) {
        memset(du, 128, dcw);
        memset(dv, 128, dcw);
    } else {
        a = src_chroma_planar(j, r0, j->tmp[0], j->tmp[1]);
        if (!fs->sy && fd->sy && r0 + 1 < srows)
            b = src_chroma_planar(j, r0 + 1, j->tmp[2], j->tmp[3]);
        resample_row(a.u, b.u, scw, du, dcw, hm);
        resample_row(a.v, b.v, scw, dv, dcw, hm);
    }
    if (fd->lay == LAY_SP) {
        chroma_out o = dst_chroma(j, cr);
        uint8_t *base = o.u < o.v ? o.u : o.v;
        dvpp_pack_kern_get()->interleave(o.u < o.v ? du : dv,
                                         o.u < o.v ? dv : du, base, dcw);
    } else if (fd->lay == LAY_PK422 || fd->lay == LAY_PK444) {
        put_packed_chroma(j, cr, du, dv);
    }
}

/* YUV (or grey) -> YUV (or grey): luma moves as is, chroma is resampled
 * and never leaves YUV. */
static void conv_yuv_yuv(const csc_job *j)
{
    const fmt_desc *fd = j->fd;
    uint32_t drows;

    for (uint32_t y = 0; y < j->h; y++)
        put_luma(j, y, src_luma(j, y, j->tmp[6]));
    if (!lay_is_yuv(fd->lay) || fd->lay == LAY_Y)
        return;
    drows = fd->sy ? (j->h + 1) / 2 : j->h;
    for (uint32_t cr = 0; cr < drows; cr++)
        yuv_chroma_row(j, cr);
}

/* YUV -> RGB. 4:2:0 planar/semi-planar sources run two rows per kernel
 * call straight from the image; the rest go row by row, through temporary
 * rows where the source is packed. */
static void conv_yuv_rgb(const csc_job *j)
{
    const fmt_desc *fs = j->fs;
    dvpp__csc_pix o = pix_of(j->fd, j->alpha);
    bool direct420 = (fs->lay == LAY_SP || fs->lay == LAY_P) && fs->sx && fs->sy;

    if (direct420) {
        for (uint32_t y = 0; y < j->h; y += 2) {
            chroma_ref c = src_chroma(j, y / 2, NULL, NULL);
            bool two = y + 1 < j->h;
            dvpp__yuv_rows r = {srow(j, 0, y), two ? srow(j, 0, y + 1) : NULL,
                                c.u, c.v, drow(j, 0, y),
                                two ? drow(j, 0, y + 1) : NULL, c.step};
            j->kern->yuv_rgb_sub(&r, j->w, j->k, &o);
        }
        return;
    }
    for (uint32_t y = 0; y < j->h; y++) {
        chroma_ref c = src_chroma(j, y >> fs->sy, j->tmp[1], j->tmp[2]);
        dvpp__yuv_rows r = {src_luma(j, y, j->tmp[0]), NULL, c.u, c.v,
                            drow(j, 0, y), NULL, c.step};
        if (fs->sx)
            j->kern->yuv_rgb_sub(&r, j->w, j->k, &o);
        else
            j->kern->yuv_rgb_444(&r, j->w, j->k, &o);
    }
}

/* RGB -> packed YUV: convert into temporary planar rows, then pack. */
static void conv_rgb_packed(const csc_job *j, const dvpp__csc_pix *in)
{
    const fmt_desc *fd = j->fd;

    for (uint32_t y = 0; y < j->h; y++) {
        dvpp__rgb_rows r = {srow(j, 0, y), NULL, j->tmp[0], NULL,
                            j->tmp[1], j->tmp[2], 1};
        if (fd->sx)
            j->kern->rgb_yuv_sub(&r, j->w, j->k, in);
        else
            j->kern->rgb_yuv_444(&r, j->w, j->k, in);
        put_luma(j, y, j->tmp[0]);
        put_packed_chroma(j, y, j->tmp[1], j->tmp[2]);
    }
}

/* RGB -> YUV: chroma from the top-left pixel of each block (OpenCV). */
static void conv_rgb_yuv(const csc_job *j)
{
    const fmt_desc *fd = j->fd;
    dvpp__csc_pix in = pix_of(j->fs, 0);
    uint32_t step = 1u << fd->sy;

    if (fd->lay == LAY_PK422 || fd->lay == LAY_PK444) {
        conv_rgb_packed(j, &in);
        return;
    }
    for (uint32_t y = 0; y < j->h; y += step) {
        chroma_out c = dst_chroma(j, y >> fd->sy);
        bool two = step == 2 && y + 1 < j->h;
        dvpp__rgb_rows r = {srow(j, 0, y), two ? srow(j, 0, y + 1) : NULL,
                            drow(j, 0, y), two ? drow(j, 0, y + 1) : NULL,
                            c.u, c.v, c.step};
        if (fd->sx) {
            j->kern->rgb_yuv_sub(&r, j->w, j->k, &in);
            continue;
        }
        /* 4:4:0: the 4:4:4 kernel per row, chroma from the even row. */
        r.s1 = NULL;
        j->kern->rgb_yuv_444(&r, j->w, j->k, &in);
        if (two) {
            dvpp__rgb_rows r1 = {srow(j, 0, y + 1), NULL, drow(j, 0, y + 1),
                                 NULL, NULL, NULL, 1};
            j->kern->rgb_yuv_444(&r1, j->w, j->k, &in);
        }
    }
}

/* ---------------------------------------------------------------------
 * Entry point.
 * ------------------------------------------------------------------- */

static dvpp_status check_args(const dvpp_image *src, const dvpp_image *dst,
                              const dvpp_csc *c, dvpp_err *err)
{
    if (!src || !dst || !c)
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "colour conversion needs a source, a destination "
                            "and options");
    if (!fmt_find(src->format) || !fmt_find(dst->format))
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "colour conversion from %s to %s is not supported",
                            dvpp_pixfmt_name(src->format),
                            dvpp_pixfmt_name(dst->format));
    if (src->width != dst->width || src->height != dst->height)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "colour conversion keeps the size: source %ux%u, "
                            "destination %ux%u",
                            src->width, src->height, dst->width, dst->height);
    if ((unsigned)c->matrix > DVPP_CSC_BT709)
        return dvpp_err_set(err, DVPP_EINVAL, "csc", "unknown CSC matrix %d",
                            (int)c->matrix);
    if (c->alpha < -1 || c->alpha > 255)
        return dvpp_err_set(err, DVPP_EINVAL, "alpha",
                            "alpha %d is outside -1..255", c->alpha);
    if (!src->data || !dst->data)
        return dvpp_err_set(err, DVPP_EINVAL, "data",
                            "colour conversion needs both pixel buffers");
    return DVPP_OK;
}

static void run_path(const csc_job *j)
{
    unsigned ls = j->fs->lay, ld = j->fd->lay;

    if (j->fs == j->fd)
        conv_copy(j);
    else if (ls == LAY_RGB && ld == LAY_RGB)
        conv_shuffle(j);
    else if (ls == LAY_GRAY && ld == LAY_RGB)
        conv_shuffle(j);
    else if (ls == LAY_RGB && (ld == LAY_GRAY || ld == LAY_Y))
        conv_rgb_luma(j);
    else if (ls == LAY_RGB)
        conv_rgb_yuv(j);
    else if (ld == LAY_RGB)
        conv_yuv_rgb(j);
    else
        conv_yuv_yuv(j); /* YUV, YUV400 and grey among themselves */
}

dvpp_status dvpp_csc_convert(const dvpp_image *src, dvpp_image *dst,
                             const dvpp_csc *c, dvpp_scratch *scratch,
                             dvpp_err *err)
{
    dvpp_scratch local;
    dvpp_status st;
    csc_job j;

    st = check_args(src, dst, c, err);
    if (st != DVPP_OK)
        return st;
    memset(&j, 0, sizeof(j));
    st = dvpp_image_planes(src, &j.ps, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(dst, &j.pd, err);
    if (st != DVPP_OK)
        return st;
    j.src = src;
    j.dst = dst;
    j.fs = fmt_find(src->format);
    j.fd = fmt_find(dst->format);
    j.k = &k_coef[c->matrix][c->full_range];
    j.kg = c->pil_luma ? &k_pil_luma : &k_coef[c->matrix][1];
    j.kern = dvpp__csc_kern_get(c->level);
    j.alpha = (uint8_t)(c->alpha < 0 ? 255 : c->alpha);
    j.w = src->width;
    j.h = src->height;
    if (!scratch) {
        dvpp_scratch_init(&local);
        scratch = &local;
    }
    st = job_rows(&j, scratch, err);
    if (st == DVPP_OK)
        run_path(&j);
    if (scratch == &local)
        dvpp_scratch_fini(&local);
    return st;
}

/* ---------------------------------------------------------------------
 * Row converter for fused pipelines.
 * ------------------------------------------------------------------- */

_Static_assert(sizeof(dvpp__csc_pix) <= sizeof(((dvpp_csc_rows *)0)->pix),
               "dvpp_csc_rows.pix must hold a dvpp__csc_pix");

dvpp_status dvpp_csc_rows_init(dvpp_csc_rows *r, const dvpp_image *src,
                               dvpp_pixfmt dst_fmt, const dvpp_csc *c,
                               dvpp_err *err)
{
    const fmt_desc *fs = fmt_find(src->format), *fd = fmt_find(dst_fmt);
    dvpp__csc_pix o;
    dvpp_status st;

    if (!fs || !fd || !(fs->lay == LAY_SP || fs->lay == LAY_P) || !fs->sx ||
        !fs->sy || fd->lay != LAY_RGB)
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "row conversion takes 4:2:0 YUV to RGB, not %s to %s",
                            dvpp_pixfmt_name(src->format),
                            dvpp_pixfmt_name(dst_fmt));
    st = dvpp_image_planes(src, &r->planes, err);
    if (st != DVPP_OK)
        return st;
    r->src = src;
    r->kern = dvpp__csc_kern_get(c->level);
    r->coef = dvpp__csc_coef_get(c->matrix, c->full_range);
    o = pix_of(fd, c->alpha < 0 ? 255 : (uint8_t)c->alpha);
    memcpy(r->pix, &o, sizeof(o));
    r->v_first = fs->v_first;
    r->planar = fs->lay == LAY_P;
    return DVPP_OK;
}

void dvpp_csc_rows_get(const dvpp_csc_rows *r, uint32_t x, uint32_t y,
                       uint32_t w, uint8_t *out)
{
    const dvpp__csc_kern *k = r->kern;
    const dvpp_image *s = r->src;
    const dvpp_planes *pl = &r->planes;
    dvpp__csc_pix o;
    dvpp__yuv_rows rows;
    const uint8_t *c1 = s->data + pl->p[1].offset + (size_t)(y / 2) * pl->p[1].stride;

    memcpy(&o, r->pix, sizeof(o));
    rows.y0 = s->data + pl->p[0].offset + (size_t)y * pl->p[0].stride + x;
    rows.y1 = NULL;
    rows.d0 = out;
    rows.d1 = NULL;
    if (r->planar) {
        const uint8_t *c2 = s->data + pl->p[2].offset +
                            (size_t)(y / 2) * pl->p[2].stride;
        rows.u = (r->v_first ? c2 : c1) + x / 2;
        rows.v = (r->v_first ? c1 : c2) + x / 2;
        rows.cstep = 1;
    } else {
        rows.u = c1 + x + (r->v_first ? 1 : 0);
        rows.v = c1 + x + (r->v_first ? 0 : 1);
        rows.cstep = 2;
    }
    k->yuv_rgb_sub(&rows, w, r->coef, &o);
}
