/* VPC operations: crop-resize-paste and friends over whole images, built
 * from the resize engine (dvpp_resize), colour conversion (dvpp_csc) and
 * border fill (dvpp_border). See dvpp_vpc.h for the order of work. */
#include <string.h>
#include <strings.h>

#include "dvpp_mem.h"
#include "dvpp_vpc.h"
#include "vpc_int.h"

void dvpp_resize_opts_init(dvpp_resize_opts *o)
{
    o->parity = DVPP_PARITY_CV2;
    o->interp = DVPP_INTERP_BILINEAR;
    o->ascend_mode = 1;
}

void dvpp_vpc_ctx_init(dvpp_vpc_ctx *c, dvpp_profile profile)
{
    memset(c, 0, sizeof(*c));
    c->profile = profile;
    dvpp_csc_init(&c->csc);
    if (dvpp_profile_is_ascend(profile)) {
        c->csc.full_range = true; /* acldvppCscMatrix default BT601_WIDE */
        c->csc.alpha = 0;         /* VPC writes alpha 0 */
    }
    c->max_batch_rois = 4096;
    dvpp_scratch_init(&c->scratch);
}

void dvpp_vpc_ctx_fini(dvpp_vpc_ctx *c)
{
    for (int i = 0; i < DVPP_VPC_PLAN_CACHE; i++)
        dvpp_resize_plan_free(c->plans[i].plan);
    for (int i = 0; i < DVPP_VPC_TEMPS; i++)
        dvpp_image_free(&c->tmp[i]);
    dvpp_scratch_fini(&c->scratch);
    memset(c->plans, 0, sizeof(c->plans));
}

size_t dvpp_vpc_ctx_trim(dvpp_vpc_ctx *c, size_t keep)
{
    return dvpp_images_trim(c->tmp, DVPP_VPC_TEMPS, keep) + dvpp_scratch_trim(&c->scratch, keep);
}

/* --- resize plans, cached per context ------------------------------------- */

/* The plan of a whole resize, cut to output window @win when not NULL. */
static dvpp_status get_plan_window(dvpp_vpc_ctx *c, dvpp_parity parity,
                                   dvpp_interp interp, uint32_t sw, uint32_t sh,
                                   uint32_t dw, uint32_t dh, unsigned ch,
                                   const dvpp_roi *win, const dvpp_resize_plan **out,
                                   dvpp_err *err)
{
    dvpp_vpc_plan_entry *victim = &c->plans[0];
    uint32_t wx = win ? win->left : 0, wy = win ? win->top : 0;
    uint32_t ww = win ? dvpp_roi_width(win) : 0, wh = win ? dvpp_roi_height(win) : 0;
    dvpp_status st;

    for (int i = 0; i < DVPP_VPC_PLAN_CACHE; i++) {
        dvpp_vpc_plan_entry *e = &c->plans[i];
        if (e->plan && e->parity == parity && e->interp == interp &&
            e->sw == sw && e->sh == sh && e->dw == dw && e->dh == dh &&
            e->channels == ch && e->wx == wx && e->wy == wy && e->ww == ww &&
            e->wh == wh) {
            e->used = ++c->clock;
            *out = e->plan;
            return DVPP_OK;
        }
        if (!e->plan || e->used < victim->used)
            victim = e;
    }
    dvpp_resize_plan_free(victim->plan);
    victim->plan = NULL;
    st = dvpp_resize_plan_new(parity, interp, sw, sh, dw, dh, ch, &victim->plan,
                              err);
    if (st == DVPP_OK && win)
        st = dvpp_resize_plan_window(victim->plan, wx, wy, ww, wh, err);
    if (st != DVPP_OK) {
        dvpp_resize_plan_free(victim->plan);
        victim->plan = NULL;
        return st;
    }
    *victim = (dvpp_vpc_plan_entry){victim->plan, parity, interp, sw, sh,
                                    dw, dh, ch, wx, wy, ww, wh, ++c->clock};
    *out = victim->plan;
    return DVPP_OK;
}

static dvpp_status get_plan(dvpp_vpc_ctx *c, dvpp_parity parity,
                            dvpp_interp interp, uint32_t sw, uint32_t sh,
                            uint32_t dw, uint32_t dh, unsigned ch,
                            const dvpp_resize_plan **out, dvpp_err *err)
{
    return get_plan_window(c, parity, interp, sw, sh, dw, dh, ch, NULL, out, err);
}

/* What the engine runs for @o in this context. */
static dvpp_status engine_params(dvpp_profile prof, const dvpp_resize_opts *o,
                                 dvpp_parity *parity, dvpp_interp *interp,
                                 dvpp_err *err)
{
    if (o->parity == DVPP_PARITY_ASCEND) {
        static const struct {
            dvpp_parity parity;
            dvpp_interp interp;
        } modes[] = {
            {DVPP_PARITY_CV2, DVPP_INTERP_BICUBIC}, /* 310 high-order: approx */
            {DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR},
            {DVPP_PARITY_CV2, DVPP_INTERP_NEAREST},
            {DVPP_PARITY_TF, DVPP_INTERP_BILINEAR},
            {DVPP_PARITY_TF, DVPP_INTERP_NEAREST},
        };
        if (o->ascend_mode < 0 || o->ascend_mode > 4)
            return dvpp_err_set(err, DVPP_EINVAL, "interp",
                                "ascend interpolation mode %d is not in 0..4",
                                o->ascend_mode);
        *parity = modes[o->ascend_mode].parity;
        *interp = modes[o->ascend_mode].interp;
        /* V200 treats mode 0 as bilinear. */
        if (o->ascend_mode == 0 && prof == DVPP_PROFILE_ASCEND310P)
            *interp = DVPP_INTERP_BILINEAR;
        return DVPP_OK;
    }
    if (!dvpp_resize_supported(o->parity, o->interp))
        return dvpp_err_set(err, DVPP_EINVAL, "interp",
                            "interpolation %s is not available with parity %s",
                            dvpp_interp_name(o->interp),
                            dvpp_parity_name(o->parity));
    *parity = o->parity;
    *interp = o->interp;
    return DVPP_OK;
}

dvpp_status dvpp_vpc_plan(dvpp_vpc_ctx *c, const dvpp_resize_opts *o,
                          uint32_t sw, uint32_t sh, uint32_t dw, uint32_t dh,
                          unsigned channels, const dvpp_resize_plan **out,
                          dvpp_err *err)
{
    dvpp_parity parity;
    dvpp_interp interp;
    dvpp_status st = engine_params(c->profile, o, &parity, &interp, err);

    if (st != DVPP_OK)
        return st;
    return get_plan(c, parity, interp, sw, sh, dw, dh, channels, out, err);
}

/* --- plane views --------------------------------------------------------------- */

/* One plane of a rectangular region of an image. */
typedef struct pview {
    uint8_t *p;
    size_t stride;
    uint32_t w, h;  /* samples */
    unsigned ch;    /* bytes per sample */
    /* Packed 4:2:2 (YUYV...): the byte of the second Y in a pair, else -1.
     * A region of odd width ends in half a pair whose chroma it shares
     * with the next pixel. */
    int y1;
    bool to_edge;   /* the region ends at the image's right edge */
} pview;

