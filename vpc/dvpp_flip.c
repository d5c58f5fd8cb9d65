/* dvpp_vpc flip: mirror an image left-right, top-bottom or both, plane by
 * plane, as an exact permutation of its samples (torchvision's hflip /
 * vflip on a PIL image, cv2.flip on an array). */
#include <string.h>
#include <strings.h>

#include "dvpp_vpc.h"

bool dvpp_flip_parse(const char *s, dvpp_flip *out)
{
    static const struct {
        const char *name;
        dvpp_flip flip;
    } names[] = {
        {"horizontal", DVPP_FLIP_HORIZONTAL}, {"h", DVPP_FLIP_HORIZONTAL},
        {"vertical", DVPP_FLIP_VERTICAL},     {"v", DVPP_FLIP_VERTICAL},
        {"both", DVPP_FLIP_BOTH},             {"hv", DVPP_FLIP_BOTH},
    };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(s, names[i].name) == 0) {
            *out = names[i].flip;
            return true;
        }
    }
    return false;
}

const char *dvpp_flip_name(dvpp_flip f)
{
    switch (f) {
    case DVPP_FLIP_HORIZONTAL: return "horizontal";
    case DVPP_FLIP_VERTICAL: return "vertical";
    case DVPP_FLIP_BOTH: return "both";
    default: return "unknown";
    }
}

static bool is_packed422(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_YUYV || f == DVPP_PIXEL_UYVY || f == DVPP_PIXEL_YVYU ||
           f == DVPP_PIXEL_VYUY;
}

/* The byte offset of the first luma sample of a packed 4:2:2 pair (the
 * second is 2 further). */
static unsigned packed422_y0(dvpp_pixfmt f)
{
    return f == DVPP_PIXEL_UYVY || f == DVPP_PIXEL_VYUY ? 1 : 0;
}

/* The bytes that move together in a mirrored row of plane @k: a pixel of
 * a packed format, a pixel pair of packed 4:2:2, an interleaved UV pair
 * of a semi-planar chroma plane, one sample of a planar one. */
static unsigned unit_bytes(const dvpp_pixfmt_info *fi, const dvpp_planes *pl, int k,
                           dvpp_pixfmt fmt)
{
    if (k == 0)
        return is_packed422(fmt) ? 4 : fi->bpp;
    return pl->count == 2 ? 2 : 1;
}

dvpp_status dvpp_vpc_check_flip(dvpp_profile prof, const dvpp_image *src,
                                const dvpp_image *dst, dvpp_flip f, dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(src->format);
    dvpp_planes pl;
    dvpp_status st;

    if ((unsigned)f < DVPP_FLIP_HORIZONTAL || (unsigned)f > DVPP_FLIP_BOTH)
        return dvpp_err_set(err, DVPP_EINVAL, "flip", "unknown flip %d", (int)f);
    if (dvpp_profile_is_ascend(prof))
        return dvpp_err_set(err, DVPP_EPROFILE, "flip",
                            "%s VPC has no flip (the native profile has)",
                            dvpp_profile_name(prof));
    if (!fi)
        return dvpp_err_set(err, DVPP_EFORMAT, "format", "cannot flip %s",
                            dvpp_pixfmt_name(src->format));
    st = dvpp_image_planes(src, &pl, err);
    if (st == DVPP_OK)
        st = dvpp_image_planes(dst, &pl, err);
    if (st != DVPP_OK)
        return st;
    if (dst->format != src->format || dst->width != src->width ||
        dst->height != src->height)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "a flip keeps format and size: %s %ux%u -> %s %ux%u",
                            dvpp_pixfmt_name(src->format), src->width, src->height,
                            dvpp_pixfmt_name(dst->format), dst->width, dst->height);
    /* An odd side of a subsampled axis ends in a chroma sample that covers
     * one pixel; mirrored, it would have to cover the first pixel and
     * half of the pair after it: no permutation of samples does that. */
    if ((f & DVPP_FLIP_HORIZONTAL) && fi->chroma_sx && src->width % 2)
        return dvpp_err_set(err, DVPP_EINVAL, "flip",
                            "a horizontal flip of a %s image %u pixels wide (odd) would "
                            "move its chroma grid by half a sample: convert it to rgb "
                            "first", dvpp_pixfmt_name(src->format), src->width);
    if ((f & DVPP_FLIP_VERTICAL) && fi->chroma_sy && src->height % 2)
        return dvpp_err_set(err, DVPP_EINVAL, "flip",
                            "a vertical flip of a %s image %u rows high (odd) would move "
                            "its chroma grid by half a sample: convert it to rgb first",
                            dvpp_pixfmt_name(src->format), src->height);
    return DVPP_OK;
}

/* Row @s of @n units of @ub bytes, mirrored into @d. */
static void mirror_row(uint8_t *d, const uint8_t *s, uint32_t n, unsigned ub)
{
    switch (ub) {
    case 1:
        for (uint32_t u = 0; u < n; u++)
            d[n - 1 - u] = s[u];
        break;
    case 3:
        for (uint32_t u = 0; u < n; u++) {
            uint8_t *o = d + (size_t)(n - 1 - u) * 3;
            o[0] = s[3 * (size_t)u], o[1] = s[3 * (size_t)u + 1], o[2] = s[3 * (size_t)u + 2];
        }
        break;
    default:
        for (uint32_t u = 0; u < n; u++)
            memcpy(d + (size_t)(n - 1 - u) * ub, s + (size_t)u * ub, ub);
        break;
    }
}

/* Packed 4:2:2: pairs mirrored, then the luma samples of each swapped. */
static void swap_pair_luma(uint8_t *d, uint32_t pairs, unsigned y0)
{
    for (uint32_t u = 0; u < pairs; u++) {
        uint8_t *p = d + (size_t)u * 4 + y0, t = p[0];
        p[0] = p[2], p[2] = t;
    }
}

dvpp_status dvpp_vpc_flip(dvpp_vpc_ctx *c, const dvpp_image *src, dvpp_image *dst,
                          dvpp_flip f, dvpp_err *err)
{
    const dvpp_pixfmt_info *fi;
    dvpp_planes sp, dp;
    dvpp_status st = dvpp_vpc_check_flip(c->profile, src, dst, f, err);

    if (st != DVPP_OK)
        return st;
    if (!src->data || !dst->data)
        return dvpp_err_set(err, DVPP_EINVAL, "image", "%s image has no data",
                            src->data ? "output" : "input");
    if (src->data == dst->data)
        return dvpp_err_set(err, DVPP_EINVAL, "image", "a flip is not in place");
    fi = dvpp_pixfmt_get(src->format);
    dvpp_image_planes(src, &sp, NULL);
    dvpp_image_planes(dst, &dp, NULL);
    for (int k = 0; k < sp.count; k++) {
        unsigned ub = unit_bytes(fi, &sp, k, src->format);
        uint32_t rows = sp.p[k].rows, n = sp.p[k].row_bytes / ub;
        for (uint32_t y = 0; y < rows; y++) {
            const uint8_t *s = dvpp_image_row(src, &sp, k, y);
            uint8_t *d = dvpp_image_row(dst, &dp, k, f & DVPP_FLIP_VERTICAL ? rows - 1 - y : y);
            if (!(f & DVPP_FLIP_HORIZONTAL)) {
                memcpy(d, s, sp.p[k].row_bytes);
                continue;
            }
            mirror_row(d, s, n, ub);
            if (k == 0 && is_packed422(src->format))
                swap_pair_luma(d, n, packed422_y0(src->format));
        }
    }
    return DVPP_OK;
}
