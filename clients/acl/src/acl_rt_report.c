/* acl_rt_report.c: callbacks that run on a program's thread
 * (aclrtSubscribeReport, aclrtProcessReport, aclrtLaunchCallback, and the
 * acli_report_* bridge VDEC/VENC channels use).
 *
 * A subscription names a thread (its pthread_t as uint64_t) for a key (a
 * stream, or a channel of libacl_dvpp); one thread per key, any number of
 * keys per thread. Posts for a thread queue on its record, in post order,
 * and run only inside that thread's aclrtProcessReport, which runs every
 * post pending when it looks (waiting up to its timeout for the first).
 * A thread with no subscription that calls aclrtProcessReport waits a
 * little (at most REPORT_UNSUBSCRIBED_WAIT_MS: report threads often start
 * before their channel, and a loop must neither spin nor hang) and gets
 * ACL_ERROR_RT_THREAD_SUBSCRIBE.
 *
 * aclrtLaunchCallback queues a task on the stream; when it runs, it posts
 * the callback to the stream's subscriber and holds its worker until the
 * callback has run, so later tasks of the stream wait for it (BLOCK).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "acl_rt_int.h"

/* How long aclrtProcessReport waits for a subscription to appear on an
 * unsubscribed thread (capped by its own timeout). */
#define REPORT_UNSUBSCRIBED_WAIT_MS 100
/* How often a BLOCK callback's task looks at its cancellation while it
 * waits (a teardown also wakes it at once). */
#define REPORT_BLOCK_POLL_MS 50

typedef struct report_post {
    void (*fn)(void *arg);
    void (*drop)(void *arg); /* instead of fn when thrown away; may be NULL */
    void *arg;
    struct report_post *next;
} report_post;

struct acli_report_thread {
    uint64_t id;
    unsigned nsubs;          /* subscriptions naming it */
    unsigned waiting;        /* its aclrtProcessReport calls in progress */
    pthread_cond_t cv;       /* a post arrived, or its last subscription went */
    report_post *head;
    report_post *tail;
    acli_report_thread *next;
};

struct acli_report_sub {
    uint64_t thread_id;
    const void *key;
    acli_report_sub *next;
};

uint64_t acli_thread_self(void)
{
    pthread_t self = pthread_self();
    uint64_t id = 0;

    /* What a program does with `(uint64_t)tid` (pthread_t is an integer
     * type on Linux). */
    memcpy(&id, &self, sizeof(self) < sizeof(id) ? sizeof(self) : sizeof(id));
    return id;
}

/* --- records (reports.mu held) ------------------------------------------------- */

static acli_report_thread *thread_find(acli_reports *R, uint64_t id)
{
    acli_report_thread *th = R->threads;

    while (th && th->id != id)
        th = th->next;
    return th;
}

static acli_report_thread *thread_get(acli_reports *R, uint64_t id)
{
    acli_report_thread *th = thread_find(R, id);

    if (th)
        return th;
    th = calloc(1, sizeof(*th));
    if (!th)
        return NULL;
    if (acli_cond_init(&th->cv) != 0) {
        free(th);
        return NULL;
    }
    th->id = id;
    th->next = R->threads;
    R->threads = th;
    return th;
}

/* Free @th when nothing refers to it any more. */
static void thread_maybe_free(acli_reports *R, acli_report_thread *th)
{
    acli_report_thread **pp = &R->threads;

    if (th->nsubs || th->head || th->waiting)
        return;
    while (*pp && *pp != th)
        pp = &(*pp)->next;
    if (*pp)
        *pp = th->next;
    pthread_cond_destroy(&th->cv);
    free(th);
}

static void thread_lost_sub(acli_reports *R, uint64_t id)
{
    acli_report_thread *th = thread_find(R, id);

    if (!th)
        return;
    th->nsubs--;
    if (th->nsubs == 0) {
        /* A waiter of a thread that lost its last subscription returns. */
        pthread_cond_broadcast(&th->cv);
        thread_maybe_free(R, th);
    }
}

/* --- the bridge -------------------------------------------------------------------------- */

