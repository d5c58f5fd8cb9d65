/* Unit tests for codecs/dvpp_vstream.c, the streaming VDEC.
 *
 * The streams are made at test time by the ffmpeg command line (Debian's
 * ffmpeg, a test dependency): H.264 and H.265 with B frames (the decoder
 * reorders), and an H.264 stream whose size changes (two streams of
 * different sizes, concatenated). Each is cut into access units by
 * libavformat's raw demuxer (which knows each packet's byte position) and
 * fed one packet at a time. The references:
 *   - the frames of the whole-buffer decoder dvpp_video_decode, byte for
 *     byte (which equal `ffmpeg -pix_fmt nv12`, tests/unit/codecs and
 *     tests/e2e/test_video.py);
 *   - the tag each frame carries: ffprobe lists every frame (in output
 *     order) with the byte position of the packet it came from.
 * Also: NV21, a stream without B frames (every picture out during its own
 * packet), a flush
 * then the same stream again, damaged packets (an error for the packet or
 * the frame, the decoder still usable), an SPS over the limits (ELIMIT
 * before anything is decoded), a sink that fails, bad arguments, and
 * allocation failures (ENOMEM, nothing leaked).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libavformat/avformat.h>

#include "dvpp_vstream.h"
#include "test_alloc.h"

#define MAX_PACKETS 64
#define MAX_FRAMES 64

/* ------------------------------------------------------------------------ */
/* Streams, made once                                                        */

typedef struct packet {
    size_t pos, len;           /* where it lies in the stream */
} packet;

typedef struct vframe {
    uint32_t width, height;
    size_t size;
    uint8_t *data;             /* the whole image (malloc'd) */
    uint64_t tag;
    dvpp_status status;
} vframe;

typedef struct frames {
    unsigned n;
    vframe f[MAX_FRAMES];
} frames;

typedef struct stream {
    const char *name;
    dvpp_video_codec codec;
    uint8_t *data;
    size_t len;
    unsigned npackets;
    packet p[MAX_PACKETS];
    unsigned nprobe;
    size_t probe_pos[MAX_FRAMES]; /* ffprobe: each frame's packet position */
    frames ref;                   /* dvpp_video_decode's frames (NV12) */
} stream;

enum { S264_B, S265_B, S264_SIZES, NSTREAMS };

static char g_dir[64];
static stream g_s[NSTREAMS];

static int run(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "failed (%d): %s\n", rc, cmd);
    return rc;
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *d = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (d = malloc((size_t)n)) && fread(d, 1, (size_t)n, f) != (size_t)n) {
        free(d);
        d = NULL;
    }
    *len = d ? (size_t)n : 0;
    fclose(f);
    return d;
}

/* The access units of the raw stream at @path, as libavformat cuts them. */
static int demux(stream *s, const char *path)
{
    const AVInputFormat *in = av_find_input_format(s->codec == DVPP_VIDEO_H265 ? "hevc"
                                                                              : "h264");
    AVFormatContext *fmt = NULL;
    AVPacket *pkt = av_packet_alloc();
    int rc = -1;

    if (!pkt || avformat_open_input(&fmt, path, in, NULL) < 0)
        goto out;
    while (av_read_frame(fmt, pkt) >= 0) {
        if (s->npackets == MAX_PACKETS || pkt->pos < 0) {
            av_packet_unref(pkt);
            goto out;
        }
        s->p[s->npackets++] = (packet){(size_t)pkt->pos, (size_t)pkt->size};
        av_packet_unref(pkt);
    }
    rc = 0;
out:
    avformat_close_input(&fmt);
    av_packet_free(&pkt);
    return rc;
}

/* ffprobe's frames, in output order, each with its packet's position. */
static int probe(stream *s, const char *path)
{
    char cmd[256], line[128];
    FILE *p;

    snprintf(cmd, sizeof(cmd), "ffprobe -v error -show_entries frame=pkt_pos -of csv=p=0 %s",
             path);
    p = popen(cmd, "r");
    if (!p)
        return -1;
    while (fgets(line, sizeof(line), p))
        if (line[0] >= '0' && line[0] <= '9' && s->nprobe < MAX_FRAMES)
            s->probe_pos[s->nprobe++] = strtoull(line, NULL, 10);
    return pclose(p) == 0 && s->nprobe > 0 ? 0 : -1;
}

static void frames_free(frames *fr)
{
    for (unsigned i = 0; i < fr->n; i++)
        free(fr->f[i].data);
    fr->n = 0;
}

