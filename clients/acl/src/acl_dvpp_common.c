/* acl_dvpp_common.c: what every acldvpp*Async call shares: libdvpp
 * statuses as ACL codes, picture descriptions read at call time with the
 * bytes really behind them, bounce buffers for over-declared strides, the
 * write-back into output descriptions, the per-stream VPC context and the
 * submission of a task. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_dvpp_int.h"

/* --- status mapping --------------------------------------------------------- */

aclError acli_dvpp_fail(const char *what, dvpp_status st, const dvpp_err *err)
{
    char msg[DVPP_ERR_LEN + 96];
    const char *text = err && err->msg[0] ? err->msg : dvpp_strerror(st);
    bool format = err && strcmp(err->field, "format") == 0 &&
                  (st == DVPP_EPROFILE || st == DVPP_EFORMAT);

    snprintf(msg, sizeof(msg), "%s: %s", what, text);
    if (format)
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH, "%s", msg);
    return acli_from_dvpp(st, msg);
}

/* --- pixel formats ------------------------------------------------------------- */

dvpp_pixfmt acli_dvpp_pixfmt(acldvppPixelFormat f)
{
    unsigned v = (unsigned)f;

    /* ACL's numbering is libdvpp's for every format libdvpp lays out;
     * libdvpp's own extensions (I420, GRAY) are not ACL values. */
    if (v <= PIXEL_FORMAT_YVU_PLANAR_420 || v == PIXEL_FORMAT_YUV_SEMIPLANAR_440 ||
        v == PIXEL_FORMAT_YVU_SEMIPLANAR_440 || v == PIXEL_FORMAT_UNKNOWN)
        return (dvpp_pixfmt)v;
    return (dvpp_pixfmt)-1;
}

/* --- pictures ---------------------------------------------------------------------- */

aclError acli_pic_read(const acldvppPicDesc *d, const char *what, const char *side,
                       acli_pic *p)
{
    memset(p, 0, sizeof(*p));
    if (!acli_pic_ok(d))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %sDesc is NULL or destroyed", what,
                         side);
    if (!d->data)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: %sDesc has no data (acldvppSetPicDescData)", what, side);
    p->img.format = acli_dvpp_pixfmt(d->format);
    p->img.width = d->width;
    p->img.height = d->height;
    p->img.width_stride = d->width_stride;
    p->img.height_stride = d->height_stride;
    p->img.data = d->data;
    p->img.size = d->size;
    p->declared = d->size;
    p->avail = acli_mem_avail(d->data);
    p->usable = p->avail && p->avail < p->declared ? p->avail : p->declared;
    return ACL_SUCCESS;
}

aclError acli_pic_layout(acli_pic *p, const char *what, const char *side)
{
    dvpp_image geo = p->img;
    dvpp_planes pl;
    dvpp_err err;
    dvpp_status st;

    if (!dvpp_pixfmt_get(geo.format))
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH,
                         "%s: %s format %d is not supported", what, side,
                         (int)geo.format);
    dvpp_err_clear(&err);
    geo.data = NULL; /* the geometry alone; bytes are checked separately */
    st = dvpp_image_planes(&geo, &pl, &err);
    if (st != DVPP_OK)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %s picture %ux%u (widthStride %u, "
                         "heightStride %u): %s", what, side, geo.width, geo.height,
                         geo.width_stride, geo.height_stride, err.msg);
    p->total = pl.total;
    p->needed = 0;
    for (int i = 0; i < pl.count; i++) {
        const dvpp_plane *q = &pl.p[i];
        size_t end = q->offset + q->stride * (q->rows - 1) + q->row_bytes;
        if (end > p->needed)
            p->needed = end;
    }
    return ACL_SUCCESS;
}

