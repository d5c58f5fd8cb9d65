/* Unit tests for device/dvpp_pipeline: the validator names fields, the
 * planner picks shrink-on-load scales and reports letterbox geometry, runs
 * equal the same steps done by hand with the existing APIs byte for byte
 * (JPEG -> resize -> normalise, AIPP vector A on raw NV12), batch slices,
 * steady-state runs allocate nothing, corrupt input and allocation
 * failures leak nothing.
 *
 * Inputs are synthesised here (a 227x149 JPEG encoded with
 * dvpp_jpeg_encode, the size of libjpeg-turbo's testorig.jpg). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device/dvpp_pipeline.h"
#include "dvpp_aipp.h"
#include "dvpp_aipp_cfg.h"
#include "dvpp_jpeg.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"
#include "test_alloc.h"

static const double k_mean[3] = {0.485, 0.456, 0.406};
static const double k_std[3] = {0.229, 0.224, 0.225};

/* Vector A of reference/dvpp-aipp.md §7. */
static const char k_vec_a[] =
    "aipp_op {\n aipp_mode : static\n related_input_rank : 0\n"
    " input_format : YUV420SP_U8\n csc_switch : true\n rbuv_swap_switch : false\n"
    " var_reci_chn_0 : 1\n var_reci_chn_1 : 1\n var_reci_chn_2 : 1\n"
    " min_chn_0 : 123\n min_chn_1 : 117\n min_chn_2 : 104\n"
    " load_start_pos_h : 0\n load_start_pos_w : 0\n"
    " src_image_size_w : 224\n src_image_size_h : 224\n"
    " matrix_r0c0 : 256\n matrix_r0c1 : 0\n matrix_r0c2 : 359\n"
    " matrix_r1c0 : 256\n matrix_r1c1 : -88\n matrix_r1c2 : -183\n"
    " matrix_r2c0 : 256\n matrix_r2c1 : 454\n matrix_r2c2 : 0\n"
    " input_bias_0 : 0\n input_bias_1 : 128\n input_bias_2 : 128\n}\n";

/* --- fixtures ------------------------------------------------------------------ */

static void fill_pattern(dvpp_image *img)
{
    dvpp_planes pl;

    assert_int_equal(dvpp_image_planes(img, &pl, NULL), DVPP_OK);
    for (int k = 0; k < pl.count; k++)
        for (uint32_t y = 0; y < pl.p[k].rows; y++) {
            uint8_t *row = dvpp_image_row(img, &pl, k, y);
            for (uint32_t x = 0; x < pl.p[k].row_bytes; x++)
                row[x] = (uint8_t)((x * 7 + y * 3 + (x * y) / 11 + k * 40) & 0xff);
        }
}

/* A 227x149 baseline JPEG (4:2:0, quality 90). */
static dvpp_buf make_jpeg(void)
{
    dvpp_jpeg_encode_opts o;
    dvpp_image img;
    dvpp_buf b;

    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, 227, 149, 1, 1, NULL),
                     DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    fill_pattern(&img);
    dvpp_jpeg_encode_opts_init(&o);
    o.quality = 90;
    dvpp_buf_init(&b);
    assert_int_equal(dvpp_jpeg_encode(&img, &o, &b, NULL), DVPP_OK);
    dvpp_image_free(&img);
    return b;
}

static dvpp_image make_nv12(uint32_t w, uint32_t h)
{
    dvpp_image img;

    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_NV12, w, h, 1, 1, NULL),
                     DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    fill_pattern(&img);
    return img;
}

