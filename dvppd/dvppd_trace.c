/* dvppd_trace: the recorder, its Chrome Trace JSON, the store of finished
 * traces and the capture (notes in dvppd_trace.h).
 *
 * A recorder's events live in an array grown by doubling under its mutex
 * up to max_events, so a short trace costs little and a long one is
 * bounded. Tracing is rare and its spans are few per job (tens), so one
 * mutex per append is cheaper than it is worth avoiding. */
#define _GNU_SOURCE /* pthread_getname_np */
#include "dvppd_trace.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>


#define TRACE_MAX_EVENTS_CAP (1u << 24)
#define THREAD_NAME_LEN 32

typedef struct trace_event {
    const char *name, *cat;
    uint64_t ts_ns, dur_ns;
    int32_t tid;
    int64_t item, index, bytes;
    uint64_t job;
} trace_event;

typedef struct trace_thread {
    int32_t tid;
    char name[THREAD_NAME_LEN];
} trace_thread;

struct dvppd_trace {
    atomic_int refs;
    pthread_mutex_t mu;            /* guards everything below */
    trace_event *ev;
    size_t n, cap, max;
    uint64_t dropped;
    trace_thread threads[DVPPD_TRACE_MAX_THREADS];
    unsigned nthreads;
    char label[64];
    int pid;
};

static int32_t current_tid(void)
{
    return (int32_t)syscall(SYS_gettid);
}

int32_t dvppd_trace_tid(void)
{
    return current_tid();
}

dvpp_status dvppd_trace_new(uint32_t max_events, const char *label, dvppd_trace **out,
                            dvpp_err *err)
{
    dvppd_trace *t;

    *out = NULL;
    if (max_events == 0 || max_events > TRACE_MAX_EVENTS_CAP)
        return dvpp_err_set(err, DVPP_EINVAL, "max_events", "max_events %u outside 1..%u",
                            max_events, TRACE_MAX_EVENTS_CAP);
    t = calloc(1, sizeof(*t));
    if (!t)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "trace");
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        free(t);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "trace mutex");
    }
    atomic_init(&t->refs, 1);
    t->max = max_events;
    t->pid = (int)getpid();
    snprintf(t->label, sizeof(t->label), "%s", label ? label : "");
    *out = t;
    return DVPP_OK;
}

dvppd_trace *dvppd_trace_ref(dvppd_trace *t)
{
    atomic_fetch_add(&t->refs, 1);
    return t;
}

void dvppd_trace_unref(dvppd_trace *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t->ev);
    free(t);
}

/* Room for one more event (under t->mu); false when at the bound or out of
 * memory. */
static bool trace_reserve(dvppd_trace *t)
{
    size_t cap;
    trace_event *ev;

    if (t->n < t->cap)
        return true;
    if (t->cap >= t->max)
        return false;
    cap = t->cap ? t->cap * 2 : 32;
    if (cap > t->max)
        cap = t->max;
    ev = realloc(t->ev, cap * sizeof(*ev));
    if (!ev)
        return false;
    t->ev = ev;
    t->cap = cap;
    return true;
}

/* Name thread @tid the first time it appends (under t->mu); @self: it is
 * the calling thread (else only @name can name it). */
static void trace_name_thread(dvppd_trace *t, int32_t tid, bool self, const char *name)
{
    trace_thread *th;

    for (unsigned i = 0; i < t->nthreads; i++)
        if (t->threads[i].tid == tid)
            return;
    if (t->nthreads == DVPPD_TRACE_MAX_THREADS)
        return;
    th = &t->threads[t->nthreads++];
    th->tid = tid;
    if (name)
        snprintf(th->name, sizeof(th->name), "%s", name);
    else if (!self || pthread_getname_np(pthread_self(), th->name, sizeof(th->name)) != 0)
        snprintf(th->name, sizeof(th->name), "thread-%d", (int)tid);
}

void dvppd_trace_span(dvppd_trace *t, const char *name, const char *cat, uint64_t t0_ns,
                      uint64_t t1_ns, const dvppd_trace_args *a)
{
    dvppd_trace_args none = DVPPD_TRACE_NO_ARGS;
    int32_t self = current_tid(), tid;

    if (!a)
        a = &none;
    tid = a->tid ? a->tid : self;
    pthread_mutex_lock(&t->mu);
    if (!trace_reserve(t)) {
        t->dropped++;
        pthread_mutex_unlock(&t->mu);
        return;
    }
    t->ev[t->n++] = (trace_event){
        .name = name, .cat = cat ? cat : "dvpp", .ts_ns = t0_ns,
        .dur_ns = t1_ns > t0_ns ? t1_ns - t0_ns : 0, .tid = tid,
        .item = a->item, .index = a->index, .bytes = a->bytes, .job = a->job,
    };
    trace_name_thread(t, tid, tid == self, a->thread);
    pthread_mutex_unlock(&t->mu);
}

