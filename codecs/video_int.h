/* Folder-private pieces of the video module: what a stream's H.264/H.265
 * parameter sets say, read by hand (dvpp_video_sps.c) for dvpp_video.c,
 * which needs it before libavformat's probing decoders run (the claims
 * held to the limits) and where libavformat's own answer is not the first
 * frame's (its codec parameters end at whichever SPS probing parsed last).
 * Plain functions of bytes: no allocation, no FFmpeg call. */
#ifndef DVPP_VIDEO_INT_H
#define DVPP_VIDEO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
