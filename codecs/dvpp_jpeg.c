/* JPEG decode (JPEGD) through the libjpeg API.
 *
 * A decode is planned first (dvpp_jpeg_decode_geometry does only that):
 * markers walked, profile and limits checked, output geometry fixed. Only
 * then does libjpeg run, inside one function that owns the setjmp. Two
 * paths write the pixels:
 *   - packed/grey outputs: jpeg_read_scanlines with libjpeg's own colour
 *     conversion (bit-identical to djpeg), crop_scanline + skip_scanlines
 *     for regions;
 *   - YUV outputs: jpeg_read_raw_data, i.e. the component planes before
 *     upsampling and colour conversion. When the source sampling equals the
 *     output's, rows are copied (chroma interleaved) straight into the
 *     destination; otherwise components are gathered and box-resampled.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "dvpp_jpeg.h"
#include "dvpp_orient.h"
#include "dvpp_pack.h"
#include "jpeg_int.h"

/* Margin (pixels) decoded around a region so fancy upsampling sees real
 * neighbours at the region's edges and the region is bit-identical to the
 * same pixels of a full decode. */
#define ROI_MARGIN 2

/* Rows handed to jpeg_read_scanlines per call. */
#define STRIP_ROWS 16

typedef struct jerr_ctx {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    bool stop_on_warning;
    unsigned max_scans;
    int warnings;
    char msg[JMSG_LENGTH_MAX];
    dvpp_status status; /* status for the longjmp in flight */
} jerr_ctx;

/* The plan: everything decided before libjpeg decodes a pixel. */
typedef struct jpeg_plan {
    dvpp_jpeg_info info;
    jpeg_markers mk;
    dvpp_pixfmt fmt;
    uint8_t scale;        /* n/8 */
    unsigned orient;      /* 1..8, applied */
    uint32_t sw, sh;      /* scaled, stored orientation */
    uint32_t rx, ry;      /* region in scaled stored coordinates */
    uint32_t rw, rh;
    uint32_t out_w, out_h;/* displayed output size */
    uint32_t align_w, align_h;
    bool raw;             /* YUV through raw component planes */
    bool cmyk;            /* CMYK/YCCK source converted to RGB by us */
} jpeg_plan;

/* One component plane gathered for the resampling path: samples of the
 * region's bounding box in component coordinates. */
typedef struct comp_plane {
    uint8_t *data;
    size_t size;
    uint32_t x0, y0, w, h;  /* box in component samples */
    uint32_t fx_num, fx_den;/* output pixels per sample = num/den */
    uint32_t fy_num, fy_den;
} comp_plane;

/* State of one decode. Lives in the caller of the setjmp function so its
 * fields stay valid across the longjmp. */
typedef struct jpeg_dec {
    struct jpeg_decompress_struct cinfo;
    jerr_ctx jerr;
    bool created;
    uint8_t *strip[3];       /* raw strips, or [0] = scanline strip */
    size_t strip_size[3];
    comp_plane cp[3];
    dvpp_image stored;       /* region in stored orientation (orient != 1) */
    struct jpeg_progress_mgr progress; /* scan-limit guard, per decode */
    dvpp_image *img;         /* the output; allocated late when data is NULL */
    bool own_img;            /* img->data was allocated by this decode */
    dvpp_scratch *scratch;   /* temporaries from here when set (kept) */
} jpeg_dec;

/* Scratch slots of a decode's temporaries. */
enum { SLOT_STRIP = 0, SLOT_COMP = 3, SLOT_STORED = 6 };

/* A temporary of @size bytes: from the caller's scratch (kept, never
 * freed here) or freshly allocated (freed by release_dec, which sees the
 * size it must pass back through *@size_out). */
static uint8_t *dec_temp(jpeg_dec *d, int slot, size_t size, size_t *size_out)
{
    if (d->scratch) {
        *size_out = 0; /* not ours to free */
        return dvpp_scratch_get(d->scratch, slot, size);
    }
    *size_out = size;
    return dvpp_malloc(size);
}

/* --- libjpeg callbacks ---------------------------------------------------- */

static void on_error_exit(j_common_ptr c)
{
    jerr_ctx *e = (jerr_ctx *)c->err;

    c->err->format_message(c, e->msg);
    e->status = c->err->msg_code == JERR_BAD_PRECISION ? DVPP_EUNSUPPORTED
                                                        : DVPP_ECORRUPT;
    if (c->err->msg_code == JERR_OUT_OF_MEMORY ||
        c->err->msg_code == JERR_NO_BACKING_STORE)
        e->status = DVPP_ELIMIT;
    longjmp(e->jb, 1);
}

static void on_emit_message(j_common_ptr c, int level)
{
    jerr_ctx *e = (jerr_ctx *)c->err;

    if (level >= 0)
        return; /* trace messages */
    if (e->warnings++ == 0)
        c->err->format_message(c, e->msg);
    if (e->stop_on_warning) {
        e->status = DVPP_ECORRUPT;
        longjmp(e->jb, 1);
    }
}

/* Second guard behind the marker count: libjpeg's own scan counter. */
static void on_progress(j_common_ptr c)
{
    j_decompress_ptr d = (j_decompress_ptr)c;
    jerr_ctx *e = (jerr_ctx *)c->err;

    if (d->input_scan_number > 0 && (unsigned)d->input_scan_number > e->max_scans) {
        snprintf(e->msg, sizeof(e->msg),
                 "progressive JPEG has more than max_jpeg_scans %u scans",
                 e->max_scans);
        e->status = DVPP_ELIMIT;
        longjmp(e->jb, 1);
    }
}

