/* dvpp_video: VDEC/VENC on libavcodec, libavformat and libswscale. */
#include "dvpp_video.h"

#include "dvpp_cpu.h"
#include "video_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#include "dvpp_avlib.h" /* after FFmpeg's headers: its calls go through the loaded table */

/* Only these demuxers are ever tried; with custom I/O no protocol is. */
#define FORMAT_WHITELIST "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,mpegts,h264,hevc"
#define IO_BUFFER 32768
/* swscale flags of ffmpeg's auto-inserted scaler: the same bytes as the CLI
 * (the encoder's input conversion; decoded frames: dvpp_video_frame.c). */
#define SWS_FLAGS SWS_BICUBIC

static const char *averr(int e, char buf[AV_ERROR_MAX_STRING_SIZE])
{
    av_strerror(e, buf, AV_ERROR_MAX_STRING_SIZE);
    return buf;
}

bool dvpp_video_codec_parse(const char *s, dvpp_video_codec *out)
{
    if (!strcmp(s, "h264") || !strcmp(s, "avc")) {
        *out = DVPP_VIDEO_H264;
        return true;
    }
    if (!strcmp(s, "h265") || !strcmp(s, "hevc")) {
        *out = DVPP_VIDEO_H265;
        return true;
    }
    return false;
}

const char *dvpp_video_codec_name(dvpp_video_codec c)
{
    return c == DVPP_VIDEO_H265 ? "h265" : "h264";
}

/* --- demuxing from memory ------------------------------------------------------ */

typedef struct mem_reader {
    const uint8_t *data;
    size_t len, pos;
} mem_reader;

static int mem_read(void *opaque, uint8_t *buf, int size)
{
    mem_reader *m = opaque;
    size_t n = m->len - m->pos;

    if (n == 0)
        return AVERROR_EOF;
    if (n > (size_t)size)
        n = (size_t)size;
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return (int)n;
}

static int64_t mem_seek(void *opaque, int64_t off, int whence)
{
    mem_reader *m = opaque;
    int64_t base;

    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE:
        return (int64_t)m->len;
    case SEEK_SET:
        base = 0;
        break;
    case SEEK_CUR:
        base = (int64_t)m->pos;
        break;
    case SEEK_END:
        base = (int64_t)m->len;
        break;
    default:
        return AVERROR(EINVAL);
    }
    if (off > (int64_t)m->len - base || base + off < 0)
        return AVERROR(EINVAL);
    m->pos = (size_t)(base + off);
    return (int64_t)m->pos;
}

typedef struct demux {
    mem_reader m;
    AVIOContext *io;
    AVFormatContext *fmt;
    int stream;
    dvpp_video_codec codec;
    int *declared;           /* [2 x nb_streams]: each stream's size before
                                probing (keep_declared; av_calloc'd) */
} demux;

static void demux_close(demux *d)
{
    av_freep(&d->declared);
    if (d->fmt)
        avformat_close_input(&d->fmt);
    if (d->io) {
        av_freep(&d->io->buffer);
        avio_context_free(&d->io);
    }
}

/* The options the probing decoders of avformat_find_stream_info get: the
 * same pixel cap as ours, one thread. */
static AVDictionary *probe_options(const dvpp_limits *lim)
{
    AVDictionary *o = NULL;
    char px[32];

    snprintf(px, sizeof(px), "%llu", (unsigned long long)lim->max_pixels);
    av_dict_set(&o, "max_pixels", px, 0);
    av_dict_set(&o, "threads", "1", 0);
    return o;
}

/* --- the size a stream claims ---------------------------------------------------- */

/* The claim is read by hand (dvpp_video_sps.c) and held to the limits
 * before libavformat's probing decoders run: the container's size, else
 * the first H.264 or H.265 SPS's coded size. */

/* The first SPS of @st in decode order: for a raw Annex-B stream the first
 * one in @data, for MPEG-TS the first one in its PID's payload (both in
 * the stream's own order, whatever extradata probing made), else the
 * first one in the extradata (MP4, MKV). False for another codec or when
 * nothing says. */
static bool first_sps(const AVFormatContext *fmt, const AVStream *st, const uint8_t *data,
                      size_t len, video_pic *pic)
{
    const AVCodecParameters *cp = st->codecpar;
    bool hevc = cp->codec_id == AV_CODEC_ID_HEVC;

    if (cp->codec_id != AV_CODEC_ID_H264 && !hevc)
        return false;
    if (!strcmp(fmt->iformat->name, hevc ? "hevc" : "h264"))
        return dvpp__video_first_sps(hevc, data, len, pic);
    if (!strcmp(fmt->iformat->name, "mpegts"))
        return dvpp__video_ts_first_sps(hevc, st->id, data, len, pic); /* id: the PID */
    return cp->extradata_size > 0 &&
           dvpp__video_first_sps(hevc, cp->extradata, (size_t)cp->extradata_size, pic);
}

/* The size @st's stream claims without decoding: the container's, else
 * (H.264, H.265) its first SPS's coded size. False when nothing says. */
static bool claimed_size(const AVFormatContext *fmt, const AVStream *st,
                         const uint8_t *data, size_t len, uint64_t *w, uint64_t *h)
{
    const AVCodecParameters *cp = st->codecpar;
    video_pic pic;

    if (cp->width > 0 && cp->height > 0) {
        *w = (uint64_t)cp->width, *h = (uint64_t)cp->height;
        return true;
    }
    if (!first_sps(fmt, st, data, len, &pic))
        return false;
    *w = pic.coded_w, *h = pic.coded_h;
    return true;
}

/* Every video stream's claim against @lim, before avformat_find_stream_info
 * runs its decoders on it. */
static dvpp_status check_claims(const demux *d, const dvpp_limits *lim, dvpp_err *err)
{
    for (unsigned i = 0; i < d->fmt->nb_streams; i++) {
        const AVStream *st = d->fmt->streams[i];
        uint64_t w, h;
        if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
            claimed_size(d->fmt, st, d->m.data, d->m.len, &w, &h) &&
            dvpp_limits_check_image(lim, w, h, err) != DVPP_OK)
            return DVPP_ELIMIT;
    }
    return DVPP_OK;
}

/* The stream declares no size after probing (FFmpeg refused its SPS):
 * DVPP_ELIMIT when the SPS claims a picture over @lim, else ECORRUPT. */
static dvpp_status sizeless(const demux *d, const dvpp_limits *lim, dvpp_err *err)
{
    uint64_t w, h;

    if (claimed_size(d->fmt, d->fmt->streams[d->stream], d->m.data, d->m.len, &w, &h) &&
        dvpp_limits_check_image(lim, w, h, err) != DVPP_OK)
        return DVPP_ELIMIT;
    return dvpp_err_set(err, DVPP_ECORRUPT, "video", "the stream declares no frame size");
}

