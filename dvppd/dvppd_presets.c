/* dvppd_presets: the shipped presets, the config's, and the lookup
 * (see dvppd_presets.h; the semantics are in docs/presets.md). */
#include "dvppd_presets.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvppd_config.h"

_Static_assert(DVPPD_PRESETS_TEXT_CAP > DVPPD_PRESETS_MAX_BYTES,
               "dvppd_config.presets holds the largest presets text");

/* The shipped presets. "Shorter side S, centre crop C" is a shorter
 * resize (round floor: torchvision's int() of the long side) and a centre
 * crop rounded as the reference does: torchvision's CenterCrop (imagenet,
 * and OpenAI CLIP's preprocess, which is torchvision's Resize +
 * CenterCrop) rounds the offset half to even ("even"); transformers'
 * center_crop floors (dvppctl's HF import). */
typedef struct builtin_preset {
    const char *name, *description;
    dvppd_spec_kind kind;
    const char *spec;
} builtin_preset;

static const builtin_preset k_builtin[DVPPD_BUILTIN_PRESETS] = {
    {"imagenet",
     "torchvision ImageNet eval: Resize(256) (PIL bilinear), CenterCrop(224), ToTensor, "
     "Normalize(ImageNet mean/std); float32 NCHW RGB",
     DVPPD_SPEC_TENSOR,
     "{\"ops\":[{\"resize\":{\"w\":256,\"mode\":\"shorter\",\"interp\":\"bilinear\","
     "\"parity\":\"pil\",\"round\":\"floor\"}},"
     "{\"crop\":{\"center\":[224,224],\"round\":\"even\"}}],"
     "\"normalize\":{\"mean\":[0.485,0.456,0.406],\"std\":[0.229,0.224,0.225],"
     "\"order\":\"rgb\",\"layout\":\"nchw\",\"dtype\":\"float32\"}}"},
    {"clip",
     "OpenAI CLIP: shorter side 224 (PIL bicubic), centre crop 224, /255, CLIP mean/std; "
     "float32 NCHW RGB",
     DVPPD_SPEC_TENSOR,
     "{\"ops\":[{\"resize\":{\"w\":224,\"mode\":\"shorter\",\"interp\":\"bicubic\","
     "\"parity\":\"pil\",\"round\":\"floor\"}},"
     "{\"crop\":{\"center\":[224,224],\"round\":\"even\"}}],"
     "\"normalize\":{\"mean\":[0.48145466,0.4578275,0.40821073],"
     "\"std\":[0.26862954,0.26130258,0.27577711],\"order\":\"rgb\",\"layout\":\"nchw\","
     "\"dtype\":\"float32\"}}"},
    {"yolov8",
     "Ultralytics YOLOv8: letterbox 640x640 (keep ratio, centred, grey 114, cv2 bilinear), "
     "/255; float32 NCHW RGB",
     DVPPD_SPEC_TENSOR,
     "{\"ops\":[{\"resize\":{\"w\":640,\"h\":640,\"mode\":\"letterbox\","
     "\"interp\":\"bilinear\",\"parity\":\"cv2\",\"pad\":[114,114,114]}}],"
     "\"normalize\":{\"order\":\"rgb\",\"layout\":\"nchw\",\"dtype\":\"float32\"}}"},
    {"ascend-yuv",
     "Ascend 310 AIPP input: decode to YUV420SP (NV12), rows padded to a multiple of 16 "
     "pixels and the height to a multiple of 2 (the 310's VPC output strides); "
     "/v1/decode only",
     DVPPD_SPEC_DECODE, "{\"output\":{\"format\":\"nv12\",\"align\":[16,2]}}"},
};

const char *dvppd_preset_kind_name(dvppd_spec_kind k)
{
    return k == DVPPD_SPEC_TENSOR ? "tensor" : k == DVPPD_SPEC_IMAGE ? "image" : "decode";
}

static bool kind_parse(const char *s, dvppd_spec_kind *out)
{
    static const dvppd_spec_kind kinds[] = {DVPPD_SPEC_TENSOR, DVPPD_SPEC_IMAGE,
                                            DVPPD_SPEC_DECODE};
    for (size_t i = 0; s && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(s, dvppd_preset_kind_name(kinds[i]))) {
            *out = kinds[i];
            return true;
        }
    return false;
}

/* Names travel in URLs (?preset=NAME) and error messages: a small,
 * unambiguous alphabet. */
static bool name_ok(const char *n)
{
    size_t len = strlen(n);

    return len > 0 && len < DVPPD_PRESET_NAME_MAX &&
           strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
               len;
}

/* --- the config's object ------------------------------------------------------ */

