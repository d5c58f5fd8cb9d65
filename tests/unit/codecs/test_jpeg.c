/* Unit tests for codecs/dvpp_jpeg: probe, decode to every format, regions,
 * profiles, limits (before allocation), robustness on damaged input,
 * allocation failure, encode round trips. Reference comparisons with
 * djpeg, TurboJPEG and Pillow live in tests/e2e/test_jpeg_reference.py.
 *
 * Inputs: tests/data/corpus/libjpeg-turbo (in the tree; paths relative to
 * the repository root, the working directory of `make unit`), .cache/testdata
 * (tests/tools/fetch-test-data) and images encoded here. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jpeglib.h>

#include "dvpp_jpeg.h"
#include "dvpp_mem.h"
#include "test_alloc.h"

static char g_path[1024];

#define JPEG_CORPUS_DIR "tests/data/corpus/libjpeg-turbo"

static const char *corpus(const char *name)
{
    snprintf(g_path, sizeof(g_path), JPEG_CORPUS_DIR "/%s", name);
    return g_path;
}

static const char *fixture(const char *name)
{
    snprintf(g_path, sizeof(g_path), ".cache/testdata/fixtures/%s", name);
    return g_path;
}

static dvpp_buf load(const char *path)
{
    dvpp_buf b;
    dvpp_err e;

    dvpp_buf_init(&b);
    if (dvpp_buf_read_file(&b, path, 64u << 20, &e) != DVPP_OK)
        fail_msg("cannot read %s: %s (run tests/tools/fetch-test-data)", path, e.msg);
    return b;
}

/* A smooth synthetic RGB picture with some texture: JPEG-friendly, so the
 * PSNR bound of the round trip tests is about the codec, not the noise. */
static dvpp_image synth_rgb(uint32_t w, uint32_t h)
{
    dvpp_image img;

    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, w, h, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&img, NULL), DVPP_OK);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            uint8_t *p = img.data + (size_t)y * img.width_stride + 3 * x;
            p[0] = (uint8_t)(128 + 100 * sin(x * 0.05) * cos(y * 0.03));
            p[1] = (uint8_t)((x * 255) / (w > 1 ? w - 1 : 1));
            p[2] = (uint8_t)((y * 255) / (h > 1 ? h - 1 : 1));
        }
    }
    return img;
}

static dvpp_buf encode(const dvpp_image *img, int quality, dvpp_jpeg_sampling s)
{
    dvpp_jpeg_encode_opts o;
    dvpp_buf b;
    dvpp_err e;

    dvpp_jpeg_encode_opts_init(&o);
    o.quality = quality;
    o.sampling = s;
    dvpp_buf_init(&b);
    if (dvpp_jpeg_encode(img, &o, &b, &e) != DVPP_OK)
        fail_msg("encode failed: %s", e.msg);
    return b;
}

static dvpp_status decode_fmt(const dvpp_buf *b, dvpp_pixfmt f, dvpp_image *out,
                              dvpp_err *e)
{
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();

    dvpp_jpeg_decode_opts_init(&o);
    o.format = f;
    memset(out, 0, sizeof(*out));
    return dvpp_jpeg_decode(b->data, b->len, &o, &lim, out, e);
}

static double psnr_plane(const uint8_t *a, size_t as, const uint8_t *b,
                         size_t bs, uint32_t w, uint32_t h)
{
    double se = 0;

    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            double d = (double)a[y * as + x] - b[y * bs + x];
            se += d * d;
        }
    if (se == 0)
        return 99.0;
    return 10 * log10(255.0 * 255.0 / (se / ((double)w * h)));
}

/* --- probe ---------------------------------------------------------------- */

static void test_probe_corpus(void **state)
{
    dvpp_jpeg_info in;
    dvpp_buf b;

    (void)state;
    b = load(corpus("testorig.jpg"));
    assert_int_equal(dvpp_jpeg_probe(b.data, b.len, &in, NULL), DVPP_OK);
    assert_int_equal(in.width, 227);
    assert_int_equal(in.height, 149);
    assert_int_equal(in.components, 3);
    assert_int_equal(in.sampling, DVPP_JPEG_420);
    assert_true(in.baseline);
    assert_false(in.progressive);
    assert_int_equal(in.scans, 1);
    assert_true(in.complete);
    dvpp_buf_fini(&b);

    b = load(corpus("testimgari.jpg"));
    assert_int_equal(dvpp_jpeg_probe(b.data, b.len, &in, NULL), DVPP_OK);
    assert_true(in.arithmetic);
    dvpp_buf_fini(&b);

    b = load(corpus("monkey12.jpg"));
    assert_int_equal(dvpp_jpeg_probe(b.data, b.len, &in, NULL), DVPP_OK);
    assert_int_equal(in.precision, 12);
    dvpp_buf_fini(&b);

    b = load(fixture("orient_6.jpg"));
    assert_int_equal(dvpp_jpeg_probe(b.data, b.len, &in, NULL), DVPP_OK);
    assert_int_equal(in.orientation, 6);
    assert_int_equal(in.display_width, in.height);
    dvpp_buf_fini(&b);

    b = load(fixture("progressive_scans120.jpg"));
    assert_int_equal(dvpp_jpeg_probe(b.data, b.len, &in, NULL), DVPP_OK);
    assert_true(in.progressive);
    assert_int_equal(in.scans, 120);
    dvpp_buf_fini(&b);

    b = load(fixture("cmyk.jpg"));
    assert_int_equal(dvpp_jpeg_probe(b.data, b.len, &in, NULL), DVPP_OK);
    assert_int_equal(in.components, 4);
    assert_int_equal(in.colorspace, DVPP_JPEG_CS_CMYK);
    dvpp_buf_fini(&b);
}

/* A 16x16 JPEG of @nc components (3: component ids R,G,B; 4: CMYK) with
 * no marker libjpeg adds by itself, then an APP0 "JFIF\0" segment of
 * @app0_len payload bytes (0: none) and an APP14 Adobe segment with
 * @adobe_transform (-1: none). Caller frees with free(). */