static void add_resize(dvpp_pipeline *p, dvpp_resize_mode mode, uint32_t w,
                       uint32_t h)
{
    dvpp_pipe_op op;

    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = mode;
    op.u.resize.w = w, op.u.resize.h = h;
    dvpp_resize_opts_init(&op.u.resize.opts);
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

/* JPEG -> resize @mode @w x @h -> ImageNet f32 NCHW tensor. */
static void imagenet_pipeline(dvpp_pipeline *p, dvpp_resize_mode mode, uint32_t w,
                              uint32_t h)
{
    dvpp_pipeline_init(p);
    p->input = DVPP_PIPE_IN_JPEG;
    add_resize(p, mode, w, h);
    p->post = DVPP_PIPE_POST_NORM;
    memcpy(p->norm.mean, k_mean, sizeof(k_mean));
    memcpy(p->norm.std, k_std, sizeof(k_std));
    p->output = DVPP_PIPE_OUT_TENSOR;
}

static void tensor_alloc(dvpp_tensor *t, dvpp_dtype dt, dvpp_layout l, uint32_t n,
                         uint32_t c, uint32_t h, uint32_t w)
{
    assert_int_equal(dvpp_tensor_init(t, dt, l, n, c, h, w, NULL), DVPP_OK);
    t->data = dvpp_calloc(1, t->bytes);
    assert_non_null(t->data);
}

/* The same as imagenet_pipeline, by hand: decode (scale n/8), geometry,
 * dvpp_preprocess_run. */
static void imagenet_by_hand(const dvpp_buf *jpg, uint8_t scale, dvpp_resize_mode mode,
                             uint32_t w, uint32_t h, dvpp_tensor *t)
{
    dvpp_jpeg_decode_opts o;
    dvpp_resize_opts ro;
    dvpp_resize_geom g;
    dvpp_norm_spec spec;
    dvpp_aipp_ctx *c = malloc(sizeof(*c));
    dvpp_image img = {0};
    dvpp_limits lim = dvpp_limits_default();
    static const uint8_t pad[3] = {0, 0, 0};

    assert_non_null(c);
    dvpp_aipp_ctx_init(c);
    dvpp_jpeg_decode_opts_init(&o);
    o.scale_num = scale;
    assert_int_equal(dvpp_jpeg_decode(jpg->data, jpg->len, &o, &lim, &img, NULL),
                     DVPP_OK);
    assert_int_equal(dvpp_resize_geometry(img.width, img.height, mode, w, h, &g, NULL),
                     DVPP_OK);
    dvpp_norm_spec_init(&spec);
    memcpy(spec.mean, k_mean, sizeof(k_mean));
    memcpy(spec.std, k_std, sizeof(k_std));
    tensor_alloc(t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, g.out_h, g.out_w);
    dvpp_resize_opts_init(&ro);
    assert_int_equal(dvpp_preprocess_run(c, &img, &g, &ro, pad, &spec, t, 0, NULL),
                     DVPP_OK);
    dvpp_image_free(&img);
    dvpp_aipp_ctx_fini(c);
    free(c);
}

static dvpp_worker *worker_new(void)
{
    dvpp_worker *w = malloc(sizeof(*w));
    assert_non_null(w);
    dvpp_worker_init(w, NULL);
    return w;
}

static void worker_del(dvpp_worker *w)
{
    dvpp_worker_fini(w);
    free(w);
}

/* --- validation ------------------------------------------------------------------ */

static void expect_invalid(const dvpp_pipeline *p, dvpp_status want,
                           const char *field)
{
    dvpp_err e;

    dvpp_err_clear(&e);
    assert_int_equal(dvpp_pipeline_validate(p, NULL, &e), want);
    assert_string_equal(e.field, field);
}

static void test_validate_fields(void **state)
{
    dvpp_pipeline p;
    dvpp_pipe_op op;
    dvpp_aipp_config cfg;

    (void)state;
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 64, 64);
    assert_int_equal(dvpp_pipeline_validate(&p, NULL, NULL), DVPP_OK);

    p.post = DVPP_PIPE_POST_NONE; /* tensor output needs normalise or AIPP */
    expect_invalid(&p, DVPP_EINVAL, "post");

    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 64, 64);
    p.output = DVPP_PIPE_OUT_IMAGE; /* an image output cannot take a tensor */
    expect_invalid(&p, DVPP_EINVAL, "post");

    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 64, 64);
    p.norm.std[1] = 0;
    expect_invalid(&p, DVPP_EINVAL, "norm.std");

    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 0, 64);
    expect_invalid(&p, DVPP_EINVAL, "ops[0].resize");

    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 100000, 64);
    expect_invalid(&p, DVPP_ELIMIT, "ops[0].resize");

    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 5000, 64);
    p.decode.profile = DVPP_PROFILE_ASCEND310;
    expect_invalid(&p, DVPP_EPROFILE, "ops[0].resize");

    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 64, 64);
    p.ops[0].u.resize.opts.parity = DVPP_PARITY_ASCEND;
    p.ops[0].u.resize.opts.ascend_mode = 3;
    p.decode.profile = DVPP_PROFILE_ASCEND310P;
    expect_invalid(&p, DVPP_EPROFILE, "ops[0].resize");

    /* shrink-on-load needs a resize first */
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 64, 64);
    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_CROP;
    op.u.crop = (dvpp_roi){0, 0, 9, 9};
    p.ops[1] = p.ops[0];
    p.ops[0] = op;
    p.nops = 2;
    p.decode.shrink_on_load = true;
    expect_invalid(&p, DVPP_EINVAL, "decode.shrink_on_load");
    p.decode.shrink_on_load = false;
    p.ops[0].u.crop.right = 0, p.ops[0].u.crop.left = 3;
    expect_invalid(&p, DVPP_EINVAL, "ops[0].crop");

    /* aipp and normalise cannot both be the post step; dynamic AIPP */
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 64, 64);
    p.post = DVPP_PIPE_POST_AIPP;
    expect_invalid(&p, DVPP_EINVAL, "aipp.mode");
    assert_int_equal(dvpp_aipp_parse(k_vec_a, strlen(k_vec_a), &cfg, NULL), DVPP_OK);
    p.aipp = cfg.ops[0];
    assert_int_equal(dvpp_pipeline_validate(&p, NULL, NULL), DVPP_OK);
    p.aipp.mode = DVPP_AIPP_DYNAMIC;
    expect_invalid(&p, DVPP_EUNSUPPORTED, "aipp.mode");

    /* raw descriptor */
    dvpp_pipeline_init(&p);
    p.input = DVPP_PIPE_IN_RAW;
    expect_invalid(&p, DVPP_EINVAL, "raw.format");
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 16, 0, 0, 0};
    expect_invalid(&p, DVPP_EINVAL, "raw.height");
    p.raw.height = 8, p.raw.width_stride = 20; /* < 16 * 3 */
    expect_invalid(&p, DVPP_EINVAL, "raw.width_stride");
    p.raw.width_stride = 0;
    assert_int_equal(dvpp_pipeline_validate(&p, NULL, NULL), DVPP_OK);

    /* outputs */
    p.encoding = DVPP_PIPE_ENC_JPEG;
    p.quality = 0;
    expect_invalid(&p, DVPP_EINVAL, "quality");
    p.encoding = DVPP_PIPE_ENC_PNG;
    p.out_format = DVPP_PIXEL_NV12;
    expect_invalid(&p, DVPP_EINVAL, "out_format");
    p.encoding = DVPP_PIPE_ENC_NONE;
    p.nops = 9;
    expect_invalid(&p, DVPP_EINVAL, "nops");
    p.nops = 0;
    p.decode.has_roi = true;
    expect_invalid(&p, DVPP_EINVAL, "decode.roi");
    p.decode.has_roi = false;
    p.input = (dvpp_pipe_input)7;
    expect_invalid(&p, DVPP_EINVAL, "input");
}

/* --- runs ---------------------------------------------------------------------- */

static void run_into(dvpp_worker *w, const dvpp_pipeline *p, const dvpp_buf *in,
                     dvpp_pipeline_out *out, dvpp_tensor *t, uint32_t n)
{
    dvpp_err e;

    dvpp_err_clear(&e);
    out->tensor = *t, out->n = n;
    if (dvpp_pipeline_run(w, p, in->data, in->len, out, &e) != DVPP_OK)
        fail_msg("run: %s: %s", e.field, e.msg);
}

static void test_jpeg_resize_norm_equals_by_hand(void **state)
{
    dvpp_buf jpg = make_jpeg();
    dvpp_worker *w = worker_new();
    dvpp_pipeline p;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_tensor want, got;

    (void)state;
    assert_non_null(out);
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 64, 64);
    imagenet_by_hand(&jpg, 8, DVPP_RESIZE_STRETCH, 64, 64, &want);
    tensor_alloc(&got, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 64, 64);
    run_into(w, &p, &jpg, out, &got, 0);
    assert_int_equal(out->plan.scale_num, 8);
    assert_true(out->plan.fuse_resize_norm);
    assert_int_equal(out->plan.c, 3);
    assert_int_equal(out->plan.h, 64);
    assert_int_equal(out->plan.w, 64);
    assert_memory_equal(got.data, want.data, want.bytes);
    dvpp_free(got.data, got.bytes);
    dvpp_free(want.data, want.bytes);
    worker_del(w);
    free(out);
    dvpp_buf_fini(&jpg);
}

static void test_shrink_on_load(void **state)
{
    dvpp_buf jpg = make_jpeg();
    dvpp_worker *w = worker_new();
    dvpp_pipeline p;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_tensor want, got;
    dvpp_pipe_source src = {0};
    dvpp_pipeline_plan plan;

    (void)state;
    assert_non_null(out);
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 56, 37);
    p.decode.shrink_on_load = true;
    /* the planner alone */
    src.is_jpeg = true;
    assert_int_equal(dvpp_jpeg_probe(jpg.data, jpg.len, &src.jpeg, NULL), DVPP_OK);
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, NULL), DVPP_OK);
    assert_int_equal(plan.scale_num, 2);
    assert_int_equal(plan.src_w, 57);
    assert_int_equal(plan.src_h, 38);
    /* 28x19 would need 1/8 */
    p.ops[0].u.resize.w = 28, p.ops[0].u.resize.h = 19;
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, NULL), DVPP_OK);
    assert_int_equal(plan.scale_num, 1);
    /* an upscale keeps 8/8 */
    p.ops[0].u.resize.w = 300, p.ops[0].u.resize.h = 200;
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, NULL), DVPP_OK);
    assert_int_equal(plan.scale_num, 8);
    /* the run equals a decode at 2/8 + resize + normalise */
    p.ops[0].u.resize.w = 56, p.ops[0].u.resize.h = 37;
    imagenet_by_hand(&jpg, 2, DVPP_RESIZE_STRETCH, 56, 37, &want);
    tensor_alloc(&got, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 37, 56);
    run_into(w, &p, &jpg, out, &got, 0);
    assert_int_equal(out->plan.scale_num, 2);
    assert_memory_equal(got.data, want.data, want.bytes);
    /* geometry maps back to the full-size source */
    assert_true(out->geom.scale_x > 56.0 / 227 - 1e-9 &&
                out->geom.scale_x < 56.0 / 227 + 1e-9);
    dvpp_free(got.data, got.bytes);
    dvpp_free(want.data, want.bytes);
    worker_del(w);
    free(out);
    dvpp_buf_fini(&jpg);
}

