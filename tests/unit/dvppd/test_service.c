/* Unit tests for dvppd_service (systemd sockets sorted by name or kind, the
 * watchdog rule), dvppd_live (snapshots, restart-only keys) and the
 * configuration file's comment lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cmocka.h>

#include "dvppd_config.h"
#include "dvppd_live.h"
#include "dvppd_service.h"

/* --- sockets ------------------------------------------------------------------ */

static int tcp_listener(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 4), 0);
    return fd;
}

static int unix_listener(int type)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, type, 0);

    assert_true(fd >= 0);
    /* Abstract address: nothing to clean up. */
    snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "dvppd-test-%d-%d", (int)getpid(), fd);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    if (type != SOCK_DGRAM)
        assert_int_equal(listen(fd, 4), 0);
    return fd;
}

static bool is_open(int fd)
{
    int type;
    socklen_t l = sizeof(type);

    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) == 0;
}

static void test_sort_by_kind(void **state)
{
    int fds[2] = {unix_listener(SOCK_SEQPACKET), tcp_listener()};
    char *names[] = {"dvppd.socket", "dvppd.socket", NULL};
    dvppd_passed_fds out;

    (void)state;
    assert_int_equal(dvppd_service_sort_fds(fds, names, 2, &out, NULL), DVPP_OK);
    assert_int_equal(out.unix_sock, fds[0]);
    assert_int_equal(out.http, fds[1]);
    assert_int_equal(dvppd_service_sort_fds(fds, NULL, 2, &out, NULL), DVPP_OK);
    assert_int_equal(out.http, fds[1]);
    close(fds[0]), close(fds[1]);
}

static void test_sort_by_name(void **state)
{
    int fds[2] = {tcp_listener(), unix_listener(SOCK_SEQPACKET)};
    char *names[] = {"http", "unix", NULL};
    char *swapped[] = {"unix", "http", NULL};
    dvppd_passed_fds out;
    dvpp_err err;

    (void)state;
    assert_int_equal(dvppd_service_sort_fds(fds, names, 2, &out, NULL), DVPP_OK);
    assert_int_equal(out.http, fds[0]);
    assert_int_equal(out.unix_sock, fds[1]);
    /* A name that lies about the socket is refused and every fd closed. */
    assert_int_equal(dvppd_service_sort_fds(fds, swapped, 2, &out, &err), DVPP_EINVAL);
    assert_non_null(strstr(err.msg, "named 'unix'"));
    assert_int_equal(out.http, -1);
    assert_false(is_open(fds[0]));
    assert_false(is_open(fds[1]));
}

static void test_sort_refuses(void **state)
{
    int dgram = unix_listener(SOCK_DGRAM);
    int stream_unix = unix_listener(SOCK_STREAM);
    int two[2] = {tcp_listener(), tcp_listener()};
    int unlistened = socket(AF_INET, SOCK_STREAM, 0);
    dvppd_passed_fds out;
    dvpp_err err;

    (void)state;
    assert_int_equal(dvppd_service_sort_fds(&dgram, NULL, 1, &out, &err), DVPP_EINVAL);
    assert_non_null(strstr(err.msg, "neither"));
    assert_int_equal(dvppd_service_sort_fds(&stream_unix, NULL, 1, &out, &err), DVPP_EINVAL);
    assert_int_equal(dvppd_service_sort_fds(&unlistened, NULL, 1, &out, &err), DVPP_EINVAL);
    assert_int_equal(dvppd_service_sort_fds(two, NULL, 2, &out, &err), DVPP_EINVAL);
    assert_non_null(strstr(err.msg, "second"));
    assert_false(is_open(two[0]));
}

static void test_no_fds(void **state)
{
    dvppd_passed_fds out;

    (void)state;
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_PID");
    assert_int_equal(dvppd_service_take_fds(&out, NULL), DVPP_OK);
    assert_int_equal(out.http, -1);
    assert_int_equal(out.unix_sock, -1);
    /* Meant for another process: ignored. */
    setenv("LISTEN_FDS", "1", 1);
    setenv("LISTEN_PID", "1", 1);
    assert_int_equal(dvppd_service_take_fds(&out, NULL), DVPP_OK);
    assert_int_equal(out.http, -1);
}

