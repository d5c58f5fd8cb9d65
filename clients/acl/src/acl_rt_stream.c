/* acl_rt_stream.c: streams, tasks and events over libdvpp's device model.
 *
 * Each stream is one dvpp_stream, so its tasks run in submission order,
 * one at a time, whatever engines they use; streams run concurrently. A
 * task is the caller's (run, fini, ctx) wrapped in an acli_task: run goes
 * on a worker, and the job's completion (on the worker, before the
 * stream's next task starts) calls fini, records the stream's first error
 * with the message run left on the worker's thread, and counts the task
 * done under the device's mutex, waking syncs and blocked submitters.
 *
 * Back-pressure: an engine takes queue_depth tasks (submitted, not yet
 * completed, counted per device under its mutex); a submit past that waits
 * on the device's condition variable, which every completion signals, as
 * the chip's task queue makes its callers wait. libdvpp has a spare job
 * record per channel beyond that (acl_rt_device.c), so it does not refuse
 * an admitted task for a full queue.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl_rt_int.h"

struct acli_task {
    acli_stream *s;
    int engine;
    acli_run_fn run;
    acli_fini_fn fini;
    void *ctx;
    dvpp_task *dt;            /* while run runs */
    aclError code;            /* run's result */
    char msg[ACLI_MSG_LEN];   /* its message */
};

/* --- making and closing streams ---------------------------------------------- */

aclError acli_stream_make_locked(acli_ctx *ctx, bool is_default, bool is_private,
                                 acli_stream **out)
{
    acli_device *dev = ctx->dev;
    acli_stream *s = calloc(1, sizeof(*s));
    dvpp_err err;
    dvpp_status st;

    if (!s)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "no memory for a stream");
    dvpp_err_clear(&err);
    st = dvpp_stream_new(dev->dd, 0, &s->ds, &err);
    if (st != DVPP_OK) {
        free(s);
        return acli_from_dvpp(st, err.msg);
    }
    s->dev = dev;
    s->ctx = ctx;
    s->is_default = is_default;
    s->is_private = is_private;
    atomic_init(&s->canceled, false);
    if (!is_default && !is_private && !acli_handle_add(s, (acli_kind)ACLI_RT_STREAM)) {
        dvpp_stream_free(s->ds);
        free(s);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "no memory to register a stream");
    }
    s->ctx_next = ctx->streams;
    ctx->streams = s;
    pthread_mutex_lock(&dev->mu);
    s->dev_next = dev->streams;
    if (dev->streams)
        dev->streams->dev_prev = s;
    dev->streams = s;
    pthread_mutex_unlock(&dev->mu);
    *out = s;
    return ACL_SUCCESS;
}

/* Under dev->mu: every task done, nobody waiting. */
static void wait_idle_locked(acli_stream *s)
{
    while (s->completed != s->submitted || s->waiters)
        pthread_cond_wait(&s->dev->cv, &s->dev->mu);
}

void acli_stream_release_orphan(acli_stream *s)
{
    if (s->state && s->state_free)
        s->state_free(s->state);
    s->state = NULL;
    s->state_free = NULL;
    acli_report_forget_key(s);
    if (!s->is_private) {
        free(s);
        return;
    }
    /* The channel that made it still holds it: acli_stream_destroy frees. */
    s->dev = NULL;
    s->ctx = NULL;
    s->ds = NULL;
}

void acli_stream_close(acli_stream *s)
{
    acli_device *dev = s->dev;

    pthread_mutex_lock(&dev->mu);
    s->closing = true;
    wait_idle_locked(s);
    if (s->dev_prev)
        s->dev_prev->dev_next = s->dev_next;
    else
        dev->streams = s->dev_next;
    if (s->dev_next)
        s->dev_next->dev_prev = s->dev_prev;
    pthread_mutex_unlock(&dev->mu);
    dvpp_stream_free(s->ds);
    acli_stream_release_orphan(s);
}

