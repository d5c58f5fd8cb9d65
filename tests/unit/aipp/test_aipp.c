/* Unit tests for aipp/dvpp_aipp.c: the geometry of an op (crop, resize,
 * padding) as dvpp_aipp_tensor sizes it and dvpp_aipp_run fills it, every
 * tensor byte written (a canary pattern first), and AIPP's own resize under
 * the ascend profiles, with the rules of reference/dvpp-aipp.md §7 copied
 * here:
 *   - processing order: crop -> CSC -> resize -> DTC -> padding;
 *   - output size = resize output (or crop size) + padding (ATC's rule);
 *   - crop_size 0: the rest of the source from load_start_pos;
 *   - resize ratio per axis in [1/16, 16]; resize_output_w in [16, 1920].
 * Pictures are constant on 2x2 blocks, so an exact 2:1 bilinear downscale
 * of an even-aligned crop gives each block's value exactly (every sample
 * blends four equal pixels): the expected tensors are hand-computed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_aipp.h"
#include "dvpp_mem.h"

#define CANARY 0xAB

/* Channel @k of the 2x2 block (bx, by). */
static uint8_t block_value(uint32_t bx, uint32_t by, unsigned k)
{
    return (uint8_t)(bx * (7 + 4 * k) + by * (13 - 3 * k) + 40 * k);
}

/* A @w x @h RGB picture, constant on 2x2 blocks. */
static dvpp_image block_rgb(uint32_t w, uint32_t h)
{
    dvpp_image img;

    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, w, h, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (unsigned k = 0; k < 3; k++)
                img.data[y * img.width_stride + 3 * x + k] = block_value(x / 2, y / 2, k);
    return img;
}

/* An RGB888_U8 op without CSC, DTC mean 10, 20, 30 (min 0, var_reci 1). */
static dvpp_aipp_op rgb_op(void)
{
    dvpp_aipp_op op;

    memset(&op, 0, sizeof(op));
    op.mode = DVPP_AIPP_STATIC;
    op.input_format = DVPP_AIPP_RGB888_U8;
    for (int k = 0; k < 4; k++) {
        op.mean_chn[k] = 10 * (k + 1);
        op.var_reci_chn[k] = 1.0f;
    }
    return op;
}

/* The tensor @op's N=1 output has, as f32 NHWC, filled with the canary. */
static dvpp_tensor canary_tensor(const dvpp_aipp_op *op)
{
    dvpp_tensor t;

    assert_int_equal(dvpp_aipp_tensor(op, 1, DVPP_LAYOUT_NHWC, DVPP_DTYPE_F32, &t, NULL),
                     DVPP_OK);
    t.data = dvpp_malloc(t.bytes);
    assert_non_null(t.data);
    memset(t.data, CANARY, t.bytes);
    return t;
}

static float at(const dvpp_tensor *t, uint32_t y, uint32_t x, unsigned k)
{
    return ((const float *)t->data)[((size_t)y * t->w + x) * t->c + k];
}

/* No element of @t still holds the canary. */
static void all_written(const dvpp_tensor *t)
{
    uint32_t canary;

    memset(&canary, CANARY, sizeof(canary));
    for (size_t i = 0; i < t->bytes / 4; i++) {
        uint32_t v;
        memcpy(&v, (const uint8_t *)t->data + 4 * i, 4);
        if (v == canary)
            fail_msg("element %zu of %zu (%ux%ux%u) was never written", i, t->bytes / 4,
                     t->h, t->w, t->c);
    }
}

static void ctx_with_profile(dvpp_aipp_ctx *c, dvpp_profile prof)
{
    dvpp_aipp_ctx_init(c);
    dvpp_vpc_ctx_fini(&c->vpc);
    dvpp_vpc_ctx_init(&c->vpc, prof);
}

/* crop on with crop_size 0 crops the rest of the source: the tensor is
 * sized so and every element is written (it was sized to the source and
 * filled with the crop: 2,880 of 12,288 bytes left as they were). */
