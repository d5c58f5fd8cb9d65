/* Unit tests for aipp/dvpp_aipp_cfg: ATC config parsing (test vectors A-D
 * of reference/dvpp-aipp.md §7), defaults, errors with line numbers,
 * formatting round trip, the dynamic AIPP blob and the norm spec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_aipp_cfg.h"
#include "dvpp_fp16.h"
#include "dvpp_status.h"

/* Vector A verbatim: tabs, then 8-space indentation for the matrix. */
static const char k_vec_a[] =
    "aipp_op {\n"
    "\taipp_mode : static\n"
    "\trelated_input_rank : 0\n"
    "\tinput_format : YUV420SP_U8\n"
    "\tcsc_switch : true\n"
    "\trbuv_swap_switch : false\n"
    "\tvar_reci_chn_0 : 1\n"
    "\tvar_reci_chn_1 : 1\n"
    "\tvar_reci_chn_2 : 1\n"
    "\tmin_chn_0 : 123\n"
    "\tmin_chn_1 : 117\n"
    "\tmin_chn_2 : 104\n"
    "\tload_start_pos_h : 0\n"
    "\tload_start_pos_w : 0\n"
    "\tsrc_image_size_w : 224\n"
    "\tsrc_image_size_h : 224\n"
    "        matrix_r0c0 : 256\n"
    "        matrix_r0c1 : 0\n"
    "        matrix_r0c2 : 359\n"
    "        matrix_r1c0 : 256\n"
    "        matrix_r1c1 : -88\n"
    "        matrix_r1c2 : -183\n"
    "        matrix_r2c0 : 256\n"
    "        matrix_r2c1 : 454\n"
    "        matrix_r2c2 : 0\n"
    "        input_bias_0 : 0\n"
    "        input_bias_1 : 128\n"
    "        input_bias_2 : 128\n"
    "}\n";

/* Vector B: as A without the matrix and bias lines. */
static const char k_vec_b[] =
    "aipp_op {\n"
    "\taipp_mode : static\n"
    "\trelated_input_rank : 0\n"
    "\tinput_format : YUV420SP_U8\n"
    "\tcsc_switch : true\n"
    "\trbuv_swap_switch : false\n"
    "\tvar_reci_chn_0 : 1\n"
    "\tvar_reci_chn_1 : 1\n"
    "\tvar_reci_chn_2 : 1\n"
    "\tmin_chn_0 : 123\n"
    "\tmin_chn_1 : 117\n"
    "\tmin_chn_2 : 104\n"
    "\tload_start_pos_h : 0\n"
    "\tload_start_pos_w : 0\n"
    "\tsrc_image_size_w : 224\n"
    "\tsrc_image_size_h : 224\n"
    "}\n";

/* Vector C, on one line as the ATC page prints it. */
static const char k_vec_c[] =
    "aipp_op { aipp_mode: static input_format: YUV420SP_U8 src_image_size_w: 320 "
    "src_image_size_h: 240 crop: true load_start_pos_w: 10 load_start_pos_h: 20 "
    "crop_size_w: 50 crop_size_h: 60 padding: true left_padding_size: 20 "
    "right_padding_size: 15 top_padding_size: 20 bottom_padding_size: 15 "
    "padding_value: 0 }";

static const char k_vec_d[] =
    "aipp_op { aipp_mode : dynamic related_input_rank : 0 max_src_image_size: 260000 "
    "support_rotation: false }";

static dvpp_status parse_str(const char *s, dvpp_aipp_config *cfg, dvpp_err *e)
{
    dvpp_err_clear(e);
    return dvpp_aipp_parse(s, strlen(s), cfg, e);
}

