/* acl_dvpp_vpc.c: the VPC calls: resize, crop, crop-resize, crop-and-paste,
 * crop-resize-paste, their four batch forms, and the 310P-only
 * batch-crop-resize-make-border, make-border, convert-colour and pyr-down
 * (EqualizeHist and CalcHist: ACL_ERROR_FEATURE_UNSUPPORTED, libdvpp has
 * no histogram operation).
 *
 * Every call runs libdvpp's own VPC checks (dvpp_vpc_check_*) for the
 * profile at call time, so DVPP's texts reach aclGetRecentErrMsg and
 * nothing bad is queued; the task runs the same libdvpp operation dvppctl
 * runs (parity ascend, --ascend-mode = the resize config's interpolation,
 * 0 without one), in the stream's VPC context with the channel's CSC. */
#include <stdlib.h>
#include <string.h>

#include "acl_dvpp_int.h"
#include "dvpp_border.h"
#include "dvpp_cpu.h"
#include "dvpp_device.h"

typedef enum vpc_op {
    OP_CROP_RESIZE_PASTE,
    OP_CROP_RESIZE_BORDER, /* crop, resize into dst minus the margins, border */
    OP_CONVERT,
    OP_BORDER,
    OP_PYRDOWN,
} vpc_op;

typedef struct vpc_item {
    acli_pic src, dst;
    acldvppPicDesc *dst_desc; /* written back when the task runs */
    dvpp_roi crop, paste;
    bool has_crop, has_paste;
    dvpp_border border;
    dvpp_image inner;         /* OP_CROP_RESIZE_BORDER: the resized picture */
} vpc_item;

typedef struct vpc_task {
    vpc_op op;
    const char *what;
    acli_dvpp_chan ch;
    dvpp_resize_opts o;
    uint32_t n;
    vpc_item items[];
} vpc_task;

static vpc_task *new_task(vpc_op op, const char *what, uint32_t n)
{
    vpc_task *v = calloc(1, sizeof(*v) + (size_t)n * sizeof(vpc_item));

    if (!v) {
        acli_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", what);
        return NULL;
    }
    v->op = op;
    v->what = what;
    v->n = n;
    dvpp_resize_opts_init(&v->o);
    v->o.parity = DVPP_PARITY_ASCEND;
    v->o.ascend_mode = 0; /* the chip's default without a resize config */
    return v;
}

static void vpc_fini_task(void *ctx, aclError status)
{
    vpc_task *v = ctx;

    (void)status;
    for (uint32_t k = 0; k < v->n; k++)
        acli_pic_release(v->items[k].dst_desc); /* held by queue() */
    free(v);
}

static bool vpc_on_310(void)
{
    return acli_profile() == DVPP_PROFILE_ASCEND310;
}

static aclError vpc_only_310p(const char *what)
{
    return acli_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                     "%s is not supported on Ascend310 (Ascend310P only)", what);
}

/* --- pyr-down: cv2.pyrDown of a YUV400 plane ---------------------------------------- */

/* OpenCV's BORDER_REFLECT_101 index (gfedcb|abcdefgh|gfedcba). */
static uint32_t reflect101(int64_t i, uint32_t n)
{
    if (n == 1)
        return 0;
    while (i < 0 || i >= (int64_t)n)
        i = i < 0 ? -i : 2 * (int64_t)n - 2 - i;
    return (uint32_t)i;
}

/* 5x5 Gaussian [1 4 6 4 1]^2 / 256 around (2x, 2y), rounded, as
 * cv2.pyrDown computes it for 8-bit data. */
