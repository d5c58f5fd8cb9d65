/* dvpp_norm: tables exact against plain double/float loops and AIPP
 * vectors; checkasm-style kernels: every SIMD level equals scalar bit for
 * bit (widths 1..67 and 224, channel maps, all dtypes x layouts, unaligned
 * sources, guard bytes around the tensor, input unchanged), and scalar
 * equals a per-element reference through dvpp_tensor_offset; fill; bad
 * arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_cpu.h"
#include "dvpp_fp16.h"
#include "dvpp_norm.h"
#include "dvpp_tensor.h"

#define GUARD 0xA5
#define GUARDN 64

static uint32_t rng_state = 0x9e3779b9u;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static const double k_mean[4] = {0.485, 0.456, 0.406, 0.5};
static const double k_std[4] = {0.229, 0.224, 0.225, 0.25};

static dvpp_norm_params imagenet(unsigned C, unsigned sc, const uint8_t *idx)
{
    dvpp_norm_params p;
    memset(&p, 0, sizeof(p));
    p.kind = DVPP_NORM_AFFINE;
    p.channels = C;
    p.src_channels = sc;
    p.div = 255;
    for (unsigned c = 0; c < 4; c++) {
        p.src_index[c] = idx[c];
        p.mean[c] = k_mean[c];
        p.std[c] = k_std[c];
    }
    return p;
}

/* Integer outputs need a wide range: (x - 100) / 0.7 saturates both ways. */
static dvpp_norm_params wide(unsigned C, unsigned sc, const uint8_t *idx)
{
    dvpp_norm_params p = imagenet(C, sc, idx);
    p.div = 1;
    for (unsigned c = 0; c < 4; c++) {
        p.mean[c] = 90.0 + 10 * c;
        p.std[c] = 0.7 + 0.1 * c;
    }
    return p;
}

static void test_tables_imagenet_exact(void **state)
{
    static const uint8_t idx[4] = {0, 1, 2, 0};
    dvpp_norm_params p = imagenet(3, 3, idx);
    dvpp_norm_plan pf, ph;
    dvpp_err err;

    (void)state;
    assert_int_equal(dvpp_norm_plan_init(&pf, &p, DVPP_DTYPE_F32,
                                         DVPP_LAYOUT_NCHW, &err), DVPP_OK);
    assert_int_equal(dvpp_norm_plan_init(&ph, &p, DVPP_DTYPE_F16,
                                         DVPP_LAYOUT_NC1HWC0, &err), DVPP_OK);
    for (int c = 0; c < 3; c++) {
        for (int x = 0; x < 256; x++) {
            double d = (double)x;
            d = d / 255.0;
            d = d - k_mean[c];
            d = d / k_std[c];
            float want = (float)d;
            assert_memory_equal(&pf.lut.f32[c][x], &want, sizeof(float));
            assert_int_equal(ph.lut.f16[c][x], dvpp_f32_to_f16(want));
        }
    }
    /* Spot values: (0/255 - 0.485)/0.229 and (255/255 - 0.406)/0.225. */
    assert_true(pf.lut.f32[0][0] == (float)(-0.485 / 0.229));
    assert_true(pf.lut.f32[2][255] == (float)(0.594 / 0.225) ||
                pf.lut.f32[2][255] == (float)((1.0 - 0.406) / 0.225));
}

