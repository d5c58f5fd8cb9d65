/* Tests of vpc/dvpp_csc: the row kernels in the checkasm style (every SIMD
 * level the CPU has against the scalar reference, seeded random data,
 * widths 1..67 and large, unaligned pointers, guard bytes, inputs
 * unchanged) and on every input of their arithmetic, whole conversions for every format pair at every level,
 * hand vectors from OpenCV's constants and the float formulas, round
 * trips, the error contract and allocation failure. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dvpp_cpu.h"
#include "dvpp_image.h"
#include "dvpp_mem.h"
#include "test_alloc.h"
#include "vpc/csc_int.h"
#include "vpc/dvpp_csc.h"

#define GUARD 0xA5
#define MAXW 2051 /* largest kernel width tried (odd, past several SIMD blocks) */

static uint32_t rng_state = 0x2545F491u;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rng();
}

/* Widths 1..67, then a few spanning many SIMD blocks with odd tails. */
static size_t next_width(size_t w)
{
    return w < 67 ? w + 1 : w * 2 + 1;
}

/* The six RGB-family layouts as the kernels see them. */
static const dvpp__csc_pix k_pix[6] = {
    {3, 0, 1, 2, 0, 0, 0, 0}, /* RGB */
    {3, 2, 1, 0, 0, 1, 0, 0}, /* BGR */
    {4, 0, 1, 2, 3, 0, 0, 0}, /* RGBA */
    {4, 2, 1, 0, 3, 1, 0, 0}, /* BGRA */
    {4, 1, 2, 3, 0, 0, 1, 0}, /* ARGB */
    {4, 3, 2, 1, 0, 1, 1, 0}, /* ABGR */
};

/* A buffer with GUARD bytes on both sides of @n usable bytes at an
 * unaligned offset. */
typedef struct gbuf {
    uint8_t mem[4 * MAXW + 256];
    uint8_t *p;
    size_t n;
} gbuf;

static void gbuf_set(gbuf *g, size_t n)
{
    size_t off = 16 + rng() % 31;
    memset(g->mem, GUARD, sizeof(g->mem));
    g->p = g->mem + off;
    g->n = n;
}

static void gbuf_check(const gbuf *g)
{
    for (const uint8_t *q = g->mem; q < g->p; q++)
        assert_int_equal(*q, GUARD);
    for (const uint8_t *q = g->p + g->n; q < g->mem + sizeof(g->mem); q++)
        assert_int_equal(*q, GUARD);
}

/* ------------------------------------------------------------------ */
/* Kernels against scalar                                              */
/* ------------------------------------------------------------------ */

typedef struct yuv_case {
    gbuf y0, y1, uv, v;     /* inputs (uv: paired chroma or U plane) */
    gbuf ref0, ref1;        /* scalar outputs */
    gbuf got0, got1;        /* SIMD outputs */
    uint8_t copy[4 * MAXW]; /* input snapshot: y0, y1, uv, v back to back */
} yuv_case;

/* Snapshot (or compare with the snapshot) every input of a YUV case, so a
 * kernel that writes to any of its four input rows is caught. */
static void yuv_inputs(yuv_case *t, size_t w, size_t cw, int check)
{
    const gbuf *in[4] = {&t->y0, &t->y1, &t->uv, &t->v};
    size_t n[4] = {w, w, 2 * cw, cw}, at = 0;

    for (int i = 0; i < 4; i++) {
        if (check)
            assert_memory_equal(t->copy + at, in[i]->p, n[i]);
        else
            memcpy(t->copy + at, in[i]->p, n[i]);
        at += n[i];
    }
}

/* One YUV->RGB comparison: chroma paired (U first or V first) or planar,
 * one or two rows, every layout and matrix. */
static void yuv_rgb_once(yuv_case *t, const dvpp__csc_kern *s,
                         const dvpp__csc_kern *k, size_t w, int mode,
                         int two, const dvpp__csc_pix *o,
                         const dvpp__csc_coef *c)
{
    size_t cw = (w + 1) / 2;
    dvpp__yuv_rows r;

    gbuf_set(&t->y0, w);
    gbuf_set(&t->y1, w);
    gbuf_set(&t->uv, 2 * cw);
    gbuf_set(&t->v, cw);
    fill_random(t->y0.p, w);
    fill_random(t->y1.p, w);
    fill_random(t->uv.p, 2 * cw);
    fill_random(t->v.p, cw);
    yuv_inputs(t, w, cw, 0);
    r.y0 = t->y0.p;
    r.y1 = two ? t->y1.p : NULL;
    r.cstep = mode == 2 ? 1 : 2;
    r.u = mode == 2 ? t->uv.p : t->uv.p + (mode == 1);
    r.v = mode == 2 ? t->v.p : t->uv.p + (mode == 0);
    gbuf_set(&t->ref0, w * o->cn);
    gbuf_set(&t->ref1, w * o->cn);
    gbuf_set(&t->got0, w * o->cn);
    gbuf_set(&t->got1, w * o->cn);
    r.d0 = t->ref0.p;
    r.d1 = t->ref1.p;
    s->yuv_rgb_sub(&r, w, c, o);
    r.d0 = t->got0.p;
    r.d1 = t->got1.p;
    k->yuv_rgb_sub(&r, w, c, o);
    assert_memory_equal(t->ref0.p, t->got0.p, w * o->cn);
    if (two)
        assert_memory_equal(t->ref1.p, t->got1.p, w * o->cn);
    gbuf_check(&t->got0);
    gbuf_check(&t->got1);
    yuv_inputs(t, w, cw, 1);
}

static void test_yuv_rgb_kernels_equal_scalar(void **state)
{
    static yuv_case t;
    dvpp__csc_kern s, k;

    (void)state;
    dvpp__csc_kern_init(&s, DVPP_SIMD_SCALAR);
    for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        dvpp__csc_kern_init(&k, (dvpp_simd_level)lvl);
        if (k.yuv_rgb_sub == s.yuv_rgb_sub)
            continue;
        for (size_t w = 1; w <= MAXW; w = next_width(w)) {
            for (int m = 0; m < 4; m++) {
                dvpp__csc_pix o = k_pix[rng() % 6];
                o.alpha = (uint8_t)rng();
                yuv_rgb_once(&t, &s, &k, w, (int)(rng() % 3), (int)(rng() & 1), &o,
                             dvpp__csc_coef_get(m / 2, m % 2));
            }
        }
        /* Every layout and chroma mode at one width with a tail. */
        for (int p = 0; p < 6; p++)
            for (int mode = 0; mode < 3; mode++)
                yuv_rgb_once(&t, &s, &k, 133, mode, 1, &k_pix[p],
                             dvpp__csc_coef_get(0, 0));
    }
}

