/* client_jobs.c: jobs (Submit, BatchSubmit and their Results), streams and
 * statistics. */
#include "client_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc_msg.h"

/* --- inputs --------------------------------------------------------------------- */

/* Where a job's input travels: inline in the packet, or as a descriptor
 * attached to it (the caller's sealed memfd, or one made here). */
typedef struct job_input {
    size_t len;      /* input bytes */
    int fd;          /* to attach, or -1 for inline */
    int own_fd;      /* made here: closed once sent; or -1 */
} job_input;

static int input_from_fd(const dvppc_request *q, job_input *in, dvppc_error *err)
{
    uint64_t size = 0;

    /* checked here too so the caller hears which rule failed, rather than
     * the daemon's generic refusal */
    if (!ipc_memfd_is_sealed(q->input_fd, &size))
        return dvppc__fail(err, DVPPC_EINVAL, "input_fd",
                           "input_fd must be a memfd sealed against shrink, grow and write");
    if (q->input_len > size)
        return dvppc__fail(err, DVPPC_EINVAL, "input_len",
                           "input_len %zu exceeds the memfd's %llu bytes", q->input_len,
                           (unsigned long long)size);
    in->len = q->input_len ? q->input_len : (size_t)size;
    in->fd = q->input_fd;
    return 0;
}

static int input_prepare(const dvppc_conn *c, const dvppc_request *q, job_input *in,
                         dvppc_error *err)
{
    int st;

    in->fd = -1;
    in->own_fd = -1;
    /* bytes win over the fd: a zero-initialised request has input_fd 0 */
    if (!q->input && q->input_fd >= 0) {
        st = input_from_fd(q, in, err);
        if (st)
            return st;
    } else {
        if (!q->input || !q->input_len)
            return dvppc__fail(err, DVPPC_EINVAL, "input", "no input bytes");
        in->len = q->input_len;
    }
    if (c->info.max_input_bytes && in->len > c->info.max_input_bytes)
        return dvppc__fail(err, DVPPC_ELIMIT, "input", "input of %zu bytes > max %llu",
                           in->len, (unsigned long long)c->info.max_input_bytes);
    if (in->fd < 0 && in->len > c->info.max_inline) {
        int e = ipc_memfd_from(q->input, in->len, "dvppc-input", &in->own_fd);
        if (e)
            return dvppc__fail(err, DVPPC_ESYS, "input", "memfd of %zu bytes: %s", in->len,
                               strerror(-e));
        in->fd = in->own_fd;
    }
    return 0;
}

int dvppc__ring_id(dvppc_conn *c, const dvppc_ring *r, uint32_t *id, dvppc_error *err)
{
    bool ok;

    *id = 0;
    if (!r)
        return 0;
    if (r->conn != c)
        return dvppc__fail(err, DVPPC_EINVAL, "ring", "the ring belongs to another connection");
    pthread_mutex_lock(&c->mu);
    ok = !r->closing;
    *id = r->id;
    pthread_mutex_unlock(&c->mu);
    return ok ? 0 : dvppc__fail(err, DVPPC_EINVAL, "ring", "the ring is closing");
}

/* --- submit --------------------------------------------------------------------- */

static int submit_send(dvppc_conn *c, const dvppc_request *q, const job_input *in,
                       uint32_t ring, uint64_t id, bool trace, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__Submit s = DVPP__SUBMIT__INIT;

    env.protocol = DVPPC_PROTOCOL;
    env.id = id;
    env.body_case = DVPP__ENVELOPE__BODY_SUBMIT;
    env.submit = &s;
    s.stream = q->stream;
    s.kind = (Dvpp__Kind)q->kind;
    s.spec = (char *)(q->spec ? q->spec : "");
    s.aipp_config = (char *)(q->aipp_config ? q->aipp_config : "");
    s.deadline_ms = q->deadline_ms;
    s.trace = trace;
    s.ring = ring;
    if (in->fd >= 0) {
        s.input_fd = 1;
        s.input_len = in->len;
    } else {
        s.input.data = (uint8_t *)q->input;
        s.input.len = in->len;
    }
    return dvppc__send(c, &env, in->fd >= 0 ? &in->fd : NULL, in->fd >= 0 ? 1 : 0, err);
}

