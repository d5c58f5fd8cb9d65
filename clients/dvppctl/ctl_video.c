/* dvppctl's video commands: video-info, video-decode, video-encode.
 *
 * Offline they run libdvpp's VDEC/VENC in-process, the same code the
 * daemon runs. video-decode goes through dvpp_video_run
 * (device/dvpp_videojob.h): the frames as pixels, or each frame through
 * the preprocess pipeline into a T x C x H x W tensor. video-encode reads
 * a stack of frames from a .npy.
 *
 * With --socket (or $DVPPD_SOCKET) video-decode and video-encode run in a
 * dvppd video channel (proto/PROTOCOL.md "Video channels") and write what
 * comes back with the offline writers, so the files are byte-identical;
 * video-info stays local (a header read). Flags a VideoOpen cannot carry
 * are refused with "not available with --socket" (exit 2).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "ctl_remote.h"
#include "device/dvpp_videojob.h"
#include "dvpp_mem.h"
#include "dvpp_npy.h"

/* The largest .npy of frames video-encode reads: the cap a decoded batch
 * of frames has (dvpp_video_run: max_decode_memory x 4). */
#define FRAMES_NPY_MAX(lim) ((lim)->max_decode_memory * 4)

static const char *extension(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

/* Parse the command line of a video command into @a (caller-allocated).
 * Returns 0, or 2 after printing why. */
static int video_args(int argc, char **argv, ctl_args *a, bool need_out)
{
    int rc = need_out ? ctl_parse_args(argc, argv, a) : ctl_parse_options(argc, argv, a);

    if (rc)
        return rc;
    if (a->ninputs != 1) {
        fprintf(stderr, "dvppctl %s: one input FILE\n", argv[0]);
        return 2;
    }
    return 0;
}

/* --- video-info ------------------------------------------------------------ */

static json_t *real_or_null(double v, bool known)
{
    return known ? json_real(v) : json_null();
}

static json_t *info_json(const dvpp_video_info *in)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:o, s:o, s:o}", "codec",
                     dvpp_video_codec_name(in->codec), "container", in->container,
                     "profile", in->profile, "width", (json_int_t)in->width, "height",
                     (json_int_t)in->height, "bit_depth", (json_int_t)in->bit_depth,
                     "fps", real_or_null(in->fps, in->fps > 0), "frames",
                     in->frames >= 0 ? json_integer((json_int_t)in->frames) : json_null(),
                     "duration_s", real_or_null(in->duration_s, in->duration_s >= 0));
}

int ctl_cmd_video_info(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    dvpp_video_info in;
    dvpp_err err;
    dvpp_buf b;
    json_t *j = NULL;
    int rc;

    if (!a)
        return 1;
    rc = video_args(argc, argv, a, false);
    if (rc) {
        free(a);
        return rc;
    }
    dvpp_err_clear(&err);
    dvpp_buf_init(&b);
    if (dvpp_buf_read_file(&b, a->inputs[0], a->lim.max_video_bytes, &err) != DVPP_OK ||
        dvpp_video_probe(b.data, b.len, &a->lim, &in, &err) != DVPP_OK) {
        rc = ctl_fail(a->inputs[0], &err);
        goto out;
    }
    j = info_json(&in);
    if (j) {
        json_object_set_new(j, "file", json_string(a->inputs[0]));
        json_object_set_new(j, "bytes", json_integer((json_int_t)b.len));
        json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
        fputc('\n', stdout);
        json_decref(j);
    }
    rc = j ? 0 : 1;
out:
    dvpp_buf_fini(&b);
    free(a);
    return rc;
}

/* --- writing a .npy without a second copy -------------------------------------- */

/* Write the .npy header for @shape[0..ndim) of @descr, then @n bytes of
 * @data, to @path. */
static dvpp_status write_npy(const char *path, const char *descr, const int64_t *shape,
                             int ndim, const void *data, size_t n, dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    size_t hlen = dvpp_npy_header(hdr, descr, shape, ndim);
    FILE *f = fopen(path, "wb");
    bool ok;

    if (!f)
        return dvpp_err_set(err, DVPP_EIO, "output", "cannot create %s", path);
    ok = fwrite(hdr, 1, hlen, f) == hlen && (n == 0 || fwrite(data, 1, n, f) == n);
    ok = fclose(f) == 0 && ok;
    if (!ok)
        return dvpp_err_set(err, DVPP_EIO, "output", "cannot write %s", path);
    return DVPP_OK;
}

/* T frames of geometry @img, slice_bytes apart in @data, as one
 * T x (ctl_write_stack's per-image shape) uint8 .npy: multi-plane YUV keeps
 * its rows x width_stride memory; packed formats lose their stride padding
 * (squeezed in place, rows only ever move towards the start). */
