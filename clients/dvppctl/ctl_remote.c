/* ctl_remote: the pixel commands run by a daemon (--socket).
 *
 * Each command builds the pipeline its offline twin runs implicitly. The
 * offline VPC calls convert formats inside one crop-resize-paste with a
 * fixed order (YUV -> RGB family: convert the crop, then resize; any other
 * pair: resize in the input's planes, convert at the output size); the
 * pipeline spells that order out with a convert op before the resize, or
 * the output conversion after it, so both paths run the same kernels on
 * the same data in the same order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_remote.h"
#include "dvpp_aipp.h"
#include "dvpp_npy.h"

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

int ctl_remote_connect(const ctl_args *a, dvppc_conn **c)
{
    dvpp_err err;

    dvpp_err_clear(&err);
    if (ctl_remote_open(a, c, &err) == DVPP_OK)
        return 0;
    fprintf(stderr, "dvppctl: %s (%s)\n", err.msg, dvpp_status_name(err.status));
    return 1;
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
    out->planned = ctl_job_plan(j, s, &out->plan, &ignored) == DVPP_OK;
    spec = ctl_spec_json(j);
    if (!spec)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot build the spec");
    st = ctl_ring_for(c, ctl_job_out_bytes(j, out->planned ? &out->plan : NULL), 1,
                      &out->ring, err);
    q.spec = spec;
    q.ring = out->ring;
    if (st == DVPP_OK && dvppc_submit(c, &q, &out->res, &e) != 0)
        st = ctl_from_client(&e, err);
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

/* --- shared by the commands --------------------------------------------------------- */

static bool is_rgb_family(dvpp_pixfmt f)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(f);
    return fi && !fi->is_yuv && fi->channels >= 3;
}

/* The offline VPC converts a YUV crop to an RGB-family output before it
 * resizes (dvpp_vpc_crop_resize_paste): the pipeline needs that convert
 * as its own op in front of the resize. */
static bool convert_first(dvpp_pixfmt from, dvpp_pixfmt to)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(from);
    return from != to && fi && fi->is_yuv && is_rgb_family(to);
}

/* The job's pixels into @a->out with the offline writer. */
static dvpp_status write_pixels(const ctl_args *a, const ctl_out *out, dvpp_err *err)
{
    dvpp_image img;
    dvpp_status st = ctl_out_image(&out->res, &img, err);

    return st == DVPP_OK ? ctl_write_image(a->out, &img, a->quality, err) : st;
}

static dvpp_status write_tensor(const ctl_args *a, const ctl_out *out, dvpp_err *err)
{
    dvpp_tensor t;
    dvpp_status st = ctl_out_tensor(&out->res, &t, err);

    return st == DVPP_OK ? ctl_write_tensor(a->out, &t, err) : st;
}

/* Run @j on @s through a fresh connection, write the output (tensor or
 * pixels) and leave the finished job in @out (its plan for geometry). */
static dvpp_status run_and_write(const ctl_args *a, const ctl_job *j,
                                 const ctl_source *s, ctl_out *out, dvpp_err *err)
{
    dvppc_conn *c = NULL;
    dvpp_status st;

    memset(out, 0, sizeof(*out));
    st = ctl_remote_open(a, &c, err);
    if (st != DVPP_OK)
        return st;
    st = ctl_job_run(c, j, s, out, err);
    if (st == DVPP_OK)
        st = j->kind == DVPPC_TENSOR ? write_tensor(a, out, err)
                                     : write_pixels(a, out, err);
    ctl_out_fini(c, out);
    dvppc_close(c);
    return st;
}

/* Exit status 0, or 1 after the offline command's one line on stderr. */
static int finish(const ctl_args *a, dvpp_status st, const dvpp_err *err)
{
    return st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], err);
}

/* The DCT scale the offline decode picks for --shrink-on-load WxH
 * (ctl_input.c): the smallest that still covers WxH, sides swapped for
 * EXIF orientations 5..8. */
static dvpp_status offline_shrink(const ctl_args *a, const ctl_source *s,
                                  uint8_t *scale, dvpp_err *err)
{
    dvpp_jpeg_info in;
    bool swap;
    dvpp_status st = dvpp_jpeg_probe(s->data, s->len, &in, err);

    if (st != DVPP_OK)
        return st;
    swap = !a->jpeg.no_orient && in.orientation >= 5;
    *scale = dvpp_jpeg_shrink_scale(in.width, in.height, swap ? a->shrink_h : a->shrink_w,
                                    swap ? a->shrink_w : a->shrink_h);
    return DVPP_OK;
}

