/* Folder-private: the kernels behind dvpp_csc and dvpp_border.
 *
 * Row kernels work on one or two rows at a time and form one dispatch
 * table per SIMD level (scalar first, then SSE4.1, AVX2, AVX-512 on x86_64
 * or NEON on aarch64 override the entries they implement). Every variant
 * is bit-exact with the scalar one: they evaluate the same integer
 * formulas on the same coefficient tables (dvpp__csc_coef), only more
 * lanes at a time. The ISA variants live in vpc/x86/<family>_<isa>.c, the
 * only files built with that ISA's -m flags, and vpc/arm/<family>_neon.c
 * (baseline ARMv8.0, no flag); callers reach them only through the tables.
 *
 * Kernels never allocate, never read or write outside the rows and widths
 * they are given, and are thread-safe (all state is in their arguments).
 */
#ifndef DVPP_CSC_INT_H
#define DVPP_CSC_INT_H

#include <stddef.h>
#include <stdint.h>

#include "dvpp_cpu.h"

/* Fixed point of every CSC coefficient: 20 fractional bits, as OpenCV's
 * ITU-R BT.601 YUV420 code (ITUR_BT_601_SHIFT), so its constants are used
 * verbatim and the other matrices share the same arithmetic. Products stay
 * below 2^30 for 8-bit inputs, so 32-bit lanes never overflow. */
#define DVPP__CSC_SHIFT 20
#define DVPP__CSC_HALF (1 << (DVPP__CSC_SHIFT - 1))

/* One colour matrix in fixed point (see dvpp_csc.c for the tables). */
typedef struct dvpp__csc_coef {
    int32_t y_off;  /* YUV->RGB: subtracted from Y, clamped at 0 (16 or 0) */
    int32_t cy;     /* YUV->RGB: Y scale */
    int32_t cvr;    /* YUV->RGB: (V-128) -> R */
    int32_t cug;    /* YUV->RGB: (U-128) -> G */
    int32_t cvg;    /* YUV->RGB: (V-128) -> G */
    int32_t cub;    /* YUV->RGB: (U-128) -> B */
    int32_t yr;     /* RGB->YUV: R -> Y */
    int32_t yg;     /* RGB->YUV: G -> Y */
    int32_t yb;     /* RGB->YUV: B -> Y */
    int32_t y_bias; /* RGB->YUV: (Y offset << SHIFT) + HALF */
    int32_t ur;     /* RGB->YUV: R -> U */
    int32_t ug;     /* RGB->YUV: G -> U */
    int32_t ub;     /* RGB->YUV: B -> U */
    int32_t vr;     /* RGB->YUV: R -> V */
    int32_t vg;     /* RGB->YUV: G -> V */
    int32_t vb;     /* RGB->YUV: B -> V; chroma bias is (128 << SHIFT) + HALF */
} dvpp__csc_coef;

#define DVPP__CSC_CBIAS ((128 << DVPP__CSC_SHIFT) + DVPP__CSC_HALF)

/* The immutable table for @matrix (0 BT.601, 1 BT.709) and range; NULL
 * for a matrix outside the table. */
const dvpp__csc_coef *dvpp__csc_coef_get(int matrix, int full_range);

/* The byte layout of a packed RGB-family pixel. */
typedef struct dvpp__csc_pix {
    uint8_t cn;          /* bytes per pixel: 3 or 4 */
    uint8_t ri;          /* byte offset of R */
    uint8_t gi;          /* byte offset of G */
    uint8_t bi;          /* byte offset of B */
    uint8_t ai;          /* byte offset of alpha (cn == 4) */
    uint8_t swap_rb;     /* 1: B comes before R (BGR, BGRA, ABGR) */
    uint8_t alpha_first; /* 1: alpha is byte 0 (ARGB, ABGR) */
    uint8_t alpha;       /* alpha value YUV->RGB kernels write */
} dvpp__csc_pix;

/* Rows for a YUV -> RGB call. With chroma subsampled horizontally, chroma
 * sample i covers pixels 2i and 2i+1 of both luma rows (an odd width ends
 * on a half-covered sample); otherwise sample i covers pixel i of y0. */
typedef struct dvpp__yuv_rows {
    const uint8_t *y0; /* first luma row */
    const uint8_t *y1; /* second luma row sharing the chroma row, or NULL */
    const uint8_t *u;  /* first U sample */
    const uint8_t *v;  /* first V sample; with cstep 2, u and v are adjacent */
    uint8_t *d0;       /* output row for y0 */
    uint8_t *d1;       /* output row for y1 (ignored when y1 is NULL) */
    uint32_t cstep;    /* bytes between chroma samples: 1 planar, 2 paired */
} dvpp__yuv_rows;

