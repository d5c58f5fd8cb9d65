/* dvpp_device: engines, channels, streams, jobs, batch jobs, admission.
 *
 * Locking: one mutex per device (d->mu) guards every field below except the
 * atomic cancel flags (read by task functions without the lock) and the
 * immutable configuration. Task functions and callbacks run with the mutex
 * released. Condition variables: one per engine (work available, or the
 * device is stopping) and one per device (a job, item or batch completed).
 *
 * Job records are allocated once per engine (queue_depth of them); a record
 * is free, queued behind its stream, in its engine's ready queue, or running.
 * Tickets are (generation << 32) | (record index + 1), so a stale ticket never
 * names a reused record.
 */
#include "dvpp_device.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "dvpp_mem.h"

struct dvpp_task {
    dvpp_device *dev;
    const atomic_bool *cancel; /* job's or batch's flag */
    const atomic_size_t *cancel_from; /* batch items: index >= it are
                                         canceled; NULL for jobs */
    uint64_t deadline_ns;
    size_t index;
    dvpp_engine engine;
    unsigned channel;
};

typedef struct job_rec {
    dvpp_job job;
    dvpp_stream *stream;
    struct job_rec *next; /* free list, stream pending list or ready queue */
    uint64_t submit_ns;
    uint64_t ticket;
    uint32_t gen;
    bool in_use;
    atomic_bool cancel;
} job_rec;

typedef struct engine engine;

typedef struct worker {
    engine *eng;
    unsigned channel;
    void *state;
    bool state_ok;
    pthread_t thread;
    bool ran;         /* a task since the last idle trim (under d->mu) */
    uint64_t last_ns; /* when that task ended */
} worker;

struct engine {
    dvpp_device *dev;
    dvpp_engine id;
    unsigned channels;    /* workers made (states initialised, threads started) */
    atomic_uint active;   /* workers that take work: the rest are parked */
    unsigned depth;
    const dvpp_engine_backend *backend;
    job_rec *recs; /* depth records */
    job_rec *free_list;
    job_rec *head, *tail; /* ready queue */
    dvpp_batch *batches;  /* batches with items left to dispatch */
    bool toggle;          /* alternate between jobs and batch items */
    worker *workers;
    unsigned started;
    pthread_cond_t cv;       /* active workers wait here for work */
    pthread_cond_t park_cv;  /* parked ones here, so a job's signal never
                                lands on a worker that will not take it */
    dvpp_engine_counters c;
};

struct dvpp_stream {
    dvpp_device *dev;
    dvpp_stream *prev, *next; /* device list */
    job_rec *active;          /* in the ready queue or running */
    job_rec *pend_head, *pend_tail;
    uint64_t submitted, completed;
    dvpp_status first_status;
    dvpp_err first_err;
    int efd;
};

struct dvpp_batch {
    dvpp_device *dev;
    dvpp_batch *prev, *next;  /* device list */
    dvpp_batch *enext;        /* engine dispatch list */
    bool in_engine_list;
    dvpp_batch_desc desc;
    uint64_t id;
    dvpp_status *status; /* n items; DVPP_EBUSY until complete */
    size_t next_item, done, failed, running;
    size_t first_failed;
    dvpp_err first_err;
    dvpp_status result;
    dvpp_err result_err; /* strict: the item that stopped the batch */
    size_t result_idx;   /* strict: its index, SIZE_MAX when none failed */
    uint64_t hold_pixels, hold_bytes;
    bool stop, finishing, finished;
    atomic_bool cancel;
    /* Strict: the items a failure cancels, those above the lowest failing
     * one; the items below it keep running (they were started before it,
     * in index order) so the batch's error is the lowest failing item's,
     * whatever the channel count and timing. */
    atomic_size_t cancel_from;
};

struct dvpp_device {
    pthread_mutex_t mu;
    pthread_cond_t done_cv;
    engine eng[DVPP_ENGINE_COUNT];
    dvpp_device_config cfg;
    job_rec **index; /* ticket index -> record */
    size_t nrecs;
    dvpp_stream *streams;
    dvpp_batch *batches;
    uint64_t next_batch_id;
    uint64_t inflight_pixels, inflight_bytes;
    uint64_t held_bytes;  /* of inflight_bytes: dvpp_device_hold_bytes */
    uint64_t outstanding; /* admitted jobs not yet completed */
    uint64_t batches_open;
    uint64_t rejected[DVPP_REJECT_COUNT];
    uint64_t idle_trims, idle_trimmed_bytes;
    bool stopping;
    atomic_bool stop_flag;
    atomic_uint_fast64_t beats; /* tasks checking in (dvpp_task_canceled) */
};

static const char *const g_engine_names[DVPP_ENGINE_COUNT] = {
    "jpegd", "jpege", "pngd", "vpc", "aipp", "vdec", "venc"};
static const char *const g_reject_names[DVPP_REJECT_COUNT] = {
    "queue", "pixels", "bytes", "batches", "too_large", "disabled"};

const char *dvpp_engine_name(int id)
{
    if (id < 0 || id >= DVPP_ENGINE_COUNT)
        return "unknown";
    return g_engine_names[id];
}

const char *dvpp_reject_name(int reason)
{
    if (reason < 0 || reason >= DVPP_REJECT_COUNT)
        return "unknown";
    return g_reject_names[reason];
}

static const dvpp_engine_backend g_cpu_backend = {"cpu", NULL, NULL, NULL, NULL};

const dvpp_engine_backend *dvpp_backend_cpu(void)
{
    return &g_cpu_backend;
}

