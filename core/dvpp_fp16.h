/* dvpp_fp16: IEEE half precision, rounded exactly as numpy's float16.
 *
 * float -> half rounds to nearest, ties to even, overflows to infinity,
 * keeps subnormals and signed zeros (numpy npy_floatbits_to_halfbits; the
 * F16C instruction VCVTPS2PH with _MM_FROUND_TO_NEAREST_INT gives the same
 * bits for every non-NaN input, which the tests check). A NaN keeps the top
 * bits of its payload, quiet or signalling as it was. The hardware
 * conversions (F16C, AVX-512, NEON) quiet signalling NaNs, so every SIMD
 * kernel rebuilds its NaN lanes as scalar does: all levels give the same
 * bits for every input.
 *
 * The array kernels form a dispatch table chosen once from the SIMD level.
 */
#ifndef DVPP_FP16_H
#define DVPP_FP16_H

#include <stddef.h>
#include <stdint.h>

#include "dvpp_cpu.h"

/* One value, scalar reference. */
uint16_t dvpp_f32_to_f16(float f);
float dvpp_f16_to_f32(uint16_t h);

typedef struct dvpp_fp16_kern {
    dvpp_simd_level level; /* the level this table was built for */
    void (*f32_to_f16)(const float *src, uint16_t *dst, size_t n);
    void (*f16_to_f32)(const uint16_t *src, float *dst, size_t n);
} dvpp_fp16_kern;

/* Fill @k with the best kernels available at or below @level (scalar first,
 * then ascending overrides). Used by tests to build every level. */
void dvpp_fp16_kern_init(dvpp_fp16_kern *k, dvpp_simd_level level);

/* The table for dvpp_simd_active(), built once; thread-safe. */
const dvpp_fp16_kern *dvpp_fp16_kern_get(void);

#endif
