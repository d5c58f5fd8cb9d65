/* ctl_preset: `dvppctl preset import preprocessor_config.json [--name N]`:
 * a Hugging Face image processor config -> a dvppd preset
 * ({"NAME": {"description": ..., "spec": {...}}}, to paste into the
 * daemon config's "presets"; docs/presets.md).
 *
 * The semantics reproduced are transformers' (image_transforms.py and the
 * processors' preprocess()): resize (PIL, the given resample) to
 * size.shortest_edge keeping the ratio or to exactly height x width, a
 * centre crop at floor((h - ch) / 2), floor((w - cw) / 2), rescale by
 * rescale_factor, normalise by image_mean / image_std, RGB, float32 NCHW.
 * A key that would change the pixels and cannot be expressed exactly is
 * refused by name; keys that describe the processor only are ignored.
 *
 * Only the processor classes of k_classes are imported: their resize()
 * and defaults were read in transformers (image_processing_vit.py, _deit,
 * _clip, _bit, _convnext); any other class (Levit's 256/224 short side,
 * MobileNet's, a remote-code auto_map class, the torchvision "Fast"
 * variants) resizes otherwise and is refused by name. A config that names
 * no class is imported with the generic semantics above, every key whose
 * default differs between classes required explicitly. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* Keys that name or route the processor and change no pixel (auto_map
 * is checked in read_class: it may name a remote-code processor). */
static const char *const k_harmless[] = {
    "image_processor_type", "feature_extractor_type", "processor_class",
    "_processor_class", "auto_map", "model_input_names", NULL,
};

/* What a legacy integer "size" means: get_size_dict's default_to_square. */
typedef enum hf_int_size { HF_INT_SQUARE, HF_INT_SHORTEST, HF_INT_REFUSED } hf_int_size;

/* Whether the class has a centre-crop step, and its do_center_crop default. */
typedef enum hf_crop_rule {
    HF_CROP_NONE,       /* no such step: transformers ignores do_center_crop */
    HF_CROP_DEFAULT_ON, /* do_center_crop defaults to true, crop_size to 224 */
    HF_CROP_EXPLICIT,   /* no class known: do_center_crop must be given */
} hf_crop_rule;

/* One processor class whose preprocess() the importer reproduces exactly. */
typedef struct hf_class {
    const char *name;       /* transformers' class (NULL: the generic one) */
    hf_int_size int_size;
    bool shortest_ok;       /* its resize() takes {"shortest_edge"} */
    bool hw_ok;             /* its resize() takes {"height", "width"} */
    hf_crop_rule crop;
    bool crop_pct;          /* ConvNeXt's resize-then-crop (default 224/256) */
} hf_class;

static const hf_class k_classes[] = {
    {"ViTImageProcessor", HF_INT_SQUARE, false, true, HF_CROP_NONE, false},
    {"DeiTImageProcessor", HF_INT_SQUARE, false, true, HF_CROP_DEFAULT_ON, false},
    {"CLIPImageProcessor", HF_INT_SHORTEST, true, true, HF_CROP_DEFAULT_ON, false},
    {"BitImageProcessor", HF_INT_SHORTEST, true, true, HF_CROP_DEFAULT_ON, false},
    {"ConvNextImageProcessor", HF_INT_SHORTEST, true, false, HF_CROP_NONE, true},
};

static const hf_class k_generic = {NULL, HF_INT_REFUSED, true, true, HF_CROP_EXPLICIT, false};

/* transformers' crop_size default for the HF_CROP_DEFAULT_ON classes. */
#define HF_DEFAULT_CROP 224u
/* ConvNextImageProcessor's crop_pct when the config has none (or null). */
#define HF_CONVNEXT_CROP_PCT (224.0 / 256.0)
/* The largest side the importer writes (dvppd's resize bound). */
#define HF_SIDE_MAX 16384u
/* dvppd's normalize.std and normalize.mean ranges (dvppd_spec_json.c). */
#define HF_STD_MIN 1e-12
#define HF_STD_MAX 1e9
#define HF_MEAN_ABS_MAX 1e9

