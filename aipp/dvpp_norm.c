/* dvpp_norm: tables of final values per channel, and gather kernels. */
#include "dvpp_norm.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "dvpp_fp16.h"
#include "norm_int.h"

const float dvpp__norm_zero[256]; /* all 0: the spare lanes' table */

/* ---- tables ------------------------------------------------------------ */

static double sat_round(double v, double lo, double hi)
{
    if (v != v)
        return 0;
    v = nearbyint(v); /* default mode: ties to even */
    return v < lo ? lo : v > hi ? hi : v;
}

static float f16_round(float v)
{
    return dvpp_f16_to_f32(dvpp_f32_to_f16(v));
}

static void build_affine(dvpp_norm_plan *plan, const dvpp_norm_params *p)
{
    for (unsigned c = 0; c < plan->channels; c++) {
        for (unsigned x = 0; x < 256; x++) {
            double v = ((double)x / p->div - p->mean[c]) / p->std[c];
            float f = (float)v;
            switch (plan->dtype) {
            case DVPP_DTYPE_F32: plan->lut.f32[c][x] = f; break;
            case DVPP_DTYPE_F16: plan->lut.f16[c][x] = dvpp_f32_to_f16(f); break;
            case DVPP_DTYPE_I8:
                plan->lut.i8[c][x] = (int8_t)sat_round(v, -128, 127);
                break;
            case DVPP_DTYPE_U8:
                plan->lut.u8[c][x] = (uint8_t)sat_round(v, 0, 255);
                break;
            }
        }
    }
}

static void build_aipp(dvpp_norm_plan *plan, const dvpp_norm_params *p)
{
    for (unsigned c = 0; c < plan->channels; c++) {
        float mn = f16_round(p->min_chn[c]);
        float vr = f16_round(p->var_reci_chn[c]);
        for (int x = 0; x < 256; x++) {
            int d = x - p->mean_chn[c];
            float f = ((float)d - mn) * vr;
            switch (plan->dtype) {
            case DVPP_DTYPE_F32: plan->lut.f32[c][x] = f; break;
            case DVPP_DTYPE_F16: plan->lut.f16[c][x] = dvpp_f32_to_f16(f); break;
            case DVPP_DTYPE_I8:
                plan->lut.i8[c][x] = (int8_t)(d < -128 ? -128 : d > 127 ? 127 : d);
                break;
            case DVPP_DTYPE_U8: plan->lut.u8[c][x] = (uint8_t)x; break;
            }
        }
    }
}

/* ---- scalar kernels ---------------------------------------------------- */

#define NORM_SCALAR(name, T, LUT, NC1, C0)                                     \
    static void name(const dvpp_norm_plan *p, const uint8_t *src,            \
                     size_t stride, uint32_t w, uint32_t h, void *dst,         \
                     ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)                 \
    {                                                                          \
        const unsigned C = p->channels, sc = p->src_channels;                  \
        for (uint32_t y = 0; y < h; y++) {                                     \
            T *d = (T *)dst + (ptrdiff_t)y * rs;                               \
            const uint8_t *row = src + (size_t)y * stride;                     \
            for (uint32_t x = 0; x < w; x++) {                                 \
                const uint8_t *s = row + (size_t)x * sc;                       \
                T *o = d + (ptrdiff_t)x * ps;                                  \
                for (unsigned c = 0; c < C; c++)                               \
                    o[(ptrdiff_t)c * cs] =                                     \
                        (T)p->lut.LUT[c][s[p->src_index[c]]];                  \
                if (NC1)                                                       \
                    for (unsigned c = C; c < (C0); c++)                        \
                        o[c] = 0;                                              \
            }                                                                  \
        }                                                                      \
    }

NORM_SCALAR(row_plain_u8, uint8_t, u8, 0, 32)
NORM_SCALAR(row_plain_u16, uint16_t, f16, 0, 32)
NORM_SCALAR(row_plain_f32, float, f32, 0, 32)
NORM_SCALAR(row_nc1_u8, uint8_t, u8, 1, 32)
NORM_SCALAR(row_nc1_u16, uint16_t, f16, 1, 16)
NORM_SCALAR(row_nc1_f32, float, f32, 1, 16)

/* Dense NCHW: plane by plane, one byte load, one table load, one store per
 * element (no per-element channel loop). */
