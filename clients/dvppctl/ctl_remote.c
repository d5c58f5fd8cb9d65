/* ctl_remote: dvppctl against a running dvppd. The one runner every
 * remote command goes through (its table names them all), and what the
 * commands share: the connection, their inputs, running one job and
 * reading its answer. The commands' own steps live beside their offline
 * twins (ctl_remote_jobs.c, ctl_batch.c, ctl_daemon.c, ctl_video.c,
 * ctl_venc.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_remote.h"

/* --- connection and inputs ------------------------------------------------- */

dvpp_status ctl_from_client(const dvppc_error *e, dvpp_err *err)
{
    dvpp_status st = e->status ? (dvpp_status)e->status : DVPP_EIO;

    return dvpp_err_set(err, st, e->field[0] ? e->field : NULL, "%s",
                        e->message[0] ? e->message : dvpp_strerror(st));
}

dvpp_status ctl_remote_open(const ctl_args *a, dvppc_conn **c, dvpp_err *err)
{
    dvppc_error e;

    memset(&e, 0, sizeof(e));
    *c = NULL;
    if (dvppc_connect(a->socket, c, &e) == 0)
        return DVPP_OK;
    ctl_from_client(&e, err);
    return dvpp_err_set(err, err->status, "socket", "dvppd at %s: %s", a->socket,
                        e.message[0] ? e.message : dvpp_strerror(err->status));
}

