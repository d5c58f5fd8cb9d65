/* ipc_ring: the producer side of a tensor ring (proto/dvpp_ring.h).
 *
 * The daemon creates the memfd, maps it read-write, writes the header,
 * seals it (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
 * F_SEAL_SEAL) and hands the consumer a read-only descriptor. Slot
 * ownership lives here, in the daemon's memory, never in the shared pages:
 *
 *   FREE --acquire--> WRITING --lease--> LEASED --release(gen)--> FREE
 *                        |--abort--> FREE      |--expire/close--> FREE
 *
 * Each lease gets a new generation; a release must name the slot's current
 * generation and is applied once. A closed ring refuses acquires, frees
 * its leases, and lets slots still being written finish (lease on a closed
 * ring frees the slot). The mapping lives until the last reference is
 * dropped (the owner's, and one per job writing into it).
 *
 * Thread-safety: every function may be called from any thread (one mutex
 * per ring); payload pointers stay valid while a reference is held.
 */
#ifndef IPC_RING_H
#define IPC_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dvpp_ring.h"

typedef struct ipc_ring ipc_ring;

/* What the descriptor of a filled slot says (proto/dvpp_ring.h). */
typedef struct ipc_slot_meta {
    uint32_t dtype, layout, ndim;
    int64_t shape[DVPP_RING_MAX_DIMS];
    uint64_t byte_length;
    double scale_x, scale_y, pad_x, pad_y;
} ipc_slot_meta;

/* A ring of @slots slots of @slot_bytes (rounded up to DVPP_RING_ALIGN);
 * @name is the memfd's name (for /proc). 0 or -errno (-EINVAL for 0
 * slots or sizes that overflow). The caller holds one reference. */
int ipc_ring_create(uint32_t slots, uint64_t slot_bytes, const char *name,
                    ipc_ring **out);

/* Generations drawn from one counter by every ring given it (so a
 * generation is never repeated across those rings: a front end gives all
 * its rings one, and a notice about a closed ring can never name a lease
 * of the ring opened after it). Zero-initialise; it must outlive the
 * leases of every ring using it (a closed ring draws no more). */
typedef struct ipc_ring_gens {
    _Atomic uint32_t next;       /* the last generation drawn */
} ipc_ring_gens;

/* Draw @r's generations from @g from now on (before the ring is shared
 * with other threads; NULL: the ring's own counter, starting at 1). */
void ipc_ring_share_generations(ipc_ring *r, ipc_ring_gens *g);

void ipc_ring_ref(ipc_ring *r);
/* Drop a reference; the last one unmaps and closes. NULL is a no-op. */
void ipc_ring_unref(ipc_ring *r);

/* A new read-only descriptor of the memfd for the consumer (close-on-exec;
 * the caller closes it once sent), or -errno. */
int ipc_ring_consumer_fd(ipc_ring *r);

uint32_t ipc_ring_slots(const ipc_ring *r);
uint64_t ipc_ring_slot_bytes(const ipc_ring *r);
uint64_t ipc_ring_map_bytes(const ipc_ring *r);
uint64_t ipc_ring_data_offset(const ipc_ring *r);
/* Offset of slot @i's payload in the memfd, and its address here. */
uint64_t ipc_ring_payload_offset(const ipc_ring *r, uint32_t i);
uint8_t *ipc_ring_payload(ipc_ring *r, uint32_t i);

/* Take a FREE slot for writing: 0 with *slot, -EAGAIN when none is free,
 * -EPIPE when the ring is closed. */
int ipc_ring_acquire(ipc_ring *r, uint32_t *slot);
/* The write failed: WRITING -> FREE. */
void ipc_ring_abort(ipc_ring *r, uint32_t slot);
/* The write finished: write the descriptor, WRITING -> LEASED with a new
 * generation, expiring at @expires_ms (a monotonic ms clock). 0 with
 * *generation, or -EPIPE when the ring was closed meanwhile (the slot is
 * freed). */
int ipc_ring_lease(ipc_ring *r, uint32_t slot, const ipc_slot_meta *m,
                   uint64_t expires_ms, uint32_t *generation);
/* The consumer gives it back: 0, or -EINVAL (no such slot, not leased, or
 * another generation: a stale or forged release). */
int ipc_ring_release(ipc_ring *r, uint32_t slot, uint32_t generation);
/* Take back leases expired at @now_ms; returns how many. */
unsigned ipc_ring_expire(ipc_ring *r, uint64_t now_ms);
/* Leased slots now. */
unsigned ipc_ring_leased(ipc_ring *r);
/* Wait up to @timeout_ms until a slot is FREE (a release, an expiry, an
 * abort): 0, -ETIMEDOUT, or -EPIPE once the ring is closed. Another thread
 * may take the slot first: acquire, and wait again if it is gone. */
int ipc_ring_wait_free(ipc_ring *r, unsigned timeout_ms);
/* Close: no more acquires; leases end (slots FREE). Idempotent. */
void ipc_ring_close(ipc_ring *r);
bool ipc_ring_closed(ipc_ring *r);

#endif
