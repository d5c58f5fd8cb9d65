/* A dvpp_allocator for tests: counts, records the largest request, fails
 * the Nth allocation or any request above a size, and reports leaks.
 * Install with test_alloc_install(); single-threaded use only. */
#ifndef DVPP_TEST_ALLOC_H
#define DVPP_TEST_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct test_alloc_stats {
    size_t calls;        /* allocation requests seen */
    size_t live;         /* blocks not yet freed */
    size_t live_bytes;   /* bytes not yet freed */
    size_t largest;      /* largest single request */
    size_t fail_at;      /* fail the call with this 1-based index (0 = never) */
    size_t fail_above;   /* fail any request larger than this (0 = never) */
    size_t failures;     /* requests refused */
} test_alloc_stats;

/* Reset the counters and install the test allocator. */
void test_alloc_install(void);
/* Restore the default allocator. */
void test_alloc_uninstall(void);
/* The live counters (mutable: set fail_at / fail_above between calls). */
test_alloc_stats *test_alloc(void);

/* Allocation-failure sweeps (style rule 20: fail allocation N = 1, 2, ...
 * until the call succeeds). test_alloc_fail_nth(n) makes the @n-th
 * allocation from now fail (1-based) and forgets earlier refusals;
 * test_alloc_injected() then says whether this run had one refused, and
 * disarms. A run in which nothing was refused made fewer than N
 * allocations: that ends the sweep, and it must end with OK. A sweep that
 * ends at N = 1 injected nothing and tested nothing: assert that it did
 * not (as the callers do with a count of the ENOMEM runs). */
void test_alloc_fail_nth(size_t n);
bool test_alloc_injected(void);

#endif
