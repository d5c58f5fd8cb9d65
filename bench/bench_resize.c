/* bench_resize: time libdvpp's resize engine (VPC resize) on RGB frames.
 *
 * Cases (single thread, one plan, one scratch, source and destination
 * allocated once and reused, as a worker does):
 *   cv2_bilinear_1080p_224   1920x1080 -> 224x224, cv2 parity, bilinear
 *   pil_bilinear_12mp_1000   4000x3000 -> 1000x750, pil parity, bilinear
 *                            (antialiased: every source pixel is read)
 *   cv2_area_1080p_224       1920x1080 -> 224x224, cv2 parity, area
 *   pil_bilinear_1080p_224   1920x1080 -> 224x224, pil parity, bilinear
 *                            (antialiased, like Pillow's BILINEAR)
 * and, only when named with --case: cv2_nearest_1080p_224,
 * cv2_bicubic_1080p_224, cv2_area_12mp_1000 (4x: OpenCV's integer-factor
 * path), cv2_bilinear_12mp_1000, pil_bicubic_12mp_1000,
 * pil_lanczos_12mp_1000 (the same sizes as anchors.md section 1).
 *
 * The source is a real photo when one is found (--photos DIR, default
 * .cache/testdata/photos: photo1080.jpg for the 1080p cases,
 * IMG_20200608_111614.jpg for the 12 MP one, decoded to RGB once), or a
 * synthetic gradient with noise otherwise; the kernels do not branch on
 * pixel values, so the content hardly matters.
 *
 * Method (reference/anchors.md): 2 warm-up calls, a loop count calibrated
 * to about @target seconds, then @runs timed runs. Mpx/s counts source
 * pixels. One JSON object per case and line:
 *   {"case": ..., "mpx_s_median": ..., "runs": [Mpx/s of each run], ...}
 *
 *   bench_resize [--target S] [--runs N] [--photos DIR] [--case NAME]...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dvpp_image.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_scratch.h"
#include "dvpp_status.h"
#include "vpc/dvpp_resize.h"

#include "bench_util.h"

#define MAX_RUNS 64
#define WARMUP 2
#define N_CASES 10
#define N_DEFAULT 4 /* the cases run when no --case is given */

typedef struct bench_case {
    const char *name;  /* printed */
    dvpp_parity parity;
    dvpp_interp interp;
    uint32_t sw, sh;   /* source */
    uint32_t dw, dh;   /* destination */
    const char *photo; /* file in the photo folder */
} bench_case;

static const bench_case k_cases[N_CASES] = {
    {"cv2_bilinear_1080p_224", DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR, 1920,
     1080, 224, 224, "photo1080.jpg"},
    {"pil_bilinear_12mp_1000", DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR, 4000,
     3000, 1000, 750, "IMG_20200608_111614.jpg"},
    {"cv2_area_1080p_224", DVPP_PARITY_CV2, DVPP_INTERP_AREA, 1920, 1080, 224,
     224, "photo1080.jpg"},
    /* antialiased, against Pillow's BILINEAR (also antialiased) */
    {"pil_bilinear_1080p_224", DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR, 1920,
     1080, 224, 224, "photo1080.jpg"},
    /* Extras, on request only. */
    {"cv2_nearest_1080p_224", DVPP_PARITY_CV2, DVPP_INTERP_NEAREST, 1920,
     1080, 224, 224, "photo1080.jpg"},
    {"cv2_bicubic_1080p_224", DVPP_PARITY_CV2, DVPP_INTERP_BICUBIC, 1920,
     1080, 224, 224, "photo1080.jpg"},
    {"cv2_area_12mp_1000", DVPP_PARITY_CV2, DVPP_INTERP_AREA, 4000, 3000, 1000,
     750, "IMG_20200608_111614.jpg"},
    {"cv2_bilinear_12mp_1000", DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR, 4000,
     3000, 1000, 750, "IMG_20200608_111614.jpg"},
    {"pil_bicubic_12mp_1000", DVPP_PARITY_PIL, DVPP_INTERP_BICUBIC, 4000, 3000,
     1000, 750, "IMG_20200608_111614.jpg"},
    {"pil_lanczos_12mp_1000", DVPP_PARITY_PIL, DVPP_INTERP_LANCZOS, 4000, 3000,
     1000, 750, "IMG_20200608_111614.jpg"},
};

