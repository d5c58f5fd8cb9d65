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

/* --- frames in the I420 layout (video_pool) ------------------------------------ */

/* Row alignment of the pool's Y plane: U and V rows (half of it) then stay
 * at the 64 bytes libavcodec's AVX-512 code may ask. */
#define POOL_STRIDE_ALIGN 128
/* Bytes past the V plane: libavcodec's own allocator adds 16 + STRIDE_ALIGN
 * - 1 for SIMD reads past a row's end; this is more than that. */
#define POOL_SLACK 1024

void dvpp__video_pool_init(video_pool *p)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
}

void dvpp__video_pool_fini(video_pool *p)
{
    if (p->pool)
        av_buffer_pool_uninit(&p->pool);
    pthread_mutex_destroy(&p->lock);
}

static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

/* Y stride and rows for a frame of @f's (coded) size, as @c's decoder
 * needs them: its aligned dimensions, each plane's row alignment kept. */
static bool pool_layout(AVCodecContext *c, const AVFrame *f, size_t *stride, size_t *rows)
{
    int w = f->width, h = f->height;
    int la[AV_NUM_DATA_POINTERS] = {0};
    size_t a = POOL_STRIDE_ALIGN;

    if (w <= 0 || h <= 0)
        return false;
    avcodec_align_dimensions2(c, &w, &h, la);
    for (int k = 0; k < 3; k++) {
        size_t need = (size_t)(la[k] > 0 ? la[k] : 1) * (k ? 2 : 1);
        if (need & (need - 1))
            return false; /* not a power of two: leave it to libavcodec */
        if (need > a)
            a = need;
    }
    *stride = align_up((size_t)w, a);
    *rows = align_up((size_t)h, 2);
    return true;
}

static int pool_get_buffer(AVCodecContext *c, AVFrame *f, int flags)
{
    video_pool *p = c->opaque;
    size_t s, r, luma, chroma, size;
    AVBufferRef *b = NULL;

    if (f->format != AV_PIX_FMT_YUV420P || !pool_layout(c, f, &s, &r))
        return avcodec_default_get_buffer2(c, f, flags);
    luma = s * r;
    chroma = (s / 2) * (r / 2);
    size = luma + 2 * chroma + POOL_SLACK;
    pthread_mutex_lock(&p->lock);
    if (p->pool && p->size != size)
        av_buffer_pool_uninit(&p->pool); /* a new size: buffers out keep theirs */
    if (!p->pool) {
        p->pool = av_buffer_pool_init(size, av_buffer_allocz);
        p->size = size;
    }
    if (p->pool)
        b = av_buffer_pool_get(p->pool);
    pthread_mutex_unlock(&p->lock);
    if (!b)
        return AVERROR(ENOMEM);
    f->buf[0] = b;
    f->data[0] = b->data;
    f->data[1] = b->data + luma;
    f->data[2] = b->data + luma + chroma;
    f->linesize[0] = (int)s;
    f->linesize[1] = f->linesize[2] = (int)(s / 2);
    f->extended_data = f->data;
    return 0;
}

void dvpp__video_pool_attach(AVCodecContext *c, video_pool *p)
{
    c->opaque = p;
    c->get_buffer2 = pool_get_buffer;
}

bool dvpp__video_frame_as_i420(const AVFrame *f, dvpp_image *img)
{
    const AVBufferRef *b = f->buf[0];
    uintptr_t y0 = (uintptr_t)f->data[0], u0 = (uintptr_t)f->data[1];
    uintptr_t v0 = (uintptr_t)f->data[2];
    size_t s, r, chroma;

    if (f->format != AV_PIX_FMT_YUV420P || f->color_range == AVCOL_RANGE_JPEG || !b ||
        f->buf[1] || f->data[0] != b->data || f->width <= 0 || f->height <= 0 ||
        f->linesize[0] <= 0 || f->linesize[0] % 2 || f->linesize[1] != f->linesize[0] / 2 ||
        f->linesize[2] != f->linesize[1] || u0 <= y0)
        return false;
    s = (size_t)f->linesize[0];
    if ((u0 - y0) % s)
        return false;
    r = (u0 - y0) / s;
    chroma = (s / 2) * (r / 2);
    if (r % 2 || r < (size_t)f->height || v0 != u0 + chroma || (u0 - y0) + 2 * chroma > b->size)
        return false;
    memset(img, 0, sizeof(*img));
    img->format = DVPP_PIXEL_I420;
    img->width = (uint32_t)f->width;
    img->height = (uint32_t)f->height;
    img->width_stride = (uint32_t)s;
    img->height_stride = (uint32_t)r;
    img->data = f->data[0];
    img->size = (u0 - y0) + 2 * chroma;
    return true;
}
