/* acl_rt_err.c: the thread's recent error message (aclGetRecentErrMsg),
 * acli_fail and the libdvpp status mapping (acli_from_dvpp).
 *
 * The message is thread-local, as AscendCL's is: a failing call writes it,
 * nothing clears it but the thread's next failure (and a worker before each
 * task, so a task's message is its own).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "acl_rt_int.h"

static _Thread_local struct {
    bool set;
    char text[ACLI_MSG_LEN];
} tl_msg;

static void msg_setv(const char *fmt, va_list ap)
{
    vsnprintf(tl_msg.text, sizeof(tl_msg.text), fmt, ap);
    tl_msg.set = true;
}

aclError acli_fail(aclError code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    msg_setv(fmt, ap);
    va_end(ap);
    acli_log(ACLI_LOG_ERROR, "%s (error %d)", tl_msg.text, code);
    return code;
}

aclError acli_fail_quiet(aclError code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    msg_setv(fmt, ap);
    va_end(ap);
    return code;
}

void acli_msg_clear(void)
{
    tl_msg.set = false;
    tl_msg.text[0] = '\0';
}

const char *acli_msg_get(void)
{
    return tl_msg.set ? tl_msg.text : NULL;
}

const char *aclGetRecentErrMsg(void)
{
    return acli_msg_get();
}

static aclError code_of_dvpp(int st)
{
    switch (st) {
    case DVPP_OK:
        return ACL_SUCCESS;
    case DVPP_EFORMAT:
        return ACL_ERROR_FORMAT_NOT_MATCH;
    case DVPP_EINVAL:
    case DVPP_ESTRIDE:
    case DVPP_ELIMIT:
    case DVPP_ENOSPC:
    case DVPP_EPROFILE:
        return ACL_ERROR_INVALID_PARAM;
    case DVPP_EUNSUPPORTED:
        return ACL_ERROR_FEATURE_UNSUPPORTED;
    case DVPP_ECORRUPT:
    case DVPP_ECODEC:
        return ACL_ERROR_FAILURE;
    case DVPP_ENOMEM:
        return ACL_ERROR_BAD_ALLOC;
    case DVPP_ETIMEDOUT:
        return ACL_ERROR_RT_AICPU_TIMEOUT;
    default:
        return ACL_ERROR_INTERNAL_ERROR;
    }
}

aclError acli_from_dvpp(int st, const char *msg)
{
    aclError code = code_of_dvpp(st);

    if (code == ACL_SUCCESS)
        return ACL_SUCCESS;
    return acli_fail(code, "%s", msg && *msg ? msg : dvpp_strerror(st));
}