/* dvppc_submit_async, with Submit.trace = @trace. */
static int submit_async(dvppc_conn *c, const dvppc_request *q, bool trace, uint64_t *ticket,
                        dvppc_error *err)
{
    job_input in;
    uint32_t ring;
    uint64_t id = 0;
    int st;

    if (!c || !q || !ticket)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection, request or ticket");
    *ticket = 0;
    if ((unsigned)q->kind > DVPPC_PIXELS)
        return dvppc__fail(err, DVPPC_EINVAL, "kind", "unknown kind %d", (int)q->kind);
    st = dvppc__ring_id(c, q->ring, &ring, err);
    if (st)
        return st;
    st = input_prepare(c, q, &in, err);
    if (st)
        return st;
    /* registered before sending: the answer may come before send returns */
    pthread_mutex_lock(&c->mu);
    st = dvppc__register(c, &id, err);
    pthread_mutex_unlock(&c->mu);
    if (st)
        goto out;
    st = submit_send(c, q, &in, ring, id, trace, err);
    if (st) {
        pthread_mutex_lock(&c->mu);
        dvppc__forget(c, id);
        pthread_mutex_unlock(&c->mu);
        goto out;
    }
    *ticket = id;
out:
    /* the daemon got its own reference with the packet */
    if (in.own_fd >= 0)
        close(in.own_fd);
    return st;
}

int dvppc_submit_async(dvppc_conn *c, const dvppc_request *q, uint64_t *ticket,
                       dvppc_error *err)
{
    return submit_async(c, q, false, ticket, err);
}

/* dvppc_wait, also reading the Result's trace id into @trace_id (when
 * not NULL; 0 for none or an Error answer). */
static int wait_result(dvppc_conn *c, uint64_t ticket, dvppc_result *res, int timeout_ms,
                       uint64_t *trace_id, dvppc_error *err)
{
    cl_msg *m = NULL;
    int st;

    if (!c || !res)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection or result");
    memset(res, 0, sizeof(*res));
    pthread_mutex_lock(&c->mu);
    st = dvppc__await(c, ticket, timeout_ms, &m, &res->error);
    if (!st) {
        if (ticket)
            dvppc__forget(c, ticket);
        /* read before the fill, which takes @m */
        if (trace_id && m->env->body_case == DVPP__ENVELOPE__BODY_RESULT && m->env->result)
            *trace_id = m->env->result->trace_id;
        st = dvppc__result_fill(c, m, res, err);
    }
    pthread_mutex_unlock(&c->mu);
    if (!st)
        return 0;
    /* a failed wait (timeout, broken transport) reads like a failed job */
    res->status = st;
    if (err)
        *err = res->error;
    return st;
}

int dvppc_wait(dvppc_conn *c, uint64_t ticket, dvppc_result *res, int timeout_ms,
               dvppc_error *err)
{
    return wait_result(c, ticket, res, timeout_ms, NULL, err);
}

/* dvppc_submit; with @trace_id, traced (Submit.trace) and its id read. */
static int submit_wait(dvppc_conn *c, const dvppc_request *q, dvppc_result *res,
                       uint64_t *trace_id, dvppc_error *err)
{
    uint64_t ticket;
    int st;

    if (!res)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no result");
    memset(res, 0, sizeof(*res));
    st = submit_async(c, q, trace_id != NULL, &ticket, &res->error);
    if (st) {
        res->status = st;
        if (err)
            *err = res->error;
        return st;
    }
    return wait_result(c, ticket, res, -1, trace_id, err);
}

int dvppc_submit(dvppc_conn *c, const dvppc_request *q, dvppc_result *res, dvppc_error *err)
{
    return submit_wait(c, q, res, NULL, err);
}

int dvppc_submit_traced(dvppc_conn *c, const dvppc_request *q, dvppc_result *res,
                        uint64_t *trace_id, dvppc_error *err)
{
    if (!trace_id)
        return dvppc__fail(err, DVPPC_EINVAL, "trace_id", "no trace id to fill");
    *trace_id = 0;
    return submit_wait(c, q, res, trace_id, err);
}

/* --- batch jobs ----------------------------------------------------------------- */

/* A batch's inputs as the packet carries them: all inline while they fit
 * in max_inline together, else one sealed memfd each. */
typedef struct batch_inputs {
    size_t n;
    ProtobufCBinaryData *bins;  /* inline, or NULL */
    int *fds;                   /* memfds (owned), or NULL */
    uint64_t *lens;             /* memfd lengths */
} batch_inputs;

static void batch_inputs_free(batch_inputs *b)
{
    if (b->fds)
        ipc_close_fds(b->fds, (int)b->n);
    free(b->fds);
    free(b->lens);
    free(b->bins);
}

