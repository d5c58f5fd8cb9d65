/* dvpp_aipp: AIPP execution, and the simple normalise spec on the same path.
 *
 * dvpp_aipp_run applies one aipp_op to an image in the hardware's order:
 * rbuv/ax swap -> crop -> CSC (integer matrix, input/output bias, >> 8,
 * clip) -> resize -> DTC ((x - mean_chn - min_chn) * var_reci_chn) ->
 * padding, writing image n of an N x C x H x W tensor (NC1HWC0 fp16 as the
 * hardware writes it, or NCHW/NHWC in f32/f16/i8/u8 for CPU runtimes).
 * YUV420SP/YUV422SP/YUYV inputs are expanded to 4:4:4 by chroma
 * replication first. The swap/crop/CSC stage produces u8 pixels once; the
 * DTC + layout + dtype stage is the fused dvpp_norm kernel.
 *
 * dvpp_preprocess_run is the simple spec: resize (a named mode, parity)
 * then (x / scale - mean) / std into the tensor, through the same kernels.
 * Without letterbox padding it runs in one pass: each resized row goes
 * straight through the norm kernel into the tensor (and a 4:2:0 YUV source
 * is converted only on the rows the resize reads); the bytes equal the
 * two-step path's (tested).
 *
 * A dvpp_aipp_ctx is per worker (scratch, intermediates, VPC context).
 */
#ifndef DVPP_AIPP_H
#define DVPP_AIPP_H

#include "dvpp_aipp_cfg.h"
#include "dvpp_image.h"
#include "dvpp_norm.h"
#include "dvpp_status.h"
#include "dvpp_tensor.h"
#include "dvpp_vpc.h"

typedef struct dvpp_aipp_ctx {
    dvpp_vpc_ctx vpc;       /* resize, conversions, scratch */
    dvpp_image tmp[2];      /* u8 4:4:4 intermediates, reused */
    dvpp_norm_plan norm;    /* last plan built */
    bool no_fuse;           /* tests: force the two-step preprocess path */
} dvpp_aipp_ctx;

void dvpp_aipp_ctx_init(dvpp_aipp_ctx *c);
void dvpp_aipp_ctx_fini(dvpp_aipp_ctx *c);
/* Release the intermediates (its own and its VPC context's) larger than
 * @keep bytes; the context stays usable. Returns the bytes released. */
size_t dvpp_aipp_ctx_trim(dvpp_aipp_ctx *c, size_t keep);

/* The pixel formats an aipp_op input_format accepts (rbuv_swap lets NV21
 * stand for YUV420SP_U8 and BGR for RGB888_U8). */
bool dvpp_aipp_accepts(const dvpp_aipp_op *op, dvpp_pixfmt f);

/* Channels the op produces: 3 after CSC or from 3-channel inputs, 4 for
 * 4-channel inputs without CSC, 1 for YUV400. */
unsigned dvpp_aipp_channels(const dvpp_aipp_op *op);

/* Tensor for @op: N x C x H x W in @layout/@dtype with H, W the output size
 * (dvpp_aipp_output_size). data is NULL. */
dvpp_status dvpp_aipp_tensor(const dvpp_aipp_op *op, uint32_t n,
                             dvpp_layout layout, dvpp_dtype dtype,
                             dvpp_tensor *t, dvpp_err *err);

/* Bytes of the context intermediates dvpp_aipp_run holds for @op on a
 * @w x @h image (the u8 pixels of the crop, and the resized ones when it
 * resizes), for memory accounting. */
size_t dvpp_aipp_temp_bytes(const dvpp_aipp_op *op, uint32_t w, uint32_t h);

/* Run @op on @src into image @n of @t (described by dvpp_aipp_tensor or
 * compatible, data allocated by the caller). */
dvpp_status dvpp_aipp_run(dvpp_aipp_ctx *c, const dvpp_aipp_op *op,
                          const dvpp_image *src, const dvpp_tensor *t,
                          uint32_t n, dvpp_err *err);

/* The checks dvpp_aipp_run makes of @op against a @src image before it
 * reads a pixel (@src's geometry; its data may be NULL), for a context of
 * profile @prof: static mode, the input format, the source size, CSC on
 * YUV400, the crop inside the image, and under the ascend profiles the
 * resize ratio. A planner calls it before anything is allocated. */
dvpp_status dvpp_aipp_check(dvpp_profile prof, const dvpp_aipp_op *op,
                            const dvpp_image *src, dvpp_err *err);

/* The checks dvpp_preprocess_run makes (those of the VPC resize into the
 * RGB/BGR image it normalises, dvpp_vpc_check_resize_mode), for a context
 * of profile @prof and a @src geometry. */
dvpp_status dvpp_preprocess_check(dvpp_profile prof, const dvpp_image *src,
                                  const dvpp_resize_geom *g, const dvpp_resize_opts *o,
                                  const dvpp_norm_spec *spec, dvpp_err *err);

/* The simple spec: resize @src by @g (dvpp_resize_geometry; letterbox
 * padding takes @pad, given as R,G,B pixel values) with @o, then normalise
 * by @spec into image @n of @t (C = 3, H x W = g->out_h x g->out_w). */
dvpp_status dvpp_preprocess_run(dvpp_aipp_ctx *c, const dvpp_image *src,
                                const dvpp_resize_geom *g,
                                const dvpp_resize_opts *o, const uint8_t pad[3],
                                const dvpp_norm_spec *spec, const dvpp_tensor *t,
                                uint32_t n, dvpp_err *err);

#endif
