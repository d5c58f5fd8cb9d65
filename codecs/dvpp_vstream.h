/* dvpp_vstream: a streaming VDEC, one access unit in at a time.
 *
 * dvpp_video_decode (dvpp_video.h) decodes a whole buffer; a DVPP VDEC
 * channel (aclvdecSendFrame) is fed one frame's bytes per call and hands
 * out each picture as the decoder completes it. This module is that
 * decoder: H.264 or H.265 Annex-B packets in, with a caller's tag each;
 * zero or more frames out per packet, in the order the decoder completes
 * them (presentation order, lagging the input by the reordering delay
 * the stream signals: none for a stream without B frames, whose every
 * picture comes out during its own packet's call), each with the tag of
 * the packet it came from; a flush (EOS)
 * hands out what the decoder still holds and readies it for a new stream.
 *
 * Frames are the same bytes as dvpp_video_decode's and `ffmpeg -pix_fmt
 * nv12` (the same conversion, shared through video_int.h): NV12 or NV21
 * with DVPP VDEC strides (row ALIGN(w, 16), rows ALIGN(h, 2)) unless other
 * alignments are asked for. A stream may change its size (a new SPS):
 * frames come out at their own size.
 *
 * Safe decoding, as dvpp_video_decode: every SPS a packet carries is held
 * to the limits before the decoder sees the packet, and every frame size
 * before its image is allocated (libavcodec's own max_pixels too);
 * err_detect explode with error concealment off (a damaged picture is an
 * error, never a concealed one).
 *
 * Thread-safety: one decoder is used by one thread at a time (calls may
 * come from different threads in turn). Memory: FFmpeg's (av_malloc) and
 * the decoder's own; the caller owns nothing it gets but the decoder.
 */
#ifndef DVPP_VSTREAM_H
#define DVPP_VSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_image.h"
#include "dvpp_limits.h"
#include "dvpp_status.h"
#include "dvpp_video.h"

typedef struct dvpp_vstream_opts {
    dvpp_video_codec codec;   /* the packets' codec */
    dvpp_pixfmt format;       /* NV12 (default) or NV21 */
    uint32_t align_w, align_h;/* stride alignment; 0 = VDEC's 16 and 2 */
    /* Decoder threads, 0 = 1 (1..64). More than one delays every picture
     * by frame threading's depth. */
    unsigned threads;
} dvpp_vstream_opts;

void dvpp_vstream_opts_init(dvpp_vstream_opts *o);

/* One frame out; valid during the sink call only. */
typedef struct dvpp_vstream_frame {
    /* DVPP_OK: @image holds the picture. Else @image is NULL and the
     * frame still counts in @index: DVPP_ECORRUPT, the decoder completed
     * a picture it flagged damaged; DVPP_ELIMIT, a picture over the
     * limits; DVPP_EUNSUPPORTED, one that cannot be converted;
     * DVPP_ENOMEM, no memory for its image. */
    dvpp_status status;
    const dvpp_image *image;  /* the converted frame (decoder-owned) */
    uint64_t tag;             /* the tag of the packet it came from */
    uint64_t index;           /* frames handed out before this one */
    bool key;                 /* a key frame */
} dvpp_vstream_frame;

/* The sink: consume (copy) the frame. A status other than DVPP_OK stops
 * handing out frames and is returned by the call that handed it out (the
 * decoder stays usable; frames it held back come with the next call). */
typedef dvpp_status (*dvpp_vstream_sink)(void *ctx, const dvpp_vstream_frame *f,
                                         dvpp_err *err);

typedef struct dvpp_vstream dvpp_vstream;

/* A decoder. DVPP_EINVAL for bad options (a format other than NV12/NV21,
 * threads over 64), DVPP_EUNSUPPORTED when libavcodec lacks the decoder,
 * DVPP_ENOMEM. @lim (NULL: the defaults) is copied. *@out is NULL on
 * failure. Caller owns *@out; release with dvpp_vstream_close. */
dvpp_status dvpp_vstream_open(const dvpp_vstream_opts *o, const dvpp_limits *lim,
                              dvpp_vstream **out, dvpp_err *err);

/* Decode one packet (@len bytes of Annex-B, borrowed for the call: the
 * decoder keeps a copy of what it needs) tagged @tag (below 2^63), then
 * hand every frame the decoder completes to @sink. Errors for the packet
 * itself, after the frames it completed were handed out: DVPP_EINVAL (no
 * bytes, a tag of 2^63 or more), DVPP_ELIMIT (an SPS claiming a picture
 * over the limits, or more than max_video_bytes: the packet is not
 * decoded), DVPP_ECORRUPT (the decoder refused it: damaged; its picture
 * will not come), the sink's status, DVPP_ENOMEM. The decoder stays
 * usable after any of them. */
dvpp_status dvpp_vstream_send(dvpp_vstream *s, const uint8_t *data, size_t len, uint64_t tag,
                              dvpp_vstream_sink sink, void *ctx, dvpp_err *err);

/* End of stream: hand every frame the decoder still holds to @sink, then
 * reset it, so the next packet starts a new stream (it needs its
 * parameter sets and a key frame). Errors: DVPP_ECORRUPT, the sink's
 * status (the reset is done either way). */
dvpp_status dvpp_vstream_flush(dvpp_vstream *s, dvpp_vstream_sink sink, void *ctx,
                               dvpp_err *err);

/* Frames handed out so far (every status). */
uint64_t dvpp_vstream_frames(const dvpp_vstream *s);

/* Free the decoder and its frames. NULL is a no-op. */
void dvpp_vstream_close(dvpp_vstream *s);

#endif