uint64_t dvpp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void dvpp_device_config_default(dvpp_device_config *cfg)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned ch = n < 1 ? 1u : n > 8 ? 8u : (unsigned)n;

    memset(cfg, 0, sizeof(*cfg));
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++) {
        cfg->channels[i] = ch;
        cfg->queue_depth[i] = 64;
    }
    cfg->max_batches = 16;
    cfg->idle_trim_ms = DVPP_DEVICE_IDLE_TRIM_MS;
    cfg->idle_keep_bytes = DVPP_DEVICE_IDLE_KEEP_BYTES;
}

/* --- task helpers ----------------------------------------------------------- */

bool dvpp_task_canceled(const dvpp_task *t)
{
    /* A long task polls this between frames or strips: proof of life for
     * a watchdog (dvpp_device_counters.progress). */
    atomic_fetch_add_explicit(&t->dev->beats, 1, memory_order_relaxed);
    return atomic_load_explicit(t->cancel, memory_order_relaxed) ||
           (t->cancel_from &&
            t->index >= atomic_load_explicit(t->cancel_from, memory_order_relaxed)) ||
           atomic_load_explicit(&t->dev->stop_flag, memory_order_relaxed);
}

uint64_t dvpp_task_deadline(const dvpp_task *t)
{
    return t->deadline_ns;
}

bool dvpp_task_expired(const dvpp_task *t)
{
    return t->deadline_ns && dvpp_now_ns() >= t->deadline_ns;
}

size_t dvpp_task_index(const dvpp_task *t)
{
    return t->index;
}

dvpp_engine dvpp_task_engine(const dvpp_task *t)
{
    return t->engine;
}

unsigned dvpp_task_channel(const dvpp_task *t)
{
    return t->channel;
}

unsigned dvpp_task_idle_channels(const dvpp_task *t)
{
    engine *e = &t->dev->eng[t->engine];
    uint64_t busy, active;

    pthread_mutex_lock(&t->dev->mu);
    busy = e->c.running + e->c.queued; /* running counts @t itself */
    active = atomic_load(&e->active);
    pthread_mutex_unlock(&t->dev->mu);
    return busy < active ? (unsigned)(active - busy) : 0;
}

/* --- internals (d->mu held unless said otherwise) ------------------------------ */

static void ready_push(engine *e, job_rec *r)
{
    r->next = NULL;
    if (e->tail)
        e->tail->next = r;
    else
        e->head = r;
    e->tail = r;
    pthread_cond_signal(&e->cv);
}

static job_rec *ready_pop(engine *e)
{
    job_rec *r = e->head;
    e->head = r->next;
    if (!e->head)
        e->tail = NULL;
    r->next = NULL;
    return r;
}

static void wake_all_engines(dvpp_device *d)
{
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++) {
        pthread_cond_broadcast(&d->eng[i].cv);
        pthread_cond_broadcast(&d->eng[i].park_cv);
    }
}

static void engine_unlist_batch(engine *e, dvpp_batch *b)
{
    dvpp_batch **pp = &e->batches;
    if (!b->in_engine_list)
        return;
    while (*pp && *pp != b)
        pp = &(*pp)->enext;
    if (*pp)
        *pp = b->enext;
    b->enext = NULL;
    b->in_engine_list = false;
}

static void count_failure(engine *e, dvpp_status st)
{
    e->c.failed++;
    if (st == DVPP_ECANCELED)
        e->c.canceled++;
    else if (st == DVPP_ETIMEDOUT)
        e->c.timedout++;
}

/* Stop dispatching @b: items not started complete with DVPP_ECANCELED;
 * running ones see dvpp_task_canceled() when @cancel_running (a cancel),
 * else only those above b->cancel_from (a strict failure). */
static void batch_stop(dvpp_batch *b, bool cancel_running)
{
    engine *e = &b->dev->eng[b->desc.engine];
    size_t left;

    if (b->stop)
        return;
    b->stop = true;
    if (cancel_running)
        atomic_store(&b->cancel, true);
    left = b->desc.n - b->next_item;
    for (size_t i = b->next_item; i < b->desc.n; i++)
        b->status[i] = DVPP_ECANCELED;
    if (left && b->next_item < b->first_failed) {
        b->first_failed = b->next_item;
        dvpp_err_set(&b->first_err, DVPP_ECANCELED, NULL, "batch canceled");
    }
    b->failed += left;
    e->c.failed += left;
    e->c.canceled += left;
    b->next_item = b->desc.n;
    engine_unlist_batch(e, b);
}

/* When every item has completed: run the callback (mutex released), then
 * mark the batch finished and release its admission. */
static void batch_maybe_finish(dvpp_batch *b)
{
    dvpp_device *d = b->dev;

    if (b->finishing || b->done + b->failed != b->desc.n)
        return;
    b->finishing = true;
    engine_unlist_batch(&d->eng[b->desc.engine], b);
    if (b->desc.done) {
        dvpp_status st = b->result;
        pthread_mutex_unlock(&d->mu);
        b->desc.done(b->desc.ctx, b, st);
        pthread_mutex_lock(&d->mu);
    }
    b->finished = true;
    d->inflight_pixels -= b->hold_pixels;
    d->inflight_bytes -= b->hold_bytes;
    d->batches_open--;
    pthread_cond_broadcast(&d->done_cv);
    if (d->stopping)
        wake_all_engines(d);
}

/* The fault_stall_ns / fault_deaf_ns test hooks: a worker that stalls
 * before its task starts (deaf: without looking at its cancellation for
 * that long). The task then runs only if it may still: not canceled and
 * not past its deadline (DVPP_ECANCELED / DVPP_ETIMEDOUT into @err). */
