/* Folder-private declarations shared by the VPC operation files. */
#ifndef DVPP_VPC_INT_H
#define DVPP_VPC_INT_H

#include "dvpp_vpc.h"

bool dvpp__vpc_ascend_input_ok(dvpp_profile p, dvpp_pixfmt f);
bool dvpp__vpc_ascend_output_ok(dvpp_profile p, dvpp_pixfmt f);

/* All ascend rules for one crop-resize-paste (formats, sizes, strides,
 * ROIs, paste alignment, scale, interpolation mode). */
dvpp_status dvpp__vpc_check_ascend(dvpp_profile p, const dvpp_image *src,
                                   const dvpp_roi *crop, const dvpp_image *dst,
                                   const dvpp_roi *paste,
                                   const dvpp_resize_opts *o, dvpp_err *err);

/* Batch shape: inputs, ROIs per input, total against the profile's limit. */
dvpp_status dvpp__vpc_check_batch(dvpp_profile p, uint32_t max_native,
                                  uint32_t nsrc, const uint32_t *roi_nums,
                                  uint32_t *total, dvpp_err *err);

#endif