static void test_letterbox_geometry(void **state)
{
    dvpp_buf jpg = make_jpeg();
    dvpp_worker *w = worker_new();
    dvpp_pipeline p;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_tensor want, got;
    dvpp_resize_geom g;

    (void)state;
    assert_non_null(out);
    imagenet_pipeline(&p, DVPP_RESIZE_LETTERBOX, 64, 64);
    assert_int_equal(dvpp_resize_geometry(227, 149, DVPP_RESIZE_LETTERBOX, 64, 64,
                                          &g, NULL), DVPP_OK);
    imagenet_by_hand(&jpg, 8, DVPP_RESIZE_LETTERBOX, 64, 64, &want);
    tensor_alloc(&got, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 64, 64);
    run_into(w, &p, &jpg, out, &got, 0);
    assert_true(out->geom.scale_x == g.scale_x && out->geom.scale_y == g.scale_y);
    assert_true(out->geom.pad_x == g.pad_x && out->geom.pad_y == g.pad_y);
    assert_true(g.pad_y > 0);
    assert_memory_equal(got.data, want.data, want.bytes);
    dvpp_free(got.data, got.bytes);
    dvpp_free(want.data, want.bytes);
    worker_del(w);
    free(out);
    dvpp_buf_fini(&jpg);
}

static void aipp_pipeline(dvpp_pipeline *p, const dvpp_aipp_op *op)
{
    dvpp_pipeline_init(p);
    p->input = DVPP_PIPE_IN_RAW;
    p->raw = (dvpp_pipe_raw){DVPP_PIXEL_NV12, 224, 224, 0, 0};
    p->post = DVPP_PIPE_POST_AIPP;
    p->aipp = *op;
    p->aipp_layout = DVPP_LAYOUT_NCHW;
    p->aipp_dtype = DVPP_DTYPE_F32;
    p->output = DVPP_PIPE_OUT_TENSOR;
}

static void test_aipp_vector_a_raw_nv12(void **state)
{
    dvpp_aipp_config cfg;
    dvpp_image nv12 = make_nv12(224, 224);
    dvpp_buf in = {nv12.data, nv12.size, nv12.size};
    dvpp_aipp_ctx *c = malloc(sizeof(*c));
    dvpp_worker *w = worker_new();
    dvpp_pipeline p;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_tensor want, got;

    (void)state;
    assert_non_null(c);
    assert_non_null(out);
    assert_int_equal(dvpp_aipp_parse(k_vec_a, strlen(k_vec_a), &cfg, NULL), DVPP_OK);
    dvpp_aipp_ctx_init(c);
    assert_int_equal(dvpp_aipp_tensor(&cfg.ops[0], 1, DVPP_LAYOUT_NCHW,
                                      DVPP_DTYPE_F32, &want, NULL), DVPP_OK);
    want.data = dvpp_calloc(1, want.bytes);
    assert_non_null(want.data);
    assert_int_equal(dvpp_aipp_run(c, &cfg.ops[0], &nv12, &want, 0, NULL), DVPP_OK);

    aipp_pipeline(&p, &cfg.ops[0]);
    tensor_alloc(&got, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 224, 224);
    run_into(w, &p, &in, out, &got, 0);
    assert_int_equal(out->plan.c, 3);
    assert_memory_equal(got.data, want.data, want.bytes);

    dvpp_free(got.data, got.bytes);
    dvpp_free(want.data, want.bytes);
    dvpp_aipp_ctx_fini(c);
    free(c);
    worker_del(w);
    free(out);
    dvpp_image_free(&nv12);
}

/* --- intermediate sizes ---------------------------------------------------------- */

static dvpp_image block_rgb64x48(void);

/* A raw RGB @w x @h pipeline (the input bytes are never read: planning
 * fails first) with @op, then a resize to 32x32 and ImageNet tensor out. */
static void huge_pipeline(dvpp_pipeline *p, uint32_t w, uint32_t h, const dvpp_pipe_op *op)
{
    imagenet_pipeline(p, DVPP_RESIZE_STRETCH, 32, 32);
    p->input = DVPP_PIPE_IN_RAW;
    p->raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, w, h, 0, 0};
    p->ops[1] = p->ops[0];      /* the resize second */
    p->ops[0] = *op;
    p->nops = 2;
}

/* The planner holds the image every op makes to max_side / max_pixels
 * (a border, a SHORTER resize), naming the op and the limit, before
 * anything is allocated: a run fails with no allocation beyond its
 * bookkeeping. */
static void test_intermediate_sizes_checked(void **state)
{
    static const uint8_t byte = 0;
    static const struct {
        uint32_t w, h;
        dvpp_pipe_op op;
        const char *field, *limit;
    } cases[] = {
        /* 16384x2441 with 16384-px borders: 49152 x 35209, 1.73 Gpx */
        {16384, 2441, {.kind = DVPP_PIPE_OP_BORDER,
                       .u.border = {.top = 16384, .bottom = 16384, .left = 16384,
                                    .right = 16384}}, "ops[0].border", "max_side"},
        /* 6000x6000 + 200 each side: 6400 x 6400 = 40.96 Mpx */
        {6000, 6000, {.kind = DVPP_PIPE_OP_BORDER,
                      .u.border = {.top = 200, .bottom = 200, .left = 200, .right = 200}},
         "ops[0].border", "max_pixels"},
        /* 16384x1600, shorter side to 6300: 64512 x 6300, 406 Mpx */
        {16384, 1600, {.kind = DVPP_PIPE_OP_RESIZE,
                       .u.resize = {.mode = DVPP_RESIZE_SHORTER, .w = 6300}},
         "ops[0].resize", "max_side"},
        /* 8000x2000, shorter to 3500: 14000 x 3500 = 49 Mpx */
        {8000, 2000, {.kind = DVPP_PIPE_OP_RESIZE,
                      .u.resize = {.mode = DVPP_RESIZE_SHORTER, .w = 3500}},
         "ops[0].resize", "max_pixels"},
    };
    dvpp_worker *w = worker_new();
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));

    (void)state;
    assert_non_null(out);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dvpp_pipeline p;
        dvpp_pipe_source src;
        dvpp_pipeline_plan plan;
        dvpp_pipe_op op = cases[i].op;
        dvpp_err e;

        if (op.kind == DVPP_PIPE_OP_RESIZE)
            dvpp_resize_opts_init(&op.u.resize.opts);
        huge_pipeline(&p, cases[i].w, cases[i].h, &op);
        assert_int_equal(dvpp_pipeline_validate(&p, NULL, &e), DVPP_OK);
        assert_int_equal(dvpp_pipeline_probe(&p, &byte, 1, NULL, &src, &e), DVPP_OK);
        assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, &e), DVPP_ELIMIT);
        assert_string_equal(e.field, cases[i].field);
        if (!strstr(e.msg, cases[i].limit) || strncmp(e.msg, cases[i].field, strlen(cases[i].field)))
            fail_msg("case %zu: '%s' names %s and the op?", i, e.msg, cases[i].limit);
        /* the run: the same refusal, and no buffer allocated */
        test_alloc_install();
        dvpp_err_clear(&e);
        assert_int_equal(dvpp_pipeline_run(w, &p, &byte, 1, out, &e), DVPP_ELIMIT);
        assert_string_equal(e.field, cases[i].field);
        assert_int_equal(test_alloc()->calls, 0);
        test_alloc_uninstall();
        /* a source filled by hand has no limits: it only sizes */
        src.has_limits = false;
        assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, &e), DVPP_OK);
    }
    worker_del(w);
    free(out);
}

