/* ctl_preset_run: dvppctl preprocess --preset NAME and dvppctl preset list.
 *
 * A name is resolved with dvppd's own code (dvppd/dvppd_presets.c and the
 * JSON spec parser, linked into dvppctl: they need libdvpp and jansson
 * only): the shipped presets, then the "presets" object of a dvppd config
 * file given with --config FILE, which add presets and replace shipped
 * ones as the daemon's config does. The pipeline is the one the daemon
 * builds for the JSON spec {"preset": NAME}, so a local run writes the
 * very bytes of the daemon's .npy answer. With --socket the daemon
 * resolves the name itself (ctl_remote_jobs.c: config presets it knows
 * work without --config here).
 *
 * Memory: the preset set, the spec and the run's worker are heap objects
 * of the call, freed before it returns. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "dvpp_npy.h"
#include "dvppd/dvppd_presets.h"

/* The largest dvppd config file read for its presets (dvppd's own bound). */
#define CTL_PRESET_CONFIG_MAX (1u << 20)

int ctl_preset_check(const ctl_args *a, const char *cmd)
{
    if (a->pipeline_flag) {
        fprintf(stderr, "dvppctl %s: --preset %s and --%s: the preset is the whole "
                        "pipeline (drop --%s, or write a config preset with it)\n",
                cmd, a->preset, a->pipeline_flag, a->pipeline_flag);
        return 2;
    }
    if (a->dump && a->socket && *a->socket) {
        fprintf(stderr, "dvppctl %s: --dump runs here, not with --socket\n", cmd);
        return 2;
    }
    return 0;
}

/* The "presets" object of dvppd config file @path (none: "") as the
 * compact text dvppd_preset_set_load takes, into *text (caller frees). */
static dvpp_status config_presets_text(const char *path, char **text, dvpp_err *err)
{
    json_t *root = NULL, *obj;
    json_error_t je;
    dvpp_buf b;
    dvpp_status st;

    *text = calloc(1, DVPPD_PRESETS_MAX_BYTES + 1);
    if (!*text)
        return dvpp_err_set(err, DVPP_ENOMEM, "config", "out of memory");
    if (!path)
        return DVPP_OK;
    dvpp_buf_init(&b);
    st = dvpp_buf_read_file(&b, path, CTL_PRESET_CONFIG_MAX, err);
    if (st == DVPP_OK) {
        root = json_loadb((const char *)b.data, b.len, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(root))
            st = dvpp_err_set(err, DVPP_EINVAL, "config", "line %d: %s", je.line,
                              root ? "want a JSON object" : je.text);
    }
    obj = st == DVPP_OK ? json_object_get(root, "presets") : NULL;
    if (obj)
        st = dvppd_preset_config_take(obj, *text, DVPPD_PRESETS_MAX_BYTES + 1, err);
    json_decref(root);
    dvpp_buf_fini(&b);
    return st;
}

/* The shipped presets and those of @config (NULL: none) into @set; an
 * error names the file. Named AIPP configs are the daemon's: a preset
 * naming one fails here. */
static dvpp_status load_set(const char *config, dvppd_preset_set *set, dvpp_err *err)
{
    char *text = NULL;
    dvpp_err e;
    dvpp_status st;

    dvpp_err_clear(&e);
    st = config_presets_text(config, &text, &e);
    if (st == DVPP_OK)
        st = dvppd_preset_set_load(set, text, NULL, NULL, &e);
    free(text);
    if (st == DVPP_OK)
        return DVPP_OK;
    if (config)
        return dvpp_err_set(err, st, "config", "%s: %s", config, e.msg);
    *err = e;
    return st;
}

