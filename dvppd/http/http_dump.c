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
 * X-Dvpp-Dump. A request that fails after its folder was made (a plan
 * error, a limit, a full queue) gets a manifest with the error from
 * http_dump_abort, or from http_dump_free at the latest: every folder ends
 * with a manifest and leaves the set retention keeps.
 *
 * A batch's item folders are made at the start but opened only while an
 * image (or at the end the item's tensor and manifest) is written into
 * one: a batch holds its top folder's descriptor plus one per worker
 * writing at that instant, whatever its number of items. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

struct http_dump {
    dvpp_dump d;
    dvppd_dump *root;          /* the daemon's dump.dir; not owned */
    bool begun;                /* dvppd_dump_begin made the folder, not yet ended */
    char name[DVPP_DUMP_NAME_LEN];
    char *spec_json;           /* the request's spec, compact JSON (json_dumps); owned */
    const char *input_format;  /* "jpeg", "png", "raw" */
    uint32_t in_w, in_h;
    uint64_t in_bytes;
    /* /v1/batch: item i's images go to item-NNNN/ (items[i]); the top
     * folder holds the batch's tensor and the manifest. */
    dvpp_dump *items;          /* owned array of @nitems (folders made), NULL for one
                                  image; each closed but while it is written */
    size_t nitems;
    dvpp_pipe_watch batch_watch; /* image hook -> items[item] */
};

/* What the top folder's manifest says of the request's input (a batch:
 * the body's bytes); the caller adds the outcome. */
static dvpp_dump_meta top_meta(const struct http_dump *d)
{
    return (dvpp_dump_meta){
        .request = d->name,
        .spec_json = d->spec_json,
        .input_format = d->input_format,
        .input_width = d->in_w,
        .input_height = d->in_h,
        .input_bytes = d->in_bytes,
    };
}

/* Item @i's folder name, "item-NNNN". */
static void item_folder(char out[32], size_t i)
{
    snprintf(out, 32, "item-%04zu", i);
}

/* The dump is over (manifest written or given up): out of the set
 * retention keeps, then retention. */
static void dump_end(struct http_dump *d)
{
    if (!d->begun)
        return;
    d->begun = false;
    dvppd_dump_end(d->root, d->name);
}

/* A dump whose request failed before its job ran (or was dropped): each
 * item folder and the top folder get a manifest carrying @why, then the
 * dump ends. A no-op once the dump has ended. */
static void dump_abort(struct http_dump *d, const char *why)
{
    char folder[32], request[DVPP_DUMP_NAME_LEN + 32];
    dvpp_dump_meta m;
    dvpp_err err;

    if (!d->begun)
        return;
    for (size_t i = 0; i < d->nitems && d->d.dirfd >= 0; i++) {
        item_folder(folder, i);
        snprintf(request, sizeof(request), "%s/%s", d->name, folder);
        m = (dvpp_dump_meta){.request = request, .spec_json = d->spec_json, .error = why};
        dvpp_err_clear(&err);
        if (dvpp_dump_reopen(&d->items[i], d->d.dirfd, folder, &err) != DVPP_OK ||
            dvpp_dump_finish(&d->items[i], &m, &err) != DVPP_OK)
            dvpp_log(DVPP_LOG_WARN, "dump %s: %s", request, err.msg);
    }
    m = top_meta(d);
    m.error = why;
    dvpp_err_clear(&err);
    if (d->d.dirfd >= 0 && dvpp_dump_finish(&d->d, &m, &err) != DVPP_OK)
        dvpp_log(DVPP_LOG_WARN, "dump %s: %s", d->name, err.msg);
    dump_end(d);
}

void http_dump_abort(http_req *r, const dvpp_err *e)
{
    if (r->dump)
        dump_abort(r->dump, e && e->msg[0] ? e->msg
                            : dvpp_strerror(e ? e->status : DVPP_EIO));
}

void http_dump_free(struct http_dump *d)
{
    if (!d)
        return;
    /* Every path that answers should have finished or aborted the dump;
     * one that did not still leaves a manifest, never a bare folder. */
    dump_abort(d, "the request ended before its dump was finished");
    dvpp_dump_close(&d->d);
    for (size_t i = 0; i < d->nitems; i++)
        dvpp_dump_close(&d->items[i]);
    free(d->items);
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

/* The request's dump, if it asks for one and may: *@out NULL without the
 * flag; else a folder made (named in X-Dvpp-Dump) with the spec recorded. */
static dvpp_status dump_new(http_req *r, struct http_dump **out, dvpp_err *err)
{
    const union MHD_ConnectionInfo *peer;
    struct http_dump *d;
    http_query q;
    bool on;
    dvpp_status st = http_query_read(r, &q, err);

    *out = NULL;
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
    d->root = r->h->dump;
    d->spec_json = spec_text(r, &q);
    st = dvppd_dump_begin(d->root, &d->d, d->name, err);
    if (st != DVPP_OK) {
        http_dump_free(d);
        return st;
    }
    d->begun = true;
    dvpp_dump_reserve_spec(&d->d, d->spec_json ? strlen(d->spec_json) : 0);
    *out = d;
    return DVPP_OK;
}

dvpp_status http_dump_start(http_req *r, const dvpp_pipe_source *src, size_t len,
                            dvpp_err *err)
{
    struct http_dump *d;
    dvpp_status st = dump_new(r, &d, err);

    if (st != DVPP_OK || !d)
        return st;
    d->input_format = src->is_jpeg ? "jpeg"
                      : r->spec.pipe.input == DVPP_PIPE_IN_RAW ? "raw"
                                                               : "png";
    d->in_w = src->is_jpeg ? src->jpeg.width : src->width;
    d->in_h = src->is_jpeg ? src->jpeg.height : src->height;
    d->in_bytes = len;
    r->dump = d;
    r->spec.pipe.watch = dvpp_dump_watch(&d->d);
    return DVPP_OK;
}

/* A batch item's image, on the worker running that item: each item has a
 * dump of its own, so items on different workers never share one (an
 * item's stages run one after another). Its folder is open only for the
 * write: a batch of many items never holds a descriptor per item. A
 * folder that cannot be opened leaves the image noted as not written. */
static void batch_watch_image(void *ctx, const char *name, int index, uint32_t item,
                              const dvpp_image *img)
{
    struct http_dump *d = ctx;
    char folder[32];
    dvpp_err err;

    if (item >= d->nitems)
        return;
    item_folder(folder, item);
    dvpp_err_clear(&err);
    dvpp_dump_reopen(&d->items[item], d->d.dirfd, folder, &err);
    dvpp_dump_image(&d->items[item], name, index, img);
    dvpp_dump_close(&d->items[item]);
}

/* What the batch's answer takes in the top folder: the result buffer, or
 * the ring slot's tensor with its .npy header (dump_answer). */
static uint64_t batch_answer_bytes(const http_req *r)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    const dvpp_tensor *t = &r->out.tensor;

    if (r->result)
        return r->result_len;
    return dvpp_npy_header(hdr, dvpp_dtype_npy(t->dtype), t->shape, t->ndim) + t->bytes;
}

/* The item folders, item-0000 ... (made, then closed until written). The
 * top folder's room for the batch's tensor and its manifest comes first
 * (the tensor is n items' worth, so an equal share would skip it); the
 * items share the rest equally. When the tensor alone passes the bound it
 * is skipped anyway, and every folder gets an equal share. */
static dvpp_status batch_items_open(http_req *r, struct http_dump *d, size_t n, dvpp_err *err)
{
    uint64_t total = d->d.max_bytes;
    size_t spec_len = d->spec_json ? strlen(d->spec_json) : 0;
    uint64_t top = batch_answer_bytes(r) + dvpp_dump_manifest_reserve(total, spec_len);
    uint64_t share = top < total ? (total - top) / n : total / (n + 1);
    char name[32];

    d->items = calloc(n, sizeof(*d->items));
    if (!d->items)
        return dvpp_err_set(err, DVPP_ENOMEM, "dump", "out of memory");
    for (size_t i = 0; i < n; i++)
        d->items[i].dirfd = -1;
    for (size_t i = 0; i < n; i++) {
        dvpp_status st;
        item_folder(name, i);
        st = dvpp_dump_open(&d->items[i], d->d.dirfd, name, false, share, err);
        if (st != DVPP_OK)
            return st;
        d->nitems = i + 1; /* made: aborting writes its manifest */
        dvpp_dump_reserve_spec(&d->items[i], spec_len);
        dvpp_dump_close(&d->items[i]);
    }
    d->d.max_bytes -= share * n;
    dvpp_dump_reserve_spec(&d->d, spec_len);
    return DVPP_OK;
}

dvpp_status http_dump_batch_start(http_req *r, dvpp_err *err)
{
    struct http_dump *d;
    dvpp_status st = dump_new(r, &d, err);

    if (st != DVPP_OK || !d)
        return st;
    r->dump = d; /* freed with the request, also on a failure below */
    d->in_bytes = r->body_len; /* the top manifest's input: the whole body */
    st = batch_items_open(r, d, r->ninputs, err);
    if (st != DVPP_OK)
        return st;
    d->batch_watch = (dvpp_pipe_watch){.ctx = d, .span = NULL, .image = batch_watch_image};
    r->spec.pipe.watch = &d->batch_watch;
    return DVPP_OK;
}

dvpp_status http_dump_refuse(http_req *r, dvpp_err *err)
{
    http_query q;
    bool on;
    dvpp_status st = http_query_read(r, &q, err);

    if (st == DVPP_OK)
        st = dump_wanted(r, &q, &on, err);
    if (st == DVPP_OK && on)
        st = dvpp_err_set(err, DVPP_EINVAL, "dump",
                          "dumps are for /v1/preprocess, /v1/image, /v1/decode and "
                          "/v1/batch, not this route");
    return st;
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
    m = top_meta(d);
    m.tensor = r->status == DVPP_OK && r->spec.pipe.output == DVPP_PIPE_OUT_TENSOR
                   ? &r->out.tensor
                   : NULL;
    m.geom = r->status == DVPP_OK ? &r->out.geom : NULL;
    m.error = r->status == DVPP_OK ? NULL : r->err.msg;
    dvpp_err_clear(&err);
    if (dvpp_dump_finish(&d->d, &m, &err) != DVPP_OK)
        dvpp_log(DVPP_LOG_WARN, "dump %s: %s", d->name, err.msg);
    dump_end(d);
}

/* "jpeg"/"png" by the bytes' signature (a batch item is not probed on the
 * HTTP thread), else NULL. */
static const char *sniff_format(const uint8_t *b, size_t len)
{
    static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    if (len >= 2 && b[0] == 0xFF && b[1] == 0xD8)
        return "jpeg";
    if (len >= 8 && !memcmp(b, png, sizeof(png)))
        return "png";
    return NULL;
}

/* Item @i's slice of the batch tensor @t, as a tensor of one image. */
static dvpp_tensor item_tensor(const dvpp_tensor *t, size_t i)
{
    dvpp_tensor it = *t;
    size_t bytes = t->n ? t->bytes / t->n : 0;

    it.n = 1;
    it.shape[0] = 1;
    it.bytes = bytes;
    it.data = (uint8_t *)t->data + i * bytes;
    return it;
}

/* Item @i's folder: its tensor (when it ran) and its manifest. */
static void batch_item_finish(http_req *r, struct http_dump *d, size_t i)
{
    char hdr[DVPP_NPY_HEADER_MAX], request[DVPP_DUMP_NAME_LEN + 32];
    char folder[32];
    dvpp_err ie, err;
    dvpp_status ist;
    dvpp_tensor it = item_tensor(&r->out.tensor, i);
    dvpp_dump_meta m;

    dvpp_err_clear(&ie);
    dvpp_err_clear(&err);
    item_folder(folder, i);
    snprintf(request, sizeof(request), "%s/%s", d->name, folder);
    if (dvpp_dump_reopen(&d->items[i], d->d.dirfd, folder, &err) != DVPP_OK) {
        dvpp_log(DVPP_LOG_WARN, "dump %s: %s", request, err.msg);
        return;
    }
    ist = dvpp_batchjob_item_status(r->bj, i, &ie);
    if (ist == DVPP_OK && it.data) {
        size_t hl = dvpp_npy_header(hdr, dvpp_dtype_npy(it.dtype), it.shape, it.ndim);
        dvpp_dump_bytes(&d->items[i], "tensor.npy", "tensor", hdr, hl, it.data, it.bytes,
                        NULL);
    }
    m = (dvpp_dump_meta){
        .request = request,
        .spec_json = d->spec_json,
        .input_format = sniff_format(r->inputs[i].data, r->inputs[i].len),
        .input_bytes = r->inputs[i].len,
        .tensor = ist == DVPP_OK ? &it : NULL,
        .error = ist == DVPP_OK ? NULL : ie.msg[0] ? ie.msg : dvpp_strerror(ist),
    };
    if (dvpp_dump_finish(&d->items[i], &m, &err) != DVPP_OK)
        dvpp_log(DVPP_LOG_WARN, "dump %s: %s", request, err.msg);
}

void http_dump_batch_finish(http_req *r, dvpp_status st, const dvpp_err *e)
{
    struct http_dump *d = r->dump;
    dvpp_dump_meta m;
    dvpp_err err;

    if (!d || d->d.dirfd < 0)
        return;
    for (size_t i = 0; i < d->nitems; i++)
        batch_item_finish(r, d, i);
    if (st == DVPP_OK)
        dump_answer(r, d);
    m = top_meta(d);
    m.tensor = st == DVPP_OK ? &r->out.tensor : NULL;
    m.error = st == DVPP_OK ? NULL : e->msg;
    dvpp_err_clear(&err);
    if (dvpp_dump_finish(&d->d, &m, &err) != DVPP_OK)
        dvpp_log(DVPP_LOG_WARN, "dump %s: %s", d->name, err.msg);
    dump_end(d);
}

void http_dump_header(http_req *r, struct MHD_Response *resp)
{
    if (r->dump && resp)
        http_header(resp, "X-Dvpp-Dump", r->dump->name);
}
