/* Unit tests for dvppd_trace: the recorder's bound and drop count, its
 * Chrome Trace JSON (parsed back with jansson: every field of every event),
 * appends from 4 threads at once, the store's keep/bytes eviction and
 * lookup, the one-capture rule and a job's two sinks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <pthread.h>

#include "dvppd_trace.h"

/* The JSON of @t parsed; the caller decrefs it. */
static json_t *trace_parsed(dvppd_trace *t)
{
    size_t len = 0;
    char *text = dvppd_trace_json(t, &len);
    json_error_t je;
    json_t *j;

    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    j = json_loadb(text, len, 0, &je);
    if (!j)
        fail_msg("invalid JSON (%s at %d): %.200s", je.text, je.position, text);
    free(text);
    return j;
}

/* Events of phase @ph named @name (NULL: any) in @j. */
static size_t count_events(json_t *j, const char *ph, const char *name)
{
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    size_t i, n = 0;

    json_array_foreach(ev, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "ph")), ph))
            continue;
        if (!name || !strcmp(json_string_value(json_object_get(e, "name")), name))
            n++;
    }
    return n;
}

/* Distinct tids among the X events of @j. */
static size_t count_span_tids(json_t *j)
{
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    json_int_t seen[8];
    size_t i, n = 0;

    json_array_foreach(ev, i, e) {
        json_int_t tid = json_integer_value(json_object_get(e, "tid"));
        size_t k = 0;
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X"))
            continue;
        while (k < n && seen[k] != tid)
            k++;
        if (k == n && n < 8)
            seen[n++] = tid;
    }
    return n;
}

static void test_bound_and_json(void **state)
{
    dvppd_trace *t;
    dvppd_trace_args a = {2, 5, 1234, 0, "http", 0};
    json_t *j, *ev, *e, *x = NULL;
    size_t i;

    (void)state;
    assert_int_equal(dvppd_trace_new(0, NULL, &t, NULL), DVPP_EINVAL);
    assert_int_equal(dvppd_trace_new(16, "unit", &t, NULL), DVPP_OK);
    dvppd_trace_span(t, "resize", "pipeline", 2000500, 2003750, &a);
    for (int k = 0; k < 20; k++)
        dvppd_trace_span(t, "filler", NULL, 5000000 + (uint64_t)k, 5000001 + (uint64_t)k,
                         NULL);
    {
        size_t kept;
        uint64_t dropped;
        dvppd_trace_counts(t, &kept, &dropped);
        assert_int_equal(kept, 16);
        assert_int_equal(dropped, 5);
    }
    j = trace_parsed(t);
    assert_string_equal(json_string_value(json_object_get(j, "displayTimeUnit")), "ms");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "otherData"),
                                                        "dropped_events")), 5);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "otherData"),
                                                          "label")), "unit");
    assert_int_equal(count_events(j, "X", NULL), 16);
    assert_int_equal(count_events(j, "M", "process_name"), 1);
    assert_int_equal(count_events(j, "M", "thread_name"), 1); /* one thread appended */
    ev = json_object_get(j, "traceEvents");
    json_array_foreach(ev, i, e) {
        assert_non_null(json_object_get(e, "pid"));
        assert_non_null(json_object_get(e, "tid"));
        assert_non_null(json_object_get(e, "ts"));
        if (!strcmp(json_string_value(json_object_get(e, "name")), "resize"))
            x = e;
        if (!strcmp(json_string_value(json_object_get(e, "name")), "thread_name"))
            assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"),
                                                                  "name")), "http");
    }
    assert_non_null(x);
    /* ns -> µs with three decimals: 2000500 ns = 2000.5 µs, 3250 ns long */
    assert_true(json_real_value(json_object_get(x, "ts")) == 2000.5);
    assert_true(json_real_value(json_object_get(x, "dur")) == 3.25);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(x, "args"), "item")),
                     2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(x, "args"), "index")),
                     5);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(x, "args"), "bytes")),
                     1234);
    json_decref(j);
    dvppd_trace_unref(t);
}

typedef struct spammer {
    dvppd_trace *t;
    int id;
} spammer;

static void *spam(void *arg)
{
    spammer *s = arg;
    char name[16];

    snprintf(name, sizeof(name), "spam-%d", s->id);
    for (int k = 0; k < 1000; k++) {
        dvppd_trace_args a = {s->id, k, -1, 0, name, 0};
        dvppd_trace_span(s->t, "op", "unit", (uint64_t)k * 1000, (uint64_t)k * 1000 + 10, &a);
    }
    return NULL;
}

