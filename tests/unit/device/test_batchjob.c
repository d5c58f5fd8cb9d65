/* Unit tests for device/dvpp_batchjob: 64 mixed JPEG/PNG inputs -> stretch
 * 32x32 -> ImageNet f32 NCHW give byte-identical tensors on 1 and 8
 * channels, equal to 64 single dvpp_pipeline_run calls; a corrupt item is
 * reported at its index with a zero slice (default mode); strict mode stops
 * at it; cancellation (before and mid-way); progress counts; allocation
 * failures on start leak nothing; shapes that depend on the input are
 * refused by dvpp_batchjob_tensor.
 *
 * Inputs are synthesised here with dvpp_jpeg_encode / dvpp_png_encode. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device/dvpp_batchjob.h"
#include "dvpp_jpeg.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"
#include "test_alloc.h"

#define NITEMS 64
#define NSRC 4
#define BAD_INDEX 13

static const double k_mean[3] = {0.485, 0.456, 0.406};
static const double k_std[3] = {0.229, 0.224, 0.225};
static const uint32_t k_sizes[NSRC][2] = {{227, 149}, {64, 48}, {33, 71}, {160, 120}};

/* --- fixtures -------------------------------------------------------------------- */

static void fill_pattern(dvpp_image *img, unsigned seed)
{
    dvpp_planes pl;

    assert_int_equal(dvpp_image_planes(img, &pl, NULL), DVPP_OK);
    for (int k = 0; k < pl.count; k++)
        for (uint32_t y = 0; y < pl.p[k].rows; y++) {
            uint8_t *row = dvpp_image_row(img, &pl, k, y);
            for (uint32_t x = 0; x < pl.p[k].row_bytes; x++)
                row[x] = (uint8_t)((x * (7 + seed) + y * 3 + (x * y) / 11 +
                                    k * 40 + seed * 17) & 0xff);
        }
}

/* Sources: NSRC images, each as JPEG (even items) and PNG (odd items). */
typedef struct corpus {
    dvpp_buf jpeg[NSRC], png[NSRC];
    dvpp_batchjob_input in[NITEMS];
} corpus;

static corpus *corpus_new(void)
{
    corpus *c = calloc(1, sizeof(*c));

    assert_non_null(c);
    for (int s = 0; s < NSRC; s++) {
        dvpp_image img;
        dvpp_jpeg_encode_opts jo;
        dvpp_png_encode_opts po = {-1};

        assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, k_sizes[s][0],
                                         k_sizes[s][1], 1, 1, NULL), DVPP_OK);
        assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
        fill_pattern(&img, (unsigned)s);
        dvpp_jpeg_encode_opts_init(&jo);
        jo.quality = 90;
        dvpp_buf_init(&c->jpeg[s]);
        dvpp_buf_init(&c->png[s]);
        assert_int_equal(dvpp_jpeg_encode(&img, &jo, &c->jpeg[s], NULL), DVPP_OK);
        assert_int_equal(dvpp_png_encode(&img, &po, &c->png[s], NULL), DVPP_OK);
        dvpp_image_free(&img);
    }
    for (int i = 0; i < NITEMS; i++) {
        const dvpp_buf *b = (i & 1) ? &c->png[(i / 2) % NSRC] : &c->jpeg[(i / 2) % NSRC];
        c->in[i].data = b->data;
        c->in[i].len = b->len;
    }
    return c;
}

static void corpus_free(corpus *c)
{
    for (int s = 0; s < NSRC; s++) {
        dvpp_buf_fini(&c->jpeg[s]);
        dvpp_buf_fini(&c->png[s]);
    }
    free(c);
}

/* Item BAD_INDEX becomes a truncated JPEG (half of jpeg[0]). */
static void corrupt(corpus *c)
{
    c->in[BAD_INDEX].data = c->jpeg[0].data;
    c->in[BAD_INDEX].len = c->jpeg[0].len / 2;
}

static void add_resize(dvpp_pipeline *p, dvpp_resize_mode mode, uint32_t w, uint32_t h)
{
    dvpp_pipe_op op;

    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = mode;
    op.u.resize.w = w, op.u.resize.h = h;
    dvpp_resize_opts_init(&op.u.resize.opts);
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
}

/* AUTO input -> resize @mode 32x32 -> ImageNet f32 NCHW. */
static void imagenet_pipeline(dvpp_pipeline *p, dvpp_resize_mode mode)
{
    dvpp_pipeline_init(p);
    p->input = DVPP_PIPE_IN_AUTO;
    add_resize(p, mode, 32, 32);
    p->post = DVPP_PIPE_POST_NORM;
    memcpy(p->norm.mean, k_mean, sizeof(k_mean));
    memcpy(p->norm.std, k_std, sizeof(k_std));
    p->output = DVPP_PIPE_OUT_TENSOR;
}

static void batch_tensor(const dvpp_pipeline *p, uint32_t n, dvpp_tensor *t)
{
    assert_int_equal(dvpp_batchjob_tensor(p, n, t, NULL), DVPP_OK);
    assert_null(t->data);
    t->data = malloc(t->bytes);
    assert_non_null(t->data);
    memset(t->data, 0xA5, t->bytes); /* poison: every slice must be written */
}

/* n single dvpp_pipeline_run calls into the slices of @t (a slice whose run
 * fails is zeroed, as the default mode does). */
static void reference(const dvpp_pipeline *p, const dvpp_batchjob_input *in,
                      uint32_t n, dvpp_tensor *t)
{
    dvpp_worker *w = malloc(sizeof(*w));
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    size_t slice = t->bytes / n;

    assert_non_null(w);
    assert_non_null(out);
    dvpp_worker_init(w, NULL);
    for (uint32_t i = 0; i < n; i++) {
        out->tensor = *t;
        out->n = i;
        if (dvpp_pipeline_run(w, p, in[i].data, in[i].len, out, NULL) != DVPP_OK)
            memset((uint8_t *)t->data + (size_t)i * slice, 0, slice);
    }
    dvpp_worker_fini(w);
    free(w);
    free(out);
}

static bool all_zero(const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i])
            return false;
    return true;
}

