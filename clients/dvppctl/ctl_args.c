/* dvppctl's one option table: every command parses with it and uses the
 * fields it needs, so an option means the same thing everywhere. */
#include <ctype.h>
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
    OPT_STD, OPT_ORDER, OPT_LAYOUT, OPT_DTYPE, OPT_CHANNELS, OPT_STRICT, OPT_SHARD,
    OPT_SOCKET, OPT_CONCURRENCY, OPT_EVERY, OPT_FPS, OPT_KEYFRAMES, OPT_START,
    OPT_END, OPT_MAX_FRAMES, OPT_THREADS, OPT_CODEC, OPT_BITRATE, OPT_GOP, OPT_RC,
    OPT_CRF, OPT_IDR, OPT_LOW_DELAY, OPT_DUMP, OPT_ROUND, OPT_PRESET, OPT_TRACE,
};

/* One option: its getopt entry and, for an option that takes one, the
 * value it wants (the words of the error that refuses another). */
typedef struct ctl_opt {
    const char *name;       /* the long name, without "--" */
    int has_arg;            /* required_argument or no_argument */
    int val;                /* what getopt_long returns for it */
    const char *want;       /* the value it takes; NULL for a flag */
} ctl_opt;

#define ARG required_argument
#define FLAG no_argument

static const ctl_opt k_opts[] = {
    {"output", ARG, 'o', "a file name"},
    {"format", ARG, OPT_FORMAT, "a pixel format (rgb, bgr, rgba, gray, nv12, i420, ...)"},
    {"align", ARG, OPT_ALIGN, "WxH (stride alignment in pixels x rows, e.g. 128x16)"},
    {"profile", ARG, OPT_PROFILE, "native, ascend310 or ascend310p"},
    {"scale", ARG, OPT_SCALE, "N, the JPEG DCT scale N/8 with N in 1..8"},
    {"shrink-on-load", ARG, OPT_SHRINK, "WxH or auto"},
    {"roi", ARG, OPT_ROI, "[i:]L,T,R,B (inclusive corners, R >= L, B >= T)"},
    {"no-orient", FLAG, OPT_NO_ORIENT, NULL},
    {"allow-partial", FLAG, OPT_PARTIAL, NULL},
    {"fast-dct", FLAG, OPT_FAST_DCT, NULL},
    {"nosmooth", FLAG, OPT_NOSMOOTH, NULL},
    {"alpha", ARG, OPT_ALPHA, "auto, drop or composite"},
    {"background", ARG, OPT_BACKGROUND, "RRGGBB (six hex digits)"},
    {"quality", ARG, OPT_QUALITY, "Q in 0..100"},
    {"max-bytes", ARG, OPT_MAX_BYTES, "a byte count"},
    {"max-pixels", ARG, OPT_MAX_PIXELS, "a pixel count"},
    {"max-side", ARG, OPT_MAX_SIDE, "a side in pixels (at most 4294967295)"},
    {"max-scans", ARG, OPT_MAX_SCANS, "a scan count (at most 4294967295)"},
    {"size", ARG, OPT_SIZE, "WxH, or one side N for --mode shorter|longer"},
    {"mode", ARG, OPT_MODE, "stretch, fit, fill, letterbox, shorter or longer"},
    {"round", ARG, OPT_ROUND, "nearest or floor (the other side of --mode shorter|longer)"},
    {"preset", ARG, OPT_PRESET, "a preset name (dvppctl preset list)"},
    {"interp", ARG, OPT_INTERP, "nearest, bilinear, bicubic, area, lanczos, box or hamming"},
    {"parity", ARG, OPT_PARITY, "cv2, pil, tf or ascend"},
    {"ascend-mode", ARG, OPT_ASCEND_MODE, "N in 0..4"},
    {"pad", ARG, OPT_PAD, "RRGGBB (six hex digits)"},
    {"csc", ARG, OPT_CSC, "bt601 or bt709"},
    {"range", ARG, OPT_RANGE, "narrow or full"},
    {"margins", ARG, OPT_MARGINS, "T,B,L,R"},
    {"border-type", ARG, OPT_BORDER_TYPE, "constant, replicate, reflect or reflect101"},
    {"value", ARG, OPT_VALUE, "v0[,v1,v2,v3]"},
    {"input", ARG, OPT_INPUT, "FMT[:WxH]"},
    {"decode-format", ARG, OPT_DECODE_FORMAT, "a pixel format (rgb, bgr, gray, nv12, ...)"},
    {"config", ARG, OPT_CONFIG, "an aipp_op config file"},
    {"dynamic", ARG, OPT_DYNAMIC, "a dynamic AIPP parameter file"},
    {"op", ARG, OPT_OP, "an aipp_op index"},
    {"mean", ARG, OPT_MEAN, "R,G,B or one number"},
    {"std", ARG, OPT_STD, "R,G,B or one number, none of them 0"},
    {"order", ARG, OPT_ORDER, "rgb or bgr"},
    {"layout", ARG, OPT_LAYOUT, "nchw, nhwc or nc1hwc0"},
    {"dtype", ARG, OPT_DTYPE, "f32, f16, i8 or u8"},
    {"channels", ARG, OPT_CHANNELS, "N in 0..256 (0: one per CPU)"},
    {"strict", FLAG, OPT_STRICT, NULL},
    {"shard", ARG, OPT_SHARD, "I/N with 0 <= I < N and 1 <= N <= 1048576 (e.g. 0/4)"},
    {"socket", ARG, OPT_SOCKET, "the daemon's socket path"},
    {"dump", ARG, OPT_DUMP, "a folder for the run's intermediates (docs/dump.md)"},
    {"trace", ARG, OPT_TRACE, "write the job's Chrome trace JSON here (docs/tracing.md)"},
    {"count", ARG, 'n', "N >= 1 jobs"},
    {"concurrency", ARG, OPT_CONCURRENCY, "K in 1..256 jobs in flight"},
    {"every", ARG, OPT_EVERY, "N >= 1"},
    {"fps", ARG, OPT_FPS, "a rate: N, N.NNN or N/D, above 0"},
    {"keyframes", FLAG, OPT_KEYFRAMES, NULL},
    {"start", ARG, OPT_START, "seconds >= 0"},
    {"end", ARG, OPT_END, "seconds > 0"},
    {"max-frames", ARG, OPT_MAX_FRAMES, "N >= 1"},
    {"threads", ARG, OPT_THREADS, "N in 1..64"},
    {"codec", ARG, OPT_CODEC, "h264 or h265"},
    {"bitrate", ARG, OPT_BITRATE, "kbit/s in 10..500000"},
    {"gop", ARG, OPT_GOP, "N in 1..65536"},
    {"rc", ARG, OPT_RC, "crf, cbr or vbr"},
    {"crf", ARG, OPT_CRF, "Q in 0..51"},
    {"idr", ARG, OPT_IDR, "frame indices N,N,..."},
    {"low-delay", FLAG, OPT_LOW_DELAY, NULL},
    {"help", FLAG, 'h', NULL},
};

