/* bench_video: time libdvpp's VDEC (dvpp_video_decode) and the video job
 * (dvpp_video_run: VDEC + a per-frame pipeline) on a video file, the way
 * `ffmpeg -benchmark` times a transcode, so bench/run_video.py can put the
 * two side by side.
 *
 * Cases:
 *   decode      dvpp_video_decode to NV12 (VDEC strides) with --threads
 *               decoder threads; the sink only reads one byte of each
 *               frame (the peer: `ffmpeg -threads T -i X -f null -`, and
 *               `-pix_fmt nv12 -f null -`, which converts as we do)
 *   pipe224     dvpp_video_run: decode to NV12 as above, then per frame the
 *               pipeline stretch-resize 224x224 (cv2-parity bilinear) +
 *               ImageNet normalise into slice t of a T x 3 x 224 x 224 f32
 *               NCHW tensor (the peer: `ffmpeg ... -vf scale=224:224`). The
 *               tensor's dvpp_buf is reserved and pre-faulted before the
 *               timed run (a pooled output buffer), unless --cold-out:
 *               then it starts empty and grows inside the timed run, as a
 *               fresh request's does. Frames reach the pipeline as the
 *               decoder's own I420 buffers (dvpp_vdec_opts.direct_i420),
 *               or with --convert as their NV12 conversion (the way
 *               before; the same tensor)
 *   pipe_frame  the pipeline alone (no decode, one thread): the clip's
 *               first frame as NV12, copied out once, run through the same
 *               pipeline into a 1-image tensor in a loop calibrated to
 *               --target s, --runs runs; ms per frame (where the time of
 *               pipe224 goes: decode + this)
 *
 * Method: the file is read into memory first (untimed). decode and pipe224
 * run --warm untimed calls, then --runs timed calls; each timed call is one
 * whole video (demux + probe + decoder open + every frame + close), wall
 * time (CLOCK_MONOTONIC) and CPU time (getrusage RUSAGE_SELF: every thread,
 * the decoder's included, user + system). run_video.py runs one process per
 * measurement with --warm 0 --runs 1, as ffmpeg runs one process per
 * transcode, and pins both with taskset.
 *
 * Output: one JSON line per case:
 *   {"ok":true,"case":..,"threads":T,"width":..,"height":..,"frames":N,
 *    "probe_ms":..,"runs":[{"s":..,"fps":..,"cpu_s":..},..],"fps_median":..}
 *   pipe_frame: {"ok":true,"case":"pipe_frame","ms_per_frame":..,"runs_ms":[..],..}
 *   an error: {"ok":false,"case":..,"status":..,"message":..} and exit 1.
 *
 *   bench_video [--case decode|pipe224|pipe_frame]... [--threads T] [--runs N]
 *               [--warm W] [--target S] [--cold-out] [--overlap] [--convert] FILE
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "device/dvpp_pipeline.h"
#include "device/dvpp_videojob.h"

#include "bench_util.h"

#define MAX_RUNS 64
#define OUT_W 224u
#define OUT_H 224u

typedef enum bench_case { CASE_DECODE, CASE_PIPE224, CASE_PIPE_FRAME, CASE_COUNT } bench_case;

static const char *const case_names[CASE_COUNT] = {"decode", "pipe224", "pipe_frame"};

typedef struct opts {
    unsigned threads;
    int runs, warm;
    double target;
    bool cold_out;
    bool overlap;     /* pipe224: the pipeline on a helper thread */
    bool convert;     /* pipe224: every frame converted to NV12 first
                         (dvpp_video_request.convert_frames) */
    const char *path;
} opts;

typedef struct run_stat {
    double s, cpu_s;
    uint64_t frames;
} run_stat;

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

static int json_error(bench_case c, const char *what, dvpp_status st, const dvpp_err *err)
{
    printf("{\"ok\":false,\"case\":");
    json_str(stdout, case_names[c]);
    printf(",\"error\":");
    json_str(stdout, what);
    printf(",\"status\":");
    json_str(stdout, dvpp_status_name(st));
    printf(",\"message\":");
    json_str(stdout, err && err->msg[0] ? err->msg : dvpp_strerror(st));
    printf("}\n");
    fflush(stdout);
    return 1;
}

