/* Unit tests for codecs/dvpp_png.c: PngSuite decode (with golden hashes
 * from Pillow), the 14 corrupt PngSuite files, libpng's crashers, every
 * limit just over and just under, allocation failure N = 1.., truncation
 * and byte-flip sweeps with leak checks, encode/decode round trips, the
 * ascend310 profile and PngPredictDecSize.
 *
 * The corpus lives in the tree, tests/data/corpus/{pngsuite,libpng-crashers}
 * (relative to the repository root, which is the working directory of
 * `make unit`). Files are read with plain malloc so that the test allocator
 * counts only what the codec allocates.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_png.h"
#include "test_alloc.h"

/* Comfortably below any pixel buffer of the 300x200 test image (180 KB)
 * and above libpng's and zlib's fixed working memory (about 40 KB). */
#define SMALL_ALLOC (64u * 1024u)

/* ------------------------------------------------------------------------ */
/* Files                                                                     */

typedef struct blob {
    uint8_t *data; /* malloc'd, owned */
    size_t len;
} blob;

typedef struct corpus_file {
    char name[64]; /* base name */
    blob bytes;
} corpus_file;

typedef struct corpus {
    corpus_file *suite;  /* every PngSuite .png, sorted by name */
    size_t n_suite;
    corpus_file *crash;  /* libpng's contrib/testpngs/crashers */
    size_t n_crash;
    blob small;          /* 300x200 RGB PNG made by dvpp_png_encode */
} corpus;

#define PNG_CORPUS_DIR "tests/data/corpus"

static bool read_whole_file(const char *path, blob *out)
{
    FILE *f = fopen(path, "rb");
    long n;

    if (!f)
        return false;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return false;
    }
    out->len = (size_t)n;
    out->data = malloc(out->len ? out->len : 1);
    if (!out->data || fread(out->data, 1, out->len, f) != out->len) {
        fclose(f);
        free(out->data);
        return false;
    }
    fclose(f);
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const corpus_file *)a)->name,
                  ((const corpus_file *)b)->name);
}

/* Load every *.png of tests/data/corpus/@sub; fails the test when the
 * folder is missing or empty, so a missing corpus is never a silent pass. */
static corpus_file *load_folder(const char *sub, size_t *count)
{
    char dir[512], path[1024];
    corpus_file *files = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    DIR *d;

    snprintf(dir, sizeof(dir), PNG_CORPUS_DIR "/%s", sub);
    d = opendir(dir);
    if (!d)
        fail_msg("corpus folder %s not found (run from the repository root)", dir);
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 5 || strcmp(de->d_name + l - 4, ".png") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            files = realloc(files, cap * sizeof(*files));
            assert_non_null(files);
        }
        assert_true(l < sizeof(files[n].name));
        memcpy(files[n].name, de->d_name, l + 1);
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (!read_whole_file(path, &files[n].bytes))
            fail_msg("cannot read %s", path);
        n++;
    }
    closedir(d);
    assert_true(n > 0);
    qsort(files, n, sizeof(*files), by_name);
    *count = n;
    return files;
}

static void free_files(corpus_file *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(f[i].bytes.data);
    free(f);
}

static const corpus_file *find_file(const corpus *c, const char *name)
{
    for (size_t i = 0; i < c->n_suite; i++)
        if (strcmp(c->suite[i].name, name) == 0)
            return &c->suite[i];
    fail_msg("PngSuite file %s missing", name);
    return NULL;
}

static bool is_corrupt_name(const char *name)
{
    return name[0] == 'x';
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* FNV-1a over the meaningful bytes of plane 0, row by row. */
static uint64_t image_hash(const dvpp_image *im)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(im->format);
    uint64_t h = 0xcbf29ce484222325ull;

    for (uint32_t y = 0; y < im->height; y++)
        h = fnv1a(h, im->data + (size_t)y * im->width_stride,
                  (size_t)im->width * fi->bpp);
    return h;
}

static uint32_t test_crc32(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

/* A copy of @png with a chunk (@type, @data) inserted right after IHDR. */
static blob insert_chunk(const blob *png, const char *type, const uint8_t *data,
                         size_t dlen)
{
    blob b;

    b.len = png->len + dlen + 12;
    b.data = malloc(b.len);
    assert_non_null(b.data);
    memcpy(b.data, png->data, 33);
    put_be32(b.data + 33, (uint32_t)dlen);
    memcpy(b.data + 37, type, 4);
    if (dlen)
        memcpy(b.data + 41, data, dlen);
    put_be32(b.data + 41 + dlen, test_crc32(b.data + 37, dlen + 4));
    memcpy(b.data + 45 + dlen, png->data + 33, png->len - 33);
    return b;
}

/* Recompute the CRC of every complete chunk, so that damage reaches the
 * decoder proper instead of stopping at a CRC check. */
static void fix_crcs(uint8_t *d, size_t len)
{
    size_t pos = 8;

    while (len - pos >= 12) {
        uint32_t n = get_be32(d + pos);
        if (n > len - pos - 12)
            return;
        put_be32(d + pos + 8 + n, test_crc32(d + pos + 4, (size_t)n + 4));
        pos += (size_t)n + 12;
    }
}

/* xorshift64*: deterministic test data and mutations. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

static dvpp_status decode_as(const blob *b, dvpp_pixfmt fmt,
                             const dvpp_limits *lim, dvpp_image *out,
                             dvpp_err *err)
{
    dvpp_png_decode_opts o;

    dvpp_png_decode_opts_init(&o);
    o.format = fmt;
    memset(out, 0, sizeof(*out));
    return dvpp_png_decode(b->data, b->len, &o, lim, out, err);
}

/* An image with seeded random pixels at a stride wider than its rows. */
static dvpp_image make_image(dvpp_pixfmt fmt, uint32_t w, uint32_t h,
                             uint32_t extra_stride, uint64_t seed)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmt);
    dvpp_image im = {0};

    im.format = fmt;
    im.width = w;
    im.height = h;
    im.width_stride = w * fi->bpp + extra_stride;
    im.height_stride = h;
    im.size = (size_t)im.width_stride * h;
    im.data = malloc(im.size);
    assert_non_null(im.data);
    for (size_t i = 0; i < im.size; i++)
        im.data[i] = (uint8_t)(rng_next(&seed) >> 56);
    return im;
}

static blob encode_image(const dvpp_image *im, int level)
{
    dvpp_png_encode_opts eo = {.level = level};
    dvpp_err err = {0};
    dvpp_buf buf;
    blob b;

    dvpp_buf_init(&buf);
    assert_int_equal(dvpp_png_encode(im, &eo, &buf, &err), DVPP_OK);
    b.len = buf.len;
    b.data = malloc(buf.len);
    assert_non_null(b.data);
    memcpy(b.data, buf.data, buf.len);
    dvpp_buf_fini(&buf);
    return b;
}

/* A PNG made by the test's own libpng writer: @w x @h RGB with one zTXt
 * chunk holding @text_len bytes of 'a' (compresses about 1000:1). */
typedef struct mem_sink {
    uint8_t *data;
    size_t len, cap;
} mem_sink;

static void sink_write(png_structp png, png_bytep p, size_t n)
{
    mem_sink *s = png_get_io_ptr(png);
    if (s->len + n > s->cap) {
        s->cap = (s->len + n) * 2;
        s->data = realloc(s->data, s->cap);
        if (!s->data)
            png_error(png, "test sink out of memory");
    }
    memcpy(s->data + s->len, p, n);
    s->len += n;
}

