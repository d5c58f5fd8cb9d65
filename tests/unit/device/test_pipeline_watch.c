/* Tests of dvpp_pipe_watch, the hooks traces and dumps are made from: a
 * watched run writes the very tensor an unwatched one does (the fusions a
 * watch's image hook turns off change no byte, the fused last resize is
 * also run alone for the hook only), its spans nest inside "run" in the
 * order the stages ran, and the image after each op is the output of the
 * pipeline cut after that op. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device/dvpp_pipeline.h"
#include "dvpp_jpeg.h"
#include "dvpp_mem.h"

#define MAX_SEEN 16

/* What a watch saw: spans, and the images after each op (tight copies). */
typedef struct seen {
    struct {
        char name[16];
        int index;
        uint64_t t0, t1;
    } span[MAX_SEEN];
    int nspan;
    struct {
        char name[16];
        int index;
        uint32_t w, h;
        size_t row_bytes;
        uint8_t *pixels; /* rows of plane 0, tight */
    } image[MAX_SEEN];
    int nimage;
} seen;

static void on_span(void *ctx, const char *name, int index, uint32_t item, uint64_t t0,
                    uint64_t t1)
{
    seen *s = ctx;

    (void)item;
    assert_true(s->nspan < MAX_SEEN);
    strncpy(s->span[s->nspan].name, name, sizeof(s->span[0].name) - 1);
    s->span[s->nspan].index = index;
    s->span[s->nspan].t0 = t0, s->span[s->nspan].t1 = t1;
    s->nspan++;
}

static void on_image(void *ctx, const char *name, int index, uint32_t item,
                     const dvpp_image *img)
{
    seen *s = ctx;
    dvpp_planes pl;

    (void)item;
    assert_true(s->nimage < MAX_SEEN);
    assert_int_equal(dvpp_image_planes(img, &pl, NULL), DVPP_OK);
    strncpy(s->image[s->nimage].name, name, sizeof(s->image[0].name) - 1);
    s->image[s->nimage].index = index;
    s->image[s->nimage].w = img->width, s->image[s->nimage].h = img->height;
    s->image[s->nimage].row_bytes = pl.p[0].row_bytes;
    s->image[s->nimage].pixels = malloc(pl.p[0].row_bytes * pl.p[0].rows);
    assert_non_null(s->image[s->nimage].pixels);
    for (uint32_t y = 0; y < pl.p[0].rows; y++)
        memcpy(s->image[s->nimage].pixels + y * pl.p[0].row_bytes,
               dvpp_image_row(img, &pl, 0, y), pl.p[0].row_bytes);
    s->nimage++;
}

static void seen_free(seen *s)
{
    for (int i = 0; i < s->nimage; i++)
        free(s->image[i].pixels);
}

/* A 203x131 RGB JPEG (4:2:0, quality 92) of a pattern. */
static dvpp_buf pattern_jpeg(void)
{
    dvpp_jpeg_encode_opts o;
    dvpp_image img;
    dvpp_buf b;

    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, 203, 131, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    for (uint32_t y = 0; y < img.height; y++)
        for (uint32_t x = 0; x < img.width * 3; x++)
            img.data[(size_t)y * img.width_stride + x] = (uint8_t)((x * 5 + y * 9 + x * y / 7));
    dvpp_jpeg_encode_opts_init(&o);
    o.quality = 92;
    dvpp_buf_init(&b);
    assert_int_equal(dvpp_jpeg_encode(&img, &o, &b, NULL), DVPP_OK);
    dvpp_image_free(&img);
    return b;
}

static void push_op(dvpp_pipeline *p, const dvpp_pipe_op *op)
{
    assert_int_equal(dvpp_pipeline_add_op(p, op, NULL), DVPP_OK);
}

static dvpp_pipe_op stretch(uint32_t w, uint32_t h, dvpp_parity par)
{
    dvpp_pipe_op op;

    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = DVPP_RESIZE_STRETCH;
    op.u.resize.w = w, op.u.resize.h = h;
    dvpp_resize_opts_init(&op.u.resize.opts);
    op.u.resize.opts.parity = par;
    op.u.resize.opts.interp = DVPP_INTERP_BILINEAR;
    return op;
}

static dvpp_pipe_op crop(uint32_t l, uint32_t t, uint32_t r, uint32_t b)
{
    return (dvpp_pipe_op){.kind = DVPP_PIPE_OP_CROP, .u.crop = {l, t, r, b}};
}

/* The tensor @p makes of @in (one image, normalised float32 NCHW). */
static uint8_t *run_tensor(dvpp_worker *w, const dvpp_pipeline *p, const dvpp_buf *in,
                           size_t *bytes)
{
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_pipeline_plan pl;
    dvpp_pipe_source src;
    uint8_t *data;
    dvpp_err e;

    assert_non_null(out);
    assert_int_equal(dvpp_pipeline_probe(p, in->data, in->len, NULL, &src, &e), DVPP_OK);
    assert_int_equal(dvpp_pipeline_plan_make(p, &src, &pl, &e), DVPP_OK);
    assert_int_equal(dvpp_tensor_init(&out->tensor, pl.dtype, pl.layout, 1, pl.c, pl.h,
                                      pl.w, NULL),
                     DVPP_OK);
    data = malloc(out->tensor.bytes);
    assert_non_null(data);
    memset(data, 0x5A, out->tensor.bytes);
    out->tensor.data = data;
    if (dvpp_pipeline_run(w, p, in->data, in->len, out, &e) != DVPP_OK)
        fail_msg("run: %s: %s", e.field, e.msg);
    *bytes = out->tensor.bytes;
    free(out);
    return data;
}

