/* dvpp_videojob: VDEC + per-frame pipeline into one T-frame batch. */
#include "dvpp_videojob.h"

#include <stdio.h>
#include <string.h>

#include "dvpp_mem.h"
#include "dvpp_pipe_async.h"

void dvpp_video_request_init(dvpp_video_request *rq)
{
    memset(rq, 0, sizeof(*rq));
    dvpp_vdec_opts_init(&rq->vdec);
    dvpp_pipeline_init(&rq->pipe);
}

bool dvpp_video_spread(dvpp_vdec_opts *o, bool has_pipe, unsigned idle_channels)
{
    unsigned n = idle_channels + 1;

    if (!idle_channels)
        return false;
    if (!o->threads) {
        o->threads = n < DVPP_VIDEO_SPREAD_MAX_THREADS ? n : DVPP_VIDEO_SPREAD_MAX_THREADS;
        o->threads_min_pixels = DVPP_VIDEO_SPREAD_MIN_PIXELS;
    }
    return has_pipe;
}

typedef struct vjob {
    dvpp_worker *w;
    const dvpp_video_request *rq;
    dvpp_pipeline pipe;          /* rq->pipe with the frame as raw input */
    dvpp_pipeline_out po;
    dvpp_buf *out;
    dvpp_video_result *res;
    size_t cap;                  /* frame info slots */
    uint64_t max_bytes;
    size_t base;                 /* out->len at the start: the batch follows it */
    uint32_t sc, sh, sw;         /* TENSOR: one slice's shape */
    dvpp_video_shape shape;      /* the first kept frame's: every frame's */
    dvpp_pipe_async *helper;     /* rq->overlap: the frames' pipelines */
} vjob;

dvpp_status dvpp_video_result_note(dvpp_video_result *r, size_t *cap,
                                   const dvpp_video_frame_info *fi, dvpp_err *err)
{
    if (r->frames == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        dvpp_video_frame_info *n = dvpp_malloc(ncap * sizeof(*n));
        if (!n)
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "frame list");
        if (r->frames)
            memcpy(n, r->frame, r->frames * sizeof(*n));
        dvpp_free(r->frame, *cap * sizeof(*n));
        r->frame = n;
        *cap = ncap;
    }
    r->frame[r->frames] = *fi;
    return DVPP_OK;
}

dvpp_status dvpp_video_result_trim(dvpp_video_result *r, size_t cap, dvpp_err *err)
{
    dvpp_video_frame_info *n;

    if (!r->frame || cap == r->frames)
        return DVPP_OK;
    n = dvpp_malloc(r->frames * sizeof(*n));
    if (n)
        memcpy(n, r->frame, r->frames * sizeof(*n));
    dvpp_free(r->frame, cap * sizeof(*n));
    r->frame = n;
    return n ? DVPP_OK : dvpp_err_set(err, DVPP_ENOMEM, NULL, "frame list");
}

static dvpp_status note_frame(vjob *j, const dvpp_vframe *f, dvpp_err *err)
{
    dvpp_video_frame_info fi = {f->index, f->pts, f->time_s, f->key, {1.0, 1.0, 0.0, 0.0}};

    return dvpp_video_result_note(j->res, &j->cap, &fi, err);
}

/* Frame @t is @w x @h where the first was not: the output cannot take it. */
static dvpp_status size_changed(const dvpp_video_shape *s, uint64_t t, uint32_t w, uint32_t h,
                                const char *what, dvpp_err *err)
{
    return dvpp_err_set(err, DVPP_EUNSUPPORTED, "video",
                        "the resolution changes at frame %llu (%ux%u, the first %ux%u) and "
                        "%s: resize to a fixed size (stretch, fill or letterbox) to take it",
                        (unsigned long long)t, w, h, s->first_w, s->first_h, what);
}

dvpp_status dvpp_video_shape_copy(dvpp_video_shape *s, uint64_t t, const dvpp_image *img,
                                  size_t bytes, dvpp_err *err)
{
    if (t == 0) {
        s->first_w = img->width, s->first_h = img->height;
        s->first_bytes = bytes;
        return DVPP_OK;
    }
    if (img->width != s->first_w || img->height != s->first_h || bytes != s->first_bytes)
        return size_changed(s, t, img->width, img->height, "frames are copied as they are",
                            err);
    return DVPP_OK;
}

