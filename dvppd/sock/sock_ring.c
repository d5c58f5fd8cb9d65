/* sock_ring: the rings of a connection (RingOpen, RingClose), slot
 * releases and lease expiry, and the named-ring registry through which HTTP
 * threads deliver into a ring (?ring=NAME): dvppd_sock_ring_reserve and
 * dvppd_sock_ring_deliver. The ring table of a connection is the socket
 * thread's; the registry has its own mutex (a leaf); ipc_ring locks itself. */
#include "sock_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The named-ring registry: what HTTP threads may reach (?ring=NAME). It
 * has its own mutex and never walks the connection list; each entry holds
 * a reference to its ring and one to the owner's connection record, so a
 * delivery that found an entry keeps both alive however soon the owner
 * disconnects. Names are unique per owner uid. */
struct named_ring {
    char name[DVPPD_RING_NAME_MAX + 1];
    uid_t uid;                   /* the owner's */
    bool http;                   /* the owner lets HTTP requests deliver */
    ipc_ring *ring;              /* referenced */
    conn *owner;                 /* referenced */
    uint32_t ring_id;            /* on the owner's connection */
    struct named_ring *next;
};

/* --- the named-ring registry ----------------------------------------------------- */

void sock_registry_init(ring_registry *g)
{
    pthread_mutex_init(&g->mu, NULL);
    g->head = NULL;
}

/* Every entry is gone by then (rings close with their connections). */
void sock_registry_fini(ring_registry *g)
{
    pthread_mutex_destroy(&g->mu);
}

/* List ring @id of @owner as (@owner's uid, @name); 0, -EEXIST when that
 * uid has a ring of that name, -ENOMEM. Takes a reference to the ring and
 * to @owner. Socket thread. */
static int registry_add(ring_registry *g, conn *owner, uint32_t id, ipc_ring *r,
                        const char *name, bool http)
{
    named_ring *e = calloc(1, sizeof(*e));
    int rc = 0;

    if (!e)
        return -ENOMEM;
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->uid = owner->uid;
    e->http = http;
    e->ring = r;
    e->owner = owner;
    e->ring_id = id;
    pthread_mutex_lock(&g->mu);
    for (named_ring *k = g->head; k && !rc; k = k->next)
        rc = k->uid == e->uid && !strcmp(k->name, e->name) ? -EEXIST : 0;
    if (!rc) {
        ipc_ring_ref(r);
        sock_conn_ref(owner);
        e->next = g->head;
        g->head = e;
    }
    pthread_mutex_unlock(&g->mu);
    if (rc)
        free(e);
    return rc;
}

/* Unlist ring @r (closing) and drop the entry's references. */
static void registry_remove(ring_registry *g, const ipc_ring *r)
{
    named_ring *e = NULL;

    pthread_mutex_lock(&g->mu);
    for (named_ring **pp = &g->head; *pp; pp = &(*pp)->next)
        if ((*pp)->ring == r) {
            e = *pp;
            *pp = e->next;
            break;
        }
    pthread_mutex_unlock(&g->mu);
    if (e) {
        ipc_ring_unref(e->ring);
        sock_conn_unref(e->owner);
        free(e);
    }
}

/* Split an HTTP ring reference, "NAME" or "NAME@UID", into its parts;
 * false when it is neither. */
static bool ring_ref_parse(const char *ref, char *name, size_t cap, bool *has_uid, uid_t *uid)
{
    const char *at = strchr(ref, '@');
    size_t n = at ? (size_t)(at - ref) : strlen(ref);
    char *end;
    unsigned long long v;

    *has_uid = false;
    if (n == 0 || n >= cap)
        return false;
    memcpy(name, ref, n);
    name[n] = '\0';
    if (!at)
        return true;
    if (at[1] < '0' || at[1] > '9')
        return false;
    errno = 0;
    v = strtoull(at + 1, &end, 10);
    if (errno || *end || v >= (uid_t)-1)
        return false;
    *has_uid = true;
    *uid = (uid_t)v;
    return true;
}

/* The ring HTTP reference @ref names: an entry copy into *out, with a
 * reference to its ring and to its owner (the caller drops both). Only
 * rings whose owner allowed HTTP deliveries are visible; a bare NAME must
 * be unambiguous (else DVPP_EBUSY: name the owner, NAME@UID). */
