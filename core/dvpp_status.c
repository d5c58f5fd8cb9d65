#include "dvpp_status.h"

#include <stdio.h>
#include <string.h>

const char *dvpp_status_name(int status)
{
    switch (status) {
#define DVPP_STATUS_NAME_(name, code, msg)                                     \
    case code:                                                                 \
        return #name;
        DVPP_STATUS_MAP(DVPP_STATUS_NAME_)
#undef DVPP_STATUS_NAME_
    }
    return "UNKNOWN";
}

const char *dvpp_strerror(int status)
{
    switch (status) {
#define DVPP_STATUS_MSG_(name, code, msg)                                      \
    case code:                                                                 \
        return msg;
        DVPP_STATUS_MAP(DVPP_STATUS_MSG_)
#undef DVPP_STATUS_MSG_
    }
    return "unknown status";
}

void dvpp_err_clear(dvpp_err *err)
{
    if (!err)
        return;
    err->status = DVPP_OK;
    err->field[0] = '\0';
    err->msg[0] = '\0';
}

dvpp_status dvpp_err_setv(dvpp_err *err, dvpp_status status, const char *field,
                          const char *fmt, va_list ap)
{
    if (!err)
        return status;
    err->status = status;
    snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    return status;
}

dvpp_status dvpp_err_set(dvpp_err *err, dvpp_status status, const char *field,
                         const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    dvpp_err_setv(err, status, field, fmt, ap);
    va_end(ap);
    return status;
}