static dvpp_status write_frames(const char *path, const dvpp_image *img, uint64_t t,
                                size_t slice_bytes, uint8_t *data, dvpp_err *err)
{
    int64_t shape[4];
    dvpp_planes pl;
    size_t n = 0;
    int ndim;
    dvpp_status st = dvpp_image_planes(img, &pl, err);

    if (st != DVPP_OK)
        return st;
    ndim = dvpp_npy_image_shape(img, &pl, shape + 1) + 1;
    shape[0] = (int64_t)t;
    if (pl.count > 1)
        return write_npy(path, "|u1", shape, ndim, data, (size_t)t * slice_bytes, err);
    for (uint64_t i = 0; i < t; i++) {
        for (uint32_t y = 0; y < img->height; y++) {
            memmove(data + n, data + i * slice_bytes + pl.p[0].offset + y * pl.p[0].stride,
                    pl.p[0].row_bytes);
            n += pl.p[0].row_bytes;
        }
    }
    return write_npy(path, "|u1", shape, ndim, data, n, err);
}

/* --- video-decode -------------------------------------------------------------- */

static bool is_frame_format(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_NV12 || f == DVPP_PIXEL_NV21 || f == DVPP_PIXEL_RGB ||
           f == DVPP_PIXEL_BGR;
}

static dvpp_status decode_request(const ctl_args *a, dvpp_video_request *rq, dvpp_err *err)
{
    dvpp_video_request_init(rq);
    rq->vdec = a->vdec;
    rq->vdec.format = a->format_set ? a->format : DVPP_PIXEL_NV12;
    rq->vdec.align_w = a->jpeg.align_w;
    rq->vdec.align_h = a->jpeg.align_h;
    if (!a->size_set)
        return DVPP_OK;
    rq->has_pipe = true;
    return ctl_preprocess_pipeline(a, &rq->pipe, err);
}

/* The tensor the pipeline of @rq makes of one frame of @in's size
 * (1 x C x H x W; data NULL). */
static dvpp_status frame_tensor(const dvpp_video_request *rq, const dvpp_video_info *in,
                                dvpp_tensor *t, dvpp_err *err)
{
    dvpp_pipeline p = rq->pipe;
    dvpp_pipe_source src = {.width = in->width, .height = in->height};
    dvpp_pipeline_plan plan;
    dvpp_status st;

    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){rq->vdec.format, in->width, in->height, 0, 0};
    st = dvpp_pipeline_plan_make(&p, &src, &plan, err);
    if (st == DVPP_OK)
        st = dvpp_tensor_init(t, plan.dtype, plan.layout, 1, plan.c, plan.h, plan.w, err);
    return st;
}

/* The tensor no frame was kept for: T = 0, the C x H x W the pipeline
 * makes of a frame of the stream's size. */
static dvpp_status write_empty_tensor(const char *path, const dvpp_video_request *rq,
                                      const dvpp_video_info *in, dvpp_err *err)
{
    dvpp_tensor t;
    dvpp_status st = frame_tensor(rq, in, &t, err);

    if (st != DVPP_OK)
        return st;
    t.shape[0] = 0;
    return write_npy(path, dvpp_dtype_npy(t.dtype), t.shape, t.ndim, NULL, 0, err);
}

static dvpp_status write_decoded(const ctl_args *a, const dvpp_video_request *rq,
                                 const dvpp_video_result *res, dvpp_buf *out, dvpp_err *err)
{
    dvpp_image img = res->image;
    dvpp_status st;

    if (res->is_tensor)
        return write_npy(a->out, dvpp_dtype_npy(res->tensor.dtype), res->tensor.shape,
                         res->tensor.ndim, res->tensor.data, res->tensor.bytes, err);
    if (rq->has_pipe)
        return write_empty_tensor(a->out, rq, &res->info, err);
    if (res->frames == 0) { /* the geometry a frame of the stream would have */
        st = dvpp_image_init(&img, rq->vdec.format, res->info.width, res->info.height,
                             rq->vdec.align_w ? rq->vdec.align_w : 16,
                             rq->vdec.align_h ? rq->vdec.align_h : 2, err);
        if (st != DVPP_OK)
            return st;
    }
    return write_frames(a->out, &img, res->frames, res->slice_bytes, out->data, err);
}

/* {"frames": T, "index": [...], "pts": [...], "time_s": [...], "key": [...]} */
static json_t *frames_json(const dvpp_video_result *res)
{
    json_t *idx = json_array(), *pts = json_array(), *ts = json_array(),
           *key = json_array();
    bool ok = idx && pts && ts && key;

    for (uint64_t i = 0; ok && i < res->frames; i++) {
        const dvpp_video_frame_info *f = &res->frame[i];
        ok = json_array_append_new(idx, json_integer((json_int_t)f->index)) == 0 &&
             json_array_append_new(pts, json_integer((json_int_t)f->pts)) == 0 &&
             json_array_append_new(ts, json_real(f->time_s)) == 0 &&
             json_array_append_new(key, json_boolean(f->key)) == 0;
    }
    if (!ok) {
        json_decref(idx), json_decref(pts), json_decref(ts), json_decref(key);
        return NULL;
    }
    return json_pack("{s:I, s:o, s:o, s:o, s:o}", "frames", (json_int_t)res->frames,
                     "index", idx, "pts", pts, "time_s", ts, "key", key);
}

static int print_frames(const dvpp_video_result *res)
{
    json_t *j = frames_json(res);

    if (!j) {
        fprintf(stderr, "dvppctl video-decode: out of memory\n");
        return 1;
    }
    json_dumpf(j, stdout, JSON_COMPACT);
    fputc('\n', stdout);
    json_decref(j);
    return 0;
}

