/* The acldvppVpc* calls under both profiles: every output byte against
 * libdvpp's dvpp_vpc_* called directly with the profile, parity ascend and
 * the same interpolation mode (what dvppctl resize/crop --parity ascend
 * --ascend-mode N writes), pastes leaving the rest of the picture alone,
 * batches in source-major order, the 310P-only calls, and the bad inputs
 * of issue 15 with their documented codes and DVPP's texts. */
#include "test_dvpp_common.h"

#include "dvpp_border.h"
#include "dvpp_cpu.h"
#include "dvpp_vpc.h"

static dvpp_profile profile(void)
{
    return is_310p() ? DVPP_PROFILE_ASCEND310P : DVPP_PROFILE_ASCEND310;
}

static uint32_t nv12_bytes(uint32_t ws, uint32_t hs)
{
    return ws * hs * 3 / 2;
}

/* An NV12 picture with a pattern in every byte. */
static acldvppPicDesc *nv12_pic(uint32_t w, uint32_t h, uint32_t seed)
{
    uint32_t ws = (w + 15) / 16 * 16, hs = (h + 1) / 2 * 2;
    acldvppPicDesc *d = new_pic(PIXEL_FORMAT_YUV_SEMIPLANAR_420, w, h, ws, hs,
                                nv12_bytes(ws, hs));

    fill_picture(acldvppGetPicDescData(d), ws, hs * 3 / 2, seed);
    return d;
}

/* The libdvpp image a description stands for (data borrowed). */
static dvpp_image image_of(const acldvppPicDesc *d)
{
    dvpp_image img = {(dvpp_pixfmt)acldvppGetPicDescFormat(d), acldvppGetPicDescWidth(d),
                      acldvppGetPicDescHeight(d), acldvppGetPicDescWidthStride(d),
                      acldvppGetPicDescHeightStride(d), acldvppGetPicDescData(d),
                      acldvppGetPicDescSize(d)};
    return img;
}

static dvpp_roi roi(uint32_t l, uint32_t r, uint32_t t, uint32_t b)
{
    return (dvpp_roi){.left = l, .top = t, .right = r, .bottom = b};
}

/* libdvpp's crop-resize-paste of @src into a copy of @dst's current bytes. */
static uint8_t *reference(const acldvppPicDesc *src, const dvpp_roi *crop,
                          const acldvppPicDesc *dst, const dvpp_roi *paste, int mode)
{
    dvpp_image s = image_of(src), d = image_of(dst);
    dvpp_resize_opts o;
    dvpp_vpc_ctx c;
    uint8_t *copy = malloc(d.size);

    assert_non_null(copy);
    memcpy(copy, d.data, d.size);
    d.data = copy;
    dvpp_resize_opts_init(&o);
    o.parity = DVPP_PARITY_ASCEND;
    o.ascend_mode = mode;
    dvpp_vpc_ctx_init(&c, profile());
    assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &s, crop, &d, paste, &o, NULL), DVPP_OK);
    dvpp_vpc_ctx_fini(&c);
    return copy;
}

static void expect_bytes(const acldvppPicDesc *d, const uint8_t *want)
{
    assert_memory_equal(acldvppGetPicDescData(d), want, acldvppGetPicDescSize(d));
    assert_int_equal(acldvppGetPicDescRetCode(d), 0);
    free((void *)want);
}

/* --- single calls ------------------------------------------------------------------ */

static void test_resize_every_mode(void **state)
{
    acldvppPicDesc *in = nv12_pic(64, 48, 1);
    acldvppPicDesc *out = nv12_pic(40, 30, 2);
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    uint32_t max = is_310p() ? 2 : 4;

    (void)state;
    for (uint32_t m = 0; m <= max; m++) {
        uint8_t *want;
        assert_int_equal(acldvppSetResizeConfigInterpolation(rc, m), ACL_SUCCESS);
        want = reference(in, NULL, out, NULL, (int)m);
        assert_int_equal(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                         ACL_SUCCESS);
        assert_int_equal(sync_stream(), ACL_SUCCESS);
        expect_bytes(out, want);
    }
    /* an upscale too */
    free_pic(out);
    out = nv12_pic(96, 80, 3);
    assert_int_equal(acldvppSetResizeConfigInterpolation(rc, 1), ACL_SUCCESS);
    {
        uint8_t *want = reference(in, NULL, out, NULL, 1);
        assert_int_equal(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                         ACL_SUCCESS);
        assert_int_equal(sync_stream(), ACL_SUCCESS);
        expect_bytes(out, want);
    }
    acldvppDestroyResizeConfig(rc);
    free_pic(out);
    free_pic(in);
}