static dvpp_status pyr_down(const dvpp_image *src, dvpp_image *dst, dvpp_err *err)
{
    static const int k[5] = {1, 4, 6, 4, 1};
    uint32_t *rows = calloc((size_t)dst->width * 5, sizeof(*rows));

    if (!rows)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "PyrDown: out of memory");
    for (uint32_t y = 0; y < dst->height; y++) {
        uint8_t *out = dst->data + (size_t)y * dst->width_stride;
        for (int j = 0; j < 5; j++) { /* the five source rows, filtered across */
            const uint8_t *in = src->data +
                                (size_t)reflect101(2 * (int64_t)y + j - 2, src->height) *
                                    src->width_stride;
            for (uint32_t x = 0; x < dst->width; x++) {
                uint32_t s = 0;
                for (int i = 0; i < 5; i++)
                    s += (uint32_t)k[i] * in[reflect101(2 * (int64_t)x + i - 2, src->width)];
                rows[(size_t)j * dst->width + x] = s;
            }
        }
        for (uint32_t x = 0; x < dst->width; x++) {
            uint32_t s = 0;
            for (int j = 0; j < 5; j++)
                s += (uint32_t)k[j] * rows[(size_t)j * dst->width + x];
            out[x] = (uint8_t)((s + 128) >> 8);
        }
    }
    free(rows);
    return DVPP_OK;
}

/* --- the task ------------------------------------------------------------------------------ */

static dvpp_status vpc_run_item(dvpp_vpc_ctx *c, const vpc_task *v, vpc_item *it,
                            const dvpp_image *src, dvpp_image *dst, dvpp_err *err)
{
    dvpp_image inner;
    dvpp_status st;

    switch (v->op) {
    case OP_CROP_RESIZE_PASTE:
        return dvpp_vpc_crop_resize_paste(c, src, it->has_crop ? &it->crop : NULL, dst,
                                          it->has_paste ? &it->paste : NULL, &v->o, err);
    case OP_CROP_RESIZE_BORDER:
        inner = it->inner;
        st = dvpp_image_alloc(&inner, err);
        if (st == DVPP_OK)
            st = dvpp_vpc_crop_resize_paste(c, src, &it->crop, &inner, NULL, &v->o, err);
        if (st == DVPP_OK)
            st = dvpp_vpc_make_border(c, &inner, dst, &it->border, err);
        dvpp_image_free(&inner);
        return st;
    case OP_CONVERT:
        return dvpp_vpc_convert(c, src, dst, err);
    case OP_BORDER:
        return dvpp_vpc_make_border(c, src, dst, &it->border, err);
    case OP_PYRDOWN:
        return pyr_down(src, dst, err);
    }
    return dvpp_err_set(err, DVPP_EINVAL, NULL, "unknown VPC operation");
}

static aclError run_vpc(void *ctx, acli_task *t)
{
    vpc_task *v = ctx;
    dvpp_vpc_ctx *c = acli_dvpp_vpc(t, &v->ch);
    aclError e = ACL_SUCCESS;

    if (!c)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: cannot make the VPC context", v->what);
    for (uint32_t k = 0; k < v->n && e == ACL_SUCCESS; k++) {
        vpc_item *it = &v->items[k];
        dvpp_image src, dst;
        uint8_t *sb = NULL, *db = NULL;
        dvpp_err err;
        dvpp_status st;

        dvpp_err_clear(&err);
        st = acli_pic_bind(&it->src, &src, &sb, &err);
        if (st == DVPP_OK)
            st = acli_pic_bind(&it->dst, &dst, &db, &err);
        if (st == DVPP_OK)
            st = vpc_run_item(c, v, it, &src, &dst, &err);
        acli_pic_unbind(&it->src, sb, false);
        acli_pic_unbind(&it->dst, db, st == DVPP_OK);
        if (st == DVPP_OK) {
            acli_pic_write_back(it->dst_desc, &it->dst.img, (uint32_t)it->dst.declared, 0);
            continue;
        }
        if (v->n > 1) {
            char msg[DVPP_ERR_LEN];
            memcpy(msg, err.msg, sizeof(msg));
            dvpp_err_set(&err, st, err.field, "roi %u: %s", k, msg);
        }
        e = acli_dvpp_fail(v->what, st, &err);
        acli_pic_write_ret(it->dst_desc, acli_ret_code(e));
    }
    return e;
}

/* --- argument checks ------------------------------------------------------------------------ */

/* A picture of an item, as described; its layout and bytes are checked
 * after libdvpp's VPC rules (check_items), which own the texts for bad
 * strides and sizes. */
