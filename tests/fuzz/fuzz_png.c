/* libFuzzer target: PNG probe + decode to RGBA, grey with compositing,
 * and an ascend310 decode, under tight limits. */
#include <stddef.h>
#include <stdint.h>

#include "dvpp_png.h"

static void decode(const uint8_t *d, size_t n, dvpp_pixfmt f, dvpp_png_alpha a,
                   dvpp_profile p, const dvpp_limits *lim)
{
    dvpp_png_decode_opts o;
    dvpp_image img = {0};

    dvpp_png_decode_opts_init(&o);
    o.format = f;
    o.alpha = a;
    o.profile = p;
    if (dvpp_png_decode(d, n, &o, lim, &img, NULL) == DVPP_OK)
        dvpp_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dvpp_limits lim = dvpp_limits_default();
    dvpp_png_info info;

    lim.max_pixels = 1 << 20;
    lim.max_decode_memory = 64u << 20;
    (void)dvpp_png_probe(data, size, &info, NULL);
    decode(data, size, DVPP_PIXEL_RGBA, DVPP_PNG_ALPHA_AUTO, DVPP_PROFILE_NATIVE, &lim);
    decode(data, size, DVPP_PIXEL_GRAY, DVPP_PNG_ALPHA_COMPOSITE, DVPP_PROFILE_NATIVE, &lim);
    decode(data, size, DVPP_PIXEL_RGB, DVPP_PNG_ALPHA_AUTO, DVPP_PROFILE_ASCEND310, &lim);
    return 0;
}
