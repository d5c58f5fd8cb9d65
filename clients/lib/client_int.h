/* client_int.h: libdvppclient internals shared by the files of clients/lib.
 *
 * One connection = one SOCK_SEQPACKET socket, one mutex and one condition
 * variable. Requests are sent without the mutex (a sendmsg on a seqpacket
 * socket is one atomic packet); answers are read by one thread at a time,
 * the leader, which parks every answer under its request's pending entry
 * (or in the notice queue for id 0) and then lets the next waiter lead.
 *
 * Ownership: a cl_pend belongs to the thread that registered it and waits
 * on it (only that thread frees it, with dvppc__forget); a cl_msg belongs
 * to the queue it is in until popped, then to the popper.
 */
#ifndef DVPPC_CLIENT_INT_H
#define DVPPC_CLIENT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvppclient.h"
#include "proto/dvpp.pb-c.h"

/* Every packet is at most max_inline + this many bytes (PROTOCOL.md). */
#define DVPPC_PACKET_SLACK (64u * 1024u)
/* A Welcome.max_inline above this is taken as a lie: the receive buffer is
 * sized from it. */
#define DVPPC_MAX_INLINE_CAP (256u * 1024u * 1024u)
/* Unsolicited notices kept for dvppc_wait(0); beyond this the newest are
 * dropped, counted and their slots given back at once (as the Python
 * client does), so a consumer that never asks cannot grow the queue
 * without bound nor hold the ring's slots until their leases expire. */
#define DVPPC_MAX_NOTICES 1024u
/* The handshake must finish within this, so connecting to a socket whose
 * owner never answers does not hang forever. */
#define DVPPC_HELLO_TIMEOUT_MS 10000

/* An answer parked for its waiter. */
typedef struct cl_msg {
    struct cl_msg *next;
    Dvpp__Envelope *env;    /* owned (dvpp__envelope__free_unpacked) */
    int fd;                 /* a RingOpened's memfd (owned), or -1 */
    dvppc_ring *ring;       /* a Result's ring as resolved on arrival */
    uint64_t ring_serial;   /* ... and its serial, re-checked on delivery */
} cl_msg;

/* A request waiting for its answer(s), or a video channel: a block of
 * ids whose answers all come here, in arrival order. */
typedef struct cl_pend {
    struct cl_pend *next;
    uint64_t id;            /* the request's Envelope.id (the ticket) */
    uint64_t last;          /* the block's last id (== id for a request) */
    bool waiting;           /* a thread is waiting on it now */
    cl_msg *head;           /* answers arrived, oldest first */
    cl_msg *tail;
} cl_pend;

struct dvppc_ring {
    dvppc_conn *conn;       /* the owner */
    struct dvppc_ring *next;/* in conn->rings */
    uint64_t serial;        /* unique per connection (ids may be reused) */
    uint32_t id;            /* RingOpened.ring */
    uint32_t slots;
    uint64_t slot_bytes;
    uint64_t data_offset;
    const uint8_t *base;    /* PROT_READ mapping of the whole memfd */
    size_t map_bytes;
    int fd;                 /* the read-only memfd */
    bool closing;           /* RingClose sent: results no longer map here */
};

struct dvppc_conn {
    int fd;                 /* the socket */
    pthread_mutex_t mu;     /* guards everything below */
    pthread_cond_t turn;    /* an answer was parked or the leader left */
    bool reading;           /* a leader is reading the socket */
    int broken;             /* 0, or the transport failure every call gets */
    dvppc_error broken_err;
    dvppc_error fatal;      /* an Error with id 0: why the daemon drops us */
    uint64_t next_id;       /* request ids, from 1 */
    uint64_t next_serial;   /* ring serials */
    dvppc_server_info info; /* immutable after dvppc_connect */
    size_t max_packet;      /* largest packet either side may send */
    uint8_t *rx;            /* the leader's receive buffer */
    size_t rx_cap;
    cl_pend *pend;          /* requests waiting for answers */
    cl_msg *notice_head;    /* unsolicited Results (id 0), oldest first */
    cl_msg *notice_tail;
    size_t notices;
    uint64_t notices_dropped; /* notices past DVPPC_MAX_NOTICES */
    dvppc_ring *rings;      /* open rings */
};