static void sink_flush(png_structp png)
{
    (void)png;
}

static blob make_ztxt_png(uint32_t w, uint32_t h, size_t text_len)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL,
                                              NULL, NULL);
    png_infop info = png_create_info_struct(png);
    mem_sink sink = {0};
    char *text = malloc(text_len + 1);
    uint8_t *row = calloc(w, 3);
    png_text t = {0};
    blob b;

    assert_non_null(png);
    assert_non_null(info);
    assert_non_null(text);
    assert_non_null(row);
    memset(text, 'a', text_len);
    text[text_len] = '\0';
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng failed writing the zTXt fixture");
    png_set_write_fn(png, &sink, sink_write, sink_flush);
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    t.compression = PNG_TEXT_COMPRESSION_zTXt;
    t.key = (png_charp) "Comment";
    t.text = text;
    t.text_length = text_len;
    png_set_text(png, info, &t, 1);
    png_write_info(png, info);
    for (uint32_t y = 0; y < h; y++)
        png_write_row(png, row);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(text);
    free(row);
    b.data = sink.data;
    b.len = sink.len;
    return b;
}

/* ------------------------------------------------------------------------ */
/* Group setup                                                               */

static int group_setup(void **state)
{
    corpus *c = calloc(1, sizeof(*c));
    dvpp_image im;

    assert_non_null(c);
    c->suite = load_folder("pngsuite", &c->n_suite);
    c->crash = load_folder("libpng-crashers", &c->n_crash);
    /* A smooth gradient: big enough that its pixels dwarf libpng's own
     * allocations, so "no pixel buffer was requested" is observable. */
    im = make_image(DVPP_PIXEL_RGB, 300, 200, 0, 1);
    for (uint32_t y = 0; y < 200; y++)
        for (uint32_t x = 0; x < 300; x++) {
            uint8_t *p = im.data + (size_t)y * im.width_stride + x * 3;
            p[0] = (uint8_t)x, p[1] = (uint8_t)y, p[2] = (uint8_t)(x ^ y);
        }
    c->small = encode_image(&im, -1);
    free(im.data);
    *state = c;
    return 0;
}

static int group_teardown(void **state)
{
    corpus *c = *state;

    free_files(c->suite, c->n_suite);
    free_files(c->crash, c->n_crash);
    free(c->small.data);
    free(c);
    return 0;
}

/* Each test starts with the counting allocator and must leave it empty. */
static int test_setup(void **state)
{
    (void)state;
    test_alloc_install();
    return 0;
}

static int test_teardown(void **state)
{
    (void)state;
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
    return 0;
}

/* ------------------------------------------------------------------------ */
/* (a) Valid PngSuite                                                        */

/* Golden FNV-1a hashes of the RGBA and GRAY outputs, computed from Pillow
 * 9.4 (im.convert) with the documented exceptions of
 * tests/e2e/test_png_pillow.py (16-bit grey: v >> 8; tRNS compared at the
 * file's bit depth). Covers 1/2/4/8/16-bit, palette, tRNS, Adam7 and odd
 * sizes. */
static const struct golden {
    const char *name;
    uint32_t w, h;
    uint64_t rgba, gray;
} k_golden[] = {
    {"basn0g01.png", 32u, 32u, 0xf76ab9c2cc275b5dull, 0x96e8988fce83155full},
    {"basn0g02.png", 32u, 32u, 0x100bbcf53d1fd325ull, 0xb6b91b1d1e6add25ull},
    {"basi0g04.png", 32u, 32u, 0xca83a263da76ab25ull, 0x29c7387b287d37a5ull},
    {"basn0g16.png", 32u, 32u, 0x565667f6b6f01665ull, 0x2430dc13438c4bb9ull},
    {"basi2c16.png", 32u, 32u, 0x016a07c086368525ull, 0x4006720389563519ull},
    {"basn3p04.png", 32u, 32u, 0x817fff880b5d72c5ull, 0xbf465f4596a3d225ull},
    {"basi3p08.png", 32u, 32u, 0x3733a8885d80db25ull, 0x84cbbc0129be2e69ull},
    {"tbbn0g04.png", 32u, 32u, 0x39883b6d2d852264ull, 0x0f9523e5e6c1509cull},
    {"tbwn0g16.png", 32u, 32u, 0xa8a3104b5c72067eull, 0x8e747406d9e23619ull},
    {"tbbn3p08.png", 32u, 32u, 0x6cdff609c65aac37ull, 0x081fae6110943e18ull},
    {"tm3n3p02.png", 32u, 32u, 0x020e1f8a0874c325ull, 0xd4d9092ecd793725ull},
    {"basn4a16.png", 32u, 32u, 0x8c09f25148b55145ull, 0x70ee2c10bfd6044dull},
    {"basi6a16.png", 32u, 32u, 0x1c3a480c49c2c715ull, 0xcc610ad42c859fd1ull},
    {"s37i3p04.png", 37u, 37u, 0x012e67a7579b435cull, 0x5d0856966c7ec28aull},
    {"bgai4a08.png", 32u, 32u, 0x4b4e70fc7720494dull, 0xa7e1a600e2c57f05ull},
    {"tbrn2c08.png", 32u, 32u, 0x1e1f86e420f8ad04ull, 0x6958774837e8714dull},
    {"s01i3p01.png", 1u, 1u, 0x4a3d077f9b55736bull, 0xaf63d04c8601d828ull},
    {"cs3n2c16.png", 32u, 32u, 0x20fcfaad4f471625ull, 0x44c277294f767cc5ull},
};

static void test_golden_hashes(void **state)
{
    const corpus *c = *state;

    for (size_t i = 0; i < sizeof(k_golden) / sizeof(k_golden[0]); i++) {
        const struct golden *g = &k_golden[i];
        const corpus_file *f = find_file(c, g->name);
        dvpp_image rgba, gray;
        dvpp_err err = {0};

        assert_int_equal(decode_as(&f->bytes, DVPP_PIXEL_RGBA, NULL, &rgba,
                                   &err),
                         DVPP_OK);
        assert_int_equal(rgba.width, g->w);
        assert_int_equal(rgba.height, g->h);
        if (image_hash(&rgba) != g->rgba)
            fail_msg("%s: RGBA hash %016llx, Pillow's %016llx", g->name,
                     (unsigned long long)image_hash(&rgba),
                     (unsigned long long)g->rgba);
        assert_int_equal(decode_as(&f->bytes, DVPP_PIXEL_GRAY, NULL, &gray,
                                   &err),
                         DVPP_OK);
        if (image_hash(&gray) != g->gray)
            fail_msg("%s: GRAY hash %016llx, Pillow's %016llx", g->name,
                     (unsigned long long)image_hash(&gray),
                     (unsigned long long)g->gray);
        dvpp_image_free(&rgba);
        dvpp_image_free(&gray);
    }
}

/* Every valid file decodes to RGBA, RGB, BGR, BGRA, GRAY and its natural
 * format, tightly packed, and the outputs agree with each other exactly:
 * RGB is RGBA without alpha, BGR(A) is the same bytes reversed, GRAY is
 * Pillow's L of RGB. */
