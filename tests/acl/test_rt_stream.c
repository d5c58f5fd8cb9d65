/* Runtime tests (libascendcl): streams over libdvpp's device model (order,
 * first error and its message at the sync, back-pressure, timeouts),
 * tasks through acli_submit (per-stream state, cancellation at a reset),
 * private streams, events, async copies and fills. */
#include "device/dvpp_device.h"
#include "test_rt_common.h"

static rt_order g_order;

static int init_with(const char *json)
{
    rt_order_reset(&g_order);
    return rt_up(json);
}

static int setup(void **state)
{
    (void)state;
    return init_with("{\"dvpp\": {\"channels\": 2}}");
}

/* One channel per engine and one job record per engine queue. */
static int setup_depth1(void **state)
{
    (void)state;
    return init_with("{\"dvpp\": {\"channels\": 1, \"queue_depth\": 1}}");
}

static void test_tasks_run_in_order_across_engines(void **state)
{
    static const int engines[] = {DVPP_ENGINE_JPEGD, DVPP_ENGINE_VPC, DVPP_ENGINE_JPEGE,
                                  DVPP_ENGINE_PNGD, DVPP_ENGINE_VDEC, DVPP_ENGINE_VENC};
    acli_stream *s = rt_stream_of(NULL);

    (void)state;
    atomic_store(&g_order.sleep_ms, 1);
    for (int i = 0; i < 60; i++)
        assert_int_equal(rt_order_submit(s, engines[i % 6], &g_order, i, ACL_SUCCESS),
                         ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    for (int i = 0; i < 60; i++)
        assert_int_equal(g_order.pos[i], i);
    assert_int_equal(atomic_load(&g_order.fini_calls), 60);
    for (int i = 0; i < 60; i++)
        assert_int_equal(atomic_load(&g_order.fini_status[i]), ACL_SUCCESS);
}

static void test_first_error_and_message_at_sync(void **state)
{
    aclrtStream st;
    acli_stream *s;

    (void)state;
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);
    s = rt_stream_of(st);
    for (int i = 0; i < 10; i++)
        assert_int_equal(rt_order_submit(s, DVPP_ENGINE_VPC, &g_order, i,
                                         i == 3 ? ACL_ERROR_FAILURE
                                         : i == 6 ? ACL_ERROR_INVALID_PARAM
                                                  : ACL_SUCCESS),
                         ACL_SUCCESS);
    /* Submits succeed ("accepted"); the error comes at the sync. */
    assert_int_equal(aclrtSynchronizeStream(st), ACL_ERROR_FAILURE);
    assert_string_equal(aclGetRecentErrMsg(), "task 3 failed on purpose");
    /* Every task ran, in order; each fini saw its own result. */
    for (int i = 0; i < 10; i++)
        assert_int_equal(g_order.pos[i], i);
    assert_int_equal(atomic_load(&g_order.fini_status[3]), ACL_ERROR_FAILURE);
    assert_int_equal(atomic_load(&g_order.fini_status[6]), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(atomic_load(&g_order.fini_status[7]), ACL_SUCCESS);
    /* Reported once: the next sync is clean. */
    assert_int_equal(aclrtSynchronizeStream(st), ACL_SUCCESS);
    /* acli_stream_sync is the same. */
    assert_int_equal(rt_order_submit(s, DVPP_ENGINE_JPEGD, &g_order, 10, ACL_ERROR_BAD_ALLOC),
                     ACL_SUCCESS);
    assert_int_equal(acli_stream_sync(s), ACL_ERROR_BAD_ALLOC);
    assert_string_equal(aclGetRecentErrMsg(), "task 10 failed on purpose");
    assert_int_equal(acli_stream_sync(s), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(st), ACL_SUCCESS);
}

static void test_streams_are_independent(void **state)
{
    aclrtStream a, b;

    (void)state;
    assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&b), ACL_SUCCESS);
    assert_int_equal(rt_order_submit(rt_stream_of(a), DVPP_ENGINE_VPC, &g_order, 0,
                                     ACL_ERROR_FAILURE),
                     ACL_SUCCESS);
    assert_int_equal(rt_order_submit(rt_stream_of(b), DVPP_ENGINE_VPC, &g_order, 1, ACL_SUCCESS),
                     ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(b), ACL_SUCCESS);
    /* The device sync reports a's error without consuming it. */
    assert_int_equal(aclrtSynchronizeDevice(), ACL_ERROR_FAILURE);
    assert_int_equal(aclrtSynchronizeStream(a), ACL_ERROR_FAILURE);
    assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(b), ACL_SUCCESS);
}

