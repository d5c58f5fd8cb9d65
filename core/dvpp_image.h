/* dvpp_image: pixel formats and the image descriptor.
 *
 * Pixel formats are numbered exactly as AscendCL's acldvppPixelFormat
 * (reference: dvpp-aipp.md §1) so values can cross into an AscendCL program
 * unchanged; I420 and GRAY are dvppd extensions numbered far above Ascend's
 * range. An image is described as DVPP describes it: width and height in
 * pixels, a width stride in bytes (of the first plane) and a height stride
 * in rows. The plane layout is derived from those four numbers and the
 * format by dvpp_image_planes(); nothing else stores offsets.
 *
 * Derived layouts (ws = width_stride, hs = height_stride):
 *   YUV400, GRAY          Y ws x hs
 *   NV12, NV21            Y ws x hs, then UV/VU ws x ceil(hs/2)
 *   YUV/YVU 422SP         Y ws x hs, then UV/VU ws x hs
 *   YUV/YVU 440SP         Y ws x hs, then UV/VU 2*ws x ceil(hs/2)
 *   YUV/YVU 444SP         Y ws x hs, then UV/VU 2*ws x hs
 *   I420, YVU_PLANAR_420  Y ws x hs, then U,V (V,U) ws/2 x ceil(hs/2) each
 *   YUYV.. (packed 422)   ws x hs, 2 bytes per pixel
 *   YUV_PACKED_444, RGB, BGR  ws x hs, 3 bytes per pixel
 *   ARGB, ABGR, RGBA, BGRA    ws x hs, 4 bytes per pixel
 */
#ifndef DVPP_IMAGE_H
#define DVPP_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_status.h"

typedef enum dvpp_pixfmt {
    DVPP_PIXEL_YUV400 = 0,
    DVPP_PIXEL_NV12 = 1, /* YUV420SP, U first */
    DVPP_PIXEL_NV21 = 2, /* YVU420SP, V first */
    DVPP_PIXEL_YUV422SP = 3,
    DVPP_PIXEL_YVU422SP = 4,
    DVPP_PIXEL_YUV444SP = 5,
    DVPP_PIXEL_YVU444SP = 6,
    DVPP_PIXEL_YUYV = 7,
    DVPP_PIXEL_UYVY = 8,
    DVPP_PIXEL_YVYU = 9,
    DVPP_PIXEL_VYUY = 10,
    DVPP_PIXEL_YUV_PACKED_444 = 11,
    DVPP_PIXEL_RGB = 12,
    DVPP_PIXEL_BGR = 13,
    DVPP_PIXEL_ARGB = 14,
    DVPP_PIXEL_ABGR = 15,
    DVPP_PIXEL_RGBA = 16,
    DVPP_PIXEL_BGRA = 17,
    DVPP_PIXEL_YUV420SP_10BIT = 18,
    DVPP_PIXEL_YVU420SP_10BIT = 19,
    DVPP_PIXEL_YVU_PLANAR_420 = 20, /* YV12 */
    DVPP_PIXEL_YUV440SP = 1000,
    DVPP_PIXEL_YVU440SP = 1001,
    DVPP_PIXEL_FLOAT32 = 1002,
    DVPP_PIXEL_UNKNOWN = 10000, /* JPEGD: keep the source sampling */
    /* dvppd extensions */
    DVPP_PIXEL_I420 = 20000, /* planar 4:2:0, U plane then V plane */
    DVPP_PIXEL_GRAY = 20001, /* one 8-bit plane; same memory as YUV400 */
} dvpp_pixfmt;

#define DVPP_MAX_PLANES 3

/* Static facts about a format. */
typedef struct dvpp_pixfmt_info {
    const char *name;  /* lower-case CLI/HTTP name ("nv12") */
    uint8_t planes;    /* 1..3 */
    uint8_t bpp;       /* bytes per pixel of plane 0 (Y plane or packed) */
    uint8_t channels;  /* colour channels (3 for YUV, 4 with alpha) */
    uint8_t chroma_sx; /* log2 horizontal chroma subsampling (0 or 1) */
    uint8_t chroma_sy; /* log2 vertical chroma subsampling (0 or 1) */
    bool is_yuv;
    bool has_alpha;
} dvpp_pixfmt_info;

