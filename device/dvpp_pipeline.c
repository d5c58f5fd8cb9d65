/* dvpp_pipeline: validator, planner and synchronous executor. */
#include "dvpp_pipeline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dvpp_device.h"
#include "dvpp_png.h"
#include "pipeline_int.h"

/* --- init ------------------------------------------------------------------ */

void dvpp_pipeline_init(dvpp_pipeline *p)
{
    memset(p, 0, sizeof(*p));
    p->input = DVPP_PIPE_IN_AUTO;
    p->raw.format = DVPP_PIXEL_UNKNOWN;
    p->decode.format = DVPP_PIXEL_UNKNOWN;
    p->decode.profile = DVPP_PROFILE_NATIVE;
    p->post = DVPP_PIPE_POST_NONE;
    dvpp_norm_spec_init(&p->norm);
    p->aipp_layout = DVPP_LAYOUT_NC1HWC0;
    p->aipp_dtype = DVPP_DTYPE_F16;
    p->output = DVPP_PIPE_OUT_IMAGE;
    p->out_format = DVPP_PIXEL_UNKNOWN;
    p->encoding = DVPP_PIPE_ENC_NONE;
    p->quality = 95;
}

dvpp_status dvpp_pipeline_add_op(dvpp_pipeline *p, const dvpp_pipe_op *op,
                                 dvpp_err *err)
{
    if (p->nops >= DVPP_PIPE_MAX_OPS)
        return dvpp_err_set(err, DVPP_EINVAL, "ops", "at most %d ops",
                            DVPP_PIPE_MAX_OPS);
    p->ops[p->nops++] = *op;
    return DVPP_OK;
}

dvpp_pixfmt dvpp__pipe_aipp_pixfmt(const dvpp_aipp_op *op)
{
    switch (op->input_format) {
    case DVPP_AIPP_YUV420SP_U8: return DVPP_PIXEL_NV12;
    case DVPP_AIPP_YUV422SP_U8: return DVPP_PIXEL_YUV422SP;
    case DVPP_AIPP_YUYV_U8: return DVPP_PIXEL_YUYV;
    case DVPP_AIPP_YUV400_U8: return DVPP_PIXEL_YUV400;
    case DVPP_AIPP_RGB888_U8: return DVPP_PIXEL_RGB;
    case DVPP_AIPP_XRGB8888_U8:
    case DVPP_AIPP_ARGB8888_U8: return DVPP_PIXEL_ARGB;
    default: return DVPP_PIXEL_UNKNOWN;
    }
}

bool dvpp__pipe_png_format_ok(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_RGB || f == DVPP_PIXEL_BGR || f == DVPP_PIXEL_RGBA ||
           f == DVPP_PIXEL_BGRA || f == DVPP_PIXEL_GRAY || f == DVPP_PIXEL_YUV400;
}

void dvpp__pipe_aipp_op_for(const dvpp_pipeline *p, uint32_t w, uint32_t h,
                            dvpp_aipp_op *op)
{
    *op = p->aipp;
    dvpp_aipp_op_for_image(op, w, h);
}

void dvpp__pipe_copy_opts(dvpp_profile prof, dvpp_resize_opts *o)
{
    dvpp_resize_opts_init(o);
    if (dvpp_profile_is_ascend(prof))
        o->parity = DVPP_PARITY_ASCEND, o->ascend_mode = 0;
}

void dvpp__pipe_jpeg_opts(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl,
                          dvpp_jpeg_decode_opts *o)
{
    dvpp_jpeg_decode_opts_init(o);
    o->format = pl->decode_format;
    o->scale_num = pl->scale_num;
    o->no_orient = p->decode.no_orient;
    o->has_roi = p->decode.has_roi;
    o->roi = p->decode.roi;
    o->allow_partial = p->decode.allow_partial;
    o->profile = p->decode.profile;
}

void dvpp__pipe_png_opts(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl,
                         dvpp_png_decode_opts *o)
{
    bool asc = dvpp_profile_is_ascend(p->decode.profile);

    dvpp_png_decode_opts_init(o);
    o->format = pl->decode_format;
    o->profile = p->decode.profile;
    o->align_w = asc ? 128 : 1;
    o->align_h = asc ? 16 : 1;
}

dvpp_status dvpp__pipe_raw_layout(const dvpp_pipeline *p, dvpp_image *img, dvpp_err *err)
{
    dvpp_status st = dvpp_image_init(img, p->raw.format, p->raw.width, p->raw.height, 1, 1,
                                     err);

    if (st != DVPP_OK)
        return st;
    if (p->raw.width_stride)
        img->width_stride = p->raw.width_stride;
    if (p->raw.height_stride)
        img->height_stride = p->raw.height_stride;
    return dvpp_image_planes(img, &(dvpp_planes){0}, err);
}

bool dvpp__pipe_raw_copied(const dvpp_pipeline *p, const dvpp_image *layout)
{
    return !dvpp_vpc_layout_ok(p->decode.profile, layout);
}

/* --- validation ---------------------------------------------------------------- */

static dvpp_status check_raw(const dvpp_pipeline *p, const dvpp_limits *lim,
                             dvpp_err *err)
{
    const dvpp_pipe_raw *r = &p->raw;
    dvpp_image img;
    dvpp_planes pl;
    dvpp_status st;

    if (!dvpp_pixfmt_get(r->format))
        return dvpp_err_set(err, DVPP_EINVAL, "raw.format",
                            "raw input needs a known pixel format");
    if (!r->width || !r->height)
        return dvpp_err_set(err, DVPP_EINVAL, r->width ? "raw.height" : "raw.width",
                            "raw size %ux%u is empty", r->width, r->height);
    st = dvpp_limits_check_image(lim, r->width, r->height, err);
    if (st != DVPP_OK)
        return st;
    st = dvpp_image_init(&img, r->format, r->width, r->height, 1, 1, err);
    if (st != DVPP_OK)
        return st;
    if (r->width_stride)
        img.width_stride = r->width_stride;
    if (r->height_stride)
        img.height_stride = r->height_stride;
    if (dvpp_image_planes(&img, &pl, NULL) != DVPP_OK)
        return dvpp_err_set(err, DVPP_EINVAL, "raw.width_stride",
                            "strides %u x %u cannot hold a %ux%u %s image",
                            img.width_stride, img.height_stride, r->width,
                            r->height, dvpp_pixfmt_name(r->format));
    return DVPP_OK;
}

