/* Tests of the resize engine (vpc/dvpp_resize.h).
 *
 * - checkasm style: one plan run at every SIMD level the CPU has must give
 *   the scalar level's bytes, for every parity and method, 1-4 channels,
 *   widths 1..67 on both sides, up and down scales including 1/32 and 16x,
 *   cv2's integer area factors up to 5 x 5,
 *   unaligned planes, padded strides, guard bytes around destination rows,
 *   and an unchanged source (whose buffer ends exactly at its last byte,
 *   so ASan sees any read past it).
 * - hand-computed vectors, derived in the comments.
 * - plan and run errors, allocation failure N.
 * Parity with OpenCV and Pillow themselves is tests/e2e/test_resize_parity.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_cpu.h"
#include "dvpp_mem.h"
#include "dvpp_scratch.h"
#include "test_alloc.h"
#include "vpc/dvpp_resize.h"

#define GUARD 0xA5
#define ROW_GAP 7 /* guard bytes after each destination row */

static uint32_t rng_state = 0x2545F491u;

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
    {DVPP_PARITY_CV2, DVPP_INTERP_NEAREST},
    {DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR},
    {DVPP_PARITY_CV2, DVPP_INTERP_BICUBIC},
    {DVPP_PARITY_CV2, DVPP_INTERP_AREA},
    {DVPP_PARITY_PIL, DVPP_INTERP_NEAREST},
    {DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR},
    {DVPP_PARITY_PIL, DVPP_INTERP_BICUBIC},
    {DVPP_PARITY_PIL, DVPP_INTERP_LANCZOS},
    {DVPP_PARITY_PIL, DVPP_INTERP_BOX},
    {DVPP_PARITY_TF, DVPP_INTERP_NEAREST},
    {DVPP_PARITY_TF, DVPP_INTERP_BILINEAR},
};
#define N_MODES (sizeof(k_modes) / sizeof(k_modes[0]))

/* One resize problem with its buffers. The source buffer holds exactly
 * the plane (no slack after the last row); destination rows are followed
 * by ROW_GAP guard bytes and preceded by one. */
typedef struct job {
    uint32_t sw, sh, dw, dh;
    unsigned cn;
    size_t sstride, dstride;
    uint8_t *sbuf, *src, *copy;  /* src = sbuf + offset */
    size_t sbytes, soff;
    uint8_t *dbuf, *ref;         /* dbuf: guard + rows; ref: scalar result */
    size_t dbytes, doff;
} job;

static void job_init(job *j, uint32_t sw, uint32_t sh, uint32_t dw,
                     uint32_t dh, unsigned cn)
{
    j->sw = sw, j->sh = sh, j->dw = dw, j->dh = dh, j->cn = cn;
    j->sstride = (size_t)sw * cn + (rng() % 3 == 0 ? rng() % 9 : 0);
    j->dstride = (size_t)dw * cn + ROW_GAP;
    j->soff = rng() % 16;
    j->sbytes = j->soff + (sh - 1) * j->sstride + (size_t)sw * cn;
    j->sbuf = malloc(j->sbytes);
    j->copy = malloc(j->sbytes);
    assert_non_null(j->sbuf);
    assert_non_null(j->copy);
    for (size_t i = 0; i < j->sbytes; i++)
        j->sbuf[i] = (uint8_t)rng();
    /* Some flat runs and extremes so clamping and rounding paths meet. */
    if (rng() % 4 == 0)
        memset(j->sbuf + j->soff, rng() % 2 ? 255 : 0,
               (j->sbytes - j->soff) / 3);
    memcpy(j->copy, j->sbuf, j->sbytes);
    j->src = j->sbuf + j->soff;
    j->doff = 1 + rng() % 15;
    j->dbytes = j->doff + dh * j->dstride;
    j->dbuf = malloc(j->dbytes);
    j->ref = malloc(j->dbytes);
    assert_non_null(j->dbuf);
    assert_non_null(j->ref);
}

static void job_fini(job *j)
{
    free(j->sbuf);
    free(j->copy);
    free(j->dbuf);
    free(j->ref);
}

/* Run @p into the guarded destination and check the guards and the
 * source; the rows land in j->dbuf. */