#define DVPP_STR_(x) #x
#define DVPP_STR(x) DVPP_STR_(x)

const char *dvpp_jpeg_library(void)
{
    return "libjpeg-turbo " DVPP_STR(LIBJPEG_TURBO_VERSION);
}

/* --- planning ------------------------------------------------------------- */

void dvpp_jpeg_decode_opts_init(dvpp_jpeg_decode_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->format = DVPP_PIXEL_RGB;
    o->scale_num = 8;
    o->profile = DVPP_PROFILE_NATIVE;
}

/* What UNKNOWN means for this source: its own sampling, V first (JPEGD). */
static dvpp_pixfmt keep_source_format(const dvpp_jpeg_info *in, dvpp_profile p)
{
    switch (in->sampling) {
    case DVPP_JPEG_444:
        return DVPP_PIXEL_YVU444SP;
    case DVPP_JPEG_422:
        return DVPP_PIXEL_YVU422SP;
    case DVPP_JPEG_440:
        return DVPP_PIXEL_YVU440SP;
    case DVPP_JPEG_400:
        /* 310 has no YUV400 output: grey becomes 4:2:0 with U=V=0x80. */
        return p == DVPP_PROFILE_ASCEND310 ? DVPP_PIXEL_NV12 : DVPP_PIXEL_YUV400;
    default:
        return DVPP_PIXEL_NV21;
    }
}

static bool is_packed_yuv(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_YUYV || f == DVPP_PIXEL_UYVY || f == DVPP_PIXEL_YVYU ||
           f == DVPP_PIXEL_VYUY || f == DVPP_PIXEL_YUV_PACKED_444;
}

static dvpp_status check_ascend_output(const jpeg_plan *pl, dvpp_profile p,
                                       dvpp_err *err)
{
    dvpp_pixfmt f = pl->fmt;
    bool ok = f == DVPP_PIXEL_NV12 || f == DVPP_PIXEL_NV21;

    if (p == DVPP_PROFILE_ASCEND310)
        ok = ok || (dvpp__jpeg_format_matches(f, pl->info.sampling) &&
                    (f == DVPP_PIXEL_YVU444SP || f == DVPP_PIXEL_YVU422SP ||
                     f == DVPP_PIXEL_YVU440SP));
    else
        ok = ok || f == DVPP_PIXEL_YUV400 ||
             dvpp__jpeg_format_matches(f, pl->info.sampling);
    if (ok)
        return DVPP_OK;
    return dvpp_err_set(err, DVPP_EPROFILE, "format",
                        "%s JPEGD: output format %s is not supported for a %s "
                        "jpeg, it should be YUV420SP (nv12/nv21), the source "
                        "sampling as YUV semi-planar, or unknown!",
                        p == DVPP_PROFILE_ASCEND310 ? "Ascend310" : "Ascend310P",
                        dvpp_pixfmt_name(f),
                        dvpp_jpeg_sampling_name(pl->info.sampling));
}

static dvpp_status resolve_format(jpeg_plan *pl, const dvpp_jpeg_decode_opts *o,
                                  dvpp_err *err)
{
    const dvpp_pixfmt_info *fi;
    dvpp_jpeg_colorspace cs = pl->info.colorspace;

    pl->fmt = o->format == DVPP_PIXEL_UNKNOWN
                  ? keep_source_format(&pl->info, o->profile)
                  : o->format;
    if (pl->fmt == DVPP_PIXEL_GRAY && dvpp_profile_is_ascend(o->profile))
        pl->fmt = DVPP_PIXEL_YUV400;
    fi = dvpp_pixfmt_get(pl->fmt);
    if (!fi || is_packed_yuv(pl->fmt))
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "JPEG decode cannot write %s; use a planar or "
                            "semi-planar YUV, grey or RGB-family format",
                            dvpp_pixfmt_name(pl->fmt));
    if (dvpp_profile_is_ascend(o->profile)) {
        dvpp_status st = check_ascend_output(pl, o->profile, err);
        if (st != DVPP_OK)
            return st;
    }
    pl->raw = fi->is_yuv && fi->planes > 1;
    pl->cmyk = cs == DVPP_JPEG_CS_CMYK || cs == DVPP_JPEG_CS_YCCK;
    if (pl->raw && cs != DVPP_JPEG_CS_YCBCR && cs != DVPP_JPEG_CS_GRAY)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "format",
                            "%s output needs a YCbCr or grey JPEG, this one is "
                            "%s-coded; ask for rgb instead",
                            dvpp_pixfmt_name(pl->fmt),
                            dvpp_jpeg_colorspace_name(cs));
    return DVPP_OK;
}