static void test_stream_handles(void **state)
{
    aclrtStream st = (aclrtStream)0x1;
    acli_stream *s = NULL;

    (void)state;
    assert_int_equal(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtDestroyStream((aclrtStream)&st), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtSynchronizeStream((aclrtStream)&st), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_stream_get((aclrtStream)&st, &s), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_stream_get(NULL, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(st), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(st), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_stream_get(st, &s), ACL_ERROR_INVALID_PARAM);
    /* acli_submit's own checks; nothing queued, the caller keeps ctx. */
    s = rt_stream_of(NULL);
    assert_int_equal(acli_submit(NULL, 0, rt_order_run, rt_order_fini, NULL),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_submit(s, DVPP_ENGINE_COUNT, rt_order_run, rt_order_fini, NULL),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_submit(s, -1, rt_order_run, rt_order_fini, NULL),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_submit(s, 0, NULL, rt_order_fini, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_submit(s, 0, rt_order_run, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(atomic_load(&g_order.fini_calls), 0);
}

static void test_destroy_stream_waits_for_its_tasks(void **state)
{
    aclrtStream st;
    acli_stream *s;

    (void)state;
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);
    s = rt_stream_of(st);
    atomic_store(&g_order.sleep_ms, 20);
    for (int i = 0; i < 5; i++)
        assert_int_equal(rt_order_submit(s, DVPP_ENGINE_VPC, &g_order, i, ACL_SUCCESS),
                         ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(st), ACL_SUCCESS);
    assert_int_equal(atomic_load(&g_order.fini_calls), 5);
    assert_int_equal(g_order.pos[4], 4);
}

static void test_sync_with_timeout(void **state)
{
    acli_stream *s = rt_stream_of(NULL);
    uint64_t t0;

    (void)state;
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, 0), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, -2), ACL_ERROR_INVALID_PARAM);
    /* held until the timed sync is back: it cannot see the task end */
    atomic_store(&g_order.hold, true);
    assert_int_equal(rt_order_submit(s, DVPP_ENGINE_VPC, &g_order, 0, ACL_ERROR_FAILURE),
                     ACL_SUCCESS);
    t0 = rt_now_ms();
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, 50),
                     ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    assert_true(rt_now_ms() - t0 >= 45);
    /* not the hold's 30 s: the sync gave up on its own */
    assert_true(rt_now_ms() - t0 < 10000);
    rt_assert_msg_has("50 ms");
    atomic_store(&g_order.hold, false);
    /* The error is still there for the sync that sees the task end. */
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, -1), ACL_ERROR_FAILURE);
    assert_int_equal(aclrtSynchronizeStreamWithTimeout(NULL, 1000), ACL_SUCCESS);
}

/* --- back-pressure -------------------------------------------------------------- */

