/* http_dump: ?dump=1 (or X-Dvpp-Dump: 1) on /v1/preprocess, /v1/image and
 * /v1/decode (docs/dump.md).
 *
 * On the HTTP thread, once the input is probed: the flag, who may dump
 * (dvppd_dump_allow: 403 otherwise), the request's folder (dvppd_dump_begin)
 * and the pipeline's watch. On the worker, the watch writes each
 * intermediate as the run shows it (dvpp_dump's image hook). Back on the
 * HTTP thread, before any response exists (the result buffer, the ring
 * slot and the encoded image are all still the request's): the answer's
 * exact bytes, the manifest, retention; the answer names the folder in
 * X-Dvpp-Dump. */
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

struct http_dump {
    dvpp_dump d;
    char name[DVPP_DUMP_NAME_LEN];
    char *spec_json;           /* the request's spec, compact JSON (json_dumps); owned */
    const char *input_format;  /* "jpeg", "png", "raw" */
    uint32_t in_w, in_h;
    uint64_t in_bytes;
};

void http_dump_free(struct http_dump *d)
{
    if (!d)
        return;
    dvpp_dump_close(&d->d);
    free(d->spec_json);
    free(d);
}

/* The flag from the query or the header (either asks). */
static dvpp_status dump_wanted(http_req *r, const http_query *q, bool *on, dvpp_err *err)
{
    const char *hdr = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Dvpp-Dump");
    bool by_query, by_header;
    dvpp_status st = dvppd_dump_flag(http_query_front(q, "dump"), &by_query, err);

    if (st == DVPP_OK)
        st = dvppd_dump_flag(hdr, &by_header, err);
    *on = st == DVPP_OK && (by_query || by_header);
    return st;
}

/* The spec as the manifest shows it: the JSON spec re-serialised (it
 * parsed, so it loads), or the query's parameters as an object of strings. */
static char *spec_text(http_req *r, const http_query *q)
{
    dvppd_spec_env env;
    const char *json = NULL;
    size_t len = 0;
    json_t *j = NULL;
    char *s;

    memset(&env, 0, sizeof(env));
    if (http_spec_source(r, q, &env, &json, &len, NULL) == DVPP_OK && json) {
        j = json_loadb(json, len, 0, NULL);
    } else {
        j = json_object();
        for (size_t i = 0; j && i < q->n; i++)
            json_object_set_new(j, q->kv[i].key, http_json_str(q->kv[i].value));
    }
    if (!j)
        return NULL;
    s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    json_decref(j);
    return s;
}

static const union MHD_ConnectionInfo *peer_info(http_req *r)
{
    return MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
}

dvpp_status http_dump_start(http_req *r, const dvpp_pipe_source *src, size_t len,
                            dvpp_err *err)
{
    const union MHD_ConnectionInfo *peer;
    struct http_dump *d;
    http_query q;
    bool on;
    dvpp_status st = http_query_read(r, &q, err);

    if (st == DVPP_OK)
        st = dump_wanted(r, &q, &on, err);
    if (st != DVPP_OK || !on)
        return st;
    peer = peer_info(r);
    st = dvppd_dump_allow(r->h->dump, peer ? peer->client_addr : NULL, err);
    if (st != DVPP_OK)
        return st;
    if (!(d = calloc(1, sizeof(*d))))
        return dvpp_err_set(err, DVPP_ENOMEM, "dump", "out of memory");
    d->d.dirfd = -1;
    d->spec_json = spec_text(r, &q);
    d->input_format = src->is_jpeg ? "jpeg"
                      : r->spec.pipe.input == DVPP_PIPE_IN_RAW ? "raw"
                                                               : "png";
    d->in_w = src->is_jpeg ? src->jpeg.width : src->width;
    d->in_h = src->is_jpeg ? src->jpeg.height : src->height;
    d->in_bytes = len;
    st = dvppd_dump_begin(r->h->dump, &d->d, d->name, err);
    if (st != DVPP_OK) {
        http_dump_free(d);
        return st;
    }
    r->dump = d;
    r->spec.pipe.watch = dvpp_dump_watch(&d->d);
    return DVPP_OK;
}

/* The answer's bytes as the API sends them: a tensor or pixels (.npy, or
 * raw), an encoded image. */
static void dump_answer(http_req *r, struct http_dump *d)
{
    const dvpp_pipeline *p = &r->spec.pipe;
    const dvpp_tensor *t = &r->out.tensor;
    char hdr[DVPP_NPY_HEADER_MAX];
    bool tensor = p->output == DVPP_PIPE_OUT_TENSOR;

    if (tensor && r->ticket.ring) { /* the slot: the tensor's bytes, as a .npy */
        size_t hl = dvpp_npy_header(hdr, dvpp_dtype_npy(t->dtype), t->shape, t->ndim);
        dvpp_dump_bytes(&d->d, "tensor.npy", "tensor", hdr, hl, t->data, t->bytes, NULL);
    } else if (p->output == DVPP_PIPE_OUT_IMAGE && p->encoding != DVPP_PIPE_ENC_NONE) {
        dvpp_dump_bytes(&d->d, p->encoding == DVPP_PIPE_ENC_PNG ? "output.png" : "output.jpg",
                        "output", NULL, 0, r->out.encoded.data, r->out.encoded.len, NULL);
    } else if (r->result) {
        const char *name = tensor ? (r->spec.raw_out ? "tensor.raw" : "tensor.npy")
                                  : (r->spec.raw_out ? "output.raw" : "output.npy");
        dvpp_dump_bytes(&d->d, name, tensor ? "tensor" : "output", NULL, 0, r->result,
                        r->result_len, NULL);
    }
}

void http_dump_finish(http_req *r)
{
    struct http_dump *d = r->dump;
    dvpp_dump_meta m;
    dvpp_err err;

    if (!d || d->d.dirfd < 0)
        return;
    if (r->status == DVPP_OK)
        dump_answer(r, d);
    m = (dvpp_dump_meta){
        .request = d->name,
        .spec_json = d->spec_json,
        .input_format = d->input_format,
        .input_width = d->in_w,
        .input_height = d->in_h,
        .input_bytes = d->in_bytes,
        .tensor = r->status == DVPP_OK && r->spec.pipe.output == DVPP_PIPE_OUT_TENSOR
                      ? &r->out.tensor
                      : NULL,
        .geom = r->status == DVPP_OK ? &r->out.geom : NULL,
        .error = r->status == DVPP_OK ? NULL : r->err.msg,
    };
    dvpp_err_clear(&err);
    if (dvpp_dump_finish(&d->d, &m, &err) != DVPP_OK)
        dvpp_log(DVPP_LOG_WARN, "dump %s: %s", d->name, err.msg);
    dvppd_dump_retain(r->h->dump);
}

void http_dump_header(http_req *r, struct MHD_Response *resp)
{
    if (r->dump && resp)
        http_header(resp, "X-Dvpp-Dump", r->dump->name);
}
