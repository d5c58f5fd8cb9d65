/* dvpp_jpeg: JPEG probe, decode (JPEGD) and encode (JPEGE) through the
 * libjpeg API of libjpeg-turbo.
 *
 * Decode writes any of NV12, NV21, I420, YV12, YUV422SP, YVU422SP,
 * YUV444SP, YVU444SP, YUV440SP, YVU440SP, YUV400/GRAY, RGB, BGR, RGBA,
 * BGRA and ARGB/ABGR with a requested stride alignment. YUV outputs are
 * built from libjpeg's raw (still subsampled) component planes and never
 * pass through RGB: a matching sampling is copied as is, a finer source is
 * box-averaged down (rounded), a coarser one is replicated up. RGB outputs
 * use libjpeg's own colour conversion, so they are bit-identical to djpeg
 * with the same DCT and upsampling settings.
 *
 * DCT-domain scaling (scale_num/8, 1..8), region decode (crop on decode
 * with iMCU-aligned skipping), EXIF auto-orientation and CMYK/YCCK -> RGB
 * are options. Limits are checked after the header and before any pixel
 * allocation; progressive scans are counted from the markers before
 * decoding. Strict by default: a warning (truncated or corrupt data) is an
 * error unless allow_partial is set. libjpeg errors longjmp back into the
 * wrapper function that called libjpeg; nothing calls exit().
 *
 * Thread-safe: every call has its own decompressor; no shared state.
 */
#ifndef DVPP_JPEG_H
#define DVPP_JPEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_image.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_profile.h"
#include "dvpp_scratch.h"
#include "dvpp_status.h"

/* Numbered as AscendCL's acldvppJpegFormat. */
typedef enum dvpp_jpeg_sampling {
    DVPP_JPEG_444 = 0,
    DVPP_JPEG_422 = 1,
    DVPP_JPEG_420 = 2,
    DVPP_JPEG_400 = 3,
    DVPP_JPEG_440 = 4,
    DVPP_JPEG_411 = 5,
    DVPP_JPEG_SAMPLING_OTHER = 1000,
} dvpp_jpeg_sampling;

typedef enum dvpp_jpeg_colorspace {
    DVPP_JPEG_CS_GRAY = 0,
    DVPP_JPEG_CS_YCBCR = 1,
    DVPP_JPEG_CS_RGB = 2,
    DVPP_JPEG_CS_CMYK = 3,
    DVPP_JPEG_CS_YCCK = 4,
    DVPP_JPEG_CS_OTHER = 5,
} dvpp_jpeg_colorspace;

typedef struct dvpp_jpeg_info {
    uint32_t width;          /* as coded */
    uint32_t height;
    uint32_t display_width;  /* after EXIF orientation (5..8 swap) */
    uint32_t display_height;
    uint8_t components;      /* 1, 3 or 4 */
    uint8_t precision;       /* bits per sample: 8 or 12 */
    uint8_t h_samp[4];       /* sampling factors per component */
    uint8_t v_samp[4];
    dvpp_jpeg_sampling sampling;
    dvpp_jpeg_colorspace colorspace;
    bool baseline;           /* SOF0 */
    bool progressive;        /* SOF2/SOF6/SOF10/SOF14 */
    bool arithmetic;         /* SOF9..SOF15 */
    bool lossless;           /* SOF3/SOF7/SOF11/SOF15 */
    uint8_t orientation;     /* EXIF tag 0x0112, 1..8; 1 when absent */
    uint32_t scans;          /* SOS markers in the data */
    bool complete;           /* an EOI marker ends the data */
} dvpp_jpeg_info;

/* Parse the markers (never the entropy-coded pixels): SOF, sampling,
 * Adobe/JFIF colour transform, EXIF orientation, scan count. Works for
 * every JPEG flavour, including the 12-bit ones the decoder refuses.
 * DVPP_ECORRUPT when there is no SOI or no frame header. */
dvpp_status dvpp_jpeg_probe(const uint8_t *data, size_t len,
                            dvpp_jpeg_info *info, dvpp_err *err);

/* "444", "422", "420", "400", "440", "411", "other". */
const char *dvpp_jpeg_sampling_name(dvpp_jpeg_sampling s);
/* "gray", "ycbcr", "rgb", "cmyk", "ycck", "other". */
const char *dvpp_jpeg_colorspace_name(dvpp_jpeg_colorspace cs);

typedef struct dvpp_jpeg_roi {
    uint32_t x, y, w, h; /* in output pixels (after scaling, orientation) */
} dvpp_jpeg_roi;

typedef struct dvpp_jpeg_decode_opts {
    dvpp_pixfmt format;   /* output; DVPP_PIXEL_UNKNOWN keeps the source
                             sampling as V-first semi-planar, as JPEGD does */
    uint32_t align_w;     /* width stride alignment in pixels; 0 = the
                             profile's (native 1, ascend310 128, 310p 64) */
    uint32_t align_h;     /* height stride alignment; 0 = profile's (1/16) */
    uint8_t scale_num;    /* DCT scaling scale_num/8, 1..8; 0 means 8 */
    bool no_orient;       /* ignore EXIF orientation (default: apply it) */
    bool has_roi;         /* decode only @roi */
    dvpp_jpeg_roi roi;
    bool allow_partial;   /* accept truncated/corrupt data (libjpeg warns) */
    bool fast_dct;        /* JDCT_IFAST instead of JDCT_ISLOW */
    bool fast_upsample;   /* no fancy upsampling (djpeg -nosmooth) */
    dvpp_profile profile;
    dvpp_scratch *scratch; /* optional: strips and temporaries come from its
                              slots 0..6 and are kept for the next decode
                              (a worker's steady state allocates nothing);
                              NULL: allocated and freed per call */
} dvpp_jpeg_decode_opts;

