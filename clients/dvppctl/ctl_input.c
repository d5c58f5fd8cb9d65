/* Loading any input dvppctl accepts into a dvpp_image: JPEG and PNG are
 * decoded, .npy arrays and raw pixel files are read as they are. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "dvpp_mem.h"
#include "dvpp_npy.h"

static const char *extension(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

ctl_input_kind ctl_sniff(const dvpp_buf *b, const char *path)
{
    const char *ext = extension(path);

    if (b->len >= 3 && b->data[0] == 0xFF && b->data[1] == 0xD8 && b->data[2] == 0xFF)
        return CTL_INPUT_JPEG;
    if (b->len >= 6 && memcmp(b->data, "\x93NUMPY", 6) == 0)
        return CTL_INPUT_NPY;
    if (b->len >= 4 && memcmp(b->data + 1, "PNG", 3) == 0)
        return CTL_INPUT_PNG;
    /* A damaged signature still deserves the decoder's precise error. */
    if (strcasecmp(ext, "png") == 0)
        return CTL_INPUT_PNG;
    if (strcasecmp(ext, "jpg") == 0 || strcasecmp(ext, "jpeg") == 0)
        return CTL_INPUT_JPEG;
    return CTL_INPUT_RAW;
}

/* "--input FMT[:WxH]" */
static dvpp_status parse_spec(const char *spec, dvpp_pixfmt *fmt, unsigned *w,
                              unsigned *h, dvpp_err *err)
{
    char name[32];
    const char *colon = spec ? strchr(spec, ':') : NULL;
    size_t n = colon ? (size_t)(colon - spec) : (spec ? strlen(spec) : 0);

    *w = *h = 0;
    if (!spec || n >= sizeof(name))
        return dvpp_err_set(err, DVPP_EINVAL, "input", "bad --input '%s'",
                            spec ? spec : "");
    memcpy(name, spec, n);
    name[n] = '\0';
    if (!dvpp_pixfmt_parse(name, fmt))
        return dvpp_err_set(err, DVPP_EINVAL, "input",
                            "--input: unknown pixel format '%s'", name);
    if (colon && !ctl_parse_size(colon + 1, w, h))
        return dvpp_err_set(err, DVPP_EINVAL, "input",
                            "--input: bad size '%s' (want WxH)", colon + 1);
    return DVPP_OK;
}

/* Copy @n bytes of pixels at @src into a freshly allocated @img whose
 * geometry is set; the bytes must cover the layout. */
static dvpp_status fill_from(dvpp_image *img, const uint8_t *src, size_t n,
                             dvpp_err *err)
{
    dvpp_planes pl;
    dvpp_status st = dvpp_image_planes(img, &pl, err);

    if (st != DVPP_OK)
        return st;
    if (n < pl.total)
        return dvpp_err_set(err, DVPP_EINVAL, "input",
                            "input holds %zu bytes, a %ux%u %s image needs %zu",
                            n, img->width, img->height,
                            dvpp_pixfmt_name(img->format), pl.total);
    st = dvpp_image_alloc(img, err);
    if (st == DVPP_OK)
        memcpy(img->data, src, pl.total);
    return st;
}

static dvpp_status load_npy(const dvpp_buf *b, const ctl_args *a, dvpp_image *img,
                            dvpp_err *err)
{
    char descr[16];
    int64_t shape[3];
    int ndim;
    size_t off;
    dvpp_pixfmt fmt;
    unsigned w = 0, h = 0;
    dvpp_status st;

    st = dvpp_npy_parse(b->data, b->len, descr, sizeof(descr), shape, 3, &ndim,
                        &off, err);
    if (st != DVPP_OK)
        return st;
    if (strcmp(descr, "|u1") != 0 && strcmp(descr, "<u1") != 0)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "input",
                            ".npy input must be uint8, not %s", descr);
    if (ndim < 2 || shape[0] <= 0 || shape[1] <= 0 || shape[0] > 65535 ||
        shape[1] > 65535 * 4)
        return dvpp_err_set(err, DVPP_EINVAL, "input",
                            ".npy input must be (H, W) or (H, W, C)");
    if (a->input_spec) {
        st = parse_spec(a->input_spec, &fmt, &w, &h, err);
        if (st != DVPP_OK)
            return st;
    } else {
        int64_t c = ndim == 3 ? shape[2] : 1;
        fmt = c == 1 ? DVPP_PIXEL_GRAY : c == 3 ? DVPP_PIXEL_RGB
              : c == 4 ? DVPP_PIXEL_RGBA : DVPP_PIXEL_UNKNOWN;
        if (fmt == DVPP_PIXEL_UNKNOWN)
            return dvpp_err_set(err, DVPP_EINVAL, "input",
                                ".npy with %lld channels: say what it is with "
                                "--input FMT", (long long)c);
    }
    if (w == 0) { /* packed array: its shape is the image */
        st = dvpp_image_init(img, fmt, (uint32_t)shape[1], (uint32_t)shape[0], 1,
                             1, err);
        if (st == DVPP_OK && img->width_stride !=
                                 (uint64_t)shape[1] * (ndim == 3 ? shape[2] : 1))
            st = dvpp_err_set(err, DVPP_EINVAL, "input",
                              ".npy shape does not match %s; give --input "
                              "FMT:WxH for planar data", dvpp_pixfmt_name(fmt));
    } else { /* rows x width_stride buffer of a planar image */
        st = dvpp_image_init(img, fmt, w, h, 1, 1, err);
        if (st == DVPP_OK && ndim == 2)
            img->width_stride = (uint32_t)shape[1];
    }
    if (st != DVPP_OK)
        return st;
    return fill_from(img, b->data + off, b->len - off, err);
}