/* Keys read below. */
static const char *const k_known[] = {
    "do_resize", "size", "resample", "do_center_crop", "crop_size", "do_rescale",
    "rescale_factor", "do_normalize", "image_mean", "image_std", "do_convert_rgb",
    "crop_pct", NULL,
};

typedef struct hf_cfg {
    json_t *root;
    const char *type;       /* image_processor_type or feature_extractor_type */
    const hf_class *cls;    /* the class it names (k_generic: none) */
    bool resize, crop, rescale, normalize;
    uint32_t short_edge;    /* size.shortest_edge (0: height/width) */
    uint32_t h, w;          /* size.height/width */
    uint32_t ch, cw;        /* crop_size */
    const char *interp;
    double factor, mean[3], std[3];
    char why[256];          /* the refusal, naming the field */
} hf_cfg;

static bool in_list(const char *const *l, const char *k)
{
    for (; *l; l++)
        if (!strcmp(*l, k))
            return true;
    return false;
}

static bool refuse(hf_cfg *c, const char *field, const char *why)
{
    snprintf(c->why, sizeof(c->why), "%s: %s", field, why);
    return false;
}

static bool get_bool(hf_cfg *c, const char *key, bool def, bool *out)
{
    json_t *v = json_object_get(c->root, key);

    *out = def;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_boolean(v))
        return refuse(c, key, "want true or false");
    *out = json_is_true(v);
    return true;
}

static bool get_side(hf_cfg *c, json_t *v, const char *field, uint32_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 16384)
        return refuse(c, field, "want an integer 1..16384");
    *out = (uint32_t)json_integer_value(v);
    return true;
}

/* The class transformers' AutoImageProcessor would build: the
 * image_processor_type, else the feature_extractor_type with
 * "FeatureExtractor" read as "ImageProcessor" (its backward-compatible
 * mapping), into c->cls; a class not in k_classes is refused by name. */
static bool read_class(hf_cfg *c)
{
    json_t *ip = json_object_get(c->root, "image_processor_type");
    json_t *fe = json_object_get(c->root, "feature_extractor_type");
    json_t *am = json_object_get(c->root, "auto_map");
    const char *field, *fx;
    json_t *v;
    char name[128];

    if (json_is_null(ip))
        ip = NULL; /* None: transformers falls back to feature_extractor_type */
    field = ip ? "image_processor_type" : "feature_extractor_type";
    v = ip ? ip : fe;
    c->cls = &k_generic;
    if (json_is_object(am) && (json_object_get(am, "AutoImageProcessor") ||
                               json_object_get(am, "AutoFeatureExtractor")))
        return refuse(c, "auto_map", "a remote-code processor class is not supported");
    if (!v || json_is_null(v))
        return true;
    if (!json_is_string(v) || json_string_length(v) >= 64)
        return refuse(c, field, "want a class name");
    c->type = json_string_value(v);
    fx = strstr(c->type, "FeatureExtractor");
    if (!ip && fx)
        snprintf(name, sizeof(name), "%.*sImageProcessor%s", (int)(fx - c->type), c->type,
                 fx + strlen("FeatureExtractor"));
    else
        snprintf(name, sizeof(name), "%s", c->type);
    for (size_t i = 0; i < sizeof(k_classes) / sizeof(k_classes[0]); i++)
        if (!strcmp(k_classes[i].name, name)) {
            c->cls = &k_classes[i];
            return true;
        }
    snprintf(c->why, sizeof(c->why), "%s: %s is not supported (imported: ViT, DeiT, CLIP, "
             "BiT and ConvNeXt image processors; docs/presets.md)", field, c->type);
    return false;
}