static void test_vector_a(void **state)
{
    static const int16_t m[3][3] = {{256, 0, 359}, {256, -88, -183}, {256, 454, 0}};
    dvpp_aipp_config cfg;
    dvpp_err e;

    (void)state;
    assert_int_equal(parse_str(k_vec_a, &cfg, &e), DVPP_OK);
    assert_int_equal(cfg.nops, 1);
    const dvpp_aipp_op *op = &cfg.ops[0];
    assert_int_equal(op->mode, DVPP_AIPP_STATIC);
    assert_int_equal(op->input_format, DVPP_AIPP_YUV420SP_U8);
    assert_true(op->csc_switch);
    assert_false(op->rbuv_swap_switch);
    assert_int_equal(op->first_line, 1);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            assert_int_equal(op->matrix[r][c], m[r][c]);
    assert_int_equal(op->input_bias[0], 0);
    assert_int_equal(op->input_bias[1], 128);
    assert_int_equal(op->input_bias[2], 128);
    /* ATC fills the output bias too (unused for YUV->RGB). */
    assert_int_equal(op->output_bias[0], 16);
    assert_true(op->min_chn[0] == 123.0f);
    assert_true(op->min_chn[1] == 117.0f);
    assert_true(op->min_chn[2] == 104.0f);
    for (int i = 0; i < 4; i++)
        assert_true(op->var_reci_chn[i] == 1.0f);
    assert_int_equal(op->src_image_size_w, 224);
    assert_int_equal(op->src_image_size_h, 224);
    uint32_t w, h;
    dvpp_aipp_output_size(op, &w, &h);
    assert_int_equal(w, 224);
    assert_int_equal(h, 224);
}

static void test_vector_b_defaults(void **state)
{
    static const int16_t m[3][3] = {{298, 516, 0}, {298, -100, -208}, {298, 0, 409}};
    dvpp_aipp_config cfg;
    dvpp_err e;

    (void)state;
    assert_int_equal(parse_str(k_vec_b, &cfg, &e), DVPP_OK);
    const dvpp_aipp_op *op = &cfg.ops[0];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            assert_int_equal(op->matrix[r][c], m[r][c]);
    assert_int_equal(op->input_bias[0], 16);
    assert_int_equal(op->input_bias[1], 128);
    assert_int_equal(op->input_bias[2], 128);
    assert_true(op->var_reci_chn[3] == 1.0f);

    /* Other inputs get RGB->YUV and the output bias. */
    assert_int_equal(parse_str("aipp_op { aipp_mode: static input_format: RGB888_U8 "
                               "csc_switch: true }",
                               &cfg, &e),
                     DVPP_OK);
    op = &cfg.ops[0];
    assert_int_equal(op->matrix[0][0], 66);
    assert_int_equal(op->matrix[1][0], -38);
    assert_int_equal(op->matrix[2][2], -18);
    assert_int_equal(op->output_bias[0], 16);
    assert_int_equal(op->output_bias[2], 128);

    /* No csc: matrix stays zero; var_reci still defaults to 1. */
    assert_int_equal(parse_str("aipp_op { aipp_mode: static input_format: RGB888_U8 "
                               "var_reci_chn_1: 0.5 }",
                               &cfg, &e),
                     DVPP_OK);
    op = &cfg.ops[0];
    assert_int_equal(op->matrix[0][0], 0);
    assert_int_equal(op->input_bias[0], 0);
    assert_true(op->var_reci_chn[0] == 1.0f);
    assert_true(op->var_reci_chn[1] == 0.5f);

    /* Sizes are zeroed when their switch is off. */
    assert_int_equal(parse_str("aipp_op { aipp_mode: static input_format: RGB888_U8 "
                               "crop: false crop_size_w: 20 load_start_pos_h: 4 "
                               "resize: false resize_output_w: 100 "
                               "left_padding_size: 3 }",
                               &cfg, &e),
                     DVPP_OK);
    op = &cfg.ops[0];
    assert_int_equal(op->crop_size_w, 0);
    assert_int_equal(op->load_start_pos_h, 0);
    assert_int_equal(op->resize_output_w, 0);
    assert_int_equal(op->left_padding_size, 0);
}

static void test_vector_c_output_size(void **state)
{
    dvpp_aipp_config cfg;
    dvpp_err e;
    uint32_t w = 0, h = 0;

    (void)state;
    assert_int_equal(parse_str(k_vec_c, &cfg, &e), DVPP_OK);
    const dvpp_aipp_op *op = &cfg.ops[0];
    assert_true(op->crop);
    assert_int_equal(op->load_start_pos_w, 10);
    assert_int_equal(op->crop_size_h, 60);
    assert_int_equal(op->bottom_padding_size, 15);
    dvpp_aipp_output_size(op, &w, &h);
    assert_int_equal(w, 85);
    assert_int_equal(h, 95);
}

