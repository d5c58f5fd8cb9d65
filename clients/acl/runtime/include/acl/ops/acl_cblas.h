/* ops/acl_cblas.h: AscendCL's matrix API: a few declarations, none done.
 *
 * DVPP programs include or link acl_cblas but never call it. This
 * implementation has no BLAS (no AI Core): libacl_cblas.so exists so such
 * programs link and load, and every function below returns
 * ACL_ERROR_API_NOT_SUPPORT without touching its arguments (docs/acl.md).
 */
#ifndef DVPP_ACL_CBLAS_H
#define DVPP_ACL_CBLAS_H

#include "acl/acl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclTransType {
    ACL_TRANS_N,
    ACL_TRANS_T,
    ACL_TRANS_NZ,
    ACL_TRANS_NZ_T
} aclTransType;

typedef enum aclComputeType {
    ACL_COMPUTE_HIGH_PRECISION,
    ACL_COMPUTE_LOW_PRECISION
} aclComputeType;

/* y = alpha * op(A) * x + beta * y. Always ACL_ERROR_API_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclblasGemvEx(aclTransType transA, int m, int n, const void *alpha,
                                           const void *a, int lda, aclDataType dataTypeA,
                                           const void *x, int incx, aclDataType dataTypeX,
                                           const void *beta, void *y, int incy,
                                           aclDataType dataTypeY, aclComputeType type,
                                           aclrtStream stream);

/* C = alpha * op(A) * op(B) + beta * C. Always ACL_ERROR_API_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclblasGemmEx(aclTransType transA, aclTransType transB,
                                           aclTransType transC, int m, int n, int k,
                                           const void *alpha, const void *matrixA, int lda,
                                           aclDataType dataTypeA, const void *matrixB, int ldb,
                                           aclDataType dataTypeB, const void *beta,
                                           void *matrixC, int ldc, aclDataType dataTypeC,
                                           aclComputeType type, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