static dvpp_status check_decode(const dvpp_pipeline *p, dvpp_err *err)
{
    const dvpp_pipe_decode *d = &p->decode;

    if (d->profile > DVPP_PROFILE_ASCEND310P)
        return dvpp_err_set(err, DVPP_EINVAL, "decode.profile", "unknown profile %d",
                            (int)d->profile);
    if (d->format != DVPP_PIXEL_UNKNOWN && !dvpp_pixfmt_get(d->format))
        return dvpp_err_set(err, DVPP_EINVAL, "decode.format",
                            "unknown decode format %d", (int)d->format);
    if (p->input == DVPP_PIPE_IN_PNG && d->format != DVPP_PIXEL_UNKNOWN &&
        !dvpp__pipe_png_format_ok(d->format))
        return dvpp_err_set(err, DVPP_EINVAL, "decode.format",
                            "PNG decodes to rgb, bgr, rgba, bgra or gray, not %s",
                            dvpp_pixfmt_name(d->format));
    if (d->has_roi && (!d->roi.w || !d->roi.h))
        return dvpp_err_set(err, DVPP_EINVAL, "decode.roi", "empty decode ROI");
    if (d->shrink_on_load && (p->nops == 0 || p->ops[0].kind != DVPP_PIPE_OP_RESIZE))
        return dvpp_err_set(err, DVPP_EINVAL, "decode.shrink_on_load",
                            "shrink-on-load needs a resize as the first op");
    if (d->shrink_on_load && d->has_roi)
        return dvpp_err_set(err, DVPP_EINVAL, "decode.shrink_on_load",
                            "shrink-on-load and a decode ROI exclude each other");
    if (d->scale_denom && (d->scale_denom > 8 || (d->scale_denom & (d->scale_denom - 1))))
        return dvpp_err_set(err, DVPP_EINVAL, "decode.scale_denom",
                            "scale_denom %u (1, 2, 4 or 8)", d->scale_denom);
    if (d->scale_denom > 1 && d->shrink_on_load)
        return dvpp_err_set(err, DVPP_EINVAL, "decode.scale_denom",
                            "an explicit DCT scale and shrink-on-load exclude each other");
    if (d->scale_denom > 1 && dvpp_profile_is_ascend(d->profile))
        return dvpp_err_set(err, DVPP_EPROFILE, "decode.scale_denom",
                            "Ascend JPEGD has no DCT-domain scaling");
    return DVPP_OK;
}

static dvpp_status check_resize(const dvpp_pipe_resize *r, dvpp_profile prof,
                                const dvpp_limits *lim, const char *f,
                                dvpp_err *err)
{
    bool one_side = r->mode == DVPP_RESIZE_SHORTER || r->mode == DVPP_RESIZE_LONGER;
    uint32_t h = one_side ? r->w : r->h;
    int max_mode = prof == DVPP_PROFILE_ASCEND310P ? 2 : 4;

    if ((unsigned)r->mode > DVPP_RESIZE_LONGER)
        return dvpp_err_set(err, DVPP_EINVAL, f, "%s: unknown mode", f);
    if ((unsigned)r->round > DVPP_RESIZE_ROUND_FLOOR ||
        (r->round != DVPP_RESIZE_ROUND_NEAREST && !one_side)) {
        char rf[DVPP_ERR_FIELD_LEN]; /* "ops[i].resize.round" always fits */
        if (snprintf(rf, sizeof(rf), "%s.round", f) >= (int)sizeof(rf))
            rf[0] = '\0';
        return dvpp_err_set(err, DVPP_EINVAL, rf,
                            "%s: round %s is only for the shorter and longer modes, not %s",
                            rf, dvpp_resize_round_name(r->round),
                            dvpp_resize_mode_name(r->mode));
    }
    if (!r->w || !h)
        return dvpp_err_set(err, DVPP_EINVAL, f, "%s: empty target %ux%u", f, r->w, h);
    if (dvpp_limits_check_image(lim, r->w, h, NULL) != DVPP_OK)
        return dvpp_err_set(err, DVPP_ELIMIT, f, "%s: target %ux%u over the limits",
                            f, r->w, h);
    if ((unsigned)r->opts.parity > DVPP_PARITY_ASCEND ||
        (unsigned)r->opts.interp > DVPP_INTERP_HAMMING)
        return dvpp_err_set(err, DVPP_EINVAL, f, "%s: unknown parity or interp", f);
    if (r->opts.parity == DVPP_PARITY_ASCEND &&
        (r->opts.ascend_mode < 0 || r->opts.ascend_mode > 4))
        return dvpp_err_set(err, DVPP_EINVAL, f, "%s: ascend_mode %d not in 0..4",
                            f, r->opts.ascend_mode);
    if (!dvpp_profile_is_ascend(prof))
        return DVPP_OK;
    if (r->opts.parity == DVPP_PARITY_ASCEND && r->opts.ascend_mode > max_mode)
        return dvpp_err_set(err, DVPP_EPROFILE, f,
                            "%s: %s supports interpolation 0..%d", f,
                            dvpp_profile_name(prof), max_mode);
    if (r->mode == DVPP_RESIZE_STRETCH &&
        (r->w < 10 || r->h < 6 || r->w > 4096 || r->h > 4096))
        return dvpp_err_set(err, DVPP_EPROFILE, f,
                            "%s: VPC output %ux%u outside 10x6..4096x4096", f,
                            r->w, r->h);
    return DVPP_OK;
}

bool dvpp_pipe_crop_round_parse(const char *s, dvpp_pipe_crop_round *out)
{
    if (!s)
        return false;
    if (!strcmp(s, "floor"))
        *out = DVPP_PIPE_CROP_FLOOR;
    else if (!strcmp(s, "even"))
        *out = DVPP_PIPE_CROP_EVEN;
    else
        return false;
    return true;
}

const char *dvpp_pipe_crop_round_name(dvpp_pipe_crop_round r)
{
    return r == DVPP_PIPE_CROP_EVEN ? "even" : "floor";
}

/* A centre crop's size and rounding (its rectangle is the planner's). */
static dvpp_status check_center(const dvpp_pipe_center *c, const dvpp_limits *lim,
                                const char *f, dvpp_err *err)
{
    if (!c->w || !c->h)
        return dvpp_err_set(err, DVPP_EINVAL, f, "%s: centre crop %ux%u needs both sides",
                            f, c->w, c->h);
    if (c->round != DVPP_PIPE_CROP_FLOOR && c->round != DVPP_PIPE_CROP_EVEN)
        return dvpp_err_set(err, DVPP_EINVAL, f, "%s: unknown centre rounding %d", f,
                            (int)c->round);
    if (c->w > lim->max_side || c->h > lim->max_side)
        return dvpp_err_set(err, DVPP_ELIMIT, f, "%s: centre crop %ux%u above max_side %u",
                            f, c->w, c->h, lim->max_side);
    return DVPP_OK;
}

