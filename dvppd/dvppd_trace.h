/* dvppd_trace: per-job traces in Chrome Trace Event Format (docs/tracing.md).
 *
 * A dvppd_trace is a recorder: complete ("X") events {name, cat, ts, dur,
 * tid, args} appended from any thread, bounded (events past max_events are
 * counted as dropped, reported in otherData.dropped_events), serialised to
 * {"traceEvents":[...], "displayTimeUnit":"ms", "otherData":{...}} with
 * "M" metadata events naming the process and every thread that appended
 * (the name given with the event, else the thread's own name from
 * pthread_getname_np: the device names its workers "vpc-worker-N").
 * Timestamps are dvpp_now_ns (CLOCK_MONOTONIC) in microseconds, so every
 * trace of one process shares one clock.
 *
 * A dvppd_trace_job is what one job (an HTTP request, a socket Submit)
 * writes to: its own trace when the caller asked for one, and the store's
 * running capture (GET /v1/trace?seconds=N) when there is one; with
 * neither it is inactive and costs one atomic load at its start.
 *
 * A dvppd_trace_store keeps finished traces as JSON text, the last
 * trace.keep of them and at most trace.max_bytes in all (oldest dropped
 * first), looked up by id, and the one running capture.
 *
 * Thread-safety: every function may be called from any thread, except that
 * a dvppd_trace_job is used by one job (its spans may come from several
 * threads at once: a batch's items). Locks: a trace's mutex and the
 * store's mutex are leaf locks (never held together).
 *
 * Ownership: a trace is reference-counted (new: one reference); names and
 * categories passed to the span functions are borrowed for the trace's
 * life (string literals, op kind names). The store owns the JSON it keeps;
 * _get hands out a copy.
 */
#ifndef DVPPD_TRACE_H
#define DVPPD_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/dvpp_pipeline.h"
#include "dvpp_status.h"

/* Per-job events by default (trace.max_events). */
#define DVPPD_TRACE_DEFAULT_EVENTS 4096u
/* Threads named in one trace; later ones keep only their tid. */
#define DVPPD_TRACE_MAX_THREADS 256u

typedef struct dvppd_trace dvppd_trace;

/* An event's args; negative (or 0 for @job) leaves one out. */
typedef struct dvppd_trace_args {
    int64_t item;          /* batch item */
    int64_t index;         /* op index */
    int64_t bytes;
    uint64_t job;          /* the job's number in a capture */
    const char *thread;    /* the thread's name; NULL: pthread_getname_np */
    int32_t tid;           /* the thread it ran on (dvppd_trace_tid); 0: the calling
                            * thread. Another thread's span should name it (@thread) */
} dvppd_trace_args;

/* No args: every field left out. */
#define DVPPD_TRACE_NO_ARGS ((dvppd_trace_args){-1, -1, -1, 0, NULL, 0})

/* The calling thread's id as traces record it (gettid), for spans a
 * thread records on behalf of another (dvppd_trace_args.tid). */
int32_t dvppd_trace_tid(void);

/* A recorder of at most @max_events (1..1<<24) events; @label goes into
 * otherData.label (copied, may be NULL). DVPP_EINVAL, DVPP_ENOMEM. */
dvpp_status dvppd_trace_new(uint32_t max_events, const char *label, dvppd_trace **out,
                            dvpp_err *err);
dvppd_trace *dvppd_trace_ref(dvppd_trace *t);
/* NULL is a no-op. */
void dvppd_trace_unref(dvppd_trace *t);

/* Record that @name ran from @t0_ns to @t1_ns (dvpp_now_ns) on the calling
 * thread. Past max_events (or out of memory) it only counts a drop. */
void dvppd_trace_span(dvppd_trace *t, const char *name, const char *cat, uint64_t t0_ns,
                      uint64_t t1_ns, const dvppd_trace_args *a);

/* Events kept and dropped so far. */
void dvppd_trace_counts(dvppd_trace *t, size_t *kept, uint64_t *dropped);

/* The Chrome Trace JSON (NUL-terminated, malloc'd: the caller frees it),
 * events sorted by ts; NULL when out of memory. Spans appended while it
 * runs are in it or not. */
char *dvppd_trace_json(dvppd_trace *t, size_t *len);

/* --- the store --------------------------------------------------------------------- */

typedef struct dvppd_trace_store dvppd_trace_store;