/* --- video-decode through a daemon ------------------------------------------------ */

/* Slots of the ring a decode channel writes into: the daemon decodes the
 * next frames while this side copies one out, and waits while all are
 * taken (it never drops a frame). */
#define REMOTE_DECODE_SLOTS 4u

/* The slot for a stream whose size cannot be read here: the daemon reads
 * the same header and says why (or, with other limits, ENOSPC). */
#define REMOTE_MIN_SLOT 4096u

/* A decode channel's frames, gathered as dvpp_video_run gathers them. */
typedef struct remote_decode {
    const ctl_args *a;
    const dvpp_video_request *rq;
    dvpp_video_result *res;      /* frames, their geometry, frame[] */
    dvpp_buf *out;               /* the frames' bytes, in order */
    size_t cap;                  /* entries allocated at res->frame */
    size_t cap_slice;            /* bytes a frame takes offline (the cap counts these) */
    uint64_t max_bytes;          /* the batch's cap, dvpp_video_run's */
    dvpp_status st;              /* why the callback stopped the decode */
    dvpp_err err;
} remote_decode;

/* The flags a decode channel cannot carry: 0, or 2 after printing which. */
static int decode_socket_check(const ctl_args *a)
{
    dvpp_pixfmt fmt = a->format_set ? a->format : DVPP_PIXEL_NV12;
    bool vdec_strides = (a->jpeg.align_w == 0 || a->jpeg.align_w == 16) &&
                        (a->jpeg.align_h == 0 || a->jpeg.align_h == 2);
    int rc = ctl_spec_check(a, "video-decode");

    if (rc)
        return rc;
    if (a->vdec.threads > 1) {
        fprintf(stderr, "dvppctl video-decode: --threads (the daemon decodes on one "
                        "thread) is not available with --socket\n");
        return 2;
    }
    /* VideoOpen has no alignment: the daemon's frames have VDEC's strides.
     * They show only in nv12/nv21 pixels (packed rows are written tight,
     * the per-frame pipeline reads the frame by its strides). */
    if (!vdec_strides && !a->size_set && fmt != DVPP_PIXEL_RGB && fmt != DVPP_PIXEL_BGR) {
        fprintf(stderr, "dvppctl video-decode: --align other than 16x2 (VDEC's strides) "
                        "for %s frames is not available with --socket\n",
                dvpp_pixfmt_name(fmt));
        return 2;
    }
    return 0;
}

/* Record @f's index, pts, time and key flag. */
static dvpp_status note_remote_frame(remote_decode *d, const dvppc_frame *f, dvpp_err *err)
{
    dvpp_video_frame_info fi = {f->index, f->pts, f->time_s, f->key};

    return dvpp_video_result_note(d->res, &d->cap, &fi, err);
}

/* A frame's pixels (@img, a view of the slot): the first fixes the
 * geometry, a later one of another size fails as offline. */
static dvpp_status remote_pixels(remote_decode *d, const dvpp_image *img, size_t *n,
                                 dvpp_err *err)
{
    dvpp_video_result *r = d->res;
    const ctl_args *a = d->a;
    dvpp_image off;
    dvpp_planes pl, opl;
    dvpp_status st = dvpp_image_planes(img, &pl, err);

    if (st != DVPP_OK)
        return st;
    *n = pl.total;
    if (r->frames == 0) {
        r->image = *img;
        r->image.data = NULL;
        r->image.size = pl.total;
        r->slice_bytes = pl.total;
        /* What a frame takes in the offline command's alignment. */
        st = dvpp_image_init(&off, img->format, img->width, img->height,
                             a->jpeg.align_w ? a->jpeg.align_w : 16,
                             a->jpeg.align_h ? a->jpeg.align_h : 2, err);
        if (st == DVPP_OK)
            st = dvpp_image_planes(&off, &opl, err);
        d->cap_slice = st == DVPP_OK ? opl.total : 0;
        return st;
    }
    if (img->width != r->image.width || img->height != r->image.height)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "video", "the frame size changes at frame "
                            "%llu", (unsigned long long)r->frames);
    if (img->format != r->image.format || img->width_stride != r->image.width_stride ||
        img->height_stride != r->image.height_stride)
        return dvpp_err_set(err, DVPP_EIO, "meta", "dvppd changed the frames' layout at "
                            "frame %llu", (unsigned long long)r->frames);
    return DVPP_OK;
}

/* A frame's tensor (1 x ...): the first fixes the shape. */
static dvpp_status remote_tensor(remote_decode *d, const dvpp_tensor *t, dvpp_err *err)
{
    dvpp_video_result *r = d->res;

    if (r->frames == 0) {
        if (t->shape[0] != 1)
            return dvpp_err_set(err, DVPP_EIO, "meta", "dvppd answered a frame tensor of "
                                "%lld items", (long long)t->shape[0]);
        r->is_tensor = true;
        r->tensor = *t;
        r->tensor.data = NULL;
        r->slice_bytes = t->bytes;
        d->cap_slice = t->bytes;
        return DVPP_OK;
    }
    if (t->dtype != r->tensor.dtype || t->layout != r->tensor.layout ||
        t->ndim != r->tensor.ndim || t->bytes != r->slice_bytes ||
        memcmp(t->shape, r->tensor.shape, t->ndim * sizeof(t->shape[0])) != 0)
        return dvpp_err_set(err, DVPP_EIO, "meta", "dvppd changed the frames' tensor at "
                            "frame %llu", (unsigned long long)r->frames);
    return DVPP_OK;
}

