/* dvpp_resize: plans (coefficients in each library's own arithmetic) and
 * the row driver. Kernels live in resize_scalar.c and x86/resize_<isa>.c.
 *
 * Every coefficient is computed here, once, with the same types and the
 * same order of operations as the library a parity names (OpenCV 4.x
 * modules/imgproc/src/resize.cpp, Pillow 9.4 libImaging/Resample.c and
 * Geometry.c, TensorFlow 1 resize_bilinear_op.cc / resize_nearest_neighbor
 * with the legacy scaler), because a single ulp in a weight changes output
 * bytes. The kernels then only multiply and add. */
#include "dvpp_resize.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "dvpp_mem.h"
#include "resize_int.h"

#define MAX_SIDE 65535u

static const char *const k_interp_names[] = {"nearest", "bilinear", "bicubic", "area",
                                             "lanczos", "box",      "hamming"};
static const char *const k_parity_names[] = {"cv2", "pil", "tf", "ascend"};

#define N_INTERP (sizeof(k_interp_names) / sizeof(k_interp_names[0]))
#define N_PARITY (sizeof(k_parity_names) / sizeof(k_parity_names[0]))

const char *dvpp_interp_name(dvpp_interp i)
{
    return (unsigned)i < N_INTERP ? k_interp_names[i] : "unknown";
}

bool dvpp_interp_parse(const char *s, dvpp_interp *out)
{
    for (unsigned i = 0; s && i < N_INTERP; i++) {
        if (strcmp(s, k_interp_names[i]) == 0) {
            *out = (dvpp_interp)i;
            return true;
        }
    }
    return false;
}

const char *dvpp_parity_name(dvpp_parity p)
{
    return (unsigned)p < N_PARITY ? k_parity_names[p] : "unknown";
}

bool dvpp_parity_parse(const char *s, dvpp_parity *out)
{
    for (unsigned i = 0; s && i < N_PARITY; i++) {
        if (strcmp(s, k_parity_names[i]) == 0) {
            *out = (dvpp_parity)i;
            return true;
        }
    }
    return false;
}

bool dvpp_resize_supported(dvpp_parity parity, dvpp_interp interp)
{
    switch (parity) {
    case DVPP_PARITY_CV2:
        return interp == DVPP_INTERP_NEAREST ||
               interp == DVPP_INTERP_BILINEAR ||
               interp == DVPP_INTERP_BICUBIC || interp == DVPP_INTERP_AREA;
    case DVPP_PARITY_PIL:
        return interp == DVPP_INTERP_NEAREST ||
               interp == DVPP_INTERP_BILINEAR ||
               interp == DVPP_INTERP_BICUBIC ||
               interp == DVPP_INTERP_LANCZOS || interp == DVPP_INTERP_BOX ||
               interp == DVPP_INTERP_HAMMING;
    case DVPP_PARITY_TF:
        return interp == DVPP_INTERP_NEAREST ||
               interp == DVPP_INTERP_BILINEAR;
    default:
        return false;
    }
}

/* --- dispatch ------------------------------------------------------------ */

void dvpp__resize_kern_init(resize_kern *k, dvpp_simd_level level)
{
    k->level = DVPP_SIMD_SCALAR;
    k->nearest = dvpp__resize_nearest_scalar;
    k->cv_h = dvpp__resize_cv_h_scalar;
    k->cv_v2 = dvpp__resize_cv_v2_scalar;
    k->cv_v4 = dvpp__resize_cv_v4_scalar;
    k->pil_h = dvpp__resize_pil_h_scalar;
    k->pil_v = dvpp__resize_pil_v_scalar;
    k->area_h = dvpp__resize_area_h_scalar;
    k->area_v = dvpp__resize_area_v_scalar;
    k->area_fast = dvpp__resize_area_fast_scalar;
    k->tf_h = dvpp__resize_tf_h_scalar;
    k->tf_v = dvpp__resize_tf_v_scalar;
#if defined(__x86_64__)
    if (level >= DVPP_SIMD_SSE41) {
        k->level = DVPP_SIMD_SSE41;
        k->nearest = dvpp__resize_nearest_sse41;
        k->cv_h = dvpp__resize_cv_h_sse41;
        k->cv_v2 = dvpp__resize_cv_v2_sse41;
        k->cv_v4 = dvpp__resize_cv_v4_sse41;
        k->pil_h = dvpp__resize_pil_h_sse41;
        k->pil_v = dvpp__resize_pil_v_sse41;
        k->area_v = dvpp__resize_area_v_sse41;
        k->area_fast = dvpp__resize_area_fast_sse41;
        k->tf_v = dvpp__resize_tf_v_sse41;
    }
    if (level >= DVPP_SIMD_AVX2) {
        k->level = DVPP_SIMD_AVX2;
        k->nearest = dvpp__resize_nearest_avx2;
        k->cv_h = dvpp__resize_cv_h_avx2;
        k->cv_v2 = dvpp__resize_cv_v2_avx2;
        k->cv_v4 = dvpp__resize_cv_v4_avx2;
        k->pil_h = dvpp__resize_pil_h_avx2;
        k->pil_v = dvpp__resize_pil_v_avx2;
        k->area_h = dvpp__resize_area_h_avx2;
        k->area_v = dvpp__resize_area_v_avx2;
        k->tf_v = dvpp__resize_tf_v_avx2;
    }
    if (level >= DVPP_SIMD_AVX512) {
        k->level = DVPP_SIMD_AVX512;
        k->pil_h = dvpp__resize_pil_h_avx512;
        k->pil_v = dvpp__resize_pil_v_avx512;
        k->nearest = dvpp__resize_nearest_avx512;
        k->cv_h = dvpp__resize_cv_h_avx512;
        k->cv_v2 = dvpp__resize_cv_v2_avx512;
        k->cv_v4 = dvpp__resize_cv_v4_avx512;
        k->area_v = dvpp__resize_area_v_avx512;
        k->tf_v = dvpp__resize_tf_v_avx512;
    }
#elif defined(__aarch64__)
    if (level >= DVPP_SIMD_NEON) {
        k->level = DVPP_SIMD_NEON;
        k->nearest = dvpp__resize_nearest_neon;
        k->cv_h = dvpp__resize_cv_h_neon;
        k->cv_v2 = dvpp__resize_cv_v2_neon;
        k->cv_v4 = dvpp__resize_cv_v4_neon;
        k->pil_h = dvpp__resize_pil_h_neon;
        k->pil_v = dvpp__resize_pil_v_neon;
        k->area_h = dvpp__resize_area_h_neon;
        k->area_v = dvpp__resize_area_v_neon;
        k->area_fast = dvpp__resize_area_fast_neon;
        k->tf_h = dvpp__resize_tf_h_neon;
        k->tf_v = dvpp__resize_tf_v_neon;
    }
#else
    (void)level;
#endif
}

static pthread_once_t g_kern_once = PTHREAD_ONCE_INIT;
static resize_kern g_kern; /* dispatch table, written once */

static void kern_once(void)
{
    dvpp__resize_kern_init(&g_kern, dvpp_simd_active());
}

/* --- table layout -------------------------------------------------------- */

/* Tables are carved from one block. The first pass runs with base == NULL
 * and only measures; the second hands out 64-byte aligned pieces. */
typedef struct layout {
    uint8_t *base; /* NULL while measuring */
    size_t off;    /* bytes used so far */
} layout;