/* One prepared resize: plan, buffers, scratch. */
typedef struct bench_job {
    const bench_case *c;
    dvpp_resize_plan *plan;
    uint8_t *src;        /* sw * sh * 3 */
    uint8_t *dst;        /* dw * dh * 3 */
    dvpp_scratch scratch;
    const char *source;  /* "photo" or "synthetic" */
    dvpp_err err;
} bench_job;

static void fill_synthetic(uint8_t *p, uint32_t w, uint32_t h)
{
    uint32_t r = 0x9e3779b9u;

    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            for (int c = 0; c < 3; c++)
                p[((size_t)y * w + x) * 3 + c] =
                    (uint8_t)((x * (c + 1) + y * (3 - c)) / 8 + (r >> (8 * c) & 31));
        }
    }
}

/* Decode DIR/photo into @p when it has exactly the case's size. */
static bool load_photo(const char *dir, const bench_case *c, uint8_t *p)
{
    char path[4096];
    dvpp_buf data;
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image img;
    dvpp_err err;
    bool ok = false;

    snprintf(path, sizeof(path), "%s/%s", dir, c->photo);
    dvpp_buf_init(&data);
    if (dvpp_buf_read_file(&data, path, (size_t)1 << 28, &err) != DVPP_OK)
        return false;
    dvpp_jpeg_decode_opts_init(&o);
    memset(&img, 0, sizeof(img));
    if (dvpp_jpeg_decode(data.data, data.len, &o, &lim, &img, &err) ==
            DVPP_OK &&
        img.width == c->sw && img.height == c->sh) {
        for (uint32_t y = 0; y < c->sh; y++)
            memcpy(p + (size_t)y * c->sw * 3,
                   img.data + (size_t)y * img.width_stride, (size_t)c->sw * 3);
        ok = true;
    }
    dvpp_image_free(&img);
    dvpp_buf_fini(&data);
    return ok;
}

static void job_fini(bench_job *j)
{
    dvpp_resize_plan_free(j->plan);
    dvpp_free(j->src, (size_t)j->c->sw * j->c->sh * 3);
    dvpp_free(j->dst, (size_t)j->c->dw * j->c->dh * 3);
    dvpp_scratch_fini(&j->scratch);
}

static dvpp_status job_init(bench_job *j, const bench_case *c, const char *dir)
{
    size_t ss = (size_t)c->sw * c->sh * 3, ds = (size_t)c->dw * c->dh * 3;

    memset(j, 0, sizeof(*j));
    j->c = c;
    dvpp_scratch_init(&j->scratch);
    j->src = dvpp_malloc(ss);
    j->dst = dvpp_malloc(ds);
    if (!j->src || !j->dst)
        return dvpp_err_set(&j->err, DVPP_ENOMEM, NULL, "buffers");
    memset(j->dst, 0, ds); /* fault the pages in outside timing */
    j->source = "photo";
    if (!dir || !load_photo(dir, c, j->src)) {
        fill_synthetic(j->src, c->sw, c->sh);
        j->source = "synthetic";
    }
    return dvpp_resize_plan_new(c->parity, c->interp, c->sw, c->sh, c->dw,
                                c->dh, 3, &j->plan, &j->err);
}

static dvpp_status job_loop(bench_job *j, long iters, double *secs)
{
    double t0 = bench_now_s();

    for (long i = 0; i < iters; i++) {
        dvpp_status st = dvpp_resize_run(j->plan, j->src, (size_t)j->c->sw * 3,
                                         j->dst, (size_t)j->c->dw * 3,
                                         &j->scratch, &j->err);
        if (st != DVPP_OK)
            return st;
    }
    *secs = bench_now_s() - t0;
    return DVPP_OK;
}

