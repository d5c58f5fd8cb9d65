/* dvppd/http/http_server.c: the HTTP front end on libmicrohttpd (moved from dvppd/dvppd_http.c; split into modules next). */
#include "dvppd_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "device/dvpp_batchjob.h"
#include "dvpp_cpu.h"
#include "dvpp_jpeg.h"
#include "dvpp_log.h"
#include "dvpp_npy.h"
#include "dvpp_video.h"
#include "device/dvpp_videojob.h"
#include "http_framelist.h"
#include "http_jobs.h"
#include "http_multipart.h"
#include "dvppd_sock.h"
#include "dvppd_spec.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "dev"
#endif

#define MAX_QUERY_ARGS 64
#define ERRORS_LISTED 32

/* --- reusable buffers ----------------------------------------------------------- */

/* A buffer of a body or a result: this header, then the bytes. Kept in a
 * small pool so a steady stream of same-sized answers touches no new pages.
 * A result buffer is counted (refs: the request, then libmicrohttpd's
 * response, a job and each GET of the job's result) and holds its bytes of
 * the device's byte budget (held) until its last reference goes, so a
 * result waiting for a slow reader or a GET is seen by admission. */
typedef struct blob {
    struct blob *next;      /* the pool's free list */
    size_t cap;             /* bytes after the header */
    struct dvppd_http *h;
    uint64_t held;          /* bytes of the device's budget held; 0: none */
    atomic_uint refs;       /* result buffers: references */
    uint8_t pad[28];
} blob;

_Static_assert(sizeof(blob) == 64, "blob header keeps the data 64-byte aligned");

#define POOL_MAX 32
#define POOL_MAX_BYTES ((size_t)256 << 20)

typedef struct pool {
    pthread_mutex_t mu;
    blob *free;
    unsigned count;
    size_t bytes;
} pool;

struct dvppd_http {
    struct MHD_Daemon *mhd;
    dvppd_http_config cfg;             /* as started: restart-only keys */
    dvppd_live *live;                  /* the settings a reload replaces */
    dvpp_device *device;
    dvppd_metrics *metrics;
    dvppd_sock *sock;                  /* named rings (?ring=), may be NULL */
    dvppd_jobs *jobs;
    pool pool;
    atomic_bool ready, draining;
    atomic_long inflight;
    atomic_long suspended;             /* connections waiting on a job */
    atomic_uint_fast64_t body_bytes; /* reserved by bodies being received */
    uint16_t port;
    unsigned queue_depth;
};

static uint8_t *blob_data(blob *b)
{
    return (uint8_t *)(b + 1);
}

static blob *blob_of(const void *data)
{
    return (blob *)data - 1;
}

/* A buffer of at least @size bytes: a pooled one that is not much larger,
 * else a new one. Holds nothing, one reference. */
static void *buf_get(dvppd_http *h, size_t size)
{
    blob **pp, *b = NULL;

    pthread_mutex_lock(&h->pool.mu);
    for (pp = &h->pool.free; *pp; pp = &(*pp)->next)
        if ((*pp)->cap >= size && (*pp)->cap / 4 <= size + 4096) {
            b = *pp;
            *pp = b->next;
            h->pool.count--;
            h->pool.bytes -= b->cap;
            break;
        }
    pthread_mutex_unlock(&h->pool.mu);
    if (!b) {
        if (size > SIZE_MAX - sizeof(blob))
            return NULL;
        b = dvpp_malloc(sizeof(blob) + size);
        if (!b)
            return NULL;
        b->cap = size;
        b->h = h;
    }
    b->held = 0;
    atomic_init(&b->refs, 1);
    return blob_data(b);
}

/* Back to the pool (or freed); what the buffer held of the budget is
 * released. */
static void buf_put(dvppd_http *h, void *data)
{
    blob *b;

    if (!data)
        return;
    b = blob_of(data);
    if (b->held) {
        dvpp_device_release_bytes(h->device, b->held);
        dvppd_metrics_result(h->metrics, -(int64_t)b->held);
        b->held = 0;
    }
    pthread_mutex_lock(&h->pool.mu);
    if (h->pool.count < POOL_MAX && h->pool.bytes + b->cap <= POOL_MAX_BYTES) {
        b->next = h->pool.free;
        h->pool.free = b;
        h->pool.count++;
        h->pool.bytes += b->cap;
        b = NULL;
    }
    pthread_mutex_unlock(&h->pool.mu);
    if (b)
        dvpp_free(b, sizeof(blob) + b->cap);
}

/* A result buffer of @size bytes into *@out: checked against
 * limits.max_output_bytes and held against the device's byte budget
 * before anything is allocated. DVPP_ELIMIT ("max_output_bytes"), the
 * device's DVPP_EAGAIN ("bytes") / DVPP_ELIMIT ("too_large"), DVPP_ENOMEM;
 * *@out is NULL then. */
static dvpp_status result_get(dvppd_http *h, const dvpp_limits *lim, size_t size, void **out,
                              dvpp_err *err)
{
    dvpp_status st = dvpp_limits_check_output(lim, size, err);

    *out = NULL;
    if (st == DVPP_OK)
        st = dvpp_device_hold_bytes(h->device, size, false, err);
    if (st != DVPP_OK)
        return st;
    *out = buf_get(h, size);
    if (!*out) {
        dvpp_device_release_bytes(h->device, size);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory for a result of %zu bytes",
                            size);
    }
    blob_of(*out)->held = size;
    dvppd_metrics_result(h->metrics, (int64_t)size);
    return DVPP_OK;
}

/* Another reference to a result buffer (the caller holds one). */
static void *result_ref(const void *data)
{
    atomic_fetch_add(&blob_of(data)->refs, 1);
    return (void *)data;
}

/* Drop a reference; the last one puts the buffer back. */
static void result_unref(void *data)
{
    if (data && atomic_fetch_sub(&blob_of(data)->refs, 1) == 1)
        buf_put(blob_of(data)->h, data);
}

/* libmicrohttpd's release of a response body from result_get. */
static void buf_release_mhd(void *data)
{
    result_unref(data);
}

static void buf_release_job(void *ctx, void *data)
{
    (void)ctx;
    result_unref(data);
}

static void pool_fini(pool *p)
{
    while (p->free) {
        blob *b = p->free;
        p->free = b->next;
        dvpp_free(b, sizeof(blob) + b->cap);
    }
    pthread_mutex_destroy(&p->mu);
}

/* --- answer bodies grown on a worker -------------------------------------------- */

/* An answer's body made while the job ran (a video's frames, tensor, stream
 * or multipart; an encoded image), owned by the request until it is handed
 * to libmicrohttpd, then freed by vout_free with the response: never
 * copied. While libmicrohttpd sends it, its bytes are held against the
 * device's byte budget (the memory exists already, so the hold is forced:
 * admissions after it see it). */
typedef struct vout {
    struct dvppd_http *h;           /* set when handed over */
    uint64_t held;                  /* bytes of the budget held */
    char head[DVPP_NPY_HEADER_MAX]; /* the .npy header */
    size_t head_len;                /* 0: no header */
    dvpp_buf body;                  /* frames, tensor, stream, multipart, image */
} vout;

static void vout_free(void *cls)
{
    vout *o = cls;

    if (!o)
        return;
    if (o->held) {
        dvpp_device_release_bytes(o->h->device, o->held);
        dvppd_metrics_result(o->h->metrics, -(int64_t)o->held);
    }
    dvpp_buf_fini(&o->body);
    free(o);
}

/* Hand *@o to libmicrohttpd: the header and the body as two buffers, freed
 * with the response (no copy). *@o is NULL on success. */
static struct MHD_Response *vout_response(struct dvppd_http *h, vout **o)
{
    struct MHD_IoVec iov[2];
    unsigned n = 0;
    struct MHD_Response *resp;
    vout *v = *o;

    if (v->head_len)
        iov[n++] = (struct MHD_IoVec){v->head, v->head_len};
    if (v->body.len)
        iov[n++] = (struct MHD_IoVec){v->body.data, v->body.len};
    resp = MHD_create_response_from_iovec(iov, n, vout_free, v);
    if (!resp)
        return NULL;
    v->h = h;
    v->held = v->head_len + v->body.len;
    dvpp_device_hold_bytes(h->device, v->held, true, NULL);
    dvppd_metrics_result(h->metrics, (int64_t)v->held);
    *o = NULL;
    return resp;
}

/* --- requests ------------------------------------------------------------------ */

typedef enum req_state {
    REQ_READING,   /* headers seen, body arriving */
    REQ_RUNNING,   /* submitted to the device */
    REQ_ANSWERED,
} req_state;

/* A multipart part: its name and bytes, pointing into the request's body. */
typedef dvppd_mpart part;

struct video;
static void video_free(struct video *v);

typedef struct req {
    dvppd_http *h;
    const dvppd_settings *set;         /* referenced: this request's settings */
    struct MHD_Connection *conn;
    dvppd_route route;
    uint64_t job_id;                   /* job routes */
    uint64_t t_start, t_read, deadline;
    req_state state;
    /* body */
    uint64_t limit, received;
    uint64_t reserved;                 /* of dvppd_http.body_bytes */
    uint8_t *body;                     /* buf_get: the whole body */
    size_t body_cap, body_len;
    bool multipart;                    /* multipart/form-data: split at dispatch */
    char boundary[DVPPD_BOUNDARY_MAX + 1];
    part *parts;                       /* into @body */
    unsigned nparts, max_parts;
    /* the job */
    dvppd_spec spec;
    dvpp_stream *stream;
    dvpp_pipejob pj;
    dvpp_pipeline_out out;
    uint8_t *result;                   /* buf_get: .npy header + data */
    size_t result_len, header_len;
    dvpp_batchjob *bj;
    dvpp_batchjob_input *inputs;
    size_t ninputs;
    dvppd_ring_ticket ticket;          /* ?ring=NAME: the slot written */
    struct video *vid;                 /* the video routes' job, else NULL */
    uint64_t t_submit;
    pthread_mutex_t mu;                /* guards the three below */
    bool suspended, done;
    dvpp_status status;
    dvpp_err err;
} req;

static req *req_new(dvppd_http *h, struct MHD_Connection *conn)
{
    req *r = calloc(1, sizeof(*r));

    if (!r)
        return NULL;
    if (pthread_mutex_init(&r->mu, NULL) != 0) {
        free(r);
        return NULL;
    }
    r->h = h;
    r->set = dvppd_live_get(h->live);
    r->conn = conn;
    r->t_start = dvpp_now_ns();
    r->deadline = r->t_start + (uint64_t)r->set->cfg.http.request_timeout_s * 1000000000u;
    dvpp_buf_init(&r->out.encoded);
    return r;
}

/* The single-image body limit: http.max_body_bytes, 0 = limits.max_encoded_bytes. */
static uint64_t max_body(const dvppd_settings *set)
{
    return set->cfg.http.max_body_bytes ? set->cfg.http.max_body_bytes
                                        : set->cfg.limits.max_encoded_bytes;
}

/* Reserve @n more bytes of the body memory budget (http.max_body_memory). */
static bool reserve_body(req *r, uint64_t n)
{
    uint64_t cur = atomic_load(&r->h->body_bytes);

    do {
        if (cur + n > r->set->cfg.http.max_body_memory)
            return false;
    } while (!atomic_compare_exchange_weak(&r->h->body_bytes, &cur, cur + n));
    r->reserved += n;
    return true;
}