/* Room for one more frame under the batch's cap (dvpp_video_run's room). */
static dvpp_status remote_room(remote_decode *d, size_t n, dvpp_err *err)
{
    uint64_t frames = d->res->frames;

    if ((frames + 1) * (uint64_t)d->cap_slice > d->max_bytes)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_frames", "the batch would pass %llu bytes "
                            "after %llu frames: sample fewer frames (every, fps, max_frames)",
                            (unsigned long long)d->max_bytes, (unsigned long long)frames);
    if (dvpp_buf_reserve(d->out, n) != DVPP_OK)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory for the frames");
    return DVPP_OK;
}

/* dvppc_frame_fn: copy the frame out of its slot (the library gives the
 * slot back after the call). A failure stops the decode with its status. */
static int remote_frame(void *ctx, const dvppc_frame *f)
{
    remote_decode *d = ctx;
    dvpp_image img = {0};
    dvpp_tensor t = {0};
    const void *data = NULL;
    size_t n = 0;
    dvpp_status st = f->result.data ? note_remote_frame(d, f, &d->err)
                                    : dvpp_err_set(&d->err, DVPP_EIO, "ring",
                                                   "a frame came after its ring closed");

    if (st == DVPP_OK && d->rq->has_pipe) {
        st = ctl_out_tensor(&f->result, &t, &d->err);
        if (st == DVPP_OK)
            st = remote_tensor(d, &t, &d->err);
        data = t.data, n = t.bytes;
    } else if (st == DVPP_OK) {
        st = ctl_out_image(&f->result, &img, &d->err);
        if (st == DVPP_OK)
            st = remote_pixels(d, &img, &n, &d->err);
        data = img.data;
    }
    if (st == DVPP_OK)
        st = remote_room(d, n, &d->err);
    if (st != DVPP_OK) {
        d->st = st;
        return (int)st;
    }
    memcpy(d->out->data + d->out->len, data, n);
    d->out->len += n;
    d->res->frames++;
    return 0;
}

/* A ring for the frames of @rq: slots of one frame's output, planned from
 * the stream's size (@in, or unknown: REMOTE_MIN_SLOT). */
static dvpp_status remote_ring(dvppc_conn *c, const dvpp_video_request *rq,
                               const dvpp_video_info *in, dvppc_ring **ring, dvpp_err *err)
{
    uint64_t bytes = REMOTE_MIN_SLOT, max = dvppc_info(c)->max_ring_bytes;
    uint32_t slots = REMOTE_DECODE_SLOTS;
    dvpp_image img;
    dvpp_tensor t;
    dvpp_planes pl;
    dvppc_error e;

    /* A size that cannot be planned here is left to the daemon to refuse. */
    if (in && rq->has_pipe && frame_tensor(rq, in, &t, NULL) == DVPP_OK)
        bytes = t.bytes;
    else if (in && !rq->has_pipe &&
             dvpp_image_init(&img, rq->vdec.format, in->width, in->height, 16, 2, NULL) ==
                 DVPP_OK &&
             dvpp_image_planes(&img, &pl, NULL) == DVPP_OK)
        bytes = pl.total;
    while (slots > 1 && slots * bytes > max)
        slots--;
    memset(&e, 0, sizeof(e));
    if (dvppc_ring_open(c, NULL, slots, bytes, ring, &e) != 0)
        return ctl_from_client(&e, err);
    return DVPP_OK;
}

/* The per-frame pipeline as the JSON spec VideoOpen carries ("" without). */
static char *frame_spec(const ctl_args *a, const dvpp_video_request *rq)
{
    ctl_job j;

    if (!rq->has_pipe)
        return strdup("");
    memset(&j, 0, sizeof(j));
    j.pipe = rq->pipe;
    j.kind = DVPPC_TENSOR;
    /* --std wins over --scale (ctl_norm_spec); the daemon takes one. */
    j.norm_mult = a->norm_scale_set && !a->std_set;
    j.mult = a->norm_scale;
    return ctl_spec_json(&j);
}

/* dvpp_video_run through a decode channel: the same @out and @res. The
 * stream's size is probed here to size the slots; a stream the probe
 * refuses goes to the daemon all the same, which says why. */
