/* dvppctl batch: a batch job through the device model, in-process or in
 * a daemon (--socket). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_remote.h"
#include "device/dvpp_batchjob.h"
#include "dvpp_mem.h"
#include "dvpp_npy.h"

/* The pipeline the preprocess flags describe, for every input (a batch's
 * items, a video's frames). */
dvpp_status ctl_preprocess_pipeline(const ctl_args *a, dvpp_pipeline *p, dvpp_err *err)
{
    dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_RESIZE};

    dvpp_pipeline_init(p);
    p->decode.shrink_on_load = a->shrink_on_load;
    p->decode.no_orient = a->jpeg.no_orient;
    p->decode.allow_partial = a->jpeg.allow_partial;
    p->decode.profile = a->jpeg.profile;
    op.u.resize.mode = a->mode;
    op.u.resize.round = a->round;
    op.u.resize.w = a->size_w;
    op.u.resize.h = a->size_h;
    op.u.resize.opts = a->resize;
    memcpy(op.u.resize.pad, a->pad, sizeof(op.u.resize.pad));
    p->post = DVPP_PIPE_POST_NORM;
    ctl_norm_spec(a, &p->norm);
    p->output = DVPP_PIPE_OUT_TENSOR;
    return dvpp_pipeline_add_op(p, &op, err);
}

void ctl_draw_progress(size_t total, size_t done, size_t failed)
{
    size_t n = done + failed, width = 40;
    size_t fill = total ? (n > total ? total : n) * width / total : width;
    char bar[64];

    memset(bar, '#', fill);
    memset(bar + fill, '.', width - fill);
    bar[width] = '\0';
    fprintf(stderr, "\r[%s] %zu/%zu%s", bar, n, total, failed ? " (failures)" : "");
}

/* The job's completion notice, so the wait ends the moment the last item
 * does (the progress bar is redrawn every 100 ms meanwhile). */
typedef struct finish_flag {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
} finish_flag;

static void on_finished(void *ctx)
{
    finish_flag *f = ctx;

    pthread_mutex_lock(&f->mu);
    f->done = true;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* Wait for @f up to 100 ms; true once the job has finished. */
static bool wait_tick(finish_flag *f)
{
    struct timespec until;
    bool done;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&f->mu);
    while (!f->done && pthread_cond_timedwait(&f->cv, &f->mu, &until) == 0)
        ;
    done = f->done;
    pthread_mutex_unlock(&f->mu);
    return done;
}

/* --- the output, row by row ---------------------------------------------------- */

/* The .npy being written: its header with the whole run's N first, then
 * each chunk's rows as the chunk completes, so memory holds one chunk and
 * not the whole output. It goes to OUT.tmp, renamed to OUT once every row
 * is in and removed on failure: a failed run (--strict) leaves no partial
 * file, and an older OUT stays as it was, as when the file was written at
 * once. An OUT that is not a regular file (/dev/stdout, a FIFO) is
 * written directly: it cannot be renamed onto. Owns @tmp and @fd
 * (npy_stream_commit or npy_stream_abort). */
typedef struct npy_stream {
    const char *path;           /* OUT (borrowed) */
    char *tmp;                  /* OUT.tmp; NULL when direct, committed or aborted */
    int fd;                     /* -1 when not open */
} npy_stream;

static dvpp_status stream_write(npy_stream *s, const void *data, size_t n, dvpp_err *err)
{
    return dvpp_write_all(s->fd, s->tmp ? s->tmp : s->path, data, n, err);
}

/* Create OUT.tmp and write the header of @rows items shaped as @row (the
 * tensor of one item: its dtype and stored shape, shape[0] replaced). */
static dvpp_status npy_stream_open(npy_stream *s, const char *path, const dvpp_tensor *row,
                                   uint32_t rows, dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    int64_t shape[DVPP_TENSOR_MAX_DIMS];
    size_t len = strlen(path) + sizeof(".tmp");
    struct stat sb;
    bool direct = stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);

    s->path = path;
    s->fd = -1;
    memcpy(shape, row->shape, sizeof(shape));
    shape[0] = rows;
    if (!direct && !(s->tmp = malloc(len)))
        return dvpp_err_set(err, DVPP_ENOMEM, "output", "out of memory");
    if (!direct)
        snprintf(s->tmp, len, "%s.tmp", path);
    s->fd = open(direct ? path : s->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        dvpp_err_set(err, DVPP_EIO, "output", "cannot create %s: %s",
                     direct ? path : s->tmp, strerror(errno));
        free(s->tmp);
        s->tmp = NULL;
        return DVPP_EIO;
    }
    return stream_write(s, hdr, dvpp_npy_header(hdr, dvpp_dtype_npy(row->dtype), shape,
                                                row->ndim), err);
}

