/* dvppd_spec: query parameters and JSON specs -> dvpp_pipeline. */
#include "dvppd_spec.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_mem.h"

/* --- what either syntax collects before the pipeline is assembled ---------- */

typedef struct draft {
    const dvppd_spec_env *env;
    dvppd_spec *s;
    bool has_crop;
    dvpp_roi crop;
    bool has_resize, has_w, has_h;
    dvpp_pipe_resize rz;
    bool has_norm, std_set, scale_set;
    double mult;                 /* scale= (blobFromImage multiplier) */
    const char *aipp_name;       /* borrowed from the request */
    bool aipp_inline;
    unsigned aipp_op;
    bool has_aipp_opts;
    const char *format;          /* output format name, borrowed */
    bool has_quality, has_align;
    bool shrink_set;             /* shrink_on_load given explicitly */
} draft;

static void draft_init(draft *d, const dvppd_spec_env *env, dvppd_spec *s)
{
    memset(d, 0, sizeof(*d));
    d->env = env;
    d->s = s;
    memset(s, 0, sizeof(*s));
    dvpp_pipeline_init(&s->pipe);
    d->rz.mode = DVPP_RESIZE_STRETCH;
    dvpp_resize_opts_init(&d->rz.opts);
}

/* --- value parsers ------------------------------------------------------------ */

bool dvppd_parse_u32(const char *v, uint32_t max, uint32_t *out)
{
    unsigned long long n;
    char *end;

    if (!v || *v < '0' || *v > '9')
        return false;
    errno = 0;
    n = strtoull(v, &end, 10);
    if (errno || *end || n > max)
        return false;
    *out = (uint32_t)n;
    return true;
}



static bool parse_flag(const char *v, bool *out)
{
    if (!v || !strcmp(v, "1") || !strcmp(v, "true") || !*v) {
        *out = true;
        return true;
    }
    if (!strcmp(v, "0") || !strcmp(v, "false")) {
        *out = false;
        return true;
    }
    return false;
}

static bool parse_size(const char *v, uint32_t *w, uint32_t *h)
{
    char a[16], b[16];
    const char *x = v ? strchr(v, 'x') : NULL;

    if (!x || (size_t)(x - v) >= sizeof(a) || strlen(x + 1) >= sizeof(b))
        return false;
    memcpy(a, v, (size_t)(x - v));
    a[x - v] = '\0';
    memcpy(b, x + 1, strlen(x + 1) + 1);
    return dvppd_parse_u32(a, 1u << 16, w) && dvppd_parse_u32(b, 1u << 16, h);
}

/* "a,b,c,d" of u32 */
static bool parse_u32_list(const char *v, uint32_t *out, int n)
{
    const char *p = v;

    for (int i = 0; i < n; i++) {
        char num[16];
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if ((i < n - 1) != (comma != NULL) || len == 0 || len >= sizeof(num))
            return false;
        memcpy(num, p, len);
        num[len] = '\0';
        if (!dvppd_parse_u32(num, UINT32_MAX, &out[i]))
            return false;
        p += len + (comma ? 1 : 0);
    }
    return true;
}

static bool parse_rgb(const char *v, uint8_t out[3])
{
    unsigned long rgb;
    char *end;

    if (!v || strlen(v) != 6 || strspn(v, "0123456789abcdefABCDEF") != 6)
        return false;
    rgb = strtoul(v, &end, 16);
    out[0] = (uint8_t)(rgb >> 16), out[1] = (uint8_t)(rgb >> 8), out[2] = (uint8_t)rgb;
    return true;
}

static bool parse_roi(const char *v, dvpp_roi *r)
{
    uint32_t a[4];

    if (!parse_u32_list(v, a, 4) || a[2] < a[0] || a[3] < a[1])
        return false;
    *r = (dvpp_roi){a[0], a[1], a[2], a[3]};
    return true;
}

static bool parse_positive(const char *v, double *out)
{
    char *end;

    if (!v || !*v)
        return false;
    errno = 0;
    *out = strtod(v, &end);
    return !errno && !*end && isfinite(*out) && *out > 0;
}

/* raw=FORMAT:WxH */
static bool parse_raw(const char *v, dvpp_pipe_raw *raw)
{
    char fmt[32];
    const char *colon = v ? strchr(v, ':') : NULL;

    if (!colon || (size_t)(colon - v) >= sizeof(fmt))
        return false;
    memcpy(fmt, v, (size_t)(colon - v));
    fmt[colon - v] = '\0';
    memset(raw, 0, sizeof(*raw));
    return dvpp_pixfmt_parse(fmt, &raw->format) &&
           parse_size(colon + 1, &raw->width, &raw->height);
}

/* "path.key" into @f (truncated to fit: error fields are for people). */
static void join(char *f, size_t n, const char *path, const char *key)
{
    if (snprintf(f, n, "%s.%s", path, key) >= (int)n)
        f[n - 1] = '\0';
}

static dvpp_status bad(dvpp_err *err, const char *field, const char *why)
{
    return dvpp_err_set(err, DVPP_EINVAL, field, "%s: %s", field, why);
}

/* --- query parameters ------------------------------------------------------------ */

static const char *const k_params[] = {
    "w", "h", "mode", "interp", "parity", "ascend_mode", "pad", "crop", "profile",
    "shrink_on_load", "no_orient", "allow_partial", "input", "raw", "mean", "std",
    "scale", "order", "layout", "dtype", "aipp", "aipp_op", "aipp_layout",
    "aipp_dtype", "format", "quality", "align", "out", "strict", "ring",
};

