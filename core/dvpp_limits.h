/* dvpp_limits: the bounds every untrusted input is checked against.
 *
 * Codecs check them after parsing a header and before allocating any pixel
 * memory, so an over-limit input costs a header parse and nothing more.
 * Defaults follow reliability.md's targets (imgproxy/ImageMagick-class
 * guards): they admit a 40 MP phone photo, not a decompression bomb.
 */
#ifndef DVPP_LIMITS_H
#define DVPP_LIMITS_H

#include <stdint.h>

#include "dvpp_status.h"

typedef struct dvpp_limits {
    uint64_t max_encoded_bytes; /* compressed input size */
    uint64_t max_pixels;        /* width * height of any decoded image */
    uint32_t max_side;          /* width or height */
    uint32_t max_jpeg_scans;    /* progressive JPEG scans (SOS markers) */
    uint32_t max_png_chunk;     /* bytes of one ancillary PNG chunk */
    uint32_t max_png_chunks;    /* ancillary chunks libpng may cache (a
                                   backstop: the PNG decoder skips them) */
    uint64_t max_decode_memory; /* codec working memory besides pixels */
    uint64_t max_video_bytes;   /* compressed video input size */
    uint32_t max_video_frames;  /* frames decoded (not only delivered) per
                                   video: a budget against streams of
                                   countless tiny frames */
    uint64_t max_output_bytes;  /* one request's result a front end
                                   allocates (an HTTP answer's tensor,
                                   pixels or frames), checked before the
                                   allocation */
} dvpp_limits;

#define DVPP_LIMIT_ENCODED_BYTES_DEFAULT ((uint64_t)32 << 20)
#define DVPP_LIMIT_PIXELS_DEFAULT ((uint64_t)40000000)
#define DVPP_LIMIT_SIDE_DEFAULT 16384u
#define DVPP_LIMIT_JPEG_SCANS_DEFAULT 100u
#define DVPP_LIMIT_PNG_CHUNK_DEFAULT (1u << 20)
#define DVPP_LIMIT_PNG_CHUNKS_DEFAULT 128u
#define DVPP_LIMIT_DECODE_MEMORY_DEFAULT ((uint64_t)256 << 20)
#define DVPP_LIMIT_VIDEO_BYTES_DEFAULT ((uint64_t)256 << 20)
#define DVPP_LIMIT_VIDEO_FRAMES_DEFAULT 100000u
/* 256 MiB: a 40 Mpx (max_pixels) RGB image as uint8 (120 MB), a batch of
 * 256 224x224 float32 tensors (154 MB) or 52 at 640x640; not the 480 MB of
 * one 40 Mpx float32 tensor asked of a 1x1 image. A quarter of the default
 * device.max_bytes_in_flight, so four such results can be held at once. */
#define DVPP_LIMIT_OUTPUT_BYTES_DEFAULT ((uint64_t)256 << 20)

/* The safe defaults above. */
dvpp_limits dvpp_limits_default(void);

/* Check a decoded size against @lim: DVPP_ELIMIT naming the limit that
 * @width x @height breaks ("max_side", "max_pixels"), else DVPP_OK. */
dvpp_status dvpp_limits_check_image(const dvpp_limits *lim, uint64_t width,
                                    uint64_t height, dvpp_err *err);

/* Check the bytes of a result before it is allocated: DVPP_ELIMIT
 * "max_output_bytes". */
dvpp_status dvpp_limits_check_output(const dvpp_limits *lim, uint64_t bytes,
                                     dvpp_err *err);

/* Check an encoded input size: DVPP_ELIMIT "max_encoded_bytes". */
dvpp_status dvpp_limits_check_encoded(const dvpp_limits *lim, uint64_t bytes,
                                      dvpp_err *err);

#endif