static void check_consistent(const char *name, const dvpp_image *rgba,
                             const dvpp_image *rgb, const dvpp_image *bgr,
                             const dvpp_image *bgra, const dvpp_image *gray)
{
    for (uint32_t y = 0; y < rgba->height; y++) {
        for (uint32_t x = 0; x < rgba->width; x++) {
            const uint8_t *a = rgba->data + (size_t)y * rgba->width_stride + x * 4;
            const uint8_t *r = rgb->data + (size_t)y * rgb->width_stride + x * 3;
            const uint8_t *b = bgr->data + (size_t)y * bgr->width_stride + x * 3;
            const uint8_t *ba = bgra->data + (size_t)y * bgra->width_stride + x * 4;
            uint8_t g = gray->data[(size_t)y * gray->width_stride + x];
            unsigned l = (r[0] * 19595u + r[1] * 38470u + r[2] * 7471u +
                          0x8000u) >> 16;

            if (memcmp(a, r, 3) != 0 || b[0] != r[2] || b[1] != r[1] ||
                b[2] != r[0] || ba[0] != a[2] || ba[1] != a[1] ||
                ba[2] != a[0] || ba[3] != a[3] || g != l)
                fail_msg("%s: outputs disagree at (%u,%u)", name, x, y);
        }
    }
}

static void test_suite_valid_decodes(void **state)
{
    const corpus *c = *state;
    size_t valid = 0;

    for (size_t i = 0; i < c->n_suite; i++) {
        const corpus_file *f = &c->suite[i];
        dvpp_image rgba, rgb, bgr, bgra, gray, nat;
        dvpp_png_info info;
        dvpp_err err = {0};

        if (is_corrupt_name(f->name))
            continue;
        valid++;
        if (dvpp_png_probe(f->bytes.data, f->bytes.len, &info, &err))
            fail_msg("%s: probe: %s", f->name, err.msg);
        if (decode_as(&f->bytes, DVPP_PIXEL_RGBA, NULL, &rgba, &err) ||
            decode_as(&f->bytes, DVPP_PIXEL_RGB, NULL, &rgb, &err) ||
            decode_as(&f->bytes, DVPP_PIXEL_BGR, NULL, &bgr, &err) ||
            decode_as(&f->bytes, DVPP_PIXEL_BGRA, NULL, &bgra, &err) ||
            decode_as(&f->bytes, DVPP_PIXEL_GRAY, NULL, &gray, &err) ||
            decode_as(&f->bytes, DVPP_PIXEL_UNKNOWN, NULL, &nat, &err))
            fail_msg("%s: %s", f->name, err.msg);
        assert_int_equal(rgba.width, info.width);
        assert_int_equal(rgba.height, info.height);
        assert_int_equal(rgba.width_stride, info.width * 4); /* tight */
        assert_int_equal(rgba.height_stride, info.height);
        assert_int_equal(gray.format, DVPP_PIXEL_GRAY);
        assert_int_equal(gray.width_stride, info.width);
        /* Natural format: grey stays grey, alpha or tRNS -> RGBA. */
        assert_int_equal(nat.format,
                         info.has_alpha ? DVPP_PIXEL_RGBA
                         : info.color_type == 0 ? DVPP_PIXEL_GRAY
                                                : DVPP_PIXEL_RGB);
        check_consistent(f->name, &rgba, &rgb, &bgr, &bgra, &gray);
        /* Without alpha in the source, RGBA output is opaque. */
        if (!info.has_alpha)
            for (size_t p = 0; p < (size_t)info.width * info.height; p++)
                assert_int_equal(rgba.data[p * 4 + 3], 255);
        dvpp_image_free(&rgba);
        dvpp_image_free(&rgb);
        dvpp_image_free(&bgr);
        dvpp_image_free(&bgra);
        dvpp_image_free(&gray);
        dvpp_image_free(&nat);
    }
    assert_true(valid >= 150);
}

/* Low bit depths scale like libpng and Pillow: 1 bit -> 0/255, 2 bits ->
 * multiples of 85, 4 bits -> multiples of 17. The level counts are those
 * Pillow finds in the files (the 4-bit ones use 15 of 16 levels). */
static void test_low_bit_grey_scaling(void **state)
{
    static const struct {
        const char *name;
        unsigned step, levels;
    } k[] = {{"basn0g01.png", 255, 2}, {"basn0g02.png", 85, 4},
             {"basn0g04.png", 17, 15}, {"basi0g04.png", 17, 15}};
    const corpus *c = *state;

    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        dvpp_image g;
        dvpp_err err = {0};
        bool seen[256] = {false};
        unsigned distinct = 0;

        assert_int_equal(decode_as(&find_file(c, k[i].name)->bytes,
                                   DVPP_PIXEL_GRAY, NULL, &g, &err),
                         DVPP_OK);
        for (size_t p = 0; p < (size_t)g.width * g.height; p++) {
            assert_int_equal(g.data[p] % k[i].step, 0);
            distinct += !seen[g.data[p]];
            seen[g.data[p]] = true;
        }
        assert_int_equal(distinct, k[i].levels);
        dvpp_image_free(&g);
    }
}

