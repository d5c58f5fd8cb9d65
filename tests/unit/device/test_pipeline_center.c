/* Tests of the centre crop op (dvpp_pipe_op.center): the offsets of both
 * roundings, hand-computed where they differ (torchvision's round half to
 * even vs transformers' floor); the rectangle the planner resolves on the
 * image the op gets (the source, or a resize's output) and the geometry it
 * reports; a run's pixels equal to slicing the source by hand; a crop
 * larger than its image and bad sizes refused by name; and the ascend
 * profile's crop rules held to the resolved rectangle exactly as to the
 * same fixed one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device/dvpp_pipeline.h"
#include "dvpp_mem.h"

/* A raw @w x @h RGB pattern (every pixel distinct enough to catch a
 * one-pixel shift). */
static dvpp_image pattern_rgb(uint32_t w, uint32_t h)
{
    dvpp_image img;

    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, w, h, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w * 3; x++)
            img.data[(size_t)y * img.width_stride + x] =
                (uint8_t)((x * 7 + y * 13 + (x * y) / 5) & 0xff);
    return img;
}

static void raw_pipeline(dvpp_pipeline *p, dvpp_pixfmt f, uint32_t w, uint32_t h)
{
    dvpp_pipeline_init(p);
    p->input = DVPP_PIPE_IN_RAW;
    p->raw = (dvpp_pipe_raw){f, w, h, 0, 0};
    p->output = DVPP_PIPE_OUT_IMAGE;
}

static void add_center(dvpp_pipeline *p, uint32_t w, uint32_t h, dvpp_pipe_crop_round r)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_CROP, .center = {w, h, r}};

    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

/* A hand-filled source of @w x @h (raw input: no bytes needed). */
static dvpp_status plan_for(const dvpp_pipeline *p, uint32_t w, uint32_t h,
                            dvpp_pipeline_plan *pl, dvpp_err *e)
{
    dvpp_pipe_source src;
    dvpp_status st;

    memset(&src, 0, sizeof(src));
    src.width = w, src.height = h;
    st = dvpp_pipeline_validate(p, NULL, e);
    return st != DVPP_OK ? st : dvpp_pipeline_plan_make(p, &src, pl, e);
}

static void assert_roi(const dvpp_roi *r, uint32_t l, uint32_t t, uint32_t rr, uint32_t b)
{
    if (r->left != l || r->top != t || r->right != rr || r->bottom != b)
        fail_msg("rect %u,%u,%u,%u, want %u,%u,%u,%u", r->left, r->top, r->right, r->bottom,
                 l, t, rr, b);
}

/* --- offsets ----------------------------------------------------------------------- */

static void test_offsets_by_hand(void **state)
{
    (void)state;
    /* L - C = 163: 81.5 -> even 82 (81 is odd), floor 81 */
    assert_int_equal(dvpp_pipe_center_offset(387, 224, DVPP_PIPE_CROP_EVEN), 82);
    assert_int_equal(dvpp_pipe_center_offset(387, 224, DVPP_PIPE_CROP_FLOOR), 81);
    /* 161: 80.5 -> 80 both (80 is even) */
    assert_int_equal(dvpp_pipe_center_offset(385, 224, DVPP_PIPE_CROP_EVEN), 80);
    assert_int_equal(dvpp_pipe_center_offset(385, 224, DVPP_PIPE_CROP_FLOOR), 80);
    /* 162: 81, no tie */
    assert_int_equal(dvpp_pipe_center_offset(386, 224, DVPP_PIPE_CROP_EVEN), 81);
    assert_int_equal(dvpp_pipe_center_offset(386, 224, DVPP_PIPE_CROP_FLOOR), 81);
    /* 167: 83.5 -> even 84, floor 83; 1: 0.5 -> 0 both; 3: 1.5 -> 2 / 1 */
    assert_int_equal(dvpp_pipe_center_offset(391, 224, DVPP_PIPE_CROP_EVEN), 84);
    assert_int_equal(dvpp_pipe_center_offset(391, 224, DVPP_PIPE_CROP_FLOOR), 83);
    assert_int_equal(dvpp_pipe_center_offset(225, 224, DVPP_PIPE_CROP_EVEN), 0);
    assert_int_equal(dvpp_pipe_center_offset(227, 224, DVPP_PIPE_CROP_EVEN), 2);
    assert_int_equal(dvpp_pipe_center_offset(227, 224, DVPP_PIPE_CROP_FLOOR), 1);
    assert_int_equal(dvpp_pipe_center_offset(224, 224, DVPP_PIPE_CROP_EVEN), 0);
}

/* --- the planner ------------------------------------------------------------------- */

