/* http_video: POST /v1/video/decode and /v1/video/encode. The HTTP thread
 * parses the parameters (http_vparams; for an encode, the .npy header: no
 * pixel is touched); the codec work is one dvpp_job on
 * DVPP_BATCHJOB_ENGINE, whose worker state is the channel's dvpp_worker
 * (dvpp_video_run needs it for the per-frame pipeline). The connection is
 * suspended meanwhile, exactly as for a single image. The http_answer's bytes
 * grow in a dvpp_buf on the worker and are handed to libmicrohttpd as they
 * are (an iovec of the .npy header and the buffer, http_vout): a video's
 * frames are never copied on an HTTP thread.
 *
 * Threads: video_decode_fn, video_encode_fn and what they call run on a
 * VPC worker and write only r->vid (read by the HTTP thread after
 * http_finish); everything else runs on libmicrohttpd's threads. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_jpeg.h"
#include "http_framelist.h"
#include "http_int.h"

void http_video_free(http_video *v)
{
    if (!v)
        return;
    http_vout_free(v->out);
    dvpp_video_result_fini(&v->res);
    free(v->idr);
    free(v);
}

/* --- the job, on a worker ------------------------------------------------------------ */

/* True when @s occurs in @data (memmem is a GNU extension). */
static bool bytes_contain(const uint8_t *data, size_t len, const char *s)
{
    size_t n = strlen(s);

    for (const uint8_t *p = data; n && len >= n && (size_t)(p - data) <= len - n; p++) {
        p = memchr(p, s[0], len - n + 1 - (size_t)(p - data));
        if (!p)
            return false;
        if (!memcmp(p, s, n))
            return true;
    }
    return false;
}

/* DVPP_ECANCELED once @task is canceled (the daemon stops), DVPP_ETIMEDOUT
 * past its deadline, else DVPP_OK: what a job checks once per frame. */
static dvpp_status task_stop_status(const dvpp_task *task)
{
    if (dvpp_task_canceled(task))
        return DVPP_ECANCELED;
    return dvpp_task_expired(task) ? DVPP_ETIMEDOUT : DVPP_OK;
}

/* The kept frames, JPEG-encoded, as one multipart/mixed body (replacing
 * the frames in v->out->body). */
