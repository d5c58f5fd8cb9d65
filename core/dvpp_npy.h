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

#include "dvpp_status.h"

/* Longest header written (magic + lengths + dict + padding). */
#define DVPP_NPY_HEADER_MAX 256

/* Write the header for a C-order array of @ndim dims (1..5) of numpy
 * type @descr ("|u1", "<f4", ...) into @out (DVPP_NPY_HEADER_MAX bytes).
 * The length is a multiple of 64 so the data that follows is aligned.
 * Returns the header length, or 0 when the arguments do not fit. */
size_t dvpp_npy_header(char *out, const char *descr, const int64_t *shape,
                       int ndim);

#endif
