/* acl_op.h: AscendCL's single-operator API: only its opaque types.
 *
 * This implementation has no operator execution (no AI Core). acl.h
 * includes this header as CANN's does, so it exists and compiles; it
 * declares no function, so a program that calls an aclop* function fails
 * at compile time rather than at run time (docs/acl.md).
 */
#ifndef DVPP_ACL_OP_H
#define DVPP_ACL_OP_H

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclopHandle aclopHandle;
typedef struct aclopAttr aclopAttr;
typedef struct aclopKernelDesc aclopKernelDesc;

#ifdef __cplusplus
}
#endif

#endif
