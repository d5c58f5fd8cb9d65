/* dvpp_video: VDEC and VENC on libavcodec/libavformat (FFmpeg 5.1).
 *
 * Decode: H.264 and H.265 (8-bit; 10-bit streams come out as 8-bit) from
 * Annex-B elementary streams, or MP4/MOV, MKV and MPEG-TS files demuxed
 * from memory (custom I/O: no file or network protocol is reachable).
 * Frames come out as NV12/NV21 with DVPP VDEC strides (row ALIGN(w, 16),
 * rows ALIGN(h, 2)) or packed RGB/BGR, one at a time to a sink, in
 * presentation order, after sampling (every Nth frame, a target fps, key
 * frames only, a time range, a frame cap). Pixel conversion is
 * libswscale's, with the flags of the ffmpeg command line, so frames equal
 * `ffmpeg -pix_fmt nv12` (or rgb24) byte for byte.
 *
 * Safe decoding: the container's and the decoder's sizes are checked
 * against the limits before any frame is allocated (libavcodec's own
 * max_pixels too), err_detect=explode with error concealment off (a damaged
 * frame is an error, never a concealed picture), a budget of decoded
 * frames (limits.max_video_frames), limited decoder threads, EOS flush.
 *
 * Encode: NV12/NV21/I420/RGB/BGR frames to H.264 (libx264) or H.265
 * (libx265) with the DVPP VENC knobs (key frame interval, rate control
 * CBR/VBR/CRF, bitrate, frame rate, profile, per-frame IDR), as an Annex-B
 * stream or an MP4 file, in memory.
 *
 * Thread-safety: every call is independent (contexts are per call or per
 * encoder); FFmpeg's log level is set once, lazily, to errors only.
 * Memory: FFmpeg allocates through av_malloc; outputs go to caller
 * buffers / dvpp_buf.
 */
#ifndef DVPP_VIDEO_H
#define DVPP_VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_image.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_status.h"

typedef enum dvpp_video_codec {
    DVPP_VIDEO_H264 = 0,
    DVPP_VIDEO_H265 = 1,
} dvpp_video_codec;

/* "h264" / "h265" (also "hevc", "avc") */
bool dvpp_video_codec_parse(const char *s, dvpp_video_codec *out);
const char *dvpp_video_codec_name(dvpp_video_codec c);

typedef struct dvpp_video_info {
    dvpp_video_codec codec;
    char container[32];       /* "h264", "hevc", "mov,mp4,...", "matroska,webm", "mpegts" */
    char profile[32];         /* "High", "Main", ... */
    /* The first frame's size (in decode order; the first delivered when
     * none is sampled away): its SPS's picture as libavcodec crops it (or
     * the container's declared size where H.264 takes that), the first SPS
     * of the stream's own bytes (Annex-B, MPEG-TS) or of its extradata
     * (MP4, MKV); the container's or the probing decoders' size when no
     * SPS says. A stream whose resolution changes has frames of other
     * sizes later: dvpp_video_scan_sizes lists them. */
    uint32_t width, height;
    uint32_t bit_depth;
    double fps;               /* average frame rate, 0 when unknown */
    int64_t frames;           /* from the container, -1 when unknown */
    double duration_s;        /* -1 when unknown */
} dvpp_video_info;

/* Probe a video in memory: container, codec, size, rate. DVPP_EUNSUPPORTED
 * for another codec or no video stream, DVPP_ECORRUPT when nothing can be
 * demuxed, DVPP_ELIMIT (max_video_bytes, max_side, max_pixels). */
dvpp_status dvpp_video_probe(const uint8_t *data, size_t len, const dvpp_limits *lim,
                             dvpp_video_info *info, dvpp_err *err);

/* Distinct frame sizes dvpp_video_sizes lists. */
#define DVPP_VIDEO_SIZES 16

typedef struct dvpp_video_size {
    uint32_t width;
    uint32_t height;
} dvpp_video_size;

/* Every frame size a stream's parameter sets make, for a buffer that must
 * hold any frame of it (a ring slot sized before the decode). */