static void test_tables_aipp_vector(void **state)
{
    dvpp_norm_params p;
    dvpp_norm_plan plan;
    dvpp_tensor t;
    uint16_t out[3];
    const uint8_t px[3] = {128, 128, 128};
    dvpp_err err;

    (void)state;
    memset(&p, 0, sizeof(p));
    p.kind = DVPP_NORM_AIPP;
    p.channels = 3;
    p.src_channels = 3;
    p.src_index[0] = 0, p.src_index[1] = 1, p.src_index[2] = 2;
    p.min_chn[0] = 123, p.min_chn[1] = 117, p.min_chn[2] = 104;
    p.var_reci_chn[0] = p.var_reci_chn[1] = p.var_reci_chn[2] = 1;
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_F16,
                                         DVPP_LAYOUT_NHWC, &err), DVPP_OK);
    assert_int_equal(plan.lut.f16[0][128], 0x4500); /* 5 */
    assert_int_equal(plan.lut.f16[1][128], 0x4980); /* 11 */
    assert_int_equal(plan.lut.f16[2][128], 0x4E00); /* 24 */
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_F16, DVPP_LAYOUT_NHWC, 1,
                                      3, 1, 1, &err), DVPP_OK);
    t.data = out;
    assert_int_equal(dvpp_norm_run(&plan, px, 3, 1, 1, &t, 0, 0, 0, &err),
                     DVPP_OK);
    assert_int_equal(out[0], 0x4500);
    assert_int_equal(out[1], 0x4980);
    assert_int_equal(out[2], 0x4E00);

    /* min and var_reci rounded to fp16 first: 0.1 -> 0.0999755859375. */
    p.min_chn[0] = 0;
    p.var_reci_chn[0] = 0.1f;
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_F32,
                                         DVPP_LAYOUT_NCHW, &err), DVPP_OK);
    assert_true(plan.lut.f32[0][10] == 10.0f * 0.0999755859375f);
    /* int8: x - mean_chn saturated; u8: bypass. */
    p.mean_chn[0] = 100;
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_I8,
                                         DVPP_LAYOUT_NCHW, &err), DVPP_OK);
    assert_int_equal(plan.lut.i8[0][0], -100);
    assert_int_equal(plan.lut.i8[0][255], 127);
    assert_int_equal(plan.lut.i8[0][150], 50);
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_U8,
                                         DVPP_LAYOUT_NCHW, &err), DVPP_OK);
    assert_int_equal(plan.lut.u8[0][77], 77);
}

static void test_tables_int_rounding(void **state)
{
    static const uint8_t idx[4] = {0, 0, 0, 0};
    dvpp_norm_params p = imagenet(1, 1, idx);
    dvpp_norm_plan plan;

    (void)state;
    p.div = 1;
    p.mean[0] = 0;
    p.std[0] = 2; /* x/2: ties to even */
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_U8,
                                         DVPP_LAYOUT_NHWC, NULL), DVPP_OK);
    assert_int_equal(plan.lut.u8[0][1], 0);   /* 0.5 */
    assert_int_equal(plan.lut.u8[0][3], 2);   /* 1.5 */
    assert_int_equal(plan.lut.u8[0][5], 2);   /* 2.5 */
    assert_int_equal(plan.lut.u8[0][255], 128); /* 127.5 */
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_I8,
                                         DVPP_LAYOUT_NHWC, NULL), DVPP_OK);
    assert_int_equal(plan.lut.i8[0][255], 127);
    p.mean[0] = 200; /* (x - 200) / 2 */
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_I8,
                                         DVPP_LAYOUT_NHWC, NULL), DVPP_OK);
    assert_int_equal(plan.lut.i8[0][0], -100);
    assert_int_equal(plan.lut.i8[0][199], 0); /* -0.5 -> -0 */
    assert_int_equal(plan.lut.i8[0][197], -2); /* -1.5 */
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_U8,
                                         DVPP_LAYOUT_NHWC, NULL), DVPP_OK);
    assert_int_equal(plan.lut.u8[0][0], 0);
}

/* ---- kernels ----------------------------------------------------------- */

/* The lowest SIMD level of this architecture: the other one's levels are
 * never built here (a plan asked for one gets the scalar table). */
static int first_simd_level(void)
{
#if defined(__aarch64__)
    return DVPP_SIMD_NEON;
#else
    return DVPP_SIMD_SSE41;
#endif
}

typedef struct chmap {
    unsigned c, sc;
    uint8_t idx[4];
} chmap;

static const chmap k_maps[] = {
    {3, 3, {0, 1, 2, 0}}, /* rgb */
    {3, 3, {2, 1, 0, 0}}, /* bgr -> rgb */
    {3, 4, {1, 2, 3, 0}}, /* argb -> rgb */
    {4, 4, {3, 2, 1, 0}}, /* abgr -> rgba */
    {1, 1, {0, 0, 0, 0}}, /* gray */
    {1, 3, {1, 0, 0, 0}}, /* green of rgb */
    {2, 2, {1, 0, 0, 0}},
    {4, 3, {0, 1, 2, 1}},
    {3, 4, {0, 1, 2, 0}}, /* rgba -> rgb */
};
#define N_MAPS (sizeof(k_maps) / sizeof(k_maps[0]))

