/* http_reply: how the front end answers. dvpp_status -> HTTP status, the
 * JSON error body ({"error":{"code","message","field"}}), headers, the
 * tensor/geometry headers every tensor answer carries, and bodies made on
 * a worker (http_vout) handed to libmicrohttpd without a copy.
 *
 * Every answer goes through http_answer, which adds Connection: close
 * while draining, marks the request answered and counts it. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

/* The HTTP status of a dvpp_status (@field tells ELIMIT apart). */
static unsigned status_code(dvpp_status st, const char *field)
{
    switch (st) {
    case DVPP_OK: return 200;
    case DVPP_EINVAL: return 400;
    case DVPP_ENOTFOUND: return 404;
    case DVPP_EBUSY: return 409;
    case DVPP_EUNSUPPORTED: /* a dump refused (off, or not this caller): 403 */
        return field && !strcmp(field, "dump") ? 403 : 415;
    case DVPP_ELIMIT: /* the body (413), a parameter or the spec (400), or the image (422) */
        if (field && !strcmp(field, "body"))
            return 413;
        return field && (!strncmp(field, "ops[", 4) || !strncmp(field, "raw", 3) ||
                         !strcmp(field, "spec"))
                   ? 400
                   : 422;
    case DVPP_ECORRUPT:
    case DVPP_EFORMAT:
    case DVPP_EOVERFLOW:
    case DVPP_ECODEC:
    case DVPP_ESTRIDE:
    case DVPP_EPROFILE:
        return 422;
    case DVPP_EAGAIN:
        return field && !strcmp(field, "batches") ? 429 : 503;
    case DVPP_ENOMEM:
    case DVPP_ECANCELED:
    case DVPP_ETIMEDOUT:
        return 503;
    default:
        return 500;
    }
}

/* Messages may quote request bytes, and JSON wants valid UTF-8. */
json_t *http_json_str(const char *s)
{
    char clean[DVPP_ERR_LEN + 64];
    size_t i;

    if (!s)
        s = "";
    for (i = 0; s[i] && i < sizeof(clean) - 1; i++)
        clean[i] = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
    clean[i] = '\0';
    return json_string(clean);
}

void http_header(struct MHD_Response *resp, const char *k, const char *v)
{
    MHD_add_response_header(resp, k, v);
}

void http_header_printf(struct MHD_Response *resp, const char *k, const char *fmt, ...)
{
    char v[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    http_header(resp, k, v);
}

enum MHD_Result http_answer(http_req *r, unsigned code, struct MHD_Response *resp)
{
    enum MHD_Result ret;
    uint64_t t_write;

    if (!resp)
        return MHD_NO; /* out of memory: drop the connection */
    /* Once a stop begins, every connection ends with its current answer: a
     * balancer's idle keep-alive connection would otherwise be closed under
     * it at the end of the drain, racing the next request it sends. */
    if (atomic_load(&r->h->leaving) || atomic_load(&r->h->draining))
        http_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    t_write = http_trace_answer_start(r, resp);
    ret = MHD_queue_response(r->conn, code, resp);
    MHD_destroy_response(resp);
    if (t_write)
        http_trace_answer_done(r, t_write);
    r->state = HTTP_REQ_ANSWERED;
    dvppd_metrics_request(r->h->metrics, r->route, code, dvpp_now_ns() - r->t_start);
    return ret;
}

struct MHD_Response *http_json_response(json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct MHD_Response *resp;

    json_decref(body);
    if (!text)
        return NULL;
    resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return NULL;
    }
    http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return resp;
}

enum MHD_Result http_answer_json(http_req *r, unsigned code, json_t *body)
{
    return http_answer(r, code, http_json_response(body));
}

enum MHD_Result http_answer_error_code(http_req *r, unsigned code, dvpp_status st,
                                       const char *field, const char *msg)
{
    struct MHD_Response *resp = http_json_response(json_pack(
        "{s:{s:s, s:o, s:o}}", "error", "code", dvpp_status_name(st), "message",
        http_json_str(msg && *msg ? msg : dvpp_strerror(st)), "field", http_json_str(field)));

    if (!resp)
        return MHD_NO;
    /* The console's "recent errors": what this client was just told. */
    dvppd_errlog_add(&r->h->metrics->errors, dvppd_route_name(r->route), code,
                     dvpp_status_name(st), field, msg && *msg ? msg : dvpp_strerror(st));
    if (code == 503 || code == 429)
        http_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (code == 405)
        http_header(resp, MHD_HTTP_HEADER_ALLOW, field && *field ? field : "GET");
    return http_answer(r, code, resp);
}

enum MHD_Result http_answer_error(http_req *r, const dvpp_err *e)
{
    return http_answer_error_code(r, status_code(e->status, e->field), e->status,
                                  e->field, e->msg);
}

enum MHD_Result http_answer_status(http_req *r, dvpp_status st, const char *field,
                                   const char *msg)
{
    return http_answer_error_code(r, status_code(st, field), st, field, msg);
}

/* --- tensor headers ----------------------------------------------------------------- */

uint64_t http_us(uint64_t ns)
{
    return ns / 1000;
}

void http_shape_header(struct MHD_Response *resp, const dvpp_tensor *t)
{
    char shape[128] = "";
    size_t n = 0;

    for (unsigned i = 0; i < t->ndim && n < sizeof(shape); i++)
        n += (size_t)snprintf(shape + n, sizeof(shape) - n, "%s%" PRId64, i ? "," : "",
                              t->shape[i]);
    http_header(resp, "X-Dvpp-Shape", shape);
}

void http_tensor_headers(struct MHD_Response *resp, const dvpp_tensor *t)
{
    http_shape_header(resp, t);
    http_header(resp, "X-Dvpp-Dtype", dvpp_dtype_name(t->dtype));
    http_header(resp, "X-Dvpp-Layout", dvpp_layout_name(t->layout));
}

void http_geometry_headers(struct MHD_Response *resp, const dvpp_pipe_geom *g)
{
    http_header_printf(resp, "X-Dvpp-Scale", "%.17g,%.17g", g->scale_x, g->scale_y);
    http_header_printf(resp, "X-Dvpp-Pad", "%.17g,%.17g", g->pad_x, g->pad_y);
}

/* --- answer bodies grown on a worker ------------------------------------------------- */

void http_vout_free(void *cls)
{
    http_vout *o = cls;

    if (!o)
        return;
    if (o->held) {
        dvpp_device_release_bytes(o->h->device, o->held);
        dvppd_metrics_result(o->h->metrics, -(int64_t)o->held);
    }
    dvpp_buf_fini(&o->body);
    free(o);
}

/* The memory exists already, so the hold is forced: admissions after it
 * see it. */
struct MHD_Response *http_vout_response(dvppd_http *h, http_vout **o)
{
    struct MHD_IoVec iov[2];
    unsigned n = 0;
    struct MHD_Response *resp;
    http_vout *v = *o;

    if (v->head_len)
        iov[n++] = (struct MHD_IoVec){v->head, v->head_len};
    if (v->body.len)
        iov[n++] = (struct MHD_IoVec){v->body.data, v->body.len};
    resp = MHD_create_response_from_iovec(iov, n, http_vout_free, v);
    if (!resp)
        return NULL;
    v->h = h;
    v->held = v->head_len + v->body.len;
    dvpp_device_hold_bytes(h->device, v->held, true, NULL);
    dvppd_metrics_result(h->metrics, (int64_t)v->held);
    *o = NULL;
    return resp;
}
