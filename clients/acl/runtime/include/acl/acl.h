/* acl.h: the AscendCL entry header (this project's own header, written
 * from the public API facts; docs/acl.md).
 *
 * Includes the runtime, operator and model headers; declares process
 * initialisation, the version and the thread's recent error message.
 * Implemented by libascendcl.so.
 */
#ifndef DVPP_ACL_H
#define DVPP_ACL_H

#include "acl_rt.h"
#include "acl_op.h"
#include "acl_mdl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The header generation this API follows; aclrtGetVersion reports it. */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 10
#define ACL_PATCH_VERSION 0

/* Once per process. @configPath: NULL, "" or a JSON file ("{}" is valid;
 * the "dvpp" section chooses profile, devices and channels, unknown keys
 * are ignored). A second call is ACL_ERROR_REPEAT_INITIALIZE. */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
/* A second call is ACL_ERROR_REPEAT_FINALIZE. */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
/* 1, 10, 0; a NULL pointer is ACL_ERROR_INVALID_PARAM. */
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                             int32_t *patchVersion);
/* The calling thread's last error message, NULL when it has none. The
 * string belongs to the thread; it stays valid until the thread's next
 * failing call. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif
