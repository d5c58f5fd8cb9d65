/* acl_int.h: the private bridge between the two halves of the AscendCL layer.
 *
 *   libascendcl.so  (acl_rt_*.c)   aclInit/aclFinalize, devices, contexts,
 *                   streams over the libdvpp device model, memory, reports
 *                   and callbacks, data buffers, the recent error message,
 *                   and the process state all of it shares.
 *   libacl_dvpp.so  (acl_dvpp_*.c, acl_vdec.c, acl_venc.c)   the acldvpp*,
 *                   aclvdec* and aclvenc* functions; links libascendcl.so
 *                   and reaches the runtime only through the functions
 *                   below.
 *
 * Each library links the libdvpp objects it needs (compiled -fPIC,
 * -fvisibility=hidden) as a private copy: no dvpp_* symbol is exported and
 * no libdvpp object crosses the boundary (a VPC context made by libacl_dvpp
 * is only used by libacl_dvpp). The acli_* functions are exported from
 * libascendcl.so with default visibility; they are not API (docs/acl.md).
 *
 * The process state (aclInit's settings, the devices, the handle and
 * memory registries, the report queues) is the one mutable global of the
 * layer: the AscendCL API is process-wide by definition. It is guarded by
 * its own mutexes; every acli_* function may be called from any thread.
 */
#ifndef ACL_INT_H
#define ACL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "acl/acl.h"

#define ACLI_EXPORT __attribute__((visibility("default")))

/* --- the recent error message ---------------------------------------------
 * aclGetRecentErrMsg returns the calling thread's last message (NULL when
 * there is none); a message stays until the thread's next failure replaces
 * it. Messages are one sentence, DVPP's own texts where libdvpp produced
 * them ("ascend310: VPC output format must be NV12 or NV21"). */

/* Set the calling thread's message and return @code (non-zero), so a
 * failing path reads `return acli_fail(ACL_ERROR_INVALID_PARAM, "...")`. */
