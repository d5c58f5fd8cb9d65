/* JPEG encode (JPEGE) through the libjpeg API.
 *
 * RGB, BGR and grey inputs go through libjpeg's colour conversion and
 * downsampling. YUV inputs are handed over as raw component planes
 * (raw_data_in), so they are never converted to RGB and back: 4:2:0
 * (NV12, NV21, I420, YV12) and packed 4:2:2 (YUYV family) are split into
 * padded per-component strips, edge samples replicated into the padding
 * as libjpeg expects.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "dvpp_jpeg.h"
#include "dvpp_pack.h"
#include "jpeg_int.h"

/* Initial output reservation; grows geometrically after that. */
#define ENC_CHUNK ((size_t)64 << 10)

typedef struct enc_err {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
} enc_err;

typedef struct buf_dest {
    struct jpeg_destination_mgr pub;
    dvpp_buf *buf;
    size_t start; /* buf->len when the encode began */
} buf_dest;

/* Encoder state; lives in the caller of the setjmp function. */
typedef struct jpeg_enc {
    struct jpeg_compress_struct cinfo;
    enc_err jerr;
    buf_dest dest;
    bool created;
    uint8_t *strip[3];
    size_t strip_size[3];
} jpeg_enc;

static void enc_error_exit(j_common_ptr c)
{
    enc_err *e = (enc_err *)c->err;

    c->err->format_message(c, e->msg);
    longjmp(e->jb, 1);
}

static void enc_emit_message(j_common_ptr c, int level)
{
    (void)c;
    (void)level; /* the encoder's warnings are not about our input */
}

/* --- destination: append into a dvpp_buf ------------------------------------ */

static void dest_grow(j_compress_ptr c, size_t used)
{
    buf_dest *d = (buf_dest *)c->dest;
    size_t extra = d->buf->cap - d->buf->len;

    d->buf->len += used;
    if (dvpp_buf_reserve(d->buf, extra > ENC_CHUNK ? extra : ENC_CHUNK) != DVPP_OK)
        ERREXIT1(c, JERR_OUT_OF_MEMORY, 0);
    d->pub.next_output_byte = d->buf->data + d->buf->len;
    d->pub.free_in_buffer = d->buf->cap - d->buf->len;
}

static void dest_init(j_compress_ptr c)
{
    dest_grow(c, 0);
}

static boolean dest_empty(j_compress_ptr c)
{
    buf_dest *d = (buf_dest *)c->dest;

    /* libjpeg calls this only with the whole buffer used. */
    dest_grow(c, d->buf->cap - d->buf->len);
    return TRUE;
}

static void dest_term(j_compress_ptr c)
{
    buf_dest *d = (buf_dest *)c->dest;

    d->buf->len = d->buf->cap - d->pub.free_in_buffer;
}

/* --- validation ------------------------------------------------------------- */

void dvpp_jpeg_encode_opts_init(dvpp_jpeg_encode_opts *o)
{
    o->quality = 95;
    o->sampling = DVPP_JPEG_420;
    o->profile = DVPP_PROFILE_NATIVE;
}

static bool is_packed422(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_YUYV || f == DVPP_PIXEL_UYVY ||
           f == DVPP_PIXEL_YVYU || f == DVPP_PIXEL_VYUY;
}

static bool is_420(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_NV12 || f == DVPP_PIXEL_NV21 ||
           f == DVPP_PIXEL_I420 || f == DVPP_PIXEL_YVU_PLANAR_420;
}

