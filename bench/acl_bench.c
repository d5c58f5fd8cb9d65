/* acl_bench: the AscendCL layer (build/<b>/acl: libascendcl.so +
 * libacl_dvpp.so) timed as an Ascend program uses it, beside libdvpp called
 * directly in the same process (its own copy from libdvpp.a; the layer's
 * copies stay hidden inside the .so files). The difference between the two
 * is what the layer costs: argument and descriptor checks, the task record,
 * the hand-over to an engine worker thread and the wait in
 * aclrtSynchronizeStream.
 *
 * Cases (profile ascend310, the layer's default; buffers allocated once per
 * lane and reused, acldvppMalloc'd on the ACL side):
 *   decode         JPEG -> NV12 (JPEGD strides ALIGN(w,128) x ALIGN(h,16))
 *                  acl:    acldvppJpegDecodeAsync + aclrtSynchronizeStream
 *                  direct: dvpp_jpeg_decode, the options the layer uses
 *   decode_resize  the same, then NV12 -> 224x224 NV12, interpolation 1
 *                  (cv2 bilinear)
 *                  acl:    JpegDecodeAsync + VpcResizeAsync on one stream,
 *                          one aclrtSynchronizeStream per image
 *                  direct: dvpp_jpeg_decode + dvpp_vpc_crop_resize_paste
 *                          (parity ascend, mode 1, one context per lane)
 *   tiny           a 10x6 -> 16x16 NV12 resize: the fixed cost of one call
 *                  acl:    acldvppVpcResizeAsync + aclrtSynchronizeStream
 *                  direct: dvpp_vpc_crop_resize_paste
 * --threads N runs N lanes on N threads, each with its own stream, channel
 * and buffers (direct: its own context and buffers); the time per image is
 * the wall time of a run over all N lanes' images.
 *
 * Before timing, each case checks that the layer's output bytes equal the
 * direct call's (the two do the same work), and exits 1 if not.
 *
 * Method (reference/anchors.md): 2 warm-up calls per lane, a loop count
 * calibrated on one lane to about --target s, then --runs timed runs.
 * Output: one JSON line per (impl, case, file) with the seconds per image
 * of every run. Nothing here judges a time (bench/run_acl.py prints the
 * tables beside OpenCV).
 *
 *   acl_bench [--target S] [--runs N] [--threads N] [--impl acl|direct]...
 *             [--case decode|decode_resize|tiny]... [FILE.jpg]...
 * (default: both impls; the tiny case needs no file.) Exit 0, 1 on a failed
 * call (its code and aclGetRecentErrMsg on stderr), 2 on a usage error.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"

#include "dvpp_image.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_vpc.h"

#include "bench_util.h"

#define MAX_RUNS 64
#define MAX_THREADS 16
#define MAX_FILES 16
#define WARMUP 2
#define OUT_W 224u
#define OUT_H 224u
#define TINY_SW 10u
#define TINY_SH 6u
#define TINY_DW 16u
#define TINY_DH 16u
#define VPC_MIN_STRIDE 32u /* VPC's widthStride floor on the 310 */

typedef enum bench_impl { IMPL_ACL, IMPL_DIRECT, IMPL_COUNT } bench_impl;
typedef enum bench_case { CASE_DECODE, CASE_DECODE_RESIZE, CASE_TINY, CASE_COUNT } bench_case;

static const char *const impl_names[IMPL_COUNT] = {"acl", "direct"};
static const char *const case_names[CASE_COUNT] = {"decode", "decode_resize", "tiny"};

typedef struct jpeg_file {
    const char *path;
    uint8_t *data; /* malloc'd; the ACL lanes copy it into DVPP memory */
    uint32_t len;
    uint32_t width, height;
} jpeg_file;

/* One ACL lane: what one program thread owns. */
typedef struct acl_lane {
    aclrtStream stream;
    acldvppChannelDesc *chan;
    bool chan_made;
    acldvppResizeConfig *rc;
    void *in, *mid, *out;          /* acldvppMalloc'd */
    uint32_t in_len, mid_size, out_size;
    acldvppPicDesc *mid_desc, *out_desc, *src_desc; /* src: the tiny input */
} acl_lane;