/* A later frame's plan makes the first frame's output (its own geometry). */
static bool same_output(const dvpp_pipeline_plan *a, const dvpp_pipeline_plan *b,
                        bool tensor)
{
    if (tensor)
        return a->c == b->c && a->h == b->h && a->w == b->w && a->dtype == b->dtype &&
               a->layout == b->layout;
    return a->out_format == b->out_format && a->img_w == b->img_w &&
           a->img_h == b->img_h && a->out_bytes == b->out_bytes;
}

/* Kept frame @t of @w x @h, which made @plan: frame 0 fixes the output, a
 * later frame must make the same. */
static dvpp_status shape_output(dvpp_video_shape *s, uint64_t t, uint32_t w, uint32_t h,
                                const dvpp_pipeline_plan *plan, bool tensor, dvpp_err *err)
{
    char what[96];

    if (t == 0) {
        s->first = *plan;
        s->first_w = w, s->first_h = h;
        return DVPP_OK;
    }
    if (same_output(&s->first, plan, tensor))
        return DVPP_OK;
    snprintf(what, sizeof(what), "the pipeline's output with it (%ux%u -> %ux%u)",
             tensor ? s->first.w : s->first.img_w, tensor ? s->first.h : s->first.img_h,
             tensor ? plan->w : plan->img_w, tensor ? plan->h : plan->img_h);
    return size_changed(s, t, w, h, what, err);
}

dvpp_status dvpp_video_shape_plan(dvpp_video_shape *s, uint64_t t, const dvpp_pipeline *pipe,
                                  const uint8_t *data, size_t len, const dvpp_limits *lim,
                                  dvpp_pipeline_plan *plan, dvpp_err *err)
{
    dvpp_pipe_source src;
    dvpp_status st = dvpp_pipeline_probe(pipe, data, len, lim, &src, err);

    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(pipe, &src, plan, err);
    if (st != DVPP_OK)
        return st;
    return shape_output(s, t, pipe->raw.width, pipe->raw.height, plan,
                        pipe->output == DVPP_PIPE_OUT_TENSOR, err);
}

dvpp_status dvpp_video_shape_tensor(dvpp_video_shape *s, uint64_t t, uint32_t w, uint32_t h,
                                    const dvpp_tensor *out, dvpp_err *err)
{
    bool nhwc = out->layout == DVPP_LAYOUT_NHWC;
    dvpp_pipeline_plan plan;

    /* C, H, W as stored (NC1HWC0: C1 x C0 lanes, which one pipeline keeps
     * for every frame, as it keeps C) */
    memset(&plan, 0, sizeof(plan));
    plan.dtype = out->dtype;
    plan.layout = out->layout;
    plan.c = (uint32_t)(nhwc ? out->shape[3]
                             : out->layout == DVPP_LAYOUT_NC1HWC0 ? out->shape[1] * out->shape[4]
                                                                  : out->shape[1]);
    plan.h = (uint32_t)out->shape[nhwc ? 1 : 2];
    plan.w = (uint32_t)out->shape[nhwc ? 2 : 3];
    return shape_output(s, t, w, h, &plan, true, err);
}

/* Before the first slice: reserve what the container says the batch will
 * hold (frames / every, capped by max_frames and the memory cap), so the
 * output does not grow by doubling (a fresh copy and first-touch faults
 * each time) while frames arrive. */
static void reserve_batch(vjob *j, size_t bytes)
{
    const dvpp_vdec_opts *o = &j->rq->vdec;
    int64_t frames = j->res->info.frames;
    uint64_t n, total;

    if (frames <= 0 || o->fps > 0 || o->keyframes_only)
        return; /* unknown or unpredictable counts: grow as it comes */
    n = (uint64_t)frames / (o->every > 1 ? o->every : 1) + 1;
    if (o->max_frames && n > o->max_frames)
        n = o->max_frames;
    total = n * bytes;
    if (total > j->max_bytes)
        total = j->max_bytes;
    dvpp_buf_reserve(j->out, (size_t)total); /* best effort: room() still checks */
}

/* Room for one more slice of @bytes at the end of @out. */
static dvpp_status room(vjob *j, size_t bytes, dvpp_err *err)
{
    if (j->res->frames == 0)
        reserve_batch(j, bytes);
    if (j->out->len - j->base + bytes > j->max_bytes)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_frames", "the batch would pass %llu bytes "
                            "(%s) after %llu frames: sample fewer frames (every, fps, "
                            "max_frames)", (unsigned long long)j->max_bytes,
                            j->rq->max_bytes ? "max_output_bytes" : "4 x max_decode_memory",
                            (unsigned long long)j->res->frames);
    if (dvpp_buf_reserve(j->out, bytes) != DVPP_OK)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory for the frames");
    return DVPP_OK;
}

