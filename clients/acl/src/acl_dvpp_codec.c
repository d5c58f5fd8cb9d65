/* acl_dvpp_codec.c: acldvppJpegDecodeAsync, acldvppJpegEncodeAsync and
 * acldvppPngDecodeAsync.
 *
 * At call time: the channel, the arguments, the header of the input (so a
 * JPEG JPEGD cannot decode is refused at once, with DVPP's text), the
 * output geometry the decoder will write and the bytes behind the output.
 * The task then decodes into the program's buffer with the profile's
 * strides (310: ALIGN(w,128) x ALIGN(h,16), 310P: ALIGN(w,64) x
 * ALIGN(h,16)) and writes back format, width, height, strides, size and
 * retCode, exactly the bytes `dvppctl decode --profile P --format F` writes.
 * Callers keep the input bytes alive until the stream is synchronized. */
#include <stdlib.h>
#include <string.h>

#include "acl_dvpp_int.h"
#include "dvpp_device.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"

/* Ascend JPEGD takes up to 8192 x 8192; the input already sits in memory. */
static dvpp_limits acl_limits(void)
{
    dvpp_limits lim = dvpp_limits_default();

    lim.max_encoded_bytes = UINT32_MAX;
    lim.max_pixels = (uint64_t)8192 * 8192;
    return lim;
}

/* The input buffer of a decode: set, non-empty, inside its block. */
static aclError check_input(const void *data, uint32_t size, const char *what)
{
    size_t avail;

    if (!data)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: data is NULL", what);
    if (size == 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: size is 0", what);
    avail = acli_mem_avail(data);
    if (avail && avail < size)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: size(%u) is larger than the %zu bytes from data to the end "
                         "of its block", what, size, avail);
    return ACL_SUCCESS;
}

/* --- decoders ------------------------------------------------------------------ */

typedef enum decoder { DEC_JPEG, DEC_PNG } decoder;

typedef struct decode_task {
    decoder kind;
    const uint8_t *data; /* borrowed until the sync */
    size_t len;
    acldvppPicDesc *out; /* written back when the task runs */
    acli_pic pic;        /* the output with the decoder's geometry */
    dvpp_jpeg_decode_opts jo;
    dvpp_png_decode_opts po;
    dvpp_limits lim;
} decode_task;

static aclError codec_run_decode(void *ctx, acli_task *t)
{
    decode_task *d = ctx;
    const char *what = d->kind == DEC_JPEG ? "acldvppJpegDecodeAsync"
                                           : "acldvppPngDecodeAsync";
    dvpp_image img;
    uint8_t *bounce;
    dvpp_err err;
    dvpp_status st;
    aclError e;

    dvpp_err_clear(&err);
    st = acli_pic_bind(&d->pic, &img, &bounce, &err);
    if (st == DVPP_OK && d->kind == DEC_JPEG) {
        acli_dvpp_state *s = acli_dvpp_state_get(t);

        d->jo.scratch = s ? &s->jpeg : NULL; /* NULL: per-call memory */
    }
    if (st == DVPP_OK && d->kind == DEC_JPEG)
        st = dvpp_jpeg_decode(d->data, d->len, &d->jo, &d->lim, &img, &err);
    else if (st == DVPP_OK)
        st = dvpp_png_decode(d->data, d->len, &d->po, &d->lim, &img, &err);
    acli_pic_unbind(&d->pic, bounce, st == DVPP_OK);
    if (st != DVPP_OK) {
        e = acli_dvpp_fail(what, st, &err);
        acli_pic_write_ret(d->out, acli_ret_code(e));
        return e;
    }
    acli_pic_write_back(d->out, &d->pic.img, (uint32_t)d->pic.total, 0);
    return ACL_SUCCESS;
}

static void fini_decode(void *ctx, aclError status)
{
    decode_task *d = ctx;

    (void)status;
    acli_pic_release(d->out); /* held at the call */
    free(d);
}

/* The output description of a decode, with the geometry @geo the decoder
 * will write into it: bytes checked. */
static aclError dec_plan_output(decode_task *d, const dvpp_image *geo, const char *what)
{
    aclError e;

    d->pic.img.format = geo->format;
    d->pic.img.width = geo->width;
    d->pic.img.height = geo->height;
    d->pic.img.width_stride = geo->width_stride;
    d->pic.img.height_stride = geo->height_stride;
    e = acli_pic_layout(&d->pic, what, "output");
    return e == ACL_SUCCESS ? acli_pic_check_bytes(&d->pic, what, "output") : e;
}