static void test_probe_fields(void **state)
{
    const corpus *c = *state;
    dvpp_png_info info;
    dvpp_err err = {0};
    const blob *b;

    b = &find_file(c, "basn3p08.png")->bytes;
    assert_int_equal(dvpp_png_probe(b->data, b->len, &info, &err), DVPP_OK);
    assert_int_equal(info.color_type, 3);
    assert_int_equal(info.bit_depth, 8);
    assert_int_equal(info.channels, 3);
    assert_false(info.has_trns);
    assert_false(info.has_alpha);

    b = &find_file(c, "tbbn3p08.png")->bytes;
    assert_int_equal(dvpp_png_probe(b->data, b->len, &info, &err), DVPP_OK);
    assert_true(info.has_trns);
    assert_true(info.has_alpha);
    assert_int_equal(info.channels, 4);

    b = &find_file(c, "basi0g16.png")->bytes;
    assert_int_equal(dvpp_png_probe(b->data, b->len, &info, &err), DVPP_OK);
    assert_true(info.interlaced);
    assert_int_equal(info.bit_depth, 16);
    assert_int_equal(info.channels, 1);

    b = &find_file(c, "basn4a08.png")->bytes;
    assert_int_equal(dvpp_png_probe(b->data, b->len, &info, &err), DVPP_OK);
    assert_int_equal(info.channels, 2);
    assert_true(info.has_alpha);
    assert_false(info.has_trns);

    b = &find_file(c, "cdfn2c08.png")->bytes; /* 8 x 32 */
    /* A prefix holding just the signature and IHDR is enough. */
    assert_int_equal(dvpp_png_probe(b->data, 33, &info, &err), DVPP_OK);
    assert_int_equal(info.width, 8);
    assert_int_equal(info.height, 32);
    assert_int_equal(dvpp_png_probe(b->data, 32, &info, &err), DVPP_ECORRUPT);
    assert_non_null(strstr(err.msg, "truncated"));
    assert_int_equal(dvpp_png_probe(NULL, 0, &info, &err), DVPP_ECORRUPT);
    assert_int_equal(dvpp_png_probe(b->data, b->len, NULL, &err), DVPP_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* (b) The 14 corrupt PngSuite files                                         */

static void test_suite_corrupt_files(void **state)
{
    static const char *const k_names[14] = {
        "xc1n0g08.png", "xc9n2c08.png", "xcrn0g04.png", "xcsn0g01.png",
        "xd0n2c08.png", "xd3n2c08.png", "xd9n2c08.png", "xdtn0g01.png",
        "xhdn0g08.png", "xlfn0g04.png", "xs1n0g01.png", "xs2n0g01.png",
        "xs4n0g01.png", "xs7n0g01.png"};
    const corpus *c = *state;
    char msgs[14][DVPP_ERR_LEN];

    for (size_t i = 0; i < 14; i++) {
        const corpus_file *f = find_file(c, k_names[i]);
        dvpp_err err = {0};
        dvpp_image out;

        assert_int_equal(decode_as(&f->bytes, DVPP_PIXEL_RGB, NULL, &out, &err),
                         DVPP_ECORRUPT);
        assert_int_equal(err.status, DVPP_ECORRUPT);
        assert_null(out.data);
        assert_true(strlen(err.msg) >= 20); /* a sentence, not a code */
        assert_null(strchr(err.msg, '\n'));
        memcpy(msgs[i], err.msg, sizeof(msgs[i]));
        for (size_t j = 0; j < i; j++)
            if (strcmp(msgs[i], msgs[j]) == 0)
                fail_msg("%s and %s share the message \"%s\"", k_names[i],
                         k_names[j], msgs[i]);
    }
    /* Each message names the actual damage. */
    assert_non_null(strstr(msgs[0], "colour type 1"));
    assert_non_null(strstr(msgs[1], "colour type 9"));
    assert_non_null(strstr(msgs[2], "ASCII conversion"));
    assert_non_null(strstr(msgs[3], "IDAT: CRC error"));
    assert_non_null(strstr(msgs[4], "bit depth 0"));
    assert_non_null(strstr(msgs[5], "bit depth 3"));
    assert_non_null(strstr(msgs[6], "bit depth 99"));
    assert_non_null(strstr(msgs[7], "IDAT"));
    assert_non_null(strstr(msgs[8], "IHDR: CRC error"));
    assert_non_null(strstr(msgs[9], "ASCII conversion"));
    assert_string_equal(msgs[11],
                        "not a PNG: signature byte 1 is 0x51 (expected 0x50)");
    assert_non_null(strstr(msgs[10], "signature byte 0 is 0x09"));
    assert_non_null(strstr(msgs[12], "signature byte 3 is 0x67"));
    assert_non_null(strstr(msgs[13], "signature byte 6 is 0x20"));
}

static void test_signature_edge_cases(void **state)
{
    static const uint8_t k_jpeg[] = {0xff, 0xd8, 0xff, 0xe0};
    const blob *b = &find_file(*state, "basn0g08.png")->bytes;
    dvpp_png_info info;
    dvpp_err err = {0};
    dvpp_image out = {0};

    assert_int_equal(dvpp_png_decode(b->data, 0, NULL, NULL, &out, &err),
                     DVPP_ECORRUPT);
    assert_string_equal(err.msg, "not a PNG: the input is empty");
    assert_int_equal(dvpp_png_probe(b->data, 5, &info, &err), DVPP_ECORRUPT);
    assert_non_null(strstr(err.msg, "5 bytes"));
    assert_int_equal(dvpp_png_probe(k_jpeg, sizeof(k_jpeg), &info, &err),
                     DVPP_ECORRUPT);
    assert_string_equal(err.msg,
                        "not a PNG: signature byte 0 is 0xff (expected 0x89)");
}

/* ------------------------------------------------------------------------ */
/* (c) libpng's crashers                                                     */

static void test_crashers(void **state)
{
    const corpus *c = *state;
    size_t errors = 0;

    assert_true(c->n_crash >= 23);
    for (size_t i = 0; i < c->n_crash; i++) {
        dvpp_err err = {0};
        dvpp_image out;
        dvpp_status st;

        st = decode_as(&c->crash[i].bytes, DVPP_PIXEL_RGBA, NULL, &out, &err);
        if (st == DVPP_OK) {
            assert_non_null(out.data);
            dvpp_image_free(&out);
        } else {
            assert_null(out.data);
            assert_true(err.msg[0] != '\0');
            errors++;
        }
        if (test_alloc()->live != 0)
            fail_msg("%s leaked %zu blocks", c->crash[i].name,
                     test_alloc()->live);
    }
    /* Only empty_ancillary_chunks.png is a readable image (dvppd skips
     * the ancillary chunks it does not use). */
    assert_int_equal(errors, c->n_crash - 1);
}

/* ------------------------------------------------------------------------ */
/* (d) Limits                                                                */

/* @lim rejects @b with DVPP_ELIMIT naming @field, before any large
 * allocation. */
static void expect_limit(const blob *b, const dvpp_limits *lim,
                         const char *field)
{
    dvpp_err err = {0};
    dvpp_image out;

    test_alloc()->largest = 0;
    assert_int_equal(decode_as(b, DVPP_PIXEL_RGBA, lim, &out, &err),
                     DVPP_ELIMIT);
    assert_string_equal(err.field, field);
    assert_null(out.data);
    assert_true(test_alloc()->largest < SMALL_ALLOC);
}

static void expect_ok(const blob *b, const dvpp_limits *lim)
{
    dvpp_err err = {0};
    dvpp_image out;

    if (decode_as(b, DVPP_PIXEL_RGBA, lim, &out, &err) != DVPP_OK)
        fail_msg("expected success: %s", err.msg);
    dvpp_image_free(&out);
}

static void test_limit_side_pixels_bytes(void **state)
{
    const corpus *c = *state;
    dvpp_limits lim = dvpp_limits_default();

    lim.max_side = 299;
    expect_limit(&c->small, &lim, "max_side");
    lim.max_side = 300;
    expect_ok(&c->small, &lim);

    lim = dvpp_limits_default();
    lim.max_pixels = 59999;
    expect_limit(&c->small, &lim, "max_pixels");
    lim.max_pixels = 60000;
    expect_ok(&c->small, &lim);

    lim = dvpp_limits_default();
    lim.max_encoded_bytes = c->small.len - 1;
    expect_limit(&c->small, &lim, "max_encoded_bytes");
    lim.max_encoded_bytes = c->small.len;
    expect_ok(&c->small, &lim);
}

/* Behaviour chosen for max_png_chunk: an ancillary chunk whose stored
 * length exceeds the limit is an error (DVPP_ELIMIT "max_png_chunk"),
 * found by the chunk walk before libpng runs, so nothing is allocated for
 * it. libpng's own "warn and skip" never applies, because dvppd tells
 * libpng to skip every ancillary chunk except tRNS unread. */
static void test_limit_png_chunk(void **state)
{
    const corpus *c = *state;
    dvpp_limits lim = dvpp_limits_default();
    const size_t text_len = 100000;
    uint8_t *text = malloc(text_len);
    blob big;

    assert_non_null(text);
    memcpy(text, "Comment", 8); /* keyword, NUL, then the text */
    memset(text + 8, 'x', text_len - 8);
    big = insert_chunk(&c->small, "tEXt", text, text_len);
    free(text);

    lim.max_png_chunk = (uint32_t)text_len - 1;
    expect_limit(&big, &lim, "max_png_chunk");
    lim.max_png_chunk = (uint32_t)text_len;
    expect_ok(&big, &lim);
    /* The default (1 MiB) admits it too. */
    expect_ok(&big, NULL);
    free(big.data);
}

/* A zTXt bomb (4 MiB of text in about 4 KiB) within max_png_chunk decodes,
 * and nothing near the inflated size is ever allocated: the chunk is
 * skipped, not inflated. Over the limit, its stored size is rejected. */
static void test_limit_ztxt_bomb(void **state)
{
    dvpp_limits lim = dvpp_limits_default();
    blob bomb = make_ztxt_png(16, 16, 4u << 20);
    uint32_t ztxt_len = get_be32(bomb.data + 33);

    (void)state;
    assert_memory_equal(bomb.data + 37, "zTXt", 4);
    assert_true(ztxt_len < SMALL_ALLOC);
    lim.max_png_chunk = ztxt_len;
    test_alloc()->largest = 0;
    expect_ok(&bomb, &lim);
    assert_true(test_alloc()->largest < SMALL_ALLOC);
    lim.max_png_chunk = ztxt_len - 1;
    expect_limit(&bomb, &lim, "max_png_chunk");
    free(bomb.data);
}

/* max_png_chunks bounds libpng's chunk cache. dvppd skips every
 * ancillary chunk but tRNS unread, so nothing reaches the cache: many
 * small text chunks are never an error, whatever the limit. */
static void test_limit_png_chunks(void **state)
{
    const corpus *c = *state;
    dvpp_limits lim = dvpp_limits_default();
    blob cur = c->small, next;
    dvpp_image out;
    dvpp_err err = {0};

    for (int i = 0; i < 10; i++) {
        next = insert_chunk(&cur, "tEXt", (const uint8_t *)"Key\0value", 9);
        if (cur.data != c->small.data)
            free(cur.data);
        cur = next;
    }
    lim.max_png_chunks = 2;
    assert_int_equal(decode_as(&cur, DVPP_PIXEL_RGB, &lim, &out, &err),
                     DVPP_OK);
    dvpp_image_free(&out);
    free(cur.data);
}

/* Converting an Adam7 image needs the whole image in libpng's layout
 * first: that scratch counts against max_decode_memory. A direct decode
 * (grey file to GRAY) needs none. */
static void test_limit_decode_memory(void **state)
{
    const blob *b = &find_file(*state, "basi0g08.png")->bytes; /* 32x32 */
    dvpp_limits lim = dvpp_limits_default();
    dvpp_err err = {0};
    dvpp_image out;

    lim.max_decode_memory = 32 * 32 - 1;
    assert_int_equal(decode_as(b, DVPP_PIXEL_RGB, &lim, &out, &err),
                     DVPP_ELIMIT);
    assert_string_equal(err.field, "max_decode_memory");
    lim.max_decode_memory = 32 * 32;
    assert_int_equal(decode_as(b, DVPP_PIXEL_RGB, &lim, &out, &err), DVPP_OK);
    dvpp_image_free(&out);
    lim.max_decode_memory = 0;
    assert_int_equal(decode_as(b, DVPP_PIXEL_GRAY, &lim, &out, &err), DVPP_OK);
    dvpp_image_free(&out);
}

/* ------------------------------------------------------------------------ */
/* (e) Allocation failure N = 1..                                            */

static void decode_oom_loop(const blob *b, dvpp_pixfmt fmt, const char *what)
{
    size_t n, nomem = 0;

    for (n = 1;; n++) {
        dvpp_err err = {0};
        dvpp_image out;
        dvpp_status st;

        test_alloc_install();
        test_alloc()->fail_at = n;
        st = decode_as(b, fmt, NULL, &out, &err);
        if (test_alloc()->failures == 0) {
            /* Every allocation succeeded: the loop is over. */
            assert_int_equal(st, DVPP_OK);
            dvpp_image_free(&out);
            assert_int_equal(test_alloc()->live, 0);
            break;
        }
        if (st == DVPP_OK) {
            dvpp_image_free(&out); /* libpng tolerated the failure */
        } else {
            assert_null(out.data);
            nomem += st == DVPP_ENOMEM;
            if (st != DVPP_ENOMEM)
                fail_msg("%s: failing allocation %zu gave %s: %s", what, n,
                         dvpp_status_name(st), err.msg);
        }
        if (test_alloc()->live != 0)
            fail_msg("%s: failing allocation %zu leaked %zu blocks", what, n,
                     test_alloc()->live);
        assert_true(n < 1000);
    }
    assert_true(n > 3);
    assert_true(nomem > 0);
}

static void test_decode_alloc_failures(void **state)
{
    const corpus *c = *state;

    decode_oom_loop(&c->small, DVPP_PIXEL_RGBA, "300x200 rgba");
    decode_oom_loop(&c->small, DVPP_PIXEL_RGB, "300x200 rgb direct");
    decode_oom_loop(&find_file(c, "basi6a16.png")->bytes, DVPP_PIXEL_BGR,
                    "basi6a16 bgr");
    decode_oom_loop(&find_file(c, "tbbn3p08.png")->bytes, DVPP_PIXEL_RGBA,
                    "tbbn3p08 rgba");
    decode_oom_loop(&find_file(c, "basi0g01.png")->bytes, DVPP_PIXEL_GRAY,
                    "basi0g01 gray");
}

static void test_encode_alloc_failures(void **state)
{
    dvpp_image im = make_image(DVPP_PIXEL_RGBA, 64, 48, 4, 7);
    size_t n;

    (void)state;
    for (n = 1;; n++) {
        dvpp_png_encode_opts eo = {.level = 6};
        dvpp_err err = {0};
        dvpp_buf buf;
        dvpp_status st;

        test_alloc_install();
        test_alloc()->fail_at = n;
        dvpp_buf_init(&buf);
        st = dvpp_png_encode(&im, &eo, &buf, &err);
        if (test_alloc()->failures == 0) {
            assert_int_equal(st, DVPP_OK);
            assert_true(buf.len > 8);
            dvpp_buf_fini(&buf);
            break;
        }
        assert_int_equal(st, DVPP_ENOMEM);
        assert_int_equal(buf.len, 0);
        dvpp_buf_fini(&buf);
        assert_int_equal(test_alloc()->live, 0);
        assert_true(n < 1000);
    }
    assert_true(n > 3);
    free(im.data);
}

/* ------------------------------------------------------------------------ */
/* (f) Encode -> decode round trips                                          */

static void roundtrip(dvpp_pixfmt fmt, uint32_t w, uint32_t h, int level)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmt);
    dvpp_image in = make_image(fmt, w, h, 13, (uint64_t)fmt * 131 + w);
    dvpp_err err = {0};
    dvpp_image out;
    blob png;

    png = encode_image(&in, level);
    assert_int_equal(decode_as(&png, fmt, NULL, &out, &err), DVPP_OK);
    assert_int_equal(out.format, fmt);
    assert_int_equal(out.width, w);
    assert_int_equal(out.height, h);
    for (uint32_t y = 0; y < h; y++)
        if (memcmp(in.data + (size_t)y * in.width_stride,
                   out.data + (size_t)y * out.width_stride,
                   (size_t)w * fi->bpp) != 0)
            fail_msg("%s %ux%u level %d: row %u differs", fi->name, w, h,
                     level, y);
    dvpp_image_free(&out);
    free(png.data);
    free(in.data);
}

