/* dvppctl's VPC commands: resize, crop, convert, make-border, batch-crop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_remote.h"
#include "dvpp_mem.h"

/* A context configured from the command line. */
static void ctx_from_args(dvpp_vpc_ctx *c, const ctl_args *a)
{
    dvpp_vpc_ctx_init(c, a->jpeg.profile);
    c->csc.matrix = a->matrix;
    if (a->range >= 0)
        c->csc.full_range = a->range == 1;
}

/* Allocate @img as a @fmt output of @w x @h: the profile's VPC strides
 * (ALIGN(w,16) * bpp, 4:2:0 heights even) or --align in native. */
static dvpp_status alloc_output(const ctl_args *a, dvpp_pixfmt fmt, uint32_t w,
                                uint32_t h, dvpp_image *img, dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmt);
    uint32_t aw = a->jpeg.align_w ? a->jpeg.align_w : 1;
    uint32_t ah = a->jpeg.align_h ? a->jpeg.align_h : 1;
    dvpp_status st;

    if (dvpp_profile_is_ascend(a->jpeg.profile)) {
        aw = 16;
        ah = fi && fi->chroma_sy ? 2 : 1;
    }
    st = dvpp_image_init(img, fmt, w, h, aw, ah, err);
    if (st == DVPP_OK)
        st = dvpp_image_alloc(img, err);
    return st;
}

/* Ascend VPC wants 16-aligned strides; a .npy or raw input has none, so
 * lay it out as a DVPP buffer would be (JPEGD outputs already are). */
static dvpp_status relayout_for_profile(const ctl_args *a, dvpp_image *img,
                                        dvpp_err *err)
{
    dvpp_image aligned;
    dvpp_planes ps, pd;
    dvpp_status st;

    if (!dvpp_profile_is_ascend(a->jpeg.profile) || img->width_stride % 16 == 0)
        return DVPP_OK;
    st = alloc_output(a, img->format, img->width, img->height, &aligned, err);
    if (st != DVPP_OK)
        return st;
    dvpp_image_planes(img, &ps, NULL);
    dvpp_image_planes(&aligned, &pd, NULL);
    for (int p = 0; p < ps.count; p++)
        for (uint32_t y = 0; y < ps.p[p].rows; y++)
            memcpy(dvpp_image_row(&aligned, &pd, p, y), dvpp_image_row(img, &ps, p, y),
                   ps.p[p].row_bytes);
    dvpp_image_free(img);
    *img = aligned;
    return DVPP_OK;
}

static dvpp_status load_input(const ctl_args *a, unsigned i, dvpp_image *img,
                              dvpp_err *err)
{
    dvpp_pixfmt want = a->format_set ? a->format : DVPP_PIXEL_RGB;
    dvpp_status st;

    /* Ascend JPEGD writes YUV only: decode to NV12 and let VPC convert. */
    if (dvpp_profile_is_ascend(a->jpeg.profile))
        want = DVPP_PIXEL_NV12;
    st = ctl_load_image(a->inputs[i], a, want, img, err);
    if (st == DVPP_OK)
        st = relayout_for_profile(a, img, err);
    return st;
}

void ctl_print_geometry(const dvpp_resize_geom *g, dvpp_resize_mode m)
{
    printf("{\"mode\": \"%s\", \"out_w\": %u, \"out_h\": %u, \"scale_x\": %.17g, "
           "\"scale_y\": %.17g, \"pad_x\": %.17g, \"pad_y\": %.17g, "
           "\"crop\": [%u, %u, %u, %u], \"paste\": [%u, %u, %u, %u]}\n",
           dvpp_resize_mode_name(m), g->out_w, g->out_h, g->scale_x, g->scale_y,
           g->pad_x, g->pad_y, g->crop.left, g->crop.top, g->crop.right,
           g->crop.bottom, g->paste.left, g->paste.top, g->paste.right,
           g->paste.bottom);
}

static int one_input(const ctl_args *a, const char *cmd)
{
    if (a->ninputs != 1) {
        fprintf(stderr, "dvppctl %s: one input FILE\n", cmd);
        return 2;
    }
    return 0;
}

/* One input image -> one output image: the shape of resize, crop, convert
 * and make-border. Each command supplies its checks, the output's format
 * and size, and the operation. */
