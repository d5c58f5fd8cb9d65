/* The DVPP VPC rules of the ascend310/ascend310p profiles
 * (reference/dvpp-aipp.md §5), with DVPP's own log texts where the
 * reference quotes them and the same style elsewhere. */
#include <stdio.h>

#include "dvpp_vpc.h"
#include "vpc_int.h"

static const char *chip(dvpp_profile p)
{
    return p == DVPP_PROFILE_ASCEND310 ? "Ascend310" : "Ascend310P";
}

static bool is_420sp(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_NV12 || f == DVPP_PIXEL_NV21;
}

bool dvpp__vpc_ascend_input_ok(dvpp_profile p, dvpp_pixfmt f)
{
    switch (f) {
    case DVPP_PIXEL_YUV400:
    case DVPP_PIXEL_NV12:
    case DVPP_PIXEL_NV21:
    case DVPP_PIXEL_YUV422SP:
    case DVPP_PIXEL_YVU422SP:
    case DVPP_PIXEL_YUV444SP:
    case DVPP_PIXEL_YVU444SP:
    case DVPP_PIXEL_YUYV:
    case DVPP_PIXEL_UYVY:
    case DVPP_PIXEL_YVYU:
    case DVPP_PIXEL_VYUY:
    case DVPP_PIXEL_YUV_PACKED_444:
    case DVPP_PIXEL_RGB:
    case DVPP_PIXEL_BGR:
    case DVPP_PIXEL_ARGB:
    case DVPP_PIXEL_ABGR:
    case DVPP_PIXEL_RGBA:
    case DVPP_PIXEL_BGRA:
        return true;
    case DVPP_PIXEL_YUV440SP:
    case DVPP_PIXEL_YVU440SP:
        return p == DVPP_PROFILE_ASCEND310P;
    default:
        return false;
    }
}

bool dvpp__vpc_ascend_output_ok(dvpp_profile p, dvpp_pixfmt f)
{
    if (is_420sp(f))
        return true;
    if (p == DVPP_PROFILE_ASCEND310)
        return false;
    switch (f) {
    case DVPP_PIXEL_YUV400:
    case DVPP_PIXEL_YUV422SP:
    case DVPP_PIXEL_YVU422SP:
    case DVPP_PIXEL_YUV_PACKED_444:
    case DVPP_PIXEL_RGB:
    case DVPP_PIXEL_BGR:
    case DVPP_PIXEL_ARGB:
    case DVPP_PIXEL_ABGR:
    case DVPP_PIXEL_RGBA:
    case DVPP_PIXEL_BGRA:
        return true;
    default:
        return false;
    }
}

/* Formats that may go up to 8192 on a side ("8K" path). */
static bool allows_8k(dvpp_profile p, dvpp_pixfmt f)
{
    if (is_420sp(f))
        return true;
    if (p == DVPP_PROFILE_ASCEND310)
        return false;
    return f == DVPP_PIXEL_YUV400 || f == DVPP_PIXEL_YUV422SP ||
           f == DVPP_PIXEL_YVU422SP || f == DVPP_PIXEL_YUV444SP ||
           f == DVPP_PIXEL_YVU444SP || f == DVPP_PIXEL_YUYV ||
           f == DVPP_PIXEL_UYVY || f == DVPP_PIXEL_YVYU || f == DVPP_PIXEL_VYUY;
}

/* ACL's CalcImageSizeKernel factor, as a fraction num/den. */
static void size_factor(dvpp_pixfmt f, unsigned *num, unsigned *den)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(f);

    *den = 1;
    if (f == DVPP_PIXEL_YUV400 || is_420sp(f)) {
        *num = 3, *den = 2; /* YUV400 is sized like 4:2:0 by ACL */
    } else if (fi && fi->planes == 2) {
        *num = fi->chroma_sx || fi->chroma_sy ? 2 : 3;
    } else {
        *num = 1; /* packed: the stride already counts the bytes */
    }
}

