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

/* A local dump's bound: the daemon's default dump.max_bytes. */
#define CTL_DUMP_MAX_BYTES ((uint64_t)1 << 30)

/* The run's state: everything the cleanup releases. */
typedef struct dump_run {
    ctl_local l;
    dvpp_dump dump;
    char *spec;             /* the JSON spec of the pipeline */
} dump_run;

static const char *input_name(const dvpp_pipe_source *src)
{
    return src->is_jpeg ? "jpeg" : "png";
}

/* Plan, run and write; the cleanup is the caller's. */
static dvpp_status dump_steps(dump_run *r, const ctl_args *a, dvpp_err *err)
{
    ctl_local *l = &r->l;
    const dvpp_pipe_source *src = &l->src;
    dvpp_dump_meta m;
    ctl_job j;
    dvpp_status st, run;

    st = ctl_local_prepare(l, a, err);
    if (st == DVPP_OK)
        st = dvpp_dump_open(&r->dump, AT_FDCWD, a->dump, true, CTL_DUMP_MAX_BYTES, err);
    if (st != DVPP_OK)
        return st;
    memset(&j, 0, sizeof(j));
    j.pipe = l->p;
    j.kind = DVPPC_TENSOR;
    r->spec = ctl_spec_json(&j);
    l->p.watch = dvpp_dump_watch(&r->dump);
    run = ctl_local_run(l, err);
    if (run == DVPP_OK)
        dvpp_dump_bytes(&r->dump, "tensor.npy", "tensor", NULL, 0, l->npy, l->npy_len, NULL);
    m = (dvpp_dump_meta){
        .request = a->inputs[0],
        .spec_json = r->spec,
        .input_format = input_name(src),
        .input_width = src->is_jpeg ? src->jpeg.width : src->width,
        .input_height = src->is_jpeg ? src->jpeg.height : src->height,
        .input_bytes = l->file.len,
        .tensor = run == DVPP_OK ? &l->out.tensor : NULL,
        .geom = run == DVPP_OK ? &l->out.geom : NULL,
        .error = run == DVPP_OK ? NULL : err->msg,
    };
    st = dvpp_dump_finish(&r->dump, &m, run == DVPP_OK ? err : NULL);
    if (run != DVPP_OK)
        return run;
    if (st == DVPP_OK && a->out)
        st = dvpp_write_file(a->out, l->npy, l->npy_len, err);
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
    ctl_local_init(&r->l, a);
    r->dump.dirfd = -1;
    st = dump_steps(r, a, &err);
    dvpp_dump_close(&r->dump);
    ctl_local_fini(&r->l);
    free(r->spec);
    free(r);
    return st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
}