static uint8_t *jpeg_with_markers(int nc, unsigned app0_len, int adobe_transform,
                                  unsigned long *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    uint8_t row[16 * 4], app0[32] = "JFIF", app14[12] = "Adobe";
    JSAMPROW rp = row;
    unsigned char *out = NULL;

    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &out, len);
    c.image_width = c.image_height = 16;
    c.input_components = nc;
    c.in_color_space = nc == 3 ? JCS_RGB : JCS_CMYK;
    jpeg_set_defaults(&c);
    jpeg_set_colorspace(&c, nc == 3 ? JCS_RGB : JCS_CMYK); /* ids 'R','G','B' */
    c.write_JFIF_header = FALSE;
    c.write_Adobe_marker = FALSE;
    jpeg_start_compress(&c, TRUE);
    if (app0_len) {
        app0[7] = 1, app0[8] = 1; /* version 1.1, the rest 0 */
        jpeg_write_marker(&c, JPEG_APP0, app0, app0_len);
    }
    if (adobe_transform >= 0) {
        app14[11] = (uint8_t)adobe_transform;
        jpeg_write_marker(&c, JPEG_APP0 + 14, app14, sizeof(app14));
    }
    memset(row, 90, sizeof(row));
    while (c.next_scanline < c.image_height)
        jpeg_write_scanlines(&c, &rp, 1);
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return out;
}

/* The colour space libjpeg itself reads from @d. */
static dvpp_jpeg_colorspace libjpeg_colorspace(const uint8_t *d, unsigned long n)
{
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr jerr;
    J_COLOR_SPACE cs;

    c.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, d, n);
    assert_int_equal(jpeg_read_header(&c, TRUE), JPEG_HEADER_OK);
    cs = c.jpeg_color_space;
    jpeg_destroy_decompress(&c);
    switch (cs) {
    case JCS_GRAYSCALE: return DVPP_JPEG_CS_GRAY;
    case JCS_RGB: return DVPP_JPEG_CS_RGB;
    case JCS_YCbCr: return DVPP_JPEG_CS_YCBCR;
    case JCS_CMYK: return DVPP_JPEG_CS_CMYK;
    case JCS_YCCK: return DVPP_JPEG_CS_YCCK;
    default: return DVPP_JPEG_CS_OTHER;
    }
}

/* The probe reads the colour space exactly as libjpeg does: a JFIF APP0
 * counts only with its 14 bytes, an unknown Adobe transform means YCCK
 * for 4 components. */
static void test_probe_colorspace_agrees_with_libjpeg(void **state)
{
    static const struct {
        int nc;
        unsigned app0_len;
        int adobe;
        dvpp_jpeg_colorspace want;
    } cases[] = {
        {3, 5, -1, DVPP_JPEG_CS_RGB},    /* short APP0: not JFIF, ids R,G,B */
        {3, 13, -1, DVPP_JPEG_CS_RGB},
        {3, 14, -1, DVPP_JPEG_CS_YCBCR}, /* JFIF implies YCbCr */
        {3, 0, -1, DVPP_JPEG_CS_RGB},
        {3, 5, 1, DVPP_JPEG_CS_YCBCR},
        {3, 0, 0, DVPP_JPEG_CS_RGB},
        {4, 0, -1, DVPP_JPEG_CS_CMYK},
        {4, 0, 0, DVPP_JPEG_CS_CMYK},
        {4, 0, 1, DVPP_JPEG_CS_YCCK},    /* libjpeg assumes YCCK */
        {4, 0, 2, DVPP_JPEG_CS_YCCK},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned long n = 0;
        uint8_t *d = jpeg_with_markers(cases[i].nc, cases[i].app0_len, cases[i].adobe, &n);
        dvpp_jpeg_info in;
        assert_int_equal(dvpp_jpeg_probe(d, n, &in, NULL), DVPP_OK);
        if (libjpeg_colorspace(d, n) != cases[i].want || in.colorspace != cases[i].want)
            fail_msg("case %zu: libjpeg %s, probe %s, expected %s", i,
                     dvpp_jpeg_colorspace_name(libjpeg_colorspace(d, n)),
                     dvpp_jpeg_colorspace_name(in.colorspace),
                     dvpp_jpeg_colorspace_name(cases[i].want));
        free(d);
    }
}

static void test_probe_rejects_garbage(void **state)
{
    static const uint8_t notjpeg[] = {0x89, 'P', 'N', 'G', 0, 0};
    static const uint8_t sof_less[] = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0, 0,
                                       0xFF, 0xD9};
    dvpp_jpeg_info in;
    dvpp_err e;

    (void)state;
    assert_int_equal(dvpp_jpeg_probe(notjpeg, sizeof(notjpeg), &in, &e), DVPP_ECORRUPT);
    assert_non_null(strstr(e.msg, "SOI"));
    assert_int_equal(dvpp_jpeg_probe(sof_less, sizeof(sof_less), &in, &e), DVPP_ECORRUPT);
    assert_non_null(strstr(e.msg, "SOF"));
    assert_int_equal(dvpp_jpeg_probe(sof_less, 1, &in, &e), DVPP_ECORRUPT);
}

/* A 64x48 sequential JPEG from libjpeg itself, one scan per component when
 * @separate (a non-interleaved frame), else one interleaved scan. */
static dvpp_buf sequential_jpeg(bool separate)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr jerr;
    jpeg_scan_info scans[3];
    unsigned char *out = NULL;
    unsigned long out_len = 0;
    uint8_t row[64 * 3];
    dvpp_buf b;

    c.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &out, &out_len);
    c.image_width = 64, c.image_height = 48, c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    if (separate) {
        for (int k = 0; k < 3; k++)
            scans[k] = (jpeg_scan_info){1, {k}, 0, 63, 0, 0};
        c.scan_info = scans, c.num_scans = 3;
    }
    jpeg_start_compress(&c, TRUE);
    for (unsigned y = 0; y < 48; y++) {
        JSAMPROW r = row;
        for (unsigned x = 0; x < sizeof(row); x++)
            row[x] = (uint8_t)(x * 3 + y * 5);
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    dvpp_buf_init(&b);
    assert_int_equal(dvpp_buf_append(&b, out, out_len), DVPP_OK);
    free(out);
    return b;
}

/* The walk stops after a sequential frame's one interleaved scan (its
 * entropy data is not read): the count, and "complete" from the end. */
