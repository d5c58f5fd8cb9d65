/* AIPP execution: swap, crop, CSC and 4:4:4 expansion into u8 pixels, then
 * the fused DTC/layout/dtype kernel (dvpp_norm), then padding. */
#include <string.h>

#include "dvpp_aipp.h"
#include "dvpp_mem.h"

void dvpp_aipp_ctx_init(dvpp_aipp_ctx *c)
{
    memset(c, 0, sizeof(*c));
    dvpp_vpc_ctx_init(&c->vpc, DVPP_PROFILE_NATIVE);
}

void dvpp_aipp_ctx_fini(dvpp_aipp_ctx *c)
{
    dvpp_vpc_ctx_fini(&c->vpc);
    for (int i = 0; i < 2; i++)
        dvpp_image_free(&c->tmp[i]);
}

size_t dvpp_aipp_ctx_trim(dvpp_aipp_ctx *c, size_t keep)
{
    return dvpp_images_trim(c->tmp, (int)(sizeof(c->tmp) / sizeof(c->tmp[0])), keep) +
           dvpp_vpc_ctx_trim(&c->vpc, keep);
}

static bool four_byte(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_ARGB || f == DVPP_PIXEL_ABGR || f == DVPP_PIXEL_RGBA ||
           f == DVPP_PIXEL_BGRA;
}

bool dvpp_aipp_accepts(const dvpp_aipp_op *op, dvpp_pixfmt f)
{
    switch (op->input_format) {
    case DVPP_AIPP_YUV420SP_U8:
        return f == DVPP_PIXEL_NV12 || f == DVPP_PIXEL_NV21;
    case DVPP_AIPP_YUV422SP_U8:
        return f == DVPP_PIXEL_YUV422SP || f == DVPP_PIXEL_YVU422SP;
    case DVPP_AIPP_YUYV_U8:
        return f == DVPP_PIXEL_YUYV;
    case DVPP_AIPP_RGB888_U8:
        return f == DVPP_PIXEL_RGB || f == DVPP_PIXEL_BGR;
    case DVPP_AIPP_YUV400_U8:
        return f == DVPP_PIXEL_YUV400 || f == DVPP_PIXEL_GRAY;
    case DVPP_AIPP_XRGB8888_U8:
    case DVPP_AIPP_ARGB8888_U8:
    case DVPP_AIPP_AYUV444_U8:
        return four_byte(f);
    default:
        return false;
    }
}

static bool input_is_yuv(dvpp_aipp_format f)
{
    return f == DVPP_AIPP_YUV420SP_U8 || f == DVPP_AIPP_YUV422SP_U8 ||
           f == DVPP_AIPP_YUYV_U8 || f == DVPP_AIPP_AYUV444_U8 ||
           f == DVPP_AIPP_YUV400_U8;
}

static bool input_has_x(dvpp_aipp_format f)
{
    return f == DVPP_AIPP_XRGB8888_U8 || f == DVPP_AIPP_ARGB8888_U8 ||
           f == DVPP_AIPP_AYUV444_U8;
}

unsigned dvpp_aipp_channels(const dvpp_aipp_op *op)
{
    if (op->input_format == DVPP_AIPP_YUV400_U8)
        return 1;
    if (input_has_x(op->input_format) && !op->csc_switch)
        return 4;
    return 3;
}

dvpp_status dvpp_aipp_tensor(const dvpp_aipp_op *op, uint32_t n,
                             dvpp_layout layout, dvpp_dtype dtype,
                             dvpp_tensor *t, dvpp_err *err)
{
    uint32_t sw = op->src_image_size_w, sh = op->src_image_size_h;
    dvpp_aipp_geom g;

    dvpp_aipp_geometry(op, sw, sh, &g);
    if (op->crop && sw && sh &&
        (!g.crop_w || !g.crop_h || g.x0 + g.crop_w > sw || g.y0 + g.crop_h > sh))
        return dvpp_err_set(err, DVPP_EINVAL, "crop",
                            "crop %u,%u %ux%u leaves the %ux%u source", g.x0, g.y0,
                            op->crop_size_w, op->crop_size_h, sw, sh);
    if (!g.out_w || !g.out_h)
        return dvpp_err_set(err, DVPP_EINVAL, "src_image_size",
                            "the op's output size is unknown: set "
                            "src_image_size_w/h or crop sizes");
    return dvpp_tensor_init(t, dtype, layout, n, dvpp_aipp_channels(op), g.out_h, g.out_w,
                            err);
}