static dvpp_status check_stride(dvpp_profile p, const dvpp_image *img,
                                const char *side, dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(img->format);
    uint64_t need;
    unsigned num, den;
    bool eight_k = img->width > 4096 || img->height > 4096;

    (void)p;
    if (!eight_k && img->width_stride % 16)
        return dvpp_err_set(err, DVPP_EPROFILE, "width_stride",
                            "%s widthStride(%u) is not right, it should be 16 "
                            "aligned!", side, img->width_stride);
    if (img->width_stride < 32)
        return dvpp_err_set(err, DVPP_EPROFILE, "width_stride",
                            "%s widthStride(%u) should not be smaller than 32!",
                            side, img->width_stride);
    if (img->width_stride > 16384)
        return dvpp_err_set(err, DVPP_EPROFILE, "width_stride",
                            "%s widthStride(%u) should not be larger than "
                            "16384!", side, img->width_stride);
    if (img->height_stride < 6 || img->height_stride > 16384)
        return dvpp_err_set(err, DVPP_EPROFILE, "height_stride",
                            "%s heightStride(%u) should be between [6, 16384]!",
                            side, img->height_stride);
    if (fi && fi->chroma_sy && img->height_stride % 2)
        return dvpp_err_set(err, DVPP_EPROFILE, "height_stride",
                            "%s heightStride(%u) should be even for %s!", side,
                            img->height_stride, dvpp_pixfmt_name(img->format));
    size_factor(img->format, &num, &den);
    need = (uint64_t)img->width_stride * img->height_stride * num / den;
    if (img->data && img->size < need)
        return dvpp_err_set(err, DVPP_EPROFILE, "size",
                            "%s bufferSize(%zu) should not be smaller than "
                            "widthStride(%u) * heightStride(%u)%s = %llu", side,
                            img->size, img->width_stride, img->height_stride,
                            num == 3 && den == 2 ? " * 3 / 2"
                            : num == 2         ? " * 2"
                            : num == 3         ? " * 3"
                                               : "",
                            (unsigned long long)need);
    return DVPP_OK;
}

static dvpp_status check_picture(dvpp_profile p, const dvpp_image *img,
                                 bool input, dvpp_err *err)
{
    const char *side = input ? "Input" : "Output";
    uint32_t max = 4096;

    if (input ? !dvpp__vpc_ascend_input_ok(p, img->format)
              : !dvpp__vpc_ascend_output_ok(p, img->format))
        return dvpp_err_set(err, DVPP_EPROFILE, "format",
                            "%s VPC: %s format %s is not supported!", chip(p),
                            input ? "input" : "output",
                            dvpp_pixfmt_name(img->format));
    if (input && allows_8k(p, img->format))
        max = 8192;
    if (img->width < 10 || img->width > max || img->height < 6 ||
        img->height > max)
        return dvpp_err_set(err, DVPP_EPROFILE, "size",
                            "%s width(%u) and height(%u) should be between "
                            "[10, %u] and [6, %u]!", side, img->width,
                            img->height, max, max);
    if (!input && is_420sp(img->format) && (img->width % 2 || img->height % 2))
        return dvpp_err_set(err, DVPP_EPROFILE, "size",
                            "Output width(%u) and height(%u) should be even "
                            "for YUV420SP!", img->width, img->height);
    return check_stride(p, img, side, err);
}

