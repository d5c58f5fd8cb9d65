/* checkasm-style tests of core's SIMD dispatch tables: for every level the
 * CPU has, each kernel must equal the scalar reference bit for bit, for
 * widths 1..67 and large ones, at unaligned offsets, without touching the
 * guard bytes around the output or changing the input. fp16 is also held
 * against numpy float16 vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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
        /* NaNs too: the payload goes up 13 bits and comes back down. */
        uint16_t back = dvpp_f32_to_f16(dvpp_f16_to_f32((uint16_t)h));
        assert_int_equal(back, h);
    }
    assert_true(dvpp_f16_to_f32(0x0001u) == 5.9604644775390625e-8f);
    assert_true(dvpp_f16_to_f32(0xfbffu) == -65504.0f);
}

/* Through memory, so that no float register move can touch a NaN. */
static uint32_t bits_of(const float *f)
{
    uint32_t x;
    memcpy(&x, f, sizeof(x));
    return x;
}

/* @got against scalar's @ref, bit for bit, for the floats @in. NaNs too:
 * the hardware conversions quiet signalling NaNs, so every kernel must
 * rebuild NaN lanes as scalar does. */
static void check_halves(const float *in, const uint16_t *ref,
                         const uint16_t *got, size_t n, int lvl)
{
    for (size_t i = 0; i < n; i++) {
        if (got[i] == ref[i])
            continue;
        fail_msg("level %d: f32 %08x -> f16 %04x, scalar %04x (n %zu, i %zu)",
                 lvl, (unsigned)bits_of(&in[i]), got[i], ref[i], n, i);
    }
}

/* @got against scalar's @ref, bit for bit, for the halves @in. */
static void check_floats(const uint16_t *in, const float *ref,
                         const float *got, size_t n, int lvl)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t r = bits_of(&ref[i]), g = bits_of(&got[i]);
        if (g == r)
            continue;
        fail_msg("level %d: f16 %04x -> f32 %08x, scalar %08x (n %zu, i %zu)",
                 lvl, in[i], (unsigned)g, (unsigned)r, n, i);
    }
}

/* Both directions of @k on the @n floats with bits @in, from an unaligned
 * offset, against scalar: outputs equal, guards kept, inputs unchanged. */
static void check_f32_batch(const dvpp_fp16_kern *scalar,
                            const dvpp_fp16_kern *k, int lvl,
                            const uint32_t *in, size_t n)
{
    static float src[MAXN + 8], src_copy[MAXN + 8];
    static uint16_t ref[MAXN + 8], got[MAXN + 8], half_copy[MAXN + 8];
    static float fref[MAXN + 8], fgot[MAXN + 8];
    size_t off = rng() % 7;

    assert_true(n <= MAXN);
    memcpy(src + off, in, n * sizeof(float));
    memcpy(src_copy, src, sizeof(src));
    scalar->f32_to_f16(src + off, ref, n);
    memset(got, GUARD, sizeof(got));
    k->f32_to_f16(src + off, got + 1, n);
    check_halves(src + off, ref, got + 1, n, lvl);
    assert_int_equal(got[0], 0xA5A5u);
    assert_int_equal(got[n + 1], 0xA5A5u);
    assert_memory_equal(src, src_copy, sizeof(src));

    /* Back, from the halves just made (every rounding case of f32 -> f16
     * is also an f16 -> f32 input). */
    memcpy(half_copy, ref, n * sizeof(uint16_t));
    scalar->f16_to_f32(ref, fref, n);
    memset(fgot, GUARD, sizeof(fgot));
    k->f16_to_f32(ref, fgot + 1, n);
    check_floats(ref, fref, fgot + 1, n, lvl);
    assert_int_equal(bits_of(&fgot[0]), 0xA5A5A5A5u);
    assert_int_equal(bits_of(&fgot[n + 1]), 0xA5A5A5A5u);
    assert_memory_equal(ref, half_copy, n * sizeof(uint16_t));
}

