/* Helpers shared by the acldvpp* tests (tests/acl/test_dvpp_*.c): the
 * runtime brought up under one profile, a channel and a stream, DVPP
 * buffers and picture descriptions, the fixtures of .cache/testdata
 * (tests/tools/fetch-test-data), and error assertions that also check the
 * thread's message is this call's. Every test program includes it once. */
#ifndef TEST_DVPP_COMMON_H
#define TEST_DVPP_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"

/* The process under test: one device, one stream, one created channel. */
typedef struct dvpp_env {
    aclrtStream stream;
    acldvppChannelDesc *chan;
    const char *profile; /* "ascend310" / "ascend310p" */
} dvpp_env;

static dvpp_env g_env;

static inline int env_up(const char *profile)
{
    setenv("DVPP_ACL_PROFILE", profile, 1);
    unsetenv("DVPP_ACL_CHANNELS");
    unsetenv("DVPP_ACL_DEVICES");
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1); /* the expected errors stay quiet */
    g_env.profile = profile;
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
        aclrtCreateStream(&g_env.stream) != ACL_SUCCESS)
        return -1;
    g_env.chan = acldvppCreateChannelDesc();
    if (!g_env.chan || acldvppCreateChannel(g_env.chan) != ACL_SUCCESS)
        return -1;
    return 0;
}

static inline int env_down(void)
{
    int bad = 0;

    bad |= acldvppDestroyChannel(g_env.chan) != ACL_SUCCESS;
    bad |= acldvppDestroyChannelDesc(g_env.chan) != ACL_SUCCESS;
    bad |= aclrtDestroyStream(g_env.stream) != ACL_SUCCESS;
    bad |= aclrtResetDevice(0) != ACL_SUCCESS;
    bad |= aclFinalize() != ACL_SUCCESS;
    g_env.chan = NULL;
    return bad ? -1 : 0;
}

static int setup_310(void **state)
{
    (void)state;
    return env_up("ascend310");
}

static int setup_310p(void **state)
{
    (void)state;
    return env_up("ascend310p");
}

static inline int teardown_env(void **state)
{
    (void)state;
    return env_down();
}

static int is_310p(void)
{
    return strcmp(g_env.profile, "ascend310p") == 0;
}

/* --- messages ------------------------------------------------------------------ */

#define SENTINEL_TEXT "acldvppCreateBatchPicDesc: batchSize(100000) should be between [1, 256]"

/* Leave a known message as the thread's last one, so a later check can
 * tell that a failing call wrote its own. */
static inline void arm_message(void)
{
    assert_null(acldvppCreateBatchPicDesc(100000));
    assert_non_null(aclGetRecentErrMsg());
    assert_string_equal(aclGetRecentErrMsg(), SENTINEL_TEXT);
}

/* The call's error is @want and it left a message of its own. */
static inline void check_fail(aclError got, aclError want, const char *line_text, int line)
{
    const char *m = aclGetRecentErrMsg();

    if (got != want || !m || !m[0] || strcmp(m, SENTINEL_TEXT) == 0) {
        fprintf(stderr, "line %d: %s: got %d want %d, message '%s'\n", line, line_text,
                got, want, m ? m : "(null)");
        fail();
    }
}

#define EXPECT_FAIL(call, want)                                \
    do {                                                       \
        arm_message();                                         \
        check_fail((call), (want), #call, __LINE__);           \
    } while (0)

/* The message contains @needle (a DVPP text). */
static inline void expect_message(const char *needle)
{
    const char *m = aclGetRecentErrMsg();

    if (!m || !strstr(m, needle)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", m ? m : "(null)", needle);
        fail();
    }
}

/* --- memory and pictures ----------------------------------------------------------- */

static inline void *dvpp_alloc(size_t n)
{
    void *p = NULL;

    assert_int_equal(acldvppMalloc(&p, n), ACL_SUCCESS);
    assert_non_null(p);
    return p;
}

/* A picture description over a fresh DVPP buffer of @bytes. */
static inline acldvppPicDesc *new_pic(acldvppPixelFormat fmt, uint32_t w, uint32_t h, uint32_t ws,
                               uint32_t hs, uint32_t bytes)
{
    acldvppPicDesc *d = acldvppCreatePicDesc();

    assert_non_null(d);
    assert_int_equal(acldvppSetPicDescData(d, dvpp_alloc(bytes)), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(d, bytes), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(d, fmt), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidth(d, w), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeight(d, h), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidthStride(d, ws), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeightStride(d, hs), ACL_SUCCESS);
    return d;
}

static inline void free_pic(acldvppPicDesc *d)
{
    assert_int_equal(acldvppFree(acldvppGetPicDescData(d)), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyPicDesc(d), ACL_SUCCESS);
}

/* Deterministic pixels (an LCG), so every run compares the same bytes. */
static inline void fill_pattern(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

/* A smooth gradient with some texture: resizes of it exercise every tap. */
static inline void fill_picture(uint8_t *p, uint32_t ws, uint32_t rows, uint32_t seed)
{
    for (uint32_t y = 0; y < rows; y++)
        for (uint32_t x = 0; x < ws; x++)
            p[(size_t)y * ws + x] = (uint8_t)((x * 3 + y * 5 + ((x * y + seed) % 17)) & 0xFF);
}

/* --- fixtures ------------------------------------------------------------------------ */

/* .cache/testdata/fixtures/@name read into a fresh DVPP buffer (*len bytes). */
static inline void *load_fixture(const char *name, uint32_t *len)
{
    char path[256];
    FILE *f;
    long n;
    void *p;

    snprintf(path, sizeof(path), ".cache/testdata/fixtures/%s", name);
    f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "missing %s (run tests/tools/fetch-test-data)\n", path);
        fail();
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(n > 0);
    p = dvpp_alloc((size_t)n);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (uint32_t)n;
    return p;
}

static inline aclError sync_stream(void)
{
    return aclrtSynchronizeStream(g_env.stream);
}

#endif
