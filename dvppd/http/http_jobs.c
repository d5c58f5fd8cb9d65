/* http_jobs: counted, listed batch jobs. */
#include "http_jobs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

struct http_job {
    uint64_t id;
    atomic_uint refs;
    http_job *next;             /* registry list, under the registry mutex */
    dvpp_pipeline pipe;
    void *body;                  /* the bytes @in points into */
    dvpp_device *device;         /* where @body_held is held */
    uint64_t body_held;          /* of the device's byte budget, for @body */
    dvpp_batchjob_input *in;
    size_t n;
    dvpp_batchjob *bj;
    void *result;
    size_t result_len, header_len;
    dvpp_tensor tensor;
    http_buf_release release;
    void *release_ctx;
    atomic_uint_fast64_t finished_ns; /* 0 while running */
};

struct http_jobs {
    pthread_mutex_t mu;
    http_job *head;
    unsigned count, max;
    uint64_t ttl_ns;
};

static const char *const k_states[] = {"running", "done", "failed", "canceled"};

const char *http_job_state_name(http_job_state s)
{
    return (unsigned)s < 4 ? k_states[s] : "unknown";
}

dvpp_status http_jobs_new(unsigned max, unsigned ttl_s, http_jobs **out, dvpp_err *err)
{
    http_jobs *js = dvpp_calloc(1, sizeof(*js));

    *out = NULL;
    if (!js)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "job registry");
    if (pthread_mutex_init(&js->mu, NULL) != 0) {
        dvpp_free(js, sizeof(*js));
        return dvpp_err_set(err, DVPP_ESYS, NULL, "pthread_mutex_init");
    }
    js->max = max;
    js->ttl_ns = (uint64_t)ttl_s * 1000000000u;
    *out = js;
    return DVPP_OK;
}

/* Release a job's body and the budget it held (@release its allocator). */
static void body_release(dvpp_device *d, void **body, uint64_t *held, http_buf_release release,
                         void *ctx)
{
    if (*body && release)
        release(ctx, *body);
    *body = NULL;
    if (*held)
        dvpp_device_release_bytes(d, *held);
    *held = 0;
}

static void job_free(http_job *j)
{
    dvpp_batchjob_free(j->bj); /* cancels, waits for running items */
    body_release(j->device, &j->body, &j->body_held, j->release, j->release_ctx);
    dvpp_free(j->in, j->n * sizeof(*j->in));
    if (j->result && j->release)
        j->release(j->release_ctx, j->result);
    dvpp_free(j, sizeof(*j));
}

void http_job_unref(http_job *j)
{
    if (j && atomic_fetch_sub(&j->refs, 1) == 1)
        job_free(j);
}

static void job_finished(void *ctx)
{
    http_job *j = ctx;

    atomic_store(&j->finished_ns, dvpp_now_ns());
}

/* Move the request's buffers into a new job record. */
static http_job *job_make(http_job_desc *d)
{
    http_job *j = dvpp_calloc(1, sizeof(*j));

    if (!j)
        return NULL;
    j->in = dvpp_calloc(d->n, sizeof(*j->in));
    if (!j->in) {
        dvpp_free(j, sizeof(*j));
        return NULL;
    }
    j->n = d->n;
    memcpy(j->in, d->inputs, d->n * sizeof(*j->in));
    j->body = d->body, j->body_held = d->body_held, j->device = d->device;
    d->body = NULL, d->body_held = 0;
    j->pipe = *d->pipe;
    j->result = d->result, j->result_len = d->result_len, j->header_len = d->header_len;
    j->tensor = d->tensor;
    j->release = d->release, j->release_ctx = d->release_ctx;
    d->result = NULL;
    atomic_init(&j->refs, 1);
    return j;
}

dvpp_status http_jobs_start(http_jobs *js, http_job_desc *d, uint64_t *id,
                             dvpp_err *err)
{
    dvpp_batchjob_opts o = {.strict = d->strict, .deadline_ns = d->deadline_ns,
                            .output_held = d->output_held};
    http_job *j;
    dvpp_status st;

    pthread_mutex_lock(&js->mu);
    if (js->count >= js->max) {
        pthread_mutex_unlock(&js->mu);
        st = dvpp_err_set(err, DVPP_EAGAIN, "batches", "%u jobs are open (http.max_jobs); "
                          "delete finished ones or retry later", js->max);
        goto refuse;
    }
    js->count++; /* reserve the place while starting */
    pthread_mutex_unlock(&js->mu);
    j = job_make(d);
    if (!j) {
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "job record");
        goto unreserve;
    }
    o.done = job_finished;
    o.ctx = j;
    st = dvpp_batchjob_start_opts(d->device, &j->pipe, j->in, j->n, &j->tensor, &o,
                                  &j->bj, err);
    if (st != DVPP_OK) {
        job_free(j);
        goto unreserve_released;
    }
    j->id = dvpp_batchjob_id(j->bj);
    *id = j->id;
    pthread_mutex_lock(&js->mu);
    j->next = js->head;
    js->head = j;
    pthread_mutex_unlock(&js->mu);
    return DVPP_OK;