static dvpp_status load_raw(const dvpp_buf *b, const ctl_args *a, dvpp_image *img,
                            dvpp_err *err)
{
    dvpp_pixfmt fmt;
    unsigned w, h;
    dvpp_status st;

    if (!a->input_spec)
        return dvpp_err_set(err, DVPP_EUNSUPPORTED, "file",
                            "not a JPEG, PNG or .npy file; raw pixels need "
                            "--input FMT:WxH");
    st = parse_spec(a->input_spec, &fmt, &w, &h, err);
    if (st == DVPP_OK && w == 0)
        st = dvpp_err_set(err, DVPP_EINVAL, "input",
                          "raw input needs a size: --input %s:WxH", a->input_spec);
    if (st == DVPP_OK)
        st = dvpp_image_init(img, fmt, w, h, 1, 1, err);
    if (st != DVPP_OK)
        return st;
    return fill_from(img, b->data, b->len, err);
}

/* The format to decode a JPEG into: what the caller wants when libjpeg
 * can write it directly, else RGB. */
static dvpp_pixfmt jpeg_format(dvpp_pixfmt want)
{
    switch (want) {
    case DVPP_PIXEL_NV12: case DVPP_PIXEL_NV21: case DVPP_PIXEL_I420:
    case DVPP_PIXEL_YVU_PLANAR_420: case DVPP_PIXEL_YUV422SP:
    case DVPP_PIXEL_YVU422SP: case DVPP_PIXEL_YUV444SP: case DVPP_PIXEL_YVU444SP:
    case DVPP_PIXEL_YUV440SP: case DVPP_PIXEL_YVU440SP:
    case DVPP_PIXEL_YUV400: case DVPP_PIXEL_GRAY: case DVPP_PIXEL_RGB:
    case DVPP_PIXEL_BGR: case DVPP_PIXEL_RGBA: case DVPP_PIXEL_BGRA:
    case DVPP_PIXEL_ARGB: case DVPP_PIXEL_ABGR: case DVPP_PIXEL_UNKNOWN:
        return want;
    default:
        return DVPP_PIXEL_RGB;
    }
}

static dvpp_pixfmt png_format(dvpp_pixfmt want)
{
    switch (want) {
    case DVPP_PIXEL_RGB: case DVPP_PIXEL_BGR: case DVPP_PIXEL_RGBA:
    case DVPP_PIXEL_BGRA: case DVPP_PIXEL_GRAY: case DVPP_PIXEL_YUV400:
        return want;
    default:
        return DVPP_PIXEL_RGB;
    }
}

dvpp_pixfmt ctl_decode_format(ctl_input_kind kind, const ctl_args *a,
                              dvpp_pixfmt want)
{
    if (a->decode_format_set)
        return a->decode_format;
    return kind == CTL_INPUT_PNG ? png_format(want) : jpeg_format(want);
}

static dvpp_status decode_jpeg(const dvpp_buf *b, const ctl_args *a,
                               dvpp_pixfmt want, dvpp_image *img, dvpp_err *err)
{
    dvpp_jpeg_decode_opts o = a->jpeg;

    o.format = ctl_decode_format(CTL_INPUT_JPEG, a, want);
    if (a->shrink_on_load && a->shrink_w) {
        dvpp_jpeg_info in;
        dvpp_status st = dvpp_jpeg_probe(b->data, b->len, &in, err);
        bool swap = !o.no_orient && in.orientation >= 5;
        if (st != DVPP_OK)
            return st;
        /* The target refers to displayed sides; 5..8 swap them. */
        o.scale_num = dvpp_jpeg_shrink_scale(in.width, in.height,
                                             swap ? a->shrink_h : a->shrink_w,
                                             swap ? a->shrink_w : a->shrink_h);
    }
    return dvpp_jpeg_decode(b->data, b->len, &o, &a->lim, img, err);
}

dvpp_status ctl_load_image(const char *path, const ctl_args *a, dvpp_pixfmt want,
                           dvpp_image *img, dvpp_err *err)
{
    dvpp_png_decode_opts po = a->png;
    dvpp_buf b;
    dvpp_status st;

    memset(img, 0, sizeof(*img));
    dvpp_buf_init(&b);
    st = dvpp_buf_read_file(&b, path, a->lim.max_encoded_bytes, err);
    if (st != DVPP_OK)
        goto out;
    switch (ctl_sniff(&b, path)) {
    case CTL_INPUT_JPEG:
        st = decode_jpeg(&b, a, want, img, err);
        break;
    case CTL_INPUT_PNG:
        po.format = ctl_decode_format(CTL_INPUT_PNG, a, want);
        st = dvpp_png_decode(b.data, b.len, &po, &a->lim, img, err);
        break;
    case CTL_INPUT_NPY:
        st = load_npy(&b, a, img, err);
        break;
    default:
        st = load_raw(&b, a, img, err);
        break;
    }
out:
    dvpp_buf_fini(&b);
    return st;
}