/* --- the watchdog rule --------------------------------------------------------- */

#define S 1000000000ull

static void test_watchdog_idle_and_moving(void **state)
{
    dvppd_watchdog w;
    uint64_t t = 100 * S, turns = 0;

    (void)state;
    dvppd_watchdog_init(&w, t, 10 * S);
    /* Idle for a long time: pings go on. */
    for (int i = 0; i < 60; i++)
        assert_true(dvppd_watchdog_tick(&w, t += S, 0, 5, ++turns));
    /* Busy and completing: pings go on. */
    for (uint64_t p = 6; p < 60; p++)
        assert_true(dvppd_watchdog_tick(&w, t += S, 3, p, ++turns));
}

static void test_watchdog_stall(void **state)
{
    dvppd_watchdog w;
    uint64_t t = 0, turns = 0;

    (void)state;
    dvppd_watchdog_init(&w, t, 10 * S);
    assert_true(dvppd_watchdog_tick(&w, t += S, 2, 7, ++turns));
    /* Busy, no progress: pings go on until the stall time, then stop. */
    for (int i = 0; i < 9; i++)
        assert_true(dvppd_watchdog_tick(&w, t += S, 2, 7, ++turns));
    assert_false(dvppd_watchdog_tick(&w, t += S, 2, 7, ++turns));
    assert_false(dvppd_watchdog_tick(&w, t += 5 * S, 2, 7, ++turns));
    /* Progress again: pings resume. */
    assert_true(dvppd_watchdog_tick(&w, t += S, 2, 8, ++turns));
}

static void test_watchdog_socket_thread_hang(void **state)
{
    dvppd_watchdog w;
    uint64_t t = 0;

    (void)state;
    dvppd_watchdog_init(&w, t, 10 * S);
    assert_true(dvppd_watchdog_tick(&w, t += S, 0, 0, 1));
    /* The engines are idle but the socket thread stopped turning. */
    for (int i = 0; i < 9; i++)
        assert_true(dvppd_watchdog_tick(&w, t += S, 0, 0, 1));
    assert_false(dvppd_watchdog_tick(&w, t += S, 0, 0, 1));
    assert_true(dvppd_watchdog_tick(&w, t += S, 0, 0, 2));
}

/* --- settings snapshots -------------------------------------------------------- */

static void test_carry_restart_keys(void **state)
{
    dvppd_config run, next;
    const char *changed[8];
    unsigned n;

    (void)state;
    dvppd_config_defaults(&run);
    next = run;
    assert_int_equal(dvppd_settings_carry(&run, &next, changed, 8), 0);
    next.http.threads = 7;
    next.http_port = 9999;
    snprintf(next.http_addr, sizeof(next.http_addr), "0.0.0.0");
    next.limits.max_side = 1000;          /* live */
    next.channels = 5;                    /* live */
    next.sock.max_rings = 3;
    n = dvppd_settings_carry(&run, &next, changed, 8);
    assert_int_equal(n, 3);
    assert_string_equal(changed[0], "http.listen"); /* two fields, one name */
    assert_string_equal(changed[1], "http.threads");
    assert_string_equal(changed[2], "socket.max_rings");
    /* Restart-only keys keep the running values; live ones the new. */
    assert_int_equal(next.http.threads, run.http.threads);
    assert_int_equal(next.http_port, run.http_port);
    assert_string_equal(next.http_addr, run.http_addr);
    assert_int_equal(next.sock.max_rings, run.sock.max_rings);
    assert_int_equal(next.limits.max_side, 1000);
    assert_int_equal(next.channels, 5);
}