/* The bytes the intermediates need, by hand: raw 64x48 RGB (read in
 * place), a crop to 32x24 (buffer 1: 2,304 bytes), a resize to 16x12 fused
 * with normalise (its RGB image in the AIPP context: 576) = 2,880; a
 * border of 2 to 68x52 RGB (10,608) then NV12 output (5,304) = 15,912; a
 * PNG input adds its decoded 64x48 RGB (9,216). */
static void test_work_bytes(void **state)
{
    dvpp_image img = block_rgb64x48();
    dvpp_pipe_op op;
    dvpp_pipeline p;
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    dvpp_buf png;

    (void)state;
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 16, 12);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 48, 0, 0};
    p.ops[1] = p.ops[0];
    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_CROP;
    op.u.crop = (dvpp_roi){8, 8, 39, 31};
    p.ops[0] = op;
    p.nops = 2;
    assert_int_equal(dvpp_pipeline_probe(&p, img.data, img.size, NULL, &src, NULL), DVPP_OK);
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, NULL), DVPP_OK);
    assert_true(plan.fuse_resize_norm);
    assert_int_equal(plan.work_bytes, 32 * 24 * 3 + 16 * 12 * 3);

    dvpp_pipeline_init(&p);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 48, 0, 0};
    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_BORDER;
    op.u.border.top = op.u.border.bottom = op.u.border.left = op.u.border.right = 2;
    assert_int_equal(dvpp_pipeline_add_op(&p, &op, NULL), DVPP_OK);
    p.out_format = DVPP_PIXEL_NV12;
    assert_int_equal(dvpp_pipeline_probe(&p, img.data, img.size, NULL, &src, NULL), DVPP_OK);
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, NULL), DVPP_OK);
    assert_int_equal(plan.work_bytes, 68 * 52 * 3 + 68 * 52 * 3 / 2);

    dvpp_buf_init(&png);
    {
        dvpp_png_encode_opts po = {.level = 1};
        assert_int_equal(dvpp_png_encode(&img, &po, &png, NULL), DVPP_OK);
    }
    p.input = DVPP_PIPE_IN_AUTO;
    assert_int_equal(dvpp_pipeline_probe(&p, png.data, png.len, NULL, &src, NULL), DVPP_OK);
    assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, NULL), DVPP_OK);
    assert_int_equal(plan.work_bytes, 64 * 48 * 3 + 68 * 52 * 3 + 68 * 52 * 3 / 2);
    dvpp_buf_fini(&png);
    dvpp_image_free(&img);
}

/* --- every output byte written (a canary first) ---------------------------------- */

#define CANARY 0xAB

static void canary_fill(void *p, size_t n)
{
    memset(p, CANARY, n);
}

/* A raw RGB 64x48 picture, constant on 2x2 blocks (an exact 2:1 resize
 * gives each block's value). */
static dvpp_image block_rgb64x48(void)
{
    dvpp_image img;

    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, 64, 48, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    for (uint32_t y = 0; y < 48; y++)
        for (uint32_t x = 0; x < 64; x++)
            for (unsigned k = 0; k < 3; k++)
                img.data[y * img.width_stride + 3 * x + k] =
                    (uint8_t)((x / 2) * 5 + (y / 2) * 11 + 60 * k);
    return img;
}

/* Image output (unencoded) of @p on @in into two buffers filled with
 * different canaries first: any byte the run leaves unwritten differs. */
static void image_under_two_canaries(dvpp_worker *w, const dvpp_pipeline *p,
                                     const dvpp_buf *in)
{
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    uint8_t *buf[2];
    size_t n;
    dvpp_err e;

    assert_non_null(out);
    assert_int_equal(dvpp_pipeline_run(w, p, in->data, in->len, out, &e), DVPP_ENOSPC);
    n = out->plan.out_bytes;
    for (int k = 0; k < 2; k++) {
        buf[k] = malloc(n);
        assert_non_null(buf[k]);
        memset(buf[k], k ? 0x54 : CANARY, n);
        out->image.data = buf[k], out->image.size = n;
        if (dvpp_pipeline_run(w, p, in->data, in->len, out, &e) != DVPP_OK)
            fail_msg("%s: %s", e.field, e.msg);
    }
    for (size_t i = 0; i < n; i++)
        if (buf[0][i] != buf[1][i])
            fail_msg("%s %ux%u: byte %zu of %zu unwritten", dvpp_pixfmt_name(out->plan.out_format),
                     out->plan.img_w, out->plan.img_h, i, n);
    free(buf[0]);
    free(buf[1]);
    free(out);
}

/* Image output: every byte of the caller's buffer written (pixels, or
 * zeroed padding), tight or aligned, odd sizes, 4:2:0 / 4:2:2 / RGB. */
static void test_image_every_byte(void **state)
{
    static const struct {
        dvpp_pixfmt f;
        dvpp_resize_mode mode;
        uint32_t w, h, align_w, align_h;
    } cases[] = {
        {DVPP_PIXEL_NV12, DVPP_RESIZE_STRETCH, 34, 18, 0, 0},
        {DVPP_PIXEL_NV12, DVPP_RESIZE_LETTERBOX, 50, 50, 16, 2},
        {DVPP_PIXEL_YUYV, DVPP_RESIZE_STRETCH, 33, 17, 16, 2},
        {DVPP_PIXEL_I420, DVPP_RESIZE_FIT, 31, 31, 0, 0},
        {DVPP_PIXEL_RGB, DVPP_RESIZE_SHORTER, 21, 0, 64, 4},
        {DVPP_PIXEL_YUV400, DVPP_RESIZE_LONGER, 27, 0, 128, 16},
    };
    dvpp_image img = block_rgb64x48();
    dvpp_buf in = {img.data, img.size, img.size};
    dvpp_worker *w = worker_new();

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dvpp_pipeline p;
        dvpp_pipeline_init(&p);
        p.input = DVPP_PIPE_IN_RAW;
        p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 48, 0, 0};
        add_resize(&p, cases[i].mode, cases[i].w, cases[i].h);
        p.out_format = cases[i].f;
        p.out_align_w = cases[i].align_w, p.out_align_h = cases[i].align_h;
        image_under_two_canaries(w, &p, &in);
    }
    worker_del(w);
    dvpp_image_free(&img);
}