/* --- the samples an MP4 lists ------------------------------------------------------ */

/* libavformat's mov demuxer builds its index of every sample a track lists
 * while it opens the file, before anything is decoded: an AVIndexEntry and
 * per-sample copies of the timing tables, some 46 bytes a sample with
 * FFmpeg 5.1 (rounded up here). A constant-size stsz lists any number of
 * samples in 20 bytes, so an 8 KB file can claim 60 million samples and
 * cost 2.7 GB. The claim is read here first and held to max_decode_memory,
 * the decoder's working memory (4 million samples at the default: 39 hours
 * at 30 fps). */
#define MOV_INDEX_BYTES 64u

static uint32_t rd_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The largest sample count a stsz/stz2 (under moov/trak/mdia/minf/stbl) or a
 * trun (under moof/traf) of the ISO BMFF boxes in @p claims; 0 for data that
 * is not such boxes. Box sizes past the end are cut to what is there. */
static uint64_t mov_claimed_samples(const uint8_t *p, size_t n, const char *const *path,
                                    unsigned depth)
{
    uint64_t most = 0;
    size_t pos = 0;

    while (n - pos >= 8) {
        uint64_t size = rd_be32(p + pos);
        size_t hdr = 8;
        const uint8_t *type = p + pos + 4;

        if (size == 1) {
            if (n - pos < 16)
                break;
            size = (uint64_t)rd_be32(p + pos + 8) << 32 | rd_be32(p + pos + 12);
            hdr = 16;
        } else if (size == 0) {
            size = n - pos;
        }
        if (size < hdr)
            break;
        if (size > n - pos)
            size = n - pos;
        if (path[depth] && !memcmp(type, path[depth], 4)) {
            uint64_t c = 0;
            const uint8_t *b = p + pos + hdr;
            size_t bn = (size_t)size - hdr;
            if (path[depth + 1])
                c = mov_claimed_samples(b, bn, path, depth + 1);
            else if (!memcmp(type, "trun", 4) && bn >= 8)
                c = rd_be32(b + 4);     /* version and flags, sample_count */
            else if (bn >= 12)
                c = rd_be32(b + 8);     /* ..., sample_size or field_size, sample_count */
            most = c > most ? c : most;
        }
        pos += (size_t)size;
    }
    return most;
}

static dvpp_status check_mov_samples(const uint8_t *data, size_t len, const dvpp_limits *lim,
                                     dvpp_err *err)
{
    static const char *const stsz[] = {"moov", "trak", "mdia", "minf", "stbl", "stsz", NULL};
    static const char *const stz2[] = {"moov", "trak", "mdia", "minf", "stbl", "stz2", NULL};
    static const char *const trun[] = {"moof", "traf", "trun", NULL};
    uint64_t n = mov_claimed_samples(data, len, stsz, 0), m;

    m = mov_claimed_samples(data, len, stz2, 0);
    n = m > n ? m : n;
    m = mov_claimed_samples(data, len, trun, 0);
    n = m > n ? m : n;
    if (n > lim->max_decode_memory / MOV_INDEX_BYTES)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_decode_memory",
                            "MP4: a track lists %llu samples; indexing them takes %llu bytes, "
                            "over max_decode_memory (%llu)", (unsigned long long)n,
                            (unsigned long long)n * MOV_INDEX_BYTES,
                            (unsigned long long)lim->max_decode_memory);
    return DVPP_OK;
}

/* Open the container of @data without probing its streams: the byte
 * limit and the MP4 index claim first, then libavformat's header read.
 * A container that declares no stream up front is refused (see
 * demux_open). */
static dvpp_status demux_input(demux *d, const uint8_t *data, size_t len,
                               const dvpp_limits *lim, dvpp_err *err)
{
    dvpp_status st;
    uint8_t *buf;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int e;

    memset(d, 0, sizeof(*d));
    st = dvpp__video_libs(err);
    if (st != DVPP_OK)
        return st;
    if (!data || len == 0)
        return dvpp_err_set(err, DVPP_EINVAL, "input", "no video bytes");
    if (len > lim->max_video_bytes)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_video_bytes",
                            "video of %zu bytes is above max_video_bytes (%llu)", len,
                            (unsigned long long)lim->max_video_bytes);
    if (check_mov_samples(data, len, lim, err) != DVPP_OK)
        return DVPP_ELIMIT;
    d->m = (mem_reader){data, len, 0};
    buf = av_malloc(IO_BUFFER);
    d->io = buf ? avio_alloc_context(buf, IO_BUFFER, 0, &d->m, mem_read, NULL, mem_seek) : NULL;
    d->fmt = d->io ? avformat_alloc_context() : NULL;
    if (!d->fmt) {
        if (!d->io)
            av_free(buf);
        demux_close(d);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "demuxer");
    }
    d->fmt->pb = d->io;
    d->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    d->fmt->format_whitelist = av_strdup(FORMAT_WHITELIST);
    d->fmt->protocol_whitelist = av_strdup("none");
    e = avformat_open_input(&d->fmt, NULL, NULL, NULL);
    if (e < 0) {
        d->fmt = NULL; /* freed by avformat_open_input on failure */
        demux_close(d);
        return dvpp_err_set(err, DVPP_ECORRUPT, "video",
                            "not a video dvppd reads (H.264/H.265 in Annex-B, MP4, MKV or "
                            "MPEG-TS): %s", averr(e, eb));
    }
    if (d->fmt->nb_streams == 0) {
        demux_close(d);
        return dvpp_err_set(err, DVPP_ECORRUPT, "video", "no stream declared where the "
                            "container's header or program table should be");
    }
    return DVPP_OK;
}

/* Choose the video stream (libavformat's best) and its codec. */
static dvpp_status demux_pick(demux *d, dvpp_err *err)
{
    d->stream = av_find_best_stream(d->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (d->stream < 0) {
        /* No stream at all, or one whose codec the demuxer never learnt (an
         * MP4 cut inside its index): a damaged file, not one without video. */
        bool damaged = d->fmt->nb_streams == 0;
        for (unsigned i = 0; i < d->fmt->nb_streams; i++)
            damaged |= d->fmt->streams[i]->codecpar->codec_id == AV_CODEC_ID_NONE;
        demux_close(d);
        if (damaged)
            return dvpp_err_set(err, DVPP_ECORRUPT, "video", "no readable stream: the file is "
                                "damaged or truncated");
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "video", "no video stream");
    }
    switch (d->fmt->streams[d->stream]->codecpar->codec_id) {
    case AV_CODEC_ID_H264:
        d->codec = DVPP_VIDEO_H264;
        break;
    case AV_CODEC_ID_HEVC:
        d->codec = DVPP_VIDEO_H265;
        break;
    default: {
        /* Read the name before demux_close frees the context. */
        enum AVCodecID id = d->fmt->streams[d->stream]->codecpar->codec_id;
        demux_close(d);
        /* A video stream whose codec the demuxer never learnt: an MP4 cut
         * inside its sample description (found by the aarch64 run, whose
         * encoder wrote a stream of another length, so the cut landed there). */
        if (id == AV_CODEC_ID_NONE)
            return dvpp_err_set(err, DVPP_ECORRUPT, "video", "no readable stream: the file is "
                                "damaged or truncated");
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "codec",
                            "video codec %s: dvppd decodes H.264 and H.265",
                            avcodec_get_name(id));
    }
    }
    return DVPP_OK;
}

