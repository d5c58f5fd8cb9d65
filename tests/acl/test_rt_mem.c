/* Runtime tests (libascendcl): memory. acldvppMalloc's rounding and
 * alignment through acli_mem_alloc(ACLI_MEM_DVPP), acli_mem_avail, frees
 * of the wrong kind / NULL / interior pointers, aclrtMalloc/MallocHost,
 * aclrtMemcpy's kinds and limits, aclrtMemset, and the block registry
 * against a reference under random allocation and frees. */
#include "test_rt_common.h"

static int setup(void **state)
{
    (void)state;
    return rt_up(NULL);
}

static void test_dvpp_rounding_and_alignment(void **state)
{
    static const size_t sizes[] = {1, 31, 32, 33, 63, 64, 65, 100, 4096, 1920 * 1080 * 3 / 2,
                                   12345};

    (void)state;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i], want = (n + 63) / 32 * 32;
        unsigned char *p = NULL;

        assert_int_equal(acli_mem_alloc((void **)&p, n, ACLI_MEM_DVPP), ACL_SUCCESS);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 128, 0);
        /* (size + 63) / 32 * 32 = ALIGN_UP(size, 32) + 32 bytes follow p. */
        assert_int_equal(acli_mem_avail(p), want);
        assert_int_equal(want, (n + 31) / 32 * 32 + 32);
        assert_int_equal(acli_mem_avail(p + want - 1), 1);
        assert_int_equal(acli_mem_avail(p + want), 0);
        assert_int_equal(acli_mem_avail(p + 7), want - 7);
        /* Zeroed, every byte of it. */
        for (size_t k = 0; k < want; k++)
            assert_int_equal(p[k], 0);
        memset(p, 0xab, want);
        assert_int_equal(acli_mem_free(p, ACLI_MEM_DVPP), ACL_SUCCESS);
        assert_int_equal(acli_mem_avail(p), 0);
    }
}

static void test_alloc_arguments(void **state)
{
    void *p = (void *)0x1;

    (void)state;
    assert_int_equal(acli_mem_alloc(NULL, 16, ACLI_MEM_DVPP), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_mem_alloc(&p, 0, ACLI_MEM_DVPP), ACL_ERROR_INVALID_PARAM);
    assert_null(p);
    assert_int_equal(acli_mem_alloc(&p, 16, (acli_mem_kind)9), ACL_ERROR_INVALID_PARAM);
    /* Sizes no allocator can give: BAD_ALLOC, never a wrapped small block. */
    assert_int_equal(acli_mem_alloc(&p, SIZE_MAX - 10, ACLI_MEM_DVPP), ACL_ERROR_BAD_ALLOC);
    assert_null(p);
    assert_int_equal(acli_mem_alloc(&p, SIZE_MAX / 2, ACLI_MEM_DEVICE), ACL_ERROR_BAD_ALLOC);
    assert_int_equal(aclrtMalloc(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMallocHost(NULL, 16), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMallocHost(&p, 0), ACL_ERROR_INVALID_PARAM);
}

static void test_every_policy_is_accepted(void **state)
{
    static const int policies[] = {ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY,
                                   ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEM_MALLOC_HUGE_FIRST_P2P,
                                   ACL_MEM_MALLOC_HUGE_ONLY_P2P, ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
                                   ACL_MEM_MALLOC_HUGE_FIRST | ACL_MEM_TYPE_HIGH_BAND_WIDTH,
                                   ACL_MEM_MALLOC_NORMAL_ONLY | ACL_MEM_TYPE_LOW_BAND_WIDTH,
                                   77};

    (void)state;
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
        void *p = NULL;
        assert_int_equal(aclrtMalloc(&p, 100, (aclrtMemMallocPolicy)policies[i]), ACL_SUCCESS);
        assert_int_equal(acli_mem_avail(p), 100);
        assert_int_equal(aclrtFree(p), ACL_SUCCESS);
    }
}

