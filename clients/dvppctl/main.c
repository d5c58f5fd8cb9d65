/* dvppctl: the command-line door to libdvpp.
 *
 * Offline subcommands run in-process on libdvpp (the same code the daemon
 * runs). Exit status: 0 success, 1 the input or operation failed (one line
 * on stderr says why), 2 usage error.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "dvpp_cpu.h"
#include "dvpp_jpeg.h"
#include "dvpp_limits.h"
#include "dvpp_mem.h"
#include "dvpp_png.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "dev"
#endif

typedef enum input_kind { INPUT_UNKNOWN, INPUT_JPEG, INPUT_PNG } input_kind;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: dvppctl <command> [options]\n"
        "\n"
        "commands:\n"
        "  info FILE                 print what the header says, as JSON\n"
        "  decode FILE -o OUT        decode a JPEG or PNG; OUT's extension picks\n"
        "                            the container: .npy .png .jpg, else raw bytes\n"
        "  version                   print version, SIMD level and codecs\n"
        "\n"
        "decode options:\n"
        "  --format F          rgb bgr rgba bgra argb abgr gray nv12 nv21 i420 yv12\n"
        "                      yuv400 yuv422sp yvu422sp yuv444sp yvu444sp yuv440sp\n"
        "                      yvu440sp unknown (JPEG: keep source sampling)\n"
        "  --align WxH         stride alignment in pixels x rows (e.g. 128x16)\n"
        "  --profile P         native (default) | ascend310 | ascend310p\n"
        "  --scale N           JPEG DCT scaling N/8, N in 1..8\n"
        "  --shrink-on-load WxH  pick the smallest DCT scale that still covers WxH\n"
        "  --roi X,Y,W,H       JPEG region decode (output coordinates)\n"
        "  --no-orient         ignore the EXIF orientation\n"
        "  --allow-partial     accept truncated or corrupt data\n"
        "  --fast-dct          JDCT_IFAST (djpeg -dct fast)\n"
        "  --nosmooth          no fancy upsampling (djpeg -nosmooth)\n"
        "  --alpha A           PNG alpha: auto | drop | composite\n"
        "  --background RRGGBB composite colour for --alpha composite\n"
        "  --quality Q         quality of a .jpg output (1..100, default 95)\n"
        "  --max-bytes N --max-pixels N --max-side N --max-scans N  limits\n");
}

static input_kind sniff(const dvpp_buf *b, const char *path)
{
    const char *dot = strrchr(path, '.');

    if (b->len >= 3 && b->data[0] == 0xFF && b->data[1] == 0xD8 && b->data[2] == 0xFF)
        return INPUT_JPEG;
    if (b->len >= 4 && memcmp(b->data + 1, "PNG", 3) == 0)
        return INPUT_PNG;
    /* A damaged signature still deserves the decoder's precise error. */
    if (dot && strcasecmp(dot, ".png") == 0)
        return INPUT_PNG;
    if (dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0))
        return INPUT_JPEG;
    return INPUT_UNKNOWN;
}

static int fail(const char *path, const dvpp_err *err)
{
    fprintf(stderr, "dvppctl: %s: %s (%s)\n", path,
            err->msg[0] ? err->msg : dvpp_strerror(err->status),
            dvpp_status_name(err->status));
    return 1;
}

static json_t *jpeg_json(const dvpp_jpeg_info *in)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:i, s:i, s:s, s:s, s:b, s:b, "
                     "s:b, s:b, s:i, s:I, s:b}",
                     "type", "jpeg", "width", (json_int_t)in->width, "height",
                     (json_int_t)in->height, "display_width",
                     (json_int_t)in->display_width, "display_height",
                     (json_int_t)in->display_height, "components",
                     in->components, "precision", in->precision, "sampling",
                     dvpp_jpeg_sampling_name(in->sampling), "colorspace",
                     dvpp_jpeg_colorspace_name(in->colorspace), "baseline",
                     in->baseline, "progressive", in->progressive, "arithmetic",
                     in->arithmetic, "lossless", in->lossless, "orientation",
                     in->orientation, "scans", (json_int_t)in->scans,
                     "complete", in->complete);
}

static json_t *png_json(const dvpp_png_info *in)
{
    return json_pack("{s:s, s:I, s:I, s:i, s:i, s:i, s:b, s:b, s:b}", "type",
                     "png", "width", (json_int_t)in->width, "height",
                     (json_int_t)in->height, "bit_depth", in->bit_depth,
                     "color_type", in->color_type, "channels", in->channels,
                     "interlaced", in->interlaced, "has_trns", in->has_trns,
                     "has_alpha", in->has_alpha);
}

