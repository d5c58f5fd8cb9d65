/* sock_jobs: job records, Submit (one image through the pipeline into a
 * ring slot or an inline answer) and BatchSubmit (many inputs into one
 * tensor in a slot), and the Results that answer them. Jobs are made and
 * answered on the socket thread; the device runs them and its callbacks
 * only post them back (sock_post_done). */
#include "sock_int.h"

#include <stdlib.h>
#include <string.h>

/* --- job records ---------------------------------------------------------------------- */

sjob *sock_job_new(conn *c, job_type type, uint64_t id, Dvpp__Envelope *env)
{
    sjob *j = calloc(1, sizeof(*j));

    if (!j)
        return NULL;
    j->type = type;
    j->c = c;
    sock_conn_ref(c);
    j->id = id;
    j->env = env;
    dvpp_buf_init(&j->out.encoded);
    j->status = DVPP_OK;
    return j;
}

void sock_job_free(sjob *j)
{
    dvppd_trace_job_end(&j->tj, NULL); /* never answered (refused): nothing stored */
    sock_vdec_free(j->vd);
    dvpp_batchjob_free(j->bj);
    sock_stream_recycle(j->c, j->own_stream);
    sock_unmap_inputs(j);
    if (j->has_slot)
        ipc_ring_abort(j->ring, j->slot);
    ipc_ring_unref(j->ring);
    free(j->inline_out);
    free(j->inputs);
    free(j->item_pipes);
    dvpp_buf_fini(&j->vdata);
    dvpp_buf_fini(&j->out.encoded);
    if (j->env)
        dvpp__envelope__free_unpacked(j->env, NULL);
    sock_conn_unref(j->c);
    free(j);
}

void sock_job_done(sjob *j, dvpp_status st, const dvpp_err *err)
{
    j->status = st;
    if (st != DVPP_OK && err)
        j->err = *err;
    sock_post_done(j->c->s, j, true);
}

/* Refuse a job that may not start now. */
static dvpp_status admit(conn *c, dvpp_err *err)
{
    if (atomic_load(&c->s->draining))
        return dvpp_err_set(err, DVPP_ECANCELED, NULL, "the daemon is stopping");
    /* the jobs not yet answered (a worker may have answered some) */
    uint32_t n = c->inflight - atomic_load(&c->answered);

    if (n >= c->s->set->cfg.sock.max_inflight)
        return dvpp_err_set(err, DVPP_EAGAIN, "inflight", "%u jobs in flight on this "
                            "connection (Welcome.max_inflight)", n);
    return DVPP_OK;
}

sjob *sock_job_admit(conn *c, job_type type, Dvpp__Envelope *env, const char *what,
                     dvpp_status *st, dvpp_err *err)
{
    sjob *j = NULL;

    if (*st == DVPP_OK)
        *st = admit(c, err);
    if (*st == DVPP_OK) {
        j = sock_job_new(c, type, env->id, env);
        if (!j)
            *st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "%s", what);
    }
    if (!j)
        dvpp__envelope__free_unpacked(env, NULL);
    return j;
}

void sock_job_started(conn *c)
{
    c->inflight++;
    atomic_fetch_add(&c->s->inflight, 1);
}

/* A request that did not start: counted as failed, answered with @err,
 * its job (if one was made) freed. */
static void refuse_job(conn *c, uint64_t id, sjob *j, const dvpp_err *err)
{
    atomic_fetch_add(&c->s->n.failed, 1);
    sock_send_err(c, id, err);
    if (j)
        sock_job_free(j);
}

/* --- Submit ------------------------------------------------------------------------- */

static dvppd_spec_kind spec_kind(Dvpp__Kind k)
{
    return k == DVPP__KIND__IMAGE ? DVPPD_SPEC_IMAGE
                                  : k == DVPP__KIND__PIXELS ? DVPPD_SPEC_DECODE
                                                            : DVPPD_SPEC_TENSOR;
}

