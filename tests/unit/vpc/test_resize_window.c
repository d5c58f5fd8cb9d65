/* Tests of resize output windows (dvpp_resize_plan_window).
 *
 * A windowed plan must write exactly the window of the full resize, byte
 * for byte, at every SIMD level, for every parity and method and mode
 * (copy, nearest, separable, cv2's integer area path), 1-4 channels,
 * windows on every border and single pixels, down and up scales, while
 * reading only the source rectangle it reports: the source handed to it is
 * a tight copy of that rectangle whose buffer ends at its last byte (ASan
 * sees a read past it), and destination rows carry guard bytes. The plane
 * run, the row-producer run and the sink run are all checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_cpu.h"
#include "dvpp_scratch.h"
#include "vpc/dvpp_resize.h"

#define GUARD 0x5A
#define GAP 5 /* guard bytes after each destination row */

static uint32_t rng_state = 0x1234567u;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

typedef struct mode {
    dvpp_parity parity;
    dvpp_interp interp;
} mode;

static const mode k_modes[] = {
    {DVPP_PARITY_CV2, DVPP_INTERP_NEAREST}, {DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR},
    {DVPP_PARITY_CV2, DVPP_INTERP_BICUBIC}, {DVPP_PARITY_CV2, DVPP_INTERP_AREA},
    {DVPP_PARITY_PIL, DVPP_INTERP_NEAREST}, {DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR},
    {DVPP_PARITY_PIL, DVPP_INTERP_BICUBIC}, {DVPP_PARITY_PIL, DVPP_INTERP_LANCZOS},
    {DVPP_PARITY_PIL, DVPP_INTERP_BOX},     {DVPP_PARITY_PIL, DVPP_INTERP_HAMMING},
    {DVPP_PARITY_TF, DVPP_INTERP_NEAREST},  {DVPP_PARITY_TF, DVPP_INTERP_BILINEAR},
};
#define N_MODES (sizeof(k_modes) / sizeof(k_modes[0]))

/* The source rows of a row producer: rows of a tight plane. */
typedef struct producer {
    const uint8_t *base;
    size_t stride, row;
    uint32_t next; /* rows must come in increasing order */
} producer;

static const uint8_t *produce(void *ctx, uint32_t y, uint8_t *buf)
{
    producer *p = ctx;

    assert_true(y >= p->next);
    p->next = y + 1;
    memcpy(buf, p->base + (size_t)y * p->stride, p->row);
    return buf;
}

/* Sink rows gathered into a tight plane. */
typedef struct gather {
    uint8_t *base;
    size_t row;
    uint32_t rows;
} gather;

static void collect(void *ctx, uint32_t y, const uint8_t *row)
{
    gather *g = ctx;

    assert_true(y < g->rows);
    memcpy(g->base + (size_t)y * g->row, row, g->row);
}

static void check_guards(const uint8_t *d, size_t stride, size_t row, uint32_t rows)
{
    for (uint32_t y = 0; y < rows; y++)
        for (size_t i = row; i < stride; i++)
            assert_int_equal(d[(size_t)y * stride + i], GUARD);
}

/* The windowed runs of one plan at one level against @want (the window
 * of the full result, tight rows of @row bytes). */
static void check_runs(const dvpp_resize_plan *p, const uint8_t *src, size_t sstride,
                       const uint8_t *want, size_t row, uint32_t rows, dvpp_scratch *s,
                       const char *what)
{
    size_t dstride = row + GAP;
    uint8_t *d = malloc(dstride * rows), *g = malloc(row * rows);
    dvpp_err err;

    assert_non_null(d);
    assert_non_null(g);
    memset(d, GUARD, dstride * rows);
    assert_int_equal(dvpp_resize_run(p, src, sstride, d, dstride, s, &err), DVPP_OK);
    check_guards(d, dstride, row, rows);
    for (uint32_t y = 0; y < rows; y++)
        if (memcmp(d + (size_t)y * dstride, want + (size_t)y * row, row) != 0)
            fail_msg("%s: plane run, row %u differs from the full resize", what, y);
    memset(g, 0, row * rows);
    assert_int_equal(dvpp_resize_run_sink(p, src, sstride, NULL, NULL, collect,
                                          &(gather){g, row, rows}, s, &err),
                     DVPP_OK);
    if (memcmp(g, want, row * rows) != 0)
        fail_msg("%s: sink run differs from the full resize", what);
    if (dvpp_resize_plan_streams(p)) {
        producer pr = {src, sstride, sstride, 0}; /* tight: a row is the stride */
        memset(d, GUARD, dstride * rows);
        assert_int_equal(dvpp_resize_run_rows(p, produce, &pr, d, dstride, s, &err),
                         DVPP_OK);
        check_guards(d, dstride, row, rows);
        for (uint32_t y = 0; y < rows; y++)
            if (memcmp(d + (size_t)y * dstride, want + (size_t)y * row, row) != 0)
                fail_msg("%s: row-producer run, row %u differs", what, y);
    }
    free(d);
    free(g);
}

