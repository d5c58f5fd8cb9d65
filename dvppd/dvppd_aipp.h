/* dvppd_aipp: the server-side named ATC aipp_op configs (aipp.configs).
 *
 * Loaded once from the files the configuration names; requests refer to
 * them by name (?aipp=NAME). Ownership: the set owns its parsed configs
 * (dvppd_aipp_set_fini). Thread-safety: read-only after load, so lookups
 * may run on any thread.
 */
#ifndef DVPPD_AIPP_H
#define DVPPD_AIPP_H

#include "dvpp_aipp_cfg.h"
#include "dvppd_config.h"

typedef struct dvppd_aipp_set {
    char names[DVPPD_MAX_AIPP_CONFIGS][64];
    dvpp_aipp_config *cfg[DVPPD_MAX_AIPP_CONFIGS];
    unsigned n;
} dvppd_aipp_set;

/* Parse every file of @c->aipp. DVPP_EIO / DVPP_EINVAL naming the file and
 * the line; on failure nothing is kept (the set is empty). */
dvpp_status dvppd_aipp_set_load(dvppd_aipp_set *s, const dvppd_config *c,
                                dvpp_err *err);

void dvppd_aipp_set_fini(dvppd_aipp_set *s);

/* The config named @name, or NULL (a dvppd_aipp_lookup; @ctx is the set). */
const dvpp_aipp_config *dvppd_aipp_find(void *ctx, const char *name);

#endif