static dvpp_status take_output(sjob *j, uint32_t id, uint64_t bytes, uint8_t **dest,
                               dvpp_err *err)
{
    dvppd_sock *s = j->c->s;
    int rc;

    if (id == 0) {
        if (bytes > s->cfg.max_inline)
            return dvpp_err_set(err, DVPP_EINVAL, "ring", "an output of %llu bytes needs "
                                "a ring (inline outputs: at most %llu)",
                                (unsigned long long)bytes,
                                (unsigned long long)s->cfg.max_inline);
        j->inline_out = malloc(bytes ? bytes : 1);
        j->inline_cap = bytes;
        *dest = j->inline_out;
        return j->inline_out ? DVPP_OK : dvpp_err_set(err, DVPP_ENOMEM, NULL, "output");
    }
    j->ring = sock_conn_ring(j->c, id);
    if (!j->ring)
        return dvpp_err_set(err, DVPP_ENOTFOUND, "ring", "no ring %u on this connection", id);
    if (bytes > ipc_ring_slot_bytes(j->ring)) {
        uint64_t have = ipc_ring_slot_bytes(j->ring);
        j->ring = NULL;
        return dvpp_err_set(err, DVPP_ENOSPC, "ring", "the output needs %llu bytes, a slot "
                            "has %llu", (unsigned long long)bytes, (unsigned long long)have);
    }
    ipc_ring_ref(j->ring);
    j->ring_id = id;
    rc = ipc_ring_acquire(j->ring, &j->slot);
    if (rc != 0)
        return dvpp_err_set(err, DVPP_EAGAIN, "ring", "ring %u has no free slot: release "
                            "slots, then retry", id);
    j->has_slot = true;
    *dest = ipc_ring_payload(j->ring, j->slot);
    return DVPP_OK;
}

/* Size the output with a header probe + plan and point the run at it. */
static dvpp_status prepare_output(sjob *j, uint32_t ring, dvpp_err *err)
{
    dvpp_pipeline *p = &j->spec.pipe;
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    uint8_t *dest = NULL;
    dvpp_status st = dvpp_pipeline_probe(p, j->in, j->in_len, &j->c->s->set->cfg.limits, &src,
                                         err);

    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(p, &src, &plan, err);
    if (st != DVPP_OK)
        return st;
    j->pj.pixels = src.is_jpeg ? (uint64_t)src.jpeg.width * src.jpeg.height
                               : (uint64_t)src.width * src.height;
    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        dvpp_tensor *t = &j->out.tensor;
        st = dvpp_tensor_init(t, plan.dtype, plan.layout, 1, plan.c, plan.h, plan.w, err);
        if (st == DVPP_OK)
            st = take_output(j, ring, t->bytes, &dest, err);
        t->data = dest;
        return st;
    }
    if (p->encoding == DVPP_PIPE_ENC_NONE) {
        st = take_output(j, ring, plan.out_bytes, &dest, err);
        j->out.image.data = dest;
        j->out.image.size = plan.out_bytes;
        return st;
    }
    /* Encoded: the size is known only after the run; the slot is taken
     * now so a full ring refuses at once. */
    return take_output(j, ring, ring ? 1 : 0, &dest, err);
}

static void answer_on_worker(sjob *j);

/* On the worker that ran @j: it answers @j itself when it can (one
 * wake-up less between the pipeline and the client), then hands the
 * record to the socket thread, waking it only when something waits for
 * the job's end: a client stream (StreamSync), a stop, an answer left to
 * it. */
static void single_job_done(void *ctx, dvpp_status st, const dvpp_err *err)
{
    sjob *j = ctx;
    dvppd_sock *s = j->c->s;

    j->status = st;
    if (st != DVPP_OK && err)
        j->err = *err;
    answer_on_worker(j);
    sock_post_done(s, j, !j->answered || j->st || atomic_load(&s->draining));
}

