/* dvppd_service: systemd's sockets, notifications and watchdog rule. */
#include "dvppd_service.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

enum { FD_HTTP, FD_UNIX, FD_NEITHER };

static int kind_of(int fd)
{
    if (sd_is_socket_inet(fd, AF_UNSPEC, SOCK_STREAM, 1, 0) > 0)
        return FD_HTTP;
    if (sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, NULL, 0) > 0)
        return FD_UNIX;
    return FD_NEITHER;
}

/* The kind a name asks for, or -1 for a name that asks for none (the
 * unit's default name, "dvppd.socket", or any other). */
static int kind_named(const char *name)
{
    if (name && strcmp(name, "http") == 0)
        return FD_HTTP;
    if (name && strcmp(name, "unix") == 0)
        return FD_UNIX;
    return -1;
}

static void close_all(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

dvpp_status dvppd_service_sort_fds(const int *fds, char *const *names, int n,
                                   dvppd_passed_fds *out, dvpp_err *err)
{
    static const char *const what[] = {"a listening TCP socket (http)",
                                       "a listening AF_UNIX seqpacket socket (unix)"};
    int *slot[2] = {&out->http, &out->unix_sock};

    out->http = out->unix_sock = -1;
    for (int i = 0; i < n; i++) {
        const char *name = names && names[i] ? names[i] : "";
        int kind = kind_of(fds[i]), want = kind_named(name);
        dvpp_status st = DVPP_OK;
        if (kind == FD_NEITHER)
            st = dvpp_err_set(err, DVPP_EINVAL, "LISTEN_FDS", "passed fd %d (name '%s') is "
                              "neither %s nor %s", fds[i], name, what[0], what[1]);
        else if (want >= 0 && want != kind)
            st = dvpp_err_set(err, DVPP_EINVAL, "LISTEN_FDS", "passed fd %d is named '%s' "
                              "but is not %s", fds[i], name, what[want]);
        else if (*slot[kind] >= 0)
            st = dvpp_err_set(err, DVPP_EINVAL, "LISTEN_FDS", "passed fd %d (name '%s') is "
                              "a second %s", fds[i], name, what[kind]);
        if (st != DVPP_OK) {
            close_all(fds, n);
            out->http = out->unix_sock = -1;
            return st;
        }
        *slot[kind] = fds[i];
    }
    return DVPP_OK;
}

dvpp_status dvppd_service_take_fds(dvppd_passed_fds *out, dvpp_err *err)
{
    char **names = NULL;
    int fds[16];
    int n = sd_listen_fds_with_names(1, &names);
    dvpp_status st;

    out->http = out->unix_sock = -1;
    if (n <= 0)
        return n == 0 ? DVPP_OK
                      : dvpp_err_set(err, DVPP_EINVAL, "LISTEN_FDS", "LISTEN_FDS: %s",
                                     strerror(-n));
    if (n > 16) {
        for (int i = 0; i < n; i++)
            close(SD_LISTEN_FDS_START + i);
        st = dvpp_err_set(err, DVPP_EINVAL, "LISTEN_FDS", "%d sockets passed; want at "
                          "most an HTTP one and a Unix one", n);
    } else {
        for (int i = 0; i < n; i++)
            fds[i] = SD_LISTEN_FDS_START + i;
        st = dvppd_service_sort_fds(fds, names, n, out, err);
    }
    for (int i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
    return st;
}

void dvppd_service_notify(const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sd_notify(0, msg);
}

uint64_t dvppd_service_watchdog_usec(void)
{
    uint64_t usec = 0;

    return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}

void dvppd_watchdog_init(dvppd_watchdog *w, uint64_t now_ns, uint64_t stall_ns)
{
    memset(w, 0, sizeof(*w));
    w->stall_ns = stall_ns;
    w->last_ok_ns = now_ns;
}

bool dvppd_watchdog_tick(dvppd_watchdog *w, uint64_t now_ns, uint64_t busy,
                         uint64_t progress, uint64_t sock_turns)
{
    bool engines_ok = busy == 0 || progress != w->progress;
    bool sock_ok = sock_turns != w->sock_turns;

    if (engines_ok && sock_ok)
        w->last_ok_ns = now_ns;
    w->progress = progress;
    w->sock_turns = sock_turns;
    return now_ns - w->last_ok_ns < w->stall_ns;
}
