/* http_batch: POST /v1/batch (N images into one N x C x H x W tensor,
 * answered when done) and /v1/jobs (the same batch kept as a job: 202 at
 * once, then GET /v1/jobs/{id} for its progress, .../result for the
 * tensor, DELETE to cancel and forget it).
 *
 * The image parts are the inputs (borrowed from the body); the result
 * buffer (or ring slot, /v1/batch only) is sized from the spec and taken
 * before the batch starts, so the device's byte budget sees it. A job
 * takes the body and the result buffer from the request (http_jobs owns
 * them from then on); each GET of its result sends the job's buffer with a
 * reference of its own, no copy. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

/* Image parts as batch inputs (borrowed from the parts). */
static dvpp_status batch_parts_to_inputs(http_req *r, dvpp_err *err)
{
    size_t n = 0;

    if (!r->multipart)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "Content-Type",
                            "a batch body is multipart/form-data");
    r->inputs = calloc(r->nparts ? r->nparts : 1, sizeof(*r->inputs));
    if (!r->inputs)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "batch inputs");
    for (unsigned i = 0; i < r->nparts; i++)
        if (!http_part_is_control(&r->parts[i]))
            r->inputs[n++] = (dvpp_batchjob_input){r->parts[i].data, r->parts[i].len};
    r->ninputs = n;
    if (n == 0)
        return dvpp_err_set(err, DVPP_EINVAL, "body", "no image parts in the batch");
    if (n > r->set->cfg.http.max_batch_items)
        return dvpp_err_set(err, DVPP_ELIMIT, "parts", "%zu images, above %u "
                            "(http.max_batch_items)", n, r->set->cfg.http.max_batch_items);
    return DVPP_OK;
}

/* The spec, the inputs and a result buffer for an N-image tensor. */
static dvpp_status batch_prepare(http_req *r, dvpp_tensor *t, dvpp_err *err)
{
    dvpp_status st = http_spec_build(r, DVPPD_SPEC_TENSOR, err);

    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&r->spec.pipe, &r->set->cfg.limits, err);
    if (st == DVPP_OK)
        st = batch_parts_to_inputs(r, err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&r->spec.pipe, (uint32_t)r->ninputs, t, err);
    if (st == DVPP_OK && r->spec.ring[0] && r->route == DVPPD_ROUTE_JOBS)
        st = dvpp_err_set(err, DVPP_EINVAL, "ring", "jobs keep their result; ?ring= is for "
                          "/v1/preprocess and /v1/batch");
    return st == DVPP_OK ? http_tensor_destination(r, t, err) : st;
}

/* The batch's completion notice, on a device worker. */
static void batch_completed(void *ctx)
{
    http_finish(ctx, DVPP_OK, NULL);
}

dvpp_status http_batch_submit(http_req *r, dvpp_err *err)
{
    dvpp_batchjob_opts o = {.deadline_ns = r->deadline, .done = batch_completed, .ctx = r};
    dvpp_tensor t;
    dvpp_status st = batch_prepare(r, &t, err);

    if (st != DVPP_OK)
        return st;
    r->out.tensor = t;
    o.strict = r->spec.strict;
    o.output_held = r->result != NULL; /* a result buffer, not a ring slot */
    st = http_dump_batch_start(r, err); /* ?dump=1: before the trace wraps its watch */
    if (st != DVPP_OK)
        return st;
    http_trace_watch(r, &r->spec.pipe); /* copied by the job: items span on their workers */
    r->t_submit = dvpp_now_ns();
    return dvpp_batchjob_start_opts(r->h->device, &r->spec.pipe, r->inputs, r->ninputs,
                                    &t, &o, &r->bj, err);
}

/* {"index", "code", "message"} of a failed item. */
static json_t *item_error_json(size_t i, dvpp_status st, const dvpp_err *e)
{
    return json_pack("{s:I, s:s, s:o}", "index", (json_int_t)i, "code", dvpp_status_name(st),
                     "message", http_json_str(e->msg[0] ? e->msg : dvpp_strerror(st)));
}

/* X-Dvpp-Items-Failed, X-Dvpp-Item-Status and X-Dvpp-Item-Errors of a
 * finished batch. The status list is left out when it would not fit a
 * quarter of the connection's memory (libmicrohttpd builds headers there);
 * the failed items are then still in X-Dvpp-Item-Errors (first 32) and in
 * GET /v1/jobs/{id}. */
