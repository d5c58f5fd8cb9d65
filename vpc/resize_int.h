/* Folder-private: the resize plan and the kernels behind its dispatch table.
 *
 * A plan is built once (dvpp_resize.c: coefficients in the exact arithmetic
 * of the library each parity imitates) and then only read. Kernels see only
 * tables of integers or floats, never the parity: every variant of a kernel
 * (scalar in resize_scalar.c, x86/resize_<isa>.c, arm/resize_neon.c) reads
 * the same tables and must give the same bytes. The ISA files are the only
 * ones built with their -m flags (NEON needs none) and are reached only
 * through resize_kern.
 *
 * Memory rules every kernel relies on (the driver guarantees them):
 *   - A source row may be read up to RESIZE_OVERREAD bytes past the last
 *     byte of the row (the driver copies the last rows of the plane into a
 *     padded buffer when the plane itself ends too early).
 *   - Rows of the driver's ring (intermediate rows) may be written up to
 *     RESIZE_OVERWRITE bytes past their end.
 *   - Destination rows are written exactly: [0, n) and nothing else.
 */
#ifndef DVPP_RESIZE_INT_H
#define DVPP_RESIZE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_cpu.h"
#include "dvpp_resize.h"

#define RESIZE_OVERREAD 64
#define RESIZE_OVERWRITE 64

/* Horizontal (or vertical) filter table. Output index i reads the `taps`
 * consecutive source pixels (rows) from start[i]; the coefficients are
 * w[i * taps + k]. Every table has a uniform tap count: shorter windows are
 * padded with zero coefficients, which changes no sum (integers are exact;
 * float sums of non-negative terms are unchanged by adding +0). Windows lie
 * inside the source unless the source is narrower than `taps`. */
typedef struct resize_tab {
    uint32_t n;      /* output columns (rows) */
    uint32_t taps;   /* coefficients per output */
    int32_t *start;  /* first source pixel (row) of each output */
    int16_t *w16;    /* cv2 fixed point: 11-bit weights (sum 2048) */
    int32_t *w32;    /* pil: 22-bit weights */
    float *wf;       /* cv2 area / tf: float weights */
    int32_t *wq;     /* pil, 3 or 4 channels: w32 spread over lanes for
                      * SIMD (see RESIZE_WQ below), else NULL */
} resize_tab;

/* Pillow weights for 3- and 4-channel rows, one tap per 4 lanes: tap k of
 * column x is {w, w, w, w} (4 channels) or {w, w, w, 0} (3 channels, the
 * fourth lane meets the next pixel's first byte), at RESIZE_WQ(t, x, k).
 * Taps of a column are consecutive, so SSE reads one tap, AVX2 two and
 * AVX-512 four with one load. */
#define RESIZE_WQ(t, x, k) ((t)->wq + ((size_t)(x) * (t)->taps + (k)) * 4)

/* cv2's vertical taps are not merged at the edges (its rounding is not
 * linear), so rows repeat: row[i * taps + k] is the clamped source row. */
typedef struct resize_vtab {
    uint32_t n;     /* output rows */
    uint32_t taps;  /* rows per output row */
    int32_t *row;   /* clamped source row of each tap (non-decreasing in k) */
    int16_t *w16;   /* cv2 fixed point */
    int32_t *w32;   /* pil */
    float *wf;      /* cv2 area / tf */
} resize_vtab;

/* The kernel family. Element counts (n) are bytes of u8 output, i.e.
 * pixels * channels, unless named pixels. */
