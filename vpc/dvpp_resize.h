/* dvpp_resize: the resize engine of VPC, on planes of interleaved u8.
 *
 * One plane = rows of `width * channels` bytes (channels 1..4) at a stride.
 * A plan fixes (parity, interpolation, source size, destination size,
 * channels) and precomputes everything that does not depend on pixels:
 * per-output-column and per-output-row source indices and fixed-point
 * coefficients, shared by the scalar and every SIMD variant so that all
 * variants give identical bytes. Running a plan is thread-safe (the plan
 * is read-only); each thread passes its own dvpp_scratch.
 *
 * A crop is folded in by the caller: pass the crop's first pixel as @src
 * and its size as the source size. Semantics are those of resizing the
 * cropped image on its own (edges clamp at the crop box), which is what
 * `cv2.resize(img[y:y+h, x:x+w])` and DVPP's crop-resize do.
 *
 * Parity contract (tested against the real libraries in tests/e2e):
 *   DVPP_PARITY_CV2  OpenCV 4.x cv2.resize INTER_NEAREST (sx = floor(dx *
 *                    src/dst)), INTER_LINEAR and INTER_CUBIC (half-pixel
 *                    centres, clamped, 11-bit fixed point), INTER_AREA
 *                    (area-weighted down, OpenCV's linear variant up):
 *                    max |diff| <= 1 against cv2.resize on u8.
 *   DVPP_PARITY_PIL  Pillow's ImagingResample: BILINEAR, BICUBIC (a=-0.5),
 *                    LANCZOS (a=3), BOX, HAMMING, support scaled by the reduction
 *                    (antialiased), horizontal pass then vertical, each
 *                    rounded to u8 with 22-bit coefficients: max |diff| <= 1
 *                    against Image.resize (bit-exact is the aim).
 *   DVPP_PARITY_TF   TensorFlow 1 legacy resize_bilinear / nearest
 *                    (align_corners=False, half_pixel_centers=False):
 *                    sx = dx * src/dst, rounded to nearest u8.
 *   DVPP_PARITY_ASCEND is resolved by the caller to CV2 or TF (DVPP VPC
 *                    interpolation modes 1-4) and never reaches the engine.
 */
#ifndef DVPP_RESIZE_H
#define DVPP_RESIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_cpu.h"
#include "dvpp_scratch.h"
#include "dvpp_status.h"

typedef enum dvpp_interp {
    DVPP_INTERP_NEAREST = 0,
    DVPP_INTERP_BILINEAR = 1,
    DVPP_INTERP_BICUBIC = 2,
    DVPP_INTERP_AREA = 3,    /* cv2 only */
    DVPP_INTERP_LANCZOS = 4, /* pil only */
    DVPP_INTERP_BOX = 5,     /* pil only */
    DVPP_INTERP_HAMMING = 6, /* pil only */
} dvpp_interp;

typedef enum dvpp_parity {
    DVPP_PARITY_CV2 = 0,
    DVPP_PARITY_PIL = 1,
    DVPP_PARITY_TF = 2,
    DVPP_PARITY_ASCEND = 3,
} dvpp_parity;

/* "nearest", "bilinear", "bicubic", "area", "lanczos", "box", "hamming". */
const char *dvpp_interp_name(dvpp_interp i);
bool dvpp_interp_parse(const char *s, dvpp_interp *out);
/* "cv2", "pil", "tf", "ascend". */
const char *dvpp_parity_name(dvpp_parity p);
bool dvpp_parity_parse(const char *s, dvpp_parity *out);

/* True when the engine implements @interp under @parity (cv2: nearest,
 * bilinear, bicubic, area; pil: nearest, bilinear, bicubic, lanczos, box;
 * tf: nearest, bilinear). */
bool dvpp_resize_supported(dvpp_parity parity, dvpp_interp interp);

typedef struct dvpp_resize_plan dvpp_resize_plan;

/* Build a plan. Sizes are pixels (>= 1, <= 65535 per side after the
 * caller's limits); @channels 1..4. DVPP_EINVAL for an unsupported
 * combination (the message names it), DVPP_ENOMEM. Caller owns the plan;
 * release with dvpp_resize_plan_free(). The kernels are those of
 * dvpp_simd_active() unless dvpp_resize_plan_set_level() changes them. */
dvpp_status dvpp_resize_plan_new(dvpp_parity parity, dvpp_interp interp,
                                 uint32_t src_w, uint32_t src_h, uint32_t dst_w,
                                 uint32_t dst_h, unsigned channels,
                                 dvpp_resize_plan **out, dvpp_err *err);