typedef struct rgb_case {
    gbuf s0, s1;
    gbuf ry0, ry1, ruv, rv; /* scalar outputs */
    gbuf gy0, gy1, guv, gv; /* SIMD outputs */
    uint8_t copy[4 * MAXW], copy1[4 * MAXW]; /* s0 and s1 snapshots */
} rgb_case;

static void rgb_yuv_once(rgb_case *t, const dvpp__csc_kern *s,
                         const dvpp__csc_kern *k, size_t w, int mode, int two,
                         const dvpp__csc_pix *in, const dvpp__csc_coef *c)
{
    size_t cw = (w + 1) / 2;
    dvpp__rgb_rows r;
    gbuf *outs[2][4] = {{&t->ry0, &t->ry1, &t->ruv, &t->rv},
                        {&t->gy0, &t->gy1, &t->guv, &t->gv}};

    gbuf_set(&t->s0, w * in->cn);
    gbuf_set(&t->s1, w * in->cn);
    fill_random(t->s0.p, w * in->cn);
    fill_random(t->s1.p, w * in->cn);
    memcpy(t->copy, t->s0.p, w * in->cn);
    memcpy(t->copy1, t->s1.p, w * in->cn);
    for (int i = 0; i < 2; i++) {
        gbuf_set(outs[i][0], w);
        gbuf_set(outs[i][1], w);
        gbuf_set(outs[i][2], 2 * cw);
        gbuf_set(outs[i][3], cw);
        r.s0 = t->s0.p;
        r.s1 = two ? t->s1.p : NULL;
        r.y0 = outs[i][0]->p;
        r.y1 = outs[i][1]->p;
        r.cstep = mode == 2 ? 1 : 2;
        r.u = mode == 3 ? NULL : mode == 2 ? outs[i][2]->p : outs[i][2]->p + (mode == 1);
        r.v = mode == 2 ? outs[i][3]->p : outs[i][2]->p + (mode == 0);
        (i ? k : s)->rgb_yuv_sub(&r, w, c, in);
    }
    assert_memory_equal(t->ry0.p, t->gy0.p, w);
    if (two)
        assert_memory_equal(t->ry1.p, t->gy1.p, w);
    assert_memory_equal(t->ruv.p, t->guv.p, 2 * cw);
    assert_memory_equal(t->rv.p, t->gv.p, cw);
    for (int j = 0; j < 4; j++)
        gbuf_check(outs[1][j]);
    if (mode == 0 || mode == 1)
        gbuf_check(&t->guv); /* the pair row is exactly 2*cw bytes */
    assert_memory_equal(t->copy, t->s0.p, w * in->cn);
    assert_memory_equal(t->copy1, t->s1.p, w * in->cn);
}

/* Pillow's grey weights as dvpp_csc's k_pil_luma holds them (only the
 * luma row is used): the largest luma coefficient any table has. */
static const dvpp__csc_coef k_pil = {
    .yr = 19595 << 4, .yg = 38470 << 4, .yb = 7471 << 4, .y_bias = DVPP__CSC_HALF,
};

static void test_rgb_yuv_kernels_equal_scalar(void **state)
{
    static rgb_case t;
    static gbuf src, ref, got;
    static uint8_t copy[4 * MAXW];
    dvpp__csc_kern s, k;

    (void)state;
    dvpp__csc_kern_init(&s, DVPP_SIMD_SCALAR);
    for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        dvpp__csc_kern_init(&k, (dvpp_simd_level)lvl);
        for (size_t w = 1; w <= MAXW; w = next_width(w)) {
            const dvpp__csc_pix *in = &k_pix[rng() % 6];
            const dvpp__csc_coef *c = dvpp__csc_coef_get((int)(rng() & 1), (int)(rng() & 1));
            if (k.rgb_yuv_sub != s.rgb_yuv_sub)
                rgb_yuv_once(&t, &s, &k, w, (int)(rng() % 4), (int)(rng() & 1), in, c);
            if (k.rgb_y == s.rgb_y)
                continue;
            if (rng() % 3 == 0)
                c = &k_pil; /* RGB -> GRAY with pil_luma */
            gbuf_set(&src, w * in->cn);
            fill_random(src.p, w * in->cn);
            memcpy(copy, src.p, w * in->cn);
            gbuf_set(&ref, w);
            gbuf_set(&got, w);
            s.rgb_y(src.p, ref.p, w, c, in);
            k.rgb_y(src.p, got.p, w, c, in);
            assert_memory_equal(ref.p, got.p, w);
            gbuf_check(&got);
            assert_memory_equal(copy, src.p, w * in->cn);
        }
        if (k.rgb_yuv_sub != s.rgb_yuv_sub)
            for (int p = 0; p < 6; p++)
                for (int mode = 0; mode < 4; mode++)
                    rgb_yuv_once(&t, &s, &k, 97, mode, 1, &k_pix[p],
                                 dvpp__csc_coef_get(0, 0));
    }
}