void dvppd_trace_counts(dvppd_trace *t, size_t *kept, uint64_t *dropped)
{
    pthread_mutex_lock(&t->mu);
    *kept = t->n;
    *dropped = t->dropped;
    pthread_mutex_unlock(&t->mu);
}

/* --- JSON ------------------------------------------------------------------------- */

/* A growing text buffer; @failed once an allocation failed. */
typedef struct text {
    char *s;
    size_t len, cap;
    bool failed;
} text;

static void text_vadd(text *b, const char *fmt, va_list ap)
{
    va_list aq;
    int n;

    if (b->failed)
        return;
    va_copy(aq, ap);
    n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, aq);
    va_end(aq);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        char *s;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        s = realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
        vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    }
    b->len += (size_t)n;
}

static void text_add(text *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(text *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    text_vadd(b, fmt, ap);
    va_end(ap);
}

/* @s as a JSON string: bytes that are not printable ASCII, quotes and
 * backslashes become '?' (names are ours; thread names are not). */
static void text_str(text *b, const char *s)
{
    char clean[128];
    size_t i;

    for (i = 0; s[i] && i + 1 < sizeof(clean); i++)
        clean[i] = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\' ? s[i] : '?';
    clean[i] = '\0';
    text_add(b, "\"%s\"", clean);
}

/* Microseconds with three decimals (Chrome's ts and dur are in µs). */
static void text_us(text *b, const char *key, uint64_t ns)
{
    text_add(b, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

static void event_json(text *b, const trace_event *e, int pid)
{
    bool any = false;

    text_add(b, "{\"ph\":\"X\",\"name\":");
    text_str(b, e->name);
    text_add(b, ",\"cat\":");
    text_str(b, e->cat);
    text_add(b, ",\"pid\":%d,\"tid\":%d", pid, (int)e->tid);
    text_us(b, "ts", e->ts_ns);
    text_us(b, "dur", e->dur_ns);
    text_add(b, ",\"args\":{");
    if (e->item >= 0)
        text_add(b, "\"item\":%" PRId64, e->item), any = true;
    if (e->index >= 0)
        text_add(b, "%s\"index\":%" PRId64, any ? "," : "", e->index), any = true;
    if (e->bytes >= 0)
        text_add(b, "%s\"bytes\":%" PRId64, any ? "," : "", e->bytes), any = true;
    if (e->job)
        text_add(b, "%s\"job\":%" PRIu64, any ? "," : "", e->job);
    text_add(b, "}}");
}

static void metadata_json(text *b, const dvppd_trace *t)
{
    text_add(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"ts\":0,"
             "\"args\":{\"name\":\"dvppd\"}}", t->pid);
    for (unsigned i = 0; i < t->nthreads; i++) {
        text_add(b, ",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"ts\":0,"
                 "\"args\":{\"name\":", t->pid, (int)t->threads[i].tid);
        text_str(b, t->threads[i].name);
        text_add(b, "}}");
    }
}

/* Parents first: by start, the longer one first at equal starts. */
static int event_order(const void *a, const void *b)
{
    const trace_event *x = a, *y = b;

    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns ? -1 : 1;
    return x->dur_ns > y->dur_ns ? -1 : x->dur_ns < y->dur_ns;
}

char *dvppd_trace_json(dvppd_trace *t, size_t *len)
{
    text b = {0};

    pthread_mutex_lock(&t->mu);
    if (t->n)
        qsort(t->ev, t->n, sizeof(*t->ev), event_order);
    text_add(&b, "{\"traceEvents\":[");
    metadata_json(&b, t);
    for (size_t i = 0; i < t->n; i++) {
        text_add(&b, ",");
        event_json(&b, &t->ev[i], t->pid);
    }
    text_add(&b, "],\"displayTimeUnit\":\"ms\",\"otherData\":{\"label\":");
    text_str(&b, t->label);
    text_add(&b, ",\"events\":%zu,\"dropped_events\":%" PRIu64 ",\"max_events\":%zu,"
             "\"clock\":\"CLOCK_MONOTONIC\"}}", t->n, t->dropped, t->max);
    pthread_mutex_unlock(&t->mu);
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    *len = b.len;
    return b.s;
}

/* --- the store -------------------------------------------------------------------- */

typedef struct stored_trace {
    struct stored_trace *next;     /* newer */
    uint64_t id;
    char *json;
    size_t len;
} stored_trace;

struct dvppd_trace_store {
    dvppd_trace_config cfg;
    atomic_uint_fast64_t next_id;
    atomic_bool capturing;         /* a fast test for the jobs: no lock when off */
    atomic_uint_fast64_t capture_jobs;
    pthread_mutex_t mu;            /* guards the fields below */
    stored_trace *oldest, *newest;
    uint32_t count;
    uint64_t bytes;
    dvppd_trace *capture;          /* one reference */
};

dvpp_status dvppd_trace_store_new(const dvppd_trace_config *cfg, dvppd_trace_store **out,
                                  dvpp_err *err)
{
    dvppd_trace_store *s;

    *out = NULL;
    if (!cfg->keep || !cfg->max_bytes || !cfg->max_events || !cfg->capture_events ||
        !cfg->max_seconds)
        return dvpp_err_set(err, DVPP_EINVAL, "trace", "trace bounds must not be 0");
    s = calloc(1, sizeof(*s));
    if (!s)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "trace store");
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "trace store mutex");
    }
    s->cfg = *cfg;
    atomic_init(&s->next_id, 1);
    *out = s;
    return DVPP_OK;
}