static void test_full_queue_blocks_submit_until_space(void **state)
{
    acli_stream *s = rt_stream_of(NULL);

    (void)state;
    /* queue_depth 1: every submit after the first waits for a completion. */
    atomic_store(&g_order.sleep_ms, 1);
    for (int i = 0; i < 200; i++)
        assert_int_equal(rt_order_submit(s, DVPP_ENGINE_VPC, &g_order, i, ACL_SUCCESS),
                         ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    for (int i = 0; i < 200; i++)
        assert_int_equal(g_order.pos[i], i);
}

typedef struct submitter {
    aclrtContext ctx;
    rt_order order;
    atomic_int failures;
} submitter;

static void *submit_thread(void *arg)
{
    submitter *w = arg;
    aclrtStream st;
    acli_stream *s;

    if (aclrtSetCurrentContext(w->ctx) != ACL_SUCCESS || aclrtCreateStream(&st) != ACL_SUCCESS ||
        acli_stream_get(st, &s) != ACL_SUCCESS) {
        atomic_fetch_add(&w->failures, 1);
        return NULL;
    }
    for (int i = 0; i < 300; i++) {
        rt_order_task *k = malloc(sizeof(*k));
        *k = (rt_order_task){&w->order, i, ACL_SUCCESS};
        if (acli_submit(s, i % 2 ? DVPP_ENGINE_VPC : DVPP_ENGINE_JPEGD, rt_order_run,
                        rt_order_fini, k) != ACL_SUCCESS) {
            free(k);
            atomic_fetch_add(&w->failures, 1);
        }
    }
    if (aclrtSynchronizeStream(st) != ACL_SUCCESS || aclrtDestroyStream(st) != ACL_SUCCESS)
        atomic_fetch_add(&w->failures, 1);
    return NULL;
}

static void test_submitters_share_a_full_queue(void **state)
{
    static submitter w[3];
    pthread_t t[3];
    aclrtContext ctx;

    (void)state;
    assert_int_equal(aclrtGetCurrentContext(&ctx), ACL_SUCCESS);
    for (int i = 0; i < 3; i++) {
        w[i].ctx = ctx;
        rt_order_reset(&w[i].order);
        atomic_init(&w[i].failures, 0);
        assert_int_equal(pthread_create(&t[i], NULL, submit_thread, &w[i]), 0);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(atomic_load(&w[i].failures), 0);
        assert_int_equal(atomic_load(&w[i].order.fini_calls), 300);
        for (int k = 0; k < 300; k++)
            assert_int_equal(w[i].order.pos[k], k);
    }
}

/* --- teardown with tasks pending ----------------------------------------------------- */

static atomic_int g_saw_cancel, g_started;

/* Runs until its stream's device is torn down. */
static aclError until_canceled_run(void *ctx, acli_task *t)
{
    (void)ctx;
    atomic_fetch_add(&g_started, 1);
    while (!acli_task_canceled(t))
        rt_sleep_ms(1);
    atomic_fetch_add(&g_saw_cancel, 1);
    return acli_fail(ACL_ERROR_RT_DEVICE_TASK_ABORT, "stopped by the reset");
}

/* Submit a task that runs until the reset, and wait until it runs. */
static void submit_until_canceled(acli_stream *s, int index)
{
    rt_order_task *k = malloc(sizeof(*k));
    int before = atomic_load(&g_started);

    assert_non_null(k);
    *k = (rt_order_task){&g_order, index, ACL_SUCCESS};
    assert_int_equal(acli_submit(s, DVPP_ENGINE_VPC, until_canceled_run, rt_order_fini, k),
                     ACL_SUCCESS);
    while (atomic_load(&g_started) == before)
        rt_sleep_ms(1);
}

static void test_reset_cancels_pending_tasks(void **state)
{
    aclrtStream st;
    acli_stream *s;
    uint64_t t0;

    (void)state;
    atomic_store(&g_saw_cancel, 0);
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);
    s = rt_stream_of(st);
    submit_until_canceled(s, 0);
    for (int i = 1; i <= 20; i++)
        assert_int_equal(rt_order_submit(s, i % 2 ? DVPP_ENGINE_JPEGD : DVPP_ENGINE_VPC,
                                         &g_order, i, ACL_SUCCESS),
                         ACL_SUCCESS);
    /* Also on the default stream of the default context. */
    assert_int_equal(rt_order_submit(rt_stream_of(NULL), DVPP_ENGINE_VPC, &g_order, 21,
                                     ACL_SUCCESS),
                     ACL_SUCCESS);
    t0 = rt_now_ms();
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    assert_true(rt_now_ms() - t0 < 2000);
    assert_int_equal(atomic_load(&g_saw_cancel), 1);
    /* Every fini ran: the running one with its own code, the queued ones
     * with the abort, and none of those ran. */
    assert_int_equal(atomic_load(&g_order.fini_calls), 22);
    for (int i = 0; i <= 20; i++) {
        assert_int_equal(atomic_load(&g_order.fini_status[i]), ACL_ERROR_RT_DEVICE_TASK_ABORT);
        if (i)
            assert_int_equal(g_order.pos[i], -1);
    }
    /* (21 may have run before the reset: it was alone on its stream.) */
    assert_int_equal(aclrtSynchronizeStream(st), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS); /* for the teardown */
}

typedef struct blocked_submit {
    acli_stream *s;
    atomic_int entered;
    aclError rc;
} blocked_submit;

static void *blocked_submit_thread(void *arg)
{
    blocked_submit *b = arg;
    rt_order_task *k = malloc(sizeof(*k));

    *k = (rt_order_task){&g_order, 1, ACL_SUCCESS};
    atomic_store(&b->entered, 1);
    b->rc = acli_submit(b->s, DVPP_ENGINE_VPC, rt_order_run, rt_order_fini, k);
    if (b->rc)
        free(k); /* refused: still the caller's */
    return NULL;
}