aclError acli_report_subscribe(uint64_t thread_id, const void *key)
{
    acli_reports *R = &acli_proc()->reports;
    acli_report_thread *th;
    acli_report_sub *sub;

    if (!key)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "subscribe: no stream or channel");
    sub = malloc(sizeof(*sub));
    if (!sub)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "subscribe: no memory");
    pthread_mutex_lock(&R->mu);
    for (acli_report_sub *s = R->subs; s; s = s->next) {
        if (s->key == key) {
            uint64_t other = s->thread_id;
            pthread_mutex_unlock(&R->mu);
            free(sub);
            return acli_fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
                             "subscribe: the stream is already subscribed by thread %llu",
                             (unsigned long long)other);
        }
    }
    th = thread_get(R, thread_id);
    if (!th) {
        pthread_mutex_unlock(&R->mu);
        free(sub);
        return acli_fail(ACL_ERROR_BAD_ALLOC, "subscribe: no memory");
    }
    *sub = (acli_report_sub){thread_id, key, R->subs};
    R->subs = sub;
    th->nsubs++;
    pthread_cond_broadcast(&R->sub_cv);
    pthread_mutex_unlock(&R->mu);
    return ACL_SUCCESS;
}

aclError acli_report_unsubscribe(uint64_t thread_id, const void *key)
{
    acli_reports *R = &acli_proc()->reports;
    acli_report_sub **pp, *sub = NULL;

    pthread_mutex_lock(&R->mu);
    for (pp = &R->subs; *pp; pp = &(*pp)->next) {
        if ((*pp)->key == key && (*pp)->thread_id == thread_id) {
            sub = *pp;
            *pp = sub->next;
            thread_lost_sub(R, thread_id);
            break;
        }
    }
    pthread_mutex_unlock(&R->mu);
    if (!sub)
        return acli_fail(ACL_ERROR_STREAM_NOT_SUBSCRIBE,
                         "unsubscribe: thread %llu is not subscribed for that stream",
                         (unsigned long long)thread_id);
    free(sub);
    return ACL_SUCCESS;
}

void acli_report_forget_key(const void *key)
{
    acli_reports *R = &acli_proc()->reports;
    acli_report_sub **pp, *gone = NULL;

    pthread_mutex_lock(&R->mu);
    pp = &R->subs;
    while (*pp) {
        acli_report_sub *sub = *pp;
        if (sub->key == key) {
            *pp = sub->next;
            thread_lost_sub(R, sub->thread_id);
            sub->next = gone;
            gone = sub;
        } else {
            pp = &sub->next;
        }
    }
    pthread_mutex_unlock(&R->mu);
    while (gone) {
        acli_report_sub *n = gone->next;
        free(gone);
        gone = n;
    }
}

bool acli_report_key_thread(const void *key, uint64_t *thread_id)
{
    acli_reports *R = &acli_proc()->reports;
    bool found = false;

    pthread_mutex_lock(&R->mu);
    for (acli_report_sub *s = R->subs; s; s = s->next) {
        if (s->key == key) {
            *thread_id = s->thread_id;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&R->mu);
    return found;
}

aclError acli_report_post_drop(uint64_t thread_id, void (*fn)(void *arg),
                               void (*drop)(void *arg), void *arg)
{
    acli_reports *R = &acli_proc()->reports;
    acli_report_thread *th;
    report_post *p;

    if (!fn)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "report post: no function");
    p = malloc(sizeof(*p));
    if (!p)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "report post: no memory");
    *p = (report_post){fn, drop, arg, NULL};
    pthread_mutex_lock(&R->mu);
    th = thread_find(R, thread_id);
    if (!th || th->nsubs == 0) {
        pthread_mutex_unlock(&R->mu);
        free(p);
        return acli_fail(ACL_ERROR_RT_THREAD_SUBSCRIBE,
                         "thread %llu is subscribed for no stream or channel",
                         (unsigned long long)thread_id);
    }
    if (th->tail)
        th->tail->next = p;
    else
        th->head = p;
    th->tail = p;
    pthread_cond_signal(&th->cv);
    pthread_mutex_unlock(&R->mu);
    return ACL_SUCCESS;
}

aclError acli_report_post(uint64_t thread_id, void (*fn)(void *arg), void *arg)
{
    return acli_report_post_drop(thread_id, fn, NULL, arg);
}

void acli_report_wake_blocked(void)
{
    acli_reports *R = &acli_proc()->reports;

    pthread_mutex_lock(&R->mu);
    pthread_cond_broadcast(&R->done_cv);
    pthread_mutex_unlock(&R->mu);
}

