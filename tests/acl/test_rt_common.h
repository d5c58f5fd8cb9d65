/* Helpers shared by the runtime's tests (tests/acl/test_rt_*.c): a
 * scratch folder for aclInit's JSON, init/finalize with a JSON text,
 * monotonic time, and a task that records the order it ran in. Every
 * test program includes it once. */
#ifndef TEST_RT_COMMON_H
#define TEST_RT_COMMON_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "acl/acl.h"
#include "acl_int.h"

/* The environment the runtime reads: each test starts from none of it,
 * but with the log off (the tests fail calls on purpose by the hundred;
 * test_rt_init's log test turns it on). */
static inline void rt_clear_env(void)
{
    unsetenv("DVPP_ACL_PROFILE");
    unsetenv("DVPP_ACL_DEVICES");
    unsetenv("DVPP_ACL_CHANNELS");
    unsetenv("DVPP_ACL_POOL_BYTES");
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);
    unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
}

static char g_rt_dir[256];

static inline void rt_make_dir(void)
{
    const char *tmp = getenv("TMPDIR");

    if (g_rt_dir[0])
        return;
    snprintf(g_rt_dir, sizeof(g_rt_dir), "%s/acl-rt.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_rt_dir)) {
        fprintf(stderr, "mkdtemp failed\n");
        exit(1);
    }
}

/* Write @text to <scratch>/@name; returns the path (static storage, one at
 * a time). */
static inline const char *rt_write_file(const char *name, const char *text)
{
    static char path[512];
    FILE *f;

    rt_make_dir();
    snprintf(path, sizeof(path), "%s/%s", g_rt_dir, name);
    f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

static inline void rt_remove_dir(void)
{
    char cmd[600];

    if (!g_rt_dir[0])
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_rt_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_rt_dir);
    g_rt_dir[0] = '\0';
}

/* aclInit with @json written to a file (NULL: aclInit(NULL)). */
static inline aclError rt_init_json(const char *json)
{
    return aclInit(json ? rt_write_file("acl.json", json) : NULL);
}

/* A fresh runtime (the environment cleared, aclInit with @json, NULL for
 * none) with device 0 set: 0, or -1 for a cmocka setup to fail. */
static inline int rt_up(const char *json)
{
    rt_clear_env();
    if (rt_init_json(json) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return -1;
    return 0;
}

/* The cmocka teardown of every runtime test: aclFinalize. */
static inline int rt_teardown(void **state)
{
    (void)state;
    return aclFinalize() == ACL_SUCCESS ? 0 : -1;
}

/* The runtime's stream behind @s (NULL: the default stream). */
static inline acli_stream *rt_stream_of(aclrtStream s)
{
    acli_stream *out = NULL;

    assert_int_equal(acli_stream_get(s, &out), ACL_SUCCESS);
    assert_non_null(out);
    return out;
}

static inline uint64_t rt_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline void rt_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* The recent message contains @part. */
static inline void rt_assert_msg_has(const char *part)
{
    const char *m = aclGetRecentErrMsg();

    if (!m || !strstr(m, part)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", m ? m : "(null)", part);
        fail();
    }
}

/* --- a task that records when it ran ----------------------------------------------- */

typedef struct rt_order {
    atomic_int next;       /* the next position to hand out */
    atomic_int pos[4096];  /* pos[i]: when task i ran (-1: not yet) */
    atomic_int fini_calls;
    atomic_int fini_status[4096];
    atomic_int sleep_ms;   /* each task sleeps this long first */
    atomic_bool hold;      /* while set, tasks wait (up to 30 s) before that */
} rt_order;

typedef struct rt_order_task {
    rt_order *o;
    int index;
    aclError result;       /* what run returns */
} rt_order_task;

static inline aclError rt_order_run(void *ctx, acli_task *t)
{
    rt_order_task *k = ctx;
    int ms = atomic_load(&k->o->sleep_ms);

    uint64_t until = rt_now_ms() + 30000;

    (void)t;
    /* A task still running when the test looks, however loaded the
     * machine: the test says when it may end. */
    while (atomic_load(&k->o->hold) && rt_now_ms() < until)
        rt_sleep_ms(1);
    if (ms)
        rt_sleep_ms(ms);
    k->o->pos[k->index] = atomic_fetch_add(&k->o->next, 1);
    if (k->result)
        return acli_fail(k->result, "task %d failed on purpose", k->index);
    return ACL_SUCCESS;
}

static inline void rt_order_fini(void *ctx, aclError status)
{
    rt_order_task *k = ctx;

    atomic_store(&k->o->fini_status[k->index], status);
    atomic_fetch_add(&k->o->fini_calls, 1);
    free(k);
}

static inline void rt_order_reset(rt_order *o)
{
    atomic_store(&o->next, 0);
    for (int i = 0; i < 4096; i++) {
        o->pos[i] = -1;
        atomic_store(&o->fini_status[i], -12345);
    }
    atomic_store(&o->fini_calls, 0);
    atomic_store(&o->sleep_ms, 0);
    atomic_store(&o->hold, false);
}

static inline aclError rt_order_submit(acli_stream *s, int engine, rt_order *o, int index,
                                aclError result)
{
    rt_order_task *k = malloc(sizeof(*k));
    aclError rc;

    assert_non_null(k);
    *k = (rt_order_task){o, index, result};
    rc = acli_submit(s, engine, rt_order_run, rt_order_fini, k);
    if (rc)
        free(k);
    return rc;
}

#endif