static dvpp_status plan_region(jpeg_plan *pl, const dvpp_jpeg_decode_opts *o,
                               dvpp_err *err)
{
    uint32_t dw = pl->orient >= 5 ? pl->sh : pl->sw;
    uint32_t dh = pl->orient >= 5 ? pl->sw : pl->sh;
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(pl->fmt);

    pl->rx = 0, pl->ry = 0, pl->rw = pl->sw, pl->rh = pl->sh;
    pl->out_w = dw, pl->out_h = dh;
    if (!o->has_roi)
        return DVPP_OK;
    if (o->roi.w == 0 || o->roi.h == 0 || o->roi.x >= dw || o->roi.y >= dh ||
        o->roi.w > dw - o->roi.x || o->roi.h > dh - o->roi.y)
        return dvpp_err_set(err, DVPP_EINVAL, "roi",
                            "region %u,%u %ux%u is not inside the %ux%u "
                            "decoded image", o->roi.x, o->roi.y, o->roi.w,
                            o->roi.h, dw, dh);
    pl->rx = o->roi.x, pl->ry = o->roi.y, pl->rw = o->roi.w, pl->rh = o->roi.h;
    pl->out_w = o->roi.w, pl->out_h = o->roi.h;
    dvpp_orient_rect_to_stored(pl->orient, pl->sw, pl->sh, &pl->rx, &pl->ry,
                               &pl->rw, &pl->rh);
    /* A subsampled chroma grid must start on a sample boundary, or every
     * chroma sample of the region would straddle two source samples. */
    if (pl->raw && ((fi->chroma_sx && pl->rx % 2) || (fi->chroma_sy && pl->ry % 2)))
        return dvpp_err_set(err, DVPP_EINVAL, "roi",
                            "region origin %u,%u (stored orientation) must be "
                            "even for %s output", pl->rx, pl->ry,
                            dvpp_pixfmt_name(pl->fmt));
    return DVPP_OK;
}

static void plan_alignment(jpeg_plan *pl, const dvpp_jpeg_decode_opts *o)
{
    switch (o->profile) {
    case DVPP_PROFILE_ASCEND310:
        pl->align_w = 128, pl->align_h = 16;
        break;
    case DVPP_PROFILE_ASCEND310P:
        pl->align_w = 64, pl->align_h = 16;
        /* V200 rounds odd 4:2:0 sizes down to even and reports them. */
        if (pl->fmt == DVPP_PIXEL_NV12 || pl->fmt == DVPP_PIXEL_NV21) {
            pl->out_w &= ~1u;
            pl->out_h &= ~1u;
        }
        break;
    default:
        pl->align_w = o->align_w ? o->align_w : 1;
        pl->align_h = o->align_h ? o->align_h : 1;
        break;
    }
}

static dvpp_status check_flavour(const jpeg_plan *pl, const dvpp_limits *lim,
                                 dvpp_err *err)
{
    const dvpp_jpeg_info *in = &pl->info;

    if (in->precision != 8)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "jpeg",
                            "%u-bit JPEG (data precision %u) is not supported: "
                            "dvppd decodes 8-bit JPEG only", in->precision,
                            in->precision);
    if (in->lossless)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "jpeg",
                            "lossless JPEG (SOF3) is not supported");
    if (in->components == 2 || in->components > 4)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "jpeg",
                            "JPEG with %u components is not supported",
                            in->components);
    if (in->scans > lim->max_jpeg_scans)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_jpeg_scans",
                            "JPEG has %u scans, over max_jpeg_scans %u",
                            in->scans, lim->max_jpeg_scans);
    return dvpp_limits_check_image(lim, in->width, in->height, err);
}

static dvpp_status plan_from_info(jpeg_plan *pl, const dvpp_jpeg_decode_opts *o,
                                  const dvpp_limits *lim, dvpp_err *err);

static dvpp_status make_plan(const uint8_t *data, size_t len,
                             const dvpp_jpeg_decode_opts *o,
                             const dvpp_limits *lim, jpeg_plan *pl,
                             dvpp_err *err)
{
    dvpp_status st;

    memset(pl, 0, sizeof(*pl));
    st = dvpp_limits_check_encoded(lim, len, err);
    if (st != DVPP_OK)
        return st;
    st = dvpp__jpeg_walk(data, len, &pl->info, &pl->mk, err);
    return st == DVPP_OK ? plan_from_info(pl, o, lim, err) : st;
}

/* The plan's checks and geometry, from the header the walk read. */
static dvpp_status plan_from_info(jpeg_plan *pl, const dvpp_jpeg_decode_opts *o,
                                  const dvpp_limits *lim, dvpp_err *err)
{
    dvpp_status st;

    if (pl->info.width == 0 || pl->info.height == 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                            "JPEG frame header declares an empty %ux%u image",
                            pl->info.width, pl->info.height);
    if (dvpp_profile_is_ascend(o->profile)) {
        st = dvpp__jpeg_check_ascend_input(&pl->info, o->profile, err);
        if (st != DVPP_OK)
            return st;
    }
    st = check_flavour(pl, lim, err);
    if (st != DVPP_OK)
        return st;
    pl->scale = o->scale_num ? o->scale_num : 8;
    if (pl->scale > 8)
        return dvpp_err_set(err, DVPP_EINVAL, "scale",
                            "DCT scale %u/8 is not in 1/8..8/8", pl->scale);
    if (pl->scale != 8 && dvpp_profile_is_ascend(o->profile))
        return dvpp_err_set(err, DVPP_EPROFILE, "scale",
                            "Ascend JPEGD has no DCT-domain scaling; scale must "
                            "be 8/8 in the %s profile",
                            dvpp_profile_name(o->profile));
    pl->sw = dvpp_jpeg_scaled_side(pl->info.width, pl->scale);
    pl->sh = dvpp_jpeg_scaled_side(pl->info.height, pl->scale);
    pl->orient = o->no_orient ? 1 : pl->info.orientation;
    st = resolve_format(pl, o, err);
    if (st != DVPP_OK)
        return st;
    st = plan_region(pl, o, err);
    if (st != DVPP_OK)
        return st;
    plan_alignment(pl, o);
    return DVPP_OK;
}

static dvpp_status plan_image(const jpeg_plan *pl, dvpp_image *img,
                              dvpp_planes *planes, dvpp_err *err)
{
    dvpp_status st = dvpp_image_init(img, pl->fmt, pl->out_w, pl->out_h,
                                     pl->align_w, pl->align_h, err);
    if (st != DVPP_OK)
        return st;
    return dvpp_image_planes(img, planes, err);
}

