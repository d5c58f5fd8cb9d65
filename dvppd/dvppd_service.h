/* dvppd_service: what running under systemd takes.
 *
 * - The listening sockets systemd passes (sd_listen_fds_with_names): the
 *   names "http" and "unix" when the sender gives them (systemd-socket-
 *   activate --fdname=http:unix), otherwise each fd is classified by its
 *   kind (a listening TCP stream socket serves HTTP, a listening AF_UNIX
 *   seqpacket socket is the local socket), because one .socket unit gives
 *   every fd the same name. Without LISTEN_FDS the daemon binds its own.
 * - Notifications to the service manager (sd_notify): READY, STATUS,
 *   WATCHDOG, RELOADING + MONOTONIC_USEC, STOPPING. No-ops without
 *   NOTIFY_SOCKET.
 * - The watchdog rule: pings go out only while the engines make progress
 *   and the socket thread turns; a hang stops them and systemd restarts
 *   the service.
 *
 * Thread-safety: called from the main thread only.
 */
#ifndef DVPPD_SERVICE_H
#define DVPPD_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "dvpp_status.h"

/* The sockets systemd passed: -1 where none was. Owned by the caller. */
typedef struct dvppd_passed_fds {
    int http;
    int unix_sock;
} dvppd_passed_fds;

/* Sort @n listening fds with their @names (NULL or entries NULL: none)
 * into @out. DVPP_EINVAL naming the fd when one is neither kind, names a
 * kind it is not, or a kind comes twice; the fds are then all closed. */
dvpp_status dvppd_service_sort_fds(const int *fds, char *const *names, int n,
                                   dvppd_passed_fds *out, dvpp_err *err);

/* The fds systemd passed to this process (LISTEN_PID/LISTEN_FDS/
 * LISTEN_FDNAMES, unset afterwards so nothing inherits them), sorted as
 * above; both -1 when there are none. */
dvpp_status dvppd_service_take_fds(dvppd_passed_fds *out, dvpp_err *err);

/* Send @fmt (newline-separated assignments) to the service manager. */
void dvppd_service_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The watchdog interval systemd asked for (WATCHDOG_USEC, honouring
 * WATCHDOG_PID), in microseconds; 0 when there is none. */
uint64_t dvppd_service_watchdog_usec(void);

/* The watchdog rule's state. */
typedef struct dvppd_watchdog {
    uint64_t stall_ns;      /* no progress this long while busy: stop pinging */
    uint64_t last_ok_ns;    /* the last tick that showed progress or idleness */
    uint64_t progress;      /* dvpp_device_counters.progress at that tick */
    uint64_t sock_turns;    /* the socket thread's loop count at that tick */
} dvppd_watchdog;

/* Start the rule at @now_ns: pings stop after @stall_ns without progress. */
void dvppd_watchdog_init(dvppd_watchdog *w, uint64_t now_ns, uint64_t stall_ns);

/* One tick: @busy jobs queued or running, the device's @progress counter,
 * the socket thread's @sock_turns (pass a moving value, e.g. the tick
 * count, when there is no socket thread). True when a ping is due: the
 * engines are idle or moved, and the socket thread turned, within the
 * last stall_ns. */
bool dvppd_watchdog_tick(dvppd_watchdog *w, uint64_t now_ns, uint64_t busy,
                         uint64_t progress, uint64_t sock_turns);

#endif
