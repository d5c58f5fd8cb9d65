/* aclvenc* against `dvppctl video-encode --low-delay` (libdvpp's encoder,
 * in another process) with the same frames and parameters: the callbacks'
 * packets, concatenated, are its bytes. Also: one callback per frame in
 * send order on the report thread, the output description valid in the
 * callback and destroyed after it, ForceIFrame visible in the stream (the
 * NAL unit types of each packet), the GOP, EOS (waits, no callback of its
 * own, then a new stream), destroy waiting, an over-declared heightStride
 * (only the bytes there are read), the size rules of the reference, every
 * field and parameter, and ascend310p's own rules (BufAddr/BufSize, rate
 * ranges, the VBR default). */
#include "test_video_common.h"

#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>

#define T 20

/* --- frames -------------------------------------------------------------------------- */

static uint32_t g_seed;

static uint32_t lcg(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 24;
}

/* @t frames of @w x @h, tight NV12 (or NV21: the chroma pairs swapped),
 * moving gradients with a little noise. */
static uint8_t *make_frames(uint32_t w, uint32_t h, bool nv21)
{
    size_t one = (size_t)w * h * 3 / 2;
    uint8_t *f = malloc(one * T);

    assert_non_null(f);
    g_seed = 99;
    for (unsigned n = 0; n < T; n++) {
        uint8_t *y = f + n * one, *uv = y + (size_t)w * h;
        for (uint32_t r = 0; r < h; r++)
            for (uint32_t c = 0; c < w; c++)
                y[r * w + c] = (uint8_t)(((c + 4 * n) * 3 + r) % 200 + 20 + lcg() % 5);
        for (uint32_t r = 0; r < h / 2; r++)
            for (uint32_t c = 0; c < w / 2; c++) {
                uint8_t u = (uint8_t)(90 + (r + n) % 60), v = (uint8_t)(160 - c % 50);
                uv[r * w + 2 * c] = nv21 ? v : u;
                uv[r * w + 2 * c + 1] = nv21 ? u : v;
            }
    }
    return f;
}

/* The frames as the .npy dvppctl video-encode reads: T x rows x stride. */
static void write_npy(const char *path, const uint8_t *f, uint32_t w, uint32_t h)
{
    char hdr[128];
    int n = snprintf(hdr, sizeof(hdr), "{'descr': '|u1', 'fortran_order': False, "
                     "'shape': (%d, %u, %u), }", T, h * 3 / 2, w);
    size_t total = 10 + (size_t)n + 1, pad = (64 - total % 64) % 64;
    FILE *o = fopen(path, "wb");
    uint16_t hl = (uint16_t)(n + 1 + pad);

    assert_non_null(o);
    fwrite("\x93NUMPY\x01\x00", 1, 8, o);
    fputc(hl & 0xff, o);
    fputc(hl >> 8, o);
    fwrite(hdr, 1, (size_t)n, o);
    for (size_t i = 0; i < pad; i++)
        fputc(' ', o);
    fputc('\n', o);
    fwrite(f, 1, (size_t)w * h * 3 / 2 * T, o);
    fclose(o);
}

/* dvppctl beside this test binary (<build>/tests/acl/ -> <build>/dvppctl). */
static const char *dvppctl(void)
{
    static char path[PATH_MAX];
    char exe[PATH_MAX];
    ssize_t n;

    if (path[0])
        return path;
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    snprintf(path, sizeof(path), "%s/../../dvppctl", dirname(exe));
    if (access(path, X_OK) != 0)
        fail_msg("%s is not built (make)", path);
    return path;
}

/* The stream dvppctl makes of @frames with @flags. */
static uint8_t *ctl_encode(const uint8_t *frames, uint32_t w, uint32_t h, bool nv21,
                           const char *flags, size_t *len)
{
    char npy[256], out[256], cmd[PATH_MAX + 1024];
    const char *runner;
    uint8_t *d;
    int n;

    snprintf(npy, sizeof(npy), "%s/frames.npy", vdir());
    snprintf(out, sizeof(out), "%s/ctl.264", vdir());
    write_npy(npy, frames, w, h);
    /* DVPP_UNIT_RUNNER: this build's dvppctl runs under the same emulator
     * as the test (make test-arm64: qemu-aarch64, no binfmt needed). */
    runner = getenv("DVPP_UNIT_RUNNER");
    n = snprintf(cmd, sizeof(cmd), "%s '%s' video-encode '%s' --input %s:%ux%u --low-delay %s "
                 "-o '%s' > /dev/null", runner ? runner : "", dvppctl(), npy,
                 nv21 ? "nv21" : "nv12", w, h, flags, out);
    assert_true(n > 0 && (size_t)n < sizeof(cmd));
    assert_int_equal(vrun(cmd), 0);
    d = vread_file(out, len);
    assert_non_null(d);
    return d;
}

/* --- callbacks ------------------------------------------------------------------------ */

typedef struct venc_log {
    pthread_mutex_t mu;
    unsigned n;
    uintptr_t user[64];
    uint32_t ret[64];
    size_t off[64], len[64];      /* each packet in @bytes */
    const void *data[64];         /* where it was (the area) */
    acldvppStreamDesc *desc[64];
    acldvppPicDesc *input[64];
    uint64_t thread[64];
    uint8_t *bytes;
    size_t total, cap;
    unsigned slow_ms;
    aclvencChannelDesc *nest;     /* EOS on it inside the callback */
    aclError nested;
} venc_log;

