/* dvpp_pipeline's planner: the decode format and DCT scale, the image each
 * op makes (and where a letterbox puts its picture), the output's shape,
 * the memory of the intermediates, and every check the run makes before
 * it touches a pixel: the decoder's, each VPC call's and AIPP's, made here
 * on the image descriptors the run will hold (the same layouts, formats
 * and options), so a plan that succeeds runs and a request that cannot
 * run is refused before admission (tests/unit/device/test_pipeline_sweep.c
 * holds the planner to that). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_pipeline.h"
#include "pipeline_int.h"

/* --- decode --------------------------------------------------------------------- */

static bool is_packed_yuv(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_YUYV || f == DVPP_PIXEL_UYVY || f == DVPP_PIXEL_YVYU ||
           f == DVPP_PIXEL_VYUY || f == DVPP_PIXEL_YUV_PACKED_444;
}

/* What the next stage wants: AIPP's input, the output image's format,
 * else RGB. */
static dvpp_pixfmt wanted_format(const dvpp_pipeline *p)
{
    if (p->post == DVPP_PIPE_POST_AIPP)
        return dvpp__pipe_aipp_pixfmt(&p->aipp);
    if (p->output == DVPP_PIPE_OUT_IMAGE && p->out_format != DVPP_PIXEL_UNKNOWN)
        return p->out_format;
    return DVPP_PIXEL_RGB;
}

/* The decoder's output format. An explicit decode.format stays (the
 * decoder's own checks refuse, at plan time, what it cannot write), but a
 * PNG is decoded to RGB where PNG has no such format. Left to the planner
 * (UNKNOWN), the wanted format, made one the decoder writes: JPEG writes
 * no packed YUV (their semi-planar twin instead: the VPC resizes packed
 * YUV in those planes anyway), PNG the RGB family and grey, and under
 * the ascend profiles JPEGD 4:2:0 (NV12 unless NV21 is wanted; VPC
 * converts) and PNGD RGB or RGBA. */
static dvpp_pixfmt plan_decode_format(const dvpp_pipeline *p, bool is_jpeg)
{
    bool asc = dvpp_profile_is_ascend(p->decode.profile);
    dvpp_pixfmt f = p->decode.format;
    const dvpp_pixfmt_info *fi;

    if (p->input == DVPP_PIPE_IN_RAW)
        return p->raw.format;
    if (f != DVPP_PIXEL_UNKNOWN)
        return is_jpeg || dvpp__pipe_png_format_ok(f) ? f : DVPP_PIXEL_RGB;
    f = wanted_format(p);
    fi = dvpp_pixfmt_get(f);
    if (!is_jpeg && asc)
        return fi && fi->has_alpha ? DVPP_PIXEL_RGBA : DVPP_PIXEL_RGB;
    if (!is_jpeg)
        return dvpp__pipe_png_format_ok(f) ? f : DVPP_PIXEL_RGB;
    if (asc)
        return f == DVPP_PIXEL_NV21 ? DVPP_PIXEL_NV21 : DVPP_PIXEL_NV12;
    if (is_packed_yuv(f))
        return f == DVPP_PIXEL_YUV_PACKED_444 ? DVPP_PIXEL_YUV444SP : DVPP_PIXEL_YUV422SP;
    return f;
}

/* Shrink-on-load: the DCT scale keeping the first resize a downscale. */
static dvpp_status plan_shrink(const dvpp_pipeline *p, const dvpp_jpeg_info *ji,
                               uint32_t dw, uint32_t dh, uint8_t *scale,
                               dvpp_err *err)
{
    const dvpp_pipe_resize *r = &p->ops[0].u.resize;
    bool swap = !p->decode.no_orient && ji->orientation >= 5;
    dvpp_resize_geom g;
    uint32_t tw, th;
    dvpp_status st;

    st = dvpp_resize_geometry_rounded(dw, dh, r->mode, r->w, r->h, r->round, &g, err);
    if (st != DVPP_OK)
        return st;
    /* The whole source at the resize's scale. */
    tw = (uint32_t)ceil(dw * g.scale_x - 1e-9);
    th = (uint32_t)ceil(dh * g.scale_y - 1e-9);
    tw = tw < 1 ? 1 : tw > dw ? dw : tw;
    th = th < 1 ? 1 : th > dh ? dh : th;
    *scale = dvpp_jpeg_shrink_scale(ji->width, ji->height, swap ? th : tw,
                                    swap ? tw : th);
    return DVPP_OK;
}

