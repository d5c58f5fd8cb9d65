/* libFuzzer target: ring slots and their releases (proto/PROTOCOL.md, "The
 * ring and the slot life cycle"), against the real socket front end in
 * process (tests/fuzz/fuzz_daemon.h), checked against a model.
 *
 * Each input is one session: Hello, RingOpen (1-4 slots of 4 or 8 KiB),
 * then operations read from the input. The harness keeps the leases the
 * daemon granted (slot, generation) and after every operation checks, at
 * a sync point (StatsQuery):
 *   - a release of a slot leased to us with its generation is accepted
 *     (no Error); any other release (stale or forged generation, another
 *     slot or ring, twice, after RingClose) is refused with Error EINVAL;
 *   - Stats.slots_leased equals the model's lease count, and
 *     Stats.bad_releases grew by the refusals the model expects;
 *   - a submit into the ring succeeds while a slot is free and the output
 *     fits, else is refused at once (EAGAIN, ENOSPC; ENOTFOUND without a
 *     ring); a granted slot is never one still leased, and its descriptor
 *     in the shared memory says READY with the Result's generation and
 *     offset;
 *   - a release carrying a descriptor drops the connection;
 *   - ring ids only grow on the connection, and no generation (of a
 *     Result or of an HTTP delivery's notice) is ever granted twice, across
 *     RingClose and RingOpen too;
 *   - an HTTP delivery into the ring (dvppd_sock_ring_reserve/deliver, as
 *     the HTTP front end calls them, in process: the ring is named and
 *     opened with http) succeeds while a slot is free, is refused EAGAIN
 *     when the ring is full and ENOTFOUND when it is closed, leases its
 *     slot at once, and its notice (id 0) names the ring it went into with
 *     the slot and generation deliver returned, even when the ring was
 *     closed and another opened before the notice was read.
 *
 *   mode byte: bits 0-1 slots - 1, bit 2 slot_bytes 8192 (else 4096)
 *   op byte % 12, then its arguments:
 *     0 submit k = 1 + (a & 3) jobs back to back, spec (a >> 2) & 3
 *     1 release lease a (valid)
 *     2 release lease a with its generation + d (d: 4 bytes, not 0)
 *     3 release (ring a, slot b, generation: 4 bytes) as given
 *     4 release lease a twice
 *     5 SlotRelease whose body is n = a bytes as given (any protobuf)
 *     6 release lease a with a descriptor attached
 *     7 RingClose
 *     8 RingOpen again (after a close)
 *     9 submit, then RingClose at once (the job races the close)
 *    10 an HTTP delivery into the ring
 *    11 an HTTP delivery, then RingClose and RingOpen before its notice is
 *       read */
#include <stdarg.h>

#include "fuzz_daemon.h"

#define MAX_IDS 1024
#define MAX_LEASES 16
#define MAX_GENS 1024            /* generations granted in one session */
#define MAX_NOTICES 64
#define RING_NAME "fzr"

static fuzz_daemon g_d;

static const char *const k_specs[4] = {
    ("{\"ops\": [{\"resize\": {\"w\": 8, \"h\": 8}}], "
     "\"normalize\": {\"mean\": [0.5], \"std\": [0.25]}}"),          /* 768 bytes */
    "{\"normalize\": {\"dtype\": \"uint8\", \"layout\": \"nhwc\"}}", /* 1152 */
    "",                                                              /* 4608 */
    "{\"output\": {\"format\": \"png\"}}",                           /* a small PNG */
};
static const uint64_t k_need[4] = {768, 1152, 4608, 1};

typedef struct lease {
    uint32_t slot, gen;
} lease;

typedef struct session {
    int fd;
    bool alive;
    uint64_t next_id;
    Dvpp__Envelope *inbox[MAX_IDS];
    int inbox_fd[MAX_IDS];
    /* the ring */
    bool ring_open;
    uint32_t ring_id;            /* the last RingOpened's: ids only count up */
    uint32_t slots;
    uint64_t slot_bytes, data_offset, map_bytes;
    const uint8_t *map;
    lease leases[MAX_LEASES];
    unsigned nleases;
    /* releases since the last sync, and whether each must be refused */
    uint64_t rel_id[64];
    bool rel_bad[64];
    unsigned nrel;
    uint64_t bad0, bad_expected;
    bool have_bad0;
    /* every generation granted so far (none may come twice) */
    uint32_t gens[MAX_GENS];
    unsigned ngens;
    /* HTTP deliveries whose notice has not been read yet, and notices
     * read */
    struct delivery {
        uint32_t ring, slot, gen;
    } expect[MAX_NOTICES], got[MAX_NOTICES];
    unsigned nexpect, ngot;
} session;