static void job_run(job *j, const dvpp_resize_plan *p, dvpp_scratch *s)
{
    dvpp_err err;

    memset(j->dbuf, GUARD, j->dbytes);
    assert_int_equal(dvpp_resize_run(p, j->src, j->sstride, j->dbuf + j->doff,
                                     j->dstride, s, &err),
                     DVPP_OK);
    for (size_t i = 0; i < j->doff; i++)
        assert_int_equal(j->dbuf[i], GUARD);
    for (uint32_t y = 0; y < j->dh; y++) {
        const uint8_t *g = j->dbuf + j->doff + y * j->dstride +
                           (size_t)j->dw * j->cn;
        for (int i = 0; i < ROW_GAP; i++)
            assert_int_equal(g[i], GUARD);
    }
    assert_memory_equal(j->sbuf, j->copy, j->sbytes);
}

/* Every level against scalar for one problem. */
static void check_levels(const mode *m, uint32_t sw, uint32_t sh, uint32_t dw,
                         uint32_t dh, unsigned cn, dvpp_scratch *s)
{
    dvpp_resize_plan *p = NULL;
    dvpp_err err;
    job j;

    job_init(&j, sw, sh, dw, dh, cn);
    assert_int_equal(dvpp_resize_plan_new(m->parity, m->interp, sw, sh, dw, dh,
                                          cn, &p, &err),
                     DVPP_OK);
    dvpp_resize_plan_set_level(p, DVPP_SIMD_SCALAR);
    job_run(&j, p, s);
    memcpy(j.ref, j.dbuf, j.dbytes);
    for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        dvpp_resize_plan_set_level(p, (dvpp_simd_level)lvl);
        job_run(&j, p, s);
        if (memcmp(j.ref, j.dbuf, j.dbytes) != 0)
            fail_msg("%s/%s %ux%u -> %ux%u x%u: level %s differs from scalar",
                     dvpp_parity_name(m->parity), dvpp_interp_name(m->interp),
                     sw, sh, dw, dh, cn, dvpp_simd_name((dvpp_simd_level)lvl));
    }
    dvpp_resize_plan_free(p);
    job_fini(&j);
}

/* A second size for width @w: up, down, equal or one of the extremes. */
static uint32_t partner(uint32_t w, unsigned i)
{
    switch (i % 6) {
    case 0:
        return 1 + rng() % 67;
    case 1:
        return w > 32 ? w / 32 : 1;
    case 2:
        return w * 16 > 1100 ? 1100 : w * 16;
    case 3:
        return w;
    case 4:
        return w * 2;
    default:
        return w > 1 ? w / 2 : 1;
    }
}

static uint32_t small_h(void)
{
    static const uint32_t k[] = {1, 2, 3, 4, 5, 7, 9, 16};
    return k[rng() % 8];
}

static void test_levels_equal_scalar(void **state)
{
    dvpp_scratch s;

    (void)state;
    dvpp_scratch_init(&s);
    for (size_t m = 0; m < N_MODES; m++) {
        for (unsigned cn = 1; cn <= 4; cn++) {
            for (uint32_t w = 1; w <= 67; w++) {
                uint32_t other = partner(w, w + cn);
                uint32_t h = small_h(), oh = small_h();
                check_levels(&k_modes[m], w, h, other, oh, cn, &s); /* src w */
                check_levels(&k_modes[m], other, oh, w, h, cn, &s); /* dst w */
            }
        }
    }
    dvpp_scratch_fini(&s);
}

/* Factors of 1/32 and 16 on both axes, larger rows (whole SIMD blocks),
 * 2x and integer factors (cv2's area fast path), identity sizes. */
static void test_levels_extreme_scales(void **state)
{
    static const uint32_t k[][4] = {
        {320, 96, 10, 3},  {7, 5, 112, 80},   {1920, 64, 224, 8},
        {256, 64, 128, 32}, {300, 40, 100, 10}, {64, 64, 64, 64},
        {64, 48, 64, 13},  {64, 13, 64, 48},  {1000, 9, 250, 3},
        {67, 67, 2, 2},    {2, 2, 67, 67},    {4000, 3, 1000, 2},
    };
    dvpp_scratch s;

    (void)state;
    dvpp_scratch_init(&s);
    for (size_t m = 0; m < N_MODES; m++)
        for (unsigned cn = 1; cn <= 4; cn++)
            for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
                check_levels(&k_modes[m], k[i][0], k[i][1], k[i][2], k[i][3],
                             cn, &s);
    dvpp_scratch_fini(&s);
}

/* cv2's integer-factor area path (and linear at exactly 1/2) for every
 * factor pair up to 5 x 5: each factor has its own SIMD shape (the 2x2
 * round-up, per-factor column sums), so random sizes alone rarely reach
 * them all. Destination widths 1..67 cross every vector step and tail;
 * the wide rows cross the kernels' column-sum segments. */
static void test_levels_area_fast_factors(void **state)
{
    static const mode area = {DVPP_PARITY_CV2, DVPP_INTERP_AREA};
    static const mode linear = {DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR};
    static const uint32_t wide[] = {700, 2100};
    dvpp_scratch s;

    (void)state;
    dvpp_scratch_init(&s);
    for (uint32_t kx = 1; kx <= 5; kx++)
        for (uint32_t ky = 1; ky <= 5; ky++) {
            if (kx == 1 && ky == 1)
                continue; /* a copy */
            for (unsigned cn = 1; cn <= 4; cn++) {
                for (uint32_t dw = 1; dw <= 67; dw++) {
                    uint32_t dh = 1 + rng() % 3;
                    check_levels(&area, dw * kx, dh * ky, dw, dh, cn, &s);
                }
                for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
                    check_levels(&area, wide[i] * kx, 2 * ky, wide[i], 2, cn,
                                 &s);
            }
        }
    for (unsigned cn = 1; cn <= 4; cn++)
        for (uint32_t dw = 1; dw <= 67; dw++)
            check_levels(&linear, 2 * dw, 4, dw, 2, cn, &s);
    dvpp_scratch_fini(&s);
}

/* --- hand-computed vectors ----------------------------------------------- */

/* Resize a 1-channel plane at every level and expect @want each time. */
static void expect_resize(dvpp_parity par, dvpp_interp in, const uint8_t *src,
                          uint32_t sw, uint32_t sh, const uint8_t *want,
                          uint32_t dw, uint32_t dh)
{
    dvpp_resize_plan *p = NULL;
    uint8_t got[16];
    dvpp_scratch s;
    dvpp_err err;

    assert_true((size_t)dw * dh <= sizeof(got));
    dvpp_scratch_init(&s);
    assert_int_equal(dvpp_resize_plan_new(par, in, sw, sh, dw, dh, 1, &p, &err),
                     DVPP_OK);
    for (int lvl = 0; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        dvpp_resize_plan_set_level(p, (dvpp_simd_level)lvl);
        memset(got, 0, sizeof(got));
        assert_int_equal(dvpp_resize_run(p, src, sw, got, dw, &s, &err),
                         DVPP_OK);
        assert_memory_equal(got, want, (size_t)dw * dh);
    }
    dvpp_resize_plan_free(p);
    dvpp_scratch_fini(&s);
}

/* cv2 INTER_LINEAR, 2x1 -> 4x1, src {0, 100}. scale_x = 1/(4/2) = 0.5;
 * fx = (dx + 0.5) * 0.5 - 0.5 = -0.25, 0.25, 0.75, 1.25:
 *   dx0: sx -1 clamps to 0, fx 0 -> weights (2048, 0): S = 0
 *   dx1: sx 0, fx .25 -> (1536, 512): S = 100 * 512 = 51200
 *   dx2: sx 0, fx .75 -> (512, 1536): S = 153600
 *   dx3: sx 1 = w - 1 clamps, fx 0 -> S = 204800
 * Vertical (1 -> 1 row): beta (2048, 0); out = ((2048 * (S >> 4)) >> 16
 * + 2) >> 2 = (0+2)>>2, (100+2)>>2, (300+2)>>2, (400+2)>>2 = 0 25 75 100,
 * which is cv2.resize(np.array([[0, 100]], np.uint8), (4, 1)). */
static void test_vector_cv2_bilinear_up(void **state)
{
    const uint8_t src[2] = {0, 100};
    const uint8_t want[4] = {0, 25, 75, 100};

    (void)state;
    expect_resize(DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR, src, 2, 1, want, 4, 1);
}

/* Pillow BILINEAR, 4x1 -> 2x1, src {0, 40, 80, 120}. scale 2, support 2.
 *   xx0: center 1, window 0..2, triangle (x - 1 + .5) / 2 -> .75 .75 .25,
 *        / 1.75 -> 3/7 3/7 1/7 -> k = 1797559 1797559 599186 (x 2^22,
 *        +.5, truncated); 2^21 + 40*1797559 + 80*599186 = 121934392,
 *        >> 22 = 29 (200/7 = 28.57)
 *   xx1: center 3, window 1..3, 1/7 3/7 3/7; 2^21 + 40*599186 +
 *        80*1797559 + 120*1797559 = 385576392 >> 22 = 91 (640/7 = 91.4)
 * Image.fromarray(np.array([[0, 40, 80, 120]], np.uint8)).resize((2, 1),
 * Image.BILINEAR) gives 29 91. */
