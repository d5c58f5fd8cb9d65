/* Unit tests for codecs/dvpp_video.c: VENC -> VDEC round trips of
 * synthetic frames (H.264 and H.265, Annex-B and MP4), frame count and
 * order (each frame carries its number in pixels), PSNR of the Y plane,
 * key frames (GOP, forced IDR), sampling (every N, key frames only, time
 * range, a frame cap), damaged streams (truncated, bit-flipped: ECORRUPT,
 * never a crash), a hand-written H.264 SPS claiming a huge picture
 * (ELIMIT, at once), Matroska pts at both ends of int64 (exact times,
 * no overflow), the byte and frame budgets, bad options (EINVAL),
 * allocation failures (ENOMEM, nothing leaked).
 *
 * The streams are encoded once per run (group setup). FFmpeg allocates
 * with av_malloc, so the test allocator only sees dvpp's own buffers (the
 * encoder, the output dvpp_buf, the converted frame); leaks inside FFmpeg
 * are LeakSanitizer's job (make check; tests/tools/lsan.supp).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dvpp_video.h"
#include "test_alloc.h"

#define W 320
#define H 240
#define T 30
/* The frame number is written as BITS blocks of BLOCK_W x BLOCK_H luma
 * (dark 0, bright 1) across the top left: flat, so it survives coding. */
#define BITS 8
#define BLOCK_W 32
#define BLOCK_H 16
#define MIN_PSNR 35.0

/* ------------------------------------------------------------------------ */
/* Synthetic frames                                                          */

static uint32_t g_seed;

static uint32_t lcg(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 24;
}

