/* acl_rt_extra.c: runtime calls real Ascend programs make besides the
 * DVPP path proper: the application log (aclAppLog, which ACLLite's
 * ACLLITE_LOG_* macros and ACL_APP_LOG call) and aclrtGetMemInfo.
 * docs/acl.md, "The runtime".
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "acl_rt_int.h"

/* The application's text, longest kept (a longer one is cut). */
#define APP_LOG_TEXT_LEN 400

static void app_log_line(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void app_log_line(int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    acli_vlog("APP", level, fmt, ap);
    va_end(ap);
}

/* The last path component: log lines name the source file, not the
 * build machine's folders. */
static const char *file_base(const char *file)
{
    const char *slash = strrchr(file, '/');

    return slash ? slash + 1 : file;
}

void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line,
               const char *fmt, ...)
{
    char text[APP_LOG_TEXT_LEN];
    va_list ap;
    int level = (int)logLevel;

    /* Never a crash on a program's NULL; a level outside aclLogLevel is
     * not a line of any level. */
    if (!fmt || level < ACL_DEBUG || level > ACL_ERROR)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    app_log_line(level, "%s:%u %s: %s", file ? file_base(file) : "?", (unsigned)line,
                 func ? func : "?", text);
}

static bool mem_attr_known(aclrtMemAttr attr)
{
    return (int)attr >= ACL_DDR_MEM && (int)attr <= ACL_HBM_MEM_P2P_NORMAL;
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *freeSize, size_t *totalSize)
{
    long page = sysconf(_SC_PAGESIZE);
    long total = sysconf(_SC_PHYS_PAGES);
    long avail = sysconf(_SC_AVPHYS_PAGES);

    if (!freeSize || !totalSize)
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: %s is NULL",
                         freeSize ? "total" : "free");
    if (!mem_attr_known(attr))
        return acli_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: attr %d is not an "
                         "aclrtMemAttr", (int)attr);
    if (page <= 0 || total <= 0 || avail < 0)
        return acli_fail(ACL_ERROR_RT_FAILURE, "aclrtGetMemInfo: the machine's memory size "
                         "is unknown (sysconf failed)");
    *totalSize = (size_t)total * (size_t)page;
    *freeSize = avail > total ? *totalSize : (size_t)avail * (size_t)page;
    return ACL_SUCCESS;
}
