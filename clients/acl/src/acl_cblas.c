/* acl_cblas.c: libacl_cblas.so, the aclblas* functions of ops/acl_cblas.h.
 *
 * There is no BLAS here: the matrix API runs on the AI Core, which this
 * CPU implementation does not model (docs/acl.md). The library exists so
 * that programs built against CANN, which link acl_cblas, load; each
 * function answers ACL_ERROR_API_NOT_SUPPORT with the thread's message
 * saying so, and reads none of its arguments.
 */
#include "acl/ops/acl_cblas.h"

#include "acl_int.h"

static aclError cblas_not_supported(const char *fn)
{
    return acli_fail(ACL_ERROR_API_NOT_SUPPORT,
                     "%s is not supported: this AscendCL implementation has no BLAS", fn);
}

aclError aclblasGemvEx(aclTransType transA, int m, int n, const void *alpha, const void *a,
                       int lda, aclDataType dataTypeA, const void *x, int incx,
                       aclDataType dataTypeX, const void *beta, void *y, int incy,
                       aclDataType dataTypeY, aclComputeType type, aclrtStream stream)
{
    (void)transA, (void)m, (void)n, (void)alpha, (void)a, (void)lda, (void)dataTypeA;
    (void)x, (void)incx, (void)dataTypeX, (void)beta, (void)y, (void)incy;
    (void)dataTypeY, (void)type, (void)stream;
    return cblas_not_supported("aclblasGemvEx");
}

aclError aclblasGemmEx(aclTransType transA, aclTransType transB, aclTransType transC, int m,
                       int n, int k, const void *alpha, const void *matrixA, int lda,
                       aclDataType dataTypeA, const void *matrixB, int ldb,
                       aclDataType dataTypeB, const void *beta, void *matrixC, int ldc,
                       aclDataType dataTypeC, aclComputeType type, aclrtStream stream)
{
    (void)transA, (void)transB, (void)transC, (void)m, (void)n, (void)k, (void)alpha;
    (void)matrixA, (void)lda, (void)dataTypeA, (void)matrixB, (void)ldb, (void)dataTypeB;
    (void)beta, (void)matrixC, (void)ldc, (void)dataTypeC, (void)type, (void)stream;
    return cblas_not_supported("aclblasGemmEx");
}
