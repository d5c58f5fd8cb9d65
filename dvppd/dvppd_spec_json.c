/* dvppd_spec_json: a JSON spec -> dvpp_pipeline (docs/http-api.md): any
 * list of ops, every key checked, errors naming the JSON path. */
#include "dvppd_spec.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dvppd_spec_int.h"

/* "path.key" into @f (truncated to fit: error fields are for people). */
static void join(char *f, size_t n, const char *path, const char *key)
{
    if (snprintf(f, n, "%s.%s", path, key) >= (int)n)
        f[n - 1] = '\0';
}

/* Every key of @obj must be in @allowed (NULL-terminated). */
static dvpp_status only_keys(json_t *obj, const char *path, const char *const *allowed,
                             dvpp_err *err)
{
    const char *key;
    json_t *v;

    if (!json_is_object(obj))
        return dvppd_spec_bad(err, path, "want an object");
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
        return dvppd_spec_bad(err, f, "want true or false");
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
        return dvppd_spec_bad(err, f, want);
    return DVPP_OK;
}

static bool ok_pixfmt(const char *s, void *o) { return dvpp_pixfmt_parse(s, o); }
static bool ok_layout(const char *s, void *o) { return dvpp_layout_parse(s, o); }
static bool ok_dtype(const char *s, void *o) { return dvpp_dtype_parse(s, o); }
static bool ok_profile(const char *s, void *o) { return dvpp_profile_parse(s, o); }
static bool ok_mode(const char *s, void *o) { return dvpp_resize_mode_parse(s, o); }
static bool ok_interp(const char *s, void *o) { return dvpp_interp_parse(s, o); }
static bool ok_parity(const char *s, void *o) { return dvpp_parity_parse(s, o); }
static bool ok_round(const char *s, void *o) { return dvpp_resize_round_parse(s, o); }
static bool ok_btype(const char *s, void *o) { return dvpp_border_type_parse(s, o); }
static bool ok_flip(const char *s, void *o) { return dvpp_flip_parse(s, o); }
static bool ok_cround(const char *s, void *o) { return dvpp_pipe_crop_round_parse(s, o); }

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
                return dvppd_spec_bad(err, f, "want numbers");
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
        return dvppd_spec_bad(err, f, "want integers [L, T, R, B], inclusive, R >= L, B >= T");
    *r = (dvpp_roi){(uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2], (uint32_t)a[3]};
    return DVPP_OK;
}

static dvpp_status j_input(dvppd_spec_draft *d, json_t *root, dvpp_err *err)
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
            return dvppd_spec_bad(err, "input", "want auto, jpeg, png or raw");
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

static dvpp_status j_decode(dvppd_spec_draft *d, json_t *dec, dvpp_err *err)
{
    static const char *const keys[] = {"format", "shrink_on_load", "orient",
                                       "allow_partial", "roi", "profile", "scale_denom",
                                       NULL};
    json_t *denom = json_object_get(dec, "scale_denom");
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
    if (st == DVPP_OK && denom) {
        json_int_t v = json_is_integer(denom) ? json_integer_value(denom) : 0;
        if (v != 1 && v != 2 && v != 4 && v != 8)
            st = dvppd_spec_bad(err, "decode.scale_denom", "want 1, 2, 4 or 8");
        else
            o->scale_denom = (uint8_t)v;
    }
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
                                       "ascend_mode", "round", NULL};
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
    join(f, sizeof(f), path, "round");
    if (st == DVPP_OK)
        st = j_name(json_object_get(v, "round"), f, ok_round, &r->round,
                    "want nearest or floor", err);
    if (st == DVPP_OK && (!r->w || (!r->h && r->mode != DVPP_RESIZE_SHORTER &&
                                    r->mode != DVPP_RESIZE_LONGER)))
        st = dvppd_spec_bad(err, path, "a resize needs w and h (shorter/longer: w)");
    /* floor is torchvision's int() of the side a shorter/longer resize
     * computes; the other modes compute theirs differently. */
    if (st == DVPP_OK && r->round != DVPP_RESIZE_ROUND_NEAREST &&
        r->mode != DVPP_RESIZE_SHORTER && r->mode != DVPP_RESIZE_LONGER)
        st = dvppd_spec_bad(err, f, "only for mode shorter or longer");
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
    b->level = DVPP_SIMD_BEST; /* the best the CPU has */
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
                              : dvppd_spec_bad(err, f, "want 1 to 4 numbers");
    }
    return st;
}

