/* Unit tests for vpc/dvpp_vpc: operations over images, the named resize
 * modes and their box mapping, the ascend profiles' rules and texts, batch
 * crop against single calls. Engine parity with OpenCV/Pillow is tested in
 * tests/e2e; kernels in test_resize.c / test_csc.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_vpc.h"
#include "test_alloc.h"

static uint32_t g_rng = 0x2468ACEu;

static uint8_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return (uint8_t)g_rng;
}

/* A @fmt image with random pixels (smooth enough to resize meaningfully
 * is not needed here: equality tests only). */
static dvpp_image make_image(dvpp_pixfmt fmt, uint32_t w, uint32_t h,
                             uint32_t align_w, uint32_t align_h)
{
    dvpp_image img;

    assert_int_equal(dvpp_image_init(&img, fmt, w, h, align_w, align_h, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    for (size_t i = 0; i < img.size; i++)
        img.data[i] = rnd();
    return img;
}

static dvpp_image blank(dvpp_pixfmt fmt, uint32_t w, uint32_t h, uint32_t aw,
                        uint32_t ah)
{
    dvpp_image img;

    assert_int_equal(dvpp_image_init(&img, fmt, w, h, aw, ah, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    memset(img.data, 0x5A, img.size);
    return img;
}

static dvpp_resize_opts ascend_opts(int mode)
{
    dvpp_resize_opts o;

    dvpp_resize_opts_init(&o);
    o.parity = DVPP_PARITY_ASCEND;
    o.ascend_mode = mode;
    return o;
}

/* --- geometry -------------------------------------------------------------- */

static void test_letterbox_maps_boxes_back(void **state)
{
    dvpp_resize_geom g;
    /* 1920x1080 -> 640x640: scale 1/3, 640x360 image, 140 rows above. */
    static const double box[4] = {300, 150, 900, 600};
    double ox0, oy0, ox1, oy1;

    (void)state;
    assert_int_equal(dvpp_resize_geometry(1920, 1080, DVPP_RESIZE_LETTERBOX, 640,
                                          640, &g, NULL), DVPP_OK);
    assert_int_equal(g.out_w, 640);
    assert_int_equal(g.out_h, 640);
    assert_true(g.pad_x == 0 && g.pad_y == 140);
    assert_int_equal(g.paste.top, 140);
    assert_int_equal(g.paste.bottom, 499);
    ox0 = box[0] * g.scale_x + g.pad_x, oy0 = box[1] * g.scale_y + g.pad_y;
    ox1 = box[2] * g.scale_x + g.pad_x, oy1 = box[3] * g.scale_y + g.pad_y;
    assert_true(ox0 == 100 && oy0 == 190 && ox1 == 300 && oy1 == 340);
    assert_true((ox0 - g.pad_x) / g.scale_x == 300);
    assert_true((oy1 - g.pad_y) / g.scale_y == 600);

    /* 1280x720 -> 416x416 (YOLO): 416x234 at row 91, scale 0.325 both. */
    assert_int_equal(dvpp_resize_geometry(1280, 720, DVPP_RESIZE_LETTERBOX, 416,
                                          416, &g, NULL), DVPP_OK);
    assert_int_equal(g.paste.left, 0);
    assert_int_equal(g.paste.top, 91);
    assert_int_equal(dvpp_roi_height(&g.paste), 234);
    assert_true(g.scale_x == 0.325 && g.scale_y == 0.325);
    assert_true((208.0 - g.pad_y) / g.scale_y == 360.0);
    assert_true((416.0 - g.pad_x) / g.scale_x == 1280.0);
}

static void test_named_modes(void **state)
{
    dvpp_resize_geom g;

    (void)state;
    assert_int_equal(dvpp_resize_geometry(1920, 1080, DVPP_RESIZE_FIT, 224, 224,
                                          &g, NULL), DVPP_OK);
    assert_int_equal(g.out_w, 224);
    assert_int_equal(g.out_h, 126); /* round(1080 * 224 / 1920) */
    assert_int_equal(dvpp_resize_geometry(1920, 1080, DVPP_RESIZE_FILL, 224, 224,
                                          &g, NULL), DVPP_OK);
    assert_int_equal(g.out_w, 224);
    assert_int_equal(g.out_h, 224);
    assert_int_equal(g.crop.left, 420); /* centred 1080x1080 */
    assert_int_equal(g.crop.right, 1499);
    assert_int_equal(g.crop.top, 0);
    assert_true(fabs(g.pad_x + 420.0 * 224 / 1080) < 1e-9);
    assert_int_equal(dvpp_resize_geometry(1920, 1080, DVPP_RESIZE_SHORTER, 256, 0,
                                          &g, NULL), DVPP_OK);
    assert_int_equal(g.out_w, 455); /* round(1920 * 256 / 1080) */
    assert_int_equal(g.out_h, 256);
    assert_int_equal(dvpp_resize_geometry(1080, 1920, DVPP_RESIZE_LONGER, 640, 0,
                                          &g, NULL), DVPP_OK);
    assert_int_equal(g.out_w, 360);
    assert_int_equal(g.out_h, 640);
    assert_int_equal(dvpp_resize_geometry(100, 50, DVPP_RESIZE_STRETCH, 7, 9, &g,
                                          NULL), DVPP_OK);
    assert_true(g.out_w == 7 && g.out_h == 9 && g.scale_x == 0.07);
    assert_int_equal(dvpp_resize_geometry(0, 50, DVPP_RESIZE_STRETCH, 7, 9, &g,
                                          NULL), DVPP_EINVAL);
}

/* SHORTER/LONGER's other side, W * other / side, by hand:
 * 641x423 shorter 256: 164096 / 423 = 387.93 -> nearest 388, floor 387
 * (torchvision's int()); 3x2 shorter 3: 4.5 -> 5 (half up) or 4;
 * 1000x333 longer 224: 74592 / 1000 = 74.59 -> 75 or 74; 800x600 shorter
 * 300: exactly 400 either way; 10000x1 longer 100: 0.01 -> 1 either way. */
static void assert_one_side(uint32_t sw, uint32_t sh, dvpp_resize_mode mode, uint32_t w,
                            dvpp_resize_round round, uint32_t want_w, uint32_t want_h)
{
    dvpp_resize_geom g;

    assert_int_equal(dvpp_resize_geometry_rounded(sw, sh, mode, w, 0, round, &g, NULL),
                     DVPP_OK);
    assert_int_equal(g.out_w, want_w);
    assert_int_equal(g.out_h, want_h);
    assert_true(g.scale_x == (double)want_w / sw && g.scale_y == (double)want_h / sh);
    assert_true(g.crop.right == sw - 1 && g.crop.bottom == sh - 1);
    assert_true(g.paste.right == want_w - 1 && g.paste.bottom == want_h - 1);
}

static void test_shorter_longer_rounding(void **state)
{
    const dvpp_resize_round N = DVPP_RESIZE_ROUND_NEAREST, F = DVPP_RESIZE_ROUND_FLOOR;
    dvpp_resize_geom g, plain;
    dvpp_resize_round r;
    dvpp_err e;

    (void)state;
    assert_one_side(641, 423, DVPP_RESIZE_SHORTER, 256, N, 388, 256);
    assert_one_side(641, 423, DVPP_RESIZE_SHORTER, 256, F, 387, 256);
    assert_one_side(423, 641, DVPP_RESIZE_SHORTER, 256, F, 256, 387);
    assert_one_side(3, 2, DVPP_RESIZE_SHORTER, 3, N, 5, 3);
    assert_one_side(3, 2, DVPP_RESIZE_SHORTER, 3, F, 4, 3);
    assert_one_side(1000, 333, DVPP_RESIZE_LONGER, 224, N, 224, 75);
    assert_one_side(1000, 333, DVPP_RESIZE_LONGER, 224, F, 224, 74);
    assert_one_side(333, 1000, DVPP_RESIZE_LONGER, 224, F, 74, 224);
    assert_one_side(800, 600, DVPP_RESIZE_SHORTER, 300, N, 400, 300);
    assert_one_side(800, 600, DVPP_RESIZE_SHORTER, 300, F, 400, 300);
    assert_one_side(10000, 1, DVPP_RESIZE_LONGER, 100, N, 100, 1);
    assert_one_side(10000, 1, DVPP_RESIZE_LONGER, 100, F, 100, 1);
    /* the old entry point is NEAREST, byte for byte */
    assert_int_equal(dvpp_resize_geometry(641, 423, DVPP_RESIZE_SHORTER, 256, 0, &plain,
                                          NULL), DVPP_OK);
    assert_int_equal(dvpp_resize_geometry_rounded(641, 423, DVPP_RESIZE_SHORTER, 256, 0, N,
                                                  &g, NULL), DVPP_OK);
    assert_memory_equal(&g, &plain, sizeof(g));
    /* FLOOR is for the one-side modes only; NEAREST is everyone's */
    for (int m = DVPP_RESIZE_STRETCH; m <= DVPP_RESIZE_LETTERBOX; m++) {
        memset(&e, 0, sizeof(e));
        assert_int_equal(dvpp_resize_geometry_rounded(641, 423, (dvpp_resize_mode)m, 256,
                                                      256, F, &g, &e), DVPP_EINVAL);
        assert_string_equal(e.field, "round");
        assert_non_null(strstr(e.msg, dvpp_resize_mode_name((dvpp_resize_mode)m)));
        assert_int_equal(dvpp_resize_geometry_rounded(641, 423, (dvpp_resize_mode)m, 256,
                                                      256, N, &g, NULL), DVPP_OK);
    }
    assert_int_equal(dvpp_resize_geometry_rounded(641, 423, DVPP_RESIZE_SHORTER, 256, 0,
                                                  (dvpp_resize_round)2, &g, NULL),
                     DVPP_EINVAL);
    assert_true(dvpp_resize_round_parse("floor", &r) && r == F);
    assert_true(dvpp_resize_round_parse("nearest", &r) && r == N);
    assert_false(dvpp_resize_round_parse("ceil", &r));
    assert_string_equal(dvpp_resize_round_name(F), "floor");
}

/* --- operations --------------------------------------------------------------- */

static void test_paste_leaves_outside_untouched(void **state)
{
    dvpp_vpc_ctx c;
    dvpp_image src = make_image(DVPP_PIXEL_RGB, 64, 48, 1, 1);
    dvpp_image dst = blank(DVPP_PIXEL_RGB, 100, 80, 1, 1);
    dvpp_roi crop = {8, 4, 39, 27}, paste = {10, 20, 41, 43};
    dvpp_resize_opts o;
    dvpp_err e;

    (void)state;
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
    dvpp_resize_opts_init(&o);
    assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &src, &crop, &dst, &paste, &o, &e),
                     DVPP_OK);
    for (uint32_t y = 0; y < 80; y++)
        for (uint32_t x = 0; x < 100; x++) {
            bool in = x >= 10 && x <= 41 && y >= 20 && y <= 43;
            const uint8_t *p = dst.data + y * dst.width_stride + 3 * x;
            if (!in)
                assert_true(p[0] == 0x5A && p[1] == 0x5A && p[2] == 0x5A);
            else /* same-size paste: a copy of the crop */
                assert_memory_equal(p, src.data + (y - 20 + 4) * src.width_stride +
                                           3 * (x - 10 + 8), 3);
        }
    dvpp_image_free(&src);
    dvpp_image_free(&dst);
    dvpp_vpc_ctx_fini(&c);
}

/* Packed 4:2:2, a same-size paste of odd width: every pixel of the region
 * gets its Y and the chroma of its pair (the last pixel's V included:
 * it was left stale), and the pixel after the region, which shares that
 * last pair, keeps its Y. Canary 0xAA elsewhere. */
static void test_packed422_odd_width_paste_writes_the_last_pair(void **state)
{
    static const struct {
        dvpp_pixfmt f;
        uint8_t y0, u, y1, v; /* byte offsets in a pair */
    } fmts[] = {
        {DVPP_PIXEL_YUYV, 0, 1, 2, 3},
        {DVPP_PIXEL_UYVY, 1, 0, 3, 2},
        {DVPP_PIXEL_YVYU, 0, 3, 2, 1},
        {DVPP_PIXEL_VYUY, 1, 2, 3, 0},
    };
    /* also a region ending at an odd image edge: its pair's Y1 is padding */
    static const struct {
        uint32_t dw, left;
    } geo[] = {{10, 2}, {7, 2}};

    (void)state;
    for (size_t k = 0; k < 4; k++) {
        for (size_t g = 0; g < 2; g++) {
            dvpp_vpc_ctx c;
            dvpp_image src = make_image(fmts[k].f, 8, 4, 1, 1);
            dvpp_image dst = blank(fmts[k].f, geo[g].dw, 4, 1, 1);
            uint32_t l = geo[g].left;
            dvpp_roi crop = {0, 0, 4, 3}, paste = {l, 0, l + 4, 3};
            dvpp_resize_opts o;
            dvpp_err e;

            memset(dst.data, 0xAA, dst.size);
            dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
            dvpp_resize_opts_init(&o);
            assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &src, &crop, &dst, &paste, &o, &e),
                             DVPP_OK);
            for (uint32_t y = 0; y < 4; y++) {
                const uint8_t *s = src.data + y * src.width_stride;
                const uint8_t *d = dst.data + y * dst.width_stride;
                for (uint32_t x = 0; x < geo[g].dw; x++) {
                    const uint8_t *dp = d + 4 * (x / 2), *sp = s + 4 * ((x - l) / 2);
                    uint8_t dy = dp[x % 2 ? fmts[k].y1 : fmts[k].y0];
                    if (x < l || x > l + 4) {
                        assert_int_equal(dy, 0xAA);
                        if (x < l)
                            assert_true(dp[fmts[k].u] == 0xAA && dp[fmts[k].v] == 0xAA);
                        continue;
                    }
                    assert_int_equal(dy, sp[(x - l) % 2 ? fmts[k].y1 : fmts[k].y0]);
                    if (dp[fmts[k].u] != sp[fmts[k].u] || dp[fmts[k].v] != sp[fmts[k].v])
                        fail_msg("%s, width %u: row %u pixel %u: U,V %02x,%02x, want %02x,%02x",
                                 dvpp_pixfmt_name(fmts[k].f), geo[g].dw, y, x,
                                 dp[fmts[k].u], dp[fmts[k].v], sp[fmts[k].u], sp[fmts[k].v]);
                }
            }
            dvpp_image_free(&src);
            dvpp_image_free(&dst);
            dvpp_vpc_ctx_fini(&c);
        }
    }
}

