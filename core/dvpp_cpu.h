/* dvpp_cpu: CPU feature detection and the process SIMD level.
 *
 * The level is detected once (gcc's __builtin_cpu_supports checks CPUID and
 * that the OS saves the wide registers) and capped by the DVPP_SIMD
 * environment variable (scalar|sse41|avx2|avx512), read once. Every kernel
 * family builds its dispatch table from dvpp_simd_active(); tests build
 * tables for each lower level explicitly and compare them with scalar.
 */
#ifndef DVPP_CPU_H
#define DVPP_CPU_H

#include <stdbool.h>

typedef enum dvpp_simd_level {
    DVPP_SIMD_SCALAR = 0,
    DVPP_SIMD_SSE41 = 1,  /* SSE4.1 */
    DVPP_SIMD_AVX2 = 2,   /* AVX2 + FMA + F16C + BMI2 */
    DVPP_SIMD_AVX512 = 3, /* AVX-512 F/BW/DQ/VL on top of AVX2 */
} dvpp_simd_level;

/* What the CPU and OS support (cached after the first call; thread-safe). */
dvpp_simd_level dvpp_cpu_detect(void);

/* min(detected, DVPP_SIMD cap): the level kernels dispatch to. Cached. */
dvpp_simd_level dvpp_simd_active(void);

/* "scalar", "sse41", "avx2", "avx512". */
const char *dvpp_simd_name(dvpp_simd_level l);

/* Parse a level name ("none" is accepted for scalar). */
bool dvpp_simd_parse(const char *s, dvpp_simd_level *out);

#endif
