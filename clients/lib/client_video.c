/* client_video.c: video channels (proto/PROTOCOL.md "Video channels"):
 * a stream decoded into ring slots frame by frame, raw frames encoded into
 * a stream.
 *
 * A channel registers one block of request ids: the VideoOpen takes the
 * first, which the daemon's VideoFrames and VideoData echo; every
 * VideoPacket and the VideoClose take the next ones, whose Acks and Errors
 * echo them. So every answer of a channel is parked under one entry, in
 * the order the daemon sent it: the frames of a stream come before the
 * answer to its eos packet, and the Error refusing a packet lies between
 * the bytes that came before and after it. No other thread's request can
 * take an answer of the channel, or the other way round.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#endif
#include "client_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ipc_msg.h"

/* Ids one channel may use: the VideoOpen, its packets, the VideoClose.
 * 2^32 packets is four years of 30 fps video; 64-bit ids leave room for
 * 2^32 such blocks on a connection. */
#define CHANNEL_IDS (UINT64_C(1) << 32)

/* A channel as this side knows it. */
typedef struct chan {
    dvppc_conn *c;          /* the connection */
    uint64_t base;          /* the VideoOpen's id, first of the block */
    uint64_t next;          /* the id of the next packet */
    uint64_t channel;       /* VideoOpened.channel */
} chan;

/* --- channels ------------------------------------------------------------------- */

/* Register an id block and open a channel with @vo. On failure nothing
 * stays registered. Call without the lock. */
static int chan_open(dvppc_conn *c, Dvpp__VideoOpen *vo, chan *ch, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    cl_msg *m = NULL;
    int st;

    memset(ch, 0, sizeof(*ch));
    ch->c = c;
    pthread_mutex_lock(&c->mu);
    st = dvppc__register_block(c, CHANNEL_IDS, &ch->base, err);
    pthread_mutex_unlock(&c->mu);
    if (st)
        return st;
    ch->next = ch->base + 1;
    env.protocol = DVPPC_PROTOCOL;
    env.id = ch->base;
    env.body_case = DVPP__ENVELOPE__BODY_VIDEO_OPEN;
    env.video_open = vo;
    st = dvppc__send(c, &env, NULL, 0, err);
    pthread_mutex_lock(&c->mu);
    if (!st)
        st = dvppc__await(c, ch->base, -1, &m, err);
    pthread_mutex_unlock(&c->mu);
    if (!st)
        st = dvppc__expect(m, DVPP__ENVELOPE__BODY_VIDEO_OPENED, err);
    if (!st)
        ch->channel = m->env->video_opened->channel;
    dvppc__msg_free(m);
    if (st) {
        pthread_mutex_lock(&c->mu);
        dvppc__forget(c, ch->base);
        pthread_mutex_unlock(&c->mu);
    }
    return st;
}

/* Send @p on the channel under the next id of the block (into *id), with
 * @fd (-1: none) attached. */
static int chan_send(chan *ch, Dvpp__VideoPacket *p, int fd, uint64_t *id, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;

    if (ch->next - ch->base >= CHANNEL_IDS - 1)
        return dvppc__fail(err, DVPPC_ELIMIT, "channel",
                           "a channel carries at most %llu packets",
                           (unsigned long long)(CHANNEL_IDS - 2));
    p->channel = ch->channel;
    env.protocol = DVPPC_PROTOCOL;
    env.id = ch->next++;
    env.body_case = DVPP__ENVELOPE__BODY_VIDEO_PACKET;
    env.video_packet = p;
    *id = env.id;
    return dvppc__send(ch->c, &env, fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0, err);
}

/* The channel's next answer, waiting up to @timeout_ms (-1: forever).
 * DVPPC_ETIMEDOUT or the transport failure. Call without the lock. */
static int chan_next(chan *ch, int timeout_ms, cl_msg **m, dvppc_error *err)
{
    int st;

    pthread_mutex_lock(&ch->c->mu);
    st = dvppc__await(ch->c, ch->base, timeout_ms, m, err);
    pthread_mutex_unlock(&ch->c->mu);
    return st;
}

/* Give the slot of a VideoFrame nobody will see back. Takes @m. */
static void frame_drop(dvppc_conn *c, cl_msg *m)
{
    dvppc_frame f;

    pthread_mutex_lock(&c->mu);
    dvppc__frame_fill(c, m, &f, NULL);
    pthread_mutex_unlock(&c->mu);
    dvppc_release(c, &f.result);
}