static void req_free(req *r)
{
    if (!r)
        return;
    atomic_fetch_sub(&r->h->body_bytes, r->reserved);
    /* Both wait for a job still running (only possible if the connection
     * died between submit and suspend, which libmicrohttpd cannot do). */
    dvpp_stream_free(r->stream);
    dvpp_batchjob_free(r->bj);
    video_free(r->vid);
    if (r->ticket.ring) /* reserved, never answered: give the slot back */
        dvppd_sock_ring_deliver(r->h->sock, &r->ticket, false, NULL, NULL);
    free(r->parts);
    free(r->inputs);
    buf_put(r->h, r->body);
    result_unref(r->result);
    dvpp_buf_fini(&r->out.encoded);
    dvppd_settings_put(r->set);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* --- answers -------------------------------------------------------------------- */

static unsigned http_status(dvpp_status st, const char *field)
{
    switch (st) {
    case DVPP_OK: return 200;
    case DVPP_EINVAL: return 400;
    case DVPP_ENOTFOUND: return 404;
    case DVPP_EBUSY: return 409;
    case DVPP_EUNSUPPORTED: return 415;
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

/* A JSON string of @s; bytes that are not printable ASCII become '?'
 * (messages may quote request bytes, and JSON wants valid UTF-8). */
static json_t *jstr(const char *s)
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

static void add_header(struct MHD_Response *resp, const char *k, const char *v)
{
    MHD_add_response_header(resp, k, v);
}

/* Queue @resp with @code and count it; takes @resp. */
static enum MHD_Result answer(req *r, unsigned code, struct MHD_Response *resp)
{
    enum MHD_Result ret;

    if (!resp)
        return MHD_NO; /* out of memory: drop the connection */
    if (atomic_load(&r->h->draining))
        add_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    ret = MHD_queue_response(r->conn, code, resp);
    MHD_destroy_response(resp);
    r->state = REQ_ANSWERED;
    dvppd_metrics_request(r->h->metrics, r->route, code, dvpp_now_ns() - r->t_start);
    return ret;
}

/* A compact JSON body (takes @body); NULL when out of memory. */
static struct MHD_Response *json_response(json_t *body)
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
    add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return resp;
}

static enum MHD_Result answer_json(req *r, unsigned code, json_t *body)
{
    return answer(r, code, json_response(body));
}

static enum MHD_Result answer_error_code(req *r, unsigned code, dvpp_status st,
                                         const char *field, const char *msg)
{
    struct MHD_Response *resp = json_response(
        json_pack("{s:{s:s, s:o, s:o}}", "error", "code", dvpp_status_name(st), "message",
                  jstr(msg && *msg ? msg : dvpp_strerror(st)), "field", jstr(field)));

    if (!resp)
        return MHD_NO;
    if (code == 503 || code == 429)
        add_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (code == 405)
        add_header(resp, MHD_HTTP_HEADER_ALLOW, field && *field ? field : "GET");
    return answer(r, code, resp);
}

static enum MHD_Result answer_error(req *r, const dvpp_err *e)
{
    return answer_error_code(r, http_status(e->status, e->field), e->status, e->field,
                             e->msg);
}

static enum MHD_Result answer_status(req *r, dvpp_status st, const char *field,
                                     const char *msg)
{
    return answer_error_code(r, http_status(st, field), st, field, msg);
}

/* --- routes ------------------------------------------------------------------------ */

typedef struct route_def {
    const char *path;
    const char *method;   /* GET also serves HEAD */
    dvppd_route route;
} route_def;

static const route_def k_routes[] = {
    {"/v1/preprocess", "POST", DVPPD_ROUTE_PREPROCESS},
    {"/v1/image", "POST", DVPPD_ROUTE_IMAGE},
    {"/v1/decode", "POST", DVPPD_ROUTE_DECODE},
    {"/v1/batch", "POST", DVPPD_ROUTE_BATCH},
    {"/v1/jobs", "POST", DVPPD_ROUTE_JOBS},
    {"/healthz", "GET", DVPPD_ROUTE_HEALTHZ},
    {"/readyz", "GET", DVPPD_ROUTE_READYZ},
    {"/metrics", "GET", DVPPD_ROUTE_METRICS},
    {"/v1/info", "GET", DVPPD_ROUTE_INFO},
    {"/v1/video/decode", "POST", DVPPD_ROUTE_VIDEO_DECODE},
    {"/v1/video/encode", "POST", DVPPD_ROUTE_VIDEO_ENCODE},
};

static bool method_is(const char *m, const char *want)
{
    return !strcmp(m, want) || (!strcmp(want, "GET") && !strcmp(m, "HEAD"));
}

/* "/v1/jobs/{id}" or "/v1/jobs/{id}/result" */
static bool parse_job_path(const char *url, uint64_t *id, bool *result)
{
    const char *p = url + strlen("/v1/jobs/");
    char *end;

    if (strncmp(url, "/v1/jobs/", 9) || *p < '1' || *p > '9')
        return false;
    errno = 0;
    *id = strtoull(p, &end, 10);
    if (errno)
        return false;
    *result = !strcmp(end, "/result");
    return *end == '\0' || *result;
}

/* Route @r by url and method; on a mismatch answer 404/405 and return
 * false. */
static bool route_request(req *r, const char *url, const char *method,
                          enum MHD_Result *ret)
{
    bool result;

    for (size_t i = 0; i < sizeof(k_routes) / sizeof(k_routes[0]); i++) {
        if (strcmp(url, k_routes[i].path))
            continue;
        r->route = k_routes[i].route;
        if (method_is(method, k_routes[i].method))
            return true;
        *ret = answer_error_code(r, 405, DVPP_EINVAL, k_routes[i].method,
                                 "method not allowed");
        return false;
    }
    if (parse_job_path(url, &r->job_id, &result)) {
        r->route = result ? DVPPD_ROUTE_JOB_RESULT : DVPPD_ROUTE_JOB;
        if (method_is(method, "GET") || (!result && !strcmp(method, "DELETE")))
            return true;
        *ret = answer_error_code(r, 405, DVPP_EINVAL, result ? "GET" : "GET, DELETE",
                                 "method not allowed");
        return false;
    }
    r->route = DVPPD_ROUTE_OTHER;
    *ret = answer_status(r, DVPP_ENOTFOUND, "path", "no such endpoint");
    return false;
}

static bool route_is_video(dvppd_route r)
{
    return r == DVPPD_ROUTE_VIDEO_DECODE || r == DVPPD_ROUTE_VIDEO_ENCODE;
}

static bool route_has_body(dvppd_route r)
{
    return r <= DVPPD_ROUTE_JOBS || route_is_video(r);
}

static bool route_is_batch(dvppd_route r)
{
    return r == DVPPD_ROUTE_BATCH || r == DVPPD_ROUTE_JOBS;
}

/* --- body intake -------------------------------------------------------------------- */

static bool is_multipart(struct MHD_Connection *c)
{
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_TYPE);
    return ct && !strncasecmp(ct, "multipart/form-data", 19);
}

/* The parts of a multipart body, once it is complete: counted, then
 * split into an array of exactly that many (pointing into the body). */
static dvpp_status split_parts(req *r, dvpp_err *err)
{
    unsigned n = 0;
    dvpp_status st = dvppd_multipart_parse(r->body, r->body_len, r->boundary, NULL,
                                           r->max_parts, &n, err);

    if (st == DVPP_ELIMIT)
        return route_is_batch(r->route)
                   ? dvpp_err_set(err, DVPP_ELIMIT, "parts", "more than %u parts "
                                  "(http.max_batch_items)", r->max_parts - 2)
                   : dvpp_err_set(err, DVPP_ELIMIT, "parts", "more than %u parts: one "
                                  "input, spec and aipp", r->max_parts);
    if (st != DVPP_OK || n == 0)
        return st;
    r->parts = calloc(n, sizeof(*r->parts));
    if (!r->parts)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory for %u parts", n);
    st = dvppd_multipart_parse(r->body, r->body_len, r->boundary, r->parts, r->max_parts,
                               &r->nparts, err);
    return st;
}

/* Headers are in: decide the body's fate before reading any of it. */
static enum MHD_Result start_body(req *r, bool *answered)
{
    struct MHD_Connection *c = r->conn;
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_TRANSFER_ENCODING);
    unsigned long long len = 0;
    char msg[160];

    *answered = true;
    /* A video is bounded by limits.max_video_bytes; the frames of an encode
     * are raw pixels, bounded as a batch of images is. */
    r->limit = r->route == DVPPD_ROUTE_VIDEO_DECODE ? r->set->cfg.limits.max_video_bytes
               : route_is_batch(r->route) || r->route == DVPPD_ROUTE_VIDEO_ENCODE
                   ? r->set->cfg.http.max_batch_bytes
                   : max_body(r->set);
    if (cl) {
        char *end;
        errno = 0;
        len = strtoull(cl, &end, 10);
        if (errno || *end || *cl < '0' || *cl > '9')
            return answer_status(r, DVPP_EINVAL, "Content-Length", "bad Content-Length");
    } else if (!te || strcasecmp(te, "chunked")) {
        return answer_error_code(r, 411, DVPP_EINVAL, "Content-Length",
                                 "a body needs Content-Length or chunked encoding");
    }
    if (len > r->limit) {
        snprintf(msg, sizeof(msg), "body of %llu bytes is above the limit of %llu",
                 len, (unsigned long long)r->limit);
        dvppd_metrics_reject(r->h->metrics, DVPPD_REJECT_BODY);
        return answer_status(r, DVPP_ELIMIT, "body", msg);
    }
    if (cl && !reserve_body(r, len))
        return answer_status(r, DVPP_EAGAIN, "body_memory",
                             "too many bodies being received (http.max_body_memory); "
                             "retry later");
    if (is_multipart(c)) {
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_TYPE);
        r->multipart = true;
        r->max_parts = (route_is_batch(r->route) ? r->set->cfg.http.max_batch_items : 1) + 2;
        if (!dvppd_multipart_boundary(ct, r->boundary, sizeof(r->boundary)))
            return answer_status(r, DVPP_EINVAL, "Content-Type",
                                 "bad multipart/form-data (boundary?)");
    }
    if (cl && len) {
        r->body = buf_get(r->h, (size_t)len);
        if (!r->body)
            return answer_status(r, DVPP_ENOMEM, "body", "out of memory for the body");
        r->body_cap = (size_t)len;
    }
    *answered = false;
    return MHD_YES;
}

/* A chunk of body after the request's deadline: counted, and the caller
 * closes the connection (a response cannot be queued mid-body). Every body
 * is held to the deadline, also one that is skipped (a GET's, or one after
 * an early answer): a client trickling it would otherwise keep the
 * connection and its request for as long as it likes. */
static bool body_past_deadline(req *r)
{
    if (dvpp_now_ns() <= r->deadline)
        return false;
    dvppd_metrics_reject(r->h->metrics, DVPPD_REJECT_DEADLINE);
    dvppd_metrics_request(r->h->metrics, r->route, 408, dvpp_now_ns() - r->t_start);
    return true;
}

/* One chunk of body. MHD_NO (close the connection) when it passes the
 * deadline or the limit: a response cannot be queued mid-body. */
static enum MHD_Result take_body(req *r, const char *data, size_t size)
{
    if (body_past_deadline(r))
        return MHD_NO;
    if (!route_has_body(r->route))
        return MHD_YES; /* a body on GET/DELETE means nothing: skip it */
    if (r->received + size > r->limit) {
        dvppd_metrics_reject(r->h->metrics, DVPPD_REJECT_BODY);
        dvppd_metrics_request(r->h->metrics, r->route, 413, dvpp_now_ns() - r->t_start);
        return MHD_NO;
    }
    r->received += size;
    if (r->received > r->reserved && !reserve_body(r, r->received - r->reserved)) {
        dvppd_metrics_request(r->h->metrics, r->route, 503, dvpp_now_ns() - r->t_start);
        return MHD_NO; /* chunked, and the budget is used up */
    }
    if (r->body_len + size > r->body_cap) { /* chunked: grow */
        size_t cap = r->body_cap ? r->body_cap : 64u << 10;
        uint8_t *nb;
        while (cap < r->body_len + size)
            cap *= 2;
        if (cap > r->limit)
            cap = (size_t)r->limit;
        nb = buf_get(r->h, cap);
        if (!nb)
            return MHD_NO;
        if (r->body_len)
            memcpy(nb, r->body, r->body_len);
        buf_put(r->h, r->body);
        r->body = nb;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, size);
    r->body_len += size;
    return MHD_YES;
}

/* --- the request's spec --------------------------------------------------------------- */

typedef struct query {
    dvppd_kv kv[MAX_QUERY_ARGS];
    size_t n;
    bool overflow;
    const char *spec;
} query;

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
    query *q = cls;

    (void)kind;
    if (!strcmp(key, "spec")) {
        q->spec = value ? value : "";
        return MHD_YES;
    }
    if (q->n == MAX_QUERY_ARGS) {
        q->overflow = true;
        return MHD_NO;
    }
    q->kv[q->n++] = (dvppd_kv){key, value};
    return MHD_YES;
}

static const part *find_part(const req *r, const char *name)
{
    for (unsigned i = 0; i < r->nparts; i++)
        if (!strcmp(r->parts[i].name, name))
            return &r->parts[i];
    return NULL;
}

static bool is_control_part(const part *p)
{
    return !strcmp(p->name, "spec") || !strcmp(p->name, "aipp");
}

static dvpp_status build_spec(req *r, dvppd_spec_kind kind, dvpp_err *err)
{
    const char *hdr = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Dvpp-Spec");
    const part *sp = find_part(r, "spec"), *ap = find_part(r, "aipp");
    dvppd_spec_env env = {kind, dvppd_aipp_find, (void *)&r->set->aipp, NULL, 0};
    const char *json = NULL;
    size_t json_len = 0;
    int sources = 0;
    query q;

    memset(&q, 0, sizeof(q));
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, on_arg, &q);
    if (q.overflow)
        return dvpp_err_set(err, DVPP_EINVAL, "query", "more than %d query parameters",
                            MAX_QUERY_ARGS);
    if (ap) {
        env.aipp_text = (const char *)ap->data;
        env.aipp_len = ap->len;
    }
    if (q.spec)
        json = q.spec, json_len = strlen(q.spec), sources++;
    if (hdr)
        json = hdr, json_len = strlen(hdr), sources++;
    if (sp)
        json = (const char *)sp->data, json_len = sp->len, sources++;
    if (sources > 1)
        return dvpp_err_set(err, DVPP_EINVAL, "spec",
                            "one JSON spec: the query, the X-Dvpp-Spec header or the "
                            "spec part");
    if (!json)
        return dvppd_spec_from_query(&env, q.kv, q.n, &r->spec, err);
    if (q.n) /* a spec says everything: nothing may sit beside it */
        return dvpp_err_set(err, DVPP_EINVAL, q.kv[0].key,
                            dvppd_spec_is_param(q.kv[0].key)
                                ? "%s: give it in the JSON spec, not beside it"
                                : "unknown parameter '%.64s'",
                            q.kv[0].key);
    return dvppd_spec_from_json(&env, json, json_len, &r->spec, err);
}

/* The one image of a single-image request: the body, or its image part. */
static dvpp_status single_input(const req *r, const uint8_t **in, size_t *len,
                                dvpp_err *err)
{
    const part *img = NULL;

    if (!r->multipart) {
        *in = r->body, *len = r->body_len;
    } else {
        for (unsigned i = 0; i < r->nparts; i++) {
            if (is_control_part(&r->parts[i]))
                continue;
            if (img)
                return dvpp_err_set(err, DVPP_EINVAL, "body",
                                    "one image part (named image) expected");
            img = &r->parts[i];
        }
        *in = img ? img->data : NULL;
        *len = img ? img->len : 0;
    }
    if (!*in || !*len)
        return dvpp_err_set(err, DVPP_EINVAL, "body", "no image in the body");
    return DVPP_OK;
}