static bool read_size(hf_cfg *c)
{
    json_t *s = json_object_get(c->root, "size");
    const char *key;
    json_t *v;

    if (!s)
        return refuse(c, "size", "missing (do_resize is true)");
    if (json_is_integer(s)) {
        if (!get_side(c, s, "size", &c->h))
            return false;
        c->w = c->h;
        if (c->cls->int_size == HF_INT_REFUSED)
            return refuse(c, "size", "an integer is the shortest edge or a square "
                                     "depending on the processor: give "
                                     "image_processor_type, or {\"shortest_edge\"} or "
                                     "{\"height\", \"width\"}");
        if (c->cls->int_size == HF_INT_SHORTEST)
            c->short_edge = c->h, c->h = c->w = 0;
        return true;
    }
    if (!json_is_object(s))
        return refuse(c, "size", "want {\"shortest_edge\": N} or {\"height\", \"width\"}");
    json_object_foreach(s, key, v) {
        if (!strcmp(key, "shortest_edge")) {
            if (!get_side(c, v, "size.shortest_edge", &c->short_edge))
                return false;
        } else if (!strcmp(key, "height")) {
            if (!get_side(c, v, "size.height", &c->h))
                return false;
        } else if (!strcmp(key, "width")) {
            if (!get_side(c, v, "size.width", &c->w))
                return false;
        } else {
            char f[96];
            snprintf(f, sizeof(f), "size.%.64s", key);
            return refuse(c, f, "not supported (shortest_edge, or height and width)");
        }
    }
    if (c->short_edge && (c->h || c->w))
        return refuse(c, "size", "shortest_edge or height/width, not both");
    if (!c->short_edge && (!c->h || !c->w))
        return refuse(c, "size", "want shortest_edge, or both height and width");
    if (c->short_edge && !c->cls->shortest_ok)
        return refuse(c, "size.shortest_edge", "this processor's resize takes height and "
                                               "width only");
    if (!c->short_edge && !c->cls->hw_ok)
        return refuse(c, "size", "this processor's resize takes shortest_edge only");
    return true;
}

static bool read_resample(hf_cfg *c)
{
    /* PIL.Image.Resampling codes; Pillow's filters are dvppd's pil parity. */
    static const char *const names[] = {"nearest", "lanczos", "bilinear", "bicubic", "box",
                                        "hamming"};
    json_t *v = json_object_get(c->root, "resample");

    if (!v)
        return refuse(c, "resample", "missing (its default depends on the processor)");
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 5)
        return refuse(c, "resample", "want a PIL code 0..5 (0 nearest, 1 lanczos, "
                                     "2 bilinear, 3 bicubic, 4 box, 5 hamming)");
    c->interp = names[json_integer_value(v)];
    return true;
}

/* ConvNeXt's crop_pct (ConvNextImageProcessor.resize): below 384 the
 * shorter side goes to int(shortest_edge / crop_pct), then a centre crop
 * of shortest_edge x shortest_edge; from 384 up a warp to that square.
 * Missing or null is the class's 224 / 256 (its __init__ and preprocess
 * both replace None by it). */
static bool read_crop_pct(hf_cfg *c)
{
    json_t *v = json_object_get(c->root, "crop_pct");
    double pct = HF_CONVNEXT_CROP_PCT, side;

    if (!c->cls->crop_pct) {
        if (v && !json_is_null(v))
            return refuse(c, "crop_pct", "only ConvNeXt's processor is known to use it");
        return true;
    }
    if (v && !json_is_null(v) &&
        (!json_is_number(v) || !((pct = json_number_value(v)) > 0) || pct > 1))
        return refuse(c, "crop_pct", "want a number in (0, 1]");
    if (!c->resize)
        return true; /* no resize: ConvNeXt neither resizes nor crops */
    if (c->short_edge >= 384) {
        c->h = c->w = c->short_edge, c->short_edge = 0;
        return true;
    }
    /* in double, checked before the cast: a tiny crop_pct would overflow it */
    side = floor((double)c->short_edge / pct); /* Python's int() of a positive */
    if (!(side <= HF_SIDE_MAX))
        return refuse(c, "crop_pct", "the resize's shorter side int(shortest_edge / "
                                     "crop_pct) is above 16384");
    c->crop = true;
    c->ch = c->cw = c->short_edge;
    c->short_edge = (uint32_t)side;
    return true;
}