static venc_log g_log;

static void log_reset(void)
{
    free(g_log.bytes);
    g_log.bytes = NULL;
    g_log.total = g_log.cap = 0;
    g_log.n = 0;
    g_log.slow_ms = 0;
    g_log.nest = NULL;
    g_log.nested = 0;
}

static unsigned log_count(void)
{
    unsigned n;

    pthread_mutex_lock(&g_log.mu);
    n = g_log.n;
    pthread_mutex_unlock(&g_log.mu);
    return n;
}

static void venc_cb(acldvppPicDesc *input, acldvppStreamDesc *output, void *user)
{
    uint32_t size = acldvppGetStreamDescSize(output);
    const void *data = acldvppGetStreamDescData(output);
    unsigned i;

    if (g_log.slow_ms)
        usleep(g_log.slow_ms * 1000);
    if (g_log.nest) {
        aclvencFrameConfig *c = aclvencCreateFrameConfig();
        aclvencSetFrameConfigEos(c, 1);
        g_log.nested = aclvencSendFrame(g_log.nest, NULL, NULL, c, NULL);
        aclvencDestroyFrameConfig(c);
        g_log.nest = NULL;
    }
    pthread_mutex_lock(&g_log.mu);
    i = g_log.n;
    if (i < 64) {
        g_log.user[i] = (uintptr_t)user;
        g_log.ret[i] = acldvppGetStreamDescRetCode(output);
        g_log.data[i] = data;
        g_log.desc[i] = output;
        g_log.input[i] = input;
        g_log.thread[i] = thread_id_of(pthread_self());
        g_log.off[i] = g_log.total;
        g_log.len[i] = size;
        if (g_log.total + size > g_log.cap) {
            g_log.cap = (g_log.total + size) * 2;
            g_log.bytes = realloc(g_log.bytes, g_log.cap);
        }
        if (size && data)
            memcpy(g_log.bytes + g_log.total, data, size);
        g_log.total += size;
        g_log.n++;
    }
    pthread_mutex_unlock(&g_log.mu);
}

/* NAL unit types in an Annex-B packet (H.264: 5 IDR, 7 SPS; H.265: 19/20
 * IDR, 33 SPS). */
static bool has_nal(const uint8_t *p, size_t n, bool hevc, int type1, int type2)
{
    for (size_t i = 0; i + 3 < n; i++)
        if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1) {
            int t = hevc ? (p[i + 3] >> 1) & 0x3f : p[i + 3] & 0x1f;
            if (t == type1 || t == type2)
                return true;
        }
    return false;
}

static bool packet_is_idr(unsigned i, bool hevc)
{
    return has_nal(g_log.bytes + g_log.off[i], g_log.len[i], hevc, hevc ? 19 : 5,
                   hevc ? 20 : 5);
}

/* --- channels ------------------------------------------------------------------------- */

typedef struct venc_params {
    acldvppStreamFormat en;
    acldvppPixelFormat fmt;
    uint32_t w, h, gop, rc, fps, kbps;
} venc_params;

static aclvencChannelDesc *open_channel(const report_thread *rt, const venc_params *p)
{
    aclvencChannelDesc *cd = aclvencCreateChannelDesc();

    assert_non_null(cd);
    assert_int_equal(aclvencSetChannelDescThreadId(cd, thread_id_of(rt->tid)), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescCallback(cd, venc_cb), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescEnType(cd, p->en), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicFormat(cd, p->fmt), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicWidth(cd, p->w), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicHeight(cd, p->h), ACL_SUCCESS);
    if (p->gop)
        assert_int_equal(aclvencSetChannelDescKeyFrameInterval(cd, p->gop), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescRcMode(cd, p->rc), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescSrcRate(cd, p->fps), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescMaxBitRate(cd, p->kbps), ACL_SUCCESS);
    assert_int_equal(aclvencCreateChannel(cd), ACL_SUCCESS);
    return cd;
}

static void close_channel(aclvencChannelDesc *cd)
{
    assert_int_equal(aclvencDestroyChannel(cd), ACL_SUCCESS);
    assert_int_equal(aclvencDestroyChannelDesc(cd), ACL_SUCCESS);
}

static aclError send_eos(aclvencChannelDesc *cd)
{
    aclvencFrameConfig *c = aclvencCreateFrameConfig();
    aclError rc;

    assert_int_equal(aclvencSetFrameConfigEos(c, 1), ACL_SUCCESS);
    rc = aclvencSendFrame(cd, NULL, NULL, c, NULL);
    assert_int_equal(aclvencDestroyFrameConfig(c), ACL_SUCCESS);
    return rc;
}

/* An input description of frame @n of @frames, in its own DVPP buffer of
 * exactly @size bytes, declared with @hs rows (0: not set). */
static acldvppPicDesc *in_desc(const uint8_t *frames, unsigned n, const venc_params *p,
                               uint32_t hs)
{
    size_t one = (size_t)p->w * p->h * 3 / 2;
    acldvppPicDesc *d = acldvppCreatePicDesc();
    void *buf = vmalloc(one);

    memcpy(buf, frames + n * one, one);
    assert_int_equal(acldvppSetPicDescData(d, buf), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(d, (uint32_t)one), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(d, p->fmt), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidth(d, p->w), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeight(d, p->h), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidthStride(d, p->w), ACL_SUCCESS);
    if (hs)
        assert_int_equal(acldvppSetPicDescHeightStride(d, hs), ACL_SUCCESS);
    return d;
}

