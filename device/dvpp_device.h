/* dvpp_device: the device model (engines, channels, streams, jobs, batch
 * jobs, admission, counters), after AscendCL's stream semantics, on a CPU.
 *
 * A device owns one engine per kind (jpegd jpege pngd vpc aipp vdec venc).
 * Each engine has N channels (worker threads), a bounded queue (a fixed pool
 * of job records, allocated once by dvpp_device_new) and a backend (a table
 * of hooks that create and destroy per-worker state; the built-in "cpu"
 * backend has none). The device runs generic tasks: a job is a function, a
 * context and the pixels/bytes it will hold while in flight.
 *
 * Streams: tasks submitted on one stream run in submission order, one at a
 * time (the next is queued when the previous completes, even when they are
 * on different engines); different streams run concurrently across channels.
 * Submission never blocks and never allocates: it admits the job or fails at
 * once with DVPP_EAGAIN (queue full, pixel or byte budget used up).
 * Completion: a per-job callback (on a worker thread), an optional eventfd
 * per stream (written with 1 per completion) and dvpp_stream_synchronize().
 *
 * Batch jobs: N items of one function, run in parallel across an engine's
 * channels; per-item status; strict mode stops the batch at the first
 * failing item (the items above it complete as DVPP_ECANCELED; those below
 * it, started before it, run to their end, and the batch's error is the
 * lowest failing item's, whatever the timing); progress, cancel, wait.
 *
 * Thread-safety: every function below may be called from any thread, except
 * that a handle must not be freed while another thread uses it, and
 * dvpp_device_free() must not race with any other call on that device.
 * Task functions and callbacks run on worker threads; they may call
 * dvpp_device_submit(), dvpp_job_cancel() and the dvpp_task_* helpers, but
 * must not call dvpp_stream_synchronize(), dvpp_stream_free(),
 * dvpp_batch_wait(), dvpp_batch_free() or dvpp_device_free() (deadlock).
 *
 * Memory: all allocation goes through dvpp_malloc(), on the calling thread
 * of dvpp_device_new / dvpp_stream_new / dvpp_batch_new only; worker threads
 * never allocate.
 */
#ifndef DVPP_DEVICE_H
#define DVPP_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_status.h"

typedef enum dvpp_engine {
    DVPP_ENGINE_JPEGD,
    DVPP_ENGINE_JPEGE,
    DVPP_ENGINE_PNGD,
    DVPP_ENGINE_VPC,
    DVPP_ENGINE_AIPP,
    DVPP_ENGINE_VDEC,
    DVPP_ENGINE_VENC,
    DVPP_ENGINE_COUNT
} dvpp_engine;

/* "jpegd", "vpc", ...; "unknown" outside the enum. */
const char *dvpp_engine_name(int engine);

/* Why a submit was refused (counted per reason). */
typedef enum dvpp_reject_reason {
    DVPP_REJECT_QUEUE,     /* the engine's queue is full (DVPP_EAGAIN) */
    DVPP_REJECT_PIXELS,    /* pixel budget in flight used up (DVPP_EAGAIN) */
    DVPP_REJECT_BYTES,     /* byte budget in flight used up (DVPP_EAGAIN) */
    DVPP_REJECT_BATCHES,   /* too many batch jobs open (DVPP_EAGAIN) */
    DVPP_REJECT_TOO_LARGE, /* larger than the whole budget (DVPP_ELIMIT) */
    DVPP_REJECT_DISABLED,  /* engine has 0 channels (DVPP_EUNSUPPORTED) */
    DVPP_REJECT_COUNT
} dvpp_reject_reason;

/* "queue", "pixels", ...; "unknown" outside the enum. */
const char *dvpp_reject_name(int reason);

typedef struct dvpp_device dvpp_device;
typedef struct dvpp_stream dvpp_stream;
typedef struct dvpp_batch dvpp_batch;
/* The running task as its function sees it (owned by the device; valid only
 * during the call). */
typedef struct dvpp_task dvpp_task;

/* The work of one job or one batch item. Runs on a worker thread with the
 * worker's backend state (NULL for the cpu backend). Returns DVPP_OK or an
 * error, with detail in @err (cleared before the call). */
typedef dvpp_status (*dvpp_task_fn)(dvpp_task *task, void *ctx,
                                    void *worker_state, dvpp_err *err);

/* Completion of one job, on a worker thread, exactly once per admitted job
 * (also for jobs canceled or timed out without running). @err is valid only
 * during the call. Runs before the stream's next task starts. */
typedef void (*dvpp_job_done_fn)(void *ctx, uint64_t ticket, dvpp_status status,
                                 const dvpp_err *err);

/* One job. Plain data, copied by dvpp_device_submit(); @ctx is borrowed and
 * must stay valid until the completion callback (or synchronize) returns. */
