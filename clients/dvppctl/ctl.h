/* dvppctl internals shared by its command files. */
#ifndef DVPPCTL_CTL_H
#define DVPPCTL_CTL_H

#include <stdbool.h>

#include "dvpp_image.h"
#include "dvpp_status.h"

/* Write @img to @path, the container chosen by the extension:
 * .npy (uint8 array: HxWxC packed, HxW grey, rows x width_stride for
 * multi-plane YUV), .png, .jpg/.jpeg (at @quality), anything else raw bytes
 * exactly as laid out in memory (strides included). */
dvpp_status ctl_write_image(const char *path, const dvpp_image *img,
                            int quality, dvpp_err *err);

/* Parse "WxH" into two positive numbers. */
bool ctl_parse_size(const char *s, unsigned *w, unsigned *h);

/* Parse a non-negative decimal integer that fits 64 bits. */
bool ctl_parse_u64(const char *s, unsigned long long *out);

#endif