/* One direct lane: libdvpp as a worker calls it. */
typedef struct direct_lane {
    dvpp_jpeg_decode_opts jo;
    dvpp_limits lim;
    dvpp_resize_opts ro;
    dvpp_vpc_ctx vpc;
    bool vpc_made;
    dvpp_image mid, out, src; /* src: the tiny input */
    size_t mid_cap, out_cap, src_cap;
} direct_lane;

typedef struct lane {
    bench_impl impl;
    bench_case bcase;
    const jpeg_file *file;
    aclrtContext ctx;
    acl_lane a;
    direct_lane d;
    long iters;  /* per run, set before a run */
    int failed;  /* a call failed during the run */
} lane;

/* --- helpers ------------------------------------------------------------------------------ */

static uint32_t align_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

/* Report a failed ACL call; false when it failed. */
static bool acl_ok(aclError e, const char *call)
{
    const char *msg;

    if (e == ACL_SUCCESS)
        return true;
    msg = aclGetRecentErrMsg();
    fprintf(stderr, "acl_bench: %s failed: error %d: %s\n", call, (int)e,
            msg ? msg : "(no message)");
    return false;
}

static bool dvpp_ok(dvpp_status st, const dvpp_err *err, const char *call)
{
    if (st == DVPP_OK)
        return true;
    fprintf(stderr, "acl_bench: %s failed: %s\n", call, err->msg);
    return false;
}

static int read_jpeg(const char *path, jpeg_file *f)
{
    FILE *fp = fopen(path, "rb");
    long n;
    int rc = 1;

    memset(f, 0, sizeof(*f));
    f->path = path;
    if (!fp) {
        fprintf(stderr, "acl_bench: cannot open %s\n", path);
        return 1;
    }
    if (fseek(fp, 0, SEEK_END) != 0 || (n = ftell(fp)) <= 0 || n > INT32_MAX ||
        fseek(fp, 0, SEEK_SET) != 0) {
        fprintf(stderr, "acl_bench: %s: empty or unreadable\n", path);
        goto out;
    }
    f->data = malloc((size_t)n);
    if (!f->data || fread(f->data, 1, (size_t)n, fp) != (size_t)n) {
        fprintf(stderr, "acl_bench: cannot read %s\n", path);
        goto out;
    }
    f->len = (uint32_t)n;
    if (!acl_ok(acldvppJpegGetImageInfo(f->data, f->len, &f->width, &f->height, NULL),
                "acldvppJpegGetImageInfo"))
        goto out;
    rc = 0;
out:
    fclose(fp);
    if (rc) {
        free(f->data);
        f->data = NULL;
    }
    return rc;
}

