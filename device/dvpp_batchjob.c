/* dvpp_batchjob: batch jobs of one pipeline on the device model. */
#include "dvpp_batchjob.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dvpp_mem.h"

/* --- the pipeline backend ------------------------------------------------------ */

/* The backend's context: the table (borrowed by the device), the limits the
 * workers are made with, and a link in the registry of pipe devices. */
typedef struct pipe_backend {
    dvpp_engine_backend table;
    dvpp_limits_feed limits;
    dvpp_device *dev;
    struct pipe_backend *next;
} pipe_backend;

static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pipe_backend *g_reg;

static dvpp_status pipe_init(void *ctx, dvpp_engine engine, unsigned channel,
                             void **state, dvpp_err *err)
{
    pipe_backend *pb = ctx;
    dvpp_worker *w;

    (void)engine, (void)channel;
    w = dvpp_malloc(sizeof(*w));
    if (!w)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "pipeline worker");
    dvpp_worker_init(w, NULL);
    dvpp_worker_follow(w, &pb->limits);
    *state = w;
    return DVPP_OK;
}

static void pipe_fini(void *ctx, dvpp_engine engine, unsigned channel, void *state)
{
    dvpp_worker *w = state;

    (void)ctx, (void)engine, (void)channel;
    if (!w)
        return;
    dvpp_worker_fini(w);
    dvpp_free(w, sizeof(*w));
}

typedef struct worker_trim_args {
    dvpp_worker *w;
    size_t keep;
} worker_trim_args;

static size_t worker_trim(void *ctx)
{
    worker_trim_args *a = ctx;

    return dvpp_worker_trim(a->w, a->keep);
}

/* An idle worker: its buffers above @keep go back to the allocator, and
 * the allocator's free pages (its own arena's top included) back to the
 * system, even when nothing was above @keep: the blocks freed under load
 * sit in the arenas (dvpp_mem_release_idle). */
static uint64_t pipe_idle(void *ctx, dvpp_engine engine, unsigned channel, void *state,
                          uint64_t keep_bytes)
{
    worker_trim_args a = {state, keep_bytes > SIZE_MAX ? SIZE_MAX : (size_t)keep_bytes};

    (void)ctx, (void)engine, (void)channel;
    return dvpp_mem_release_idle(worker_trim, &a);
}

dvpp_status dvpp_pipe_device_new(const dvpp_device_config *cfg, uint32_t channels,
                                 const dvpp_limits *lim, dvpp_device **out,
                                 dvpp_err *err)
{
    dvpp_device_config c;
    pipe_backend *pb;
    dvpp_status st;

    if (!out)
        return dvpp_err_set(err, DVPP_EINVAL, "out", "no output handle");
    *out = NULL;
    if (cfg)
        c = *cfg;
    else
        dvpp_device_config_default(&c);
    if (channels)
        c.channels[DVPP_BATCHJOB_ENGINE] = channels;
    if (!c.channels[DVPP_BATCHJOB_ENGINE])
        return dvpp_err_set(err, DVPP_EINVAL, "channels",
                            "the %s engine needs at least one channel",
                            dvpp_engine_name(DVPP_BATCHJOB_ENGINE));
    pb = dvpp_calloc(1, sizeof(*pb));
    if (!pb)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "pipeline backend");
    dvpp_limits_feed_init(&pb->limits, lim);
    pb->table.name = "pipeline";
    pb->table.init = pipe_init;
    pb->table.fini = pipe_fini;
    pb->table.idle = pipe_idle;
    pb->table.ctx = pb;
    c.backend[DVPP_BATCHJOB_ENGINE] = &pb->table;
    st = dvpp_device_new(&c, &pb->dev, err);
    if (st != DVPP_OK) {
        dvpp_limits_feed_fini(&pb->limits);
        dvpp_free(pb, sizeof(*pb));
        return st;
    }
    pthread_mutex_lock(&g_reg_mu);
    pb->next = g_reg;
    g_reg = pb;
    pthread_mutex_unlock(&g_reg_mu);
    *out = pb->dev;
    return DVPP_OK;
}