/* Warm up, calibrate to @target s per run, then @runs timed runs. */
static dvpp_status measure(bench_job *j, double target, int runs,
                           double *per_call, long *iters_out)
{
    dvpp_status st = job_loop(j, WARMUP, &per_call[0]);
    double dt = 0;
    long n = 1, iters;

    if (st != DVPP_OK)
        return st;
    for (;;) {
        st = job_loop(j, n, &dt);
        if (st != DVPP_OK)
            return st;
        if (dt >= 0.2 || dt >= target || n >= (1L << 40))
            break;
        n *= 2;
    }
    iters = (long)(n * target / (dt > 0 ? dt : 1e-9) + 0.5);
    if (iters < 1)
        iters = 1;
    for (int r = 0; r < runs; r++) {
        st = job_loop(j, iters, &dt);
        if (st != DVPP_OK)
            return st;
        per_call[r] = dt / (double)iters;
    }
    *iters_out = iters;
    return DVPP_OK;
}

static int run_case(const bench_case *c, const char *dir, double target,
                    int runs)
{
    bench_job j;
    double per[MAX_RUNS], mpx[MAX_RUNS], sorted[MAX_RUNS];
    double px = (double)c->sw * c->sh / 1e6;
    long iters = 0;
    dvpp_status st = job_init(&j, c, dir);

    if (st == DVPP_OK)
        st = measure(&j, target, runs, per, &iters);
    if (st != DVPP_OK) {
        printf("{\"case\": \"%s\", \"ok\": false, \"status\": \"%s\", "
               "\"message\": \"%s\"}\n",
               c->name, dvpp_status_name(st), j.err.msg);
        job_fini(&j);
        return 1;
    }
    for (int r = 0; r < runs; r++)
        sorted[r] = mpx[r] = px / per[r];
    qsort(sorted, (size_t)runs, sizeof(double), bench_cmp_double);
    printf("{\"case\": \"%s\", \"mpx_s_median\": %.1f, \"runs\": [", c->name,
           runs % 2 ? sorted[runs / 2]
                    : (sorted[runs / 2 - 1] + sorted[runs / 2]) / 2);
    for (int r = 0; r < runs; r++)
        printf("%s%.1f", r ? ", " : "", mpx[r]);
    printf("], \"ms_per_call_median\": %.4f, \"iters\": %ld, "
           "\"source\": \"%s\", \"simd\": \"%s\"}\n",
           px / (runs % 2 ? sorted[runs / 2]
                          : (sorted[runs / 2 - 1] + sorted[runs / 2]) / 2) *
               1e3,
           iters, j.source, dvpp_simd_name(dvpp_simd_active()));
    fflush(stdout);
    job_fini(&j);
    return 0;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: bench_resize [--target S] [--runs N] [--photos DIR] "
                "[--case NAME]...\ncases:");
    for (int i = 0; i < N_CASES; i++)
        fprintf(to, " %s", k_cases[i].name);
    fprintf(to, "\n");
}

int main(int argc, char **argv)
{
    double target = 0.5;
    int runs = 7, fails = 0, ncases = 0;
    bool want[N_CASES] = {false};
    const char *dir = ".cache/testdata/photos";

    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (strcmp(argv[i], "--target") == 0 && more) {
            target = atof(argv[++i]);
        } else if (strcmp(argv[i], "--runs") == 0 && more) {
            runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--photos") == 0 && more) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--case") == 0 && more) {
            int k = -1;
            ++i;
            for (int c = 0; c < N_CASES; c++)
                if (strcmp(argv[i], k_cases[c].name) == 0)
                    k = c;
            if (k < 0) {
                usage(stderr);
                return 2;
            }
            want[k] = true;
            ncases++;
        } else {
            usage(strcmp(argv[i], "--help") == 0 ? stdout : stderr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || !(target > 0)) {
        usage(stderr);
        return 2;
    }
    for (int c = 0; c < N_CASES; c++)
        if (ncases ? want[c] : c < N_DEFAULT)
            fails += run_case(&k_cases[c], dir, target, runs);
    return fails ? 1 : 0;
}
