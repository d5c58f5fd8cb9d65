/* sock_vdec: the decode of a video channel's gathered stream, on a thread
 * of its own, frame by frame into the channel's ring (each frame a
 * VideoFrame notice to the client). */
#include "sock_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/dvpp_pipe_async.h"

/* A socket decode runs on a thread of its own, so that its decoder (whose
 * state lives on that thread's stack) can wait for ring slots without
 * holding a VPC worker: it decodes only while it holds a baton, a device
 * job on the VPC engine whose function lends the decode its worker (and
 * the worker's dvpp_worker) and waits until the decode hands it back.
 * With no free slot the decode hands the baton back, waits on the ring
 * for a release (or an expired lease), and queues a new baton behind the
 * work that came meanwhile: HTTP requests are served while a consumer
 * sits on its slots. The whole decode obeys a deadline (VideoOpen's
 * deadline_ms, at most socket.video_deadline_ms), so a consumer that never
 * releases ends it with ETIMEDOUT. */
typedef enum baton_state {
    BATON_NONE,                  /* not asked for */
    BATON_QUEUED,                /* submitted, not running yet */
    BATON_HELD,                  /* its function runs: the worker is lent */
    BATON_DONE,                  /* completed (handed back, or ended unrun) */
} baton_state;

struct vdecode {
    pthread_t thread;
    bool started;                /* the thread runs: joined by job_free */
    pthread_mutex_t mu;          /* the baton's fields */
    pthread_cond_t cv;
    baton_state baton;
    bool give_back;              /* the decode is done with the worker */
    dvpp_status result;          /* what the baton given back returns: the
                                    decode's status at its end (the VPC
                                    engine counts a failed decode), else OK */
    dvpp_err result_err;
    dvpp_task *task;             /* the held baton's task */
    dvpp_worker *w;              /* the held baton's worker state */
    dvpp_status unrun;           /* a baton that ended without running: why */
    dvpp_err unrun_err;
    uint64_t deadline_ns;
    uint32_t deadline_ms;        /* as given, for messages */
    dvpp_limits lim;             /* the first worker's, for the whole decode */
    bool have_lim;
};

static dvpp_status baton_fn(dvpp_task *task, void *ctx, void *worker_state, dvpp_err *err)
{
    vdecode *vd = ctx;
    dvpp_status st;

    pthread_mutex_lock(&vd->mu);
    vd->task = task;
    vd->w = worker_state;
    vd->baton = BATON_HELD;
    pthread_cond_broadcast(&vd->cv);
    while (!vd->give_back) /* the decode polls the task for cancellation */
        pthread_cond_wait(&vd->cv, &vd->mu);
    vd->give_back = false;
    vd->task = NULL;
    vd->w = NULL;
    st = vd->result;
    if (st != DVPP_OK)
        *err = vd->result_err;
    pthread_mutex_unlock(&vd->mu);
    return st;
}

/* The device's last touch of the baton (its function ran or not). */
static void baton_done(void *ctx, uint64_t ticket, dvpp_status st, const dvpp_err *err)
{
    vdecode *vd = ctx;

    (void)ticket;
    pthread_mutex_lock(&vd->mu);
    if (vd->baton == BATON_QUEUED) { /* canceled, or past the deadline, unrun */
        vd->unrun = st != DVPP_OK ? st : DVPP_ECANCELED;
        if (err)
            vd->unrun_err = *err;
        else
            dvpp_err_clear(&vd->unrun_err);
    }
    vd->baton = BATON_DONE;
    pthread_cond_broadcast(&vd->cv);
    pthread_mutex_unlock(&vd->mu);
}

/* Why the decode must stop now (the daemon stopping, its deadline), or
 * DVPP_OK. */
static dvpp_status decode_stopping(sjob *j, dvpp_err *err)
{
    if (atomic_load(&j->c->s->video_cancel))
        return dvpp_err_set(err, DVPP_ECANCELED, NULL, "the daemon is stopping");
    if (dvpp_now_ns() >= j->vd->deadline_ns)
        return dvpp_err_set(err, DVPP_ETIMEDOUT, "deadline_ms", "the decode passed its "
                            "deadline of %u ms after %llu frames (release slots sooner, or "
                            "set VideoOpen.deadline_ms)", j->vd->deadline_ms,
                            (unsigned long long)j->frames);
    return DVPP_OK;
}