static void test_reset_releases_a_submitter_blocked_on_a_full_queue(void **state)
{
    blocked_submit b = {0};
    pthread_t t;

    (void)state;
    atomic_store(&g_saw_cancel, 0);
    b.s = rt_stream_of(NULL);
    /* queue_depth 1: the VPC queue is full with a task that runs until
     * the reset, so the thread's submit waits for room. */
    submit_until_canceled(b.s, 0);
    assert_int_equal(pthread_create(&t, NULL, blocked_submit_thread, &b), 0);
    while (!atomic_load(&b.entered))
        rt_sleep_ms(1);
    rt_sleep_ms(50);
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    pthread_join(t, NULL);
    assert_int_equal(b.rc, ACL_ERROR_INVALID_PARAM);
    assert_int_equal(atomic_load(&g_order.fini_calls), 1);
    assert_int_equal(g_order.pos[1], -1);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
}

static void test_finalize_cancels_pending_tasks(void **state)
{
    acli_stream *s = rt_stream_of(NULL);

    (void)state;
    atomic_store(&g_saw_cancel, 0);
    submit_until_canceled(s, 0);
    for (int i = 1; i < 5; i++)
        assert_int_equal(rt_order_submit(s, DVPP_ENGINE_VPC, &g_order, i, ACL_SUCCESS),
                         ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    assert_int_equal(atomic_load(&g_order.fini_calls), 5);
    assert_int_equal(atomic_load(&g_saw_cancel), 1);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS); /* for the teardown */
}

/* --- per-stream state ---------------------------------------------------------------------- */

static atomic_int g_made, g_freed;

static void *state_make(void)
{
    atomic_fetch_add(&g_made, 1);
    return malloc(64);
}

static void state_free(void *p)
{
    atomic_fetch_add(&g_freed, 1);
    free(p);
}

typedef struct state_task {
    void *seen;
} state_task;

static aclError state_run(void *ctx, acli_task *t)
{
    state_task *k = ctx;

    k->seen = acli_task_state(t, state_make, state_free);
    return k->seen ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}

static void state_fini(void *ctx, aclError status)
{
    (void)ctx;
    (void)status;
}

static void test_per_stream_state(void **state)
{
    state_task k[6] = {{0}};
    aclrtStream a, b;

    (void)state;
    atomic_store(&g_made, 0);
    atomic_store(&g_freed, 0);
    assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&b), ACL_SUCCESS);
    for (int i = 0; i < 6; i++)
        assert_int_equal(acli_submit(rt_stream_of(i < 3 ? a : b), i % 2 ? DVPP_ENGINE_VPC
                                                                      : DVPP_ENGINE_JPEGE,
                                     state_run, state_fini, &k[i]),
                         ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(a), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(b), ACL_SUCCESS);
    /* One state per stream, made on first use. */
    assert_int_equal(atomic_load(&g_made), 2);
    assert_ptr_equal(k[0].seen, k[1].seen);
    assert_ptr_equal(k[0].seen, k[2].seen);
    assert_ptr_equal(k[3].seen, k[5].seen);
    assert_ptr_not_equal(k[0].seen, k[3].seen);
    assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
    assert_int_equal(atomic_load(&g_freed), 1);
    /* b's goes with the device. */
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    assert_int_equal(atomic_load(&g_freed), 2);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
}

/* --- private streams ------------------------------------------------------------------------- */

typedef struct ctxless {
    aclError rc;
} ctxless;

static void *ctxless_thread(void *arg)
{
    ctxless *c = arg;
    acli_stream *s = (acli_stream *)0x1;

    c->rc = acli_stream_create(&s);
    if (s != NULL)
        c->rc = -1;
    return NULL;
}

