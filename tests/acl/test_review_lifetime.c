/* Review tests (libacl_dvpp): descriptions a program destroys after an
 * *Async call but before its task ran. The reference asks programs to keep
 * them alive until the sync; a program that does not must not have the
 * task write into whatever description is made next at the same address.
 *
 * The stream is held by a BLOCK host callback that only this thread's
 * aclrtProcessReport runs, so the order (call, destroy, create, task) is
 * fixed. glibc's malloc hands a freed block to the next allocation of its
 * size, so a description freed at its Destroy comes back at once; one
 * still held by its task does not (nor under ASan's quarantine), and then
 * nothing made after the call can be written into. */
#include <pthread.h>
#include <stdbool.h>

#include "test_dvpp_common.h"

static void noop_cb(void *user)
{
    (void)user;
}

/* A hold a failed test left: the teardown runs its callback, or the
 * stream's destroy would wait for it forever. */
static bool g_held;

/* Hold g_env.stream: its next tasks wait for release_stream. */
static void hold_stream(void)
{
    g_held = true;
    assert_int_equal(aclrtSubscribeReport((uint64_t)pthread_self(), g_env.stream), ACL_SUCCESS);
    assert_int_equal(aclrtLaunchCallback(noop_cb, NULL, ACL_CALLBACK_BLOCK, g_env.stream),
                     ACL_SUCCESS);
}

static void release_stream(void)
{
    g_held = false;
    /* the callback comes at once; 30 s is for a loaded machine */
    assert_int_equal(aclrtProcessReport(30000), ACL_SUCCESS);
    assert_int_equal(aclrtSynchronizeStream(g_env.stream), ACL_SUCCESS);
    assert_int_equal(aclrtUnSubscribeReport((uint64_t)pthread_self(), g_env.stream),
                     ACL_SUCCESS);
}

static acldvppPicDesc *nv12(uint32_t w, uint32_t h)
{
    acldvppPicDesc *d = new_pic(PIXEL_FORMAT_YUV_SEMIPLANAR_420, w, h, w, h, w * h * 3 / 2);

    fill_picture(acldvppGetPicDescData(d), w, h * 3 / 2, 3);
    return d;
}

/* Create picture descriptions until one lands at @addr (NULL: none did;
 * the others are destroyed). */
static acldvppPicDesc *pic_desc_at(const void *addr)
{
    acldvppPicDesc *made[64], *hit = NULL;
    int n = 0;

    while (n < 64 && !hit) {
        made[n] = acldvppCreatePicDesc();
        assert_non_null(made[n]);
        if ((void *)made[n] == addr)
            hit = made[n];
        else
            n++;
    }
    for (int i = 0; i < n; i++)
        assert_int_equal(acldvppDestroyPicDesc(made[i]), ACL_SUCCESS);
    return hit;
}

/* A marker geometry no task writes. */
static void mark(acldvppPicDesc *d)
{
    acldvppSetPicDescFormat(d, PIXEL_FORMAT_YUV_400);
    acldvppSetPicDescWidth(d, 7);
    acldvppSetPicDescHeight(d, 5);
    acldvppSetPicDescWidthStride(d, 11);
    acldvppSetPicDescHeightStride(d, 13);
    acldvppSetPicDescSize(d, 12345);
    acldvppSetPicDescRetCode(d, 77);
}

static void expect_mark(const acldvppPicDesc *d)
{
    uint32_t got[7] = {(uint32_t)acldvppGetPicDescFormat(d), acldvppGetPicDescWidth(d),
                       acldvppGetPicDescHeight(d), acldvppGetPicDescWidthStride(d),
                       acldvppGetPicDescHeightStride(d), acldvppGetPicDescSize(d),
                       acldvppGetPicDescRetCode(d)};
    uint32_t want[7] = {PIXEL_FORMAT_YUV_400, 7, 5, 11, 13, 12345, 77};

    if (memcmp(got, want, sizeof(got)) != 0) {
        fprintf(stderr, "a task wrote into a description made after the call: format %u "
                "%ux%u strides %ux%u size %u retCode %u\n", got[0], got[1], got[2], got[3],
                got[4], got[5], got[6]);
        fail();
    }
}