static void test_nv12_same_size_crop_is_a_copy(void **state)
{
    dvpp_vpc_ctx c;
    dvpp_image src = make_image(DVPP_PIXEL_NV12, 64, 48, 16, 2);
    dvpp_image dst = blank(DVPP_PIXEL_NV12, 32, 20, 16, 2);
    dvpp_roi crop = {10, 6, 41, 25};
    dvpp_resize_opts o;
    dvpp_planes ps, pd;

    (void)state;
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
    dvpp_resize_opts_init(&o);
    assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &src, &crop, &dst, NULL, &o, NULL),
                     DVPP_OK);
    dvpp_image_planes(&src, &ps, NULL);
    dvpp_image_planes(&dst, &pd, NULL);
    for (uint32_t y = 0; y < 20; y++)
        assert_memory_equal(dvpp_image_row(&dst, &pd, 0, y),
                            dvpp_image_row(&src, &ps, 0, y + 6) + 10, 32);
    for (uint32_t y = 0; y < 10; y++)
        assert_memory_equal(dvpp_image_row(&dst, &pd, 1, y),
                            dvpp_image_row(&src, &ps, 1, y + 3) + 10, 32);
    /* An odd origin: luma from there, chroma from the sample covering the
     * crop's first pixel on (the 2x2 grid restarts at the crop's origin,
     * as a crop of 4:2:0 keeps 4:2:0). It was refused (EINVAL). */
    crop = (dvpp_roi){11, 7, 42, 26};
    assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &src, &crop, &dst, NULL, &o, NULL),
                     DVPP_OK);
    for (uint32_t y = 0; y < 20; y++)
        assert_memory_equal(dvpp_image_row(&dst, &pd, 0, y),
                            dvpp_image_row(&src, &ps, 0, y + 7) + 11, 32);
    for (uint32_t y = 0; y < 10; y++)
        assert_memory_equal(dvpp_image_row(&dst, &pd, 1, y),
                            dvpp_image_row(&src, &ps, 1, y + 3) + 10, 32);
    /* A paste must still start on the grid: it shares no chroma sample
     * with the pixels around it, which it leaves as they are. */
    crop = (dvpp_roi){0, 0, 9, 5};
    {
        dvpp_roi paste = {3, 2, 12, 7};
        assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &src, &crop, &dst, &paste, &o,
                                                    NULL),
                         DVPP_EINVAL);
    }
    dvpp_image_free(&src);
    dvpp_image_free(&dst);
    dvpp_vpc_ctx_fini(&c);
}

