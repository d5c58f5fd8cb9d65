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

static dvpp_status npy_append_pixels(const dvpp_image *img, const dvpp_planes *pl,
                                     dvpp_buf *out)
{
    dvpp_status st = DVPP_OK;

    if (pl->count > 1)
        return dvpp_buf_append(out, img->data, pl->total);
    for (uint32_t y = 0; y < img->height && st == DVPP_OK; y++)
        st = dvpp_buf_append(out, dvpp_image_row(img, pl, 0, y), pl->p[0].row_bytes);
    return st;
}

/* Images @imgs[0..n) as one .npy; n == 0 means a single image with no
 * leading N dimension. */
static dvpp_status npy_images(const dvpp_image *imgs, unsigned n, dvpp_buf *out,
                              dvpp_err *err)
{
    char hdr[DVPP_NPY_HEADER_MAX];
    int64_t shape[4];
    dvpp_planes pl;
    dvpp_status st;
    int ndim;

    st = dvpp_image_planes(&imgs[0], &pl, err);
    if (st != DVPP_OK)
        return st;
    ndim = dvpp_npy_image_shape(&imgs[0], &pl, shape + (n ? 1 : 0));
    if (n) {
        shape[0] = n;
        ndim++;
    }
    st = dvpp_buf_append(out, hdr, dvpp_npy_header(hdr, "|u1", shape, ndim));
    for (unsigned i = 0; i < (n ? n : 1) && st == DVPP_OK; i++) {
        if (imgs[i].format != imgs[0].format || imgs[i].width != imgs[0].width ||
            imgs[i].height != imgs[0].height)
            return dvpp_err_set(err, DVPP_EINVAL, "output",
                                "a stacked .npy needs outputs of one size and "
                                "format");
        dvpp_image_planes(&imgs[i], &pl, NULL);
        st = npy_append_pixels(&imgs[i], &pl, out);
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
        st = npy_images(img, 0, &buf, err);
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

dvpp_status ctl_write_stack(const char *path, const dvpp_image *imgs,
                            unsigned n, dvpp_err *err)
{
    dvpp_buf buf;
    dvpp_status st;

    dvpp_buf_init(&buf);
    st = npy_images(imgs, n, &buf, err);
    if (st == DVPP_OK)
        st = dvpp_write_file(path, buf.data, buf.len, err);
    dvpp_buf_fini(&buf);
    return st;
}