/* The output of a resize destroyed before the task; a new description at
 * its address keeps what the program set. */
static void test_resize_output_destroyed_before_the_task(void **state)
{
    acldvppPicDesc *in = nv12(64, 48), *out = nv12(32, 24), *fresh;
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    void *out_data = acldvppGetPicDescData(out);
    const void *addr = out;

    (void)state;
    hold_stream();
    assert_int_equal(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(acldvppDestroyPicDesc(out), ACL_SUCCESS);
    fresh = pic_desc_at(addr);
    if (fresh)
        mark(fresh);
    release_stream();
    if (fresh) {
        expect_mark(fresh);
        assert_int_equal(acldvppDestroyPicDesc(fresh), ACL_SUCCESS);
    }
    acldvppFree(out_data);
    free_pic(in);
    acldvppDestroyResizeConfig(rc);
}

/* The same for a JPEG decode's output. */
static void test_decode_output_destroyed_before_the_task(void **state)
{
    uint32_t len, w = 0, h = 0, size = 0;
    void *jpeg = load_fixture("base_420.jpg", &len);
    acldvppPicDesc *out = acldvppCreatePicDesc(), *fresh;
    void *buf;
    const void *addr = out;

    (void)state;
    assert_int_equal(acldvppJpegGetImageInfo(jpeg, len, &w, &h, NULL), ACL_SUCCESS);
    assert_int_equal(acldvppJpegPredictDecSize(jpeg, len, PIXEL_FORMAT_YUV_SEMIPLANAR_420,
                                               &size), ACL_SUCCESS);
    buf = dvpp_alloc(size);
    acldvppSetPicDescData(out, buf);
    acldvppSetPicDescSize(out, size);
    acldvppSetPicDescFormat(out, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    hold_stream();
    assert_int_equal(acldvppJpegDecodeAsync(g_env.chan, jpeg, len, out, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(acldvppDestroyPicDesc(out), ACL_SUCCESS);
    fresh = pic_desc_at(addr);
    if (fresh)
        mark(fresh);
    release_stream();
    if (fresh) {
        expect_mark(fresh);
        assert_int_equal(acldvppDestroyPicDesc(fresh), ACL_SUCCESS);
    }
    acldvppFree(buf);
    acldvppFree(jpeg);
}

/* A batch crop's destination batch destroyed before the task; a new batch
 * of the same size at its address keeps its elements as set. */
static void test_batch_destroyed_before_the_task(void **state)
{
    acldvppBatchPicDesc *src = acldvppCreateBatchPicDesc(1);
    acldvppBatchPicDesc *dst = acldvppCreateBatchPicDesc(2), *fresh[64];
    acldvppRoiConfig *crops[2] = {acldvppCreateRoiConfig(0, 31, 0, 23),
                                  acldvppCreateRoiConfig(32, 63, 24, 47)};
    acldvppPicDesc *s = acldvppGetPicDesc(src, 0);
    uint8_t *sbuf = dvpp_alloc(64 * 48 * 3 / 2), *dbuf[2];
    acldvppPicDesc *elems[2] = {acldvppGetPicDesc(dst, 0), acldvppGetPicDesc(dst, 1)};
    uint32_t roi_nums[1] = {2};
    int n = 0, hit = -1;

    (void)state;
    fill_picture(sbuf, 64, 72, 5);
    acldvppSetPicDescData(s, sbuf);
    acldvppSetPicDescSize(s, 64 * 48 * 3 / 2);
    acldvppSetPicDescFormat(s, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    acldvppSetPicDescWidth(s, 64);
    acldvppSetPicDescHeight(s, 48);
    acldvppSetPicDescWidthStride(s, 64);
    acldvppSetPicDescHeightStride(s, 48);
    for (int i = 0; i < 2; i++) {
        dbuf[i] = dvpp_alloc(32 * 24 * 3 / 2);
        acldvppSetPicDescData(elems[i], dbuf[i]);
        acldvppSetPicDescSize(elems[i], 32 * 24 * 3 / 2);
        acldvppSetPicDescFormat(elems[i], PIXEL_FORMAT_YUV_SEMIPLANAR_420);
        acldvppSetPicDescWidth(elems[i], 32);
        acldvppSetPicDescHeight(elems[i], 24);
        acldvppSetPicDescWidthStride(elems[i], 32);
        acldvppSetPicDescHeightStride(elems[i], 24);
    }
    hold_stream();
    assert_int_equal(acldvppVpcBatchCropAsync(g_env.chan, src, roi_nums, 1, dst, crops,
                                              g_env.stream), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyBatchPicDesc(dst), ACL_SUCCESS);
    /* the elements array is what the task writes into */
    while (n < 64 && hit < 0) {
        fresh[n] = acldvppCreateBatchPicDesc(2);
        assert_non_null(fresh[n]);
        if (acldvppGetPicDesc(fresh[n], 0) == elems[0])
            hit = n;
        n++;
    }
    if (hit >= 0)
        for (int i = 0; i < 2; i++)
            mark(acldvppGetPicDesc(fresh[hit], (uint32_t)i));
    release_stream();
    if (hit >= 0)
        for (int i = 0; i < 2; i++)
            expect_mark(acldvppGetPicDesc(fresh[hit], (uint32_t)i));
    for (int i = 0; i < n; i++)
        assert_int_equal(acldvppDestroyBatchPicDesc(fresh[i]), ACL_SUCCESS);
    for (int i = 0; i < 2; i++) {
        acldvppFree(dbuf[i]);
        acldvppDestroyRoiConfig(crops[i]);
    }
    acldvppFree(sbuf);
    acldvppDestroyBatchPicDesc(src);
}

/* A description destroyed while its task is queued is still a clean
 * destroy: no leak (LSan) and no write after the free (ASan). */
static void test_destroyed_output_is_freed_once(void **state)
{
    acldvppPicDesc *in = nv12(64, 48), *out = nv12(32, 24);
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    void *out_data = acldvppGetPicDescData(out);

    (void)state;
    hold_stream();
    assert_int_equal(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(acldvppDestroyPicDesc(out), ACL_SUCCESS);
    EXPECT_FAIL(acldvppDestroyPicDesc(out), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetPicDescWidth(out), 0);
    release_stream();
    acldvppFree(out_data);
    free_pic(in);
    acldvppDestroyResizeConfig(rc);
}

static int teardown_held(void **state)
{
    if (g_held) {
        g_held = false;
        (void)aclrtProcessReport(2000);
        (void)aclrtUnSubscribeReport((uint64_t)pthread_self(), g_env.stream);
    }
    return teardown_env(state);
}

#define LIFETIME_TESTS                                              \
    cmocka_unit_test(test_resize_output_destroyed_before_the_task), \
    cmocka_unit_test(test_decode_output_destroyed_before_the_task), \
    cmocka_unit_test(test_batch_destroyed_before_the_task),         \
    cmocka_unit_test(test_destroyed_output_is_freed_once)

int main(void)
{
    const struct CMUnitTest tests[] = {LIFETIME_TESTS};
    int failed = 0;

    (void)is_310p; /* test_dvpp_common.h's; every case here runs on both */
    failed += cmocka_run_group_tests_name("lifetime ascend310", tests, setup_310,
                                          teardown_held);
    failed += cmocka_run_group_tests_name("lifetime ascend310p", tests, setup_310p,
                                          teardown_held);
    return failed ? 1 : 0;
}
