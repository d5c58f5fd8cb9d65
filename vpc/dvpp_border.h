/* dvpp_border: make-border (cv2.copyMakeBorder / DVPP MakeBorder).
 *
 * Copies @src into @dst at (left, top) and fills the margins: CONSTANT
 * with a value per channel, REPLICATE the edge pixel, REFLECT (fedcba|abcd)
 * or REFLECT_101 (gfedcb|abcdefgh), with OpenCV's index rules so results
 * equal cv2.copyMakeBorder bit for bit, including margins wider than the
 * image. Works on packed formats (RGB family, GRAY, YUV400, packed 444)
 * and on planar/semi-planar YUV, whose chroma planes take half the
 * margins (the margins must then be even; values are Y, U, V). Packed
 * 4:2:2 (YUYV...) needs even left/right margins.
 * Thread-safe; kernels (row fills) come from a dispatch table per SIMD
 * level, bit-exact with the scalar reference.
 */
#ifndef DVPP_BORDER_H
#define DVPP_BORDER_H

#include <stdint.h>

#include "dvpp_cpu.h"
#include "dvpp_image.h"
#include "dvpp_status.h"

/* Numbered as acldvppBorderType. */
typedef enum dvpp_border_type {
    DVPP_BORDER_CONSTANT = 0,
    DVPP_BORDER_REPLICATE = 1,
    DVPP_BORDER_REFLECT = 2,
    DVPP_BORDER_REFLECT_101 = 3,
} dvpp_border_type;

typedef struct dvpp_border {
    uint32_t top, bottom, left, right; /* margins in pixels */
    dvpp_border_type type;
    double value[4];   /* CONSTANT: per channel in the format's channel order
                          (R,G,B[,A] for rgb; Y,U,V for YUV); rounded and
                          saturated to u8 as OpenCV's Scalar is */
    dvpp_simd_level level; /* kernels; the active level means best */
} dvpp_border;

/* "constant", "replicate", "reflect", "reflect101". */
bool dvpp_border_type_parse(const char *s, dvpp_border_type *out);

/* @dst must have @src's format and size (w + left + right) x (h + top +
 * bottom), data allocated by the caller. DVPP_EINVAL for odd margins on a
 * subsampled format or a size mismatch, DVPP_EFORMAT for 10-bit/float. */
dvpp_status dvpp_border_make(const dvpp_image *src, dvpp_image *dst,
                             const dvpp_border *b, dvpp_err *err);

/* The checks of dvpp_border_make that need no pixels (formats, type,
 * margins on subsampled axes, the destination's size); the data of @src
 * and @dst may be NULL. What a planner calls before it allocates. */
dvpp_status dvpp_border_check(const dvpp_image *src, const dvpp_image *dst,
                              const dvpp_border *b, dvpp_err *err);

#endif
