/* AVX-512 (F/BW/DQ/VL) resize kernels (built with the AVX-512 flags;
 * reached only via dispatch). Integer-only and exact, so they equal the
 * scalar reference bit for bit; other shapes use the AVX2 kernels. */
#include <immintrin.h>
#include <string.h>

#include "../resize_int.h"

#define Z (-1) /* pshufb: zero this byte */

/* --- Pillow horizontal, 3 or 4 channels ------------------------------------ */

#define INLINE static inline __attribute__((always_inline))

/* One group of four taps of one column (tap q in lanes 4q..4q+3; 3-channel
 * pixels are spread to 4 lanes first), weights masked by @m. @cn is a
 * constant at every call. */
INLINE __m512i pil_group(__m512i acc, const uint8_t *s, const int32_t *w,
                         __mmask16 m, unsigned cn)
{
    const __m128i sh3 = _mm_setr_epi8(0, 1, 2, Z, 3, 4, 5, Z, 6, 7, 8, Z, 9,
                                      10, 11, Z);
    __m128i b = _mm_loadu_si128((const __m128i *)s);
    __m512i k = m == 0xffff ? _mm512_loadu_si512(w)
                            : _mm512_maskz_loadu_epi32(m, w);

    if (cn == 3)
        b = _mm_shuffle_epi8(b, sh3);
    return _mm512_add_epi32(acc,
                            _mm512_mullo_epi32(_mm512_cvtepu8_epi32(b), k));
}

/* Sums of four columns (same tap count) in one loop; a last partial group
 * loads only its weights (@tail), so its other lanes add zero. */
INLINE void pil_acc4(const uint8_t *const s[4], const int32_t *w, size_t step,
                     uint32_t taps, __mmask16 tail, unsigned cn, __m512i r[4])
{
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    uint32_t j = 0;

    for (; j + 4 <= taps; j += 4) {
        a0 = pil_group(a0, s[0] + j * cn, w + 4 * j, 0xffff, cn);
        a1 = pil_group(a1, s[1] + j * cn, w + step + 4 * j, 0xffff, cn);
        a2 = pil_group(a2, s[2] + j * cn, w + 2 * step + 4 * j, 0xffff, cn);
        a3 = pil_group(a3, s[3] + j * cn, w + 3 * step + 4 * j, 0xffff, cn);
    }
    if (tail) {
        a0 = pil_group(a0, s[0] + j * cn, w + 4 * j, tail, cn);
        a1 = pil_group(a1, s[1] + j * cn, w + step + 4 * j, tail, cn);
        a2 = pil_group(a2, s[2] + j * cn, w + 2 * step + 4 * j, tail, cn);
        a3 = pil_group(a3, s[3] + j * cn, w + 3 * step + 4 * j, tail, cn);
    }
    r[0] = a0, r[1] = a1, r[2] = a2, r[3] = a3;
}

/* Four columns at once: the 4-lane quarters of each sum are added across
 * registers (two rounds of 128-bit shuffles), then clip8 for all 16 lanes. */
INLINE __m128i pil_four(__m512i a, __m512i b, __m512i c, __m512i d)
{
    __m512i ab = _mm512_add_epi32(
        _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
        _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
    __m512i cd = _mm512_add_epi32(
        _mm512_shuffle_i64x2(c, d, _MM_SHUFFLE(1, 0, 1, 0)),
        _mm512_shuffle_i64x2(c, d, _MM_SHUFFLE(3, 2, 3, 2)));
    __m512i v = _mm512_add_epi32(
        _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)),
        _mm512_shuffle_i64x2(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)));

    v = _mm512_srai_epi32(_mm512_add_epi32(v, _mm512_set1_epi32(1 << 21)), 22);
    /* vpmovusdb saturates as unsigned: negatives go to 0 first. */
    return _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, _mm512_setzero_si512()));
}

INLINE void pil_h_cn(const uint8_t *src, uint8_t *dst, const resize_tab *t,
                     unsigned cn)
{
    const __m128i c3 = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, Z,
                                     Z, Z, Z);
    const __mmask16 tail = (__mmask16)((1u << (4 * (t->taps % 4))) - 1);
    const size_t step = (size_t)t->taps * 4; /* weights per column */
    const int32_t *w = t->wq;
    uint32_t x = 0;

    for (; x + 4 <= t->n; x += 4, w += 4 * step) {
        const uint8_t *s[4];
        __m512i a[4];
        __m128i v;
        for (int i = 0; i < 4; i++)
            s[i] = src + (size_t)t->start[x + i] * cn;
        pil_acc4(s, w, step, t->taps, tail, cn, a);
        v = pil_four(a[0], a[1], a[2], a[3]);
        if (cn == 4) {
            _mm_storeu_si128((__m128i *)(dst + 4 * x), v);
        } else {
            int32_t last;
            v = _mm_shuffle_epi8(v, c3);
            _mm_storel_epi64((__m128i *)(dst + 3 * x), v);
            last = _mm_extract_epi32(v, 2);
            memcpy(dst + 3 * x + 8, &last, 4);
        }
    }
    dvpp__resize_pil_h_cols_avx2(src, dst, t, cn, x, t->n);
}

void dvpp__resize_pil_h_avx512(const uint8_t *src, uint8_t *dst,
                               const resize_tab *t, unsigned cn)
{
    if (cn == 3 && t->wq)
        pil_h_cn(src, dst, t, 3);
    else if (cn == 4 && t->wq)
        pil_h_cn(src, dst, t, 4);
    else
        dvpp__resize_pil_h_avx2(src, dst, t, cn);
}

/* --- Pillow vertical ------------------------------------------------------- */

void dvpp__resize_pil_v_avx512(const uint8_t *const *rows, const int32_t *k,
                               uint32_t taps, uint8_t *dst, size_t n)
{
    size_t x = 0;

    for (; x + 64 <= n; x += 64) {
        __m512i a[4];
        for (int j = 0; j < 4; j++)
            a[j] = _mm512_set1_epi32(1 << 21);
        for (uint32_t i = 0; i < taps; i++) {
            __m512i w = _mm512_set1_epi32(k[i]);
            for (int j = 0; j < 4; j++) {
                __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(
                    (const __m128i *)(rows[i] + x + 16 * j)));
                a[j] = _mm512_add_epi32(a[j], _mm512_mullo_epi32(v, w));
            }
        }
        /* Shift, then saturate to u8 lane by lane (vpmovusdb saturates
         * unsigned, so clamp negatives to 0 first). */
        for (int j = 0; j < 4; j++) {
            __m512i v = _mm512_max_epi32(_mm512_srai_epi32(a[j], 22),
                                         _mm512_setzero_si512());
            _mm_storeu_si128((__m128i *)(dst + x + 16 * j),
                             _mm512_cvtusepi32_epi8(v));
        }
    }
    dvpp__resize_pil_v_from_scalar(rows, k, taps, dst, x, n);
}
