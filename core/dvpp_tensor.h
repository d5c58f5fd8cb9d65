/* dvpp_tensor: the descriptor of a model-ready tensor.
 *
 * A tensor is N images of C channels, H rows and W columns in one of three
 * layouts: NCHW and NHWC for CPU runtimes, NC1HWC0 as Ascend AIPP writes it
 * (C split into C1 blocks of C0 lanes, C0 = 16 for fp16/fp32, 32 for int8
 * and uint8; spare lanes are zero). Strides are in elements, outermost
 * first, over the stored shape (4 dims, or 5 for NC1HWC0).
 */
#ifndef DVPP_TENSOR_H
#define DVPP_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_status.h"

typedef enum dvpp_dtype {
    DVPP_DTYPE_U8 = 0,
    DVPP_DTYPE_I8 = 1,
    DVPP_DTYPE_F16 = 2,
    DVPP_DTYPE_F32 = 3,
} dvpp_dtype;

typedef enum dvpp_layout {
    DVPP_LAYOUT_NCHW = 0,
    DVPP_LAYOUT_NHWC = 1,
    DVPP_LAYOUT_NC1HWC0 = 2,
} dvpp_layout;

#define DVPP_TENSOR_MAX_DIMS 5

typedef struct dvpp_tensor {
    dvpp_dtype dtype;
    dvpp_layout layout;
    uint32_t n, c, h, w;                    /* logical shape */
    uint32_t c0;                            /* NC1HWC0 lane count, else 0 */
    uint8_t ndim;                           /* 4, or 5 for NC1HWC0 */
    int64_t shape[DVPP_TENSOR_MAX_DIMS];    /* stored shape, outermost first */
    int64_t strides[DVPP_TENSOR_MAX_DIMS];  /* in elements */
    size_t bytes;                           /* whole tensor */
    void *data;                             /* borrowed or owned by the holder */
} dvpp_tensor;

/* Element size in bytes (1, 2 or 4); 0 for an unknown dtype. */
size_t dvpp_dtype_size(dvpp_dtype dt);

/* The wire names every front end writes (HTTP X-Dvpp-Dtype, the socket's
 * TensorMeta, dvppctl's JSON, error messages): "uint8", "int8", "float16",
 * "float32"; "unknown" for anything else. Static strings. The numpy descr
 * comes from dvpp_dtype_npy ("|u1", "<f2"). */
const char *dvpp_dtype_name(dvpp_dtype dt);
const char *dvpp_dtype_npy(dvpp_dtype dt);
/* The wire names and the short ones ("u8", "i8", "f16"/"fp16",
 * "f32"/"fp32"), case-insensitive. False if unknown. */
bool dvpp_dtype_parse(const char *name, dvpp_dtype *out);

/* "NCHW", "NHWC", "NC1HWC0" (the wire names); "unknown" for anything else.
 * Parse is case-insensitive. */
const char *dvpp_layout_name(dvpp_layout l);
bool dvpp_layout_parse(const char *name, dvpp_layout *out);

/* Fill @t for a contiguous tensor; data is set to NULL. DVPP_EINVAL for a
 * zero dimension, DVPP_EOVERFLOW when the byte size overflows. */
dvpp_status dvpp_tensor_init(dvpp_tensor *t, dvpp_dtype dt, dvpp_layout l,
                             uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                             dvpp_err *err);

/* Element offset of (n, c, y, x) in @t. */
size_t dvpp_tensor_offset(const dvpp_tensor *t, uint32_t n, uint32_t c,
                          uint32_t y, uint32_t x);

#endif
