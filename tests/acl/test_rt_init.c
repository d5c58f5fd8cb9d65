/* Runtime tests (libascendcl): aclInit/aclFinalize and their codes, the
 * JSON and environment settings, the version, the run mode, the SoC name
 * per profile, the log switches. */
#include <fcntl.h>
#include <sys/stat.h>

#include "test_rt_common.h"

static int setup(void **state)
{
    (void)state;
    rt_clear_env();
    return 0;
}

/* Whatever a test left, the next starts uninitialised. */
static int teardown(void **state)
{
    (void)state;
    if (acli_initialized())
        aclFinalize();
    rt_clear_env();
    return 0;
}

static void test_lifecycle_and_repeat_codes(void **state)
{
    (void)state;
    assert_false(acli_initialized());
    assert_int_equal(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    rt_assert_msg_has("not initialized");
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_true(acli_initialized());
    assert_int_equal(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
    rt_assert_msg_has("already initialized");
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    assert_false(acli_initialized());
    assert_int_equal(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    /* "" is no file, as NULL. */
    assert_int_equal(aclInit(""), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_calls_before_init_are_uninitialize(void **state)
{
    aclrtContext ctx = (aclrtContext)0x1;
    void *p = (void *)0x1;

    (void)state;
    assert_int_equal(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
    rt_assert_msg_has("aclInit");
    assert_int_equal(aclrtCreateContext(&ctx, 0), ACL_ERROR_UNINITIALIZE);
    assert_null(ctx);
    assert_int_equal(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE);
    assert_null(p);
    assert_int_equal(aclrtResetDevice(0), ACL_ERROR_UNINITIALIZE);
}

static void test_finalize_resets_devices_still_set(void **state)
{
    aclrtContext ctx;
    aclrtStream s;
    int32_t dev;

    (void)state;
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateContext(&ctx, 0), ACL_SUCCESS);
    assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    /* The thread's context and the stream went with the device. */
    assert_int_equal(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtSetCurrentContext(ctx), ACL_ERROR_INVALID_PARAM);
    /* A second life. */
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclrtGetDevice(&dev), ACL_SUCCESS);
    assert_int_equal(dev, 0);
    assert_int_equal(aclrtResetDevice(0), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_version_and_run_mode(void **state)
{
    int32_t a = -1, b = -1, c = -1;
    aclrtRunMode mode = ACL_DEVICE;

    (void)state;
    /* Valid before aclInit. */
    assert_int_equal(aclrtGetVersion(&a, &b, &c), ACL_SUCCESS);
    assert_int_equal(a, 1);
    assert_int_equal(b, 10);
    assert_int_equal(c, 0);
    assert_int_equal(aclrtGetVersion(NULL, &b, &c), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtGetVersion(&a, NULL, &c), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtGetVersion(&a, &b, NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(aclrtGetRunMode(&mode), ACL_SUCCESS);
    assert_int_equal(mode, ACL_HOST);
    assert_int_equal(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM);
}

static void test_soc_name_per_profile(void **state)
{
    (void)state;
    /* Before aclInit: the environment, default ascend310. */
    assert_string_equal(aclrtGetSocName(), "Ascend310");
    assert_int_equal(acli_profile(), 1 /* DVPP_PROFILE_ASCEND310 */);
    setenv("DVPP_ACL_PROFILE", "ascend310p", 1);
    assert_string_equal(aclrtGetSocName(), "Ascend310P3");
    assert_int_equal(acli_profile(), 2 /* DVPP_PROFILE_ASCEND310P */);
    /* aclInit without a profile keeps the environment's. */
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_string_equal(aclrtGetSocName(), "Ascend310P3");
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    /* The JSON wins over the environment. */
    assert_int_equal(rt_init_json("{\"dvpp\": {\"profile\": \"ascend310\"}}"), ACL_SUCCESS);
    assert_string_equal(aclrtGetSocName(), "Ascend310");
    assert_int_equal(acli_profile(), 1);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    unsetenv("DVPP_ACL_PROFILE");
    assert_int_equal(rt_init_json("{\"dvpp\": {\"profile\": \"ascend310p\"}}"), ACL_SUCCESS);
    assert_string_equal(aclrtGetSocName(), "Ascend310P3");
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    /* After aclFinalize: the environment again. */
    assert_string_equal(aclrtGetSocName(), "Ascend310");
}

static void test_json_file_errors(void **state)
{
    char dir[600];

    (void)state;
    assert_int_equal(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE);
    rt_assert_msg_has("/nonexistent/acl.json");
    assert_false(acli_initialized());
    rt_write_file("x", "");
    snprintf(dir, sizeof(dir), "%s", g_rt_dir);
    assert_int_equal(aclInit(dir), ACL_ERROR_INVALID_FILE);
    rt_assert_msg_has("not a regular file");
    assert_int_equal(rt_init_json("{\"dvpp\": "), ACL_ERROR_PARSE_FILE);
    rt_assert_msg_has("not valid JSON");
    assert_int_equal(rt_init_json("{} {}"), ACL_ERROR_PARSE_FILE);
    assert_int_equal(rt_init_json("[1, 2]"), ACL_ERROR_PARSE_FILE);
    rt_assert_msg_has("JSON object");
    assert_false(acli_initialized());
    /* A failed aclInit leaves the process uninitialised; it may retry. */
    assert_int_equal(rt_init_json("{}"), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    /* An empty file says nothing, as {} does. */
    assert_int_equal(rt_init_json(" \n"), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
}

static void test_json_oversized_file_is_refused_before_reading(void **state)
{
    const char *path = rt_write_file("big.json", "{}");
    int fd = open(path, O_WRONLY);

    (void)state;
    assert_true(fd >= 0);
    /* Sparse: 2 MiB of nothing. */
    assert_int_equal(ftruncate(fd, 2 << 20), 0);
    close(fd);
    assert_int_equal(aclInit(path), ACL_ERROR_INVALID_FILE_SIZE);
    assert_false(acli_initialized());
}

static void test_json_bad_dvpp_values_name_their_key(void **state)
{
    static const struct {
        const char *json;
        const char *key;
    } cases[] = {
        {"{\"dvpp\": 3}", "\"dvpp\""},
        {"{\"dvpp\": {\"profile\": \"native\"}}", "dvpp.profile"},
        {"{\"dvpp\": {\"profile\": 310}}", "dvpp.profile"},
        {"{\"dvpp\": {\"devices\": 0}}", "dvpp.devices"},
        {"{\"dvpp\": {\"devices\": 65}}", "dvpp.devices"},
        {"{\"dvpp\": {\"devices\": \"2\"}}", "dvpp.devices"},
        {"{\"dvpp\": {\"devices\": 1.5}}", "dvpp.devices"},
        {"{\"dvpp\": {\"channels\": 0}}", "dvpp.channels"},
        {"{\"dvpp\": {\"channels\": 257}}", "dvpp.channels"},
        {"{\"dvpp\": {\"channels\": [1]}}", "dvpp.channels"},
        {"{\"dvpp\": {\"channels\": {\"vpc\": -1}}}", "dvpp.channels.vpc"},
        {"{\"dvpp\": {\"channels\": {\"jpegd\": true}}}", "dvpp.channels.jpegd"},
        {"{\"dvpp\": {\"queue_depth\": 0}}", "dvpp.queue_depth"},
        {"{\"dvpp\": {\"queue_depth\": 2000000}}", "dvpp.queue_depth"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(rt_init_json(cases[i].json), ACL_ERROR_INVALID_PARAM);
        rt_assert_msg_has(cases[i].key);
        assert_false(acli_initialized());
    }
    assert_int_equal(rt_init_json("{\"dump\": 1}"), ACL_ERROR_INVALID_DUMP_CONFIG);
    assert_int_equal(rt_init_json("{\"profiler\": []}"), ACL_ERROR_INVALID_PROFILING_CONFIG);
}

static void test_json_accepted_settings(void **state)
{
    uint32_t n = 0;

    (void)state;
    /* Unknown keys anywhere are ignored; dump and profiler are accepted. */
    assert_int_equal(rt_init_json("{\"dvpp\": {\"devices\": 3, \"channels\": {\"vpc\": 2, "
                                  "\"jpegd\": 1, \"nosuch\": 9}, \"queue_depth\": 4, "
                                  "\"typo\": 1}, \"dump\": {\"dump_list\": []}, "
                                  "\"profiler\": {\"switch\": \"on\"}, \"other\": [1]}"),
                     ACL_SUCCESS);
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(aclrtSetDevice(2), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(3), ACL_ERROR_RT_INVALID_DEVICEID);
    rt_assert_msg_has("device 3");
    assert_int_equal(aclrtResetDevice(2), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    assert_int_equal(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM);
}

static void test_environment_settings(void **state)
{
    uint32_t n = 0;

    (void)state;
    setenv("DVPP_ACL_DEVICES", "2", 1);
    setenv("DVPP_ACL_CHANNELS", "vpc=3,jpegd=2", 1);
    /* Before aclInit the count comes from the environment. */
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
    assert_int_equal(aclrtResetDevice(1), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);
    /* The JSON overrides the environment key by key. */
    assert_int_equal(rt_init_json("{\"dvpp\": {\"devices\": 1}}"), ACL_SUCCESS);
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    setenv("DVPP_ACL_CHANNELS", "4", 1);
    assert_int_equal(aclInit(NULL), ACL_SUCCESS);
    assert_int_equal(aclFinalize(), ACL_SUCCESS);

    static const char *const bad_channels[] = {"0", "vpc", "vpc=", "vpc=0", "nosuch=2",
                                               "vpc=2,", "vpc=2;jpegd=1", "300"};
    for (size_t i = 0; i < sizeof(bad_channels) / sizeof(bad_channels[0]); i++) {
        setenv("DVPP_ACL_CHANNELS", bad_channels[i], 1);
        assert_int_equal(aclInit(NULL), ACL_ERROR_INVALID_PARAM);
        rt_assert_msg_has("DVPP_ACL_CHANNELS");
    }
    unsetenv("DVPP_ACL_CHANNELS");
    setenv("DVPP_ACL_DEVICES", "0", 1);
    assert_int_equal(aclInit(NULL), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("DVPP_ACL_DEVICES");
    assert_int_equal(aclrtGetDeviceCount(&n), ACL_ERROR_INVALID_PARAM);
    unsetenv("DVPP_ACL_DEVICES");
    setenv("DVPP_ACL_PROFILE", "ascend910", 1);
    assert_int_equal(aclInit(NULL), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("DVPP_ACL_PROFILE");
    /* The SoC name never fails: an unusable value means the default. */
    assert_string_equal(aclrtGetSocName(), "Ascend310");
}

/* Run @fn with fd @fd going to a file; returns what was written. */
static char *capture_fd(int fd, void (*fn)(void))
{
    static char buf[8192];
    char path[512];
    int saved, f;
    FILE *r;
    size_t n;

    /* A copy: @fn may write files of its own through rt_write_file. */
    snprintf(path, sizeof(path), "%s", rt_write_file("captured", ""));
    saved = dup(fd);
    f = open(path, O_WRONLY | O_TRUNC);
    assert_true(saved >= 0 && f >= 0);
    fflush(stdout);
    fflush(stderr);
    dup2(f, fd);
    close(f);
    fn();
    fflush(stdout);
    fflush(stderr);
    dup2(saved, fd);
    close(saved);
    r = fopen(path, "rb");
    n = fread(buf, 1, sizeof(buf) - 1, r);
    fclose(r);
    buf[n] = '\0';
    return buf;
}

static void init_with_dump_and_finalize(void)
{
    assert_int_equal(rt_init_json("{\"dump\": {}}"), ACL_SUCCESS);
    aclFinalize();
}

static void fail_one_call(void)
{
    assert_int_equal(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM);
}

static void test_log_switches(void **state)
{
    const char *out;

    (void)state;
    unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
    /* Default: nothing on stdout; an error goes to stderr. */
    out = capture_fd(1, init_with_dump_and_finalize);
    assert_string_equal(out, "");
    out = capture_fd(2, fail_one_call);
    assert_non_null(strstr(out, "[ERROR]"));
    assert_non_null(strstr(out, "runMode is NULL"));
    /* Level 4 is off. */
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);
    out = capture_fd(2, fail_one_call);
    assert_string_equal(out, "");
    /* To stdout at info: the dump section's one line. */
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "1", 1);
    setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1", 1);
    out = capture_fd(1, init_with_dump_and_finalize);
    assert_non_null(strstr(out, "[INFO]"));
    assert_non_null(strstr(out, "\"dump\" section is accepted"));
    out = capture_fd(2, fail_one_call);
    assert_string_equal(out, "");
    /* At error level the info line is not printed. */
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "3", 1);
    out = capture_fd(1, init_with_dump_and_finalize);
    assert_null(strstr(out, "dump"));
}

static void test_recent_message_is_per_thread_and_stays(void **state)
{
    (void)state;
    assert_int_equal(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM);
    rt_assert_msg_has("runMode");
    /* A success leaves the message as it was. */
    assert_string_equal(aclrtGetSocName(), "Ascend310");
    rt_assert_msg_has("runMode");
    assert_int_equal(acli_fail(ACL_ERROR_FAILURE, "custom %d", 42), ACL_ERROR_FAILURE);
    assert_string_equal(aclGetRecentErrMsg(), "custom 42");
    /* libdvpp's statuses. */
    assert_int_equal(acli_from_dvpp(0, "x"), ACL_SUCCESS);
    assert_string_equal(aclGetRecentErrMsg(), "custom 42");
    assert_int_equal(acli_from_dvpp(-7, "ascend310: VPC output format must be NV12 or NV21"),
                     ACL_ERROR_FORMAT_NOT_MATCH);
    assert_string_equal(aclGetRecentErrMsg(), "ascend310: VPC output format must be NV12 or NV21");
    assert_int_equal(acli_from_dvpp(-1, NULL), ACL_ERROR_INVALID_PARAM);
    assert_string_equal(aclGetRecentErrMsg(), "invalid argument");
    assert_int_equal(acli_from_dvpp(-12, "s"), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_from_dvpp(-4, "s"), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_from_dvpp(-13, "s"), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_from_dvpp(-18, "s"), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(acli_from_dvpp(-6, "s"), ACL_ERROR_FEATURE_UNSUPPORTED);
    assert_int_equal(acli_from_dvpp(-5, "s"), ACL_ERROR_FAILURE);
    assert_int_equal(acli_from_dvpp(-9, "s"), ACL_ERROR_FAILURE);
    assert_int_equal(acli_from_dvpp(-2, "s"), ACL_ERROR_BAD_ALLOC);
    assert_int_equal(acli_from_dvpp(-15, "s"), ACL_ERROR_RT_AICPU_TIMEOUT);
    assert_int_equal(acli_from_dvpp(-11, "s"), ACL_ERROR_INTERNAL_ERROR);
}

static void *msg_thread(void *arg)
{
    const char **seen = arg;

    *seen = aclGetRecentErrMsg();
    return NULL;
}

static void test_new_thread_has_no_message(void **state)
{
    const char *seen = "unset";
    pthread_t t;

    (void)state;
    assert_int_equal(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM);
    assert_int_equal(pthread_create(&t, NULL, msg_thread, &seen), 0);
    pthread_join(t, NULL);
    assert_null(seen);
}

static void test_next_id_counts_up(void **state)
{
    uint64_t a = acli_next_id(), b = acli_next_id();

    (void)state;
    assert_true(a >= 1);
    assert_int_equal(b, a + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lifecycle_and_repeat_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calls_before_init_are_uninitialize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_resets_devices_still_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version_and_run_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_soc_name_per_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_file_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_oversized_file_is_refused_before_reading,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_bad_dvpp_values_name_their_key, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_json_accepted_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_switches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recent_message_is_per_thread_and_stays, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_new_thread_has_no_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_id_counts_up, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    rt_remove_dir();
    return rc;
}