static dvpp_status fault_stall(const dvpp_task *t, dvpp_err *err)
{
    dvpp_device *d = t->dev;
    struct timespec deaf = {(time_t)(d->cfg.fault_deaf_ns / 1000000000u),
                            (long)(d->cfg.fault_deaf_ns % 1000000000u)};
    uint64_t until;
    struct timespec ms = {0, 1000000};

    while (nanosleep(&deaf, &deaf) != 0 && errno == EINTR)
        ; /* the rest of it after a signal */
    until = dvpp_now_ns() + d->cfg.fault_stall_ns;
    for (;;) {
        if (dvpp_task_canceled(t))
            return dvpp_err_set(err, DVPP_ECANCELED, NULL, "canceled");
        if (t->deadline_ns && dvpp_now_ns() >= t->deadline_ns)
            return dvpp_err_set(err, DVPP_ETIMEDOUT, NULL,
                                "deadline passed before the task started");
        if (dvpp_now_ns() >= until)
            return DVPP_OK;
        nanosleep(&ms, NULL);
    }
}

static void run_job(worker *w, job_rec *r)
{
    engine *e = w->eng;
    dvpp_device *d = e->dev;
    dvpp_stream *s = r->stream;
    dvpp_task task;
    dvpp_err err;
    dvpp_status st;
    uint64_t ticket = r->ticket;
    uint64_t now = dvpp_now_ns(), end;
    bool ran = false;

    e->c.queued--;
    e->c.wait_ns += now - r->submit_ns;
    dvpp_err_clear(&err);
    if (atomic_load(&r->cancel) || d->stopping) {
        st = dvpp_err_set(&err, DVPP_ECANCELED, NULL, "job canceled");
    } else if (r->job.deadline_ns && now >= r->job.deadline_ns) {
        st = dvpp_err_set(&err, DVPP_ETIMEDOUT, NULL,
                          "deadline passed before the job started");
    } else {
        ran = true;
        st = DVPP_OK;
        e->c.running++;
    }
    task = (dvpp_task){d, &r->cancel, NULL, r->job.deadline_ns, 0, e->id, w->channel};
    pthread_mutex_unlock(&d->mu);
    if (ran && (d->cfg.fault_stall_ns || d->cfg.fault_deaf_ns))
        st = fault_stall(&task, &err);
    if (ran && st == DVPP_OK) {
        st = r->job.fn(&task, r->job.ctx, w->state, &err);
        if (st != DVPP_OK && err.status != st)
            err.status = st;
        end = dvpp_now_ns();
    } else {
        end = now;
    }
    if (r->job.done)
        r->job.done(r->job.ctx, ticket, st, &err);
    pthread_mutex_lock(&d->mu);
    if (ran) {
        e->c.running--;
        e->c.run_ns += end - now;
    }
    if (st == DVPP_OK) {
        e->c.done++;
        e->c.pixels += r->job.pixels;
        e->c.bytes += r->job.bytes;
    } else {
        count_failure(e, st);
        if (s->first_status == DVPP_OK) {
            s->first_status = st;
            s->first_err = err;
        }
    }
    d->inflight_pixels -= r->job.pixels;
    d->inflight_bytes -= r->job.bytes;
    /* Release the record, then start the stream's next task. */
    r->in_use = false;
    r->gen++;
    r->stream = NULL;
    r->next = e->free_list;
    e->free_list = r;
    s->active = NULL;
    if (s->pend_head) {
        job_rec *n = s->pend_head;
        s->pend_head = n->next;
        if (!s->pend_head)
            s->pend_tail = NULL;
        s->active = n;
        ready_push(&d->eng[n->job.engine], n);
    }
    s->completed++;
    if (s->efd >= 0) {
        uint64_t one = 1;
        ssize_t wr = write(s->efd, &one, sizeof(one));
        (void)wr; /* only fails when the counter would overflow */
    }
    d->outstanding--;
    pthread_cond_broadcast(&d->done_cv);
    if (d->stopping && d->outstanding == 0)
        wake_all_engines(d);
}

static void run_item(worker *w, dvpp_batch *b, size_t idx)
{
    engine *e = w->eng;
    dvpp_device *d = e->dev;
    dvpp_task task = {d, &b->cancel, &b->cancel_from, b->desc.deadline_ns, idx, e->id,
                      w->channel};
    dvpp_err err;
    dvpp_status st;
    uint64_t now = dvpp_now_ns(), end;
    bool ran = false;

    dvpp_err_clear(&err);
    if (b->stop || d->stopping) {
        st = dvpp_err_set(&err, DVPP_ECANCELED, NULL, "batch canceled");
    } else if (b->desc.deadline_ns && now >= b->desc.deadline_ns) {
        st = dvpp_err_set(&err, DVPP_ETIMEDOUT, NULL,
                          "deadline passed before item %zu started", idx);
    } else {
        ran = true;
        st = DVPP_OK;
        e->c.running++;
    }
    pthread_mutex_unlock(&d->mu);
    if (ran && (d->cfg.fault_stall_ns || d->cfg.fault_deaf_ns))
        st = fault_stall(&task, &err);
    if (ran && st == DVPP_OK) {
        st = b->desc.fn(&task, b->desc.ctx, w->state, &err);
        if (st != DVPP_OK && err.status != st)
            err.status = st;
        end = dvpp_now_ns();
    } else {
        end = now;
    }
    pthread_mutex_lock(&d->mu);
    if (ran) {
        e->c.running--;
        e->c.run_ns += end - now;
    }
    b->running--;
    b->status[idx] = st;
    if (st == DVPP_OK) {
        b->done++;
        e->c.done++;
        e->c.pixels += b->desc.pixels_per_item;
        e->c.bytes += b->desc.bytes_per_item;
    } else {
        b->failed++;
        count_failure(e, st);
        /* The lowest failing index, so that default-mode results do not
         * depend on the channel count. */
        if (idx < b->first_failed) {
            b->first_failed = idx;
            b->first_err = err;
        }
        if (b->desc.strict &&
            (!b->stop ||
             (b->result_idx != SIZE_MAX && st != DVPP_ECANCELED && idx < b->result_idx))) {
            /* The first failure stops the batch; one below it, still
             * running then, takes its place when it fails too. */
            b->result = st;
            b->result_err = err;
            b->result_idx = idx;
            atomic_store(&b->cancel_from, idx + 1);
            batch_stop(b, false);
        }
    }
    pthread_cond_broadcast(&d->done_cv);
    batch_maybe_finish(b);
}

