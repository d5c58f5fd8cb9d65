/* dvpp_cpu: CPU feature detection and the process SIMD level.
 *
 * The level is detected once and capped by the DVPP_SIMD environment
 * variable, read once: on x86_64 gcc's __builtin_cpu_supports checks CPUID
 * and that the OS saves the wide registers (scalar|sse41|avx2|avx512); on
 * aarch64 the kernel's HWCAP_ASIMD says NEON (scalar|neon; Advanced SIMD is
 * part of ARMv8-A, so it is absent only on a kernel that hides it). Every
 * kernel family builds its dispatch table from dvpp_simd_active(); tests
 * build tables for each lower level explicitly and compare them with scalar.
 *
 * The values rank levels within one architecture only: the x86 levels are
 * never compiled on aarch64 (a table built for one of them there is the
 * scalar table) and NEON never on x86, so "level >= X" tests sit inside
 * the matching #if.
 */
#ifndef DVPP_CPU_H
#define DVPP_CPU_H

#include <stdbool.h>

typedef enum dvpp_simd_level {
    DVPP_SIMD_SCALAR = 0,
    DVPP_SIMD_SSE41 = 1,  /* SSE4.1 */
    DVPP_SIMD_AVX2 = 2,   /* AVX2 + FMA + F16C + BMI2 */
    DVPP_SIMD_AVX512 = 3, /* AVX-512 F/BW/DQ/VL on top of AVX2 */
    DVPP_SIMD_NEON = 4,   /* aarch64 Advanced SIMD (ARMv8.0 base, no extension) */
} dvpp_simd_level;

/* Levels, for tables indexed by level. */
#define DVPP_SIMD_LEVELS (DVPP_SIMD_NEON + 1)
/* Above every level: "the best this CPU has" where a level is asked for
 * (a table getter clamps it to dvpp_simd_active()). The *_kern_init
 * functions do not clamp: they build the table of the level given, which
 * tests use for each level the CPU has, never above dvpp_cpu_detect(). */
#define DVPP_SIMD_BEST DVPP_SIMD_NEON

/* What the CPU and OS support (cached after the first call; thread-safe). */
dvpp_simd_level dvpp_cpu_detect(void);

/* min(detected, DVPP_SIMD cap): the level kernels dispatch to. Cached. */
dvpp_simd_level dvpp_simd_active(void);

/* "scalar", "sse41", "avx2", "avx512", "neon". */
const char *dvpp_simd_name(dvpp_simd_level l);

/* Parse a level name ("none" is accepted for scalar). Any level parses;
 * one of another architecture is refused as a DVPP_SIMD cap. */
bool dvpp_simd_parse(const char *s, dvpp_simd_level *out);

/* True when @l is scalar or a level of this build's architecture (the
 * levels a DVPP_SIMD cap accepts). */
bool dvpp_simd_of_this_arch(dvpp_simd_level l);

/* The CPU's optional extensions that dvppd knows of but does not use,
 * for the start-up line (aarch64: "asimddp fphp asimdhp" where present;
 * empty elsewhere). Static storage. */
const char *dvpp_cpu_extras(void);

#endif
