/* The one-pass preprocess chain (resize rows straight into the norm kernel,
 * 4:2:0 YUV converted only where sampled) gives the bytes of the two-step
 * path (resize into an image, then normalise) for RGB and YUV sources,
 * crops, parities, dtypes and layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_aipp.h"
#include "dvpp_mem.h"

static dvpp_image make_src(dvpp_pixfmt f, uint32_t w, uint32_t h)
{
    dvpp_image img;
    uint32_t r = 0x9E3779B9u;

    assert_int_equal(dvpp_image_init(&img, f, w, h, 16, 2, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    for (size_t i = 0; i < img.size; i++) {
        r ^= r << 13, r ^= r >> 17, r ^= r << 5;
        img.data[i] = (uint8_t)((i * 7 / 3) + (r & 31)); /* texture + noise */
    }
    return img;
}

/* Returns whether the run wrote a resized intermediate image. */
static bool run(bool fuse, const dvpp_image *src, const dvpp_resize_geom *g,
                const dvpp_resize_opts *o, const dvpp_norm_spec *spec,
                dvpp_tensor *t)
{
    bool intermediate;
    dvpp_aipp_ctx *c = malloc(sizeof(*c));
    static const uint8_t pad[3] = {114, 114, 114};
    dvpp_err e;

    assert_non_null(c);
    dvpp_aipp_ctx_init(c);
    c->no_fuse = !fuse;
    if (dvpp_preprocess_run(c, src, g, o, pad, spec, t, 1, &e) != DVPP_OK)
        fail_msg("preprocess (%s): %s", fuse ? "fused" : "two-step", e.msg);
    intermediate = c->tmp[1].data != NULL;
    dvpp_aipp_ctx_fini(c);
    free(c);
    return intermediate;
}

static void check(dvpp_pixfmt f, dvpp_resize_mode mode, dvpp_parity parity,
                  dvpp_interp interp, dvpp_dtype dt, dvpp_layout l, bool bgr)
{
    dvpp_image src = make_src(f, 150, 98);
    dvpp_resize_geom g;
    dvpp_resize_opts o;
    dvpp_norm_spec spec;
    dvpp_tensor a, b;

    dvpp_resize_opts_init(&o);
    o.parity = parity;
    o.interp = interp;
    dvpp_norm_spec_init(&spec);
    spec.mean[0] = 0.485, spec.mean[1] = 0.456, spec.mean[2] = 0.406;
    spec.std[0] = 0.229, spec.std[1] = 0.224, spec.std[2] = 0.225;
    spec.bgr = bgr;
    spec.dtype = dt;
    spec.layout = l;
    assert_int_equal(dvpp_resize_geometry(150, 98, mode, 61, 45, &g, NULL), DVPP_OK);
    assert_int_equal(dvpp_tensor_init(&a, dt, l, 2, 3, g.out_h, g.out_w, NULL), DVPP_OK);
    b = a;
    a.data = dvpp_calloc(1, a.bytes);
    b.data = dvpp_calloc(1, b.bytes);
    assert_non_null(a.data);
    assert_non_null(b.data);
    /* One pass writes no resized image (letterbox pads one first). */
    assert_int_equal(run(true, &src, &g, &o, &spec, &a), mode == DVPP_RESIZE_LETTERBOX);
    assert_true(run(false, &src, &g, &o, &spec, &b));
    assert_memory_equal(a.data, b.data, a.bytes);
    dvpp_free(a.data, a.bytes);
    dvpp_free(b.data, b.bytes);
    dvpp_image_free(&src);
}

static void test_rgb_sources(void **state)
{
    (void)state;
    check(DVPP_PIXEL_RGB, DVPP_RESIZE_STRETCH, DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR,
          DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, false);
    check(DVPP_PIXEL_RGB, DVPP_RESIZE_FILL, DVPP_PARITY_PIL, DVPP_INTERP_BICUBIC,
          DVPP_DTYPE_F16, DVPP_LAYOUT_NHWC, false);
    check(DVPP_PIXEL_BGR, DVPP_RESIZE_STRETCH, DVPP_PARITY_CV2, DVPP_INTERP_AREA,
          DVPP_DTYPE_F32, DVPP_LAYOUT_NC1HWC0, true);
    check(DVPP_PIXEL_RGB, DVPP_RESIZE_STRETCH, DVPP_PARITY_CV2, DVPP_INTERP_NEAREST,
          DVPP_DTYPE_I8, DVPP_LAYOUT_NCHW, false);
}

static void test_yuv_sources(void **state)
{
    (void)state;
    check(DVPP_PIXEL_NV12, DVPP_RESIZE_STRETCH, DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR,
          DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, false);
    check(DVPP_PIXEL_NV21, DVPP_RESIZE_FILL, DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR,
          DVPP_DTYPE_F16, DVPP_LAYOUT_NC1HWC0, true);
    check(DVPP_PIXEL_I420, DVPP_RESIZE_STRETCH, DVPP_PARITY_TF, DVPP_INTERP_BILINEAR,
          DVPP_DTYPE_U8, DVPP_LAYOUT_NHWC, false);
}

static void test_letterbox_takes_the_two_step_path(void **state)
{
    (void)state;
    check(DVPP_PIXEL_RGB, DVPP_RESIZE_LETTERBOX, DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR,
          DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rgb_sources),
        cmocka_unit_test(test_yuv_sources),
        cmocka_unit_test(test_letterbox_takes_the_two_step_path),
    };
    return cmocka_run_group_tests_name("preprocess", tests, NULL, NULL);
}