typedef struct dvpp_job {
    dvpp_engine engine;
    dvpp_task_fn fn;       /* required */
    dvpp_job_done_fn done; /* optional */
    void *ctx;             /* passed to fn and done */
    uint64_t pixels;       /* admission cost held while in flight */
    uint64_t bytes;
    uint64_t deadline_ns;  /* CLOCK_MONOTONIC ns (dvpp_now_ns()), 0 = none */
} dvpp_job;

/* Hooks of one engine backend. init() runs on the thread calling
 * dvpp_device_new(), once per channel, and may set *state (used afterwards
 * only by that channel's worker thread); fini() runs in dvpp_device_free()
 * after the workers have stopped. Either hook may be NULL. The table and
 * @ctx are borrowed for the device's lifetime. */
typedef struct dvpp_engine_backend {
    const char *name;
    dvpp_status (*init)(void *ctx, dvpp_engine engine, unsigned channel,
                        void **state, dvpp_err *err);
    void (*fini)(void *ctx, dvpp_engine engine, unsigned channel, void *state);
    void *ctx;
    /* May be NULL. Called on the channel's own worker thread, outside the
     * device lock, once the worker has had no task for the device's
     * idle_trim_ms after one: release what @state holds above @keep_bytes
     * per buffer (a burst's memory goes back to the system; steady work
     * keeps its buffers, so it still allocates nothing). Returns the bytes
     * released. */
    uint64_t (*idle)(void *ctx, dvpp_engine engine, unsigned channel, void *state,
                     uint64_t keep_bytes);
} dvpp_engine_backend;

/* The built-in backend: no per-worker state. A static table. */
const dvpp_engine_backend *dvpp_backend_cpu(void);

typedef struct dvpp_device_config {
    unsigned channels[DVPP_ENGINE_COUNT];    /* 0 = engine disabled */
    unsigned queue_depth[DVPP_ENGINE_COUNT]; /* jobs admitted per engine, >= 1
                                                when the engine is enabled */
    const dvpp_engine_backend *backend[DVPP_ENGINE_COUNT]; /* NULL = cpu */
    uint64_t pixel_budget; /* pixels in flight, device-wide, 0 = unlimited */
    uint64_t byte_budget;  /* bytes in flight, device-wide, 0 = unlimited */
    unsigned max_batches;  /* batch jobs open at once, 0 = unlimited */
    uint64_t fault_stall_ns; /* tests only: each task first waits this long
                                (until canceled or past its deadline), a
                                stalled worker; 0 = off */
    uint64_t fault_deaf_ns;  /* tests only: each task first waits this long
                                looking at neither its cancellation nor its
                                deadline (a task stuck where it cannot),
                                then as fault_stall_ns; 0 = off */
    uint32_t idle_trim_ms;    /* a worker idle this long after a task has its
                                 backend's idle hook trim it; 0 = never */
    uint64_t idle_keep_bytes; /* what a trim leaves: buffers up to this size */
} dvpp_device_config;

#define DVPP_DEVICE_MAX_CHANNELS 256u
#define DVPP_DEVICE_MAX_QUEUE (1u << 20)

/* Defaults: channels from the CPU count (capped at 8), queue depth 64,
 * cpu backend, no budgets, 16 batch jobs, idle trim after 5 s keeping
 * buffers up to 8 MiB (a 1080p RGB image is 6.2 MB). */
#define DVPP_DEVICE_IDLE_TRIM_MS 5000u
#define DVPP_DEVICE_IDLE_KEEP_BYTES ((uint64_t)8 << 20)
void dvpp_device_config_default(dvpp_device_config *cfg);

/* Create a device and start its worker threads. DVPP_EINVAL for a bad
 * config, DVPP_ENOMEM, DVPP_ESYS (thread creation), or the status of a
 * failing backend init. On failure *out is NULL and nothing leaks. */
dvpp_status dvpp_device_new(const dvpp_device_config *cfg, dvpp_device **out,
                            dvpp_err *err);

/* Stop the device: jobs not yet started complete with DVPP_ECANCELED
 * (callbacks still run), running jobs are flagged canceled and awaited,
 * workers are joined, backend states finalised, and streams and batches still
 * open are freed (their handles become invalid). NULL is a no-op. */
void dvpp_device_free(dvpp_device *d);

/* CLOCK_MONOTONIC in ns, the clock of every deadline. */
uint64_t dvpp_now_ns(void);

/* pthread_cond_init with CLOCK_MONOTONIC for its timed waits, so their
 * deadlines come from dvpp_now_ns() and a wall-clock step moves none of
 * them. 0 or the pthread error. */
int dvpp_cond_init_monotonic(pthread_cond_t *cv);