static dvpp_status check_op(const dvpp_pipeline *p, uint32_t i,
                            const dvpp_limits *lim, dvpp_err *err)
{
    const dvpp_pipe_op *op = &p->ops[i];
    char f[DVPP_ERR_FIELD_LEN];

    switch (op->kind) {
    case DVPP_PIPE_OP_CROP:
        snprintf(f, sizeof(f), "ops[%u].crop", i);
        if (dvpp_pipe_op_is_center_crop(op))
            return check_center(&op->center, lim, f, err);
        if (op->u.crop.right < op->u.crop.left || op->u.crop.bottom < op->u.crop.top)
            return dvpp_err_set(err, DVPP_EINVAL, f, "%s: right/bottom before left/top", f);
        return DVPP_OK;
    case DVPP_PIPE_OP_RESIZE:
        snprintf(f, sizeof(f), "ops[%u].resize", i);
        return check_resize(&op->u.resize, p->decode.profile, lim, f, err);
    case DVPP_PIPE_OP_CONVERT:
        snprintf(f, sizeof(f), "ops[%u].convert", i);
        if (!dvpp_pixfmt_get(op->u.convert))
            return dvpp_err_set(err, DVPP_EINVAL, f, "%s: unknown format", f);
        if (op->convert_parity != DVPP_PARITY_CV2 &&
            (op->convert_parity != DVPP_PARITY_PIL || op->u.convert != DVPP_PIXEL_GRAY))
            return dvpp_err_set(err, DVPP_EINVAL, f,
                                "%s: parity pil (Pillow's convert('L')) is for a "
                                "conversion to gray; cv2 is the default", f);
        return DVPP_OK;
    case DVPP_PIPE_OP_FLIP:
        snprintf(f, sizeof(f), "ops[%u].flip", i);
        if ((unsigned)op->u.flip < DVPP_FLIP_HORIZONTAL || (unsigned)op->u.flip > DVPP_FLIP_BOTH)
            return dvpp_err_set(err, DVPP_EINVAL, f, "%s: unknown flip %d", f,
                                (int)op->u.flip);
        return DVPP_OK;
    case DVPP_PIPE_OP_BORDER:
        snprintf(f, sizeof(f), "ops[%u].border", i);
        if ((unsigned)op->u.border.type > DVPP_BORDER_REFLECT_101 ||
            op->u.border.top > lim->max_side || op->u.border.bottom > lim->max_side ||
            op->u.border.left > lim->max_side || op->u.border.right > lim->max_side)
            return dvpp_err_set(err, DVPP_EINVAL, f, "%s: bad type or margins", f);
        return DVPP_OK;
    default:
        snprintf(f, sizeof(f), "ops[%u].kind", i);
        return dvpp_err_set(err, DVPP_EINVAL, f, "%s: unknown op", f);
    }
}

static dvpp_status check_norm(const dvpp_norm_spec *s, dvpp_err *err)
{
    if (!(s->scale > 0) || !isfinite(s->scale))
        return dvpp_err_set(err, DVPP_EINVAL, "norm.scale", "scale must be > 0");
    for (int i = 0; i < 3; i++) {
        if (s->std[i] == 0 || !isfinite(s->std[i]))
            return dvpp_err_set(err, DVPP_EINVAL, "norm.std",
                                "std[%d] must be finite and non-zero", i);
        if (!isfinite(s->mean[i]))
            return dvpp_err_set(err, DVPP_EINVAL, "norm.mean", "mean[%d] not finite", i);
    }
    if ((unsigned)s->dtype > DVPP_DTYPE_F32)
        return dvpp_err_set(err, DVPP_EINVAL, "norm.dtype", "unknown dtype");
    if ((unsigned)s->layout > DVPP_LAYOUT_NC1HWC0)
        return dvpp_err_set(err, DVPP_EINVAL, "norm.layout", "unknown layout");
    return DVPP_OK;
}

static dvpp_status check_aipp(const dvpp_pipeline *p, dvpp_err *err)
{
    if (p->aipp.mode == DVPP_AIPP_DYNAMIC)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "aipp.mode",
                            "a dynamic aipp_op must be resolved to a static one "
                            "(dvpp_aipp_dynamic_op) first");
    if (p->aipp.mode != DVPP_AIPP_STATIC)
        return dvpp_err_set(err, DVPP_EINVAL, "aipp.mode", "aipp_mode must be static");
    if (dvpp__pipe_aipp_pixfmt(&p->aipp) == DVPP_PIXEL_UNKNOWN)
        return dvpp_err_set(err, DVPP_EINVAL, "aipp.input_format",
                            "input_format %s is not supported",
                            dvpp_aipp_format_name(p->aipp.input_format));
    if ((unsigned)p->aipp_dtype > DVPP_DTYPE_F32)
        return dvpp_err_set(err, DVPP_EINVAL, "aipp.dtype", "unknown dtype");
    if ((unsigned)p->aipp_layout > DVPP_LAYOUT_NC1HWC0)
        return dvpp_err_set(err, DVPP_EINVAL, "aipp.layout", "unknown layout");
    return DVPP_OK;
}

static dvpp_status check_post(const dvpp_pipeline *p, dvpp_err *err)
{
    switch (p->post) {
    case DVPP_PIPE_POST_NONE: return DVPP_OK;
    case DVPP_PIPE_POST_NORM: return check_norm(&p->norm, err);
    case DVPP_PIPE_POST_AIPP: return check_aipp(p, err);
    default: return dvpp_err_set(err, DVPP_EINVAL, "post", "unknown post step");
    }
}

static dvpp_status check_output(const dvpp_pipeline *p, dvpp_err *err)
{
    if (p->output == DVPP_PIPE_OUT_TENSOR)
        return p->post == DVPP_PIPE_POST_NONE
                   ? dvpp_err_set(err, DVPP_EINVAL, "post",
                                  "tensor output needs a normalise spec or an AIPP op")
                   : DVPP_OK;
    if (p->output != DVPP_PIPE_OUT_IMAGE)
        return dvpp_err_set(err, DVPP_EINVAL, "output", "unknown output kind");
    if (p->post != DVPP_PIPE_POST_NONE)
        return dvpp_err_set(err, DVPP_EINVAL, "post",
                            "normalise/AIPP produce a tensor, not an image");
    if (p->out_format != DVPP_PIXEL_UNKNOWN && !dvpp_pixfmt_get(p->out_format))
        return dvpp_err_set(err, DVPP_EINVAL, "out_format", "unknown output format");
    if ((unsigned)p->encoding > DVPP_PIPE_ENC_PNG)
        return dvpp_err_set(err, DVPP_EINVAL, "encoding", "unknown encoding");
    if (p->out_align_w > DVPP_PIPE_MAX_ALIGN || p->out_align_h > DVPP_PIPE_MAX_ALIGN)
        return dvpp_err_set(err, DVPP_EINVAL, "out_align",
                            "stride alignment above %u", DVPP_PIPE_MAX_ALIGN);
    if (p->encoding == DVPP_PIPE_ENC_PNG && p->out_format != DVPP_PIXEL_UNKNOWN &&
        !dvpp__pipe_png_format_ok(p->out_format))
        return dvpp_err_set(err, DVPP_EINVAL, "out_format",
                            "PNG encodes rgb, bgr, rgba, bgra or gray");
    if (p->encoding == DVPP_PIPE_ENC_JPEG &&
        (p->quality > 100 ||
         p->quality < (p->decode.profile == DVPP_PROFILE_ASCEND310 ? 0 : 1)))
        return dvpp_err_set(err, DVPP_EINVAL, "quality", "quality %d not in 1..100",
                            p->quality);
    return DVPP_OK;
}