/* VideoClose, and wait for its Ack: whatever of the channel is parked
 * before it is dropped (frames' slots given back). Then the block is
 * forgotten; a late answer to it is dropped on arrival. */
static void chan_close(chan *ch)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__VideoClose vc = DVPP__VIDEO_CLOSE__INIT;
    dvppc_conn *c = ch->c;
    uint64_t id = ch->next++;
    cl_msg *m;
    bool acked = false;

    vc.channel = ch->channel;
    env.protocol = DVPPC_PROTOCOL;
    env.id = id;
    env.body_case = DVPP__ENVELOPE__BODY_VIDEO_CLOSE;
    env.video_close = &vc;
    /* the block has room: chan_send keeps its last id for this */
    if (dvppc__send(c, &env, NULL, 0, NULL) == 0) {
        while (!acked && chan_next(ch, -1, &m, NULL) == 0) {
            acked = m->env->id == id;
            if (m->env->body_case == DVPP__ENVELOPE__BODY_VIDEO_FRAME)
                frame_drop(c, m);
            else
                dvppc__msg_free(m);
        }
    }
    pthread_mutex_lock(&c->mu);
    dvppc__forget(c, ch->base);
    pthread_mutex_unlock(&c->mu);
}

/* --- decode --------------------------------------------------------------------- */

static void vdec_open_msg(const dvppc_vdec_opts *o, uint32_t ring, Dvpp__VideoOpen *vo)
{
    vo->encode = false;
    vo->ring = ring;
    if (!o)
        return;
    vo->spec = (char *)(o->spec ? o->spec : "");
    vo->format = (char *)(o->format ? o->format : "");
    vo->every = o->every;
    vo->fps = o->fps;
    vo->keyframes_only = o->keyframes_only;
    vo->start_s = o->start_s;
    vo->end_s = o->end_s;
    vo->max_frames = o->max_frames;
}

/* The stream in inline packets of at most max_inline bytes, the last one
 * marked eos (its id into *eos_id). */
static int send_inline(chan *ch, const uint8_t *data, size_t len, size_t chunk,
                       uint64_t *eos_id, dvppc_error *err)
{
    size_t off = 0;
    int st;

    do {
        Dvpp__VideoPacket p = DVPP__VIDEO_PACKET__INIT;
        size_t n = len - off < chunk ? len - off : chunk;

        p.data.data = (uint8_t *)(uintptr_t)(data + off);
        p.data.len = n;
        p.eos = off + n == len;
        st = chan_send(ch, &p, -1, eos_id, err);
        if (st)
            return st;
        off += n;
    } while (off < len);
    return 0;
}

/* The stream as one sealed memfd in one eos packet. */
static int send_memfd(chan *ch, const uint8_t *data, size_t len, uint64_t *eos_id,
                      dvppc_error *err)
{
    Dvpp__VideoPacket p = DVPP__VIDEO_PACKET__INIT;
    int fd = -1, e, st;

    e = ipc_memfd_from(data, len, "dvppc-video", &fd);
    if (e)
        return dvppc__fail(err, DVPPC_ESYS, "data", "memfd of %zu bytes: %s", len,
                           strerror(-e));
    p.data_fd = true;
    p.data_len = len;
    p.eos = true;
    st = chan_send(ch, &p, fd, eos_id, err);
    /* the daemon got its own reference with the packet */
    close(fd);
    return st;
}

static int send_stream(chan *ch, const uint8_t *data, size_t len, uint64_t *eos_id,
                       dvppc_error *err)
{
    size_t chunk = (size_t)ch->c->info.max_inline;

    /* len <= chunk * N, without the product (it may not fit size_t) */
    if (chunk && len / DVPPC_VIDEO_INLINE_PACKETS + (len % DVPPC_VIDEO_INLINE_PACKETS != 0) <=
                     chunk)
        return send_inline(ch, data, len, chunk, eos_id, err);
    return send_memfd(ch, data, len, eos_id, err);
}

/* Hand one frame to @fn (NULL: nobody wants it any more) and give its
 * slot back unless the callback keeps it. Takes @m. */
static int frame_deliver(dvppc_conn *c, cl_msg *m, dvppc_frame_fn fn, void *ctx,
                         dvppc_error *err)
{
    dvppc_frame f;
    int st, keep = 0;

    pthread_mutex_lock(&c->mu);
    st = dvppc__frame_fill(c, m, &f, err);
    pthread_mutex_unlock(&c->mu);
    if (!st && fn) {
        keep = fn(ctx, &f);
        if (keep < 0)
            st = dvppc__fail(err, keep, "fn", "the frame callback stopped the decode (%s)",
                             dvppc_status_name(keep));
    }
    if (keep != 1)
        dvppc_release(c, &f.result);
    return st;
}