/* The Ascend batchcrop sample: 8 ROIs of a 1920x1080 NV12 frame to 224x224
 * NV12; the batch equals 8 single crop-resize calls byte for byte. */
static void test_batch_crop_equals_single_calls(void **state)
{
    dvpp_vpc_ctx c;
    dvpp_image src = make_image(DVPP_PIXEL_NV12, 1920, 1080, 16, 2);
    dvpp_image batch[8], single;
    dvpp_roi rois[8];
    uint32_t nums[1] = {8};
    dvpp_resize_opts o = ascend_opts(1);
    dvpp_err e;

    (void)state;
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_ASCEND310);
    for (int k = 0; k < 8; k++) {
        rois[k] = (dvpp_roi){(uint32_t)(100 + 200 * k), (uint32_t)(50 + 100 * k),
                             (uint32_t)(100 + 200 * k + 299),
                             (uint32_t)(50 + 100 * k + 223 + 2 * k)};
        batch[k] = blank(DVPP_PIXEL_NV12, 224, 224, 16, 2);
    }
    if (dvpp_vpc_batch_crop_resize_paste(&c, &src, 1, nums, rois, batch, NULL, &o,
                                         &e) != DVPP_OK)
        fail_msg("batch: %s", e.msg);
    for (int k = 0; k < 8; k++) {
        single = blank(DVPP_PIXEL_NV12, 224, 224, 16, 2);
        assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &src, &rois[k], &single,
                                                    NULL, &o, &e), DVPP_OK);
        assert_memory_equal(single.data, batch[k].data, single.size);
        dvpp_image_free(&single);
        dvpp_image_free(&batch[k]);
    }
    dvpp_image_free(&src);
    dvpp_vpc_ctx_fini(&c);
}

/* --- ascend rules ---------------------------------------------------------------- */

static void expect_text(dvpp_vpc_ctx *c, const dvpp_image *src,
                        const dvpp_roi *crop, dvpp_image *dst,
                        const dvpp_roi *paste, const dvpp_resize_opts *o,
                        const char *text)
{
    dvpp_err e;
    dvpp_status st = dvpp_vpc_crop_resize_paste(c, src, crop, dst, paste, o, &e);

    if (st != DVPP_EPROFILE || strcmp(e.msg, text) != 0)
        fail_msg("want EPROFILE \"%s\", got %s \"%s\"", text,
                 dvpp_status_name(st), st ? e.msg : "");
}