static dvpp_status check_ascend_encode(const dvpp_image *in, dvpp_profile p,
                                       dvpp_err *err)
{
    const char *chip = p == DVPP_PROFILE_ASCEND310 ? "Ascend310" : "Ascend310P";
    bool planar = in->format == DVPP_PIXEL_NV12 || in->format == DVPP_PIXEL_NV21;

    if (!planar && !is_packed422(in->format))
        return dvpp_err_set(err, DVPP_EPROFILE, "format",
                            "%s JPEGE: input format %s is not supported, it "
                            "should be YUV420SP or YUV422 packed!", chip,
                            dvpp_pixfmt_name(in->format));
    if (in->width < 32 || in->width > 8192 || in->height < 32 || in->height > 8192)
        return dvpp_err_set(err, DVPP_EPROFILE, "size",
                            "%s JPEGE: input size %ux%u should be between "
                            "[32, 8192]!", chip, in->width, in->height);
    if (in->width % 2 || (planar && in->height % 2))
        return dvpp_err_set(err, DVPP_EPROFILE, "size",
                            "%s JPEGE: input width(%u) and height(%u) should be "
                            "even!", chip, in->width, in->height);
    if (planar && (in->width_stride % 16 || in->width_stride < in->width))
        return dvpp_err_set(err, DVPP_EPROFILE, "width_stride",
                            "%s JPEGE: input widthStride(%u) should be 16 "
                            "aligned and not smaller than width(%u)!", chip,
                            in->width_stride, in->width);
    if (!planar && in->width_stride != dvpp_align_up(2ull * in->width, 16))
        return dvpp_err_set(err, DVPP_EPROFILE, "width_stride",
                            "%s JPEGE: input widthStride(%u) should be "
                            "ALIGN(2 * width, 16) = %llu!", chip,
                            in->width_stride,
                            (unsigned long long)dvpp_align_up(2ull * in->width, 16));
    if (in->height_stride != in->height &&
        (in->height_stride < in->height || in->height_stride % 16))
        return dvpp_err_set(err, DVPP_EPROFILE, "height_stride",
                            "%s JPEGE: input heightStride(%u) should equal "
                            "height(%u) or be a multiple of 16 above it!", chip,
                            in->height_stride, in->height);
    return DVPP_OK;
}

dvpp_status dvpp_jpeg_encode_check(const dvpp_image *in, const dvpp_jpeg_encode_opts *o,
                                   dvpp_err *err)
{
    dvpp_planes pl;
    dvpp_status st;
    dvpp_pixfmt f = in->format;
    int lo = o->profile == DVPP_PROFILE_ASCEND310 ? 0 : 1;

    if (o->quality < lo || o->quality > 100)
        return dvpp_err_set(err, DVPP_EINVAL, "quality",
                            "JPEG quality %d is not in [%d, 100]", o->quality, lo);
    if (!is_420(f) && !is_packed422(f) && f != DVPP_PIXEL_RGB &&
        f != DVPP_PIXEL_BGR && f != DVPP_PIXEL_GRAY && f != DVPP_PIXEL_YUV400)
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "JPEG encode takes nv12, nv21, i420, yv12, yuyv, "
                            "uyvy, yvyu, vyuy, rgb, bgr or gray, not %s",
                            dvpp_pixfmt_name(f));
    if (in->width > 65500 || in->height > 65500)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "%ux%u is larger than JPEG's 65500 limit",
                            in->width, in->height);
    if (o->sampling != DVPP_JPEG_420 && o->sampling != DVPP_JPEG_422 &&
        o->sampling != DVPP_JPEG_444)
        return dvpp_err_set(err, DVPP_EINVAL, "sampling",
                            "JPEG encode sampling must be 444, 422 or 420");
    st = dvpp_image_planes(in, &pl, err);
    if (st != DVPP_OK)
        return st;
    if (dvpp_profile_is_ascend(o->profile))
        return check_ascend_encode(in, o->profile, err);
    return DVPP_OK;
}

static dvpp_status check_encode(const dvpp_image *in, const dvpp_jpeg_encode_opts *o,
                                int *quality, dvpp_err *err)
{
    dvpp_status st = dvpp_jpeg_encode_check(in, o, err);

    /* Ascend 310 level 0 means the best quality (dvpp-aipp.md §3). */
    *quality = o->quality == 0 ? 100 : o->quality;
    if (st == DVPP_OK && !in->data)
        st = dvpp_err_set(err, DVPP_EINVAL, "image", "input image has no data");
    return st;
}