/* Shrink-on-load for a job whose first op is the resize: the daemon picks
 * the scale that covers the resized image (not the WxH box), so it is
 * sent only when that is the scale the offline decode picks. 2 (after
 * printing) when it is not; 1 with @err set when the input is bad. */
static int set_shrink(const ctl_args *a, const ctl_source *s, ctl_job *j,
                      const char *cmd, dvpp_err *err)
{
    dvpp_pipeline_plan plan;
    uint8_t want;

    if (!a->shrink_on_load || !a->shrink_w || s->kind != CTL_INPUT_JPEG)
        return 0; /* offline: nothing to shrink */
    if (j->pipe.nops == 0 || j->pipe.ops[0].kind != DVPP_PIPE_OP_RESIZE) {
        fprintf(stderr, "dvppctl %s: --shrink-on-load with this format conversion is "
                        "not available with --socket\n", cmd);
        return 2;
    }
    j->pipe.decode.shrink_on_load = true;
    if (offline_shrink(a, s, &want, err) != DVPP_OK ||
        ctl_job_plan(j, s, &plan, err) != DVPP_OK)
        return 1;
    if (plan.scale_num == want)
        return 0;
    fprintf(stderr, "dvppctl %s: --shrink-on-load: the daemon would decode %s at %u/8, "
                    "this command at %u/8 (it covers the resized image, not the "
                    "--size box); not available with --socket for this input\n",
            cmd, a->inputs[0], plan.scale_num, want);
    return 2;
}

/* --- decode ------------------------------------------------------------------------------ */

int ctl_remote_decode(ctl_args *a)
{
    dvpp_pixfmt want = a->format_set ? a->format : DVPP_PIXEL_RGB;
    ctl_source s;
    ctl_job j;
    ctl_out out;
    dvpp_err err;
    dvpp_status st;
    int rc = ctl_spec_check(a, "decode");

    if (rc)
        return rc;
    dvpp_err_clear(&err);
    st = ctl_source_load(a->inputs[0], a, want, &s, &err);
    if (st == DVPP_OK && s.kind != CTL_INPUT_JPEG && s.kind != CTL_INPUT_PNG) {
        fprintf(stderr, "dvppctl decode: raw and .npy inputs are not available with "
                        "--socket (there is nothing to decode)\n");
        ctl_source_fini(&s);
        return 2;
    }
    if (st == DVPP_OK) {
        ctl_job_init(&j, a, &s, DVPPC_PIXELS);
        j.pipe.decode.has_roi = a->jpeg.has_roi;
        j.pipe.decode.roi = a->jpeg.roi;
        ctl_job_pixels(&j, s.format, a->jpeg.align_w, a->jpeg.align_h);
        /* cmd_decode refuses a decoder output in another format than
         * --format asks; that format is known here without decoding. */
        if (a->format_set && s.format != a->format && a->format != DVPP_PIXEL_UNKNOWN)
            st = dvpp_err_set(&err, DVPP_EFORMAT, "format",
                              "this input cannot be decoded to %s (use dvppctl "
                              "convert)", dvpp_pixfmt_name(a->format));
    }
    if (st == DVPP_OK)
        st = run_and_write(a, &j, &s, &out, &err);
    ctl_source_fini(&s);
    return finish(a, st, &err);
}

/* --- resize -------------------------------------------------------------------------------- */

/* print_geometry of ctl_vpc.c, from the plan of the resize op @i. */
static void print_resize_geometry(const dvpp_pipeline_plan *plan, uint32_t i,
                                  dvpp_resize_mode m)
{
    const dvpp_resize_geom *g = &plan->resize[i];

    printf("{\"mode\": \"%s\", \"out_w\": %u, \"out_h\": %u, \"scale_x\": %.17g, "
           "\"scale_y\": %.17g, \"pad_x\": %.17g, \"pad_y\": %.17g, "
           "\"crop\": [%u, %u, %u, %u], \"paste\": [%u, %u, %u, %u]}\n",
           dvpp_resize_mode_name(m), g->out_w, g->out_h, g->scale_x, g->scale_y,
           g->pad_x, g->pad_y, g->crop.left, g->crop.top, g->crop.right,
           g->crop.bottom, g->paste.left, g->paste.top, g->paste.right,
           g->paste.bottom);
}

