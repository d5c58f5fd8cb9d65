#include "dvpp_fp16.h"

#include <pthread.h>
#include <string.h>

#include "core_kern.h"

uint16_t dvpp_f32_to_f16(float f)
{
    uint32_t x, absx, sign, h, rem, shift, m;

    memcpy(&x, &f, sizeof(x));
    sign = (x >> 16) & 0x8000u;
    absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) {
        /* Inf stays inf; NaN keeps its top payload bits and stays a NaN
         * (numpy sets the lowest bit when the kept payload is zero). */
        if (absx == 0x7f800000u)
            return (uint16_t)(sign | 0x7c00u);
        h = 0x7c00u | ((absx & 0x7fffffu) >> 13);
        return (uint16_t)(sign | (h == 0x7c00u ? 0x7c01u : h));
    }
    if (absx >= 0x47800000u) /* >= 65536: beyond the rounding range */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below 2^-14: half subnormal or zero */
        if (absx < 0x33000000u) /* below 2^-25 rounds to zero */
            return (uint16_t)sign;
        m = (absx & 0x7fffffu) | 0x800000u;
        shift = 126u - (absx >> 23); /* 14..24 */
        h = m >> shift;
        rem = m & ((1u << shift) - 1u);
        if (rem > (1u << (shift - 1)) || (rem == (1u << (shift - 1)) && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
    /* Normal: rebias the exponent (127 -> 15) and round 13 mantissa bits.
     * A carry out of the mantissa correctly bumps the exponent, up to inf. */
    h = (absx - 0x38000000u) >> 13;
    rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

float dvpp_f16_to_f32(uint16_t hv)
{
    uint32_t sign = (uint32_t)(hv & 0x8000u) << 16;
    uint32_t exp = (hv >> 10) & 0x1fu, man = hv & 0x3ffu, x;
    float f;

    if (exp == 0x1fu) {
        x = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
        x = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        x = sign;
    } else {
        /* Subnormal half: normalise the mantissa into a float exponent. */
        exp = 113u;
        while (!(man & 0x400u)) {
            man <<= 1;
            exp--;
        }
        x = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
    memcpy(&f, &x, sizeof(f));
    return f;
}

static void f32_to_f16_scalar(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = dvpp_f32_to_f16(src[i]);
}

static void f16_to_f32_scalar(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = dvpp_f16_to_f32(src[i]);
}

void dvpp_fp16_kern_init(dvpp_fp16_kern *k, dvpp_simd_level level)
{
    k->level = DVPP_SIMD_SCALAR;
    k->f32_to_f16 = f32_to_f16_scalar;
    k->f16_to_f32 = f16_to_f32_scalar;
#if defined(__x86_64__)
    if (level >= DVPP_SIMD_AVX2) {
        k->level = DVPP_SIMD_AVX2;
        k->f32_to_f16 = dvpp__f32_to_f16_avx2;
        k->f16_to_f32 = dvpp__f16_to_f32_avx2;
    }
    if (level >= DVPP_SIMD_AVX512) {
        k->level = DVPP_SIMD_AVX512;
        k->f32_to_f16 = dvpp__f32_to_f16_avx512;
        k->f16_to_f32 = dvpp__f16_to_f32_avx512;
    }
#elif defined(__aarch64__)
    if (level >= DVPP_SIMD_NEON) {
        k->level = DVPP_SIMD_NEON;
        k->f32_to_f16 = dvpp__f32_to_f16_neon;
        k->f16_to_f32 = dvpp__f16_to_f32_neon;
    }
#else
    (void)level;
#endif
}

static pthread_once_t g_fp16_once = PTHREAD_ONCE_INIT;
static dvpp_fp16_kern g_fp16; /* dispatch table, written once */

static void fp16_once(void)
{
    dvpp_fp16_kern_init(&g_fp16, dvpp_simd_active());
}

const dvpp_fp16_kern *dvpp_fp16_kern_get(void)
{
    pthread_once(&g_fp16_once, fp16_once);
    return &g_fp16;
}
