/* ctl_venc: dvppctl video-encode, a stack of frames (.npy) to H.264 or
 * H.265 (Annex-B or MP4).
 *
 * Offline it runs libdvpp's VENC in-process, the same code the daemon
 * runs. With --socket (or $DVPPD_SOCKET) the frames go through a dvppd
 * encode channel (proto/PROTOCOL.md "Video channels"), an entry of the
 * remote runner's table, and the stream is written as offline, so the
 * files are byte-identical. Flags a VideoOpen cannot carry are refused
 * with "not available with --socket" (exit 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "ctl_remote.h"
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
    else if (a->venc.low_delay)
        flag = "--low-delay (an encode channel encodes with lookahead)";
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

/* The command line's frames and the frames forced to IDR. */
typedef struct venc_input {
    frame_stack s;
    bool *idr;                   /* s.count flags */
} venc_input;

static dvpp_status venc_load(const ctl_args *a, venc_input *in, dvpp_err *err)
{
    dvpp_status st;

    dvpp_buf_init(&in->s.file);
    st = load_frames(a, &in->s, err);
    if (st == DVPP_OK && !(in->idr = calloc(in->s.count, sizeof(*in->idr))))
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "out of memory");
    if (st == DVPP_OK)
        st = parse_idr(a->idr, in->s.count, in->idr, err);
    return st;
}

static void venc_input_fini(venc_input *in)
{
    free(in->idr);
    in->idr = NULL;
    dvpp_buf_fini(&in->s.file);
}

/* The stream into a->out, and its one JSON line. */
static dvpp_status venc_write(const ctl_args *a, const frame_stack *s, const dvpp_buf *out,
                              uint64_t packets, uint64_t keyframes, dvpp_err *err)
{
    dvpp_status st = dvpp_write_file(a->out, out->data, out->len, err);

    if (st == DVPP_OK)
        printf("{\"frames\": %llu, \"packets\": %llu, \"keyframes\": %llu, \"bytes\": %zu}\n",
               (unsigned long long)s->count, (unsigned long long)packets,
               (unsigned long long)keyframes, out->len);
    return st;
}

/* encode_frames through the encode channel of @c: the same @out and counts. */
static dvpp_status remote_encode(dvppc_conn *c, const ctl_args *a, const frame_stack *s,
                                 const bool *idr, dvpp_buf *out, uint64_t *keyframes,
                                 uint64_t *packets, dvpp_err *err)
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
    dvppc_venc *v = NULL;
    dvppc_error e;
    tight_frames tf;
    dvpp_status st = tight_init(&tf, s, err);
    int rc = 0;

    memset(&e, 0, sizeof(e));
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
    dvpp_image_free(&tf.tight);
    return st;
}

/* video-encode through a daemon, an entry of the remote runner's table. */
typedef struct venc_channel {
    venc_input in;
    dvpp_buf out;                /* the stream */
    uint64_t packets, keyframes;
} venc_channel;

static int venc_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    venc_channel *v = state;
    int rc = encode_socket_check(a);

    dvpp_buf_init(&v->out);
    if (rc)
        return rc;
    return venc_load(a, &v->in, err) == DVPP_OK ? 0 : 1;
}

static dvpp_status venc_talk(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err)
{
    venc_channel *v = state;

    return remote_encode(c, a, &v->in.s, v->in.idr, &v->out, &v->keyframes, &v->packets,
                         err);
}

static dvpp_status venc_finish(ctl_args *a, void *state, dvpp_err *err)
{
    venc_channel *v = state;

    return venc_write(a, &v->in.s, &v->out, v->packets, v->keyframes, err);
}

static void venc_fini(void *state)
{
    venc_channel *v = state;

    venc_input_fini(&v->in);
    dvpp_buf_fini(&v->out);
}

const ctl_remote_cmd ctl_remote_video_encode_cmd = {
    .name = "video-encode", .state_bytes = sizeof(venc_channel), .prepare = venc_prepare,
    .talk = venc_talk, .finish = venc_finish, .fini = venc_fini};

/* --- video-encode: the command ------------------------------------------------------ */

static int run_encode(ctl_args *a)
{
    venc_input in;
    dvpp_buf out;
    dvpp_err err;
    uint64_t packets = 0, keyframes = 0;
    dvpp_status st;

    memset(&in, 0, sizeof(in));
    dvpp_err_clear(&err);
    dvpp_buf_init(&out);
    st = venc_load(a, &in, &err);
    if (st == DVPP_OK)
        st = encode_frames(&a->venc, &in.s, in.idr, &out, &keyframes, &packets, &err);
    if (st == DVPP_OK)
        st = venc_write(a, &in.s, &out, packets, keyframes, &err);
    venc_input_fini(&in);
    dvpp_buf_fini(&out);
    return st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
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
    int rc;

    if (!a)
        return 1;
    rc = ctl_video_args(argc, argv, a, true);
    if (!rc)
        rc = check_rc(a);
    if (!rc) {
        a->venc.container = strcasecmp(extension(a->out), "mp4") == 0 ? DVPP_VENC_MP4
                                                                      : DVPP_VENC_ANNEXB;
        rc = ctl_use_socket(a) ? ctl_remote_run("video-encode", a) : run_encode(a);
    }
    free(a);
    return rc;
}