static dvpp_status frames_to_jpeg(dvpp_task *task, http_video *v, dvpp_err *err)
{
    const dvpp_video_result *res = &v->res;
    dvpp_jpeg_encode_opts jo;
    dvpp_buf jpegs, mp;
    size_t *end = NULL, nend = (size_t)res->frames + 1;
    dvpp_status st = DVPP_OK;
    unsigned attempt = 0;
    bool clash;

    dvpp_jpeg_encode_opts_init(&jo);
    jo.quality = v->quality;
    dvpp_buf_init(&jpegs);
    dvpp_buf_init(&mp);
    end = dvpp_malloc(nend * sizeof(*end));
    if (!end)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "jpeg frames");
    end[0] = 0;
    for (uint64_t t = 0; st == DVPP_OK && t < res->frames; t++) {
        dvpp_image img = res->image;
        if ((st = task_stop_status(task)) != DVPP_OK) {
            dvpp_err_set(err, st, NULL, "stopped at frame %" PRIu64 " of the JPEG encode", t);
            break;
        }
        img.data = v->out->body.data + t * res->slice_bytes;
        img.size = res->slice_bytes;
        st = dvpp_jpeg_encode(&img, &jo, &jpegs, err);
        end[t + 1] = jpegs.len;
    }
    /* A boundary no JPEG contains (a clash is astronomically rare; the
     * attempt counter makes the next candidate differ). */
    do {
        clash = false;
        snprintf(v->boundary, sizeof(v->boundary), "dvppd-frame-%016" PRIx64 "-%u",
                 dvpp_now_ns() ^ (uint64_t)(uintptr_t)v, attempt++);
        for (uint64_t t = 0; st == DVPP_OK && !clash && t < res->frames; t++)
            clash = bytes_contain(jpegs.data + end[t], end[t + 1] - end[t], v->boundary);
    } while (clash && attempt < 16);
    for (uint64_t t = 0; st == DVPP_OK && t < res->frames; t++) {
        const dvpp_video_frame_info *f = &res->frame[t];
        /* The fixed text, the boundary and three numbers of at most 20
         * digits take under 300 bytes, the geometry's four "%.17g" under
         * 200; the time takes what it takes. */
        char time[HTTP_FRAME_TIME_MAX], geom[160], head[HTTP_FRAME_TIME_MAX + 520];
        int g = 0, n;
        http_frame_time_format(time, f->time_s);
        geom[0] = '\0';
        if (v->rq.has_pipe) /* this frame's own (a stream whose resolution changes) */
            g = snprintf(geom, sizeof(geom), "X-Dvpp-Scale: %.17g,%.17g\r\n"
                         "X-Dvpp-Pad: %.17g,%.17g\r\n", f->geom.scale_x, f->geom.scale_y,
                         f->geom.pad_x, f->geom.pad_y);
        n = snprintf(head, sizeof(head),
                     "--%s\r\nContent-Type: image/jpeg\r\nContent-Length: %zu\r\n"
                     "X-Dvpp-Frame-Index: %" PRIu64 "\r\nX-Dvpp-Frame-Pts: %" PRId64
                     "\r\nX-Dvpp-Frame-Time: %s\r\nX-Dvpp-Key-Frame: %d\r\n%s\r\n",
                     v->boundary, end[t + 1] - end[t], f->index, f->pts, time,
                     f->key ? 1 : 0, geom);
        if (g < 0 || (size_t)g >= sizeof(geom) || n < 0 || (size_t)n >= sizeof(head)) {
            st = dvpp_err_set(err, DVPP_EIO, "video", "a JPEG part's headers do not fit");
            break;
        }
        st = dvpp_buf_append(&mp, head, (size_t)n);
        if (st == DVPP_OK)
            st = dvpp_buf_append(&mp, jpegs.data + end[t], end[t + 1] - end[t]);
        if (st == DVPP_OK)
            st = dvpp_buf_append(&mp, "\r\n", 2);
        if (st != DVPP_OK)
            dvpp_err_set(err, st, NULL, "out of memory for the multipart answer");
    }
    if (st == DVPP_OK) {
        char tail[64];
        int n = snprintf(tail, sizeof(tail), "--%s--\r\n", v->boundary);
        st = dvpp_buf_append(&mp, tail, (size_t)n);
        if (st != DVPP_OK)
            dvpp_err_set(err, st, NULL, "out of memory for the multipart answer");
    }
    if (st == DVPP_OK) {
        dvpp_buf_fini(&v->out->body);
        v->out->body = mp;
        dvpp_buf_init(&mp);
    }
    dvpp_buf_fini(&mp);
    dvpp_buf_fini(&jpegs);
    dvpp_free(end, nend * sizeof(*end));
    return st;
}

/* No frame matched the sampling: the answer is an empty batch (T = 0) of
 * the geometry a frame of the stream would have, as dvppctl video-decode
 * writes it. */
static dvpp_status decode_empty_result(http_video *v, dvpp_err *err)
{
    dvpp_video_result *res = &v->res;
    const dvpp_vdec_opts *o = &v->rq.vdec;
    uint32_t w = res->info.width, h = res->info.height;
    dvpp_pipeline p = v->rq.pipe;
    dvpp_pipe_source src = {.width = w, .height = h};
    dvpp_pipeline_plan plan;
    dvpp_status st;

    if (!v->rq.has_pipe)
        return dvpp_image_init(&res->image, o->format, w, h, o->align_w ? o->align_w : 16,
                               o->align_h ? o->align_h : 2, err);
    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){o->format, w, h, 0, 0};
    st = dvpp_pipeline_plan_make(&p, &src, &plan, err);
    if (st != DVPP_OK)
        return st;
    res->geom = plan.geom;
    if (p.output != DVPP_PIPE_OUT_TENSOR)
        return dvpp_image_init(&res->image, plan.out_format, plan.img_w, plan.img_h,
                               p.out_align_w, p.out_align_h, err);
    st = dvpp_tensor_init(&res->tensor, plan.dtype, plan.layout, 1, plan.c, plan.h, plan.w,
                          err);
    res->tensor.n = 0;
    res->tensor.shape[0] = 0;
    res->tensor.bytes = 0;
    res->is_tensor = true;
    return st;
}

/* Polled by the decoder once per frame: a canceled job (the daemon stops)
 * or a passed deadline ends the decode. */
static dvpp_status video_check(void *ctx)
{
    const http_video *v = ctx;

    return task_stop_status(v->task);
}

