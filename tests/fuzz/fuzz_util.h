/* Helpers shared by the fuzz targets (header only, so each target stays one
 * translation unit): small valid images made in memory, a byte reader. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dvpp_image.h"
#include "dvpp_jpeg.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"

/* A @w x @h RGB gradient encoded as JPEG (@png false) or PNG into @out
 * (initialised here; the caller frees it with dvpp_buf_fini). Aborts on
 * failure: the fuzzer cannot start without it. */
static inline void fuzz_make_image(bool png, uint32_t w, uint32_t h, dvpp_buf *out)
{
    dvpp_image img = {0};
    dvpp_jpeg_encode_opts jo;
    dvpp_png_encode_opts po = {-1};
    dvpp_status st;

    dvpp_buf_init(out);
    if (dvpp_image_init(&img, DVPP_PIXEL_RGB, w, h, 1, 1, NULL) != DVPP_OK ||
        dvpp_image_alloc(&img, NULL) != DVPP_OK)
        abort();
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *p = img.data + (size_t)y * img.width_stride + 3u * x;
            p[0] = (uint8_t)(x * 255 / (w > 1 ? w - 1 : 1));
            p[1] = (uint8_t)(y * 255 / (h > 1 ? h - 1 : 1));
            p[2] = (uint8_t)((x + y) * 7);
        }
    dvpp_jpeg_encode_opts_init(&jo);
    st = png ? dvpp_png_encode(&img, &po, out, NULL) : dvpp_jpeg_encode(&img, &jo, out, NULL);
    dvpp_image_free(&img);
    if (st != DVPP_OK)
        abort();
}

/* Bytes of the input, taken from the front; 0 once it is used up. */
typedef struct fuzz_reader {
    const uint8_t *p;
    size_t n;
} fuzz_reader;

static inline unsigned fuzz_u8(fuzz_reader *r)
{
    unsigned v = 0;

    if (r->n) {
        v = r->p[0];
        r->p++, r->n--;
    }
    return v;
}

static inline unsigned fuzz_u16(fuzz_reader *r)
{
    unsigned hi = fuzz_u8(r);
    return hi << 8 | fuzz_u8(r);
}

static inline uint32_t fuzz_u32(fuzz_reader *r)
{
    uint32_t hi = fuzz_u16(r);
    return hi << 16 | fuzz_u16(r);
}

/* Up to @want bytes as a view into the input. */
static inline const uint8_t *fuzz_take(fuzz_reader *r, size_t want, size_t *got)
{
    const uint8_t *p = r->p;

    *got = want < r->n ? want : r->n;
    r->p += *got, r->n -= *got;
    return p;
}

#endif