static void test_ascend310_roi_rules(void **state)
{
    dvpp_vpc_ctx c;
    dvpp_image src = make_image(DVPP_PIXEL_NV12, 1920, 1080, 16, 2);
    dvpp_image dst = blank(DVPP_PIXEL_NV12, 224, 224, 16, 2);
    dvpp_resize_opts o = ascend_opts(1);
    dvpp_roi r;

    (void)state;
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_ASCEND310);
    r = (dvpp_roi){0, 0, 1918, 1079};
    expect_text(&c, &src, &r, &dst, NULL, &o,
                "inputArea rightOffset is 1918, it should be odd!");
    r = (dvpp_roi){1, 0, 1919, 1079};
    expect_text(&c, &src, &r, &dst, NULL, &o,
                "inputArea leftOffset is 1, it should be even!");
    r = (dvpp_roi){0, 2, 1919, 1078};
    expect_text(&c, &src, &r, &dst, NULL, &o,
                "inputArea bottomOffset is 1078, it should be odd!");
    r = (dvpp_roi){0, 0, 8, 99};
    expect_text(&c, &src, &r, &dst, NULL, &o, "cropWidth(9) should be between [10, 8192]!");
    r = (dvpp_roi){0, 0, 99, 3};
    expect_text(&c, &src, &r, &dst, NULL, &o, "cropHeight(4) should be between [6, 8192]!");
    /* 10 x 6 -> 224 x 224 is 22.4x: beyond 16x. */
    r = (dvpp_roi){0, 0, 9, 5};
    expect_text(&c, &src, &r, &dst, NULL, &o,
                "the scale of width (10 -> 224) should be between [1/32, 16]!");
    r = (dvpp_roi){8, 0, 71, 63};
    expect_text(&c, &src, NULL, &dst, &r, &o,
                "outputArea leftOffset(8) should be 16 aligned!");
    o.ascend_mode = 5;
    expect_text(&c, &src, NULL, &dst, NULL, &o,
                "resize interpolation(5) should be between [0, 4]!");
    dvpp_image_free(&src);
    dvpp_image_free(&dst);
    dvpp_vpc_ctx_fini(&c);
}

static void test_ascend310_stride_and_format_rules(void **state)
{
    dvpp_vpc_ctx c;
    dvpp_image rgb = make_image(DVPP_PIXEL_RGB, 100, 64, 1, 1); /* ws 300 */
    dvpp_image narrow = make_image(DVPP_PIXEL_YUV400, 10, 64, 16, 1); /* ws 16 */
    dvpp_image nv12 = make_image(DVPP_PIXEL_NV12, 256, 256, 16, 2);
    dvpp_image out = blank(DVPP_PIXEL_NV12, 256, 256, 16, 2);
    dvpp_image out_rgb = blank(DVPP_PIXEL_RGB, 256, 256, 16, 1);
    dvpp_resize_opts o = ascend_opts(1);
    size_t real = out.size;

    (void)state;
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_ASCEND310);
    expect_text(&c, &rgb, NULL, &out, NULL, &o,
                "Input widthStride(300) is not right, it should be 16 aligned!");
    expect_text(&c, &narrow, NULL, &out, NULL, &o,
                "Input widthStride(16) should not be smaller than 32!");
    out.size = 65536;
    expect_text(&c, &nv12, NULL, &out, NULL, &o,
                "Output bufferSize(65536) should not be smaller than "
                "widthStride(256) * heightStride(256) * 3 / 2 = 98304");
    out.size = real;
    expect_text(&c, &nv12, NULL, &out_rgb, NULL, &o,
                "Ascend310 VPC: output format rgb is not supported!");
    o.parity = DVPP_PARITY_CV2;
    expect_text(&c, &nv12, NULL, &out, NULL, &o,
                "Ascend310 VPC resizes with its own interpolation modes: use "
                "parity ascend (modes 0..4)");
    dvpp_vpc_ctx_fini(&c);

    /* 310P: RGB output is allowed, alpha written as 0 for RGBA. */
    {
        dvpp_image rgba = blank(DVPP_PIXEL_RGBA, 128, 128, 16, 1);
        o = ascend_opts(1);
        dvpp_vpc_ctx_init(&c, DVPP_PROFILE_ASCEND310P);
        assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &nv12, NULL, &out_rgb, NULL,
                                                    &o, NULL), DVPP_OK);
        assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &nv12, NULL, &rgba, NULL,
                                                    &o, NULL), DVPP_OK);
        for (uint32_t i = 0; i < 128 * 128; i++)
            assert_int_equal(rgba.data[4 * i + 3], 0);
        o.ascend_mode = 3;
        expect_text(&c, &nv12, NULL, &out, NULL, &o,
                    "resize interpolation(3) should be between [0, 2]!");
        dvpp_image_free(&rgba);
        dvpp_vpc_ctx_fini(&c);
    }
    dvpp_image_free(&rgb);
    dvpp_image_free(&narrow);
    dvpp_image_free(&nv12);
    dvpp_image_free(&out);
    dvpp_image_free(&out_rgb);
}

static void test_batch_limits(void **state)
{
    dvpp_vpc_ctx c;
    dvpp_image src = make_image(DVPP_PIXEL_NV12, 64, 64, 16, 2);
    uint32_t nums[2] = {200, 57};
    dvpp_resize_opts o = ascend_opts(1);
    dvpp_err e;

    (void)state;
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_ASCEND310);
    assert_int_equal(dvpp_vpc_batch_crop_resize_paste(&c, (dvpp_image[]){src, src}, 2,
                                                      nums, NULL, NULL, NULL, &o, &e),
                     DVPP_EPROFILE);
    assert_string_equal(e.msg, "total roiNums(257) should not be larger than 256!");
    dvpp_vpc_ctx_fini(&c);
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
    c.max_batch_rois = 100;
    assert_int_equal(dvpp_vpc_batch_crop_resize_paste(&c, (dvpp_image[]){src, src}, 2,
                                                      nums, NULL, NULL, NULL, &o, &e),
                     DVPP_ELIMIT);
    dvpp_vpc_ctx_fini(&c);
    dvpp_image_free(&src);
}

static void test_letterbox_fills_padding(void **state)
{
    dvpp_vpc_ctx c;
    dvpp_image src = make_image(DVPP_PIXEL_RGB, 160, 90, 1, 1), dst;
    dvpp_resize_geom g;
    dvpp_resize_opts o;
    static const uint8_t pad[3] = {114, 114, 114};

    (void)state;
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
    dvpp_resize_opts_init(&o);
    assert_int_equal(dvpp_resize_geometry(160, 90, DVPP_RESIZE_LETTERBOX, 64, 64, &g,
                                          NULL), DVPP_OK);
    dst = blank(DVPP_PIXEL_RGB, 64, 64, 1, 1);
    assert_int_equal(dvpp_vpc_resize_mode(&c, &src, &g, &dst, pad, &o, NULL), DVPP_OK);
    /* 64x36 image at row 14: rows 0..13 and 50..63 are padding. */
    assert_int_equal(g.paste.top, 14);
    for (uint32_t y = 0; y < 64; y++) {
        if (y >= 14 && y < 50)
            continue;
        for (uint32_t x = 0; x < 64 * 3; x++)
            assert_int_equal(dst.data[y * dst.width_stride + x], 114);
    }
    dvpp_image_free(&dst);
    dvpp_image_free(&src);
    dvpp_vpc_ctx_fini(&c);
}

