/* dvpp_border: make-border with cv2.copyMakeBorder's rules.
 *
 * Each plane is bordered as OpenCV's copyMakeBorder_8u does it: the
 * source rows are copied into the middle of their destination rows with
 * the left and right margins filled (a constant, or pixels chosen by
 * border_index()), then every top and bottom row is either the constant
 * or a copy of an already finished middle row chosen by the same rule.
 * Planar and semi-planar chroma planes take the margins divided by their
 * subsampling; packed 4:2:2 rows place luma per pixel and chroma per pair.
 */
#include "dvpp_border.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "csc_int.h"

/* ---------------------------------------------------------------------
 * Kernels and their tables.
 * ------------------------------------------------------------------- */

void dvpp__fill_scalar(uint8_t *dst, size_t n, const uint8_t *px, unsigned cn)
{
    for (size_t i = 0; i < n; i++)
        for (unsigned c = 0; c < cn; c++)
            dst[i * cn + c] = px[c];
}

void dvpp__border_kern_init(dvpp__border_kern *k, dvpp_simd_level level)
{
    k->level = DVPP_SIMD_SCALAR;
    k->fill = dvpp__fill_scalar;
#if defined(__x86_64__)
    if (level >= DVPP_SIMD_SSE41) {
        k->level = DVPP_SIMD_SSE41;
        k->fill = dvpp__fill_sse41;
    }
    if (level >= DVPP_SIMD_AVX2) {
        k->level = DVPP_SIMD_AVX2;
        k->fill = dvpp__fill_avx2;
    }
    if (level >= DVPP_SIMD_AVX512) {
        k->level = DVPP_SIMD_AVX512;
        k->fill = dvpp__fill_avx512;
    }
#elif defined(__aarch64__)
    if (level >= DVPP_SIMD_NEON) {
        k->level = DVPP_SIMD_NEON;
        k->fill = dvpp__fill_neon;
    }
#else
    (void)level;
#endif
}

static pthread_once_t g_border_once = PTHREAD_ONCE_INIT;
static dvpp__border_kern g_border[DVPP_SIMD_LEVELS]; /* written once */

static void border_once(void)
{
    for (int l = DVPP_SIMD_SCALAR; l < DVPP_SIMD_LEVELS; l++)
        dvpp__border_kern_init(&g_border[l], (dvpp_simd_level)l);
}

const dvpp__border_kern *dvpp__border_kern_get(dvpp_simd_level level)
{
    dvpp_simd_level active = dvpp_simd_active();

    pthread_once(&g_border_once, border_once);
    if ((int)level < DVPP_SIMD_SCALAR || level > active)
        level = active;
    return &g_border[level];
}

/* ---------------------------------------------------------------------
 * Index rules.
 * ------------------------------------------------------------------- */

bool dvpp_border_type_parse(const char *s, dvpp_border_type *out)
{
    static const struct {
        const char *name;
        dvpp_border_type type;
    } names[] = {
        {"constant", DVPP_BORDER_CONSTANT},
        {"replicate", DVPP_BORDER_REPLICATE},
        {"reflect", DVPP_BORDER_REFLECT},
        {"reflect101", DVPP_BORDER_REFLECT_101},
        {"reflect_101", DVPP_BORDER_REFLECT_101},
    };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(s, names[i].name) == 0) {
            *out = names[i].type;
            return true;
        }
    }
    return false;
}

/* OpenCV's borderInterpolate for the non-constant types. Its loop
 * reflects at both ends until the index lands inside, which is periodic
 * (2*len for REFLECT, 2*len-2 for REFLECT_101), so margins far wider than
 * the image cost one modulo instead of a loop. */
static uint32_t border_index(int64_t p, int64_t len, dvpp_border_type t)
{
    int64_t per, q;

    if (p >= 0 && p < len)
        return (uint32_t)p;
    if (t == DVPP_BORDER_REPLICATE)
        return p < 0 ? 0 : (uint32_t)(len - 1);
    if (len == 1)
        return 0;
    per = t == DVPP_BORDER_REFLECT ? 2 * len : 2 * len - 2;
    q = ((p % per) + per) % per;
    if (t == DVPP_BORDER_REFLECT)
        return (uint32_t)(q < len ? q : per - 1 - q);
    return (uint32_t)(q < len ? q : per - q);
}