static void stop(void)
{
    fuzz_daemon_stop(&g_d);
}

/* What the session did, for the report when a check fails. */
static char g_log[16384];
static size_t g_log_len;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note(const char *fmt, ...)
{
    va_list ap;
    int n;

    if (g_log_len >= sizeof(g_log) - 1)
        return;
    va_start(ap, fmt);
    n = vsnprintf(g_log + g_log_len, sizeof(g_log) - g_log_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        g_log_len += (size_t)n < sizeof(g_log) - g_log_len ? (size_t)n
                                                           : sizeof(g_log) - 1 - g_log_len;
}

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_ring: %s\nsession:\n%s\n", what, g_log);
    abort();
}

/* Read answers into the inbox until @id has one (true), the connection
 * ends or 5 s pass (false). */
static bool pump(session *s, uint64_t id)
{
    uint64_t until = fuzz_now_ms() + 5000;

    while (s->alive && !(id < MAX_IDS && s->inbox[id])) {
        Dvpp__Envelope *e;
        int rfd = -1;
        uint64_t now = fuzz_now_ms();
        ssize_t n = fuzz_recv(s->fd, now < until ? (int)(until - now) : 0, &e, &rfd);
        if (n == -EAGAIN) {
            /* What the daemon says about its engines now. */
            Dvpp__Envelope q = DVPP__ENVELOPE__INIT, *a;
            Dvpp__StatsQuery sq = DVPP__STATS_QUERY__INIT;
            q.protocol = 1;
            q.id = MAX_IDS + 7;
            q.body_case = DVPP__ENVELOPE__BODY_STATS_QUERY;
            q.stats_query = &sq;
            if (fuzz_send_env(s->fd, &q, NULL, 0) == 0 &&
                (a = fuzz_await(s->fd, MAX_IDS + 7, 2000, NULL)) != NULL) {
                for (size_t i = 0; i < a->stats->n_engines; i++)
                    note("engine %s: queued %llu running %llu done %llu failed %llu\n",
                         a->stats->engines[i]->name,
                         (unsigned long long)a->stats->engines[i]->queued,
                         (unsigned long long)a->stats->engines[i]->running,
                         (unsigned long long)a->stats->engines[i]->done,
                         (unsigned long long)a->stats->engines[i]->failed);
                note("leased %llu, submitted %llu, failed %llu\n",
                     (unsigned long long)a->stats->slots_leased,
                     (unsigned long long)a->stats->jobs_submitted,
                     (unsigned long long)a->stats->jobs_failed);
                dvpp__envelope__free_unpacked(a, NULL);
            } else {
                note("no Stats either\n");
            }
            fail(id < MAX_IDS ? "no answer within 5 s" : "the connection was not dropped in 5 s");
        }
        if (n == 0) {
            s->alive = false;
            break;
        }
        if (!e)
            fail("an answer that does not decode");
        if (e->id == 0 && e->body_case == DVPP__ENVELOPE__BODY_RESULT) {
            if (s->ngot == MAX_NOTICES)
                fail("more notices than deliveries");
            s->got[s->ngot++] = (struct delivery){e->result->ring, e->result->slot,
                                                  e->result->generation};
            note("  <- notice ring %u slot %u gen %u\n", e->result->ring, e->result->slot,
                 e->result->generation);
        }
        if (e->id >= MAX_IDS || e->id == 0) {
            if (rfd >= 0)
                close(rfd);
            dvpp__envelope__free_unpacked(e, NULL);
            continue;
        }
        note("  <- id %llu body %d%s%s\n", (unsigned long long)e->id, (int)e->body_case,
             e->body_case == DVPP__ENVELOPE__BODY_ERROR ? " " : "",
             e->body_case == DVPP__ENVELOPE__BODY_ERROR ? e->error->message : "");
        if (s->inbox[e->id])
            fail("two answers to one request");
        s->inbox[e->id] = e;
        s->inbox_fd[e->id] = rfd;
    }
    return s->alive;
}

