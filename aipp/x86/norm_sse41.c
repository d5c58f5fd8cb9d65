/* SSE4.1 dvpp_norm kernels; built with -msse4.1, reached via dispatch.
 * Without gathers the lookups stay scalar; what SSE adds is the NC1HWC0
 * assembly: each pixel's four lanes (channels, spare lanes from a zero
 * table) go out as one 16-byte store beside 16-byte zero stores for the
 * rest of its C0 block, instead of C0 element stores. NCHW and NHWC keep
 * the scalar kernels. */
#include <smmintrin.h>
#include <string.h>

#include "../norm_int.h"


static void nc1_f32(const dvpp_norm_plan *p, const uint8_t *src,
                    size_t stride, uint32_t w, uint32_t h, void *dst,
                    ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const void *t[4];
    unsigned off[4];
    const unsigned sc = p->src_channels;
    const __m128 z = _mm_setzero_ps();

    (void)cs;
    (void)ps;
    dvpp__norm_lanes(p, 4, t, off);
    const float *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        float *o = (float *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < w; x++, s += sc, o += 16) {
            _mm_storeu_ps(o, _mm_setr_ps(t0[s[off[0]]], t1[s[off[1]]],
                                         t2[s[off[2]]], t3[s[off[3]]]));
            _mm_storeu_ps(o + 4, z);
            _mm_storeu_ps(o + 8, z);
            _mm_storeu_ps(o + 12, z);
        }
    }
}

static void nc1_f16(const dvpp_norm_plan *p, const uint8_t *src,
                    size_t stride, uint32_t w, uint32_t h, void *dst,
                    ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const void *t[4];
    unsigned off[4];
    const unsigned sc = p->src_channels;
    const __m128i z = _mm_setzero_si128();

    (void)cs;
    (void)ps;
    dvpp__norm_lanes(p, 2, t, off);
    const uint16_t *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        uint16_t *o = (uint16_t *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < w; x++, s += sc, o += 16) {
            uint64_t v = (uint64_t)t0[s[off[0]]] |
                         (uint64_t)t1[s[off[1]]] << 16 |
                         (uint64_t)t2[s[off[2]]] << 32 |
                         (uint64_t)t3[s[off[3]]] << 48;
            _mm_storeu_si128((__m128i *)o, _mm_cvtsi64_si128((long long)v));
            _mm_storeu_si128((__m128i *)(o + 8), z);
        }
    }
}

static void nc1_u8(const dvpp_norm_plan *p, const uint8_t *src,
                   size_t stride, uint32_t w, uint32_t h, void *dst,
                   ptrdiff_t rs, ptrdiff_t cs, ptrdiff_t ps)
{
    const void *t[4];
    unsigned off[4];
    const unsigned sc = p->src_channels;
    const __m128i z = _mm_setzero_si128();

    (void)cs;
    (void)ps;
    dvpp__norm_lanes(p, 1, t, off);
    const uint8_t *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)y * stride;
        uint8_t *o = (uint8_t *)dst + (ptrdiff_t)y * rs;
        for (uint32_t x = 0; x < w; x++, s += sc, o += 32) {
            uint32_t v = (uint32_t)t0[s[off[0]]] | (uint32_t)t1[s[off[1]]] << 8 |
                         (uint32_t)t2[s[off[2]]] << 16 |
                         (uint32_t)t3[s[off[3]]] << 24;
            _mm_storeu_si128((__m128i *)o, _mm_cvtsi32_si128((int)v));
            _mm_storeu_si128((__m128i *)(o + 16), z);
        }
    }
}

void dvpp__norm_kern_sse41(dvpp_norm_kern *k)
{
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_F32] = nc1_f32;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_F16] = nc1_f16;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_U8] = nc1_u8;
    k->row[DVPP_LAYOUT_NC1HWC0][DVPP_DTYPE_I8] = nc1_u8;
}