static void test_private_streams(void **state)
{
    acli_stream *p = NULL;
    ctxless c;
    pthread_t t;

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, ctxless_thread, &c), 0);
    pthread_join(t, NULL);
    assert_int_equal(c.rc, ACL_ERROR_RT_CONTEXT_NULL);
    assert_int_equal(acli_stream_create(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_stream_create(&p), ACL_SUCCESS);
    /* Not a stream a program may name. */
    assert_int_equal(aclrtSynchronizeStream((aclrtStream)p), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtDestroyStream((aclrtStream)p), ACL_ERROR_INVALID_PARAM);
    for (int i = 0; i < 8; i++)
        assert_int_equal(rt_order_submit(p, DVPP_ENGINE_VDEC, &g_order, i, ACL_SUCCESS),
                         ACL_SUCCESS);
    assert_int_equal(acli_stream_sync(p), ACL_SUCCESS);
    assert_int_equal(g_order.pos[7], 7);
    acli_stream_destroy(p);
    acli_stream_destroy(NULL);

    /* A private stream outlives a reset as an orphan its owner destroys. */
    assert_int_equal(acli_stream_create(&p), ACL_SUCCESS);
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    assert_int_equal(rt_order_submit(p, DVPP_ENGINE_VDEC, &g_order, 9, ACL_SUCCESS),
                     ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("reset");
    assert_int_equal(acli_stream_sync(p), ACL_ERROR_INVALID_PARAM);
    acli_stream_destroy(p);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
}

/* --- events ----------------------------------------------------------------------------------- */

static void test_events(void **state)
{
    aclrtEvent ev = (aclrtEvent)0x1, ev2;
    acli_stream *s = rt_stream_of(NULL);

    (void)state;
    assert_int_equal(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtCreateEvent(&ev), ACL_SUCCESS);
    /* Never recorded: nothing to wait for. */
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_SUCCESS);
    atomic_store(&g_order.sleep_ms, 50);
    assert_int_equal(rt_order_submit(s, DVPP_ENGINE_VPC, &g_order, 0, ACL_SUCCESS),
                     ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_SUCCESS);
    /* The event's record came after the task: the task is done. */
    assert_int_equal(g_order.pos[0], 0);
    assert_int_equal(aclrtRecordEvent(NULL, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtRecordEvent((aclrtEvent)&ev, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtSynchronizeEvent(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtDestroyEvent(ev), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(ev), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtSynchronizeEvent(ev), ACL_ERROR_INVALID_PARAM);
    /* Destroyed with a record pending: freed by the record (ASan: no leak,
     * no use after free). */
    assert_int_equal(aclrtCreateEvent(&ev2), ACL_SUCCESS);
    assert_int_equal(rt_order_submit(s, DVPP_ENGINE_VPC, &g_order, 1, ACL_SUCCESS),
                     ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(ev2, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(ev2), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
}

static void *event_ctxless_thread(void *arg)
{
    aclrtEvent ev;

    *(aclError *)arg = aclrtCreateEvent(&ev);
    return NULL;
}

static void test_event_needs_a_context(void **state)
{
    aclError rc = 0;
    pthread_t t;

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, event_ctxless_thread, &rc), 0);
    pthread_join(t, NULL);
    assert_int_equal(rc, ACL_ERROR_RT_CONTEXT_NULL);
}

/* --- async copies and fills ----------------------------------------------------------------- */

static void test_memcpy_and_memset_async_run_in_order(void **state)
{
    unsigned char *a, *b;

    (void)state;
    assert_int_equal(aclrtMalloc((void **)&a, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMallocHost((void **)&b, 4096), ACL_SUCCESS);
    assert_int_equal(aclrtMemsetAsync(a, 4096, 0x5a, 4096, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtMemsetAsync(a + 100, 3996, 0x1ff, 10, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtMemcpyAsync(b, 4096, a, 4096, ACL_MEMCPY_DEVICE_TO_HOST, NULL),
                     ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    for (int i = 0; i < 4096; i++)
        assert_int_equal(b[i], i >= 100 && i < 110 ? 0xff : 0x5a);
    /* Checked at the call; nothing queued. */
    assert_int_equal(aclrtMemcpyAsync(b, 10, a, 11, ACL_MEMCPY_DEVICE_TO_HOST, NULL),
                     ACL_ERROR_RT_PARAM_INVALID);
    assert_int_equal(aclrtMemcpyAsync(b, 4096, a, 16, (aclrtMemcpyKind)9, NULL),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMemcpyAsync(NULL, 4096, a, 16, ACL_MEMCPY_DEFAULT, NULL),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMemsetAsync(a, 8, 0, 9, NULL), ACL_ERROR_RT_PARAM_INVALID);
    assert_int_equal(aclrtMemsetAsync(NULL, 8, 0, 8, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMemsetAsync(a, 8, 0, 8, (aclrtStream)&a), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtFree(a), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(b), ACL_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tasks_run_in_order_across_engines, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_first_error_and_message_at_sync, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_streams_are_independent, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_stream_handles, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_destroy_stream_waits_for_its_tasks, setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_sync_with_timeout, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_full_queue_blocks_submit_until_space,
                                        setup_depth1, rt_teardown),
        cmocka_unit_test_setup_teardown(test_submitters_share_a_full_queue, setup_depth1,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_reset_releases_a_submitter_blocked_on_a_full_queue,
                                        setup_depth1, rt_teardown),
        cmocka_unit_test_setup_teardown(test_reset_cancels_pending_tasks, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_finalize_cancels_pending_tasks, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_per_stream_state, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_private_streams, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_events, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_event_needs_a_context, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_memcpy_and_memset_async_run_in_order, setup,
                                        rt_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    rt_remove_dir();
    return rc;
}