/* --- raw YUV input ------------------------------------------------------------ */

/* Copy @n samples and replicate the last one up to @padded. */
static void pad_row(uint8_t *dst, const uint8_t *src, size_t n, size_t padded)
{
    memcpy(dst, src, n);
    memset(dst + n, src[n - 1], padded - n);
}

/* Fill one iMCU strip (rows [y0, y0 + 2*DCTSIZE) of luma for 4:2:0, or
 * DCTSIZE rows for 4:2:2) of the three components from @in. */
static void fill_strips(jpeg_enc *e, const dvpp_image *in, const dvpp_planes *pl,
                        uint32_t imcu, JSAMPARRAY rows[3])
{
    const dvpp_pack_kern *pk = dvpp_pack_kern_get();
    struct jpeg_compress_struct *c = &e->cinfo;
    bool p422 = is_packed422(in->format);
    dvpp_pixfmt f = in->format;

    for (int ci = 0; ci < 3; ci++) {
        jpeg_component_info *k = &c->comp_info[ci];
        uint32_t nrows = (uint32_t)k->v_samp_factor * DCTSIZE;
        size_t padded = (size_t)k->width_in_blocks * DCTSIZE;
        uint32_t cw = ci ? (in->width + 1) / 2 : in->width;
        uint32_t ch = ci && !p422 ? (in->height + 1) / 2 : in->height;
        for (uint32_t r = 0; r < nrows; r++) {
            uint32_t y = imcu * nrows + r;
            uint8_t *dst = rows[ci][r];
            if (y >= ch)
                y = ch - 1; /* bottom padding repeats the last row */
            if (p422) {
                const uint8_t *s = dvpp_image_row(in, pl, 0, y);
                /* Byte positions of Y0, U, V in each 4-byte pair. */
                int yo = f == DVPP_PIXEL_YUYV || f == DVPP_PIXEL_YVYU ? 0 : 1;
                int uo = f == DVPP_PIXEL_YUYV ? 1 : f == DVPP_PIXEL_UYVY ? 0
                         : f == DVPP_PIXEL_YVYU ? 3 : 2;
                int vo = f == DVPP_PIXEL_YUYV ? 3 : f == DVPP_PIXEL_UYVY ? 2
                         : f == DVPP_PIXEL_YVYU ? 1 : 0;
                for (uint32_t x = 0; x < cw; x++) {
                    if (ci == 0)
                        dst[x] = s[2 * (size_t)x + (size_t)yo];
                    else
                        dst[x] = s[4 * (size_t)x + (size_t)(ci == 1 ? uo : vo)];
                }
                memset(dst + cw, dst[cw - 1], padded - cw);
            } else if (ci == 0) {
                pad_row(dst, dvpp_image_row(in, pl, 0, y), cw, padded);
            } else if (pl->count == 3) {
                bool swap = f == DVPP_PIXEL_YVU_PLANAR_420;
                int plane = (ci == 1) != swap ? 1 : 2;
                pad_row(dst, dvpp_image_row(in, pl, plane, y), cw, padded);
            }
        }
    }
    if (!p422 && pl->count == 2) { /* split interleaved chroma once per row */
        bool vu = f == DVPP_PIXEL_NV21;
        uint32_t cw = (in->width + 1) / 2, ch = (in->height + 1) / 2;
        size_t padded = (size_t)c->comp_info[1].width_in_blocks * DCTSIZE;
        for (uint32_t r = 0; r < DCTSIZE; r++) {
            uint32_t y = imcu * DCTSIZE + r;
            uint8_t *u = rows[1][r], *v = rows[2][r];
            if (y >= ch)
                y = ch - 1;
            pk->deinterleave(dvpp_image_row(in, pl, 1, y), vu ? v : u,
                             vu ? u : v, cw);
            memset(u + cw, u[cw - 1], padded - cw);
            memset(v + cw, v[cw - 1], padded - cw);
        }
    }
}