/* Deliver the channel's frames until the answer to the eos packet
 * @eos_id. The first failure wins (only it fills @err); after it the
 * frames still coming are released unseen, so the channel ends clean. */
static int collect_frames(chan *ch, uint64_t eos_id, dvppc_frame_fn fn, void *ctx,
                          dvppc_error *err)
{
    int first = 0;

    for (;;) {
        dvppc_error *e = first ? NULL : err;
        const Dvpp__Envelope *env;
        bool last;
        cl_msg *m;
        int st = chan_next(ch, -1, &m, e);

        if (st)
            return first ? first : st; /* the transport: nothing more comes */
        env = m->env;
        if (env->body_case == DVPP__ENVELOPE__BODY_VIDEO_FRAME) {
            st = frame_deliver(ch->c, m, first ? NULL : fn, ctx, e);
            first = first ? first : st;
            continue;
        }
        /* the eos packet's Ack or Error, or an Error refusing a chunk */
        last = env->id == eos_id;
        st = dvppc__expect(m, DVPP__ENVELOPE__BODY_ACK, e);
        dvppc__msg_free(m);
        first = first ? first : st;
        if (last)
            return first;
    }
}

int dvppc_video_decode(dvppc_conn *c, const dvppc_vdec_opts *o, const void *data, size_t len,
                       dvppc_ring *ring, dvppc_frame_fn fn, void *ctx, dvppc_error *err)
{
    Dvpp__VideoOpen vo = DVPP__VIDEO_OPEN__INIT;
    uint64_t eos_id = 0;
    uint32_t rid;
    chan ch;
    int st;

    if (!c || !fn)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection or frame callback");
    if (!data || !len)
        return dvppc__fail(err, DVPPC_EINVAL, "data", "no stream bytes");
    if (!ring)
        return dvppc__fail(err, DVPPC_EINVAL, "ring", "decoded frames go into a ring");
    st = dvppc__ring_id(c, ring, &rid, err);
    if (st)
        return st;
    vdec_open_msg(o, rid, &vo);
    st = chan_open(c, &vo, &ch, err);
    if (st)
        return st;
    st = send_stream(&ch, data, len, &eos_id, err);
    if (!st)
        st = collect_frames(&ch, eos_id, fn, ctx, err);
    chan_close(&ch);
    return st;
}

/* --- encode --------------------------------------------------------------------- */

struct dvppc_venc {
    chan ch;                /* the encode channel */
    dvppc_buf_fn sink;      /* where the bytes go */
    void *ctx;              /* the sink's argument */
    size_t frame_bytes;     /* a frame's size, 0 when this side cannot tell */
    uint64_t window;        /* frames that may be waiting for their packet */
    uint64_t sent;          /* frames sent */
    uint64_t eos_id;        /* the eos packet's id once sent, else 0 */
    bool done;              /* the eos packet was answered */
    dvppc_venc_counts counts; /* as the last VideoData told */
    int failed;             /* the first failure: every later call returns it */
    dvppc_error ferr;       /* its detail */
};

/* Bytes of a tight frame of @fmt, 0 for a format this side does not know
 * (the daemon judges it) or a size past any limit. */
static size_t frame_size(const char *fmt, uint32_t w, uint32_t h)
{
    uint64_t px;

    if (__builtin_mul_overflow((uint64_t)w, (uint64_t)h, &px) || px > SIZE_MAX / 4)
        return 0;
    if (!fmt || !*fmt || !strcmp(fmt, "nv12") || !strcmp(fmt, "nv21") ||
        !strcmp(fmt, "i420"))
        return (size_t)(px * 3 / 2);
    if (!strcmp(fmt, "rgb") || !strcmp(fmt, "bgr"))
        return (size_t)(px * 3);
    return 0;
}

static void venc_open_msg(const dvppc_venc_opts *o, Dvpp__VideoOpen *vo)
{
    vo->encode = true;
    vo->codec = (char *)(o->codec ? o->codec : "");
    vo->width = o->width;
    vo->height = o->height;
    vo->fps_num = o->fps_num;
    vo->fps_den = o->fps_den;
    vo->gop = o->gop;
    vo->rc = (char *)(o->rc ? o->rc : "");
    vo->bitrate_kbps = o->bitrate_kbps;
    vo->crf = o->crf;
    vo->profile = (char *)(o->profile ? o->profile : "");
    vo->mp4 = o->mp4;
    vo->input_format = (char *)(o->input_format ? o->input_format : "");
}

