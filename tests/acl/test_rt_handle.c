/* Runtime tests (libascendcl): the handle registry (acli_handle_*) against
 * a reference, kinds, NULL, growth and removal order; aclDataBuffer. */
#include "test_rt_common.h"

/* aclGetDataBufferSize is deprecated, and tested here all the same. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static int setup(void **state)
{
    (void)state;
    rt_clear_env();
    return 0;
}

static void test_add_ok_remove(void **state)
{
    int a = 0, b = 0;

    (void)state;
    assert_false(acli_handle_ok(&a, ACLI_PIC_DESC));
    assert_false(acli_handle_remove(&a, ACLI_PIC_DESC));
    assert_true(acli_handle_add(&a, ACLI_PIC_DESC));
    assert_true(acli_handle_ok(&a, ACLI_PIC_DESC));
    /* Another kind is another thing. */
    assert_false(acli_handle_ok(&a, ACLI_ROI_CONFIG));
    assert_false(acli_handle_remove(&a, ACLI_ROI_CONFIG));
    assert_true(acli_handle_ok(&a, ACLI_PIC_DESC));
    assert_false(acli_handle_ok(&b, ACLI_PIC_DESC));
    /* NULL is never a handle. */
    assert_false(acli_handle_add(NULL, ACLI_PIC_DESC));
    assert_false(acli_handle_ok(NULL, ACLI_PIC_DESC));
    assert_false(acli_handle_remove(NULL, ACLI_PIC_DESC));
    assert_true(acli_handle_remove(&a, ACLI_PIC_DESC));
    assert_false(acli_handle_ok(&a, ACLI_PIC_DESC));
    assert_false(acli_handle_remove(&a, ACLI_PIC_DESC));
}

/* Many handles at neighbouring addresses (probe runs collide), added and
 * removed in random order, checked against a reference after each step. */
static void test_registry_against_reference(void **state)
{
    enum { N = 3000 };
    static unsigned char pool[N * 16];
    static int live[N]; /* 0 = not live, else its kind */
    unsigned seed = 99;

    (void)state;
    memset(live, 0, sizeof(live));
    for (int round = 0; round < 40000; round++) {
        int i, kind;

        seed = seed * 1103515245u + 12345u;
        i = (int)((seed >> 8) % N);
        kind = 1 + (int)((seed >> 20) % (ACLI_KIND_COUNT - 1));
        if (live[i]) {
            assert_true(acli_handle_remove(&pool[i * 16], (acli_kind)live[i]));
            live[i] = 0;
        } else {
            assert_true(acli_handle_add(&pool[i * 16], (acli_kind)kind));
            live[i] = kind;
        }
        if (round % 997 == 0) {
            for (int k = 0; k < N; k++) {
                assert_int_equal(acli_handle_ok(&pool[k * 16], (acli_kind)(live[k] ? live[k] : 1)),
                                 live[k] != 0);
                /* Interior addresses are not handles. */
                assert_false(acli_handle_ok(&pool[k * 16 + 8], (acli_kind)(live[k] ? live[k] : 1)));
            }
        }
    }
    for (int k = 0; k < N; k++)
        if (live[k])
            assert_true(acli_handle_remove(&pool[k * 16], (acli_kind)live[k]));
    for (int k = 0; k < N; k++)
        assert_false(acli_handle_ok(&pool[k * 16], (acli_kind)1));
}

typedef struct churn {
    unsigned char *base;
    atomic_int failures;
} churn;

static void *handle_churn(void *arg)
{
    churn *c = arg;

    for (int round = 0; round < 20000; round++) {
        unsigned char *p = c->base + (round % 64) * 8;
        if (!acli_handle_add(p, ACLI_STREAM_DESC) || !acli_handle_ok(p, ACLI_STREAM_DESC) ||
            !acli_handle_remove(p, ACLI_STREAM_DESC) || acli_handle_ok(p, ACLI_STREAM_DESC))
            atomic_fetch_add(&c->failures, 1);
    }
    return NULL;
}

static void test_registry_from_many_threads(void **state)
{
    static unsigned char area[4][512];
    churn c[4];
    pthread_t t[4];

    (void)state;
    for (int i = 0; i < 4; i++) {
        c[i].base = area[i];
        atomic_init(&c[i].failures, 0);
        assert_int_equal(pthread_create(&t[i], NULL, handle_churn, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(atomic_load(&c[i].failures), 0);
    }
}

static void test_data_buffers(void **state)
{
    char bytes[100];
    aclDataBuffer *b, *empty;

    (void)state;
    b = aclCreateDataBuffer(bytes, sizeof(bytes));
    assert_non_null(b);
    assert_ptr_equal(aclGetDataBufferAddr(b), bytes);
    assert_int_equal(aclGetDataBufferSizeV2(b), 100);
    assert_int_equal(aclGetDataBufferSize(b), 100);
    /* (NULL, 0): an output to be filled in later. */
    empty = aclCreateDataBuffer(NULL, 0);
    assert_non_null(empty);
    assert_null(aclGetDataBufferAddr(empty));
    assert_int_equal(aclGetDataBufferSizeV2(empty), 0);
    assert_int_equal(aclDestroyDataBuffer(empty), ACL_SUCCESS);
    /* NULL and destroyed buffers: defaults and INVALID_PARAM, no crash. */
    assert_null(aclGetDataBufferAddr(NULL));
    assert_int_equal(aclGetDataBufferSizeV2(NULL), 0);
    assert_int_equal(aclGetDataBufferSize(NULL), 0);
    assert_int_equal(aclDestroyDataBuffer(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclDestroyDataBuffer(b), ACL_SUCCESS);
    assert_int_equal(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("not a live data buffer");
    assert_null(aclGetDataBufferAddr(b));
    assert_int_equal(aclGetDataBufferSizeV2(b), 0);
    /* A pointer that is some other handle is not a data buffer. */
    assert_true(acli_handle_add(bytes, ACLI_PIC_DESC));
    assert_int_equal(aclDestroyDataBuffer((aclDataBuffer *)bytes), ACL_ERROR_INVALID_PARAM);
    assert_true(acli_handle_remove(bytes, ACLI_PIC_DESC));
}

static void test_data_buffer_size_saturates(void **state)
{
    char c;
    aclDataBuffer *b;

    (void)state;
    if (sizeof(size_t) <= 4)
        skip();
    b = aclCreateDataBuffer(&c, (size_t)UINT32_MAX + 10);
    assert_non_null(b);
    assert_int_equal(aclGetDataBufferSizeV2(b), (size_t)UINT32_MAX + 10);
    assert_int_equal(aclGetDataBufferSize(b), UINT32_MAX);
    assert_int_equal(aclDestroyDataBuffer(b), ACL_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_add_ok_remove, setup),
        cmocka_unit_test_setup(test_registry_against_reference, setup),
        cmocka_unit_test_setup(test_registry_from_many_threads, setup),
        cmocka_unit_test_setup(test_data_buffers, setup),
        cmocka_unit_test_setup(test_data_buffer_size_saturates, setup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
