/* client_ring.c: rings (RingOpen, the read-only mapping, RingClose), the
 * results that point into them, and slot releases.
 *
 * The daemon is trusted to run the pipeline, not to be right about memory:
 * every size it announces is checked against the memfd and the mapping
 * before anything is read, so a daemon that lies (or a bug in it) cannot
 * make this library read outside the mapping or fault on a short file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* F_GET_SEALS, F_SEAL_* */
#endif
#include "client_int.h"

#include <fcntl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dvpp_ring.h"

/* The seals PROTOCOL.md promises. SHRINK is what keeps our mapping from
 * faulting (SIGBUS) under us; the others are the promise that the bytes
 * are the daemon's alone. */
#define RING_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)

/* --- lookups -------------------------------------------------------------------- */

dvppc_ring *dvppc__ring_by_id(dvppc_conn *c, uint32_t id)
{
    for (dvppc_ring *r = c->rings; r; r = r->next)
        if (r->id == id && !r->closing)
            return r;
    return NULL;
}

bool dvppc__ring_alive(dvppc_conn *c, const dvppc_ring *r, uint64_t serial)
{
    for (dvppc_ring *x = c->rings; x; x = x->next)
        if (x == r)
            return x->serial == serial && !x->closing;
    return false;
}

static void ring_unmap(dvppc_ring *r)
{
    if (r->base)
        munmap((void *)r->base, r->map_bytes);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

void dvppc__rings_free(dvppc_conn *c)
{
    while (c->rings) {
        dvppc_ring *r = c->rings;
        c->rings = r->next;
        ring_unmap(r);
    }
}

/* --- opening -------------------------------------------------------------------- */

/* The geometry RingOpened announces, checked for consistency before it is
 * trusted: slots as asked, aligned sizes, descriptors before the payloads,
 * every payload inside map_bytes, all without overflow. */
static int check_opened(const Dvpp__RingOpened *o, uint32_t slots, uint64_t slot_bytes,
                        dvppc_error *err)
{
    uint64_t payloads;

    if (o->slots != slots || o->slot_bytes < slot_bytes || o->slot_bytes % DVPP_RING_ALIGN ||
        o->data_offset % DVPP_RING_ALIGN || o->data_offset < dvpp_ring_desc_offset(slots))
        return dvppc__fail(err, DVPPC_EIO, "ring",
                           "RingOpened geometry (%u slots of %llu at %llu) does not match "
                           "the request (%u of %llu)",
                           o->slots, (unsigned long long)o->slot_bytes,
                           (unsigned long long)o->data_offset, slots,
                           (unsigned long long)slot_bytes);
    if (__builtin_mul_overflow(o->slot_bytes, (uint64_t)slots, &payloads) ||
        __builtin_add_overflow(payloads, o->data_offset, &payloads) ||
        payloads > o->map_bytes || o->map_bytes > SIZE_MAX)
        return dvppc__fail(err, DVPPC_EIO, "ring",
                           "RingOpened map_bytes %llu cannot hold its slots",
                           (unsigned long long)o->map_bytes);
    return 0;
}

/* The memfd must be as large as announced (a mapping past the end of the
 * file faults on access) and sealed so it stays so. */
static int check_memfd(int fd, uint64_t map_bytes, dvppc_error *err)
{
    struct stat st;
    int seals;

    if (fstat(fd, &st) != 0)
        return dvppc__fail(err, DVPPC_ESYS, "ring", "fstat of the ring: %s",
                           strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size < map_bytes)
        return dvppc__fail(err, DVPPC_EIO, "ring",
                           "the ring's memfd holds %lld bytes, RingOpened says %llu",
                           (long long)st.st_size, (unsigned long long)map_bytes);
    seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & RING_SEALS) != RING_SEALS)
        return dvppc__fail(err, DVPPC_EIO, "ring",
                           "the ring's memfd is not sealed (seals 0x%x)", seals);
    return 0;
}

/* The header in the shared pages must tell the same story as RingOpened.
 * Read once into a local copy: the daemon may write the page meanwhile. */