/* The program frees its input as soon as the send returns (consumed). */
static void in_free(acldvppPicDesc *d)
{
    assert_int_equal(acldvppFree(acldvppGetPicDescData(d)), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyPicDesc(d), ACL_SUCCESS);
}

/* Every frame (IDR forced on @idr, -1: none), then EOS. */
static void encode_all(aclvencChannelDesc *cd, const uint8_t *frames, const venc_params *p,
                       int idr, uint32_t hs)
{
    aclvencFrameConfig *c = aclvencCreateFrameConfig();

    for (unsigned i = 0; i < T; i++) {
        acldvppPicDesc *d = in_desc(frames, i, p, hs);
        assert_int_equal(aclvencSetFrameConfigForceIFrame(c, (int)i == idr), ACL_SUCCESS);
        assert_int_equal(aclvencSendFrame(cd, d, NULL, c, (void *)(uintptr_t)i), ACL_SUCCESS);
        in_free(d);
    }
    assert_int_equal(aclvencDestroyFrameConfig(c), ACL_SUCCESS);
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
}

/* One good callback per frame, in order, on the report thread, each
 * description gone after its callback. */
static void assert_callbacks(const report_thread *rt)
{
    assert_int_equal(log_count(), T);
    for (unsigned i = 0; i < T; i++) {
        assert_int_equal(g_log.user[i], i);
        assert_int_equal(g_log.ret[i], 0);
        assert_true(g_log.len[i] > 0);
        assert_int_equal(g_log.thread[i], thread_id_of(rt->tid));
        /* destroyed right after its callback: a dead handle reads as 0 */
        assert_int_equal(acldvppGetStreamDescSize(g_log.desc[i]), 0);
    }
}

static void assert_same_stream(const uint8_t *want, size_t len)
{
    if (g_log.total != len || memcmp(g_log.bytes, want, len) != 0)
        fail_msg("the callbacks' %zu bytes are not dvppctl's %zu", g_log.total, len);
}

/* Encode @p's frames through a channel and through dvppctl @flags. */
static void encode_matches(const venc_params *p, int idr, const char *flags)
{
    bool nv21 = p->fmt == PIXEL_FORMAT_YVU_SEMIPLANAR_420;
    uint8_t *frames = make_frames(p->w, p->h, nv21);
    report_thread rt;
    aclvencChannelDesc *cd;
    uint8_t *want;
    size_t len;
    char all[512];

    log_reset();
    if (idr >= 0)
        snprintf(all, sizeof(all), "%s --idr %d", flags, idr);
    else
        snprintf(all, sizeof(all), "%s", flags);
    want = ctl_encode(frames, p->w, p->h, nv21, all, &len);
    report_start(&rt);
    cd = open_channel(&rt, p);
    assert_true(aclvencGetChannelDescChannelId(cd) > 0);
    encode_all(cd, frames, p, idr, 0);
    assert_callbacks(&rt);
    assert_same_stream(want, len);
    close_channel(cd);
    assert_int_equal(log_count(), T);
    report_stop(&rt);
    free(want);
    free(frames);
}

/* --- ascend310 --------------------------------------------------------------------------- */

/* H.264 main CBR, GOP 8, 25 fps, IDR forced on frame 5: dvppctl's bytes,
 * the key frames where the GOP and the force put them. */
static void test_h264_cbr_equals_dvppctl(void **state)
{
    venc_params p = {H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 8, 2, 25, 500};

    (void)state;
    encode_matches(&p, 5, "--codec h264 --profile main --gop 8 --fps 25 --rc cbr "
                   "--bitrate 500");
    for (unsigned i = 0; i < T; i++)
        if (packet_is_idr(i, false) != (i == 0 || i == 5 || i == 13))
            fail_msg("packet %u: IDR %d", i, packet_is_idr(i, false));
    log_reset();
}

/* H.265 with everything left at its default: ascend310's CBR at 300
 * kbit/s, 30 fps, GOP 30. */
static void test_h265_defaults_equal_dvppctl(void **state)
{
    venc_params p = {H265_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 256, 192, 0, 0, 0, 0};

    (void)state;
    encode_matches(&p, 9, "--codec h265 --gop 30 --fps 30 --rc cbr --bitrate 300");
    for (unsigned i = 0; i < T; i++)
        if (packet_is_idr(i, true) != (i == 0 || i == 9))
            fail_msg("packet %u: IDR %d", i, packet_is_idr(i, true));
    log_reset();
}

/* NV21 frames, H.264 baseline VBR. */
static void test_nv21_baseline_vbr_equals_dvppctl(void **state)
{
    venc_params p = {H264_BASELINE_LEVEL, PIXEL_FORMAT_YVU_SEMIPLANAR_420, 320, 240, 16, 1, 30,
                     800};

    (void)state;
    encode_matches(&p, -1, "--codec h264 --profile baseline --gop 16 --fps 30 --rc vbr "
                   "--bitrate 800");
    log_reset();
}

/* EOS waits for every callback (slow ones too), makes none of its own;
 * frames after it start a new stream, the same bytes again. */
