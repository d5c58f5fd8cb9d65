/* Unit tests for what the web console reads: dvppd_errlog (the bounded ring
 * of error answers), dvppd_hist_quantile (p50/p99 of /v1/stats) and
 * dvppd_config_console_on (http.console and its loopback default). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dvppd_config.h"
#include "dvppd_errlog.h"
#include "dvppd_metrics.h"

static void test_errlog_newest_first_and_bounded(void **state)
{
    static dvppd_errlog l; /* large: not on the stack */
    dvppd_errlog_entry e[DVPPD_ERRLOG_N + 4];
    char msg[32];

    (void)state;
    dvppd_errlog_init(&l);
    assert_int_equal(dvppd_errlog_read(&l, e, DVPPD_ERRLOG_N), 0);
    for (unsigned i = 1; i <= DVPPD_ERRLOG_N + 5; i++) {
        snprintf(msg, sizeof(msg), "error %u", i);
        dvppd_errlog_add(&l, "preprocess", 400 + i, "EINVAL", i % 2 ? "w" : NULL, msg);
    }
    assert_int_equal(dvppd_errlog_total(&l), DVPPD_ERRLOG_N + 5);
    /* Only the last N are kept, newest first. */
    assert_int_equal(dvppd_errlog_read(&l, e, DVPPD_ERRLOG_N + 4), DVPPD_ERRLOG_N);
    assert_int_equal(e[0].seq, DVPPD_ERRLOG_N + 5);
    assert_string_equal(e[0].message, "error 37");
    assert_int_equal(e[0].status, 400 + DVPPD_ERRLOG_N + 5);
    assert_string_equal(e[0].field, "w");
    assert_string_equal(e[1].field, "");
    assert_int_equal(e[DVPPD_ERRLOG_N - 1].seq, 6);
    assert_true(e[0].time_ms > 1600000000000ull); /* wall clock, ms */
    /* A cap smaller than the ring: the newest ones. */
    assert_int_equal(dvppd_errlog_read(&l, e, 3), 3);
    assert_int_equal(e[2].seq, DVPPD_ERRLOG_N + 3);
}

static void test_errlog_truncates(void **state)
{
    static dvppd_errlog l;
    dvppd_errlog_entry e[1];
    char big[600];

    (void)state;
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    dvppd_errlog_init(&l);
    dvppd_errlog_add(&l, NULL, 500, big, big, big);
    assert_int_equal(dvppd_errlog_read(&l, e, 1), 1);
    assert_int_equal(strlen(e[0].message), sizeof(e[0].message) - 1);
    assert_int_equal(strlen(e[0].field), sizeof(e[0].field) - 1);
    assert_int_equal(strlen(e[0].code), sizeof(e[0].code) - 1);
    assert_string_equal(e[0].route, "");
}

static void test_hist_quantile(void **state)
{
    uint64_t b[DVPPD_HIST_BUCKETS + 1] = {0};

    (void)state;
    assert_true(dvppd_hist_quantile(b, 0.5) == 0);
    /* 100 in the first bucket (0 .. 0.5 ms): linear inside it. */
    b[0] = 100;
    assert_true(fabs(dvppd_hist_quantile(b, 0.5) - 0.00025) < 1e-12);
    assert_true(fabs(dvppd_hist_quantile(b, 0.99) - 0.000495) < 1e-12);
    /* 50 more in (1 ms, 2.5 ms]: p99 of 150 lies there, at rank 148.5. */
    b[2] = 50;
    assert_true(fabs(dvppd_hist_quantile(b, 0.99) -
                     (0.001 + 0.0015 * (148.5 - 100) / 50)) < 1e-12);
    /* Everything in +Inf: its lower bound, the last finite one. */
    memset(b, 0, sizeof(b));
    b[DVPPD_HIST_BUCKETS] = 3;
    assert_true(dvppd_hist_quantile(b, 0.5) ==
                (double)dvppd_hist_bound_ns(DVPPD_HIST_BUCKETS - 1) / 1e9);
}

static void test_console_default_follows_listen(void **state)
{
    static const struct { const char *host; int set; bool on; } k[] = {
        {"127.0.0.1", DVPPD_CONSOLE_AUTO, true},  {"127.8.9.10", DVPPD_CONSOLE_AUTO, true},
        {"::1", DVPPD_CONSOLE_AUTO, true},        {"localhost", DVPPD_CONSOLE_AUTO, true},
        {"0.0.0.0", DVPPD_CONSOLE_AUTO, false},   {"::", DVPPD_CONSOLE_AUTO, false},
        {"10.0.0.1", DVPPD_CONSOLE_AUTO, false},  {"128.0.0.1", DVPPD_CONSOLE_AUTO, false},
        {"0.0.0.0", 1, true},                     {"127.0.0.1", 0, false},
    };
    static dvppd_config c;

    (void)state;
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        dvppd_config_defaults(&c);
        assert_int_equal(c.http.console, DVPPD_CONSOLE_AUTO);
        snprintf(c.http_addr, sizeof(c.http_addr), "%s", k[i].host);
        c.http.console = k[i].set;
        assert_int_equal(dvppd_config_console_on(&c), k[i].on);
    }
}

static void test_console_key_in_file(void **state)
{
    static dvppd_config c;
    dvpp_err e;
    char path[] = "/tmp/dvpp_console_cfgXXXXXX";
    int fd = mkstemp(path);
    FILE *f;

    (void)state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs("{\"http\": {\"listen\": \"0.0.0.0:0\", \"console\": true}}", f);
    fclose(f);
    dvppd_config_defaults(&c);
    assert_int_equal(dvppd_config_load(&c, path, &e), DVPP_OK);
    assert_int_equal(c.http.console, 1);
    assert_true(dvppd_config_console_on(&c));
    f = fopen(path, "w");
    fputs("{\"http\": {\"console\": \"yes\"}}", f);
    fclose(f);
    dvppd_config_defaults(&c);
    assert_int_not_equal(dvppd_config_load(&c, path, &e), DVPP_OK);
    assert_non_null(strstr(e.msg, "console"));
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errlog_newest_first_and_bounded),
        cmocka_unit_test(test_errlog_truncates),
        cmocka_unit_test(test_hist_quantile),
        cmocka_unit_test(test_console_default_follows_listen),
        cmocka_unit_test(test_console_key_in_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
