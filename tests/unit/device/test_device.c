/* Unit tests for device/dvpp_device: stream order, admission, cancellation,
 * deadlines, eventfd, synchronize, batch jobs, shutdown, allocation failure.
 * Must be clean under ASan+UBSan and ThreadSanitizer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "device/dvpp_device.h"
#include "dvpp_mem.h"
#include "test_alloc.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static dvpp_device *make_device(unsigned channels, unsigned depth)
{
    dvpp_device_config cfg;
    dvpp_device *d = NULL;

    dvpp_device_config_default(&cfg);
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++) {
        cfg.channels[i] = channels;
        cfg.queue_depth[i] = depth;
    }
    assert_int_equal(dvpp_device_new(&cfg, &d, NULL), DVPP_OK);
    return d;
}

/* --- a gate tasks block on until opened (or canceled) ---------------------- */

typedef struct gate_ctx {
    atomic_int *gate;     /* 0 = closed */
    atomic_int *started;  /* incremented when the fn starts */
    atomic_int *ran;      /* incremented when the fn returns */
    atomic_int done_status; /* from the completion callback */
    atomic_int done_calls;
} gate_ctx;

static dvpp_status gate_fn(dvpp_task *t, void *ctx, void *ws, dvpp_err *err)
{
    gate_ctx *g = ctx;
    (void)ws;
    if (g->started)
        atomic_fetch_add(g->started, 1);
    while (!atomic_load(g->gate)) {
        if (dvpp_task_canceled(t))
            return dvpp_err_set(err, DVPP_ECANCELED, NULL, "canceled while running");
        sleep_us(200);
    }
    if (g->ran)
        atomic_fetch_add(g->ran, 1);
    return DVPP_OK;
}

static void gate_done(void *ctx, uint64_t ticket, dvpp_status st, const dvpp_err *err)
{
    gate_ctx *g = ctx;
    (void)ticket;
    (void)err;
    atomic_store(&g->done_status, st);
    atomic_fetch_add(&g->done_calls, 1);
}

static void init_gate(gate_ctx *g, atomic_int *gate, atomic_int *started,
                      atomic_int *ran)
{
    g->gate = gate;
    g->started = started;
    g->ran = ran;
    atomic_init(&g->done_status, 1);
    atomic_init(&g->done_calls, 0);
}

static void wait_started(atomic_int *started, int n)
{
    for (int i = 0; i < 20000 && atomic_load(started) < n; i++)
        sleep_us(100);
    assert_int_equal(atomic_load(started), n);
}

/* --- ordering ------------------------------------------------------------ */

#define ORD_STREAMS 6
#define ORD_TASKS 40

typedef struct ord_stream {
    int log[ORD_TASKS]; /* written only by this stream's tasks (serialised) */
    int n;
    uint32_t result[ORD_TASKS];
} ord_stream;

typedef struct ord_task {
    ord_stream *s;
    int index;
    int stream;
} ord_task;

static dvpp_status ord_fn(dvpp_task *t, void *ctx, void *ws, dvpp_err *err)
{
    ord_task *o = ctx;
    uint32_t h = 2166136261u;
    (void)t;
    (void)ws;
    (void)err;
    if (o->index % 7 == 0)
        sleep_us(50);
    o->s->log[o->s->n++] = o->index;
    for (int k = 0; k < 100; k++)
        h = (h ^ (uint32_t)(o->stream * 1000 + o->index + k)) * 16777619u;
    o->s->result[o->index] = h;
    return DVPP_OK;
}

static void run_order(unsigned channels, ord_stream *out)
{
    dvpp_device *d = make_device(channels, 256);
    dvpp_stream *s[ORD_STREAMS];
    static ord_task tasks[ORD_STREAMS][ORD_TASKS];

    memset(out, 0, sizeof(ord_stream) * ORD_STREAMS);
    for (int i = 0; i < ORD_STREAMS; i++)
        assert_int_equal(dvpp_stream_new(d, 0, &s[i], NULL), DVPP_OK);
    for (int k = 0; k < ORD_TASKS; k++) {
        for (int i = 0; i < ORD_STREAMS; i++) {
            dvpp_job j = {0};
            tasks[i][k] = (ord_task){&out[i], k, i};
            /* Alternate engines: order must hold across engines too. */
            j.engine = (k % 3 == 0) ? DVPP_ENGINE_JPEGD : DVPP_ENGINE_VPC;
            j.fn = ord_fn;
            j.ctx = &tasks[i][k];
            j.pixels = 10;
            assert_int_equal(dvpp_device_submit(s[i], &j, NULL, NULL), DVPP_OK);
        }
    }
    for (int i = 0; i < ORD_STREAMS; i++) {
        assert_int_equal(dvpp_stream_synchronize(s[i], NULL), DVPP_OK);
        assert_int_equal(out[i].n, ORD_TASKS);
        for (int k = 0; k < ORD_TASKS; k++)
            assert_int_equal(out[i].log[k], k);
        dvpp_stream_free(s[i]);
    }
    {
        dvpp_device_counters c;
        dvpp_device_get_counters(d, &c);
        assert_int_equal(c.engine[DVPP_ENGINE_VPC].done +
                             c.engine[DVPP_ENGINE_JPEGD].done,
                         ORD_STREAMS * ORD_TASKS);
        assert_int_equal(c.engine[DVPP_ENGINE_VPC].queued, 0);
        assert_int_equal(c.inflight_pixels, 0);
    }
    dvpp_device_free(d);
}