unreserve:
    pthread_mutex_lock(&js->mu);
    js->count--;
    pthread_mutex_unlock(&js->mu);
refuse:
    body_release(d->device, &d->body, &d->body_held, d->release, d->release_ctx);
    if (d->result && d->release)
        d->release(d->release_ctx, d->result);
    d->result = NULL;
    return st;
unreserve_released:
    pthread_mutex_lock(&js->mu);
    js->count--;
    pthread_mutex_unlock(&js->mu);
    return st;
}

/* Unlink @id; the caller gets the registry's reference. */
static http_job *unlink_job(http_jobs *js, uint64_t id)
{
    http_job **pp = &js->head, *j;

    while ((j = *pp) && j->id != id)
        pp = &j->next;
    if (j) {
        *pp = j->next;
        js->count--;
    }
    return j;
}

http_job *http_jobs_get(http_jobs *js, uint64_t id)
{
    http_job *j;

    pthread_mutex_lock(&js->mu);
    for (j = js->head; j && j->id != id; j = j->next)
        ;
    if (j)
        atomic_fetch_add(&j->refs, 1);
    pthread_mutex_unlock(&js->mu);
    return j;
}

dvpp_status http_jobs_delete(http_jobs *js, uint64_t id)
{
    http_job *j;

    pthread_mutex_lock(&js->mu);
    j = unlink_job(js, id);
    pthread_mutex_unlock(&js->mu);
    if (!j)
        return DVPP_ENOTFOUND;
    dvpp_batchjob_cancel(j->bj);
    http_job_unref(j);
    return DVPP_OK;
}

/* A job that finished after @now was read (its completion runs on a device
 * worker, unlocked) is not old: now - f would wrap to a huge age. */
static bool job_expired(const http_job *j, uint64_t now, uint64_t ttl_ns)
{
    uint64_t f = atomic_load(&j->finished_ns);

    return f && f <= now && now - f > ttl_ns;
}

void http_jobs_gc(http_jobs *js)
{
    http_jobs_gc_at(js, dvpp_now_ns());
}

void http_jobs_gc_at(http_jobs *js, uint64_t now)
{
    for (;;) {
        http_job *j, *old = NULL;
        pthread_mutex_lock(&js->mu);
        for (j = js->head; j && !old; j = j->next)
            if (job_expired(j, now, js->ttl_ns))
                old = j;
        if (old)
            unlink_job(js, old->id);
        pthread_mutex_unlock(&js->mu);
        if (!old)
            return;
        http_job_unref(old);
    }
}

void http_jobs_free(http_jobs *js)
{
    if (!js)
        return;
    for (;;) {
        http_job *j;
        pthread_mutex_lock(&js->mu);
        j = js->head;
        if (j)
            unlink_job(js, j->id);
        pthread_mutex_unlock(&js->mu);
        if (!j)
            break;
        dvpp_batchjob_cancel(j->bj);
        http_job_unref(j);
    }
    pthread_mutex_destroy(&js->mu);
    dvpp_free(js, sizeof(*js));
}

http_job_state http_job_state_get(http_job *j, dvpp_batch_progress *p,
                                    dvpp_status *status, dvpp_err *err)
{
    dvpp_status st;

    dvpp_batchjob_progress(j->bj, p);
    *status = DVPP_OK;
    if (!atomic_load(&j->finished_ns) || !p->finished)
        return HTTP_JOB_RUNNING;
    st = dvpp_batchjob_wait(j->bj, err); /* finished: returns at once */
    *status = st;
    if (st == DVPP_ECANCELED)
        return HTTP_JOB_CANCELED;
    return st == DVPP_OK ? HTTP_JOB_DONE : HTTP_JOB_FAILED;
}

uint64_t http_job_id(const http_job *j)
{
    return j->id;
}

dvpp_batchjob *http_job_batch(http_job *j)
{
    return j->bj;
}

const void *http_job_result(const http_job *j, size_t *len, size_t *header_len,
                             dvpp_tensor *t)
{
    *len = j->result_len;
    *header_len = j->header_len;
    *t = j->tensor;
    return j->result;
}