static bool is_flag(const char *key)
{
    return !strcmp(key, "shrink_on_load") || !strcmp(key, "no_orient") ||
           !strcmp(key, "allow_partial") || !strcmp(key, "strict");
}

bool dvppd_spec_is_param(const char *key)
{
    for (size_t i = 0; i < sizeof(k_params) / sizeof(k_params[0]); i++)
        if (!strcmp(key, k_params[i]))
            return true;
    return false;
}

static dvpp_status apply_resize_param(draft *d, const char *k, const char *v,
                                      dvpp_err *err)
{
    uint32_t n;

    d->has_resize = true;
    if (!strcmp(k, "w") || !strcmp(k, "h")) {
        if (!dvppd_parse_u32(v, 1u << 16, &n) || n == 0)
            return bad(err, k, "want a size in pixels, 1..65536");
        if (*k == 'w')
            d->rz.w = n, d->has_w = true;
        else
            d->rz.h = n, d->has_h = true;
        return DVPP_OK;
    }
    if (!strcmp(k, "mode"))
        return dvpp_resize_mode_parse(v ? v : "", &d->rz.mode)
                   ? DVPP_OK
                   : bad(err, k, "want stretch, fit, fill, letterbox, shorter or longer");
    if (!strcmp(k, "interp"))
        return dvpp_interp_parse(v ? v : "", &d->rz.opts.interp)
                   ? DVPP_OK : bad(err, k, "unknown interpolation");
    if (!strcmp(k, "parity"))
        return dvpp_parity_parse(v ? v : "", &d->rz.opts.parity)
                   ? DVPP_OK : bad(err, k, "want cv2, pil, tf or ascend");
    if (!strcmp(k, "ascend_mode")) {
        if (!dvppd_parse_u32(v, 4, &n))
            return bad(err, k, "want 0..4");
        d->rz.opts.ascend_mode = (int)n;
        return DVPP_OK;
    }
    /* pad */
    return parse_rgb(v, d->rz.pad) ? DVPP_OK : bad(err, k, "want RRGGBB");
}

static dvpp_status apply_norm_param(draft *d, const char *k, const char *v,
                                    dvpp_err *err)
{
    dvpp_norm_spec *n = &d->s->pipe.norm;

    if (d->env->kind != DVPPD_SPEC_TENSOR)
        return bad(err, k, "only for tensor endpoints");
    if (!strcmp(k, "mean") || !strcmp(k, "std") || !strcmp(k, "scale"))
        d->has_norm = true;
    if (!strcmp(k, "mean"))
        return dvpp_norm_spec_triple(v ? v : "", n->mean, k, err);
    if (!strcmp(k, "std")) {
        d->std_set = true;
        if (dvpp_norm_spec_triple(v ? v : "", n->std, k, err) != DVPP_OK)
            return DVPP_EINVAL;
        return n->std[0] != 0 && n->std[1] != 0 && n->std[2] != 0
                   ? DVPP_OK : bad(err, k, "std must not be 0");
    }
    if (!strcmp(k, "scale")) {
        d->scale_set = true;
        return parse_positive(v, &d->mult) ? DVPP_OK : bad(err, k, "want a number > 0");
    }
    if (!strcmp(k, "order")) {
        if (!v || (strcmp(v, "rgb") && strcmp(v, "bgr")))
            return bad(err, k, "want rgb or bgr");
        n->bgr = !strcmp(v, "bgr");
        return DVPP_OK;
    }
    if (!strcmp(k, "layout"))
        return dvpp_layout_parse(v ? v : "", &n->layout)
                   ? DVPP_OK : bad(err, k, "want nchw, nhwc or nc1hwc0");
    return dvpp_dtype_parse(v ? v : "", &n->dtype)
               ? DVPP_OK : bad(err, k, "want float32, float16, uint8 or int8");
}

static dvpp_status apply_aipp_param(draft *d, const char *k, const char *v,
                                    dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;

    if (d->env->kind != DVPPD_SPEC_TENSOR)
        return bad(err, k, "only for tensor endpoints");
    if (!strcmp(k, "aipp")) {
        if (!v || !*v)
            return bad(err, k, "want the name of a server-side config");
        d->aipp_name = v;
        return DVPP_OK;
    }
    d->has_aipp_opts = true;
    if (!strcmp(k, "aipp_op"))
        return dvppd_parse_u32(v, DVPP_AIPP_MAX_OPS - 1, &d->aipp_op)
                   ? DVPP_OK : bad(err, k, "want an op index");
    if (!strcmp(k, "aipp_layout"))
        return dvpp_layout_parse(v ? v : "", &p->aipp_layout)
                   ? DVPP_OK : bad(err, k, "want nchw, nhwc or nc1hwc0");
    return dvpp_dtype_parse(v ? v : "", &p->aipp_dtype)
               ? DVPP_OK : bad(err, k, "want float32, float16, uint8 or int8");
}

static dvpp_status apply_decode_param(draft *d, const char *k, const char *v,
                                      dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;
    bool f;

    if (!strcmp(k, "profile"))
        return dvpp_profile_parse(v ? v : "", &p->decode.profile)
                   ? DVPP_OK : bad(err, k, "want native, ascend310 or ascend310p");
    if (!strcmp(k, "input")) {
        static const char *const names[] = {"auto", "jpeg", "png", "raw"};
        for (int i = 0; i < 4; i++)
            if (v && !strcmp(v, names[i])) {
                p->input = (dvpp_pipe_input)i;
                return DVPP_OK;
            }
        return bad(err, k, "want auto, jpeg, png or raw");
    }
    if (!strcmp(k, "raw")) {
        if (!parse_raw(v, &p->raw))
            return bad(err, k, "want FORMAT:WxH, e.g. nv12:1920x1080");
        p->input = DVPP_PIPE_IN_RAW;
        return DVPP_OK;
    }
    if (!strcmp(k, "crop")) {
        d->has_crop = true;
        return parse_roi(v, &d->crop) ? DVPP_OK : bad(err, k, "want L,T,R,B (inclusive)");
    }
    if (!parse_flag(v, &f))
        return bad(err, k, "want 0 or 1");
    if (!strcmp(k, "shrink_on_load"))
        p->decode.shrink_on_load = f, d->shrink_set = true;
    else if (!strcmp(k, "no_orient"))
        p->decode.no_orient = f;
    else
        p->decode.allow_partial = f;
    return DVPP_OK;
}