static dvpp_status video_decode_fn(dvpp_task *task, void *ctx, void *worker_state,
                                   dvpp_err *err)
{
    http_req *r = ctx;
    http_video *v = r->vid;
    dvpp_status st;

    v->started_ns = dvpp_now_ns();
    if (!worker_state) /* only a pipe device's VPC channels carry a dvpp_worker */
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "device", "not a pipeline device");
    v->task = task;
    v->rq.vdec.check = video_check;
    v->rq.vdec.check_ctx = v;
    if (dvpp_video_spread(&v->rq.vdec, v->rq.has_pipe, dvpp_task_idle_channels(task)))
        v->rq.overlap = true;
    st = dvpp_video_run(worker_state, v->in, v->in_len, &v->rq, &v->out->body, &v->res,
                        err);
    if (st == DVPP_OK && v->res.frames == 0)
        st = decode_empty_result(v, err);
    if (st == DVPP_OK && v->out->body.len != v->res.frames * v->res.slice_bytes)
        st = dvpp_err_set(err, DVPP_EIO, "video", "%" PRIu64 " frames in %zu bytes, "
                          "not %zu each", v->res.frames, v->out->body.len,
                          v->res.slice_bytes);
    if (st == DVPP_OK && v->kind == HTTP_VOUT_JPEG)
        st = frames_to_jpeg(task, v, err);
    v->run_ns = dvpp_now_ns() - v->started_ns;
    return st;
}

static dvpp_status video_encode_fn(dvpp_task *task, void *ctx, void *worker_state,
                                   dvpp_err *err)
{
    http_req *r = ctx;
    http_video *v = r->vid;
    dvpp_venc *enc = NULL;
    dvpp_status st;

    (void)worker_state;
    v->started_ns = dvpp_now_ns();
    st = dvpp_venc_open(&v->eo, &v->out->body, &enc, err);
    for (uint64_t t = 0; st == DVPP_OK && t < v->nframes; t++) {
        dvpp_image img = v->frame;
        if ((st = task_stop_status(task)) != DVPP_OK) {
            dvpp_err_set(err, st, NULL, "stopped at frame %" PRIu64, t);
            break;
        }
        img.data = (uint8_t *)(uintptr_t)(v->in + t * v->frame_bytes);
        img.size = v->frame_bytes;
        st = dvpp_venc_frame(enc, &img, v->idr[t], err);
    }
    if (st == DVPP_OK)
        st = dvpp_venc_finish(enc, err);
    if (st == DVPP_OK)
        v->packets = dvpp_venc_packets(enc, &v->keyframes);
    dvpp_venc_close(enc);
    v->run_ns = dvpp_now_ns() - v->started_ns;
    return st;
}

static void video_job_done(void *ctx, uint64_t ticket, dvpp_status st, const dvpp_err *err)
{
    (void)ticket;
    http_finish(ctx, st, err);
}

/* Parse, then submit the job. */
dvpp_status http_video_submit(http_req *r, dvpp_err *err)
{
    http_video *v = calloc(1, sizeof(*v));
    dvpp_job job;
    dvpp_status st;

    if (!v)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "video request");
    r->vid = v;
    v->encode = r->route == DVPPD_ROUTE_VIDEO_ENCODE;
    st = http_dump_refuse(r, err);
    if (st != DVPP_OK)
        return st;
    st = http_body_input(r, &v->in, &v->in_len, err);
    if (st != DVPP_OK)
        return dvpp_err_set(err, st, "body", v->encode ? "no .npy of frames in the body"
                                                       : "no video in the body");
    st = v->encode ? http_vparams_encode(r, v, err) : http_vparams_decode(r, v, err);
    if (st != DVPP_OK)
        return st;
    v->out = calloc(1, sizeof(*v->out));
    if (!v->out)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "video answer");
    dvpp_buf_init(&v->out->body);
    st = dvpp_stream_new(r->h->device, 0, &r->stream, err);
    if (st != DVPP_OK)
        return st;
    /* Admission: the body is what a queued job holds; the frames or the
     * stream grow only while it runs (one per channel, each bounded by
     * 4 x limits.max_decode_memory), so the pixel budget is not charged. */
    job = (dvpp_job){
        .engine = DVPP_BATCHJOB_ENGINE,
        .fn = v->encode ? video_encode_fn : video_decode_fn,
        .done = video_job_done,
        .ctx = r,
        .pixels = 0,
        .bytes = v->in_len,
        .deadline_ns = r->deadline,
    };
    r->t_submit = dvpp_now_ns();
    return dvpp_device_submit(r->stream, &job, NULL, err);
}

/* --- the answer ---------------------------------------------------------------------- */

