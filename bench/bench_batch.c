/* bench_batch: a whole batch job as the daemon runs one: 64 JPEGs (the same
 * 1920x1080 photo, read once; 64 inputs point at the same bytes) ->
 * decode -> stretch resize 224x224 (cv2 bilinear) -> ImageNet normalise ->
 * one 64x3x224x224 f32 NCHW tensor, on a pipe device with 1 or 2 VPC
 * channels, exact decode or decode.shrink_on_load (DCT scaling).
 *   dvppd_c1_exact  dvppd_c2_exact  dvppd_c1_shrink  dvppd_c2_shrink
 * Per case: the device and the tensor are made once, 1 warm-up batch, a
 * loop calibrated to --target s, --runs runs; one JSON line per case with
 * images/s (median and every run).
 *   bench_batch [--target S] [--runs N] [--photo PATH] [--case NAME]...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/dvpp_batchjob.h"
#include "device/dvpp_pipeline.h"

#include "bench_util.h"

#define MAX_RUNS 64
#define BATCH 64

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

static int make_pipeline(dvpp_pipeline *p, bool shrink)
{
    dvpp_pipe_op op;
    dvpp_err err;

    dvpp_pipeline_init(p);
    p->decode.shrink_on_load = shrink;
    memset(&op, 0, sizeof op);
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = DVPP_RESIZE_STRETCH;
    op.u.resize.w = 224;
    op.u.resize.h = 224;
    dvpp_resize_opts_init(&op.u.resize.opts); /* cv2 parity, bilinear */
    if (dvpp_pipeline_add_op(p, &op, &err) != DVPP_OK)
        goto fail;
    p->post = DVPP_PIPE_POST_NORM;
    dvpp_norm_spec_init(&p->norm);
    p->norm.mean[0] = 0.485; p->norm.mean[1] = 0.456; p->norm.mean[2] = 0.406;
    p->norm.std[0] = 0.229;  p->norm.std[1] = 0.224;  p->norm.std[2] = 0.225;
    p->norm.scale = 255.0;
    p->norm.bgr = false;
    p->norm.layout = DVPP_LAYOUT_NCHW;
    p->norm.dtype = DVPP_DTYPE_F32;
    p->output = DVPP_PIPE_OUT_TENSOR;
    if (dvpp_pipeline_validate(p, NULL, &err) != DVPP_OK)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "bench_batch: pipeline: %s %s: %s\n", dvpp_status_name(err.status),
            err.field, err.msg);
    return 1;
}

typedef struct job {
    dvpp_device *dev;
    dvpp_pipeline p;
    dvpp_batchjob_input in[BATCH];
    dvpp_tensor t;
} job;

