/* Unit tests for dvppd/dvppd_presets: the shipped presets load and parse,
 * a config preset replaces a shipped one and adds its own, a bad one fails
 * the load naming presets.NAME.spec..., and requests resolve ?preset= and
 * {"preset": ...} (with overrides, kind checks and refusals) through
 * dvppd_spec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "dvppd_config.h"
#include "dvppd_presets.h"

static dvppd_spec_env env_of(dvppd_spec_kind kind, dvppd_preset_set *s)
{
    dvppd_spec_env e = {kind, NULL, NULL, NULL, 0, dvppd_preset_find, s};
    return e;
}

static void test_shipped(void **state)
{
    dvppd_preset_set s;
    dvppd_preset_ref r;
    (void)state;

    assert_int_equal(dvppd_preset_set_load(&s, "", NULL, NULL, NULL), DVPP_OK);
    assert_int_equal(s.n, 4);
    assert_true(dvppd_preset_find(&s, "imagenet", &r));
    assert_int_equal(r.kind, DVPPD_SPEC_TENSOR);
    assert_true(dvppd_preset_find(&s, "ascend-yuv", &r));
    assert_int_equal(r.kind, DVPPD_SPEC_DECODE);
    assert_false(dvppd_preset_find(&s, "nope", &r));
    dvppd_preset_set_fini(&s);
}

/* The config text as dvppd_config_load would store it. */
static dvpp_status take(const char *json, char *text, dvpp_err *err)
{
    json_t *o = json_loads(json, 0, NULL);
    dvpp_status st;

    assert_non_null(o);
    st = dvppd_preset_config_take(o, text, DVPPD_PRESETS_TEXT_CAP, err);
    json_decref(o);
    return st;
}

static void test_config_presets(void **state)
{
    char *text = calloc(1, DVPPD_PRESETS_TEXT_CAP);
    dvppd_preset_set s;
    dvppd_spec *sp = malloc(sizeof(*sp));
    dvpp_err err;
    (void)state;

    assert_int_equal(take("{\"imagenet\": {\"description\": \"mine\", \"spec\": {\"ops\": "
                          "[{\"resize\": {\"w\": 8, \"h\": 4}}]}}, \"x\": {\"kind\": \"image\","
                          " \"spec\": {}}}", text, &err), DVPP_OK);
    assert_int_equal(dvppd_preset_set_load(&s, text, NULL, NULL, &err), DVPP_OK);
    assert_int_equal(s.n, 5);
    dvppd_spec_env e = env_of(DVPPD_SPEC_TENSOR, &s);
    dvppd_kv kv = {"preset", "imagenet"};
    assert_int_equal(dvppd_spec_from_query(&e, &kv, 1, sp, &err), DVPP_OK);
    assert_int_equal(sp->pipe.nops, 1);
    assert_int_equal(sp->pipe.ops[0].u.resize.w, 8);
    /* x is for /v1/image */
    kv.value = "x";
    assert_int_equal(dvppd_spec_from_query(&e, &kv, 1, sp, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "preset");
    dvppd_preset_set_fini(&s);

    assert_int_equal(take("{\"bad\": {\"spec\": {\"ops\": [{\"flip\": \"sideways\"}]}}}", text,
                          &err), DVPP_OK);
    assert_int_equal(dvppd_preset_set_load(&s, text, NULL, NULL, &err), DVPP_EINVAL);
    assert_non_null(strstr(err.msg, "presets.bad.spec.ops[0].flip"));
    assert_int_equal(s.n, 0);
    assert_int_equal(take("{\"b c\": {\"spec\": {}}}", text, &err), DVPP_EINVAL);
    assert_int_equal(take("{\"b\": {\"spec\": 3}}", text, &err), DVPP_EINVAL);
    free(sp);
    free(text);
}

static void test_json_override(void **state)
{
    dvppd_preset_set s;
    dvppd_spec *sp = malloc(sizeof(*sp));
    dvpp_err err;
    static const char j[] = "{\"preset\": \"imagenet\", \"normalize\": {\"dtype\": \"uint8\"}}";
    (void)state;

    assert_int_equal(dvppd_preset_set_load(&s, NULL, NULL, NULL, NULL), DVPP_OK);
    dvppd_spec_env e = env_of(DVPPD_SPEC_TENSOR, &s);
    assert_int_equal(dvppd_spec_from_json(&e, j, strlen(j), sp, &err), DVPP_OK);
    assert_int_equal(sp->pipe.nops, 2);               /* the preset's ops: resize, centre crop */
    assert_int_equal(sp->pipe.norm.dtype, DVPP_DTYPE_U8); /* the override */
    assert_true(sp->pipe.norm.mean[0] == 0.0);        /* whole "normalize" replaced */
    /* beside another parameter, unknown, other kind */
    dvppd_kv kv[2] = {{"w", "3"}, {"preset", "imagenet"}};
    assert_int_equal(dvppd_spec_from_query(&e, kv, 2, sp, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "w");
    kv[1].value = "nope";
    assert_int_equal(dvppd_spec_from_query(&e, kv + 1, 1, sp, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "preset");
    e.kind = DVPPD_SPEC_IMAGE;
    assert_int_equal(dvppd_spec_from_json(&e, j, strlen(j), sp, &err), DVPP_EINVAL);
    assert_string_equal(err.field, "preset");
    e.preset_lookup = NULL; /* no presets at all (a preset's own spec) */
    assert_int_equal(dvppd_spec_from_json(&e, j, strlen(j), sp, &err), DVPP_EINVAL);
    dvppd_preset_set_fini(&s);
    free(sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped),
        cmocka_unit_test(test_config_presets),
        cmocka_unit_test(test_json_override),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
