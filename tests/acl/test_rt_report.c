/* Runtime tests (libascendcl): reports. aclrtSubscribeReport /
 * aclrtProcessReport / aclrtLaunchCallback (BLOCK callbacks run on the
 * subscribed thread inside its aclrtProcessReport, later tasks of the
 * stream wait for them), the codes of an unsubscribed thread and of
 * timeouts, and the acli_report_* bridge VDEC/VENC channels use. */
#include "device/dvpp_device.h"
#include "test_rt_common.h"

static rt_order g_order;

static int setup(void **state)
{
    (void)state;
    rt_order_reset(&g_order);
    return rt_up("{\"dvpp\": {\"channels\": 2}}");
}

/* --- a report thread ------------------------------------------------------------ */

static _Thread_local bool tl_in_process_report;

typedef struct reporter {
    pthread_t thread;
    atomic_bool go;        /* start calling aclrtProcessReport */
    atomic_bool stop;
    atomic_int calls;
    atomic_int ok;         /* ACL_SUCCESS returns */
    atomic_int timeouts;   /* ACL_ERROR_RT_REPORT_TIMEOUT */
    atomic_int unsubscribed; /* ACL_ERROR_RT_THREAD_SUBSCRIBE */
    int32_t timeout_ms;
} reporter;

static void *reporter_main(void *arg)
{
    reporter *r = arg;

    while (!atomic_load(&r->go) && !atomic_load(&r->stop))
        rt_sleep_ms(1);
    while (!atomic_load(&r->stop)) {
        aclError rc;

        tl_in_process_report = true;
        rc = aclrtProcessReport(r->timeout_ms);
        tl_in_process_report = false;
        atomic_fetch_add(&r->calls, 1);
        if (rc == ACL_SUCCESS)
            atomic_fetch_add(&r->ok, 1);
        else if (rc == ACL_ERROR_RT_REPORT_TIMEOUT)
            atomic_fetch_add(&r->timeouts, 1);
        else if (rc == ACL_ERROR_RT_THREAD_SUBSCRIBE)
            atomic_fetch_add(&r->unsubscribed, 1);
    }
    return NULL;
}

static void reporter_start(reporter *r, int32_t timeout_ms, bool go)
{
    memset(r, 0, sizeof(*r));
    r->timeout_ms = timeout_ms;
    atomic_store(&r->go, go);
    assert_int_equal(pthread_create(&r->thread, NULL, reporter_main, r), 0);
}

static uint64_t reporter_id(const reporter *r)
{
    return (uint64_t)r->thread;
}

static void reporter_stop(reporter *r)
{
    atomic_store(&r->stop, true);
    pthread_join(r->thread, NULL);
}

/* --- a callback that checks where and when it runs ---------------------------------- */

typedef struct cb_probe {
    rt_order *o;
    atomic_int seq;            /* its position among the stream's tasks */
    atomic_bool on_thread;     /* ran on the expected thread */
    atomic_bool in_report;     /* inside aclrtProcessReport */
    uint64_t want_thread;
} cb_probe;

static void probe_cb(void *user)
{
    cb_probe *p = user;
    pthread_t self = pthread_self();

    atomic_store(&p->on_thread, (uint64_t)self == p->want_thread);
    atomic_store(&p->in_report, tl_in_process_report);
    atomic_store(&p->seq, atomic_fetch_add(&p->o->next, 1));
}