static void test_plan_resolves_on_the_source(void **state)
{
    dvpp_pipeline p;
    dvpp_pipeline_plan pl;

    (void)state;
    raw_pipeline(&p, DVPP_PIXEL_RGB, 387, 385);
    add_center(&p, 224, 224, DVPP_PIPE_CROP_EVEN);
    assert_int_equal(plan_for(&p, 387, 385, &pl, NULL), DVPP_OK);
    assert_roi(&pl.crop[0], 82, 80, 305, 303);
    assert_int_equal(pl.img_w, 224);
    assert_int_equal(pl.img_h, 224);
    assert_true(pl.geom.pad_x == -82.0 && pl.geom.pad_y == -80.0);

    p.ops[0].center.round = DVPP_PIPE_CROP_FLOOR;
    assert_int_equal(plan_for(&p, 387, 385, &pl, NULL), DVPP_OK);
    assert_roi(&pl.crop[0], 81, 80, 304, 303);
    assert_true(pl.geom.pad_x == -81.0);

    /* a fixed crop is copied as it is */
    memset(&p.ops[0].center, 0, sizeof(p.ops[0].center));
    p.ops[0].u.crop = (dvpp_roi){3, 4, 100, 200};
    assert_int_equal(plan_for(&p, 387, 385, &pl, NULL), DVPP_OK);
    assert_roi(&pl.crop[0], 3, 4, 100, 200);
}

/* imagenet's chain on 641x423: shorter 256 (floor) makes 387x256, whose
 * centre 224 starts at x 82 (even) or 81 (floor), y 16. */
static void test_plan_resolves_after_a_resize(void **state)
{
    dvpp_pipe_op op;
    dvpp_pipeline p;
    dvpp_pipeline_plan pl;

    (void)state;
    raw_pipeline(&p, DVPP_PIXEL_RGB, 641, 423);
    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = DVPP_RESIZE_SHORTER;
    op.u.resize.w = 256;
    op.u.resize.round = DVPP_RESIZE_ROUND_FLOOR;
    dvpp_resize_opts_init(&op.u.resize.opts);
    op.u.resize.opts.parity = DVPP_PARITY_PIL;
    assert_int_equal(dvpp_pipeline_add_op(&p, &op, NULL), DVPP_OK);
    add_center(&p, 224, 224, DVPP_PIPE_CROP_EVEN);
    assert_int_equal(plan_for(&p, 641, 423, &pl, NULL), DVPP_OK);
    assert_int_equal(pl.resize[0].out_w, 387);
    assert_int_equal(pl.resize[0].out_h, 256);
    assert_roi(&pl.crop[1], 82, 16, 305, 239);
    assert_int_equal(pl.img_w, 224);
    assert_int_equal(pl.img_h, 224);
    p.ops[1].center.round = DVPP_PIPE_CROP_FLOOR;
    assert_int_equal(plan_for(&p, 641, 423, &pl, NULL), DVPP_OK);
    assert_roi(&pl.crop[1], 81, 16, 304, 239);
}