static void test_shuffle_kernels_equal_scalar(void **state)
{
    static gbuf src, ref, got;
    static uint8_t copy[4 * MAXW];
    dvpp__csc_kern s, k;

    (void)state;
    dvpp__csc_kern_init(&s, DVPP_SIMD_SCALAR);
    for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
        dvpp__csc_kern_init(&k, (dvpp_simd_level)lvl);
        if (k.shuffle == s.shuffle)
            continue;
        for (size_t w = 1; w <= MAXW; w = next_width(w)) {
            for (int from = 0; from < 7; from++) {
                for (int to = 0; to < 6; to++) {
                    const dvpp__csc_pix *po = &k_pix[to];
                    dvpp__csc_shuf m = {from == 6 ? 1 : k_pix[from].cn, po->cn,
                                        {0, 0, 0, 0}, (uint8_t)rng()};
                    m.idx[po->ri] = from == 6 ? 0 : k_pix[from].ri;
                    m.idx[po->gi] = from == 6 ? 0 : k_pix[from].gi;
                    m.idx[po->bi] = from == 6 ? 0 : k_pix[from].bi;
                    if (po->cn == 4)
                        m.idx[po->ai] = from < 6 && k_pix[from].cn == 4
                                            ? k_pix[from].ai : DVPP__SHUF_ALPHA;
                    gbuf_set(&src, w * m.scn);
                    fill_random(src.p, w * m.scn);
                    memcpy(copy, src.p, w * m.scn);
                    gbuf_set(&ref, w * m.dcn);
                    gbuf_set(&got, w * m.dcn);
                    s.shuffle(src.p, ref.p, w, &m);
                    k.shuffle(src.p, got.p, w, &m);
                    assert_memory_equal(ref.p, got.p, w * m.dcn);
                    gbuf_check(&got);
                    assert_memory_equal(copy, src.p, w * m.scn);
                }
            }
        }
    }
}

/* Every input of the arithmetic kernels for every matrix and range: each
 * (Y, U, V) through yuv_rgb_sub, each RGB through rgb_yuv_sub's luma and
 * chroma, and through rgb_y with Pillow's weights (the one luma table
 * rgb_yuv_sub never takes; rgb_y's other tables run the same luma code
 * and are held by the random cases). The random cases cannot stand in for
 * this: a sum meets a rounding boundary about once in 2^20 (a rounding
 * constant off by one passes them). One layout (the others are a reorder,
 * checked above); the scalar result is computed once per row for all
 * levels. Levels up to the active one only: under DVPP_SIMD=scalar (the
 * second pass of make test-arm64) the comparison would repeat unchanged. */
#define EX_W 512 /* pixels per call: 256 chroma samples */
#define EX_MAXK 8

/* The tables of the levels above scalar, up to the active one. */
static int ex_tables(dvpp__csc_kern *ks)
{
    int n = 0;

    for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_simd_active() && n < EX_MAXK;
         lvl++)
        dvpp__csc_kern_init(&ks[n++], (dvpp_simd_level)lvl);
    return n;
}

/* How many of the @nk tables have their own kernel for each entry
 * (none: nothing to compare, and the scalar rows are not worth making). */
typedef struct ex_own {
    int yuv_rgb, rgb_yuv, rgb_y;
} ex_own;

static ex_own ex_count(const dvpp__csc_kern *s, const dvpp__csc_kern *ks, int nk)
{
    ex_own n = {0, 0, 0};

    for (int i = 0; i < nk; i++) {
        n.yuv_rgb += ks[i].yuv_rgb_sub != s->yuv_rgb_sub;
        n.rgb_yuv += ks[i].rgb_yuv_sub != s->rgb_yuv_sub;
        n.rgb_y += ks[i].rgb_y != s->rgb_y;
    }
    return n;
}

/* Chroma sample i = (i, @v); luma pairs (i + 4p + 0/1) on row 0 and
 * (i + 4p + 2/3) on row 1, so p = 0..63 meets every Y with every sample. */
static void ex_yuv_rows(uint8_t *y0, uint8_t *y1, uint8_t *u, uint8_t *v,
                        unsigned vv, unsigned p)
{
    for (unsigned i = 0; i < EX_W / 2; i++) {
        u[i] = (uint8_t)i;
        v[i] = (uint8_t)vv;
        y0[2 * i] = (uint8_t)(i + 4 * p);
        y0[2 * i + 1] = (uint8_t)(i + 4 * p + 1);
        y1[2 * i] = (uint8_t)(i + 4 * p + 2);
        y1[2 * i + 1] = (uint8_t)(i + 4 * p + 3);
    }
}

static void test_yuv_rgb_every_input(void **state)
{
    static uint8_t y0[EX_W], y1[EX_W], u[EX_W / 2], v[EX_W / 2];
    static uint8_t ref[2][3 * EX_W], got[2][3 * EX_W];
    dvpp__csc_kern s, ks[EX_MAXK];
    int nk = ex_tables(ks);

    (void)state;
    dvpp__csc_kern_init(&s, DVPP_SIMD_SCALAR);
    if (!ex_count(&s, ks, nk).yuv_rgb)
        return;
    for (int m = 0; m < 4; m++) {
        const dvpp__csc_coef *c = dvpp__csc_coef_get(m / 2, m % 2);
        for (unsigned vv = 0; vv < 256; vv++) {
            for (unsigned p = 0; p < 64; p++) {
                dvpp__yuv_rows r = {y0, y1, u, v, ref[0], ref[1], 1};
                ex_yuv_rows(y0, y1, u, v, vv, p);
                s.yuv_rgb_sub(&r, EX_W, c, &k_pix[0]);
                r.d0 = got[0];
                r.d1 = got[1];
                for (int i = 0; i < nk; i++) {
                    if (ks[i].yuv_rgb_sub == s.yuv_rgb_sub)
                        continue;
                    ks[i].yuv_rgb_sub(&r, EX_W, c, &k_pix[0]);
                    assert_memory_equal(ref, got, sizeof(ref));
                }
            }
        }
    }
}

/* 512 RGB pixels: R = pixel index / 2, G and B fixed on the even pixels,
 * so the even pixels of the 65536 (G, B) rows are every RGB. */
static void ex_rgb_row(uint8_t *px, unsigned g, unsigned b)
{
    for (unsigned i = 0; i < EX_W; i++) {
        px[3 * i] = (uint8_t)(i / 2);
        px[3 * i + 1] = (uint8_t)(g ^ (i & 1)); /* odd pixels differ */
        px[3 * i + 2] = (uint8_t)b;
    }
}