typedef struct single_cmd {
    const char *name;
    /* Usage problem with the parsed arguments, or NULL. */
    const char *(*check)(const ctl_args *a);
    /* Output format and size for input @src; may keep state in @st. */
    dvpp_status (*shape)(const ctl_args *a, const dvpp_image *src, void *state,
                         dvpp_pixfmt *fmt, uint32_t *w, uint32_t *h,
                         dvpp_err *err);
    dvpp_status (*op)(dvpp_vpc_ctx *c, const ctl_args *a, const dvpp_image *src,
                      dvpp_image *dst, void *state, dvpp_err *err);
    void (*done)(const ctl_args *a, void *state); /* after writing, or NULL */
    bool decode_rgb; /* JPEG/PNG inputs decode to RGB (convert) */
} single_cmd;

static int run_single(int argc, char **argv, const single_cmd *cmd, void *state)
{
    ctl_args *a = calloc(1, sizeof(*a));
    dvpp_image src = {0}, dst = {0};
    const char *problem = NULL;
    dvpp_vpc_ctx c;
    dvpp_pixfmt fmt;
    uint32_t w, h;
    dvpp_err err;
    dvpp_status st;
    int rc;

    if (!a)
        return 1;
    rc = ctl_parse_args(argc, argv, a);
    if (!rc)
        rc = one_input(a, cmd->name);
    if (!rc && (problem = cmd->check(a)) != NULL) {
        fprintf(stderr, "dvppctl %s: %s\n", cmd->name, problem);
        rc = 2;
    }
    if (rc) {
        free(a);
        return rc;
    }
    if (a->shrink_on_load && !a->shrink_w && a->size_set)
        a->shrink_w = a->size_w, a->shrink_h = a->size_h; /* "auto" */
    if (cmd->decode_rgb && !a->decode_format_set) {
        a->decode_format = DVPP_PIXEL_RGB;
        a->decode_format_set = true;
    }
    if (ctl_use_socket(a)) { /* the same through a daemon, its entry of that name */
        rc = ctl_remote_run(cmd->name, a);
        free(a);
        return rc;
    }
    dvpp_err_clear(&err);
    ctx_from_args(&c, a);
    st = load_input(a, 0, &src, &err);
    if (st == DVPP_OK)
        st = cmd->shape(a, &src, state, &fmt, &w, &h, &err);
    if (st == DVPP_OK)
        st = alloc_output(a, fmt, w, h, &dst, &err);
    if (st == DVPP_OK)
        st = cmd->op(&c, a, &src, &dst, state, &err);
    if (st == DVPP_OK)
        st = ctl_write_image(a->out, &dst, a->quality, &err);
    if (st == DVPP_OK && cmd->done)
        cmd->done(a, state);
    rc = st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
    dvpp_image_free(&src);
    dvpp_image_free(&dst);
    dvpp_vpc_ctx_fini(&c);
    free(a);
    return rc;
}

/* --- resize ----------------------------------------------------------------- */

static const char *resize_check(const ctl_args *a)
{
    if (!a->size_set)
        return "need --size WxH (or N for shorter/longer)";
    return a->nrois ? "resize takes no --roi; use crop" : NULL;
}

/* The named mode's geometry, its crop and paste on the grids of the VPC
 * call that makes them (the letterbox's picture on the output's chroma
 * grid, and DVPP's ROI rules under the ascend profiles): the rule the
 * daemon's planner follows, so both put the picture in the same place. */
static dvpp_status resize_shape(const ctl_args *a, const dvpp_image *src,
                                void *state, dvpp_pixfmt *fmt, uint32_t *w,
                                uint32_t *h, dvpp_err *err)
{
    dvpp_resize_geom *g = state;
    dvpp_roi_grid cg, pg;
    dvpp_status st = dvpp_resize_geometry_rounded(src->width, src->height, a->mode,
                                                  a->size_w, a->size_h, a->round, g, err);
    *fmt = a->format_set ? a->format : src->format;
    if (st == DVPP_OK) {
        dvpp_vpc_crop_grid(a->jpeg.profile, src->format, &cg);
        dvpp_vpc_paste_grid(a->jpeg.profile, *fmt, &pg);
        dvpp_resize_geometry_snap(g, &cg, &pg);
    }
    *w = g->out_w, *h = g->out_h;
    return st;
}

