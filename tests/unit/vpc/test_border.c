/* Tests of vpc/dvpp_border: the CONSTANT fill kernels in the checkasm
 * style, whole images against a per-pixel reference written from
 * OpenCV's borderInterpolate loop (the e2e test holds the same cases
 * against cv2.copyMakeBorder), every SIMD level, padded strides whose
 * padding must stay untouched, cv::Scalar rounding and the error
 * contract. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_cpu.h"
#include "dvpp_image.h"
#include "vpc/csc_int.h"
#include "vpc/dvpp_border.h"

#define GUARD 0xA5

static uint32_t rng_state = 0x9E3779B9u;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rng();
}

/* ------------------------------------------------------------------ */
/* Kernel                                                              */
/* ------------------------------------------------------------------ */

static void test_fill_kernels_equal_scalar(void **state)
{
    static uint8_t ref[4 * 4200 + 64], got[4 * 4200 + 64];
    dvpp__border_kern s, k;

    (void)state;
    dvpp__border_kern_init(&s, DVPP_SIMD_SCALAR);
    for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        dvpp__border_kern_init(&k, (dvpp_simd_level)lvl);
        if (k.fill == s.fill)
            continue;
        for (size_t n = 0; n <= 4100; n = n < 67 ? n + 1 : n * 2 + 1) {
            for (unsigned cn = 1; cn <= 4; cn++) {
                uint8_t px[4], px_copy[4];
                size_t off = 1 + rng() % 31;
                fill_random(px, 4);
                memcpy(px_copy, px, 4);
                memset(ref, GUARD, sizeof(ref));
                memset(got, GUARD, sizeof(got));
                s.fill(ref + off, n, px, cn);
                k.fill(got + off, n, px, cn);
                assert_memory_equal(ref, got, sizeof(ref));
                assert_int_equal(got[off - 1], GUARD);
                assert_int_equal(got[off + n * cn], GUARD);
                assert_memory_equal(px, px_copy, 4);
            }
        }
    }
    assert_true(dvpp__border_kern_get(DVPP_SIMD_BEST)->level <= dvpp_simd_active());
}

/* ------------------------------------------------------------------ */
/* Reference                                                           */
/* ------------------------------------------------------------------ */

/* OpenCV's borderInterpolate, loop and all; -1 for CONSTANT outside. */
static int ref_index(int p, int len, dvpp_border_type t)
{
    int delta = t == DVPP_BORDER_REFLECT_101;

    if ((unsigned)p < (unsigned)len)
        return p;
    if (t == DVPP_BORDER_CONSTANT)
        return -1;
    if (t == DVPP_BORDER_REPLICATE)
        return p < 0 ? 0 : len - 1;
    if (len == 1)
        return 0;
    do {
        if (p < 0)
            p = -p - 1 + delta;
        else
            p = len - 1 - (p - len) - delta;
    } while ((unsigned)p >= (unsigned)len);
    return p;
}

typedef struct rplane {
    const uint8_t *s;
    size_t ss;
    uint8_t *d;
    size_t ds;
    int w, h, cn;
    int t, b, l, r;
    uint8_t px[4];
} rplane;

static void ref_plane(const rplane *p, dvpp_border_type t)
{
    for (int y = 0; y < p->h + p->t + p->b; y++) {
        for (int x = 0; x < p->w + p->l + p->r; x++) {
            int sy = ref_index(y - p->t, p->h, t), sx = ref_index(x - p->l, p->w, t);
            for (int c = 0; c < p->cn; c++)
                p->d[(size_t)y * p->ds + (size_t)x * p->cn + c] =
                    sy < 0 || sx < 0 ? p->px[c]
                                     : p->s[(size_t)sy * p->ss + (size_t)sx * p->cn + c];
        }
    }
}

static uint8_t round_scalar(double v)
{
    if (isnan(v) || v <= 0)
        return 0;
    return v >= 255 ? 255 : (uint8_t)lrint(v);
}

static void mk(dvpp_image *img, dvpp_pixfmt f, uint32_t w, uint32_t h,
               uint32_t pad, uint32_t padh)
{
    dvpp_err err;
    assert_int_equal(dvpp_image_init(img, f, w, h, 1, 1, &err), DVPP_OK);
    img->width_stride += pad & ~1u;
    img->height_stride += padh;
    assert_int_equal(dvpp_image_alloc(img, &err), DVPP_OK);
    memset(img->data, GUARD, img->size);
}

