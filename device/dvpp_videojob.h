/* dvpp_videojob: a video through VDEC and, per kept frame, the VPC + AIPP
 * stages of a dvpp_pipeline, into one batch (T frames).
 *
 * The frames are decoded by dvpp_video_decode (codecs/dvpp_video.h) with
 * the request's sampling; each kept frame is either copied out as pixels
 * (NV12/NV21 with VDEC strides, or RGB/BGR) or run through @pipe as raw
 * input (the frame's format and strides; the pipeline's own input fields
 * are replaced) into slice t of a T x C x H x W tensor (TENSOR output) or
 * as an image of T images. The output grows in @out as frames arrive: T is
 * known only at the end (max_frames bounds it).
 *
 * Every slice has the first frame's shape. A stream whose resolution
 * changes runs each frame with its own geometry (dvpp_video_frame_info.geom)
 * as long as the pipeline's output keeps that shape (a resize to a fixed
 * size: stretch, fill, letterbox); when the output would change with it,
 * or frames are copied out as pixels, the run stops at that frame with
 * DVPP_EUNSUPPORTED ("video", the sizes named): a batch has one shape,
 * and no slice is ever left partly written.
 *
 * Ownership: @out is the caller's (dvpp_buf, appended to). @frames (per
 * kept frame: index, pts, time, key, geometry) is allocated here; free
 * with dvpp_free(frames, n * sizeof(*frames)).
 * Thread-safety: one call per worker at a time (the worker's buffers are
 * used for the per-frame pipeline; with @overlap also its aux buffers, on
 * a helper thread started and joined within the call).
 */
#ifndef DVPP_VIDEOJOB_H
#define DVPP_VIDEOJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_pipeline.h"
#include "dvpp_video.h"

typedef struct dvpp_video_request {
    dvpp_vdec_opts vdec;      /* sampling and the decoded frame format */
    bool has_pipe;            /* run @pipe on every kept frame */
    dvpp_pipeline pipe;       /* input fields are set per frame; TENSOR or
                                 unencoded IMAGE output */
    uint64_t max_bytes;       /* the batch's bytes at most (a front end's
                                 limits.max_output_bytes); 0: 4 x
                                 limits.max_decode_memory */
    /* With @has_pipe: frame t's pipeline runs on a helper thread (with the
     * worker's aux buffers, dvpp_worker_aux) while frame t + 1 is decoded
     * and converted on the caller's, so one video keeps two cores busy
     * beside the decoder's threads. Slices, their order and every byte
     * are those of a run without it. */
    bool overlap;
    /* Convert every frame to @vdec.format before its pipeline even where
     * the pipeline could read the decoder's buffer as it is (see
     * dvpp_video_run): the reference the direct path is tested against. */
    bool convert_frames;
} dvpp_video_request;

void dvpp_video_request_init(dvpp_video_request *rq);

/* The most decoder threads dvpp_video_spread gives. */
#define DVPP_VIDEO_SPREAD_MAX_THREADS 16
/* Its dvpp_vdec_opts.threads_min_pixels: streams of smaller frames stay on
 * one decoder thread. */
#define DVPP_VIDEO_SPREAD_MIN_PIXELS ((uint64_t)320 * 240)

/* One video on the channels that are free: with @idle_channels channels
 * beside the job's own with nothing to run (dvpp_task_idle_channels),
 * decoder options @o that name no threads (0) get (for frames of at least
 * DVPP_VIDEO_SPREAD_MIN_PIXELS) a frame thread for
 * every channel the video may use, and true is
 * returned when a per-frame pipeline (@has_pipe) should run overlapped
 * (dvpp_video_request.overlap). With none free @o stays as asked and the
 * answer is false: work already queued keeps its channels. *
 * Not one thread more, as ffmpeg's "auto" (cores + 1) gives: beside the
 * frame threads the job's thread feeds, converts and plans, and the
 * overlap's helper runs the pipelines; one more frame thread then only
 * takes CPU from them (measured on 2 vCPUs: 2 frame threads + overlap ran
 * 1080p to 224 f32 tensors 4-10 % faster than 3, and decode alone 4-8 %). */
bool dvpp_video_spread(dvpp_vdec_opts *o, bool has_pipe, unsigned idle_channels);

/* Whether pipeline @p may read a video's frames as the decoder's own I420
 * buffers instead of their conversion to @format
 * (dvpp_vdec_opts.direct_i420): the same samples, so the same output, as
 * long as only pixel values reach it: @format NV12 and a tensor output,
 * not AIPP (its config names the input format), not an ascend profile
 * (their VPC input rules are YUV420SP's), no image watch (it would see
 * I420 input). An image output hands out the last op's bytes as laid out
 * and always gets the conversion. */
bool dvpp_video_pipe_reads_pixels(const dvpp_pipeline *p, dvpp_pixfmt format);