static void test_probe_scans_and_complete(void **state)
{
    static const uint8_t tail[] = {0x00, 0xFF, 0x00, 0xFF, 0xD0, 'j', 'u', 'n', 'k', 0xFF};
    dvpp_buf one = sequential_jpeg(false), three = sequential_jpeg(true), b;
    dvpp_jpeg_info in;

    (void)state;
    assert_int_equal(dvpp_jpeg_probe(one.data, one.len, &in, NULL), DVPP_OK);
    assert_int_equal(in.scans, 1);
    assert_true(in.complete);
    /* non-interleaved: every scan is walked and counted */
    assert_int_equal(dvpp_jpeg_probe(three.data, three.len, &in, NULL), DVPP_OK);
    assert_int_equal(in.scans, 3);
    assert_true(in.complete);
    assert_int_equal(dvpp_jpeg_probe(three.data, three.len - 2, &in, NULL), DVPP_OK);
    assert_int_equal(in.scans, 3);
    assert_false(in.complete);
    /* truncated: no EOI after the scan */
    assert_int_equal(dvpp_jpeg_probe(one.data, one.len - 2, &in, NULL), DVPP_OK);
    assert_false(in.complete);
    assert_int_equal(dvpp_jpeg_probe(one.data, one.len / 2, &in, NULL), DVPP_OK);
    assert_int_equal(in.scans, 1);
    assert_false(in.complete);
    /* bytes appended after the EOI (FF bytes, no FF D9): still complete */
    dvpp_buf_init(&b);
    assert_int_equal(dvpp_buf_append(&b, one.data, one.len), DVPP_OK);
    assert_int_equal(dvpp_buf_append(&b, tail, sizeof(tail)), DVPP_OK);
    assert_int_equal(dvpp_jpeg_probe(b.data, b.len, &in, NULL), DVPP_OK);
    assert_true(in.complete);
    /* the same appended to a truncated scan: no EOI anywhere after it */
    b.len = 0;
    assert_int_equal(dvpp_buf_append(&b, one.data, one.len - 2), DVPP_OK);
    assert_int_equal(dvpp_buf_append(&b, tail, sizeof(tail)), DVPP_OK);
    assert_int_equal(dvpp_jpeg_probe(b.data, b.len, &in, NULL), DVPP_OK);
    assert_false(in.complete);
    dvpp_buf_fini(&b);
    dvpp_buf_fini(&one);
    dvpp_buf_fini(&three);
}

static dvpp_status decode_limited(const dvpp_buf *b, const dvpp_limits *lim,
                                  dvpp_err *e);

/* Offset of the first marker @m at or after @from in a JPEG's markers
 * and scans (a byte pair FF m; entropy data stuffs its FF bytes). */
static size_t find_marker(const dvpp_buf *b, size_t from, uint8_t m)
{
    for (size_t i = from; i + 1 < b->len; i++)
        if (b->data[i] == 0xFF && b->data[i + 1] == m)
            return i;
    fail_msg("marker FF %02X not found", m);
    return 0;
}

/* A one-component first scan makes libjpeg accept every later SOS, whole
 * interleaved ones included, and decode each: the walk must count them all
 * (it once stopped at the first interleaved scan, so 1 + 120 scans probed
 * as 2 and passed max_jpeg_scans). */
static void test_scan_limit_after_a_partial_first_scan(void **state)
{
    dvpp_buf three = sequential_jpeg(true), one = sequential_jpeg(false), b;
    size_t scan2 = find_marker(&three, 2, 0xDA), sos;
    dvpp_jpeg_info in;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_err e;

    (void)state;
    scan2 = find_marker(&three, scan2 + 2, 0xDA); /* the second scan */
    sos = find_marker(&one, 2, 0xDA);             /* the interleaved scan */
    dvpp_buf_init(&b);
    /* headers and the first scan (component 0), then 120 interleaved scans */
    assert_int_equal(dvpp_buf_append(&b, three.data, scan2), DVPP_OK);
    for (int k = 0; k < 120; k++)
        assert_int_equal(dvpp_buf_append(&b, one.data + sos, one.len - 2 - sos), DVPP_OK);
    assert_int_equal(dvpp_buf_append(&b, one.data + one.len - 2, 2), DVPP_OK); /* EOI */
    assert_int_equal(dvpp_jpeg_probe(b.data, b.len, &in, NULL), DVPP_OK);
    assert_int_equal(in.scans, 121);
    assert_true(in.complete);
    dvpp_err_clear(&e);
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_ELIMIT);
    assert_string_equal(e.field, "max_jpeg_scans");
    dvpp_buf_fini(&b);
    dvpp_buf_fini(&one);
    dvpp_buf_fini(&three);
}

/* --- flavours and profiles ---------------------------------------------------- */

static void test_12bit_is_unsupported(void **state)
{
    dvpp_buf b = load(corpus("monkey12.jpg"));
    dvpp_image img;
    dvpp_err e;

    (void)state;
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_RGB, &img, &e), DVPP_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "12-bit"));
    assert_null(img.data);
    dvpp_buf_fini(&b);
}

static void test_arithmetic_native_ok_ascend_refused(void **state)
{
    dvpp_buf b = load(corpus("testimgari.jpg"));
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image img = {0};
    dvpp_err e;

    (void)state;
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_NV12, &img, &e), DVPP_OK);
    dvpp_image_free(&img);
    dvpp_jpeg_decode_opts_init(&o);
    o.format = DVPP_PIXEL_NV12;
    o.profile = DVPP_PROFILE_ASCEND310;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_EPROFILE);
    assert_non_null(strstr(e.msg, "arithmetic coding is not supported"));
    dvpp_buf_fini(&b);

    b = load(fixture("progressive_420.jpg"));
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_EPROFILE);
    assert_non_null(strstr(e.msg, "progressive"));
    dvpp_buf_fini(&b);
    b = load(fixture("base_411.jpg"));
    o.profile = DVPP_PROFILE_ASCEND310P;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_EPROFILE);
    assert_non_null(strstr(e.msg, "411"));
    dvpp_buf_fini(&b);
}

static void test_ascend_strides_and_formats(void **state)
{
    dvpp_buf b = load(corpus("testorig.jpg")); /* 227x149 4:2:0 */
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image img = {0}, tight = {0};
    dvpp_err e;

    (void)state;
    dvpp_jpeg_decode_opts_init(&o);
    o.format = DVPP_PIXEL_NV12;
    o.profile = DVPP_PROFILE_ASCEND310;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_OK);
    assert_int_equal(img.width_stride, 256);
    assert_int_equal(img.height_stride, 160);
    assert_int_equal(img.width, 227);
    assert_int_equal(img.size, 256 * 160 * 3 / 2);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_NV12, &tight, &e), DVPP_OK);
    for (uint32_t y = 0; y < 149; y++)
        assert_memory_equal(img.data + y * 256, tight.data + y * tight.width_stride, 227);
    for (uint32_t y = 0; y < 75; y++)
        assert_memory_equal(img.data + 256 * 160 + y * 256,
                            tight.data + tight.width_stride * 149 + y * tight.width_stride, 228);
    /* Padding is deterministic (zero). */
    assert_int_equal(img.data[255], 0);
    dvpp_image_free(&img);
    dvpp_image_free(&tight);

    /* 310P: 64-aligned, odd sizes rounded down to even. */
    o.profile = DVPP_PROFILE_ASCEND310P;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_OK);
    assert_int_equal(img.width, 226);
    assert_int_equal(img.height, 148);
    assert_int_equal(img.width_stride, 256);
    assert_int_equal(img.height_stride, 160);
    dvpp_image_free(&img);

    /* UNKNOWN keeps the source sampling, V first: 4:2:0 -> NV21. */
    o.format = DVPP_PIXEL_UNKNOWN;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_OK);
    assert_int_equal(img.format, DVPP_PIXEL_NV21);
    dvpp_image_free(&img);

    /* RGB is not a JPEGD output on Ascend. */
    o.format = DVPP_PIXEL_RGB;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_EPROFILE);
    assert_non_null(strstr(e.msg, "output format rgb is not supported"));
    dvpp_buf_fini(&b);
}

