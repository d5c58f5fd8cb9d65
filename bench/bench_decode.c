/* bench_decode: time libdvpp's JPEG decoder (JPEGD) on real files.
 *
 * Cases (all single thread, output into one caller buffer allocated once
 * and reused, as the daemon does with pooled buffers):
 *   rgb        full-size decode to packed RGB
 *   nv12       full-size decode to NV12 (from the raw planes, no RGB step)
 *   shrink224  decode to RGB with shrink-on-load for a 224x224 target:
 *              scale_num = dvpp_jpeg_shrink_scale(w, h, 224, 224), DCT
 *              scaling n/8. The resize to 224x224 is not included.
 *   rgb_fresh  as rgb, but the output is allocated (dvpp_malloc) and freed
 *              around every decode, as the peers' outputs are: the row to
 *              hold against them with neither side's buffer warm.
 *
 * Method (reference/anchors.md): 2 warm-up calls, a loop count calibrated
 * to about @target seconds, then @runs timed runs; each run reports its
 * seconds per call. Nothing here judges a time: bench/run.py pools the
 * runs of several passes and prints medians beside Pillow and OpenCV.
 *
 * Output is one JSON object per line, so run.py can parse it:
 *   bench_decode [--target S] [--runs N] [--case C]... FILE...
 *       measures every case on every file, one line per measurement
 *   bench_decode --serve
 *       reads commands from stdin, answers one JSON line each:
 *         load PATH               -> {"ok":true,"file":..,"width":..,...}
 *         measure CASE TARGET RUNS -> {"ok":true,"case":..,"runs_s":[..],...}
 *         quit
 *       (run.py uses this to interleave dvppd with the peers.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dvpp_image.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_status.h"

#include "bench_util.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "unknown"
#endif

#define MAX_RUNS 64
#define WARMUP 2
#define SHRINK_TARGET 224u

typedef enum bench_case {
    CASE_RGB,
    CASE_NV12,
    CASE_SHRINK224,
    CASE_RGB_FRESH,
    CASE_COUNT
} bench_case;

static const char *const case_names[CASE_COUNT] = {"rgb", "nv12", "shrink224", "rgb_fresh"};

typedef struct bench_file {
    char path[4096];
    dvpp_buf data;
    dvpp_jpeg_info info;
} bench_file;

/* One prepared decode: options plus the output buffer, allocated once. */
typedef struct bench_job {
    const bench_file *file;
    dvpp_jpeg_decode_opts opts;
    dvpp_limits lim;
    dvpp_image img;
    uint8_t *buf;
    size_t cap;
    bool fresh; /* allocate the output around each decode */
    dvpp_err err;
} bench_job;