static void test_eos_then_a_new_stream(void **state)
{
    venc_params p = {H264_HIGH_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 10, 2, 30, 400};
    uint8_t *frames = make_frames(p.w, p.h, false), *first;
    report_thread rt;
    aclvencChannelDesc *cd;
    size_t len;

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, &p);
    assert_int_equal(send_eos(cd), ACL_SUCCESS); /* nothing sent: fine */
    assert_int_equal(log_count(), 0);
    g_log.slow_ms = 5;
    encode_all(cd, frames, &p, -1, 0);
    assert_callbacks(&rt);
    assert_true(has_nal(g_log.bytes, g_log.len[0], false, 7, 7)); /* SPS first */
    len = g_log.total;
    first = malloc(len);
    memcpy(first, g_log.bytes, len);
    log_reset();
    encode_all(cd, frames, &p, -1, 0);
    assert_callbacks(&rt);
    assert_same_stream(first, len);
    close_channel(cd);
    report_stop(&rt);
    free(first);
    free(frames);
    log_reset();
}

/* Destroy right after the sends waits for every callback. */
static void test_destroy_waits_for_every_callback(void **state)
{
    venc_params p = {H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 10, 2, 30, 400};
    uint8_t *frames = make_frames(p.w, p.h, false);
    aclvencFrameConfig *c = aclvencCreateFrameConfig();
    report_thread rt;
    aclvencChannelDesc *cd;

    (void)state;
    log_reset();
    g_log.slow_ms = 10;
    report_start(&rt);
    /* held through the sends, so callbacks are still to come at the
     * destroy however long the sends take */
    report_pause(&rt);
    cd = open_channel(&rt, &p);
    for (unsigned i = 0; i < T; i++) {
        acldvppPicDesc *d = in_desc(frames, i, &p, 0);
        assert_int_equal(aclvencSendFrame(cd, d, NULL, c, (void *)(uintptr_t)i), ACL_SUCCESS);
        in_free(d);
    }
    assert_true(log_count() < T);
    report_resume(&rt);
    close_channel(cd);
    assert_callbacks(&rt);
    report_stop(&rt);
    aclvencDestroyFrameConfig(c);
    free(frames);
    log_reset();
}

/* heightStride declared as ALIGN(h,16) over a buffer of w x h x 3/2: the
 * chroma is read right after the picture's rows, nothing past the buffer,
 * and the stream is the tight frames' (dvppctl's). */
static void test_an_over_declared_height_stride(void **state)
{
    venc_params p = {H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 232, 10, 2, 30, 400};
    uint8_t *frames = make_frames(p.w, p.h, false), *want;
    report_thread rt;
    aclvencChannelDesc *cd;
    size_t len;

    (void)state;
    log_reset();
    want = ctl_encode(frames, p.w, p.h, false, "--codec h264 --profile main --gop 10 --fps 30 "
                      "--rc cbr --bitrate 400", &len);
    report_start(&rt);
    cd = open_channel(&rt, &p);
    encode_all(cd, frames, &p, -1, 240);
    assert_callbacks(&rt);
    assert_same_stream(want, len);
    close_channel(cd);
    report_stop(&rt);
    free(want);
    free(frames);
    log_reset();
}

/* EOS on the report thread would wait for itself: refused at once. */
static void test_eos_on_the_callback_thread_fails(void **state)
{
    venc_params p = {H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 10, 2, 30, 400};
    uint8_t *frames = make_frames(p.w, p.h, false);
    report_thread rt;
    aclvencChannelDesc *cd;

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, &p);
    g_log.nest = cd;
    encode_all(cd, frames, &p, -1, 0);
    assert_int_equal(g_log.nested, ACL_ERROR_INVALID_PARAM);
    assert_callbacks(&rt);
    close_channel(cd);
    report_stop(&rt);
    free(frames);
    log_reset();
}