/* rgb_yuv_sub of one row at every level against scalar. */
static void ex_rgb_yuv_row(const dvpp__csc_kern *s, const dvpp__csc_kern *ks,
                           int nk, const uint8_t *px, const dvpp__csc_coef *c)
{
    static uint8_t ry[EX_W], gy[EX_W];
    static uint8_t ru[EX_W / 2], rv[EX_W / 2], gu[EX_W / 2], gv[EX_W / 2];
    dvpp__rgb_rows r = {px, NULL, ry, NULL, ru, rv, 1};

    s->rgb_yuv_sub(&r, EX_W, c, &k_pix[0]);
    r.y0 = gy;
    r.u = gu;
    r.v = gv;
    for (int i = 0; i < nk; i++) {
        if (ks[i].rgb_yuv_sub == s->rgb_yuv_sub)
            continue;
        ks[i].rgb_yuv_sub(&r, EX_W, c, &k_pix[0]);
        assert_memory_equal(ry, gy, EX_W);
        assert_memory_equal(ru, gu, EX_W / 2);
        assert_memory_equal(rv, gv, EX_W / 2);
    }
}

static void test_rgb_yuv_every_input(void **state)
{
    static uint8_t px[3 * EX_W], ry[EX_W], gy[EX_W];
    dvpp__csc_kern s, ks[EX_MAXK];
    int nk = ex_tables(ks);
    ex_own own;

    (void)state;
    dvpp__csc_kern_init(&s, DVPP_SIMD_SCALAR);
    own = ex_count(&s, ks, nk);
    for (unsigned gb = 0; gb < 65536 && (own.rgb_yuv || own.rgb_y); gb++) {
        ex_rgb_row(px, gb >> 8, gb & 255);
        for (int m = 0; m < 4 && own.rgb_yuv; m++)
            ex_rgb_yuv_row(&s, ks, nk, px, dvpp__csc_coef_get(m / 2, m % 2));
        if (!own.rgb_y || ((gb >> 8) & 1))
            continue; /* luma of every RGB: rows of even G suffice, their
                       * odd pixels hold G + 1 */
        s.rgb_y(px, ry, EX_W, &k_pil, &k_pix[0]);
        for (int i = 0; i < nk; i++) {
            if (ks[i].rgb_y == s.rgb_y)
                continue;
            ks[i].rgb_y(px, gy, EX_W, &k_pil, &k_pix[0]);
            assert_memory_equal(ry, gy, EX_W);
        }
    }
}

static void test_dispatch_follows_active_level(void **state)
{
    (void)state;
    assert_true(dvpp__csc_kern_get(DVPP_SIMD_BEST)->level <= dvpp_simd_active());
    assert_int_equal(dvpp__csc_kern_get(DVPP_SIMD_SCALAR)->level, DVPP_SIMD_SCALAR);
}

/* ------------------------------------------------------------------ */
/* Whole images                                                        */
/* ------------------------------------------------------------------ */

static const dvpp_pixfmt k_all[] = {
    DVPP_PIXEL_NV12, DVPP_PIXEL_NV21, DVPP_PIXEL_I420,
    DVPP_PIXEL_YVU_PLANAR_420, DVPP_PIXEL_YUV422SP, DVPP_PIXEL_YVU422SP,
    DVPP_PIXEL_YUV444SP, DVPP_PIXEL_YVU444SP, DVPP_PIXEL_YUV440SP,
    DVPP_PIXEL_YVU440SP, DVPP_PIXEL_YUV400, DVPP_PIXEL_GRAY,
    DVPP_PIXEL_YUYV, DVPP_PIXEL_UYVY, DVPP_PIXEL_YVYU, DVPP_PIXEL_VYUY,
    DVPP_PIXEL_YUV_PACKED_444, DVPP_PIXEL_RGB, DVPP_PIXEL_BGR,
    DVPP_PIXEL_RGBA, DVPP_PIXEL_BGRA, DVPP_PIXEL_ARGB, DVPP_PIXEL_ABGR,
};
#define N_ALL (sizeof(k_all) / sizeof(k_all[0]))

/* An image of @f with @pad extra bytes per row (kept even) and @padh
 * extra rows; the whole buffer filled with @fillv. */
static void mk(dvpp_image *img, dvpp_pixfmt f, uint32_t w, uint32_t h,
               uint32_t pad, uint32_t padh, uint8_t fillv)
{
    dvpp_err err;
    assert_int_equal(dvpp_image_init(img, f, w, h, 1, 1, &err), DVPP_OK);
    img->width_stride += pad & ~1u;
    img->height_stride += padh;
    assert_int_equal(dvpp_image_alloc(img, &err), DVPP_OK);
    memset(img->data, fillv, img->size);
}

/* Every byte outside the meaningful rows and row bytes is still GUARD. */
static void check_padding(const dvpp_image *img)
{
    dvpp_planes pl;
    dvpp_err err;
    size_t end = 0;

    assert_int_equal(dvpp_image_planes(img, &pl, &err), DVPP_OK);
    for (int p = 0; p < pl.count; p++) {
        const dvpp_plane *q = &pl.p[p];
        for (size_t y = 0; y < q->alloc_rows; y++) {
            const uint8_t *row = img->data + q->offset + y * q->stride;
            size_t from = y < q->rows ? q->row_bytes : 0;
            for (size_t x = from; x < q->stride; x++)
                assert_int_equal(row[x], GUARD);
        }
        end = q->offset + q->stride * q->alloc_rows;
    }
    for (size_t i = end; i < img->size; i++)
        assert_int_equal(img->data[i], GUARD);
}

