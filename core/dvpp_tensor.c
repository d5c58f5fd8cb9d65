#include "dvpp_tensor.h"

#include <strings.h>

#include "dvpp_mem.h"

static const struct {
    const char *name;
    const char *npy;
    size_t size;
} k_dtypes[] = {
    [DVPP_DTYPE_U8] = {"uint8", "|u1", 1},
    [DVPP_DTYPE_I8] = {"int8", "|i1", 1},
    [DVPP_DTYPE_F16] = {"float16", "<f2", 2},
    [DVPP_DTYPE_F32] = {"float32", "<f4", 4},
};

static const char *const k_layouts[] = {
    [DVPP_LAYOUT_NCHW] = "NCHW",
    [DVPP_LAYOUT_NHWC] = "NHWC",
    [DVPP_LAYOUT_NC1HWC0] = "NC1HWC0",
};

static bool dtype_known(dvpp_dtype dt)
{
    return (unsigned)dt < sizeof(k_dtypes) / sizeof(k_dtypes[0]);
}

size_t dvpp_dtype_size(dvpp_dtype dt)
{
    return dtype_known(dt) ? k_dtypes[dt].size : 0;
}

const char *dvpp_dtype_name(dvpp_dtype dt)
{
    return dtype_known(dt) ? k_dtypes[dt].name : "unknown";
}

const char *dvpp_dtype_npy(dvpp_dtype dt)
{
    return dtype_known(dt) ? k_dtypes[dt].npy : "unknown";
}

bool dvpp_dtype_parse(const char *name, dvpp_dtype *out)
{
    static const struct {
        const char *name;
        dvpp_dtype dt;
    } names[] = {
        {"u8", DVPP_DTYPE_U8},     {"uint8", DVPP_DTYPE_U8},
        {"i8", DVPP_DTYPE_I8},     {"int8", DVPP_DTYPE_I8},
        {"f16", DVPP_DTYPE_F16},   {"float16", DVPP_DTYPE_F16},
        {"fp16", DVPP_DTYPE_F16},  {"f32", DVPP_DTYPE_F32},
        {"float32", DVPP_DTYPE_F32}, {"fp32", DVPP_DTYPE_F32},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].dt;
            return true;
        }
    }
    return false;
}

const char *dvpp_layout_name(dvpp_layout l)
{
    return (unsigned)l < 3 ? k_layouts[l] : "unknown";
}

bool dvpp_layout_parse(const char *name, dvpp_layout *out)
{
    for (unsigned i = 0; i < 3; i++) {
        if (strcasecmp(name, k_layouts[i]) == 0) {
            *out = (dvpp_layout)i;
            return true;
        }
    }
    return false;
}

dvpp_status dvpp_tensor_init(dvpp_tensor *t, dvpp_dtype dt, dvpp_layout l,
                             uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                             dvpp_err *err)
{
    size_t elems = 1, bytes;
    int i;

    if (!dtype_known(dt) || (unsigned)l > DVPP_LAYOUT_NC1HWC0)
        return dvpp_err_set(err, DVPP_EINVAL, "dtype", "unknown dtype or layout");
    if (!n || !c || !h || !w)
        return dvpp_err_set(err, DVPP_EINVAL, "shape",
                            "tensor shape %ux%ux%ux%u has a zero dimension", n,
                            c, h, w);
    t->dtype = dt;
    t->layout = l;
    t->n = n;
    t->c = c;
    t->h = h;
    t->w = w;
    t->c0 = 0;
    t->data = NULL;
    switch (l) {
    case DVPP_LAYOUT_NCHW:
        t->ndim = 4;
        t->shape[0] = n, t->shape[1] = c, t->shape[2] = h, t->shape[3] = w;
        break;
    case DVPP_LAYOUT_NHWC:
        t->ndim = 4;
        t->shape[0] = n, t->shape[1] = h, t->shape[2] = w, t->shape[3] = c;
        break;
    case DVPP_LAYOUT_NC1HWC0:
        /* C0 fills one 32-byte cube fragment: 16 halves or 32 bytes. */
        t->c0 = dvpp_dtype_size(dt) == 1 ? 32 : 16;
        t->ndim = 5;
        t->shape[0] = n;
        t->shape[1] = (c + t->c0 - 1) / t->c0;
        t->shape[2] = h, t->shape[3] = w, t->shape[4] = t->c0;
        break;
    }
    for (i = t->ndim - 1; i >= 0; i--) {
        t->strides[i] = (int64_t)elems;
        if (!dvpp_size_mul(elems, (size_t)t->shape[i], &elems))
            return dvpp_err_set(err, DVPP_EOVERFLOW, "shape",
                                "tensor size overflows");
    }
    if (!dvpp_size_mul(elems, dvpp_dtype_size(dt), &bytes))
        return dvpp_err_set(err, DVPP_EOVERFLOW, "shape", "tensor size overflows");
    t->bytes = bytes;
    return DVPP_OK;
}

size_t dvpp_tensor_offset(const dvpp_tensor *t, uint32_t n, uint32_t c,
                          uint32_t y, uint32_t x)
{
    switch (t->layout) {
    case DVPP_LAYOUT_NCHW:
        return n * t->strides[0] + c * t->strides[1] + y * t->strides[2] +
               x * t->strides[3];
    case DVPP_LAYOUT_NHWC:
        return n * t->strides[0] + y * t->strides[1] + x * t->strides[2] +
               c * t->strides[3];
    case DVPP_LAYOUT_NC1HWC0:
        return n * t->strides[0] + (c / t->c0) * t->strides[1] +
               y * t->strides[2] + x * t->strides[3] + (c % t->c0);
    }
    return 0;
}