static dvpp_status apply_output_param(draft *d, const char *k, const char *v,
                                      dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;
    uint32_t n;

    if (!strcmp(k, "out")) {
        if (!v || (strcmp(v, "npy") && strcmp(v, "raw")))
            return bad(err, k, "want npy or raw");
        d->s->raw_out = !strcmp(v, "raw");
        return d->env->kind == DVPPD_SPEC_IMAGE ? bad(err, k, "not for /v1/image")
                                                 : DVPP_OK;
    }
    if (!strcmp(k, "strict"))
        return d->env->kind == DVPPD_SPEC_TENSOR && parse_flag(v, &d->s->strict)
                   ? DVPP_OK : bad(err, k, "want 0 or 1 (batch endpoints)");
    if (!strcmp(k, "ring")) {
        if (d->env->kind != DVPPD_SPEC_TENSOR || !v || !*v ||
            strlen(v) >= sizeof(d->s->ring))
            return bad(err, k, "want the name of an open ring (tensor endpoints)");
        memcpy(d->s->ring, v, strlen(v) + 1);
        return DVPP_OK;
    }
    if (d->env->kind == DVPPD_SPEC_TENSOR)
        return bad(err, k, "not for tensor endpoints");
    if (!strcmp(k, "format")) {
        if (!v || !*v)
            return bad(err, k, "want a format name");
        d->format = v;
        return DVPP_OK;
    }
    if (!strcmp(k, "quality")) {
        if (d->env->kind != DVPPD_SPEC_IMAGE || !dvppd_parse_u32(v, 100, &n))
            return bad(err, k, "want 0..100 (/v1/image)");
        p->quality = (int)n;
        d->has_quality = true;
        return DVPP_OK;
    }
    /* align */
    if (d->env->kind != DVPPD_SPEC_DECODE ||
        !parse_size(v, &p->out_align_w, &p->out_align_h))
        return bad(err, k, "want WxH (/v1/decode)");
    d->has_align = true;
    return DVPP_OK;
}

static dvpp_status apply_param(draft *d, const char *k, const char *v, dvpp_err *err)
{
    static const char *const resize[] = {"w", "h", "mode", "interp", "parity",
                                         "ascend_mode", "pad"};
    static const char *const norm[] = {"mean", "std", "scale", "order", "layout", "dtype"};
    static const char *const aipp[] = {"aipp", "aipp_op", "aipp_layout", "aipp_dtype"};
    static const char *const dec[] = {"profile", "input", "raw", "crop",
                                      "shrink_on_load", "no_orient", "allow_partial"};

    for (size_t i = 0; i < sizeof(resize) / sizeof(resize[0]); i++)
        if (!strcmp(k, resize[i]))
            return apply_resize_param(d, k, v, err);
    for (size_t i = 0; i < sizeof(norm) / sizeof(norm[0]); i++)
        if (!strcmp(k, norm[i]))
            return apply_norm_param(d, k, v, err);
    for (size_t i = 0; i < sizeof(aipp) / sizeof(aipp[0]); i++)
        if (!strcmp(k, aipp[i]))
            return apply_aipp_param(d, k, v, err);
    for (size_t i = 0; i < sizeof(dec) / sizeof(dec[0]); i++)
        if (!strcmp(k, dec[i]))
            return apply_decode_param(d, k, v, err);
    if (dvppd_spec_is_param(k))
        return apply_output_param(d, k, v, err);
    return dvpp_err_set(err, DVPP_EINVAL, k, "unknown parameter '%.64s'", k);
}

/* --- assembling the pipeline -------------------------------------------------------- */

/* The op of @d's AIPP source into the pipeline. */
static dvpp_status take_aipp(draft *d, const char *field, dvpp_err *err)
{
    const dvppd_spec_env *env = d->env;
    const dvpp_aipp_config *cfg = NULL;
    dvpp_aipp_config *parsed = NULL;
    dvpp_status st = DVPP_OK;

    if (d->aipp_name && d->aipp_inline)
        return bad(err, field, "a named config or an inline one, not both");
    if (d->aipp_name) {
        cfg = env->lookup ? env->lookup(env->lookup_ctx, d->aipp_name) : NULL;
        if (!cfg)
            return dvpp_err_set(err, DVPP_EINVAL, field,
                                "%s: no server-side aipp config named '%.64s'",
                                field, d->aipp_name);
    } else {
        parsed = dvpp_malloc(sizeof(*parsed));
        if (!parsed)
            return dvpp_err_set(err, DVPP_ENOMEM, field, "aipp config");
        st = dvpp_aipp_parse(env->aipp_text, env->aipp_len, parsed, err);
        if (st != DVPP_OK) {
            char msg[DVPP_ERR_LEN];
            memcpy(msg, err ? err->msg : "", err ? sizeof(msg) : 1);
            dvpp_err_set(err, DVPP_EINVAL, "aipp", "aipp config: %s", msg);
        }
        cfg = parsed;
    }
    if (st == DVPP_OK && d->aipp_op >= cfg->nops)
        st = dvpp_err_set(err, DVPP_EINVAL, "aipp_op",
                          "aipp_op %u: the config has %u op(s)", d->aipp_op, cfg->nops);
    if (st == DVPP_OK) {
        d->s->pipe.aipp = cfg->ops[d->aipp_op];
        d->s->pipe.post = DVPP_PIPE_POST_AIPP;
    }
    dvpp_free(parsed, sizeof(*parsed));
    return st;
}

