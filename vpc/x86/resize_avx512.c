/* AVX-512 (F/BW/DQ/VL) resize kernels (built with the AVX-512 flags;
 * reached only via dispatch). Integer-only and exact, so they equal the
 * scalar reference bit for bit; other shapes use the AVX2 kernels. */
#include <immintrin.h>
#include <string.h>

#include "../resize_int.h"

/* --- Pillow horizontal, 3 or 4 channels ------------------------------------ */

static inline __m128i pil_pack(__m128i acc)
{
    __m128i v = _mm_srai_epi32(_mm_add_epi32(acc, _mm_set1_epi32(1 << 21)),
                               22);
    v = _mm_packs_epi32(v, v);
    return _mm_packus_epi16(v, v);
}

/* Channels of one pixel from its 8 lanes of pair sums: 4 channels add
 * lanes 0-3 and 4-7, 3 channels lanes 0-2 and 3-5. */
static inline __m128i pil_fold(__m128i lo, __m128i hi, unsigned cn)
{
    hi = cn == 4 ? hi : _mm_alignr_epi8(hi, lo, 12);
    return pil_pack(_mm_add_epi32(lo, hi));
}

static inline void store_px(uint8_t *d, __m128i v, unsigned cn, int last)
{
    int32_t w = _mm_cvtsi128_si32(v);

    memcpy(d, &w, cn == 4 || !last ? 4 : 3);
}

/* Columns x and x + 1 (x even) in one register: their expanded weights
 * for a pair sit next to each other (RESIZE_WX). */
static void pil_h_two(const uint8_t *src, uint8_t *dst, const resize_tab *t,
                      unsigned cn, uint32_t x)
{
    const uint8_t *a = src + (size_t)t->start[x] * cn;
    const uint8_t *b = src + (size_t)t->start[x + 1] * cn;
    __m512i acc = _mm512_setzero_si512();

    for (uint32_t j = 0; j < t->taps / 2; j++) {
        __m128i px = _mm_unpacklo_epi64(
            _mm_loadl_epi64((const __m128i *)(a + 2 * j * cn)),
            _mm_loadl_epi64((const __m128i *)(b + 2 * j * cn)));
        __m512i w = _mm512_loadu_si512((const void *)RESIZE_WX(t, x, j));
        acc = _mm512_add_epi32(
            acc, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(px), w));
    }
    store_px(dst + x * cn,
             pil_fold(_mm512_extracti32x4_epi32(acc, 0),
                      _mm512_extracti32x4_epi32(acc, 1), cn),
             cn, 0);
    store_px(dst + (x + 1) * cn,
             pil_fold(_mm512_extracti32x4_epi32(acc, 2),
                      _mm512_extracti32x4_epi32(acc, 3), cn),
             cn, x + 2 == t->n);
}

static void pil_h_one(const uint8_t *src, uint8_t *dst, const resize_tab *t,
                      unsigned cn, uint32_t x)
{
    const uint8_t *s = src + (size_t)t->start[x] * cn;
    __m256i acc = _mm256_setzero_si256();

    for (uint32_t j = 0; j < t->taps / 2; j++) {
        __m256i b = _mm256_cvtepu8_epi32(
            _mm_loadl_epi64((const __m128i *)(s + 2 * j * cn)));
        acc = _mm256_add_epi32(
            acc, _mm256_mullo_epi32(b, _mm256_loadu_si256(
                                           (const __m256i *)RESIZE_WX(t, x, j))));
    }
    store_px(dst + x * cn,
             pil_fold(_mm256_castsi256_si128(acc),
                      _mm256_extracti128_si256(acc, 1), cn),
             cn, x + 1 == t->n);
}

void dvpp__resize_pil_h_avx512(const uint8_t *src, uint8_t *dst,
                               const resize_tab *t, unsigned cn)
{
    uint32_t x = 0;

    if (!((cn == 3 || cn == 4) && t->wx)) {
        dvpp__resize_pil_h_avx2(src, dst, t, cn);
        return;
    }
    for (; x + 2 <= t->n; x += 2)
        pil_h_two(src, dst, t, cn, x);
    if (x < t->n)
        pil_h_one(src, dst, t, cn, x);
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