static void rgb_aipp_pipeline(dvpp_pipeline *p, dvpp_profile prof)
{
    dvpp_pipeline_init(p);
    p->input = DVPP_PIPE_IN_RAW;
    p->raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 48, 0, 0};
    p->decode.profile = prof;
    p->post = DVPP_PIPE_POST_AIPP;
    memset(&p->aipp, 0, sizeof(p->aipp));
    p->aipp.mode = DVPP_AIPP_STATIC;
    p->aipp.input_format = DVPP_AIPP_RGB888_U8;
    for (int k = 0; k < 4; k++)
        p->aipp.var_reci_chn[k] = 1.0f;
    p->aipp_layout = DVPP_LAYOUT_NHWC;
    p->aipp_dtype = DVPP_DTYPE_U8;
    p->output = DVPP_PIPE_OUT_TENSOR;
}

/* Tensor output: an AIPP crop with crop_size 0 (the rest of the image, the
 * config's src_image_size 0 taken from the image) and a crop + resize +
 * padding under every profile (the AIPP resize failed with EPROFILE under
 * the ascend ones): the plan's shape, every byte written. */
static void test_aipp_tensor_every_byte(void **state)
{
    static const dvpp_profile profs[] = {DVPP_PROFILE_NATIVE, DVPP_PROFILE_ASCEND310,
                                         DVPP_PROFILE_ASCEND310P};
    dvpp_image img = block_rgb64x48();
    dvpp_buf in = {img.data, img.size, img.size};
    dvpp_worker *w = worker_new();
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_pipeline p;
    dvpp_tensor t;

    (void)state;
    assert_non_null(out);
    for (int i = 0; i < 4; i++) {
        rgb_aipp_pipeline(&p, i < 3 ? profs[i] : DVPP_PROFILE_NATIVE);
        p.aipp.crop = true;
        p.aipp.load_start_pos_w = 8, p.aipp.load_start_pos_h = 4;
        if (i < 3) { /* crop 32x24 -> 16x12, padding 2,2,3,1: 20 x 16 (reference §7) */
            p.aipp.crop_size_w = 32, p.aipp.crop_size_h = 24;
            p.aipp.resize = true;
            p.aipp.resize_output_w = 16, p.aipp.resize_output_h = 12;
            p.aipp.padding = true;
            p.aipp.top_padding_size = p.aipp.bottom_padding_size = 2;
            p.aipp.left_padding_size = 3, p.aipp.right_padding_size = 1;
        }
        tensor_alloc(&t, DVPP_DTYPE_U8, DVPP_LAYOUT_NHWC, 1, 3, i < 3 ? 16 : 44,
                     i < 3 ? 20 : 56);
        canary_fill(t.data, t.bytes);
        run_into(w, &p, &in, out, &t, 0);
        assert_int_equal(out->plan.w, t.w);
        assert_int_equal(out->plan.h, t.h);
        /* u8: a byte may be 0xAB legitimately, so every value is checked */
        for (size_t k = 0; k < t.bytes; k++) {
            uint32_t c = (uint32_t)(k % 3), x = (uint32_t)(k / 3 % t.w),
                     y = (uint32_t)(k / 3 / t.w);
            uint8_t want;
            if (i < 3) {
                bool pad = y < 2 || y >= 14 || x < 3 || x >= 19;
                want = pad ? 0 : (uint8_t)((4 + x - 3) * 5 + (2 + y - 2) * 11 + 60 * c);
            } else {
                want = (uint8_t)(((8 + x) / 2) * 5 + ((4 + y) / 2) * 11 + 60 * c);
            }
            if (((uint8_t *)t.data)[k] != want)
                fail_msg("case %d: byte %zu (y %u x %u c %u) is %u, want %u", i, k, y,
                         x, c, ((uint8_t *)t.data)[k], want);
        }
        dvpp_free(t.data, t.bytes);
    }
    worker_del(w);
    free(out);
    dvpp_image_free(&img);
}

static void test_batch_slice(void **state)
{
    dvpp_buf jpg = make_jpeg();
    dvpp_worker *w = worker_new();
    dvpp_pipeline p;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_tensor one, two;
    size_t half;
    uint8_t *b;

    (void)state;
    assert_non_null(out);
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 32, 24);
    tensor_alloc(&one, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 24, 32);
    tensor_alloc(&two, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 2, 3, 24, 32);
    half = two.bytes / 2;
    memset(two.data, 0xab, two.bytes);
    run_into(w, &p, &jpg, out, &one, 0);
    run_into(w, &p, &jpg, out, &two, 1);
    b = two.data;
    for (size_t i = 0; i < half; i++)
        assert_int_equal(b[i], 0xab);
    assert_memory_equal(b + half, one.data, one.bytes);
    /* n out of range, wrong shape */
    out->tensor = two, out->n = 2;
    assert_int_equal(dvpp_pipeline_run(w, &p, jpg.data, jpg.len, out, NULL),
                     DVPP_EINVAL);
    dvpp_free(one.data, one.bytes);
    dvpp_free(two.data, two.bytes);
    worker_del(w);
    free(out);
    dvpp_buf_fini(&jpg);
}

/* A second identical run on the same worker allocates nothing. */
static void steady_state(const dvpp_pipeline *p, const dvpp_buf *in,
                         dvpp_tensor *t)
{
    dvpp_worker *w = worker_new();
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    size_t calls;

    assert_non_null(out);
    test_alloc_install();
    run_into(w, p, in, out, t, 0);
    calls = test_alloc()->calls;
    assert_true(calls > 0);
    run_into(w, p, in, out, t, 0);
    assert_int_equal(test_alloc()->calls, calls);
    worker_del(w);
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
    free(out);
}

static void test_steady_state_no_alloc(void **state)
{
    dvpp_aipp_config cfg;
    dvpp_image nv12 = make_nv12(224, 224);
    dvpp_buf in = {nv12.data, nv12.size, nv12.size};
    dvpp_pipeline p;
    dvpp_tensor t;

    (void)state;
    assert_int_equal(dvpp_aipp_parse(k_vec_a, strlen(k_vec_a), &cfg, NULL), DVPP_OK);
    aipp_pipeline(&p, &cfg.ops[0]);
    tensor_alloc(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 224, 224);
    steady_state(&p, &in, &t);
    dvpp_free(t.data, t.bytes);

    /* raw NV12 -> letterbox resize -> normalise */
    dvpp_pipeline_init(&p);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_NV12, 224, 224, 0, 0};
    add_resize(&p, DVPP_RESIZE_LETTERBOX, 96, 64);
    p.post = DVPP_PIPE_POST_NORM;
    p.output = DVPP_PIPE_OUT_TENSOR;
    tensor_alloc(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 64, 96);
    steady_state(&p, &in, &t);
    dvpp_free(t.data, t.bytes);
    dvpp_image_free(&nv12);
}

/* JPEG input: the pipeline's buffers and the decoder's strips (the
 * worker's decode scratch) are reused: a second run allocates nothing. */
static void test_steady_state_jpeg(void **state)
{
    dvpp_buf jpg = make_jpeg();
    dvpp_worker *w = worker_new();
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_pipeline p;
    dvpp_tensor t;
    size_t first, second;

    (void)state;
    assert_non_null(out);
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 64, 64);
    tensor_alloc(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 64, 64);
    test_alloc_install();
    run_into(w, &p, &jpg, out, &t, 0);
    first = test_alloc()->calls;
    run_into(w, &p, &jpg, out, &t, 0);
    second = test_alloc()->calls - first;
    assert_true(first > 0);
    assert_int_equal(second, 0);
    worker_del(w);
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
    dvpp_free(t.data, t.bytes);
    free(out);
    dvpp_buf_fini(&jpg);
}