/* The size each stream's container declares, kept before probing
 * overwrites it with the size of whichever SPS its decoders parsed last
 * (0 x 0 for raw Annex-B and MPEG-TS, which declare none). */
static dvpp_status keep_declared(demux *d, dvpp_err *err)
{
    unsigned n = d->fmt->nb_streams;

    d->declared = av_calloc(n, 2 * sizeof(*d->declared));
    if (!d->declared) {
        demux_close(d);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "demuxer");
    }
    for (unsigned i = 0; i < n; i++) {
        const AVCodecParameters *cp = d->fmt->streams[i]->codecpar;
        if (cp->width > 0 && cp->height > 0)
            d->declared[2 * i] = cp->width, d->declared[2 * i + 1] = cp->height;
    }
    return DVPP_OK;
}

static dvpp_status demux_open(demux *d, const uint8_t *data, size_t len,
                              const dvpp_limits *lim, dvpp_err *err)
{
    AVDictionary **opts = NULL;
    unsigned nopts;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    dvpp_status st = demux_input(d, data, len, lim, err);
    int e;

    if (st != DVPP_OK)
        return st;
    if (check_claims(d, lim, err) != DVPP_OK) {
        demux_close(d);
        return DVPP_ELIMIT;
    }
    st = keep_declared(d, err);
    if (st != DVPP_OK)
        return st;
    /* Every stream the probing decoders see must have had its claim checked
     * and must get max_pixels: streams that probing would add (an MPEG-TS
     * whose program table comes late) get neither, so none may be added,
     * and a container that declares none up front is refused
     * (demux_input). */
    d->fmt->max_streams = (int)d->fmt->nb_streams;
    nopts = d->fmt->nb_streams;
    opts = av_calloc(nopts ? nopts : 1, sizeof(*opts));
    for (unsigned i = 0; opts && i < nopts; i++)
        opts[i] = probe_options(lim);
    e = avformat_find_stream_info(d->fmt, opts);
    for (unsigned i = 0; opts && i < nopts; i++)
        av_dict_free(&opts[i]);
    av_free(opts);
    if (e < 0) {
        demux_close(d);
        return dvpp_err_set(err, DVPP_ECORRUPT, "video", "cannot read the stream: %s",
                            averr(e, eb));
    }
    return demux_pick(d, err);
}

/* The size of the stream's first frame in decode order, as libavcodec
 * makes it: its first SPS's frame (that SPS's cropping), or the size the
 * container declares where H.264's container cropping takes that instead.
 * False when no SPS says (the codec parameters' size stands). */
static bool first_frame_size(const demux *d, uint32_t *w, uint32_t *h)
{
    const AVStream *st = d->fmt->streams[d->stream];
    const int *decl = d->declared + 2 * d->stream;
    video_pic pic;

    if (!first_sps(d->fmt, st, d->m.data, d->m.len, &pic) || !pic.framed ||
        pic.w > UINT32_MAX || pic.h > UINT32_MAX)
        return false;
    if (d->codec == DVPP_VIDEO_H264 &&
        dvpp__video_container_crops(&pic, (uint64_t)decl[0], (uint64_t)decl[1]))
        pic.w = (uint64_t)decl[0], pic.h = (uint64_t)decl[1];
    *w = (uint32_t)pic.w, *h = (uint32_t)pic.h;
    return true;
}

/* The stream's size after probing held to @lim (no size: sizeless), then
 * the first frame's (fill_info), which its claim covered already unless a
 * container declared a smaller one. */
static dvpp_status check_stream_size(const demux *d, const dvpp_video_info *info,
                                     const dvpp_limits *lim, dvpp_err *err)
{
    const AVCodecParameters *cp = d->fmt->streams[d->stream]->codecpar;
    dvpp_status st = cp->width > 0 ? dvpp__video_check_size(lim, cp->width, cp->height, err)
                                   : sizeless(d, lim, err);

    if (st == DVPP_OK)
        st = dvpp_limits_check_image(lim, info->width, info->height, err);
    return st;
}

/* @info of the chosen stream. Its size is the first frame's: after
 * probing, the codec parameters hold the size of the last SPS the probing
 * decoders parsed, which for a stream whose resolution changes is another
 * frame's (320x240 then 160x160 said 160x160). */
static void fill_info(const demux *d, dvpp_video_info *info)
{
    const AVStream *st = d->fmt->streams[d->stream];
    const AVCodecParameters *cp = st->codecpar;
    const char *prof = avcodec_profile_name(cp->codec_id, cp->profile);
    const AVPixFmtDescriptor *pd = av_pix_fmt_desc_get((enum AVPixelFormat)cp->format);
    AVRational r = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;

    memset(info, 0, sizeof(*info));
    info->codec = d->codec;
    snprintf(info->container, sizeof(info->container), "%s", d->fmt->iformat->name);
    snprintf(info->profile, sizeof(info->profile), "%s", prof ? prof : "");
    if (!first_frame_size(d, &info->width, &info->height)) {
        info->width = (uint32_t)(cp->width > 0 ? cp->width : 0);
        info->height = (uint32_t)(cp->height > 0 ? cp->height : 0);
    }
    info->bit_depth = pd ? (uint32_t)pd->comp[0].depth : 8;
    info->fps = r.num && r.den ? av_q2d(r) : 0;
    info->frames = st->nb_frames > 0 ? st->nb_frames : -1;
    info->duration_s = st->duration > 0 ? (double)st->duration * av_q2d(st->time_base)
                       : d->fmt->duration > 0 ? (double)d->fmt->duration / AV_TIME_BASE
                                              : -1;
}

dvpp_status dvpp_video_probe(const uint8_t *data, size_t len, const dvpp_limits *lim,
                             dvpp_video_info *info, dvpp_err *err)
{
    dvpp_limits def = dvpp_limits_default();
    demux d;
    dvpp_status st;

    if (!lim)
        lim = &def;
    st = demux_open(&d, data, len, lim, err);
    if (st != DVPP_OK)
        return st;
    fill_info(&d, info);
    st = check_stream_size(&d, info, lim, err);
    demux_close(&d);
    return st;
}

/* --- every size a stream's parameter sets make -------------------------------------- */

/* The walk of dvpp_video_scan_sizes: H.264's container cropping as
 * libavcodec runs it (the declared size is taken while each SPS allows
 * it, and never again after one that does not). */