static void test_vector_d_dynamic(void **state)
{
    dvpp_aipp_config cfg;
    dvpp_err e;

    (void)state;
    assert_int_equal(parse_str(k_vec_d, &cfg, &e), DVPP_OK);
    assert_int_equal(cfg.nops, 1);
    assert_int_equal(cfg.ops[0].mode, DVPP_AIPP_DYNAMIC);
    assert_int_equal(cfg.ops[0].max_src_image_size, 260000);
    assert_false(cfg.ops[0].support_rotation);
    assert_int_equal(cfg.ops[0].related_input_rank, 0);
}

static void test_two_blocks_comments(void **state)
{
    static const char text[] =
        "# leading comment\n"
        "aipp_op { # after the brace\n"
        "  aipp_mode : static # trailing\n"
        "  # a whole-line comment with aipp_op { and } in it\n"
        "  input_format : 3\n"
        "  related_input_rank : 0\n"
        "  input_edge_idx : 0\n"
        "  input_edge_idx : 2\n"
        "  related_input_name : \"data\\\"x\"\n"
        "}# right after\n"
        "aipp_op:{\n"
        "  aipp_mode : 1 ; input_format : XRGB8888_U8,\n"
        "  related_input_rank : 1\n"
        "  ax_swap_switch : 1\n"
        "  mean_chn_0 : 255 min_chn_1 : -2.5e-3 var_reci_chn_2 : 0.003921568627451\n"
        "}\n"
        "# trailing comment without newline";
    dvpp_aipp_config cfg;
    dvpp_err e;

    (void)state;
    assert_int_equal(parse_str(text, &cfg, &e), DVPP_OK);
    assert_int_equal(cfg.nops, 2);
    assert_int_equal(cfg.ops[0].input_format, DVPP_AIPP_RGB888_U8);
    assert_int_equal(cfg.ops[0].n_input_edge_idx, 2);
    assert_int_equal(cfg.ops[0].input_edge_idx[1], 2);
    assert_string_equal(cfg.ops[0].related_input_name, "data\"x");
    assert_int_equal(cfg.ops[0].first_line, 2);
    assert_int_equal(cfg.ops[1].first_line, 11);
    assert_int_equal(cfg.ops[1].input_format, DVPP_AIPP_XRGB8888_U8);
    assert_int_equal(cfg.ops[1].related_input_rank, 1);
    assert_true(cfg.ops[1].ax_swap_switch);
    assert_int_equal(cfg.ops[1].mean_chn[0], 255);
    assert_true(cfg.ops[1].min_chn[1] == -2.5e-3f);
    assert_true(cfg.ops[1].var_reci_chn[2] == 0.003921568627451f);
}