static double cpu_now_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* The pipeline of bench_batch: stretch 224x224 (cv2 bilinear) + ImageNet
 * normalise, f32 NCHW tensor. The video job sets the raw input per frame. */
static dvpp_status make_pipeline(dvpp_pipeline *p, dvpp_err *err)
{
    dvpp_pipe_op op;

    dvpp_pipeline_init(p);
    memset(&op, 0, sizeof op);
    op.kind = DVPP_PIPE_OP_RESIZE;
    op.u.resize.mode = DVPP_RESIZE_STRETCH;
    op.u.resize.w = OUT_W;
    op.u.resize.h = OUT_H;
    dvpp_resize_opts_init(&op.u.resize.opts);
    if (dvpp_pipeline_add_op(p, &op, err) != DVPP_OK)
        return err->status;
    p->post = DVPP_PIPE_POST_NORM;
    dvpp_norm_spec_init(&p->norm);
    p->norm.mean[0] = 0.485; p->norm.mean[1] = 0.456; p->norm.mean[2] = 0.406;
    p->norm.std[0] = 0.229;  p->norm.std[1] = 0.224;  p->norm.std[2] = 0.225;
    p->norm.scale = 255.0;
    p->norm.bgr = false;
    p->norm.layout = DVPP_LAYOUT_NCHW;
    p->norm.dtype = DVPP_DTYPE_F32;
    p->output = DVPP_PIPE_OUT_TENSOR;
    return DVPP_OK;
}

/* --- decode ---------------------------------------------------------------------- */

typedef struct touch_sink {
    uint64_t frames;
    unsigned sum;
} touch_sink;

/* Consume a frame by reading one byte of it (the middle of the luma). */
static dvpp_status touch(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    touch_sink *t = ctx;
    const dvpp_image *im = f->image;

    (void)err;
    t->sum += ((const volatile uint8_t *)im->data)[(size_t)(im->height / 2) *
                                                   im->width_stride + im->width / 2];
    t->frames++;
    return DVPP_OK;
}

static dvpp_status decode_once(const dvpp_buf *in, const opts *o, dvpp_video_info *info,
                               run_stat *rs, unsigned *sum, dvpp_err *err)
{
    dvpp_vdec_opts vo;
    touch_sink t = {0, 0};
    dvpp_status st;
    double t0, c0;

    dvpp_vdec_opts_init(&vo);
    vo.format = DVPP_PIXEL_NV12;
    vo.threads = o->threads;
    c0 = cpu_now_s();
    t0 = bench_now_s();
    st = dvpp_video_decode(in->data, in->len, &vo, NULL, touch, &t, info, err);
    rs->s = bench_now_s() - t0;
    rs->cpu_s = cpu_now_s() - c0;
    rs->frames = t.frames;
    *sum += t.sum;
    return st;
}

/* --- pipe224 --------------------------------------------------------------------- */

typedef struct pipe_job {
    dvpp_worker w;
    dvpp_video_request rq;
    dvpp_buf out;
} pipe_job;

static dvpp_status pipe_once(pipe_job *j, const dvpp_buf *in, dvpp_video_info *info,
                             run_stat *rs, unsigned *sum, dvpp_err *err)
{
    dvpp_video_result res;
    dvpp_status st;
    double t0, c0;

    j->out.len = 0; /* capacity kept: a pooled output buffer */
    c0 = cpu_now_s();
    t0 = bench_now_s();
    st = dvpp_video_run(&j->w, in->data, in->len, &j->rq, &j->out, &res, err);
    rs->s = bench_now_s() - t0;
    rs->cpu_s = cpu_now_s() - c0;
    if (st != DVPP_OK)
        return st;
    rs->frames = res.frames;
    *info = res.info;
    if (!res.is_tensor || res.tensor.n != res.frames || res.tensor.c != 3 ||
        res.tensor.h != OUT_H || res.tensor.w != OUT_W ||
        res.tensor.bytes != j->out.len) {
        dvpp_video_result_fini(&res);
        return dvpp_err_set(err, DVPP_EINVAL, "tensor", "unexpected output tensor");
    }
    /* read one value of the last slice, so the output is consumed */
    if (res.frames) {
        const float *last = (const float *)(const void *)(j->out.data + j->out.len) - 1;
        *sum += (unsigned)(*last * 1000.0f);
    }
    dvpp_video_result_fini(&res);
    return DVPP_OK;
}