static dvpp_status alloc_enc_strips(jpeg_enc *e, JSAMPARRAY rows[3],
                                    JSAMPROW *store, dvpp_err *err)
{
    size_t used = 0;

    for (int ci = 0; ci < 3; ci++) {
        jpeg_component_info *k = &e->cinfo.comp_info[ci];
        size_t width = (size_t)k->width_in_blocks * DCTSIZE;
        size_t nrows = (size_t)k->v_samp_factor * DCTSIZE;
        e->strip_size[ci] = width * nrows;
        e->strip[ci] = dvpp_malloc(e->strip_size[ci]);
        if (!e->strip[ci])
            return dvpp_err_set(err, DVPP_ENOMEM, "size",
                                "cannot allocate JPEG encode strips");
        rows[ci] = store + used;
        for (size_t r = 0; r < nrows; r++)
            rows[ci][r] = e->strip[ci] + r * width;
        used += nrows;
    }
    return DVPP_OK;
}

/* Runs under the setjmp of run_encode. */
static dvpp_status encode_raw(jpeg_enc *e, const dvpp_image *in,
                              const dvpp_planes *pl, dvpp_err *err)
{
    struct jpeg_compress_struct *c = &e->cinfo;
    bool p422 = is_packed422(in->format);
    JSAMPARRAY rows[3];
    JSAMPROW store[3 * 2 * DCTSIZE];
    uint32_t lines = (p422 ? 1 : 2) * DCTSIZE;
    dvpp_status st;

    jpeg_set_colorspace(c, JCS_YCbCr);
    c->raw_data_in = TRUE;
    c->comp_info[0].h_samp_factor = 2;
    c->comp_info[0].v_samp_factor = p422 ? 1 : 2;
    for (int ci = 1; ci < 3; ci++)
        c->comp_info[ci].h_samp_factor = c->comp_info[ci].v_samp_factor = 1;
    jpeg_start_compress(c, TRUE);
    st = alloc_enc_strips(e, rows, store, err);
    if (st != DVPP_OK)
        return st;
    for (uint32_t imcu = 0; c->next_scanline < c->image_height; imcu++) {
        fill_strips(e, in, pl, imcu, rows);
        jpeg_write_raw_data(c, rows, lines);
    }
    jpeg_finish_compress(c);
    return DVPP_OK;
}

/* Runs under the setjmp of run_encode. */
static void encode_pixels(jpeg_enc *e, const dvpp_image *in,
                          const dvpp_planes *pl, dvpp_jpeg_sampling s)
{
    struct jpeg_compress_struct *c = &e->cinfo;

    if (c->in_color_space != JCS_GRAYSCALE) {
        c->comp_info[0].h_samp_factor = s == DVPP_JPEG_444 ? 1 : 2;
        c->comp_info[0].v_samp_factor = s == DVPP_JPEG_420 ? 2 : 1;
    }
    jpeg_start_compress(c, TRUE);
    while (c->next_scanline < c->image_height) {
        JSAMPROW row = dvpp_image_row(in, pl, 0, c->next_scanline);
        jpeg_write_scanlines(c, &row, 1);
    }
    jpeg_finish_compress(c);
}

static J_COLOR_SPACE input_space(dvpp_pixfmt f, int *components)
{
    switch (f) {
    case DVPP_PIXEL_RGB:
        *components = 3;
        return JCS_EXT_RGB;
    case DVPP_PIXEL_BGR:
        *components = 3;
        return JCS_EXT_BGR;
    case DVPP_PIXEL_GRAY:
    case DVPP_PIXEL_YUV400:
        *components = 1;
        return JCS_GRAYSCALE;
    default:
        *components = 3;
        return JCS_YCbCr;
    }
}

