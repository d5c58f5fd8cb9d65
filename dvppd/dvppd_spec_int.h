/* dvppd_spec_int.h: what the three parts of the request spec module share
 * (private to dvppd_spec*.c; the API is dvppd_spec.h).
 *
 *   dvppd_spec.c        the draft either syntax fills and its assembly into
 *                       the pipeline's output (tensor: normalisation or
 *                       AIPP; image: encoding; decode: pixel format), and
 *                       the value parsers every front end uses
 *   dvppd_spec_query.c  query parameters (dvppd_spec_from_query)
 *   dvppd_spec_json.c   JSON specs (dvppd_spec_from_json)
 *
 * Thread-safety: plain data on the caller's stack; no shared state.
 */
#ifndef DVPPD_SPEC_INT_H
#define DVPPD_SPEC_INT_H

#include <stdbool.h>

#include "dvppd_spec.h"

/* What either syntax collects before the pipeline is assembled. Borrows
 * the environment and the request's strings; fills the caller's spec. */
typedef struct dvppd_spec_draft {
    const dvppd_spec_env *env;
    dvppd_spec *s;
    bool has_crop;
    dvpp_roi crop;
    bool has_center;          /* crop_center=WxH[:floor|:even], after the resize */
    dvpp_pipe_center center;
    bool has_resize, has_w, has_h, has_round;
    dvpp_pipe_resize rz;
    bool has_norm, std_set, scale_set;
    double mult;                 /* scale= (blobFromImage multiplier) */
    const char *aipp_name;       /* borrowed from the request */
    bool aipp_inline;
    unsigned aipp_op;
    bool has_aipp_opts;
    const char *format;          /* output format name, borrowed */
    bool has_quality, has_align;
    bool shrink_set;             /* shrink_on_load given explicitly */
} dvppd_spec_draft;


/* @d for @env, with @s cleared to a default pipeline. */
void dvppd_spec_draft_init(dvppd_spec_draft *d, const dvppd_spec_env *env, dvppd_spec *s);

/* The output of @d's kind into the pipeline: a tensor (normalisation, or
 * the op of the AIPP config named or posted), an encoded image, or pixels.
 * DVPP_EINVAL naming the field for a conflict; DVPP_ENOMEM. */
dvpp_status dvppd_spec_finish(dvppd_spec_draft *d, dvpp_err *err);

/* The preset @name of @env into *out: DVPP_EINVAL, field "preset", for an
 * unknown name or a preset made for another kind of endpoint. */
dvpp_status dvppd_spec_preset_get(const dvppd_spec_env *env, const char *name,
                                  dvppd_preset_ref *out, dvpp_err *err);

/* DVPP_EINVAL with field @field and the message "@field: @why". */
dvpp_status dvppd_spec_bad(dvpp_err *err, const char *field, const char *why);

/* What both syntaxes say a layout or dtype value wants. */
#define DVPPD_SPEC_WANT_LAYOUT "want nchw, nhwc or nc1hwc0"
#define DVPPD_SPEC_WANT_DTYPE "want float32, float16, uint8 or int8"

#endif
