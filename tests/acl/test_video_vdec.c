/* aclvdec* against libdvpp's whole-buffer decoder (the bytes of dvppctl
 * video-decode and `ffmpeg -pix_fmt nv12`): H.264 and H.265 streams with
 * B frames and an H.264 stream that changes size, made by the ffmpeg
 * command line, cut into access units and sent one per aclvdecSendFrame
 * as a program does, with a report thread looping aclrtProcessReport.
 * Checked: every callback's picture and written-back geometry, one
 * callback per frame in send order on the report thread, EOS (waits, no
 * callback of its own, the channel goes on), destroy waiting, skipped
 * frames, the input consumed at return, failed frames (damaged, output too
 * small: a retCode and not a byte past the buffer, the description
 * reusable), and every error path with its message. */
#include "test_video_common.h"

#include "acl_int.h"

enum { S264_B, S265_B, S264_SIZES, NSTREAMS };

static vstream g_s[NSTREAMS];

/* --- callbacks -------------------------------------------------------------------------- */

typedef struct cb_rec {
    uintptr_t user;
    acldvppStreamDesc *input;
    bool had_output;
    uint32_t ret, width, height, ws, hs, size;
    acldvppPixelFormat format;
    uint8_t *data;                /* a copy of the picture (ret 0) */
    uint64_t thread;
    aclError nested;              /* what a call made inside the callback returned */
} cb_rec;

#define MAX_CB 256

typedef struct cb_log {
    pthread_mutex_t mu;
    unsigned n;
    cb_rec r[MAX_CB];
    unsigned slow_ms;             /* each callback sleeps this long */
    bool free_input;              /* the callback frees its input (as samples do) */
    aclvdecChannelDesc *nest;     /* call EOS / destroy on it inside the callback */
    int nest_kind;                /* 1: EOS, 2: destroy */
} cb_log;

static cb_log g_log;

static void log_reset(void)
{
    for (unsigned i = 0; i < g_log.n; i++)
        free(g_log.r[i].data);
    g_log.n = 0;
    g_log.slow_ms = 0;
    g_log.free_input = true;
    g_log.nest = NULL;
    g_log.nest_kind = 0;
}

static unsigned log_count(void)
{
    unsigned n;

    pthread_mutex_lock(&g_log.mu);
    n = g_log.n;
    pthread_mutex_unlock(&g_log.mu);
    return n;
}

static void vdec_cb(acldvppStreamDesc *input, acldvppPicDesc *output, void *user)
{
    cb_rec r = {.user = (uintptr_t)user, .input = input, .had_output = output != NULL,
                .thread = thread_id_of(pthread_self())};

    if (g_log.slow_ms)
        usleep(g_log.slow_ms * 1000);
    if (output) {
        void *data = acldvppGetPicDescData(output);
        r.ret = acldvppGetPicDescRetCode(output);
        r.width = acldvppGetPicDescWidth(output);
        r.height = acldvppGetPicDescHeight(output);
        r.ws = acldvppGetPicDescWidthStride(output);
        r.hs = acldvppGetPicDescHeightStride(output);
        r.size = acldvppGetPicDescSize(output);
        r.format = acldvppGetPicDescFormat(output);
        if (r.ret == 0 && data && (r.data = malloc(r.size)) != NULL)
            memcpy(r.data, data, r.size);
        acldvppFree(data);
        acldvppDestroyPicDesc(output);
    }
    if (g_log.nest) {
        if (g_log.nest_kind == 1) {
            acldvppStreamDesc *eos = acldvppCreateStreamDesc();
            acldvppSetStreamDescEos(eos, 1);
            r.nested = aclvdecSendFrame(g_log.nest, eos, NULL, NULL, NULL);
            acldvppDestroyStreamDesc(eos);
        } else {
            r.nested = aclvdecDestroyChannel(g_log.nest);
        }
        g_log.nest = NULL;
    }
    if (g_log.free_input)
        vpacket_free(input);
    pthread_mutex_lock(&g_log.mu);
    if (g_log.n < MAX_CB)
        g_log.r[g_log.n++] = r;
    else
        free(r.data);
    pthread_mutex_unlock(&g_log.mu);
}

/* --- channels and frames ----------------------------------------------------------------- */

static aclvdecChannelDesc *open_channel(report_thread *rt, acldvppStreamFormat en,
                                        acldvppPixelFormat fmt)
{
    aclvdecChannelDesc *cd = aclvdecCreateChannelDesc();

    assert_non_null(cd);
    assert_int_equal(aclvdecSetChannelDescChannelId(cd, 3), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescThreadId(cd, thread_id_of(rt->tid)), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescCallback(cd, vdec_cb), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescEnType(cd, en), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescOutPicFormat(cd, fmt), ACL_SUCCESS);
    assert_int_equal(aclvdecCreateChannel(cd), ACL_SUCCESS);
    return cd;
}

static void close_channel(aclvdecChannelDesc *cd)
{
    assert_int_equal(aclvdecDestroyChannel(cd), ACL_SUCCESS);
    assert_int_equal(aclvdecDestroyChannelDesc(cd), ACL_SUCCESS);
}

static acldvppStreamFormat en_of(const vstream *s)
{
    return s->codec == DVPP_VIDEO_H265 ? H265_MAIN_LEVEL : H264_HIGH_LEVEL;
}

/* An output description as "some programs" set it: data, size, format,
 * nothing else. */
static acldvppPicDesc *out_desc(size_t bytes, acldvppPixelFormat fmt)
{
    acldvppPicDesc *d = acldvppCreatePicDesc();

    assert_non_null(d);
    assert_int_equal(acldvppSetPicDescData(d, vmalloc(bytes)), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(d, (uint32_t)bytes), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(d, fmt), ACL_SUCCESS);
    return d;
}

static size_t nv12_bytes(uint32_t w, uint32_t h)
{
    return (size_t)valign(w, 16) * valign(h, 2) * 3 / 2;
}