/* Letterbox bars are filled in the output's format offline (pad = Y,U,V
 * for YUV outputs) but in the resize's format by the pipeline; they agree
 * when the resize runs in the output's format, when both are RGB family
 * (the conversion only moves channels and adds an opaque alpha), or when
 * nothing is padded. */
static int check_bars(const ctl_job *j, const ctl_source *s, uint32_t i,
                      dvpp_pixfmt out, dvpp_err *err)
{
    dvpp_pipeline_plan plan;
    const dvpp_resize_geom *g = &plan.resize[i];
    dvpp_pixfmt in = i > 0 ? j->pipe.ops[i - 1].u.convert : s->format;

    if (in == out || (is_rgb_family(in) && is_rgb_family(out)) ||
        j->pipe.ops[i].u.resize.mode != DVPP_RESIZE_LETTERBOX)
        return 0;
    if (ctl_job_plan(j, s, &plan, err) != DVPP_OK)
        return 1;
    if (g->paste.left == 0 && g->paste.top == 0 && g->paste.right + 1 == g->out_w &&
        g->paste.bottom + 1 == g->out_h)
        return 0;
    fprintf(stderr, "dvppctl resize: --mode letterbox into %s from %s (the bars' "
                    "colour is given in the output's format) is not available with "
                    "--socket\n", dvpp_pixfmt_name(out), dvpp_pixfmt_name(in));
    return 2;
}

/* The job of resize: a convert in front when the offline resize would
 * convert first, then the resize; *ri is the resize's op index. */
static dvpp_status resize_job(const ctl_args *a, const ctl_source *s,
                              dvpp_pixfmt out_fmt, ctl_job *j, uint32_t *ri,
                              dvpp_err *err)
{
    dvpp_status st = DVPP_OK;

    ctl_job_init(j, a, s, DVPPC_PIXELS);
    *ri = 0;
    if (convert_first(s->format, out_fmt)) {
        st = ctl_job_convert(j, out_fmt, err);
        *ri = 1;
    }
    if (st == DVPP_OK)
        st = ctl_job_resize(j, a, a->mode, a->size_w, a->size_h, err);
    ctl_job_pixels(j, out_fmt, a->jpeg.align_w, a->jpeg.align_h);
    return st;
}

int ctl_remote_resize(ctl_args *a)
{
    dvpp_pixfmt want = a->format_set ? a->format : DVPP_PIXEL_RGB;
    dvpp_pixfmt out_fmt = DVPP_PIXEL_UNKNOWN;
    ctl_source s;
    ctl_job j;
    ctl_out out;
    dvpp_err err;
    dvpp_status st;
    uint32_t ri = 0;
    int rc = ctl_spec_check(a, "resize");

    if (rc)
        return rc;
    dvpp_err_clear(&err);
    st = ctl_source_load(a->inputs[0], a, want, &s, &err);
    if (st == DVPP_OK) {
        out_fmt = a->format_set ? a->format : s.format;
        st = resize_job(a, &s, out_fmt, &j, &ri, &err);
    }
    if (st == DVPP_OK)
        rc = set_shrink(a, &s, &j, "resize", &err);
    if (st == DVPP_OK && !rc)
        rc = check_bars(&j, &s, ri, out_fmt, &err);
    if (st == DVPP_OK && !rc) {
        st = run_and_write(a, &j, &s, &out, &err);
        if (st == DVPP_OK && out.planned)
            print_resize_geometry(&out.plan, ri, a->mode);
    }
    ctl_source_fini(&s);
    if (rc == 2)
        return 2;
    return finish(a, rc == 1 ? err.status : st, &err);
}

/* --- crop, convert, make-border -------------------------------------------------------------------- */