static dvpp_device *pipe_device(uint32_t channels)
{
    dvpp_device *d = NULL;

    assert_int_equal(dvpp_pipe_device_new(NULL, channels, NULL, &d, NULL), DVPP_OK);
    assert_non_null(d);
    assert_true(dvpp_pipe_device_is(d));
    return d;
}

/* A plain job holding a channel until released (to queue items behind it). */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool entered, open;
} gate;

static void gate_init(gate *g)
{
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->entered = g->open = false;
}

static dvpp_status gate_fn(dvpp_task *task, void *ctx, void *state, dvpp_err *err)
{
    gate *g = ctx;

    (void)task, (void)state, (void)err;
    pthread_mutex_lock(&g->mu);
    g->entered = true;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    return DVPP_OK;
}

static void gate_wait_entered(gate *g)
{
    pthread_mutex_lock(&g->mu);
    while (!g->entered)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void gate_open(gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void gate_fini(gate *g)
{
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
}

/* Block the only channel of @d with @g on a new stream. */
static dvpp_stream *gate_close(dvpp_device *d, gate *g)
{
    dvpp_stream *s = NULL;
    dvpp_job j = {DVPP_BATCHJOB_ENGINE, gate_fn, NULL, g, 1, 1, 0};

    gate_init(g);
    assert_int_equal(dvpp_stream_new(d, 0, &s, NULL), DVPP_OK);
    assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    gate_wait_entered(g);
    return s;
}

/* Run a whole job; returns its wait status. */
static dvpp_status run_job(dvpp_device *d, const dvpp_pipeline *p,
                           const dvpp_batchjob_input *in, size_t n, dvpp_tensor *t,
                           bool strict, dvpp_batch_progress *prog, dvpp_err *e)
{
    dvpp_batchjob *j = NULL;
    dvpp_status st;

    assert_int_equal(dvpp_batchjob_start(d, p, in, n, t, strict, &j, e), DVPP_OK);
    assert_non_null(j);
    assert_true(dvpp_batchjob_id(j) != 0);
    st = dvpp_batchjob_wait(j, e);
    if (prog)
        dvpp_batchjob_progress(j, prog);
    dvpp_batchjob_free(j);
    return st;
}

/* --- tests --------------------------------------------------------------------------- */

/* Admission counts the intermediates a run needs (the plan's work_bytes):
 * on a device with a 4 MiB byte budget a 64x48 input whose 600-px border
 * makes a 1264x1248 RGB intermediate (4.7 MB) is larger than the whole
 * budget, as a single job and as a batch; a 100-px border fits. */
static void test_admission_counts_intermediates(void **state)
{
    dvpp_device_config cfg;
    dvpp_device *d = NULL;
    dvpp_stream *s = NULL;
    dvpp_image img;
    dvpp_batchjob_input in[2];
    dvpp_pipeline p;
    dvpp_pipe_op op;
    dvpp_pipejob pj;
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    dvpp_batchjob *j = NULL;
    dvpp_tensor t;
    dvpp_err e;

    (void)state;
    assert_non_null(out);
    dvpp_device_config_default(&cfg);
    cfg.byte_budget = 4u << 20;
    assert_int_equal(dvpp_pipe_device_new(&cfg, 1, NULL, &d, NULL), DVPP_OK);
    assert_int_equal(dvpp_stream_new(d, 0, &s, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, 64, 48, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    fill_pattern(&img, 3);
    in[0] = in[1] = (dvpp_batchjob_input){img.data, img.size};
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 48, 0, 0};
    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_BORDER;
    p.ops[1] = p.ops[0]; /* border, then the resize */
    p.nops = 2;
    for (int k = 0; k < 2; k++) {
        uint32_t m = k ? 100 : 600;
        dvpp_status want = k ? DVPP_OK : DVPP_ELIMIT;
        op.u.border.top = op.u.border.bottom = op.u.border.left = op.u.border.right = m;
        p.ops[0] = op;
        batch_tensor(&p, 1, &t);
        memset(out, 0, sizeof(*out));
        out->tensor = t;
        pj = (dvpp_pipejob){.pipe = &p, .input = img.data, .len = img.size, .out = out,
                            .pixels = 64 * 48, .bytes = img.size};
        assert_int_equal(dvpp_pipejob_submit(s, &pj, NULL, &e), want);
        if (want == DVPP_OK)
            assert_int_equal(dvpp_stream_synchronize(s, &e), DVPP_OK);
        free(t.data);
        batch_tensor(&p, 2, &t);
        assert_int_equal(dvpp_batchjob_start(d, &p, in, 2, &t, false, &j, &e), want);
        if (want == DVPP_OK) {
            assert_int_equal(dvpp_batchjob_wait(j, &e), DVPP_OK);
            dvpp_batchjob_free(j);
        }
        free(t.data);
    }
    dvpp_image_free(&img);
    dvpp_stream_free(s);
    dvpp_pipe_device_free(d);
    free(out);
}

/* Batch slices: every byte of each item's slice written. An AIPP crop
 * with crop_size 0 (the rest of the image) over raw 64x48 items runs twice,
 * into tensors poisoned with two different bytes: the results agree (the
 * slice was sized to the source and filled with the crop). */
static void test_slices_every_byte(void **state)
{
    enum { N = 3 };
    dvpp_device *d = pipe_device(2);
    dvpp_batchjob_input in[N];
    dvpp_image img[N];
    dvpp_pipeline p;
    dvpp_tensor t[2];
    dvpp_err e;

    (void)state;
    for (int i = 0; i < N; i++) {
        assert_int_equal(dvpp_image_init(&img[i], DVPP_PIXEL_RGB, 64, 48, 1, 1, NULL),
                         DVPP_OK);
        assert_int_equal(dvpp_image_alloc(&img[i], NULL), DVPP_OK);
        fill_pattern(&img[i], (unsigned)i + 1);
        in[i] = (dvpp_batchjob_input){img[i].data, img[i].size};
    }
    dvpp_pipeline_init(&p);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){DVPP_PIXEL_RGB, 64, 48, 0, 0};
    p.post = DVPP_PIPE_POST_AIPP;
    memset(&p.aipp, 0, sizeof(p.aipp));
    p.aipp.mode = DVPP_AIPP_STATIC;
    p.aipp.input_format = DVPP_AIPP_RGB888_U8;
    p.aipp.src_image_size_w = 64, p.aipp.src_image_size_h = 48;
    p.aipp.crop = true;
    p.aipp.load_start_pos_w = 8, p.aipp.load_start_pos_h = 4;
    for (int k = 0; k < 4; k++)
        p.aipp.var_reci_chn[k] = 1.0f;
    p.aipp_layout = DVPP_LAYOUT_NHWC;
    p.aipp_dtype = DVPP_DTYPE_F32;
    p.output = DVPP_PIPE_OUT_TENSOR;
    for (int k = 0; k < 2; k++) {
        batch_tensor(&p, N, &t[k]); /* poisoned 0xA5 */
        if (k)
            memset(t[k].data, 0x5A, t[k].bytes);
        assert_int_equal(run_job(d, &p, in, N, &t[k], true, NULL, &e), DVPP_OK);
    }
    for (size_t i = 0; i < t[0].bytes; i++)
        if (((uint8_t *)t[0].data)[i] != ((uint8_t *)t[1].data)[i])
            fail_msg("byte %zu of %zu (slice %zu) unwritten", i, t[0].bytes,
                     i / (t[0].bytes / N));
    assert_int_equal(t[0].w, 56);
    assert_int_equal(t[0].h, 44);
    for (int k = 0; k < 2; k++)
        free(t[k].data);
    for (int i = 0; i < N; i++)
        dvpp_image_free(&img[i]);
    dvpp_pipe_device_free(d);
}

static void test_tensor_shape(void **state)
{
    dvpp_pipeline p;
    dvpp_tensor t;
    dvpp_err e;

    (void)state;
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    assert_int_equal(dvpp_batchjob_tensor(&p, NITEMS, &t, NULL), DVPP_OK);
    assert_int_equal(t.n, NITEMS);
    assert_int_equal(t.c, 3);
    assert_int_equal(t.h, 32);
    assert_int_equal(t.w, 32);
    assert_int_equal(t.dtype, DVPP_DTYPE_F32);
    assert_int_equal(t.layout, DVPP_LAYOUT_NCHW);
    assert_int_equal(t.bytes, (size_t)NITEMS * 3 * 32 * 32 * 4);

    imagenet_pipeline(&p, DVPP_RESIZE_LETTERBOX);
    assert_int_equal(dvpp_batchjob_tensor(&p, 2, &t, NULL), DVPP_OK);
    imagenet_pipeline(&p, DVPP_RESIZE_FILL);
    assert_int_equal(dvpp_batchjob_tensor(&p, 2, &t, NULL), DVPP_OK);

    imagenet_pipeline(&p, DVPP_RESIZE_FIT);
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_tensor(&p, NITEMS, &t, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "ops[0].resize.mode");
    assert_non_null(strstr(e.msg, "fit"));

    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_tensor(&p, 0, &t, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "n");

    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    p.nops = 0; /* no op fixes the size */
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_tensor(&p, 4, &t, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "ops");
}

static void test_parallel_equals_serial(void **state)
{
    corpus *c = corpus_new();
    dvpp_pipeline p;
    dvpp_tensor ref, t1, t8;
    dvpp_batch_progress prog;
    dvpp_device *d1 = pipe_device(1), *d8 = pipe_device(8);

    (void)state;
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    batch_tensor(&p, NITEMS, &ref);
    batch_tensor(&p, NITEMS, &t1);
    batch_tensor(&p, NITEMS, &t8);
    reference(&p, c->in, NITEMS, &ref);

    assert_int_equal(run_job(d1, &p, c->in, NITEMS, &t1, false, &prog, NULL), DVPP_OK);
    assert_int_equal(prog.done, NITEMS);
    assert_int_equal(prog.failed, 0);
    assert_int_equal(prog.total, NITEMS);
    assert_true(prog.finished);
    assert_int_equal(run_job(d8, &p, c->in, NITEMS, &t8, true, &prog, NULL), DVPP_OK);
    assert_int_equal(prog.done, NITEMS);

    assert_memory_equal(t1.data, ref.data, ref.bytes);
    assert_memory_equal(t8.data, ref.data, ref.bytes);
    /* Again on the warm workers (kept buffers): same bytes. */
    memset(t8.data, 0x5A, t8.bytes);
    assert_int_equal(run_job(d8, &p, c->in, NITEMS, &t8, false, NULL, NULL), DVPP_OK);
    assert_memory_equal(t8.data, ref.data, ref.bytes);

    dvpp_pipe_device_free(d1);
    dvpp_pipe_device_free(d8);
    free(ref.data), free(t1.data), free(t8.data);
    corpus_free(c);
}

/* Per-item pipelines (opts.item_pipes): item i runs its own crop, resize
 * and flip into the batch's tensor, equal to a single run of that
 * pipeline; an item pipeline making another shape is refused before
 * anything runs, naming item_pipes[i]. */
static void item_crop_flip(dvpp_pipeline *p, uint32_t i)
{
    dvpp_pipe_op crop = {.kind = DVPP_PIPE_OP_CROP};
    dvpp_pipe_op flip = {.kind = DVPP_PIPE_OP_FLIP};

    dvpp_pipeline_init(p);
    p->input = DVPP_PIPE_IN_AUTO;
    crop.u.crop = (dvpp_roi){i % 5, i % 3, 20 + i % 7, 30 + i % 11};
    assert_int_equal(dvpp_pipeline_add_op(p, &crop, NULL), DVPP_OK);
    add_resize(p, DVPP_RESIZE_STRETCH, 32, 32);
    flip.u.flip = (dvpp_flip)(1 + i % 3);
    if (i % 4)
        assert_int_equal(dvpp_pipeline_add_op(p, &flip, NULL), DVPP_OK);
    p->post = DVPP_PIPE_POST_NORM;
    memcpy(p->norm.mean, k_mean, sizeof(k_mean));
    memcpy(p->norm.std, k_std, sizeof(k_std));
    p->output = DVPP_PIPE_OUT_TENSOR;
}

static void test_item_pipelines(void **state)
{
    enum { N = 8 };
    corpus *c = corpus_new();
    dvpp_pipeline p, items[N];
    dvpp_tensor t, ref;
    dvpp_device *d = pipe_device(2);
    dvpp_batchjob_opts o = {.item_pipes = items};
    dvpp_batchjob *j = NULL;
    dvpp_err e;

    (void)state;
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    batch_tensor(&p, N, &t);
    batch_tensor(&p, N, &ref);
    for (uint32_t i = 0; i < N; i++) {
        dvpp_tensor one = ref;
        item_crop_flip(&items[i], i);
        one.data = (uint8_t *)ref.data + (size_t)i * (ref.bytes / N);
        one.n = 1, one.shape[0] = 1, one.bytes = ref.bytes / N;
        reference(&items[i], &c->in[i], 1, &one);
    }
    assert_int_equal(dvpp_batchjob_start_opts(d, &p, c->in, N, &t, &o, &j, &e), DVPP_OK);
    assert_int_equal(dvpp_batchjob_wait(j, &e), DVPP_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(dvpp_batchjob_item_status(j, i, NULL), DVPP_OK);
    dvpp_batchjob_free(j);
    assert_memory_equal(t.data, ref.data, ref.bytes);

    /* item 5 makes 32x31: refused at the start, nothing run */
    items[5].ops[1].u.resize.h = 31;
    memset(t.data, 0xA5, t.bytes);
    j = NULL;
    assert_int_equal(dvpp_batchjob_start_opts(d, &p, c->in, N, &t, &o, &j, &e), DVPP_EINVAL);
    assert_null(j);
    assert_string_equal(e.field, "item_pipes[5]");
    for (size_t k = 0; k < t.bytes; k++)
        assert_int_equal(((uint8_t *)t.data)[k], 0xA5);
    /* and one that does not validate, with its own field in the message */
    items[5].ops[1].u.resize.h = 32;
    items[3].ops[0].u.crop.right = 0;
    assert_int_equal(dvpp_batchjob_start_opts(d, &p, c->in, N, &t, &o, &j, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "item_pipes[3]");
    assert_non_null(strstr(e.msg, "ops[0].crop"));

    dvpp_pipe_device_free(d);
    free(t.data), free(ref.data);
    corpus_free(c);
}

static void test_corrupt_item_default(void **state)
{
    corpus *c = corpus_new();
    dvpp_pipeline p;
    dvpp_tensor ref, t;
    dvpp_batchjob *j = NULL;
    dvpp_batch_progress prog;
    dvpp_device *d = pipe_device(8);
    dvpp_err e;
    size_t slice;

    (void)state;
    corrupt(c);
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    batch_tensor(&p, NITEMS, &ref);
    batch_tensor(&p, NITEMS, &t);
    reference(&p, c->in, NITEMS, &ref);
    slice = t.bytes / NITEMS;

    assert_int_equal(dvpp_batchjob_start(d, &p, c->in, NITEMS, &t, false, &j, NULL),
                     DVPP_OK);
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_wait(j, &e), DVPP_OK);
    dvpp_batchjob_progress(j, &prog);
    assert_int_equal(prog.done, NITEMS - 1);
    assert_int_equal(prog.failed, 1);
    assert_int_equal(prog.total, NITEMS);
    assert_int_equal(prog.first_failed, BAD_INDEX);
    for (size_t i = 0; i < NITEMS; i++) {
        dvpp_err_clear(&e);
        if (i == BAD_INDEX) {
            assert_int_equal(dvpp_batchjob_item_status(j, i, &e), DVPP_ECORRUPT);
            assert_int_equal(e.status, DVPP_ECORRUPT);
            assert_true(e.msg[0] != '\0');
        } else {
            assert_int_equal(dvpp_batchjob_item_status(j, i, &e), DVPP_OK);
        }
    }
    assert_int_equal(dvpp_batchjob_item_status(j, NITEMS, NULL), DVPP_EINVAL);
    assert_true(all_zero((uint8_t *)t.data + BAD_INDEX * slice, slice));
    assert_memory_equal(t.data, ref.data, ref.bytes); /* others correct */
    assert_int_equal(dvpp_batchjob_cancel(j), DVPP_ENOTFOUND);
    dvpp_batchjob_free(j);

    dvpp_pipe_device_free(d);
    free(ref.data), free(t.data);
    corpus_free(c);
}

static void test_strict(void **state)
{
    corpus *c = corpus_new();
    dvpp_pipeline p;
    dvpp_tensor ref, t;
    dvpp_batchjob *j = NULL;
    dvpp_batch_progress prog;
    dvpp_err e;
    size_t slice;

    (void)state;
    corrupt(c);
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    batch_tensor(&p, NITEMS, &ref);
    batch_tensor(&p, NITEMS, &t);
    reference(&p, c->in, NITEMS, &ref);
    slice = t.bytes / NITEMS;

    /* One channel: items run in order, nothing after the bad one runs. */
    {
        dvpp_device *d = pipe_device(1);
        dvpp_device_counters before, after;

        dvpp_device_get_counters(d, &before);
        assert_int_equal(dvpp_batchjob_start(d, &p, c->in, NITEMS, &t, true, &j, NULL),
                         DVPP_OK);
        dvpp_err_clear(&e);
        assert_int_equal(dvpp_batchjob_wait(j, &e), DVPP_ECORRUPT);
        assert_int_equal(e.status, DVPP_ECORRUPT);
        dvpp_batchjob_progress(j, &prog);
        assert_int_equal(prog.done, BAD_INDEX);
        assert_int_equal(prog.failed, NITEMS - BAD_INDEX);
        assert_int_equal(prog.first_failed, BAD_INDEX);
        assert_int_equal(dvpp_batchjob_cause(j), BAD_INDEX);
        for (size_t i = 0; i < NITEMS; i++) {
            dvpp_status want = i < BAD_INDEX ? DVPP_OK
                             : i == BAD_INDEX ? DVPP_ECORRUPT : DVPP_ECANCELED;
            dvpp_err_clear(&e);
            assert_int_equal(dvpp_batchjob_item_status(j, i, &e), want);
            if (want != DVPP_OK)
                assert_int_equal(e.status, want);
        }
        dvpp_device_get_counters(d, &after);
        /* Only items 0..13 ran (run_ns counts only functions that ran; the
         * canceled ones never reached one): done 13, one real failure. */
        assert_int_equal(after.engine[DVPP_BATCHJOB_ENGINE].done -
                             before.engine[DVPP_BATCHJOB_ENGINE].done, BAD_INDEX);
        assert_int_equal(after.engine[DVPP_BATCHJOB_ENGINE].canceled -
                             before.engine[DVPP_BATCHJOB_ENGINE].canceled,
                         NITEMS - BAD_INDEX - 1);
        assert_memory_equal(t.data, ref.data, BAD_INDEX * slice);
        for (size_t i = BAD_INDEX; i < NITEMS; i++)
            assert_true(all_zero((uint8_t *)t.data + i * slice, slice));
        dvpp_batchjob_free(j);
        dvpp_pipe_device_free(d);
    }
    /* Eight channels: the job fails with ECORRUPT; every other item is OK
     * (correct) or canceled (zero). */
    {
        dvpp_device *d = pipe_device(8);

        memset(t.data, 0xA5, t.bytes);
        assert_int_equal(dvpp_batchjob_start(d, &p, c->in, NITEMS, &t, true, &j, NULL),
                         DVPP_OK);
        assert_int_equal(dvpp_batchjob_wait(j, NULL), DVPP_ECORRUPT);
        /* items before it may be canceled: the cause is still the bad one */
        assert_int_equal(dvpp_batchjob_cause(j), BAD_INDEX);
        for (size_t i = 0; i < NITEMS; i++) {
            dvpp_status st = dvpp_batchjob_item_status(j, i, NULL);
            uint8_t *s = (uint8_t *)t.data + i * slice;
            if (i == BAD_INDEX) {
                assert_int_equal(st, DVPP_ECORRUPT);
            } else if (st == DVPP_OK) {
                assert_memory_equal(s, (uint8_t *)ref.data + i * slice, slice);
            } else {
                assert_int_equal(st, DVPP_ECANCELED);
                assert_true(all_zero(s, slice));
            }
        }
        dvpp_batchjob_free(j);
        dvpp_pipe_device_free(d);
    }
    free(ref.data), free(t.data);
    corpus_free(c);
}

static void test_cancel_before_run(void **state)
{
    corpus *c = corpus_new();
    dvpp_pipeline p;
    dvpp_tensor t;
    dvpp_batchjob *j = NULL;
    dvpp_batch_progress prog;
    dvpp_device *d = pipe_device(1);
    gate g;
    dvpp_stream *s;
    dvpp_err e;

    (void)state;
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    batch_tensor(&p, NITEMS, &t);
    s = gate_close(d, &g);
    assert_int_equal(dvpp_batchjob_start(d, &p, c->in, NITEMS, &t, false, &j, NULL),
                     DVPP_OK);
    dvpp_batchjob_progress(j, &prog);
    assert_int_equal(prog.done + prog.failed, 0);
    assert_false(prog.finished);
    assert_int_equal(dvpp_batchjob_item_status(j, 0, NULL), DVPP_EBUSY);
    assert_int_equal(dvpp_batchjob_cancel(j), DVPP_OK);
    gate_open(&g);
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_wait(j, &e), DVPP_ECANCELED);
    assert_int_equal(dvpp_batchjob_wait(j, NULL), DVPP_ECANCELED); /* again */
    dvpp_batchjob_progress(j, &prog);
    assert_int_equal(prog.done, 0);
    assert_int_equal(prog.failed, NITEMS);
    assert_true(prog.finished);
    for (size_t i = 0; i < NITEMS; i++) {
        dvpp_err_clear(&e);
        assert_int_equal(dvpp_batchjob_item_status(j, i, &e), DVPP_ECANCELED);
        assert_true(e.msg[0] != '\0');
    }
    assert_true(all_zero(t.data, t.bytes)); /* poison replaced by zeros */
    dvpp_batchjob_free(j);
    dvpp_stream_free(s);
    gate_fini(&g);
    dvpp_pipe_device_free(d);
    free(t.data);
    corpus_free(c);
}

static void test_cancel_midway(void **state)
{
    corpus *c = corpus_new();
    dvpp_pipeline p;
    dvpp_tensor ref, t;
    dvpp_batchjob *j = NULL;
    dvpp_batch_progress prog;
    dvpp_device *d = pipe_device(2);
    dvpp_status cst;
    size_t slice, ok = 0, canceled = 0;
    enum { N = 512 };
    dvpp_batchjob_input *in = malloc(sizeof(*in) * N);

    (void)state;
    assert_non_null(in);
    for (size_t i = 0; i < N; i++)
        in[i] = c->in[i % NITEMS];
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    batch_tensor(&p, N, &ref);
    batch_tensor(&p, N, &t);
    reference(&p, in, N, &ref);
    slice = t.bytes / N;

    assert_int_equal(dvpp_batchjob_start(d, &p, in, N, &t, false, &j, NULL), DVPP_OK);
    do { /* until some items are done */
        dvpp_batchjob_progress(j, &prog);
        assert_int_equal(prog.total, N);
        assert_true(prog.done + prog.failed <= N);
    } while (prog.done < 4 && !prog.finished);
    cst = dvpp_batchjob_cancel(j);
    if (cst == DVPP_OK)
        assert_int_equal(dvpp_batchjob_wait(j, NULL), DVPP_ECANCELED);
    else
        assert_int_equal(cst, DVPP_ENOTFOUND); /* finished first: a fast box */
    dvpp_batchjob_wait(j, NULL);
    dvpp_batchjob_progress(j, &prog);
    assert_true(prog.finished);
    assert_int_equal(prog.done + prog.failed, N);
    for (size_t i = 0; i < N; i++) {
        dvpp_status st = dvpp_batchjob_item_status(j, i, NULL);
        uint8_t *s = (uint8_t *)t.data + i * slice;
        if (st == DVPP_OK) {
            ok++;
            assert_memory_equal(s, (uint8_t *)ref.data + i * slice, slice);
        } else {
            canceled++;
            assert_int_equal(st, DVPP_ECANCELED);
            assert_true(all_zero(s, slice));
        }
    }
    assert_int_equal(ok, prog.done);
    assert_int_equal(canceled, prog.failed);
    assert_true(ok >= 4);
    if (cst == DVPP_OK)
        assert_true(canceled > 0);
    dvpp_batchjob_free(j);
    /* Freeing a running job cancels it. */
    assert_int_equal(dvpp_batchjob_start(d, &p, in, N, &t, false, &j, NULL), DVPP_OK);
    dvpp_batchjob_free(j);
    dvpp_pipe_device_free(d);
    free(in);
    free(ref.data), free(t.data);
    corpus_free(c);
}

static void test_start_errors(void **state)
{
    corpus *c = corpus_new();
    dvpp_pipeline p;
    dvpp_tensor t, bad;
    dvpp_batchjob *j = (dvpp_batchjob *)&t;
    dvpp_device *d = pipe_device(2), *plain = NULL;
    dvpp_err e;
    dvpp_device_config cfg;

    (void)state;
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    batch_tensor(&p, 4, &t);
    dvpp_device_config_default(&cfg);
    assert_int_equal(dvpp_device_new(&cfg, &plain, NULL), DVPP_OK);
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_start(plain, &p, c->in, 4, &t, false, &j, &e),
                     DVPP_EINVAL);
    assert_string_equal(e.field, "device");
    assert_null(j);
    assert_false(dvpp_pipe_device_is(plain));
    dvpp_pipe_device_free(plain); /* a plain device is just freed */

    bad = t;
    bad.data = NULL;
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_start(d, &p, c->in, 4, &bad, false, &j, &e),
                     DVPP_EINVAL);
    assert_string_equal(e.field, "tensor");
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_start(d, &p, c->in, 3, &t, false, &j, &e),
                     DVPP_EINVAL); /* n does not match the tensor */
    assert_string_equal(e.field, "tensor");
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_start(d, &p, c->in, 0, &t, false, &j, &e),
                     DVPP_EINVAL);
    assert_string_equal(e.field, "n");
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_start(d, &p, NULL, 4, &t, false, &j, &e),
                     DVPP_EINVAL);
    assert_string_equal(e.field, "inputs");
    imagenet_pipeline(&p, DVPP_RESIZE_FIT);
    dvpp_err_clear(&e);
    assert_int_equal(dvpp_batchjob_start(d, &p, c->in, 4, &t, false, &j, &e),
                     DVPP_EINVAL);
    assert_string_equal(e.field, "ops[0].resize.mode");
    assert_int_equal(dvpp_pipe_device_new(NULL, 0, NULL, &plain, NULL) == DVPP_OK,
                     true); /* 0 = the config's channel count */
    dvpp_pipe_device_free(plain);
    dvpp_pipe_device_free(d);
    dvpp_pipe_device_free(NULL);
    dvpp_batchjob_free(NULL);
    free(t.data);
    corpus_free(c);
}