/* The largest frame of @s. */
static size_t max_frame_bytes(const vstream *s)
{
    size_t m = 0;

    for (unsigned i = 0; i < s->nframes; i++)
        m = s->ref[i].size > m ? s->ref[i].size : m;
    return m;
}

static aclError send_eos(aclvdecChannelDesc *cd)
{
    acldvppStreamDesc *eos = acldvppCreateStreamDesc();
    aclError rc;

    assert_non_null(eos);
    assert_int_equal(acldvppSetStreamDescEos(eos, 1), ACL_SUCCESS);
    rc = aclvdecSendFrame(cd, eos, NULL, NULL, NULL);
    acldvppDestroyStreamDesc(eos);
    return rc;
}

/* Every access unit of @s, userData = its index, then EOS. */
static void send_all(aclvdecChannelDesc *cd, const vstream *s, acldvppPixelFormat fmt)
{
    size_t bytes = max_frame_bytes(s);

    for (unsigned i = 0; i < s->npackets; i++)
        assert_int_equal(aclvdecSendFrame(cd, vpacket(s, i), out_desc(bytes, fmt), NULL,
                                          (void *)(uintptr_t)i),
                         ACL_SUCCESS);
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
}

/* Callback i has frame i of @want (display order) with VDEC's geometry. */
static void assert_frames(const vstream *want, acldvppPixelFormat fmt, uint64_t thread)
{
    assert_int_equal(g_log.n, want->npackets);
    assert_int_equal(want->nframes, want->npackets);
    for (unsigned i = 0; i < g_log.n; i++) {
        const cb_rec *r = &g_log.r[i];
        const vframe *f = &want->ref[i];
        assert_int_equal(r->user, i);
        assert_true(r->had_output);
        assert_int_equal(r->thread, thread);
        if (r->ret != 0)
            fail_msg("callback %u: retCode %u", i, r->ret);
        assert_int_equal(r->width, f->width);
        assert_int_equal(r->height, f->height);
        assert_int_equal(r->ws, valign(f->width, 16));
        assert_int_equal(r->hs, valign(f->height, 2));
        assert_int_equal(r->size, nv12_bytes(f->width, f->height));
        assert_int_equal(r->size, f->size);
        assert_int_equal(r->format, fmt);
        assert_non_null(r->data);
        if (memcmp(r->data, f->data, f->size) != 0)
            fail_msg("callback %u: not the whole-buffer decoder's frame %u", i, i);
    }
}

static void decode_and_compare(int id, acldvppPixelFormat fmt)
{
    vstream *s = &g_s[id];
    report_thread rt;
    aclvdecChannelDesc *cd;

    log_reset();
    if (fmt == PIXEL_FORMAT_YVU_SEMIPLANAR_420)
        assert_int_equal(vstream_reference(s, DVPP_PIXEL_NV21), 0);
    report_start(&rt);
    cd = open_channel(&rt, en_of(s), fmt);
    send_all(cd, s, fmt);
    /* EOS returned: every callback has run */
    assert_frames(s, fmt, thread_id_of(rt.tid));
    close_channel(cd);
    report_stop(&rt);
    assert_int_equal(g_log.n, s->npackets); /* destroy added none */
    if (fmt == PIXEL_FORMAT_YVU_SEMIPLANAR_420)
        assert_int_equal(vstream_reference(s, DVPP_PIXEL_NV12), 0);
    log_reset();
}

/* --- decoding ---------------------------------------------------------------------------- */