static dvpp_status plan_source(const dvpp_pipeline *p, const dvpp_pipe_source *src,
                               dvpp_pipeline_plan *pl, dvpp_err *err)
{
    uint32_t dw = src->width, dh = src->height;
    dvpp_status st;

    pl->scale_num = 8;
    pl->geom.scale_x = pl->geom.scale_y = 1.0;
    if (src->is_jpeg) {
        bool orient = !p->decode.no_orient;
        dw = orient ? src->jpeg.display_width : src->jpeg.width;
        dh = orient ? src->jpeg.display_height : src->jpeg.height;
        /* Ascend JPEGD has no DCT-domain scaling: shrink-on-load (the
         * default of /v1/image) is then no reduction at all. */
        if (p->decode.shrink_on_load && !dvpp_profile_is_ascend(p->decode.profile)) {
            st = plan_shrink(p, &src->jpeg, dw, dh, &pl->scale_num, err);
            if (st != DVPP_OK)
                return st;
        }
        if (p->decode.scale_denom > 1)
            pl->scale_num = (uint8_t)(8 / p->decode.scale_denom);
    }
    pl->src_w = dvpp_jpeg_scaled_side(dw, pl->scale_num);
    pl->src_h = dvpp_jpeg_scaled_side(dh, pl->scale_num);
    pl->geom.scale_x = (double)pl->src_w / dw;
    pl->geom.scale_y = (double)pl->src_h / dh;
    if (src->is_jpeg && p->decode.has_roi) {
        const dvpp_jpeg_roi *r = &p->decode.roi;
        if ((uint64_t)r->x + r->w > pl->src_w || (uint64_t)r->y + r->h > pl->src_h)
            return dvpp_err_set(err, DVPP_EINVAL, "decode.roi",
                                "ROI %u,%u %ux%u outside %ux%u", r->x, r->y, r->w,
                                r->h, pl->src_w, pl->src_h);
        pl->src_w = r->w, pl->src_h = r->h;
        pl->geom.pad_x = -(double)r->x, pl->geom.pad_y = -(double)r->y;
    }
    return DVPP_OK;
}

/* The image the run starts from, as it will hold it (data NULL): the
 * decoder's output, from the decoder's own geometry function (its checks
 * of format, profile, scale and size refuse here what the decode would
 * refuse: the JPEG decoder's Ascend 310P rounding of odd 4:2:0 sizes too),
 * or the raw input's layout (or its copy into VPC strides). The ops start
 * from its size. */
static dvpp_status plan_source_image(const dvpp_pipeline *p, const dvpp_pipe_source *src,
                                     dvpp_pipeline_plan *pl, dvpp_image *img,
                                     dvpp_err *err)
{
    dvpp_limits def = dvpp_limits_default();
    dvpp_status st;

    if (p->input == DVPP_PIPE_IN_RAW) {
        st = dvpp__pipe_raw_layout(p, img, err);
        if (st == DVPP_OK && dvpp__pipe_raw_copied(p, img))
            st = dvpp_vpc_image_init(img, p->decode.profile, img->format, img->width,
                                     img->height, err);
    } else if (src->is_jpeg) {
        dvpp_jpeg_decode_opts o;
        dvpp__pipe_jpeg_opts(p, pl, &o);
        st = dvpp_jpeg_decode_geometry_info(&src->jpeg, &o,
                                            src->has_limits ? &src->limits : &def, img,
                                            err);
    } else {
        dvpp_png_info info = src->png;
        dvpp_png_decode_opts o;
        if (!info.width) /* a source filled by hand: an 8-bit RGB picture */
            info = (dvpp_png_info){.width = src->width, .height = src->height,
                                   .bit_depth = 8, .color_type = 2, .channels = 3};
        dvpp__pipe_png_opts(p, pl, &o);
        st = dvpp_png_decode_geometry_info(&info, &o, img, err);
    }
    if (st != DVPP_OK)
        return st;
    img->data = NULL;
    pl->src_w = img->width, pl->src_h = img->height;
    return DVPP_OK;
}

/* --- ops -------------------------------------------------------------------------- */

static const char *op_kind_name(dvpp_pipe_op_kind k)
{
    static const char *const names[] = {"crop", "resize", "convert", "border", "flip"};
    return (unsigned)k <= DVPP_PIPE_OP_FLIP ? names[k] : "op";
}

/* Op @i is the last resize, run with the normalisation in one call. */
static bool fused(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl, uint32_t i)
{
    return pl->fuse_resize_norm && i + 1 == p->nops;
}

/* The format the normalisation reads. */
static dvpp_pixfmt norm_format(const dvpp_pipeline *p)
{
    if (p->norm.channels == 1)
        return DVPP_PIXEL_GRAY;
    return p->norm.bgr ? DVPP_PIXEL_BGR : DVPP_PIXEL_RGB;
}

/* The format the result of the ops is delivered in: the output image's,
 * AIPP's input (converted when AIPP does not take it), the
 * normalisation's. @f: the format after the ops. */
static dvpp_pixfmt delivered_format(const dvpp_pipeline *p, dvpp_pixfmt f)
{
    if (p->post == DVPP_PIPE_POST_NORM)
        return norm_format(p);
    if (p->post == DVPP_PIPE_POST_AIPP)
        return dvpp_aipp_accepts(&p->aipp, f) ? f : dvpp__pipe_aipp_pixfmt(&p->aipp);
    return p->out_format == DVPP_PIXEL_UNKNOWN ? f : p->out_format;
}