dvpp_status dvpp_pipeline_validate(const dvpp_pipeline *p,
                                   const dvpp_limits *lim, dvpp_err *err)
{
    dvpp_limits def = dvpp_limits_default();
    dvpp_status st = DVPP_OK;

    if (!lim)
        lim = &def;
    if ((unsigned)p->input > DVPP_PIPE_IN_RAW)
        return dvpp_err_set(err, DVPP_EINVAL, "input", "unknown input kind");
    if (p->input == DVPP_PIPE_IN_RAW)
        st = check_raw(p, lim, err);
    if (st == DVPP_OK)
        st = check_decode(p, err);
    if (st == DVPP_OK && p->nops > DVPP_PIPE_MAX_OPS)
        st = dvpp_err_set(err, DVPP_EINVAL, "nops", "at most %d ops", DVPP_PIPE_MAX_OPS);
    for (uint32_t i = 0; st == DVPP_OK && i < p->nops; i++)
        st = check_op(p, i, lim, err);
    if (st == DVPP_OK)
        st = check_post(p, err);
    if (st == DVPP_OK)
        st = check_output(p, err);
    return st;
}

/* --- worker ---------------------------------------------------------------------- */

void dvpp_worker_init(dvpp_worker *w, const dvpp_limits *lim)
{
    memset(w, 0, sizeof(*w));
    dvpp_aipp_ctx_init(&w->aipp);
    dvpp_scratch_init(&w->decode_scratch);
    w->limits = lim ? *lim : dvpp_limits_default();
}

void dvpp_limits_feed_init(dvpp_limits_feed *f, const dvpp_limits *lim)
{
    pthread_mutex_init(&f->mu, NULL);
    f->limits = lim ? *lim : dvpp_limits_default();
    atomic_init(&f->gen, 0);
}

void dvpp_limits_feed_fini(dvpp_limits_feed *f)
{
    pthread_mutex_destroy(&f->mu);
}

void dvpp_limits_feed_set(dvpp_limits_feed *f, const dvpp_limits *lim)
{
    pthread_mutex_lock(&f->mu);
    f->limits = *lim;
    atomic_fetch_add(&f->gen, 1);
    pthread_mutex_unlock(&f->mu);
}

void dvpp_worker_follow(dvpp_worker *w, dvpp_limits_feed *feed)
{
    w->feed = feed;
    w->feed_gen = atomic_load(&feed->gen) - 1; /* copy at the first run */
}

const dvpp_limits *dvpp_worker_limits(dvpp_worker *w)
{
    if (w->feed && atomic_load(&w->feed->gen) != w->feed_gen) {
        pthread_mutex_lock(&w->feed->mu);
        w->limits = w->feed->limits;
        w->feed_gen = atomic_load(&w->feed->gen);
        pthread_mutex_unlock(&w->feed->mu);
    }
    return &w->limits;
}

void dvpp_worker_fini(dvpp_worker *w)
{
    if (w->aux) {
        dvpp_worker_fini(w->aux);
        dvpp_free(w->aux, sizeof(*w->aux));
        w->aux = NULL;
    }
    for (int i = 0; i < DVPP_PIPE_BUFS; i++) {
        dvpp_free(w->buf[i], w->cap[i]);
        w->buf[i] = NULL, w->cap[i] = 0;
    }
    dvpp_scratch_fini(&w->decode_scratch);
    dvpp_aipp_ctx_fini(&w->aipp);
}

size_t dvpp_worker_trim(dvpp_worker *w, size_t keep)
{
    size_t freed = 0;

    for (int i = 0; i < DVPP_PIPE_BUFS; i++) {
        if (w->buf[i] && w->cap[i] > keep) {
            freed += w->cap[i];
            dvpp_free(w->buf[i], w->cap[i]);
            w->buf[i] = NULL, w->cap[i] = 0;
        }
    }
    freed += dvpp_scratch_trim(&w->decode_scratch, keep);
    if (w->aux)
        freed += dvpp_worker_trim(w->aux, keep);
    return freed + dvpp_aipp_ctx_trim(&w->aipp, keep);
}

dvpp_worker *dvpp_worker_aux(dvpp_worker *w)
{
    if (!w->aux) {
        w->aux = dvpp_malloc(sizeof(*w->aux));
        if (!w->aux)
            return NULL;
        dvpp_worker_init(w->aux, NULL);
    }
    w->aux->limits = *dvpp_worker_limits(w);
    return w->aux;
}

/* Buffer @i with at least @size bytes, kept across runs. */
static dvpp_status worker_buf(dvpp_worker *w, int i, size_t size, dvpp_err *err)
{
    uint8_t *b;

    if (size <= w->cap[i])
        return DVPP_OK;
    b = dvpp_malloc(size);
    if (!b)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot allocate %zu bytes", size);
    dvpp_free(w->buf[i], w->cap[i]);
    w->buf[i] = b, w->cap[i] = size;
    return DVPP_OK;
}

/* A @fmt image of @width x @height in worker buffer @i, zeroed, laid out
 * as VPC outputs are in the worker's profile (dvpp_vpc_image_init: tight
 * in native, DVPP strides in the ascend profiles). */
