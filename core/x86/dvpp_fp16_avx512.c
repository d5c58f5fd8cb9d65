/* AVX-512 F16C conversions (built with -mavx512f...; dispatch only). */
#include <immintrin.h>

#include "../core_kern.h"
#include "../dvpp_fp16.h"

void dvpp__f32_to_f16_avx512(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(src + i);
        _mm256_storeu_si256((__m256i *)(dst + i),
                            _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(m, src + i);
        _mm256_mask_storeu_epi16(dst + i, m,
                                 _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
}

void dvpp__f16_to_f32_avx512(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm256_loadu_si256((const __m256i *)(src + i));
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(h));
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        __m256i h = _mm256_maskz_loadu_epi16(m, src + i);
        _mm512_mask_storeu_ps(dst + i, m, _mm512_cvtph_ps(h));
    }
}
