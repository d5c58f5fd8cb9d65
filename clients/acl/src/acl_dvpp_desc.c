/* acl_dvpp_desc.c: the picture, batch, ROI, resize, JPEGE, border, LUT,
 * histogram and stream descriptions, their setters and getters.
 *
 * Rules (reference §4.3, §5.10): a new description is zeroed (or holds the
 * documented default); a setter given a NULL or destroyed description
 * answers ACL_ERROR_INVALID_PARAM, a getter its default; a Destroy of NULL
 * is a success, of a destroyed or foreign pointer ACL_ERROR_INVALID_PARAM.
 * Border configs, LUT maps and histograms exist on the 310P only: on the
 * 310 their Create returns NULL and the rest ACL_ERROR_FEATURE_UNSUPPORTED. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl_dvpp_int.h"

/* Allocate @size zeroed bytes and register them as @kind; NULL (with the
 * thread's message) when either fails. */
static void *new_handle(size_t size, acli_kind kind, const char *what)
{
    void *p = calloc(1, size);

    if (!p) {
        acli_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", what);
        return NULL;
    }
    if (!acli_handle_add(p, kind)) {
        free(p);
        acli_fail(ACL_ERROR_BAD_ALLOC, "%s: the handle registry cannot grow", what);
        return NULL;
    }
    return p;
}

/* Forget and free @p; NULL is a success. */
static aclError free_handle(void *p, acli_kind kind, const char *what)
{
    if (!p)
        return ACL_SUCCESS;
    if (!acli_handle_remove(p, kind))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: %p is not a live description (destroyed twice, or "
                         "another kind)", what, p);
    free(p);
    return ACL_SUCCESS;
}

static aclError bad_handle(const char *what, const char *name)
{
    return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL or destroyed", what, name);
}

static bool desc_on_310(void)
{
    return acli_profile() == DVPP_PROFILE_ASCEND310;
}

static aclError desc_only_310p(const char *what)
{
    return acli_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
                     "%s is not supported on Ascend310 (Ascend310P only)", what);
}

/* --- picture description ------------------------------------------------------ */

bool acli_pic_ok(const acldvppPicDesc *d)
{
    return acli_handle_ok(d, ACLI_PIC_DESC);
}

acldvppPicDesc *acldvppCreatePicDesc(void)
{
    acldvppPicDesc *d = new_handle(sizeof(acldvppPicDesc), ACLI_PIC_DESC,
                                   "acldvppCreatePicDesc");

    if (d)
        atomic_init(&d->refs, 1);
    return d;
}