/* --- completion --------------------------------------------------------------------- */

static void finish(req *r, dvpp_status st, const dvpp_err *err)
{
    pthread_mutex_lock(&r->mu);
    r->status = st;
    if (err && st != DVPP_OK)
        r->err = *err;
    r->done = true;
    if (r->suspended) {
        r->suspended = false;
        MHD_resume_connection(r->conn);
        atomic_fetch_sub(&r->h->suspended, 1);
    }
    pthread_mutex_unlock(&r->mu);
    /* r may be freed from here on. */
}

static void single_done(void *ctx, dvpp_status st, const dvpp_err *err)
{
    finish(ctx, st, err);
}

static void batch_done(void *ctx)
{
    finish(ctx, DVPP_OK, NULL);
}

/* Suspend until finish() unless it already ran. True when suspended. */
static bool wait_for_job(req *r)
{
    bool suspended;

    pthread_mutex_lock(&r->mu);
    suspended = !r->done;
    if (suspended) {
        r->suspended = true;
        atomic_fetch_add(&r->h->suspended, 1);
        MHD_suspend_connection(r->conn);
    }
    pthread_mutex_unlock(&r->mu);
    return suspended;
}

/* --- single-image endpoints ------------------------------------------------------- */

static dvppd_spec_kind route_kind(dvppd_route r)
{
    return r == DVPPD_ROUTE_IMAGE ? DVPPD_SPEC_IMAGE
                                  : r == DVPPD_ROUTE_DECODE ? DVPPD_SPEC_DECODE
                                                            : DVPPD_SPEC_TENSOR;
}

/* Where tensor @t goes: a slot of the named ring (?ring=NAME), or one
 * result buffer holding the .npy header (unless raw) and the tensor. */
static dvpp_status tensor_destination(req *r, dvpp_tensor *t, dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    uint8_t *dest;
    dvpp_status rs;

    if (r->spec.ring[0]) {
        dvpp_status st = dvppd_sock_ring_reserve(r->h->sock, r->spec.ring, t->bytes,
                                                 &r->ticket, &dest, err);
        t->data = dest;
        return st;
    }
    r->header_len = r->spec.raw_out ? 0
                                    : dvpp_npy_header(hdr, dvpp_dtype_npy(t->dtype),
                                                      t->shape, t->ndim);
    r->result_len = r->header_len + t->bytes;
    rs = result_get(r->h, &r->set->cfg.limits, r->result_len, (void **)&r->result, err);
    if (rs != DVPP_OK)
        return rs;
    memcpy(r->result, hdr, r->header_len);
    t->data = r->result + r->header_len;
    return DVPP_OK;
}

static dvpp_status alloc_tensor(req *r, const dvpp_pipeline_plan *pl, dvpp_err *err)
{
    dvpp_tensor *t = &r->out.tensor;
    dvpp_status st = dvpp_tensor_init(t, pl->dtype, pl->layout, 1, pl->c, pl->h, pl->w,
                                      err);

    r->out.n = 0;
    return st == DVPP_OK ? tensor_destination(r, t, err) : st;
}

/* The image geometry a decode run will fill (for the .npy header). */
static dvpp_status alloc_pixels(req *r, const dvpp_pipeline_plan *pl, dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    dvpp_image img;
    dvpp_planes planes;
    int64_t shape[3];
    dvpp_status st;

    st = dvpp_image_init(&img, pl->out_format, pl->img_w, pl->img_h,
                         r->spec.pipe.out_align_w, r->spec.pipe.out_align_h, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(&img, &planes, err);
    if (st != DVPP_OK)
        return st;
    r->header_len = r->spec.raw_out
                        ? 0
                        : dvpp_npy_header(hdr, "|u1", shape,
                                          dvpp_npy_image_shape(&img, &planes, shape));
    r->result_len = r->header_len + pl->out_bytes;
    st = result_get(r->h, &r->set->cfg.limits, r->result_len, (void **)&r->result, err);
    if (st != DVPP_OK)
        return st;
    memcpy(r->result, hdr, r->header_len);
    r->out.image.data = r->result + r->header_len;
    r->out.image.size = pl->out_bytes;
    return DVPP_OK;
}

/* Validate, probe, size the answer, submit. */
static dvpp_status submit_single(req *r, dvpp_err *err)
{
    dvpp_pipeline *p = &r->spec.pipe;
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    const uint8_t *in = NULL;
    size_t len = 0;
    dvpp_status st;

    st = build_spec(r, route_kind(r->route), err);
    if (st == DVPP_OK && r->route == DVPPD_ROUTE_DECODE && !r->spec.raw_out &&
        dvpp_pixfmt_get(p->out_format) && dvpp_pixfmt_get(p->out_format)->planes == 1)
        p->out_align_w = p->out_align_h = 0; /* .npy of packed pixels has no padding */
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(p, &r->set->cfg.limits, err);
    if (st == DVPP_OK)
        st = single_input(r, &in, &len, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_probe(p, in, len, &r->set->cfg.limits, &src, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(p, &src, &plan, err);
    if (st == DVPP_OK && p->output == DVPP_PIPE_OUT_TENSOR)
        st = alloc_tensor(r, &plan, err);
    else if (st == DVPP_OK && p->encoding == DVPP_PIPE_ENC_NONE)
        st = alloc_pixels(r, &plan, err);
    else if (st == DVPP_OK) /* encoded: bounded by the image it encodes */
        st = dvpp_limits_check_output(&r->set->cfg.limits, plan.out_bytes, err);
    if (st == DVPP_OK)
        st = dvpp_stream_new(r->h->device, 0, &r->stream, err);
    if (st != DVPP_OK)
        return st;
    r->pj = (dvpp_pipejob){
        .pipe = p,
        .input = in,
        .len = len,
        .out = &r->out,
        .pixels = src.is_jpeg ? (uint64_t)src.jpeg.width * src.jpeg.height
                              : (uint64_t)src.width * src.height,
        .bytes = len, /* the result buffer holds its own bytes (result_get) */
        .deadline_ns = r->deadline,
        .done = single_done,
        .ctx = r,
    };
    r->t_submit = dvpp_now_ns();
    return dvpp_pipejob_submit(r->stream, &r->pj, NULL, err);
}

static void header_printf(struct MHD_Response *resp, const char *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void header_printf(struct MHD_Response *resp, const char *k, const char *fmt, ...)
{
    char v[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    add_header(resp, k, v);
}

static uint64_t us(uint64_t ns)
{
    return ns / 1000;
}

/* Stage times into the metrics and the X-Dvpp-Timing header. */
static void add_timing(req *r, struct MHD_Response *resp)
{
    dvppd_metrics *m = r->h->metrics;
    const uint64_t *s = r->out.stage_ns;
    uint64_t now = dvpp_now_ns();
    uint64_t read = r->t_read - r->t_start;
    uint64_t queue = r->pj.started_ns > r->t_submit ? r->pj.started_ns - r->t_submit : 0;

    dvppd_metrics_stage(m, DVPPD_STAGE_READ, read);
    dvppd_metrics_stage(m, DVPPD_STAGE_QUEUE, queue);
    dvppd_metrics_stage(m, DVPPD_STAGE_DECODE, s[DVPP_PIPE_STAGE_DECODE]);
    dvppd_metrics_stage(m, DVPPD_STAGE_VPC, s[DVPP_PIPE_STAGE_VPC]);
    dvppd_metrics_stage(m, DVPPD_STAGE_POST, s[DVPP_PIPE_STAGE_POST]);
    dvppd_metrics_stage(m, DVPPD_STAGE_TOTAL, now - r->t_start);
    header_printf(resp, "X-Dvpp-Timing",
                  "read=%" PRIu64 ";queue=%" PRIu64 ";decode=%" PRIu64 ";vpc=%" PRIu64
                  ";post=%" PRIu64 ";total=%" PRIu64,
                  us(read), us(queue), us(s[DVPP_PIPE_STAGE_DECODE]),
                  us(s[DVPP_PIPE_STAGE_VPC]), us(s[DVPP_PIPE_STAGE_POST]),
                  us(now - r->t_start));
}

static void add_geometry(struct MHD_Response *resp, const dvpp_pipe_geom *g)
{
    header_printf(resp, "X-Dvpp-Scale", "%.17g,%.17g", g->scale_x, g->scale_y);
    header_printf(resp, "X-Dvpp-Pad", "%.17g,%.17g", g->pad_x, g->pad_y);
}

static void add_tensor_headers(struct MHD_Response *resp, const dvpp_tensor *t)
{
    char shape[128] = "";
    size_t n = 0;

    for (unsigned i = 0; i < t->ndim && n < sizeof(shape); i++)
        n += (size_t)snprintf(shape + n, sizeof(shape) - n, "%s%" PRId64, i ? "," : "",
                              t->shape[i]);
    add_header(resp, "X-Dvpp-Shape", shape);
    add_header(resp, "X-Dvpp-Dtype",
               t->dtype == DVPP_DTYPE_F32 ? "float32"
               : t->dtype == DVPP_DTYPE_F16 ? "float16"
               : t->dtype == DVPP_DTYPE_I8 ? "int8" : "uint8");
    add_header(resp, "X-Dvpp-Layout", t->layout == DVPP_LAYOUT_NCHW   ? "NCHW"
                                      : t->layout == DVPP_LAYOUT_NHWC ? "NHWC"
                                                                      : "NC1HWC0");
}

/* Hand the result buffer to libmicrohttpd (released by buf_release_mhd). */
static struct MHD_Response *result_response(req *r)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(
        r->result_len, r->result, buf_release_mhd);

    if (resp)
        r->result = NULL;
    return resp;
}

/* The encoded image, moved out of the request into libmicrohttpd's
 * response (no copy). */
static struct MHD_Response *encoded_response(req *r)
{
    vout *o = calloc(1, sizeof(*o));
    struct MHD_Response *resp;

    if (!o)
        return NULL;
    o->body = r->out.encoded;
    dvpp_buf_init(&r->out.encoded);
    resp = vout_response(r->h, &o);
    vout_free(o); /* NULL once handed over */
    return resp;
}

/* ?ring=NAME: lease the slot to the ring's consumer (it gets a notice) and
 * answer with where the tensor is. */
static struct MHD_Response *ring_response(req *r, const dvpp_tensor *t,
                                          const dvpp_pipe_geom *g, dvpp_err *err)
{
    ipc_slot_meta m;
    uint32_t gen = 0;
    uint32_t slot = r->ticket.slot, id = r->ticket.ring_id;
    uint64_t offset = r->ticket.offset;
    json_t *shape = json_array();

    dvppd_slot_meta_tensor(&m, t, g);
    if (dvppd_sock_ring_deliver(r->h->sock, &r->ticket, true, &m, &gen) != DVPP_OK) {
        json_decref(shape);
        dvpp_err_set(err, DVPP_ECANCELED, "ring", "the ring closed before the job finished");
        return NULL;
    }
    for (unsigned i = 0; shape && i < t->ndim; i++)
        json_array_append_new(shape, json_integer(t->shape[i]));
    return json_response(json_pack(
        "{s:s, s:I, s:I, s:I, s:I, s:o, s:s, s:s, s:I, s:f, s:f, s:f, s:f}", "ring",
        r->spec.ring, "ring_id", (json_int_t)id, "slot", (json_int_t)slot, "generation",
        (json_int_t)gen, "offset", (json_int_t)offset, "shape", shape ? shape : json_array(),
        "dtype", t->dtype == DVPP_DTYPE_F32 ? "float32" : t->dtype == DVPP_DTYPE_F16
                 ? "float16" : t->dtype == DVPP_DTYPE_I8 ? "int8" : "uint8",
        "layout", t->layout == DVPP_LAYOUT_NCHW ? "NCHW"
                  : t->layout == DVPP_LAYOUT_NHWC ? "NHWC" : "NC1HWC0",
        "bytes", (json_int_t)t->bytes, "scale_x", g ? g->scale_x : 1.0, "scale_y",
        g ? g->scale_y : 1.0, "pad_x", g ? g->pad_x : 0.0, "pad_y", g ? g->pad_y : 0.0));
}

static enum MHD_Result answer_single(req *r)
{
    const dvpp_pipeline *p = &r->spec.pipe;
    struct MHD_Response *resp;
    const dvpp_image *img = &r->out.image;

    if (r->status != DVPP_OK)
        return answer_error(r, &r->err);
    if (r->ticket.ring) {
        resp = ring_response(r, &r->out.tensor, &r->out.geom, &r->err);
        if (!resp)
            return answer_error(r, &r->err);
        add_timing(r, resp);
        add_tensor_headers(resp, &r->out.tensor);
        return answer(r, 200, resp);
    }
    if (p->output == DVPP_PIPE_OUT_TENSOR || p->encoding == DVPP_PIPE_ENC_NONE)
        resp = result_response(r);
    else
        resp = encoded_response(r);
    if (!resp)
        return MHD_NO;
    add_timing(r, resp);
    add_geometry(resp, &r->out.geom);
    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        add_tensor_headers(resp, &r->out.tensor);
        add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                   r->spec.raw_out ? "application/octet-stream" : "application/x-npy");
        dvppd_metrics_pixels(r->h->metrics, (uint64_t)r->out.plan.h * r->out.plan.w);
        return answer(r, 200, resp);
    }
    header_printf(resp, "X-Dvpp-Width", "%u", r->out.plan.img_w);
    header_printf(resp, "X-Dvpp-Height", "%u", r->out.plan.img_h);
    dvppd_metrics_pixels(r->h->metrics, (uint64_t)r->out.plan.img_w * r->out.plan.img_h);
    if (p->encoding != DVPP_PIPE_ENC_NONE) {
        add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                   p->encoding == DVPP_PIPE_ENC_PNG ? "image/png" : "image/jpeg");
        return answer(r, 200, resp);
    }
    add_header(resp, "X-Dvpp-Format", dvpp_pixfmt_name(img->format));
    header_printf(resp, "X-Dvpp-Width-Stride", "%u", img->width_stride);
    header_printf(resp, "X-Dvpp-Height-Stride", "%u", img->height_stride);
    add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
               r->spec.raw_out ? "application/octet-stream" : "application/x-npy");
    return answer(r, 200, resp);
}