static void test_ascend_gray_is_nv12_with_neutral_chroma(void **state)
{
    dvpp_image src = synth_rgb(64, 40), gray, img = {0};
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_buf b;
    dvpp_err e;

    (void)state;
    /* Make a grey JPEG from the Y plane of the synthetic picture. */
    assert_int_equal(dvpp_image_init(&gray, DVPP_PIXEL_GRAY, 64, 40, 1, 1, NULL), DVPP_OK);
    assert_int_equal(dvpp_image_alloc(&gray, NULL), DVPP_OK);
    for (size_t i = 0; i < 64 * 40; i++)
        gray.data[i] = src.data[3 * i];
    b = encode(&gray, 90, DVPP_JPEG_420);
    dvpp_jpeg_decode_opts_init(&o);
    o.format = DVPP_PIXEL_UNKNOWN;
    o.profile = DVPP_PROFILE_ASCEND310;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_OK);
    assert_int_equal(img.format, DVPP_PIXEL_NV12);
    assert_int_equal(img.width_stride, 128);
    assert_int_equal(img.height_stride, 48);
    for (uint32_t y = 0; y < 20; y++)
        for (uint32_t x = 0; x < 64; x++)
            assert_int_equal(img.data[128 * 48 + y * 128 + x], 0x80);
    dvpp_image_free(&img);
    o.profile = DVPP_PROFILE_ASCEND310P;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_OK);
    assert_int_equal(img.format, DVPP_PIXEL_YUV400);
    dvpp_image_free(&img);
    dvpp_image_free(&gray);
    dvpp_image_free(&src);
    dvpp_buf_fini(&b);
}

static void test_ascend_size_rule_text(void **state)
{
    dvpp_image src = synth_rgb(31, 40), img = {0};
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_buf b = encode(&src, 90, DVPP_JPEG_420);
    dvpp_err e;

    (void)state;
    dvpp_jpeg_decode_opts_init(&o);
    o.format = DVPP_PIXEL_NV12;
    o.profile = DVPP_PROFILE_ASCEND310;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_EPROFILE);
    assert_string_equal(e.msg, "Ascend310 JPEGD: image width(31) should be between [32, 8192]!");
    dvpp_image_free(&src);
    dvpp_buf_fini(&b);
}

static void test_predict_sizes(void **state)
{
    dvpp_buf b = load(corpus("testorig.jpg"));
    dvpp_image yuv = {0};
    uint32_t sz = 0;
    dvpp_err e;

    (void)state;
    /* ALIGN(227,128) * ALIGN(149,16) * 3/2 = 256 * 160 * 1.5 */
    assert_int_equal(dvpp_jpeg_predict_dec_size(b.data, b.len, DVPP_PIXEL_NV12,
                                                DVPP_PROFILE_ASCEND310, &sz, &e), DVPP_OK);
    assert_int_equal(sz, 61440);
    assert_int_equal(dvpp_jpeg_predict_dec_size(b.data, b.len, DVPP_PIXEL_UNKNOWN,
                                                DVPP_PROFILE_ASCEND310P, &sz, &e), DVPP_OK);
    assert_int_equal(sz, 61440);
    assert_int_equal(dvpp_jpeg_predict_dec_size(b.data, b.len, DVPP_PIXEL_YUV422SP,
                                                DVPP_PROFILE_ASCEND310, &sz, &e), DVPP_EFORMAT);
    assert_non_null(strstr(e.msg, "ACL_ERROR_FORMAT_NOT_MATCH"));
    /* A 4:2:0 source to YUV_400: the 310P decodes it (W*H*3/2 predicted),
     * the 310 has no YUV_400 output from colour. */
    assert_int_equal(dvpp_jpeg_predict_dec_size(b.data, b.len, DVPP_PIXEL_YUV400,
                                                DVPP_PROFILE_ASCEND310P, &sz, &e), DVPP_OK);
    assert_int_equal(sz, 61440);
    assert_int_equal(dvpp_jpeg_predict_dec_size(b.data, b.len, DVPP_PIXEL_YUV400,
                                                DVPP_PROFILE_ASCEND310, &sz, &e), DVPP_EFORMAT);
    dvpp_buf_fini(&b);
    b = load(fixture("base_444.jpg")); /* 67x45 4:4:4 */
    assert_int_equal(dvpp_jpeg_predict_dec_size(b.data, b.len, DVPP_PIXEL_UNKNOWN,
                                                DVPP_PROFILE_ASCEND310, &sz, &e), DVPP_OK);
    assert_int_equal(sz, 128 * 48 * 3);
    dvpp_buf_fini(&b);
    b = load(fixture("orient_6.jpg")); /* stored 45x67, displayed 67x45 */
    assert_int_equal(dvpp_jpeg_predict_dec_size(b.data, b.len, DVPP_PIXEL_NV12,
                                                DVPP_PROFILE_ASCEND310, &sz, &e), DVPP_OK);
    assert_int_equal(sz, 128 * 48 * 3 / 2);
    dvpp_buf_fini(&b);

    /* JPEGE: ALIGN(ws*hs*k + 768, 2 MiB). */
    yuv = (dvpp_image){.format = DVPP_PIXEL_NV12, .width = 1920, .height = 1080,
                       .width_stride = 1920, .height_stride = 1088};
    assert_int_equal(dvpp_jpeg_predict_enc_size(&yuv, DVPP_PROFILE_ASCEND310, &sz, &e), DVPP_OK);
    assert_int_equal(sz, 4194304);
    yuv = (dvpp_image){.format = DVPP_PIXEL_YUYV, .width = 4096, .height = 2160,
                       .width_stride = 8192, .height_stride = 2160};
    assert_int_equal(dvpp_jpeg_predict_enc_size(&yuv, DVPP_PROFILE_ASCEND310, &sz, &e), DVPP_OK);
    assert_int_equal(sz, 18874368); /* 17694720 + 768 -> 9 * 2 MiB */
    yuv.width_stride = 8200;
    assert_int_equal(dvpp_jpeg_predict_enc_size(&yuv, DVPP_PROFILE_ASCEND310, &sz, &e), DVPP_EPROFILE);
    assert_non_null(strstr(e.msg, "widthStride(8200)"));
}