/* --- streams ------------------------------------------------------------ */

#define DVPP_STREAM_EVENTFD 1u /* create an eventfd written once per completion */

/* A new stream on @d (owned by the caller; free with dvpp_stream_free or, at
 * the latest, by dvpp_device_free). DVPP_ENOMEM, DVPP_ESYS (eventfd). */
dvpp_status dvpp_stream_new(dvpp_device *d, unsigned flags, dvpp_stream **out,
                            dvpp_err *err);

/* The stream's eventfd (non-blocking, close-on-exec; each completion adds 1
 * to its counter), or -1 when not requested. Owned by the stream. */
int dvpp_stream_eventfd(const dvpp_stream *s);

/* The device @s was made on (NULL for NULL). */
dvpp_device *dvpp_stream_device(const dvpp_stream *s);

/* Wait for every task submitted so far, then free. NULL is a no-op. */
void dvpp_stream_free(dvpp_stream *s);

/* Admit @job on @s, or refuse at once: DVPP_EAGAIN (queue full or budget in
 * use; retry after completions), DVPP_ELIMIT (larger than the whole budget),
 * DVPP_EUNSUPPORTED (engine disabled), DVPP_EINVAL. Never blocks. @ticket
 * (may be NULL) receives an id for dvpp_job_cancel(). */
dvpp_status dvpp_device_submit(dvpp_stream *s, const dvpp_job *job,
                               uint64_t *ticket, dvpp_err *err);

/* Hold @bytes of the byte budget for memory that outlives the job that
 * filled it: a front end's result buffer from its allocation until it is
 * freed (sent, fetched, forgotten), so that admission counts it. Checked
 * as a job's bytes are: DVPP_EAGAIN (field "bytes") when the budget in
 * use leaves no room, DVPP_ELIMIT ("too_large") when @bytes is above the
 * whole budget, both counted as rejections. With @force the bytes are
 * held past the budget (memory that exists already, e.g. a finished
 * video's answer): later admissions see it. Without a byte budget always
 * DVPP_OK. Release every hold with dvpp_device_release_bytes before the
 * device is freed. Any thread; never blocks. */
dvpp_status dvpp_device_hold_bytes(dvpp_device *d, uint64_t bytes, bool force,
                                   dvpp_err *err);
void dvpp_device_release_bytes(dvpp_device *d, uint64_t bytes);

/* Wait until every task submitted on @s before this call has completed and
 * its callback returned. Returns the first error among the tasks completed
 * since the previous synchronize (detail into @err), and clears it. */
dvpp_status dvpp_stream_synchronize(dvpp_stream *s, dvpp_err *err);

/* Cancel a job: not yet started -> it completes with DVPP_ECANCELED without
 * running (when it reaches a worker); running -> best effort, the function
 * sees dvpp_task_canceled() true. DVPP_ENOTFOUND when the job has already
 * completed. */
dvpp_status dvpp_job_cancel(dvpp_device *d, uint64_t ticket);

/* --- helpers for task functions ------------------------------------------ */

/* True once the job (or its batch) was canceled or the device is stopping. */
bool dvpp_task_canceled(const dvpp_task *t);
/* The deadline (dvpp_now_ns() clock), 0 = none. */
uint64_t dvpp_task_deadline(const dvpp_task *t);
/* True when a deadline is set and has passed. */
bool dvpp_task_expired(const dvpp_task *t);
/* Item index within a batch; 0 for a plain job. */
size_t dvpp_task_index(const dvpp_task *t);
/* The engine and channel running the task. */
dvpp_engine dvpp_task_engine(const dvpp_task *t);
unsigned dvpp_task_channel(const dvpp_task *t);
/* The channels of the task's engine other than its own that have nothing
 * to run now (taking work, minus those running or queued): how many cores
 * a long task may use beside its own without taking them from other work.
 * A snapshot (the device lock, briefly). */
unsigned dvpp_task_idle_channels(const dvpp_task *t);

/* --- batch jobs ----------------------------------------------------------- */

typedef void (*dvpp_batch_done_fn)(void *ctx, dvpp_batch *b, dvpp_status status);

typedef struct dvpp_batch_desc {
    dvpp_engine engine;
    size_t n;                  /* items, >= 1 */
    dvpp_task_fn fn;           /* called once per item; dvpp_task_index() */
    void *ctx;                 /* borrowed until the batch finishes */
    bool strict;               /* first failing item fails the batch */
    uint64_t pixels_per_item;  /* admission: per item x items in flight */
    uint64_t bytes_per_item;
    uint64_t deadline_ns;      /* per item, checked before it runs; 0 = none */
    dvpp_batch_done_fn done;   /* optional, once, on a worker or the
                                  canceling thread, when all items are done */
} dvpp_batch_desc;

