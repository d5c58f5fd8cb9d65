/* acl_dvpp_info.c: acldvppJpegGetImageInfo(V2), acldvppJpegPredictDecSize,
 * acldvppJpegPredictEncSize, acldvppPngGetImageInfo and
 * acldvppPngPredictDecSize (reference §5.4-5.6) over libdvpp's header
 * probes and size predictions. Host memory in, nothing modified. */
#include <string.h>

#include "acl_dvpp_int.h"
#include "dvpp_jpeg.h"
#include "dvpp_png.h"

/* The probes parse up to @size bytes: a size past the end of the DVPP
 * block holding @data would have them read memory that is not there. */
static aclError info_check_block(const void *data, uint32_t size, const char *what)
{
    size_t avail = acli_mem_avail(data);

    if (avail && avail < size)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: size(%u) is larger than the %zu bytes from data to the end "
                         "of its block", what, size, avail);
    return ACL_SUCCESS;
}

/* --- JPEG ---------------------------------------------------------------------- */

static acldvppJpegFormat info_jpeg_format(const dvpp_jpeg_info *in)
{
    if (in->components == 1)
        return ACL_JPEG_CSS_GRAY;
    switch (in->sampling) {
    case DVPP_JPEG_444:
        return ACL_JPEG_CSS_444;
    case DVPP_JPEG_422:
        return ACL_JPEG_CSS_422;
    case DVPP_JPEG_420:
        return ACL_JPEG_CSS_420;
    case DVPP_JPEG_400:
        return ACL_JPEG_CSS_GRAY;
    case DVPP_JPEG_440:
        return ACL_JPEG_CSS_440;
    default: /* 4:1:1 and every other sampling */
        return ACL_JPEG_CSS_UNKNOWN;
    }
}

/* Probe @data as acldvppJpegGetImageInfo does: FAILURE for an unparseable
 * header. */
static aclError probe_jpeg(const void *data, uint32_t size, const char *what,
                           dvpp_jpeg_info *in)
{
    dvpp_err err;
    dvpp_status st;

    if (!data)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: data is NULL", what);
    if (size == 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: size is 0", what);
    if (info_check_block(data, size, what) != ACL_SUCCESS)
        return ACL_ERROR_INVALID_PARAM;
    dvpp_err_clear(&err);
    st = dvpp_jpeg_probe(data, size, in, &err);
    if (st != DVPP_OK)
        return acli_fail(ACL_ERROR_FAILURE, "%s: cannot parse the JPEG header: %s", what,
                         err.msg);
    return ACL_SUCCESS;
}

aclError acldvppJpegGetImageInfoV2(const void *data, uint32_t size, uint32_t *width,
                                   uint32_t *height, int32_t *components,
                                   acldvppJpegFormat *format)
{
    dvpp_jpeg_info in;
    aclError e;

    if (!width && !height && !components && !format)
        return ACL_SUCCESS;
    e = probe_jpeg(data, size, "acldvppJpegGetImageInfo", &in);
    if (e != ACL_SUCCESS)
        return e;
    /* EXIF orientations 5..8 swap the sides (display_*). */
    if (width)
        *width = in.display_width;
    if (height)
        *height = in.display_height;
    if (components)
        *components = in.components;
    if (format)
        *format = info_jpeg_format(&in);
    return ACL_SUCCESS;
}

aclError acldvppJpegGetImageInfo(const void *data, uint32_t size, uint32_t *width,
                                 uint32_t *height, int32_t *components)
{
    return acldvppJpegGetImageInfoV2(data, size, width, height, components, NULL);
}

/* The JPEGD output formats a prediction may ask for (§5.4 step 1). */
static bool jpegd_output_format(acldvppPixelFormat f)
{
    switch (f) {
    case PIXEL_FORMAT_YUV_SEMIPLANAR_420:
    case PIXEL_FORMAT_YVU_SEMIPLANAR_420:
    case PIXEL_FORMAT_YUV_SEMIPLANAR_422:
    case PIXEL_FORMAT_YVU_SEMIPLANAR_422:
    case PIXEL_FORMAT_YUV_SEMIPLANAR_444:
    case PIXEL_FORMAT_YVU_SEMIPLANAR_444:
    case PIXEL_FORMAT_YUV_SEMIPLANAR_440:
    case PIXEL_FORMAT_YVU_SEMIPLANAR_440:
    case PIXEL_FORMAT_UNKNOWN:
        return true;
    case PIXEL_FORMAT_YUV_400:
        return acli_profile() == DVPP_PROFILE_ASCEND310P;
    default:
        return false;
    }
}

aclError acli_dvpp_jpeg_refusal(const dvpp_jpeg_info *in)
{
    if (in->progressive || in->arithmetic || in->lossless || in->precision != 8)
        return ACL_ERROR_UNSUPPORTED_JPEG;
    return ACL_ERROR_FORMAT_NOT_MATCH;
}

aclError acldvppJpegPredictDecSize(const void *data, uint32_t dataSize,
                                   acldvppPixelFormat outputPixelFormat, uint32_t *decSize)
{
    const char *what = "acldvppJpegPredictDecSize";
    dvpp_jpeg_info in;
    dvpp_err err;
    dvpp_status st;
    aclError e;

    if (!decSize)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: decSize is NULL", what);
    if (!jpegd_output_format(outputPixelFormat))
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH,
                         "%s: output format %d is not a JPEGD output on %s", what,
                         (int)outputPixelFormat,
                         acli_profile() == DVPP_PROFILE_ASCEND310 ? "Ascend310"
                                                                  : "Ascend310P");
    e = probe_jpeg(data, dataSize, what, &in);
    if (e != ACL_SUCCESS)
        return e;
    dvpp_err_clear(&err);
    st = dvpp_jpeg_predict_dec_size(data, dataSize, acli_dvpp_pixfmt(outputPixelFormat),
                                    (dvpp_profile)acli_profile(), decSize, &err);
    if (st == DVPP_OK)
        return ACL_SUCCESS;
    if (st == DVPP_ECORRUPT)
        return acli_fail(ACL_ERROR_FAILURE, "%s: %s", what, err.msg);
    if (st == DVPP_EPROFILE && strcmp(err.field, "jpeg") == 0)
        return acli_fail(acli_dvpp_jpeg_refusal(&in), "%s: %s", what, err.msg);
    return acli_dvpp_fail(what, st, &err);
}

