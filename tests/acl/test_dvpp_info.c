/* acldvppJpegGetImageInfo(V2), acldvppJpegPredictDecSize,
 * acldvppJpegPredictEncSize, acldvppPngGetImageInfo and
 * acldvppPngPredictDecSize against the numbers of reference §5.4-5.6,
 * computed by hand in the comments, under both profiles. JPEG fixtures
 * (67x45 unless said) come from .cache/testdata/fixtures (cjpeg and Pillow,
 * see its manifest.json); PNG headers are built here. */
#include "test_dvpp_common.h"

/* --- JPEG -------------------------------------------------------------------------- */

static void info_of(const char *name, uint32_t w, uint32_t h, int32_t comps,
                    acldvppJpegFormat fmt)
{
    uint32_t len, gw = 0, gh = 0;
    int32_t gc = 0;
    acldvppJpegFormat gf = (acldvppJpegFormat)-1;
    void *jpg = load_fixture(name, &len);

    assert_int_equal(acldvppJpegGetImageInfoV2(jpg, len, &gw, &gh, &gc, &gf), ACL_SUCCESS);
    assert_int_equal(gw, w);
    assert_int_equal(gh, h);
    assert_int_equal(gc, comps);
    assert_int_equal(gf, fmt);
    gw = gh = 0;
    assert_int_equal(acldvppJpegGetImageInfo(jpg, len, &gw, &gh, NULL), ACL_SUCCESS);
    assert_int_equal(gw, w);
    assert_int_equal(gh, h);
    acldvppFree(jpg);
}

