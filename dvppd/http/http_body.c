/* http_body: what a request brings. The body (its limit, the memory budget
 * of bodies being received, the deadline, multipart split once whole),
 * the query and the one JSON spec, and the buffer pool that bodies and
 * counted result buffers come from.
 *
 * A body or result buffer is one allocation: a 64-byte header (struct
 * http_blob), then the bytes. The pool keeps up to POOL_MAX of them
 * (POOL_MAX_BYTES together) so a steady stream of same-sized requests
 * touches no new pages. A result buffer is counted (the request, then
 * libmicrohttpd's response, a job, each GET of the job's result) and holds
 * its bytes of the device's byte budget until its last reference goes, so
 * a result waiting for a slow reader or a GET is seen by admission.
 *
 * Locks: http_pool.mu guards the free list only (a leaf: nothing is called
 * under it). Body bytes are reserved with a compare-and-swap on
 * dvppd_http.body_bytes, no lock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_int.h"

/* --- reusable buffers ----------------------------------------------------------- */

typedef struct http_blob {
    struct http_blob *next; /* the pool's free list */
    size_t cap;             /* bytes after the header */
    struct dvppd_http *h;
    uint64_t held;          /* bytes of the device's budget held; 0: none */
    uint64_t pooled_ns;     /* when it went onto the free list (dvpp_now_ns) */
    atomic_uint refs;       /* result buffers: references */
    uint8_t pad[20];
} http_blob;

_Static_assert(sizeof(http_blob) == 64, "blob header keeps the data 64-byte aligned");

#define POOL_MAX 32
#define POOL_MAX_BYTES ((size_t)256 << 20)

static uint8_t *blob_data(http_blob *b)
{
    return (uint8_t *)(b + 1);
}

static http_blob *blob_of(const void *data)
{
    return (http_blob *)data - 1;
}

/* A buffer of at least @size bytes: a pooled one that is not much larger,
 * else a new one. Holds nothing, one reference; NULL when out of memory. */
static void *pool_get(dvppd_http *h, size_t size)
{
    http_blob **pp, *b = NULL;

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
        if (size > SIZE_MAX - sizeof(http_blob))
            return NULL;
        b = dvpp_malloc(sizeof(http_blob) + size);
        if (!b)
            return NULL;
        b->cap = size;
        b->h = h;
    }
    b->held = 0;
    atomic_init(&b->refs, 1);
    return blob_data(b);
}

void http_buf_put(dvppd_http *h, void *data)
{
    http_blob *b;

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
        b->pooled_ns = dvpp_now_ns();
        b->next = h->pool.free;
        h->pool.free = b;
        h->pool.count++;
        h->pool.bytes += b->cap;
        b = NULL;
    }
    pthread_mutex_unlock(&h->pool.mu);
    if (b)
        dvpp_free(b, sizeof(http_blob) + b->cap);
}

dvpp_status http_result_get(dvppd_http *h, const dvpp_limits *lim, size_t size, void **out,
                            dvpp_err *err)
{
    dvpp_status st = dvpp_limits_check_output(lim, size, err);

    *out = NULL;
    if (st == DVPP_OK)
        st = dvpp_device_hold_bytes(h->device, size, false, err);
    if (st != DVPP_OK)
        return st;
    *out = pool_get(h, size);
    if (!*out) {
        dvpp_device_release_bytes(h->device, size);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory for a result of %zu bytes",
                            size);
    }
    blob_of(*out)->held = size;
    dvppd_metrics_result(h->metrics, (int64_t)size);
    return DVPP_OK;
}

void *http_result_ref(const void *data)
{
    atomic_fetch_add(&blob_of(data)->refs, 1);
    return (void *)data;
}

void http_result_unref(void *data)
{
    if (data && atomic_fetch_sub(&blob_of(data)->refs, 1) == 1)
        http_buf_put(blob_of(data)->h, data);
}

/* libmicrohttpd's release of a response body from http_result_get. */
static void result_release_mhd(void *data)
{
    http_result_unref(data);
}

void http_result_release_job(void *ctx, void *data)
{
    (void)ctx;
    http_result_unref(data);
}

struct MHD_Response *http_result_response(void *data, size_t len)
{
    return MHD_create_response_from_buffer_with_free_callback(len, data, result_release_mhd);
}

struct MHD_Response *http_req_result_response(http_req *r)
{
    struct MHD_Response *resp = http_result_response(r->result, r->result_len);

    if (resp)
        r->result = NULL;
    return resp;
}

void http_pool_init(http_pool *p)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
}

void http_pool_fini(http_pool *p)
{
    while (p->free) {
        http_blob *b = p->free;
        p->free = b->next;
        dvpp_free(b, sizeof(http_blob) + b->cap);
    }
    pthread_mutex_destroy(&p->mu);
}

/* A sum, not now - pooled: a blob put back after @now_ns was read is newer
 * than the cut, never "idle for ever". */
static bool blob_idle(const http_blob *b, uint64_t now_ns, uint64_t idle_ns)
{
    return b->pooled_ns + idle_ns <= now_ns;
}