static int batch_memfds(batch_inputs *b, const void *const *inputs, const size_t *lens,
                        dvppc_error *err)
{
    b->fds = malloc(b->n * sizeof(int));
    b->lens = malloc(b->n * sizeof(uint64_t));
    if (!b->fds || !b->lens)
        return dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for %zu inputs", b->n);
    for (size_t i = 0; i < b->n; i++)
        b->fds[i] = -1;
    for (size_t i = 0; i < b->n; i++) {
        int e = ipc_memfd_from(inputs[i], lens[i], "dvppc-batch", &b->fds[i]);
        if (e)
            return dvppc__fail(err, DVPPC_ESYS, "inputs", "memfd for input %zu: %s", i,
                               strerror(-e));
        b->lens[i] = lens[i];
    }
    return 0;
}

static int batch_prepare(const dvppc_conn *c, const void *const *inputs, const size_t *lens,
                         size_t n, batch_inputs *b, dvppc_error *err)
{
    size_t total = 0;

    memset(b, 0, sizeof(*b));
    b->n = n;
    if (c->info.max_batch_items && n > c->info.max_batch_items)
        return dvppc__fail(err, DVPPC_ELIMIT, "inputs", "%zu inputs > max_batch_items %u", n,
                           c->info.max_batch_items);
    for (size_t i = 0; i < n; i++) {
        if (!inputs[i] || !lens[i])
            return dvppc__fail(err, DVPPC_EINVAL, "inputs", "input %zu is empty", i);
        if (__builtin_add_overflow(total, lens[i], &total))
            return dvppc__fail(err, DVPPC_EOVERFLOW, "inputs", "inputs overflow size_t");
    }
    if (total > c->info.max_inline) {
        if (n > IPC_MAX_FDS)
            return dvppc__fail(err, DVPPC_ELIMIT, "inputs",
                               "%zu inputs of %zu bytes: more than max_inline needs one "
                               "memfd each, at most %d per packet",
                               n, total, IPC_MAX_FDS);
        return batch_memfds(b, inputs, lens, err);
    }
    b->bins = calloc(n, sizeof(*b->bins));
    if (!b->bins)
        return dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for %zu inputs", n);
    for (size_t i = 0; i < n; i++) {
        b->bins[i].data = (uint8_t *)inputs[i];
        b->bins[i].len = lens[i];
    }
    return 0;
}

static int batch_send(dvppc_conn *c, const char *spec, const char *const *item_specs,
                      const batch_inputs *b, uint32_t ring, bool strict, uint64_t id,
                      dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__BatchSubmit bs = DVPP__BATCH_SUBMIT__INIT;

    env.protocol = DVPPC_PROTOCOL;
    env.id = id;
    env.body_case = DVPP__ENVELOPE__BODY_BATCH_SUBMIT;
    env.batch_submit = &bs;
    bs.spec = (char *)(spec ? spec : "");
    bs.ring = ring;
    bs.strict = strict;
    if (item_specs) { /* protobuf-c packs the strings; it does not write them */
        bs.n_item_specs = b->n;
        bs.item_specs = (char **)(uintptr_t)item_specs;
    }
    if (b->fds) {
        bs.input_fds = (uint32_t)b->n;
        bs.n_input_lens = b->n;
        bs.input_lens = b->lens;
    } else {
        bs.n_inputs = b->n;
        bs.inputs = b->bins;
    }
    return dvppc__send(c, &env, b->fds, b->fds ? (int)b->n : 0, err);
}

/* The first answer to a BatchSubmit: BatchAccepted, an Error refusing it,
 * or (a batch that failed at once) its Result, left for dvppc_wait. Lock
 * held; the request stays registered unless refused. */
static int batch_accepted(dvppc_conn *c, uint64_t id, uint64_t *batch, dvppc_error *err)
{
    const Dvpp__Envelope *env;
    cl_msg *m;
    int st = dvppc__await(c, id, -1, &m, err);

    if (st)
        return st;
    env = m->env;
    if (env->body_case == DVPP__ENVELOPE__BODY_RESULT && env->result) {
        *batch = env->result->batch;
        dvppc__unpop(c, id, m);
        return 0;
    }
    st = dvppc__expect(m, DVPP__ENVELOPE__BODY_BATCH_ACCEPTED, err);
    if (!st)
        *batch = env->batch_accepted->batch;
    dvppc__msg_free(m);
    return st;
}