/* The reference result for @src with @b, into @dst (same geometry as the
 * real destination, so buffers compare byte for byte). */
static void reference(const dvpp_image *src, dvpp_image *dst, const dvpp_border *b)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(src->format);
    dvpp_planes ps, pd;
    dvpp_err err;
    uint8_t v[4];
    bool vf = src->format == DVPP_PIXEL_NV21 || src->format == DVPP_PIXEL_YVU422SP ||
              src->format == DVPP_PIXEL_YVU444SP || src->format == DVPP_PIXEL_YVU440SP ||
              src->format == DVPP_PIXEL_YVU_PLANAR_420;

    for (int c = 0; c < 4; c++)
        v[c] = round_scalar(b->value[c]);
    assert_int_equal(dvpp_image_planes(src, &ps, &err), DVPP_OK);
    assert_int_equal(dvpp_image_planes(dst, &pd, &err), DVPP_OK);
    for (int i = 0; i < ps.count; i++) {
        unsigned sx = i ? fi->chroma_sx : 0, sy = i ? fi->chroma_sy : 0;
        rplane p = {src->data + ps.p[i].offset, ps.p[i].stride,
                    dst->data + pd.p[i].offset, pd.p[i].stride,
                    (int)((src->width + sx) >> sx), (int)((src->height + sy) >> sy),
                    fi->planes == 1 ? fi->bpp : (i && fi->planes == 2) ? 2 : 1,
                    (int)(b->top >> sy), (int)(b->bottom >> sy),
                    (int)(b->left >> sx), (int)(b->right >> sx), {0, 0, 0, 0}};
        if (fi->planes == 1)
            memcpy(p.px, v, 4);
        else if (i == 0)
            p.px[0] = v[0];
        else if (fi->planes == 2) {
            p.px[0] = v[vf ? 2 : 1];
            p.px[1] = v[vf ? 1 : 2];
        } else {
            p.px[0] = v[(i == 1) != vf ? 1 : 2];
        }
        ref_plane(&p, b->type);
    }
}

/* Packed 4:2:2 reference: Y per pixel, chroma per pair with half the
 * horizontal margins, an odd final pair repeating its Y. */
static void reference_422(const dvpp_image *src, dvpp_image *dst,
                          const dvpp_border *b, const unsigned off[4])
{
    int w = (int)src->width, h = (int)src->height, cw = (w + 1) / 2;
    int W = (int)dst->width, H = (int)dst->height;
    uint8_t v[3];

    for (int c = 0; c < 3; c++)
        v[c] = round_scalar(b->value[c]);
    for (int y = 0; y < H; y++) {
        int sy = ref_index(y - (int)b->top, h, b->type);
        const uint8_t *s = sy < 0 ? NULL : src->data + (size_t)sy * src->width_stride;
        uint8_t *d = dst->data + (size_t)y * dst->width_stride;
        for (int x = 0; x < W; x++) {
            int sx = ref_index(x - (int)b->left, w, b->type);
            d[(x / 2) * 4 + off[x & 1 ? 2 : 0]] =
                s && sx >= 0 ? s[(sx / 2) * 4 + off[sx & 1 ? 2 : 0]] : v[0];
        }
        if (W & 1)
            d[(W / 2) * 4 + off[2]] = d[(W / 2) * 4 + off[0]];
        for (int k = 0; k < (W + 1) / 2; k++) {
            int sk = ref_index(k - (int)b->left / 2, cw, b->type);
            d[k * 4 + off[1]] = s && sk >= 0 ? s[sk * 4 + off[1]] : v[1];
            d[k * 4 + off[3]] = s && sk >= 0 ? s[sk * 4 + off[3]] : v[2];
        }
    }
}

/* ------------------------------------------------------------------ */
/* Images                                                              */
/* ------------------------------------------------------------------ */

static const unsigned k_yuyv[4][4] = {
    {0, 1, 2, 3}, {1, 0, 3, 2}, {0, 3, 2, 1}, {1, 2, 3, 0}};

/* One case at every level: random image and strides, margins as given
 * (halved chroma margins need them even where subsampled). */
