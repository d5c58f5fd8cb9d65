/* ctl_video: dvppctl video-info and video-decode (video-encode is
 * ctl_venc.c).
 *
 * Offline they run libdvpp's VDEC in-process, the same code the daemon
 * runs. video-decode goes through dvpp_video_run
 * (device/dvpp_videojob.h): the frames as pixels, or each frame through
 * the preprocess pipeline into a T x C x H x W tensor.
 *
 * With --socket (or $DVPPD_SOCKET) video-decode runs in a dvppd decode
 * channel (proto/PROTOCOL.md "Video channels"), an entry of the remote
 * runner's table, and writes what comes back with the offline writers, so
 * the files are byte-identical; the daemon delivers each frame with its
 * own shape into slots sized for every frame size the stream's parameter
 * sets make (dvpp_video_scan_sizes), and a change the one .npy cannot hold
 * is refused here by dvpp_video_run's rule (dvpp_video_shape), in its
 * words. video-info stays local (the probe, and every SPS read: "sizes",
 * "max_width", "max_height").
 * Flags a VideoOpen cannot carry are refused with "not available with
 * --socket" (exit 2).
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

int ctl_video_args(int argc, char **argv, ctl_args *a, bool need_out)
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

/* "sizes": every frame size the stream's parameter sets make, in order,
 * and the largest of each side ("max_width", "max_height"): a stream
 * whose resolution changes has more than the first frame's. */
static bool add_sizes(json_t *j, const dvpp_video_sizes *sz)
{
    json_t *list = json_array();
    bool ok = list != NULL;

    for (uint32_t i = 0; ok && i < sz->count; i++)
        ok = json_array_append_new(list, json_pack("[I, I]", (json_int_t)sz->size[i].width,
                                                   (json_int_t)sz->size[i].height)) == 0;
    if (!ok) {
        json_decref(list);
        return false;
    }
    return json_object_set_new(j, "sizes", list) == 0 &&
           json_object_set_new(j, "sizes_complete", json_boolean(sz->complete)) == 0 &&
           json_object_set_new(j, "max_width", json_integer((json_int_t)sz->max_width)) == 0 &&
           json_object_set_new(j, "max_height", json_integer((json_int_t)sz->max_height)) == 0;
}

