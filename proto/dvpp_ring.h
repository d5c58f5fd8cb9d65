/* dvpp_ring.h: the layout of a dvppd tensor ring (protocol version 1).
 *
 * A ring is one memfd the daemon creates, maps read-write, seals
 * (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) and
 * sends to the consumer, who can only map it read-only:
 *
 *   offset 0                 dvpp_ring_header (64 bytes)
 *   offset 64                dvpp_ring_slot[slot_count] (128 bytes each)
 *   offset data_offset       slot 0 payload, slot 1 payload, ...
 *                            (slot i at data_offset + i * slot_bytes;
 *                             data_offset and slot_bytes multiples of 4096)
 *
 * Every field is little-endian with the fixed size and offset asserted
 * below, so any language can read it (Python: struct/numpy over an mmap).
 * The daemon writes a slot's descriptor after the payload and before the
 * Result message that names the slot; the Result carries the same facts
 * and is authoritative. Slot ownership is not in this memory: the daemon
 * keeps leases in its own memory, and a consumer gives a slot back with a
 * SlotRelease message (proto/PROTOCOL.md).
 *
 * Plain C11, no dependency: clients include it as is.
 */
#ifndef DVPP_RING_H
#define DVPP_RING_H

#include <stddef.h>
#include <stdint.h>

#define DVPP_RING_MAGIC UINT64_C(0x474e495250505644) /* "DVPPRING" */
#define DVPP_RING_VERSION 1u
#define DVPP_RING_ALIGN 4096u
#define DVPP_RING_MAX_DIMS 5

/* dvpp_ring_slot.status */
#define DVPP_RING_SLOT_FREE 0u    /* never written, or given back */
#define DVPP_RING_SLOT_READY 1u   /* holds a result, leased to the consumer */

/* dvpp_ring_slot.dtype (as dvpp_dtype) */
#define DVPP_RING_DTYPE_U8 0u
#define DVPP_RING_DTYPE_I8 1u
#define DVPP_RING_DTYPE_F16 2u
#define DVPP_RING_DTYPE_F32 3u

/* dvpp_ring_slot.layout (as dvpp_layout; IMAGE is an encoded or raw image) */
#define DVPP_RING_LAYOUT_NCHW 0u
#define DVPP_RING_LAYOUT_NHWC 1u
#define DVPP_RING_LAYOUT_NC1HWC0 2u
#define DVPP_RING_LAYOUT_IMAGE 255u

typedef struct dvpp_ring_header {
    uint64_t magic;          /* DVPP_RING_MAGIC */
    uint32_t version;        /* DVPP_RING_VERSION */
    uint32_t header_bytes;   /* sizeof(dvpp_ring_header) */
    uint32_t slot_count;
    uint32_t desc_bytes;     /* sizeof(dvpp_ring_slot) */
    uint64_t slot_bytes;     /* payload bytes per slot */
    uint64_t data_offset;    /* first payload byte */
    uint64_t map_bytes;      /* the whole memfd */
    uint8_t reserved[16];
} dvpp_ring_header;

typedef struct dvpp_ring_slot {
    uint64_t sequence;       /* results written into this slot so far */
    uint32_t generation;     /* of the current lease (SlotRelease names it) */
    uint32_t status;         /* DVPP_RING_SLOT_* */
    uint32_t dtype;          /* DVPP_RING_DTYPE_* */
    uint32_t layout;         /* DVPP_RING_LAYOUT_* */
    uint32_t ndim;           /* 0..DVPP_RING_MAX_DIMS */
    uint32_t reserved0;
    int64_t shape[DVPP_RING_MAX_DIMS]; /* stored shape, outermost first */
    uint64_t byte_length;    /* payload bytes in use */
    uint64_t payload_offset; /* from the start of the memfd */
    double scale_x, scale_y; /* letterbox: source = (output - pad) / scale */
    double pad_x, pad_y;
    uint8_t reserved1[8];
} dvpp_ring_slot;

_Static_assert(sizeof(dvpp_ring_header) == 64, "ring header is 64 bytes");
_Static_assert(offsetof(dvpp_ring_header, slot_count) == 16, "header layout");
_Static_assert(offsetof(dvpp_ring_header, slot_bytes) == 24, "header layout");
_Static_assert(offsetof(dvpp_ring_header, data_offset) == 32, "header layout");
_Static_assert(offsetof(dvpp_ring_header, map_bytes) == 40, "header layout");
_Static_assert(sizeof(dvpp_ring_slot) == 128, "slot descriptor is 128 bytes");
_Static_assert(offsetof(dvpp_ring_slot, generation) == 8, "slot layout");
_Static_assert(offsetof(dvpp_ring_slot, shape) == 32, "slot layout");
_Static_assert(offsetof(dvpp_ring_slot, byte_length) == 72, "slot layout");
_Static_assert(offsetof(dvpp_ring_slot, payload_offset) == 80, "slot layout");
_Static_assert(offsetof(dvpp_ring_slot, scale_x) == 88, "slot layout");
_Static_assert(offsetof(dvpp_ring_slot, pad_y) == 112, "slot layout");

/* Offset of slot @i's descriptor. */
static inline uint64_t dvpp_ring_desc_offset(uint32_t i)
{
    return sizeof(dvpp_ring_header) + (uint64_t)i * sizeof(dvpp_ring_slot);
}

#endif