static dvpp_status remote_video_run(const ctl_args *a, const uint8_t *data, size_t len,
                                    const dvpp_video_request *rq, dvpp_buf *out,
                                    dvpp_video_result *res, dvpp_err *err)
{
    remote_decode d = {.a = a, .rq = rq, .res = res, .out = out,
                       .max_bytes = a->lim.max_decode_memory * 4};
    dvppc_vdec_opts o = {.format = dvpp_pixfmt_name(rq->vdec.format),
                         .every = rq->vdec.every, .fps = rq->vdec.fps,
                         .keyframes_only = rq->vdec.keyframes_only,
                         .start_s = rq->vdec.start_s, .end_s = rq->vdec.end_s,
                         .max_frames = rq->vdec.max_frames};
    dvppc_conn *c = NULL;
    dvppc_ring *ring = NULL;
    dvppc_error e;
    dvpp_err perr;
    char *spec = frame_spec(a, rq);
    bool known;
    dvpp_status st = DVPP_OK;

    memset(res, 0, sizeof(*res));
    memset(&e, 0, sizeof(e));
    dvpp_err_clear(&perr);
    dvpp_err_clear(&d.err);
    known = dvpp_video_probe(data, len, &a->lim, &res->info, &perr) == DVPP_OK;
    o.spec = spec;
    if (!spec)
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot build the spec");
    else if (len == 0) /* nothing to send: the probe's word */
        st = dvpp_err_set(err, perr.status, perr.field[0] ? perr.field : NULL, "%s",
                          perr.msg);
    if (st == DVPP_OK)
        st = ctl_remote_open(a, &c, err);
    if (st == DVPP_OK)
        st = remote_ring(c, rq, known ? &res->info : NULL, &ring, err);
    if (st == DVPP_OK && dvppc_video_decode(c, &o, data, len, ring, remote_frame, &d, &e) != 0) {
        /* The callback's own reason, else the daemon's or the transport's. */
        if (d.st != DVPP_OK && err)
            *err = d.err;
        st = d.st != DVPP_OK ? d.st : ctl_from_client(&e, err);
    }
    dvppc_ring_close(ring);
    dvppc_close(c);
    free(spec);
    /* No frame kept: the output's shape comes from the stream's size. */
    if (st == DVPP_OK && res->frames == 0 && !known)
        st = dvpp_err_set(err, perr.status, perr.field[0] ? perr.field : NULL, "%s",
                          perr.msg);
    if (st == DVPP_OK && res->is_tensor) {
        res->tensor.shape[0] = (int64_t)res->frames;
        res->tensor.bytes = (size_t)res->frames * res->slice_bytes;
        res->tensor.data = out->data;
    }
    /* dvpp_video_run's list: exactly @frames long, or NULL after a failure. */
    if (st == DVPP_OK) {
        st = dvpp_video_result_trim(res, d.cap, err);
        d.cap = res->frame ? res->frames : 0;
    }
    if (st != DVPP_OK) {
        dvpp_free(res->frame, d.cap * sizeof(*res->frame));
        res->frame = NULL;
        res->frames = 0;
    }
    return st;
}

/* --- video-decode: the command ------------------------------------------------------- */

static int run_decode(const ctl_args *a)
{
    dvpp_worker *w = malloc(sizeof(*w));
    dvpp_video_request *rq = malloc(sizeof(*rq));
    dvpp_video_result res;
    dvpp_buf in, out;
    dvpp_err err;
    dvpp_status st;
    int rc;

    if (!w || !rq) {
        free(w), free(rq);
        return 1;
    }
    memset(&res, 0, sizeof(res));
    dvpp_err_clear(&err);
    dvpp_buf_init(&in);
    dvpp_buf_init(&out);
    dvpp_worker_init(w, &a->lim);
    st = decode_request(a, rq, &err);
    if (st == DVPP_OK)
        st = dvpp_buf_read_file(&in, a->inputs[0], a->lim.max_video_bytes, &err);
    if (st == DVPP_OK)
        st = ctl_use_socket(a) ? remote_video_run(a, in.data, in.len, rq, &out, &res, &err)
                               : dvpp_video_run(w, in.data, in.len, rq, &out, &res, &err);
    if (st == DVPP_OK)
        st = write_decoded(a, rq, &res, &out, &err);
    rc = st == DVPP_OK ? print_frames(&res) : ctl_fail(a->inputs[0], &err);
    dvpp_video_result_fini(&res);
    dvpp_worker_fini(w);
    dvpp_buf_fini(&out);
    dvpp_buf_fini(&in);
    free(w), free(rq);
    return rc;
}

int ctl_cmd_video_decode(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    int rc;

    if (!a)
        return 1;
    rc = video_args(argc, argv, a, true);
    if (!rc && a->format_set && !is_frame_format(a->format)) {
        fprintf(stderr, "dvppctl video-decode: --format nv12, nv21, rgb or bgr\n");
        rc = 2;
    }
    if (!rc && ctl_use_socket(a))
        rc = decode_socket_check(a);
    if (!rc)
        rc = run_decode(a);
    free(a);
    return rc;
}

/* --- video-encode -------------------------------------------------------------- */

/* The frames of a .npy: one frame's geometry, where frame 0 starts, how
 * far apart they are and how many. */
typedef struct frame_stack {
    dvpp_buf file;
    dvpp_image frame;      /* data = frame 0 */
    size_t slice;          /* bytes per frame */
    uint64_t count;
} frame_stack;