/* Hand the worker back (if held) with @st (@err, may be NULL when @st is
 * DVPP_OK) as what its baton returns, so the engine counts the decode as
 * it went, and wait until the device is done with the baton. */
static void baton_end(vdecode *vd, dvpp_status st, const dvpp_err *err)
{
    pthread_mutex_lock(&vd->mu);
    if (vd->baton == BATON_HELD) {
        vd->result = st;
        if (err)
            vd->result_err = *err;
        vd->give_back = true;
        pthread_cond_broadcast(&vd->cv);
    }
    while (vd->baton == BATON_HELD || vd->baton == BATON_QUEUED)
        pthread_cond_wait(&vd->cv, &vd->mu);
    vd->baton = BATON_NONE;
    pthread_mutex_unlock(&vd->mu);
}

/* Hand the worker back for a while (a full ring): its baton returns OK. */
static void baton_give(vdecode *vd)
{
    baton_end(vd, DVPP_OK, NULL);
}

/* Queue a baton on the job's stream and wait until its function runs:
 * the worker is the decode's until baton_give. */
static dvpp_status baton_take(sjob *j, dvpp_err *err)
{
    struct timespec pause = {0, 5 * 1000 * 1000};
    vdecode *vd = j->vd;
    dvpp_job job = {.engine = DVPP_BATCHJOB_ENGINE, .fn = baton_fn, .done = baton_done,
                    .ctx = vd, .pixels = 1, .bytes = 0, .deadline_ns = vd->deadline_ns};
    dvpp_status st;

    for (;;) {
        st = decode_stopping(j, err);
        if (st != DVPP_OK)
            return st;
        pthread_mutex_lock(&vd->mu);
        vd->baton = BATON_QUEUED;
        pthread_mutex_unlock(&vd->mu);
        st = dvpp_device_submit(j->own_stream, &job, NULL, err);
        if (st == DVPP_OK)
            break;
        pthread_mutex_lock(&vd->mu);
        vd->baton = BATON_NONE;
        pthread_mutex_unlock(&vd->mu);
        if (st != DVPP_EAGAIN) /* a full queue or budget empties: try again */
            return st;
        dvpp_err_clear(err);
        nanosleep(&pause, NULL);
    }
    pthread_mutex_lock(&vd->mu);
    while (vd->baton == BATON_QUEUED)
        pthread_cond_wait(&vd->cv, &vd->mu);
    st = vd->baton == BATON_HELD ? DVPP_OK : vd->unrun;
    if (st != DVPP_OK)
        *err = vd->unrun_err, err->status = st;
    pthread_mutex_unlock(&vd->mu);
    if (st == DVPP_OK && !vd->w) {
        baton_give(vd);
        return dvpp_err_set(err, DVPP_EINVAL, "device", "not a pipeline device");
    }
    if (st == DVPP_OK && !vd->have_lim) {
        vd->lim = *dvpp_worker_limits(vd->w); /* the worker is ours: its thread waits */
        vd->have_lim = true;
    }
    return st;
}

typedef struct vdec_run {
    sjob *j;
    dvpp_worker *w;              /* the held baton's */
    dvpp_pipeline pipe;          /* the channel's, the frame as its raw input */
    dvpp_err stop;               /* why the check stopped the decoder */
    /* Overlapped (the device had channels free at the start): frame t's
     * pipeline runs on @helper into its slot while frame t + 1 is decoded;
     * its notice is posted once it is collected, so notices keep the
     * frames' order. */
    dvpp_pipe_async *helper;
    sjob *pending;               /* the frame the helper runs, its slot taken */
    uint32_t pending_slot;
    dvpp_status late;            /* the last frame's failure, found after the
                                    decoder's last sink call */
    dvpp_err late_err;
} vdec_run;

/* A free slot of the channel's ring. With none, the worker goes back
 * while the decode waits for a release (frames are never dropped), then a
 * baton is queued again. */