aclError acli_pic_check_bytes(const acli_pic *p, const char *what, const char *side)
{
    const dvpp_image *g = &p->img;

    if (p->declared < p->needed)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: %sDesc size(%zu) should not be smaller than the %zu bytes "
                         "a %ux%u %s picture of widthStride(%u) * heightStride(%u) "
                         "needs", what, side, p->declared, p->needed, g->width,
                         g->height, dvpp_pixfmt_name(g->format), g->width_stride,
                         g->height_stride);
    if (p->avail && p->avail < p->needed)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: %sDesc data holds %zu bytes to the end of its block, the "
                         "%ux%u %s picture needs %zu", what, side, p->avail, g->width,
                         g->height, dvpp_pixfmt_name(g->format), p->needed);
    return ACL_SUCCESS;
}

dvpp_status acli_pic_bind(const acli_pic *p, dvpp_image *img, uint8_t **bounce,
                          dvpp_err *err)
{
    *img = p->img;
    *bounce = NULL;
    if (p->usable >= p->total) {
        img->size = p->usable;
        return DVPP_OK;
    }
    /* Rows the strides declare but the memory lacks: work in a buffer of
     * the whole layout holding the bytes that exist (zero after them). */
    *bounce = calloc(1, p->total);
    if (!*bounce)
        return dvpp_err_set(err, DVPP_ENOMEM, "size", "cannot allocate %zu bytes",
                            p->total);
    memcpy(*bounce, p->img.data, p->usable);
    img->data = *bounce;
    img->size = p->total;
    return DVPP_OK;
}

void acli_pic_unbind(const acli_pic *p, uint8_t *bounce, bool write_back)
{
    if (!bounce)
        return;
    if (write_back)
        memcpy(p->img.data, bounce, p->usable);
    free(bounce);
}

void acli_pic_write_back(acldvppPicDesc *d, const dvpp_image *img, uint32_t size,
                         uint32_t ret_code)
{
    if (!acli_pic_ok(d)) /* destroyed before the sync: nothing to write */
        return;
    d->format = (acldvppPixelFormat)img->format;
    d->width = img->width;
    d->height = img->height;
    d->width_stride = img->width_stride;
    d->height_stride = img->height_stride;
    d->size = size;
    d->ret_code = ret_code;
}

void acli_pic_write_ret(acldvppPicDesc *d, uint32_t ret_code)
{
    if (acli_pic_ok(d))
        d->ret_code = ret_code;
}

/* --- per-stream state and submission ---------------------------------------------------- */

static void *make_state(void)
{
    acli_dvpp_state *s = calloc(1, sizeof(*s));

    if (s) {
        dvpp_vpc_ctx_init(&s->vpc, (dvpp_profile)acli_profile());
        dvpp_scratch_init(&s->jpeg);
    }
    return s;
}

static void free_state(void *state)
{
    acli_dvpp_state *s = state;

    if (!s)
        return;
    dvpp_vpc_ctx_fini(&s->vpc);
    dvpp_scratch_fini(&s->jpeg);
    free(s);
}

acli_dvpp_state *acli_dvpp_state_get(acli_task *t)
{
    return acli_task_state(t, make_state, free_state);
}

dvpp_vpc_ctx *acli_dvpp_vpc(acli_task *t, const acli_dvpp_chan *ch)
{
    acli_dvpp_state *s = acli_dvpp_state_get(t);

    if (!s)
        return NULL;
    s->vpc.profile = ch->profile;
    s->vpc.csc.matrix = ch->matrix;
    s->vpc.csc.full_range = ch->full_range;
    return &s->vpc;
}

aclError acli_dvpp_submit(aclrtStream stream, int engine, acli_run_fn run,
                          acli_fini_fn fini, void *ctx)
{
    acli_stream *s = NULL;
    aclError e = acli_stream_get(stream, &s);

    if (e == ACL_SUCCESS)
        e = acli_submit(s, engine, run, fini, ctx);
    if (e != ACL_SUCCESS) {
        fini(ctx, e); /* not queued: the context is ours to free */
    }
    return e;
}
