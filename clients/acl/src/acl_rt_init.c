/* acl_rt_init.c: the process state, aclInit/aclFinalize and their settings
 * (aclInit's JSON through jansson, the DVPP_ACL_* environment), the
 * version, the run mode, the SoC name and the log (ASCEND_GLOBAL_LOG_LEVEL,
 * ASCEND_SLOG_PRINT_TO_STDOUT). docs/acl.md, "The runtime".
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acl_rt_int.h"
#include "dvpp_profile.h"

/* A config file larger than this is refused before it is read: aclInit's
 * JSON holds a few sections of settings, never data. */
#define ACLI_CONFIG_MAX_BYTES ((size_t)1 << 20)

/* The process state: the runtime's one mutable global (acl_rt_int.h says
 * which lock guards what). Mutexes are made statically; the condition
 * variables on the first acli_proc() (they need CLOCK_MONOTONIC). */
static acli_process g_acl_process = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .initialized = false,
    .profile = DVPP_PROFILE_ASCEND310,
    .next_id = 1,
    .next_serial = 1,
    .handles = {.mu = PTHREAD_MUTEX_INITIALIZER},
    .mem = {.mu = PTHREAD_MUTEX_INITIALIZER},
    .reports = {.mu = PTHREAD_MUTEX_INITIALIZER},
    .ev_mu = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_once_t g_acl_process_once = PTHREAD_ONCE_INIT;

static void process_make_conds(void)
{
    /* Without these nothing of the runtime can wait; there is no caller to
     * tell, so the attempt is all there is (it fails only without memory
     * at load time). */
    if (acli_cond_init(&g_acl_process.reports.sub_cv) != 0 ||
        acli_cond_init(&g_acl_process.reports.done_cv) != 0 ||
        acli_cond_init(&g_acl_process.ev_cv) != 0)
        acli_log(ACLI_LOG_ERROR, "cannot create the runtime's condition variables");
}

acli_process *acli_proc(void)
{
    pthread_once(&g_acl_process_once, process_make_conds);
    return &g_acl_process;
}

/* --- time ------------------------------------------------------------------ */

int acli_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    int rc = pthread_condattr_init(&a);

    if (rc != 0)
        return rc;
    rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

void acli_deadline_ms(struct timespec *ts, int64_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

bool acli_deadline_passed(const struct timespec *ts)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > ts->tv_sec ||
           (now.tv_sec == ts->tv_sec && now.tv_nsec >= ts->tv_nsec);
}

/* --- log ------------------------------------------------------------------------ */

/* ASCEND_GLOBAL_LOG_LEVEL: 0 debug, 1 info, 2 warning, 3 error (default),
 * 4 off; read at each line so a test (or a program) may change it. */
static int log_threshold(void)
{
    const char *v = getenv("ASCEND_GLOBAL_LOG_LEVEL");

    if (v && v[0] >= '0' && v[0] <= '4' && v[1] == '\0')
        return v[0] - '0';
    return ACLI_LOG_ERROR;
}

void acli_vlog(const char *module, int level, const char *fmt, va_list ap)
{
    static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    const char *out = getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    bool to_stdout = out && strcmp(out, "1") == 0;
    char line[ACLI_MSG_LEN + 64];
    int n;

    if (level < 0 || level > ACLI_LOG_ERROR || level < log_threshold())
        return;
    if (!to_stdout && level < ACLI_LOG_ERROR)
        return;
    n = snprintf(line, sizeof(line), "[%s] %s(%ld): ", names[level], module, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(line))
        return;
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    /* One call per line, so lines of different threads never interleave. */
    fprintf(to_stdout ? stdout : stderr, "%s\n", line);
    if (to_stdout)
        fflush(stdout);
}

void acli_log(int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    acli_vlog("ACL", level, fmt, ap);
    va_end(ap);
}

/* --- settings ---------------------------------------------------------------------- */