static void item_headers(struct MHD_Response *resp, dvpp_batchjob *bj, size_t n,
                         size_t memory)
{
    size_t cap = n * 16 + 1, len = 0, failed = 0;
    char *status = n * 14 < memory / 4 ? malloc(cap) : NULL;
    json_t *errors = json_array();

    for (size_t i = 0; i < n; i++) {
        dvpp_err e;
        dvpp_status st;
        dvpp_err_clear(&e);
        st = dvpp_batchjob_item_status(bj, i, &e);
        failed += st != DVPP_OK;
        if (status)
            len += (size_t)snprintf(status + len, cap - len, "%s%s", i ? "," : "",
                                    st == DVPP_OK ? "OK" : dvpp_status_name(st));
        if (st != DVPP_OK && errors && json_array_size(errors) < HTTP_ERRORS_LISTED)
            json_array_append_new(errors, item_error_json(i, st, &e));
    }
    http_header_printf(resp, "X-Dvpp-Items-Failed", "%zu", failed);
    if (status)
        http_header(resp, "X-Dvpp-Item-Status", status);
    if (errors) {
        char *text = json_dumps(errors, JSON_COMPACT | JSON_ENSURE_ASCII);
        if (text)
            http_header(resp, "X-Dvpp-Item-Errors", text);
        free(text);
    }
    json_decref(errors);
    free(status);
}

/* A strict batch's failure names the item: field "items[i]". */
static void name_failed_item(dvpp_batchjob *bj, dvpp_err *e)
{
    size_t i = dvpp_batchjob_cause(bj);
    char msg[DVPP_ERR_LEN];

    if (e->status == DVPP_ECANCELED || i == SIZE_MAX)
        return;
    memcpy(msg, e->msg, sizeof(msg));
    snprintf(e->field, sizeof(e->field), "items[%zu]", i);
    snprintf(e->msg, sizeof(e->msg), "item %zu: %.*s", i, (int)(sizeof(e->msg) - 32), msg);
}

enum MHD_Result http_batch_answer(http_req *r)
{
    struct MHD_Response *resp;
    dvpp_err e;
    dvpp_status st;

    dvpp_err_clear(&e);
    st = dvpp_batchjob_wait(r->bj, &e); /* finished: returns at once */
    http_dump_batch_finish(r, st, &e); /* while the result and slot are still ours */
    if (st != DVPP_OK) {
        name_failed_item(r->bj, &e);
        return http_answer_error(r, &e);
    }
    if (r->ticket.ring) {
        resp = http_ring_response(r, &r->out.tensor, NULL, &e);
        if (!resp)
            return http_answer_error(r, &e);
    } else {
        resp = http_req_result_response(r);
    }
    if (!resp)
        return MHD_NO;
    item_headers(resp, r->bj, r->ninputs, r->h->cfg.connection_memory);
    http_dump_header(r, resp);
    http_tensor_headers(resp, &r->out.tensor);
    http_header_printf(resp, "X-Dvpp-Timing", "read=%" PRIu64 ";total=%" PRIu64,
                       http_us(r->t_read - r->t_start), http_us(dvpp_now_ns() - r->t_start));
    http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                r->spec.raw_out ? "application/octet-stream" : "application/x-npy");
    dvppd_metrics_pixels(r->h->metrics, (uint64_t)r->ninputs * r->out.tensor.h *
                                            r->out.tensor.w);
    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_READ, r->t_read - r->t_start);
    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_TOTAL, dvpp_now_ns() - r->t_start);
    return http_answer(r, 200, resp);
}

/* --- jobs ---------------------------------------------------------------------------- */

enum MHD_Result http_batch_job_create(http_req *r)
{
    http_job_desc d;
    dvpp_tensor t;
    dvpp_err e;
    dvpp_status st;
    uint64_t id = 0;
    char loc[64];
    struct MHD_Response *resp;

    dvpp_err_clear(&e);
    http_jobs_gc(r->h->jobs);
    st = http_dump_refuse(r, &e);
    if (st == DVPP_OK)
        st = batch_prepare(r, &t, &e);
    /* A job keeps its body (the inputs) after the request has ended, until
     * it is deleted or expires: like its result, the body holds its bytes
     * of the device's budget meanwhile (http.max_body_memory counts only
     * bodies being received). */
    if (st == DVPP_OK)
        st = dvpp_device_hold_bytes(r->h->device, r->body_cap, false, &e);
    if (st != DVPP_OK)
        return http_answer_error(r, &e);
    /* The job takes the body (its inputs point into it) and the result. */
    d = (http_job_desc){
        .device = r->h->device, .pipe = &r->spec.pipe, .inputs = r->inputs,
        .n = r->ninputs, .body = r->body, .body_held = r->body_cap,
        .strict = r->spec.strict, .deadline_ns = 0,
        .result = r->result, .result_len = r->result_len, .header_len = r->header_len,
        .tensor = t, .release = http_result_release_job, .release_ctx = r->h,
        .output_held = true,
    };
    r->body = NULL, r->result = NULL;
    st = http_jobs_start(r->h->jobs, &d, &id, &e);
    if (st != DVPP_OK)
        return http_answer_error(r, &e);
    snprintf(loc, sizeof(loc), "/v1/jobs/%" PRIu64, id);
    resp = http_json_response(json_pack("{s:s, s:s, s:I, s:s}", "id", loc + 9, "state",
                                        "running", "total", (json_int_t)r->ninputs, "href",
                                        loc));
    if (!resp)
        return MHD_NO;
    http_header(resp, MHD_HTTP_HEADER_LOCATION, loc);
    return http_answer(r, 202, resp);
}