typedef struct size_scan {
    dvpp_video_sizes *out;
    uint64_t caller_w, caller_h;    /* the declared size, 0 once given up */
} size_scan;

static void note_size(size_scan *s, uint64_t w, uint64_t h)
{
    dvpp_video_sizes *o = s->out;

    o->max_width = w > o->max_width ? (uint32_t)w : o->max_width;
    o->max_height = h > o->max_height ? (uint32_t)h : o->max_height;
    for (uint32_t i = 0; i < o->count; i++)
        if (o->size[i].width == w && o->size[i].height == h)
            return;
    if (o->count == DVPP_VIDEO_SIZES) {
        o->complete = false;
        return;
    }
    o->size[o->count++] = (dvpp_video_size){(uint32_t)w, (uint32_t)h};
}

static void scan_sps(void *ctx, const video_pic *pic, bool read)
{
    size_scan *s = ctx;

    /* An SPS cut short says nothing; one whose frame cannot be told (or
     * past 32 bits, which no limit lets through) is counted at its coded
     * size, which no frame of it passes. */
    if (!read || pic->coded_w > UINT32_MAX || pic->coded_h > UINT32_MAX) {
        s->out->complete = false;
        return;
    }
    if (!pic->framed) {
        s->out->complete = false;
        s->caller_w = s->caller_h = 0;
        note_size(s, pic->coded_w, pic->coded_h);
        return;
    }
    if (s->caller_w && dvpp__video_container_crops(pic, s->caller_w, s->caller_h)) {
        note_size(s, s->caller_w, s->caller_h);
        return;
    }
    s->caller_w = s->caller_h = 0;
    note_size(s, pic->w, pic->h);
}

/* Every SPS of packet @pkt (and of a new sample description it brings). */
static void scan_packet(size_scan *s, bool hevc, const AVPacket *pkt, unsigned *nal_len)
{
    size_t n = 0;
    const uint8_t *x = av_packet_get_side_data(pkt, AV_PKT_DATA_NEW_EXTRADATA, &n);

    if (x && n) {
        *nal_len = dvpp__video_nal_length_size(hevc, x, n);
        dvpp__video_each_record_sps(hevc, x, n, scan_sps, s);
    }
    dvpp__video_each_packet_sps(hevc, pkt->data, (size_t)pkt->size, *nal_len, scan_sps, s);
}

dvpp_status dvpp_video_scan_sizes(const uint8_t *data, size_t len, const dvpp_limits *lim,
                                  dvpp_video_sizes *out, dvpp_err *err)
{
    dvpp_limits def = dvpp_limits_default();
    size_scan s = {.out = out};
    const AVCodecParameters *cp;
    AVPacket *pkt;
    unsigned nal_len;
    bool hevc;
    demux d;
    dvpp_status st;

    memset(out, 0, sizeof(*out));
    out->complete = true;
    st = demux_input(&d, data, len, lim ? lim : &def, err);
    if (st == DVPP_OK)
        st = demux_pick(&d, err);
    if (st != DVPP_OK)
        return st;
    pkt = av_packet_alloc();
    if (!pkt) {
        demux_close(&d);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "packet");
    }
    cp = d.fmt->streams[d.stream]->codecpar;
    hevc = d.codec == DVPP_VIDEO_H265;
    /* No probing ran: the codec parameters hold what the container says. */
    if (!hevc && cp->width > 0 && cp->height > 0)
        s.caller_w = (uint64_t)cp->width, s.caller_h = (uint64_t)cp->height;
    nal_len = dvpp__video_nal_length_size(hevc, cp->extradata, (size_t)cp->extradata_size);
    if (cp->extradata_size > 0)
        dvpp__video_each_record_sps(hevc, cp->extradata, (size_t)cp->extradata_size,
                                    scan_sps, &s);
    /* A damaged packet ends the walk: the sizes read so far stand, and
     * decoding the stream will say what is wrong with it. */
    while (av_read_frame(d.fmt, pkt) >= 0) {
        if (pkt->stream_index == d.stream)
            scan_packet(&s, hevc, pkt, &nal_len);
        av_packet_unref(pkt);
    }
    av_packet_free(&pkt);
    demux_close(&d);
    return DVPP_OK;
}

/* --- decoding ------------------------------------------------------------------------- */

void dvpp_vdec_opts_init(dvpp_vdec_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->format = DVPP_PIXEL_NV12;
    o->every = 1;
}

static enum AVPixelFormat av_format_of(dvpp_pixfmt f)
{
    return (enum AVPixelFormat)dvpp__video_av_format(f);
}

typedef struct vdec {
    const dvpp_vdec_opts *o;
    const dvpp_limits *lim;
    demux d;
    AVCodecContext *ctx;
    AVFrame *frame;
    AVPacket *pkt;
    video_conv conv[2];         /* the converted frame, reused (in turn
                                   with hold_one) */
    video_pool pool;            /* o->direct_i420: the frames' buffers */
    AVFrame *held[2];           /* o->direct_i420 with hold_one: the
                                   delivered frames still being read */
    dvpp_image direct[2];       /* their I420 views */
    uint64_t decoded, kept;
    double fps, prev_kept_t;
    bool have_prev;
    bool done;                  /* max_frames reached */
    dvpp_vdec_sink sink;
    void *ctx_sink;
} vdec;

unsigned dvpp_vdec_threads(const dvpp_vdec_opts *o, uint32_t w, uint32_t h)
{
    if (!o->threads || (o->threads_min_pixels && (uint64_t)w * h < o->threads_min_pixels))
        return 1;
    return o->threads;
}

static dvpp_status open_decoder(vdec *v, dvpp_err *err)
{
    const AVStream *st = v->d.fmt->streams[v->d.stream];
    const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int e;

    v->ctx = dec ? avcodec_alloc_context3(dec) : NULL;
    v->frame = av_frame_alloc();
    v->pkt = av_packet_alloc();
    if (!dec)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "codec", "no decoder in libavcodec");
    if (!v->ctx || !v->frame || !v->pkt)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "decoder");
    e = avcodec_parameters_to_context(v->ctx, st->codecpar);
    if (e < 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "video", "codec parameters: %s", averr(e, eb));
    /* The size the container declares, not the one probing left (the last
     * SPS its decoders parsed): H.264 crops frames to the size it is given
     * when that is within the SPS's rounding up to 16, so a 320x240 stream
     * followed by a 320x232 one came out 320x232 from its first frame on. */
    v->ctx->width = v->d.declared[2 * v->d.stream];
    v->ctx->height = v->d.declared[2 * v->d.stream + 1];
    v->ctx->pkt_timebase = st->time_base;
    if (v->o->direct_i420 && v->o->format == DVPP_PIXEL_NV12)
        dvpp__video_pool_attach(v->ctx, &v->pool);
    dvpp__video_decoder_setup(v->ctx, v->lim, dvpp_vdec_threads(v->o, (uint32_t)(v->ctx->width > 0 ? v->ctx->width : 0),
                                                          (uint32_t)(v->ctx->height > 0 ? v->ctx->height : 0)));
    e = avcodec_open2(v->ctx, dec, NULL);
    if (e < 0)
        return dvpp_err_set(err, DVPP_ECORRUPT, "video", "cannot open the decoder: %s",
                            averr(e, eb));
    return DVPP_OK;
}

