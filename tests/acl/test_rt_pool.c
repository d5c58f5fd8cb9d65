/* Runtime tests (libascendcl): the DVPP memory pool. acldvppFree keeps
 * its block mapped and reserved (as the chip's hugepage pool does) while
 * the pool holds at most its cap (DVPP_ACL_POOL_BYTES, "dvpp.pool_bytes",
 * default 256 MiB); acldvppMalloc reuses the oldest freed block of the
 * same rounded size, zeroed again. A pooled block is not live: no bytes
 * follow it, a second free is refused. aclFinalize releases the pool.
 *
 * The first test is Ascend/samples' venc sample's pattern (the input
 * buffer freed after the first frame, then copied into and read for every
 * frame): before the pool, ASan reports heap-use-after-free there. */
#include "test_rt_common.h"

#include "acl/ops/acl_dvpp.h"

/* acldvppMalloc's rounding (acl_int.h). */
static size_t dvpp_bytes(size_t size)
{
    return (size + 63) / 32 * 32;
}

static void pool_clear_env(void)
{
    rt_clear_env();
    unsetenv("DVPP_ACL_POOL_BYTES");
}

static int setup(void **state)
{
    (void)state;
    pool_clear_env();
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unsetenv("DVPP_ACL_POOL_BYTES");
    return aclFinalize() == ACL_SUCCESS ? 0 : -1;
}

static void assert_pool(size_t want_blocks, size_t want_bytes)
{
    size_t blocks = 12345, bytes = 12345;

    acli_mem_pool_stat(&blocks, &bytes);
    assert_int_equal(blocks, want_blocks);
    assert_int_equal(bytes, want_bytes);
}

static void assert_all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0) {
            fprintf(stderr, "byte %zu of %zu is 0x%02x, not 0\n", i, n, p[i]);
            fail();
        }
}

/* Frame @i of a 64x48 NV12 "video": every byte depends on i. */
static void make_frame(unsigned char *f, size_t n, unsigned i)
{
    for (size_t k = 0; k < n; k++)
        f[k] = (unsigned char)(k * 7u + i * 13u + 1u);
}

static void test_the_venc_sample_keeps_using_its_freed_input(void **state)
{
    enum { W = 64, H = 48, FRAMES = 100 };
    const size_t size = W * H * 3 / 2;
    unsigned char frame[W * H * 3 / 2], back[W * H * 3 / 2];
    unsigned char *in = NULL, *other[FRAMES];

    (void)state;
    assert_int_equal(acldvppMalloc((void **)&in, size), ACL_SUCCESS);
    make_frame(frame, size, 0);
    assert_int_equal(aclrtMemcpy(in, size, frame, size, ACL_MEMCPY_HOST_TO_DEVICE),
                     ACL_SUCCESS);
    /* The sample frees its input after the first frame ... */
    assert_int_equal(acldvppFree(in), ACL_SUCCESS);
    /* ... and goes on copying into it and encoding from it, while the
     * program allocates other (smaller and larger) buffers. */
    for (unsigned i = 1; i < FRAMES; i++) {
        size_t osize = i % 2 ? size / 2 + i : size * 2 + i;

        assert_int_equal(acldvppMalloc((void **)&other[i], osize), ACL_SUCCESS);
        make_frame(frame, size, i);
        assert_int_equal(aclrtMemcpy(in, size, frame, size, ACL_MEMCPY_HOST_TO_DEVICE),
                         ACL_SUCCESS);
        assert_int_equal(aclrtMemcpy(back, size, in, size, ACL_MEMCPY_DEVICE_TO_HOST),
                         ACL_SUCCESS);
        assert_memory_equal(back, frame, size);
        /* The write into the freed block landed in no other block. */
        assert_true((uintptr_t)other[i] + dvpp_bytes(osize) <= (uintptr_t)in ||
                    (uintptr_t)other[i] >= (uintptr_t)in + dvpp_bytes(size));
        assert_all_zero(other[i], dvpp_bytes(osize));
        if (i % 3 == 0)
            assert_int_equal(acldvppFree(other[i]), ACL_SUCCESS);
    }
    for (unsigned i = 1; i < FRAMES; i++)
        if (i % 3 != 0)
            assert_int_equal(acldvppFree(other[i]), ACL_SUCCESS);
}