/* Print @s as a JSON string (quotes included). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_error(const char *what, const char *path, const dvpp_err *err,
                       int status)
{
    printf("{\"ok\":false,\"error\":");
    json_str(stdout, what);
    printf(",\"file\":");
    json_str(stdout, path ? path : "");
    printf(",\"status\":");
    json_str(stdout, dvpp_status_name(status));
    printf(",\"message\":");
    json_str(stdout, err && err->msg[0] ? err->msg : dvpp_strerror(status));
    printf("}\n");
    fflush(stdout);
}

static bool parse_case(const char *s, bench_case *out)
{
    for (int i = 0; i < CASE_COUNT; i++) {
        if (strcmp(s, case_names[i]) == 0) {
            *out = (bench_case)i;
            return true;
        }
    }
    return false;
}

static dvpp_status file_load(bench_file *f, const char *path, dvpp_err *err)
{
    dvpp_status st;

    snprintf(f->path, sizeof(f->path), "%s", path);
    dvpp_buf_fini(&f->data);
    st = dvpp_buf_read_file(&f->data, path, (size_t)1 << 30, err);
    if (st != DVPP_OK)
        return st;
    return dvpp_jpeg_probe(f->data.data, f->data.len, &f->info, err);
}

static void job_fini(bench_job *j)
{
    dvpp_free(j->buf, j->cap);
    j->buf = NULL;
    j->cap = 0;
}

/* Options for @c, then the geometry, then the one output buffer. */
static dvpp_status job_init(bench_job *j, const bench_file *f, bench_case c)
{
    dvpp_status st;

    memset(j, 0, sizeof(*j));
    j->file = f;
    j->lim = dvpp_limits_default();
    dvpp_jpeg_decode_opts_init(&j->opts);
    switch (c) {
    case CASE_RGB_FRESH:
        j->fresh = true;
        /* fall through */
    case CASE_RGB:
        j->opts.format = DVPP_PIXEL_RGB;
        break;
    case CASE_NV12:
        j->opts.format = DVPP_PIXEL_NV12;
        break;
    case CASE_SHRINK224:
        j->opts.format = DVPP_PIXEL_RGB;
        j->opts.scale_num = dvpp_jpeg_shrink_scale(
            f->info.display_width, f->info.display_height, SHRINK_TARGET,
            SHRINK_TARGET);
        break;
    default:
        return DVPP_EINVAL;
    }
    st = dvpp_jpeg_decode_geometry(f->data.data, f->data.len, &j->opts, &j->lim,
                                   &j->img, &j->err);
    if (st != DVPP_OK)
        return st;
    j->cap = j->img.size;
    j->buf = dvpp_malloc(j->cap);
    if (!j->buf)
        return dvpp_err_set(&j->err, DVPP_ENOMEM, NULL, "%zu bytes", j->cap);
    memset(j->buf, 0, j->cap); /* fault the pages in once, outside timing */
    return DVPP_OK;
}

/* One decode into the reused buffer, or into one allocated for it. */
static inline dvpp_status job_run(bench_job *j)
{
    dvpp_status st;
    uint8_t *out = j->fresh ? dvpp_malloc(j->cap) : j->buf;

    if (!out)
        return dvpp_err_set(&j->err, DVPP_ENOMEM, NULL, "%zu bytes", j->cap);
    j->img.data = out;
    j->img.size = j->cap;
    st = dvpp_jpeg_decode(j->file->data.data, j->file->data.len, &j->opts, &j->lim,
                          &j->img, &j->err);
    if (j->fresh)
        dvpp_free(out, j->cap);
    return st;
}