/* Append @n bytes of rows (the items in input order). */
static dvpp_status npy_stream_rows(npy_stream *s, const void *data, size_t n, dvpp_err *err)
{
    return stream_write(s, data, n, err);
}

/* Close and remove OUT.tmp (a run that failed; after a commit, or when
 * never opened, a no-op). */
static void npy_stream_abort(npy_stream *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    if (!s->tmp)
        return;
    unlink(s->tmp);
    free(s->tmp);
    s->tmp = NULL;
}

/* Close OUT.tmp and rename it to OUT (or abort, saying why). */
static dvpp_status npy_stream_commit(npy_stream *s, dvpp_err *err)
{
    int fd = s->fd;

    s->fd = -1;
    if (close(fd) != 0) {
        dvpp_err_set(err, DVPP_EIO, "output", "close %s: %s", s->tmp ? s->tmp : s->path,
                     strerror(errno));
        npy_stream_abort(s);
        return DVPP_EIO;
    }
    if (s->tmp && rename(s->tmp, s->path) != 0) {
        dvpp_err_set(err, DVPP_EIO, "output", "rename %s to %s: %s", s->tmp, s->path,
                     strerror(errno));
        npy_stream_abort(s);
        return DVPP_EIO;
    }
    free(s->tmp);
    s->tmp = NULL;
    return DVPP_OK;
}

/* --- chunks ----------------------------------------------------------------- */

/* Put the chunk of the run's list starting at @off (at most @chunk items)
 * in a->inputs, its list index in a->shard_first. Returns its length. */
static unsigned take_chunk(ctl_args *a, unsigned off, unsigned chunk)
{
    unsigned k = a->nblock - off < chunk ? a->nblock - off : chunk;

    for (unsigned i = 0; i < k; i++)
        a->inputs[i] = a->block[off + i];
    a->ninputs = k;
    a->shard_first = a->block_first + off;
    return k;
}

/* The bar over the whole run: the items of the chunks before the current
 * one, added to what that chunk reports. */
typedef struct run_progress {
    bool tty;
    unsigned total;             /* the run's items */
    unsigned done, failed;      /* of the chunks finished */
} run_progress;

static void draw_run(const run_progress *rp, size_t done, size_t failed)
{
    if (rp->tty)
        ctl_draw_progress(rp->total, rp->done + done, rp->failed + failed);
}

/* The bar's line ends after the last chunk, or a failure. */
static void end_run(const run_progress *rp)
{
    if (rp->tty)
        fputc('\n', stderr);
}

/* The tensor of one item of @p: the shape of a row of the output. */
static dvpp_status row_tensor(const dvpp_pipeline *p, dvpp_tensor *row, dvpp_err *err)
{
    return dvpp_batchjob_tensor(p, 1, row, err);
}

/* --- in-process ----------------------------------------------------------------- */

static dvpp_status wait_with_progress(dvpp_batchjob *job, finish_flag *f,
                                      const run_progress *rp, dvpp_err *err)
{
    dvpp_batch_progress pr;
    bool done;

    do {
        done = wait_tick(f);
        dvpp_batchjob_progress(job, &pr);
        draw_run(rp, pr.done, pr.failed);
    } while (!done);
    return dvpp_batchjob_wait(job, err);
}

static unsigned report_items(dvpp_batchjob *job, const ctl_args *a)
{
    unsigned failed = 0;

    for (unsigned i = 0; i < a->ninputs; i++) {
        dvpp_err e;
        dvpp_status st;
        dvpp_err_clear(&e);
        st = dvpp_batchjob_item_status(job, i, &e);
        if (st == DVPP_OK)
            continue;
        failed++;
        fprintf(stderr, "dvppctl batch: item %u (%s): %s (%s)\n", a->shard_first + i,
                a->inputs[i], e.msg[0] ? e.msg : dvpp_strerror(st),
                dvpp_status_name(st));
    }
    return failed;
}

/* Read the current chunk's files into @bufs (reused chunk after chunk, so
 * only this chunk's files are held). */