static dvpp_status check_entry(const char *name, json_t *e, dvpp_err *err)
{
    const char *key;
    json_t *v;
    dvppd_spec_kind kind;

    if (!name_ok(name))
        return dvpp_err_set(err, DVPP_EINVAL, "presets",
                            "presets.%.64s: a name is 1..%d characters of A-Z a-z 0-9 . _ -",
                            name, DVPPD_PRESET_NAME_MAX - 1);
    if (!json_is_object(e))
        return dvpp_err_set(err, DVPP_EINVAL, "presets",
                            "presets.%s: want {\"description\": ..., \"spec\": {...}}", name);
    json_object_foreach(e, key, v) {
        if (!strcmp(key, "description")) {
            if (!json_is_string(v) || json_string_length(v) >= DVPPD_PRESET_DESC_MAX)
                return dvpp_err_set(err, DVPP_EINVAL, "presets",
                                    "presets.%s.description: want a string below %d bytes",
                                    name, DVPPD_PRESET_DESC_MAX);
        } else if (!strcmp(key, "kind")) {
            if (!kind_parse(json_string_value(v), &kind))
                return dvpp_err_set(err, DVPP_EINVAL, "presets",
                                    "presets.%s.kind: want tensor, image or decode", name);
        } else if (!strcmp(key, "spec")) {
            if (!json_is_object(v))
                return dvpp_err_set(err, DVPP_EINVAL, "presets",
                                    "presets.%s.spec: want a JSON spec object", name);
        } else {
            return dvpp_err_set(err, DVPP_EINVAL, "presets",
                                "presets.%s: unknown key '%.64s' (description, kind, spec)",
                                name, key);
        }
    }
    if (!json_object_get(e, "spec"))
        return dvpp_err_set(err, DVPP_EINVAL, "presets", "presets.%s: no \"spec\"", name);
    return DVPP_OK;
}

dvpp_status dvppd_preset_config_take(json_t *obj, char *text, size_t cap, dvpp_err *err)
{
    const char *name;
    json_t *e;
    char *dump;
    size_t len;

    if (!json_is_object(obj))
        return dvpp_err_set(err, DVPP_EINVAL, "presets",
                            "presets: want {\"NAME\": {\"description\": ..., \"spec\": ...}}");
    if (json_object_size(obj) > DVPPD_MAX_PRESETS)
        return dvpp_err_set(err, DVPP_ELIMIT, "presets", "presets: %zu, at most %d",
                            json_object_size(obj), DVPPD_MAX_PRESETS);
    json_object_foreach(obj, name, e) {
        dvpp_status st = check_entry(name, e, err);
        if (st != DVPP_OK)
            return st;
    }
    dump = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
    if (!dump)
        return dvpp_err_set(err, DVPP_ENOMEM, "presets", "presets: out of memory");
    len = strlen(dump);
    if (len >= cap || len > DVPPD_PRESETS_MAX_BYTES) {
        free(dump);
        return dvpp_err_set(err, DVPP_ELIMIT, "presets",
                            "presets: %zu bytes of JSON together, above the limit of %d",
                            len, DVPPD_PRESETS_MAX_BYTES);
    }
    memcpy(text, dump, len + 1);
    free(dump);
    return DVPP_OK;
}

/* --- the set ------------------------------------------------------------------- */

/* @spec parsed for @kind as a request would be, the error (if any) moved
 * under "presets.NAME.": "presets.NAME.spec.ops[0].resize.interp: ...". */
static dvpp_status check_spec(const char *name, dvppd_spec_kind kind, const char *spec,
                              size_t len, dvppd_aipp_lookup aipp, void *aipp_ctx,
                              dvpp_err *err)
{
    dvppd_spec_env env = {kind, aipp, aipp_ctx, NULL, 0, NULL, NULL};
    dvppd_spec *s = malloc(sizeof(*s));
    dvpp_limits lim = dvpp_limits_default();
    dvpp_err e = {0};
    dvpp_status st;

    if (!s)
        return dvpp_err_set(err, DVPP_ENOMEM, "presets", "presets: out of memory");
    st = dvppd_spec_from_json(&env, spec, len, s, &e);
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&s->pipe, &lim, &e);
    free(s);
    if (st == DVPP_OK)
        return DVPP_OK;
    if (!strncmp(e.msg, "spec: ", 6))
        return dvpp_err_set(err, st, "presets", "presets.%s.%s", name, e.msg);
    return dvpp_err_set(err, st, "presets", "presets.%s.spec.%s", name, e.msg);
}