/* --- batches ------------------------------------------------------------------------- */

/* Image parts as batch inputs (borrowed from the parts). */
static dvpp_status batch_inputs(req *r, dvpp_err *err)
{
    size_t n = 0;

    if (!r->multipart)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "Content-Type",
                            "a batch body is multipart/form-data");
    r->inputs = calloc(r->nparts ? r->nparts : 1, sizeof(*r->inputs));
    if (!r->inputs)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "batch inputs");
    for (unsigned i = 0; i < r->nparts; i++)
        if (!is_control_part(&r->parts[i]))
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
static dvpp_status prepare_batch(req *r, dvpp_tensor *t, dvpp_err *err)
{
    dvpp_status st = build_spec(r, DVPPD_SPEC_TENSOR, err);

    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&r->spec.pipe, &r->set->cfg.limits, err);
    if (st == DVPP_OK)
        st = batch_inputs(r, err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&r->spec.pipe, (uint32_t)r->ninputs, t, err);
    if (st == DVPP_OK && r->spec.ring[0] && r->route == DVPPD_ROUTE_JOBS)
        st = dvpp_err_set(err, DVPP_EINVAL, "ring", "jobs keep their result; ?ring= is for "
                          "/v1/preprocess and /v1/batch");
    return st == DVPP_OK ? tensor_destination(r, t, err) : st;
}

static dvpp_status submit_batch(req *r, dvpp_err *err)
{
    dvpp_batchjob_opts o = {.deadline_ns = r->deadline, .done = batch_done, .ctx = r};
    dvpp_tensor t;
    dvpp_status st = prepare_batch(r, &t, err);

    if (st != DVPP_OK)
        return st;
    r->out.tensor = t;
    o.strict = r->spec.strict;
    o.output_held = r->result != NULL; /* a result buffer, not a ring slot */
    r->t_submit = dvpp_now_ns();
    return dvpp_batchjob_start_opts(r->h->device, &r->spec.pipe, r->inputs, r->ninputs,
                                    &t, &o, &r->bj, err);
}

/* X-Dvpp-Items-Failed, X-Dvpp-Item-Status and X-Dvpp-Item-Errors of a
 * finished batch. The status list is left out when it would not fit a
 * quarter of the connection's memory (libmicrohttpd builds headers there);
 * the failed items are then still in X-Dvpp-Item-Errors (first 32) and in
 * GET /v1/jobs/{id}. */
static void add_item_headers(struct MHD_Response *resp, dvpp_batchjob *bj, size_t n,
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
        if (st != DVPP_OK && errors && json_array_size(errors) < ERRORS_LISTED)
            json_array_append_new(errors, json_pack("{s:I, s:s, s:o}", "index",
                                                    (json_int_t)i, "code",
                                                    dvpp_status_name(st), "message",
                                                    jstr(e.msg[0] ? e.msg
                                                                  : dvpp_strerror(st))));
    }
    header_printf(resp, "X-Dvpp-Items-Failed", "%zu", failed);
    if (status)
        add_header(resp, "X-Dvpp-Item-Status", status);
    if (errors) {
        char *text = json_dumps(errors, JSON_COMPACT | JSON_ENSURE_ASCII);
        if (text)
            add_header(resp, "X-Dvpp-Item-Errors", text);
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

static enum MHD_Result answer_batch(req *r)
{
    struct MHD_Response *resp;
    dvpp_err e;
    dvpp_status st;

    dvpp_err_clear(&e);
    st = dvpp_batchjob_wait(r->bj, &e); /* finished: returns at once */
    if (st != DVPP_OK) {
        name_failed_item(r->bj, &e);
        return answer_error(r, &e);
    }
    if (r->ticket.ring) {
        resp = ring_response(r, &r->out.tensor, NULL, &e);
        if (!resp)
            return answer_error(r, &e);
    } else {
        resp = result_response(r);
    }
    if (!resp)
        return MHD_NO;
    add_item_headers(resp, r->bj, r->ninputs, r->h->cfg.connection_memory);
    add_tensor_headers(resp, &r->out.tensor);
    header_printf(resp, "X-Dvpp-Timing", "read=%" PRIu64 ";total=%" PRIu64,
                  us(r->t_read - r->t_start), us(dvpp_now_ns() - r->t_start));
    add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
               r->spec.raw_out ? "application/octet-stream" : "application/x-npy");
    dvppd_metrics_pixels(r->h->metrics, (uint64_t)r->ninputs * r->out.tensor.h *
                                            r->out.tensor.w);
    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_READ, r->t_read - r->t_start);
    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_TOTAL, dvpp_now_ns() - r->t_start);
    return answer(r, 200, resp);
}

/* --- jobs ---------------------------------------------------------------------------- */

static enum MHD_Result create_job(req *r)
{
    dvppd_job_desc d;
    dvpp_tensor t;
    dvpp_err e;
    dvpp_status st;
    uint64_t id = 0;
    char loc[64];
    struct MHD_Response *resp;

    dvpp_err_clear(&e);
    dvppd_jobs_gc(r->h->jobs);
    st = prepare_batch(r, &t, &e);
    if (st != DVPP_OK)
        return answer_error(r, &e);
    /* The job takes the body (its inputs point into it) and the result. */
    d = (dvppd_job_desc){
        .device = r->h->device, .pipe = &r->spec.pipe, .inputs = r->inputs,
        .n = r->ninputs, .body = r->body, .strict = r->spec.strict, .deadline_ns = 0,
        .result = r->result, .result_len = r->result_len, .header_len = r->header_len,
        .tensor = t, .release = buf_release_job, .release_ctx = r->h, .output_held = true,
    };
    r->body = NULL, r->result = NULL;
    st = dvppd_jobs_start(r->h->jobs, &d, &id, &e);
    if (st != DVPP_OK)
        return answer_error(r, &e);
    snprintf(loc, sizeof(loc), "/v1/jobs/%" PRIu64, id);
    resp = json_response(json_pack("{s:s, s:s, s:I, s:s}", "id", loc + 9, "state",
                                   "running", "total", (json_int_t)r->ninputs, "href", loc));
    if (!resp)
        return MHD_NO;
    add_header(resp, MHD_HTTP_HEADER_LOCATION, loc);
    return answer(r, 202, resp);
}

static json_t *job_json(dvppd_job *j)
{
    dvpp_batch_progress p;
    dvpp_status st;
    dvpp_err e;
    dvppd_job_state s;
    json_t *items = json_array(), *o;
    char id[32];

    dvpp_err_clear(&e);
    s = dvppd_job_state_get(j, &p, &st, &e);
    for (size_t i = 0; items && i < p.total && json_array_size(items) < ERRORS_LISTED; i++) {
        dvpp_err ie;
        dvpp_status is;
        dvpp_err_clear(&ie);
        is = dvpp_batchjob_item_status(dvppd_job_batch(j), i, &ie);
        if (is != DVPP_OK && is != DVPP_EBUSY)
            json_array_append_new(items, json_pack("{s:I, s:s, s:o}", "index",
                                                   (json_int_t)i, "code",
                                                   dvpp_status_name(is), "message",
                                                   jstr(ie.msg[0] ? ie.msg
                                                                  : dvpp_strerror(is))));
    }
    snprintf(id, sizeof(id), "%" PRIu64, dvppd_job_id(j));
    o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o}", "id", id, "state",
                  dvppd_job_state_name(s), "total", (json_int_t)p.total, "done",
                  (json_int_t)p.done, "failed", (json_int_t)p.failed, "items",
                  items ? items : json_array());
    if (o && st != DVPP_OK)
        json_object_set_new(o, "error", json_pack("{s:s, s:o}", "code",
                                                  dvpp_status_name(st), "message",
                                                  jstr(e.msg[0] ? e.msg : dvpp_strerror(st))));
    return o;
}

static enum MHD_Result answer_job_result(req *r, dvppd_job *j)
{
    dvpp_batch_progress p;
    dvpp_status st;
    dvpp_err e;
    dvpp_tensor t;
    size_t len, hlen;
    const void *data;
    struct MHD_Response *resp;

    dvpp_err_clear(&e);
    switch (dvppd_job_state_get(j, &p, &st, &e)) {
    case DVPPD_JOB_RUNNING:
        return answer_status(r, DVPP_EBUSY, "state", "the job is still running");
    case DVPPD_JOB_FAILED:
    case DVPPD_JOB_CANCELED:
        name_failed_item(dvppd_job_batch(j), &e);
        return answer_error(r, &e);
    case DVPPD_JOB_DONE:
        break;
    }
    data = dvppd_job_result(j, &len, &hlen, &t);
    /* No copy: the response holds a reference to the job's result buffer
     * (result_get), which outlives a DELETE or the job's expiry while it
     * is being sent, and stays held against the device's budget. */
    resp = MHD_create_response_from_buffer_with_free_callback(len, result_ref(data),
                                                              buf_release_mhd);
    if (!resp) {
        result_unref((void *)data);
        return MHD_NO;
    }
    add_item_headers(resp, dvppd_job_batch(j), p.total, r->h->cfg.connection_memory);
    add_tensor_headers(resp, &t);
    add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
               hlen ? "application/x-npy" : "application/octet-stream");
    return answer(r, 200, resp);
}

static enum MHD_Result serve_job(req *r, const char *method)
{
    dvppd_job *j;
    enum MHD_Result ret;

    dvppd_jobs_gc(r->h->jobs);
    j = dvppd_jobs_get(r->h->jobs, r->job_id);
    if (!j)
        return answer_status(r, DVPP_ENOTFOUND, "id", "no such job");
    if (r->route == DVPPD_ROUTE_JOB_RESULT) {
        ret = answer_job_result(r, j);
    } else if (!strcmp(method, "DELETE")) {
        json_t *o = job_json(j);
        dvppd_jobs_delete(r->h->jobs, r->job_id);
        if (o && !strcmp(json_string_value(json_object_get(o, "state")), "running"))
            json_object_set_new(o, "state", json_string("canceled"));
        ret = answer_json(r, 200, o);
    } else {
        ret = answer_json(r, 200, job_json(j));
    }
    dvppd_job_unref(j);
    return ret;
}

/* --- video ----------------------------------------------------------------------------- */

/* POST /v1/video/decode and /v1/video/encode. The HTTP thread parses the
 * parameters (and, for an encode, the .npy header: no pixel is touched);
 * the codec work is one dvpp_job on DVPP_BATCHJOB_ENGINE, whose worker
 * state is the channel's dvpp_worker (dvpp_video_run needs it for the
 * per-frame pipeline). The connection is suspended meanwhile, exactly as
 * for a single image. The answer's bytes grow in a dvpp_buf on the worker
 * and are handed to libmicrohttpd as they are (an iovec of the .npy header
 * and the buffer): a video's frames are never copied on an HTTP thread. */

#define VIDEO_MAX_THREADS 16   /* codec threads one request may ask for */
#define VIDEO_MAX_ALIGN 4096   /* stride alignment, pixels or rows */

typedef enum vout_kind {
    VOUT_NPY,   /* .npy of the frames or the tensor */
    VOUT_RAW,   /* the same bytes without the header */
    VOUT_JPEG,  /* multipart/mixed of JPEG frames */
} vout_kind;

/* One video request: its parameters (parsed on the HTTP thread), then what
 * the job made (written on the worker, read after finish()). */
typedef struct video {
    bool encode;                    /* /v1/video/encode */
    const uint8_t *in;              /* the video or the frames (borrowed body) */
    size_t in_len;                  /* bytes at @in */
    vout *out;                      /* the answer's body; NULL once handed over */
    dvpp_task *task;                /* the running job (decode: polled per frame) */
    uint64_t started_ns;            /* when the job started on its worker */
    uint64_t run_ns;                /* how long it ran */
    /* decode */
    vout_kind kind;                 /* out= */
    int quality;                    /* out=jpeg: JPEG quality */
    dvpp_video_request rq;          /* sampling, frame format, pipeline */
    dvpp_video_result res;          /* the stream, T, geometry, frame list */
    char boundary[48];              /* out=jpeg: the multipart boundary */
    /* encode */
    dvpp_venc_opts eo;              /* the encoder's settings */
    dvpp_image frame;               /* one input frame's geometry (data NULL) */
    size_t frame_bytes;             /* bytes of one input frame */
    uint64_t nframes;               /* T frames in */
    bool *idr;                      /* [nframes]: frames forced to IDR */
    bool rc_set;                    /* rc= given */
    bool bitrate_set;               /* bitrate= given */
    bool crf_set;                   /* crf= given */
    uint64_t packets;               /* packets out */
    uint64_t keyframes;             /* of them, key frames */
} video;

