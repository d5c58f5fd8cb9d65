/* dvppd_sock: the Unix-socket front end (proto/PROTOCOL.md). Its modules
 * are in dvppd/sock/ (their map, threads and locks: sock/sock_int.h and
 * docs/architecture.md).
 *
 * One epoll thread owns the listening socket, every connection and every
 * ring's bookkeeping; device workers, and the thread of each video decode
 * (which decodes only while a VPC worker is lent to it, and waits for ring
 * slots holding none), only post completions to it (a queue + eventfd), so
 * connection state is never shared between threads. The
 * exceptions are the named-ring registry and the rings' slot tables, which
 * the HTTP front end also uses (?ring=NAME), each under its own mutex: the
 * registry holds a reference to each named ring and to its owner's
 * connection record, and a lookup takes its own, so an HTTP delivery never
 * walks the connections and outlives a disconnect safely.
 *
 * A job's output is written by the pipeline's last kernel straight into a
 * ring slot (or a small inline buffer); the Result message then names the
 * slot, leased to the ring's connection until a SlotRelease, the lease
 * timeout, or the connection's end.
 *
 * Settings: the socket thread reads the current dvppd_live snapshot, taken
 * afresh at each wake-up after a reload; a video channel keeps the lease
 * timeout it was opened with.
 *
 * Ownership: dvppd_sock_start borrows the device and the settings holder
 * until dvppd_sock_stop returns.
 */
#ifndef DVPPD_SOCK_H
#define DVPPD_SOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "device/dvpp_device.h"
#include "device/dvpp_pipeline.h"
#include "dvppd_live.h"
#include "dvppd_config.h"
#include "ipc_ring.h"

typedef struct dvppd_sock dvppd_sock;

typedef struct dvppd_sock_env {
    const dvppd_config *cfg;     /* restart-only keys (path, mode, sizes) */
    dvpp_device *device;         /* a pipe device */
    dvppd_live *live;            /* limits, allow lists, AIPP configs, ... */
    int listen_fd;               /* a listening socket passed by systemd, or -1 */
    dvppd_trace_store *traces;   /* Submit.trace and captures; may be NULL; borrowed */
} dvppd_sock_env;

/* Listen on socket.path (or serve env->listen_fd, owned from the call on)
 * and start the epoll thread. DVPP_ESYS naming the path on failure. */
dvpp_status dvppd_sock_start(const dvppd_sock_env *env, dvppd_sock **out, dvpp_err *err);

/* For the service manager: the epoll thread's loop count (it wakes at
 * least every 100 ms, so a count that stands still means a hang) and the
 * open connections. Any thread. */
void dvppd_sock_status(dvppd_sock *s, uint64_t *turns, unsigned *connections);

/* What the console shows of the socket front end: gauges published by the
 * socket thread at its tick (so at most SOCK_TICK_MS old) and its
 * counters since the start. */
typedef struct dvppd_sock_totals {
    unsigned connections;        /* open now */
    uint64_t rings;              /* rings open, all connections */
    uint64_t slots;              /* their slots */
    uint64_t slots_leased;       /* of them, leased to a consumer now */
    uint64_t connections_total, submitted, failed, leases_expired, bad_releases,
        dropped, refused_peers;
} dvppd_sock_totals;

/* Fill @t (zeros for a NULL @s: the socket front end is off). Any thread. */
void dvppd_sock_totals_get(dvppd_sock *s, dvppd_sock_totals *t);

/* The path listened on ("" for an inherited socket). */
const char *dvppd_sock_path(const dvppd_sock *s);

/* Stop accepting connections and submissions (answered ECANCELED); jobs in
 * flight go on and their Results are still sent. */
void dvppd_sock_drain(dvppd_sock *s);

/* Wait up to @timeout_s for jobs in flight, then close every connection,
 * stop the thread, remove the socket file and free. NULL is a no-op. */
void dvppd_sock_stop(dvppd_sock *s, unsigned timeout_s);

/* --- HTTP deliveries into named rings --------------------------------------- */

/* Ring names: at most this many bytes, no '@'; unique per owner uid. */
#define DVPPD_RING_NAME_MAX 63

/* A slot of a named ring reserved for one HTTP job. */
typedef struct dvppd_ring_ticket {
    ipc_ring *ring;      /* referenced until deliver */
    uint32_t slot;
    uint64_t offset;     /* payload offset in the memfd */
    void *owner;         /* the ring's connection record (referenced) */
    uint32_t ring_id;
} dvppd_ring_ticket;

/* Reserve a slot of the ring @name names ("NAME", or "NAME@UID": the
 * ring NAME of the owner uid UID) for @bytes of output: its address into
 * *dest. Only rings whose owner allowed HTTP deliveries (RingOpen.http)
 * are reachable. Errors (field "ring"): DVPP_ENOTFOUND (no such ring
 * taking HTTP deliveries), DVPP_EBUSY (a bare NAME that owners of several
 * uids use), DVPP_EINVAL (not NAME or NAME@UID), DVPP_ELIMIT (the slot is
 * smaller than @bytes), DVPP_EAGAIN (the ring is full). Any thread. */
dvpp_status dvppd_sock_ring_reserve(dvppd_sock *s, const char *name, uint64_t bytes,
                                    dvppd_ring_ticket *t, uint8_t **dest,
                                    dvpp_err *err);

/* The job is done: on success lease the slot to the ring's consumer (its
 * generation into *generation) and send it an unsolicited Result
 * (origin "http"); on failure give the slot back. Drops the ticket's
 * references. DVPP_OK, or DVPP_ECANCELED when the ring closed meanwhile. */
dvpp_status dvppd_sock_ring_deliver(dvppd_sock *s, dvppd_ring_ticket *t, bool ok,
                                    const ipc_slot_meta *m, uint32_t *generation);

/* Fill @m from a tensor and the letterbox geometry. */
void dvppd_slot_meta_tensor(ipc_slot_meta *m, const dvpp_tensor *t, const dvpp_pipe_geom *g);

#endif