/* do_center_crop and crop_size by the class's rule: none (a key that asks
 * for a crop transformers would not do is refused), the class's default
 * (on, 224 x 224), or, for a config naming no class, explicit. */
static bool read_crop(hf_cfg *c)
{
    json_t *s = json_object_get(c->root, "crop_size");
    json_t *dc = json_object_get(c->root, "do_center_crop");
    hf_crop_rule rule = c->cls->crop;

    if (rule == HF_CROP_EXPLICIT && s && !json_is_null(s) && (!dc || json_is_null(dc)))
        return refuse(c, "do_center_crop", "missing with crop_size given (its default "
                                           "depends on the processor: give it, or "
                                           "image_processor_type)");
    if (!get_bool(c, "do_center_crop", rule == HF_CROP_DEFAULT_ON, &c->crop))
        return false;
    if (rule == HF_CROP_NONE && c->crop)
        return refuse(c, "do_center_crop", "this processor has no centre crop "
                                           "(transformers ignores it)");
    if (rule == HF_CROP_NONE && s && !json_is_null(s))
        return refuse(c, "crop_size", "this processor has no centre crop "
                                      "(transformers ignores it)");
    if (!c->crop)
        return true;
    if ((!s || json_is_null(s)) && rule == HF_CROP_DEFAULT_ON) {
        c->ch = c->cw = HF_DEFAULT_CROP;
        return true;
    }
    if (json_is_integer(s)) {
        if (!get_side(c, s, "crop_size", &c->ch))
            return false;
        c->cw = c->ch;
        return true;
    }
    if (!json_is_object(s) || json_object_size(s) != 2)
        return refuse(c, "crop_size", "want {\"height\": H, \"width\": W} or an integer");
    return get_side(c, json_object_get(s, "height"), "crop_size.height", &c->ch) &&
           get_side(c, json_object_get(s, "width"), "crop_size.width", &c->cw);
}

static bool read_triple(hf_cfg *c, const char *key, double def, double *out)
{
    json_t *v = json_object_get(c->root, key);

    for (int i = 0; i < 3; i++)
        out[i] = def;
    if (!v)
        return refuse(c, key, "missing (do_normalize is true)");
    if (json_is_number(v)) {
        for (int i = 0; i < 3; i++)
            out[i] = json_number_value(v);
        return true;
    }
    if (!json_is_array(v) || json_array_size(v) != 3)
        return refuse(c, key, "want 3 numbers (RGB)");
    for (int i = 0; i < 3; i++) {
        if (!json_is_number(json_array_get(v, (size_t)i)))
            return refuse(c, key, "want 3 numbers (RGB)");
        out[i] = json_number_value(json_array_get(v, (size_t)i));
    }
    return true;
}

static bool read_values(hf_cfg *c)
{
    json_t *f = json_object_get(c->root, "rescale_factor");
    bool rgb;

    if (!get_bool(c, "do_rescale", true, &c->rescale) ||
        !get_bool(c, "do_normalize", true, &c->normalize) ||
        !get_bool(c, "do_convert_rgb", true, &rgb))
        return false;
    c->factor = 1.0 / 255.0;
    if (c->rescale && f && (!json_is_number(f) || !(json_number_value(f) > 0)))
        return refuse(c, "rescale_factor", "want a number > 0");
    if (c->rescale && f)
        c->factor = json_number_value(f);
    if (!c->rescale)
        c->factor = 1.0;
    if (!c->normalize) {
        for (int i = 0; i < 3; i++)
            c->mean[i] = 0, c->std[i] = 1;
        return true;
    }
    if (!read_triple(c, "image_mean", 0, c->mean) || !read_triple(c, "image_std", 1, c->std))
        return false;
    for (int i = 0; i < 3; i++)
        if (!(c->std[i] > 0))
            return refuse(c, "image_std", "want numbers > 0");
    return true;
}