/* The pad colour (R,G,B) in YUV by the textbook formulas, in double:
 * Y = Kr R + Kg G + Kb B, U = (B - Y) / (2 (1 - Kb)), V = (R - Y) /
 * (2 (1 - Kr)), narrow range 16 + 219 Y / 255 and 128 + 224 U / 255. */
static void pad_yuv(const uint8_t rgb[3], double kr, double kb, bool full, uint8_t yuv[3])
{
    double kg = 1 - kr - kb;
    double y = kr * rgb[0] + kg * rgb[1] + kb * rgb[2];
    double u = (rgb[2] - y) / (2 * (1 - kb)), v = (rgb[0] - y) / (2 * (1 - kr));
    double o[3] = {full ? y : 16 + y * 219 / 255, 128 + (full ? u : u * 224 / 255),
                   128 + (full ? v : v * 224 / 255)};

    for (int i = 0; i < 3; i++)
        yuv[i] = (uint8_t)lround(o[i] < 0 ? 0 : o[i] > 255 ? 255 : o[i]);
}

/* Every byte of the rows [0, rows) of each plane of @d is the pad colour in
 * @d's format: Y, the U and V bytes where the format keeps them, within 1
 * of the float formula (the CSC's contract, dvpp_csc.h: OpenCV's
 * fixed-point constants; tests/e2e/test_review_proc.py checks the bars
 * bit-exact against cv2.cvtColor). */
static void expect_bars(const dvpp_image *d, uint32_t rows, const uint8_t yuv[3],
                        uint8_t gray)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(d->format);
    dvpp_planes pl;
    static const struct {
        dvpp_pixfmt f;
        uint8_t unit;
        uint8_t pat[4]; /* 0 = Y, 1 = U, 2 = V */
    } kinds[] = {
        {DVPP_PIXEL_NV12, 2, {1, 2}},   {DVPP_PIXEL_NV21, 2, {2, 1}},
        {DVPP_PIXEL_YUV422SP, 2, {1, 2}}, {DVPP_PIXEL_YVU422SP, 2, {2, 1}},
        {DVPP_PIXEL_YUV444SP, 2, {1, 2}}, {DVPP_PIXEL_YVU444SP, 2, {2, 1}},
        {DVPP_PIXEL_YUV440SP, 2, {1, 2}},
        {DVPP_PIXEL_YUYV, 4, {0, 1, 0, 2}}, {DVPP_PIXEL_UYVY, 4, {1, 0, 2, 0}},
        {DVPP_PIXEL_YVYU, 4, {0, 2, 0, 1}}, {DVPP_PIXEL_VYUY, 4, {2, 0, 1, 0}},
        {DVPP_PIXEL_YUV_PACKED_444, 3, {0, 1, 2}},
    };

    assert_int_equal(dvpp_image_planes(d, &pl, NULL), DVPP_OK);
    for (int k = 0; k < pl.count; k++) {
        uint32_t prow = k ? (rows >> fi->chroma_sy) : rows;
        for (uint32_t y = 0; y < prow; y++) {
            const uint8_t *r = d->data + pl.p[k].offset + y * pl.p[k].stride;
            for (uint32_t x = 0; x < pl.p[k].row_bytes; x++) {
                uint8_t want;
                if (d->format == DVPP_PIXEL_GRAY) {
                    want = gray;
                } else if (pl.count == 3) { /* I420: U then V; YV12: V then U */
                    bool vu = d->format == DVPP_PIXEL_YVU_PLANAR_420;
                    want = yuv[k == 0 ? 0 : (k == 1) != vu ? 1 : 2];
                } else if (k == 0 && (pl.count == 2 || d->format == DVPP_PIXEL_YUV400)) {
                    want = yuv[0];
                } else {
                    size_t i = 0;
                    while (kinds[i].f != d->format)
                        i++;
                    want = yuv[kinds[i].pat[x % kinds[i].unit]];
                }
                if (abs(r[x] - want) > 1)
                    fail_msg("%s: plane %d row %u byte %u is %u, want %u (Y,U,V %u,%u,%u)",
                             dvpp_pixfmt_name(d->format), k, y, x, r[x], want, yuv[0],
                             yuv[1], yuv[2]);
            }
        }
    }
}

/* Letterbox bars of a YUV (or grey) output are the R,G,B pad colour
 * converted with the context's matrix and range, for every layout family:
 * semi-planar, planar, packed 4:2:2, 4:4:4, 400 (the pad used to be taken
 * as Y,U,V: green bars for black). */
static void test_letterbox_pad_in_yuv_formats(void **state)
{
    static const dvpp_pixfmt fmts[] = {
        DVPP_PIXEL_NV12, DVPP_PIXEL_NV21, DVPP_PIXEL_YUV422SP, DVPP_PIXEL_YVU422SP,
        DVPP_PIXEL_YUV444SP, DVPP_PIXEL_YVU444SP, DVPP_PIXEL_YUV440SP, DVPP_PIXEL_I420,
        DVPP_PIXEL_YVU_PLANAR_420, DVPP_PIXEL_YUYV, DVPP_PIXEL_UYVY, DVPP_PIXEL_YVYU,
        DVPP_PIXEL_VYUY, DVPP_PIXEL_YUV_PACKED_444, DVPP_PIXEL_YUV400, DVPP_PIXEL_GRAY,
    };
    static const uint8_t pads[][3] = {{0, 0, 0}, {255, 255, 255}, {200, 30, 90},
                                      {114, 114, 114}, {20, 180, 240}};
    static const struct {
        dvpp_csc_matrix m;
        bool full;
        double kr, kb;
    } mats[] = {{DVPP_CSC_BT601, false, 0.299, 0.114},
                {DVPP_CSC_BT601, true, 0.299, 0.114},
                {DVPP_CSC_BT709, false, 0.2126, 0.0722}};

    (void)state;
    for (size_t m = 0; m < 3; m++)
        for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
            for (size_t p = 0; p < sizeof(pads) / sizeof(pads[0]); p++) {
                dvpp_vpc_ctx c;
                dvpp_image src = make_image(fmts[f], 160, 90, 1, 1);
                dvpp_image dst = blank(fmts[f], 64, 64, 1, 1);
                dvpp_resize_geom g;
                dvpp_resize_opts o;
                uint8_t yuv[3], lum[3];
                dvpp_err e;

                dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
                c.csc.matrix = mats[m].m;
                c.csc.full_range = mats[m].full;
                dvpp_resize_opts_init(&o);
                assert_int_equal(dvpp_resize_geometry(160, 90, DVPP_RESIZE_LETTERBOX, 64,
                                                      64, &g, NULL), DVPP_OK);
                if (dvpp_vpc_resize_mode(&c, &src, &g, &dst, pads[p], &o, &e) != DVPP_OK)
                    fail_msg("%s: %s", dvpp_pixfmt_name(fmts[f]), e.msg);
                pad_yuv(pads[p], mats[m].kr, mats[m].kb, mats[m].full, yuv);
                pad_yuv(pads[p], mats[m].kr, mats[m].kb, true, lum); /* GRAY: full luma */
                assert_int_equal(g.paste.top, 14);
                expect_bars(&dst, 14, yuv, lum[0]);
                dvpp_image_free(&src);
                dvpp_image_free(&dst);
                dvpp_vpc_ctx_fini(&c);
            }
}