static dvpp_status resize_op(dvpp_vpc_ctx *c, const ctl_args *a,
                             const dvpp_image *src, dvpp_image *dst, void *state,
                             dvpp_err *err)
{
    return dvpp_vpc_resize_mode(c, src, state, dst, a->pad, &a->resize, err);
}

static void resize_done(const ctl_args *a, void *state)
{
    ctl_print_geometry(state, a->mode);
}

int ctl_cmd_resize(int argc, char **argv)
{
    static const single_cmd cmd = {"resize", resize_check, resize_shape,
                                   resize_op, resize_done, false};
    dvpp_resize_geom g;

    return run_single(argc, argv, &cmd, &g);
}

/* --- crop --------------------------------------------------------------------- */

static const char *crop_check(const ctl_args *a)
{
    return a->nrois != 1 ? "need one --roi L,T,R,B" : NULL;
}

/* Without --size the ROI keeps its size; with it, it is scaled. */
static dvpp_status crop_shape(const ctl_args *a, const dvpp_image *src,
                              void *state, dvpp_pixfmt *fmt, uint32_t *w,
                              uint32_t *h, dvpp_err *err)
{
    (void)state, (void)err;
    *fmt = a->format_set ? a->format : src->format;
    *w = a->size_set ? a->size_w : dvpp_roi_width(&a->rois[0]);
    *h = a->size_set ? a->size_h : dvpp_roi_height(&a->rois[0]);
    return DVPP_OK;
}

static dvpp_status crop_op(dvpp_vpc_ctx *c, const ctl_args *a,
                           const dvpp_image *src, dvpp_image *dst, void *state,
                           dvpp_err *err)
{
    (void)state;
    return dvpp_vpc_crop_resize_paste(c, src, &a->rois[0], dst, NULL, &a->resize,
                                      err);
}

int ctl_cmd_crop(int argc, char **argv)
{
    static const single_cmd cmd = {"crop", crop_check, crop_shape, crop_op, NULL,
                                   false};
    return run_single(argc, argv, &cmd, NULL);
}

/* --- convert ---------------------------------------------------------------------- */

static const char *convert_check(const ctl_args *a)
{
    return a->format_set ? NULL : "need --format F";
}

static dvpp_status convert_shape(const ctl_args *a, const dvpp_image *src,
                                 void *state, dvpp_pixfmt *fmt, uint32_t *w,
                                 uint32_t *h, dvpp_err *err)
{
    (void)state, (void)err;
    *fmt = a->format;
    *w = src->width, *h = src->height;
    return DVPP_OK;
}

static dvpp_status convert_op(dvpp_vpc_ctx *c, const ctl_args *a,
                              const dvpp_image *src, dvpp_image *dst, void *state,
                              dvpp_err *err)
{
    (void)a, (void)state;
    return dvpp_vpc_convert(c, src, dst, err);
}

/* JPEG/PNG inputs decode to RGB: the conversion is the point. */
int ctl_cmd_convert(int argc, char **argv)
{
    static const single_cmd cmd = {"convert", convert_check, convert_shape,
                                   convert_op, NULL, true};
    return run_single(argc, argv, &cmd, NULL);
}

/* --- make-border ---------------------------------------------------------------- */

static const char *border_check(const ctl_args *a)
{
    return a->margins_set ? NULL : "need --margins T,B,L,R";
}

static dvpp_status border_shape(const ctl_args *a, const dvpp_image *src,
                                void *state, dvpp_pixfmt *fmt, uint32_t *w,
                                uint32_t *h, dvpp_err *err)
{
    (void)state, (void)err;
    *fmt = src->format;
    *w = src->width + a->border.left + a->border.right;
    *h = src->height + a->border.top + a->border.bottom;
    return DVPP_OK;
}

static dvpp_status border_op(dvpp_vpc_ctx *c, const ctl_args *a,
                             const dvpp_image *src, dvpp_image *dst, void *state,
                             dvpp_err *err)
{
    (void)state;
    return dvpp_vpc_make_border(c, src, dst, &a->border, err);
}

