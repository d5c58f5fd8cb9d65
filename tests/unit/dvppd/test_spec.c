/* Unit tests for dvppd/dvppd_spec: query parameters and JSON specs become
 * the pipeline dvppctl builds for the same flags (field by field), every
 * syntax error names its parameter or JSON path, named and inline AIPP
 * configs are resolved, and the validator accepts what the parser makes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dvppd_spec.h"

static const char k_aipp_text[] =
    "aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
    " mean_chn_0 : 123\n mean_chn_1 : 117\n mean_chn_2 : 104\n"
    " var_reci_chn_0 : 0.0171\n var_reci_chn_1 : 0.0175\n var_reci_chn_2 : 0.0174\n}\n"
    "aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n}\n";

static dvpp_aipp_config g_named;

static const dvpp_aipp_config *lookup(void *ctx, const char *name)
{
    (void)ctx;
    return !strcmp(name, "imagenet") ? &g_named : NULL;
}

static dvppd_spec_env env_of(dvppd_spec_kind kind)
{
    dvppd_spec_env e = {kind, lookup, NULL, NULL, 0, NULL, NULL};
    return e;
}

static dvpp_status query(dvppd_spec_kind kind, const char *const *kv, size_t n,
                         dvppd_spec *s, dvpp_err *e)
{
    dvppd_kv q[16];
    dvppd_spec_env env = env_of(kind);

    for (size_t i = 0; i < n; i++)
        q[i] = (dvppd_kv){kv[2 * i], kv[2 * i + 1]};
    dvpp_err_clear(e);
    return dvppd_spec_from_query(&env, q, n, s, e);
}

static dvpp_status json(dvppd_spec_kind kind, const char *text, dvppd_spec *s,
                        dvpp_err *e)
{
    dvppd_spec_env env = env_of(kind);

    dvpp_err_clear(e);
    return dvppd_spec_from_json(&env, text, strlen(text), s, e);
}

static int setup(void **state)
{
    (void)state;
    return dvpp_aipp_parse(k_aipp_text, sizeof(k_aipp_text) - 1, &g_named, NULL) == DVPP_OK
               ? 0 : -1;
}

/* The query of docs/http-api.md's first example = dvppctl preprocess
 * --size 224x224 --mean ... --std ...: one stretch resize, torchvision
 * normalisation, f32 NCHW tensor. */
static void test_query_imagenet(void **state)
{
    static const char *const kv[] = {"w", "224", "h", "224", "mean", "0.485,0.456,0.406",
                                     "std", "0.229,0.224,0.225"};
    dvppd_spec s;
    dvpp_err e;

    (void)state;
    assert_int_equal(query(DVPPD_SPEC_TENSOR, kv, 4, &s, &e), DVPP_OK);
    assert_false(s.pipe.decode.shrink_on_load); /* tensors: exact decodes */
    assert_int_equal(s.pipe.nops, 1);
    assert_int_equal(s.pipe.ops[0].kind, DVPP_PIPE_OP_RESIZE);
    assert_int_equal(s.pipe.ops[0].u.resize.w, 224);
    assert_int_equal(s.pipe.ops[0].u.resize.h, 224);
    assert_int_equal(s.pipe.ops[0].u.resize.mode, DVPP_RESIZE_STRETCH);
    assert_int_equal(s.pipe.ops[0].u.resize.opts.parity, DVPP_PARITY_CV2);
    assert_int_equal(s.pipe.ops[0].u.resize.opts.interp, DVPP_INTERP_BILINEAR);
    assert_int_equal(s.pipe.post, DVPP_PIPE_POST_NORM);
    assert_int_equal(s.pipe.output, DVPP_PIPE_OUT_TENSOR);
    assert_true(s.pipe.norm.mean[0] == 0.485 && s.pipe.norm.mean[2] == 0.406);
    assert_true(s.pipe.norm.std[1] == 0.224);
    assert_true(s.pipe.norm.scale == 255.0);
    assert_int_equal(s.pipe.norm.layout, DVPP_LAYOUT_NCHW);
    assert_int_equal(s.pipe.norm.dtype, DVPP_DTYPE_F32);
    assert_false(s.raw_out);
    assert_int_equal(dvpp_pipeline_validate(&s.pipe, NULL, &e), DVPP_OK);
}