static void test_four_threads(void **state)
{
    pthread_t th[4];
    spammer sp[4];
    dvppd_trace *t;
    json_t *j;
    size_t kept;
    uint64_t dropped;

    (void)state;
    assert_int_equal(dvppd_trace_new(3000, NULL, &t, NULL), DVPP_OK);
    for (int i = 0; i < 4; i++) {
        sp[i] = (spammer){t, i};
        assert_int_equal(pthread_create(&th[i], NULL, spam, &sp[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    dvppd_trace_counts(t, &kept, &dropped);
    assert_int_equal(kept, 3000);      /* the bound, exactly */
    assert_int_equal(dropped, 1000);   /* the rest counted */
    j = trace_parsed(t);
    assert_int_equal(count_events(j, "X", "op"), 3000);
    /* Every thread with a span kept is named (which threads got in before
     * the bound is the scheduler's choice: at least three did). */
    assert_true(count_span_tids(j) >= 3);
    assert_int_equal(count_events(j, "M", "thread_name"), count_span_tids(j));
    json_decref(j);
    dvppd_trace_unref(t);
}

static void test_store(void **state)
{
    dvppd_trace_config cfg = {.keep = 3, .max_bytes = 100, .max_events = 8,
                              .capture_events = 8, .max_seconds = 5};
    dvppd_trace_store *s;
    char *json;
    size_t len;

    (void)state;
    assert_int_equal(dvppd_trace_store_new(&cfg, &s, NULL), DVPP_OK);
    for (uint64_t id = 1; id <= 4; id++) {
        char *txt = malloc(20);
        snprintf(txt, 20, "{\"id\":%02u}", (unsigned)id); /* 9 bytes */
        assert_int_equal(dvppd_trace_store_put(s, id, txt, strlen(txt), NULL), DVPP_OK);
    }
    /* keep = 3: the oldest (1) went first */
    assert_int_equal(dvppd_trace_store_get(s, 1, &json, &len, NULL), DVPP_ENOTFOUND);
    assert_int_equal(dvppd_trace_store_get(s, 4, &json, &len, NULL), DVPP_OK);
    assert_string_equal(json, "{\"id\":04}");
    assert_int_equal(len, 9);
    free(json);
    /* 90 bytes: 2 and 3 must go (keep, then 9+9+90 > 100); 4 stays (9 + 90 = 99) */
    json = calloc(1, 91);
    memset(json, 'x', 90);
    assert_int_equal(dvppd_trace_store_put(s, 5, json, 90, NULL), DVPP_OK);
    assert_int_equal(dvppd_trace_store_get(s, 2, &json, &len, NULL), DVPP_ENOTFOUND);
    assert_int_equal(dvppd_trace_store_get(s, 3, &json, &len, NULL), DVPP_ENOTFOUND);
    assert_int_equal(dvppd_trace_store_get(s, 4, &json, &len, NULL), DVPP_OK);
    free(json);
    assert_int_equal(dvppd_trace_store_get(s, 5, &json, &len, NULL), DVPP_OK);
    assert_int_equal(len, 90);
    free(json);
    /* one larger than max_bytes is refused (and freed) */
    json = calloc(1, 200);
    assert_int_equal(dvppd_trace_store_put(s, 6, json, 150, NULL), DVPP_ELIMIT);
    assert_int_equal(dvppd_trace_store_get(s, 6, &json, &len, NULL), DVPP_ENOTFOUND);
    assert_int_not_equal(dvppd_trace_store_next_id(s), dvppd_trace_store_next_id(s));
    dvppd_trace_store_free(s);
}

static void test_capture_and_job(void **state)
{
    dvppd_trace_config cfg = {.keep = 4, .max_bytes = 1 << 20, .max_events = 64,
                              .capture_events = 64, .max_seconds = 5};
    dvppd_trace_store *s;
    dvppd_trace *cap, *other;
    dvppd_trace_job j1, j2;
    const dvpp_pipe_watch *w;
    json_t *j;
    char *json;
    size_t len;

    (void)state;
    assert_int_equal(dvppd_trace_store_new(&cfg, &s, NULL), DVPP_OK);
    /* no capture, not traced: inactive, the watch is the one given */
    assert_int_equal(dvppd_trace_job_begin(&j1, s, false, "x", NULL), DVPP_OK);
    assert_false(dvppd_trace_job_active(&j1));
    assert_null(dvppd_trace_job_watch(&j1, NULL));
    dvppd_trace_job_end(&j1, s);

    assert_int_equal(dvppd_trace_new(64, "capture", &cap, NULL), DVPP_OK);
    assert_int_equal(dvppd_trace_new(64, "capture", &other, NULL), DVPP_OK);
    assert_int_equal(dvppd_trace_store_capture_begin(s, cap, NULL), DVPP_OK);
    assert_int_equal(dvppd_trace_store_capture_begin(s, other, NULL), DVPP_EBUSY);
    assert_int_equal(dvppd_trace_job_begin(&j1, s, true, "preprocess", NULL), DVPP_OK);
    assert_int_equal(dvppd_trace_job_begin(&j2, s, false, "preprocess", NULL), DVPP_OK);
    assert_true(dvppd_trace_job_active(&j2));
    assert_int_equal(dvppd_trace_store_capture_jobs(s), 2);
    w = dvppd_trace_job_watch(&j1, NULL);
    assert_non_null(w);
    assert_null(w->image); /* no image hook: the plan's fusions stay */
    w->span(w->ctx, "resize", 1, 0, 100, 200); /* as the pipeline calls it */
    dvppd_trace_job_span(&j2, "request", "http", 0, 1000, NULL);
    dvppd_trace_store_capture_end(s);
    dvppd_trace_job_span(&j2, "late", "http", 2000, 3000, NULL); /* still lands */
    dvppd_trace_job_end(&j1, s);
    dvppd_trace_job_end(&j2, s);
    /* j1's own trace is stored under its id, with its one span */
    assert_int_equal(dvppd_trace_store_get(s, j1.id, &json, &len, NULL),
                     DVPP_OK);
    j = json_loadb(json, len, 0, NULL);
    free(json);
    assert_non_null(j);
    assert_int_equal(count_events(j, "X", "resize"), 1);
    assert_int_equal(count_events(j, "X", "request"), 0);
    json_decref(j);
    /* the capture has both jobs' spans, args.job telling them apart */
    j = trace_parsed(cap);
    assert_int_equal(count_events(j, "X", NULL), 3);
    assert_int_equal(count_events(j, "X", "late"), 1);
    json_decref(j);
    dvppd_trace_unref(cap);
    dvppd_trace_unref(other);
    dvppd_trace_store_free(s);
}

/* A span recorded for another thread (args.tid) lands on that tid, named
 * by args.thread; the store's bounded get refuses past @max before any
 * copy (ELIMIT, field "trace", the limit named) and serves at the bound. */
static void test_other_tid_and_get_max(void **state)
{
    dvppd_trace_config cfg = {.keep = 4, .max_bytes = 1000, .max_events = 8,
                              .capture_events = 8, .max_seconds = 5};
    dvppd_trace_args a = DVPPD_TRACE_NO_ARGS;
    dvppd_trace_store *s;
    dvppd_trace *t;
    json_t *j, *ev;
    size_t i, len = 0, seen = 0;
    char *json = NULL, *txt = strdup("0123456789");
    dvpp_err e;

    (void)state;
    assert_int_equal(dvppd_trace_new(8, "x", &t, NULL), DVPP_OK);
    a.tid = dvppd_trace_tid() + 1000000; /* no thread of ours */
    a.thread = "socket";
    dvppd_trace_span(t, "request", "socket", 1000, 5000, &a);
    dvppd_trace_span(t, "write", "socket", 2000, 3000, NULL);
    j = trace_parsed(t);
    json_array_foreach(json_object_get(j, "traceEvents"), i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        json_int_t tid = json_integer_value(json_object_get(ev, "tid"));
        if (strcmp(ph, "M") == 0 && tid == a.tid) {
            assert_string_equal(json_string_value(json_object_get(
                                    json_object_get(ev, "args"), "name")), "socket");
            seen++;
        }
        if (strcmp(ph, "X") == 0) {
            const char *name = json_string_value(json_object_get(ev, "name"));
            assert_int_equal(tid, strcmp(name, "request") == 0 ? a.tid : dvppd_trace_tid());
            seen++;
        }
    }
    assert_int_equal(seen, 3);
    json_decref(j);
    dvppd_trace_unref(t);

    assert_int_equal(dvppd_trace_store_new(&cfg, &s, NULL), DVPP_OK);
    assert_int_equal(dvppd_trace_store_put(s, 7, txt, 10, NULL), DVPP_OK);
    dvpp_err_clear(&e);
    assert_int_equal(dvppd_trace_store_get_max(s, 7, 9, "Welcome.max_inline", &json, &len, &e),
                     DVPP_ELIMIT);
    assert_null(json);
    assert_string_equal(e.field, "trace");
    assert_non_null(strstr(e.msg, "10 bytes"));
    assert_non_null(strstr(e.msg, "Welcome.max_inline (9)"));
    assert_int_equal(dvppd_trace_store_get_max(s, 7, 10, NULL, &json, &len, NULL), DVPP_OK);
    assert_int_equal(len, 10);
    assert_string_equal(json, "0123456789");
    free(json);
    assert_int_equal(dvppd_trace_store_get_max(s, 8, 100, NULL, &json, &len, NULL),
                     DVPP_ENOTFOUND);
    dvppd_trace_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_and_json),
        cmocka_unit_test(test_four_threads),
        cmocka_unit_test(test_store),
        cmocka_unit_test(test_capture_and_job),
        cmocka_unit_test(test_other_tid_and_get_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