/* T x H x W x 3: packed rgb (default) or bgr. */
static dvpp_status packed_frames(const ctl_args *a, const int64_t *shape, frame_stack *s,
                                 dvpp_err *err)
{
    dvpp_pixfmt fmt = a->format_set ? a->format : DVPP_PIXEL_RGB;

    if (fmt != DVPP_PIXEL_RGB && fmt != DVPP_PIXEL_BGR)
        return dvpp_err_set(err, DVPP_EINVAL, "format", "T x H x W x 3 frames are rgb or "
                            "bgr, not %s", dvpp_pixfmt_name(fmt));
    if (shape[3] != 3 || shape[1] > 65535 || shape[2] > 65535)
        return dvpp_err_set(err, DVPP_EINVAL, "input", "frames of T x H x W x 3");
    return dvpp_image_init(&s->frame, fmt, (uint32_t)shape[2], (uint32_t)shape[1], 1, 1,
                           err);
}

/* The 4:2:0 format and size of T x rows x stride frames: --format or
 * --input FMT (default nv12), the size from --size or --input FMT:WxH. */
static dvpp_status planar_kind(const ctl_args *a, dvpp_pixfmt *fmt, unsigned *w,
                               unsigned *h, dvpp_err *err)
{
    const char *spec = a->input_spec;
    const char *colon = spec ? strchr(spec, ':') : NULL;
    char name[32];

    *fmt = a->format_set ? a->format : DVPP_PIXEL_NV12;
    *w = a->size_w, *h = a->size_h;
    if (spec) {
        size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
        if (n >= sizeof(name))
            return dvpp_err_set(err, DVPP_EINVAL, "input", "bad --input '%s'", spec);
        memcpy(name, spec, n);
        name[n] = '\0';
        if (!dvpp_pixfmt_parse(name, fmt) || (colon && !ctl_parse_size(colon + 1, w, h)))
            return dvpp_err_set(err, DVPP_EINVAL, "input", "bad --input '%s' (FMT:WxH)",
                                spec);
    }
    if (*fmt != DVPP_PIXEL_NV12 && *fmt != DVPP_PIXEL_NV21 && *fmt != DVPP_PIXEL_I420)
        return dvpp_err_set(err, DVPP_EINVAL, "format", "T x rows x stride frames are "
                            "nv12, nv21 or i420, not %s", dvpp_pixfmt_name(*fmt));
    if (!*w || !*h)
        return dvpp_err_set(err, DVPP_EINVAL, "size", "%s frames need their size: --size "
                            "WxH or --input %s:WxH", dvpp_pixfmt_name(*fmt),
                            dvpp_pixfmt_name(*fmt));
    return DVPP_OK;
}

/* T x rows x stride: 4:2:0 frames as video-decode writes them (rows =
 * height_stride x 3 / 2, so VDEC's padded strides come back as they went). */
static dvpp_status planar_frames(const ctl_args *a, const int64_t *shape, frame_stack *s,
                                 dvpp_err *err)
{
    dvpp_pixfmt fmt;
    unsigned w, h;
    dvpp_planes pl;
    dvpp_status st = planar_kind(a, &fmt, &w, &h, err);

    if (st == DVPP_OK)
        st = dvpp_image_init(&s->frame, fmt, w, h, 1, 1, err);
    if (st != DVPP_OK)
        return st;
    if (shape[2] > UINT32_MAX || shape[1] % 3 || shape[1] * 2 / 3 < h ||
        shape[2] < s->frame.width_stride)
        return dvpp_err_set(err, DVPP_EINVAL, "input", "frames of %lld x %lld bytes do not "
                            "hold %ux%u %s", (long long)shape[1], (long long)shape[2], w, h,
                            dvpp_pixfmt_name(fmt));
    s->frame.width_stride = (uint32_t)shape[2];
    s->frame.height_stride = (uint32_t)(shape[1] * 2 / 3);
    st = dvpp_image_planes(&s->frame, &pl, err);
    if (st == DVPP_OK && pl.total != (size_t)(shape[1] * shape[2]))
        st = dvpp_err_set(err, DVPP_EINVAL, "input", "frames of %lld x %lld bytes are not a "
                          "%s layout", (long long)shape[1], (long long)shape[2],
                          dvpp_pixfmt_name(fmt));
    return st;
}

static dvpp_status load_frames(const ctl_args *a, frame_stack *s, dvpp_err *err)
{
    char descr[16];
    int64_t shape[4];
    size_t off;
    int ndim;
    dvpp_status st = dvpp_buf_read_file(&s->file, a->inputs[0], FRAMES_NPY_MAX(&a->lim), err);

    if (st == DVPP_OK)
        st = dvpp_npy_parse(s->file.data, s->file.len, descr, sizeof(descr), shape, 4, &ndim,
                            &off, err);
    if (st != DVPP_OK)
        return st;
    if (strcmp(descr, "|u1") != 0 && strcmp(descr, "<u1") != 0)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "input", "frames must be uint8, not %s",
                            descr);
    if ((ndim != 3 && ndim != 4) || shape[0] <= 0 || shape[1] <= 0 || shape[2] <= 0)
        return dvpp_err_set(err, DVPP_EINVAL, "input", "frames are T x H x W x 3 (rgb) or "
                            "T x rows x stride (nv12, nv21, i420)");
    st = ndim == 4 ? packed_frames(a, shape, s, err) : planar_frames(a, shape, s, err);
    if (st != DVPP_OK)
        return st;
    s->count = (uint64_t)shape[0];
    s->slice = (s->file.len - off) / s->count;
    s->frame.data = s->file.data + off;
    s->frame.size = s->slice;
    return DVPP_OK;
}

