#include "dvpp_pack.h"

#include <pthread.h>

#include "core_kern.h"

static void interleave_scalar(const uint8_t *a, const uint8_t *b, uint8_t *dst,
                              size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dst[2 * i] = a[i];
        dst[2 * i + 1] = b[i];
    }
}

static void deinterleave_scalar(const uint8_t *src, uint8_t *a, uint8_t *b,
                                size_t n)
{
    for (size_t i = 0; i < n; i++) {
        a[i] = src[2 * i];
        b[i] = src[2 * i + 1];
    }
}

void dvpp_pack_kern_init(dvpp_pack_kern *k, dvpp_simd_level level)
{
    k->level = DVPP_SIMD_SCALAR;
    k->interleave = interleave_scalar;
    k->deinterleave = deinterleave_scalar;
#if defined(__x86_64__)
    if (level >= DVPP_SIMD_SSE41) {
        k->level = DVPP_SIMD_SSE41;
        k->interleave = dvpp__interleave_uv_sse41;
        k->deinterleave = dvpp__deinterleave_uv_sse41;
    }
    if (level >= DVPP_SIMD_AVX2) {
        k->level = DVPP_SIMD_AVX2;
        k->interleave = dvpp__interleave_uv_avx2;
        k->deinterleave = dvpp__deinterleave_uv_avx2;
    }
    if (level >= DVPP_SIMD_AVX512) {
        k->level = DVPP_SIMD_AVX512;
        k->interleave = dvpp__interleave_uv_avx512;
        k->deinterleave = dvpp__deinterleave_uv_avx512;
    }
#elif defined(__aarch64__)
    if (level >= DVPP_SIMD_NEON) {
        k->level = DVPP_SIMD_NEON;
        k->interleave = dvpp__interleave_uv_neon;
        k->deinterleave = dvpp__deinterleave_uv_neon;
    }
#else
    (void)level;
#endif
}

static pthread_once_t g_pack_once = PTHREAD_ONCE_INIT;
static dvpp_pack_kern g_pack; /* dispatch table, written once */

static void pack_once(void)
{
    dvpp_pack_kern_init(&g_pack, dvpp_simd_active());
}

const dvpp_pack_kern *dvpp_pack_kern_get(void)
{
    pthread_once(&g_pack_once, pack_once);
    return &g_pack;
}