static void *lay(layout *l, size_t count, size_t elem)
{
    size_t off = (l->off + DVPP_ALIGN - 1) & ~(size_t)(DVPP_ALIGN - 1);
    l->off = off + count * elem;
    return l->base ? l->base + off : NULL;
}

static size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

static int32_t clampi(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* OpenCV's saturate_cast<short>(float): cvRound, then saturate. */
static int16_t cv_round_s16(float v)
{
    long r = lrintf(v);
    return (int16_t)(r < INT16_MIN ? INT16_MIN : r > INT16_MAX ? INT16_MAX : r);
}

/* --- OpenCV: linear, cubic, area-mode linear ----------------------------- */

/* One axis as hal::resize sees it. */
typedef struct cv_axis {
    uint32_t src_n;   /* source size along the axis */
    double scale;     /* 1. / inv_scale: src/dst, but rounded like OpenCV */
    double inv_scale; /* (double)dst / src */
    bool area_mode;   /* INTER_AREA emulated by linear (upscaling) */
    int ksize;        /* 2 (linear) or 4 (cubic) */
} cv_axis;

static cv_axis cv_axis_make(uint32_t src_n, uint32_t dst_n, bool area_mode,
                            int ksize)
{
    cv_axis a;
    a.src_n = src_n;
    a.inv_scale = (double)dst_n / src_n;
    a.scale = 1. / a.inv_scale;
    a.area_mode = area_mode;
    a.ksize = ksize;
    return a;
}

/* Source coordinate and fraction of output index @d (hal::resize). */
static void cv_coord(const cv_axis *a, uint32_t d, int *s_out, float *f_out)
{
    float f;
    int s;

    if (!a->area_mode) {
        f = (float)((d + 0.5) * a->scale - 0.5);
        s = (int)floorf(f);
        f -= (float)s;
    } else {
        s = (int)floor(d * a->scale);
        f = (float)((d + 1) - (s + 1) * a->inv_scale);
        f = f <= 0 ? 0.f : f - (float)(int)floorf(f);
    }
    *s_out = s;
    *f_out = f;
}

/* interpolateCubic with A = -0.75, in float as OpenCV writes it. */
static void cv_cubic(float x, float c[4])
{
    const float A = -0.75f;

    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = 1.f - c[0] - c[1] - c[2];
}

static void cv_weights(const cv_axis *a, float f, int16_t w[4])
{
    float cb[4];

    if (a->ksize == 4) {
        cv_cubic(f, cb);
    } else {
        cb[0] = 1.f - f;
        cb[1] = f;
    }
    for (int k = 0; k < a->ksize; k++)
        w[k] = cv_round_s16(cb[k] * 2048);
}

static uint32_t cv_htaps(const cv_axis *a)
{
    return a->src_n < (uint32_t)a->ksize ? a->src_n : (uint32_t)a->ksize;
}

/* Column @d: OpenCV clamps linear (not cubic) coordinates at the edges,
 * then every tap is clamped into the row (HResizeCubic's border loop). The
 * horizontal sums are exact integers, so taps that land on the same pixel
 * are merged and the window slides inside the row. */
static void cv_hcol(const cv_axis *a, uint32_t d, int32_t *start, int16_t *w)
{
    int n = (int)a->src_n, s, first, st, taps = (int)cv_htaps(a);
    int16_t a16[4];
    float f;

    cv_coord(a, d, &s, &f);
    if (a->ksize == 2) {
        if (s < 0) {
            s = 0;
            f = 0;
        }
        if (s >= n - 1) {
            s = n - 1;
            f = 0;
        }
    }
    cv_weights(a, f, a16);
    first = s - a->ksize / 2 + 1;
    st = clampi(first, 0, n - taps);
    memset(w, 0, (size_t)taps * sizeof(*w));
    for (int k = 0; k < a->ksize; k++)
        w[clampi(first + k, 0, n - 1) - st] += a16[k];
    *start = st;
}

/* Row @d: no coordinate clamp; each tap row is clipped on its own and the
 * weights stay as they are (the vertical rounding is not linear). */
static void cv_vrow(const cv_axis *a, uint32_t d, int32_t *row, int16_t *w)
{
    int s;
    float f;

    cv_coord(a, d, &s, &f);
    cv_weights(a, f, w);
    for (int k = 0; k < a->ksize; k++)
        row[k] = clampi(s - a->ksize / 2 + 1 + k, 0, (int)a->src_n - 1);
}

/* --- OpenCV: INTER_AREA by area weights ---------------------------------- */

/* One output cell of computeResizeAreaTab: its source pixels are
 * consecutive, from @first, @count of them. */
typedef struct cv_cell {
    double fs1;    /* cell start in source coordinates */
    double fs2;    /* cell end */
    double width;  /* cellWidth */
    int s1;        /* first whole pixel */
    int s2;        /* last pixel (partial) */
    bool left;     /* a partial pixel before s1 */
    bool right;    /* a partial pixel at s2 */
    int first;     /* first source pixel */
    int count;     /* source pixels */
} cv_cell;

static void cv_cell_at(uint32_t ssize, double scale, uint32_t d, cv_cell *c)
{
    c->fs1 = d * scale;
    c->fs2 = c->fs1 + scale;
    c->width = scale < ssize - c->fs1 ? scale : ssize - c->fs1;
    c->s1 = (int)ceil(c->fs1);
    c->s2 = (int)floor(c->fs2);
    if (c->s2 > (int)ssize - 1)
        c->s2 = (int)ssize - 1;
    if (c->s1 > c->s2)
        c->s1 = c->s2;
    c->left = c->s1 - c->fs1 > 1e-3;
    c->right = c->fs2 - c->s2 > 1e-3;
    c->first = c->left ? c->s1 - 1 : c->s1;
    c->count = (int)c->left + (c->s2 - c->s1) + (int)c->right;
}

/* The weights of cell @c in table order. */
static void cv_cell_weights(const cv_cell *c, float *w)
{
    int k = 0;

    if (c->left)
        w[k++] = (float)((c->s1 - c->fs1) / c->width);
    for (int s = c->s1; s < c->s2; s++)
        w[k++] = (float)(1.0 / c->width);
    if (c->right) {
        double r = c->fs2 - c->s2 < 1. ? c->fs2 - c->s2 : 1.;
        w[k++] = (float)((r < c->width ? r : c->width) / c->width);
    }
}

static uint32_t cv_area_taps(uint32_t ssize, uint32_t dsize, double scale)
{
    uint32_t t = 1;
    cv_cell c;

    for (uint32_t d = 0; d < dsize; d++) {
        cv_cell_at(ssize, scale, d, &c);
        if ((uint32_t)c.count > t)
            t = (uint32_t)c.count;
    }
    return t;
}

/* --- Pillow --------------------------------------------------------------- */

typedef double (*pil_filter)(double x);

static double pil_box(double x)
{
    return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
}

static double pil_bilinear(double x)
{
    if (x < 0.0)
        x = -x;
    return x < 1.0 ? 1.0 - x : 0.0;
}

static double pil_bicubic(double x)
{
    const double a = -0.5;

    if (x < 0.0)
        x = -x;
    if (x < 1.0)
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0)
        return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

/* Pillow's hamming_filter (Resample.c), support 1. */
static double pil_hamming(double x)
{
    if (x < 0.0)
        x = -x;
    if (x == 0.0)
        return 1.0;
    if (x >= 1.0)
        return 0.0;
    x = x * M_PI;
    return sin(x) / x * (0.54 + 0.46 * cos(x));
}

static double pil_sinc(double x)
{
    if (x == 0.0)
        return 1.0;
    x = x * M_PI;
    return sin(x) / x;
}

static double pil_lanczos(double x)
{
    if (-3.0 <= x && x < 3.0)
        return pil_sinc(x) * pil_sinc(x / 3);
    return 0.0;
}

/* precompute_coeffs for one axis (box = the whole source). */
typedef struct pil_axis {
    uint32_t in;        /* source size */
    double scale;       /* (in1 - in0) / out */
    double filterscale; /* max(scale, 1): antialiasing */
    double support;     /* filter support * filterscale */
    pil_filter fn;      /* the filter */
    int ksize;          /* Pillow's buffer size: ceil(support) * 2 + 1 */
} pil_axis;

static pil_axis pil_axis_make(dvpp_interp interp, uint32_t in, uint32_t out)
{
    pil_axis a;
    double support;

    switch (interp) {
    case DVPP_INTERP_BOX:
        a.fn = pil_box, support = 0.5;
        break;
    case DVPP_INTERP_BICUBIC:
        a.fn = pil_bicubic, support = 2.0;
        break;
    case DVPP_INTERP_LANCZOS:
        a.fn = pil_lanczos, support = 3.0;
        break;
    case DVPP_INTERP_HAMMING:
        a.fn = pil_hamming, support = 1.0;
        break;
    default:
        a.fn = pil_bilinear, support = 1.0;
        break;
    }
    a.in = in;
    /* box = (0, 0, w, h) as floats: in1 - in0 is a float subtraction. */
    a.scale = (double)((float)in - 0.0f) / out;
    a.filterscale = a.scale < 1.0 ? 1.0 : a.scale;
    a.support = support * a.filterscale;
    a.ksize = (int)ceil(a.support) * 2 + 1;
    return a;
}

static double pil_center(const pil_axis *a, uint32_t xx)
{
    return 0.0 + (xx + 0.5) * a->scale;
}

static void pil_bounds(const pil_axis *a, uint32_t xx, int *xmin, int *count)
{
    double center = pil_center(a, xx);
    int lo = (int)(center - a->support + 0.5);
    int hi = (int)(center + a->support + 0.5);

    if (lo < 0)
        lo = 0;
    if (hi > (int)a->in)
        hi = (int)a->in;
    *xmin = lo;
    *count = hi - lo;
}

static uint32_t pil_taps(const pil_axis *a, uint32_t out)
{
    uint32_t t = 1;
    int lo, n;

    for (uint32_t xx = 0; xx < out; xx++) {
        pil_bounds(a, xx, &lo, &n);
        if ((uint32_t)n > t)
            t = (uint32_t)n;
    }
    return t;
}

/* Weights of output @xx, normalised to their sum and then to 22-bit
 * integers (normalize_coeffs_8bpc). @tmp holds ksize doubles. */
static void pil_weights(const pil_axis *a, uint32_t xx, double *tmp,
                        int32_t *k, int *xmin, int *count)
{
    double center = pil_center(a, xx), ss = 1.0 / a->filterscale, ww = 0.0;

    pil_bounds(a, xx, xmin, count);
    for (int x = 0; x < *count; x++) {
        double w = a->fn((x + *xmin - center + 0.5) * ss);
        tmp[x] = w;
        ww += w;
    }
    for (int x = 0; x < *count; x++) {
        double v = ww != 0.0 ? tmp[x] / ww : tmp[x];
        k[x] = v < 0 ? (int32_t)(-0.5 + v * (1 << 22))
                     : (int32_t)(0.5 + v * (1 << 22));
    }
}

/* --- plan construction ----------------------------------------------------- */

typedef struct build {
    dvpp_resize_plan *p;  /* the plan being filled */
    uint32_t htaps;       /* horizontal taps (SEP) */
    uint32_t vtaps;       /* vertical taps (SEP) */
    size_t elem;          /* bytes per element of a ring row */
    cv_axis cx, cy;       /* cv2 axes */
    pil_axis px, py;      /* pil axes */
} build;

static bool pil_wants_wq(unsigned cn)
{
    return cn == 3 || cn == 4;
}

/* RESIZE_WQ: each weight repeated over the lanes of its pixel. */
static void fill_pil_wq(dvpp_resize_plan *p)
{
    const resize_tab *t = &p->h;

    memset(t->wq, 0, (size_t)t->n * t->taps * 4 * sizeof(int32_t));
    for (uint32_t x = 0; x < t->n; x++) {
        const int32_t *k = t->w32 + (size_t)x * t->taps;
        for (uint32_t j = 0; j < t->taps; j++)
            for (unsigned c = 0; c < p->cn; c++)
                RESIZE_WQ(t, x, j)[c] = k[j];
    }
}

/* Carve every table the plan's mode needs. */
static void plan_layout(build *b, layout *l)
{
    dvpp_resize_plan *p = b->p;

    if (p->mode == RESIZE_NEAREST) {
        p->nn_x = lay(l, p->dst_w, sizeof(int32_t));
        p->nn_y = lay(l, p->dst_h, sizeof(int32_t));
        return;
    }
    if (p->mode != RESIZE_SEP)
        return;
    if (p->hpass != HPASS_NONE) {
        p->h.start = lay(l, p->dst_w, sizeof(int32_t));
        if (p->hpass == HPASS_CV)
            p->h.w16 = lay(l, (size_t)p->dst_w * b->htaps, sizeof(int16_t));
        else if (p->hpass == HPASS_PIL)
            p->h.w32 = lay(l, (size_t)p->dst_w * b->htaps, sizeof(int32_t));
        if (p->hpass == HPASS_PIL && pil_wants_wq(p->cn))
            p->h.wq = lay(l, (size_t)p->dst_w * b->htaps * 4,
                          sizeof(int32_t));
        else
            p->h.wf = lay(l, (size_t)p->dst_w * b->htaps, sizeof(float));
        if (p->hpass == HPASS_TF)
            p->tf_x1 = lay(l, p->dst_w, sizeof(int32_t));
    }
    if (p->vpass != VPASS_NONE) {
        size_t n = (size_t)p->dst_h * b->vtaps;
        p->v.row = lay(l, n, sizeof(int32_t));
        if (p->vpass == VPASS_CV2 || p->vpass == VPASS_CV4)
            p->v.w16 = lay(l, n, sizeof(int16_t));
        else if (p->vpass == VPASS_PIL)
            p->v.w32 = lay(l, n, sizeof(int32_t));
        else
            p->v.wf = lay(l, n, sizeof(float));
    }
}

static void fill_nearest(dvpp_resize_plan *p)
{
    if (p->parity == DVPP_PARITY_CV2) {
        /* resizeNN: floor(x * (1 / (dst / src))) in double. */
        double ifx = 1. / ((double)p->dst_w / p->src_w);
        double ify = 1. / ((double)p->dst_h / p->src_h);
        for (uint32_t x = 0; x < p->dst_w; x++)
            p->nn_x[x] = clampi((int32_t)floor(x * ifx), 0,
                                (int32_t)p->src_w - 1) * (int32_t)p->cn;
        for (uint32_t y = 0; y < p->dst_h; y++)
            p->nn_y[y] = clampi((int32_t)floor(y * ify), 0,
                                (int32_t)p->src_h - 1);
    } else if (p->parity == DVPP_PARITY_PIL) {
        /* ImagingScaleAffine: the position is accumulated, not multiplied;
         * positions outside the image (never reached for a whole-image
         * box) are clamped instead of left black. */
        double a0 = (double)((float)p->src_w - 0.0f) / p->dst_w;
        double a4 = (double)((float)p->src_h - 0.0f) / p->dst_h;
        double xo = 0.0 + a0 * 0.5, yo = 0.0 + a4 * 0.5;
        for (uint32_t x = 0; x < p->dst_w; x++, xo += a0)
            p->nn_x[x] = clampi(xo < 0.0 ? -1 : (int32_t)xo, 0,
                                (int32_t)p->src_w - 1) * (int32_t)p->cn;
        for (uint32_t y = 0; y < p->dst_h; y++, yo += a4)
            p->nn_y[y] = clampi(yo < 0.0 ? -1 : (int32_t)yo, 0,
                                (int32_t)p->src_h - 1);
    } else {
        /* TF legacy: floorf(x * (in / (float)out)), then min(in - 1). */
        float sx = (float)p->src_w / (float)p->dst_w;
        float sy = (float)p->src_h / (float)p->dst_h;
        for (uint32_t x = 0; x < p->dst_w; x++)
            p->nn_x[x] = clampi((int32_t)floorf((float)x * sx), 0,
                                (int32_t)p->src_w - 1) * (int32_t)p->cn;
        for (uint32_t y = 0; y < p->dst_h; y++)
            p->nn_y[y] = clampi((int32_t)floorf((float)y * sy), 0,
                                (int32_t)p->src_h - 1);
    }
}

static void fill_cv(build *b)
{
    dvpp_resize_plan *p = b->p;

    for (uint32_t x = 0; x < p->dst_w; x++)
        cv_hcol(&b->cx, x, &p->h.start[x], p->h.w16 + (size_t)x * b->htaps);
    for (uint32_t y = 0; y < p->dst_h; y++)
        cv_vrow(&b->cy, y, p->v.row + (size_t)y * b->vtaps,
                p->v.w16 + (size_t)y * b->vtaps);
}

/* Rows @first .. @first + @count - 1, then the last one again for the
 * zero-weight taps that pad a window to the uniform count. */
static void pad_rows(int32_t *row, uint32_t taps, int32_t first, int count)
{
    int32_t last = count > 0 ? count - 1 : 0;

    for (uint32_t k = 0; k < taps; k++)
        row[k] = first + ((int32_t)k < last ? (int32_t)k : last);
}

static void fill_area(build *b)
{
    dvpp_resize_plan *p = b->p;
    double sx = 1. / ((double)p->dst_w / p->src_w);
    double sy = 1. / ((double)p->dst_h / p->src_h);
    cv_cell c;

    for (uint32_t x = 0; x < p->dst_w; x++) {
        float *w = p->h.wf + (size_t)x * b->htaps;
        int32_t st;
        cv_cell_at(p->src_w, sx, x, &c);
        /* Slide the window left so that padding stays inside the row;
         * the leading zeros add +0 to a +0 sum. */
        st = clampi(c.first, 0, (int32_t)p->src_w - (int32_t)b->htaps);
        if (st < 0)
            st = 0;
        memset(w, 0, b->htaps * sizeof(*w));
        cv_cell_weights(&c, w + (c.first - st));
        p->h.start[x] = st;
    }
    for (uint32_t y = 0; y < p->dst_h; y++) {
        int32_t *row = p->v.row + (size_t)y * b->vtaps;
        float *w = p->v.wf + (size_t)y * b->vtaps;
        cv_cell_at(p->src_h, sy, y, &c);
        memset(w, 0, b->vtaps * sizeof(*w));
        cv_cell_weights(&c, w);
        pad_rows(row, b->vtaps, c.first, c.count);
    }
}

static void fill_pil_h(build *b, double *tmp, int32_t *kbuf)
{
    dvpp_resize_plan *p = b->p;
    int xmin, n;

    for (uint32_t x = 0; x < p->dst_w; x++) {
        int32_t *k = p->h.w32 + (size_t)x * b->htaps, st;
        pil_weights(&b->px, x, tmp, kbuf, &xmin, &n);
        st = clampi(xmin, 0, (int32_t)p->src_w - (int32_t)b->htaps);
        if (st < 0)
            st = 0;
        memset(k, 0, b->htaps * sizeof(*k));
        memcpy(k + (xmin - st), kbuf, (size_t)n * sizeof(*k));
        p->h.start[x] = st;
    }
}

static void fill_pil_v(build *b, double *tmp, int32_t *kbuf)
{
    dvpp_resize_plan *p = b->p;
    int ymin, n;

    for (uint32_t y = 0; y < p->dst_h; y++) {
        int32_t *row = p->v.row + (size_t)y * b->vtaps;
        int32_t *k = p->v.w32 + (size_t)y * b->vtaps;
        pil_weights(&b->py, y, tmp, kbuf, &ymin, &n);
        memset(k, 0, b->vtaps * sizeof(*k));
        memcpy(k, kbuf, (size_t)n * sizeof(*k));
        pad_rows(row, b->vtaps, ymin, n);
    }
}

/* Pillow's weights for both axes. Its double weights pass through a
 * scratch of ksize doubles and ints (the larger axis), freed here. */
static dvpp_status fill_pil(build *b, dvpp_err *err)
{
    dvpp_resize_plan *p = b->p;
    int ks = b->px.ksize > b->py.ksize ? b->px.ksize : b->py.ksize;
    size_t size = (size_t)ks * (sizeof(double) + sizeof(int32_t));
    double *tmp = dvpp_malloc(size);

    if (!tmp)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL,
                            "resize: %zu bytes of coefficient scratch", size);
    if (p->hpass == HPASS_PIL) {
        fill_pil_h(b, tmp, (int32_t *)(tmp + ks));
        if (p->h.wq)
            fill_pil_wq(p);
    }
    if (p->vpass == VPASS_PIL)
        fill_pil_v(b, tmp, (int32_t *)(tmp + ks));
    dvpp_free(tmp, size);
    return DVPP_OK;
}