typedef struct dvpp_video_sizes {
    uint32_t max_width;       /* the widest frame any SPS makes */
    uint32_t max_height;      /* the tallest (maybe of another SPS) */
    uint32_t count;           /* distinct sizes in @size */
    dvpp_video_size size[DVPP_VIDEO_SIZES]; /* in decode order of first use */
    /* @size lists every size a frame can have: false when an SPS could not
     * be read (cut short: the maxima may be short of it), when one makes
     * no frame size libavcodec would (counted at its coded size, which no
     * frame of it passes), or past DVPP_VIDEO_SIZES sizes (in the maxima,
     * not in @size). */
    bool complete;
} dvpp_video_sizes;

/* Read every H.264/H.265 SPS of @data's video stream (its extradata, the
 * sample descriptions a container adds later, and those in-band, in
 * decode order) without decoding a frame: each makes frames of its
 * picture as libavcodec crops it (dvpp_video_info.width). One pass over
 * the packets; held to max_video_bytes and the MP4 index claim
 * (max_decode_memory), not to max_pixels/max_side (no pixel is made: the
 * decode holds frames to those). A damaged packet ends the walk with the
 * sizes read so far. Errors: those of dvpp_video_probe's demuxing
 * (DVPP_EINVAL, DVPP_ELIMIT, DVPP_ECORRUPT, DVPP_EUNSUPPORTED), DVPP_ENOMEM.
 * @out is written in full (zeroed first). */
dvpp_status dvpp_video_scan_sizes(const uint8_t *data, size_t len, const dvpp_limits *lim,
                                  dvpp_video_sizes *out, dvpp_err *err);

typedef struct dvpp_vdec_opts {
    dvpp_pixfmt format;       /* NV12 (default), NV21, RGB, BGR */
    uint32_t align_w, align_h;/* stride alignment; 0 = VDEC's 16 and 2 */
    uint32_t every;           /* keep frame n when n % every == 0 (0, 1: all) */
    double fps;               /* keep a frame when >= 1/fps after the last kept */
    bool keyframes_only;
    double start_s, end_s;    /* keep pts in [start, end] seconds; end 0 = open */
    uint32_t max_frames;      /* stop after this many kept frames (0: no cap) */
    unsigned threads;         /* decoder threads, 0 = 1 */
    /* A stream whose frames (the container's declared size) have fewer
     * pixels decodes on one thread whatever @threads says: a frame thread's
     * hand-off costs more than such a frame's decode (100,000 tiny frames
     * take longer threaded). 0: @threads always. */
    uint64_t threads_min_pixels;
    /* Two converted-frame buffers, used in turn: a delivered frame's image
     * stays valid until the sink call after it returns (a sink may hand
     * frame n to another thread and take frame n + 1 while it is read).
     * false: one buffer, valid during the sink call only. With it,
     * @hold_end (required) is called with the sink's ctx once, after the
     * last sink call and before dvpp_video_decode frees the buffers (on
     * every path that called the sink): it returns once no one reads the
     * last frame. */
    bool hold_one;
    void (*hold_end)(void *sink_ctx);
    /* With @format NV12: a frame the decoder made as 8-bit 4:2:0 in
     * limited range (yuv420p, most H.264/H.265) comes to the sink as an
     * I420 image in the decoder's own buffer (frames are allocated in that
     * layout: strides a multiple of 128, rows of 2), with no conversion:
     * the samples its NV12 conversion would interleave. Other frames
     * (full range, 10-bit, cropped at the top or left) are converted as
     * usual. For a sink that only reads pixels (a pipeline to a tensor),
     * never for one that hands out the bytes as laid out. */
    bool direct_i420;
    /* Polled once per decoded frame (may be NULL): a status other than
     * DVPP_OK stops decoding and is returned (a canceled job, a passed
     * deadline: DVPP_ECANCELED, DVPP_ETIMEDOUT). */
    dvpp_status (*check)(void *ctx);
    void *check_ctx;
} dvpp_vdec_opts;

void dvpp_vdec_opts_init(dvpp_vdec_opts *o);

/* The decoder threads @o gives a stream of @w x @h frames (at least 1;
 * threads_min_pixels applied). */
unsigned dvpp_vdec_threads(const dvpp_vdec_opts *o, uint32_t w, uint32_t h);

/* One delivered frame; valid during the sink call only (with
 * dvpp_vdec_opts.hold_one, until the next sink call returns). */
