/* Usage patterns of real Ascend DVPP programs (found running Ascend/samples'
 * 0_data_process samples unchanged against this tree), reproduced here in
 * our own code.
 *
 * The venc sample calls acldvppFree on its input buffer after every frame,
 * though it freed it after the first: 99 refused frees whose message is all
 * the program's log shows. The message must name the call that failed
 * (acldvppFree), not the allocator; the same for aclrtFree and
 * aclrtFreeHost. "Was allocated by X" names the allocator on purpose. */
#include "test_rt_common.h"

#include "acl/ops/acl_dvpp.h"

static int setup(void **state)
{
    (void)state;
    return rt_up(NULL);
}

/* The recent message starts with @call. */
static void assert_msg_starts(const char *call)
{
    const char *m = aclGetRecentErrMsg();

    if (!m || strncmp(m, call, strlen(call)) != 0 || m[strlen(call)] != ':') {
        fprintf(stderr, "message '%s' does not start with '%s:'\n", m ? m : "(null)", call);
        fail();
    }
}

static void test_a_refused_free_names_the_free_call(void **state)
{
    void *v = NULL, *d = NULL, *h = NULL;
    int local = 0;

    (void)state;
    /* The venc sample: freed once, then freed again each frame. */
    assert_int_equal(acldvppMalloc(&v, 4096), ACL_SUCCESS);
    assert_int_equal(acldvppFree(v), ACL_SUCCESS);
    for (int frame = 1; frame < 4; frame++) {
        assert_int_equal(acldvppFree(v), ACL_ERROR_INVALID_PARAM);
        assert_msg_starts("acldvppFree");
        rt_assert_msg_has("not the start of a live block");
    }
    assert_int_equal(acldvppFree(NULL), ACL_ERROR_INVALID_PARAM);
    assert_msg_starts("acldvppFree");

    assert_int_equal(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtFree((char *)d + 1), ACL_ERROR_INVALID_PARAM);
    assert_msg_starts("aclrtFree");
    assert_int_equal(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
    assert_msg_starts("aclrtFree");

    assert_int_equal(aclrtMallocHost(&h, 64), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(&local), ACL_ERROR_INVALID_PARAM);
    assert_msg_starts("aclrtFreeHost");
    /* The wrong kind: the free call first, then who allocated it. */
    assert_int_equal(aclrtFreeHost(d), ACL_ERROR_INVALID_PARAM);
    assert_msg_starts("aclrtFreeHost");
    rt_assert_msg_has("allocated by aclrtMalloc;");
    assert_int_equal(acldvppFree(h), ACL_ERROR_INVALID_PARAM);
    assert_msg_starts("acldvppFree");
    rt_assert_msg_has("allocated by aclrtMallocHost");

    assert_int_equal(aclrtFree(d), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(h), ACL_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_refused_free_names_the_free_call, setup,
                                        rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