static dvpp_status assemble_tensor(draft *d, dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;
    bool aipp = d->aipp_name || d->aipp_inline;

    p->output = DVPP_PIPE_OUT_TENSOR;
    if (!aipp) {
        if (d->has_aipp_opts)
            return bad(err, "aipp", "aipp_op/aipp_layout/aipp_dtype need an aipp config");
        if (d->scale_set && !d->std_set) { /* blobFromImage: (x - mean) * s */
            p->norm.scale = 1.0;
            for (int i = 0; i < 3; i++)
                p->norm.std[i] = 1.0 / d->mult;
        } else if (d->scale_set) {
            return bad(err, "scale", "give std (torchvision) or scale (blobFromImage), "
                                     "not both");
        }
        p->post = DVPP_PIPE_POST_NORM;
        return DVPP_OK;
    }
    if (d->has_norm || d->std_set)
        return bad(err, "aipp", "an AIPP config replaces mean/std/scale");
    return take_aipp(d, "aipp", err);
}

/* Thumbnails (/v1/image) decode JPEGs with DCT scaling by default, as
 * imgproxy and libvips do: the largest reduction that keeps the first
 * resize a downscale. Tensors and decodes keep exact full decodes unless
 * asked. */
static void default_shrink(draft *d)
{
    dvpp_pipeline *p = &d->s->pipe;

    if (!d->shrink_set && p->nops > 0 && p->ops[0].kind == DVPP_PIPE_OP_RESIZE &&
        !p->decode.has_roi)
        p->decode.shrink_on_load = true;
}

static dvpp_status assemble_output(draft *d, dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;

    if (d->env->kind == DVPPD_SPEC_TENSOR)
        return assemble_tensor(d, err);
    p->output = DVPP_PIPE_OUT_IMAGE;
    if (d->env->kind == DVPPD_SPEC_IMAGE) {
        default_shrink(d);
        if (!d->format || !strcmp(d->format, "jpeg") || !strcmp(d->format, "jpg"))
            p->encoding = DVPP_PIPE_ENC_JPEG;
        else if (!strcmp(d->format, "png"))
            p->encoding = DVPP_PIPE_ENC_PNG;
        else
            return bad(err, "format", "want jpeg or png");
        return DVPP_OK;
    }
    p->encoding = DVPP_PIPE_ENC_NONE;
    p->out_format = DVPP_PIXEL_RGB;
    if (d->format && !dvpp_pixfmt_parse(d->format, &p->out_format))
        return bad(err, "format", "unknown pixel format");
    return DVPP_OK;
}

static dvpp_status assemble(draft *d, dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;
    dvpp_status st;

    if (d->has_crop) {
        dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_CROP, .u.crop = d->crop};
        st = dvpp_pipeline_add_op(p, &op, err);
        if (st != DVPP_OK)
            return st;
    }
    if (d->has_resize) {
        bool one_side = d->rz.mode == DVPP_RESIZE_SHORTER ||
                        d->rz.mode == DVPP_RESIZE_LONGER;
        dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_RESIZE, .u.resize = d->rz};
        if (!d->has_w || (!one_side && !d->has_h))
            return bad(err, d->has_w ? "h" : "w",
                       "a resize needs w and h (shorter/longer: w)");
        st = dvpp_pipeline_add_op(p, &op, err);
        if (st != DVPP_OK)
            return st;
    }
    return assemble_output(d, err);
}

dvpp_status dvppd_spec_from_query(const dvppd_spec_env *env, const dvppd_kv *kv,
                                  size_t n, dvppd_spec *out, dvpp_err *err)
{
    draft d;

    draft_init(&d, env, out);
    d.aipp_inline = env->aipp_text != NULL;
    for (size_t i = 0; i < n; i++) {
        /* "?flag" without '=' has no value: true for the 0/1 flags, an
         * empty (bad) value for everything else. */
        const char *v = kv[i].value ? kv[i].value : "";
        dvpp_status st;
        if (!kv[i].key || !*kv[i].key)
            return dvpp_err_set(err, DVPP_EINVAL, "query", "query: a parameter without a name");
        st = apply_param(&d, kv[i].key, kv[i].value || !is_flag(kv[i].key) ? v : NULL, err);
        if (st != DVPP_OK)
            return st;
    }
    return assemble(&d, err);
}

/* --- JSON ------------------------------------------------------------------------- */

/* Every key of @obj must be in @allowed (NULL-terminated). */
static dvpp_status only_keys(json_t *obj, const char *path, const char *const *allowed,
                             dvpp_err *err)
{
    const char *key;
    json_t *v;

    if (!json_is_object(obj))
        return bad(err, path, "want an object");
    json_object_foreach(obj, key, v) {
        const char *const *a = allowed;
        while (*a && strcmp(*a, key))
            a++;
        if (!*a)
            return dvpp_err_set(err, DVPP_EINVAL, path, "%s: unknown key '%.64s'",
                                path, key);
    }
    return DVPP_OK;
}