static void batch_release(acldvppBatchPicDesc *b)
{
    if (atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    free(b->pics);
    free(b);
}

void acli_pic_hold(acldvppPicDesc *d)
{
    if (d && d->batch)
        atomic_fetch_add(&d->batch->refs, 1);
    else if (d)
        atomic_fetch_add(&d->refs, 1);
}

void acli_pic_release(acldvppPicDesc *d)
{
    if (d && d->batch)
        batch_release(d->batch);
    else if (d && atomic_fetch_sub(&d->refs, 1) == 1)
        free(d);
}

aclError acldvppDestroyPicDesc(acldvppPicDesc *picDesc)
{
    if (picDesc && acli_pic_ok(picDesc) && picDesc->batch)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppDestroyPicDesc: %p belongs to a batch picture "
                         "description (acldvppGetPicDesc lends it); destroy the batch",
                         (void *)picDesc);
    if (!picDesc)
        return ACL_SUCCESS;
    if (!acli_handle_remove(picDesc, ACLI_PIC_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppDestroyPicDesc: %p is not a live description (destroyed "
                         "twice, or another kind)", (void *)picDesc);
    acli_pic_release(picDesc); /* freed now, or by the last task holding it */
    return ACL_SUCCESS;
}

aclError acldvppSetPicDescData(acldvppPicDesc *picDesc, void *dataDev)
{
    if (!acli_pic_ok(picDesc))
        return bad_handle("acldvppSetPicDescData", "picDesc");
    if (!dataDev)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acldvppSetPicDescData: dataDev is NULL");
    picDesc->data = dataDev;
    return ACL_SUCCESS;
}

/* The uint32_t setters of a picture description differ only in the field. */
#define PIC_SETTER(fn, field, type)                                   \
    aclError fn(acldvppPicDesc *picDesc, type v)                      \
    {                                                                 \
        if (!acli_pic_ok(picDesc))                                    \
            return bad_handle(#fn, "picDesc");                        \
        picDesc->field = v;                                           \
        return ACL_SUCCESS;                                           \
    }
#define PIC_GETTER(fn, field, type, dflt)                             \
    type fn(const acldvppPicDesc *picDesc)                            \
    {                                                                 \
        return acli_pic_ok(picDesc) ? picDesc->field : (dflt);        \
    }

PIC_SETTER(acldvppSetPicDescSize, size, uint32_t)
PIC_SETTER(acldvppSetPicDescFormat, format, acldvppPixelFormat)
PIC_SETTER(acldvppSetPicDescWidth, width, uint32_t)
PIC_SETTER(acldvppSetPicDescHeight, height, uint32_t)
PIC_SETTER(acldvppSetPicDescWidthStride, width_stride, uint32_t)
PIC_SETTER(acldvppSetPicDescHeightStride, height_stride, uint32_t)
PIC_SETTER(acldvppSetPicDescRetCode, ret_code, uint32_t)
PIC_GETTER(acldvppGetPicDescData, data, void *, NULL)
PIC_GETTER(acldvppGetPicDescSize, size, uint32_t, 0)
PIC_GETTER(acldvppGetPicDescFormat, format, acldvppPixelFormat, PIXEL_FORMAT_YUV_400)
PIC_GETTER(acldvppGetPicDescWidth, width, uint32_t, 0)
PIC_GETTER(acldvppGetPicDescHeight, height, uint32_t, 0)
PIC_GETTER(acldvppGetPicDescWidthStride, width_stride, uint32_t, 0)
PIC_GETTER(acldvppGetPicDescHeightStride, height_stride, uint32_t, 0)
PIC_GETTER(acldvppGetPicDescRetCode, ret_code, uint32_t, 0)

/* --- batch picture description ------------------------------------------------- */

/* Forget the first @n elements of @b. */
static void forget_elements(acldvppBatchPicDesc *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        acli_handle_remove(&b->pics[i], ACLI_PIC_DESC);
}

acldvppBatchPicDesc *acldvppCreateBatchPicDesc(uint32_t batchSize)
{
    acldvppBatchPicDesc *b;
    uint32_t i;

    if (batchSize == 0 || batchSize > ACLI_BATCH_MAX) {
        acli_fail(ACL_ERROR_INVALID_PARAM,
                  "acldvppCreateBatchPicDesc: batchSize(%u) should be between [1, %u]",
                  batchSize, ACLI_BATCH_MAX);
        return NULL;
    }
    b = calloc(1, sizeof(*b));
    if (b)
        b->pics = calloc(batchSize, sizeof(*b->pics));
    if (!b || !b->pics)
        goto err_nomem;
    b->count = batchSize;
    atomic_init(&b->refs, 1);
    for (i = 0; i < batchSize; i++) {
        b->pics[i].batch = b;
        if (!acli_handle_add(&b->pics[i], ACLI_PIC_DESC))
            goto err_forget;
    }
    if (!acli_handle_add(b, ACLI_BATCH_PIC_DESC))
        goto err_forget;
    return b;

err_forget:
    forget_elements(b, i);
    acli_fail(ACL_ERROR_BAD_ALLOC,
              "acldvppCreateBatchPicDesc: the handle registry cannot grow");
    free(b->pics);
    free(b);
    return NULL;
err_nomem:
    if (b)
        free(b->pics);
    free(b);
    acli_fail(ACL_ERROR_BAD_ALLOC, "acldvppCreateBatchPicDesc: out of memory");
    return NULL;
}

acldvppPicDesc *acldvppGetPicDesc(acldvppBatchPicDesc *batchPicDesc, uint32_t index)
{
    if (!acli_handle_ok(batchPicDesc, ACLI_BATCH_PIC_DESC)) {
        bad_handle("acldvppGetPicDesc", "batchPicDesc");
        return NULL;
    }
    if (index >= batchPicDesc->count) {
        acli_fail(ACL_ERROR_INVALID_PARAM,
                  "acldvppGetPicDesc: index(%u) should be smaller than batchSize(%u)",
                  index, batchPicDesc->count);
        return NULL;
    }
    return &batchPicDesc->pics[index];
}

aclError acldvppDestroyBatchPicDesc(acldvppBatchPicDesc *batchPicDesc)
{
    if (!batchPicDesc)
        return ACL_SUCCESS;
    if (!acli_handle_remove(batchPicDesc, ACLI_BATCH_PIC_DESC))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppDestroyBatchPicDesc: %p is not a live batch picture "
                         "description", (void *)batchPicDesc);
    forget_elements(batchPicDesc, batchPicDesc->count);
    batch_release(batchPicDesc); /* freed now, or by the last task holding it */
    return ACL_SUCCESS;
}

/* --- ROI ----------------------------------------------------------------------------- */

static aclError check_roi_value(const char *what, const char *name, uint32_t v)
{
    if (v > ACLI_ROI_MAX)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %s(%u) should not be larger than %u",
                         what, name, v, ACLI_ROI_MAX);
    return ACL_SUCCESS;
}

static aclError desc_check_roi(const char *what, uint32_t l, uint32_t r, uint32_t t, uint32_t b)
{
    aclError e = check_roi_value(what, "left", l);

    if (e == ACL_SUCCESS)
        e = check_roi_value(what, "right", r);
    if (e == ACL_SUCCESS)
        e = check_roi_value(what, "top", t);
    if (e == ACL_SUCCESS)
        e = check_roi_value(what, "bottom", b);
    return e;
}

acldvppRoiConfig *acldvppCreateRoiConfig(uint32_t left, uint32_t right, uint32_t top,
                                         uint32_t bottom)
{
    acldvppRoiConfig *r;

    if (desc_check_roi("acldvppCreateRoiConfig", left, right, top, bottom) != ACL_SUCCESS)
        return NULL;
    r = new_handle(sizeof(*r), ACLI_ROI_CONFIG, "acldvppCreateRoiConfig");
    if (r)
        *r = (acldvppRoiConfig){left, right, top, bottom};
    return r;
}

aclError acldvppDestroyRoiConfig(acldvppRoiConfig *roiConfig)
{
    return free_handle(roiConfig, ACLI_ROI_CONFIG, "acldvppDestroyRoiConfig");
}

#define ROI_SETTER(fn, field)                                                   \
    aclError fn(acldvppRoiConfig *config, uint32_t v)                           \
    {                                                                           \
        if (!acli_handle_ok(config, ACLI_ROI_CONFIG))                           \
            return bad_handle(#fn, "config");                                   \
        if (check_roi_value(#fn, #field, v) != ACL_SUCCESS)                     \
            return ACL_ERROR_INVALID_PARAM;                                     \
        config->field = v;                                                      \
        return ACL_SUCCESS;                                                     \
    }

ROI_SETTER(acldvppSetRoiConfigLeft, left)
ROI_SETTER(acldvppSetRoiConfigRight, right)
ROI_SETTER(acldvppSetRoiConfigTop, top)
ROI_SETTER(acldvppSetRoiConfigBottom, bottom)

aclError acldvppSetRoiConfig(acldvppRoiConfig *config, uint32_t left, uint32_t right,
                             uint32_t top, uint32_t bottom)
{
    if (!acli_handle_ok(config, ACLI_ROI_CONFIG))
        return bad_handle("acldvppSetRoiConfig", "config");
    if (desc_check_roi("acldvppSetRoiConfig", left, right, top, bottom) != ACL_SUCCESS)
        return ACL_ERROR_INVALID_PARAM;
    *config = (acldvppRoiConfig){left, right, top, bottom};
    return ACL_SUCCESS;
}

/* --- resize and JPEGE configs ------------------------------------------------------- */

acldvppResizeConfig *acldvppCreateResizeConfig(void)
{
    return new_handle(sizeof(acldvppResizeConfig), ACLI_RESIZE_CONFIG,
                      "acldvppCreateResizeConfig");
}

aclError acldvppDestroyResizeConfig(acldvppResizeConfig *resizeConfig)
{
    return free_handle(resizeConfig, ACLI_RESIZE_CONFIG, "acldvppDestroyResizeConfig");
}

aclError acldvppSetResizeConfigInterpolation(acldvppResizeConfig *resizeConfig,
                                             uint32_t interpolation)
{
    uint32_t max = desc_on_310() ? 4 : 2;

    if (!acli_handle_ok(resizeConfig, ACLI_RESIZE_CONFIG))
        return bad_handle("acldvppSetResizeConfigInterpolation", "resizeConfig");
    if (interpolation > max)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppSetResizeConfigInterpolation: resize interpolation(%u) "
                         "should be between [0, %u] on %s", interpolation, max,
                         desc_on_310() ? "Ascend310" : "Ascend310P");
    resizeConfig->interpolation = interpolation;
    return ACL_SUCCESS;
}

uint32_t acldvppGetResizeConfigInterpolation(const acldvppResizeConfig *resizeConfig)
{
    return acli_handle_ok(resizeConfig, ACLI_RESIZE_CONFIG) ? resizeConfig->interpolation
                                                            : 0;
}

acldvppJpegeConfig *acldvppCreateJpegeConfig(void)
{
    return new_handle(sizeof(acldvppJpegeConfig), ACLI_JPEGE_CONFIG,
                      "acldvppCreateJpegeConfig");
}

aclError acldvppDestroyJpegeConfig(acldvppJpegeConfig *jpegeConfig)
{
    return free_handle(jpegeConfig, ACLI_JPEGE_CONFIG, "acldvppDestroyJpegeConfig");
}

aclError acldvppSetJpegeConfigLevel(acldvppJpegeConfig *jpegeConfig, uint32_t level)
{
    if (!acli_handle_ok(jpegeConfig, ACLI_JPEGE_CONFIG))
        return bad_handle("acldvppSetJpegeConfigLevel", "jpegeConfig");
    if (level > 100)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppSetJpegeConfigLevel: level(%u) should be between [0, 100]",
                         level);
    jpegeConfig->level = level;
    return ACL_SUCCESS;
}

uint32_t acldvppGetJpegeConfigLevel(const acldvppJpegeConfig *jpegeConfig)
{
    return acli_handle_ok(jpegeConfig, ACLI_JPEGE_CONFIG) ? jpegeConfig->level : 0;
}

/* --- border config (310P) -------------------------------------------------------------- */

acldvppBorderConfig *acldvppCreateBorderConfig(void)
{
    if (desc_on_310()) {
        desc_only_310p("acldvppCreateBorderConfig");
        return NULL;
    }
    return new_handle(sizeof(acldvppBorderConfig), ACLI_BORDER_CONFIG,
                      "acldvppCreateBorderConfig");
}

aclError acldvppDestroyBorderConfig(acldvppBorderConfig *borderConfig)
{
    if (desc_on_310())
        return desc_only_310p("acldvppDestroyBorderConfig");
    return free_handle(borderConfig, ACLI_BORDER_CONFIG, "acldvppDestroyBorderConfig");
}

/* The checks every border setter makes first. */
static aclError border_settable(const acldvppBorderConfig *b, const char *what)
{
    if (desc_on_310())
        return desc_only_310p(what);
    if (!acli_handle_ok(b, ACLI_BORDER_CONFIG))
        return bad_handle(what, "borderConfig");
    return ACL_SUCCESS;
}

aclError acldvppSetBorderConfigValue(acldvppBorderConfig *borderConfig, uint32_t index,
                                     double value)
{
    aclError e = border_settable(borderConfig, "acldvppSetBorderConfigValue");

    if (e != ACL_SUCCESS)
        return e;
    if (index >= ACLI_BORDER_VALUES)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppSetBorderConfigValue: index(%u) should be smaller than %u",
                         index, ACLI_BORDER_VALUES);
    if (!isfinite(value))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppSetBorderConfigValue: value is not a finite number");
    borderConfig->value[index] = value;
    return ACL_SUCCESS;
}

aclError acldvppSetBorderConfigBorderType(acldvppBorderConfig *borderConfig,
                                          acldvppBorderType borderType)
{
    aclError e = border_settable(borderConfig, "acldvppSetBorderConfigBorderType");

    if (e != ACL_SUCCESS)
        return e;
    if ((unsigned)borderType > BORDER_REFLECT_101)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppSetBorderConfigBorderType: borderType(%d) should be "
                         "between [0, 3]", (int)borderType);
    borderConfig->type = borderType;
    return ACL_SUCCESS;
}