/* TF legacy bilinear: in = x * scale in float, lower = floor, upper =
 * min(ceil, in - 1), lerp = in - floor. */
static void tf_axis(uint32_t src, uint32_t dst, uint32_t i, int32_t *lo,
                    int32_t *hi, float *lerp)
{
    float scale = (float)src / (float)dst;
    float in = (float)i * scale;
    float in_f = floorf(in);

    *lo = (int32_t)in_f < 0 ? 0 : (int32_t)in_f;
    *hi = (int32_t)ceilf(in) > (int32_t)src - 1 ? (int32_t)src - 1
                                                : (int32_t)ceilf(in);
    *lerp = in - in_f;
}

static void fill_tf(build *b)
{
    dvpp_resize_plan *p = b->p;

    for (uint32_t x = 0; x < p->dst_w; x++)
        tf_axis(p->src_w, p->dst_w, x, &p->h.start[x], &p->tf_x1[x],
                &p->h.wf[x]);
    for (uint32_t y = 0; y < p->dst_h; y++) {
        tf_axis(p->src_h, p->dst_h, y, &p->v.row[2 * y], &p->v.row[2 * y + 1],
                &p->v.wf[2 * y]);
        p->v.wf[2 * y + 1] = p->v.wf[2 * y];
    }
}

/* Rows the vertical pass needs at once: the ring's depth. */
static uint32_t ring_depth(const dvpp_resize_plan *p)
{
    uint32_t r = 1;

    for (uint32_t y = 0; y < p->dst_h; y++) {
        const int32_t *row = p->v.row + (size_t)y * p->v.taps;
        uint32_t d = (uint32_t)(row[p->v.taps - 1] - row[0]) + 1;
        if (d > r)
            r = d;
    }
    return r;
}

