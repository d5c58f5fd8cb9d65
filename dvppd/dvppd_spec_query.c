/* dvppd_spec_query: query parameters -> dvpp_pipeline. The parameters
 * are named as dvppctl's flags (docs/http-api.md); the fixed order is
 * crop -> resize -> crop_center -> normalise/AIPP, whatever order they
 * come in. */
#include "dvppd_spec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dvppd_spec_int.h"

/* --- values ------------------------------------------------------------------------ */

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

/* crop_center=WxH[:floor|:even] (floor by default, as the JSON form) */
static bool parse_center(const char *v, dvpp_pipe_center *c)
{
    char size[40];
    const char *colon = v ? strchr(v, ':') : NULL;
    size_t n = colon ? (size_t)(colon - v) : v ? strlen(v) : 0;

    if (!v || n >= sizeof(size))
        return false;
    memcpy(size, v, n);
    size[n] = '\0';
    c->round = DVPP_PIPE_CROP_FLOOR;
    /* both sides >= 1: a 0 x 0 "centre" would read as the fixed crop
     * [0,0,0,0] (dvpp_pipe_op_is_center_crop tests the size) */
    return parse_size(size, &c->w, &c->h) && c->w && c->h &&
           (!colon || dvpp_pipe_crop_round_parse(colon + 1, &c->round));
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

/* --- parameters ------------------------------------------------------------------ */

static const char *const k_params[] = {
    "w", "h", "mode", "interp", "parity", "ascend_mode", "pad", "crop", "profile",
    "shrink_on_load", "no_orient", "allow_partial", "input", "raw", "mean", "std",
    "scale", "order", "layout", "dtype", "aipp", "aipp_op", "aipp_layout",
    "aipp_dtype", "format", "quality", "align", "out", "strict", "ring", "preset",
    "round", "crop_center",
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

static dvpp_status apply_resize_param(dvppd_spec_draft *d, const char *k, const char *v,
                                      dvpp_err *err)
{
    uint32_t n;

    d->has_resize = true;
    if (!strcmp(k, "w") || !strcmp(k, "h")) {
        if (!dvppd_parse_u32(v, 1u << 16, &n) || n == 0)
            return dvppd_spec_bad(err, k, "want a size in pixels, 1..65536");
        if (*k == 'w')
            d->rz.w = n, d->has_w = true;
        else
            d->rz.h = n, d->has_h = true;
        return DVPP_OK;
    }
    if (!strcmp(k, "mode"))
        return dvpp_resize_mode_parse(v ? v : "", &d->rz.mode)
                   ? DVPP_OK
                   : dvppd_spec_bad(err, k,
                                    "want stretch, fit, fill, letterbox, shorter or longer");
    if (!strcmp(k, "interp"))
        return dvpp_interp_parse(v ? v : "", &d->rz.opts.interp)
                   ? DVPP_OK : dvppd_spec_bad(err, k, "unknown interpolation");
    if (!strcmp(k, "parity"))
        return dvpp_parity_parse(v ? v : "", &d->rz.opts.parity)
                   ? DVPP_OK : dvppd_spec_bad(err, k, "want cv2, pil, tf or ascend");
    if (!strcmp(k, "round")) {
        d->has_round = true;
        return dvpp_resize_round_parse(v ? v : "", &d->rz.round)
                   ? DVPP_OK : dvppd_spec_bad(err, k, "want nearest or floor");
    }
    if (!strcmp(k, "ascend_mode")) {
        if (!dvppd_parse_u32(v, 4, &n))
            return dvppd_spec_bad(err, k, "want 0..4");
        d->rz.opts.ascend_mode = (int)n;
        return DVPP_OK;
    }
    /* pad */
    return parse_rgb(v, d->rz.pad) ? DVPP_OK : dvppd_spec_bad(err, k, "want RRGGBB");
}

/* The tensor's layout and dtype (of the normalisation or the AIPP op). */
static dvpp_status layout_value(const char *k, const char *v, dvpp_layout *out,
                                dvpp_err *err)
{
    return dvpp_layout_parse(v ? v : "", out) ? DVPP_OK
                                              : dvppd_spec_bad(err, k, DVPPD_SPEC_WANT_LAYOUT);
}

static dvpp_status dtype_value(const char *k, const char *v, dvpp_dtype *out, dvpp_err *err)
{
    return dvpp_dtype_parse(v ? v : "", out) ? DVPP_OK
                                             : dvppd_spec_bad(err, k, DVPPD_SPEC_WANT_DTYPE);
}

static dvpp_status apply_norm_param(dvppd_spec_draft *d, const char *k, const char *v,
                                    dvpp_err *err)
{
    dvpp_norm_spec *n = &d->s->pipe.norm;

    if (d->env->kind != DVPPD_SPEC_TENSOR)
        return dvppd_spec_bad(err, k, "only for tensor endpoints");
    if (!strcmp(k, "mean") || !strcmp(k, "std") || !strcmp(k, "scale"))
        d->has_norm = true;
    if (!strcmp(k, "mean"))
        return dvpp_norm_spec_triple(v ? v : "", n->mean, k, err);
    if (!strcmp(k, "std")) {
        d->std_set = true;
        if (dvpp_norm_spec_triple(v ? v : "", n->std, k, err) != DVPP_OK)
            return DVPP_EINVAL;
        return n->std[0] != 0 && n->std[1] != 0 && n->std[2] != 0
                   ? DVPP_OK : dvppd_spec_bad(err, k, "std must not be 0");
    }
    if (!strcmp(k, "scale")) {
        d->scale_set = true;
        return parse_positive(v, &d->mult) ? DVPP_OK
                                           : dvppd_spec_bad(err, k, "want a number > 0");
    }
    if (!strcmp(k, "order")) {
        if (!v || (strcmp(v, "rgb") && strcmp(v, "bgr")))
            return dvppd_spec_bad(err, k, "want rgb or bgr");
        n->bgr = !strcmp(v, "bgr");
        return DVPP_OK;
    }
    if (!strcmp(k, "layout"))
        return layout_value(k, v, &n->layout, err);
    return dtype_value(k, v, &n->dtype, err);
}

static dvpp_status apply_aipp_param(dvppd_spec_draft *d, const char *k, const char *v,
                                    dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;

    if (d->env->kind != DVPPD_SPEC_TENSOR)
        return dvppd_spec_bad(err, k, "only for tensor endpoints");
    if (!strcmp(k, "aipp")) {
        if (!v || !*v)
            return dvppd_spec_bad(err, k, "want the name of a server-side config");
        d->aipp_name = v;
        return DVPP_OK;
    }
    d->has_aipp_opts = true;
    if (!strcmp(k, "aipp_op"))
        return dvppd_parse_u32(v, DVPP_AIPP_MAX_OPS - 1, &d->aipp_op)
                   ? DVPP_OK : dvppd_spec_bad(err, k, "want an op index");
    if (!strcmp(k, "aipp_layout"))
        return layout_value(k, v, &p->aipp_layout, err);
    return dtype_value(k, v, &p->aipp_dtype, err);
}

static dvpp_status apply_decode_param(dvppd_spec_draft *d, const char *k, const char *v,
                                      dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;
    bool f;

    if (!strcmp(k, "profile"))
        return dvpp_profile_parse(v ? v : "", &p->decode.profile)
                   ? DVPP_OK : dvppd_spec_bad(err, k, "want native, ascend310 or ascend310p");
    if (!strcmp(k, "input")) {
        static const char *const names[] = {"auto", "jpeg", "png", "raw"};
        for (int i = 0; i < 4; i++)
            if (v && !strcmp(v, names[i])) {
                p->input = (dvpp_pipe_input)i;
                return DVPP_OK;
            }
        return dvppd_spec_bad(err, k, "want auto, jpeg, png or raw");
    }
    if (!strcmp(k, "raw")) {
        if (!parse_raw(v, &p->raw))
            return dvppd_spec_bad(err, k, "want FORMAT:WxH, e.g. nv12:1920x1080");
        p->input = DVPP_PIPE_IN_RAW;
        return DVPP_OK;
    }
    if (!strcmp(k, "crop")) {
        d->has_crop = true;
        return parse_roi(v, &d->crop) ? DVPP_OK
                                      : dvppd_spec_bad(err, k, "want L,T,R,B (inclusive)");
    }
    if (!strcmp(k, "crop_center")) {
        d->has_center = true;
        return parse_center(v, &d->center)
                   ? DVPP_OK
                   : dvppd_spec_bad(err, k, "want WxH or WxH:floor or WxH:even");
    }
    if (!dvppd_parse_flag(v, &f))
        return dvppd_spec_bad(err, k, "want 0 or 1");
    if (!strcmp(k, "shrink_on_load"))
        p->decode.shrink_on_load = f, d->shrink_set = true;
    else if (!strcmp(k, "no_orient"))
        p->decode.no_orient = f;
    else
        p->decode.allow_partial = f;
    return DVPP_OK;
}

static dvpp_status apply_output_param(dvppd_spec_draft *d, const char *k, const char *v,
                                      dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;
    uint32_t n;

    if (!strcmp(k, "out")) {
        if (!v || (strcmp(v, "npy") && strcmp(v, "raw")))
            return dvppd_spec_bad(err, k, "want npy or raw");
        d->s->raw_out = !strcmp(v, "raw");
        return d->env->kind == DVPPD_SPEC_IMAGE ? dvppd_spec_bad(err, k, "not for /v1/image")
                                                 : DVPP_OK;
    }
    if (!strcmp(k, "strict"))
        return d->env->kind == DVPPD_SPEC_TENSOR && dvppd_parse_flag(v, &d->s->strict)
                   ? DVPP_OK : dvppd_spec_bad(err, k, "want 0 or 1 (batch endpoints)");
    if (!strcmp(k, "ring")) {
        if (d->env->kind != DVPPD_SPEC_TENSOR || !v || !*v ||
            strlen(v) >= sizeof(d->s->ring))
            return dvppd_spec_bad(err, k, "want the name of an open ring (tensor endpoints)");
        memcpy(d->s->ring, v, strlen(v) + 1);
        return DVPP_OK;
    }
    if (d->env->kind == DVPPD_SPEC_TENSOR)
        return dvppd_spec_bad(err, k, "not for tensor endpoints");
    if (!strcmp(k, "format")) {
        if (!v || !*v)
            return dvppd_spec_bad(err, k, "want a format name");
        d->format = v;
        return DVPP_OK;
    }
    if (!strcmp(k, "quality")) {
        if (d->env->kind != DVPPD_SPEC_IMAGE || !dvppd_parse_u32(v, 100, &n))
            return dvppd_spec_bad(err, k, "want 0..100 (/v1/image)");
        p->quality = (int)n;
        d->has_quality = true;
        return DVPP_OK;
    }
    /* align */
    if (d->env->kind != DVPPD_SPEC_DECODE ||
        !parse_size(v, &p->out_align_w, &p->out_align_h))
        return dvppd_spec_bad(err, k, "want WxH (/v1/decode)");
    d->has_align = true;
    return DVPP_OK;
}

static dvpp_status apply_param(dvppd_spec_draft *d, const char *k, const char *v, dvpp_err *err)
{
    static const char *const resize[] = {"w", "h", "mode", "interp", "parity",
                                         "ascend_mode", "pad", "round"};
    static const char *const norm[] = {"mean", "std", "scale", "order", "layout", "dtype"};
    static const char *const aipp[] = {"aipp", "aipp_op", "aipp_layout", "aipp_dtype"};
    static const char *const dec[] = {"profile", "input", "raw", "crop", "crop_center",
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

/* --- assembling the pipeline ------------------------------------------------------ */

static dvpp_status assemble(dvppd_spec_draft *d, dvpp_err *err)
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
            return dvppd_spec_bad(err, d->has_w ? "h" : "w",
                                  "a resize needs w and h (shorter/longer: w)");
        if (d->has_round && d->rz.round != DVPP_RESIZE_ROUND_NEAREST && !one_side)
            return dvppd_spec_bad(err, "round", "only for mode shorter or longer");
        st = dvpp_pipeline_add_op(p, &op, err);
        if (st != DVPP_OK)
            return st;
    }
    if (d->has_center) { /* Resize -> CenterCrop, as torchvision orders them */
        dvpp_pipe_op op = {.kind = DVPP_PIPE_OP_CROP, .center = d->center};
        st = dvpp_pipeline_add_op(p, &op, err);
        if (st != DVPP_OK)
            return st;
    }
    return dvppd_spec_finish(d, err);
}

/* ?preset=NAME: the preset's spec, and nothing beside it (as spec=: a
 * parameter next to it would silently lose against, or override, a key of
 * the preset; the JSON form says which keys it overrides). */
static dvpp_status from_preset(const dvppd_spec_env *env, const dvppd_kv *kv, size_t n,
                               size_t at, dvppd_spec *out, dvpp_err *err)
{
    dvppd_preset_ref ref;
    dvpp_status st;

    for (size_t i = 0; i < n; i++)
        if (i != at) { /* an empty key ("?=&preset=x") is named "query" */
            const char *key = kv[i].key && *kv[i].key ? kv[i].key : "query";
            return dvpp_err_set(err, DVPP_EINVAL, key,
                                "%.64s: not beside preset= (use a JSON spec "
                                "{\"preset\": ..., \"KEY\": ...} to override a key)",
                                key);
        }
    st = dvppd_spec_preset_get(env, kv[at].value, &ref, err);
    return st == DVPP_OK ? dvppd_spec_from_json(env, ref.json, ref.len, out, err) : st;
}

dvpp_status dvppd_spec_from_query(const dvppd_spec_env *env, const dvppd_kv *kv,
                                  size_t n, dvppd_spec *out, dvpp_err *err)
{
    dvppd_spec_draft d;

    for (size_t i = 0; i < n; i++)
        if (kv[i].key && !strcmp(kv[i].key, "preset"))
            return from_preset(env, kv, n, i, out, err);

    dvppd_spec_draft_init(&d, env, out);
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
