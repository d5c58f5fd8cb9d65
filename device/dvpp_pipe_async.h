/* dvpp_pipe_async: one pipeline run at a time on a helper thread, so that
 * a job that makes its inputs one by one (a video's decoded frames) runs
 * frame t's pipeline while it makes frame t + 1.
 *
 * The caller hands a run over (dvpp_pipe_async_give) and, before it hands
 * the next or touches what the run reads or writes, collects it
 * (dvpp_pipe_async_collect): runs complete in the order given, each into
 * the output the caller gave it, so results are those of running them
 * inline, byte for byte.
 *
 * A run uses the aux buffers of the worker it is given with
 * (dvpp_worker_aux: the worker of the channel the caller holds then),
 * grown on demand and kept with that worker (trimmed when it idles), so a
 * steady stream of one geometry allocates nothing per run. The thread is
 * started by dvpp_pipe_async_start and joined by dvpp_pipe_async_stop.
 *
 * Ownership: the pipeline is copied at give; the input bytes and the
 * output's data are borrowed until the run is collected. The handle is
 * the caller's (stop frees it).
 * Thread-safety: give, collect and stop from one thread (the owner's).
 */
#ifndef DVPP_PIPE_ASYNC_H
#define DVPP_PIPE_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_pipeline.h"

typedef struct dvpp_pipe_async dvpp_pipe_async;

/* Prefix @err's message (may be NULL) with "frame FRAME: ", keeping its
 * field; returns @st. Every error about one frame of a stream says so, the
 * same whichever way the frame ran. */
dvpp_status dvpp_err_frame(dvpp_err *err, dvpp_status st, uint64_t frame);

/* dvpp_pipeline_run for frame @frame of a stream, inline: a failure is
 * named as the runs a helper makes are (dvpp_err_frame). */
dvpp_status dvpp_pipeline_run_frame(dvpp_worker *w, const dvpp_pipeline *p, const uint8_t *in,
                                    size_t len, dvpp_pipeline_out *po, uint64_t frame,
                                    dvpp_err *err);

/* A helper thread. DVPP_ENOMEM, DVPP_ESYS (no thread); on failure *out
 * is NULL. */
dvpp_status dvpp_pipe_async_start(dvpp_pipe_async **out, dvpp_err *err);

/* Hand over the run of @p on @in (@len bytes) into @po (as for
 * dvpp_pipeline_run) on @w's aux buffers with @w's current limits (@w
 * must stay the caller's until the run is collected), tagged @tag (named
 * in its error: "frame TAG: ..."). The previous run must have been
 * collected. DVPP_ENOMEM (no aux worker: nothing is handed over). */
dvpp_status dvpp_pipe_async_give(dvpp_pipe_async *a, dvpp_worker *w, const dvpp_pipeline *p,
                                 const uint8_t *in, size_t len, const dvpp_pipeline_out *po,
                                 uint64_t tag, dvpp_err *err);

/* Wait for the run handed over (if any): DVPP_OK with its output's
 * geometry in *@geom (may be NULL) and true in *@had when there was one
 * (may be NULL), else its failure. Once a run failed every later collect
 * returns that failure (the runs after it are not made: give then only
 * records them). */
dvpp_status dvpp_pipe_async_collect(dvpp_pipe_async *a, dvpp_pipe_geom *geom, bool *had,
                                    dvpp_err *err);

/* Collect, stop the thread and free; returns @st when it is not DVPP_OK,
 * else the first failure of a run (with its message), else DVPP_OK. NULL
 * is a no-op returning @st. */
dvpp_status dvpp_pipe_async_stop(dvpp_pipe_async *a, dvpp_status st, dvpp_err *err);

#endif
