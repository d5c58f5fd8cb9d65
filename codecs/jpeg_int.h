/* Folder-private pieces shared by the JPEG decoder, encoder and probe. */
#ifndef DVPP_JPEG_INT_H
#define DVPP_JPEG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_jpeg.h"

/* Marker facts the public info does not carry. */
typedef struct jpeg_markers {
    bool have_sof;
    bool have_exif;
    bool jfif;
    bool adobe;
    uint8_t adobe_transform;
    uint8_t comp_id[4];
} jpeg_markers;

/* Walk the markers of @d (see dvpp_jpeg_probe). */
dvpp_status dvpp__jpeg_walk(const uint8_t *d, size_t len, dvpp_jpeg_info *info,
                            jpeg_markers *mk, dvpp_err *err);

/* EXIF orientation from an APP1 payload ("Exif\0\0" + TIFF), 1 if none. */
uint8_t dvpp__jpeg_exif_orientation(const uint8_t *p, size_t n);

/* Ascend JPEGD input rules (size, flavour, sampling) for @profile. */
dvpp_status dvpp__jpeg_check_ascend_input(const dvpp_jpeg_info *in,
                                          dvpp_profile profile, dvpp_err *err);

/* True when @fmt is a semi-planar format with @s's own chroma sampling. */
bool dvpp__jpeg_format_matches(dvpp_pixfmt fmt, dvpp_jpeg_sampling s);

#endif