/* The byte offset of the second luma sample in a packed 4:2:2 pair. */
static int packed422_y1(dvpp_pixfmt f)
{
    switch (f) {
    case DVPP_PIXEL_YUYV:
    case DVPP_PIXEL_YVYU: return 2;
    case DVPP_PIXEL_UYVY:
    case DVPP_PIXEL_VYUY: return 3;
    default: return -1;
    }
}

/* Views of region (x, y, w, h) of every plane of @img. A subsampled
 * plane's view starts at the chroma sample that covers the region's first
 * pixel and holds as many samples as a region of that size on the grid
 * (ceil(w / 2)): a region at an odd origin (a crop) takes its chroma as a
 * crop on the grid would, shifted by half a sample; it stays inside the
 * plane (floor(x / 2) + ceil(w / 2) <= ceil((x + w) / 2)). Packed 4:2:2
 * regions start on a pixel pair (callers convert them from one), and a
 * destination region starts on the grid (check_paste). */
static int region_views(const dvpp_image *img, const dvpp_planes *pl,
                        uint32_t x, uint32_t y, uint32_t w, uint32_t h,
                        pview v[DVPP_MAX_PLANES])
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(img->format);

    for (int i = 0; i < pl->count; i++) {
        uint32_t sx = i ? fi->chroma_sx : 0, sy = i ? fi->chroma_sy : 0;
        unsigned ch = i == 0 ? fi->bpp : pl->count == 2 ? 2 : 1;
        uint32_t x0 = x >> sx, y0 = y >> sy;
        v[i].w = (w + (1u << sx) - 1) >> sx;
        v[i].h = (h + (1u << sy) - 1) >> sy;
        v[i].ch = ch;
        v[i].y1 = packed422_y1(img->format);
        v[i].to_edge = x + w >= img->width;
        v[i].stride = pl->p[i].stride;
        v[i].p = img->data + pl->p[i].offset + (size_t)y0 * pl->p[i].stride +
                 (size_t)x0 * ch;
    }
    return pl->count;
}

/* Copy a packed 4:2:2 row of @w pixels (@w odd): the whole pairs, then
 * the last pixel's Y, U and V; its neighbour's Y only when that is the
 * padding of an odd-width row (@to_edge), so no byte is left stale and no
 * pixel outside the region changes. */
static void copy_packed422_row(uint8_t *d, const uint8_t *s, uint32_t w, int y1,
                               bool to_edge)
{
    size_t last = (size_t)(w - 1) * 2;

    memcpy(d, s, last);
    for (int k = 0; k < 4; k++)
        if (k != y1 || to_edge)
            d[last + (size_t)k] = s[last + (size_t)k];
}

static void copy_views(const pview *s, const pview *d, int n)
{
    for (int i = 0; i < n; i++)
        for (uint32_t y = 0; y < d[i].h; y++) {
            uint8_t *dr = d[i].p + y * d[i].stride;
            const uint8_t *sr = s[i].p + y * s[i].stride;
            if (d[i].y1 >= 0 && d[i].w % 2)
                copy_packed422_row(dr, sr, d[i].w, d[i].y1, d[i].to_edge);
            else
                memcpy(dr, sr, (size_t)d[i].w * d[i].ch);
        }
}

/* Same-format region copy. */
static void copy_region(const dvpp_image *s, uint32_t sx, uint32_t sy,
                        uint32_t w, uint32_t h, const dvpp_image *d,
                        uint32_t dx, uint32_t dy)
{
    dvpp_planes ps, pd;
    pview vs[DVPP_MAX_PLANES], vd[DVPP_MAX_PLANES];
    int n;

    dvpp_image_planes(s, &ps, NULL);
    dvpp_image_planes(d, &pd, NULL);
    n = region_views(s, &ps, sx, sy, w, h, vs);
    region_views(d, &pd, dx, dy, w, h, vd);
    copy_views(vs, vd, n);
}

static dvpp_status resize_region(dvpp_vpc_ctx *c, const dvpp_image *s,
                                 uint32_t sx, uint32_t sy, uint32_t sw,
                                 uint32_t sh, const dvpp_image *d, uint32_t dx,
                                 uint32_t dy, uint32_t dw, uint32_t dh,
                                 dvpp_parity parity, dvpp_interp interp,
                                 dvpp_err *err)
{
    dvpp_planes ps, pd;
    pview vs[DVPP_MAX_PLANES], vd[DVPP_MAX_PLANES];
    int n;

    dvpp_image_planes(s, &ps, NULL);
    dvpp_image_planes(d, &pd, NULL);
    n = region_views(s, &ps, sx, sy, sw, sh, vs);
    region_views(d, &pd, dx, dy, dw, dh, vd);
    if (sw == dw && sh == dh) {
        copy_views(vs, vd, n);
        return DVPP_OK;
    }
    for (int i = 0; i < n; i++) {
        const dvpp_resize_plan *plan;
        dvpp_status st = get_plan(c, parity, interp, vs[i].w, vs[i].h, vd[i].w,
                                  vd[i].h, vs[i].ch, &plan, err);
        if (st == DVPP_OK)
            st = dvpp_resize_run(plan, vs[i].p, vs[i].stride, vd[i].p,
                                 vd[i].stride, &c->scratch, err);
        if (st != DVPP_OK)
            return st;
    }
    return DVPP_OK;
}

/* --- temporaries ------------------------------------------------------------------ */

/* Context temporary @i as a tight @fmt image of @w x @h (memory reused). */
static dvpp_status tmp_image(dvpp_vpc_ctx *c, int i, dvpp_pixfmt fmt, uint32_t w,
                             uint32_t h, dvpp_image **out, dvpp_err *err)
{
    dvpp_image *t = &c->tmp[i], geo;
    dvpp_planes pl;
    dvpp_status st;

    st = dvpp_image_init(&geo, fmt, w, h, 1, 1, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(&geo, &pl, err);
    if (st != DVPP_OK)
        return st;
    if (!t->data || t->size < pl.total) {
        dvpp_image_free(t);
        geo.data = dvpp_malloc(pl.total);
        if (!geo.data)
            return dvpp_err_set(err, DVPP_ENOMEM, "size",
                                "cannot allocate a %ux%u %s intermediate", w, h,
                                dvpp_pixfmt_name(fmt));
        geo.size = pl.total;
    } else {
        geo.data = t->data;
        geo.size = t->size;
    }
    *t = geo;
    *out = t;
    return DVPP_OK;
}

/* The format a resize runs in: packed YUV has no per-plane resize. */
static dvpp_pixfmt resize_format(dvpp_pixfmt f)
{
    switch (f) {
    case DVPP_PIXEL_YUYV:
    case DVPP_PIXEL_UYVY:
    case DVPP_PIXEL_YVYU:
    case DVPP_PIXEL_VYUY:
        return DVPP_PIXEL_YUV422SP;
    case DVPP_PIXEL_YUV_PACKED_444:
        return DVPP_PIXEL_YUV444SP;
    default:
        return f;
    }
}

static bool is_rgb_family(dvpp_pixfmt f)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(f);
    return fi && !fi->is_yuv && fi->channels >= 3;
}