/* The raw NV12 @w x @h -> [stretch to @mid x @mid] -> letterbox 96x64 ->
 * normalise pipeline (@mid 0: no middle resize). The middle resize's
 * output is an image the worker keeps between runs. */
static void nv12_letterbox(dvpp_pipeline *p, uint32_t w, uint32_t h, uint32_t mid)
{
    dvpp_pipeline_init(p);
    p->input = DVPP_PIPE_IN_RAW;
    p->raw = (dvpp_pipe_raw){DVPP_PIXEL_NV12, w, h, 0, 0};
    if (mid)
        add_resize(p, DVPP_RESIZE_STRETCH, mid, mid);
    add_resize(p, DVPP_RESIZE_LETTERBOX, 96, 64);
    p->post = DVPP_PIPE_POST_NORM;
    p->output = DVPP_PIPE_OUT_TENSOR;
}

/* An idle worker's trim (the device's idle hook): after a burst (a 2400x2400
 * input through a 1500x1500 intermediate), the buffers above the keep size go and the small job's stay; the
 * worker still runs, gives the same bytes, and is back at zero allocations
 * per run after one run has grown it again. */
static void test_idle_trim(void **state)
{
    dvpp_image small = make_nv12(224, 224), big = make_nv12(2400, 2400);
    dvpp_buf in_small = {small.data, small.size, small.size};
    dvpp_buf in_big = {big.data, big.size, big.size};
    dvpp_worker *w = worker_new();
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_pipeline ps, pb;
    dvpp_tensor t, first;
    size_t steady, burst, freed, calls;
    const size_t keep = 1u << 20;

    (void)state;
    assert_non_null(out);
    nv12_letterbox(&ps, 224, 224, 0);
    nv12_letterbox(&pb, 2400, 2400, 1500);
    tensor_alloc(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 64, 96);
    tensor_alloc(&first, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 64, 96);
    test_alloc_install();
    run_into(w, &ps, &in_small, out, &first, 0);
    steady = test_alloc()->live_bytes;
    assert_int_equal(dvpp_worker_trim(w, keep), 0); /* nothing above 1 MiB yet */
    run_into(w, &pb, &in_big, out, &t, 0);
    burst = test_alloc()->live_bytes;
    assert_true(burst > steady + (size_t)1500 * 1500); /* the NV12 intermediate */
    freed = dvpp_worker_trim(w, keep);
    assert_int_equal(freed, burst - test_alloc()->live_bytes);
    /* What stays: the small job's buffers and the cached resize plans. */
    assert_true(test_alloc()->live_bytes < steady + keep);
    assert_int_equal(dvpp_worker_trim(w, keep), 0); /* a second trim: nothing left */
    memset(t.data, 0xa5, t.bytes);
    run_into(w, &ps, &in_small, out, &t, 0);
    assert_memory_equal(t.data, first.data, t.bytes);
    calls = test_alloc()->calls;
    run_into(w, &ps, &in_small, out, &t, 0);
    assert_int_equal(test_alloc()->calls, calls);
    /* keep = 0 empties it; it still runs. */
    assert_true(dvpp_worker_trim(w, 0) > 0);
    run_into(w, &ps, &in_small, out, &t, 0);
    assert_memory_equal(t.data, first.data, t.bytes);
    worker_del(w);
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
    dvpp_free(t.data, t.bytes);
    dvpp_free(first.data, first.bytes);
    dvpp_image_free(&small);
    dvpp_image_free(&big);
    free(out);
}

static void test_corrupt_input(void **state)
{
    dvpp_buf jpg = make_jpeg();
    dvpp_worker *w;
    dvpp_pipeline p;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_tensor t;
    static const uint8_t junk[64] = {1, 2, 3, 4};
    dvpp_err e;

    (void)state;
    assert_non_null(out);
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, 64, 64);
    tensor_alloc(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 64, 64);
    test_alloc_install();
    w = worker_new();
    out->tensor = t;
    assert_int_equal(dvpp_pipeline_run(w, &p, jpg.data, jpg.len / 2, out, &e),
                     DVPP_ECORRUPT);
    /* Neither JPEG nor PNG: an unsupported medium (HTTP 415), not a
     * corrupt image. */
    p.input = DVPP_PIPE_IN_AUTO;
    assert_int_equal(dvpp_pipeline_run(w, &p, junk, sizeof(junk), out, &e),
                     DVPP_EUNSUPPORTED);
    assert_string_equal(e.field, "input");
    /* raw bytes shorter than the layout */
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 64, 0, 0};
    assert_int_equal(dvpp_pipeline_run(w, &p, junk, sizeof(junk), out, &e),
                     DVPP_ECORRUPT);
    worker_del(w);
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
    dvpp_free(t.data, t.bytes);
    free(out);
    dvpp_buf_fini(&jpg);
}

static void test_alloc_failure_loop(void **state)
{
    dvpp_buf jpg = make_jpeg();
    dvpp_pipeline p;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_tensor t;
    bool ok = false;
    size_t nomem = 0;

    (void)state;
    assert_non_null(out);
    imagenet_pipeline(&p, DVPP_RESIZE_LETTERBOX, 64, 48);
    tensor_alloc(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, 48, 64);
    for (size_t n = 1; n < 200 && !ok; n++) {
        dvpp_worker *w;
        dvpp_status st;
        bool injected;

        test_alloc_install();
        test_alloc_fail_nth(n);
        w = worker_new();
        out->tensor = t, out->n = 0;
        st = dvpp_pipeline_run(w, &p, jpg.data, jpg.len, out, NULL);
        injected = test_alloc_injected();
        if (injected ? st != DVPP_ENOMEM : st != DVPP_OK)
            fail_msg("fail_at %zu (%s): %s", n, injected ? "injected" : "none injected",
                     dvpp_status_name(st));
        ok = !injected;
        nomem += injected;
        worker_del(w);
        assert_int_equal(test_alloc()->live, 0);
        test_alloc_uninstall();
    }
    assert_true(ok);
    assert_true(nomem > 0); /* the sweep injected failures at all */
    dvpp_free(t.data, t.bytes);
    free(out);
    dvpp_buf_fini(&jpg);
}