/* dvpp_pipe_device_new and dvpp_batchjob_start under allocation failure.
 * The test allocator is single-threaded: the batch jobs run on a warm
 * single-channel worker whose runs repeat a geometry it has seen, so no
 * worker thread allocates while it is installed. */
static void test_alloc_failure(void **state)
{
    corpus *c = corpus_new();
    dvpp_pipeline p;
    dvpp_tensor t;
    dvpp_device *d;
    dvpp_batchjob_input in[4];

    (void)state;
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    for (int i = 0; i < 4; i++)
        in[i] = c->in[0]; /* one JPEG */

    /* Device creation. */
    for (size_t fail = 1;; fail++) {
        dvpp_status st;
        bool injected;
        d = NULL;
        test_alloc_install();
        test_alloc_fail_nth(fail);
        st = dvpp_pipe_device_new(NULL, 2, NULL, &d, NULL);
        injected = test_alloc_injected();
        assert_int_equal(st, injected ? DVPP_ENOMEM : DVPP_OK);
        if (st == DVPP_ENOMEM)
            assert_null(d);
        dvpp_pipe_device_free(d);
        assert_int_equal(test_alloc()->live, 0);
        test_alloc_uninstall();
        if (!injected) {
            assert_true(fail > 1); /* the sweep injected failures at all */
            break;
        }
        assert_true(fail < 1000);
    }

    d = pipe_device(1);
    batch_tensor(&p, 4, &t);
    assert_int_equal(run_job(d, &p, in, 4, &t, false, NULL, NULL), DVPP_OK); /* warm */
    free(t.data);
    for (size_t n = 1; n <= 4; n++) {
        batch_tensor(&p, (uint32_t)n, &t);
        for (size_t fail = 1;; fail++) {
            dvpp_batchjob *j = NULL;
            dvpp_status st;
            bool injected;

            test_alloc_install();
            test_alloc_fail_nth(fail);
            st = dvpp_batchjob_start(d, &p, in, n, &t, false, &j, NULL);
            if (st == DVPP_OK) {
                assert_int_equal(dvpp_batchjob_wait(j, NULL), DVPP_OK);
                dvpp_batchjob_free(j);
            } else {
                assert_null(j);
            }
            injected = test_alloc_injected();
            assert_int_equal(st, injected ? DVPP_ENOMEM : DVPP_OK);
            assert_int_equal(test_alloc()->live, 0);
            test_alloc_uninstall();
            if (!injected) {
                assert_true(fail > 1); /* the sweep injected failures at all */
                break;
            }
            assert_true(fail < 100);
        }
        free(t.data);
    }
    dvpp_pipe_device_free(d);
    corpus_free(c);
}