static dvpp_status convert(dvpp_vpc_ctx *c, const dvpp_image *s, dvpp_image *d,
                           dvpp_err *err)
{
    if (!dvpp_csc_supported(s->format, d->format))
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "cannot convert %s to %s", dvpp_pixfmt_name(s->format),
                            dvpp_pixfmt_name(d->format));
    return dvpp_csc_convert(s, d, &c->csc, &c->scratch, err);
}

/* --- Pillow's premultiplied alpha -------------------------------------------- */

/* Pillow resizes RGBA as premultiplied RGBa (Image.resize converts to RGBa
 * and back for every filter but NEAREST), so pil parity does the same,
 * with Pillow's own rounding (Convert.c rgbA2rgba / rgba2rgbA). */
static bool pil_premultiplies(dvpp_parity parity, dvpp_interp interp,
                              dvpp_pixfmt f)
{
    return parity == DVPP_PARITY_PIL && interp != DVPP_INTERP_NEAREST &&
           dvpp_pixfmt_get(f)->has_alpha;
}

static unsigned alpha_index(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_ARGB || f == DVPP_PIXEL_ABGR ? 0 : 3;
}

static void premultiply_row(const uint8_t *s, uint8_t *d, uint32_t w, unsigned ai)
{
    for (uint32_t x = 0; x < w; x++, s += 4, d += 4) {
        unsigned a = s[ai];
        for (unsigned k = 0; k < 4; k++) {
            unsigned t = s[k] * a + 128;
            d[k] = k == ai ? (uint8_t)a : (uint8_t)(((t >> 8) + t) >> 8);
        }
    }
}

static void unpremultiply_row(uint8_t *p, uint32_t w, unsigned ai)
{
    for (uint32_t x = 0; x < w; x++, p += 4) {
        unsigned a = p[ai];
        if (a == 0 || a == 255)
            continue;
        for (unsigned k = 0; k < 4; k++) {
            unsigned v = k == ai ? a : 255 * p[k] / a;
            p[k] = (uint8_t)(v > 255 ? 255 : v);
        }
    }
}

/* Resize a region of a 4-byte alpha format the way Pillow does. */
static dvpp_status resize_premultiplied(dvpp_vpc_ctx *c, const dvpp_image *s,
                                        const dvpp_roi *cr, const dvpp_image *d,
                                        const dvpp_roi *pr, dvpp_parity parity,
                                        dvpp_interp interp, dvpp_err *err)
{
    uint32_t cw = dvpp_roi_width(cr), ch = dvpp_roi_height(cr);
    unsigned ai = alpha_index(s->format);
    dvpp_image *t;
    dvpp_status st;

    st = tmp_image(c, 1, s->format, cw, ch, &t, err);
    if (st != DVPP_OK)
        return st;
    for (uint32_t y = 0; y < ch; y++)
        premultiply_row(s->data + (size_t)(cr->top + y) * s->width_stride +
                            (size_t)cr->left * 4,
                        t->data + (size_t)y * t->width_stride, cw, ai);
    st = resize_region(c, t, 0, 0, cw, ch, d, pr->left, pr->top,
                       dvpp_roi_width(pr), dvpp_roi_height(pr), parity, interp,
                       err);
    for (uint32_t y = pr->top; st == DVPP_OK && y <= pr->bottom; y++)
        unpremultiply_row(d->data + (size_t)y * d->width_stride +
                              (size_t)pr->left * 4,
                          dvpp_roi_width(pr), ai);
    return st;
}

/* --- fused YUV 4:2:0 -> resized RGB ----------------------------------------- */

/* Rows of the crop, converted to RGB only when the resize reads them. */
typedef struct fused_rows {
    dvpp_csc_rows rows;
    uint32_t x0, y0, w;
} fused_rows;

static const uint8_t *fused_row(void *ctx, uint32_t y, uint8_t *buf)
{
    const fused_rows *f = ctx;

    dvpp_csc_rows_get(&f->rows, f->x0, f->y0 + y, f->w, buf);
    return buf;
}

static bool is_yuv420(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_NV12 || f == DVPP_PIXEL_NV21 || f == DVPP_PIXEL_I420 ||
           f == DVPP_PIXEL_YVU_PLANAR_420;
}

/* 4:2:0 YUV crop -> resized RGB-family paste region in one pass, when the
 * plan reads each source row once: only the sampled rows are converted.
 * Same bytes as converting the crop and then resizing it. *done is false
 * when this path does not apply. */
static dvpp_status try_fused(dvpp_vpc_ctx *c, const dvpp_image *src,
                             const dvpp_roi *cr, dvpp_image *dst,
                             const dvpp_roi *pr, dvpp_parity parity,
                             dvpp_interp interp, bool *done, dvpp_err *err)
{
    const dvpp_pixfmt_info *fd = dvpp_pixfmt_get(dst->format);
    uint32_t cw = dvpp_roi_width(cr), ch = dvpp_roi_height(cr);
    uint32_t pw = dvpp_roi_width(pr), ph = dvpp_roi_height(pr);
    const dvpp_resize_plan *plan;
    fused_rows f;
    dvpp_status st;

    *done = false;
    /* The row kernels take chroma pairs from the row's first pixel: a
     * crop at an odd column converts from the pair before it (step 2). */
    if (!is_yuv420(src->format) || !is_rgb_family(dst->format) ||
        (cw == pw && ch == ph) || cr->left % 2)
        return DVPP_OK;
    st = get_plan(c, parity, interp, cw, ch, pw, ph, fd->bpp, &plan, err);
    if (st != DVPP_OK || !dvpp_resize_plan_streams(plan))
        return st;
    st = dvpp_csc_rows_init(&f.rows, src, dst->format, &c->csc, err);
    if (st != DVPP_OK)
        return st;
    f.x0 = cr->left, f.y0 = cr->top, f.w = cw;
    *done = true;
    return dvpp_resize_run_rows(plan, fused_row, &f,
                                dst->data + (size_t)pr->top * dst->width_stride +
                                    (size_t)pr->left * fd->bpp,
                                dst->width_stride, &c->scratch, err);
}

/* --- checks ------------------------------------------------------------------------- */

static dvpp_status check_inside(const dvpp_image *img, const dvpp_roi *r,
                                const char *field, dvpp_err *err)
{
    if (r->left > r->right || r->top > r->bottom || r->right >= img->width ||
        r->bottom >= img->height)
        return dvpp_err_set(err, DVPP_EINVAL, field,
                            "%s (%u, %u, %u, %u) is not inside the %ux%u image",
                            field, r->left, r->top, r->right, r->bottom,
                            img->width, img->height);
    return DVPP_OK;
}

/* A paste shares no chroma sample with the pixels around it, which it
 * must leave untouched: it starts on the grid of @img's subsampling
 * (dvpp_vpc_paste_grid). A crop may start anywhere (region_views). */
