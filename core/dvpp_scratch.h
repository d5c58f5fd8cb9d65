/* dvpp_scratch: per-worker scratch memory, grown on demand and reused.
 *
 * A worker (or a dvppctl run) owns one dvpp_scratch and passes it to every
 * kernel driver it calls; drivers ask for a slot of at least N bytes and
 * get the same block back call after call, so steady-state processing
 * allocates nothing (first-touch page faults are costly on VMs). Slots are
 * independent: a driver that needs two buffers at once uses two slots.
 * Not thread-safe: one scratch per thread.
 */
#ifndef DVPP_SCRATCH_H
#define DVPP_SCRATCH_H

#include <stddef.h>

#define DVPP_SCRATCH_SLOTS 8

typedef struct dvpp_scratch {
    void *block[DVPP_SCRATCH_SLOTS];
    size_t cap[DVPP_SCRATCH_SLOTS];
} dvpp_scratch;

/* Make @s empty (no allocation). */
void dvpp_scratch_init(dvpp_scratch *s);

/* Slot @slot (0..DVPP_SCRATCH_SLOTS-1) with at least @size bytes, 64-byte
 * aligned, contents unspecified; NULL on allocation failure (the old block
 * is then kept). The pointer stays valid until the slot is asked for more
 * or dvpp_scratch_fini(). */
void *dvpp_scratch_get(dvpp_scratch *s, int slot, size_t size);

/* Release every block. */
void dvpp_scratch_fini(dvpp_scratch *s);

/* Release the blocks larger than @keep bytes (their slots start empty
 * again); returns the bytes released. An idle worker's trim. */
size_t dvpp_scratch_trim(dvpp_scratch *s, size_t keep);

#endif