/* Where resize op @i may paste (a letterbox's picture) into its @f image:
 * on the grid of the VPC call that pastes (the profile's rules, and the
 * chroma of @f), and on the chroma grid of every format the picture is
 * converted to at its place, until the output (only converts follow):
 * so a letterbox into NV12 puts its picture on NV12's 2x2 grid whether it
 * is pasted in NV12, or in RGB and converted (dvppctl's offline resize
 * pastes into the output's format: one rule for both). A crop, border or
 * resize after it moves the picture: the grid ends there. */
static void paste_grid(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl, uint32_t i,
                       dvpp_pixfmt f, dvpp_roi_grid *g)
{
    dvpp_profile prof = p->decode.profile;
    dvpp_roi_grid later;
    uint32_t j;

    if (fused(p, pl, i)) { /* pasted into the normalisation's RGB */
        dvpp_vpc_paste_grid(prof, norm_format(p), g);
        return;
    }
    dvpp_vpc_paste_grid(prof, f, g);
    for (j = i + 1; j < p->nops && p->ops[j].kind == DVPP_PIPE_OP_CONVERT; j++) {
        f = p->ops[j].u.convert;
        dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, f, &later);
        dvpp_roi_grid_join(g, &later);
    }
    if (j == p->nops) {
        dvpp_vpc_paste_grid(DVPP_PROFILE_NATIVE, delivered_format(p, f), &later);
        dvpp_roi_grid_join(g, &later);
    }
}

uint32_t dvpp_pipe_center_offset(uint32_t l, uint32_t c, dvpp_pipe_crop_round r)
{
    uint32_t d = l - c, half = d / 2;

    /* an odd d is a tie at half + 0.5: EVEN takes the even neighbour */
    if (r == DVPP_PIPE_CROP_EVEN && (d & 1u) && (half & 1u))
        half++;
    return half;
}

/* The rectangle crop op @op cuts from a @w x @h image into @c: its own, or
 * a centre crop's, resolved here (refused, not padded, when larger than the
 * image: no pixel outside it is ever read). */
static dvpp_status resolve_crop(const dvpp_pipe_op *op, uint32_t w, uint32_t h,
                                const char *f, dvpp_roi *c, dvpp_err *err)
{
    const dvpp_pipe_center *cc = &op->center;
    uint32_t x, y;

    if (!dvpp_pipe_op_is_center_crop(op)) {
        *c = op->u.crop;
        return DVPP_OK;
    }
    if (cc->w > w || cc->h > h)
        return dvpp_err_set(err, DVPP_EINVAL, f,
                            "%s: centre crop %ux%u larger than the %ux%u image it gets", f,
                            cc->w, cc->h, w, h);
    x = dvpp_pipe_center_offset(w, cc->w, cc->round);
    y = dvpp_pipe_center_offset(h, cc->h, cc->round);
    *c = (dvpp_roi){x, y, x + cc->w - 1, y + cc->h - 1};
    return DVPP_OK;
}