static bool pick_item(engine *e, dvpp_batch **bo, size_t *idx)
{
    dvpp_batch *b = e->batches;

    if (!b)
        return false;
    *bo = b;
    *idx = b->next_item++;
    b->running++;
    if (b->next_item == b->desc.n) {
        engine_unlist_batch(e, b);
    } else if (b->enext) {
        /* Round-robin between batches of this engine. */
        engine_unlist_batch(e, b);
        dvpp_batch **pp = &e->batches;
        while (*pp)
            pp = &(*pp)->enext;
        *pp = b;
        b->in_engine_list = true;
    }
    return true;
}

/* "vpc-worker-3": what top -H, gdb and a trace's thread names show. */
static void worker_name_thread(const worker *w)
{
    char name[16]; /* the kernel's limit, NUL included */

    snprintf(name, sizeof(name), "%s-worker-%u", g_engine_names[w->eng->id], w->channel);
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* A worker with a task behind it and nothing to do waits only until
 * idle_trim_ms after that task; then its backend trims its state, outside
 * the lock (the state is this worker's alone). A @parked worker (a reload
 * lowered the channels) trims at once. Under d->mu; false when there is
 * nothing to trim (the caller then waits as usual). */
static bool idle_wait(worker *w, bool parked)
{
    engine *e = w->eng;
    dvpp_device *d = e->dev;
    uint64_t due, freed;

    if (!w->ran || !d->cfg.idle_trim_ms || !e->backend->idle || !w->state_ok)
        return false;
    due = w->last_ns + (uint64_t)d->cfg.idle_trim_ms * 1000000u;
    if (!parked && dvpp_now_ns() < due) {
        /* e->cv runs on CLOCK_MONOTONIC, dvpp_now_ns()'s clock. A wake-up
         * (work, a stop, or none at all) sends the loop round again. */
        struct timespec ts = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};
        pthread_cond_timedwait(&e->cv, &d->mu, &ts);
        return true;
    }
    w->ran = false;
    pthread_mutex_unlock(&d->mu);
    freed = e->backend->idle(e->backend->ctx, e->id, w->channel, w->state,
                             d->cfg.idle_keep_bytes);
    pthread_mutex_lock(&d->mu);
    d->idle_trims++;
    d->idle_trimmed_bytes += freed;
    return true;
}

/* Note that @w just ran a task (under d->mu). */
static void worker_ran(worker *w)
{
    w->ran = true;
    w->last_ns = dvpp_now_ns();
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    engine *e = w->eng;
    dvpp_device *d = e->dev;

    worker_name_thread(w);
    pthread_mutex_lock(&d->mu);
    for (;;) {
        dvpp_batch *b;
        size_t idx;

        if (w->channel >= atomic_load(&e->active)) {
            /* Parked by dvpp_device_set_channels: no work until the
             * count grows again, and nothing to finish at a stop. */
            if (d->stopping)
                break;
            if (!idle_wait(w, true))
                pthread_cond_wait(&e->park_cv, &d->mu);
        } else if (e->head && (!e->batches || e->toggle)) {
            e->toggle = !e->toggle;
            run_job(w, ready_pop(e));
            worker_ran(w);
        } else if (pick_item(e, &b, &idx)) {
            e->toggle = !e->toggle;
            run_item(w, b, idx);
            worker_ran(w);
        } else if (d->stopping && d->outstanding == 0 && d->batches_open == 0) {
            break;
        } else if (d->stopping || !idle_wait(w, false)) {
            pthread_cond_wait(&e->cv, &d->mu);
        }
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* --- device ---------------------------------------------------------------- */

int dvpp_cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    int r = pthread_condattr_init(&a);

    if (r != 0)
        return r;
    r = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (r == 0)
        r = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return r;
}

static void engine_fini_states(engine *e)
{
    if (!e->workers)
        return;
    for (unsigned c = 0; c < e->channels; c++) {
        if (e->workers[c].state_ok && e->backend->fini)
            e->backend->fini(e->backend->ctx, e->id, c, e->workers[c].state);
    }
}

static void device_release(dvpp_device *d, bool mu_ok, int cv_ok)
{
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++) {
        engine *e = &d->eng[i];
        engine_fini_states(e);
        dvpp_free(e->workers, sizeof(worker) * DVPP_DEVICE_MAX_CHANNELS);
        dvpp_free(e->recs, sizeof(job_rec) * e->depth);
        if (i < cv_ok) {
            pthread_cond_destroy(&e->cv);
            pthread_cond_destroy(&e->park_cv);
        }
    }
    dvpp_free(d->index, sizeof(job_rec *) * d->nrecs);
    if (mu_ok) {
        pthread_cond_destroy(&d->done_cv);
        pthread_mutex_destroy(&d->mu);
    }
    dvpp_free(d, sizeof(*d));
}

/* Refuse new work, flag every admitted job and batch canceled (queued ones
 * complete with DVPP_ECANCELED without running; running ones see
 * dvpp_task_canceled) and wake every worker. Under d->mu. */
static void cancel_everything(dvpp_device *d)
{
    d->stopping = true;
    atomic_store(&d->stop_flag, true);
    for (size_t i = 0; i < d->nrecs; i++) {
        if (d->index[i]->in_use)
            atomic_store(&d->index[i]->cancel, true);
    }
    for (dvpp_batch *b = d->batches; b; b = b->next) {
        if (!b->stop) {
            if (b->result == DVPP_OK)
                b->result = DVPP_ECANCELED;
            batch_stop(b, true);
        }
    }
    for (dvpp_batch *b = d->batches; b; b = b->next)
        batch_maybe_finish(b);
    wake_all_engines(d);
}

