/* dvpp_batchjob: batch jobs of one dvpp_pipeline on the device model.
 *
 * N encoded (or raw) inputs -> one contiguous N x C x H x W tensor. Items run
 * in parallel across the channels of one engine (DVPP_BATCHJOB_ENGINE, the
 * VPC engine: a pipeline is decode + VPC ops + normalise/AIPP, and the VPC
 * stage dominates), each with its channel's dvpp_worker, written straight
 * into slice i of the caller's tensor (dvpp_pipeline_run with out.n = i), so
 * the order of the inputs is the order of the slices whatever the channel
 * count, and results are byte-identical for 1 or N channels.
 *
 * Failures:
 *   default mode: a failing item's slice is filled with zeros, its status
 *   and error message are kept (dvpp_batchjob_item_status) and the other
 *   items run; dvpp_batchjob_wait() returns DVPP_OK (DVPP_ECANCELED when the
 *   job was canceled).
 *   strict mode: the first failing item cancels the items not yet started
 *   (they complete DVPP_ECANCELED without running; items already running on
 *   other channels see the cancel flag before they start their pipeline, or
 *   complete); dvpp_batchjob_wait() returns that failure with its message.
 * In both modes, once dvpp_batchjob_wait() has returned, the slice of every
 * item that did not complete DVPP_OK (failed or canceled) is all zeros.
 *
 * Devices: dvpp_pipe_device_new() makes a dvpp_device whose VPC engine uses
 * a backend whose per-worker state is a dvpp_worker (created by the
 * backend's init hook on the thread calling dvpp_pipe_device_new, once per
 * channel, destroyed by its fini hook in dvpp_pipe_device_free). Worker
 * buffers (decode, intermediate images, JPEG strips) are grown on demand
 * and kept, so a steady batch of one geometry allocates nothing per item.
 *
 * Per-item pipelines (dvpp_batchjob_opts.item_pipes): every item may run
 * its own pipeline (a training batch's random crops and flips) into the
 * same tensor, as long as each makes the batch's slice shape.
 *
 * Ownership: the pipeline is copied by dvpp_batchjob_start(); the inputs
 * array and the bytes it points at, and the tensor's data, are borrowed
 * and must stay valid (and, for the tensor, not be read expecting final
 * values) until dvpp_batchjob_wait() returns or dvpp_batchjob_free() is
 * called. The tensor descriptor itself is copied. The job is owned by the
 * caller (dvpp_batchjob_free), and must be freed before its device.
 *
 * Thread-safety: progress, item_status, cancel and wait may be called from
 * any thread, concurrently; dvpp_batchjob_free must not race with any
 * other call on that job. None of these may be called from a task function
 * or a device callback (see dvpp_device.h). Allocation happens only on the
 * calling thread of dvpp_pipe_device_new / dvpp_batchjob_start (and in the
 * workers' buffers, grown on demand by dvpp_pipeline_run).
 */
#ifndef DVPP_BATCHJOB_H
#define DVPP_BATCHJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_device.h"
#include "dvpp_pipeline.h"

/* The engine batch jobs (and the pipeline backend) run on. */
#define DVPP_BATCHJOB_ENGINE DVPP_ENGINE_VPC

/* --- devices ---------------------------------------------------------------- */

/* A device for pipelines: @cfg (NULL: dvpp_device_config_default) with the
 * VPC engine's backend replaced by the pipeline backend (one dvpp_worker
 * per channel, made with @lim, NULL: defaults; @lim is copied) and, when
 * @channels is not 0, @channels VPC channels. Other engines keep @cfg's
 * backends. Errors: those of dvpp_device_new (DVPP_EINVAL for 0 VPC
 * channels, DVPP_ENOMEM, DVPP_ESYS); on failure *out is NULL and nothing
 * leaks. Free with dvpp_pipe_device_free (not dvpp_device_free). */
dvpp_status dvpp_pipe_device_new(const dvpp_device_config *cfg, uint32_t channels,
                                 const dvpp_limits *lim, dvpp_device **out,
                                 dvpp_err *err);

/* Free a device from dvpp_pipe_device_new (as dvpp_device_free, then the
 * backend's context). A device from dvpp_device_new is just freed. NULL is
 * a no-op. */
void dvpp_pipe_device_free(dvpp_device *d);

/* Replace the limits @d's workers run with (a reload): runs that start
 * from now on use @lim (copied); runs under way finish with the old ones.
 * DVPP_EINVAL when @d is not a pipeline device. */