static dvpp_status job_loop(bench_job *j, long iters, double *secs)
{
    double t0 = bench_now_s();
    for (long i = 0; i < iters; i++) {
        dvpp_status st = job_run(j);
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
    dvpp_status st;
    double dt = 0;
    long n = 1;

    for (int i = 0; i < WARMUP; i++) {
        st = job_run(j);
        if (st != DVPP_OK)
            return st;
    }
    for (;;) {
        st = job_loop(j, n, &dt);
        if (st != DVPP_OK)
            return st;
        if (dt >= 0.2 || dt >= target || n >= (1L << 40))
            break;
        n *= 2;
    }
    long iters = (long)(n * target / (dt > 0 ? dt : 1e-9) + 0.5);
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

static void print_file(const bench_file *f)
{
    const dvpp_jpeg_info *i = &f->info;
    printf("{\"ok\":true,\"file\":");
    json_str(stdout, f->path);
    printf(",\"bytes\":%zu,\"width\":%u,\"height\":%u,\"display_width\":%u,"
           "\"display_height\":%u,\"sampling\":\"%s\",\"colorspace\":\"%s\","
           "\"progressive\":%s,\"orientation\":%u,\"scans\":%u,"
           "\"dvpp_version\":\"%s\",\"jpeg_library\":",
           f->data.len, i->width, i->height, i->display_width,
           i->display_height, dvpp_jpeg_sampling_name(i->sampling),
           dvpp_jpeg_colorspace_name(i->colorspace),
           i->progressive ? "true" : "false", i->orientation, i->scans,
           DVPP_VERSION);
    json_str(stdout, dvpp_jpeg_library());
    printf("}\n");
    fflush(stdout);
}

static int run_case(const bench_file *f, bench_case c, double target, int runs)
{
    bench_job j;
    double per[MAX_RUNS];
    long iters = 0;
    dvpp_status st = job_init(&j, f, c);

    if (st == DVPP_OK)
        st = measure(&j, target, runs, per, &iters);
    if (st != DVPP_OK) {
        json_error(case_names[c], f->path, &j.err, st);
        job_fini(&j);
        return 1;
    }
    printf("{\"ok\":true,\"impl\":\"dvppd\",\"case\":\"%s\",\"file\":",
           case_names[c]);
    json_str(stdout, f->path);
    printf(",\"src_width\":%u,\"src_height\":%u,\"out_width\":%u,"
           "\"out_height\":%u,\"out_format\":\"%s\",\"scale_num\":%u,"
           "\"out_bytes\":%zu,\"iters\":%ld,\"runs_s\":[",
           f->info.display_width, f->info.display_height, j.img.width,
           j.img.height, dvpp_pixfmt_name(j.opts.format),
           j.opts.scale_num ? j.opts.scale_num : 8u, j.cap, iters);
    for (int r = 0; r < runs; r++)
        printf("%s%.9g", r ? "," : "", per[r]);
    printf("]}\n");
    fflush(stdout);
    job_fini(&j);
    return 0;
}

/* Line protocol for run.py; see the top of the file. */
static int serve(void)
{
    bench_file f;
    bool loaded = false;
    char line[8192];

    memset(&f, 0, sizeof(f));
    dvpp_buf_init(&f.data);
    while (fgets(line, sizeof(line), stdin)) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, "load ", 5) == 0) {
            dvpp_err err;
            dvpp_err_clear(&err);
            dvpp_status st = file_load(&f, line + 5, &err);
            loaded = st == DVPP_OK;
            if (loaded)
                print_file(&f);
            else
                json_error("load", line + 5, &err, st);
        } else if (strncmp(line, "measure ", 8) == 0) {
            char cname[32];
            double target;
            int runs;
            bench_case c;
            if (sscanf(line + 8, "%31s %lf %d", cname, &target, &runs) != 3 ||
                !parse_case(cname, &c) || runs < 1 || runs > MAX_RUNS ||
                !(target > 0)) {
                json_error("bad command", line, NULL, DVPP_EINVAL);
            } else if (!loaded) {
                json_error("no file loaded", "", NULL, DVPP_EINVAL);
            } else {
                run_case(&f, c, target, runs);
            }
        } else if (strcmp(line, "quit") == 0) {
            break;
        } else if (line[0] != '\0') {
            json_error("unknown command", line, NULL, DVPP_EINVAL);
        }
    }
    dvpp_buf_fini(&f.data);
    return 0;
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: bench_decode [--target S] [--runs N] [--case rgb|nv12|shrink224|rgb_fresh]... "
            "FILE...\n"
            "       bench_decode --serve\n");
}

int main(int argc, char **argv)
{
    double target = 0.5;
    int runs = 7;
    bool want[CASE_COUNT] = {false};
    bool any_case = false;
    int rc = 0, i;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--serve") == 0) {
            return serve();
        } else if (strcmp(a, "--target") == 0 && i + 1 < argc) {
            target = strtod(argv[++i], NULL);
        } else if (strcmp(a, "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (strcmp(a, "--case") == 0 && i + 1 < argc) {
            bench_case c;
            if (!parse_case(argv[++i], &c)) {
                usage(stderr);
                return 2;
            }
            want[c] = any_case = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc || runs < 1 || runs > MAX_RUNS || !(target > 0)) {
        usage(stderr);
        return 2;
    }
    for (; i < argc; i++) {
        bench_file f;
        dvpp_err err;
        memset(&f, 0, sizeof(f));
        dvpp_buf_init(&f.data);
        dvpp_err_clear(&err);
        dvpp_status st = file_load(&f, argv[i], &err);
        if (st != DVPP_OK) {
            json_error("load", argv[i], &err, st);
            rc = 1;
        } else {
            print_file(&f);
            for (int c = 0; c < CASE_COUNT; c++)
                if (!any_case || want[c])
                    rc |= run_case(&f, (bench_case)c, target, runs);
        }
        dvpp_buf_fini(&f.data);
    }
    return rc;
}
