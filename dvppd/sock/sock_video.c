/* sock_video: video channels of a connection. VideoOpen opens a decode
 * channel (a stream gathered packet by packet, decoded at eos into a ring:
 * sock_vdec.c) or an encode channel (raw frames in, encoded bytes out:
 * sock_venc.c); VideoPacket feeds it, VideoClose ends it once its jobs and
 * output are done. The channels and their budget are the socket thread's. */
#include "sock_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- channels ---------------------------------------------------------------------------- */

void sock_vout_free(dvppd_sock *s, vout *o)
{
    dvpp_buf_fini(&o->data);
    free(o);
    atomic_fetch_sub(&s->video_out, 1);
}

void sock_vchan_free(conn *c, vchan *ch)
{
    vchan **pp = &c->channels;

    while (*pp && *pp != ch)
        pp = &(*pp)->next;
    if (*pp)
        *pp = ch->next;
    while (ch->pending) {
        vout *o = ch->pending;
        ch->pending = o->next;
        sock_vout_free(c->s, o);
    }
    dvpp_stream_free(ch->ds);
    dvpp_venc_close(ch->enc);
    dvpp_buf_fini(&ch->out);
    dvpp_buf_fini(&ch->bytes);
    ipc_ring_unref(ch->ring);
    free(ch);
    c->nchannels--;
}

static vchan *find_channel(conn *c, uint64_t id)
{
    vchan *ch = c->channels;

    while (ch && (ch->id != id || ch->closing))
        ch = ch->next;
    return ch;
}

/* A channel whose last job finished and whose output went out after a
 * close goes now. */
void sock_vchan_settle(conn *c, vchan *ch)
{
    if (ch->closing && ch->busy == 0 && !ch->pending)
        sock_vchan_free(c, ch);
}

/* The video bytes @c's channels hold: streams being gathered for a decode,
 * MP4s being assembled, encoded bytes waiting to be sent. */
static uint64_t conn_video_bytes(const conn *c)
{
    uint64_t n = 0;

    for (const vchan *ch = c->channels; ch; ch = ch->next) {
        n += ch->bytes.len + ch->out_held;
        for (const vout *o = ch->pending; o; o = o->next)
            n += o->data.len - o->off;
    }
    return n;
}

static dvpp_status parse_decode_opts(const Dvpp__VideoOpen *m, dvpp_vdec_opts *o, dvpp_err *err)
{
    dvpp_vdec_opts_init(o);
    if (m->format[0] && (!dvpp_pixfmt_parse(m->format, &o->format) ||
                         (o->format != DVPP_PIXEL_NV12 && o->format != DVPP_PIXEL_NV21 &&
                          o->format != DVPP_PIXEL_RGB && o->format != DVPP_PIXEL_BGR)))
        return dvpp_err_set(err, DVPP_EINVAL, "format", "frames are nv12, nv21, rgb or bgr");
    if (m->fps < 0 || m->start_s < 0 || m->end_s < 0 || !isfinite(m->fps) ||
        !isfinite(m->start_s) || !isfinite(m->end_s))
        return dvpp_err_set(err, DVPP_EINVAL, "fps", "bad sampling values");
    o->every = m->every ? m->every : 1;
    o->fps = m->fps;
    o->keyframes_only = m->keyframes_only;
    o->start_s = m->start_s;
    o->end_s = m->end_s;
    o->max_frames = m->max_frames;
    return DVPP_OK;
}

static dvpp_status parse_encode_opts(const Dvpp__VideoOpen *m, vchan *ch, dvpp_err *err)
{
    dvpp_venc_opts *o = &ch->eo;

    dvpp_venc_opts_init(o);
    if (m->codec[0] && !dvpp_video_codec_parse(m->codec, &o->codec))
        return dvpp_err_set(err, DVPP_EINVAL, "codec", "codec h264 or h265");
    if (m->rc[0] && !dvpp_venc_rc_parse(m->rc, &o->rc))
        return dvpp_err_set(err, DVPP_EINVAL, "rc", "rc crf, cbr or vbr");
    ch->infmt = DVPP_PIXEL_NV12;
    if (m->input_format[0] && !dvpp_pixfmt_parse(m->input_format, &ch->infmt))
        return dvpp_err_set(err, DVPP_EINVAL, "input_format", "unknown pixel format");
    if (strlen(m->profile) >= sizeof(o->profile))
        return dvpp_err_set(err, DVPP_EINVAL, "profile", "profile name too long");
    o->width = m->width, o->height = m->height;
    if (m->fps_num)
        o->fps_num = m->fps_num, o->fps_den = m->fps_den ? m->fps_den : 1;
    if (m->gop)
        o->gop = m->gop;
    if (m->bitrate_kbps)
        o->bitrate_kbps = m->bitrate_kbps;
    if (m->crf)
        o->crf = m->crf;
    memcpy(o->profile, m->profile, strlen(m->profile) + 1);
    o->container = m->mp4 ? DVPP_VENC_MP4 : DVPP_VENC_ANNEXB;
    if (o->width < 16 || o->height < 16 || o->width > 8192 || o->height > 8192 ||
        (o->width & 1) || (o->height & 1))
        return dvpp_err_set(err, DVPP_EINVAL, "width", "frames of even sides in 16..8192");
    return DVPP_OK;
}