static void video_free(video *v)
{
    if (!v)
        return;
    vout_free(v->out);
    dvpp_video_result_fini(&v->res);
    free(v->idr);
    free(v);
}

/* --- parameters --- */



/* A finite number >= 0. */
static bool parse_seconds(const char *v, double *out)
{
    char *end;

    if (!v || !*v || *v == '-' || *v == '+')
        return false;
    errno = 0;
    *out = strtod(v, &end);
    return !errno && !*end && *out >= 0 && *out < 1e9;
}

static bool parse_bool(const char *v, bool *out)
{
    if (!v || !*v || !strcmp(v, "1") || !strcmp(v, "true"))
        return *out = true, true;
    if (!strcmp(v, "0") || !strcmp(v, "false"))
        return *out = false, true;
    return false;
}

/* "WxH", both 1..@max. */
static bool parse_wxh(const char *v, uint32_t max, uint32_t *w, uint32_t *h)
{
    char a[16];
    const char *x = v ? strchr(v, 'x') : NULL;

    if (!x || x == v || (size_t)(x - v) >= sizeof(a))
        return false;
    memcpy(a, v, (size_t)(x - v));
    a[x - v] = '\0';
    return dvppd_parse_u32(a, max, w) && dvppd_parse_u32(x + 1, max, h) && *w && *h;
}

/* "N" or "N/D" frames per second. */
static bool parse_rate(const char *v, uint32_t *num, uint32_t *den)
{
    char a[16];
    const char *slash = v ? strchr(v, '/') : NULL;

    *den = 1;
    if (!slash)
        return dvppd_parse_u32(v, 240, num) && *num;
    if ((size_t)(slash - v) >= sizeof(a))
        return false;
    memcpy(a, v, (size_t)(slash - v));
    a[slash - v] = '\0';
    return dvppd_parse_u32(a, 240000, num) && dvppd_parse_u32(slash + 1, 100000, den) && *num &&
           *den;
}

static dvpp_status bad_param(dvpp_err *err, const char *key, const char *want)
{
    return dvpp_err_set(err, DVPP_EINVAL, key, "%s: want %s", key, want);
}

/* The query, split: @q gets every pair; "spec" is set aside by on_arg. */
static dvpp_status video_query(req *r, query *q, dvpp_err *err)
{
    memset(q, 0, sizeof(*q));
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, on_arg, q);
    if (q->overflow)
        return dvpp_err_set(err, DVPP_EINVAL, "query", "more than %d query parameters",
                            MAX_QUERY_ARGS);
    return DVPP_OK;
}

/* One sampling/output parameter of a decode; false when @k is not one. */
static bool decode_param(video *v, const char *k, const char *s, dvpp_status *st,
                         dvpp_err *err)
{
    dvpp_vdec_opts *o = &v->rq.vdec;
    uint32_t n;

    *st = DVPP_OK;
    if (!strcmp(k, "every")) {
        if (!dvppd_parse_u32(s, UINT32_MAX, &o->every) || !o->every)
            *st = bad_param(err, k, "a frame interval >= 1");
    } else if (!strcmp(k, "fps")) {
        if (!parse_seconds(s, &o->fps) || o->fps <= 0)
            *st = bad_param(err, k, "frames per second > 0");
    } else if (!strcmp(k, "keyframes")) {
        if (!parse_bool(s, &o->keyframes_only))
            *st = bad_param(err, k, "0 or 1");
    } else if (!strcmp(k, "start")) {
        if (!parse_seconds(s, &o->start_s))
            *st = bad_param(err, k, "seconds >= 0");
    } else if (!strcmp(k, "end")) {
        if (!parse_seconds(s, &o->end_s) || o->end_s <= 0)
            *st = bad_param(err, k, "seconds > 0");
    } else if (!strcmp(k, "max_frames")) {
        if (!dvppd_parse_u32(s, UINT32_MAX, &o->max_frames) || !o->max_frames)
            *st = bad_param(err, k, "a frame count >= 1");
    } else if (!strcmp(k, "format")) {
        if (!s || !dvpp_pixfmt_parse(s, &o->format) ||
            (o->format != DVPP_PIXEL_NV12 && o->format != DVPP_PIXEL_NV21 &&
             o->format != DVPP_PIXEL_RGB && o->format != DVPP_PIXEL_BGR))
            *st = bad_param(err, k, "nv12, nv21, rgb or bgr");
    } else if (!strcmp(k, "align")) {
        if (!parse_wxh(s, VIDEO_MAX_ALIGN, &o->align_w, &o->align_h))
            *st = bad_param(err, k, "WxH, pixels x rows, 1..4096");
    } else if (!strcmp(k, "threads")) {
        if (!dvppd_parse_u32(s, VIDEO_MAX_THREADS, &n))
            *st = bad_param(err, k, "0..16 decoder threads");
        else
            o->threads = n;
    } else if (!strcmp(k, "out")) {
        if (s && !strcmp(s, "npy"))
            v->kind = VOUT_NPY;
        else if (s && !strcmp(s, "raw"))
            v->kind = VOUT_RAW;
        else if (s && !strcmp(s, "jpeg"))
            v->kind = VOUT_JPEG;
        else
            *st = bad_param(err, k, "npy, raw or jpeg");
    } else if (!strcmp(k, "quality")) {
        if (!dvppd_parse_u32(s, 100, &n) || !n)
            *st = bad_param(err, k, "1..100");
        else
            v->quality = (int)n;
    } else {
        return false;
    }
    return true;
}

/* Pipeline parameters that make no sense for video frames (the frames
 * are the input; a ring or a batch mode has no video form). */
static bool pipe_param_refused(const char *k)
{
    return !strcmp(k, "input") || !strcmp(k, "raw") || !strcmp(k, "ring") ||
           !strcmp(k, "strict");
}

/* The frames' pipeline, from the pipeline parameters (@kv) or a JSON
 * spec: a tensor, or (out=jpeg) resized RGB images. */
static dvpp_status decode_pipeline(req *r, video *v, const query *q, const dvppd_kv *kv,
                                   size_t n, dvpp_err *err)
{
    const char *hdr = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Dvpp-Spec");
    const part *sp = find_part(r, "spec"), *ap = find_part(r, "aipp");
    dvppd_spec_env env = {v->kind == VOUT_JPEG ? DVPPD_SPEC_DECODE : DVPPD_SPEC_TENSOR,
                          dvppd_aipp_find, (void *)&r->set->aipp, NULL, 0};
    dvppd_spec *s = &r->spec;
    const char *json = NULL;
    size_t json_len = 0;
    dvpp_pipeline check;
    dvpp_status st;

    /* As build_spec: one JSON spec (query, header or multipart part), and
     * an inline AIPP config from the "aipp" part. */
    if ((q->spec != NULL) + (hdr != NULL) + (sp != NULL) > 1)
        return dvpp_err_set(err, DVPP_EINVAL, "spec", "one JSON spec: the query, the "
                            "X-Dvpp-Spec header or the spec part");
    if (q->spec || hdr)
        json = q->spec ? q->spec : hdr, json_len = strlen(json);
    else if (sp)
        json = (const char *)sp->data, json_len = sp->len;
    if (ap) {
        env.aipp_text = (const char *)ap->data;
        env.aipp_len = ap->len;
    }
    if (json && n)
        return dvpp_err_set(err, DVPP_EINVAL, kv[0].key,
                            "%s: give it in the JSON spec, not beside it", kv[0].key);
    if (!json && !n && !ap)
        return DVPP_OK; /* raw frames */
    st = json ? dvppd_spec_from_json(&env, json, json_len, s, err)
              : dvppd_spec_from_query(&env, kv, n, s, err);
    if (st != DVPP_OK)
        return st;
    if (s->ring[0])
        return dvpp_err_set(err, DVPP_EINVAL, "ring", "video frames are not delivered to "
                            "rings over HTTP (the socket has video channels)");
    if (s->raw_out && v->kind == VOUT_NPY)
        v->kind = VOUT_RAW; /* "output": {"out": "raw"} in a spec */
    /* The output format of a jpeg pipeline is the JPEG encoder's input. */
    if (v->kind == VOUT_JPEG && s->pipe.out_format != DVPP_PIXEL_RGB &&
        s->pipe.out_format != DVPP_PIXEL_BGR)
        return dvpp_err_set(err, DVPP_EINVAL, "format", "out=jpeg frames are rgb");
    v->rq.has_pipe = true;
    v->rq.pipe = s->pipe;
    /* Validate here for a 400 before any work: the frame replaces the
     * input (dvpp_video_run does the same with the real frame). */
    check = s->pipe;
    check.input = DVPP_PIPE_IN_RAW;
    check.raw = (dvpp_pipe_raw){v->rq.vdec.format, 16, 16, 0, 0};
    return dvpp_pipeline_validate(&check, &r->set->cfg.limits, err);
}

/* The most a decode's answer may hold: 4 x limits.max_decode_memory (the
 * library's bound) and limits.max_output_bytes, whichever is less. */
static uint64_t video_max_bytes(const dvpp_limits *l)
{
    uint64_t dec = l->max_decode_memory > UINT64_MAX / 4 ? UINT64_MAX : l->max_decode_memory * 4;

    return l->max_output_bytes < dec ? l->max_output_bytes : dec;
}

static dvpp_status decode_options(req *r, video *v, dvpp_err *err)
{
    dvppd_kv pipe_kv[MAX_QUERY_ARGS];
    size_t npipe = 0;
    bool format_set = false;
    query q;
    dvpp_status st = video_query(r, &q, err);

    dvpp_video_request_init(&v->rq);
    v->rq.max_bytes = video_max_bytes(&r->set->cfg.limits);
    v->kind = VOUT_NPY;
    v->quality = 0;
    for (size_t i = 0; st == DVPP_OK && i < q.n; i++) {
        const char *k = q.kv[i].key, *s = q.kv[i].value;
        if (decode_param(v, k, s, &st, err)) {
            format_set |= !strcmp(k, "format");
            continue;
        }
        if (pipe_param_refused(k))
            st = dvpp_err_set(err, DVPP_EINVAL, k, "%s: not for video (the decoded frames "
                              "are the input)", k);
        else if (dvppd_spec_is_param(k))
            pipe_kv[npipe++] = q.kv[i];
        else
            st = dvpp_err_set(err, DVPP_EINVAL, k, "unknown parameter '%.64s'", k);
    }
    if (st != DVPP_OK)
        return st;
    if (v->rq.vdec.end_s > 0 && v->rq.vdec.end_s < v->rq.vdec.start_s)
        return dvpp_err_set(err, DVPP_EINVAL, "end", "end: before start");
    if (v->quality && v->kind != VOUT_JPEG)
        return dvpp_err_set(err, DVPP_EINVAL, "quality", "quality: only with out=jpeg");
    if (v->kind == VOUT_JPEG && !format_set)
        v->rq.vdec.format = DVPP_PIXEL_RGB; /* JPEGs are made from RGB frames */
    if (!v->quality)
        v->quality = 95;
    st = decode_pipeline(r, v, &q, pipe_kv, npipe, err);
    /* A .npy of packed pixels is H x W x 3: no stride padding in it. */
    if (st == DVPP_OK && !v->rq.has_pipe && v->kind != VOUT_RAW &&
        dvpp_pixfmt_get(v->rq.vdec.format)->planes == 1)
        v->rq.vdec.align_w = v->rq.vdec.align_h = 1;
    return st;
}

static dvpp_status encode_param(video *v, const char *k, const char *s, bool *format_set,
                                dvpp_pixfmt *fmt, const char **idr, dvpp_err *err)
{
    static const char *const presets[] = {"ultrafast", "superfast", "veryfast", "faster",
                                          "fast", "medium", "slow", "slower", "veryslow"};
    dvpp_venc_opts *o = &v->eo;
    uint32_t n;

    if (!strcmp(k, "codec")) {
        if (!s || !dvpp_video_codec_parse(s, &o->codec))
            return dvpp_err_set(err, DVPP_EUNSUPPORTED, k, "codec '%.32s': dvppd encodes "
                                "h264 and h265", s ? s : "");
    } else if (!strcmp(k, "bitrate")) {
        if (!dvppd_parse_u32(s, 500000, &o->bitrate_kbps) || o->bitrate_kbps < 10)
            return bad_param(err, k, "kbit/s, 10..500000");
        v->bitrate_set = true;
    } else if (!strcmp(k, "gop")) {
        if (!dvppd_parse_u32(s, 65536, &o->gop) || !o->gop)
            return bad_param(err, k, "a key frame interval, 1..65536");
    } else if (!strcmp(k, "fps")) {
        if (!parse_rate(s, &o->fps_num, &o->fps_den))
            return bad_param(err, k, "N or N/D frames per second");
    } else if (!strcmp(k, "rc")) {
        if (!s || !dvpp_venc_rc_parse(s, &o->rc))
            return bad_param(err, k, "cbr, vbr or crf");
        v->rc_set = true;
    } else if (!strcmp(k, "crf")) {
        if (!dvppd_parse_u32(s, 51, &o->crf))
            return bad_param(err, k, "0..51");
        v->crf_set = true;
    } else if (!strcmp(k, "profile")) {
        if (!s || !*s || strlen(s) >= sizeof(o->profile) ||
            strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(s))
            return bad_param(err, k, "a codec profile (baseline, main, high)");
        memcpy(o->profile, s, strlen(s) + 1);
    } else if (!strcmp(k, "preset")) {
        size_t i = 0;
        while (i < sizeof(presets) / sizeof(presets[0]) && (!s || strcmp(s, presets[i])))
            i++;
        if (i == sizeof(presets) / sizeof(presets[0]))
            return bad_param(err, k, "an x264/x265 preset (ultrafast .. veryslow)");
        memcpy(o->preset, s, strlen(s) + 1);
    } else if (!strcmp(k, "container")) {
        if (s && !strcmp(s, "annexb"))
            o->container = DVPP_VENC_ANNEXB;
        else if (s && !strcmp(s, "mp4"))
            o->container = DVPP_VENC_MP4;
        else
            return bad_param(err, k, "annexb or mp4");
    } else if (!strcmp(k, "format")) {
        if (!s || !dvpp_pixfmt_parse(s, fmt) ||
            (*fmt != DVPP_PIXEL_NV12 && *fmt != DVPP_PIXEL_NV21 && *fmt != DVPP_PIXEL_RGB &&
             *fmt != DVPP_PIXEL_BGR))
            return bad_param(err, k, "rgb, bgr, nv12 or nv21");
        *format_set = true;
    } else if (!strcmp(k, "idr")) {
        *idr = s ? s : "";
    } else if (!strcmp(k, "threads")) {
        if (!dvppd_parse_u32(s, VIDEO_MAX_THREADS, &n))
            return bad_param(err, k, "0..16 encoder threads");
        o->threads = n;
    } else {
        return dvpp_err_set(err, DVPP_EINVAL, k, "unknown parameter '%.64s'", k);
    }
    return DVPP_OK;
}

