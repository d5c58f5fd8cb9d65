/* AVX-512 f32 <-> f16 conversions (built with -mavx512f -mavx512bw
 * -mavx512vl...; reached only via dispatch). Bit-exact with
 * dvpp_f32_to_f16 / dvpp_f16_to_f32.
 *
 * The instructions are the F16C ones widened, so dvpp_fp16_avx2.c's
 * reasoning holds: every non-NaN value converts to scalar's bits, but a
 * signalling NaN comes out quieted where scalar keeps its payload's top
 * bits. So a block holding a NaN has its NaN lanes rebuilt the way scalar
 * does and blended over the converted ones; a block without one pays only
 * a compare into a mask and a branch. The tail is a masked block: its
 * unloaded lanes are zero, not NaN, and are not stored. */
#include <immintrin.h>

#include "../core_kern.h"
#include "../dvpp_fp16.h"

/* Scalar's halves for sixteen NaN floats @x (other lanes: don't care):
 * sign, all-ones exponent, the payload's top 10 bits, and bit 0 set when
 * those are all zero (so it stays a NaN). */
static inline __attribute__((always_inline)) __m256i
nan_f32x16_to_f16(__m512i x)
{
    __m512i man = _mm512_and_si512(_mm512_srli_epi32(x, 13),
                                   _mm512_set1_epi32(0x3ff));
    const __mmask16 none = _mm512_testn_epi32_mask(man, man);
    man = _mm512_mask_or_epi32(man, none, man, _mm512_set1_epi32(1));
    const __m512i h = _mm512_or_si512(
        _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x8000)),
        _mm512_or_si512(man, _mm512_set1_epi32(0x7c00)));
    /* Every lane is 0..0xffff, so truncating to 16 bits loses nothing. */
    return _mm512_cvtepi32_epi16(h);
}

/* Sixteen floats to halves, NaN lanes as dvpp_f32_to_f16 makes them. */
static inline __attribute__((always_inline)) __m256i f32x16_to_f16(__m512 f)
{
    /* Unordered with itself: exactly the NaN lanes, in one compare. */
    const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    const __m256i hw = _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);

    if (!nan)
        return hw;
    return _mm256_mask_blend_epi16(nan, hw,
                                   nan_f32x16_to_f16(_mm512_castps_si512(f)));
}

/* Scalar's floats for sixteen NaN halves @h (other lanes: don't care):
 * sign, all-ones exponent, the payload shifted up 13. */
static inline __attribute__((always_inline)) __m512i
nan_f16x16_to_f32(__m256i h)
{
    const __m512i hx = _mm512_cvtepu16_epi32(h);
    const __m512i sign = _mm512_slli_epi32(
        _mm512_and_si512(hx, _mm512_set1_epi32(0x8000)), 16);
    const __m512i man = _mm512_slli_epi32(
        _mm512_and_si512(hx, _mm512_set1_epi32(0x3ff)), 13);
    return _mm512_or_si512(_mm512_or_si512(sign, man),
                           _mm512_set1_epi32(0x7f800000));
}

/* Sixteen halves to floats, NaN lanes as dvpp_f16_to_f32 makes them. */
static inline __attribute__((always_inline)) __m512 f16x16_to_f32(__m256i h)
{
    /* Tested on the halves, so the branch waits for no convert (as in
     * dvpp_fp16_avx2.c). */
    const __mmask16 nan = _mm256_cmpgt_epu16_mask(
        _mm256_and_si256(h, _mm256_set1_epi16(0x7fff)),
        _mm256_set1_epi16(0x7c00));
    const __m512 fw = _mm512_cvtph_ps(h);

    if (!nan)
        return fw;
    /* Masked moves carry bits only, so the rebuilt NaNs arrive unquieted. */
    return _mm512_mask_mov_ps(fw, nan,
                              _mm512_castsi512_ps(nan_f16x16_to_f32(h)));
}

void dvpp__f32_to_f16_avx512(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i),
                            f32x16_to_f16(_mm512_loadu_ps(src + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm256_mask_storeu_epi16(
            dst + i, m, f32x16_to_f16(_mm512_maskz_loadu_ps(m, src + i)));
    }
}

void dvpp__f16_to_f32_avx512(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, f16x16_to_f32(_mm256_loadu_si256(
                                      (const __m256i *)(src + i))));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(
            dst + i, m, f16x16_to_f32(_mm256_maskz_loadu_epi16(m, src + i)));
    }
}
