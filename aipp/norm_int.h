/* Folder-private: dvpp_norm's block kernels and their dispatch tables.
 *
 * A kernel writes a @w x @h block: @src holds rows (@stride bytes apart)
 * of interleaved u8 pixels (plan->src_channels bytes each), @dst is the
 * element (n, c=0, y0, x0) of the tensor. @rs is the element step between
 * rows, @cs between channels (NCHW: the plane stride; NHWC and NC1HWC0: 1),
 * @ps between pixels.
 * NC1HWC0 kernels also zero lanes C..C0-1 of every written pixel.
 * The scalar kernels take any steps; the SIMD ones are only used when the
 * steps are dense (NCHW ps 1, NHWC cs 1 and ps C, NC1HWC0 ps C0), and all
 * read the plan's tables, so every level gives the same bits. */
#ifndef DVPP_NORM_INT_H
#define DVPP_NORM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "dvpp_norm.h"

typedef void (*dvpp_norm_row_fn)(const dvpp_norm_plan *p, const uint8_t *src,
                                 size_t stride, uint32_t w, uint32_t h,
                                 void *dst, ptrdiff_t rs, ptrdiff_t cs,
                                 ptrdiff_t ps);

typedef struct dvpp_norm_kern {
    dvpp_simd_level level;
    dvpp_norm_row_fn row[3][4]; /* [dvpp_layout][dvpp_dtype], dense steps */
    dvpp_norm_row_fn generic[3][4]; /* scalar, any steps */
} dvpp_norm_kern;

/* Fill @k with the best kernels at or below @level (scalar first, then
 * ascending overrides). */
void dvpp_norm_kern_init(dvpp_norm_kern *k, dvpp_simd_level level);

/* Scalar kernel for one layout/dtype (the SIMD variants use it for tails). */
dvpp_norm_row_fn dvpp__norm_scalar_row(dvpp_layout l, dvpp_dtype dt);

/* SIMD variants: each fills the entries it has, leaving the others. */
void dvpp__norm_kern_sse41(dvpp_norm_kern *k);
void dvpp__norm_kern_avx2(dvpp_norm_kern *k);
void dvpp__norm_kern_avx512(dvpp_norm_kern *k);
void dvpp__norm_kern_neon(dvpp_norm_kern *k);

/* All zeros: the table spare NC1HWC0 lanes read (any element size). */
extern const float dvpp__norm_zero[256];

/* The table and source byte of output lanes 0..3 for element size @es
 * (4 f32, 2 f16, 1 i8/u8); lanes >= C read dvpp__norm_zero at byte 0. The
 * SSE4.1, AVX2 and NEON NC1HWC0 assemblies share it. */
static inline void dvpp__norm_lanes(const dvpp_norm_plan *p, unsigned es,
                                    const void *t[4], unsigned off[4])
{
    for (unsigned c = 0; c < 4; c++) {
        if (c < p->channels) {
            t[c] = es == 4   ? (const void *)p->lut.f32[c]
                   : es == 2 ? (const void *)p->lut.f16[c]
                             : (const void *)p->lut.u8[c];
            off[c] = p->src_index[c];
        } else {
            t[c] = dvpp__norm_zero;
            off[c] = 0;
        }
    }
}

#endif