static dvpp_status read_inputs(const ctl_args *a, dvpp_buf *bufs,
                               dvpp_batchjob_input *in, dvpp_err *err)
{
    for (unsigned i = 0; i < a->ninputs; i++) {
        dvpp_status st = dvpp_buf_read_file(&bufs[i], a->inputs[i],
                                            a->lim.max_encoded_bytes, err);
        if (st != DVPP_OK)
            return st;
        in[i] = (dvpp_batchjob_input){bufs[i].data, bufs[i].len};
    }
    return DVPP_OK;
}

/* What an in-process run holds: the device, and one chunk's files and
 * tensor (@data: CTL_MAX_INPUTS rows, or fewer when the run is shorter). */
typedef struct local_run {
    dvpp_device *dev;
    dvpp_pipeline p;
    dvpp_buf bufs[CTL_MAX_INPUTS];
    dvpp_batchjob_input in[CTL_MAX_INPUTS];
    void *data;
    size_t data_bytes;
    run_progress rp;
} local_run;

/* One chunk (a->inputs) as one batch job into @lr->data, its rows then
 * appended to @out. */
static dvpp_status local_chunk(local_run *lr, const ctl_args *a, npy_stream *out,
                               dvpp_err *err)
{
    finish_flag flag = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    dvpp_batchjob_opts opts = {.done = on_finished, .ctx = &flag, .strict = a->strict};
    dvpp_batchjob *job = NULL;
    dvpp_tensor t;
    dvpp_status st;
    unsigned failed = 0;

    st = dvpp_batchjob_tensor(&lr->p, a->ninputs, &t, err);
    if (st == DVPP_OK)
        st = read_inputs(a, lr->bufs, lr->in, err);
    if (st == DVPP_OK) {
        t.data = lr->data;
        memset(t.data, 0, t.bytes);
        st = dvpp_batchjob_start_opts(lr->dev, &lr->p, lr->in, a->ninputs, &t, &opts,
                                      &job, err);
    }
    if (st == DVPP_OK) {
        st = wait_with_progress(job, &flag, &lr->rp, err);
        failed = report_items(job, a);
    }
    dvpp_batchjob_free(job);
    /* Default mode writes the batch with failed slots zeroed. */
    if (st == DVPP_OK)
        st = npy_stream_rows(out, t.data, t.bytes, err);
    lr->rp.done += a->ninputs - failed;
    lr->rp.failed += failed;
    return st;
}

/* The buffers of @lr and the run's output: the header, the chunk tensor,
 * the device. */
static dvpp_status local_open(local_run *lr, const ctl_args *a, npy_stream *out,
                              dvpp_err *err)
{
    unsigned rows = a->nblock < CTL_MAX_INPUTS ? a->nblock : CTL_MAX_INPUTS;
    dvpp_tensor row, t;
    dvpp_status st = ctl_preprocess_pipeline(a, &lr->p, err);

    if (st == DVPP_OK)
        st = row_tensor(&lr->p, &row, err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&lr->p, rows, &t, err);
    if (st == DVPP_OK && !(lr->data = dvpp_calloc(1, t.bytes)))
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot allocate the batch tensor");
    if (st == DVPP_OK)
        lr->data_bytes = t.bytes;
    if (st == DVPP_OK)
        st = dvpp_pipe_device_new(NULL, a->channels, &a->lim, &lr->dev, err);
    if (st == DVPP_OK)
        st = npy_stream_open(out, a->out, &row, a->nblock, err);
    return st;
}

/* The batch in-process: the device model with --channels workers, the
 * run's list CTL_MAX_INPUTS items (the device's batch job) at a time. */
static int local_batch(ctl_args *a)
{
    local_run lr = {.rp = {isatty(STDERR_FILENO), a->nblock, 0, 0}};
    npy_stream out = {NULL, NULL, -1};
    dvpp_err err;
    dvpp_status st;
    int rc;

    for (unsigned i = 0; i < CTL_MAX_INPUTS; i++)
        dvpp_buf_init(&lr.bufs[i]);
    dvpp_err_clear(&err);
    st = local_open(&lr, a, &out, &err);
    for (unsigned off = 0; st == DVPP_OK && off < a->nblock; off += a->ninputs) {
        take_chunk(a, off, CTL_MAX_INPUTS);
        st = local_chunk(&lr, a, &out, &err);
    }
    end_run(&lr.rp);
    if (st == DVPP_OK)
        st = npy_stream_commit(&out, &err);
    npy_stream_abort(&out);
    rc = st == DVPP_OK ? 0 : ctl_fail("batch", &err);
    if (st == DVPP_OK && lr.rp.failed)
        fprintf(stderr, "dvppctl batch: %u of %u items failed; their slots are "
                        "zero\n", lr.rp.failed, a->nblock);
    dvpp_pipe_device_free(lr.dev);
    dvpp_free(lr.data, lr.data_bytes);
    for (unsigned i = 0; i < CTL_MAX_INPUTS; i++)
        dvpp_buf_fini(&lr.bufs[i]);
    return rc;
}