/* --- formats: each conversion against its definition ---------------------- */

static uint8_t at(const dvpp_image *img, size_t off)
{
    return img->data[off];
}

static void test_yuv_outputs_are_consistent(void **state)
{
    dvpp_image src = synth_rgb(67, 45), y444 = {0}, nv12 = {0}, nv21 = {0},
               i420 = {0}, y422 = {0}, gray = {0}, y400 = {0};
    dvpp_buf b = encode(&src, 92, DVPP_JPEG_444);
    uint32_t w = 67, h = 45, cw = 34, ch = 23;
    size_t s444, s12;

    (void)state;
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_YUV444SP, &y444, NULL), DVPP_OK);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_NV12, &nv12, NULL), DVPP_OK);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_NV21, &nv21, NULL), DVPP_OK);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_I420, &i420, NULL), DVPP_OK);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_YUV422SP, &y422, NULL), DVPP_OK);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_GRAY, &gray, NULL), DVPP_OK);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_YUV400, &y400, NULL), DVPP_OK);
    s444 = y444.width_stride;
    s12 = nv12.width_stride;
    assert_int_equal(s444, 67);
    assert_int_equal(s12, 68);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            uint8_t Y = at(&y444, y * s444 + x);
            assert_int_equal(at(&nv12, y * s12 + x), Y);
            assert_int_equal(at(&gray, y * w + x), Y);
            assert_int_equal(at(&y400, y * w + x), Y);
        }
    }
    /* 4:2:0 chroma = rounded mean of the 4:4:4 samples it covers (edges
     * cover fewer). */
    for (uint32_t j = 0; j < ch; j++) {
        for (uint32_t i = 0; i < cw; i++) {
            for (int c = 0; c < 2; c++) {
                unsigned sum = 0, n = 0, v;
                for (uint32_t y = 2 * j; y < 2 * j + 2 && y < h; y++)
                    for (uint32_t x = 2 * i; x < 2 * i + 2 && x < w; x++, n++)
                        sum += at(&y444, s444 * h + y * 2 * s444 + 2 * x + (size_t)c);
                v = (sum + n / 2) / n;
                assert_int_equal(at(&nv12, s12 * h + j * s12 + 2 * i + (size_t)c), v);
                assert_int_equal(at(&nv21, s12 * h + j * s12 + 2 * i + (size_t)(1 - c)), v);
                assert_int_equal(at(&i420, s12 * h + (size_t)c * (s12 / 2) * ch +
                                               j * (s12 / 2) + i), v);
            }
        }
    }
    /* 4:2:2: horizontal pairs only. */
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t i = 0; i < cw; i++) {
            unsigned a = at(&y444, s444 * h + y * 2 * s444 + 4 * i), n = 1;
            if (2 * i + 1 < w)
                a += at(&y444, s444 * h + y * 2 * s444 + 4 * i + 2), n = 2;
            assert_int_equal(at(&y422, 68 * h + y * 68 + 2 * i), (a + n / 2) / n);
        }
    dvpp_image_free(&y444), dvpp_image_free(&nv12), dvpp_image_free(&nv21);
    dvpp_image_free(&i420), dvpp_image_free(&y422), dvpp_image_free(&gray);
    dvpp_image_free(&y400), dvpp_image_free(&src);
    dvpp_buf_fini(&b);
}

static void test_upsampled_yuv444_replicates_420(void **state)
{
    dvpp_image src = synth_rgb(40, 30), i420 = {0}, y444 = {0};
    dvpp_buf b = encode(&src, 90, DVPP_JPEG_420);

    (void)state;
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_I420, &i420, NULL), DVPP_OK);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_YVU444SP, &y444, NULL), DVPP_OK);
    for (uint32_t y = 0; y < 30; y++)
        for (uint32_t x = 0; x < 40; x++) {
            uint8_t u = at(&i420, 40 * 30 + (y / 2) * 20 + x / 2);
            uint8_t v = at(&i420, 40 * 30 + 20 * 15 + (y / 2) * 20 + x / 2);
            assert_int_equal(at(&y444, 40 * 30 + y * 80 + 2 * x), v);
            assert_int_equal(at(&y444, 40 * 30 + y * 80 + 2 * x + 1), u);
        }
    dvpp_image_free(&i420), dvpp_image_free(&y444), dvpp_image_free(&src);
    dvpp_buf_fini(&b);
}

/* Region decode = the same pixels of a full decode, for every orientation
 * and for packed and YUV outputs, with and without DCT scaling. */
static void check_roi(const char *file, dvpp_pixfmt f, uint8_t scale,
                      dvpp_jpeg_roi r)
{
    dvpp_buf b = load(fixture(file));
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image full = {0}, part = {0};
    dvpp_planes pf, pp;
    dvpp_err e;

    dvpp_jpeg_decode_opts_init(&o);
    o.format = f;
    o.scale_num = scale;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &full, &e), DVPP_OK);
    o.has_roi = true;
    o.roi = r;
    if (dvpp_jpeg_decode(b.data, b.len, &o, &lim, &part, &e) != DVPP_OK)
        fail_msg("%s roi %u,%u %ux%u: %s", file, r.x, r.y, r.w, r.h, e.msg);
    assert_int_equal(part.width, r.w);
    assert_int_equal(part.height, r.h);
    dvpp_image_planes(&full, &pf, NULL);
    dvpp_image_planes(&part, &pp, NULL);
    for (int p = 0; p < pf.count; p++) {
        const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(f);
        uint32_t sx = p ? fi->chroma_sx : 0, sy = p ? fi->chroma_sy : 0;
        size_t elem = p == 0 ? fi->bpp : (pf.count == 2 ? 2 : 1);
        for (uint32_t y = 0; y < pp.p[p].rows; y++) {
            const uint8_t *a = full.data + pf.p[p].offset +
                               ((r.y >> sy) + y) * pf.p[p].stride + (r.x >> sx) * elem;
            const uint8_t *c = part.data + pp.p[p].offset + y * pp.p[p].stride;
            /* An odd-sized region ends on a chroma sample that covers only
             * its own last pixel column/row; the full image's sample there
             * also covers the next one. Compare the samples both share. */
            size_t n = pp.p[p].row_bytes;
            if (p && sx && (r.w & 1) && r.x + r.w < full.width)
                n -= elem;
            if (p && sy && (r.h & 1) && r.y + r.h < full.height &&
                y + 1 == pp.p[p].rows)
                continue;
            if (memcmp(a, c, n) != 0)
                fail_msg("%s plane %d row %u differs (roi %u,%u %ux%u scale %u)",
                         file, p, y, r.x, r.y, r.w, r.h, scale);
        }
    }
    dvpp_image_free(&full);
    dvpp_image_free(&part);
    dvpp_buf_fini(&b);
}

