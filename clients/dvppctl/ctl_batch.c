/* dvppctl batch: a batch job through the device model, in-process or in
 * a daemon (--socket). */
#include <dirent.h>
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

static dvpp_status wait_with_progress(dvpp_batchjob *job, finish_flag *f, dvpp_err *err)
{
    dvpp_batch_progress pr;
    bool tty = isatty(STDERR_FILENO), done;

    do {
        done = wait_tick(f);
        dvpp_batchjob_progress(job, &pr);
        if (tty)
            ctl_draw_progress(pr.total, pr.done, pr.failed);
    } while (!done);
    if (tty)
        fputc('\n', stderr);
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

/* The batch in-process: the device model with --channels workers. */
static int local_batch(ctl_args *a)
{
    dvpp_buf bufs[CTL_MAX_INPUTS];
    dvpp_batchjob_input in[CTL_MAX_INPUTS];
    dvpp_batchjob *job = NULL;
    dvpp_device *dev = NULL;
    finish_flag flag = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    dvpp_batchjob_opts opts = {.done = on_finished, .ctx = &flag};
    dvpp_pipeline p;
    dvpp_tensor t = {0};
    dvpp_err err;
    dvpp_status st;
    unsigned failed = 0;
    int rc;

    for (unsigned i = 0; i < CTL_MAX_INPUTS; i++)
        dvpp_buf_init(&bufs[i]);
    dvpp_err_clear(&err);
    st = ctl_preprocess_pipeline(a, &p, &err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&p, a->ninputs, &t, &err);
    if (st == DVPP_OK && !(t.data = dvpp_calloc(1, t.bytes)))
        st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "cannot allocate the batch tensor");
    if (st == DVPP_OK)
        st = read_inputs(a, bufs, in, &err);
    if (st == DVPP_OK)
        st = dvpp_pipe_device_new(NULL, a->channels, &a->lim, &dev, &err);
    opts.strict = a->strict;
    if (st == DVPP_OK)
        st = dvpp_batchjob_start_opts(dev, &p, in, a->ninputs, &t, &opts, &job, &err);
    if (st == DVPP_OK) {
        st = wait_with_progress(job, &flag, &err);
        failed = report_items(job, a);
    }
    /* Default mode writes the batch with failed slots zeroed. */
    if (st == DVPP_OK)
        st = ctl_write_tensor(a->out, &t, &err);
    rc = st == DVPP_OK ? 0 : ctl_fail("batch", &err);
    if (st == DVPP_OK && failed)
        fprintf(stderr, "dvppctl batch: %u of %u items failed; their slots are "
                        "zero\n", failed, a->ninputs);
    dvpp_batchjob_free(job);
    dvpp_pipe_device_free(dev);
    dvpp_free(t.data, t.bytes);
    for (unsigned i = 0; i < CTL_MAX_INPUTS; i++)
        dvpp_buf_fini(&bufs[i]);
    return rc;
}

/* --- through a daemon ---------------------------------------------------------- */

/* A batch in flight in the daemon. */
typedef struct remote_batch {
    dvppc_conn *c;
    dvppc_ring *ring;           /* one slot: the N x C x H x W tensor */
    ctl_job job;                /* the pipeline of every item */
    char *spec;
    dvpp_tensor t;              /* its shape (no data) */
    dvpp_buf bufs[CTL_MAX_INPUTS];
    const void *inputs[CTL_MAX_INPUTS];
    size_t lens[CTL_MAX_INPUTS];
    uint64_t ticket, id;
    dvppc_result res;
    unsigned failed;            /* items that failed */
} remote_batch;

/* Wait for the Result, redrawing the bar from BatchQuery every 100 ms on
 * a terminal (elsewhere nobody watches: wait without polling). */