/* The "N images" form: 64 mixed inputs -> stretch 40x30 RGB images, each
 * equal to a single run; the corrupt item's buffer is zeroed. */
static void test_image_batch(void **state)
{
    corpus *c = corpus_new();
    dvpp_device *d = pipe_device(4);
    dvpp_pipeline p;
    dvpp_image *imgs = calloc(NITEMS, sizeof(*imgs));
    dvpp_worker *w = malloc(sizeof(*w));
    dvpp_pipeline_out *out = calloc(1, sizeof(*out));
    uint8_t *ref = malloc(40 * 30 * 3);
    dvpp_batchjob *job = NULL;
    dvpp_err e;

    (void)state;
    assert_non_null(imgs), assert_non_null(w), assert_non_null(out), assert_non_null(ref);
    corrupt(c);
    dvpp_pipeline_init(&p);
    add_resize(&p, DVPP_RESIZE_STRETCH, 40, 30);
    p.output = DVPP_PIPE_OUT_IMAGE;
    p.out_format = DVPP_PIXEL_RGB;
    for (int i = 0; i < NITEMS; i++) {
        imgs[i].data = malloc(40 * 30 * 3);
        imgs[i].size = 40 * 30 * 3;
        assert_non_null(imgs[i].data);
        memset(imgs[i].data, 0xA5, imgs[i].size);
    }
    assert_int_equal(dvpp_batchjob_start_images(d, &p, c->in, NITEMS, imgs, false,
                                                &job, &e), DVPP_OK);
    assert_int_equal(dvpp_batchjob_wait(job, &e), DVPP_OK);
    dvpp_worker_init(w, NULL);
    for (int i = 0; i < NITEMS; i++) {
        if (i == BAD_INDEX) {
            assert_int_equal(dvpp_batchjob_item_status(job, (size_t)i, NULL), DVPP_ECORRUPT);
            assert_true(all_zero(imgs[i].data, imgs[i].size));
            continue;
        }
        memset(out, 0, sizeof(*out));
        out->image.data = ref;
        out->image.size = 40 * 30 * 3;
        assert_int_equal(dvpp_pipeline_run(w, &p, c->in[i].data, c->in[i].len, out,
                                           NULL), DVPP_OK);
        assert_int_equal(imgs[i].width, 40);
        assert_int_equal(imgs[i].format, DVPP_PIXEL_RGB);
        assert_memory_equal(imgs[i].data, ref, 40 * 30 * 3);
    }
    /* Tensor pipelines are not image batches. */
    imagenet_pipeline(&p, DVPP_RESIZE_STRETCH);
    dvpp_batchjob_free(job);
    job = NULL;
    assert_int_equal(dvpp_batchjob_start_images(d, &p, c->in, NITEMS, imgs, false,
                                                &job, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "output");
    dvpp_worker_fini(w);
    for (int i = 0; i < NITEMS; i++)
        free(imgs[i].data);
    free(imgs), free(w), free(out), free(ref);
    dvpp_pipe_device_free(d);
    corpus_free(c);
}

/* --- single jobs and completion notices ------------------------------------------ */

typedef struct notice {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count;
    dvpp_status status;
} notice;

static void notice_init(notice *n)
{
    memset(n, 0, sizeof(*n));
    pthread_mutex_init(&n->mu, NULL);
    pthread_cond_init(&n->cv, NULL);
}

static void notice_fini(notice *n)
{
    pthread_mutex_destroy(&n->mu);
    pthread_cond_destroy(&n->cv);
}

static void notice_post(notice *n, dvpp_status st)
{
    pthread_mutex_lock(&n->mu);
    n->count++;
    n->status = st;
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
}

static void notice_wait(notice *n, int count)
{
    pthread_mutex_lock(&n->mu);
    while (n->count < count)
        pthread_cond_wait(&n->cv, &n->mu);
    pthread_mutex_unlock(&n->mu);
}

static void on_single(void *ctx, dvpp_status st, const dvpp_err *err)
{
    (void)err;
    notice_post(ctx, st);
}

static void on_batch(void *ctx)
{
    notice_post(ctx, DVPP_OK);
}

/* dvpp_pipejob_submit: each item as its own job, sized in advance with
 * dvpp_pipeline_probe + plan, equals the batch reference; the completion
 * callback runs once per job; stage times are filled; a corrupt input
 * fails its job only. */
static void test_single_jobs(void **state)
{
    corpus *c = corpus_new();
    dvpp_device *d = pipe_device(4);
    dvpp_pipeline p;
    dvpp_tensor ref;
    dvpp_stream *s;
    dvpp_pipejob *jobs = calloc(NSRC * 2, sizeof(*jobs));
    dvpp_pipeline_out *outs = calloc(NSRC * 2, sizeof(*outs));
    notice n;
    size_t slice;

    (void)state;
    corrupt(c);
    imagenet_pipeline(&p, DVPP_RESIZE_LETTERBOX);
    batch_tensor(&p, NITEMS, &ref);
    reference(&p, c->in, NITEMS, &ref);
    slice = ref.bytes / NITEMS;
    notice_init(&n);
    assert_int_equal(dvpp_stream_new(d, 0, &s, NULL), DVPP_OK);
    for (int k = 0; k < NSRC * 2; k++) {
        int i = k == 0 ? BAD_INDEX : k;
        dvpp_pipe_source src;
        dvpp_pipeline_plan plan;
        assert_int_equal(dvpp_pipeline_probe(&p, c->in[i].data, c->in[i].len, NULL,
                                             &src, NULL), DVPP_OK);
        assert_int_equal(dvpp_pipeline_plan_make(&p, &src, &plan, NULL), DVPP_OK);
        assert_int_equal(plan.w, 32);
        assert_int_equal(dvpp_tensor_init(&outs[k].tensor, plan.dtype, plan.layout, 1,
                                          plan.c, plan.h, plan.w, NULL), DVPP_OK);
        outs[k].tensor.data = calloc(1, outs[k].tensor.bytes);
        jobs[k] = (dvpp_pipejob){.pipe = &p, .input = c->in[i].data, .len = c->in[i].len,
                                 .out = &outs[k], .pixels = 1, .done = on_single,
                                 .ctx = &n};
        assert_int_equal(dvpp_pipejob_submit(s, &jobs[k], NULL, NULL), DVPP_OK);
    }
    notice_wait(&n, NSRC * 2);
    assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_ECORRUPT);
    for (int k = 1; k < NSRC * 2; k++) {
        assert_memory_equal(outs[k].tensor.data, (uint8_t *)ref.data + (size_t)k * slice,
                            slice);
        assert_true(outs[k].stage_ns[DVPP_PIPE_STAGE_DECODE] > 0);
        assert_true(outs[k].stage_ns[DVPP_PIPE_STAGE_POST] > 0);
        assert_true(jobs[k].started_ns > 0);
    }
    /* Neither JPEG nor PNG: EUNSUPPORTED from the probe, before any job. */
    {
        dvpp_pipe_source src;
        dvpp_err e;
        static const uint8_t gif[8] = {'G', 'I', 'F', '8', '9', 'a', 0, 0};
        assert_int_equal(dvpp_pipeline_probe(&p, gif, sizeof(gif), NULL, &src, &e),
                         DVPP_EUNSUPPORTED);
        assert_string_equal(e.field, "input");
    }
    dvpp_stream_free(s);
    for (int k = 0; k < NSRC * 2; k++)
        free(outs[k].tensor.data);
    notice_fini(&n);
    free(jobs), free(outs), free(ref.data);
    dvpp_pipe_device_free(d);
    corpus_free(c);
}