static void test_every_pair_every_level(void **state)
{
    static const uint32_t sizes[][2] = {{1, 1}, {2, 2}, {5, 3}, {67, 7}, {130, 5}};
    dvpp_scratch scr;
    dvpp_err err;
    dvpp_csc c;

    (void)state;
    dvpp_scratch_init(&scr);
    for (size_t a = 0; a < N_ALL; a++) {
        for (size_t b = 0; b < N_ALL; b++) {
            for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
                uint32_t w = sizes[z][0], h = sizes[z][1];
                dvpp_image src, ref, got;
                uint8_t *copy;
                mk(&src, k_all[a], w, h, rng() % 9, rng() % 3, 0);
                fill_random(src.data, src.size);
                copy = malloc(src.size);
                memcpy(copy, src.data, src.size);
                mk(&ref, k_all[b], w, h, rng() % 9, rng() % 3, GUARD);
                mk(&got, k_all[b], w, h, 0, 0, GUARD);
                got.width_stride = ref.width_stride;
                got.height_stride = ref.height_stride;
                dvpp_image_free(&got);
                assert_int_equal(dvpp_image_alloc(&got, &err), DVPP_OK);
                dvpp_csc_init(&c);
                c.matrix = (dvpp_csc_matrix)(rng() & 1);
                c.full_range = rng() & 1;
                c.alpha = (int)(rng() % 257) - 1;
                c.level = DVPP_SIMD_SCALAR;
                assert_true(dvpp_csc_supported(k_all[a], k_all[b]));
                assert_int_equal(dvpp_csc_convert(&src, &ref, &c, &scr, &err), DVPP_OK);
                check_padding(&ref);
                for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
                    memset(got.data, GUARD, got.size);
                    c.level = (dvpp_simd_level)lvl;
                    assert_int_equal(dvpp_csc_convert(&src, &got, &c, &scr, &err), DVPP_OK);
                    assert_memory_equal(ref.data, got.data, ref.size);
                }
                assert_memory_equal(copy, src.data, src.size);
                free(copy);
                dvpp_image_free(&src);
                dvpp_image_free(&ref);
                dvpp_image_free(&got);
            }
        }
    }
    dvpp_scratch_fini(&scr);
}

/* Hot paths at many widths, odd heights and padded strides. */
static void test_hot_paths_widths(void **state)
{
    static const dvpp_pixfmt ins[] = {DVPP_PIXEL_NV12, DVPP_PIXEL_NV21,
                                      DVPP_PIXEL_I420, DVPP_PIXEL_YVU_PLANAR_420,
                                      DVPP_PIXEL_RGB, DVPP_PIXEL_BGRA};
    static const dvpp_pixfmt outs[] = {DVPP_PIXEL_RGB, DVPP_PIXEL_BGR,
                                       DVPP_PIXEL_RGBA, DVPP_PIXEL_ARGB,
                                       DVPP_PIXEL_NV12, DVPP_PIXEL_I420,
                                       DVPP_PIXEL_GRAY, DVPP_PIXEL_BGR};
    dvpp_scratch scr;
    dvpp_err err;
    dvpp_csc c;

    (void)state;
    dvpp_scratch_init(&scr);
    dvpp_csc_init(&c);
    for (uint32_t w = 1; w <= 300; w = w < 67 ? w + 1 : w + 59) {
        for (size_t a = 0; a < 6; a++) {
            dvpp_pixfmt to = outs[rng() % 8];
            uint32_t h = 1 + 2 * (rng() % 3);
            dvpp_image src, ref, got;
            mk(&src, ins[a], w, h, rng() % 5, 0, 0);
            fill_random(src.data, src.size);
            mk(&ref, to, w, h, 6, 1, GUARD);
            mk(&got, to, w, h, 6, 1, GUARD);
            c.level = DVPP_SIMD_SCALAR;
            assert_int_equal(dvpp_csc_convert(&src, &ref, &c, &scr, &err), DVPP_OK);
            for (int lvl = DVPP_SIMD_SSE41; lvl <= (int)dvpp_cpu_detect(); lvl++) {
                memset(got.data, GUARD, got.size);
                c.level = (dvpp_simd_level)lvl;
                assert_int_equal(dvpp_csc_convert(&src, &got, &c, &scr, &err), DVPP_OK);
                assert_memory_equal(ref.data, got.data, ref.size);
            }
            check_padding(&ref);
            dvpp_image_free(&src);
            dvpp_image_free(&ref);
            dvpp_image_free(&got);
        }
    }
    dvpp_scratch_fini(&scr);
}

/* ------------------------------------------------------------------ */
/* Hand vectors and formulas                                           */
/* ------------------------------------------------------------------ */

/* Convert one 2x2 NV12 block of constant Y, U, V to RGB. */
static void nv12_pixel(uint8_t y, uint8_t u, uint8_t v, dvpp_csc_matrix m,
                       bool full, uint8_t out[3])
{
    uint8_t yuv[6] = {y, y, y, y, u, v}, rgb[12];
    dvpp_image src = {DVPP_PIXEL_NV12, 2, 2, 2, 2, yuv, sizeof(yuv)};
    dvpp_image dst = {DVPP_PIXEL_RGB, 2, 2, 6, 2, rgb, sizeof(rgb)};
    dvpp_csc c;
    dvpp_err err;

    dvpp_csc_init(&c);
    c.matrix = m;
    c.full_range = full;
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_OK);
    for (int i = 3; i < 12; i++)
        assert_int_equal(rgb[i], rgb[i % 3]);
    memcpy(out, rgb, 3);
}

static void test_hand_vectors(void **state)
{
    uint8_t o[3];

    (void)state;
    /* OpenCV: (112 * 1220542 + 2^19) >> 20 = 130. */
    nv12_pixel(128, 128, 128, DVPP_CSC_BT601, false, o);
    assert_int_equal(o[0], 130);
    assert_int_equal(o[1], 130);
    assert_int_equal(o[2], 130);
    nv12_pixel(16, 128, 128, DVPP_CSC_BT601, false, o);
    assert_int_equal(o[0] | o[1] | o[2], 0);
    nv12_pixel(0, 128, 128, DVPP_CSC_BT601, false, o); /* max(0, Y-16) */
    assert_int_equal(o[0] | o[1] | o[2], 0);
    nv12_pixel(128, 128, 128, DVPP_CSC_BT601, true, o);
    assert_int_equal(o[0], 128);
    assert_int_equal(o[2], 128);
    nv12_pixel(255, 128, 128, DVPP_CSC_BT709, true, o);
    assert_int_equal(o[1], 255);
    /* BT.601 narrow saturated red: Y=81 U=90 V=240 -> OpenCV gives
     * R = (65*1220542 + 112*1673527 + 2^19) >> 20 = 254 (saturates at 255
     * only above), G = 0 (negative), B = 0. */
    nv12_pixel(81, 90, 240, DVPP_CSC_BT601, false, o);
    assert_int_equal(o[0], (65 * 1220542 + 112 * 1673527 + (1 << 19)) >> 20);
    assert_int_equal(o[1], 0);
    assert_int_equal(o[2], 0);
    /* BT.709 narrow from the float formula: Y=100 U=150 V=200:
     * R = 1.164384*84 + 1.792741*72 = 226.87 -> 227,
     * G = 97.81 - 0.213249*22 - 0.532909*72 = 54.75 -> 55,
     * B = 97.81 + 2.112402*22 = 144.28 -> 144. */
    nv12_pixel(100, 150, 200, DVPP_CSC_BT709, false, o);
    assert_int_equal(o[0], 227);
    assert_int_equal(o[1], 55);
    assert_int_equal(o[2], 144);
    /* BT.601 full (JPEG): Y=100 U=150 V=200: R = 100 + 1.402*72 = 200.94,
     * G = 100 - 0.344136*22 - 0.714136*72 = 41.01, B = 100 + 1.772*22 =
     * 138.98. */
    nv12_pixel(100, 150, 200, DVPP_CSC_BT601, true, o);
    assert_int_equal(o[0], 201);
    assert_int_equal(o[1], 41);
    assert_int_equal(o[2], 139);
}