static void test_free_then_alloc_reuses_the_block_zeroed(void **state)
{
    const size_t size = 100000, bytes = dvpp_bytes(size);
    unsigned char *p = NULL, *q = NULL, *r = NULL;

    (void)state;
    assert_pool(0, 0);
    assert_int_equal(acli_mem_alloc((void **)&p, size, ACLI_MEM_DVPP), ACL_SUCCESS);
    memset(p, 0xab, bytes);
    assert_int_equal(acldvppFree(p), ACL_SUCCESS);
    assert_pool(1, bytes);
    /* Pooled is not live: no bytes follow it for the layer's checks. */
    assert_int_equal(acli_mem_avail(p), 0);
    assert_int_equal(acli_mem_avail(p + 10), 0);
    /* The program's write into it is harmless (our memory). */
    memset(p, 0xcd, bytes);
    /* Another rounded size does not take it. */
    assert_int_equal(acldvppMalloc((void **)&r, size + 32), ACL_SUCCESS);
    assert_ptr_not_equal(r, p);
    assert_pool(1, bytes);
    /* A size of the same rounding does, zeroed again. */
    assert_int_equal(acldvppMalloc((void **)&q, size - 1), ACL_SUCCESS);
    assert_int_equal(dvpp_bytes(size - 1), bytes);
    assert_ptr_equal(q, p);
    assert_pool(0, 0);
    assert_int_equal(acli_mem_avail(q), bytes);
    assert_all_zero(q, bytes);
    /* Live again: an ordinary block in every way. */
    assert_int_equal(aclrtMemset(q, bytes, 0x11, bytes), ACL_SUCCESS);
    assert_int_equal(aclrtMemset(q, bytes + 1, 0x11, bytes + 1), ACL_ERROR_RT_PARAM_INVALID);
    assert_int_equal(acldvppFree(q), ACL_SUCCESS);
    assert_int_equal(acldvppFree(r), ACL_SUCCESS);
    assert_pool(2, bytes + dvpp_bytes(size + 32));
}