/* cv::Scalar -> u8: cvRound (to nearest, ties to even) then saturate;
 * NaN becomes 0 as cvRound's INT_MIN does. */
static uint8_t scalar_u8(double v)
{
    if (isnan(v) || v <= 0.0)
        return 0;
    if (v >= 255.0)
        return 255;
    return (uint8_t)lrint(v);
}

/* ---------------------------------------------------------------------
 * One plane.
 * ------------------------------------------------------------------- */

typedef struct bplane {
    const uint8_t *src; /* first source row */
    size_t sstride;     /* source bytes per row */
    uint8_t *dst;       /* first destination row */
    size_t dstride;     /* destination bytes per row */
    uint32_t w;         /* source pixels per row */
    uint32_t h;         /* source rows */
    unsigned cn;        /* bytes per pixel */
    uint32_t top;       /* margins of this plane, in its own pixels */
    uint32_t bottom;
    uint32_t left;
    uint32_t right;
    uint8_t px[4];      /* CONSTANT pixel */
} bplane;

static void copy_px(uint8_t *d, const uint8_t *s, unsigned cn)
{
    for (unsigned c = 0; c < cn; c++)
        d[c] = s[c];
}

/* The middle rows: source copy plus left and right margins. */
static void middle_rows(const bplane *p, dvpp_border_type t,
                        const dvpp__border_kern *k)
{
    const unsigned cn = p->cn;

    for (uint32_t i = 0; i < p->h; i++) {
        const uint8_t *s = p->src + (size_t)i * p->sstride;
        uint8_t *d = p->dst + (size_t)(p->top + i) * p->dstride;
        uint8_t *r = d + ((size_t)p->left + p->w) * cn;

        memcpy(d + (size_t)p->left * cn, s, (size_t)p->w * cn);
        if (t == DVPP_BORDER_CONSTANT) {
            k->fill(d, p->left, p->px, cn);
            k->fill(r, p->right, p->px, cn);
            continue;
        }
        for (uint32_t x = 0; x < p->left; x++)
            copy_px(d + (size_t)x * cn,
                    s + (size_t)border_index((int64_t)x - p->left, p->w, t) * cn,
                    cn);
        for (uint32_t x = 0; x < p->right; x++)
            copy_px(r + (size_t)x * cn,
                    s + (size_t)border_index((int64_t)p->w + x, p->w, t) * cn,
                    cn);
    }
}

/* Destination row @i (outside the middle) from the rule. */
static void outer_row(const bplane *p, uint32_t i, int64_t src_row,
                      dvpp_border_type t, const dvpp__border_kern *k)
{
    size_t dw = (size_t)p->left + p->w + p->right;
    uint8_t *d = p->dst + (size_t)i * p->dstride;

    if (t == DVPP_BORDER_CONSTANT) {
        k->fill(d, dw, p->px, p->cn);
        return;
    }
    memcpy(d, p->dst + (size_t)(p->top + border_index(src_row, p->h, t)) * p->dstride,
           dw * p->cn);
}

static void border_plane(const bplane *p, dvpp_border_type t,
                         const dvpp__border_kern *k)
{
    middle_rows(p, t, k);
    for (uint32_t i = 0; i < p->top; i++)
        outer_row(p, i, (int64_t)i - p->top, t, k);
    for (uint32_t i = 0; i < p->bottom; i++)
        outer_row(p, p->top + p->h + i, (int64_t)p->h + i, t, k);
}

/* ---------------------------------------------------------------------
 * Formats.
 * ------------------------------------------------------------------- */

typedef struct border_job {
    const dvpp_image *src;
    dvpp_image *dst;
    const dvpp_pixfmt_info *fi;
    dvpp_planes ps;      /* source planes */
    dvpp_planes pd;      /* destination planes */
    const dvpp_border *b;
    const dvpp__border_kern *k;
    uint8_t v[4];        /* the constant, rounded */
} border_job;