/* One problem: full resize at scalar, then window (x, y, w, h) at every
 * level from a tight copy of the source rectangle. */
static void check_window(const mode *m, uint32_t sw, uint32_t sh, uint32_t dw,
                         uint32_t dh, unsigned cn, uint32_t x, uint32_t y, uint32_t w,
                         uint32_t h, dvpp_scratch *s)
{
    size_t srow = (size_t)sw * cn, drow = (size_t)dw * cn, wrow = (size_t)w * cn;
    uint8_t *src = malloc(srow * sh), *full = malloc(drow * dh), *want = malloc(wrow * h);
    dvpp_resize_plan *p = NULL, *wp = NULL;
    uint32_t r[4], r2[4];
    char what[160];
    uint8_t *tight;
    dvpp_err err;

    assert_non_null(src);
    assert_non_null(full);
    assert_non_null(want);
    for (size_t i = 0; i < srow * sh; i++)
        src[i] = (uint8_t)rng();
    if (rng() % 4 == 0) /* flat runs and extremes: clamps and rounding */
        memset(src, rng() % 2 ? 255 : 0, srow * sh / 3);
    snprintf(what, sizeof(what), "%s/%s %ux%u -> %ux%u x%u window %u,%u %ux%u",
             dvpp_parity_name(m->parity), dvpp_interp_name(m->interp), sw, sh, dw, dh,
             cn, x, y, w, h);
    assert_int_equal(dvpp_resize_plan_new(m->parity, m->interp, sw, sh, dw, dh, cn, &p,
                                          &err),
                     DVPP_OK);
    dvpp_resize_plan_set_level(p, DVPP_SIMD_SCALAR);
    assert_int_equal(dvpp_resize_run(p, src, srow, full, drow, s, &err), DVPP_OK);
    for (uint32_t i = 0; i < h; i++)
        memcpy(want + (size_t)i * wrow, full + (size_t)(y + i) * drow + (size_t)x * cn,
               wrow);
    assert_int_equal(dvpp_resize_plan_new(m->parity, m->interp, sw, sh, dw, dh, cn, &wp,
                                          &err),
                     DVPP_OK);
    assert_int_equal(dvpp_resize_plan_window(wp, x, y, w, h, &err), DVPP_OK);
    dvpp_resize_plan_source(wp, &r[0], &r[1], &r[2], &r[3]);
    if (r[2] < 1 || r[3] < 1 || r[0] + r[2] > sw || r[1] + r[3] > sh)
        fail_msg("%s: source rectangle %u,%u %ux%u outside the source", what, r[0], r[1],
                 r[2], r[3]);
    assert_int_equal(dvpp_resize_window_source(m->parity, m->interp, sw, sh, dw, dh, cn,
                                               x, y, w, h, r2, &err),
                     DVPP_OK);
    assert_memory_equal(r, r2, sizeof(r));
    /* Exactly the rectangle, its buffer ending at its last byte. */
    tight = malloc((size_t)r[2] * cn * r[3]);
    assert_non_null(tight);
    for (uint32_t i = 0; i < r[3]; i++)
        memcpy(tight + (size_t)i * r[2] * cn, src + (size_t)(r[1] + i) * srow +
                   (size_t)r[0] * cn, (size_t)r[2] * cn);
    for (int lvl = 0; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        char at[200];
        snprintf(at, sizeof(at), "%s at %s", what, dvpp_simd_name((dvpp_simd_level)lvl));
        dvpp_resize_plan_set_level(wp, (dvpp_simd_level)lvl);
        check_runs(wp, tight, (size_t)r[2] * cn, want, wrow, h, s, at);
    }
    dvpp_resize_plan_free(p);
    dvpp_resize_plan_free(wp);
    free(tight);
    free(src);
    free(full);
    free(want);
}

/* A window of @n: on the first edge, the last, the whole, one pixel or
 * random. */
