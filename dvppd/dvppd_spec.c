/* dvppd_spec: the part of the request spec module both syntaxes share:
 * the draft they fill, its assembly into the pipeline's output, and the
 * value parsers of every front end. Query parameters are in
 * dvppd_spec_query.c, JSON specs in dvppd_spec_json.c. */
#include "dvppd_spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dvpp_mem.h"
#include "dvppd_spec_int.h"

void dvppd_spec_draft_init(dvppd_spec_draft *d, const dvppd_spec_env *env, dvppd_spec *s)
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

bool dvppd_parse_flag(const char *v, bool *out)
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

dvpp_status dvppd_spec_bad(dvpp_err *err, const char *field, const char *why)
{
    return dvpp_err_set(err, DVPP_EINVAL, field, "%s: %s", field, why);
}

/* --- presets ------------------------------------------------------------------------ */

static const char *kind_routes(dvppd_spec_kind k)
{
    return k == DVPPD_SPEC_TENSOR ? "tensor endpoints (/v1/preprocess, /v1/batch, /v1/jobs, "
                                    "socket Submit, video tensors)"
           : k == DVPPD_SPEC_IMAGE ? "/v1/image"
                                   : "/v1/decode (and video frames as pixels)";
}

dvpp_status dvppd_spec_preset_get(const dvppd_spec_env *env, const char *name,
                                  dvppd_preset_ref *out, dvpp_err *err)
{
    if (!name || !*name)
        return dvppd_spec_bad(err, "preset", "want the name of a preset (GET /v1/presets)");
    if (!env->preset_lookup || !env->preset_lookup(env->preset_ctx, name, out))
        return dvpp_err_set(err, DVPP_EINVAL, "preset",
                            "preset: no preset named '%.64s' (GET /v1/presets lists them)",
                            name);
    if (out->kind != env->kind)
        return dvpp_err_set(err, DVPP_EINVAL, "preset",
                            "preset: '%.64s' is for %s only", name, kind_routes(out->kind));
    return DVPP_OK;
}

/* --- assembling the output ---------------------------------------------------------- */

/* The op of @d's AIPP source into the pipeline. */
static dvpp_status take_aipp(dvppd_spec_draft *d, const char *field, dvpp_err *err)
{
    const dvppd_spec_env *env = d->env;
    const dvpp_aipp_config *cfg = NULL;
    dvpp_aipp_config *parsed = NULL;
    dvpp_status st = DVPP_OK;

    if (d->aipp_name && d->aipp_inline)
        return dvppd_spec_bad(err, field, "a named config or an inline one, not both");
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

static dvpp_status assemble_tensor(dvppd_spec_draft *d, dvpp_err *err)
{
    dvpp_pipeline *p = &d->s->pipe;
    bool aipp = d->aipp_name || d->aipp_inline;

    p->output = DVPP_PIPE_OUT_TENSOR;
    if (!aipp) {
        if (d->has_aipp_opts)
            return dvppd_spec_bad(err, "aipp",
                                  "aipp_op/aipp_layout/aipp_dtype need an aipp config");
        if (d->scale_set && !d->std_set) { /* blobFromImage: (x - mean) * s */
            p->norm.scale = 1.0;
            for (int i = 0; i < 3; i++)
                p->norm.std[i] = 1.0 / d->mult;
        } else if (d->scale_set) {
            return dvppd_spec_bad(err, "scale", "give std (torchvision) or scale "
                                                "(blobFromImage), not both");
        }
        p->post = DVPP_PIPE_POST_NORM;
        return DVPP_OK;
    }
    if (d->has_norm || d->std_set)
        return dvppd_spec_bad(err, "aipp", "an AIPP config replaces mean/std/scale");
    return take_aipp(d, "aipp", err);
}

/* Thumbnails (/v1/image) decode JPEGs with DCT scaling by default, as
 * imgproxy and libvips do: the largest reduction that keeps the first
 * resize a downscale. Tensors and decodes keep exact full decodes unless
 * asked. */
static void default_shrink(dvppd_spec_draft *d)
{
    dvpp_pipeline *p = &d->s->pipe;

    if (!d->shrink_set && p->nops > 0 && p->ops[0].kind == DVPP_PIPE_OP_RESIZE &&
        !p->decode.has_roi)
        p->decode.shrink_on_load = true;
}

dvpp_status dvppd_spec_finish(dvppd_spec_draft *d, dvpp_err *err)
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
            return dvppd_spec_bad(err, "format", "want jpeg or png");
        return DVPP_OK;
    }
    p->encoding = DVPP_PIPE_ENC_NONE;
    p->out_format = DVPP_PIXEL_RGB;
    if (d->format && !dvpp_pixfmt_parse(d->format, &p->out_format))
        return dvppd_spec_bad(err, "format", "unknown pixel format");
    return DVPP_OK;
}