size_t http_pool_idle_bytes(http_pool *p, uint64_t now_ns, uint64_t idle_ns)
{
    size_t bytes = 0;

    pthread_mutex_lock(&p->mu);
    for (const http_blob *b = p->free; b; b = b->next)
        if (blob_idle(b, now_ns, idle_ns))
            bytes += b->cap;
    pthread_mutex_unlock(&p->mu);
    return bytes;
}

size_t http_pool_trim(http_pool *p, uint64_t now_ns, uint64_t idle_ns)
{
    http_blob *list = NULL, **pp;
    size_t freed = 0;

    pthread_mutex_lock(&p->mu);
    for (pp = &p->free; *pp;) {
        http_blob *b = *pp;
        if (blob_idle(b, now_ns, idle_ns)) {
            *pp = b->next;
            p->count--;
            p->bytes -= b->cap;
            freed += b->cap;
            b->next = list;
            list = b;
        } else {
            pp = &b->next;
        }
    }
    pthread_mutex_unlock(&p->mu);
    while (list) { /* freed outside the leaf lock */
        http_blob *b = list;
        list = b->next;
        dvpp_free(b, sizeof(http_blob) + b->cap);
    }
    return freed;
}

/* --- body intake -------------------------------------------------------------------- */

uint64_t http_max_body(const dvppd_settings *set)
{
    return set->cfg.http.max_body_bytes ? set->cfg.http.max_body_bytes
                                        : set->cfg.limits.max_encoded_bytes;
}

/* Reserve @n more bytes of the body memory budget (http.max_body_memory). */
static bool body_reserve(http_req *r, uint64_t n)
{
    uint64_t cur = atomic_load(&r->h->body_bytes);

    do {
        if (cur + n > r->set->cfg.http.max_body_memory)
            return false;
    } while (!atomic_compare_exchange_weak(&r->h->body_bytes, &cur, cur + n));
    r->reserved += n;
    return true;
}

static bool content_is_multipart(struct MHD_Connection *c)
{
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_TYPE);
    return ct && !strncasecmp(ct, "multipart/form-data", 19);
}

/* Counted, then split into an array of exactly that many. */
dvpp_status http_body_split(http_req *r, dvpp_err *err)
{
    unsigned n = 0;
    dvpp_status st = http_multipart_parse(r->body, r->body_len, r->boundary, NULL,
                                          r->max_parts, &n, err);

    if (st == DVPP_ELIMIT)
        return http_route_is_batch(r->route)
                   ? dvpp_err_set(err, DVPP_ELIMIT, "parts", "more than %u parts "
                                  "(http.max_batch_items)", r->max_parts - 2)
                   : dvpp_err_set(err, DVPP_ELIMIT, "parts", "more than %u parts: one "
                                  "input, spec and aipp", r->max_parts);
    if (st != DVPP_OK || n == 0)
        return st;
    r->parts = calloc(n, sizeof(*r->parts));
    if (!r->parts)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory for %u parts", n);
    st = http_multipart_parse(r->body, r->body_len, r->boundary, r->parts, r->max_parts,
                              &r->nparts, err);
    return st;
}

