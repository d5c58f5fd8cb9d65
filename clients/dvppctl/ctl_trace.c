/* ctl_trace: dvppctl --trace FILE (docs/tracing.md).
 *
 * With --socket every job a command submits is traced (Submit.trace) and
 * the daemon's trace of it fetched (TraceGet) into FILE (a command that
 * submits several jobs leaves the last one's). Without a daemon,
 * preprocess (the one command whose local run is the daemon's pipeline,
 * ctl_local.c, the path --dump and --preset use) runs the pipeline of its
 * preset or flags here on one worker
 * with dvppd's own recorder on its watch: "preprocess" (the whole
 * command) around "read" (the input file), the pipeline's spans ("run"
 * and inside it "plan", "decode", each op, "normalise"/"aipp") and
 * "write" (the tensor to -o), all on this thread. The tensor is the one
 * the command writes without --trace (a watch without an image hook
 * changes no plan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_remote.h"
#include "device/dvpp_device.h"
#include "dvppd/dvppd_trace.h"

/* A local run's events: a few per stage; far more than preprocess makes. */
#define CTL_TRACE_EVENTS 1024u

dvpp_status ctl_trace_fetch(dvppc_conn *c, uint64_t id, const char *path, dvpp_err *err)
{
    dvppc_error e;
    char *json = NULL;
    size_t len = 0;
    dvpp_status st;

    memset(&e, 0, sizeof(e));
    if (!id)
        return dvpp_err_set(err, DVPP_ESYS, "trace", "the daemon named no trace");
    if (dvppc_trace_get(c, id, &json, &len, &e) != 0)
        return ctl_from_client(&e, err);
    st = dvpp_write_file(path, json, len, err);
    free(json);
    return st;
}

/* The run's state: everything the cleanup releases. */
typedef struct trace_run {
    ctl_local l;
    dvppd_trace *t;
    dvpp_pipe_watch watch;
} trace_run;

/* The watch's hook: the worker's spans into the recorder. */
static void run_span(void *ctx, const char *name, int index, uint32_t item, uint64_t t0_ns,
                     uint64_t t1_ns)
{
    dvppd_trace_args a = DVPPD_TRACE_NO_ARGS;
    trace_run *r = ctx;

    a.item = item;
    a.index = index;
    a.thread = "dvppctl";
    dvppd_trace_span(r->t, name, "pipeline", t0_ns, t1_ns, &a);
}

static void span_at(trace_run *r, const char *name, uint64_t t0_ns, uint64_t t1_ns,
                    int64_t bytes)
{
    dvppd_trace_args a = DVPPD_TRACE_NO_ARGS;

    a.bytes = bytes;
    a.thread = "dvppctl";
    dvppd_trace_span(r->t, name, "dvppctl", t0_ns, t1_ns, &a);
}

static void span(trace_run *r, const char *name, uint64_t t0_ns, int64_t bytes)
{
    span_at(r, name, t0_ns, dvpp_now_ns(), bytes);
}

/* Read, plan, run (watched), write the tensor; the cleanup is the
 * caller's. The trace is written by the caller, also for a failed run. */
static dvpp_status trace_steps(trace_run *r, const ctl_args *a, dvpp_err *err)
{
    ctl_local *l = &r->l;
    uint64_t t0;
    dvpp_status st = ctl_local_prepare(l, a, err);

    if (l->file.len)
        span_at(r, "read", l->read_t0, l->read_t1, (int64_t)l->file.len);
    if (st != DVPP_OK)
        return st;
    r->watch = (dvpp_pipe_watch){.ctx = r, .span = run_span, .image = NULL};
    l->p.watch = &r->watch;
    st = ctl_local_run(l, err);
    if (st != DVPP_OK || !a->out)
        return st;
    t0 = dvpp_now_ns();
    st = dvpp_write_file(a->out, l->npy, l->npy_len, err);
    if (st == DVPP_OK)
        span(r, "write", t0, (int64_t)l->npy_len);
    return st;
}

/* The recorder's JSON into a->trace. */
static dvpp_status write_trace(trace_run *r, const char *path, dvpp_err *err)
{
    size_t len = 0;
    char *json = dvppd_trace_json(r->t, &len);
    dvpp_status st;

    if (!json)
        return dvpp_err_set(err, DVPP_ENOMEM, "trace", "out of memory");
    st = dvpp_write_file(path, json, len, err);
    free(json);
    return st;
}

int ctl_trace_preprocess(const ctl_args *a)
{
    trace_run *r = calloc(1, sizeof(*r));
    uint64_t t0 = dvpp_now_ns();
    dvpp_err err, werr;
    dvpp_status st, wst = DVPP_OK;

    if (!r) {
        fprintf(stderr, "dvppctl preprocess: out of memory\n");
        return 1;
    }
    dvpp_err_clear(&err);
    dvpp_err_clear(&werr);
    ctl_local_init(&r->l, a);
    st = dvppd_trace_new(CTL_TRACE_EVENTS, "dvppctl preprocess", &r->t, &err);
    if (st == DVPP_OK) {
        st = trace_steps(r, a, &err);
        span(r, "preprocess", t0, -1);
        /* a failed run's trace says how far it got */
        wst = write_trace(r, a->trace, &werr);
    }
    dvppd_trace_unref(r->t);
    ctl_local_fini(&r->l);
    free(r);
    if (st != DVPP_OK)
        return ctl_fail(a->inputs[0], &err);
    return wst == DVPP_OK ? 0 : ctl_fail(a->trace, &werr);
}