typedef struct resize_kern {
    dvpp_simd_level level; /* the level this table was built for */

    /* Nearest: dst pixel i = the pixel at byte offset xofs[i] of src. */
    void (*nearest)(const uint8_t *src, uint8_t *dst, const int32_t *xofs,
                    uint32_t pixels, unsigned cn);

    /* cv2 horizontal fixed point, u8 -> i32 (11-bit weights, exact sums). */
    void (*cv_h)(const uint8_t *src, int32_t *dst, const resize_tab *t,
                 unsigned cn);
    /* cv2 vertical linear (OpenCV's VResizeLinear<uchar> rounding):
     * ((b0*(s0>>4))>>16) + ((b1*(s1>>4))>>16) + 2) >> 2. */
    void (*cv_v2)(const int32_t *s0, const int32_t *s1, const int16_t *beta,
                  uint8_t *dst, size_t n);
    /* cv2 vertical cubic: elements [0, nf) in OpenCV's SIMD float order,
     * [nf, n) in its integer fallback ((sum + 2^21) >> 22). */
    void (*cv_v4)(const int32_t *const *rows, const int16_t *beta,
                  uint8_t *dst, size_t n, size_t nf);

    /* Pillow horizontal, u8 -> u8 (22-bit weights, clip8). */
    void (*pil_h)(const uint8_t *src, uint8_t *dst, const resize_tab *t,
                  unsigned cn);
    /* Pillow vertical, @taps rows -> u8. */
    void (*pil_v)(const uint8_t *const *rows, const int32_t *k, uint32_t taps,
                  uint8_t *dst, size_t n);

    /* cv2 area, horizontal: u8 -> f32, sum in tap order. */
    void (*area_h)(const uint8_t *src, float *dst, const resize_tab *t,
                   unsigned cn);
    /* cv2 area, vertical: sum of beta[k] * rows[k] in order, rounded half
     * to even and saturated. */
    void (*area_v)(const float *const *rows, const float *beta, uint32_t taps,
                   uint8_t *dst, size_t n);
    /* cv2 area with integer factors kx x ky: sum of each block of @src
     * (ky rows at @stride) times @scale (float), rounded half to even;
     * or (sum + 2) >> 2 when @round_up (OpenCV's 2x2 fast path). */
    void (*area_fast)(const uint8_t *src, size_t stride, uint8_t *dst,
                      uint32_t pixels, unsigned cn, uint32_t kx, uint32_t ky,
                      float scale, int round_up);

    /* TensorFlow legacy bilinear: horizontal lerp u8 -> f32
     * (l + (r - l) * t) and vertical lerp f32 -> u8 rounded half to even. */
    void (*tf_h)(const uint8_t *src, float *dst, const int32_t *x0,
                 const int32_t *x1, const float *lerp, uint32_t pixels,
                 unsigned cn);
    void (*tf_v)(const float *top, const float *bot, float lerp, uint8_t *dst,
                 size_t n);
} resize_kern;

/* Fill @k with the best kernels available at or below @level (scalar first,
 * then ascending ISA overrides). */
void dvpp__resize_kern_init(resize_kern *k, dvpp_simd_level level);

/* How a plan runs. */
typedef enum resize_mode {
    RESIZE_COPY,      /* same size: rows copied */
    RESIZE_NEAREST,   /* column/row index tables */
    RESIZE_SEP,       /* horizontal pass into a ring of rows, vertical pass */
    RESIZE_AREA_FAST, /* cv2 area (or linear at 1/2) with integer factors */
} resize_mode;

typedef enum resize_hpass {
    HPASS_NONE, /* vertical pass reads source rows (pil, width unchanged) */
    HPASS_CV,   /* u8 -> i32 */
    HPASS_PIL,  /* u8 -> u8 */
    HPASS_AREA, /* u8 -> f32 */
    HPASS_TF,   /* u8 -> f32 */
} resize_hpass;

typedef enum resize_vpass {
    VPASS_NONE, /* horizontal pass writes destination rows (pil) */
    VPASS_CV2,
    VPASS_CV4,
    VPASS_PIL,
    VPASS_AREA,
    VPASS_TF,
} resize_vpass;

struct dvpp_resize_plan {
    dvpp_parity parity;   /* as asked */
    dvpp_interp interp;   /* as asked */
    uint32_t src_w;       /* source pixels per row */
    uint32_t src_h;       /* source rows */
    uint32_t dst_w;       /* destination pixels per row */
    uint32_t dst_h;       /* destination rows */
    unsigned cn;          /* channels, 1..4 */
    resize_mode mode;     /* how run() proceeds */
    resize_hpass hpass;   /* RESIZE_SEP: horizontal kernel */
    resize_vpass vpass;   /* RESIZE_SEP: vertical kernel */
    resize_kern kern;     /* dispatch table of this plan's level */

    int32_t *nn_x;        /* NEAREST: source byte offset per column */
    int32_t *nn_y;        /* NEAREST: source row per output row */

    resize_tab h;         /* SEP: horizontal table */
    int32_t *tf_x1;       /* SEP/tf: second source pixel per column */
    resize_vtab v;        /* SEP: vertical table */
    uint32_t ring_rows;   /* SEP: rows kept for the vertical pass */
    size_t ring_stride;   /* SEP: bytes per ring row */
    size_t cv4_nfloat;    /* SEP/cv2 cubic: elements OpenCV does in float */