void acli_device_cancel_streams(acli_device *dev)
{
    pthread_mutex_lock(&dev->mu);
    for (acli_stream *s = dev->streams; s; s = s->dev_next) {
        atomic_store(&s->canceled, true);
        s->closing = true;
    }
    pthread_mutex_unlock(&dev->mu);
    /* Queued jobs complete unrun (their fini sees the abort); running ones
     * see acli_task_canceled; BLOCK callbacks stop waiting. */
    dvpp_device_cancel_all(dev->dd);
    acli_report_wake_blocked();
    pthread_mutex_lock(&dev->mu);
    pthread_cond_broadcast(&dev->cv);
    for (acli_stream *s = dev->streams; s; s = s->dev_next)
        wait_idle_locked(s);
    pthread_mutex_unlock(&dev->mu);
}

/* Unlink @s from its context (under mu). */
static void ctx_unlink_locked(acli_stream *s)
{
    acli_stream **pp = &s->ctx->streams;

    while (*pp && *pp != s)
        pp = &(*pp)->ctx_next;
    if (*pp)
        *pp = s->ctx_next;
}

/* --- the bridge: streams -------------------------------------------------------------- */

aclError acli_stream_get(aclrtStream stream, acli_stream **out)
{
    acli_process *P = acli_proc();
    aclError rc = ACL_SUCCESS;
    acli_ctx *c;

    if (!out)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acli_stream_get: out is NULL");
    pthread_mutex_lock(&P->mu);
    if (!stream) {
        c = acli_ctx_current_locked();
        if (c)
            *out = c->def_stream;
        else
            rc = acli_fail(ACL_ERROR_RT_CONTEXT_NULL,
                           "the default stream needs a current context (aclrtSetDevice or "
                           "aclrtSetCurrentContext on this thread)");
    } else if (acli_handle_ok(stream, (acli_kind)ACLI_RT_STREAM)) {
        *out = stream;
    } else {
        rc = acli_fail(ACL_ERROR_INVALID_PARAM, "stream %p is not a live stream", stream);
    }
    pthread_mutex_unlock(&P->mu);
    return rc;
}

aclError acli_stream_create(acli_stream **out)
{
    acli_process *P = acli_proc();
    aclError rc;
    acli_ctx *c;

    if (!out)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acli_stream_create: out is NULL");
    *out = NULL;
    pthread_mutex_lock(&P->mu);
    c = acli_ctx_current_locked();
    if (c)
        rc = acli_stream_make_locked(c, false, true, out);
    else
        rc = acli_fail(ACL_ERROR_RT_CONTEXT_NULL,
                       "the thread has no current context (aclrtSetDevice or "
                       "aclrtSetCurrentContext first)");
    pthread_mutex_unlock(&P->mu);
    return rc;
}

void acli_stream_destroy(acli_stream *s)
{
    acli_process *P = acli_proc();
    bool live;

    if (!s)
        return;
    pthread_mutex_lock(&P->mu);
    live = s->ctx != NULL;
    if (live)
        ctx_unlink_locked(s);
    pthread_mutex_unlock(&P->mu);
    if (live)
        acli_stream_close(s);
    free(s);
}

aclError acli_stream_wait(acli_stream *s, int32_t timeout_ms)
{
    acli_device *dev = s->dev;
    char msg[ACLI_MSG_LEN];
    struct timespec until;
    aclError code = ACL_SUCCESS;
    bool timed_out = false;
    uint64_t target;

    if (!dev)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "the stream's device was reset");
    if (timeout_ms > 0)
        acli_deadline_ms(&until, timeout_ms);
    pthread_mutex_lock(&dev->mu);
    target = s->submitted;
    s->waiters++;
    while (s->completed < target) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&dev->cv, &dev->mu);
        } else if (pthread_cond_timedwait(&dev->cv, &dev->mu, &until) == ETIMEDOUT &&
                   s->completed < target) {
            timed_out = true;
            break;
        }
    }
    if (!timed_out && s->first_code) {
        code = s->first_code;
        memcpy(msg, s->first_msg, sizeof(msg));
        s->first_code = ACL_SUCCESS;
    }
    s->waiters--;
    if (s->closing)
        pthread_cond_broadcast(&dev->cv);
    pthread_mutex_unlock(&dev->mu);
    if (timed_out)
        return acli_fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                         "the stream's tasks did not finish within %d ms", (int)timeout_ms);
    if (code)
        /* Logged already, on the worker that ran the task. */
        return acli_fail_quiet(code, "%s", msg);
    return ACL_SUCCESS;
}