/* The engines a configuration names ("dvpp.channels", DVPP_ACL_CHANNELS):
 * the DVPP V1 ones. The runtime engine keeps its own count. */
static bool engine_is_configurable(int e)
{
    return e != ACLI_RT_ENGINE;
}

static int engine_by_name(const char *name, size_t len)
{
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++) {
        const char *n = dvpp_engine_name(e);
        if (engine_is_configurable(e) && strlen(n) == len && strncmp(n, name, len) == 0)
            return e;
    }
    return -1;
}

/* A decimal integer in [lo, hi], the whole of @s (or its first @len bytes). */
static bool parse_uint(const char *s, size_t len, unsigned lo, unsigned hi, unsigned *out)
{
    unsigned long v = 0;

    if (len == 0 || len > 9)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

/* A byte count in [0, ACLI_MAX_POOL_BYTES], decimal digits only. */
static bool parse_bytes(const char *s, size_t *out)
{
    size_t v = 0, len = strlen(s);

    if (len == 0 || len > 12)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    if (v > ACLI_MAX_POOL_BYTES)
        return false;
    *out = v;
    return true;
}

static bool parse_profile(const char *s, int *out)
{
    dvpp_profile p;

    if (!dvpp_profile_parse(s, &p) || !dvpp_profile_is_ascend(p))
        return false;
    *out = (int)p;
    return true;
}

static void settings_default(acli_settings *s)
{
    dvpp_device_config cfg;

    dvpp_device_config_default(&cfg);
    memset(s, 0, sizeof(*s));
    s->profile = DVPP_PROFILE_ASCEND310;
    s->devices = 1;
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++)
        s->channels[e] = cfg.channels[e];
    s->channels[ACLI_RT_ENGINE] = ACLI_RT_ENGINE_CHANNELS;
    s->queue_depth = cfg.queue_depth[0];
    s->pool_bytes = ACLI_DEFAULT_POOL_BYTES;
}

/* DVPP_ACL_CHANNELS: "4" (every engine) or "vpc=4,jpegd=2". */
static aclError channels_from_env(const char *v, acli_settings *s)
{
    unsigned n;
    const char *p = v;

    if (parse_uint(v, strlen(v), 1, DVPP_DEVICE_MAX_CHANNELS, &n)) {
        for (int e = 0; e < DVPP_ENGINE_COUNT; e++)
            if (engine_is_configurable(e))
                s->channels[e] = n;
        return ACL_SUCCESS;
    }
    while (*p) {
        const char *comma = strchr(p, ',');
        const char *eq = strchr(p, '=');
        size_t item = comma ? (size_t)(comma - p) : strlen(p);
        int e;

        if (!eq || (size_t)(eq - p) >= item)
            return acli_fail(ACL_ERROR_INVALID_PARAM,
                             "DVPP_ACL_CHANNELS '%s': expected a count or engine=count items "
                             "(e.g. \"vpc=4,jpegd=2\")", v);
        e = engine_by_name(p, (size_t)(eq - p));
        if (e < 0)
            return acli_fail(ACL_ERROR_INVALID_PARAM,
                             "DVPP_ACL_CHANNELS '%s': unknown engine '%.*s' (jpegd, jpege, "
                             "pngd, vpc, vdec or venc)", v, (int)(eq - p), p);
        if (!parse_uint(eq + 1, item - (size_t)(eq - p) - 1, 1, DVPP_DEVICE_MAX_CHANNELS, &n))
            return acli_fail(ACL_ERROR_INVALID_PARAM,
                             "DVPP_ACL_CHANNELS '%s': the count of %s must be an integer in "
                             "[1, %u]", v, dvpp_engine_name(e), DVPP_DEVICE_MAX_CHANNELS);
        s->channels[e] = n;
        p += item;
        if (comma && !*++p)
            return acli_fail(ACL_ERROR_INVALID_PARAM,
                             "DVPP_ACL_CHANNELS '%s': an empty item after the last comma", v);
    }
    return ACL_SUCCESS;
}

