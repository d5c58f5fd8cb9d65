/* A review of aclvdec* and aclvenc* for the defects fuzzers miss: bytes read
 * past the program's buffer, pictures given to the wrong frame. Each test
 * failed on the code before its fix (see the commit that added it). */
#include "test_video_common.h"

#include <sys/mman.h>

/* --- VENC ------------------------------------------------------------------------------ */

typedef struct rv_venc_log {
    atomic_uint n;
    atomic_uint failed;
} rv_venc_log;

static rv_venc_log g_vlog;

static void rv_venc_cb(acldvppPicDesc *input, acldvppStreamDesc *output, void *user)
{
    (void)input;
    (void)user;
    if (acldvppGetStreamDescRetCode(output) != 0)
        atomic_fetch_add(&g_vlog.failed, 1);
    atomic_fetch_add(&g_vlog.n, 1);
}

static aclvencChannelDesc *rv_venc_channel(report_thread *rt, uint32_t w, uint32_t h)
{
    aclvencChannelDesc *d = aclvencCreateChannelDesc();

    assert_non_null(d);
    assert_int_equal(aclvencSetChannelDescThreadId(d, thread_id_of(rt->tid)), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescCallback(d, rv_venc_cb), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescEnType(d, H264_MAIN_LEVEL), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicFormat(d, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                     ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicWidth(d, w), ACL_SUCCESS);
    assert_int_equal(aclvencSetChannelDescPicHeight(d, h), ACL_SUCCESS);
    assert_int_equal(aclvencCreateChannel(d), ACL_SUCCESS);
    return d;
}

/* An odd heightStride: the chroma plane of a W x HS NV12 layout has
 * (HS+1)/2 rows, so the layout is W*HS + W*(HS+1)/2 bytes, W/2 more than
 * W*HS*3/2. A program's buffer of exactly W*HS*3/2 bytes (malloc'd, so
 * the layer knows no block around it) ends at a page followed by a
 * PROT_NONE page: a read past its end is a SIGSEGV. The frame is either
 * refused at the call or encoded from the bytes there, never read past. */
static void test_venc_odd_height_stride_reads_only_the_buffer(void **state)
{
    const uint32_t w = 128, h = 128, hs = 129;
    size_t bytes = (size_t)w * hs * 3 / 2; /* 24768: in [w*h*3/2, w*h*3) */
    long page = sysconf(_SC_PAGESIZE);
    size_t span = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    uint8_t *map, *data;
    report_thread rt;
    aclvencChannelDesc *ch;
    aclvencFrameConfig *cfg;
    acldvppPicDesc *pic;
    aclError rc;

    (void)state;
    map = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + span, (size_t)page, PROT_NONE), 0);
    data = map + span - bytes;
    memset(data, 0x80, bytes);
    memset(&g_vlog, 0, sizeof(g_vlog));
    report_start(&rt);
    ch = rv_venc_channel(&rt, w, h);
    cfg = aclvencCreateFrameConfig();
    pic = acldvppCreatePicDesc();
    assert_non_null(cfg);
    assert_non_null(pic);
    assert_int_equal(acldvppSetPicDescData(pic, data), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(pic, (uint32_t)bytes), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(pic, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                     ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidth(pic, w), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeight(pic, h), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidthStride(pic, w), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeightStride(pic, hs), ACL_SUCCESS);
    rc = aclvencSendFrame(ch, pic, NULL, cfg, NULL); /* a read past: SIGSEGV here */
    assert_int_equal(aclvencDestroyChannel(ch), ACL_SUCCESS);
    if (rc == ACL_SUCCESS)
        assert_int_equal(atomic_load(&g_vlog.n), 1);
    else
        assert_int_equal(atomic_load(&g_vlog.n), 0);
    assert_int_equal(aclvencDestroyChannelDesc(ch), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyPicDesc(pic), ACL_SUCCESS);
    assert_int_equal(aclvencDestroyFrameConfig(cfg), ACL_SUCCESS);
    report_stop(&rt);
    munmap(map, span + (size_t)page);
}

/* A widthStride that is not a multiple of 16: VENC's input rule on the
 * 310 (the "unaligned strides under the 310 profile"), refused at
 * the call with a message; the 310P takes it. */