static dvpp_status take_single_input(sjob *j, const Dvpp__Submit *m, const int *fds,
                                     dvpp_err *err)
{
    if (m->input_fd)
        return sock_map_job_input(j, fds[0], m->input_len, err); /* one fd: checked */
    if (m->input.len == 0)
        return dvpp_err_set(err, DVPP_EINVAL, "input", "no input");
    j->in = m->input.data;
    j->in_len = m->input.len;
    return DVPP_OK;
}

static dvpp_status queue_single_job(sjob *j, const Dvpp__Submit *m, const int *fds,
                                    dvpp_err *err)
{
    conn *c = j->c;
    dvpp_stream *ds;
    dvpp_status st;

    if ((unsigned)m->kind > DVPP__KIND__PIXELS)
        return dvpp_err_set(err, DVPP_EINVAL, "kind", "unknown kind %d", (int)m->kind);
    st = sock_job_spec(j, spec_kind(m->kind), m->spec, m->aipp_config, err);
    j->kind = m->kind;
    if (st == DVPP_OK) /* on the job's copy of the spec (sock_job_spec) */
        sock_trace_watch(j, &j->spec.pipe);
    if (st == DVPP_OK)
        st = take_single_input(j, m, fds, err);
    if (st == DVPP_OK)
        st = prepare_output(j, m->ring, err);
    if (st == DVPP_OK && m->stream) {
        j->st = sock_find_stream(c, m->stream);
        if (!j->st || j->st->destroy_id)
            st = dvpp_err_set(err, DVPP_ENOTFOUND, "stream", "no such stream");
    }
    if (st == DVPP_OK && !j->st)
        st = sock_stream_take(c, &j->own_stream, err);
    if (st != DVPP_OK)
        return st;
    ds = j->st ? j->st->ds : j->own_stream;
    j->pj.pipe = &j->spec.pipe;
    j->pj.input = j->in;
    j->pj.len = j->in_len;
    j->pj.out = &j->out;
    j->pj.bytes = j->in_len + (j->has_slot ? 0 : j->inline_cap);
    j->pj.deadline_ns = m->deadline_ms ? dvpp_now_ns() + (uint64_t)m->deadline_ms * 1000000u
                                       : 0;
    j->pj.done = single_job_done;
    j->pj.ctx = j;
    /* the worker answering must not read c->s->set (a reload replaces it) */
    j->lease_ms = c->s->set->cfg.sock.lease_timeout_ms;
    j->t_submit = dvpp_now_ns();
    st = dvpp_pipejob_submit(ds, &j->pj, NULL, err);
    if (st == DVPP_OK && j->st)
        j->st->pending++;
    return st;
}

void sock_on_submit(conn *c, Dvpp__Envelope *env, const int *fds, int nfds)
{
    const Dvpp__Submit *m = env->submit;
    uint64_t id = env->id, t_recv = dvpp_now_ns();
    /* Read now: a refused job frees @env (and @m with it) before the
     * refusal is charged to the stream. */
    uint64_t stream = m->stream;
    dvpp_status st = DVPP_OK;
    dvpp_err err;
    sjob *j;

    if (!sock_fds_match(c, env, nfds, m->input_fd ? 1 : 0,
                        "the packet's fds do not match Submit.input_fd"))
        return;
    dvpp_err_clear(&err);
    j = sock_job_admit(c, JOB_SINGLE, env, "job", &st, &err);
    if (j)
        st = sock_trace_begin(j, m->trace, t_recv, &err);
    if (st == DVPP_OK && j)
        st = queue_single_job(j, m, fds, &err);
    atomic_fetch_add(&c->s->n.submitted, 1);
    if (st != DVPP_OK) {
        /* A refusal is a job error of its stream too (StreamSync says so). */
        sock_stream_fail(stream ? sock_find_stream(c, stream) : NULL, st, &err);
        refuse_job(c, id, j, &err);
        return;
    }
    sock_job_started(c);
}

/* --- the Result of a Submit ------------------------------------------------------------ */

/* The output's description into @meta (@shape: storage for it) and @m. */
static void describe_output(sjob *j, Dvpp__TensorMeta *meta, int64_t *shape,
                            ipc_slot_meta *m, size_t *bytes)
{
    const dvpp_pipeline *p = &j->spec.pipe;

    dvpp__tensor_meta__init(meta);
    memset(m, 0, sizeof(*m));
    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        const dvpp_tensor *t = &j->out.tensor;
        dvppd_slot_meta_tensor(m, t, &j->out.geom);
        meta->dtype = (char *)dvpp_dtype_name(t->dtype);
        meta->layout = (char *)dvpp_layout_name(t->layout);
        for (unsigned i = 0; i < t->ndim; i++)
            shape[i] = t->shape[i];
        meta->n_shape = t->ndim;
        meta->shape = shape;
        *bytes = t->bytes;
    } else {
        const dvpp_image *img = &j->out.image;
        bool enc = p->encoding != DVPP_PIPE_ENC_NONE;
        *bytes = enc ? j->out.encoded.len : j->out.plan.out_bytes;
        meta->dtype = "uint8";
        meta->layout = "";
        meta->format = enc ? (p->encoding == DVPP_PIPE_ENC_PNG ? "png" : "jpeg")
                           : (char *)dvpp_pixfmt_name(img->format);
        meta->width = j->out.plan.img_w;
        meta->height = j->out.plan.img_h;
        if (!enc) {
            meta->width_stride = img->width_stride;
            meta->height_stride = img->height_stride;
        }
        shape[0] = (int64_t)*bytes;
        meta->n_shape = 1;
        meta->shape = shape;
        m->dtype = DVPP_RING_DTYPE_U8;
        m->layout = DVPP_RING_LAYOUT_IMAGE;
        m->ndim = 1;
        m->shape[0] = (int64_t)*bytes;
        m->scale_x = j->out.geom.scale_x, m->scale_y = j->out.geom.scale_y;
        m->pad_x = j->out.geom.pad_x, m->pad_y = j->out.geom.pad_y;
    }
    m->byte_length = *bytes;
    meta->bytes = *bytes;
}

/* Encoded images are copied into their slot or inline buffer now. */
static dvpp_status place_encoded(sjob *j, dvpp_err *err)
{
    const dvpp_buf *b = &j->out.encoded;
    uint64_t cap = j->ring ? ipc_ring_slot_bytes(j->ring) : j->c->s->cfg.max_inline;
    uint8_t *dest;

    if (b->len > cap)
        return dvpp_err_set(err, DVPP_ENOSPC, "ring", "the encoded image has %zu bytes, "
                            "the %s holds %llu", b->len, j->ring ? "slot" : "inline answer",
                            (unsigned long long)cap);
    if (j->ring) {
        dest = ipc_ring_payload(j->ring, j->slot);
    } else {
        free(j->inline_out);
        j->inline_out = malloc(b->len ? b->len : 1);
        if (!j->inline_out)
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "output");
        dest = j->inline_out;
    }
    memcpy(dest, b->data, b->len);
    j->inline_cap = b->len;
    return DVPP_OK;
}

static void fill_failure(Dvpp__Result *r, const dvpp_err *err, dvpp_status st)
{
    r->status = st;
    r->code = (char *)dvpp_status_name(st);
    r->message = (char *)(err->msg[0] ? err->msg : dvpp_strerror(st));
    r->field = (char *)err->field;
}

static uint64_t ns_to_us(uint64_t ns)
{
    return ns / 1000;
}

/* A single job's Result and the storage it points into. */
typedef struct single_result {
    Dvpp__Envelope e;
    Dvpp__Result r;
    Dvpp__TensorMeta meta;
    Dvpp__Geom g;
    Dvpp__Timings tm;
    int64_t shape[DVPP_RING_MAX_DIMS];
} single_result;

