/* Folder-private pieces of the video modules.
 *
 * What a stream's H.264/H.265 parameter sets say, read by hand
 * (dvpp_video_sps.c) for dvpp_video.c, which needs it before libavformat's
 * probing decoders run (the claims held to the limits) and where
 * libavformat's own answer is not the first frame's (its codec parameters
 * end at whichever SPS probing parsed last), and for dvpp_vstream.c, which
 * holds each packet's SPS to the limits before the decoder sees it. Plain
 * functions of bytes: no allocation, no FFmpeg call.
 *
 * And what the whole-buffer decoder (dvpp_video.c) and the streaming one
 * (dvpp_vstream.c) do the same way, so that their frames are the same
 * bytes (dvpp_video_frame.c): the decoder's safety settings, the damaged
 * frame test, the conversion of a decoded frame. */
#ifndef DVPP_VIDEO_INT_H
#define DVPP_VIDEO_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_image.h"
#include "dvpp_limits.h"
#include "dvpp_status.h"

/* The picture one SPS describes. */
typedef struct video_pic {
    uint64_t coded_w;        /* the coded picture: macroblocks x 16 (H.264) */
    uint64_t coded_h;        /* or luma samples (H.265) */
    bool framed;             /* w and h are known: the SPS was read up to its
                                cropping and libavcodec accepts that cropping */
    uint64_t w;              /* the frames libavcodec makes of it: the coded */
    uint64_t h;              /* picture cropped as FFmpeg 5.1 crops it (a left
                                crop shortened to keep its planes aligned) */
    bool top_left;           /* cropped at the top or the left (H.264's
                                container cropping is then off) */
} video_pic;

/* Read the SPS NAL @nal (@n bytes, header first, emulation prevention
 * bytes in place) of an H.264 (@hevc false) or H.265 stream into @pic:
 * true when its coded size was read (the claim held to the limits;
 * pic->framed says whether the frame size was read too). */
bool dvpp__video_sps_read(bool hevc, const uint8_t *nal, size_t n, video_pic *pic);

/* The first SPS in @p: an avcC/hvcC record (MP4/MKV extradata) or
 * Annex-B bytes. False when there is none or it is cut short. */
bool dvpp__video_first_sps(bool hevc, const uint8_t *p, size_t n, video_pic *pic);

/* The first SPS in the payload of PID @pid of the MPEG-TS @d, walked
 * through the TS and PES headers (the SPS may be cut across packets). */
bool dvpp__video_ts_first_sps(bool hevc, int pid, const uint8_t *d, size_t len,
                              video_pic *pic);

/* The NAL length size (1, 2 or 4) of the avcC/hvcC record @p, 0 when @p is
 * not one (Annex-B extradata, or none). */
unsigned dvpp__video_nal_length_size(bool hevc, const uint8_t *p, size_t n);

/* Called with every SPS found, in order: @read as dvpp__video_sps_read
 * returned (false: cut short, @pic says nothing); @pic is valid during the
 * call. */
typedef void (*video_sps_fn)(void *ctx, const video_pic *pic, bool read);

/* Every SPS of the avcC/hvcC record @p (every one it lists). */
void dvpp__video_each_record_sps(bool hevc, const uint8_t *p, size_t n, video_sps_fn fn,
                                 void *ctx);

/* Every SPS among the NALs of the packet @p: each prefixed by its length
 * in @nal_len big-endian bytes (MP4/MKV), or Annex-B (@nal_len 0). */
void dvpp__video_each_packet_sps(bool hevc, const uint8_t *p, size_t n, unsigned nal_len,
                                 video_sps_fn fn, void *ctx);

/* H.264's container cropping (h264_slice.c init_dimensions): libavcodec
 * makes frames of the size the container declares (@w x @h, before any
 * probing) instead of @pic's when that differs only by what rounding up
 * to 16 adds and the SPS crops neither the top nor the left. */
bool dvpp__video_container_crops(const video_pic *pic, uint64_t w, uint64_t h);

/* --- decoded frames (dvpp_video_frame.c) ------------------------------------ */

struct AVCodecContext;
struct AVFrame;
struct SwsContext;

/* What every entry point of the video code calls first: FFmpeg's
 * libraries loaded (dvpp_avlib.h: dlopen on first use; DVPP_EUNSUPPORTED
 * "video" when they are missing) and quiet (FFmpeg logs to stderr by
 * default; a daemon wants our errors only: the level is set once per
 * process). Thread-safe. */
dvpp_status dvpp__video_libs(dvpp_err *err);

