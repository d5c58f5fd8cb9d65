/* F16C conversions (built with -mavx2 -mf16c; reached only via dispatch). */
#include <immintrin.h>

#include "../core_kern.h"
#include "../dvpp_fp16.h"

void dvpp__f32_to_f16_avx2(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(src + i);
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++)
        dst[i] = dvpp_f32_to_f16(src[i]);
}

void dvpp__f16_to_f32_avx2(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; i++)
        dst[i] = dvpp_f16_to_f32(src[i]);
}