/* The frame lists of a decode (X-Dvpp-Frame-Index, -Pts, -Time and
 * X-Dvpp-Key-Frames; with a pipeline whose frames map back differently, a
 * stream whose resolution changes, X-Dvpp-Frame-Scales and -Pads too),
 * exactly sized (http_framelist). libmicrohttpd builds the answer's
 * headers in the connection's memory, so the lists together get a quarter
 * of it; when they would not fit they are left out together and
 * X-Dvpp-Frame-Lists says why (the frames are still counted by
 * X-Dvpp-Frames). */
static void frame_list_headers(struct MHD_Response *resp, const http_video *v, size_t memory)
{
    const dvpp_video_result *res = &v->res;
    size_t budget = memory / 4 > 256 ? memory / 4 - 256 : 0; /* names, separators */
    bool geometry = v->rq.has_pipe && http_frame_geometry_varies(res->frame, res->frames);
    http_frame_lists l;
    dvpp_err e;

    dvpp_err_clear(&e);
    if (http_frame_lists_make(res->frame, res->frames, geometry, budget, &l, &e) != DVPP_OK) {
        http_header_printf(resp, "X-Dvpp-Frame-Lists", "omitted: %s", e.msg);
        return;
    }
    for (int k = 0; k < (geometry ? HTTP_FRAME_LISTS : HTTP_FRAME_GEOM_LIST); k++)
        http_header(resp, http_frame_list_names[k], (const char *)l.list[k].data);
    http_frame_lists_fini(&l);
}

/* The .npy header of a decode's frames or tensor into v->out->head. */
static dvpp_status video_npy_header(http_video *v, dvpp_tensor *shape_of, dvpp_err *err)
{
    const dvpp_video_result *res = &v->res;
    int64_t shape[DVPP_TENSOR_MAX_DIMS + 1];
    int ndim;

    memset(shape_of, 0, sizeof(*shape_of));
    if (res->is_tensor) {
        *shape_of = res->tensor;
        ndim = res->tensor.ndim;
        memcpy(shape, res->tensor.shape, (size_t)ndim * sizeof(shape[0]));
        v->out->head_len = dvpp_npy_header(v->out->head, dvpp_dtype_npy(res->tensor.dtype),
                                           shape, ndim);
    } else {
        dvpp_planes pl;
        dvpp_status st = dvpp_image_planes(&res->image, &pl, err);
        if (st != DVPP_OK)
            return st;
        shape[0] = (int64_t)res->frames;
        ndim = 1 + dvpp_npy_image_shape(&res->image, &pl, shape + 1);
        shape_of->dtype = DVPP_DTYPE_U8;
        shape_of->layout = DVPP_LAYOUT_NHWC; /* frames are T x H x W x C or YUV rows */
        shape_of->ndim = (uint8_t)ndim;
        memcpy(shape_of->shape, shape, (size_t)ndim * sizeof(shape[0]));
        v->out->head_len = dvpp_npy_header(v->out->head, "|u1", shape, ndim);
    }
    if (!v->out->head_len)
        return dvpp_err_set(err, DVPP_EINVAL, "video", "no .npy header for this shape");
    if (v->kind == HTTP_VOUT_RAW)
        v->out->head_len = 0;
    return DVPP_OK;
}

/* Hand v->out to libmicrohttpd (http_vout_response). */
static struct MHD_Response *video_out_response(http_req *r)
{
    return http_vout_response(r->h, &r->vid->out);
}

static void video_timing_headers(http_req *r, struct MHD_Response *resp)
{
    http_video *v = r->vid;
    uint64_t now = dvpp_now_ns();
    uint64_t read = r->t_read - r->t_start;
    uint64_t queue = v->started_ns > r->t_submit ? v->started_ns - r->t_submit : 0;

    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_READ, read);
    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_QUEUE, queue);
    dvppd_metrics_stage(r->h->metrics, DVPPD_STAGE_TOTAL, now - r->t_start);
    http_header_printf(resp, "X-Dvpp-Timing",
                       "read=%" PRIu64 ";queue=%" PRIu64 ";run=%" PRIu64 ";total=%" PRIu64,
                       http_us(read), http_us(queue), http_us(v->run_ns),
                       http_us(now - r->t_start));
}

static enum MHD_Result video_encode_answer(http_req *r)
{
    http_video *v = r->vid;
    struct MHD_Response *resp = video_out_response(r);