/* Find (and with @unlink, remove) the registry entry of @d. */
static pipe_backend *reg_find(const dvpp_device *d, bool unlink)
{
    pipe_backend **pp, *pb = NULL;

    pthread_mutex_lock(&g_reg_mu);
    for (pp = &g_reg; *pp; pp = &(*pp)->next) {
        if ((*pp)->dev == d) {
            pb = *pp;
            if (unlink)
                *pp = pb->next;
            break;
        }
    }
    pthread_mutex_unlock(&g_reg_mu);
    return pb;
}

bool dvpp_pipe_device_is(const dvpp_device *d)
{
    return d && reg_find(d, false) != NULL;
}

void dvpp_pipe_device_free(dvpp_device *d)
{
    pipe_backend *pb;

    if (!d)
        return;
    pb = reg_find(d, true);
    dvpp_device_free(d); /* runs pipe_fini per channel */
    if (pb) {
        dvpp_limits_feed_fini(&pb->limits);
        dvpp_free(pb, sizeof(*pb));
    }
}

dvpp_status dvpp_pipe_device_set_limits(dvpp_device *d, const dvpp_limits *lim,
                                        dvpp_err *err)
{
    pipe_backend *pb = reg_find(d, false);

    if (!pb || !lim)
        return dvpp_err_set(err, DVPP_EINVAL, "device", "not a pipeline device");
    dvpp_limits_feed_set(&pb->limits, lim);
    return DVPP_OK;
}

/* --- admission ---------------------------------------------------------------------- */

/* The limits @d's workers run with now (false: not a pipe device). */
static bool device_limits(const dvpp_device *d, dvpp_limits *out)
{
    pipe_backend *pb = d ? reg_find(d, false) : NULL;

    if (!pb)
        return false;
    pthread_mutex_lock(&pb->limits.mu);
    *out = pb->limits.limits;
    pthread_mutex_unlock(&pb->limits.mu);
    return true;
}

/* What the intermediates of a run of @p on @in take on its worker: the
 * plan's work_bytes from a header probe at the workers' limits. 0 when the
 * pipeline, the header or the plan is refused: the run then fails the same
 * way before it allocates anything. */
static uint64_t run_work_bytes(const dvpp_pipeline *p, const uint8_t *in, size_t len,
                               const dvpp_limits *lim)
{
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;

    if (!in || dvpp_pipeline_validate(p, lim, NULL) != DVPP_OK ||
        dvpp_pipeline_probe(p, in, len, lim, &src, NULL) != DVPP_OK ||
        dvpp_pipeline_plan_make(p, &src, &plan, NULL) != DVPP_OK)
        return 0;
    return plan.work_bytes;
}