/* cv2: what hal::resize does for this size and method. */
static void choose_cv(build *b)
{
    dvpp_resize_plan *p = b->p;
    double scale_x = 1. / ((double)p->dst_w / p->src_w);
    double scale_y = 1. / ((double)p->dst_h / p->src_h);
    int isx = (int)lrint(scale_x), isy = (int)lrint(scale_y);
    bool fast = fabs(scale_x - isx) < DBL_EPSILON &&
                fabs(scale_y - isy) < DBL_EPSILON;
    dvpp_interp m = p->interp;

    if (m == DVPP_INTERP_BILINEAR && fast && isx == 2 && isy == 2)
        m = DVPP_INTERP_AREA;
    if (m == DVPP_INTERP_AREA && scale_x >= 1 && scale_y >= 1) {
        if (fast) {
            p->mode = RESIZE_AREA_FAST;
            p->kx = (uint32_t)isx;
            p->ky = (uint32_t)isy;
            p->area_scale = 1.f / (float)(isx * isy);
            p->round_up = isx == 2 && isy == 2 && p->cn != 2;
            return;
        }
        p->mode = RESIZE_SEP;
        p->hpass = HPASS_AREA;
        p->vpass = VPASS_AREA;
        b->htaps = cv_area_taps(p->src_w, p->dst_w, scale_x);
        b->vtaps = cv_area_taps(p->src_h, p->dst_h, scale_y);
        b->elem = sizeof(float);
        return;
    }
    p->mode = RESIZE_SEP;
    p->hpass = HPASS_CV;
    p->vpass = m == DVPP_INTERP_BICUBIC ? VPASS_CV4 : VPASS_CV2;
    b->cx = cv_axis_make(p->src_w, p->dst_w, m == DVPP_INTERP_AREA,
                         m == DVPP_INTERP_BICUBIC ? 4 : 2);
    b->cy = cv_axis_make(p->src_h, p->dst_h, m == DVPP_INTERP_AREA,
                         m == DVPP_INTERP_BICUBIC ? 4 : 2);
    b->htaps = cv_htaps(&b->cx);
    b->vtaps = (uint32_t)b->cy.ksize;
    b->elem = sizeof(int32_t);
}