static void test_stream_order(void **state)
{
    static ord_stream ref[ORD_STREAMS], got[ORD_STREAMS];
    static const unsigned ch[] = {2, 4, 8};

    (void)state;
    run_order(1, ref);
    for (size_t c = 0; c < sizeof(ch) / sizeof(ch[0]); c++) {
        run_order(ch[c], got);
        for (int i = 0; i < ORD_STREAMS; i++)
            assert_memory_equal(got[i].result, ref[i].result, sizeof(ref[i].result));
    }
}

/* --- admission ----------------------------------------------------------------- */

static void test_pixel_budget(void **state)
{
    dvpp_device_config cfg;
    dvpp_device *d = NULL;
    dvpp_stream *s[6];
    gate_ctx g[6];
    atomic_int gate, started;
    dvpp_device_counters c;
    dvpp_err err;
    uint64_t t0;

    (void)state;
    atomic_init(&gate, 0);
    atomic_init(&started, 0);
    dvpp_device_config_default(&cfg);
    cfg.channels[DVPP_ENGINE_VPC] = 4;
    cfg.queue_depth[DVPP_ENGINE_VPC] = 16;
    cfg.pixel_budget = 100;
    cfg.byte_budget = 1000;
    assert_int_equal(dvpp_device_new(&cfg, &d, NULL), DVPP_OK);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(dvpp_stream_new(d, 0, &s[i], NULL), DVPP_OK);
        init_gate(&g[i], &gate, &started, NULL);
    }
    for (int i = 0; i < 4; i++) {
        dvpp_job j = {DVPP_ENGINE_VPC, gate_fn, gate_done, &g[i], 25, 10, 0};
        assert_int_equal(dvpp_device_submit(s[i], &j, NULL, NULL), DVPP_OK);
    }
    wait_started(&started, 4);
    {
        dvpp_job j = {DVPP_ENGINE_VPC, gate_fn, gate_done, &g[4], 1, 1, 0};
        t0 = dvpp_now_ns();
        assert_int_equal(dvpp_device_submit(s[4], &j, NULL, &err), DVPP_EAGAIN);
        assert_true(dvpp_now_ns() - t0 < 50000000u);
        assert_int_equal(err.status, DVPP_EAGAIN);
        /* Larger than the whole budget: never admissible. */
        j.pixels = 101;
        assert_int_equal(dvpp_device_submit(s[4], &j, NULL, NULL), DVPP_ELIMIT);
    }
    dvpp_device_get_counters(d, &c);
    assert_int_equal(c.rejected[DVPP_REJECT_PIXELS], 1);
    assert_int_equal(c.rejected[DVPP_REJECT_TOO_LARGE], 1);
    assert_int_equal(c.inflight_pixels, 100);
    assert_int_equal(c.engine[DVPP_ENGINE_VPC].running, 4);
    atomic_store(&gate, 1);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(dvpp_stream_synchronize(s[i], NULL), DVPP_OK);
        assert_int_equal(atomic_load(&g[i].done_status), DVPP_OK);
    }
    {
        /* Budget released: admitted again. Bytes budget: 1000. */
        dvpp_job j;
        atomic_store(&gate, 0);
        j = (dvpp_job){DVPP_ENGINE_VPC, gate_fn, NULL, &g[4], 100, 1000, 0};
        assert_int_equal(dvpp_device_submit(s[4], &j, NULL, NULL), DVPP_OK);
        j.ctx = &g[5];
        j.pixels = 0;
        j.bytes = 1;
        assert_int_equal(dvpp_device_submit(s[5], &j, NULL, NULL), DVPP_EAGAIN);
        atomic_store(&gate, 1);
        assert_int_equal(dvpp_stream_synchronize(s[4], NULL), DVPP_OK);
        assert_int_equal(dvpp_device_submit(s[5], &j, NULL, NULL), DVPP_OK);
        assert_int_equal(dvpp_stream_synchronize(s[5], NULL), DVPP_OK);
    }
    dvpp_device_get_counters(d, &c);
    assert_int_equal(c.rejected[DVPP_REJECT_BYTES], 1);
    assert_int_equal(c.engine[DVPP_ENGINE_VPC].done, 6);
    assert_int_equal(c.engine[DVPP_ENGINE_VPC].pixels, 200);
    assert_int_equal(c.inflight_pixels, 0);
    assert_int_equal(c.inflight_bytes, 0);
    for (int i = 0; i < 6; i++)
        dvpp_stream_free(s[i]);
    dvpp_device_free(d);
}

static void test_queue_depth(void **state)
{
    dvpp_device *d = make_device(1, 3);
    dvpp_stream *s;
    gate_ctx g[5];
    atomic_int gate, started;
    dvpp_device_counters c;

    (void)state;
    atomic_init(&gate, 0);
    atomic_init(&started, 0);
    assert_int_equal(dvpp_stream_new(d, 0, &s, NULL), DVPP_OK);
    for (int i = 0; i < 5; i++)
        init_gate(&g[i], &gate, &started, NULL);
    for (int i = 0; i < 3; i++) {
        dvpp_job j = {DVPP_ENGINE_PNGD, gate_fn, gate_done, &g[i], 0, 0, 0};
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    }
    {
        dvpp_job j = {DVPP_ENGINE_PNGD, gate_fn, gate_done, &g[3], 0, 0, 0};
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_EAGAIN);
        /* Other engines have their own queues. */
        j.engine = DVPP_ENGINE_AIPP;
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    }
    dvpp_device_get_counters(d, &c);
    assert_int_equal(c.rejected[DVPP_REJECT_QUEUE], 1);
    assert_int_equal(c.engine[DVPP_ENGINE_PNGD].queued +
                         c.engine[DVPP_ENGINE_PNGD].running, 3);
    atomic_store(&gate, 1);
    assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_OK);
    {
        dvpp_job j = {DVPP_ENGINE_PNGD, gate_fn, gate_done, &g[4], 0, 0, 0};
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    }
    assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_OK);
    dvpp_stream_free(s);
    dvpp_device_free(d);
}

