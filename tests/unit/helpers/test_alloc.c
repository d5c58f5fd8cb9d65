#include "test_alloc.h"

#include <stdlib.h>

#include "dvpp_mem.h"

static test_alloc_stats g_stats;
/* g_stats.failures when test_alloc_fail_nth armed the current run. */
static size_t g_failures_mark;

static void *t_alloc(void *ctx, size_t size, size_t align)
{
    void *p = NULL;

    (void)ctx;
    g_stats.calls++;
    if (size > g_stats.largest)
        g_stats.largest = size;
    if ((g_stats.fail_at && g_stats.calls == g_stats.fail_at) ||
        (g_stats.fail_above && size > g_stats.fail_above)) {
        g_stats.failures++;
        return NULL;
    }
    if (posix_memalign(&p, align, size) != 0)
        return NULL;
    g_stats.live++;
    g_stats.live_bytes += size;
    return p;
}

static void t_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    g_stats.live--;
    g_stats.live_bytes -= size;
    free(ptr);
}

void test_alloc_install(void)
{
    dvpp_allocator a = {t_alloc, t_free, NULL};
    g_stats = (test_alloc_stats){0};
    dvpp_replace_allocator(&a);
}

void test_alloc_uninstall(void)
{
    dvpp_replace_allocator(NULL);
}

test_alloc_stats *test_alloc(void)
{
    return &g_stats;
}

void test_alloc_fail_nth(size_t n)
{
    g_stats.fail_at = n ? g_stats.calls + n : 0;
    g_failures_mark = g_stats.failures;
}

bool test_alloc_injected(void)
{
    g_stats.fail_at = 0;
    return g_stats.failures > g_failures_mark;
}
