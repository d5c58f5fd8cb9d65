/* ctl_spec: dvppctl's flags -> the dvpp_pipeline the daemon runs -> the
 * JSON spec of docs/http-api.md that carries it.
 *
 * The pipeline is built as a struct first (the one the daemon's parser
 * will rebuild from the JSON), so dvppctl can plan it locally: output size
 * and geometry come from the same planner the daemon uses. The JSON then
 * spells out every field, defaults included, because the daemon's
 * defaults differ by endpoint (a PIXELS job outputs rgb unless told, an
 * IMAGE job shrinks on load unless told) while dvppctl's must not. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "ctl_remote.h"
#include "dvpp_csc.h"
#include "dvpp_vpc.h"

/* --- what the spec cannot say ----------------------------------------------- */

static int refuse(const char *cmd, const char *flag)
{
    fprintf(stderr, "dvppctl %s: %s is not available with --socket\n", cmd, flag);
    return 2;
}

static bool limits_default(const dvpp_limits *l)
{
    dvpp_limits d = dvpp_limits_default();

    return l->max_encoded_bytes == d.max_encoded_bytes &&
           l->max_pixels == d.max_pixels && l->max_side == d.max_side &&
           l->max_jpeg_scans == d.max_jpeg_scans;
}

/* The VPC commands set the CSC of their context from --csc/--range; the
 * daemon's VPC runs the profile's default. */
static bool csc_default(const ctl_args *a)
{
    dvpp_vpc_ctx c;
    bool same;

    dvpp_vpc_ctx_init(&c, a->jpeg.profile);
    same = a->matrix == c.csc.matrix &&
           (a->range < 0 || (a->range == 1) == c.csc.full_range);
    dvpp_vpc_ctx_fini(&c);
    return same;
}

static bool is_vpc_command(const char *cmd)
{
    return !strcmp(cmd, "resize") || !strcmp(cmd, "crop") ||
           !strcmp(cmd, "convert") || !strcmp(cmd, "make-border") ||
           !strcmp(cmd, "batch-crop");
}

/* Commands whose offline twin is the pipeline itself (batch) or that
 * have none (bench): whatever the pipeline does is right. */
static bool is_pipeline_command(const char *cmd)
{
    return !strcmp(cmd, "batch") || !strcmp(cmd, "bench");
}

/* Shrink-on-load the pipeline can only do before a first resize (resize,
 * preprocess: checked per input) or as the pipeline does it. */
static bool shrink_expressible(const ctl_args *a, const char *cmd)
{
    return !a->shrink_on_load || !a->shrink_w || !strcmp(cmd, "resize") ||
           !strcmp(cmd, "preprocess") || is_pipeline_command(cmd);
}

int ctl_spec_check(const ctl_args *a, const char *cmd)
{
    dvpp_jpeg_decode_opts jd;

    dvpp_jpeg_decode_opts_init(&jd);
    if (a->jpeg.fast_dct)
        return refuse(cmd, "--fast-dct");
    if (a->jpeg.fast_upsample)
        return refuse(cmd, "--nosmooth");
    if (a->jpeg.scale_num != jd.scale_num)
        return refuse(cmd, "--scale N (DCT scaling)");
    if (a->png.alpha != DVPP_PNG_ALPHA_AUTO)
        return refuse(cmd, "--alpha drop|composite");
    if (!limits_default(&a->lim))
        return refuse(cmd, "--max-bytes/--max-pixels/--max-side/--max-scans "
                           "(the daemon's limits apply)");
    if (a->dynamic)
        return refuse(cmd, "--dynamic (a dynamic aipp_op)");
    if (a->channels)
        return refuse(cmd, "--channels (the daemon's device.channels apply)");
    /* The ascend profiles decode VPC inputs to NV12 with the chip's strides
     * offline, which the pipeline's intermediate images do not reproduce. */
    if (a->jpeg.profile != DVPP_PROFILE_NATIVE && !is_pipeline_command(cmd))
        return refuse(cmd, "--profile ascend310|ascend310p");
    if (is_vpc_command(cmd) && !csc_default(a))
        return refuse(cmd, "--csc/--range other than the profile's default");
    if (!shrink_expressible(a, cmd))
        return refuse(cmd, "--shrink-on-load");
    return 0;
}