static aclError read_pic(const acldvppPicDesc *d, const char *what, const char *side,
                         acli_pic *p)
{
    return acli_pic_read(d, what, side, p);
}

/* The bytes behind a picture cover what the task reads or writes. */
static aclError check_pic_bytes(acli_pic *p, const char *what, const char *side)
{
    aclError e = acli_pic_layout(p, what, side);

    return e == ACL_SUCCESS ? acli_pic_check_bytes(p, what, side) : e;
}

static aclError read_roi(const acldvppRoiConfig *r, const char *what, const char *name,
                         uint32_t k, dvpp_roi *out)
{
    if (!acli_handle_ok(r, ACLI_ROI_CONFIG))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %s[%u] is NULL or destroyed", what,
                         name, k);
    *out = (dvpp_roi){.left = r->left, .top = r->top, .right = r->right,
                      .bottom = r->bottom};
    return ACL_SUCCESS;
}

static aclError read_border(const acldvppBorderConfig *b, const char *what, uint32_t k,
                            dvpp_border *out)
{
    if (!acli_handle_ok(b, ACLI_BORDER_CONFIG))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: borderConfig[%u] is NULL or destroyed",
                         what, k);
    memset(out, 0, sizeof(*out));
    out->top = b->top, out->bottom = b->bottom;
    out->left = b->left, out->right = b->right;
    out->type = (dvpp_border_type)b->type;
    memcpy(out->value, b->value, sizeof(out->value));
    out->level = dvpp_simd_active();
    return ACL_SUCCESS;
}

/* The task's channel and resize options (@rc may be NULL: the chip's
 * default mode 0). */
static aclError prepare(vpc_task *v, const acldvppChannelDesc *cd,
                        const acldvppResizeConfig *rc, bool has_rc)
{
    uint32_t max = vpc_on_310() ? 4 : 2;
    aclError e = acli_dvpp_channel_use(cd, DVPP_CHNMODE_VPC, v->what, &v->ch);

    if (e != ACL_SUCCESS)
        return e;
    if (!has_rc)
        return ACL_SUCCESS;
    if (!acli_handle_ok(rc, ACLI_RESIZE_CONFIG))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: resizeConfig is NULL or destroyed",
                         v->what);
    if (rc->interpolation > max)
        return acli_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                         "%s: resize interpolation(%u) is not supported on %s (0..%u)",
                         v->what, rc->interpolation, vpc_on_310() ? "Ascend310" : "Ascend310P",
                         max);
    v->o.ascend_mode = (int)rc->interpolation;
    return ACL_SUCCESS;
}

/* libdvpp's checks for @it, with the ROI index of a batch in the text. */
static aclError check_item(const vpc_task *v, vpc_item *it, uint32_t k)
{
    dvpp_err err;
    dvpp_status st = DVPP_OK;
    uint32_t iw, ih;

    dvpp_err_clear(&err);
    switch (v->op) {
    case OP_CROP_RESIZE_PASTE:
        st = dvpp_vpc_check_crop_resize_paste(v->ch.profile, &it->src.img,
                                              it->has_crop ? &it->crop : NULL, &it->dst.img,
                                              it->has_paste ? &it->paste : NULL, &v->o, &err);
        break;
    case OP_CROP_RESIZE_BORDER: {
        const dvpp_border *b = &it->border;
        if ((uint64_t)b->left + b->right >= it->dst.img.width ||
            (uint64_t)b->top + b->bottom >= it->dst.img.height)
            return acli_fail(ACL_ERROR_INVALID_PARAM,
                             "%s: roi %u: the borders (%u, %u, %u, %u) leave nothing of "
                             "the %ux%u output", v->what, k, b->top, b->bottom, b->left,
                             b->right, it->dst.img.width, it->dst.img.height);
        iw = it->dst.img.width - b->left - b->right;
        ih = it->dst.img.height - b->top - b->bottom;
        st = dvpp_vpc_image_init(&it->inner, v->ch.profile, it->dst.img.format, iw, ih, &err);
        if (st == DVPP_OK)
            st = dvpp_vpc_check_crop_resize_paste(v->ch.profile, &it->src.img, &it->crop,
                                                  &it->inner, NULL, &v->o, &err);
        if (st == DVPP_OK)
            st = dvpp_vpc_check_make_border(v->ch.profile, &it->inner, &it->dst.img, b, &err);
        break;
    }
    case OP_CONVERT:
        st = dvpp_vpc_check_convert(v->ch.profile, &it->src.img, &it->dst.img, &err);
        break;
    case OP_BORDER:
        st = dvpp_vpc_check_make_border(v->ch.profile, &it->src.img, &it->dst.img,
                                        &it->border, &err);
        break;
    case OP_PYRDOWN:
        break;
    }
    if (st == DVPP_OK)
        return ACL_SUCCESS;
    if (v->n > 1) {
        char msg[DVPP_ERR_LEN];
        memcpy(msg, err.msg, sizeof(msg));
        dvpp_err_set(&err, st, err.field, "roi %u: %s", k, msg);
    }
    return acli_dvpp_fail(v->what, st, &err);
}