/* @ts - @start in ticks, as a double. Containers carry any int64 pts (a
 * Matroska cluster at INT64_MIN + 4096 followed by one near INT64_MAX), so
 * the difference can pass int64 and `ts - start` would be undefined. The
 * difference of two int64 always fits an unsigned 64-bit magnitude, so it
 * is taken there exactly (modulo 2^64 is exact when the true value lies in
 * [0, 2^64)) and rounded to a double once: every frame keeps its exact
 * time to double precision, none is refused or saturated, and the result
 * is what float(ts - start) gives with unbounded integers. */
static double ticks_since(int64_t ts, int64_t start)
{
    if (ts >= start)
        return (double)((uint64_t)ts - (uint64_t)start);
    return -(double)((uint64_t)start - (uint64_t)ts);
}

/* The time of decoded frame @n: its pts, else n / fps. */
static double frame_time(const vdec *v, const AVFrame *f, uint64_t n)
{
    const AVStream *st = v->d.fmt->streams[v->d.stream];
    int64_t ts = f->best_effort_timestamp;

    if (ts != AV_NOPTS_VALUE) {
        int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
        return ticks_since(ts, start) * av_q2d(st->time_base);
    }
    return v->fps > 0 ? (double)n / v->fps : (double)n;
}

/* The sampling rules, as ffmpeg's select filter evaluates them per decoded
 * frame n (presentation order) and time t. */
static bool keep_frame(vdec *v, uint64_t n, double t, bool key)
{
    const dvpp_vdec_opts *o = v->o;

    if (o->every > 1 && n % o->every != 0)
        return false;
    if (o->keyframes_only && !key)
        return false;
    if (t < o->start_s || (o->end_s > 0 && t > o->end_s))
        return false;
    /* The epsilon absorbs the rounding of pts x time_base: at 30 fps,
     * fps=5 keeps every 6th frame, not the 19th after the 12th. */
    if (o->fps > 0 && v->have_prev && t - v->prev_kept_t < 1.0 / o->fps - 1e-9)
        return false;
    return true;
}

/* The image v->frame goes to the sink as: the decoder's own buffer as I420
 * where o->direct_i420 allows it (held by a reference while the sink may
 * read it), else converted into the next conversion buffer. */
static dvpp_status frame_image(vdec *v, const dvpp_image **img, dvpp_err *err)
{
    unsigned slot = v->o->hold_one ? (unsigned)(v->kept & 1) : 0;
    video_conv *conv = &v->conv[slot];
    dvpp_status st;

    if (v->o->direct_i420 && v->o->format == DVPP_PIXEL_NV12 &&
        dvpp__video_frame_as_i420(v->frame, &v->direct[slot])) {
        st = dvpp__video_check_size(v->lim, v->frame->width, v->frame->height, err);
        if (st != DVPP_OK)
            return st;
        if (v->o->hold_one) {
            if (!v->held[slot] && !(v->held[slot] = av_frame_alloc()))
                return dvpp_err_set(err, DVPP_ENOMEM, NULL, "decoder");
            av_frame_unref(v->held[slot]);
            if (av_frame_ref(v->held[slot], v->frame) < 0)
                return dvpp_err_set(err, DVPP_ENOMEM, NULL, "decoder");
        }
        *img = &v->direct[slot];
        return DVPP_OK;
    }
    st = dvpp__video_conv_frame(conv, v->frame, v->o->format, v->o->align_w, v->o->align_h,
                                v->lim, err);
    *img = &conv->out;
    return st;
}

static dvpp_status take_frame(vdec *v, dvpp_err *err)
{
    const AVFrame *f = v->frame;
    uint64_t n = v->decoded++;
    double t = frame_time(v, f, n);
    const dvpp_image *img = NULL;
    dvpp_vframe vf;
    dvpp_status st;

    if (v->o->check) {
        dvpp_status stop = v->o->check(v->o->check_ctx);
        if (stop != DVPP_OK)
            return dvpp_err_set(err, stop, NULL, "decoding stopped at frame %llu: %s",
                                (unsigned long long)n, dvpp_strerror(stop));
    }
    if (v->decoded > v->lim->max_video_frames)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_video_frames",
                            "more than %u frames (max_video_frames)",
                            v->lim->max_video_frames);
    if (dvpp__video_frame_damaged(f))
        return dvpp_err_set(err, DVPP_ECORRUPT, "video", "frame %llu is damaged",
                            (unsigned long long)n);
    if (v->o->end_s > 0 && t > v->o->end_s) {
        v->done = true; /* frames come in presentation order: none will be kept */
        return DVPP_OK;
    }
    if (!keep_frame(v, n, t, f->key_frame))
        return DVPP_OK;
    st = frame_image(v, &img, err);
    if (st != DVPP_OK)
        return st;
    vf = (dvpp_vframe){img, n, v->kept, f->best_effort_timestamp, t, f->key_frame != 0};
    st = v->sink(v->ctx_sink, &vf, err);
    v->kept++;
    v->prev_kept_t = t;
    v->have_prev = true;
    if (v->o->max_frames && v->kept >= v->o->max_frames)
        v->done = true;
    return st;
}

/* Receive every frame the decoder has; DVPP_OK at EAGAIN/EOF. */
static dvpp_status drain(vdec *v, dvpp_err *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];

    while (!v->done) {
        int e = avcodec_receive_frame(v->ctx, v->frame);
        dvpp_status st;
        if (e == AVERROR(EAGAIN) || e == AVERROR_EOF)
            return DVPP_OK;
        if (e < 0) /* the words of send's: with frame threads a bad packet's
                      error comes out here instead */
            return dvpp_err_set(err, DVPP_ECORRUPT, "video", "damaged stream near frame %llu: "
                                "%s", (unsigned long long)v->decoded, averr(e, eb));
        st = take_frame(v, err);
        av_frame_unref(v->frame);
        if (st != DVPP_OK)
            return st;
    }
    return DVPP_OK;
}

static dvpp_status send(vdec *v, const AVPacket *pkt, dvpp_err *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];

    for (;;) {
        int e = avcodec_send_packet(v->ctx, pkt);
        dvpp_status st;
        if (e >= 0 || e == AVERROR_EOF)
            return drain(v, err);
        if (e != AVERROR(EAGAIN))
            return dvpp_err_set(err, DVPP_ECORRUPT, "video", "damaged stream near frame %llu: "
                                "%s", (unsigned long long)v->decoded, averr(e, eb));
        st = drain(v, err); /* the decoder is full: take frames, then resend */
        if (st != DVPP_OK || v->done)
            return st;
    }
}