/* The one function that calls setjmp for encoding. */
static dvpp_status run_encode(jpeg_enc *e, const dvpp_image *in,
                              const dvpp_planes *pl, int quality,
                              dvpp_jpeg_sampling s, dvpp_buf *out, dvpp_err *err)
{
    struct jpeg_compress_struct *c = &e->cinfo;
    int comps;

    c->err = jpeg_std_error(&e->jerr.pub);
    e->jerr.pub.error_exit = enc_error_exit;
    e->jerr.pub.emit_message = enc_emit_message;
    if (setjmp(e->jerr.jb))
        return dvpp_err_set(err, e->jerr.pub.msg_code == JERR_OUT_OF_MEMORY
                                     ? DVPP_ENOMEM : DVPP_ECODEC,
                            "jpeg", "JPEG encode: %s", e->jerr.msg);
    jpeg_create_compress(c);
    e->created = true;
    e->dest.pub.init_destination = dest_init;
    e->dest.pub.empty_output_buffer = dest_empty;
    e->dest.pub.term_destination = dest_term;
    e->dest.buf = out;
    e->dest.start = out->len;
    c->dest = &e->dest.pub;
    c->image_width = in->width;
    c->image_height = in->height;
    c->in_color_space = input_space(in->format, &comps);
    c->input_components = comps;
    jpeg_set_defaults(c);
    jpeg_set_quality(c, quality, TRUE);
    c->dct_method = JDCT_ISLOW;
    if (c->in_color_space == JCS_YCbCr)
        return encode_raw(e, in, pl, err);
    encode_pixels(e, in, pl, s);
    return DVPP_OK;
}

dvpp_status dvpp_jpeg_encode(const dvpp_image *in,
                             const dvpp_jpeg_encode_opts *o, dvpp_buf *out,
                             dvpp_err *err)
{
    dvpp_planes pl;
    jpeg_enc e;
    size_t start = out->len;
    int quality = 0;
    dvpp_status st;

    st = check_encode(in, o, &quality, err);
    if (st != DVPP_OK)
        return st;
    dvpp_image_planes(in, &pl, NULL);
    memset(&e, 0, sizeof(e));
    st = run_encode(&e, in, &pl, quality, o->sampling, out, err);
    if (e.created)
        jpeg_destroy_compress(&e.cinfo);
    for (int i = 0; i < 3; i++)
        dvpp_free(e.strip[i], e.strip_size[i]);
    if (st != DVPP_OK)
        out->len = start; /* drop a partial stream */
    return st;
}

dvpp_status dvpp_jpeg_predict_enc_size(const dvpp_image *in,
                                       dvpp_profile profile, uint32_t *size,
                                       dvpp_err *err)
{
    uint64_t bytes, ws = in->width_stride, hs = in->height_stride;
    dvpp_status st;

    if (dvpp_profile_is_ascend(profile)) {
        st = check_ascend_encode(in, profile, err);
        if (st != DVPP_OK)
            return st;
    }
    if (in->format == DVPP_PIXEL_NV12 || in->format == DVPP_PIXEL_NV21)
        bytes = ws * hs * 3 / 2;
    else if (is_packed422(in->format))
        bytes = ws * hs;
    else
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "JPEGE size prediction takes YUV420SP or packed "
                            "YUV422, not %s", dvpp_pixfmt_name(in->format));
    /* 640 bytes of headers + 128 slack, then DVPP's 2 MiB granule. */
    bytes = dvpp_align_up(bytes + 640 + 128, (uint64_t)2 << 20);
    if (bytes > UINT32_MAX)
        return dvpp_err_set(err, DVPP_EOVERFLOW, "size",
                            "predicted JPEG size overflows 32 bits");
    *size = (uint32_t)bytes;
    return DVPP_OK;
}