static aclError check_items(vpc_task *v)
{
    for (uint32_t k = 0; k < v->n; k++) {
        aclError e = check_item(v, &v->items[k], k);
        if (e == ACL_SUCCESS)
            e = check_pic_bytes(&v->items[k].src, v->what, "input");
        if (e == ACL_SUCCESS)
            e = check_pic_bytes(&v->items[k].dst, v->what, "output");
        if (e != ACL_SUCCESS) {
            free(v);
            return e;
        }
    }
    return ACL_SUCCESS;
}

static aclError queue(vpc_task *v, aclrtStream stream)
{
    aclError e = check_items(v);

    if (e != ACL_SUCCESS)
        return e; /* freed */
    /* The outputs stay allocated until the fini, whatever the program
     * destroys before the sync. */
    for (uint32_t k = 0; k < v->n; k++)
        acli_pic_hold(v->items[k].dst_desc);
    return acli_dvpp_submit(stream, DVPP_ENGINE_VPC, run_vpc, vpc_fini_task, v);
}

/* --- single-picture calls --------------------------------------------------------------------- */

static aclError crop_resize_paste(const char *what, acldvppChannelDesc *cd,
                                  acldvppPicDesc *in, acldvppPicDesc *out,
                                  const acldvppRoiConfig *crop, bool has_crop,
                                  const acldvppRoiConfig *paste, bool has_paste,
                                  const acldvppResizeConfig *rc, bool has_rc,
                                  aclrtStream stream)
{
    vpc_task *v = new_task(OP_CROP_RESIZE_PASTE, what, 1);
    vpc_item *it;
    aclError e;

    if (!v)
        return ACL_ERROR_BAD_ALLOC;
    it = &v->items[0];
    e = prepare(v, cd, rc, has_rc);
    if (e == ACL_SUCCESS)
        e = read_pic(in, what, "input", &it->src);
    if (e == ACL_SUCCESS)
        e = read_pic(out, what, "output", &it->dst);
    if (e == ACL_SUCCESS && has_crop)
        e = read_roi(crop, what, "cropArea", 0, &it->crop);
    if (e == ACL_SUCCESS && has_paste)
        e = read_roi(paste, what, "pasteArea", 0, &it->paste);
    if (e != ACL_SUCCESS) {
        free(v);
        return e;
    }
    it->has_crop = has_crop;
    it->has_paste = has_paste;
    it->dst_desc = out;
    return queue(v, stream);
}

aclError acldvppVpcResizeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                               acldvppPicDesc *outputDesc, acldvppResizeConfig *resizeConfig,
                               aclrtStream stream)
{
    return crop_resize_paste("acldvppVpcResizeAsync", channelDesc, inputDesc, outputDesc,
                             NULL, false, NULL, false, resizeConfig, true, stream);
}

aclError acldvppVpcCropAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                             acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea,
                             aclrtStream stream)
{
    return crop_resize_paste("acldvppVpcCropAsync", channelDesc, inputDesc, outputDesc,
                             cropArea, true, NULL, false, NULL, false, stream);
}

