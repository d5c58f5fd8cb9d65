/* libacl_cblas.so: every aclblas* function refuses with
 * ACL_ERROR_API_NOT_SUPPORT and says why in the thread's message; it
 * touches none of its buffers (docs/acl.md: no BLAS on this layer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "acl/ops/acl_cblas.h"

static void assert_refused_by(aclError e, const char *fn)
{
    assert_int_equal(e, ACL_ERROR_API_NOT_SUPPORT);
    const char *msg = aclGetRecentErrMsg();
    assert_non_null(msg);
    assert_non_null(strstr(msg, fn));
    assert_non_null(strstr(msg, "not supported"));
}

static void test_gemm_ex_is_not_supported(void **state)
{
    (void)state;
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {9, 9, 9, 9};
    float alpha = 1.0f, beta = 0.0f;
    assert_refused_by(aclblasGemmEx(ACL_TRANS_N, ACL_TRANS_N, ACL_TRANS_N, 2, 2, 2, &alpha, a,
                                    2, ACL_FLOAT, b, 2, ACL_FLOAT, &beta, c, 2, ACL_FLOAT,
                                    ACL_COMPUTE_HIGH_PRECISION, NULL),
                      "aclblasGemmEx");
    for (int i = 0; i < 4; i++)
        assert_true(c[i] == 9.0f); /* nothing written */
    /* Garbage in is refused the same way: nothing is read. */
    assert_refused_by(aclblasGemmEx(ACL_TRANS_NZ_T, ACL_TRANS_T, ACL_TRANS_N, -1, 0, 7, NULL,
                                    NULL, 0, ACL_DT_UNDEFINED, NULL, 0, ACL_DT_UNDEFINED,
                                    NULL, NULL, 0, ACL_DT_UNDEFINED, ACL_COMPUTE_LOW_PRECISION,
                                    NULL),
                      "aclblasGemmEx");
}

static void test_gemv_ex_is_not_supported(void **state)
{
    (void)state;
    float a[4] = {1, 2, 3, 4}, x[2] = {1, 1}, y[2] = {7, 7};
    float alpha = 1.0f, beta = 0.0f;
    assert_refused_by(aclblasGemvEx(ACL_TRANS_N, 2, 2, &alpha, a, 2, ACL_FLOAT, x, 1,
                                    ACL_FLOAT, &beta, y, 1, ACL_FLOAT,
                                    ACL_COMPUTE_HIGH_PRECISION, NULL),
                      "aclblasGemvEx");
    assert_true(y[0] == 7.0f && y[1] == 7.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_ex_is_not_supported),
        cmocka_unit_test(test_gemv_ex_is_not_supported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