/* The exported mean m / (255 f) and std s / (255 f) (normalize_json) must
 * be finite and inside dvppd's normalize ranges, else the preset would not
 * load (or jansson would not write it): checked here, naming the key. */
static bool check_values(hf_cfg *c)
{
    double k = 255.0 * c->factor;

    if (!isfinite(k) || !(k > 0) || !isfinite(1.0 / k))
        return refuse(c, "rescale_factor", "out of range (255 * rescale_factor must be "
                                           "a finite, invertible number)");
    for (int i = 0; i < 3; i++) {
        double m = c->mean[i] / k, s = c->std[i] / k;
        if (!isfinite(m) || fabs(m) > HF_MEAN_ABS_MAX)
            return refuse(c, "image_mean", "image_mean / (255 * rescale_factor) is outside "
                                           "dvppd's mean range [-1e9, 1e9]");
        if (!isfinite(s) || s < HF_STD_MIN || s > HF_STD_MAX)
            return refuse(c, "image_std", "image_std / (255 * rescale_factor) is outside "
                                          "dvppd's std range [1e-12, 1e9] (check "
                                          "rescale_factor too)");
    }
    return true;
}

static bool read_config(hf_cfg *c)
{
    const char *key;
    json_t *v;

    if (!json_is_object(c->root))
        return refuse(c, "config", "want a JSON object");
    json_object_foreach(c->root, key, v)
        if (!in_list(k_harmless, key) && !in_list(k_known, key))
            return refuse(c, key, "not supported (it may change the pixels)");
    if (!read_class(c) || !get_bool(c, "do_resize", true, &c->resize))
        return false;
    if (c->resize && (!read_size(c) || !read_resample(c)))
        return false;
    return read_crop(c) && read_crop_pct(c) && read_values(c) && check_values(c);
}

/* --- the spec --------------------------------------------------------------- */

/* A shorter-side resize rounds the long side down: transformers'
 * get_resize_output_image_size is int(size * long / short). */
static json_t *resize_op(const char *interp, uint32_t w, uint32_t h, const char *mode)
{
    json_t *r = json_pack("{s:I, s:s, s:s, s:s}", "w", (json_int_t)w, "mode", mode,
                          "interp", interp, "parity", "pil");
    if (r && h)
        json_object_set_new(r, "h", json_integer(h));
    if (r && !strcmp(mode, "shorter"))
        json_object_set_new(r, "round", json_string("floor"));
    return json_pack("{s:o}", "resize", r);
}

static json_t *crop_op(uint32_t l, uint32_t t, uint32_t w, uint32_t h)
{
    return json_pack("{s:[I, I, I, I]}", "crop", (json_int_t)l, (json_int_t)t,
                     (json_int_t)(l + w - 1), (json_int_t)(t + h - 1));
}

/* transformers' center_crop: top = (h - ch) // 2, left = (w - cw) // 2:
 * dvppd's centre crop rounded "floor", resolved on the image the resize
 * makes (after a shorter-side resize the long side is known only then). */
static json_t *center_crop_op(uint32_t w, uint32_t h)
{
    return json_pack("{s:{s:[I, I], s:s}}", "crop", "center", (json_int_t)w, (json_int_t)h,
                     "round", "floor");
}