static void run_case(dvpp_pixfmt f, uint32_t w, uint32_t h, dvpp_border b)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(f);
    dvpp_image src, ref, got;
    uint8_t *copy;
    dvpp_err err;
    uint32_t W = w + b.left + b.right, H = h + b.top + b.bottom;
    uint32_t pad = rng() % 9, padh = rng() % 3;

    mk(&src, f, w, h, rng() % 9, rng() % 3);
    fill_random(src.data, src.size);
    copy = malloc(src.size);
    memcpy(copy, src.data, src.size);
    mk(&ref, f, W, H, pad, padh);
    if (fi->planes == 1 && fi->chroma_sx)
        reference_422(&src, &ref, &b, k_yuyv[f - DVPP_PIXEL_YUYV]);
    else
        reference(&src, &ref, &b);
    mk(&got, f, W, H, pad, padh);
    for (int lvl = DVPP_SIMD_SCALAR; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        memset(got.data, GUARD, got.size);
        b.level = (dvpp_simd_level)lvl;
        assert_int_equal(dvpp_border_make(&src, &got, &b, &err), DVPP_OK);
        assert_memory_equal(ref.data, got.data, ref.size);
    }
    assert_memory_equal(copy, src.data, src.size);
    free(copy);
    dvpp_image_free(&src);
    dvpp_image_free(&ref);
    dvpp_image_free(&got);
}

static dvpp_border random_border(dvpp_border_type t, uint32_t max, uint32_t mx,
                                 uint32_t my)
{
    dvpp_border b;
    memset(&b, 0, sizeof(b));
    b.type = t;
    b.top = (rng() % (max + 1)) & ~my;
    b.bottom = (rng() % (max + 1)) & ~my;
    b.left = (rng() % (max + 1)) & ~mx;
    b.right = (rng() % (max + 1)) & ~mx;
    for (int c = 0; c < 4; c++)
        b.value[c] = (double)(rng() % 3000) / 10.0 - 20.0; /* -20 .. 280 */
    return b;
}

static void test_packed_formats_match_reference(void **state)
{
    static const dvpp_pixfmt fmts[] = {DVPP_PIXEL_RGB, DVPP_PIXEL_BGRA,
                                       DVPP_PIXEL_ARGB, DVPP_PIXEL_GRAY,
                                       DVPP_PIXEL_YUV400, DVPP_PIXEL_YUV_PACKED_444};
    static const uint32_t sizes[][2] = {{1, 1}, {1, 5}, {3, 2}, {5, 7}, {31, 16}, {67, 3}};

    (void)state;
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
        for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
            for (int t = 0; t <= DVPP_BORDER_REFLECT_101; t++)
                for (int rep = 0; rep < 3; rep++)
                    run_case(fmts[f], sizes[z][0], sizes[z][1],
                             random_border((dvpp_border_type)t, rep == 2 ? 70 : 9, 0, 0));
}

static void test_yuv_formats_match_reference(void **state)
{
    static const dvpp_pixfmt fmts[] = {
        DVPP_PIXEL_NV12, DVPP_PIXEL_NV21, DVPP_PIXEL_I420,
        DVPP_PIXEL_YVU_PLANAR_420, DVPP_PIXEL_YUV422SP, DVPP_PIXEL_YVU422SP,
        DVPP_PIXEL_YUV444SP, DVPP_PIXEL_YUV440SP, DVPP_PIXEL_YVU440SP,
        DVPP_PIXEL_YUYV, DVPP_PIXEL_UYVY, DVPP_PIXEL_YVYU, DVPP_PIXEL_VYUY};
    static const uint32_t sizes[][2] = {{1, 1}, {2, 2}, {5, 3}, {6, 9}, {33, 17}};

    (void)state;
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
        const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmts[f]);
        for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
            for (int t = 0; t <= DVPP_BORDER_REFLECT_101; t++)
                for (int rep = 0; rep < 3; rep++)
                    run_case(fmts[f], sizes[z][0], sizes[z][1],
                             random_border((dvpp_border_type)t, rep == 2 ? 40 : 8,
                                           fi->chroma_sx, fi->chroma_sy));
    }
}

/* Wide rows so the SIMD fill runs its main loop. */
static void test_wide_constant(void **state)
{
    dvpp_border b;

    (void)state;
    memset(&b, 0, sizeof(b));
    b.type = DVPP_BORDER_CONSTANT;
    b.top = 3;
    b.bottom = 2;
    b.left = 131;
    b.right = 77;
    b.value[0] = 1;
    b.value[1] = 2;
    b.value[2] = 3;
    b.value[3] = 4;
    run_case(DVPP_PIXEL_RGB, 300, 4, b);
    run_case(DVPP_PIXEL_RGBA, 300, 4, b);
    run_case(DVPP_PIXEL_GRAY, 300, 4, b);
    b.left = 130;
    b.right = 78;
    b.top = 4;
    run_case(DVPP_PIXEL_NV12, 300, 4, b);
}