/* GET /v1/jobs/{id}: state, progress, the first failed items, the error. */
static json_t *job_status_json(http_job *j)
{
    dvpp_batch_progress p;
    dvpp_status st;
    dvpp_err e;
    http_job_state s;
    json_t *items = json_array(), *o;
    char id[32];

    dvpp_err_clear(&e);
    s = http_job_state_get(j, &p, &st, &e);
    for (size_t i = 0; items && i < p.total && json_array_size(items) < HTTP_ERRORS_LISTED;
         i++) {
        dvpp_err ie;
        dvpp_status is;
        dvpp_err_clear(&ie);
        is = dvpp_batchjob_item_status(http_job_batch(j), i, &ie);
        if (is != DVPP_OK && is != DVPP_EBUSY)
            json_array_append_new(items, item_error_json(i, is, &ie));
    }
    snprintf(id, sizeof(id), "%" PRIu64, http_job_id(j));
    o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o}", "id", id, "state",
                  http_job_state_name(s), "total", (json_int_t)p.total, "done",
                  (json_int_t)p.done, "failed", (json_int_t)p.failed, "items",
                  items ? items : json_array());
    if (o && st != DVPP_OK)
        json_object_set_new(o, "error", json_pack("{s:s, s:o}", "code",
                                                  dvpp_status_name(st), "message",
                                                  http_json_str(e.msg[0] ? e.msg
                                                                         : dvpp_strerror(st))));
    return o;
}

static enum MHD_Result answer_job_result(http_req *r, http_job *j)
{
    dvpp_batch_progress p;
    dvpp_status st;
    dvpp_err e;
    dvpp_tensor t;
    size_t len, hlen;
    const void *data;
    struct MHD_Response *resp;

    dvpp_err_clear(&e);
    switch (http_job_state_get(j, &p, &st, &e)) {
    case HTTP_JOB_RUNNING:
        return http_answer_status(r, DVPP_EBUSY, "state", "the job is still running");
    case HTTP_JOB_FAILED:
    case HTTP_JOB_CANCELED:
        name_failed_item(http_job_batch(j), &e);
        return http_answer_error(r, &e);
    case HTTP_JOB_DONE:
        break;
    }
    data = http_job_result(j, &len, &hlen, &t);
    /* No copy: the response holds a reference to the job's result buffer
     * (http_result_get), which outlives a DELETE or the job's expiry while
     * it is being sent, and stays held against the device's budget. */
    resp = http_result_response(http_result_ref(data), len);
    if (!resp) {
        http_result_unref((void *)data);
        return MHD_NO;
    }
    item_headers(resp, http_job_batch(j), p.total, r->h->cfg.connection_memory);
    http_tensor_headers(resp, &t);
    http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                hlen ? "application/x-npy" : "application/octet-stream");
    return http_answer(r, 200, resp);
}

enum MHD_Result http_batch_job_serve(http_req *r, const char *method)
{
    http_job *j;
    enum MHD_Result ret;

    http_jobs_gc(r->h->jobs);
    j = http_jobs_get(r->h->jobs, r->job_id);
    if (!j)
        return http_answer_status(r, DVPP_ENOTFOUND, "id", "no such job");
    if (r->route == DVPPD_ROUTE_JOB_RESULT) {
        ret = answer_job_result(r, j);
    } else if (!strcmp(method, "DELETE")) {
        json_t *o = job_status_json(j);
        http_jobs_delete(r->h->jobs, r->job_id);
        if (o && !strcmp(json_string_value(json_object_get(o, "state")), "running"))
            json_object_set_new(o, "state", json_string("canceled"));
        ret = http_answer_json(r, 200, o);
    } else {
        ret = http_answer_json(r, 200, job_status_json(j));
    }
    http_job_unref(j);
    return ret;
}