/* The answer to @id (waiting for it); NULL when the connection ended. */
static Dvpp__Envelope *answer(session *s, uint64_t id)
{
    return pump(s, id) ? s->inbox[id] : NULL;
}

static void forget(session *s, uint64_t id)
{
    if (id < MAX_IDS && s->inbox[id]) {
        dvpp__envelope__free_unpacked(s->inbox[id], NULL);
        s->inbox[id] = NULL;
        if (s->inbox_fd[id] >= 0)
            close(s->inbox_fd[id]);
        s->inbox_fd[id] = -1;
    }
}

static uint64_t new_id(session *s)
{
    uint64_t id = s->next_id++;

    if (id >= MAX_IDS)
        fail("too many requests in one session");
    return id;
}

static int find_lease(const session *s, uint32_t slot, uint32_t gen)
{
    for (unsigned i = 0; i < s->nleases; i++)
        if (s->leases[i].slot == slot && s->leases[i].gen == gen)
            return (int)i;
    return -1;
}

static void drop_lease(session *s, int i)
{
    s->leases[i] = s->leases[--s->nleases];
}

/* A generation the daemon granted: never one granted before. */
static void new_generation(session *s, uint32_t gen)
{
    if (gen == 0)
        fail("a lease of generation 0");
    for (unsigned i = 0; i < s->ngens; i++)
        if (s->gens[i] == gen)
            fail("a generation granted twice in one session");
    if (s->ngens < MAX_GENS)
        s->gens[s->ngens++] = gen;
}

static void unmap_ring(session *s)
{
    if (s->map)
        munmap((void *)s->map, s->map_bytes);
    s->map = NULL;
    s->ring_open = false;
    s->nleases = 0;
}

static void open_ring(session *s, uint32_t slots, uint64_t slot_bytes)
{
    uint64_t id = new_id(s);
    Dvpp__Envelope *e;
    const dvpp_ring_header *h;
    void *m;
    int rfd;

    if (fuzz_ring_open(s->fd, id, slots, slot_bytes, RING_NAME, true) != 0 ||
        !(e = answer(s, id))) {
        s->alive = false;
        return;
    }
    rfd = s->inbox_fd[id];
    if (e->body_case != DVPP__ENVELOPE__BODY_RING_OPENED || rfd < 0 ||
        e->ring_opened->ring <= s->ring_id || e->ring_opened->slots != slots)
        fail("RingOpen of a valid size did not open a ring of a new id");
    s->ring_id = e->ring_opened->ring;
    s->slots = slots;
    s->slot_bytes = e->ring_opened->slot_bytes;
    s->data_offset = e->ring_opened->data_offset;
    s->map_bytes = e->ring_opened->map_bytes;
    m = mmap(NULL, s->map_bytes, PROT_READ, MAP_SHARED, rfd, 0);
    if (m == MAP_FAILED)
        fail("cannot map the ring");
    s->map = m;
    h = (const dvpp_ring_header *)m;
    if (h->magic != DVPP_RING_MAGIC || h->slot_count != slots || h->slot_bytes != s->slot_bytes)
        fail("ring header does not match RingOpened");
    s->ring_open = true;
    s->nleases = 0;
    forget(s, id);
}

static const dvpp_ring_slot *desc(const session *s, uint32_t slot)
{
    return (const dvpp_ring_slot *)(s->map + dvpp_ring_desc_offset(slot));
}

/* Every delivery's notice, read (waiting up to 5 s), names what deliver
 * returned. */
static void check_notices(session *s)
{
    uint64_t until = fuzz_now_ms() + 5000;

    while (s->alive && s->ngot < s->nexpect) {
        uint64_t now = fuzz_now_ms();
        Dvpp__Envelope *e;
        int rfd = -1;
        ssize_t n = fuzz_recv(s->fd, now < until ? (int)(until - now) : 0, &e, &rfd);
        if (rfd >= 0)
            close(rfd);
        if (n == -EAGAIN)
            fail("an HTTP delivery's notice did not come in 5 s");
        if (n == 0) {
            s->alive = false;
            break;
        }
        if (!e)
            fail("an answer that does not decode");
        if (e->id == 0 && e->body_case == DVPP__ENVELOPE__BODY_RESULT) {
            s->got[s->ngot++] = (struct delivery){e->result->ring, e->result->slot,
                                                  e->result->generation};
        } else if (e->id < MAX_IDS && e->id && !s->inbox[e->id]) {
            s->inbox[e->id] = e; /* an answer pump will look for */
            continue;
        }
        dvpp__envelope__free_unpacked(e, NULL);
    }
    if (s->ngot > s->nexpect)
        fail("a notice without a delivery");
    for (unsigned i = 0; i < s->ngot; i++)
        if (s->got[i].ring != s->expect[i].ring || s->got[i].slot != s->expect[i].slot ||
            s->got[i].gen != s->expect[i].gen)
            fail("a notice names another ring, slot or generation than its delivery");
    s->ngot = s->nexpect = 0;
}

