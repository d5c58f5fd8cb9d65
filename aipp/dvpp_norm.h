/* dvpp_norm: the fused last stage: interleaved u8 pixels -> a model-ready
 * tensor slice, read once and written once in the final layout and dtype.
 *
 * Every output value depends on one input byte and its channel, so a plan
 * holds, per output channel, the 256 possible outputs as a table computed
 * once (in double, rounded once to the dtype), and the kernels only gather:
 * results are exact for every formula and identical at every SIMD level.
 *   DVPP_NORM_AFFINE  out = ((x / div - mean) / std), numpy's order of
 *                     operations in double, then rounded: (x/255 - mean)/std
 *                     of torchvision, cv2.dnn.blobFromImage's
 *                     (x - mean) * scale with div = 1, std = 1/scale.
 *   DVPP_NORM_AIPP    Ascend AIPP DTC: out = (x - mean_chn - min_chn) *
 *                     var_reci_chn with min_chn and var_reci_chn rounded
 *                     to fp16 first, as the hardware holds them, and the
 *                     product computed in float; int8 outputs use
 *                     x - mean_chn saturated (AIPP u8->s8), u8 bypass.
 * Float outputs are f32 or f16 (numpy's rounding, dvpp_f32_to_f16 of the
 * f32 value); i8/u8 outputs round half to even and saturate.
 * Layouts: NCHW, NHWC, NC1HWC0 (C0 16 for f16/f32, 32 for 8-bit; spare
 * lanes written as 0). Kernels: scalar reference, SSE4.1, AVX2, AVX-512
 * dispatch tables, bit-exact with scalar.
 */
#ifndef DVPP_NORM_H
#define DVPP_NORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_cpu.h"
#include "dvpp_status.h"
#include "dvpp_tensor.h"

#define DVPP_NORM_MAX_CH 4

typedef enum dvpp_norm_kind {
    DVPP_NORM_AFFINE = 0,
    DVPP_NORM_AIPP = 1,
} dvpp_norm_kind;

typedef struct dvpp_norm_params {
    dvpp_norm_kind kind;
    unsigned channels;          /* output channels C: 1..4 */
    unsigned src_channels;      /* bytes per input pixel: 1..4 */
    uint8_t src_index[DVPP_NORM_MAX_CH]; /* input byte of output channel c
                                    (channel order / swaps are this map) */
    /* AFFINE */
    double div;                 /* e.g. 255 (1 = none) */
    double mean[DVPP_NORM_MAX_CH];
    double std[DVPP_NORM_MAX_CH];
    /* AIPP */
    int mean_chn[DVPP_NORM_MAX_CH];
    float min_chn[DVPP_NORM_MAX_CH];
    float var_reci_chn[DVPP_NORM_MAX_CH];
} dvpp_norm_params;

/* A prepared normalisation: tables and kernels. Plain data, read-only
 * after init, shareable across threads. */
typedef struct dvpp_norm_plan {
    dvpp_dtype dtype;
    dvpp_layout layout;
    unsigned channels, src_channels;
    uint8_t src_index[DVPP_NORM_MAX_CH];
    dvpp_simd_level level;
    const void *kern;            /* kernel table for @level */
    union {                      /* per channel, indexed by the input byte */
        float f32[DVPP_NORM_MAX_CH][256];
        uint16_t f16[DVPP_NORM_MAX_CH][256];
        int8_t i8[DVPP_NORM_MAX_CH][256];
        uint8_t u8[DVPP_NORM_MAX_CH][256];
    } lut;
} dvpp_norm_plan;

/* Build the tables for @p writing @dtype in @layout, with the kernels of
 * dvpp_simd_active(). DVPP_EINVAL (field named) for bad channel counts,
 * indices, zero std/div, an unknown dtype/layout. */
dvpp_status dvpp_norm_plan_init(dvpp_norm_plan *plan, const dvpp_norm_params *p,
                                dvpp_dtype dtype, dvpp_layout layout,
                                dvpp_err *err);

/* Use the kernels of @level (capped at the CPU's): for the tests. */
void dvpp_norm_plan_set_level(dvpp_norm_plan *plan, dvpp_simd_level level);

/* Normalise a @w x @h block of pixels at @src (row stride @stride bytes)
 * into image @n of tensor @t at rows/cols (@y0, @x0): the block lands at
 * (y0..y0+h-1, x0..x0+w-1) of the tensor's H x W plane(s). @t describes
 * the whole tensor (shape, strides, data); its C must be plan->channels,
 * dtype and layout the plan's. NC1HWC0 spare lanes of the written pixels
 * are set to 0. Checks bounds; DVPP_EINVAL when the block does not fit. */
dvpp_status dvpp_norm_run(const dvpp_norm_plan *plan, const uint8_t *src,
                          size_t stride, uint32_t w, uint32_t h,
                          const dvpp_tensor *t, uint32_t n, uint32_t y0,
                          uint32_t x0, dvpp_err *err);

/* Fill a rectangle of image @n of @t with one value per channel (given in
 * the output dtype's domain, e.g. AIPP padding_value), spare lanes 0. */
dvpp_status dvpp_norm_fill(const dvpp_tensor *t, uint32_t n, uint32_t y0,
                           uint32_t x0, uint32_t w, uint32_t h,
                           const double value[DVPP_NORM_MAX_CH], dvpp_err *err);

#endif