static void venc_fail(dvppc_venc *v, int st, const dvppc_error *e)
{
    if (!v->failed) {
        v->failed = st;
        v->ferr = *e;
    }
}

static int venc_failed(const dvppc_venc *v, dvppc_error *err)
{
    if (err)
        *err = v->ferr;
    return v->failed;
}

/* Bytes to the sink (unless the encode failed already). */
static int venc_data(dvppc_venc *v, const Dvpp__VideoData *vd, dvppc_error *e)
{
    int r;

    v->counts.packets = vd->packets;
    v->counts.keyframes = vd->keyframes;
    if (v->failed || !vd->data.len)
        return 0;
    r = v->sink(v->ctx, vd->data.data, vd->data.len);
    if (r)
        return dvppc__fail(e, r < 0 ? r : DVPPC_ECANCELED, "sink",
                           "the sink stopped the encode (%d)", r);
    v->counts.bytes += vd->data.len;
    return 0;
}

/* One answer of the channel. Takes @m. */
static void venc_take(dvppc_venc *v, cl_msg *m)
{
    const Dvpp__Envelope *env = m->env;
    dvppc_error e;
    int st = 0;

    if (env->body_case == DVPP__ENVELOPE__BODY_VIDEO_DATA && env->video_data) {
        st = venc_data(v, env->video_data, &e);
    } else {
        /* an Ack (the eos packet's) or an Error refusing a packet */
        st = dvppc__expect(m, DVPP__ENVELOPE__BODY_ACK, &e);
        if (v->eos_id && env->id == v->eos_id)
            v->done = true;
    }
    if (st)
        venc_fail(v, st, &e);
    dvppc__msg_free(m);
}

/* Take one answer, waiting up to @timeout_ms: 1 when one came, 0 when
 * none did in time, the transport failure (now the encode's too). */
static int venc_pump(dvppc_venc *v, int timeout_ms)
{
    dvppc_error e;
    cl_msg *m;
    int st = chan_next(&v->ch, timeout_ms, &m, &e);

    if (st == DVPPC_ETIMEDOUT)
        return 0;
    if (st) {
        venc_fail(v, st, &e);
        return st;
    }
    venc_take(v, m);
    return 1;
}

/* Send one frame (@len bytes; 0 with @eos: the end of the stream). */
static int venc_send(dvppc_venc *v, const void *frame, size_t len, bool idr, bool eos,
                     dvppc_error *err)
{
    Dvpp__VideoPacket p = DVPP__VIDEO_PACKET__INIT;
    uint64_t id = 0;
    int fd = -1, st;

    p.pts = (int64_t)v->sent;
    p.force_idr = idr;
    p.eos = eos;
    if (len > v->ch.c->info.max_inline) {
        int e = ipc_memfd_from(frame, len, "dvppc-frame", &fd);
        if (e)
            return dvppc__fail(err, DVPPC_ESYS, "frame", "memfd of %zu bytes: %s", len,
                               strerror(-e));
        p.data_fd = true;
        p.data_len = len;
    } else if (len) {
        p.data.data = (uint8_t *)(uintptr_t)frame;
        p.data.len = len;
    }
    st = chan_send(&v->ch, &p, fd, &id, err);
    /* sealed memfds cannot be reused: one per frame, the daemon holds its own */
    if (fd >= 0)
        close(fd);
    if (!st && eos)
        v->eos_id = id;
    if (!st && len)
        v->sent++;
    return st;
}

int dvppc_video_encode_open(dvppc_conn *c, const dvppc_venc_opts *o, dvppc_buf_fn sink,
                            void *ctx, dvppc_venc **out, dvppc_error *err)
{
    Dvpp__VideoOpen vo = DVPP__VIDEO_OPEN__INIT;
    dvppc_venc *v;
    uint32_t half;
    int st;

    if (!out)
        return dvppc__fail(err, DVPPC_EINVAL, "out", "no place for the encoder");
    *out = NULL;
    if (!c || !o || !sink)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection, options or sink");
    v = calloc(1, sizeof(*v));
    if (!v)
        return dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for an encoder");
    v->sink = sink;
    v->ctx = ctx;
    v->frame_bytes = frame_size(o->input_format, o->width, o->height);
    /* half the daemon's in-flight jobs: room for the caller's other work */
    half = c->info.max_inflight / 2;
    v->window = half && half < DVPPC_VENC_WINDOW ? half : DVPPC_VENC_WINDOW;
    venc_open_msg(o, &vo);
    st = chan_open(c, &vo, &v->ch, err);
    if (st) {
        free(v);
        return st;
    }
    *out = v;
    return 0;
}

