/* Unit tests for core/: status list, image layouts, tensor shapes, checked
 * arithmetic, allocator, limits, npy headers, profiles, CPU level. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_cpu.h"
#include "dvpp_image.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_npy.h"
#include "dvpp_profile.h"
#include "dvpp_status.h"
#include "dvpp_tensor.h"
#include "test_alloc.h"

static void test_status_names(void **state)
{
    dvpp_err e;

    (void)state;
    assert_int_equal(DVPP_OK, 0);
    assert_string_equal(dvpp_status_name(DVPP_ELIMIT), "ELIMIT");
    assert_string_equal(dvpp_strerror(DVPP_ENOMEM), "out of memory");
    assert_string_equal(dvpp_status_name(-999), "UNKNOWN");
    assert_true(DVPP_EPROFILE < 0);
    assert_int_equal(dvpp_err_set(&e, DVPP_EINVAL, "width", "w=%d", 7), DVPP_EINVAL);
    assert_string_equal(e.field, "width");
    assert_string_equal(e.msg, "w=7");
    assert_int_equal(dvpp_err_set(NULL, DVPP_EIO, NULL, "x"), DVPP_EIO);
}

static void test_status_codes_distinct(void **state)
{
    static const int codes[] = {
#define CODE_(name, code, msg) code,
        DVPP_STATUS_MAP(CODE_)
#undef CODE_
    };
    size_t n = sizeof(codes) / sizeof(codes[0]);

    (void)state;
    for (size_t i = 0; i < n; i++) {
        assert_true(codes[i] <= 0);
        for (size_t j = i + 1; j < n; j++)
            assert_int_not_equal(codes[i], codes[j]);
    }
}

/* Hand-computed layouts for the DVPP stride rules of dvpp-aipp.md. */
static void test_image_layout_nv12_aligned(void **state)
{
    dvpp_image img;
    dvpp_planes pl;

    (void)state;
    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_NV12, 1919, 1081, 128, 16, NULL), DVPP_OK);
    assert_int_equal(img.width_stride, 1920);
    assert_int_equal(img.height_stride, 1088);
    assert_int_equal(dvpp_image_planes(&img, &pl, NULL), DVPP_OK);
    assert_int_equal(pl.count, 2);
    assert_int_equal(pl.p[1].offset, 1920 * 1088);
    assert_int_equal(pl.p[1].rows, 541);
    assert_int_equal(pl.p[1].row_bytes, 1920);
    assert_int_equal(pl.total, 1920 * 1088 * 3 / 2);
}

static void test_image_layout_formats(void **state)
{
    static const struct {
        dvpp_pixfmt f;
        uint32_t w, h, aw, ah;
        uint32_t ws, hs;
        size_t total;
    } cases[] = {
        {DVPP_PIXEL_RGB, 10, 6, 16, 1, 48, 6, 48 * 6},
        {DVPP_PIXEL_BGRA, 10, 6, 16, 1, 64, 6, 64 * 6},
        {DVPP_PIXEL_YUYV, 11, 4, 16, 1, 32, 4, 32 * 4},
        {DVPP_PIXEL_YUV422SP, 32, 8, 1, 1, 32, 8, 32 * 8 * 2},
        {DVPP_PIXEL_YUV444SP, 32, 8, 1, 1, 32, 8, 32 * 8 * 3},
        {DVPP_PIXEL_YVU440SP, 32, 8, 1, 1, 32, 8, 32 * 8 * 2},
        {DVPP_PIXEL_I420, 5, 3, 1, 1, 6, 3, 6 * 3 + 2 * 3 * 2},
        {DVPP_PIXEL_YUV400, 100, 7, 64, 16, 128, 16, 128 * 16},
        {DVPP_PIXEL_GRAY, 3, 3, 1, 1, 3, 3, 9},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dvpp_image img;
        dvpp_planes pl;
        assert_int_equal(dvpp_image_init(&img, cases[i].f, cases[i].w, cases[i].h,
                                         cases[i].aw, cases[i].ah, NULL), DVPP_OK);
        assert_int_equal(img.width_stride, cases[i].ws);
        assert_int_equal(img.height_stride, cases[i].hs);
        assert_int_equal(dvpp_image_planes(&img, &pl, NULL), DVPP_OK);
        assert_int_equal(pl.total, cases[i].total);
    }
}