/* A picture description over @data, as programs fill one. */
static acldvppPicDesc *make_desc(void *data, uint32_t size, uint32_t w, uint32_t h,
                                 uint32_t ws, uint32_t hs)
{
    acldvppPicDesc *d = acldvppCreatePicDesc();

    if (!d) {
        fprintf(stderr, "acl_bench: acldvppCreatePicDesc failed\n");
        return NULL;
    }
    if (acl_ok(acldvppSetPicDescData(d, data), "acldvppSetPicDescData") &&
        acl_ok(acldvppSetPicDescSize(d, size), "acldvppSetPicDescSize") &&
        acl_ok(acldvppSetPicDescFormat(d, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
               "acldvppSetPicDescFormat") &&
        acl_ok(acldvppSetPicDescWidth(d, w), "acldvppSetPicDescWidth") &&
        acl_ok(acldvppSetPicDescHeight(d, h), "acldvppSetPicDescHeight") &&
        acl_ok(acldvppSetPicDescWidthStride(d, ws), "acldvppSetPicDescWidthStride") &&
        acl_ok(acldvppSetPicDescHeightStride(d, hs), "acldvppSetPicDescHeightStride"))
        return d;
    acldvppDestroyPicDesc(d);
    return NULL;
}

/* --- ACL lanes ---------------------------------------------------------------------------- */

static int acl_lane_open_io(acl_lane *a, const jpeg_file *f)
{
    aclrtRunMode mode;

    if (!acl_ok(aclrtGetRunMode(&mode), "aclrtGetRunMode") ||
        !acl_ok(acldvppMalloc(&a->in, f->len), "acldvppMalloc") ||
        !acl_ok(aclrtMemcpy(a->in, f->len, f->data, f->len,
                            mode == ACL_HOST ? ACL_MEMCPY_HOST_TO_DEVICE
                                             : ACL_MEMCPY_DEVICE_TO_DEVICE),
                "aclrtMemcpy") ||
        !acl_ok(acldvppJpegPredictDecSize(f->data, f->len, PIXEL_FORMAT_YUV_SEMIPLANAR_420,
                                          &a->mid_size),
                "acldvppJpegPredictDecSize") ||
        !acl_ok(acldvppMalloc(&a->mid, a->mid_size), "acldvppMalloc"))
        return 1;
    a->in_len = f->len;
    /* JPEGD on the 310: ALIGN(w, 128) x ALIGN(h, 16); the same description
     * is the VPC's input once the stream has run the decode. */
    a->mid_desc = make_desc(a->mid, a->mid_size, f->width, f->height,
                            align_up(f->width, 128), align_up(f->height, 16));
    return a->mid_desc ? 0 : 1;
}

static int acl_lane_open(acl_lane *a, bench_case c, const jpeg_file *f)
{
    uint32_t dw = c == CASE_TINY ? TINY_DW : OUT_W, dh = c == CASE_TINY ? TINY_DH : OUT_H;
    uint32_t dws = align_up(dw, 16) < VPC_MIN_STRIDE ? VPC_MIN_STRIDE : align_up(dw, 16);
    uint32_t sws = VPC_MIN_STRIDE, shs = align_up(TINY_SH, 2);
    void *src = NULL;

    memset(a, 0, sizeof(*a));
    if (!acl_ok(aclrtCreateStream(&a->stream), "aclrtCreateStream"))
        return 1;
    a->chan = acldvppCreateChannelDesc();
    if (!a->chan || !acl_ok(acldvppCreateChannel(a->chan), "acldvppCreateChannel"))
        return 1;
    a->chan_made = true;
    if (c != CASE_TINY && acl_lane_open_io(a, f))
        return 1;
    if (c == CASE_DECODE)
        return 0;
    a->rc = acldvppCreateResizeConfig();
    if (!a->rc || !acl_ok(acldvppSetResizeConfigInterpolation(a->rc, 1),
                          "acldvppSetResizeConfigInterpolation"))
        return 1;
    a->out_size = dws * align_up(dh, 2) * 3 / 2;
    if (!acl_ok(acldvppMalloc(&a->out, a->out_size), "acldvppMalloc"))
        return 1;
    a->out_desc = make_desc(a->out, a->out_size, dw, dh, dws, align_up(dh, 2));
    if (!a->out_desc)
        return 1;
    if (c != CASE_TINY)
        return 0;
    if (!acl_ok(acldvppMalloc(&src, sws * shs * 3 / 2), "acldvppMalloc"))
        return 1;
    for (uint32_t i = 0; i < sws * shs * 3 / 2; i++) /* a gradient */
        ((uint8_t *)src)[i] = (uint8_t)(i * 7);
    a->src_desc = make_desc(src, sws * shs * 3 / 2, TINY_SW, TINY_SH, sws, shs);
    if (!a->src_desc) {
        acldvppFree(src);
        return 1;
    }
    return 0;
}

/* acldvppFree refuses NULL (with a message): free only what was made. */
static void acl_free(void *p)
{
    if (p)
        acldvppFree(p);
}

static void acl_lane_close(acl_lane *a)
{
    if (a->src_desc) {
        acl_free(acldvppGetPicDescData(a->src_desc));
        acldvppDestroyPicDesc(a->src_desc);
    }
    if (a->out_desc)
        acldvppDestroyPicDesc(a->out_desc);
    if (a->mid_desc)
        acldvppDestroyPicDesc(a->mid_desc);
    acl_free(a->out);
    acl_free(a->mid);
    acl_free(a->in);
    if (a->rc)
        acldvppDestroyResizeConfig(a->rc);
    if (a->chan_made)
        acldvppDestroyChannel(a->chan);
    if (a->chan)
        acldvppDestroyChannelDesc(a->chan);
    if (a->stream)
        aclrtDestroyStream(a->stream);
}

/* One image (one tiny resize) through the layer, synchronized. */
static int acl_lane_step(acl_lane *a, bench_case c)
{
    aclError e = ACL_SUCCESS;

    if (c != CASE_TINY)
        e = acldvppJpegDecodeAsync(a->chan, a->in, a->in_len, a->mid_desc, a->stream);
    if (e == ACL_SUCCESS && c != CASE_DECODE)
        e = acldvppVpcResizeAsync(a->chan, c == CASE_TINY ? a->src_desc : a->mid_desc,
                                  a->out_desc, a->rc, a->stream);
    if (!acl_ok(e, c == CASE_TINY ? "acldvppVpcResizeAsync" : "an *Async call") ||
        !acl_ok(aclrtSynchronizeStream(a->stream), "aclrtSynchronizeStream"))
        return 1;
    return 0;
}

/* --- direct lanes ------------------------------------------------------------------------- */

/* @img's buffer for its layout (img->size bytes), allocated once. */
static int direct_image(dvpp_image *img, size_t *cap)
{
    if (img->size == 0) /* dvpp_vpc_image_init leaves the size to the caller */
        img->size = dvpp_vpc_buffer_bytes(DVPP_PROFILE_ASCEND310, img);
    *cap = img->size;
    img->data = dvpp_malloc(*cap);
    if (!img->data) {
        fprintf(stderr, "acl_bench: cannot allocate %zu bytes\n", *cap);
        return 1;
    }
    memset(img->data, 0, *cap); /* fault the pages in once, outside timing */
    return 0;
}

static int direct_lane_open(direct_lane *d, bench_case c, const jpeg_file *f)
{
    uint32_t dw = c == CASE_TINY ? TINY_DW : OUT_W, dh = c == CASE_TINY ? TINY_DH : OUT_H;
    dvpp_err err;

    memset(d, 0, sizeof(*d));
    dvpp_err_clear(&err);
    d->lim = dvpp_limits_default();
    dvpp_jpeg_decode_opts_init(&d->jo); /* as the layer's decode task */
    d->jo.profile = DVPP_PROFILE_ASCEND310;
    d->jo.format = DVPP_PIXEL_NV12;
    dvpp_resize_opts_init(&d->ro); /* as the layer's VPC task */
    d->ro.parity = DVPP_PARITY_ASCEND;
    d->ro.ascend_mode = 1;
    dvpp_vpc_ctx_init(&d->vpc, DVPP_PROFILE_ASCEND310);
    d->vpc_made = true;
    if (c != CASE_TINY &&
        (!dvpp_ok(dvpp_jpeg_decode_geometry(f->data, f->len, &d->jo, &d->lim, &d->mid, &err),
                  &err, "dvpp_jpeg_decode_geometry") ||
         direct_image(&d->mid, &d->mid_cap)))
        return 1;
    if (c == CASE_DECODE)
        return 0;
    if (!dvpp_ok(dvpp_vpc_image_init(&d->out, DVPP_PROFILE_ASCEND310, DVPP_PIXEL_NV12, dw, dh,
                                     &err), &err, "dvpp_vpc_image_init") ||
        direct_image(&d->out, &d->out_cap))
        return 1;
    if (c != CASE_TINY)
        return 0;
    if (!dvpp_ok(dvpp_vpc_image_init(&d->src, DVPP_PROFILE_ASCEND310, DVPP_PIXEL_NV12,
                                     TINY_SW, TINY_SH, &err), &err, "dvpp_vpc_image_init") ||
        direct_image(&d->src, &d->src_cap))
        return 1;
    for (size_t i = 0; i < d->src_cap; i++) /* the ACL lane's gradient */
        d->src.data[i] = (uint8_t)(i * 7);
    return 0;
}

static void direct_lane_close(direct_lane *d)
{
    dvpp_free(d->src.data, d->src_cap);
    dvpp_free(d->out.data, d->out_cap);
    dvpp_free(d->mid.data, d->mid_cap);
    if (d->vpc_made)
        dvpp_vpc_ctx_fini(&d->vpc);
}

static int direct_lane_step(direct_lane *d, bench_case c, const jpeg_file *f)
{
    dvpp_err err;

    dvpp_err_clear(&err);
    if (c != CASE_TINY) {
        d->mid.size = d->mid_cap;
        if (!dvpp_ok(dvpp_jpeg_decode(f->data, f->len, &d->jo, &d->lim, &d->mid, &err), &err,
                     "dvpp_jpeg_decode"))
            return 1;
    }
    if (c != CASE_DECODE &&
        !dvpp_ok(dvpp_vpc_crop_resize_paste(&d->vpc, c == CASE_TINY ? &d->src : &d->mid, NULL,
                                            &d->out, NULL, &d->ro, &err),
                 &err, "dvpp_vpc_crop_resize_paste"))
        return 1;
    return 0;
}

/* --- lanes and runs ----------------------------------------------------------------------- */

static int lane_step(lane *l)
{
    return l->impl == IMPL_ACL ? acl_lane_step(&l->a, l->bcase)
                               : direct_lane_step(&l->d, l->bcase, l->file);
}

static void *lane_thread(void *arg)
{
    lane *l = arg;

    if (l->impl == IMPL_ACL && !acl_ok(aclrtSetCurrentContext(l->ctx), "aclrtSetCurrentContext"))
        l->failed = 1;
    for (long i = 0; i < l->iters && !l->failed; i++)
        l->failed |= lane_step(l);
    return NULL;
}

/* @n lanes, @iters images each, on @n threads (the calling one when n = 1);
 * wall seconds into *secs. */
static int run_lanes(lane *lanes, int n, long iters, double *secs)
{
    pthread_t tid[MAX_THREADS];
    int started = 0, rc = 0;
    double t0;

    for (int k = 0; k < n; k++) {
        lanes[k].iters = iters;
        lanes[k].failed = 0;
    }
    t0 = bench_now_s();
    if (n == 1) {
        lane_thread(&lanes[0]);
    } else {
        for (; started < n; started++)
            if (pthread_create(&tid[started], NULL, lane_thread, &lanes[started]) != 0)
                break;
        for (int k = 0; k < started; k++)
            pthread_join(tid[k], NULL);
        rc = started < n;
    }
    *secs = bench_now_s() - t0;
    for (int k = 0; k < n; k++)
        rc |= lanes[k].failed;
    return rc;
}

/* The layer's bytes equal the direct call's: @a and @d have both run once. */
static int same_output(const lane *a, const lane *d)
{
    const acl_lane *x = &a->a;
    const direct_lane *y = &d->d;
    /* NV12 layouts: the bytes both wrote */
    size_t mid_n = (size_t)y->mid.width_stride * y->mid.height_stride * 3 / 2;
    size_t out_n = (size_t)y->out.width_stride * y->out.height_stride * 3 / 2;
    bool mid_ok = true, out_ok = true;

    if (x->mid_desc && (acldvppGetPicDescRetCode(x->mid_desc) != 0 ||
                        acldvppGetPicDescSize(x->mid_desc) != mid_n || x->mid_size < mid_n ||
                        memcmp(x->mid, y->mid.data, mid_n) != 0))
        mid_ok = false;
    if (x->out_desc && (acldvppGetPicDescRetCode(x->out_desc) != 0 ||
                        x->out_size < out_n || memcmp(x->out, y->out.data, out_n) != 0))
        out_ok = false;
    if (mid_ok && out_ok)
        return 0;
    fprintf(stderr, "acl_bench: %s on %s: the layer's %s differs from libdvpp's\n",
            case_names[a->bcase], a->file ? a->file->path : "(tiny)",
            mid_ok ? "resized picture" : "decoded picture");
    return 1;
}

static void lanes_close(lane *lanes, int n)
{
    for (int k = 0; k < n; k++) {
        if (lanes[k].impl == IMPL_ACL)
            acl_lane_close(&lanes[k].a);
        else
            direct_lane_close(&lanes[k].d);
    }
}

static int lanes_open(lane *lanes, int n, bench_impl impl, bench_case c, const jpeg_file *f,
                      aclrtContext ctx)
{
    int rc = 0;

    memset(lanes, 0, sizeof(*lanes) * (size_t)n);
    for (int k = 0; k < n; k++) {
        lanes[k].impl = impl;
        lanes[k].bcase = c;
        lanes[k].file = f;
        lanes[k].ctx = ctx;
        rc |= impl == IMPL_ACL ? acl_lane_open(&lanes[k].a, c, f)
                               : direct_lane_open(&lanes[k].d, c, f);
    }
    return rc;
}

/* Warm-ups, then a loop count calibrated on one lane to ~@target s. */
static int calibrate(lane *lanes, int n, double target, long *iters)
{
    double dt = 0;
    long k = 1;

    for (int i = 0; i < n; i++)
        for (int w = 0; w < WARMUP; w++)
            if (lane_step(&lanes[i]))
                return 1;
    for (;;) {
        if (run_lanes(lanes, 1, k, &dt))
            return 1;
        if (dt >= 0.2 || dt >= target)
            break;
        k *= 2;
    }
    *iters = (long)((double)k * target / dt) + 1;
    return 0;
}

static void print_result(bench_impl impl, bench_case c, const jpeg_file *f, int n, long iters,
                         const double *per, int runs)
{
    printf("{\"impl\": \"%s\", \"case\": \"%s\", \"file\": \"%s\", \"width\": %u, "
           "\"height\": %u, \"threads\": %d, \"iters\": %ld, \"sec\": [",
           impl_names[impl], case_names[c], f ? f->path : "", f ? f->width : TINY_SW,
           f ? f->height : TINY_SH, n, iters);
    for (int r = 0; r < runs; r++)
        printf("%s%.9g", r ? ", " : "", per[r]);
    printf("]}\n");
    fflush(stdout);
}

static int measure(bench_impl impl, bench_case c, const jpeg_file *f, int n, double target,
                   int runs, aclrtContext ctx)
{
    lane lanes[MAX_THREADS];
    double per[MAX_RUNS], dt;
    long iters = 0;
    int rc;

    rc = lanes_open(lanes, n, impl, c, f, ctx) || calibrate(lanes, n, target, &iters);
    for (int r = 0; r < runs && !rc; r++) {
        rc = run_lanes(lanes, n, iters, &dt);
        per[r] = dt / ((double)iters * n);
    }
    if (!rc)
        print_result(impl, c, f, n, iters, per, runs);
    lanes_close(lanes, n);
    return rc;
}

/* One lane of each impl run once, their bytes compared, before timing. */
static int check_case(bench_case c, const jpeg_file *f, aclrtContext ctx)
{
    lane a, d;
    int rc;

    rc = lanes_open(&a, 1, IMPL_ACL, c, f, ctx) | lanes_open(&d, 1, IMPL_DIRECT, c, f, ctx);
    if (!rc)
        rc = lane_step(&a) || lane_step(&d) || same_output(&a, &d);
    lanes_close(&a, 1);
    lanes_close(&d, 1);
    return rc;
}

/* --- main --------------------------------------------------------------------------------- */

typedef struct options {
    double target;
    int runs, threads;
    bool impl[IMPL_COUNT], bcase[CASE_COUNT];
    const char *files[MAX_FILES];
    int nfiles;
} options;

static int pick(const char *name, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

static int parse_args(int argc, char **argv, options *o)
{
    bool any_impl = false, any_case = false;
    int k;

    memset(o, 0, sizeof(*o));
    o->target = 0.5;
    o->runs = 7;
    o->threads = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--target") == 0 && v) {
            o->target = atof(v), i++;
        } else if (strcmp(argv[i], "--runs") == 0 && v) {
            o->runs = atoi(v), i++;
        } else if (strcmp(argv[i], "--threads") == 0 && v) {
            o->threads = atoi(v), i++;
        } else if (strcmp(argv[i], "--impl") == 0 && v &&
                   (k = pick(v, impl_names, IMPL_COUNT)) >= 0) {
            o->impl[k] = any_impl = true, i++;
        } else if (strcmp(argv[i], "--case") == 0 && v &&
                   (k = pick(v, case_names, CASE_COUNT)) >= 0) {
            o->bcase[k] = any_case = true, i++;
        } else if (argv[i][0] != '-' && o->nfiles < MAX_FILES) {
            o->files[o->nfiles++] = argv[i];
        } else {
            return 1;
        }
    }
    for (k = 0; k < IMPL_COUNT; k++)
        o->impl[k] |= !any_impl;
    for (k = 0; k < CASE_COUNT; k++)
        o->bcase[k] |= !any_case;
    return o->runs < 1 || o->runs > MAX_RUNS || o->target <= 0 || o->threads < 1 ||
           o->threads > MAX_THREADS;
}