/* dvpp_batchjob_start_opts: the notice comes once, after every item; the
 * tensor then equals the reference. A deadline already passed fails every
 * item with ETIMEDOUT (zeroed slices), and the notice still comes. */
static void test_batch_notice_and_deadline(void **state)
{
    corpus *c = corpus_new();
    dvpp_device *d = pipe_device(3);
    dvpp_pipeline p;
    dvpp_tensor ref, t;
    dvpp_batchjob *j;
    dvpp_batch_progress prog;
    notice n;
    dvpp_batchjob_opts o;

    (void)state;
    imagenet_pipeline(&p, DVPP_RESIZE_FILL);
    batch_tensor(&p, NITEMS, &ref);
    batch_tensor(&p, NITEMS, &t);
    reference(&p, c->in, NITEMS, &ref);
    notice_init(&n);
    o = (dvpp_batchjob_opts){.done = on_batch, .ctx = &n};
    assert_int_equal(dvpp_batchjob_start_opts(d, &p, c->in, NITEMS, &t, &o, &j, NULL),
                     DVPP_OK);
    notice_wait(&n, 1);
    dvpp_batchjob_progress(j, &prog);
    assert_int_equal(prog.done, NITEMS);
    assert_int_equal(dvpp_batchjob_wait(j, NULL), DVPP_OK);
    assert_memory_equal(t.data, ref.data, ref.bytes);
    dvpp_batchjob_free(j);
    assert_int_equal(n.count, 1);

    o.deadline_ns = 1; /* long past */
    assert_int_equal(dvpp_batchjob_start_opts(d, &p, c->in, NITEMS, &t, &o, &j, NULL),
                     DVPP_OK);
    notice_wait(&n, 2);
    assert_int_equal(dvpp_batchjob_wait(j, NULL), DVPP_OK);
    for (size_t i = 0; i < NITEMS; i++)
        assert_int_equal(dvpp_batchjob_item_status(j, i, NULL), DVPP_ETIMEDOUT);
    assert_true(all_zero(t.data, t.bytes));
    dvpp_batchjob_free(j);
    notice_fini(&n);
    free(ref.data), free(t.data);
    dvpp_pipe_device_free(d);
    corpus_free(c);
}