static int check_header(const uint8_t *base, const Dvpp__RingOpened *o, dvppc_error *err)
{
    dvpp_ring_header h;

    memcpy(&h, base, sizeof(h));
    if (h.magic != DVPP_RING_MAGIC || h.version != DVPP_RING_VERSION)
        return dvppc__fail(err, DVPPC_EIO, "ring",
                           "ring header magic %#llx version %u (want %#llx version %u)",
                           (unsigned long long)h.magic, h.version,
                           (unsigned long long)DVPP_RING_MAGIC, DVPP_RING_VERSION);
    if (h.header_bytes != sizeof(dvpp_ring_header) ||
        h.desc_bytes != sizeof(dvpp_ring_slot) || h.slot_count != o->slots ||
        h.slot_bytes != o->slot_bytes || h.data_offset != o->data_offset ||
        h.map_bytes != o->map_bytes)
        return dvppc__fail(err, DVPPC_EIO, "ring",
                           "ring header (%u slots of %llu at %llu, %llu bytes) disagrees "
                           "with RingOpened",
                           h.slot_count, (unsigned long long)h.slot_bytes,
                           (unsigned long long)h.data_offset,
                           (unsigned long long)h.map_bytes);
    return 0;
}

/* Map the ring a checked RingOpened describes; takes ownership of @fd. */
static int ring_map(dvppc_conn *c, const Dvpp__RingOpened *o, int fd, dvppc_ring **out,
                    dvppc_error *err)
{
    dvppc_ring *r;
    void *base;
    int st;

    st = check_memfd(fd, o->map_bytes, err);
    if (st)
        goto err_close;
    base = mmap(NULL, (size_t)o->map_bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        st = dvppc__fail(err, DVPPC_ESYS, "ring", "mmap of %llu bytes: %s",
                         (unsigned long long)o->map_bytes, strerror(errno));
        goto err_close;
    }
    st = check_header(base, o, err);
    if (st)
        goto err_unmap;
    r = calloc(1, sizeof(*r));
    if (!r) {
        st = dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for a ring");
        goto err_unmap;
    }
    r->conn = c;
    r->id = o->ring;
    r->slots = o->slots;
    r->slot_bytes = o->slot_bytes;
    r->data_offset = o->data_offset;
    r->base = base;
    r->map_bytes = (size_t)o->map_bytes;
    r->fd = fd;
    *out = r;
    return 0;

err_unmap:
    munmap(base, (size_t)o->map_bytes);
err_close:
    close(fd);
    return st;
}

/* Tell the daemon to drop a ring we will not use (its Ack is ignored). */
static void ring_drop(dvppc_conn *c, uint32_t id)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__RingClose rc = DVPP__RING_CLOSE__INIT;

    pthread_mutex_lock(&c->mu);
    env.id = c->next_id++;
    pthread_mutex_unlock(&c->mu);
    env.protocol = DVPPC_PROTOCOL;
    env.body_case = DVPP__ENVELOPE__BODY_RING_CLOSE;
    env.ring_close = &rc;
    rc.ring = id;
    dvppc__send(c, &env, NULL, 0, NULL);
}

int dvppc_ring_open(dvppc_conn *c, const char *name, uint32_t slots, uint64_t slot_bytes,
                    dvppc_ring **out, dvppc_error *err)
{
    return dvppc_ring_open_flags(c, name, slots, slot_bytes, 0, out, err);
}

int dvppc_ring_open_flags(dvppc_conn *c, const char *name, uint32_t slots,
                          uint64_t slot_bytes, unsigned flags, dvppc_ring **out,
                          dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__RingOpen ro = DVPP__RING_OPEN__INIT;
    const Dvpp__RingOpened *o;
    uint64_t rounded;
    cl_msg *m = NULL;
    dvppc_ring *r = NULL;
    int st;

    if (!c || !out)
        return dvppc__fail(err, DVPPC_EINVAL, NULL, "no connection or no place for the ring");
    *out = NULL;
    if (!slots || !slot_bytes || slot_bytes > UINT64_MAX - (DVPP_RING_ALIGN - 1))
        return dvppc__fail(err, DVPPC_EINVAL, slots ? "slot_bytes" : "slots",
                           "a ring needs slots and slot bytes (%u of %llu)", slots,
                           (unsigned long long)slot_bytes);
    rounded = (slot_bytes + DVPP_RING_ALIGN - 1) / DVPP_RING_ALIGN * DVPP_RING_ALIGN;
    ro.slots = slots;
    ro.slot_bytes = slot_bytes;
    ro.name = (char *)(name ? name : "");
    ro.http = (flags & DVPPC_RING_HTTP) != 0;
    env.body_case = DVPP__ENVELOPE__BODY_RING_OPEN;
    env.ring_open = &ro;
    st = dvppc__call(c, &env, &m, err);
    if (st)
        goto out;
    st = dvppc__expect(m, DVPP__ENVELOPE__BODY_RING_OPENED, err);
    if (st)
        goto out;
    o = m->env->ring_opened;
    st = check_opened(o, slots, rounded, err);
    if (!st) {
        st = ring_map(c, o, m->fd, &r, err);
        m->fd = -1; /* ring_map took it */
    }
    if (st) {
        ring_drop(c, o->ring);
        goto out;
    }
    pthread_mutex_lock(&c->mu);
    r->serial = c->next_serial++;
    r->next = c->rings;
    c->rings = r;
    pthread_mutex_unlock(&c->mu);
    *out = r;
out:
    dvppc__msg_free(m);
    return st;
}