    uint32_t kx;          /* AREA_FAST: horizontal factor */
    uint32_t ky;          /* AREA_FAST: vertical factor */
    float area_scale;     /* AREA_FAST: 1.f / (kx * ky) */
    int round_up;         /* AREA_FAST: OpenCV's (sum + 2) >> 2 path */

    uint32_t src_x0;      /* windowed: first source column the plan reads */
    uint32_t src_y0;      /* windowed: first source row */
    bool windowed;        /* dvpp_resize_plan_window ran */

    void *mem;            /* one block holding every table above */
    size_t mem_size;      /* its size, for dvpp_free */
};

/* Scalar kernels (resize_scalar.c): the reference every ISA must equal. */
void dvpp__resize_nearest_scalar(const uint8_t *src, uint8_t *dst,
                                 const int32_t *xofs, uint32_t pixels,
                                 unsigned cn);
void dvpp__resize_cv_h_scalar(const uint8_t *src, int32_t *dst,
                              const resize_tab *t, unsigned cn);
void dvpp__resize_cv_v2_scalar(const int32_t *s0, const int32_t *s1,
                               const int16_t *beta, uint8_t *dst, size_t n);
void dvpp__resize_cv_v4_scalar(const int32_t *const *rows,
                               const int16_t *beta, uint8_t *dst, size_t n,
                               size_t nf);
void dvpp__resize_pil_h_scalar(const uint8_t *src, uint8_t *dst,
                               const resize_tab *t, unsigned cn);