static void test_the_oldest_freed_block_is_reused_first(void **state)
{
    const size_t size = 5000;
    void *b[4], *got;

    (void)state;
    for (int i = 0; i < 4; i++)
        assert_int_equal(acldvppMalloc(&b[i], size), ACL_SUCCESS);
    /* Freed 2, 0, 3, 1: handed out again in that order, so the block a
     * program freed last (and may still be writing) is reused last. */
    assert_int_equal(acldvppFree(b[2]), ACL_SUCCESS);
    assert_int_equal(acldvppFree(b[0]), ACL_SUCCESS);
    assert_int_equal(acldvppFree(b[3]), ACL_SUCCESS);
    assert_int_equal(acldvppFree(b[1]), ACL_SUCCESS);
    assert_pool(4, 4 * dvpp_bytes(size));
    for (int k = 0, order[4] = {2, 0, 3, 1}; k < 4; k++) {
        assert_int_equal(acldvppMalloc(&got, size), ACL_SUCCESS);
        assert_ptr_equal(got, b[order[k]]);
    }
    assert_pool(0, 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(acldvppFree(b[i]), ACL_SUCCESS);
}

static void test_double_free_and_other_kinds_refused(void **state)
{
    const size_t bytes = dvpp_bytes(4096);
    unsigned char *p = NULL;
    void *d = NULL;

    (void)state;
    assert_int_equal(acldvppMalloc((void **)&p, 4096), ACL_SUCCESS);
    assert_int_equal(acldvppFree(p), ACL_SUCCESS);
    assert_pool(1, bytes);
    assert_int_equal(acldvppFree(p), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("not the start of a live block");
    assert_int_equal(acldvppFree(p + 32), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtFree(p), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtFreeHost(p), ACL_ERROR_INVALID_PARAM);
    assert_pool(1, bytes);
    /* Only DVPP blocks are pooled: aclrtMalloc's go back to the heap. */
    assert_int_equal(aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    assert_int_equal(aclrtFree(d), ACL_SUCCESS);
    assert_pool(1, bytes);
    assert_int_equal(aclrtFree(d), ACL_ERROR_INVALID_PARAM);
}

/* aclInit again with the pool's cap from the environment (NULL: unset)
 * and @json (NULL: none). */
static aclError reinit(const char *env_bytes, const char *json)
{
    aclError rc;

    if (acli_initialized())
        assert_int_equal(aclFinalize(), ACL_SUCCESS);
    if (env_bytes)
        setenv("DVPP_ACL_POOL_BYTES", env_bytes, 1);
    else
        unsetenv("DVPP_ACL_POOL_BYTES");
    rc = rt_init_json(json);
    if (rc == ACL_SUCCESS)
        assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    return rc;
}

/* Allocate @n blocks of @size into @b and free them in index order. */
static void alloc_then_free(void **b, int n, size_t size)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(acldvppMalloc(&b[i], size), ACL_SUCCESS);
    for (int i = 0; i < n; i++)
        assert_int_equal(acldvppFree(b[i]), ACL_SUCCESS);
}

static void test_the_cap_releases_the_least_recently_freed(void **state)
{
    const size_t size = 8000, bytes = dvpp_bytes(size);
    char cap[32];
    void *b[5], *got, *big;

    (void)state;
    snprintf(cap, sizeof(cap), "%zu", 3 * bytes + 100);
    assert_int_equal(reinit(cap, NULL), ACL_SUCCESS);
    alloc_then_free(b, 5, size);
    /* Blocks 0 and 1 went back to the heap; 2, 3, 4 stay. */
    assert_pool(3, 3 * bytes);
    /* A block larger than the whole cap is released at once. */
    assert_int_equal(acldvppMalloc(&big, 4 * bytes), ACL_SUCCESS);
    assert_int_equal(acldvppFree(big), ACL_SUCCESS);
    assert_pool(3, 3 * bytes);
    for (int i = 2; i < 5; i++) {
        assert_int_equal(acldvppMalloc(&got, size), ACL_SUCCESS);
        assert_ptr_equal(got, b[i]);
    }
    assert_pool(0, 0);
    for (int i = 2; i < 5; i++)
        assert_int_equal(acldvppFree(b[i]), ACL_SUCCESS);
    /* Mixed sizes: the oldest go first whatever their size. */
    assert_int_equal(acldvppMalloc(&big, 2 * bytes), ACL_SUCCESS);
    assert_int_equal(acldvppFree(big), ACL_SUCCESS);
    /* 3 x bytes + that one is over the cap: 2 and 3 go, 4 stays. */
    assert_pool(2, bytes + dvpp_bytes(2 * bytes));
}

static void test_the_cap_from_json_and_zero_disables(void **state)
{
    const size_t size = 3000, bytes = dvpp_bytes(size);
    char json[128];
    void *b[3];

    (void)state;
    /* The JSON's key wins over the environment. */
    snprintf(json, sizeof(json), "{\"dvpp\": {\"pool_bytes\": %zu}}", 2 * bytes);
    assert_int_equal(reinit("100000000", json), ACL_SUCCESS);
    alloc_then_free(b, 3, size);
    assert_pool(2, 2 * bytes);
    assert_int_equal(reinit("0", NULL), ACL_SUCCESS);
    assert_pool(0, 0);
    alloc_then_free(b, 3, size);
    assert_pool(0, 0);
    assert_int_equal(reinit(NULL, "{\"dvpp\": {\"pool_bytes\": 0}}"), ACL_SUCCESS);
    alloc_then_free(b, 3, size);
    assert_pool(0, 0);
    /* The default: 256 MiB. */
    assert_int_equal(reinit(NULL, NULL), ACL_SUCCESS);
    alloc_then_free(b, 3, size);
    assert_pool(3, 3 * bytes);
}

static void test_bad_caps_refused(void **state)
{
    static const char *const envs[] = {"abc", "-1", "1e6", "12 ", "68719476737",
                                       "99999999999999999999999"};
    static const char *const jsons[] = {
        "{\"dvpp\": {\"pool_bytes\": -1}}", "{\"dvpp\": {\"pool_bytes\": \"1024\"}}",
        "{\"dvpp\": {\"pool_bytes\": 1.5}}", "{\"dvpp\": {\"pool_bytes\": 68719476737}}"};

    (void)state;
    for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
        assert_int_equal(reinit(envs[i], NULL), ACL_ERROR_INVALID_PARAM);
        rt_assert_msg_has("DVPP_ACL_POOL_BYTES");
        assert_int_equal(reinit(NULL, NULL), ACL_SUCCESS);
    }
    for (size_t i = 0; i < sizeof(jsons) / sizeof(jsons[0]); i++) {
        assert_int_equal(reinit(NULL, jsons[i]), ACL_ERROR_INVALID_PARAM);
        rt_assert_msg_has("dvpp.pool_bytes");
        assert_int_equal(reinit(NULL, NULL), ACL_SUCCESS);
    }
    /* The largest cap accepted: 64 GiB. */
    assert_int_equal(reinit("68719476736", NULL), ACL_SUCCESS);
}

static void test_finalize_releases_the_pool(void **state)
{
    void *b[3], *live = NULL;

    (void)state;
    alloc_then_free(b, 3, 2000);
    assert_int_equal(acldvppMalloc(&live, 2000), ACL_SUCCESS);
    assert_pool(2, 2 * dvpp_bytes(2000));
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    assert_pool(0, 0);
    /* Outside aclInit..aclFinalize a free goes straight to the heap. */
    assert_int_equal(acli_mem_avail(live), dvpp_bytes(2000));
    assert_int_equal(acldvppFree(live), ACL_SUCCESS);
    assert_pool(0, 0);
    assert_int_equal(acldvppFree(live), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_pool(0, 0);
}

/* Threads allocating and freeing a few sizes at once: every block they get
 * is zeroed and theirs alone (their pattern survives until they free it). */
typedef struct pool_churn {
    unsigned seed;
    unsigned char tag; /* this thread's bytes */
    atomic_int failures;
} pool_churn;

static void *pool_churn_run(void *arg)
{
    static const size_t sizes[] = {100, 4000, 33000};
    pool_churn *c = arg;
    unsigned char *held[8] = {0};
    size_t held_size[8] = {0};

    for (int it = 0; it < 3000; it++) {
        int k = (int)(rand_r(&c->seed) % 8);
        unsigned char tag = c->tag;

        if (held[k]) {
            for (size_t i = 0; i < held_size[k]; i += 97)
                if (held[k][i] != (unsigned char)(tag ^ k))
                    atomic_fetch_add(&c->failures, 1);
            if (acldvppFree(held[k]) != ACL_SUCCESS)
                atomic_fetch_add(&c->failures, 1);
            held[k] = NULL;
            continue;
        }
        held_size[k] = dvpp_bytes(sizes[rand_r(&c->seed) % 3]);
        if (acldvppMalloc((void **)&held[k], held_size[k] - 63) != ACL_SUCCESS) {
            atomic_fetch_add(&c->failures, 1);
            continue;
        }
        for (size_t i = 0; i < held_size[k]; i += 97)
            if (held[k][i] != 0)
                atomic_fetch_add(&c->failures, 1);
        for (size_t i = 0; i < held_size[k]; i += 97)
            held[k][i] = (unsigned char)(tag ^ k);
    }
    for (int k = 0; k < 8; k++)
        if (held[k] && acldvppFree(held[k]) != ACL_SUCCESS)
            atomic_fetch_add(&c->failures, 1);
    return NULL;
}

static void test_the_pool_from_many_threads(void **state)
{
    pool_churn c[4];
    pthread_t t[4];

    (void)state;
    for (int i = 0; i < 4; i++) {
        atomic_init(&c[i].failures, 0);
        c[i].seed = 901u + (unsigned)i;
        c[i].tag = (unsigned char)(0x31 * (i + 1));
        assert_int_equal(pthread_create(&t[i], NULL, pool_churn_run, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(atomic_load(&c[i].failures), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_venc_sample_keeps_using_its_freed_input,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_then_alloc_reuses_the_block_zeroed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_oldest_freed_block_is_reused_first, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_double_free_and_other_kinds_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_cap_releases_the_least_recently_freed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_cap_from_json_and_zero_disables, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_caps_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_releases_the_pool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_pool_from_many_threads, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    rt_remove_dir();
    return rc;
}