/* Raw RGB -> crop -> border -> convert to NV12 -> raw image / PNG out. */
static void test_image_output(void **state)
{
    dvpp_image rgb;
    dvpp_worker *w = worker_new();
    dvpp_pipeline p;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_pipe_op op;
    dvpp_err e;

    (void)state;
    assert_non_null(out);
    assert_int_equal(dvpp_image_init(&rgb, DVPP_PIXEL_RGB, 40, 30, 1, 1, NULL),
                     DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&rgb, NULL), DVPP_OK);
    fill_pattern(&rgb);
    dvpp_pipeline_init(&p);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 40, 30, 0, 0};
    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_CROP;
    op.u.crop = (dvpp_roi){4, 2, 23, 21}; /* 20 x 20 */
    assert_int_equal(dvpp_pipeline_add_op(&p, &op, NULL), DVPP_OK);
    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_BORDER;
    op.u.border.left = op.u.border.right = 2;
    op.u.border.top = op.u.border.bottom = 4;
    assert_int_equal(dvpp_pipeline_add_op(&p, &op, NULL), DVPP_OK);
    p.out_format = DVPP_PIXEL_NV12;

    out->image.data = NULL;
    assert_int_equal(dvpp_pipeline_run(w, &p, rgb.data, rgb.size, out, &e),
                     DVPP_ENOSPC);
    assert_string_equal(e.field, "image");
    assert_int_equal(out->plan.img_w, 24);
    assert_int_equal(out->plan.img_h, 28);
    assert_int_equal(out->plan.out_bytes, 24 * 28 * 3 / 2);
    assert_true(out->geom.pad_x == -4 + 2 && out->geom.pad_y == -2 + 4);
    out->image.size = out->plan.out_bytes;
    out->image.data = malloc(out->image.size);
    assert_non_null(out->image.data);
    assert_int_equal(dvpp_pipeline_run(w, &p, rgb.data, rgb.size, out, &e), DVPP_OK);
    assert_int_equal(out->image.format, DVPP_PIXEL_NV12);
    assert_int_equal(out->image.width, 24);

    p.out_format = DVPP_PIXEL_RGB;
    p.encoding = DVPP_PIPE_ENC_PNG;
    dvpp_buf_init(&out->encoded);
    assert_int_equal(dvpp_pipeline_run(w, &p, rgb.data, rgb.size, out, &e), DVPP_OK);
    assert_true(out->encoded.len > 8);
    assert_int_equal(out->encoded.data[1], 'P');
    dvpp_buf_fini(&out->encoded);

    free(out->image.data);
    free(out);
    worker_del(w);
    dvpp_image_free(&rgb);
}

/* PNG in, raw RGB out with no ops: the pixels come back unchanged. */
static void test_png_roundtrip(void **state)
{
    dvpp_image rgb;
    dvpp_buf png;
    dvpp_png_encode_opts po = {.level = 1};
    dvpp_worker *w = worker_new();
    dvpp_pipeline p;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_err e;

    (void)state;
    assert_non_null(out);
    assert_int_equal(dvpp_image_init(&rgb, DVPP_PIXEL_RGB, 33, 17, 1, 1, NULL),
                     DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&rgb, NULL), DVPP_OK);
    fill_pattern(&rgb);
    dvpp_buf_init(&png);
    assert_int_equal(dvpp_png_encode(&rgb, &po, &png, NULL), DVPP_OK);
    dvpp_pipeline_init(&p);
    out->image.size = rgb.size;
    out->image.data = malloc(rgb.size);
    assert_non_null(out->image.data);
    assert_int_equal(dvpp_pipeline_run(w, &p, png.data, png.len, out, &e), DVPP_OK);
    assert_int_equal(out->plan.decode_format, DVPP_PIXEL_RGB);
    assert_int_equal(out->image.width, 33);
    assert_memory_equal(out->image.data, rgb.data, rgb.size);
    free(out->image.data);
    free(out);
    worker_del(w);
    dvpp_buf_fini(&png);
    dvpp_image_free(&rgb);
}

/* --- flip ------------------------------------------------------------------------ */

static void add_flip(dvpp_pipeline *p, dvpp_flip f)
{
    dvpp_pipe_op op;

    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_FLIP;
    op.u.flip = f;
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

/* A flip after the last resize ends the resize + normalise fusion, and
 * the tensor is the fused pipeline's tensor mirrored: x -> w - 1 - x in
 * every channel plane (f32 NCHW), rows reversed too for "both". */
static void test_flip_after_resize_mirrors_the_fused_tensor(void **state)
{
    static const dvpp_flip flips[] = {DVPP_FLIP_HORIZONTAL, DVPP_FLIP_VERTICAL,
                                      DVPP_FLIP_BOTH};
    dvpp_buf jpg = make_jpeg();
    dvpp_worker *w = worker_new();
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    const uint32_t W = 61, H = 37;
    dvpp_pipeline p;
    dvpp_tensor want, got;

    (void)state;
    assert_non_null(out);
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, W, H);
    tensor_alloc(&want, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, H, W);
    tensor_alloc(&got, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, H, W);
    run_into(w, &p, &jpg, out, &want, 0);
    assert_true(out->plan.fuse_resize_norm);
    for (size_t k = 0; k < sizeof(flips) / sizeof(flips[0]); k++) {
        const float *a = want.data, *b;
        imagenet_pipeline(&p, DVPP_RESIZE_STRETCH, W, H);
        add_flip(&p, flips[k]);
        memset(got.data, 0xff, got.bytes);
        run_into(w, &p, &jpg, out, &got, 0);
        assert_false(out->plan.fuse_resize_norm);
        b = got.data;
        for (uint32_t c = 0; c < 3; c++)
            for (uint32_t y = 0; y < H; y++)
                for (uint32_t x = 0; x < W; x++) {
                    uint32_t sx = flips[k] & DVPP_FLIP_HORIZONTAL ? W - 1 - x : x;
                    uint32_t sy = flips[k] & DVPP_FLIP_VERTICAL ? H - 1 - y : y;
                    if (memcmp(&b[(c * H + y) * W + x], &a[(c * H + sy) * W + sx],
                               sizeof(float)))
                        fail_msg("flip %s: c %u y %u x %u differs", dvpp_flip_name(flips[k]),
                                 c, y, x);
                }
        /* the map back: a mirrored axis has a negative scale */
        assert_true(flips[k] & DVPP_FLIP_HORIZONTAL ? out->geom.scale_x < 0
                                                    : out->geom.scale_x > 0);
        assert_true(flips[k] & DVPP_FLIP_VERTICAL ? out->geom.scale_y < 0
                                                  : out->geom.scale_y > 0);
    }
    dvpp_free(got.data, got.bytes);
    dvpp_free(want.data, want.bytes);
    worker_del(w);
    free(out);
    dvpp_buf_fini(&jpg);
}

/* Every byte of the output written by a flip in packed, planar,
 * semi-planar and packed 4:2:2 formats (odd sizes where the format
 * allows them). */
static void test_flip_every_byte(void **state)
{
    static const struct {
        dvpp_pixfmt f;
        uint32_t w, h;
        dvpp_flip flip;
    } cases[] = {
        {DVPP_PIXEL_RGB, 33, 17, DVPP_FLIP_BOTH},
        {DVPP_PIXEL_RGBA, 31, 9, DVPP_FLIP_HORIZONTAL},
        {DVPP_PIXEL_GRAY, 7, 5, DVPP_FLIP_BOTH},
        {DVPP_PIXEL_NV12, 34, 18, DVPP_FLIP_BOTH},
        {DVPP_PIXEL_NV12, 33, 18, DVPP_FLIP_VERTICAL},
        {DVPP_PIXEL_I420, 30, 20, DVPP_FLIP_HORIZONTAL},
        {DVPP_PIXEL_YUYV, 34, 17, DVPP_FLIP_BOTH},
        {DVPP_PIXEL_YUV444SP, 33, 17, DVPP_FLIP_BOTH},
    };
    dvpp_image img = block_rgb64x48();
    dvpp_buf in = {img.data, img.size, img.size};
    dvpp_worker *w = worker_new();

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dvpp_pipeline p;
        dvpp_pipe_op conv = {.kind = DVPP_PIPE_OP_CONVERT, .u.convert = cases[i].f};
        dvpp_pipeline_init(&p);
        p.input = DVPP_PIPE_IN_RAW;
        p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 48, 0, 0};
        add_resize(&p, DVPP_RESIZE_STRETCH, cases[i].w, cases[i].h);
        assert_int_equal(dvpp_pipeline_add_op(&p, &conv, NULL), DVPP_OK);
        add_flip(&p, cases[i].flip);
        image_under_two_canaries(w, &p, &in);
    }
    worker_del(w);
    dvpp_image_free(&img);
}