static void test_allocation_failures_are_clean(void **state)
{
    dvpp_image src = make_image(DVPP_PIXEL_NV12, 96, 64, 16, 2);
    dvpp_image dst = blank(DVPP_PIXEL_BGR, 50, 30, 1, 1);
    dvpp_roi crop = {2, 2, 61, 41};

    size_t nomem = 0;

    (void)state;
    for (size_t n = 1;; n++) {
        dvpp_vpc_ctx c;
        dvpp_resize_opts o;
        dvpp_status st;
        bool injected;
        dvpp_resize_opts_init(&o);
        test_alloc_install();
        test_alloc_fail_nth(n);
        dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
        st = dvpp_vpc_crop_resize_paste(&c, &src, &crop, &dst, NULL, &o, NULL);
        injected = test_alloc_injected();
        dvpp_vpc_ctx_fini(&c);
        assert_int_equal(test_alloc()->live, 0);
        test_alloc_uninstall();
        if (!injected) {
            assert_int_equal(st, DVPP_OK);
            break;
        }
        assert_int_equal(st, DVPP_ENOMEM);
        nomem++;
        assert_true(n < 64);
    }
    assert_true(nomem > 0); /* the sweep injected failures at all */
    dvpp_image_free(&src);
    dvpp_image_free(&dst);
}

/* The fused 4:2:0 -> resized RGB path gives the bytes of converting the
 * crop first and resizing it after, for every parity and streaming plan. */
static void check_fused(dvpp_pixfmt in_fmt, dvpp_pixfmt out_fmt,
                        dvpp_parity parity, dvpp_interp interp, dvpp_roi crop,
                        uint32_t ow, uint32_t oh)
{
    dvpp_vpc_ctx c;
    dvpp_image src = make_image(in_fmt, 320, 240, 16, 2);
    dvpp_image got = blank(out_fmt, ow, oh, 1, 1), rgb, want, cropped;
    uint32_t cw = dvpp_roi_width(&crop), ch = dvpp_roi_height(&crop);
    dvpp_resize_opts o;
    dvpp_resize_plan *plan;
    dvpp_scratch scratch;
    dvpp_csc csc;
    dvpp_planes ps, pc;

    dvpp_resize_opts_init(&o);
    o.parity = parity;
    o.interp = interp;
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
    assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &src, &crop, &got, NULL, &o, NULL),
                     DVPP_OK);
    /* Reference: copy the crop, convert it, resize it. */
    cropped = blank(in_fmt, cw, ch, 1, 1);
    dvpp_image_planes(&src, &ps, NULL);
    dvpp_image_planes(&cropped, &pc, NULL);
    for (int p = 0; p < pc.count; p++) {
        uint32_t sh = p ? 1 : 0, cb = pc.count == 2 && p ? 2 : 1;
        for (uint32_t y = 0; y < pc.p[p].rows; y++)
            memcpy(dvpp_image_row(&cropped, &pc, p, y),
                   dvpp_image_row(&src, &ps, p, (crop.top >> sh) + y) +
                       (crop.left >> sh) * cb,
                   pc.p[p].row_bytes);
    }
    rgb = blank(out_fmt, cw, ch, 1, 1);
    want = blank(out_fmt, ow, oh, 1, 1);
    dvpp_csc_init(&csc);
    dvpp_scratch_init(&scratch);
    assert_int_equal(dvpp_csc_convert(&cropped, &rgb, &csc, &scratch, NULL), DVPP_OK);
    assert_int_equal(dvpp_resize_plan_new(parity, interp, cw, ch, ow, oh,
                                          dvpp_pixfmt_get(out_fmt)->bpp, &plan, NULL),
                     DVPP_OK);
    assert_true(dvpp_resize_plan_streams(plan));
    assert_int_equal(dvpp_resize_run(plan, rgb.data, rgb.width_stride, want.data,
                                     want.width_stride, &scratch, NULL), DVPP_OK);
    assert_memory_equal(got.data, want.data, want.size);
    dvpp_resize_plan_free(plan);
    dvpp_scratch_fini(&scratch);
    dvpp_image_free(&src), dvpp_image_free(&got), dvpp_image_free(&rgb);
    dvpp_image_free(&want), dvpp_image_free(&cropped);
    dvpp_vpc_ctx_fini(&c);
}

static void test_fused_yuv_to_resized_rgb(void **state)
{
    dvpp_roi whole = {0, 0, 319, 239}, part = {18, 10, 250, 201};

    (void)state;
    check_fused(DVPP_PIXEL_NV12, DVPP_PIXEL_RGB, DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR,
                whole, 224, 224);
    check_fused(DVPP_PIXEL_NV12, DVPP_PIXEL_BGR, DVPP_PARITY_CV2, DVPP_INTERP_NEAREST,
                part, 100, 37);
    check_fused(DVPP_PIXEL_NV21, DVPP_PIXEL_RGBA, DVPP_PARITY_CV2, DVPP_INTERP_AREA,
                part, 61, 45);
    check_fused(DVPP_PIXEL_I420, DVPP_PIXEL_RGB, DVPP_PARITY_PIL, DVPP_INTERP_BICUBIC,
                whole, 97, 73);
    check_fused(DVPP_PIXEL_YVU_PLANAR_420, DVPP_PIXEL_BGRA, DVPP_PARITY_TF,
                DVPP_INTERP_BILINEAR, part, 400, 300);
    check_fused(DVPP_PIXEL_NV12, DVPP_PIXEL_RGB, DVPP_PARITY_CV2, DVPP_INTERP_BICUBIC,
                part, 640, 480);
}

/* --- crops at odd origins ---------------------------------------------------- */

/* Y of pixel (x, y) and the chroma sample (cx, cy) of @img, by the
 * format's definition (planes, pairs), read independently of the VPC. */