static dvpp_status j_u32(json_t *obj, const char *key, const char *path, uint32_t min,
                         uint32_t max, uint32_t *out, dvpp_err *err)
{
    json_t *v = json_object_get(obj, key);
    json_int_t n;
    char f[DVPP_ERR_FIELD_LEN];

    if (!v)
        return DVPP_OK;
    join(f, sizeof(f), path, key);
    if (!json_is_integer(v) || (n = json_integer_value(v)) < (json_int_t)min ||
        n > (json_int_t)max)
        return dvpp_err_set(err, DVPP_EINVAL, f, "%s: want an integer in [%u, %u]", f,
                            min, max);
    *out = (uint32_t)n;
    return DVPP_OK;
}

static dvpp_status j_bool(json_t *obj, const char *key, const char *path, bool *out,
                          dvpp_err *err)
{
    json_t *v = json_object_get(obj, key);
    char f[DVPP_ERR_FIELD_LEN];

    if (!v)
        return DVPP_OK;
    join(f, sizeof(f), path, key);
    if (!json_is_boolean(v))
        return bad(err, f, "want true or false");
    *out = json_is_true(v);
    return DVPP_OK;
}

/* A string value run through @parse (NULL key: @v itself). */
static dvpp_status j_name(json_t *v, const char *f, bool (*ok)(const char *, void *),
                          void *out, const char *want, dvpp_err *err)
{
    if (!v)
        return DVPP_OK;
    if (!json_is_string(v) || !ok(json_string_value(v), out))
        return bad(err, f, want);
    return DVPP_OK;
}

static bool ok_pixfmt(const char *s, void *o) { return dvpp_pixfmt_parse(s, o); }
static bool ok_layout(const char *s, void *o) { return dvpp_layout_parse(s, o); }
static bool ok_dtype(const char *s, void *o) { return dvpp_dtype_parse(s, o); }
static bool ok_profile(const char *s, void *o) { return dvpp_profile_parse(s, o); }
static bool ok_mode(const char *s, void *o) { return dvpp_resize_mode_parse(s, o); }
static bool ok_interp(const char *s, void *o) { return dvpp_interp_parse(s, o); }
static bool ok_parity(const char *s, void *o) { return dvpp_parity_parse(s, o); }
static bool ok_btype(const char *s, void *o) { return dvpp_border_type_parse(s, o); }