static void test_roi_equals_full_decode(void **state)
{
    static const char *files[] = {"orient_1.jpg", "orient_2.jpg", "orient_3.jpg",
                                  "orient_4.jpg", "orient_5.jpg", "orient_6.jpg",
                                  "orient_7.jpg", "orient_8.jpg"};
    (void)state;
    for (int i = 0; i < 8; i++) {
        check_roi(files[i], DVPP_PIXEL_RGB, 8, (dvpp_jpeg_roi){17, 5, 20, 30});
        check_roi(files[i], DVPP_PIXEL_BGRA, 8, (dvpp_jpeg_roi){0, 0, 44, 44});
        check_roi(files[i], DVPP_PIXEL_NV12, 8, (dvpp_jpeg_roi){2, 4, 33, 21});
        check_roi(files[i], DVPP_PIXEL_GRAY, 8, (dvpp_jpeg_roi){1, 1, 1, 1});
    }
    check_roi("base_422.jpg", DVPP_PIXEL_RGB, 8, (dvpp_jpeg_roi){31, 9, 35, 35});
    check_roi("base_420.jpg", DVPP_PIXEL_RGB, 4, (dvpp_jpeg_roi){3, 3, 20, 15});
    check_roi("base_420.jpg", DVPP_PIXEL_I420, 8, (dvpp_jpeg_roi){16, 16, 51, 29});
    check_roi("base_444.jpg", DVPP_PIXEL_NV21, 8, (dvpp_jpeg_roi){10, 2, 40, 40});
    check_roi("progressive_420.jpg", DVPP_PIXEL_RGB, 8, (dvpp_jpeg_roi){30, 20, 37, 25});
    check_roi("strip_2000x16.jpg", DVPP_PIXEL_RGB, 8, (dvpp_jpeg_roi){1000, 3, 500, 10});
}

static void test_roi_rejects_bad_regions(void **state)
{
    dvpp_buf b = load(fixture("base_420.jpg"));
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image img = {0};
    dvpp_err e;

    (void)state;
    dvpp_jpeg_decode_opts_init(&o);
    o.has_roi = true;
    o.roi = (dvpp_jpeg_roi){60, 0, 8, 8};
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_EINVAL);
    assert_string_equal(e.field, "roi");
    o.roi = (dvpp_jpeg_roi){1, 0, 8, 8};
    o.format = DVPP_PIXEL_NV12;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_EINVAL);
    assert_non_null(strstr(e.msg, "even"));
    assert_null(img.data);
    dvpp_buf_fini(&b);
}

/* --- limits ---------------------------------------------------------------------- */

/* Decode under @lim with the test allocator: returns the status and checks
 * that a refused decode asked for no pixel-sized block. */
static dvpp_status decode_limited(const dvpp_buf *b, const dvpp_limits *lim,
                                  dvpp_err *e)
{
    dvpp_jpeg_decode_opts o;
    dvpp_image img = {0};
    dvpp_status st;

    dvpp_jpeg_decode_opts_init(&o);
    test_alloc_install();
    st = dvpp_jpeg_decode(b->data, b->len, &o, lim, &img, e);
    if (st != DVPP_OK)
        assert_int_equal(test_alloc()->calls, 0);
    dvpp_image_free(&img);
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
    return st;
}

static void test_limits_one_over_one_under(void **state)
{
    dvpp_buf b = load(corpus("testorig.jpg")); /* 227x149 */
    dvpp_limits lim = dvpp_limits_default();
    dvpp_err e;

    (void)state;
    lim.max_side = 226;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_ELIMIT);
    assert_string_equal(e.field, "max_side");
    lim.max_side = 227;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_OK);
    lim.max_pixels = 227 * 149 - 1;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_ELIMIT);
    assert_string_equal(e.field, "max_pixels");
    lim.max_pixels = 227 * 149;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_OK);
    lim.max_encoded_bytes = b.len - 1;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_ELIMIT);
    assert_string_equal(e.field, "max_encoded_bytes");
    lim.max_encoded_bytes = b.len;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_OK);
    dvpp_buf_fini(&b);

    b = load(fixture("progressive_scans5.jpg"));
    lim = dvpp_limits_default();
    lim.max_jpeg_scans = 4;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_ELIMIT);
    assert_string_equal(e.field, "max_jpeg_scans");
    lim.max_jpeg_scans = 5;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_OK);
    dvpp_buf_fini(&b);

    /* The default scan limit (100): 100 scans pass, 101 do not. */
    lim = dvpp_limits_default();
    b = load(fixture("progressive_scans100.jpg"));
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_OK);
    dvpp_buf_fini(&b);
    b = load(fixture("progressive_scans101.jpg"));
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_ELIMIT);
    dvpp_buf_fini(&b);

    /* libjpeg's own working memory: the whole-image coefficient buffer of
     * an 800x600 progressive photo is about 1.4 MB. */
    b = load(".cache/testdata/photos/d-debian.jpg");
    lim.max_decode_memory = 1 << 20;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_ELIMIT);
    lim.max_decode_memory = 4 << 20;
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_OK);
    dvpp_buf_fini(&b);
}

/* A 65500x65500 header: refused by the limits after a header parse. */
static void test_bomb_header_refused_before_allocation(void **state)
{
    dvpp_buf b = load(corpus("testorig.jpg"));
    dvpp_limits lim = dvpp_limits_default();
    dvpp_err e;

    (void)state;
    for (size_t i = 2; i + 9 < b.len; i++) {
        if (b.data[i] == 0xFF && b.data[i + 1] == 0xC0) {
            b.data[i + 5] = 0xFF, b.data[i + 6] = 0xDC; /* height 65500 */
            b.data[i + 7] = 0xFF, b.data[i + 8] = 0xDC; /* width 65500 */
            break;
        }
    }
    assert_int_equal(decode_limited(&b, &lim, &e), DVPP_ELIMIT);
    assert_string_equal(e.field, "max_side");
    dvpp_buf_fini(&b);
}