static size_t esize(dvpp_dtype dt)
{
    return dvpp_dtype_size(dt);
}

/* Expected output: the guard-filled buffer with every element of the
 * block written from the plan's table via dvpp_tensor_offset. */
static void reference(const dvpp_norm_plan *plan, const uint8_t *src,
                      size_t stride, uint32_t w, uint32_t h,
                      const dvpp_tensor *t, uint32_t n, uint32_t y0,
                      uint32_t x0, uint8_t *data)
{
    size_t es = esize(t->dtype);
    unsigned lanes = t->layout == DVPP_LAYOUT_NC1HWC0 ? t->c0 : t->c;
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            const uint8_t *s = src + y * stride + x * plan->src_channels;
            for (unsigned c = 0; c < lanes; c++) {
                size_t off = dvpp_tensor_offset(t, n, c, y0 + y, x0 + x) * es;
                if (c >= t->c) {
                    memset(data + off, 0, es);
                    continue;
                }
                uint8_t b = s[plan->src_index[c]];
                const uint8_t *v = es == 4 ? (const uint8_t *)&plan->lut.f32[c][b]
                                   : es == 2 ? (const uint8_t *)&plan->lut.f16[c][b]
                                             : &plan->lut.u8[c][b];
                memcpy(data + off, v, es);
            }
        }
    }
}

static void check_case(const chmap *m, dvpp_dtype dt, dvpp_layout lay,
                       int aipp, uint32_t w, uint32_t h)
{
    dvpp_norm_params p = aipp ? imagenet(m->c, m->sc, m->idx)
                              : (dt <= DVPP_DTYPE_I8 ? wide(m->c, m->sc, m->idx)
                                                     : imagenet(m->c, m->sc, m->idx));
    dvpp_norm_plan plan;
    dvpp_tensor t;
    dvpp_err err;
    uint32_t x0 = rng() % 3, y0 = rng() % 2, W = w + x0 + rng() % 3, H = h + y0 + 1;
    uint32_t n = 1;
    size_t soff = 1 + rng() % 15, stride = (size_t)w * m->sc + rng() % 5;
    uint8_t *srcbuf, *srccopy, *src, *want, *got, *ref0;

    if (aipp) {
        p.kind = DVPP_NORM_AIPP;
        for (unsigned c = 0; c < 4; c++) {
            p.mean_chn[c] = 10 * (int)c + 3;
            p.min_chn[c] = 1.5f * (float)c;
            p.var_reci_chn[c] = 0.0171f + 0.001f * (float)c;
        }
    }
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, dt, lay, &err), DVPP_OK);
    assert_int_equal(dvpp_tensor_init(&t, dt, lay, 2, m->c, H, W, &err), DVPP_OK);
    srcbuf = malloc(soff + stride * h + 16);
    srccopy = malloc(soff + stride * h + 16);
    want = malloc(t.bytes + 2 * GUARDN);
    got = malloc(t.bytes + 2 * GUARDN);
    ref0 = malloc(t.bytes + 2 * GUARDN);
    assert_non_null(srcbuf);
    assert_non_null(srccopy);
    assert_non_null(want);
    assert_non_null(got);
    assert_non_null(ref0);
    src = srcbuf + soff;
    for (size_t i = 0; i < soff + stride * h + 16; i++)
        srcbuf[i] = (uint8_t)rng();
    memcpy(srccopy, srcbuf, soff + stride * h + 16);
    memset(want, GUARD, t.bytes + 2 * GUARDN);
    reference(&plan, src, stride, w, h, &t, n, y0, x0, want + GUARDN);

    /* Scalar against the per-element reference. */
    memset(ref0, GUARD, t.bytes + 2 * GUARDN);
    t.data = ref0 + GUARDN;
    dvpp_norm_plan_set_level(&plan, DVPP_SIMD_SCALAR);
    assert_int_equal(dvpp_norm_run(&plan, src, stride, w, h, &t, n, y0, x0,
                                   &err), DVPP_OK);
    assert_memory_equal(want, ref0, t.bytes + 2 * GUARDN);

    /* Every level against scalar. */
    for (int lvl = first_simd_level(); lvl <= (int)dvpp_cpu_detect();
         lvl++) {
        dvpp_norm_plan_set_level(&plan, (dvpp_simd_level)lvl);
        assert_int_equal(plan.level, lvl);
        memset(got, GUARD, t.bytes + 2 * GUARDN);
        t.data = got + GUARDN;
        assert_int_equal(dvpp_norm_run(&plan, src, stride, w, h, &t, n, y0,
                                       x0, &err), DVPP_OK);
        if (memcmp(ref0, got, t.bytes + 2 * GUARDN) != 0)
            fail_msg("level %d dtype %d layout %d C %u sc %u w %u h %u aipp %d",
                     lvl, dt, lay, m->c, m->sc, w, h, aipp);
        if (memcmp(srcbuf, srccopy, soff + stride * h + 16) != 0)
            fail_msg("level %d changed its input", lvl);
    }
    free(srcbuf);
    free(srccopy);
    free(want);
    free(got);
    free(ref0);
}