static void test_venc_unaligned_width_stride_on_310(void **state)
{
    const uint32_t w = 128, h = 128, ws = 136;
    size_t bytes = (size_t)ws * h * 3 / 2;
    uint8_t *data = vmalloc(bytes);
    report_thread rt;
    aclvencChannelDesc *ch;
    aclvencFrameConfig *cfg = aclvencCreateFrameConfig();
    acldvppPicDesc *pic = acldvppCreatePicDesc();
    aclError rc;

    (void)state;
    memset(data, 0x80, bytes);
    memset(&g_vlog, 0, sizeof(g_vlog));
    report_start(&rt);
    ch = rv_venc_channel(&rt, w, h);
    assert_int_equal(acldvppSetPicDescData(pic, data), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(pic, (uint32_t)bytes), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(pic, PIXEL_FORMAT_YUV_SEMIPLANAR_420),
                     ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidth(pic, w), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeight(pic, h), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidthStride(pic, ws), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeightStride(pic, h), ACL_SUCCESS);
    rc = aclvencSendFrame(ch, pic, NULL, cfg, NULL);
    if (venv_310p()) {
        assert_int_equal(rc, ACL_SUCCESS);
    } else {
        assert_int_equal(rc, ACL_ERROR_INVALID_PARAM);
        assert_non_null(strstr(aclGetRecentErrMsg(), "16"));
    }
    assert_int_equal(aclvencDestroyChannel(ch), ACL_SUCCESS);
    assert_int_equal(atomic_load(&g_vlog.n), rc == ACL_SUCCESS ? 1u : 0u);
    assert_int_equal(aclvencDestroyChannelDesc(ch), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyPicDesc(pic), ACL_SUCCESS);
    assert_int_equal(aclvencDestroyFrameConfig(cfg), ACL_SUCCESS);
    report_stop(&rt);
    acldvppFree(data);
}

/* --- VDEC ------------------------------------------------------------------------------ */

static vstream g_nob;             /* H.264 without B frames: no reordering */

#define RV_MAX_CB 32

typedef struct rv_vdec_rec {
    uintptr_t user;
    uint32_t ret, size;
    uint8_t *data;                /* the picture (ret 0) */
} rv_vdec_rec;

static struct {
    pthread_mutex_t mu;
    unsigned n;
    rv_vdec_rec r[RV_MAX_CB];
} g_dlog = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void rv_dlog_reset(void)
{
    for (unsigned i = 0; i < g_dlog.n; i++)
        free(g_dlog.r[i].data);
    g_dlog.n = 0;
}

/* As ACLLite's: copy the picture, free its buffer, destroy its
 * description and the input (stream description and data). */
static void rv_vdec_cb(acldvppStreamDesc *input, acldvppPicDesc *output, void *user)
{
    rv_vdec_rec r = {.user = (uintptr_t)user};
    void *data = acldvppGetPicDescData(output);

    r.ret = acldvppGetPicDescRetCode(output);
    r.size = acldvppGetPicDescSize(output);
    if (r.ret == 0 && (r.data = malloc(r.size)) != NULL)
        memcpy(r.data, data, r.size);
    acldvppFree(data);
    acldvppDestroyPicDesc(output);
    vpacket_free(input);
    pthread_mutex_lock(&g_dlog.mu);
    if (g_dlog.n < RV_MAX_CB)
        g_dlog.r[g_dlog.n++] = r;
    else
        free(r.data);
    pthread_mutex_unlock(&g_dlog.mu);
}

static acldvppPicDesc *rv_out_desc(size_t bytes)
{
    acldvppPicDesc *d = acldvppCreatePicDesc();

    assert_non_null(d);
    assert_int_equal(acldvppSetPicDescData(d, vmalloc(bytes)), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(d, (uint32_t)bytes), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(d, PIXEL_FORMAT_YUV_SEMIPLANAR_420), ACL_SUCCESS);
    return d;
}

static acldvppStreamDesc *rv_bytes_packet(const uint8_t *b, size_t n)
{
    acldvppStreamDesc *d = acldvppCreateStreamDesc();
    void *p = vmalloc(n);

    assert_non_null(d);
    memcpy(p, b, n);
    assert_int_equal(acldvppSetStreamDescData(d, p), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescSize(d, (uint32_t)n), ACL_SUCCESS);
    return d;
}

/* The frames of g_nob with @bad (@n bytes) sent as one more frame after
 * frame 1: every frame gets one callback in send order, each frame of
 * the stream its own picture (dvpp_video_decode's), never the next one's. */