/* --- pipe_frame ------------------------------------------------------------------ */

typedef struct grab_sink {
    dvpp_image img; /* a copy of the first frame, allocated here */
    dvpp_buf data;
} grab_sink;

static dvpp_status grab(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    grab_sink *g = ctx;
    dvpp_planes pl;
    dvpp_status st = dvpp_image_planes(f->image, &pl, err);

    if (st != DVPP_OK)
        return st;
    g->img = *f->image;
    g->data.len = 0;
    if (dvpp_buf_append(&g->data, f->image->data, pl.total) != DVPP_OK)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "frame copy");
    g->img.data = g->data.data;
    g->img.size = pl.total;
    return DVPP_OK;
}

static int case_pipe_frame(const dvpp_buf *in, const opts *o)
{
    grab_sink g;
    dvpp_vdec_opts vo;
    dvpp_pipeline p;
    dvpp_pipeline_out po;
    dvpp_worker w;
    dvpp_tensor t;
    dvpp_err err;
    dvpp_status st;
    double per[MAX_RUNS], sorted[MAX_RUNS], t0, dt;
    long n = 1, iters;
    int rc = 0;

    memset(&g, 0, sizeof g);
    dvpp_buf_init(&g.data);
    dvpp_vdec_opts_init(&vo);
    vo.format = DVPP_PIXEL_NV12;
    vo.max_frames = 1;
    st = dvpp_video_decode(in->data, in->len, &vo, NULL, grab, &g, NULL, &err);
    if (st != DVPP_OK) {
        dvpp_buf_fini(&g.data);
        return json_error(CASE_PIPE_FRAME, "decode", st, &err);
    }
    dvpp_worker_init(&w, NULL);
    memset(&t, 0, sizeof t);
    st = make_pipeline(&p, &err);
    if (st == DVPP_OK) {
        p.input = DVPP_PIPE_IN_RAW;
        p.raw = (dvpp_pipe_raw){g.img.format, g.img.width, g.img.height, g.img.width_stride,
                                g.img.height_stride};
        st = dvpp_tensor_init(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 1, 3, OUT_H, OUT_W, &err);
    }
    if (st == DVPP_OK) {
        t.data = aligned_alloc(64, (t.bytes + 63) / 64 * 64);
        if (!t.data)
            st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "tensor");
        else
            memset(t.data, 0, t.bytes);
    }
    memset(&po, 0, sizeof po);
    po.tensor = t;
    for (int i = 0; st == DVPP_OK && i < 2; i++) /* warm-up: the worker's buffers */
        st = dvpp_pipeline_run(&w, &p, g.img.data, g.img.size, &po, &err);
    while (st == DVPP_OK) {
        t0 = bench_now_s();
        for (long i = 0; st == DVPP_OK && i < n; i++)
            st = dvpp_pipeline_run(&w, &p, g.img.data, g.img.size, &po, &err);
        dt = bench_now_s() - t0;
        if (dt >= 0.2 || dt >= o->target)
            break;
        n *= 2;
    }
    if (st != DVPP_OK) {
        rc = json_error(CASE_PIPE_FRAME, "pipeline", st, &err);
        goto out;
    }
    iters = (long)(n * o->target / dt + 0.5);
    if (iters < 1)
        iters = 1;
    for (int r = 0; st == DVPP_OK && r < o->runs; r++) {
        t0 = bench_now_s();
        for (long i = 0; st == DVPP_OK && i < iters; i++)
            st = dvpp_pipeline_run(&w, &p, g.img.data, g.img.size, &po, &err);
        per[r] = (bench_now_s() - t0) / (double)iters * 1e3;
    }
    if (st != DVPP_OK) {
        rc = json_error(CASE_PIPE_FRAME, "pipeline", st, &err);
        goto out;
    }
    memcpy(sorted, per, sizeof(double) * (size_t)o->runs);
    qsort(sorted, (size_t)o->runs, sizeof(double), bench_cmp_double);
    printf("{\"ok\":true,\"case\":\"pipe_frame\",\"threads\":1,\"width\":%u,\"height\":%u,"
           "\"format\":\"nv12\",\"out\":\"3x%ux%u f32 nchw\",\"iters\":%ld,"
           "\"ms_per_frame\":%.4f,\"runs_ms\":[",
           g.img.width, g.img.height, OUT_H, OUT_W, iters, sorted[o->runs / 2]);
    for (int r = 0; r < o->runs; r++)
        printf("%s%.4f", r ? "," : "", per[r]);
    printf("]}\n");
    fflush(stdout);