void dvppd_trace_store_free(dvppd_trace_store *s)
{
    if (!s)
        return;
    while (s->oldest) {
        stored_trace *e = s->oldest;
        s->oldest = e->next;
        free(e->json);
        free(e);
    }
    dvppd_trace_unref(s->capture);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

const dvppd_trace_config *dvppd_trace_store_config(const dvppd_trace_store *s)
{
    return &s->cfg;
}

uint64_t dvppd_trace_store_next_id(dvppd_trace_store *s)
{
    return atomic_fetch_add(&s->next_id, 1);
}

/* Drop the oldest until @need more bytes and one more trace fit (under mu). */
static void store_make_room(dvppd_trace_store *s, size_t need)
{
    while (s->oldest && (s->count + 1 > s->cfg.keep || s->bytes + need > s->cfg.max_bytes)) {
        stored_trace *e = s->oldest;
        s->oldest = e->next;
        if (!s->oldest)
            s->newest = NULL;
        s->count--;
        s->bytes -= e->len;
        free(e->json);
        free(e);
    }
}

dvpp_status dvppd_trace_store_put(dvppd_trace_store *s, uint64_t id, char *json, size_t len,
                                  dvpp_err *err)
{
    stored_trace *e;

    if (len > s->cfg.max_bytes) {
        free(json);
        return dvpp_err_set(err, DVPP_ELIMIT, "trace.max_bytes",
                            "a trace of %zu bytes, above trace.max_bytes", len);
    }
    e = calloc(1, sizeof(*e));
    if (!e) {
        free(json);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "trace entry");
    }
    *e = (stored_trace){NULL, id, json, len};
    pthread_mutex_lock(&s->mu);
    store_make_room(s, len);
    if (s->newest)
        s->newest->next = e;
    else
        s->oldest = e;
    s->newest = e;
    s->count++;
    s->bytes += len;
    pthread_mutex_unlock(&s->mu);
    return DVPP_OK;
}

dvpp_status dvppd_trace_store_get(dvppd_trace_store *s, uint64_t id, char **json, size_t *len,
                                  dvpp_err *err)
{
    return dvppd_trace_store_get_max(s, id, SIZE_MAX, NULL, json, len, err);
}

dvpp_status dvppd_trace_store_get_max(dvppd_trace_store *s, uint64_t id, size_t max,
                                      const char *limit_name, char **json, size_t *len,
                                      dvpp_err *err)
{
    bool found = false;
    size_t too_large = 0;

    *json = NULL;
    *len = 0;
    pthread_mutex_lock(&s->mu);
    for (stored_trace *e = s->oldest; e; e = e->next) {
        if (e->id != id)
            continue;
        found = true;
        if (e->len > max) {
            too_large = e->len;
            break;
        }
        *json = malloc(e->len + 1);
        if (*json) {
            memcpy(*json, e->json, e->len + 1);
            *len = e->len;
        }
        break;
    }
    pthread_mutex_unlock(&s->mu);
    if (!found)
        return dvpp_err_set(err, DVPP_ENOTFOUND, "id", "no trace %" PRIu64
                            " (unknown, or dropped: trace.keep, trace.max_bytes)", id);
    if (too_large)
        return dvpp_err_set(err, DVPP_ELIMIT, "trace", "trace %" PRIu64 " has %zu bytes of "
                            "JSON, more than %s (%zu)", id, too_large,
                            limit_name ? limit_name : "the limit", max);
    return *json ? DVPP_OK : dvpp_err_set(err, DVPP_ENOMEM, NULL, "trace copy");
}