void dvppc_ring_close(dvppc_ring *r)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__RingClose rc = DVPP__RING_CLOSE__INIT;
    dvppc_conn *c;
    cl_msg *m = NULL;

    if (!r)
        return;
    c = r->conn;
    /* from now on results naming it are delivered with data NULL */
    pthread_mutex_lock(&c->mu);
    r->closing = true;
    pthread_mutex_unlock(&c->mu);
    /* wait for the Ack, so the daemon counts the ring closed (max_rings)
     * before the caller opens another; a failure changes nothing here */
    rc.ring = r->id;
    env.body_case = DVPP__ENVELOPE__BODY_RING_CLOSE;
    env.ring_close = &rc;
    dvppc__call(c, &env, &m, NULL);
    dvppc__msg_free(m);
    pthread_mutex_lock(&c->mu);
    for (dvppc_ring **pp = &c->rings; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    pthread_mutex_unlock(&c->mu);
    ring_unmap(r);
}

uint32_t dvppc_ring_id(const dvppc_ring *r)
{
    return r ? r->id : 0;
}

uint32_t dvppc_ring_slots(const dvppc_ring *r)
{
    return r ? r->slots : 0;
}

uint64_t dvppc_ring_slot_bytes(const dvppc_ring *r)
{
    return r ? r->slot_bytes : 0;
}

const void *dvppc_ring_base(const dvppc_ring *r, size_t *map_bytes)
{
    if (map_bytes)
        *map_bytes = r ? r->map_bytes : 0;
    return r ? r->base : NULL;
}

int dvppc_ring_fd(const dvppc_ring *r)
{
    return r ? r->fd : -1;
}

/* --- results -------------------------------------------------------------------- */

/* True when [@off, @off + @len) lies inside slot @slot's payload: what
 * keeps a lying Result from pointing us anywhere else in (or out of) the
 * mapping. check_opened made data_offset + slots * slot_bytes fit. */
static bool slot_holds(const dvppc_ring *r, uint32_t slot, uint64_t off, uint64_t len)
{
    uint64_t start;

    if (slot >= r->slots || len > r->slot_bytes)
        return false;
    start = r->data_offset + (uint64_t)slot * r->slot_bytes;
    return off >= start && off - start <= r->slot_bytes - len;
}

static int meta_fill(dvppc_meta *d, const Dvpp__TensorMeta *s, dvppc_error *err)
{
    if (!s)
        return 0;
    if (s->n_shape > sizeof(d->shape) / sizeof(d->shape[0]))
        return dvppc__fail(err, DVPPC_EIO, "meta",
                           "dvppd sent a %zu-dimensional shape (at most 5)", s->n_shape);
    dvppc__copy(d->dtype, sizeof(d->dtype), s->dtype);
    dvppc__copy(d->layout, sizeof(d->layout), s->layout);
    dvppc__copy(d->format, sizeof(d->format), s->format);
    d->ndim = (int)s->n_shape;
    for (size_t i = 0; i < s->n_shape; i++)
        d->shape[i] = s->shape[i];
    d->bytes = s->bytes;
    d->width = s->width;
    d->height = s->height;
    d->width_stride = s->width_stride;
    d->height_stride = s->height_stride;
    return 0;
}

/* The parts of a successful Result @r (of the packet with id @env_id)
 * that need no ring. */