/* The geometry op @i makes of the plan's current image (pl->img_*). */
static dvpp_status plan_op(const dvpp_pipeline *p, uint32_t i,
                           dvpp_pipeline_plan *pl, dvpp_err *err)
{
    const dvpp_pipe_op *op = &p->ops[i];
    dvpp_pipe_geom *g = &pl->geom;
    char f[DVPP_ERR_FIELD_LEN];
    dvpp_status st;

    switch (op->kind) {
    case DVPP_PIPE_OP_CROP: {
        dvpp_roi *c = &pl->crop[i];
        snprintf(f, sizeof(f), "ops[%u].crop", i);
        st = resolve_crop(op, pl->img_w, pl->img_h, f, c, err);
        if (st != DVPP_OK)
            return st;
        if (c->right >= pl->img_w || c->bottom >= pl->img_h)
            return dvpp_err_set(err, DVPP_EINVAL, f, "%s: outside the %ux%u image",
                                f, pl->img_w, pl->img_h);
        pl->img_w = dvpp_roi_width(c);
        pl->img_h = dvpp_roi_height(c);
        g->pad_x -= c->left, g->pad_y -= c->top;
        return DVPP_OK;
    }
    case DVPP_PIPE_OP_RESIZE: {
        const dvpp_pipe_resize *r = &op->u.resize;
        dvpp_resize_geom *rg = &pl->resize[i];
        dvpp_roi_grid cg, pg;
        dvpp_err re;
        st = dvpp_resize_geometry_rounded(pl->img_w, pl->img_h, r->mode, r->w, r->h,
                                          r->round, rg, &re);
        if (st != DVPP_OK) {
            snprintf(f, sizeof(f), "ops[%u].resize", i);
            return dvpp_err_set(err, st, f, "%s: %s", f, re.msg);
        }
        /* The crop and paste on the grids of the calls that make them:
         * the geometry reports where the picture really is. */
        dvpp_vpc_crop_grid(p->decode.profile, pl->img_format, &cg);
        paste_grid(p, pl, i, pl->img_format, &pg);
        dvpp_resize_geometry_snap(rg, &cg, &pg);
        g->scale_x *= rg->scale_x, g->scale_y *= rg->scale_y;
        g->pad_x = g->pad_x * rg->scale_x + rg->pad_x;
        g->pad_y = g->pad_y * rg->scale_y + rg->pad_y;
        pl->img_w = rg->out_w, pl->img_h = rg->out_h;
        return DVPP_OK;
    }
    case DVPP_PIPE_OP_CONVERT:
        pl->img_format = op->u.convert;
        return DVPP_OK;
    case DVPP_PIPE_OP_FLIP:
        /* Size and format stay; the picture is mirrored: x' = w - x on
         * pixel edges, so the scale turns negative and the map still
         * takes an output point back to the source. */
        if (op->u.flip & DVPP_FLIP_HORIZONTAL)
            g->scale_x = -g->scale_x, g->pad_x = (double)pl->img_w - g->pad_x;
        if (op->u.flip & DVPP_FLIP_VERTICAL)
            g->scale_y = -g->scale_y, g->pad_y = (double)pl->img_h - g->pad_y;
        return DVPP_OK;
    default: { /* BORDER */
        uint64_t w = (uint64_t)pl->img_w + op->u.border.left + op->u.border.right;
        uint64_t h = (uint64_t)pl->img_h + op->u.border.top + op->u.border.bottom;
        if (w > UINT32_MAX || h > UINT32_MAX) {
            snprintf(f, sizeof(f), "ops[%u].border", i);
            return dvpp_err_set(err, DVPP_ELIMIT, f, "%s: the image would be %llux%llu", f,
                                (unsigned long long)w, (unsigned long long)h);
        }
        pl->img_w = (uint32_t)w, pl->img_h = (uint32_t)h;
        g->pad_x += op->u.border.left, g->pad_y += op->u.border.top;
        return DVPP_OK;
    }
    }
}

/* The image op @i makes, held to the source's limits (a border or a
 * SHORTER/LONGER resize can make it larger than anything admitted). */
static dvpp_status check_op_size(const dvpp_pipeline *p, uint32_t i,
                                 const dvpp_pipe_source *src,
                                 const dvpp_pipeline_plan *pl, dvpp_err *err)
{
    char f[DVPP_ERR_FIELD_LEN];
    dvpp_err le;

    if (!src->has_limits ||
        dvpp_limits_check_image(&src->limits, pl->img_w, pl->img_h, &le) == DVPP_OK)
        return DVPP_OK;
    snprintf(f, sizeof(f), "ops[%u].%s", i, op_kind_name(p->ops[i].kind));
    return dvpp_err_set(err, DVPP_ELIMIT, f, "%s: %s", f, le.msg);
}

/* A refusal @st/@e of the step @what, for the caller: the step's name as
 * the field and the start of the message, the step's own rule after it. */
static dvpp_status refuse(dvpp_status st, const char *what, const dvpp_err *e, dvpp_err *err)
{
    return dvpp_err_set(err, st, what, "%s: %s", what, e->msg);
}

/* Whether @f, the format op @i gets, is the decode format the planner
 * chose (no explicit decode.format, no raw input, no convert before) where
 * another could be asked for (native: the ascend decoders write 4:2:0). */
static bool chosen_format(const dvpp_pipeline *p, uint32_t i, dvpp_pixfmt f)
{
    if (p->input == DVPP_PIPE_IN_RAW || p->decode.format != DVPP_PIXEL_UNKNOWN ||
        f == DVPP_PIXEL_RGB || dvpp_profile_is_ascend(p->decode.profile))
        return false;
    for (uint32_t j = 0; j < i; j++)
        if (p->ops[j].kind == DVPP_PIPE_OP_CONVERT)
            return false;
    return true;
}

/* The VPC call op @i makes from @in (the run's image before it) into
 * @out (its output, laid out as the worker lays it out), checked as the
 * call will check it. The fused last resize is checked with the post
 * step. */