static void choose_pil(build *b)
{
    dvpp_resize_plan *p = b->p;

    p->mode = RESIZE_SEP;
    p->hpass = p->dst_w != p->src_w ? HPASS_PIL : HPASS_NONE;
    p->vpass = p->dst_h != p->src_h ? VPASS_PIL : VPASS_NONE;
    b->px = pil_axis_make(p->interp, p->src_w, p->dst_w);
    b->py = pil_axis_make(p->interp, p->src_h, p->dst_h);
    if (p->hpass == HPASS_PIL) {
        /* Pad to what the SIMD kernels step by (8 or 4 taps of one
         * channel, 4 or 2 taps of 3 or 4 channels); the zero taps must
         * still fit in the row, or the natural count is kept. */
        uint32_t t = pil_taps(&b->px, p->dst_w);
        uint32_t steps[2] = {p->cn == 1 ? 8u : 4u, p->cn == 1 ? 4u : 2u};
        b->htaps = t;
        for (int i = 1; i >= 0; i--)
            if (round_up(t, steps[i]) <= p->src_w)
                b->htaps = (uint32_t)round_up(t, steps[i]);
    }
    if (p->vpass == VPASS_PIL)
        b->vtaps = pil_taps(&b->py, p->dst_h);
    b->elem = 1;
}

static void choose(build *b)
{
    dvpp_resize_plan *p = b->p;

    if (p->src_w == p->dst_w && p->src_h == p->dst_h) {
        p->mode = RESIZE_COPY;
    } else if (p->interp == DVPP_INTERP_NEAREST) {
        p->mode = RESIZE_NEAREST;
    } else if (p->parity == DVPP_PARITY_CV2) {
        choose_cv(b);
    } else if (p->parity == DVPP_PARITY_PIL) {
        choose_pil(b);
    } else {
        p->mode = RESIZE_SEP;
        p->hpass = HPASS_TF;
        p->vpass = VPASS_TF;
        b->htaps = 1;
        b->vtaps = 2;
        b->elem = sizeof(float);
    }
}

static dvpp_status fill(build *b, dvpp_err *err)
{
    dvpp_resize_plan *p = b->p;

    p->h.n = p->dst_w;
    p->h.taps = b->htaps;
    p->v.n = p->dst_h;
    p->v.taps = b->vtaps;
    if (p->mode == RESIZE_NEAREST) {
        fill_nearest(p);
        return DVPP_OK;
    }
    if (p->mode != RESIZE_SEP)
        return DVPP_OK;
    if (p->hpass == HPASS_CV)
        fill_cv(b);
    else if (p->hpass == HPASS_AREA)
        fill_area(b);
    else if (p->hpass == HPASS_TF)
        fill_tf(b);
    else {
        dvpp_status st = fill_pil(b, err);
        if (st != DVPP_OK)
            return st;
    }
    if (p->vpass != VPASS_NONE) {
        size_t n = p->hpass == HPASS_NONE ? p->src_w : p->dst_w;
        p->ring_rows = ring_depth(p);
        p->ring_stride = round_up(n * p->cn * b->elem + RESIZE_OVERWRITE,
                                  DVPP_ALIGN);
    }
    /* OpenCV's 128-bit cubic loop covers whole groups of 8 elements. */
    p->cv4_nfloat = ((size_t)p->dst_w * p->cn) & ~(size_t)7;
    return DVPP_OK;
}

static dvpp_status check_args(dvpp_parity parity, dvpp_interp interp,
                              uint32_t src_w, uint32_t src_h, uint32_t dst_w,
                              uint32_t dst_h, unsigned channels,
                              dvpp_resize_plan **out, dvpp_err *err)
{
    if (!out)
        return dvpp_err_set(err, DVPP_EINVAL, NULL, "resize: no plan pointer");
    if (channels < 1 || channels > 4)
        return dvpp_err_set(err, DVPP_EINVAL, "channels",
                            "resize: %u channels, not 1..4", channels);
    if (src_w < 1 || src_h < 1 || src_w > MAX_SIDE || src_h > MAX_SIDE)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "resize: source %ux%u is not within 1..%u",
                            src_w, src_h, MAX_SIDE);
    if (dst_w < 1 || dst_h < 1 || dst_w > MAX_SIDE || dst_h > MAX_SIDE)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "resize: destination %ux%u is not within 1..%u",
                            dst_w, dst_h, MAX_SIDE);
    if (parity == DVPP_PARITY_ASCEND)
        return dvpp_err_set(err, DVPP_EINVAL, "parity",
                            "resize: parity 'ascend' must be resolved to "
                            "cv2 or tf before planning");
    if (!dvpp_resize_supported(parity, interp))
        return dvpp_err_set(err, DVPP_EINVAL, "interp",
                            "resize: interpolation '%s' is not available "
                            "under parity '%s'",
                            dvpp_interp_name(interp), dvpp_parity_name(parity));
    return DVPP_OK;
}