static void test_roundtrip(void **state)
{
    static const dvpp_pixfmt k_fmts[] = {DVPP_PIXEL_RGB, DVPP_PIXEL_RGBA,
                                         DVPP_PIXEL_GRAY, DVPP_PIXEL_BGR,
                                         DVPP_PIXEL_BGRA, DVPP_PIXEL_YUV400};

    (void)state;
    for (size_t i = 0; i < sizeof(k_fmts) / sizeof(k_fmts[0]); i++) {
        roundtrip(k_fmts[i], 57, 31, -1);
        roundtrip(k_fmts[i], 1, 1, 0);
        roundtrip(k_fmts[i], 130, 3, 9);
    }
}

/* A BGR input is stored as RGB in the file: decoding to RGB swaps. */
static void test_encode_bgr_is_stored_as_rgb(void **state)
{
    dvpp_image in = make_image(DVPP_PIXEL_BGR, 9, 5, 3, 99);
    dvpp_err err = {0};
    dvpp_png_info info;
    dvpp_image out;
    blob png;

    (void)state;
    png = encode_image(&in, 3);
    assert_int_equal(dvpp_png_probe(png.data, png.len, &info, &err), DVPP_OK);
    assert_int_equal(info.color_type, 2);
    assert_int_equal(info.bit_depth, 8);
    assert_int_equal(decode_as(&png, DVPP_PIXEL_RGB, NULL, &out, &err), DVPP_OK);
    for (uint32_t y = 0; y < 5; y++)
        for (uint32_t x = 0; x < 9; x++) {
            const uint8_t *s = in.data + (size_t)y * in.width_stride + x * 3;
            const uint8_t *d = out.data + (size_t)y * out.width_stride + x * 3;
            assert_true(d[0] == s[2] && d[1] == s[1] && d[2] == s[0]);
        }
    dvpp_image_free(&out);
    free(png.data);
    free(in.data);
}

