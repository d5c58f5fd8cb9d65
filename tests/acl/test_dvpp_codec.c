/* acldvppJpegDecodeAsync, acldvppJpegEncodeAsync, acldvppPngDecodeAsync
 * under both profiles: the bytes against libdvpp called directly with the
 * same profile (what dvppctl decode/encode write), the fields written back,
 * and every bad input of issue 15 (documented code and a message). */
#include "test_dvpp_common.h"

#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"

/* libdvpp's own decode of @data, as `dvppctl decode --profile P --format F`. */
static dvpp_image ref_jpeg(const void *data, uint32_t len, dvpp_pixfmt fmt)
{
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image img = {0};

    dvpp_jpeg_decode_opts_init(&o);
    o.format = fmt;
    o.profile = is_310p() ? DVPP_PROFILE_ASCEND310P : DVPP_PROFILE_ASCEND310;
    assert_int_equal(dvpp_jpeg_decode(data, len, &o, &lim, &img, NULL), DVPP_OK);
    return img;
}

static size_t layout_bytes(const dvpp_image *img)
{
    dvpp_planes pl;

    assert_int_equal(dvpp_image_planes(img, &pl, NULL), DVPP_OK);
    return pl.total;
}

/* Decode @name to @fmt through ACL and compare every byte and written-back
 * field with libdvpp's decode. */