aclError acli_stream_sync(acli_stream *s)
{
    if (!s)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acli_stream_sync: stream is NULL");
    return acli_stream_wait(s, -1);
}

aclError acli_device_sync(acli_device *dev)
{
    acli_stream **all;
    aclError code = ACL_SUCCESS;
    char msg[ACLI_MSG_LEN];
    size_t n = 0, i = 0;

    pthread_mutex_lock(&dev->mu);
    for (acli_stream *s = dev->streams; s; s = s->dev_next)
        n++;
    all = calloc(n ? n : 1, sizeof(*all));
    if (!all) {
        pthread_mutex_unlock(&dev->mu);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "aclrtSynchronizeDevice: no memory");
    }
    /* Held as waiters, the streams cannot be freed under us. */
    for (acli_stream *s = dev->streams; s; s = s->dev_next) {
        s->waiters++;
        all[i++] = s;
    }
    for (i = 0; i < n; i++) {
        uint64_t target = all[i]->submitted;
        while (all[i]->completed < target)
            pthread_cond_wait(&dev->cv, &dev->mu);
    }
    for (i = 0; i < n; i++) {
        /* Reported, not cleared: the stream's own sync reports it too. */
        if (!code && all[i]->first_code) {
            code = all[i]->first_code;
            memcpy(msg, all[i]->first_msg, sizeof(msg));
        }
        all[i]->waiters--;
    }
    pthread_cond_broadcast(&dev->cv);
    pthread_mutex_unlock(&dev->mu);
    free(all);
    return code ? acli_fail_quiet(code, "%s", msg) : ACL_SUCCESS;
}

/* --- the bridge: tasks ---------------------------------------------------------------- */

static dvpp_status task_main(dvpp_task *dt, void *ctx, void *worker_state, dvpp_err *err)
{
    acli_task *t = ctx;
    const char *m;

    (void)worker_state;
    (void)err;
    acli_msg_clear();
    t->dt = dt;
    t->code = t->run(t->ctx, t);
    t->dt = NULL;
    if (t->code == ACL_SUCCESS)
        return DVPP_OK;
    m = acli_msg_get();
    if (m)
        snprintf(t->msg, sizeof(t->msg), "%s", m);
    else
        snprintf(t->msg, sizeof(t->msg), "a task failed with error %d", t->code);
    /* Any failing status: the ACL code travels in the task itself. */
    return DVPP_ECODEC;
}

static void task_done(void *ctx, uint64_t ticket, dvpp_status status, const dvpp_err *err)
{
    acli_task *t = ctx;
    acli_stream *s = t->s;
    acli_device *dev = s->dev;

    (void)ticket;
    if (status != DVPP_OK && t->code == ACL_SUCCESS) {
        /* Never ran: canceled by a teardown (or libdvpp's own refusal). */
        t->code = ACL_ERROR_RT_DEVICE_TASK_ABORT;
        snprintf(t->msg, sizeof(t->msg), "a task was canceled before it ran: %s",
                 err && err->msg[0] ? err->msg : "the device was reset");
    }
    t->fini(t->ctx, t->code);
    pthread_mutex_lock(&dev->mu);
    if (t->code && !s->first_code) {
        s->first_code = t->code;
        memcpy(s->first_msg, t->msg, sizeof(s->first_msg));
    }
    s->completed++;
    dev->queued[t->engine]--;
    pthread_cond_broadcast(&dev->cv);
    pthread_mutex_unlock(&dev->mu);
    free(t);
}

/* A task libdvpp refused although acli_submit admitted it (a full queue
 * only in the moment after a completion; budgets are not configured):
 * the retry waits this long for a completion first. */