/* "convert": "FORMAT", or {"format": "FORMAT", "parity": "cv2" | "pil"}
 * (pil: Pillow's grey weights for a conversion to gray). */
static dvpp_status j_convert(json_t *v, const char *path, dvpp_pipe_op *op, dvpp_err *err)
{
    static const char *const keys[] = {"format", "parity", NULL};
    char f[DVPP_ERR_FIELD_LEN];
    dvpp_status st;

    op->kind = DVPP_PIPE_OP_CONVERT;
    op->convert_parity = DVPP_PARITY_CV2;
    if (!json_is_object(v))
        return j_name(v, path, ok_pixfmt, &op->u.convert, "unknown pixel format", err);
    st = only_keys(v, path, keys, err);
    join(f, sizeof(f), path, "format");
    if (st == DVPP_OK && !json_object_get(v, "format"))
        st = dvppd_spec_bad(err, f, "a conversion needs its format");
    if (st == DVPP_OK)
        st = j_name(json_object_get(v, "format"), f, ok_pixfmt, &op->u.convert,
                    "unknown pixel format", err);
    join(f, sizeof(f), path, "parity");
    if (st == DVPP_OK)
        st = j_name(json_object_get(v, "parity"), f, ok_parity, &op->convert_parity,
                    "want cv2 or pil", err);
    return st;
}

/* "crop": [L, T, R, B], or {"center": [W, H] | N, "round": "floor" | "even"}:
 * a centre crop, its rectangle resolved when the image is known. */
static dvpp_status j_crop(json_t *v, const char *path, dvpp_pipe_op *op, dvpp_err *err)
{
    static const char *const keys[] = {"center", "round", NULL};
    char f[DVPP_ERR_FIELD_LEN];
    double wh[2] = {0, 0};
    dvpp_status st;

    op->kind = DVPP_PIPE_OP_CROP;
    if (!json_is_object(v))
        return j_roi(v, path, &op->u.crop, err);
    st = only_keys(v, path, keys, err);
    join(f, sizeof(f), path, "center");
    if (st == DVPP_OK && !json_object_get(v, "center"))
        st = dvppd_spec_bad(err, f, "a centre crop needs its size [W, H]");
    if (st == DVPP_OK)
        st = j_numbers(json_object_get(v, "center"), f, 2, true, 1, 65536, wh, err);
    if (st == DVPP_OK && (wh[0] != floor(wh[0]) || wh[1] != floor(wh[1])))
        st = dvppd_spec_bad(err, f, "want integers [W, H]");
    op->center = (dvpp_pipe_center){(uint32_t)wh[0], (uint32_t)wh[1], DVPP_PIPE_CROP_FLOOR};
    join(f, sizeof(f), path, "round");
    if (st == DVPP_OK)
        st = j_name(json_object_get(v, "round"), f, ok_cround, &op->center.round,
                    "want floor or even", err);
    return st;
}

static dvpp_status j_op(json_t *v, size_t i, dvpp_pipe_op *op, dvpp_err *err)
{
    char path[DVPP_ERR_FIELD_LEN];
    const char *kind;
    json_t *arg;

    snprintf(path, sizeof(path), "ops[%zu]", i);
    if (!json_is_object(v) || json_object_size(v) != 1)
        return dvppd_spec_bad(err, path,
                              "want one of {\"crop\"|\"resize\"|\"convert\"|\"border\"|"
                              "\"flip\": ...}");
    kind = json_object_iter_key(json_object_iter(v));
    arg = json_object_iter_value(json_object_iter(v));
    memset(op, 0, sizeof(*op));
    {
        char base[DVPP_ERR_FIELD_LEN];
        memcpy(base, path, sizeof(base));
        join(path, sizeof(path), base, kind);
    }
    if (!strcmp(kind, "crop"))
        return j_crop(arg, path, op, err);
    if (!strcmp(kind, "resize"))
        return j_resize(arg, path, op, err);
    if (!strcmp(kind, "border"))
        return j_border(arg, path, op, err);
    if (!strcmp(kind, "flip")) {
        op->kind = DVPP_PIPE_OP_FLIP;
        return j_name(arg, path, ok_flip, &op->u.flip, "want horizontal, vertical or both",
                      err);
    }
    if (!strcmp(kind, "convert"))
        return j_convert(arg, path, op, err);
    return dvpp_err_set(err, DVPP_EINVAL, path, "%s: unknown op", path);
}