/* A frame as pixels: its bytes as laid out (VDEC strides). */
static dvpp_status copy_frame(vjob *j, const dvpp_image *img, dvpp_err *err)
{
    dvpp_video_result *r = j->res;
    dvpp_planes pl;
    dvpp_status st = dvpp_image_planes(img, &pl, err);

    if (st != DVPP_OK)
        return st;
    st = dvpp_video_shape_copy(&j->shape, r->frames, img, pl.total, err);
    if (st != DVPP_OK)
        return st;
    if (r->frames == 0) {
        r->image = *img;
        r->image.data = NULL;
        r->image.size = pl.total;
        r->slice_bytes = pl.total;
    }
    st = room(j, pl.total, err);
    if (st == DVPP_OK)
        st = dvpp_buf_append(j->out, img->data, pl.total);
    return st;
}

/* The first frame fixes the slice: the pipeline's output for that size. */
static dvpp_status plan_slice(vjob *j, const dvpp_pipeline_plan *plan, dvpp_err *err)
{
    dvpp_video_result *r = j->res;
    dvpp_status st;

    r->geom = plan->geom;
    if (j->pipe.output == DVPP_PIPE_OUT_TENSOR) {
        dvpp_tensor t;
        st = dvpp_tensor_init(&t, plan->dtype, plan->layout, 1, plan->c, plan->h, plan->w, err);
        j->sc = plan->c, j->sh = plan->h, j->sw = plan->w;
        r->is_tensor = true;
        r->tensor = t;
        r->slice_bytes = t.bytes;
        return st;
    }
    st = dvpp_image_init(&r->image, plan->out_format, plan->img_w, plan->img_h,
                         j->pipe.out_align_w, j->pipe.out_align_h, err);
    r->image.size = plan->out_bytes;
    r->slice_bytes = plan->out_bytes;
    return st;
}

/* Plan the pipeline for frame @img (probed as raw input, so every op's
 * image is held to the limits), fixing the slice at the first frame. */
static dvpp_status plan_frame(vjob *j, const dvpp_image *img, size_t len, dvpp_err *err)
{
    dvpp_pipeline_plan plan;
    dvpp_status st = dvpp_video_shape_plan(&j->shape, j->res->frames, &j->pipe, img->data, len,
                                           &j->w->limits, &plan, err);

    if (st == DVPP_OK && j->res->frames == 0)
        st = plan_slice(j, &plan, err);
    return st;
}

/* Wait for the previous frame's pipeline; its geometry goes to the frame
 * list (only this thread touches the list). */
static dvpp_status helper_collect(vjob *j, dvpp_err *err)
{
    dvpp_pipe_geom geom;
    dvpp_status st;
    bool had;

    if (!j->helper)
        return DVPP_OK;
    st = dvpp_pipe_async_collect(j->helper, &geom, &had, err);
    if (st == DVPP_OK && had)
        j->res->frame[j->res->frames - 1].geom = geom;
    return st;
}

/* The decoder is done with its frames (dvpp_vdec_opts.hold_end): the last
 * one's run ends before its buffer goes. */
static void helper_hold_end(void *ctx)
{
    vjob *j = ctx;

    (void)helper_collect(j, NULL); /* a failure stays for dvpp_pipe_async_stop */
}

static dvpp_status pipe_frame(vjob *j, const dvpp_image *img, dvpp_err *err)
{
    dvpp_video_result *r = j->res;
    dvpp_planes pl;
    dvpp_status st = dvpp_image_planes(img, &pl, err);

    if (st != DVPP_OK)
        return st;
    j->pipe.input = DVPP_PIPE_IN_RAW;
    j->pipe.raw = (dvpp_pipe_raw){img->format, img->width, img->height, img->width_stride,
                                  img->height_stride};
    if (img->format != j->rq->vdec.format)
        r->direct_frames++; /* the decoder's I420 (direct_i420) */
    st = plan_frame(j, img, pl.total, err);
    /* The previous frame is done before the output may move (room) and
     * before its buffer is converted over (this call's return). */
    if (st == DVPP_OK)
        st = helper_collect(j, err);
    if (st == DVPP_OK)
        st = room(j, r->slice_bytes, err);
    if (st != DVPP_OK)
        return st;
    memset(&j->po, 0, sizeof(j->po));
    if (r->is_tensor) {
        j->po.tensor = r->tensor;
        j->po.tensor.data = j->out->data + j->out->len;
    } else {
        j->po.image.data = j->out->data + j->out->len;
        j->po.image.size = r->slice_bytes;
    }
    if (j->helper) {
        st = dvpp_pipe_async_give(j->helper, j->w, &j->pipe, img->data, pl.total, &j->po,
                                  r->frames, err);
        if (st == DVPP_OK)
            j->out->len += r->slice_bytes;
        return st;
    }
    st = dvpp_pipeline_run_frame(j->w, &j->pipe, img->data, pl.total, &j->po, r->frames, err);
    if (st != DVPP_OK)
        return st;
    r->frame[r->frames].geom = j->po.geom;
    j->out->len += r->slice_bytes;
    return DVPP_OK;
}