dvpp_status dvpp_jpeg_decode_geometry(const uint8_t *data, size_t len,
                                      const dvpp_jpeg_decode_opts *o,
                                      const dvpp_limits *lim, dvpp_image *out,
                                      dvpp_err *err)
{
    jpeg_plan pl;
    dvpp_planes planes;
    dvpp_status st = make_plan(data, len, o, lim, &pl, err);

    if (st != DVPP_OK)
        return st;
    st = plan_image(&pl, out, &planes, err);
    if (st == DVPP_OK)
        out->size = planes.total;
    return st;
}

dvpp_status dvpp_jpeg_decode_geometry_info(const dvpp_jpeg_info *info,
                                           const dvpp_jpeg_decode_opts *o,
                                           const dvpp_limits *lim, dvpp_image *out,
                                           dvpp_err *err)
{
    jpeg_plan pl;
    dvpp_planes planes;
    dvpp_status st;

    memset(&pl, 0, sizeof(pl));
    pl.info = *info;
    st = plan_from_info(&pl, o, lim, err);
    if (st == DVPP_OK)
        st = plan_image(&pl, out, &planes, err);
    if (st == DVPP_OK)
        out->size = planes.total;
    return st;
}

/* Run after jpeg_start_decompress: check libjpeg agrees with the plan,
 * then allocate the output. Starting has sized libjpeg's working memory
 * against max_decode_memory, so a refused decode never costs a pixel
 * buffer. */
static dvpp_status claim_output(jpeg_dec *d, const jpeg_plan *pl, dvpp_err *err)
{
    const struct jpeg_decompress_struct *c = &d->cinfo;
    dvpp_status st;

    if (c->output_width != pl->sw || c->output_height != pl->sh ||
        c->max_v_samp_factor > 4)
        return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                            "JPEG decodes to %ux%u, its header said %ux%u",
                            c->output_width, c->output_height, pl->sw, pl->sh);
    if (d->img->data)
        return DVPP_OK;
    st = dvpp_image_alloc(d->img, err);
    d->own_img = st == DVPP_OK;
    return st;
}

/* --- packed / grey path ---------------------------------------------------- */

static J_COLOR_SPACE libjpeg_space(dvpp_pixfmt f)
{
    switch (f) {
    case DVPP_PIXEL_BGR:
        return JCS_EXT_BGR;
    case DVPP_PIXEL_RGBA:
        return JCS_EXT_RGBA;
    case DVPP_PIXEL_BGRA:
        return JCS_EXT_BGRA;
    case DVPP_PIXEL_ARGB:
        return JCS_EXT_ARGB;
    case DVPP_PIXEL_ABGR:
        return JCS_EXT_ABGR;
    case DVPP_PIXEL_GRAY:
    case DVPP_PIXEL_YUV400:
        return JCS_GRAYSCALE;
    default:
        return JCS_EXT_RGB;
    }
}

/* Pillow's MULDIV255: round(a * b / 255) without a division. */
static inline unsigned muldiv255(unsigned a, unsigned b)
{
    unsigned t = a * b + 128;
    return ((t >> 8) + t) >> 8;
}

/* CMYK samples as libjpeg returns them -> @fmt, with Pillow's conversion:
 * Adobe files store inverted CMYK, so un-invert first, then
 * X = (255-K) - MULDIV255(C, 255-K). Grey uses Pillow's L weights. */
static void cmyk_row(const uint8_t *src, uint8_t *dst, uint32_t n,
                     dvpp_pixfmt fmt, bool inverted)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmt);
    unsigned bpp = fi->bpp;

    for (uint32_t i = 0; i < n; i++, src += 4, dst += bpp) {
        unsigned c = src[0], m = src[1], y = src[2], k = src[3], nk, r, g, b;
        if (inverted)
            c = 255 - c, m = 255 - m, y = 255 - y, k = 255 - k;
        nk = 255 - k;
        r = nk - muldiv255(c, nk);
        g = nk - muldiv255(m, nk);
        b = nk - muldiv255(y, nk);
        switch (fmt) {
        case DVPP_PIXEL_GRAY:
        case DVPP_PIXEL_YUV400:
            dst[0] = (uint8_t)((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16);
            break;
        case DVPP_PIXEL_BGR:
            dst[0] = (uint8_t)b, dst[1] = (uint8_t)g, dst[2] = (uint8_t)r;
            break;
        case DVPP_PIXEL_RGBA:
            dst[0] = (uint8_t)r, dst[1] = (uint8_t)g, dst[2] = (uint8_t)b,
            dst[3] = 255;
            break;
        case DVPP_PIXEL_BGRA:
            dst[0] = (uint8_t)b, dst[1] = (uint8_t)g, dst[2] = (uint8_t)r,
            dst[3] = 255;
            break;
        case DVPP_PIXEL_ARGB:
            dst[0] = 255, dst[1] = (uint8_t)r, dst[2] = (uint8_t)g,
            dst[3] = (uint8_t)b;
            break;
        case DVPP_PIXEL_ABGR:
            dst[0] = 255, dst[1] = (uint8_t)b, dst[2] = (uint8_t)g,
            dst[3] = (uint8_t)r;
            break;
        default:
            dst[0] = (uint8_t)r, dst[1] = (uint8_t)g, dst[2] = (uint8_t)b;
            break;
        }
    }
}

/* Where region rows go: the output itself, or a stored-orientation image
 * that is oriented into the output at the end. */