static dvpp_status take_slot(vdec_run *v, uint32_t *slot, dvpp_err *err)
{
    sjob *j = v->j;
    ipc_ring *r = j->vc->ring;

    for (;;) {
        int rc = ipc_ring_acquire(r, slot);
        dvpp_status st;
        if (rc == 0)
            return DVPP_OK;
        if (rc == -EPIPE)
            return dvpp_err_set(err, DVPP_ECANCELED, "ring", "the ring was closed");
        baton_give(j->vd);
        v->w = NULL;
        do {
            st = decode_stopping(j, err);
            if (st != DVPP_OK)
                return st;
            rc = ipc_ring_wait_free(r, SOCK_TICK_MS);
        } while (rc == -ETIMEDOUT);
        if (rc == -EPIPE)
            return dvpp_err_set(err, DVPP_ECANCELED, "ring", "the ring was closed");
        st = baton_take(j, err);
        if (st != DVPP_OK)
            return st;
        v->w = j->vd->w;
    }
}

/* Frame @f's output (@what, @bytes) does not fit a slot of the channel's
 * ring (@cap bytes): refused before anything is written. */
static dvpp_status too_big(const vdec_run *v, const dvpp_vframe *f, const char *what,
                           size_t bytes, uint64_t cap, dvpp_err *err)
{
    return dvpp_err_set(err, DVPP_ENOSPC, "ring", "frame %llu (%ux%u) %s %zu bytes where a "
                        "slot of ring %u holds %llu: open the ring with larger slots",
                        (unsigned long long)v->j->frames, f->image->width, f->image->height,
                        what, bytes, v->j->vc->ring_id, (unsigned long long)cap);
}

/* The tensor the channel's pipeline makes of frame @f (@len bytes), planned
 * for this frame alone: probed as raw input, so every op's image is held
 * to the limits. */