/* --- cancellation, deadlines ----------------------------------------------- */

static void test_cancel_queued(void **state)
{
    dvpp_device *d = make_device(1, 16);
    dvpp_stream *a, *b;
    gate_ctx ga, gb[3];
    atomic_int gate, started, ran;
    uint64_t tk[3];
    dvpp_device_counters c;

    (void)state;
    atomic_init(&gate, 0);
    atomic_init(&started, 0);
    atomic_init(&ran, 0);
    assert_int_equal(dvpp_stream_new(d, 0, &a, NULL), DVPP_OK);
    assert_int_equal(dvpp_stream_new(d, 0, &b, NULL), DVPP_OK);
    init_gate(&ga, &gate, &started, NULL);
    {
        dvpp_job j = {DVPP_ENGINE_VPC, gate_fn, gate_done, &ga, 0, 0, 0};
        assert_int_equal(dvpp_device_submit(a, &j, NULL, NULL), DVPP_OK);
    }
    wait_started(&started, 1);
    for (int i = 0; i < 3; i++) {
        dvpp_job j = {DVPP_ENGINE_VPC, gate_fn, gate_done, &gb[i], 0, 0, 0};
        init_gate(&gb[i], &gate, &started, &ran);
        assert_int_equal(dvpp_device_submit(b, &j, &tk[i], NULL), DVPP_OK);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(dvpp_job_cancel(d, tk[i]), DVPP_OK);
    atomic_store(&gate, 1);
    assert_int_equal(dvpp_stream_synchronize(a, NULL), DVPP_OK);
    assert_int_equal(dvpp_stream_synchronize(b, NULL), DVPP_ECANCELED);
    assert_int_equal(atomic_load(&ran), 0);
    assert_int_equal(atomic_load(&started), 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(atomic_load(&gb[i].done_status), DVPP_ECANCELED);
        assert_int_equal(atomic_load(&gb[i].done_calls), 1);
        /* Completed: the ticket no longer names a job. */
        assert_int_equal(dvpp_job_cancel(d, tk[i]), DVPP_ENOTFOUND);
    }
    dvpp_device_get_counters(d, &c);
    assert_int_equal(c.engine[DVPP_ENGINE_VPC].canceled, 3);
    assert_int_equal(dvpp_job_cancel(d, 0), DVPP_ENOTFOUND);
    assert_int_equal(dvpp_job_cancel(d, ~(uint64_t)0), DVPP_ENOTFOUND);
    dvpp_stream_free(a);
    dvpp_stream_free(b);
    dvpp_device_free(d);
}

static void test_cancel_running(void **state)
{
    dvpp_device *d = make_device(2, 4);
    dvpp_stream *s;
    gate_ctx g;
    atomic_int gate, started;
    uint64_t tk;

    (void)state;
    atomic_init(&gate, 0);
    atomic_init(&started, 0);
    init_gate(&g, &gate, &started, NULL);
    assert_int_equal(dvpp_stream_new(d, 0, &s, NULL), DVPP_OK);
    {
        dvpp_job j = {DVPP_ENGINE_JPEGE, gate_fn, gate_done, &g, 0, 0, 0};
        assert_int_equal(dvpp_device_submit(s, &j, &tk, NULL), DVPP_OK);
    }
    wait_started(&started, 1);
    assert_int_equal(dvpp_job_cancel(d, tk), DVPP_OK);
    assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_ECANCELED);
    assert_int_equal(atomic_load(&g.done_status), DVPP_ECANCELED);
    dvpp_stream_free(s);
    dvpp_device_free(d);
}

typedef struct dl_ctx {
    atomic_int ran;
    atomic_ullong seen_deadline;
} dl_ctx;

static dvpp_status dl_fn(dvpp_task *t, void *ctx, void *ws, dvpp_err *err)
{
    dl_ctx *c = ctx;
    (void)ws;
    (void)err;
    atomic_fetch_add(&c->ran, 1);
    atomic_store(&c->seen_deadline, dvpp_task_deadline(t));
    return dvpp_task_expired(t) ? DVPP_ETIMEDOUT : DVPP_OK;
}

static void test_deadline(void **state)
{
    dvpp_device *d = make_device(2, 4);
    dvpp_stream *s;
    dl_ctx c;
    dvpp_err err;
    dvpp_device_counters k;
    uint64_t far;

    (void)state;
    atomic_init(&c.ran, 0);
    atomic_init(&c.seen_deadline, 0);
    assert_int_equal(dvpp_stream_new(d, 0, &s, NULL), DVPP_OK);
    {
        dvpp_job j = {DVPP_ENGINE_VDEC, dl_fn, NULL, &c, 0, 0, dvpp_now_ns() - 1};
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    }
    assert_int_equal(dvpp_stream_synchronize(s, &err), DVPP_ETIMEDOUT);
    assert_int_equal(err.status, DVPP_ETIMEDOUT);
    assert_int_equal(atomic_load(&c.ran), 0);
    far = dvpp_now_ns() + 60000000000ull;
    {
        dvpp_job j = {DVPP_ENGINE_VDEC, dl_fn, NULL, &c, 0, 0, far};
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    }
    assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_OK);
    assert_int_equal(atomic_load(&c.ran), 1);
    assert_true(atomic_load(&c.seen_deadline) == far);
    dvpp_device_get_counters(d, &k);
    assert_int_equal(k.engine[DVPP_ENGINE_VDEC].timedout, 1);
    dvpp_stream_free(s);
    dvpp_device_free(d);
}

