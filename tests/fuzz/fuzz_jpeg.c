/* libFuzzer target: JPEG probe + decode to an RGB, a YUV and a region
 * output under tight limits (small images only, so each run is fast). */
#include <stddef.h>
#include <stdint.h>

#include "dvpp_jpeg.h"

static void decode(const uint8_t *d, size_t n, dvpp_pixfmt f, bool roi,
                   const dvpp_limits *lim)
{
    dvpp_jpeg_decode_opts o;
    dvpp_image img = {0};

    dvpp_jpeg_decode_opts_init(&o);
    o.format = f;
    o.allow_partial = n & 1;
    o.scale_num = (uint8_t)(1 + n % 8);
    if (roi) {
        o.has_roi = true;
        o.roi = (dvpp_jpeg_roi){2, 2, 6, 4};
    }
    if (dvpp_jpeg_decode(d, n, &o, lim, &img, NULL) == DVPP_OK)
        dvpp_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dvpp_limits lim = dvpp_limits_default();
    dvpp_jpeg_info info;

    /* A megapixel cap keeps each input fast, as libjpeg-turbo's fuzzers do. */
    lim.max_pixels = 1 << 20;
    lim.max_decode_memory = 64u << 20;
    (void)dvpp_jpeg_probe(data, size, &info, NULL);
    decode(data, size, DVPP_PIXEL_RGB, false, &lim);
    decode(data, size, DVPP_PIXEL_NV12, size & 2, &lim);
    decode(data, size, DVPP_PIXEL_YUV444SP, size & 4, &lim);
    return 0;
}