/* An HTTP delivery into the named ring, as the HTTP front end makes one. */
static void http_deliver(session *s)
{
    dvppd_ring_ticket t;
    uint8_t *dest = NULL;
    ipc_slot_meta m;
    uint32_t gen = 0;
    dvpp_err err;
    dvpp_status st;
    unsigned free_slots = s->ring_open ? s->slots - s->nleases : 0;

    dvpp_err_clear(&err);
    st = dvppd_sock_ring_reserve(g_d.sock, RING_NAME, 100, &t, &dest, &err);
    note("http delivery: %s (%s)\n", dvpp_status_name(st), err.msg);
    if (!s->ring_open) {
        if (st != DVPP_ENOTFOUND)
            fail("an HTTP delivery into a closed ring was not ENOTFOUND");
        return;
    }
    if (free_slots == 0) {
        if (st != DVPP_EAGAIN)
            fail("an HTTP delivery into a full ring was not EAGAIN");
        return;
    }
    if (st != DVPP_OK)
        fail("an HTTP delivery into a free slot was refused");
    if (t.ring_id != s->ring_id || t.slot >= s->slots)
        fail("an HTTP delivery's ticket names another ring or no slot");
    for (unsigned q = 0; q < s->nleases; q++)
        if (s->leases[q].slot == t.slot)
            fail("an HTTP delivery took a slot still leased to us");
    memset(dest, 0x5a, 100);
    memset(&m, 0, sizeof(m));
    m.dtype = DVPP_RING_DTYPE_U8;
    m.layout = DVPP_RING_LAYOUT_IMAGE;
    m.ndim = 1;
    m.shape[0] = 100;
    m.byte_length = 100;
    m.scale_x = m.scale_y = 1;
    {
        uint32_t slot = t.slot;
        if (dvppd_sock_ring_deliver(g_d.sock, &t, true, &m, &gen) != DVPP_OK)
            fail("an HTTP delivery into an open ring was not leased");
        new_generation(s, gen);
        if (s->nleases == MAX_LEASES || s->nexpect == MAX_NOTICES)
            fail("more leases than slots");
        s->leases[s->nleases++] = (lease){slot, gen};
        s->expect[s->nexpect++] = (struct delivery){s->ring_id, slot, gen};
    }
}

/* StatsQuery, and every expectation since the last one. */
static void sync_check(session *s)
{
    uint64_t id = new_id(s);
    Dvpp__Envelope e = DVPP__ENVELOPE__INIT, *a;
    Dvpp__StatsQuery q = DVPP__STATS_QUERY__INIT;

    e.protocol = 1;
    e.id = id;
    e.body_case = DVPP__ENVELOPE__BODY_STATS_QUERY;
    e.stats_query = &q;
    if (fuzz_send_env(s->fd, &e, NULL, 0) != 0 || !(a = answer(s, id))) {
        s->alive = false;
        return;
    }
    check_notices(s);
    if (!s->alive)
        return;
    if (a->body_case != DVPP__ENVELOPE__BODY_STATS)
        fail("StatsQuery not answered with Stats");
    for (unsigned i = 0; i < s->nrel; i++) {
        Dvpp__Envelope *r = s->inbox[s->rel_id[i]];
        bool refused = r && r->body_case == DVPP__ENVELOPE__BODY_ERROR;
        if (r && !refused)
            fail("a release answered with something other than Error");
        if (refused && r->error->status != DVPP_EINVAL)
            fail("a release refused with another status than EINVAL");
        if (refused && !s->rel_bad[i])
            fail("a release of a slot leased to us, with its generation, was refused");
        if (!refused && s->rel_bad[i])
            fail("a stale or forged release was accepted");
        forget(s, s->rel_id[i]);
    }
    s->nrel = 0;
    if (!s->have_bad0) {
        s->bad0 = a->stats->bad_releases - s->bad_expected;
        s->have_bad0 = true;
    }
    if (a->stats->bad_releases - s->bad0 != s->bad_expected)
        fail("Stats.bad_releases does not count the refused releases");
    if (a->stats->slots_leased != s->nleases)
        fail("Stats.slots_leased differs from the leases granted and not released");
    if (a->stats->rings != (s->ring_open ? 1u : 0u))
        fail("Stats.rings differs from the rings opened and not closed");
    for (uint32_t i = 0; s->ring_open && i < s->slots; i++) {
        bool leased = false;
        for (unsigned k = 0; k < s->nleases; k++)
            leased |= s->leases[k].slot == i;
        if ((desc(s, i)->status == DVPP_RING_SLOT_READY) != leased)
            fail("a slot descriptor's status differs from the lease state");
    }
    forget(s, id);
}

