/* Runtime tests (libascendcl): the calls real Ascend programs make besides
 * the DVPP path proper. Event timing and queries (aclrtEventElapsedTime,
 * aclrtQueryEventStatus/aclrtQueryEvent, aclrtCreateEventWithFlag),
 * aclrtGetMemInfo, and the application log (aclAppLog / ACL_APP_LOG, as
 * ACLLite's ACLLITE_LOG_* macros call it). */
#include <fcntl.h>
#include <math.h>

#include "device/dvpp_device.h"
#include "test_rt_common.h"

/* aclrtQueryEvent is deprecated, as in CANN; its tests call it anyway. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static rt_order g_order;

static int setup(void **state)
{
    (void)state;
    rt_order_reset(&g_order);
    return rt_up("{\"dvpp\": {\"channels\": 2}}");
}

/* --- events ---------------------------------------------------------------------------- */

/* The times are the records' completions, not their submissions: the end
 * is recorded 60 ms of host time after the start completed. */
static void test_elapsed_time_is_between_completions(void **state)
{
    aclrtStream st = NULL;
    aclrtEvent start = NULL, end = NULL;
    float ms = -1.0f, back = 1.0f;

    (void)state;
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&start), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&end), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(start, st), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(st), ACL_SUCCESS);
    rt_sleep_ms(60);
    assert_int_equal(aclrtRecordEvent(end, st), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeEvent(end), ACL_SUCCESS);
    assert_int_equal(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    assert_true(ms >= 59.0f && ms < 5000.0f);
    /* The other order: the same span, negative. */
    assert_int_equal(aclrtEventElapsedTime(&back, end, start), ACL_SUCCESS);
    assert_true(fabsf(back + ms) < 0.01f);
    /* An event against itself: nothing between. */
    assert_int_equal(aclrtEventElapsedTime(&back, end, end), ACL_SUCCESS);
    assert_true(back == 0.0f);
    assert_int_equal(aclrtDestroyEvent(start), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(end), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(st), ACL_SUCCESS);
}

/* A record waits for the tasks before it on its stream: while a 200 ms
 * task runs, the end is NOT_READY and has no time; after the sync the span
 * covers the task. */
