/* checkasm-style tests of core's SIMD dispatch tables: for every level the
 * CPU has, each kernel must equal the scalar reference bit for bit, for
 * widths 1..67 and large ones, at unaligned offsets, without touching the
 * guard bytes around the output or changing the input. fp16 is also held
 * against numpy float16 vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_cpu.h"
#include "dvpp_fp16.h"
#include "dvpp_pack.h"

#define GUARD 0xA5
#define MAXN 4099

static uint32_t rng_state = 0x12345678u;

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

/* Expected values computed with numpy 1.24: np.float32(v).astype(np.float16). */
static const struct {
    uint32_t f;
    uint16_t h;
} k_numpy[] = {
    {0x00000000u, 0x0000u}, {0x80000000u, 0x8000u}, {0x3f800000u, 0x3c00u},
    {0xc0200000u, 0xc100u}, {0x477fe000u, 0x7bffu}, {0x477feffdu, 0x7bffu},
    {0x477ff000u, 0x7c00u}, {0x501502f9u, 0x7c00u}, {0xd01502f9u, 0xfc00u},
    {0x337ffae5u, 0x0001u}, {0x32fffae5u, 0x0000u}, {0x33006b66u, 0x0001u},
    {0x322bcc77u, 0x0000u}, {0x387fffd5u, 0x0400u}, {0x387fda40u, 0x03ffu},
    {0x3dcccccdu, 0x2e66u}, {0x3eaaaaaau, 0x3555u}, {0x3f802000u, 0x3c01u},
    {0x3f801000u, 0x3c00u}, {0x3f803000u, 0x3c02u}, {0x7f800000u, 0x7c00u},
    {0xff800000u, 0xfc00u}, {0x42f6e979u, 0x57b7u}, {0xb900f990u, 0x8808u},
};

static float f_of(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof(f));
    return f;
}

static void test_fp16_numpy_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(k_numpy) / sizeof(k_numpy[0]); i++)
        assert_int_equal(dvpp_f32_to_f16(f_of(k_numpy[i].f)), k_numpy[i].h);
    /* NaN stays NaN (quiet) through the scalar path. */
    assert_int_equal(dvpp_f32_to_f16(f_of(0x7fc00000u)), 0x7e00u);
}

static void test_fp16_roundtrip_all_halves(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        uint16_t back = dvpp_f32_to_f16(dvpp_f16_to_f32((uint16_t)h));
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
            continue; /* NaN payloads: only NaN-ness is promised */
        assert_int_equal(back, h);
    }
    assert_true(dvpp_f16_to_f32(0x0001u) == 5.9604644775390625e-8f);
    assert_true(dvpp_f16_to_f32(0xfbffu) == -65504.0f);
}

static void test_fp16_simd_equals_scalar(void **state)
{
    static float src[MAXN + 16];
    static uint16_t ref[MAXN + 16], got[MAXN + 16 + 2];
    static float fref[MAXN + 16], fgot[MAXN + 16 + 2];
    dvpp_fp16_kern scalar, k;

    (void)state;
    dvpp_fp16_kern_init(&scalar, DVPP_SIMD_SCALAR);
    for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        dvpp_fp16_kern_init(&k, (dvpp_simd_level)lvl);
        if (k.f32_to_f16 == scalar.f32_to_f16)
            continue;
        for (size_t n = 1; n <= MAXN; n = n < 67 ? n + 1 : n * 2 + 1) {
            size_t off = rng() % 7;
            for (size_t i = 0; i < n + off; i++) {
                /* Mix of exponents from subnormal to overflow, every sign. */
                uint32_t bits = rng();
                if (i % 3 == 0)
                    bits = (bits & 0x807fffffu) | ((100u + rng() % 60u) << 23);
                if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu))
                    bits &= ~0x7fffffu; /* NaN payloads: see roundtrip test */
                memcpy(&src[i], &bits, 4);
            }
            memset(got, GUARD, sizeof(got));
            scalar.f32_to_f16(src + off, ref, n);
            k.f32_to_f16(src + off, got + 1, n);
            assert_memory_equal(ref, got + 1, n * sizeof(uint16_t));
            assert_int_equal(got[0], 0xA5A5u);
            assert_int_equal(got[n + 1], 0xA5A5u);
            memset(fgot, GUARD, sizeof(fgot));
            scalar.f16_to_f32(ref, fref, n);
            k.f16_to_f32(ref, fgot + 1, n);
            assert_memory_equal(fref, fgot + 1, n * sizeof(float));
        }
    }
}

static void test_pack_simd_equals_scalar(void **state)
{
    static uint8_t a[MAXN + 64], b[MAXN + 64], inter[2 * MAXN + 128];
    static uint8_t ref[2 * MAXN + 128], got[2 * MAXN + 128];
    static uint8_t ra[MAXN + 64], rb[MAXN + 64], ga[MAXN + 64], gb[MAXN + 64];
    static uint8_t a_copy[MAXN + 64];
    dvpp_pack_kern scalar, k;

    (void)state;
    dvpp_pack_kern_init(&scalar, DVPP_SIMD_SCALAR);
    /* The scalar reference itself against the definition. */
    fill_random(a, 8);
    fill_random(b, 8);
    scalar.interleave(a, b, ref, 8);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(ref[2 * i], a[i]);
        assert_int_equal(ref[2 * i + 1], b[i]);
    }
    for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        dvpp_pack_kern_init(&k, (dvpp_simd_level)lvl);
        if (k.interleave == scalar.interleave)
            continue;
        for (size_t n = 1; n <= MAXN; n = n < 67 ? n + 1 : n * 2 + 1) {
            size_t off = rng() % 31;
            fill_random(a, n + off);
            fill_random(b, n + off);
            fill_random(inter, 2 * (n + off));
            memcpy(a_copy, a, n + off);
            memset(got, GUARD, sizeof(got));
            scalar.interleave(a + off, b + off, ref, n);
            k.interleave(a + off, b + off, got + 1, n);
            assert_memory_equal(ref, got + 1, 2 * n);
            assert_int_equal(got[0], GUARD);
            assert_int_equal(got[2 * n + 1], GUARD);
            assert_memory_equal(a, a_copy, n + off);
            memset(ga, GUARD, sizeof(ga));
            memset(gb, GUARD, sizeof(gb));
            scalar.deinterleave(inter + off, ra, rb, n);
            k.deinterleave(inter + off, ga + 1, gb + 1, n);
            assert_memory_equal(ra, ga + 1, n);
            assert_memory_equal(rb, gb + 1, n);
            assert_int_equal(ga[n + 1], GUARD);
            assert_int_equal(gb[n + 1], GUARD);
        }
    }
}

static void test_dispatch_follows_active_level(void **state)
{
    (void)state;
    assert_true(dvpp_fp16_kern_get()->level <= dvpp_simd_active());
    assert_true(dvpp_pack_kern_get()->level <= dvpp_simd_active());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp16_numpy_vectors),
        cmocka_unit_test(test_fp16_roundtrip_all_halves),
        cmocka_unit_test(test_fp16_simd_equals_scalar),
        cmocka_unit_test(test_pack_simd_equals_scalar),
        cmocka_unit_test(test_dispatch_follows_active_level),
    };
    return cmocka_run_group_tests_name("core kernels", tests, NULL, NULL);
}