static dvpp_status keep(frames *fr, const dvpp_image *img, uint64_t tag, dvpp_status st)
{
    vframe *v;

    if (fr->n == MAX_FRAMES)
        return DVPP_ENOSPC;
    v = &fr->f[fr->n++];
    memset(v, 0, sizeof(*v));
    v->tag = tag;
    v->status = st;
    if (img) {
        v->width = img->width, v->height = img->height, v->size = img->size;
        v->data = malloc(img->size);
        if (!v->data)
            return DVPP_ENOMEM;
        memcpy(v->data, img->data, img->size);
    }
    return DVPP_OK;
}

static dvpp_status whole_sink(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    (void)err;
    return keep(ctx, f->image, f->index, DVPP_OK);
}

static int whole_decode(const stream *s, dvpp_pixfmt fmt, frames *out)
{
    dvpp_vdec_opts o;
    dvpp_err err;

    dvpp_vdec_opts_init(&o);
    o.format = fmt;
    if (dvpp_video_decode(s->data, s->len, &o, NULL, whole_sink, out, NULL, &err) != DVPP_OK) {
        fprintf(stderr, "%s: %s\n", s->name, err.msg);
        return -1;
    }
    return 0;
}

static int make_stream(stream *s, const char *name, dvpp_video_codec codec,
                       const char *const *parts, unsigned nparts)
{
    char path[128], cmd[512];

    s->name = name;
    s->codec = codec;
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    for (unsigned k = 0; k < nparts; k++) {
        snprintf(cmd, sizeof(cmd), "ffmpeg -nostdin -v error -y -f lavfi -i %s -f %s - %s %s",
                 parts[k], codec == DVPP_VIDEO_H265 ? "hevc" : "h264", k ? ">>" : ">", path);
        if (run(cmd) != 0)
            return -1;
    }
    s->data = read_all(path, &s->len);
    if (!s->data || demux(s, path) != 0 || probe(s, path) != 0)
        return -1;
    return whole_decode(s, DVPP_PIXEL_NV12, &s->ref);
}