/* @j's Result into @o, leasing its slot (the lease timeout it was admitted
 * with); a failure found here (a closed ring, an encoded image too large)
 * goes into j->status/err. Touches only @j, its ring (the ring's mutex)
 * and the immutable config: the socket thread, or the worker that ran @j
 * while it still owns the record. */
static void build_single_result(sjob *j, single_result *o)
{
    Dvpp__Result *r = &o->r;
    ipc_slot_meta m;
    size_t bytes = 0;
    dvpp_status st = j->status;

    sock_envelope_init(&o->e, j->id);
    dvpp__result__init(r);
    r->origin = "socket";
    if (st == DVPP_OK && j->spec.pipe.output == DVPP_PIPE_OUT_IMAGE &&
        j->spec.pipe.encoding != DVPP_PIPE_ENC_NONE)
        st = place_encoded(j, &j->err);
    if (st == DVPP_OK) {
        describe_output(j, &o->meta, o->shape, &m, &bytes);
        if (j->has_slot) {
            uint64_t t_lease = dvpp_now_ns();
            st = ipc_ring_lease(j->ring, j->slot, &m, sock_now_ms() + j->lease_ms,
                                &r->generation) == 0
                     ? DVPP_OK
                     : dvpp_err_set(&j->err, DVPP_ECANCELED, "ring",
                                    "the ring was closed before the job finished");
            sock_trace_span(j, "hand-off", t_lease, dvpp_now_ns());
            j->has_slot = false; /* leased, or freed by the closed ring */
            r->ring = j->ring_id;
            r->slot = j->slot;
            r->offset = ipc_ring_payload_offset(j->ring, j->slot);
        } else {
            r->data.data = j->inline_out;
            r->data.len = bytes;
        }
    }
    j->status = st;
    if (st != DVPP_OK) {
        dvpp__result__init(r);
        r->origin = "socket";
        fill_failure(r, &j->err, st);
        atomic_fetch_add(&j->c->s->n.failed, 1);
    } else {
        dvpp__geom__init(&o->g);
        o->g.scale_x = j->out.geom.scale_x, o->g.scale_y = j->out.geom.scale_y;
        o->g.pad_x = j->out.geom.pad_x, o->g.pad_y = j->out.geom.pad_y;
        dvpp__timings__init(&o->tm);
        o->tm.queue_us =
            j->pj.started_ns > j->t_submit ? ns_to_us(j->pj.started_ns - j->t_submit) : 0;
        o->tm.decode_us = ns_to_us(j->out.stage_ns[DVPP_PIPE_STAGE_DECODE]);
        o->tm.vpc_us = ns_to_us(j->out.stage_ns[DVPP_PIPE_STAGE_VPC]);
        o->tm.post_us = ns_to_us(j->out.stage_ns[DVPP_PIPE_STAGE_POST]);
        o->tm.total_us = ns_to_us(dvpp_now_ns() - j->t_submit);
        r->meta = &o->meta;
        r->geom = &o->g;
        r->timings = &o->tm;
    }
    r->trace_id = j->tj.own ? j->tj.id : 0;
    o->e.body_case = DVPP__ENVELOPE__BODY_RESULT;
    o->e.result = r;
}

/* After @j's Result went out: its client stream's count and failure. */
static void settle_single(sjob *j)
{
    if (!j->st)
        return;
    if (j->status != DVPP_OK)
        sock_stream_fail(j->st, j->status, &j->err);
    j->st->pending--;
    sock_stream_settle(j->c, j->st);
}

/* Results up to this size are packed on the worker's stack (a ring
 * Result is a few hundred bytes); larger ones (inline outputs) in a
 * buffer of their own. */
#define SMALL_RESULT 1024u

