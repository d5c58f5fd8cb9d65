/* Scalar resize kernels: the reference every SIMD variant must equal bit
 * for bit. Each one states the arithmetic of the library it imitates; the
 * tables they read are built in dvpp_resize.c.
 *
 * Float kernels (cv2 area, cv2 cubic's vertical pass, tf) spell out every
 * operation: no fused multiply-add (this file is built without -mfma and
 * the SIMD files use separate mul and add), rounding half to even. */
#include <math.h>
#include <string.h>

#include "resize_int.h"

static inline uint8_t sat_u8(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Round half to even in the default FP mode, as cvRound and
 * _mm_cvtps_epi32 do, then saturate (OpenCV's saturate_cast<uchar>). */
static inline uint8_t round_sat_u8(float v)
{
    long r = lrintf(v);
    return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

void dvpp__resize_nearest_scalar(const uint8_t *src, uint8_t *dst,
                                 const int32_t *xofs, uint32_t pixels,
                                 unsigned cn)
{
    for (uint32_t x = 0; x < pixels; x++) {
        const uint8_t *s = src + xofs[x];
        for (unsigned c = 0; c < cn; c++)
            dst[x * cn + c] = s[c];
    }
}

void dvpp__resize_cv_h_cols_scalar(const uint8_t *src, int32_t *dst,
                                   const resize_tab *t, unsigned cn,
                                   uint32_t x0, uint32_t x1)
{
    for (uint32_t x = x0; x < x1; x++) {
        const uint8_t *s = src + (size_t)t->start[x] * cn;
        const int16_t *w = t->w16 + (size_t)x * t->taps;
        for (unsigned c = 0; c < cn; c++) {
            int32_t sum = 0;
            for (uint32_t k = 0; k < t->taps; k++)
                sum += s[k * cn + c] * w[k];
            dst[x * cn + c] = sum;
        }
    }
}

void dvpp__resize_cv_h_scalar(const uint8_t *src, int32_t *dst,
                              const resize_tab *t, unsigned cn)
{
    dvpp__resize_cv_h_cols_scalar(src, dst, t, cn, 0, t->n);
}

/* OpenCV's VResizeLinear<uchar, int, short> specialisation: the 11-bit
 * horizontal result is cut to 16 bits (>> 4), multiplied with the high
 * half kept (>> 16), and the two halves rounded together (+2 >> 2). */
void dvpp__resize_cv_v2_scalar(const int32_t *s0, const int32_t *s1,
                               const int16_t *beta, uint8_t *dst, size_t n)
{
    int b0 = beta[0], b1 = beta[1];

    for (size_t x = 0; x < n; x++) {
        int v = ((b0 * (s0[x] >> 4)) >> 16) + ((b1 * (s1[x] >> 4)) >> 16);
        dst[x] = sat_u8((v + 2) >> 2);
    }
}

/* OpenCV's VResizeCubic<uchar>: its 128-bit SIMD loop covers elements
 * [0, nf) in float (beta scaled by 2^-22, summed from the last row to the
 * first, rounded half to even); the scalar tail rounds the integer sum. */
void dvpp__resize_cv_v4_scalar(const int32_t *const *rows,
                               const int16_t *beta, uint8_t *dst, size_t n,
                               size_t nf)
{
    const int32_t *s0 = rows[0], *s1 = rows[1], *s2 = rows[2], *s3 = rows[3];
    const float scale = 1.f / (2048 * 2048);
    float f0 = beta[0] * scale, f1 = beta[1] * scale;
    float f2 = beta[2] * scale, f3 = beta[3] * scale;
    size_t x = 0;

    for (; x < nf; x++) {
        float t = (float)s3[x] * f3;
        t = (float)s2[x] * f2 + t;
        t = (float)s1[x] * f1 + t;
        t = (float)s0[x] * f0 + t;
        dst[x] = round_sat_u8(t);
    }
    for (; x < n; x++) {
        int32_t v = s0[x] * beta[0] + s1[x] * beta[1] + s2[x] * beta[2] +
                    s3[x] * beta[3];
        dst[x] = sat_u8((v + (1 << 21)) >> 22);
    }
}

/* Pillow's clip8: the sum carries 22 fractional bits and a +0.5 bias. */
static inline uint8_t pil_clip8(int32_t ss)
{
    return sat_u8(ss >> 22);
}

void dvpp__resize_pil_h_cols_scalar(const uint8_t *src, uint8_t *dst,
                                    const resize_tab *t, unsigned cn,
                                    uint32_t x0, uint32_t x1)
{
    for (uint32_t x = x0; x < x1; x++) {
        const uint8_t *s = src + (size_t)t->start[x] * cn;
        const int32_t *k = t->w32 + (size_t)x * t->taps;
        for (unsigned c = 0; c < cn; c++) {
            int32_t ss = 1 << 21;
            for (uint32_t i = 0; i < t->taps; i++)
                ss += s[i * cn + c] * k[i];
            dst[x * cn + c] = pil_clip8(ss);
        }
    }
}

void dvpp__resize_pil_h_scalar(const uint8_t *src, uint8_t *dst,
                               const resize_tab *t, unsigned cn)
{
    dvpp__resize_pil_h_cols_scalar(src, dst, t, cn, 0, t->n);
}

void dvpp__resize_pil_v_from_scalar(const uint8_t *const *rows,
                                    const int32_t *k, uint32_t taps,
                                    uint8_t *dst, size_t x0, size_t n)
{
    for (size_t x = x0; x < n; x++) {
        int32_t ss = 1 << 21;
        for (uint32_t i = 0; i < taps; i++)
            ss += rows[i][x] * k[i];
        dst[x] = pil_clip8(ss);
    }
}

void dvpp__resize_pil_v_scalar(const uint8_t *const *rows, const int32_t *k,
                               uint32_t taps, uint8_t *dst, size_t n)
{
    dvpp__resize_pil_v_from_scalar(rows, k, taps, dst, 0, n);
}

/* OpenCV's ResizeArea_Invoker, horizontal part: buf += S[si] * alpha in
 * table order, starting from 0. */
void dvpp__resize_area_h_cols_scalar(const uint8_t *src, float *dst,
                                     const resize_tab *t, unsigned cn,
                                     uint32_t x0, uint32_t x1)
{
    for (uint32_t x = x0; x < x1; x++) {
        const uint8_t *s = src + (size_t)t->start[x] * cn;
        const float *w = t->wf + (size_t)x * t->taps;
        for (unsigned c = 0; c < cn; c++) {
            float sum = 0.f;
            for (uint32_t k = 0; k < t->taps; k++)
                sum = sum + (float)s[k * cn + c] * w[k];
            dst[x * cn + c] = sum;
        }
    }
}

void dvpp__resize_area_h_scalar(const uint8_t *src, float *dst,
                                const resize_tab *t, unsigned cn)
{
    dvpp__resize_area_h_cols_scalar(src, dst, t, cn, 0, t->n);
}

void dvpp__resize_area_v_from_scalar(const float *const *rows,
                                     const float *beta, uint32_t taps,
                                     uint8_t *dst, size_t x0, size_t n)
{
    for (size_t x = x0; x < n; x++) {
        float sum = 0.f;
        for (uint32_t k = 0; k < taps; k++)
            sum = sum + beta[k] * rows[k][x];
        dst[x] = round_sat_u8(sum);
    }
}

void dvpp__resize_area_v_scalar(const float *const *rows, const float *beta,
                                uint32_t taps, uint8_t *dst, size_t n)
{
    dvpp__resize_area_v_from_scalar(rows, beta, taps, dst, 0, n);
}

/* OpenCV's resizeAreaFast_: the sum of a kx x ky block times 1.f/area,
 * rounded half to even; at exactly 2x2 for 1, 3 and 4 channels its
 * ResizeAreaFastVec rounds (sum + 2) >> 2 instead. */
void dvpp__resize_area_fast_scalar(const uint8_t *src, size_t stride,
                                   uint8_t *dst, uint32_t pixels, unsigned cn,
                                   uint32_t kx, uint32_t ky, float scale,
                                   int round_up)
{
    for (uint32_t x = 0; x < pixels; x++) {
        for (unsigned c = 0; c < cn; c++) {
            const uint8_t *s = src + (size_t)x * kx * cn + c;
            int32_t sum = 0;
            for (uint32_t j = 0; j < ky; j++)
                for (uint32_t i = 0; i < kx; i++)
                    sum += s[j * stride + i * cn];
            dst[x * cn + c] = round_up ? (uint8_t)((sum + 2) >> 2)
                                       : round_sat_u8((float)sum * scale);
        }
    }
}

/* TensorFlow's compute_lerp, split at its two stages: top and bottom are
 * horizontal lerps of one source row each, then a vertical lerp. */
void dvpp__resize_tf_h_scalar(const uint8_t *src, float *dst,
                              const int32_t *x0, const int32_t *x1,
                              const float *lerp, uint32_t pixels, unsigned cn)
{
    for (uint32_t x = 0; x < pixels; x++) {
        const uint8_t *l = src + (size_t)x0[x] * cn;
        const uint8_t *r = src + (size_t)x1[x] * cn;
        for (unsigned c = 0; c < cn; c++) {
            float a = (float)l[c], b = (float)r[c];
            dst[x * cn + c] = a + (b - a) * lerp[x];
        }
    }
}

void dvpp__resize_tf_v_scalar(const float *top, const float *bot, float lerp,
                              uint8_t *dst, size_t n)
{
    for (size_t x = 0; x < n; x++)
        dst[x] = round_sat_u8(top[x] + (bot[x] - top[x]) * lerp);
}
