/* NEON f32 <-> f16 conversions (ARMv8.0 FCVTN/FCVTL, baseline; reached
 * only via dispatch). Bit-exact with dvpp_f32_to_f16 / dvpp_f16_to_f32.
 *
 * For every non-NaN value the instructions give scalar's bits: FCVTN
 * rounds by FPCR.RMode, which Linux starts at round to nearest, ties to
 * even (numpy's rounding; the norm tables' float casts assume the same
 * mode), keeps half subnormals (conversions ignore FZ16, and FZ only
 * flushes f32 subnormal inputs, which round to a signed zero either way)
 * and overflows to inf. FCVTL is exact. FPCR.AHP (the alternative half
 * format) is 0 on Linux.
 *
 * NaNs differ: the instructions quiet a signalling NaN (set the top
 * payload bit) and with FPCR.DN give the default NaN, while scalar keeps
 * the payload's top bits as they are (numpy). So NaN lanes are rebuilt
 * from their bits the way scalar does and selected over the converted
 * ones. */
#include <arm_neon.h>

#include "../core_kern.h"
#include "../dvpp_fp16.h"

/* Four floats to halves, NaN lanes as dvpp_f32_to_f16 makes them. */
static inline __attribute__((always_inline)) uint16x4_t
f32x4_to_f16(float32x4_t f)
{
    const uint32x4_t x = vreinterpretq_u32_f32(f);
    const uint32x4_t absx = vandq_u32(x, vdupq_n_u32(0x7fffffffu));
    const uint32x4_t nan = vcgtq_u32(absx, vdupq_n_u32(0x7f800000u));
    /* Scalar's NaN: sign, all-ones exponent, the payload's top 10 bits,
     * and bit 0 set when those are all zero (so it stays a NaN). */
    uint32x4_t man = vshrq_n_u32(vandq_u32(x, vdupq_n_u32(0x7fffffu)), 13);
    man = vorrq_u32(man, vandq_u32(vceqzq_u32(man), vdupq_n_u32(1)));
    const uint32x4_t qn = vorrq_u32(
        vorrq_u32(vandq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(0x8000u)),
                  vdupq_n_u32(0x7c00u)),
        man);
    const uint16x4_t hw = vreinterpret_u16_f16(vcvt_f16_f32(f));
    return vbsl_u16(vmovn_u32(nan), vmovn_u32(qn), hw);
}

/* Four halves to floats, NaN lanes as dvpp_f16_to_f32 makes them. */
static inline __attribute__((always_inline)) float32x4_t
f16x4_to_f32(uint16x4_t h)
{
    const uint32x4_t hx = vmovl_u16(h);
    const uint32x4_t nan =
        vcgtq_u32(vandq_u32(hx, vdupq_n_u32(0x7fffu)), vdupq_n_u32(0x7c00u));
    /* Scalar's NaN: sign, all-ones exponent, the payload shifted up 13. */
    const uint32x4_t qn = vorrq_u32(
        vorrq_u32(vshlq_n_u32(vandq_u32(hx, vdupq_n_u32(0x8000u)), 16),
                  vdupq_n_u32(0x7f800000u)),
        vshlq_n_u32(vandq_u32(hx, vdupq_n_u32(0x3ffu)), 13));
    const uint32x4_t fw =
        vreinterpretq_u32_f32(vcvt_f32_f16(vreinterpret_f16_u16(h)));
    return vreinterpretq_f32_u32(vbslq_u32(nan, qn, fw));
}

void dvpp__f32_to_f16_neon(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint16x4_t lo = f32x4_to_f16(vld1q_f32(src + i));
        uint16x4_t hi = f32x4_to_f16(vld1q_f32(src + i + 4));
        vst1q_u16(dst + i, vcombine_u16(lo, hi));
    }
    for (; i < n; i++)
        dst[i] = dvpp_f32_to_f16(src[i]);
}

void dvpp__f16_to_f32_neon(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint16x8_t h = vld1q_u16(src + i);
        vst1q_f32(dst + i, f16x4_to_f32(vget_low_u16(h)));
        vst1q_f32(dst + i + 4, f16x4_to_f32(vget_high_u16(h)));
    }
    for (; i < n; i++)
        dst[i] = dvpp_f16_to_f32(src[i]);
}