/* On the worker that ran @j, with the record still its own: lease the
 * slot, pack the Result and send it on the connection (in order behind
 * what is queued for it: sock_send_from_worker); j->answered says it was
 * done (or that the connection no longer sends, which leaves nothing for
 * the socket thread to send either). Order holds: a client stream's next
 * job starts only after this returns, and the socket thread answers a
 * StreamSync only once it has taken the record, after this send. Only an
 * inline output's Result is larger than SMALL_RESULT: when its buffer
 * cannot be had, the socket thread builds it again (no slot to lease
 * twice) and says ENOMEM if it cannot either. */
static void answer_on_worker(sjob *j)
{
    conn *c = j->c;
    single_result o;
    uint8_t small[SMALL_RESULT], *buf = small;
    uint64_t t_write = dvpp_now_ns();
    size_t len;

    build_single_result(j, &o);
    len = dvpp__envelope__get_packed_size(&o.e);
    if (len > sizeof(small)) {
        buf = malloc(len);
        if (!buf)
            return; /* left to the socket thread, which says ENOMEM */
    }
    dvpp__envelope__pack(&o.e, buf);
    sock_trace_answer(j, t_write); /* stored before the client can ask for it */
    /* Counted answered before it is sent: a client that sends its next
     * job on this Result finds the slot of max_inflight free. */
    atomic_fetch_add(&c->answered, 1);
    j->answered = true;
    sock_send_from_worker(c, buf, len, &j->cut_why);
    if (buf != small)
        free(buf);
}

void sock_single_answered(sjob *j)
{
    conn *c = j->c;

    atomic_fetch_sub(&c->answered, 1);
    if (c->closed)
        return;
    if (j->cut_why)
        sock_conn_close(c, j->cut_why);
    else
        settle_single(j);
}

/* The Result of a single job; leases its slot. */
void sock_send_single_result(sjob *j)
{
    single_result o;
    uint64_t t_write = dvpp_now_ns();

    build_single_result(j, &o);
    sock_trace_answer(j, t_write);
    sock_send_env(j->c, &o.e, NULL, 0);
    settle_single(j);
}

/* --- BatchSubmit, BatchQuery, BatchCancel ----------------------------------------------- */

static void batch_job_done(void *ctx)
{
    sjob *j = ctx;

    sock_post_done(j->c->s, j, true);
}

/* Batch inputs: inline bytes, or the packet's memfds. */
static dvpp_status take_batch_inputs(sjob *j, const Dvpp__BatchSubmit *m, const int *fds,
                                     int nfds, dvpp_err *err)
{
    size_t n = m->input_fds ? (size_t)nfds : m->n_inputs;

    if (n == 0 || n > j->c->s->set->cfg.http.max_batch_items)
        return dvpp_err_set(err, n ? DVPP_ELIMIT : DVPP_EINVAL, "inputs",
                            "%zu inputs (1..%u)", n, j->c->s->set->cfg.http.max_batch_items);
    if (m->input_fds && m->n_input_lens != n)
        return dvpp_err_set(err, DVPP_EINVAL, "input_lens", "one length per input fd");
    j->inputs = calloc(n, sizeof(*j->inputs));
    j->maps = m->input_fds ? calloc(n, sizeof(*j->maps)) : NULL;
    if (!j->inputs || (m->input_fds && !j->maps))
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "inputs");
    j->n = n;
    for (size_t i = 0; i < n; i++) {
        if (m->input_fds) {
            dvpp_status st = sock_map_input(j->c, fds[i], m->input_lens[i], &j->maps[i], err);
            j->nmaps = i + 1;
            if (st != DVPP_OK)
                return st;
            j->inputs[i] = (dvpp_batchjob_input){j->maps[i].addr, j->maps[i].len};
        } else {
            j->inputs[i] = (dvpp_batchjob_input){m->inputs[i].data, m->inputs[i].len};
        }
    }
    return DVPP_OK;
}

