/* The acldvpp descriptions and configs under both profiles: defaults,
 * setters and getters, the NULL and destroyed-handle rules (reference §4.3,
 * §5.10), ROI, resize, JPEGE and batch ranges, the 310P-only objects, the
 * stream description, the channel description's parameters and channels. */
#include "test_dvpp_common.h"

static void test_pic_desc_defaults_and_fields(void **state)
{
    acldvppPicDesc *d = acldvppCreatePicDesc();
    int x;

    (void)state;
    assert_non_null(d);
    assert_null(acldvppGetPicDescData(d));
    assert_int_equal(acldvppGetPicDescSize(d), 0);
    assert_int_equal(acldvppGetPicDescFormat(d), PIXEL_FORMAT_YUV_400);
    assert_int_equal(acldvppGetPicDescWidth(d), 0);
    assert_int_equal(acldvppGetPicDescHeight(d), 0);
    assert_int_equal(acldvppGetPicDescWidthStride(d), 0);
    assert_int_equal(acldvppGetPicDescHeightStride(d), 0);
    assert_int_equal(acldvppGetPicDescRetCode(d), 0);

    assert_int_equal(acldvppSetPicDescData(d, &x), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescSize(d, 1234), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescFormat(d, PIXEL_FORMAT_YVU_SEMIPLANAR_420), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidth(d, 17), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeight(d, 19), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescWidthStride(d, 32), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescHeightStride(d, 20), ACL_SUCCESS);
    assert_int_equal(acldvppSetPicDescRetCode(d, 77), ACL_SUCCESS);
    assert_ptr_equal(acldvppGetPicDescData(d), &x);
    assert_int_equal(acldvppGetPicDescSize(d), 1234);
    assert_int_equal(acldvppGetPicDescFormat(d), PIXEL_FORMAT_YVU_SEMIPLANAR_420);
    assert_int_equal(acldvppGetPicDescWidth(d), 17);
    assert_int_equal(acldvppGetPicDescHeight(d), 19);
    assert_int_equal(acldvppGetPicDescWidthStride(d), 32);
    assert_int_equal(acldvppGetPicDescHeightStride(d), 20);
    assert_int_equal(acldvppGetPicDescRetCode(d), 77);
    /* NULL data is refused and changes nothing */
    EXPECT_FAIL(acldvppSetPicDescData(d, NULL), ACL_ERROR_INVALID_PARAM);
    assert_ptr_equal(acldvppGetPicDescData(d), &x);
    assert_int_equal(acldvppDestroyPicDesc(d), ACL_SUCCESS);

    /* destroyed: setters refuse, getters give defaults, destroy again refuses */
    EXPECT_FAIL(acldvppSetPicDescSize(d, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetPicDescWidth(d, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetPicDescData(d, &x), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetPicDescWidth(d), 0);
    assert_null(acldvppGetPicDescData(d));
    EXPECT_FAIL(acldvppDestroyPicDesc(d), ACL_ERROR_INVALID_PARAM);
}

static void test_pic_desc_null(void **state)
{
    (void)state;
    EXPECT_FAIL(acldvppSetPicDescSize(NULL, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetPicDescFormat(NULL, PIXEL_FORMAT_RGB_888), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetPicDescWidth(NULL, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetPicDescHeight(NULL, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetPicDescWidthStride(NULL, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetPicDescHeightStride(NULL, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetPicDescRetCode(NULL, 1), ACL_ERROR_INVALID_PARAM);
    assert_null(acldvppGetPicDescData(NULL));
    assert_int_equal(acldvppGetPicDescSize(NULL), 0);
    assert_int_equal(acldvppGetPicDescFormat(NULL), PIXEL_FORMAT_YUV_400);
    assert_int_equal(acldvppGetPicDescWidth(NULL), 0);
    assert_int_equal(acldvppGetPicDescHeight(NULL), 0);
    assert_int_equal(acldvppGetPicDescWidthStride(NULL), 0);
    assert_int_equal(acldvppGetPicDescHeightStride(NULL), 0);
    assert_int_equal(acldvppGetPicDescRetCode(NULL), 0);
    assert_int_equal(acldvppDestroyPicDesc(NULL), ACL_SUCCESS);
    /* a pointer that was never a description */
    {
        int x;
        EXPECT_FAIL(acldvppSetPicDescSize((acldvppPicDesc *)&x, 1), ACL_ERROR_INVALID_PARAM);
        EXPECT_FAIL(acldvppDestroyPicDesc((acldvppPicDesc *)&x), ACL_ERROR_INVALID_PARAM);
    }
}

static void test_batch_pic_desc(void **state)
{
    acldvppBatchPicDesc *b;
    acldvppPicDesc *p0, *p255;

    (void)state;
    arm_message();
    assert_null(acldvppCreateBatchPicDesc(0));
    assert_string_not_equal(aclGetRecentErrMsg(), SENTINEL_TEXT);
    assert_null(acldvppCreateBatchPicDesc(257));
    b = acldvppCreateBatchPicDesc(256);
    assert_non_null(b);
    p0 = acldvppGetPicDesc(b, 0);
    p255 = acldvppGetPicDesc(b, 255);
    assert_non_null(p0);
    assert_non_null(p255);
    assert_ptr_not_equal(p0, p255);
    assert_null(acldvppGetPicDesc(b, 256));
    assert_null(acldvppGetPicDesc(NULL, 0));
    /* elements are ordinary descriptions, zeroed */
    assert_int_equal(acldvppGetPicDescWidth(p255), 0);
    assert_int_equal(acldvppSetPicDescWidth(p255, 64), ACL_SUCCESS);
    assert_int_equal(acldvppGetPicDescWidth(p255), 64);
    assert_ptr_equal(acldvppGetPicDesc(b, 255), p255);
    /* borrowed: never destroyed alone */
    EXPECT_FAIL(acldvppDestroyPicDesc(p0), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppSetPicDescHeight(p0, 2), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyBatchPicDesc(b), ACL_SUCCESS);
    /* gone with their batch */
    EXPECT_FAIL(acldvppSetPicDescHeight(p0, 2), ACL_ERROR_INVALID_PARAM);
    assert_null(acldvppGetPicDesc(b, 0));
    EXPECT_FAIL(acldvppDestroyBatchPicDesc(b), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyBatchPicDesc(NULL), ACL_SUCCESS);
    b = acldvppCreateBatchPicDesc(1);
    assert_non_null(acldvppGetPicDesc(b, 0));
    assert_null(acldvppGetPicDesc(b, 1));
    assert_int_equal(acldvppDestroyBatchPicDesc(b), ACL_SUCCESS);
}

static void test_roi_config(void **state)
{
    acldvppRoiConfig *r;

    (void)state;
    /* left, right, top, bottom; 65535 is the largest value */
    r = acldvppCreateRoiConfig(0, 65535, 65535, 65535);
    assert_non_null(r);
    assert_int_equal(acldvppDestroyRoiConfig(r), ACL_SUCCESS);
    arm_message();
    assert_null(acldvppCreateRoiConfig(65536, 1, 0, 1));
    assert_string_not_equal(aclGetRecentErrMsg(), SENTINEL_TEXT);
    assert_null(acldvppCreateRoiConfig(0, 65536, 0, 1));
    assert_null(acldvppCreateRoiConfig(0, 1, 65536, 1));
    assert_null(acldvppCreateRoiConfig(0, 1, 0, 65536));
    r = acldvppCreateRoiConfig(2, 11, 4, 9);
    assert_non_null(r);
    assert_int_equal(acldvppSetRoiConfigLeft(r, 10), ACL_SUCCESS);
    assert_int_equal(acldvppSetRoiConfigRight(r, 65535), ACL_SUCCESS);
    assert_int_equal(acldvppSetRoiConfigTop(r, 0), ACL_SUCCESS);
    assert_int_equal(acldvppSetRoiConfigBottom(r, 1), ACL_SUCCESS);
    EXPECT_FAIL(acldvppSetRoiConfigLeft(r, 65536), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetRoiConfigBottom(r, 70000), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppSetRoiConfig(r, 0, 9, 0, 5), ACL_SUCCESS);
    EXPECT_FAIL(acldvppSetRoiConfig(r, 0, 9, 0, 65536), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetRoiConfig(NULL, 0, 9, 0, 5), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetRoiConfigLeft(NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetRoiConfigRight(NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetRoiConfigTop(NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetRoiConfigBottom(NULL, 0), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyRoiConfig(r), ACL_SUCCESS);
    EXPECT_FAIL(acldvppSetRoiConfigTop(r, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppDestroyRoiConfig(r), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyRoiConfig(NULL), ACL_SUCCESS);
}

static void test_resize_config(void **state)
{
    acldvppResizeConfig *c = acldvppCreateResizeConfig();
    uint32_t max = is_310p() ? 2 : 4;

    (void)state;
    assert_non_null(c);
    assert_int_equal(acldvppGetResizeConfigInterpolation(c), 0);
    for (uint32_t m = 0; m <= max; m++) {
        assert_int_equal(acldvppSetResizeConfigInterpolation(c, m), ACL_SUCCESS);
        assert_int_equal(acldvppGetResizeConfigInterpolation(c), m);
    }
    EXPECT_FAIL(acldvppSetResizeConfigInterpolation(c, max + 1), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetResizeConfigInterpolation(c), max);
    EXPECT_FAIL(acldvppSetResizeConfigInterpolation(c, 5), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetResizeConfigInterpolation(NULL, 0), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetResizeConfigInterpolation(NULL), 0);
    assert_int_equal(acldvppDestroyResizeConfig(c), ACL_SUCCESS);
    assert_int_equal(acldvppGetResizeConfigInterpolation(c), 0);
    EXPECT_FAIL(acldvppDestroyResizeConfig(c), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyResizeConfig(NULL), ACL_SUCCESS);
}

static void test_jpege_config(void **state)
{
    acldvppJpegeConfig *c = acldvppCreateJpegeConfig();

    (void)state;
    assert_non_null(c);
    assert_int_equal(acldvppGetJpegeConfigLevel(c), 0);
    assert_int_equal(acldvppSetJpegeConfigLevel(c, 100), ACL_SUCCESS);
    assert_int_equal(acldvppGetJpegeConfigLevel(c), 100);
    assert_int_equal(acldvppSetJpegeConfigLevel(c, 0), ACL_SUCCESS);
    EXPECT_FAIL(acldvppSetJpegeConfigLevel(c, 101), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetJpegeConfigLevel(c), 0);
    EXPECT_FAIL(acldvppSetJpegeConfigLevel(NULL, 1), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetJpegeConfigLevel(NULL), 0);
    assert_int_equal(acldvppDestroyJpegeConfig(c), ACL_SUCCESS);
    EXPECT_FAIL(acldvppDestroyJpegeConfig(c), ACL_ERROR_INVALID_PARAM);
}

/* Border configs, LUT maps and histograms: the 310P has them, the 310 not. */
static void test_border_lut_hist(void **state)
{
    acldvppBorderConfig *b;
    acldvppLutMap *m;
    acldvppHist *h;
    uint8_t *lut;
    uint32_t *bins, len;
    uint16_t hlen;

    (void)state;
    if (!is_310p()) {
        arm_message();
        assert_null(acldvppCreateBorderConfig());
        assert_string_not_equal(aclGetRecentErrMsg(), SENTINEL_TEXT);
        assert_null(acldvppCreateLutMap());
        assert_null(acldvppCreateHist());
        EXPECT_FAIL(acldvppSetBorderConfigTop(NULL, 1), ACL_ERROR_FEATURE_UNSUPPORTED);
        EXPECT_FAIL(acldvppSetBorderConfigValue(NULL, 0, 1.0), ACL_ERROR_FEATURE_UNSUPPORTED);
        EXPECT_FAIL(acldvppSetBorderConfigBorderType(NULL, BORDER_REPLICATE),
                    ACL_ERROR_FEATURE_UNSUPPORTED);
        EXPECT_FAIL(acldvppDestroyBorderConfig(NULL), ACL_ERROR_FEATURE_UNSUPPORTED);
        EXPECT_FAIL(acldvppGetLutMapData(NULL, 0, &lut, &len), ACL_ERROR_FEATURE_UNSUPPORTED);
        EXPECT_FAIL(acldvppClearHist(NULL), ACL_ERROR_FEATURE_UNSUPPORTED);
        EXPECT_FAIL(acldvppGetHistData(NULL, 0, &bins, &hlen), ACL_ERROR_FEATURE_UNSUPPORTED);
        assert_int_equal(acldvppGetBorderConfigTop(NULL), 0);
        assert_int_equal(acldvppGetLutMapDims(NULL), 0);
        assert_int_equal(acldvppGetHistDims(NULL), 0);
        return;
    }
    b = acldvppCreateBorderConfig();
    assert_non_null(b);
    assert_int_equal(acldvppGetBorderConfigBorderType(b), BORDER_CONSTANT);
    assert_int_equal(acldvppGetBorderConfigTop(b), 0);
    assert_true(acldvppGetBorderConfigValue(b, 0) == 0.0);
    assert_true(acldvppGetBorderConfigValue(b, 4) < 0);
    assert_true(acldvppGetBorderConfigValue(NULL, 0) < 0);
    assert_int_equal(acldvppSetBorderConfigValue(b, 3, 12.5), ACL_SUCCESS);
    assert_true(acldvppGetBorderConfigValue(b, 3) == 12.5);
    EXPECT_FAIL(acldvppSetBorderConfigValue(b, 4, 1.0), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppSetBorderConfigBorderType(b, BORDER_REFLECT_101), ACL_SUCCESS);
    assert_int_equal(acldvppGetBorderConfigBorderType(b), BORDER_REFLECT_101);
    EXPECT_FAIL(acldvppSetBorderConfigBorderType(b, (acldvppBorderType)4),
                ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppSetBorderConfigTop(b, 1), ACL_SUCCESS);
    assert_int_equal(acldvppSetBorderConfigBottom(b, 2), ACL_SUCCESS);
    assert_int_equal(acldvppSetBorderConfigLeft(b, 3), ACL_SUCCESS);
    assert_int_equal(acldvppSetBorderConfigRight(b, 4), ACL_SUCCESS);
    assert_int_equal(acldvppGetBorderConfigTop(b), 1);
    assert_int_equal(acldvppGetBorderConfigBottom(b), 2);
    assert_int_equal(acldvppGetBorderConfigLeft(b), 3);
    assert_int_equal(acldvppGetBorderConfigRight(b), 4);
    EXPECT_FAIL(acldvppSetBorderConfigLeft(NULL, 1), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetBorderConfigBorderType(NULL), BORDER_CONSTANT);
    assert_int_equal(acldvppDestroyBorderConfig(b), ACL_SUCCESS);
    EXPECT_FAIL(acldvppSetBorderConfigTop(b, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppDestroyBorderConfig(b), ACL_ERROR_INVALID_PARAM);

    m = acldvppCreateLutMap();
    assert_non_null(m);
    assert_int_equal(acldvppGetLutMapDims(m), 3);
    assert_int_equal(acldvppGetLutMapData(m, 2, &lut, &len), ACL_SUCCESS);
    assert_int_equal(len, 256);
    assert_int_equal(lut[200], 200);
    EXPECT_FAIL(acldvppGetLutMapData(m, 3, &lut, &len), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppGetLutMapData(m, 0, NULL, &len), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyLutMap(m), ACL_SUCCESS);
    assert_int_equal(acldvppGetLutMapDims(m), 0);

    h = acldvppCreateHist();
    assert_non_null(h);
    assert_int_equal(acldvppGetHistDims(h), 3);
    assert_int_equal(acldvppGetHistData(h, 0, &bins, &hlen), ACL_SUCCESS);
    assert_int_equal(hlen, 256);
    bins[5] = 9;
    assert_int_equal(acldvppClearHist(h), ACL_SUCCESS);
    assert_int_equal(bins[5], 0);
    assert_int_equal(acldvppGetHistRetCode(h), 0);
    EXPECT_FAIL(acldvppGetHistData(h, 3, &bins, &hlen), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyHist(h), ACL_SUCCESS);
    EXPECT_FAIL(acldvppClearHist(h), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetHistRetCode(NULL), 0);
}

static void test_stream_desc(void **state)
{
    acldvppStreamDesc *s = acldvppCreateStreamDesc();
    int x;

    (void)state;
    assert_non_null(s);
    assert_null(acldvppGetStreamDescData(s));
    assert_int_equal(acldvppGetStreamDescSize(s), 0);
    assert_int_equal(acldvppGetStreamDescFormat(s), H265_MAIN_LEVEL);
    assert_int_equal(acldvppGetStreamDescTimestamp(s), 0);
    assert_int_equal(acldvppGetStreamDescRetCode(s), 0);
    assert_int_equal(acldvppGetStreamDescEos(s), 0);
    assert_int_equal(acldvppSetStreamDescData(s, &x), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescSize(s, 99), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescFormat(s, H264_HIGH_LEVEL), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescTimestamp(s, 1ull << 40), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescRetCode(s, 3), ACL_SUCCESS);
    assert_int_equal(acldvppSetStreamDescEos(s, 1), ACL_SUCCESS);
    assert_ptr_equal(acldvppGetStreamDescData(s), &x);
    assert_int_equal(acldvppGetStreamDescSize(s), 99);
    assert_int_equal(acldvppGetStreamDescFormat(s), H264_HIGH_LEVEL);
    assert_true(acldvppGetStreamDescTimestamp(s) == 1ull << 40);
    assert_int_equal(acldvppGetStreamDescRetCode(s), 3);
    assert_int_equal(acldvppGetStreamDescEos(s), 1);
    EXPECT_FAIL(acldvppSetStreamDescFormat(s, (acldvppStreamFormat)4), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetStreamDescSize(NULL, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetStreamDescEos(NULL, 1), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetStreamDescFormat(NULL), H265_MAIN_LEVEL);
    assert_int_equal(acldvppGetStreamDescEos(NULL), 0);
    assert_int_equal(acldvppDestroyStreamDesc(s), ACL_SUCCESS);
    assert_int_equal(acldvppGetStreamDescSize(s), 0);
    EXPECT_FAIL(acldvppDestroyStreamDesc(s), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyStreamDesc(NULL), ACL_SUCCESS);
}

static void test_channel_desc_params(void **state)
{
    acldvppChannelDesc *c = acldvppCreateChannelDesc();
    uint32_t v = 0;
    uint64_t id = 0;
    size_t got = 0;
    acldvppJpegdPrecisionMode pm = ACL_YUVOUT_ALIGN_UP;

    (void)state;
    assert_non_null(c);
    assert_int_equal(acldvppGetChannelDescChannelId(c), 0);
    assert_int_equal(acldvppGetChannelDescParam(c, ACL_DVPP_MODE_UINT32, sizeof(v), &got, &v),
                     ACL_SUCCESS);
    assert_int_equal(got, sizeof(uint32_t));
    assert_int_equal(v, 15); /* all four */
    assert_int_equal(acldvppGetChannelDescParam(c, ACL_DVPP_CSC_MATRIX_UINT32, sizeof(v), &got,
                                                &v), ACL_SUCCESS);
    assert_int_equal(v, ACL_DVPP_CSC_MATRIX_BT601_WIDE);
    if (is_310p()) {
        assert_int_equal(acldvppSetChannelDescMode(c, DVPP_CHNMODE_VPC | DVPP_CHNMODE_PNGD),
                         ACL_SUCCESS);
        EXPECT_FAIL(acldvppSetChannelDescMode(c, 0), ACL_ERROR_INVALID_PARAM);
        EXPECT_FAIL(acldvppSetChannelDescMode(c, 16), ACL_ERROR_INVALID_PARAM);
        assert_int_equal(acldvppGetChannelDescParam(c, ACL_DVPP_MODE_UINT32, 4, &got, &v),
                         ACL_SUCCESS);
        assert_int_equal(v, 9);
        v = 3;
        assert_int_equal(acldvppSetChannelDescParam(c, ACL_DVPP_MODE_UINT32, 4, &v),
                         ACL_SUCCESS);
        EXPECT_FAIL(acldvppSetChannelDescMode(NULL, 1), ACL_ERROR_INVALID_PARAM);
    } else {
        EXPECT_FAIL(acldvppSetChannelDescMode(c, 1), ACL_ERROR_FEATURE_UNSUPPORTED);
        v = 1;
        EXPECT_FAIL(acldvppSetChannelDescParam(c, ACL_DVPP_MODE_UINT32, 4, &v),
                    ACL_ERROR_FEATURE_UNSUPPORTED);
    }
    v = ACL_DVPP_CSC_MATRIX_BT709_NARROW;
    assert_int_equal(acldvppSetChannelDescParam(c, ACL_DVPP_CSC_MATRIX_UINT32, 4, &v),
                     ACL_SUCCESS);
    v = 0;
    assert_int_equal(acldvppGetChannelDescParam(c, ACL_DVPP_CSC_MATRIX_UINT32, 4, &got, &v),
                     ACL_SUCCESS);
    assert_int_equal(v, ACL_DVPP_CSC_MATRIX_BT709_NARROW);
    v = 6;
    EXPECT_FAIL(acldvppSetChannelDescParam(c, ACL_DVPP_CSC_MATRIX_UINT32, 4, &v),
                ACL_ERROR_INVALID_PARAM);
    v = ACL_DVPP_CSC_MATRIX_BT2020_WIDE;
    EXPECT_FAIL(acldvppSetChannelDescParam(c, ACL_DVPP_CSC_MATRIX_UINT32, 4, &v),
                ACL_ERROR_FEATURE_UNSUPPORTED);
    v = 1920;
    assert_int_equal(acldvppSetChannelDescParam(c, ACL_DVPP_CHANNEL_WIDTH_UINT32, 4, &v),
                     ACL_SUCCESS);
    v = 1080;
    assert_int_equal(acldvppSetChannelDescParam(c, ACL_DVPP_CHANNEL_HEIGHT_UINT32, 4, &v),
                     ACL_SUCCESS);
    assert_int_equal(acldvppGetChannelDescParam(c, ACL_DVPP_CHANNEL_WIDTH_UINT32, 8, &got, &v),
                     ACL_SUCCESS);
    assert_int_equal(v, 1920);
    assert_int_equal(acldvppGetChannelDescParam(c, ACL_DVPP_CHANNEL_HEIGHT_UINT32, 4, &got, &v),
                     ACL_SUCCESS);
    assert_int_equal(v, 1080);
    assert_int_equal(acldvppSetChannelDescParam(c, ACL_DVPP_JPEGD_PRECISION_MODE_ENUM,
                                                sizeof(pm), &pm), ACL_SUCCESS);
    pm = ACL_YUVOUT_ALIGN_DOWN;
    assert_int_equal(acldvppGetChannelDescParam(c, ACL_DVPP_JPEGD_PRECISION_MODE_ENUM,
                                                sizeof(pm), &got, &pm), ACL_SUCCESS);
    assert_int_equal(pm, ACL_YUVOUT_ALIGN_UP);
    pm = (acldvppJpegdPrecisionMode)3;
    EXPECT_FAIL(acldvppSetChannelDescParam(c, ACL_DVPP_JPEGD_PRECISION_MODE_ENUM, sizeof(pm),
                                           &pm), ACL_ERROR_INVALID_PARAM);
    /* the id is the library's, read as a uint64_t */
    EXPECT_FAIL(acldvppSetChannelDescParam(c, ACL_DVPP_CHANNEL_ID_UINT64, 8, &id),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppGetChannelDescParam(c, ACL_DVPP_CHANNEL_ID_UINT64, 4, &got, &id),
                ACL_ERROR_INVALID_PARAM);
    /* lengths, NULLs, unknown types */
    EXPECT_FAIL(acldvppSetChannelDescParam(c, ACL_DVPP_CHANNEL_WIDTH_UINT32, 2, &v),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetChannelDescParam(c, ACL_DVPP_CHANNEL_WIDTH_UINT32, 4, NULL),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetChannelDescParam(c, (acldvppChannelDescParamType)6, 4, &v),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppGetChannelDescParam(c, ACL_DVPP_CHANNEL_WIDTH_UINT32, 4, NULL, &v),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppGetChannelDescParam(NULL, ACL_DVPP_CHANNEL_WIDTH_UINT32, 4, &got, &v),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppSetChannelDescParam(NULL, ACL_DVPP_CHANNEL_WIDTH_UINT32, 4, &v),
                ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppGetChannelDescChannelId(NULL), 0);
    assert_int_equal(acldvppDestroyChannelDesc(c), ACL_SUCCESS);
    EXPECT_FAIL(acldvppDestroyChannelDesc(c), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyChannelDesc(NULL), ACL_SUCCESS);
}

/* Ids are process-wide and count up; a channel is created once. */
static void test_channels(void **state)
{
    acldvppChannelDesc *a = acldvppCreateChannelDesc();
    acldvppChannelDesc *b = acldvppCreateChannelDesc();
    uint64_t ida, idb, viaparam = 0;
    size_t got;

    (void)state;
    assert_int_equal(acldvppCreateChannel(a), ACL_SUCCESS);
    assert_int_equal(acldvppCreateChannel(b), ACL_SUCCESS);
    ida = acldvppGetChannelDescChannelId(a);
    idb = acldvppGetChannelDescChannelId(b);
    assert_true(ida >= 1);
    assert_true(idb > ida);
    assert_true(ida > acldvppGetChannelDescChannelId(g_env.chan));
    assert_int_equal(acldvppGetChannelDescParam(b, ACL_DVPP_CHANNEL_ID_UINT64, 8, &got,
                                                &viaparam), ACL_SUCCESS);
    assert_true(viaparam == idb);
    assert_int_equal(got, 8);
    EXPECT_FAIL(acldvppCreateChannel(a), ACL_ERROR_INVALID_PARAM);
    if (is_310p())
        EXPECT_FAIL(acldvppSetChannelDescMode(a, 1), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyChannel(a), ACL_SUCCESS);
    EXPECT_FAIL(acldvppDestroyChannel(a), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppCreateChannel(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppDestroyChannel(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acldvppDestroyChannel(b), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyChannelDesc(a), ACL_SUCCESS);
    assert_int_equal(acldvppDestroyChannelDesc(b), ACL_SUCCESS);
    EXPECT_FAIL(acldvppCreateChannel(a), ACL_ERROR_INVALID_PARAM);
}

/* acldvppMalloc's rounding, registered memory, NULL rules. */
static void test_dvpp_malloc(void **state)
{
    void *p = NULL;

    (void)state;
    assert_int_equal(acldvppMalloc(&p, 100), ACL_SUCCESS);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 128, 0);
    memset(p, 0xAB, (100 + 63) / 32 * 32); /* ALIGN_UP(100, 32) + 32 = 160 bytes */
    assert_int_equal(acldvppFree(p), ACL_SUCCESS);
    EXPECT_FAIL(acldvppFree(p), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppFree(NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppMalloc(NULL, 100), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppMalloc(&p, 0), ACL_ERROR_INVALID_PARAM);
}

#define DESC_TESTS                                      \
    cmocka_unit_test(test_pic_desc_defaults_and_fields), \
    cmocka_unit_test(test_pic_desc_null),               \
    cmocka_unit_test(test_batch_pic_desc),              \
    cmocka_unit_test(test_roi_config),                  \
    cmocka_unit_test(test_resize_config),               \
    cmocka_unit_test(test_jpege_config),                \
    cmocka_unit_test(test_border_lut_hist),             \
    cmocka_unit_test(test_stream_desc),                 \
    cmocka_unit_test(test_channel_desc_params),         \
    cmocka_unit_test(test_channels),                    \
    cmocka_unit_test(test_dvpp_malloc)

int main(void)
{
    const struct CMUnitTest tests[] = {DESC_TESTS};
    int failed = 0;

    failed += cmocka_run_group_tests_name("desc ascend310", tests, setup_310, teardown_env);
    failed += cmocka_run_group_tests_name("desc ascend310p", tests, setup_310p, teardown_env);
    return failed ? 1 : 0;
}