/* scale= is blobFromImage's multiplier: (x - mean) * s, i.e. divisor 1
 * and std 1/s, as dvppctl --scale. */
static void test_query_scale_letterbox(void **state)
{
    static const char *const kv[] = {"w", "640", "h", "640", "mode", "letterbox", "pad",
                                      "727272", "scale", "0.00392156862745098", "order",
                                      "bgr", "dtype", "float16", "layout", "nhwc",
                                      "crop", "10,20,629,459", "out", "raw"};
    dvppd_spec s;
    dvpp_err e;

    (void)state;
    assert_int_equal(query(DVPPD_SPEC_TENSOR, kv, 10, &s, &e), DVPP_OK);
    assert_int_equal(s.pipe.nops, 2);
    assert_int_equal(s.pipe.ops[0].kind, DVPP_PIPE_OP_CROP);
    assert_int_equal(s.pipe.ops[0].u.crop.left, 10);
    assert_int_equal(s.pipe.ops[0].u.crop.bottom, 459);
    assert_int_equal(s.pipe.ops[1].u.resize.mode, DVPP_RESIZE_LETTERBOX);
    assert_int_equal(s.pipe.ops[1].u.resize.pad[0], 0x72);
    assert_true(s.pipe.norm.scale == 1.0);
    assert_true(s.pipe.norm.std[0] == 1.0 / 0.00392156862745098);
    assert_true(s.pipe.norm.bgr);
    assert_int_equal(s.pipe.norm.dtype, DVPP_DTYPE_F16);
    assert_int_equal(s.pipe.norm.layout, DVPP_LAYOUT_NHWC);
    assert_true(s.raw_out);
    assert_int_equal(dvpp_pipeline_validate(&s.pipe, NULL, &e), DVPP_OK);
}

static void expect_query_error(dvppd_spec_kind kind, const char *k, const char *v,
                               const char *field)
{
    const char *kv[] = {"w", "32", "h", "32", k, v};
    dvppd_spec s;
    dvpp_err e;

    assert_int_equal(query(kind, kv, 3, &s, &e), DVPP_EINVAL);
    assert_string_equal(e.field, field);
    assert_non_null(strstr(e.msg, field));
}

static void test_query_errors_name_the_parameter(void **state)
{
    (void)state;
    expect_query_error(DVPPD_SPEC_TENSOR, "foo", "1", "foo");
    expect_query_error(DVPPD_SPEC_TENSOR, "", "8", "query"); /* "?=8": no name */
    expect_query_error(DVPPD_SPEC_TENSOR, "mode", "squash", "mode");
    expect_query_error(DVPPD_SPEC_TENSOR, "interp", "magic", "interp");
    expect_query_error(DVPPD_SPEC_TENSOR, "parity", "matlab", "parity");
    expect_query_error(DVPPD_SPEC_TENSOR, "mean", "1,2", "mean");
    expect_query_error(DVPPD_SPEC_TENSOR, "std", "0", "std");
    expect_query_error(DVPPD_SPEC_TENSOR, "scale", "-1", "scale");
    expect_query_error(DVPPD_SPEC_TENSOR, "dtype", "float64", "dtype");
    expect_query_error(DVPPD_SPEC_TENSOR, "pad", "zzz", "pad");
    expect_query_error(DVPPD_SPEC_TENSOR, "crop", "5,5,1,1", "crop");
    expect_query_error(DVPPD_SPEC_TENSOR, "w", "0", "w");
    expect_query_error(DVPPD_SPEC_TENSOR, "h", "99999999999", "h");
    expect_query_error(DVPPD_SPEC_TENSOR, "format", "png", "format");
    expect_query_error(DVPPD_SPEC_TENSOR, "aipp", "nosuch", "aipp");
    expect_query_error(DVPPD_SPEC_IMAGE, "mean", "1", "mean");
    expect_query_error(DVPPD_SPEC_IMAGE, "format", "gif", "format");
    expect_query_error(DVPPD_SPEC_IMAGE, "quality", "101", "quality");
    expect_query_error(DVPPD_SPEC_IMAGE, "out", "raw", "out");
    expect_query_error(DVPPD_SPEC_DECODE, "format", "nv13", "format");
    expect_query_error(DVPPD_SPEC_DECODE, "align", "16", "align");
    expect_query_error(DVPPD_SPEC_DECODE, "strict", "1", "strict");
}