dvpp_status dvppd_trace_store_capture_begin(dvppd_trace_store *s, dvppd_trace *t,
                                            dvpp_err *err)
{
    dvpp_status st = DVPP_OK;

    pthread_mutex_lock(&s->mu);
    if (s->capture) {
        st = dvpp_err_set(err, DVPP_EBUSY, "seconds", "a trace recording runs already");
    } else {
        s->capture = dvppd_trace_ref(t);
        atomic_store(&s->capture_jobs, 0);
        atomic_store(&s->capturing, true);
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

void dvppd_trace_store_capture_end(dvppd_trace_store *s)
{
    dvppd_trace *t;

    pthread_mutex_lock(&s->mu);
    t = s->capture;
    s->capture = NULL;
    atomic_store(&s->capturing, false);
    pthread_mutex_unlock(&s->mu);
    dvppd_trace_unref(t);
}

uint64_t dvppd_trace_store_capture_jobs(dvppd_trace_store *s)
{
    return atomic_load(&s->capture_jobs);
}

/* The running capture, referenced, and the job's number in it; NULL when
 * none runs (one atomic load). */
static dvppd_trace *store_capture_join(dvppd_trace_store *s, uint64_t *job)
{
    dvppd_trace *t = NULL;

    if (!atomic_load_explicit(&s->capturing, memory_order_relaxed))
        return NULL;
    pthread_mutex_lock(&s->mu);
    if (s->capture) {
        t = dvppd_trace_ref(s->capture);
        *job = atomic_fetch_add(&s->capture_jobs, 1) + 1;
    }
    pthread_mutex_unlock(&s->mu);
    return t;
}

/* --- a job's sinks ---------------------------------------------------------------- */

/* The watch's hook, on the worker that runs the pipeline. */
static void job_watch_span(void *ctx, const char *name, int index, uint32_t item,
                           uint64_t t0_ns, uint64_t t1_ns)
{
    dvppd_trace_args a = {item, index, -1, 0, NULL, 0};

    dvppd_trace_job *j = ctx;

    dvppd_trace_job_span(j, name, "pipeline", t0_ns, t1_ns, &a);
    if (j->next && j->next->span)
        j->next->span(j->next->ctx, name, index, item, t0_ns, t1_ns);
}

static void job_watch_image(void *ctx, const char *name, int index, uint32_t item,
                            const dvpp_image *img)
{
    dvppd_trace_job *j = ctx;

    j->next->image(j->next->ctx, name, index, item, img);
}

dvpp_status dvppd_trace_job_begin(dvppd_trace_job *j, dvppd_trace_store *s, bool traced,
                                  const char *label, dvpp_err *err)
{
    dvpp_status st = DVPP_OK;

    memset(j, 0, sizeof(*j));
    if (!s)
        return DVPP_OK;
    if (traced) {
        st = dvppd_trace_new(s->cfg.max_events, label, &j->own, err);
        if (st != DVPP_OK)
            return st;
        j->id = dvppd_trace_store_next_id(s);
    }
    j->capture = store_capture_join(s, &j->job);
    j->watch = (dvpp_pipe_watch){.ctx = j, .span = job_watch_span, .image = NULL};
    return DVPP_OK;
}

const dvpp_pipe_watch *dvppd_trace_job_watch(dvppd_trace_job *j, const dvpp_pipe_watch *next)
{
    if (!dvppd_trace_job_active(j))
        return next;
    j->next = next;
    j->watch.image = next && next->image ? job_watch_image : NULL;
    return &j->watch;
}

void dvppd_trace_job_span(dvppd_trace_job *j, const char *name, const char *cat,
                          uint64_t t0_ns, uint64_t t1_ns, const dvppd_trace_args *a)
{
    dvppd_trace_args c = a ? *a : DVPPD_TRACE_NO_ARGS;

    if (j->own)
        dvppd_trace_span(j->own, name, cat, t0_ns, t1_ns, &c);
    if (j->capture) {
        c.job = j->job;
        dvppd_trace_span(j->capture, name, cat, t0_ns, t1_ns, &c);
    }
}

void dvppd_trace_job_end(dvppd_trace_job *j, dvppd_trace_store *s)
{
    if (j->own && s) {
        size_t len = 0;
        char *json = dvppd_trace_json(j->own, &len);
        if (json)
            dvppd_trace_store_put(s, j->id, json, len, NULL);
    }
    dvppd_trace_unref(j->own);
    dvppd_trace_unref(j->capture);
    j->own = j->capture = NULL;
}