typedef struct dvpp_batch_progress {
    size_t done;     /* items completed with DVPP_OK */
    size_t failed;   /* items completed with an error (incl. canceled) */
    size_t total;
    bool finished;   /* done + failed == total and the callback returned */
    size_t first_failed; /* index of the first failing item, or total */
} dvpp_batch_progress;

/* Start a batch job. Admission holds (pixels, bytes) per item times
 * min(n, channels) until it finishes: DVPP_EAGAIN when over budget or too
 * many batches are open, DVPP_ELIMIT when it could never fit, DVPP_ENOMEM,
 * DVPP_EINVAL, DVPP_EUNSUPPORTED. The batch is owned by the caller. */
dvpp_status dvpp_batch_new(dvpp_device *d, const dvpp_batch_desc *desc,
                           dvpp_batch **out, dvpp_err *err);

/* Device-unique id (never 0) for front ends to name the batch. */
uint64_t dvpp_batch_id(const dvpp_batch *b);

void dvpp_batch_get_progress(dvpp_batch *b, dvpp_batch_progress *p);

/* Status of item @i: DVPP_EBUSY while not completed, DVPP_EINVAL if out of
 * range. */
dvpp_status dvpp_batch_item_status(dvpp_batch *b, size_t i);

/* Items not started complete with DVPP_ECANCELED; running items see
 * dvpp_task_canceled(). DVPP_OK, or DVPP_ENOTFOUND when already finished. */
dvpp_status dvpp_batch_cancel(dvpp_batch *b);

/* Wait until finished. Strict: the first failing item's status (detail into
 * @err). Default: DVPP_OK (per-item status tells failures) unless canceled
 * (DVPP_ECANCELED). */
dvpp_status dvpp_batch_wait(dvpp_batch *b, dvpp_err *err);

/* Cancel if still running, wait, free. NULL is a no-op. */
void dvpp_batch_free(dvpp_batch *b);

/* --- counters ---------------------------------------------------------------- */

typedef struct dvpp_engine_counters {
    uint64_t queued;   /* gauge: admitted, not yet started (incl. behind
                          stream order) */
    uint64_t running;  /* gauge: functions running now */
    uint64_t done;     /* total completed OK (jobs and batch items) */
    uint64_t failed;   /* total completed with an error (incl. below) */
    uint64_t canceled; /* of failed: DVPP_ECANCELED */
    uint64_t timedout; /* of failed: DVPP_ETIMEDOUT before running */
    uint64_t wait_ns;  /* summed time from admission to start */
    uint64_t run_ns;   /* summed time in task functions */
    uint64_t pixels;   /* pixels of tasks completed OK */
    uint64_t bytes;
} dvpp_engine_counters;

typedef struct dvpp_device_counters {
    dvpp_engine_counters engine[DVPP_ENGINE_COUNT];
    uint64_t rejected[DVPP_REJECT_COUNT];
    uint64_t inflight_pixels;
    uint64_t inflight_bytes;  /* admitted jobs and batches, and held bytes */
    uint64_t held_bytes;      /* of inflight_bytes: dvpp_device_hold_bytes */
    uint64_t batches_open;
    /* Completions plus tasks checking in (dvpp_task_canceled, which long
     * tasks poll between frames or strips): moves while workers make
     * progress, stands still when they hang. */
    uint64_t progress;
    uint64_t idle_trims;      /* idle hooks run (workers trimmed) */
    uint64_t idle_trimmed_bytes; /* what they released */
} dvpp_device_counters;

/* Change the channels of @engine while the device runs (a reload): more
 * workers are made as needed, workers above @n are parked once their
 * current task ends (their threads and states are kept for a later grow
 * and freed with the device). Work queued or running is not disturbed.
 * DVPP_EINVAL for n outside [1, DVPP_DEVICE_MAX_CHANNELS],
 * DVPP_EUNSUPPORTED for an engine made with 0 channels, DVPP_ENOMEM /
 * DVPP_ESYS when a worker cannot be made (the count then stays as it was).
 * Not to be called concurrently with itself or dvpp_device_free. */
dvpp_status dvpp_device_set_channels(dvpp_device *d, dvpp_engine engine, unsigned n,
                                     dvpp_err *err);

/* A stop past its drain time: refuse new work and cancel everything
 * admitted (completions still run, with DVPP_ECANCELED), without waiting.
 * The device stays usable only for freeing. */
void dvpp_device_cancel_all(dvpp_device *d);

/* The channels of @engine taking work now. */
unsigned dvpp_device_channels(dvpp_device *d, dvpp_engine engine);

/* A consistent snapshot. */
void dvpp_device_get_counters(dvpp_device *d, dvpp_device_counters *out);

#endif