#define BORDER_SETTER(fn, field)                                      \
    aclError fn(acldvppBorderConfig *borderConfig, uint32_t v)        \
    {                                                                 \
        aclError e = border_settable(borderConfig, #fn);              \
        if (e == ACL_SUCCESS)                                         \
            borderConfig->field = v;                                  \
        return e;                                                     \
    }
#define BORDER_GETTER(fn, field)                                                  \
    uint32_t fn(const acldvppBorderConfig *borderConfig)                          \
    {                                                                             \
        return acli_handle_ok(borderConfig, ACLI_BORDER_CONFIG) ? borderConfig->field \
                                                                : 0;              \
    }

BORDER_SETTER(acldvppSetBorderConfigTop, top)
BORDER_SETTER(acldvppSetBorderConfigBottom, bottom)
BORDER_SETTER(acldvppSetBorderConfigLeft, left)
BORDER_SETTER(acldvppSetBorderConfigRight, right)
BORDER_GETTER(acldvppGetBorderConfigTop, top)
BORDER_GETTER(acldvppGetBorderConfigBottom, bottom)
BORDER_GETTER(acldvppGetBorderConfigLeft, left)
BORDER_GETTER(acldvppGetBorderConfigRight, right)

double acldvppGetBorderConfigValue(const acldvppBorderConfig *borderConfig, uint32_t index)
{
    if (!acli_handle_ok(borderConfig, ACLI_BORDER_CONFIG) || index >= ACLI_BORDER_VALUES)
        return -1.0;
    return borderConfig->value[index];
}

acldvppBorderType acldvppGetBorderConfigBorderType(const acldvppBorderConfig *borderConfig)
{
    return acli_handle_ok(borderConfig, ACLI_BORDER_CONFIG) ? borderConfig->type
                                                            : BORDER_CONSTANT;
}

/* --- LUT map and histogram (310P) ---------------------------------------------------------- */

acldvppLutMap *acldvppCreateLutMap(void)
{
    acldvppLutMap *m;

    if (desc_on_310()) {
        desc_only_310p("acldvppCreateLutMap");
        return NULL;
    }
    m = new_handle(sizeof(*m), ACLI_LUT_MAP, "acldvppCreateLutMap");
    if (!m)
        return NULL;
    m->dims = ACLI_LUT_DIMS;
    for (uint32_t d = 0; d < ACLI_LUT_DIMS; d++) /* identity until a program fills it */
        for (uint32_t i = 0; i < ACLI_LUT_LEN; i++)
            m->data[d][i] = (uint8_t)i;
    return m;
}

aclError acldvppDestroyLutMap(acldvppLutMap *lutMap)
{
    if (desc_on_310())
        return desc_only_310p("acldvppDestroyLutMap");
    return free_handle(lutMap, ACLI_LUT_MAP, "acldvppDestroyLutMap");
}

uint32_t acldvppGetLutMapDims(const acldvppLutMap *lutMap)
{
    return acli_handle_ok(lutMap, ACLI_LUT_MAP) ? lutMap->dims : 0;
}

aclError acldvppGetLutMapData(const acldvppLutMap *lutMap, uint32_t dim, uint8_t **data,
                              uint32_t *len)
{
    if (desc_on_310())
        return desc_only_310p("acldvppGetLutMapData");
    if (!acli_handle_ok(lutMap, ACLI_LUT_MAP))
        return bad_handle("acldvppGetLutMapData", "lutMap");
    if (!data || !len)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acldvppGetLutMapData: data or len is NULL");
    if (dim >= lutMap->dims)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppGetLutMapData: dim(%u) should be smaller than %u", dim,
                         lutMap->dims);
    /* The program reads and may fill the map through this pointer. */
    *data = (uint8_t *)lutMap->data[dim];
    *len = ACLI_LUT_LEN;
    return ACL_SUCCESS;
}