void dvpp_device_cancel_all(dvpp_device *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    cancel_everything(d);
    pthread_mutex_unlock(&d->mu);
}

static void device_stop_and_join(dvpp_device *d)
{
    pthread_mutex_lock(&d->mu);
    cancel_everything(d);
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++) {
        engine *e = &d->eng[i];
        for (unsigned c = 0; c < e->started; c++)
            pthread_join(e->workers[c].thread, NULL);
        e->started = 0;
    }
}

static dvpp_status grow_workers(engine *e, unsigned n, dvpp_err *err);

static dvpp_status check_config(const dvpp_device_config *cfg, dvpp_err *err)
{
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++) {
        if (cfg->channels[i] > DVPP_DEVICE_MAX_CHANNELS)
            return dvpp_err_set(err, DVPP_EINVAL, "channels",
                                "%s: %u channels > %u", g_engine_names[i],
                                cfg->channels[i], DVPP_DEVICE_MAX_CHANNELS);
        if (cfg->channels[i] &&
            (cfg->queue_depth[i] < 1 || cfg->queue_depth[i] > DVPP_DEVICE_MAX_QUEUE))
            return dvpp_err_set(err, DVPP_EINVAL, "queue_depth",
                                "%s: queue depth %u not in [1, %u]",
                                g_engine_names[i], cfg->queue_depth[i],
                                DVPP_DEVICE_MAX_QUEUE);
    }
    return DVPP_OK;
}

dvpp_status dvpp_device_new(const dvpp_device_config *cfg, dvpp_device **out,
                            dvpp_err *err)
{
    dvpp_device *d;
    dvpp_status st;
    int cv_ok = 0;
    size_t k = 0;

    if (!out)
        return dvpp_err_set(err, DVPP_EINVAL, NULL, "out is NULL");
    *out = NULL;
    if (!cfg)
        return dvpp_err_set(err, DVPP_EINVAL, NULL, "config is NULL");
    st = check_config(cfg, err);
    if (st)
        return st;
    d = dvpp_calloc(1, sizeof(*d));
    if (!d)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "device");
    d->cfg = *cfg;
    d->next_batch_id = 1;
    atomic_init(&d->stop_flag, false);
    atomic_init(&d->beats, 0);
    if (pthread_mutex_init(&d->mu, NULL) != 0) {
        dvpp_free(d, sizeof(*d));
        return dvpp_err_set(err, DVPP_ESYS, NULL, "pthread_mutex_init");
    }
    if (pthread_cond_init(&d->done_cv, NULL) != 0) {
        pthread_mutex_destroy(&d->mu);
        dvpp_free(d, sizeof(*d));
        return dvpp_err_set(err, DVPP_ESYS, NULL, "pthread_cond_init");
    }
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++) {
        engine *e = &d->eng[i];
        e->dev = d;
        e->id = (dvpp_engine)i;
        e->backend = cfg->backend[i] ? cfg->backend[i] : &g_cpu_backend;
        if (dvpp_cond_init_monotonic(&e->cv) != 0) {
            device_release(d, true, cv_ok);
            return dvpp_err_set(err, DVPP_ESYS, NULL, "pthread_cond_init");
        }
        if (pthread_cond_init(&e->park_cv, NULL) != 0) {
            pthread_cond_destroy(&e->cv);
            device_release(d, true, cv_ok);
            return dvpp_err_set(err, DVPP_ESYS, NULL, "pthread_cond_init");
        }
        cv_ok++;
        if (!cfg->channels[i])
            continue;
        e->depth = cfg->queue_depth[i];
        e->recs = dvpp_calloc(e->depth, sizeof(job_rec));
        if (!e->recs) {
            e->depth = 0;
            device_release(d, true, cv_ok);
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "job records");
        }
        /* Room for every channel count a live change may ask for. */
        e->workers = dvpp_calloc(DVPP_DEVICE_MAX_CHANNELS, sizeof(worker));
        if (!e->workers) {
            device_release(d, true, cv_ok);
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "workers");
        }
        e->channels = cfg->channels[i];
        atomic_init(&e->active, cfg->channels[i]);
        for (unsigned r = e->depth; r-- > 0;) {
            atomic_init(&e->recs[r].cancel, false);
            e->recs[r].next = e->free_list;
            e->free_list = &e->recs[r];
        }
        d->nrecs += e->depth;
    }
    if (d->nrecs) {
        d->index = dvpp_calloc(d->nrecs, sizeof(job_rec *));
        if (!d->index) {
            device_release(d, true, cv_ok);
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "job index");
        }
        for (int i = 0; i < DVPP_ENGINE_COUNT; i++)
            for (unsigned r = 0; r < d->eng[i].depth; r++)
                d->index[k++] = &d->eng[i].recs[r];
    }
    /* Workers: a backend state each, made on this thread, then a thread. */
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++) {
        engine *e = &d->eng[i];
        unsigned want = e->channels;
        e->channels = 0;
        st = grow_workers(e, want, err);
        if (st) {
            device_stop_and_join(d);
            device_release(d, true, cv_ok);
            return st;
        }
    }
    *out = d;
    return DVPP_OK;
}

/* Workers [e->channels, n): a backend state each (on this thread), then a
 * thread each; the device lock is not held (backend init may allocate),
 * and only this call and dvpp_device_new grow e->channels. */