enum MHD_Result http_body_start(http_req *r, bool *answered)
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
               : http_route_is_batch(r->route) || r->route == DVPPD_ROUTE_VIDEO_ENCODE
                   ? r->set->cfg.http.max_batch_bytes
                   : http_max_body(r->set);
    if (cl) {
        char *end;
        errno = 0;
        len = strtoull(cl, &end, 10);
        if (errno || *end || *cl < '0' || *cl > '9')
            return http_answer_status(r, DVPP_EINVAL, "Content-Length", "bad Content-Length");
    } else if (!te || strcasecmp(te, "chunked")) {
        return http_answer_error_code(r, 411, DVPP_EINVAL, "Content-Length",
                                      "a body needs Content-Length or chunked encoding");
    }
    if (len > r->limit) {
        snprintf(msg, sizeof(msg), "body of %llu bytes is above the limit of %llu",
                 len, (unsigned long long)r->limit);
        dvppd_metrics_reject(r->h->metrics, DVPPD_REJECT_BODY);
        return http_answer_status(r, DVPP_ELIMIT, "body", msg);
    }
    if (cl && !body_reserve(r, len))
        return http_answer_status(r, DVPP_EAGAIN, "body_memory",
                                  "too many bodies being received (http.max_body_memory); "
                                  "retry later");
    if (content_is_multipart(c)) {
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_TYPE);
        r->multipart = true;
        r->max_parts = (http_route_is_batch(r->route) ? r->set->cfg.http.max_batch_items : 1) + 2;
        if (!http_multipart_boundary(ct, r->boundary, sizeof(r->boundary)))
            return http_answer_status(r, DVPP_EINVAL, "Content-Type",
                                      "bad multipart/form-data (boundary?)");
    }
    if (cl && len) {
        r->body = pool_get(r->h, (size_t)len);
        if (!r->body)
            return http_answer_status(r, DVPP_ENOMEM, "body", "out of memory for the body");
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
static bool body_past_deadline(http_req *r)
{
    if (dvpp_now_ns() <= r->deadline)
        return false;
    dvppd_metrics_reject(r->h->metrics, DVPPD_REJECT_DEADLINE);
    /* an early answer counted the request already, with its status */
    if (r->state != HTTP_REQ_ANSWERED)
        dvppd_metrics_request(r->h->metrics, r->route, 408, dvpp_now_ns() - r->t_start);
    return true;
}

enum MHD_Result http_body_skip(http_req *r)
{
    return body_past_deadline(r) ? MHD_NO : MHD_YES;
}

enum MHD_Result http_body_take(http_req *r, const char *data, size_t size)
{
    if (body_past_deadline(r))
        return MHD_NO;
    if (!http_route_has_body(r->route))
        return MHD_YES; /* a body on GET/DELETE means nothing: skip it */
    if (r->received + size > r->limit) {
        dvppd_metrics_reject(r->h->metrics, DVPPD_REJECT_BODY);
        dvppd_metrics_request(r->h->metrics, r->route, 413, dvpp_now_ns() - r->t_start);
        return MHD_NO;
    }
    r->received += size;
    if (r->received > r->reserved && !body_reserve(r, r->received - r->reserved)) {
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
        nb = pool_get(r->h, cap);
        if (!nb)
            return MHD_NO;
        if (r->body_len)
            memcpy(nb, r->body, r->body_len);
        http_buf_put(r->h, r->body);
        r->body = nb;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, size);
    r->body_len += size;
    return MHD_YES;
}

/* --- parts ------------------------------------------------------------------------ */

static const http_part *part_find(const http_req *r, const char *name)
{
    for (unsigned i = 0; i < r->nparts; i++)
        if (!strcmp(r->parts[i].name, name))
            return &r->parts[i];
    return NULL;
}

bool http_part_is_control(const http_part *p)
{
    return !strcmp(p->name, "spec") || !strcmp(p->name, "aipp");
}

dvpp_status http_body_input(const http_req *r, const uint8_t **in, size_t *len,
                            dvpp_err *err)
{
    const http_part *img = NULL;

    if (!r->multipart) {
        *in = r->body, *len = r->body_len;
    } else {
        for (unsigned i = 0; i < r->nparts; i++) {
            if (http_part_is_control(&r->parts[i]))
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

/* --- the query and the spec ------------------------------------------------------- */

/* The front end's own parameters (HTTP_FRONT_KEYS of them): never the
 * spec's. */
static const char *const k_front_keys[HTTP_FRONT_KEYS] = {"dump", "trace"};

static int front_key_index(const char *key)
{
    for (int i = 0; i < HTTP_FRONT_KEYS; i++)
        if (!strcmp(key, k_front_keys[i]))
            return i;
    return -1;
}

const char *http_query_front(const http_query *q, const char *key)
{
    int i = front_key_index(key);

    return i < 0 ? NULL : q->front[i];
}

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    http_query *q = cls;
    int front = front_key_index(key);

    (void)kind;
    if (front >= 0) {
        q->front[front] = value ? value : "";
        return MHD_YES;
    }
    if (!strcmp(key, "spec")) {
        q->spec = value ? value : "";
        return MHD_YES;
    }
    if (q->n == HTTP_MAX_QUERY_ARGS) {
        q->overflow = true;
        return MHD_NO;
    }
    q->kv[q->n++] = (dvppd_kv){key, value};
    return MHD_YES;
}

dvpp_status http_query_read(http_req *r, http_query *q, dvpp_err *err)
{
    memset(q, 0, sizeof(*q));
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_arg, q);
    if (q->overflow)
        return dvpp_err_set(err, DVPP_EINVAL, "query", "more than %d query parameters",
                            HTTP_MAX_QUERY_ARGS);
    return DVPP_OK;
}

dvpp_status http_spec_source(http_req *r, const http_query *q, dvppd_spec_env *env,
                             const char **json, size_t *len, dvpp_err *err)
{
    const char *hdr = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Dvpp-Spec");
    const http_part *sp = part_find(r, "spec"), *ap = part_find(r, "aipp");

    *json = NULL;
    *len = 0;
    if ((q->spec != NULL) + (hdr != NULL) + (sp != NULL) > 1)
        return dvpp_err_set(err, DVPP_EINVAL, "spec",
                            "one JSON spec: the query, the X-Dvpp-Spec header or the "
                            "spec part");
    if (q->spec || hdr)
        *json = q->spec ? q->spec : hdr, *len = strlen(*json);
    else if (sp)
        *json = (const char *)sp->data, *len = sp->len;
    if (ap) {
        env->aipp_text = (const char *)ap->data;
        env->aipp_len = ap->len;
    }
    return DVPP_OK;
}

dvpp_status http_spec_build(http_req *r, dvppd_spec_kind kind, dvpp_err *err)
{
    dvppd_spec_env env = {kind, dvppd_aipp_find, (void *)&r->set->aipp, NULL, 0,
                          dvppd_preset_find, (void *)&r->set->presets};
    const char *json;
    size_t json_len;
    http_query q;
    dvpp_status st = http_query_read(r, &q, err);

    if (st == DVPP_OK)
        st = http_spec_source(r, &q, &env, &json, &json_len, err);
    if (st != DVPP_OK)
        return st;
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
