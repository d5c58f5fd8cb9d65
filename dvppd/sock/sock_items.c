/* sock_items: BatchSubmit.item_specs, one pipeline per item of a batch
 * (a training batch's own crop and flip per image) into the batch's one
 * tensor. Socket thread. */
#include "sock_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dvpp_status sock_check_item_specs(char *const *specs, size_t n, size_t inputs,
                                  dvpp_err *err)
{
    if (n == 0)
        return DVPP_OK;
    if (n != inputs)
        return dvpp_err_set(err, DVPP_EINVAL, "item_specs",
                            "item_specs: %zu specs for %zu inputs (none, or one per input)",
                            n, inputs);
    for (size_t i = 0; i < n; i++) {
        size_t len = specs[i] ? strlen(specs[i]) : 0;
        char f[DVPP_ERR_FIELD_LEN];
        snprintf(f, sizeof(f), "item_specs[%zu]", i);
        if (len > DVPPD_SPEC_MAX_BYTES)
            return dvpp_err_set(err, DVPP_ELIMIT, f, "%s: %zu bytes of JSON, above the "
                                "limit of %d", f, len, DVPPD_SPEC_MAX_BYTES);
    }
    return DVPP_OK;
}

/* Item spec @text parsed as the batch's spec is (tensor kind, the
 * batch's aipp_config), validated, and making @want: into @out. */
static dvpp_status item_pipe(conn *c, const char *text, const char *aipp,
                             const dvpp_tensor *want, size_t n, dvpp_pipeline *out,
                             dvpp_err *err)
{
    dvppd_spec_env env = {DVPPD_SPEC_TENSOR, dvppd_aipp_find, (void *)&c->s->set->aipp,
                          aipp && *aipp ? aipp : NULL, aipp ? strlen(aipp) : 0,
                          dvppd_preset_find, (void *)&c->s->set->presets};
    dvppd_spec spec;
    dvpp_tensor t;
    dvpp_status st;

    st = text && *text ? dvppd_spec_from_json(&env, text, strlen(text), &spec, err)
                       : dvppd_spec_from_query(&env, NULL, 0, &spec, err);
    if (st == DVPP_OK && spec.ring[0])
        st = dvpp_err_set(err, DVPP_EINVAL, "output.ring",
                          "rings are named in the message, not the spec");
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&spec.pipe, &c->s->set->cfg.limits, err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&spec.pipe, (uint32_t)n, &t, err);
    if (st != DVPP_OK)
        return st;
    if (t.c != want->c || t.h != want->h || t.w != want->w || t.dtype != want->dtype ||
        t.layout != want->layout)
        return dvpp_err_set(err, DVPP_EINVAL, NULL,
                            "makes %ux%ux%u %s %s, the batch's spec %ux%ux%u %s %s", t.c,
                            t.h, t.w, dvpp_dtype_name(t.dtype), dvpp_layout_name(t.layout),
                            want->c, want->h, want->w, dvpp_dtype_name(want->dtype),
                            dvpp_layout_name(want->layout));
    *out = spec.pipe;
    return DVPP_OK;
}

dvpp_status sock_job_item_specs(sjob *j, char *const *specs, size_t n, const char *aipp,
                                dvpp_err *err)
{
    if (n == 0)
        return DVPP_OK;
    j->item_pipes = calloc(n, sizeof(*j->item_pipes));
    if (!j->item_pipes)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "item_specs");
    for (size_t i = 0; i < n; i++) {
        dvpp_err e;
        dvpp_err_clear(&e);
        if (item_pipe(j->c, specs[i], aipp, &j->out.tensor, n, &j->item_pipes[i], &e) !=
            DVPP_OK) {
            char f[DVPP_ERR_FIELD_LEN];
            /* the field says which item, the message what in it (the
             * spec's own messages start with its path) */
            snprintf(f, sizeof(f), "item_specs[%zu]", i);
            return dvpp_err_set(err, e.status, f, "%s: %s", f, e.msg);
        }
    }
    return DVPP_OK;
}