dvpp_status dvpp_resize_plan_new(dvpp_parity parity, dvpp_interp interp,
                                 uint32_t src_w, uint32_t src_h, uint32_t dst_w,
                                 uint32_t dst_h, unsigned channels,
                                 dvpp_resize_plan **out, dvpp_err *err)
{
    dvpp_status st = check_args(parity, interp, src_w, src_h, dst_w, dst_h,
                                channels, out, err);
    dvpp_resize_plan *p;
    layout l = {NULL, 0};
    build b;

    if (st != DVPP_OK)
        return st;
    p = dvpp_malloc(sizeof(*p));
    if (!p)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "resize: plan");
    memset(p, 0, sizeof(*p));
    memset(&b, 0, sizeof(b));
    p->parity = parity;
    p->interp = interp;
    p->src_w = src_w;
    p->src_h = src_h;
    p->dst_w = dst_w;
    p->dst_h = dst_h;
    p->cn = channels;
    pthread_once(&g_kern_once, kern_once);
    p->kern = g_kern;
    b.p = p;
    choose(&b);
    plan_layout(&b, &l);
    if (l.off) {
        p->mem_size = l.off;
        p->mem = dvpp_malloc(p->mem_size);
        if (!p->mem) {
            st = dvpp_err_set(err, DVPP_ENOMEM, NULL,
                              "resize: %zu bytes of tables", p->mem_size);
            goto err_free_plan;
        }
        l.base = p->mem;
        l.off = 0;
        plan_layout(&b, &l);
    }
    st = fill(&b, err);
    if (st != DVPP_OK)
        goto err_free_plan;
    *out = p;
    return DVPP_OK;

err_free_plan:
    dvpp_resize_plan_free(p);
    return st;
}

void dvpp_resize_plan_set_level(dvpp_resize_plan *p, dvpp_simd_level level)
{
    if (level > dvpp_cpu_detect())
        level = dvpp_cpu_detect();
    dvpp__resize_kern_init(&p->kern, level);
}

void dvpp_resize_plan_free(dvpp_resize_plan *p)
{
    if (!p)
        return;
    dvpp_free(p->mem, p->mem_size);
    dvpp_free(p, sizeof(*p));
}

/* --- output windows ----------------------------------------------------------- */

/* Entries [@first, @first + @n) of a table of @each elements of @size
 * bytes per output moved to its front (memmove keeps the table's
 * alignment, which an offset pointer would lose). */
static void slice(void *tab, uint32_t first, uint32_t n, size_t each, size_t size)
{
    if (tab)
        memmove(tab, (uint8_t *)tab + (size_t)first * each * size, (size_t)n * each * size);
}

/* The smallest (@lo) and largest (@hi) of @n values, then each made
 * relative to the smallest. */
static void rebase(int32_t *v, size_t n, int32_t *lo, int32_t *hi)
{
    *lo = INT32_MAX, *hi = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        *lo = v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
    for (size_t i = 0; i < n; i++)
        v[i] -= *lo;
}

static void window_nearest(dvpp_resize_plan *p, uint32_t x, uint32_t y, uint32_t w,
                           uint32_t h, uint32_t r[4])
{
    int32_t lo, hi;

    slice(p->nn_x, x, w, 1, sizeof(int32_t));
    slice(p->nn_y, y, h, 1, sizeof(int32_t));
    rebase(p->nn_x, w, &lo, &hi); /* byte offsets: whole pixels */
    r[0] = (uint32_t)lo / p->cn, r[2] = (uint32_t)(hi - lo) / p->cn + 1;
    rebase(p->nn_y, h, &lo, &hi);
    r[1] = (uint32_t)lo, r[3] = (uint32_t)(hi - lo) + 1;
}

/* The horizontal table cut to columns [x, x + w): the source columns its
 * taps read, rebased to the first. */
static void window_h(dvpp_resize_plan *p, uint32_t x, uint32_t w, uint32_t r[4])
{
    resize_tab *t = &p->h;
    int32_t lo = INT32_MAX, hi = 0;

    slice(t->start, x, w, 1, sizeof(int32_t));
    slice(t->w16, x, w, t->taps, sizeof(int16_t));
    slice(t->w32, x, w, t->taps, sizeof(int32_t));
    slice(t->wf, x, w, t->taps, sizeof(float));
    slice(t->wq, x, w, (size_t)t->taps * 4, sizeof(int32_t));
    slice(p->tf_x1, x, w, 1, sizeof(int32_t));
    for (uint32_t i = 0; i < w; i++) {
        int32_t end = p->tf_x1 ? p->tf_x1[i] + 1 : t->start[i] + (int32_t)t->taps;
        lo = t->start[i] < lo ? t->start[i] : lo;
        hi = end > hi ? end : hi;
    }
    /* A source narrower than the taps: windows pass its end (zero taps,
     * within the over-read); the rectangle stays inside the source. */
    if (hi > (int32_t)p->src_w)
        hi = (int32_t)p->src_w;
    for (uint32_t i = 0; i < w; i++) {
        t->start[i] -= lo;
        if (p->tf_x1)
            p->tf_x1[i] -= lo;
    }
    t->n = w;
    r[0] = (uint32_t)lo, r[2] = (uint32_t)(hi - lo);
}

static void window_v(dvpp_resize_plan *p, uint32_t y, uint32_t h, uint32_t r[4])
{
    resize_vtab *t = &p->v;
    int32_t lo, hi;

    slice(t->row, y, h, t->taps, sizeof(int32_t));
    slice(t->w16, y, h, t->taps, sizeof(int16_t));
    slice(t->w32, y, h, t->taps, sizeof(int32_t));
    slice(t->wf, y, h, t->taps, sizeof(float));
    rebase(t->row, (size_t)h * t->taps, &lo, &hi);
    t->n = h;
    r[1] = (uint32_t)lo, r[3] = (uint32_t)(hi - lo) + 1;
}

dvpp_status dvpp_resize_plan_window(dvpp_resize_plan *p, uint32_t x, uint32_t y,
                                    uint32_t w, uint32_t h, dvpp_err *err)
{
    uint32_t r[4] = {x, y, w, h}; /* the source rectangle read */

    if (!p || p->windowed || w < 1 || h < 1 || x >= p->dst_w || y >= p->dst_h ||
        w > p->dst_w - x || h > p->dst_h - y)
        return dvpp_err_set(err, DVPP_EINVAL, "window",
                            "resize: window %u,%u %ux%u is not inside the %ux%u "
                            "output of an unwindowed plan", x, y, w, h,
                            p ? p->dst_w : 0, p ? p->dst_h : 0);
    switch (p->mode) {
    case RESIZE_COPY:
        break;
    case RESIZE_AREA_FAST: /* whole kx x ky blocks */
        r[0] = x * p->kx, r[1] = y * p->ky, r[2] = w * p->kx, r[3] = h * p->ky;
        break;
    case RESIZE_NEAREST:
        window_nearest(p, x, y, w, h, r);
        break;
    default:
        if (p->hpass != HPASS_NONE)
            window_h(p, x, w, r);
        if (p->vpass != VPASS_NONE)
            window_v(p, y, h, r);
        /* OpenCV's float elements are those before nf of the whole row. */
        if (p->vpass == VPASS_CV4) {
            size_t skip = (size_t)x * p->cn, n = (size_t)w * p->cn;
            p->cv4_nfloat = p->cv4_nfloat > skip ? p->cv4_nfloat - skip : 0;
            p->cv4_nfloat = p->cv4_nfloat < n ? p->cv4_nfloat : n;
        }
        break;
    }
    p->dst_w = w, p->dst_h = h;
    p->src_x0 = r[0], p->src_y0 = r[1];
    p->src_w = r[2], p->src_h = r[3];
    if (p->mode == RESIZE_SEP && p->vpass != VPASS_NONE)
        p->ring_rows = ring_depth(p);
    p->windowed = true;
    return DVPP_OK;
}