static dvpp_status check_paste(const dvpp_image *img, const dvpp_roi *r,
                               dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(img->format);
    dvpp_status st = check_inside(img, r, "paste", err);

    if (st == DVPP_OK && ((fi->chroma_sx && r->left % 2) || (fi->chroma_sy && r->top % 2)))
        st = dvpp_err_set(err, DVPP_EINVAL, "paste",
                          "paste origin (%u, %u) must be even for %s, whose "
                          "chroma is subsampled", r->left, r->top,
                          dvpp_pixfmt_name(img->format));
    return st;
}

/* The layouts of both images (sizes against the data when it is set). */
static dvpp_status check_layouts(const dvpp_image *src, const dvpp_image *dst,
                                 dvpp_err *err)
{
    dvpp_planes pl;
    dvpp_status st = dvpp_image_planes(src, &pl, err);

    return st == DVPP_OK ? dvpp_image_planes(dst, &pl, err) : st;
}

static dvpp_status check_images(const dvpp_image *src, const dvpp_image *dst,
                                dvpp_err *err)
{
    dvpp_status st = check_layouts(src, dst, err);

    if (st == DVPP_OK && !src->data)
        st = dvpp_err_set(err, DVPP_EINVAL, "image", "input image has no data");
    if (st == DVPP_OK && !dst->data)
        st = dvpp_err_set(err, DVPP_EINVAL, "image", "output image has no data");
    return st;
}

/* The format a crop-resize-paste resizes in: the output's for YUV -> RGB
 * (convert-then-resize, as cv2 users do), else a resizable layout of the
 * input's. */
static dvpp_pixfmt work_format(dvpp_pixfmt src, dvpp_pixfmt dst)
{
    return dvpp_pixfmt_get(src)->is_yuv && is_rgb_family(dst) ? dst : resize_format(src);
}

static dvpp_status check_csc(dvpp_pixfmt from, dvpp_pixfmt to, dvpp_err *err)
{
    if (from == to || dvpp_csc_supported(from, to))
        return DVPP_OK;
    return dvpp_err_set(err, DVPP_EFORMAT, "format", "cannot convert %s to %s",
                        dvpp_pixfmt_name(from), dvpp_pixfmt_name(to));
}

dvpp_status dvpp_vpc_check_crop_resize_paste(dvpp_profile prof, const dvpp_image *src,
                                             const dvpp_roi *crop, const dvpp_image *dst,
                                             const dvpp_roi *paste,
                                             const dvpp_resize_opts *o, dvpp_err *err)
{
    dvpp_roi cr, pr;
    dvpp_parity parity;
    dvpp_interp interp;
    dvpp_pixfmt fmt;
    dvpp_status st;

    /* The profile's rules first: they own the texts for bad layouts. */
    if (dvpp_profile_is_ascend(prof)) {
        st = dvpp__vpc_check_ascend(prof, src, crop, dst, paste, o, err);
        if (st != DVPP_OK)
            return st;
    }
    st = check_layouts(src, dst, err);
    if (st != DVPP_OK)
        return st;
    cr = crop ? *crop : (dvpp_roi){0, 0, src->width - 1, src->height - 1};
    pr = paste ? *paste : (dvpp_roi){0, 0, dst->width - 1, dst->height - 1};
    st = check_inside(src, &cr, "crop", err);
    if (st == DVPP_OK)
        st = check_paste(dst, &pr, err);
    if (st == DVPP_OK)
        st = engine_params(prof, o, &parity, &interp, err);
    if (st != DVPP_OK)
        return st;
    fmt = work_format(src->format, dst->format);
    st = check_csc(src->format, fmt, err);
    return st == DVPP_OK ? check_csc(fmt, dst->format, err) : st;
}

/* Ascend VPC writes alpha 0 into RGBA-family outputs. */
static void zero_alpha(const dvpp_image *d, const dvpp_roi *r)
{
    unsigned a = d->format == DVPP_PIXEL_RGBA || d->format == DVPP_PIXEL_BGRA ? 3 : 0;

    if (!dvpp_pixfmt_get(d->format)->has_alpha)
        return;
    for (uint32_t y = r->top; y <= r->bottom; y++) {
        uint8_t *row = d->data + (size_t)y * d->width_stride;
        for (uint32_t x = r->left; x <= r->right; x++)
            row[4 * (size_t)x + a] = 0;
    }
}

/* --- crop-resize-paste ------------------------------------------------------------------ */