aclError acldvppVpcCropResizeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                   acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea,
                                   acldvppResizeConfig *resizeConfig, aclrtStream stream)
{
    return crop_resize_paste("acldvppVpcCropResizeAsync", channelDesc, inputDesc, outputDesc,
                             cropArea, true, NULL, false, resizeConfig, true, stream);
}

aclError acldvppVpcCropAndPasteAsync(acldvppChannelDesc *channelDesc,
                                     acldvppPicDesc *inputDesc, acldvppPicDesc *outputDesc,
                                     acldvppRoiConfig *cropArea, acldvppRoiConfig *pasteArea,
                                     aclrtStream stream)
{
    return crop_resize_paste("acldvppVpcCropAndPasteAsync", channelDesc, inputDesc,
                             outputDesc, cropArea, true, pasteArea, true, NULL, false, stream);
}

aclError acldvppVpcCropResizePasteAsync(acldvppChannelDesc *channelDesc,
                                        acldvppPicDesc *inputDesc, acldvppPicDesc *outputDesc,
                                        acldvppRoiConfig *cropArea,
                                        acldvppRoiConfig *pasteArea,
                                        acldvppResizeConfig *resizeConfig, aclrtStream stream)
{
    return crop_resize_paste("acldvppVpcCropResizePasteAsync", channelDesc, inputDesc,
                             outputDesc, cropArea, true, pasteArea, true, resizeConfig, true,
                             stream);
}

/* --- batch calls ---------------------------------------------------------------------------------- */

typedef struct batch_args {
    acldvppBatchPicDesc *src, *dst;
    const uint32_t *roi_nums;
    uint32_t size;
    acldvppRoiConfig *const *crops;
    acldvppRoiConfig *const *pastes;       /* NULL: no paste */
    acldvppBorderConfig *const *borders;   /* NULL: no border */
} batch_args;

/* The ROI count a batch asks for, after the shape checks of §5.7. */
static aclError batch_total(const batch_args *b, const char *what, uint32_t *total)
{
    uint64_t sum = 0;

    if (!acli_handle_ok(b->src, ACLI_BATCH_PIC_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: srcBatchPicDescs is NULL or destroyed",
                         what);
    if (!acli_handle_ok(b->dst, ACLI_BATCH_PIC_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: dstBatchPicDescs is NULL or destroyed",
                         what);
    if (!b->roi_nums)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: roiNums is NULL", what);
    if (b->size == 0 || b->size > b->src->count)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: size(%u) should be between [1, %u] (the source batch size)",
                         what, b->size, b->src->count);
    for (uint32_t i = 0; i < b->size; i++) {
        if (b->roi_nums[i] == 0 || b->roi_nums[i] > ACLI_ROI_MAX)
            return acli_fail(ACL_ERROR_INVALID_PARAM,
                             "%s: roiNums[%u](%u) should be between [1, %u]", what, i,
                             b->roi_nums[i], ACLI_ROI_MAX);
        sum += b->roi_nums[i];
    }
    if (sum > ACLI_BATCH_MAX)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: total roiNums(%llu) should not be larger than %u", what,
                         (unsigned long long)sum, ACLI_BATCH_MAX);
    if (sum > b->dst->count)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: total roiNums(%llu) is larger than the destination batch "
                         "size(%u)", what, (unsigned long long)sum, b->dst->count);
    if (!b->crops)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: cropAreas is NULL", what);
    *total = (uint32_t)sum;
    return ACL_SUCCESS;
}

static aclError batch_item(vpc_task *v, const batch_args *b, uint32_t i, uint32_t k)
{
    vpc_item *it = &v->items[k];
    aclError e = read_pic(&b->src->pics[i], v->what, "input", &it->src);

    if (e == ACL_SUCCESS)
        e = read_pic(&b->dst->pics[k], v->what, "output", &it->dst);
    if (e == ACL_SUCCESS)
        e = read_roi(b->crops[k], v->what, "cropAreas", k, &it->crop);
    if (e == ACL_SUCCESS && b->pastes)
        e = read_roi(b->pastes[k], v->what, "pasteAreas", k, &it->paste);
    if (e == ACL_SUCCESS && b->borders)
        e = read_border(b->borders[k], v->what, k, &it->border);
    it->has_crop = true;
    it->has_paste = b->pastes != NULL;
    it->dst_desc = &b->dst->pics[k];
    return e;
}