dvpp_status ctl_preset_pipeline(const ctl_args *a, dvpp_pipeline *p, dvpp_err *err)
{
    dvppd_preset_set *set = calloc(1, sizeof(*set));
    dvppd_spec *spec = calloc(1, sizeof(*spec));
    json_t *o = a->preset ? json_pack("{s:s}", "preset", a->preset) : NULL;
    char *json = o ? json_dumps(o, JSON_COMPACT) : NULL;
    dvpp_status st;

    if (!set || !spec || !json) {
        st = a->preset && set && spec && !o
                 ? dvpp_err_set(err, DVPP_EINVAL, "preset", "preset: want a UTF-8 name")
                 : dvpp_err_set(err, DVPP_ENOMEM, "preset", "out of memory");
        goto out;
    }
    st = load_set(a->config, set, err);
    if (st == DVPP_OK) {
        /* the daemon's path for {"preset": NAME}: an unknown name, or one
         * for another endpoint, is its error (field "preset") */
        dvppd_spec_env env = {DVPPD_SPEC_TENSOR, NULL, NULL, NULL, 0, dvppd_preset_find, set};
        st = dvppd_spec_from_json(&env, json, strlen(json), spec, err);
    }
    if (st == DVPP_OK)
        *p = spec->pipe;
    dvppd_preset_set_fini(set);
out:
    free(json);
    json_decref(o);
    free(spec);
    free(set);
    return st;
}

/* --- the local run ------------------------------------------------------------- */

/* Resolve, plan, run, write; the cleanup is the caller's. */
static dvpp_status run_steps(ctl_local *l, const ctl_args *a, dvpp_err *err)
{
    const dvpp_pipe_geom *g = &l->out.plan.geom;
    dvpp_status st = ctl_local_prepare(l, a, err);

    if (st == DVPP_OK)
        st = ctl_local_run(l, err);
    if (st == DVPP_OK)
        st = dvpp_write_file(a->out, l->npy, l->npy_len, err);
    if (st == DVPP_OK)
        printf("{\"scale_x\": %.17g, \"scale_y\": %.17g, \"pad_x\": %.17g, "
               "\"pad_y\": %.17g}\n", g->scale_x, g->scale_y, g->pad_x, g->pad_y);
    return st;
}

int ctl_preset_preprocess(const ctl_args *a)
{
    ctl_local *l = malloc(sizeof(*l));
    dvpp_err err;
    dvpp_status st;

    if (!l) {
        fprintf(stderr, "dvppctl preprocess: out of memory\n");
        return 1;
    }
    dvpp_err_clear(&err);
    ctl_local_init(l, a);
    st = run_steps(l, a, &err);
    ctl_local_fini(l);
    free(l);
    return st == DVPP_OK ? 0 : ctl_fail(a->inputs[0], &err);
}

/* --- preset list ------------------------------------------------------------------ */

static int list_usage(void)
{
    fprintf(stderr, "usage: dvppctl preset list [--config dvppd.conf]\n");
    return 2;
}

int ctl_preset_list(int argc, char **argv)
{
    const char *config = NULL;
    dvppd_preset_set *set;
    json_t *list = NULL, *p;
    dvpp_err err;
    size_t i;
    int rc = 1;

    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--config") && k + 1 < argc && !config)
            config = argv[++k];
        else if (!strncmp(argv[k], "--config=", 9) && !config)
            config = argv[k] + 9;
        else
            return list_usage();
    }
    set = calloc(1, sizeof(*set));
    if (!set) {
        fprintf(stderr, "dvppctl preset list: out of memory\n");
        return 1;
    }
    dvpp_err_clear(&err);
    if (load_set(config, set, &err) != DVPP_OK) {
        rc = ctl_fail("preset list", &err);
        goto out;
    }
    list = dvppd_preset_set_json(set);
    if (!list) {
        fprintf(stderr, "dvppctl preset list: out of memory\n");
        goto out;
    }
    json_array_foreach(json_object_get(list, "presets"), i, p)
        printf("%s\t%s\t%s\t%s\n", json_string_value(json_object_get(p, "name")),
               json_string_value(json_object_get(p, "kind")),
               json_string_value(json_object_get(p, "source")),
               json_string_value(json_object_get(p, "description")));
    rc = 0;
out:
    json_decref(list);
    dvppd_preset_set_fini(set);
    free(set);
    return rc;
}