static bplane plane_of(const border_job *j, int i, unsigned cn, uint32_t w,
                       uint32_t h, unsigned sx, unsigned sy)
{
    bplane p = {j->src->data + j->ps.p[i].offset, j->ps.p[i].stride,
                j->dst->data + j->pd.p[i].offset, j->pd.p[i].stride,
                w, h, cn, j->b->top >> sy, j->b->bottom >> sy,
                j->b->left >> sx, j->b->right >> sx, {0, 0, 0, 0}};
    return p;
}

/* Which bytes of the packed 4:2:2 pair hold Y0, U, Y1, V. */
static void pk422_offsets(dvpp_pixfmt f, unsigned off[4])
{
    static const unsigned tab[4][4] = {
        {0, 1, 2, 3}, /* YUYV */
        {1, 0, 3, 2}, /* UYVY */
        {0, 3, 2, 1}, /* YVYU */
        {1, 2, 3, 0}, /* VYUY */
    };
    memcpy(off, tab[f - DVPP_PIXEL_YUYV], sizeof(tab[0]));
}

/* Packed 4:2:2: each middle row is built per pixel (Y) and per pair
 * (U, V, half the margins); an odd final pair repeats its Y. */
static void border_pk422(const border_job *j)
{
    const dvpp_border *b = j->b;
    const dvpp_border_type t = b->type;
    uint32_t w = j->src->width, h = j->src->height, cw = (w + 1) / 2;
    uint32_t dw = j->dst->width, dcw = (dw + 1) / 2;
    unsigned off[4];
    bplane rows = plane_of(j, 0, 4, cw, h, 0, 0);

    pk422_offsets(j->src->format, off);
    for (uint32_t i = 0; i < h; i++) {
        const uint8_t *s = rows.src + (size_t)i * rows.sstride;
        uint8_t *d = rows.dst + (size_t)(b->top + i) * rows.dstride;
        for (uint32_t x = 0; x < dw; x++) {
            int64_t sx = (int64_t)x - b->left;
            uint8_t y = j->v[0];
            if (t != DVPP_BORDER_CONSTANT || (sx >= 0 && sx < w)) {
                uint32_t q = border_index(sx, w, t);
                y = s[(q >> 1) * 4 + off[(q & 1) ? 2 : 0]];
            }
            d[(x >> 1) * 4 + off[(x & 1) ? 2 : 0]] = y;
        }
        if (dw & 1)
            d[(dw >> 1) * 4 + off[2]] = d[(dw >> 1) * 4 + off[0]];
        for (uint32_t k = 0; k < dcw; k++) {
            int64_t sk = (int64_t)k - b->left / 2;
            uint8_t u = j->v[1], v = j->v[2];
            if (t != DVPP_BORDER_CONSTANT || (sk >= 0 && sk < cw)) {
                uint32_t q = border_index(sk, cw, t);
                u = s[q * 4 + off[1]];
                v = s[q * 4 + off[3]];
            }
            d[k * 4 + off[1]] = u;
            d[k * 4 + off[3]] = v;
        }
    }
    rows.w = dcw; /* outer rows copy whole pairs of finished rows */
    rows.left = rows.right = 0;
    if (t == DVPP_BORDER_CONSTANT) {
        uint8_t px[4];
        px[off[0]] = px[off[2]] = j->v[0];
        px[off[1]] = j->v[1];
        px[off[3]] = j->v[2];
        memcpy(rows.px, px, 4);
    }
    for (uint32_t i = 0; i < b->top; i++)
        outer_row(&rows, i, (int64_t)i - b->top, t, j->k);
    for (uint32_t i = 0; i < b->bottom; i++)
        outer_row(&rows, b->top + h + i, (int64_t)h + i, t, j->k);
}

/* Planar and semi-planar YUV: luma with the margins, chroma with them
 * divided by the subsampling. */