/* Crop / paste ROI: size range, inside the picture, V100 parity. */
static dvpp_status check_area(dvpp_profile p, const dvpp_roi *r,
                              const dvpp_image *img, bool input, dvpp_err *err)
{
    const char *area = input ? "inputArea" : "outputArea";
    const char *what = input ? "crop" : "paste";
    uint32_t w, h;

    if (r->left >= r->right || r->top >= r->bottom || r->right >= img->width ||
        r->bottom >= img->height)
        return dvpp_err_set(err, DVPP_EPROFILE, input ? "crop" : "paste",
                            "%s (%u, %u, %u, %u) should be inside the %ux%u "
                            "picture with left < right and top < bottom!",
                            area, r->left, r->top, r->right, r->bottom,
                            img->width, img->height);
    w = dvpp_roi_width(r);
    h = dvpp_roi_height(r);
    if (w < 10 || w > 8192)
        return dvpp_err_set(err, DVPP_EPROFILE, what,
                            "%sWidth(%u) should be between [10, 8192]!", what, w);
    if (h < 6 || h > 8192)
        return dvpp_err_set(err, DVPP_EPROFILE, what,
                            "%sHeight(%u) should be between [6, 8192]!", what, h);
    if (p == DVPP_PROFILE_ASCEND310 && is_420sp(img->format)) {
        if (r->left % 2)
            return dvpp_err_set(err, DVPP_EPROFILE, what,
                                "%s leftOffset is %u, it should be even!", area,
                                r->left);
        if (r->top % 2)
            return dvpp_err_set(err, DVPP_EPROFILE, what,
                                "%s topOffset is %u, it should be even!", area,
                                r->top);
        if (r->right % 2 == 0)
            return dvpp_err_set(err, DVPP_EPROFILE, what,
                                "%s rightOffset is %u, it should be odd!", area,
                                r->right);
        if (r->bottom % 2 == 0)
            return dvpp_err_set(err, DVPP_EPROFILE, what,
                                "%s bottomOffset is %u, it should be odd!", area,
                                r->bottom);
    }
    if (!input && r->left % 16)
        return dvpp_err_set(err, DVPP_EPROFILE, "paste",
                            "outputArea leftOffset(%u) should be 16 aligned!",
                            r->left);
    return DVPP_OK;
}

static dvpp_status check_scale(uint32_t from, uint32_t to, const char *axis,
                               dvpp_err *err)
{
    /* to/from in [1/32, 16], compared without floating point. */
    if ((uint64_t)to * 32 < from || to > (uint64_t)from * 16)
        return dvpp_err_set(err, DVPP_EPROFILE, "scale",
                            "the scale of %s (%u -> %u) should be between "
                            "[1/32, 16]!", axis, from, to);
    return DVPP_OK;
}

dvpp_status dvpp__vpc_check_ascend(dvpp_profile p, const dvpp_image *src,
                                   const dvpp_roi *crop, const dvpp_image *dst,
                                   const dvpp_roi *paste,
                                   const dvpp_resize_opts *o, dvpp_err *err)
{
    dvpp_roi full_src = {0, 0, src->width - 1, src->height - 1};
    dvpp_roi full_dst = {0, 0, dst->width - 1, dst->height - 1};
    int max_mode = p == DVPP_PROFILE_ASCEND310 ? 4 : 2;
    dvpp_status st;

    if (o->parity != DVPP_PARITY_ASCEND)
        return dvpp_err_set(err, DVPP_EPROFILE, "parity",
                            "%s VPC resizes with its own interpolation modes: "
                            "use parity ascend (modes 0..%d)", chip(p), max_mode);
    if (o->ascend_mode < 0 || o->ascend_mode > max_mode)
        return dvpp_err_set(err, DVPP_EPROFILE, "interp",
                            "resize interpolation(%d) should be between [0, %d]!",
                            o->ascend_mode, max_mode);
    st = check_picture(p, src, true, err);
    if (st == DVPP_OK)
        st = check_picture(p, dst, false, err);
    if (st == DVPP_OK)
        st = check_area(p, crop ? crop : &full_src, src, true, err);
    if (st == DVPP_OK && paste)
        st = check_area(p, paste, dst, false, err);
    if (st != DVPP_OK)
        return st;
    crop = crop ? crop : &full_src;
    paste = paste ? paste : &full_dst;
    st = check_scale(dvpp_roi_width(crop), dvpp_roi_width(paste), "width", err);
    if (st == DVPP_OK)
        st = check_scale(dvpp_roi_height(crop), dvpp_roi_height(paste), "height", err);
    return st;
}

