/* dvpp_vstream: a streaming VDEC on libavcodec (packet in, frames out). */
#include "dvpp_vstream.h"

#include "dvpp_mem.h"
#include "video_int.h"

#include <string.h>

#include <libavcodec/avcodec.h>

#include "dvpp_avlib.h" /* after FFmpeg's headers: its calls go through the loaded table */

struct dvpp_vstream {
    dvpp_vstream_opts o;
    dvpp_limits lim;
    AVCodecContext *ctx;
    AVFrame *frame;
    AVPacket *pkt;
    video_conv conv;          /* the converted frame, reused */
    uint64_t frames;          /* handed out (every status) */
};

static const char *averr(int e, char buf[AV_ERROR_MAX_STRING_SIZE])
{
    av_strerror(e, buf, AV_ERROR_MAX_STRING_SIZE);
    return buf;
}

void dvpp_vstream_opts_init(dvpp_vstream_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->codec = DVPP_VIDEO_H264;
    o->format = DVPP_PIXEL_NV12;
}

static dvpp_status check_opts(const dvpp_vstream_opts *o, dvpp_err *err)
{
    if ((unsigned)o->codec > DVPP_VIDEO_H265)
        return dvpp_err_set(err, DVPP_EINVAL, "codec", "codec h264 or h265");
    if (o->format != DVPP_PIXEL_NV12 && o->format != DVPP_PIXEL_NV21)
        return dvpp_err_set(err, DVPP_EINVAL, "format", "VDEC frames come out as nv12 or "
                            "nv21, not %s", dvpp_pixfmt_name(o->format));
    if (o->threads > 64)
        return dvpp_err_set(err, DVPP_EINVAL, "threads", "threads 0..64");
    return DVPP_OK;
}

dvpp_status dvpp_vstream_open(const dvpp_vstream_opts *o, const dvpp_limits *lim,
                              dvpp_vstream **out, dvpp_err *err)
{
    const AVCodec *dec;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    dvpp_vstream *s;
    dvpp_status st = check_opts(o, err);
    int e;

    *out = NULL;
    if (st != DVPP_OK)
        return st;
    st = dvpp__video_libs(err);
    if (st != DVPP_OK)
        return st;
    dec = avcodec_find_decoder(o->codec == DVPP_VIDEO_H265 ? AV_CODEC_ID_HEVC
                                                           : AV_CODEC_ID_H264);
    if (!dec)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "codec", "no %s decoder in libavcodec",
                            dvpp_video_codec_name(o->codec));
    s = dvpp_calloc(1, sizeof(*s));
    if (!s)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "decoder");
    s->o = *o;
    s->lim = lim ? *lim : dvpp_limits_default();
    dvpp__video_conv_init(&s->conv);
    s->ctx = avcodec_alloc_context3(dec);
    s->frame = av_frame_alloc();
    s->pkt = av_packet_alloc();
    if (!s->ctx || !s->frame || !s->pkt) {
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "decoder");
        goto fail;
    }
    dvpp__video_decoder_setup(s->ctx, &s->lim, o->threads);
    e = avcodec_open2(s->ctx, dec, NULL);
    if (e < 0) {
        st = dvpp_err_set(err, e == AVERROR(ENOMEM) ? DVPP_ENOMEM : DVPP_ECODEC, "codec",
                          "cannot open the decoder: %s", averr(e, eb));
        goto fail;
    }
    *out = s;
    return DVPP_OK;

fail:
    dvpp_vstream_close(s);
    return st;
}

/* --- the size a packet claims ----------------------------------------------------- */

typedef struct sps_claim {
    const dvpp_limits *lim;
    dvpp_status st;
    dvpp_err *err;
} sps_claim;

static void hold_sps(void *ctx, const video_pic *pic, bool read)
{
    sps_claim *c = ctx;

    /* An SPS cut short is the decoder's to refuse. */
    if (!read || c->st != DVPP_OK)
        return;
    c->st = dvpp_limits_check_image(c->lim, pic->coded_w, pic->coded_h, c->err);
}

/* Every SPS of the packet against the limits, before the decoder allocates
 * anything for it. */
static dvpp_status check_packet(const dvpp_vstream *s, const uint8_t *data, size_t len,
                                dvpp_err *err)
{
    sps_claim c = {&s->lim, DVPP_OK, err};

    if (len > s->lim.max_video_bytes)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_video_bytes",
                            "a packet of %zu bytes is above max_video_bytes (%llu)", len,
                            (unsigned long long)s->lim.max_video_bytes);
    dvpp__video_each_packet_sps(s->o.codec == DVPP_VIDEO_H265, data, len, 0, hold_sps, &c);
    return c.st;
}

/* --- frames out --------------------------------------------------------------------- */

/* Hand the decoder's frame to @sink: converted, or with the status that
 * says why it has no picture. */
