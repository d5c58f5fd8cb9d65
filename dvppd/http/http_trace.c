/* http_trace: traces over HTTP (docs/tracing.md).
 *
 * ?trace=1 (or X-Dvpp-Trace: 1) on a job route gives the request a
 * dvppd_trace_job: the pipeline's watch writes the worker's spans into it,
 * and http_answer adds the front end's (request, read, queue, write) on
 * the HTTP thread, names the trace in X-Dvpp-Trace-Id / X-Dvpp-Trace and
 * keeps its JSON in the store for GET /v1/traces/{id}. Every job also joins
 * the store's running capture, with or without the flag.
 *
 * GET /v1/trace?seconds=N runs a capture: the request is suspended like a
 * device job (no MHD thread sleeps) while a timer thread of this module
 * waits N seconds (or until a drain), ends the capture and resumes it
 * through http_finish; its answer is the capture's JSON. One at a time
 * (409). The timer thread is joined by the next capture or at stop.
 *
 * Locks: http_capture.mu guards the timer's state; it is a leaf lock but
 * for http_finish (taken after it is released). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_int.h"

struct http_capture {
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* CLOCK_MONOTONIC: wakes the timer at a drain */
    bool running;               /* a capture is recording */
    bool joinable;              /* @thread ran and is not joined yet */
    bool cancel;                /* end the capture now (drain, stop) */
    pthread_t thread;
    http_req *r;                /* the suspended GET /v1/trace */
    dvppd_trace_store *store;
    uint64_t deadline_ns;
};

/* --- the flag ------------------------------------------------------------------- */

/* "1"/"true" on, "0"/"false" (or absent) off; anything else is refused. */
static dvpp_status trace_flag(const char *v, bool *on, dvpp_err *err)
{
    if (!v || !strcmp(v, "0") || !strcmp(v, "false")) {
        *on = false;
        return DVPP_OK;
    }
    if (!strcmp(v, "1") || !strcmp(v, "true")) {
        *on = true;
        return DVPP_OK;
    }
    return dvpp_err_set(err, DVPP_EINVAL, "trace", "trace: want 1, true, 0 or false");
}

dvpp_status http_trace_begin(http_req *r, dvpp_err *err)
{
    const char *q = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "trace");
    const char *hdr = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Dvpp-Trace");
    bool on_q = false, on_h = false;
    dvpp_status st = trace_flag(q, &on_q, err);

    if (st == DVPP_OK)
        st = trace_flag(hdr, &on_h, err);
    if (st != DVPP_OK)
        return st;
    if ((on_q || on_h) && !r->h->traces)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "trace", "tracing is off");
    return dvppd_trace_job_begin(&r->tj, r->h->traces, on_q || on_h,
                                 dvppd_route_name(r->route), err);
}

void http_trace_watch(http_req *r, dvpp_pipeline *p)
{
    p->watch = dvppd_trace_job_watch(&r->tj, p->watch);
}

/* --- the answer ------------------------------------------------------------------ */

uint64_t http_trace_answer_start(http_req *r, struct MHD_Response *resp)
{
    if (!dvppd_trace_job_active(&r->tj))
        return 0;
    if (r->tj.own) {
        http_header_printf(resp, "X-Dvpp-Trace-Id", "%" PRIu64, r->tj.id);
        http_header_printf(resp, "X-Dvpp-Trace", "/v1/traces/%" PRIu64, r->tj.id);
    }
    return dvpp_now_ns();
}

void http_trace_answer_done(http_req *r, uint64_t t_write)
{
    dvppd_trace_args a = {-1, -1, -1, 0, "http", 0};
    uint64_t now = dvpp_now_ns();

    if (!dvppd_trace_job_active(&r->tj))
        return;
    a.bytes = (int64_t)r->body_len;
    if (r->t_read)
        dvppd_trace_job_span(&r->tj, "read", "http", r->t_start, r->t_read, &a);
    a.bytes = -1;
    if (r->t_submit && r->pj.started_ns >= r->t_submit)
        dvppd_trace_job_span(&r->tj, "queue", "http", r->t_submit, r->pj.started_ns, &a);
    dvppd_trace_job_span(&r->tj, "write", "http", t_write, now, &a);
    dvppd_trace_job_span(&r->tj, "request", "http", r->t_start, now, &a);
    dvppd_trace_job_end(&r->tj, r->h->traces);
}

/* --- GET /v1/traces/{id} ----------------------------------------------------------- */

enum MHD_Result http_traces_serve(http_req *r)
{
    struct MHD_Response *resp;
    char *json = NULL;
    size_t len = 0;
    dvpp_err e;

    dvpp_err_clear(&e);
    if (!r->h->traces)
        return http_answer_status(r, DVPP_ENOTFOUND, "id", "tracing is off");
    if (dvppd_trace_store_get(r->h->traces, r->trace_id, &json, &len, &e) != DVPP_OK)
        return http_answer_error(r, &e);
    resp = MHD_create_response_from_buffer(len, json, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(json);
        return MHD_NO;
    }
    http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return http_answer(r, 200, resp);
}

/* --- GET /v1/trace?seconds=N -------------------------------------------------------- */

dvpp_status http_trace_init(dvppd_http *h, dvpp_err *err)
{
    http_capture *c;

    h->capture = NULL;
    if (!h->traces)
        return DVPP_OK;
    c = calloc(1, sizeof(*c));
    if (!c)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "trace capture");
    if (pthread_mutex_init(&c->mu, NULL) != 0)
        goto fail_mu;
    if (dvpp_cond_init_monotonic(&c->cv) != 0)
        goto fail_cv;
    c->store = h->traces;
    h->capture = c;
    return DVPP_OK;

