/* sock_venc: an encode channel's frames, each a job on the channel's
 * ordered stream (a VPC worker runs the encoder), and its output: the
 * encoded bytes go out as VideoData packets while the connection's queue
 * is short (VIDEO_PUMP_BYTES), so an MP4 of any size leaves at the
 * reader's pace. The jobs touch only their channel's encoder; the output
 * is the socket thread's. */
#include "sock_int.h"

#include <stdlib.h>

/* Encoded video is queued to send while fewer bytes than this wait: a
 * large MP4 goes out at the reader's pace, far below SOCK_OUTQ_MAX_BYTES. */
#define VIDEO_PUMP_BYTES (4u << 20)

/* --- the jobs ------------------------------------------------------------------------------- */

static dvpp_status venc_fn(dvpp_task *task, void *ctx, void *worker_state, dvpp_err *err)
{
    sjob *j = ctx;
    vchan *ch = j->vc;
    dvpp_status st = DVPP_OK;

    (void)task, (void)worker_state;
    if (!ch->enc)
        st = dvpp_venc_open(&ch->eo, &ch->out, &ch->enc, err);
    if (st == DVPP_OK && j->in_len) {
        dvpp_image img;
        st = dvpp_image_init(&img, ch->infmt, ch->eo.width, ch->eo.height, 1, 1, err);
        img.data = (uint8_t *)(uintptr_t)j->in;
        img.size = j->in_len;
        if (st == DVPP_OK)
            st = dvpp_image_planes(&img, &(dvpp_planes){0}, err);
        if (st == DVPP_OK)
            st = dvpp_venc_frame(ch->enc, &img, j->force_idr, err);
    }
    if (st == DVPP_OK && j->eos)
        st = dvpp_venc_finish(ch->enc, err);
    if (st == DVPP_OK && ch->enc)
        j->frames = dvpp_venc_packets(ch->enc, &j->keyframes);
    /* Annex-B leaves as it is made; an MP4 is whole only at the end. The
     * bytes move to the job (no copy); the encoder appends to ch->out. */
    if (st == DVPP_OK && (ch->eo.container == DVPP_VENC_ANNEXB || j->eos) && ch->out.len) {
        st = dvpp_buf_append(&j->vdata, ch->out.data, ch->out.len);
        ch->out.len = 0;
    }
    j->held = ch->out.len; /* read here: the channel's next frame may run at once */
    return st;
}

static void venc_job_done(void *ctx, uint64_t ticket, dvpp_status st, const dvpp_err *err)
{
    (void)ticket;
    sock_job_done(ctx, st, err);
}

dvpp_status sock_venc_submit(sjob *j, dvpp_err *err)
{
    dvpp_job job = {.engine = DVPP_BATCHJOB_ENGINE, .fn = venc_fn, .done = venc_job_done,
                    .ctx = j, .pixels = 1, .bytes = 0};

    return dvpp_device_submit(j->vc->ds, &job, NULL, err);
}

/* --- the output ---------------------------------------------------------------------------- */

/* Queue what @ch has to send as the output drains: VideoData packets of at
 * most max_inline bytes while fewer than VIDEO_PUMP_BYTES wait in the
 * connection's queue, then each packet's answer. */
static void vchan_pump(conn *c, vchan *ch)
{
    size_t chunk = c->s->cfg.max_inline;

    while (ch->pending && !c->closed) {
        vout *o = ch->pending;
        while (o->data_msg) {
            Dvpp__Envelope e;
            Dvpp__VideoData vd;
            size_t n = o->data.len - o->off < chunk ? o->data.len - o->off : chunk;
            if (c->closed || sock_outq_bytes(c) >= VIDEO_PUMP_BYTES)
                return; /* sock_flush_outq calls again once the reader took some */
            sock_envelope_init(&e, ch->open_id);
            dvpp__video_data__init(&vd);
            vd.channel = ch->id;
            vd.data.data = o->data.data ? o->data.data + o->off : NULL;
            vd.data.len = n;
            vd.eos = o->eos && o->off + n == o->data.len;
            vd.packets = o->packets;
            vd.keyframes = o->keyframes;
            e.body_case = DVPP__ENVELOPE__BODY_VIDEO_DATA;
            e.video_data = &vd;
            sock_send_env(c, &e, NULL, 0);
            o->off += n;
            o->data_msg = o->off < o->data.len;
        }
        if (c->closed)
            return;
        if (o->answer_id && o->ack)
            sock_send_ack(c, o->answer_id);
        else if (o->answer_id)
            sock_send_err(c, o->answer_id, &o->err);
        ch->pending = o->next;
        if (!ch->pending)
            ch->pending_tail = NULL;
        sock_vout_free(c->s, o);
    }
}

/* Every channel's output, as far as the queue allows; channels closed and
 * done go. */
void sock_video_pump(conn *c)
{
    for (vchan *ch = c->channels, *next; ch && !c->closed; ch = next) {
        next = ch->next;
        if (ch->pending) {
            vchan_pump(c, ch);
            sock_vchan_settle(c, ch);
        }
    }
}

/* A finished encode job's bytes and answer join the channel's output. */
void sock_venc_queue(conn *c, sjob *j)
{
    vchan *ch = j->vc;
    vout *o = calloc(1, sizeof(*o));

    if (!o) {
        sock_conn_close(c, "out of memory");
        return;
    }
    atomic_fetch_add(&c->s->video_out, 1);
    o->data = j->vdata; /* moved */
    dvpp_buf_init(&j->vdata);
    /* Every frame is answered with a VideoData, empty while the encoder
     * holds its bytes (an MP4 until eos, look-ahead): its packet count is
     * what a client paces its frames by. */
    o->data_msg = j->status == DVPP_OK;
    o->eos = j->eos;
    o->packets = j->frames;
    o->keyframes = j->keyframes;
    o->answer_id = j->status != DVPP_OK || j->eos ? j->id : 0;
    o->ack = j->status == DVPP_OK;
    o->err = j->err;
    if (ch->pending_tail)
        ch->pending_tail->next = o;
    else
        ch->pending = o;
    ch->pending_tail = o;
    ch->out_held = j->held;
    vchan_pump(c, ch);
}