static dvpp_status j_ops(dvppd_spec_draft *d, json_t *ops, dvpp_err *err)
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

/* The "layout" and "dtype" of the object @obj at @path (normalize, aipp). */
static dvpp_status j_tensor_type(json_t *obj, const char *path, dvpp_layout *layout,
                                 dvpp_dtype *dtype, dvpp_err *err)
{
    char f[DVPP_ERR_FIELD_LEN];
    dvpp_status st;

    join(f, sizeof(f), path, "layout");
    st = j_name(json_object_get(obj, "layout"), f, ok_layout, layout, DVPPD_SPEC_WANT_LAYOUT,
                err);
    join(f, sizeof(f), path, "dtype");
    if (st == DVPP_OK)
        st = j_name(json_object_get(obj, "dtype"), f, ok_dtype, dtype, DVPPD_SPEC_WANT_DTYPE,
                    err);
    return st;
}

static dvpp_status j_normalize(dvppd_spec_draft *d, json_t *n, dvpp_err *err)
{
    static const char *const keys[] = {"mean", "std", "scale", "order", "layout",
                                       "dtype", "channels", NULL};
    json_t *channels = json_object_get(n, "channels");
    dvpp_norm_spec *s = &d->s->pipe.norm;
    json_t *order = json_object_get(n, "order"), *scale = json_object_get(n, "scale");
    dvpp_status st;

    if (!n)
        return DVPP_OK;
    if (d->env->kind != DVPPD_SPEC_TENSOR)
        return dvppd_spec_bad(err, "normalize", "only for tensor endpoints");
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
            st = dvppd_spec_bad(err, "normalize.scale", "want a number > 0");
    }
    if (st == DVPP_OK && order) {
        const char *o = json_string_value(order);
        if (!o || (strcmp(o, "rgb") && strcmp(o, "bgr")))
            st = dvppd_spec_bad(err, "normalize.order", "want rgb or bgr");
        else
            s->bgr = !strcmp(o, "bgr");
    }
    if (st == DVPP_OK && channels) {
        json_int_t c = json_is_integer(channels) ? json_integer_value(channels) : 0;
        if (c != 1 && c != 3)
            st = dvppd_spec_bad(err, "normalize.channels", "want 1 (grey) or 3");
        else
            s->channels = (unsigned)c;
    }
    if (st == DVPP_OK)
        st = j_tensor_type(n, "normalize", &s->layout, &s->dtype, err);
    return st;
}

static dvpp_status j_aipp(dvppd_spec_draft *d, json_t *a, dvpp_err *err)
{
    static const char *const keys[] = {"name", "config", "op", "layout", "dtype", NULL};
    dvpp_pipeline *p = &d->s->pipe;
    json_t *name = json_object_get(a, "name"), *cfg = json_object_get(a, "config");
    dvpp_status st;

    if (!a)
        return DVPP_OK;
    if (d->env->kind != DVPPD_SPEC_TENSOR)
        return dvppd_spec_bad(err, "aipp", "only for tensor endpoints");
    st = only_keys(a, "aipp", keys, err);
    if (st != DVPP_OK)
        return st;
    if ((name && !json_is_string(name)) || (cfg && !json_is_string(cfg)))
        return dvppd_spec_bad(err, "aipp", "name and config are strings");
    if (name)
        d->aipp_name = json_string_value(name);
    if (cfg) {
        if (d->aipp_inline)
            return dvppd_spec_bad(err, "aipp.config", "an inline config is already posted");
        d->aipp_inline = true;
        /* The JSON owns the text for as long as the draft lives. */
        ((dvppd_spec_env *)d->env)->aipp_text = json_string_value(cfg);
        ((dvppd_spec_env *)d->env)->aipp_len = json_string_length(cfg);
    }
    if (!name && !cfg && !d->aipp_inline)
        return dvppd_spec_bad(err, "aipp", "want a name or a config");
    st = j_u32(a, "op", "aipp", 0, DVPP_AIPP_MAX_OPS - 1, &d->aipp_op, err);
    if (st == DVPP_OK)
        st = j_tensor_type(a, "aipp", &p->aipp_layout, &p->aipp_dtype, err);
    return st;
}