static void send_opened(conn *c, uint64_t id, uint64_t channel)
{
    Dvpp__Envelope e;
    Dvpp__VideoOpened vo;

    sock_envelope_init(&e, id);
    dvpp__video_opened__init(&vo);
    vo.channel = channel;
    e.body_case = DVPP__ENVELOPE__BODY_VIDEO_OPENED;
    e.video_opened = &vo;
    sock_send_env(c, &e, NULL, 0);
}

/* The decode side of a VideoOpen: its options, its ring, its pipeline. */
static dvpp_status open_decode(conn *c, vchan *ch, const Dvpp__VideoOpen *m, dvpp_err *err)
{
    dvpp_status st = parse_decode_opts(m, &ch->vdec, err);
    ipc_ring *r = st == DVPP_OK ? sock_conn_ring(c, m->ring) : NULL;

    if (st != DVPP_OK)
        return st;
    if (!r)
        return dvpp_err_set(err, DVPP_ENOTFOUND, "ring", "decoded frames go into a ring of "
                            "this connection");
    ch->ring = r;
    ipc_ring_ref(r);
    ch->ring_id = m->ring;
    ch->lease_timeout_ms = c->s->set->cfg.sock.lease_timeout_ms;
    ch->deadline_ms = m->deadline_ms;
    if (!m->spec[0])
        return DVPP_OK;
    {
        dvppd_spec_env env = {DVPPD_SPEC_TENSOR, dvppd_aipp_find, (void *)&c->s->set->aipp,
                              NULL, 0, dvppd_preset_find, (void *)&c->s->set->presets};
        st = dvppd_spec_from_json(&env, m->spec, strlen(m->spec), &ch->spec, err);
    }
    ch->spec.pipe.input = DVPP_PIPE_IN_RAW;
    ch->spec.pipe.raw = (dvpp_pipe_raw){ch->vdec.format, 16, 16, 0, 0};
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&ch->spec.pipe, &c->s->set->cfg.limits, err);
    ch->has_pipe = true;
    return st;
}

void sock_on_video_open(conn *c, uint64_t id, const Dvpp__VideoOpen *m)
{
    const dvppd_sock_config *lim = &c->s->set->cfg.sock;
    vchan *ch = calloc(1, sizeof(*ch));
    dvpp_err err;
    dvpp_status st = DVPP_OK;

    dvpp_err_clear(&err);
    if (!ch) {
        sock_send_error(c, id, DVPP_ENOMEM, NULL, "video channel");
        return;
    }
    if (atomic_load(&c->s->draining))
        st = dvpp_err_set(&err, DVPP_ECANCELED, NULL, "the daemon is stopping");
    else if (c->nchannels >= lim->max_video_channels)
        st = dvpp_err_set(&err, DVPP_ELIMIT, "max_video_channels", "%u video channels are "
                          "open on this connection (socket.max_video_channels)",
                          c->nchannels);
    else if (m->encode)
        st = parse_encode_opts(m, ch, &err);
    else
        st = open_decode(c, ch, m, &err);
    if (st == DVPP_OK && m->encode)
        st = dvpp_stream_new(c->s->device, 0, &ch->ds, &err);
    if (st != DVPP_OK) {
        ipc_ring_unref(ch->ring);
        dvpp_stream_free(ch->ds);
        free(ch);
        sock_send_err(c, id, &err);
        return;
    }
    ch->id = ++c->next_channel;
    ch->open_id = id;
    ch->encode = m->encode;
    dvpp_buf_init(&ch->bytes);
    dvpp_buf_init(&ch->out);
    ch->next = c->channels;
    c->channels = ch;
    c->nchannels++;
    send_opened(c, id, ch->id);
}

/* --- packets ------------------------------------------------------------------------------- */

void sock_video_answer(sjob *j)
{
    conn *c = j->c;

    if (j->type == JOB_VENC)
        sock_venc_queue(c, j);
    else if (j->status != DVPP_OK)
        sock_send_err(c, j->id, &j->err);
    else
        sock_send_ack(c, j->id);
}