int ctl_remote_crop(ctl_args *a)
{
    dvpp_pixfmt want = a->format_set ? a->format : DVPP_PIXEL_RGB, out_fmt;
    ctl_source s;
    ctl_job j;
    ctl_out out;
    dvpp_err err;
    dvpp_status st;
    int rc = ctl_spec_check(a, "crop");

    if (rc)
        return rc;
    dvpp_err_clear(&err);
    st = ctl_source_load(a->inputs[0], a, want, &s, &err);
    if (st == DVPP_OK) {
        out_fmt = a->format_set ? a->format : s.format;
        ctl_job_init(&j, a, &s, DVPPC_PIXELS);
        st = ctl_job_crop(&j, &a->rois[0], &err);
        if (st == DVPP_OK && convert_first(s.format, out_fmt))
            st = ctl_job_convert(&j, out_fmt, &err);
        if (st == DVPP_OK && a->size_set)
            st = ctl_job_resize(&j, a, DVPP_RESIZE_STRETCH, a->size_w, a->size_h, &err);
        ctl_job_pixels(&j, out_fmt, a->jpeg.align_w, a->jpeg.align_h);
    }
    if (st == DVPP_OK)
        st = run_and_write(a, &j, &s, &out, &err);
    ctl_source_fini(&s);
    return finish(a, st, &err);
}

/* JPEG/PNG inputs were set to decode to RGB (--decode-format wins) by the
 * offline command; the output conversion is the pipeline's. */
int ctl_remote_convert(ctl_args *a)
{
    ctl_source s;
    ctl_job j;
    ctl_out out;
    dvpp_err err;
    dvpp_status st;
    int rc = ctl_spec_check(a, "convert");

    if (rc)
        return rc;
    dvpp_err_clear(&err);
    st = ctl_source_load(a->inputs[0], a, a->format, &s, &err);
    if (st == DVPP_OK) {
        ctl_job_init(&j, a, &s, DVPPC_PIXELS);
        ctl_job_pixels(&j, a->format, a->jpeg.align_w, a->jpeg.align_h);
        st = run_and_write(a, &j, &s, &out, &err);
    }
    ctl_source_fini(&s);
    return finish(a, st, &err);
}

/* The border keeps the input's format (--format only picks the decode). */
int ctl_remote_make_border(ctl_args *a)
{
    dvpp_pixfmt want = a->format_set ? a->format : DVPP_PIXEL_RGB;
    ctl_source s;
    ctl_job j;
    ctl_out out;
    dvpp_err err;
    dvpp_status st;
    int rc = ctl_spec_check(a, "make-border");

    if (rc)
        return rc;
    dvpp_err_clear(&err);
    st = ctl_source_load(a->inputs[0], a, want, &s, &err);
    if (st == DVPP_OK) {
        ctl_job_init(&j, a, &s, DVPPC_PIXELS);
        st = ctl_job_border(&j, &a->border, &err);
        ctl_job_pixels(&j, s.format, a->jpeg.align_w, a->jpeg.align_h);
    }
    if (st == DVPP_OK)
        st = run_and_write(a, &j, &s, &out, &err);
    ctl_source_fini(&s);
    return finish(a, st, &err);
}

/* --- batch-crop ------------------------------------------------------------------------------------- */

/* The jobs of a batch-crop: one per ROI, input-major as the offline
 * batch call orders them. */
typedef struct crop_jobs {
    ctl_source srcs[CTL_MAX_INPUTS];
    unsigned nsrcs;
    ctl_job *jobs;          /* nrois */
    unsigned *job_input;    /* the source of each job */
    char **specs;           /* their JSON */
    dvpp_image *dsts;       /* the outputs, copied out of the answers */
    unsigned n;
} crop_jobs;

static void crop_jobs_fini(crop_jobs *cj)
{
    for (unsigned i = 0; i < cj->nsrcs; i++)
        ctl_source_fini(&cj->srcs[i]);
    for (unsigned k = 0; cj->specs && k < cj->n; k++)
        free(cj->specs[k]);
    for (unsigned k = 0; cj->dsts && k < cj->n; k++)
        dvpp_image_free(&cj->dsts[k]);
    free(cj->jobs);
    free(cj->job_input);
    free(cj->specs);
    free(cj->dsts);
}

