/* ipc_ring: memfd rings with leases kept in the daemon's memory. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#endif
#include "ipc_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the ring layout is little-endian and written natively");

typedef enum slot_state { SLOT_FREE, SLOT_WRITING, SLOT_LEASED } slot_state;

typedef struct slot {
    slot_state state;
    uint32_t generation;
    uint64_t expires_ms;
} slot;

struct ipc_ring {
    pthread_mutex_t mu;
    pthread_cond_t freed;          /* a slot went FREE, or the ring closed */
    atomic_uint refs;
    int fd;
    uint8_t *base;                 /* read-write mapping, map_bytes */
    uint64_t map_bytes, slot_bytes, data_offset;
    uint32_t nslots;
    uint32_t next_gen;
    ipc_ring_gens *gens;           /* shared generations, or NULL */
    bool closed;
    slot *slots;
};

static uint64_t align_up(uint64_t v)
{
    return (v + DVPP_RING_ALIGN - 1) / DVPP_RING_ALIGN * DVPP_RING_ALIGN;
}

/* Sizes of the layout, overflow-checked. */
static int layout(uint32_t slots, uint64_t slot_bytes, uint64_t *sb, uint64_t *data,
                  uint64_t *total)
{
    if (slots == 0 || slot_bytes == 0 || slot_bytes > (UINT64_C(1) << 40) ||
        slots > (1u << 20))
        return -EINVAL;
    *sb = align_up(slot_bytes);
    *data = align_up(dvpp_ring_desc_offset(slots));
    if (*sb > (UINT64_MAX - *data) / slots)
        return -EINVAL;
    *total = *data + *sb * slots;
    return 0;
}

static void write_header(ipc_ring *r)
{
    dvpp_ring_header h;

    memset(&h, 0, sizeof(h));
    h.magic = DVPP_RING_MAGIC;
    h.version = DVPP_RING_VERSION;
    h.header_bytes = sizeof(h);
    h.slot_count = r->nslots;
    h.desc_bytes = sizeof(dvpp_ring_slot);
    h.slot_bytes = r->slot_bytes;
    h.data_offset = r->data_offset;
    h.map_bytes = r->map_bytes;
    memcpy(r->base, &h, sizeof(h));
    for (uint32_t i = 0; i < r->nslots; i++) {
        dvpp_ring_slot d;
        memset(&d, 0, sizeof(d));
        d.payload_offset = ipc_ring_payload_offset(r, i);
        memcpy(r->base + dvpp_ring_desc_offset(i), &d, sizeof(d));
    }
}

int ipc_ring_create(uint32_t slots, uint64_t slot_bytes, const char *name,
                    ipc_ring **out)
{
    uint64_t sb, data, total;
    ipc_ring *r;
    int e = layout(slots, slot_bytes, &sb, &data, &total);

    *out = NULL;
    if (e)
        return e;
    r = calloc(1, sizeof(*r));
    if (!r)
        return -ENOMEM;
    r->slots = calloc(slots, sizeof(*r->slots));
    r->fd = memfd_create(name ? name : "dvpp-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (!r->slots || r->fd < 0) {
        e = r->slots ? -errno : -ENOMEM;
        goto fail;
    }
    if (ftruncate(r->fd, (off_t)total) != 0) {
        e = -errno;
        goto fail;
    }
    r->base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    if (r->base == MAP_FAILED) {
        r->base = NULL;
        e = -errno;
        goto fail;
    }
    /* Read-only for everyone from now on (a consumer reopening the fd via
     * /proc for writing is refused by permissions, root aside), and sealed
     * after the daemon's own writable mapping exists: FUTURE_WRITE stops
     * every later writable mapping and write(), root's too. */
    fchmod(r->fd, 0400);
    if (fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
                                      F_SEAL_SEAL) != 0) {
        e = -errno;
        goto fail;
    }
    r->map_bytes = total;
    r->slot_bytes = sb;
    r->data_offset = data;
    r->nslots = slots;
    r->next_gen = 1;
    pthread_mutex_init(&r->mu, NULL);
    {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&r->freed, &ca);
        pthread_condattr_destroy(&ca);
    }
    atomic_init(&r->refs, 1);
    write_header(r);
    *out = r;
    return 0;

