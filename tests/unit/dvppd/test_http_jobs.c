/* Unit tests for dvppd/http/http_jobs: the ttl sweep keeps a job that
 * finished after the sweep read its clock (the sweep used to compute that
 * job's age as now - finished, which wraps to 2^64 - a few ns, and dropped
 * it at once: under ASan in CI a third /v1/jobs was then admitted past
 * http.max_jobs), forgets it once older than the ttl; the max is held and
 * a refused start still releases the body and the result it was given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "device/dvpp_batchjob.h"
#include "dvpp_jpeg.h"
#include "http/http_jobs.h"

#define TTL_S 600u
#define TTL_NS ((uint64_t)TTL_S * 1000000000u)

typedef struct fixture {
    dvpp_device *dev;
    http_jobs *js;
    dvpp_buf jpeg;
    dvpp_pipeline pipe;
    atomic_int released; /* buffers the registry gave back */
} fixture;

static void count_release(void *ctx, void *buf)
{
    fixture *f = ctx;

    free(buf);
    atomic_fetch_add(&f->released, 1);
}

static void encode_jpeg(dvpp_buf *out)
{
    dvpp_image img;
    dvpp_jpeg_encode_opts jo;
    dvpp_planes pl;

    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, 48, 32, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_planes(&img, &pl, NULL), DVPP_OK);
    for (uint32_t y = 0; y < pl.p[0].rows; y++)
        for (uint32_t x = 0; x < pl.p[0].row_bytes; x++)
            dvpp_image_row(&img, &pl, 0, y)[x] = (uint8_t)(x * 5 + y * 3);
    dvpp_jpeg_encode_opts_init(&jo);
    dvpp_buf_init(out);
    assert_int_equal(dvpp_jpeg_encode(&img, &jo, out, NULL), DVPP_OK);
    dvpp_image_free(&img);
}

/* AUTO input -> stretch 16x16 -> mean/std f32 tensor. */
static void small_pipeline(dvpp_pipeline *p)
{
    dvpp_pipe_op op;

    dvpp_pipeline_init(p);
    p->input = DVPP_PIPE_IN_AUTO;
    memset(&op, 0, sizeof(op));
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = DVPP_RESIZE_STRETCH;
    op.u.resize.w = 16, op.u.resize.h = 16;
    dvpp_resize_opts_init(&op.u.resize.opts);
    assert_int_equal(dvpp_pipeline_add_op(p, &op, NULL), DVPP_OK);
    p->post = DVPP_PIPE_POST_NORM;
    for (int c = 0; c < 3; c++)
        p->norm.mean[c] = 0.5, p->norm.std[c] = 0.25;
    p->output = DVPP_PIPE_OUT_TENSOR;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    assert_int_equal(dvpp_pipe_device_new(NULL, 1, NULL, &f->dev, NULL), DVPP_OK);
    assert_int_equal(http_jobs_new(2, TTL_S, &f->js, NULL), DVPP_OK);
    encode_jpeg(&f->jpeg);
    small_pipeline(&f->pipe);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    http_jobs_free(f->js);
    dvpp_pipe_device_free(f->dev);
    dvpp_buf_fini(&f->jpeg);
    free(f);
    return 0;
}

/* Start a one-item job (its own body copy and result buffer). */
static dvpp_status start_job(fixture *f, uint64_t *id, dvpp_err *err)
{
    http_job_desc d;
    dvpp_batchjob_input in;
    void *body = malloc(f->jpeg.len);

    assert_non_null(body);
    memcpy(body, f->jpeg.data, f->jpeg.len);
    memset(&d, 0, sizeof(d));
    in.data = body, in.len = f->jpeg.len;
    d.device = f->dev;
    d.pipe = &f->pipe;
    d.inputs = &in, d.n = 1;
    d.body = body;
    assert_int_equal(dvpp_batchjob_tensor(&f->pipe, 1, &d.tensor, NULL), DVPP_OK);
    d.result = malloc(d.tensor.bytes);
    assert_non_null(d.result);
    d.tensor.data = d.result;
    d.result_len = d.tensor.bytes;
    d.release = count_release, d.release_ctx = f;
    return http_jobs_start(f->js, &d, id, err);
}

static http_job_state wait_finished(fixture *f, uint64_t id)
{
    for (int i = 0; i < 20000; i++) {
        http_job *j = http_jobs_get(f->js, id);
        dvpp_batch_progress p;
        dvpp_status st;
        http_job_state s;

        assert_non_null(j);
        s = http_job_state_get(j, &p, &st, NULL);
        http_job_unref(j);
        if (s != HTTP_JOB_RUNNING)
            return s;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    fail_msg("job %llu did not finish", (unsigned long long)id);
    return HTTP_JOB_RUNNING;
}

static bool listed(fixture *f, uint64_t id)
{
    http_job *j = http_jobs_get(f->js, id);

    http_job_unref(j);
    return j != NULL;
}

static void test_sweep_clock_read_before_finish(void **state)
{
    fixture *f = *state;
    uint64_t id, before = dvpp_now_ns(), after;

    assert_int_equal(start_job(f, &id, NULL), DVPP_OK);
    assert_int_equal(wait_finished(f, id), HTTP_JOB_DONE);
    after = dvpp_now_ns();
    http_jobs_gc_at(f->js, before); /* the sweep's clock, read before it finished */
    assert_true(listed(f, id));
    http_jobs_gc_at(f->js, after + TTL_NS / 2);
    assert_true(listed(f, id));
    http_jobs_gc_at(f->js, after + TTL_NS + 1);
    assert_false(listed(f, id));
    assert_int_equal(atomic_load(&f->released), 2); /* body and result */
}

static void test_max_held_and_refusal_releases(void **state)
{
    fixture *f = *state;
    uint64_t a, b, c;
    dvpp_err err;

    assert_int_equal(start_job(f, &a, NULL), DVPP_OK);
    assert_int_equal(start_job(f, &b, NULL), DVPP_OK);
    assert_int_equal(wait_finished(f, a), HTTP_JOB_DONE);
    assert_int_equal(wait_finished(f, b), HTTP_JOB_DONE);
    http_jobs_gc(f->js); /* both finished, neither old */
    dvpp_err_clear(&err);
    assert_int_equal(start_job(f, &c, &err), DVPP_EAGAIN);
    assert_string_equal(err.field, "batches");
    assert_int_equal(atomic_load(&f->released), 2); /* the refused one's */
    assert_int_equal(http_jobs_delete(f->js, a), DVPP_OK);
    assert_int_equal(atomic_load(&f->released), 4);
    assert_int_equal(start_job(f, &c, NULL), DVPP_OK);
    assert_int_equal(wait_finished(f, c), HTTP_JOB_DONE);
    assert_true(listed(f, b) && listed(f, c) && !listed(f, a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sweep_clock_read_before_finish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_held_and_refusal_releases, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
