/* ctl_local: preprocess's local run of the daemon's own pipeline, the one
 * --preset, --dump and --trace share (ctl_preset_run.c, ctl_dump.c,
 * ctl_trace.c): the pipeline of the preset or of the preprocess flags
 * (what --socket would send), the input read, validated, probed and
 * planned as dvppd does it, the tensor behind its .npy header (dvppd's
 * answer, byte for byte), then one run on a worker of the call's own,
 * watched by whatever the caller put in l->p.watch. */
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "device/dvpp_device.h"
#include "dvpp_npy.h"

void ctl_local_init(ctl_local *l, const ctl_args *a)
{
    memset(l, 0, sizeof(*l));
    dvpp_buf_init(&l->file);
    dvpp_buf_init(&l->out.encoded);
    dvpp_worker_init(&l->w, &a->lim);
}

void ctl_local_fini(ctl_local *l)
{
    dvpp_worker_fini(&l->w);
    dvpp_buf_fini(&l->out.encoded);
    dvpp_buf_fini(&l->file);
    free(l->npy);
    l->npy = NULL;
}

/* The tensor of @plan behind its .npy header, into l->npy. */
static dvpp_status tensor_alloc(ctl_local *l, const dvpp_pipeline_plan *plan, dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    dvpp_tensor *t = &l->out.tensor;
    size_t hl;
    dvpp_status st = dvpp_tensor_init(t, plan->dtype, plan->layout, 1, plan->c, plan->h,
                                      plan->w, err);

    if (st != DVPP_OK)
        return st;
    hl = dvpp_npy_header(hdr, dvpp_dtype_npy(t->dtype), t->shape, t->ndim);
    l->npy_len = hl + t->bytes;
    l->npy = calloc(1, l->npy_len);
    if (!l->npy)
        return dvpp_err_set(err, DVPP_ENOMEM, "tensor", "out of memory");
    memcpy(l->npy, hdr, hl);
    t->data = l->npy + hl;
    l->out.n = 0;
    return DVPP_OK;
}

dvpp_status ctl_local_prepare(ctl_local *l, const ctl_args *a, dvpp_err *err)
{
    dvpp_pipeline_plan plan;
    dvpp_status st = a->preset ? ctl_preset_pipeline(a, &l->p, err)
                               : ctl_preprocess_pipeline(a, &l->p, err);

    l->read_t0 = dvpp_now_ns();
    if (st == DVPP_OK)
        st = dvpp_buf_read_file(&l->file, a->inputs[0], a->lim.max_encoded_bytes, err);
    l->read_t1 = dvpp_now_ns();
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&l->p, &a->lim, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_probe(&l->p, l->file.data, l->file.len, &a->lim, &l->src, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(&l->p, &l->src, &plan, err);
    return st == DVPP_OK ? tensor_alloc(l, &plan, err) : st;
}

dvpp_status ctl_local_run(ctl_local *l, dvpp_err *err)
{
    return dvpp_pipeline_run(&l->w, &l->p, l->file.data, l->file.len, &l->out, err);
}