static int run_once(job *j)
{
    dvpp_batchjob *b = NULL;
    dvpp_err err;
    dvpp_status st;

    st = dvpp_batchjob_start(j->dev, &j->p, j->in, BATCH, &j->t, true, &b, &err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_wait(b, &err);
    dvpp_batchjob_free(b);
    if (st != DVPP_OK) {
        fprintf(stderr, "bench_batch: batch: %s %s: %s\n", dvpp_status_name(st),
                err.field, err.msg);
        return 1;
    }
    return 0;
}

/* Where the channels' time went over the timed runs (device counters):
 * item_ms, each item's time in its task function (it grows with channels
 * when they slow each other down: memory, shared caches); busy, the share
 * of channel time spent in items (the rest: starting and waiting for each
 * batch, and the tail where one channel finishes the last item alone).
 * 2 x busy2/busy1 x item_ms1/item_ms2 is the scaling from 1 to 2
 * channels. */
static void print_where(const dvpp_engine_counters *a, const dvpp_engine_counters *b,
                        double wall, uint32_t channels)
{
    uint64_t items = b->done - a->done;
    double run_s = (double)(b->run_ns - a->run_ns) / 1e9;

    if (!items || wall <= 0)
        return;
    printf(", \"item_ms\": %.3f, \"busy\": %.4f", run_s * 1e3 / (double)items,
           run_s / (wall * channels));
}

static int bench_case(const char *name, uint32_t channels, bool shrink,
                      const uint8_t *jpeg, size_t len, double target, int runs)
{
    job j;
    dvpp_err err;
    double per[MAX_RUNS], sorted[MAX_RUNS], t0, dt, wall;
    dvpp_device_counters c0, c1;
    long n = 1, iters;
    int rc = 0;

    memset(&j, 0, sizeof j);
    if (make_pipeline(&j.p, shrink))
        return 1;
    for (int i = 0; i < BATCH; i++) {
        j.in[i].data = jpeg;
        j.in[i].len = len;
    }
    if (dvpp_batchjob_tensor(&j.p, BATCH, &j.t, &err) != DVPP_OK) {
        fprintf(stderr, "bench_batch: tensor: %s\n", err.msg);
        return 1;
    }
    j.t.data = aligned_alloc(64, (j.t.bytes + 63) / 64 * 64);
    if (!j.t.data)
        return 1;
    memset(j.t.data, 0, j.t.bytes);
    if (dvpp_pipe_device_new(NULL, channels, NULL, &j.dev, &err) != DVPP_OK) {
        fprintf(stderr, "bench_batch: device: %s %s\n", dvpp_status_name(err.status), err.msg);
        free(j.t.data);
        return 1;
    }
    rc |= run_once(&j); /* warm-up: grows every worker's buffers */
    if (rc)
        goto out;
    for (;;) {
        t0 = bench_now_s();
        for (long i = 0; i < n; i++)
            rc |= run_once(&j);
        dt = bench_now_s() - t0;
        if (rc || dt >= 0.2 || dt >= target)
            break;
        n *= 2;
    }
    if (rc)
        goto out;
    iters = (long)(n * target / dt + 0.5);
    if (iters < 1)
        iters = 1;
    dvpp_device_get_counters(j.dev, &c0);
    wall = 0;
    for (int r = 0; r < runs; r++) {
        t0 = bench_now_s();
        for (long i = 0; i < iters; i++)
            rc |= run_once(&j);
        dt = bench_now_s() - t0;
        wall += dt;
        per[r] = BATCH / (dt / iters);
    }
    dvpp_device_get_counters(j.dev, &c1);
    memcpy(sorted, per, sizeof(double) * (size_t)runs);
    qsort(sorted, (size_t)runs, sizeof(double), bench_cmp_double);
    printf("{\"case\": \"%s\", \"img_s_median\": %.1f, \"batches_per_run\": %ld, \"runs\": [",
           name, sorted[runs / 2], iters);
    for (int r = 0; r < runs; r++)
        printf("%s%.1f", r ? ", " : "", per[r]);
    printf("]");
    print_where(&c0.engine[DVPP_BATCHJOB_ENGINE], &c1.engine[DVPP_BATCHJOB_ENGINE], wall,
                channels);
    printf("}\n");
    fflush(stdout);
out:
    dvpp_pipe_device_free(j.dev);
    free(j.t.data);
    return rc;
}

static const struct {
    const char *name;
    uint32_t channels;
    bool shrink;
} CASES[] = {
    {"dvppd_c1_exact", 1, false},
    {"dvppd_c2_exact", 2, false},
    {"dvppd_c1_shrink", 1, true},
    {"dvppd_c2_shrink", 2, true},
};
#define NCASES (sizeof CASES / sizeof CASES[0])

int main(int argc, char **argv)
{
    double target = 0.5;
    int runs = 5, rc = 0, any = 0;
    const char *photo = ".cache/testdata/photos/photo1080.jpg";
    bool want[NCASES] = {0};
    uint8_t *jpeg;
    size_t len = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--target") == 0 && i + 1 < argc)
            target = atof(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--photo") == 0 && i + 1 < argc)
            photo = argv[++i];
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            const char *c = argv[++i];
            size_t k;
            for (k = 0; k < NCASES; k++)
                if (strcmp(c, CASES[k].name) == 0)
                    break;
            if (k == NCASES) {
                fprintf(stderr, "bench_batch: unknown case %s\n", c);
                return 2;
            }
            want[k] = true;
            any = 1;
        } else {
            fprintf(stderr, "usage: bench_batch [--target S] [--runs N] [--photo PATH] "
                            "[--case NAME]...\n");
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || target <= 0) {
        fprintf(stderr, "bench_batch: bad --runs or --target\n");
        return 2;
    }
    jpeg = read_file(photo, &len);
    if (!jpeg) {
        fprintf(stderr, "bench_batch: cannot read %s\n", photo);
        return 1;
    }
    for (size_t k = 0; k < NCASES; k++)
        if (!any || want[k])
            rc |= bench_case(CASES[k].name, CASES[k].channels, CASES[k].shrink, jpeg, len,
                             target, runs);
    free(jpeg);
    return rc;
}