/* Mantissas on the rounding boundaries: for every bit position b, 1 << b
 * (a tie when b is the top dropped bit), with the bit above set too (a
 * tie with an odd kept part), the bits below it (just under a tie), one
 * above; and NaN payloads whose kept top bits are all zero. */
static size_t edge_mantissas(uint32_t *m)
{
    size_t n = 0;
    m[n++] = 0;
    m[n++] = 0x7fffffu;
    m[n++] = 0x400000u; /* quiet NaN, no payload */
    for (unsigned b = 0; b < 23; b++) {
        uint32_t v = 1u << b;
        m[n++] = v;
        m[n++] = v - 1u;
        m[n++] = v + 1u;
        m[n++] = (v | v << 1) & 0x7fffffu;
        m[n++] = (v | v << 1 | 1u) & 0x7fffffu;
        m[n++] = (v - 1u) | 0x7fe000u;
    }
    return n;
}

/* Every sign and exponent (zero and subnormal f32, every normal range,
 * inf and NaN) with the edge mantissas and random ones. */
static void check_every_exponent(const dvpp_fp16_kern *scalar,
                                 const dvpp_fp16_kern *k, int lvl)
{
    static uint32_t in[MAXN];
    uint32_t edges[3 + 23 * 6];
    size_t ne = edge_mantissas(edges);

    for (uint32_t se = 0; se < 512; se++) {
        uint32_t top = (se >> 8) << 31 | (se & 0xffu) << 23;
        size_t n = 0;
        for (size_t i = 0; i < ne; i++)
            in[n++] = top | edges[i];
        while (n < 1024)
            in[n++] = top | (rng() & 0x7fffffu);
        check_f32_batch(scalar, k, lvl, in, n);
    }
}

/* Every one of the 65536 halves to f32, whole and in runs of 1..67 from
 * unaligned offsets; then scalar's floats of them back to halves (NaN
 * payloads too). */
static void check_all_halves(const dvpp_fp16_kern *scalar,
                             const dvpp_fp16_kern *k, int lvl)
{
    static uint16_t src[65536 + 8], src_copy[65536 + 8];
    static float fref[65536 + 8], fgot[65536 + 8];
    static uint16_t href[65536 + 8], hgot[65536 + 8];
    size_t off = 1 + rng() % 7;

    for (uint32_t h = 0; h < 65536; h++)
        src[off + h] = (uint16_t)h;
    memcpy(src_copy, src, sizeof(src));
    scalar->f16_to_f32(src + off, fref, 65536);
    memset(fgot, GUARD, sizeof(fgot));
    k->f16_to_f32(src + off, fgot + 1, 65536);
    check_floats(src + off, fref, fgot + 1, 65536, lvl);
    assert_int_equal(bits_of(&fgot[0]), 0xA5A5A5A5u);
    assert_int_equal(bits_of(&fgot[65537]), 0xA5A5A5A5u);
    assert_memory_equal(src, src_copy, sizeof(src));
    for (size_t n = 1; n <= 67; n++) {
        size_t at = rng() % (65536 - n);
        memset(fgot, GUARD, sizeof(fgot));
        k->f16_to_f32(src + off + at, fgot + 1, n);
        check_floats(src + off + at, fref + at, fgot + 1, n, lvl);
        assert_int_equal(bits_of(&fgot[0]), 0xA5A5A5A5u);
        assert_int_equal(bits_of(&fgot[n + 1]), 0xA5A5A5A5u);
    }
    scalar->f32_to_f16(fref, href, 65536);
    memset(hgot, GUARD, sizeof(hgot));
    k->f32_to_f16(fref, hgot + 1, 65536);
    check_halves(fref, href, hgot + 1, 65536, lvl);
    assert_int_equal(hgot[0], 0xA5A5u);
    assert_int_equal(hgot[65537], 0xA5A5u);
}

