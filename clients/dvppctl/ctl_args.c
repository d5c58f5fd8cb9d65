/* dvppctl's one option table: every command parses with it and uses the
 * fields it needs, so an option means the same thing everywhere. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "dvpp_aipp_cfg.h"

enum {
    OPT_FORMAT = 256, OPT_ALIGN, OPT_PROFILE, OPT_SCALE, OPT_SHRINK, OPT_ROI,
    OPT_NO_ORIENT, OPT_PARTIAL, OPT_FAST_DCT, OPT_NOSMOOTH, OPT_ALPHA,
    OPT_BACKGROUND, OPT_QUALITY, OPT_MAX_BYTES, OPT_MAX_PIXELS, OPT_MAX_SIDE,
    OPT_MAX_SCANS, OPT_SIZE, OPT_MODE, OPT_INTERP, OPT_PARITY, OPT_ASCEND_MODE,
    OPT_PAD, OPT_CSC, OPT_RANGE, OPT_MARGINS, OPT_BORDER_TYPE, OPT_VALUE,
    OPT_INPUT, OPT_DECODE_FORMAT, OPT_CONFIG, OPT_DYNAMIC, OPT_OP, OPT_MEAN,
    OPT_STD, OPT_ORDER, OPT_LAYOUT, OPT_DTYPE, OPT_CHANNELS, OPT_STRICT,
    OPT_SOCKET, OPT_CONCURRENCY, OPT_EVERY, OPT_FPS, OPT_KEYFRAMES, OPT_START,
    OPT_END, OPT_MAX_FRAMES, OPT_THREADS, OPT_CODEC, OPT_BITRATE, OPT_GOP, OPT_RC,
    OPT_CRF, OPT_IDR,
};

static const struct option k_opts[] = {
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
    {"size", required_argument, NULL, OPT_SIZE},
    {"mode", required_argument, NULL, OPT_MODE},
    {"interp", required_argument, NULL, OPT_INTERP},
    {"parity", required_argument, NULL, OPT_PARITY},
    {"ascend-mode", required_argument, NULL, OPT_ASCEND_MODE},
    {"pad", required_argument, NULL, OPT_PAD},
    {"csc", required_argument, NULL, OPT_CSC},
    {"range", required_argument, NULL, OPT_RANGE},
    {"margins", required_argument, NULL, OPT_MARGINS},
    {"border-type", required_argument, NULL, OPT_BORDER_TYPE},
    {"value", required_argument, NULL, OPT_VALUE},
    {"input", required_argument, NULL, OPT_INPUT},
    {"decode-format", required_argument, NULL, OPT_DECODE_FORMAT},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"dynamic", required_argument, NULL, OPT_DYNAMIC},
    {"op", required_argument, NULL, OPT_OP},
    {"mean", required_argument, NULL, OPT_MEAN},
    {"std", required_argument, NULL, OPT_STD},
    {"order", required_argument, NULL, OPT_ORDER},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"channels", required_argument, NULL, OPT_CHANNELS},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"socket", required_argument, NULL, OPT_SOCKET},
    {"count", required_argument, NULL, 'n'},
    {"concurrency", required_argument, NULL, OPT_CONCURRENCY},
    {"every", required_argument, NULL, OPT_EVERY},
    {"fps", required_argument, NULL, OPT_FPS},
    {"keyframes", no_argument, NULL, OPT_KEYFRAMES},
    {"start", required_argument, NULL, OPT_START},
    {"end", required_argument, NULL, OPT_END},
    {"max-frames", required_argument, NULL, OPT_MAX_FRAMES},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"codec", required_argument, NULL, OPT_CODEC},
    {"bitrate", required_argument, NULL, OPT_BITRATE},
    {"gop", required_argument, NULL, OPT_GOP},
    {"rc", required_argument, NULL, OPT_RC},
    {"crf", required_argument, NULL, OPT_CRF},
    {"idr", required_argument, NULL, OPT_IDR},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

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

/* "[i:]L,T,R,B", inclusive as DVPP. */
static bool parse_roi(const char *s, dvpp_roi *r, unsigned *input)
{
    unsigned l, t, rr, b, i = 0;
    char tail;
    const char *colon = strchr(s, ':');

    if (colon) {
        if (sscanf(s, "%u:", &i) != 1)
            return false;
        s = colon + 1;
    }
    if (sscanf(s, "%u,%u,%u,%u%c", &l, &t, &rr, &b, &tail) != 4 || rr < l || b < t)
        return false;
    *r = (dvpp_roi){l, t, rr, b};
    *input = i;
    return true;
}