/* Facts about @fmt, or NULL when dvppd cannot lay it out (10-bit, FLOAT32,
 * UNKNOWN and values outside the enum). */
const dvpp_pixfmt_info *dvpp_pixfmt_get(dvpp_pixfmt fmt);

/* "nv12" for DVPP_PIXEL_NV12; "unknown" for anything without info. */
const char *dvpp_pixfmt_name(dvpp_pixfmt fmt);

/* Parse a CLI/HTTP name (case-insensitive; also accepts "yuv420sp",
 * "yvu420sp", "yuv400", "gray", "grey", "i420", "yv12"). False if unknown. */
bool dvpp_pixfmt_parse(const char *name, dvpp_pixfmt *out);

/* One plane of an image, derived by dvpp_image_planes(). */
typedef struct dvpp_plane {
    size_t offset;      /* bytes from image data */
    size_t stride;      /* bytes between rows */
    uint32_t row_bytes; /* meaningful bytes per row (<= stride) */
    uint32_t rows;      /* meaningful rows */
    uint32_t alloc_rows;/* rows reserved in the buffer (from height_stride) */
} dvpp_plane;

typedef struct dvpp_planes {
    uint8_t count;
    dvpp_plane p[DVPP_MAX_PLANES];
    size_t total; /* bytes the whole layout needs */
} dvpp_planes;

/* An image in memory. Plain data: whoever set @data owns it. Images
 * allocated by dvpp_image_alloc() or returned by a decoder that was given
 * data == NULL are owned by the caller and released with dvpp_image_free(). */
typedef struct dvpp_image {
    dvpp_pixfmt format;
    uint32_t width;         /* pixels */
    uint32_t height;        /* pixels */
    uint32_t width_stride;  /* bytes per row of plane 0 */
    uint32_t height_stride; /* rows reserved per plane (luma rows) */
    uint8_t *data;
    size_t size;            /* bytes available at data */
} dvpp_image;

/* Fill @img's geometry for @fmt at @width x @height with the width stride
 * aligned so the row of plane 0 holds ALIGN(width, align_w) pixels and the
 * height stride is ALIGN(height, align_h) rows (align 0 or 1 = tight).
 * Formats with horizontal chroma subsampling get an even pixel count per
 * row. data/size are set to NULL/0. DVPP_EINVAL/EOVERFLOW on bad input. */
dvpp_status dvpp_image_init(dvpp_image *img, dvpp_pixfmt fmt, uint32_t width,
                            uint32_t height, uint32_t align_w, uint32_t align_h,
                            dvpp_err *err);

/* Derive the plane layout of @img and check that the strides can hold the
 * pixels (and, when data is set, that size covers the layout). */
dvpp_status dvpp_image_planes(const dvpp_image *img, dvpp_planes *out,
                              dvpp_err *err);

/* Allocate img->data for the layout of @img (geometry already set); the
 * padding bytes are zeroed so strided outputs are deterministic. */
dvpp_status dvpp_image_alloc(dvpp_image *img, dvpp_err *err);

/* Release data allocated by dvpp_image_alloc() or a decoder; sets it NULL. */
void dvpp_image_free(dvpp_image *img);
/* dvpp_image_free on each of the @n images at @imgs whose memory is larger
 * than @keep bytes (kept intermediates of an idle worker); returns the
 * bytes released. */
size_t dvpp_images_trim(dvpp_image *imgs, int n, size_t keep);

/* Pointer to row @y of plane @plane. No checks: use after dvpp_image_planes. */
static inline uint8_t *dvpp_image_row(const dvpp_image *img,
                                      const dvpp_planes *pl, int plane,
                                      uint32_t y)
{
    return img->data + pl->p[plane].offset + (size_t)y * pl->p[plane].stride;
}

#endif