typedef struct dvppd_trace_config {
    uint32_t keep;           /* finished traces kept (trace.keep) */
    uint64_t max_bytes;      /* their JSON in all (trace.max_bytes) */
    uint32_t max_events;     /* per job (trace.max_events) */
    uint32_t capture_events; /* per capture (trace.capture_events) */
    uint32_t max_seconds;    /* a capture's longest N (trace.max_seconds) */
} dvppd_trace_config;

/* DVPP_EINVAL (a zero bound), DVPP_ENOMEM. */
dvpp_status dvppd_trace_store_new(const dvppd_trace_config *cfg, dvppd_trace_store **out,
                                  dvpp_err *err);
/* No capture may run (dvppd_trace_store_capture_end first). NULL is a no-op. */
void dvppd_trace_store_free(dvppd_trace_store *s);

const dvppd_trace_config *dvppd_trace_store_config(const dvppd_trace_store *s);

/* A fresh trace id (never 0, never reused by this store). */
uint64_t dvppd_trace_store_next_id(dvppd_trace_store *s);

/* Keep @json (@len bytes, malloc'd; taken in every case) as trace @id,
 * dropping the oldest past keep/max_bytes. DVPP_ELIMIT ("trace.max_bytes")
 * when it alone is larger than max_bytes. */
dvpp_status dvppd_trace_store_put(dvppd_trace_store *s, uint64_t id, char *json, size_t len,
                                  dvpp_err *err);

/* A copy of trace @id's JSON (the caller frees it). DVPP_ENOTFOUND (unknown
 * or dropped), DVPP_ENOMEM. */
dvpp_status dvppd_trace_store_get(dvppd_trace_store *s, uint64_t id, char **json, size_t *len,
                                  dvpp_err *err);
/* The same, refusing before the copy a JSON of more than @max bytes:
 * DVPP_ELIMIT, field "trace", naming its size and @max (@limit_name, e.g.
 * "Welcome.max_inline", in the message). */
dvpp_status dvppd_trace_store_get_max(dvppd_trace_store *s, uint64_t id, size_t max,
                                      const char *limit_name, char **json, size_t *len,
                                      dvpp_err *err);

/* Start recording every job into @t (a reference is taken). DVPP_EBUSY
 * when a capture runs already. */
dvpp_status dvppd_trace_store_capture_begin(dvppd_trace_store *s, dvppd_trace *t,
                                            dvpp_err *err);
/* Stop the capture (jobs that joined it keep their reference until they
 * end; their later spans still land in it). */
void dvppd_trace_store_capture_end(dvppd_trace_store *s);

/* Jobs that joined the running capture so far. */
uint64_t dvppd_trace_store_capture_jobs(dvppd_trace_store *s);

/* --- a job's sinks ------------------------------------------------------------------ */

typedef struct dvppd_trace_job {
    dvppd_trace *own;        /* asked for: stored under @id at the end */
    dvppd_trace *capture;    /* the capture it joined, or NULL */
    uint64_t id;             /* @own's id in the store */
    uint64_t job;            /* its number in the capture */
    dvpp_pipe_watch watch;   /* spans into both */
    const dvpp_pipe_watch *next; /* a watch it wraps (a dump's), or NULL */
} dvppd_trace_job;

/* Begin job @j: its own trace when @traced (its id reserved), and the
 * running capture if any. @s may be NULL (inactive). DVPP_ENOMEM (@j is
 * inactive then). */
dvpp_status dvppd_trace_job_begin(dvppd_trace_job *j, dvppd_trace_store *s, bool traced,
                                  const char *label, dvpp_err *err);

static inline bool dvppd_trace_job_active(const dvppd_trace_job *j)
{
    return j->own || j->capture;
}

/* The watch to set on the job's own copy of the pipeline, wrapping @next
 * (the pipeline's watch until now, e.g. a dump's, or NULL): its hooks are
 * called after the trace's, and the image hook is there only when @next
 * has one (so the plan's fusions are the same as with @next alone). @next
 * when inactive. */
const dvpp_pipe_watch *dvppd_trace_job_watch(dvppd_trace_job *j, const dvpp_pipe_watch *next);

/* A span into both sinks (no-op when inactive); @a may be NULL. */
void dvppd_trace_job_span(dvppd_trace_job *j, const char *name, const char *cat,
                          uint64_t t0_ns, uint64_t t1_ns, const dvppd_trace_args *a);

/* End the job: its own trace serialised into @s under j->id (when @s and
 * it exist), references dropped; @j is inactive after. Safe twice. */
void dvppd_trace_job_end(dvppd_trace_job *j, dvppd_trace_store *s);

#endif