/* The libavcodec pixel format (enum AVPixelFormat) of @f: NV12, NV21,
 * RGB, BGR, I420; AV_PIX_FMT_NONE (-1) for any other. */
int dvpp__video_av_format(dvpp_pixfmt f);

/* @w x @h of a decoded frame against @lim: DVPP_ECORRUPT when there is no
 * size, DVPP_ELIMIT (max_side, max_pixels). */
dvpp_status dvpp__video_check_size(const dvpp_limits *lim, int w, int h, dvpp_err *err);

/* The settings of a safe decode, on @c before avcodec_open2: a damaged
 * frame is an error, never a concealed picture (err_detect explode,
 * bitstream, buffer; no error concealment), libavcodec's own max_pixels
 * from @lim, @threads decoder threads (0 = 1). */
void dvpp__video_decoder_setup(struct AVCodecContext *c, const dvpp_limits *lim,
                               unsigned threads);

/* True when libavcodec marked @f damaged (decode errors, a corrupt flag). */
bool dvpp__video_frame_damaged(const struct AVFrame *f);

/* A decoded frame's conversion: libswscale with the ffmpeg CLI's flags and
 * matrix, into a reused image. Owned by one decoder; not thread-safe. */
typedef struct video_conv {
    struct SwsContext *sws;  /* for the frames below (NULL: none yet) */
    int src_w, src_h;        /* the decoded frames it is set for */
    int src_fmt;             /* their AVPixelFormat, -1 before the first */
    dvpp_pixfmt dst;         /* the converted format */
    int cs, range;           /* the colorspace/range sws is set for */
    dvpp_image out;          /* the converted frame (owned; reused while the
                                size holds, zeroed padding) */
} video_conv;

void dvpp__video_conv_init(video_conv *c);

/* Convert @f into c->out as @format (NV12, NV21, RGB, BGR) with rows
 * aligned to @align_w bytes and @align_h rows (0: VDEC's 16 and 2). A new
 * size is held to @lim before c->out is allocated for it. c->out is valid
 * until the next call or dvpp__video_conv_fini. Errors: DVPP_ELIMIT,
 * DVPP_ECORRUPT (no size), DVPP_EUNSUPPORTED (a frame format swscale
 * cannot read), DVPP_ENOMEM. */
dvpp_status dvpp__video_conv_frame(video_conv *c, const struct AVFrame *f, dvpp_pixfmt format,
                                   uint32_t align_w, uint32_t align_h,
                                   const dvpp_limits *lim, dvpp_err *err);

/* Free the converter and its image (init'd or used; again is a no-op). */
void dvpp__video_conv_fini(video_conv *c);

/* Frames the pipeline can read where the decoder wrote them. libavcodec's
 * own allocator gives each plane of a frame its own buffer; this one gives
 * an 8-bit 4:2:0 frame (yuv420p) one buffer laid out as a dvpp_image I420:
 * the Y plane (stride S, H rows), then U and V (stride S / 2, H / 2 rows
 * each), S a multiple of 128 and H of 2, both at least what
 * avcodec_align_dimensions2 asks. Other formats keep libavcodec's
 * allocator. Buffers come from an AVBufferPool, zeroed when first made
 * (rows the decoder never writes hold zeros, not old heap bytes). Owned by
 * one decoder; its get_buffer2 runs on the decoder's frame threads, so the
 * pool's (re)creation is locked. */
typedef struct video_pool {
    pthread_mutex_t lock;
    struct AVBufferPool *pool;   /* for buffers of @size bytes (NULL: none yet) */
    size_t size;
} video_pool;

void dvpp__video_pool_init(video_pool *p);

/* Make @c allocate its yuv420p frames from @p (before avcodec_open2; @p
 * must outlive @c and every frame it made). */
void dvpp__video_pool_attach(struct AVCodecContext *c, video_pool *p);

/* Free the pool, once, after the decoder is freed (frames still referenced
 * keep their buffers until unreferenced). */
void dvpp__video_pool_fini(video_pool *p);

/* True when @f can go to a pipeline as it is, as the I420 image @img
 * (pointing into @f's buffer; valid while @f is referenced): 8-bit 4:2:0
 * in this pool's layout, not full range. Those are the frames whose
 * conversion to NV12 (dvpp__video_conv_frame) only interleaves U and V:
 * the same samples. A cropped frame (data moved off the buffer's start),
 * a full-range one (swscale would convert its range) or another format
 * answers false. */
bool dvpp__video_frame_as_i420(const struct AVFrame *f, dvpp_image *img);

#endif