static dvpp_status crop_job(const ctl_args *a, const ctl_source *s, const dvpp_roi *roi,
                            dvpp_pixfmt out_fmt, ctl_job *j, dvpp_err *err)
{
    dvpp_status st;

    ctl_job_init(j, a, s, DVPPC_PIXELS);
    st = ctl_job_crop(j, roi, err);
    if (st == DVPP_OK && convert_first(s->format, out_fmt))
        st = ctl_job_convert(j, out_fmt, err);
    if (st == DVPP_OK)
        st = ctl_job_resize(j, a, DVPP_RESIZE_STRETCH, a->size_w, a->size_h, err);
    ctl_job_pixels(j, out_fmt, a->jpeg.align_w, a->jpeg.align_h);
    return st;
}

/* Load the inputs and make the jobs (ROIs grouped by input, stable). */
static dvpp_status crop_jobs_make(const ctl_args *a, crop_jobs *cj, dvpp_err *err)
{
    dvpp_pixfmt want = a->format_set ? a->format : DVPP_PIXEL_RGB, out_fmt;
    dvpp_status st = DVPP_OK;
    unsigned k = 0;

    for (unsigned r = 0; r < a->nrois; r++)
        if (a->roi_input[r] >= a->ninputs)
            return dvpp_err_set(err, DVPP_EINVAL, "roi", "--roi %u:... names input %u of %u",
                                a->roi_input[r], a->roi_input[r], a->ninputs);
    cj->n = a->nrois;
    cj->jobs = calloc(cj->n, sizeof(*cj->jobs));
    cj->job_input = calloc(cj->n, sizeof(*cj->job_input));
    cj->specs = calloc(cj->n, sizeof(*cj->specs));
    cj->dsts = calloc(cj->n, sizeof(*cj->dsts));
    if (!cj->jobs || !cj->job_input || !cj->specs || !cj->dsts)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory");
    for (unsigned i = 0; i < a->ninputs && st == DVPP_OK; i++, cj->nsrcs++)
        st = ctl_source_load(a->inputs[i], a, want, &cj->srcs[i], err);
    if (st != DVPP_OK)
        return st;
    out_fmt = a->format_set ? a->format : cj->srcs[0].format;
    for (unsigned i = 0; i < a->ninputs && st == DVPP_OK; i++) {
        for (unsigned r = 0; r < a->nrois && st == DVPP_OK; r++) {
            if (a->roi_input[r] != i)
                continue;
            st = crop_job(a, &cj->srcs[i], &a->rois[r], out_fmt, &cj->jobs[k], err);
            cj->job_input[k] = i;
            cj->specs[k] = st == DVPP_OK ? ctl_spec_json(&cj->jobs[k]) : NULL;
            if (st == DVPP_OK && !cj->specs[k])
                st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot build the spec");
            k++;
        }
    }
    return st;
}

/* Keep a copy of the answer's image: the slot goes back at once. */
static dvpp_status copy_out(const dvppc_result *r, dvpp_image *dst, dvpp_err *err)
{
    dvpp_image view;
    dvpp_planes pl;
    dvpp_status st = ctl_out_image(r, &view, err);

    if (st != DVPP_OK)
        return st;
    *dst = view;
    dst->data = NULL;
    st = dvpp_image_alloc(dst, err);
    if (st == DVPP_OK) {
        dvpp_image_planes(&view, &pl, NULL);
        memcpy(dst->data, view.data, pl.total);
    }
    return st;
}

/* Up to this many ROIs in flight: enough to keep the daemon's channels
 * busy, few enough that one ring of them stays small. */
#define CROP_INFLIGHT 8u