/* --idr 0,30,...: @idr[i] for the frames forced to IDR. */
static dvpp_status parse_idr(const char *list, uint64_t count, bool *idr, dvpp_err *err)
{
    const char *p = list;

    while (p && *p) {
        char num[24];
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        unsigned long long i;
        if (n == 0 || n >= sizeof(num))
            return dvpp_err_set(err, DVPP_EINVAL, "idr", "bad --idr '%s'", list);
        memcpy(num, p, n);
        num[n] = '\0';
        if (!ctl_parse_u64(num, &i) || i >= count)
            return dvpp_err_set(err, DVPP_EINVAL, "idr", "--idr %s: frames are 0..%llu", num,
                                (unsigned long long)count - 1);
        idr[i] = true;
        p = comma ? comma + 1 : NULL;
    }
    return DVPP_OK;
}

/* Every frame of @s through the encoder into @out. */
static dvpp_status encode_frames(dvpp_venc_opts *o, const frame_stack *s, const bool *idr,
                                 dvpp_buf *out, uint64_t *keyframes, uint64_t *packets,
                                 dvpp_err *err)
{
    dvpp_venc *e = NULL;
    dvpp_image img = s->frame;
    dvpp_status st;

    o->width = s->frame.width;
    o->height = s->frame.height;
    st = dvpp_venc_open(o, out, &e, err);
    for (uint64_t i = 0; st == DVPP_OK && i < s->count; i++) {
        img.data = s->frame.data + i * s->slice;
        st = dvpp_venc_frame(e, &img, idr[i], err);
    }
    if (st == DVPP_OK)
        st = dvpp_venc_finish(e, err);
    if (st == DVPP_OK)
        *packets = dvpp_venc_packets(e, keyframes);
    dvpp_venc_close(e);
    return st;
}

/* --- video-encode through a daemon ------------------------------------------------- */

/* The flags an encode channel cannot carry: 0, or 2 after printing which. */
static int encode_socket_check(const ctl_args *a)
{
    const char *flag = NULL;

    if (a->venc.threads > 1)
        flag = "--threads (the daemon encodes on one thread)";
    else if (a->crf_set && a->venc.crf == 0)
        flag = "--crf 0 (VideoOpen.crf 0 means the default, 23)";
    if (!flag)
        return 0;
    fprintf(stderr, "dvppctl video-encode: %s is not available with --socket\n", flag);
    return 2;
}

/* dvppc_buf_fn: the stream's bytes, in order, into a dvpp_buf. */
static int append_bytes(void *ctx, const void *data, size_t len)
{
    return dvpp_buf_append(ctx, data, len) == DVPP_OK ? 0 : DVPPC_ENOMEM;
}

/* The frames of @s as an encode channel takes them: tight rows. Packed
 * frames of a .npy are tight already; planar ones keep the array's
 * strides (video-decode's VDEC padding) and are copied into @tight, one
 * at a time. */
typedef struct tight_frames {
    const frame_stack *s;
    dvpp_planes sp;              /* the array's planes */
    dvpp_image tight;            /* a frame in tight rows (data: the copy, or NULL) */
    dvpp_planes tp;
} tight_frames;