static void test_vector_pil_bilinear_down(void **state)
{
    const uint8_t src[4] = {0, 40, 80, 120};
    const uint8_t want[2] = {29, 91};

    (void)state;
    expect_resize(DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR, src, 4, 1, want, 2, 1);
}

/* TF legacy bilinear, 3 -> 2, src {10, 21, 40}. scale = 3 / 2.f = 1.5;
 *   x0: in 0 -> 10
 *   x1: in 1.5 -> lower 1, upper 2, lerp .5: 21 + (40 - 21) * .5 = 30.5,
 *       rounded half to even -> 30 */
static void test_vector_tf_bilinear(void **state)
{
    const uint8_t src[3] = {10, 21, 40};
    const uint8_t want[2] = {10, 30};

    (void)state;
    expect_resize(DVPP_PARITY_TF, DVPP_INTERP_BILINEAR, src, 3, 1, want, 2, 1);
}

/* cv2 INTER_AREA, 4x2 -> 2x1: integer factors 2x2, OpenCV's fast path
 * rounds (sum + 2) >> 2: {0,1 / 0,1} sum 2 -> 1 (half to even would give
 * 0); {1,1 / 1,2} sum 5 -> 1. INTER_LINEAR at exactly 1/2 takes the same
 * path, so it gives the same bytes. */
static void test_vector_cv2_area_2x2(void **state)
{
    const uint8_t src[8] = {0, 1, 1, 1, 0, 1, 1, 2};
    const uint8_t want[2] = {1, 1};

    (void)state;
    expect_resize(DVPP_PARITY_CV2, DVPP_INTERP_AREA, src, 4, 2, want, 2, 1);
    expect_resize(DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR, src, 4, 2, want, 2, 1);
}

/* Nearest, 5 -> 3, src {10..14}:
 *   cv2: sx = floor(x * (1 / (3/5.))) = 0, 1, 3 -> 10 11 13
 *   pil: x = 5/3 * .5 accumulated: .83, 2.5, 4.17 -> 10 12 14
 *   tf:  floorf(x * (5 / 3.f)) = 0, 1, 3 -> 10 11 13 */
static void test_vector_nearest(void **state)
{
    const uint8_t src[5] = {10, 11, 12, 13, 14};
    const uint8_t cv[3] = {10, 11, 13}, pil[3] = {10, 12, 14};

    (void)state;
    expect_resize(DVPP_PARITY_CV2, DVPP_INTERP_NEAREST, src, 5, 1, cv, 3, 1);
    expect_resize(DVPP_PARITY_PIL, DVPP_INTERP_NEAREST, src, 5, 1, pil, 3, 1);
    expect_resize(DVPP_PARITY_TF, DVPP_INTERP_NEAREST, src, 5, 1, cv, 3, 1);
}

/* Same size is a copy in every parity; strides may differ. */
static void test_same_size_copies(void **state)
{
    uint8_t src[3 * 10], dst[3 * 12];
    dvpp_resize_plan *p = NULL;
    dvpp_scratch s;
    dvpp_err err;

    (void)state;
    dvpp_scratch_init(&s);
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (uint8_t)rng();
    for (size_t m = 0; m < N_MODES; m++) {
        assert_int_equal(dvpp_resize_plan_new(k_modes[m].parity,
                                              k_modes[m].interp, 3, 3, 3, 3, 3,
                                              &p, &err),
                         DVPP_OK);
        assert_int_equal(dvpp_resize_run(p, src, 10, dst, 12, &s, &err),
                         DVPP_OK);
        for (int y = 0; y < 3; y++)
            assert_memory_equal(dst + 12 * y, src + 10 * y, 9);
        dvpp_resize_plan_free(p);
    }
    dvpp_scratch_fini(&s);
}

/* --- names, support, errors ---------------------------------------------- */

static void test_names_roundtrip(void **state)
{
    dvpp_interp i;
    dvpp_parity p;

    (void)state;
    for (int k = 0; k <= DVPP_INTERP_BOX; k++) {
        assert_true(dvpp_interp_parse(dvpp_interp_name((dvpp_interp)k), &i));
        assert_int_equal(i, k);
    }
    for (int k = 0; k <= DVPP_PARITY_ASCEND; k++) {
        assert_true(dvpp_parity_parse(dvpp_parity_name((dvpp_parity)k), &p));
        assert_int_equal(p, k);
    }
    assert_false(dvpp_interp_parse("cubic", &i));
    assert_false(dvpp_parity_parse("opencv", &p));
    assert_string_equal(dvpp_interp_name((dvpp_interp)42), "unknown");
}