#undef ARG
#undef FLAG

#define NOPTS (sizeof(k_opts) / sizeof(k_opts[0]))

static const ctl_opt *opt_by_val(int val)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (k_opts[i].val == val)
            return &k_opts[i];
    return NULL;
}

/* What @o wants in this command: --scale and --profile mean other things
 * to some commands. */
static const char *opt_want(const ctl_args *a, const ctl_opt *o)
{
    if (o->val == OPT_SCALE && a->scale_is_norm)
        return "S > 0, the multiplier of (x - mean)";
    if (o->val == OPT_PROFILE && a->profile_is_codec)
        return "a codec profile (baseline, main, high, ...)";
    return o->want;
}

/* How the user spells @o: -o and -n have short forms. */
static void opt_spelling(const ctl_opt *o, char *buf, size_t cap)
{
    if (o->val == 'o' || o->val == 'n' || o->val == 'h')
        snprintf(buf, cap, "-%c/--%s", o->val, o->name);
    else
        snprintf(buf, cap, "--%s", o->name);
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

/* A finite number above 0, the whole string. */
static bool parse_multiplier(const char *v, double *out)
{
    char *end;
    double d;

    errno = 0;
    d = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(d) || d <= 0)
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
    case OPT_LOW_DELAY:
        a->venc.low_delay = true;
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
    case OPT_ROUND:
        return dvpp_resize_round_parse(v, &a->round);
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

/* batch --shard I/N: block I of N of the input list. Both decimal; a
 * Job's "$(JOB_COMPLETION_INDEX)/N" arrives here already expanded. */
static bool parse_shard(const char *v, ctl_args *a)
{
    const char *slash = strchr(v, '/');
    unsigned long long i, n;
    char first[24];

    if (!slash || (size_t)(slash - v) >= sizeof(first))
        return false;
    memcpy(first, v, (size_t)(slash - v));
    first[slash - v] = '\0';
    if (!ctl_parse_u64(first, &i) || !ctl_parse_u64(slash + 1, &n) || n == 0 ||
        n > CTL_MAX_LISTED || i >= n)
        return false;
    a->shard_index = (unsigned)i;
    a->shard_count = (unsigned)n;
    return true;
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
    case OPT_SHARD:
        return parse_shard(v, a);
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
    case OPT_DUMP:
        a->dump = v;
        return v[0] != '\0';
    case OPT_TRACE:
        a->trace = v;
        return v[0] != '\0';
    case OPT_PRESET:
        a->preset = v;
        return v[0] != '\0';
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
        a->norm_scale_set = parse_multiplier(v, &a->norm_scale);
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
    a->border.level = DVPP_SIMD_BEST;
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

/* A value that is really the next option ("-o", "--size", "--size=..."):
 * the option before it was given no value of its own. Negative numbers
 * ("-1", "-.5") are values. */
static bool looks_like_option(const char *v)
{
    return v[0] == '-' &&
           (isalpha((unsigned char)v[1]) || (v[1] == '-' && isalpha((unsigned char)v[2])));
}

/* Why getopt_long returned '?' for the option at argv[optind - 1]: an
 * unknown or ambiguous name, or a value given to a flag. */
static void report_unknown(const char *cmd, const char *arg, int optopt_val)
{
    const ctl_opt *o = optopt_val ? opt_by_val(optopt_val) : NULL;
    char name[64], list[512];
    size_t len, n = 0, used = 0;

    if (o && o->has_arg == no_argument) {
        opt_spelling(o, name, sizeof(name));
        fprintf(stderr, "dvppctl %s: %s takes no value (got '%s')\n", cmd, name, arg);
        return;
    }
    if (optopt_val || strncmp(arg, "--", 2) != 0) {
        fprintf(stderr, "dvppctl %s: unknown option '%s' (dvppctl help lists them)\n",
                cmd, arg);
        return;
    }
    len = strcspn(arg + 2, "=");
    list[0] = '\0';
    for (size_t i = 0; i < NOPTS; i++) {
        if (strncmp(k_opts[i].name, arg + 2, len) != 0)
            continue;
        n++;
        if (used < sizeof(list))
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s--%s",
                                     used ? ", " : "", k_opts[i].name);
    }
    if (n > 1)
        fprintf(stderr, "dvppctl %s: '%.*s' is ambiguous: %s\n", cmd, (int)len + 2, arg,
                list);
    else
        fprintf(stderr, "dvppctl %s: unknown option '%s' (dvppctl help lists them)\n",
                cmd, arg);
}

/* The value @v of option @opt, taken from its own argv element when
 * @separate: applied, or 2 after saying which option wanted what. */
static int take_value(ctl_args *a, const char *cmd, int opt, const char *v, bool separate)
{
    const ctl_opt *o = opt_by_val(opt);
    char name[64];

    opt_spelling(o, name, sizeof(name));
    if (separate && looks_like_option(v)) {
        fprintf(stderr, "dvppctl %s: %s needs a value (%s) before %s\n", cmd, name,
                opt_want(a, o), v);
        return 2;
    }
    if (!apply_option(a, opt, v)) {
        fprintf(stderr, "dvppctl %s: %s wants %s, not '%s'\n", cmd, name, opt_want(a, o),
                v);
        return 2;
    }
    return 0;
}

/* Options that contradict each other, refused with the daemon's words. */
static int check_pairs(const ctl_args *a, const char *cmd)
{
    if (a->round != DVPP_RESIZE_ROUND_NEAREST && a->mode != DVPP_RESIZE_SHORTER &&
        a->mode != DVPP_RESIZE_LONGER) {
        fprintf(stderr, "dvppctl %s: --round %s: only for --mode shorter or longer\n", cmd,
                dvpp_resize_round_name(a->round));
        return 2;
    }
    if (a->scale_is_norm && a->std_set && a->norm_scale_set) {
        /* dvppd_spec.c refuses the pair in the same words */
        fprintf(stderr, "dvppctl %s: --std and --scale: give std (torchvision) or scale "
                        "(blobFromImage), not both\n", cmd);
        return 2;
    }
    return 0;
}

/* The options that say what the pipeline does (decode, VPC, normalise,
 * AIPP): a preset says all of that itself. Limits, the output, the
 * daemon and --config (with --preset: the presets' config file) are not. */
static bool describes_pipeline(int opt)
{
    static const int k_pipe[] = {
        OPT_FORMAT, OPT_ALIGN, OPT_PROFILE, OPT_SCALE, OPT_SHRINK, OPT_ROI, OPT_NO_ORIENT,
        OPT_PARTIAL, OPT_FAST_DCT, OPT_NOSMOOTH, OPT_ALPHA, OPT_BACKGROUND, OPT_SIZE,
        OPT_MODE, OPT_ROUND, OPT_INTERP, OPT_PARITY, OPT_ASCEND_MODE, OPT_PAD, OPT_CSC,
        OPT_RANGE, OPT_MARGINS, OPT_BORDER_TYPE, OPT_VALUE, OPT_INPUT, OPT_DECODE_FORMAT,
        OPT_DYNAMIC, OPT_OP, OPT_MEAN, OPT_STD, OPT_ORDER, OPT_LAYOUT, OPT_DTYPE,
    };

    for (size_t i = 0; i < sizeof(k_pipe) / sizeof(k_pipe[0]); i++)
        if (k_pipe[i] == opt)
            return true;
    return false;
}

/* --trace FILE: a daemon's job (--socket), or preprocess's own run here
 * (ctl_trace.c: the only local command that runs the daemon's pipeline);
 * not with --dump, whose watch changes the plan the trace would show. */
static int check_trace(const ctl_args *a, const char *cmd)
{
    if (!a->trace)
        return 0;
    if (!ctl_use_socket(a) && strcmp(cmd, "preprocess") != 0) {
        fprintf(stderr, "dvppctl %s: --trace needs --socket (without a daemon only "
                        "preprocess records a trace)\n", cmd);
        return 2;
    }
    if (a->dump) {
        fprintf(stderr, "dvppctl %s: --trace and --dump: one at a time\n", cmd);
        return 2;
    }
    return 0;
}

int ctl_parse_options(int argc, char **argv, ctl_args *a)
{
    struct option longopts[NOPTS + 1];
    int opt, rc;

    defaults(a);
    a->scale_is_norm = strcmp(argv[0], "preprocess") == 0 ||
                       strcmp(argv[0], "batch") == 0 ||
                       strcmp(argv[0], "bench") == 0 ||
                       strcmp(argv[0], "video-decode") == 0;
    a->profile_is_codec = strcmp(argv[0], "video-encode") == 0;
    a->list_inputs = strcmp(argv[0], "batch") == 0;
    for (size_t i = 0; i < NOPTS; i++)
        longopts[i] = (struct option){k_opts[i].name, k_opts[i].has_arg, NULL, k_opts[i].val};
    longopts[NOPTS] = (struct option){NULL, 0, NULL, 0};
    optind = 1;
    opterr = 0; /* every message is ours, naming the option and what it wants */
    while ((opt = getopt_long(argc, argv, ":o:hn:", longopts, NULL)) != -1) {
        if (opt == 'h') {
            ctl_usage(stdout);
            exit(0);
        }
        if (opt == ':') {
            const ctl_opt *o = opt_by_val(optopt);
            char name[64];
            if (!o)
                return 2;
            opt_spelling(o, name, sizeof(name));
            fprintf(stderr, "dvppctl %s: %s needs a value (%s)\n", argv[0], name,
                    opt_want(a, o));
            return 2;
        }
        if (opt == '?') {
            report_unknown(argv[0], argv[optind - 1], optopt);
            return 2;
        }
        rc = opt_by_val(opt) && opt_by_val(opt)->has_arg == required_argument
                 ? take_value(a, argv[0], opt, optarg, optarg == argv[optind - 1])
                 : (apply_option(a, opt, optarg) ? 0 : 2);
        if (rc)
            return rc;
        if (!a->pipeline_flag && describes_pipeline(opt))
            a->pipeline_flag = opt_by_val(opt)->name;
    }
    /* getopt_long has moved the operands to the end */
    a->operands = argv + optind;
    a->noperands = (unsigned)(argc - optind);
    for (; optind < argc; optind++) {
        if (a->ninputs == CTL_MAX_INPUTS && a->list_inputs)
            break;
        if (a->ninputs == CTL_MAX_INPUTS) {
            fprintf(stderr, "dvppctl: more than %d inputs\n", CTL_MAX_INPUTS);
            return 2;
        }
        a->inputs[a->ninputs++] = argv[optind];
    }
    rc = check_trace(a, argv[0]);
    return rc ? rc : check_pairs(a, argv[0]);
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
