/* acl_mdl.h: AscendCL's model API: only its opaque types.
 *
 * This implementation runs no offline models (no AI Core). acl.h includes
 * this header as CANN's does, so it exists and compiles; it declares no
 * function, so a program that calls an aclmdl* function fails at compile
 * time rather than at run time (docs/acl.md).
 */
#ifndef DVPP_ACL_MDL_H
#define DVPP_ACL_MDL_H

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclmdlDesc aclmdlDesc;
typedef struct aclmdlAIPP aclmdlAIPP;

#ifdef __cplusplus
}
#endif

#endif