static void test_crop_size_zero_is_the_rest(void **state)
{
    dvpp_image src = block_rgb(64, 48);
    dvpp_aipp_op op = rgb_op();
    dvpp_aipp_ctx c;
    dvpp_tensor t;
    dvpp_err e;

    (void)state;
    op.src_image_size_w = 64, op.src_image_size_h = 48;
    op.crop = true;
    op.load_start_pos_w = 8, op.load_start_pos_h = 4;
    t = canary_tensor(&op);
    assert_int_equal(t.w, 64 - 8);
    assert_int_equal(t.h, 48 - 4);
    dvpp_aipp_ctx_init(&c);
    if (dvpp_aipp_run(&c, &op, &src, &t, 0, &e) != DVPP_OK)
        fail_msg("%s", e.msg);
    all_written(&t);
    for (uint32_t y = 0; y < t.h; y++)
        for (uint32_t x = 0; x < t.w; x++)
            for (unsigned k = 0; k < 3; k++)
                assert_true(at(&t, y, x, k) ==
                            (float)block_value((8 + x) / 2, (4 + y) / 2, k) - 10 * (k + 1));
    /* only one side 0: that side is the rest, the other the size given */
    op.crop_size_w = 20;
    dvpp_free(t.data, t.bytes);
    t = canary_tensor(&op);
    assert_int_equal(t.w, 20);
    assert_int_equal(t.h, 44);
    assert_int_equal(dvpp_aipp_run(&c, &op, &src, &t, 0, NULL), DVPP_OK);
    all_written(&t);
    dvpp_free(t.data, t.bytes);
    dvpp_aipp_ctx_fini(&c);
    dvpp_image_free(&src);
}

/* A resize with one output side given resizes that axis and keeps the
 * other at the crop's size, as the tensor is sized. */
static void test_resize_one_side(void **state)
{
    dvpp_image src = block_rgb(64, 48);
    dvpp_aipp_op op = rgb_op();
    dvpp_aipp_ctx c;
    dvpp_err e;

    (void)state;
    dvpp_aipp_ctx_init(&c);
    for (int side = 0; side < 2; side++) {
        dvpp_tensor t;
        op.src_image_size_w = 64, op.src_image_size_h = 48;
        op.resize = true;
        op.resize_output_w = side ? 0 : 32;
        op.resize_output_h = side ? 24 : 0;
        t = canary_tensor(&op);
        assert_int_equal(t.w, side ? 64 : 32);
        assert_int_equal(t.h, side ? 24 : 48);
        if (dvpp_aipp_run(&c, &op, &src, &t, 0, &e) != DVPP_OK)
            fail_msg("side %d: %s", side, e.msg);
        all_written(&t);
        for (uint32_t y = 0; y < t.h; y++)
            for (uint32_t x = 0; x < t.w; x++)
                for (unsigned k = 0; k < 3; k++) {
                    /* the halved axis samples two equal pixels of a block */
                    uint32_t bx = side ? x / 2 : x, by = side ? y : y / 2;
                    assert_true(at(&t, y, x, k) == (float)block_value(bx, by, k) - 10 * (k + 1));
                }
        dvpp_free(t.data, t.bytes);
    }
    dvpp_aipp_ctx_fini(&c);
    dvpp_image_free(&src);
}

/* crop (8, 4) 32x24 -> resize 16x12 -> padding top 2, bottom 2, left 3,
 * right 1 (value 0) under each profile: a 20 x 16 output (16 + 3 + 1,
 * 12 + 2 + 2), the data block at (3, 2), each element block - mean. */