dvpp_status dvpp_pipe_device_set_limits(dvpp_device *d, const dvpp_limits *lim,
                                        dvpp_err *err);

/* True when @d comes from dvpp_pipe_device_new and is not yet freed. */
bool dvpp_pipe_device_is(const dvpp_device *d);

/* --- batch jobs ----------------------------------------------------------- */

typedef struct dvpp_batchjob dvpp_batchjob;

/* One input: encoded bytes (or raw pixels for DVPP_PIPE_IN_RAW), borrowed. */
typedef struct dvpp_batchjob_input {
    const uint8_t *data;
    size_t len;
} dvpp_batchjob_input;

/* The N x C x H x W tensor (contiguous; data NULL) of a batch of @n images
 * of @p, when @p's output size does not depend on the input: tensor output
 * whose size is fixed by raw input, a crop, or a STRETCH / FILL / LETTERBOX
 * resize (borders and conversions after them keep it fixed), or an AIPP op
 * with a fixed source or crop size. DVPP_EINVAL otherwise, naming why
 * (field "ops[i].resize.mode" for a FIT/SHORTER/LONGER resize that is not
 * followed by a fixing op, "ops" when no op fixes the size, "output" for
 * image output, "n" for n = 0), and the errors of dvpp_pipeline_validate. */
dvpp_status dvpp_batchjob_tensor(const dvpp_pipeline *p, uint32_t n, dvpp_tensor *t,
                                 dvpp_err *err);

/* Start a batch job of @p on @inputs[0..n-1] into @t (the descriptor of
 * dvpp_batchjob_tensor(p, n) with caller-allocated data, at least t->bytes).
 * Items are admitted as one dvpp_batch on DVPP_BATCHJOB_ENGINE (pixels per
 * item: C x H x W of one slice; bytes per item: the slice's bytes plus the
 * largest work_bytes of the items' plans, the intermediates a running item
 * holds on its worker).
 * Errors: DVPP_EINVAL ("device" when @d is not a pipe device, "inputs",
 * "tensor" when @t does not match, "n"), those of dvpp_batchjob_tensor,
 * those of dvpp_batch_new (DVPP_EAGAIN admission, DVPP_ELIMIT, DVPP_ENOMEM).
 * On failure *out is NULL and nothing leaks. */
dvpp_status dvpp_batchjob_start(dvpp_device *d, const dvpp_pipeline *p,
                                const dvpp_batchjob_input *inputs, size_t n,
                                const dvpp_tensor *t, bool strict,
                                dvpp_batchjob **out, dvpp_err *err);

/* Options of dvpp_batchjob_start_opts. */
typedef struct dvpp_batchjob_opts {
    bool strict;
    uint64_t deadline_ns;     /* per item, checked before it runs (items
                                 not started by then complete
                                 DVPP_ETIMEDOUT); 0 = none */
    void (*done)(void *ctx);  /* optional: once, when every item has
                                 completed, on a worker thread or the
                                 thread canceling the job; it may only
                                 signal (e.g. resume a connection): no
                                 dvpp_batchjob_* call on this job */
    void *ctx;                /* borrowed until @done returned */
    bool output_held;         /* the caller holds the tensor's bytes of the
                                 byte budget (dvpp_device_hold_bytes) from
                                 before the start until it frees them:
                                 items are charged only their workers'
                                 intermediates */
    /* Optional: one pipeline per item (n of them; item i runs
     * item_pipes[i] instead of @p, e.g. its own random crop and flip),
     * borrowed until dvpp_batchjob_wait returned or the job is freed.
     * Each must make @p's tensor (dvpp_batchjob_tensor of it equal to
     * @p's: shape, dtype, layout); otherwise the start is refused before
     * anything runs, DVPP_EINVAL field "item_pipes[i]" (or its own
     * validation error). NULL: every item runs @p, with no allocation
     * beyond the job's. */
    const dvpp_pipeline *item_pipes;
} dvpp_batchjob_opts;

/* dvpp_batchjob_start with options: a deadline and a completion notice
 * (front ends that must not block a thread on dvpp_batchjob_wait). Same
 * errors; @o must not be NULL. */
dvpp_status dvpp_batchjob_start_opts(dvpp_device *d, const dvpp_pipeline *p,
                                     const dvpp_batchjob_input *inputs, size_t n,
                                     const dvpp_tensor *t, const dvpp_batchjob_opts *o,
                                     dvpp_batchjob **out, dvpp_err *err);