static dvpp_status grow_workers(engine *e, unsigned n, dvpp_err *err)
{
    dvpp_device *d = e->dev;

    while (e->channels < n) {
        worker *w = &e->workers[e->channels];
        dvpp_status st;
        int rc;

        w->eng = e;
        w->channel = e->channels;
        if (e->backend->init) {
            st = e->backend->init(e->backend->ctx, e->id, w->channel, &w->state, err);
            if (st)
                return st;
        }
        w->state_ok = true;
        rc = pthread_create(&w->thread, NULL, worker_main, w);
        if (rc != 0) {
            if (e->backend->fini)
                e->backend->fini(e->backend->ctx, e->id, w->channel, w->state);
            w->state_ok = false;
            return dvpp_err_set(err, DVPP_ESYS, NULL, "pthread_create: %s", strerror(rc));
        }
        pthread_mutex_lock(&d->mu);
        e->channels++;
        e->started++;
        pthread_mutex_unlock(&d->mu);
    }
    return DVPP_OK;
}

dvpp_status dvpp_device_set_channels(dvpp_device *d, dvpp_engine id, unsigned n,
                                     dvpp_err *err)
{
    engine *e;
    dvpp_status st;

    if (!d || (unsigned)id >= DVPP_ENGINE_COUNT)
        return dvpp_err_set(err, DVPP_EINVAL, "engine", "bad device or engine");
    if (n < 1 || n > DVPP_DEVICE_MAX_CHANNELS)
        return dvpp_err_set(err, DVPP_EINVAL, "channels", "%u channels not in [1, %u]", n,
                            DVPP_DEVICE_MAX_CHANNELS);
    e = &d->eng[id];
    if (!e->workers)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "channels",
                            "%s: the engine is disabled", g_engine_names[id]);
    st = grow_workers(e, n, err);
    if (st != DVPP_OK)
        return st;
    pthread_mutex_lock(&d->mu);
    atomic_store(&e->active, n);
    pthread_cond_broadcast(&e->cv);       /* leavers park, stayers re-check */
    pthread_cond_broadcast(&e->park_cv);  /* joiners start */
    pthread_mutex_unlock(&d->mu);
    return DVPP_OK;
}

unsigned dvpp_device_channels(dvpp_device *d, dvpp_engine id)
{
    if (!d || (unsigned)id >= DVPP_ENGINE_COUNT)
        return 0;
    return atomic_load(&d->eng[id].active);
}

static void stream_release(dvpp_stream *s)
{
    if (s->efd >= 0)
        close(s->efd);
    dvpp_free(s, sizeof(*s));
}

void dvpp_device_free(dvpp_device *d)
{
    if (!d)
        return;
    device_stop_and_join(d);
    while (d->streams) {
        dvpp_stream *s = d->streams;
        d->streams = s->next;
        stream_release(s);
    }
    while (d->batches) {
        dvpp_batch *b = d->batches;
        d->batches = b->next;
        dvpp_free(b->status, sizeof(dvpp_status) * b->desc.n);
        dvpp_free(b, sizeof(*b));
    }
    device_release(d, true, DVPP_ENGINE_COUNT);
}

void dvpp_device_get_counters(dvpp_device *d, dvpp_device_counters *out)
{
    pthread_mutex_lock(&d->mu);
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++)
        out->engine[i] = d->eng[i].c;
    memcpy(out->rejected, d->rejected, sizeof(out->rejected));
    out->inflight_pixels = d->inflight_pixels;
    out->inflight_bytes = d->inflight_bytes;
    out->held_bytes = d->held_bytes;
    out->batches_open = d->batches_open;
    out->idle_trims = d->idle_trims;
    out->idle_trimmed_bytes = d->idle_trimmed_bytes;
    out->progress = atomic_load_explicit(&d->beats, memory_order_relaxed);
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++)
        out->progress += d->eng[i].c.done + d->eng[i].c.failed;
    pthread_mutex_unlock(&d->mu);
}

/* --- streams and jobs ---------------------------------------------------- */

dvpp_status dvpp_stream_new(dvpp_device *d, unsigned flags, dvpp_stream **out,
                            dvpp_err *err)
{
    dvpp_stream *s;

    if (!out)
        return dvpp_err_set(err, DVPP_EINVAL, NULL, "out is NULL");
    *out = NULL;
    if (!d || (flags & ~DVPP_STREAM_EVENTFD))
        return dvpp_err_set(err, DVPP_EINVAL, NULL, "bad device or flags");
    s = dvpp_calloc(1, sizeof(*s));
    if (!s)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "stream");
    s->dev = d;
    s->efd = -1;
    if (flags & DVPP_STREAM_EVENTFD) {
        s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (s->efd < 0) {
            int e = errno;
            dvpp_free(s, sizeof(*s));
            return dvpp_err_set(err, DVPP_ESYS, NULL, "eventfd: %s", strerror(e));
        }
    }
    pthread_mutex_lock(&d->mu);
    s->next = d->streams;
    if (d->streams)
        d->streams->prev = s;
    d->streams = s;
    pthread_mutex_unlock(&d->mu);
    *out = s;
    return DVPP_OK;
}

int dvpp_stream_eventfd(const dvpp_stream *s)
{
    return s ? s->efd : -1;
}

dvpp_device *dvpp_stream_device(const dvpp_stream *s)
{
    return s ? s->dev : NULL;
}

void dvpp_stream_free(dvpp_stream *s)
{
    dvpp_device *d;

    if (!s)
        return;
    d = s->dev;
    pthread_mutex_lock(&d->mu);
    while (s->completed != s->submitted)
        pthread_cond_wait(&d->done_cv, &d->mu);
    if (s->prev)
        s->prev->next = s->next;
    else
        d->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    pthread_mutex_unlock(&d->mu);
    stream_release(s);
}

static dvpp_status reject(dvpp_device *d, dvpp_reject_reason why, dvpp_status st,
                          dvpp_err *err, const char *what)
{
    d->rejected[why]++;
    pthread_mutex_unlock(&d->mu);
    /* The reason's name as the field, so front ends can tell them apart. */
    return dvpp_err_set(err, st, dvpp_reject_name(why), "%s", what);
}