/* normalize.channels = 1: a 1 x 1 x H x W tensor of the grey image the ops
 * end in, every byte written (NCHW/NHWC, u8/f32, after a resize that would
 * otherwise fuse with the normalisation, and with none), each value the grey
 * image's own byte (the image output of the same ops is the reference), and
 * a 3-channel tensor refused for it. */
static void test_grey_tensor_every_byte(void **state)
{
    dvpp_image img = block_rgb64x48();
    dvpp_buf in = {img.data, img.size, img.size};
    dvpp_worker *w = worker_new();
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_pipe_op grey = {.kind = DVPP_PIPE_OP_CONVERT, .u.convert = DVPP_PIXEL_GRAY};
    dvpp_err e;

    (void)state;
    assert_non_null(out);
    for (int k = 0; k < 4; k++) {
        bool resize = k & 1, f32 = k & 2;
        uint32_t tw = resize ? 29 : 64, th = resize ? 17 : 48;
        dvpp_pipeline p;
        uint8_t *ref = malloc((size_t)tw * th);
        dvpp_tensor t;

        assert_non_null(ref);
        /* the reference: the same ops delivered as a GRAY image */
        dvpp_pipeline_init(&p);
        p.input = DVPP_PIPE_IN_RAW;
        p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 48, 0, 0};
        assert_int_equal(dvpp_pipeline_add_op(&p, &grey, NULL), DVPP_OK);
        if (resize)
            add_resize(&p, DVPP_RESIZE_STRETCH, tw, th);
        p.output = DVPP_PIPE_OUT_IMAGE;
        p.out_format = DVPP_PIXEL_GRAY;
        out->image.data = ref, out->image.size = (size_t)tw * th;
        if (dvpp_pipeline_run(w, &p, in.data, in.len, out, &e) != DVPP_OK)
            fail_msg("grey image: %s: %s", e.field, e.msg);
        /* the tensor */
        p.output = DVPP_PIPE_OUT_TENSOR;
        p.out_format = DVPP_PIXEL_UNKNOWN;
        p.post = DVPP_PIPE_POST_NORM;
        p.norm.channels = 1;
        p.norm.scale = f32 ? 255.0 : 1.0;
        p.norm.dtype = f32 ? DVPP_DTYPE_F32 : DVPP_DTYPE_U8;
        p.norm.layout = k == 3 ? DVPP_LAYOUT_NHWC : DVPP_LAYOUT_NCHW;
        tensor_alloc(&t, p.norm.dtype, p.norm.layout, 1, 1, th, tw);
        canary_fill(t.data, t.bytes);
        run_into(w, &p, &in, out, &t, 0);
        assert_int_equal(out->plan.c, 1);
        for (size_t i = 0; i < (size_t)tw * th; i++) {
            double got = f32 ? ((const float *)t.data)[i] : ((const uint8_t *)t.data)[i];
            double want = f32 ? (double)(float)(ref[i] / 255.0f) : ref[i];
            if (fabs(got - want) > 1e-7)
                fail_msg("case %d: element %zu is %g, want %g", k, i, got, want);
        }
        dvpp_free(t.data, t.bytes);
        /* a 3-channel tensor does not hold it */
        tensor_alloc(&t, p.norm.dtype, p.norm.layout, 1, 3, th, tw);
        out->tensor = t, out->n = 0;
        assert_int_not_equal(dvpp_pipeline_run(w, &p, in.data, in.len, out, &e), DVPP_OK);
        dvpp_free(t.data, t.bytes);
        free(ref);
    }
    worker_del(w);
    free(out);
    dvpp_image_free(&img);
}

/* An unknown flip is refused by the validator, an odd subsampled side and
 * the ascend profiles by the planner, each naming ops[i].flip. */
static void test_flip_refusals(void **state)
{
    static const struct {
        dvpp_pixfmt f;
        uint32_t w, h;
        dvpp_flip flip;
        dvpp_profile prof;
        dvpp_status want;
    } cases[] = {
        {DVPP_PIXEL_NV12, 33, 18, DVPP_FLIP_HORIZONTAL, DVPP_PROFILE_NATIVE, DVPP_EINVAL},
        {DVPP_PIXEL_NV12, 34, 17, DVPP_FLIP_VERTICAL, DVPP_PROFILE_NATIVE, DVPP_EINVAL},
        {DVPP_PIXEL_YUYV, 33, 18, DVPP_FLIP_BOTH, DVPP_PROFILE_NATIVE, DVPP_EINVAL},
        {DVPP_PIXEL_RGB, 34, 18, DVPP_FLIP_HORIZONTAL, DVPP_PROFILE_ASCEND310P,
         DVPP_EPROFILE},
    };
    dvpp_pipeline p;
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    dvpp_err e;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dvpp_pipeline_init(&p);
        p.input = DVPP_PIPE_IN_RAW;
        p.raw = (dvpp_pipe_raw){cases[i].f, cases[i].w, cases[i].h, 0, 0};
        p.decode.profile = cases[i].prof;
        add_flip(&p, cases[i].flip);
        assert_int_equal(dvpp_pipeline_validate(&p, NULL, &e), DVPP_OK);
        memset(&src, 0, sizeof(src));
        src.width = cases[i].w, src.height = cases[i].h;
        assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, &e), cases[i].want);
        assert_string_equal(e.field, "ops[0].flip");
        assert_non_null(strstr(e.msg, "ops[0].flip: "));
    }
    dvpp_pipeline_init(&p);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 8, 8, 0, 0};
    add_flip(&p, (dvpp_flip)4);
    expect_invalid(&p, DVPP_EINVAL, "ops[0].flip");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_fields),
        cmocka_unit_test(test_jpeg_resize_norm_equals_by_hand),
        cmocka_unit_test(test_shrink_on_load),
        cmocka_unit_test(test_letterbox_geometry),
        cmocka_unit_test(test_aipp_vector_a_raw_nv12),
        cmocka_unit_test(test_batch_slice),
        cmocka_unit_test(test_aipp_tensor_every_byte),
        cmocka_unit_test(test_image_every_byte),
        cmocka_unit_test(test_intermediate_sizes_checked),
        cmocka_unit_test(test_work_bytes),
        cmocka_unit_test(test_steady_state_no_alloc),
        cmocka_unit_test(test_steady_state_jpeg),
        cmocka_unit_test(test_idle_trim),
        cmocka_unit_test(test_corrupt_input),
        cmocka_unit_test(test_alloc_failure_loop),
        cmocka_unit_test(test_image_output),
        cmocka_unit_test(test_png_roundtrip),
        cmocka_unit_test(test_flip_after_resize_mirrors_the_fused_tensor),
        cmocka_unit_test(test_flip_every_byte),
        cmocka_unit_test(test_flip_refusals),
        cmocka_unit_test(test_grey_tensor_every_byte),
    };
    return cmocka_run_group_tests_name("device pipeline", tests, NULL, NULL);
}