/* idr=0,30,...: frame numbers below @n, into v->idr. */
static dvpp_status parse_idr(video *v, const char *s, dvpp_err *err)
{
    const char *p = s;

    while (*p) {
        char num[24];
        size_t len = strcspn(p, ",");
        uint32_t f;
        if (len == 0 || len >= sizeof(num))
            return bad_param(err, "idr", "frame numbers, comma separated");
        memcpy(num, p, len);
        num[len] = '\0';
        if (!dvppd_parse_u32(num, UINT32_MAX, &f))
            return bad_param(err, "idr", "frame numbers, comma separated");
        if (f >= v->nframes)
            return dvpp_err_set(err, DVPP_EINVAL, "idr", "idr: frame %" PRIu64 " of %" PRIu64
                                " frames", (uint64_t)f, v->nframes);
        v->idr[f] = true;
        p += len + (p[len] == ',');
    }
    return DVPP_OK;
}

/* The frames of the .npy body: T x H x W x 3 (rgb, bgr) or T x (H*3/2) x W
 * (nv12, nv21, tight); the format from the query or, without one, the
 * number of dimensions. */
static dvpp_status encode_frames(req *r, video *v, bool format_set, dvpp_pixfmt fmt,
                                 dvpp_err *err)
{
    char descr[16];
    int64_t shape[5];
    int ndim = 0;
    size_t off = 0, bytes;
    uint64_t w, h;
    dvpp_status st = dvpp_npy_parse(v->in, v->in_len, descr, sizeof(descr), shape, 5,
                                    &ndim, &off, err);

    if (st != DVPP_OK)
        return st;
    if (strcmp(descr, "|u1") && strcmp(descr, "<u1") && strcmp(descr, ">u1"))
        return dvpp_err_set(err, DVPP_EINVAL, "body", "frames are uint8, not '%s'", descr);
    if (!format_set)
        fmt = ndim == 4 ? DVPP_PIXEL_RGB : DVPP_PIXEL_NV12;
    if (fmt == DVPP_PIXEL_RGB || fmt == DVPP_PIXEL_BGR) {
        if (ndim != 4 || shape[3] != 3)
            return dvpp_err_set(err, DVPP_EINVAL, "body", "%s frames are a T x H x W x 3 "
                                "array", dvpp_pixfmt_name(fmt));
        h = (uint64_t)shape[1], w = (uint64_t)shape[2];
    } else {
        if (ndim != 3 || shape[1] % 3)
            return dvpp_err_set(err, DVPP_EINVAL, "body", "%s frames are a T x (H*3/2) x W "
                                "array", dvpp_pixfmt_name(fmt));
        h = (uint64_t)shape[1] / 3 * 2, w = (uint64_t)shape[2];
    }
    if (shape[0] < 1)
        return dvpp_err_set(err, DVPP_EINVAL, "body", "no frames");
    st = dvpp_limits_check_image(&r->set->cfg.limits, w, h, err);
    if (st == DVPP_OK && (w > UINT32_MAX || h > UINT32_MAX))
        st = dvpp_err_set(err, DVPP_ELIMIT, "max_side", "frames of %" PRIu64 "x%" PRIu64, w, h);
    if (st == DVPP_OK)
        st = dvpp_image_init(&v->frame, fmt, (uint32_t)w, (uint32_t)h, 1, 1, err);
    if (st != DVPP_OK)
        return st;
    bytes = fmt == DVPP_PIXEL_RGB || fmt == DVPP_PIXEL_BGR ? (size_t)(w * h * 3)
                                                           : (size_t)(w * h / 2 * 3);
    v->frame_bytes = bytes;
    v->nframes = (uint64_t)shape[0];
    if (v->nframes > r->set->cfg.limits.max_video_frames)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_video_frames", "%" PRIu64 " frames, above "
                            "max_video_frames (%u)", v->nframes,
                            r->set->cfg.limits.max_video_frames);
    v->in += off;
    v->in_len -= off;
    if (v->nframes > v->in_len / bytes) /* dvpp_npy_parse checked it; stay safe */
        return dvpp_err_set(err, DVPP_ECORRUPT, "body", "the .npy data is short");
    v->eo.width = (uint32_t)w;
    v->eo.height = (uint32_t)h;
    return DVPP_OK;
}

static dvpp_status encode_options(req *r, video *v, dvpp_err *err)
{
    bool format_set = false;
    dvpp_pixfmt fmt = DVPP_PIXEL_RGB;
    const char *idr = NULL;
    query q;
    dvpp_status st = video_query(r, &q, err);

    dvpp_venc_opts_init(&v->eo);
    if (st == DVPP_OK && q.spec)
        st = dvpp_err_set(err, DVPP_EINVAL, "spec", "unknown parameter 'spec'");
    for (size_t i = 0; st == DVPP_OK && i < q.n; i++)
        st = encode_param(v, q.kv[i].key, q.kv[i].value, &format_set, &fmt, &idr, err);
    /* As dvppctl video-encode: bitrate alone is VBR (capped at it), crf
     * goes with rc=crf. */
    if (st == DVPP_OK && !v->rc_set)
        v->eo.rc = v->bitrate_set ? DVPP_VENC_RC_VBR : DVPP_VENC_RC_CRF;
    if (st == DVPP_OK && v->eo.rc == DVPP_VENC_RC_CRF && v->bitrate_set)
        st = dvpp_err_set(err, DVPP_EINVAL, "bitrate", "bitrate: needs rc=cbr or rc=vbr");
    if (st == DVPP_OK && v->eo.rc != DVPP_VENC_RC_CRF && v->crf_set)
        st = dvpp_err_set(err, DVPP_EINVAL, "crf", "crf: goes with rc=crf");
    if (st == DVPP_OK)
        st = encode_frames(r, v, format_set, fmt, err);
    if (st == DVPP_OK && !(v->idr = calloc(v->nframes, sizeof(*v->idr))))
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "idr list");
    if (st == DVPP_OK && idr)
        st = parse_idr(v, idr, err);
    return st;
}

/* --- the job, on a worker --- */

/* True when @s occurs in @data (memmem is a GNU extension). */
static bool contains(const uint8_t *data, size_t len, const char *s)
{
    size_t n = strlen(s);

    for (const uint8_t *p = data; n && len >= n && (size_t)(p - data) <= len - n; p++) {
        p = memchr(p, s[0], len - n + 1 - (size_t)(p - data));
        if (!p)
            return false;
        if (!memcmp(p, s, n))
            return true;
    }
    return false;
}

/* The kept frames, JPEG-encoded, as one multipart/mixed body (replacing
 * the frames in v->out->body). */
static dvpp_status frames_to_jpeg(dvpp_task *task, video *v, dvpp_err *err)
{
    const dvpp_video_result *res = &v->res;
    dvpp_jpeg_encode_opts jo;
    dvpp_buf jpegs, mp;
    size_t *end = NULL, nend = (size_t)res->frames + 1;
    dvpp_status st = DVPP_OK;
    unsigned attempt = 0;
    bool clash;

    dvpp_jpeg_encode_opts_init(&jo);
    jo.quality = v->quality;
    dvpp_buf_init(&jpegs);
    dvpp_buf_init(&mp);
    end = dvpp_malloc(nend * sizeof(*end));
    if (!end)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "jpeg frames");
    end[0] = 0;
    for (uint64_t t = 0; st == DVPP_OK && t < res->frames; t++) {
        dvpp_image img = res->image;
        if (dvpp_task_canceled(task) || dvpp_task_expired(task)) {
            st = dvpp_err_set(err, dvpp_task_canceled(task) ? DVPP_ECANCELED : DVPP_ETIMEDOUT,
                              NULL, "stopped at frame %" PRIu64 " of the JPEG encode", t);
            break;
        }
        img.data = v->out->body.data + t * res->slice_bytes;
        img.size = res->slice_bytes;
        st = dvpp_jpeg_encode(&img, &jo, &jpegs, err);
        end[t + 1] = jpegs.len;
    }
    /* A boundary no JPEG contains (a clash is astronomically rare; the
     * attempt counter makes the next candidate differ). */
    do {
        clash = false;
        snprintf(v->boundary, sizeof(v->boundary), "dvppd-frame-%016" PRIx64 "-%u",
                 dvpp_now_ns() ^ (uint64_t)(uintptr_t)v, attempt++);
        for (uint64_t t = 0; st == DVPP_OK && !clash && t < res->frames; t++)
            clash = contains(jpegs.data + end[t], end[t + 1] - end[t], v->boundary);
    } while (clash && attempt < 16);
    for (uint64_t t = 0; st == DVPP_OK && t < res->frames; t++) {
        const dvpp_video_frame_info *f = &res->frame[t];
        /* The fixed text, the boundary and three numbers of at most 20
         * digits take under 300 bytes; the time takes what it takes. */
        char time[DVPPD_FRAME_TIME_MAX], head[DVPPD_FRAME_TIME_MAX + 320];
        int n;
        dvppd_frame_time_format(time, f->time_s);
        n = snprintf(head, sizeof(head),
                     "--%s\r\nContent-Type: image/jpeg\r\nContent-Length: %zu\r\n"
                     "X-Dvpp-Frame-Index: %" PRIu64 "\r\nX-Dvpp-Frame-Pts: %" PRId64
                     "\r\nX-Dvpp-Frame-Time: %s\r\nX-Dvpp-Key-Frame: %d\r\n\r\n",
                     v->boundary, end[t + 1] - end[t], f->index, f->pts, time,
                     f->key ? 1 : 0);
        if (n < 0 || (size_t)n >= sizeof(head)) {
            st = dvpp_err_set(err, DVPP_EIO, "video", "a JPEG part's headers do not fit");
            break;
        }
        st = dvpp_buf_append(&mp, head, (size_t)n);
        if (st == DVPP_OK)
            st = dvpp_buf_append(&mp, jpegs.data + end[t], end[t + 1] - end[t]);
        if (st == DVPP_OK)
            st = dvpp_buf_append(&mp, "\r\n", 2);
        if (st != DVPP_OK)
            dvpp_err_set(err, st, NULL, "out of memory for the multipart answer");
    }
    if (st == DVPP_OK) {
        char tail[64];
        int n = snprintf(tail, sizeof(tail), "--%s--\r\n", v->boundary);
        st = dvpp_buf_append(&mp, tail, (size_t)n);
        if (st != DVPP_OK)
            dvpp_err_set(err, st, NULL, "out of memory for the multipart answer");
    }
    if (st == DVPP_OK) {
        dvpp_buf_fini(&v->out->body);
        v->out->body = mp;
        dvpp_buf_init(&mp);
    }
    dvpp_buf_fini(&mp);
    dvpp_buf_fini(&jpegs);
    dvpp_free(end, nend * sizeof(*end));
    return st;
}

/* No frame matched the sampling: the answer is an empty batch (T = 0) of
 * the geometry a frame of the stream would have, as dvppctl video-decode
 * writes it. */
static dvpp_status empty_result(video *v, dvpp_err *err)
{
    dvpp_video_result *res = &v->res;
    const dvpp_vdec_opts *o = &v->rq.vdec;
    uint32_t w = res->info.width, h = res->info.height;
    dvpp_pipeline p = v->rq.pipe;
    dvpp_pipe_source src = {.width = w, .height = h};
    dvpp_pipeline_plan plan;
    dvpp_status st;

    if (!v->rq.has_pipe)
        return dvpp_image_init(&res->image, o->format, w, h, o->align_w ? o->align_w : 16,
                               o->align_h ? o->align_h : 2, err);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){o->format, w, h, 0, 0};
    st = dvpp_pipeline_plan_make(&p, &src, &plan, err);
    if (st != DVPP_OK)
        return st;
    res->geom = plan.geom;
    if (p.output != DVPP_PIPE_OUT_TENSOR)
        return dvpp_image_init(&res->image, plan.out_format, plan.img_w, plan.img_h,
                               p.out_align_w, p.out_align_h, err);
    st = dvpp_tensor_init(&res->tensor, plan.dtype, plan.layout, 1, plan.c, plan.h, plan.w,
                          err);
    res->tensor.n = 0;
    res->tensor.shape[0] = 0;
    res->tensor.bytes = 0;
    res->is_tensor = true;
    return st;
}