static dvpp_status registry_find(ring_registry *g, const char *ref, named_ring *out,
                                 dvpp_err *err)
{
    char name[DVPPD_RING_NAME_MAX + 1];
    bool has_uid;
    uid_t uid = 0;
    unsigned found = 0;
    named_ring *hit = NULL;
    uid_t first = 0, other = 0;   /* copied under the lock: entries may go after */

    if (!ring_ref_parse(ref, name, sizeof(name), &has_uid, &uid))
        return dvpp_err_set(err, DVPP_EINVAL, "ring", "ring wants NAME or NAME@UID (a name "
                            "of at most %d bytes without '@', the owner's uid)",
                            DVPPD_RING_NAME_MAX);
    pthread_mutex_lock(&g->mu);
    for (named_ring *k = g->head; k; k = k->next)
        if (k->http && !strcmp(k->name, name) && (!has_uid || k->uid == uid)) {
            if (found++) {
                other = k->uid;
            } else {
                hit = k;
                first = k->uid;
            }
        }
    if (found == 1) {
        *out = *hit;
        out->next = NULL;
        ipc_ring_ref(out->ring);
        sock_conn_ref(out->owner);
    }
    pthread_mutex_unlock(&g->mu);
    if (found == 0)
        return dvpp_err_set(err, DVPP_ENOTFOUND, "ring", "no open ring '%.80s' takes HTTP "
                            "deliveries (its owner opens it with RingOpen.http)", ref);
    if (found > 1)
        return dvpp_err_set(err, DVPP_EBUSY, "ring", "rings of owners uid %ld and %ld (at "
                            "least) are named '%s': name one as %s@UID", (long)first,
                            (long)other, name, name);
    return DVPP_OK;
}

/* --- rings ---------------------------------------------------------------------------- */

/* The entry of ring @id of @c, or NULL. */
static owned_ring *conn_ring_entry(conn *c, uint32_t id)
{
    for (uint32_t i = 0; id && i < c->s->cfg.max_rings; i++)
        if (c->rings[i].ring && c->rings[i].id == id)
            return &c->rings[i];
    return NULL;
}

/* The ring @id of @c, or NULL. */
ipc_ring *sock_conn_ring(conn *c, uint32_t id)
{
    owned_ring *e = conn_ring_entry(c, id);

    return e ? e->ring : NULL;
}

void sock_conn_ring_close(conn *c, uint32_t id)
{
    owned_ring *e = conn_ring_entry(c, id);
    ipc_ring *r;

    if (!e)
        return;
    r = e->ring;
    if (e->named)
        registry_remove(&c->s->names, r);
    *e = (owned_ring){NULL, 0, false};
    ipc_ring_close(r);
    ipc_ring_unref(r);
}

/* A RingOpen's name and flags, checked. */
static dvpp_status ring_open_check(const Dvpp__RingOpen *m, dvpp_err *err)
{
    if (strlen(m->name) > DVPPD_RING_NAME_MAX || strchr(m->name, '@'))
        return dvpp_err_set(err, DVPP_EINVAL, "name", "a ring name has at most %d bytes "
                            "and no '@' (HTTP names a ring NAME or NAME@UID)",
                            DVPPD_RING_NAME_MAX);
    if (m->http && !m->name[0])
        return dvpp_err_set(err, DVPP_EINVAL, "http", "HTTP deliveries need a ring name");
    return DVPP_OK;
}

static void send_ring_opened(conn *c, uint64_t id, uint32_t ring_id, ipc_ring *r, int fd)
{
    Dvpp__Envelope e;
    Dvpp__RingOpened ro;

    sock_envelope_init(&e, id);
    dvpp__ring_opened__init(&ro);
    ro.ring = ring_id;
    ro.slots = ipc_ring_slots(r);
    ro.slot_bytes = ipc_ring_slot_bytes(r);
    ro.map_bytes = ipc_ring_map_bytes(r);
    ro.data_offset = ipc_ring_data_offset(r);
    e.body_case = DVPP__ENVELOPE__BODY_RING_OPENED;
    e.ring_opened = &ro;
    sock_send_env(c, &e, &fd, 1);
}