#define NORM_PLANES(name, T, LUT)                                              \
    static void name(const dvpp_norm_plan *p, const uint8_t *src,            \
                     size_t stride, uint32_t w, uint32_t h, void *dst,         \
                     ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)                 \
    {                                                                          \
        const unsigned sc = p->src_channels;                                   \
        (void)ps;                                                              \
        for (unsigned c = 0; c < p->channels; c++) {                           \
            const T *lut = (const T *)p->lut.LUT[c];                           \
            for (uint32_t y = 0; y < h; y++) {                                 \
                const uint8_t *s = src + (size_t)y * stride + p->src_index[c]; \
                T *o = (T *)dst + (ptrdiff_t)c * cs + (ptrdiff_t)y * rs;       \
                for (uint32_t x = 0; x < w; x++)                               \
                    o[x] = lut[s[(size_t)x * sc]];                             \
            }                                                                  \
        }                                                                      \
    }

/* Dense NHWC: pixel by pixel with the channel count a constant. */
#define NORM_PIXELS(name, T, LUT)                                              \
    static inline __attribute__((always_inline)) void name##_c(               \
        const dvpp_norm_plan *p, const uint8_t *src, size_t stride,            \
        uint32_t w, uint32_t h, T *dst, ptrdiff_t rs, const unsigned C)        \
    {                                                                          \
        const unsigned sc = p->src_channels;                                   \
        const T *l0 = (const T *)p->lut.LUT[0], *l1 = (const T *)p->lut.LUT[1];\
        const T *l2 = (const T *)p->lut.LUT[2], *l3 = (const T *)p->lut.LUT[3];\
        const unsigned i0 = p->src_index[0], i1 = p->src_index[1];             \
        const unsigned i2 = p->src_index[2], i3 = p->src_index[3];             \
        for (uint32_t y = 0; y < h; y++) {                                     \
            const uint8_t *s = src + (size_t)y * stride;                       \
            T *o = dst + (ptrdiff_t)y * rs;                                    \
            for (uint32_t x = 0; x < w; x++, s += sc, o += C) {                \
                o[0] = l0[s[i0]];                                              \
                if (C > 1)                                                     \
                    o[1] = l1[s[i1]];                                          \
                if (C > 2)                                                     \
                    o[2] = l2[s[i2]];                                          \
                if (C > 3)                                                     \
                    o[3] = l3[s[i3]];                                          \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    static void name(const dvpp_norm_plan *p, const uint8_t *src,            \
                     size_t stride, uint32_t w, uint32_t h, void *dst,         \
                     ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)                 \
    {                                                                          \
        (void)cs;                                                              \
        (void)ps;                                                              \
        switch (p->channels) {                                                 \
        case 1: name##_c(p, src, stride, w, h, (T *)dst, rs, 1); break;        \
        case 2: name##_c(p, src, stride, w, h, (T *)dst, rs, 2); break;        \
        case 3: name##_c(p, src, stride, w, h, (T *)dst, rs, 3); break;        \
        default: name##_c(p, src, stride, w, h, (T *)dst, rs, 4); break;       \
        }                                                                      \
    }

NORM_PIXELS(pixels_u8, uint8_t, u8)
NORM_PIXELS(pixels_u16, uint16_t, f16)
NORM_PIXELS(pixels_f32, float, f32)

NORM_PLANES(planes_u8, uint8_t, u8)
NORM_PLANES(planes_u16, uint16_t, f16)
NORM_PLANES(planes_f32, float, f32)

dvpp_norm_row_fn dvpp__norm_scalar_row(dvpp_layout l, dvpp_dtype dt)
{
    bool nc1 = l == DVPP_LAYOUT_NC1HWC0;
    switch (dt) {
    case DVPP_DTYPE_U8:
    case DVPP_DTYPE_I8: return nc1 ? row_nc1_u8 : row_plain_u8;
    case DVPP_DTYPE_F16: return nc1 ? row_nc1_u16 : row_plain_u16;
    case DVPP_DTYPE_F32: return nc1 ? row_nc1_f32 : row_plain_f32;
    }
    return row_plain_u8;
}

void dvpp_norm_kern_init(dvpp_norm_kern *k, dvpp_simd_level level)
{
    k->level = DVPP_SIMD_SCALAR;
    for (int l = 0; l < 3; l++)
        for (int d = 0; d < 4; d++)
            k->row[l][d] = k->generic[l][d] =
                dvpp__norm_scalar_row((dvpp_layout)l, (dvpp_dtype)d);
    k->row[DVPP_LAYOUT_NCHW][DVPP_DTYPE_U8] = planes_u8;
    k->row[DVPP_LAYOUT_NCHW][DVPP_DTYPE_I8] = planes_u8;
    k->row[DVPP_LAYOUT_NCHW][DVPP_DTYPE_F16] = planes_u16;
    k->row[DVPP_LAYOUT_NCHW][DVPP_DTYPE_F32] = planes_f32;
    k->row[DVPP_LAYOUT_NHWC][DVPP_DTYPE_U8] = pixels_u8;
    k->row[DVPP_LAYOUT_NHWC][DVPP_DTYPE_I8] = pixels_u8;
    k->row[DVPP_LAYOUT_NHWC][DVPP_DTYPE_F16] = pixels_u16;
    k->row[DVPP_LAYOUT_NHWC][DVPP_DTYPE_F32] = pixels_f32;
#if defined(__x86_64__)
    if (level >= DVPP_SIMD_SSE41) {
        k->level = DVPP_SIMD_SSE41;
        dvpp__norm_kern_sse41(k);
    }
    if (level >= DVPP_SIMD_AVX2) {
        k->level = DVPP_SIMD_AVX2;
        dvpp__norm_kern_avx2(k);
    }
    if (level >= DVPP_SIMD_AVX512) {
        k->level = DVPP_SIMD_AVX512;
        dvpp__norm_kern_avx512(k);
    }
#elif defined(__aarch64__)
    if (level >= DVPP_SIMD_NEON) {
        k->level = DVPP_SIMD_NEON;
        dvpp__norm_kern_neon(k);
    }
#else
    (void)level;
#endif
}

static pthread_once_t g_norm_once = PTHREAD_ONCE_INIT;
static dvpp_norm_kern g_norm[DVPP_SIMD_LEVELS]; /* per level, written once */

static void norm_once(void)
{
    dvpp_simd_level top = dvpp_cpu_detect();
    for (int l = 0; l < DVPP_SIMD_LEVELS; l++)
        dvpp_norm_kern_init(&g_norm[l], (dvpp_simd_level)l < top
                                            ? (dvpp_simd_level)l : top);
}

static const dvpp_norm_kern *kern_for(dvpp_simd_level level)
{
    pthread_once(&g_norm_once, norm_once);
    if ((int)level < 0 || level >= DVPP_SIMD_LEVELS)
        level = DVPP_SIMD_SCALAR;
    return &g_norm[level];
}

/* ---- API --------------------------------------------------------------- */

static bool dtype_ok(dvpp_dtype dt)
{
    return dt == DVPP_DTYPE_U8 || dt == DVPP_DTYPE_I8 || dt == DVPP_DTYPE_F16 ||
           dt == DVPP_DTYPE_F32;
}

static bool layout_ok(dvpp_layout l)
{
    return l == DVPP_LAYOUT_NCHW || l == DVPP_LAYOUT_NHWC ||
           l == DVPP_LAYOUT_NC1HWC0;
}

dvpp_status dvpp_norm_plan_init(dvpp_norm_plan *plan, const dvpp_norm_params *p,
                                dvpp_dtype dtype, dvpp_layout layout,
                                dvpp_err *err)
{
    if (!plan || !p)
        return dvpp_err_set(err, DVPP_EINVAL, NULL, "norm: NULL plan or params");
    if (p->kind != DVPP_NORM_AFFINE && p->kind != DVPP_NORM_AIPP)
        return dvpp_err_set(err, DVPP_EINVAL, "kind", "norm: unknown kind %d",
                            (int)p->kind);
    if (p->channels < 1 || p->channels > DVPP_NORM_MAX_CH)
        return dvpp_err_set(err, DVPP_EINVAL, "channels",
                            "norm: channels %u not in 1..%d", p->channels,
                            DVPP_NORM_MAX_CH);
    if (p->src_channels < 1 || p->src_channels > DVPP_NORM_MAX_CH)
        return dvpp_err_set(err, DVPP_EINVAL, "src_channels",
                            "norm: src_channels %u not in 1..%d",
                            p->src_channels, DVPP_NORM_MAX_CH);
    for (unsigned c = 0; c < p->channels; c++)
        if (p->src_index[c] >= p->src_channels)
            return dvpp_err_set(err, DVPP_EINVAL, "src_index",
                                "norm: src_index[%u] = %u >= src_channels %u",
                                c, p->src_index[c], p->src_channels);
    if (!dtype_ok(dtype))
        return dvpp_err_set(err, DVPP_EINVAL, "dtype", "norm: unknown dtype %d",
                            (int)dtype);
    if (!layout_ok(layout))
        return dvpp_err_set(err, DVPP_EINVAL, "layout",
                            "norm: unknown layout %d", (int)layout);
    if (p->kind == DVPP_NORM_AFFINE) {
        if (!(p->div != 0) || !isfinite(p->div))
            return dvpp_err_set(err, DVPP_EINVAL, "div",
                                "norm: div must be finite and non-zero");
        for (unsigned c = 0; c < p->channels; c++) {
            if (!(p->std[c] != 0) || !isfinite(p->std[c]))
                return dvpp_err_set(err, DVPP_EINVAL, "std",
                                    "norm: std[%u] must be finite and non-zero",
                                    c);
            if (!isfinite(p->mean[c]))
                return dvpp_err_set(err, DVPP_EINVAL, "mean",
                                    "norm: mean[%u] must be finite", c);
        }
    } else {
        for (unsigned c = 0; c < p->channels; c++)
            if (!isfinite(p->min_chn[c]) || !isfinite(p->var_reci_chn[c]))
                return dvpp_err_set(err, DVPP_EINVAL, "var_reci_chn",
                                    "norm: min/var_reci[%u] must be finite", c);
    }
    memset(plan, 0, sizeof(*plan));
    plan->dtype = dtype;
    plan->layout = layout;
    plan->channels = p->channels;
    plan->src_channels = p->src_channels;
    memcpy(plan->src_index, p->src_index, sizeof(plan->src_index));
    for (unsigned c = p->channels; c < DVPP_NORM_MAX_CH; c++)
        plan->src_index[c] = 0;
    if (p->kind == DVPP_NORM_AFFINE)
        build_affine(plan, p);
    else
        build_aipp(plan, p);
    dvpp_norm_plan_set_level(plan, dvpp_simd_active());
    return DVPP_OK;
}

void dvpp_norm_plan_set_level(dvpp_norm_plan *plan, dvpp_simd_level level)
{
    dvpp_simd_level top = dvpp_cpu_detect();
    if ((int)level < 0)
        level = DVPP_SIMD_SCALAR;
    if (level > top)
        level = top;
    plan->kern = kern_for(level);
    plan->level = ((const dvpp_norm_kern *)plan->kern)->level;
}

/* Element steps of @t: between channels, pixels and rows. */
static void tensor_steps(const dvpp_tensor *t, ptrdiff_t *cs, ptrdiff_t *ps,
                         ptrdiff_t *rs)
{
    switch (t->layout) {
    case DVPP_LAYOUT_NCHW:
        *cs = (ptrdiff_t)t->strides[1], *rs = (ptrdiff_t)t->strides[2];
        *ps = (ptrdiff_t)t->strides[3];
        break;
    case DVPP_LAYOUT_NHWC:
        *rs = (ptrdiff_t)t->strides[1], *ps = (ptrdiff_t)t->strides[2];
        *cs = (ptrdiff_t)t->strides[3];
        break;
    case DVPP_LAYOUT_NC1HWC0:
        *cs = 1, *rs = (ptrdiff_t)t->strides[2];
        *ps = (ptrdiff_t)t->strides[3];
        break;
    }
}

static dvpp_status check_block(const dvpp_tensor *t, uint32_t n, uint32_t y0,
                               uint32_t x0, uint32_t w, uint32_t h,
                               dvpp_err *err)
{
    if (!t || !t->data)
        return dvpp_err_set(err, DVPP_EINVAL, "tensor", "norm: NULL tensor");
    if (!dtype_ok(t->dtype) || !layout_ok(t->layout))
        return dvpp_err_set(err, DVPP_EINVAL, "tensor",
                            "norm: tensor dtype/layout unknown");
    if (t->layout == DVPP_LAYOUT_NC1HWC0 &&
        t->c0 != (dvpp_dtype_size(t->dtype) == 1 ? 32u : 16u))
        return dvpp_err_set(err, DVPP_EINVAL, "tensor",
                            "norm: NC1HWC0 tensor with C0 %u", t->c0);
    if (n >= t->n)
        return dvpp_err_set(err, DVPP_EINVAL, "n", "norm: image %u >= N %u", n,
                            t->n);
    if ((uint64_t)y0 + h > t->h || (uint64_t)x0 + w > t->w)
        return dvpp_err_set(err, DVPP_EINVAL, "block",
                            "norm: block %ux%u at (%u,%u) outside %ux%u", w, h,
                            x0, y0, t->w, t->h);
    return DVPP_OK;
}

dvpp_status dvpp_norm_run(const dvpp_norm_plan *plan, const uint8_t *src,
                          size_t stride, uint32_t w, uint32_t h,
                          const dvpp_tensor *t, uint32_t n, uint32_t y0,
                          uint32_t x0, dvpp_err *err)
{
    dvpp_status st;
    ptrdiff_t cs = 0, ps = 0, rs = 0;

    if (!plan || !plan->kern)
        return dvpp_err_set(err, DVPP_EINVAL, NULL, "norm: plan not initialised");
    if ((st = check_block(t, n, y0, x0, w, h, err)) != DVPP_OK)
        return st;
    if (t->dtype != plan->dtype || t->layout != plan->layout)
        return dvpp_err_set(err, DVPP_EINVAL, "tensor",
                            "norm: tensor is %s %s, plan writes %s %s",
                            dvpp_dtype_name(t->dtype),
                            dvpp_layout_name(t->layout),
                            dvpp_dtype_name(plan->dtype),
                            dvpp_layout_name(plan->layout));
    if (t->c != plan->channels)
        return dvpp_err_set(err, DVPP_EINVAL, "tensor",
                            "norm: tensor has C %u, plan %u", t->c,
                            plan->channels);
    if (w == 0 || h == 0)
        return DVPP_OK;
    if (!src)
        return dvpp_err_set(err, DVPP_EINVAL, "src", "norm: NULL source");
    if (h > 1 && stride < (size_t)w * plan->src_channels)
        return dvpp_err_set(err, DVPP_EINVAL, "stride",
                            "norm: stride %zu < %u pixels x %u bytes", stride,
                            w, plan->src_channels);
    tensor_steps(t, &cs, &ps, &rs);

    const dvpp_norm_kern *k = plan->kern;
    bool dense = false;
    switch (t->layout) {
    case DVPP_LAYOUT_NCHW: dense = ps == 1; break;
    case DVPP_LAYOUT_NHWC: dense = cs == 1 && ps == (ptrdiff_t)t->c; break;
    case DVPP_LAYOUT_NC1HWC0: dense = ps == (ptrdiff_t)t->c0; break;
    }
    dvpp_norm_row_fn fn = dense ? k->row[t->layout][t->dtype]
                                : k->generic[t->layout][t->dtype];
    size_t es = dvpp_dtype_size(t->dtype);
    uint8_t *base = (uint8_t *)t->data + dvpp_tensor_offset(t, n, 0, y0, x0) * es;
    fn(plan, src, stride, w, h, base, rs, cs, ps);
    return DVPP_OK;
}

dvpp_status dvpp_norm_fill(const dvpp_tensor *t, uint32_t n, uint32_t y0,
                           uint32_t x0, uint32_t w, uint32_t h,
                           const double value[DVPP_NORM_MAX_CH], dvpp_err *err)
{
    dvpp_status st;
    ptrdiff_t cs = 0, ps = 0, rs = 0;
    union {
        float f32[DVPP_NORM_MAX_CH];
        uint16_t f16[DVPP_NORM_MAX_CH];
        int8_t i8[DVPP_NORM_MAX_CH];
        uint8_t u8[DVPP_NORM_MAX_CH];
    } v;

    if ((st = check_block(t, n, y0, x0, w, h, err)) != DVPP_OK)
        return st;
    if (!value)
        return dvpp_err_set(err, DVPP_EINVAL, "value", "norm: NULL value");
    if (t->c < 1 || t->c > DVPP_NORM_MAX_CH)
        return dvpp_err_set(err, DVPP_EINVAL, "tensor",
                            "norm: fill of C %u not in 1..%d", t->c,
                            DVPP_NORM_MAX_CH);
    for (unsigned c = 0; c < t->c; c++) {
        switch (t->dtype) {
        case DVPP_DTYPE_F32: v.f32[c] = (float)value[c]; break;
        case DVPP_DTYPE_F16: v.f16[c] = dvpp_f32_to_f16((float)value[c]); break;
        case DVPP_DTYPE_I8: v.i8[c] = (int8_t)sat_round(value[c], -128, 127); break;
        case DVPP_DTYPE_U8: v.u8[c] = (uint8_t)sat_round(value[c], 0, 255); break;
        }
    }
    tensor_steps(t, &cs, &ps, &rs);
    size_t es = dvpp_dtype_size(t->dtype);
    unsigned lanes = t->layout == DVPP_LAYOUT_NC1HWC0 ? t->c0 : t->c;
    uint8_t *base = (uint8_t *)t->data + dvpp_tensor_offset(t, n, 0, y0, x0) * es;
    for (uint32_t y = 0; y < h; y++) {
        uint8_t *row = base + (ptrdiff_t)y * rs * (ptrdiff_t)es;
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *px = row + (ptrdiff_t)x * ps * (ptrdiff_t)es;
            for (unsigned c = 0; c < lanes; c++) {
                uint8_t *o = px + (ptrdiff_t)c * cs * (ptrdiff_t)es;
                if (c < t->c)
                    memcpy(o, (const uint8_t *)&v + c * es, es);
                else
                    memset(o, 0, es);
            }
        }
    }
    return DVPP_OK;
}