static dvpp_status check_op_call(const dvpp_pipeline *p, uint32_t i,
                                 const dvpp_pipeline_plan *pl, const dvpp_image *in,
                                 dvpp_image *out, dvpp_err *err)
{
    const dvpp_pipe_op *op = &p->ops[i];
    dvpp_profile prof = p->decode.profile;
    char f[DVPP_ERR_FIELD_LEN];
    dvpp_resize_opts ro;
    dvpp_err e;
    dvpp_status st;

    dvpp_err_clear(&e);
    st = dvpp_vpc_image_init(out, prof, pl->img_format, pl->img_w, pl->img_h, &e);
    if (st == DVPP_OK) {
        switch (op->kind) {
        case DVPP_PIPE_OP_CROP:
            dvpp__pipe_copy_opts(prof, &ro);
            st = dvpp_vpc_check_crop_resize_paste(prof, in, &pl->crop[i], out, NULL, &ro, &e);
            break;
        case DVPP_PIPE_OP_RESIZE:
            st = dvpp_vpc_check_resize_mode(prof, in, &pl->resize[i], out,
                                            &op->u.resize.opts, &e);
            break;
        case DVPP_PIPE_OP_CONVERT:
            st = dvpp_vpc_check_convert(prof, in, out, &e);
            break;
        case DVPP_PIPE_OP_FLIP:
            st = dvpp_vpc_check_flip(prof, in, out, op->u.flip, &e);
            break;
        default:
            st = dvpp_vpc_check_make_border(prof, in, out, &op->u.border, &e);
            break;
        }
    }
    if (st == DVPP_OK)
        return DVPP_OK;
    snprintf(f, sizeof(f), "ops[%u].%s", i, op_kind_name(op->kind));
    if (chosen_format(p, i, in->format)) {
        /* the planner picked the format the op refuses: say how to pick another */
        size_t n = strlen(e.msg);
        snprintf(e.msg + n, sizeof(e.msg) - n,
                 " (%s is the decode format chosen for the output; set decode.format, "
                 "e.g. rgb, to run this op)", dvpp_pixfmt_name(in->format));
    }
    return refuse(st, f, &e, err);
}

/* --- output ---------------------------------------------------------------------- */

static bool jpeg_encodes(dvpp_profile prof, dvpp_pixfmt f)
{
    bool sp420 = f == DVPP_PIXEL_NV12 || f == DVPP_PIXEL_NV21;
    bool pk422 = f == DVPP_PIXEL_YUYV || f == DVPP_PIXEL_UYVY || f == DVPP_PIXEL_YVYU ||
                 f == DVPP_PIXEL_VYUY;

    if (dvpp_profile_is_ascend(prof)) /* JPEGE */
        return sp420 || pk422;
    return sp420 || pk422 || f == DVPP_PIXEL_I420 || f == DVPP_PIXEL_YVU_PLANAR_420 ||
           f == DVPP_PIXEL_RGB || f == DVPP_PIXEL_BGR || f == DVPP_PIXEL_GRAY ||
           f == DVPP_PIXEL_YUV400;
}

/* The output image's format when the pipeline keeps the last one (@f):
 * that, or for an encoded output one the encoder takes (PNG: the RGB
 * family and grey, RGBA where there is alpha; JPEG: 4:2:0, packed 4:2:2,
 * RGB/BGR and grey, else RGB; JPEGE of the ascend profiles: YUV420SP or
 * packed 4:2:2, else NV12): an encoded answer never fails on the format
 * its last op happened to leave. */
static dvpp_pixfmt encodable(const dvpp_pipeline *p, dvpp_pixfmt f)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(f);

    if (p->encoding == DVPP_PIPE_ENC_PNG && !dvpp__pipe_png_format_ok(f))
        return fi && fi->has_alpha ? DVPP_PIXEL_RGBA : DVPP_PIXEL_RGB;
    if (p->encoding == DVPP_PIPE_ENC_JPEG && !jpeg_encodes(p->decode.profile, f))
        return dvpp_profile_is_ascend(p->decode.profile) ? DVPP_PIXEL_NV12 : DVPP_PIXEL_RGB;
    return f;
}

