/* dvpp_video_frame: what both decoders (dvpp_video.c, dvpp_vstream.c) do
 * with libavcodec the same way: its safety settings, the damaged-frame test
 * and the conversion of a decoded frame (video_int.h). */
#include "video_int.h"

#include <pthread.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "dvpp_avlib.h" /* after FFmpeg's headers: its calls go through the loaded table */

/* swscale flags of ffmpeg's auto-inserted scaler: the same bytes as the CLI. */
#define SWS_FLAGS SWS_BICUBIC

static pthread_once_t g_quiet_once = PTHREAD_ONCE_INIT;

static void make_quiet(void)
{
    av_log_set_level(AV_LOG_QUIET);
}

dvpp_status dvpp__video_libs(dvpp_err *err)
{
    dvpp_status st = dvpp__avlib_load(err);

    if (st == DVPP_OK)
        pthread_once(&g_quiet_once, make_quiet);
    return st;
}

int dvpp__video_av_format(dvpp_pixfmt f)
{
    switch (f) {
    case DVPP_PIXEL_NV12: return AV_PIX_FMT_NV12;
    case DVPP_PIXEL_NV21: return AV_PIX_FMT_NV21;
    case DVPP_PIXEL_RGB: return AV_PIX_FMT_RGB24;
    case DVPP_PIXEL_BGR: return AV_PIX_FMT_BGR24;
    case DVPP_PIXEL_I420: return AV_PIX_FMT_YUV420P;
    default: return AV_PIX_FMT_NONE;
    }
}

dvpp_status dvpp__video_check_size(const dvpp_limits *lim, int w, int h, dvpp_err *err)
{
    if (w <= 0 || h <= 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "video", "the stream declares no frame size");
    return dvpp_limits_check_image(lim, (uint64_t)w, (uint64_t)h, err);
}

void dvpp__video_decoder_setup(AVCodecContext *c, const dvpp_limits *lim, unsigned threads)
{
    c->thread_count = (int)(threads ? threads : 1);
    /* A damaged frame is an error, never a concealed picture. */
    c->err_recognition = AV_EF_EXPLODE | AV_EF_BITSTREAM | AV_EF_BUFFER;
    c->error_concealment = 0;
    c->max_pixels = (int64_t)lim->max_pixels;
}

bool dvpp__video_frame_damaged(const AVFrame *f)
{
    return f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT);
}

void dvpp__video_conv_init(video_conv *c)
{
    memset(c, 0, sizeof(*c));
    c->src_fmt = -1;
    c->cs = -1;
}

void dvpp__video_conv_fini(video_conv *c)
{
    sws_freeContext(c->sws);
    dvpp_image_free(&c->out);
    dvpp__video_conv_init(c);
}

/* The matrix and range the ffmpeg CLI's scale filter (5.1) converts a frame
 * with: the frame's own ("auto"), BT.601 when it names none or one swscale
 * lacks (vf_scale's parse_yuv_type). Without this a BT.709 stream comes out
 * as other RGB bytes than `ffmpeg -pix_fmt rgb24`. */
static void set_colorspace(video_conv *c, const AVFrame *f)
{
    int *inv, *tab, src_full, dst_full, bri, con, sat;
    int cs = f->colorspace;
    const int *coef;

    if (cs == c->cs && (int)f->color_range == c->range)
        return;
    c->cs = cs;
    c->range = (int)f->color_range;
    if (cs < 1 || cs > 10 || cs == 8)
        cs = AVCOL_SPC_BT470BG;
    coef = sws_getCoefficients(cs);
    if (sws_getColorspaceDetails(c->sws, &inv, &src_full, &tab, &dst_full, &bri, &con,
                                 &sat) < 0)
        return;
    if (f->color_range != AVCOL_RANGE_UNSPECIFIED)
        src_full = f->color_range == AVCOL_RANGE_JPEG;
    sws_setColorspaceDetails(c->sws, coef, src_full, coef, dst_full, bri, con, sat);
}

/* A converter and an image for frames of @f's size and format. */
static dvpp_status conv_setup(video_conv *c, const AVFrame *f, dvpp_pixfmt format,
                              uint32_t align_w, uint32_t align_h, const dvpp_limits *lim,
                              dvpp_err *err)
{
    dvpp_status st = dvpp__video_check_size(lim, f->width, f->height, err);

    if (st != DVPP_OK)
        return st;
    dvpp__video_conv_fini(c);
    c->sws = sws_getContext(f->width, f->height, (enum AVPixelFormat)f->format, f->width,
                            f->height, (enum AVPixelFormat)dvpp__video_av_format(format),
                            SWS_FLAGS, NULL, NULL, NULL);
    if (!c->sws)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "video", "cannot convert %s frames",
                            av_get_pix_fmt_name(f->format));
    st = dvpp_image_init(&c->out, format, (uint32_t)f->width, (uint32_t)f->height,
                         align_w ? align_w : 16, align_h ? align_h : 2, err);
    if (st == DVPP_OK)
        st = dvpp_image_alloc(&c->out, err);
    if (st != DVPP_OK)
        return st;
    memset(c->out.data, 0, c->out.size); /* stride padding is defined */
    c->src_w = f->width, c->src_h = f->height, c->src_fmt = f->format;
    c->dst = format;
    return DVPP_OK;
}

dvpp_status dvpp__video_conv_frame(video_conv *c, const AVFrame *f, dvpp_pixfmt format,
                                   uint32_t align_w, uint32_t align_h,
                                   const dvpp_limits *lim, dvpp_err *err)
{
    uint8_t *dp[4] = {0};
    int ds[4] = {0};
    dvpp_planes pl;
    dvpp_status st;

    if (dvpp__video_av_format(format) == AV_PIX_FMT_NONE)
        return dvpp_err_set(err, DVPP_EINVAL, "format", "frames convert to nv12, nv21, rgb "
                            "or bgr, not %s", dvpp_pixfmt_name(format));
    if (!c->sws || f->width != c->src_w || f->height != c->src_h || f->format != c->src_fmt ||
        format != c->dst) {
        st = conv_setup(c, f, format, align_w, align_h, lim, err);
        if (st != DVPP_OK) {
            dvpp__video_conv_fini(c);
            return st;
        }
    }
    set_colorspace(c, f);
    st = dvpp_image_planes(&c->out, &pl, err);
    if (st != DVPP_OK)
        return st;
    for (int k = 0; k < pl.count && k < 4; k++) {
        dp[k] = c->out.data + pl.p[k].offset;
        ds[k] = (int)pl.p[k].stride;
    }
    sws_scale(c->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dp, ds);
    return DVPP_OK;
}
