/* dvppd_faults: fault injection for the hardening tests.
 *
 * Read once at start from the environment variable DVPPD_FAULTS, a comma-
 * separated list (unset, the normal case: nothing is injected and this
 * module costs nothing):
 *
 *   alloc_fail=N   once the daemon is ready, every Nth allocation through
 *                  dvpp_malloc/dvpp_calloc fails (the pixel, tensor and
 *                  codec buffers of jobs: a job must report DVPP_ENOMEM and
 *                  nothing else in flight may be lost)
 *   stall_ms=M     every device task waits M ms before it runs (a stalled
 *                  worker: jobs past their deadline must time out, and
 *                  canceled ones end at once)
 *   ignore_cancel_ms=M
 *                  every device task first waits M ms looking at neither
 *                  its cancellation nor its deadline (a job that ignores
 *                  its cancellation: a stop must give up on it after its
 *                  grace and exit 1 without freeing what it uses)
 *
 * The daemon logs a warning naming every fault it injects.
 * Ownership: the caller owns the dvppd_faults (plain data); the allocator
 * it installs refers to it until dvppd_faults_fini.
 */
#ifndef DVPPD_FAULTS_H
#define DVPPD_FAULTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dvpp_mem.h"
#include "dvpp_status.h"

typedef struct dvppd_faults {
    uint64_t alloc_fail_every;   /* 0: off */
    uint64_t stall_ns;           /* 0: off */
    uint64_t deaf_ns;            /* ignore_cancel_ms; 0: off */
    atomic_bool armed;           /* allocation faults start when ready */
    atomic_uint_fast64_t allocs, failed;
    dvpp_allocator next;         /* the allocator faults wrap */
} dvppd_faults;

/* Parse @spec (NULL or "": no faults) into @f. DVPP_EINVAL naming the
 * item for anything unknown. */
dvpp_status dvppd_faults_parse(dvppd_faults *f, const char *spec, dvpp_err *err);

/* Install the failing allocator (before any thread starts) when asked. */
void dvppd_faults_install(dvppd_faults *f);

/* From now on, allocation faults happen (called once the daemon is ready,
 * so that start-up itself does not fail). */
void dvppd_faults_arm(dvppd_faults *f);

/* Put the previous allocator back (after every thread has stopped). */
void dvppd_faults_fini(dvppd_faults *f);

#endif