/* The unencoded image @p's first @nops ops make of @in (tight rows). */
static uint8_t *run_cut(dvpp_worker *w, const dvpp_pipeline *p, uint32_t nops,
                        const dvpp_buf *in, uint32_t *width, uint32_t *height)
{
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_pipeline cut = *p;
    dvpp_pipeline_plan pl;
    dvpp_pipe_source src;
    uint8_t *data;
    dvpp_err e;

    assert_non_null(out);
    cut.nops = nops;
    cut.post = DVPP_PIPE_POST_NONE;
    cut.output = DVPP_PIPE_OUT_IMAGE;
    cut.watch = NULL;
    assert_int_equal(dvpp_pipeline_probe(&cut, in->data, in->len, NULL, &src, &e), DVPP_OK);
    assert_int_equal(dvpp_pipeline_plan_make(&cut, &src, &pl, &e), DVPP_OK);
    data = malloc(pl.out_bytes);
    assert_non_null(data);
    out->image.data = data, out->image.size = pl.out_bytes;
    if (dvpp_pipeline_run(w, &cut, in->data, in->len, out, &e) != DVPP_OK)
        fail_msg("cut run: %s: %s", e.field, e.msg);
    *width = out->image.width, *height = out->image.height;
    free(out);
    return data;
}

/* @p watched (spans and images) and unwatched: the same tensor; spans in
 * "run"; each op's image == the run cut after it. */
static void check_watched(const dvpp_pipeline *base, const char *what)
{
    static const char *const post_names[] = {"normalise"};
    dvpp_buf in = pattern_jpeg();
    dvpp_worker *w = malloc(sizeof(*w));
    seen *s = calloc(1, sizeof(*s));
    dvpp_pipe_watch watch = {.ctx = s, .span = on_span, .image = on_image};
    dvpp_pipeline p = *base;
    size_t na, nb;
    uint8_t *a, *b;
    int ops_seen = 0;

    assert_non_null(w);
    assert_non_null(s);
    dvpp_worker_init(w, NULL);
    a = run_tensor(w, &p, &in, &na);
    p.watch = &watch;
    b = run_tensor(w, &p, &in, &nb);
    assert_int_equal(na, nb);
    if (memcmp(a, b, na))
        fail_msg("%s: the watched tensor differs", what);

    /* spans: plan, decode, the ops in order, normalise, then run around all */
    assert_true(s->nspan >= 4);
    assert_string_equal(s->span[s->nspan - 1].name, "run");
    assert_string_equal(s->span[0].name, "plan");
    assert_string_equal(s->span[1].name, "decode");
    assert_string_equal(s->span[s->nspan - 2].name, post_names[0]);
    for (int i = 0; i < s->nspan - 1; i++) {
        assert_true(s->span[i].t0 <= s->span[i].t1);
        assert_true(s->span[i].t0 >= s->span[s->nspan - 1].t0);
        assert_true(s->span[i].t1 <= s->span[s->nspan - 1].t1);
        if (i > 0)
            assert_true(s->span[i].t0 >= s->span[i - 1].t1);
        if (i >= 2 && i < s->nspan - 2) {
            assert_int_equal(s->span[i].index, ops_seen);
            assert_string_equal(s->span[i].name,
                                dvpp_pipe_op_kind_name(p.ops[ops_seen].kind));
            ops_seen++;
        }
    }
    assert_int_equal(ops_seen, (int)p.nops);

    /* images: decoded, one per op, post_input */
    assert_int_equal(s->nimage, (int)p.nops + 2);
    assert_string_equal(s->image[0].name, "decoded");
    assert_string_equal(s->image[s->nimage - 1].name, "post_input");
    for (uint32_t i = 0; i < p.nops; i++) {
        uint32_t cw, ch;
        uint8_t *ref = run_cut(w, &p, i + 1, &in, &cw, &ch);
        assert_int_equal(s->image[i + 1].index, (int)i);
        assert_int_equal(s->image[i + 1].w, cw);
        assert_int_equal(s->image[i + 1].h, ch);
        if (memcmp(ref, s->image[i + 1].pixels, s->image[i + 1].row_bytes * ch))
            fail_msg("%s: the image after op %u differs from the cut run's", what, i);
        free(ref);
    }
    free(a);
    free(b);
    seen_free(s);
    free(s);
    dvpp_worker_fini(w);
    free(w);
    dvpp_buf_fini(&in);
}

static void tensor_base(dvpp_pipeline *p)
{
    dvpp_pipeline_init(p);
    p->post = DVPP_PIPE_POST_NORM;
    p->norm.dtype = DVPP_DTYPE_F32;
    p->norm.layout = DVPP_LAYOUT_NCHW;
    p->output = DVPP_PIPE_OUT_TENSOR;
}

/* The ImageNet eval chain: resize + centre crop, planned as one windowed
 * resize and a decode window without a watch. */
static void test_window_fused_chain(void **state)
{
    dvpp_pipeline p;
    dvpp_pipe_op r = stretch(150, 97, DVPP_PARITY_PIL), c = crop(11, 4, 138, 91);

    (void)state;
    tensor_base(&p);
    push_op(&p, &r);
    push_op(&p, &c);
    check_watched(&p, "resize + crop");
}

/* A crop (a view of the decoded image) and a last resize the
 * normalisation does itself. */
static void test_resize_norm_fused_chain(void **state)
{
    dvpp_pipeline p;
    dvpp_pipe_op c = crop(20, 10, 180, 120), r = stretch(64, 48, DVPP_PARITY_CV2);

    (void)state;
    tensor_base(&p);
    push_op(&p, &c);
    push_op(&p, &r);
    check_watched(&p, "crop + resize + normalise");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_fused_chain),
        cmocka_unit_test(test_resize_norm_fused_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
