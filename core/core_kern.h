/* Folder-private: the ISA variants behind core's dispatch tables.
 * Each lives in core/x86/<module>_<isa>.c, the only file built with that
 * ISA's -m flags, or core/arm/<module>_neon.c (baseline ARMv8.0, no flag);
 * callers reach them only through the tables. */
#ifndef DVPP_CORE_KERN_H
#define DVPP_CORE_KERN_H

#include <stddef.h>
#include <stdint.h>

void dvpp__f32_to_f16_avx2(const float *src, uint16_t *dst, size_t n);
void dvpp__f16_to_f32_avx2(const uint16_t *src, float *dst, size_t n);
void dvpp__f32_to_f16_avx512(const float *src, uint16_t *dst, size_t n);
void dvpp__f16_to_f32_avx512(const uint16_t *src, float *dst, size_t n);
void dvpp__f32_to_f16_neon(const float *src, uint16_t *dst, size_t n);
void dvpp__f16_to_f32_neon(const uint16_t *src, float *dst, size_t n);

void dvpp__interleave_uv_sse41(const uint8_t *u, const uint8_t *v, uint8_t *dst,
                               size_t n);
void dvpp__deinterleave_uv_sse41(const uint8_t *src, uint8_t *u, uint8_t *v,
                                 size_t n);
void dvpp__interleave_uv_avx2(const uint8_t *u, const uint8_t *v, uint8_t *dst,
                              size_t n);
void dvpp__deinterleave_uv_avx2(const uint8_t *src, uint8_t *u, uint8_t *v,
                                size_t n);
void dvpp__interleave_uv_avx512(const uint8_t *u, const uint8_t *v,
                                uint8_t *dst, size_t n);
void dvpp__deinterleave_uv_avx512(const uint8_t *src, uint8_t *u, uint8_t *v,
                                  size_t n);
void dvpp__interleave_uv_neon(const uint8_t *u, const uint8_t *v, uint8_t *dst,
                              size_t n);
void dvpp__deinterleave_uv_neon(const uint8_t *src, uint8_t *u, uint8_t *v,
                                size_t n);

#endif