/* Send a SlotRelease with @body (a packed SlotRelease, or any bytes), the
 * model's verdict @bad, optionally with @attach fd. */
static void send_release_raw(session *s, const uint8_t *body, size_t n, bool bad, int attach)
{
    uint8_t pkt[300];
    size_t k = 0;
    uint64_t id = new_id(s);

    if (n > 255)
        n = 255;
    pkt[k++] = 0x08, pkt[k++] = 0x01;              /* protocol = 1 */
    pkt[k++] = 0x10;                               /* id: a varint below 1024 */
    if (id < 128) {
        pkt[k++] = (uint8_t)id;
    } else {
        pkt[k++] = (uint8_t)(0x80 | (id & 0x7f)), pkt[k++] = (uint8_t)(id >> 7);
    }
    pkt[k++] = 0x8a, pkt[k++] = 0x02;              /* field 33, bytes */
    if (n < 128) {
        pkt[k++] = (uint8_t)n;
    } else {
        pkt[k++] = (uint8_t)(0x80 | (n & 0x7f)), pkt[k++] = (uint8_t)(n >> 7);
    }
    memcpy(pkt + k, body, n);
    k += n;
    if (fuzz_send(s->fd, pkt, k, attach >= 0 ? &attach : NULL, attach >= 0) != 0) {
        s->alive = false;
        return;
    }
    if (s->nrel == 64)
        fail("too many releases between syncs");
    s->rel_id[s->nrel] = id;
    s->rel_bad[s->nrel++] = bad;
    if (bad)
        s->bad_expected++;
}

/* Release (ring, slot, gen): the model decides whether it must pass. */
static void release(session *s, uint32_t ring, uint32_t slot, uint32_t gen)
{
    Dvpp__SlotRelease r = DVPP__SLOT_RELEASE__INIT;
    uint8_t body[64];
    int i = ring == s->ring_id && s->ring_open ? find_lease(s, slot, gen) : -1;

    r.ring = ring, r.slot = slot, r.generation = gen;
    send_release_raw(s, body, dvpp__slot_release__pack(&r, body), i < 0, -1);
    if (i >= 0)
        drop_lease(s, i);
}

