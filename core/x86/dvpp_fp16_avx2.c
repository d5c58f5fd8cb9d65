/* F16C f32 <-> f16 conversions (built with -mavx2 -mf16c; reached only via
 * dispatch). Bit-exact with dvpp_f32_to_f16 / dvpp_f16_to_f32.
 *
 * For every non-NaN value the instructions give scalar's bits: VCVTPS2PH
 * with an immediate round-to-nearest-even ignores MXCSR.RC, keeps half
 * subnormals (MXCSR.FTZ does not apply to it; DAZ could only touch f32
 * subnormal inputs, which round to a signed zero either way) and
 * overflows to inf. VCVTPH2PS is exact.
 *
 * NaNs differ: the instructions quiet a signalling NaN (set the top
 * payload bit), while scalar keeps the payload's top bits as they are
 * (numpy). So a block holding a NaN has its NaN lanes rebuilt from their
 * bits the way scalar does and blended over the converted ones; a block
 * without one (the usual case) pays only a compare and a branch. The
 * f16 -> f32 test is made on the halves, sixteen at a time: on an L1-hot
 * buffer (rough timings) that ran at about 1.2-1.5x the bare converts'
 * time, where a compare of each converted block ran at 2-3x. */
#include <immintrin.h>

#include "../core_kern.h"
#include "../dvpp_fp16.h"

/* Scalar's halves for eight NaN floats @x (other lanes: don't care):
 * sign, all-ones exponent, the payload's top 10 bits, and bit 0 set when
 * those are all zero (so it stays a NaN). */
static inline __attribute__((always_inline)) __m128i
nan_f32x8_to_f16(__m256i x)
{
    __m256i man = _mm256_and_si256(_mm256_srli_epi32(x, 13),
                                   _mm256_set1_epi32(0x3ff));
    __m256i none = _mm256_cmpeq_epi32(man, _mm256_setzero_si256());
    man = _mm256_or_si256(man, _mm256_and_si256(none, _mm256_set1_epi32(1)));
    __m256i h = _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x8000)),
        _mm256_or_si256(man, _mm256_set1_epi32(0x7c00)));
    /* Every lane is now 0..0xffff, so the unsigned-saturating pack is a
     * plain narrowing. */
    return _mm_packus_epi32(_mm256_castsi256_si128(h),
                            _mm256_extracti128_si256(h, 1));
}

/* Eight floats to halves, NaN lanes as dvpp_f32_to_f16 makes them. */
static inline __attribute__((always_inline)) __m128i f32x8_to_f16(__m256 f)
{
    /* Unordered with itself: exactly the NaN lanes, in one compare. */
    const __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
    const __m128i hw = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);

    if (!_mm256_movemask_ps(nan))
        return hw;
    /* All-ones / zero lanes stay so through the signed-saturating pack. */
    const __m256i nan32 = _mm256_castps_si256(nan);
    const __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan32),
                                          _mm256_extracti128_si256(nan32, 1));
    return _mm_blendv_epi8(hw, nan_f32x8_to_f16(_mm256_castps_si256(f)), nan16);
}

/* Scalar's floats for eight NaN halves @h (other lanes: don't care):
 * sign, all-ones exponent, the payload shifted up 13. */
static inline __attribute__((always_inline)) __m256i
nan_f16x8_to_f32(__m128i h)
{
    const __m256i hx = _mm256_cvtepu16_epi32(h);
    const __m256i sign = _mm256_slli_epi32(
        _mm256_and_si256(hx, _mm256_set1_epi32(0x8000)), 16);
    const __m256i man = _mm256_slli_epi32(
        _mm256_and_si256(hx, _mm256_set1_epi32(0x3ff)), 13);
    return _mm256_or_si256(_mm256_or_si256(sign, man),
                           _mm256_set1_epi32(0x7f800000));
}

/* The lanes of @fw, eight floats converted from the halves @h, that are
 * NaN (all-ones lanes of @nan) replaced by scalar's floats for them. */
static inline __attribute__((always_inline)) __m256
blend_nan_f32x8(__m256 fw, __m128i h, __m128i nan)
{
    /* Blends move bits only, so the rebuilt NaNs arrive unquieted. */
    return _mm256_blendv_ps(fw, _mm256_castsi256_ps(nan_f16x8_to_f32(h)),
                            _mm256_castsi256_ps(_mm256_cvtepi16_epi32(nan)));
}

/* All-ones in the lanes of the halves @h that are NaN. Signed compares
 * are fine: the masked halves have their top bit clear. Tested on the
 * halves before converting, so the branch on it waits for no convert. */
static inline __attribute__((always_inline)) __m256i nan_f16x16(__m256i h)
{
    return _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)),
                              _mm256_set1_epi16(0x7c00));
}

/* The same for eight halves. */
static inline __attribute__((always_inline)) __m128i nan_f16x8(__m128i h)
{
    return _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)),
                           _mm_set1_epi16(0x7c00));
}

void dvpp__f32_to_f16_avx2(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i),
                         f32x8_to_f16(_mm256_loadu_ps(src + i)));
    for (; i < n; i++)
        dst[i] = dvpp_f32_to_f16(src[i]);
}

void dvpp__f16_to_f32_avx2(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;

    /* Sixteen at a time, so that one test covers two converts. */
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm256_loadu_si256((const __m256i *)(src + i));
        const __m256i nan = nan_f16x16(h);
        const __m128i lo = _mm256_castsi256_si128(h);
        const __m128i hi = _mm256_extracti128_si256(h, 1);
        __m256 a = _mm256_cvtph_ps(lo), b = _mm256_cvtph_ps(hi);

        if (!_mm256_testz_si256(nan, nan)) {
            a = blend_nan_f32x8(a, lo, _mm256_castsi256_si128(nan));
            b = blend_nan_f32x8(b, hi, _mm256_extracti128_si256(nan, 1));
        }
        _mm256_storeu_ps(dst + i, a);
        _mm256_storeu_ps(dst + i + 8, b);
    }
    if (i + 8 <= n) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(src + i));
        const __m128i nan = nan_f16x8(h);
        __m256 a = _mm256_cvtph_ps(h);

        if (!_mm_testz_si128(nan, nan))
            a = blend_nan_f32x8(a, h, nan);
        _mm256_storeu_ps(dst + i, a);
        i += 8;
    }
    for (; i < n; i++)
        dst[i] = dvpp_f16_to_f32(src[i]);
}