static dvpp_status run_decode(vdec *v, dvpp_err *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    dvpp_status st = DVPP_OK;

    while (st == DVPP_OK && !v->done) {
        int e = av_read_frame(v->d.fmt, v->pkt);
        if (e == AVERROR_EOF)
            break;
        if (e < 0)
            return dvpp_err_set(err, DVPP_ECORRUPT, "video", "demuxing: %s", averr(e, eb));
        if (v->pkt->stream_index == v->d.stream)
            st = send(v, v->pkt, err);
        av_packet_unref(v->pkt);
    }
    if (st == DVPP_OK && !v->done)
        st = send(v, NULL, err); /* EOS: flush the frames held for reordering */
    if (st == DVPP_OK && v->decoded == 0)
        st = dvpp_err_set(err, DVPP_ECORRUPT, "video", "no frame could be decoded");
    return st;
}

dvpp_status dvpp_video_decode(const uint8_t *data, size_t len, const dvpp_vdec_opts *o,
                              const dvpp_limits *lim, dvpp_vdec_sink sink, void *ctx,
                              dvpp_video_info *info, dvpp_err *err)
{
    dvpp_limits def = dvpp_limits_default();
    dvpp_video_info vi;
    vdec v;
    dvpp_status st;

    if (!o || !sink || av_format_of(o->format) == AV_PIX_FMT_NONE ||
        o->format == DVPP_PIXEL_I420)
        return dvpp_err_set(err, DVPP_EINVAL, "format",
                            "video frames come out as nv12, nv21, rgb or bgr");
    if (o->hold_one && !o->hold_end)
        return dvpp_err_set(err, DVPP_EINVAL, "hold_end", "hold_one needs hold_end");
    if (o->threads > 64 || o->fps < 0 || o->start_s < 0 || o->end_s < 0 ||
        (o->end_s > 0 && o->end_s < o->start_s))
        return dvpp_err_set(err, DVPP_EINVAL, "options", "bad sampling options");
    memset(&v, 0, sizeof(v));
    v.o = o;
    v.lim = lim ? lim : &def;
    v.sink = sink;
    v.ctx_sink = ctx;
    dvpp__video_conv_init(&v.conv[0]);
    dvpp__video_conv_init(&v.conv[1]);
    st = demux_open(&v.d, data, len, v.lim, err);
    if (st != DVPP_OK)
        return st;
    dvpp__video_pool_init(&v.pool);
    fill_info(&v.d, &vi);
    v.fps = vi.fps;
    if (info)
        *info = vi;
    st = check_stream_size(&v.d, &vi, v.lim, err);
    if (st == DVPP_OK)
        st = open_decoder(&v, err);
    if (st == DVPP_OK)
        st = run_decode(&v, err);
    if (o->hold_one && v.kept)
        o->hold_end(ctx);
    dvpp__video_conv_fini(&v.conv[0]);
    dvpp__video_conv_fini(&v.conv[1]);
    av_frame_free(&v.held[0]);
    av_frame_free(&v.held[1]);
    av_packet_free(&v.pkt);
    av_frame_free(&v.frame);
    avcodec_free_context(&v.ctx);
    dvpp__video_pool_fini(&v.pool);
    demux_close(&v.d);
    return st;
}

/* --- encoding ------------------------------------------------------------------------ */

void dvpp_venc_opts_init(dvpp_venc_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->codec = DVPP_VIDEO_H264;
    o->fps_num = 30, o->fps_den = 1;
    o->gop = 30;
    o->rc = DVPP_VENC_RC_CRF;
    o->bitrate_kbps = 2000;
    o->crf = 23;
    snprintf(o->preset, sizeof(o->preset), "veryfast");
    o->container = DVPP_VENC_ANNEXB;
}

bool dvpp_venc_rc_parse(const char *s, dvpp_venc_rc *out)
{
    static const char *const names[] = {"crf", "cbr", "vbr"};

    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *out = (dvpp_venc_rc)i;
            return true;
        }
    return false;
}

/* An FFmpeg error of the encoder or the muxer as a status: ENOMEM stays
 * ENOMEM (mem_write reports a dvpp_buf that cannot grow that way), the
 * rest is @other. */
static dvpp_status av_status(int e, dvpp_status other)
{
    return e == AVERROR(ENOMEM) ? DVPP_ENOMEM : other;
}

/* A seekable in-memory output for the MP4 muxer (it rewrites the moov). */
typedef struct mem_writer {
    dvpp_buf *b;
    size_t base, pos;           /* where this stream starts in @b; cursor */
} mem_writer;

static int mem_write(void *opaque, uint8_t *buf, int size)
{
    mem_writer *w = opaque;
    size_t end = w->base + w->pos + (size_t)size;

    if (end > w->b->len) {
        if (dvpp_buf_reserve(w->b, end - w->b->len) != DVPP_OK)
            return AVERROR(ENOMEM);
        memset(w->b->data + w->b->len, 0, end - w->b->len);
        w->b->len = end;
    }
    memcpy(w->b->data + w->base + w->pos, buf, (size_t)size);
    w->pos += (size_t)size;
    return size;
}

static int64_t mem_wseek(void *opaque, int64_t off, int whence)
{
    mem_writer *w = opaque;
    size_t len = w->b->len - w->base;
    int64_t base = (whence & ~AVSEEK_FORCE) == SEEK_CUR   ? (int64_t)w->pos
                   : (whence & ~AVSEEK_FORCE) == SEEK_END ? (int64_t)len
                                                          : 0;

    if ((whence & ~AVSEEK_FORCE) == AVSEEK_SIZE)
        return (int64_t)len;
    if (base + off < 0)
        return AVERROR(EINVAL);
    w->pos = (size_t)(base + off);
    return (int64_t)w->pos;
}

struct dvpp_venc {
    dvpp_venc_opts o;
    dvpp_buf *out;
    AVCodecContext *ctx;
    AVFrame *frame;
    AVPacket *pkt;
    struct SwsContext *sws;
    int sws_fmt, sws_w, sws_h;
    /* MP4 */
    AVFormatContext *mux;
    AVIOContext *io;
    mem_writer w;
    int64_t next_pts;
    uint64_t packets, keyframes;
    bool finished;
    uint8_t *pad;               /* padded copy of the input frame */
    size_t pad_cap;
};