static int group_setup(void **state)
{
    /* B frames: the decoder holds pictures back and hands them out in
     * another order than the packets came. */
    static const char *const b264[] = {
        "testsrc2=size=320x240:rate=25 -frames:v 24 -pix_fmt yuv420p -c:v libx264 -bf 2 "
        "-g 12 -x264-params threads=1"};
    static const char *const b265[] = {
        "testsrc2=size=256x192:rate=25 -frames:v 20 -pix_fmt yuv420p -c:v libx265 "
        "-x265-params bframes=2:keyint=10:log-level=error:pools=1:frame-threads=1"};
    /* 320x240 then 160x128: a new SPS in the middle of the stream */
    static const char *const sizes[] = {
        "testsrc2=size=320x240:rate=25 -frames:v 5 -pix_fmt yuv420p -c:v libx264 "
        "-preset ultrafast -x264-params threads=1",
        "testsrc2=size=160x128:rate=25 -frames:v 4 -pix_fmt yuv420p -c:v libx264 "
        "-preset ultrafast -x264-params threads=1"};
    const char *tmp = getenv("TMPDIR");

    (void)state;
    snprintf(g_dir, sizeof(g_dir), "%s/vstream.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir))
        return -1;
    if (make_stream(&g_s[S264_B], "b.h264", DVPP_VIDEO_H264, b264, 1) != 0 ||
        make_stream(&g_s[S265_B], "b.h265", DVPP_VIDEO_H265, b265, 1) != 0 ||
        make_stream(&g_s[S264_SIZES], "sizes.h264", DVPP_VIDEO_H264, sizes, 2) != 0)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    char cmd[128];

    (void)state;
    for (int k = 0; k < NSTREAMS; k++) {
        free(g_s[k].data);
        frames_free(&g_s[k].ref);
    }
    if (g_dir[0]) {
        snprintf(cmd, sizeof(cmd), "rm -rf %s", g_dir);
        return run(cmd) == 0 ? 0 : -1;
    }
    return 0;
}

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
/* Feeding a stream packet by packet                                         */

typedef struct feed_rec {
    frames out;
    unsigned per_send[MAX_PACKETS]; /* frames handed out during send i */
    uint64_t next_index;
    bool index_gap;                 /* an index out of sequence */
    unsigned fail_at;               /* the sink refuses frame index fail_at - 1 */
} feed_rec;

static dvpp_status rec_sink(void *ctx, const dvpp_vstream_frame *f, dvpp_err *err)
{
    feed_rec *r = ctx;

    r->index_gap |= f->index != r->next_index;
    r->next_index = f->index + 1;
    if (r->fail_at && f->index + 1 == r->fail_at)
        return dvpp_err_set(err, DVPP_ECANCELED, NULL, "the sink says no");
    assert_true(f->status == DVPP_OK ? f->image != NULL : f->image == NULL);
    return keep(&r->out, f->image, f->tag, f->status);
}

/* Every packet of @s (tag = its index), then a flush. */
static void feed_all(const stream *s, const dvpp_vstream_opts *o, feed_rec *r)
{
    dvpp_vstream *v;
    dvpp_err err;
    unsigned before;

    assert_int_equal(dvpp_vstream_open(o, NULL, &v, &err), DVPP_OK);
    for (unsigned i = 0; i < s->npackets; i++) {
        before = r->out.n;
        dvpp_status st = dvpp_vstream_send(v, s->data + s->p[i].pos, s->p[i].len, i,
                                           rec_sink, r, &err);
        if (st != DVPP_OK)
            fail_msg("%s packet %u: %s", s->name, i, err.msg);
        r->per_send[i] = r->out.n - before;
    }
    assert_int_equal(dvpp_vstream_flush(v, rec_sink, r, &err), DVPP_OK);
    assert_int_equal(dvpp_vstream_frames(v), r->out.n);
    dvpp_vstream_close(v);
}

static void assert_same_frames(const frames *got, const frames *want, const char *name)
{
    if (got->n != want->n)
        fail_msg("%s: %u frames, the whole-buffer decoder %u", name, got->n, want->n);
    for (unsigned i = 0; i < got->n; i++) {
        const vframe *a = &got->f[i], *b = &want->f[i];
        assert_int_equal(a->status, DVPP_OK);
        if (a->width != b->width || a->height != b->height || a->size != b->size)
            fail_msg("%s frame %u: %ux%u (%zu bytes), want %ux%u (%zu)", name, i, a->width,
                     a->height, a->size, b->width, b->height, b->size);
        if (memcmp(a->data, b->data, a->size) != 0)
            fail_msg("%s frame %u: other bytes than the whole-buffer decoder", name, i);
    }
}

/* Frame i's tag is the index of the packet ffprobe says it came from. */
static void assert_tags(const stream *s, const frames *got)
{
    assert_int_equal(got->n, s->nprobe);
    for (unsigned i = 0; i < got->n; i++) {
        unsigned want = MAX_PACKETS;
        for (unsigned k = 0; k < s->npackets; k++)
            if (s->p[k].pos == s->probe_pos[i])
                want = k;
        if (got->f[i].tag != want)
            fail_msg("%s frame %u: tag %llu, ffprobe says packet %u", s->name, i,
                     (unsigned long long)got->f[i].tag, want);
    }
}

static void decode_matches(int id)
{
    const stream *s = &g_s[id];
    dvpp_vstream_opts o;
    feed_rec *r = calloc(1, sizeof(*r));
    bool reordered = false, lagged = false;

    assert_non_null(r);
    dvpp_vstream_opts_init(&o);
    o.codec = s->codec;
    feed_all(s, &o, r);
    assert_same_frames(&r->out, &s->ref, s->name);
    assert_tags(s, &r->out);
    assert_false(r->index_gap);
    for (unsigned i = 0; i < r->out.n; i++)
        reordered |= r->out.f[i].tag != i;
    for (unsigned i = 0; i < s->npackets; i++)
        lagged |= r->per_send[i] == 0;
    /* The B-frame streams exercise what they are for. */
    assert_true(reordered);
    assert_true(lagged);
    frames_free(&r->out);
    free(r);
}

static void test_h264_b_frames_match_the_whole_buffer_decoder(void **state)
{
    (void)state;
    decode_matches(S264_B);
}

static void test_h265_b_frames_match_the_whole_buffer_decoder(void **state)
{
    (void)state;
    decode_matches(S265_B);
}

/* A new SPS mid-stream: frames of both sizes, each at its own size. */
static void test_a_size_change_gives_frames_of_each_size(void **state)
{
    const stream *s = &g_s[S264_SIZES];
    dvpp_vstream_opts o;
    feed_rec *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(r);
    dvpp_vstream_opts_init(&o);
    feed_all(s, &o, r);
    assert_same_frames(&r->out, &s->ref, s->name);
    assert_tags(s, &r->out);
    assert_int_equal(r->out.n, 9);
    assert_int_equal(r->out.f[0].width, 320);
    assert_int_equal(r->out.f[4].height, 240);
    assert_int_equal(r->out.f[5].width, 160);
    assert_int_equal(r->out.f[8].height, 128);
    /* VDEC strides: 160 x 128 NV12 is ALIGN(160,16) x ALIGN(128,2) x 3/2 */
    assert_int_equal(r->out.f[5].size, 160 * 128 * 3 / 2);
    frames_free(&r->out);
    free(r);
}

static void test_nv21_matches_the_whole_buffer_decoder(void **state)
{
    const stream *s = &g_s[S265_B];
    dvpp_vstream_opts o;
    frames *want = calloc(1, sizeof(*want));
    feed_rec *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(want);
    assert_non_null(r);
    assert_int_equal(whole_decode(s, DVPP_PIXEL_NV21, want), 0);
    dvpp_vstream_opts_init(&o);
    o.codec = s->codec;
    o.format = DVPP_PIXEL_NV21;
    feed_all(s, &o, r);
    assert_same_frames(&r->out, want, "nv21");
    /* and NV21 is not NV12: the chroma bytes differ */
    assert_memory_not_equal(r->out.f[0].data, s->ref.f[0].data, r->out.f[0].size);
    frames_free(&r->out);
    frames_free(want);
    free(r);
    free(want);
}

/* A stream without B frames signals no reordering: each picture comes out
 * during its own packet's send (what DVPP's fast output mode is for). */
static void test_without_b_frames_each_picture_comes_at_once(void **state)
{
    const stream *s = &g_s[S264_SIZES];
    dvpp_vstream_opts o;
    feed_rec *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(r);
    dvpp_vstream_opts_init(&o);
    feed_all(s, &o, r);
    assert_same_frames(&r->out, &s->ref, "no B frames");
    for (unsigned i = 0; i < s->npackets; i++) {
        assert_int_equal(r->per_send[i], 1);
        assert_int_equal(r->out.f[i].tag, i);
    }
    frames_free(&r->out);
    free(r);
}

/* After a flush the decoder takes a new stream: the same one again gives
 * the same frames. */
static void test_flush_then_the_stream_again(void **state)
{
    const stream *s = &g_s[S264_B];
    dvpp_vstream *v;
    dvpp_vstream_opts o;
    dvpp_err err;
    feed_rec *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(r);
    dvpp_vstream_opts_init(&o);
    assert_int_equal(dvpp_vstream_open(&o, NULL, &v, &err), DVPP_OK);
    for (int round = 0; round < 2; round++) {
        for (unsigned i = 0; i < s->npackets; i++)
            assert_int_equal(dvpp_vstream_send(v, s->data + s->p[i].pos, s->p[i].len, i,
                                               rec_sink, r, &err),
                             DVPP_OK);
        assert_int_equal(dvpp_vstream_flush(v, rec_sink, r, &err), DVPP_OK);
        assert_int_equal(r->out.n, s->ref.n);
        assert_same_frames(&r->out, &s->ref, round ? "second round" : "first round");
        frames_free(&r->out);
    }
    /* a flush with nothing held is no error */
    assert_int_equal(dvpp_vstream_flush(v, rec_sink, r, &err), DVPP_OK);
    assert_int_equal(r->out.n, 0);
    dvpp_vstream_close(v);
    free(r);
}

/* ------------------------------------------------------------------------ */
/* Bad input                                                                 */

/* Damaged packets: an error for the packet (its picture never comes) or a
 * frame flagged ECORRUPT, never a concealed picture; the decoder keeps
 * going, and after a flush the clean stream decodes as before. */
static void test_damaged_packets_are_errors_and_the_decoder_goes_on(void **state)
{
    const stream *s = &g_s[S264_B];
    dvpp_vstream *v;
    dvpp_vstream_opts o;
    dvpp_err err;
    feed_rec *r = calloc(1, sizeof(*r));
    uint8_t *bad = malloc(s->len);
    unsigned refused = 0, damaged = 0;

    (void)state;
    assert_non_null(r);
    assert_non_null(bad);
    memcpy(bad, s->data, s->len);
    /* packets 1 and 5 (P frames others refer to): their slice data garbled */
    for (unsigned k = 1; k <= 5; k += 4)
        for (size_t i = s->p[k].len / 4; i < s->p[k].len; i += 7)
            bad[s->p[k].pos + i] ^= 0x5a;
    dvpp_vstream_opts_init(&o);
    assert_int_equal(dvpp_vstream_open(&o, NULL, &v, &err), DVPP_OK);
    for (unsigned i = 0; i < s->npackets; i++) {
        dvpp_status st = dvpp_vstream_send(v, bad + s->p[i].pos, s->p[i].len, i, rec_sink,
                                           r, &err);
        if (st != DVPP_OK && st != DVPP_ECORRUPT)
            fail_msg("packet %u: %s (%s)", i, dvpp_status_name(st), err.msg);
        refused += st == DVPP_ECORRUPT;
    }
    assert_int_equal(dvpp_vstream_flush(v, rec_sink, r, &err), DVPP_OK);
    for (unsigned i = 0; i < r->out.n; i++)
        damaged += r->out.f[i].status != DVPP_OK;
    assert_true(refused + damaged > 0);
    assert_true(r->out.n + refused <= s->npackets);
    frames_free(&r->out);
    for (unsigned i = 0; i < s->npackets; i++)
        assert_int_equal(dvpp_vstream_send(v, s->data + s->p[i].pos, s->p[i].len, i, rec_sink,
                                           r, &err),
                         DVPP_OK);
    assert_int_equal(dvpp_vstream_flush(v, rec_sink, r, &err), DVPP_OK);
    assert_same_frames(&r->out, &s->ref, "after the damage");
    frames_free(&r->out);
    dvpp_vstream_close(v);
    free(bad);
    free(r);
}

/* An SPS claiming more than the limits: ELIMIT for its packet before the
 * decoder sees it (no frame, nothing allocated for it); the byte limit. */
static void test_limits_before_decoding(void **state)
{
    const stream *s = &g_s[S264_B];
    dvpp_limits lim = dvpp_limits_default();
    dvpp_vstream *v;
    dvpp_vstream_opts o;
    dvpp_err err;
    feed_rec *r = calloc(1, sizeof(*r));

    (void)state;
    assert_non_null(r);
    dvpp_vstream_opts_init(&o);
    lim.max_pixels = 320 * 240 - 1;
    assert_int_equal(dvpp_vstream_open(&o, &lim, &v, &err), DVPP_OK);
    assert_int_equal(dvpp_vstream_send(v, s->data, s->p[0].len, 0, rec_sink, r, &err),
                     DVPP_ELIMIT);
    assert_string_equal(err.field, "max_pixels");
    assert_int_equal(dvpp_vstream_flush(v, rec_sink, r, &err), DVPP_OK);
    assert_int_equal(r->out.n, 0);
    dvpp_vstream_close(v);

    lim = dvpp_limits_default();
    lim.max_video_bytes = s->p[0].len - 1;
    assert_int_equal(dvpp_vstream_open(&o, &lim, &v, &err), DVPP_OK);
    assert_int_equal(dvpp_vstream_send(v, s->data, s->p[0].len, 0, rec_sink, r, &err),
                     DVPP_ELIMIT);
    assert_string_equal(err.field, "max_video_bytes");
    dvpp_vstream_close(v);
    free(r);
}

/* A sink that fails: its status comes back from the send, the frames after
 * it still come (on later calls), and none is handed out twice. */
static void test_a_failing_sink(void **state)
{
    const stream *s = &g_s[S264_B];
    dvpp_vstream *v;
    dvpp_vstream_opts o;
    dvpp_err err;
    feed_rec *r = calloc(1, sizeof(*r));
    unsigned canceled = 0;

    (void)state;
    assert_non_null(r);
    r->fail_at = 3;
    dvpp_vstream_opts_init(&o);
    assert_int_equal(dvpp_vstream_open(&o, NULL, &v, &err), DVPP_OK);
    for (unsigned i = 0; i < s->npackets; i++) {
        dvpp_status st = dvpp_vstream_send(v, s->data + s->p[i].pos, s->p[i].len, i,
                                           rec_sink, r, &err);
        assert_true(st == DVPP_OK || st == DVPP_ECANCELED);
        canceled += st == DVPP_ECANCELED;
    }
    assert_int_equal(dvpp_vstream_flush(v, rec_sink, r, &err), DVPP_OK);
    assert_int_equal(canceled, 1);
    assert_int_equal(r->out.n, s->ref.n - 1);
    assert_int_equal(dvpp_vstream_frames(v), s->ref.n);
    assert_false(r->index_gap);
    assert_memory_equal(r->out.f[2].data, s->ref.f[3].data, s->ref.f[3].size);
    frames_free(&r->out);
    dvpp_vstream_close(v);
    free(r);
}

static void test_bad_arguments(void **state)
{
    dvpp_vstream *v = (dvpp_vstream *)&v;
    dvpp_vstream_opts o;
    dvpp_err err;
    feed_rec r;
    const uint8_t byte = 0;

    (void)state;
    memset(&r, 0, sizeof(r));
    dvpp_vstream_opts_init(&o);
    o.format = DVPP_PIXEL_RGB;
    assert_int_equal(dvpp_vstream_open(&o, NULL, &v, &err), DVPP_EINVAL);
    assert_null(v);
    assert_string_equal(err.field, "format");
    dvpp_vstream_opts_init(&o);
    o.threads = 65;
    assert_int_equal(dvpp_vstream_open(&o, NULL, &v, &err), DVPP_EINVAL);
    dvpp_vstream_opts_init(&o);
    o.codec = (dvpp_video_codec)7;
    assert_int_equal(dvpp_vstream_open(&o, NULL, &v, &err), DVPP_EINVAL);
    dvpp_vstream_opts_init(&o);
    assert_int_equal(dvpp_vstream_open(&o, NULL, &v, &err), DVPP_OK);
    assert_int_equal(dvpp_vstream_send(v, NULL, 10, 0, rec_sink, &r, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_vstream_send(v, &byte, 0, 0, rec_sink, &r, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_vstream_send(v, &byte, 1, (uint64_t)1 << 63, rec_sink, &r, &err),
                     DVPP_EINVAL);
    assert_string_equal(err.field, "tag");
    /* one byte of nothing: refused or ignored, never a frame */
    dvpp_status st = dvpp_vstream_send(v, &byte, 1, 0, rec_sink, &r, &err);
    assert_true(st == DVPP_OK || st == DVPP_ECORRUPT);
    assert_int_equal(dvpp_vstream_flush(v, rec_sink, &r, &err), DVPP_OK);
    assert_int_equal(r.out.n, 0);
    dvpp_vstream_close(v);
    dvpp_vstream_close(NULL);
}

/* Fail dvpp allocation N = 1, 2, ... until the whole decode succeeds: each
 * failure is ENOMEM with nothing leaked. */
static void test_enomem(void **state)
{
    const stream *s = &g_s[S264_SIZES];
    dvpp_status st = DVPP_ENOMEM;
    bool injected = true;
    size_t nomem = 0;

    (void)state;
    for (size_t n = 1; injected && n < 50; n++) {
        dvpp_vstream_opts o;
        dvpp_vstream *v = NULL;
        dvpp_err err;
        feed_rec *r = calloc(1, sizeof(*r));
        bool frame_failed = false;
        assert_non_null(r);
        dvpp_vstream_opts_init(&o);
        test_alloc_fail_nth(n);
        st = dvpp_vstream_open(&o, NULL, &v, &err);
        for (unsigned i = 0; st == DVPP_OK && i < s->npackets; i++)
            st = dvpp_vstream_send(v, s->data + s->p[i].pos, s->p[i].len, i, rec_sink, r,
                                   &err);
        if (st == DVPP_OK)
            st = dvpp_vstream_flush(v, rec_sink, r, &err);
        injected = test_alloc_injected();
        /* a frame whose image could not be made comes out as ENOMEM */
        for (unsigned i = 0; i < r->out.n; i++)
            frame_failed |= r->out.f[i].status == DVPP_ENOMEM;
        if (injected ? st != DVPP_ENOMEM && !frame_failed : st != DVPP_OK || frame_failed)
            fail_msg("fail at %zu (%s): %s", n, injected ? "injected" : "none injected",
                     dvpp_status_name(st));
        nomem += injected;
        if (!injected)
            assert_same_frames(&r->out, &s->ref, "no failure");
        dvpp_vstream_close(v);
        frames_free(&r->out);
        free(r);
        assert_int_equal(test_alloc()->live, 0);
    }
    assert_int_equal(st, DVPP_OK);
    assert_false(injected);
    assert_true(nomem > 0);
}

#define T_(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_(test_h264_b_frames_match_the_whole_buffer_decoder),
        T_(test_h265_b_frames_match_the_whole_buffer_decoder),
        T_(test_a_size_change_gives_frames_of_each_size),
        T_(test_nv21_matches_the_whole_buffer_decoder),
        T_(test_without_b_frames_each_picture_comes_at_once),
        T_(test_flush_then_the_stream_again),
        T_(test_damaged_packets_are_errors_and_the_decoder_goes_on),
        T_(test_limits_before_decoding),
        T_(test_a_failing_sink),
        T_(test_bad_arguments),
        T_(test_enomem),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