void dvpp__resize_pil_v_scalar(const uint8_t *const *rows, const int32_t *k,
                               uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_area_h_scalar(const uint8_t *src, float *dst,
                                const resize_tab *t, unsigned cn);
void dvpp__resize_area_v_scalar(const float *const *rows, const float *beta,
                                uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_area_fast_scalar(const uint8_t *src, size_t stride,
                                   uint8_t *dst, uint32_t pixels, unsigned cn,
                                   uint32_t kx, uint32_t ky, float scale,
                                   int round_up);
void dvpp__resize_tf_h_scalar(const uint8_t *src, float *dst,
                              const int32_t *x0, const int32_t *x1,
                              const float *lerp, uint32_t pixels, unsigned cn);
void dvpp__resize_tf_v_scalar(const float *top, const float *bot, float lerp,
                              uint8_t *dst, size_t n);

/* Scalar kernels over a sub-range, for SIMD tails. */
void dvpp__resize_pil_v_from_scalar(const uint8_t *const *rows,
                                    const int32_t *k, uint32_t taps,
                                    uint8_t *dst, size_t x0, size_t n);
void dvpp__resize_area_v_from_scalar(const float *const *rows,
                                     const float *beta, uint32_t taps,
                                     uint8_t *dst, size_t x0, size_t n);
void dvpp__resize_cv_h_cols_scalar(const uint8_t *src, int32_t *dst,
                                   const resize_tab *t, unsigned cn,
                                   uint32_t x0, uint32_t x1);
void dvpp__resize_pil_h_cols_scalar(const uint8_t *src, uint8_t *dst,
                                    const resize_tab *t, unsigned cn,
                                    uint32_t x0, uint32_t x1);
void dvpp__resize_area_h_cols_scalar(const uint8_t *src, float *dst,
                                     const resize_tab *t, unsigned cn,
                                     uint32_t x0, uint32_t x1);

/* SSE4.1 (x86/resize_sse41.c) */
void dvpp__resize_nearest_sse41(const uint8_t *src, uint8_t *dst,
                                const int32_t *xofs, uint32_t pixels,
                                unsigned cn);
void dvpp__resize_cv_h_sse41(const uint8_t *src, int32_t *dst,
                             const resize_tab *t, unsigned cn);
void dvpp__resize_cv_v2_sse41(const int32_t *s0, const int32_t *s1,
                              const int16_t *beta, uint8_t *dst, size_t n);
void dvpp__resize_cv_v4_sse41(const int32_t *const *rows, const int16_t *beta,
                              uint8_t *dst, size_t n, size_t nf);
void dvpp__resize_pil_h_sse41(const uint8_t *src, uint8_t *dst,
                              const resize_tab *t, unsigned cn);
void dvpp__resize_pil_v_sse41(const uint8_t *const *rows, const int32_t *k,
                              uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_area_v_sse41(const float *const *rows, const float *beta,
                               uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_area_fast_sse41(const uint8_t *src, size_t stride,
                                  uint8_t *dst, uint32_t pixels, unsigned cn,
                                  uint32_t kx, uint32_t ky, float scale,
                                  int round_up);
void dvpp__resize_tf_v_sse41(const float *top, const float *bot, float lerp,
                             uint8_t *dst, size_t n);

/* AVX2 (x86/resize_avx2.c) */
void dvpp__resize_nearest_avx2(const uint8_t *src, uint8_t *dst,
                               const int32_t *xofs, uint32_t pixels,
                               unsigned cn);
void dvpp__resize_cv_h_avx2(const uint8_t *src, int32_t *dst,
                            const resize_tab *t, unsigned cn);
void dvpp__resize_cv_v2_avx2(const int32_t *s0, const int32_t *s1,
                             const int16_t *beta, uint8_t *dst, size_t n);
void dvpp__resize_cv_v4_avx2(const int32_t *const *rows, const int16_t *beta,
                             uint8_t *dst, size_t n, size_t nf);
void dvpp__resize_pil_h_avx2(const uint8_t *src, uint8_t *dst,
                             const resize_tab *t, unsigned cn);
/* Columns [x0, x1) of a 3- or 4-channel row with t->wq (the AVX-512
 * kernel's tail). */
void dvpp__resize_pil_h_cols_avx2(const uint8_t *src, uint8_t *dst,
                                  const resize_tab *t, unsigned cn,
                                  uint32_t x0, uint32_t x1);
void dvpp__resize_pil_v_avx2(const uint8_t *const *rows, const int32_t *k,
                             uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_area_h_avx2(const uint8_t *src, float *dst,
                              const resize_tab *t, unsigned cn);
void dvpp__resize_area_v_avx2(const float *const *rows, const float *beta,
                              uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_tf_v_avx2(const float *top, const float *bot, float lerp,
                            uint8_t *dst, size_t n);

/* AVX-512 (x86/resize_avx512.c) */
void dvpp__resize_pil_h_avx512(const uint8_t *src, uint8_t *dst,
                               const resize_tab *t, unsigned cn);
void dvpp__resize_pil_v_avx512(const uint8_t *const *rows, const int32_t *k,
                               uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_nearest_avx512(const uint8_t *src, uint8_t *dst,
                                 const int32_t *xofs, uint32_t pixels,
                                 unsigned cn);
void dvpp__resize_cv_h_avx512(const uint8_t *src, int32_t *dst,
                              const resize_tab *t, unsigned cn);
void dvpp__resize_cv_v2_avx512(const int32_t *s0, const int32_t *s1,
                               const int16_t *beta, uint8_t *dst, size_t n);
void dvpp__resize_cv_v4_avx512(const int32_t *const *rows,
                               const int16_t *beta, uint8_t *dst, size_t n,
                               size_t nf);
void dvpp__resize_area_v_avx512(const float *const *rows, const float *beta,
                                uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_tf_v_avx512(const float *top, const float *bot, float lerp,
                              uint8_t *dst, size_t n);

/* NEON (arm/resize_neon.c) */
void dvpp__resize_nearest_neon(const uint8_t *src, uint8_t *dst,
                               const int32_t *xofs, uint32_t pixels,
                               unsigned cn);
void dvpp__resize_cv_h_neon(const uint8_t *src, int32_t *dst,
                            const resize_tab *t, unsigned cn);
void dvpp__resize_cv_v2_neon(const int32_t *s0, const int32_t *s1,
                             const int16_t *beta, uint8_t *dst, size_t n);
void dvpp__resize_cv_v4_neon(const int32_t *const *rows, const int16_t *beta,
                             uint8_t *dst, size_t n, size_t nf);
void dvpp__resize_pil_h_neon(const uint8_t *src, uint8_t *dst,
                             const resize_tab *t, unsigned cn);
void dvpp__resize_pil_v_neon(const uint8_t *const *rows, const int32_t *k,
                             uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_area_h_neon(const uint8_t *src, float *dst,
                              const resize_tab *t, unsigned cn);
void dvpp__resize_area_v_neon(const float *const *rows, const float *beta,
                              uint32_t taps, uint8_t *dst, size_t n);
void dvpp__resize_area_fast_neon(const uint8_t *src, size_t stride,
                                 uint8_t *dst, uint32_t pixels, unsigned cn,
                                 uint32_t kx, uint32_t ky, float scale,
                                 int round_up);
void dvpp__resize_tf_h_neon(const uint8_t *src, float *dst, const int32_t *x0,
                            const int32_t *x1, const float *lerp,
                            uint32_t pixels, unsigned cn);
void dvpp__resize_tf_v_neon(const float *top, const float *bot, float lerp,
                            uint8_t *dst, size_t n);

#endif