/* The "N images" form: @p has unencoded image output; item i writes
 * @images[i] (caller's data/size, at least the plan's out_bytes for that
 * input; the run fills its geometry). Failed items' buffers are zeroed in
 * default mode, as tensor slices are. Admission counts every item as the
 * largest buffer. Errors as dvpp_batchjob_start ("output" when @p does not
 * produce unencoded images, "images" for a buffer without data). */
dvpp_status dvpp_batchjob_start_images(dvpp_device *d, const dvpp_pipeline *p,
                                       const dvpp_batchjob_input *inputs, size_t n,
                                       dvpp_image *images, bool strict,
                                       dvpp_batchjob **out, dvpp_err *err);

/* Device-unique id (never 0), that of the underlying dvpp_batch. */
uint64_t dvpp_batchjob_id(const dvpp_batchjob *j);

/* done (OK) / failed (incl. canceled) / total, finished, first_failed. */
void dvpp_batchjob_progress(dvpp_batchjob *j, dvpp_batch_progress *p);

/* Status of item @i: DVPP_OK, DVPP_EBUSY while not completed, DVPP_EINVAL
 * out of range, else its failure with the message into @err (may be NULL;
 * canceled items that never ran say so). */
dvpp_status dvpp_batchjob_item_status(dvpp_batchjob *j, size_t i, dvpp_err *err);

/* The index of the first item that failed on its own (not canceled): in
 * strict mode the item that stopped the job. SIZE_MAX when none did (yet). */
size_t dvpp_batchjob_cause(dvpp_batchjob *j);

/* Items not started complete DVPP_ECANCELED; running ones finish or see the
 * flag. DVPP_OK, or DVPP_ENOTFOUND when the job had already finished. */
dvpp_status dvpp_batchjob_cancel(dvpp_batchjob *j);

/* Wait for every item, zero the slices of items that did not complete OK,
 * and return the job's status: strict, the failure that stopped it; default,
 * DVPP_OK unless canceled (DVPP_ECANCELED). Detail into @err. May be called
 * again (same answer). */
dvpp_status dvpp_batchjob_wait(dvpp_batchjob *j, dvpp_err *err);

/* Cancel if still running, wait, free (the tensor's data stays the
 * caller's). NULL is a no-op. */
void dvpp_batchjob_free(dvpp_batchjob *j);

/* --- single jobs ------------------------------------------------------------------ */

/* One pipeline on one input as one device job on DVPP_BATCHJOB_ENGINE, run
 * by that channel's dvpp_worker (dvpp_pipeline_run into @out). The record
 * is the caller's and must stay valid, with everything it points to, until
 * @done has returned; @out (destination set as dvpp_pipeline_run wants,
 * e.g. a tensor sized from dvpp_pipeline_probe + dvpp_pipeline_plan_make)
 * is filled by the run. */
typedef struct dvpp_pipejob {
    const dvpp_pipeline *pipe;
    const uint8_t *input;
    size_t len;
    dvpp_pipeline_out *out;
    /* Admission cost while in flight: @pixels, and @bytes of the
     * caller's own buffers (its input copy, the result); the device adds
     * the bytes the run's intermediates take on the worker
     * (dvpp_pipeline_plan.work_bytes, from a header probe). */
    uint64_t pixels, bytes;
    uint64_t deadline_ns;     /* not started by then: DVPP_ETIMEDOUT; 0 none */
    /* On a worker thread, exactly once per admitted job; @err valid only
     * during the call. */
    void (*done)(void *ctx, dvpp_status status, const dvpp_err *err);
    void *ctx;
    uint64_t started_ns;      /* set by the run: when a worker took it (0
                                 when it never ran) */
} dvpp_pipejob;

/* Admit @pj on stream @s (of a device from dvpp_pipe_device_new) or refuse
 * at once with the errors of dvpp_device_submit (DVPP_EAGAIN with the
 * reason's name in err->field: "queue", "pixels", "bytes"; DVPP_ELIMIT;
 * DVPP_EUNSUPPORTED), DVPP_EINVAL for an incomplete record. Never blocks. A
 * stream not of a pipe device fails the job (DVPP_EINVAL "device"). */
dvpp_status dvpp_pipejob_submit(dvpp_stream *s, dvpp_pipejob *pj, uint64_t *ticket,
                                dvpp_err *err);

#endif
