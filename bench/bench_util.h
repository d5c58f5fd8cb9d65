/*
 * bench_util.h - timing helpers shared by the C benchmarks in bench/.
 *
 * Header-only (static inline) because every bench_*.c links into its own
 * binary; nothing here is shipped in libdvpp.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <time.h>

/* Monotonic wall clock in seconds. */
static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* qsort comparator for doubles, ascending; medians are sorted[runs / 2]. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