static dvpp_status remote_wait(remote_batch *b, unsigned n, dvpp_err *err)
{
    bool tty = isatty(STDERR_FILENO);
    dvppc_progress pr;
    dvppc_error e;
    unsigned failed = 0;
    int rc;

    memset(&e, 0, sizeof(e));
    while ((rc = dvppc_wait(b->c, b->ticket, &b->res, tty ? 100 : -1, &e)) ==
           DVPPC_ETIMEDOUT) {
        /* A batch that finished meanwhile is answered ENOTFOUND (its
         * Result is on the way): nothing to draw. */
        if (dvppc_batch_progress(b->c, b->id, &pr, NULL) == 0)
            ctl_draw_progress(pr.total, pr.done, pr.failed);
    }
    for (uint32_t i = 0; rc == 0 && i < b->res.items; i++)
        failed += b->res.item_status[i] != 0;
    if (tty) {
        if (rc == 0)
            ctl_draw_progress(n, n - failed, failed);
        fputc('\n', stderr);
    }
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
    size_t slice = b->t.bytes / b->t.n;

    dvpp_err_clear(e);
    if (status == DVPP_ECANCELED || status == DVPP_ETIMEDOUT) {
        dvpp_err_set(e, status, NULL, "item %u %s before it ran", i,
                     status == DVPP_ECANCELED ? "canceled" : "timed out");
        return;
    }
    memset(&ce, 0, sizeof(ce));
    if (ctl_ring_for(b->c, slice, 1, &ring, e) == DVPP_OK) {
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

/* The job, its tensor's shape (to size the ring), and the inputs. */
static dvpp_status remote_prepare(remote_batch *b, ctl_args *a, dvpp_err *err)
{
    dvpp_status st = ctl_preprocess_pipeline(a, &b->job.pipe, err);

    b->job.kind = DVPPC_TENSOR;
    ctl_job_scale(&b->job, a);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&b->job.pipe, a->ninputs, &b->t, err);
    if (st == DVPP_OK && !(b->spec = ctl_spec_json(&b->job)))
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "cannot build the spec");
    for (unsigned i = 0; st == DVPP_OK && i < a->ninputs; i++) {
        st = dvpp_buf_read_file(&b->bufs[i], a->inputs[i], a->lim.max_encoded_bytes, err);
        b->inputs[i] = b->bufs[i].data;
        b->lens[i] = b->bufs[i].len;
    }
    return st;
}

static int remote_batch_prepare(ctl_args *a, void *state, dvpp_err *err)
{
    remote_batch *b = state;

    for (unsigned i = 0; i < CTL_MAX_INPUTS; i++)
        dvpp_buf_init(&b->bufs[i]);
    return remote_prepare(b, a, err) == DVPP_OK ? 0 : 1;
}

/* Submit, wait, and report the items that failed. */
static dvpp_status remote_batch_talk(dvppc_conn *c, ctl_args *a, void *state, dvpp_err *err)
{
    remote_batch *b = state;
    dvppc_error e;
    dvpp_status st;

    b->c = c;
    memset(&e, 0, sizeof(e));
    if (dvppc_ring_open(b->c, NULL, 1, b->t.bytes, &b->ring, &e) != 0 ||
        dvppc_batch_submit(b->c, b->spec, b->inputs, b->lens, a->ninputs, b->ring,
                           a->strict, &b->ticket, &b->id, &e) != 0)
        return ctl_from_client(&e, err);
    st = remote_wait(b, a->ninputs, err);
    if (st == DVPP_OK)
        b->failed = remote_report(b, a);
    return st;
}

static dvpp_status remote_batch_finish(ctl_args *a, void *state, dvpp_err *err)
{
    remote_batch *b = state;
    dvpp_tensor t;
    dvpp_status st = ctl_out_tensor(&b->res, &t, err);

    if (st == DVPP_OK)
        st = ctl_write_tensor(a->out, &t, err);
    if (st == DVPP_OK && b->failed)
        fprintf(stderr, "dvppctl batch: %u of %u items failed; their slots are "
                        "zero\n", b->failed, a->ninputs);
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

/* Put this run's block of @l (all of it without --shard) in a->inputs;
 * the names stay owned by @l. Returns 0, or 2 after printing why. */
static int take_shard(ctl_args *a, const input_list *l)
{
    unsigned first = 0, len = l->n;

    if (a->shard_count)
        shard_block(l->n, a->shard_index, a->shard_count, &first, &len);
    if (len > CTL_MAX_INPUTS && !a->shard_count) {
        fprintf(stderr, "dvppctl batch: %u inputs, more than %d (--shard I/N runs "
                        "a block of them)\n", l->n, CTL_MAX_INPUTS);
        return 2;
    }
    if (len > CTL_MAX_INPUTS) {
        fprintf(stderr, "dvppctl batch: --shard %u/%u is %u of the %u inputs, more "
                        "than %d: use N >= %u\n", a->shard_index, a->shard_count, len,
                l->n, CTL_MAX_INPUTS, (l->n + CTL_MAX_INPUTS - 1) / CTL_MAX_INPUTS);
        return 2;
    }
    for (unsigned i = 0; i < len; i++)
        a->inputs[i] = l->items[first + i].path;
    a->ninputs = len;
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
    if (!rc && a->ninputs == 0)
        rc = empty_shard(a);
    else if (!rc)
        rc = ctl_use_socket(a) ? ctl_remote_run("batch", a) : local_batch(a);
    list_free(&list);
    free(a);
    return rc;
}