dvpp_status ctl_source_load(const char *path, const ctl_args *a, dvpp_pixfmt want,
                            ctl_source *s, dvpp_err *err)
{
    dvpp_planes pl;
    dvpp_status st;

    memset(s, 0, sizeof(*s));
    dvpp_buf_init(&s->file);
    st = dvpp_buf_read_file(&s->file, path, a->lim.max_encoded_bytes, err);
    if (st != DVPP_OK)
        return st;
    s->kind = ctl_sniff(&s->file, path);
    if (s->kind == CTL_INPUT_JPEG || s->kind == CTL_INPUT_PNG) {
        s->format = ctl_decode_format(s->kind, a, want);
        s->data = s->file.data;
        s->len = s->file.len;
        if (s->format == DVPP_PIXEL_UNKNOWN)
            return dvpp_err_set(err, DVPP_EUNSUPPORTED, "format",
                                "decoding in the JPEG's own sampling (format "
                                "unknown) is not available with --socket");
        return DVPP_OK;
    }
    /* Raw and .npy pixels are only read here; the daemon gets them raw. */
    dvpp_buf_fini(&s->file);
    st = ctl_load_image(path, a, want, &s->pixels, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(&s->pixels, &pl, err);
    if (st != DVPP_OK)
        return st;
    s->format = s->pixels.format;
    s->data = s->pixels.data;
    s->len = pl.total;
    return DVPP_OK;
}

void ctl_source_fini(ctl_source *s)
{
    dvpp_buf_fini(&s->file);
    dvpp_image_free(&s->pixels);
}

/* --- running a job ----------------------------------------------------------------- */

dvpp_status ctl_job_plan(const ctl_job *j, const ctl_source *s,
                         dvpp_pipeline_plan *plan, dvpp_err *err)
{
    dvpp_pipe_source src;
    dvpp_status st = dvpp_pipeline_validate(&j->pipe, NULL, err);

    if (st == DVPP_OK)
        st = dvpp_pipeline_probe(&j->pipe, s->data, s->len, NULL, &src, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(&j->pipe, &src, plan, err);
    return st;
}

size_t ctl_job_out_bytes(const ctl_job *j, const dvpp_pipeline_plan *plan)
{
    dvpp_tensor t;

    if (!plan)
        return 0;
    if (j->pipe.output == DVPP_PIPE_OUT_IMAGE)
        return plan->out_bytes;
    if (dvpp_tensor_init(&t, plan->dtype, plan->layout, 1, plan->c, plan->h, plan->w,
                         NULL) != DVPP_OK)
        return 0;
    return t.bytes;
}

dvpp_status ctl_ring_for(dvppc_conn *c, size_t bytes, unsigned slots,
                         dvppc_ring **ring, dvpp_err *err)
{
    dvppc_error e;

    *ring = NULL;
    if (bytes <= dvppc_info(c)->max_inline)
        return DVPP_OK;
    memset(&e, 0, sizeof(e));
    if (dvppc_ring_open(c, NULL, slots, bytes, ring, &e) != 0)
        return ctl_from_client(&e, err);
    return DVPP_OK;
}

/* The daemon's largest ring, at most CTL_UNSIZED_SLOT: the memfd's pages
 * are only made as the daemon writes them. */
static size_t unsized_slot(dvppc_conn *c)
{
    uint64_t most = dvppc_info(c)->max_ring_bytes;

    return most < CTL_UNSIZED_SLOT ? (size_t)most : CTL_UNSIZED_SLOT;
}

dvpp_status ctl_job_run(dvppc_conn *c, const ctl_job *j, const ctl_source *s,
                        ctl_out *out, dvpp_err *err)
{
    dvppc_request q = {.kind = j->kind, .input = s->data, .input_len = s->len,
                       .input_fd = -1, .aipp_config = j->aipp_text};
    dvppc_error e;
    dvpp_err ignored;
    dvpp_status st;
    char *spec;

    memset(out, 0, sizeof(*out));
    memset(&e, 0, sizeof(e));
    /* A plan that fails here (a header the daemon will refuse too) leaves
     * the size unknown: the job goes inline and the daemon says why. */
    out->planned = !j->size_unknown && ctl_job_plan(j, s, &out->plan, &ignored) == DVPP_OK;
    spec = ctl_spec_json(j);
    if (!spec)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot build the spec");
    st = ctl_ring_for(c, j->size_unknown ? unsized_slot(c)
                                         : ctl_job_out_bytes(j, out->planned ? &out->plan
                                                                            : NULL),
                      1, &out->ring, err);
    q.spec = spec;
    q.ring = out->ring;
    if (st == DVPP_OK && j->trace) { /* --trace FILE: the daemon's trace of it */
        uint64_t id = 0;
        if (dvppc_submit_traced(c, &q, &out->res, &id, &e) != 0)
            st = ctl_from_client(&e, err);
        else
            st = ctl_trace_fetch(c, id, j->trace, err);
    } else if (st == DVPP_OK && dvppc_submit(c, &q, &out->res, &e) != 0) {
        st = ctl_from_client(&e, err);
    }
    free(spec);
    return st;
}

void ctl_out_fini(dvppc_conn *c, ctl_out *out)
{
    dvppc_release(c, &out->res);
    dvppc_ring_close(out->ring);
    out->ring = NULL;
}

dvpp_status ctl_out_image(const dvppc_result *r, dvpp_image *img, dvpp_err *err)
{
    const dvppc_meta *m = &r->meta;
    dvpp_planes pl;

    memset(img, 0, sizeof(*img));
    if (!dvpp_pixfmt_parse(m->format, &img->format))
        return dvpp_err_set(err, DVPP_EIO, "format", "dvppd answered pixels in "
                            "format '%s'", m->format);
    img->width = m->width;
    img->height = m->height;
    img->width_stride = m->width_stride;
    img->height_stride = m->height_stride;
    /* Read only: the writers never modify the image they write. */
    img->data = (uint8_t *)(uintptr_t)r->data;
    img->size = r->len;
    if (!r->data || dvpp_image_planes(img, &pl, NULL) != DVPP_OK || pl.total > r->len)
        return dvpp_err_set(err, DVPP_EIO, "meta", "dvppd answered %zu bytes for a "
                            "%ux%u %s image", r->len, m->width, m->height, m->format);
    return DVPP_OK;
}

dvpp_status ctl_out_tensor(const dvppc_result *r, dvpp_tensor *t, dvpp_err *err)
{
    const dvppc_meta *m = &r->meta;
    uint64_t n = 1;

    memset(t, 0, sizeof(*t));
    if (!dvpp_dtype_parse(m->dtype, &t->dtype) || !dvpp_layout_parse(m->layout, &t->layout) ||
        m->ndim < 1 || m->ndim > DVPP_TENSOR_MAX_DIMS)
        return dvpp_err_set(err, DVPP_EIO, "meta", "dvppd answered a %s %s tensor of "
                            "%d dimensions", m->dtype, m->layout, m->ndim);
    t->ndim = (uint8_t)m->ndim;
    for (int i = 0; i < m->ndim; i++) {
        t->shape[i] = m->shape[i];
        n *= m->shape[i] > 0 ? (uint64_t)m->shape[i] : 0;
    }
    t->bytes = r->len;
    t->data = (void *)(uintptr_t)r->data;
    if (!r->data || n * dvpp_dtype_size(t->dtype) != r->len)
        return dvpp_err_set(err, DVPP_EIO, "meta", "dvppd answered %zu bytes for a "
                            "tensor of %llu %s elements", r->len,
                            (unsigned long long)n, m->dtype);
    return DVPP_OK;
}

/* --- the runner ------------------------------------------------------------------- */

/* Every command that can run in a daemon. */
static const ctl_remote_cmd *const k_remote_cmds[] = {
    &ctl_remote_decode_cmd,
    &ctl_remote_resize_cmd,
    &ctl_remote_crop_cmd,
    &ctl_remote_convert_cmd,
    &ctl_remote_border_cmd,
    &ctl_remote_batch_crop_cmd,
    &ctl_remote_preprocess_cmd,
    &ctl_remote_aipp_cmd,
    &ctl_remote_batch_cmd,
    &ctl_remote_video_decode_cmd,
    &ctl_remote_video_encode_cmd,
    &ctl_remote_version_cmd,
    &ctl_remote_stats_cmd,
    &ctl_remote_bench_cmd,
};

static const ctl_remote_cmd *remote_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof(k_remote_cmds) / sizeof(k_remote_cmds[0]); i++)
        if (strcmp(k_remote_cmds[i]->name, name) == 0)
            return k_remote_cmds[i];
    return NULL;
}

