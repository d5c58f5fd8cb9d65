/* dvppd_dump: the daemon's dump folder (dump.*, docs/dump.md).
 *
 * dump.dir is opened once at start (O_DIRECTORY | O_NOFOLLOW): created with
 * mode 0700 when it is missing (its parent must exist), refused when it is
 * a symbolic link, not a directory, or writable by others (a shared /tmp
 * is no place for request pixels). Every dump folder is made under that
 * descriptor with a name of dvpp_dump_name (UTC time + the daemon's
 * counter), so no path from a request ever reaches a filename; after a
 * dump, retention removes the oldest folders until dump.max_requests and
 * dump.max_bytes hold, never a folder whose dump is still in progress (begun,
 * not yet ended: another request's) nor the one just ended.
 *
 * Who may dump: loopback callers (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104)
 * unless dump.remote is true (dvppd_dump_peer_allowed, a pure function).
 *
 * Threads: dvppd_dump_begin and dvppd_dump_end may be called from any
 * thread (a mutex serialises retention and the set of dumps in progress;
 * the counter is atomic).
 * Ownership: dvppd_dump_new's object is the caller's (dvppd_dump_free).
 */
#ifndef DVPPD_DUMP_H
#define DVPPD_DUMP_H

#include <stdbool.h>
#include <sys/socket.h>

#include "device/dvpp_dump.h"
#include "dvppd_config.h"

typedef struct dvppd_dump dvppd_dump;

/* Open @c's dump.dir into *@out; *@out is NULL (dumps off) when the
 * directory is "". DVPP_EINVAL ("dump.dir") for a link, a non-directory or
 * a world-writable directory; DVPP_EIO when it cannot be made or opened;
 * DVPP_ENOMEM. */
dvpp_status dvppd_dump_new(const dvppd_dump_config *c, dvppd_dump **out, dvpp_err *err);
void dvppd_dump_free(dvppd_dump *d);

/* A caller at @peer (NULL: unknown, refused) may dump: a loopback address,
 * or any when @remote. */
bool dvppd_dump_peer_allowed(const struct sockaddr *peer, bool remote);

/* The request's dump= value (or X-Dvpp-Dump): "1"/"true"/"yes" true,
 * "0"/"false"/"no" and NULL false; anything else DVPP_EINVAL ("dump"). */
dvpp_status dvppd_dump_flag(const char *value, bool *on, dvpp_err *err);

/* May a caller at @peer dump on @d (NULL: dumps off)? DVPP_EUNSUPPORTED
 * ("dump", answered 403) saying why not. */
dvpp_status dvppd_dump_allow(const dvppd_dump *d, const struct sockaddr *peer,
                             dvpp_err *err);

/* Make the next dump folder and open @out on it; its name into @name
 * (DVPP_DUMP_NAME_LEN bytes). The per-folder bound is dump.max_bytes. The
 * folder counts as in progress (retention keeps it) until dvppd_dump_end,
 * which every successful begin must be paired with. */
dvpp_status dvppd_dump_begin(dvppd_dump *d, dvpp_dump *out, char *name, dvpp_err *err);

/* The dump @name (of dvppd_dump_begin) has ended (its manifest written, or
 * given up): no longer in progress; then retention (dvpp_dump_prune with
 * dump.max_*), which keeps @name itself and every dump still in progress. */
void dvppd_dump_end(dvppd_dump *d, const char *name);

#endif