/* Admission of (px, by) against the budgets; d->mu held. On refusal returns
 * the reason (and unlocks through reject()). */
static int over_budget(const dvpp_device *d, uint64_t px, uint64_t by,
                       dvpp_reject_reason *why, dvpp_status *st)
{
    const dvpp_device_config *c = &d->cfg;

    if ((c->pixel_budget && px > c->pixel_budget) ||
        (c->byte_budget && by > c->byte_budget)) {
        *why = DVPP_REJECT_TOO_LARGE;
        *st = DVPP_ELIMIT;
        return 1;
    }
    if (c->pixel_budget && d->inflight_pixels + px > c->pixel_budget) {
        *why = DVPP_REJECT_PIXELS;
        *st = DVPP_EAGAIN;
        return 1;
    }
    if (c->byte_budget && d->inflight_bytes + by > c->byte_budget) {
        *why = DVPP_REJECT_BYTES;
        *st = DVPP_EAGAIN;
        return 1;
    }
    return 0;
}

dvpp_status dvpp_device_submit(dvpp_stream *s, const dvpp_job *job,
                               uint64_t *ticket, dvpp_err *err)
{
    dvpp_device *d;
    engine *e;
    job_rec *r;
    dvpp_reject_reason why;
    dvpp_status st;
    uint64_t base = 0;

    if (!s || !job || !job->fn || (unsigned)job->engine >= DVPP_ENGINE_COUNT)
        return dvpp_err_set(err, DVPP_EINVAL, "job", "bad stream or job");
    d = s->dev;
    e = &d->eng[job->engine];
    pthread_mutex_lock(&d->mu);
    if (!e->channels || d->stopping)
        return reject(d, DVPP_REJECT_DISABLED, DVPP_EUNSUPPORTED, err,
                      "engine disabled");
    if (!e->free_list)
        return reject(d, DVPP_REJECT_QUEUE, DVPP_EAGAIN, err, "engine queue full");
    if (over_budget(d, job->pixels, job->bytes, &why, &st))
        return reject(d, why, st, err,
                      st == DVPP_ELIMIT ? "job larger than the device budget"
                                        : "device budget in use");
    r = e->free_list;
    e->free_list = r->next;
    r->next = NULL;
    r->job = *job;
    r->stream = s;
    r->in_use = true;
    r->submit_ns = dvpp_now_ns();
    atomic_store(&r->cancel, false);
    d->inflight_pixels += job->pixels;
    d->inflight_bytes += job->bytes;
    d->outstanding++;
    e->c.queued++;
    s->submitted++;
    if (!s->active) {
        s->active = r;
        ready_push(e, r);
    } else {
        if (s->pend_tail)
            s->pend_tail->next = r;
        else
            s->pend_head = r;
        s->pend_tail = r;
    }
    for (int i = 0; i < (int)job->engine; i++)
        base += d->eng[i].depth;
    r->ticket = ((uint64_t)r->gen << 32) | (base + (uint64_t)(r - e->recs) + 1);
    if (ticket)
        *ticket = r->ticket;
    pthread_mutex_unlock(&d->mu);
    return DVPP_OK;
}

dvpp_status dvpp_stream_synchronize(dvpp_stream *s, dvpp_err *err)
{
    dvpp_device *d;
    uint64_t target;
    dvpp_status st;

    if (!s)
        return dvpp_err_set(err, DVPP_EINVAL, NULL, "stream is NULL");
    d = s->dev;
    pthread_mutex_lock(&d->mu);
    target = s->submitted;
    while (s->completed < target)
        pthread_cond_wait(&d->done_cv, &d->mu);
    st = s->first_status;
    if (st != DVPP_OK && err)
        *err = s->first_err;
    s->first_status = DVPP_OK;
    pthread_mutex_unlock(&d->mu);
    return st;
}

dvpp_status dvpp_job_cancel(dvpp_device *d, uint64_t ticket)
{
    uint64_t idx = ticket & 0xffffffffu;
    uint32_t gen = (uint32_t)(ticket >> 32);
    dvpp_status st = DVPP_ENOTFOUND;

    if (!d || idx == 0 || idx > d->nrecs)
        return DVPP_ENOTFOUND;
    pthread_mutex_lock(&d->mu);
    job_rec *r = d->index[idx - 1];
    if (r && r->in_use && r->gen == gen) {
        atomic_store(&r->cancel, true);
        st = DVPP_OK;
    }
    pthread_mutex_unlock(&d->mu);
    return st;
}

dvpp_status dvpp_device_hold_bytes(dvpp_device *d, uint64_t bytes, bool force,
                                   dvpp_err *err)
{
    dvpp_reject_reason why;
    dvpp_status st;

    if (!d)
        return dvpp_err_set(err, DVPP_EINVAL, "device", "no device");
    pthread_mutex_lock(&d->mu);
    if (!force && over_budget(d, 0, bytes, &why, &st))
        return reject(d, why, st, err,
                      st == DVPP_ELIMIT ? "result larger than the device's byte budget"
                                        : "device byte budget in use (results being "
                                          "sent or kept); retry later");
    d->inflight_bytes += bytes;
    d->held_bytes += bytes;
    pthread_mutex_unlock(&d->mu);
    return DVPP_OK;
}

void dvpp_device_release_bytes(dvpp_device *d, uint64_t bytes)
{
    if (!d || !bytes)
        return;
    pthread_mutex_lock(&d->mu);
    d->inflight_bytes -= bytes;
    d->held_bytes -= bytes;
    pthread_mutex_unlock(&d->mu);
}

/* --- batch jobs ---------------------------------------------------------- */