static dvpp_status hand_out(dvpp_vstream *s, dvpp_vstream_sink sink, void *ctx, dvpp_err *err)
{
    const AVFrame *f = s->frame;
    dvpp_vstream_frame vf = {.status = DVPP_OK,
                             .tag = f->pts >= 0 ? (uint64_t)f->pts : UINT64_MAX,
                             .index = s->frames++,
                             .key = f->key_frame != 0};
    dvpp_err cerr;

    if (dvpp__video_frame_damaged(f))
        vf.status = DVPP_ECORRUPT;
    else
        vf.status = dvpp__video_conv_frame(&s->conv, f, s->o.format, s->o.align_w,
                                           s->o.align_h, &s->lim, &cerr);
    vf.image = vf.status == DVPP_OK ? &s->conv.out : NULL;
    return sink(ctx, &vf, err);
}

/* Every frame the decoder has completed, to @sink; DVPP_OK at EAGAIN/EOF. */
static dvpp_status drain(dvpp_vstream *s, dvpp_vstream_sink sink, void *ctx, dvpp_err *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];

    for (;;) {
        int e = avcodec_receive_frame(s->ctx, s->frame);
        dvpp_status st;
        if (e == AVERROR(EAGAIN) || e == AVERROR_EOF)
            return DVPP_OK;
        if (e < 0)
            return dvpp_err_set(err, e == AVERROR(ENOMEM) ? DVPP_ENOMEM : DVPP_ECORRUPT,
                                "video", "decoding: %s", averr(e, eb));
        st = hand_out(s, sink, ctx, err);
        av_frame_unref(s->frame);
        if (st != DVPP_OK)
            return st;
    }
}

/* Give @pkt (NULL: EOS) to the decoder, taking the frames it completes. */
static dvpp_status feed(dvpp_vstream *s, const AVPacket *pkt, dvpp_vstream_sink sink,
                        void *ctx, dvpp_err *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];

    for (;;) {
        int e = avcodec_send_packet(s->ctx, pkt);
        dvpp_status st;
        if (e >= 0 || e == AVERROR_EOF)
            return drain(s, sink, ctx, err);
        if (e != AVERROR(EAGAIN)) {
            /* The frames completed before the refusal still go out. */
            dvpp_err derr;
            dvpp_err_clear(&derr);
            st = drain(s, sink, ctx, &derr);
            if (st != DVPP_OK && derr.status != DVPP_ECORRUPT) {
                if (err)
                    *err = derr;
                return st;
            }
            return dvpp_err_set(err, e == AVERROR(ENOMEM) ? DVPP_ENOMEM : DVPP_ECORRUPT,
                                "video", "the decoder refused the packet: %s", averr(e, eb));
        }
        st = drain(s, sink, ctx, err); /* full: take frames, then resend */
        if (st != DVPP_OK)
            return st;
    }
}

dvpp_status dvpp_vstream_send(dvpp_vstream *s, const uint8_t *data, size_t len, uint64_t tag,
                              dvpp_vstream_sink sink, void *ctx, dvpp_err *err)
{
    dvpp_status st;

    if (!data || len == 0)
        return dvpp_err_set(err, DVPP_EINVAL, "input", "no packet bytes");
    if (tag > (uint64_t)INT64_MAX)
        return dvpp_err_set(err, DVPP_EINVAL, "tag", "packet tags are below 2^63");
    if (len > (size_t)INT32_MAX - AV_INPUT_BUFFER_PADDING_SIZE)
        return dvpp_err_set(err, DVPP_ELIMIT, "input", "a packet of %zu bytes", len);
    st = check_packet(s, data, len, err);
    if (st != DVPP_OK)
        return st;
    /* A padded copy: libavcodec's bitstream readers read past the end. */
    if (av_new_packet(s->pkt, (int)len) < 0)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "packet of %zu bytes", len);
    memcpy(s->pkt->data, data, len);
    /* The tag rides on the pts: libavcodec gives each frame the pts of the
     * packet its picture started in, reordered with the picture. */
    s->pkt->pts = (int64_t)tag;
    s->pkt->dts = AV_NOPTS_VALUE;
    st = feed(s, s->pkt, sink, ctx, err);
    av_packet_unref(s->pkt);
    return st;
}

dvpp_status dvpp_vstream_flush(dvpp_vstream *s, dvpp_vstream_sink sink, void *ctx,
                               dvpp_err *err)
{
    dvpp_status st = feed(s, NULL, sink, ctx, err);

    avcodec_flush_buffers(s->ctx);
    return st;
}

uint64_t dvpp_vstream_frames(const dvpp_vstream *s)
{
    return s->frames;
}

void dvpp_vstream_close(dvpp_vstream *s)
{
    if (!s)
        return;
    dvpp__video_conv_fini(&s->conv);
    av_packet_free(&s->pkt);
    av_frame_free(&s->frame);
    avcodec_free_context(&s->ctx);
    dvpp_free(s, sizeof(*s));
}