/* The size rules (input size in [W*H*3/2, W*H*3)), config and reserve. */
static void test_send_frame_errors(void **state)
{
    venc_params p = {H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 10, 2, 30, 400};
    uint8_t *frames = make_frames(p.w, p.h, false);
    aclvencFrameConfig *c = aclvencCreateFrameConfig();
    report_thread rt;
    aclvencChannelDesc *cd;
    acldvppPicDesc *d, *big;
    size_t one = (size_t)p.w * p.h * 3 / 2;
    int reserve;

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_channel(&rt, &p);
    VFAIL(aclvencCreateChannel(cd), ACL_ERROR_INVALID_PARAM); /* twice */
    d = in_desc(frames, 0, &p, 0);
    VFAIL(aclvencSendFrame(cd, d, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("config");
    VFAIL(aclvencSendFrame(cd, d, &reserve, c, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("reserve");
    VFAIL(aclvencSendFrame(NULL, d, NULL, c, NULL), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencSendFrame(cd, NULL, NULL, c, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("input");
    assert_int_equal(acldvppSetPicDescSize(d, (uint32_t)one - 1), ACL_SUCCESS);
    VFAIL(aclvencSendFrame(cd, d, NULL, c, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("out of [115200, 230400)");
    big = acldvppCreatePicDesc();
    assert_int_equal(acldvppSetPicDescData(big, vmalloc(one * 2)), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(big, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                     ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(big, (uint32_t)one * 2), ACL_SUCCESS);
    VFAIL(aclvencSendFrame(cd, big, NULL, c, NULL), ACL_ERROR_INVALID_PARAM);
    /* just under W*H*3 is accepted */
    assert_int_equal(acldvppSetPicDescSize(big, (uint32_t)one * 2 - 1), ACL_SUCCESS);
    assert_int_equal(aclvencSendFrame(cd, big, NULL, c, (void *)(uintptr_t)0), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(d, (uint32_t)one), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(d, PIXEL_FORMAT_RGB_888), ACL_SUCCESS);
    VFAIL(aclvencSendFrame(cd, d, NULL, c, NULL), ACL_ERROR_FORMAT_NOT_MATCH);
    assert_int_equal(acldvppSetPicDescFormat(d, PIXEL_FORMAT_YUV_SEMIPLANAR_420), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidth(d, 640), ACL_SUCCESS);
    VFAIL(aclvencSendFrame(cd, d, NULL, c, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("the channel encodes");
    assert_int_equal(acldvppSetPicDescWidth(d, 320), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidthStride(d, 336), ACL_SUCCESS); /* 336 x 240 x 3/2 > size */
    VFAIL(aclvencSendFrame(cd, d, NULL, c, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("the input has");
    assert_int_equal(acldvppSetPicDescWidthStride(d, 320), ACL_SUCCESS);
    assert_int_equal(aclvencSendFrame(cd, d, NULL, c, (void *)(uintptr_t)1), ACL_SUCCESS);
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_int_equal(log_count(), 2); /* the two good frames only */
    assert_int_equal(g_log.user[1], 1);
    close_channel(cd);
    report_stop(&rt);
    in_free(d);
    in_free(big);
    aclvencDestroyFrameConfig(c);
    free(frames);
    log_reset();
}

static void test_create_errors(void **state)
{
    aclvencChannelDesc *cd = aclvencCreateChannelDesc();

    (void)state;
    VFAIL(aclvencCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    vexpect_message("callback");
    assert_int_equal(aclvencSetChannelDescCallback(cd, venc_cb), ACL_SUCCESS);
    VFAIL(aclvencCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    vexpect_message("ThreadId");
    assert_int_equal(aclvencSetChannelDescThreadId(cd, thread_id_of(pthread_self())),
                     ACL_SUCCESS);
    VFAIL(aclvencCreateChannel(cd), ACL_ERROR_FORMAT_NOT_MATCH); /* no PicFormat */
    assert_int_equal(aclvencSetChannelDescPicFormat(cd, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                     ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicWidth(cd, 1922), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicHeight(cd, 240), ACL_SUCCESS);
    VFAIL(aclvencCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    vexpect_message("[128, 1920]");
    assert_int_equal(aclvencSetChannelDescPicWidth(cd, 321), ACL_SUCCESS);
    VFAIL(aclvencCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvencSetChannelDescPicWidth(cd, 126), ACL_SUCCESS);
    VFAIL(aclvencCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencCreateChannel(NULL), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencDestroyChannel(cd), ACL_ERROR_INVALID_PARAM);
    vexpect_message("not created");
    assert_int_equal(aclvencDestroyChannelDesc(cd), ACL_SUCCESS);
    VFAIL(aclvencDestroyChannelDesc(cd), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvencDestroyChannelDesc(NULL), ACL_SUCCESS);
}

static void test_channel_desc_fields_310(void **state)
{
    aclvencChannelDesc *cd = aclvencCreateChannelDesc();
    aclvencFrameConfig *c = aclvencCreateFrameConfig();
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    size_t ret = 0;
    void *ptr = NULL;
    int buf;

    (void)state;
    assert_int_equal(aclvencGetChannelDescEnType(cd), H265_MAIN_LEVEL);
    assert_int_equal(aclvencGetChannelDescChannelId(cd), 0);
    assert_int_equal(aclvencGetChannelDescPicWidth(NULL), 0);
    assert_null(aclvencGetChannelDescCallback(NULL));
    VFAIL(aclvencSetChannelDescBufAddr(cd, &buf), ACL_ERROR_FEATURE_UNSUPPORTED);
    VFAIL(aclvencSetChannelDescBufSize(cd, 1 << 20), ACL_ERROR_FEATURE_UNSUPPORTED);
    VFAIL(aclvencSetChannelDescSrcRate(cd, 121), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvencSetChannelDescSrcRate(cd, 120), ACL_SUCCESS);
    VFAIL(aclvencSetChannelDescMaxBitRate(cd, 9), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencSetChannelDescMaxBitRate(cd, 30001), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvencSetChannelDescMaxBitRate(cd, 30000), ACL_SUCCESS);
    VFAIL(aclvencSetChannelDescRcMode(cd, 3), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvencSetChannelDescRcMode(cd, 1), ACL_SUCCESS);
    VFAIL(aclvencSetChannelDescKeyFrameInterval(cd, 0), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencSetChannelDescKeyFrameInterval(cd, 65537), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvencSetChannelDescKeyFrameInterval(cd, 65536), ACL_SUCCESS);
    VFAIL(aclvencSetChannelDescEnType(cd, (acldvppStreamFormat)4), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencSetChannelDescPicFormat(cd, PIXEL_FORMAT_RGB_888), ACL_ERROR_FORMAT_NOT_MATCH);
    assert_int_equal(aclvencSetChannelDescPicWidth(cd, 640), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescThreadId(cd, 77), ACL_SUCCESS);
    assert_int_equal(aclvencGetChannelDescSrcRate(cd), 120);
    assert_int_equal(aclvencGetChannelDescMaxBitRate(cd), 30000);
    assert_int_equal(aclvencGetChannelDescRcMode(cd), 1);
    assert_int_equal(aclvencGetChannelDescKeyFrameInterval(cd), 65536);
    assert_int_equal(aclvencGetChannelDescPicWidth(cd), 640);
    assert_int_equal(aclvencGetChannelDescThreadId(cd), 77);
    assert_null(aclvencGetChannelDescBufAddr(cd));
    /* parameters */
    assert_int_equal(aclvencGetChannelDescParam(cd, ACL_VENC_PIC_WIDTH_UINT32, 4, &ret, &u32),
                     ACL_SUCCESS);
    assert_int_equal(ret, 4);
    assert_int_equal(u32, 640);
    assert_int_equal(aclvencGetChannelDescParam(cd, ACL_VENC_THREAD_ID_UINT64, 16, &ret, &u64),
                     ACL_SUCCESS);
    assert_int_equal(ret, 8);
    assert_int_equal(u64, 77);
    VFAIL(aclvencGetChannelDescParam(cd, ACL_VENC_THREAD_ID_UINT64, 7, &ret, &u64),
          ACL_ERROR_INVALID_PARAM);
    u32 = 12;
    assert_int_equal(aclvencSetChannelDescParam(cd, ACL_VENC_MAX_IP_PROP_UINT32, 4, &u32),
                     ACL_SUCCESS);
    u32 = 0;
    assert_int_equal(aclvencGetChannelDescParam(cd, ACL_VENC_MAX_IP_PROP_UINT32, 4, &ret, &u32),
                     ACL_SUCCESS);
    assert_int_equal(u32, 12);
    u32 = 480;
    assert_int_equal(aclvencSetChannelDescParam(cd, ACL_VENC_PIC_HEIGHT_UINT32, 4, &u32),
                     ACL_SUCCESS);
    assert_int_equal(aclvencGetChannelDescPicHeight(cd), 480);
    VFAIL(aclvencSetChannelDescParam(cd, ACL_VENC_PIC_HEIGHT_UINT32, 8, &u64),
          ACL_ERROR_INVALID_PARAM);
    ptr = &buf;
    VFAIL(aclvencSetChannelDescParam(cd, ACL_VENC_BUF_ADDR_PTR, sizeof(ptr), &ptr),
          ACL_ERROR_FEATURE_UNSUPPORTED);
    u32 = 121;
    VFAIL(aclvencSetChannelDescParam(cd, ACL_VENC_SRC_RATE_UINT32, 4, &u32),
          ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencSetChannelDescParam(cd, (aclvencChannelDescParamType)13, 4, &u32),
          ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencSetChannelDescParam(NULL, ACL_VENC_SRC_RATE_UINT32, 4, &u32),
          ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencGetChannelDescParam(cd, ACL_VENC_SRC_RATE_UINT32, 4, NULL, &u32),
          ACL_ERROR_INVALID_PARAM);
    /* frame configs */
    assert_int_equal(aclvencGetFrameConfigForceIFrame(c), 0);
    assert_int_equal(aclvencGetFrameConfigEos(c), 0);
    assert_int_equal(aclvencSetFrameConfigForceIFrame(c, 1), ACL_SUCCESS);
    assert_int_equal(aclvencGetFrameConfigForceIFrame(c), 1);
    VFAIL(aclvencSetFrameConfigForceIFrame(c, 2), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencSetFrameConfigEos(NULL, 1), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvencGetFrameConfigForceIFrame(NULL), 255);
    assert_int_equal(aclvencDestroyFrameConfig(c), ACL_SUCCESS);
    VFAIL(aclvencDestroyFrameConfig(c), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvencDestroyChannelDesc(cd), ACL_SUCCESS);
}

/* Two channels at once: their own ids, their own streams. */
static void test_two_channels_have_their_own_ids(void **state)
{
    venc_params p = {H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 10, 2, 30, 400};
    report_thread rt;
    aclvencChannelDesc *a, *b;

    (void)state;
    report_start(&rt);
    a = open_channel(&rt, &p);
    b = open_channel(&rt, &p);
    assert_true(aclvencGetChannelDescChannelId(a) > 0);
    assert_int_not_equal(aclvencGetChannelDescChannelId(a), aclvencGetChannelDescChannelId(b));
    close_channel(a);
    close_channel(b);
    report_stop(&rt);
}

/* --- ascend310p ---------------------------------------------------------------------------- */

/* RcMode 0 is VBR at 2000 kbit/s on ascend310p. */
static void test_310p_default_is_vbr(void **state)
{
    venc_params p = {H264_HIGH_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 12, 0, 0, 0};

    (void)state;
    encode_matches(&p, -1, "--codec h264 --profile high --gop 12 --fps 30 --rc vbr "
                   "--bitrate 2000");
    log_reset();
}

/* The program's own output area (BufAddr/BufSize): every packet lies in it. */
static void test_310p_buf_addr_is_the_output_area(void **state)
{
    venc_params p = {H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 10, 2, 30, 400};
    uint8_t *frames = make_frames(p.w, p.h, false);
    aclvencFrameConfig *c = aclvencCreateFrameConfig();
    size_t area = 1 << 20;
    uint8_t *buf = vmalloc(area);
    report_thread rt;
    aclvencChannelDesc *cd = aclvencCreateChannelDesc();
    uint32_t u32 = 0;
    size_t ret;

    (void)state;
    log_reset();
    report_start(&rt);
    assert_int_equal(aclvencSetChannelDescThreadId(cd, thread_id_of(rt.tid)), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescCallback(cd, venc_cb), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescEnType(cd, p.en), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicFormat(cd, p.fmt), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicWidth(cd, p.w), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicHeight(cd, p.h), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescBufAddr(cd, buf), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescBufSize(cd, (uint32_t)area), ACL_SUCCESS);
    assert_int_equal(aclvencGetChannelDescParam(cd, ACL_VENC_BUF_SIZE_UINT32, 4, &ret, &u32),
                     ACL_SUCCESS);
    assert_int_equal(u32, area);
    assert_int_equal(aclvencCreateChannel(cd), ACL_SUCCESS);
    for (unsigned i = 0; i < T; i++) {
        acldvppPicDesc *d = in_desc(frames, i, &p, 0);
        assert_int_equal(aclvencSendFrame(cd, d, NULL, c, (void *)(uintptr_t)i), ACL_SUCCESS);
        in_free(d);
    }
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_callbacks(&rt);
    for (unsigned i = 0; i < T; i++) {
        const uint8_t *d = g_log.data[i];
        assert_true(d >= buf && d + g_log.len[i] <= buf + area);
    }
    close_channel(cd);
    report_stop(&rt);
    acldvppFree(buf);
    aclvencDestroyFrameConfig(c);
    free(frames);
    log_reset();
}

/* A channel on @buf/@area (ascend310p's BufAddr/BufSize) with @p. */
static aclvencChannelDesc *open_area_channel(const report_thread *rt, const venc_params *p,
                                             void *buf, uint32_t area)
{
    aclvencChannelDesc *cd = aclvencCreateChannelDesc();

    assert_int_equal(aclvencSetChannelDescThreadId(cd, thread_id_of(rt->tid)), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescCallback(cd, venc_cb), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescEnType(cd, p->en), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicFormat(cd, p->fmt), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicWidth(cd, p->w), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicHeight(cd, p->h), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescKeyFrameInterval(cd, p->gop), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescRcMode(cd, p->rc), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescMaxBitRate(cd, p->kbps), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescBufAddr(cd, buf), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescBufSize(cd, area), ACL_SUCCESS);
    assert_int_equal(aclvencCreateChannel(cd), ACL_SUCCESS);
    return cd;
}

/* The sizes of the access units of the H.264 stream @s (@n bytes), one per
 * picture as the encoder's packets: a slice with first_mb_in_slice 0, an
 * SEI, SPS, PPS or AUD after a slice starts the next one. Returns how
 * many (at most @max). */
static unsigned h264_access_units(const uint8_t *s, size_t n, size_t *sizes, unsigned max)
{
    size_t start = 0;
    bool had_slice = false;
    unsigned k = 0;

    for (size_t i = 0; i + 4 < n && k + 1 < max; i++) {
        if (s[i] != 0 || s[i + 1] != 0 || s[i + 2] != 1)
            continue;
        size_t at = i > 0 && s[i - 1] == 0 ? i - 1 : i; /* a 4-byte start code */
        int t = s[i + 3] & 0x1f;
        bool slice = t == 1 || t == 5;
        bool begins = slice ? (s[i + 4] & 0x80) != 0 : t >= 6 && t <= 9;
        if (had_slice && begins) {
            sizes[k++] = at - start;
            start = at;
            had_slice = false;
        }
        had_slice |= slice;
        i += 2;
    }
    sizes[k++] = n - start;
    return k;
}

/* An output area a few packets long, with the report thread held: the
 * encoder waits for callbacks to give parts back, packets wrap around the
 * area's end, none overlaps one still being called back, and the stream
 * is still dvppctl's. */
static void test_310p_a_small_area_wraps_and_waits(void **state)
{
    venc_params p = {H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 4, 2, 30, 2000};
    uint8_t *frames = make_frames(p.w, p.h, false), *want;
    aclvencFrameConfig *c = aclvencCreateFrameConfig();
    uint32_t area = 48 * 1024;
    uint8_t *buf = vmalloc(area);
    report_thread rt;
    aclvencChannelDesc *cd;
    size_t len, biggest = 0, au[T], fill = 0;
    unsigned fit = 0;
    bool wrapped = false;
    uint64_t until;

    (void)state;
    log_reset();
    want = ctl_encode(frames, p.w, p.h, false, "--codec h264 --profile main --gop 4 --fps 30 "
                      "--rc cbr --bitrate 2000", &len);
    /* Held, the encoder writes the packets that fit from the area's start
     * and then waits for packet 0's callback. */
    assert_int_equal(h264_access_units(want, len, au, T), T);
    while (fit < T && fill + au[fit] <= area)
        fill += au[fit++];
    assert_true(fit > 1 && fit < T);
    report_start(&rt);
    report_pause(&rt);
    cd = open_area_channel(&rt, &p, buf, area);
    for (unsigned i = 0; i < T; i++) {
        acldvppPicDesc *d = in_desc(frames, i, &p, 0);
        assert_int_equal(aclvencSendFrame(cd, d, NULL, c, (void *)(uintptr_t)i), ACL_SUCCESS);
        in_free(d);
    }
    /* Until the area is full (the encoder at its wait), however slow the
     * machine: read as the device's memory, byte by byte. */
    until = vnow_ms() + 30000;
    for (size_t k = 0; k < fill;) {
        if (((const volatile uint8_t *)buf)[k] == want[k]) {
            k++;
            continue;
        }
        if (vnow_ms() > until)
            fail_msg("after 30 s the area holds %zu of the %zu bytes of packets 0..%u", k, fill,
                     fit - 1);
        usleep(1000);
    }
    assert_int_equal(log_count(), 0);
    report_resume(&rt);
    assert_int_equal(send_eos(cd), ACL_SUCCESS);
    assert_callbacks(&rt);
    assert_same_stream(want, len);
    for (unsigned i = 0; i < T; i++)
        assert_int_equal(g_log.len[i], au[i]); /* the packets are those access units */
    for (unsigned i = 0; i < T; i++) {
        const uint8_t *d = g_log.data[i];
        assert_true(d >= buf && d + g_log.len[i] <= buf + area);
        wrapped |= i > 0 && d < (const uint8_t *)g_log.data[i - 1];
        biggest = g_log.len[i] > biggest ? g_log.len[i] : biggest;
    }
    assert_true(wrapped);
    assert_true(len > 2 * area); /* the area was reused, so callbacks freed it */
    close_channel(cd);
    report_stop(&rt);
    acldvppFree(buf);
    aclvencDestroyFrameConfig(c);
    free(want);
    free(frames);
    log_reset();
}

/* A packet larger than the whole area: its frame's callback has retCode
 * != 0 and no data; the frames after it still come. */
static void test_310p_a_packet_past_the_area_fails_its_frame(void **state)
{
    venc_params p = {H264_MAIN_LEVEL, PIXEL_FORMAT_YUV_SEMIPLANAR_420, 320, 240, 30, 2, 30, 8000};
    uint8_t *frames = make_frames(p.w, p.h, false);
    uint32_t area = 2048;
    uint8_t *buf = vmalloc(area);
    report_thread rt;
    aclvencChannelDesc *cd;

    (void)state;
    log_reset();
    report_start(&rt);
    cd = open_area_channel(&rt, &p, buf, area);
    encode_all(cd, frames, &p, -1, 0);
    assert_int_equal(log_count(), T);
    assert_int_not_equal(g_log.ret[0], 0); /* the IDR frame does not fit 2 KiB */
    assert_int_equal(g_log.len[0], 0);
    assert_null(g_log.data[0]);
    for (unsigned i = 0; i < T; i++)
        assert_int_equal(g_log.user[i], i);
    close_channel(cd);
    report_stop(&rt);
    acldvppFree(buf);
    free(frames);
    log_reset();
}

static void test_310p_ranges(void **state)
{
    aclvencChannelDesc *cd = aclvencCreateChannelDesc();

    (void)state;
    assert_int_equal(aclvencSetChannelDescSrcRate(cd, 240), ACL_SUCCESS);
    VFAIL(aclvencSetChannelDescSrcRate(cd, 241), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclvencSetChannelDescMaxBitRate(cd, 614400), ACL_SUCCESS);
    VFAIL(aclvencSetChannelDescMaxBitRate(cd, 614401), ACL_ERROR_INVALID_PARAM);
    VFAIL(aclvencSetChannelDescMaxBitRate(cd, 1), ACL_ERROR_INVALID_PARAM);
    /* H.264 is held to 4096x2304 in area, H.265 is not */
    assert_int_equal(aclvencSetChannelDescCallback(cd, venc_cb), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescThreadId(cd, thread_id_of(pthread_self())),
                     ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicFormat(cd, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                     ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescEnType(cd, H264_MAIN_LEVEL), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicWidth(cd, 4096), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicHeight(cd, 4096), ACL_SUCCESS);
    VFAIL(aclvencCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    vexpect_message("4096x2304");
    assert_int_equal(aclvencSetChannelDescPicWidth(cd, 4098), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescEnType(cd, H265_MAIN_LEVEL), ACL_SUCCESS);
    VFAIL(aclvencCreateChannel(cd), ACL_ERROR_INVALID_PARAM);
    vexpect_message("[128, 4096]");
    assert_int_equal(aclvencDestroyChannelDesc(cd), ACL_SUCCESS);
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
    const struct CMUnitTest t310[] = {
        cmocka_unit_test(test_h264_cbr_equals_dvppctl),
        cmocka_unit_test(test_h265_defaults_equal_dvppctl),
        cmocka_unit_test(test_nv21_baseline_vbr_equals_dvppctl),
        cmocka_unit_test(test_eos_then_a_new_stream),
        cmocka_unit_test(test_destroy_waits_for_every_callback),
        cmocka_unit_test(test_an_over_declared_height_stride),
        cmocka_unit_test(test_eos_on_the_callback_thread_fails),
        cmocka_unit_test(test_send_frame_errors),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_channel_desc_fields_310),
        cmocka_unit_test(test_two_channels_have_their_own_ids),
    };
    const struct CMUnitTest t310p[] = {
        cmocka_unit_test(test_310p_default_is_vbr),
        cmocka_unit_test(test_310p_buf_addr_is_the_output_area),
        cmocka_unit_test(test_310p_a_small_area_wraps_and_waits),
        cmocka_unit_test(test_310p_a_packet_past_the_area_fails_its_frame),
        cmocka_unit_test(test_310p_ranges),
    };
    int failed;

    pthread_mutex_init(&g_log.mu, NULL);
    failed = cmocka_run_group_tests_name("ascend310", t310, setup_310, teardown);
    failed += cmocka_run_group_tests_name("ascend310p", t310p, setup_310p, teardown);
    log_reset();
    vdir_remove();
    return failed;
}