static dvpp_status region_target(jpeg_dec *d, const jpeg_plan *pl,
                                 dvpp_image *out, dvpp_image **target,
                                 dvpp_err *err)
{
    dvpp_status st;

    if (pl->orient == 1) {
        *target = out;
        return DVPP_OK;
    }
    st = dvpp_image_init(&d->stored, out->format, pl->rw, pl->rh, 1, 1, err);
    if (st == DVPP_OK) {
        dvpp_planes sp;
        st = dvpp_image_planes(&d->stored, &sp, err);
        if (st == DVPP_OK) {
            size_t keep;
            d->stored.data = dec_temp(d, SLOT_STORED, sp.total, &keep);
            d->stored.size = keep;
            if (!d->stored.data)
                st = dvpp_err_set(err, DVPP_ENOMEM, "size",
                                  "cannot allocate the orientation buffer");
        }
    }
    *target = &d->stored;
    return st;
}

static void orient_packed(const dvpp_image *src, dvpp_image *out, unsigned o)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(out->format);

    dvpp_orient_plane(src->data, src->width_stride, out->data, out->width_stride,
                      src->width, src->height, fi->bpp, o);
}

/* Runs under the setjmp of run_decode: any libjpeg error longjmps out. */
static dvpp_status decode_packed(jpeg_dec *d, const jpeg_plan *pl,
                                 dvpp_image *out, dvpp_err *err)
{
    struct jpeg_decompress_struct *c = &d->cinfo;
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(pl->fmt);
    JDIMENSION xoff = 0, cw = pl->sw, skip_to;
    dvpp_image *target;
    JSAMPROW rows[STRIP_ROWS];
    size_t in_bpp, in_row, row_bytes;
    uint32_t col0;
    bool direct;
    dvpp_status st;

    c->out_color_space = pl->cmyk ? JCS_CMYK : libjpeg_space(pl->fmt);
    jpeg_start_decompress(c);
    st = claim_output(d, pl, err);
    if (st != DVPP_OK)
        return st;
    if (pl->rw < pl->sw) {
        xoff = pl->rx >= ROI_MARGIN ? pl->rx - ROI_MARGIN : 0;
        cw = (pl->rx + pl->rw + ROI_MARGIN < pl->sw ? pl->rx + pl->rw + ROI_MARGIN
                                                    : pl->sw) - xoff;
        jpeg_crop_scanline(c, &xoff, &cw);
    }
    col0 = pl->rx - xoff;
    skip_to = pl->ry >= ROI_MARGIN ? pl->ry - ROI_MARGIN : 0;
    if (skip_to > 0)
        jpeg_skip_scanlines(c, skip_to);
    st = region_target(d, pl, out, &target, err);
    if (st != DVPP_OK)
        return st;
    in_bpp = (size_t)c->output_components;
    in_row = (size_t)c->output_width * in_bpp;
    row_bytes = (size_t)pl->rw * fi->bpp;
    /* Direct: libjpeg writes the region rows into the target itself. */
    direct = !pl->cmyk && col0 == 0 && cw == pl->rw;
    d->strip[0] = dec_temp(d, SLOT_STRIP, in_row * STRIP_ROWS, &d->strip_size[0]);
    if (!d->strip[0])
        return dvpp_err_set(err, DVPP_ENOMEM, "size",
                            "cannot allocate a decode strip");
    while (c->output_scanline < pl->ry) { /* margin rows: decode, drop */
        rows[0] = d->strip[0];
        jpeg_read_scanlines(c, rows, 1);
    }
    while (c->output_scanline < pl->ry + pl->rh) {
        JDIMENSION first = c->output_scanline, n, want;
        want = pl->ry + pl->rh - first;
        if (want > STRIP_ROWS)
            want = STRIP_ROWS;
        for (JDIMENSION i = 0; i < want; i++)
            rows[i] = direct ? target->data + (size_t)(first + i - pl->ry) *
                                                  target->width_stride
                             : d->strip[0] + i * in_row;
        n = jpeg_read_scanlines(c, rows, want);
        if (n == 0)
            return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                                "JPEG decoder returned no rows");
        for (JDIMENSION i = 0; i < n && !direct; i++) {
            uint8_t *dst = target->data +
                           (size_t)(first + i - pl->ry) * target->width_stride;
            if (pl->cmyk)
                cmyk_row(rows[i] + (size_t)col0 * 4, dst, pl->rw, pl->fmt,
                         c->saw_Adobe_marker);
            else
                memcpy(dst, rows[i] + (size_t)col0 * in_bpp, row_bytes);
        }
    }
    if (c->output_scanline < c->output_height)
        jpeg_abort_decompress(c);
    else
        jpeg_finish_decompress(c);
    if (pl->orient != 1)
        orient_packed(&d->stored, out, pl->orient);
    return DVPP_OK;
}

/* --- raw YUV path ------------------------------------------------------------ */

/* The output's planes as targets for components 0..2 (Y, Cb, Cr). */
typedef struct yuv_target {
    uint8_t *base[3];   /* first byte of the component's samples */
    size_t stride[3];
    size_t step[3];     /* 1 planar, 2 interleaved */
    uint32_t tx, ty;    /* chroma subsampling of the output */
    uint32_t cw, ch;    /* chroma plane samples */
    uint32_t lim_w[3];  /* samples per row the output holds, per component */
    uint32_t lim_h[3];  /* rows the output holds, per component */
    bool interleaved;
} yuv_target;