static aclError batch_async(const char *what, vpc_op op, acldvppChannelDesc *cd,
                            const batch_args *b, bool need_pastes,
                            const acldvppResizeConfig *rc, bool has_rc, aclrtStream stream)
{
    uint32_t total = 0, k = 0;
    vpc_task *v;
    aclError e = batch_total(b, what, &total);

    if (e != ACL_SUCCESS)
        return e;
    if (need_pastes && !b->pastes)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: pasteAreas is NULL", what);
    if (op == OP_CROP_RESIZE_BORDER && !b->borders)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: borderCfgs is NULL", what);
    v = new_task(op, what, total);
    if (!v)
        return ACL_ERROR_BAD_ALLOC;
    e = prepare(v, cd, rc, has_rc);
    for (uint32_t i = 0; i < b->size && e == ACL_SUCCESS; i++)
        for (uint32_t j = 0; j < b->roi_nums[i] && e == ACL_SUCCESS; j++, k++)
            e = batch_item(v, b, i, k);
    if (e != ACL_SUCCESS) {
        free(v);
        return e;
    }
    return queue(v, stream);
}

aclError acldvppVpcBatchCropAsync(acldvppChannelDesc *channelDesc,
                                  acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums,
                                  uint32_t size, acldvppBatchPicDesc *dstBatchPicDescs,
                                  acldvppRoiConfig *cropAreas[], aclrtStream stream)
{
    batch_args b = {srcBatchPicDescs, dstBatchPicDescs, roiNums, size, cropAreas, NULL, NULL};

    return batch_async("acldvppVpcBatchCropAsync", OP_CROP_RESIZE_PASTE, channelDesc, &b,
                       false, NULL, false, stream);
}

aclError acldvppVpcBatchCropResizeAsync(acldvppChannelDesc *channelDesc,
                                        acldvppBatchPicDesc *srcBatchPicDescs,
                                        uint32_t *roiNums, uint32_t size,
                                        acldvppBatchPicDesc *dstBatchPicDescs,
                                        acldvppRoiConfig *cropAreas[],
                                        acldvppResizeConfig *resizeConfig, aclrtStream stream)
{
    batch_args b = {srcBatchPicDescs, dstBatchPicDescs, roiNums, size, cropAreas, NULL, NULL};

    return batch_async("acldvppVpcBatchCropResizeAsync", OP_CROP_RESIZE_PASTE, channelDesc,
                       &b, false, resizeConfig, true, stream);
}

aclError acldvppVpcBatchCropAndPasteAsync(acldvppChannelDesc *channelDesc,
                                          acldvppBatchPicDesc *srcBatchPicDescs,
                                          uint32_t *roiNums, uint32_t size,
                                          acldvppBatchPicDesc *dstBatchPicDescs,
                                          acldvppRoiConfig *cropAreas[],
                                          acldvppRoiConfig *pasteAreas[], aclrtStream stream)
{
    batch_args b = {srcBatchPicDescs, dstBatchPicDescs, roiNums, size, cropAreas, pasteAreas,
                    NULL};

    return batch_async("acldvppVpcBatchCropAndPasteAsync", OP_CROP_RESIZE_PASTE, channelDesc,
                       &b, true, NULL, false, stream);
}

aclError acldvppVpcBatchCropResizePasteAsync(acldvppChannelDesc *channelDesc,
                                             acldvppBatchPicDesc *srcBatchPicDescs,
                                             uint32_t *roiNums, uint32_t size,
                                             acldvppBatchPicDesc *dstBatchPicDescs,
                                             acldvppRoiConfig *cropAreas[],
                                             acldvppRoiConfig *pasteAreas[],
                                             acldvppResizeConfig *resizeConfig,
                                             aclrtStream stream)
{
    batch_args b = {srcBatchPicDescs, dstBatchPicDescs, roiNums, size, cropAreas, pasteAreas,
                    NULL};

    return batch_async("acldvppVpcBatchCropResizePasteAsync", OP_CROP_RESIZE_PASTE,
                       channelDesc, &b, true, resizeConfig, true, stream);
}