static dvpp_status plan_output(const dvpp_pipeline *p, dvpp_pipeline_plan *pl,
                               dvpp_err *err)
{
    dvpp_planes planes;
    dvpp_image img;
    dvpp_status st;

    if (p->post == DVPP_PIPE_POST_NORM) {
        pl->c = p->norm.channels, pl->h = pl->img_h, pl->w = pl->img_w;
        pl->dtype = p->norm.dtype, pl->layout = p->norm.layout;
        return DVPP_OK;
    }
    if (p->post == DVPP_PIPE_POST_AIPP) {
        dvpp_aipp_op op;
        dvpp_tensor t;
        dvpp__pipe_aipp_op_for(p, pl->img_w, pl->img_h, &op);
        st = dvpp_aipp_tensor(&op, 1, p->aipp_layout, p->aipp_dtype, &t, err);
        if (st != DVPP_OK)
            return st;
        pl->c = t.c, pl->h = t.h, pl->w = t.w;
        pl->dtype = t.dtype, pl->layout = t.layout;
        return DVPP_OK;
    }
    pl->out_format = p->out_format == DVPP_PIXEL_UNKNOWN ? encodable(p, pl->img_format)
                                                          : p->out_format;
    st = dvpp_image_init(&img, pl->out_format, pl->img_w, pl->img_h,
                         p->out_align_w, p->out_align_h, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(&img, &planes, err);
    if (st == DVPP_OK)
        pl->out_bytes = planes.total;
    return st;
}

/* The conversion before the post step or the output (run_aipp,
 * run_image): @cur becomes its @fmt result. */
static dvpp_status check_last_convert(const dvpp_pipeline *p, dvpp_image *cur,
                                      dvpp_pixfmt fmt, const char *what, dvpp_err *err)
{
    dvpp_image conv;
    dvpp_err e;
    dvpp_status st;

    dvpp_err_clear(&e);
    st = dvpp_vpc_image_init(&conv, p->decode.profile, fmt, cur->width, cur->height, &e);
    if (st == DVPP_OK)
        st = dvpp_vpc_check_convert(p->decode.profile, cur, &conv, &e);
    if (st != DVPP_OK)
        return refuse(st, what, &e, err);
    *cur = conv;
    return DVPP_OK;
}

/* The post step's checks on @cur, the image the ops leave (run_post):
 * the normalisation's resize (the fused last one or a 1:1 copy), AIPP's
 * input conversion and the op itself, or the output's conversion and
 * encoding. */
static dvpp_status check_post_call(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl,
                                   dvpp_image *cur, dvpp_err *err)
{
    dvpp_profile prof = p->decode.profile;
    dvpp_err e;
    dvpp_status st;

    dvpp_err_clear(&e);
    if (p->post == DVPP_PIPE_POST_NORM) {
        const dvpp_pipe_op *last = &p->ops[p->nops ? p->nops - 1 : 0];
        char f[DVPP_ERR_FIELD_LEN] = "norm";
        dvpp_resize_opts ro;
        dvpp_resize_geom g;
        if (pl->fuse_resize_norm) {
            snprintf(f, sizeof(f), "ops[%u].resize", p->nops - 1);
            st = dvpp_preprocess_check(prof, cur, &pl->resize[p->nops - 1],
                                       &last->u.resize.opts, &p->norm, &e);
        } else {
            dvpp__pipe_copy_opts(prof, &ro);
            st = dvpp_resize_geometry(cur->width, cur->height, DVPP_RESIZE_STRETCH,
                                      cur->width, cur->height, &g, &e);
            if (st == DVPP_OK)
                st = dvpp_preprocess_check(prof, cur, &g, &ro, &p->norm, &e);
        }
        return st == DVPP_OK ? DVPP_OK : refuse(st, f, &e, err);
    }
    if (p->post == DVPP_PIPE_POST_AIPP) {
        dvpp_aipp_op op;
        dvpp__pipe_aipp_op_for(p, cur->width, cur->height, &op);
        st = dvpp_aipp_accepts(&op, cur->format)
                 ? DVPP_OK
                 : check_last_convert(p, cur, dvpp__pipe_aipp_pixfmt(&op), "aipp", err);
        if (st == DVPP_OK && (st = dvpp_aipp_check(prof, &op, cur, &e)) != DVPP_OK)
            st = refuse(st, "aipp", &e, err);
        return st;
    }
    st = cur->format == pl->out_format
             ? DVPP_OK
             : check_last_convert(p, cur, pl->out_format, "out_format", err);
    if (st == DVPP_OK && p->encoding == DVPP_PIPE_ENC_JPEG) {
        dvpp_jpeg_encode_opts jo;
        dvpp_jpeg_encode_opts_init(&jo);
        jo.quality = p->quality;
        jo.profile = prof;
        if ((st = dvpp_jpeg_encode_check(cur, &jo, &e)) != DVPP_OK)
            st = refuse(st, "encoding", &e, err);
    } else if (st == DVPP_OK && p->encoding == DVPP_PIPE_ENC_PNG) {
        dvpp_png_encode_opts po = {.level = -1};
        if ((st = dvpp_png_encode_check(cur, &po, &e)) != DVPP_OK)
            st = refuse(st, "encoding", &e, err);
    }
    return st;
}

/* --- the memory of the intermediates ------------------------------------------------- */

static size_t add_sat(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t max_sz(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* The bytes of a worker buffer holding @img (the run's worker_image). */
static size_t image_bytes(const dvpp_pipeline *p, const dvpp_image *img)
{
    return dvpp_vpc_buffer_bytes(p->decode.profile, img);
}

/* What the worker's buffers and the contexts' temporaries hold for one
 * run, accumulated along the plan (see run_ops, run_post). */
typedef struct work_acc {
    size_t decode;                  /* buf[0] */
    size_t ping[2];                 /* buf[1], buf[2]: ops 0, 2, ... / 1, 3, ... */
    size_t last;                    /* buf[3]: the conversion before AIPP/output */
    size_t vpc[DVPP_VPC_TEMPS];     /* the VPC context's temporaries */
    size_t aipp;                    /* the AIPP context's intermediates */
} work_acc;

/* Op @i of @p, from @in (its image before the op) into @out. */
static void work_op(const dvpp_pipeline *p, uint32_t i, const dvpp_pipeline_plan *pl,
                    const dvpp_image *in, const dvpp_image *out, work_acc *a)
{
    const dvpp_pipe_op *op = &p->ops[i];

    a->ping[i % 2] = max_sz(a->ping[i % 2], image_bytes(p, out));
    if (op->kind == DVPP_PIPE_OP_CROP) {
        dvpp_resize_opts ro;
        dvpp__pipe_copy_opts(p->decode.profile, &ro);
        dvpp_vpc_temp_bytes(in->format, in->width, in->height, &pl->crop[i], in->format,
                            out->width, out->height, NULL, &ro, a->vpc);
    } else if (op->kind == DVPP_PIPE_OP_RESIZE) {
        dvpp_vpc_temp_bytes(in->format, in->width, in->height, &pl->resize[i].crop,
                            in->format, out->width, out->height, &pl->resize[i].paste,
                            &op->u.resize.opts, a->vpc);
    }
}

/* The post step from @in (the image the ops leave): normalise
 * (dvpp_preprocess_run: the RGB image it reads and the VPC temporaries of
 * its resize), AIPP (its input conversion and intermediates) or the
 * output image's conversion. */
static void work_post(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl,
                      const dvpp_image *in, work_acc *a)
{
    dvpp_profile prof = p->decode.profile;
    dvpp_image img;

    if (p->post == DVPP_PIPE_POST_NORM) {
        const dvpp_pipe_op *op = &p->ops[p->nops ? p->nops - 1 : 0];
        const dvpp_resize_geom *g = pl->fuse_resize_norm ? &pl->resize[p->nops - 1] : NULL;
        uint32_t w = g ? g->out_w : in->width, h = g ? g->out_h : in->height;
        if (dvpp_vpc_image_init(&img, prof, norm_format(p), w, h, NULL) == DVPP_OK)
            a->aipp = max_sz(a->aipp, image_bytes(p, &img));
        dvpp_vpc_temp_bytes(in->format, in->width, in->height, g ? &g->crop : NULL,
                            norm_format(p), w, h, g ? &g->paste : NULL,
                            g ? &op->u.resize.opts : NULL, a->vpc);
    } else if (p->post == DVPP_PIPE_POST_AIPP) {
        dvpp_aipp_op op;
        dvpp__pipe_aipp_op_for(p, in->width, in->height, &op);
        if (!dvpp_aipp_accepts(&op, in->format) &&
            dvpp_vpc_image_init(&img, prof, dvpp__pipe_aipp_pixfmt(&op), in->width,
                                in->height, NULL) == DVPP_OK)
            a->last = image_bytes(p, &img);
        a->aipp = max_sz(a->aipp, dvpp_aipp_temp_bytes(&op, in->width, in->height));
    } else if (in->format != pl->out_format &&
               dvpp_vpc_image_init(&img, prof, pl->out_format, in->width, in->height,
                                   NULL) == DVPP_OK) {
        a->last = image_bytes(p, &img);
    }
}

static size_t work_total(const work_acc *a)
{
    size_t t = add_sat(add_sat(a->decode, a->ping[0]), add_sat(a->ping[1], a->last));

    for (int k = 0; k < DVPP_VPC_TEMPS; k++)
        t = add_sat(t, a->vpc[k]);
    return add_sat(t, a->aipp);
}

/* --- fusions ---------------------------------------------------------------------- */

/* DVPP_NO_FUSE=1: run every op as written (the reference the fused runs
 * are tested against). */
static bool fusion_off(void)
{
    const char *v = getenv("DVPP_NO_FUSE");

    return v && *v && strcmp(v, "0") != 0;
}

/* Resize op @i, in format @f, and the crop after it as one windowed
 * resize: a STRETCH (its geometry resizes the whole image into the whole
 * output, no bars) of a packed picture dvpp_vpc_resize_window takes, the
 * crop run by run_ops too. */
static bool window_fusable(const dvpp_pipeline *p, const dvpp_pipeline_plan *pl,
                           uint32_t i, uint32_t nrun, dvpp_pixfmt f, uint32_t in_w,
                           uint32_t in_h)
{
    const dvpp_pipe_resize *r = &p->ops[i].u.resize;
    const dvpp_resize_geom *g = &pl->resize[i];

    return i + 1 < nrun && p->ops[i].kind == DVPP_PIPE_OP_RESIZE &&
           p->ops[i + 1].kind == DVPP_PIPE_OP_CROP && r->mode == DVPP_RESIZE_STRETCH &&
           r->opts.parity != DVPP_PARITY_ASCEND && dvpp_vpc_window_format_ok(f, &r->opts) &&
           g->crop.left == 0 && g->crop.top == 0 && g->crop.right + 1 == in_w &&
           g->crop.bottom + 1 == in_h && g->paste.left == 0 && g->paste.top == 0 &&
           g->paste.right + 1 == g->out_w && g->paste.bottom + 1 == g->out_h;
}

/* Which ops run fused (see dvpp_pipeline_plan.window_resize): @nrun ops
 * run in run_ops. The decode window needs a JPEG decoded whole at full
 * scale in its stored orientation (no ROI of the client's, no
 * shrink-on-load, orientation ignored or 1) into a packed format. */
static void plan_fusions(const dvpp_pipeline *p, const dvpp_pipe_source *src,
                         dvpp_pipeline_plan *pl, uint32_t nrun)
{
    dvpp_pixfmt f = pl->decode_format;
    uint32_t w = pl->src_w, h = pl->src_h;
    dvpp_resize_opts copy;

    /* a watch's image hook sees every op's output, which the fusions skip */
    if (p->decode.profile != DVPP_PROFILE_NATIVE || fusion_off() ||
        (p->watch && p->watch->image))
        return;
    for (uint32_t i = 0; i < nrun; i++) {
        const dvpp_pipe_op *op = &p->ops[i];
        if (window_fusable(p, pl, i, nrun, f, w, h)) {
            pl->window_resize[i] = true;
            i++; /* the crop: its size is the window's */
            w = dvpp_roi_width(&pl->crop[i]), h = dvpp_roi_height(&pl->crop[i]);
            continue;
        }
        /* the size op i leaves, for the next one's check */
        if (op->kind == DVPP_PIPE_OP_CONVERT)
            f = op->u.convert;
        else if (op->kind == DVPP_PIPE_OP_CROP)
            w = dvpp_roi_width(&pl->crop[i]), h = dvpp_roi_height(&pl->crop[i]);
        else if (op->kind == DVPP_PIPE_OP_RESIZE)
            w = pl->resize[i].out_w, h = pl->resize[i].out_h;
        else if (op->kind == DVPP_PIPE_OP_BORDER)
            w += op->u.border.left + op->u.border.right,
            h += op->u.border.top + op->u.border.bottom;
    }
    dvpp__pipe_copy_opts(p->decode.profile, &copy);
    pl->decode_window = src->is_jpeg && p->input != DVPP_PIPE_IN_RAW && nrun > 0 &&
                        !p->decode.has_roi && pl->scale_num == 8 &&
                        (p->decode.no_orient || src->jpeg.orientation <= 1) &&
                        dvpp_vpc_window_format_ok(pl->decode_format, &copy) &&
                        (p->ops[0].kind == DVPP_PIPE_OP_CROP || pl->window_resize[0]);
}

/* --- the plan ---------------------------------------------------------------------- */

/* The plan of @p for @src with the decoder writing @decode_format. */
static dvpp_status plan_with(const dvpp_pipeline *p, const dvpp_pipe_source *src,
                             dvpp_pixfmt decode_format, dvpp_pipeline_plan *pl,
                             dvpp_err *err)
{
    dvpp_image cur, next;
    uint32_t nrun;
    work_acc a;
    dvpp_status st;

    memset(pl, 0, sizeof(*pl));
    memset(&a, 0, sizeof(a));
    pl->decode_format = decode_format;
    st = plan_source(p, src, pl, err);
    if (st == DVPP_OK)
        st = plan_source_image(p, src, pl, &cur, err);
    if (st != DVPP_OK)
        return st;
    /* the decoded image, or the raw input's copy (read in place if not) */
    if (p->input != DVPP_PIPE_IN_RAW || dvpp__pipe_raw_copied(p, &cur))
        a.decode = image_bytes(p, &cur);
    pl->img_w = pl->src_w, pl->img_h = pl->src_h;
    pl->img_format = pl->decode_format;
    pl->fuse_resize_norm = p->post == DVPP_PIPE_POST_NORM && p->nops > 0 &&
                           p->ops[p->nops - 1].kind == DVPP_PIPE_OP_RESIZE;
    nrun = pl->fuse_resize_norm ? p->nops - 1 : p->nops; /* ops run_ops runs */
    /* cur: the image the next op (or the fused resize, or the post step)
     * starts from, as the run holds it */
    for (uint32_t i = 0; i < p->nops; i++) {
        st = plan_op(p, i, pl, err);
        if (st == DVPP_OK)
            st = check_op_size(p, i, src, pl, err);
        if (st == DVPP_OK && i < nrun)
            st = check_op_call(p, i, pl, &cur, &next, err);
        if (st != DVPP_OK)
            return st;
        if (i < nrun) {
            work_op(p, i, pl, &cur, &next, &a);
            cur = next;
        }
    }
    plan_fusions(p, src, pl, nrun);
    st = plan_output(p, pl, err);
    if (st != DVPP_OK)
        return st;
    work_post(p, pl, &cur, &a);
    st = check_post_call(p, pl, &cur, err);
    pl->work_bytes = work_total(&a);
    return st;
}

dvpp_status dvpp_pipeline_plan_make(const dvpp_pipeline *p,
                                    const dvpp_pipe_source *src,
                                    dvpp_pipeline_plan *pl, dvpp_err *err)
{
    return plan_with(p, src, plan_decode_format(p, src->is_jpeg), pl, err);
}