static uint64_t add_sat64(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* --- tensor shape ----------------------------------------------------------------- */

dvpp_status dvpp_batchjob_tensor(const dvpp_pipeline *p, uint32_t n, dvpp_tensor *t,
                                 dvpp_err *err)
{
    bool fixed;
    uint32_t w = 0, h = 0;
    int unfixed_by = -1; /* index of a resize that made the size vary */
    dvpp_status st;

    if (!p || !t)
        return dvpp_err_set(err, DVPP_EINVAL, "pipeline", "no pipeline or tensor");
    if (n == 0)
        return dvpp_err_set(err, DVPP_EINVAL, "n", "a batch needs at least one item");
    st = dvpp_pipeline_validate(p, NULL, err);
    if (st != DVPP_OK)
        return st;
    if (p->output != DVPP_PIPE_OUT_TENSOR)
        return dvpp_err_set(err, DVPP_EINVAL, "output",
                            "a batch tensor needs tensor output");
    fixed = p->input == DVPP_PIPE_IN_RAW;
    if (fixed)
        w = p->raw.width, h = p->raw.height;
    for (uint32_t i = 0; i < p->nops; i++) {
        const dvpp_pipe_op *op = &p->ops[i];
        switch (op->kind) {
        case DVPP_PIPE_OP_CROP:
            fixed = true;
            w = dvpp_pipe_op_is_center_crop(op) ? op->center.w : dvpp_roi_width(&op->u.crop);
            h = dvpp_pipe_op_is_center_crop(op) ? op->center.h : dvpp_roi_height(&op->u.crop);
            break;
        case DVPP_PIPE_OP_RESIZE:
            switch (op->u.resize.mode) {
            case DVPP_RESIZE_STRETCH:
            case DVPP_RESIZE_FILL:
            case DVPP_RESIZE_LETTERBOX:
                fixed = true;
                w = op->u.resize.w, h = op->u.resize.h;
                break;
            default:
                fixed = false;
                unfixed_by = (int)i;
                break;
            }
            break;
        case DVPP_PIPE_OP_BORDER:
            w += op->u.border.left + op->u.border.right;
            h += op->u.border.top + op->u.border.bottom;
            break;
        default: /* CONVERT and FLIP keep the size */
            break;
        }
    }
    if (p->post == DVPP_PIPE_POST_AIPP) {
        dvpp_aipp_op op = p->aipp;
        uint32_t ow, oh;
        dvpp_aipp_output_size(&op, &ow, &oh);
        if (!ow || !oh) { /* the op's output follows the image's size */
            if (!fixed)
                goto varies;
            op.src_image_size_w = op.src_image_size_w ? op.src_image_size_w : w;
            op.src_image_size_h = op.src_image_size_h ? op.src_image_size_h : h;
        }
        st = dvpp_aipp_tensor(&op, n, p->aipp_layout, p->aipp_dtype, t, err);
        t->data = NULL;
        return st;
    }
    if (!fixed)
        goto varies;
    /* DVPP_PIPE_POST_NORM (validate refuses tensor output without a post). */
    st = dvpp_tensor_init(t, p->norm.dtype, p->norm.layout, n, 3, h, w, err);
    t->data = NULL;
    return st;

varies:
    if (unfixed_by >= 0) {
        char f[DVPP_ERR_FIELD_LEN];
        snprintf(f, sizeof(f), "ops[%d].resize.mode", unfixed_by);
        return dvpp_err_set(err, DVPP_EINVAL, f,
                            "resize mode %s: the output size depends on the input; "
                            "a batch tensor needs stretch, fill or letterbox",
                            dvpp_resize_mode_name(p->ops[unfixed_by].u.resize.mode));
    }
    return dvpp_err_set(err, DVPP_EINVAL, "ops",
                        "no op fixes the output size (a batch tensor needs a "
                        "stretch, fill or letterbox resize or a crop)");
}

/* --- batch jobs --------------------------------------------------------------------- */

struct dvpp_batchjob {
    dvpp_pipeline pipe;                 /* copy */
    const dvpp_pipeline *item_pipes;    /* per item, borrowed; NULL: @pipe */
    const dvpp_batchjob_input *inputs;  /* borrowed */
    size_t n;
    dvpp_tensor tensor;                 /* descriptor copy; data borrowed */
    size_t slice_bytes;
    dvpp_image *images;                 /* image jobs: per item, borrowed */
    bool strict;
    dvpp_err *errs;                     /* per item, written by its worker */
    dvpp_batch *batch;
    pthread_mutex_t mu;                 /* guards zeroed */
    bool zeroed;
    void (*done)(void *ctx);            /* optional completion notice */
    void *done_ctx;
    atomic_size_t cause;                /* lowest item failing on its own
                                           (not canceled), or SIZE_MAX */
};

static uint8_t *slice_of(const dvpp_batchjob *j, size_t i)
{
    return (uint8_t *)j->tensor.data + i * j->slice_bytes;
}

/* Zero item @i's destination: its tensor slice or its image buffer. */
static void clear_item(const dvpp_batchjob *j, size_t i)
{
    if (j->images)
        memset(j->images[i].data, 0, j->images[i].size);
    else
        memset(slice_of(j, i), 0, j->slice_bytes);
}

static dvpp_status item_fn(dvpp_task *task, void *ctx, void *worker_state,
                           dvpp_err *err)
{
    dvpp_batchjob *j = ctx;
    dvpp_worker *w = worker_state;
    size_t i = dvpp_task_index(task);
    dvpp_pipeline_out out;
    dvpp_status st;

    if (dvpp_task_canceled(task)) {
        st = dvpp_err_set(err, DVPP_ECANCELED, NULL, "item %zu canceled", i);
    } else if (!w) {
        st = dvpp_err_set(err, DVPP_EINVAL, "device", "not a pipeline device");
    } else {
        memset(&out, 0, sizeof(out));
        if (j->images) {
            out.image.data = j->images[i].data;
            out.image.size = j->images[i].size;
        } else {
            out.tensor = j->tensor;
            out.n = (uint32_t)i;
        }
        st = dvpp_pipeline_run(w, j->item_pipes ? &j->item_pipes[i] : &j->pipe,
                               j->inputs[i].data, j->inputs[i].len, &out, err);
    }
    if (st != DVPP_OK) {
        size_t seen = SIZE_MAX;
        if (err->status != st)
            err->status = st;
        j->errs[i] = *err;
        clear_item(j, i);
        /* The lowest failing item, not the first in time: the same
         * answer whatever the channel count (a strict batch runs the
         * items below its first failure to the end). */
        while (st != DVPP_ECANCELED && i < seen &&
               !atomic_compare_exchange_weak(&j->cause, &seen, i))
            ;
    } else if (j->images) {
        j->images[i] = out.image; /* the geometry the run filled */
    }
    return st;
}

/* @b (the caller's) describes the contiguous tensor @a (only the first
 * ndim entries of shape and strides are meaningful). */
static bool tensor_matches(const dvpp_tensor *a, const dvpp_tensor *b)
{
    if (a->dtype != b->dtype || a->layout != b->layout || a->n != b->n ||
        a->c != b->c || a->h != b->h || a->w != b->w || a->bytes > b->bytes ||
        a->ndim != b->ndim || a->ndim > DVPP_TENSOR_MAX_DIMS)
        return false;
    for (unsigned k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k] || a->strides[k] != b->strides[k])
            return false;
    return true;
}