/* k submits back to back into the ring, then their answers, checked. */
static void submit(session *s, unsigned k, unsigned spec, bool close_too)
{
    uint64_t ids[4], close_id = 0;
    bool expect_ok[4];
    unsigned free_slots = s->ring_open ? s->slots - s->nleases : 0;

    for (unsigned i = 0; i < k; i++) {
        Dvpp__Envelope e = DVPP__ENVELOPE__INIT;
        Dvpp__Submit m = DVPP__SUBMIT__INIT;
        ids[i] = new_id(s);
        e.protocol = 1;
        e.id = ids[i];
        m.kind = spec == 3 ? DVPP__KIND__IMAGE : DVPP__KIND__TENSOR;
        m.spec = (char *)k_specs[spec];
        m.input.data = g_d.blob[0];
        m.input.len = g_d.blob_len[0];
        m.ring = s->ring_id;
        e.body_case = DVPP__ENVELOPE__BODY_SUBMIT;
        e.submit = &m;
        if (fuzz_send_env(s->fd, &e, NULL, 0) != 0) {
            s->alive = false;
            return;
        }
        expect_ok[i] = s->ring_open && k_need[spec] <= s->slot_bytes && free_slots > 0;
        if (expect_ok[i])
            free_slots--;
    }
    if (close_too) {
        Dvpp__Envelope e = DVPP__ENVELOPE__INIT;
        Dvpp__RingClose c = DVPP__RING_CLOSE__INIT;
        close_id = new_id(s);
        e.protocol = 1;
        e.id = close_id;
        c.ring = s->ring_id;
        e.body_case = DVPP__ENVELOPE__BODY_RING_CLOSE;
        e.ring_close = &c;
        if (fuzz_send_env(s->fd, &e, NULL, 0) != 0) {
            s->alive = false;
            return;
        }
    }
    for (unsigned i = 0; i < k; i++) {
        Dvpp__Envelope *a = answer(s, ids[i]);
        if (!a)
            return;
        if (!expect_ok[i]) {
            if (a->body_case != DVPP__ENVELOPE__BODY_ERROR)
                fail("a submit that cannot have a slot was not refused");
        } else if (a->body_case != DVPP__ENVELOPE__BODY_RESULT) {
            fail("a submit into a free slot was refused");
        } else if (a->result->status != 0) {
            /* Only the close may beat the job to its slot. */
            if (!close_too || a->result->status != DVPP_ECANCELED)
                fail("a job of a valid spec on a valid image failed");
        } else {
            const Dvpp__Result *r = a->result;
            const dvpp_ring_slot *d;
            if (r->ring != s->ring_id || r->slot >= s->slots)
                fail("a Result names a slot outside the ring");
            if (!close_too) {
                for (unsigned q = 0; q < s->nleases; q++)
                    if (s->leases[q].slot == r->slot)
                        fail("a slot still leased to us was granted again");
                d = desc(s, r->slot);
                if (d->status != DVPP_RING_SLOT_READY || d->generation != r->generation ||
                    d->payload_offset != r->offset ||
                    r->offset != s->data_offset + (uint64_t)r->slot * s->slot_bytes ||
                    !r->meta || d->byte_length != r->meta->bytes ||
                    r->meta->bytes > s->slot_bytes)
                    fail("the slot descriptor does not match the Result");
                if (s->nleases == MAX_LEASES)
                    fail("more leases than slots");
                new_generation(s, r->generation);
                s->leases[s->nleases++] = (lease){r->slot, r->generation};
            }
        }
        forget(s, ids[i]);
    }
    if (close_too) {
        Dvpp__Envelope *a = answer(s, close_id);
        if (!a)
            return;
        if ((a->body_case == DVPP__ENVELOPE__BODY_ACK) != s->ring_open)
            fail("RingClose answered other than Ack for an open ring (or Ack for none)");
        forget(s, close_id);
        unmap_ring(s);
    }
}