acldvppHist *acldvppCreateHist(void)
{
    acldvppHist *h;

    if (desc_on_310()) {
        desc_only_310p("acldvppCreateHist");
        return NULL;
    }
    h = new_handle(sizeof(*h), ACLI_HIST, "acldvppCreateHist");
    if (h)
        h->dims = ACLI_HIST_DIMS;
    return h;
}

aclError acldvppDestroyHist(acldvppHist *hist)
{
    if (desc_on_310())
        return desc_only_310p("acldvppDestroyHist");
    return free_handle(hist, ACLI_HIST, "acldvppDestroyHist");
}

aclError acldvppClearHist(acldvppHist *hist)
{
    if (desc_on_310())
        return desc_only_310p("acldvppClearHist");
    if (!acli_handle_ok(hist, ACLI_HIST))
        return bad_handle("acldvppClearHist", "hist");
    memset(hist->data, 0, sizeof(hist->data));
    hist->ret_code = 0;
    return ACL_SUCCESS;
}

uint32_t acldvppGetHistDims(acldvppHist *hist)
{
    return acli_handle_ok(hist, ACLI_HIST) ? hist->dims : 0;
}

aclError acldvppGetHistData(acldvppHist *hist, uint32_t dim, uint32_t **data, uint16_t *len)
{
    if (desc_on_310())
        return desc_only_310p("acldvppGetHistData");
    if (!acli_handle_ok(hist, ACLI_HIST))
        return bad_handle("acldvppGetHistData", "hist");
    if (!data || !len)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "acldvppGetHistData: data or len is NULL");
    if (dim >= hist->dims)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppGetHistData: dim(%u) should be smaller than %u", dim,
                         hist->dims);
    *data = hist->data[dim];
    *len = (uint16_t)ACLI_HIST_LEN;
    return ACL_SUCCESS;
}

