/* Tests of the planner's byte-neutral fusions (dvpp_pipeline_plan
 * window_resize / decode_window): which specs fuse (and DVPP_NO_FUSE=1
 * turning them off), and that a fused run writes every byte of its image
 * in the tensor, nothing outside it, and the unfused run's bytes: resize +
 * crop (every pil filter, cv2, tf), crop first, a client decode ROI,
 * image output, 4:2:0 and 4:4:4 JPEGs and raw input (no decode window).
 * Parity with PIL itself is tests/e2e/test_fuse.py. */
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

/* A 227x149 JPEG of a pattern at @sampling (quality 90). */
static dvpp_buf make_jpeg(dvpp_jpeg_sampling sampling)
{
    dvpp_jpeg_encode_opts o;
    dvpp_image img;
    dvpp_buf b;

    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, 227, 149, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    for (uint32_t y = 0; y < 149; y++)
        for (uint32_t x = 0; x < 227 * 3; x++)
            img.data[(size_t)y * img.width_stride + x] =
                (uint8_t)((x * 7 + y * 3 + (x * y) / 11) & 0xff);
    dvpp_jpeg_encode_opts_init(&o);
    o.quality = 90;
    o.sampling = sampling;
    dvpp_buf_init(&b);
    assert_int_equal(dvpp_jpeg_encode(&img, &o, &b, NULL), DVPP_OK);
    dvpp_image_free(&img);
    return b;
}

static void add_crop(dvpp_pipeline *p, uint32_t l, uint32_t t, uint32_t r, uint32_t b)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_CROP, .u.crop = {l, t, r, b}};

    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