static void yuv_at(const dvpp_image *img, uint32_t x, uint32_t y, uint32_t cx,
                   uint32_t cy, uint8_t out[3])
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(img->format);
    dvpp_planes pl;
    bool v_first = img->format == DVPP_PIXEL_NV21 || img->format == DVPP_PIXEL_YVU422SP ||
                   img->format == DVPP_PIXEL_YVU440SP ||
                   img->format == DVPP_PIXEL_YVU_PLANAR_420;

    dvpp_image_planes(img, &pl, NULL);
    if (fi->planes == 1) { /* packed 4:2:2: Y0 U Y1 V in its own byte order */
        static const struct { dvpp_pixfmt f; int y0, y1, u, v; } k[] = {
            {DVPP_PIXEL_YUYV, 0, 2, 1, 3}, {DVPP_PIXEL_UYVY, 1, 3, 0, 2},
            {DVPP_PIXEL_YVYU, 0, 2, 3, 1}, {DVPP_PIXEL_VYUY, 1, 3, 2, 0}};
        for (int i = 0; i < 4; i++)
            if (k[i].f == img->format) {
                const uint8_t *row = dvpp_image_row(img, &pl, 0, y);
                out[0] = row[4 * (x / 2) + (x % 2 ? k[i].y1 : k[i].y0)];
                out[1] = dvpp_image_row(img, &pl, 0, cy)[4 * cx + k[i].u];
                out[2] = dvpp_image_row(img, &pl, 0, cy)[4 * cx + k[i].v];
            }
        return;
    }
    out[0] = dvpp_image_row(img, &pl, 0, y)[x];
    if (fi->planes == 2) {
        const uint8_t *c = dvpp_image_row(img, &pl, 1, cy) + 2 * (size_t)cx;
        out[1] = c[v_first], out[2] = c[!v_first];
    } else {
        out[1] = dvpp_image_row(img, &pl, v_first ? 2 : 1, cy)[cx];
        out[2] = dvpp_image_row(img, &pl, v_first ? 1 : 2, cy)[cx];
    }
}

/* A crop at any origin of a subsampled format keeps the format: luma from
 * the origin, and the chroma grid restarting at the crop's first pixel,
 * from the sample that covers it (output sample k = source sample
 * floor(left / 2) + k). Each format, odd and even origins and sizes. They
 * were refused with EINVAL ("crop origin must be even"). */
static void test_crop_at_odd_origins(void **state)
{
    static const dvpp_pixfmt fmts[] = {
        DVPP_PIXEL_NV12, DVPP_PIXEL_NV21, DVPP_PIXEL_I420, DVPP_PIXEL_YVU_PLANAR_420,
        DVPP_PIXEL_YUV422SP, DVPP_PIXEL_YVU422SP, DVPP_PIXEL_YUV440SP, DVPP_PIXEL_YUYV,
        DVPP_PIXEL_UYVY, DVPP_PIXEL_YVYU, DVPP_PIXEL_VYUY};
    static const uint32_t crops[][4] = {{1, 0, 6, 4}, {0, 1, 5, 5}, {1, 1, 7, 3},
                                        {3, 2, 10, 9}, {5, 7, 1, 1}, {1, 3, 22, 14}};
    dvpp_resize_opts o;
    dvpp_vpc_ctx c;

    (void)state;
    dvpp_resize_opts_init(&o);
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
        for (size_t k = 0; k < sizeof(crops) / sizeof(crops[0]); k++) {
            const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmts[f]);
            uint32_t l = crops[k][0], t = crops[k][1], w = crops[k][2], h = crops[k][3];
            dvpp_image src = make_image(fmts[f], 29, 19, 1, 1);
            dvpp_image dst = blank(fmts[f], w, h, 1, 1);
            dvpp_roi r = {l, t, l + w - 1, t + h - 1};
            assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &src, &r, &dst, NULL, &o, NULL),
                             DVPP_OK);
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++) {
                    uint32_t cx = x >> fi->chroma_sx, cy = y >> fi->chroma_sy;
                    uint8_t got[3], want[3];
                    yuv_at(&dst, x, y, cx, cy, got);
                    yuv_at(&src, l + x, t + y, (l >> fi->chroma_sx) + cx,
                           (t >> fi->chroma_sy) + cy, want);
                    if (memcmp(got, want, 3))
                        fail_msg("%s crop %u,%u %ux%u: pixel %u,%u is %u,%u,%u, want "
                                 "%u,%u,%u", fi->name, l, t, w, h, x, y, got[0], got[1],
                                 got[2], want[0], want[1], want[2]);
                }
            dvpp_image_free(&src);
            dvpp_image_free(&dst);
        }
    dvpp_vpc_ctx_fini(&c);
}

/* A crop at an odd origin of 4:2:0 / 4:2:2 into RGB: every pixel keeps its
 * own colour, as converting the whole image and cropping the RGB (cv2's
 * cvtColor, then a slice or resize): the 1:1 crop, a resize with an odd
 * left (the two-step path) and with an odd top only (the fused rows). */
static void test_crop_at_odd_origins_to_rgb(void **state)
{
    static const dvpp_pixfmt fmts[] = {DVPP_PIXEL_NV12, DVPP_PIXEL_I420, DVPP_PIXEL_YUYV,
                                       DVPP_PIXEL_YUV422SP};
    static const uint32_t crops[][6] = {{1, 1, 9, 7, 9, 7}, {3, 2, 20, 11, 13, 29},
                                        {2, 5, 17, 9, 40, 21}, {1, 0, 31, 23, 16, 16}};
    dvpp_resize_opts o;
    dvpp_vpc_ctx c;

    (void)state;
    dvpp_resize_opts_init(&o);
    dvpp_vpc_ctx_init(&c, DVPP_PROFILE_NATIVE);
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
        for (size_t k = 0; k < sizeof(crops) / sizeof(crops[0]); k++) {
            const uint32_t *q = crops[k];
            dvpp_image src = make_image(fmts[f], 40, 30, 1, 1);
            dvpp_image whole = blank(DVPP_PIXEL_RGB, 40, 30, 1, 1);
            dvpp_image got = blank(DVPP_PIXEL_RGB, q[4], q[5], 1, 1);
            dvpp_image want = blank(DVPP_PIXEL_RGB, q[4], q[5], 1, 1);
            dvpp_roi r = {q[0], q[1], q[0] + q[2] - 1, q[1] + q[3] - 1};
            assert_int_equal(dvpp_vpc_convert(&c, &src, &whole, NULL), DVPP_OK);
            assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &whole, &r, &want, NULL, &o,
                                                        NULL), DVPP_OK);
            assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &src, &r, &got, NULL, &o, NULL),
                             DVPP_OK);
            if (memcmp(got.data, want.data, want.size))
                fail_msg("%s crop %u,%u %ux%u -> rgb %ux%u differs from convert + crop",
                         dvpp_pixfmt_name(fmts[f]), q[0], q[1], q[2], q[3], q[4], q[5]);
            dvpp_image_free(&src), dvpp_image_free(&whole);
            dvpp_image_free(&got), dvpp_image_free(&want);
        }
    dvpp_vpc_ctx_fini(&c);
}

