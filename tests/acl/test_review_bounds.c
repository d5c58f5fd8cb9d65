/* Review tests (libacl_dvpp): the header probes read only the bytes really
 * behind the pointer. A size larger than the acldvppMalloc block holding
 * the data is refused (ACL_ERROR_INVALID_PARAM, as the decoders refuse it)
 * instead of parsing past the block's end. */
#include "test_dvpp_common.h"

/* A DVPP block of 64 bytes ((64 + 63) / 32 * 32 = 96 really there) that
 * starts a JPEG whose first segment claims 256 bytes: the next marker
 * would be read at offset 260. */
static uint8_t *short_jpeg(void)
{
    uint8_t *p = dvpp_alloc(64);

    memcpy(p, "\xFF\xD8\xFF\xE0\x01\x00", 6);
    return p;
}

static void test_jpeg_probes_stay_in_the_block(void **state)
{
    uint8_t *p = short_jpeg();
    uint32_t w = 0, size = 0;

    (void)state;
    EXPECT_FAIL(acldvppJpegGetImageInfo(p, 4096, &w, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    expect_message("end of its block");
    EXPECT_FAIL(acldvppJpegGetImageInfoV2(p, 4096, &w, NULL, NULL, NULL),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegPredictDecSize(p, 4096, PIXEL_FORMAT_YUV_SEMIPLANAR_420, &size),
                ACL_ERROR_INVALID_PARAM);
    expect_message("end of its block");
    /* the bytes that are there: an unparseable header, as before */
    EXPECT_FAIL(acldvppJpegGetImageInfo(p, 96, &w, NULL, NULL), ACL_ERROR_FAILURE);
    acldvppFree(p);
}

static void test_png_probes_stay_in_the_block(void **state)
{
    uint8_t *p = dvpp_alloc(32); /* 64 bytes really there */
    uint32_t w = 0, size = 0;

    (void)state;
    /* signature, IHDR length 13, "IHDR", 64 x 64, 8-bit RGB */
    memcpy(p, "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x40\x00\x00\x00\x40"
              "\x08\x02\x00\x00\x00", 29);
    EXPECT_FAIL(acldvppPngGetImageInfo(p, 1 << 20, &w, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    expect_message("end of its block");
    EXPECT_FAIL(acldvppPngPredictDecSize(p, 1 << 20, PIXEL_FORMAT_RGB_888, &size),
                ACL_ERROR_INVALID_PARAM);
    expect_message("end of its block");
    acldvppFree(p);
}

#define BOUNDS_TESTS                                  \
    cmocka_unit_test(test_jpeg_probes_stay_in_the_block), \
    cmocka_unit_test(test_png_probes_stay_in_the_block)

int main(void)
{
    const struct CMUnitTest tests[] = {BOUNDS_TESTS};
    int failed = 0;

    (void)is_310p; /* test_dvpp_common.h's; every case here runs on both */
    failed += cmocka_run_group_tests_name("bounds ascend310", tests, setup_310, teardown_env);
    failed += cmocka_run_group_tests_name("bounds ascend310p", tests, setup_310p, teardown_env);
    return failed ? 1 : 0;
}