static void test_image_bad_strides(void **state)
{
    dvpp_image img = {.format = DVPP_PIXEL_RGB, .width = 10, .height = 4,
                      .width_stride = 29, .height_stride = 4};
    dvpp_planes pl;
    dvpp_err e;
    uint8_t buf[16];

    (void)state;
    assert_int_equal(dvpp_image_planes(&img, &pl, &e), DVPP_ESTRIDE);
    assert_string_equal(e.field, "width_stride");
    img.width_stride = 30;
    img.height_stride = 3;
    assert_int_equal(dvpp_image_planes(&img, &pl, &e), DVPP_ESTRIDE);
    img.height_stride = 4;
    img.data = buf;
    img.size = sizeof(buf);
    assert_int_equal(dvpp_image_planes(&img, &pl, &e), DVPP_ENOSPC);
    img.format = DVPP_PIXEL_FLOAT32;
    assert_int_equal(dvpp_image_planes(&img, &pl, &e), DVPP_EFORMAT);
    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGB, 0, 5, 1, 1, NULL), DVPP_EINVAL);
    /* A width whose aligned stride overflows 32 bits. */
    assert_int_equal(dvpp_image_init(&img, DVPP_PIXEL_RGBA, UINT32_MAX - 3, 1, 16, 1, NULL),
                     DVPP_EOVERFLOW);
}

static void test_pixfmt_names(void **state)
{
    dvpp_pixfmt f;

    (void)state;
    assert_true(dvpp_pixfmt_parse("NV12", &f));
    assert_int_equal(f, 1);
    assert_true(dvpp_pixfmt_parse("yuv420sp", &f));
    assert_int_equal(f, DVPP_PIXEL_NV12);
    assert_true(dvpp_pixfmt_parse("bgra", &f));
    assert_int_equal(f, 17);
    assert_true(dvpp_pixfmt_parse("yv12", &f));
    assert_int_equal(f, 20);
    assert_false(dvpp_pixfmt_parse("nv16x", &f));
    assert_string_equal(dvpp_pixfmt_name(DVPP_PIXEL_YVU440SP), "yvu440sp");
    assert_int_equal(DVPP_PIXEL_YUV440SP, 1000);
}

/* The wire names the front ends write (X-Dvpp-Dtype, TensorMeta, docs)
 * come from core; parse takes them back and still takes the short forms. */
static void test_tensor_names(void **state)
{
    static const struct {
        dvpp_dtype dt;
        const char *name, *short_name;
    } dts[] = {
        {DVPP_DTYPE_U8, "uint8", "u8"},
        {DVPP_DTYPE_I8, "int8", "i8"},
        {DVPP_DTYPE_F16, "float16", "f16"},
        {DVPP_DTYPE_F32, "float32", "f32"},
    };
    static const char *const layouts[] = {"NCHW", "NHWC", "NC1HWC0"};
    dvpp_dtype dt;
    dvpp_layout l;

    (void)state;
    for (size_t i = 0; i < sizeof(dts) / sizeof(dts[0]); i++) {
        assert_string_equal(dvpp_dtype_name(dts[i].dt), dts[i].name);
        dt = dts[(i + 1) % 4].dt;
        assert_true(dvpp_dtype_parse(dts[i].name, &dt));
        assert_int_equal(dt, dts[i].dt);
        dt = dts[(i + 1) % 4].dt;
        assert_true(dvpp_dtype_parse(dts[i].short_name, &dt));
        assert_int_equal(dt, dts[i].dt);
    }
    assert_false(dvpp_dtype_parse("float64", &dt));
    for (unsigned i = 0; i < 3; i++) {
        assert_string_equal(dvpp_layout_name((dvpp_layout)i), layouts[i]);
        assert_true(dvpp_layout_parse(layouts[i], &l));
        assert_int_equal(l, i);
    }
    assert_true(dvpp_layout_parse("nc1hwc0", &l));
    assert_int_equal(l, DVPP_LAYOUT_NC1HWC0);
}