static void test_frees_refused(void **state)
{
    unsigned char *d, *h, *v;
    int local;

    (void)state;
    assert_int_equal(aclrtMalloc((void **)&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMallocHost((void **)&h, 64), ACL_SUCCESS);
    assert_int_equal(acli_mem_alloc((void **)&v, 64, ACLI_MEM_DVPP), ACL_SUCCESS);
    /* NULL. */
    assert_int_equal(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_mem_free(NULL, ACLI_MEM_DVPP), ACL_ERROR_INVALID_PARAM);
    /* The wrong kind: nothing freed. */
    assert_int_equal(aclrtFree(h), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("aclrtMallocHost");
    assert_int_equal(aclrtFreeHost(d), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtFree(v), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("acldvppMalloc");
    assert_int_equal(acli_mem_free(d, ACLI_MEM_DVPP), ACL_ERROR_INVALID_PARAM);
    /* Interior and foreign pointers. */
    assert_int_equal(aclrtFree(d + 1), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("not the start of a live block");
    assert_int_equal(acli_mem_free(v + 32, ACLI_MEM_DVPP), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtFree(&local), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_mem_avail(&local), 0);
    /* Still live and intact. */
    assert_int_equal(acli_mem_avail(d), 64);
    assert_int_equal(acli_mem_avail(h), 64);
    assert_int_equal(acli_mem_avail(v), 96); /* ALIGN_UP(64, 32) + 32 */
    assert_int_equal(aclrtFree(d), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(h), ACL_SUCCESS);
    assert_int_equal(acli_mem_free(v, ACLI_MEM_DVPP), ACL_SUCCESS);
    /* Twice. */
    assert_int_equal(aclrtFree(d), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_mem_free(v, ACLI_MEM_DVPP), ACL_ERROR_INVALID_PARAM);
}

static void *malloc_thread(void *arg)
{
    void *p = NULL;

    *(aclError *)arg = aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    return NULL;
}

static void test_malloc_needs_a_context(void **state)
{
    aclError rc = 0;
    pthread_t t;
    void *p;

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, malloc_thread, &rc), 0);
    pthread_join(t, NULL);
    assert_int_equal(rc, ACL_ERROR_RT_CONTEXT_NULL);
    /* The bridge (acldvppMalloc's) does not look at contexts. */
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    assert_int_equal(acli_mem_alloc(&p, 16, ACLI_MEM_DVPP), ACL_SUCCESS);
    assert_int_equal(acli_mem_free(p, ACLI_MEM_DVPP), ACL_SUCCESS);
    assert_int_equal(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
}

static void test_memcpy_kinds_and_limits(void **state)
{
    unsigned char *dev, *host, *dvpp, src[256];

    (void)state;
    for (int i = 0; i < 256; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    assert_int_equal(aclrtMalloc((void **)&dev, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMallocHost((void **)&host, 256), ACL_SUCCESS);
    assert_int_equal(acli_mem_alloc((void **)&dvpp, 256, ACLI_MEM_DVPP), ACL_SUCCESS);
    /* Every kind is a plain copy, ACL_MEMCPY_DEFAULT included. */
    for (int kind = ACL_MEMCPY_HOST_TO_HOST; kind <= ACL_MEMCPY_DEFAULT; kind++) {
        memset(dev, 0, 256);
        memset(host, 0, 256);
        assert_int_equal(aclrtMemcpy(dev, 256, src, 256, (aclrtMemcpyKind)kind), ACL_SUCCESS);
        assert_memory_equal(dev, src, 256);
        assert_int_equal(aclrtMemcpy(host, 256, dev, 200, (aclrtMemcpyKind)kind), ACL_SUCCESS);
        assert_memory_equal(host, src, 200);
        assert_int_equal(host[200], 0);
        assert_int_equal(aclrtMemcpy(dvpp, 256, host, 100, (aclrtMemcpyKind)kind), ACL_SUCCESS);
        assert_memory_equal(dvpp, src, 100);
    }
    /* count > destMax: the runtime's own code; nothing copied. */
    memset(host, 0, 256);
    assert_int_equal(aclrtMemcpy(host, 10, src, 11, ACL_MEMCPY_HOST_TO_HOST),
                     ACL_ERROR_RT_PARAM_INVALID);
    rt_assert_msg_has("destMax");
    assert_int_equal(host[0], 0);
    /* Past the end of a registered block, whatever destMax says. */
    assert_int_equal(aclrtMemcpy(dev + 200, 4096, src, 100, ACL_MEMCPY_HOST_TO_DEVICE),
                     ACL_ERROR_RT_PARAM_INVALID);
    rt_assert_msg_has("destination block");
    assert_int_equal(aclrtMemcpy(host, 256, dev + 200, 100, ACL_MEMCPY_DEVICE_TO_HOST),
                     ACL_ERROR_RT_PARAM_INVALID);
    rt_assert_msg_has("source block");
    /* A DVPP block has its rounding after it. */
    assert_int_equal(aclrtMemcpy(dvpp, 4096, src, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    assert_int_equal(aclrtMemcpy(dvpp + 256, 4096, src, 32, ACL_MEMCPY_HOST_TO_DEVICE),
                     ACL_SUCCESS);
    assert_int_equal(aclrtMemcpy(dvpp + 256, 4096, src, 33, ACL_MEMCPY_HOST_TO_DEVICE),
                     ACL_ERROR_RT_PARAM_INVALID);
    /* Bad arguments. */
    assert_int_equal(aclrtMemcpy(NULL, 16, src, 16, ACL_MEMCPY_HOST_TO_HOST),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMemcpy(host, 16, NULL, 16, ACL_MEMCPY_HOST_TO_HOST),
                     ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMemcpy(host, 16, src, 16, (aclrtMemcpyKind)5), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtMemcpy(host, 16, src, 16, (aclrtMemcpyKind)-1),
                     ACL_ERROR_INVALID_PARAM);
    /* Nothing to copy. */
    assert_int_equal(aclrtMemcpy(host, 0, src, 0, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
    /* Overlapping is defined. */
    memcpy(host, src, 256);
    assert_int_equal(aclrtMemcpy(host + 1, 255, host, 100, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
    assert_memory_equal(host + 1, src, 100);
    assert_int_equal(aclrtFree(dev), ACL_SUCCESS);
    assert_int_equal(aclrtFreeHost(host), ACL_SUCCESS);
    assert_int_equal(acli_mem_free(dvpp, ACLI_MEM_DVPP), ACL_SUCCESS);
}

static void test_memset(void **state)
{
    unsigned char *p;

    (void)state;
    assert_int_equal(aclrtMalloc((void **)&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtMemset(p, 64, 0x1ab, 10), ACL_SUCCESS);
    for (int i = 0; i < 64; i++)
        assert_int_equal(p[i], i < 10 ? 0xab : 0);
    assert_int_equal(aclrtMemset(p, 9, 1, 10), ACL_ERROR_RT_PARAM_INVALID);
    assert_int_equal(aclrtMemset(p + 60, 100, 1, 10), ACL_ERROR_RT_PARAM_INVALID);
    assert_int_equal(aclrtMemset(NULL, 10, 1, 10), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(p[10], 0);
    assert_int_equal(aclrtFree(p), ACL_SUCCESS);
}

/* The tree against a reference array: random sizes and frees, lookups of
 * starts, interiors, ends and gaps. */
static void test_registry_against_reference(void **state)
{
    enum { N = 600 };
    static unsigned char *blk[N];
    static size_t len[N];
    unsigned seed = 12345;

    (void)state;
    memset(blk, 0, sizeof(blk));
    for (int round = 0; round < 6000; round++) {
        int i;

        seed = seed * 1103515245u + 12345u;
        i = (int)((seed >> 8) % N);
        if (blk[i]) {
            assert_int_equal(acli_mem_free(blk[i], ACLI_MEM_DVPP), ACL_SUCCESS);
            assert_int_equal(acli_mem_avail(blk[i]), 0);
            blk[i] = NULL;
        } else {
            size_t n = 1 + (seed >> 12) % 3000;
            assert_int_equal(acli_mem_alloc((void **)&blk[i], n, ACLI_MEM_DVPP), ACL_SUCCESS);
            len[i] = (n + 63) / 32 * 32;
        }
        if (round % 50 == 0) {
            for (int k = 0; k < N; k++) {
                if (!blk[k])
                    continue;
                assert_int_equal(acli_mem_avail(blk[k]), len[k]);
                assert_int_equal(acli_mem_avail(blk[k] + len[k] / 2), len[k] - len[k] / 2);
                assert_int_equal(acli_mem_avail(blk[k] + len[k] - 1), 1);
            }
        }
    }
    for (int k = 0; k < N; k++)
        if (blk[k])
            assert_int_equal(acli_mem_free(blk[k], ACLI_MEM_DVPP), ACL_SUCCESS);
}

typedef struct churn {
    atomic_int failures;
    unsigned seed;
} churn;

static void *alloc_churn(void *arg)
{
    churn *c = arg;
    unsigned char *mine[32] = {0};

    for (int round = 0; round < 3000; round++) {
        int i;

        c->seed = c->seed * 1103515245u + 12345u;
        i = (int)((c->seed >> 8) % 32);
        if (mine[i]) {
            if (acli_mem_avail(mine[i] + 5) != (size_t)mine[i][0] * 32 - 5 ||
                acli_mem_free(mine[i], ACLI_MEM_DVPP) != ACL_SUCCESS)
                atomic_fetch_add(&c->failures, 1);
            mine[i] = NULL;
        } else {
            size_t n = 1 + (c->seed >> 12) % 2000;
            if (acli_mem_alloc((void **)&mine[i], n, ACLI_MEM_DVPP) != ACL_SUCCESS)
                atomic_fetch_add(&c->failures, 1);
            else
                mine[i][0] = (unsigned char)((n + 63) / 32); /* its length / 32 */
        }
    }
    for (int i = 0; i < 32; i++)
        if (mine[i])
            acli_mem_free(mine[i], ACLI_MEM_DVPP);
    return NULL;
}

static void test_registry_from_many_threads(void **state)
{
    churn c[4];
    pthread_t t[4];

    (void)state;
    for (int i = 0; i < 4; i++) {
        atomic_init(&c[i].failures, 0);
        c[i].seed = 77u + (unsigned)i;
        assert_int_equal(pthread_create(&t[i], NULL, alloc_churn, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(atomic_load(&c[i].failures), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dvpp_rounding_and_alignment, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_arguments, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_every_policy_is_accepted, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_frees_refused, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_malloc_needs_a_context, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_memcpy_kinds_and_limits, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_memset, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_registry_against_reference, setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_registry_from_many_threads, setup, rt_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    rt_remove_dir();
    return rc;
}