/* The paste grids (reference/dvpp-aipp.md §5) and a letterbox snapped to
 * them: 64x48 into 97x20 is pasted at x 35 (odd); on NV12's grid at 34,
 * under the ascend profiles at 32 (left % 16); ascend310 NV12 also even
 * top and sizes (27 -> 26 wide); boxes still map back through the
 * recomputed scale and offsets. */
static void test_paste_grid_and_snap(void **state)
{
    dvpp_roi_grid g, n;
    dvpp_resize_geom geo, base;

    (void)state;
    dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, DVPP_PIXEL_RGB, &g);
    assert_true(g.x == 1 && g.y == 1 && !g.even_size);
    dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, DVPP_PIXEL_NV12, &g);
    assert_true(g.x == 2 && g.y == 2 && !g.even_size);
    dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, DVPP_PIXEL_YUYV, &g);
    assert_true(g.x == 2 && g.y == 1);
    dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, DVPP_PIXEL_YUV440SP, &g);
    assert_true(g.x == 1 && g.y == 2);
    dvpp_vpc_paste_grid(DVPP_PROFILE_ASCEND310P, DVPP_PIXEL_RGB, &g);
    assert_true(g.x == 16 && g.y == 1 && !g.even_size);
    dvpp_vpc_paste_grid(DVPP_PROFILE_ASCEND310P, DVPP_PIXEL_NV12, &g);
    assert_true(g.x == 16 && g.y == 2 && !g.even_size);
    dvpp_vpc_paste_grid(DVPP_PROFILE_ASCEND310, DVPP_PIXEL_NV21, &g);
    assert_true(g.x == 16 && g.y == 2 && g.even_size);
    dvpp_vpc_crop_grid(DVPP_PROFILE_ASCEND310, DVPP_PIXEL_NV12, &g);
    assert_true(g.x == 2 && g.y == 2 && g.even_size);
    dvpp_vpc_crop_grid(DVPP_PROFILE_ASCEND310P, DVPP_PIXEL_NV12, &g);
    assert_true(g.x == 1 && g.y == 1 && !g.even_size);
    dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, DVPP_PIXEL_RGB, &n);
    dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, DVPP_PIXEL_YUYV, &g);
    dvpp_roi_grid_join(&n, &g);
    assert_true(n.x == 2 && n.y == 1);

    assert_int_equal(dvpp_resize_geometry(64, 48, DVPP_RESIZE_LETTERBOX, 97, 20, &base,
                                          NULL), DVPP_OK);
    assert_int_equal(base.paste.left, 35);
    geo = base;
    dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, DVPP_PIXEL_RGB, &g);
    dvpp_resize_geometry_snap(&geo, NULL, &g);
    assert_memory_equal(&geo, &base, sizeof(geo)); /* on the grid: unchanged */
    dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, DVPP_PIXEL_NV12, &g);
    dvpp_resize_geometry_snap(&geo, NULL, &g);
    assert_true(geo.paste.left == 34 && geo.paste.right == 34 + 27 - 1);
    assert_true(geo.paste.top == 0 && geo.paste.bottom == 19);
    assert_true(geo.pad_x == 34 && geo.pad_y == 0);
    assert_true(geo.scale_x == base.scale_x && geo.scale_y == base.scale_y);
    geo = base;
    dvpp_vpc_paste_grid(DVPP_PROFILE_ASCEND310, DVPP_PIXEL_NV12, &g);
    dvpp_resize_geometry_snap(&geo, NULL, &g);
    assert_true(geo.paste.left == 32 && geo.paste.right == 32 + 26 - 1);
    assert_true(geo.pad_x == 32 && geo.scale_x == 26.0 / 64);
    /* 1920x1080 -> 640x643: 141 rows above, 140 on the grid; 1920x1083
     * -> 640x643: 361 rows high, 360 (even) */
    assert_int_equal(dvpp_resize_geometry(1920, 1080, DVPP_RESIZE_LETTERBOX, 640, 643,
                                          &base, NULL), DVPP_OK);
    assert_true(base.paste.top == 141 && base.paste.bottom == 500);
    geo = base;
    dvpp_resize_geometry_snap(&geo, NULL, &g);
    assert_true(geo.paste.top == 140 && geo.paste.bottom == 499);
    assert_true(geo.pad_y == 140 && geo.scale_y == base.scale_y);
    assert_int_equal(dvpp_resize_geometry(1920, 1083, DVPP_RESIZE_LETTERBOX, 640, 643,
                                          &base, NULL), DVPP_OK);
    assert_true(base.paste.top == 141 && base.paste.bottom == 501);
    geo = base;
    dvpp_resize_geometry_snap(&geo, NULL, &g);
    assert_true(geo.paste.top == 140 && geo.paste.bottom == 499);
    assert_true(geo.pad_y == 140 && geo.scale_y == 360.0 / 1083);
    /* a fill's centre crop on ascend310 YUV420SP's ROI parity */
    assert_int_equal(dvpp_resize_geometry(101, 50, DVPP_RESIZE_FILL, 40, 40, &base, NULL),
                     DVPP_OK);
    assert_true(base.crop.left == 25 && base.crop.right == 74);
    geo = base;
    dvpp_vpc_crop_grid(DVPP_PROFILE_ASCEND310, DVPP_PIXEL_NV12, &g);
    dvpp_resize_geometry_snap(&geo, &g, NULL);
    assert_true(geo.crop.left == 24 && geo.crop.right == 73);
    assert_true(geo.scale_x == 40.0 / 50 && geo.pad_x == -24 * (40.0 / 50));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_letterbox_maps_boxes_back),
        cmocka_unit_test(test_named_modes),
        cmocka_unit_test(test_shorter_longer_rounding),
        cmocka_unit_test(test_paste_leaves_outside_untouched),
        cmocka_unit_test(test_packed422_odd_width_paste_writes_the_last_pair),
        cmocka_unit_test(test_nv12_same_size_crop_is_a_copy),
        cmocka_unit_test(test_batch_crop_equals_single_calls),
        cmocka_unit_test(test_ascend310_roi_rules),
        cmocka_unit_test(test_ascend310_stride_and_format_rules),
        cmocka_unit_test(test_batch_limits),
        cmocka_unit_test(test_letterbox_fills_padding),
        cmocka_unit_test(test_letterbox_pad_in_yuv_formats),
        cmocka_unit_test(test_allocation_failures_are_clean),
        cmocka_unit_test(test_fused_yuv_to_resized_rgb),
        cmocka_unit_test(test_crop_at_odd_origins),
        cmocka_unit_test(test_crop_at_odd_origins_to_rgb),
        cmocka_unit_test(test_paste_grid_and_snap),
    };
    return cmocka_run_group_tests_name("vpc", tests, NULL, NULL);
}