static void expect_einval(dvpp_parity par, dvpp_interp in, uint32_t sw,
                          uint32_t sh, uint32_t dw, uint32_t dh, unsigned cn,
                          const char *needle)
{
    dvpp_resize_plan *p = NULL;
    dvpp_err err;

    dvpp_err_clear(&err);
    assert_int_equal(dvpp_resize_plan_new(par, in, sw, sh, dw, dh, cn, &p, &err),
                     DVPP_EINVAL);
    assert_null(p);
    assert_int_equal(err.status, DVPP_EINVAL);
    if (!strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
}

static void test_plan_errors(void **state)
{
    (void)state;
    assert_false(dvpp_resize_supported(DVPP_PARITY_PIL, DVPP_INTERP_AREA));
    assert_false(dvpp_resize_supported(DVPP_PARITY_CV2, DVPP_INTERP_LANCZOS));
    assert_false(dvpp_resize_supported(DVPP_PARITY_CV2, DVPP_INTERP_BOX));
    assert_false(dvpp_resize_supported(DVPP_PARITY_TF, DVPP_INTERP_BICUBIC));
    assert_false(dvpp_resize_supported(DVPP_PARITY_ASCEND, DVPP_INTERP_NEAREST));
    for (size_t m = 0; m < N_MODES; m++)
        assert_true(dvpp_resize_supported(k_modes[m].parity, k_modes[m].interp));
    expect_einval(DVPP_PARITY_PIL, DVPP_INTERP_AREA, 8, 8, 4, 4, 3,
                  "'area' is not available under parity 'pil'");
    expect_einval(DVPP_PARITY_CV2, DVPP_INTERP_LANCZOS, 8, 8, 4, 4, 3,
                  "'lanczos' is not available under parity 'cv2'");
    expect_einval(DVPP_PARITY_TF, DVPP_INTERP_BOX, 8, 8, 4, 4, 3, "'box'");
    expect_einval(DVPP_PARITY_ASCEND, DVPP_INTERP_BILINEAR, 8, 8, 4, 4, 3,
                  "ascend");
    expect_einval(DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR, 8, 8, 4, 4, 0,
                  "0 channels");
    expect_einval(DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR, 8, 8, 4, 4, 5,
                  "5 channels");
    expect_einval(DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR, 0, 8, 4, 4, 3,
                  "source 0x8");
    expect_einval(DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR, 8, 8, 4, 0, 3,
                  "destination 4x0");
    expect_einval(DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR, 65536, 8, 4, 4, 3,
                  "65535");
    expect_einval(DVPP_PARITY_CV2, (dvpp_interp)99, 8, 8, 4, 4, 3, "unknown");
}

static void test_run_errors(void **state)
{
    uint8_t src[64] = {0}, dst[64];
    dvpp_resize_plan *p = NULL;
    dvpp_scratch s;
    dvpp_err err;

    (void)state;
    dvpp_scratch_init(&s);
    assert_int_equal(dvpp_resize_plan_new(DVPP_PARITY_CV2, DVPP_INTERP_BILINEAR,
                                          4, 4, 2, 2, 3, &p, &err),
                     DVPP_OK);
    assert_int_equal(dvpp_resize_run(p, src, 11, dst, 6, &s, &err),
                     DVPP_EINVAL); /* source row is 12 bytes */
    assert_int_equal(dvpp_resize_run(p, src, 12, dst, 5, &s, &err),
                     DVPP_EINVAL);
    assert_int_equal(dvpp_resize_run(p, NULL, 12, dst, 6, &s, &err),
                     DVPP_EINVAL);
    assert_int_equal(dvpp_resize_run(p, src, 12, dst, 6, NULL, &err),
                     DVPP_EINVAL);
    assert_int_equal(dvpp_resize_run(NULL, src, 12, dst, 6, &s, NULL),
                     DVPP_EINVAL);
    assert_int_equal(dvpp_resize_run(p, src, 12, dst, 6, &s, &err), DVPP_OK);
    dvpp_resize_plan_free(p);
    dvpp_resize_plan_free(NULL);
    dvpp_scratch_fini(&s);
}

/* Allocation N fails, for N = 1, 2, ... until plan + run succeed: each
 * failure is DVPP_ENOMEM and leaves nothing allocated. */
static void test_alloc_failures(void **state)
{
    static const struct {
        mode m;
        uint32_t sw, sh, dw, dh;
    } k[] = {
        {{DVPP_PARITY_PIL, DVPP_INTERP_LANCZOS}, 97, 61, 23, 17},
        {{DVPP_PARITY_PIL, DVPP_INTERP_BILINEAR}, 40, 30, 40, 7},
        {{DVPP_PARITY_CV2, DVPP_INTERP_AREA}, 97, 61, 23, 17},
        {{DVPP_PARITY_CV2, DVPP_INTERP_BICUBIC}, 17, 13, 40, 31},
        {{DVPP_PARITY_CV2, DVPP_INTERP_NEAREST}, 17, 13, 40, 31},
        {{DVPP_PARITY_TF, DVPP_INTERP_BILINEAR}, 17, 13, 5, 31},
    };
    uint8_t *src = malloc(97 * 61 * 3), *dst = malloc(40 * 31 * 3);

    (void)state;
    assert_non_null(src);
    assert_non_null(dst);
    memset(src, 7, 97 * 61 * 3);
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        size_t nomem = 0;
        for (size_t n = 1;; n++) {
            dvpp_resize_plan *p = NULL;
            dvpp_scratch s;
            dvpp_err err;
            dvpp_status st;
            bool injected;
            test_alloc_install();
            test_alloc_fail_nth(n);
            dvpp_scratch_init(&s);
            st = dvpp_resize_plan_new(k[i].m.parity, k[i].m.interp, k[i].sw,
                                      k[i].sh, k[i].dw, k[i].dh, 3, &p, &err);
            if (st == DVPP_OK)
                st = dvpp_resize_run(p, src, (size_t)k[i].sw * 3, dst,
                                     (size_t)k[i].dw * 3, &s, &err);
            injected = test_alloc_injected();
            dvpp_resize_plan_free(p);
            dvpp_scratch_fini(&s);
            assert_int_equal(test_alloc()->live, 0);
            test_alloc_uninstall();
            if (!injected) {
                assert_int_equal(st, DVPP_OK);
                break;
            }
            assert_int_equal(st, DVPP_ENOMEM);
            assert_int_equal(err.status, DVPP_ENOMEM);
            nomem++;
            assert_true(n < 20);
        }
        assert_true(nomem > 0); /* the sweep injected failures at all */
    }
    free(src);
    free(dst);
}