static void expect_error(const char *text, unsigned line, const char *field, const char *what)
{
    dvpp_aipp_config cfg;
    dvpp_err e;
    char prefix[96];

    assert_int_equal(parse_str(text, &cfg, &e), DVPP_EINVAL);
    assert_int_equal(e.status, DVPP_EINVAL);
    assert_string_equal(e.field, field);
    snprintf(prefix, sizeof prefix, "line %u: %s: ", line, field);
    if (strncmp(e.msg, prefix, strlen(prefix)) != 0 || !strstr(e.msg, what))
        fail_msg("got '%s', want '%s...%s'", e.msg, prefix, what);
    assert_int_equal(cfg.nops, 0);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " bogus_field : 1\n}\n",
                 4, "bogus_field", "unknown field");
    expect_error("aipp_op {\n aipp_mode : static\n\n input_format : BGR888\n}\n", 4,
                 "input_format", "unknown value 'BGR888'");
    expect_error("aipp_op {\n aipp_mode : sometimes\n}\n", 2, "aipp_mode", "unknown value");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " src_image_size_w : 5000\n}\n",
                 4, "src_image_size_w", "out of range");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " mean_chn_1 : 256\n}\n",
                 4, "mean_chn_1", "out of range");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " matrix_r0c0 : 40000\n}\n",
                 4, "matrix_r0c0", "out of range");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " top_padding_size : 33\n}\n",
                 4, "top_padding_size", "out of range");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " src_image_size_w : 1\n}\n",
                 4, "src_image_size_w", "out of range");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " input_bias_0 : -1\n}\n",
                 4, "input_bias_0", "out of range");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " matrix_r0c1 : 1\n matrix_r0c0 : 2\n\n  matrix_r0c1 : 3\n}\n",
                 7, "matrix_r0c1", "given twice");
    expect_error("aipp_op {\n aipp_mode : static\n aipp_mode : static\n}\n", 3, "aipp_mode",
                 "given twice");
    expect_error("\n\naipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n", 3,
                 "aipp_op", "block opened here is not closed");
    expect_error("aipp_op {\n aipp_mode : static\n input_format :", 1, "aipp_op",
                 "block opened here is not closed");
    expect_error("aipp_op {\n aipp_mode : static\n related_input_rank : 0\n}\n", 1,
                 "input_format", "required field missing");
    expect_error("aipp_op {\n input_format : RGB888_U8\n}\n", 1, "aipp_mode",
                 "required field missing");
    expect_error("aipp_op {\n aipp_mode : dynamic\n}\n", 1, "max_src_image_size",
                 "required field missing");
    expect_error("aipp_op {\n aipp_mode : dynamic\n max_src_image_size : 0\n}\n", 3,
                 "max_src_image_size", "> 0");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n}\n"
                 "garbage\n",
                 5, "aipp_op", "unexpected 'garbage'");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n @@ \n}\n", 4,
                 "aipp_op", "unexpected '@'");
    expect_error("aipp_op {\n aipp_mode : static\n input_format RGB888_U8\n}\n", 3,
                 "input_format", "expected ':'");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " csc_switch : maybe\n}\n",
                 4, "csc_switch", "bad value");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " crop_size_w : 1.5\n}\n",
                 4, "crop_size_w", "bad value");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " min_chn_0 : inf\n}\n",
                 4, "min_chn_0", "out of range");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " min_chn_0 : 1e39\n}\n",
                 4, "min_chn_0", "out of range");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " related_input_name : \"unterminated\n}\n",
                 4, "related_input_name", "missing value");
    /* Cross-field rules. */
    expect_error("aipp_op {\n aipp_mode : static\n input_format : YUV420SP_U8\n"
                 " src_image_size_w : 223\n src_image_size_h : 224\n}\n",
                 4, "src_image_size_w", "even");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : YUV420SP_U8\n"
                 " src_image_size_w : 224\n src_image_size_h : 224\n crop : true\n"
                 " load_start_pos_w : 3\n}\n",
                 7, "load_start_pos_w", "even");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
                 " src_image_size_w : 100\n src_image_size_h : 100\n crop : true\n"
                 " load_start_pos_w : 60\n crop_size_w : 50\n}\n",
                 8, "crop_size_w", "exceeds");
    expect_error("aipp_op {\n aipp_mode : static\n input_format : YUV400_U8\n"
                 " csc_switch : true\n}\n",
                 4, "csc_switch", "YUV400");
    expect_error("", 1, "aipp_op", "no aipp_op block");
    expect_error("# only a comment\n", 2, "aipp_op", "no aipp_op block");
    expect_error("aipp_op\n\n", 1, "aipp_op", "expected '{'");
    expect_error("aipp_op { aipp_mode: static input_format: RGB888_U8 input_edge_idx: 0 "
                 "input_edge_idx: 1 input_edge_idx: 2 input_edge_idx: 3 input_edge_idx: 4 "
                 "input_edge_idx: 5 input_edge_idx: 6 input_edge_idx: 7 \n"
                 "input_edge_idx: 8 }",
                 2, "input_edge_idx", "more than 8");

    char many[2048] = "";
    for (int i = 0; i < DVPP_AIPP_MAX_OPS + 1; i++)
        strcat(many, "aipp_op { aipp_mode: static input_format: RGB888_U8 }\n");
    expect_error(many, DVPP_AIPP_MAX_OPS + 1, "aipp_op", "more than");
}

/* Every prefix of vector A parses or fails cleanly; the buffer is exactly the
 * prefix so ASan catches any read past @len. */