aclError acli_settings_from_env(acli_settings *s)
{
    const char *v;

    settings_default(s);
    v = getenv("DVPP_ACL_PROFILE");
    if (v && *v && !parse_profile(v, &s->profile))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "DVPP_ACL_PROFILE '%s' must be ascend310 or ascend310p", v);
    v = getenv("DVPP_ACL_DEVICES");
    if (v && *v && !parse_uint(v, strlen(v), 1, ACLI_MAX_DEVICES, &s->devices))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "DVPP_ACL_DEVICES '%s' must be an integer in [1, %u]", v,
                         ACLI_MAX_DEVICES);
    v = getenv("DVPP_ACL_POOL_BYTES");
    if (v && *v && !parse_bytes(v, &s->pool_bytes))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "DVPP_ACL_POOL_BYTES '%s' must be a byte count in [0, %zu]", v,
                         ACLI_MAX_POOL_BYTES);
    v = getenv("DVPP_ACL_CHANNELS");
    if (v && *v)
        return channels_from_env(v, s);
    return ACL_SUCCESS;
}

/* A JSON integer in [lo, hi] at @key ("dvpp.devices"). */
static aclError json_uint(const json_t *j, const char *key, unsigned lo, unsigned hi,
                          unsigned *out)
{
    json_int_t v;

    if (!json_is_integer(j))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclInit: %s must be an integer in [%u, %u]",
                         key, lo, hi);
    v = json_integer_value(j);
    if (v < (json_int_t)lo || v > (json_int_t)hi)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclInit: %s is %lld, not in [%u, %u]", key, (long long)v, lo, hi);
    *out = (unsigned)v;
    return ACL_SUCCESS;
}

static aclError json_bytes(const json_t *j, const char *key, size_t hi, size_t *out)
{
    json_int_t v = json_is_integer(j) ? json_integer_value(j) : -1;

    if (v < 0 || (unsigned long long)v > hi)
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclInit: %s must be an integer byte count in [0, %zu]", key, hi);
    *out = (size_t)v;
    return ACL_SUCCESS;
}

static aclError json_channels(const json_t *j, acli_settings *s)
{
    const char *name;
    json_t *v;
    unsigned n;
    aclError rc;

    if (json_is_integer(j)) {
        rc = json_uint(j, "dvpp.channels", 1, DVPP_DEVICE_MAX_CHANNELS, &n);
        if (rc)
            return rc;
        for (int e = 0; e < DVPP_ENGINE_COUNT; e++)
            if (engine_is_configurable(e))
                s->channels[e] = n;
        return ACL_SUCCESS;
    }
    if (!json_is_object(j))
        return acli_fail(ACL_ERROR_INVALID_PARAM,
                         "aclInit: dvpp.channels must be an integer or an object of "
                         "engine counts");
    json_object_foreach((json_t *)j, name, v) {
        int e = engine_by_name(name, strlen(name));
        char key[96];

        if (e < 0) {
            acli_log(ACLI_LOG_WARN, "aclInit: dvpp.channels.%s is not an engine; ignored", name);
            continue;
        }
        snprintf(key, sizeof(key), "dvpp.channels.%s", name);
        rc = json_uint(v, key, 1, DVPP_DEVICE_MAX_CHANNELS, &s->channels[e]);
        if (rc)
            return rc;
    }
    return ACL_SUCCESS;
}