static void test_encode_rejects(void **state)
{
    dvpp_image im = make_image(DVPP_PIXEL_RGB, 4, 4, 0, 3);
    dvpp_png_encode_opts eo = {.level = 10};
    dvpp_err err = {0};
    dvpp_buf buf;

    (void)state;
    dvpp_buf_init(&buf);
    assert_int_equal(dvpp_png_encode(&im, &eo, &buf, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "level");
    eo.level = -1;
    im.format = DVPP_PIXEL_NV12;
    assert_int_equal(dvpp_png_encode(&im, &eo, &buf, &err), DVPP_EFORMAT);
    im.format = DVPP_PIXEL_RGB;
    im.size = 47; /* one byte short */
    assert_int_equal(dvpp_png_encode(&im, &eo, &buf, &err), DVPP_ENOSPC);
    im.size = 48;
    im.width_stride = 11; /* narrower than a row */
    assert_int_equal(dvpp_png_encode(&im, &eo, &buf, &err), DVPP_ESTRIDE);
    assert_int_equal(buf.len, 0);
    /* Output is appended after what the buffer already holds. */
    im.width_stride = 12;
    assert_int_equal(dvpp_buf_append(&buf, "abc", 3), DVPP_OK);
    assert_int_equal(dvpp_png_encode(&im, NULL, &buf, &err), DVPP_OK);
    assert_memory_equal(buf.data, "abc\x89PNG", 7);
    dvpp_buf_fini(&buf);
    free(im.data);
}

/* ------------------------------------------------------------------------ */
/* Conversions                                                               */

/* Composite: out = (c*a + bg*(255-a) + 127) / 255, alpha 255; DROP keeps
 * the colour and makes alpha 255; AUTO keeps alpha. */
static void test_alpha_modes(void **state)
{
    dvpp_image in = make_image(DVPP_PIXEL_RGBA, 40, 7, 0, 5);
    dvpp_png_decode_opts o;
    dvpp_err err = {0};
    dvpp_image comp = {0}, drop = {0}, keep = {0}, gray = {0};
    blob png;

    (void)state;
    png = encode_image(&in, 1);
    dvpp_png_decode_opts_init(&o);
    o.format = DVPP_PIXEL_BGR;
    o.alpha = DVPP_PNG_ALPHA_COMPOSITE;
    o.background[0] = 10, o.background[1] = 200, o.background[2] = 255;
    assert_int_equal(dvpp_png_decode(png.data, png.len, &o, NULL, &comp, &err),
                     DVPP_OK);
    o.format = DVPP_PIXEL_GRAY;
    assert_int_equal(dvpp_png_decode(png.data, png.len, &o, NULL, &gray, &err),
                     DVPP_OK);
    o.format = DVPP_PIXEL_RGBA;
    o.alpha = DVPP_PNG_ALPHA_DROP;
    assert_int_equal(dvpp_png_decode(png.data, png.len, &o, NULL, &drop, &err),
                     DVPP_OK);
    o.alpha = DVPP_PNG_ALPHA_AUTO;
    assert_int_equal(dvpp_png_decode(png.data, png.len, &o, NULL, &keep, &err),
                     DVPP_OK);
    for (size_t p = 0; p < 40 * 7; p++) {
        const uint8_t *s = in.data + p * 4;
        unsigned a = s[3], c[3];

        for (int k = 0; k < 3; k++)
            c[k] = (s[k] * a + o.background[k] * (255u - a) + 127u) / 255u;
        assert_int_equal(comp.data[p * 3 + 0], c[2]); /* BGR order */
        assert_int_equal(comp.data[p * 3 + 1], c[1]);
        assert_int_equal(comp.data[p * 3 + 2], c[0]);
        assert_int_equal(gray.data[p], (c[0] * 19595u + c[1] * 38470u +
                                        c[2] * 7471u + 0x8000u) >> 16);
        assert_memory_equal(drop.data + p * 4, s, 3);
        assert_int_equal(drop.data[p * 4 + 3], 255);
        assert_memory_equal(keep.data + p * 4, s, 4);
    }
    dvpp_image_free(&comp);
    dvpp_image_free(&gray);
    dvpp_image_free(&drop);
    dvpp_image_free(&keep);
    free(png.data);
    free(in.data);
}

/* Caller-provided buffers: too small -> ENOSPC before decoding (and the
 * buffer untouched); big enough -> used, with the padding zeroed. */
static void test_caller_buffer(void **state)
{
    const blob *b = &find_file(*state, "basn2c08.png")->bytes; /* 32x32 */
    dvpp_png_decode_opts o;
    dvpp_err err = {0};
    uint8_t *mem = malloc(48 * 3 * 40);
    dvpp_image out, ref;

    assert_non_null(mem);
    dvpp_png_decode_opts_init(&o);
    o.format = DVPP_PIXEL_RGB;
    o.align_w = 48;
    o.align_h = 20; /* 32 rows -> 40 */
    memset(mem, 0xaa, 48 * 3 * 40);
    out = (dvpp_image){.data = mem, .size = 48 * 3 * 40 - 1};
    assert_int_equal(dvpp_png_decode(b->data, b->len, &o, NULL, &out, &err),
                     DVPP_ENOSPC);
    assert_ptr_equal(out.data, mem);
    assert_int_equal(mem[0], 0xaa);
    out = (dvpp_image){.data = mem, .size = 48 * 3 * 40};
    assert_int_equal(dvpp_png_decode(b->data, b->len, &o, NULL, &out, &err),
                     DVPP_OK);
    assert_ptr_equal(out.data, mem);
    assert_int_equal(out.width_stride, 48 * 3);
    assert_int_equal(out.height_stride, 40);
    assert_int_equal(decode_as(b, DVPP_PIXEL_RGB, NULL, &ref, &err), DVPP_OK);
    for (uint32_t y = 0; y < 40; y++)
        for (uint32_t x = 0; x < 48 * 3; x++) {
            uint8_t v = mem[y * 48 * 3 + x];
            if (y < 32 && x < 32 * 3)
                assert_int_equal(v, ref.data[y * 32 * 3 + x]);
            else
                assert_int_equal(v, 0);
        }
    dvpp_image_free(&ref);
    free(mem);
}

static void test_bad_options(void **state)
{
    const blob *b = &find_file(*state, "basn2c08.png")->bytes;
    dvpp_png_decode_opts o;
    dvpp_err err = {0};
    dvpp_image out = {0};

    dvpp_png_decode_opts_init(&o);
    o.format = DVPP_PIXEL_NV12;
    assert_int_equal(dvpp_png_decode(b->data, b->len, &o, NULL, &out, &err),
                     DVPP_EFORMAT);
    assert_string_equal(err.field, "format");
    o.format = DVPP_PIXEL_RGB;
    o.alpha = (dvpp_png_alpha)7;
    assert_int_equal(dvpp_png_decode(b->data, b->len, &o, NULL, &out, &err),
                     DVPP_EINVAL);
    assert_int_equal(dvpp_png_decode(NULL, 5, NULL, NULL, &out, &err),
                     DVPP_EINVAL);
    assert_int_equal(dvpp_png_decode(b->data, b->len, NULL, NULL, NULL, &err),
                     DVPP_EINVAL);
    assert_null(out.data);
}

/* ------------------------------------------------------------------------ */
/* (g) Truncation and byte flips                                             */

static void decode_must_not_leak(const uint8_t *data, size_t len,
                                 dvpp_pixfmt fmt, const char *name,
                                 dvpp_status *st_out)
{
    dvpp_err err = {0};
    dvpp_image out = {0};
    dvpp_png_decode_opts o;
    dvpp_status st;

    dvpp_png_decode_opts_init(&o);
    o.format = fmt;
    st = dvpp_png_decode(data, len, &o, NULL, &out, &err);
    if (st == DVPP_OK)
        dvpp_image_free(&out);
    else if (out.data || err.msg[0] == '\0')
        fail_msg("%s (%zu bytes): error %s without a clean state", name, len,
                 dvpp_status_name(st));
    if (test_alloc()->live != 0)
        fail_msg("%s (%zu bytes): %zu blocks leaked", name, len,
                 test_alloc()->live);
    if (st_out)
        *st_out = st;
}

static void sweep_file(const corpus_file *f, bool valid, uint64_t seed)
{
    static const dvpp_pixfmt k_fmts[] = {DVPP_PIXEL_RGBA, DVPP_PIXEL_RGB,
                                         DVPP_PIXEL_GRAY};
    uint8_t *copy = malloc(f->bytes.len);
    dvpp_status st;

    assert_non_null(copy);
    /* Strict: every proper prefix of a valid file is an error. */
    for (size_t cut = 0; cut < f->bytes.len; cut += 97) {
        decode_must_not_leak(f->bytes.data, cut, k_fmts[cut % 3], f->name, &st);
        if (valid && st == DVPP_OK)
            fail_msg("%s cut at %zu decoded as if complete", f->name, cut);
    }
    for (int i = 0; i < 20; i++) {
        size_t at = (size_t)(rng_next(&seed) % f->bytes.len);
        memcpy(copy, f->bytes.data, f->bytes.len);
        copy[at] ^= (uint8_t)(1u + rng_next(&seed) % 255u);
        decode_must_not_leak(copy, f->bytes.len, k_fmts[i % 3], f->name, NULL);
        /* The same damage with valid CRCs reaches inflate and unfiltering. */
        fix_crcs(copy, f->bytes.len);
        decode_must_not_leak(copy, f->bytes.len, k_fmts[(i + 1) % 3], f->name,
                             NULL);
    }
    free(copy);
}

static void test_truncate_and_flip(void **state)
{
    const corpus *c = *state;
    uint64_t seed = 0x5eed5eed5eedull;

    for (size_t i = 0; i < c->n_suite; i++)
        sweep_file(&c->suite[i], !is_corrupt_name(c->suite[i].name),
                   seed + i);
    for (size_t i = 0; i < c->n_crash; i++)
        sweep_file(&c->crash[i], false, seed * 3 + i);
}

/* Signature + IHDR + the first IDAT (its data cut to @keep bytes, CRC
 * recomputed) + IEND: well-framed chunks whose image data ends early. */
static blob first_idat_only(const blob *png, uint32_t keep)
{
    static const uint8_t k_iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D',
                                       0xae, 0x42, 0x60, 0x82};
    size_t pos = 33;
    blob b;

    while (memcmp(png->data + pos + 4, "IDAT", 4) != 0)
        pos += get_be32(png->data + pos) + 12;
    if (keep > get_be32(png->data + pos))
        keep = get_be32(png->data + pos);
    b.len = 33 + 12 + (size_t)keep + 12;
    b.data = malloc(b.len);
    assert_non_null(b.data);
    memcpy(b.data, png->data, 33);
    put_be32(b.data + 33, keep);
    memcpy(b.data + 37, png->data + pos + 4, 4 + (size_t)keep);
    put_be32(b.data + 41 + keep, test_crc32(b.data + 37, (size_t)keep + 4));
    memcpy(b.data + 45 + keep, k_iend, sizeof(k_iend));
    return b;
}