int ctl_cmd_video_info(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    dvpp_video_sizes sz;
    dvpp_video_info in;
    dvpp_err err;
    dvpp_buf b;
    json_t *j = NULL;
    int rc;

    if (!a)
        return 1;
    rc = ctl_video_args(argc, argv, a, false);
    if (rc) {
        free(a);
        return rc;
    }
    dvpp_err_clear(&err);
    dvpp_buf_init(&b);
    if (dvpp_buf_read_file(&b, a->inputs[0], a->lim.max_video_bytes, &err) != DVPP_OK ||
        dvpp_video_probe(b.data, b.len, &a->lim, &in, &err) != DVPP_OK ||
        dvpp_video_scan_sizes(b.data, b.len, &a->lim, &sz, &err) != DVPP_OK) {
        rc = ctl_fail(a->inputs[0], &err);
        goto out;
    }
    j = info_json(&in);
    if (j && !add_sizes(j, &sz)) {
        json_decref(j);
        j = NULL;
    }
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

/* The tensor the pipeline of @rq makes of one frame of @w x @h
 * (1 x C x H x W; data NULL). */
static dvpp_status frame_tensor(const dvpp_video_request *rq, uint32_t w, uint32_t h,
                                dvpp_tensor *t, dvpp_err *err)
{
    dvpp_pipeline p = rq->pipe;
    dvpp_pipe_source src = {.width = w, .height = h};
    dvpp_pipeline_plan plan;
    dvpp_status st;

    p.input = DVPP_PIPE_IN_RAW;
    p.raw = (dvpp_pipe_raw){rq->vdec.format, w, h, 0, 0};
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
    dvpp_status st = frame_tensor(rq, in->width, in->height, &t, err);

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

static dvpp_status print_frames(const dvpp_video_result *res, dvpp_err *err)
{
    json_t *j = frames_json(res);

    if (!j)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory for the frame list");
    json_dumpf(j, stdout, JSON_COMPACT);
    fputc('\n', stdout);
    json_decref(j);
    return DVPP_OK;
}

/* --- video-decode through a daemon ------------------------------------------------ */

/* Slots of the ring a decode channel writes into: the daemon decodes the
 * next frames while this side copies one out, and waits while all are
 * taken (it never drops a frame). */
#define REMOTE_DECODE_SLOTS 4u

/* A decode channel's frames, gathered as dvpp_video_run gathers them. */
typedef struct remote_decode {
    const ctl_args *a;
    const dvpp_video_request *rq;
    dvpp_video_result *res;      /* frames, their geometry, frame[] */
    dvpp_buf *out;               /* the frames' bytes, in order */
    size_t cap;                  /* entries allocated at res->frame */
    size_t cap_slice;            /* bytes a frame takes offline (the cap counts these) */
    uint64_t max_bytes;          /* the batch's cap, dvpp_video_run's */
    dvpp_video_shape shape;      /* dvpp_video_run's rule: one shape */
    dvpp_status st;              /* why the callback stopped the decode */
    dvpp_err err;
} remote_decode;

/* The flags a decode channel cannot carry (beyond those ctl_spec_check
 * refuses): 0, or 2 after printing which. */
static int decode_socket_check(const ctl_args *a)
{
    dvpp_pixfmt fmt = a->format_set ? a->format : DVPP_PIXEL_NV12;
    bool vdec_strides = (a->jpeg.align_w == 0 || a->jpeg.align_w == 16) &&
                        (a->jpeg.align_h == 0 || a->jpeg.align_h == 2);

    if (a->vdec.threads > 1) {
        fprintf(stderr, "dvppctl video-decode: --threads (the daemon gives a decode its "
                        "threads from its free channels) is not available with --socket\n");
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

/* Record @f's index, pts, time, key flag and geometry (a tensor's own). */
static dvpp_status note_remote_frame(remote_decode *d, const dvppc_frame *f, dvpp_err *err)
{
    const dvppc_result *r = &f->result;
    dvpp_video_frame_info fi = {.index = f->index, .pts = f->pts, .time_s = f->time_s,
                                .key = f->key, .geom = {1.0, 1.0, 0.0, 0.0}};

    if (d->rq->has_pipe)
        fi.geom = (dvpp_pipe_geom){r->scale_x, r->scale_y, r->pad_x, r->pad_y};
    return dvpp_video_result_note(d->res, &d->cap, &fi, err);
}

/* A frame's pixels (@img, a view of the slot): the first fixes the
 * geometry; a later one of another size (the daemon delivers each frame
 * with its own) is refused as offline, in dvpp_video_run's words. */
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
    st = dvpp_video_shape_copy(&d->shape, r->frames, img, pl.total, err);
    if (st != DVPP_OK)
        return st;
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
    if (img->format != r->image.format || img->width_stride != r->image.width_stride ||
        img->height_stride != r->image.height_stride)
        return dvpp_err_set(err, DVPP_EIO, "meta", "dvppd changed the frames' layout at "
                            "frame %llu", (unsigned long long)r->frames);
    return DVPP_OK;
}

/* Frame @f's tensor @t (1 x ...): the first fixes the shape; a later one
 * of another shape (the daemon plans each frame on its own: a fit across
 * aspect ratios) is refused as offline, in dvpp_video_run's words, naming
 * the frame's size (its meta's width x height). */
static dvpp_status remote_tensor(remote_decode *d, const dvppc_frame *f, const dvpp_tensor *t,
                                 dvpp_err *err)
{
    dvpp_video_result *r = d->res;
    dvpp_status st = dvpp_video_shape_tensor(&d->shape, r->frames, f->result.meta.width,
                                             f->result.meta.height, t, err);

    if (st != DVPP_OK)
        return st;
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
            st = remote_tensor(d, f, &t, &d->err);
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

/* The bytes one frame of @w x @h takes in a slot: its pixels in VDEC's
 * strides, or the tensor the pipeline makes of it; 0 when it cannot be
 * planned here (the daemon will say why). */
static uint64_t frame_bytes(const dvpp_video_request *rq, uint32_t w, uint32_t h)
{
    dvpp_image img;
    dvpp_tensor t;
    dvpp_planes pl;

    if (rq->has_pipe)
        return frame_tensor(rq, w, h, &t, NULL) == DVPP_OK ? t.bytes : 0;
    if (dvpp_image_init(&img, rq->vdec.format, w, h, 16, 2, NULL) == DVPP_OK &&
        dvpp_image_planes(&img, &pl, NULL) == DVPP_OK)
        return pl.total;
    return 0;
}

/* Slots that take every frame of the stream: the largest output any of
 * its frame sizes makes (@sz, every SPS read here; pixels grow with each
 * side, so the maxima bound them; a tensor is planned for each size: one
 * that follows the frame, e.g. shorter across aspect ratios, can be
 * largest for a smaller picture). With sizes unknown or not all listed, 0:
 * remote_ring's one slot as large as the daemon and the batch's cap allow,
 * a sparse memfd where only what the frames write becomes memory. */
static uint64_t planned_slot(const dvpp_video_request *rq, const dvpp_video_sizes *sz)
{
    uint64_t most = 0;

    if (!sz || !sz->complete || sz->count == 0)
        return 0;
    if (!rq->has_pipe)
        return frame_bytes(rq, sz->max_width, sz->max_height);
    for (uint32_t i = 0; i < sz->count; i++) {
        uint64_t n = frame_bytes(rq, sz->size[i].width, sz->size[i].height);
        if (n == 0)
            return 0;
        most = n > most ? n : most;
    }
    return most;
}

/* A ring for the frames of @rq: REMOTE_DECODE_SLOTS slots (fewer when they
 * would pass the daemon's max_ring_bytes) of planned_slot's bytes, or one
 * of at most @cap bytes. */
static dvpp_status remote_ring(dvppc_conn *c, const dvpp_video_request *rq,
                               const dvpp_video_sizes *sz, uint64_t cap, dvppc_ring **ring,
                               dvpp_err *err)
{
    uint64_t max = dvppc_info(c)->max_ring_bytes, bytes = planned_slot(rq, sz);
    uint32_t slots = REMOTE_DECODE_SLOTS;
    dvppc_error e;

    if (!bytes)
        bytes = max < cap ? max : cap, slots = 1;
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
    ctl_job_scale(&j, a);
    return ctl_spec_json(&j);
}

/* video-decode through a decode channel: dvpp_video_run's @out and @res,
 * written as offline. The stream is probed here (its first frame's size:
 * the geometry of an empty result) and its parameter sets read (every
 * frame size: the slots); a stream the probe refuses goes to the daemon
 * all the same, which says why. */
typedef struct vdec_channel {
    dvpp_video_request rq;
    dvpp_buf in;                 /* the file */
    dvpp_buf out;                /* the frames' bytes */
    dvpp_video_result res;
    remote_decode d;             /* the frames as they come */
    dvpp_err perr;               /* why the probe refused the stream */
    bool known;                  /* the probe read the stream's size */
    dvpp_video_sizes sizes;      /* every frame size its SPSs make */
    bool sized;                  /* sizes were read */
    bool trimmed;                /* res.frame is exactly res.frames long */
    char *spec;
    dvppc_ring *ring;
} vdec_channel;

static int vdec_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    vdec_channel *v = state;
    int rc = decode_socket_check(a);

    if (rc)
        return rc;
    dvpp_buf_init(&v->in);
    dvpp_buf_init(&v->out);
    v->d = (remote_decode){.a = a, .rq = &v->rq, .res = &v->res, .out = &v->out,
                           .max_bytes = a->lim.max_decode_memory * 4};
    dvpp_err_clear(&v->d.err);
    dvpp_err_clear(&v->perr);
    if (decode_request(a, &v->rq, err) != DVPP_OK ||
        dvpp_buf_read_file(&v->in, a->inputs[0], a->lim.max_video_bytes, err) != DVPP_OK)
        return 1;
    v->known = dvpp_video_probe(v->in.data, v->in.len, &a->lim, &v->res.info, &v->perr) ==
               DVPP_OK;
    v->sized = dvpp_video_scan_sizes(v->in.data, v->in.len, &a->lim, &v->sizes, NULL) ==
               DVPP_OK;
    v->spec = frame_spec(a, &v->rq);
    if (!v->spec) {
        dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot build the spec");
        return 1;
    }
    if (v->in.len == 0) { /* nothing to send: the probe's word */
        dvpp_err_set(err, v->perr.status, v->perr.field[0] ? v->perr.field : NULL, "%s",
                     v->perr.msg);
        return 1;
    }
    return 0;
}

static dvpp_status vdec_talk(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err)
{
    vdec_channel *v = state;
    const dvpp_vdec_opts *vd = &v->rq.vdec;
    dvppc_vdec_opts o = {.format = dvpp_pixfmt_name(vd->format), .every = vd->every,
                         .fps = vd->fps, .keyframes_only = vd->keyframes_only,
                         .start_s = vd->start_s, .end_s = vd->end_s,
                         .max_frames = vd->max_frames, .spec = v->spec};
    dvppc_error e;
    dvpp_status st;

    (void)a;
    memset(&e, 0, sizeof(e));
    st = remote_ring(c, &v->rq, v->sized ? &v->sizes : NULL, v->d.max_bytes, &v->ring, err);
    if (st != DVPP_OK ||
        dvppc_video_decode(c, &o, v->in.data, v->in.len, v->ring, remote_frame, &v->d, &e) == 0)
        return st;
    /* The callback's own reason, else the daemon's or the transport's. */
    if (v->d.st != DVPP_OK && err)
        *err = v->d.err;
    return v->d.st != DVPP_OK ? v->d.st : ctl_from_client(&e, err);
}

/* The result as dvpp_video_run leaves it, then written and listed as
 * offline. */
static dvpp_status vdec_finish(ctl_args *a, void *state, dvpp_err *err)
{
    vdec_channel *v = state;
    dvpp_video_result *res = &v->res;
    dvpp_status st = DVPP_OK;

    /* No frame kept: the output's shape comes from the stream's size. */
    if (res->frames == 0 && !v->known)
        return dvpp_err_set(err, v->perr.status, v->perr.field[0] ? v->perr.field : NULL,
                            "%s", v->perr.msg);
    if (res->is_tensor) {
        res->tensor.shape[0] = (int64_t)res->frames;
        res->tensor.bytes = (size_t)res->frames * res->slice_bytes;
        res->tensor.data = v->out.data;
    }
    /* dvpp_video_run's list: exactly @frames long. */
    st = dvpp_video_result_trim(res, v->d.cap, err);
    v->d.cap = res->frame ? res->frames : 0;
    v->trimmed = st == DVPP_OK;
    if (st == DVPP_OK)
        st = write_decoded(a, &v->rq, res, &v->out, err);
    return st == DVPP_OK ? print_frames(res, err) : st;
}

static void vdec_release(dvppc_conn *c, void *state)
{
    vdec_channel *v = state;

    (void)c;
    dvppc_ring_close(v->ring);
    v->ring = NULL;
}

static void vdec_fini(void *state)
{
    vdec_channel *v = state;

    if (!v->trimmed) { /* the list as the frames grew it */
        dvpp_free(v->res.frame, v->d.cap * sizeof(*v->res.frame));
        v->res.frame = NULL;
        v->res.frames = 0;
    }
    dvpp_video_result_fini(&v->res);
    dvpp_buf_fini(&v->out);
    dvpp_buf_fini(&v->in);
    free(v->spec);
}

const ctl_remote_cmd ctl_remote_video_decode_cmd = {
    .name = "video-decode", .flags = CTL_REMOTE_SPEC, .state_bytes = sizeof(vdec_channel),
    .prepare = vdec_prepare, .talk = vdec_talk, .finish = vdec_finish,
    .release = vdec_release, .fini = vdec_fini};

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
        st = dvpp_video_run(w, in.data, in.len, rq, &out, &res, &err);
    if (st == DVPP_OK)
        st = write_decoded(a, rq, &res, &out, &err);
    if (st == DVPP_OK)
        st = print_frames(&res, &err);
    rc = st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
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
    rc = ctl_video_args(argc, argv, a, true);
    if (!rc && a->format_set && !is_frame_format(a->format)) {
        fprintf(stderr, "dvppctl video-decode: --format nv12, nv21, rgb or bgr\n");
        rc = 2;
    }
    if (!rc)
        rc = ctl_use_socket(a) ? ctl_remote_run("video-decode", a) : run_decode(a);
    free(a);
    return rc;
}