aclError acldvppVpcBatchCropResizeMakeBorderAsync(
    acldvppChannelDesc *channelDesc, acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums,
    uint32_t size, acldvppBatchPicDesc *dstBatchPicDescs, acldvppRoiConfig *cropAreas[],
    acldvppBorderConfig *borderCfgs[], acldvppResizeConfig *resizeConfig, aclrtStream stream)
{
    const char *what = "acldvppVpcBatchCropResizeMakeBorderAsync";
    batch_args b = {srcBatchPicDescs, dstBatchPicDescs, roiNums, size, cropAreas, NULL,
                    borderCfgs};

    if (vpc_on_310())
        return vpc_only_310p(what);
    return batch_async(what, OP_CROP_RESIZE_BORDER, channelDesc, &b, false, resizeConfig,
                       true, stream);
}

/* --- 310P-only single calls ------------------------------------------------------------------------ */

/* An output description whose width/height (0 = the input's) and strides
 * (0 = VPC's layout) the call fills in, as ConvertColor and PyrDown do. */
static aclError read_sized_output(const acldvppPicDesc *d, const char *what, uint32_t w,
                                  uint32_t h, acli_pic *p)
{
    aclError e = acli_pic_read(d, what, "output", p);
    dvpp_image geo;
    dvpp_err err;

    if (e != ACL_SUCCESS)
        return e;
    if ((p->img.width && p->img.width != w) || (p->img.height && p->img.height != h))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: output width(%u) and height(%u) should be 0 or %ux%u", what,
                         p->img.width, p->img.height, w, h);
    if (!p->img.width_stride || !p->img.height_stride) {
        dvpp_err_clear(&err);
        if (!dvpp_pixfmt_get(p->img.format) ||
            dvpp_vpc_image_init(&geo, (dvpp_profile)acli_profile(), p->img.format, w, h,
                                &err) != DVPP_OK)
            return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH, "%s: output format %d is not "
                             "supported", what, (int)p->img.format);
        p->img.width_stride = p->img.width_stride ? p->img.width_stride : geo.width_stride;
        p->img.height_stride = p->img.height_stride ? p->img.height_stride
                                                    : geo.height_stride;
    }
    p->img.width = w;
    p->img.height = h;
    e = acli_pic_layout(p, what, "output");
    return e == ACL_SUCCESS ? acli_pic_check_bytes(p, what, "output") : e;
}

static aclError check_input_geometry(const acldvppPicDesc *d, const char *what)
{
    if (!acli_pic_ok(d))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: inputDesc is NULL or destroyed", what);
    if (!d->width || !d->height || !d->width_stride || !d->height_stride)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: input width(%u), height(%u), widthStride(%u) and "
                         "heightStride(%u) should not be 0", what, d->width, d->height,
                         d->width_stride, d->height_stride);
    return ACL_SUCCESS;
}

aclError acldvppVpcConvertColorAsync(acldvppChannelDesc *channelDesc,
                                     acldvppPicDesc *inputDesc, acldvppPicDesc *outputDesc,
                                     aclrtStream stream)
{
    const char *what = "acldvppVpcConvertColorAsync";
    vpc_task *v;
    aclError e;

    if (vpc_on_310())
        return vpc_only_310p(what);
    v = new_task(OP_CONVERT, what, 1);
    if (!v)
        return ACL_ERROR_BAD_ALLOC;
    e = prepare(v, channelDesc, NULL, false);
    if (e == ACL_SUCCESS)
        e = check_input_geometry(inputDesc, what);
    if (e == ACL_SUCCESS)
        e = read_pic(inputDesc, what, "input", &v->items[0].src);
    if (e == ACL_SUCCESS)
        e = read_sized_output(outputDesc, what, inputDesc->width, inputDesc->height,
                              &v->items[0].dst);
    if (e != ACL_SUCCESS) {
        free(v);
        return e;
    }
    v->items[0].dst_desc = outputDesc;
    return queue(v, stream);
}

aclError acldvppVpcPyrDownAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                acldvppPicDesc *outputDesc, void *reserve, aclrtStream stream)
{
    const char *what = "acldvppVpcPyrDownAsync";
    vpc_task *v;
    aclError e;

    if (vpc_on_310())
        return vpc_only_310p(what);
    if (reserve)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: reserve should be NULL", what);
    v = new_task(OP_PYRDOWN, what, 1);
    if (!v)
        return ACL_ERROR_BAD_ALLOC;
    e = prepare(v, channelDesc, NULL, false);
    if (e == ACL_SUCCESS)
        e = check_input_geometry(inputDesc, what);
    if (e == ACL_SUCCESS && (inputDesc->format != PIXEL_FORMAT_YUV_400 ||
                             !acli_pic_ok(outputDesc) ||
                             outputDesc->format != PIXEL_FORMAT_YUV_400))
        e = acli_fail(ACL_ERROR_FORMAT_NOT_MATCH,
                      "%s: PyrDown takes and writes YUV_400 only", what);
    if (e == ACL_SUCCESS)
        e = read_pic(inputDesc, what, "input", &v->items[0].src);
    if (e == ACL_SUCCESS)
        e = read_sized_output(outputDesc, what, (inputDesc->width + 1) / 2,
                              (inputDesc->height + 1) / 2, &v->items[0].dst);
    if (e != ACL_SUCCESS) {
        free(v);
        return e;
    }
    v->items[0].dst_desc = outputDesc;
    return queue(v, stream);
}

aclError acldvppVpcMakeBorderAsync(const acldvppChannelDesc *channelDesc,
                                   const acldvppPicDesc *inputDesc, acldvppPicDesc *outputDesc,
                                   const acldvppBorderConfig *borderConfig, aclrtStream stream)
{
    const char *what = "acldvppVpcMakeBorderAsync";
    vpc_task *v;
    aclError e;

    if (vpc_on_310())
        return vpc_only_310p(what);
    v = new_task(OP_BORDER, what, 1);
    if (!v)
        return ACL_ERROR_BAD_ALLOC;
    e = prepare(v, channelDesc, NULL, false);
    if (e == ACL_SUCCESS)
        e = read_pic(inputDesc, what, "input", &v->items[0].src);
    if (e == ACL_SUCCESS)
        e = read_pic(outputDesc, what, "output", &v->items[0].dst);
    if (e == ACL_SUCCESS)
        e = read_border(borderConfig, what, 0, &v->items[0].border);
    if (e != ACL_SUCCESS) {
        free(v);
        return e;
    }
    v->items[0].dst_desc = outputDesc;
    return queue(v, stream);
}

aclError acldvppVpcEqualizeHistAsync(const acldvppChannelDesc *channelDesc,
                                     const acldvppPicDesc *inputDesc, acldvppPicDesc *outputDesc,
                                     const acldvppLutMap *lutMap, aclrtStream stream)
{
    const char *what = "acldvppVpcEqualizeHistAsync";

    (void)channelDesc, (void)inputDesc, (void)outputDesc, (void)lutMap, (void)stream;
    if (vpc_on_310())
        return vpc_only_310p(what);
    return acli_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                     "%s is not supported by the CPU model (libdvpp has no histogram "
                     "equalisation; docs/acl.md)", what);
}

aclError acldvppVpcCalcHistAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *srcPicDesc,
                                 acldvppHist *hist, void *reserve, aclrtStream stream)
{
    const char *what = "acldvppVpcCalcHistAsync";

    (void)channelDesc, (void)srcPicDesc, (void)hist, (void)stream;
    if (vpc_on_310())
        return vpc_only_310p(what);
    if (reserve)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: reserve should be NULL", what);
    return acli_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                     "%s is not supported by the CPU model (libdvpp has no histogram; "
                     "docs/acl.md)", what);
}