static void make_target(const dvpp_image *out, const dvpp_planes *pl,
                        yuv_target *t)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(out->format);
    dvpp_pixfmt f = out->format;
    bool v_first = f == DVPP_PIXEL_NV21 || f == DVPP_PIXEL_YVU422SP ||
                   f == DVPP_PIXEL_YVU444SP || f == DVPP_PIXEL_YVU440SP ||
                   f == DVPP_PIXEL_YVU_PLANAR_420;
    int u = v_first ? 2 : 1, v = v_first ? 1 : 2;

    t->tx = 1u << fi->chroma_sx;
    t->ty = 1u << fi->chroma_sy;
    t->cw = (out->width + t->tx - 1) / t->tx;
    t->ch = (out->height + t->ty - 1) / t->ty;
    t->lim_w[0] = out->width, t->lim_h[0] = out->height;
    t->lim_w[1] = t->lim_w[2] = t->cw;
    t->lim_h[1] = t->lim_h[2] = t->ch;
    t->base[0] = out->data + pl->p[0].offset;
    t->stride[0] = pl->p[0].stride;
    t->step[0] = 1;
    t->interleaved = fi->planes == 2;
    if (t->interleaved) {
        t->base[u] = out->data + pl->p[1].offset;
        t->base[v] = t->base[u] + 1;
        t->stride[1] = t->stride[2] = pl->p[1].stride;
        t->step[1] = t->step[2] = 2;
    } else {
        t->base[u] = out->data + pl->p[1].offset;
        t->base[v] = out->data + pl->p[2].offset;
        t->stride[1] = pl->p[1].stride;
        t->stride[2] = pl->p[2].stride;
        t->step[1] = t->step[2] = 1;
    }
}

static void fill_neutral_chroma(yuv_target *t)
{
    for (uint32_t y = 0; y < t->ch; y++) {
        if (t->interleaved) {
            uint8_t *r = t->base[1] < t->base[2] ? t->base[1] : t->base[2];
            memset(r + y * t->stride[1], 0x80, (size_t)t->cw * 2);
        } else {
            memset(t->base[1] + y * t->stride[1], 0x80, t->cw);
            memset(t->base[2] + y * t->stride[2], 0x80, t->cw);
        }
    }
}

/* Can component rows be copied straight into the output? Needs identity
 * orientation and component factors equal to the output's. */
static bool raw_direct_ok(const jpeg_dec *d, const jpeg_plan *pl,
                          const yuv_target *t)
{
    const struct jpeg_decompress_struct *c = &d->cinfo;

    if (pl->orient != 1)
        return false;
    for (int ci = 0; ci < c->num_components; ci++) {
        const comp_plane *cp = &d->cp[ci];
        uint32_t want_x = ci ? t->tx : 1, want_y = ci ? t->ty : 1;
        if (cp->fx_num != want_x * cp->fx_den || cp->fy_num != want_y * cp->fy_den)
            return false;
    }
    return true;
}

/* Factors and region boxes of each component, from libjpeg's geometry. */
static void describe_components(jpeg_dec *d, const jpeg_plan *pl)
{
    struct jpeg_decompress_struct *c = &d->cinfo;

    for (int ci = 0; ci < c->num_components; ci++) {
        jpeg_component_info *k = &c->comp_info[ci];
        comp_plane *cp = &d->cp[ci];
        uint32_t x1, y1;
        cp->fx_num = (uint32_t)(c->max_h_samp_factor * c->min_DCT_scaled_size);
        cp->fx_den = (uint32_t)(k->h_samp_factor * k->DCT_scaled_size);
        cp->fy_num = (uint32_t)(c->max_v_samp_factor * c->min_DCT_scaled_size);
        cp->fy_den = (uint32_t)(k->v_samp_factor * k->DCT_scaled_size);
        cp->x0 = (uint32_t)((uint64_t)pl->rx * cp->fx_den / cp->fx_num);
        cp->y0 = (uint32_t)((uint64_t)pl->ry * cp->fy_den / cp->fy_num);
        x1 = (uint32_t)((uint64_t)(pl->rx + pl->rw - 1) * cp->fx_den / cp->fx_num);
        y1 = (uint32_t)((uint64_t)(pl->ry + pl->rh - 1) * cp->fy_den / cp->fy_num);
        if (x1 >= k->downsampled_width)
            x1 = k->downsampled_width - 1;
        if (y1 >= k->downsampled_height)
            y1 = k->downsampled_height - 1;
        cp->w = x1 - cp->x0 + 1;
        cp->h = y1 - cp->y0 + 1;
    }
}

static dvpp_status alloc_strips(jpeg_dec *d, JSAMPARRAY rows[3],
                                JSAMPROW *row_store, dvpp_err *err)
{
    struct jpeg_decompress_struct *c = &d->cinfo;
    size_t used = 0;

    for (int ci = 0; ci < c->num_components; ci++) {
        jpeg_component_info *k = &c->comp_info[ci];
        size_t width = (size_t)k->width_in_blocks * (size_t)k->DCT_scaled_size;
        size_t nrows = (size_t)k->v_samp_factor * (size_t)k->DCT_scaled_size;
        d->strip[ci] = dec_temp(d, SLOT_STRIP + ci, width * nrows,
                                &d->strip_size[ci]);
        if (!d->strip[ci])
            return dvpp_err_set(err, DVPP_ENOMEM, "size",
                                "cannot allocate raw decode strips");
        rows[ci] = row_store + used;
        for (size_t r = 0; r < nrows; r++)
            rows[ci][r] = d->strip[ci] + r * width;
        used += nrows;
    }
    return DVPP_OK;
}