static void test_process_report_argument_codes(void **state)
{
    (void)state;
    assert_int_equal(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtProcessReport(INT32_MIN), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("timeout");
}

static void test_unsubscribed_thread_gets_107012_in_bounded_time(void **state)
{
    uint64_t t0, best;

    (void)state;
    /* -1 would wait forever for a callback; with no subscription it
     * waits a little for one and says so. */
    t0 = rt_now_ms();
    assert_int_equal(aclrtProcessReport(-1), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert_true(rt_now_ms() - t0 >= 90);
    assert_true(rt_now_ms() - t0 < 1000);
    rt_assert_msg_has("subscribed for no stream");
    /* A short timeout caps the wait. Uncapped, every call takes the 100
     * ms; the quickest of a few is held to the bound, so one call slowed
     * by a loaded machine does not count. */
    best = UINT64_MAX;
    for (int i = 0; i < 5 && best >= 90; i++) {
        t0 = rt_now_ms();
        assert_int_equal(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
        t0 = rt_now_ms() - t0;
        best = t0 < best ? t0 : best;
    }
    assert_true(best < 90);
    /* A long one does not make it longer. */
    t0 = rt_now_ms();
    assert_int_equal(aclrtProcessReport(5000), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert_true(rt_now_ms() - t0 < 1000);
}

static void test_subscribed_thread_times_out(void **state)
{
    uint64_t self = (uint64_t)pthread_self(), t0;

    (void)state;
    assert_int_equal(aclrtSubscribeReport(self, NULL), ACL_SUCCESS);
    t0 = rt_now_ms();
    assert_int_equal(aclrtProcessReport(60), ACL_ERROR_RT_REPORT_TIMEOUT);
    assert_true(rt_now_ms() - t0 >= 55);
    assert_true(rt_now_ms() - t0 < 1000);
    rt_assert_msg_has("60 ms");
    assert_int_equal(aclrtUnSubscribeReport(self, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtProcessReport(20), ACL_ERROR_RT_THREAD_SUBSCRIBE);
}

static void test_launch_argument_codes(void **state)
{
    cb_probe p = {.o = &g_order};
    aclrtStream st;
    uint64_t self = (uint64_t)pthread_self();

    (void)state;
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);
    /* No subscriber for the stream. */
    assert_int_equal(aclrtLaunchCallback(probe_cb, &p, ACL_CALLBACK_BLOCK, st),
                     ACL_ERROR_RT_STREAM_NO_CB_REG);
    rt_assert_msg_has("aclrtSubscribeReport");
    assert_int_equal(aclrtSubscribeReport(self, st), ACL_SUCCESS);
    /* Only BLOCK, as the 310 runtimes. */
    assert_int_equal(aclrtLaunchCallback(probe_cb, &p, ACL_CALLBACK_NO_BLOCK, st),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtLaunchCallback(probe_cb, &p, (aclrtCallbackBlockType)2, st),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtLaunchCallback(NULL, &p, ACL_CALLBACK_BLOCK, st),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtLaunchCallback(probe_cb, &p, ACL_CALLBACK_BLOCK, (aclrtStream)&p),
                     ACL_ERROR_INVALID_PARAM);
    /* One thread per stream. */
    assert_int_equal(aclrtSubscribeReport(self, st), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    assert_int_equal(aclrtSubscribeReport(self + 1, st), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    assert_int_equal(aclrtSubscribeReport(self, (aclrtStream)&p), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtUnSubscribeReport(self + 1, st), ACL_ERROR_STREAM_NOT_SUBSCRIBE);
    assert_int_equal(aclrtUnSubscribeReport(self, st), ACL_SUCCESS);
    assert_int_equal(aclrtUnSubscribeReport(self, st), ACL_ERROR_STREAM_NOT_SUBSCRIBE);
    /* Nothing was queued by any of it. */
    assert_int_equal(aclrtSynchronizeStream(st), ACL_SUCCESS);
    assert_int_equal(atomic_load(&g_order.next), 0);
    assert_int_equal(aclrtDestroyStream(st), ACL_SUCCESS);
}

static void test_block_callback_runs_on_subscriber_and_later_tasks_wait(void **state)
{
    cb_probe p = {.o = &g_order};
    reporter r;
    aclrtStream st;
    acli_stream *s;

    (void)state;
    /* The report thread starts processing only later. */
    reporter_start(&r, 1000, false);
    p.want_thread = reporter_id(&r);
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);
    s = rt_stream_of(st);
    assert_int_equal(aclrtSubscribeReport(reporter_id(&r), st), ACL_SUCCESS);
    atomic_store(&p.seq, -1);
    assert_int_equal(rt_order_submit(s, DVPP_ENGINE_VPC, &g_order, 0, ACL_SUCCESS), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchCallback(probe_cb, &p, ACL_CALLBACK_BLOCK, st), ACL_SUCCESS);
    assert_int_equal(rt_order_submit(s, DVPP_ENGINE_JPEGD, &g_order, 2, ACL_SUCCESS),
                     ACL_SUCCESS);
    /* While nobody processes reports, the callback waits and so does the
     * task after it: once the first task has run (however long that
     * takes), 150 ms for either to run wrongly. */
    for (uint64_t t0 = rt_now_ms(); g_order.pos[0] == -1 && rt_now_ms() - t0 < 30000;)
        rt_sleep_ms(1);
    rt_sleep_ms(150);
    assert_int_equal(g_order.pos[0], 0);
    assert_int_equal(atomic_load(&p.seq), -1);
    assert_int_equal(g_order.pos[2], -1);
    atomic_store(&r.go, true);
    assert_int_equal(aclrtSynchronizeStream(st), ACL_SUCCESS);
    assert_int_equal(atomic_load(&p.seq), 1);
    assert_int_equal(g_order.pos[2], 2);
    assert_true(atomic_load(&p.on_thread));
    assert_true(atomic_load(&p.in_report));
    assert_int_equal(aclrtUnSubscribeReport(reporter_id(&r), st), ACL_SUCCESS);
    reporter_stop(&r);
    assert_int_equal(aclrtDestroyStream(st), ACL_SUCCESS);
}

static void test_callbacks_of_two_streams_in_order_on_one_thread(void **state)
{
    enum { N = 40 };
    static cb_probe p[N];
    reporter r;
    aclrtStream a, b;

    (void)state;
    reporter_start(&r, 100, true);
    assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&b), ACL_SUCCESS);
    assert_int_equal(aclrtSubscribeReport(reporter_id(&r), a), ACL_SUCCESS);
    /* The default stream too. */
    assert_int_equal(aclrtSubscribeReport(reporter_id(&r), NULL), ACL_SUCCESS);
    for (int i = 0; i < N; i++) {
        p[i] = (cb_probe){.o = &g_order, .want_thread = reporter_id(&r)};
        atomic_init(&p[i].seq, -1);
        assert_int_equal(aclrtLaunchCallback(probe_cb, &p[i], ACL_CALLBACK_BLOCK,
                                             i % 2 ? a : NULL),
                         ACL_SUCCESS);
    }
    /* b has no subscriber. */
    assert_int_equal(aclrtLaunchCallback(probe_cb, &p[0], ACL_CALLBACK_BLOCK, b),
                     ACL_ERROR_RT_STREAM_NO_CB_REG);
    assert_int_equal(aclrtSynchronizeStream(a), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    for (int i = 0; i < N; i++) {
        assert_true(atomic_load(&p[i].on_thread));
        assert_true(atomic_load(&p[i].seq) >= 0);
        /* Each stream's callbacks in their order. */
        if (i >= 2)
            assert_true(atomic_load(&p[i].seq) > atomic_load(&p[i - 2].seq));
    }
    reporter_stop(&r);
    assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(b), ACL_SUCCESS);
}

static void test_unsubscribe_wakes_a_waiting_thread(void **state)
{
    reporter r;
    uint64_t t0;
    int calls;

    (void)state;
    reporter_start(&r, -1, false);
    assert_int_equal(aclrtSubscribeReport(reporter_id(&r), NULL), ACL_SUCCESS);
    atomic_store(&r.go, true);
    rt_sleep_ms(50);
    t0 = rt_now_ms();
    assert_int_equal(aclrtUnSubscribeReport(reporter_id(&r), NULL), ACL_SUCCESS);
    while (atomic_load(&r.unsubscribed) == 0 && rt_now_ms() - t0 < 2000)
        rt_sleep_ms(1);
    /* The waiter (timeout -1) came back at once with 107012. */
    assert_true(atomic_load(&r.unsubscribed) >= 1);
    assert_true(rt_now_ms() - t0 < 500);
    /* And a loop of an unsubscribed thread does not spin: about one call
     * per 100 ms (counted over the time that really passed, which a
     * loaded machine stretches). */
    calls = atomic_load(&r.calls);
    t0 = rt_now_ms();
    rt_sleep_ms(300);
    assert_true(atomic_load(&r.calls) - calls < 4 + (int)((rt_now_ms() - t0) / 50));
    reporter_stop(&r);
}

static void test_reset_with_a_callback_nobody_processes(void **state)
{
    cb_probe p = {.o = &g_order};
    reporter r;
    aclrtStream st;
    uint64_t t0;

    (void)state;
    reporter_start(&r, 100, false); /* subscribed, never processing */
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);
    assert_int_equal(aclrtSubscribeReport(reporter_id(&r), st), ACL_SUCCESS);
    atomic_init(&p.seq, -1);
    assert_int_equal(aclrtLaunchCallback(probe_cb, &p, ACL_CALLBACK_BLOCK, st), ACL_SUCCESS);
    assert_int_equal(rt_order_submit(rt_stream_of(st), DVPP_ENGINE_VPC, &g_order, 0, ACL_SUCCESS),
                     ACL_SUCCESS);
    rt_sleep_ms(30);
    t0 = rt_now_ms();
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    assert_true(rt_now_ms() - t0 < 1000);
    /* The task behind the callback never ran; its fini did. */
    assert_int_equal(g_order.pos[0], -1);
    assert_int_equal(atomic_load(&g_order.fini_status[0]), ACL_ERROR_RT_DEVICE_TASK_ABORT);
    /* The callback of a canceled task does not run later either. */
    atomic_store(&r.go, true);
    rt_sleep_ms(150);
    assert_int_equal(atomic_load(&p.seq), -1);
    reporter_stop(&r);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
}

/* --- the bridge ---------------------------------------------------------------------- */

typedef struct post_log {
    atomic_int n;
    int order[64];
    atomic_bool on_thread[64];
    uint64_t want_thread;
} post_log;

typedef struct post_item {
    post_log *log;
    int index;
} post_item;

static void post_fn(void *arg)
{
    post_item *it = arg;
    /* One thread runs the posts: the count is published after the entry. */
    int k = atomic_load(&it->log->n);

    it->log->order[k] = it->index;
    atomic_store(&it->log->on_thread[k], (uint64_t)pthread_self() == it->log->want_thread);
    atomic_store(&it->log->n, k + 1);
}

static void test_bridge_posts_run_in_order_on_the_thread(void **state)
{
    static post_log log;
    post_item items[20];
    int channel_key = 0;
    reporter r;
    uint64_t t0;

    (void)state;
    memset(&log, 0, sizeof(log));
    reporter_start(&r, 100, false);
    log.want_thread = reporter_id(&r);
    assert_int_equal(acli_report_post(reporter_id(&r), post_fn, &items[0]),
                     ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert_int_equal(acli_report_subscribe(reporter_id(&r), NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_report_subscribe(reporter_id(&r), &channel_key), ACL_SUCCESS);
    assert_int_equal(acli_report_subscribe(reporter_id(&r), &channel_key),
                     ACL_ERROR_RT_STREAM_SUBSCRIBE);
    for (int i = 0; i < 20; i++) {
        items[i] = (post_item){&log, i};
        assert_int_equal(acli_report_post(reporter_id(&r), post_fn, &items[i]), ACL_SUCCESS);
    }
    /* Posted while nobody processes; then one call runs all pending. */
    assert_int_equal(atomic_load(&log.n), 0);
    atomic_store(&r.go, true);
    t0 = rt_now_ms();
    while (atomic_load(&log.n) < 20 && rt_now_ms() - t0 < 30000)
        rt_sleep_ms(1);
    assert_int_equal(atomic_load(&log.n), 20);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(log.order[i], i);
        assert_true(atomic_load(&log.on_thread[i]));
    }
    assert_int_equal(acli_report_unsubscribe(reporter_id(&r), &channel_key), ACL_SUCCESS);
    assert_int_equal(acli_report_post(reporter_id(&r), post_fn, &items[0]),
                     ACL_ERROR_RT_THREAD_SUBSCRIBE);
    assert_int_equal(acli_report_unsubscribe(reporter_id(&r), &channel_key),
                     ACL_ERROR_STREAM_NOT_SUBSCRIBE);
    reporter_stop(&r);
}

static void test_all_pending_posts_in_one_call(void **state)
{
    static post_log log;
    post_item items[5];
    int key = 0;
    uint64_t self = (uint64_t)pthread_self();

    (void)state;
    memset(&log, 0, sizeof(log));
    log.want_thread = self;
    assert_int_equal(acli_report_subscribe(self, &key), ACL_SUCCESS);
    for (int i = 0; i < 5; i++) {
        items[i] = (post_item){&log, i};
        assert_int_equal(acli_report_post(self, post_fn, &items[i]), ACL_SUCCESS);
    }
    assert_int_equal(aclrtProcessReport(1000), ACL_SUCCESS);
    assert_int_equal(atomic_load(&log.n), 5);
    assert_int_equal(aclrtProcessReport(20), ACL_ERROR_RT_REPORT_TIMEOUT);
    /* Posts made before an unsubscribe still run. */
    assert_int_equal(acli_report_post(self, post_fn, &items[0]), ACL_SUCCESS);
    assert_int_equal(acli_report_unsubscribe(self, &key), ACL_SUCCESS);
    assert_int_equal(aclrtProcessReport(1000), ACL_SUCCESS);
    assert_int_equal(atomic_load(&log.n), 6);
    assert_int_equal(aclrtProcessReport(20), ACL_ERROR_RT_THREAD_SUBSCRIBE);
}

static void test_finalize_drops_subscriptions(void **state)
{
    int key = 0;
    uint64_t self = (uint64_t)pthread_self();
    post_item item = {0};

    (void)state;
    assert_int_equal(acli_report_subscribe(self, &key), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    assert_int_equal(acli_report_post(self, post_fn, &item), ACL_ERROR_RT_THREAD_SUBSCRIBE);
    /* Before aclInit: the same bounded wait, then UNINITIALIZE. */
    assert_int_equal(aclrtProcessReport(-1), ACL_ERROR_UNINITIALIZE);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_process_report_argument_codes, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_unsubscribed_thread_gets_107012_in_bounded_time,
                                        setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_subscribed_thread_times_out, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_launch_argument_codes, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(
            test_block_callback_runs_on_subscriber_and_later_tasks_wait, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_callbacks_of_two_streams_in_order_on_one_thread,
                                        setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_unsubscribe_wakes_a_waiting_thread, setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_reset_with_a_callback_nobody_processes, setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_bridge_posts_run_in_order_on_the_thread, setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_all_pending_posts_in_one_call, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_finalize_drops_subscriptions, setup, rt_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    rt_remove_dir();
    return rc;
}
