/* dvppd_spec: HTTP request syntax -> one dvpp_pipeline.
 *
 * Two syntaxes describe the same pipeline (docs/http-api.md): query
 * parameters named as dvppctl's flags (crop -> resize -> normalise/AIPP), or
 * a JSON spec with any list of ops. The result is validated by the one
 * validator (dvpp_pipeline_validate); this module only translates syntax
 * and checks what the syntax itself can get wrong (unknown names, types,
 * numbers), naming the parameter or JSON path in err->field.
 *
 * Named server-side AIPP configs come from a lookup the caller provides;
 * an inline config text (a multipart part, or "aipp.config" in JSON) is
 * parsed here with dvpp_aipp_parse. The op is copied into the pipeline,
 * so nothing returned points into the inputs.
 *
 * Thread-safety: pure functions; the lookup must be safe to call from the
 * calling thread. Memory: temporary only (an AIPP config while parsing).
 *
 * Files: dvppd_spec.c (the draft both syntaxes fill, the assembly of the
 * output, the value parsers), dvppd_spec_query.c, dvppd_spec_json.c; they
 * share dvppd_spec_int.h.
 */
#ifndef DVPPD_SPEC_H
#define DVPPD_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "device/dvpp_pipeline.h"
#include "dvpp_aipp_cfg.h"
#include "dvpp_status.h"

/* What the endpoint produces; decides which parameters are allowed and
 * the defaults. */
typedef enum dvppd_spec_kind {
    DVPPD_SPEC_TENSOR, /* /v1/preprocess, /v1/batch, /v1/jobs */
    DVPPD_SPEC_IMAGE,  /* /v1/image: encoded JPEG/PNG out */
    DVPPD_SPEC_DECODE, /* /v1/decode: pixels out */
} dvppd_spec_kind;

/* A server-side config by name, or NULL when unknown. */
typedef const dvpp_aipp_config *(*dvppd_aipp_lookup)(void *ctx, const char *name);

/* A named preset (dvppd_presets.h): its JSON spec text and the kind of
 * endpoint it is for. Borrowed from the lookup's owner (a settings
 * snapshot the caller holds). */
typedef struct dvppd_preset_ref {
    const char *json;
    size_t len;
    dvppd_spec_kind kind;
} dvppd_preset_ref;

/* The preset named @name into *out; false when unknown. */
typedef bool (*dvppd_preset_lookup)(void *ctx, const char *name, dvppd_preset_ref *out);

typedef struct dvppd_spec_env {
    dvppd_spec_kind kind;
    dvppd_aipp_lookup lookup;   /* may be NULL: no named configs */
    void *lookup_ctx;
    const char *aipp_text;      /* inline aipp_op text (multipart part), or NULL */
    size_t aipp_len;
    dvppd_preset_lookup preset_lookup; /* may be NULL: no presets */
    void *preset_ctx;
} dvppd_spec_env;

/* One query parameter (borrowed strings). */
typedef struct dvppd_kv {
    const char *key;
    const char *value;          /* NULL for "?flag" without '=' */
} dvppd_kv;

/* The request's pipeline and the front-end choices around it. */
typedef struct dvppd_spec {
    dvpp_pipeline pipe;
    bool raw_out;               /* out=raw: bare bytes instead of .npy */
    bool strict;                /* batch: the first failure fails it */
    char ring[64];              /* HTTP: deliver into this named ring ("" none) */
} dvppd_spec;

/* Build @out from query parameters. DVPP_EINVAL naming the parameter for
 * an unknown one, a bad value, a parameter the endpoint does not take, or
 * a conflict (aipp with mean/std/scale; spec with anything else). The
 * "spec" key is not handled here (the caller passes its text to
 * dvppd_spec_from_json). "preset=NAME" stands alone: the preset's spec
 * (any other parameter beside it: DVPP_EINVAL naming that parameter; an
 * unknown preset or one for another kind of endpoint: field "preset"). */
dvpp_status dvppd_spec_from_query(const dvppd_spec_env *env, const dvppd_kv *kv,
                                  size_t n, dvppd_spec *out, dvpp_err *err);

/* The longest JSON spec dvppd_spec_from_json takes (bytes). */
#define DVPPD_SPEC_MAX_BYTES 65536

/* Build @out from a JSON spec (@len bytes, need not be NUL-terminated).
 * A top-level "preset": "NAME" makes that preset's spec the base; every
 * other top-level key of @json replaces the preset's key of that name
 * (a whole value: "normalize" replaces the preset's "normalize").
 * DVPP_EINVAL naming the JSON path for malformed JSON, unknown keys, wrong
 * types or values. Nesting is bounded by the format itself (jansson
 * refuses depth above 2048; the spec has 4 levels); the text, hence the
 * memory of the parsed document, by DVPP_ELIMIT (field "spec") above 64 KiB. */
dvpp_status dvppd_spec_from_json(const dvppd_spec_env *env, const char *json,
                                 size_t len, dvppd_spec *out, dvpp_err *err);

/* A decimal 0..@max, digits only (no sign, no spaces), into *out. The
 * parameter parser of every front end. */
bool dvppd_parse_u32(const char *v, uint32_t max, uint32_t *out);

/* A 0/1 flag: NULL (a "?flag" without '='), "", "1" or "true" is true,
 * "0" or "false" false, into *out; false for anything else. */
bool dvppd_parse_flag(const char *v, bool *out);

/* True when @key is a query parameter that describes the pipeline (so it
 * may not be combined with a JSON spec). */
bool dvppd_spec_is_param(const char *key);

#endif
