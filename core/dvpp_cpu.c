#include "dvpp_cpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_log.h"

static const char *const k_names[] = {"scalar", "sse41", "avx2", "avx512"};

/* Written once under pthread_once, read-only afterwards (the CPU flags are
 * one of the globals the style guide allows). */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static dvpp_simd_level g_detected;
static dvpp_simd_level g_active;

static dvpp_simd_level detect_hw(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("sse4.1"))
        return DVPP_SIMD_SCALAR;
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ||
        !__builtin_cpu_supports("bmi2"))
        return DVPP_SIMD_SSE41;
    if (!__builtin_cpu_supports("avx512f") ||
        !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512dq") ||
        !__builtin_cpu_supports("avx512vl"))
        return DVPP_SIMD_AVX2;
    return DVPP_SIMD_AVX512;
#else
    return DVPP_SIMD_SCALAR;
#endif
}

static void detect_once(void)
{
    const char *cap = getenv("DVPP_SIMD");
    dvpp_simd_level want;

    g_detected = detect_hw();
    g_active = g_detected;
    if (cap && *cap) {
        if (dvpp_simd_parse(cap, &want)) {
            if (want < g_active)
                g_active = want;
        } else {
            dvpp_log(DVPP_LOG_WARN, "DVPP_SIMD=%s is not a level "
                     "(scalar|sse41|avx2|avx512); ignored", cap);
        }
    }
}

dvpp_simd_level dvpp_cpu_detect(void)
{
    pthread_once(&g_once, detect_once);
    return g_detected;
}

dvpp_simd_level dvpp_simd_active(void)
{
    pthread_once(&g_once, detect_once);
    return g_active;
}

const char *dvpp_simd_name(dvpp_simd_level l)
{
    return (unsigned)l <= DVPP_SIMD_AVX512 ? k_names[l] : "unknown";
}

bool dvpp_simd_parse(const char *s, dvpp_simd_level *out)
{
    if (strcmp(s, "none") == 0) {
        *out = DVPP_SIMD_SCALAR;
        return true;
    }
    for (unsigned i = 0; i <= DVPP_SIMD_AVX512; i++) {
        if (strcmp(s, k_names[i]) == 0) {
            *out = (dvpp_simd_level)i;
            return true;
        }
    }
    return false;
}