static void test_live_snapshots(void **state)
{
    dvppd_config c;
    dvppd_settings *a, *b;
    const dvppd_settings *held, *now;
    dvppd_live *l;

    (void)state;
    dvppd_config_defaults(&c);
    assert_int_equal(dvppd_settings_new(&c, &a, NULL), DVPP_OK);
    assert_int_equal(dvppd_live_new(a, &l, NULL), DVPP_OK);
    assert_int_equal(dvppd_live_generation(l), 1);
    held = dvppd_live_get(l);
    assert_ptr_equal(held, a);
    c.limits.max_side = 77;
    assert_int_equal(dvppd_settings_new(&c, &b, NULL), DVPP_OK);
    dvppd_live_publish(l, b);
    assert_int_equal(dvppd_live_generation(l), 2);
    /* The old snapshot stays whole for its holder. */
    assert_int_equal(held->cfg.limits.max_side, dvpp_limits_default().max_side);
    now = dvppd_live_get(l);
    assert_int_equal(now->cfg.limits.max_side, 77);
    assert_int_equal(now->generation, 2);
    dvppd_settings_put(held); /* frees a (ASan would catch a leak or a double free) */
    dvppd_settings_put(now);
    dvppd_live_free(l);
}

static void test_settings_bad_aipp_file(void **state)
{
    dvppd_config c;
    dvppd_settings *s = NULL;
    dvpp_err err;

    (void)state;
    dvppd_config_defaults(&c);
    c.naipp = 1;
    snprintf(c.aipp[0].name, sizeof(c.aipp[0].name), "x");
    snprintf(c.aipp[0].path, sizeof(c.aipp[0].path), "/nonexistent/aipp.cfg");
    assert_int_not_equal(dvppd_settings_new(&c, &s, &err), DVPP_OK);
    assert_null(s);
    assert_non_null(strstr(err.msg, "/nonexistent/aipp.cfg"));
}

/* --- the configuration file ---------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_config_comments(void **state)
{
    char path[] = "/tmp/dvppd-test-conf-XXXXXX";
    int fd = mkstemp(path);
    dvppd_config c;
    dvpp_err err;

    (void)state;
    assert_true(fd >= 0);
    close(fd);
    write_file(path, "# the top\n{\n  # \"log\": {\"level\": \"debug\"},\n"
                     "   \t# indented comment\n  \"service\": {\"drain_timeout_s\": 7}\n}\n");
    dvppd_config_defaults(&c);
    assert_int_equal(dvppd_config_load(&c, path, &err), DVPP_OK);
    assert_int_equal(c.drain_timeout_s, 7);
    assert_int_equal(c.log_level, DVPP_LOG_INFO); /* the commented line did nothing */
    /* A '#' after JSON on the same line is not a comment. */
    write_file(path, "{\"service\": {\"drain_timeout_s\": 7}} # trailing\n");
    assert_int_equal(dvppd_config_load(&c, path, &err), DVPP_EINVAL);
    /* Line numbers of errors count comment lines. */
    write_file(path, "# one\n# two\n{\n\"service\": {\"drain_timeout_s\": }\n}\n");
    assert_int_equal(dvppd_config_load(&c, path, &err), DVPP_EINVAL);
    assert_non_null(strstr(err.msg, ":4:"));
    write_file(path, "{\"socket\": {\"allow_groups\": [\"no-such-group-dvppd\"]}}");
    assert_int_equal(dvppd_config_load(&c, path, &err), DVPP_EINVAL);
    assert_non_null(strstr(err.msg, "no group named"));
    write_file(path, "{\"socket\": {\"allow_groups\": [\"root\"]}}");
    assert_int_equal(dvppd_config_load(&c, path, &err), DVPP_OK);
    assert_int_equal(c.sock.n_groups, 1);
    assert_int_equal(c.sock.group_gids[0], 0);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_by_kind),
        cmocka_unit_test(test_sort_by_name),
        cmocka_unit_test(test_sort_refuses),
        cmocka_unit_test(test_no_fds),
        cmocka_unit_test(test_watchdog_idle_and_moving),
        cmocka_unit_test(test_watchdog_stall),
        cmocka_unit_test(test_watchdog_socket_thread_hang),
        cmocka_unit_test(test_carry_restart_keys),
        cmocka_unit_test(test_live_snapshots),
        cmocka_unit_test(test_settings_bad_aipp_file),
        cmocka_unit_test(test_config_comments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