typedef struct dvpp_video_frame_info {
    uint64_t index;           /* decoded frame number */
    int64_t pts;
    double time_s;
    bool key;
    /* With a pipeline: how this frame's output maps back to it (frames of
     * a stream whose resolution changes each have their own; otherwise
     * every frame has the result's geom). Without: the identity. */
    dvpp_pipe_geom geom;
} dvpp_video_frame_info;

typedef struct dvpp_video_result {
    dvpp_video_info info;     /* the stream */
    uint64_t frames;          /* T: frames kept */
    /* TENSOR output: the T x ... tensor's descriptor (data = out->data) */
    bool is_tensor;
    dvpp_tensor tensor;
    /* frames or pipeline images: each slice's image geometry (all equal) */
    dvpp_image image;         /* data NULL; size = one slice */
    size_t slice_bytes;
    dvpp_video_frame_info *frame;  /* [frames], allocated (see header) */
    dvpp_pipe_geom geom;      /* of the pipeline for the first frame, when
                                 has_pipe (each frame's: frame[t].geom) */
    /* Frames whose pipeline read the decoder's own I420 buffer instead of
     * a conversion to NV12 (dvpp_vdec_opts.direct_i420) */
    uint64_t direct_frames;
} dvpp_video_result;

/* Decode @data with @rq into @out. Errors: those of dvpp_video_decode and
 * dvpp_pipeline_run (for a frame: the message names it), DVPP_EINVAL for a
 * pipeline whose output is encoded, DVPP_ELIMIT when @out would pass
 * @lim->max_decode_memory x 4 (the batch's memory cap), DVPP_ENOMEM. On
 * error @res->frame is NULL and @out holds whatever was written;
 * DVPP_EUNSUPPORTED ("video") for a frame whose size changes the slice's
 * shape (see above). */
dvpp_status dvpp_video_run(dvpp_worker *w, const uint8_t *data, size_t len,
                           const dvpp_video_request *rq, dvpp_buf *out,
                           dvpp_video_result *res, dvpp_err *err);

void dvpp_video_result_fini(dvpp_video_result *res);

/* The resolution rule of dvpp_video_run, for front ends that gather the
 * frames of one decode into one batch themselves (dvppctl video-decode
 * --socket), so that every batch takes or refuses a stream whose
 * resolution changes alike (the daemon's socket decode, one frame per ring
 * slot with its own descriptor, delivers every frame with its own shape
 * and needs no rule): the first kept frame fixes the output; a later frame of
 * another size runs with its own plan as long as it makes the same output,
 * else DVPP_EUNSUPPORTED ("video") naming the frame and both sizes. Plain
 * data of one decode (zeroed at its start). */
typedef struct dvpp_video_shape {
    uint32_t first_w, first_h;   /* the first kept frame's size */
    size_t first_bytes;          /* its bytes (frames copied as they are) */
    dvpp_pipeline_plan first;    /* its plan (frames through a pipeline) */
} dvpp_video_shape;

/* Kept frame @t (from 0) @img, @bytes as laid out, copied as it is: frame
 * 0 fixes the shape, a later one must have it. */
dvpp_status dvpp_video_shape_copy(dvpp_video_shape *s, uint64_t t, const dvpp_image *img,
                                  size_t bytes, dvpp_err *err);

/* Kept frame @t (from 0) through @pipe, whose raw input is the frame
 * (@data, @len bytes): probed under @lim (every op held to the limits) and
 * planned into @plan; frame 0 fixes the output, a later frame must make
 * the same (tensor: C, H, W, dtype, layout; image: format, size, bytes). */
dvpp_status dvpp_video_shape_plan(dvpp_video_shape *s, uint64_t t, const dvpp_pipeline *pipe,
                                  const uint8_t *data, size_t len, const dvpp_limits *lim,
                                  dvpp_pipeline_plan *plan, dvpp_err *err);

/* Kept frame @t (from 0), @w x @h, whose pipeline output was made
 * elsewhere (a daemon's decode channel, one frame per ring slot) as @out
 * (its dtype, layout and stored shape: a 1 x ... slot descriptor; data
 * unused): the rule and the words of dvpp_video_shape_plan, for a front
 * end that gathers such frames into one batch (dvppctl video-decode
 * --socket) and must refuse what dvpp_video_run refuses. */
dvpp_status dvpp_video_shape_tensor(dvpp_video_shape *s, uint64_t t, uint32_t w, uint32_t h,
                                    const dvpp_tensor *out, dvpp_err *err);

/* For front ends that gather frames themselves (e.g. from the daemon):
 * store @fi at index res->frames of the list, growing it (*cap entries
 * allocated); res->frames is the caller's to advance. DVPP_ENOMEM. */
dvpp_status dvpp_video_result_note(dvpp_video_result *res, size_t *cap,
                                   const dvpp_video_frame_info *fi, dvpp_err *err);

/* Make the list exactly res->frames long (what dvpp_video_result_fini
 * frees). On DVPP_ENOMEM the list is freed and res->frame is NULL. */
dvpp_status dvpp_video_result_trim(dvpp_video_result *res, size_t cap, dvpp_err *err);

#endif