typedef struct dvpp_vframe {
    const dvpp_image *image;  /* the converted frame (decoder-owned buffer;
                                 I420 with dvpp_vdec_opts.direct_i420) */
    uint64_t index;           /* decoded frame number n (presentation order) */
    uint64_t kept;            /* how many were delivered before this one */
    int64_t pts;              /* in the stream's time base */
    double time_s;            /* pts in seconds (n / fps when there is no pts) */
    bool key;
} dvpp_vframe;

/* The sink: consume (copy, process) the frame; an error stops decoding
 * and is returned by dvpp_video_decode. */
typedef dvpp_status (*dvpp_vdec_sink)(void *ctx, const dvpp_vframe *f, dvpp_err *err);

/* Decode @data and hand every kept frame to @sink. @info (may be NULL)
 * receives the probe. Errors: those of dvpp_video_probe, DVPP_EINVAL for
 * bad options, DVPP_ECORRUPT for a damaged or truncated stream (the
 * message names the frame), DVPP_ELIMIT for a frame over the size limits
 * or a stream over max_video_frames, the sink's status, DVPP_ENOMEM. */
dvpp_status dvpp_video_decode(const uint8_t *data, size_t len, const dvpp_vdec_opts *o,
                              const dvpp_limits *lim, dvpp_vdec_sink sink, void *ctx,
                              dvpp_video_info *info, dvpp_err *err);

/* --- encode ---------------------------------------------------------------- */

typedef enum dvpp_venc_rc {
    DVPP_VENC_RC_CRF = 0,     /* constant quality (default; crf) */
    DVPP_VENC_RC_CBR = 1,     /* constant bitrate (bitrate = maxrate = bufsize) */
    DVPP_VENC_RC_VBR = 2,     /* variable, capped at bitrate */
} dvpp_venc_rc;

bool dvpp_venc_rc_parse(const char *s, dvpp_venc_rc *out);

typedef enum dvpp_venc_container {
    DVPP_VENC_ANNEXB = 0,
    DVPP_VENC_MP4 = 1,
} dvpp_venc_container;

typedef struct dvpp_venc_opts {
    dvpp_video_codec codec;
    uint32_t width, height;   /* of the frames; even */
    uint32_t fps_num, fps_den;/* frame rate, default 30/1 */
    uint32_t gop;             /* key frame interval, default 30 (DVPP: 1..65536) */
    dvpp_venc_rc rc;
    uint32_t bitrate_kbps;    /* CBR/VBR target, default 2000 */
    uint32_t crf;             /* CRF quality 0..51, default 23 (x264 and x265 default) */
    char profile[16];         /* "baseline" "main" "high" (H.264), "main" (H.265); "" default */
    char preset[16];          /* x264/x265 preset, default "veryfast" */
    dvpp_venc_container container;
    unsigned threads;         /* encoder threads, 0 = 1 */
    /* One packet out per frame in, during that frame's dvpp_venc_frame,
     * as DVPP's VENC hands out each frame's stream (x264/x265 "tune
     * zerolatency": no lookahead, no frame threads, no B frames), and
     * H.265 key frames (GOP and forced) as IDR pictures (a closed GOP;
     * otherwise x265 writes CRA pictures); false (default): the encoder
     * may hold frames for its lookahead. */
    bool low_delay;
} dvpp_venc_opts;

void dvpp_venc_opts_init(dvpp_venc_opts *o);

typedef struct dvpp_venc dvpp_venc;

/* An encoder writing into @out (caller-owned; appended to). DVPP_EINVAL for
 * bad options (field named), DVPP_EUNSUPPORTED when libx264/libx265 is
 * missing. */
dvpp_status dvpp_venc_open(const dvpp_venc_opts *o, dvpp_buf *out, dvpp_venc **enc,
                           dvpp_err *err);

/* Encode one frame (NV12, NV21, I420, RGB or BGR, the opened size, any
 * strides); @force_idr makes it an IDR frame. */
dvpp_status dvpp_venc_frame(dvpp_venc *e, const dvpp_image *img, bool force_idr,
                            dvpp_err *err);

/* Flush (EOS) and finish the container; the stream is complete in @out. */
dvpp_status dvpp_venc_finish(dvpp_venc *e, dvpp_err *err);

/* Packets written so far, and how many were key frames. */
uint64_t dvpp_venc_packets(const dvpp_venc *e, uint64_t *keyframes);

/* Free (after finish or on error). NULL is a no-op. */
void dvpp_venc_close(dvpp_venc *e);

#endif