static aclError jpeg_geometry(decode_task *d, acldvppPixelFormat fmt, const char *what)
{
    dvpp_image geo = {0};
    dvpp_jpeg_info in;
    dvpp_err err;
    dvpp_status st;

    dvpp_jpeg_decode_opts_init(&d->jo);
    d->jo.profile = (dvpp_profile)acli_profile();
    d->jo.format = acli_dvpp_pixfmt(fmt);
    if (fmt != PIXEL_FORMAT_UNKNOWN && !dvpp_pixfmt_get(d->jo.format))
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH,
                         "%s: output format %d is not a JPEGD output", what, (int)fmt);
    dvpp_err_clear(&err);
    st = dvpp_jpeg_decode_geometry(d->data, d->len, &d->jo, &d->lim, &geo, &err);
    if (st == DVPP_OK)
        return dec_plan_output(d, &geo, what);
    if (st == DVPP_ECORRUPT)
        return acli_fail(ACL_ERROR_FAILURE, "%s: %s", what, err.msg);
    if (st == DVPP_EPROFILE && strcmp(err.field, "jpeg") == 0 &&
        dvpp_jpeg_probe(d->data, d->len, &in, NULL) == DVPP_OK)
        return acli_fail(acli_dvpp_jpeg_refusal(&in), "%s: %s", what, err.msg);
    return acli_dvpp_fail(what, st, &err);
}

static aclError png_geometry(decode_task *d, acldvppPixelFormat fmt, const char *what)
{
    dvpp_image geo = {0};
    dvpp_png_info in;
    dvpp_err err;
    dvpp_status st;

    if (fmt != PIXEL_FORMAT_RGB_888 && fmt != PIXEL_FORMAT_UNKNOWN)
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH,
                         "%s: output format %d is not supported; PNGD writes RGB_888, or "
                         "with UNKNOWN the source's RGB_888 or RGBA_8888", what, (int)fmt);
    dvpp_png_decode_opts_init(&d->po);
    d->po.profile = (dvpp_profile)acli_profile();
    d->po.format = acli_dvpp_pixfmt(fmt);
    dvpp_err_clear(&err);
    st = dvpp_png_probe(d->data, d->len, &in, &err);
    if (st != DVPP_OK)
        return acli_fail(ACL_ERROR_FAILURE, "%s: %s", what, err.msg);
    st = dvpp_png_decode_geometry_info(&in, &d->po, &geo, &err);
    if (st == DVPP_EPROFILE && strcmp(err.field, "color_type") == 0)
        return acli_fail(ACL_ERROR_FORMAT_NOT_MATCH, "%s: %s", what, err.msg);
    return st == DVPP_OK ? dec_plan_output(d, &geo, what) : acli_dvpp_fail(what, st, &err);
}

static aclError decode_async(decoder kind, acldvppChannelDesc *channelDesc,
                             const void *data, uint32_t size, acldvppPicDesc *outputDesc,
                             aclrtStream stream)
{
    const char *what = kind == DEC_JPEG ? "acldvppJpegDecodeAsync" : "acldvppPngDecodeAsync";
    acli_dvpp_chan ch;
    decode_task *d;
    aclError e;

    e = acli_dvpp_channel_use(channelDesc, kind == DEC_JPEG ? DVPP_CHNMODE_JPEGD
                                                            : DVPP_CHNMODE_PNGD,
                              what, &ch);
    if (e == ACL_SUCCESS)
        e = check_input(data, size, what);
    if (e != ACL_SUCCESS)
        return e;
    d = calloc(1, sizeof(*d));
    if (!d)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", what);
    d->kind = kind;
    d->data = data;
    d->len = size;
    d->out = outputDesc;
    d->lim = acl_limits();
    e = acli_pic_read(outputDesc, what, "output", &d->pic);
    if (e == ACL_SUCCESS)
        e = kind == DEC_JPEG ? jpeg_geometry(d, outputDesc->format, what)
                             : png_geometry(d, outputDesc->format, what);
    if (e != ACL_SUCCESS) {
        free(d);
        return e;
    }
    acli_pic_hold(outputDesc); /* written back by the task, whatever is destroyed */
    return acli_dvpp_submit(stream, kind == DEC_JPEG ? DVPP_ENGINE_JPEGD : DVPP_ENGINE_PNGD,
                            codec_run_decode, fini_decode, d);
}

aclError acldvppJpegDecodeAsync(acldvppChannelDesc *channelDesc, const void *data,
                                uint32_t size, acldvppPicDesc *outputDesc, aclrtStream stream)
{
    return decode_async(DEC_JPEG, channelDesc, data, size, outputDesc, stream);
}

aclError acldvppPngDecodeAsync(acldvppChannelDesc *channelDesc, const void *data,
                               uint32_t size, acldvppPicDesc *outputDesc, aclrtStream stream)
{
    return decode_async(DEC_PNG, channelDesc, data, size, outputDesc, stream);
}