static void test_tensor_shapes(void **state)
{
    dvpp_tensor t;

    (void)state;
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 2, 3, 224, 224, NULL), DVPP_OK);
    assert_int_equal(t.bytes, 2 * 3 * 224 * 224 * 4);
    assert_int_equal(t.strides[1], 224 * 224);
    assert_int_equal(dvpp_tensor_offset(&t, 1, 2, 3, 4), 1 * 3 * 50176 + 2 * 50176 + 3 * 224 + 4);
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_F16, DVPP_LAYOUT_NC1HWC0, 1, 3, 4, 5, NULL), DVPP_OK);
    assert_int_equal(t.ndim, 5);
    assert_int_equal(t.c0, 16);
    assert_int_equal(t.shape[1], 1);
    assert_int_equal(t.bytes, 4 * 5 * 16 * 2);
    assert_int_equal(dvpp_tensor_offset(&t, 0, 2, 1, 1), (1 * 5 + 1) * 16 + 2);
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_I8, DVPP_LAYOUT_NC1HWC0, 1, 33, 2, 2, NULL), DVPP_OK);
    assert_int_equal(t.c0, 32);
    assert_int_equal(t.shape[1], 2);
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_U8, DVPP_LAYOUT_NHWC, 1, 3, 0, 2, NULL), DVPP_EINVAL);
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NHWC, UINT32_MAX,
                                      UINT32_MAX, UINT32_MAX, 2, NULL), DVPP_EOVERFLOW);
}

static void test_checked_arithmetic(void **state)
{
    size_t r = 7;

    (void)state;
    assert_true(dvpp_size_mul(65536, 65536, &r));
    assert_int_equal(r, (size_t)1 << 32);
    /* w*h*c overflowing 32 bits must still be exact in 64. */
    assert_true(dvpp_size_mul3(70000, 70000, 4, &r));
    assert_int_equal(r, (size_t)70000 * 70000 * 4);
    r = 7;
    assert_false(dvpp_size_mul(SIZE_MAX / 2 + 1, 2, &r));
    assert_int_equal(r, 7);
    assert_false(dvpp_size_add(SIZE_MAX, 1, &r));
    assert_int_equal(dvpp_align_up(1919, 128), 1920);
    assert_int_equal(dvpp_align_up(1921, 128), 2048);
    assert_int_equal(dvpp_align_up(5, 1), 5);
    assert_int_equal(dvpp_align_up(UINT64_MAX - 2, 16), 0);
}

static void test_allocator_replace_and_fail(void **state)
{
    void *p;
    dvpp_buf b;

    (void)state;
    test_alloc_install();
    p = dvpp_malloc(1000);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % DVPP_ALIGN, 0);
    assert_int_equal(test_alloc()->live, 1);
    dvpp_free(p, 1000);
    assert_int_equal(test_alloc()->live, 0);
    test_alloc()->fail_at = test_alloc()->calls + 1;
    assert_null(dvpp_malloc(10));
    assert_null(dvpp_malloc(0));
    assert_null(dvpp_calloc(SIZE_MAX / 2, 4));
    dvpp_buf_init(&b);
    assert_int_equal(dvpp_buf_append(&b, "abc", 3), DVPP_OK);
    assert_int_equal(b.len, 3);
    test_alloc()->fail_above = 4096;
    assert_int_equal(dvpp_buf_reserve(&b, 100000), DVPP_ENOMEM);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "abc", 3);
    dvpp_buf_fini(&b);
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
}