/* Polled by the decoder once per frame: a canceled job (the daemon stops)
 * or a passed deadline ends the decode. */
static dvpp_status video_check(void *ctx)
{
    const video *v = ctx;

    if (dvpp_task_canceled(v->task))
        return DVPP_ECANCELED;
    return dvpp_task_expired(v->task) ? DVPP_ETIMEDOUT : DVPP_OK;
}

static dvpp_status video_decode_fn(dvpp_task *task, void *ctx, void *worker_state,
                                   dvpp_err *err)
{
    req *r = ctx;
    video *v = r->vid;
    dvpp_status st;

    v->started_ns = dvpp_now_ns();
    if (!worker_state) /* only a pipe device's VPC channels carry a dvpp_worker */
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "device", "not a pipeline device");
    v->task = task;
    v->rq.vdec.check = video_check;
    v->rq.vdec.check_ctx = v;
    st = dvpp_video_run(worker_state, v->in, v->in_len, &v->rq, &v->out->body, &v->res,
                        err);
    if (st == DVPP_OK && v->res.frames == 0)
        st = empty_result(v, err);
    if (st == DVPP_OK && v->out->body.len != v->res.frames * v->res.slice_bytes)
        st = dvpp_err_set(err, DVPP_EIO, "video", "%" PRIu64 " frames in %zu bytes, "
                          "not %zu each", v->res.frames, v->out->body.len,
                          v->res.slice_bytes);
    if (st == DVPP_OK && v->kind == VOUT_JPEG)
        st = frames_to_jpeg(task, v, err);
    v->run_ns = dvpp_now_ns() - v->started_ns;
    return st;
}

static dvpp_status video_encode_fn(dvpp_task *task, void *ctx, void *worker_state,
                                   dvpp_err *err)
{
    req *r = ctx;
    video *v = r->vid;
    dvpp_venc *enc = NULL;
    dvpp_status st;

    (void)worker_state;
    v->started_ns = dvpp_now_ns();
    st = dvpp_venc_open(&v->eo, &v->out->body, &enc, err);
    for (uint64_t t = 0; st == DVPP_OK && t < v->nframes; t++) {
        dvpp_image img = v->frame;
        if (dvpp_task_canceled(task) || dvpp_task_expired(task)) {
            st = dvpp_err_set(err, dvpp_task_canceled(task) ? DVPP_ECANCELED : DVPP_ETIMEDOUT,
                              NULL, "stopped at frame %" PRIu64, t);
            break;
        }
        img.data = (uint8_t *)(uintptr_t)(v->in + t * v->frame_bytes);
        img.size = v->frame_bytes;
        st = dvpp_venc_frame(enc, &img, v->idr[t], err);
    }
    if (st == DVPP_OK)
        st = dvpp_venc_finish(enc, err);
    if (st == DVPP_OK)
        v->packets = dvpp_venc_packets(enc, &v->keyframes);
    dvpp_venc_close(enc);
    v->run_ns = dvpp_now_ns() - v->started_ns;
    return st;
}

static void video_done(void *ctx, uint64_t ticket, dvpp_status st, const dvpp_err *err)
{
    (void)ticket;
    finish(ctx, st, err);
}

/* Parse, then submit the job. */
static dvpp_status submit_video(req *r, dvpp_err *err)
{
    video *v = calloc(1, sizeof(*v));
    dvpp_job job;
    dvpp_status st;

    if (!v)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "video request");
    r->vid = v;
    v->encode = r->route == DVPPD_ROUTE_VIDEO_ENCODE;
    st = single_input(r, &v->in, &v->in_len, err);
    if (st != DVPP_OK)
        return dvpp_err_set(err, st, "body", v->encode ? "no .npy of frames in the body"
                                                       : "no video in the body");
    st = v->encode ? encode_options(r, v, err) : decode_options(r, v, err);
    if (st != DVPP_OK)
        return st;
    v->out = calloc(1, sizeof(*v->out));
    if (!v->out)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "video answer");
    dvpp_buf_init(&v->out->body);
    st = dvpp_stream_new(r->h->device, 0, &r->stream, err);
    if (st != DVPP_OK)
        return st;
    /* Admission: the body is what a queued job holds; the frames or the
     * stream grow only while it runs (one per channel, each bounded by
     * 4 x limits.max_decode_memory), so the pixel budget is not charged. */
    job = (dvpp_job){
        .engine = DVPP_BATCHJOB_ENGINE,
        .fn = v->encode ? video_encode_fn : video_decode_fn,
        .done = video_done,
        .ctx = r,
        .pixels = 0,
        .bytes = v->in_len,
        .deadline_ns = r->deadline,
    };
    r->t_submit = dvpp_now_ns();
    return dvpp_device_submit(r->stream, &job, NULL, err);
}

/* --- the answer --- */

/* The frame lists of a decode (X-Dvpp-Frame-Index, -Pts, -Time and
 * X-Dvpp-Key-Frames), exactly sized (dvppd_framelist). libmicrohttpd
 * builds the answer's headers in the connection's memory, so the lists
 * together get a quarter of it; when they would not fit they are left out
 * together and X-Dvpp-Frame-Lists says why (the frames are still counted
 * by X-Dvpp-Frames). */
static void add_frame_lists(struct MHD_Response *resp, const dvpp_video_result *res,
                            size_t memory)
{
    size_t budget = memory / 4 > 256 ? memory / 4 - 256 : 0; /* names, separators */
    dvppd_frame_lists l;
    dvpp_err e;

    dvpp_err_clear(&e);
    if (dvppd_frame_lists_make(res->frame, res->frames, budget, &l, &e) != DVPP_OK) {
        header_printf(resp, "X-Dvpp-Frame-Lists", "omitted: %s", e.msg);
        return;
    }
    for (int k = 0; k < DVPPD_FRAME_LISTS; k++)
        add_header(resp, dvppd_frame_list_names[k], (const char *)l.list[k].data);
    dvppd_frame_lists_fini(&l);
}

/* The .npy header of a decode's frames or tensor into v->out->head. */
static dvpp_status video_npy_header(video *v, dvpp_tensor *shape_of, dvpp_err *err)
{
    const dvpp_video_result *res = &v->res;
    int64_t shape[DVPP_TENSOR_MAX_DIMS + 1];
    int ndim;

    memset(shape_of, 0, sizeof(*shape_of));
    if (res->is_tensor) {
        *shape_of = res->tensor;
        ndim = res->tensor.ndim;
        memcpy(shape, res->tensor.shape, (size_t)ndim * sizeof(shape[0]));
        v->out->head_len = dvpp_npy_header(v->out->head, dvpp_dtype_npy(res->tensor.dtype),
                                           shape, ndim);
    } else {
        dvpp_planes pl;
        dvpp_status st = dvpp_image_planes(&res->image, &pl, err);
        if (st != DVPP_OK)
            return st;
        shape[0] = (int64_t)res->frames;
        ndim = 1 + dvpp_npy_image_shape(&res->image, &pl, shape + 1);
        shape_of->dtype = DVPP_DTYPE_U8;
        shape_of->layout = DVPP_LAYOUT_NHWC; /* frames are T x H x W x C or YUV rows */
        shape_of->ndim = (uint8_t)ndim;
        memcpy(shape_of->shape, shape, (size_t)ndim * sizeof(shape[0]));
        v->out->head_len = dvpp_npy_header(v->out->head, "|u1", shape, ndim);
    }
    if (!v->out->head_len)
        return dvpp_err_set(err, DVPP_EINVAL, "video", "no .npy header for this shape");
    if (v->kind == VOUT_RAW)
        v->out->head_len = 0;
    return DVPP_OK;
}

/* Hand v->out to libmicrohttpd (vout_response). */
static struct MHD_Response *video_response(req *r)
{
    return vout_response(r->h, &r->vid->out);
}

static void add_video_timing(req *r, struct MHD_Response *resp)
{
    video *v = r->vid;
    uint64_t now = dvpp_now_ns();
    uint64_t read = r->t_read - r->t_start;
    uint64_t queue = v->started_ns > r->t_submit ? v->started_ns - r->t_submit : 0;

    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_READ, read);
    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_QUEUE, queue);
    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_TOTAL, now - r->t_start);
    header_printf(resp, "X-Dvpp-Timing",
                  "read=%" PRIu64 ";queue=%" PRIu64 ";run=%" PRIu64 ";total=%" PRIu64,
                  us(read), us(queue), us(v->run_ns), us(now - r->t_start));
}

static enum MHD_Result answer_video_encode(req *r)
{
    video *v = r->vid;
    struct MHD_Response *resp = video_response(r);

    if (!resp)
        return MHD_NO;
    add_video_timing(r, resp);
    header_printf(resp, "X-Dvpp-Frames", "%" PRIu64, v->nframes);
    header_printf(resp, "X-Dvpp-Packets", "%" PRIu64, v->packets);
    header_printf(resp, "X-Dvpp-Key-Frames", "%" PRIu64, v->keyframes);
    header_printf(resp, "X-Dvpp-Video", "%s %ux%u %.6g", dvpp_video_codec_name(v->eo.codec),
                  v->eo.width, v->eo.height, (double)v->eo.fps_num / v->eo.fps_den);
    add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
               v->eo.container == DVPP_VENC_MP4 ? "video/mp4"
               : v->eo.codec == DVPP_VIDEO_H265 ? "video/h265" : "video/h264");
    dvppd_metrics_pixels(r->h->metrics, v->nframes * v->eo.width * v->eo.height);
    return answer(r, 200, resp);
}

/* Raw frames: their .npy shape, uint8, and as layout NHWC (packed: T x H
 * x W x 3) or the format's name (YUV: T x rows x width_stride). */
static void add_frame_shape(struct MHD_Response *resp, const dvpp_tensor *t,
                            const dvpp_image *img)
{
    char shape[128] = "", layout[16];
    size_t n = 0;

    for (unsigned i = 0; i < t->ndim && n < sizeof(shape); i++)
        n += (size_t)snprintf(shape + n, sizeof(shape) - n, "%s%" PRId64, i ? "," : "",
                              t->shape[i]);
    add_header(resp, "X-Dvpp-Shape", shape);
    add_header(resp, "X-Dvpp-Dtype", "uint8");
    if (dvpp_pixfmt_get(img->format)->planes == 1) {
        add_header(resp, "X-Dvpp-Layout", "NHWC");
        return;
    }
    snprintf(layout, sizeof(layout), "%s", dvpp_pixfmt_name(img->format));
    for (char *c = layout; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
    add_header(resp, "X-Dvpp-Layout", layout);
}

static enum MHD_Result answer_video(req *r)
{
    video *v = r->vid;
    const dvpp_video_result *res = &v->res;
    struct MHD_Response *resp;
    dvpp_tensor t;
    dvpp_err e;
    char ct[96];

    if (r->status != DVPP_OK)
        return answer_error(r, &r->err);
    if (v->encode)
        return answer_video_encode(r);
    dvpp_err_clear(&e);
    if (v->kind != VOUT_JPEG && video_npy_header(v, &t, &e) != DVPP_OK)
        return answer_error(r, &e);
    resp = video_response(r);
    if (!resp)
        return MHD_NO;
    add_video_timing(r, resp);
    header_printf(resp, "X-Dvpp-Frames", "%" PRIu64, res->frames);
    add_frame_lists(resp, res, r->h->cfg.connection_memory);
    header_printf(resp, "X-Dvpp-Video", "%s %ux%u %.6g", dvpp_video_codec_name(res->info.codec),
                  res->info.width, res->info.height, res->info.fps);
    if (v->kind == VOUT_JPEG) {
        snprintf(ct, sizeof(ct), "multipart/mixed; boundary=%s", v->boundary);
        add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ct);
        header_printf(resp, "X-Dvpp-Width", "%u", res->image.width);
        header_printf(resp, "X-Dvpp-Height", "%u", res->image.height);
    } else {
        if (res->is_tensor) {
            add_tensor_headers(resp, &t);
            add_geometry(resp, &res->geom);
        } else {
            add_frame_shape(resp, &t, &res->image);
            add_header(resp, "X-Dvpp-Format", dvpp_pixfmt_name(res->image.format));
            header_printf(resp, "X-Dvpp-Width", "%u", res->image.width);
            header_printf(resp, "X-Dvpp-Height", "%u", res->image.height);
            header_printf(resp, "X-Dvpp-Width-Stride", "%u", res->image.width_stride);
            header_printf(resp, "X-Dvpp-Height-Stride", "%u", res->image.height_stride);
        }
        add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                   v->kind == VOUT_RAW ? "application/octet-stream" : "application/x-npy");
    }
    dvppd_metrics_pixels(r->h->metrics,
                         res->frames * (res->is_tensor ? (uint64_t)res->tensor.h * res->tensor.w
                                                       : (uint64_t)res->image.width *
                                                             res->image.height));
    return answer(r, 200, resp);
}

/* --- operations endpoints ------------------------------------------------------------ */

static enum MHD_Result serve_metrics(req *r)
{
    dvppd_build_info bi = {DVPP_VERSION, dvpp_simd_name(dvpp_simd_active()),
                           dvpp_jpeg_library()};
    struct MHD_Response *resp;
    dvpp_buf b;

    dvpp_buf_init(&b);
    if (dvppd_metrics_render(r->h->metrics, r->h->device, &bi, &b) != DVPP_OK) {
        dvpp_buf_fini(&b);
        return answer_status(r, DVPP_ENOMEM, NULL, "out of memory");
    }
    resp = MHD_create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_COPY);
    dvpp_buf_fini(&b);
    if (!resp)
        return MHD_NO;
    add_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4");
    return answer(r, 200, resp);
}