static dvpp_status crop_jobs_run(dvppc_conn *c, crop_jobs *cj, dvpp_err *err)
{
    uint64_t tickets[CROP_INFLIGHT];
    size_t bytes = 0;
    unsigned sent = 0, got = 0, window = cj->n < CROP_INFLIGHT ? cj->n : CROP_INFLIGHT;
    dvppc_ring *ring = NULL;
    dvppc_error e;
    dvpp_status st = DVPP_OK;

    for (unsigned k = 0; k < cj->n; k++) {
        dvpp_pipeline_plan plan;
        dvpp_err ignored;
        size_t b = ctl_job_plan(&cj->jobs[k], &cj->srcs[cj->job_input[k]], &plan,
                                &ignored) == DVPP_OK
                       ? ctl_job_out_bytes(&cj->jobs[k], &plan) : 0;
        bytes = b > bytes ? b : bytes;
    }
    st = ctl_ring_for(c, bytes, window, &ring, err);
    memset(&e, 0, sizeof(e));
    while (st == DVPP_OK && got < cj->n) {
        dvppc_result r;
        /* Keep the window full, then take the oldest answer. */
        while (sent < cj->n && sent - got < window) {
            const ctl_source *s = &cj->srcs[cj->job_input[sent]];
            dvppc_request q = {.kind = DVPPC_PIXELS, .spec = cj->specs[sent],
                               .input = s->data, .input_len = s->len, .input_fd = -1,
                               .ring = ring};
            if (dvppc_submit_async(c, &q, &tickets[sent % CROP_INFLIGHT], &e) != 0)
                break;
            sent++;
        }
        if (sent == got) {
            st = ctl_from_client(&e, err);
            break;
        }
        if (dvppc_wait(c, tickets[got % CROP_INFLIGHT], &r, -1, &e) != 0)
            st = ctl_from_client(&e, err);
        else
            st = copy_out(&r, &cj->dsts[got], err);
        dvppc_release(c, &r);
        got++;
    }
    /* After a failure, collect what is still in flight before the ring
     * closes under it. */
    for (; got < sent; got++) {
        dvppc_result r;
        dvppc_wait(c, tickets[got % CROP_INFLIGHT], &r, -1, NULL);
        dvppc_release(c, &r);
    }
    dvppc_ring_close(ring);
    return st;
}

int ctl_remote_batch_crop(ctl_args *a)
{
    crop_jobs cj;
    dvppc_conn *c = NULL;
    dvpp_err err;
    dvpp_status st;
    int rc = ctl_spec_check(a, "batch-crop");

    if (rc)
        return rc;
    memset(&cj, 0, sizeof(cj));
    dvpp_err_clear(&err);
    st = crop_jobs_make(a, &cj, &err);
    if (st == DVPP_OK)
        st = ctl_remote_open(a, &c, &err);
    if (st == DVPP_OK)
        st = crop_jobs_run(c, &cj, &err);
    if (st == DVPP_OK)
        st = ctl_write_batch(a->out, cj.dsts, cj.n, a->quality, &err);
    dvppc_close(c);
    crop_jobs_fini(&cj);
    return st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
}

/* --- preprocess, aipp -------------------------------------------------------------------------------- */

/* The resize's own geometry, as the offline command prints it; without
 * a plan (the header could not be read here) the job's, which is the
 * same unless the decode shrank. */
static void print_norm_geometry(const ctl_out *out)
{
    const dvpp_resize_geom *g = &out->plan.resize[0];

    printf("{\"scale_x\": %.17g, \"scale_y\": %.17g, \"pad_x\": %.17g, "
           "\"pad_y\": %.17g}\n",
           out->planned ? g->scale_x : out->res.scale_x,
           out->planned ? g->scale_y : out->res.scale_y,
           out->planned ? g->pad_x : out->res.pad_x,
           out->planned ? g->pad_y : out->res.pad_y);
}

int ctl_remote_preprocess(ctl_args *a)
{
    ctl_source s;
    ctl_job j;
    ctl_out out;
    dvpp_err err;
    dvpp_status st;
    int rc = ctl_spec_check(a, "preprocess");

    if (rc)
        return rc;
    dvpp_err_clear(&err);
    st = ctl_source_load(a->inputs[0], a, DVPP_PIXEL_RGB, &s, &err);
    if (st == DVPP_OK) {
        ctl_job_init(&j, a, &s, DVPPC_TENSOR);
        st = ctl_job_resize(&j, a, a->mode, a->size_w, a->size_h, &err);
        ctl_job_normalize(&j, a);
    }
    if (st == DVPP_OK)
        rc = set_shrink(a, &s, &j, "preprocess", &err);
    if (st == DVPP_OK && !rc) {
        st = run_and_write(a, &j, &s, &out, &err);
        if (st == DVPP_OK)
            print_norm_geometry(&out);
    }
    ctl_source_fini(&s);
    if (rc == 2)
        return 2;
    return finish(a, rc == 1 ? err.status : st, &err);
}

/* The aipp_op config: its text goes to the daemon, the op is needed here
 * to know which format the offline command loads the input in. */