/* Strict: image data that stops early is an error even when every chunk is
 * well framed and every CRC is right (the chunk walk cannot see it; libpng
 * must). Nothing is returned and nothing leaks. */
static void test_strict_short_image_data(void **state)
{
    /* Random pixels do not compress: libpng splits them over many IDATs. */
    dvpp_image im = make_image(DVPP_PIXEL_RGB, 300, 200, 0, 21);
    blob full = encode_image(&im, 9), cut;
    uint32_t first = get_be32(full.data + 33);
    const uint32_t keeps[] = {first, first / 2, 2};

    (void)state;
    assert_memory_equal(full.data + 37, "IDAT", 4);
    assert_true(first < full.len / 2); /* more IDATs follow */
    for (size_t i = 0; i < sizeof(keeps) / sizeof(keeps[0]); i++) {
        dvpp_err err = {0};
        dvpp_image out;

        cut = first_idat_only(&full, keeps[i]);
        assert_int_equal(decode_as(&cut, DVPP_PIXEL_RGB, NULL, &out, &err),
                         DVPP_ECORRUPT);
        assert_null(out.data);
        assert_non_null(strstr(err.msg, "PNG: "));
        free(cut.data);
    }
    free(full.data);
    free(im.data);
}

/* ------------------------------------------------------------------------ */
/* (h) ascend310 / ascend310p profile and PngPredictDecSize                  */

static dvpp_status decode_profile(const blob *b, dvpp_profile prof,
                                  dvpp_pixfmt fmt, dvpp_image *out,
                                  dvpp_err *err)
{
    dvpp_png_decode_opts o;

    dvpp_png_decode_opts_init(&o);
    o.profile = prof;
    o.format = fmt;
    memset(out, 0, sizeof(*out));
    return dvpp_png_decode(b->data, b->len, &o, NULL, out, err);
}