static void border_yuv_planes(const border_job *j)
{
    const dvpp_pixfmt_info *fi = j->fi;
    const dvpp_pixfmt f = j->src->format;
    uint32_t w = j->src->width, h = j->src->height;
    uint32_t cw = (w + fi->chroma_sx) >> fi->chroma_sx;
    uint32_t ch = (h + fi->chroma_sy) >> fi->chroma_sy;
    bool v_first = f == DVPP_PIXEL_NV21 || f == DVPP_PIXEL_YVU422SP ||
                   f == DVPP_PIXEL_YVU444SP || f == DVPP_PIXEL_YVU440SP ||
                   f == DVPP_PIXEL_YVU_PLANAR_420;
    bplane p = plane_of(j, 0, 1, w, h, 0, 0);

    p.px[0] = j->v[0];
    border_plane(&p, j->b->type, j->k);
    if (fi->planes == 2) {
        p = plane_of(j, 1, 2, cw, ch, fi->chroma_sx, fi->chroma_sy);
        p.px[0] = j->v[v_first ? 2 : 1];
        p.px[1] = j->v[v_first ? 1 : 2];
        border_plane(&p, j->b->type, j->k);
        return;
    }
    for (int i = 1; i <= 2; i++) {
        p = plane_of(j, i, 1, cw, ch, fi->chroma_sx, fi->chroma_sy);
        /* Plane 1 is U for I420 and V for YV12. */
        p.px[0] = j->v[(i == 1) != v_first ? 1 : 2];
        border_plane(&p, j->b->type, j->k);
    }
}

dvpp_status dvpp_border_check(const dvpp_image *src, const dvpp_image *dst,
                              const dvpp_border *b, dvpp_err *err)
{
    const dvpp_pixfmt_info *fi;
    uint64_t dw, dh;

    if (!src || !dst || !b)
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "make-border needs a source, a destination and "
                            "options");
    fi = dvpp_pixfmt_get(src->format);
    if (!fi)
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "make-border does not support %s pixels",
                            dvpp_pixfmt_name(src->format));
    if (dst->format != src->format)
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "make-border keeps the format: source %s, "
                            "destination %s",
                            fi->name, dvpp_pixfmt_name(dst->format));
    if ((unsigned)b->type > DVPP_BORDER_REFLECT_101)
        return dvpp_err_set(err, DVPP_EINVAL, "border_type",
                            "unknown border type %d", (int)b->type);
    if ((fi->chroma_sx && (b->left % 2 || b->right % 2)) ||
        (fi->chroma_sy && (b->top % 2 || b->bottom % 2)))
        return dvpp_err_set(err, DVPP_EINVAL, "margins",
                            "%s has subsampled chroma: margins must be even "
                            "on that axis, got top %u bottom %u left %u "
                            "right %u",
                            fi->name, b->top, b->bottom, b->left, b->right);
    dw = (uint64_t)src->width + b->left + b->right;
    dh = (uint64_t)src->height + b->top + b->bottom;
    if (dst->width != dw || dst->height != dh)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "a %ux%u image with margins %u,%u,%u,%u needs a "
                            "%llux%llu destination, got %ux%u",
                            src->width, src->height, b->top, b->bottom,
                            b->left, b->right, (unsigned long long)dw,
                            (unsigned long long)dh, dst->width, dst->height);
    return DVPP_OK;
}

dvpp_status dvpp_border_make(const dvpp_image *src, dvpp_image *dst,
                             const dvpp_border *b, dvpp_err *err)
{
    border_job j;
    dvpp_status st;

    st = dvpp_border_check(src, dst, b, err);
    if (st == DVPP_OK && (!src->data || !dst->data))
        st = dvpp_err_set(err, DVPP_EINVAL, "data", "make-border needs both pixel buffers");
    if (st != DVPP_OK)
        return st;
    memset(&j, 0, sizeof(j));
    st = dvpp_image_planes(src, &j.ps, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(dst, &j.pd, err);
    if (st != DVPP_OK)
        return st;
    j.src = src;
    j.dst = dst;
    j.fi = dvpp_pixfmt_get(src->format);
    j.b = b;
    j.k = dvpp__border_kern_get(b->level);
    for (int c = 0; c < 4; c++)
        j.v[c] = scalar_u8(b->value[c]);
    if (j.fi->planes > 1) {
        border_yuv_planes(&j);
    } else if (j.fi->chroma_sx) {
        border_pk422(&j);
    } else {
        bplane p = plane_of(&j, 0, j.fi->bpp, src->width, src->height, 0, 0);
        memcpy(p.px, j.v, 4);
        border_plane(&p, b->type, j.k);
    }
    return DVPP_OK;
}