/* Unencoded image output with stride alignment: rows of ALIGN(w, 16)
 * pixels, planes of ALIGN(h, 2) rows, padding zero, pixels equal to the
 * tight output. */
static void test_aligned_image_output(void **state)
{
    corpus *c = corpus_new();
    dvpp_worker w;
    dvpp_pipeline p;
    dvpp_pipeline_out *tight = calloc(1, sizeof(*tight)), *al = calloc(1, sizeof(*al));
    uint8_t *a = malloc(1 << 20), *b = malloc(1 << 20);

    (void)state;
    dvpp_worker_init(&w, NULL);
    dvpp_pipeline_init(&p);
    p.out_format = DVPP_PIXEL_NV12;
    tight->image.data = a, tight->image.size = 1 << 20;
    al->image.data = b, al->image.size = 1 << 20;
    memset(b, 0xEE, 1 << 20);
    /* 33x71 source (jpeg[2]): odd sizes */
    assert_int_equal(dvpp_pipeline_run(&w, &p, c->jpeg[2].data, c->jpeg[2].len, tight,
                                       NULL), DVPP_OK);
    p.out_align_w = 16, p.out_align_h = 2;
    assert_int_equal(dvpp_pipeline_run(&w, &p, c->jpeg[2].data, c->jpeg[2].len, al,
                                       NULL), DVPP_OK);
    assert_int_equal(tight->image.width_stride, 34);
    assert_int_equal(al->image.width_stride, 48);
    assert_int_equal(al->image.height_stride, 72);
    assert_int_equal(al->plan.out_bytes, 48 * 72 * 3 / 2);
    for (uint32_t y = 0; y < 72; y++) {
        if (y < 71)
            assert_memory_equal(b + y * 48, a + y * 34, 34);
        assert_true(all_zero(b + y * 48 + (y < 71 ? 34 : 0), y < 71 ? 14 : 48));
    }
    for (uint32_t y = 0; y < 36; y++) /* UV rows */
        assert_memory_equal(b + 72 * 48 + y * 48, a + 71 * 34 + y * 34, 34);
    p.out_align_w = DVPP_PIPE_MAX_ALIGN + 1;
    assert_int_equal(dvpp_pipeline_validate(&p, NULL, NULL), DVPP_EINVAL);
    dvpp_worker_fini(&w);
    free(a), free(b), free(tight), free(al);
    corpus_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_shape),
        cmocka_unit_test(test_parallel_equals_serial),
        cmocka_unit_test(test_item_pipelines),
        cmocka_unit_test(test_corrupt_item_default),
        cmocka_unit_test(test_strict),
        cmocka_unit_test(test_cancel_before_run),
        cmocka_unit_test(test_cancel_midway),
        cmocka_unit_test(test_start_errors),
        cmocka_unit_test(test_alloc_failure),
        cmocka_unit_test(test_image_batch),
        cmocka_unit_test(test_single_jobs),
        cmocka_unit_test(test_batch_notice_and_deadline),
        cmocka_unit_test(test_aligned_image_output),
        cmocka_unit_test(test_slices_every_byte),
        cmocka_unit_test(test_admission_counts_intermediates),
    };
    return cmocka_run_group_tests_name("device batchjob", tests, NULL, NULL);
}
