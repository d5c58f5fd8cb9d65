/* dvpp_pack: interleave and split chroma planes (I420 <-> NV12 style).
 *
 * JPEG codecs work on separate Y, Cb, Cr planes; DVPP's semi-planar
 * formats store Cb/Cr interleaved. These kernels convert one row at a time
 * and form a dispatch table per SIMD level. All variants are bit-exact.
 */
#ifndef DVPP_PACK_H
#define DVPP_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "dvpp_cpu.h"

typedef struct dvpp_pack_kern {
    dvpp_simd_level level;
    /* dst[2i] = a[i], dst[2i+1] = b[i] for i < n. */
    void (*interleave)(const uint8_t *a, const uint8_t *b, uint8_t *dst, size_t n);
    /* a[i] = src[2i], b[i] = src[2i+1] for i < n. */
    void (*deinterleave)(const uint8_t *src, uint8_t *a, uint8_t *b, size_t n);
} dvpp_pack_kern;

void dvpp_pack_kern_init(dvpp_pack_kern *k, dvpp_simd_level level);

/* The table for dvpp_simd_active(), built once; thread-safe. */
const dvpp_pack_kern *dvpp_pack_kern_get(void);

#endif