/* Every chosen case of @f (NULL: the tiny case), each impl. */
static int run_file(const options *o, const jpeg_file *f, aclrtContext ctx)
{
    int rc = 0;

    for (int c = 0; c < CASE_COUNT && !rc; c++) {
        if (!o->bcase[c] || (c == CASE_TINY) != (f == NULL))
            continue;
        rc = check_case((bench_case)c, f, ctx);
        for (int i = 0; i < IMPL_COUNT && !rc; i++)
            if (o->impl[i])
                rc = measure((bench_impl)i, (bench_case)c, f, o->threads, o->target, o->runs,
                             ctx);
    }
    return rc;
}

int main(int argc, char **argv)
{
    jpeg_file files[MAX_FILES];
    aclrtContext ctx = NULL;
    bool inited = false, dev = false;
    options o;
    int nread = 0, rc = 1;

    if (parse_args(argc, argv, &o)) {
        fprintf(stderr, "usage: acl_bench [--target S] [--runs 1..%d] [--threads 1..%d] "
                        "[--impl acl|direct]... [--case decode|decode_resize|tiny]... "
                        "[FILE.jpg]...\n", MAX_RUNS, MAX_THREADS);
        return 2;
    }
    if (!acl_ok(aclInit(NULL), "aclInit"))
        goto out;
    inited = true;
    if (!acl_ok(aclrtSetDevice(0), "aclrtSetDevice"))
        goto out;
    dev = true;
    if (!acl_ok(aclrtCreateContext(&ctx, 0), "aclrtCreateContext"))
        goto out;
    for (; nread < o.nfiles; nread++)
        if (read_jpeg(o.files[nread], &files[nread]))
            goto out;
    rc = o.bcase[CASE_TINY] ? run_file(&o, NULL, ctx) : 0;
    for (int i = 0; i < o.nfiles && !rc; i++)
        rc = run_file(&o, &files[i], ctx);
out:
    for (int i = 0; i < nread; i++)
        free(files[i].data);
    if (ctx)
        aclrtDestroyContext(ctx);
    if (dev)
        aclrtResetDevice(0);
    if (inited)
        aclFinalize();
    return rc;
}