static aclError json_dvpp(const json_t *dvpp, acli_settings *s)
{
    const char *key;
    json_t *v;
    aclError rc = ACL_SUCCESS;

    if (!json_is_object(dvpp))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclInit: \"dvpp\" must be an object");
    json_object_foreach((json_t *)dvpp, key, v) {
        if (strcmp(key, "profile") == 0) {
            if (!json_is_string(v) || !parse_profile(json_string_value(v), &s->profile))
                rc = acli_fail(ACL_ERROR_INVALID_PARAM,
                               "aclInit: dvpp.profile must be \"ascend310\" or \"ascend310p\"");
        } else if (strcmp(key, "devices") == 0) {
            rc = json_uint(v, "dvpp.devices", 1, ACLI_MAX_DEVICES, &s->devices);
        } else if (strcmp(key, "channels") == 0) {
            rc = json_channels(v, s);
        } else if (strcmp(key, "queue_depth") == 0) {
            rc = json_uint(v, "dvpp.queue_depth", 1, ACLI_MAX_QUEUE_DEPTH, &s->queue_depth);
        } else if (strcmp(key, "pool_bytes") == 0) {
            rc = json_bytes(v, "dvpp.pool_bytes", ACLI_MAX_POOL_BYTES, &s->pool_bytes);
        } else {
            acli_log(ACLI_LOG_WARN, "aclInit: dvpp.%s is not a setting; ignored", key);
        }
        if (rc)
            return rc;
    }
    return ACL_SUCCESS;
}

/* Read @path whole (a regular file of at most ACLI_CONFIG_MAX_BYTES) into
 * *buf (caller frees). */
static aclError read_config(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    char *b = NULL;
    size_t n;
    aclError rc;

    if (!f)
        return acli_fail(ACL_ERROR_INVALID_FILE, "aclInit: cannot open the config file '%s': %s",
                         path, strerror(errno));
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = acli_fail(ACL_ERROR_INVALID_FILE, "aclInit: the config '%s' is not a regular file",
                       path);
        goto out_close;
    }
    if ((uint64_t)st.st_size > ACLI_CONFIG_MAX_BYTES) {
        rc = acli_fail(ACL_ERROR_INVALID_FILE_SIZE,
                       "aclInit: the config file '%s' has %lld bytes, more than %zu", path,
                       (long long)st.st_size, ACLI_CONFIG_MAX_BYTES);
        goto out_close;
    }
    b = malloc((size_t)st.st_size + 1);
    if (!b) {
        rc = acli_fail(ACL_ERROR_BAD_ALLOC, "aclInit: no memory for the config file");
        goto out_close;
    }
    n = fread(b, 1, (size_t)st.st_size, f);
    if (ferror(f)) {
        rc = acli_fail(ACL_ERROR_INVALID_FILE, "aclInit: cannot read the config file '%s'", path);
        free(b);
        goto out_close;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    rc = ACL_SUCCESS;
out_close:
    fclose(f);
    return rc;
}

static bool only_whitespace(const char *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r')
            return false;
    return true;
}

/* The sections aclInit knows: "dvpp" (ours), "dump" and "profiler"
 * (accepted and logged: this build has no trace or dump to give them). */
static aclError config_apply(const json_t *root, const char *path, acli_settings *s)
{
    const json_t *dvpp = json_object_get(root, "dvpp");
    const json_t *dump = json_object_get(root, "dump");
    const json_t *prof = json_object_get(root, "profiler");

    if (dump && !json_is_object(dump))
        return acli_fail(ACL_ERROR_INVALID_DUMP_CONFIG, "aclInit: \"dump\" must be an object");
    if (prof && !json_is_object(prof))
        return acli_fail(ACL_ERROR_INVALID_PROFILING_CONFIG,
                         "aclInit: \"profiler\" must be an object");
    if (dump)
        acli_log(ACLI_LOG_INFO, "aclInit: %s: the \"dump\" section is accepted; this build "
                 "writes no dump", path);
    if (prof)
        acli_log(ACLI_LOG_INFO, "aclInit: %s: the \"profiler\" section is accepted; this "
                 "build writes no trace", path);
    return dvpp ? json_dvpp(dvpp, s) : ACL_SUCCESS;
}