/* A plan is read-only while it runs: the same plan twice, with a scratch
 * that is warm the second time, gives the same bytes. */
static void test_rerun_same_bytes(void **state)
{
    dvpp_resize_plan *p = NULL;
    dvpp_scratch s;
    dvpp_err err;
    uint8_t *src = malloc(300 * 200 * 3), a[77 * 51 * 3], b[77 * 51 * 3];

    (void)state;
    assert_non_null(src);
    for (size_t i = 0; i < 300 * 200 * 3; i++)
        src[i] = (uint8_t)rng();
    dvpp_scratch_init(&s);
    for (size_t m = 0; m < N_MODES; m++) {
        assert_int_equal(dvpp_resize_plan_new(k_modes[m].parity,
                                              k_modes[m].interp, 300, 200, 77,
                                              51, 3, &p, &err),
                         DVPP_OK);
        assert_int_equal(dvpp_resize_run(p, src, 900, a, 231, &s, &err),
                         DVPP_OK);
        assert_int_equal(dvpp_resize_run(p, src, 900, b, 231, &s, &err),
                         DVPP_OK);
        assert_memory_equal(a, b, sizeof(a));
        dvpp_resize_plan_free(p);
    }
    dvpp_scratch_fini(&s);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels_equal_scalar),
        cmocka_unit_test(test_levels_extreme_scales),
        cmocka_unit_test(test_levels_area_fast_factors),
        cmocka_unit_test(test_vector_cv2_bilinear_up),
        cmocka_unit_test(test_vector_pil_bilinear_down),
        cmocka_unit_test(test_vector_tf_bilinear),
        cmocka_unit_test(test_vector_cv2_area_2x2),
        cmocka_unit_test(test_vector_nearest),
        cmocka_unit_test(test_same_size_copies),
        cmocka_unit_test(test_names_roundtrip),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_run_errors),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_rerun_same_bytes),
    };
    return cmocka_run_group_tests_name("vpc resize", tests, NULL, NULL);
}