/* --- through a daemon ---------------------------------------------------------- */

/* A batch in the daemon, one chunk (a->inputs) in flight at a time. */
typedef struct remote_batch {
    dvppc_conn *c;
    dvppc_ring *ring;           /* one slot: a chunk's k x C x H x W tensor */
    ctl_job job;                /* the pipeline of every item */
    char *spec;
    dvpp_tensor row;            /* one item's shape (no data) */
    size_t slice;               /* its bytes */
    dvpp_buf bufs[CTL_MAX_INPUTS];  /* the chunk's files */
    const void *inputs[CTL_MAX_INPUTS];
    size_t lens[CTL_MAX_INPUTS];
    uint64_t ticket, id;
    dvppc_result res;           /* the chunk's */
    run_progress rp;
    npy_stream out;
} remote_batch;

/* Wait for the Result, redrawing the bar from BatchQuery every 100 ms on
 * a terminal (elsewhere nobody watches: wait without polling). */
static dvpp_status remote_wait(remote_batch *b, unsigned n, dvpp_err *err)
{
    dvppc_progress pr;
    dvppc_error e;
    unsigned failed = 0;
    int rc;

    memset(&e, 0, sizeof(e));
    while ((rc = dvppc_wait(b->c, b->ticket, &b->res, b->rp.tty ? 100 : -1, &e)) ==
           DVPPC_ETIMEDOUT) {
        /* A batch that finished meanwhile is answered ENOTFOUND (its
         * Result is on the way): nothing to draw. */
        if (dvppc_batch_progress(b->c, b->id, &pr, NULL) == 0)
            draw_run(&b->rp, pr.done, pr.failed);
    }
    for (uint32_t i = 0; rc == 0 && i < b->res.items; i++)
        failed += b->res.item_status[i] != 0;
    if (rc == 0)
        draw_run(&b->rp, n - failed, failed);
    return rc ? ctl_from_client(&e, err) : DVPP_OK;
}

/* The daemon's Result has each item's status, not its message: a failed
 * item is run once more alone (the same pipeline on the same bytes fails
 * the same way) so the report reads as the offline one does. Items that
 * never ran say so as the device model does. */
static void item_message(remote_batch *b, unsigned i, int status, dvpp_err *e)
{
    dvppc_request q = {.kind = DVPPC_TENSOR, .spec = b->spec, .input = b->inputs[i],
                       .input_len = b->lens[i], .input_fd = -1};
    dvppc_result r;
    dvppc_ring *ring = NULL;
    dvppc_error ce;

    dvpp_err_clear(e);
    if (status == DVPP_ECANCELED || status == DVPP_ETIMEDOUT) {
        dvpp_err_set(e, status, NULL, "item %u %s before it ran", i,
                     status == DVPP_ECANCELED ? "canceled" : "timed out");
        return;
    }
    memset(&ce, 0, sizeof(ce));
    if (ctl_ring_for(b->c, b->slice, 1, &ring, e) == DVPP_OK) {
        q.ring = ring;
        if (dvppc_submit(b->c, &q, &r, &ce) != 0 && ce.status == status)
            ctl_from_client(&ce, e);
        dvppc_release(b->c, &r);
        dvppc_ring_close(ring);
    }
    if (e->status != status)
        dvpp_err_set(e, status, NULL, "%s", dvpp_strerror(status));
}

static unsigned remote_report(remote_batch *b, const ctl_args *a)
{
    unsigned failed = 0;

    for (unsigned i = 0; i < a->ninputs && i < b->res.items; i++) {
        int st = b->res.item_status[i];
        dvpp_err e;
        if (st == 0)
            continue;
        failed++;
        item_message(b, i, st, &e);
        fprintf(stderr, "dvppctl batch: item %u (%s): %s (%s)\n", a->shard_first + i,
                a->inputs[i], e.msg[0] ? e.msg : dvpp_strerror(st), dvpp_status_name(st));
    }
    return failed;
}