static dvpp_status venc_check(const dvpp_venc_opts *o, dvpp_err *err)
{
    if ((unsigned)o->codec > DVPP_VIDEO_H265)
        return dvpp_err_set(err, DVPP_EINVAL, "codec", "codec h264 or h265");
    if (o->width < 16 || o->height < 16 || o->width > 8192 || o->height > 8192 ||
        (o->width & 1) || (o->height & 1))
        return dvpp_err_set(err, DVPP_EINVAL, "size", "frames of %ux%u: even sides in "
                            "16..8192", o->width, o->height);
    if (!o->fps_num || !o->fps_den || o->fps_num / o->fps_den > 240)
        return dvpp_err_set(err, DVPP_EINVAL, "fps", "frame rate 1..240");
    if (o->gop < 1 || o->gop > 65536)
        return dvpp_err_set(err, DVPP_EINVAL, "gop", "key frame interval 1..65536");
    if ((unsigned)o->rc > DVPP_VENC_RC_VBR || o->crf > 51 ||
        (o->rc != DVPP_VENC_RC_CRF && (o->bitrate_kbps < 10 || o->bitrate_kbps > 500000)))
        return dvpp_err_set(err, DVPP_EINVAL, "rc", "rate control: crf 0..51, bitrate "
                            "10..500000 kbit/s");
    if (o->threads > 64)
        return dvpp_err_set(err, DVPP_EINVAL, "threads", "threads 0..64");
    return DVPP_OK;
}

static void set_rate_control(AVCodecContext *c, const dvpp_venc_opts *o)
{
    char crf[8];
    int64_t br = (int64_t)o->bitrate_kbps * 1000;

    switch (o->rc) {
    case DVPP_VENC_RC_CRF:
        snprintf(crf, sizeof(crf), "%u", o->crf);
        av_opt_set(c->priv_data, "crf", crf, 0);
        break;
    case DVPP_VENC_RC_CBR:
        c->bit_rate = c->rc_max_rate = c->rc_min_rate = br;
        c->rc_buffer_size = (int)br;
        break;
    case DVPP_VENC_RC_VBR:
        c->bit_rate = br;
        c->rc_max_rate = br;
        c->rc_buffer_size = (int)(2 * br);
        break;
    }
}

static dvpp_status open_mp4(dvpp_venc *e, dvpp_err *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    AVStream *st;
    uint8_t *buf = av_malloc(IO_BUFFER);
    int r;

    e->w = (mem_writer){e->out, e->out->len, 0};
    e->io = buf ? avio_alloc_context(buf, IO_BUFFER, 1, &e->w, NULL, mem_write, mem_wseek)
                : NULL;
    if (!e->io) {
        av_free(buf);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "muxer");
    }
    r = avformat_alloc_output_context2(&e->mux, NULL, "mp4", NULL);
    if (r < 0 || !(st = avformat_new_stream(e->mux, NULL)))
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "muxer");
    e->mux->pb = e->io;
    e->mux->flags |= AVFMT_FLAG_CUSTOM_IO;
    st->time_base = e->ctx->time_base;
    r = avcodec_parameters_from_context(st->codecpar, e->ctx);
    if (r >= 0)
        r = avformat_write_header(e->mux, NULL);
    if (r < 0)
        return dvpp_err_set(err, av_status(r, DVPP_ECODEC), "container", "MP4 header: %s",
                            averr(r, eb));
    return DVPP_OK;
}

/* Key frames exactly at the interval (and at forced IDRs), as DVPP VENC's
 * KeyFrameInterval: no scene-cut I frames. In low-delay mode (DVPP VENC's
 * output) they are IDR pictures, a closed GOP: x265's default open GOP
 * makes them CRA pictures, forced ones too (the default mode keeps that:
 * its H.265 bytes are unchanged). And the same bytes for the same
 * input every time: x265 keeps its own thread pools unless told, and
 * libx264 0.164's AVX-512 code reads uninitialised memory (the stream
 * then depends on the heap's history; AVX2 is deterministic), so x264 is
 * capped at AVX2 where it would pick AVX-512. */
static void set_encoder_params(AVCodecContext *c, const dvpp_venc_opts *o)
{
    char p[96];
    unsigned t = o->threads ? o->threads : 1;

    if (o->codec == DVPP_VIDEO_H265) {
        snprintf(p, sizeof(p), "log-level=error:scenecut=0%s:pools=%u:frame-threads=%u",
                 o->low_delay ? ":open-gop=0" : "", t, t < 16 ? t : 16);
        av_opt_set(c->priv_data, "x265-params", p, 0);
        return;
    }
#if defined(__x86_64__)
    snprintf(p, sizeof(p), "scenecut=0%s",
             dvpp_cpu_detect() >= DVPP_SIMD_AVX512 ? ":asm=AVX2" : "");
#else
    snprintf(p, sizeof(p), "scenecut=0");
#endif
    av_opt_set(c->priv_data, "x264-params", p, 0);
}

dvpp_status dvpp_venc_open(const dvpp_venc_opts *o, dvpp_buf *out, dvpp_venc **enc,
                           dvpp_err *err)
{
    const char *name;
    const AVCodec *codec;
    dvpp_venc *e;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    dvpp_status st = venc_check(o, err);
    int r;

    *enc = NULL;
    if (st != DVPP_OK)
        return st;
    st = dvpp__video_libs(err);
    if (st != DVPP_OK)
        return st;
    name = o->codec == DVPP_VIDEO_H265 ? "libx265" : "libx264";
    codec = avcodec_find_encoder_by_name(name);
    if (!codec)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "codec", "%s is not in this libavcodec",
                            name);
    e = dvpp_calloc(1, sizeof(*e));
    if (!e)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "encoder");
    e->o = *o;
    e->out = out;
    e->sws_fmt = -1;
    e->ctx = avcodec_alloc_context3(codec);
    e->frame = av_frame_alloc();
    e->pkt = av_packet_alloc();
    if (!e->ctx || !e->frame || !e->pkt) {
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "encoder");
        goto fail;
    }
    e->ctx->width = (int)o->width;
    e->ctx->height = (int)o->height;
    e->ctx->pix_fmt = AV_PIX_FMT_YUV420P;
    e->ctx->time_base = (AVRational){(int)o->fps_den, (int)o->fps_num};
    e->ctx->framerate = (AVRational){(int)o->fps_num, (int)o->fps_den};
    e->ctx->gop_size = (int)o->gop;
    e->ctx->max_b_frames = 0; /* frames leave in order, as DVPP VENC */
    e->ctx->thread_count = (int)(o->threads ? o->threads : 1);
    if (o->container == DVPP_VENC_MP4)
        e->ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    av_opt_set(e->ctx->priv_data, "preset", o->preset[0] ? o->preset : "veryfast", 0);
    av_opt_set(e->ctx->priv_data, "forced-idr", "1", 0);
    if (o->low_delay)
        av_opt_set(e->ctx->priv_data, "tune", "zerolatency", 0);
    if (o->profile[0])
        av_opt_set(e->ctx->priv_data, "profile", o->profile, 0);
    set_encoder_params(e->ctx, o);
    set_rate_control(e->ctx, o);
    e->frame->format = AV_PIX_FMT_YUV420P;
    e->frame->width = (int)o->width;
    e->frame->height = (int)o->height;
    r = avcodec_open2(e->ctx, codec, NULL);
    if (r >= 0)
        r = av_frame_get_buffer(e->frame, 0);
    if (r < 0) {
        st = dvpp_err_set(err, DVPP_EINVAL, "profile", "%s refused the settings: %s", name,
                          averr(r, eb));
        goto fail;
    }
    if (o->container == DVPP_VENC_MP4) {
        st = open_mp4(e, err);
        if (st != DVPP_OK)
            goto fail;
    }
    *enc = e;
    return DVPP_OK;

