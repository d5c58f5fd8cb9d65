/* bench_norm: time dvpp_norm (the fused u8 -> tensor stage) at 224x224x3.
 *
 * Cases (single thread, buffers allocated once and reused):
 *   f32_nchw      RGB u8 HWC -> f32 NCHW, ImageNet AFFINE (x/255-mean)/std
 *   f16_nc1hwc0   the same -> f16 NC1HWC0 (C0 16, spare lanes 0)
 *   f32_nhwc      the same -> f32 NHWC
 *   f16_nchw, f16_nhwc, f32_nc1hwc0, i8_nchw, i8_nc1hwc0
 *                 the other dtype/layout pairs (i8 from the same tables,
 *                 rounded and saturated)
 *   memcpy_f32    memcpy of the f32 NCHW output bytes (602,112 B)
 *   memcpy_f16c0  memcpy of the f16 NC1HWC0 output bytes (1,605,632 B)
 *
 * Method (reference/anchors.md): 2 warm-up calls, a loop count calibrated
 * to about @target seconds, then @runs timed runs; one JSON line per case:
 *   {"case":..,"level":..,"bytes":..,"gb_s_median":..,"runs":[GB/s..]}
 * GB/s counts OUTPUT bytes (1e9 B/s). Nothing here judges a time.
 *
 *   bench_norm [--target S] [--runs N] [--case C]...
 * DVPP_SIMD caps the SIMD level as everywhere else.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dvpp_cpu.h"
#include "dvpp_norm.h"
#include "dvpp_tensor.h"

#include "bench_util.h"

#define MAX_RUNS 64
#define WARMUP 2
#define W 224
#define H 224

typedef struct bench_case {
    const char *name;
    dvpp_dtype dt;
    dvpp_layout layout;
    bool is_memcpy;
} bench_case;

static const bench_case k_cases[] = {
    {"f32_nchw", DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, false},
    {"f16_nc1hwc0", DVPP_DTYPE_F16, DVPP_LAYOUT_NC1HWC0, false},
    {"f32_nhwc", DVPP_DTYPE_F32, DVPP_LAYOUT_NHWC, false},
    {"f16_nchw", DVPP_DTYPE_F16, DVPP_LAYOUT_NCHW, false},
    {"f16_nhwc", DVPP_DTYPE_F16, DVPP_LAYOUT_NHWC, false},
    {"f32_nc1hwc0", DVPP_DTYPE_F32, DVPP_LAYOUT_NC1HWC0, false},
    {"i8_nchw", DVPP_DTYPE_I8, DVPP_LAYOUT_NCHW, false},
    {"i8_nc1hwc0", DVPP_DTYPE_I8, DVPP_LAYOUT_NC1HWC0, false},
    {"memcpy_f32", DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, true},
    {"memcpy_f16c0", DVPP_DTYPE_F16, DVPP_LAYOUT_NC1HWC0, true},
};
#define N_CASES (sizeof(k_cases) / sizeof(k_cases[0]))

typedef struct bench_job {
    const bench_case *c;
    uint8_t *src;
    dvpp_norm_plan plan;
    dvpp_tensor t;
    void *copy_from;
    dvpp_err err;
} bench_job;

static volatile uint8_t g_sink;

static int call(bench_job *j)
{
    if (j->c->is_memcpy) {
        memcpy(j->t.data, j->copy_from, j->t.bytes);
        g_sink = ((volatile uint8_t *)j->t.data)[j->t.bytes - 1];
        return 0;
    }
    return dvpp_norm_run(&j->plan, j->src, 3 * W, W, H, &j->t, 0, 0, 0,
                         &j->err) == DVPP_OK ? 0 : -1;
}

static double timed(bench_job *j, long n)
{
    double t0 = bench_now_s();
    for (long i = 0; i < n; i++)
        call(j);
    return (bench_now_s() - t0) / (double)n;
}

static int job_open(bench_job *j, const bench_case *c)
{
    dvpp_norm_params p;

    memset(j, 0, sizeof(*j));
    j->c = c;
    memset(&p, 0, sizeof(p));
    p.kind = DVPP_NORM_AFFINE;
    p.channels = 3;
    p.src_channels = 3;
    p.div = 255;
    for (unsigned i = 0; i < 3; i++) {
        static const double mean[3] = {0.485, 0.456, 0.406};
        static const double stdv[3] = {0.229, 0.224, 0.225};
        p.src_index[i] = (uint8_t)i;
        p.mean[i] = mean[i];
        p.std[i] = stdv[i];
    }
    if (dvpp_norm_plan_init(&j->plan, &p, c->dt, c->layout, &j->err) ||
        dvpp_tensor_init(&j->t, c->dt, c->layout, 1, 3, H, W, &j->err))
        return -1;
    j->src = aligned_alloc(64, 3 * W * H);
    j->t.data = aligned_alloc(64, (j->t.bytes + 63) / 64 * 64);
    j->copy_from = aligned_alloc(64, (j->t.bytes + 63) / 64 * 64);
    if (!j->src || !j->t.data || !j->copy_from)
        return -1;
    for (size_t i = 0; i < 3 * W * H; i++)
        j->src[i] = (uint8_t)(i * 7 + i / 5791);
    memset(j->t.data, 0, j->t.bytes);
    memset(j->copy_from, 1, j->t.bytes);
    return 0;
}

static void job_close(bench_job *j)
{
    free(j->src);
    free(j->t.data);
    free(j->copy_from);
}

static int measure(const bench_case *c, double target, int runs)
{
    bench_job j;
    double per[MAX_RUNS], sorted[MAX_RUNS];
    long n = 1;

    if (job_open(&j, c) != 0) {
        fprintf(stderr, "bench_norm: %s: setup failed: %s\n", c->name,
                j.err.msg);
        job_close(&j);
        return -1;
    }
    for (int i = 0; i < WARMUP; i++) {
        if (call(&j) != 0) {
            fprintf(stderr, "bench_norm: %s: %s\n", c->name, j.err.msg);
            job_close(&j);
            return -1;
        }
    }
    while (timed(&j, n) * (double)n < target / 10)
        n *= 2;
    n = (long)(target / timed(&j, n)) + 1;
    for (int r = 0; r < runs; r++) {
        per[r] = (double)j.t.bytes / timed(&j, n) / 1e9;
        sorted[r] = per[r];
    }
    qsort(sorted, (size_t)runs, sizeof(double), bench_cmp_double);
    printf("{\"case\":\"%s\",\"width\":%d,\"height\":%d,\"level\":\"%s\","
           "\"bytes\":%zu,\"calls_per_run\":%ld,\"gb_s_median\":%.3f,"
           "\"runs\":[",
           c->name, W, H,
           c->is_memcpy ? "memcpy" : dvpp_simd_name(j.plan.level), j.t.bytes,
           n, sorted[runs / 2]);
    for (int r = 0; r < runs; r++)
        printf("%s%.3f", r ? "," : "", per[r]);
    printf("]}\n");
    fflush(stdout);
    job_close(&j);
    return 0;
}

int main(int argc, char **argv)
{
    const char *only[N_CASES];
    size_t n_only = 0;
    double target = 0.5;
    int runs = 7, rc = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
            target = atof(argv[++i]);
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc &&
                   n_only < N_CASES) {
            only[n_only++] = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_norm [--target S] [--runs N] "
                            "[--case C]...\n");
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || target <= 0) {
        fprintf(stderr, "bench_norm: runs 1..%d, target > 0\n", MAX_RUNS);
        return 2;
    }
    for (size_t c = 0; c < N_CASES; c++) {
        bool want = n_only == 0;
        for (size_t i = 0; i < n_only; i++)
            want = want || strcmp(only[i], k_cases[c].name) == 0;
        if (want && measure(&k_cases[c], target, runs) != 0)
            rc = 1;
    }
    return rc;
}
