/* dvpp_pipe_async: one pipeline run at a time on a helper thread. */
#include "dvpp_pipe_async.h"

#include <pthread.h>
#include <string.h>

#include "dvpp_mem.h"

dvpp_status dvpp_err_frame(dvpp_err *err, dvpp_status st, uint64_t frame)
{
    dvpp_err e;

    if (!err)
        return st;
    e = *err;
    return dvpp_err_set(err, st, e.field[0] ? e.field : NULL, "frame %llu: %.200s",
                        (unsigned long long)frame, e.msg);
}

dvpp_status dvpp_pipeline_run_frame(dvpp_worker *w, const dvpp_pipeline *p, const uint8_t *in,
                                    size_t len, dvpp_pipeline_out *po, uint64_t frame,
                                    dvpp_err *err)
{
    dvpp_status st = dvpp_pipeline_run(w, p, in, len, po, err);

    return st == DVPP_OK ? DVPP_OK : dvpp_err_frame(err, st, frame);
}

struct dvpp_pipe_async {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool busy;                   /* a run is handed over and not done */
    bool given;                  /* a run was given and not collected */
    bool quit;
    dvpp_worker *w;              /* the run's: its giver's aux worker */
    /* the run handed over (written by give while the helper waits) */
    dvpp_pipeline pipe;
    const uint8_t *in;
    size_t len;
    dvpp_pipeline_out po;
    uint64_t tag;
    /* its outcome; the first failure stays */
    dvpp_status st;
    dvpp_err err;
};

static void *helper_main(void *arg)
{
    dvpp_pipe_async *a = arg;
    dvpp_status st;
    dvpp_err e;

    dvpp_err_clear(&e);
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->busy && !a->quit)
            pthread_cond_wait(&a->cv, &a->mu);
        if (!a->busy)
            break;
        st = a->st;
        pthread_mutex_unlock(&a->mu);
        if (st == DVPP_OK) { /* after a failure the job is over: skip */
            dvpp_err_clear(&e);
            st = dvpp_pipeline_run_frame(a->w, &a->pipe, a->in, a->len, &a->po, a->tag, &e);
        }
        pthread_mutex_lock(&a->mu);
        if (st != DVPP_OK && a->st == DVPP_OK) {
            a->st = st;
            a->err = e;
        }
        a->busy = false;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

dvpp_status dvpp_pipe_async_start(dvpp_pipe_async **out, dvpp_err *err)
{
    dvpp_pipe_async *a;

    *out = NULL;
    a = dvpp_calloc(1, sizeof(*a));
    if (!a)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "pipeline helper");
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&a->thread, NULL, helper_main, a) != 0) {
        pthread_cond_destroy(&a->cv);
        pthread_mutex_destroy(&a->mu);
        dvpp_free(a, sizeof(*a));
        return dvpp_err_set(err, DVPP_ESYS, NULL, "cannot start a pipeline helper thread");
    }
    *out = a;
    return DVPP_OK;
}

dvpp_status dvpp_pipe_async_give(dvpp_pipe_async *a, dvpp_worker *w, const dvpp_pipeline *p,
                                 const uint8_t *in, size_t len, const dvpp_pipeline_out *po,
                                 uint64_t tag, dvpp_err *err)
{
    dvpp_worker *aux = dvpp_worker_aux(w); /* the helper waits: no run uses it */

    if (!aux)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "pipeline helper buffers");
    pthread_mutex_lock(&a->mu);
    a->w = aux;
    a->pipe = *p;
    a->in = in;
    a->len = len;
    a->po = *po;
    a->tag = tag;
    a->busy = true;
    a->given = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return DVPP_OK;
}

dvpp_status dvpp_pipe_async_collect(dvpp_pipe_async *a, dvpp_pipe_geom *geom, bool *had,
                                    dvpp_err *err)
{
    dvpp_status st;
    bool given;

    pthread_mutex_lock(&a->mu);
    while (a->busy)
        pthread_cond_wait(&a->cv, &a->mu);
    given = a->given;
    a->given = false;
    st = a->st;
    if (st != DVPP_OK && err)
        *err = a->err;
    if (st == DVPP_OK && given && geom)
        *geom = a->po.geom;
    pthread_mutex_unlock(&a->mu);
    if (had)
        *had = st == DVPP_OK && given;
    return st;
}

dvpp_status dvpp_pipe_async_stop(dvpp_pipe_async *a, dvpp_status st, dvpp_err *err)
{
    dvpp_status run;
    dvpp_err e;

    if (!a)
        return st;
    run = dvpp_pipe_async_collect(a, NULL, NULL, &e);
    pthread_mutex_lock(&a->mu);
    a->quit = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    dvpp_free(a, sizeof(*a));
    if (st == DVPP_OK && run != DVPP_OK) {
        if (err)
            *err = e;
        st = run;
    }
    return st;
}