static dvpp_status plan_frame(vdec_run *v, const dvpp_vframe *f, size_t len, dvpp_tensor *t,
                              dvpp_err *err)
{
    const dvpp_image *img = f->image;
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    dvpp_status st;

    v->pipe.raw = (dvpp_pipe_raw){img->format, img->width, img->height, img->width_stride,
                                  img->height_stride};
    st = dvpp_pipeline_probe(&v->pipe, img->data, len, &v->j->vd->lim, &src, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(&v->pipe, &src, &plan, err);
    if (st == DVPP_OK)
        st = dvpp_tensor_init(t, plan.dtype, plan.layout, 1, plan.c, plan.h, plan.w, err);
    return st;
}

/* Frame @f's pipeline output is in @n's slot (n->out.geom its geometry):
 * the slot's descriptor, and the frame's size for its VideoFrame. */
static void slot_done(sjob *n, const dvpp_vframe *f)
{
    dvppd_slot_meta_tensor(&n->meta, &n->out.tensor, &n->out.geom);
    n->out.image = *f->image;
    n->out.image.data = NULL;
}

/* Write frame @f into @slot: its pixels, or the pipeline's output. Every
 * frame is its own slot with its own descriptor, so each is planned on its
 * own: a stream whose resolution changes is delivered, every frame with
 * its own shape (its pixels, or the tensor its own plan makes) and
 * geometry. (A batch of one shape, HTTP's and dvppctl's, refuses such a
 * stream instead: dvpp_video_shape.) */
static dvpp_status fill_slot(vdec_run *v, const dvpp_vframe *f, uint32_t slot,
                             sjob *n, dvpp_err *err)
{
    vchan *ch = v->j->vc;
    uint8_t *dst = ipc_ring_payload(ch->ring, slot);
    uint64_t cap = ipc_ring_slot_bytes(ch->ring);
    dvpp_tensor t;
    dvpp_planes pl;
    dvpp_status st = dvpp_image_planes(f->image, &pl, err);

    if (st != DVPP_OK)
        return st;
    if (!ch->has_pipe) {
        if (pl.total > cap)
            return too_big(v, f, "has", pl.total, cap, err);
        memcpy(dst, f->image->data, pl.total);
        n->out.image = *f->image;
        n->out.image.data = NULL;
        n->meta = (ipc_slot_meta){DVPP_RING_DTYPE_U8, DVPP_RING_LAYOUT_IMAGE, 1,
                                  {(int64_t)pl.total}, pl.total, 1, 1, 0, 0};
        return DVPP_OK;
    }
    st = plan_frame(v, f, pl.total, &t, err);
    if (st != DVPP_OK)
        return dvpp_err_frame(err, st, v->j->frames);
    if (t.bytes > cap)
        return too_big(v, f, "makes a tensor of", t.bytes, cap, err);
    memset(&n->out, 0, sizeof(n->out));
    n->out.tensor = t;
    n->out.tensor.data = dst;
    if (v->helper)
        return dvpp_pipe_async_give(v->helper, v->w, &v->pipe, f->image->data, pl.total,
                                    &n->out, v->j->frames, err);
    st = dvpp_pipeline_run_frame(v->w, &v->pipe, f->image->data, pl.total, &n->out,
                                 v->j->frames, err);
    if (st != DVPP_OK)
        return st;
    slot_done(n, f);
    return DVPP_OK;
}

/* Frame @n in @slot is written (@st: or failed): lease the slot and post
 * its notice, or give the slot back. */
static dvpp_status post_frame(vdec_run *v, sjob *n, uint32_t slot, dvpp_status st,
                              dvpp_err *err)
{
    sjob *j = v->j;

    if (st == DVPP_OK &&
        ipc_ring_lease(j->vc->ring, slot, &n->meta,
                       sock_now_ms() + j->vc->lease_timeout_ms, &n->generation) != 0)
        st = dvpp_err_set(err, DVPP_ECANCELED, "ring", "the ring was closed");
    else if (st != DVPP_OK)
        ipc_ring_abort(j->vc->ring, slot);
    if (st != DVPP_OK) {
        sock_job_free(n);
        return st;
    }
    n->vc = j->vc;
    n->ring = j->vc->ring;
    ipc_ring_ref(n->ring);
    n->ring_id = j->vc->ring_id;
    n->slot = slot;
    n->has_slot = false;
    n->spec.pipe.output = j->vc->has_pipe ? DVPP_PIPE_OUT_TENSOR : DVPP_PIPE_OUT_IMAGE;
    j->frames++;
    sock_post_done(j->c->s, n, true);
    return DVPP_OK;
}

/* The frame the helper runs, collected and posted (before the next frame
 * takes a slot: taking one may hand the worker, whose aux buffers the
 * helper uses, back). */
static dvpp_status finish_pending(vdec_run *v, dvpp_err *err)
{
    sjob *n = v->pending;
    dvpp_status st;

    if (!n)
        return DVPP_OK;
    v->pending = NULL;
    st = dvpp_pipe_async_collect(v->helper, &n->out.geom, NULL, err);
    if (st == DVPP_OK)
        dvppd_slot_meta_tensor(&n->meta, &n->out.tensor, &n->out.geom);
    return post_frame(v, n, v->pending_slot, st, err);
}

/* The decoder is done with its frames (dvpp_vdec_opts.hold_end). */
static void vdec_hold_end(void *ctx)
{
    vdec_run *v = ctx;

    v->late = finish_pending(v, &v->late_err);
}

static dvpp_status vdec_sink(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    vdec_run *v = ctx;
    sjob *j = v->j, *n;
    uint32_t slot = 0;
    dvpp_status st = finish_pending(v, err);

    if (st == DVPP_OK)
        st = take_slot(v, &slot, err);
    if (st != DVPP_OK)
        return st;
    n = sock_job_new(j->c, JOB_VFRAME, j->vc->open_id, NULL);
    if (!n) {
        ipc_ring_abort(j->vc->ring, slot);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "frame notice");
    }
    st = fill_slot(v, f, slot, n, err);
    n->vf = *f;
    n->vf.image = NULL;
    if (st == DVPP_OK && v->helper && j->vc->has_pipe) {
        n->out.image = *f->image; /* the frame's size, for its VideoFrame */
        n->out.image.data = NULL;
        v->pending = n;
        v->pending_slot = slot;
        return DVPP_OK;
    }
    return post_frame(v, n, slot, st, err);
}

/* Polled per decoded frame (the baton is held then): a canceled worker, a
 * stopping daemon or the deadline ends the decode. */
static dvpp_status vdec_check(void *ctx)
{
    vdec_run *v = ctx;

    if (v->j->vd->task && dvpp_task_canceled(v->j->vd->task))
        return dvpp_err_set(&v->stop, DVPP_ECANCELED, NULL, "the decode was canceled");
    return decode_stopping(v->j, &v->stop);
}