static void run_full_op(dvpp_profile prof)
{
    dvpp_image src = block_rgb(64, 48);
    dvpp_aipp_op op = rgb_op();
    dvpp_aipp_ctx c;
    dvpp_tensor t;
    dvpp_err e;

    op.src_image_size_w = 64, op.src_image_size_h = 48;
    op.crop = true;
    op.load_start_pos_w = 8, op.load_start_pos_h = 4;
    op.crop_size_w = 32, op.crop_size_h = 24;
    op.resize = true;
    op.resize_output_w = 16, op.resize_output_h = 12;
    op.padding = true;
    op.top_padding_size = 2, op.bottom_padding_size = 2;
    op.left_padding_size = 3, op.right_padding_size = 1;
    t = canary_tensor(&op);
    assert_int_equal(t.w, 20);
    assert_int_equal(t.h, 16);
    ctx_with_profile(&c, prof);
    if (dvpp_aipp_run(&c, &op, &src, &t, 0, &e) != DVPP_OK)
        fail_msg("%s: %s", dvpp_profile_name(prof), e.msg);
    all_written(&t);
    for (uint32_t y = 0; y < 16; y++)
        for (uint32_t x = 0; x < 20; x++)
            for (unsigned k = 0; k < 3; k++) {
                bool pad = y < 2 || y >= 14 || x < 3 || x >= 19;
                float want = pad ? 0.0f
                                 : (float)block_value(4 + (x - 3), 2 + (y - 2), k) -
                                       10 * (k + 1);
                if (at(&t, y, x, k) != want)
                    fail_msg("%s: (%u, %u, %u) is %g, want %g", dvpp_profile_name(prof), y,
                             x, k, (double)at(&t, y, x, k), (double)want);
            }
    dvpp_free(t.data, t.bytes);
    dvpp_aipp_ctx_fini(&c);
    dvpp_image_free(&src);
}

static void test_resize_under_every_profile(void **state)
{
    (void)state;
    run_full_op(DVPP_PROFILE_NATIVE);
    run_full_op(DVPP_PROFILE_ASCEND310);
    run_full_op(DVPP_PROFILE_ASCEND310P);
}

/* Resize @cw x @ch (a crop of a 600 x 300 source) to @rw x @rh under
 * @prof. */
static dvpp_status resize_ratio(dvpp_profile prof, uint32_t cw, uint32_t ch, uint32_t rw,
                                uint32_t rh, dvpp_err *e)
{
    dvpp_image src = block_rgb(600, 300);
    dvpp_aipp_op op = rgb_op();
    dvpp_aipp_ctx c;
    dvpp_tensor t;
    dvpp_status st;

    op.crop = true;
    op.crop_size_w = cw, op.crop_size_h = ch;
    op.resize = true;
    op.resize_output_w = rw, op.resize_output_h = rh;
    t = canary_tensor(&op);
    ctx_with_profile(&c, prof);
    st = dvpp_aipp_run(&c, &op, &src, &t, 0, e);
    if (st == DVPP_OK)
        all_written(&t);
    dvpp_free(t.data, t.bytes);
    dvpp_aipp_ctx_fini(&c);
    dvpp_image_free(&src);
    return st;
}

/* The ascend profiles hold the ratio to [1/16, 16] per axis; native does
 * not. */
static void test_resize_ratio_rule(void **state)
{
    static const dvpp_profile profs[] = {DVPP_PROFILE_ASCEND310, DVPP_PROFILE_ASCEND310P};
    dvpp_err e;

    (void)state;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(resize_ratio(profs[i], 256, 32, 16, 16, &e), DVPP_OK); /* 1/16 */
        assert_int_equal(resize_ratio(profs[i], 272, 32, 16, 16, &e), DVPP_EPROFILE);
        assert_string_equal(e.field, "resize_output_w");
        assert_int_equal(resize_ratio(profs[i], 32, 16, 16, 256, &e), DVPP_OK);  /* 16 */
        assert_int_equal(resize_ratio(profs[i], 32, 16, 16, 272, &e), DVPP_EPROFILE);
        assert_string_equal(e.field, "resize_output_h");
    }
    assert_int_equal(resize_ratio(DVPP_PROFILE_NATIVE, 272, 32, 16, 16, &e), DVPP_OK);
    assert_int_equal(resize_ratio(DVPP_PROFILE_NATIVE, 32, 16, 16, 272, &e), DVPP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crop_size_zero_is_the_rest),
        cmocka_unit_test(test_resize_one_side),
        cmocka_unit_test(test_resize_under_every_profile),
        cmocka_unit_test(test_resize_ratio_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