static void test_limits(void **state)
{
    dvpp_limits l = dvpp_limits_default();
    dvpp_err e;

    (void)state;
    assert_int_equal(l.max_jpeg_scans, 100);
    assert_int_equal(dvpp_limits_check_image(&l, 16384, 2441, &e), DVPP_OK);
    assert_int_equal(dvpp_limits_check_image(&l, 16385, 10, &e), DVPP_ELIMIT);
    assert_string_equal(e.field, "max_side");
    assert_int_equal(dvpp_limits_check_image(&l, 10000, 4001, &e), DVPP_ELIMIT);
    assert_string_equal(e.field, "max_pixels");
    assert_int_equal(dvpp_limits_check_image(&l, 10000, 4000, &e), DVPP_OK);
    assert_int_equal(dvpp_limits_check_image(&l, 0, 4000, &e), DVPP_ECORRUPT);
    l.max_encoded_bytes = 10;
    assert_int_equal(dvpp_limits_check_encoded(&l, 10, &e), DVPP_OK);
    assert_int_equal(dvpp_limits_check_encoded(&l, 11, &e), DVPP_ELIMIT);
    assert_string_equal(e.field, "max_encoded_bytes");
}

static void test_npy_header(void **state)
{
    char h[DVPP_NPY_HEADER_MAX];
    int64_t shape[3] = {2, 3, 4};
    size_t n;

    (void)state;
    n = dvpp_npy_header(h, "<f4", shape, 3);
    /* 10 + 62-byte dict + newline = 73, padded to 128 like numpy. */
    assert_int_equal(n, 128);
    assert_memory_equal(h, "\x93NUMPY\x01\x00", 8);
    assert_int_equal((unsigned char)h[8] | (unsigned char)h[9] << 8, 118);
    assert_non_null(strstr(h + 10, "'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }"));
    assert_int_equal(h[127], '\n');
    n = dvpp_npy_header(h, "|u1", shape, 1);
    assert_non_null(strstr(h + 10, "'shape': (2,), }"));
    assert_int_equal(dvpp_npy_header(h, "|u1", shape, 0), 0);
}

static void test_profiles_and_cpu(void **state)
{
    dvpp_profile p;
    dvpp_simd_level l;

    (void)state;
    assert_true(dvpp_profile_parse("ascend310p", &p));
    assert_int_equal(p, DVPP_PROFILE_ASCEND310P);
    assert_false(dvpp_profile_parse("ascend910", &p));
    assert_true(dvpp_simd_parse("none", &l));
    assert_int_equal(l, DVPP_SIMD_SCALAR);
    assert_true(dvpp_simd_parse("avx2", &l));
    assert_false(dvpp_simd_parse("neon9", &l));
    assert_true(dvpp_simd_active() <= dvpp_cpu_detect());
    /* The DVPP_SIMD cap is honoured when the suite runs under it (a level
     * of the other architecture is refused, not a cap). */
    if (getenv("DVPP_SIMD") && dvpp_simd_parse(getenv("DVPP_SIMD"), &l) &&
        dvpp_simd_of_this_arch(l))
        assert_true(dvpp_simd_active() <= l);
    assert_true(dvpp_simd_of_this_arch(DVPP_SIMD_SCALAR));
#if defined(__x86_64__)
    assert_true(dvpp_simd_of_this_arch(DVPP_SIMD_AVX2));
    assert_false(dvpp_simd_of_this_arch(DVPP_SIMD_NEON));
#elif defined(__aarch64__)
    assert_true(dvpp_simd_of_this_arch(DVPP_SIMD_NEON));
    assert_false(dvpp_simd_of_this_arch(DVPP_SIMD_AVX2));
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_status_codes_distinct),
        cmocka_unit_test(test_image_layout_nv12_aligned),
        cmocka_unit_test(test_image_layout_formats),
        cmocka_unit_test(test_image_bad_strides),
        cmocka_unit_test(test_pixfmt_names),
        cmocka_unit_test(test_tensor_names),
        cmocka_unit_test(test_tensor_shapes),
        cmocka_unit_test(test_checked_arithmetic),
        cmocka_unit_test(test_allocator_replace_and_fail),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_npy_header),
        cmocka_unit_test(test_profiles_and_cpu),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