static void test_record_completes_after_earlier_tasks(void **state)
{
    aclrtStream st = NULL;
    aclrtEvent start = NULL, end = NULL;
    aclrtEventRecordedStatus rs = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    aclrtEventStatus es = ACL_EVENT_STATUS_COMPLETE;
    float ms = -1.0f;

    (void)state;
    assert_int_equal(aclrtCreateStream(&st), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&start), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEventWithFlag(&end, ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC),
                     ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(start, st), ACL_SUCCESS);
    /* held while the queries look (then its 200 ms), so it still runs */
    atomic_store(&g_order.hold, true);
    atomic_store(&g_order.sleep_ms, 200);
    assert_int_equal(rt_order_submit(rt_stream_of(st), DVPP_ENGINE_VPC, &g_order, 0, ACL_SUCCESS),
                     ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(end, st), ACL_SUCCESS);
    assert_int_equal(aclrtQueryEventStatus(end, &rs), ACL_SUCCESS);
    assert_int_equal(rs, ACL_EVENT_RECORDED_STATUS_NOT_READY);
    assert_int_equal(aclrtQueryEvent(end, &es), ACL_SUCCESS);
    assert_int_equal(es, ACL_EVENT_STATUS_NOT_READY);
    assert_int_equal(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_EVENT_NOT_COMPLETE);
    rt_assert_msg_has("not completed");
    atomic_store(&g_order.hold, false);
    assert_int_equal(aclrtSynchronizeStream(st), ACL_SUCCESS);
    assert_int_equal(aclrtQueryEventStatus(end, &rs), ACL_SUCCESS);
    assert_int_equal(rs, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    assert_int_equal(aclrtQueryEvent(end, &es), ACL_SUCCESS);
    assert_int_equal(es, ACL_EVENT_STATUS_COMPLETE);
    assert_int_equal(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    assert_true(ms >= 199.0f && ms < 5000.0f);
    assert_int_equal(aclrtDestroyEvent(start), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(end), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyStream(st), ACL_SUCCESS);
}

static void test_event_errors(void **state)
{
    aclrtEvent a = NULL, b = NULL, untimed = NULL, bad = (aclrtEvent)0x1;
    aclrtEventRecordedStatus rs = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    aclrtEventStatus es = ACL_EVENT_STATUS_NOT_READY;
    float ms = 0.0f;

    (void)state;
    /* Flags: 0 and the known bits only. */
    assert_int_equal(aclrtCreateEventWithFlag(&bad, 0x4), ACL_ERROR_INVALID_PARAM);
    assert_null(bad);
    rt_assert_msg_has("flag 0x4");
    assert_int_equal(aclrtCreateEventWithFlag(NULL, ACL_EVENT_TIME_LINE),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtCreateEventWithFlag(&untimed, 0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&a), ACL_SUCCESS);
    assert_int_equal(aclrtCreateEvent(&b), ACL_SUCCESS);
    /* Never recorded: complete for the queries, no time for elapsed. */
    assert_int_equal(aclrtQueryEventStatus(a, &rs), ACL_SUCCESS);
    assert_int_equal(rs, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    assert_int_equal(aclrtQueryEvent(a, &es), ACL_SUCCESS);
    assert_int_equal(es, ACL_EVENT_STATUS_COMPLETE);
    assert_int_equal(aclrtEventElapsedTime(&ms, a, b), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("never recorded");
    assert_int_equal(aclrtRecordEvent(a, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtRecordEvent(untimed, NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtEventElapsedTime(&ms, a, untimed), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("ACL_EVENT_TIME_LINE");
    assert_int_equal(aclrtEventElapsedTime(NULL, a, a), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtQueryEventStatus(a, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtQueryEvent(a, NULL), ACL_ERROR_INVALID_PARAM);
    /* Dead and foreign handles. */
    assert_int_equal(aclrtDestroyEvent(b), ACL_SUCCESS);
    assert_int_equal(aclrtEventElapsedTime(&ms, a, b), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("not a live event");
    assert_int_equal(aclrtQueryEventStatus(b, &rs), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtQueryEvent(&ms, &es), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtDestroyEvent(a), ACL_SUCCESS);
    assert_int_equal(aclrtDestroyEvent(untimed), ACL_SUCCESS);
}

/* --- memory info ------------------------------------------------------------------------- */

static void test_mem_info_is_the_machines(void **state)
{
    size_t freeb = 0, total = 0;
    size_t want = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);

    (void)state;
    for (int attr = ACL_DDR_MEM; attr <= ACL_HBM_MEM_P2P_NORMAL; attr++) {
        assert_int_equal(aclrtGetMemInfo((aclrtMemAttr)attr, &freeb, &total), ACL_SUCCESS);
        assert_true(total == want);
        assert_true(freeb > 0 && freeb <= total);
    }
    assert_int_equal(aclrtGetMemInfo((aclrtMemAttr)10, &freeb, &total), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("attr 10");
    assert_int_equal(aclrtGetMemInfo((aclrtMemAttr)-1, &freeb, &total), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &total), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &freeb, NULL), ACL_ERROR_INVALID_PARAM);
}

/* --- the application log ----------------------------------------------------------------- */

/* Run @fn with fd @fd going to a file; returns what was written. */
static char *capture_fd(int fd, void (*fn)(void))
{
    static char buf[8192];
    char path[512];
    int saved, f;
    FILE *r;
    size_t n;

    snprintf(path, sizeof(path), "%s", rt_write_file("captured", ""));
    saved = dup(fd);
    f = open(path, O_WRONLY | O_TRUNC);
    assert_true(saved >= 0 && f >= 0);
    fflush(stdout);
    fflush(stderr);
    dup2(f, fd);
    close(f);
    fn();
    fflush(stdout);
    fflush(stderr);
    dup2(saved, fd);
    close(saved);
    r = fopen(path, "rb");
    assert_non_null(r);
    n = fread(buf, 1, sizeof(buf) - 1, r);
    fclose(r);
    buf[n] = '\0';
    return buf;
}

/* One line per level, as a program's macros write them. */
static void log_every_level(void)
{
    ACL_APP_LOG(ACL_DEBUG, "debug line %d", 0);
    ACL_APP_LOG(ACL_INFO, "info line %d of %s", 1, "four");
    ACL_APP_LOG(ACL_WARNING, "warning line");
    ACL_APP_LOG(ACL_ERROR, "error line %u", 3u);
    /* Not a level, and no format: nothing, and no crash. */
    aclAppLog((aclLogLevel)7, __func__, __FILE__, __LINE__, "bad level");
    aclAppLog(ACL_ERROR, NULL, NULL, 0, NULL);
}

static void test_app_log_levels_and_destinations(void **state)
{
    char *out;

    (void)state;
    /* The default: errors only, to stderr; stdout untouched. */
    unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
    out = capture_fd(1, log_every_level);
    assert_string_equal(out, "");
    out = capture_fd(2, log_every_level);
    assert_non_null(strstr(out, "[ERROR] APP("));
    assert_non_null(strstr(out, "test_rt_extra.c:"));
    assert_non_null(strstr(out, " log_every_level: error line 3\n"));
    assert_null(strstr(out, "warning line"));
    assert_null(strstr(out, "info line"));
    assert_null(strstr(out, "bad level"));
    /* To stdout from info up: debug stays out, nothing on stderr. */
    setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1", 1);
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "1", 1);
    out = capture_fd(2, log_every_level);
    assert_string_equal(out, "");
    out = capture_fd(1, log_every_level);
    assert_null(strstr(out, "debug line"));
    assert_non_null(strstr(out, "[INFO] APP("));
    assert_non_null(strstr(out, " log_every_level: info line 1 of four\n"));
    assert_non_null(strstr(out, "[WARNING] APP("));
    assert_non_null(strstr(out, "warning line\n"));
    assert_non_null(strstr(out, "error line 3\n"));
    assert_null(strstr(out, "bad level"));
    /* The file is its last component only. */
    assert_null(strstr(out, "/test_rt_extra.c"));
    /* Debug when asked for. */
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "0", 1);
    out = capture_fd(1, log_every_level);
    assert_non_null(strstr(out, "[DEBUG] APP("));
    assert_non_null(strstr(out, "debug line 0\n"));
    /* Off. */
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);
    out = capture_fd(1, log_every_level);
    assert_string_equal(out, "");
    unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    out = capture_fd(2, log_every_level);
    assert_string_equal(out, "");
}

/* A line far longer than the log's buffer is cut, never overrun. */
static void log_a_long_line(void)
{
    static char text[5000];

    memset(text, 'x', sizeof(text) - 1);
    ACL_APP_LOG(ACL_ERROR, "%s", text);
}

static void test_app_log_long_line_is_cut(void **state)
{
    char *out;

    (void)state;
    unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
    out = capture_fd(2, log_a_long_line);
    assert_non_null(strstr(out, "[ERROR] APP("));
    assert_true(strlen(out) > 300 && strlen(out) < 1200);
    assert_true(out[strlen(out) - 1] == '\n');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_elapsed_time_is_between_completions, setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_record_completes_after_earlier_tasks, setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_event_errors, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_mem_info_is_the_machines, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_app_log_levels_and_destinations, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_app_log_long_line_is_cut, setup, rt_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    rt_remove_dir();
    return rc;
}