void acli_reports_reset(void)
{
    acli_reports *R = &acli_proc()->reports;
    report_post *dropped = NULL;
    acli_report_sub *subs;

    pthread_mutex_lock(&R->mu);
    subs = R->subs;
    R->subs = NULL;
    for (acli_report_thread *th = R->threads, *next; th; th = next) {
        next = th->next;
        th->nsubs = 0;
        if (th->tail) {
            th->tail->next = dropped;
            dropped = th->head;
        }
        th->head = th->tail = NULL;
        pthread_cond_broadcast(&th->cv);
        thread_maybe_free(R, th);
    }
    pthread_mutex_unlock(&R->mu);
    while (subs) {
        acli_report_sub *n = subs->next;
        free(subs);
        subs = n;
    }
    while (dropped) {
        report_post *n = dropped->next;
        if (dropped->drop)
            dropped->drop(dropped->arg);
        free(dropped);
        dropped = n;
    }
}

/* --- aclrtProcessReport ------------------------------------------------------------------ */

static bool has_work(const acli_report_thread *th)
{
    return th && (th->nsubs || th->head);
}

aclError aclrtProcessReport(int32_t timeout)
{
    acli_process *P = acli_proc();
    acli_reports *R = &P->reports;
    uint64_t self = acli_thread_self();
    struct timespec until, sub_until;
    acli_report_thread *th;
    report_post *list;
    aclError rc = ACL_SUCCESS;

    if (timeout == 0 || timeout < -1)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclrtProcessReport: timeout %d ms (-1 or > 0)", (int)timeout);
    if (timeout > 0)
        acli_deadline_ms(&until, timeout);
    acli_deadline_ms(&sub_until, timeout > 0 && timeout < REPORT_UNSUBSCRIBED_WAIT_MS
                                     ? timeout
                                     : REPORT_UNSUBSCRIBED_WAIT_MS);
    pthread_mutex_lock(&R->mu);
    th = thread_find(R, self);
    while (!has_work(th)) {
        if (pthread_cond_timedwait(&R->sub_cv, &R->mu, &sub_until) == ETIMEDOUT) {
            th = thread_find(R, self);
            break;
        }
        th = thread_find(R, self);
    }
    if (!has_work(th)) {
        pthread_mutex_unlock(&R->mu);
        if (!atomic_load(&P->initialized))
            return acli_fail_quiet(ACL_ERROR_UNINITIALIZE,
                                   "aclrtProcessReport: aclInit has not been called");
        return acli_fail_quiet(ACL_ERROR_RT_THREAD_SUBSCRIBE,
                               "aclrtProcessReport: this thread is subscribed for no stream "
                               "or channel");
    }
    th->waiting++;
    while (!th->head) {
        int w;

        if (th->nsubs == 0) {
            rc = acli_fail_quiet(ACL_ERROR_RT_THREAD_SUBSCRIBE,
                                 "aclrtProcessReport: this thread's last subscription went");
            break;
        }
        w = timeout < 0 ? pthread_cond_wait(&th->cv, &R->mu)
                        : pthread_cond_timedwait(&th->cv, &R->mu, &until);
        if (w == ETIMEDOUT && !th->head) {
            rc = acli_fail_quiet(ACL_ERROR_RT_REPORT_TIMEOUT,
                                 "aclrtProcessReport: no callback within %d ms", (int)timeout);
            break;
        }
    }
    list = th->head;
    th->head = th->tail = NULL;
    pthread_mutex_unlock(&R->mu);
    while (list) {
        report_post *n = list->next;
        list->fn(list->arg);
        free(list);
        list = n;
    }
    pthread_mutex_lock(&R->mu);
    th->waiting--;
    thread_maybe_free(R, th);
    pthread_mutex_unlock(&R->mu);
    return rc;
}

/* --- host callbacks on streams ------------------------------------------------------------ */

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    acli_stream *s;
    aclError rc = acli_stream_get(stream, &s);

    return rc ? rc : acli_report_subscribe(threadId, s);
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    acli_stream *s;
    aclError rc = acli_stream_get(stream, &s);

    return rc ? rc : acli_report_unsubscribe(threadId, s);
}

/* One BLOCK callback between its task (on a worker) and the report thread;
 * both hold a reference. */
enum { CB_PENDING, CB_RUNNING, CB_DONE, CB_ABANDONED, CB_DROPPED };

typedef struct cb_block {
    aclrtCallback fn;
    void *user;
    int state;      /* (reports.mu) */
    unsigned refs;  /* (reports.mu) */
} cb_block;