fail:
    if (r->base)
        munmap(r->base, total);
    if (r->fd >= 0)
        close(r->fd);
    free(r->slots);
    free(r);
    return e;
}

void ipc_ring_share_generations(ipc_ring *r, ipc_ring_gens *g)
{
    r->gens = g;
}

/* The next generation (never 0: 0 names no lease); under r->mu. */
static uint32_t next_generation(ipc_ring *r)
{
    uint32_t gen;

    if (r->gens) {
        do
            gen = atomic_fetch_add(&r->gens->next, 1) + 1;
        while (gen == 0);
        return gen;
    }
    gen = r->next_gen++;
    if (r->next_gen == 0)
        r->next_gen = 1;
    return gen;
}

void ipc_ring_ref(ipc_ring *r)
{
    atomic_fetch_add(&r->refs, 1);
}

void ipc_ring_unref(ipc_ring *r)
{
    if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
        return;
    munmap(r->base, r->map_bytes);
    close(r->fd);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->freed);
    free(r->slots);
    free(r);
}

int ipc_ring_consumer_fd(ipc_ring *r)
{
    char path[64];
    int fd;

    /* A read-only file description: the consumer cannot even ask for
     * write access; the seals stop it anyway if /proc is not there. */
    snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 0);
    return fd < 0 ? -errno : fd;
}

uint32_t ipc_ring_slots(const ipc_ring *r) { return r->nslots; }
uint64_t ipc_ring_slot_bytes(const ipc_ring *r) { return r->slot_bytes; }
uint64_t ipc_ring_map_bytes(const ipc_ring *r) { return r->map_bytes; }
uint64_t ipc_ring_data_offset(const ipc_ring *r) { return r->data_offset; }

uint64_t ipc_ring_payload_offset(const ipc_ring *r, uint32_t i)
{
    return r->data_offset + (uint64_t)i * r->slot_bytes;
}

uint8_t *ipc_ring_payload(ipc_ring *r, uint32_t i)
{
    return r->base + ipc_ring_payload_offset(r, i);
}

int ipc_ring_acquire(ipc_ring *r, uint32_t *slot_out)
{
    int e = -EAGAIN;

    pthread_mutex_lock(&r->mu);
    if (r->closed) {
        e = -EPIPE;
    } else {
        for (uint32_t i = 0; i < r->nslots; i++)
            if (r->slots[i].state == SLOT_FREE) {
                r->slots[i].state = SLOT_WRITING;
                *slot_out = i;
                e = 0;
                break;
            }
    }
    pthread_mutex_unlock(&r->mu);
    return e;
}

void ipc_ring_abort(ipc_ring *r, uint32_t i)
{
    pthread_mutex_lock(&r->mu);
    if (i < r->nslots && r->slots[i].state == SLOT_WRITING) {
        r->slots[i].state = SLOT_FREE;
        pthread_cond_broadcast(&r->freed);
    }
    pthread_mutex_unlock(&r->mu);
}

/* The slot descriptor in shared memory (status last: readers that poll it
 * see a complete descriptor). */
static void write_desc(ipc_ring *r, uint32_t i, const ipc_slot_meta *m, uint32_t gen)
{
    dvpp_ring_slot *d = (dvpp_ring_slot *)(r->base + dvpp_ring_desc_offset(i));

    d->sequence++;
    d->generation = gen;
    d->dtype = m->dtype;
    d->layout = m->layout;
    d->ndim = m->ndim;
    memcpy(d->shape, m->shape, sizeof(d->shape));
    d->byte_length = m->byte_length;
    d->payload_offset = ipc_ring_payload_offset(r, i);
    d->scale_x = m->scale_x, d->scale_y = m->scale_y;
    d->pad_x = m->pad_x, d->pad_y = m->pad_y;
    /* release: a reader that sees READY sees the fields above */
    __atomic_store_n(&d->status, DVPP_RING_SLOT_READY, __ATOMIC_RELEASE);
}