/* --- the pipeline ----------------------------------------------------------------- */

void ctl_job_init(ctl_job *j, const ctl_args *a, const ctl_source *s,
                  dvppc_kind kind)
{
    dvpp_pipeline *p = &j->pipe;

    memset(j, 0, sizeof(*j));
    dvpp_pipeline_init(p);
    j->kind = kind;
    j->trace = a->trace;
    if (s->kind == CTL_INPUT_JPEG || s->kind == CTL_INPUT_PNG) {
        p->input = s->kind == CTL_INPUT_JPEG ? DVPP_PIPE_IN_JPEG : DVPP_PIPE_IN_PNG;
        p->decode.format = s->format;
    } else {
        p->input = DVPP_PIPE_IN_RAW;
        p->raw = (dvpp_pipe_raw){s->pixels.format, s->pixels.width, s->pixels.height,
                                 s->pixels.width_stride, s->pixels.height_stride};
    }
    p->decode.no_orient = a->jpeg.no_orient;
    p->decode.allow_partial = a->jpeg.allow_partial;
    p->decode.profile = a->jpeg.profile;
    p->output = kind == DVPPC_TENSOR ? DVPP_PIPE_OUT_TENSOR : DVPP_PIPE_OUT_IMAGE;
    p->out_format = s->format;
}

dvpp_status ctl_job_crop(ctl_job *j, const dvpp_roi *roi, dvpp_err *err)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_CROP, .u.crop = *roi};

    return dvpp_pipeline_add_op(&j->pipe, &op, err);
}

dvpp_status ctl_job_resize(ctl_job *j, const ctl_args *a, dvpp_resize_mode mode,
                           uint32_t w, uint32_t h, dvpp_err *err)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_RESIZE};

    op.u.resize.mode = mode;
    op.u.resize.round = a->round;
    op.u.resize.w = w;
    op.u.resize.h = h;
    op.u.resize.opts = a->resize;
    memcpy(op.u.resize.pad, a->pad, sizeof(op.u.resize.pad));
    return dvpp_pipeline_add_op(&j->pipe, &op, err);
}

dvpp_status ctl_job_convert(ctl_job *j, dvpp_pixfmt to, dvpp_err *err)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_CONVERT, .u.convert = to};

    return dvpp_pipeline_add_op(&j->pipe, &op, err);
}

dvpp_status ctl_job_border(ctl_job *j, const dvpp_border *b, dvpp_err *err)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_BORDER, .u.border = *b};

    return dvpp_pipeline_add_op(&j->pipe, &op, err);
}

void ctl_job_pixels(ctl_job *j, dvpp_pixfmt fmt, uint32_t align_w, uint32_t align_h)
{
    j->pipe.output = DVPP_PIPE_OUT_IMAGE;
    j->pipe.encoding = DVPP_PIPE_ENC_NONE;
    j->pipe.out_format = fmt;
    j->pipe.out_align_w = align_w;
    j->pipe.out_align_h = align_h;
}

void ctl_job_normalize(ctl_job *j, const ctl_args *a)
{
    j->pipe.output = DVPP_PIPE_OUT_TENSOR;
    j->pipe.post = DVPP_PIPE_POST_NORM;
    ctl_norm_spec(a, &j->pipe.norm);
    ctl_job_scale(j, a);
}

void ctl_job_scale(ctl_job *j, const ctl_args *a)
{
    /* ctl_parse_options refused --std with --scale, as the daemon does */
    j->norm_mult = a->norm_scale_set;
    j->mult = a->norm_scale;
}