int dvppc_video_encode_frame(dvppc_venc *v, const void *frame, size_t len, bool force_idr,
                             dvppc_error *err)
{
    dvppc_error e;
    int st;

    if (!v || !frame || !len)
        return dvppc__fail(err, DVPPC_EINVAL, "frame", "no encoder or frame");
    if (v->frame_bytes && len != v->frame_bytes)
        return dvppc__fail(err, DVPPC_EINVAL, "frame",
                           "a frame of %zu bytes; the format and size need %zu", len,
                           v->frame_bytes);
    if (v->eos_id)
        return dvppc__fail(err, DVPPC_EINVAL, "frame", "the stream has ended");
    /* what came back meanwhile, without waiting */
    while (!v->failed && venc_pump(v, 0) > 0)
        ;
    /* frames beyond the window wait for packets, but only so long: the
     * encoder's look-ahead may hold more frames than the window */
    while (!v->failed && v->sent - (v->counts.packets < v->sent ? v->counts.packets : v->sent) >=
                             v->window)
        if (venc_pump(v, DVPPC_VENC_STALL_MS) == 0)
            break;
    if (v->failed)
        return venc_failed(v, err);
    st = venc_send(v, frame, len, force_idr, false, &e);
    if (st)
        venc_fail(v, st, &e);
    return st ? venc_failed(v, err) : 0;
}

/* End the stream (unless nothing was sent, or it ended already) and take
 * every answer up to the eos packet's. Also after a failure: the channel
 * is closed only once none of its jobs runs any more (a VideoClose that
 * overtakes a running job crashes dvppd 0.1.0). */
static void venc_flush(dvppc_venc *v)
{
    dvppc_error e;
    int st;

    if (!v->eos_id && (v->sent || !v->failed)) {
        st = venc_send(v, NULL, 0, false, true, &e);
        if (st)
            venc_fail(v, st, &e);
    }
    while (v->eos_id && !v->done && venc_pump(v, -1) >= 0)
        ;
}

int dvppc_video_encode_finish(dvppc_venc *v, dvppc_venc_counts *counts, dvppc_error *err)
{
    int st;

    if (counts)
        memset(counts, 0, sizeof(*counts));
    if (!v)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no encoder");
    venc_flush(v);
    if (counts)
        *counts = v->counts;
    st = venc_failed(v, err);
    chan_close(&v->ch);
    free(v);
    return st;
}

void dvppc_video_encode_close(dvppc_venc *v)
{
    dvppc_error e;

    if (!v)
        return;
    /* the bytes still coming go nowhere */
    venc_fail(v, dvppc__fail(&e, DVPPC_ECANCELED, NULL, "the encode was closed"), &e);
    if (v->sent)
        venc_flush(v);
    chan_close(&v->ch);
    free(v);
}

static bool is_idr(const uint32_t *idr, size_t nidr, size_t i)
{
    for (size_t k = 0; idr && k < nidr; k++)
        if (idr[k] == i)
            return true;
    return false;
}

int dvppc_video_encode(dvppc_conn *c, const dvppc_venc_opts *o, const void *const *frames,
                       size_t nframes, size_t frame_bytes, const uint32_t *idr, size_t nidr,
                       dvppc_buf_fn sink, void *ctx, dvppc_venc_counts *counts,
                       dvppc_error *err)
{
    dvppc_venc *v = NULL;
    int st;

    if (counts)
        memset(counts, 0, sizeof(*counts));
    if (!frames || !nframes)
        return dvppc__fail(err, DVPPC_EINVAL, "frames", "no frames");
    st = dvppc_video_encode_open(c, o, sink, ctx, &v, err);
    for (size_t i = 0; !st && i < nframes; i++)
        st = dvppc_video_encode_frame(v, frames[i], frame_bytes, is_idr(idr, nidr, i), err);
    if (st) {
        dvppc_video_encode_close(v);
        return st;
    }
    return dvppc_video_encode_finish(v, counts, err);
}