/* The job and one item's shape (to size the ring and the header). */
static dvpp_status remote_prepare(remote_batch *b, ctl_args *a, dvpp_err *err)
{
    dvpp_status st = ctl_preprocess_pipeline(a, &b->job.pipe, err);

    b->job.kind = DVPPC_TENSOR;
    ctl_job_scale(&b->job, a);
    if (st == DVPP_OK)
        st = row_tensor(&b->job.pipe, &b->row, err);
    b->slice = b->row.bytes;
    if (st == DVPP_OK && !(b->spec = ctl_spec_json(&b->job)))
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot build the spec");
    return st;
}

static int remote_batch_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    remote_batch *b = state;

    b->out = (npy_stream){NULL, NULL, -1};
    b->rp = (run_progress){isatty(STDERR_FILENO), a->nblock, 0, 0};
    for (unsigned i = 0; i < CTL_MAX_INPUTS; i++)
        dvpp_buf_init(&b->bufs[i]);
    return remote_prepare(b, a, err) == DVPP_OK ? 0 : 1;
}

/* The items of one chunk: at most CTL_MAX_INPUTS, and at most the daemon's
 * max_batch_items (its Welcome; 0 there means no limit). */
static unsigned remote_chunk_items(dvppc_conn *c)
{
    const dvppc_server_info *in = dvppc_info(c);

    return in && in->max_batch_items && in->max_batch_items < CTL_MAX_INPUTS
               ? in->max_batch_items : CTL_MAX_INPUTS;
}

/* The chunk's answer must be rows of the header's shape and dtype. */
static dvpp_status check_rows(const remote_batch *b, const dvpp_tensor *t, unsigned k,
                              dvpp_err *err)
{
    bool same = t->dtype == b->row.dtype && t->ndim == b->row.ndim &&
                t->shape[0] == (int64_t)k && t->bytes == (size_t)k * b->slice;

    for (unsigned d = 1; same && d < t->ndim; d++)
        same = t->shape[d] == b->row.shape[d];
    return same ? DVPP_OK
                : dvpp_err_set(err, DVPP_EIO, "meta", "dvppd answered a tensor of "
                               "another shape than %u items of the batch", k);
}

/* Read the chunk's files, submit it, wait, report its failed items and
 * append its rows. */
static dvpp_status remote_chunk(remote_batch *b, ctl_args *a, dvpp_err *err)
{
    dvppc_error e;
    dvpp_tensor t;
    dvpp_status st = DVPP_OK;
    unsigned k = a->ninputs, failed = 0;

    for (unsigned i = 0; st == DVPP_OK && i < k; i++) {
        st = dvpp_buf_read_file(&b->bufs[i], a->inputs[i], a->lim.max_encoded_bytes, err);
        b->inputs[i] = b->bufs[i].data;
        b->lens[i] = b->bufs[i].len;
    }
    memset(&e, 0, sizeof(e));
    if (st == DVPP_OK && dvppc_batch_submit(b->c, b->spec, b->inputs, b->lens, k, b->ring,
                                            a->strict, &b->ticket, &b->id, &e) != 0)
        st = ctl_from_client(&e, err);
    if (st == DVPP_OK)
        st = remote_wait(b, k, err);
    if (st == DVPP_OK)
        failed = remote_report(b, a);
    if (st == DVPP_OK)
        st = ctl_out_tensor(&b->res, &t, err);
    if (st == DVPP_OK)
        st = check_rows(b, &t, k, err);
    if (st == DVPP_OK)
        st = npy_stream_rows(&b->out, t.data, t.bytes, err);
    dvppc_release(b->c, &b->res);   /* the slot, for the next chunk */
    b->rp.done += k - failed;
    b->rp.failed += failed;
    return st;
}