static void rv_vdec_with_a_bad_packet(const uint8_t *bad, size_t n, const char *what)
{
    const vstream *s = &g_nob;
    size_t bytes = (size_t)valign(s->ref[0].width, 16) * valign(s->ref[0].height, 2) * 3 / 2;
    const uintptr_t bad_user = 1000;
    aclvdecChannelDesc *cd = aclvdecCreateChannelDesc();
    acldvppStreamDesc *eos;
    report_thread rt;
    unsigned k = 0;

    rv_dlog_reset();
    report_start(&rt);
    assert_non_null(cd);
    assert_int_equal(aclvdecSetChannelDescThreadId(cd, thread_id_of(rt.tid)), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescCallback(cd, rv_vdec_cb), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescEnType(cd, H264_MAIN_LEVEL), ACL_SUCCESS);
    assert_int_equal(aclvdecCreateChannel(cd), ACL_SUCCESS);
    for (unsigned i = 0; i < s->npackets; i++) {
        assert_int_equal(aclvdecSendFrame(cd, vpacket(s, i), rv_out_desc(bytes), NULL,
                                          (void *)(uintptr_t)i),
                         ACL_SUCCESS);
        if (i == 1) {
            aclError rc = aclvdecSendFrame(cd, rv_bytes_packet(bad, n), rv_out_desc(bytes),
                                           NULL, (void *)bad_user);
            assert_int_equal(rc, ACL_SUCCESS);
        }
    }
    eos = acldvppCreateStreamDesc();
    assert_int_equal(acldvppSetStreamDescEos(eos, 1), ACL_SUCCESS);
    assert_int_equal(aclvdecSendFrame(cd, eos, NULL, NULL, NULL), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyStreamDesc(eos), ACL_SUCCESS);
    assert_int_equal(aclvdecDestroyChannel(cd), ACL_SUCCESS);
    assert_int_equal(aclvdecDestroyChannelDesc(cd), ACL_SUCCESS);
    report_stop(&rt);
    if (g_dlog.n != s->npackets + 1)
        fail_msg("%s: %u callbacks for %u frames", what, g_dlog.n, s->npackets + 1);
    for (unsigned i = 0; i < g_dlog.n; i++) {
        const rv_vdec_rec *r = &g_dlog.r[i];
        if (i == 2) {
            if (r->user != bad_user)
                fail_msg("%s: callback %u is for frame %lu", what, i, (unsigned long)r->user);
            if (r->ret == 0)
                fail_msg("%s: the bad packet's frame got a picture (retCode 0): frame %u's?",
                         what, k);
            continue;
        }
        if (r->user != k)
            fail_msg("%s: callback %u is for frame %lu, not %u", what, i,
                     (unsigned long)r->user, k);
        if (r->ret != 0 || r->size != s->ref[k].size ||
            memcmp(r->data, s->ref[k].data, s->ref[k].size) != 0)
            fail_msg("%s: frame %u: retCode %u, size %u: not its own picture", what, k, r->ret,
                     r->size);
        k++;
    }
    rv_dlog_reset();
}

/* Bytes with no start code: the decoder finds no NAL unit in them. */
static void test_vdec_garbage_packet_gets_no_picture(void **state)
{
    uint8_t bad[200];

    (void)state;
    for (size_t i = 0; i < sizeof(bad); i++)
        bad[i] = (uint8_t)(0xa5 ^ (i * 37));
    bad[0] = 0xff;
    rv_vdec_with_a_bad_packet(bad, sizeof(bad), "garbage");
}

/* An access unit delimiter alone: a valid NAL unit and no picture. */
static void test_vdec_packet_without_a_picture_gets_no_picture(void **state)
{
    static const uint8_t aud[] = {0, 0, 0, 1, 0x09, 0x10};

    (void)state;
    rv_vdec_with_a_bad_packet(aud, sizeof(aud), "AUD only");
}

/* Which of @s's pictures @r holds (-1: none). */
static int rv_which_picture(const vstream *s, const rv_vdec_rec *r)
{
    for (unsigned k = 0; r->ret == 0 && r->data && k < s->nframes; k++)
        if (r->size == s->ref[k].size && memcmp(r->data, s->ref[k].data, r->size) == 0)
            return (int)k;
    return -1;
}

/* Frames 2 and 3 of g_nob in one packet (one frame's output): every frame
 * gets one callback in send order, and the packet's frame a picture of its
 * own bytes (2's, the first; libavcodec drops the second, so the frames
 * after it decode against a missing reference: their pixels are not
 * checked), none a picture meant for another frame. */
