/* Unit tests for dvppd/http/http_body.c's deadline on bodies: a chunk past
 * the request's deadline closes the connection and is counted the same
 * way whether the request is still reading its body (a 408 request and a
 * deadline rejection) or was answered early (the deadline rejection only:
 * its answer counted the request already). libmicrohttpd 0.9.75 never
 * hands a body chunk after an early answer (it discards the rest of the
 * upload and closes), so this path has no end-to-end test; a libmicrohttpd
 * that keeps reading would reach it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "device/dvpp_device.h" /* dvpp_now_ns */
#include "dvppd_metrics.h"
#include "http/http_int.h"

/* The /metrics text of @m. */
static char *render(dvppd_metrics *m)
{
    dvppd_build_info bi = {"test", "none", "none"};
    dvpp_buf b;
    char *text;

    dvpp_buf_init(&b);
    assert_int_equal(dvppd_metrics_render(m, NULL, &bi, &b), DVPP_OK);
    text = calloc(1, b.len + 1);
    assert_non_null(text);
    memcpy(text, b.data, b.len);
    dvpp_buf_fini(&b);
    return text;
}

static void assert_metrics(dvppd_metrics *m, const char *has, const char *lacks)
{
    char *text = render(m);

    if (has && !strstr(text, has))
        fail_msg("no '%s' in:\n%s", has, text);
    if (lacks && strstr(text, lacks))
        fail_msg("'%s' in:\n%s", lacks, text);
    free(text);
}

/* A request of route preprocess whose deadline passed a second ago. */
static void late_request(http_req *r, dvppd_http *h, dvppd_metrics *m, http_req_state state)
{
    memset(h, 0, sizeof(*h));
    memset(r, 0, sizeof(*r));
    dvppd_metrics_init(m);
    h->metrics = m;
    r->h = h;
    r->route = DVPPD_ROUTE_PREPROCESS;
    r->t_start = dvpp_now_ns() - 3000000000ull;
    r->deadline = dvpp_now_ns() - 1000000000ull;
    r->state = state;
    r->limit = 1 << 20;
}

static void test_late_chunk_while_reading(void **unused)
{
    dvppd_metrics m;
    dvppd_http h;
    http_req r;

    (void)unused;
    late_request(&r, &h, &m, HTTP_REQ_READING);
    assert_int_equal(http_body_take(&r, "x", 1), MHD_NO);
    assert_metrics(&m, "dvppd_rejections_total{reason=\"deadline\"} 1", NULL);
    assert_metrics(&m, "dvppd_http_requests_total{route=\"preprocess\",code=\"408\"} 1", NULL);
    assert_int_equal(r.received, 0); /* nothing taken */
}

static void test_late_chunk_after_an_early_answer(void **unused)
{
    dvppd_metrics m;
    dvppd_http h;
    http_req r;

    (void)unused;
    late_request(&r, &h, &m, HTTP_REQ_ANSWERED);
    dvppd_metrics_request(&m, r.route, 405, 1000); /* the early answer, as http_answer */
    assert_int_equal(http_body_skip(&r), MHD_NO);
    assert_metrics(&m, "dvppd_rejections_total{reason=\"deadline\"} 1",
                   "code=\"408\""); /* counted once, as its 405 */
    assert_metrics(&m, "dvppd_http_requests_total{route=\"preprocess\",code=\"405\"} 1", NULL);
}

static void test_chunk_in_time_after_an_early_answer(void **unused)
{
    dvppd_metrics m;
    dvppd_http h;
    http_req r;

    (void)unused;
    late_request(&r, &h, &m, HTTP_REQ_ANSWERED);
    r.deadline = dvpp_now_ns() + 60000000000ull;
    assert_int_equal(http_body_skip(&r), MHD_YES);
    assert_metrics(&m, "dvppd_rejections_total{reason=\"deadline\"} 0", "code=\"408\"");
}

/* The result pool keeps freed buffers for the next request, and frees each
 * once it has waited on the free list for the trim time: not before, and
 * not one put back later. */
static void test_pool_trimmed_when_idle(void **unused)
{
    const uint64_t idle = 5000000000ull;
    struct timespec ms = {0, 2000000};
    dvppd_metrics m;
    dvppd_http h;
    dvpp_device_config dc;
    dvpp_limits lim = dvpp_limits_default();
    void *a, *b, *again;
    uint64_t cut;

    (void)unused;
    memset(&h, 0, sizeof(h));
    dvppd_metrics_init(&m);
    h.metrics = &m;
    http_pool_init(&h.pool);
    dvpp_device_config_default(&dc);
    assert_int_equal(dvpp_device_new(&dc, &h.device, NULL), DVPP_OK);
    assert_int_equal(http_result_get(&h, &lim, 3 << 20, &a, NULL), DVPP_OK);
    assert_int_equal(http_result_get(&h, &lim, 1 << 20, &b, NULL), DVPP_OK);
    memset(a, 1, 3 << 20);
    http_buf_put(&h, a);
    /* Just put back: kept (the steady state reuses them). */
    assert_int_equal(http_pool_trim(&h.pool, dvpp_now_ns(), idle), 0);
    assert_int_equal(http_result_get(&h, &lim, 3 << 20, &again, NULL), DVPP_OK);
    assert_ptr_equal(again, a); /* the pooled buffer came back */
    http_buf_put(&h, again);
    nanosleep(&ms, NULL);
    cut = dvpp_now_ns();
    nanosleep(&ms, NULL);
    http_buf_put(&h, b); /* put back after the cut */
    assert_int_equal(h.pool.count, 2);
    assert_int_equal(h.pool.bytes, (3 << 20) + (1 << 20));
    /* Idle past the trim time at @cut: the 3 MiB one goes, the later one stays. */
    assert_int_equal(http_pool_trim(&h.pool, cut + idle, idle), 3 << 20);
    assert_int_equal(h.pool.count, 1);
    assert_int_equal(h.pool.bytes, 1 << 20);
    assert_int_equal(http_pool_trim(&h.pool, dvpp_now_ns() + idle, idle), 1 << 20);
    assert_int_equal(h.pool.count, 0);
    assert_int_equal(h.pool.bytes, 0);
    assert_int_equal(dvppd_http_idle(NULL, 1000), 0);
    assert_int_equal(http_result_get(&h, &lim, 1 << 20, &b, NULL), DVPP_OK);
    http_buf_put(&h, b);
    http_pool_fini(&h.pool);
    dvpp_device_free(h.device);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_chunk_while_reading),
        cmocka_unit_test(test_late_chunk_after_an_early_answer),
        cmocka_unit_test(test_chunk_in_time_after_an_early_answer),
        cmocka_unit_test(test_pool_trimmed_when_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