/* The decode thread: the whole stream, frame by frame into the ring. */
static void *vdec_main(void *arg)
{
    sjob *j = arg;
    vchan *ch = j->vc;
    vdec_run v = {.j = j};
    dvpp_vdec_opts opts;
    dvpp_err err;
    dvpp_status st;

    dvpp_err_clear(&err);
    dvpp_err_clear(&v.stop);
    st = baton_take(j, &err);
    if (st == DVPP_OK) {
        v.w = j->vd->w;
        if (ch->has_pipe)
            v.pipe = ch->spec.pipe;
        opts = ch->vdec;
        opts.check = vdec_check;
        opts.check_ctx = &v;
        opts.direct_i420 = ch->has_pipe && dvpp_video_pipe_reads_pixels(&v.pipe, opts.format);
        if (dvpp_video_spread(&opts, ch->has_pipe, dvpp_task_idle_channels(j->vd->task)))
            st = dvpp_pipe_async_start(&v.helper, &err);
        if (v.helper) {
            opts.hold_one = true;
            opts.hold_end = vdec_hold_end;
        }
        if (st == DVPP_OK)
            st = dvpp_video_decode(ch->bytes.data, ch->bytes.len, &opts, &j->vd->lim,
                                   vdec_sink, &v, NULL, &err);
        if (st != DVPP_OK && v.stop.status == st)
            err = v.stop; /* the check's own words */
        if (st == DVPP_OK && v.late != DVPP_OK)
            st = v.late, err = v.late_err;
        st = dvpp_pipe_async_stop(v.helper, st, &err);
    }
    if (st != DVPP_OK)
        err.status = st;
    baton_end(j->vd, st, &err);
    sock_job_done(j, st, &err); /* the last touch of @j on this thread */
    return NULL;
}

/* Start the decode of @ch's gathered stream on its thread. */
dvpp_status sock_vdec_start(conn *c, sjob *j, vchan *ch, dvpp_err *err)
{
    uint32_t cap = c->s->set->cfg.sock.video_deadline_ms;
    uint32_t ms = ch->deadline_ms && ch->deadline_ms < cap ? ch->deadline_ms : cap;
    vdecode *vd = calloc(1, sizeof(*vd));
    int rc;

    if (!vd)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "decode");
    pthread_mutex_init(&vd->mu, NULL);
    dvpp_cond_init_monotonic(&vd->cv);
    vd->deadline_ms = ms;
    vd->deadline_ns = dvpp_now_ns() + (uint64_t)ms * 1000000u;
    j->vd = vd;
    j->t_submit = dvpp_now_ns();
    rc = pthread_create(&vd->thread, NULL, vdec_main, j);
    if (rc != 0)
        return dvpp_err_set(err, DVPP_EAGAIN, "channel", "cannot start the decode: %s",
                            strerror(rc));
    vd->started = true;
    return DVPP_OK;
}

/* job_free's part: the thread has posted its completion; wait for it to
 * return, then free. */
void sock_vdec_free(vdecode *vd)
{
    if (!vd)
        return;
    if (vd->started)
        pthread_join(vd->thread, NULL);
    pthread_mutex_destroy(&vd->mu);
    pthread_cond_destroy(&vd->cv);
    free(vd);
}

/* --- the frames' notices -------------------------------------------------------------------- */

void sock_send_video_frame(sjob *j)
{
    Dvpp__Envelope e;
    Dvpp__VideoFrame vf;
    Dvpp__Result r;
    Dvpp__TensorMeta meta;
    Dvpp__Geom g;
    int64_t shape[DVPP_RING_MAX_DIMS];

    sock_envelope_init(&e, j->id);
    dvpp__video_frame__init(&vf);
    sock_slot_result(j, "video", &r, &meta, &g, shape);
    /* The decoded frame's size, a tensor's too (the picture it was made
     * of: a stream whose resolution changes shows where it does). */
    meta.width = j->out.image.width;
    meta.height = j->out.image.height;
    if (j->spec.pipe.output != DVPP_PIPE_OUT_TENSOR) { /* the frame's own pixels */
        meta.format = (char *)dvpp_pixfmt_name(j->out.image.format);
        meta.width_stride = j->out.image.width_stride;
        meta.height_stride = j->out.image.height_stride;
    }
    vf.channel = j->vc->id;
    vf.result = &r;
    vf.pts = j->vf.pts;
    vf.index = j->vf.index;
    vf.time_s = j->vf.time_s;
    vf.key = j->vf.key;
    e.body_case = DVPP__ENVELOPE__BODY_VIDEO_FRAME;
    e.video_frame = &vf;
    sock_send_env(j->c, &e, NULL, 0);
}