/* Open the ring and the output, then run the list chunk after chunk. */
static dvpp_status remote_batch_talk(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err)
{
    remote_batch *b = state;
    unsigned chunk = remote_chunk_items(c);
    unsigned rows = a->nblock < chunk ? a->nblock : chunk;
    dvppc_error e;
    dvpp_status st = DVPP_OK;

    b->c = c;
    memset(&e, 0, sizeof(e));
    if (dvppc_ring_open(b->c, NULL, 1, (size_t)rows * b->slice, &b->ring, &e) != 0)
        st = ctl_from_client(&e, err);
    if (st == DVPP_OK)
        st = npy_stream_open(&b->out, a->out, &b->row, a->nblock, err);
    for (unsigned off = 0; st == DVPP_OK && off < a->nblock; off += a->ninputs) {
        take_chunk(a, off, chunk);
        st = remote_chunk(b, a, err);
    }
    end_run(&b->rp);
    return st;
}

static dvpp_status remote_batch_finish(ctl_args *a, void *state, dvpp_err *err)
{
    remote_batch *b = state;
    dvpp_status st = npy_stream_commit(&b->out, err);

    if (st == DVPP_OK && b->rp.failed)
        fprintf(stderr, "dvppctl batch: %u of %u items failed; their slots are "
                        "zero\n", b->rp.failed, a->nblock);
    return st;
}

static void remote_batch_release(dvppc_conn *c, void *state)
{
    remote_batch *b = state;

    dvppc_release(c, &b->res);
    dvppc_ring_close(b->ring);
    b->ring = NULL;
}

static void remote_batch_fini(void *state)
{
    remote_batch *b = state;

    npy_stream_abort(&b->out);  /* a run that did not finish */
    free(b->spec);
    for (unsigned i = 0; i < CTL_MAX_INPUTS; i++)
        dvpp_buf_fini(&b->bufs[i]);
}

const ctl_remote_cmd ctl_remote_batch_cmd = {
    .name = "batch", .flags = CTL_REMOTE_SPEC | CTL_REMOTE_FAIL_NAME,
    .state_bytes = sizeof(remote_batch), .prepare = remote_batch_prepare,
    .talk = remote_batch_talk, .finish = remote_batch_finish,
    .release = remote_batch_release, .fini = remote_batch_fini};

/* --- inputs: files and directories ------------------------------------------ */

/* One listed input: a path from argv, or one made for a directory entry
 * (then @owned is that same string, freed with the list). */
typedef struct listed {
    const char *path;
    char *owned;
} listed;

/* The whole input list, FILES in argv order with each DIR replaced by its
 * image files (sorted by name): what --shard splits. Owns @items and
 * their owned names (list_free). */
typedef struct input_list {
    listed *items;
    unsigned n, cap;
} input_list;

static void list_free(input_list *l)
{
    for (unsigned i = 0; i < l->n; i++)
        free(l->items[i].owned);
    free(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
}

/* Append @path (taking @owned, NULL for argv's); false after printing why
 * not (then @owned is freed). The limit is checked before growing. */
static bool list_push(input_list *l, const char *path, char *owned)
{
    if (l->n == l->cap) {
        unsigned cap = l->cap ? l->cap * 2 : 64;
        listed *grown;
        if (l->cap >= CTL_MAX_LISTED) {
            fprintf(stderr, "dvppctl batch: more than %u inputs listed\n", CTL_MAX_LISTED);
            free(owned);
            return false;
        }
        if (cap > CTL_MAX_LISTED)
            cap = CTL_MAX_LISTED;
        grown = realloc(l->items, cap * sizeof(*grown));
        if (!grown) {
            fprintf(stderr, "dvppctl batch: out of memory listing the inputs\n");
            free(owned);
            return false;
        }
        l->items = grown;
        l->cap = cap;
    }
    l->items[l->n++] = (listed){path, owned};
    return true;
}

static bool is_image_name(const char *name)
{
    const char *dot = strrchr(name, '.');

    return name[0] != '.' && dot && (!strcasecmp(dot, ".jpg") ||
                                     !strcasecmp(dot, ".jpeg") ||
                                     !strcasecmp(dot, ".png"));
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const listed *)x)->path, ((const listed *)y)->path);
}

/* @dir/@name when it is a regular file, else NULL (also when out of
 * memory, said on stderr with *@oom set). */
static char *regular_entry(const char *dir, const char *name, bool *oom)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *path = malloc(len);
    struct stat sb;

    if (!path) {
        fprintf(stderr, "dvppctl batch: out of memory\n");
        *oom = true;
        return NULL;
    }
    snprintf(path, len, "%s/%s", dir, name);
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        free(path);
        return NULL;
    }
    return path;
}

/* Append @dir's .jpg/.jpeg/.png files (regular files, sorted by name) to
 * @l; false after printing why not. */