static uint8_t clamp8(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Frame @n as tight NV12 into @img (allocated by the caller): a gradient
 * moving with n, +-4 of noise, chroma gradients, the number in the top
 * left blocks. */
static void make_frame(dvpp_image *img, unsigned n)
{
    uint8_t *y = img->data, *uv = img->data + (size_t)W * H;

    for (unsigned r = 0; r < H; r++)
        for (unsigned c = 0; c < W; c++)
            y[r * W + c] = clamp8((int)((c + 3 * n) * 200 / (W + 90) + r / 8) + 16 +
                                  (int)(lcg() % 9) - 4);
    for (unsigned r = 0; r < H / 2; r++)
        for (unsigned c = 0; c < W / 2; c++) {
            uv[r * W + 2 * c] = clamp8((int)(64 + r + n));
            uv[r * W + 2 * c + 1] = clamp8((int)(192 - c / 2 + n));
        }
    for (unsigned b = 0; b < BITS; b++)
        for (unsigned r = 0; r < BLOCK_H; r++)
            memset(y + r * W + b * BLOCK_W, (n >> b) & 1 ? 216 : 40, BLOCK_W);
}

/* The number written by make_frame, read back from a decoded Y plane. */
static unsigned frame_number(const uint8_t *y, size_t stride)
{
    unsigned n = 0;

    for (unsigned b = 0; b < BITS; b++) {
        unsigned sum = 0;
        for (unsigned r = 4; r < BLOCK_H - 4; r++)
            for (unsigned c = 8; c < BLOCK_W - 8; c++)
                sum += y[r * stride + b * BLOCK_W + c];
        if (sum / ((BLOCK_H - 8) * (BLOCK_W - 16)) > 128)
            n |= 1u << b;
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Encoded streams, made once                                                */

typedef struct stream {
    dvpp_buf bytes;
    uint64_t packets, keyframes;
} stream;

typedef enum {
    S264_ANNEXB, S264_MP4, S265_ANNEXB, S265_MP4, /* defaults: gop 30, crf 23 */
    S264_GOP10, S265_GOP10,                       /* gop 10 */
    S264_IDR7, S265_IDR7,                         /* force_idr on frame 7 */
    NSTREAMS
} stream_id;

typedef struct fixture {
    dvpp_image src[T];  /* the frames (tight NV12, malloc'd) */
    stream s[NSTREAMS];
} fixture;

static fixture *g_fx;

/* Encode the T frames with @o (size set here); @idr: force frame @idr
 * to IDR (-1: none). */
static dvpp_status encode(dvpp_venc_opts *o, int idr, stream *out, dvpp_err *err)
{
    dvpp_venc *e = NULL;
    dvpp_status st;

    o->width = W;
    o->height = H;
    st = dvpp_venc_open(o, &out->bytes, &e, err);
    for (int i = 0; st == DVPP_OK && i < T; i++)
        st = dvpp_venc_frame(e, &g_fx->src[i], i == idr, err);
    if (st == DVPP_OK)
        st = dvpp_venc_finish(e, err);
    if (st == DVPP_OK)
        out->packets = dvpp_venc_packets(e, &out->keyframes);
    dvpp_venc_close(e);
    return st;
}

static void opts(dvpp_venc_opts *o, dvpp_video_codec c, dvpp_venc_container k,
                 uint32_t gop)
{
    dvpp_venc_opts_init(o);
    o->codec = c;
    o->container = k;
    o->gop = gop;
}

static int group_setup(void **state)
{
    static const struct {
        dvpp_video_codec codec;
        dvpp_venc_container container;
        uint32_t gop;
        int idr;
    } how[NSTREAMS] = {
        [S264_ANNEXB] = {DVPP_VIDEO_H264, DVPP_VENC_ANNEXB, 30, -1},
        [S264_MP4] = {DVPP_VIDEO_H264, DVPP_VENC_MP4, 30, -1},
        [S265_ANNEXB] = {DVPP_VIDEO_H265, DVPP_VENC_ANNEXB, 30, -1},
        [S265_MP4] = {DVPP_VIDEO_H265, DVPP_VENC_MP4, 30, -1},
        [S264_GOP10] = {DVPP_VIDEO_H264, DVPP_VENC_ANNEXB, 10, -1},
        [S265_GOP10] = {DVPP_VIDEO_H265, DVPP_VENC_ANNEXB, 10, -1},
        [S264_IDR7] = {DVPP_VIDEO_H264, DVPP_VENC_ANNEXB, 30, 7},
        [S265_IDR7] = {DVPP_VIDEO_H265, DVPP_VENC_ANNEXB, 30, 7},
    };
    dvpp_err err;

    (void)state;
    g_fx = calloc(1, sizeof(*g_fx));
    if (!g_fx)
        return -1;
    g_seed = 12345;
    for (unsigned i = 0; i < T; i++) {
        if (dvpp_image_init(&g_fx->src[i], DVPP_PIXEL_NV12, W, H, 1, 1, NULL) != DVPP_OK)
            return -1;
        g_fx->src[i].size = (size_t)W * H * 3 / 2;
        g_fx->src[i].data = malloc(g_fx->src[i].size);
        if (!g_fx->src[i].data)
            return -1;
        make_frame(&g_fx->src[i], i);
    }
    for (int k = 0; k < NSTREAMS; k++) {
        dvpp_venc_opts o;
        opts(&o, how[k].codec, how[k].container, how[k].gop);
        dvpp_buf_init(&g_fx->s[k].bytes);
        if (encode(&o, how[k].idr, &g_fx->s[k], &err) != DVPP_OK) {
            fprintf(stderr, "stream %d: %s\n", k, err.msg);
            return -1;
        }
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    for (unsigned i = 0; g_fx && i < T; i++)
        free(g_fx->src[i].data);
    for (int k = 0; g_fx && k < NSTREAMS; k++)
        dvpp_buf_fini(&g_fx->s[k].bytes);
    free(g_fx);
    return 0;
}

/* Every test runs with the counting allocator and must leave nothing. */
static int test_setup(void **state)
{
    (void)state;
    test_alloc_install();
    return 0;
}

static int test_teardown(void **state)
{
    (void)state;
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Decoding into a record of what arrived                                    */

#define MAX_KEPT 64

typedef struct record {
    unsigned n;                    /* frames delivered */
    uint64_t index[MAX_KEPT];
    unsigned number[MAX_KEPT];     /* read from the pixels */
    double time_s[MAX_KEPT];
    int64_t pts[MAX_KEPT];
    bool key[MAX_KEPT];
    double min_psnr;               /* Y plane against the source frame */
    unsigned fail_at;              /* the sink fails this frame (1-based) */
} record;

static double psnr_y(const dvpp_image *img, const dvpp_image *src)
{
    double se = 0;

    for (unsigned r = 0; r < H; r++)
        for (unsigned c = 0; c < W; c++) {
            double d = (double)img->data[(size_t)r * img->width_stride + c] -
                       (double)src->data[(size_t)r * W + c];
            se += d * d;
        }
    return se == 0 ? 99.0 : 10.0 * log10(255.0 * 255.0 / (se / (W * H)));
}

static dvpp_status sink(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    record *r = ctx;
    unsigned num;

    if (r->fail_at && r->n + 1 == r->fail_at)
        return dvpp_err_set(err, DVPP_EIO, "sink", "the sink refuses frame %u", r->n);
    if (r->n == MAX_KEPT)
        return dvpp_err_set(err, DVPP_ENOSPC, "sink", "too many frames");
    assert_int_equal(f->kept, r->n);
    assert_int_equal(f->image->width, W);
    assert_int_equal(f->image->height, H);
    r->index[r->n] = f->index;
    r->time_s[r->n] = f->time_s;
    r->pts[r->n] = f->pts;
    r->key[r->n] = f->key;
    if (f->image->format == DVPP_PIXEL_NV12) {
        num = frame_number(f->image->data, f->image->width_stride);
        r->number[r->n] = num;
        if (num < T) {
            double p = psnr_y(f->image, &g_fx->src[num]);
            if (p < r->min_psnr)
                r->min_psnr = p;
        }
    }
    r->n++;
    return DVPP_OK;
}

static dvpp_status decode(const dvpp_buf *b, const dvpp_vdec_opts *o, const dvpp_limits *lim,
                          record *r, dvpp_video_info *info, dvpp_err *err)
{
    dvpp_vdec_opts def;

    if (!o) {
        dvpp_vdec_opts_init(&def);
        o = &def;
    }
    memset(r, 0, sizeof(*r));
    r->min_psnr = 99.0;
    dvpp_err_clear(err);
    return dvpp_video_decode(b->data, b->len, o, lim, sink, r, info, err);
}

static const dvpp_buf *bytes_of(stream_id k)
{
    return &g_fx->s[k].bytes;
}

/* ------------------------------------------------------------------------ */
/* Round trips                                                               */

static void roundtrip(stream_id k, dvpp_video_codec codec, const char *container)
{
    dvpp_video_info info;
    dvpp_err err;
    record r;

    assert_int_equal(decode(bytes_of(k), NULL, NULL, &r, &info, &err), DVPP_OK);
    assert_int_equal(r.n, T);
    for (unsigned i = 0; i < T; i++) {
        assert_int_equal(r.index[i], i);
        assert_int_equal(r.number[i], i); /* order kept, nothing dropped */
    }
    assert_true(r.key[0]);
    if (r.min_psnr < MIN_PSNR)
        fail_msg("Y PSNR %.2f dB < %.1f", r.min_psnr, MIN_PSNR);
    assert_int_equal(info.codec, codec);
    assert_non_null(strstr(info.container, container));
    assert_int_equal(info.width, W);
    assert_int_equal(info.height, H);
    assert_int_equal(info.bit_depth, 8);
    assert_int_equal(g_fx->s[k].packets, T);
}

static void test_h264_annexb(void **state)
{
    (void)state;
    roundtrip(S264_ANNEXB, DVPP_VIDEO_H264, "h264");
}

static void test_h264_mp4(void **state)
{
    (void)state;
    roundtrip(S264_MP4, DVPP_VIDEO_H264, "mp4");
}

static void test_h265_annexb(void **state)
{
    (void)state;
    roundtrip(S265_ANNEXB, DVPP_VIDEO_H265, "hevc");
}

static void test_h265_mp4(void **state)
{
    (void)state;
    roundtrip(S265_MP4, DVPP_VIDEO_H265, "mp4");
}

static void test_probe(void **state)
{
    dvpp_video_info info;
    dvpp_err err;

    (void)state;
    assert_int_equal(dvpp_video_probe(bytes_of(S264_MP4)->data, bytes_of(S264_MP4)->len, NULL,
                                      &info, &err), DVPP_OK);
    assert_int_equal(info.codec, DVPP_VIDEO_H264);
    assert_int_equal(info.width, W);
    assert_int_equal(info.height, H);
    assert_int_equal(info.frames, T);
    assert_float_equal(info.fps, 30.0, 1e-6);
    assert_float_equal(info.duration_s, 1.0, 1e-3);
    assert_int_equal(dvpp_video_probe(bytes_of(S265_MP4)->data, bytes_of(S265_MP4)->len, NULL,
                                      &info, &err), DVPP_OK);
    assert_int_equal(info.codec, DVPP_VIDEO_H265);
    assert_string_equal(info.profile, "Main");
}

/* RGB frames out, and RGB frames in (the encoder converts them). */
static void test_rgb_both_ways(void **state)
{
    dvpp_vdec_opts o;
    dvpp_err err;
    record r;

    (void)state;
    dvpp_vdec_opts_init(&o);
    o.format = DVPP_PIXEL_RGB;
    o.max_frames = 3;
    assert_int_equal(decode(bytes_of(S264_MP4), &o, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, 3);
    o.format = DVPP_PIXEL_BGR;
    o.align_w = 64;
    assert_int_equal(decode(bytes_of(S264_MP4), &o, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, 3);
}

/* ------------------------------------------------------------------------ */
/* Key frames                                                                */

static void keys_are(stream_id k, const unsigned *want, unsigned n)
{
    dvpp_err err;
    record r;
    unsigned found = 0;

    assert_int_equal(decode(bytes_of(k), NULL, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, T);
    for (unsigned i = 0; i < T; i++) {
        bool wanted = false;
        for (unsigned j = 0; j < n; j++)
            wanted |= want[j] == i;
        if (r.key[i] != wanted)
            fail_msg("frame %u: key %d, want %d", i, r.key[i], wanted);
        found += r.key[i];
    }
    assert_int_equal(found, n);
    assert_int_equal(g_fx->s[k].keyframes, n);
}

static void test_gop10_h264(void **state)
{
    static const unsigned want[] = {0, 10, 20};

    (void)state;
    keys_are(S264_GOP10, want, 3);
}

static void test_gop10_h265(void **state)
{
    static const unsigned want[] = {0, 10, 20};

    (void)state;
    keys_are(S265_GOP10, want, 3);
}

static void test_idr7_h264(void **state)
{
    static const unsigned want[] = {0, 7};

    (void)state;
    keys_are(S264_IDR7, want, 2);
}

static void test_idr7_h265(void **state)
{
    static const unsigned want[] = {0, 7};

    (void)state;
    keys_are(S265_IDR7, want, 2);
}

/* The VCL NAL unit types of an Annex-B H.265 stream's pictures, in
 * order (one per picture: the encoder writes one slice each). */
static unsigned h265_picture_types(const dvpp_buf *b, int *types, unsigned max)
{
    unsigned n = 0;

    for (size_t i = 0; i + 3 < b->len && n < max; i++)
        if (b->data[i] == 0 && b->data[i + 1] == 0 && b->data[i + 2] == 1) {
            int t = (b->data[i + 3] >> 1) & 0x3f;
            if (t < 32) /* a slice */
                types[n++] = t;
        }
    return n;
}

/* In low-delay mode (DVPP VENC's output) H.265 key frames, at the GOP and
 * forced, are IDR pictures (NAL types 19/20), as DVPP VENC's; x265's
 * default open GOP made them CRA (21), forced ones included. */
static void test_low_delay_h265_key_frames_are_idr(void **state)
{
    int types[T];

    (void)state;
    for (int idr = -1; idr <= 7; idr += 8) {
        dvpp_venc_opts o;
        stream s;
        dvpp_err err;
        opts(&o, DVPP_VIDEO_H265, DVPP_VENC_ANNEXB, 10);
        o.low_delay = true;
        memset(&s, 0, sizeof(s));
        dvpp_buf_init(&s.bytes);
        assert_int_equal(encode(&o, idr, &s, &err), DVPP_OK);
        assert_int_equal(h265_picture_types(&s.bytes, types, T), T);
        dvpp_buf_fini(&s.bytes);
        /* the GOP counts from the last key frame, a forced one too */
        for (unsigned i = 0, last = 0; i < T; i++) {
            bool key = i == 0 || (int)i == idr || i - last == 10;
            bool is_idr = types[i] == 19 || types[i] == 20;
            last = key ? i : last;
            if (key != is_idr || types[i] == 21)
                fail_msg("idr %d, frame %u: NAL type %d", idr, i, types[i]);
        }
    }
}

/* Low delay: every frame's packet comes out during its own
 * dvpp_venc_frame (none held back, nothing left for the flush), as DVPP
 * VENC hands out each frame's stream; the stream decodes to every frame,
 * with the forced IDR on frame 7. Without it the encoder holds frames. */
static void low_delay(dvpp_video_codec codec)
{
    dvpp_venc_opts o;
    dvpp_venc *e = NULL;
    dvpp_buf out;
    dvpp_err err;
    record r;
    size_t held = 0;
    uint64_t keys = 0;

    for (int ld = 0; ld < 2; ld++) {
        opts(&o, codec, DVPP_VENC_ANNEXB, 30);
        o.width = W, o.height = H;
        o.low_delay = ld;
        dvpp_buf_init(&out);
        assert_int_equal(dvpp_venc_open(&o, &out, &e, &err), DVPP_OK);
        for (unsigned i = 0; i < T; i++) {
            size_t before = out.len;
            assert_int_equal(dvpp_venc_frame(e, &g_fx->src[i], i == 7, &err), DVPP_OK);
            if (ld && out.len == before)
                fail_msg("frame %u: no packet during its own call", i);
            held += !ld && out.len == before;
        }
        size_t before = out.len;
        assert_int_equal(dvpp_venc_finish(e, &err), DVPP_OK);
        if (ld) {
            assert_int_equal(out.len, before);
            assert_int_equal(dvpp_venc_packets(e, &keys), T);
            assert_int_equal(keys, 2);
        }
        dvpp_venc_close(e);
        assert_int_equal(decode(&out, NULL, NULL, &r, NULL, &err), DVPP_OK);
        dvpp_buf_fini(&out);
        assert_int_equal(r.n, T);
        assert_true(r.key[0] && r.key[7]);
        for (unsigned i = 0; i < T; i++)
            assert_int_equal(r.number[i], i);
    }
    assert_true(held > 0); /* the default does hold frames back */
}

static void test_low_delay_h264(void **state)
{
    (void)state;
    low_delay(DVPP_VIDEO_H264);
}

static void test_low_delay_h265(void **state)
{
    (void)state;
    low_delay(DVPP_VIDEO_H265);
}

/* ------------------------------------------------------------------------ */
/* Sampling                                                                  */

static void test_every_3(void **state)
{
    dvpp_vdec_opts o;
    dvpp_err err;
    record r;

    (void)state;
    dvpp_vdec_opts_init(&o);
    o.every = 3;
    assert_int_equal(decode(bytes_of(S265_MP4), &o, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, 10);
    for (unsigned i = 0; i < r.n; i++) {
        assert_int_equal(r.index[i], 3 * i);
        assert_int_equal(r.number[i], 3 * i);
    }
}

/* Frames handed over as the decoder's own I420 buffers
 * (dvpp_vdec_opts.direct_i420) hold the samples their NV12 conversion
 * holds: every Y byte and every U and V sample of every frame, for each
 * codec and container, on frame threads with hold_one, where frame t's
 * image must still hold its samples while frame t + 1 is delivered. */
typedef struct planes_rec {
    unsigned n;
    unsigned direct;               /* frames that came as I420 */
    uint8_t *y, *u, *v;            /* [T][W*H], [T][W*H/4] x 2 */
    const dvpp_image *prev;        /* hold_one: the frame before */
    unsigned prev_t;
    bool compare;                  /* false: record, true: compare */
} planes_rec;

/* Sample (x, y) of plane @k (0 Y, 1 U, 2 V) of @img (NV12 or I420). */
static uint8_t sample_at(const dvpp_image *img, int k, unsigned x, unsigned y)
{
    size_t ws = img->width_stride, hs = img->height_stride;
    const uint8_t *c = img->data + ws * hs;

    if (k == 0)
        return img->data[y * ws + x];
    if (img->format == DVPP_PIXEL_NV12)
        return c[y * ws + 2 * x + (k == 2)];
    return c[(k == 2 ? (ws / 2) * (hs / 2) : 0) + y * (ws / 2) + x];
}

/* Compare (or record) frame @t's samples. */
static bool planes_match(planes_rec *r, const dvpp_image *img, unsigned t, bool keep)
{
    uint8_t *dst[3] = {r->y + (size_t)t * W * H, r->u + (size_t)t * W * H / 4,
                       r->v + (size_t)t * W * H / 4};

    for (int k = 0; k < 3; k++) {
        unsigned w = k ? W / 2 : W, h = k ? H / 2 : H;
        for (unsigned y = 0; y < h; y++)
            for (unsigned x = 0; x < w; x++) {
                uint8_t s = sample_at(img, k, x, y);
                if (keep)
                    dst[k][y * w + x] = s;
                else if (dst[k][y * w + x] != s)
                    return false;
            }
    }
    return true;
}

static dvpp_status planes_sink(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    planes_rec *r = ctx;

    (void)err;
    assert_true(r->n < T);
    assert_int_equal(f->image->width, W);
    assert_int_equal(f->image->height, H);
    if (f->image->format == DVPP_PIXEL_I420)
        r->direct++;
    else
        assert_int_equal(f->image->format, DVPP_PIXEL_NV12);
    if (r->compare && !planes_match(r, f->image, r->n, false))
        fail_msg("frame %u: a sample differs from the NV12 conversion's", r->n);
    if (!r->compare)
        planes_match(r, f->image, r->n, true);
    if (r->prev && !planes_match(r, r->prev, r->prev_t, false))
        fail_msg("frame %u changed while frame %u was delivered", r->prev_t, r->n);
    r->prev = r->compare ? f->image : NULL;
    r->prev_t = r->n;
    r->n++;
    return DVPP_OK;
}

static void no_hold(void *ctx)
{
    (void)ctx;
}

static void test_direct_i420_same_samples(void **state)
{
    static const stream_id ids[] = {S264_ANNEXB, S264_MP4, S265_ANNEXB, S265_MP4};
    planes_rec r;

    (void)state;
    memset(&r, 0, sizeof(r));
    r.y = malloc((size_t)T * W * H);
    r.u = malloc((size_t)T * W * H / 4);
    r.v = malloc((size_t)T * W * H / 4);
    assert_true(r.y && r.u && r.v);
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        dvpp_vdec_opts o;
        dvpp_err err;
        dvpp_vdec_opts_init(&o);
        r.n = r.direct = 0, r.prev = NULL, r.compare = false;
        assert_int_equal(dvpp_video_decode(bytes_of(ids[i])->data, bytes_of(ids[i])->len, &o,
                                           NULL, planes_sink, &r, NULL, &err), DVPP_OK);
        assert_int_equal(r.n, T);
        assert_int_equal(r.direct, 0);
        o.direct_i420 = true;
        o.hold_one = true;
        o.hold_end = no_hold;
        o.threads = 3;
        r.n = r.direct = 0, r.prev = NULL, r.compare = true;
        assert_int_equal(dvpp_video_decode(bytes_of(ids[i])->data, bytes_of(ids[i])->len, &o,
                                           NULL, planes_sink, &r, NULL, &err), DVPP_OK);
        assert_int_equal(r.n, T);
        assert_int_equal(r.direct, T); /* limited range 4:2:0: every frame as it is */
    }
    free(r.y);
    free(r.u);
    free(r.v);
}

static void test_keyframes_only(void **state)
{
    dvpp_vdec_opts o;
    dvpp_err err;
    record r;

    (void)state;
    dvpp_vdec_opts_init(&o);
    o.keyframes_only = true;
    assert_int_equal(decode(bytes_of(S265_GOP10), &o, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, 3);
    for (unsigned i = 0; i < r.n; i++) {
        assert_int_equal(r.number[i], 10 * i);
        assert_true(r.key[i]);
    }
}

/* MP4 carries timestamps: frame n is at n / 30 s. The bounds sit between
 * frames, so the rounding of t cannot matter. */
static void test_time_range(void **state)
{
    dvpp_vdec_opts o;
    dvpp_err err;
    record r;

    (void)state;
    dvpp_vdec_opts_init(&o);
    o.start_s = 0.21;
    o.end_s = 0.49;
    assert_int_equal(decode(bytes_of(S264_MP4), &o, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, 8);
    for (unsigned i = 0; i < r.n; i++) {
        assert_int_equal(r.number[i], 7 + i);
        assert_float_equal(r.time_s[i], (7 + i) / 30.0, 1e-3);
    }
    o.start_s = 0.88; /* to the end */
    o.end_s = 0;
    assert_int_equal(decode(bytes_of(S264_MP4), &o, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.number[0], 27);
}

/* --fps 10 of a 30 fps stream: every third frame (t - last >= 0.1 s, the
 * rounding of pts x time_base absorbed). */
static void test_fps(void **state)
{
    dvpp_vdec_opts o;
    dvpp_err err;
    record r;

    (void)state;
    dvpp_vdec_opts_init(&o);
    o.fps = 10.0;
    assert_int_equal(decode(bytes_of(S264_MP4), &o, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, 10);
    for (unsigned i = 0; i < r.n; i++)
        assert_int_equal(r.number[i], 3 * i);
}

static void test_max_frames(void **state)
{
    dvpp_vdec_opts o;
    dvpp_err err;
    record r;

    (void)state;
    dvpp_vdec_opts_init(&o);
    o.max_frames = 5;
    assert_int_equal(decode(bytes_of(S264_ANNEXB), &o, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, 5);
    assert_int_equal(r.number[4], 4);
    o.every = 3; /* the cap counts kept frames */
    o.max_frames = 4;
    assert_int_equal(decode(bytes_of(S265_ANNEXB), &o, NULL, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.number[3], 9);
}

/* A sink's error stops the decode and comes back as it was. */
static void test_sink_error(void **state)
{
    dvpp_vdec_opts o;
    dvpp_err err;
    record r;

    (void)state;
    dvpp_vdec_opts_init(&o);
    memset(&r, 0, sizeof(r));
    r.fail_at = 4;
    r.min_psnr = 99;
    dvpp_err_clear(&err);
    assert_int_equal(dvpp_video_decode(bytes_of(S264_ANNEXB)->data, bytes_of(S264_ANNEXB)->len,
                                       &o, NULL, sink, &r, NULL, &err), DVPP_EIO);
    assert_int_equal(r.n, 3);
    assert_string_equal(err.field, "sink");
}

/* ------------------------------------------------------------------------ */
/* Damaged streams                                                           */

static dvpp_status decode_bytes(const uint8_t *p, size_t n, dvpp_err *err)
{
    dvpp_buf b = {.data = (uint8_t *)p, .len = n};
    record r;

    return decode(&b, NULL, NULL, &r, NULL, err);
}

static void truncated(stream_id k)
{
    const dvpp_buf *b = bytes_of(k);
    dvpp_err err;

    assert_int_equal(decode_bytes(b->data, b->len / 2, &err), DVPP_ECORRUPT);
    assert_true(err.msg[0] != '\0');
    /* Anywhere else (the MP4 index included): ECORRUPT or, cut at a frame
     * boundary, fewer frames; never a crash nor "no video stream". */
    for (size_t cut = 1; cut < b->len; cut += b->len / 97 + 1) {
        dvpp_status st = decode_bytes(b->data, cut, &err);
        if (st != DVPP_OK && st != DVPP_ECORRUPT)
            fail_msg("stream %d cut at %zu of %zu: %s (%s)", (int)k, cut, b->len,
                     dvpp_status_name(st), err.msg);
    }
}

static void test_truncated(void **state)
{
    (void)state;
    for (int k = S264_ANNEXB; k <= S265_MP4; k++)
        truncated((stream_id)k);
}

/* Every 97th byte of the middle of the stream (the frames, not the
 * headers in front nor the MP4 index behind) XORed with 0x55. */
static void flipped(stream_id k)
{
    const dvpp_buf *b = bytes_of(k);
    uint8_t *p = malloc(b->len);
    dvpp_err err;
    dvpp_status st;

    assert_non_null(p);
    memcpy(p, b->data, b->len);
    for (size_t i = b->len / 4; i < b->len * 3 / 4; i += 97)
        p[i] ^= 0x55;
    st = decode_bytes(p, b->len, &err);
    free(p);
    if (st != DVPP_ECORRUPT)
        fail_msg("stream %d: %s (%s)", (int)k, dvpp_status_name(st), err.msg);
}

static void test_bit_flipped(void **state)
{
    (void)state;
    for (int k = S264_ANNEXB; k <= S265_MP4; k++)
        flipped((stream_id)k);
}

/* Single bits flipped one at a time: whatever comes out, no crash. */
static void test_single_flips(void **state)
{
    const dvpp_buf *b = bytes_of(S264_ANNEXB);
    uint8_t *p = malloc(b->len);
    dvpp_err err;

    (void)state;
    assert_non_null(p);
    for (size_t i = 0; i < b->len; i += b->len / 40 + 1) {
        memcpy(p, b->data, b->len);
        p[i] ^= (uint8_t)(1u << (i % 8));
        (void)decode_bytes(p, b->len, &err);
    }
    free(p);
}

/* An MP4 whose video is another codec (the sample entry renamed from avc1
 * to mp4v: MPEG-4 Part 2): EUNSUPPORTED naming it, from the probe and the
 * decode alike. */
static void test_other_codec(void **state)
{
    const dvpp_buf *b = bytes_of(S264_MP4);
    uint8_t *p = malloc(b->len);
    dvpp_video_sizes sizes;
    dvpp_video_info info;
    dvpp_err err;
    size_t renamed = 0;

    (void)state;
    assert_non_null(p);
    memcpy(p, b->data, b->len);
    for (size_t i = 0; i + 4 <= b->len; i++)
        if (memcmp(p + i, "avc1", 4) == 0) {
            memcpy(p + i, "mp4v", 4);
            renamed++;
        }
    assert_true(renamed >= 1); /* the sample entry (and the ftyp brand) */
    assert_int_equal(dvpp_video_probe(p, b->len, NULL, &info, &err), DVPP_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "mpeg4"));
    assert_int_equal(decode_bytes(p, b->len, &err), DVPP_EUNSUPPORTED);
    assert_int_equal(dvpp_video_scan_sizes(p, b->len, NULL, &sizes, &err), DVPP_EUNSUPPORTED);
    free(p);
}

static void test_garbage(void **state)
{
    static const uint8_t junk[] = "this is not a video at all, just text";
    dvpp_err err;

    (void)state;
    assert_int_equal(decode_bytes(junk, sizeof(junk), &err), DVPP_ECORRUPT);
    assert_int_equal(decode_bytes(junk, 0, &err), DVPP_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* A hand-made H.264 stream claiming a huge picture                          */

typedef struct bitw {
    uint8_t buf[512];
    size_t bits;
} bitw;

static void put_bits(bitw *b, unsigned n, uint32_t v)
{
    for (unsigned i = 0; i < n; i++, b->bits++) {
        if ((v >> (n - 1 - i)) & 1)
            b->buf[b->bits / 8] |= (uint8_t)(0x80u >> (b->bits % 8));
    }
}

static void put_ue(bitw *b, uint32_t v)
{
    unsigned n = 0;

    for (uint32_t x = v + 1; x > 1; x >>= 1)
        n++;
    put_bits(b, n, 0);
    put_bits(b, n + 1, v + 1);
}

/* Append a NAL (start code, header byte, the RBSP with trailing bits and
 * emulation prevention) to @out. */
static void put_nal(dvpp_buf *out, uint8_t header, bitw *b)
{
    static const uint8_t start[] = {0, 0, 0, 1};
    size_t n;
    unsigned zeros = 0;

    put_bits(b, 1, 1);
    n = (b->bits + 7) / 8;
    assert_int_equal(dvpp_buf_append(out, start, 4), DVPP_OK);
    assert_int_equal(dvpp_buf_append(out, &header, 1), DVPP_OK);
    for (size_t i = 0; i < n; i++) {
        static const uint8_t three = 3;
        if (zeros >= 2 && b->buf[i] <= 3) {
            assert_int_equal(dvpp_buf_append(out, &three, 1), DVPP_OK);
            zeros = 0;
        }
        assert_int_equal(dvpp_buf_append(out, &b->buf[i], 1), DVPP_OK);
        zeros = b->buf[i] == 0 ? zeros + 1 : 0;
    }
}

/* SPS (Baseline, level 5.1) for a @mbw x @mbh macroblock picture, a PPS
 * and three IDR slices of junk. */
static void huge_stream(dvpp_buf *out, uint32_t mbw, uint32_t mbh)
{
    bitw b;

    memset(&b, 0, sizeof(b));
    put_bits(&b, 8, 66);    /* profile_idc: Baseline */
    put_bits(&b, 8, 0xC0);  /* constraint_set0/1 */
    put_bits(&b, 8, 51);    /* level_idc */
    put_ue(&b, 0);          /* seq_parameter_set_id */
    put_ue(&b, 0);          /* log2_max_frame_num_minus4 */
    put_ue(&b, 2);          /* pic_order_cnt_type */
    put_ue(&b, 1);          /* max_num_ref_frames */
    put_bits(&b, 1, 0);     /* gaps_in_frame_num_value_allowed_flag */
    put_ue(&b, mbw - 1);    /* pic_width_in_mbs_minus1 */
    put_ue(&b, mbh - 1);    /* pic_height_in_map_units_minus1 */
    put_bits(&b, 1, 1);     /* frame_mbs_only_flag */
    put_bits(&b, 1, 1);     /* direct_8x8_inference_flag */
    put_bits(&b, 1, 0);     /* frame_cropping_flag */
    put_bits(&b, 1, 0);     /* vui_parameters_present_flag */
    put_nal(out, 0x67, &b);
    memset(&b, 0, sizeof(b));
    put_ue(&b, 0);          /* pic_parameter_set_id */
    put_ue(&b, 0);          /* seq_parameter_set_id */
    put_bits(&b, 2, 0);     /* entropy_coding_mode, bottom_field_pic_order */
    put_ue(&b, 0);          /* num_slice_groups_minus1 */
    put_ue(&b, 0);          /* num_ref_idx_l0_default_active_minus1 */
    put_ue(&b, 0);          /* num_ref_idx_l1_default_active_minus1 */
    put_bits(&b, 3, 0);     /* weighted_pred, weighted_bipred_idc */
    put_ue(&b, 0);          /* pic_init_qp_minus26: se(0) */
    put_ue(&b, 0);          /* pic_init_qs_minus26: se(0) */
    put_ue(&b, 0);          /* chroma_qp_index_offset: se(0) */
    put_bits(&b, 3, 0);     /* deblocking ctl, constrained intra, redundant pic */
    put_nal(out, 0x68, &b);
    for (int s = 0; s < 3; s++) {
        memset(&b, 0, sizeof(b));
        put_ue(&b, 0);      /* first_mb_in_slice */
        put_ue(&b, 7);      /* slice_type: I */
        put_ue(&b, 0);      /* pic_parameter_set_id */
        put_bits(&b, 4, 0); /* frame_num */
        put_ue(&b, 0);      /* idr_pic_id */
        put_bits(&b, 2, 0); /* dec_ref_pic_marking */
        put_ue(&b, 0);      /* slice_qp_delta */
        for (int i = 0; i < 200; i++)
            put_bits(&b, 8, 0xA5);
        put_nal(out, 0x65, &b);
    }
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Both the probe and the decode refuse a picture over the limits after
 * reading the headers: fast, and before any frame buffer exists. */
static void refuses_huge(uint32_t mbw, uint32_t mbh)
{
    dvpp_video_info info;
    dvpp_buf b;
    dvpp_err err, derr;
    double t0 = now_s();
    dvpp_status st, dst;

    dvpp_buf_init(&b);
    huge_stream(&b, mbw, mbh);
    st = dvpp_video_probe(b.data, b.len, NULL, &info, &err);
    dst = decode_bytes(b.data, b.len, &derr);
    dvpp_buf_fini(&b); /* before any assertion: a failure leaks nothing */
    if (st != DVPP_ELIMIT)
        fail_msg("%ux%u probe: %s (%s)", mbw * 16, mbh * 16, dvpp_status_name(st), err.msg);
    if (dst != DVPP_ELIMIT)
        fail_msg("%ux%u decode: %s (%s)", mbw * 16, mbh * 16, dvpp_status_name(dst),
                 derr.msg);
    assert_true(now_s() - t0 < 2.0);
}

static void test_huge_sps(void **state)
{
    (void)state;
    refuses_huge(1024, 512); /* 16384 x 8192: over max_pixels */
    refuses_huge(512, 512);  /* 8192 x 8192 */
}

/* 16384 x 16384 is past what FFmpeg's own SPS parser accepts
 * (av_image_check_size), so libavcodec never reports a size; dvppd must
 * still call it a limit, not a damaged stream. */
static void test_sps_16384(void **state)
{
    (void)state;
    refuses_huge(1024, 1024);
}

/* ------------------------------------------------------------------------ */
/* The same claim in MPEG-TS: no size in the container, the SPS in-band    */

/* CRC-32/MPEG-2 of a PSI section. */
static uint32_t psi_crc(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;

    for (size_t i = 0; i < n; i++) {
        c ^= (uint32_t)p[i] << 24;
        for (int k = 0; k < 8; k++)
            c = c & 0x80000000u ? c << 1 ^ 0x04c11db7u : c << 1;
    }
    return c;
}

/* One 188-byte packet of @pid: @af_len bytes of adaptation field stuffing
 * (0: none), then @n payload bytes (the rest is stuffed with 0xff for
 * sections: pass @fill). */
static void ts_packet(dvpp_buf *out, unsigned pid, bool start, unsigned *cc, size_t af_len,
                      const uint8_t *payload, size_t n)
{
    uint8_t p[188];

    memset(p, 0xff, sizeof(p));
    p[0] = 0x47;
    p[1] = (uint8_t)((start ? 0x40 : 0) | (pid >> 8 & 0x1f));
    p[2] = (uint8_t)pid;
    p[3] = (uint8_t)((af_len ? 0x30 : 0x10) | (*cc & 15));
    *cc += 1;
    if (af_len) {
        p[4] = (uint8_t)(af_len - 1); /* the length byte counts itself here */
        if (af_len > 1)
            p[5] = 0;                 /* no flags, the rest stuffing */
    }
    assert_true(4 + af_len + n <= sizeof(p));
    memcpy(p + 4 + af_len, payload, n);
    assert_int_equal(dvpp_buf_append(out, p, sizeof(p)), DVPP_OK);
}

/* A PSI section (table @id, @body after the 5-byte header) in one packet. */
static void ts_section(dvpp_buf *out, unsigned pid, uint8_t id, const uint8_t *body, size_t n)
{
    uint8_t s[64];
    size_t len = 5 + n + 4; /* header after section_length, body, CRC */
    uint32_t crc;
    unsigned cc = 0;

    s[0] = 0;                  /* pointer_field */
    s[1] = id;
    s[2] = (uint8_t)(0xb0 | len >> 8), s[3] = (uint8_t)len;
    s[4] = 0, s[5] = 1;        /* table id extension */
    s[6] = 0xc1;               /* version 0, current */
    s[7] = s[8] = 0;           /* section 0 of 0 */
    memcpy(s + 9, body, n);
    crc = psi_crc(s + 1, 8 + n);
    s[9 + n] = (uint8_t)(crc >> 24), s[10 + n] = (uint8_t)(crc >> 16);
    s[11 + n] = (uint8_t)(crc >> 8), s[12 + n] = (uint8_t)crc;
    ts_packet(out, pid, true, &cc, 0, s, 13 + n);
}

/* @es (Annex-B) as the only stream (PID 0x100) of an MPEG-TS: PAT, PMT,
 * one PES whose first packet carries @first ES bytes (the rest of that
 * packet is adaptation stuffing, so a small @first cuts the SPS across
 * packets), then null packets so libavformat's probe is sure. */
static void ts_wrap(const dvpp_buf *es, bool hevc, size_t first, dvpp_buf *out)
{
    static const uint8_t pat[] = {0x00, 0x01, 0xf0, 0x00}; /* program 1 -> PMT 0x1000 */
    uint8_t pmt[] = {0xe1, 0x00, 0xf0, 0x00,               /* PCR PID 0x100, no info */
                     hevc ? 0x24 : 0x1b, 0xe1, 0x00, 0xf0, 0x00};
    /* PES header: video stream 0, unbounded length, PTS 0 */
    static const uint8_t pes[] = {0, 0, 1, 0xe0, 0, 0, 0x80, 0x80, 5,
                                  0x21, 0x00, 0x01, 0x00, 0x01};
    uint8_t pl[184];
    unsigned cc = 0, ncc = 0;
    size_t pos;

    dvpp_buf_init(out);
    ts_section(out, 0, 0x00, pat, sizeof(pat));
    ts_section(out, 0x1000, 0x02, pmt, sizeof(pmt));
    memcpy(pl, pes, sizeof(pes));
    pos = first < es->len ? first : es->len;
    assert_true(sizeof(pes) + pos <= sizeof(pl));
    memcpy(pl + sizeof(pes), es->data, pos);
    ts_packet(out, 0x100, true, &cc, 184 - sizeof(pes) - pos, pl, sizeof(pes) + pos);
    while (pos < es->len) {
        size_t n = es->len - pos < 184 ? es->len - pos : 184;
        ts_packet(out, 0x100, false, &cc, 184 - n, es->data + pos, n);
        pos += n;
    }
    for (int i = 0; i < 40; i++)
        ts_packet(out, 0x1fff, false, &ncc, 0, pl, 184);
}

/* Peak resident memory growth (KiB) of probing @b, in a child process:
 * what the probing decoders allocated for the claimed picture. */
static long probe_rss_growth_kib(const dvpp_buf *b, dvpp_status *st)
{
    int fds[2];
    pid_t pid;
    long r[2] = {-1, 0};

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rusage ru0, ru1;
        dvpp_video_info info;
        getrusage(RUSAGE_SELF, &ru0);
        r[1] = dvpp_video_probe(b->data, b->len, NULL, &info, NULL);
        getrusage(RUSAGE_SELF, &ru1);
        r[0] = ru1.ru_maxrss - ru0.ru_maxrss;
        if (write(fds[1], r, sizeof(r)) != (ssize_t)sizeof(r))
            _exit(2);
        _exit(0);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], r, sizeof(r)), (ssize_t)sizeof(r));
    close(fds[0]);
    waitpid(pid, NULL, 0);
    *st = (dvpp_status)r[1];
    return r[0];
}

/* A TS whose SPS claims 16384 x 8192 (a size FFmpeg accepts: its probing
 * decoder would allocate tens of MB of tables for it) or 16384 x 16384 is
 * refused on the claim, before the probing decoders run, whether or not
 * the SPS is cut across TS packets; a small TS stream still decodes. */
static void test_ts_huge_sps(void **state)
{
    static const struct {
        uint32_t mbw, mbh;
        size_t first;
    } cases[] = {{1024, 512, 170}, {1024, 512, 6}, {1024, 1024, 3}, {1024, 1024, 170}};

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dvpp_buf es, ts;
        dvpp_err err;
        dvpp_status st, pst;
        long kib;

        dvpp_buf_init(&es);
        huge_stream(&es, cases[i].mbw, cases[i].mbh);
        ts_wrap(&es, false, cases[i].first, &ts);
        st = decode_bytes(ts.data, ts.len, &err);
        kib = probe_rss_growth_kib(&ts, &pst);
        dvpp_buf_fini(&es);
        dvpp_buf_fini(&ts);
        if (st != DVPP_ELIMIT || pst != DVPP_ELIMIT)
            fail_msg("case %zu: decode %s (%s), probe %s", i, dvpp_status_name(st), err.msg,
                     dvpp_status_name(pst));
        assert_string_equal(err.field, "max_pixels");
        /* the claim check costs a packet walk, not a decoder's tables */
        if (kib > 8 * 1024)
            fail_msg("case %zu: probing grew the RSS by %ld KiB", i, kib);
    }
}

/* The TS walk reads the SPS of real streams too: 320x240 H.264 and H.265
 * TS decode, and a max_side just under their width refuses them on the
 * claim. */
static void test_ts_small_stream_decodes(void **state)
{
    static const struct {
        stream_id k;
        bool hevc;
    } cases[] = {{S264_ANNEXB, false}, {S265_ANNEXB, true}};
    dvpp_limits lim = dvpp_limits_default();

    (void)state;
    lim.max_side = W - 1;
    for (size_t i = 0; i < 2; i++) {
        dvpp_buf ts;
        dvpp_err err;
        dvpp_status st, lst;
        record r;
        ts_wrap(bytes_of(cases[i].k), cases[i].hevc, 20, &ts);
        st = decode(&ts, NULL, NULL, &r, NULL, &err);
        lst = decode(&ts, NULL, &lim, &r, NULL, &err);
        dvpp_buf_fini(&ts);
        assert_int_equal(st, DVPP_OK);
        assert_int_equal(lst, DVPP_ELIMIT);
        assert_string_equal(err.field, "max_side");
    }
}

/* ------------------------------------------------------------------------ */
/* A stream whose resolution changes: the first frame's size, every size    */

/* @frames frames of @w x @h (a gradient moving with n), encoded with
 * @codec as Annex-B, appended to @out: concatenated parts are a stream
 * whose resolution changes where the next part's SPS comes. */
static void append_part(dvpp_buf *out, dvpp_video_codec codec, uint32_t w, uint32_t h,
                        unsigned frames)
{
    dvpp_venc_opts o;
    dvpp_venc *e = NULL;
    dvpp_image img;
    dvpp_err err;

    opts(&o, codec, DVPP_VENC_ANNEXB, 30);
    o.width = w, o.height = h;
    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_NV12, w, h, 1, 1, NULL), DVPP_OK);
    img.size = (size_t)w * h * 3 / 2;
    img.data = malloc(img.size);
    assert_non_null(img.data);
    assert_int_equal(dvpp_venc_open(&o, out, &e, &err), DVPP_OK);
    for (unsigned n = 0; n < frames; n++) {
        for (uint32_t r = 0; r < h; r++)
            for (uint32_t c = 0; c < w; c++)
                img.data[(size_t)r * w + c] = (uint8_t)(16 + (c + r + 4 * n) % 200);
        memset(img.data + (size_t)w * h, 128, img.size - (size_t)w * h);
        assert_int_equal(dvpp_venc_frame(e, &img, false, &err), DVPP_OK);
    }
    assert_int_equal(dvpp_venc_finish(e, &err), DVPP_OK);
    dvpp_venc_close(e);
    free(img.data);
}

typedef struct part {
    uint32_t w, h;
    unsigned frames;
} part;

#define MAX_PARTS 3

static void make_parts(dvpp_buf *out, dvpp_video_codec codec, const part *p, unsigned n)
{
    dvpp_buf_init(out);
    for (unsigned k = 0; k < n; k++)
        append_part(out, codec, p[k].w, p[k].h, p[k].frames);
}

/* The size of every frame a decode delivers. */
typedef struct sizes_seen {
    unsigned n;
    uint32_t w[MAX_KEPT], h[MAX_KEPT];
} sizes_seen;

static dvpp_status size_sink(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    sizes_seen *s = ctx;

    if (s->n == MAX_KEPT)
        return dvpp_err_set(err, DVPP_ENOSPC, "sink", "too many frames");
    s->w[s->n] = f->image->width;
    s->h[s->n++] = f->image->height;
    return DVPP_OK;
}

/* @b (@what, for messages) is the stream of @p: probe, decode and scan
 * agree with the parts. The probe's (and the decode's) size is the first
 * frame's; every frame comes at its part's size; the scan lists the
 * parts' distinct sizes in order and their maxima. */
static void check_parts(const char *what, const dvpp_buf *b, const part *p, unsigned n)
{
    dvpp_video_info info, dinfo;
    dvpp_video_sizes sz;
    dvpp_vdec_opts o;
    sizes_seen seen;
    uint32_t mw = 0, mh = 0, distinct = 0;
    unsigned t = 0;
    dvpp_err err;

    if (dvpp_video_probe(b->data, b->len, NULL, &info, &err) != DVPP_OK)
        fail_msg("%s: probe %s", what, err.msg);
    if (info.width != p[0].w || info.height != p[0].h)
        fail_msg("%s: the probe says %ux%u, the first frame is %ux%u", what, info.width,
                 info.height, p[0].w, p[0].h);
    dvpp_vdec_opts_init(&o);
    memset(&seen, 0, sizeof(seen));
    if (dvpp_video_decode(b->data, b->len, &o, NULL, size_sink, &seen, &dinfo, &err) !=
        DVPP_OK)
        fail_msg("%s: decode %s", what, err.msg);
    assert_int_equal(dinfo.width, p[0].w);
    assert_int_equal(dinfo.height, p[0].h);
    for (unsigned k = 0; k < n; k++)
        for (unsigned i = 0; i < p[k].frames; i++, t++)
            if (t >= seen.n || seen.w[t] != p[k].w || seen.h[t] != p[k].h)
                fail_msg("%s: frame %u is %ux%u, not %ux%u (part %u)", what, t,
                         t < seen.n ? seen.w[t] : 0, t < seen.n ? seen.h[t] : 0, p[k].w,
                         p[k].h, k);
    assert_int_equal(seen.n, t);
    assert_int_equal(dvpp_video_scan_sizes(b->data, b->len, NULL, &sz, &err), DVPP_OK);
    for (unsigned k = 0; k < n; k++) {
        bool known = false;
        for (unsigned j = 0; j < k; j++)
            known |= p[j].w == p[k].w && p[j].h == p[k].h;
        mw = p[k].w > mw ? p[k].w : mw;
        mh = p[k].h > mh ? p[k].h : mh;
        if (known)
            continue;
        if (distinct >= sz.count || sz.size[distinct].width != p[k].w ||
            sz.size[distinct].height != p[k].h)
            fail_msg("%s: size %u of the scan is not %ux%u", what, distinct, p[k].w, p[k].h);
        distinct++;
    }
    assert_int_equal(sz.count, distinct);
    assert_true(sz.complete);
    assert_int_equal(sz.max_width, mw);
    assert_int_equal(sz.max_height, mh);
}

/* 320x240 then 160x160, and 160x160, 320x240, 160x160 (4 and 3 frames,
 * H.264 and H.265, Annex-B and the same in MPEG-TS): libavformat's probing
 * reads several access units and its codec parameters end at whichever
 * SPS it parsed last, so the probe said 160x160 for the first and
 * 320x240 for the second (H.264). Now it says the first frame's size. */
static void first_frame_sizes(dvpp_video_codec codec)
{
    static const part drop[] = {{320, 240, 4}, {160, 160, 3}};
    static const part rise[] = {{160, 160, 3}, {320, 240, 4}, {160, 160, 3}};
    static const struct {
        const char *what;
        const part *p;
        unsigned n;
    } cases[] = {{"drop", drop, 2}, {"rise", rise, 3}};
    bool hevc = codec == DVPP_VIDEO_H265;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dvpp_buf es, ts;
        char what[64];
        make_parts(&es, codec, cases[i].p, cases[i].n);
        snprintf(what, sizeof(what), "%s %s Annex-B", dvpp_video_codec_name(codec),
                 cases[i].what);
        check_parts(what, &es, cases[i].p, cases[i].n);
        ts_wrap(&es, hevc, 20, &ts);
        snprintf(what, sizeof(what), "%s %s MPEG-TS", dvpp_video_codec_name(codec),
                 cases[i].what);
        check_parts(what, &ts, cases[i].p, cases[i].n);
        dvpp_buf_fini(&ts);
        dvpp_buf_fini(&es);
    }
}

static void test_first_frame_size_h264(void **state)
{
    (void)state;
    first_frame_sizes(DVPP_VIDEO_H264);
}

static void test_first_frame_size_h265(void **state)
{
    (void)state;
    first_frame_sizes(DVPP_VIDEO_H265);
}

/* 320x240 then 320x232 (H.264 codes 232 rows as 240 cropped by 8): the
 * probing decoders' last SPS (320x232) went to the decoder as the
 * container's size, and libavcodec's container cropping (a size within
 * the SPS's rounding up to 16) cut the first part's frames to 320x232
 * too, 8 rows lost. Each part comes at its own size now; H.265, which has
 * no container cropping, and a size that is cropped by its SPS alone
 * (250x130: coded 256x144 in H.264, 256x136 in H.265) with it. */
static void test_frames_keep_their_cropped_size(void **state)
{
    static const part cut[] = {{320, 240, 4}, {320, 232, 3}};
    static const part odd[] = {{250, 130, 2}, {320, 240, 2}};
    dvpp_buf b;

    (void)state;
    make_parts(&b, DVPP_VIDEO_H264, cut, 2);
    check_parts("h264 320x240 + 320x232", &b, cut, 2);
    dvpp_buf_fini(&b);
    make_parts(&b, DVPP_VIDEO_H265, cut, 2);
    check_parts("h265 320x240 + 320x232", &b, cut, 2);
    dvpp_buf_fini(&b);
    make_parts(&b, DVPP_VIDEO_H264, odd, 2);
    check_parts("h264 250x130 + 320x240", &b, odd, 2);
    dvpp_buf_fini(&b);
    make_parts(&b, DVPP_VIDEO_H265, odd, 2);
    check_parts("h265 250x130 + 320x240", &b, odd, 2);
    dvpp_buf_fini(&b);
}

/* An H.264 SPS (High 4:2:0, or High 4:4:4 Predictive) for @mbw x @mbh
 * macroblocks with frame_cropping @crop (left, right, top, bottom, in
 * SPS units), a PPS and an IDR slice of junk: a stream libavformat reads
 * (the scan never decodes it). */
static void cropped_sps_stream(dvpp_buf *out, bool yuv444, uint32_t mbw, uint32_t mbh,
                               const uint32_t crop[4])
{
    bitw b;

    memset(&b, 0, sizeof(b));
    put_bits(&b, 8, yuv444 ? 244 : 100); /* profile_idc */
    put_bits(&b, 8, 0);
    put_bits(&b, 8, 40);    /* level_idc */
    put_ue(&b, 0);          /* seq_parameter_set_id */
    put_ue(&b, yuv444 ? 3 : 1); /* chroma_format_idc */
    if (yuv444)
        put_bits(&b, 1, 0); /* separate_colour_plane_flag */
    put_ue(&b, 0);          /* bit_depth_luma_minus8 */
    put_ue(&b, 0);          /* bit_depth_chroma_minus8 */
    put_bits(&b, 1, 0);     /* qpprime_y_zero_transform_bypass_flag */
    put_bits(&b, 1, 0);     /* seq_scaling_matrix_present_flag */
    put_ue(&b, 0);          /* log2_max_frame_num_minus4 */
    put_ue(&b, 2);          /* pic_order_cnt_type */
    put_ue(&b, 1);          /* max_num_ref_frames */
    put_bits(&b, 1, 0);     /* gaps_in_frame_num_value_allowed_flag */
    put_ue(&b, mbw - 1);
    put_ue(&b, mbh - 1);
    put_bits(&b, 1, 1);     /* frame_mbs_only_flag */
    put_bits(&b, 1, 1);     /* direct_8x8_inference_flag */
    put_bits(&b, 1, 1);     /* frame_cropping_flag */
    for (int i = 0; i < 4; i++)
        put_ue(&b, crop[i]);
    put_bits(&b, 1, 0);     /* vui_parameters_present_flag */
    put_nal(out, 0x67, &b);
    memset(&b, 0, sizeof(b));
    put_ue(&b, 0), put_ue(&b, 0);
    put_bits(&b, 2, 0);
    put_ue(&b, 0), put_ue(&b, 0), put_ue(&b, 0);
    put_bits(&b, 3, 0);
    put_ue(&b, 0), put_ue(&b, 0), put_ue(&b, 0);
    put_bits(&b, 4, 0);     /* deblocking ctl, constrained intra, redundant pic, 8x8 */
    put_nal(out, 0x68, &b);
    memset(&b, 0, sizeof(b));
    put_ue(&b, 0), put_ue(&b, 7), put_ue(&b, 0);
    put_bits(&b, 4, 0);
    put_ue(&b, 0);
    put_bits(&b, 2, 0);
    put_ue(&b, 0);
    for (int i = 0; i < 64; i++)
        put_bits(&b, 8, 0xA5);
    put_nal(out, 0x65, &b);
}

/* The frame an SPS makes, by hand (H.264 8.2.1, FFmpeg 5.1): cropping in
 * units of 2 for 4:2:0 (1 across for 4:4:4), and a left crop shortened to
 * what keeps the planes 32-byte aligned (av_frame_apply_cropping: 64
 * luma columns for 4:2:0, 32 for 4:4:4). A 256x128 picture cropped by
 * x264's crop-rect 8,0,0,0 decodes to 256 columns, not 248. A crop that
 * leaves nothing makes no frame (libavcodec refuses the SPS). Seventeen
 * sizes: sixteen are listed, all count in the maxima. */
static void test_scan_sizes_cropping(void **state)
{
    static const struct {
        bool yuv444;
        uint32_t crop[4];
        uint32_t w, h;
    } cases[] = {
        {false, {0, 3, 0, 4}, 250, 120},    /* right and bottom: exact */
        {false, {4, 0, 0, 0}, 256, 128},    /* left 8 -> 0 */
        {false, {48, 0, 1, 0}, 192, 126},   /* left 96 -> 64, top 2 */
        {false, {32, 2, 0, 0}, 188, 128},   /* left 64 stays */
        {true, {8, 0, 0, 0}, 256, 128},     /* 4:4:4: left 8 -> 0 */
        {true, {40, 1, 0, 3}, 223, 125},    /* 4:4:4: left 40 -> 32 */
    };
    dvpp_video_sizes sz;
    dvpp_err err;
    dvpp_buf b;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dvpp_buf_init(&b);
        cropped_sps_stream(&b, cases[i].yuv444, 16, 8, cases[i].crop);
        assert_int_equal(dvpp_video_scan_sizes(b.data, b.len, NULL, &sz, &err), DVPP_OK);
        dvpp_buf_fini(&b);
        if (sz.count != 1 || sz.size[0].width != cases[i].w ||
            sz.size[0].height != cases[i].h || !sz.complete)
            fail_msg("case %zu: %u sizes, %ux%u, not %ux%u", i, sz.count,
                     sz.count ? sz.size[0].width : 0, sz.count ? sz.size[0].height : 0,
                     cases[i].w, cases[i].h);
    }
    /* a crop of the whole width: no frame, counted at its coded size */
    dvpp_buf_init(&b);
    cropped_sps_stream(&b, false, 16, 8, (const uint32_t[4]){64, 64, 0, 0});
    assert_int_equal(dvpp_video_scan_sizes(b.data, b.len, NULL, &sz, &err), DVPP_OK);
    dvpp_buf_fini(&b);
    assert_false(sz.complete);
    assert_int_equal(sz.max_width, 256);
    assert_int_equal(sz.max_height, 128);
    /* 17 sizes, 16 x 8 ... 32 x 8 macroblocks */
    dvpp_buf_init(&b);
    for (uint32_t k = 0; k < DVPP_VIDEO_SIZES + 1; k++)
        cropped_sps_stream(&b, false, 16 + k, 8, (const uint32_t[4]){0, 0, 0, 0});
    assert_int_equal(dvpp_video_scan_sizes(b.data, b.len, NULL, &sz, &err), DVPP_OK);
    dvpp_buf_fini(&b);
    assert_int_equal(sz.count, DVPP_VIDEO_SIZES);
    assert_false(sz.complete);
    assert_int_equal(sz.max_width, (16 + DVPP_VIDEO_SIZES) * 16);
    for (uint32_t k = 0; k < DVPP_VIDEO_SIZES; k++)
        assert_int_equal(sz.size[k].width, (16 + k) * 16);
}

/* The scan reads MP4 (avcC/hvcC extradata, length-prefixed samples) and
 * says no as the probe does: garbage is ECORRUPT, nothing EINVAL, a file
 * over max_video_bytes ELIMIT (another codec: test_other_codec); and an SPS
 * claim past max_pixels is listed (no pixel is made: the decode refuses
 * it). */
static void test_scan_sizes_containers_and_refusals(void **state)
{
    static const uint8_t junk[] = "this is not a video at all, just text";
    dvpp_limits lim = dvpp_limits_default();
    dvpp_video_sizes sz;
    dvpp_err err;
    dvpp_buf b;

    (void)state;
    for (stream_id k = S264_ANNEXB; k <= S265_MP4; k++) {
        assert_int_equal(dvpp_video_scan_sizes(bytes_of(k)->data, bytes_of(k)->len, NULL, &sz,
                                               &err), DVPP_OK);
        assert_int_equal(sz.count, 1);
        assert_true(sz.complete);
        assert_int_equal(sz.size[0].width, W);
        assert_int_equal(sz.size[0].height, H);
        assert_int_equal(sz.max_width, W);
        assert_int_equal(sz.max_height, H);
    }
    assert_int_equal(dvpp_video_scan_sizes(junk, sizeof(junk), NULL, &sz, &err), DVPP_ECORRUPT);
    assert_int_equal(dvpp_video_scan_sizes(junk, 0, NULL, &sz, &err), DVPP_EINVAL);
    assert_int_equal(sz.count, 0);
    lim.max_video_bytes = bytes_of(S264_MP4)->len - 1;
    assert_int_equal(dvpp_video_scan_sizes(bytes_of(S264_MP4)->data, bytes_of(S264_MP4)->len,
                                           &lim, &sz, &err), DVPP_ELIMIT);
    assert_string_equal(err.field, "max_video_bytes");
    dvpp_buf_init(&b);
    huge_stream(&b, 1024, 512);
    assert_int_equal(dvpp_video_scan_sizes(b.data, b.len, NULL, &sz, &err), DVPP_OK);
    dvpp_buf_fini(&b);
    assert_int_equal(sz.max_width, 16384);
    assert_int_equal(sz.max_height, 8192);
}

/* ------------------------------------------------------------------------ */
/* Matroska with timestamps at both ends of int64                            */

/* An EBML element whose size field takes 8 bytes (0x01 and 7 bytes). */
static void ebml(dvpp_buf *out, uint32_t id, const void *payload, size_t n)
{
    uint8_t head[12];
    size_t k = 0;

    for (int shift = 24; shift >= 0; shift -= 8)
        if (id >> shift || k)
            head[k++] = (uint8_t)(id >> shift);
    head[k++] = 0x01;
    for (int shift = 48; shift >= 0; shift -= 8)
        head[k++] = (uint8_t)((uint64_t)n >> shift);
    assert_int_equal(dvpp_buf_append(out, head, k), DVPP_OK);
    assert_int_equal(dvpp_buf_append(out, payload, n), DVPP_OK);
}

/* An unsigned EBML element in @width big-endian bytes. */
static void ebml_uint(dvpp_buf *out, uint32_t id, uint64_t v, unsigned width)
{
    uint8_t b[8];

    for (unsigned i = 0; i < width; i++)
        b[i] = (uint8_t)(v >> (8 * (width - 1 - i)));
    ebml(out, id, b, width);
}

/* Wrap @inner (consumed) as element @id of @out. */
static void ebml_wrap(dvpp_buf *out, uint32_t id, dvpp_buf *inner)
{
    ebml(out, id, inner->data, inner->len);
    dvpp_buf_fini(inner);
    dvpp_buf_init(inner);
}

/* The next NAL unit of Annex-B @p (start code and trailing zeros off),
 * from *pos; false at the end. */
static bool next_nal(const dvpp_buf *p, size_t *pos, const uint8_t **nal, size_t *n)
{
    size_t i = *pos, s, e;

    while (i + 3 <= p->len && memcmp(p->data + i, "\0\0\1", 3) != 0)
        i++;
    if (i + 3 > p->len)
        return false;
    s = i + 3;
    for (e = s; e + 3 <= p->len && memcmp(p->data + e, "\0\0\1", 3) != 0; e++)
        ;
    if (e + 3 > p->len)
        e = p->len;
    *pos = e;
    while (e > s && p->data[e - 1] == 0)
        e--;
    *nal = p->data + s;
    *n = e - s;
    return true;
}

/* A Matroska file (1 ms ticks) of the first @n frames of the H.264
 * Annex-B stream @es, frame k in a cluster of its own at @stamps[k] ticks
 * (a cluster timestamp is unsigned: a negative pts is its two's
 * complement). ffmpeg's muxer refuses such timestamps; the format holds
 * them and libavformat reads them back as int64 pts. */
static void mkv_with_stamps(const dvpp_buf *es, const uint64_t *stamps, unsigned n,
                            dvpp_buf *out)
{
    const uint8_t *nal, *sps = NULL, *pps = NULL;
    size_t len, sps_n = 0, pps_n = 0, pos = 0;
    dvpp_buf a, b, c, seg;
    unsigned k = 0;

    dvpp_buf_init(&a), dvpp_buf_init(&b), dvpp_buf_init(&c), dvpp_buf_init(&seg);
    dvpp_buf_init(out);
    while (next_nal(es, &pos, &nal, &len)) {
        if ((nal[0] & 0x1f) == 7 && !sps)
            sps = nal, sps_n = len;
        if ((nal[0] & 0x1f) == 8 && !pps)
            pps = nal, pps_n = len;
    }
    assert_non_null(sps);
    assert_non_null(pps);
    /* EBML header: version 1, max id 4, max size 8, "matroska" v4/2 */
    ebml_uint(&a, 0x4286, 1, 1);
    ebml_uint(&a, 0x42f7, 1, 1);
    ebml_uint(&a, 0x42f2, 4, 1);
    ebml_uint(&a, 0x42f3, 8, 1);
    ebml(&a, 0x4282, "matroska", 8);
    ebml_uint(&a, 0x4287, 4, 1);
    ebml_uint(&a, 0x4285, 2, 1);
    ebml_wrap(out, 0x1a45dfa3, &a);
    /* Info: TimestampScale 1 ms, muxing and writing app */
    ebml_uint(&a, 0x2ad7b1, 1000000, 4);
    ebml(&a, 0x4d80, "t", 1);
    ebml(&a, 0x5741, "t", 1);
    ebml_wrap(&seg, 0x1549a966, &a);
    /* Tracks: one H.264 video track, its avcC (4-byte NAL lengths) */
    {
        uint8_t hd[6] = {1, sps[1], sps[2], sps[3], 0xff, 0xe1};
        uint8_t l[2] = {(uint8_t)(sps_n >> 8), (uint8_t)sps_n};
        uint8_t one = 1, pl[2] = {(uint8_t)(pps_n >> 8), (uint8_t)pps_n};
        assert_int_equal(dvpp_buf_append(&c, hd, 6), DVPP_OK);
        assert_int_equal(dvpp_buf_append(&c, l, 2), DVPP_OK);
        assert_int_equal(dvpp_buf_append(&c, sps, sps_n), DVPP_OK);
        assert_int_equal(dvpp_buf_append(&c, &one, 1), DVPP_OK);
        assert_int_equal(dvpp_buf_append(&c, pl, 2), DVPP_OK);
        assert_int_equal(dvpp_buf_append(&c, pps, pps_n), DVPP_OK);
    }
    ebml_uint(&a, 0xd7, 1, 1);
    ebml_uint(&a, 0x73c5, 1, 1);
    ebml_uint(&a, 0x83, 1, 1);
    ebml(&a, 0x86, "V_MPEG4/ISO/AVC", 15);
    ebml_wrap(&a, 0x63a2, &c);
    ebml_uint(&b, 0xb0, W, 2);
    ebml_uint(&b, 0xba, H, 2);
    ebml_wrap(&a, 0xe0, &b);
    ebml_wrap(&b, 0xae, &a);
    ebml_wrap(&seg, 0x1654ae6b, &b);
    /* Clusters: Timestamp (8 bytes), one SimpleBlock (track 1, +0) */
    pos = 0;
    while (k < n && next_nal(es, &pos, &nal, &len)) {
        uint8_t t = nal[0] & 0x1f;
        uint8_t bh[8] = {0x81, 0, 0, t == 5 ? 0x80 : 0, (uint8_t)(len >> 24),
                         (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len};
        if (t != 1 && t != 5)
            continue; /* one slice a frame (libx264, one thread) */
        assert_int_equal(dvpp_buf_append(&b, bh, 8), DVPP_OK);
        assert_int_equal(dvpp_buf_append(&b, nal, len), DVPP_OK);
        ebml_uint(&a, 0xe7, stamps[k++], 8);
        ebml_wrap(&a, 0xa3, &b);
        ebml_wrap(&seg, 0x1f43b675, &a);
    }
    assert_int_equal(k, n);
    ebml_wrap(out, 0x18538067, &seg);
}

#define STAMPED 12

/* A Matroska stream starting at INT64_MIN + 4096 ticks whose later frames
 * lie near INT64_MAX (2^63 - 2^50 + 4096 k: doubles, as libavformat reads
 * cluster timestamps through one): pts - start passes int64 (undefined:
 * UBSan stopped the decode; a plain build wrapped to negative times and
 * kept 1 frame of 12). Every frame is kept with its exact time, computed
 * here by hand: (2^64 - 2^50 + 4096 (k - 1)) ms, exact in a double. The
 * mirror image (ten frames near INT64_MAX, then two at INT64_MIN + 4096 k)
 * underflowed (a plain build wrapped to +2^50 ticks and kept the two):
 * their times are about -1.8e16 s, before the start, so they are not
 * kept. */
static void test_extreme_timestamps(void **state)
{
    const uint64_t top = ((uint64_t)1 << 63) - ((uint64_t)1 << 50);
    const uint64_t bottom = (uint64_t)1 << 63; /* INT64_MIN's two's complement */
    uint64_t up[STAMPED], down[STAMPED];
    dvpp_buf mkv;
    dvpp_err err;
    dvpp_status st;
    record r;

    (void)state;
    up[0] = bottom + 4096;
    for (unsigned k = 1; k < STAMPED; k++)
        up[k] = top + 4096u * k;
    for (unsigned k = 0; k < STAMPED; k++)
        down[k] = k < 10 ? top + 4096u * k : bottom + 4096u * (k - 9);

    mkv_with_stamps(bytes_of(S264_ANNEXB), up, STAMPED, &mkv);
    st = decode(&mkv, NULL, NULL, &r, NULL, &err);
    dvpp_buf_fini(&mkv);
    if (st != DVPP_OK)
        fail_msg("up: %s (%s)", dvpp_status_name(st), err.msg);
    if (r.n != STAMPED)
        fail_msg("up: %u of %u frames kept (frame 1 at %g s)", r.n, STAMPED,
                 r.n > 1 ? r.time_s[1] : 0.0);
    assert_int_equal(r.pts[0], INT64_MIN + 4096);
    assert_true(r.time_s[0] == 0.0);
    for (unsigned k = 1; k < STAMPED; k++) {
        double want = (ldexp(1, 64) - ldexp(1, 50) + 4096.0 * (k - 1)) * (1.0 / 1000);
        assert_int_equal(r.number[k], k);
        assert_int_equal(r.pts[k], (int64_t)(top + 4096u * k));
        if (r.time_s[k] != want)
            fail_msg("up: frame %u at %.6f s, want %.6f", k, r.time_s[k], want);
    }

    mkv_with_stamps(bytes_of(S264_ANNEXB), down, STAMPED, &mkv);
    st = decode(&mkv, NULL, NULL, &r, NULL, &err);
    dvpp_buf_fini(&mkv);
    if (st != DVPP_OK)
        fail_msg("down: %s (%s)", dvpp_status_name(st), err.msg);
    if (r.n != 10)
        fail_msg("down: %u frames kept, want 10 (frame 10 at %g s)", r.n,
                 r.n > 10 ? r.time_s[10] : 0.0);
    for (unsigned k = 0; k < 10; k++) {
        assert_int_equal(r.number[k], k);
        assert_true(r.time_s[k] == 4096.0 * k * (1.0 / 1000));
    }
}

/* ------------------------------------------------------------------------ */
/* Budgets and options                                                       */

static void test_video_bytes_limit(void **state)
{
    const dvpp_buf *b = bytes_of(S264_ANNEXB);
    dvpp_limits lim = dvpp_limits_default();
    dvpp_video_info info;
    dvpp_err err;
    record r;

    (void)state;
    lim.max_video_bytes = b->len - 1;
    assert_int_equal(decode(b, NULL, &lim, &r, NULL, &err), DVPP_ELIMIT);
    assert_string_equal(err.field, "max_video_bytes");
    assert_int_equal(r.n, 0);
    assert_int_equal(dvpp_video_probe(b->data, b->len, &lim, &info, &err), DVPP_ELIMIT);
    lim.max_video_bytes = b->len;
    assert_int_equal(decode(b, NULL, &lim, &r, NULL, &err), DVPP_OK);
    assert_int_equal(r.n, T);
}

/* max_video_frames counts decoded frames, kept or not. */
static void test_video_frames_limit(void **state)
{
    dvpp_limits lim = dvpp_limits_default();
    dvpp_vdec_opts o;
    dvpp_err err;
    record r;

    (void)state;
    dvpp_vdec_opts_init(&o);
    o.keyframes_only = true;
    lim.max_video_frames = 10;
    assert_int_equal(decode(bytes_of(S264_ANNEXB), &o, &lim, &r, NULL, &err), DVPP_ELIMIT);
    assert_string_equal(err.field, "max_video_frames");
    lim.max_video_frames = T;
    assert_int_equal(decode(bytes_of(S264_ANNEXB), &o, &lim, &r, NULL, &err), DVPP_OK);
}

static void test_pixel_limits(void **state)
{
    dvpp_limits lim = dvpp_limits_default();
    dvpp_err err;
    record r;

    (void)state;
    lim.max_pixels = (uint64_t)W * H - 1;
    assert_int_equal(decode(bytes_of(S265_MP4), NULL, &lim, &r, NULL, &err), DVPP_ELIMIT);
    assert_int_equal(r.n, 0);
    lim = dvpp_limits_default();
    lim.max_side = W - 1;
    assert_int_equal(decode(bytes_of(S264_ANNEXB), NULL, &lim, &r, NULL, &err), DVPP_ELIMIT);
}

static void bad_vdec(void (*spoil)(dvpp_vdec_opts *))
{
    dvpp_vdec_opts o;
    dvpp_err err;
    record r;

    dvpp_vdec_opts_init(&o);
    spoil(&o);
    assert_int_equal(decode(bytes_of(S264_ANNEXB), &o, NULL, &r, NULL, &err), DVPP_EINVAL);
    assert_int_equal(r.n, 0);
}

static void spoil_i420(dvpp_vdec_opts *o) { o->format = DVPP_PIXEL_I420; }
static void spoil_gray(dvpp_vdec_opts *o) { o->format = DVPP_PIXEL_GRAY; }
static void spoil_threads(dvpp_vdec_opts *o) { o->threads = 65; }
static void spoil_fps(dvpp_vdec_opts *o) { o->fps = -1; }
static void spoil_start(dvpp_vdec_opts *o) { o->start_s = -0.5; }
static void spoil_range(dvpp_vdec_opts *o) { o->start_s = 2, o->end_s = 1; }

static void test_bad_decode_options(void **state)
{
    dvpp_vdec_opts o;
    dvpp_err err;

    (void)state;
    bad_vdec(spoil_i420);
    bad_vdec(spoil_gray);
    bad_vdec(spoil_threads);
    bad_vdec(spoil_fps);
    bad_vdec(spoil_start);
    bad_vdec(spoil_range);
    dvpp_vdec_opts_init(&o);
    assert_int_equal(dvpp_video_decode(bytes_of(S264_ANNEXB)->data, bytes_of(S264_ANNEXB)->len,
                                       &o, NULL, NULL, NULL, NULL, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_video_decode(bytes_of(S264_ANNEXB)->data, bytes_of(S264_ANNEXB)->len,
                                       NULL, NULL, sink, NULL, NULL, &err), DVPP_EINVAL);
}

static dvpp_status open_with(void (*spoil)(dvpp_venc_opts *), dvpp_err *err)
{
    dvpp_venc_opts o;
    dvpp_venc *e = NULL;
    dvpp_buf b;
    dvpp_status st;

    dvpp_venc_opts_init(&o);
    o.width = W;
    o.height = H;
    spoil(&o);
    dvpp_buf_init(&b);
    dvpp_err_clear(err);
    st = dvpp_venc_open(&o, &b, &e, err);
    assert_true(st == DVPP_OK ? e != NULL : e == NULL);
    dvpp_venc_close(e);
    dvpp_buf_fini(&b);
    return st;
}

static void venc_odd(dvpp_venc_opts *o) { o->width = W + 1; }
static void venc_tiny(dvpp_venc_opts *o) { o->height = 8; }
static void venc_huge(dvpp_venc_opts *o) { o->width = 8194; }
static void venc_codec(dvpp_venc_opts *o) { o->codec = (dvpp_video_codec)7; }
static void venc_fps(dvpp_venc_opts *o) { o->fps_den = 0; }
static void venc_fast(dvpp_venc_opts *o) { o->fps_num = 1000; }
static void venc_gop(dvpp_venc_opts *o) { o->gop = 0; }
static void venc_crf(dvpp_venc_opts *o) { o->crf = 52; }
static void venc_rc(dvpp_venc_opts *o) { o->rc = (dvpp_venc_rc)9; }
static void venc_bitrate(dvpp_venc_opts *o) { o->rc = DVPP_VENC_RC_CBR, o->bitrate_kbps = 5; }
static void venc_threads(dvpp_venc_opts *o) { o->threads = 65; }
static void venc_profile(dvpp_venc_opts *o) { snprintf(o->profile, sizeof(o->profile), "bogus"); }
static void venc_ok(dvpp_venc_opts *o) { (void)o; }

static void test_bad_encode_options(void **state)
{
    void (*bad[])(dvpp_venc_opts *) = {venc_odd, venc_tiny, venc_huge, venc_codec,
                                       venc_fps, venc_fast, venc_gop, venc_crf,
                                       venc_rc, venc_bitrate, venc_threads, venc_profile};
    dvpp_err err;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dvpp_status st = open_with(bad[i], &err);
        if (st != DVPP_EINVAL)
            fail_msg("case %zu: %s (%s)", i, dvpp_status_name(st), err.msg);
        assert_true(err.field[0] != '\0');
    }
    assert_int_equal(open_with(venc_ok, &err), DVPP_OK);
}

/* A frame of another size or format, and a frame after finish. */
static void test_bad_frames(void **state)
{
    dvpp_venc_opts o;
    dvpp_venc *e = NULL;
    dvpp_image small = g_fx->src[0], gray = g_fx->src[0];
    dvpp_buf b;
    dvpp_err err;

    (void)state;
    dvpp_venc_opts_init(&o);
    o.width = W;
    o.height = H;
    dvpp_buf_init(&b);
    assert_int_equal(dvpp_venc_open(&o, &b, &e, &err), DVPP_OK);
    small.width = W - 2;
    assert_int_equal(dvpp_venc_frame(e, &small, false, &err), DVPP_EINVAL);
    gray.format = DVPP_PIXEL_GRAY;
    gray.width_stride = W;
    assert_int_not_equal(dvpp_venc_frame(e, &gray, false, &err), DVPP_OK);
    assert_int_equal(dvpp_venc_frame(e, &g_fx->src[0], false, &err), DVPP_OK);
    assert_int_equal(dvpp_venc_finish(e, &err), DVPP_OK);
    assert_int_equal(dvpp_venc_frame(e, &g_fx->src[1], false, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_venc_finish(e, &err), DVPP_OK); /* twice is fine */
    dvpp_venc_close(e);
    dvpp_venc_close(NULL);
    dvpp_buf_fini(&b);
}

static void test_parsers(void **state)
{
    dvpp_video_codec c;
    dvpp_venc_rc rc;

    (void)state;
    assert_true(dvpp_video_codec_parse("hevc", &c) && c == DVPP_VIDEO_H265);
    assert_true(dvpp_video_codec_parse("avc", &c) && c == DVPP_VIDEO_H264);
    assert_false(dvpp_video_codec_parse("vp9", &c));
    assert_string_equal(dvpp_video_codec_name(DVPP_VIDEO_H265), "h265");
    assert_true(dvpp_venc_rc_parse("cbr", &rc) && rc == DVPP_VENC_RC_CBR);
    assert_false(dvpp_venc_rc_parse("abr", &rc));
}

/* ------------------------------------------------------------------------ */
/* Allocation failures                                                       */

/* Fail dvpp allocation N = 1, 2, ... until the call succeeds: each failure
 * is ENOMEM with nothing leaked. */
static void test_decode_enomem(void **state)
{
    dvpp_err err;
    record r;
    dvpp_status st = DVPP_ENOMEM;
    bool injected = true;
    size_t nomem = 0;

    (void)state;
    for (size_t n = 1; injected && n < 50; n++) {
        test_alloc_fail_nth(n);
        st = decode(bytes_of(S264_ANNEXB), NULL, NULL, &r, NULL, &err);
        injected = test_alloc_injected();
        if (injected ? st != DVPP_ENOMEM : st != DVPP_OK)
            fail_msg("fail at %zu (%s): %s (%s)", n, injected ? "injected" : "none injected",
                     dvpp_status_name(st), err.msg);
        nomem += injected;
        assert_int_equal(test_alloc()->live, 0);
    }
    assert_int_equal(st, DVPP_OK);
    assert_int_equal(r.n, T);
    assert_true(nomem > 0); /* the sweep injected failures at all */
}

/* The same for the encoder writing @container: a stream that comes out
 * must be whole (all T frames decode). */
static void encode_enomem(dvpp_venc_container container)
{
    dvpp_status st = DVPP_ENOMEM;
    bool injected = true;
    size_t n, nomem = 0;

    for (n = 1; injected && n < 200; n++) {
        dvpp_venc_opts o;
        stream s;
        dvpp_err err;
        opts(&o, DVPP_VIDEO_H264, container, 30);
        o.crf = 40; /* small packets: few buffer growths */
        memset(&s, 0, sizeof(s));
        dvpp_buf_init(&s.bytes);
        test_alloc_fail_nth(n);
        record r = {.n = T};
        dvpp_status d = DVPP_OK;
        st = encode(&o, -1, &s, &err);
        injected = test_alloc_injected();
        nomem += injected && st == DVPP_ENOMEM;
        if (!injected && st != DVPP_OK)
            fail_msg("fail at %zu: nothing injected, yet %s (%s)", n, dvpp_status_name(st),
                     err.msg);
        if (st == DVPP_OK)
            d = decode(&s.bytes, NULL, NULL, &r, NULL, &err);
        dvpp_buf_fini(&s.bytes); /* before any assertion: a failure leaks nothing */
        if (d != DVPP_OK || r.n != T)
            fail_msg("fail at %zu: encode OK but the stream decodes to %u frames (%s)", n,
                     r.n, err.msg);
        if (st != DVPP_OK && st != DVPP_ENOMEM)
            fail_msg("fail at %zu: %s (%s)", n, dvpp_status_name(st), err.msg);
        assert_int_equal(test_alloc()->live, 0);
    }
    assert_int_equal(st, DVPP_OK);
    assert_false(injected); /* the sweep reached its end */
    assert_true(nomem > 0); /* and injected failures on the way */
}

static void test_encode_enomem_annexb(void **state)
{
    (void)state;
    encode_enomem(DVPP_VENC_ANNEXB);
}

static void test_encode_enomem_mp4(void **state)
{
    (void)state;
    encode_enomem(DVPP_VENC_MP4);
}

#define T_(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_(test_h264_annexb),
        T_(test_h264_mp4),
        T_(test_h265_annexb),
        T_(test_h265_mp4),
        T_(test_probe),
        T_(test_rgb_both_ways),
        T_(test_gop10_h264),
        T_(test_gop10_h265),
        T_(test_idr7_h264),
        T_(test_idr7_h265),
        T_(test_every_3),
        T_(test_direct_i420_same_samples),
        T_(test_keyframes_only),
        T_(test_time_range),
        T_(test_fps),
        T_(test_max_frames),
        T_(test_sink_error),
        T_(test_truncated),
        T_(test_bit_flipped),
        T_(test_single_flips),
        T_(test_other_codec),
        T_(test_garbage),
        T_(test_huge_sps),
        T_(test_sps_16384),
        T_(test_ts_huge_sps),
        T_(test_ts_small_stream_decodes),
        T_(test_first_frame_size_h264),
        T_(test_first_frame_size_h265),
        T_(test_frames_keep_their_cropped_size),
        T_(test_scan_sizes_cropping),
        T_(test_scan_sizes_containers_and_refusals),
        T_(test_extreme_timestamps),
        T_(test_video_bytes_limit),
        T_(test_video_frames_limit),
        T_(test_pixel_limits),
        T_(test_bad_decode_options),
        T_(test_low_delay_h265_key_frames_are_idr),
        T_(test_low_delay_h264),
        T_(test_low_delay_h265),
        T_(test_bad_encode_options),
        T_(test_bad_frames),
        T_(test_parsers),
        T_(test_decode_enomem),
        T_(test_encode_enomem_annexb),
        T_(test_encode_enomem_mp4),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