/* Every item pipeline of @pipes[0..n-1] valid and making the tensor
 * @want: field "item_pipes[i]" otherwise. */
static dvpp_status check_item_pipes(const dvpp_pipeline *pipes, size_t n,
                                    const dvpp_tensor *want, dvpp_err *err)
{
    char f[DVPP_ERR_FIELD_LEN];
    dvpp_tensor t;
    dvpp_err e;

    for (size_t i = 0; i < n; i++) {
        snprintf(f, sizeof(f), "item_pipes[%zu]", i);
        if (dvpp_batchjob_tensor(&pipes[i], (uint32_t)n, &t, &e) != DVPP_OK)
            return dvpp_err_set(err, e.status, f, "%s: %s: %s", f, e.field, e.msg);
        if (!tensor_matches(want, &t) || t.bytes != want->bytes)
            return dvpp_err_set(err, DVPP_EINVAL, f,
                                "%s: makes %ux%ux%u %s %s, the batch is %ux%ux%u %s %s", f,
                                t.c, t.h, t.w, dvpp_dtype_name(t.dtype),
                                dvpp_layout_name(t.layout), want->c, want->h, want->w,
                                dvpp_dtype_name(want->dtype), dvpp_layout_name(want->layout));
    }
    return DVPP_OK;
}

static void job_release(dvpp_batchjob *j)
{
    dvpp_free(j->errs, sizeof(dvpp_err) * j->n);
    pthread_mutex_destroy(&j->mu);
    dvpp_free(j, sizeof(*j));
}