/* --- stage 1: swap, crop, 4:4:4, CSC into u8 pixels ------------------------- */

/* Channels (Y, U, V) or (R, G, B[, X]) of pixel (x, y) of @src read as the
 * op's input format, with rbuv/ax swaps applied. Returns the count. */
static unsigned read_pixel(const dvpp_aipp_op *op, const dvpp_image *src,
                           const dvpp_planes *pl, uint32_t x, uint32_t y,
                           uint8_t px[4])
{
    const uint8_t *r0 = dvpp_image_row(src, pl, 0, y);
    unsigned n = 3;
    uint8_t t;

    switch (op->input_format) {
    case DVPP_AIPP_YUV420SP_U8:
    case DVPP_AIPP_YUV422SP_U8: {
        /* U first in memory, as YUV420SP_U8 means NV12. */
        uint32_t cy = op->input_format == DVPP_AIPP_YUV420SP_U8 ? y / 2 : y;
        const uint8_t *c = dvpp_image_row(src, pl, 1, cy) + 2 * (x / 2);
        px[0] = r0[x], px[1] = c[0], px[2] = c[1];
        break;
    }
    case DVPP_AIPP_YUYV_U8: {
        const uint8_t *q = r0 + 4 * (x / 2);
        px[0] = q[2 * (x & 1)], px[1] = q[1], px[2] = q[3];
        break;
    }
    case DVPP_AIPP_YUV400_U8:
        px[0] = r0[x];
        return 1;
    case DVPP_AIPP_RGB888_U8:
        memcpy(px, r0 + 3 * (size_t)x, 3);
        break;
    default: /* XRGB / ARGB / AYUV: X first in memory */
        memcpy(px, r0 + 4 * (size_t)x, 4);
        n = 4;
        break;
    }
    /* rbuv swap: R<->B or U<->V, the colour channels 0 and 2 (or 1 and 3
     * after the leading X). */
    if (op->rbuv_swap_switch) {
        unsigned a = n == 4 ? 1 : 0, b = n == 4 ? 3 : 2;
        if (input_is_yuv(op->input_format) && n == 3)
            a = 1, b = 2;
        else if (input_is_yuv(op->input_format))
            a = 2, b = 3;
        t = px[a], px[a] = px[b], px[b] = t;
    }
    if (n == 4 && op->ax_swap_switch) { /* XRGB -> RGBX */
        t = px[0];
        memmove(px, px + 1, 3);
        px[3] = t;
    }
    return n;
}

/* The CSC's ">> 8". The reference leaves its rounding undocumented; we
 * round to nearest (floor(v/256 + 1/2)), which keeps every standard matrix
 * within 1 of its float formula (tested over a sampled cube); floor does
 * not. Written without >> on negative ints (implementation-defined). */
static inline int32_t shr8(int32_t v)
{
    v += 128;
    return v >= 0 ? v >> 8 : -((-v + 255) >> 8);
}