static int cmd_info(int argc, char **argv)
{
    dvpp_limits lim = dvpp_limits_default();
    dvpp_err err;
    dvpp_buf b;
    json_t *j = NULL;
    int rc = 1;

    if (argc != 2) {
        usage(stderr);
        return 2;
    }
    dvpp_err_clear(&err);
    dvpp_buf_init(&b);
    if (dvpp_buf_read_file(&b, argv[1], lim.max_encoded_bytes, &err) != DVPP_OK)
        goto out_fail;
    if (sniff(&b, argv[1]) == INPUT_JPEG) {
        dvpp_jpeg_info in;
        if (dvpp_jpeg_probe(b.data, b.len, &in, &err) != DVPP_OK)
            goto out_fail;
        j = jpeg_json(&in);
    } else if (sniff(&b, argv[1]) == INPUT_PNG) {
        dvpp_png_info in;
        if (dvpp_png_probe(b.data, b.len, &in, &err) != DVPP_OK)
            goto out_fail;
        j = png_json(&in);
    } else {
        dvpp_err_set(&err, DVPP_EUNSUPPORTED, "file",
                     "not a JPEG or PNG file");
        goto out_fail;
    }
    json_object_set_new(j, "file", json_string(argv[1]));
    json_object_set_new(j, "bytes", json_integer((json_int_t)b.len));
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    fputc('\n', stdout);
    json_decref(j);
    rc = 0;
    goto out_free;
out_fail:
    rc = fail(argv[1], &err);
out_free:
    dvpp_buf_fini(&b);
    return rc;
}

typedef struct decode_args {
    const char *in;
    const char *out;
    dvpp_jpeg_decode_opts jpeg;
    dvpp_png_decode_opts png;
    dvpp_limits lim;
    unsigned shrink_w, shrink_h;
    int quality;
} decode_args;

enum {
    OPT_FORMAT = 256, OPT_ALIGN, OPT_PROFILE, OPT_SCALE, OPT_SHRINK, OPT_ROI,
    OPT_NO_ORIENT, OPT_PARTIAL, OPT_FAST_DCT, OPT_NOSMOOTH, OPT_ALPHA,
    OPT_BACKGROUND, OPT_QUALITY, OPT_MAX_BYTES, OPT_MAX_PIXELS, OPT_MAX_SIDE,
    OPT_MAX_SCANS,
};

static const struct option k_decode_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"align", required_argument, NULL, OPT_ALIGN},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"shrink-on-load", required_argument, NULL, OPT_SHRINK},
    {"roi", required_argument, NULL, OPT_ROI},
    {"no-orient", no_argument, NULL, OPT_NO_ORIENT},
    {"allow-partial", no_argument, NULL, OPT_PARTIAL},
    {"fast-dct", no_argument, NULL, OPT_FAST_DCT},
    {"nosmooth", no_argument, NULL, OPT_NOSMOOTH},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"background", required_argument, NULL, OPT_BACKGROUND},
    {"quality", required_argument, NULL, OPT_QUALITY},
    {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
    {"max-pixels", required_argument, NULL, OPT_MAX_PIXELS},
    {"max-side", required_argument, NULL, OPT_MAX_SIDE},
    {"max-scans", required_argument, NULL, OPT_MAX_SCANS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static bool parse_roi(const char *s, dvpp_jpeg_roi *r)
{
    unsigned x, y, w, h;
    char tail;

    if (sscanf(s, "%u,%u,%u,%u%c", &x, &y, &w, &h, &tail) != 4 || !w || !h)
        return false;
    *r = (dvpp_jpeg_roi){x, y, w, h};
    return true;
}

static bool parse_limit(const char *s, unsigned long long max,
                        unsigned long long *out)
{
    return ctl_parse_u64(s, out) && *out <= max;
}

/* Apply one option to @a; false with a message on a bad value. */
static bool apply_option(decode_args *a, int opt, const char *v)
{
    unsigned long long n;
    unsigned w, h;
    dvpp_pixfmt f;

    switch (opt) {
    case 'o':
        a->out = v;
        return true;
    case OPT_FORMAT:
        if (!dvpp_pixfmt_parse(v, &f))
            break;
        a->jpeg.format = a->png.format = f;
        return true;
    case OPT_ALIGN:
        if (!ctl_parse_size(v, &w, &h))
            break;
        a->jpeg.align_w = a->png.align_w = w;
        a->jpeg.align_h = a->png.align_h = h;
        return true;
    case OPT_PROFILE:
        if (!dvpp_profile_parse(v, &a->jpeg.profile))
            break;
        a->png.profile = a->jpeg.profile;
        return true;
    case OPT_SCALE:
        if (!ctl_parse_u64(v, &n) || n < 1 || n > 8)
            break;
        a->jpeg.scale_num = (uint8_t)n;
        return true;
    case OPT_SHRINK:
        return ctl_parse_size(v, &a->shrink_w, &a->shrink_h);
    case OPT_ROI:
        a->jpeg.has_roi = parse_roi(v, &a->jpeg.roi);
        return a->jpeg.has_roi;
    case OPT_NO_ORIENT:
        a->jpeg.no_orient = true;
        return true;
    case OPT_PARTIAL:
        a->jpeg.allow_partial = true;
        return true;
    case OPT_FAST_DCT:
        a->jpeg.fast_dct = true;
        return true;
    case OPT_NOSMOOTH:
        a->jpeg.fast_upsample = true;
        return true;
    case OPT_ALPHA:
        if (strcmp(v, "auto") == 0 || strcmp(v, "keep") == 0)
            a->png.alpha = DVPP_PNG_ALPHA_AUTO;
        else if (strcmp(v, "drop") == 0)
            a->png.alpha = DVPP_PNG_ALPHA_DROP;
        else if (strcmp(v, "composite") == 0)
            a->png.alpha = DVPP_PNG_ALPHA_COMPOSITE;
        else
            break;
        return true;
    case OPT_BACKGROUND: {
        unsigned rgb;
        char tail;
        if (strlen(v) != 6 || sscanf(v, "%6x%c", &rgb, &tail) != 1)
            break;
        a->png.background[0] = (uint8_t)(rgb >> 16);
        a->png.background[1] = (uint8_t)(rgb >> 8);
        a->png.background[2] = (uint8_t)rgb;
        return true;
    }
    case OPT_QUALITY:
        if (!ctl_parse_u64(v, &n) || n > 100)
            break;
        a->quality = (int)n;
        return true;
    case OPT_MAX_BYTES:
        return parse_limit(v, UINT64_MAX, (unsigned long long *)&a->lim.max_encoded_bytes);
    case OPT_MAX_PIXELS:
        return parse_limit(v, UINT64_MAX, (unsigned long long *)&a->lim.max_pixels);
    case OPT_MAX_SIDE:
        if (!parse_limit(v, UINT32_MAX, &n))
            break;
        a->lim.max_side = (uint32_t)n;
        return true;
    case OPT_MAX_SCANS:
        if (!parse_limit(v, UINT32_MAX, &n))
            break;
        a->lim.max_jpeg_scans = (uint32_t)n;
        return true;
    }
    fprintf(stderr, "dvppctl: bad value '%s' for an option\n", v ? v : "");
    return false;
}

static int parse_decode_args(int argc, char **argv, decode_args *a)
{
    int opt;

    memset(a, 0, sizeof(*a));
    dvpp_jpeg_decode_opts_init(&a->jpeg);
    dvpp_png_decode_opts_init(&a->png);
    a->png.format = DVPP_PIXEL_RGB;
    a->lim = dvpp_limits_default();
    a->quality = 95;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", k_decode_opts, NULL)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            exit(0);
        }
        if (opt == '?' || !apply_option(a, opt, optarg))
            return 2;
    }
    if (optind != argc - 1 || !a->out) {
        fprintf(stderr, "dvppctl decode: need one input FILE and -o OUT\n");
        return 2;
    }
    a->in = argv[optind];
    return 0;
}