void dvpp_resize_plan_source(const dvpp_resize_plan *p, uint32_t *x, uint32_t *y,
                             uint32_t *w, uint32_t *h)
{
    if (x)
        *x = p->src_x0;
    if (y)
        *y = p->src_y0;
    if (w)
        *w = p->src_w;
    if (h)
        *h = p->src_h;
}

dvpp_status dvpp_resize_window_source(dvpp_parity parity, dvpp_interp interp,
                                      uint32_t src_w, uint32_t src_h, uint32_t dst_w,
                                      uint32_t dst_h, unsigned channels, uint32_t x,
                                      uint32_t y, uint32_t w, uint32_t h,
                                      uint32_t rect[4], dvpp_err *err)
{
    dvpp_resize_plan *p = NULL;
    dvpp_status st = dvpp_resize_plan_new(parity, interp, src_w, src_h, dst_w, dst_h,
                                          channels, &p, err);

    if (st == DVPP_OK)
        st = dvpp_resize_plan_window(p, x, y, w, h, err);
    if (st == DVPP_OK)
        dvpp_resize_plan_source(p, &rect[0], &rect[1], &rect[2], &rect[3]);
    dvpp_resize_plan_free(p);
    return st;
}

/* --- running ----------------------------------------------------------------- */

/* Source rows as kernels see them. SIMD kernels may read RESIZE_OVERREAD
 * bytes past a row; the rows near the end of the plane, where that could
 * leave the caller's buffer, are copied into a padded row first. */
typedef struct src_rows {
    dvpp_resize_row_fn fn; /* producer of rows, or NULL: read base */
    void *ctx;             /* its context */
    const uint8_t *base;   /* first row */
    size_t stride;         /* bytes between rows */
    size_t row_bytes;      /* width * channels */
    uint32_t first_copy;   /* rows from here on are read through @pad */
    uint8_t *pad;          /* row_bytes + RESIZE_OVERREAD bytes */
} src_rows;

static const uint8_t *src_row(const src_rows *s, uint32_t y)
{
    const uint8_t *r;

    if (s->fn) /* produced into the padded row: over-reads stay inside */
        return s->fn(s->ctx, y, s->pad);
    r = s->base + (size_t)y * s->stride;
    if (y < s->first_copy)
        return r;
    memcpy(s->pad, r, s->row_bytes);
    return s->pad;
}

static dvpp_status src_rows_init(src_rows *s, const dvpp_resize_plan *p,
                                 const uint8_t *src, size_t stride,
                                 dvpp_scratch *scratch, dvpp_err *err)
{
    size_t n;

    s->fn = NULL;
    s->ctx = NULL;
    s->base = src;
    s->stride = stride;
    s->row_bytes = (size_t)p->src_w * p->cn;
    /* (h - 1 - y) * stride < OVERREAD: the over-read could pass the end. */
    n = stride ? (RESIZE_OVERREAD + stride - 1) / stride : p->src_h;
    s->first_copy = n >= p->src_h ? 0 : p->src_h - (uint32_t)n;
    s->pad = dvpp_scratch_get(scratch, 2, s->row_bytes + RESIZE_OVERREAD);
    if (!s->pad)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "resize: scratch row");
    /* Defined bytes past the row: they meet zero weights only. */
    memset(s->pad + s->row_bytes, 0, RESIZE_OVERREAD);
    return DVPP_OK;
}

/* Where output rows go: the destination plane, or one row buffer handed
 * to a sink as soon as it is complete (so a consumer, e.g. normalisation,
 * takes each row while it is still in L1). */
typedef struct dst_rows {
    uint8_t *base;
    size_t stride;
    dvpp_resize_row_sink sink; /* NULL: rows stay in the plane */
    void *ctx;
    uint8_t *row;              /* the sink's row buffer */
} dst_rows;

static inline uint8_t *drow(const dst_rows *d, uint32_t y)
{
    return d->sink ? d->row : d->base + (size_t)y * d->stride;
}

static inline void ddone(const dst_rows *d, uint32_t y)
{
    if (d->sink)
        d->sink(d->ctx, y, d->row);
}

static void run_copy(const dvpp_resize_plan *p, const uint8_t *src,
                     size_t src_stride, const dst_rows *d)
{
    for (uint32_t y = 0; y < p->dst_h; y++) {
        memcpy(drow(d, y), src + (size_t)y * src_stride, (size_t)p->dst_w * p->cn);
        ddone(d, y);
    }
}

static void run_nearest(const dvpp_resize_plan *p, const src_rows *s,
                        const dst_rows *d)
{
    size_t row = (size_t)p->dst_w * p->cn;

    for (uint32_t y = 0; y < p->dst_h; y++) {
        /* Upscaling repeats rows: the sink's buffer still holds it. */
        if (y > 0 && p->nn_y[y] == p->nn_y[y - 1]) {
            if (!d->sink)
                memcpy(drow(d, y), drow(d, y - 1), row);
        } else {
            p->kern.nearest(src_row(s, (uint32_t)p->nn_y[y]), drow(d, y),
                            p->nn_x, p->dst_w, p->cn);
        }
        ddone(d, y);
    }
}

static void run_area_fast(const dvpp_resize_plan *p, const uint8_t *src,
                          size_t src_stride, const dst_rows *d)
{
    for (uint32_t y = 0; y < p->dst_h; y++) {
        p->kern.area_fast(src + (size_t)y * p->ky * src_stride, src_stride,
                          drow(d, y), p->dst_w, p->cn, p->kx, p->ky,
                          p->area_scale, p->round_up);
        ddone(d, y);
    }
}

/* One source row through the horizontal pass into @out. */
static void hpass_row(const dvpp_resize_plan *p, const uint8_t *s, void *out)
{
    switch (p->hpass) {
    case HPASS_CV:
        p->kern.cv_h(s, out, &p->h, p->cn);
        break;
    case HPASS_PIL:
        p->kern.pil_h(s, out, &p->h, p->cn);
        break;
    case HPASS_AREA:
        p->kern.area_h(s, out, &p->h, p->cn);
        break;
    case HPASS_TF:
        p->kern.tf_h(s, out, p->h.start, p->tf_x1, p->h.wf, p->dst_w, p->cn);
        break;
    default:
        break;
    }
}