static bool add_crop(hf_cfg *c, json_t *ops)
{
    uint32_t s = c->short_edge;

    if (c->short_edge) {
        if (c->cw > s || c->ch > s)
            return refuse(c, "crop_size", "larger than size.shortest_edge (HF pads; dvppd "
                                          "presets do not)");
        json_array_append_new(ops, center_crop_op(c->cw, c->ch));
        return true;
    }
    if (!c->resize)
        return refuse(c, "do_center_crop", "without a resize the image size is unknown");
    if (c->cw > c->w || c->ch > c->h)
        return refuse(c, "crop_size", "larger than size (HF pads; dvppd presets do not)");
    if (c->cw != c->w || c->ch != c->h)
        json_array_append_new(ops, crop_op((c->w - c->cw) / 2, (c->h - c->ch) / 2, c->cw,
                                           c->ch));
    return true;
}

/* (x * f - m) / s == (x / 255 - m / (255 f)) / (s / (255 f)): dvppd's
 * torchvision form, for any rescale factor. */
static json_t *normalize_json(const hf_cfg *c)
{
    double k = 255.0 * c->factor;

    return json_pack("{s:[f, f, f], s:[f, f, f], s:s, s:s, s:s}", "mean", c->mean[0] / k,
                     c->mean[1] / k, c->mean[2] / k, "std", c->std[0] / k, c->std[1] / k,
                     c->std[2] / k, "order", "rgb", "layout", "nchw", "dtype", "float32");
}

static json_t *build_preset(hf_cfg *c, const char *file)
{
    json_t *ops = json_array(), *spec;
    char desc[256];

    if (c->resize)
        json_array_append_new(ops, c->short_edge ? resize_op(c->interp, c->short_edge, 0,
                                                             "shorter")
                                                 : resize_op(c->interp, c->w, c->h,
                                                             "stretch"));
    if (c->crop && !add_crop(c, ops)) {
        json_decref(ops);
        return NULL;
    }
    spec = json_pack("{s:o, s:o}", "ops", ops, "normalize", normalize_json(c));
    snprintf(desc, sizeof(desc), "imported from %.120s%s%.64s", file, c->type ? " (" : "",
             c->type ? c->type : "");
    if (c->type)
        strncat(desc, ")", sizeof(desc) - strlen(desc) - 1);
    return json_pack("{s:s, s:s, s:o}", "description", desc, "kind", "tensor", "spec", spec);
}

static int import_usage(void)
{
    fprintf(stderr, "usage: dvppctl preset import preprocessor_config.json [--name NAME]\n");
    return 2;
}

static int cmd_import(int argc, char **argv)
{
    const char *file = NULL, *name = "hf";
    hf_cfg c;
    json_error_t je;
    json_t *preset, *out;
    char *text;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--name") && i + 1 < argc)
            name = argv[++i];
        else if (!strncmp(argv[i], "--name=", 7))
            name = argv[i] + 7;
        else if (argv[i][0] != '-' && !file)
            file = argv[i];
        else
            return import_usage();
    }
    if (!file || !*name)
        return import_usage();
    memset(&c, 0, sizeof(c));
    c.root = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
    if (!c.root) {
        fprintf(stderr, "dvppctl: %s:%d: %s\n", file, je.line, je.text);
        return 1;
    }
    preset = read_config(&c) ? build_preset(&c, file) : NULL;
    if (preset && c.cls == &k_generic)
        fprintf(stderr, "dvppctl: %s: no image_processor_type: imported with the generic "
                        "semantics (docs/presets.md)\n", file);
    json_decref(c.root);
    if (!preset) {
        fprintf(stderr, "dvppctl: %s: %s\n", file, c.why[0] ? c.why : "out of memory");
        return 1;
    }
    out = json_pack("{s:o}", name, preset);
    text = out ? json_dumps(out, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(out);
    if (!text)
        return 1;
    printf("%s\n", text);
    free(text);
    return 0;
}

int ctl_cmd_preset(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "import"))
        return cmd_import(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "list"))
        return ctl_preset_list(argc - 1, argv + 1);
    fprintf(stderr, "usage: dvppctl preset import preprocessor_config.json [--name NAME]\n"
                    "       dvppctl preset list [--config dvppd.conf]\n");
    return 2;
}
