/* Unit tests for dvpp_mem_release_idle: blocks a thread freed at idle go
 * back to the system (after a burst raised glibc's dynamic thresholds, as
 * a 24 MiB block mapped and freed does); afterwards the load thresholds
 * hold: a 16 MiB block comes from the arena (mmap threshold fixed at
 * 32 MiB) and stays resident once freed (trim threshold back at 64 MiB),
 * a 40 MiB one is mapped.
 *
 * Its own binary: the function changes the process's malloc thresholds.
 * Skipped under ASan, whose allocator is not glibc's, and where
 * madvise(MADV_DONTNEED) returns no memory (qemu-user, which runs the
 * aarch64 suites, ignores it). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "dvpp_mem.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_ASAN 1 /* (or TSan: neither allocator is glibc's) */
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_ASAN 1
#endif

#define BLOCKS 16
#define BLOCK ((size_t)1 << 20)
#define BURST ((size_t)24 << 20)

typedef struct arena_case {
    void *block[BLOCKS];
    void *volatile burst;  /* volatile: the compiler may not drop the burst */
    size_t before, after, released;
} arena_case;

static size_t rss_bytes(void)
{
    long pages_total = 0, pages_res = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    assert_non_null(f);
    assert_int_equal(fscanf(f, "%ld %ld", &pages_total, &pages_res), 2);
    fclose(f);
    return (size_t)pages_res * (size_t)sysconf(_SC_PAGESIZE);
}

static size_t free_blocks(void *ctx)
{
    arena_case *c = ctx;

    for (int i = 0; i < BLOCKS; i++)
        free(c->block[i]);
    return BLOCKS * BLOCK;
}

/* On a thread of its own (its own arena): a burst's block, then BLOCKS
 * touched blocks, given back by dvpp_mem_release_idle. */
static void *release_thread(void *arg)
{
    arena_case *c = arg;

    c->burst = malloc(BURST);
    if (!c->burst)
        return NULL;
    memset(c->burst, 1, BURST);
    free(c->burst); /* mapped, unmapped: glibc's thresholds rise to it */
    for (int i = 0; i < BLOCKS; i++) {
        c->block[i] = malloc(BLOCK);
        if (!c->block[i])
            return NULL;
        memset(c->block[i], 2, BLOCK);
    }
    c->before = rss_bytes();
    c->released = dvpp_mem_release_idle(free_blocks, c);
    c->after = rss_bytes();
    return c;
}

typedef struct load_case {
    void *volatile p;
    size_t mapped_before, mapped_16, mapped_40, rss_touched, rss_freed;
} load_case;

static size_t mapped_blocks(void)
{
#if defined(__GLIBC__)
    return mallinfo2().hblks;
#else
    return 0;
#endif
}

/* After a release, on a new thread: what the load thresholds do. */
static void *load_thread(void *arg)
{
    load_case *c = arg;

    c->mapped_before = mapped_blocks();
    c->p = malloc(16u << 20);
    if (!c->p)
        return NULL;
    c->mapped_16 = mapped_blocks();
    memset(c->p, 3, 16u << 20);
    c->rss_touched = rss_bytes();
    free(c->p);
    c->rss_freed = rss_bytes();
    c->p = malloc(40u << 20);
    if (!c->p)
        return NULL;
    c->mapped_40 = mapped_blocks();
    free(c->p);
    return c;
}

static void run_on_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    void *ret = NULL;

    assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_ptr_equal(ret, arg);
}

static void test_release_returns_a_threads_blocks(void **state)
{
    arena_case c = {.released = 0};

    (void)state;
    run_on_thread(release_thread, &c);
    print_message("dvpp_mem_release_idle: RSS %zu -> %zu KiB\n", c.before >> 10, c.after >> 10);
    assert_int_equal(c.released, BLOCKS * BLOCK);
    assert_true(c.after + (12u << 20) < c.before);
}

/* Runs after a release: the thresholds it leaves. */
static void test_load_thresholds_after_release(void **state)
{
    load_case c = {.mapped_before = 0};

    (void)state;
    assert_int_equal(dvpp_mem_release_idle(NULL, NULL), 0);
    run_on_thread(load_thread, &c);
    assert_int_equal(c.mapped_16, c.mapped_before);     /* from the arena */
    assert_true(c.rss_freed + (4u << 20) > c.rss_touched); /* kept once freed */
    assert_int_equal(c.mapped_40, c.mapped_before + 1); /* above 32 MiB: mapped */
}

static size_t count_calls(void *ctx)
{
    (*(int *)ctx)++;
    return 7;
}

static void test_release_without_blocks(void **state)
{
    int calls = 0;

    (void)state;
    assert_int_equal(dvpp_mem_release_idle(count_calls, &calls), 7);
    assert_int_equal(calls, 1);
    assert_int_equal(dvpp_mem_release_idle(NULL, NULL), 0);
}

/* Whether MADV_DONTNEED takes touched pages out of RSS here. */
static bool madvise_releases(void)
{
    size_t n = (size_t)16 << 20, before, after;
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED)
        return false;
    memset(p, 1, n);
    before = rss_bytes();
    (void)madvise(p, n, MADV_DONTNEED);
    after = rss_bytes();
    munmap(p, n);
    return after + (n / 2) < before;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_release_returns_a_threads_blocks),
        cmocka_unit_test(test_load_thresholds_after_release),
        cmocka_unit_test(test_release_without_blocks),
    };

#if defined(UNDER_ASAN) || !defined(__GLIBC__)
    printf("skipped: RSS after free depends on glibc's allocator\n");
    return 0;
#endif
    if (!madvise_releases()) {
        printf("skipped: madvise(MADV_DONTNEED) returns no memory here (qemu-user?)\n");
        return 0;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