void ctl_job_aipp(ctl_job *j, const char *text, unsigned index,
                  const dvpp_aipp_op *op, dvpp_layout layout, dvpp_dtype dtype)
{
    j->pipe.output = DVPP_PIPE_OUT_TENSOR;
    j->pipe.post = DVPP_PIPE_POST_AIPP;
    j->pipe.aipp = *op;
    j->pipe.aipp_layout = layout;
    j->pipe.aipp_dtype = dtype;
    j->aipp_text = text;
    j->aipp_op = index;
}

/* --- JSON -------------------------------------------------------------------------- */

/* Reals are written with 17 significant digits (jansson's default), so
 * every double comes back bit for bit. */
static json_t *reals(const double *v, size_t n)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < n; i++) {
        if (json_array_append_new(a, json_real(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *roi_json(uint32_t l, uint32_t t, uint32_t r, uint32_t b)
{
    return json_pack("[I, I, I, I]", (json_int_t)l, (json_int_t)t, (json_int_t)r,
                     (json_int_t)b);
}

/* Set @key of @o to @v (taking it); false when @v is NULL (out of
 * memory) or cannot be set, so a spec is never sent with a key missing. */
static bool put(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0;
}

static bool put_input(json_t *root, const dvpp_pipeline *p)
{
    static const char *const names[] = {"auto", "jpeg", "png", "raw"};
    const dvpp_pipe_raw *r = &p->raw;

    if (!put(root, "input", json_string(names[p->input])))
        return false;
    if (p->input != DVPP_PIPE_IN_RAW)
        return true;
    return put(root, "raw",
               json_pack("{s:s, s:I, s:I, s:I, s:I}", "format", dvpp_pixfmt_name(r->format),
                         "width", (json_int_t)r->width, "height", (json_int_t)r->height,
                         "width_stride", (json_int_t)r->width_stride, "height_stride",
                         (json_int_t)r->height_stride));
}

static json_t *decode_json(const dvpp_pipe_decode *d)
{
    json_t *o = json_pack("{s:b, s:b, s:b, s:s}", "shrink_on_load", d->shrink_on_load,
                          "orient", !d->no_orient, "allow_partial", d->allow_partial,
                          "profile", dvpp_profile_name(d->profile));
    bool ok = o != NULL;

    if (ok && d->format != DVPP_PIXEL_UNKNOWN)
        ok = put(o, "format", json_string(dvpp_pixfmt_name(d->format)));
    if (ok && d->has_roi)
        ok = put(o, "roi", roi_json(d->roi.x, d->roi.y, d->roi.x + d->roi.w - 1,
                                    d->roi.y + d->roi.h - 1));
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

static json_t *resize_json(const dvpp_pipe_resize *r)
{
    json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:I, s:[i, i, i]}", "w",
                          (json_int_t)r->w, "h", (json_int_t)r->h, "mode",
                          dvpp_resize_mode_name(r->mode), "interp",
                          dvpp_interp_name(r->opts.interp), "parity",
                          dvpp_parity_name(r->opts.parity), "ascend_mode",
                          (json_int_t)r->opts.ascend_mode, "pad", r->pad[0], r->pad[1],
                          r->pad[2]);

    /* only when set: a daemon from before "round" still takes the rest */
    if (o && r->round != DVPP_RESIZE_ROUND_NEAREST &&
        json_object_set_new(o, "round", json_string(dvpp_resize_round_name(r->round)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *border_json(const dvpp_border *b)
{
    static const char *const types[] = {"constant", "replicate", "reflect",
                                        "reflect101"};

    return json_pack("{s:I, s:I, s:I, s:I, s:s, s:o}", "top", (json_int_t)b->top,
                     "bottom", (json_int_t)b->bottom, "left", (json_int_t)b->left,
                     "right", (json_int_t)b->right, "type", types[b->type], "value",
                     reals(b->value, 4));
}

static json_t *op_json(const dvpp_pipe_op *op)
{
    switch (op->kind) {
    case DVPP_PIPE_OP_CROP:
        if (dvpp_pipe_op_is_center_crop(op))
            return json_pack("{s:{s:[I, I], s:s}}", "crop", "center",
                             (json_int_t)op->center.w, (json_int_t)op->center.h, "round",
                             dvpp_pipe_crop_round_name(op->center.round));
        return json_pack("{s:o}", "crop", roi_json(op->u.crop.left, op->u.crop.top,
                                                   op->u.crop.right, op->u.crop.bottom));
    case DVPP_PIPE_OP_RESIZE:
        return json_pack("{s:o}", "resize", resize_json(&op->u.resize));
    case DVPP_PIPE_OP_CONVERT:
        if (op->convert_parity == DVPP_PARITY_PIL)
            return json_pack("{s:{s:s, s:s}}", "convert", "format",
                             dvpp_pixfmt_name(op->u.convert), "parity", "pil");
        return json_pack("{s:s}", "convert", dvpp_pixfmt_name(op->u.convert));
    case DVPP_PIPE_OP_FLIP:
        return json_pack("{s:s}", "flip", dvpp_flip_name(op->u.flip));
    default:
        return json_pack("{s:o}", "border", border_json(&op->u.border));
    }
}

static json_t *ops_json(const dvpp_pipeline *p)
{
    json_t *a = json_array();

    for (uint32_t i = 0; a && i < p->nops; i++) {
        json_t *op = op_json(&p->ops[i]);
        if (!op || json_array_append_new(a, op) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *normalize_json(const ctl_job *j)
{
    const dvpp_norm_spec *n = &j->pipe.norm;
    json_t *o = json_pack("{s:o, s:s, s:s, s:s}", "mean", reals(n->mean, 3), "order",
                          n->bgr ? "bgr" : "rgb", "layout", dvpp_layout_name(n->layout),
                          "dtype", dvpp_dtype_name(n->dtype));
    bool ok = o && put(o, j->norm_mult ? "scale" : "std",
                       j->norm_mult ? json_real(j->mult) : reals(n->std, 3));

    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

/* The config itself travels as the request's aipp_config. */
static json_t *aipp_json(const ctl_job *j)
{
    return json_pack("{s:I, s:s, s:s}", "op", (json_int_t)j->aipp_op, "layout",
                     dvpp_layout_name(j->pipe.aipp_layout), "dtype",
                     dvpp_dtype_name(j->pipe.aipp_dtype));
}

static json_t *output_json(const dvpp_pipeline *p)
{
    json_t *o = json_pack("{s:s}", "format", dvpp_pixfmt_name(p->out_format));
    bool ok = o != NULL;

    /* "align" counts pixels and rows, >= 1; 0 and 1 both mean tight. */
    if (ok && (p->out_align_w > 1 || p->out_align_h > 1))
        ok = put(o, "align", json_pack("[I, I]",
                                       (json_int_t)(p->out_align_w ? p->out_align_w : 1),
                                       (json_int_t)(p->out_align_h ? p->out_align_h : 1)));
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

char *ctl_spec_json(const ctl_job *j)
{
    const dvpp_pipeline *p = &j->pipe;
    json_t *root = json_object();
    char *text = NULL;
    bool ok;

    if (j->preset) { /* the daemon resolves the name: config presets too */
        ok = root && put(root, "preset", json_string(j->preset));
        text = ok ? json_dumps(root, JSON_COMPACT) : NULL;
        json_decref(root);
        return text;
    }
    ok = root && put_input(root, p) && put(root, "decode", decode_json(&p->decode));
    if (ok && p->nops)
        ok = put(root, "ops", ops_json(p));
    if (ok && p->post == DVPP_PIPE_POST_NORM)
        ok = put(root, "normalize", normalize_json(j));
    else if (ok && p->post == DVPP_PIPE_POST_AIPP)
        ok = put(root, "aipp", aipp_json(j));
    else if (ok)
        ok = put(root, "output", output_json(p));
    if (ok)
        text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return text;
}