typedef struct cb_task {
    aclrtCallback fn;
    void *user;
    const void *key; /* the stream, for its subscriber at run time */
} cb_task;

static void cb_unref_locked(cb_block *b)
{
    if (--b->refs == 0)
        free(b);
}

/* On the subscribed thread, inside aclrtProcessReport. */
static void cb_block_run(void *arg)
{
    acli_reports *R = &acli_proc()->reports;
    cb_block *b = arg;

    pthread_mutex_lock(&R->mu);
    if (b->state == CB_ABANDONED) {
        /* Its task was canceled while the callback waited: as any canceled
         * task's work, it does not run. */
        cb_unref_locked(b);
        pthread_mutex_unlock(&R->mu);
        return;
    }
    b->state = CB_RUNNING;
    pthread_mutex_unlock(&R->mu);
    b->fn(b->user);
    pthread_mutex_lock(&R->mu);
    b->state = CB_DONE;
    pthread_cond_broadcast(&R->done_cv);
    cb_unref_locked(b);
    pthread_mutex_unlock(&R->mu);
}

static void cb_block_drop(void *arg)
{
    acli_reports *R = &acli_proc()->reports;
    cb_block *b = arg;

    pthread_mutex_lock(&R->mu);
    if (b->state == CB_PENDING)
        b->state = CB_DROPPED;
    pthread_cond_broadcast(&R->done_cv);
    cb_unref_locked(b);
    pthread_mutex_unlock(&R->mu);
}

static aclError cb_task_run(void *ctx, acli_task *t)
{
    acli_reports *R = &acli_proc()->reports;
    const cb_task *c = ctx;
    struct timespec until;
    uint64_t tid;
    cb_block *b;
    aclError rc;
    int state;

    if (!acli_report_key_thread(c->key, &tid))
        return acli_fail(ACL_ERROR_RT_STREAM_NO_CB_REG,
                         "aclrtLaunchCallback: no thread is subscribed for the stream any more");
    b = malloc(sizeof(*b));
    if (!b)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "aclrtLaunchCallback: no memory");
    *b = (cb_block){c->fn, c->user, CB_PENDING, 2};
    rc = acli_report_post_drop(tid, cb_block_run, cb_block_drop, b);
    if (rc) {
        free(b);
        return rc;
    }
    pthread_mutex_lock(&R->mu);
    while (b->state == CB_PENDING || b->state == CB_RUNNING) {
        if (acli_task_canceled(t)) {
            if (b->state == CB_PENDING)
                b->state = CB_ABANDONED;
            break;
        }
        acli_deadline_ms(&until, REPORT_BLOCK_POLL_MS);
        pthread_cond_timedwait(&R->done_cv, &R->mu, &until);
    }
    state = b->state;
    cb_unref_locked(b);
    pthread_mutex_unlock(&R->mu);
    if (state == CB_DONE)
        return ACL_SUCCESS;
    if (state == CB_DROPPED)
        return acli_fail(ACL_ERROR_RT_DEVICE_TASK_ABORT,
                         "aclrtLaunchCallback: the callback was dropped unrun (aclFinalize)");
    return acli_fail(ACL_ERROR_RT_DEVICE_TASK_ABORT,
                     "aclrtLaunchCallback: canceled while waiting for the callback");
}

static void cb_task_fini(void *ctx, aclError status)
{
    (void)status;
    free(ctx);
}

aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
                             aclrtStream stream)
{
    acli_stream *s;
    cb_task *c;
    uint64_t tid;
    aclError rc;

    if (!fn)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchCallback: fn is NULL");
    if (blockType != ACL_CALLBACK_BLOCK)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclrtLaunchCallback: block type %d; only ACL_CALLBACK_BLOCK is "
                         "supported", (int)blockType);
    rc = acli_stream_get(stream, &s);
    if (rc)
        return rc;
    if (!acli_report_key_thread(s, &tid))
        return acli_fail(ACL_ERROR_RT_STREAM_NO_CB_REG,
                         "aclrtLaunchCallback: no thread is subscribed for the stream "
                         "(aclrtSubscribeReport)");
    c = malloc(sizeof(*c));
    if (!c)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "aclrtLaunchCallback: no memory");
    *c = (cb_task){fn, userData, s};
    rc = acli_submit(s, ACLI_RT_ENGINE, cb_task_run, cb_task_fini, c);
    if (rc)
        free(c);
    return rc;
}