static dvpp_status start_job(dvpp_device *d, const dvpp_pipeline *p,
                             const dvpp_batchjob_input *inputs, size_t n,
                             const dvpp_tensor *t, dvpp_image *images,
                             uint64_t pixels_per_item, size_t bytes_per_item,
                             const dvpp_batchjob_opts *o, dvpp_batchjob **out,
                             dvpp_err *err);

dvpp_status dvpp_batchjob_start(dvpp_device *d, const dvpp_pipeline *p,
                                const dvpp_batchjob_input *inputs, size_t n,
                                const dvpp_tensor *t, bool strict,
                                dvpp_batchjob **out, dvpp_err *err)
{
    dvpp_batchjob_opts o = {.strict = strict};

    return dvpp_batchjob_start_opts(d, p, inputs, n, t, &o, out, err);
}

dvpp_status dvpp_batchjob_start_opts(dvpp_device *d, const dvpp_pipeline *p,
                                     const dvpp_batchjob_input *inputs, size_t n,
                                     const dvpp_tensor *t, const dvpp_batchjob_opts *o,
                                     dvpp_batchjob **out, dvpp_err *err)
{
    dvpp_tensor want;
    dvpp_status st;

    if (!out)
        return dvpp_err_set(err, DVPP_EINVAL, "out", "no output handle");
    *out = NULL;
    if (!d || !dvpp_pipe_device_is(d))
        return dvpp_err_set(err, DVPP_EINVAL, "device",
                            "batch jobs need a device from dvpp_pipe_device_new");
    if (n == 0 || n > UINT32_MAX)
        return dvpp_err_set(err, DVPP_EINVAL, "n", "%zu items", n);
    if (!inputs)
        return dvpp_err_set(err, DVPP_EINVAL, "inputs", "no inputs");
    for (size_t i = 0; i < n; i++)
        if (!inputs[i].data && inputs[i].len)
            return dvpp_err_set(err, DVPP_EINVAL, "inputs", "input %zu has no data", i);
    st = dvpp_batchjob_tensor(p, (uint32_t)n, &want, err);
    if (st == DVPP_OK && o->item_pipes)
        st = check_item_pipes(o->item_pipes, n, &want, err);
    if (st != DVPP_OK)
        return st;
    if (!t || !t->data || !tensor_matches(&want, t))
        return dvpp_err_set(err, DVPP_EINVAL, "tensor",
                            "the tensor must be %ux%ux%ux%u %s %s with data",
                            want.n, want.c, want.h, want.w, dvpp_dtype_name(want.dtype),
                            dvpp_layout_name(want.layout));
    return start_job(d, p, inputs, n, t, NULL, want.c * (uint64_t)want.h * want.w,
                     want.bytes / n, o, out, err);
}

static void batch_done(void *ctx, dvpp_batch *b, dvpp_status status)
{
    dvpp_batchjob *j = ctx;

    (void)b, (void)status;
    if (j->done)
        j->done(j->done_ctx);
}

