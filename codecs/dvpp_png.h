/* dvpp_png: PNG decode (PNGD) and encode through libpng.
 *
 * Decode accepts every colour type and bit depth, palettes with tRNS,
 * 16-bit samples (reduced to 8 bits by keeping the high byte, as Pillow
 * does) and Adam7 interlace. Outputs are RGB, BGR, RGBA, BGRA and GRAY
 * (YUV400 is accepted as a synonym of GRAY); a source alpha channel (or
 * tRNS) is kept, dropped, or composited on a given colour. Conversions match
 * Pillow's: grey -> RGB replicates, RGB -> grey uses Pillow's L weights
 * (R*19595 + G*38470 + B*7471 + 0x8000) >> 16.
 *
 * Limits (side, pixels, chunk size, encoded bytes) are checked by a walk of
 * the chunk headers after the IHDR and before libpng runs or any pixel is
 * allocated; png_set_user_limits / png_set_chunk_*_max back them up inside
 * libpng. Ancillary chunks other than tRNS are skipped unread (CRC still
 * checked), so text/ICC bombs cost nothing; an ancillary chunk longer than
 * max_png_chunk is refused (APNG fdAT frame data excepted: it is skipped).
 * Strict: a missing IEND, truncated or short image data, a bad critical
 * chunk CRC or zlib checksum are DVPP_ECORRUPT. NULL options or limits
 * mean the defaults. libpng allocations go through
 * dvpp_malloc so a test allocator sees them. libpng errors longjmp back into
 * the wrapper; nothing calls exit(). Thread-safe: no shared state.
 */
#ifndef DVPP_PNG_H
#define DVPP_PNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_image.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_profile.h"
#include "dvpp_status.h"

typedef struct dvpp_png_info {
    uint32_t width;
    uint32_t height;
    uint8_t bit_depth;  /* 1, 2, 4, 8, 16 */
    uint8_t color_type; /* PNG colour type: 0 grey, 2 RGB, 3 palette,
                           4 grey+alpha, 6 RGBA */
    uint8_t channels;   /* after palette expansion: 1..4, tRNS counts */
    bool interlaced;    /* Adam7 */
    bool has_trns;      /* tRNS chunk present */
    bool has_alpha;     /* alpha channel or tRNS */
} dvpp_png_info;

/* Read the signature and IHDR (and tRNS presence) without decoding pixels.
 * DVPP_ECORRUPT with a specific message for a bad signature (which byte),
 * a bad IHDR CRC or invalid IHDR fields. */
dvpp_status dvpp_png_probe(const uint8_t *data, size_t len, dvpp_png_info *info,
                           dvpp_err *err);

typedef enum dvpp_png_alpha {
    DVPP_PNG_ALPHA_AUTO = 0,  /* keep when the output has alpha, else drop */
    DVPP_PNG_ALPHA_DROP = 1,  /* ignore alpha (output alpha = 255) */
    DVPP_PNG_ALPHA_COMPOSITE = 2, /* blend onto background, alpha = 255 */
} dvpp_png_alpha;

typedef struct dvpp_png_decode_opts {
    dvpp_pixfmt format;     /* RGB, BGR, RGBA, BGRA, GRAY/YUV400, or UNKNOWN:
                               the source's natural format (GRAY, RGB, RGBA;
                               grey+alpha becomes RGBA) */
    dvpp_png_alpha alpha;
    uint8_t background[3];  /* R, G, B for DVPP_PNG_ALPHA_COMPOSITE */
    uint32_t align_w;       /* stride alignment in pixels; 0 = profile's */
    uint32_t align_h;       /* height stride alignment; 0 = profile's */
    dvpp_profile profile;
} dvpp_png_decode_opts;

/* Defaults: UNKNOWN (natural) format, AUTO alpha, black background, native. */
void dvpp_png_decode_opts_init(dvpp_png_decode_opts *o);

/* Decode @data into @out. When out->data is NULL the pixels are allocated
 * (caller owns them; release with dvpp_image_free); otherwise out->data and
 * out->size are a caller buffer that must hold the layout (DVPP_ENOSPC).
 * The geometry fields of @out are always overwritten. On error out->data is
 * left as the caller gave it (NULL when it was NULL).
 * ascend310/ascend310p: 32..4096 per side, palette rejected, RGB (alpha
 * dropped) or RGBA output, no compositing, width stride ALIGN(w,128)*bpp,
 * height stride ALIGN(h,16) (an explicit alignment must be a multiple of
 * 128x16). */
dvpp_status dvpp_png_decode(const uint8_t *data, size_t len,
                            const dvpp_png_decode_opts *o,
                            const dvpp_limits *lim, dvpp_image *out,
                            dvpp_err *err);

/* The output dvpp_png_decode would give for the image @info describes
 * (dvpp_png_probe), after the checks that need no pixels (format, alpha
 * mode, the profile's rules): out->data = NULL, out->size = the bytes its
 * layout needs. What a planner calls before the job runs. */
dvpp_status dvpp_png_decode_geometry_info(const dvpp_png_info *info,
                                          const dvpp_png_decode_opts *o,
                                          dvpp_image *out, dvpp_err *err);

/* acldvppPngPredictDecSize (DVPP's formula, so a 16-bit file predicts
 * twice what the 8-bit decode needs): w'=ALIGN(w,128), h'=ALIGN(h,16),
 * rowBytes = (w' * bitDepth * 3 + 7) >> 3 for RGB, * 4 for RGBA/UNKNOWN;
 * size = rowBytes * h', which must be <= 4096*4096*4*2. */
dvpp_status dvpp_png_predict_dec_size(const uint8_t *data, size_t len,
                                      dvpp_pixfmt format, uint32_t *size,
                                      dvpp_err *err);

typedef struct dvpp_png_encode_opts {
    int level; /* zlib level 0..9; -1 = 6 */
} dvpp_png_encode_opts;

/* Encode @in (RGB, BGR, RGBA, BGRA, GRAY or YUV400) as 8-bit PNG appended
 * to @out (caller owns @out; it may already hold data). */
dvpp_status dvpp_png_encode(const dvpp_image *in, const dvpp_png_encode_opts *o,
                            dvpp_buf *out, dvpp_err *err);

/* The checks dvpp_png_encode makes before it reads a pixel (format, size,
 * level), on @in's geometry (its data may be NULL). */
dvpp_status dvpp_png_encode_check(const dvpp_image *in, const dvpp_png_encode_opts *o,
                                  dvpp_err *err);

#endif