static void test_constant_rounds_like_cv_scalar(void **state)
{
    static const struct {
        double v;
        uint8_t want;
    } cases[] = {{12.5, 12}, {13.5, 14}, {254.5, 254}, {255.5, 255},
                 {-0.5, 0}, {-7.0, 0}, {0.49, 0}, {1e30, 255}, {-1e30, 0},
                 {200.7, 201}};
    uint8_t s = 9, d[9];
    dvpp_image src = {DVPP_PIXEL_GRAY, 1, 1, 1, 1, &s, 1};
    dvpp_image dst = {DVPP_PIXEL_GRAY, 3, 3, 3, 3, d, 9};
    dvpp_border b;
    dvpp_err err;

    (void)state;
    memset(&b, 0, sizeof(b));
    b.top = b.bottom = b.left = b.right = 1;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        b.value[0] = cases[i].v;
        assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_OK);
        assert_int_equal(d[0], cases[i].want);
        assert_int_equal(d[4], 9);
    }
    b.value[0] = NAN;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_OK);
    assert_int_equal(d[8], 0);
}

static void test_errors(void **state)
{
    uint8_t a[256], c[1024];
    dvpp_image src = {DVPP_PIXEL_NV12, 4, 4, 4, 4, a, sizeof(a)};
    dvpp_image dst = {DVPP_PIXEL_NV12, 4, 6, 4, 6, c, sizeof(c)};
    dvpp_border b;
    dvpp_err err;

    (void)state;
    memset(&b, 0, sizeof(b));
    b.top = 1;
    b.bottom = 1;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_EINVAL);
    assert_non_null(strstr(err.msg, "even"));
    src.format = dst.format = DVPP_PIXEL_YUV422SP; /* vertical is full */
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_OK);
    b.top = 2;
    b.bottom = 0;
    b.left = 1;
    b.right = 1;
    dst.width = 6;
    dst.width_stride = 6;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_EINVAL);
    src.format = dst.format = DVPP_PIXEL_YUYV;
    src.width_stride = 8;
    dst.width_stride = 12;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_EINVAL);
    src.format = dst.format = DVPP_PIXEL_RGB;
    src.width_stride = 12;
    dst.width_stride = 18;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_OK);
    dst.height = 7;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_EINVAL);
    dst.height = 6;
    dst.format = DVPP_PIXEL_BGR;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_EFORMAT);
    src.format = dst.format = DVPP_PIXEL_YUV420SP_10BIT;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_EFORMAT);
    src.format = dst.format = DVPP_PIXEL_FLOAT32;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_EFORMAT);
    src.format = dst.format = DVPP_PIXEL_RGB;
    b.type = (dvpp_border_type)9;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_EINVAL);
    b.type = DVPP_BORDER_REFLECT;
    dst.size = 10;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_ENOSPC);
    dst.data = NULL;
    assert_int_equal(dvpp_border_make(&src, &dst, &b, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_border_make(NULL, &dst, &b, &err), DVPP_EINVAL);
}

static void test_parse(void **state)
{
    dvpp_border_type t;

    (void)state;
    assert_true(dvpp_border_type_parse("constant", &t) && t == DVPP_BORDER_CONSTANT);
    assert_true(dvpp_border_type_parse("replicate", &t) && t == DVPP_BORDER_REPLICATE);
    assert_true(dvpp_border_type_parse("reflect", &t) && t == DVPP_BORDER_REFLECT);
    assert_true(dvpp_border_type_parse("reflect101", &t) && t == DVPP_BORDER_REFLECT_101);
    assert_true(dvpp_border_type_parse("REFLECT_101", &t) && t == DVPP_BORDER_REFLECT_101);
    assert_false(dvpp_border_type_parse("wrap", &t));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_kernels_equal_scalar),
        cmocka_unit_test(test_packed_formats_match_reference),
        cmocka_unit_test(test_yuv_formats_match_reference),
        cmocka_unit_test(test_wide_constant),
        cmocka_unit_test(test_constant_rounds_like_cv_scalar),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests_name("vpc border", tests, NULL, NULL);
}