/* The common part of both starts: the job record and its dvpp_batch. */
static dvpp_status start_job(dvpp_device *d, const dvpp_pipeline *p,
                             const dvpp_batchjob_input *inputs, size_t n,
                             const dvpp_tensor *t, dvpp_image *images,
                             uint64_t pixels_per_item, size_t bytes_per_item,
                             const dvpp_batchjob_opts *o, dvpp_batchjob **out,
                             dvpp_err *err)
{
    dvpp_batch_desc desc;
    dvpp_batchjob *j;
    dvpp_limits lim;
    uint64_t work = 0;
    size_t errs_bytes;
    dvpp_status st;

    if (!dvpp_size_mul(sizeof(dvpp_err), n, &errs_bytes))
        return dvpp_err_set(err, DVPP_EOVERFLOW, "n", "too many items");
    j = dvpp_calloc(1, sizeof(*j));
    if (!j)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "batch job");
    j->errs = dvpp_calloc(n, sizeof(dvpp_err));
    if (!j->errs) {
        dvpp_free(j, sizeof(*j));
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "batch job item status");
    }
    if (pthread_mutex_init(&j->mu, NULL) != 0) {
        dvpp_free(j->errs, errs_bytes);
        dvpp_free(j, sizeof(*j));
        return dvpp_err_set(err, DVPP_ESYS, NULL, "pthread_mutex_init");
    }
    j->pipe = *p;
    j->item_pipes = o->item_pipes;
    j->inputs = inputs;
    j->n = n;
    if (t)
        j->tensor = *t;
    j->images = images;
    j->slice_bytes = bytes_per_item;
    j->strict = o->strict;
    j->done = o->done;
    j->done_ctx = o->ctx;
    atomic_init(&j->cause, SIZE_MAX);

    /* An item in flight holds its worker's intermediates too: the largest
     * any input's plan needs. */
    if (device_limits(d, &lim))
        for (size_t i = 0; i < n; i++) {
            uint64_t wb = run_work_bytes(o->item_pipes ? &o->item_pipes[i] : p,
                                         inputs[i].data, inputs[i].len, &lim);
            work = wb > work ? wb : work;
        }
    memset(&desc, 0, sizeof(desc));
    desc.engine = DVPP_BATCHJOB_ENGINE;
    desc.n = n;
    desc.fn = item_fn;
    desc.ctx = j;
    desc.strict = o->strict;
    desc.pixels_per_item = pixels_per_item;
    /* A tensor whose bytes the caller holds already is not charged twice. */
    desc.bytes_per_item = add_sat64(o->output_held ? 0 : bytes_per_item, work);
    desc.deadline_ns = o->deadline_ns;
    desc.done = batch_done;
    st = dvpp_batch_new(d, &desc, &j->batch, err);
    if (st != DVPP_OK) {
        job_release(j);
        return st;
    }
    *out = j;
    return DVPP_OK;
}

dvpp_status dvpp_batchjob_start_images(dvpp_device *d, const dvpp_pipeline *p,
                                       const dvpp_batchjob_input *inputs, size_t n,
                                       dvpp_image *images, bool strict,
                                       dvpp_batchjob **out, dvpp_err *err)
{
    dvpp_batchjob_opts o = {.strict = strict};
    size_t largest = 0;
    dvpp_status st;

    if (!out)
        return dvpp_err_set(err, DVPP_EINVAL, "out", "no output handle");
    *out = NULL;
    if (!d || !dvpp_pipe_device_is(d))
        return dvpp_err_set(err, DVPP_EINVAL, "device",
                            "batch jobs need a device from dvpp_pipe_device_new");
    if (n == 0 || n > UINT32_MAX || !inputs || !images)
        return dvpp_err_set(err, DVPP_EINVAL, "n", "need n > 0 inputs and images");
    st = dvpp_pipeline_validate(p, NULL, err);
    if (st != DVPP_OK)
        return st;
    if (p->output != DVPP_PIPE_OUT_IMAGE || p->encoding != DVPP_PIPE_ENC_NONE)
        return dvpp_err_set(err, DVPP_EINVAL, "output",
                            "an image batch needs unencoded image output");
    for (size_t i = 0; i < n; i++) {
        if ((!inputs[i].data && inputs[i].len) || !images[i].data || !images[i].size)
            return dvpp_err_set(err, DVPP_EINVAL, "images",
                                "input or image %zu has no data", i);
        if (images[i].size > largest)
            largest = images[i].size;
    }
    /* Admission counts each item as its largest buffer. */
    return start_job(d, p, inputs, n, NULL, images, largest, largest, &o, out, err);
}

uint64_t dvpp_batchjob_id(const dvpp_batchjob *j)
{
    return j ? dvpp_batch_id(j->batch) : 0;
}

void dvpp_batchjob_progress(dvpp_batchjob *j, dvpp_batch_progress *p)
{
    dvpp_batch_get_progress(j->batch, p);
}