static dvpp_status worker_image(dvpp_worker *w, int i, dvpp_pixfmt fmt,
                                uint32_t width, uint32_t height, dvpp_image *img,
                                dvpp_err *err)
{
    dvpp_planes pl;
    dvpp_status st;

    size_t n = 0;

    st = dvpp_vpc_image_init(img, w->aipp.vpc.profile, fmt, width, height, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(img, &pl, err);
    if (st == DVPP_OK) { /* YUV400 takes a 4:2:0 buffer under the ascend profiles */
        n = dvpp_vpc_buffer_bytes(w->aipp.vpc.profile, img);
        st = worker_buf(w, i, n, err);
    }
    if (st != DVPP_OK)
        return st;
    memset(w->buf[i], 0, n);
    img->data = w->buf[i], img->size = n;
    return DVPP_OK;
}

static void worker_profile(dvpp_worker *w, dvpp_profile prof)
{
    if (w->aipp.vpc.profile == prof)
        return;
    dvpp_vpc_ctx_fini(&w->aipp.vpc);
    dvpp_vpc_ctx_init(&w->aipp.vpc, prof);
}

/* --- run: input ------------------------------------------------------------------- */

static const uint8_t k_png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static dvpp_pipe_input sniff(const dvpp_pipeline *p, const uint8_t *in, size_t len)
{
    if (p->input != DVPP_PIPE_IN_AUTO)
        return p->input;
    if (len >= 2 && in[0] == 0xff && in[1] == 0xd8)
        return DVPP_PIPE_IN_JPEG;
    if (len >= 8 && memcmp(in, k_png_magic, 8) == 0)
        return DVPP_PIPE_IN_PNG;
    return DVPP_PIPE_IN_AUTO;
}

static dvpp_status probe_source(const dvpp_pipeline *p, dvpp_pipe_input kind,
                                const uint8_t *in, size_t len,
                                dvpp_pipe_source *src, dvpp_err *err)
{
    dvpp_png_info pi;
    dvpp_status st;

    memset(src, 0, sizeof(*src));
    switch (kind) {
    case DVPP_PIPE_IN_JPEG:
        src->is_jpeg = true;
        return dvpp_jpeg_probe(in, len, &src->jpeg, err);
    case DVPP_PIPE_IN_PNG:
        st = dvpp_png_probe(in, len, &pi, err);
        src->width = pi.width, src->height = pi.height;
        src->png = pi;
        return st;
    case DVPP_PIPE_IN_RAW:
        src->width = p->raw.width, src->height = p->raw.height;
        return DVPP_OK;
    default:
        return dvpp_err_set(err, DVPP_ECORRUPT, "input",
                            "input is neither JPEG nor PNG");
    }
}

/* The region of the source op 0 reads when the plan limits the decode
 * to it (dvpp_pipeline_plan.decode_window): its crop, or the rectangle
 * its windowed resize reads (from the plan the VPC context caches and the
 * op then runs). */
static dvpp_status decode_region(dvpp_worker *w, const dvpp_pipeline *p,
                                 const dvpp_pipeline_plan *pl, dvpp_jpeg_roi *roi,
                                 dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(pl->decode_format);
    uint32_t r[4];
    dvpp_status st;

    if (p->ops[0].kind == DVPP_PIPE_OP_CROP) {
        const dvpp_roi *c = &pl->crop[0];
        *roi = (dvpp_jpeg_roi){c->left, c->top, dvpp_roi_width(c), dvpp_roi_height(c)};
        return DVPP_OK;
    }
    st = dvpp_vpc_window_source(&w->aipp.vpc, &p->ops[0].u.resize.opts, pl->src_w,
                                pl->src_h, pl->resize[0].out_w, pl->resize[0].out_h,
                                fi->bpp, &pl->crop[1], r, err);
    *roi = (dvpp_jpeg_roi){r[0], r[1], r[2], r[3]};
    return st;
}

/* Decode into worker buffer 0: the whole picture, or only @roi when the
 * plan asks (@roi then holds the region, else is zeroed). */
static dvpp_status decode_jpeg(dvpp_worker *w, const dvpp_pipeline *p,
                               const dvpp_pipeline_plan *pl, const uint8_t *in,
                               size_t len, dvpp_image *img, dvpp_jpeg_roi *roi,
                               dvpp_err *err)
{
    dvpp_jpeg_decode_opts o;
    dvpp_status st = DVPP_OK;

    dvpp__pipe_jpeg_opts(p, pl, &o);
    memset(roi, 0, sizeof(*roi));
    if (pl->decode_window) {
        st = decode_region(w, p, pl, roi, err);
        o.has_roi = true, o.roi = *roi;
    }
    if (st == DVPP_OK)
        st = dvpp_jpeg_decode_geometry(in, len, &o, &w->limits, img, err);
    if (st == DVPP_OK)
        st = worker_buf(w, 0, dvpp_vpc_buffer_bytes(p->decode.profile, img), err);
    if (st != DVPP_OK)
        return st;
    img->data = w->buf[0], img->size = w->cap[0];
    o.scratch = &w->decode_scratch;
    return dvpp_jpeg_decode(in, len, &o, &w->limits, img, err);
}

static dvpp_status decode_png(dvpp_worker *w, const dvpp_pipeline *p,
                              const dvpp_pipeline_plan *pl, const uint8_t *in,
                              size_t len, dvpp_image *img, dvpp_err *err)
{
    dvpp_png_decode_opts o;
    dvpp_planes planes;
    dvpp_status st;

    dvpp__pipe_png_opts(p, pl, &o);
    st = dvpp_image_init(img, o.format, pl->src_w, pl->src_h, o.align_w, o.align_h,
                         err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(img, &planes, err);
    if (st == DVPP_OK)
        st = worker_buf(w, 0, dvpp_vpc_buffer_bytes(p->decode.profile, img), err);
    if (st != DVPP_OK)
        return st;
    img->data = w->buf[0], img->size = w->cap[0];
    return dvpp_png_decode(in, len, &o, &w->limits, img, err);
}

/* Copy @img into worker buffer 0 laid out for VPC (dvpp__pipe_raw_copied:
 * the ascend profiles refuse the caller's strides, as DVPP refuses host
 * memory; dvppctl copies such inputs the same way). */
static dvpp_status copy_raw(dvpp_worker *w, dvpp_image *img, dvpp_err *err)
{
    dvpp_planes sp, dp;
    dvpp_image to;
    dvpp_status st;

    st = worker_image(w, 0, img->format, img->width, img->height, &to, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(img, &sp, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(&to, &dp, err);
    if (st != DVPP_OK)
        return st;
    for (int k = 0; k < sp.count; k++)
        for (uint32_t y = 0; y < sp.p[k].rows; y++)
            memcpy(dvpp_image_row(&to, &dp, k, y), dvpp_image_row(img, &sp, k, y),
                   sp.p[k].row_bytes);
    *img = to;
    return DVPP_OK;
}

static dvpp_status wrap_raw(dvpp_worker *w, const dvpp_pipeline *p, const uint8_t *in,
                            size_t len, dvpp_image *img, dvpp_err *err)
{
    dvpp_planes planes;
    dvpp_status st;

    st = dvpp__pipe_raw_layout(p, img, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(img, &planes, err);
    if (st != DVPP_OK)
        return st;
    if (planes.total > len)
        return dvpp_err_set(err, DVPP_ECORRUPT, "input",
                            "raw input has %zu bytes, the layout needs %zu", len,
                            planes.total);
    img->data = (uint8_t *)(uintptr_t)in; /* read only */
    img->size = len;
    return dvpp__pipe_raw_copied(p, img) ? copy_raw(w, img, err) : DVPP_OK;
}

/* @roi: the region of the source @img holds (decode_window), else zeroed. */
static dvpp_status load_input(dvpp_worker *w, const dvpp_pipeline *p,
                              dvpp_pipe_input kind, const dvpp_pipeline_plan *pl,
                              const uint8_t *in, size_t len, dvpp_image *img,
                              dvpp_jpeg_roi *roi, dvpp_err *err)
{
    memset(roi, 0, sizeof(*roi));
    if (kind == DVPP_PIPE_IN_RAW)
        return wrap_raw(w, p, in, len, img, err);
    if (kind == DVPP_PIPE_IN_JPEG)
        return decode_jpeg(w, p, pl, in, len, img, roi, err);
    return decode_png(w, p, pl, in, len, img, err);
}

/* --- run: the watch -------------------------------------------------------------- */

const char *dvpp_pipe_op_kind_name(dvpp_pipe_op_kind k)
{
    static const char *const names[] = {"crop", "resize", "convert", "border", "flip"};

    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "op";
}

static void watch_span(const dvpp_pipeline *p, const dvpp_pipeline_out *out,
                       const char *name, int index, uint64_t t0, uint64_t t1)
{
    if (p->watch && p->watch->span)
        p->watch->span(p->watch->ctx, name, index, out->n, t0, t1);
}

static void watch_image(const dvpp_pipeline *p, const dvpp_pipeline_out *out,
                        const char *name, int index, const dvpp_image *img)
{
    if (p->watch && p->watch->image)
        p->watch->image(p->watch->ctx, name, index, out->n, img);
}

/* The op's span and image, the watch's (op @i ran from @t0 to now). */
static void watch_op(const dvpp_pipeline *p, const dvpp_pipeline_out *out, uint32_t i,
                     uint64_t t0, const dvpp_image *img)
{
    if (!p->watch)
        return;
    watch_span(p, out, dvpp_pipe_op_kind_name(p->ops[i].kind), (int)i, t0, dvpp_now_ns());
    watch_image(p, out, dvpp_pipe_op_kind_name(p->ops[i].kind), (int)i, img);
}

/* --- run: ops -------------------------------------------------------------------- */

/* Resize op @i and the crop op i + 1 as one windowed resize (the plan's
 * window_resize[i]) from @src, which holds the op's input from its pixel
 * @origin on (op 0 after a decode window: the region decoded; else the
 * whole image at 0, 0). */
static dvpp_status run_window(dvpp_worker *w, const dvpp_pipeline *p,
                              const dvpp_pipeline_plan *pl, uint32_t i,
                              const dvpp_image *src, const dvpp_jpeg_roi *origin,
                              int dst_buf, dvpp_image *dst, dvpp_err *err)
{
    const dvpp_roi *c = &pl->crop[i + 1];
    const dvpp_resize_geom *g = &pl->resize[i];
    uint32_t full_w = origin->w ? pl->src_w : src->width;
    uint32_t full_h = origin->w ? pl->src_h : src->height;
    dvpp_status st;

    st = worker_image(w, dst_buf, src->format, dvpp_roi_width(c), dvpp_roi_height(c), dst,
                      err);
    return st ? st
              : dvpp_vpc_resize_window(&w->aipp.vpc, src, origin->x, origin->y, full_w,
                                       full_h, g->out_w, g->out_h, c, dst,
                                       &p->ops[i].u.resize.opts, err);
}

/* Op @i from @src into worker buffer @dst_buf; @origin as run_window's. */
static dvpp_status run_op(dvpp_worker *w, const dvpp_pipeline *p,
                          const dvpp_pipeline_plan *pl, uint32_t i,
                          const dvpp_image *src, const dvpp_jpeg_roi *origin,
                          int dst_buf, dvpp_image *dst, dvpp_err *err)
{
    const dvpp_pipe_op *op = &p->ops[i];
    dvpp_vpc_ctx *vpc = &w->aipp.vpc;
    dvpp_resize_opts ro;
    dvpp_status st;

    switch (op->kind) {
    case DVPP_PIPE_OP_CROP:
        st = worker_image(w, dst_buf, src->format, dvpp_roi_width(&pl->crop[i]),
                          dvpp_roi_height(&pl->crop[i]), dst, err);
        dvpp__pipe_copy_opts(p->decode.profile, &ro);
        return st ? st
                  : dvpp_vpc_crop_resize_paste(vpc, src, &pl->crop[i], dst, NULL,
                                               &ro, err);
    case DVPP_PIPE_OP_RESIZE:
        if (pl->window_resize[i]) /* with the crop after it */
            return run_window(w, p, pl, i, src, origin, dst_buf, dst, err);
        st = worker_image(w, dst_buf, src->format, pl->resize[i].out_w,
                          pl->resize[i].out_h, dst, err);
        return st ? st
                  : dvpp_vpc_resize_mode(vpc, src, &pl->resize[i], dst,
                                         op->u.resize.pad, &op->u.resize.opts, err);
    case DVPP_PIPE_OP_CONVERT:
        st = worker_image(w, dst_buf, op->u.convert, src->width, src->height, dst,
                          err);
        if (st != DVPP_OK)
            return st;
        /* the context's matrix, with this op's grey weights for this call */
        vpc->csc.pil_luma = op->convert_parity == DVPP_PARITY_PIL;
        st = dvpp_vpc_convert(vpc, src, dst, err);
        vpc->csc.pil_luma = false;
        return st;
    case DVPP_PIPE_OP_FLIP:
        st = worker_image(w, dst_buf, src->format, src->width, src->height, dst, err);
        return st ? st : dvpp_vpc_flip(vpc, src, dst, op->u.flip, err);
    default:
        st = worker_image(w, dst_buf, src->format,
                          src->width + op->u.border.left + op->u.border.right,
                          src->height + op->u.border.top + op->u.border.bottom,
                          dst, err);
        return st ? st : dvpp_vpc_make_border(vpc, src, dst, &op->u.border, err);
    }
}

/* A crop of a packed picture (one plane, no chroma subsampling) under the
 * native profile as a window of @src: @view describes the crop's pixels
 * where they are (the parent's stride), so the crop copies nothing; what
 * reads it sees the same bytes a copy would hold. False when the crop is
 * not such a window (subsampled or planar formats, the ascend profiles,
 * whose VPC takes its own strides) or its layout would pass the end of
 * @src's buffer (a crop on the last rows ending left of the right edge:
 * stride x rows from its first pixel): the op copies then. */
static bool crop_view(const dvpp_pipeline *p, const dvpp_image *src, const dvpp_roi *r,
                      dvpp_image *view)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(src->format);
    size_t off;

    if (p->decode.profile != DVPP_PROFILE_NATIVE || !fi || fi->planes != 1 ||
        fi->chroma_sx || fi->chroma_sy || !src->data || r->right >= src->width ||
        r->bottom >= src->height || r->left > r->right || r->top > r->bottom)
        return false;
    off = (size_t)r->top * src->width_stride + (size_t)r->left * fi->bpp;
    if (off > src->size)
        return false;
    *view = *src;
    view->data = src->data + off;
    view->size = src->size - off;
    view->width = dvpp_roi_width(r);
    view->height = view->height_stride = dvpp_roi_height(r);
    return dvpp_image_planes(view, &(dvpp_planes){0}, NULL) == DVPP_OK;
}

/* Run ops [0, n) from @img; @img ends as the last result. @region: the
 * region of the source @img holds when the decode was limited to what op
 * 0 reads (zeroed: the whole source). */
static dvpp_status run_ops(dvpp_worker *w, const dvpp_pipeline *p,
                           const dvpp_pipeline_plan *pl, uint32_t n,
                           const dvpp_jpeg_roi *region, dvpp_image *img,
                           const dvpp_pipeline_out *out, dvpp_err *err)
{
    static const dvpp_jpeg_roi whole = {0, 0, 0, 0};
    int cur = 0; /* buffer of @img (0: decoded or raw) */

    for (uint32_t i = 0; i < n; i++) {
        const dvpp_jpeg_roi *origin = i == 0 ? region : &whole;
        int next = cur == 1 ? 2 : 1;
        uint64_t t0 = p->watch ? dvpp_now_ns() : 0;
        dvpp_image dst;
        dvpp_status st;
        /* a crop the decoder made already */
        if (i == 0 && region->w && p->ops[0].kind == DVPP_PIPE_OP_CROP) {
            watch_op(p, out, i, t0, img);
            continue;
        }
        /* a window of the buffer @img is in: the next op writes the other */
        if (p->ops[i].kind == DVPP_PIPE_OP_CROP && crop_view(p, img, &pl->crop[i], &dst)) {
            *img = dst;
            watch_op(p, out, i, t0, img);
            continue;
        }
        st = run_op(w, p, pl, i, img, origin, next, &dst, err);
        if (st != DVPP_OK)
            return st;
        *img = dst, cur = next;
        if (pl->window_resize[i])
            i++; /* the crop it made (never with an image hook) */
        watch_op(p, out, i, t0, img);
    }
    return DVPP_OK;
}

/* --- run: outputs ---------------------------------------------------------------- */

static dvpp_status check_tensor(const dvpp_pipeline_plan *pl,
                                const dvpp_pipeline_out *out, dvpp_err *err)
{
    const dvpp_tensor *t = &out->tensor;

    if (!t->data || t->c != pl->c || t->h != pl->h || t->w != pl->w ||
        t->dtype != pl->dtype || t->layout != pl->layout || out->n >= t->n)
        return dvpp_err_set(err, DVPP_EINVAL, "tensor",
                            "tensor %ux%ux%ux%u %s %s cannot take image %u of "
                            "%ux%ux%u %s %s", t->n, t->c, t->h, t->w,
                            dvpp_dtype_name(t->dtype), dvpp_layout_name(t->layout),
                            out->n, pl->c, pl->h, pl->w, dvpp_dtype_name(pl->dtype),
                            dvpp_layout_name(pl->layout));
    return DVPP_OK;
}

/* The last resize, which the normalisation does itself, run alone into
 * worker buffer 3 (free with a normalisation) for the watch's image hook. */
static dvpp_status watch_fused_resize(dvpp_worker *w, const dvpp_pipeline *p,
                                      const dvpp_pipeline_plan *pl, const dvpp_image *img,
                                      const dvpp_pipeline_out *out, dvpp_err *err)
{
    uint32_t i = p->nops - 1;
    const dvpp_pipe_resize *r = &p->ops[i].u.resize;
    uint64_t t0 = dvpp_now_ns();
    dvpp_image dst;
    dvpp_status st;

    st = worker_image(w, 3, img->format, pl->resize[i].out_w, pl->resize[i].out_h, &dst,
                      err);
    if (st == DVPP_OK)
        st = dvpp_vpc_resize_mode(&w->aipp.vpc, img, &pl->resize[i], &dst, r->pad,
                                  &r->opts, err);
    if (st == DVPP_OK)
        watch_op(p, out, i, t0, &dst);
    return st;
}

static dvpp_status run_norm(dvpp_worker *w, const dvpp_pipeline *p,
                            const dvpp_pipeline_plan *pl, const dvpp_image *img,
                            dvpp_pipeline_out *out, dvpp_err *err)
{
    static const uint8_t zero[3] = {0, 0, 0};
    dvpp_resize_opts ro;
    dvpp_resize_geom g;
    dvpp_status st;

    if (pl->fuse_resize_norm) {
        const dvpp_pipe_resize *r = &p->ops[p->nops - 1].u.resize;
        return dvpp_preprocess_run(&w->aipp, img, &pl->resize[p->nops - 1],
                                   &r->opts, r->pad, &p->norm, &out->tensor,
                                   out->n, err);
    }
    st = dvpp_resize_geometry(img->width, img->height, DVPP_RESIZE_STRETCH,
                              img->width, img->height, &g, err);
    dvpp__pipe_copy_opts(p->decode.profile, &ro);
    return st ? st
              : dvpp_preprocess_run(&w->aipp, img, &g, &ro, zero, &p->norm,
                                    &out->tensor, out->n, err);
}

static dvpp_status run_aipp(dvpp_worker *w, const dvpp_pipeline *p,
                            const dvpp_image *img, dvpp_pipeline_out *out,
                            dvpp_err *err)
{
    dvpp_image conv;
    dvpp_aipp_op op;
    dvpp_status st;

    dvpp__pipe_aipp_op_for(p, img->width, img->height, &op);
    if (!dvpp_aipp_accepts(&op, img->format)) {
        st = worker_image(w, 3, dvpp__pipe_aipp_pixfmt(&op), img->width, img->height, &conv,
                          err);
        if (st == DVPP_OK)
            st = dvpp_vpc_convert(&w->aipp.vpc, img, &conv, err);
        if (st != DVPP_OK)
            return st;
        img = &conv;
    }
    return dvpp_aipp_run(&w->aipp, &op, img, &out->tensor, out->n, err);
}

/* Copy @src row by row into the caller's tight image. */
/* Padding bytes (stride beyond the row, rows beyond the height) are
 * zeroed: an answer never carries stale buffer content. */
static bool has_padding(const dvpp_planes *sp, const dvpp_planes *dp)
{
    for (int k = 0; k < dp->count; k++)
        if (dp->p[k].stride > sp->p[k].row_bytes || dp->p[k].alloc_rows > sp->p[k].rows)
            return true;
    return false;
}

static dvpp_status copy_image(const dvpp_pipeline *p, const dvpp_image *src,
                              const dvpp_pipeline_plan *pl, dvpp_image *dst,
                              dvpp_err *err)
{
    dvpp_planes sp, dp;
    uint8_t *data = dst->data;
    size_t size = dst->size;
    dvpp_status st;

    if (!data || size < pl->out_bytes)
        return dvpp_err_set(err, DVPP_ENOSPC, "image",
                            "the output image needs %zu bytes, the buffer has %zu",
                            pl->out_bytes, data ? size : 0);
    st = dvpp_image_init(dst, src->format, src->width, src->height,
                         p->out_align_w, p->out_align_h, err);
    dst->data = data, dst->size = size;
    if (st == DVPP_OK)
        st = dvpp_image_planes(src, &sp, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(dst, &dp, err);
    if (st != DVPP_OK)
        return st;
    if (has_padding(&sp, &dp))
        memset(data, 0, pl->out_bytes);
    for (int k = 0; k < sp.count; k++)
        for (uint32_t y = 0; y < sp.p[k].rows; y++)
            memcpy(dvpp_image_row(dst, &dp, k, y), dvpp_image_row(src, &sp, k, y),
                   sp.p[k].row_bytes);
    return DVPP_OK;
}

static dvpp_status run_image(dvpp_worker *w, const dvpp_pipeline *p,
                             const dvpp_pipeline_plan *pl, const dvpp_image *img,
                             dvpp_pipeline_out *out, dvpp_err *err)
{
    dvpp_image conv;
    dvpp_status st;

    if (img->format != pl->out_format) {
        st = worker_image(w, 3, pl->out_format, img->width, img->height, &conv, err);
        if (st == DVPP_OK)
            st = dvpp_vpc_convert(&w->aipp.vpc, img, &conv, err);
        if (st != DVPP_OK)
            return st;
        img = &conv;
    }
    if (p->encoding == DVPP_PIPE_ENC_NONE)
        return copy_image(p, img, pl, &out->image, err);
    out->encoded.len = 0;
    if (p->encoding == DVPP_PIPE_ENC_PNG) {
        dvpp_png_encode_opts po = {.level = -1};
        return dvpp_png_encode(img, &po, &out->encoded, err);
    }
    dvpp_jpeg_encode_opts jo;
    dvpp_jpeg_encode_opts_init(&jo);
    jo.quality = p->quality;
    jo.profile = p->decode.profile;
    return dvpp_jpeg_encode(img, &jo, &out->encoded, err);
}

/* --- run ------------------------------------------------------------------------- */

static dvpp_status run_post(dvpp_worker *w, const dvpp_pipeline *p,
                            const dvpp_pipeline_plan *pl, const dvpp_jpeg_roi *region,
                            dvpp_image *img, dvpp_pipeline_out *out, dvpp_err *err)
{
    uint32_t nops = pl->fuse_resize_norm ? p->nops - 1 : p->nops;
    uint64_t t0 = dvpp_now_ns(), t1;
    dvpp_status st;

    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        st = check_tensor(pl, out, err);
        if (st != DVPP_OK)
            return st;
    }
    st = run_ops(w, p, pl, nops, region, img, out, err);
    if (st == DVPP_OK && pl->fuse_resize_norm && p->watch && p->watch->image)
        st = watch_fused_resize(w, p, pl, img, out, err);
    t1 = dvpp_now_ns();
    out->stage_ns[DVPP_PIPE_STAGE_VPC] = t1 - t0;
    if (st != DVPP_OK)
        return st;
    watch_image(p, out, "post_input", -1, img);
    t1 = p->watch ? dvpp_now_ns() : t1; /* the dump's time is not the post stage's */
    if (p->post == DVPP_PIPE_POST_NORM)
        st = run_norm(w, p, pl, img, out, err);
    else if (p->post == DVPP_PIPE_POST_AIPP)
        st = run_aipp(w, p, img, out, err);
    else
        st = run_image(w, p, pl, img, out, err);
    out->stage_ns[DVPP_PIPE_STAGE_POST] = dvpp_now_ns() - t1;
    watch_span(p, out,
               p->post == DVPP_PIPE_POST_NORM   ? "normalise"
               : p->post == DVPP_PIPE_POST_AIPP ? "aipp"
                                                : "image",
               -1, t1, t1 + out->stage_ns[DVPP_PIPE_STAGE_POST]);
    return st;
}

dvpp_status dvpp_pipeline_probe(const dvpp_pipeline *p, const uint8_t *input,
                                size_t len, const dvpp_limits *lim,
                                dvpp_pipe_source *src, dvpp_err *err)
{
    dvpp_limits def = dvpp_limits_default();
    dvpp_pipe_input kind;
    dvpp_status st;

    if (!input)
        return dvpp_err_set(err, DVPP_EINVAL, "input", "no input bytes");
    kind = sniff(p, input, len);
    if (kind == DVPP_PIPE_IN_AUTO) {
        memset(src, 0, sizeof(*src));
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "input",
                            "input is neither JPEG nor PNG");
    }
    if (kind != DVPP_PIPE_IN_RAW) {
        st = dvpp_limits_check_encoded(lim ? lim : &def, len, err);
        if (st != DVPP_OK)
            return st;
    }
    st = probe_source(p, kind, input, len, src, err);
    src->has_limits = true;
    src->limits = lim ? *lim : def;
    /* The decoders apply the same check, but only after the device has
     * admitted the job against its budget (which would refuse a bomb as
     * "too_large", not naming the limit) and after decode_png has sized its
     * output buffer from the header: check the claim here, first. */
    if (st == DVPP_OK && kind != DVPP_PIPE_IN_RAW)
        st = dvpp_limits_check_image(lim ? lim : &def,
                                     src->is_jpeg ? src->jpeg.width : src->width,
                                     src->is_jpeg ? src->jpeg.height : src->height, err);
    return st;
}

dvpp_status dvpp_pipeline_run(dvpp_worker *w, const dvpp_pipeline *p,
                              const uint8_t *input, size_t len,
                              dvpp_pipeline_out *out, dvpp_err *err)
{
    dvpp_pipe_source src;
    dvpp_jpeg_roi region;
    dvpp_image img;
    dvpp_status st;
    uint64_t t0 = dvpp_now_ns(), td = 0;

    memset(out->stage_ns, 0, sizeof(out->stage_ns));
    st = dvpp_pipeline_validate(p, dvpp_worker_limits(w), err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_probe(p, input, len, &w->limits, &src, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(p, &src, &out->plan, err);
    if (st != DVPP_OK)
        goto done;
    out->geom = out->plan.geom;
    worker_profile(w, p->decode.profile);
    if (p->watch) {
        td = dvpp_now_ns();
        watch_span(p, out, "plan", -1, t0, td);
    }
    st = load_input(w, p, sniff(p, input, len), &out->plan, input, len, &img, &region,
                    err);
    out->stage_ns[DVPP_PIPE_STAGE_DECODE] = dvpp_now_ns() - t0;
    if (st != DVPP_OK)
        goto done;
    if (p->watch) {
        watch_span(p, out, "decode", -1, td, t0 + out->stage_ns[DVPP_PIPE_STAGE_DECODE]);
        watch_image(p, out, "decoded", -1, &img);
    }
    st = run_post(w, p, &out->plan, &region, &img, out, err);
done:
    watch_span(p, out, "run", -1, t0, dvpp_now_ns());
    return st;
}