/* The one line a failed command prints (@connecting: the connection
 * failed); exit status 1. */
static int report(const ctl_remote_cmd *cmd, const ctl_args *a, const dvpp_err *err,
                  bool connecting)
{
    if (connecting && (cmd->flags & CTL_REMOTE_CONNECT_BARE)) {
        fprintf(stderr, "dvppctl: %s (%s)\n", err->msg[0] ? err->msg
                                                          : dvpp_strerror(err->status),
                dvpp_status_name(err->status));
        return 1;
    }
    return ctl_fail(cmd->flags & CTL_REMOTE_FAIL_NAME ? cmd->name : a->inputs[0], err);
}

/* The steps of @cmd with @state: prepare, connect, talk, finish; then
 * release (while connected), close. 0, 1 (@err says why; *connecting
 * when the connection failed) or 2 (a usage error, printed). */
static int run_steps(const ctl_remote_cmd *cmd, ctl_args *a, void *state, dvpp_err *err,
                     bool *connecting)
{
    dvppc_conn *c = NULL;
    int rc = cmd->prepare ? cmd->prepare(a, state, err) : 0;

    if (!rc && ctl_remote_open(a, &c, err) != DVPP_OK) {
        *connecting = true;
        rc = 1;
    }
    if (!rc && cmd->talk && cmd->talk(c, a, state, err) != DVPP_OK)
        rc = 1;
    if (!rc && cmd->finish && cmd->finish(a, state, err) != DVPP_OK)
        rc = 1;
    if (c && cmd->release)
        cmd->release(c, state);
    dvppc_close(c);
    return rc;
}

int ctl_remote_run(const char *name, ctl_args *a)
{
    const ctl_remote_cmd *cmd = remote_cmd(name);
    void *state;
    dvpp_err err;
    bool connecting = false;
    int rc;

    if (!cmd) {
        fprintf(stderr, "dvppctl %s: not available with --socket\n", name);
        return 2;
    }
    if ((cmd->flags & CTL_REMOTE_SPEC) && (rc = ctl_spec_check(a, cmd->name)) != 0)
        return rc;
    state = calloc(1, cmd->state_bytes ? cmd->state_bytes : 1);
    if (!state) {
        fprintf(stderr, "dvppctl %s: out of memory\n", name);
        return 1;
    }
    dvpp_err_clear(&err);
    rc = run_steps(cmd, a, state, &err, &connecting);
    if (rc == 1)
        report(cmd, a, &err, connecting);
    if (cmd->fini)
        cmd->fini(state);
    free(state);
    return rc;
}