#define SUBMIT_RETRY_MS 1

aclError acli_submit(acli_stream *s, int engine, acli_run_fn run, acli_fini_fn fini, void *ctx)
{
    acli_device *dev;
    acli_task *t;
    dvpp_job job;
    dvpp_err err;
    dvpp_status st;
    struct timespec until;
    aclError rc = ACL_SUCCESS;

    if (!s || !run || !fini || engine < 0 || engine >= DVPP_ENGINE_COUNT)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acli_submit: bad stream, engine or function");
    dev = s->dev;
    if (!dev)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "the stream's device was reset");
    t = calloc(1, sizeof(*t));
    if (!t)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "no memory for a task");
    *t = (acli_task){.s = s, .engine = engine, .run = run, .fini = fini, .ctx = ctx};
    job = (dvpp_job){.engine = (dvpp_engine)engine, .fn = task_main, .done = task_done,
                     .ctx = t};
    pthread_mutex_lock(&dev->mu);
    s->waiters++;
    for (;;) {
        if (s->closing || atomic_load(&s->canceled)) {
            rc = acli_fail(ACL_ERROR_INVALID_PARAM, "the stream is being destroyed or its "
                           "device reset");
            break;
        }
        if (dev->queued[engine] >= dev->depth) {
            /* Full: the next completion makes room. */
            pthread_cond_wait(&dev->cv, &dev->mu);
            continue;
        }
        dvpp_err_clear(&err);
        /* dev->mu is never taken under libdvpp's lock (completions run
         * with it released), so holding it here is safe. */
        st = dvpp_device_submit(s->ds, &job, NULL, &err);
        if (st == DVPP_OK) {
            s->submitted++;
            dev->queued[engine]++;
            break;
        }
        if (st != DVPP_EAGAIN) {
            rc = acli_from_dvpp(st, err.msg);
            break;
        }
        acli_deadline_ms(&until, SUBMIT_RETRY_MS);
        pthread_cond_timedwait(&dev->cv, &dev->mu, &until);
    }
    s->waiters--;
    if (s->closing)
        pthread_cond_broadcast(&dev->cv);
    pthread_mutex_unlock(&dev->mu);
    if (rc)
        free(t);
    return rc;
}

void *acli_task_state(acli_task *t, void *(*make)(void), void (*free_fn)(void *state))
{
    acli_stream *s = t->s;

    if (!s->state && make) {
        s->state = make();
        s->state_free = s->state ? free_fn : NULL;
    }
    return s->state;
}

bool acli_task_canceled(const acli_task *t)
{
    return atomic_load(&t->s->canceled) || (t->dt && dvpp_task_canceled(t->dt));
}

/* --- streams: API ---------------------------------------------------------------------- */

aclError aclrtCreateStream(aclrtStream *stream)
{
    acli_process *P = acli_proc();
    acli_stream *s = NULL;
    aclError rc;
    acli_ctx *c;

    if (!stream)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
    *stream = NULL;
    pthread_mutex_lock(&P->mu);
    c = acli_ctx_current_locked();
    if (c)
        rc = acli_stream_make_locked(c, false, false, &s);
    else
        rc = acli_fail(ACL_ERROR_RT_CONTEXT_NULL,
                       "aclrtCreateStream: the thread has no current context");
    pthread_mutex_unlock(&P->mu);
    if (rc == ACL_SUCCESS)
        *stream = s;
    return rc;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    acli_process *P = acli_proc();
    acli_stream *s = stream;

    if (!stream)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclrtDestroyStream: stream is NULL (the default stream goes with "
                         "its context)");
    pthread_mutex_lock(&P->mu);
    if (!acli_handle_remove(s, (acli_kind)ACLI_RT_STREAM)) {
        pthread_mutex_unlock(&P->mu);
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: %p is not a live stream",
                         stream);
    }
    ctx_unlink_locked(s);
    pthread_mutex_unlock(&P->mu);
    /* Waits for its tasks, as CANN asks programs to sync first. */
    acli_stream_close(s);
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    acli_stream *s;
    aclError rc = acli_stream_get(stream, &s);

    return rc ? rc : acli_stream_wait(s, -1);
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    acli_stream *s;
    aclError rc;

    if (timeout == 0 || timeout < -1)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclrtSynchronizeStreamWithTimeout: timeout %d ms (-1 or > 0)",
                         (int)timeout);
    rc = acli_stream_get(stream, &s);
    return rc ? rc : acli_stream_wait(s, timeout);
}