/* --- completion: eventfd, synchronize ------------------------------------- */

static dvpp_status status_fn(dvpp_task *t, void *ctx, void *ws, dvpp_err *err)
{
    int st = *(const int *)ctx;
    (void)t;
    (void)ws;
    if (st)
        return dvpp_err_set(err, (dvpp_status)st, "x", "status %d", st);
    return DVPP_OK;
}

static void test_eventfd(void **state)
{
    dvpp_device *d = make_device(4, 32);
    dvpp_stream *s, *plain;
    static const int ok = 0;
    uint64_t v = 0;

    (void)state;
    assert_int_equal(dvpp_stream_new(d, DVPP_STREAM_EVENTFD, &s, NULL), DVPP_OK);
    assert_int_equal(dvpp_stream_new(d, 0, &plain, NULL), DVPP_OK);
    assert_true(dvpp_stream_eventfd(s) >= 0);
    assert_int_equal(dvpp_stream_eventfd(plain), -1);
    assert_int_equal(dvpp_stream_new(d, 0x80, &plain, NULL), DVPP_EINVAL);
    /* Nothing yet: non-blocking read fails. */
    assert_true(read(dvpp_stream_eventfd(s), &v, sizeof(v)) < 0);
    for (int i = 0; i < 10; i++) {
        dvpp_job j = {DVPP_ENGINE_AIPP, status_fn, NULL, (void *)&ok, 0, 0, 0};
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    }
    assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_OK);
    assert_int_equal(read(dvpp_stream_eventfd(s), &v, sizeof(v)), (ssize_t)sizeof(v));
    assert_int_equal(v, 10);
    dvpp_stream_free(s);
    dvpp_device_free(d); /* frees `plain` too */
}

static void test_sync_first_error(void **state)
{
    dvpp_device *d = make_device(4, 32);
    dvpp_stream *s;
    static const int sts[6] = {0, 0, DVPP_EINVAL, 0, DVPP_ECORRUPT, 0};
    dvpp_err err;

    (void)state;
    assert_int_equal(dvpp_stream_new(d, 0, &s, NULL), DVPP_OK);
    for (int i = 0; i < 6; i++) {
        dvpp_job j = {i % 2 ? DVPP_ENGINE_VPC : DVPP_ENGINE_JPEGD, status_fn,
                      NULL, (void *)&sts[i], 0, 0, 0};
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    }
    assert_int_equal(dvpp_stream_synchronize(s, &err), DVPP_EINVAL);
    assert_int_equal(err.status, DVPP_EINVAL);
    assert_string_equal(err.msg, "status -1");
    /* Reported once. */
    assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_OK);
    dvpp_stream_free(s);
    dvpp_device_free(d);
}

/* --- batch jobs ------------------------------------------------------------ */

typedef struct batch_ctx {
    uint32_t out[64];
    atomic_int ran;
    int fail_at;
    long slow_us;     /* items other than fail_at sleep this long */
    atomic_int *gate; /* optional */
} batch_ctx;

static dvpp_status batch_fn(dvpp_task *t, void *ctx, void *ws, dvpp_err *err)
{
    batch_ctx *b = ctx;
    size_t i = dvpp_task_index(t);
    (void)ws;
    if (b->gate) {
        while (!atomic_load(b->gate)) {
            if (dvpp_task_canceled(t))
                return DVPP_ECANCELED;
            sleep_us(200);
        }
    }
    atomic_fetch_add(&b->ran, 1);
    if ((int)i != b->fail_at && b->slow_us)
        sleep_us(b->slow_us);
    if ((int)i == b->fail_at)
        return dvpp_err_set(err, DVPP_ECORRUPT, NULL, "item %zu is bad", i);
    b->out[i] = (uint32_t)(i * 2654435761u);
    return DVPP_OK;
}

static void run_batch(unsigned channels, bool strict, batch_ctx *bc,
                      dvpp_status *st, dvpp_status *wait_st)
{
    dvpp_device *d = make_device(channels, 8);
    dvpp_batch *b;
    dvpp_batch_desc desc = {0};
    dvpp_batch_progress p;

    desc.engine = DVPP_ENGINE_VPC;
    desc.n = 64;
    desc.fn = batch_fn;
    desc.ctx = bc;
    desc.strict = strict;
    desc.pixels_per_item = 10;
    assert_int_equal(dvpp_batch_new(d, &desc, &b, NULL), DVPP_OK);
    assert_true(dvpp_batch_id(b) != 0);
    *wait_st = dvpp_batch_wait(b, NULL);
    dvpp_batch_get_progress(b, &p);
    assert_true(p.finished);
    assert_int_equal(p.total, 64);
    assert_int_equal(p.done + p.failed, 64);
    for (size_t i = 0; i < 64; i++)
        st[i] = dvpp_batch_item_status(b, i);
    assert_int_equal(dvpp_batch_item_status(b, 64), DVPP_EINVAL);
    dvpp_batch_free(b);
    {
        dvpp_device_counters c;
        dvpp_device_get_counters(d, &c);
        assert_int_equal(c.inflight_pixels, 0);
        assert_int_equal(c.batches_open, 0);
    }
    dvpp_device_free(d);
}

static void test_batch_default(void **state)
{
    static batch_ctx a, b;
    dvpp_status sa[64], sb[64], wa, wb;

    (void)state;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.fail_at = b.fail_at = 13;
    run_batch(1, false, &a, sa, &wa);
    run_batch(8, false, &b, sb, &wb);
    assert_int_equal(wa, DVPP_OK);
    assert_int_equal(wb, DVPP_OK);
    assert_memory_equal(sa, sb, sizeof(sa));
    assert_memory_equal(a.out, b.out, sizeof(a.out));
    for (int i = 0; i < 64; i++)
        assert_int_equal(sa[i], i == 13 ? DVPP_ECORRUPT : DVPP_OK);
    assert_int_equal(atomic_load(&a.ran), 64);
}