/* --- robustness ------------------------------------------------------------------ */

static uint32_t g_rng = 0xC0FFEEu;

static uint32_t rng(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return g_rng;
}

static void decode_any(const uint8_t *d, size_t n, dvpp_pixfmt f, bool partial)
{
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image img = {0};
    dvpp_err e;
    dvpp_status st;

    dvpp_jpeg_decode_opts_init(&o);
    o.format = f;
    o.allow_partial = partial;
    st = dvpp_jpeg_decode(d, n, &o, &lim, &img, &e);
    assert_true(st <= 0);
    if (st != DVPP_OK)
        assert_true(e.msg[0] != '\0');
    dvpp_image_free(&img);
}

static void damage_file(const char *path)
{
    static const dvpp_pixfmt fmts[] = {DVPP_PIXEL_RGB, DVPP_PIXEL_NV12, DVPP_PIXEL_GRAY};
    dvpp_buf b = load(path), c;

    dvpp_buf_init(&c);
    assert_int_equal(dvpp_buf_reserve(&c, b.len), DVPP_OK);
    for (size_t cut = 1; cut < b.len; cut += 97) {
        decode_any(b.data, cut, fmts[cut % 3], false);
        decode_any(b.data, cut, fmts[(cut + 1) % 3], true);
    }
    for (int k = 0; k < 20; k++) {
        memcpy(c.data, b.data, b.len);
        for (int f = 0; f < 1 + k % 4; f++)
            c.data[rng() % b.len] ^= (uint8_t)(1u << (rng() % 8));
        decode_any(c.data, b.len, fmts[k % 3], k % 2);
    }
    dvpp_buf_fini(&c);
    dvpp_buf_fini(&b);
}

static void damage_dir(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[1024];

    if (!d)
        fail_msg("cannot open %s (run tests/tools/fetch-test-data)", dir);
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name), s = strlen(suffix);
        if (n < s || strcasecmp(de->d_name + n - s, suffix) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        damage_file(path);
    }
    closedir(d);
}

static void test_truncated_and_flipped_never_crash_or_leak(void **state)
{
    (void)state;
    test_alloc_install();
    damage_dir(JPEG_CORPUS_DIR, ".jpg");
    damage_dir(".cache/testdata/fixtures", ".jpg");
    damage_dir(".cache/testdata/afl", ".jpg");
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
}

static void test_strict_vs_partial(void **state)
{
    dvpp_buf b = load(fixture("truncated_420.jpg"));
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image img = {0};
    dvpp_err e;

    (void)state;
    dvpp_jpeg_decode_opts_init(&o);
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_ECORRUPT);
    assert_non_null(strstr(e.msg, "Premature end of JPEG file"));
    o.allow_partial = true;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_OK);
    dvpp_image_free(&img);
    dvpp_buf_fini(&b);
}

static void test_allocation_failures_are_clean(void **state)
{
    static const dvpp_pixfmt fmts[] = {DVPP_PIXEL_RGB, DVPP_PIXEL_NV12, DVPP_PIXEL_YUV444SP};
    dvpp_buf b = load(fixture("orient_6.jpg"));

    (void)state;
    for (int f = 0; f < 3; f++) {
        size_t nomem = 0;
        for (size_t n = 1;; n++) {
            dvpp_image img = {0};
            dvpp_status st;
            dvpp_err e;
            bool injected;
            test_alloc_install();
            test_alloc_fail_nth(n);
            st = decode_fmt(&b, fmts[f], &img, &e);
            injected = test_alloc_injected();
            dvpp_image_free(&img);
            assert_int_equal(test_alloc()->live, 0);
            test_alloc_uninstall();
            if (!injected) {
                assert_int_equal(st, DVPP_OK);
                break;
            }
            assert_int_equal(st, DVPP_ENOMEM);
            nomem++;
            assert_true(n < 20);
        }
        assert_true(nomem > 0); /* the sweep injected failures at all */
    }
    dvpp_buf_fini(&b);
}

static void test_caller_buffer(void **state)
{
    dvpp_buf b = load(corpus("testorig.jpg"));
    dvpp_jpeg_decode_opts o;
    dvpp_limits lim = dvpp_limits_default();
    dvpp_image img = {0}, ref = {0};
    uint8_t *mem;
    dvpp_err e;

    (void)state;
    dvpp_jpeg_decode_opts_init(&o);
    assert_int_equal(dvpp_jpeg_decode_geometry(b.data, b.len, &o, &lim, &img, &e), DVPP_OK);
    assert_int_equal(img.size, 227 * 149 * 3);
    mem = malloc(img.size);
    img.data = mem;
    img.size -= 1;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_ENOSPC);
    assert_ptr_equal(img.data, mem);
    img.size += 1;
    assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &img, &e), DVPP_OK);
    assert_ptr_equal(img.data, mem);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_RGB, &ref, NULL), DVPP_OK);
    assert_memory_equal(mem, ref.data, ref.size);
    dvpp_image_free(&ref);
    free(mem);
    dvpp_buf_fini(&b);
}

/* --- encode ------------------------------------------------------------------------ */