static int plain_fill(dvppc_result *res, uint64_t env_id, const Dvpp__Result *r,
                      dvppc_error *err)
{
    if (r->geom) {
        res->scale_x = r->geom->scale_x;
        res->scale_y = r->geom->scale_y;
        res->pad_x = r->geom->pad_x;
        res->pad_y = r->geom->pad_y;
    }
    if (r->timings) {
        res->queue_us = r->timings->queue_us;
        res->decode_us = r->timings->decode_us;
        res->vpc_us = r->timings->vpc_us;
        res->post_us = r->timings->post_us;
        res->total_us = r->timings->total_us;
    }
    res->batch = r->batch;
    res->from_http = env_id == 0 || (r->origin && !strcmp(r->origin, "http"));
    if (r->n_item_status) {
        if (r->n_item_status > UINT32_MAX)
            return dvppc__fail(err, DVPPC_EIO, "item_status", "too many item statuses");
        res->item_status = malloc(r->n_item_status * sizeof(int32_t));
        if (!res->item_status)
            return dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for item statuses");
        memcpy(res->item_status, r->item_status, r->n_item_status * sizeof(int32_t));
        res->items = (uint32_t)r->n_item_status;
    }
    return meta_fill(&res->meta, r->meta, err);
}

static uint64_t dtype_size(const char *dtype)
{
    if (!dtype || !strcmp(dtype, "uint8") || !strcmp(dtype, "int8"))
        return 1;
    if (!strcmp(dtype, "float16"))
        return 2;
    if (!strcmp(dtype, "float32"))
        return 4;
    return 0;
}

/* A ring payload's length: meta.bytes, or, where a daemon leaves it 0,
 * the shape's elements times the dtype's size (the Python client does the
 * same). 0 when neither tells. The result is bounds-checked anyway. */
static uint64_t payload_bytes(const Dvpp__TensorMeta *m)
{
    uint64_t n;

    if (!m)
        return 0;
    if (m->bytes || !m->n_shape)
        return m->bytes;
    n = dtype_size(m->dtype);
    for (size_t i = 0; i < m->n_shape; i++)
        if (m->shape[i] < 0 || __builtin_mul_overflow(n, (uint64_t)m->shape[i], &n))
            return 0;
    return n;
}

/* Point @res at the slot of @r (the Result in @m), if its ring is still
 * open. The slot facts are kept even when the bounds check fails, so
 * dvppc_release gives it back. */
static int ring_fill(dvppc_conn *c, const cl_msg *m, const Dvpp__Result *r,
                     dvppc_result *res, dvppc_error *err)
{
    dvppc_ring *ring = m->ring;
    uint64_t len = payload_bytes(r->meta);

    res->slot = r->slot;
    res->generation = r->generation;
    if (!ring || !dvppc__ring_alive(c, ring, m->ring_serial))
        return 0; /* closed before collected: the daemon freed the slot */
    res->ring = ring;
    res->priv_ = (void *)(uintptr_t)m->ring_serial;
    if (!slot_holds(ring, r->slot, r->offset, len) || len > SIZE_MAX)
        return dvppc__fail(err, DVPPC_EIO, "offset",
                           "dvppd named %llu bytes at %llu in slot %u, outside the slot",
                           (unsigned long long)len, (unsigned long long)r->offset, r->slot);
    res->data = ring->base + r->offset;
    res->len = (size_t)len;
    res->meta.bytes = len;
    return 0;
}

static int result_status(dvppc_result *res, int st, dvppc_error *err)
{
    res->status = st;
    if (st && err)
        *err = res->error;
    return st;
}