    if (!resp)
        return MHD_NO;
    video_timing_headers(r, resp);
    http_header_printf(resp, "X-Dvpp-Frames", "%" PRIu64, v->nframes);
    http_header_printf(resp, "X-Dvpp-Packets", "%" PRIu64, v->packets);
    http_header_printf(resp, "X-Dvpp-Key-Frames", "%" PRIu64, v->keyframes);
    http_header_printf(resp, "X-Dvpp-Video", "%s %ux%u %.6g",
                       dvpp_video_codec_name(v->eo.codec), v->eo.width, v->eo.height,
                       (double)v->eo.fps_num / v->eo.fps_den);
    http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                v->eo.container == DVPP_VENC_MP4 ? "video/mp4"
                : v->eo.codec == DVPP_VIDEO_H265 ? "video/h265" : "video/h264");
    dvppd_metrics_pixels(r->h->metrics, v->nframes * v->eo.width * v->eo.height);
    return http_answer(r, 200, resp);
}

/* Raw frames: their .npy shape, uint8, and as layout NHWC (packed: T x H
 * x W x 3) or the format's name (YUV: T x rows x width_stride). */
static void frame_shape_headers(struct MHD_Response *resp, const dvpp_tensor *t,
                                const dvpp_image *img)
{
    char layout[16];

    http_shape_header(resp, t);
    http_header(resp, "X-Dvpp-Dtype", dvpp_dtype_name(DVPP_DTYPE_U8));
    if (dvpp_pixfmt_get(img->format)->planes == 1) {
        http_header(resp, "X-Dvpp-Layout", "NHWC");
        return;
    }
    snprintf(layout, sizeof(layout), "%s", dvpp_pixfmt_name(img->format));
    for (char *c = layout; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
    http_header(resp, "X-Dvpp-Layout", layout);
}

enum MHD_Result http_video_answer(http_req *r)
{
    http_video *v = r->vid;
    const dvpp_video_result *res = &v->res;
    struct MHD_Response *resp;
    dvpp_tensor t;
    dvpp_err e;
    char ct[96];

    if (r->status != DVPP_OK)
        return http_answer_error(r, &r->err);
    if (v->encode)
        return video_encode_answer(r);
    dvpp_err_clear(&e);
    if (v->kind != HTTP_VOUT_JPEG && video_npy_header(v, &t, &e) != DVPP_OK)
        return http_answer_error(r, &e);
    resp = video_out_response(r);
    if (!resp)
        return MHD_NO;
    video_timing_headers(r, resp);
    http_header_printf(resp, "X-Dvpp-Frames", "%" PRIu64, res->frames);
    /* how the decode used the device (dvpp_video_spread) */
    http_header_printf(resp, "X-Dvpp-Decode-Threads", "%u",
                       dvpp_vdec_threads(&v->rq.vdec, res->info.width, res->info.height));
    http_header(resp, "X-Dvpp-Overlap", v->rq.overlap ? "1" : "0");
    frame_list_headers(resp, v, r->h->cfg.connection_memory);
    http_header_printf(resp, "X-Dvpp-Video", "%s %ux%u %.6g",
                       dvpp_video_codec_name(res->info.codec), res->info.width,
                       res->info.height, res->info.fps);
    if (v->kind == HTTP_VOUT_JPEG) {
        snprintf(ct, sizeof(ct), "multipart/mixed; boundary=%s", v->boundary);
        http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ct);
        http_header_printf(resp, "X-Dvpp-Width", "%u", res->image.width);
        http_header_printf(resp, "X-Dvpp-Height", "%u", res->image.height);
    } else {
        if (res->is_tensor) {
            http_tensor_headers(resp, &t);
            http_geometry_headers(resp, &res->geom);
        } else {
            frame_shape_headers(resp, &t, &res->image);
            http_header(resp, "X-Dvpp-Format", dvpp_pixfmt_name(res->image.format));
            http_header_printf(resp, "X-Dvpp-Width", "%u", res->image.width);
            http_header_printf(resp, "X-Dvpp-Height", "%u", res->image.height);
            http_header_printf(resp, "X-Dvpp-Width-Stride", "%u", res->image.width_stride);
            http_header_printf(resp, "X-Dvpp-Height-Stride", "%u", res->image.height_stride);
        }
        http_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                    v->kind == HTTP_VOUT_RAW ? "application/octet-stream" : "application/x-npy");
    }
    dvppd_metrics_pixels(r->h->metrics,
                         res->frames * (res->is_tensor ? (uint64_t)res->tensor.h * res->tensor.w
                                                       : (uint64_t)res->image.width *
                                                             res->image.height));
    return http_answer(r, 200, resp);
}