aclError acldvppJpegPredictEncSize(const acldvppPicDesc *inputDesc,
                                   const acldvppJpegeConfig *config, uint32_t *size)
{
    const char *what = "acldvppJpegPredictEncSize";
    dvpp_image img = {0};
    dvpp_err err;
    dvpp_status st;

    if (!acli_pic_ok(inputDesc))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: inputDesc is NULL or destroyed",
                         what);
    if (!acli_handle_ok(config, ACLI_JPEGE_CONFIG))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: config is NULL or destroyed", what);
    if (!size)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: size is NULL", what);
    img.format = acli_dvpp_pixfmt(inputDesc->format);
    img.width = inputDesc->width;
    img.height = inputDesc->height;
    img.width_stride = inputDesc->width_stride;
    img.height_stride = inputDesc->height_stride;
    dvpp_err_clear(&err);
    st = dvpp_jpeg_predict_enc_size(&img, (dvpp_profile)acli_profile(), size, &err);
    return st == DVPP_OK ? ACL_SUCCESS : acli_dvpp_fail(what, st, &err);
}

/* --- PNG ---------------------------------------------------------------------------- */

static const uint8_t k_png_sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};

/* The header as PNGD reads it: > 29 bytes, the signature, an IHDR. */
static aclError probe_png(const void *data, uint32_t size, const char *what,
                          dvpp_png_info *in)
{
    dvpp_err err;

    if (!data)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: data is NULL", what);
    if (size <= 29)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: size(%u) should be larger than 29 bytes", what, size);
    if (info_check_block(data, size, what) != ACL_SUCCESS)
        return ACL_ERROR_INVALID_PARAM;
    if (memcmp(data, k_png_sig, sizeof(k_png_sig)) != 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: the data has no PNG signature",
                         what);
    dvpp_err_clear(&err);
    if (dvpp_png_probe(data, size, in, &err) != DVPP_OK)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", what, err.msg);
    if (in->color_type == 3)
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH,
                         "%s: palette PNG (colour type 3) is not supported; colour "
                         "types 0, 2, 4 and 6 are", what);
    return ACL_SUCCESS;
}

aclError acldvppPngGetImageInfo(const void *data, uint32_t dataSize, uint32_t *width,
                                uint32_t *height, int32_t *components)
{
    dvpp_png_info in;
    aclError e = probe_png(data, dataSize, "acldvppPngGetImageInfo", &in);

    if (e != ACL_SUCCESS)
        return e;
    if (width)
        *width = in.width;
    if (height)
        *height = in.height;
    if (components) /* by colour type: grey 1, grey+alpha 2, RGB 3, RGBA 4 */
        *components = in.color_type == 0 ? 1 : in.color_type == 4 ? 2
                      : in.color_type == 2 ? 3 : 4;
    return ACL_SUCCESS;
}

aclError acldvppPngPredictDecSize(const void *data, uint32_t dataSize,
                                  acldvppPixelFormat outputPixelFormat, uint32_t *decSize)
{
    const char *what = "acldvppPngPredictDecSize";
    dvpp_png_info in;
    dvpp_err err;
    dvpp_status st;
    aclError e;

    if (!decSize)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: decSize is NULL", what);
    if (outputPixelFormat != PIXEL_FORMAT_RGB_888 &&
        outputPixelFormat != PIXEL_FORMAT_RGBA_8888 &&
        outputPixelFormat != PIXEL_FORMAT_UNKNOWN)
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH,
                         "%s: output format %d is not supported; PNGD writes RGB_888, "
                         "RGBA_8888 or UNKNOWN", what, (int)outputPixelFormat);
    e = probe_png(data, dataSize, what, &in);
    if (e != ACL_SUCCESS)
        return e;
    if (in.width < 32 || in.width > 4096 || in.height < 32 || in.height > 4096)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: width(%u) and height(%u) should be between [32, 4096]", what,
                         in.width, in.height);
    dvpp_err_clear(&err);
    st = dvpp_png_predict_dec_size(data, dataSize, acli_dvpp_pixfmt(outputPixelFormat),
                                   decSize, &err);
    return st == DVPP_OK ? ACL_SUCCESS : acli_dvpp_fail(what, st, &err);
}