/* --- events ---------------------------------------------------------------------------------
 * A record is a task on the stream; aclrtSynchronizeEvent waits until no
 * record of the event is pending. An event destroyed with records pending
 * is freed by the last of them. */

typedef struct acli_event {
    unsigned pending;  /* (ev_mu) records submitted, not yet completed */
    bool destroyed;    /* (ev_mu) */
    bool timed;        /* keeps times (aclrtCreateEvent, ACL_EVENT_TIME_LINE) */
    bool stamped;      /* (ev_mu) a record has run */
    uint64_t stamp_ns; /* (ev_mu) CLOCK_MONOTONIC when the last record ran */
} acli_event;

#define EVENT_FLAGS (ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE)

static aclError event_create(const char *fn, aclrtEvent *event, bool timed)
{
    acli_process *P = acli_proc();
    acli_event *ev;
    bool ok;

    if (!event)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", fn);
    *event = NULL;
    pthread_mutex_lock(&P->mu);
    ok = acli_ctx_current_locked() != NULL;
    pthread_mutex_unlock(&P->mu);
    if (!ok)
        return acli_fail(ACL_ERROR_RT_CONTEXT_NULL, "%s: the thread has no current context", fn);
    ev = calloc(1, sizeof(*ev));
    if (!ev)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory", fn);
    ev->timed = timed;
    if (!acli_handle_add(ev, (acli_kind)ACLI_RT_EVENT)) {
        free(ev);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: no memory to register it", fn);
    }
    *event = ev;
    return ACL_SUCCESS;
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
    return event_create("aclrtCreateEvent", event, true);
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    if (flag & ~(uint32_t)EVENT_FLAGS) {
        if (event)
            *event = NULL;
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclrtCreateEventWithFlag: flag 0x%x has bits that are not "
                         "ACL_EVENT_* flags", (unsigned)flag);
    }
    return event_create("aclrtCreateEventWithFlag", event, (flag & ACL_EVENT_TIME_LINE) != 0);
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
    acli_process *P = acli_proc();
    acli_event *ev = event;

    if (!acli_handle_remove(ev, (acli_kind)ACLI_RT_EVENT))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent: %p is not a live event",
                         event);
    pthread_mutex_lock(&P->ev_mu);
    ev->destroyed = true;
    if (ev->pending)
        ev = NULL; /* the last record frees it */
    pthread_mutex_unlock(&P->ev_mu);
    free(ev);
    return ACL_SUCCESS;
}

/* Tasks of a stream run one at a time in order, so the time a record
 * runs is the time every earlier task of its stream has completed. */
static aclError event_record_run(void *ctx, acli_task *t)
{
    acli_process *P = acli_proc();
    acli_event *ev = ctx;
    struct timespec now;

    (void)t;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&P->ev_mu);
    ev->stamp_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    ev->stamped = true;
    pthread_mutex_unlock(&P->ev_mu);
    return ACL_SUCCESS;
}