static void test_encode_roundtrip_psnr(void **state)
{
    static const dvpp_pixfmt fmts[] = {DVPP_PIXEL_NV12, DVPP_PIXEL_NV21,
                                       DVPP_PIXEL_I420, DVPP_PIXEL_YUYV,
                                       DVPP_PIXEL_UYVY, DVPP_PIXEL_GRAY};
    dvpp_image src = synth_rgb(331, 227), back = {0};
    dvpp_buf b;

    (void)state;
    /* RGB in, RGB out. */
    b = encode(&src, 95, DVPP_JPEG_444);
    assert_int_equal(decode_fmt(&b, DVPP_PIXEL_RGB, &back, NULL), DVPP_OK);
    assert_true(psnr_plane(src.data, src.width_stride, back.data, back.width_stride,
                           331 * 3, 227) >= 40.0);
    dvpp_image_free(&back);
    dvpp_buf_fini(&b);
    /* YUV in, same YUV out: each plane >= 40 dB. */
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
        dvpp_image yuv = {0};
        dvpp_planes pa, pb;
        b = encode(&src, 95, DVPP_JPEG_444);
        /* A YUV input of this format: decode the RGB JPEG to it, with a
         * non-tight stride to exercise stride handling. */
        {
            dvpp_jpeg_decode_opts o;
            dvpp_limits lim = dvpp_limits_default();
            dvpp_jpeg_decode_opts_init(&o);
            o.format = fmts[f] == DVPP_PIXEL_YUYV || fmts[f] == DVPP_PIXEL_UYVY
                           ? DVPP_PIXEL_YUV422SP : fmts[f];
            o.align_w = 64;
            assert_int_equal(dvpp_jpeg_decode(b.data, b.len, &o, &lim, &yuv, NULL), DVPP_OK);
        }
        dvpp_buf_fini(&b);
        if (fmts[f] == DVPP_PIXEL_YUYV || fmts[f] == DVPP_PIXEL_UYVY) {
            /* Pack 4:2:2 semi-planar into the packed layout. */
            dvpp_image packed;
            dvpp_planes sp;
            bool uyvy = fmts[f] == DVPP_PIXEL_UYVY;
            assert_int_equal(dvpp_image_init(&packed, fmts[f], 331, 227, 16, 1, NULL), DVPP_OK);
            assert_int_equal(dvpp_image_alloc(&packed, NULL), DVPP_OK);
            dvpp_image_planes(&yuv, &sp, NULL);
            for (uint32_t y = 0; y < 227; y++)
                for (uint32_t x = 0; x < 332; x++) {
                    uint8_t *d = packed.data + y * packed.width_stride + 2 * x;
                    uint32_t xs = x < 331 ? x : 330;
                    d[uyvy ? 1 : 0] = dvpp_image_row(&yuv, &sp, 0, y)[xs];
                    d[uyvy ? 0 : 1] = dvpp_image_row(&yuv, &sp, 1, y)[(x / 2) * 2 + (x & 1)];
                }
            dvpp_image_free(&yuv);
            yuv = packed;
        }
        b = encode(&yuv, 95, DVPP_JPEG_420);
        assert_int_equal(decode_fmt(&b, fmts[f] == DVPP_PIXEL_YUYV || fmts[f] == DVPP_PIXEL_UYVY
                                            ? DVPP_PIXEL_YUV422SP : fmts[f],
                                    &back, NULL), DVPP_OK);
        dvpp_image_planes(&back, &pb, NULL);
        if (fmts[f] == DVPP_PIXEL_YUYV || fmts[f] == DVPP_PIXEL_UYVY) {
            /* Compare luma of the packed input with the decoded Y plane. */
            bool uyvy = fmts[f] == DVPP_PIXEL_UYVY;
            double se = 0;
            for (uint32_t y = 0; y < 227; y++)
                for (uint32_t x = 0; x < 331; x++) {
                    double d = (double)yuv.data[y * yuv.width_stride + 2 * x + (uyvy ? 1 : 0)] -
                               dvpp_image_row(&back, &pb, 0, y)[x];
                    se += d * d;
                }
            assert_true(10 * log10(255.0 * 255 / (se / (331.0 * 227))) >= 40.0);
        } else {
            dvpp_image_planes(&yuv, &pa, NULL);
            for (int p = 0; p < pa.count; p++)
                if (psnr_plane(yuv.data + pa.p[p].offset, pa.p[p].stride,
                               back.data + pb.p[p].offset, pb.p[p].stride,
                               pa.p[p].row_bytes, pa.p[p].rows) < 40.0)
                    fail_msg("format %s plane %d PSNR below 40 dB",
                             dvpp_pixfmt_name(fmts[f]), p);
        }
        dvpp_image_free(&back);
        dvpp_image_free(&yuv);
        dvpp_buf_fini(&b);
    }
    dvpp_image_free(&src);
}

static void test_encode_checks(void **state)
{
    dvpp_image src = synth_rgb(64, 64), nv12 = {0};
    dvpp_jpeg_encode_opts o;
    dvpp_buf b;
    dvpp_err e;

    (void)state;
    dvpp_buf_init(&b);
    dvpp_jpeg_encode_opts_init(&o);
    o.quality = 0;
    assert_int_equal(dvpp_jpeg_encode(&src, &o, &b, &e), DVPP_EINVAL);
    o.profile = DVPP_PROFILE_ASCEND310; /* level 0 = best on 310 */
    assert_int_equal(dvpp_jpeg_encode(&src, &o, &b, &e), DVPP_EPROFILE);
    assert_non_null(strstr(e.msg, "input format rgb is not supported"));
    {
        dvpp_buf j = encode(&src, 90, DVPP_JPEG_420);
        assert_int_equal(decode_fmt(&j, DVPP_PIXEL_NV12, &nv12, NULL), DVPP_OK);
        dvpp_buf_fini(&j);
    }
    assert_int_equal(dvpp_jpeg_encode(&nv12, &o, &b, &e), DVPP_OK);
    assert_true(b.len > 100);
    o.profile = DVPP_PROFILE_ASCEND310P;
    assert_int_equal(dvpp_jpeg_encode(&nv12, &o, &b, &e), DVPP_EINVAL);
    dvpp_image_free(&nv12);
    dvpp_image_free(&src);
    dvpp_buf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_corpus),
        cmocka_unit_test(test_probe_rejects_garbage),
        cmocka_unit_test(test_probe_scans_and_complete),
        cmocka_unit_test(test_scan_limit_after_a_partial_first_scan),
        cmocka_unit_test(test_12bit_is_unsupported),
        cmocka_unit_test(test_arithmetic_native_ok_ascend_refused),
        cmocka_unit_test(test_ascend_strides_and_formats),
        cmocka_unit_test(test_ascend_gray_is_nv12_with_neutral_chroma),
        cmocka_unit_test(test_ascend_size_rule_text),
        cmocka_unit_test(test_predict_sizes),
        cmocka_unit_test(test_yuv_outputs_are_consistent),
        cmocka_unit_test(test_upsampled_yuv444_replicates_420),
        cmocka_unit_test(test_roi_equals_full_decode),
        cmocka_unit_test(test_roi_rejects_bad_regions),
        cmocka_unit_test(test_limits_one_over_one_under),
        cmocka_unit_test(test_bomb_header_refused_before_allocation),
        cmocka_unit_test(test_truncated_and_flipped_never_crash_or_leak),
        cmocka_unit_test(test_strict_vs_partial),
        cmocka_unit_test(test_allocation_failures_are_clean),
        cmocka_unit_test(test_caller_buffer),
        cmocka_unit_test(test_encode_roundtrip_psnr),
        cmocka_unit_test(test_encode_checks),
        cmocka_unit_test(test_probe_colorspace_agrees_with_libjpeg),
    };
    return cmocka_run_group_tests_name("jpeg", tests, NULL, NULL);
}
