/* dvppctl batch: a batch job through the device model, in-process. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "device/dvpp_batchjob.h"
#include "dvpp_mem.h"

/* The pipeline the preprocess flags describe, for every input. */
static dvpp_status batch_pipeline(const ctl_args *a, dvpp_pipeline *p, dvpp_err *err)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_RESIZE};

    dvpp_pipeline_init(p);
    p->decode.shrink_on_load = a->shrink_on_load;
    p->decode.no_orient = a->jpeg.no_orient;
    p->decode.allow_partial = a->jpeg.allow_partial;
    p->decode.profile = a->jpeg.profile;
    op.u.resize.mode = a->mode;
    op.u.resize.w = a->size_w;
    op.u.resize.h = a->size_h;
    op.u.resize.opts = a->resize;
    memcpy(op.u.resize.pad, a->pad, sizeof(op.u.resize.pad));
    p->post = DVPP_PIPE_POST_NORM;
    ctl_norm_spec(a, &p->norm);
    p->output = DVPP_PIPE_OUT_TENSOR;
    return dvpp_pipeline_add_op(p, &op, err);
}

/* Progress on a terminal: a bar redrawn in place on stderr. */
static void draw_progress(const dvpp_batch_progress *pr)
{
    size_t n = pr->done + pr->failed, width = 40;
    size_t fill = pr->total ? n * width / pr->total : width;
    char bar[64];

    memset(bar, '#', fill);
    memset(bar + fill, '.', width - fill);
    bar[width] = '\0';
    fprintf(stderr, "\r[%s] %zu/%zu%s", bar, n, pr->total,
            pr->failed ? " (failures)" : "");
}

/* The job's completion notice, so the wait ends the moment the last item
 * does (the progress bar is redrawn every 100 ms meanwhile). */
typedef struct finish_flag {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
} finish_flag;

static void on_finished(void *ctx)
{
    finish_flag *f = ctx;

    pthread_mutex_lock(&f->mu);
    f->done = true;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* Wait for @f up to 100 ms; true once the job has finished. */
static bool wait_tick(finish_flag *f)
{
    struct timespec until;
    bool done;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&f->mu);
    while (!f->done && pthread_cond_timedwait(&f->cv, &f->mu, &until) == 0)
        ;
    done = f->done;
    pthread_mutex_unlock(&f->mu);
    return done;
}

static dvpp_status wait_with_progress(dvpp_batchjob *job, finish_flag *f, dvpp_err *err)
{
    dvpp_batch_progress pr;
    bool tty = isatty(STDERR_FILENO), done;

    do {
        done = wait_tick(f);
        dvpp_batchjob_progress(job, &pr);
        if (tty)
            draw_progress(&pr);
    } while (!done);
    if (tty)
        fputc('\n', stderr);
    return dvpp_batchjob_wait(job, err);
}

static unsigned report_items(dvpp_batchjob *job, const ctl_args *a)
{
    unsigned failed = 0;

    for (unsigned i = 0; i < a->ninputs; i++) {
        dvpp_err e;
        dvpp_status st;
        dvpp_err_clear(&e);
        st = dvpp_batchjob_item_status(job, i, &e);
        if (st == DVPP_OK)
            continue;
        failed++;
        fprintf(stderr, "dvppctl batch: item %u (%s): %s (%s)\n", i,
                a->inputs[i], e.msg[0] ? e.msg : dvpp_strerror(st),
                dvpp_status_name(st));
    }
    return failed;
}

static dvpp_status read_inputs(const ctl_args *a, dvpp_buf *bufs,
                               dvpp_batchjob_input *in, dvpp_err *err)
{
    for (unsigned i = 0; i < a->ninputs; i++) {
        dvpp_status st = dvpp_buf_read_file(&bufs[i], a->inputs[i],
                                            a->lim.max_encoded_bytes, err);
        if (st != DVPP_OK)
            return st;
        in[i] = (dvpp_batchjob_input){bufs[i].data, bufs[i].len};
    }
    return DVPP_OK;
}

int ctl_cmd_batch(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    dvpp_buf bufs[CTL_MAX_INPUTS];
    dvpp_batchjob_input in[CTL_MAX_INPUTS];
    dvpp_batchjob *job = NULL;
    dvpp_device *dev = NULL;
    finish_flag flag = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    dvpp_batchjob_opts opts = {.done = on_finished, .ctx = &flag};
    dvpp_pipeline p;
    dvpp_tensor t = {0};
    dvpp_err err;
    dvpp_status st;
    unsigned failed = 0;
    int rc;

    if (!a)
        return 1;
    rc = ctl_parse_args(argc, argv, a);
    if (!rc && !a->size_set) {
        fprintf(stderr, "dvppctl batch: need --size WxH\n");
        rc = 2;
    }
    if (rc) {
        free(a);
        return rc;
    }
    for (unsigned i = 0; i < CTL_MAX_INPUTS; i++)
        dvpp_buf_init(&bufs[i]);
    dvpp_err_clear(&err);
    st = batch_pipeline(a, &p, &err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&p, a->ninputs, &t, &err);
    if (st == DVPP_OK && !(t.data = dvpp_calloc(1, t.bytes)))
        st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "cannot allocate the batch tensor");
    if (st == DVPP_OK)
        st = read_inputs(a, bufs, in, &err);
    if (st == DVPP_OK)
        st = dvpp_pipe_device_new(NULL, a->channels, &a->lim, &dev, &err);
    opts.strict = a->strict;
    if (st == DVPP_OK)
        st = dvpp_batchjob_start_opts(dev, &p, in, a->ninputs, &t, &opts, &job, &err);
    if (st == DVPP_OK) {
        st = wait_with_progress(job, &flag, &err);
        failed = report_items(job, a);
    }
    /* Default mode writes the batch with failed slots zeroed. */
    if (st == DVPP_OK)
        st = ctl_write_tensor(a->out, &t, &err);
    rc = st == DVPP_OK ? 0 : ctl_fail("batch", &err);
    if (st == DVPP_OK && failed)
        fprintf(stderr, "dvppctl batch: %u of %u items failed; their slots are "
                        "zero\n", failed, a->ninputs);
    dvpp_batchjob_free(job);
    dvpp_pipe_device_free(dev);
    dvpp_free(t.data, t.bytes);
    for (unsigned i = 0; i < CTL_MAX_INPUTS; i++)
        dvpp_buf_fini(&bufs[i]);
    free(a);
    return rc;
}