/* The packet's bytes: inline, or its sealed memfd mapped for the job. */
static dvpp_status packet_bytes(sjob *j, const Dvpp__VideoPacket *m, const int *fds,
                                dvpp_err *err)
{
    if (!m->data_fd) {
        j->in = m->data.data;
        j->in_len = m->data.len;
        return DVPP_OK;
    }
    return sock_map_job_input(j, fds[0], m->data_len, err); /* one fd: checked */
}

/* The connection's video bytes may not pass socket.max_video_buffer_bytes. */
static dvpp_status video_budget(conn *c, uint64_t more, dvpp_err *err)
{
    uint64_t held = conn_video_bytes(c), cap = c->s->set->cfg.sock.max_video_buffer_bytes;

    if (held + more > cap)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_video_buffer_bytes", "this connection's "
                            "video channels hold %llu bytes, %llu more would pass "
                            "socket.max_video_buffer_bytes (%llu)", (unsigned long long)held,
                            (unsigned long long)more, (unsigned long long)cap);
    return DVPP_OK;
}

static dvpp_status video_packet(conn *c, sjob *j, vchan *ch, const Dvpp__VideoPacket *m,
                                const int *fds, dvpp_err *err)
{
    dvpp_status st = packet_bytes(j, m, fds, err);

    j->vc = ch;
    j->eos = m->eos;
    j->force_idr = m->force_idr;
    if (st != DVPP_OK)
        return st;
    if (ch->encode) {
        st = video_budget(c, j->in_len, err); /* a frame adds at most about its size */
        return st == DVPP_OK ? sock_venc_submit(j, err) : st;
    }
    if (ch->busy)
        return dvpp_err_set(err, DVPP_EBUSY, "channel", "the stream is being decoded");
    if (ch->bytes.len + j->in_len > c->s->set->cfg.limits.max_video_bytes)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_video_bytes", "the stream passes "
                            "max_video_bytes (%llu)",
                            (unsigned long long)c->s->set->cfg.limits.max_video_bytes);
    st = video_budget(c, j->in_len, err);
    if (st != DVPP_OK)
        return st;
    if (j->in_len && dvpp_buf_append(&ch->bytes, j->in, j->in_len) != DVPP_OK)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "stream buffer");
    sock_unmap_inputs(j);
    if (!m->eos)
        return DVPP_EBUSY; /* kept; nothing to run yet (not an error) */
    st = sock_stream_take(c, &j->own_stream, err);
    return st == DVPP_OK ? sock_vdec_start(c, j, ch, err) : st;
}

void sock_on_video_packet(conn *c, Dvpp__Envelope *env, const int *fds, int nfds)
{
    const Dvpp__VideoPacket *m = env->video_packet;
    uint64_t id = env->id;
    vchan *ch = find_channel(c, m->channel);
    dvpp_status st = DVPP_OK;
    dvpp_err err;
    sjob *j;

    if (!sock_fds_match(c, env, nfds, m->data_fd ? 1 : 0,
                        "the packet's fds do not match VideoPacket.data_fd"))
        return;
    dvpp_err_clear(&err);
    if (!ch)
        st = dvpp_err_set(&err, DVPP_ENOTFOUND, "channel", "no such video channel");
    j = sock_job_admit(c, ch && ch->encode ? JOB_VENC : JOB_VDEC, env, "video job", &st, &err);
    if (j)
        st = video_packet(c, j, ch, m, fds, &err);
    if (st == DVPP_EBUSY && err.status == DVPP_OK) { /* a chunk kept for later */
        sock_job_free(j);
        return;
    }
    if (st != DVPP_OK) {
        sock_send_err(c, id, &err);
        if (j)
            sock_job_free(j);
        return;
    }
    ch->busy++;
    sock_job_started(c);
}

void sock_on_video_close(conn *c, uint64_t id, uint64_t channel)
{
    vchan *ch = find_channel(c, channel);

    if (!ch) {
        sock_send_error(c, id, DVPP_ENOTFOUND, "channel", "no such video channel");
        return;
    }
    ch->closing = true;
    sock_vchan_settle(c, ch);
    sock_send_ack(c, id);
}

void sock_video_job_end(sjob *j)
{
    vchan *ch = j->vc;
    conn *c = j->c; /* sock_job_free may drop the last reference but the list's */

    ch->busy--;
    if (j->type == JOB_VDEC) { /* the next stream starts afresh */
        dvpp_buf_fini(&ch->bytes);
        dvpp_buf_init(&ch->bytes);
    }
    sock_job_free(j);
    sock_vchan_settle(c, ch);
}