static dvpp_status alloc_comp_planes(jpeg_dec *d, dvpp_err *err)
{
    for (int ci = 0; ci < d->cinfo.num_components; ci++) {
        comp_plane *cp = &d->cp[ci];
        cp->data = dec_temp(d, SLOT_COMP + ci, (size_t)cp->w * cp->h, &cp->size);
        if (!cp->data)
            return dvpp_err_set(err, DVPP_ENOMEM, "size",
                                "cannot allocate a %ux%u component plane",
                                cp->w, cp->h);
    }
    return DVPP_OK;
}

/* Copy the region part of one strip row of component @ci: straight into
 * the output (direct) or into the gathered component plane. */
static void take_row(jpeg_dec *d, const yuv_target *t, bool direct, int ci,
                     uint32_t y, const uint8_t *src)
{
    comp_plane *cp = &d->cp[ci];
    size_t n = cp->w;
    uint8_t *dst;

    if (y < cp->y0 || y >= cp->y0 + cp->h)
        return;
    if (!direct) {
        memcpy(cp->data + (size_t)(y - cp->y0) * cp->w, src + cp->x0, n);
        return;
    }
    /* Ascend 310P rounds odd sizes down: never write past the output. */
    if (y - cp->y0 >= t->lim_h[ci])
        return;
    if (n > t->lim_w[ci])
        n = t->lim_w[ci];
    dst = t->base[ci] + (size_t)(y - cp->y0) * t->stride[ci];
    if (t->step[ci] == 1)
        memcpy(dst, src + cp->x0, n);
}

/* Interleave the chroma rows of one strip into the output (direct mode). */
static void take_chroma_pair(jpeg_dec *d, const yuv_target *t, uint32_t y,
                             const uint8_t *cb, const uint8_t *cr)
{
    const comp_plane *cp = &d->cp[1];
    uint32_t n = cp->w < t->cw ? cp->w : t->cw;
    uint8_t *dst;

    if (y < cp->y0 || y >= cp->y0 + cp->h || y - cp->y0 >= t->ch)
        return;
    dst = (t->base[1] < t->base[2] ? t->base[1] : t->base[2]) +
          (size_t)(y - cp->y0) * t->stride[1];
    if (t->base[1] < t->base[2])
        dvpp_pack_kern_get()->interleave(cb + cp->x0, cr + cp->x0, dst, n);
    else
        dvpp_pack_kern_get()->interleave(cr + cp->x0, cb + cp->x0, dst, n);
}

/* Sample of component @cp seen by displayed output pixel (dx, dy). */
static inline unsigned comp_at(const comp_plane *cp, const jpeg_plan *pl,
                               uint32_t dx, uint32_t dy)
{
    uint32_t lx, ly, sx, sy;

    dvpp_orient_source(pl->orient, pl->rw, pl->rh, dx, dy, &lx, &ly);
    sx = (uint32_t)((uint64_t)(pl->rx + lx) * cp->fx_den / cp->fx_num) - cp->x0;
    sy = (uint32_t)((uint64_t)(pl->ry + ly) * cp->fy_den / cp->fy_num) - cp->y0;
    if (sx >= cp->w)
        sx = cp->w - 1;
    if (sy >= cp->h)
        sy = cp->h - 1;
    return cp->data[(size_t)sy * cp->w + sx];
}

/* Box-resample a gathered component into an output plane: each output
 * sample is the rounded mean of the component values under the tx x ty
 * output pixels it covers (replication when the component is coarser). */
static void resample_component(const comp_plane *cp, const jpeg_plan *pl,
                               uint8_t *base, size_t stride, size_t step,
                               uint32_t tx, uint32_t ty, uint32_t cw, uint32_t ch)
{
    for (uint32_t j = 0; j < ch; j++) {
        uint8_t *row = base + (size_t)j * stride;
        uint32_t y0 = j * ty, y1 = y0 + ty < pl->out_h ? y0 + ty : pl->out_h;
        for (uint32_t i = 0; i < cw; i++) {
            uint32_t x0 = i * tx, x1 = x0 + tx < pl->out_w ? x0 + tx : pl->out_w;
            unsigned sum = 0, cnt = 0;
            for (uint32_t y = y0; y < y1; y++)
                for (uint32_t x = x0; x < x1; x++, cnt++)
                    sum += comp_at(cp, pl, x, y);
            row[(size_t)i * step] = (uint8_t)((sum + cnt / 2) / cnt);
        }
    }
}

static void finish_gathered(jpeg_dec *d, const jpeg_plan *pl, yuv_target *t,
                            const dvpp_image *out)
{
    int nc = d->cinfo.num_components;

    resample_component(&d->cp[0], pl, t->base[0], t->stride[0], 1, 1, 1,
                       out->width, out->height);
    if (nc == 1)
        return;
    for (int ci = 1; ci < 3; ci++)
        resample_component(&d->cp[ci], pl, t->base[ci], t->stride[ci],
                           t->step[ci], t->tx, t->ty, t->cw, t->ch);
}

