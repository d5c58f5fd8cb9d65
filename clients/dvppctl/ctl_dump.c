/* ctl_dump: dvppctl preprocess --dump DIR. The preprocess flags become the
 * pipeline the daemon runs for them (ctl_preprocess_pipeline); it runs here
 * on one worker with a dvpp_dump's watch, so DIR gets the very files
 * dvppd's ?dump=1 writes for the same pipeline (same writer, same run):
 * NN-STAGE.png/.npy, tensor.npy and manifest.json. The tensor also goes to
 * -o. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_remote.h"
#include "device/dvpp_dump.h"
#include "dvpp_npy.h"

/* A local dump's bound: the daemon's default dump.max_bytes. */
#define CTL_DUMP_MAX_BYTES ((uint64_t)1 << 30)

/* The run's state: everything the cleanup releases. */
typedef struct dump_run {
    dvpp_pipeline p;
    dvpp_buf file;
    dvpp_dump dump;
    dvpp_worker w;
    dvpp_pipeline_out out;
    uint8_t *npy;           /* .npy header + tensor */
    size_t npy_len;
    char *spec;             /* the JSON spec of the pipeline */
} dump_run;

/* The tensor of @plan with its .npy header in front, into r->npy. */
static dvpp_status tensor_alloc(dump_run *r, const dvpp_pipeline_plan *plan, dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    dvpp_tensor *t = &r->out.tensor;
    size_t hl;
    dvpp_status st = dvpp_tensor_init(t, plan->dtype, plan->layout, 1, plan->c, plan->h,
                                      plan->w, err);

    if (st != DVPP_OK)
        return st;
    hl = dvpp_npy_header(hdr, dvpp_dtype_npy(t->dtype), t->shape, t->ndim);
    r->npy_len = hl + t->bytes;
    r->npy = malloc(r->npy_len);
    if (!r->npy)
        return dvpp_err_set(err, DVPP_ENOMEM, "tensor", "out of memory");
    memcpy(r->npy, hdr, hl);
    t->data = r->npy + hl;
    r->out.n = 0;
    return DVPP_OK;
}

static const char *input_name(const dvpp_pipe_source *src)
{
    return src->is_jpeg ? "jpeg" : "png";
}

/* Plan, run and write; the cleanup is the caller's. */
static dvpp_status dump_steps(dump_run *r, const ctl_args *a, dvpp_err *err)
{
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    dvpp_dump_meta m;
    ctl_job j;
    dvpp_status st, run;

    st = a->preset ? ctl_preset_pipeline(a, &r->p, err)
                   : ctl_preprocess_pipeline(a, &r->p, err);
    if (st == DVPP_OK)
        st = dvpp_buf_read_file(&r->file, a->inputs[0], a->lim.max_encoded_bytes, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&r->p, &a->lim, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_probe(&r->p, r->file.data, r->file.len, &a->lim, &src, err);
    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(&r->p, &src, &plan, err);
    if (st == DVPP_OK)
        st = tensor_alloc(r, &plan, err);
    if (st == DVPP_OK)
        st = dvpp_dump_open(&r->dump, AT_FDCWD, a->dump, true, CTL_DUMP_MAX_BYTES, err);
    if (st != DVPP_OK)
        return st;
    memset(&j, 0, sizeof(j));
    j.pipe = r->p;
    j.kind = DVPPC_TENSOR;
    r->spec = ctl_spec_json(&j);
    r->p.watch = dvpp_dump_watch(&r->dump);
    run = dvpp_pipeline_run(&r->w, &r->p, r->file.data, r->file.len, &r->out, err);
    if (run == DVPP_OK)
        dvpp_dump_bytes(&r->dump, "tensor.npy", "tensor", NULL, 0, r->npy, r->npy_len, NULL);
    m = (dvpp_dump_meta){
        .request = a->inputs[0],
        .spec_json = r->spec,
        .input_format = input_name(&src),
        .input_width = src.is_jpeg ? src.jpeg.width : src.width,
        .input_height = src.is_jpeg ? src.jpeg.height : src.height,
        .input_bytes = r->file.len,
        .tensor = run == DVPP_OK ? &r->out.tensor : NULL,
        .geom = run == DVPP_OK ? &r->out.geom : NULL,
        .error = run == DVPP_OK ? NULL : err->msg,
    };
    st = dvpp_dump_finish(&r->dump, &m, run == DVPP_OK ? err : NULL);
    if (run != DVPP_OK)
        return run;
    if (st == DVPP_OK && a->out)
        st = dvpp_write_file(a->out, r->npy, r->npy_len, err);
    return st;
}

int ctl_dump_preprocess(const ctl_args *a)
{
    dump_run *r = calloc(1, sizeof(*r));
    dvpp_err err;
    dvpp_status st;

    if (!r) {
        fprintf(stderr, "dvppctl preprocess: out of memory\n");
        return 1;
    }
    dvpp_err_clear(&err);
    dvpp_buf_init(&r->file);
    dvpp_buf_init(&r->out.encoded);
    r->dump.dirfd = -1;
    dvpp_worker_init(&r->w, &a->lim);
    st = dump_steps(r, a, &err);
    dvpp_dump_close(&r->dump);
    dvpp_worker_fini(&r->w);
    dvpp_buf_fini(&r->out.encoded);
    dvpp_buf_fini(&r->file);
    free(r->npy);
    free(r->spec);
    free(r);
    return st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
}