dvpp_status dvpp_batch_new(dvpp_device *d, const dvpp_batch_desc *desc,
                           dvpp_batch **out, dvpp_err *err)
{
    dvpp_batch *b;
    engine *e;
    uint64_t inflight, px, by;
    unsigned active;
    dvpp_reject_reason why;
    dvpp_status st;
    size_t sz;

    if (!out)
        return dvpp_err_set(err, DVPP_EINVAL, NULL, "out is NULL");
    *out = NULL;
    if (!d || !desc || !desc->fn || desc->n == 0 ||
        (unsigned)desc->engine >= DVPP_ENGINE_COUNT)
        return dvpp_err_set(err, DVPP_EINVAL, "batch", "bad batch description");
    e = &d->eng[desc->engine];
    if (!dvpp_size_mul(desc->n, sizeof(dvpp_status), &sz))
        return dvpp_err_set(err, DVPP_EOVERFLOW, "batch", "too many items");
    active = atomic_load(&e->active);
    inflight = desc->n < active ? desc->n : active;
    if (__builtin_mul_overflow(desc->pixels_per_item, inflight, &px) ||
        __builtin_mul_overflow(desc->bytes_per_item, inflight, &by))
        return dvpp_err_set(err, DVPP_EOVERFLOW, "batch", "batch cost overflows");
    b = dvpp_calloc(1, sizeof(*b));
    if (!b)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "batch");
    b->status = dvpp_malloc(sz);
    if (!b->status) {
        dvpp_free(b, sizeof(*b));
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "batch status");
    }
    for (size_t i = 0; i < desc->n; i++)
        b->status[i] = DVPP_EBUSY;
    b->dev = d;
    b->desc = *desc;
    b->first_failed = desc->n;
    b->hold_pixels = px;
    b->hold_bytes = by;
    atomic_init(&b->cancel, false);
    atomic_init(&b->cancel_from, SIZE_MAX);
    b->result_idx = SIZE_MAX;

    pthread_mutex_lock(&d->mu);
    st = DVPP_OK;
    if (!e->channels || d->stopping) {
        why = DVPP_REJECT_DISABLED;
        st = DVPP_EUNSUPPORTED;
    } else if (d->cfg.max_batches && d->batches_open >= d->cfg.max_batches) {
        why = DVPP_REJECT_BATCHES;
        st = DVPP_EAGAIN;
    } else {
        over_budget(d, px, by, &why, &st);
    }
    if (st != DVPP_OK) {
        d->rejected[why]++;
        pthread_mutex_unlock(&d->mu);
        dvpp_free(b->status, sz);
        dvpp_free(b, sizeof(*b));
        return dvpp_err_set(err, st, g_reject_names[why], "batch refused: %s",
                            g_reject_names[why]);
    }
    b->id = d->next_batch_id++;
    d->inflight_pixels += px;
    d->inflight_bytes += by;
    d->batches_open++;
    b->next = d->batches;
    if (d->batches)
        d->batches->prev = b;
    d->batches = b;
    {
        dvpp_batch **pp = &e->batches;
        while (*pp)
            pp = &(*pp)->enext;
        *pp = b;
        b->in_engine_list = true;
    }
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&d->mu);
    *out = b;
    return DVPP_OK;
}

uint64_t dvpp_batch_id(const dvpp_batch *b)
{
    return b->id;
}

void dvpp_batch_get_progress(dvpp_batch *b, dvpp_batch_progress *p)
{
    pthread_mutex_lock(&b->dev->mu);
    p->done = b->done;
    p->failed = b->failed;
    p->total = b->desc.n;
    p->finished = b->finished;
    p->first_failed = b->first_failed;
    pthread_mutex_unlock(&b->dev->mu);
}

dvpp_status dvpp_batch_item_status(dvpp_batch *b, size_t i)
{
    dvpp_status st;

    if (i >= b->desc.n)
        return DVPP_EINVAL;
    pthread_mutex_lock(&b->dev->mu);
    st = b->status[i];
    pthread_mutex_unlock(&b->dev->mu);
    return st;
}

dvpp_status dvpp_batch_cancel(dvpp_batch *b)
{
    dvpp_device *d = b->dev;
    dvpp_status st = DVPP_ENOTFOUND;

    pthread_mutex_lock(&d->mu);
    if (!b->finishing) {
        st = DVPP_OK;
        atomic_store(&b->cancel, true);
        if (!b->stop) {
            if (b->result == DVPP_OK)
                b->result = DVPP_ECANCELED;
            batch_stop(b, true);
        }
        batch_maybe_finish(b);
    }
    pthread_mutex_unlock(&d->mu);
    return st;
}

dvpp_status dvpp_batch_wait(dvpp_batch *b, dvpp_err *err)
{
    dvpp_device *d = b->dev;
    dvpp_status st;

    pthread_mutex_lock(&d->mu);
    while (!b->finished)
        pthread_cond_wait(&d->done_cv, &d->mu);
    st = b->result;
    if (st != DVPP_OK && err) {
        if (b->desc.strict && b->result_err.status == st)
            *err = b->result_err;
        else
            dvpp_err_set(err, st, NULL, "batch %llu canceled",
                         (unsigned long long)b->id);
    }
    pthread_mutex_unlock(&d->mu);
    return st;
}

void dvpp_batch_free(dvpp_batch *b)
{
    dvpp_device *d;

    if (!b)
        return;
    d = b->dev;
    dvpp_batch_cancel(b);
    pthread_mutex_lock(&d->mu);
    while (!b->finished)
        pthread_cond_wait(&d->done_cv, &d->mu);
    if (b->prev)
        b->prev->next = b->next;
    else
        d->batches = b->next;
    if (b->next)
        b->next->prev = b->prev;
    pthread_mutex_unlock(&d->mu);
    dvpp_free(b->status, sizeof(dvpp_status) * b->desc.n);
    dvpp_free(b, sizeof(*b));
}
