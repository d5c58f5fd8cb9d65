/* http_jobs: the registry of batch jobs started over HTTP (/v1/jobs).
 *
 * A job owns its inputs (the request's body, moved in, which the inputs
 * point into), its pipeline and its result tensor (buffers whose release
 * the front end supplies), and runs as one dvpp_batchjob. Jobs are counted
 * references: the registry holds one while the job is listed; every lookup
 * takes one that the caller drops with http_job_unref. The last reference
 * frees the batch job (waiting for items still running) and releases the
 * buffers (a response still sending the result holds a reference of its
 * own to the result buffer, not to the job, so a DELETE or the ttl may
 * drop the job meanwhile).
 *
 * Finished jobs are forgotten @ttl_s after they finished (http_jobs_gc,
 * called on every jobs request); at most @max jobs are listed at once.
 *
 * Thread-safety: every function may be called from any thread; the
 * registry has one mutex (its list and count; nothing else is called under
 * it). A job's fields are set before it is listed and only read after,
 * but for its references and its finish time (atomics; the finish time is
 * stored by the batch's completion on a device worker).
 */
#ifndef HTTP_JOBS_H
#define HTTP_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/dvpp_batchjob.h"
#include "dvpp_mem.h"

typedef struct http_job http_job;
typedef struct http_jobs http_jobs;

/* Releases a result buffer (the front end's allocator). */
typedef void (*http_buf_release)(void *ctx, void *buf);

typedef struct http_job_desc {
    dvpp_device *device;
    const dvpp_pipeline *pipe;     /* copied */
    const dvpp_batchjob_input *inputs; /* @n inputs (the array copied), pointing
                                          into @body */
    size_t n;
    void *body;                    /* the bytes @inputs point into: owned from
                                      now on, released with @release */
    uint64_t body_held;            /* bytes of @device's budget the caller
                                      holds for @body (dvpp_device_hold_bytes):
                                      owned from now on, released with it */
    bool strict;
    uint64_t deadline_ns;          /* per item, before it runs; 0 = none */
    /* The result: @result (owned from now on, released with @release) holds
     * @header_len bytes of .npy header then the tensor @t (t.data inside
     * @result). */
    void *result;
    size_t result_len, header_len;
    dvpp_tensor tensor;
    http_buf_release release;
    void *release_ctx;
    bool output_held;              /* @result holds its bytes of the device's
                                      budget until released: the batch is
                                      not charged them again */
} http_job_desc;

dvpp_status http_jobs_new(unsigned max, unsigned ttl_s, http_jobs **out, dvpp_err *err);
/* Cancel and release every job (references still held elsewhere keep
 * theirs alive until dropped). */
void http_jobs_free(http_jobs *js);

/* Start a job and list it. DVPP_EAGAIN ("batches") when @max jobs are
 * listed, the errors of dvpp_batchjob_start_opts. On failure the body
 * (with its hold) and the result buffer are still released (ownership was
 * passed). On
 * success *id is the job's id. */
dvpp_status http_jobs_start(http_jobs *js, http_job_desc *d, uint64_t *id,
                             dvpp_err *err);

/* A reference to job @id, or NULL. */
http_job *http_jobs_get(http_jobs *js, uint64_t id);
void http_job_unref(http_job *j);

/* Unlist job @id (cancel it when running). DVPP_ENOTFOUND. */
dvpp_status http_jobs_delete(http_jobs *js, uint64_t id);

/* Forget finished jobs older than the ttl. */
void http_jobs_gc(http_jobs *js);
/* The same with the clock read at @now_ns (dvpp_now_ns's clock): a job that
 * finished after @now_ns is kept (the clock was read before it finished). */
void http_jobs_gc_at(http_jobs *js, uint64_t now_ns);

typedef enum http_job_state {
    HTTP_JOB_RUNNING,
    HTTP_JOB_DONE,     /* every item finished (some may have failed) */
    HTTP_JOB_FAILED,   /* strict: stopped by a failure */
    HTTP_JOB_CANCELED,
} http_job_state;

const char *http_job_state_name(http_job_state s);

/* State, progress and (once finished) the job's status with its detail. */
http_job_state http_job_state_get(http_job *j, dvpp_batch_progress *p,
                                    dvpp_status *status, dvpp_err *err);

uint64_t http_job_id(const http_job *j);
dvpp_batchjob *http_job_batch(http_job *j);

/* The result bytes (.npy header + tensor) and the tensor; valid while the
 * reference is held; meaningful once the state is DONE. */
const void *http_job_result(const http_job *j, size_t *len, size_t *header_len,
                             dvpp_tensor *t);

#endif