fail:
    dvpp_venc_close(e);
    return st;
}

/* Pull every packet the encoder has into the output. */
static dvpp_status collect(dvpp_venc *e, dvpp_err *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];

    for (;;) {
        int r = avcodec_receive_packet(e->ctx, e->pkt);
        dvpp_status st = DVPP_OK;
        if (r == AVERROR(EAGAIN) || r == AVERROR_EOF)
            return DVPP_OK;
        if (r < 0)
            return dvpp_err_set(err, av_status(r, DVPP_ECODEC), "video", "encoding: %s",
                                averr(r, eb));
        e->packets++;
        e->keyframes += (e->pkt->flags & AV_PKT_FLAG_KEY) != 0;
        if (e->mux) {
            /* one frame long: without it the last sample has no duration
             * and the MP4's edit list cuts the last frame */
            if (e->pkt->duration == 0)
                e->pkt->duration = 1;
            e->pkt->stream_index = 0;
            av_packet_rescale_ts(e->pkt, e->ctx->time_base, e->mux->streams[0]->time_base);
            r = av_interleaved_write_frame(e->mux, e->pkt);
            if (r < 0)
                st = dvpp_err_set(err, av_status(r, DVPP_ECODEC), "container", "MP4: %s",
                                  averr(r, eb));
        } else {
            st = dvpp_buf_append(e->out, e->pkt->data, (size_t)e->pkt->size);
            if (st != DVPP_OK)
                dvpp_err_set(err, st, NULL, "out of memory for the stream");
        }
        av_packet_unref(e->pkt);
        if (st != DVPP_OK)
            return st;
    }
}

static dvpp_status load_frame(dvpp_venc *e, const dvpp_image *img, dvpp_err *err)
{
    enum AVPixelFormat src = av_format_of(img->format);
    const uint8_t *sp[4] = {0};
    int ss[4] = {0};
    dvpp_planes pl;
    dvpp_status st;

    if (src == AV_PIX_FMT_NONE)
        return dvpp_err_set(err, DVPP_EFORMAT, "format", "frames are nv12, nv21, i420, rgb "
                            "or bgr, not %s", dvpp_pixfmt_name(img->format));
    if (img->width != e->o.width || img->height != e->o.height)
        return dvpp_err_set(err, DVPP_EINVAL, "size", "frame %ux%u, the stream is %ux%u",
                            img->width, img->height, e->o.width, e->o.height);
    st = dvpp_image_planes(img, &pl, err);
    if (st != DVPP_OK)
        return st;
    if ((int)src != e->sws_fmt) {
        sws_freeContext(e->sws);
        e->sws = sws_getContext((int)img->width, (int)img->height, src, (int)img->width,
                                (int)img->height, AV_PIX_FMT_YUV420P, SWS_FLAGS, NULL, NULL,
                                NULL);
        if (!e->sws)
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "converter");
        e->sws_fmt = (int)src;
    }
    /* swscale's SIMD reads a little past the last row: the caller's frame
     * may end at an unmapped page (a memfd of an exact page multiple), so
     * it is read from a copy with FFmpeg's input padding behind it. */
    if (e->pad_cap < pl.total + AV_INPUT_BUFFER_PADDING_SIZE) {
        av_free(e->pad);
        e->pad_cap = pl.total + AV_INPUT_BUFFER_PADDING_SIZE;
        e->pad = av_mallocz(e->pad_cap);
        if (!e->pad) {
            e->pad_cap = 0;
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "frame copy");
        }
    }
    memcpy(e->pad, img->data, pl.total);
    for (int k = 0; k < pl.count && k < 4; k++) {
        sp[k] = e->pad + pl.p[k].offset;
        ss[k] = (int)pl.p[k].stride;
    }
    if (av_frame_make_writable(e->frame) < 0)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "frame");
    sws_scale(e->sws, sp, ss, 0, (int)img->height, e->frame->data, e->frame->linesize);
    return DVPP_OK;
}

dvpp_status dvpp_venc_frame(dvpp_venc *e, const dvpp_image *img, bool force_idr,
                            dvpp_err *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    dvpp_status st;
    int r;

    if (e->finished)
        return dvpp_err_set(err, DVPP_EINVAL, "state", "the encoder was finished");
    st = load_frame(e, img, err);
    if (st != DVPP_OK)
        return st;
    e->frame->pts = e->next_pts++;
    e->frame->pict_type = force_idr ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
    e->frame->key_frame = force_idr;
    r = avcodec_send_frame(e->ctx, e->frame);
    if (r < 0)
        return dvpp_err_set(err, DVPP_ECODEC, "video", "encoding: %s", averr(r, eb));
    return collect(e, err);
}

dvpp_status dvpp_venc_finish(dvpp_venc *e, dvpp_err *err)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    dvpp_status st;
    int r;

    if (e->finished)
        return DVPP_OK;
    e->finished = true;
    r = avcodec_send_frame(e->ctx, NULL); /* EOS */
    if (r < 0 && r != AVERROR_EOF)
        return dvpp_err_set(err, DVPP_ECODEC, "video", "flush: %s", averr(r, eb));
    st = collect(e, err);
    if (st == DVPP_OK && e->mux) {
        r = av_write_trailer(e->mux);
        if (r < 0)
            st = dvpp_err_set(err, av_status(r, DVPP_ECODEC), "container", "MP4 trailer: %s",
                              averr(r, eb));
        else
            avio_flush(e->io);
    }
    return st;
}

uint64_t dvpp_venc_packets(const dvpp_venc *e, uint64_t *keyframes)
{
    if (keyframes)
        *keyframes = e->keyframes;
    return e->packets;
}

void dvpp_venc_close(dvpp_venc *e)
{
    if (!e)
        return;
    if (e->mux)
        avformat_free_context(e->mux);
    if (e->io) {
        av_freep(&e->io->buffer);
        avio_context_free(&e->io);
    }
    sws_freeContext(e->sws);
    av_free(e->pad);
    av_packet_free(&e->pkt);
    av_frame_free(&e->frame);
    avcodec_free_context(&e->ctx);
    dvpp_free(e, sizeof(*e));
}