void sock_on_ring_open(conn *c, uint64_t id, const Dvpp__RingOpen *m)
{
    dvppd_sock *s = c->s;
    ipc_ring *r = NULL;
    owned_ring *slot = NULL;
    dvpp_err err;
    int fd, rc;

    for (uint32_t i = 0; !slot && i < s->cfg.max_rings; i++)
        slot = c->rings[i].ring ? NULL : &c->rings[i];
    if (!slot || c->last_ring_id == UINT32_MAX) {
        sock_send_error(c, id, DVPP_ELIMIT, "ring", slot ? "this connection has opened all the "
                        "rings it may: reconnect" : "too many rings on this connection");
        return;
    }
    if (m->slots == 0 || m->slots > s->set->cfg.sock.max_slots || m->slot_bytes == 0 ||
        m->slot_bytes > s->set->cfg.sock.max_ring_bytes / m->slots) {
        sock_send_error(c, id, DVPP_ELIMIT, "slots", "slots x slot_bytes outside the limits "
                        "(Welcome.max_slots, max_ring_bytes)");
        return;
    }
    dvpp_err_clear(&err);
    if (ring_open_check(m, &err) != DVPP_OK) {
        sock_send_err(c, id, &err);
        return;
    }
    rc = ipc_ring_create(m->slots, m->slot_bytes, "dvppd-ring", &r);
    fd = rc == 0 ? ipc_ring_consumer_fd(r) : rc;
    if (fd < 0) {
        ipc_ring_unref(r);
        sock_send_error(c, id, fd == -EINVAL ? DVPP_EINVAL : DVPP_ENOMEM, "ring",
                        "cannot create the ring");
        return;
    }
    ipc_ring_share_generations(r, &s->gens);
    rc = m->name[0] ? registry_add(&s->names, c, c->last_ring_id + 1, r, m->name, m->http)
                    : 0;
    if (rc) {
        close(fd);
        ipc_ring_unref(r);
        if (rc == -EEXIST)
            sock_send_error(c, id, DVPP_EBUSY, "name", "a ring of that name is open (names are "
                            "unique per owner uid)");
        else
            sock_send_error(c, id, DVPP_ENOMEM, "name", "out of memory");
        return;
    }
    *slot = (owned_ring){r, ++c->last_ring_id, m->name[0] != '\0'};
    send_ring_opened(c, id, slot->id, r, fd);
    close(fd);
}

void sock_on_ring_close(conn *c, uint64_t id, uint32_t ring)
{
    if (sock_conn_ring(c, ring)) {
        sock_conn_ring_close(c, ring);
        sock_send_ack(c, id);
    } else {
        sock_send_error(c, id, DVPP_ENOTFOUND, "ring", "no such ring");
    }
}

/* Take one invalid release from @c's budget: false once it is spent. */
static bool bad_release_allowed(conn *c)
{
    uint64_t now = sock_now_ms();
    uint64_t add = (now - c->bad_refill_ms) * SOCK_BAD_RELEASE_RATE / 1000u;

    if (add) {
        c->bad_tokens = add >= SOCK_BAD_RELEASE_BURST - c->bad_tokens
                            ? SOCK_BAD_RELEASE_BURST
                            : c->bad_tokens + (uint32_t)add;
        c->bad_refill_ms = now;
    }
    if (!c->bad_tokens)
        return false;
    c->bad_tokens--;
    return true;
}

void sock_on_slot_release(conn *c, uint64_t id, const Dvpp__SlotRelease *m)
{
    ipc_ring *r = sock_conn_ring(c, m->ring);

    if (!r || ipc_ring_release(r, m->slot, m->generation) != 0) {
        atomic_fetch_add(&c->s->n.bad_releases, 1);
        if (!bad_release_allowed(c)) {
            sock_send_error(c, id, DVPP_ELIMIT, "slot", "too many invalid slot releases: "
                            "connection dropped");
            atomic_fetch_add(&c->s->n.dropped, 1);
            sock_conn_cut(c, "too many invalid slot releases");
            return;
        }
        sock_send_error(c, id, DVPP_EINVAL, "slot", "no such lease (wrong ring, slot or "
                        "generation, or already released)");
    }
}

/* --- slots: their description, leases ------------------------------------------------ */

void dvppd_slot_meta_tensor(ipc_slot_meta *m, const dvpp_tensor *t, const dvpp_pipe_geom *g)
{
    memset(m, 0, sizeof(*m));
    m->dtype = (uint32_t)t->dtype;
    m->layout = (uint32_t)t->layout;
    m->ndim = t->ndim;
    for (unsigned i = 0; i < t->ndim && i < DVPP_RING_MAX_DIMS; i++)
        m->shape[i] = t->shape[i];
    m->byte_length = t->bytes;
    if (g) {
        m->scale_x = g->scale_x, m->scale_y = g->scale_y;
        m->pad_x = g->pad_x, m->pad_y = g->pad_y;
    }
}

void sock_slot_result(const sjob *j, const char *origin, Dvpp__Result *r,
                      Dvpp__TensorMeta *meta, Dvpp__Geom *g, int64_t *shape)
{
    const ipc_slot_meta *m = &j->meta;

    dvpp__result__init(r);
    dvpp__tensor_meta__init(meta);
    dvpp__geom__init(g);
    r->origin = (char *)origin;
    r->ring = j->ring_id;
    r->slot = j->slot;
    r->generation = j->generation;
    r->offset = ipc_ring_payload_offset(j->ring, j->slot);
    meta->dtype = (char *)dvpp_dtype_name((dvpp_dtype)m->dtype);
    /* An image slot (DVPP_RING_LAYOUT_IMAGE) has no layout: "", as the
     * Result of an image says. */
    meta->layout = m->layout <= DVPP_LAYOUT_NC1HWC0
                       ? (char *)dvpp_layout_name((dvpp_layout)m->layout) : "";
    for (unsigned i = 0; i < m->ndim; i++)
        shape[i] = m->shape[i];
    meta->n_shape = m->ndim;
    meta->shape = shape;
    meta->bytes = m->byte_length;
    g->scale_x = m->scale_x, g->scale_y = m->scale_y;
    g->pad_x = m->pad_x, g->pad_y = m->pad_y;
    r->meta = meta;
    r->geom = g;
}