static void test_crop_and_crop_resize(void **state)
{
    acldvppPicDesc *in = nv12_pic(64, 48, 4);
    acldvppPicDesc *same = nv12_pic(32, 24, 5);
    acldvppPicDesc *bigger = nv12_pic(48, 36, 6);
    acldvppRoiConfig *r = acldvppCreateRoiConfig(10, 41, 4, 27); /* 32 x 24 */
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    dvpp_roi cr = roi(10, 41, 4, 27);
    uint8_t *want;

    (void)state;
    want = reference(in, &cr, same, NULL, 0);
    assert_int_equal(acldvppVpcCropAsync(g_env.chan, in, same, r, g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    expect_bytes(same, want);
    /* crop scaled to the whole output */
    want = reference(in, &cr, bigger, NULL, 0);
    assert_int_equal(acldvppVpcCropAsync(g_env.chan, in, bigger, r, g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    expect_bytes(bigger, want);
    acldvppSetResizeConfigInterpolation(rc, 2);
    want = reference(in, &cr, bigger, NULL, 2);
    assert_int_equal(acldvppVpcCropResizeAsync(g_env.chan, in, bigger, r, rc, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    expect_bytes(bigger, want);
    acldvppDestroyResizeConfig(rc);
    acldvppDestroyRoiConfig(r);
    free_pic(bigger);
    free_pic(same);
    free_pic(in);
}

/* Pasting writes the paste ROI only; the rest of the canvas stays. */
static void test_crop_and_paste_keeps_the_canvas(void **state)
{
    acldvppPicDesc *in = nv12_pic(64, 48, 7);
    acldvppPicDesc *canvas = nv12_pic(96, 64, 8);
    acldvppRoiConfig *crop = acldvppCreateRoiConfig(2, 33, 0, 23);    /* 32 x 24 */
    acldvppRoiConfig *paste = acldvppCreateRoiConfig(16, 47, 8, 31);  /* 32 x 24 */
    acldvppRoiConfig *big = acldvppCreateRoiConfig(32, 79, 10, 45);   /* 48 x 36 */
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    dvpp_roi cr = roi(2, 33, 0, 23), pr = roi(16, 47, 8, 31), br = roi(32, 79, 10, 45);
    uint8_t *before = malloc(acldvppGetPicDescSize(canvas)), *want;
    const uint8_t *px = acldvppGetPicDescData(canvas);

    (void)state;
    memcpy(before, px, acldvppGetPicDescSize(canvas));
    want = reference(in, &cr, canvas, &pr, 0);
    assert_int_equal(acldvppVpcCropAndPasteAsync(g_env.chan, in, canvas, crop, paste,
                                                 g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    /* rows above the paste and the pixels left of it are the canvas' */
    assert_memory_equal(px, before, 96 * 8);
    assert_memory_equal(px + 96 * 20, before + 96 * 20, 16);
    assert_memory_not_equal(px + 96 * 20 + 16, before + 96 * 20 + 16, 32);
    expect_bytes(canvas, want);
    acldvppSetResizeConfigInterpolation(rc, 1);
    want = reference(in, &cr, canvas, &br, 1);
    assert_int_equal(acldvppVpcCropResizePasteAsync(g_env.chan, in, canvas, crop, big, rc,
                                                    g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    expect_bytes(canvas, want);
    free(before);
    acldvppDestroyResizeConfig(rc);
    acldvppDestroyRoiConfig(big);
    acldvppDestroyRoiConfig(paste);
    acldvppDestroyRoiConfig(crop);
    free_pic(canvas);
    free_pic(in);
}

/* Other input formats, and RGB outputs where the chip has them. */
static void test_formats(void **state)
{
    acldvppPicDesc *rgb = new_pic(PIXEL_FORMAT_RGB_888, 40, 30, 128, 30, 128 * 30);
    acldvppPicDesc *yuyv = new_pic(PIXEL_FORMAT_YUYV_PACKED_422, 40, 30, 80, 30, 80 * 30);
    acldvppPicDesc *out = nv12_pic(32, 24, 9);
    acldvppPicDesc *rgb_out = new_pic(PIXEL_FORMAT_BGR_888, 32, 24, 96, 24, 96 * 24);
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    uint8_t *want;

    (void)state;
    fill_picture(acldvppGetPicDescData(rgb), 128, 30, 10);
    fill_picture(acldvppGetPicDescData(yuyv), 80, 30, 11);
    acldvppSetResizeConfigInterpolation(rc, 1);
    want = reference(rgb, NULL, out, NULL, 1);
    assert_int_equal(acldvppVpcResizeAsync(g_env.chan, rgb, out, rc, g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    expect_bytes(out, want);
    want = reference(yuyv, NULL, out, NULL, 1);
    assert_int_equal(acldvppVpcResizeAsync(g_env.chan, yuyv, out, rc, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    expect_bytes(out, want);
    if (is_310p()) {
        want = reference(out, NULL, rgb_out, NULL, 1);
        assert_int_equal(acldvppVpcResizeAsync(g_env.chan, out, rgb_out, rc, g_env.stream),
                         ACL_SUCCESS);
        assert_int_equal(sync_stream(), ACL_SUCCESS);
        expect_bytes(rgb_out, want);
    } else {
        /* Ascend 310 VPC writes YUV420SP only */
        EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, out, rgb_out, rc, g_env.stream),
                    ACL_ERROR_FORMAT_NOT_MATCH);
        expect_message("output format");
    }
    acldvppDestroyResizeConfig(rc);
    free_pic(rgb_out);
    free_pic(out);
    free_pic(yuyv);
    free_pic(rgb);
}

/* A heightStride above the rows allocated: only the rows that exist are
 * read (and written), and the result is the whole picture's. */
static void test_over_declared_height_stride(void **state)
{
    /* 64x48 NV12 declared with heightStride 64: Y 64x64, UV at 4096, 24 rows */
    uint32_t needed = 64 * 64 + 64 * 24, total = nv12_bytes(64, 64), n = needed - 32;
    acldvppPicDesc *in = acldvppCreatePicDesc();
    acldvppPicDesc *out = nv12_pic(32, 24, 12);
    acldvppPicDesc *full;
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    uint8_t *buf, *want;

    (void)state;
    while ((n + 63) / 32 * 32 < needed)
        n++;
    assert_true((n + 63) / 32 * 32 < total);
    buf = dvpp_alloc(n);
    fill_picture(buf, 64, n / 64, 13);
    acldvppSetPicDescData(in, buf);
    acldvppSetPicDescSize(in, total);
    acldvppSetPicDescFormat(in, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    acldvppSetPicDescWidth(in, 64);
    acldvppSetPicDescHeight(in, 48);
    acldvppSetPicDescWidthStride(in, 64);
    acldvppSetPicDescHeightStride(in, 64);
    /* the same pixels in a buffer that has every row */
    full = new_pic(PIXEL_FORMAT_YUV_SEMIPLANAR_420, 64, 48, 64, 64, total);
    memcpy(acldvppGetPicDescData(full), buf, needed);
    want = reference(full, NULL, out, NULL, 1);
    acldvppSetResizeConfigInterpolation(rc, 1);
    assert_int_equal(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    expect_bytes(out, want);
    /* too few rows for the chroma plane: refused before anything runs */
    acldvppFree(buf);
    buf = dvpp_alloc(needed - 200);
    acldvppSetPicDescData(in, buf);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppFree(buf);
    acldvppDestroyPicDesc(in);
    acldvppDestroyResizeConfig(rc);
    free_pic(full);
    free_pic(out);
}

static void test_vpc_bad_input(void **state)
{
    acldvppPicDesc *in = nv12_pic(64, 48, 14);
    acldvppPicDesc *out = nv12_pic(32, 24, 15);
    acldvppPicDesc *dead = acldvppCreatePicDesc();
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    acldvppResizeConfig *dead_rc = acldvppCreateResizeConfig();
    acldvppRoiConfig *r = acldvppCreateRoiConfig(0, 31, 0, 23);
    acldvppRoiConfig *odd = acldvppCreateRoiConfig(1, 32, 0, 23);
    acldvppRoiConfig *outside = acldvppCreateRoiConfig(40, 71, 0, 23);
    acldvppRoiConfig *paste = acldvppCreateRoiConfig(8, 19, 0, 11);
    acldvppChannelDesc *idle = acldvppCreateChannelDesc();

    (void)state;
    acldvppDestroyPicDesc(dead);
    acldvppDestroyResizeConfig(dead_rc);
    EXPECT_FAIL(acldvppVpcResizeAsync(NULL, in, out, rc, g_env.stream), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcResizeAsync(idle, in, out, rc, g_env.stream), ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, NULL, out, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, NULL, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, NULL, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, dead, out, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, dead, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, dead_rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcCropAsync(g_env.chan, in, out, NULL, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcCropAndPasteAsync(g_env.chan, in, out, r, NULL, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    /* a crop outside the picture */
    EXPECT_FAIL(acldvppVpcCropAsync(g_env.chan, in, out, outside, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("inputArea");
    /* ROI parity: the 310 wants even left/top, odd right/bottom for YUV420SP */
    if (is_310p()) {
        assert_int_equal(acldvppVpcCropAsync(g_env.chan, in, out, odd, g_env.stream),
                         ACL_SUCCESS);
        assert_int_equal(sync_stream(), ACL_SUCCESS);
    } else {
        EXPECT_FAIL(acldvppVpcCropAsync(g_env.chan, in, out, odd, g_env.stream),
                    ACL_ERROR_INVALID_PARAM);
        expect_message("leftOffset is 1, it should be even!");
    }
    /* a paste left edge off the 16 grid */
    EXPECT_FAIL(acldvppVpcCropAndPasteAsync(g_env.chan, in, out, r, paste, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("16 aligned");
    /* an unaligned width stride */
    acldvppSetPicDescWidthStride(in, 72);
    acldvppSetPicDescSize(in, nv12_bytes(72, 48));
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("Input widthStride(72) is not right, it should be 16 aligned!");
    acldvppSetPicDescWidthStride(in, 64);
    /* a size that does not cover widthStride x heightStride x 3/2 */
    acldvppSetPicDescSize(in, 64 * 48);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("bufferSize");
    acldvppSetPicDescSize(in, nv12_bytes(64, 48));
    acldvppSetPicDescSize(out, 100);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetPicDescSize(out, nv12_bytes(32, 24));
    /* a heightStride whose chroma plane lies past the end of the block */
    acldvppSetPicDescHeightStride(in, 80);
    acldvppSetPicDescSize(in, nv12_bytes(64, 80));
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("to the end of its block");
    acldvppSetPicDescHeightStride(in, 48);
    acldvppSetPicDescSize(in, nv12_bytes(64, 48));
    /* formats: unknown values and ones VPC lacks */
    acldvppSetPicDescFormat(in, (acldvppPixelFormat)777);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    acldvppSetPicDescFormat(in, PIXEL_FORMAT_YVU_PLANAR_420);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    acldvppSetPicDescFormat(in, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    acldvppSetPicDescFormat(out, PIXEL_FORMAT_YUYV_PACKED_422);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    acldvppSetPicDescFormat(out, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    /* odd output sizes for YUV420SP, sizes under 10x6 */
    acldvppSetPicDescWidth(out, 31);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetPicDescWidth(out, 8);
    EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetPicDescWidth(out, 32);
    /* scale beyond [1/32, 16]: 10 -> 192 */
    {
        acldvppPicDesc *wide = nv12_pic(192, 24, 28);
        acldvppSetPicDescWidth(in, 10);
        EXPECT_FAIL(acldvppVpcResizeAsync(g_env.chan, in, wide, rc, g_env.stream),
                    ACL_ERROR_INVALID_PARAM);
        expect_message("[1/32, 16]");
        free_pic(wide);
    }
    /* everything back as it was: the descriptions still work */
    acldvppSetPicDescWidth(in, 64);
    acldvppSetPicDescHeight(in, 48);
    assert_int_equal(acldvppVpcResizeAsync(g_env.chan, in, out, rc, g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);

    acldvppDestroyChannelDesc(idle);
    acldvppDestroyRoiConfig(paste);
    acldvppDestroyRoiConfig(outside);
    acldvppDestroyRoiConfig(odd);
    acldvppDestroyRoiConfig(r);
    acldvppDestroyResizeConfig(rc);
    free_pic(out);
    free_pic(in);
}

/* --- batches ------------------------------------------------------------------------------ */

/* Fill batch element @i as a @w x @h NV12 picture of its own memory. */
static void batch_nv12(acldvppBatchPicDesc *b, uint32_t i, uint32_t w, uint32_t h,
                       uint32_t seed)
{
    acldvppPicDesc *d = acldvppGetPicDesc(b, i);
    uint32_t ws = (w + 15) / 16 * 16, hs = (h + 1) / 2 * 2;
    void *p = dvpp_alloc(nv12_bytes(ws, hs));

    fill_picture(p, ws, hs * 3 / 2, seed);
    acldvppSetPicDescData(d, p);
    acldvppSetPicDescSize(d, nv12_bytes(ws, hs));
    acldvppSetPicDescFormat(d, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    acldvppSetPicDescWidth(d, w);
    acldvppSetPicDescHeight(d, h);
    acldvppSetPicDescWidthStride(d, ws);
    acldvppSetPicDescHeightStride(d, hs);
}

static void batch_free(acldvppBatchPicDesc *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        acldvppFree(acldvppGetPicDescData(acldvppGetPicDesc(b, i)));
    acldvppDestroyBatchPicDesc(b);
}

static void test_batch_crop_resize_paste(void **state)
{
    acldvppBatchPicDesc *src = acldvppCreateBatchPicDesc(2);
    acldvppBatchPicDesc *dst = acldvppCreateBatchPicDesc(3);
    uint32_t nums[2] = {2, 1};
    acldvppRoiConfig *crops[3], *pastes[3];
    dvpp_roi cr[3] = {roi(0, 31, 0, 23), roi(10, 63, 6, 47), roi(4, 45, 2, 31)};
    dvpp_roi pr[3] = {roi(0, 31, 0, 23), roi(16, 47, 8, 31), roi(0, 47, 0, 35)};
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    const uint32_t srcs_of[3] = {0, 0, 1};
    uint8_t *want[3];

    (void)state;
    batch_nv12(src, 0, 64, 48, 16);
    batch_nv12(src, 1, 80, 40, 17);
    for (uint32_t k = 0; k < 3; k++) {
        batch_nv12(dst, k, 48, 36, 18 + k);
        crops[k] = acldvppCreateRoiConfig(cr[k].left, cr[k].right, cr[k].top, cr[k].bottom);
        pastes[k] = acldvppCreateRoiConfig(pr[k].left, pr[k].right, pr[k].top, pr[k].bottom);
    }
    /* crop-resize: each ROI scaled to its whole output */
    acldvppSetResizeConfigInterpolation(rc, 1);
    for (uint32_t k = 0; k < 3; k++)
        want[k] = reference(acldvppGetPicDesc(src, srcs_of[k]), &cr[k],
                            acldvppGetPicDesc(dst, k), NULL, 1);
    assert_int_equal(acldvppVpcBatchCropResizeAsync(g_env.chan, src, nums, 2, dst, crops, rc,
                                                    g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    for (uint32_t k = 0; k < 3; k++)
        expect_bytes(acldvppGetPicDesc(dst, k), want[k]);
    /* crop-resize-paste, mode 2 */
    acldvppSetResizeConfigInterpolation(rc, 2);
    for (uint32_t k = 0; k < 3; k++)
        want[k] = reference(acldvppGetPicDesc(src, srcs_of[k]), &cr[k],
                            acldvppGetPicDesc(dst, k), &pr[k], 2);
    assert_int_equal(acldvppVpcBatchCropResizePasteAsync(g_env.chan, src, nums, 2, dst, crops,
                                                         pastes, rc, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    for (uint32_t k = 0; k < 3; k++)
        expect_bytes(acldvppGetPicDesc(dst, k), want[k]);
    /* crop and crop-and-paste: the chip's default mode 0 */
    for (uint32_t k = 0; k < 3; k++)
        want[k] = reference(acldvppGetPicDesc(src, srcs_of[k]), &cr[k],
                            acldvppGetPicDesc(dst, k), NULL, 0);
    assert_int_equal(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 2, dst, crops,
                                              g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    for (uint32_t k = 0; k < 3; k++)
        expect_bytes(acldvppGetPicDesc(dst, k), want[k]);
    for (uint32_t k = 0; k < 3; k++)
        want[k] = reference(acldvppGetPicDesc(src, srcs_of[k]), &cr[k],
                            acldvppGetPicDesc(dst, k), &pr[k], 0);
    assert_int_equal(acldvppVpcBatchCropAndPasteAsync(g_env.chan, src, nums, 2, dst, crops,
                                                      pastes, g_env.stream), ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    for (uint32_t k = 0; k < 3; k++)
        expect_bytes(acldvppGetPicDesc(dst, k), want[k]);

    /* bad batches */
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, NULL, 2, dst, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 0, dst, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 3, dst, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, NULL, nums, 2, dst, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 2, NULL, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 2, dst, NULL, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(acldvppVpcBatchCropAndPasteAsync(g_env.chan, src, nums, 2, dst, crops, NULL,
                                                 g_env.stream), ACL_ERROR_INVALID_PARAM);
    nums[1] = 2; /* 4 ROIs, 3 outputs */
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 2, dst, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("destination batch");
    nums[1] = 0;
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 2, dst, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    nums[0] = 300, nums[1] = 1;
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 2, dst, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("256");
    nums[0] = 2;
    acldvppDestroyRoiConfig(crops[2]);
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 2, dst, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("cropAreas[2]");
    crops[2] = acldvppCreateRoiConfig(4, 95, 2, 31); /* outside the 80-wide source 1 */
    EXPECT_FAIL(acldvppVpcBatchCropAsync(g_env.chan, src, nums, 2, dst, crops, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    expect_message("roi 2");

    for (uint32_t k = 0; k < 3; k++) {
        acldvppDestroyRoiConfig(crops[k]);
        acldvppDestroyRoiConfig(pastes[k]);
    }
    acldvppDestroyResizeConfig(rc);
    batch_free(dst, 3);
    batch_free(src, 2);
}

/* --- 310P-only calls ---------------------------------------------------------------------- */

static void test_310p_only_calls(void **state)
{
    acldvppPicDesc *in = nv12_pic(64, 48, 21);
    acldvppPicDesc *out = nv12_pic(64, 48, 22);
    acldvppBatchPicDesc *src = acldvppCreateBatchPicDesc(1);
    acldvppBatchPicDesc *dst = acldvppCreateBatchPicDesc(1);
    acldvppRoiConfig *crops[1] = {acldvppCreateRoiConfig(0, 31, 0, 23)};
    acldvppResizeConfig *rc = acldvppCreateResizeConfig();
    uint32_t nums[1] = {1};

    (void)state;
    if (is_310p()) {
        free_pic(out);
        acldvppDestroyRoiConfig(crops[0]);
        acldvppDestroyResizeConfig(rc);
        free_pic(in);
        acldvppDestroyBatchPicDesc(src);
        acldvppDestroyBatchPicDesc(dst);
        EXPECT_FAIL(acldvppVpcEqualizeHistAsync(g_env.chan, NULL, NULL, NULL, g_env.stream),
                    ACL_ERROR_FEATURE_UNSUPPORTED);
        EXPECT_FAIL(acldvppVpcCalcHistAsync(g_env.chan, NULL, NULL, NULL, g_env.stream),
                    ACL_ERROR_FEATURE_UNSUPPORTED);
        return;
    }
    EXPECT_FAIL(acldvppVpcConvertColorAsync(g_env.chan, in, out, g_env.stream),
                ACL_ERROR_FEATURE_UNSUPPORTED);
    EXPECT_FAIL(acldvppVpcPyrDownAsync(g_env.chan, in, out, NULL, g_env.stream),
                ACL_ERROR_FEATURE_UNSUPPORTED);
    EXPECT_FAIL(acldvppVpcMakeBorderAsync(g_env.chan, in, out, NULL, g_env.stream),
                ACL_ERROR_FEATURE_UNSUPPORTED);
    EXPECT_FAIL(acldvppVpcEqualizeHistAsync(g_env.chan, in, out, NULL, g_env.stream),
                ACL_ERROR_FEATURE_UNSUPPORTED);
    EXPECT_FAIL(acldvppVpcCalcHistAsync(g_env.chan, in, NULL, NULL, g_env.stream),
                ACL_ERROR_FEATURE_UNSUPPORTED);
    EXPECT_FAIL(acldvppVpcBatchCropResizeMakeBorderAsync(g_env.chan, src, nums, 1, dst, crops,
                                                         NULL, rc, g_env.stream),
                ACL_ERROR_FEATURE_UNSUPPORTED);
    acldvppDestroyRoiConfig(crops[0]);
    acldvppDestroyResizeConfig(rc);
    acldvppDestroyBatchPicDesc(src);
    acldvppDestroyBatchPicDesc(dst);
    free_pic(out);
    free_pic(in);
}

static void test_make_border(void **state)
{
    acldvppPicDesc *in, *out;
    acldvppBorderConfig *b;
    dvpp_border db = {0};
    dvpp_image s, d;
    dvpp_vpc_ctx c;
    uint8_t *want;

    (void)state;
    if (!is_310p())
        return; /* test_310p_only_calls */
    in = new_pic(PIXEL_FORMAT_RGB_888, 40, 30, 128, 30, 128 * 30);
    out = new_pic(PIXEL_FORMAT_RGB_888, 40 + 3 + 5, 30 + 2 + 4, 144, 36, 144 * 36);
    fill_picture(acldvppGetPicDescData(in), 128, 30, 23);
    b = acldvppCreateBorderConfig();
    acldvppSetBorderConfigTop(b, 2);
    acldvppSetBorderConfigBottom(b, 4);
    acldvppSetBorderConfigLeft(b, 3);
    acldvppSetBorderConfigRight(b, 5);
    for (int type = BORDER_CONSTANT; type <= BORDER_REFLECT_101; type++) {
        acldvppSetBorderConfigBorderType(b, (acldvppBorderType)type);
        acldvppSetBorderConfigValue(b, 0, 10.0);
        acldvppSetBorderConfigValue(b, 1, 200.0);
        acldvppSetBorderConfigValue(b, 2, 77.0);
        db = (dvpp_border){2, 4, 3, 5, (dvpp_border_type)type, {10.0, 200.0, 77.0, 0.0},
                           dvpp_simd_active()};
        s = image_of(in), d = image_of(out);
        want = malloc(d.size);
        memcpy(want, d.data, d.size);
        d.data = want;
        dvpp_vpc_ctx_init(&c, profile());
        assert_int_equal(dvpp_vpc_make_border(&c, &s, &d, &db, NULL), DVPP_OK);
        dvpp_vpc_ctx_fini(&c);
        assert_int_equal(acldvppVpcMakeBorderAsync(g_env.chan, in, out, b, g_env.stream),
                         ACL_SUCCESS);
        assert_int_equal(sync_stream(), ACL_SUCCESS);
        if (type == BORDER_CONSTANT) { /* the constant border is the value given */
            assert_int_equal(((uint8_t *)acldvppGetPicDescData(out))[0], 10);
            assert_int_equal(((uint8_t *)acldvppGetPicDescData(out))[1], 200);
            assert_int_equal(((uint8_t *)acldvppGetPicDescData(out))[2], 77);
        }
        expect_bytes(out, want);
    }
    EXPECT_FAIL(acldvppVpcMakeBorderAsync(g_env.chan, in, out, NULL, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetBorderConfigRight(b, 6); /* no longer the output's size */
    EXPECT_FAIL(acldvppVpcMakeBorderAsync(g_env.chan, in, out, b, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppDestroyBorderConfig(b);
    free_pic(out);
    free_pic(in);
}

/* Crop, resize into the output less its margins, then the border. */
static void test_batch_crop_resize_make_border(void **state)
{
    acldvppBatchPicDesc *src, *dst;
    acldvppRoiConfig *crops[2];
    acldvppBorderConfig *borders[2];
    acldvppResizeConfig *rc;
    uint32_t nums[1] = {2};

    (void)state;
    if (!is_310p())
        return;
    src = acldvppCreateBatchPicDesc(1);
    dst = acldvppCreateBatchPicDesc(2);
    rc = acldvppCreateResizeConfig();
    batch_nv12(src, 0, 64, 48, 24);
    batch_nv12(dst, 0, 48, 36, 25);
    batch_nv12(dst, 1, 48, 36, 26);
    crops[0] = acldvppCreateRoiConfig(0, 31, 0, 23);
    crops[1] = acldvppCreateRoiConfig(16, 63, 12, 47);
    for (int k = 0; k < 2; k++) {
        borders[k] = acldvppCreateBorderConfig();
        acldvppSetBorderConfigTop(borders[k], 2);
        acldvppSetBorderConfigBottom(borders[k], 4);
        acldvppSetBorderConfigLeft(borders[k], 6);
        acldvppSetBorderConfigRight(borders[k], 2);
        acldvppSetBorderConfigBorderType(borders[k], k ? BORDER_REPLICATE : BORDER_CONSTANT);
    }
    acldvppSetResizeConfigInterpolation(rc, 1);
    assert_int_equal(acldvppVpcBatchCropResizeMakeBorderAsync(g_env.chan, src, nums, 1, dst,
                                                              crops, borders, rc, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    for (int k = 0; k < 2; k++) {
        /* the same by hand: crop-resize to 40x30, then make-border to 48x36 */
        dvpp_image s = image_of(acldvppGetPicDesc(src, 0)), inner = {0}, d;
        dvpp_roi cr = k ? roi(16, 63, 12, 47) : roi(0, 31, 0, 23);
        dvpp_border db = {2, 4, 6, 2, k ? DVPP_BORDER_REPLICATE : DVPP_BORDER_CONSTANT,
                          {0, 0, 0, 0}, dvpp_simd_active()};
        dvpp_resize_opts o;
        dvpp_vpc_ctx c;
        uint8_t *want;

        d = image_of(acldvppGetPicDesc(dst, k));
        want = calloc(1, d.size);
        d.data = want;
        dvpp_resize_opts_init(&o);
        o.parity = DVPP_PARITY_ASCEND;
        o.ascend_mode = 1;
        dvpp_vpc_ctx_init(&c, profile());
        assert_int_equal(dvpp_vpc_image_init(&inner, profile(), DVPP_PIXEL_NV12, 40, 30, NULL),
                         DVPP_OK);
        assert_int_equal(dvpp_image_alloc(&inner, NULL), DVPP_OK);
        assert_int_equal(dvpp_vpc_crop_resize_paste(&c, &s, &cr, &inner, NULL, &o, NULL),
                         DVPP_OK);
        assert_int_equal(dvpp_vpc_make_border(&c, &inner, &d, &db, NULL), DVPP_OK);
        dvpp_image_free(&inner);
        dvpp_vpc_ctx_fini(&c);
        expect_bytes(acldvppGetPicDesc(dst, k), want);
    }
    EXPECT_FAIL(acldvppVpcBatchCropResizeMakeBorderAsync(g_env.chan, src, nums, 1, dst, crops,
                                                         NULL, rc, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    for (int k = 0; k < 2; k++) {
        acldvppDestroyRoiConfig(crops[k]);
        acldvppDestroyBorderConfig(borders[k]);
    }
    acldvppDestroyResizeConfig(rc);
    batch_free(dst, 2);
    batch_free(src, 1);
}

static void test_convert_color(void **state)
{
    acldvppPicDesc *in, *out;
    dvpp_image s, d = {0};
    dvpp_vpc_ctx c;

    (void)state;
    if (!is_310p())
        return;
    in = nv12_pic(40, 30, 27);
    /* width, height and strides 0: the input's size, VPC's layout */
    out = new_pic(PIXEL_FORMAT_RGB_888, 0, 0, 0, 0, 144 * 30);
    assert_int_equal(acldvppVpcConvertColorAsync(g_env.chan, in, out, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    assert_int_equal(acldvppGetPicDescWidth(out), 40);
    assert_int_equal(acldvppGetPicDescHeight(out), 30);
    assert_int_equal(acldvppGetPicDescWidthStride(out), 48 * 3);
    assert_int_equal(acldvppGetPicDescHeightStride(out), 30);
    s = image_of(in);
    assert_int_equal(dvpp_vpc_image_init(&d, profile(), DVPP_PIXEL_RGB, 40, 30, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&d, NULL), DVPP_OK);
    dvpp_vpc_ctx_init(&c, profile());
    assert_int_equal(dvpp_vpc_convert(&c, &s, &d, NULL), DVPP_OK);
    dvpp_vpc_ctx_fini(&c);
    assert_memory_equal(acldvppGetPicDescData(out), d.data, 144 * 30);
    dvpp_image_free(&d);
    /* another size is refused; zero input geometry too */
    acldvppSetPicDescWidth(out, 20);
    EXPECT_FAIL(acldvppVpcConvertColorAsync(g_env.chan, in, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetPicDescWidth(out, 0);
    acldvppSetPicDescWidthStride(in, 0);
    EXPECT_FAIL(acldvppVpcConvertColorAsync(g_env.chan, in, out, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    free_pic(out);
    free_pic(in);
}

/* PyrDown against cv2.pyrDown (OpenCV 4.6.0, Debian's python3-opencv):
 * a 5x3 ramp and a 9x7 pattern, (x*37 + y*101 + x*y*13) % 256. */
static void pyr_case(uint32_t w, uint32_t h, const uint8_t *src, const uint8_t *want)
{
    uint32_t ow = (w + 1) / 2, oh = (h + 1) / 2;
    acldvppPicDesc *in = new_pic(PIXEL_FORMAT_YUV_400, w, h, 32, (h + 1) / 2 * 2, 32 * 8);
    acldvppPicDesc *out = new_pic(PIXEL_FORMAT_YUV_400, 0, 0, 32, oh, 32 * oh);
    const uint8_t *o;

    for (uint32_t y = 0; y < h; y++)
        memcpy((uint8_t *)acldvppGetPicDescData(in) + 32 * y, src + w * y, w);
    assert_int_equal(acldvppVpcPyrDownAsync(g_env.chan, in, out, NULL, g_env.stream),
                     ACL_SUCCESS);
    assert_int_equal(sync_stream(), ACL_SUCCESS);
    assert_int_equal(acldvppGetPicDescWidth(out), ow);
    assert_int_equal(acldvppGetPicDescHeight(out), oh);
    o = acldvppGetPicDescData(out);
    for (uint32_t y = 0; y < oh; y++)
        assert_memory_equal(o + 32 * y, want + ow * y, ow);
    free_pic(out);
    free_pic(in);
}

static void test_pyr_down(void **state)
{
    static const uint8_t ramp[15] = {0, 16, 32, 48, 64, 80, 96, 112, 128, 144,
                                     160, 176, 192, 208, 224};
    static const uint8_t ramp_cv2[6] = {72, 92, 112, 112, 132, 152};
    static const uint8_t pat_cv2[20] = {91, 131, 133, 136, 139, 107, 123, 123, 125, 143,
                                        151, 133, 141, 132, 101, 161, 135, 133, 128, 129};
    uint8_t pat[63];
    acldvppPicDesc *in, *out;
    int dummy;

    (void)state;
    if (!is_310p())
        return;
    for (uint32_t y = 0; y < 7; y++)
        for (uint32_t x = 0; x < 9; x++)
            pat[9 * y + x] = (uint8_t)((x * 37 + y * 101 + x * y * 13) % 256);
    pyr_case(5, 3, ramp, ramp_cv2);
    pyr_case(9, 7, pat, pat_cv2);
    in = new_pic(PIXEL_FORMAT_YUV_400, 16, 8, 32, 8, 32 * 8);
    out = new_pic(PIXEL_FORMAT_YUV_400, 8, 4, 32, 4, 32 * 4);
    EXPECT_FAIL(acldvppVpcPyrDownAsync(g_env.chan, in, out, &dummy, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetPicDescWidth(out, 9); /* not (16 + 1) / 2 */
    EXPECT_FAIL(acldvppVpcPyrDownAsync(g_env.chan, in, out, NULL, g_env.stream),
                ACL_ERROR_INVALID_PARAM);
    acldvppSetPicDescWidth(out, 8);
    acldvppSetPicDescFormat(in, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    EXPECT_FAIL(acldvppVpcPyrDownAsync(g_env.chan, in, out, NULL, g_env.stream),
                ACL_ERROR_FORMAT_NOT_MATCH);
    free_pic(out);
    free_pic(in);
}

#define VPC_TESTS                                             \
    cmocka_unit_test(test_resize_every_mode),                 \
    cmocka_unit_test(test_crop_and_crop_resize),              \
    cmocka_unit_test(test_crop_and_paste_keeps_the_canvas),   \
    cmocka_unit_test(test_formats),                           \
    cmocka_unit_test(test_over_declared_height_stride),       \
    cmocka_unit_test(test_vpc_bad_input),                     \
    cmocka_unit_test(test_batch_crop_resize_paste),           \
    cmocka_unit_test(test_310p_only_calls),                   \
    cmocka_unit_test(test_make_border),                       \
    cmocka_unit_test(test_batch_crop_resize_make_border),     \
    cmocka_unit_test(test_convert_color),                     \
    cmocka_unit_test(test_pyr_down)

int main(void)
{
    const struct CMUnitTest tests[] = {VPC_TESTS};
    int failed = 0;

    failed += cmocka_run_group_tests_name("vpc ascend310", tests, setup_310, teardown_env);
    failed += cmocka_run_group_tests_name("vpc ascend310p", tests, setup_310p, teardown_env);
    return failed ? 1 : 0;
}