int dvppc_batch_submit(dvppc_conn *c, const char *spec, const void *const *inputs,
                       const size_t *lens, size_t n, dvppc_ring *ring, bool strict,
                       uint64_t *ticket, uint64_t *batch, dvppc_error *err)
{
    return dvppc_batch_submit_items(c, spec, NULL, inputs, lens, n, ring, strict, ticket,
                                    batch, err);
}

int dvppc_batch_submit_items(dvppc_conn *c, const char *spec, const char *const *item_specs,
                             const void *const *inputs, const size_t *lens, size_t n,
                             dvppc_ring *ring, bool strict, uint64_t *ticket,
                             uint64_t *batch, dvppc_error *err)
{
    batch_inputs b;
    uint64_t id = 0, bid = 0;
    uint32_t rid;
    int st;

    if (!c || !ticket || !inputs || !lens || !n)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection, ticket or inputs");
    *ticket = 0;
    if (!ring)
        return dvppc__fail(err, DVPPC_EINVAL, "ring", "a batch needs a ring");
    for (size_t i = 0; item_specs && i < n; i++)
        if (!item_specs[i])
            return dvppc__fail(err, DVPPC_EINVAL, "item_specs", "item spec %zu is NULL", i);
    st = dvppc__ring_id(c, ring, &rid, err);
    if (st)
        return st;
    st = batch_prepare(c, inputs, lens, n, &b, err);
    if (st)
        goto out;
    pthread_mutex_lock(&c->mu);
    st = dvppc__register(c, &id, err);
    pthread_mutex_unlock(&c->mu);
    if (st)
        goto out;
    st = batch_send(c, spec, item_specs, &b, rid, strict, id, err);
    pthread_mutex_lock(&c->mu);
    if (!st)
        st = batch_accepted(c, id, &bid, err);
    if (st)
        dvppc__forget(c, id);
    pthread_mutex_unlock(&c->mu);
    if (!st) {
        *ticket = id;
        if (batch)
            *batch = bid;
    }
out:
    batch_inputs_free(&b);
    return st;
}

int dvppc_batch_progress(dvppc_conn *c, uint64_t batch, dvppc_progress *p, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__BatchQuery q = DVPP__BATCH_QUERY__INIT;
    const Dvpp__BatchProgress *bp;
    cl_msg *m = NULL;
    int st;

    if (!c || !p)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection or progress");
    q.batch = batch;
    env.body_case = DVPP__ENVELOPE__BODY_BATCH_QUERY;
    env.batch_query = &q;
    st = dvppc__call(c, &env, &m, err);
    if (!st)
        st = dvppc__expect(m, DVPP__ENVELOPE__BODY_BATCH_PROGRESS, err);
    if (!st) {
        bp = m->env->batch_progress;
        p->total = bp->total;
        p->done = bp->done;
        p->failed = bp->failed;
        p->finished = bp->finished;
    }
    dvppc__msg_free(m);
    return st;
}

/* A request whose only success answer is Ack. */
static int call_ack(dvppc_conn *c, Dvpp__Envelope *env, dvppc_error *err)
{
    cl_msg *m = NULL;
    int st = dvppc__call(c, env, &m, err);

    if (!st)
        st = dvppc__expect(m, DVPP__ENVELOPE__BODY_ACK, err);
    dvppc__msg_free(m);
    return st;
}

int dvppc_batch_cancel(dvppc_conn *c, uint64_t batch, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__BatchCancel bc = DVPP__BATCH_CANCEL__INIT;

    if (!c)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection");
    bc.batch = batch;
    env.body_case = DVPP__ENVELOPE__BODY_BATCH_CANCEL;
    env.batch_cancel = &bc;
    return call_ack(c, &env, err);
}

/* --- streams -------------------------------------------------------------------- */

int dvppc_stream_create(dvppc_conn *c, uint64_t *stream, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__StreamCreate sc = DVPP__STREAM_CREATE__INIT;
    cl_msg *m = NULL;
    int st;

    if (!c || !stream)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection or stream");
    env.body_case = DVPP__ENVELOPE__BODY_STREAM_CREATE;
    env.stream_create = &sc;
    st = dvppc__call(c, &env, &m, err);
    if (!st)
        st = dvppc__expect(m, DVPP__ENVELOPE__BODY_STREAM_CREATED, err);
    if (!st)
        *stream = m->env->stream_created->stream;
    dvppc__msg_free(m);
    return st;
}

int dvppc_stream_destroy(dvppc_conn *c, uint64_t stream, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__StreamDestroy sd = DVPP__STREAM_DESTROY__INIT;

    if (!c)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection");
    sd.stream = stream;
    env.body_case = DVPP__ENVELOPE__BODY_STREAM_DESTROY;
    env.stream_destroy = &sd;
    return call_ack(c, &env, err);
}

