/* bench_vpc: time whole VPC operations (dvpp_vpc_*) as a worker runs them:
 * one context (plans, scratch, intermediates reused), buffers allocated
 * once.
 *   nv12_rgb_224   NV12 1920x1080 -> RGB 224x224, cv2 bilinear: the fused
 *                  path converts only the rows the resize samples
 *                  (peer: cv2.cvtColor NV12->RGB + cv2.resize INTER_LINEAR)
 * Method and output as bench_resize: 2 warm-ups, a loop calibrated to
 * --target s, --runs runs, one JSON line per case with Mpx/s of source.
 *   bench_vpc [--target S] [--runs N] [--case NAME]...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dvpp_vpc.h"

#include "bench_util.h"

#define MAX_RUNS 64

typedef struct job {
    dvpp_vpc_ctx ctx;
    dvpp_image src, dst;
    dvpp_resize_opts o;
} job;

static int run_once(job *j)
{
    return dvpp_vpc_crop_resize_paste(&j->ctx, &j->src, NULL, &j->dst, NULL,
                                      &j->o, NULL) == DVPP_OK ? 0 : 1;
}

static int bench_nv12_rgb_224(double target, int runs)
{
    job j;
    double per[MAX_RUNS], t0, dt;
    long n = 1, iters;
    int rc = 0;

    dvpp_vpc_ctx_init(&j.ctx, DVPP_PROFILE_NATIVE);
    dvpp_resize_opts_init(&j.o);
    if (dvpp_image_init(&j.src, DVPP_PIXEL_NV12, 1920, 1080, 1, 1, NULL) ||
        dvpp_image_alloc(&j.src, NULL) ||
        dvpp_image_init(&j.dst, DVPP_PIXEL_RGB, 224, 224, 1, 1, NULL) ||
        dvpp_image_alloc(&j.dst, NULL))
        return 1;
    for (size_t i = 0; i < j.src.size; i++) /* a smooth gradient */
        j.src.data[i] = (uint8_t)((i % 1920) / 8 + (i / 1920) / 8);
    rc |= run_once(&j) | run_once(&j);
    for (;;) {
        t0 = bench_now_s();
        for (long i = 0; i < n; i++)
            rc |= run_once(&j);
        dt = bench_now_s() - t0;
        if (dt >= 0.2 || dt >= target)
            break;
        n *= 2;
    }
    iters = (long)(n * target / dt) + 1;
    for (int r = 0; r < runs; r++) {
        t0 = bench_now_s();
        for (long i = 0; i < iters; i++)
            rc |= run_once(&j);
        per[r] = 1920.0 * 1080 / 1e6 / ((bench_now_s() - t0) / iters);
    }
    {
        double sorted[MAX_RUNS];
        memcpy(sorted, per, sizeof(double) * (size_t)runs);
        qsort(sorted, (size_t)runs, sizeof(double), bench_cmp_double);
        printf("{\"case\": \"nv12_rgb_224\", \"mpx_s_median\": %.1f, \"runs\": [",
               sorted[runs / 2]);
        for (int r = 0; r < runs; r++)
            printf("%s%.1f", r ? ", " : "", per[r]);
        printf("]}\n");
    }
    dvpp_image_free(&j.src);
    dvpp_image_free(&j.dst);
    dvpp_vpc_ctx_fini(&j.ctx);
    return rc;
}

int main(int argc, char **argv)
{
    double target = 0.5;
    int runs = 7;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--target") == 0 && i + 1 < argc)
            target = atof(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            i++; /* one case today */
    }
    if (runs < 1 || runs > MAX_RUNS || target <= 0) {
        fprintf(stderr, "bench_vpc: bad --runs or --target\n");
        return 2;
    }
    return bench_nv12_rgb_224(target, runs);
}