static json_t *names_json(const char *const *names, size_t n)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(names[i]));
    return a;
}

static enum MHD_Result serve_info(req *r)
{
    static const char *const profiles[] = {"native", "ascend310", "ascend310p"};
    static const char *const parities[] = {"cv2", "pil", "tf", "ascend"};
    static const char *const modes[] = {"stretch", "fit", "fill", "letterbox",
                                        "shorter", "longer"};
    static const char *const codecs[] = {"jpeg-decode", "jpeg-encode", "png-decode",
                                         "png-encode",  "h264-decode", "h265-decode",
                                         "h264-encode", "h265-encode"};
    const dvpp_limits *l = &r->set->cfg.limits;
    json_t *engines = json_array(), *aipp = json_array(), *o;

    /* Each engine's own channels (device.engine_channels may set them apart). */
    for (int e = 0; engines && e < DVPP_ENGINE_COUNT; e++)
        json_array_append_new(
            engines, json_pack("{s:s, s:I, s:I}", "name", dvpp_engine_name(e), "channels",
                               (json_int_t)dvpp_device_channels(r->h->device, (dvpp_engine)e),
                               "queue_depth", (json_int_t)r->h->queue_depth));
    for (unsigned i = 0; aipp && i < r->set->aipp.n; i++)
        json_array_append_new(aipp, json_string(r->set->aipp.names[i]));
    o = json_pack("{s:s, s:s, s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:o, "
                  "s:o, s:o, "
                  "s:o, s:o, s:{s:I, s:I, s:I, s:I}}",
                  "version", DVPP_VERSION, "simd", dvpp_simd_name(dvpp_simd_active()),
                  "jpeg", dvpp_jpeg_library(), "engines", engines ? engines : json_array(),
                  "limits", "max_encoded_bytes", (json_int_t)l->max_encoded_bytes,
                  "max_pixels", (json_int_t)l->max_pixels, "max_side",
                  (json_int_t)l->max_side, "max_jpeg_scans", (json_int_t)l->max_jpeg_scans,
                  "max_body_bytes", (json_int_t)max_body(r->set), "max_batch_bytes",
                  (json_int_t)r->set->cfg.http.max_batch_bytes, "max_video_bytes",
                  (json_int_t)l->max_video_bytes, "max_video_frames",
                  (json_int_t)l->max_video_frames,
                  "profiles", names_json(profiles, 3), "parities", names_json(parities, 4),
                  "resize_modes", names_json(modes, 6), "codecs",
                  names_json(codecs, sizeof(codecs) / sizeof(codecs[0])),
                  "aipp_configs", aipp ? aipp : json_array(),
                  "http", "threads", (json_int_t)r->h->cfg.threads, "max_batch_items",
                  (json_int_t)r->set->cfg.http.max_batch_items, "request_timeout_s",
                  (json_int_t)r->set->cfg.http.request_timeout_s, "max_jobs",
                  (json_int_t)r->h->cfg.max_jobs);
    return answer_json(r, 200, o);
}

static enum MHD_Result serve_now(req *r, const char *method)
{
    switch (r->route) {
    case DVPPD_ROUTE_HEALTHZ:
        return answer_json(r, 200, json_pack("{s:s}", "status", "ok"));
    case DVPPD_ROUTE_READYZ: {
        bool ready = atomic_load(&r->h->ready) && !atomic_load(&r->h->draining);
        return answer_json(r, ready ? 200 : 503, json_pack("{s:b}", "ready", ready));
    }
    case DVPPD_ROUTE_METRICS:
        return serve_metrics(r);
    case DVPPD_ROUTE_INFO:
        return serve_info(r);
    case DVPPD_ROUTE_JOB:
    case DVPPD_ROUTE_JOB_RESULT:
        return serve_job(r, method);
    case DVPPD_ROUTE_JOBS:
        return create_job(r);
    default:
        return answer_status(r, DVPP_ENOTFOUND, "path", "no such endpoint");
    }
}

/* --- the access handler ----------------------------------------------------------------- */

/* The job of a device route has finished: answer it. */
static enum MHD_Result answer_done(req *r)
{
    return r->route == DVPPD_ROUTE_BATCH ? answer_batch(r)
           : route_is_video(r->route)    ? answer_video(r)
                                         : answer_single(r);
}

/* The body is complete: run the request or answer it now. */
static enum MHD_Result dispatch(req *r, const char *method)
{
    dvpp_err e;
    dvpp_status st;

    r->t_read = dvpp_now_ns();
    dvpp_err_clear(&e);
    if (r->multipart && split_parts(r, &e) != DVPP_OK)
        return answer_error(r, &e);
    if (r->route != DVPPD_ROUTE_PREPROCESS && r->route != DVPPD_ROUTE_IMAGE &&
        r->route != DVPPD_ROUTE_DECODE && r->route != DVPPD_ROUTE_BATCH &&
        !route_is_video(r->route))
        return serve_now(r, method);
    dvpp_err_clear(&e);
    st = r->route == DVPPD_ROUTE_BATCH ? submit_batch(r, &e)
         : route_is_video(r->route)    ? submit_video(r, &e)
                                       : submit_single(r, &e);
    if (st != DVPP_OK)
        return answer_error(r, &e);
    r->state = REQ_RUNNING;
    if (wait_for_job(r))
        return MHD_YES;
    return answer_done(r);
}

static enum MHD_Result first_call(dvppd_http *h, struct MHD_Connection *conn,
                                  const char *url, const char *method, void **con_cls)
{
    enum MHD_Result ret = MHD_YES;
    bool answered;
    req *r = req_new(h, conn);

    if (!r)
        return MHD_NO;
    *con_cls = r;
    atomic_fetch_add(&h->inflight, 1);
    dvppd_metrics_inflight(h->metrics, 1);
    if (!route_request(r, url, method, &ret))
        return ret;
    if (atomic_load(&h->draining) && route_has_body(r->route))
        return answer_status(r, DVPP_ECANCELED, NULL, "the server is stopping");
    if (!route_has_body(r->route) || strcmp(method, "POST"))
        return MHD_YES;
    ret = start_body(r, &answered);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    req *r = *con_cls;
    bool done;

    (void)version;
    if (!r)
        return first_call(cls, conn, url, method, con_cls);
    if (r->state == REQ_ANSWERED) { /* an early answer: ignore the body */
        bool late = *upload_data_size && dvpp_now_ns() > r->deadline;
        *upload_data_size = 0;
        return late ? MHD_NO : MHD_YES;
    }
    if (r->state == REQ_READING && *upload_data_size) {
        enum MHD_Result ret = take_body(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return ret;
    }
    if (r->state == REQ_READING)
        return dispatch(r, method);
    /* Resumed after the job finished. */
    pthread_mutex_lock(&r->mu);
    done = r->done;
    pthread_mutex_unlock(&r->mu);
    if (!done)
        return MHD_YES;
    return answer_done(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    dvppd_http *h = cls;
    req *r = *con_cls;

    (void)conn, (void)toe;
    if (!r)
        return;
    *con_cls = NULL;
    req_free(r);
    dvppd_metrics_inflight(h->metrics, -1);
    atomic_fetch_sub(&h->inflight, 1);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];

    (void)cls;
    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    dvpp_log(DVPP_LOG_DEBUG, "http: %s", line);
}

/* --- lifecycle ---------------------------------------------------------------------------- */

static dvpp_status bind_address(const char *host, uint16_t port, struct sockaddr_storage *ss,
                                dvpp_err *err)
{
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

    memset(ss, 0, sizeof(*ss));
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        return DVPP_OK;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        return DVPP_OK;
    }
    return dvpp_err_set(err, DVPP_EINVAL, "http.listen",
                        "http.listen host '%s' is not an IPv4 or IPv6 address", host);
}

/* libmicrohttpd on systemd's socket @lfd, or bound to @ss. */
static struct MHD_Daemon *start_mhd(dvppd_http *h, unsigned flags, const dvppd_config *c,
                                    int lfd, struct sockaddr_storage *ss)
{
    struct MHD_OptionItem o[] = {
        lfd >= 0 ? (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, lfd, NULL}
                 : (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, ss},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)c->http.threads, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)c->http.max_connections, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)c->http.max_per_ip, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)c->http.idle_timeout_s, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)c->http.connection_memory, NULL},
        {MHD_OPTION_END, 0, NULL},
    };

    return MHD_start_daemon(flags, lfd >= 0 ? 0 : c->http_port, NULL, NULL, on_request, h,
                            MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
                            MHD_OPTION_ARRAY, o,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
}

dvpp_status dvppd_http_start(const dvppd_http_env *env, dvppd_http **out, dvpp_err *err)
{
    const dvppd_config *c = env->cfg;
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    struct sockaddr_storage ss;
    const union MHD_DaemonInfo *info;
    int lfd = env->listen_fd;
    dvppd_http *h;
    dvpp_status st;

    *out = NULL;
    if (lfd < 0) {
        st = bind_address(c->http_addr, c->http_port, &ss, err);
        if (st != DVPP_OK)
            return st;
        if (ss.ss_family == AF_INET6)
            flags |= MHD_USE_IPv6;
    } else {
        /* systemd's socket: libmicrohttpd must not bind, only accept. */
        socklen_t len = sizeof(ss);
        if (getsockname(lfd, (struct sockaddr *)&ss, &len) != 0) {
            close(lfd);
            return dvpp_err_set(err, DVPP_ESYS, "http.listen", "passed HTTP socket: %s",
                                strerror(errno));
        }
        if (ss.ss_family == AF_INET6)
            flags |= MHD_USE_IPv6;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        if (lfd >= 0)
            close(lfd);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "http server");
    }
    pthread_mutex_init(&h->pool.mu, NULL);
    h->cfg = c->http;
    h->device = env->device;
    h->metrics = env->metrics;
    h->live = env->live;
    h->sock = env->sock;
    h->queue_depth = c->queue_depth;
    st = dvppd_jobs_new(c->http.max_jobs, c->http.job_ttl_s, &h->jobs, err);
    if (st != DVPP_OK)
        goto fail;
    h->mhd = start_mhd(h, flags, c, lfd, &ss);
    if (!h->mhd) {
        st = dvpp_err_set(err, DVPP_ESYS, "http.listen", "cannot serve HTTP on %s: %s",
                          lfd >= 0 ? "the passed socket" : c->http_addr, strerror(errno));
        goto fail;
    }
    info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : c->http_port;
    *out = h;
    return DVPP_OK;

fail:
    if (lfd >= 0)
        close(lfd);
    dvppd_jobs_free(h->jobs);
    pthread_mutex_destroy(&h->pool.mu);
    free(h);
    return st;
}

uint16_t dvppd_http_port(const dvppd_http *h)
{
    return h->port;
}

void dvppd_http_set_ready(dvppd_http *h, bool ready)
{
    atomic_store(&h->ready, ready);
}

void dvppd_http_drain(dvppd_http *h)
{
    MHD_socket fd;

    if (!h || atomic_exchange(&h->draining, true))
        return;
    fd = MHD_quiesce_daemon(h->mhd);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

long dvppd_http_inflight(dvppd_http *h)
{
    return h ? atomic_load(&h->inflight) : 0;
}

/* Wait until @n reads 0, up to @deadline_ns. */
static bool wait_zero(atomic_long *n, uint64_t deadline_ns)
{
    struct timespec tick = {0, 10 * 1000 * 1000};

    while (atomic_load(n) > 0 && dvpp_now_ns() < deadline_ns)
        nanosleep(&tick, NULL);
    return atomic_load(n) == 0;
}

/* How long canceled jobs get to complete (they stop at their next check:
 * a frame, a strip, the stall hook) before a stop gives up on them. */
#define CANCEL_GRACE_NS 5000000000ull

bool dvppd_http_stop(dvppd_http *h, unsigned timeout_s)
{
    if (!h)
        return true;
    dvppd_http_drain(h);
    if (!wait_zero(&h->inflight, dvpp_now_ns() + (uint64_t)timeout_s * 1000000000u)) {
        /* Past the drain time: cancel the device's work so that every
         * suspended request is resumed and answered (libmicrohttpd aborts
         * the process if stopped with a suspended connection). Requests
         * that are not waiting on a job (a body still arriving, an answer
         * a slow reader has not taken) are cut by MHD_stop_daemon below. */
        dvpp_log(DVPP_LOG_WARN, "http: %ld request(s) still open after %u s (%ld waiting "
                 "on the device); canceling their jobs and closing their connections",
                 atomic_load(&h->inflight), timeout_s, atomic_load(&h->suspended));
        dvpp_device_cancel_all(h->device);
        if (!wait_zero(&h->suspended, dvpp_now_ns() + CANCEL_GRACE_NS)) {
            /* A job that ignores its cancellation still owns a connection:
             * nothing this front end uses may be freed while it can run. */
            dvpp_log(DVPP_LOG_ERR, "http: %ld request(s) still wait on jobs that do not "
                     "end; the process must exit without freeing what they use",
                     atomic_load(&h->suspended));
            return false;
        }
    }
    /* Connections idle in keep-alive, or still reading a body, or still
     * sending an answer, are closed here (each request freed through
     * on_completed); none is suspended (every job has completed, so
     * every connection was resumed). */
    MHD_stop_daemon(h->mhd);
    dvppd_jobs_free(h->jobs);
    pool_fini(&h->pool);
    free(h);
    return true;
}