dvpp_status dvpp_vpc_crop_resize_paste(dvpp_vpc_ctx *c, const dvpp_image *src,
                                       const dvpp_roi *crop, dvpp_image *dst,
                                       const dvpp_roi *paste,
                                       const dvpp_resize_opts *o, dvpp_err *err)
{
    dvpp_roi cr = {0, 0, src->width - 1, src->height - 1};
    dvpp_roi pr = {0, 0, dst->width - 1, dst->height - 1};
    const dvpp_image *cur;
    dvpp_image *t;
    dvpp_pixfmt fmt;
    dvpp_parity parity = DVPP_PARITY_CV2;
    dvpp_interp interp = DVPP_INTERP_BILINEAR;
    uint32_t cw, ch, pw, ph;
    dvpp_status st;

    st = dvpp_vpc_check_crop_resize_paste(c->profile, src, crop, dst, paste, o, err);
    if (st == DVPP_OK)
        st = check_images(src, dst, err);
    if (st == DVPP_OK)
        st = engine_params(c->profile, o, &parity, &interp, err);
    if (st != DVPP_OK)
        return st;
    cr = crop ? *crop : cr;
    pr = paste ? *paste : pr;
    cw = dvpp_roi_width(&cr), ch = dvpp_roi_height(&cr);
    pw = dvpp_roi_width(&pr), ph = dvpp_roi_height(&pr);

    /* 1. The format the resize runs in. */
    fmt = work_format(src->format, dst->format);
    cur = src;
    if (fmt != src->format && fmt == dst->format) {
        bool done;
        st = try_fused(c, src, &cr, dst, &pr, parity, interp, &done, err);
        if (st != DVPP_OK || done)
            goto out_alpha;
    }
    if (fmt != src->format) {
        /* 2. Convert just the crop, reading it in place when the layout
         * allows a view, else from a copy of the region. The window
         * converted starts on the source's chroma grid (a pixel pair of
         * packed 4:2:2, a 2x2 block of 4:2:0), so every pixel converts
         * with its own chroma; the resize then starts at the crop's
         * offset inside it. */
        const dvpp_pixfmt_info *fs = dvpp_pixfmt_get(src->format);
        dvpp_image view;
        const dvpp_image *from = src;
        uint32_t x0 = cr.left & ~((1u << fs->chroma_sx) - 1); /* first column converted */
        uint32_t y0 = cr.top & ~((1u << fs->chroma_sy) - 1);  /* first row */
        uint32_t gh = cr.bottom + 1 - y0;
        if (cr.right + 1 - x0 != src->width || gh != src->height) {
            if (fs->planes == 1) {
                size_t top = (size_t)y0 * src->width_stride;
                /* A window that ends on the buffer's last row right of
                 * column 0 leaves its view's last row short of a whole
                 * stride: convert from column 0 then, and let the resize
                 * skip the columns left of the crop. */
                if ((uint64_t)gh * src->width_stride > src->size - top - (size_t)x0 * fs->bpp)
                    x0 = 0;
                view = *src;
                view.data += top + (size_t)x0 * fs->bpp;
                view.width = cr.right + 1 - x0, view.height = gh, view.height_stride = gh;
                view.size -= (size_t)(view.data - src->data);
                from = &view;
            } else {
                st = tmp_image(c, 0, src->format, cr.right + 1 - x0, gh, &t, err);
                if (st != DVPP_OK)
                    return st;
                copy_region(src, x0, y0, cr.right + 1 - x0, gh, t, 0, 0);
                from = t;
            }
        }
        st = tmp_image(c, 1, fmt, cr.right + 1 - x0, gh, &t, err);
        if (st == DVPP_OK)
            st = convert(c, from, t, err);
        if (st != DVPP_OK)
            return st;
        cur = t;
        cr = (dvpp_roi){cr.left - x0, cr.top - y0, cr.right - x0, cr.bottom - y0};
    }
    /* 3. Resize the crop window (no copy), straight into the output when
     * the formats agree. */
    if (fmt == dst->format && fmt == cur->format &&
        pil_premultiplies(parity, interp, fmt) && (cw != pw || ch != ph)) {
        st = resize_premultiplied(c, cur, &cr, dst, &pr, parity, interp, err);
    } else if (fmt == dst->format) {
        st = resize_region(c, cur, cr.left, cr.top, cw, ch, dst, pr.left, pr.top,
                           pw, ph, parity, interp, err);
    } else {
        dvpp_image *r, *out;
        st = tmp_image(c, 2, fmt, pw, ph, &r, err);
        if (st == DVPP_OK)
            st = resize_region(c, cur, cr.left, cr.top, cw, ch, r, 0, 0, pw, ph,
                               parity, interp, err);
        /* 4. Convert at the output size, into the paste region. */
        if (st == DVPP_OK && pw == dst->width && ph == dst->height) {
            st = convert(c, r, dst, err);
        } else if (st == DVPP_OK) {
            st = tmp_image(c, 0, dst->format, pw, ph, &out, err);
            if (st == DVPP_OK)
                st = convert(c, r, out, err);
            if (st == DVPP_OK)
                copy_region(out, 0, 0, pw, ph, dst, pr.left, pr.top);
        }
    }
out_alpha:
    if (st == DVPP_OK && dvpp_profile_is_ascend(c->profile))
        zero_alpha(dst, &pr);
    return st;
}

/* --- windowed resize (a resize and the crop after it) --------------------------------- */

bool dvpp_vpc_window_format_ok(dvpp_pixfmt fmt, const dvpp_resize_opts *o)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmt);

    return fi && fi->planes == 1 && !fi->chroma_sx && !fi->chroma_sy && !fi->is_yuv &&
           !pil_premultiplies(o->parity, o->interp, fmt);
}

static dvpp_status window_plan(dvpp_vpc_ctx *c, const dvpp_resize_opts *o,
                               uint32_t full_w, uint32_t full_h, uint32_t out_w,
                               uint32_t out_h, unsigned ch, const dvpp_roi *win,
                               const dvpp_resize_plan **plan, dvpp_err *err)
{
    dvpp_parity parity;
    dvpp_interp interp;
    dvpp_status st;

    if (dvpp_profile_is_ascend(c->profile))
        return dvpp_err_set(err, DVPP_EINVAL, "profile",
                            "a windowed resize runs under the native profile only");
    if (!win || win->left > win->right || win->top > win->bottom || win->right >= out_w ||
        win->bottom >= out_h)
        return dvpp_err_set(err, DVPP_EINVAL, "crop",
                            "the window is not inside the %ux%u resize", out_w, out_h);
    st = engine_params(c->profile, o, &parity, &interp, err);
    return st ? st
              : get_plan_window(c, parity, interp, full_w, full_h, out_w, out_h, ch, win,
                                plan, err);
}

dvpp_status dvpp_vpc_window_source(dvpp_vpc_ctx *c, const dvpp_resize_opts *o,
                                   uint32_t full_w, uint32_t full_h, uint32_t out_w,
                                   uint32_t out_h, unsigned channels, const dvpp_roi *win,
                                   uint32_t rect[4], dvpp_err *err)
{
    const dvpp_resize_plan *plan;
    dvpp_status st = window_plan(c, o, full_w, full_h, out_w, out_h, channels, win,
                                 &plan, err);

    if (st == DVPP_OK)
        dvpp_resize_plan_source(plan, &rect[0], &rect[1], &rect[2], &rect[3]);
    return st;
}

dvpp_status dvpp_vpc_resize_window(dvpp_vpc_ctx *c, const dvpp_image *src, uint32_t sx,
                                   uint32_t sy, uint32_t full_w, uint32_t full_h,
                                   uint32_t out_w, uint32_t out_h, const dvpp_roi *win,
                                   dvpp_image *dst, const dvpp_resize_opts *o,
                                   dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(src->format);
    const dvpp_resize_plan *plan;
    uint32_t r[4];
    dvpp_status st;

    if (!dvpp_vpc_window_format_ok(src->format, o) || dst->format != src->format)
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "a windowed resize takes one packed plane (%s -> %s)",
                            dvpp_pixfmt_name(src->format), dvpp_pixfmt_name(dst->format));
    st = check_images(src, dst, err);
    if (st == DVPP_OK)
        st = window_plan(c, o, full_w, full_h, out_w, out_h, fi->bpp, win, &plan, err);
    if (st != DVPP_OK)
        return st;
    dvpp_resize_plan_source(plan, &r[0], &r[1], &r[2], &r[3]);
    if (dst->width != dvpp_roi_width(win) || dst->height != dvpp_roi_height(win) ||
        r[0] < sx || r[1] < sy || r[0] - sx + (uint64_t)r[2] > src->width ||
        r[1] - sy + (uint64_t)r[3] > src->height)
        return dvpp_err_set(err, DVPP_EINVAL, "image",
                            "a windowed resize reads %u,%u %ux%u of the source, the %ux%u "
                            "image at %u,%u does not hold it (or the output is not the "
                            "window's size)", r[0], r[1], r[2], r[3], src->width,
                            src->height, sx, sy);
    return dvpp_resize_run(plan,
                           src->data + (size_t)(r[1] - sy) * src->width_stride +
                               (size_t)(r[0] - sx) * fi->bpp,
                           src->width_stride, dst->data, dst->width_stride, &c->scratch,
                           err);
}

size_t dvpp_vpc_image_bytes(dvpp_pixfmt fmt, uint32_t w, uint32_t h)
{
    dvpp_image img;
    dvpp_planes pl;

    if (dvpp_image_init(&img, fmt, w, h, 1, 1, NULL) != DVPP_OK ||
        dvpp_image_planes(&img, &pl, NULL) != DVPP_OK)
        return SIZE_MAX;
    return pl.total;
}