static void add_resize(dvpp_pipeline *p, uint32_t w, uint32_t h, dvpp_parity par,
                       dvpp_interp in)
{
    dvpp_pipe_op op;

    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = DVPP_RESIZE_STRETCH;
    op.u.resize.w = w, op.u.resize.h = h;
    dvpp_resize_opts_init(&op.u.resize.opts);
    op.u.resize.opts.parity = par, op.u.resize.opts.interp = in;
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

static void tensor_pipeline(dvpp_pipeline *p, dvpp_dtype dt)
{
    dvpp_pipeline_init(p);
    p->post = DVPP_PIPE_POST_NORM;
    p->norm.dtype = dt;
    p->norm.layout = DVPP_LAYOUT_NCHW;
    p->output = DVPP_PIPE_OUT_TENSOR;
}

static void plan_of(const dvpp_pipeline *p, const dvpp_buf *in, dvpp_pipeline_plan *pl)
{
    dvpp_pipe_source src;
    dvpp_err e;

    if (dvpp_pipeline_probe(p, in->data, in->len, NULL, &src, &e) != DVPP_OK ||
        dvpp_pipeline_plan_make(p, &src, pl, &e) != DVPP_OK)
        fail_msg("plan: %s: %s", e.field, e.msg);
}

/* Image 1 of a 3-image tensor filled with @fill; the bytes of images 0
 * and 2 must keep it. */
static uint8_t *run_tensor(dvpp_worker *w, const dvpp_pipeline *p, const dvpp_buf *in,
                           uint8_t fill, size_t *n)
{
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_pipeline_plan pl;
    uint8_t *img;
    dvpp_tensor t;
    size_t each;
    dvpp_err e;

    assert_non_null(out);
    plan_of(p, in, &pl);
    assert_int_equal(dvpp_tensor_init(&t, pl.dtype, pl.layout, 3, pl.c, pl.h, pl.w, NULL),
                     DVPP_OK);
    t.data = malloc(t.bytes);
    assert_non_null(t.data);
    memset(t.data, fill, t.bytes);
    out->tensor = t, out->n = 1;
    if (dvpp_pipeline_run(w, p, in->data, in->len, out, &e) != DVPP_OK)
        fail_msg("run: %s: %s", e.field, e.msg);
    each = t.bytes / 3;
    for (size_t i = 0; i < each; i++)
        if (((uint8_t *)t.data)[i] != fill || ((uint8_t *)t.data)[2 * each + i] != fill)
            fail_msg("byte %zu outside image 1 written", i);
    img = malloc(each);
    assert_non_null(img);
    memcpy(img, (uint8_t *)t.data + each, each);
    free(t.data);
    free(out);
    *n = each;
    return img;
}

/* Fused (canary 0xAB) and DVPP_NO_FUSE=1 (canary 0x00) runs of @p give
 * the same bytes; the plan fuses as @window / @decode says. */
static void check_fused(dvpp_worker *w, const dvpp_pipeline *p, const dvpp_buf *in,
                        bool window, bool decode, const char *what)
{
    dvpp_pipeline_plan pl;
    size_t na, nb;
    uint8_t *a, *b;

    unsetenv("DVPP_NO_FUSE");
    plan_of(p, in, &pl);
    if (pl.window_resize[0] != window || pl.decode_window != decode)
        fail_msg("%s: window_resize[0] %d decode_window %d, want %d %d", what,
                 pl.window_resize[0], pl.decode_window, window, decode);
    a = run_tensor(w, p, in, 0xAB, &na);
    setenv("DVPP_NO_FUSE", "1", 1);
    plan_of(p, in, &pl);
    assert_false(pl.window_resize[0]);
    assert_false(pl.decode_window);
    b = run_tensor(w, p, in, 0x00, &nb);
    unsetenv("DVPP_NO_FUSE");
    assert_int_equal(na, nb);
    if (memcmp(a, b, na) != 0)
        fail_msg("%s: the fused run differs from the unfused one", what);
    free(a);
    free(b);
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

static void test_resize_crop_every_filter(void **state)
{
    static const struct {
        dvpp_parity par;
        dvpp_interp in;
    } k[] = {
        {DVPP_PARITY_PIL, DVPP_INTERP_NEAREST}, {DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR},
        {DVPP_PARITY_PIL, DVPP_INTERP_BICUBIC}, {DVPP_PARITY_PIL, DVPP_INTERP_BOX},
        {DVPP_PARITY_PIL, DVPP_INTERP_HAMMING}, {DVPP_PARITY_PIL, DVPP_INTERP_LANCZOS},
        {DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR}, {DVPP_PARITY_CV2, DVPP_INTERP_AREA},
        {DVPP_PARITY_TF, DVPP_INTERP_BILINEAR},
    };
    static const uint32_t boxes[][6] = { /* resize w, h; crop l, t, r, b */
        {101, 67, 10, 5, 80, 60}, {101, 67, 0, 0, 100, 66}, {400, 300, 399 - 223, 76, 399, 299},
        {57, 31, 0, 30, 0, 30},
    };
    dvpp_buf jpg[2] = {make_jpeg(DVPP_JPEG_420), make_jpeg(DVPP_JPEG_444)};
    dvpp_worker *w = worker_new();

    (void)state;
    for (int j = 0; j < 2; j++)
        for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
            for (size_t b = 0; b < sizeof(boxes) / sizeof(boxes[0]); b++) {
                dvpp_pipeline p;
                tensor_pipeline(&p, b % 2 ? DVPP_DTYPE_U8 : DVPP_DTYPE_F32);
                add_resize(&p, boxes[b][0], boxes[b][1], k[i].par, k[i].in);
                add_crop(&p, boxes[b][2], boxes[b][3], boxes[b][4], boxes[b][5]);
                check_fused(w, &p, &jpg[j], true, true, "resize + crop");
            }
    worker_del(w);
    dvpp_buf_fini(&jpg[0]);
    dvpp_buf_fini(&jpg[1]);
}

static void test_crop_first_and_client_roi(void **state)
{
    dvpp_buf jpg = make_jpeg(DVPP_JPEG_420);
    dvpp_worker *w = worker_new();
    dvpp_pipeline p;

    (void)state;
    /* RandomResizedCrop: crop then resize, the decode limited to the crop */
    tensor_pipeline(&p, DVPP_DTYPE_F32);
    add_crop(&p, 33, 17, 190, 148);
    add_resize(&p, 64, 64, DVPP_PARITY_PIL, DVPP_INTERP_BICUBIC);
    check_fused(w, &p, &jpg, false, true, "crop first");
    /* a crop alone */
    tensor_pipeline(&p, DVPP_DTYPE_U8);
    add_crop(&p, 1, 1, 225, 147);
    check_fused(w, &p, &jpg, false, true, "crop alone");
    /* the client's ROI: no decode window, the resize + crop still one */
    tensor_pipeline(&p, DVPP_DTYPE_U8);
    p.decode.has_roi = true;
    p.decode.roi = (dvpp_jpeg_roi){11, 9, 150, 100};
    add_resize(&p, 75, 50, DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR);
    add_crop(&p, 5, 5, 69, 44);
    check_fused(w, &p, &jpg, true, false, "client roi");
    /* shrink-on-load: no decode window */
    tensor_pipeline(&p, DVPP_DTYPE_U8);
    p.decode.shrink_on_load = true;
    add_resize(&p, 50, 30, DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR);
    add_crop(&p, 5, 5, 44, 24);
    check_fused(w, &p, &jpg, true, false, "shrink on load");
    /* a resize that is not followed by a crop, a letterbox: not fused */
    tensor_pipeline(&p, DVPP_DTYPE_U8);
    add_resize(&p, 50, 30, DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR);
    check_fused(w, &p, &jpg, false, false, "resize alone");
    tensor_pipeline(&p, DVPP_DTYPE_U8);
    add_resize(&p, 60, 60, DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR);
    p.ops[0].u.resize.mode = DVPP_RESIZE_LETTERBOX;
    add_crop(&p, 0, 0, 59, 29);
    check_fused(w, &p, &jpg, false, false, "letterbox + crop");
    worker_del(w);
    dvpp_buf_fini(&jpg);
}

/* Raw RGB input: the windowed resize without a decode window; NV12 (two
 * planes) is not fused. */
static void test_raw_input(void **state)
{
    dvpp_image img;
    dvpp_worker *w = worker_new();
    dvpp_pipeline p;

    (void)state;
    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, 64, 48, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    for (size_t i = 0; i < img.size; i++)
        img.data[i] = (uint8_t)(i * 31 + i / 7);
    tensor_pipeline(&p, DVPP_DTYPE_U8);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 48, 0, 0};
    add_resize(&p, 29, 17, DVPP_PARITY_PIL, DVPP_INTERP_LANCZOS);
    add_crop(&p, 3, 2, 28, 16);
    check_fused(w, &p, &(dvpp_buf){img.data, img.size, img.size}, true, false, "raw rgb");
    dvpp_image_free(&img);
    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_NV12, 64, 48, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    memset(img.data, 90, img.size);
    p.raw.format = DVPP_PIXEL_NV12;
    check_fused(w, &p, &(dvpp_buf){img.data, img.size, img.size}, false, false, "raw nv12");
    dvpp_image_free(&img);
    worker_del(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_crop_every_filter),
        cmocka_unit_test(test_crop_first_and_client_roi),
        cmocka_unit_test(test_raw_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