static void test_kernels_all_levels(void **state)
{
    (void)state;
    for (int dt = 0; dt < 4; dt++)
        for (int lay = 0; lay < 3; lay++)
            for (size_t m = 0; m < N_MAPS; m++)
                for (uint32_t w = 1; w <= 68; w++)
                    check_case(&k_maps[m], (dvpp_dtype)dt, (dvpp_layout)lay,
                               (int)(w & 1), w == 68 ? 224 : w,
                               1 + (w % 3));
}

static void test_kernels_224_hot(void **state)
{
    (void)state;
    /* The hot shapes, full size. */
    check_case(&k_maps[0], DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 0, 224, 224);
    check_case(&k_maps[0], DVPP_DTYPE_F16, DVPP_LAYOUT_NC1HWC0, 0, 224, 224);
    check_case(&k_maps[1], DVPP_DTYPE_F32, DVPP_LAYOUT_NHWC, 0, 224, 224);
    /* Rows longer than the kernels' stack chunks. */
    check_case(&k_maps[0], DVPP_DTYPE_F32, DVPP_LAYOUT_NHWC, 0, 1100, 2);
    check_case(&k_maps[3], DVPP_DTYPE_F32, DVPP_LAYOUT_NHWC, 1, 1057, 3);
    check_case(&k_maps[2], DVPP_DTYPE_F16, DVPP_LAYOUT_NC1HWC0, 0, 600, 2);
    check_case(&k_maps[0], DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 0, 1100, 2);
    check_case(&k_maps[2], DVPP_DTYPE_F16, DVPP_LAYOUT_NCHW, 1, 1100, 2);
}

/* Tensors with padded rows and a pixel step wider than C (a view into a
 * larger tensor): the dense kernels for padded rows, the generic ones for
 * the rest; all levels against the per-element reference. */