static dvpp_status on_frame(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    vjob *j = ctx;
    dvpp_status st = note_frame(j, f, err);

    if (st == DVPP_OK)
        st = j->rq->has_pipe ? pipe_frame(j, f->image, err) : copy_frame(j, f->image, err);
    if (st == DVPP_OK)
        j->res->frames++;
    return st;
}

bool dvpp_video_pipe_reads_pixels(const dvpp_pipeline *p, dvpp_pixfmt format)
{
    return format == DVPP_PIXEL_NV12 && p->output == DVPP_PIPE_OUT_TENSOR &&
           p->post != DVPP_PIPE_POST_AIPP && !dvpp_profile_is_ascend(p->decode.profile) &&
           !(p->watch && p->watch->image);
}

dvpp_status dvpp_video_run(dvpp_worker *w, const uint8_t *data, size_t len,
                           const dvpp_video_request *rq, dvpp_buf *out,
                           dvpp_video_result *res, dvpp_err *err)
{
    dvpp_vdec_opts vdec;
    vjob j;
    dvpp_status st;

    memset(res, 0, sizeof(*res));
    memset(&j, 0, sizeof(j));
    j.w = w;
    j.rq = rq;
    j.out = out;
    j.res = res;
    /* dvpp_worker_limits also brings w->limits up to date for this run. */
    j.max_bytes = dvpp_worker_limits(w)->max_decode_memory * 4;
    if (rq->max_bytes)
        j.max_bytes = rq->max_bytes;
    j.base = out->len;
    if (rq->has_pipe) {
        j.pipe = rq->pipe;
        j.pipe.input = DVPP_PIPE_IN_RAW;
        j.pipe.raw = (dvpp_pipe_raw){rq->vdec.format, 16, 16, 0, 0};
        if (j.pipe.output == DVPP_PIPE_OUT_IMAGE && j.pipe.encoding != DVPP_PIPE_ENC_NONE)
            return dvpp_err_set(err, DVPP_EINVAL, "output",
                                "frames come out as tensors or raw pixels");
        st = dvpp_pipeline_validate(&j.pipe, &w->limits, err);
        if (st != DVPP_OK)
            return st;
    }
    vdec = rq->vdec;
    vdec.direct_i420 = rq->has_pipe && !rq->convert_frames &&
                       dvpp_video_pipe_reads_pixels(&j.pipe, rq->vdec.format);
    if (rq->overlap && rq->has_pipe) {
        st = dvpp_pipe_async_start(&j.helper, err);
        if (st != DVPP_OK)
            return st;
        vdec.hold_one = true;
        vdec.hold_end = helper_hold_end;
    }
    st = dvpp_video_decode(data, len, &vdec, &w->limits, on_frame, &j, &res->info, err);
    st = dvpp_pipe_async_stop(j.helper, st, err);
    if (st == DVPP_OK && res->is_tensor) {
        dvpp_tensor t;
        st = dvpp_tensor_init(&t, res->tensor.dtype, res->tensor.layout, (uint32_t)res->frames,
                              j.sc, j.sh, j.sw, err);
        t.data = out->data ? out->data + j.base : NULL;
        res->tensor = t;
    }
    if (st != DVPP_OK) {
        dvpp_free(res->frame, j.cap * sizeof(*res->frame));
        res->frame = NULL;
        res->frames = 0;
        return st;
    }
    /* The list is exactly @frames long from here on (see the header). */
    return dvpp_video_result_trim(res, j.cap, err);
}

void dvpp_video_result_fini(dvpp_video_result *res)
{
    dvpp_free(res->frame, res->frames * sizeof(*res->frame));
    res->frame = NULL;
}
