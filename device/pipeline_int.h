/* Folder-private: what dvpp_pipeline.c (validator, worker, run) and
 * dvpp_pipeline_plan.c (planner) share, so the planner checks the very
 * descriptors and options the run uses. */
#ifndef DVPP_PIPELINE_INT_H
#define DVPP_PIPELINE_INT_H

#include "dvpp_pipeline.h"
#include "dvpp_png.h"

/* The pixel format an AIPP input_format is fed with (UNKNOWN: none). */
dvpp_pixfmt dvpp__pipe_aipp_pixfmt(const dvpp_aipp_op *op);

/* Formats the PNG decoder writes. */
bool dvpp__pipe_png_format_ok(dvpp_pixfmt f);

/* The AIPP op of @p for a @w x @h image (dvpp_aipp_op_for_image). */
void dvpp__pipe_aipp_op_for(const dvpp_pipeline *p, uint32_t w, uint32_t h,
                            dvpp_aipp_op *op);

/* The options of a VPC call that only crops or converts (a crop op, the
 * same-size resize before a normalisation): cv2 defaults in native; in
 * the ascend profiles ascend parity with the chip's default mode 0, as a
 * Crop without a resizeConfig runs (the interpolation of a 1:1 copy is
 * moot, but the profile refuses any other parity). */
void dvpp__pipe_copy_opts(dvpp_profile prof, dvpp_resize_opts *o);

/* The decoders' options for @p and plan @pl. */
void dvpp__pipe_jpeg_opts(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl,
                          dvpp_jpeg_decode_opts *o);
void dvpp__pipe_png_opts(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl,
                         dvpp_png_decode_opts *o);

/* The layout of @p's raw input (data NULL), and whether the run copies it
 * into VPC strides first (dvpp_vpc_layout_ok: the ascend profiles refuse
 * other strides; the copy is laid out by dvpp_vpc_image_init). */
dvpp_status dvpp__pipe_raw_layout(const dvpp_pipeline *p, dvpp_image *img, dvpp_err *err);
bool dvpp__pipe_raw_copied(const dvpp_pipeline *p, const dvpp_image *layout);

#endif