out:
    free(t.data);
    dvpp_worker_fini(&w);
    dvpp_buf_fini(&g.data);
    return rc;
}

/* --- decode / pipe224 driver ----------------------------------------------------- */

static int case_video(bench_case c, const dvpp_buf *in, const opts *o)
{
    run_stat rs[MAX_RUNS];
    double fps[MAX_RUNS], probe_ms, t0;
    dvpp_video_info info;
    pipe_job *j = NULL;
    unsigned sum = 0;
    dvpp_err err;
    dvpp_status st;
    run_stat dummy;
    int rc = 0;

    /* a probe alone: what the whole-video time spends before the first packet */
    t0 = bench_now_s();
    st = dvpp_video_probe(in->data, in->len, NULL, &info, &err);
    probe_ms = (bench_now_s() - t0) * 1e3;
    if (st != DVPP_OK)
        return json_error(c, "probe", st, &err);
    if (c == CASE_PIPE224) {
        j = calloc(1, sizeof(*j));
        if (!j)
            return json_error(c, "setup", DVPP_ENOMEM, NULL);
        dvpp_worker_init(&j->w, NULL);
        dvpp_video_request_init(&j->rq);
        j->rq.vdec.format = DVPP_PIXEL_NV12;
        j->rq.vdec.threads = o->threads;
        j->rq.has_pipe = true;
        j->rq.overlap = o->overlap;
        j->rq.convert_frames = o->convert;
        st = make_pipeline(&j->rq.pipe, &err);
        dvpp_buf_init(&j->out);
        if (st != DVPP_OK) {
            rc = json_error(c, "pipeline", st, &err);
            goto out;
        }
        /* a pooled buffer: room for every frame, faulted in, outside timing */
        if (!o->cold_out && info.frames > 0) {
            size_t bytes = (size_t)info.frames * 3 * OUT_H * OUT_W * sizeof(float);
            if (dvpp_buf_reserve(&j->out, bytes) != DVPP_OK) {
                rc = json_error(c, "setup", DVPP_ENOMEM, NULL);
                goto out;
            }
            memset(j->out.data, 0, j->out.cap);
        }
    }
    for (int i = 0; i < o->warm + o->runs; i++) {
        run_stat *r = i < o->warm ? &dummy : &rs[i - o->warm];
        if (c == CASE_DECODE)
            st = decode_once(in, o, &info, r, &sum, &err);
        else
            st = pipe_once(j, in, &info, r, &sum, &err);
        if (st != DVPP_OK) {
            rc = json_error(c, c == CASE_DECODE ? "decode" : "video_run", st, &err);
            goto out;
        }
        if (o->cold_out && j)
            dvpp_buf_fini(&j->out); /* every run starts from an empty buffer */
    }
    for (int r = 0; r < o->runs; r++)
        fps[r] = rs[r].s > 0 ? (double)rs[r].frames / rs[r].s : 0;
    printf("{\"ok\":true,\"case\":\"%s\",\"threads\":%u,\"width\":%u,\"height\":%u,"
           "\"codec\":\"%s\",\"profile\":",
           case_names[c], o->threads ? o->threads : 1, info.width, info.height,
           dvpp_video_codec_name(info.codec));
    json_str(stdout, info.profile);
    printf(",\"overlap\":%s", o->overlap && c == CASE_PIPE224 ? "true" : "false");
    printf(",\"convert\":%s", o->convert && c == CASE_PIPE224 ? "true" : "false");
    printf(",\"frames\":%llu,\"probe_ms\":%.3f,\"cold_out\":%s,\"checksum\":%u,\"runs\":[",
           (unsigned long long)(o->runs ? rs[0].frames : 0), probe_ms,
           o->cold_out && c == CASE_PIPE224 ? "true" : "false", sum);
    for (int r = 0; r < o->runs; r++)
        printf("%s{\"s\":%.6f,\"fps\":%.3f,\"cpu_s\":%.6f,\"frames\":%llu}", r ? "," : "",
               rs[r].s, fps[r], rs[r].cpu_s, (unsigned long long)rs[r].frames);
    qsort(fps, (size_t)o->runs, sizeof(double), bench_cmp_double);
    printf("],\"fps_median\":%.3f}\n", fps[o->runs / 2]);
    fflush(stdout);
out:
    if (j) {
        dvpp_buf_fini(&j->out);
        dvpp_worker_fini(&j->w);
        free(j);
    }
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_video [--case decode|pipe224|pipe_frame]... [--threads T] "
                    "[--runs N] [--warm W] [--target S] [--cold-out] [--overlap] [--convert] FILE\n");
    return 2;
}