fail_cv:
    pthread_mutex_destroy(&c->mu);
fail_mu:
    free(c);
    return dvpp_err_set(err, DVPP_ENOMEM, NULL, "trace capture lock");
}

void http_trace_cancel(dvppd_http *h)
{
    http_capture *c = h->capture;

    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->cancel = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void http_trace_join(dvppd_http *h)
{
    http_capture *c = h->capture;
    bool joinable;

    if (!c)
        return;
    http_trace_cancel(h); /* from here on no capture starts: no new timer */
    pthread_mutex_lock(&c->mu);
    joinable = c->joinable;
    c->joinable = false;
    pthread_mutex_unlock(&c->mu);
    if (joinable)
        pthread_join(c->thread, NULL);
}

void http_trace_fini(dvppd_http *h)
{
    http_capture *c = h->capture;

    if (!c)
        return;
    http_trace_join(h);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
    h->capture = NULL;
}

/* The timer: wait for the deadline or a cancel, end the capture, resume
 * its request. */
static void *capture_timer(void *arg)
{
    http_capture *c = arg;
    struct timespec until = {(time_t)(c->deadline_ns / 1000000000u),
                             (long)(c->deadline_ns % 1000000000u)};
    http_req *r;

    pthread_mutex_lock(&c->mu);
    while (!c->cancel && dvpp_now_ns() < c->deadline_ns)
        if (pthread_cond_timedwait(&c->cv, &c->mu, &until) == ETIMEDOUT)
            break;
    dvppd_trace_store_capture_end(c->store);
    r = c->r;
    c->r = NULL;
    c->running = false;
    pthread_mutex_unlock(&c->mu);
    http_finish(r, DVPP_OK, NULL);
    return NULL;
}

/* ?seconds=N, 1..trace.max_seconds. */
static dvpp_status capture_seconds(http_req *r, unsigned *out, dvpp_err *err)
{
    const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "seconds");
    unsigned max = dvppd_trace_store_config(r->h->traces)->max_seconds;
    char *end;
    unsigned long n;

    if (!v || !*v)
        return dvpp_err_set(err, DVPP_EINVAL, "seconds", "seconds=N is required (1..%u)", max);
    errno = 0;
    n = strtoul(v, &end, 10);
    if (errno || *end || n < 1 || n > max)
        return dvpp_err_set(err, DVPP_EINVAL, "seconds",
                            "seconds: want an integer in 1..%u (trace.max_seconds)", max);
    *out = (unsigned)n;
    return DVPP_OK;
}

dvpp_status http_trace_capture_submit(http_req *r, dvpp_err *err)
{
    http_capture *c = r->h->capture;
    dvppd_trace *t = NULL;
    unsigned seconds = 0;
    dvpp_status st;
    int rc;

    if (!c)
        return dvpp_err_set(err, DVPP_ENOTFOUND, "path", "tracing is off");
    st = capture_seconds(r, &seconds, err);
    if (st != DVPP_OK)
        return st;
    pthread_mutex_lock(&c->mu);
    if (c->running) {
        st = dvpp_err_set(err, DVPP_EBUSY, "seconds", "a trace recording runs already");
        goto out;
    }
    if (c->cancel) {
        st = dvpp_err_set(err, DVPP_ECANCELED, NULL, "the server is stopping");
        goto out;
    }
    if (c->joinable) { /* the last capture's timer has ended (running is false) */
        pthread_join(c->thread, NULL);
        c->joinable = false;
    }
    st = dvppd_trace_new(dvppd_trace_store_config(c->store)->capture_events, "capture", &t,
                         err);
    if (st == DVPP_OK)
        st = dvppd_trace_store_capture_begin(c->store, t, err);
    if (st != DVPP_OK)
        goto out;
    r->tj.own = dvppd_trace_ref(t); /* read by the answer */
    c->r = r;
    c->running = true;
    c->deadline_ns = dvpp_now_ns() + (uint64_t)seconds * 1000000000u;
    rc = pthread_create(&c->thread, NULL, capture_timer, c);
    if (rc != 0) {
        dvppd_trace_store_capture_end(c->store);
        dvppd_trace_unref(r->tj.own);
        r->tj.own = NULL;
        c->r = NULL;
        c->running = false;
        st = dvpp_err_set(err, DVPP_ESYS, NULL, "trace timer: %s", strerror(rc));
        goto out;
    }
    c->joinable = true;
out:
    pthread_mutex_unlock(&c->mu);
    dvppd_trace_unref(t);
    return st;
}

enum MHD_Result http_trace_capture_answer(http_req *r)
{
    dvppd_trace *t = r->tj.own;
    struct MHD_Response *resp;
    size_t len = 0, kept = 0;
    uint64_t dropped = 0;
    char *json;

    r->tj.own = NULL; /* the answer is the trace: http_answer adds nothing to it */
    if (!t)
        return http_answer_status(r, DVPP_ESYS, NULL, "no capture");
    dvppd_trace_counts(t, &kept, &dropped);
    json = dvppd_trace_json(t, &len);
    dvppd_trace_unref(t);
    if (!json)
        return MHD_NO;
    resp = MHD_create_response_from_buffer(len, json, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(json);
        return MHD_NO;
    }
    http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    http_header_printf(resp, "X-Dvpp-Trace-Events", "%zu", kept);
    http_header_printf(resp, "X-Dvpp-Trace-Dropped", "%" PRIu64, dropped);
    return http_answer(r, 200, resp);
}