/* "?crop" with no '=' (libmicrohttpd gives a NULL value): a bad value for
 * a valued parameter, true for a flag. */
static void test_query_valueless_keys(void **state)
{
    dvppd_spec_env env = env_of(DVPPD_SPEC_TENSOR);
    dvppd_kv crop[] = {{"w", "8"}, {"h", "8"}, {"crop", NULL}};
    dvppd_kv mean[] = {{"mean", NULL}};
    dvppd_kv flag[] = {{"w", "8"}, {"h", "8"}, {"shrink_on_load", NULL}, {"strict", NULL}};
    dvppd_spec s;
    dvpp_err e;

    (void)state;
    assert_int_equal(dvppd_spec_from_query(&env, crop, 3, &s, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "crop");
    assert_int_equal(dvppd_spec_from_query(&env, mean, 1, &s, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "mean");
    assert_int_equal(dvppd_spec_from_query(&env, flag, 4, &s, &e), DVPP_OK);
    assert_true(s.pipe.decode.shrink_on_load);
    assert_true(s.strict);
}

static void test_query_image_and_decode(void **state)
{
    static const char *const img[] = {"w", "300", "h", "300", "mode", "fit", "quality",
                                      "85", "format", "png"};
    static const char *const dec[] = {"format", "nv12", "align", "16x2", "out", "raw"};
    static const char *const shorter[] = {"w", "256", "mode", "shorter"};
    dvppd_spec s;
    dvpp_err e;

    (void)state;
    assert_int_equal(query(DVPPD_SPEC_IMAGE, img, 5, &s, &e), DVPP_OK);
    assert_int_equal(s.pipe.output, DVPP_PIPE_OUT_IMAGE);
    assert_true(s.pipe.decode.shrink_on_load); /* thumbnails: DCT scaling */
    assert_int_equal(s.pipe.encoding, DVPP_PIPE_ENC_PNG);
    assert_int_equal(s.pipe.quality, 85);
    assert_int_equal(s.pipe.ops[0].u.resize.mode, DVPP_RESIZE_FIT);
    assert_int_equal(dvpp_pipeline_validate(&s.pipe, NULL, &e), DVPP_OK);
    assert_int_equal(query(DVPPD_SPEC_IMAGE, img, 4, &s, &e), DVPP_OK);
    assert_int_equal(s.pipe.encoding, DVPP_PIPE_ENC_JPEG);

    {
        static const char *const exact[] = {"w", "300", "h", "300", "shrink_on_load", "0"};
        static const char *const crop[] = {"crop", "0,0,9,9", "w", "5", "h", "5"};
        assert_int_equal(query(DVPPD_SPEC_IMAGE, exact, 3, &s, &e), DVPP_OK);
        assert_false(s.pipe.decode.shrink_on_load);
        assert_int_equal(query(DVPPD_SPEC_IMAGE, crop, 3, &s, &e), DVPP_OK);
        assert_false(s.pipe.decode.shrink_on_load); /* the first op is a crop */
        assert_int_equal(json(DVPPD_SPEC_IMAGE, "{\"ops\": [{\"resize\": {\"w\": 9, "
                                                "\"h\": 9}}], \"decode\": "
                                                "{\"shrink_on_load\": false}}", &s, &e),
                         DVPP_OK);
        assert_false(s.pipe.decode.shrink_on_load);
    }
    assert_false(s.pipe.decode.shrink_on_load);
    assert_int_equal(query(DVPPD_SPEC_DECODE, dec, 3, &s, &e), DVPP_OK);
    assert_false(s.pipe.decode.shrink_on_load);
    assert_int_equal(s.pipe.nops, 0);
    assert_int_equal(s.pipe.out_format, DVPP_PIXEL_NV12);
    assert_int_equal(s.pipe.out_align_w, 16);
    assert_int_equal(s.pipe.out_align_h, 2);
    assert_int_equal(s.pipe.encoding, DVPP_PIPE_ENC_NONE);
    assert_true(s.raw_out);
    assert_int_equal(dvpp_pipeline_validate(&s.pipe, NULL, &e), DVPP_OK);

    /* shorter/longer need only w */
    assert_int_equal(query(DVPPD_SPEC_TENSOR, shorter, 2, &s, &e), DVPP_OK);
    assert_int_equal(s.pipe.ops[0].u.resize.mode, DVPP_RESIZE_SHORTER);
}

/* A named config: its op (by index) is copied into the pipeline; with
 * mean/std beside it the request is refused. */
static void test_query_named_aipp(void **state)
{
    static const char *const kv[] = {"w", "224", "h", "224", "aipp", "imagenet",
                                     "aipp_dtype", "float32", "aipp_op", "1"};
    static const char *const both[] = {"aipp", "imagenet", "mean", "1"};
    static const char *const opless[] = {"aipp", "imagenet", "aipp_op", "2"};
    dvppd_spec s;
    dvpp_err e;

    (void)state;
    assert_int_equal(query(DVPPD_SPEC_TENSOR, kv, 4, &s, &e), DVPP_OK);
    assert_int_equal(s.pipe.post, DVPP_PIPE_POST_AIPP);
    assert_true(s.pipe.aipp.mean_chn[0] == g_named.ops[0].mean_chn[0]);
    assert_int_equal(s.pipe.aipp_dtype, DVPP_DTYPE_F32);
    assert_int_equal(s.pipe.aipp_layout, DVPP_LAYOUT_NC1HWC0);
    assert_int_equal(query(DVPPD_SPEC_TENSOR, kv, 5, &s, &e), DVPP_OK);
    assert_true(s.pipe.aipp.mean_chn[0] == g_named.ops[1].mean_chn[0]);
    assert_int_equal(query(DVPPD_SPEC_TENSOR, both, 2, &s, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "aipp");
    assert_int_equal(query(DVPPD_SPEC_TENSOR, opless, 2, &s, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "aipp_op");
}

static void test_inline_aipp(void **state)
{
    dvppd_spec_env env = env_of(DVPPD_SPEC_TENSOR);
    dvppd_spec s;
    dvpp_err e;
    static const char bad[] = "aipp_op {\n input_format : NOPE\n}\n";

    (void)state;
    env.aipp_text = k_aipp_text;
    env.aipp_len = sizeof(k_aipp_text) - 1;
    assert_int_equal(dvppd_spec_from_query(&env, NULL, 0, &s, &e), DVPP_OK);
    assert_int_equal(s.pipe.post, DVPP_PIPE_POST_AIPP);
    assert_true(s.pipe.aipp.var_reci_chn[1] == g_named.ops[0].var_reci_chn[1]);
    env.aipp_text = bad;
    env.aipp_len = sizeof(bad) - 1;
    assert_int_equal(dvppd_spec_from_query(&env, NULL, 0, &s, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "aipp");
    assert_non_null(strstr(e.msg, "input_format"));
    /* JSON: the config inside the spec */
    assert_int_equal(json(DVPPD_SPEC_TENSOR,
                          "{\"aipp\": {\"config\": \"aipp_op {\\n aipp_mode : static\\n input_format : "
                          "RGB888_U8\\n mean_chn_0 : 7\\n}\\n\", \"dtype\": \"uint8\"}}",
                          &s, &e), DVPP_OK);
    assert_true(s.pipe.aipp.mean_chn[0] == 7);
    assert_int_equal(s.pipe.aipp_dtype, DVPP_DTYPE_U8);
}

/* The JSON example of docs/http-api.md, every op kind. */
static void test_json_full(void **state)
{
    static const char spec[] =
        "{\"decode\": {\"orient\": false, \"profile\": \"native\", \"roi\": [0,0,639,479]},"
        " \"ops\": [{\"crop\": [10, 10, 649, 489]},"
        "  {\"resize\": {\"w\": 640, \"h\": 640, \"mode\": \"letterbox\", \"interp\": "
        "\"bicubic\", \"parity\": \"pil\", \"pad\": [114, 114, 114]}},"
        "  {\"border\": {\"top\": 2, \"bottom\": 2, \"left\": 4, \"right\": 4, \"type\": "
        "\"reflect\"}},"
        "  {\"convert\": \"bgr\"}],"
        " \"normalize\": {\"mean\": [0.485, 0.456, 0.406], \"std\": 0.5, \"dtype\": "
        "\"float16\", \"layout\": \"nc1hwc0\"},"
        " \"output\": {\"out\": \"raw\"}, \"strict\": true}";
    dvppd_spec s;
    dvpp_err e;

    (void)state;
    assert_int_equal(json(DVPPD_SPEC_TENSOR, spec, &s, &e), DVPP_OK);
    assert_true(s.pipe.decode.no_orient);
    assert_true(s.pipe.decode.has_roi);
    assert_int_equal(s.pipe.decode.roi.w, 640);
    assert_int_equal(s.pipe.decode.roi.h, 480);
    assert_int_equal(s.pipe.nops, 4);
    assert_int_equal(s.pipe.ops[0].u.crop.right, 649);
    assert_int_equal(s.pipe.ops[1].u.resize.opts.interp, DVPP_INTERP_BICUBIC);
    assert_int_equal(s.pipe.ops[1].u.resize.opts.parity, DVPP_PARITY_PIL);
    assert_int_equal(s.pipe.ops[1].u.resize.pad[2], 114);
    assert_int_equal(s.pipe.ops[2].kind, DVPP_PIPE_OP_BORDER);
    assert_int_equal(s.pipe.ops[2].u.border.left, 4);
    assert_int_equal(s.pipe.ops[2].u.border.type, DVPP_BORDER_REFLECT);
    assert_int_equal(s.pipe.ops[3].u.convert, DVPP_PIXEL_BGR);
    assert_true(s.pipe.norm.std[0] == 0.5 && s.pipe.norm.std[2] == 0.5);
    assert_int_equal(s.pipe.norm.layout, DVPP_LAYOUT_NC1HWC0);
    assert_true(s.raw_out && s.strict);
}

static void expect_json_error(dvppd_spec_kind kind, const char *text, const char *field)
{
    dvppd_spec s;
    dvpp_err e;

    assert_int_equal(json(kind, text, &s, &e), DVPP_EINVAL);
    assert_string_equal(e.field, field);
}

static void test_json_errors_name_the_path(void **state)
{
    (void)state;
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"ops\": [", "spec");
    expect_json_error(DVPPD_SPEC_TENSOR, "[1]", "spec");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"opz\": []}", "spec");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"ops\": {}}", "ops");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"ops\": [{\"rotate\": 90}]}", "ops[0].rotate");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"ops\": [{\"crop\": [1,2,3]}]}",
                      "ops[0].crop");
    expect_json_error(DVPPD_SPEC_TENSOR,
                      "{\"ops\": [{\"crop\": [0,0,9,9]}, {\"resize\": {\"w\": -4, "
                      "\"h\": 3}}]}",
                      "ops[1].resize.w");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"ops\": [{\"resize\": {\"w\": 4, \"h\": 3, "
                                         "\"speed\": 1}}]}",
                      "ops[0].resize");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"ops\": [{\"resize\": {\"w\": 4, \"h\": 3, "
                                         "\"mode\": \"zoom\"}}]}",
                      "ops[0].resize.mode");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"normalize\": {\"std\": [1, 0, 1]}}",
                      "normalize.std");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"normalize\": {\"dtype\": 4}}",
                      "normalize.dtype");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"normalize\": {\"layout\": \"chwn\"}}",
                      "normalize.layout");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"aipp\": {\"name\": \"x\", \"layout\": 1}}",
                      "aipp.layout");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"aipp\": {\"name\": \"x\", \"dtype\": \"f64\"}}",
                      "aipp.dtype");
    expect_json_error(DVPPD_SPEC_IMAGE, "{\"normalize\": {}}", "normalize");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"aipp\": {\"name\": \"x\"}}", "aipp");
    expect_json_error(DVPPD_SPEC_DECODE, "{\"output\": {\"align\": [16]}}",
                      "output.align");
    /* refused before the value is converted (UBSan: float-cast-overflow) */
    expect_json_error(DVPPD_SPEC_DECODE, "{\"output\": {\"align\": [1e40, 2]}}",
                      "output.align");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"decode\": {\"roi\": [5,5,1,1]}}",
                      "decode.roi");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"strict\": 1}", "spec.strict");
    expect_json_error(DVPPD_SPEC_TENSOR, "{\"a\": 1, \"a\": 2}", "spec");
    expect_json_error(DVPPD_SPEC_TENSOR,
                      "{\"ops\": [{\"crop\":[0,0,1,1]},{\"crop\":[0,0,1,1]},"
                      "{\"crop\":[0,0,1,1]},{\"crop\":[0,0,1,1]},{\"crop\":[0,0,1,1]},"
                      "{\"crop\":[0,0,1,1]},{\"crop\":[0,0,1,1]},{\"crop\":[0,0,1,1]},"
                      "{\"crop\":[0,0,1,1]}]}",
                      "ops");
}