/* Runs under the setjmp of run_decode. */
static dvpp_status decode_raw(jpeg_dec *d, const jpeg_plan *pl, dvpp_image *out,
                              const dvpp_planes *planes, dvpp_err *err)
{
    struct jpeg_decompress_struct *c = &d->cinfo;
    JSAMPARRAY rows[3];
    JSAMPROW row_store[3 * 4 * DCTSIZE];
    JDIMENSION lines;
    yuv_target t;
    bool direct;
    dvpp_status st;

    c->raw_data_out = TRUE;
    jpeg_start_decompress(c);
    st = claim_output(d, pl, err);
    if (st != DVPP_OK)
        return st;
    make_target(out, planes, &t);
    describe_components(d, pl);
    direct = raw_direct_ok(d, pl, &t);
    st = alloc_strips(d, rows, row_store, err);
    if (st == DVPP_OK && !direct)
        st = alloc_comp_planes(d, err);
    if (st != DVPP_OK)
        return st;
    if (c->num_components == 1)
        fill_neutral_chroma(&t);
    lines = (JDIMENSION)(c->max_v_samp_factor * c->min_DCT_scaled_size);
    while (c->output_scanline < c->output_height) {
        JDIMENSION imcu = c->output_scanline / lines;
        bool past = true;
        if (jpeg_read_raw_data(c, rows, lines) == 0)
            return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                                "JPEG decoder returned no raw rows");
        for (int ci = 0; ci < c->num_components; ci++) {
            jpeg_component_info *k = &c->comp_info[ci];
            uint32_t nrows = (uint32_t)(k->v_samp_factor * k->DCT_scaled_size);
            uint32_t base = imcu * nrows;
            for (uint32_t r = 0; r < nrows; r++) {
                if (base + r >= k->downsampled_height)
                    break;
                if (direct && ci == 1 && t.interleaved)
                    take_chroma_pair(d, &t, base + r, rows[1][r], rows[2][r]);
                if (!(direct && ci > 0 && t.interleaved))
                    take_row(d, &t, direct, ci, base + r, rows[ci][r]);
            }
            if (base + nrows < d->cp[ci].y0 + d->cp[ci].h)
                past = false;
        }
        if (past)
            break; /* every row of the region is in: skip the rest */
    }
    if (c->output_scanline < c->output_height)
        jpeg_abort_decompress(c);
    else
        jpeg_finish_decompress(c);
    if (!direct)
        finish_gathered(d, pl, &t, out);
    return DVPP_OK;
}

/* --- driver ------------------------------------------------------------------ */

/* The one function that calls setjmp: every libjpeg call happens below it. */
static dvpp_status run_decode(jpeg_dec *d, const uint8_t *data, size_t len,
                              const jpeg_plan *pl, const dvpp_jpeg_decode_opts *o,
                              const dvpp_limits *lim, dvpp_image *out,
                              const dvpp_planes *planes, dvpp_err *err)
{
    struct jpeg_decompress_struct *c = &d->cinfo;

    c->err = jpeg_std_error(&d->jerr.pub);
    d->jerr.pub.error_exit = on_error_exit;
    d->jerr.pub.emit_message = on_emit_message;
    d->jerr.stop_on_warning = !o->allow_partial;
    d->jerr.max_scans = lim->max_jpeg_scans;
    if (setjmp(d->jerr.jb))
        return dvpp_err_set(err, d->jerr.status, "jpeg", "JPEG: %s", d->jerr.msg);
    jpeg_create_decompress(c);
    d->created = true;
    c->mem->max_memory_to_use = (long)lim->max_decode_memory;
    d->progress.progress_monitor = on_progress;
    c->progress = &d->progress;
    jpeg_mem_src(c, data, (unsigned long)len);
    jpeg_read_header(c, TRUE);
    if (c->image_width != pl->info.width || c->image_height != pl->info.height)
        return dvpp_err_set(err, DVPP_ECORRUPT, "jpeg",
                            "JPEG frame header disagrees with itself (%ux%u vs "
                            "%ux%u)", c->image_width, c->image_height,
                            pl->info.width, pl->info.height);
    c->scale_num = pl->scale;
    c->scale_denom = 8;
    c->dct_method = o->fast_dct ? JDCT_IFAST : JDCT_ISLOW;
    c->do_fancy_upsampling = o->fast_upsample ? FALSE : TRUE;
    if (pl->raw)
        return decode_raw(d, pl, out, planes, err);
    return decode_packed(d, pl, out, err);
}

static void release_dec(jpeg_dec *d)
{
    if (d->created)
        jpeg_destroy_decompress(&d->cinfo);
    /* A size of 0 marks a scratch block: kept for the next decode. */
    for (int i = 0; i < 3; i++) {
        if (d->strip_size[i])
            dvpp_free(d->strip[i], d->strip_size[i]);
        if (d->cp[i].size)
            dvpp_free(d->cp[i].data, d->cp[i].size);
    }
    if (d->stored.size)
        dvpp_image_free(&d->stored);
}

dvpp_status dvpp_jpeg_decode(const uint8_t *data, size_t len,
                             const dvpp_jpeg_decode_opts *o,
                             const dvpp_limits *lim, dvpp_image *out,
                             dvpp_err *err)
{
    uint8_t *given = out->data;
    size_t given_size = out->size;
    dvpp_planes planes;
    jpeg_plan pl;
    jpeg_dec d;
    dvpp_image img;
    dvpp_status st;

    st = make_plan(data, len, o, lim, &pl, err);
    if (st != DVPP_OK)
        return st;
    st = plan_image(&pl, &img, &planes, err);
    if (st != DVPP_OK)
        return st;
    if (given) {
        if (given_size < planes.total)
            return dvpp_err_set(err, DVPP_ENOSPC, "size",
                                "destination of %zu bytes cannot hold the %zu "
                                "byte %ux%u %s image", given_size, planes.total,
                                img.width, img.height, dvpp_pixfmt_name(img.format));
        img.data = given;
        img.size = given_size;
    }
    memset(&d, 0, sizeof(d));
    d.img = &img;
    d.scratch = o->scratch;
    st = run_decode(&d, data, len, &pl, o, lim, &img, &planes, err);
    release_dec(&d);
    if (st != DVPP_OK) {
        if (d.own_img)
            dvpp_image_free(&img);
        return st;
    }
    *out = img;
    return DVPP_OK;
}