static bool parse_rgb(const char *v, uint8_t out[3])
{
    unsigned rgb;
    char tail;

    if (strlen(v) != 6 || sscanf(v, "%6x%c", &rgb, &tail) != 1)
        return false;
    out[0] = (uint8_t)(rgb >> 16);
    out[1] = (uint8_t)(rgb >> 8);
    out[2] = (uint8_t)rgb;
    return true;
}

static bool parse_margins(const char *v, dvpp_border *b)
{
    char tail;
    return sscanf(v, "%u,%u,%u,%u%c", &b->top, &b->bottom, &b->left, &b->right,
                  &tail) == 4;
}

static bool parse_values(const char *v, double out[4])
{
    int n = sscanf(v, "%lf,%lf,%lf,%lf", &out[0], &out[1], &out[2], &out[3]);
    return n >= 1;
}

static bool parse_limit(const char *s, unsigned long long max,
                        unsigned long long *out)
{
    return ctl_parse_u64(s, out) && *out <= max;
}

/* A finite, non-negative number of seconds (or frames per second). */
static bool parse_seconds(const char *v, double *out)
{
    char *end;
    double d;

    errno = 0;
    d = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(d) || d < 0 || d > 1e9)
        return false;
    *out = d;
    return true;
}

static unsigned long long gcd(unsigned long long a, unsigned long long b)
{
    while (b) {
        unsigned long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A frame rate: "N/D" (30000/1001) or a decimal (29.97, kept to 1/1000). */
static bool parse_rate(const char *v, uint32_t *num, uint32_t *den, double *fps)
{
    unsigned long long n, d = 1000, g;
    const char *slash = strchr(v, '/');
    double x;

    if (slash) {
        char head[32];
        size_t len = (size_t)(slash - v);
        if (len == 0 || len >= sizeof(head))
            return false;
        memcpy(head, v, len);
        head[len] = '\0';
        if (!ctl_parse_u64(head, &n) || !ctl_parse_u64(slash + 1, &d))
            return false;
    } else {
        if (!parse_seconds(v, &x) || x > 1e6)
            return false;
        n = (unsigned long long)llround(x * 1000.0);
    }
    if (n == 0 || d == 0 || n > UINT32_MAX || d > UINT32_MAX)
        return false;
    g = gcd(n, d);
    *num = (uint32_t)(n / g);
    *den = (uint32_t)(d / g);
    *fps = (double)n / (double)d;
    return true;
}

static bool parse_u32(const char *v, unsigned long long lo, unsigned long long hi,
                      uint32_t *out)
{
    unsigned long long n;

    if (!ctl_parse_u64(v, &n) || n < lo || n > hi)
        return false;
    *out = (uint32_t)n;
    return true;
}

/* Sampling of video-decode; both video commands read --fps and --threads
 * (a sampling rate for one, the frame rate for the other). */
static bool apply_vdec_option(ctl_args *a, int opt, const char *v)
{
    uint32_t n;

    switch (opt) {
    case OPT_EVERY:
        return parse_u32(v, 1, UINT32_MAX, &a->vdec.every);
    case OPT_FPS:
        return parse_rate(v, &a->venc.fps_num, &a->venc.fps_den, &a->vdec.fps);
    case OPT_KEYFRAMES:
        a->vdec.keyframes_only = true;
        return true;
    case OPT_START:
        return parse_seconds(v, &a->vdec.start_s);
    case OPT_END:
        return parse_seconds(v, &a->vdec.end_s) && a->vdec.end_s > 0;
    case OPT_MAX_FRAMES:
        return parse_u32(v, 1, UINT32_MAX, &a->vdec.max_frames);
    case OPT_THREADS:
        if (!parse_u32(v, 1, 64, &n))
            return false;
        a->vdec.threads = a->venc.threads = n;
        return true;
    }
    return false;
}

/* The encoder's knobs (video-encode). */
static bool apply_venc_option(ctl_args *a, int opt, const char *v)
{
    switch (opt) {
    case OPT_CODEC:
        a->codec_set = dvpp_video_codec_parse(v, &a->venc.codec);
        return a->codec_set;
    case OPT_BITRATE:
        a->bitrate_set = parse_u32(v, 10, 500000, &a->venc.bitrate_kbps);
        return a->bitrate_set;
    case OPT_GOP:
        return parse_u32(v, 1, 65536, &a->venc.gop);
    case OPT_RC:
        a->rc_set = dvpp_venc_rc_parse(v, &a->venc.rc);
        return a->rc_set;
    case OPT_CRF:
        a->crf_set = parse_u32(v, 0, 51, &a->venc.crf);
        return a->crf_set;
    case OPT_IDR:
        a->idr = v;
        return true;
    }
    return apply_vdec_option(a, opt, v);
}

static bool apply_decode_option(ctl_args *a, int opt, const char *v)
{
    unsigned long long n;
    unsigned w, h;

    switch (opt) {
    case OPT_ALIGN:
        if (!ctl_parse_size(v, &w, &h))
            return false;
        a->jpeg.align_w = a->png.align_w = w;
        a->jpeg.align_h = a->png.align_h = h;
        return true;
    case OPT_SCALE:
        if (!ctl_parse_u64(v, &n) || n < 1 || n > 8)
            return false;
        a->jpeg.scale_num = (uint8_t)n;
        return true;
    case OPT_SHRINK: /* WxH, or "auto": the resize target */
        a->shrink_on_load = true;
        return strcmp(v, "auto") == 0 || ctl_parse_size(v, &a->shrink_w, &a->shrink_h);
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
            return false;
        return true;
    case OPT_BACKGROUND:
        return parse_rgb(v, a->png.background);
    case OPT_MAX_BYTES:
        return parse_limit(v, UINT64_MAX, (unsigned long long *)&a->lim.max_encoded_bytes);
    case OPT_MAX_PIXELS:
        return parse_limit(v, UINT64_MAX, (unsigned long long *)&a->lim.max_pixels);
    case OPT_MAX_SIDE:
        if (!parse_limit(v, UINT32_MAX, &n))
            return false;
        a->lim.max_side = (uint32_t)n;
        return true;
    case OPT_MAX_SCANS:
        if (!parse_limit(v, UINT32_MAX, &n))
            return false;
        a->lim.max_jpeg_scans = (uint32_t)n;
        return true;
    }
    return apply_venc_option(a, opt, v);
}

static bool apply_vpc_option(ctl_args *a, int opt, const char *v)
{
    unsigned long long n;

    switch (opt) {
    case OPT_SIZE:
        a->size_set = ctl_parse_size(v, &a->size_w, &a->size_h);
        if (!a->size_set && ctl_parse_u64(v, &n) && n > 0 && n <= 1u << 20) {
            /* One number: the side for --mode shorter/longer. */
            a->size_w = a->size_h = (unsigned)n;
            a->size_set = true;
        }
        return a->size_set;
    case OPT_MODE:
        return dvpp_resize_mode_parse(v, &a->mode);
    case OPT_INTERP:
        a->interp_set = true;
        return dvpp_interp_parse(v, &a->resize.interp);
    case OPT_PARITY:
        return dvpp_parity_parse(v, &a->resize.parity);
    case OPT_ASCEND_MODE:
        if (!ctl_parse_u64(v, &n) || n > 4)
            return false;
        a->resize.ascend_mode = (int)n;
        return true;
    case OPT_PAD:
        return parse_rgb(v, a->pad);
    case OPT_CSC:
        return dvpp_csc_parse_matrix(v, &a->matrix);
    case OPT_RANGE: {
        bool full;
        if (!dvpp_csc_parse_range(v, &full))
            return false;
        a->range = full ? 1 : 0;
        return true;
    }
    case OPT_ROI:
        if (a->nrois == CTL_MAX_ROIS)
            return false;
        if (!parse_roi(v, &a->rois[a->nrois], &a->roi_input[a->nrois]))
            return false;
        a->nrois++;
        return true;
    case OPT_MARGINS:
        a->margins_set = parse_margins(v, &a->border);
        return a->margins_set;
    case OPT_BORDER_TYPE:
        return dvpp_border_type_parse(v, &a->border.type);
    case OPT_VALUE:
        return parse_values(v, a->border.value);
    }
    return apply_decode_option(a, opt, v);
}

static bool parse_triple(const char *v, double out[3])
{
    char tail;
    int n = sscanf(v, "%lf,%lf,%lf%c", &out[0], &out[1], &out[2], &tail);
    if (n == 1)
        out[1] = out[2] = out[0];
    return n == 1 || n == 3;
}

static bool apply_norm_option(ctl_args *a, int opt, const char *v)
{
    unsigned long long n;

    switch (opt) {
    case OPT_CONFIG:
        a->config = v;
        return true;
    case OPT_DYNAMIC:
        a->dynamic = v;
        return true;
    case OPT_OP:
        if (!ctl_parse_u64(v, &n) || n >= DVPP_AIPP_MAX_OPS)
            return false;
        a->op_index = (unsigned)n;
        return true;
    case OPT_MEAN:
        return parse_triple(v, a->mean);
    case OPT_STD:
        a->std_set = parse_triple(v, a->std);
        return a->std_set && a->std[0] != 0 && a->std[1] != 0 && a->std[2] != 0;
    case OPT_ORDER:
        if (strcmp(v, "rgb") != 0 && strcmp(v, "bgr") != 0)
            return false;
        a->bgr = strcmp(v, "bgr") == 0;
        return true;
    case OPT_LAYOUT:
        a->layout_set = dvpp_layout_parse(v, &a->layout);
        return a->layout_set;
    case OPT_DTYPE:
        a->dtype_set = dvpp_dtype_parse(v, &a->dtype);
        return a->dtype_set;
    case OPT_CHANNELS:
        if (!ctl_parse_u64(v, &n) || n > 256)
            return false;
        a->channels = (unsigned)n;
        return true;
    case OPT_STRICT:
        a->strict = true;
        return true;
    }
    return apply_vpc_option(a, opt, v);
}

/* The daemon's options: where it is, and how hard bench pushes it. */
static bool apply_daemon_option(ctl_args *a, int opt, const char *v)
{
    unsigned long long n;

    switch (opt) {
    case OPT_SOCKET:
        a->socket = v;
        return true;
    case 'n':
        return ctl_parse_u64(v, &a->count) && a->count > 0;
    case OPT_CONCURRENCY:
        /* More in flight than a connection's default max_inflight (256)
         * would only be refused. */
        if (!ctl_parse_u64(v, &n) || n == 0 || n > 256)
            return false;
        a->concurrency = (unsigned)n;
        return true;
    }
    return apply_norm_option(a, opt, v);
}

static bool apply_option(ctl_args *a, int opt, const char *v)
{
    unsigned long long n;

    switch (opt) {
    case 'o':
        a->out = v;
        return true;
    case OPT_FORMAT:
        a->format_set = dvpp_pixfmt_parse(v, &a->format);
        return a->format_set;
    case OPT_DECODE_FORMAT:
        a->decode_format_set = dvpp_pixfmt_parse(v, &a->decode_format);
        return a->decode_format_set;
    case OPT_INPUT:
        a->input_spec = v;
        return true;
    case OPT_PROFILE:
        if (a->profile_is_codec) { /* video-encode: the H.264/H.265 profile */
            if (strlen(v) >= sizeof(a->venc.profile))
                return false;
            memcpy(a->venc.profile, v, strlen(v) + 1);
            return true;
        }
        if (!dvpp_profile_parse(v, &a->jpeg.profile))
            return false;
        a->png.profile = a->jpeg.profile;
        return true;
    case OPT_QUALITY:
        if (!ctl_parse_u64(v, &n) || n > 100)
            return false;
        a->quality = (int)n;
        return true;
    case OPT_SCALE:
        if (!a->scale_is_norm)
            break;
        /* preprocess: the multiplier of (x - mean), as blobFromImage's */
        a->norm_scale = strtod(v, NULL);
        a->norm_scale_set = a->norm_scale > 0;
        return a->norm_scale_set;
    }
    return apply_daemon_option(a, opt, v);
}

static void defaults(ctl_args *a)
{
    memset(a, 0, sizeof(*a));
    dvpp_jpeg_decode_opts_init(&a->jpeg);
    dvpp_png_decode_opts_init(&a->png);
    a->png.format = DVPP_PIXEL_RGB;
    a->lim = dvpp_limits_default();
    a->quality = 95;
    a->mode = DVPP_RESIZE_STRETCH;
    dvpp_resize_opts_init(&a->resize);
    a->matrix = DVPP_CSC_BT601;
    a->range = -1;
    a->border.type = DVPP_BORDER_CONSTANT;
    a->border.level = DVPP_SIMD_AVX512;
    a->std[0] = a->std[1] = a->std[2] = 1.0;
    a->socket = getenv("DVPPD_SOCKET");
    a->count = 100;
    a->concurrency = 4;
    dvpp_vdec_opts_init(&a->vdec);
    dvpp_venc_opts_init(&a->venc);
}

bool ctl_use_socket(const ctl_args *a)
{
    return a->socket && *a->socket;
}

int ctl_parse_options(int argc, char **argv, ctl_args *a)
{
    int opt;

    defaults(a);
    a->scale_is_norm = strcmp(argv[0], "preprocess") == 0 ||
                       strcmp(argv[0], "batch") == 0 ||
                       strcmp(argv[0], "bench") == 0 ||
                       strcmp(argv[0], "video-decode") == 0;
    a->profile_is_codec = strcmp(argv[0], "video-encode") == 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:hn:", k_opts, NULL)) != -1) {
        if (opt == 'h') {
            ctl_usage(stdout);
            exit(0);
        }
        if (opt == '?')
            return 2;
        if (!apply_option(a, opt, optarg)) {
            fprintf(stderr, "dvppctl %s: bad option value '%s'\n", argv[0],
                    optarg ? optarg : "");
            return 2;
        }
    }
    for (; optind < argc; optind++) {
        if (a->ninputs == CTL_MAX_INPUTS) {
            fprintf(stderr, "dvppctl: more than %d inputs\n", CTL_MAX_INPUTS);
            return 2;
        }
        a->inputs[a->ninputs++] = argv[optind];
    }
    return 0;
}

int ctl_parse_args(int argc, char **argv, ctl_args *a)
{
    int rc = ctl_parse_options(argc, argv, a);

    if (rc)
        return rc;
    if (a->ninputs == 0 || !a->out) {
        fprintf(stderr, "dvppctl %s: need an input FILE and -o OUT\n", argv[0]);
        return 2;
    }
    return 0;
}

int ctl_fail(const char *what, const dvpp_err *err)
{
    fprintf(stderr, "dvppctl: %s: %s (%s)\n", what,
            err->msg[0] ? err->msg : dvpp_strerror(err->status),
            dvpp_status_name(err->status));
    return 1;
}