/* --- JPEGE --------------------------------------------------------------------------- */

typedef struct encode_task {
    acldvppPicDesc *in_desc; /* its retCode is written back */
    acli_pic in;
    uint8_t *out;            /* the program's output buffer */
    uint32_t capacity;       /* min(*size, the bytes of its block) */
    uint32_t *size;          /* receives the JPEG's length */
    dvpp_jpeg_encode_opts o;
} encode_task;

static aclError codec_run_encode(void *ctx, acli_task *t)
{
    const char *what = "acldvppJpegEncodeAsync";
    encode_task *x = ctx;
    dvpp_image img;
    uint8_t *bounce;
    dvpp_buf buf;
    dvpp_err err;
    dvpp_status st;
    aclError e = ACL_SUCCESS;

    (void)t;
    dvpp_err_clear(&err);
    dvpp_buf_init(&buf);
    st = acli_pic_bind(&x->in, &img, &bounce, &err);
    if (st == DVPP_OK)
        st = dvpp_jpeg_encode(&img, &x->o, &buf, &err);
    acli_pic_unbind(&x->in, bounce, false);
    if (st != DVPP_OK)
        e = acli_dvpp_fail(what, st, &err);
    else if (buf.len > x->capacity)
        e = acli_fail(ACL_ERROR_INVALID_PARAM,
                      "%s: the %zu-byte JPEG does not fit the %u-byte output buffer "
                      "(*size; acldvppJpegPredictEncSize gives a safe size)", what, buf.len,
                      x->capacity);
    if (e == ACL_SUCCESS) {
        memcpy(x->out, buf.data, buf.len);
        *x->size = (uint32_t)buf.len;
    }
    dvpp_buf_fini(&buf);
    acli_pic_write_ret(x->in_desc, acli_ret_code(e));
    return e;
}

static void fini_encode(void *ctx, aclError status)
{
    encode_task *x = ctx;

    (void)status;
    acli_pic_release(x->in_desc); /* held at the call */
    free(x);
}

aclError acldvppJpegEncodeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                const void *data, uint32_t *size,
                                acldvppJpegeConfig *config, aclrtStream stream)
{
    const char *what = "acldvppJpegEncodeAsync";
    acli_dvpp_chan ch;
    encode_task *x;
    dvpp_image geo;
    dvpp_err err;
    dvpp_status st;
    uint32_t predicted;
    size_t avail;
    aclError e;

    e = acli_dvpp_channel_use(channelDesc, DVPP_CHNMODE_JPEGE, what, &ch);
    if (e != ACL_SUCCESS)
        return e;
    if (!data)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: data (the output buffer) is NULL",
                         what);
    if (!size)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: size is NULL", what);
    if (*size == 0)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "%s: *size is 0; it holds the output buffer's capacity", what);
    if (!acli_handle_ok(config, ACLI_JPEGE_CONFIG))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "%s: config is NULL or destroyed", what);
    x = calloc(1, sizeof(*x));
    if (!x)
        return acli_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", what);
    dvpp_jpeg_encode_opts_init(&x->o);
    x->o.profile = ch.profile;
    /* libdvpp's JPEGE rules: level 0 is the best quality (100) on the 310
     * and refused by the 310P, whose levels are 1..100. */
    x->o.quality = (int)config->level;
    e = acli_pic_read(inputDesc, what, "input", &x->in);
    if (e == ACL_SUCCESS) {
        geo = x->in.img;
        geo.data = NULL;
        dvpp_err_clear(&err);
        /* JPEGE's own rules first (format, sizes, strides: DVPP's texts and
         * FORMAT_NOT_MATCH for a format), then the encoder's. */
        st = dvpp_jpeg_predict_enc_size(&geo, ch.profile, &predicted, &err);
        if (st == DVPP_OK)
            st = dvpp_jpeg_encode_check(&geo, &x->o, &err);
        if (st != DVPP_OK)
            e = acli_dvpp_fail(what, st, &err);
    }
    if (e == ACL_SUCCESS)
        e = acli_pic_layout(&x->in, what, "input");
    if (e == ACL_SUCCESS)
        e = acli_pic_check_bytes(&x->in, what, "input");
    if (e != ACL_SUCCESS) {
        free(x);
        return e;
    }
    x->in_desc = inputDesc;
    x->out = (uint8_t *)(uintptr_t)data; /* declared const, written by JPEGE */
    avail = acli_mem_avail(data);
    x->capacity = avail && avail < *size ? (uint32_t)avail : *size;
    x->size = size;
    acli_pic_hold(inputDesc); /* its retCode is written by the task */
    return acli_dvpp_submit(stream, DVPP_ENGINE_JPEGE, codec_run_encode, fini_encode, x);
}