int ctl_cmd_make_border(int argc, char **argv)
{
    static const single_cmd cmd = {"make-border", border_check, border_shape,
                                   border_op, NULL, false};
    return run_single(argc, argv, &cmd, NULL);
}

dvpp_status ctl_write_batch(const char *pattern, const dvpp_image *dsts,
                            unsigned n, int quality, dvpp_err *err)
{
    char path[4096];
    const char *pct = strstr(pattern, "%d");

    if (!pct || strchr(pct + 2, '%'))
        return ctl_write_stack(pattern, dsts, n, err);
    for (unsigned i = 0; i < n; i++) {
        dvpp_status st;
        snprintf(path, sizeof(path), "%.*s%u%s", (int)(pct - pattern), pattern, i,
                 pct + 2);
        st = ctl_write_image(path, &dsts[i], quality, err);
        if (st != DVPP_OK)
            return st;
    }
    return DVPP_OK;
}

/* Group the ROIs by input (stable), as acldvpp batch calls order them. */
static dvpp_status order_rois(const ctl_args *a, uint32_t *roi_nums,
                              dvpp_roi *crops, dvpp_err *err)
{
    unsigned k = 0;

    for (unsigned i = 0; i < a->ninputs; i++) {
        roi_nums[i] = 0;
        for (unsigned r = 0; r < a->nrois; r++) {
            if (a->roi_input[r] != i)
                continue;
            crops[k++] = a->rois[r];
            roi_nums[i]++;
        }
    }
    for (unsigned r = 0; r < a->nrois; r++)
        if (a->roi_input[r] >= a->ninputs)
            return dvpp_err_set(err, DVPP_EINVAL, "roi",
                                "--roi %u:... names input %u of %u",
                                a->roi_input[r], a->roi_input[r], a->ninputs);
    return DVPP_OK;
}

int ctl_cmd_batch_crop(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    dvpp_image srcs[CTL_MAX_INPUTS] = {{0}};
    uint32_t roi_nums[CTL_MAX_INPUTS];
    dvpp_roi *crops = NULL;
    dvpp_image *dsts = NULL;
    dvpp_vpc_ctx c;
    dvpp_err err;
    dvpp_status st = DVPP_OK;
    int rc;

    if (!a)
        return 1;
    rc = ctl_parse_args(argc, argv, a);
    if (!rc && (!a->nrois || !a->size_set)) {
        fprintf(stderr, "dvppctl batch-crop: need --roi [i:]L,T,R,B ... and "
                        "--size WxH\n");
        rc = 2;
    }
    if (!rc && ctl_use_socket(a))
        rc = ctl_remote_run("batch-crop", a);
    if (rc || ctl_use_socket(a)) {
        free(a);
        return rc;
    }
    dvpp_err_clear(&err);
    ctx_from_args(&c, a);
    crops = calloc(a->nrois, sizeof(*crops));
    dsts = calloc(a->nrois, sizeof(*dsts));
    if (!crops || !dsts)
        st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "out of memory");
    if (st == DVPP_OK)
        st = order_rois(a, roi_nums, crops, &err);
    for (unsigned i = 0; i < a->ninputs && st == DVPP_OK; i++)
        st = load_input(a, i, &srcs[i], &err);
    for (unsigned k = 0; k < a->nrois && st == DVPP_OK; k++)
        st = alloc_output(a, a->format_set ? a->format : srcs[0].format, a->size_w,
                          a->size_h, &dsts[k], &err);
    if (st == DVPP_OK)
        st = dvpp_vpc_batch_crop_resize_paste(&c, srcs, a->ninputs, roi_nums,
                                              crops, dsts, NULL, &a->resize, &err);
    if (st == DVPP_OK)
        st = ctl_write_batch(a->out, dsts, a->nrois, a->quality, &err);
    rc = st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
    for (unsigned i = 0; i < a->ninputs; i++)
        dvpp_image_free(&srcs[i]);
    for (unsigned k = 0; dsts && k < a->nrois; k++)
        dvpp_image_free(&dsts[k]);
    free(crops);
    free(dsts);
    dvpp_vpc_ctx_fini(&c);
    free(a);
    return rc;
}