static inline uint8_t clip_u8(int32_t v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* The colour triple of a pixel: for 4-byte inputs the channels after X. */
static const uint8_t *colour(const dvpp_aipp_op *op, const uint8_t px[4],
                             unsigned n)
{
    if (n == 4 && !op->ax_swap_switch)
        return px + 1;
    return px;
}

static void csc_pixel(const dvpp_aipp_op *op, const uint8_t in[3], uint8_t out[3])
{
    for (int k = 0; k < 3; k++) {
        int32_t s = 0;
        if (input_is_yuv(op->input_format)) {
            for (int j = 0; j < 3; j++)
                s += op->matrix[k][j] * ((int32_t)in[j] - op->input_bias[j]);
            out[k] = clip_u8(shr8(s));
        } else {
            for (int j = 0; j < 3; j++)
                s += op->matrix[k][j] * (int32_t)in[j];
            out[k] = clip_u8(shr8(s) + op->output_bias[k]);
        }
    }
}

/* Context temp @i with @geo's layout (its memory reused). */
static dvpp_status tmp_image(dvpp_aipp_ctx *c, int i, dvpp_image geo, dvpp_image **out,
                             dvpp_err *err)
{
    uint32_t w = geo.width, h = geo.height;
    dvpp_planes pl;
    dvpp_status st = dvpp_image_planes(&geo, &pl, err);

    if (st != DVPP_OK)
        return st;
    if (!c->tmp[i].data || c->tmp[i].size < pl.total) {
        dvpp_image_free(&c->tmp[i]);
        geo.data = dvpp_malloc(pl.total);
        if (!geo.data)
            return dvpp_err_set(err, DVPP_ENOMEM, "size",
                                "cannot allocate a %ux%u AIPP intermediate", w, h);
        geo.size = pl.total;
    } else {
        geo.data = c->tmp[i].data;
        geo.size = c->tmp[i].size;
    }
    c->tmp[i] = geo;
    *out = &c->tmp[i];
    return DVPP_OK;
}

/* A tight u8 image of @w x @h pixels with @ch channels in context temp @i. */
static dvpp_status tmp_pixels(dvpp_aipp_ctx *c, int i, unsigned ch, uint32_t w,
                              uint32_t h, dvpp_image **out, dvpp_err *err)
{
    static const dvpp_pixfmt by_ch[5] = {DVPP_PIXEL_UNKNOWN, DVPP_PIXEL_GRAY,
                                         DVPP_PIXEL_UNKNOWN, DVPP_PIXEL_RGB,
                                         DVPP_PIXEL_RGBA};
    dvpp_image geo;
    dvpp_status st = dvpp_image_init(&geo, by_ch[ch], w, h, 1, 1, err);

    return st == DVPP_OK ? tmp_image(c, i, geo, out, err) : st;
}

static dvpp_status stage_pixels(dvpp_aipp_ctx *c, const dvpp_aipp_op *op,
                                const dvpp_image *src, uint32_t x0, uint32_t y0,
                                uint32_t w, uint32_t h, dvpp_image **out,
                                dvpp_err *err)
{
    unsigned ch = dvpp_aipp_channels(op);
    dvpp_planes pl;
    dvpp_image *d;
    dvpp_status st;

    st = tmp_pixels(c, 0, ch, w, h, &d, err);
    if (st != DVPP_OK)
        return st;
    dvpp_image_planes(src, &pl, NULL);
    for (uint32_t y = 0; y < h; y++) {
        uint8_t *row = d->data + (size_t)y * d->width_stride;
        for (uint32_t x = 0; x < w; x++, row += ch) {
            uint8_t px[4];
            unsigned n = read_pixel(op, src, &pl, x0 + x, y0 + y, px);
            if (op->csc_switch && n >= 3)
                csc_pixel(op, colour(op, px, n), row);
            else
                memcpy(row, px, ch);
        }
    }
    *out = d;
    return DVPP_OK;
}

/* --- stages 2-4: resize, DTC + layout, padding --------------------------------- */

/* AIPP's resize ratio rule of the ascend profiles (reference §7: [1/16,
 * 16] per axis). */
static dvpp_status check_ratio(uint32_t from, uint32_t to, const char *field, dvpp_err *err)
{
    if ((uint64_t)to * 16 < from || to > (uint64_t)from * 16)
        return dvpp_err_set(err, DVPP_EPROFILE, field,
                            "AIPP resize %u -> %u: the ratio should be between "
                            "[1/16, 16]", from, to);
    return DVPP_OK;
}

/* The op's checks against @src; @g its geometry on @src. */
static dvpp_status check_image(dvpp_profile prof, const dvpp_aipp_op *op,
                               const dvpp_image *src, dvpp_aipp_geom *g, dvpp_err *err)
{
    dvpp_status st = DVPP_OK;

    if (op->mode != DVPP_AIPP_STATIC)
        return dvpp_err_set(err, DVPP_EINVAL, "aipp_mode",
                            "a dynamic op runs with its per-image parameters: "
                            "use dvpp_aipp_dynamic_op first");
    if (!dvpp_aipp_accepts(op, src->format))
        return dvpp_err_set(err, DVPP_EFORMAT, "input_format",
                            "input_format %s does not take %s pixels",
                            dvpp_aipp_format_name(op->input_format),
                            dvpp_pixfmt_name(src->format));
    if ((op->src_image_size_w && op->src_image_size_w != src->width) ||
        (op->src_image_size_h && op->src_image_size_h != src->height))
        return dvpp_err_set(err, DVPP_EINVAL, "src_image_size",
                            "image is %ux%u, the config says %ux%u", src->width,
                            src->height, op->src_image_size_w,
                            op->src_image_size_h);
    if (op->csc_switch && op->input_format == DVPP_AIPP_YUV400_U8)
        return dvpp_err_set(err, DVPP_EINVAL, "csc_switch",
                            "YUV400_U8 input cannot use CSC");
    dvpp_aipp_geometry(op, src->width, src->height, g);
    if (!g->crop_w || !g->crop_h || g->x0 + g->crop_w > src->width ||
        g->y0 + g->crop_h > src->height)
        return dvpp_err_set(err, DVPP_EINVAL, "crop",
                            "crop %u,%u %ux%u leaves the %ux%u image", g->x0, g->y0,
                            op->crop_size_w, op->crop_size_h, src->width, src->height);
    if (dvpp_profile_is_ascend(prof) && (g->resize_w != g->crop_w || g->resize_h != g->crop_h)) {
        st = check_ratio(g->crop_w, g->resize_w, "resize_output_w", err);
        if (st == DVPP_OK)
            st = check_ratio(g->crop_h, g->resize_h, "resize_output_h", err);
    }
    return st;
}

dvpp_status dvpp_aipp_check(dvpp_profile prof, const dvpp_aipp_op *op,
                            const dvpp_image *src, dvpp_err *err)
{
    dvpp_aipp_geom g;

    return check_image(prof, op, src, &g, err);
}

/* The op's checks against @src and @t; @g its geometry on @src. */
static dvpp_status check_run(dvpp_profile prof, const dvpp_aipp_op *op,
                             const dvpp_image *src, const dvpp_tensor *t, uint32_t n,
                             dvpp_aipp_geom *g, dvpp_err *err)
{
    dvpp_status st = check_image(prof, op, src, g, err);

    if (st != DVPP_OK)
        return st;
    if (t->w != g->out_w || t->h != g->out_h || t->c != dvpp_aipp_channels(op) ||
        n >= t->n)
        return dvpp_err_set(err, DVPP_EINVAL, "tensor",
                            "tensor image %u of %ux%ux%u does not fit the op's "
                            "%ux%ux%u output", n, t->c, t->h, t->w,
                            dvpp_aipp_channels(op), g->out_h, g->out_w);
    return DVPP_OK;
}

/* Stage 2, on the u8 pixels of stage 1: AIPP's own resize (the AI Core's,
 * not a VPC call: no VPC stride or format rule applies), bilinear with
 * OpenCV's parity under every profile (the hardware's filter is not
 * documented); the ascend profiles' ratio rule is checked first
 * (check_image). */
static dvpp_status resize_pixels(dvpp_aipp_ctx *c, unsigned ch, const dvpp_image *pix,
                                 uint32_t w, uint32_t h, dvpp_image **out, dvpp_err *err)
{
    const dvpp_resize_plan *plan;
    dvpp_resize_opts ro;
    dvpp_image *rs;
    dvpp_status st;

    dvpp_resize_opts_init(&ro);
    st = tmp_pixels(c, 1, ch, w, h, &rs, err);
    if (st == DVPP_OK)
        st = dvpp_vpc_plan(&c->vpc, &ro, pix->width, pix->height, w, h, ch, &plan, err);
    if (st == DVPP_OK)
        st = dvpp_resize_run(plan, pix->data, pix->width_stride, rs->data, rs->width_stride,
                             &c->vpc.scratch, err);
    if (st == DVPP_OK)
        *out = rs;
    return st;
}

static void fill_norm_params(const dvpp_aipp_op *op, unsigned ch,
                             dvpp_norm_params *p)
{
    memset(p, 0, sizeof(*p));
    p->kind = DVPP_NORM_AIPP;
    p->channels = ch;
    p->src_channels = ch;
    for (unsigned i = 0; i < ch; i++) {
        p->src_index[i] = (uint8_t)i;
        p->mean_chn[i] = op->mean_chn[i];
        p->min_chn[i] = op->min_chn[i];
        p->var_reci_chn[i] = op->var_reci_chn[i];
    }
}

/* Padding around the image block, in the output's domain. */
static dvpp_status pad_tensor(const dvpp_aipp_op *op, const dvpp_tensor *t,
                              uint32_t n, uint32_t iw, uint32_t ih, dvpp_err *err)
{
    double v[DVPP_NORM_MAX_CH];
    uint32_t l = op->left_padding_size, r = op->right_padding_size;
    uint32_t top = op->top_padding_size, b = op->bottom_padding_size;
    dvpp_status st = DVPP_OK;

    for (int i = 0; i < DVPP_NORM_MAX_CH; i++)
        v[i] = op->padding_value;
    if (top)
        st = dvpp_norm_fill(t, n, 0, 0, t->w, top, v, err);
    if (st == DVPP_OK && b)
        st = dvpp_norm_fill(t, n, top + ih, 0, t->w, b, v, err);
    if (st == DVPP_OK && l)
        st = dvpp_norm_fill(t, n, top, 0, l, ih, v, err);
    if (st == DVPP_OK && r)
        st = dvpp_norm_fill(t, n, top, l + iw, r, ih, v, err);
    return st;
}

size_t dvpp_aipp_temp_bytes(const dvpp_aipp_op *op, uint32_t w, uint32_t h)
{
    unsigned ch = dvpp_aipp_channels(op);
    dvpp_aipp_geom g;
    size_t bytes;

    dvpp_aipp_geometry(op, w, h, &g);
    bytes = (size_t)g.crop_w * g.crop_h * ch; /* both <= 4096 or the image's */
    if (g.resize_w != g.crop_w || g.resize_h != g.crop_h)
        bytes += (size_t)g.resize_w * g.resize_h * ch;
    return bytes;
}

dvpp_status dvpp_aipp_run(dvpp_aipp_ctx *c, const dvpp_aipp_op *op,
                          const dvpp_image *src, const dvpp_tensor *t,
                          uint32_t n, dvpp_err *err)
{
    unsigned ch = dvpp_aipp_channels(op);
    dvpp_norm_params np;
    dvpp_aipp_geom g;
    dvpp_image *pix;
    dvpp_status st;

    st = check_run(c->vpc.profile, op, src, t, n, &g, err);
    if (st == DVPP_OK)
        st = stage_pixels(c, op, src, g.x0, g.y0, g.crop_w, g.crop_h, &pix, err);
    if (st == DVPP_OK && (g.resize_w != g.crop_w || g.resize_h != g.crop_h))
        st = resize_pixels(c, ch, pix, g.resize_w, g.resize_h, &pix, err);
    if (st != DVPP_OK)
        return st;
    fill_norm_params(op, ch, &np);
    st = dvpp_norm_plan_init(&c->norm, &np, t->dtype, t->layout, err);
    if (st == DVPP_OK)
        st = dvpp_norm_run(&c->norm, pix->data, pix->width_stride, pix->width,
                           pix->height, t, n, op->top_padding_size,
                           op->left_padding_size, err);
    if (st == DVPP_OK)
        st = pad_tensor(op, t, n, pix->width, pix->height, err);
    return st;
}

/* --- the simple spec ------------------------------------------------------------ */

/* One pass for the common chain: every resized row is normalised into the
 * tensor as soon as the resize produces it (no resized image is written),
 * and a 4:2:0 YUV source is converted only on the rows the resize reads.
 * Same bytes as resizing into an image and normalising it. */
typedef struct fused_pre {
    const dvpp_norm_plan *norm;
    const dvpp_tensor *t;
    uint32_t n, w;
    dvpp_status st;
    dvpp_err err;
    dvpp_csc_rows rows;   /* YUV sources */
    uint32_t x0, y0, cw;
} fused_pre;

static void fused_sink(void *ctx, uint32_t y, const uint8_t *row)
{
    fused_pre *f = ctx;

    if (f->st == DVPP_OK)
        f->st = dvpp_norm_run(f->norm, row, (size_t)f->w * 3, f->w, 1, f->t, f->n,
                              y, 0, &f->err);
}

static const uint8_t *fused_source(void *ctx, uint32_t y, uint8_t *buf)
{
    const fused_pre *f = ctx;

    dvpp_csc_rows_get(&f->rows, f->x0, f->y0 + y, f->cw, buf);
    return buf;
}

static bool yuv420(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_NV12 || f == DVPP_PIXEL_NV21 || f == DVPP_PIXEL_I420 ||
           f == DVPP_PIXEL_YVU_PLANAR_420;
}

/* *done false: the chain does not fit (letterbox padding, another source
 * format, an ascend profile, a plan that cannot stream) and the caller
 * takes the two-step path. */
static dvpp_status try_fused(dvpp_aipp_ctx *c, const dvpp_image *src,
                             const dvpp_resize_geom *g, const dvpp_resize_opts *o,
                             dvpp_pixfmt want, const dvpp_tensor *t, uint32_t n,
                             bool *done, dvpp_err *err)
{
    const dvpp_roi *cr = &g->crop;
    uint32_t cw = dvpp_roi_width(cr), ch = dvpp_roi_height(cr);
    const dvpp_resize_plan *plan;
    fused_pre f;
    dvpp_status st;

    *done = false;
    if (dvpp_profile_is_ascend(c->vpc.profile) || g->paste.left || g->paste.top ||
        g->paste.right + 1 != g->out_w || g->paste.bottom + 1 != g->out_h ||
        (src->format != want && !yuv420(src->format)) ||
        (yuv420(src->format) && (cr->left % 2 || cr->top % 2)))
        return DVPP_OK;
    st = dvpp_vpc_plan(&c->vpc, o, cw, ch, g->out_w, g->out_h, 3, &plan, err);
    if (st != DVPP_OK)
        return st;
    memset(&f, 0, sizeof(f));
    f.norm = &c->norm, f.t = t, f.n = n, f.w = g->out_w;
    if (src->format == want) {
        *done = true;
        st = dvpp_resize_run_sink(plan, src->data + (size_t)cr->top * src->width_stride +
                                            (size_t)cr->left * 3,
                                  src->width_stride, NULL, NULL, fused_sink, &f,
                                  &c->vpc.scratch, err);
    } else {
        if (!dvpp_resize_plan_streams(plan))
            return DVPP_OK;
        st = dvpp_csc_rows_init(&f.rows, src, want, &c->vpc.csc, err);
        if (st != DVPP_OK)
            return st;
        f.x0 = cr->left, f.y0 = cr->top, f.cw = cw;
        *done = true;
        st = dvpp_resize_run_sink(plan, NULL, 0, fused_source, &f, fused_sink, &f,
                                  &c->vpc.scratch, err);
    }
    if (st == DVPP_OK && f.st != DVPP_OK) {
        st = f.st;
        if (err)
            *err = f.err;
    }
    return st;
}

static dvpp_status norm_plan(dvpp_aipp_ctx *c, const dvpp_norm_spec *spec,
                             const dvpp_tensor *t, dvpp_err *err);

/* The pixels a normalise spec reads: RGB or BGR, or grey for one channel. */
static dvpp_pixfmt norm_format(const dvpp_norm_spec *spec)
{
    if (spec->channels == 1)
        return DVPP_PIXEL_GRAY;
    return spec->bgr ? DVPP_PIXEL_BGR : DVPP_PIXEL_RGB;
}

dvpp_status dvpp_preprocess_run(dvpp_aipp_ctx *c, const dvpp_image *src,
                                const dvpp_resize_geom *g,
                                const dvpp_resize_opts *o, const uint8_t pad[3],
                                const dvpp_norm_spec *spec, const dvpp_tensor *t,
                                uint32_t n, dvpp_err *err)
{
    dvpp_pixfmt want = norm_format(spec);
    dvpp_image *rgb, geo;
    bool done = false;
    dvpp_status st;

    if (t->c != spec->channels || t->w != g->out_w || t->h != g->out_h || n >= t->n)
        return dvpp_err_set(err, DVPP_EINVAL, "tensor",
                            "tensor %ux%ux%u does not hold a %ux%ux%u image %u",
                            t->c, t->h, t->w, spec->channels, g->out_h, g->out_w, n);
    st = norm_plan(c, spec, t, err);
    /* the fused path streams 3-channel rows; a grey tensor resizes first */
    if (st == DVPP_OK && !c->no_fuse && spec->channels == 3)
        st = try_fused(c, src, g, o, want, t, n, &done, err);
    if (st != DVPP_OK || done)
        return st;
    st = dvpp_vpc_image_init(&geo, c->vpc.profile, want, g->out_w, g->out_h, err);
    if (st == DVPP_OK)
        st = tmp_image(c, 1, geo, &rgb, err);
    if (st != DVPP_OK)
        return st;
    st = dvpp_vpc_resize_mode(&c->vpc, src, g, rgb, pad, o, err);
    if (st != DVPP_OK)
        return st;
    return dvpp_norm_run(&c->norm, rgb->data, rgb->width_stride, rgb->width,
                         rgb->height, t, n, 0, 0, err);
}

dvpp_status dvpp_preprocess_check(dvpp_profile prof, const dvpp_image *src,
                                  const dvpp_resize_geom *g, const dvpp_resize_opts *o,
                                  const dvpp_norm_spec *spec, dvpp_err *err)
{
    dvpp_image rgb;
    dvpp_status st;

    /* the two-step path's image: its checks cover the fused path's */
    if (spec->channels != 1 && spec->channels != 3)
        return dvpp_err_set(err, DVPP_EINVAL, "normalize.channels",
                            "%u channels (1 or 3)", spec->channels);
    st = dvpp_vpc_image_init(&rgb, prof, norm_format(spec), g->out_w, g->out_h, err);
    return st == DVPP_OK ? dvpp_vpc_check_resize_mode(prof, src, g, &rgb, o, err) : st;
}

/* The AFFINE plan of @spec into c->norm. */
static dvpp_status norm_plan(dvpp_aipp_ctx *c, const dvpp_norm_spec *spec,
                             const dvpp_tensor *t, dvpp_err *err)
{
    dvpp_norm_params np;

    memset(&np, 0, sizeof(np));
    np.kind = DVPP_NORM_AFFINE;
    np.channels = np.src_channels = spec->channels;
    np.div = spec->scale;
    /* mean/std are per tensor channel, in the tensor's order (as
     * cv2.dnn.blobFromImage takes them after swapRB). */
    for (unsigned i = 0; i < spec->channels; i++) {
        np.src_index[i] = (uint8_t)i;
        np.mean[i] = spec->mean[i];
        np.std[i] = spec->std[i];
    }
    return dvpp_norm_plan_init(&c->norm, &np, t->dtype, t->layout, err);
}
