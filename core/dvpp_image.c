#include "dvpp_image.h"

#include <string.h>
#include <strings.h>

#include "dvpp_mem.h"

/* Indexed by a compact slot, not by the sparse enum value. */
typedef struct fmt_entry {
    dvpp_pixfmt fmt;
    dvpp_pixfmt_info info;
} fmt_entry;

static const fmt_entry k_formats[] = {
    {DVPP_PIXEL_YUV400, {"yuv400", 1, 1, 1, 0, 0, true, false}},
    {DVPP_PIXEL_NV12, {"nv12", 2, 1, 3, 1, 1, true, false}},
    {DVPP_PIXEL_NV21, {"nv21", 2, 1, 3, 1, 1, true, false}},
    {DVPP_PIXEL_YUV422SP, {"yuv422sp", 2, 1, 3, 1, 0, true, false}},
    {DVPP_PIXEL_YVU422SP, {"yvu422sp", 2, 1, 3, 1, 0, true, false}},
    {DVPP_PIXEL_YUV444SP, {"yuv444sp", 2, 1, 3, 0, 0, true, false}},
    {DVPP_PIXEL_YVU444SP, {"yvu444sp", 2, 1, 3, 0, 0, true, false}},
    {DVPP_PIXEL_YUYV, {"yuyv", 1, 2, 3, 1, 0, true, false}},
    {DVPP_PIXEL_UYVY, {"uyvy", 1, 2, 3, 1, 0, true, false}},
    {DVPP_PIXEL_YVYU, {"yvyu", 1, 2, 3, 1, 0, true, false}},
    {DVPP_PIXEL_VYUY, {"vyuy", 1, 2, 3, 1, 0, true, false}},
    {DVPP_PIXEL_YUV_PACKED_444, {"yuv444packed", 1, 3, 3, 0, 0, true, false}},
    {DVPP_PIXEL_RGB, {"rgb", 1, 3, 3, 0, 0, false, false}},
    {DVPP_PIXEL_BGR, {"bgr", 1, 3, 3, 0, 0, false, false}},
    {DVPP_PIXEL_ARGB, {"argb", 1, 4, 4, 0, 0, false, true}},
    {DVPP_PIXEL_ABGR, {"abgr", 1, 4, 4, 0, 0, false, true}},
    {DVPP_PIXEL_RGBA, {"rgba", 1, 4, 4, 0, 0, false, true}},
    {DVPP_PIXEL_BGRA, {"bgra", 1, 4, 4, 0, 0, false, true}},
    {DVPP_PIXEL_YVU_PLANAR_420, {"yv12", 3, 1, 3, 1, 1, true, false}},
    {DVPP_PIXEL_YUV440SP, {"yuv440sp", 2, 1, 3, 0, 1, true, false}},
    {DVPP_PIXEL_YVU440SP, {"yvu440sp", 2, 1, 3, 0, 1, true, false}},
    {DVPP_PIXEL_I420, {"i420", 3, 1, 3, 1, 1, true, false}},
    {DVPP_PIXEL_GRAY, {"gray", 1, 1, 1, 0, 0, false, false}},
};

/* Extra spellings users type; each maps onto a canonical format. */
static const struct {
    const char *name;
    dvpp_pixfmt fmt;
} k_aliases[] = {
    {"grey", DVPP_PIXEL_GRAY},         {"yuv420sp", DVPP_PIXEL_NV12},
    {"yvu420sp", DVPP_PIXEL_NV21},     {"yuv420p", DVPP_PIXEL_I420},
    {"yvu420p", DVPP_PIXEL_YVU_PLANAR_420}, {"yuv444", DVPP_PIXEL_YUV444SP},
    {"yuv422", DVPP_PIXEL_YUV422SP},   {"rgb888", DVPP_PIXEL_RGB},
    {"bgr888", DVPP_PIXEL_BGR},        {"rgba8888", DVPP_PIXEL_RGBA},
    {"bgra8888", DVPP_PIXEL_BGRA},     {"argb8888", DVPP_PIXEL_ARGB},
    {"abgr8888", DVPP_PIXEL_ABGR},     {"unknown", DVPP_PIXEL_UNKNOWN},
};

const dvpp_pixfmt_info *dvpp_pixfmt_get(dvpp_pixfmt fmt)
{
    for (size_t i = 0; i < sizeof(k_formats) / sizeof(k_formats[0]); i++)
        if (k_formats[i].fmt == fmt)
            return &k_formats[i].info;
    return NULL;
}

const char *dvpp_pixfmt_name(dvpp_pixfmt fmt)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmt);
    return fi ? fi->name : "unknown";
}

bool dvpp_pixfmt_parse(const char *name, dvpp_pixfmt *out)
{
    for (size_t i = 0; i < sizeof(k_formats) / sizeof(k_formats[0]); i++) {
        if (strcasecmp(name, k_formats[i].info.name) == 0) {
            *out = k_formats[i].fmt;
            return true;
        }
    }
    for (size_t i = 0; i < sizeof(k_aliases) / sizeof(k_aliases[0]); i++) {
        if (strcasecmp(name, k_aliases[i].name) == 0) {
            *out = k_aliases[i].fmt;
            return true;
        }
    }
    return false;
}