/* All 2^32 floats, only with DVPP_TEST_FP16_ALL=1 in the environment
 * (minutes under qemu; by default the every-exponent sample stands in). */
static void check_all_floats(const dvpp_fp16_kern *scalar,
                             const dvpp_fp16_kern *k, int lvl)
{
    static float in[4096];
    static uint16_t ref[4096], got[4096];
    const char *env = getenv("DVPP_TEST_FP16_ALL");

    if (!env || strcmp(env, "1") != 0)
        return;
    for (uint64_t base = 0; base < (1ull << 32); base += 4096) {
        for (uint32_t i = 0; i < 4096; i++) {
            uint32_t x = (uint32_t)base + i;
            memcpy(&in[i], &x, sizeof(x));
        }
        scalar->f32_to_f16(in, ref, 4096);
        k->f32_to_f16(in, got, 4096);
        if (memcmp(ref, got, sizeof(ref)) != 0)
            check_halves(in, ref, got, 4096, lvl);
    }
}

static void test_fp16_simd_equals_scalar(void **state)
{
    static uint32_t in[MAXN];
    dvpp_fp16_kern scalar, k;

    (void)state;
    dvpp_fp16_kern_init(&scalar, DVPP_SIMD_SCALAR);
    for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        dvpp_fp16_kern_init(&k, (dvpp_simd_level)lvl);
        if (k.f32_to_f16 == scalar.f32_to_f16)
            continue;
        for (size_t n = 1; n <= MAXN; n = n < 67 ? n + 1 : n * 2 + 1) {
            for (size_t i = 0; i < n; i++) {
                /* Mix of exponents from subnormal to overflow, every sign,
                 * now and then an inf or a NaN. */
                uint32_t bits = rng();
                if (i % 3 == 0)
                    bits = (bits & 0x807fffffu) | ((100u + rng() % 60u) << 23);
                else if (i % 17 == 5)
                    bits |= 0x7f800000u;
                in[i] = bits;
            }
            check_f32_batch(&scalar, &k, lvl, in, n);
        }
        check_every_exponent(&scalar, &k, lvl);
        check_all_halves(&scalar, &k, lvl);
        check_all_floats(&scalar, &k, lvl);
    }
}

static void test_pack_simd_equals_scalar(void **state)
{
    static uint8_t a[MAXN + 64], b[MAXN + 64], inter[2 * MAXN + 128];
    static uint8_t ref[2 * MAXN + 128], got[2 * MAXN + 128];
    static uint8_t ra[MAXN + 64], rb[MAXN + 64], ga[MAXN + 64], gb[MAXN + 64];
    static uint8_t a_copy[MAXN + 64], b_copy[MAXN + 64];
    static uint8_t inter_copy[2 * MAXN + 128];
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
            memcpy(b_copy, b, n + off);
            memcpy(inter_copy, inter, 2 * (n + off));
            memset(got, GUARD, sizeof(got));
            scalar.interleave(a + off, b + off, ref, n);
            k.interleave(a + off, b + off, got + 1, n);
            assert_memory_equal(ref, got + 1, 2 * n);
            assert_int_equal(got[0], GUARD);
            assert_int_equal(got[2 * n + 1], GUARD);
            assert_memory_equal(a, a_copy, n + off);
            assert_memory_equal(b, b_copy, n + off);
            memset(ga, GUARD, sizeof(ga));
            memset(gb, GUARD, sizeof(gb));
            scalar.deinterleave(inter + off, ra, rb, n);
            k.deinterleave(inter + off, ga + 1, gb + 1, n);
            assert_memory_equal(ra, ga + 1, n);
            assert_memory_equal(rb, gb + 1, n);
            assert_int_equal(ga[0], GUARD);
            assert_int_equal(gb[0], GUARD);
            assert_int_equal(ga[n + 1], GUARD);
            assert_int_equal(gb[n + 1], GUARD);
            assert_memory_equal(inter, inter_copy, 2 * (n + off));
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