uint32_t acldvppGetHistRetCode(acldvppHist *hist)
{
    return acli_handle_ok(hist, ACLI_HIST) ? hist->ret_code : 0;
}

/* --- stream description -------------------------------------------------------------------- */

acldvppStreamDesc *acldvppCreateStreamDesc(void)
{
    return new_handle(sizeof(acldvppStreamDesc), ACLI_STREAM_DESC,
                      "acldvppCreateStreamDesc");
}

aclError acldvppDestroyStreamDesc(acldvppStreamDesc *streamDesc)
{
    return free_handle(streamDesc, ACLI_STREAM_DESC, "acldvppDestroyStreamDesc");
}

#define STREAM_SETTER(fn, field, type)                                \
    aclError fn(acldvppStreamDesc *streamDesc, type v)                \
    {                                                                 \
        if (!acli_handle_ok(streamDesc, ACLI_STREAM_DESC))            \
            return bad_handle(#fn, "streamDesc");                     \
        streamDesc->field = v;                                        \
        return ACL_SUCCESS;                                           \
    }
#define STREAM_GETTER(fn, field, type, dflt)                                      \
    type fn(const acldvppStreamDesc *streamDesc)                                  \
    {                                                                             \
        return acli_handle_ok(streamDesc, ACLI_STREAM_DESC) ? streamDesc->field : (dflt); \
    }

STREAM_SETTER(acldvppSetStreamDescData, data, void *)
STREAM_SETTER(acldvppSetStreamDescSize, size, uint32_t)
STREAM_SETTER(acldvppSetStreamDescTimestamp, timestamp, uint64_t)
STREAM_SETTER(acldvppSetStreamDescRetCode, ret_code, uint32_t)
STREAM_SETTER(acldvppSetStreamDescEos, eos, uint8_t)
STREAM_GETTER(acldvppGetStreamDescData, data, void *, NULL)
STREAM_GETTER(acldvppGetStreamDescSize, size, uint32_t, 0)
STREAM_GETTER(acldvppGetStreamDescFormat, format, acldvppStreamFormat, H265_MAIN_LEVEL)
STREAM_GETTER(acldvppGetStreamDescTimestamp, timestamp, uint64_t, 0)
STREAM_GETTER(acldvppGetStreamDescRetCode, ret_code, uint32_t, 0)
STREAM_GETTER(acldvppGetStreamDescEos, eos, uint8_t, 0)

aclError acldvppSetStreamDescFormat(acldvppStreamDesc *streamDesc, acldvppStreamFormat format)
{
    if (!acli_handle_ok(streamDesc, ACLI_STREAM_DESC))
        return bad_handle("acldvppSetStreamDescFormat", "streamDesc");
    if ((unsigned)format > H264_HIGH_LEVEL)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "acldvppSetStreamDescFormat: format(%d) should be between [0, 3]",
                         (int)format);
    streamDesc->format = format;
    return ACL_SUCCESS;
}