/* RGB -> YUV of one pixel via a 1x1 image. */
static void rgb_to(dvpp_pixfmt f, const uint8_t rgb[3], dvpp_csc_matrix m,
                   bool full, uint8_t out[4])
{
    uint8_t in[3] = {rgb[0], rgb[1], rgb[2]}, buf[16] = {0};
    dvpp_image src = {DVPP_PIXEL_RGB, 1, 1, 3, 1, in, 3};
    dvpp_image dst;
    dvpp_csc c;
    dvpp_err err;

    assert_int_equal(dvpp_image_init(&dst, f, 1, 1, 1, 1, &err), DVPP_OK);
    dst.data = buf;
    dst.size = sizeof(buf);
    dvpp_csc_init(&c);
    c.matrix = m;
    c.full_range = full;
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_OK);
    memcpy(out, buf, 4);
}

static void test_rgb_to_yuv_and_grey_vectors(void **state)
{
    static const uint8_t white[3] = {255, 255, 255}, grey[3] = {77, 77, 77};
    static const uint8_t px[3] = {200, 30, 90};
    uint8_t o[4];

    (void)state;
    rgb_to(DVPP_PIXEL_NV12, white, DVPP_CSC_BT709, false, o);
    assert_int_equal(o[0], 235);
    assert_int_equal(o[2], 128); /* NV12 1x1: Y, pad, U, V */
    assert_int_equal(o[3], 128);
    rgb_to(DVPP_PIXEL_YUV444SP, grey, DVPP_CSC_BT601, true, o);
    assert_int_equal(o[0], 77);
    assert_int_equal(o[1], 128);
    assert_int_equal(o[2], 128);
    /* OpenCV RGB2YUV_I420: Y = (269484*200 + 528482*30 + 102760*90 +
     * 2^19 + 16*2^20) >> 20, U and V likewise. */
    rgb_to(DVPP_PIXEL_YUV444SP, px, DVPP_CSC_BT601, false, o);
    assert_int_equal(o[0], (269484 * 200 + 528482 * 30 + 102760 * 90 +
                            (1 << 19) + (16 << 20)) >> 20);
    assert_int_equal(o[1], (-155188 * 200 - 305135 * 30 + 460324 * 90 +
                            (1 << 19) + (128 << 20)) >> 20);
    assert_int_equal(o[2], (460324 * 200 - 385875 * 30 - 74448 * 90 +
                            (1 << 19) + (128 << 20)) >> 20);
    /* GRAY is cv2 RGB2GRAY whatever the range; YUV400 follows the range. */
    rgb_to(DVPP_PIXEL_GRAY, px, DVPP_CSC_BT601, false, o);
    assert_int_equal(o[0], (9798 * 200 + 19235 * 30 + 3735 * 90 + 16384) >> 15);
    rgb_to(DVPP_PIXEL_YUV400, white, DVPP_CSC_BT601, false, o);
    assert_int_equal(o[0], 235);
    rgb_to(DVPP_PIXEL_YUV400, white, DVPP_CSC_BT601, true, o);
    assert_int_equal(o[0], 255);
}

/* The derived tables against the float definitions they document. */
static void test_tables_follow_their_definitions(void **state)
{
    static const double kr[2] = {0.299, 0.2126}, kb[2] = {0.114, 0.0722};

    (void)state;
    for (int m = 0; m < 2; m++) {
        for (int full = 0; full < 2; full++) {
            const dvpp__csc_coef *c = dvpp__csc_coef_get(m, full);
            double kg = 1 - kr[m] - kb[m], S = 1 << 20;
            double ys = full ? 1 : 255.0 / 219, cs = full ? 1 : 255.0 / 224;
            double tol = (m == 0 && !full) ? 0.002 * S : 1.0; /* OpenCV's 3 decimals */
            assert_true(fabs(c->cy - ys * S) <= tol);
            assert_true(fabs(c->cvr - 2 * (1 - kr[m]) * cs * S) <= tol);
            assert_true(fabs(c->cub - 2 * (1 - kb[m]) * cs * S) <= tol);
            assert_true(fabs(c->cug + 2 * kb[m] * (1 - kb[m]) / kg * cs * S) <= tol);
            assert_true(fabs(c->cvg + 2 * kr[m] * (1 - kr[m]) / kg * cs * S) <= tol);
            assert_true(fabs(c->yr - kr[m] / ys * S) <= (full ? 40 : tol));
            assert_true(fabs(c->yb - kb[m] / ys * S) <= (full ? 40 : tol));
            if (!(m == 0 && !full)) {
                assert_int_equal(c->ur + c->ug + c->ub, 0);
                assert_int_equal(c->vr + c->vg + c->vb, 0);
                assert_int_equal(c->yr + c->yg + c->yb,
                                 full ? 1 << 20 : 900542); /* round(2^20*219/255) */
            }
        }
    }
}

/* An NV12 image against OpenCV's formula written out here, so the scalar
 * reference itself is pinned (the e2e test holds it against cv2). */