dvpp_status dvpp_batchjob_item_status(dvpp_batchjob *j, size_t i, dvpp_err *err)
{
    dvpp_status st = dvpp_batch_item_status(j->batch, i);

    if (st == DVPP_OK || st == DVPP_EBUSY)
        return st;
    if (i >= j->n)
        return dvpp_err_set(err, st, "index", "item %zu of %zu", i, j->n);
    /* Completed: the worker wrote errs[i] before the device recorded the
     * status under its lock, which dvpp_batch_item_status took too. */
    if (j->errs[i].status == st) {
        if (err)
            *err = j->errs[i];
        return st;
    }
    if (st == DVPP_ECANCELED)
        return dvpp_err_set(err, st, NULL, "item %zu canceled before it ran", i);
    if (st == DVPP_ETIMEDOUT)
        return dvpp_err_set(err, st, NULL, "item %zu timed out before it ran", i);
    return dvpp_err_set(err, st, NULL, "item %zu failed", i);
}

size_t dvpp_batchjob_cause(dvpp_batchjob *j)
{
    return atomic_load(&j->cause);
}

dvpp_status dvpp_batchjob_cancel(dvpp_batchjob *j)
{
    return dvpp_batch_cancel(j->batch);
}

/* After the batch finished: zero every slice whose item did not complete
 * OK (those that failed while running were zeroed by their worker already;
 * this covers items canceled before they ran). Once per job. */
static void zero_failed(dvpp_batchjob *j)
{
    pthread_mutex_lock(&j->mu);
    if (!j->zeroed) {
        for (size_t i = 0; i < j->n; i++)
            if (dvpp_batch_item_status(j->batch, i) != DVPP_OK &&
                j->errs[i].status == DVPP_OK)
                clear_item(j, i);
        j->zeroed = true;
    }
    pthread_mutex_unlock(&j->mu);
}

dvpp_status dvpp_batchjob_wait(dvpp_batchjob *j, dvpp_err *err)
{
    dvpp_status st = dvpp_batch_wait(j->batch, err);

    zero_failed(j);
    return st;
}

void dvpp_batchjob_free(dvpp_batchjob *j)
{
    if (!j)
        return;
    dvpp_batch_free(j->batch); /* cancels, waits */
    job_release(j);
}

/* --- single jobs ------------------------------------------------------------------ */

static dvpp_status pipejob_fn(dvpp_task *task, void *ctx, void *worker_state,
                              dvpp_err *err)
{
    dvpp_pipejob *pj = ctx;

    pj->started_ns = dvpp_now_ns();
    if (!worker_state)
        return dvpp_err_set(err, DVPP_EINVAL, "device", "not a pipeline device");
    if (dvpp_task_canceled(task))
        return dvpp_err_set(err, DVPP_ECANCELED, NULL, "job canceled");
    return dvpp_pipeline_run(worker_state, pj->pipe, pj->input, pj->len, pj->out, err);
}

static void pipejob_done(void *ctx, uint64_t ticket, dvpp_status status,
                         const dvpp_err *err)
{
    dvpp_pipejob *pj = ctx;

    (void)ticket;
    if (pj->done)
        pj->done(pj->ctx, status, err);
}

dvpp_status dvpp_pipejob_submit(dvpp_stream *s, dvpp_pipejob *pj, uint64_t *ticket,
                                dvpp_err *err)
{
    dvpp_limits lim;
    dvpp_job job;

    if (!s || !pj || !pj->pipe || !pj->input || !pj->out)
        return dvpp_err_set(err, DVPP_EINVAL, "job", "incomplete pipeline job");
    memset(&job, 0, sizeof(job));
    job.engine = DVPP_BATCHJOB_ENGINE;
    job.fn = pipejob_fn;
    job.done = pipejob_done;
    job.ctx = pj;
    job.pixels = pj->pixels;
    job.bytes = pj->bytes;
    if (device_limits(dvpp_stream_device(s), &lim))
        job.bytes = add_sat64(job.bytes, run_work_bytes(pj->pipe, pj->input, pj->len, &lim));
    job.deadline_ns = pj->deadline_ns;
    pj->started_ns = 0;
    return dvpp_device_submit(s, &job, ticket, err);
}