static void test_kernels_strided(void **state)
{
    static const uint8_t idx[4] = {2, 1, 0, 0};
    dvpp_norm_params p = imagenet(3, 3, idx);
    dvpp_norm_plan plan;
    dvpp_err err;
    const uint32_t w = 45, h = 3;
    uint8_t src[3 * 45 * 3];

    (void)state;
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (uint8_t)rng();
    for (int lay = 0; lay < 3; lay++) {
        for (int wide_px = 0; wide_px < 2; wide_px++) {
            dvpp_tensor t;
            uint8_t *want, *got;
            assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_F32, (dvpp_layout)lay,
                                              1, 3, h, w, &err), DVPP_OK);
            /* Re-stride: rows padded by 7 pixels; pixels 1 element wider. */
            int64_t px = lay == DVPP_LAYOUT_NCHW ? 1 + wide_px
                         : lay == DVPP_LAYOUT_NHWC ? 3 + wide_px : 16 + 16 * wide_px;
            int64_t row = px * (w + 7);
            if (lay == DVPP_LAYOUT_NCHW) {
                t.strides[3] = px, t.strides[2] = row;
                t.strides[1] = row * h, t.strides[0] = 3 * row * h;
            } else if (lay == DVPP_LAYOUT_NHWC) {
                t.strides[3] = 1, t.strides[2] = px;
                t.strides[1] = row, t.strides[0] = row * h;
            } else {
                t.strides[4] = 1, t.strides[3] = px, t.strides[2] = row;
                t.strides[1] = row * h, t.strides[0] = row * h;
            }
            t.bytes = (size_t)t.strides[0] * 4;
            want = malloc(t.bytes + 2 * GUARDN);
            got = malloc(t.bytes + 2 * GUARDN);
            assert_non_null(want);
            assert_non_null(got);
            assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_F32,
                                                 (dvpp_layout)lay, &err), DVPP_OK);
            memset(want, GUARD, t.bytes + 2 * GUARDN);
            reference(&plan, src, 3 * w, w, h, &t, 0, 0, 0, want + GUARDN);
            for (int lvl = 0; lvl <= (int)dvpp_cpu_detect(); lvl++) {
                dvpp_norm_plan_set_level(&plan, (dvpp_simd_level)lvl);
                memset(got, GUARD, t.bytes + 2 * GUARDN);
                t.data = got + GUARDN;
                assert_int_equal(dvpp_norm_run(&plan, src, 3 * w, w, h, &t, 0, 0,
                                               0, &err), DVPP_OK);
                if (memcmp(want, got, t.bytes + 2 * GUARDN) != 0)
                    fail_msg("strided: level %d layout %d wide %d", lvl, lay,
                             wide_px);
            }
            free(want);
            free(got);
        }
    }
}