/* Rows for an RGB -> YUV call (chroma from the even pixels of s0). */
typedef struct dvpp__rgb_rows {
    const uint8_t *s0; /* first packed RGB row */
    const uint8_t *s1; /* second row (its luma only), or NULL */
    uint8_t *y0;       /* luma of s0 */
    uint8_t *y1;       /* luma of s1 (ignored when s1 is NULL) */
    uint8_t *u;        /* first U output; NULL: luma only */
    uint8_t *v;        /* first V output; with cstep 2, adjacent to u */
    uint32_t cstep;    /* bytes between chroma outputs: 1 or 2 */
} dvpp__rgb_rows;

/* Channel reorder: output pixel byte c = input pixel byte idx[c], or the
 * constant alpha where idx[c] is DVPP__SHUF_ALPHA. scn 1 replicates grey. */
#define DVPP__SHUF_ALPHA 0xFF
typedef struct dvpp__csc_shuf {
    uint8_t scn;    /* input bytes per pixel: 1, 3 or 4 */
    uint8_t dcn;    /* output bytes per pixel: 3 or 4 */
    uint8_t idx[4]; /* source byte of each output byte */
    uint8_t alpha;  /* constant for DVPP__SHUF_ALPHA bytes */
} dvpp__csc_shuf;

typedef void (*dvpp__yuv_rgb_fn)(const dvpp__yuv_rows *r, size_t w,
                                 const dvpp__csc_coef *k,
                                 const dvpp__csc_pix *o);
typedef void (*dvpp__rgb_yuv_fn)(const dvpp__rgb_rows *r, size_t w,
                                 const dvpp__csc_coef *k,
                                 const dvpp__csc_pix *in);
typedef void (*dvpp__rgb_y_fn)(const uint8_t *s, uint8_t *y, size_t w,
                               const dvpp__csc_coef *k,
                               const dvpp__csc_pix *in);
typedef void (*dvpp__shuf_fn)(const uint8_t *s, uint8_t *d, size_t w,
                              const dvpp__csc_shuf *m);

/* One CSC dispatch table. */
typedef struct dvpp__csc_kern {
    dvpp_simd_level level;      /* highest level any entry comes from */
    dvpp__yuv_rgb_fn yuv_rgb_sub; /* chroma per 2 pixels, 1 or 2 rows */
    dvpp__yuv_rgb_fn yuv_rgb_444; /* chroma per pixel, y0 only */
    dvpp__rgb_yuv_fn rgb_yuv_sub; /* chroma from even pixels, 1 or 2 rows */
    dvpp__rgb_yuv_fn rgb_yuv_444; /* chroma per pixel, s0 only */
    dvpp__rgb_y_fn rgb_y;       /* luma only */
    dvpp__shuf_fn shuffle;      /* RGB-family reorder, grey replicate */
} dvpp__csc_kern;

/* Fill @k for @level (scalar first, then each ISA up to @level). */
void dvpp__csc_kern_init(dvpp__csc_kern *k, dvpp_simd_level level);

/* The table for min(@level, dvpp_simd_active()), built once; thread-safe. */
const dvpp__csc_kern *dvpp__csc_kern_get(dvpp_simd_level level);

/* Scalar references, also used by the SIMD variants for their tails. */
void dvpp__yuv_rgb_sub_scalar(const dvpp__yuv_rows *r, size_t w,
                              const dvpp__csc_coef *k, const dvpp__csc_pix *o);
void dvpp__rgb_yuv_sub_scalar(const dvpp__rgb_rows *r, size_t w,
                              const dvpp__csc_coef *k,
                              const dvpp__csc_pix *in);
void dvpp__rgb_y_scalar(const uint8_t *s, uint8_t *y, size_t w,
                        const dvpp__csc_coef *k, const dvpp__csc_pix *in);
void dvpp__shuffle_scalar(const uint8_t *s, uint8_t *d, size_t w,
                          const dvpp__csc_shuf *m);

void dvpp__yuv_rgb_sub_sse41(const dvpp__yuv_rows *r, size_t w,
                             const dvpp__csc_coef *k, const dvpp__csc_pix *o);
void dvpp__rgb_yuv_sub_sse41(const dvpp__rgb_rows *r, size_t w,
                             const dvpp__csc_coef *k, const dvpp__csc_pix *in);
void dvpp__shuffle_sse41(const uint8_t *s, uint8_t *d, size_t w,
                         const dvpp__csc_shuf *m);

void dvpp__yuv_rgb_sub_avx2(const dvpp__yuv_rows *r, size_t w,
                            const dvpp__csc_coef *k, const dvpp__csc_pix *o);
void dvpp__rgb_yuv_sub_avx2(const dvpp__rgb_rows *r, size_t w,
                            const dvpp__csc_coef *k, const dvpp__csc_pix *in);
