/* dvppd_presets: named request specs (docs/presets.md).
 *
 * A preset is a JSON spec (docs/http-api.md "JSON spec") under a name, for
 * one kind of endpoint (tensor, image or decode). The shipped ones
 * (imagenet, clip, yolov8, ascend-yuv) are built in; the configuration's
 * top-level "presets" object adds more and replaces a shipped one of the
 * same name:
 *
 *   "presets": {"NAME": {"description": "...", "kind": "tensor",
 *                        "spec": {...}}}
 *
 * Requests name one with ?preset=NAME or "preset": "NAME" in a JSON spec
 * (dvppd_spec_env.preset_lookup = dvppd_preset_find).
 *
 * Two steps, because dvppd_config is a plain value (copied, compared,
 * dumped): dvppd_preset_config_take checks the config's object when the
 * file is read (names, keys, types, bounds) and keeps it as compact JSON
 * text in the config; dvppd_preset_set_load, run by dvppd_settings_new at
 * start, --check-config and every reload, parses every spec with
 * dvppd_spec_from_json for its kind (after the AIPP configs it may name are
 * loaded), so a bad preset fails the load naming presets.NAME.spec..., and
 * builds the set the settings snapshot owns: presets follow reloads with
 * the snapshot.
 *
 * Bounds: DVPPD_MAX_PRESETS config presets, names below
 * DVPPD_PRESET_NAME_MAX bytes of [A-Za-z0-9._-], descriptions below
 * DVPPD_PRESET_DESC_MAX bytes, and all config presets together at most
 * DVPPD_PRESETS_MAX_BYTES of compact JSON (= DVPPD_SPEC_MAX_BYTES, so
 * every spec also fits a request's limit).
 *
 * Ownership: a set owns its spec texts (dvppd_preset_set_fini).
 * Thread-safety: a loaded set is read-only; lookups may run on any thread.
 */
#ifndef DVPPD_PRESETS_H
#define DVPPD_PRESETS_H

#include <stdbool.h>
#include <stddef.h>

#include "dvpp_status.h"
#include "dvppd_spec.h"

#define DVPPD_MAX_PRESETS 64
#define DVPPD_PRESET_NAME_MAX 64
#define DVPPD_PRESET_DESC_MAX 256
#define DVPPD_PRESETS_MAX_BYTES DVPPD_SPEC_MAX_BYTES
#define DVPPD_BUILTIN_PRESETS 4

typedef struct dvppd_preset {
    char name[DVPPD_PRESET_NAME_MAX];
    char description[DVPPD_PRESET_DESC_MAX];
    dvppd_spec_kind kind;
    bool builtin;               /* shipped (not replaced by the config) */
    char *spec;                 /* compact JSON, NUL-terminated, owned */
    size_t spec_len;
} dvppd_preset;

typedef struct dvppd_preset_set {
    dvppd_preset p[DVPPD_MAX_PRESETS + DVPPD_BUILTIN_PRESETS];
    unsigned n;
} dvppd_preset_set;

struct json_t;

/* Check the config's "presets" object @obj (names, keys, types, bounds;
 * not yet the specs' contents) and store it as compact JSON text into
 * @text (@cap bytes, NUL-terminated). DVPP_EINVAL naming "presets.NAME...",
 * DVPP_ELIMIT above the bounds. On failure @text is left as it was. */
dvpp_status dvppd_preset_config_take(struct json_t *obj, char *text, size_t cap,
                                     dvpp_err *err);

/* The shipped presets, then those of @config_text (the text
 * dvppd_preset_config_take stored; "" or NULL: none), into @s, every spec
 * parsed by dvppd_spec_from_json for its kind with the named AIPP configs
 * of @aipp/@aipp_ctx (the snapshot's: a preset may name one). On failure
 * @s is empty: DVPP_EINVAL naming presets.NAME.spec..., DVPP_ENOMEM. */
dvpp_status dvppd_preset_set_load(dvppd_preset_set *s, const char *config_text,
                                  dvppd_aipp_lookup aipp, void *aipp_ctx, dvpp_err *err);

void dvppd_preset_set_fini(dvppd_preset_set *s);

/* A dvppd_preset_lookup; @ctx is a const dvppd_preset_set. */
bool dvppd_preset_find(void *ctx, const char *name, dvppd_preset_ref *out);

/* "tensor", "image" or "decode". */
const char *dvppd_preset_kind_name(dvppd_spec_kind k);

/* {"presets": [{"name", "source": "builtin"|"config", "kind",
 * "description", "spec": {...}}, ...]} in name order as a new jansson
 * object (NULL on ENOMEM); the caller owns it. */
struct json_t *dvppd_preset_set_json(const dvppd_preset_set *s);

#endif