static void run(const uint8_t *data, size_t size)
{
    static session s;
    fuzz_reader r = {data, size};
    unsigned mode = fuzz_u8(&r), ops = 0;

    memset(&s, 0, sizeof(s));
    g_log_len = 0;
    g_log[0] = '\0';
    for (unsigned i = 0; i < MAX_IDS; i++)
        s.inbox_fd[i] = -1;
    s.next_id = 1;
    s.fd = fuzz_open(&g_d);
    s.alive = true;
    s.alive = fuzz_hello(s.fd, new_id(&s)) == 0 && answer(&s, 1) != NULL;
    forget(&s, 1);
    if (s.alive)
        open_ring(&s, 1 + (mode & 3), mode & 4 ? 8192 : 4096);
    if (s.alive)
        sync_check(&s);
    while (s.alive && r.n && ops++ < 64) {
        unsigned op = fuzz_u8(&r) % 12, a = fuzz_u8(&r);
        const lease *l = s.nleases ? &s.leases[a % s.nleases] : NULL;
        note("op %u a %u (next id %llu, ring %s, %u lease(s))\n", op, a,
             (unsigned long long)s.next_id, s.ring_open ? "open" : "closed", s.nleases);
        switch (op) {
        case 0:
            submit(&s, 1 + (a & 3), (a >> 2) & 3, false);
            break;
        case 1:
            if (l)
                release(&s, s.ring_id, l->slot, l->gen);
            break;
        case 2: {
            uint32_t d = fuzz_u32(&r);
            if (l)
                release(&s, s.ring_id, l->slot, l->gen + (d ? d : 1));
            break;
        }
        case 3: {
            uint32_t slot = fuzz_u8(&r), gen = fuzz_u32(&r);
            release(&s, a, slot, gen);
            break;
        }
        case 4:
            if (l) {
                lease x = *l;
                release(&s, s.ring_id, x.slot, x.gen);
                release(&s, s.ring_id, x.slot, x.gen);
            }
            break;
        case 5: {
            size_t n;
            const uint8_t *body = fuzz_take(&r, a, &n);
            Dvpp__SlotRelease *m = dvpp__slot_release__unpack(NULL, n, body);
            if (!m) { /* undecodable: a violation, the connection ends */
                send_release_raw(&s, body, n, true, -1);
                s.bad_expected--; /* not counted as a release */
                s.nrel--;
                if (s.alive && answer(&s, s.next_id - 1))
                    fail("an undecodable packet did not end the connection");
                s.alive = false;
                break;
            }
            {
                int i = m->ring == s.ring_id && s.ring_open
                            ? find_lease(&s, m->slot, m->generation)
                                                    : -1;
                send_release_raw(&s, body, n, i < 0, -1);
                if (i >= 0)
                    drop_lease(&s, i);
            }
            dvpp__slot_release__free_unpacked(m, NULL);
            break;
        }
        case 6: {
            int nul = fuzz_tmpfile();
            Dvpp__SlotRelease m = DVPP__SLOT_RELEASE__INIT;
            uint8_t body[64];
            fuzz_sent(&g_d, nul);
            m.ring = s.ring_id;
            m.slot = l ? l->slot : 0;
            m.generation = l ? l->gen : 1;
            send_release_raw(&s, body, dvpp__slot_release__pack(&m, body), true, nul);
            close(nul);
            s.bad_expected--, s.nrel--; /* a violation, not a release */
            /* Answered with an Error (best effort), then dropped. */
            while (s.alive)
                (void)pump(&s, MAX_IDS);
            break;
        }
        case 7: {
            Dvpp__Envelope e = DVPP__ENVELOPE__INIT, *ans;
            Dvpp__RingClose c = DVPP__RING_CLOSE__INIT;
            uint64_t id = new_id(&s);
            e.protocol = 1;
            e.id = id;
            c.ring = s.ring_id;
            e.body_case = DVPP__ENVELOPE__BODY_RING_CLOSE;
            e.ring_close = &c;
            if (fuzz_send_env(s.fd, &e, NULL, 0) != 0 || !(ans = answer(&s, id))) {
                s.alive = false;
                break;
            }
            if ((ans->body_case == DVPP__ENVELOPE__BODY_ACK) != s.ring_open)
                fail("RingClose answered other than Ack for an open ring (or Ack for none)");
            forget(&s, id);
            unmap_ring(&s);
            break;
        }
        case 8:
            if (!s.ring_open)
                open_ring(&s, 1 + (a & 3), a & 4 ? 8192 : 4096);
            break;
        case 9:
            submit(&s, 1, a & 3, true);
            break;
        case 10:
            http_deliver(&s);
            break;
        default: { /* deliver, then close and reopen before reading the notice */
            Dvpp__Envelope e = DVPP__ENVELOPE__INIT, *ans;
            Dvpp__RingClose c = DVPP__RING_CLOSE__INIT;
            uint64_t id;
            if (!s.ring_open)
                break;
            http_deliver(&s);
            id = new_id(&s);
            e.protocol = 1;
            e.id = id;
            c.ring = s.ring_id;
            e.body_case = DVPP__ENVELOPE__BODY_RING_CLOSE;
            e.ring_close = &c;
            if (fuzz_send_env(s.fd, &e, NULL, 0) != 0 || !(ans = answer(&s, id))) {
                s.alive = false;
                break;
            }
            if (ans->body_case != DVPP__ENVELOPE__BODY_ACK)
                fail("RingClose of an open ring was not answered Ack");
            forget(&s, id);
            unmap_ring(&s);
            open_ring(&s, 1 + (a & 3), a & 4 ? 8192 : 4096);
            break;
        }
        }
        if (s.alive)
            sync_check(&s);
    }
    for (unsigned i = 0; i < MAX_IDS; i++)
        forget(&s, i);
    unmap_ring(&s);
    close(s.fd);
    fuzz_daemon_settle(&g_d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const uint8_t warmup[] = {0x03, 0, 0, 1, 0, 7, 0};

    (void)argc, (void)argv;
    fuzz_daemon_start(&g_d, "ring", 60000);
    atexit(stop);
    run(warmup, sizeof(warmup));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size);
    return 0;
}