static bool add_dir(const char *dir, input_list *l)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    unsigned first = l->n;
    bool ok = true, oom = false;

    if (!d) {
        fprintf(stderr, "dvppctl batch: %s: cannot read the directory\n", dir);
        return false;
    }
    while (ok && (e = readdir(d)) != NULL) {
        char *path;
        if (!is_image_name(e->d_name))
            continue;
        path = regular_entry(dir, e->d_name, &oom);
        if (oom)
            ok = false;
        else if (path)
            ok = list_push(l, path, path);
    }
    closedir(d);
    qsort(l->items + first, l->n - first, sizeof(*l->items), by_name);
    return ok;
}

/* The list from the operands, every directory replaced by its image files.
 * Returns 0, or 2 after printing why. */
static int list_inputs(const ctl_args *a, input_list *l)
{
    for (unsigned i = 0; i < a->noperands; i++) {
        const char *in = a->operands[i];
        struct stat sb;
        if (stat(in, &sb) == 0 && S_ISDIR(sb.st_mode) ? !add_dir(in, l)
                                                       : !list_push(l, in, NULL))
            return 2;
    }
    if (l->n == 0) {
        fprintf(stderr, "dvppctl batch: no .jpg, .jpeg or .png files in the input "
                        "directories\n");
        return 2;
    }
    return 0;
}

/* Block I of N of @n items as numpy.array_split cuts it: the first n % N
 * blocks one item longer, so the N blocks in order are the whole list. */
static void shard_block(unsigned n, unsigned index, unsigned count, unsigned *first,
                        unsigned *len)
{
    unsigned base = n / count, extra = n % count;

    *first = index * base + (index < extra ? index : extra);
    *len = base + (index < extra);
}

/* Make this run's block of @l (all of it without --shard) a->block, run
 * in chunks by the command; the names stay owned by @l, the array is the
 * caller's (free). Returns 0, or 1 after printing why. */
static int take_shard(ctl_args *a, const input_list *l)
{
    unsigned first = 0, len = l->n;

    if (a->shard_count)
        shard_block(l->n, a->shard_index, a->shard_count, &first, &len);
    /* len <= l->n <= CTL_MAX_LISTED: checked while listing */
    a->block = len ? malloc(len * sizeof(*a->block)) : NULL;
    if (len && !a->block) {
        fprintf(stderr, "dvppctl batch: out of memory listing the inputs\n");
        return 1;
    }
    for (unsigned i = 0; i < len; i++)
        a->block[i] = l->items[first + i].path;
    a->nblock = len;
    a->block_first = first;
    a->shard_first = first;
    return 0;
}

/* A shard with no inputs (fewer inputs than shards) writes a 0 x C x H x
 * W tensor, so the N outputs still concatenate to the whole batch. */
static int empty_shard(const ctl_args *a)
{
    dvpp_pipeline p;
    dvpp_tensor t;
    dvpp_err err;
    dvpp_status st;

    dvpp_err_clear(&err);
    st = ctl_preprocess_pipeline(a, &p, &err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&p, 1, &t, &err);
    if (st == DVPP_OK) {
        t.n = 0;
        t.shape[0] = 0;
        t.bytes = 0;
        t.data = NULL;
        st = ctl_write_tensor(a->out, &t, &err);
    }
    if (st != DVPP_OK)
        return ctl_fail("batch", &err);
    fprintf(stderr, "dvppctl batch: --shard %u/%u has none of the inputs; wrote an "
                    "empty batch\n", a->shard_index, a->shard_count);
    return 0;
}

int ctl_cmd_batch(int argc, char **argv)
{
    ctl_args *a = calloc(1, sizeof(*a));
    input_list list = {NULL, 0, 0};
    int rc;

    if (!a)
        return 1;
    rc = ctl_parse_args(argc, argv, a);
    if (!rc && !a->size_set) {
        fprintf(stderr, "dvppctl batch: need --size WxH\n");
        rc = 2;
    }
    if (!rc)
        rc = list_inputs(a, &list);
    if (!rc)
        rc = take_shard(a, &list);
    if (!rc && a->nblock == 0)
        rc = empty_shard(a);
    else if (!rc)
        rc = ctl_use_socket(a) ? ctl_remote_run("batch", a) : local_batch(a);
    list_free(&list);
    free(a->block);
    free(a);
    return rc;
}