static void test_vdec_two_frames_in_one_packet(void **state)
{
    const vstream *s = &g_nob;
    size_t bytes = (size_t)valign(s->ref[0].width, 16) * valign(s->ref[0].height, 2) * 3 / 2;
    aclvdecChannelDesc *cd = aclvdecCreateChannelDesc();
    report_thread rt;

    (void)state;
    rv_dlog_reset();
    report_start(&rt);
    assert_non_null(cd);
    assert_int_equal(aclvdecSetChannelDescThreadId(cd, thread_id_of(rt.tid)), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescCallback(cd, rv_vdec_cb), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescEnType(cd, H264_MAIN_LEVEL), ACL_SUCCESS);
    assert_int_equal(aclvdecCreateChannel(cd), ACL_SUCCESS);
    for (unsigned i = 0; i < s->npackets; i++) {
        acldvppStreamDesc *in;
        if (i == 3)
            continue;
        in = i == 2 ? rv_bytes_packet(s->data + s->pos[2], s->plen[2] + s->plen[3])
                    : vpacket(s, i);
        assert_int_equal(aclvdecSendFrame(cd, in, rv_out_desc(bytes), NULL,
                                          (void *)(uintptr_t)i),
                         ACL_SUCCESS);
    }
    assert_int_equal(aclvdecDestroyChannel(cd), ACL_SUCCESS);
    assert_int_equal(aclvdecDestroyChannelDesc(cd), ACL_SUCCESS);
    report_stop(&rt);
    assert_int_equal(s->pos[3], s->pos[2] + s->plen[2]);
    assert_int_equal(g_dlog.n, s->npackets - 1);
    for (unsigned i = 0; i < g_dlog.n; i++) {
        const rv_vdec_rec *r = &g_dlog.r[i];
        unsigned k = i < 3 ? i : i + 1;
        int got = rv_which_picture(s, r);
        if (r->user != k)
            fail_msg("callback %u is for frame %lu, not %u", i, (unsigned long)r->user, k);
        if ((k <= 2 && got != (int)k) || (k > 2 && got >= 0 && got != (int)k))
            fail_msg("frame %u: retCode %u: picture %d", k, r->ret, got);
    }
    rv_dlog_reset();
}

/* A declared input size past what the decoder takes (max_video_bytes,
 * 256 MiB) in memory the layer does not know (malloc'd, mmap'd: no block
 * to check it against) is refused at the call, before anything is
 * allocated or read for it: the buffer here is one page followed by a
 * PROT_NONE page, so a copy of the declared size is a SIGSEGV. */
static void test_vdec_huge_declared_size_refused_before_the_copy(void **state)
{
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *map;
    aclvdecChannelDesc *cd = aclvdecCreateChannelDesc();
    acldvppStreamDesc *in = acldvppCreateStreamDesc();
    acldvppPicDesc *out;
    report_thread rt;

    (void)state;
    rv_dlog_reset();
    map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
    memcpy(map, g_nob.data + g_nob.pos[0], g_nob.plen[0] < (size_t)page ? g_nob.plen[0]
                                                                         : (size_t)page);
    report_start(&rt);
    assert_non_null(cd);
    assert_non_null(in);
    assert_int_equal(aclvdecSetChannelDescThreadId(cd, thread_id_of(rt.tid)), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescCallback(cd, rv_vdec_cb), ACL_SUCCESS);
    assert_int_equal(aclvdecSetChannelDescEnType(cd, H264_MAIN_LEVEL), ACL_SUCCESS);
    assert_int_equal(aclvdecCreateChannel(cd), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescData(in, map), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescSize(in, UINT32_MAX - 15), ACL_SUCCESS);
    out = rv_out_desc(160 * 128 * 3 / 2);
    VFAIL(aclvdecSendFrame(cd, in, out, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    vexpect_message("max_video_bytes");
    assert_int_equal(aclvdecDestroyChannel(cd), ACL_SUCCESS);
    assert_int_equal(aclvdecDestroyChannelDesc(cd), ACL_SUCCESS);
    report_stop(&rt);
    assert_int_equal(g_dlog.n, 0);
    assert_int_equal(acldvppFree(acldvppGetPicDescData(out)), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyPicDesc(out), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyStreamDesc(in), ACL_SUCCESS);
    munmap(map, 2 * (size_t)page);
}

/* --- the run ----------------------------------------------------------------------------- */

static int setup_310(void **state)
{
    static const char *const nob[] = {
        "testsrc2=size=160x128:rate=25 -frames:v 6 -pix_fmt yuv420p -c:v libx264 -bf 0 "
        "-preset ultrafast -x264-params threads=1"};

    (void)state;
    if (!g_nob.data && vstream_make(&g_nob, "nob.h264", DVPP_VIDEO_H264, nob, 1) != 0)
        return -1;
    return venv_up("ascend310");
}

static int setup_310p(void **state)
{
    (void)state;
    if (!g_nob.data)
        return -1;
    return venv_up("ascend310p");
}

static int teardown(void **state)
{
    (void)state;
    return venv_down();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_venc_odd_height_stride_reads_only_the_buffer),
        cmocka_unit_test(test_venc_unaligned_width_stride_on_310),
        cmocka_unit_test(test_vdec_garbage_packet_gets_no_picture),
        cmocka_unit_test(test_vdec_packet_without_a_picture_gets_no_picture),
        cmocka_unit_test(test_vdec_two_frames_in_one_packet),
        cmocka_unit_test(test_vdec_huge_declared_size_refused_before_the_copy),
    };
    int bad = cmocka_run_group_tests_name("review_video ascend310", tests, setup_310, teardown);

    bad += cmocka_run_group_tests_name("review_video ascend310p", tests, setup_310p, teardown);
    vstream_free(&g_nob);
    vdir_remove();
    return bad;
}