static void test_nv12_scalar_is_opencv_formula(void **state)
{
    enum { W = 9, H = 5 };
    dvpp_image src, dst;
    dvpp_planes pl;
    dvpp_err err;
    dvpp_csc c;

    (void)state;
    mk(&src, DVPP_PIXEL_NV12, W, H, 4, 1, 0);
    fill_random(src.data, src.size);
    mk(&dst, DVPP_PIXEL_BGR, W, H, 0, 0, 0);
    dvpp_csc_init(&c);
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_OK);
    assert_int_equal(dvpp_image_planes(&src, &pl, &err), DVPP_OK);
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            int Y = dvpp_image_row(&src, &pl, 0, (uint32_t)y)[x];
            const uint8_t *uv = dvpp_image_row(&src, &pl, 1, (uint32_t)y / 2) + (x / 2) * 2;
            int yy = (Y > 16 ? Y - 16 : 0) * 1220542, u = uv[0] - 128, v = uv[1] - 128;
            int r = (yy + 1673527 * v + (1 << 19)) >> 20;
            int g = (yy - 852492 * v - 409993 * u + (1 << 19)) >> 20;
            int b = (yy + 2116026 * u + (1 << 19)) >> 20;
            const uint8_t *p = dst.data + (size_t)y * dst.width_stride + 3 * x;
            assert_int_equal(p[2], r < 0 ? 0 : r > 255 ? 255 : r);
            assert_int_equal(p[1], g < 0 ? 0 : g > 255 ? 255 : g);
            assert_int_equal(p[0], b < 0 ? 0 : b > 255 ? 255 : b);
        }
    }
    dvpp_image_free(&src);
    dvpp_image_free(&dst);
}

static void test_round_trip_rgb_nv12_rgb(void **state)
{
    enum { W = 67, H = 33 };
    dvpp_image rgb, nv12, back;
    dvpp_err err;
    dvpp_csc c;
    int worst = 0;

    (void)state;
    mk(&rgb, DVPP_PIXEL_RGB, W, H, 0, 0, 0);
    /* Smooth content: chroma subsampling loses little. */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int ch = 0; ch < 3; ch++)
                rgb.data[(size_t)y * rgb.width_stride + 3 * x + ch] =
                    (uint8_t)(20 + (x * (ch + 1) + y * (3 - ch)) / 2);
    mk(&nv12, DVPP_PIXEL_NV12, W, H, 0, 0, 0);
    mk(&back, DVPP_PIXEL_RGB, W, H, 0, 0, 0);
    for (int full = 0; full < 2; full++) {
        dvpp_csc_init(&c);
        c.full_range = full;
        assert_int_equal(dvpp_csc_convert(&rgb, &nv12, &c, NULL, &err), DVPP_OK);
        assert_int_equal(dvpp_csc_convert(&nv12, &back, &c, NULL, &err), DVPP_OK);
        for (size_t i = 0; i < rgb.size; i++) {
            int d = abs((int)rgb.data[i] - (int)back.data[i]);
            worst = d > worst ? d : worst;
        }
    }
    print_message("round trip worst |diff| %d\n", worst);
    assert_true(worst <= 4);
    dvpp_image_free(&rgb);
    dvpp_image_free(&nv12);
    dvpp_image_free(&back);
}

/* YUV -> YUV: replicate up, rounded mean down, alpha rules. */
static void test_yuv_resampling_and_alpha(void **state)
{
    uint8_t nv12[6] = {1, 2, 3, 4, 10, 20}, out[16], a422[8];
    /* 2x2 YUV422SP: Y rows, then a (U,V) pair per row. */
    uint8_t y422[8] = {5, 6, 7, 8, 10, 20, 13, 30};
    dvpp_image src = {DVPP_PIXEL_NV12, 2, 2, 2, 2, nv12, 6};
    dvpp_image dst = {DVPP_PIXEL_YUYV, 2, 2, 4, 2, out, 8};
    dvpp_image s422 = {DVPP_PIXEL_YUV422SP, 2, 2, 2, 2, y422, 8};
    dvpp_image d420 = {DVPP_PIXEL_NV12, 2, 2, 2, 2, a422, 6};
    uint8_t argb[8] = {9, 1, 2, 3, 8, 4, 5, 6}, rgba[8];
    dvpp_image sa = {DVPP_PIXEL_ARGB, 2, 1, 8, 1, argb, 8};
    dvpp_image da = {DVPP_PIXEL_RGBA, 2, 1, 8, 1, rgba, 8};
    dvpp_csc c;
    dvpp_err err;

    (void)state;
    dvpp_csc_init(&c);
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_OK);
    static const uint8_t yuyv[8] = {1, 10, 2, 20, 3, 10, 4, 20};
    assert_memory_equal(out, yuyv, 8);
    /* 4:2:2 -> 4:2:0: U = (10 + 13 + 1) >> 1 = 12, V = (20 + 30 + 1) >> 1 = 25. */
    assert_int_equal(dvpp_csc_convert(&s422, &d420, &c, NULL, &err), DVPP_OK);
    assert_int_equal(a422[4], 12);
    assert_int_equal(a422[5], 25);
    /* Alpha is carried when both sides have one. */
    c.alpha = 7;
    assert_int_equal(dvpp_csc_convert(&sa, &da, &c, NULL, &err), DVPP_OK);
    static const uint8_t want[8] = {1, 2, 3, 9, 4, 5, 6, 8};
    assert_memory_equal(rgba, want, 8);
    /* ... and configured otherwise. */
    sa.format = DVPP_PIXEL_RGB;
    sa.width_stride = 6;
    assert_int_equal(dvpp_csc_convert(&sa, &da, &c, NULL, &err), DVPP_OK);
    assert_int_equal(rgba[3], 7);
    assert_int_equal(rgba[7], 7);
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