/* Defaults: RGB, profile alignment, scale 8/8, orient, strict, ISLOW,
 * fancy upsampling, native. */
void dvpp_jpeg_decode_opts_init(dvpp_jpeg_decode_opts *o);

/* Decode @data into @out. When out->data is NULL the pixels are allocated
 * (caller owns them; dvpp_image_free); otherwise out->data/out->size are a
 * caller buffer that must hold the layout (DVPP_ENOSPC before decoding).
 * The geometry fields of @out are always overwritten; on error out->data is
 * as the caller gave it. */
dvpp_status dvpp_jpeg_decode(const uint8_t *data, size_t len,
                             const dvpp_jpeg_decode_opts *o,
                             const dvpp_limits *lim, dvpp_image *out,
                             dvpp_err *err);

/* The geometry dvpp_jpeg_decode() would produce (out->data = NULL,
 * out->size = bytes needed), after every check but without decoding. */
dvpp_status dvpp_jpeg_decode_geometry(const uint8_t *data, size_t len,
                                      const dvpp_jpeg_decode_opts *o,
                                      const dvpp_limits *lim, dvpp_image *out,
                                      dvpp_err *err);

/* The same, from the header dvpp_jpeg_probe read into @info (no bytes
 * needed): what a planner holding only the probe's result calls to know
 * the decoder's output, and its refusals, before the job runs. */
dvpp_status dvpp_jpeg_decode_geometry_info(const dvpp_jpeg_info *info,
                                           const dvpp_jpeg_decode_opts *o,
                                           const dvpp_limits *lim, dvpp_image *out,
                                           dvpp_err *err);

/* Shrink-on-load: the smallest DCT scale n/8 (n in 1..8) whose output of
 * a @src_w x @src_h image is still at least @dst_w x @dst_h, so a following
 * resize stays a downscale. Returns 8 when no reduction keeps that. */
uint8_t dvpp_jpeg_shrink_scale(uint32_t src_w, uint32_t src_h, uint32_t dst_w,
                               uint32_t dst_h);

/* Scaled size libjpeg produces: ceil(side * num / 8). */
static inline uint32_t dvpp_jpeg_scaled_side(uint32_t side, uint8_t num)
{
    return (uint32_t)(((uint64_t)side * num + 7) / 8);
}

/* acldvppJpegPredictDecSize for @profile (ascend310 or ascend310p; native
 * uses the 310 formula): NV12/NV21 -> ALIGN(w,128)*ALIGN(h,16)*3/2 after
 * the EXIF swap; UNKNOWN/other -> by source sampling (x3/2 for 420 and
 * grey, x2 for 422/440, x3 for 444). DVPP_EFORMAT when @format cannot come
 * from this source (ACL_ERROR_FORMAT_NOT_MATCH). */
dvpp_status dvpp_jpeg_predict_dec_size(const uint8_t *data, size_t len,
                                       dvpp_pixfmt format, dvpp_profile profile,
                                       uint32_t *size, dvpp_err *err);

typedef struct dvpp_jpeg_encode_opts {
    int quality;                  /* 1..100; ascend310 also 0 (= 100) */
    dvpp_jpeg_sampling sampling;  /* RGB/BGR input: 444, 422 or 420 */
    dvpp_profile profile;
} dvpp_jpeg_encode_opts;

/* Defaults: quality 95, 4:2:0, native. */
void dvpp_jpeg_encode_opts_init(dvpp_jpeg_encode_opts *o);

/* Encode @in as a baseline Huffman JPEG appended to @out (caller owns it).
 * Inputs: NV12, NV21, I420, YV12 (4:2:0 raw), YUYV/UYVY/YVYU/VYUY (4:2:2
 * raw), RGB, BGR, GRAY/YUV400. YUV inputs are written as raw planes, never
 * through RGB. ascend profiles add JPEGE's rules: NV12/NV21/packed 422 only,
 * even sizes, 32..8192, planar width stride % 16 == 0, packed width stride
 * == ALIGN(2w,16), height stride == h or a multiple of 16. */
dvpp_status dvpp_jpeg_encode(const dvpp_image *in,
                             const dvpp_jpeg_encode_opts *o, dvpp_buf *out,
                             dvpp_err *err);

/* The checks dvpp_jpeg_encode makes before it reads a pixel (quality,
 * format, size, sampling, the profile's JPEGE rules), on @in's geometry
 * (its data may be NULL). */
dvpp_status dvpp_jpeg_encode_check(const dvpp_image *in, const dvpp_jpeg_encode_opts *o,
                                   dvpp_err *err);

/* "libjpeg-turbo 2.1.5": the library this build decodes with. */
const char *dvpp_jpeg_library(void);

/* acldvppJpegPredictEncSize: ALIGN(ws*hs*k + 640 + 128, 2 MiB) with
 * k = 3/2 for 420SP and 1 for packed 422 (ws already in bytes). */
dvpp_status dvpp_jpeg_predict_enc_size(const dvpp_image *in,
                                       dvpp_profile profile, uint32_t *size,
                                       dvpp_err *err);

#endif