/* Output row @y from the rows in @rows (one per tap). */
static void vpass_row(const dvpp_resize_plan *p, const void *const *rows,
                      uint32_t y, uint8_t *d)
{
    size_t n = (size_t)p->dst_w * p->cn, k = (size_t)y * p->v.taps;

    switch (p->vpass) {
    case VPASS_CV2:
        p->kern.cv_v2(rows[0], rows[1], p->v.w16 + k, d, n);
        break;
    case VPASS_CV4:
        p->kern.cv_v4((const int32_t *const *)rows, p->v.w16 + k, d, n,
                      p->cv4_nfloat);
        break;
    case VPASS_PIL:
        p->kern.pil_v((const uint8_t *const *)rows, p->v.w32 + k, p->v.taps,
                      d, n);
        break;
    case VPASS_AREA:
        p->kern.area_v((const float *const *)rows, p->v.wf + k, p->v.taps, d,
                       n);
        break;
    case VPASS_TF:
        p->kern.tf_v(rows[0], rows[1], p->v.wf[k], d, n);
        break;
    default:
        break;
    }
}

/* Separable: each needed source row goes through the horizontal pass once,
 * into a ring deep enough for the widest vertical window (windows only
 * move down, so a row is never needed again once it leaves the ring). */
static dvpp_status run_sep(const dvpp_resize_plan *p, const src_rows *s,
                           const dst_rows *d, dvpp_scratch *scratch,
                           dvpp_err *err)
{
    const void **ptrs;
    uint8_t *ring = NULL;
    int32_t next = 0;

    if (p->vpass == VPASS_NONE) {
        for (uint32_t y = 0; y < p->dst_h; y++) {
            hpass_row(p, src_row(s, y), drow(d, y));
            ddone(d, y);
        }
        return DVPP_OK;
    }
    ptrs = dvpp_scratch_get(scratch, 1, p->v.taps * sizeof(*ptrs));
    if (p->hpass != HPASS_NONE)
        ring = dvpp_scratch_get(scratch, 0, p->ring_rows * p->ring_stride);
    if (!ptrs || (p->hpass != HPASS_NONE && !ring))
        return dvpp_err_set(err, DVPP_ENOMEM, NULL,
                            "resize: %u ring rows of %zu bytes", p->ring_rows,
                            p->ring_stride);
    for (uint32_t y = 0; y < p->dst_h; y++) {
        const int32_t *rows = p->v.row + (size_t)y * p->v.taps;
        int32_t hi = rows[p->v.taps - 1];
        if (p->hpass == HPASS_NONE) {
            for (uint32_t k = 0; k < p->v.taps; k++)
                ptrs[k] = s->base + (size_t)rows[k] * s->stride;
        } else {
            for (int32_t r = next > rows[0] ? next : rows[0]; r <= hi; r++)
                hpass_row(p, src_row(s, (uint32_t)r),
                          ring + (size_t)((uint32_t)r % p->ring_rows) *
                                     p->ring_stride);
            if (hi + 1 > next)
                next = hi + 1;
            for (uint32_t k = 0; k < p->v.taps; k++)
                ptrs[k] = ring + (size_t)((uint32_t)rows[k] % p->ring_rows) *
                                     p->ring_stride;
        }
        vpass_row(p, ptrs, y, drow(d, y));
        ddone(d, y);
    }
    return DVPP_OK;
}

/* Every mode from a source plane into @d. */
static dvpp_status run_plane(const dvpp_resize_plan *p, const uint8_t *src,
                             size_t src_stride, const dst_rows *d,
                             dvpp_scratch *scratch, dvpp_err *err)
{
    dvpp_status st;
    src_rows s;

    switch (p->mode) {
    case RESIZE_COPY:
        run_copy(p, src, src_stride, d);
        return DVPP_OK;
    case RESIZE_AREA_FAST:
        run_area_fast(p, src, src_stride, d);
        return DVPP_OK;
    default:
        break;
    }
    st = src_rows_init(&s, p, src, src_stride, scratch, err);
    if (st != DVPP_OK)
        return st;
    if (p->mode == RESIZE_NEAREST) {
        run_nearest(p, &s, d);
        return DVPP_OK;
    }
    return run_sep(p, &s, d, scratch, err);
}

dvpp_status dvpp_resize_run(const dvpp_resize_plan *p, const uint8_t *src,
                            size_t src_stride, uint8_t *dst, size_t dst_stride,
                            dvpp_scratch *scratch, dvpp_err *err)
{
    if (!p || !src || !dst || !scratch)
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "resize: plan, planes and scratch are required");
    if ((p->src_h > 1 && src_stride < (size_t)p->src_w * p->cn) ||
        (p->dst_h > 1 && dst_stride < (size_t)p->dst_w * p->cn))
        return dvpp_err_set(err, DVPP_EINVAL, "stride",
                            "resize: stride shorter than a row");
    return run_plane(p, src, src_stride, &(dst_rows){dst, dst_stride, NULL, NULL,
                                                    NULL},
                     scratch, err);
}

bool dvpp_resize_plan_streams(const dvpp_resize_plan *p)
{
    return p && (p->mode == RESIZE_NEAREST ||
                 (p->mode != RESIZE_COPY && p->mode != RESIZE_AREA_FAST &&
                  p->hpass != HPASS_NONE));
}

dvpp_status dvpp_resize_run_rows(const dvpp_resize_plan *p,
                                 dvpp_resize_row_fn fn, void *ctx, uint8_t *dst,
                                 size_t dst_stride, dvpp_scratch *scratch,
                                 dvpp_err *err)
{
    dvpp_status st;
    src_rows s;

    if (!fn || !dst || !scratch || !dvpp_resize_plan_streams(p))
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "resize: this plan cannot run from a row producer");
    if (p->dst_h > 1 && dst_stride < (size_t)p->dst_w * p->cn)
        return dvpp_err_set(err, DVPP_EINVAL, "stride",
                            "resize: stride shorter than a row");
    /* The producer writes into the padded scratch row: no plane to guard. */
    st = src_rows_init(&s, p, dst, 0, scratch, err);
    if (st != DVPP_OK)
        return st;
    s.fn = fn;
    s.ctx = ctx;
    s.base = NULL;
    if (p->mode == RESIZE_NEAREST) {
        run_nearest(p, &s, &(dst_rows){dst, dst_stride, NULL, NULL, NULL});
        return DVPP_OK;
    }
    return run_sep(p, &s, &(dst_rows){dst, dst_stride, NULL, NULL, NULL}, scratch,
                   err);
}

dvpp_status dvpp_resize_run_sink(const dvpp_resize_plan *p, const uint8_t *src,
                                 size_t src_stride, dvpp_resize_row_fn fn,
                                 void *fn_ctx, dvpp_resize_row_sink sink,
                                 void *sink_ctx, dvpp_scratch *scratch,
                                 dvpp_err *err)
{
    dst_rows d = {NULL, 0, sink, sink_ctx, NULL};
    dvpp_status st;
    src_rows s;

    if (!p || !sink || !scratch || (!src && !fn) ||
        (fn && !dvpp_resize_plan_streams(p)))
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "resize: a sink run needs a plan, a sink, scratch "
                            "and a source (a row producer needs a streaming plan)");
    d.row = dvpp_scratch_get(scratch, 3, (size_t)p->dst_w * p->cn + RESIZE_OVERREAD);
    if (!d.row)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "resize: sink row");
    if (!fn)
        return run_plane(p, src, src_stride, &d, scratch, err);
    st = src_rows_init(&s, p, NULL, 0, scratch, err);
    if (st != DVPP_OK)
        return st;
    s.fn = fn;
    s.ctx = fn_ctx;
    if (p->mode == RESIZE_NEAREST) {
        run_nearest(p, &s, &d);
        return DVPP_OK;
    }
    return run_sep(p, &s, &d, scratch, err);
}
