/* dvpp_status: the one list of status codes every dvppd function returns.
 *
 * 0 is success, errors are negative. The code, its symbolic name and its
 * message come from a single X-macro so that the enum, dvpp_status_name()
 * and dvpp_strerror() can never disagree. Front ends map codes to HTTP
 * statuses and socket error codes; the numeric values are part of the wire
 * contract and must never be renumbered.
 *
 * Detail for one failure (which field, which limit, what the codec said)
 * travels in a caller-provided dvpp_err, never in a global.
 */
#ifndef DVPP_STATUS_H
#define DVPP_STATUS_H

#include <stdarg.h>

#define DVPP_STATUS_MAP(XX)                                                    \
    XX(OK, 0, "success")                                                       \
    XX(EINVAL, -1, "invalid argument")                                         \
    XX(ENOMEM, -2, "out of memory")                                            \
    XX(EAGAIN, -3, "resource temporarily unavailable, try again")              \
    XX(ELIMIT, -4, "input exceeds a configured limit")                         \
    XX(ECORRUPT, -5, "corrupt or truncated data")                              \
    XX(EUNSUPPORTED, -6, "unsupported input")                                  \
    XX(EFORMAT, -7, "unsupported or mismatched pixel format")                  \
    XX(EOVERFLOW, -8, "size arithmetic overflows 64 bits")                     \
    XX(ECODEC, -9, "codec error")                                              \
    XX(EIO, -10, "input/output error")                                         \
    XX(ESYS, -11, "system call failed")                                        \
    XX(ESTRIDE, -12, "stride or alignment rule violated")                      \
    XX(ENOSPC, -13, "destination buffer too small")                            \
    XX(ECANCELED, -14, "operation canceled")                                   \
    XX(ETIMEDOUT, -15, "deadline exceeded")                                    \
    XX(ENOTFOUND, -16, "not found")                                            \
    XX(EBUSY, -17, "busy")                                                     \
    XX(EPROFILE, -18, "rejected by the compatibility profile")

typedef enum dvpp_status {
#define DVPP_STATUS_ENUM_(name, code, msg) DVPP_##name = code,
    DVPP_STATUS_MAP(DVPP_STATUS_ENUM_)
#undef DVPP_STATUS_ENUM_
} dvpp_status;

/* Length of every error-detail buffer, including the terminating NUL. */
#define DVPP_ERR_LEN 256
#define DVPP_ERR_FIELD_LEN 48

/* Detail for one failure. Owned by the caller (usually on its stack); a
 * function that fails fills it once, a function that succeeds leaves it
 * alone. Every API that takes one accepts NULL. */
typedef struct dvpp_err {
    dvpp_status status;             /* the code the call returned */
    char field[DVPP_ERR_FIELD_LEN]; /* request field at fault, "" if none */
    char msg[DVPP_ERR_LEN];         /* one readable sentence */
} dvpp_err;

/* "EINVAL" for DVPP_EINVAL; "UNKNOWN" for a value not in the list. */
const char *dvpp_status_name(int status);

/* The generic message of a code ("invalid argument"). Never NULL. */
const char *dvpp_strerror(int status);

/* Clear @err (may be NULL). */
void dvpp_err_clear(dvpp_err *err);

/* Fill @err (may be NULL) and return @status, so a failing path can say
 * `return dvpp_err_set(err, DVPP_ELIMIT, "width", "width %u > %u", w, m);`.
 * @field may be NULL. The message is truncated to DVPP_ERR_LEN. */
dvpp_status dvpp_err_set(dvpp_err *err, dvpp_status status, const char *field,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

dvpp_status dvpp_err_setv(dvpp_err *err, dvpp_status status, const char *field,
                          const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#endif