int main(int argc, char **argv)
{
    opts o = {.threads = 1, .runs = 1, .warm = 0, .target = 0.5};
    bool want[CASE_COUNT] = {0}, any = false;
    dvpp_buf in;
    dvpp_err err;
    dvpp_status st;
    int rc = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            o.threads = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            o.runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warm") == 0 && i + 1 < argc)
            o.warm = atoi(argv[++i]);
        else if (strcmp(argv[i], "--target") == 0 && i + 1 < argc)
            o.target = atof(argv[++i]);
        else if (strcmp(argv[i], "--cold-out") == 0)
            o.cold_out = true;
        else if (strcmp(argv[i], "--overlap") == 0)
            o.overlap = true;
        else if (strcmp(argv[i], "--convert") == 0)
            o.convert = true;
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            const char *c = argv[++i];
            int k;
            for (k = 0; k < CASE_COUNT; k++)
                if (strcmp(c, case_names[k]) == 0)
                    break;
            if (k == CASE_COUNT) {
                fprintf(stderr, "bench_video: unknown case %s\n", c);
                return 2;
            }
            want[k] = any = true;
        } else if (argv[i][0] == '-' || o.path) {
            return usage();
        } else {
            o.path = argv[i];
        }
    }
    if (!o.path)
        return usage();
    if (o.runs < 1 || o.runs > MAX_RUNS || o.warm < 0 || o.target <= 0 || o.threads < 1 ||
        o.threads > 64) {
        fprintf(stderr, "bench_video: bad --runs, --warm, --target or --threads\n");
        return 2;
    }
    dvpp_buf_init(&in);
    st = dvpp_buf_read_file(&in, o.path, (size_t)1 << 30, &err);
    if (st != DVPP_OK) {
        fprintf(stderr, "bench_video: %s: %s\n", o.path, err.msg);
        return 1;
    }
    for (int k = 0; k < CASE_COUNT; k++) {
        if (any && !want[k])
            continue;
        rc |= k == CASE_PIPE_FRAME ? case_pipe_frame(&in, &o)
                                   : case_video((bench_case)k, &in, &o);
    }
    dvpp_buf_fini(&in);
    return rc;
}