static void test_truncated_prefixes(void **state)
{
    size_t n = strlen(k_vec_a);
    dvpp_aipp_config cfg;
    dvpp_err e;

    (void)state;
    for (size_t len = 0; len <= n; len++) {
        char *buf = malloc(len ? len : 1);
        assert_non_null(buf);
        memcpy(buf, k_vec_a, len);
        dvpp_err_clear(&e);
        dvpp_status st = dvpp_aipp_parse(buf, len, &cfg, &e);
        if (len < n - 1) {
            assert_int_equal(st, DVPP_EINVAL);
            assert_true(strncmp(e.msg, "line ", 5) == 0);
        } else {
            assert_int_equal(st, DVPP_OK);
        }
        free(buf);
    }
    assert_int_equal(dvpp_aipp_parse(NULL, 0, &cfg, &e), DVPP_EINVAL);
}

static void assert_same_op(const dvpp_aipp_op *a, const dvpp_aipp_op *b)
{
    dvpp_aipp_op x, y;

    memcpy(&x, a, sizeof x); /* all bytes, padding included */
    memcpy(&y, b, sizeof y);
    x.first_line = y.first_line = 0;
    assert_memory_equal(&x, &y, sizeof x);
}

static void roundtrip(const char *text)
{
    dvpp_aipp_config cfg, again;
    dvpp_err e;
    char buf[4096];

    assert_int_equal(parse_str(text, &cfg, &e), DVPP_OK);
    for (unsigned i = 0; i < cfg.nops; i++) {
        size_t n = dvpp_aipp_format_op(&cfg.ops[i], buf, sizeof buf);
        assert_true(n < sizeof buf);
        assert_int_equal(strlen(buf), n);
        if (parse_str(buf, &again, &e) != DVPP_OK)
            fail_msg("re-parse failed: %s\n%s", e.msg, buf);
        assert_int_equal(again.nops, 1);
        assert_same_op(&cfg.ops[i], &again.ops[0]);
    }
}

static void test_format_roundtrip(void **state)
{
    dvpp_aipp_config cfg;
    dvpp_err e;
    char small[16];

    (void)state;
    /* memset-equal comparison needs zeroed padding: parse zeroes the op. */
    roundtrip(k_vec_a);
    roundtrip(k_vec_b);
    roundtrip(k_vec_c);
    roundtrip(k_vec_d);
    roundtrip("aipp_op { aipp_mode: static input_format: ARGB8888_U8 csc_switch: true "
              "ax_swap_switch: true input_edge_idx: 3 input_edge_idx: 1 "
              "related_input_name: \"in\\\\put\" min_chn_0: 0.1 var_reci_chn_3: "
              "0.003921568627451 padding_value: -2.5e-3 cpadding_value: 7 "
              "resize: true resize_output_w: 1920 resize_output_h: 16 "
              "raw_rgbir_to_f16_n: 4 single_line_mode: true }");

    assert_int_equal(parse_str(k_vec_c, &cfg, &e), DVPP_OK);
    char big[4096];
    size_t need = dvpp_aipp_format_op(&cfg.ops[0], big, sizeof big);
    assert_non_null(strstr(big, "    input_format : YUV420SP_U8\n"));
    assert_non_null(strstr(big, "    crop_size_w : 50\n"));
    assert_non_null(strstr(big, "    aipp_mode : static\n"));
    /* Truncation keeps a NUL and reports the full length. */
    assert_int_equal(dvpp_aipp_format_op(&cfg.ops[0], small, sizeof small), need);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(dvpp_aipp_format_op(&cfg.ops[0], NULL, 0), need);

    assert_string_equal(dvpp_aipp_format_name(DVPP_AIPP_YUV420SP_U8), "YUV420SP_U8");
    assert_string_equal(dvpp_aipp_format_name(DVPP_AIPP_RGB24_IR), "RGB24_IR");
    assert_string_equal(dvpp_aipp_format_name((dvpp_aipp_format)99), "UNDEFINED");
    assert_string_equal(dvpp_aipp_format_name(DVPP_AIPP_FMT_UNDEFINED), "UNDEFINED");
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static int32_t rd32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                     ((uint32_t)p[3] << 24));
}