/* Restrict @p to the output window (@x, @y, @w, @h) of its destination:
 * the plan then computes only those pixels, with the very coefficients
 * of the whole destination (each output pixel depends only on its own
 * table entries), so its output equals that window of the full resize
 * byte for byte: a resize followed by a crop, without the pixels the
 * crop drops. The plan's source becomes the rectangle those pixels read
 * (dvpp_resize_plan_source): the caller passes its first pixel as @src
 * to the run functions, and only its rows and columns are read (plus the
 * usual zero-weight over-read of kernels, RESIZE_OVERREAD). Every mode
 * and parity. Once per plan, before it is shared. DVPP_EINVAL when the
 * window is empty, outside the destination or the plan is windowed. */
dvpp_status dvpp_resize_plan_window(dvpp_resize_plan *p, uint32_t x, uint32_t y,
                                    uint32_t w, uint32_t h, dvpp_err *err);

/* The source rectangle @p reads, in the coordinates of the source it was
 * built for: the whole source unless windowed. Any pointer may be NULL. */
void dvpp_resize_plan_source(const dvpp_resize_plan *p, uint32_t *x, uint32_t *y,
                             uint32_t *w, uint32_t *h);

/* The source rectangle the output window (@x, @y, @w, @h) of a resize of
 * @src_w x @src_h to @dst_w x @dst_h under @parity/@interp reads (what
 * dvpp_resize_plan_window would give), without keeping a plan: for a
 * decoder asked to decode only that region. */
dvpp_status dvpp_resize_window_source(dvpp_parity parity, dvpp_interp interp,
                                      uint32_t src_w, uint32_t src_h, uint32_t dst_w,
                                      uint32_t dst_h, unsigned channels, uint32_t x,
                                      uint32_t y, uint32_t w, uint32_t h,
                                      uint32_t rect[4], dvpp_err *err);

/* Use the kernels of @level (capped at the CPU's) for this plan: the
 * checkasm-style tests run one plan at every level. */
void dvpp_resize_plan_set_level(dvpp_resize_plan *p, dvpp_simd_level level);

void dvpp_resize_plan_free(dvpp_resize_plan *p);

/* Resize the plane at @src (stride @src_stride bytes) into @dst (stride
 * @dst_stride). Only the dst_w * channels bytes of each of the dst_h rows
 * are written. Temporary rows come from @scratch (slots 0..3). */
dvpp_status dvpp_resize_run(const dvpp_resize_plan *p, const uint8_t *src,
                            size_t src_stride, uint8_t *dst, size_t dst_stride,
                            dvpp_scratch *scratch, dvpp_err *err);

/* Source rows produced on demand. @fn writes source row @y (src_w *
 * channels bytes) into @buf and returns the row to read (@buf, or a row of
 * its own that stays valid until the next call and has 64 readable bytes
 * after its end, as @buf has: the horizontal kernels may read that far,
 * vpc/resize_int.h's RESIZE_OVERREAD). Rows are asked for in
 * increasing order, each at most once, and only the rows the resize reads:
 * a producer can compute just those (NV12 -> RGB converted only where a
 * downscale samples it). */
typedef const uint8_t *(*dvpp_resize_row_fn)(void *ctx, uint32_t y, uint8_t *buf);

/* True when @p can run from a row producer: it reads each source row once,
 * through the horizontal pass (nearest and separable plans that change the
 * width). Copies, integer-factor area and height-only plans read several
 * rows at once and need dvpp_resize_run. */
bool dvpp_resize_plan_streams(const dvpp_resize_plan *p);

/* dvpp_resize_run with the source rows from @fn/@ctx. DVPP_EINVAL when
 * the plan does not stream. */
dvpp_status dvpp_resize_run_rows(const dvpp_resize_plan *p,
                                 dvpp_resize_row_fn fn, void *ctx, uint8_t *dst,
                                 size_t dst_stride, dvpp_scratch *scratch,
                                 dvpp_err *err);

/* Receives output row @y (dst_w * channels bytes) as soon as it is
 * complete; the buffer is reused for the next row. */
typedef void (*dvpp_resize_row_sink)(void *ctx, uint32_t y, const uint8_t *row);

/* Resize without an output plane: each output row goes to @sink, so a
 * consumer (normalisation into a tensor) takes it while it is hot; with
 * @fn the source rows come from a producer too (the plan must stream),
 * else from @src/@src_stride. The row buffer is scratch slot 3. Same bytes
 * as dvpp_resize_run. DVPP_EINVAL for missing arguments. */
dvpp_status dvpp_resize_run_sink(const dvpp_resize_plan *p, const uint8_t *src,
                                 size_t src_stride, dvpp_resize_row_fn fn,
                                 void *fn_ctx, dvpp_resize_row_sink sink,
                                 void *sink_ctx, dvpp_scratch *scratch,
                                 dvpp_err *err);

#endif