static void test_h264_b_frames_in_display_order(void **state)
{
    (void)state;
    decode_and_compare(S264_B, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
}

static void test_h265_b_frames_in_display_order(void **state)
{
    (void)state;
    decode_and_compare(S265_B, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
}

/* A new SPS mid-stream: each picture at its own size, written back into a
 * description that said nothing of it. */
static void test_a_size_change_writes_each_size_back(void **state)
{
    (void)state;
    decode_and_compare(S264_SIZES, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(g_s[S264_SIZES].ref[0].width, 320);
    assert_int_equal(g_s[S264_SIZES].ref[8].width, 160);
}

static void test_nv21_output(void **state)
{
    (void)state;
    decode_and_compare(S264_B, PIXEL_FORMAT_YVU_SEMIPLANAR_420);
}

/* The channel's format says NV12, a description asks NV21: each frame
 * comes in its own description's format. */
static void test_each_description_keeps_its_format(void **state)
{
    vstream *s = &g_s[S264_SIZES];
    report_thread rt;
    aclvdecChannelDesc *cd;
    vstream nv21;

    (void)state;
    log_reset();
    memcpy(&nv21, s, sizeof(nv21));
    nv21.nframes = 0;
    assert_int_equal(vstream_reference(&nv21, DVPP_PIXEL_NV21), 0);
    report_start(&rt);
    cd = open_channel(&rt, H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    for (unsigned i = 0; i < s->npackets; i++)
        assert_int_equal(aclvdecSendFrame(cd, vpacket(s, i),
                                          out_desc(max_frame_bytes(s),
                                                   i % 2 ? PIXEL_FORMAT_YVU_SEMIPLANAR_420
                                                         : PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                                          NULL, (void *)(uintptr_t)i),
                         ACL_SUCCESS);
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_int_equal(g_log.n, s->npackets);
    for (unsigned i = 0; i < g_log.n; i++) {
        const vframe *f = i % 2 ? &nv21.ref[i] : &s->ref[i];
        assert_int_equal(g_log.r[i].format, i % 2 ? PIXEL_FORMAT_YVU_SEMIPLANAR_420
                                                  : PIXEL_FORMAT_YUV_SEMIPLANAR_420);
        assert_int_equal(g_log.r[i].size, f->size);
        assert_memory_equal(g_log.r[i].data, f->data, f->size);
    }
    close_channel(cd);
    report_stop(&rt);
    vstream_free_refs(&nv21);
    log_reset();
}

/* After EOS the channel takes the stream again; EOS with nothing sent is
 * fine; neither EOS nor destroy makes a callback of its own. */
static void test_eos_waits_and_the_channel_goes_on(void **state)
{
    vstream *s = &g_s[S265_B];
    report_thread rt;
    aclvdecChannelDesc *cd;

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, H265_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_int_equal(log_count(), 0);
    g_log.slow_ms = 5; /* callbacks lag: EOS must wait for them */
    send_all(cd, s, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(log_count(), s->npackets);
    assert_frames(s, PIXEL_FORMAT_YUV_SEMIPLANAR_420, thread_id_of(rt.tid));
    log_reset();
    send_all(cd, s, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_frames(s, PIXEL_FORMAT_YUV_SEMIPLANAR_420, thread_id_of(rt.tid));
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_int_equal(log_count(), s->npackets);
    close_channel(cd);
    assert_int_equal(log_count(), s->npackets);
    report_stop(&rt);
    log_reset();
}

/* Destroy right after the sends: when it returns, every callback has run. */
static void test_destroy_waits_for_every_callback(void **state)
{
    vstream *s = &g_s[S264_B];
    report_thread rt;
    aclvdecChannelDesc *cd;

    (void)state;
    log_reset();
    g_log.slow_ms = 10;
    report_start(&rt);
    /* held through the sends, so callbacks are still to come at the
     * destroy however long the sends take */
    report_pause(&rt);
    cd = open_channel(&rt, H264_HIGH_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    for (unsigned i = 0; i < s->npackets; i++)
        assert_int_equal(aclvdecSendFrame(cd, vpacket(s, i),
                                          out_desc(max_frame_bytes(s),
                                                   PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                                          NULL, (void *)(uintptr_t)i),
                         ACL_SUCCESS);
    assert_true(log_count() < s->npackets); /* callbacks are still coming */
    report_resume(&rt);
    assert_int_equal(aclvdecDestroyChannel(cd), ACL_SUCCESS);
    assert_int_equal(log_count(), s->npackets);
    assert_frames(s, PIXEL_FORMAT_YUV_SEMIPLANAR_420, thread_id_of(rt.tid));
    assert_int_equal(aclvdecDestroyChannelDesc(cd), ACL_SUCCESS);
    report_stop(&rt);
    log_reset();
}

/* The input buffer may be reused once aclvdecSendFrame returns: garbage
 * written into it then changes no picture. */
static void test_the_input_is_consumed_at_return(void **state)
{
    vstream *s = &g_s[S264_B];
    report_thread rt;
    aclvdecChannelDesc *cd;
    acldvppStreamDesc *in = acldvppCreateStreamDesc();
    size_t most = 0;
    uint8_t *buf;

    (void)state;
    log_reset();
    g_log.free_input = false;
    for (unsigned i = 0; i < s->npackets; i++)
        most = s->plen[i] > most ? s->plen[i] : most;
    buf = vmalloc(most);
    report_start(&rt);
    cd = open_channel(&rt, H264_HIGH_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    for (unsigned i = 0; i < s->npackets; i++) {
        memcpy(buf, s->data + s->pos[i], s->plen[i]);
        assert_int_equal(acldvppSetStreamDescData(in, buf), ACL_SUCCESS);
        assert_int_equal(acldvppSetStreamDescSize(in, (uint32_t)s->plen[i]), ACL_SUCCESS);
        assert_int_equal(aclvdecSendFrame(cd, in,
                                          out_desc(max_frame_bytes(s),
                                                   PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                                          NULL, (void *)(uintptr_t)i),
                         ACL_SUCCESS);
        memset(buf, 0xA5, most);
    }
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_frames(s, PIXEL_FORMAT_YUV_SEMIPLANAR_420, thread_id_of(rt.tid));
    for (unsigned i = 0; i < g_log.n; i++)
        assert_ptr_equal(g_log.r[i].input, in); /* the same pointer comes back */
    close_channel(cd);
    report_stop(&rt);
    acldvppFree(buf);
    acldvppDestroyStreamDesc(in);
    log_reset();
}

/* A skipped frame is decoded for reference: its callback has output NULL,
 * the other frames are the stream's own. */
static void test_skipped_frames(void **state)
{
    vstream *s = &g_s[S264_SIZES];
    report_thread rt;
    aclvdecChannelDesc *cd;

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    for (unsigned i = 0; i < s->npackets; i++) {
        if (i == 2 || i == 6)
            assert_int_equal(aclvdecSendSkippedFrame(cd, vpacket(s, i), NULL,
                                                     (void *)(uintptr_t)i),
                             ACL_SUCCESS);
        else
            assert_int_equal(aclvdecSendFrame(cd, vpacket(s, i),
                                              out_desc(max_frame_bytes(s),
                                                       PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                                              NULL, (void *)(uintptr_t)i),
                             ACL_SUCCESS);
    }
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_int_equal(g_log.n, s->npackets);
    for (unsigned i = 0; i < g_log.n; i++) {
        const cb_rec *r = &g_log.r[i];
        assert_int_equal(r->user, i);
        if (i == 2 || i == 6) {
            assert_false(r->had_output);
            continue;
        }
        assert_true(r->had_output);
        assert_int_equal(r->ret, 0);
        assert_int_equal(r->size, s->ref[i].size);
        assert_memory_equal(r->data, s->ref[i].data, s->ref[i].size);
    }
    close_channel(cd);
    report_stop(&rt);
    log_reset();
}

/* An output buffer one byte short of the picture: retCode != 0, no
 * picture; a heightStride declared past the rows the buffer holds changes
 * nothing (only the picture's rows are written). */
static void test_a_small_output_is_a_ret_code(void **state)
{
    vstream *s = &g_s[S264_SIZES];
    report_thread rt;
    aclvdecChannelDesc *cd;
    acldvppPicDesc *small, *tall;
    size_t full = nv12_bytes(320, 240);

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    small = out_desc(full - 1, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(acldvppSetPicDescWidth(small, 320), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeight(small, 240), ACL_SUCCESS);
    assert_int_equal(aclvdecSendFrame(cd, vpacket(s, 0), small, NULL, (void *)(uintptr_t)0),
                     ACL_SUCCESS);
    tall = out_desc(full, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(acldvppSetPicDescWidthStride(tall, 320), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeightStride(tall, 256), ACL_SUCCESS);
    assert_int_equal(aclvdecSendFrame(cd, vpacket(s, 1), tall, NULL, (void *)(uintptr_t)1),
                     ACL_SUCCESS);
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_int_equal(g_log.n, 2);
    assert_int_not_equal(g_log.r[0].ret, 0);
    assert_null(g_log.r[0].data);
    assert_int_equal(g_log.r[1].ret, 0);
    assert_int_equal(g_log.r[1].hs, 240);
    assert_memory_equal(g_log.r[1].data, s->ref[1].data, s->ref[1].size);
    close_channel(cd);
    report_stop(&rt);
    log_reset();
}

/* The same, with a description the test keeps: the bytes after the
 * failure, and the description reused after it. */
static aclvdecChannelDesc *g_keep_cd;
static acldvppPicDesc *g_keep_out;
static atomic_uint g_keep_calls;
static uint32_t g_keep_ret[8];

static void keep_cb(acldvppStreamDesc *input, acldvppPicDesc *output, void *user)
{
    unsigned n = atomic_load(&g_keep_calls);

    (void)user;
    assert_ptr_equal(output, g_keep_out);
    if (n < 8)
        g_keep_ret[n] = acldvppGetPicDescRetCode(output);
    vpacket_free(input);
    atomic_store(&g_keep_calls, n + 1);
}

static void test_a_failed_frame_leaves_the_buffer_and_desc_usable(void **state)
{
    vstream *s = &g_s[S264_SIZES];
    report_thread rt;
    size_t full = nv12_bytes(320, 240);
    uint8_t *buf = vmalloc(full + 64);

    (void)state;
    atomic_store(&g_keep_calls, 0);
    memset(buf, 0x3C, full + 64);
    g_keep_out = acldvppCreatePicDesc();
    assert_int_equal(acldvppSetPicDescData(g_keep_out, buf), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(g_keep_out, (uint32_t)full - 2), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(g_keep_out, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                     ACL_SUCCESS);
    report_start(&rt);
    g_keep_cd = aclvdecCreateChannelDesc();
    assert_int_equal(aclvdecSetChannelDescThreadId(g_keep_cd, thread_id_of(rt.tid)),
                     ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescCallback(g_keep_cd, keep_cb), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescEnType(g_keep_cd, H264_MAIN_LEVEL), ACL_SUCCESS);
    assert_int_equal(aclvdecCreateChannel(g_keep_cd), ACL_SUCCESS);
    assert_int_equal(aclvdecSendFrame(g_keep_cd, vpacket(s, 0), g_keep_out, NULL, NULL),
                     ACL_SUCCESS);
    assert_int_equal(send_eos(g_keep_cd), ACL_SUCCESS);
    assert_int_equal(atomic_load(&g_keep_calls), 1);
    assert_int_not_equal(g_keep_ret[0], 0);
    for (size_t i = 0; i < full + 64; i++)
        if (buf[i] != 0x3C)
            fail_msg("byte %zu written by a failed frame", i);
    /* only the retCode was written: format, size and data are the program's */
    assert_int_equal(acldvppGetPicDescFormat(g_keep_out), PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(acldvppGetPicDescSize(g_keep_out), full - 2);
    /* reused with a size that fits: the frame comes (the stream again from
     * its start: after EOS the decoder begins a new one) */
    assert_int_equal(acldvppSetPicDescSize(g_keep_out, (uint32_t)full), ACL_SUCCESS);
    assert_int_equal(aclvdecSendFrame(g_keep_cd, vpacket(s, 0), g_keep_out, NULL, NULL),
                     ACL_SUCCESS);
    assert_int_equal(send_eos(g_keep_cd), ACL_SUCCESS);
    assert_int_equal(atomic_load(&g_keep_calls), 2);
    assert_int_equal(g_keep_ret[1], 0);
    assert_int_equal(acldvppGetPicDescWidth(g_keep_out), 320);
    assert_int_equal(acldvppGetPicDescSize(g_keep_out), full);
    assert_memory_equal(buf, s->ref[0].data, full);
    assert_int_equal(buf[full], 0x3C);
    close_channel(g_keep_cd);
    report_stop(&rt);
    acldvppDestroyPicDesc(g_keep_out);
    acldvppFree(buf);
}

/* A program that destroys an output description while its frame waits
 * for a picture (B frames: the first picture comes two packets later), then
 * makes a new one that malloc puts at the same address: the picture must
 * not land in the new description (which belongs to another frame). Where
 * the address is not reused (the layer still holds the old one, or ASan's
 * quarantine), there is nothing to observe. */
static void test_an_output_destroyed_before_its_picture(void **state)
{
    vstream *s = &g_s[S264_B];
    report_thread rt;
    aclvdecChannelDesc *cd;
    acldvppPicDesc *first, *made[64], *hit = NULL;
    void *first_data;
    size_t bytes = max_frame_bytes(s);
    int n = 0;

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, H264_HIGH_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    first = out_desc(bytes, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    first_data = acldvppGetPicDescData(first);
    assert_int_equal(aclvdecSendFrame(cd, vpacket(s, 0), first, NULL, (void *)(uintptr_t)0),
                     ACL_SUCCESS);
    assert_int_equal(aclvdecSendFrame(cd, vpacket(s, 1),
                                      out_desc(bytes, PIXEL_FORMAT_YUV_SEMIPLANAR_420), NULL,
                                      (void *)(uintptr_t)1),
                     ACL_SUCCESS);
    /* wait until packet 1 has been decoded (no picture yet: the stream lags) */
    usleep(200 * 1000);
    assert_int_equal(log_count(), 0);
    assert_int_equal(acldvppDestroyPicDesc(first), ACL_SUCCESS);
    while (n < 64 && !hit) {
        made[n] = acldvppCreatePicDesc();
        assert_non_null(made[n]);
        if (made[n] == first)
            hit = made[n];
        n++;
    }
    for (int i = 0; i < n; i++)
        if (made[i] != hit)
            assert_int_equal(acldvppDestroyPicDesc(made[i]), ACL_SUCCESS);
    if (hit) {
        /* a description of the program's own, reset to "nothing written" */
        assert_int_equal(acldvppSetPicDescFormat(hit, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                         ACL_SUCCESS);
        assert_int_equal(acldvppSetPicDescRetCode(hit, 77), ACL_SUCCESS);
    }
    g_log.free_input = true;
    for (unsigned i = 2; i < s->npackets; i++)
        assert_int_equal(aclvdecSendFrame(cd, vpacket(s, i),
                                          out_desc(bytes, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                                          NULL, (void *)(uintptr_t)i),
                         ACL_SUCCESS);
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_int_equal(log_count(), s->npackets);
    if (hit) {
        if (acldvppGetPicDescRetCode(hit) != 77 || acldvppGetPicDescWidth(hit) != 0)
            fail_msg("a frame's picture went into a description made after it was "
                     "destroyed: retCode %u, %ux%u", acldvppGetPicDescRetCode(hit),
                     acldvppGetPicDescWidth(hit), acldvppGetPicDescHeight(hit));
        assert_int_equal(acldvppDestroyPicDesc(hit), ACL_SUCCESS);
    }
    for (unsigned i = 1; i < g_log.n; i++)
        assert_memory_equal(g_log.r[i].data, s->ref[i].data, s->ref[i].size);
    close_channel(cd);
    report_stop(&rt);
    acldvppFree(first_data);
    log_reset();
}

/* A damaged packet: its frame's callback comes with retCode != 0, every
 * frame still gets exactly one, and a clean stream after EOS decodes. */
static void test_a_damaged_frame_gets_its_callback(void **state)
{
    vstream *s = &g_s[S264_B];
    report_thread rt;
    aclvdecChannelDesc *cd;
    unsigned failed = 0;

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, H264_HIGH_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    for (unsigned i = 0; i < s->npackets; i++) {
        acldvppStreamDesc *in = vpacket(s, i);
        if (i == 1 || i == 5) {
            uint8_t *p = acldvppGetStreamDescData(in);
            for (size_t k = s->plen[i] / 4; k < s->plen[i]; k += 7)
                p[k] ^= 0x5a;
        }
        assert_int_equal(aclvdecSendFrame(cd, in,
                                          out_desc(max_frame_bytes(s),
                                                   PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                                          NULL, (void *)(uintptr_t)i),
                         ACL_SUCCESS);
    }
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_int_equal(g_log.n, s->npackets);
    for (unsigned i = 0; i < g_log.n; i++) {
        assert_int_equal(g_log.r[i].user, i);
        failed += g_log.r[i].ret != 0;
    }
    assert_true(failed > 0);
    log_reset();
    send_all(cd, s, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_frames(s, PIXEL_FORMAT_YUV_SEMIPLANAR_420, thread_id_of(rt.tid));
    close_channel(cd);
    report_stop(&rt);
    log_reset();
}

/* EOS or destroy on the report thread, inside a callback, would wait for
 * itself: both fail at once with a message, and the channel stays usable. */
static void nested_call(int kind)
{
    vstream *s = &g_s[S264_SIZES];
    report_thread rt;
    aclvdecChannelDesc *cd;

    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    g_log.nest = cd;
    g_log.nest_kind = kind;
    send_all(cd, s, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(g_log.n, s->npackets);
    assert_int_equal(g_log.r[0].nested, ACL_ERROR_INVALID_PARAM);
    assert_frames(s, PIXEL_FORMAT_YUV_SEMIPLANAR_420, thread_id_of(rt.tid));
    close_channel(cd);
    report_stop(&rt);
    log_reset();
}

static void test_eos_on_the_callback_thread_fails(void **state)
{
    (void)state;
    nested_call(1);
}

static void test_destroy_on_the_callback_thread_fails(void **state)
{
    (void)state;
    nested_call(2);
}

/* A ThreadId whose thread never calls aclrtProcessReport: EOS gives up
 * with ACL_ERROR_WAIT_CALLBACK_TIMEOUT once no callback ran for
 * DVPP_ACL_CALLBACK_TIMEOUT_MS; when the thread starts reporting, the
 * callback runs and the channel is destroyed normally. */
static void test_a_thread_that_never_reports_times_out(void **state)
{
    vstream *s = &g_s[S264_SIZES];
    report_thread rt;
    aclvdecChannelDesc *cd;
    struct timespec t0, t1;
    double ms;

    (void)state;
    log_reset();
    setenv("DVPP_ACL_CALLBACK_TIMEOUT_MS", "300", 1);
    atomic_init(&rt.paused, true);
    atomic_init(&rt.held, false);
    atomic_init(&rt.stop, false);
    assert_int_equal(pthread_create(&rt.tid, NULL, report_main, &rt), 0);
    cd = open_channel(&rt, H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    unsetenv("DVPP_ACL_CALLBACK_TIMEOUT_MS");
    assert_int_equal(aclvdecSendFrame(cd, vpacket(s, 0),
                                      out_desc(max_frame_bytes(s),
                                               PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                                      NULL, NULL),
                     ACL_SUCCESS);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    VFAIL(send_eos(cd), ACL_ERROR_WAIT_CALLBACK_TIMEOUT);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    vexpect_message("aclrtProcessReport");
    ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_true(ms >= 250 && ms < 5000);
    assert_int_equal(log_count(), 0);
    report_resume(&rt);
    close_channel(cd);
    assert_int_equal(log_count(), 1);
    report_stop(&rt);
    log_reset();
}

/* --- bad input ------------------------------------------------------------------------------ */

static void test_create_needs_a_callback_and_a_thread(void **state)
{
    aclvdecChannelDesc *cd = aclvdecCreateChannelDesc();

    (void)state;
    VFAIL(aclvdecCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    vexpect_message("callback");
    assert_int_equal(aclvdecSetChannelDescCallback(cd, vdec_cb), ACL_SUCCESS);
    VFAIL(aclvdecCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    vexpect_message("ThreadId");
    VFAIL(aclvdecCreateChannel(NULL), ACL_ERROR_INVALID_PARAM);
    /* not created: sends and destroy are refused */
    VFAIL(aclvdecSendFrame(cd, NULL, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("not created");
    VFAIL(aclvdecDestroyChannel(cd), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvdecDestroyChannelDesc(cd), ACL_SUCCESS);
    /* destroyed: every call refuses it, getters give defaults */
    VFAIL(aclvdecSetChannelDescOutMode(cd, 0), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvdecCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvdecGetChannelDescOutPicFormat(cd), PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(aclvdecDestroyChannelDesc(NULL), ACL_SUCCESS);
    VFAIL(aclvdecDestroyChannelDesc(cd), ACL_ERROR_INVALID_PARAM);
}

static void test_send_frame_errors(void **state)
{
    vstream *s = &g_s[S264_SIZES];
    report_thread rt;
    aclvdecChannelDesc *cd;
    acldvppStreamDesc *in, *empty = acldvppCreateStreamDesc();
    acldvppPicDesc *out, *rgb, *nodata = acldvppCreatePicDesc();
    aclvdecFrameConfig *cfg = aclvdecCreateFrameConfig();
    void *tiny = vmalloc(8);

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    VFAIL(aclvdecCreateChannel(cd), ACL_ERROR_INVALID_PARAM); /* twice */
    in = vpacket(s, 0);
    out = out_desc(max_frame_bytes(s), PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    VFAIL(aclvdecSendFrame(NULL, in, out, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvdecSendFrame(cd, NULL, out, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("input");
    VFAIL(aclvdecSendFrame(cd, in, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("output");
    VFAIL(aclvdecSendFrame(cd, in, nodata, NULL, NULL), ACL_ERROR_FORMAT_NOT_MATCH);
    assert_int_equal(acldvppSetPicDescFormat(nodata, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                     ACL_SUCCESS);
    VFAIL(aclvdecSendFrame(cd, in, nodata, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("no data");
    rgb = out_desc(max_frame_bytes(s), PIXEL_FORMAT_RGB_888);
    VFAIL(aclvdecSendFrame(cd, in, rgb, NULL, NULL), ACL_ERROR_FORMAT_NOT_MATCH);
    vexpect_message("out format 12");
    VFAIL(aclvdecSendFrame(cd, in, out, (aclvdecFrameConfig *)empty, NULL),
          ACL_ERROR_INVALID_PARAM);
    /* no bytes: only an EOS may be empty */
    VFAIL(aclvdecSendFrame(cd, empty, out, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("no data");
    /* a size past the buffer's bytes */
    assert_int_equal(acldvppSetStreamDescData(empty, tiny), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescSize(empty, 4096), ACL_SUCCESS);
    VFAIL(aclvdecSendFrame(cd, empty, out, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("past the");
    /* EOS as a skipped frame */
    assert_int_equal(acldvppSetStreamDescEos(empty, 1), ACL_SUCCESS);
    VFAIL(aclvdecSendSkippedFrame(cd, empty, NULL, NULL), ACL_ERROR_FEATURE_UNSUPPORTED);
    VFAIL(aclvdecSendSkippedFrame(cd, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvdecSendSkippedFrame(NULL, in, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    /* nothing above made a callback; a good frame with a config does */
    assert_int_equal(aclvdecSendFrame(cd, in, out, cfg, (void *)(uintptr_t)7), ACL_SUCCESS);
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_int_equal(g_log.n, 1);
    assert_int_equal(g_log.r[0].user, 7);
    assert_int_equal(g_log.r[0].ret, 0);
    close_channel(cd);
    report_stop(&rt);
    acldvppDestroyPicDesc(nodata);
    acldvppFree(acldvppGetPicDescData(rgb));
    acldvppDestroyPicDesc(rgb);
    acldvppFree(tiny);
    acldvppDestroyStreamDesc(empty);
    assert_int_equal(aclvdecDestroyFrameConfig(cfg), ACL_SUCCESS);
    VFAIL(aclvdecDestroyFrameConfig(cfg), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvdecDestroyFrameConfig(NULL), ACL_SUCCESS);
    log_reset();
}

/* Every field's setter and getter, and the parameter API with its length
 * checks, under ascend310's rules. */
static void test_channel_desc_fields_310(void **state)
{
    aclvdecChannelDesc *cd = aclvdecCreateChannelDesc();
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    size_t ret = 0;
    aclvdecCallback cb = NULL;

    (void)state;
    /* defaults */
    assert_int_equal(aclvdecGetChannelDescChannelId(cd), 0);
    assert_int_equal(aclvdecGetChannelDescEnType(cd), H265_MAIN_LEVEL);
    assert_int_equal(aclvdecGetChannelDescOutPicFormat(cd), PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_null(aclvdecGetChannelDescCallback(cd));
    assert_int_equal(aclvdecGetChannelDescOutMode(cd), 0);
    assert_int_equal(aclvdecGetChannelDescThreadId(NULL), 0);
    assert_int_equal(aclvdecGetChannelDescEnType(NULL), H265_MAIN_LEVEL);
    /* ranges */
    assert_int_equal(aclvdecSetChannelDescChannelId(cd, 31), ACL_SUCCESS);
    VFAIL(aclvdecSetChannelDescChannelId(cd, 32), ACL_ERROR_INVALID_PARAM);
    vexpect_message("[0, 31]");
    assert_int_equal(aclvdecGetChannelDescChannelId(cd), 31);
    VFAIL(aclvdecSetChannelDescOutMode(cd, 2), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvdecSetChannelDescOutMode(cd, 1), ACL_SUCCESS);
    assert_int_equal(aclvdecGetChannelDescOutMode(cd), 1);
    VFAIL(aclvdecSetChannelDescRefFrameNum(cd, 4), ACL_ERROR_FEATURE_UNSUPPORTED);
    vexpect_message("ascend310");
    VFAIL(aclvdecSetChannelDescEnType(cd, (acldvppStreamFormat)4), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvdecSetChannelDescEnType(cd, H264_BASELINE_LEVEL), ACL_SUCCESS);
    assert_int_equal(aclvdecGetChannelDescEnType(cd), H264_BASELINE_LEVEL);
    VFAIL(aclvdecSetChannelDescOutPicFormat(cd, PIXEL_FORMAT_RGB_888),
          ACL_ERROR_FORMAT_NOT_MATCH);
    assert_int_equal(aclvdecSetChannelDescOutPicFormat(cd, PIXEL_FORMAT_YVU_SEMIPLANAR_420),
                     ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescOutPicWidth(cd, 640), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescOutPicHeight(cd, 480), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescBitDepth(cd, 1), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescThreadId(cd, 12345), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescCallback(cd, vdec_cb), ACL_SUCCESS);
    assert_int_equal(aclvdecGetChannelDescOutPicWidth(cd), 640);
    assert_int_equal(aclvdecGetChannelDescOutPicHeight(cd), 480);
    assert_int_equal(aclvdecGetChannelDescBitDepth(cd), 1);
    assert_int_equal(aclvdecGetChannelDescThreadId(cd), 12345);
    assert_ptr_equal(aclvdecGetChannelDescCallback(cd), vdec_cb);
    VFAIL(aclvdecSetChannelDescChannelId(NULL, 1), ACL_ERROR_INVALID_PARAM);
    /* the parameter API: the same values, sizes checked */
    assert_int_equal(aclvdecGetChannelDescParam(cd, ACL_VDEC_CHANNEL_ID_UINT32, 4, &ret, &u32),
                     ACL_SUCCESS);
    assert_int_equal(ret, 4);
    assert_int_equal(u32, 31);
    assert_int_equal(aclvdecGetChannelDescParam(cd, ACL_VDEC_THREAD_ID_UINT64, 8, &ret, &u64),
                     ACL_SUCCESS);
    assert_int_equal(ret, 8);
    assert_int_equal(u64, 12345);
    assert_int_equal(aclvdecGetChannelDescParam(cd, ACL_VDEC_CALLBACK_PTR, sizeof(cb), &ret,
                                                &cb),
                     ACL_SUCCESS);
    assert_ptr_equal(cb, vdec_cb);
    VFAIL(aclvdecGetChannelDescParam(cd, ACL_VDEC_THREAD_ID_UINT64, 4, &ret, &u64),
          ACL_ERROR_INVALID_PARAM);
    vexpect_message("takes 8 bytes");
    u32 = 2;
    assert_int_equal(aclvdecSetChannelDescParam(cd, ACL_VDEC_ENCODE_TYPE_UINT32, 4, &u32),
                     ACL_SUCCESS);
    assert_int_equal(aclvdecGetChannelDescEnType(cd), H264_MAIN_LEVEL);
    VFAIL(aclvdecSetChannelDescParam(cd, ACL_VDEC_ENCODE_TYPE_UINT32, 8, &u64),
          ACL_ERROR_INVALID_PARAM);
    u32 = 40;
    VFAIL(aclvdecSetChannelDescParam(cd, ACL_VDEC_CHANNEL_ID_UINT32, 4, &u32),
          ACL_ERROR_INVALID_PARAM);
    u32 = 3;
    assert_int_equal(aclvdecSetChannelDescParam(cd, ACL_VDEC_CSC_MATRIX_UINT32, 4, &u32),
                     ACL_SUCCESS);
    assert_int_equal(aclvdecGetChannelDescParam(cd, ACL_VDEC_CSC_MATRIX_UINT32, 4, &ret, &u32),
                     ACL_SUCCESS);
    assert_int_equal(u32, 3);
    u32 = 6;
    VFAIL(aclvdecSetChannelDescParam(cd, ACL_VDEC_CSC_MATRIX_UINT32, 4, &u32),
          ACL_ERROR_INVALID_PARAM);
    u32 = 4;
    VFAIL(aclvdecSetChannelDescParam(cd, ACL_VDEC_REF_FRAME_NUM_UINT32, 4, &u32),
          ACL_ERROR_FEATURE_UNSUPPORTED);
    u32 = 2;
    VFAIL(aclvdecSetChannelDescParam(cd, ACL_VDEC_OUT_MODE_UINT32, 4, &u32),
          ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvdecSetChannelDescParam(cd, (aclvdecChannelDescParamType)99, 4, &u32),
          ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvdecSetChannelDescParam(cd, ACL_VDEC_OUT_MODE_UINT32, 4, NULL),
          ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvdecGetChannelDescParam(cd, ACL_VDEC_OUT_MODE_UINT32, 4, NULL, &u32),
          ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvdecGetChannelDescParam(NULL, ACL_VDEC_OUT_MODE_UINT32, 4, &ret, &u32),
          ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvdecDestroyChannelDesc(cd), ACL_SUCCESS);
}

/* --- ascend310p ---------------------------------------------------------------------------- */

static void test_h265_on_310p(void **state)
{
    (void)state;
    decode_and_compare(S265_B, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
}

static void test_channel_desc_fields_310p(void **state)
{
    aclvdecChannelDesc *cd = aclvdecCreateChannelDesc();
    uint32_t u32 = 8;

    (void)state;
    assert_int_equal(aclvdecSetChannelDescChannelId(cd, 255), ACL_SUCCESS);
    VFAIL(aclvdecSetChannelDescChannelId(cd, 256), ACL_ERROR_INVALID_PARAM);
    vexpect_message("[0, 255]");
    assert_int_equal(aclvdecSetChannelDescRefFrameNum(cd, 16), ACL_SUCCESS);
    assert_int_equal(aclvdecGetChannelDescRefFrameNum(cd), 16);
    VFAIL(aclvdecSetChannelDescRefFrameNum(cd, 17), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvdecSetChannelDescParam(cd, ACL_VDEC_REF_FRAME_NUM_UINT32, 4, &u32),
                     ACL_SUCCESS);
    assert_int_equal(aclvdecGetChannelDescRefFrameNum(cd), 8);
    assert_int_equal(aclvdecDestroyChannelDesc(cd), ACL_SUCCESS);
}

/* A channel the program never destroyed goes with its description. */
static void test_destroying_the_desc_destroys_its_channel(void **state)
{
    vstream *s = &g_s[S264_SIZES];
    report_thread rt;
    aclvdecChannelDesc *cd;

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(aclvdecSendFrame(cd, vpacket(s, 0),
                                      out_desc(max_frame_bytes(s),
                                               PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                                      NULL, NULL),
                     ACL_SUCCESS);
    assert_int_equal(aclvdecDestroyChannelDesc(cd), ACL_SUCCESS);
    assert_int_equal(log_count(), 1);
    report_stop(&rt);
    log_reset();
}

/* ---------------------------------------------------------------------------------------- */

static int setup_310(void **state)
{
    (void)state;
    return venv_up("ascend310");
}

static int setup_310p(void **state)
{
    (void)state;
    return venv_up("ascend310p");
}

static int teardown(void **state)
{
    (void)state;
    return venv_down();
}

int main(void)
{
    /* B frames: the decoder reorders; sizes: a new SPS mid-stream */
    static const char *const b264[] = {
        "testsrc2=size=320x240:rate=25 -frames:v 24 -pix_fmt yuv420p -c:v libx264 -bf 2 "
        "-g 12 -x264-params threads=1"};
    static const char *const b265[] = {
        "testsrc2=size=256x192:rate=25 -frames:v 20 -pix_fmt yuv420p -c:v libx265 "
        "-x265-params bframes=2:keyint=10:log-level=error:pools=1:frame-threads=1"};
    static const char *const sizes[] = {
        "testsrc2=size=320x240:rate=25 -frames:v 5 -pix_fmt yuv420p -c:v libx264 "
        "-preset ultrafast -x264-params threads=1",
        "testsrc2=size=160x128:rate=25 -frames:v 4 -pix_fmt yuv420p -c:v libx264 "
        "-preset ultrafast -x264-params threads=1"};
    const struct CMUnitTest t310[] = {
        cmocka_unit_test(test_h264_b_frames_in_display_order),
        cmocka_unit_test(test_h265_b_frames_in_display_order),
        cmocka_unit_test(test_a_size_change_writes_each_size_back),
        cmocka_unit_test(test_nv21_output),
        cmocka_unit_test(test_each_description_keeps_its_format),
        cmocka_unit_test(test_eos_waits_and_the_channel_goes_on),
        cmocka_unit_test(test_destroy_waits_for_every_callback),
        cmocka_unit_test(test_the_input_is_consumed_at_return),
        cmocka_unit_test(test_skipped_frames),
        cmocka_unit_test(test_a_small_output_is_a_ret_code),
        cmocka_unit_test(test_a_failed_frame_leaves_the_buffer_and_desc_usable),
        cmocka_unit_test(test_an_output_destroyed_before_its_picture),
        cmocka_unit_test(test_a_damaged_frame_gets_its_callback),
        cmocka_unit_test(test_eos_on_the_callback_thread_fails),
        cmocka_unit_test(test_destroy_on_the_callback_thread_fails),
        cmocka_unit_test(test_a_thread_that_never_reports_times_out),
        cmocka_unit_test(test_create_needs_a_callback_and_a_thread),
        cmocka_unit_test(test_send_frame_errors),
        cmocka_unit_test(test_channel_desc_fields_310),
    };
    const struct CMUnitTest t310p[] = {
        cmocka_unit_test(test_h265_on_310p),
        cmocka_unit_test(test_channel_desc_fields_310p),
        cmocka_unit_test(test_destroying_the_desc_destroys_its_channel),
    };
    int failed;

    pthread_mutex_init(&g_log.mu, NULL);
    if (vstream_make(&g_s[S264_B], "b.h264", DVPP_VIDEO_H264, b264, 1) != 0 ||
        vstream_make(&g_s[S265_B], "b.h265", DVPP_VIDEO_H265, b265, 1) != 0 ||
        vstream_make(&g_s[S264_SIZES], "sizes.h264", DVPP_VIDEO_H264, sizes, 2) != 0) {
        fprintf(stderr, "cannot make the test streams (ffmpeg, a test dependency)\n");
        vdir_remove();
        return 1;
    }
    failed = cmocka_run_group_tests_name("ascend310", t310, setup_310, teardown);
    failed += cmocka_run_group_tests_name("ascend310p", t310p, setup_310p, teardown);
    for (int k = 0; k < NSTREAMS; k++)
        vstream_free(&g_s[k]);
    log_reset();
    vdir_remove();
    return failed;
}