static void test_fill(void **state)
{
    static const double val[4] = {1.5, -2.0, 300.0, 0};
    dvpp_tensor t;
    dvpp_err err;

    (void)state;
    for (int dt = 0; dt < 4; dt++) {
        for (int lay = 0; lay < 3; lay++) {
            uint8_t *buf, *want;
            assert_int_equal(dvpp_tensor_init(&t, (dvpp_dtype)dt,
                                              (dvpp_layout)lay, 2, 3, 5, 7,
                                              &err), DVPP_OK);
            buf = malloc(t.bytes + 2 * GUARDN);
            want = malloc(t.bytes + 2 * GUARDN);
            memset(buf, GUARD, t.bytes + 2 * GUARDN);
            memset(want, GUARD, t.bytes + 2 * GUARDN);
            t.data = buf + GUARDN;
            assert_int_equal(dvpp_norm_fill(&t, 1, 1, 2, 4, 3, val, &err),
                             DVPP_OK);
            size_t es = esize(t.dtype);
            unsigned lanes = lay == DVPP_LAYOUT_NC1HWC0 ? t.c0 : 3;
            for (uint32_t y = 1; y < 4; y++) {
                for (uint32_t x = 2; x < 6; x++) {
                    for (unsigned c = 0; c < lanes; c++) {
                        uint8_t *o = want + GUARDN +
                                     dvpp_tensor_offset(&t, 1, c, y, x) * es;
                        float f = c < 3 ? (float)val[c] : 0.0f;
                        uint16_t h16 = dvpp_f32_to_f16(f);
                        int8_t i8 = c == 0 ? 2 : c == 1 ? -2 : c == 2 ? 127 : 0;
                        uint8_t u8 = c == 0 ? 2 : c == 1 ? 0 : c == 2 ? 255 : 0;
                        if (dt == DVPP_DTYPE_F32)
                            memcpy(o, &f, 4);
                        else if (dt == DVPP_DTYPE_F16)
                            memcpy(o, &h16, 2);
                        else if (dt == DVPP_DTYPE_I8)
                            memcpy(o, &i8, 1);
                        else
                            memcpy(o, &u8, 1);
                    }
                }
            }
            assert_memory_equal(buf, want, t.bytes + 2 * GUARDN);
            free(buf);
            free(want);
        }
    }
    assert_int_equal(dvpp_norm_fill(&t, 0, 0, 0, 8, 1, val, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_norm_fill(NULL, 0, 0, 0, 1, 1, val, &err), DVPP_EINVAL);
}

static void test_bad_args(void **state)
{
    static const uint8_t idx[4] = {0, 1, 2, 0};
    dvpp_norm_params p = imagenet(3, 3, idx), q;
    dvpp_norm_plan plan;
    dvpp_tensor t;
    dvpp_err err;
    float data[2 * 3 * 4 * 4];
    uint8_t src[64] = {0};

    (void)state;
    q = p, q.channels = 0;
    assert_int_equal(dvpp_norm_plan_init(&plan, &q, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "channels");
    q = p, q.channels = 5;
    assert_int_equal(dvpp_norm_plan_init(&plan, &q, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, &err), DVPP_EINVAL);
    q = p, q.src_channels = 5;
    assert_int_equal(dvpp_norm_plan_init(&plan, &q, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, &err), DVPP_EINVAL);
    q = p, q.src_index[2] = 3;
    assert_int_equal(dvpp_norm_plan_init(&plan, &q, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "src_index");
    q = p, q.std[1] = 0;
    assert_int_equal(dvpp_norm_plan_init(&plan, &q, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "std");
    q = p, q.div = 0;
    assert_int_equal(dvpp_norm_plan_init(&plan, &q, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "div");
    q = p, q.kind = (dvpp_norm_kind)7;
    assert_int_equal(dvpp_norm_plan_init(&plan, &q, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, (dvpp_dtype)9, DVPP_LAYOUT_NCHW, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_F32, (dvpp_layout)9, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_norm_plan_init(NULL, &p, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, &err), DVPP_EINVAL);

    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, &err), DVPP_OK);
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 2, 3, 4, 4, &err), DVPP_OK);
    t.data = data;
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 4, 4, &t, 1, 0, 0, &err), DVPP_OK);
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 4, 4, &t, 2, 0, 0, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 4, 4, &t, 0, 1, 0, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "block");
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 4, 4, &t, 0, 0, 1, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 1, 1, &t, 0, 0, 0xffffffffu, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_norm_run(&plan, src, 11, 4, 2, &t, 0, 0, 0, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "stride");
    assert_int_equal(dvpp_norm_run(&plan, NULL, 12, 4, 4, &t, 0, 0, 0, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_norm_run(NULL, src, 12, 4, 4, &t, 0, 0, 0, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 4, 4, NULL, 0, 0, 0, &err), DVPP_EINVAL);
    t.data = NULL;
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 4, 4, &t, 0, 0, 0, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_F16, DVPP_LAYOUT_NCHW, 2, 3, 4, 4, &err), DVPP_OK);
    t.data = data;
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 4, 4, &t, 0, 0, 0, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NHWC, 2, 3, 4, 4, &err), DVPP_OK);
    t.data = data;
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 4, 4, &t, 0, 0, 0, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_tensor_init(&t, DVPP_DTYPE_F32, DVPP_LAYOUT_NCHW, 2, 4, 4, 3, &err), DVPP_OK);
    t.data = data;
    assert_int_equal(dvpp_norm_run(&plan, src, 12, 3, 4, &t, 0, 0, 0, &err), DVPP_EINVAL);
}

static void test_level_follows_active(void **state)
{
    static const uint8_t idx[4] = {0, 1, 2, 0};
    dvpp_norm_params p = imagenet(3, 3, idx);
    dvpp_norm_plan plan;

    (void)state;
    assert_int_equal(dvpp_norm_plan_init(&plan, &p, DVPP_DTYPE_F32,
                                         DVPP_LAYOUT_NCHW, NULL), DVPP_OK);
    assert_true(plan.level <= dvpp_simd_active());
    dvpp_norm_plan_set_level(&plan, DVPP_SIMD_BEST);
    assert_true(plan.level <= dvpp_cpu_detect());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_imagenet_exact),
        cmocka_unit_test(test_tables_aipp_vector),
        cmocka_unit_test(test_tables_int_rounding),
        cmocka_unit_test(test_kernels_all_levels),
        cmocka_unit_test(test_kernels_224_hot),
        cmocka_unit_test(test_kernels_strided),
        cmocka_unit_test(test_fill),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_level_follows_active),
    };
    return cmocka_run_group_tests_name("aipp norm", tests, NULL, NULL);
}