int dvppc_stream_sync(dvppc_conn *c, uint64_t stream, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__StreamSync ss = DVPP__STREAM_SYNC__INIT;

    if (!c)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection");
    ss.stream = stream;
    env.body_case = DVPP__ENVELOPE__BODY_STREAM_SYNC;
    env.stream_sync = &ss;
    return call_ack(c, &env, err);
}

/* --- statistics ----------------------------------------------------------------- */

/* A growing JSON text; the first allocation failure sticks. */
typedef struct jbuf {
    char *p;
    size_t len;
    size_t cap;
    bool oom;
} jbuf;

static bool jb_room(jbuf *b, size_t more)
{
    size_t cap;
    char *p;

    if (b->oom)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    cap = b->cap ? b->cap : 512;
    while (cap < b->len + more + 1)
        cap *= 2;
    p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static void jb_printf(jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jb_printf(jbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !jb_room(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* A JSON string: the daemon's engine names are text we do not control. */
static void jb_str(jbuf *b, const char *s)
{
    jb_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            jb_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            jb_printf(b, "\\u%04x", *p);
        else
            jb_printf(b, "%c", *p);
    }
    jb_printf(b, "\"");
}

static void stats_json(jbuf *b, const Dvpp__Stats *s)
{
    jb_printf(b, "{\"engines\":[");
    for (size_t i = 0; i < s->n_engines; i++) {
        const Dvpp__EngineStats *e = s->engines[i];
        jb_printf(b, "%s{\"name\":", i ? "," : "");
        jb_str(b, e->name);
        jb_printf(b,
                  ",\"queued\":%" PRIu64 ",\"running\":%" PRIu64 ",\"done\":%" PRIu64
                  ",\"failed\":%" PRIu64 "}",
                  e->queued, e->running, e->done, e->failed);
    }
    jb_printf(b,
              "],\"connections\":%" PRIu64 ",\"rings\":%" PRIu64 ",\"slots_leased\":%" PRIu64
              ",\"leases_expired\":%" PRIu64 ",\"bad_releases\":%" PRIu64
              ",\"dropped_connections\":%" PRIu64 ",\"jobs_submitted\":%" PRIu64
              ",\"jobs_failed\":%" PRIu64 ",\"inflight_pixels\":%" PRIu64 "}",
              s->connections, s->rings, s->slots_leased, s->leases_expired, s->bad_releases,
              s->dropped_connections, s->jobs_submitted, s->jobs_failed, s->inflight_pixels);
}

int dvppc_trace_get(dvppc_conn *c, uint64_t id, char **json, size_t *len, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__TraceGet q = DVPP__TRACE_GET__INIT;
    const ProtobufCBinaryData *d;
    cl_msg *m = NULL;
    int st;

    if (!c || !json || !len)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection or output");
    *json = NULL;
    *len = 0;
    q.id = id;
    env.body_case = DVPP__ENVELOPE__BODY_TRACE_GET;
    env.trace_get = &q;
    st = dvppc__call(c, &env, &m, err);
    if (!st)
        st = dvppc__expect(m, DVPP__ENVELOPE__BODY_TRACE_DATA, err);
    if (st)
        goto out;
    d = &m->env->trace_data->json;
    *json = malloc(d->len + 1);
    if (!*json) {
        st = dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for a trace of %zu bytes",
                         d->len);
        goto out;
    }
    if (d->len)
        memcpy(*json, d->data, d->len);
    (*json)[d->len] = '\0';
    *len = d->len;
out:
    dvppc__msg_free(m);
    return st;
}

int dvppc_stats_json(dvppc_conn *c, char **json, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__StatsQuery sq = DVPP__STATS_QUERY__INIT;
    jbuf b = {0};
    cl_msg *m = NULL;
    int st;

    if (!c || !json)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection or output");
    *json = NULL;
    env.body_case = DVPP__ENVELOPE__BODY_STATS_QUERY;
    env.stats_query = &sq;
    st = dvppc__call(c, &env, &m, err);
    if (!st)
        st = dvppc__expect(m, DVPP__ENVELOPE__BODY_STATS, err);
    if (st)
        goto out;
    stats_json(&b, m->env->stats);
    if (b.oom) {
        free(b.p);
        st = dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for the statistics text");
        goto out;
    }
    *json = b.p;
out:
    dvppc__msg_free(m);
    return st;
}