/* The YOLOv3 sample's runtime parameters (vector D), two images. */
static void fill_dyn(dvpp_aipp_dyn *d)
{
    static const int16_t m[3][3] = {{298, 516, 0}, {298, -100, -208}, {298, 0, 409}};

    memset(d, 0, sizeof *d);
    d->input_format = DVPP_AIPP_YUV420SP_U8;
    d->csc_switch = true;
    d->batch_num = 2;
    d->src_w = 416;
    d->src_h = 416;
    memcpy(d->matrix, m, sizeof m);
    d->input_bias[0] = 16;
    d->input_bias[1] = 128;
    d->input_bias[2] = 128;
    for (int b = 0; b < 2; b++)
        for (int c = 0; c < 4; c++)
            d->batch[b].var_reci[c] = 0.003921568627451f;
    d->batch[1].crop = true;
    d->batch[1].crop_x = 10;
    d->batch[1].crop_y = 20;
    d->batch[1].crop_w = 200;
    d->batch[1].crop_h = 100;
    d->batch[1].padding = true;
    d->batch[1].pad_top = 1;
    d->batch[1].pad_bottom = 2;
    d->batch[1].pad_left = 3;
    d->batch[1].pad_right = 32;
    d->batch[1].scf = true;
    d->batch[1].scf_in_w = 200;
    d->batch[1].scf_in_h = 100;
    d->batch[1].scf_out_w = 416;
    d->batch[1].scf_out_h = 208;
    d->batch[1].mean[0] = -5;
    d->batch[1].mean[3] = 300;
    d->batch[1].min[0] = 123.0f;
    d->batch[1].min[2] = 0.1f;
}