dvpp_status dvpp__vpc_check_batch(dvpp_profile p, uint32_t max_native,
                                  uint32_t nsrc, const uint32_t *roi_nums,
                                  uint32_t *total, dvpp_err *err)
{
    uint64_t sum = 0;
    uint32_t limit = dvpp_profile_is_ascend(p) ? 256 : max_native;

    if (nsrc == 0)
        return dvpp_err_set(err, DVPP_EINVAL, "batch", "batch has no input");
    if (dvpp_profile_is_ascend(p) && nsrc > 256)
        return dvpp_err_set(err, DVPP_EPROFILE, "batch",
                            "batch size(%u) should not be larger than 256!", nsrc);
    for (uint32_t i = 0; i < nsrc; i++) {
        if (roi_nums[i] == 0)
            return dvpp_err_set(err, DVPP_EINVAL, "roi_nums",
                                "roiNums[%u] is 0: every input needs a ROI", i);
        sum += roi_nums[i];
    }
    if (sum > limit)
        return dvpp_err_set(err, dvpp_profile_is_ascend(p) ? DVPP_EPROFILE
                                                           : DVPP_ELIMIT,
                            "roi_nums",
                            "total roiNums(%llu) should not be larger than %u!",
                            (unsigned long long)sum, limit);
    *total = (uint32_t)sum;
    return DVPP_OK;
}

void dvpp_vpc_paste_grid(dvpp_profile p, dvpp_pixfmt fmt, dvpp_roi_grid *g)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmt);

    g->x = fi && fi->chroma_sx ? 2 : 1;
    g->y = fi && fi->chroma_sy ? 2 : 1;
    g->even_size = false;
    if (dvpp_profile_is_ascend(p))
        g->x = 16; /* "outputArea leftOffset should be 16 aligned" */
    if (p == DVPP_PROFILE_ASCEND310 && is_420sp(fmt))
        g->y = 2, g->even_size = true;
}

void dvpp_vpc_crop_grid(dvpp_profile p, dvpp_pixfmt fmt, dvpp_roi_grid *g)
{
    bool parity = p == DVPP_PROFILE_ASCEND310 && is_420sp(fmt);

    g->x = g->y = parity ? 2 : 1;
    g->even_size = parity;
}

void dvpp_roi_grid_join(dvpp_roi_grid *a, const dvpp_roi_grid *b)
{
    a->x = a->x > b->x ? a->x : b->x;
    a->y = a->y > b->y ? a->y : b->y;
    a->even_size = a->even_size || b->even_size;
}

dvpp_status dvpp_vpc_image_init(dvpp_image *img, dvpp_profile p, dvpp_pixfmt fmt,
                                uint32_t w, uint32_t h, dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmt);
    bool asc = dvpp_profile_is_ascend(p);
    dvpp_status st;

    st = dvpp_image_init(img, fmt, w, h, asc ? 16 : 1, asc && fi && fi->chroma_sy ? 2 : 1,
                         err);
    if (st == DVPP_OK && asc && img->width_stride < 32)
        img->width_stride = 32; /* "widthStride should not be smaller than 32" */
    return st;
}

size_t dvpp_vpc_buffer_bytes(dvpp_profile p, const dvpp_image *img)
{
    dvpp_image geo = *img;
    dvpp_planes pl;
    unsigned num, den;
    uint64_t acl;

    geo.data = NULL;
    if (dvpp_image_planes(&geo, &pl, NULL) != DVPP_OK)
        return SIZE_MAX;
    if (!dvpp_profile_is_ascend(p))
        return pl.total;
    size_factor(img->format, &num, &den);
    acl = (uint64_t)img->width_stride * img->height_stride * num / den;
    return acl > pl.total && acl <= SIZE_MAX ? (size_t)acl : pl.total;
}

bool dvpp_vpc_layout_ok(dvpp_profile p, const dvpp_image *img)
{
    dvpp_image geo = *img;
    dvpp_planes pl;

    geo.data = NULL; /* the layout: its strides, and what its bytes can hold */
    if (!dvpp_profile_is_ascend(p))
        return true;
    return check_stride(p, &geo, "Input", NULL) == DVPP_OK &&
           dvpp_image_planes(&geo, &pl, NULL) == DVPP_OK &&
           pl.total >= dvpp_vpc_buffer_bytes(p, &geo);
}