dvpp_status dvpp_image_init(dvpp_image *img, dvpp_pixfmt fmt, uint32_t width,
                            uint32_t height, uint32_t align_w, uint32_t align_h,
                            dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(fmt);
    uint64_t wpix, ws, hs;

    if (!fi)
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "pixel format %d has no memory layout", (int)fmt);
    if (width == 0 || height == 0)
        return dvpp_err_set(err, DVPP_EINVAL, "size",
                            "image size %ux%u is empty", width, height);
    wpix = dvpp_align_up(width, align_w ? align_w : 1);
    if (fi->chroma_sx)
        wpix = dvpp_align_up(wpix, 2);
    ws = wpix * fi->bpp;
    hs = dvpp_align_up(height, align_h ? align_h : 1);
    if (wpix == 0 || hs == 0 || ws > UINT32_MAX || hs > UINT32_MAX)
        return dvpp_err_set(err, DVPP_EOVERFLOW, "size",
                            "aligned size of %ux%u overflows", width, height);
    img->format = fmt;
    img->width = width;
    img->height = height;
    img->width_stride = (uint32_t)ws;
    img->height_stride = (uint32_t)hs;
    img->data = NULL;
    img->size = 0;
    return DVPP_OK;
}

/* Append one plane to @pl; false when the running total overflows. */
static bool add_plane(dvpp_planes *pl, uint64_t stride, uint64_t row_bytes,
                      uint64_t rows, uint64_t alloc_rows)
{
    dvpp_plane *p = &pl->p[pl->count++];
    size_t bytes;

    p->offset = pl->total;
    p->stride = (size_t)stride;
    p->row_bytes = (uint32_t)row_bytes;
    p->rows = (uint32_t)rows;
    p->alloc_rows = (uint32_t)alloc_rows;
    return dvpp_size_mul((size_t)stride, (size_t)alloc_rows, &bytes) &&
           dvpp_size_add(pl->total, bytes, &pl->total);
}

dvpp_status dvpp_image_planes(const dvpp_image *img, dvpp_planes *out,
                              dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(img->format);
    uint64_t w = img->width, h = img->height;
    uint64_t ws = img->width_stride, hs = img->height_stride;
    uint64_t cw, ch, chs, row0;
    bool ok = true;

    if (!fi)
        return dvpp_err_set(err, DVPP_EFORMAT, "format",
                            "pixel format %d has no memory layout",
                            (int)img->format);
    if (w == 0 || h == 0)
        return dvpp_err_set(err, DVPP_EINVAL, "size", "image size %ux%u is empty",
                            img->width, img->height);
    cw = (w + fi->chroma_sx) >> fi->chroma_sx;
    ch = (h + fi->chroma_sy) >> fi->chroma_sy;
    chs = (hs + fi->chroma_sy) >> fi->chroma_sy;
    row0 = fi->planes == 1 && fi->chroma_sx ? cw * 2 * fi->bpp : w * fi->bpp;
    if (ws < row0)
        return dvpp_err_set(err, DVPP_ESTRIDE, "width_stride",
                            "width stride %u is smaller than a %s row of %llu bytes",
                            img->width_stride, fi->name,
                            (unsigned long long)row0);
    if (hs < h)
        return dvpp_err_set(err, DVPP_ESTRIDE, "height_stride",
                            "height stride %u is smaller than the height %u",
                            img->height_stride, img->height);
    memset(out, 0, sizeof(*out));
    ok = add_plane(out, ws, row0, h, hs);
    if (fi->planes == 2) {
        /* Interleaved chroma: 2 bytes per chroma sample pair; a full-width
         * chroma plane (444/440) therefore needs twice the luma stride. */
        uint64_t cstride = fi->chroma_sx ? ws : 2 * ws;
        if (fi->chroma_sx && ws < cw * 2)
            return dvpp_err_set(err, DVPP_ESTRIDE, "width_stride",
                                "width stride %u cannot hold %llu chroma pairs",
                                img->width_stride, (unsigned long long)cw);
        ok = ok && add_plane(out, cstride, cw * 2, ch, chs);
    } else if (fi->planes == 3) {
        if (ws % 2)
            return dvpp_err_set(err, DVPP_ESTRIDE, "width_stride",
                                "planar 4:2:0 needs an even width stride, got %u",
                                img->width_stride);
        ok = ok && add_plane(out, ws / 2, cw, ch, chs);
        ok = ok && add_plane(out, ws / 2, cw, ch, chs);
    }
    if (!ok)
        return dvpp_err_set(err, DVPP_EOVERFLOW, "size",
                            "layout of %ux%u overflows", img->width,
                            img->height);
    if (img->data && img->size < out->total)
        return dvpp_err_set(err, DVPP_ENOSPC, "size",
                            "buffer of %zu bytes is smaller than the %zu the "
                            "%s layout needs",
                            img->size, out->total, fi->name);
    return DVPP_OK;
}

dvpp_status dvpp_image_alloc(dvpp_image *img, dvpp_err *err)
{
    dvpp_planes pl;
    dvpp_status st;

    img->data = NULL;
    img->size = 0;
    st = dvpp_image_planes(img, &pl, err);
    if (st != DVPP_OK)
        return st;
    img->data = dvpp_malloc(pl.total);
    if (!img->data)
        return dvpp_err_set(err, DVPP_ENOMEM, "size",
                            "cannot allocate %zu bytes for a %ux%u image",
                            pl.total, img->width, img->height);
    img->size = pl.total;
    /* Only padding needs zeroing, but a strided layout has padding on
     * every row; one memset is simpler and as fast as the row loop. */
    if (img->width_stride != pl.p[0].row_bytes || img->height_stride != img->height)
        memset(img->data, 0, pl.total);
    return DVPP_OK;
}

void dvpp_image_free(dvpp_image *img)
{
    dvpp_free(img->data, img->size);
    img->data = NULL;
    img->size = 0;
}

size_t dvpp_images_trim(dvpp_image *imgs, int n, size_t keep)
{
    size_t freed = 0;

    for (int i = 0; i < n; i++) {
        if (imgs[i].data && imgs[i].size > keep) {
            freed += imgs[i].size;
            dvpp_image_free(&imgs[i]);
        }
    }
    return freed;
}