static void test_batch_strict(void **state)
{
    static batch_ctx a, b;
    dvpp_status sa[64], sb[64], wa, wb;

    (void)state;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.fail_at = b.fail_at = 5;
    b.slow_us = 2000; /* item 5 fails while the first wave still runs */
    run_batch(1, true, &a, sa, &wa);
    assert_int_equal(wa, DVPP_ECORRUPT);
    assert_int_equal(atomic_load(&a.ran), 6);
    for (int i = 0; i < 64; i++)
        assert_int_equal(sa[i], i < 5 ? DVPP_OK : i == 5 ? DVPP_ECORRUPT : DVPP_ECANCELED);
    run_batch(8, true, &b, sb, &wb);
    assert_int_equal(wb, DVPP_ECORRUPT);
    assert_int_equal(sb[5], DVPP_ECORRUPT);
    assert_true(atomic_load(&b.ran) < 64);
    assert_int_equal(sb[63], DVPP_ECANCELED);
}

/* Items 1 and 2 both fail, item 2 first in time (item 1 works 50 ms,
 * polling its cancellation as long tasks do): a strict batch reports item
 * 1, the lowest failing item, and item 1 runs to its own end instead of
 * being canceled by item 2's failure; so the answer does not depend on
 * the channel count or on timing. */
static dvpp_status lowest_fn(dvpp_task *t, void *ctx, void *ws, dvpp_err *err)
{
    size_t i = dvpp_task_index(t);

    (void)ctx;
    (void)ws;
    if (i == 1) {
        for (int k = 0; k < 50; k++) {
            if (dvpp_task_canceled(t))
                return dvpp_err_set(err, DVPP_ECANCELED, NULL, "item 1 canceled");
            sleep_us(1000);
        }
        return dvpp_err_set(err, DVPP_ECORRUPT, NULL, "item 1 is bad");
    }
    if (i == 2)
        return dvpp_err_set(err, DVPP_ELIMIT, NULL, "item 2 is too big");
    sleep_us(1000);
    return DVPP_OK;
}

static void test_batch_strict_reports_the_lowest_failure(void **state)
{
    dvpp_device *d = make_device(3, 8);
    dvpp_batch *b;
    dvpp_batch_desc desc = {0};
    dvpp_err err;

    (void)state;
    desc.engine = DVPP_ENGINE_VPC;
    desc.n = 16;
    desc.fn = lowest_fn;
    desc.strict = true;
    assert_int_equal(dvpp_batch_new(d, &desc, &b, NULL), DVPP_OK);
    assert_int_equal(dvpp_batch_wait(b, &err), DVPP_ECORRUPT);
    assert_string_equal(err.msg, "item 1 is bad");
    assert_int_equal(dvpp_batch_item_status(b, 1), DVPP_ECORRUPT);
    assert_int_equal(dvpp_batch_item_status(b, 2), DVPP_ELIMIT);
    assert_int_equal(dvpp_batch_item_status(b, 15), DVPP_ECANCELED);
    dvpp_batch_free(b);
    dvpp_device_free(d);
}

static void test_batch_cancel_progress(void **state)
{
    dvpp_device *d = make_device(2, 8);
    dvpp_batch *b;
    dvpp_batch_desc desc = {0};
    dvpp_batch_progress p;
    static batch_ctx bc;
    atomic_int gate;
    dvpp_err err;

    (void)state;
    atomic_init(&gate, 0);
    memset(&bc, 0, sizeof(bc));
    bc.fail_at = -1;
    bc.gate = &gate;
    desc.engine = DVPP_ENGINE_JPEGD;
    desc.n = 20;
    desc.fn = batch_fn;
    desc.ctx = &bc;
    assert_int_equal(dvpp_batch_new(d, &desc, &b, NULL), DVPP_OK);
    dvpp_batch_get_progress(b, &p);
    assert_int_equal(p.total, 20);
    assert_false(p.finished);
    assert_int_equal(dvpp_batch_cancel(b), DVPP_OK);
    assert_int_equal(dvpp_batch_wait(b, &err), DVPP_ECANCELED);
    assert_int_equal(err.status, DVPP_ECANCELED);
    dvpp_batch_get_progress(b, &p);
    assert_true(p.finished);
    assert_int_equal(p.failed, 20);
    assert_int_equal(p.done, 0);
    assert_int_equal(atomic_load(&bc.ran), 0);
    assert_int_equal(dvpp_batch_cancel(b), DVPP_ENOTFOUND);
    dvpp_batch_free(b);
    dvpp_device_free(d);
}

static void test_batch_admission(void **state)
{
    dvpp_device_config cfg;
    dvpp_device *d;
    dvpp_batch *b1, *b2;
    dvpp_batch_desc desc = {0};
    static batch_ctx bc;
    atomic_int gate;

    (void)state;
    atomic_init(&gate, 0);
    memset(&bc, 0, sizeof(bc));
    bc.fail_at = -1;
    bc.gate = &gate;
    dvpp_device_config_default(&cfg);
    cfg.channels[DVPP_ENGINE_VPC] = 4;
    cfg.pixel_budget = 40;
    cfg.max_batches = 1;
    assert_int_equal(dvpp_device_new(&cfg, &d, NULL), DVPP_OK);
    desc.engine = DVPP_ENGINE_VPC;
    desc.n = 64;
    desc.fn = batch_fn;
    desc.ctx = &bc;
    desc.pixels_per_item = 11; /* 4 in flight x 11 > 40 */
    assert_int_equal(dvpp_batch_new(d, &desc, &b1, NULL), DVPP_ELIMIT);
    desc.pixels_per_item = 10;
    assert_int_equal(dvpp_batch_new(d, &desc, &b1, NULL), DVPP_OK);
    assert_int_equal(dvpp_batch_new(d, &desc, &b2, NULL), DVPP_EAGAIN);
    atomic_store(&gate, 1);
    assert_int_equal(dvpp_batch_wait(b1, NULL), DVPP_OK);
    dvpp_batch_free(b1);
    assert_int_equal(dvpp_batch_new(d, &desc, &b2, NULL), DVPP_OK);
    dvpp_batch_free(b2); /* cancels or waits */
    dvpp_device_free(d);
}