static dvpp_status queue_batch_job(sjob *j, const Dvpp__BatchSubmit *m, const int *fds,
                                   int nfds, dvpp_err *err)
{
    dvpp_batchjob_opts o = {.strict = m->strict, .done = batch_job_done, .ctx = j};
    uint8_t *dest = NULL;
    dvpp_status st = sock_job_spec(j, DVPPD_SPEC_TENSOR, m->spec, m->aipp_config, err);

    if (st == DVPP_OK && m->ring == 0)
        st = dvpp_err_set(err, DVPP_EINVAL, "ring", "a batch is delivered into a ring");
    if (st == DVPP_OK)
        st = sock_check_item_specs(m->item_specs, m->n_item_specs,
                                   m->input_fds ? (size_t)nfds : m->n_inputs, err);
    if (st == DVPP_OK)
        st = take_batch_inputs(j, m, fds, nfds, err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&j->spec.pipe, (uint32_t)j->n, &j->out.tensor, err);
    if (st == DVPP_OK)
        st = sock_job_item_specs(j, m->item_specs, m->n_item_specs, m->aipp_config, err);
    if (st == DVPP_OK) { /* the job's own copies (items run on several workers) */
        sock_trace_watch(j, &j->spec.pipe);
        for (size_t i = 0; j->item_pipes && i < j->n; i++)
            sock_trace_watch(j, &j->item_pipes[i]);
    }
    if (st == DVPP_OK)
        st = take_output(j, m->ring, j->out.tensor.bytes, &dest, err);
    if (st != DVPP_OK)
        return st;
    j->out.tensor.data = dest;
    j->t_submit = dvpp_now_ns();
    o.item_pipes = j->item_pipes;
    return dvpp_batchjob_start_opts(j->c->s->device, &j->spec.pipe, j->inputs, j->n,
                                    &j->out.tensor, &o, &j->bj, err);
}

static void send_accepted(conn *c, uint64_t id, uint64_t batch, uint32_t items)
{
    Dvpp__Envelope e;
    Dvpp__BatchAccepted a;

    sock_envelope_init(&e, id);
    dvpp__batch_accepted__init(&a);
    a.batch = batch;
    a.items = items;
    e.body_case = DVPP__ENVELOPE__BODY_BATCH_ACCEPTED;
    e.batch_accepted = &a;
    sock_send_env(c, &e, NULL, 0);
}

void sock_on_batch_submit(conn *c, Dvpp__Envelope *env, const int *fds, int nfds)
{
    const Dvpp__BatchSubmit *m = env->batch_submit;
    uint64_t id = env->id, t_recv = dvpp_now_ns();
    dvpp_status st = DVPP_OK;
    dvpp_err err;
    sbatch *b = NULL;
    sjob *j;

    if (!sock_fds_match(c, env, nfds, m->input_fds,
                        "the packet's fds do not match BatchSubmit.input_fds"))
        return;
    dvpp_err_clear(&err);
    j = sock_job_admit(c, JOB_BATCH, env, "batch", &st, &err);
    /* listed for BatchQuery: taken before the batch starts, which cannot
     * be taken back */
    b = j ? calloc(1, sizeof(*b)) : NULL;
    if (j && !b)
        st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "batch");
    if (st == DVPP_OK)
        st = sock_trace_begin(j, m->trace, t_recv, &err);
    if (st == DVPP_OK)
        st = queue_batch_job(j, m, fds, nfds, &err);
    atomic_fetch_add(&c->s->n.submitted, 1);
    if (st != DVPP_OK) {
        free(b);
        refuse_job(c, id, j, &err);
        return;
    }
    b->id = dvpp_batchjob_id(j->bj);
    b->job = j;
    b->next = c->batches;
    c->batches = b;
    sock_job_started(c);
    send_accepted(c, id, b->id, (uint32_t)j->n);
}

static sbatch *find_batch(conn *c, uint64_t id)
{
    sbatch *b = c->batches;

    while (b && b->id != id)
        b = b->next;
    return b;
}