static size_t max_sz(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* Mirrors the steps of dvpp_vpc_crop_resize_paste (tmp_image slots). */
void dvpp_vpc_temp_bytes(dvpp_pixfmt src_fmt, uint32_t src_w, uint32_t src_h,
                         const dvpp_roi *crop, dvpp_pixfmt dst_fmt, uint32_t dst_w,
                         uint32_t dst_h, const dvpp_roi *paste, const dvpp_resize_opts *o,
                         size_t slots[DVPP_VPC_TEMPS])
{
    const dvpp_pixfmt_info *fs = dvpp_pixfmt_get(src_fmt);
    dvpp_roi cr, pr;
    uint32_t cw, ch, pw, ph;
    dvpp_pixfmt fmt;

    if (!fs || !dvpp_pixfmt_get(dst_fmt) || !src_w || !src_h || !dst_w || !dst_h)
        return;
    cr = crop ? *crop : (dvpp_roi){0, 0, src_w - 1, src_h - 1};
    pr = paste ? *paste : (dvpp_roi){0, 0, dst_w - 1, dst_h - 1};
    cw = dvpp_roi_width(&cr), ch = dvpp_roi_height(&cr);
    pw = dvpp_roi_width(&pr), ph = dvpp_roi_height(&pr);
    fmt = work_format(src_fmt, dst_fmt);
    if (fmt != src_fmt) {
        /* the window converted starts on the chroma grid (step 2) */
        uint32_t gw = cr.right + 1 - (cr.left & ~((1u << fs->chroma_sx) - 1));
        uint32_t gh = cr.bottom + 1 - (cr.top & ~((1u << fs->chroma_sy) - 1));
        if ((gw != src_w || gh != src_h) && fs->planes > 1)
            slots[0] = max_sz(slots[0], dvpp_vpc_image_bytes(src_fmt, gw, gh));
        /* the conversion may start at column 0 (step 2) */
        slots[1] = max_sz(slots[1], dvpp_vpc_image_bytes(fmt, cr.right + 1, gh));
    }
    if (fmt == dst_fmt && o && o->parity == DVPP_PARITY_PIL &&
        o->interp != DVPP_INTERP_NEAREST && dvpp_pixfmt_get(fmt)->has_alpha &&
        (cw != pw || ch != ph))
        slots[1] = max_sz(slots[1], dvpp_vpc_image_bytes(fmt, cw, ch));
    if (fmt != dst_fmt) {
        slots[2] = max_sz(slots[2], dvpp_vpc_image_bytes(fmt, pw, ph));
        if (pw != dst_w || ph != dst_h)
            slots[0] = max_sz(slots[0], dvpp_vpc_image_bytes(dst_fmt, pw, ph));
    }
}

dvpp_status dvpp_vpc_check_convert(dvpp_profile prof, const dvpp_image *src,
                                   const dvpp_image *dst, dvpp_err *err)
{
    dvpp_status st = check_layouts(src, dst, err);

    if (st != DVPP_OK)
        return st;
    if (src->width != dst->width || src->height != dst->height)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "convert keeps the size: %ux%u -> %ux%u", src->width,
                            src->height, dst->width, dst->height);
    if (prof == DVPP_PROFILE_ASCEND310)
        return dvpp_err_set(err, DVPP_EPROFILE, "format",
                            "Ascend310 VPC has no ConvertColor: use a resize "
                            "with a different output format");
    if (prof == DVPP_PROFILE_ASCEND310P &&
        (!dvpp__vpc_ascend_input_ok(prof, src->format) ||
         !dvpp__vpc_ascend_output_ok(prof, dst->format)))
        return dvpp_err_set(err, DVPP_EPROFILE, "format",
                            "Ascend310P VPC: ConvertColor %s -> %s is not "
                            "supported!", dvpp_pixfmt_name(src->format),
                            dvpp_pixfmt_name(dst->format));
    return check_csc(src->format, dst->format, err);
}

dvpp_status dvpp_vpc_convert(dvpp_vpc_ctx *c, const dvpp_image *src,
                             dvpp_image *dst, dvpp_err *err)
{
    dvpp_status st = dvpp_vpc_check_convert(c->profile, src, dst, err);

    if (st == DVPP_OK)
        st = check_images(src, dst, err);
    return st == DVPP_OK ? convert(c, src, dst, err) : st;
}

dvpp_status dvpp_vpc_check_make_border(dvpp_profile prof, const dvpp_image *src,
                                       const dvpp_image *dst, const dvpp_border *b,
                                       dvpp_err *err)
{
    dvpp_status st = check_layouts(src, dst, err);

    if (st != DVPP_OK)
        return st;
    if (prof == DVPP_PROFILE_ASCEND310)
        return dvpp_err_set(err, DVPP_EPROFILE, "border",
                            "Ascend310 VPC has no MakeBorder (Ascend310P only)");
    return dvpp_border_check(src, dst, b, err);
}

dvpp_status dvpp_vpc_make_border(dvpp_vpc_ctx *c, const dvpp_image *src,
                                 dvpp_image *dst, const dvpp_border *b,
                                 dvpp_err *err)
{
    dvpp_status st = dvpp_vpc_check_make_border(c->profile, src, dst, b, err);

    if (st == DVPP_OK)
        st = check_images(src, dst, err);
    return st == DVPP_OK ? dvpp_border_make(src, dst, b, err) : st;
}

dvpp_status dvpp_vpc_batch_crop_resize_paste(dvpp_vpc_ctx *c,
                                             const dvpp_image *srcs,
                                             uint32_t nsrc,
                                             const uint32_t *roi_nums,
                                             const dvpp_roi *crops,
                                             dvpp_image *dsts,
                                             const dvpp_roi *pastes,
                                             const dvpp_resize_opts *o,
                                             dvpp_err *err)
{
    uint32_t total, k = 0;
    dvpp_status st;

    st = dvpp__vpc_check_batch(c->profile, c->max_batch_rois, nsrc, roi_nums,
                               &total, err);
    if (st != DVPP_OK)
        return st;
    for (uint32_t i = 0; i < nsrc; i++) {
        for (uint32_t j = 0; j < roi_nums[i]; j++, k++) {
            st = dvpp_vpc_crop_resize_paste(c, &srcs[i], &crops[k], &dsts[k],
                                            pastes ? &pastes[k] : NULL, o, err);
            if (st != DVPP_OK) {
                if (err) {
                    char msg[DVPP_ERR_LEN];
                    memcpy(msg, err->msg, sizeof(msg));
                    dvpp_err_set(err, st, err->field, "roi %u (input %u): %s",
                                 k, i, msg);
                }
                return st;
            }
        }
    }
    return DVPP_OK;
}

/* --- named modes ---------------------------------------------------------------------- */

static const char *const k_modes[] = {"stretch", "fit",     "fill",
                                      "letterbox", "shorter", "longer"};