/* The same pipeline from both syntaxes is the same bytes. */
static void test_json_equals_query(void **state)
{
    static const char *const kv[] = {"w", "320", "h", "240", "mode", "fill", "interp",
                                     "area", "mean", "0.5", "std", "0.25", "layout",
                                     "nhwc"};
    static const char text[] =
        "{\"ops\": [{\"resize\": {\"w\": 320, \"h\": 240, \"mode\": \"fill\", \"interp\": "
        "\"area\"}}], \"normalize\": {\"mean\": 0.5, \"std\": [0.25, 0.25, 0.25], "
        "\"layout\": \"nhwc\"}}";
    dvppd_spec a, b;
    dvpp_err e;

    (void)state;
    assert_int_equal(query(DVPPD_SPEC_TENSOR, kv, 7, &a, &e), DVPP_OK);
    assert_int_equal(json(DVPPD_SPEC_TENSOR, text, &b, &e), DVPP_OK);
    assert_memory_equal(&a.pipe.ops[0], &b.pipe.ops[0], sizeof(a.pipe.ops[0]));
    assert_memory_equal(&a.pipe.norm, &b.pipe.norm, sizeof(a.pipe.norm));
    assert_int_equal(a.pipe.nops, b.pipe.nops);
    assert_int_equal(a.pipe.post, b.pipe.post);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_imagenet),
        cmocka_unit_test(test_query_scale_letterbox),
        cmocka_unit_test(test_query_errors_name_the_parameter),
        cmocka_unit_test(test_query_valueless_keys),
        cmocka_unit_test(test_query_image_and_decode),
        cmocka_unit_test(test_query_named_aipp),
        cmocka_unit_test(test_inline_aipp),
        cmocka_unit_test(test_json_full),
        cmocka_unit_test(test_json_errors_name_the_path),
        cmocka_unit_test(test_json_equals_query),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