static void test_jpeg_image_info(void **state)
{
    uint8_t junk[32] = {1, 2, 3};
    uint32_t w;

    (void)state;
    info_of("base_420.jpg", 67, 45, 3, ACL_JPEG_CSS_420);
    info_of("base_422.jpg", 67, 45, 3, ACL_JPEG_CSS_422);
    info_of("base_444.jpg", 67, 45, 3, ACL_JPEG_CSS_444);
    info_of("base_440.jpg", 67, 45, 3, ACL_JPEG_CSS_440);
    info_of("gray.jpg", 67, 45, 1, ACL_JPEG_CSS_GRAY);
    info_of("base_411.jpg", 67, 45, 3, ACL_JPEG_CSS_UNKNOWN); /* 4:1:1 is "unknown" */
    info_of("progressive_420.jpg", 67, 45, 3, ACL_JPEG_CSS_420); /* the header only */
    /* stored 45x67 with EXIF orientation 6 (and 5): reported 67x45 */
    info_of("orient_6.jpg", 67, 45, 3, ACL_JPEG_CSS_420);
    info_of("orient_5.jpg", 67, 45, 3, ACL_JPEG_CSS_420);
    info_of("orient_8.jpg", 67, 45, 3, ACL_JPEG_CSS_420);
    info_of("orient_3.jpg", 67, 45, 3, ACL_JPEG_CSS_420); /* 180 degrees: no swap */
    /* every output NULL: success at once */
    assert_int_equal(acldvppJpegGetImageInfoV2(NULL, 0, NULL, NULL, NULL, NULL), ACL_SUCCESS);
    EXPECT_FAIL(acldvppJpegGetImageInfo(junk, sizeof(junk), &w, NULL, NULL), ACL_ERROR_FAILURE);
    EXPECT_FAIL(acldvppJpegGetImageInfo(NULL, 10, &w, NULL, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegGetImageInfo(junk, 0, &w, NULL, NULL), ACL_ERROR_INVALID_PARAM);
}

static void predict(const char *name, acldvppPixelFormat fmt, aclError want, uint32_t size)
{
    uint32_t len, got = 0;
    void *jpg = load_fixture(name, &len);

    if (want == ACL_SUCCESS) {
        assert_int_equal(acldvppJpegPredictDecSize(jpg, len, fmt, &got), ACL_SUCCESS);
        assert_int_equal(got, size);
    } else {
        EXPECT_FAIL(acldvppJpegPredictDecSize(jpg, len, fmt, &got), want);
    }
    acldvppFree(jpg);
}

static void test_jpeg_predict_dec_size(void **state)
{
    /* 67x45: W = ALIGN(67, 128) = 128, H = ALIGN(45, 16) = 48 */
    const uint32_t w = 128, h = 48;
    uint32_t len, got;
    void *jpg;

    (void)state;
    predict("base_420.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_420, ACL_SUCCESS, w * h * 3 / 2);
    predict("base_420.jpg", PIXEL_FORMAT_YVU_SEMIPLANAR_420, ACL_SUCCESS, 9216);
    predict("base_420.jpg", PIXEL_FORMAT_UNKNOWN, ACL_SUCCESS, 9216);
    predict("base_444.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_420, ACL_SUCCESS, 9216);
    predict("base_444.jpg", PIXEL_FORMAT_UNKNOWN, ACL_SUCCESS, w * h * 3);      /* 18432 */
    predict("base_444.jpg", PIXEL_FORMAT_YVU_SEMIPLANAR_444, ACL_SUCCESS, 18432);
    predict("base_422.jpg", PIXEL_FORMAT_UNKNOWN, ACL_SUCCESS, w * h * 2);      /* 12288 */
    predict("base_422.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_422, ACL_SUCCESS, 12288);
    predict("base_440.jpg", PIXEL_FORMAT_UNKNOWN, ACL_SUCCESS, 12288);
    predict("base_440.jpg", PIXEL_FORMAT_YVU_SEMIPLANAR_440, ACL_SUCCESS, 12288);
    predict("gray.jpg", PIXEL_FORMAT_UNKNOWN, ACL_SUCCESS, 9216);              /* as 4:2:0 */
    predict("gray.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_420, ACL_SUCCESS, 9216);
    /* orientation 6: 45x67 stored, 67x45 after the swap -> 128 x 48 */
    predict("orient_6.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_420, ACL_SUCCESS, 9216);
    /* (without the swap it would be ALIGN(45,128) x ALIGN(67,16) = 128 x 80) */
    predict("orient_8.jpg", PIXEL_FORMAT_UNKNOWN, ACL_SUCCESS, 9216);
    /* a sampling pairing that does not exist */
    predict("base_422.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_444, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    predict("base_420.jpg", PIXEL_FORMAT_YVU_SEMIPLANAR_422, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    /* not a JPEGD output at all */
    predict("base_420.jpg", PIXEL_FORMAT_RGB_888, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    predict("base_420.jpg", PIXEL_FORMAT_YUYV_PACKED_422, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    /* YUV400 is a 310P output only */
    if (is_310p())
        predict("gray.jpg", PIXEL_FORMAT_YUV_400, ACL_SUCCESS, 9216);
    else
        predict("gray.jpg", PIXEL_FORMAT_YUV_400, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    /* sides outside [32, 8192] */
    predict("tiny_8x8.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_420, ACL_ERROR_INVALID_PARAM, 0);
    /* colour spaces and flavours JPEGD lacks */
    predict("cmyk.jpg", PIXEL_FORMAT_UNKNOWN, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    predict("progressive_420.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_420, ACL_ERROR_UNSUPPORTED_JPEG, 0);
    /* bad arguments and data */
    jpg = load_fixture("base_420.jpg", &len);
    EXPECT_FAIL(acldvppJpegPredictDecSize(jpg, len, PIXEL_FORMAT_UNKNOWN, NULL),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegPredictDecSize(NULL, len, PIXEL_FORMAT_UNKNOWN, &got),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegPredictDecSize(jpg, 10, PIXEL_FORMAT_UNKNOWN, &got),
                ACL_ERROR_FAILURE);
    ((uint8_t *)jpg)[1] = 0; /* no SOI */
    EXPECT_FAIL(acldvppJpegPredictDecSize(jpg, len, PIXEL_FORMAT_UNKNOWN, &got),
                ACL_ERROR_FAILURE);
    acldvppFree(jpg);
}

static void predict_enc(acldvppPixelFormat fmt, uint32_t w, uint32_t h, uint32_t ws,
                        uint32_t hs, aclError want, uint32_t size)
{
    acldvppPicDesc *d = acldvppCreatePicDesc();
    acldvppJpegeConfig *c = acldvppCreateJpegeConfig();
    uint32_t got = 0;

    acldvppSetPicDescFormat(d, fmt);
    acldvppSetPicDescWidth(d, w);
    acldvppSetPicDescHeight(d, h);
    acldvppSetPicDescWidthStride(d, ws);
    acldvppSetPicDescHeightStride(d, hs);
    if (want == ACL_SUCCESS) {
        assert_int_equal(acldvppJpegPredictEncSize(d, c, &got), ACL_SUCCESS);
        assert_int_equal(got, size);
    } else {
        EXPECT_FAIL(acldvppJpegPredictEncSize(d, c, &got), want);
    }
    acldvppDestroyJpegeConfig(c);
    acldvppDestroyPicDesc(d);
}

static void test_jpeg_predict_enc_size(void **state)
{
    const uint32_t mib2 = 2u << 20;
    acldvppPicDesc *d = acldvppCreatePicDesc();
    acldvppJpegeConfig *c = acldvppCreateJpegeConfig();
    uint32_t got;

    (void)state;
    /* 64*48*3/2 + 640 + 128 = 5376 -> 2 MiB */
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 48, 64, 48, ACL_SUCCESS, mib2);
    /* 1920*1088*3/2 + 768 = 3134208 -> 4 MiB */
    predict_enc(PIXEL_FORMAT_YVU_SEMIPLANAR_420, 1920, 1080, 1920, 1088, ACL_SUCCESS, 2 * mib2);
    /* 4096*4096*3/2 + 768 = 25166592 -> 26 MiB */
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 4096, 4096, 4096, 4096, ACL_SUCCESS, 13 * mib2);
    /* packed: ws*hs; 2048*1024 = 2 MiB exactly, + 768 -> 4 MiB */
    predict_enc(PIXEL_FORMAT_YUYV_PACKED_422, 1024, 1024, 2048, 1024, ACL_SUCCESS, 2 * mib2);
    predict_enc(PIXEL_FORMAT_VYUY_PACKED_422, 64, 40, 128, 40, ACL_SUCCESS, mib2);
    /* heightStride: h itself, or a multiple of 16 above it */
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 46, 64, 48, ACL_SUCCESS, mib2);
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 46, 64, 50, ACL_ERROR_INVALID_PARAM, 0);
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 46, 64, 44, ACL_ERROR_INVALID_PARAM, 0);
    /* widthStride: 16-aligned and >= w for semi-planar; ALIGN(2w,16) for packed */
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 48, 70, 48, ACL_ERROR_INVALID_PARAM, 0);
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 48, 48, 48, ACL_ERROR_INVALID_PARAM, 0);
    predict_enc(PIXEL_FORMAT_YUYV_PACKED_422, 64, 40, 144, 40, ACL_ERROR_INVALID_PARAM, 0);
    /* sides in [32, 8192] */
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 30, 48, 32, 48, ACL_ERROR_INVALID_PARAM, 0);
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 8194, 48, 8208, 48, ACL_ERROR_INVALID_PARAM, 0);
    /* formats */
    predict_enc(PIXEL_FORMAT_RGB_888, 64, 48, 192, 48, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    predict_enc(PIXEL_FORMAT_YUV_SEMIPLANAR_422, 64, 48, 64, 48, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    predict_enc(PIXEL_FORMAT_UNKNOWN, 64, 48, 64, 48, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    acldvppSetPicDescFormat(d, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    acldvppSetPicDescWidth(d, 64);
    acldvppSetPicDescHeight(d, 48);
    acldvppSetPicDescWidthStride(d, 64);
    acldvppSetPicDescHeightStride(d, 48);
    assert_int_equal(acldvppJpegPredictEncSize(d, c, &got), ACL_SUCCESS);
    EXPECT_FAIL(acldvppJpegPredictEncSize(NULL, c, &got), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegPredictEncSize(d, c, NULL), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegPredictEncSize(d, NULL, &got), ACL_ERROR_INVALID_PARAM);
    acldvppDestroyJpegeConfig(c);
    EXPECT_FAIL(acldvppJpegPredictEncSize(d, c, &got), ACL_ERROR_INVALID_PARAM);
    acldvppDestroyPicDesc(d);
    c = acldvppCreateJpegeConfig();
    EXPECT_FAIL(acldvppJpegPredictEncSize(d, c, &got), ACL_ERROR_INVALID_PARAM);
    acldvppDestroyJpegeConfig(c);
}

/* --- PNG ------------------------------------------------------------------------------ */

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;

    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Signature, IHDR, an empty IDAT, IEND: the header PNGD reads (57 bytes). */
static uint32_t png_header(uint8_t *out, uint32_t w, uint32_t h, uint8_t depth, uint8_t ctype)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    uint8_t *ihdr = out + 8;

    memcpy(out, sig, 8);
    put_be32(ihdr, 13);
    memcpy(ihdr + 4, "IHDR", 4);
    put_be32(ihdr + 8, w);
    put_be32(ihdr + 12, h);
    ihdr[16] = depth, ihdr[17] = ctype, ihdr[18] = 0, ihdr[19] = 0, ihdr[20] = 0;
    put_be32(ihdr + 21, crc32_of(ihdr + 4, 17));
    for (int i = 0; i < 2; i++) { /* an empty IDAT, then IEND */
        uint8_t *c = out + 33 + 12 * i;
        put_be32(c, 0);
        memcpy(c + 4, i ? "IEND" : "IDAT", 4);
        put_be32(c + 8, crc32_of(c + 4, 4));
    }
    return 57;
}

static void test_png_image_info(void **state)
{
    uint8_t png[64];
    uint32_t n, w, h;
    int32_t c;
    static const struct {
        uint8_t ctype;
        int32_t comps;
    } kinds[] = {{0, 1}, {4, 2}, {2, 3}, {6, 4}};

    (void)state;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        n = png_header(png, 50, 37, 8, kinds[i].ctype);
        w = h = 0, c = 0;
        assert_int_equal(acldvppPngGetImageInfo(png, n, &w, &h, &c), ACL_SUCCESS);
        assert_int_equal(w, 50);
        assert_int_equal(h, 37);
        assert_int_equal(c, kinds[i].comps);
    }
    n = png_header(png, 5000, 7, 16, 2); /* info does not apply PNGD's size range */
    assert_int_equal(acldvppPngGetImageInfo(png, n, &w, &h, NULL), ACL_SUCCESS);
    assert_int_equal(w, 5000);
    n = png_header(png, 50, 37, 8, 3);
    EXPECT_FAIL(acldvppPngGetImageInfo(png, n, &w, &h, &c), ACL_ERROR_FORMAT_NOT_MATCH);
    n = png_header(png, 50, 37, 8, 2);
    EXPECT_FAIL(acldvppPngGetImageInfo(png, 29, &w, &h, &c), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppPngGetImageInfo(NULL, n, &w, &h, &c), ACL_ERROR_INVALID_PARAM);
    png[3] = 'X';
    EXPECT_FAIL(acldvppPngGetImageInfo(png, n, &w, &h, &c), ACL_ERROR_INVALID_PARAM);
}

static void png_predict(uint32_t w, uint32_t h, uint8_t depth, uint8_t ctype,
                        acldvppPixelFormat fmt, aclError want, uint32_t size)
{
    uint8_t png[64];
    uint32_t n = png_header(png, w, h, depth, ctype), got = 0;

    if (want == ACL_SUCCESS) {
        assert_int_equal(acldvppPngPredictDecSize(png, n, fmt, &got), ACL_SUCCESS);
        assert_int_equal(got, size);
    } else {
        EXPECT_FAIL(acldvppPngPredictDecSize(png, n, fmt, &got), want);
    }
}

static void test_png_predict_dec_size(void **state)
{
    uint8_t png[64];
    uint32_t n = png_header(png, 50, 37, 8, 2);

    (void)state;
    /* 50x37: W = 128, H = 48; RGB rows (128*8*3+7)>>3 = 384 bytes */
    png_predict(50, 37, 8, 2, PIXEL_FORMAT_RGB_888, ACL_SUCCESS, 384 * 48);
    /* RGBA and UNKNOWN rows (128*8*4+7)>>3 = 512 */
    png_predict(50, 37, 8, 2, PIXEL_FORMAT_RGBA_8888, ACL_SUCCESS, 512 * 48);
    png_predict(50, 37, 8, 6, PIXEL_FORMAT_UNKNOWN, ACL_SUCCESS, 512 * 48);
    png_predict(50, 37, 8, 0, PIXEL_FORMAT_UNKNOWN, ACL_SUCCESS, 512 * 48);
    /* 16-bit: (128*16*3+7)>>3 = 768 */
    png_predict(50, 37, 16, 2, PIXEL_FORMAT_RGB_888, ACL_SUCCESS, 768 * 48);
    /* 4096x4096 16-bit RGBA: 32768 * 4096 = 4096*4096*4*2, the largest allowed */
    png_predict(4096, 4096, 16, 6, PIXEL_FORMAT_RGBA_8888, ACL_SUCCESS, 4096u * 4096 * 8);
    /* sides in [32, 4096] */
    png_predict(31, 37, 8, 2, PIXEL_FORMAT_RGB_888, ACL_ERROR_INVALID_PARAM, 0);
    png_predict(50, 4097, 8, 2, PIXEL_FORMAT_RGB_888, ACL_ERROR_INVALID_PARAM, 0);
    /* formats */
    png_predict(50, 37, 8, 2, PIXEL_FORMAT_YUV_SEMIPLANAR_420, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    png_predict(50, 37, 8, 2, PIXEL_FORMAT_BGR_888, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    png_predict(50, 37, 8, 3, PIXEL_FORMAT_RGB_888, ACL_ERROR_FORMAT_NOT_MATCH, 0);
    EXPECT_FAIL(acldvppPngPredictDecSize(png, n, PIXEL_FORMAT_RGB_888, NULL),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppPngPredictDecSize(png, 20, PIXEL_FORMAT_RGB_888, &n),
                ACL_ERROR_INVALID_PARAM);
}

#define INFO_TESTS                                   \
    cmocka_unit_test(test_jpeg_image_info),          \
    cmocka_unit_test(test_jpeg_predict_dec_size),    \
    cmocka_unit_test(test_jpeg_predict_enc_size),    \
    cmocka_unit_test(test_png_image_info),           \
    cmocka_unit_test(test_png_predict_dec_size)

int main(void)
{
    const struct CMUnitTest tests[] = {INFO_TESTS};
    int failed = 0;

    failed += cmocka_run_group_tests_name("info ascend310", tests, setup_310, teardown_env);
    failed += cmocka_run_group_tests_name("info ascend310p", tests, setup_310p, teardown_env);
    return failed ? 1 : 0;
}