int ipc_ring_lease(ipc_ring *r, uint32_t i, const ipc_slot_meta *m, uint64_t expires_ms,
                   uint32_t *generation)
{
    int e = 0;

    pthread_mutex_lock(&r->mu);
    if (i >= r->nslots || r->slots[i].state != SLOT_WRITING) {
        e = -EINVAL;
    } else if (r->closed) {
        r->slots[i].state = SLOT_FREE;
        pthread_cond_broadcast(&r->freed);
        e = -EPIPE;
    } else {
        uint32_t gen = next_generation(r);
        write_desc(r, i, m, gen);
        r->slots[i] = (slot){SLOT_LEASED, gen, expires_ms};
        *generation = gen;
    }
    pthread_mutex_unlock(&r->mu);
    return e;
}

static void free_slot(ipc_ring *r, uint32_t i)
{
    dvpp_ring_slot *d = (dvpp_ring_slot *)(r->base + dvpp_ring_desc_offset(i));

    r->slots[i].state = SLOT_FREE;
    __atomic_store_n(&d->status, DVPP_RING_SLOT_FREE, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&r->freed);
}

int ipc_ring_release(ipc_ring *r, uint32_t i, uint32_t generation)
{
    int e = -EINVAL;

    pthread_mutex_lock(&r->mu);
    if (i < r->nslots && r->slots[i].state == SLOT_LEASED &&
        r->slots[i].generation == generation) {
        free_slot(r, i);
        e = 0;
    }
    pthread_mutex_unlock(&r->mu);
    return e;
}

unsigned ipc_ring_expire(ipc_ring *r, uint64_t now_ms)
{
    unsigned n = 0;

    pthread_mutex_lock(&r->mu);
    for (uint32_t i = 0; i < r->nslots; i++)
        if (r->slots[i].state == SLOT_LEASED && r->slots[i].expires_ms <= now_ms) {
            free_slot(r, i);
            n++;
        }
    pthread_mutex_unlock(&r->mu);
    return n;
}

unsigned ipc_ring_leased(ipc_ring *r)
{
    unsigned n = 0;

    pthread_mutex_lock(&r->mu);
    for (uint32_t i = 0; i < r->nslots; i++)
        n += r->slots[i].state == SLOT_LEASED;
    pthread_mutex_unlock(&r->mu);
    return n;
}

static bool has_free(const ipc_ring *r)
{
    for (uint32_t i = 0; i < r->nslots; i++)
        if (r->slots[i].state == SLOT_FREE)
            return true;
    return false;
}

int ipc_ring_wait_free(ipc_ring *r, unsigned timeout_ms)
{
    struct timespec until;
    int e = 0;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L)
        until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&r->mu);
    while (!r->closed && !has_free(r) && e == 0)
        e = pthread_cond_timedwait(&r->freed, &r->mu, &until);
    e = r->closed ? -EPIPE : has_free(r) ? 0 : -ETIMEDOUT;
    pthread_mutex_unlock(&r->mu);
    return e;
}

void ipc_ring_close(ipc_ring *r)
{
    pthread_mutex_lock(&r->mu);
    r->closed = true;
    pthread_cond_broadcast(&r->freed);
    for (uint32_t i = 0; i < r->nslots; i++)
        if (r->slots[i].state == SLOT_LEASED)
            free_slot(r, i);
    pthread_mutex_unlock(&r->mu);
}

bool ipc_ring_closed(ipc_ring *r)
{
    bool c;

    pthread_mutex_lock(&r->mu);
    c = r->closed;
    pthread_mutex_unlock(&r->mu);
    return c;
}