const char *dvpp_resize_mode_name(dvpp_resize_mode m)
{
    return (unsigned)m <= DVPP_RESIZE_LONGER ? k_modes[m] : "unknown";
}

bool dvpp_resize_mode_parse(const char *s, dvpp_resize_mode *out)
{
    for (unsigned i = 0; i <= DVPP_RESIZE_LONGER; i++) {
        if (strcasecmp(s, k_modes[i]) == 0) {
            *out = (dvpp_resize_mode)i;
            return true;
        }
    }
    return false;
}

/* round(v * num / den) for positive integers, at least 1 (v, num, den
 * are 32-bit, so the product fits 64 bits; the result may not fit 32). */
static uint64_t scale_side(uint32_t v, uint64_t num, uint64_t den)
{
    uint64_t r = ((uint64_t)v * num * 2 + den) / (den * 2);
    return r ? r : 1;
}

static const char *const k_rounds[] = {"nearest", "floor"};

const char *dvpp_resize_round_name(dvpp_resize_round r)
{
    return (unsigned)r <= DVPP_RESIZE_ROUND_FLOOR ? k_rounds[r] : "unknown";
}

bool dvpp_resize_round_parse(const char *s, dvpp_resize_round *out)
{
    for (unsigned i = 0; i <= DVPP_RESIZE_ROUND_FLOOR; i++) {
        if (strcasecmp(s, k_rounds[i]) == 0) {
            *out = (dvpp_resize_round)i;
            return true;
        }
    }
    return false;
}

/* floor(v * num / den), at least 1: torchvision's int(size * long / short)
 * in exact arithmetic. Python's float division is correctly rounded, so a
 * quotient at least 1/den below an integer stays below it while
 * v * num < 2^53: here v and num are 32-bit, below 2^48 with num <= 2^16. */
static uint64_t scale_side_floor(uint32_t v, uint64_t num, uint64_t den)
{
    uint64_t r = (uint64_t)v * num / den;
    return r ? r : 1;
}

static dvpp_roi whole(uint32_t w, uint32_t h)
{
    return (dvpp_roi){0, 0, w - 1, h - 1};
}

dvpp_status dvpp_resize_geometry(uint32_t sw, uint32_t sh, dvpp_resize_mode mode,
                                 uint32_t w, uint32_t h, dvpp_resize_geom *g,
                                 dvpp_err *err)
{
    return dvpp_resize_geometry_rounded(sw, sh, mode, w, h, DVPP_RESIZE_ROUND_NEAREST, g,
                                        err);
}

dvpp_status dvpp_resize_geometry_rounded(uint32_t sw, uint32_t sh, dvpp_resize_mode mode,
                                         uint32_t w, uint32_t h, dvpp_resize_round round,
                                         dvpp_resize_geom *g, dvpp_err *err)
{
    /* Ratios compare sw/w with sh/h exactly: sw * h vs sh * w. */
    bool width_limits; /* the width decides the fit */
    uint32_t nw, nh;

    if (!sw || !sh || !w || (!h && mode != DVPP_RESIZE_SHORTER &&
                             mode != DVPP_RESIZE_LONGER))
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "resize %ux%u -> %ux%u has a zero size", sw, sh, w, h);
    if ((unsigned)round > DVPP_RESIZE_ROUND_FLOOR ||
        (round != DVPP_RESIZE_ROUND_NEAREST && mode != DVPP_RESIZE_SHORTER &&
         mode != DVPP_RESIZE_LONGER))
        return dvpp_err_set(err, DVPP_EINVAL, "round",
                            "round %s: only for the shorter and longer modes (not %s)",
                            dvpp_resize_round_name(round), dvpp_resize_mode_name(mode));
    memset(g, 0, sizeof(*g));
    g->crop = whole(sw, sh);
    switch (mode) {
    case DVPP_RESIZE_STRETCH:
        nw = w, nh = h;
        break;
    case DVPP_RESIZE_SHORTER:
    case DVPP_RESIZE_LONGER: {
        uint64_t other;
        width_limits = (sw <= sh) == (mode == DVPP_RESIZE_SHORTER);
        if (round == DVPP_RESIZE_ROUND_FLOOR)
            other = width_limits ? scale_side_floor(sh, w, sw) : scale_side_floor(sw, w, sh);
        else
            other = width_limits ? scale_side(sh, w, sw) : scale_side(sw, w, sh);
        if (other > UINT32_MAX)
            return dvpp_err_set(err, DVPP_ELIMIT, "size",
                                "resize %ux%u -> %s side %u makes the other side %llu",
                                sw, sh, dvpp_resize_mode_name(mode), w,
                                (unsigned long long)other);
        nw = width_limits ? w : (uint32_t)other;
        nh = width_limits ? (uint32_t)other : w;
        break;
    }
    case DVPP_RESIZE_FILL: {
        /* Cover W x H: crop the source to W:H around its centre, then
         * scale the crop to exactly W x H (one pass, crop folded in). */
        uint32_t cw = sw, chh = sh;
        if ((uint64_t)sw * h > (uint64_t)sh * w)
            cw = (uint32_t)scale_side(sh, w, h);   /* < sw here */
        else
            chh = (uint32_t)scale_side(sw, h, w);  /* <= sh here */
        cw = cw > sw ? sw : cw;
        chh = chh > sh ? sh : chh;
        g->crop.left = (sw - cw) / 2;
        g->crop.top = (sh - chh) / 2;
        g->crop.right = g->crop.left + cw - 1;
        g->crop.bottom = g->crop.top + chh - 1;
        g->out_w = w, g->out_h = h;
        g->paste = whole(w, h);
        g->scale_x = (double)w / cw, g->scale_y = (double)h / chh;
        g->pad_x = -(double)g->crop.left * g->scale_x;
        g->pad_y = -(double)g->crop.top * g->scale_y;
        return DVPP_OK;
    }
    default: /* FIT, LETTERBOX */
        width_limits = (uint64_t)sw * h >= (uint64_t)sh * w;
        nw = width_limits ? w : (uint32_t)scale_side(sw, h, sh); /* <= w here */
        nh = width_limits ? (uint32_t)scale_side(sh, w, sw) : h; /* <= h here */
        nw = nw > w ? w : nw;
        nh = nh > h ? h : nh;
        break;
    }
    g->scale_x = (double)nw / sw;
    g->scale_y = (double)nh / sh;
    if (mode == DVPP_RESIZE_LETTERBOX) {
        g->out_w = w, g->out_h = h;
        g->pad_x = (w - nw) / 2;
        g->pad_y = (h - nh) / 2;
    } else {
        g->out_w = nw, g->out_h = nh;
    }
    g->paste = (dvpp_roi){(uint32_t)g->pad_x, (uint32_t)g->pad_y,
                          (uint32_t)g->pad_x + nw - 1, (uint32_t)g->pad_y + nh - 1};
    return DVPP_OK;
}

/* [*lo, *hi] (inclusive) onto @grid's multiple @m and size rule, unless
 * it is all of [0, n). */