static dvpp_status add(dvppd_preset_set *s, const char *name, const char *desc,
                       dvppd_spec_kind kind, bool builtin, const char *spec, dvpp_err *err)
{
    dvppd_preset *p = NULL;
    size_t len = strlen(spec);

    for (unsigned i = 0; i < s->n; i++)
        if (!strcmp(s->p[i].name, name))
            p = &s->p[i]; /* a config preset replaces the shipped one */
    if (!p && s->n == sizeof(s->p) / sizeof(s->p[0]))
        return dvpp_err_set(err, DVPP_ELIMIT, "presets", "presets: too many");
    if (!p)
        p = &s->p[s->n++];
    free(p->spec);
    memset(p, 0, sizeof(*p));
    p->spec = malloc(len + 1);
    if (!p->spec)
        return dvpp_err_set(err, DVPP_ENOMEM, "presets", "presets: out of memory");
    memcpy(p->spec, spec, len + 1);
    p->spec_len = len;
    snprintf(p->name, sizeof(p->name), "%s", name);
    snprintf(p->description, sizeof(p->description), "%s", desc ? desc : "");
    p->kind = kind;
    p->builtin = builtin;
    return DVPP_OK;
}

static dvpp_status add_config(dvppd_preset_set *s, const char *name, json_t *e,
                              dvppd_aipp_lookup aipp, void *aipp_ctx, dvpp_err *err)
{
    dvppd_spec_kind kind = DVPPD_SPEC_TENSOR;
    char *spec;
    dvpp_status st = check_entry(name, e, err);

    if (st != DVPP_OK)
        return st;
    if (json_object_get(e, "kind"))
        kind_parse(json_string_value(json_object_get(e, "kind")), &kind);
    spec = json_dumps(json_object_get(e, "spec"), JSON_COMPACT);
    if (!spec)
        return dvpp_err_set(err, DVPP_ENOMEM, "presets", "presets: out of memory");
    st = check_spec(name, kind, spec, strlen(spec), aipp, aipp_ctx, err);
    if (st == DVPP_OK)
        st = add(s, name, json_string_value(json_object_get(e, "description")), kind, false,
                 spec, err);
    free(spec);
    return st;
}

dvpp_status dvppd_preset_set_load(dvppd_preset_set *s, const char *config_text,
                                  dvppd_aipp_lookup aipp, void *aipp_ctx, dvpp_err *err)
{
    json_t *root = NULL, *e;
    const char *name;
    json_error_t je;
    dvpp_status st = DVPP_OK;

    memset(s, 0, sizeof(*s));
    for (unsigned i = 0; st == DVPP_OK && i < DVPPD_BUILTIN_PRESETS; i++) {
        const builtin_preset *b = &k_builtin[i];
        st = check_spec(b->name, b->kind, b->spec, strlen(b->spec), aipp, aipp_ctx, err);
        if (st == DVPP_OK)
            st = add(s, b->name, b->description, b->kind, true, b->spec, err);
    }
    if (st == DVPP_OK && config_text && *config_text) {
        root = json_loads(config_text, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(root))
            st = dvpp_err_set(err, DVPP_EINVAL, "presets", "presets: %s", je.text);
    }
    if (st == DVPP_OK && root)
        json_object_foreach(root, name, e) {
            st = add_config(s, name, e, aipp, aipp_ctx, err);
            if (st != DVPP_OK)
                break;
        }
    json_decref(root);
    if (st != DVPP_OK)
        dvppd_preset_set_fini(s);
    return st;
}

void dvppd_preset_set_fini(dvppd_preset_set *s)
{
    for (unsigned i = 0; i < s->n; i++)
        free(s->p[i].spec);
    memset(s, 0, sizeof(*s));
}

bool dvppd_preset_find(void *ctx, const char *name, dvppd_preset_ref *out)
{
    const dvppd_preset_set *s = ctx;

    for (unsigned i = 0; s && name && i < s->n; i++)
        if (!strcmp(s->p[i].name, name)) {
            *out = (dvppd_preset_ref){s->p[i].spec, s->p[i].spec_len, s->p[i].kind};
            return true;
        }
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const dvppd_preset *const *)a)->name,
                  (*(const dvppd_preset *const *)b)->name);
}

json_t *dvppd_preset_set_json(const dvppd_preset_set *s)
{
    const dvppd_preset *sorted[DVPPD_MAX_PRESETS + DVPPD_BUILTIN_PRESETS];
    json_t *list = json_array(), *root = list ? json_pack("{s:o}", "presets", list) : NULL;

    if (!root)
        return NULL;
    for (unsigned i = 0; i < s->n; i++)
        sorted[i] = &s->p[i];
    qsort(sorted, s->n, sizeof(sorted[0]), by_name);
    for (unsigned i = 0; i < s->n; i++) {
        const dvppd_preset *p = sorted[i];
        json_t *spec = json_loadb(p->spec, p->spec_len, 0, NULL);
        json_t *o = spec ? json_pack("{s:s, s:s, s:s, s:s, s:o}", "name", p->name, "source",
                                     p->builtin ? "builtin" : "config", "kind",
                                     dvppd_preset_kind_name(p->kind), "description",
                                     p->description, "spec", spec)
                         : NULL;
        if (!o || json_array_append_new(list, o)) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}
