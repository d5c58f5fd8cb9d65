/* error_codes/ge_error_codes.h: graph-engine error codes.
 *
 * Model loading and operator compilation report these; DVPP calls never
 * do, and this implementation has no graph engine, so no function here
 * returns them. The file exists because acl_base.h includes it, as in the
 * CANN layout; a handful of the codes is defined for programs that name
 * them. Constants are `static const uint32_t` (145xxx parameter, 245xxx
 * resource, 545xxx internal errors).
 */
#ifndef DVPP_ACL_GE_ERROR_CODES_H
#define DVPP_ACL_GE_ERROR_CODES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static const uint32_t ACL_ERROR_GE_PARAM_INVALID = 145000U;
static const uint32_t ACL_ERROR_GE_EXEC_NOT_INIT = 145001U;
static const uint32_t ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID = 145002U;
static const uint32_t ACL_ERROR_GE_EXEC_MODEL_ID_INVALID = 145003U;
static const uint32_t ACL_ERROR_GE_MEMORY_ALLOCATION = 245000U;
static const uint32_t ACL_ERROR_GE_MEMORY_OPERATE_FAILED = 245001U;
static const uint32_t ACL_ERROR_GE_INTERNAL_ERROR = 545000U;
static const uint32_t ACL_ERROR_GE_LOAD_MODEL = 545001U;

#ifdef __cplusplus
}
#endif

#endif