void dvpp__rgb_y_avx2(const uint8_t *s, uint8_t *y, size_t w,
                      const dvpp__csc_coef *k, const dvpp__csc_pix *in);
void dvpp__shuffle_avx2(const uint8_t *s, uint8_t *d, size_t w,
                        const dvpp__csc_shuf *m);

void dvpp__yuv_rgb_sub_avx512(const dvpp__yuv_rows *r, size_t w,
                              const dvpp__csc_coef *k, const dvpp__csc_pix *o);
void dvpp__rgb_yuv_sub_avx512(const dvpp__rgb_rows *r, size_t w,
                              const dvpp__csc_coef *k,
                              const dvpp__csc_pix *in);
void dvpp__rgb_y_avx512(const uint8_t *s, uint8_t *y, size_t w,
                        const dvpp__csc_coef *k, const dvpp__csc_pix *in);
void dvpp__shuffle_avx512(const uint8_t *s, uint8_t *d, size_t w,
                          const dvpp__csc_shuf *m);

void dvpp__yuv_rgb_sub_neon(const dvpp__yuv_rows *r, size_t w,
                            const dvpp__csc_coef *k, const dvpp__csc_pix *o);
void dvpp__rgb_yuv_sub_neon(const dvpp__rgb_rows *r, size_t w,
                            const dvpp__csc_coef *k, const dvpp__csc_pix *in);
void dvpp__rgb_y_neon(const uint8_t *s, uint8_t *y, size_t w,
                      const dvpp__csc_coef *k, const dvpp__csc_pix *in);
void dvpp__shuffle_neon(const uint8_t *s, uint8_t *d, size_t w,
                        const dvpp__csc_shuf *m);

/* Shuffle tables shared by the x86 kernels (dvpp_csc.c explains them). */
extern const uint8_t dvpp__csc_pi_inv[16];
extern const uint8_t dvpp__csc_pi_rgb3[3][3][16];
extern const uint8_t dvpp__csc_de3[3][3][16];
extern const uint8_t dvpp__csc_de4[16];

/* Helpers for the SIMD set-up: a coefficient c split as c = hi*128 + lo
 * (0 <= lo < 128) so x*c = x*lo + (x<<7)*hi is exact with 16-bit pmaddwd
 * operands for 8-bit x: |hi| < 2^15 for every |c| < 2^22. */
static inline int16_t dvpp__csc_lo(int32_t c)
{
    return (int16_t)(c & 127);
}

static inline int16_t dvpp__csc_hi(int32_t c)
{
    return (int16_t)((c - (c & 127)) / 128);
}

/* Two int16 in one int32 lane, @a in the low half (pmaddwd pairs). */
static inline int32_t dvpp__csc_pair(int16_t a, int16_t b)
{
    return (int32_t)((uint32_t)(uint16_t)a | ((uint32_t)(uint16_t)b << 16));
}

/* @r advanced by @i pixels (@i even; @cn output bytes per pixel): how a
 * SIMD kernel hands its tail to the scalar one. */
static inline dvpp__yuv_rows dvpp__yuv_rows_at(const dvpp__yuv_rows *r,
                                               size_t i, unsigned cn)
{
    dvpp__yuv_rows t = *r;
    t.y0 += i;
    t.d0 += i * cn;
    if (t.y1) {
        t.y1 += i;
        t.d1 += i * cn;
    }
    t.u += i / 2 * t.cstep;
    t.v += i / 2 * t.cstep;
    return t;
}

/* @r advanced by @i pixels (@i even; @cn input bytes per pixel). */
static inline dvpp__rgb_rows dvpp__rgb_rows_at(const dvpp__rgb_rows *r,
                                               size_t i, unsigned cn)
{
    dvpp__rgb_rows t = *r;
    t.s0 += i * cn;
    t.y0 += i;
    if (t.s1) {
        t.s1 += i * cn;
        t.y1 += i;
    }
    if (t.u) {
        t.u += i / 2 * t.cstep;
        t.v += i / 2 * t.cstep;
    }
    return t;
}

/* Border: fill @n pixels of @cn bytes (1..4) at @dst with the pixel @px. */
typedef void (*dvpp__fill_fn)(uint8_t *dst, size_t n, const uint8_t *px,
                              unsigned cn);

typedef struct dvpp__border_kern {
    dvpp_simd_level level; /* highest level any entry comes from */
    dvpp__fill_fn fill;    /* CONSTANT row fill */
} dvpp__border_kern;

void dvpp__border_kern_init(dvpp__border_kern *k, dvpp_simd_level level);
const dvpp__border_kern *dvpp__border_kern_get(dvpp_simd_level level);

void dvpp__fill_scalar(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn);
void dvpp__fill_sse41(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn);
void dvpp__fill_avx2(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn);
void dvpp__fill_avx512(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn);
void dvpp__fill_neon(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn);

#endif