static void test_errors(void **state)
{
    static const dvpp_pixfmt bad[] = {DVPP_PIXEL_YUV420SP_10BIT,
                                      DVPP_PIXEL_YVU420SP_10BIT,
                                      DVPP_PIXEL_FLOAT32, DVPP_PIXEL_UNKNOWN,
                                      (dvpp_pixfmt)12345};
    uint8_t a[64], b[64];
    dvpp_image src = {DVPP_PIXEL_RGB, 2, 2, 6, 2, a, sizeof(a)};
    dvpp_image dst = {DVPP_PIXEL_BGR, 2, 2, 6, 2, b, sizeof(b)};
    dvpp_csc c;
    dvpp_err err;

    (void)state;
    dvpp_csc_init(&c);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        for (size_t j = 0; j < N_ALL; j++) {
            assert_false(dvpp_csc_supported(bad[i], k_all[j]));
            assert_false(dvpp_csc_supported(k_all[j], bad[i]));
            src.format = bad[i];
            dst.format = k_all[j];
            assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_EFORMAT);
            src.format = k_all[j];
            dst.format = bad[i];
            assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_EFORMAT);
        }
    }
    src.format = DVPP_PIXEL_RGB;
    dst.format = DVPP_PIXEL_BGR;
    dst.width = 3;
    dst.width_stride = 9;
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "size");
    dst.width = 2;
    dst.height = 1;
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_EINVAL);
    dst.height = 2;
    dst.width_stride = 5; /* smaller than a row */
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_ESTRIDE);
    dst.width_stride = 6;
    dst.size = 11;
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_ENOSPC);
    dst.size = sizeof(b);
    c.alpha = 256;
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_EINVAL);
    c.alpha = -1;
    c.matrix = (dvpp_csc_matrix)7;
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_EINVAL);
    c.matrix = DVPP_CSC_BT601;
    dst.data = NULL;
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, NULL, &err), DVPP_EINVAL);
    assert_int_equal(dvpp_csc_convert(NULL, &dst, &c, NULL, &err), DVPP_EINVAL);
}

static void test_parse(void **state)
{
    dvpp_csc_matrix m;
    bool full = false;

    (void)state;
    assert_true(dvpp_csc_parse_matrix("bt709", &m) && m == DVPP_CSC_BT709);
    assert_true(dvpp_csc_parse_matrix("BT601", &m) && m == DVPP_CSC_BT601);
    assert_false(dvpp_csc_parse_matrix("bt2020", &m));
    assert_true(dvpp_csc_parse_range("full", &full) && full);
    assert_true(dvpp_csc_parse_range("narrow", &full) && !full);
    assert_false(dvpp_csc_parse_range("wide-ish", &full));
}

/* Fail allocation N, N+1, ... until the call succeeds: every failure is
 * DVPP_ENOMEM and leaves nothing allocated. */
static void test_allocation_failures(void **state)
{
    static const dvpp_pixfmt pairs[][2] = {
        {DVPP_PIXEL_NV12, DVPP_PIXEL_RGB}, {DVPP_PIXEL_YUYV, DVPP_PIXEL_I420},
        {DVPP_PIXEL_RGB, DVPP_PIXEL_UYVY}, {DVPP_PIXEL_YUV444SP, DVPP_PIXEL_NV21}};
    dvpp_err err;
    dvpp_csc c;

    (void)state;
    dvpp_csc_init(&c);
    test_alloc_install();
    for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++) {
        dvpp_image src, dst;
        size_t live, nomem;
        mk(&src, pairs[p][0], 33, 7, 0, 0, 0);
        fill_random(src.data, src.size);
        mk(&dst, pairs[p][1], 33, 7, 0, 0, 0);
        live = test_alloc()->live;
        nomem = 0;
        for (size_t n = 1;; n++) {
            dvpp_scratch scr;
            dvpp_status st;
            bool injected;
            dvpp_scratch_init(&scr);
            test_alloc_fail_nth(n);
            st = dvpp_csc_convert(&src, &dst, &c, (n & 1) ? &scr : NULL, &err);
            injected = test_alloc_injected();
            dvpp_scratch_fini(&scr);
            assert_int_equal(test_alloc()->live, live);
            if (!injected) {
                assert_int_equal(st, DVPP_OK);
                break;
            }
            assert_int_equal(st, DVPP_ENOMEM);
            assert_int_equal(err.status, DVPP_ENOMEM);
            nomem++;
            assert_true(n < 8);
        }
        assert_true(nomem > 0); /* the sweep injected failures at all */
        dvpp_image_free(&src);
        dvpp_image_free(&dst);
    }
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
}

/* A reused scratch allocates nothing after the first call. */
static void test_scratch_reuse(void **state)
{
    dvpp_image src, dst;
    dvpp_scratch scr;
    dvpp_err err;
    dvpp_csc c;
    size_t calls;

    (void)state;
    test_alloc_install();
    mk(&src, DVPP_PIXEL_YUYV, 64, 8, 0, 0, 0);
    mk(&dst, DVPP_PIXEL_RGB, 64, 8, 0, 0, 0);
    dvpp_scratch_init(&scr);
    dvpp_csc_init(&c);
    assert_int_equal(dvpp_csc_convert(&src, &dst, &c, &scr, &err), DVPP_OK);
    calls = test_alloc()->calls;
    for (int i = 0; i < 5; i++)
        assert_int_equal(dvpp_csc_convert(&src, &dst, &c, &scr, &err), DVPP_OK);
    assert_int_equal(test_alloc()->calls, calls);
    dvpp_scratch_fini(&scr);
    dvpp_image_free(&src);
    dvpp_image_free(&dst);
    assert_int_equal(test_alloc()->live, 0);
    test_alloc_uninstall();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yuv_rgb_kernels_equal_scalar),
        cmocka_unit_test(test_rgb_yuv_kernels_equal_scalar),
        cmocka_unit_test(test_shuffle_kernels_equal_scalar),
        cmocka_unit_test(test_yuv_rgb_every_input),
        cmocka_unit_test(test_rgb_yuv_every_input),
        cmocka_unit_test(test_dispatch_follows_active_level),
        cmocka_unit_test(test_every_pair_every_level),
        cmocka_unit_test(test_hot_paths_widths),
        cmocka_unit_test(test_hand_vectors),
        cmocka_unit_test(test_rgb_to_yuv_and_grey_vectors),
        cmocka_unit_test(test_tables_follow_their_definitions),
        cmocka_unit_test(test_nv12_scalar_is_opencv_formula),
        cmocka_unit_test(test_round_trip_rgb_nv12_rgb),
        cmocka_unit_test(test_yuv_resampling_and_alpha),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_scratch_reuse),
    };
    return cmocka_run_group_tests_name("vpc csc", tests, NULL, NULL);
}