static void decode_and_compare(const char *name, acldvppPixelFormat fmt)
{
    uint32_t len;
    void *jpg = load_fixture(name, &len);
    uint32_t out_bytes = 0;
    acldvppPicDesc *out;
    dvpp_image ref;
    size_t total;

    assert_int_equal(acldvppJpegPredictDecSize(jpg, len, fmt, &out_bytes), ACL_SUCCESS);
    out = new_pic(fmt, 0, 0, 0, 0, out_bytes);
    assert_int_equal(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    ref = ref_jpeg(jpg, len, (dvpp_pixfmt)fmt);
    total = layout_bytes(&ref);
    assert_int_equal(acldvppGetPicDescFormat(out), (int)ref.format);
    assert_int_equal(acldvppGetPicDescWidth(out), ref.width);
    assert_int_equal(acldvppGetPicDescHeight(out), ref.height);
    assert_int_equal(acldvppGetPicDescWidthStride(out), ref.width_stride);
    assert_int_equal(acldvppGetPicDescHeightStride(out), ref.height_stride);
    assert_int_equal(acldvppGetPicDescSize(out), total);
    assert_int_equal(acldvppGetPicDescRetCode(out), 0);
    assert_true(total <= out_bytes);
    assert_memory_equal(acldvppGetPicDescData(out), ref.data, total);
    dvpp_image_free(&ref);
    free_pic(out);
    acldvppFree(jpg);
}

static void test_jpeg_decode_matches_libdvpp(void **state)
{
    (void)state;
    decode_and_compare("base_420.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    decode_and_compare("base_420.jpg", PIXEL_FORMAT_YVU_SEMIPLANAR_420);
    decode_and_compare("base_444.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    decode_and_compare("base_422.jpg", PIXEL_FORMAT_YVU_SEMIPLANAR_420);
    decode_and_compare("base_444.jpg", PIXEL_FORMAT_UNKNOWN);
    decode_and_compare("base_422.jpg", PIXEL_FORMAT_UNKNOWN);
    decode_and_compare("base_440.jpg", PIXEL_FORMAT_UNKNOWN);
    decode_and_compare("gray.jpg", PIXEL_FORMAT_UNKNOWN);
    decode_and_compare("orient_6.jpg", PIXEL_FORMAT_YUV_SEMIPLANAR_420);
}

/* The chip's strides and what is written back, by hand (67x45 sources). */
static void test_jpeg_decode_write_back(void **state)
{
    uint32_t len;
    void *jpg = load_fixture("base_444.jpg", &len);
    acldvppPicDesc *out = new_pic(PIXEL_FORMAT_UNKNOWN, 7, 7, 7, 7, 128 * 48 * 3);

    (void)state;
    assert_int_equal(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    /* UNKNOWN keeps 4:4:4 as V-first semi-planar. */
    assert_int_equal(acldvppGetPicDescFormat(out), PIXEL_FORMAT_YVU_SEMIPLANAR_444);
    assert_int_equal(acldvppGetPicDescWidth(out), 67);
    assert_int_equal(acldvppGetPicDescHeight(out), 45);
    assert_int_equal(acldvppGetPicDescWidthStride(out), is_310p() ? 128 : 128);
    assert_int_equal(acldvppGetPicDescHeightStride(out), 48);
    assert_int_equal(acldvppGetPicDescSize(out), 128 * 48 * 3);
    free_pic(out);

    /* 4:4:4 to NV12: 310P rounds odd sizes down to even, 64-byte rows. */
    out = new_pic(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 0, 0, 0, 0, 128 * 48 * 3 / 2);
    assert_int_equal(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    assert_int_equal(acldvppGetPicDescWidth(out), is_310p() ? 66 : 67);
    assert_int_equal(acldvppGetPicDescHeight(out), is_310p() ? 44 : 45);
    assert_int_equal(acldvppGetPicDescWidthStride(out), 128);
    assert_int_equal(acldvppGetPicDescHeightStride(out), 48);
    assert_int_equal(acldvppGetPicDescSize(out), 128 * 48 * 3 / 2);
    free_pic(out);
    acldvppFree(jpg);

    /* Grey on the 310 is NV12 with U = V = 0x80. */
    if (!is_310p()) {
        uint8_t *uv;
        jpg = load_fixture("gray.jpg", &len);
        out = new_pic(PIXEL_FORMAT_UNKNOWN, 0, 0, 0, 0, 128 * 48 * 3 / 2);
        assert_int_equal(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                         ACL_SUCCESS);
        assert_int_equal(sync_stream(), ACL_SUCCESS);
        assert_int_equal(acldvppGetPicDescFormat(out), PIXEL_FORMAT_YUV_SEMIPLANAR_420);
        uv = (uint8_t *)acldvppGetPicDescData(out) + 128 * 48;
        for (int i = 0; i < 68; i++)
            assert_int_equal(uv[i], 0x80);
        free_pic(out);
        acldvppFree(jpg);
    }
}

/* heightStride rows the program never allocated: the rows that exist are
 * written, nothing past the block; too little memory is refused. */
static void test_jpeg_decode_short_buffer(void **state)
{
    uint32_t len;
    void *jpg = load_fixture("base_420.jpg", &len);
    dvpp_image ref = ref_jpeg(jpg, len, DVPP_PIXEL_NV12);
    uint32_t ws = ref.width_stride;
    /* Y ws x 48, then the chroma rows up to the last one's bytes (310:
     * 23 rows, the last 68 bytes; 310P rounds 67x45 down to 66x44). */
    size_t needed = is_310p() ? (size_t)ws * 48 + (size_t)ws * 21 + 66
                              : (size_t)ws * 48 + (size_t)ws * 22 + 68;
    size_t total = (size_t)ws * 48 * 3 / 2;
    acldvppPicDesc *out = acldvppCreatePicDesc();
    uint8_t *buf;
    size_t n = needed - 40; /* acldvppMalloc gives (n + 63) / 32 * 32 */

    (void)state;
    while ((n + 63) / 32 * 32 < needed)
        n++;
    assert_true((n + 63) / 32 * 32 >= needed && (n + 63) / 32 * 32 < total);
    buf = dvpp_alloc(n);
    acldvppSetPicDescData(out, buf);
    acldvppSetPicDescSize(out, (uint32_t)total);
    acldvppSetPicDescFormat(out, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    assert_int_equal(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    assert_memory_equal(buf, ref.data, needed);
    acldvppFree(buf);

    buf = dvpp_alloc(needed - 100); /* the last chroma row is not there */
    acldvppSetPicDescData(out, buf);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppFree(buf);
    acldvppDestroyPicDesc(out);
    dvpp_image_free(&ref);
    acldvppFree(jpg);
}

static void test_jpeg_decode_bad_input(void **state)
{
    uint32_t len, plen;
    void *jpg = load_fixture("base_420.jpg", &len);
    void *prog = load_fixture("progressive_420.jpg", &plen);
    acldvppPicDesc *out = new_pic(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 0, 0, 0, 0, 128 * 48 * 3 / 2);
    acldvppPicDesc *dead = acldvppCreatePicDesc();
    acldvppChannelDesc *idle = acldvppCreateChannelDesc();
    uint8_t junk[64] = {0xFF, 0xD8, 0xFF, 0xE0, 0x00};
    void *arith, *cmyk, *trunc;
    uint32_t alen, clen, tlen;

    (void)state;
    assert_int_equal(acldvppDestroyPicDesc(dead), ACL_SUCCESS);
    EXPECT_FAIL(acldvppJpegDecodeAsync(NULL, jpg, len, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegDecodeAsync(idle, jpg, len, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("not created");
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, NULL, len, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, jpg, 0, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, jpg, len + 4096, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, jpg, len, NULL, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, jpg, len, dead, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    /* size not covering widthStride x heightStride x 3/2 */
    acldvppSetPicDescSize(out, 128 * 48);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("should not be smaller");
    acldvppSetPicDescSize(out, 128 * 48 * 3 / 2);
    /* formats JPEGD cannot write */
    acldvppSetPicDescFormat(out, PIXEL_FORMAT_RGB_888);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    acldvppSetPicDescFormat(out, (acldvppPixelFormat)12345);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    acldvppSetPicDescFormat(out, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    /* JPEGs JPEGD refuses, with DVPP's texts */
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, prog, plen, out, g_env.stream),
                ACL_ERROR_UNSUPPORTED_JPEG);
    expect_message("progressive");
    arith = load_fixture("arithmetic_420.jpg", &alen);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, arith, alen, out, g_env.stream),
                ACL_ERROR_UNSUPPORTED_JPEG);
    expect_message("Huffman");
    cmyk = load_fixture("cmyk.jpg", &clen);
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, cmyk, clen, out, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    /* not a JPEG at all */
    memcpy(acldvppGetPicDescData(out), junk, sizeof(junk));
    EXPECT_FAIL(acldvppJpegDecodeAsync(g_env.chan, acldvppGetPicDescData(out), sizeof(junk),
                                       out, g_env.stream),
                ACL_ERROR_FAILURE);
    /* a JPEG whose entropy data ends early fails when it runs */
    trunc = load_fixture("truncated_420.jpg", &tlen);
    assert_int_equal(acldvppJpegDecodeAsync(g_env.chan, trunc, tlen, out, g_env.stream),
                     ACL_SUCCESS);
    arm_message();
    check_fail(sync_stream(), ACL_ERROR_FAILURE, "sync after a truncated JPEG", __LINE__);
    assert_int_not_equal(acldvppGetPicDescRetCode(out), 0);
    /* the description is still usable afterwards */
    assert_int_equal(acldvppJpegDecodeAsync(g_env.chan, jpg, len, out, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    assert_int_equal(acldvppGetPicDescRetCode(out), 0);

    acldvppFree(trunc);
    acldvppFree(cmyk);
    acldvppFree(arith);
    acldvppDestroyChannelDesc(idle);
    free_pic(out);
    acldvppFree(prog);
    acldvppFree(jpg);
}

/* --- JPEGE --------------------------------------------------------------------------- */

static void encode_and_compare(acldvppPixelFormat fmt, uint32_t w, uint32_t h, uint32_t ws,
                               uint32_t hs, uint32_t level)
{
    uint32_t bytes = fmt == PIXEL_FORMAT_YUV_SEMIPLANAR_420 ||
                             fmt == PIXEL_FORMAT_YVU_SEMIPLANAR_420
                         ? ws * hs * 3 / 2
                         : ws * hs;
    acldvppPicDesc *in = new_pic(fmt, w, h, ws, hs, bytes);
    acldvppJpegeConfig *cfg = acldvppCreateJpegeConfig();
    uint32_t cap = 0, size;
    void *out;
    dvpp_jpeg_encode_opts o;
    dvpp_image img = {(dvpp_pixfmt)fmt, w, h, ws, hs, acldvppGetPicDescData(in), bytes};
    dvpp_buf ref;

    fill_picture(acldvppGetPicDescData(in), ws, bytes / ws, 7);
    assert_int_equal(acldvppSetJpegeConfigLevel(cfg, level), ACL_SUCCESS);
    assert_int_equal(acldvppJpegPredictEncSize(in, cfg, &cap), ACL_SUCCESS);
    out = dvpp_alloc(cap);
    size = cap;
    assert_int_equal(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, cfg, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    dvpp_jpeg_encode_opts_init(&o);
    o.quality = level == 0 ? 100 : (int)level;
    dvpp_buf_init(&ref);
    assert_int_equal(dvpp_jpeg_encode(&img, &o, &ref, NULL), DVPP_OK);
    assert_int_equal(size, ref.len);
    assert_memory_equal(out, ref.data, ref.len);
    assert_int_equal(acldvppGetPicDescRetCode(in), 0);
    dvpp_buf_fini(&ref);
    acldvppFree(out);
    acldvppDestroyJpegeConfig(cfg);
    free_pic(in);
}

static void test_jpeg_encode_matches_libdvpp(void **state)
{
    (void)state;
    encode_and_compare(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 48, 64, 48, 90);
    encode_and_compare(PIXEL_FORMAT_YVU_SEMIPLANAR_420, 66, 46, 80, 48, is_310p() ? 1 : 0);
    encode_and_compare(PIXEL_FORMAT_YUYV_PACKED_422, 64, 40, 128, 40, 50);
    encode_and_compare(PIXEL_FORMAT_UYVY_PACKED_422, 40, 32, 80, 32, 100);
}

static void test_jpeg_encode_bad_input(void **state)
{
    acldvppPicDesc *in = new_pic(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 48, 64, 48, 64 * 48 * 3 / 2);
    acldvppJpegeConfig *cfg = acldvppCreateJpegeConfig();
    acldvppJpegeConfig *dead = acldvppCreateJpegeConfig();
    void *out = dvpp_alloc(1 << 20);
    uint32_t size = 1 << 20, zero = 0, tiny = 100;

    (void)state;
    acldvppDestroyJpegeConfig(dead);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, out, NULL, cfg, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, out, &zero, cfg, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, NULL, &size, cfg, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, NULL, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, dead, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, NULL, out, &size, cfg, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppJpegEncodeAsync(NULL, in, out, &size, cfg, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    /* level 0 (a new config's) is the best on the 310, not a 310P level */
    fill_pattern(acldvppGetPicDescData(in), 64 * 48 * 3 / 2, 4);
    if (is_310p()) {
        EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, cfg, g_env.stream),
                    ACL_ERROR_INVALID_PARAM);
        expect_message("quality 0");
    } else {
        assert_int_equal(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, cfg, g_env.stream),
                         ACL_SUCCESS);
        assert_int_equal(sync_stream(), ACL_SUCCESS);
        size = 1 << 20;
    }
    assert_int_equal(acldvppSetJpegeConfigLevel(cfg, 80), ACL_SUCCESS);
    /* formats JPEGE does not take */
    acldvppSetPicDescFormat(in, PIXEL_FORMAT_RGB_888);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, cfg, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    acldvppSetPicDescFormat(in, PIXEL_FORMAT_YUV_SEMIPLANAR_422);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, cfg, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    acldvppSetPicDescFormat(in, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    /* an unaligned width stride */
    acldvppSetPicDescWidthStride(in, 70);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, cfg, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("16");
    acldvppSetPicDescWidthStride(in, 64);
    /* a size that does not cover the strides */
    acldvppSetPicDescSize(in, 64 * 48);
    EXPECT_FAIL(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, cfg, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetPicDescSize(in, 64 * 48 * 3 / 2);
    /* an output too small fails when the task runs, *size untouched */
    fill_pattern(acldvppGetPicDescData(in), 64 * 48 * 3 / 2, 3);
    assert_int_equal(acldvppJpegEncodeAsync(g_env.chan, in, out, &tiny, cfg, g_env.stream),
                     ACL_SUCCESS);
    arm_message();
    check_fail(sync_stream(), ACL_ERROR_INVALID_PARAM, "sync, JPEG over *size", __LINE__);
    assert_int_equal(tiny, 100);
    assert_int_not_equal(acldvppGetPicDescRetCode(in), 0);
    /* *size larger than the block behind data: the block is the limit */
    {
        void *small = dvpp_alloc(200);
        uint32_t claimed = 1 << 20;
        assert_int_equal(acldvppJpegEncodeAsync(g_env.chan, in, small, &claimed, cfg,
                                                g_env.stream), ACL_SUCCESS);
        arm_message();
        check_fail(sync_stream(), ACL_ERROR_INVALID_PARAM, "sync, JPEG over the block",
                   __LINE__);
        assert_int_equal(claimed, 1 << 20);
        acldvppFree(small);
    }
    /* the description works again after the failures */
    size = 1 << 20;
    assert_int_equal(acldvppJpegEncodeAsync(g_env.chan, in, out, &size, cfg, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    assert_true(size > 100 && size < (1 << 20));
    assert_int_equal(acldvppGetPicDescRetCode(in), 0);

    acldvppFree(out);
    acldvppDestroyJpegeConfig(cfg);
    free_pic(in);
}

/* --- PNGD ------------------------------------------------------------------------------ */

/* A PNG made by libdvpp's encoder from a @fmt @w x @h pattern, in DVPP memory. */
static void *make_png(dvpp_pixfmt fmt, uint32_t w, uint32_t h, uint32_t *len)
{
    dvpp_image img = {0};
    dvpp_png_encode_opts o = {.level = 6};
    dvpp_buf b;
    void *p;

    assert_int_equal(dvpp_image_init(&img, fmt, w, h, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    fill_pattern(img.data, img.size, w * h);
    dvpp_buf_init(&b);
    assert_int_equal(dvpp_png_encode(&img, &o, &b, NULL), DVPP_OK);
    p = dvpp_alloc(b.len);
    memcpy(p, b.data, b.len);
    *len = (uint32_t)b.len;
    dvpp_buf_fini(&b);
    dvpp_image_free(&img);
    return p;
}

static void png_and_compare(dvpp_pixfmt src_fmt, acldvppPixelFormat fmt,
                            acldvppPixelFormat want_fmt)
{
    uint32_t len, bytes = 0;
    void *png = make_png(src_fmt, 50, 37, &len);
    acldvppPicDesc *out;
    dvpp_png_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image ref = {0};

    assert_int_equal(acldvppPngPredictDecSize(png, len, fmt, &bytes), ACL_SUCCESS);
    out = new_pic(fmt, 0, 0, 0, 0, bytes);
    assert_int_equal(acldvppPngDecodeAsync(g_env.chan, png, len, out, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    dvpp_png_decode_opts_init(&o);
    o.profile = is_310p() ? DVPP_PROFILE_ASCEND310P : DVPP_PROFILE_ASCEND310;
    o.format = (dvpp_pixfmt)want_fmt;
    assert_int_equal(dvpp_png_decode(png, len, &o, &lim, &ref, NULL), DVPP_OK);
    assert_int_equal(acldvppGetPicDescFormat(out), want_fmt);
    assert_int_equal(acldvppGetPicDescWidth(out), 50);
    assert_int_equal(acldvppGetPicDescHeight(out), 37);
    assert_int_equal(acldvppGetPicDescWidthStride(out), 128 * (want_fmt == PIXEL_FORMAT_RGB_888 ? 3 : 4));
    assert_int_equal(acldvppGetPicDescHeightStride(out), 48);
    assert_int_equal(acldvppGetPicDescSize(out), layout_bytes(&ref));
    assert_memory_equal(acldvppGetPicDescData(out), ref.data, layout_bytes(&ref));
    dvpp_image_free(&ref);
    free_pic(out);
    acldvppFree(png);
}

static void test_png_decode_matches_libdvpp(void **state)
{
    (void)state;
    png_and_compare(DVPP_PIXEL_RGB, PIXEL_FORMAT_RGB_888, PIXEL_FORMAT_RGB_888);
    png_and_compare(DVPP_PIXEL_RGBA, PIXEL_FORMAT_RGB_888, PIXEL_FORMAT_RGB_888);
    png_and_compare(DVPP_PIXEL_RGBA, PIXEL_FORMAT_UNKNOWN, PIXEL_FORMAT_RGBA_8888);
    png_and_compare(DVPP_PIXEL_RGB, PIXEL_FORMAT_UNKNOWN, PIXEL_FORMAT_RGB_888);
    png_and_compare(DVPP_PIXEL_GRAY, PIXEL_FORMAT_UNKNOWN, PIXEL_FORMAT_RGB_888);
}

static void test_png_decode_bad_input(void **state)
{
    uint32_t len, slen;
    void *png = make_png(DVPP_PIXEL_RGB, 50, 37, &len);
    void *small = make_png(DVPP_PIXEL_RGB, 20, 37, &slen);
    acldvppPicDesc *out = new_pic(PIXEL_FORMAT_RGB_888, 0, 0, 0, 0, 384 * 48);

    (void)state;
    EXPECT_FAIL(acldvppPngDecodeAsync(g_env.chan, NULL, len, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppPngDecodeAsync(g_env.chan, png, len, NULL, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetPicDescFormat(out, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    EXPECT_FAIL(acldvppPngDecodeAsync(g_env.chan, png, len, out, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    acldvppSetPicDescFormat(out, PIXEL_FORMAT_RGB_888);
    acldvppSetPicDescSize(out, 384 * 36);
    EXPECT_FAIL(acldvppPngDecodeAsync(g_env.chan, png, len, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetPicDescSize(out, 384 * 48);
    /* PNGD takes 32..4096 a side */
    EXPECT_FAIL(acldvppPngDecodeAsync(g_env.chan, small, slen, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    /* a damaged signature */
    ((uint8_t *)png)[1] = 'X';
    EXPECT_FAIL(acldvppPngDecodeAsync(g_env.chan, png, len, out, g_env.stream),
                ACL_ERROR_FAILURE);
    free_pic(out);
    acldvppFree(small);
    acldvppFree(png);
}

#define CODEC_TESTS                                             \
    cmocka_unit_test(test_jpeg_decode_matches_libdvpp),         \
    cmocka_unit_test(test_jpeg_decode_write_back),              \
    cmocka_unit_test(test_jpeg_decode_short_buffer),            \
    cmocka_unit_test(test_jpeg_decode_bad_input),               \
    cmocka_unit_test(test_jpeg_encode_matches_libdvpp),         \
    cmocka_unit_test(test_jpeg_encode_bad_input),               \
    cmocka_unit_test(test_png_decode_matches_libdvpp),          \
    cmocka_unit_test(test_png_decode_bad_input)

int main(void)
{
    const struct CMUnitTest tests[] = {CODEC_TESTS};
    int failed = 0;

    failed += cmocka_run_group_tests_name("codec ascend310", tests, setup_310, teardown_env);
    failed += cmocka_run_group_tests_name("codec ascend310p", tests, setup_310p, teardown_env);
    return failed ? 1 : 0;
}