static dvpp_status decode_jpeg(decode_args *a, const dvpp_buf *b,
                               dvpp_image *img, dvpp_err *err)
{
    if (a->shrink_w) {
        dvpp_jpeg_info in;
        dvpp_status st = dvpp_jpeg_probe(b->data, b->len, &in, err);
        if (st != DVPP_OK)
            return st;
        /* Orientation 5..8 swaps the sides the target refers to. */
        a->jpeg.scale_num = a->jpeg.no_orient || in.orientation < 5
                                ? dvpp_jpeg_shrink_scale(in.width, in.height,
                                                         a->shrink_w, a->shrink_h)
                                : dvpp_jpeg_shrink_scale(in.width, in.height,
                                                         a->shrink_h, a->shrink_w);
    }
    return dvpp_jpeg_decode(b->data, b->len, &a->jpeg, &a->lim, img, err);
}

static int cmd_decode(int argc, char **argv)
{
    decode_args a;
    dvpp_image img = {0};
    dvpp_err err;
    dvpp_buf b;
    dvpp_status st;
    int rc;

    rc = parse_decode_args(argc, argv, &a);
    if (rc)
        return rc;
    dvpp_err_clear(&err);
    dvpp_buf_init(&b);
    st = dvpp_buf_read_file(&b, a.in, a.lim.max_encoded_bytes, &err);
    if (st == DVPP_OK) {
        switch (sniff(&b, a.in)) {
        case INPUT_JPEG:
            st = decode_jpeg(&a, &b, &img, &err);
            break;
        case INPUT_PNG:
            st = dvpp_png_decode(b.data, b.len, &a.png, &a.lim, &img, &err);
            break;
        default:
            st = dvpp_err_set(&err, DVPP_EUNSUPPORTED, "file",
                              "not a JPEG or PNG file");
        }
    }
    if (st == DVPP_OK)
        st = ctl_write_image(a.out, &img, a.quality, &err);
    dvpp_image_free(&img);
    dvpp_buf_fini(&b);
    return st == DVPP_OK ? 0 : fail(a.in, &err);
}

static int cmd_version(void)
{
    printf("dvppctl %s\nsimd: %s (cpu supports %s)\ncodecs: jpeg (%s), png\n",
           DVPP_VERSION, dvpp_simd_name(dvpp_simd_active()),
           dvpp_simd_name(dvpp_cpu_detect()), dvpp_jpeg_library());
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(argv[1], "decode") == 0)
        return cmd_decode(argc - 1, argv + 1);
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0)
        return cmd_version();
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "dvppctl: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