int dvppc__result_fill(dvppc_conn *c, cl_msg *m, dvppc_result *res, dvppc_error *err)
{
    const Dvpp__Envelope *env = m->env;
    const Dvpp__Result *r;
    int st;

    memset(res, 0, sizeof(*res));
    if (env->body_case == DVPP__ENVELOPE__BODY_ERROR && env->error) {
        st = dvppc__from_error(env->error, &res->error);
        goto out;
    }
    st = dvppc__expect(m, DVPP__ENVELOPE__BODY_RESULT, &res->error);
    if (st)
        goto out;
    r = env->result;
    if (r->status) {
        Dvpp__Error e = DVPP__ERROR__INIT;
        /* a failed batch still says how each item ended */
        if (r->n_item_status && r->n_item_status <= UINT32_MAX &&
            (res->item_status = malloc(r->n_item_status * sizeof(int32_t))) != NULL) {
            memcpy(res->item_status, r->item_status, r->n_item_status * sizeof(int32_t));
            res->items = (uint32_t)r->n_item_status;
            res->batch = r->batch;
        }
        e.status = r->status;
        e.code = r->code;
        e.message = r->message;
        e.field = r->field;
        st = dvppc__from_error(&e, &res->error);
        goto out;
    }
    st = plain_fill(res, env->id, r, &res->error);
    if (r->ring) {
        int st2 = ring_fill(c, m, r, res, st ? NULL : &res->error);
        st = st ? st : st2;
        if (st) {
            /* keep ring/slot/generation: dvppc_release still gives it back */
            res->data = NULL;
            res->len = 0;
        }
    } else if (!st) {
        /* inline output: the result keeps the decoded message it lies in
         * (no copy); dvppc_release frees it */
        res->data = r->data.data;
        res->len = r->data.len;
        if (!res->meta.bytes)
            res->meta.bytes = r->data.len;
        res->priv_ = m->env;
        m->env = NULL;
    }
out:
    dvppc__msg_free(m);
    return result_status(res, st, err);
}

int dvppc__frame_fill(dvppc_conn *c, cl_msg *m, dvppc_frame *f, dvppc_error *err)
{
    const Dvpp__VideoFrame *vf = m->env->video_frame;
    const Dvpp__Result *r = vf ? vf->result : NULL;
    dvppc_result *res = &f->result;
    int st, st2;

    memset(f, 0, sizeof(*f));
    if (m->env->body_case != DVPP__ENVELOPE__BODY_VIDEO_FRAME || !r || r->status || !r->ring) {
        st = dvppc__fail(&res->error, DVPPC_EIO, "video_frame",
                         "dvppd sent a VideoFrame without a ring slot");
        goto out;
    }
    f->index = vf->index;
    f->pts = vf->pts;
    f->time_s = vf->time_s;
    f->key = vf->key;
    st = plain_fill(res, m->env->id, r, &res->error);
    /* the slot facts even after a failure, so the slot still goes back */
    st2 = ring_fill(c, m, r, res, st ? NULL : &res->error);
    st = st ? st : st2;
    if (st) {
        res->data = NULL;
        res->len = 0;
    }
out:
    dvppc__msg_free(m);
    return result_status(res, st, err);
}

/* --- releases ------------------------------------------------------------------- */

void dvppc__release_slot(dvppc_conn *c, uint32_t ring, uint32_t slot, uint32_t generation)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__SlotRelease sr = DVPP__SLOT_RELEASE__INIT;

    /* an id nobody waits for: an Error for an invalid release is dropped
     * on arrival instead of being taken for an unsolicited notice */
    pthread_mutex_lock(&c->mu);
    env.id = c->next_id++;
    pthread_mutex_unlock(&c->mu);
    env.protocol = DVPPC_PROTOCOL;
    env.body_case = DVPP__ENVELOPE__BODY_SLOT_RELEASE;
    env.slot_release = &sr;
    sr.ring = ring;
    sr.slot = slot;
    sr.generation = generation;
    dvppc__send(c, &env, NULL, 0, NULL);
}

void dvppc_release(dvppc_conn *c, dvppc_result *res)
{
    if (!res)
        return;
    free(res->item_status);
    if (res->ring && c) {
        uint32_t id = 0;
        bool alive;

        pthread_mutex_lock(&c->mu);
        /* by address and serial: the ring may have closed, and another
         * been opened at the same address, since the result came */
        alive = dvppc__ring_alive(c, res->ring, (uint64_t)(uintptr_t)res->priv_);
        if (alive)
            id = res->ring->id;
        pthread_mutex_unlock(&c->mu);
        if (alive)
            dvppc__release_slot(c, id, res->slot, res->generation);
    } else if (!res->ring && res->priv_) {
        dvpp__envelope__free_unpacked(res->priv_, NULL);
    }
    res->item_status = NULL;
    res->items = 0;
    res->data = NULL;
    res->len = 0;
    res->ring = NULL;
    res->priv_ = NULL;
}