/* Run or canceled, the record is over: a sync must not wait for it. */
static void event_record_fini(void *ctx, aclError status)
{
    acli_process *P = acli_proc();
    acli_event *ev = ctx;
    bool free_it;

    (void)status;
    pthread_mutex_lock(&P->ev_mu);
    ev->pending--;
    free_it = ev->destroyed && ev->pending == 0;
    pthread_cond_broadcast(&P->ev_cv);
    pthread_mutex_unlock(&P->ev_mu);
    if (free_it)
        free(ev);
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    acli_process *P = acli_proc();
    acli_event *ev = event;
    acli_stream *s;
    aclError rc;

    if (!acli_handle_ok(ev, (acli_kind)ACLI_RT_EVENT))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent: %p is not a live event",
                         event);
    rc = acli_stream_get(stream, &s);
    if (rc)
        return rc;
    pthread_mutex_lock(&P->ev_mu);
    ev->pending++;
    pthread_mutex_unlock(&P->ev_mu);
    rc = acli_submit(s, ACLI_RT_ENGINE, event_record_run, event_record_fini, ev);
    if (rc) {
        pthread_mutex_lock(&P->ev_mu);
        ev->pending--;
        pthread_cond_broadcast(&P->ev_cv);
        pthread_mutex_unlock(&P->ev_mu);
    }
    return rc;
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    acli_process *P = acli_proc();
    acli_event *ev = event;

    if (!acli_handle_ok(ev, (acli_kind)ACLI_RT_EVENT))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeEvent: %p is not a live "
                         "event", event);
    pthread_mutex_lock(&P->ev_mu);
    while (ev->pending)
        pthread_cond_wait(&P->ev_cv, &P->ev_mu);
    pthread_mutex_unlock(&P->ev_mu);
    return ACL_SUCCESS;
}

/* Whether @event has no record pending; false with the message set when
 * it is not a live event. */
static bool event_idle(const char *fn, aclrtEvent event, bool *idle, aclError *rc)
{
    acli_process *P = acli_proc();
    acli_event *ev = event;

    if (!acli_handle_ok(ev, (acli_kind)ACLI_RT_EVENT)) {
        *rc = acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %p is not a live event", fn, event);
        return false;
    }
    pthread_mutex_lock(&P->ev_mu);
    *idle = ev->pending == 0;
    pthread_mutex_unlock(&P->ev_mu);
    return true;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    aclError rc = ACL_SUCCESS;
    bool idle;

    if (!status)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus: status is NULL");
    if (!event_idle("aclrtQueryEventStatus", event, &idle, &rc))
        return rc;
    *status = idle ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    return ACL_SUCCESS;
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
    aclError rc = ACL_SUCCESS;
    bool idle;

    if (!status)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryEvent: status is NULL");
    if (!event_idle("aclrtQueryEvent", event, &idle, &rc))
        return rc;
    *status = idle ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
    return ACL_SUCCESS;
}

/* @ev's completion time, or the error when it has none to give. Under
 * ev_mu. */
static aclError event_stamp_locked(const acli_event *ev, const char *which, uint64_t *ns)
{
    if (!ev->timed)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: the %s event keeps "
                         "no times (created without ACL_EVENT_TIME_LINE)", which);
    if (ev->pending)
        return acli_fail(ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                         "aclrtEventElapsedTime: the %s event's record has not completed", which);
    if (!ev->stamped)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclrtEventElapsedTime: the %s event was never recorded", which);
    *ns = ev->stamp_ns;
    return ACL_SUCCESS;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    acli_process *P = acli_proc();
    const acli_event *start = startEvent, *end = endEvent;
    uint64_t t0 = 0, t1 = 0;
    aclError rc;

    if (!ms)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: ms is NULL");
    if (!acli_handle_ok(start, (acli_kind)ACLI_RT_EVENT) ||
        !acli_handle_ok(end, (acli_kind)ACLI_RT_EVENT))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: %p is not a live "
                         "event", acli_handle_ok(start, (acli_kind)ACLI_RT_EVENT) ? endEvent
                                                                                : startEvent);
    pthread_mutex_lock(&P->ev_mu);
    rc = event_stamp_locked(start, "start", &t0);
    if (!rc)
        rc = event_stamp_locked(end, "end", &t1);
    pthread_mutex_unlock(&P->ev_mu);
    if (rc)
        return rc;
    *ms = (float)(t1 >= t0 ? (double)(t1 - t0) / 1e6 : -(double)(t0 - t1) / 1e6);
    return ACL_SUCCESS;
}