/* --- shutdown ------------------------------------------------------------- */

static void test_free_with_queued(void **state)
{
    dvpp_device *d = make_device(1, 8);
    dvpp_stream *s[2];
    gate_ctx g[6];
    atomic_int gate, started, ran;
    dvpp_batch *b;
    dvpp_batch_desc desc = {0};
    static batch_ctx bc;

    (void)state;
    atomic_init(&gate, 0);
    atomic_init(&started, 0);
    atomic_init(&ran, 0);
    memset(&bc, 0, sizeof(bc));
    bc.fail_at = -1;
    bc.gate = &gate;
    assert_int_equal(dvpp_stream_new(d, 0, &s[0], NULL), DVPP_OK);
    assert_int_equal(dvpp_stream_new(d, DVPP_STREAM_EVENTFD, &s[1], NULL), DVPP_OK);
    for (int i = 0; i < 6; i++) {
        dvpp_job j = {DVPP_ENGINE_VPC, gate_fn, gate_done, &g[i], 0, 0, 0};
        init_gate(&g[i], &gate, &started, &ran);
        assert_int_equal(dvpp_device_submit(s[i % 2], &j, NULL, NULL), DVPP_OK);
    }
    wait_started(&started, 1);
    desc.engine = DVPP_ENGINE_VPC;
    desc.n = 10;
    desc.fn = batch_fn;
    desc.ctx = &bc;
    assert_int_equal(dvpp_batch_new(d, &desc, &b, NULL), DVPP_OK);
    dvpp_device_free(d); /* frees the streams and the batch too */
    assert_int_equal(atomic_load(&ran), 0);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(atomic_load(&g[i].done_calls), 1);
        assert_int_equal(atomic_load(&g[i].done_status), DVPP_ECANCELED);
    }
}

/* --- backend hooks --------------------------------------------------------- */

typedef struct be_ctx {
    int inits, finis, fail_at;
    int states[8];
} be_ctx;

static dvpp_status be_init(void *ctx, dvpp_engine e, unsigned ch, void **state,
                           dvpp_err *err)
{
    be_ctx *c = ctx;
    (void)e;
    if (++c->inits == c->fail_at)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "backend init");
    c->states[ch] = (int)ch + 100;
    *state = &c->states[ch];
    return DVPP_OK;
}

static void be_fini(void *ctx, dvpp_engine e, unsigned ch, void *state)
{
    be_ctx *c = ctx;
    (void)e;
    assert_ptr_equal(state, &c->states[ch]);
    c->finis++;
}

static dvpp_status be_fn(dvpp_task *t, void *ctx, void *ws, dvpp_err *err)
{
    (void)ctx;
    (void)err;
    if (!ws || *(int *)ws != (int)dvpp_task_channel(t) + 100 ||
        dvpp_task_engine(t) != DVPP_ENGINE_JPEGD)
        return DVPP_EINVAL;
    return DVPP_OK;
}

static void test_backend_hooks(void **state)
{
    dvpp_device_config cfg;
    dvpp_device *d;
    dvpp_stream *s;
    be_ctx c = {0};
    dvpp_engine_backend be = {"test", be_init, be_fini, &c, NULL};

    (void)state;
    assert_string_equal(dvpp_backend_cpu()->name, "cpu");
    assert_string_equal(dvpp_engine_name(DVPP_ENGINE_VENC), "venc");
    assert_string_equal(dvpp_engine_name(99), "unknown");
    assert_string_equal(dvpp_reject_name(DVPP_REJECT_PIXELS), "pixels");
    dvpp_device_config_default(&cfg);
    cfg.channels[DVPP_ENGINE_JPEGD] = 3;
    cfg.backend[DVPP_ENGINE_JPEGD] = &be;
    cfg.channels[DVPP_ENGINE_VENC] = 0;
    c.fail_at = 2;
    assert_int_equal(dvpp_device_new(&cfg, &d, NULL), DVPP_ENOMEM);
    assert_null(d);
    assert_int_equal(c.finis, 1);
    c = (be_ctx){0};
    assert_int_equal(dvpp_device_new(&cfg, &d, NULL), DVPP_OK);
    assert_int_equal(c.inits, 3);
    assert_int_equal(dvpp_stream_new(d, 0, &s, NULL), DVPP_OK);
    for (int i = 0; i < 12; i++) {
        dvpp_job j = {DVPP_ENGINE_JPEGD, be_fn, NULL, NULL, 0, 0, 0};
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    }
    {
        dvpp_job j = {DVPP_ENGINE_VENC, be_fn, NULL, NULL, 0, 0, 0};
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_EUNSUPPORTED);
        j.fn = NULL;
        assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_EINVAL);
    }
    assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_OK);
    dvpp_stream_free(s);
    dvpp_device_free(d);
    assert_int_equal(c.finis, 3);
    cfg.queue_depth[DVPP_ENGINE_VPC] = 0;
    assert_int_equal(dvpp_device_new(&cfg, &d, NULL), DVPP_EINVAL);
}