void sock_send_notice(sjob *j)
{
    Dvpp__Envelope e;
    Dvpp__Result r;
    Dvpp__TensorMeta meta;
    Dvpp__Geom g;
    int64_t shape[DVPP_RING_MAX_DIMS];

    sock_envelope_init(&e, 0);
    sock_slot_result(j, "http", &r, &meta, &g, shape);
    e.body_case = DVPP__ENVELOPE__BODY_RESULT;
    e.result = &r;
    sock_send_env(j->c, &e, NULL, 0);
}

void sock_expire_leases(dvppd_sock *s)
{
    uint64_t now = sock_now_ms();

    for (conn *c = s->conns; c; c = c->next)
        for (uint32_t i = 0; !c->closed && i < s->cfg.max_rings; i++)
            if (c->rings[i].ring) {
                unsigned n = ipc_ring_expire(c->rings[i].ring, now);
                if (n)
                    atomic_fetch_add(&s->n.leases_expired, n);
            }
}

void sock_ring_totals(dvppd_sock *s, uint64_t *rings, uint64_t *leased)
{
    *rings = *leased = 0;
    for (conn *k = s->conns; k; k = k->next)
        for (uint32_t i = 0; !k->closed && i < s->cfg.max_rings; i++)
            if (k->rings[i].ring) {
                (*rings)++;
                *leased += ipc_ring_leased(k->rings[i].ring);
            }
}

/* --- HTTP deliveries -------------------------------------------------------------------- */

dvpp_status dvppd_sock_ring_reserve(dvppd_sock *s, const char *name, uint64_t bytes,
                                    dvppd_ring_ticket *t, uint8_t **dest, dvpp_err *err)
{
    named_ring e = {0};
    uint64_t have;
    dvpp_status st;

    memset(t, 0, sizeof(*t));
    if (!s)
        return dvpp_err_set(err, DVPP_ENOTFOUND, "ring", "the socket front end is off");
    st = registry_find(&s->names, name, &e, err);
    if (st != DVPP_OK)
        return st;
    have = ipc_ring_slot_bytes(e.ring);
    if (bytes > have)
        st = dvpp_err_set(err, DVPP_ELIMIT, "ring", "the output needs %llu bytes, a slot of "
                          "'%.64s' has %llu", (unsigned long long)bytes, name,
                          (unsigned long long)have);
    else if (ipc_ring_acquire(e.ring, &t->slot) != 0)
        st = dvpp_err_set(err, DVPP_EAGAIN, "ring", "ring '%.64s' has no free slot", name);
    if (st != DVPP_OK) {
        ipc_ring_unref(e.ring);
        sock_conn_unref(e.owner);
        return st;
    }
    t->ring = e.ring;            /* the references move to the ticket */
    t->owner = e.owner;
    t->ring_id = e.ring_id;
    t->offset = ipc_ring_payload_offset(e.ring, t->slot);
    *dest = ipc_ring_payload(e.ring, t->slot);
    return DVPP_OK;
}

/* The lease timeout, read off the socket thread (an HTTP delivery). */
static uint32_t lease_ms(dvppd_sock *s)
{
    const dvppd_settings *set = dvppd_live_get(s->live);
    uint32_t ms = set->cfg.sock.lease_timeout_ms;

    dvppd_settings_put(set);
    return ms;
}

dvpp_status dvppd_sock_ring_deliver(dvppd_sock *s, dvppd_ring_ticket *t, bool ok,
                                    const ipc_slot_meta *m, uint32_t *generation)
{
    dvpp_status st = DVPP_OK;
    sjob *j;

    if (!t->ring)
        return DVPP_EINVAL;
    if (!ok) {
        ipc_ring_abort(t->ring, t->slot);
        st = DVPP_ECANCELED;
    } else if (ipc_ring_lease(t->ring, t->slot, m, sock_now_ms() + lease_ms(s),
                              generation) != 0) {
        st = DVPP_ECANCELED;
    } else if ((j = sock_job_new(t->owner, JOB_NOTICE, 0, NULL)) != NULL) {
        j->ring = t->ring;       /* the ticket's reference moves to the notice */
        j->ring_id = t->ring_id;
        j->slot = t->slot;
        j->generation = *generation;
        j->meta = *m;
        t->ring = NULL;
        sock_post_done(s, j, true);
    }
    ipc_ring_unref(t->ring);
    sock_conn_unref(t->owner);
    memset(t, 0, sizeof(*t));
    return st;
}