static void pick(uint32_t n, unsigned kind, uint32_t *x, uint32_t *w)
{
    switch (kind % 5) {
    case 0:
        *x = 0, *w = 1 + rng() % n;
        break;
    case 1:
        *w = 1 + rng() % n, *x = n - *w;
        break;
    case 2:
        *x = 0, *w = n;
        break;
    case 3:
        *x = rng() % n, *w = 1;
        break;
    default:
        *x = rng() % n, *w = 1 + rng() % (n - *x);
        break;
    }
}

static void test_windows_equal_full_resize(void **state)
{
    static const uint32_t sizes[][4] = {
        {67, 41, 23, 17}, {23, 17, 67, 41}, {40, 30, 40, 30}, {64, 48, 32, 24},
        {60, 45, 20, 15}, {9, 5, 9, 13},    {13, 9, 9, 9},   {1, 7, 5, 3},
        {7, 1, 3, 5},     {2, 2, 67, 3},    {300, 20, 61, 7}, {5, 3, 1, 1},
    };
    dvpp_scratch s;

    (void)state;
    dvpp_scratch_init(&s);
    for (size_t m = 0; m < N_MODES; m++)
        for (unsigned cn = 1; cn <= 4; cn++)
            for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
                for (unsigned k = 0; k < 5; k++) {
                    uint32_t x, y, w, h;
                    pick(sizes[i][2], k + (unsigned)i, &x, &w);
                    pick(sizes[i][3], k + 2 * (unsigned)cn, &y, &h);
                    check_window(&k_modes[m], sizes[i][0], sizes[i][1], sizes[i][2],
                                 sizes[i][3], cn, x, y, w, h, &s);
                }
    dvpp_scratch_fini(&s);
}

/* The issue-20 eval chain at full size: a 1080p RGB frame to 455x256,
 * the CenterCrop(224) window, every pil filter and cv2 bilinear/cubic. */
static void test_window_center_crop_1080p(void **state)
{
    dvpp_scratch s;

    (void)state;
    dvpp_scratch_init(&s);
    for (size_t m = 0; m < N_MODES; m++)
        if (k_modes[m].parity == DVPP_PARITY_PIL || k_modes[m].interp == DVPP_INTERP_BICUBIC)
            check_window(&k_modes[m], 1920, 1080, 455, 256, 3, 115, 16, 224, 224, &s);
    dvpp_scratch_fini(&s);
}

static void test_window_errors(void **state)
{
    dvpp_resize_plan *p = NULL;
    uint32_t r[4];
    dvpp_err err;

    (void)state;
    assert_int_equal(dvpp_resize_plan_new(DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR, 40, 30, 20,
                                          10, 3, &p, &err),
                     DVPP_OK);
    dvpp_resize_plan_source(p, &r[0], &r[1], &r[2], &r[3]);
    assert_int_equal(r[0], 0);
    assert_int_equal(r[1], 0);
    assert_int_equal(r[2], 40);
    assert_int_equal(r[3], 30);
    assert_int_equal(dvpp_resize_plan_window(p, 0, 0, 0, 5, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_resize_plan_window(p, 20, 0, 1, 1, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_resize_plan_window(p, 5, 0, 16, 1, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_resize_plan_window(p, 0, 9, 1, 2, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "window");
    assert_int_equal(dvpp_resize_plan_window(p, 5, 2, 10, 6, &err), DVPP_OK);
    assert_int_equal(dvpp_resize_plan_window(p, 0, 0, 1, 1, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_resize_plan_window(NULL, 0, 0, 1, 1, &err), DVPP_EINVAL);
    /* bilinear 40 -> 20: support 2 source pixels each side of the centre
     * (2x + 1): columns 5..14 read 2*5+0.5-2 = 8.5 -> 9 .. 2*14+1.5+2 =
     * 31.5 -> 31 (exclusive), i.e. [9, 31), padded to the SIMD step. */
    dvpp_resize_plan_source(p, &r[0], NULL, &r[2], NULL);
    assert_true(r[0] <= 9 && r[0] + r[2] >= 31 && r[0] + r[2] <= 40);
    dvpp_resize_plan_free(p);
    assert_int_equal(dvpp_resize_window_source(DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR, 40,
                                               30, 20, 10, 3, 0, 0, 21, 1, r, &err),
                     DVPP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_equal_full_resize),
        cmocka_unit_test(test_window_center_crop_1080p),
        cmocka_unit_test(test_window_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