/* The idle hook: runs once per worker that ran a task, idle_trim_ms after
 * that task, on that worker's own state, with the configured keep size; not
 * again until the worker runs again; never with idle_trim_ms 0. */
typedef struct idle_ctx {
    int states[2];
    atomic_int calls[2];
    atomic_ullong keep;
} idle_ctx;

static dvpp_status idle_init(void *ctx, dvpp_engine e, unsigned ch, void **state,
                             dvpp_err *err)
{
    idle_ctx *c = ctx;
    (void)e, (void)err;
    c->states[ch] = (int)ch;
    *state = &c->states[ch];
    return DVPP_OK;
}

static uint64_t idle_hook(void *ctx, dvpp_engine e, unsigned ch, void *state, uint64_t keep)
{
    idle_ctx *c = ctx;
    (void)e;
    if (ch < 2 && state == &c->states[ch])
        atomic_fetch_add(&c->calls[ch], 1);
    atomic_store(&c->keep, keep);
    return 1000 + ch;
}

static dvpp_status idle_task(dvpp_task *t, void *ctx, void *ws, dvpp_err *err)
{
    (void)t, (void)ctx, (void)ws, (void)err;
    return DVPP_OK;
}

/* Counters' idle trims, polled up to 5 s until they reach @n. */
static uint64_t wait_trims(dvpp_device *d, uint64_t n)
{
    dvpp_device_counters c;

    for (int i = 0; i < 500; i++) {
        dvpp_device_get_counters(d, &c);
        if (c.idle_trims >= n)
            break;
        sleep_us(10000);
    }
    return c.idle_trims;
}

static void run_one(dvpp_device *d)
{
    dvpp_stream *s;
    dvpp_job j = {DVPP_ENGINE_JPEGD, idle_task, NULL, NULL, 0, 0, 0};

    assert_int_equal(dvpp_stream_new(d, 0, &s, NULL), DVPP_OK);
    assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
    assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_OK);
    dvpp_stream_free(s);
}

static void test_idle_trim_hook(void **state)
{
    dvpp_device_config cfg;
    dvpp_device *d;
    idle_ctx c;
    dvpp_engine_backend be = {"idle", idle_init, NULL, &c, idle_hook};
    dvpp_device_counters k;

    (void)state;
    memset(&c, 0, sizeof(c));
    dvpp_device_config_default(&cfg);
    assert_int_equal(cfg.idle_trim_ms, DVPP_DEVICE_IDLE_TRIM_MS);
    assert_int_equal(cfg.idle_keep_bytes, DVPP_DEVICE_IDLE_KEEP_BYTES);
    cfg.channels[DVPP_ENGINE_JPEGD] = 2;
    cfg.backend[DVPP_ENGINE_JPEGD] = &be;
    cfg.idle_trim_ms = 30;
    cfg.idle_keep_bytes = 12345;
    assert_int_equal(dvpp_device_new(&cfg, &d, NULL), DVPP_OK);
    /* No task yet: no worker trims however long it waits. */
    sleep_us(100000);
    assert_int_equal(wait_trims(d, 0), 0);
    run_one(d);
    assert_int_equal(wait_trims(d, 1), 1);
    sleep_us(150000); /* five more periods: no second trim without work */
    dvpp_device_get_counters(d, &k);
    assert_int_equal(k.idle_trims, 1);
    assert_int_equal(atomic_load(&c.calls[0]) + atomic_load(&c.calls[1]), 1);
    assert_true(k.idle_trimmed_bytes == 1000 || k.idle_trimmed_bytes == 1001);
    assert_int_equal(atomic_load(&c.keep), 12345);
    run_one(d);
    assert_int_equal(wait_trims(d, 2), 2);
    dvpp_device_free(d);

    /* idle_trim_ms 0: never. */
    memset(&c, 0, sizeof(c));
    cfg.idle_trim_ms = 0;
    assert_int_equal(dvpp_device_new(&cfg, &d, NULL), DVPP_OK);
    run_one(d);
    sleep_us(100000);
    dvpp_device_get_counters(d, &k);
    assert_int_equal(k.idle_trims, 0);
    dvpp_device_free(d);
    assert_int_equal(atomic_load(&c.calls[0]) + atomic_load(&c.calls[1]), 0);
}

/* --- allocation failure ------------------------------------------------------ */