static dvpp_status tight_init(tight_frames *tf, const frame_stack *s, dvpp_err *err)
{
    dvpp_status st;
    bool same;

    memset(tf, 0, sizeof(*tf));
    tf->s = s;
    st = dvpp_image_planes(&s->frame, &tf->sp, err);
    if (st == DVPP_OK)
        st = dvpp_image_init(&tf->tight, s->frame.format, s->frame.width, s->frame.height, 1,
                             1, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(&tf->tight, &tf->tp, err);
    if (st != DVPP_OK)
        return st;
    same = tf->sp.count == tf->tp.count && tf->sp.total == tf->tp.total;
    for (int k = 0; same && k < tf->tp.count; k++)
        same = tf->sp.p[k].offset == tf->tp.p[k].offset &&
               tf->sp.p[k].stride == tf->tp.p[k].stride;
    return same ? DVPP_OK : dvpp_image_alloc(&tf->tight, err);
}

/* Frame @i in tight rows (tf->tp.total bytes; valid until the next call). */
static const uint8_t *tight_frame(tight_frames *tf, uint64_t i)
{
    const uint8_t *src = tf->s->frame.data + i * tf->s->slice;

    if (!tf->tight.data)
        return src;
    for (int k = 0; k < tf->tp.count; k++) {
        const dvpp_plane *from = &tf->sp.p[k], *to = &tf->tp.p[k];
        for (uint32_t y = 0; y < to->rows; y++)
            memcpy(tf->tight.data + to->offset + y * to->stride,
                   src + from->offset + y * from->stride, to->row_bytes);
    }
    return tf->tight.data;
}

/* encode_frames through an encode channel: the same @out and counts. */
static dvpp_status remote_encode(const ctl_args *a, const frame_stack *s, const bool *idr,
                                 dvpp_buf *out, uint64_t *keyframes, uint64_t *packets,
                                 dvpp_err *err)
{
    static const char *const rc_names[] = {"crf", "cbr", "vbr"};
    const dvpp_venc_opts *vo = &a->venc;
    dvppc_venc_opts o = {.codec = dvpp_video_codec_name(vo->codec),
                         .width = s->frame.width, .height = s->frame.height,
                         .fps_num = vo->fps_num, .fps_den = vo->fps_den, .gop = vo->gop,
                         .rc = rc_names[vo->rc], .bitrate_kbps = vo->bitrate_kbps,
                         .crf = vo->crf, .profile = vo->profile,
                         .mp4 = vo->container == DVPP_VENC_MP4,
                         .input_format = dvpp_pixfmt_name(s->frame.format)};
    dvppc_venc_counts counts;
    dvppc_conn *c = NULL;
    dvppc_venc *v = NULL;
    dvppc_error e;
    tight_frames tf;
    dvpp_status st = tight_init(&tf, s, err);
    int rc = 0;

    memset(&e, 0, sizeof(e));
    if (st == DVPP_OK)
        st = ctl_remote_open(a, &c, err);
    if (st == DVPP_OK) {
        rc = dvppc_video_encode_open(c, &o, append_bytes, out, &v, &e);
        for (uint64_t i = 0; rc == 0 && i < s->count; i++)
            rc = dvppc_video_encode_frame(v, tight_frame(&tf, i), tf.tp.total, idr[i], &e);
        if (rc == 0)
            rc = dvppc_video_encode_finish(v, &counts, &e);
        else
            dvppc_video_encode_close(v);
        if (rc != 0)
            st = ctl_from_client(&e, err);
    }
    if (st == DVPP_OK) {
        *packets = counts.packets;
        *keyframes = counts.keyframes;
    }
    dvppc_close(c);
    dvpp_image_free(&tf.tight);
    return st;
}

/* --- video-encode: the command ------------------------------------------------------ */

static dvpp_status run_encode(ctl_args *a, dvpp_buf *out, dvpp_err *err)
{
    frame_stack s;
    bool *idr = NULL;
    uint64_t packets = 0, keyframes = 0;
    dvpp_status st;

    memset(&s, 0, sizeof(s));
    dvpp_buf_init(&s.file);
    st = load_frames(a, &s, err);
    if (st == DVPP_OK && !(idr = calloc(s.count, sizeof(*idr))))
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory");
    if (st == DVPP_OK)
        st = parse_idr(a->idr, s.count, idr, err);
    if (st == DVPP_OK)
        st = ctl_use_socket(a)
                 ? remote_encode(a, &s, idr, out, &keyframes, &packets, err)
                 : encode_frames(&a->venc, &s, idr, out, &keyframes, &packets, err);
    if (st == DVPP_OK)
        st = dvpp_write_file(a->out, out->data, out->len, err);
    if (st == DVPP_OK)
        printf("{\"frames\": %llu, \"packets\": %llu, \"keyframes\": %llu, \"bytes\": %zu}\n",
               (unsigned long long)s.count, (unsigned long long)packets,
               (unsigned long long)keyframes, out->len);
    free(idr);
    dvpp_buf_fini(&s.file);
    return st;
}

/* The rate-control flags must agree: --bitrate alone is VBR (capped at
 * it), --crf goes with crf. Returns 0 or 2 after printing why. */
static int check_rc(ctl_args *a)
{
    if (!a->codec_set) {
        fprintf(stderr, "dvppctl video-encode: need --codec h264|h265\n");
        return 2;
    }
    if (!a->rc_set)
        a->venc.rc = a->bitrate_set ? DVPP_VENC_RC_VBR : DVPP_VENC_RC_CRF;
    if (a->venc.rc == DVPP_VENC_RC_CRF && a->bitrate_set) {
        fprintf(stderr, "dvppctl video-encode: --bitrate needs --rc cbr|vbr\n");
        return 2;
    }
    if (a->venc.rc != DVPP_VENC_RC_CRF && a->crf_set) {
        fprintf(stderr, "dvppctl video-encode: --crf goes with --rc crf\n");
        return 2;
    }
    return 0;
}

int ctl_cmd_video_encode(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    dvpp_buf out;
    dvpp_err err;
    int rc;

    if (!a)
        return 1;
    rc = video_args(argc, argv, a, true);
    if (!rc)
        rc = check_rc(a);
    if (!rc && ctl_use_socket(a))
        rc = encode_socket_check(a);
    if (rc) {
        free(a);
        return rc;
    }
    a->venc.container = strcasecmp(extension(a->out), "mp4") == 0 ? DVPP_VENC_MP4
                                                                  : DVPP_VENC_ANNEXB;
    dvpp_err_clear(&err);
    dvpp_buf_init(&out);
    rc = run_encode(a, &out, &err) == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
    dvpp_buf_fini(&out);
    free(a);
    return rc;
}
