#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "dvpp_jpeg.h"
#include "dvpp_mem.h"
#include "dvpp_npy.h"
#include "dvpp_png.h"

static const char *extension(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

/* Gather the image into one .npy buffer: packed and grey formats drop the
 * stride padding (a plain H x W [x C] array), multi-plane YUV keeps its
 * memory as rows of width_stride bytes (the cv2 convention for NV12). */
static dvpp_status npy_image(const dvpp_image *img, dvpp_buf *out, dvpp_err *err)
{
    const dvpp_pixfmt_info *fi = dvpp_pixfmt_get(img->format);
    char hdr[DVPP_NPY_HEADER_MAX];
    int64_t shape[3];
    int ndim;
    dvpp_planes pl;
    dvpp_status st;
    size_t hlen;

    st = dvpp_image_planes(img, &pl, err);
    if (st != DVPP_OK)
        return st;
    if (fi->planes > 1) {
        shape[0] = (int64_t)(pl.total / img->width_stride);
        shape[1] = img->width_stride;
        ndim = 2;
    } else {
        shape[0] = img->height;
        shape[1] = img->width;
        shape[2] = pl.p[0].row_bytes / img->width;
        ndim = shape[2] == 1 ? 2 : 3;
    }
    hlen = dvpp_npy_header(hdr, "|u1", shape, ndim);
    st = dvpp_buf_append(out, hdr, hlen);
    if (fi->planes > 1) {
        if (st == DVPP_OK)
            st = dvpp_buf_append(out, img->data, (size_t)shape[0] * img->width_stride);
    } else {
        for (uint32_t y = 0; y < img->height && st == DVPP_OK; y++)
            st = dvpp_buf_append(out, dvpp_image_row(img, &pl, 0, y),
                                 pl.p[0].row_bytes);
    }
    if (st != DVPP_OK)
        return dvpp_err_set(err, st, "output", "cannot build the .npy output");
    return DVPP_OK;
}

dvpp_status ctl_write_image(const char *path, const dvpp_image *img, int quality,
                            dvpp_err *err)
{
    const char *ext = extension(path);
    dvpp_buf buf;
    dvpp_status st;

    dvpp_buf_init(&buf);
    if (strcasecmp(ext, "npy") == 0) {
        st = npy_image(img, &buf, err);
    } else if (strcasecmp(ext, "png") == 0) {
        dvpp_png_encode_opts po = {.level = -1};
        st = dvpp_png_encode(img, &po, &buf, err);
    } else if (strcasecmp(ext, "jpg") == 0 || strcasecmp(ext, "jpeg") == 0) {
        dvpp_jpeg_encode_opts jo;
        dvpp_jpeg_encode_opts_init(&jo);
        jo.quality = quality;
        st = dvpp_jpeg_encode(img, &jo, &buf, err);
    } else {
        dvpp_planes pl;
        st = dvpp_image_planes(img, &pl, err);
        if (st == DVPP_OK)
            st = dvpp_buf_append(&buf, img->data, pl.total);
    }
    if (st == DVPP_OK)
        st = dvpp_write_file(path, buf.data, buf.len, err);
    dvpp_buf_fini(&buf);
    return st;
}

bool ctl_parse_u64(const char *s, unsigned long long *out)
{
    char *end;

    if (!s || !*s || *s == '-')
        return false;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno == 0 && *end == '\0';
}

bool ctl_parse_size(const char *s, unsigned *w, unsigned *h)
{
    char *end;
    unsigned long a, b;

    if (!s || *s == '-')
        return false;
    errno = 0;
    a = strtoul(s, &end, 10);
    if (errno || (*end != 'x' && *end != 'X') || end[1] == '-')
        return false;
    b = strtoul(end + 1, &end, 10);
    if (errno || *end || a == 0 || b == 0 || a > 1u << 20 || b > 1u << 20)
        return false;
    *w = (unsigned)a;
    *h = (unsigned)b;
    return true;
}