ACLI_EXPORT aclError acli_fail(aclError code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The aclError a DVPP program sees for a libdvpp status (dvpp_status
 * values: DVPP_EINVAL -> ACL_ERROR_INVALID_PARAM, DVPP_EFORMAT ->
 * ACL_ERROR_FORMAT_NOT_MATCH, DVPP_ESTRIDE/ELIMIT/ENOSPC/EPROFILE ->
 * ACL_ERROR_INVALID_PARAM, DVPP_EUNSUPPORTED -> ACL_ERROR_FEATURE_UNSUPPORTED,
 * DVPP_ECORRUPT/ECODEC -> ACL_ERROR_FAILURE, DVPP_ENOMEM ->
 * ACL_ERROR_BAD_ALLOC, DVPP_ETIMEDOUT -> ACL_ERROR_RT_AICPU_TIMEOUT,
 * anything else -> ACL_ERROR_INTERNAL_ERROR; 0 -> ACL_SUCCESS), with
 * @msg (libdvpp's dvpp_err.msg, may be NULL) as the thread's message.
 * Callers with a more precise code for one call map it themselves. */
ACLI_EXPORT aclError acli_from_dvpp(int dvpp_status, const char *msg);

/* --- settings ---------------------------------------------------------------
 * Chosen by aclInit's JSON ("dvpp" section, docs/acl.md) or, before aclInit
 * and for keys the JSON leaves out, by the environment: DVPP_ACL_PROFILE
 * (ascend310 | ascend310p; default ascend310), DVPP_ACL_DEVICES (default 1),
 * DVPP_ACL_CHANNELS. */

/* The dvpp_profile value (core/dvpp_profile.h) every call follows:
 * DVPP_PROFILE_ASCEND310 or DVPP_PROFILE_ASCEND310P. */
ACLI_EXPORT int acli_profile(void);

/* True between a successful aclInit and aclFinalize. */
ACLI_EXPORT bool acli_initialized(void);

/* Process-wide ids counting up from 1 (DVPP channel ids, VENC channel ids). */
ACLI_EXPORT uint64_t acli_next_id(void);

/* --- handles -----------------------------------------------------------------
 * Every descriptor and config the layer hands out is registered with its
 * kind, so a call given a destroyed or foreign pointer answers
 * ACL_ERROR_INVALID_PARAM instead of reading freed memory. */
typedef enum acli_kind {
    ACLI_PIC_DESC = 1,
    ACLI_BATCH_PIC_DESC,
    ACLI_ROI_CONFIG,
    ACLI_RESIZE_CONFIG,
    ACLI_JPEGE_CONFIG,
    ACLI_BORDER_CONFIG,
    ACLI_LUT_MAP,
    ACLI_HIST,
    ACLI_STREAM_DESC,
    ACLI_CHANNEL_DESC,
    ACLI_VDEC_CHANNEL_DESC,
    ACLI_VDEC_FRAME_CONFIG,
    ACLI_VENC_CHANNEL_DESC,
    ACLI_VENC_FRAME_CONFIG,
    ACLI_DATA_BUFFER,
    ACLI_KIND_COUNT
} acli_kind;

/* Register @p (just allocated) as a live handle of @kind. False when the
 * registry cannot grow (the caller frees @p and fails with BAD_ALLOC). */
ACLI_EXPORT bool acli_handle_add(const void *p, acli_kind kind);
/* True when @p is a live handle of @kind (NULL: false). */
ACLI_EXPORT bool acli_handle_ok(const void *p, acli_kind kind);
/* Forget @p; false when it was not a live handle of @kind (nothing done:
 * the caller must not free it). */
ACLI_EXPORT bool acli_handle_remove(const void *p, acli_kind kind);

/* --- memory -------------------------------------------------------------------
 * "Device" memory is ordinary host memory of this process (programs read
 * and fwrite acldvppMalloc pointers directly). Every block is registered,
 * so the layer knows how many bytes really follow a pointer. */
typedef enum acli_mem_kind {
    ACLI_MEM_DEVICE = 1, /* aclrtMalloc */
    ACLI_MEM_HOST,       /* aclrtMallocHost */
    ACLI_MEM_DVPP,       /* acldvppMalloc: (size + 63) / 32 * 32 bytes,
                            128-byte aligned start */
} acli_mem_kind;

/* Allocate and register; the bytes are zeroed (first touch now, not in a
 * codec). ACL_ERROR_INVALID_PARAM for a NULL @p or size 0,
 * ACL_ERROR_BAD_ALLOC when memory runs out. */
ACLI_EXPORT aclError acli_mem_alloc(void **p, size_t size, acli_mem_kind kind);
/* Free a block made by acli_mem_alloc with the same kind:
 * ACL_ERROR_INVALID_PARAM for NULL, for a pointer that is not the start of
 * a live block, or for a block of another kind (nothing freed). */
ACLI_EXPORT aclError acli_mem_free(void *p, acli_mem_kind kind);
/* Bytes from @p to the end of the registered block holding it (any kind);
 * 0 when @p lies in no block (a program's own malloc: then the layer
 * trusts the sizes the program declared). */
ACLI_EXPORT size_t acli_mem_avail(const void *p);
/* The DVPP pool (docs/acl.md, "Memory"): between aclInit and aclFinalize,
 * acli_mem_free(ACLI_MEM_DVPP) keeps the block mapped and reserved (no
 * longer live: acli_mem_avail answers 0, a second free is refused) while
 * the pool holds at most its cap (DVPP_ACL_POOL_BYTES, "dvpp.pool_bytes";
 * default 256 MiB, 0: no pool), the least recently freed blocks going back
 * to the heap first; acli_mem_alloc(ACLI_MEM_DVPP) takes the oldest pooled
 * block of the same rounded size, zeroed again. How many blocks and bytes
 * it holds now (tests, diagnostics). */
ACLI_EXPORT void acli_mem_pool_stat(size_t *blocks, size_t *bytes);

/* --- streams and tasks ----------------------------------------------------------
 * An aclrtStream is an in-order queue on its context's device (one libdvpp
 * dvpp_device per ACL device). An *Async call checks its arguments
 * synchronously, snapshots what it needs into a task context and submits;
 * the task runs on a worker of its engine after every earlier task of the
 * stream, and writes its results (pixels, descriptors written back) when it
 * runs. aclrtSynchronizeStream waits for the tasks and returns the first
 * failing task's aclError (its message becomes the syncing thread's). */
typedef struct acli_stream acli_stream;
typedef struct acli_task acli_task;

/* Resolve a program's stream: NULL is the calling thread's current
 * context's default stream. ACL_ERROR_RT_CONTEXT_NULL without a current
 * context, ACL_ERROR_INVALID_PARAM for a destroyed or unknown handle. */
ACLI_EXPORT aclError acli_stream_get(aclrtStream stream, acli_stream **out);

/* A private stream on the calling thread's current context's device (VDEC
 * and VENC channels run their frames on one), not visible to the program;
 * freed with acli_stream_destroy (waits for its tasks first). */
ACLI_EXPORT aclError acli_stream_create(acli_stream **out);
ACLI_EXPORT void acli_stream_destroy(acli_stream *s);
/* Wait for every task submitted so far; the first failing task's code since
 * the last sync (its message becomes the caller's), else ACL_SUCCESS. */
ACLI_EXPORT aclError acli_stream_sync(acli_stream *s);

/* The work of one task, on a device worker. Returns ACL_SUCCESS or the
 * task's error, whose message it set with acli_fail/acli_from_dvpp (on
 * the worker thread: the runtime moves it to the stream). */
typedef aclError (*acli_run_fn)(void *ctx, acli_task *t);
/* Runs exactly once per submitted task, after @run or instead of it (the
 * stream or device went away first: @status is ACL_ERROR_RT_... canceled),
 * on a worker or the destroying thread: frees @ctx. */
typedef void (*acli_fini_fn)(void *ctx, aclError status);

/* Queue a task on @s for engine @engine (dvpp_engine values of
 * device/dvpp_device.h). Blocks while the engine's queue is full (as the
 * chip's task queue applies back-pressure); never fails for a full queue.
 * On failure (device gone, bad arguments) @fini is NOT called: the caller
 * still owns @ctx. */
ACLI_EXPORT aclError acli_submit(acli_stream *s, int engine, acli_run_fn run,
                                 acli_fini_fn fini, void *ctx);

/* The per-stream work state of libacl_dvpp (a VPC context, scratch
 * memory): made by @make on the stream's first use, freed by @free_fn when
 * the stream is destroyed. Tasks of one stream never run concurrently, so
 * a task uses it without locks. NULL when @make fails. */
ACLI_EXPORT void *acli_task_state(acli_task *t, void *(*make)(void),
                                  void (*free_fn)(void *state));

/* True once the task's stream or device is being torn down: long tasks
 * (a video) poll it between frames and return early. */
ACLI_EXPORT bool acli_task_canceled(const acli_task *t);

/* --- threads and time ---------------------------------------------------------
 * What both libraries' waits need (the runtime's queues, VDEC/VENC's
 * callback counts and VENC's output area), kept in one place so that every
 * condition variable of the layer runs on the same clock. */

/* Initialise @cv on CLOCK_MONOTONIC (pthread_cond_init's result). */
ACLI_EXPORT int acli_cond_init(pthread_cond_t *cv);
/* The CLOCK_MONOTONIC deadline @ms from now, for pthread_cond_timedwait on
 * a condition variable made by acli_cond_init. */
ACLI_EXPORT void acli_deadline_ms(struct timespec *ts, int64_t ms);
/* The calling thread's id as programs pass it ((uint64_t)pthread_self()). */
ACLI_EXPORT uint64_t acli_thread_self(void);

/* --- reports: callbacks run on a program's thread ------------------------------
 * A thread (its pthread_t as uint64_t) subscribed for a key (a stream, or a
 * VDEC/VENC channel, which subscribes its ThreadId itself) receives posts;
 * they run, in post order, inside that thread's aclrtProcessReport. */
ACLI_EXPORT aclError acli_report_subscribe(uint64_t thread_id, const void *key);
ACLI_EXPORT aclError acli_report_unsubscribe(uint64_t thread_id, const void *key);
/* Queue fn(arg) for @thread_id; never blocks. ACL_ERROR_RT_THREAD_SUBSCRIBE
 * when that thread has no subscription, ACL_ERROR_BAD_ALLOC. */
ACLI_EXPORT aclError acli_report_post(uint64_t thread_id, void (*fn)(void *arg), void *arg);

#endif