typedef struct aipp_src {
    dvpp_buf text;              /* NUL-terminated */
    dvpp_aipp_config *cfg;
} aipp_src;

static dvpp_status aipp_load(const ctl_args *a, aipp_src *as, dvpp_aipp_op *op,
                             dvpp_err *err)
{
    static const char nul = '\0';
    dvpp_status st;

    dvpp_buf_init(&as->text);
    as->cfg = malloc(sizeof(*as->cfg));
    if (!as->cfg)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory");
    st = dvpp_buf_read_file(&as->text, a->config, 1u << 20, err);
    if (st == DVPP_OK)
        st = dvpp_aipp_parse((const char *)as->text.data, as->text.len, as->cfg, err);
    if (st == DVPP_OK)
        st = dvpp_buf_append(&as->text, &nul, 1);
    if (st == DVPP_OK && a->op_index >= as->cfg->nops)
        st = dvpp_err_set(err, DVPP_EINVAL, "op", "the config has %u op(s)",
                          as->cfg->nops);
    if (st == DVPP_OK)
        *op = as->cfg->ops[a->op_index];
    if (st == DVPP_OK && op->mode == DVPP_AIPP_DYNAMIC)
        st = dvpp_err_set(err, DVPP_EUNSUPPORTED, "dynamic",
                          "a dynamic aipp_op is not available with --socket");
    return st;
}

static void aipp_fini(aipp_src *as)
{
    dvpp_buf_fini(&as->text);
    free(as->cfg);
}

/* load_for_op of ctl_aipp.c: the input in the op's format, resized to
 * --size; a format the op does not take is converted to the one it does. */
static dvpp_status aipp_job(const ctl_args *a, const ctl_source *s,
                            const aipp_src *as, const dvpp_aipp_op *op, ctl_job *j,
                            dvpp_err *err)
{
    dvpp_pixfmt to = dvpp_aipp_accepts(op, s->format) ? s->format : ctl_aipp_pixfmt(op);
    dvpp_status st = DVPP_OK;

    ctl_job_init(j, a, s, DVPPC_TENSOR);
    if (a->size_set && convert_first(s->format, to))
        st = ctl_job_convert(j, to, err);
    if (st == DVPP_OK && a->size_set)
        st = ctl_job_resize(j, a, DVPP_RESIZE_STRETCH, a->size_w, a->size_h, err);
    ctl_job_aipp(j, (const char *)as->text.data, a->op_index, op,
                 a->layout_set ? a->layout : DVPP_LAYOUT_NC1HWC0,
                 a->dtype_set ? a->dtype : DVPP_DTYPE_F16);
    return st;
}

/* The pipeline feeds AIPP only the formats it can convert to (AYUV444_U8,
 * which the offline command loads as packed 4-byte pixels, is not one). */
static bool pipeline_takes_op(const ctl_job *j)
{
    dvpp_err e;

    dvpp_err_clear(&e);
    return dvpp_pipeline_validate(&j->pipe, NULL, &e) == DVPP_OK ||
           strcmp(e.field, "aipp.input_format") != 0;
}

int ctl_remote_aipp(ctl_args *a)
{
    aipp_src as = {0};
    dvpp_aipp_op op;
    ctl_source s = {0};
    ctl_job j;
    ctl_out out;
    dvpp_err err;
    dvpp_status st;
    int rc = ctl_spec_check(a, "aipp");

    if (rc)
        return rc;
    dvpp_err_clear(&err);
    dvpp_buf_init(&s.file);
    st = aipp_load(a, &as, &op, &err);
    if (st == DVPP_OK)
        st = ctl_source_load(a->inputs[0], a, ctl_aipp_pixfmt(&op), &s, &err);
    if (st == DVPP_OK)
        st = aipp_job(a, &s, &as, &op, &j, &err);
    if (st == DVPP_OK && !pipeline_takes_op(&j)) {
        fprintf(stderr, "dvppctl aipp: input_format %s is not available with --socket "
                        "(the daemon's pipeline does not feed it)\n",
                dvpp_aipp_format_name(op.input_format));
        rc = 2;
    }
    if (st == DVPP_OK && !rc)
        st = run_and_write(a, &j, &s, &out, &err);
    ctl_source_fini(&s);
    aipp_fini(&as);
    return rc ? rc : finish(a, st, &err);
}
