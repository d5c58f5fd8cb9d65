/* bench_csc: time libdvpp's colour conversion (VPC CSC) at 1920x1080.
 *
 * Cases (single thread, buffers allocated once and reused, one scratch
 * reused across calls, as a worker does):
 *   nv12_rgb    NV12 -> RGB, BT.601 narrow (cv2 COLOR_YUV2RGB_NV12)
 *   i420_rgb    I420 -> RGB, BT.601 narrow (cv2 COLOR_YUV2RGB_I420)
 *   nv12_bgra   NV12 -> BGRA (cv2 COLOR_YUV2BGRA_NV12)
 *   rgb_i420    RGB -> I420 (cv2 COLOR_RGB2YUV_I420)
 *   rgb_gray    RGB -> GRAY (cv2 COLOR_RGB2GRAY)
 *
 * Method (reference/anchors.md): 2 warm-up calls, a loop count calibrated
 * to about @target seconds, then @runs timed runs. Output is one JSON
 * object per case:
 *   {"case":..,"width":..,"height":..,"level":..,"mpx_s_median":..,
 *    "runs":[Mpx/s of each run]}
 * Mpx/s counts source pixels. Nothing here judges a time.
 *
 *   bench_csc [--target S] [--runs N] [--case C]... [--size WxH]
 * DVPP_SIMD caps the SIMD level as everywhere else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dvpp_cpu.h"
#include "dvpp_image.h"
#include "dvpp_scratch.h"
#include "vpc/dvpp_csc.h"

#include "bench_util.h"

#define MAX_RUNS 64
#define WARMUP 2

typedef struct bench_case {
    const char *name;
    dvpp_pixfmt from;
    dvpp_pixfmt to;
} bench_case;

static const bench_case k_cases[] = {
    {"nv12_rgb", DVPP_PIXEL_NV12, DVPP_PIXEL_RGB},
    {"i420_rgb", DVPP_PIXEL_I420, DVPP_PIXEL_RGB},
    {"nv12_bgra", DVPP_PIXEL_NV12, DVPP_PIXEL_BGRA},
    {"rgb_i420", DVPP_PIXEL_RGB, DVPP_PIXEL_I420},
    {"rgb_gray", DVPP_PIXEL_RGB, DVPP_PIXEL_GRAY},
};
#define N_CASES (sizeof(k_cases) / sizeof(k_cases[0]))

/* Everything one measurement needs, allocated once. */
typedef struct bench_job {
    dvpp_image src;
    dvpp_image dst;
    dvpp_csc csc;
    dvpp_scratch scratch;
    dvpp_err err;
} bench_job;

/* Source content: a gradient with some noise, converted from RGB so YUV
 * sources hold plausible chroma (timing does not depend on it). */
static int fill_source(bench_job *j, uint32_t w, uint32_t h)
{
    dvpp_image rgb;
    uint32_t seed = 12345;
    int rc = -1;

    if (dvpp_image_init(&rgb, DVPP_PIXEL_RGB, w, h, 1, 1, &j->err) ||
        dvpp_image_alloc(&rgb, &j->err))
        return -1;
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < 3 * w; x++) {
            seed = seed * 1103515245u + 12345u;
            rgb.data[(size_t)y * rgb.width_stride + x] =
                (uint8_t)((x / 3 * 255 / w + y * 255 / h) / 2 + (seed >> 28));
        }
    }
    if (dvpp_csc_convert(&rgb, &j->src, &j->csc, &j->scratch, &j->err) == DVPP_OK)
        rc = 0;
    dvpp_image_free(&rgb);
    return rc;
}

static int job_open(bench_job *j, const bench_case *c, uint32_t w, uint32_t h)
{
    memset(j, 0, sizeof(*j));
    dvpp_csc_init(&j->csc);
    dvpp_scratch_init(&j->scratch);
    if (dvpp_image_init(&j->src, c->from, w, h, 1, 1, &j->err) ||
        dvpp_image_alloc(&j->src, &j->err) ||
        dvpp_image_init(&j->dst, c->to, w, h, 1, 1, &j->err) ||
        dvpp_image_alloc(&j->dst, &j->err))
        return -1;
    if (c->from == DVPP_PIXEL_RGB) {
        for (size_t i = 0; i < j->src.size; i++)
            j->src.data[i] = (uint8_t)(i * 7 + i / 5791);
        return 0;
    }
    return fill_source(j, w, h);
}

static void job_close(bench_job *j)
{
    dvpp_image_free(&j->src);
    dvpp_image_free(&j->dst);
    dvpp_scratch_fini(&j->scratch);
}

static int call(bench_job *j)
{
    return dvpp_csc_convert(&j->src, &j->dst, &j->csc, &j->scratch, &j->err) ==
                   DVPP_OK ? 0 : -1;
}

/* Seconds per call for @n calls. */
static double timed(bench_job *j, long n)
{
    double t0 = bench_now_s();
    for (long i = 0; i < n; i++)
        call(j);
    return (bench_now_s() - t0) / (double)n;
}

static int measure(const bench_case *c, uint32_t w, uint32_t h, double target,
                   int runs)
{
    bench_job j;
    double per[MAX_RUNS], sorted[MAX_RUNS], mpx = (double)w * h / 1e6;
    long n = 1;

    if (job_open(&j, c, w, h) != 0) {
        fprintf(stderr, "bench_csc: %s: %s\n", c->name, j.err.msg);
        job_close(&j);
        return -1;
    }
    for (int i = 0; i < WARMUP; i++) {
        if (call(&j) != 0) {
            fprintf(stderr, "bench_csc: %s: %s\n", c->name, j.err.msg);
            job_close(&j);
            return -1;
        }
    }
    /* Calibrate: grow n until one loop takes a tenth of the target. */
    while (timed(&j, n) * (double)n < target / 10)
        n *= 2;
    n = (long)(target / timed(&j, n)) + 1;
    for (int r = 0; r < runs; r++) {
        per[r] = mpx / timed(&j, n);
        sorted[r] = per[r];
    }
    qsort(sorted, (size_t)runs, sizeof(double), bench_cmp_double);
    printf("{\"case\":\"%s\",\"width\":%u,\"height\":%u,\"level\":\"%s\","
           "\"calls_per_run\":%ld,\"mpx_s_median\":%.1f,\"runs\":[",
           c->name, w, h, dvpp_simd_name(dvpp_simd_active()), n,
           sorted[runs / 2]);
    for (int r = 0; r < runs; r++)
        printf("%s%.1f", r ? "," : "", per[r]);
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
    uint32_t w = 1920, h = 1080;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
            target = atof(argv[++i]);
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc &&
                   n_only < N_CASES) {
            only[n_only++] = argv[++i];
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%ux%u", &w, &h) != 2 || !w || !h) {
                fprintf(stderr, "bench_csc: --size WxH\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bench_csc [--target S] [--runs N] "
                            "[--case C]... [--size WxH]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || target <= 0) {
        fprintf(stderr, "bench_csc: runs 1..%d, target > 0\n", MAX_RUNS);
        return 2;
    }
    for (size_t c = 0; c < N_CASES; c++) {
        bool want = n_only == 0;
        for (size_t i = 0; i < n_only; i++)
            want = want || strcmp(only[i], k_cases[c].name) == 0;
        if (want && measure(&k_cases[c], w, h, target, runs) != 0)
            rc = 1;
    }
    return rc;
}