static void test_alloc_failure(void **state)
{
    static const int ok = 0;
    size_t nomem = 0;
    bool ended = false;

    (void)state;
    for (size_t fail = 1; fail < 64 && !ended; fail++) {
        dvpp_device_config cfg;
        dvpp_device *d = NULL;
        dvpp_stream *s = NULL;
        dvpp_batch *b = NULL;
        dvpp_batch_desc desc = {0};
        static batch_ctx bc;
        dvpp_status st;
        bool all_ok = false;

        memset(&bc, 0, sizeof(bc));
        bc.fail_at = -1;
        test_alloc_install();
        test_alloc_fail_nth(fail);
        dvpp_device_config_default(&cfg);
        for (int i = 0; i < DVPP_ENGINE_COUNT; i++)
            cfg.channels[i] = 2;
        st = dvpp_device_new(&cfg, &d, NULL);
        assert_true(st == DVPP_OK || st == DVPP_ENOMEM);
        if (st == DVPP_OK) {
            st = dvpp_stream_new(d, DVPP_STREAM_EVENTFD, &s, NULL);
            assert_true(st == DVPP_OK || st == DVPP_ENOMEM);
            if (st == DVPP_OK) {
                for (int i = 0; i < 4; i++) {
                    dvpp_job j = {DVPP_ENGINE_VPC, status_fn, NULL, (void *)&ok, 1, 1, 0};
                    assert_int_equal(dvpp_device_submit(s, &j, NULL, NULL), DVPP_OK);
                }
                assert_int_equal(dvpp_stream_synchronize(s, NULL), DVPP_OK);
                desc.engine = DVPP_ENGINE_VPC;
                desc.n = 16;
                desc.fn = batch_fn;
                desc.ctx = &bc;
                st = dvpp_batch_new(d, &desc, &b, NULL);
                assert_true(st == DVPP_OK || st == DVPP_ENOMEM);
                if (st == DVPP_OK) {
                    assert_int_equal(dvpp_batch_wait(b, NULL), DVPP_OK);
                    dvpp_batch_free(b);
                    all_ok = true;
                }
                dvpp_stream_free(s);
            }
            dvpp_device_free(d);
        }
        /* A run that had an allocation refused must have failed a step
         * with ENOMEM; one that had none refused ends the sweep. */
        ended = !test_alloc_injected();
        if (ended != all_ok)
            fail_msg("fail at %zu: %s, yet %s", fail,
                     ended ? "nothing injected" : "an allocation refused",
                     all_ok ? "every step succeeded" : "a step failed");
        nomem += !ended;
        assert_int_equal(test_alloc()->live, 0);
        test_alloc_uninstall();
    }
    assert_true(ended);
    assert_true(nomem > 0); /* the sweep injected failures at all */
}

/* Live channel changes: queued work starts on added workers at once;
 * after a shrink, parked workers take nothing; freeing joins them all. */
static void run_gated(dvpp_stream **st, int n, int expect_running)
{
    gate_ctx g[4];
    atomic_int gate, started;

    atomic_init(&gate, 0);
    atomic_init(&started, 0);
    for (int i = 0; i < n; i++) {
        dvpp_job j = {DVPP_ENGINE_VPC, gate_fn, gate_done, &g[i], 0, 0, 0};
        init_gate(&g[i], &gate, &started, NULL);
        assert_int_equal(dvpp_device_submit(st[i], &j, NULL, NULL), DVPP_OK);
    }
    wait_started(&started, expect_running);
    sleep_us(50000);
    assert_int_equal(atomic_load(&started), expect_running);
    atomic_store(&gate, 1);
    for (int i = 0; i < n; i++)
        assert_int_equal(dvpp_stream_synchronize(st[i], NULL), DVPP_OK);
    assert_int_equal(atomic_load(&started), n);
}

static void test_set_channels(void **state)
{
    dvpp_device *d = make_device(1, 16);
    dvpp_stream *st[3];
    gate_ctx g[3];
    atomic_int gate, started;
    dvpp_err err;

    (void)state;
    for (int i = 0; i < 3; i++)
        assert_int_equal(dvpp_stream_new(d, 0, &st[i], NULL), DVPP_OK);
    assert_int_equal(dvpp_device_channels(d, DVPP_ENGINE_VPC), 1);
    run_gated(st, 3, 1);
    /* Grow while three jobs wait behind one channel. */
    atomic_init(&gate, 0);
    atomic_init(&started, 0);
    for (int i = 0; i < 3; i++) {
        dvpp_job j = {DVPP_ENGINE_VPC, gate_fn, gate_done, &g[i], 0, 0, 0};
        init_gate(&g[i], &gate, &started, NULL);
        assert_int_equal(dvpp_device_submit(st[i], &j, NULL, NULL), DVPP_OK);
    }
    wait_started(&started, 1);
    assert_int_equal(dvpp_device_set_channels(d, DVPP_ENGINE_VPC, 3, NULL), DVPP_OK);
    assert_int_equal(dvpp_device_channels(d, DVPP_ENGINE_VPC), 3);
    wait_started(&started, 3);
    atomic_store(&gate, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(dvpp_stream_synchronize(st[i], NULL), DVPP_OK);
    run_gated(st, 3, 3);
    /* Shrink: two workers park. */
    assert_int_equal(dvpp_device_set_channels(d, DVPP_ENGINE_VPC, 1, NULL), DVPP_OK);
    run_gated(st, 3, 1);
    assert_int_equal(dvpp_device_set_channels(d, DVPP_ENGINE_VPC, 2, NULL), DVPP_OK);
    run_gated(st, 3, 2);
    assert_int_equal(dvpp_device_set_channels(d, DVPP_ENGINE_VPC, 0, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_device_set_channels(d, DVPP_ENGINE_VPC,
                                              DVPP_DEVICE_MAX_CHANNELS + 1, &err),
                     DVPP_EINVAL);
    assert_int_equal(dvpp_device_channels(d, DVPP_ENGINE_VPC), 2);
    for (int i = 0; i < 3; i++)
        dvpp_stream_free(st[i]);
    dvpp_device_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_order),
        cmocka_unit_test(test_pixel_budget),
        cmocka_unit_test(test_queue_depth),
        cmocka_unit_test(test_cancel_queued),
        cmocka_unit_test(test_cancel_running),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_eventfd),
        cmocka_unit_test(test_sync_first_error),
        cmocka_unit_test(test_batch_default),
        cmocka_unit_test(test_batch_strict),
        cmocka_unit_test(test_batch_strict_reports_the_lowest_failure),
        cmocka_unit_test(test_batch_cancel_progress),
        cmocka_unit_test(test_batch_admission),
        cmocka_unit_test(test_free_with_queued),
        cmocka_unit_test(test_backend_hooks),
        cmocka_unit_test(test_idle_trim_hook),
        cmocka_unit_test(test_alloc_failure),
        cmocka_unit_test(test_set_channels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