/* Fill @err (may be NULL) and return @status. */
int dvppc__fail(dvppc_error *err, int status, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Copy the connection's transport failure into @err; returns it. Lock
 * held. */
int dvppc__broken(dvppc_conn *c, dvppc_error *err);

/* Mark the transport failed (first failure wins). Lock held. */
void dvppc__break(dvppc_conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copy at most @cap - 1 bytes of @src (NULL = "") into @dst, NUL-ended. */
void dvppc__copy(char *dst, size_t cap, const char *src);

/* Register a new request: its id into *id. DVPPC_ENOMEM. Lock held. */
int dvppc__register(dvppc_conn *c, uint64_t *id, dvppc_error *err);

/* Register a block of @n ids (a video channel's requests): answers to
 * any of them are parked under the first, into *id. Lock held. */
int dvppc__register_block(dvppc_conn *c, uint64_t n, uint64_t *id, dvppc_error *err);

/* Find the registered request (or block) that @id belongs to. Lock held. */
cl_pend *dvppc__find(dvppc_conn *c, uint64_t id);

/* Unregister @id and drop answers still parked for it. Lock held. */
void dvppc__forget(dvppc_conn *c, uint64_t id);

/* Wait for the next answer to @id (0: the next unsolicited notice) for up
 * to @timeout_ms (-1 forever): the message into *out (caller owns, free
 * with dvppc__msg_free). DVPPC_ETIMEDOUT, or the transport failure. Lock
 * held (released while waiting). */
int dvppc__await(dvppc_conn *c, uint64_t id, int timeout_ms, cl_msg **out,
                 dvppc_error *err);

/* Put an answer back at the head of @id's queue (it is not the caller's
 * to take now). Lock held. */
void dvppc__unpop(dvppc_conn *c, uint64_t id, cl_msg *m);

void dvppc__msg_free(cl_msg *m);

/* Pack @env (its id and protocol set by the caller) and send it with
 * @nfds borrowed descriptors. DVPPC_ELIMIT when the packet is larger than
 * the protocol allows, DVPPC_ENOMEM, the transport failure. Takes the lock
 * only to record a failure; call without it. */
int dvppc__send(dvppc_conn *c, const Dvpp__Envelope *env, const int *fds, int nfds,
                dvppc_error *err);

/* Send @env as a new request and wait forever for its one answer (caller
 * owns it). Call without the lock. */
int dvppc__call(dvppc_conn *c, Dvpp__Envelope *env, cl_msg **answer, dvppc_error *err);

/* The body an answer must have: 0 when it has @want, the daemon's status
 * (and detail in @err) for an Error, DVPPC_EIO for anything else. */
int dvppc__expect(const cl_msg *m, Dvpp__Envelope__BodyCase want, dvppc_error *err);

/* Fill @err from the daemon's Error; returns its status (always < 0). */
int dvppc__from_error(const Dvpp__Error *e, dvppc_error *err);

/* The id of @r, an open ring of @c (0 for a NULL ring); DVPPC_EINVAL for
 * a ring of another connection or one closing. Call without the lock. */
int dvppc__ring_id(dvppc_conn *c, const dvppc_ring *r, uint32_t *id, dvppc_error *err);

/* Find the open (not closing) ring with id @id. Lock held. */
dvppc_ring *dvppc__ring_by_id(dvppc_conn *c, uint32_t id);

/* True when @r (compared by address and serial) is still open on @c.
 * Lock held. */
bool dvppc__ring_alive(dvppc_conn *c, const dvppc_ring *r, uint64_t serial);

/* Unmap and free every ring of @c (the connection is going away). */
void dvppc__rings_free(dvppc_conn *c);

/* Fill @res from an answer to a job (a Result, or an Error refusing it).
 * Returns res->status. Lock held (rings are looked up); takes ownership
 * of @m. */
int dvppc__result_fill(dvppc_conn *c, cl_msg *m, dvppc_result *res, dvppc_error *err);

/* Fill @f from a VideoFrame (its Result is a ring slot). Returns 0 or
 * the failure (the slot facts are kept so dvppc_release gives the slot
 * back). Lock held; takes ownership of @m. */
int dvppc__frame_fill(dvppc_conn *c, cl_msg *m, dvppc_frame *f, dvppc_error *err);

/* Send a SlotRelease for (ring id, slot, generation), fire and forget. */
void dvppc__release_slot(dvppc_conn *c, uint32_t ring, uint32_t slot, uint32_t generation);

#endif