static void test_dynamic_blob(void **state)
{
    dvpp_aipp_dyn d, back;
    dvpp_err e;
    uint8_t blob[64 + 96 * 2 + 8];

    (void)state;
    assert_int_equal(dvpp_aipp_dynamic_size(1), 160);
    assert_int_equal(dvpp_aipp_dynamic_size(2), 256);
    assert_int_equal(dvpp_aipp_dynamic_size(32), 64 + 96 * 32);
    assert_int_equal(dvpp_f32_to_f16(1.0f / 255.0f), 0x1C04);
    assert_int_equal(dvpp_f32_to_f16(123.0f), 0x57B0);

    fill_dyn(&d);
    assert_int_equal(dvpp_aipp_dynamic_build(&d, blob, 255, &e), DVPP_ENOSPC);
    memset(blob, 0xAA, sizeof blob);
    assert_int_equal(dvpp_aipp_dynamic_build(&d, blob, sizeof blob, &e), DVPP_OK);
    /* Header. */
    assert_int_equal(blob[0], 1);
    assert_int_equal(blob[1], 1);
    assert_int_equal(blob[2], 0);
    assert_int_equal(blob[3], 0);
    assert_int_equal(blob[4], 2);
    assert_int_equal(rd32(blob + 8), 416);
    assert_int_equal(rd32(blob + 12), 416);
    assert_int_equal((int16_t)rd16(blob + 16), 298);
    assert_int_equal((int16_t)rd16(blob + 18), 516);
    assert_int_equal((int16_t)rd16(blob + 26), -208);
    assert_int_equal((int16_t)rd16(blob + 32), 409);
    for (int i = 34; i < 40; i++)
        assert_int_equal(blob[i], 0);
    assert_int_equal(blob[40], 0);  /* output bias */
    assert_int_equal(blob[43], 16); /* input bias */
    assert_int_equal(blob[44], 128);
    assert_int_equal(blob[45], 128);
    for (int i = 46; i < 64; i++)
        assert_int_equal(blob[i], 0);
    /* Batch 0 at 64: var_reci fp16 at +72. */
    assert_int_equal(rd16(blob + 64 + 72), 0x1C04);
    assert_int_equal(rd16(blob + 64 + 78), 0x1C04);
    /* Batch 1 at 160. */
    const uint8_t *b1 = blob + 64 + 96;
    assert_int_equal(b1[0], 1);
    assert_int_equal(b1[1], 1);
    assert_int_equal(b1[2], 1);
    assert_int_equal(b1[3], 0);
    assert_int_equal(rd32(b1 + 8), 10);
    assert_int_equal(rd32(b1 + 12), 20);
    assert_int_equal(rd32(b1 + 16), 200);
    assert_int_equal(rd32(b1 + 20), 100);
    assert_int_equal(rd32(b1 + 32), 416);
    assert_int_equal(rd32(b1 + 36), 208);
    assert_int_equal(rd32(b1 + 40), 1);
    assert_int_equal(rd32(b1 + 44), 2);
    assert_int_equal(rd32(b1 + 48), 3);
    assert_int_equal(rd32(b1 + 52), 32);
    assert_int_equal((int16_t)rd16(b1 + 56), -5);
    assert_int_equal((int16_t)rd16(b1 + 62), 300);
    assert_int_equal(rd16(b1 + 64), 0x57B0);
    assert_int_equal(rd16(b1 + 68), 0x2E66); /* fp16(0.1) */
    assert_int_equal(rd16(b1 + 72), 0x1C04);
    for (int i = 80; i < 96; i++)
        assert_int_equal(b1[i], 0);
    assert_int_equal(blob[256], 0xAA); /* nothing past the size */

    assert_int_equal(dvpp_aipp_dynamic_parse(blob, 256, &back, &e), DVPP_OK);
    assert_int_equal(back.batch_num, 2);
    assert_int_equal(back.input_format, DVPP_AIPP_YUV420SP_U8);
    assert_true(back.csc_switch);
    assert_int_equal(back.src_w, 416);
    assert_memory_equal(back.matrix, d.matrix, sizeof d.matrix);
    assert_memory_equal(back.input_bias, d.input_bias, 3);
    assert_int_equal(back.batch[1].crop_w, 200);
    assert_int_equal(back.batch[1].scf_out_h, 208);
    assert_int_equal(back.batch[1].pad_right, 32);
    assert_int_equal(back.batch[1].mean[3], 300);
    assert_true(back.batch[1].min[0] == 123.0f);
    assert_true(back.batch[0].var_reci[0] == dvpp_f16_to_f32(0x1C04));
    /* Build again from the parsed values: identical bytes. */
    uint8_t blob2[256];
    assert_int_equal(dvpp_aipp_dynamic_build(&back, blob2, sizeof blob2, &e), DVPP_OK);
    assert_memory_equal(blob, blob2, 256);

    /* Truncated and corrupted blobs. */
    assert_int_equal(dvpp_aipp_dynamic_parse(blob, 255, &back, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "batch_num");
    assert_int_equal(dvpp_aipp_dynamic_parse(blob, 100, &back, &e), DVPP_EINVAL);
    blob[4] = 0;
    assert_int_equal(dvpp_aipp_dynamic_parse(blob, 256, &back, &e), DVPP_EINVAL);
    blob[4] = 2;
    blob[160 + 2] = 3;
    assert_int_equal(dvpp_aipp_dynamic_parse(blob, 256, &back, &e), DVPP_EUNSUPPORTED);
    blob[160 + 2] = 9;
    assert_int_equal(dvpp_aipp_dynamic_parse(blob, 256, &back, &e), DVPP_EINVAL);
    blob[160 + 2] = 1;
    blob[160 + 64] = 0x00;
    blob[160 + 65] = 0x7C; /* +inf */
    assert_int_equal(dvpp_aipp_dynamic_parse(blob, 256, &back, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "batch[1].min[0]");

    /* Out-of-range values are refused by build. */
    fill_dyn(&d);
    d.batch[1].pad_left = 33;
    assert_int_equal(dvpp_aipp_dynamic_build(&d, blob, sizeof blob, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "batch[1].pad_left");
    fill_dyn(&d);
    d.batch[1].crop_x = 300;
    assert_int_equal(dvpp_aipp_dynamic_build(&d, blob, sizeof blob, &e), DVPP_EINVAL);
    fill_dyn(&d);
    d.batch_num = 0;
    assert_int_equal(dvpp_aipp_dynamic_build(&d, blob, sizeof blob, &e), DVPP_EINVAL);
    fill_dyn(&d);
    d.batch[0].var_reci[1] = 70000.0f;
    assert_int_equal(dvpp_aipp_dynamic_build(&d, blob, sizeof blob, &e), DVPP_EINVAL);
}

static void test_dynamic_op(void **state)
{
    dvpp_aipp_dyn d;
    dvpp_aipp_op op;
    dvpp_err e;
    uint32_t w, h;

    (void)state;
    fill_dyn(&d);
    assert_int_equal(dvpp_aipp_dynamic_op(&d, 0, &op, &e), DVPP_OK);
    assert_int_equal(op.mode, DVPP_AIPP_STATIC);
    assert_int_equal(op.input_format, DVPP_AIPP_YUV420SP_U8);
    assert_true(op.csc_switch);
    assert_int_equal(op.matrix[0][1], 516);
    assert_int_equal(op.input_bias[0], 16);
    assert_false(op.crop);
    assert_true(op.var_reci_chn[0] == dvpp_f16_to_f32(0x1C04));
    dvpp_aipp_output_size(&op, &w, &h);
    assert_int_equal(w, 416);
    assert_int_equal(h, 416);

    assert_int_equal(dvpp_aipp_dynamic_op(&d, 1, &op, &e), DVPP_OK);
    assert_true(op.crop && op.resize && op.padding);
    assert_int_equal(op.load_start_pos_w, 10);
    assert_int_equal(op.crop_size_h, 100);
    assert_int_equal(op.resize_output_w, 416);
    assert_int_equal(op.right_padding_size, 32);
    assert_int_equal(op.mean_chn[0], -5);
    assert_true(op.min_chn[2] == dvpp_f16_to_f32(0x2E66));
    dvpp_aipp_output_size(&op, &w, &h);
    assert_int_equal(w, 416 + 3 + 32);
    assert_int_equal(h, 208 + 1 + 2);

    assert_int_equal(dvpp_aipp_dynamic_op(&d, 2, &op, &e), DVPP_EINVAL);
    d.batch[1].rotate = 1;
    assert_int_equal(dvpp_aipp_dynamic_op(&d, 1, &op, &e), DVPP_EUNSUPPORTED);
}

static void test_norm_spec(void **state)
{
    dvpp_norm_spec s;
    double v[3];
    dvpp_err e;

    (void)state;
    dvpp_norm_spec_init(&s);
    for (int i = 0; i < 3; i++) {
        assert_true(s.mean[i] == 0.0);
        assert_true(s.std[i] == 1.0);
    }
    assert_true(s.scale == 255.0);
    assert_false(s.bgr);
    assert_int_equal(s.layout, DVPP_LAYOUT_NCHW);
    assert_int_equal(s.dtype, DVPP_DTYPE_F32);

    assert_int_equal(dvpp_norm_spec_triple("0.485,0.456,0.406", v, "mean", &e), DVPP_OK);
    assert_true(v[0] == 0.485 && v[1] == 0.456 && v[2] == 0.406);
    assert_int_equal(dvpp_norm_spec_triple(" 0.5 ", v, "std", &e), DVPP_OK);
    assert_true(v[0] == 0.5 && v[1] == 0.5 && v[2] == 0.5);
    assert_int_equal(dvpp_norm_spec_triple("1, 2 ,3", v, "std", &e), DVPP_OK);
    assert_true(v[2] == 3.0);
    static const char *const bad[] = {"", "1,2", "1,2,3,4", "a", "1,,2", "1,2,3,", "nan",
                                      "1e999", "1;2;3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dvpp_err_clear(&e);
        assert_int_equal(dvpp_norm_spec_triple(bad[i], v, "mean", &e), DVPP_EINVAL);
        assert_string_equal(e.field, "mean");
    }
    assert_int_equal(dvpp_norm_spec_triple(NULL, v, "mean", &e), DVPP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_a),
        cmocka_unit_test(test_vector_b_defaults),
        cmocka_unit_test(test_vector_c_output_size),
        cmocka_unit_test(test_vector_d_dynamic),
        cmocka_unit_test(test_two_blocks_comments),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_truncated_prefixes),
        cmocka_unit_test(test_format_roundtrip),
        cmocka_unit_test(test_dynamic_blob),
        cmocka_unit_test(test_dynamic_op),
        cmocka_unit_test(test_norm_spec),
    };
    return cmocka_run_group_tests_name("aipp_cfg", tests, NULL, NULL);
}