static void snap_span(uint32_t *lo, uint32_t *hi, uint32_t n, uint32_t m, bool even)
{
    uint32_t len;

    if (*lo == 0 && *hi + 1 == n)
        return;
    len = *hi - *lo + 1;
    *lo -= *lo % m;
    if (even && len > 1)
        len &= ~1u;
    *hi = *lo + len - 1;
}

void dvpp_resize_geometry_snap(dvpp_resize_geom *g, const dvpp_roi_grid *crop,
                               const dvpp_roi_grid *paste)
{
    /* A crop's source size is not in @g: any crop snaps (the one grid
     * that moves crops, ascend310's YUV420SP parity, refuses an odd
     * right edge of the whole picture too). */
    dvpp_roi cr = g->crop, pr = g->paste;

    if (crop) {
        snap_span(&g->crop.left, &g->crop.right, UINT32_MAX, crop->x, crop->even_size);
        snap_span(&g->crop.top, &g->crop.bottom, UINT32_MAX, crop->y, crop->even_size);
    }
    if (paste) {
        snap_span(&g->paste.left, &g->paste.right, g->out_w, paste->x, paste->even_size);
        snap_span(&g->paste.top, &g->paste.bottom, g->out_h, paste->y, paste->even_size);
    }
    if (!memcmp(&cr, &g->crop, sizeof(cr)) && !memcmp(&pr, &g->paste, sizeof(pr)))
        return; /* on the grids already: the mode's own numbers stay */
    g->scale_x = (double)dvpp_roi_width(&g->paste) / dvpp_roi_width(&g->crop);
    g->scale_y = (double)dvpp_roi_height(&g->paste) / dvpp_roi_height(&g->crop);
    g->pad_x = g->paste.left - g->crop.left * g->scale_x;
    g->pad_y = g->paste.top - g->crop.top * g->scale_y;
}

/* The pad colour as one pixel of an RGB-family format (alpha opaque). */
static void rgb_pad_pixel(dvpp_pixfmt f, const uint8_t pad[3], uint8_t px[4])
{
    switch (f) {
    case DVPP_PIXEL_BGR: px[0] = pad[2], px[1] = pad[1], px[2] = pad[0]; break;
    case DVPP_PIXEL_RGBA: px[0] = pad[0], px[1] = pad[1], px[2] = pad[2], px[3] = 255; break;
    case DVPP_PIXEL_BGRA: px[0] = pad[2], px[1] = pad[1], px[2] = pad[0], px[3] = 255; break;
    case DVPP_PIXEL_ARGB: px[0] = 255, px[1] = pad[0], px[2] = pad[1], px[3] = pad[2]; break;
    case DVPP_PIXEL_ABGR: px[0] = 255, px[1] = pad[2], px[2] = pad[1], px[3] = pad[0]; break;
    default: px[0] = pad[0], px[1] = pad[1], px[2] = pad[2], px[3] = 255; break;
    }
}

/* Fill all of @d with the colour @pad (R,G,B). RGB-family outputs take it
 * as it is (alpha opaque); YUV and grey outputs take it converted with the
 * context's own CSC settings (matrix, range), the ones every implicit
 * conversion of the pipeline uses: a 2x2 block of the colour is converted
 * to @d's format and each plane's first row of it (one period of the
 * plane's byte pattern) is repeated along every row. */
static dvpp_status fill_image(dvpp_vpc_ctx *c, const dvpp_image *d, const uint8_t pad[3],
                              dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(d->format);
    uint8_t rgb[2 * 2 * 3], cell[2 * 2 * 4];
    dvpp_image from, to;
    dvpp_planes pl, cp;
    dvpp_status st;

    st = dvpp_image_planes(d, &pl, err);
    if (st != DVPP_OK)
        return st;
    if (!fi->is_yuv && fi->channels >= 3) {
        uint8_t px[4];
        rgb_pad_pixel(d->format, pad, px);
        for (uint32_t y = 0; y < pl.p[0].rows; y++) {
            uint8_t *row = d->data + pl.p[0].offset + y * pl.p[0].stride;
            for (uint32_t x = 0; x < d->width; x++)
                memcpy(row + (size_t)x * fi->bpp, px, fi->bpp);
        }
        return DVPP_OK;
    }
    for (int i = 0; i < 4; i++)
        memcpy(rgb + 3 * i, pad, 3);
    st = dvpp_image_init(&from, DVPP_PIXEL_RGB, 2, 2, 1, 1, err);
    if (st == DVPP_OK)
        st = dvpp_image_init(&to, d->format, 2, 2, 1, 1, err);
    if (st != DVPP_OK)
        return st;
    from.data = rgb, from.size = sizeof(rgb);
    to.data = cell, to.size = sizeof(cell);
    st = dvpp_image_planes(&to, &cp, err);
    if (st == DVPP_OK)
        st = convert(c, &from, &to, err);
    if (st != DVPP_OK)
        return st;
    for (int k = 0; k < pl.count; k++) {
        const uint8_t *unit = cell + cp.p[k].offset;
        size_t n = cp.p[k].row_bytes;
        for (uint32_t y = 0; y < pl.p[k].rows; y++) {
            uint8_t *row = d->data + pl.p[k].offset + y * pl.p[k].stride;
            for (size_t x = 0; x < pl.p[k].row_bytes; x += n)
                memcpy(row + x, unit, pl.p[k].row_bytes - x < n ? pl.p[k].row_bytes - x : n);
        }
    }
    return DVPP_OK;
}

static bool has_bars(const dvpp_resize_geom *g)
{
    return g->paste.left || g->paste.top || g->paste.right + 1 < g->out_w ||
           g->paste.bottom + 1 < g->out_h;
}

dvpp_status dvpp_vpc_check_resize_mode(dvpp_profile prof, const dvpp_image *src,
                                       const dvpp_resize_geom *g, const dvpp_image *dst,
                                       const dvpp_resize_opts *o, dvpp_err *err)
{
    dvpp_status st = DVPP_OK;

    if (dst->width != g->out_w || dst->height != g->out_h)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "output is %ux%u, the geometry needs %ux%u",
                            dst->width, dst->height, g->out_w, g->out_h);
    /* the bars: the pad colour converted from RGB (fill_image) */
    if (has_bars(g) && !is_rgb_family(dst->format))
        st = check_csc(DVPP_PIXEL_RGB, dst->format, err);
    return st == DVPP_OK
               ? dvpp_vpc_check_crop_resize_paste(prof, src, &g->crop, dst, &g->paste, o, err)
               : st;
}

dvpp_status dvpp_vpc_resize_mode(dvpp_vpc_ctx *c, const dvpp_image *src,
                                 const dvpp_resize_geom *g, dvpp_image *dst,
                                 const uint8_t pad[3],
                                 const dvpp_resize_opts *o, dvpp_err *err)
{
    dvpp_status st = dvpp_vpc_check_resize_mode(c->profile, src, g, dst, o, err);

    if (st == DVPP_OK && dst->data && has_bars(g))
        st = fill_image(c, dst, pad, err);
    return st == DVPP_OK ? dvpp_vpc_crop_resize_paste(c, src, &g->crop, dst, &g->paste, o, err)
                         : st;
}