static aclError config_load(const char *path, acli_settings *s)
{
    char *buf = NULL;
    size_t len = 0;
    json_error_t jerr;
    json_t *root;
    aclError rc = read_config(path, &buf, &len);

    if (rc)
        return rc;
    if (only_whitespace(buf, len)) {
        /* An empty file says nothing, as "{}" does. */
        free(buf);
        return ACL_SUCCESS;
    }
    root = json_loadb(buf, len, 0, &jerr);
    free(buf);
    if (!root)
        return acli_fail(ACL_ERROR_PARSE_FILE, "aclInit: '%s' is not valid JSON: %s (line %d, "
                         "column %d)", path, jerr.text, jerr.line, jerr.column);
    if (!json_is_object(root))
        rc = acli_fail(ACL_ERROR_PARSE_FILE, "aclInit: '%s' must hold a JSON object", path);
    else
        rc = config_apply(root, path, s);
    json_decref(root);
    return rc;
}

/* --- aclInit / aclFinalize ----------------------------------------------------------- */

aclError aclInit(const char *configPath)
{
    acli_process *P = acli_proc();
    acli_settings s;
    aclError rc;

    pthread_mutex_lock(&P->mu);
    if (atomic_load(&P->initialized)) {
        pthread_mutex_unlock(&P->mu);
        return acli_fail(ACL_ERROR_REPEAT_INITIALIZE,
                         "aclInit: already initialized (aclFinalize first)");
    }
    rc = acli_settings_from_env(&s);
    if (rc == ACL_SUCCESS && configPath && *configPath)
        rc = config_load(configPath, &s);
    if (rc == ACL_SUCCESS) {
        P->settings = s;
        atomic_store(&P->profile, s.profile);
        acli_mem_pool_start(s.pool_bytes);
        atomic_store(&P->initialized, true);
        acli_log(ACLI_LOG_INFO, "aclInit: profile %s, %u device(s), queue depth %u",
                 dvpp_profile_name((dvpp_profile)s.profile), s.devices, s.queue_depth);
    }
    pthread_mutex_unlock(&P->mu);
    return rc;
}

aclError aclFinalize(void)
{
    acli_process *P = acli_proc();

    pthread_mutex_lock(&P->mu);
    if (!atomic_load(&P->initialized)) {
        pthread_mutex_unlock(&P->mu);
        return acli_fail(ACL_ERROR_REPEAT_FINALIZE,
                         "aclFinalize: not initialized (aclInit not called, or already "
                         "finalized)");
    }
    /* From here on new devices are refused; the open ones go next. */
    atomic_store(&P->initialized, false);
    pthread_mutex_unlock(&P->mu);
    acli_devices_reset_all();
    acli_reports_reset();
    /* After the devices: no canceled task touches a block any more. */
    acli_mem_pool_stop();
    return ACL_SUCCESS;
}

bool acli_initialized(void)
{
    return atomic_load(&acli_proc()->initialized);
}

int acli_profile(void)
{
    acli_process *P = acli_proc();
    const char *v;
    int p = DVPP_PROFILE_ASCEND310;

    if (atomic_load(&P->initialized))
        return atomic_load(&P->profile);
    /* Before aclInit (aclrtGetSocName is valid then): the environment. */
    v = getenv("DVPP_ACL_PROFILE");
    if (v && *v && !parse_profile(v, &p))
        p = DVPP_PROFILE_ASCEND310;
    return p;
}

uint64_t acli_next_id(void)
{
    return atomic_fetch_add(&acli_proc()->next_id, 1);
}

/* --- version, run mode, SoC -------------------------------------------------------------- */

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{
    if (!majorVersion || !minorVersion || !patchVersion)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion: a NULL pointer");
    *majorVersion = ACL_MAJOR_VERSION;
    *minorVersion = ACL_MINOR_VERSION;
    *patchVersion = ACL_PATCH_VERSION;
    return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    if (!runMode)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode: runMode is NULL");
    /* A PCIe host: programs then copy with HOST_TO_DEVICE/DEVICE_TO_HOST,
     * which are plain copies here, as every kind is. */
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}

const char *aclrtGetSocName(void)
{
    return acli_profile() == DVPP_PROFILE_ASCEND310P ? "Ascend310P3" : "Ascend310";
}