/* An array of @n (or, with @one, 1) numbers in [lo, hi]. */
static dvpp_status j_numbers(json_t *v, const char *f, size_t n, bool one, double lo,
                             double hi, double *out, dvpp_err *err)
{
    size_t got = json_is_array(v) ? json_array_size(v) : 0;

    if (json_is_number(v) && one) {
        for (size_t i = 0; i < n; i++)
            out[i] = json_number_value(v);
        got = 1;
    } else if (got != n && !(one && got == 1)) {
        return dvpp_err_set(err, DVPP_EINVAL, f, "%s: want %s%zu numbers", f,
                            one ? "1 or " : "", n);
    } else {
        for (size_t i = 0; i < n; i++) {
            json_t *x = json_array_get(v, got == 1 ? 0 : i);
            if (!json_is_number(x))
                return bad(err, f, "want numbers");
            out[i] = json_number_value(x);
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(out[i]) || out[i] < lo || out[i] > hi)
            return dvpp_err_set(err, DVPP_EINVAL, f, "%s: values in [%g, %g]", f, lo, hi);
    return DVPP_OK;
}

static dvpp_status j_roi(json_t *v, const char *f, dvpp_roi *r, dvpp_err *err)
{
    double a[4];

    if (j_numbers(v, f, 4, false, 0, 4294967295.0, a, err) != DVPP_OK)
        return DVPP_EINVAL;
    if (a[2] < a[0] || a[3] < a[1] || a[0] != floor(a[0]) || a[1] != floor(a[1]) ||
        a[2] != floor(a[2]) || a[3] != floor(a[3]))
        return bad(err, f, "want integers [L, T, R, B], inclusive, R >= L, B >= T");
    *r = (dvpp_roi){(uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2], (uint32_t)a[3]};
    return DVPP_OK;
}

static dvpp_status j_input(draft *d, json_t *root, dvpp_err *err)
{
    static const char *const raw_keys[] = {"format", "width", "height", "width_stride",
                                           "height_stride", NULL};
    static const char *const names[] = {"auto", "jpeg", "png", "raw"};
    dvpp_pipeline *p = &d->s->pipe;
    json_t *in = json_object_get(root, "input"), *raw = json_object_get(root, "raw");
    dvpp_status st = DVPP_OK;

    if (in) {
        const char *s = json_string_value(in);
        int i = 0;
        while (s && i < 4 && strcmp(s, names[i]))
            i++;
        if (!s || i == 4)
            return bad(err, "input", "want auto, jpeg, png or raw");
        p->input = (dvpp_pipe_input)i;
    }
    if (!raw)
        return DVPP_OK;
    st = only_keys(raw, "raw", raw_keys, err);
    if (st == DVPP_OK)
        st = j_name(json_object_get(raw, "format"), "raw.format", ok_pixfmt,
                    &p->raw.format, "unknown pixel format", err);
    if (st == DVPP_OK)
        st = j_u32(raw, "width", "raw", 1, 1u << 16, &p->raw.width, err);
    if (st == DVPP_OK)
        st = j_u32(raw, "height", "raw", 1, 1u << 16, &p->raw.height, err);
    if (st == DVPP_OK)
        st = j_u32(raw, "width_stride", "raw", 0, 1u << 20, &p->raw.width_stride, err);
    if (st == DVPP_OK)
        st = j_u32(raw, "height_stride", "raw", 0, 1u << 18, &p->raw.height_stride, err);
    if (st == DVPP_OK && !in)
        p->input = DVPP_PIPE_IN_RAW;
    return st;
}

static dvpp_status j_decode(draft *d, json_t *dec, dvpp_err *err)
{
    static const char *const keys[] = {"format", "shrink_on_load", "orient",
                                       "allow_partial", "roi", "profile", NULL};
    dvpp_pipe_decode *o = &d->s->pipe.decode;
    bool orient = true;
    dvpp_status st;

    if (!dec)
        return DVPP_OK;
    st = only_keys(dec, "decode", keys, err);
    if (st == DVPP_OK)
        st = j_name(json_object_get(dec, "format"), "decode.format", ok_pixfmt,
                    &o->format, "unknown pixel format", err);
    if (st == DVPP_OK)
        st = j_name(json_object_get(dec, "profile"), "decode.profile", ok_profile,
                    &o->profile, "want native, ascend310 or ascend310p", err);
    d->shrink_set = json_object_get(dec, "shrink_on_load") != NULL;
    if (st == DVPP_OK)
        st = j_bool(dec, "shrink_on_load", "decode", &o->shrink_on_load, err);
    if (st == DVPP_OK)
        st = j_bool(dec, "allow_partial", "decode", &o->allow_partial, err);
    if (st == DVPP_OK)
        st = j_bool(dec, "orient", "decode", &orient, err);
    o->no_orient = !orient;
    if (st == DVPP_OK && json_object_get(dec, "roi")) {
        dvpp_roi r;
        st = j_roi(json_object_get(dec, "roi"), "decode.roi", &r, err);
        o->has_roi = st == DVPP_OK;
        o->roi = (dvpp_jpeg_roi){r.left, r.top, dvpp_roi_width(&r), dvpp_roi_height(&r)};
    }
    return st;
}

static dvpp_status j_resize(json_t *v, const char *path, dvpp_pipe_op *op, dvpp_err *err)
{
    static const char *const keys[] = {"w", "h", "mode", "interp", "parity", "pad",
                                       "ascend_mode", NULL};
    dvpp_pipe_resize *r = &op->u.resize;
    char f[DVPP_ERR_FIELD_LEN];
    uint32_t am;
    dvpp_status st;

    op->kind = DVPP_PIPE_OP_RESIZE;
    r->mode = DVPP_RESIZE_STRETCH;
    dvpp_resize_opts_init(&r->opts);
    am = (uint32_t)r->opts.ascend_mode;
    st = only_keys(v, path, keys, err);
    if (st == DVPP_OK)
        st = j_u32(v, "w", path, 1, 1u << 16, &r->w, err);
    if (st == DVPP_OK)
        st = j_u32(v, "h", path, 1, 1u << 16, &r->h, err);
    if (st == DVPP_OK)
        st = j_u32(v, "ascend_mode", path, 0, 4, &am, err);
    r->opts.ascend_mode = (int)am;
    join(f, sizeof(f), path, "mode");
    if (st == DVPP_OK)
        st = j_name(json_object_get(v, "mode"), f, ok_mode, &r->mode,
                    "want stretch, fit, fill, letterbox, shorter or longer", err);
    join(f, sizeof(f), path, "interp");
    if (st == DVPP_OK)
        st = j_name(json_object_get(v, "interp"), f, ok_interp, &r->opts.interp,
                    "unknown interpolation", err);
    join(f, sizeof(f), path, "parity");
    if (st == DVPP_OK)
        st = j_name(json_object_get(v, "parity"), f, ok_parity, &r->opts.parity,
                    "want cv2, pil, tf or ascend", err);
    join(f, sizeof(f), path, "pad");
    if (st == DVPP_OK && json_object_get(v, "pad")) {
        double pad[3];
        st = j_numbers(json_object_get(v, "pad"), f, 3, true, 0, 255, pad, err);
        for (int i = 0; st == DVPP_OK && i < 3; i++)
            r->pad[i] = (uint8_t)lrint(pad[i]);
    }
    if (st == DVPP_OK && (!r->w || (!r->h && r->mode != DVPP_RESIZE_SHORTER &&
                                    r->mode != DVPP_RESIZE_LONGER)))
        st = bad(err, path, "a resize needs w and h (shorter/longer: w)");
    return st;
}

static dvpp_status j_border(json_t *v, const char *path, dvpp_pipe_op *op, dvpp_err *err)
{
    static const char *const keys[] = {"top", "bottom", "left", "right", "type",
                                       "value", NULL};
    dvpp_border *b = &op->u.border;
    char f[DVPP_ERR_FIELD_LEN];
    dvpp_status st;

    op->kind = DVPP_PIPE_OP_BORDER;
    memset(b, 0, sizeof(*b));
    b->type = DVPP_BORDER_CONSTANT;
    b->level = DVPP_SIMD_AVX512; /* the best the CPU has */
    st = only_keys(v, path, keys, err);
    if (st == DVPP_OK)
        st = j_u32(v, "top", path, 0, 1u << 16, &b->top, err);
    if (st == DVPP_OK)
        st = j_u32(v, "bottom", path, 0, 1u << 16, &b->bottom, err);
    if (st == DVPP_OK)
        st = j_u32(v, "left", path, 0, 1u << 16, &b->left, err);
    if (st == DVPP_OK)
        st = j_u32(v, "right", path, 0, 1u << 16, &b->right, err);
    join(f, sizeof(f), path, "type");
    if (st == DVPP_OK)
        st = j_name(json_object_get(v, "type"), f, ok_btype, &b->type,
                    "want constant, replicate, reflect or reflect101", err);
    join(f, sizeof(f), path, "value");
    if (st == DVPP_OK && json_object_get(v, "value")) {
        json_t *val = json_object_get(v, "value");
        size_t n = json_is_array(val) ? json_array_size(val) : 1;
        st = n >= 1 && n <= 4 ? j_numbers(val, f, n, true, 0, 255, b->value, err)
                              : bad(err, f, "want 1 to 4 numbers");
    }
    return st;
}

static dvpp_status j_op(json_t *v, size_t i, dvpp_pipe_op *op, dvpp_err *err)
{
    char path[DVPP_ERR_FIELD_LEN];
    const char *kind;
    json_t *arg;

    snprintf(path, sizeof(path), "ops[%zu]", i);
    if (!json_is_object(v) || json_object_size(v) != 1)
        return bad(err, path, "want one of {\"crop\"|\"resize\"|\"convert\"|\"border\": ...}");
    kind = json_object_iter_key(json_object_iter(v));
    arg = json_object_iter_value(json_object_iter(v));
    memset(op, 0, sizeof(*op));
    {
        char base[DVPP_ERR_FIELD_LEN];
        memcpy(base, path, sizeof(base));
        join(path, sizeof(path), base, kind);
    }
    if (!strcmp(kind, "crop")) {
        op->kind = DVPP_PIPE_OP_CROP;
        return j_roi(arg, path, &op->u.crop, err);
    }
    if (!strcmp(kind, "resize"))
        return j_resize(arg, path, op, err);
    if (!strcmp(kind, "border"))
        return j_border(arg, path, op, err);
    if (!strcmp(kind, "convert")) {
        op->kind = DVPP_PIPE_OP_CONVERT;
        return j_name(arg, path, ok_pixfmt, &op->u.convert, "unknown pixel format", err);
    }
    return dvpp_err_set(err, DVPP_EINVAL, path, "%s: unknown op", path);
}

static dvpp_status j_ops(draft *d, json_t *ops, dvpp_err *err)
{
    size_t i;
    json_t *v;

    if (!ops)
        return DVPP_OK;
    if (!json_is_array(ops) || json_array_size(ops) > DVPP_PIPE_MAX_OPS)
        return dvpp_err_set(err, DVPP_EINVAL, "ops", "ops: want an array of at most %d ops",
                            DVPP_PIPE_MAX_OPS);
    json_array_foreach(ops, i, v) {
        dvpp_pipe_op op;
        dvpp_status st = j_op(v, i, &op, err);
        if (st == DVPP_OK)
            st = dvpp_pipeline_add_op(&d->s->pipe, &op, err);
        if (st != DVPP_OK)
            return st;
    }
    return DVPP_OK;
}

static dvpp_status j_normalize(draft *d, json_t *n, dvpp_err *err)
{
    static const char *const keys[] = {"mean", "std", "scale", "order", "layout",
                                       "dtype", NULL};
    dvpp_norm_spec *s = &d->s->pipe.norm;
    json_t *order = json_object_get(n, "order"), *scale = json_object_get(n, "scale");
    dvpp_status st;

    if (!n)
        return DVPP_OK;
    if (d->env->kind != DVPPD_SPEC_TENSOR)
        return bad(err, "normalize", "only for tensor endpoints");
    d->has_norm = true;
    st = only_keys(n, "normalize", keys, err);
    if (st == DVPP_OK && json_object_get(n, "mean"))
        st = j_numbers(json_object_get(n, "mean"), "normalize.mean", 3, true, -1e9, 1e9,
                       s->mean, err);
    if (st == DVPP_OK && json_object_get(n, "std")) {
        d->std_set = true;
        st = j_numbers(json_object_get(n, "std"), "normalize.std", 3, true, 1e-12, 1e9,
                       s->std, err);
    }
    if (st == DVPP_OK && scale) {
        d->scale_set = true;
        d->mult = json_number_value(scale);
        if (!json_is_number(scale) || !(d->mult > 0) || !isfinite(d->mult))
            st = bad(err, "normalize.scale", "want a number > 0");
    }
    if (st == DVPP_OK && order) {
        const char *o = json_string_value(order);
        if (!o || (strcmp(o, "rgb") && strcmp(o, "bgr")))
            st = bad(err, "normalize.order", "want rgb or bgr");
        else
            s->bgr = !strcmp(o, "bgr");
    }
    if (st == DVPP_OK)
        st = j_name(json_object_get(n, "layout"), "normalize.layout", ok_layout,
                    &s->layout, "want nchw, nhwc or nc1hwc0", err);
    if (st == DVPP_OK)
        st = j_name(json_object_get(n, "dtype"), "normalize.dtype", ok_dtype, &s->dtype,
                    "want float32, float16, uint8 or int8", err);
    return st;
}

static dvpp_status j_aipp(draft *d, json_t *a, dvpp_err *err)
{
    static const char *const keys[] = {"name", "config", "op", "layout", "dtype", NULL};
    dvpp_pipeline *p = &d->s->pipe;
    json_t *name = json_object_get(a, "name"), *cfg = json_object_get(a, "config");
    dvpp_status st;

    if (!a)
        return DVPP_OK;
    if (d->env->kind != DVPPD_SPEC_TENSOR)
        return bad(err, "aipp", "only for tensor endpoints");
    st = only_keys(a, "aipp", keys, err);
    if (st != DVPP_OK)
        return st;
    if ((name && !json_is_string(name)) || (cfg && !json_is_string(cfg)))
        return bad(err, "aipp", "name and config are strings");
    if (name)
        d->aipp_name = json_string_value(name);
    if (cfg) {
        if (d->aipp_inline)
            return bad(err, "aipp.config", "an inline config is already posted");
        d->aipp_inline = true;
        /* The JSON owns the text for as long as the draft lives. */
        ((dvppd_spec_env *)d->env)->aipp_text = json_string_value(cfg);
        ((dvppd_spec_env *)d->env)->aipp_len = json_string_length(cfg);
    }
    if (!name && !cfg && !d->aipp_inline)
        return bad(err, "aipp", "want a name or a config");
    st = j_u32(a, "op", "aipp", 0, DVPP_AIPP_MAX_OPS - 1, &d->aipp_op, err);
    if (st == DVPP_OK)
        st = j_name(json_object_get(a, "layout"), "aipp.layout", ok_layout, &p->aipp_layout,
                    "want nchw, nhwc or nc1hwc0", err);
    if (st == DVPP_OK)
        st = j_name(json_object_get(a, "dtype"), "aipp.dtype", ok_dtype, &p->aipp_dtype,
                    "want float32, float16, uint8 or int8", err);
    return st;
}

static dvpp_status j_output(draft *d, json_t *o, dvpp_err *err)
{
    static const char *const keys[] = {"format", "quality", "align", "out", "ring", NULL};
    dvpp_pipeline *p = &d->s->pipe;
    json_t *fmt = json_object_get(o, "format"), *out = json_object_get(o, "out");
    json_t *ring = json_object_get(o, "ring");
    json_t *align = json_object_get(o, "align");
    dvpp_status st;
    uint32_t q = 95;

    if (!o)
        return DVPP_OK;
    st = only_keys(o, "output", keys, err);
    if (st == DVPP_OK && fmt) {
        if (d->env->kind == DVPPD_SPEC_TENSOR || !json_is_string(fmt))
            return bad(err, "output.format", "a format name (image and decode endpoints)");
        d->format = json_string_value(fmt);
    }
    if (st == DVPP_OK && json_object_get(o, "quality")) {
        if (d->env->kind != DVPPD_SPEC_IMAGE)
            return bad(err, "output.quality", "only for /v1/image");
        st = j_u32(o, "quality", "output", 0, 100, &q, err);
        p->quality = (int)q;
    }
    if (st == DVPP_OK && out) {
        const char *s = json_string_value(out);
        if (!s || (strcmp(s, "npy") && strcmp(s, "raw")) || d->env->kind == DVPPD_SPEC_IMAGE)
            return bad(err, "output.out", "want npy or raw (tensor and decode endpoints)");
        d->s->raw_out = !strcmp(s, "raw");
    }
    if (st == DVPP_OK && ring) {
        const char *r = json_string_value(ring);
        if (d->env->kind != DVPPD_SPEC_TENSOR || !r || !*r || strlen(r) >= sizeof(d->s->ring))
            return bad(err, "output.ring", "want the name of an open ring (tensors)");
        memcpy(d->s->ring, r, strlen(r) + 1);
    }
    if (st == DVPP_OK && align) {
        double a[2];
        if (d->env->kind != DVPPD_SPEC_DECODE)
            return bad(err, "output.align", "only for /v1/decode");
        st = j_numbers(align, "output.align", 2, false, 1, DVPP_PIPE_MAX_ALIGN, a, err);
        if (st == DVPP_OK) /* a[] is unset (or out of range) otherwise */
            p->out_align_w = (uint32_t)a[0], p->out_align_h = (uint32_t)a[1];
    }
    return st;
}

/* The longest JSON spec taken. A real one is well under 2 KB (an inline
 * AIPP config of 8 ops included, a few KB); jansson builds the whole document
 * before any key is looked at, at a few hundred bytes per "{}" or "[]", so
 * the bound on the text is the bound on its memory: 15 MB of "{}," in a
 * multipart part took 1.3 GB before "ops" could be refused. */
#define SPEC_MAX_BYTES 65536

dvpp_status dvppd_spec_from_json(const dvppd_spec_env *env, const char *json,
                                 size_t len, dvppd_spec *out, dvpp_err *err)
{
    static const char *const keys[] = {"input", "raw", "decode", "ops", "normalize",
                                       "aipp", "output", "strict", NULL};
    dvppd_spec_env local = *env; /* an inline config may come from the JSON */
    json_error_t je;
    json_t *root;
    dvpp_status st;
    draft d;

    draft_init(&d, &local, out);
    d.aipp_inline = env->aipp_text != NULL;
    if (len > SPEC_MAX_BYTES)
        return dvpp_err_set(err, DVPP_ELIMIT, "spec",
                            "spec: %zu bytes of JSON, above the limit of %d", len,
                            SPEC_MAX_BYTES);
    root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return dvpp_err_set(err, DVPP_EINVAL, "spec", "spec: JSON error at %d:%d: %s",
                            je.line, je.column, je.text);
    st = only_keys(root, "spec", keys, err);
    if (st == DVPP_OK)
        st = j_input(&d, root, err);
    if (st == DVPP_OK)
        st = j_decode(&d, json_object_get(root, "decode"), err);
    if (st == DVPP_OK)
        st = j_ops(&d, json_object_get(root, "ops"), err);
    if (st == DVPP_OK)
        st = j_normalize(&d, json_object_get(root, "normalize"), err);
    if (st == DVPP_OK)
        st = j_aipp(&d, json_object_get(root, "aipp"), err);
    if (st == DVPP_OK)
        st = j_output(&d, json_object_get(root, "output"), err);
    if (st == DVPP_OK && json_object_get(root, "strict"))
        st = j_bool(root, "strict", "spec", &out->strict, err);
    if (st == DVPP_OK)
        st = assemble_output(&d, err);
    json_decref(root);
    return st;
}
