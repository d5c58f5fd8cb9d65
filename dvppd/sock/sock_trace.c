/* sock_trace: traces of socket jobs (docs/tracing.md, PROTOCOL.md "Traces").
 *
 * Submit.trace / BatchSubmit.trace give the job its own dvppd_trace_job
 * trace, stored under the id Result.trace_id names, in the daemon's one
 * store (so GET /v1/traces/<id> serves it too); every job, traced or not,
 * also joins a running GET /v1/trace?seconds=N capture. The spans:
 *   socket thread  "request" (the request taken in .. its Result handed to
 *                  the socket), "queue" (submitted .. a worker took it);
 *   worker         the pipeline's watch spans ("run" and inside it), per
 *                  item of a batch;
 *   answerer       "write" (the Result built and packed) with "hand-off"
 *                  inside it (the slot leased to the client), on the
 *                  thread that answered (the worker for a Submit, the
 *                  socket thread for a batch).
 * The socket thread's spans are recorded by the answering thread in its
 * name (dvppd_trace_args.tid): "request" ends where the answer is, and
 * the trace is stored before the Result is sent, so a client's TraceGet
 * after the Result always finds it (the send itself, microseconds on a
 * Unix socket, is outside the trace). */
#include "sock_int.h"

#include <inttypes.h>
#include <stdlib.h>

dvpp_status sock_trace_begin(sjob *j, bool traced, uint64_t t_recv, dvpp_err *err)
{
    dvppd_trace_store *store = j->c->s->traces;
    dvpp_status st;

    if (traced && !store)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "trace", "tracing is off");
    st = dvppd_trace_job_begin(&j->tj, store, traced,
                               j->type == JOB_BATCH ? "socket batch" : "socket submit", err);
    if (st != DVPP_OK || !dvppd_trace_job_active(&j->tj))
        return st;
    j->t_recv = t_recv;
    j->recv_tid = dvppd_trace_tid();
    return DVPP_OK;
}

void sock_trace_watch(sjob *j, dvpp_pipeline *p)
{
    p->watch = dvppd_trace_job_watch(&j->tj, p->watch);
}

/* The args of a span on the calling thread: the socket thread is named
 * "socket" whichever of its spans comes first. */
static dvppd_trace_args here(const sjob *j)
{
    dvppd_trace_args a = DVPPD_TRACE_NO_ARGS;

    if (dvppd_trace_tid() == j->recv_tid)
        a.thread = "socket";
    return a;
}

void sock_trace_span(sjob *j, const char *name, uint64_t t0_ns, uint64_t t1_ns)
{
    dvppd_trace_args a;

    if (!dvppd_trace_job_active(&j->tj))
        return;
    a = here(j);
    dvppd_trace_job_span(&j->tj, name, "socket", t0_ns, t1_ns, &a);
}

void sock_trace_answer(sjob *j, uint64_t t_write)
{
    dvppd_trace_args on_socket = DVPPD_TRACE_NO_ARGS, a;
    uint64_t now;

    if (!dvppd_trace_job_active(&j->tj))
        return;
    now = dvpp_now_ns();
    a = here(j);
    on_socket.thread = "socket";
    on_socket.tid = j->recv_tid;
    /* a batch's items each wait on their own: their runs show it */
    if (j->type == JOB_SINGLE && j->pj.started_ns >= j->t_submit && j->t_submit)
        dvppd_trace_job_span(&j->tj, "queue", "socket", j->t_submit, j->pj.started_ns,
                             &on_socket);
    dvppd_trace_job_span(&j->tj, "write", "socket", t_write, now, &a);
    dvppd_trace_job_span(&j->tj, "request", "socket", j->t_recv, now, &on_socket);
    dvppd_trace_job_end(&j->tj, j->c->s->traces);
}

/* --- TraceGet -------------------------------------------------------------------------- */

void sock_on_trace_get(conn *c, uint64_t id, uint64_t trace)
{
    Dvpp__Envelope e;
    Dvpp__TraceData d;
    char *json = NULL;
    size_t len = 0;
    dvpp_err err;

    dvpp_err_clear(&err);
    if (!c->s->traces) {
        sock_send_error(c, id, DVPP_ENOTFOUND, "id", "tracing is off");
        return;
    }
    /* An answer holds at most what an inline output may (the packet bound
     * both sides read with): larger traces are for GET /v1/traces/<id>. */
    if (dvppd_trace_store_get_max(c->s->traces, trace, c->s->cfg.max_inline,
                                  "Welcome.max_inline: fetch it with GET /v1/traces/<id>",
                                  &json, &len, &err) != DVPP_OK) {
        sock_send_err(c, id, &err);
        return;
    }
    sock_envelope_init(&e, id);
    dvpp__trace_data__init(&d);
    d.id = trace;
    d.json.data = (uint8_t *)json;
    d.json.len = len;
    e.body_case = DVPP__ENVELOPE__BODY_TRACE_DATA;
    e.trace_data = &d;
    sock_send_env(c, &e, NULL, 0);
    free(json);
}