static void test_refusals(void **state)
{
    dvpp_pipeline p;
    dvpp_pipeline_plan pl;
    dvpp_err e;

    (void)state;
    raw_pipeline(&p, DVPP_PIXEL_RGB, 387, 385);
    add_center(&p, 388, 100, DVPP_PIPE_CROP_EVEN); /* one pixel wider than the image */
    assert_int_equal(plan_for(&p, 387, 385, &pl, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "ops[0].crop");
    assert_non_null(strstr(e.msg, "larger than the 387x385 image"));

    p.ops[0].center = (dvpp_pipe_center){0, 100, DVPP_PIPE_CROP_EVEN};
    assert_int_equal(dvpp_pipeline_validate(&p, NULL, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "ops[0].crop");
    p.ops[0].center = (dvpp_pipe_center){10, 10, (dvpp_pipe_crop_round)7};
    assert_int_equal(dvpp_pipeline_validate(&p, NULL, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "ops[0].crop");
    p.ops[0].center = (dvpp_pipe_center){1u << 30, 10, DVPP_PIPE_CROP_EVEN};
    assert_int_equal(dvpp_pipeline_validate(&p, NULL, &e), DVPP_ELIMIT);
    /* the whole image is fine */
    p.ops[0].center = (dvpp_pipe_center){387, 385, DVPP_PIPE_CROP_EVEN};
    assert_int_equal(plan_for(&p, 387, 385, &pl, NULL), DVPP_OK);
    assert_roi(&pl.crop[0], 0, 0, 386, 384);
}

/* --- runs -------------------------------------------------------------------------- */

/* The run's image equals the source sliced at the resolved rectangle. */
static void run_and_compare(uint32_t w, uint32_t h, uint32_t cw, uint32_t ch,
                            dvpp_pipe_crop_round r, uint32_t want_x, uint32_t want_y)
{
    dvpp_image src = pattern_rgb(w, h);
    dvpp_pipeline_out out;
    dvpp_pipeline p;
    dvpp_worker wk;
    dvpp_err e;
    uint8_t *buf = malloc((size_t)cw * ch * 3);

    assert_non_null(buf);
    raw_pipeline(&p, DVPP_PIXEL_RGB, w, h);
    add_center(&p, cw, ch, r);
    dvpp_worker_init(&wk, NULL);
    memset(&out, 0, sizeof(out));
    out.image.data = buf;
    out.image.size = (size_t)cw * ch * 3;
    if (dvpp_pipeline_run(&wk, &p, src.data, src.size, &out, &e) != DVPP_OK)
        fail_msg("run: %s: %s", e.field, e.msg);
    assert_int_equal(out.image.width, cw);
    assert_int_equal(out.image.height, ch);
    assert_roi(&out.plan.crop[0], want_x, want_y, want_x + cw - 1, want_y + ch - 1);
    for (uint32_t y = 0; y < ch; y++)
        assert_memory_equal(out.image.data + (size_t)y * out.image.width_stride,
                            src.data + (size_t)(y + want_y) * src.width_stride +
                                (size_t)want_x * 3,
                            (size_t)cw * 3);
    dvpp_worker_fini(&wk);
    dvpp_image_free(&src);
    free(buf);
}

static void test_run_equals_slicing(void **state)
{
    (void)state;
    run_and_compare(387, 385, 224, 224, DVPP_PIPE_CROP_EVEN, 82, 80);
    run_and_compare(387, 385, 224, 224, DVPP_PIPE_CROP_FLOOR, 81, 80);
    run_and_compare(391, 227, 224, 224, DVPP_PIPE_CROP_EVEN, 84, 2);
    run_and_compare(391, 227, 224, 224, DVPP_PIPE_CROP_FLOOR, 83, 1);
    run_and_compare(50, 40, 50, 40, DVPP_PIPE_CROP_EVEN, 0, 0);
}

/* --- the ascend profile ------------------------------------------------------------ */

/* Under ascend310 the resolved rectangle passes the VPC's crop rules
 * exactly as the same fixed crop does (V100: left/top even, right/bottom
 * odd): same status, same field. 390 - 224 = 166 -> offset 83 (odd), 388
 * -> 82 (even). */
static void test_ascend_rules_on_the_resolved_rect(void **state)
{
    static const uint32_t widths[] = {388, 390, 387, 389};
    (void)state;

    for (size_t k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
        for (int r = 0; r < 2; r++) {
            dvpp_pipeline pc, pf;
            dvpp_pipeline_plan plc, plf;
            dvpp_err ec, ef;
            dvpp_status sc, sf;
            uint32_t x = dvpp_pipe_center_offset(widths[k], 224, (dvpp_pipe_crop_round)r);
            uint32_t y = dvpp_pipe_center_offset(240, 224, (dvpp_pipe_crop_round)r);
            dvpp_pipe_op fixed = {.kind = DVPP_PIPE_OP_CROP,
                                  .u.crop = {x, y, x + 223, y + 223}};
            raw_pipeline(&pc, DVPP_PIXEL_NV12, widths[k], 240);
            pc.decode.profile = DVPP_PROFILE_ASCEND310;
            pf = pc;
            add_center(&pc, 224, 224, (dvpp_pipe_crop_round)r);
            assert_int_equal(dvpp_pipeline_add_op(&pf, &fixed, NULL), DVPP_OK);
            memset(&ec, 0, sizeof(ec));
            memset(&ef, 0, sizeof(ef));
            sc = plan_for(&pc, widths[k], 240, &plc, &ec);
            sf = plan_for(&pf, widths[k], 240, &plf, &ef);
            assert_int_equal(sc, sf);
            assert_string_equal(ec.field, ef.field);
            if (widths[k] == 388) /* x 82, y 8: even */
                assert_int_equal(sc, DVPP_OK);
            if (widths[k] == 390) /* x 83: odd, refused as the fixed one is */
                assert_int_not_equal(sc, DVPP_OK);
            if (sc == DVPP_OK)
                assert_roi(&plc.crop[0], x, y, x + 223, y + 223);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets_by_hand),
        cmocka_unit_test(test_plan_resolves_on_the_source),
        cmocka_unit_test(test_plan_resolves_after_a_resize),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_run_equals_slicing),
        cmocka_unit_test(test_ascend_rules_on_the_resolved_rect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
