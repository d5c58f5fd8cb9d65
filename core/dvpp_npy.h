/* dvpp_npy: NumPy .npy (format 1.0) headers for tensors and images.
 *
 * dvppd returns tensors as .npy by default; this builds the header that
 * precedes the raw little-endian data, so a response can be the header
 * followed by the tensor buffer with no copy of the data.
 */
#ifndef DVPP_NPY_H
#define DVPP_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "dvpp_image.h"
#include "dvpp_status.h"

/* Longest header written (magic + lengths + dict + padding). */
#define DVPP_NPY_HEADER_MAX 256

/* Write the header for a C-order array of @ndim dims (1..5) of numpy
 * type @descr ("|u1", "<f4", ...) into @out (DVPP_NPY_HEADER_MAX bytes).
 * The length is a multiple of 64 so the data that follows is aligned.
 * Returns the header length, or 0 when the arguments do not fit. */
size_t dvpp_npy_header(char *out, const char *descr, const int64_t *shape,
                       int ndim);

/* The .npy shape of one image with plane layout @pl: packed and grey
 * formats are a plain H x W [x C] array (stride padding not part of it),
 * multi-plane YUV keeps its memory as rows of width_stride bytes (the cv2
 * convention for NV12). Returns ndim (2 or 3). */
int dvpp_npy_image_shape(const dvpp_image *img, const dvpp_planes *pl,
                         int64_t shape[3]);

/* Parse the header of a .npy file (format 1.0, 2.0 or 3.0): its numpy
 * type string (e.g. "|u1"), C-order flag, shape, and where the data
 * starts. The shape's byte size is checked against @len (overflow-safe).
 * DVPP_ECORRUPT with a message for anything malformed, DVPP_EUNSUPPORTED
 * for Fortran order or more than @max_dims dimensions. */
dvpp_status dvpp_npy_parse(const uint8_t *data, size_t len, char *descr,
                           size_t descr_len, int64_t *shape, int max_dims,
                           int *ndim, size_t *data_offset, dvpp_err *err);

#endif