void sock_on_batch_query(conn *c, uint64_t id, uint64_t batch, bool cancel)
{
    sbatch *b = find_batch(c, batch);
    Dvpp__Envelope e;
    Dvpp__BatchProgress bp;
    dvpp_batch_progress p;

    if (!b) {
        sock_send_error(c, id, DVPP_ENOTFOUND, "batch", "no such batch (finished batches are "
                        "answered by their Result)");
        return;
    }
    if (cancel) {
        dvpp_batchjob_cancel(b->job->bj);
        sock_send_ack(c, id);
        return;
    }
    dvpp_batchjob_progress(b->job->bj, &p);
    sock_envelope_init(&e, id);
    dvpp__batch_progress__init(&bp);
    bp.batch = batch;
    bp.total = (uint32_t)p.total;
    bp.done = (uint32_t)p.done;
    bp.failed = (uint32_t)p.failed;
    bp.finished = p.finished;
    e.body_case = DVPP__ENVELOPE__BODY_BATCH_PROGRESS;
    e.batch_progress = &bp;
    sock_send_env(c, &e, NULL, 0);
}

static void unlist_batch(conn *c, sjob *j)
{
    sbatch **pp = &c->batches;

    while (*pp && (*pp)->job != j)
        pp = &(*pp)->next;
    if (*pp) {
        sbatch *b = *pp;
        *pp = b->next;
        free(b);
    }
}

void sock_send_batch_result(sjob *j)
{
    conn *c = j->c;
    Dvpp__Envelope e;
    Dvpp__Result r;
    Dvpp__TensorMeta meta;
    ipc_slot_meta m;
    int64_t shape[DVPP_RING_MAX_DIMS];
    int32_t *items = calloc(j->n, sizeof(*items));
    uint64_t t_write = dvpp_now_ns(), t_lease;
    dvpp_err err;
    dvpp_status st;

    dvpp_err_clear(&err);
    st = dvpp_batchjob_wait(j->bj, &err); /* finished: returns at once */
    sock_envelope_init(&e, j->id);
    dvpp__result__init(&r);
    r.origin = "socket";
    r.batch = dvpp_batchjob_id(j->bj);
    for (size_t i = 0; items && i < j->n; i++)
        items[i] = dvpp_batchjob_item_status(j->bj, i, NULL);
    if (st == DVPP_OK) {
        dvpp__tensor_meta__init(&meta);
        dvppd_slot_meta_tensor(&m, &j->out.tensor, NULL);
        meta.dtype = (char *)dvpp_dtype_name(j->out.tensor.dtype);
        meta.layout = (char *)dvpp_layout_name(j->out.tensor.layout);
        for (unsigned i = 0; i < j->out.tensor.ndim; i++)
            shape[i] = j->out.tensor.shape[i];
        meta.n_shape = j->out.tensor.ndim;
        meta.shape = shape;
        meta.bytes = j->out.tensor.bytes;
        t_lease = dvpp_now_ns();
        if (ipc_ring_lease(j->ring, j->slot, &m,
                           sock_now_ms() + c->s->set->cfg.sock.lease_timeout_ms,
                           &r.generation) != 0)
            st = dvpp_err_set(&err, DVPP_ECANCELED, "ring", "the ring was closed");
        sock_trace_span(j, "hand-off", t_lease, dvpp_now_ns());
        j->has_slot = false;
        r.ring = j->ring_id;
        r.slot = j->slot;
        r.offset = ipc_ring_payload_offset(j->ring, j->slot);
        r.meta = &meta;
    }
    if (st != DVPP_OK) {
        fill_failure(&r, &err, st);
        r.ring = r.slot = r.generation = 0;
        r.meta = NULL;
    }
    r.n_item_status = items ? j->n : 0;
    r.item_status = items;
    r.trace_id = j->tj.own ? j->tj.id : 0;
    e.body_case = DVPP__ENVELOPE__BODY_RESULT;
    e.result = &r;
    sock_trace_answer(j, t_write); /* stored before the client can ask for it */
    sock_send_env(c, &e, NULL, 0);
    free(items);
    unlist_batch(c, j);
}