static void test_ascend_profile(void **state)
{
    static const dvpp_profile k_profiles[] = {DVPP_PROFILE_ASCEND310,
                                              DVPP_PROFILE_ASCEND310P};
    const corpus *c = *state;
    dvpp_image im31 = make_image(DVPP_PIXEL_RGB, 31, 40, 0, 11);
    dvpp_image im33 = make_image(DVPP_PIXEL_RGB, 33, 33, 0, 12);
    blob png31 = encode_image(&im31, 1), png33 = encode_image(&im33, 1);

    for (size_t i = 0; i < 2; i++) {
        dvpp_profile p = k_profiles[i];
        dvpp_err err = {0};
        dvpp_image out;

        assert_int_equal(decode_profile(&find_file(c, "basn3p08.png")->bytes,
                                        p, DVPP_PIXEL_RGB, &out, &err),
                         DVPP_EPROFILE);
        assert_string_equal(err.field, "color_type");
        assert_non_null(strstr(err.msg, "FORMAT_NOT_MATCH"));
        assert_int_equal(decode_profile(&png31, p, DVPP_PIXEL_RGB, &out, &err),
                         DVPP_EPROFILE);
        assert_string_equal(err.field, "width");
        assert_int_equal(decode_profile(&find_file(c, "basn2c08.png")->bytes,
                                        p, DVPP_PIXEL_GRAY, &out, &err),
                         DVPP_EPROFILE);
        assert_string_equal(err.field, "format");

        /* 33x33 RGB: ws = ALIGN(33,128)*3 = 384, hs = ALIGN(33,16) = 48. */
        assert_int_equal(decode_profile(&png33, p, DVPP_PIXEL_RGB, &out, &err),
                         DVPP_OK);
        assert_int_equal(out.width_stride, 128 * 3);
        assert_int_equal(out.height_stride, 48);
        for (uint32_t y = 0; y < 33; y++) {
            assert_memory_equal(out.data + (size_t)y * 384,
                                im33.data + (size_t)y * 99, 99);
            for (uint32_t x = 99; x < 384; x++)
                assert_int_equal(out.data[(size_t)y * 384 + x], 0);
        }
        dvpp_image_free(&out);

        /* UNKNOWN keeps the source: RGBA file -> RGBA8888, ws = 128*4. */
        assert_int_equal(decode_profile(&find_file(c, "basn6a08.png")->bytes,
                                        p, DVPP_PIXEL_UNKNOWN, &out, &err),
                         DVPP_OK);
        assert_int_equal(out.format, DVPP_PIXEL_RGBA);
        assert_int_equal(out.width_stride, 128 * 4);
        assert_int_equal(out.height_stride, 32);
        dvpp_image_free(&out);
        /* Grey -> RGB888. */
        assert_int_equal(decode_profile(&find_file(c, "basn0g08.png")->bytes,
                                        p, DVPP_PIXEL_UNKNOWN, &out, &err),
                         DVPP_OK);
        assert_int_equal(out.format, DVPP_PIXEL_RGB);
        assert_int_equal(out.width_stride, 128 * 3);
        dvpp_image_free(&out);
    }
    free(png31.data);
    free(png33.data);
    free(im31.data);
    free(im33.data);
}

/* A file with just a signature and an IHDR: enough for PredictDecSize. */
static blob ihdr_only(uint32_t w, uint32_t h, uint8_t depth, uint8_t ctype)
{
    blob b = {malloc(33), 33};

    assert_non_null(b.data);
    memcpy(b.data, "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16);
    put_be32(b.data + 16, w);
    put_be32(b.data + 20, h);
    b.data[24] = depth;
    b.data[25] = ctype;
    b.data[26] = b.data[27] = b.data[28] = 0;
    put_be32(b.data + 29, test_crc32(b.data + 12, 17));
    return b;
}

static void test_predict_dec_size(void **state)
{
    const corpus *c = *state;
    const blob *rgb8 = &find_file(c, "basn2c08.png")->bytes;   /* 32x32x8 */
    const blob *rgba16 = &find_file(c, "basn6a16.png")->bytes; /* 32x32x16 */
    dvpp_err err = {0};
    uint32_t size = 0;
    blob big;

    /* w' = 128, h' = 32; rowBytes = (128*8*3 + 7) >> 3 = 384. */
    assert_int_equal(dvpp_png_predict_dec_size(rgb8->data, rgb8->len,
                                               DVPP_PIXEL_RGB, &size, &err),
                     DVPP_OK);
    assert_int_equal(size, 384 * 32);
    /* RGBA: (128*8*4 + 7) >> 3 = 512. */
    assert_int_equal(dvpp_png_predict_dec_size(rgb8->data, rgb8->len,
                                               DVPP_PIXEL_RGBA, &size, &err),
                     DVPP_OK);
    assert_int_equal(size, 512 * 32);
    /* 16-bit, UNKNOWN: (128*16*4 + 7) >> 3 = 1024. */
    assert_int_equal(dvpp_png_predict_dec_size(rgba16->data, rgba16->len,
                                               DVPP_PIXEL_UNKNOWN, &size, &err),
                     DVPP_OK);
    assert_int_equal(size, 1024 * 32);
    assert_int_equal(dvpp_png_predict_dec_size(rgba16->data, rgba16->len,
                                               DVPP_PIXEL_RGB, &size, &err),
                     DVPP_OK);
    assert_int_equal(size, 768 * 32);
    /* s33n3p04 is palette: rejected as DVPP does. */
    assert_int_equal(dvpp_png_predict_dec_size(
                         find_file(c, "s33n3p04.png")->bytes.data,
                         find_file(c, "s33n3p04.png")->bytes.len,
                         DVPP_PIXEL_RGB, &size, &err),
                     DVPP_EPROFILE);
    assert_int_equal(dvpp_png_predict_dec_size(rgb8->data, rgb8->len,
                                               DVPP_PIXEL_GRAY, &size, &err),
                     DVPP_EFORMAT);
    /* 4096x4096 16-bit RGBA is exactly the maximum 4096*4096*4*2. */
    big = ihdr_only(4096, 4096, 16, 6);
    assert_int_equal(dvpp_png_predict_dec_size(big.data, big.len,
                                               DVPP_PIXEL_RGBA, &size, &err),
                     DVPP_OK);
    assert_int_equal(size, 4096u * 4096u * 4u * 2u);
    free(big.data);
    /* 4097 wide aligns to 4224: over. 33x17 8-bit RGB: 384 * 32. */
    big = ihdr_only(4097, 4096, 16, 6);
    assert_int_equal(dvpp_png_predict_dec_size(big.data, big.len,
                                               DVPP_PIXEL_RGBA, &size, &err),
                     DVPP_EPROFILE);
    free(big.data);
    big = ihdr_only(33, 17, 8, 2);
    assert_int_equal(dvpp_png_predict_dec_size(big.data, big.len,
                                               DVPP_PIXEL_RGB, &size, &err),
                     DVPP_OK);
    assert_int_equal(size, 384 * 32);
    free(big.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_golden_hashes, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_suite_valid_decodes, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_low_bit_grey_scaling, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_probe_fields, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_suite_corrupt_files, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_signature_edge_cases, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_crashers, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_limit_side_pixels_bytes,
                                        test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_limit_png_chunk, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_limit_ztxt_bomb, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_limit_png_chunks, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_limit_decode_memory, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_decode_alloc_failures, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_encode_alloc_failures, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_roundtrip, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_encode_bgr_is_stored_as_rgb,
                                        test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_encode_rejects, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_alpha_modes, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_caller_buffer, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_truncate_and_flip, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_strict_short_image_data,
                                        test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_ascend_profile, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_predict_dec_size, test_setup,
                                        test_teardown),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
