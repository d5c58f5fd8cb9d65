#include "dvpp_cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "dvpp_log.h"

static const char *const k_names[DVPP_SIMD_LEVELS] = {"scalar", "sse41", "avx2", "avx512",
                                                       "neon"};

/* The levels this build has kernels for, lowest first after scalar. */
#if defined(__x86_64__)
#define LEVEL_LO DVPP_SIMD_SSE41
#define LEVEL_HI DVPP_SIMD_AVX512
#define LEVEL_NAMES "scalar|sse41|avx2|avx512"
#elif defined(__aarch64__)
#define LEVEL_LO DVPP_SIMD_NEON
#define LEVEL_HI DVPP_SIMD_NEON
#define LEVEL_NAMES "scalar|neon"
#else
#define LEVEL_LO DVPP_SIMD_SCALAR
#define LEVEL_HI DVPP_SIMD_SCALAR
#define LEVEL_NAMES "scalar"
#endif

/* HWCAP bits of the aarch64 kernel ABI (asm/hwcap.h), spelled out so that
 * an older sysroot builds too. */
#define HWCAP_ASIMD_BIT (1ul << 1)
#define HWCAP_FPHP_BIT (1ul << 9)
#define HWCAP_ASIMDHP_BIT (1ul << 10)
#define HWCAP_ASIMDDP_BIT (1ul << 20)

/* Written once under pthread_once, read-only afterwards (the CPU flags are
 * one of the globals the style guide allows). */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static dvpp_simd_level g_detected;
static dvpp_simd_level g_active;
static char g_extras[64];

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
#elif defined(__aarch64__)
    unsigned long hw = getauxval(AT_HWCAP);

    /* The dot-product and half-precision arithmetic extensions would
     * change results (other rounding, other accumulation order) or buy
     * nothing over the base instructions the kernels use (f16<->f32
     * conversion is ARMv8.0), so they are only named, never used. */
    snprintf(g_extras, sizeof(g_extras), "%s%s%s", (hw & HWCAP_ASIMDDP_BIT) ? " asimddp" : "",
             (hw & HWCAP_FPHP_BIT) ? " fphp" : "", (hw & HWCAP_ASIMDHP_BIT) ? " asimdhp" : "");
    return (hw & HWCAP_ASIMD_BIT) ? DVPP_SIMD_NEON : DVPP_SIMD_SCALAR;
#else
    return DVPP_SIMD_SCALAR;
#endif
}

bool dvpp_simd_of_this_arch(dvpp_simd_level l)
{
    return l == DVPP_SIMD_SCALAR || (l >= LEVEL_LO && l <= LEVEL_HI);
}

static void detect_once(void)
{
    const char *cap = getenv("DVPP_SIMD");
    dvpp_simd_level want;

    g_detected = detect_hw();
    g_active = g_detected;
    if (cap && *cap) {
        if (dvpp_simd_parse(cap, &want) && dvpp_simd_of_this_arch(want)) {
            if (want < g_active)
                g_active = want;
        } else {
            dvpp_log(DVPP_LOG_WARN, "DVPP_SIMD=%s is not a level of this CPU's "
                     "architecture (" LEVEL_NAMES "); ignored", cap);
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
    return (unsigned)l < DVPP_SIMD_LEVELS ? k_names[l] : "unknown";
}

bool dvpp_simd_parse(const char *s, dvpp_simd_level *out)
{
    if (strcmp(s, "none") == 0) {
        *out = DVPP_SIMD_SCALAR;
        return true;
    }
    for (unsigned i = 0; i < DVPP_SIMD_LEVELS; i++) {
        if (strcmp(s, k_names[i]) == 0) {
            *out = (dvpp_simd_level)i;
            return true;
        }
    }
    return false;
}

const char *dvpp_cpu_extras(void)
{
    pthread_once(&g_once, detect_once);
    return g_extras[0] ? g_extras + 1 : g_extras;
}