static dvpp_status j_output(dvppd_spec_draft *d, json_t *o, dvpp_err *err)
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
            return dvppd_spec_bad(err, "output.format",
                                  "a format name (image and decode endpoints)");
        d->format = json_string_value(fmt);
    }
    if (st == DVPP_OK && json_object_get(o, "quality")) {
        if (d->env->kind != DVPPD_SPEC_IMAGE)
            return dvppd_spec_bad(err, "output.quality", "only for /v1/image");
        st = j_u32(o, "quality", "output", 0, 100, &q, err);
        p->quality = (int)q;
    }
    if (st == DVPP_OK && out) {
        const char *s = json_string_value(out);
        if (!s || (strcmp(s, "npy") && strcmp(s, "raw")) || d->env->kind == DVPPD_SPEC_IMAGE)
            return dvppd_spec_bad(err, "output.out",
                                  "want npy or raw (tensor and decode endpoints)");
        d->s->raw_out = !strcmp(s, "raw");
    }
    if (st == DVPP_OK && ring) {
        const char *r = json_string_value(ring);
        if (d->env->kind != DVPPD_SPEC_TENSOR || !r || !*r || strlen(r) >= sizeof(d->s->ring))
            return dvppd_spec_bad(err, "output.ring",
                                  "want the name of an open ring (tensors)");
        memcpy(d->s->ring, r, strlen(r) + 1);
    }
    if (st == DVPP_OK && align) {
        double a[2];
        if (d->env->kind != DVPPD_SPEC_DECODE)
            return dvppd_spec_bad(err, "output.align", "only for /v1/decode");
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
#define SPEC_MAX_BYTES DVPPD_SPEC_MAX_BYTES

/* *root with "preset": the preset's spec with every other key of *root
 * put over it (one level: a key replaces the preset's whole value).
 * Replaces *root (the old one is released either way; NULL on failure:
 * an unknown preset or one not for this endpoint; the preset's own text
 * was checked when it was loaded). */
static dvpp_status with_preset(const dvppd_spec_env *env, json_t **root, dvpp_err *err)
{
    json_t *name = json_object_get(*root, "preset"), *base = NULL, *v;
    dvppd_preset_ref ref;
    const char *key;
    json_error_t je;
    dvpp_status st = DVPP_OK;

    if (!json_is_string(name))
        st = dvppd_spec_bad(err, "preset", "want the name of a preset (a string)");
    if (st == DVPP_OK)
        st = dvppd_spec_preset_get(env, json_string_value(name), &ref, err);
    if (st == DVPP_OK) {
        base = json_loadb(ref.json, ref.len, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(base))
            st = dvpp_err_set(err, DVPP_EINVAL, "preset", "preset '%.64s': bad spec",
                              json_string_value(name));
    }
    if (st == DVPP_OK)
        json_object_foreach(*root, key, v)
            if (strcmp(key, "preset") && json_object_set(base, key, v)) {
                st = dvpp_err_set(err, DVPP_ENOMEM, "preset", "preset: out of memory");
                break;
            }
    json_decref(*root);
    if (st != DVPP_OK) {
        json_decref(base);
        base = NULL;
    }
    *root = base;
    return st;
}

dvpp_status dvppd_spec_from_json(const dvppd_spec_env *env, const char *json,
                                 size_t len, dvppd_spec *out, dvpp_err *err)
{
    static const char *const keys[] = {"input", "raw", "decode", "ops", "normalize",
                                       "aipp", "output", "strict", NULL};
    dvppd_spec_env local = *env; /* an inline config may come from the JSON */
    json_error_t je;
    json_t *root;
    dvpp_status st;
    dvppd_spec_draft d;

    dvppd_spec_draft_init(&d, &local, out);
    d.aipp_inline = env->aipp_text != NULL;
    if (len > SPEC_MAX_BYTES)
        return dvpp_err_set(err, DVPP_ELIMIT, "spec",
                            "spec: %zu bytes of JSON, above the limit of %d", len,
                            SPEC_MAX_BYTES);
    root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return dvpp_err_set(err, DVPP_EINVAL, "spec", "spec: JSON error at %d:%d: %s",
                            je.line, je.column, je.text);
    if (json_is_object(root) && json_object_get(root, "preset") &&
        (st = with_preset(env, &root, err)) != DVPP_OK)
        return st;
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
        st = dvppd_spec_finish(&d, err);
    json_decref(root);
    return st;
}
