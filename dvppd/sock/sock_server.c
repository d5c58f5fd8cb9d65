/* sock_server: the Unix-socket front end (being split into dvppd/sock/ modules). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4, SOCK_* flags, struct ucred */
#endif
#include "dvppd_sock.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "device/dvpp_batchjob.h"
#include "device/dvpp_videojob.h"
#include "dvpp_cpu.h"
#include "dvpp_log.h"
#include "dvppd_spec.h"
#include "ipc_msg.h"
#include "proto/dvpp.pb-c.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "dev"
#endif

#define PROTOCOL 1u
#define RX_SLACK (64u << 10)       /* packet room beyond max_inline */
#define OUTQ_MAX_BYTES (16u << 20) /* a consumer that stops reading is cut */
/* Encoded video is queued to send while fewer bytes than this wait: a
 * large MP4 goes out at the reader's pace, far below OUTQ_MAX_BYTES. */
#define VIDEO_PUMP_BYTES (4u << 20)
#define TICK_MS 100
/* A connection's invalid SlotReleases (wrong ring, slot or generation,
 * double releases) draw on a budget: BAD_RELEASE_BURST at once, refilled
 * at BAD_RELEASE_RATE a second. A consumer whose leases all expired may
 * release them late (four full rings of max_slots at once, within the
 * burst); one that goes past it is abusive: Error ELIMIT, dropped. */
#define BAD_RELEASE_BURST 4096u
#define BAD_RELEASE_RATE 100u
/* Packets read from one connection per turn of the loop: a peer that
 * floods cannot starve the others, nor the answers of finished jobs. */
#define READ_BATCH 64

/* --- records -------------------------------------------------------------------- */

typedef struct conn conn;
typedef struct sjob sjob;
typedef struct vchan vchan;
typedef struct vdecode vdecode;

/* A video channel (VideoOpen .. VideoClose). */
struct vchan {
    uint64_t id;
    uint64_t open_id;            /* VideoOpen's id: frames and data carry it */
    bool encode;
    bool closing;                /* VideoClose or the connection's end */
    unsigned busy;               /* jobs of this channel in flight */
    /* decode */
    dvpp_vdec_opts vdec;
    bool has_pipe;
    dvppd_spec spec;
    ipc_ring *ring;              /* referenced */
    uint32_t ring_id;
    uint32_t lease_timeout_ms;   /* as at VideoOpen: workers read it */
    uint32_t deadline_ms;        /* VideoOpen's (0: the configured one) */
    dvpp_buf bytes;              /* the stream so far */
    /* encode */
    dvpp_venc_opts eo;
    dvpp_pixfmt infmt;
    dvpp_venc *enc;              /* opened by the first frame's job */
    dvpp_buf out;                /* the encoder's output (worker side) */
    dvpp_stream *ds;             /* frames in order */
    uint64_t out_held;           /* ch->out's bytes as of the last job (an MP4) */
    struct vout *pending, *pending_tail; /* VideoData not yet queued to send */
    vchan *next;
};

/* What a channel still has to send, in order: encoded bytes as VideoData
 * packets (queued as the connection's output drains: an MP4 of any size
 * goes out at the reader's pace, never past OUTQ_MAX_BYTES), then the
 * answer of the packet that produced them (Ack after eos, or an Error). */
typedef struct vout {
    dvpp_buf data;
    size_t off;                  /* sent so far */
    bool data_msg;               /* send VideoData (at least one packet) */
    bool eos;                    /* the last VideoData says eos */
    uint64_t packets, keyframes;
    uint64_t answer_id;          /* the VideoPacket answered after the data */
    bool ack;                    /* answer Ack (else Error @err, if answer_id) */
    dvpp_err err;
    struct vout *next;
} vout;



/* A client stream: a device stream plus the bookkeeping StreamSync needs. */
typedef struct sstream {
    uint64_t id;
    dvpp_stream *ds;
    uint32_t pending;            /* jobs submitted, Result not yet sent */
    dvpp_status first_error;     /* since the previous sync */
    dvpp_err first_err;
    uint64_t *waiters;           /* StreamSync ids waiting for pending == 0 */
    size_t nwaiters;
    uint64_t destroy_id;         /* StreamDestroy waiting, 0 = none */
    struct sstream *next;
} sstream;

typedef struct outpkt {
    struct outpkt *next;
    size_t len;
    int fds[2];
    int nfds;
    uint8_t data[];
} outpkt;

/* A sealed input memfd kept mapped for the connection: its bytes cannot
 * change (checked seals), so a client that reuses its input buffers pays
 * no mmap/munmap per job. Only the bytes inputs use are mapped (a sealed
 * sparse memfd may claim terabytes), and the cache holds at most MAPCACHE
 * entries and MAPCACHE_BYTES mapped. An entry is found by (device, inode)
 * but used only once kcmp proves the job's descriptor is the same open
 * file as the one the entry keeps: memfd inode numbers may repeat (they
 * wrap at 2^32 and are not checked for uniqueness), so an inode number
 * alone could return another file's bytes. Where kcmp is unavailable the
 * cache is not used. */
#define MAPCACHE 8
#define MAPCACHE_BYTES ((size_t)256 << 20) /* 8 x 32 MiB, the default input limit */
typedef struct cached_map {
    int fd;                      /* a duplicate of the input's fd (identity) */
    dev_t dev;
    ino_t ino;
    void *addr;                  /* NULL = a free entry */
    size_t len;                  /* bytes mapped from offset 0 */
    unsigned refs;               /* jobs using it */
    uint64_t last_use;
} cached_map;

#define STREAM_POOL 64

/* A ring of a connection. Ring ids count up per connection and are never
 * reused, so an answer or notice naming a closed ring can never be taken
 * for the ring opened after it. */
typedef struct owned_ring {
    ipc_ring *ring;              /* owned; NULL = a free entry */
    uint32_t id;
    bool named;                  /* listed in the named-ring registry */
} owned_ring;

typedef struct sbatch {
    uint64_t id;                 /* the device's batch id */
    sjob *job;
    struct sbatch *next;
} sbatch;

struct conn {
    dvppd_sock *s;
    int fd;
    pid_t pid;
    uid_t uid;
    bool hello, closed;
    atomic_uint refs;            /* the connection list's + one per job */
    owned_ring *rings;           /* [max_rings] */
    uint32_t last_ring_id;       /* ids handed out so far */
    sstream *streams;
    uint64_t next_stream;
    uint32_t inflight;
    uint32_t bad_tokens;         /* invalid releases left (BAD_RELEASE_*) */
    uint64_t bad_refill_ms;      /* when tokens were last added */
    sbatch *batches;
    outpkt *outq, *outq_tail;
    size_t outq_bytes;
    cached_map maps[MAPCACHE];
    size_t maps_bytes;           /* mapped by the entries */
    uint64_t map_clock;
    dvpp_stream *idle[STREAM_POOL];  /* per-job streams kept for reuse */
    unsigned nidle;
    vchan *channels;
    unsigned nchannels;          /* open (not yet freed) */
    uint64_t next_channel;
    uint32_t nstreams;           /* client streams */
    uint32_t nwaiters;           /* StreamSyncs waiting, all streams */
    /* the last spec parsed, for clients that repeat it */
    char *last_spec, *last_aipp;
    uint64_t last_gen;           /* the settings generation it was parsed under */
    int last_kind;
    dvppd_spec last;
    conn *next;
};

typedef enum job_type {
    JOB_SINGLE, JOB_BATCH, JOB_NOTICE,
    JOB_VDEC,      /* a decode channel's stream, decoded on a worker */
    JOB_VFRAME,    /* one decoded frame in a slot: a VideoFrame to send */
    JOB_VENC,      /* one raw frame through an encode channel */
} job_type;



/* A mapped input memfd (from the connection's cache, or its own). */
typedef struct input_map {
    void *addr;
    size_t len;
    int cached;                  /* index in conn.maps, -1 = own mapping */
} input_map;

struct sjob {
    sjob *next;                  /* the done queue */
    job_type type;
    conn *c;                     /* referenced */
    uint64_t id;
    Dvpp__Envelope *env;         /* owns inline inputs and strings */
    Dvpp__Kind kind;
    dvppd_spec spec;
    dvpp_pipejob pj;
    dvpp_pipeline_out out;
    const uint8_t *in;
    size_t in_len;
    input_map *maps;             /* memfd inputs */
    size_t nmaps;
    ipc_ring *ring;              /* referenced while writing */
    uint32_t ring_id, slot;
    bool has_slot;
    uint8_t *inline_out;
    size_t inline_cap;
    sstream *st;                 /* a client stream, or NULL */
    dvpp_stream *own_stream;     /* stream 0: one per job */
    dvpp_status status;
    dvpp_err err;
    uint64_t t_submit;
    /* batches */
    dvpp_batchjob *bj;
    dvpp_batchjob_input *inputs;
    size_t n;
    /* notices (HTTP deliveries, video frames) */
    ipc_slot_meta meta;
    uint32_t generation;
    /* video */
    vchan *vc;
    dvpp_vframe vf;              /* JOB_VFRAME: the frame's facts */
    dvpp_buf vdata;              /* JOB_VENC: the bytes this frame produced */
    bool force_idr, eos;
    uint64_t frames;             /* JOB_VDEC: frames delivered; JOB_VENC: packets */
    uint64_t keyframes;          /* JOB_VENC */
    uint64_t held;               /* JOB_VENC: the MP4 bytes the encoder holds after it */
    vdecode *vd;                 /* JOB_VDEC: its thread and baton */
};

/* The named-ring registry: what HTTP threads may reach (?ring=NAME). It
 * has its own mutex and never walks the connection list; each entry holds
 * a reference to its ring and one to the owner's connection record, so a
 * delivery that found an entry keeps both alive however soon the owner
 * disconnects. Names are unique per owner uid. */
typedef struct named_ring {
    char name[DVPPD_RING_NAME_MAX + 1];
    uid_t uid;                   /* the owner's */
    bool http;                   /* the owner lets HTTP requests deliver */
    ipc_ring *ring;              /* referenced */
    conn *owner;                 /* referenced */
    uint32_t ring_id;            /* on the owner's connection */
    struct named_ring *next;
} named_ring;

typedef struct ring_registry {
    pthread_mutex_t mu;
    named_ring *head;
} ring_registry;

typedef struct counters {
    atomic_uint_fast64_t connections, leases_expired, bad_releases, dropped, submitted,
        failed, refused_peers;
} counters;

struct dvppd_sock {
    dvppd_sock_config cfg;       /* as started: the restart-only keys */
    dvppd_live *live;            /* the settings a reload replaces */
    const dvppd_settings *set;   /* socket thread: current as of its last wake-up */
    dvpp_device *device;
    char path[108];
    bool own_path;
    int lfd, epfd, evfd;
    pthread_t thread;
    atomic_bool stop, draining;
    atomic_uint inflight;        /* jobs of every connection */
    atomic_uint video_out;       /* encoded outputs still to send (vout) */
    atomic_bool video_cancel;    /* a stop past its drain time: decodes end */
    conn *conns;                 /* epoll thread only */
    unsigned nconns;
    atomic_uint open_conns;      /* nconns, for dvppd_sock_status */
    atomic_uint_fast64_t turns;  /* loop iterations: the thread is alive */
    uint8_t *rx;
    size_t rx_cap;
    pthread_mutex_t mu;          /* the done queue */
    sjob *done_head, *done_tail;
    ring_registry names;         /* named rings, shared with HTTP threads */
    ipc_ring_gens gens;          /* every ring's generations */
    counters n;
};

/* Epoll tags: the listening socket and the eventfd by these addresses,
 * connections by their record. */
static char k_tag_listen, k_tag_event;

static uint64_t now_ms(void)
{
    return dvpp_now_ns() / 1000000u;
}

/* --- connections: references and sending -------------------------------------------- */

static void conn_ref(conn *c)
{
    atomic_fetch_add(&c->refs, 1);
}

static void conn_unref(conn *c)
{
    if (c && atomic_fetch_sub(&c->refs, 1) == 1) {
        free(c->rings);
        free(c);
    }
}

static void conn_close(conn *c, const char *why);

/* Pack @e and send it (or queue it when the socket is full). */
static void send_env(conn *c, Dvpp__Envelope *e, const int *fds, int nfds)
{
    size_t len = dvpp__envelope__get_packed_size(e);
    outpkt *p;
    int r = -EAGAIN;

    if (c->closed)
        return;
    p = malloc(sizeof(*p) + len);
    if (!p) {
        conn_close(c, "out of memory");
        return;
    }
    dvpp__envelope__pack(e, p->data);
    p->len = len;
    p->next = NULL;
    p->nfds = 0;
    if (!c->outq)
        r = ipc_send(c->fd, p->data, len, fds, nfds);
    if (r == 0) {
        free(p);
        return;
    }
    if (r != -EAGAIN || c->outq_bytes + len > OUTQ_MAX_BYTES) {
        free(p);
        conn_close(c, r == -EAGAIN ? "consumer stopped reading" : "send failed");
        return;
    }
    for (int i = 0; i < nfds && i < 2; i++)
        p->fds[p->nfds++] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
    if (c->outq_tail)
        c->outq_tail->next = p;
    else
        c->outq = p;
    c->outq_tail = p;
    c->outq_bytes += len;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    epoll_ctl(c->s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void pump_video(conn *c);

static void flush_outq(conn *c)
{
    while (c->outq && !c->closed) {
        outpkt *p = c->outq;
        int r = ipc_send(c->fd, p->data, p->len, p->fds, p->nfds);
        if (r == -EAGAIN)
            break;
        if (r != 0) {
            conn_close(c, "send failed");
            return;
        }
        c->outq = p->next;
        if (!c->outq)
            c->outq_tail = NULL;
        c->outq_bytes -= p->len;
        ipc_close_fds(p->fds, p->nfds);
        free(p);
    }
    if (!c->closed && !c->outq) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(c->s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    }
    if (!c->closed)
        pump_video(c); /* room again: encoded video waiting goes on */
}

static void envelope_init(Dvpp__Envelope *e, uint64_t id)
{
    dvpp__envelope__init(e);
    e->protocol = PROTOCOL;
    e->id = id;
}

static void send_error(conn *c, uint64_t id, dvpp_status st, const char *field,
                       const char *msg)
{
    Dvpp__Envelope e;
    Dvpp__Error er;

    envelope_init(&e, id);
    dvpp__error__init(&er);
    er.status = st;
    er.code = (char *)dvpp_status_name(st);
    er.message = (char *)(msg && *msg ? msg : dvpp_strerror(st));
    er.field = (char *)(field ? field : "");
    e.body_case = DVPP__ENVELOPE__BODY_ERROR;
    e.error = &er;
    send_env(c, &e, NULL, 0);
}

static void send_err(conn *c, uint64_t id, const dvpp_err *err)
{
    send_error(c, id, err->status, err->field, err->msg);
}

static void send_ack(conn *c, uint64_t id)
{
    Dvpp__Envelope e;
    Dvpp__Ack a;

    envelope_init(&e, id);
    dvpp__ack__init(&a);
    e.body_case = DVPP__ENVELOPE__BODY_ACK;
    e.ack = &a;
    send_env(c, &e, NULL, 0);
}

/* A protocol violation: say why (best effort), count, drop. */
static void violation(conn *c, uint64_t id, const char *why)
{
    send_error(c, id, DVPP_EINVAL, "packet", why);
    atomic_fetch_add(&c->s->n.dropped, 1);
    conn_close(c, why);
}

/* --- the named-ring registry ----------------------------------------------------- */

static void registry_init(ring_registry *g)
{
    pthread_mutex_init(&g->mu, NULL);
    g->head = NULL;
}

/* Every entry is gone by then (rings close with their connections). */
static void registry_fini(ring_registry *g)
{
    pthread_mutex_destroy(&g->mu);
}

static void conn_ref(conn *c);
static void conn_unref(conn *c);

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
        conn_ref(owner);
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
        conn_unref(e->owner);
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
        conn_ref(out->owner);
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
static ipc_ring *conn_ring(conn *c, uint32_t id)
{
    owned_ring *e = conn_ring_entry(c, id);

    return e ? e->ring : NULL;
}

static void close_ring(conn *c, uint32_t id)
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

    envelope_init(&e, id);
    dvpp__ring_opened__init(&ro);
    ro.ring = ring_id;
    ro.slots = ipc_ring_slots(r);
    ro.slot_bytes = ipc_ring_slot_bytes(r);
    ro.map_bytes = ipc_ring_map_bytes(r);
    ro.data_offset = ipc_ring_data_offset(r);
    e.body_case = DVPP__ENVELOPE__BODY_RING_OPENED;
    e.ring_opened = &ro;
    send_env(c, &e, &fd, 1);
}

static void on_ring_open(conn *c, uint64_t id, const Dvpp__RingOpen *m)
{
    dvppd_sock *s = c->s;
    ipc_ring *r = NULL;
    owned_ring *slot = NULL;
    dvpp_err err;
    int fd, rc;

    for (uint32_t i = 0; !slot && i < s->cfg.max_rings; i++)
        slot = c->rings[i].ring ? NULL : &c->rings[i];
    if (!slot || c->last_ring_id == UINT32_MAX) {
        send_error(c, id, DVPP_ELIMIT, "ring", slot ? "this connection has opened all the "
                   "rings it may: reconnect" : "too many rings on this connection");
        return;
    }
    if (m->slots == 0 || m->slots > s->set->cfg.sock.max_slots || m->slot_bytes == 0 ||
        m->slot_bytes > s->set->cfg.sock.max_ring_bytes / m->slots) {
        send_error(c, id, DVPP_ELIMIT, "slots", "slots x slot_bytes outside the limits "
                   "(Welcome.max_slots, max_ring_bytes)");
        return;
    }
    dvpp_err_clear(&err);
    if (ring_open_check(m, &err) != DVPP_OK) {
        send_err(c, id, &err);
        return;
    }
    rc = ipc_ring_create(m->slots, m->slot_bytes, "dvppd-ring", &r);
    fd = rc == 0 ? ipc_ring_consumer_fd(r) : rc;
    if (fd < 0) {
        ipc_ring_unref(r);
        send_error(c, id, fd == -EINVAL ? DVPP_EINVAL : DVPP_ENOMEM, "ring",
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
            send_error(c, id, DVPP_EBUSY, "name", "a ring of that name is open (names are "
                       "unique per owner uid)");
        else
            send_error(c, id, DVPP_ENOMEM, "name", "out of memory");
        return;
    }
    *slot = (owned_ring){r, ++c->last_ring_id, m->name[0] != '\0'};
    send_ring_opened(c, id, slot->id, r, fd);
    close(fd);
}

/* Take one invalid release from @c's budget: false once it is spent. */
static bool bad_release_allowed(conn *c)
{
    uint64_t now = now_ms();
    uint64_t add = (now - c->bad_refill_ms) * BAD_RELEASE_RATE / 1000u;

    if (add) {
        c->bad_tokens = add >= BAD_RELEASE_BURST - c->bad_tokens ? BAD_RELEASE_BURST
                                                                  : c->bad_tokens + (uint32_t)add;
        c->bad_refill_ms = now;
    }
    if (!c->bad_tokens)
        return false;
    c->bad_tokens--;
    return true;
}

static void on_slot_release(conn *c, uint64_t id, const Dvpp__SlotRelease *m)
{
    ipc_ring *r = conn_ring(c, m->ring);

    if (!r || ipc_ring_release(r, m->slot, m->generation) != 0) {
        atomic_fetch_add(&c->s->n.bad_releases, 1);
        if (!bad_release_allowed(c)) {
            send_error(c, id, DVPP_ELIMIT, "slot", "too many invalid slot releases: "
                       "connection dropped");
            atomic_fetch_add(&c->s->n.dropped, 1);
            conn_close(c, "too many invalid slot releases");
            return;
        }
        send_error(c, id, DVPP_EINVAL, "slot", "no such lease (wrong ring, slot or "
                   "generation, or already released)");
    }
}

/* --- streams ------------------------------------------------------------------------ */

static sstream *find_stream(conn *c, uint64_t id)
{
    sstream *st = c->streams;

    while (st && st->id != id)
        st = st->next;
    return st;
}

static void stream_free(conn *c, sstream *st)
{
    sstream **pp = &c->streams;

    while (*pp && *pp != st)
        pp = &(*pp)->next;
    if (*pp)
        *pp = st->next;
    dvpp_stream_free(st->ds);
    c->nwaiters -= (uint32_t)st->nwaiters;
    c->nstreams--;
    free(st->waiters);
    free(st);
}

/* Answer StreamSync / StreamDestroy waiting for @st to go idle. */
static void stream_settle(conn *c, sstream *st)
{
    if (st->pending)
        return;
    for (size_t i = 0; i < st->nwaiters; i++) {
        if (st->first_error != DVPP_OK)
            send_err(c, st->waiters[i], &st->first_err);
        else
            send_ack(c, st->waiters[i]);
        st->first_error = DVPP_OK;
    }
    c->nwaiters -= (uint32_t)st->nwaiters;
    st->nwaiters = 0;
    if (st->destroy_id) {
        send_ack(c, st->destroy_id);
        stream_free(c, st);
    }
}

static void on_stream_create(conn *c, uint64_t id)
{
    Dvpp__Envelope e;
    Dvpp__StreamCreated sc;
    sstream *st;
    dvpp_err err;

    if (c->nstreams >= c->s->set->cfg.sock.max_streams) {
        dvpp_err_set(&err, DVPP_ELIMIT, "max_streams", "this connection has %u streams "
                     "(socket.max_streams): destroy one first", c->nstreams);
        send_err(c, id, &err);
        return;
    }
    st = calloc(1, sizeof(*st));
    if (!st || dvpp_stream_new(c->s->device, 0, &st->ds, &err) != DVPP_OK) {
        free(st);
        send_error(c, id, DVPP_ENOMEM, NULL, "cannot create a stream");
        return;
    }
    st->id = ++c->next_stream;
    st->next = c->streams;
    c->streams = st;
    c->nstreams++;
    envelope_init(&e, id);
    dvpp__stream_created__init(&sc);
    sc.stream = st->id;
    e.body_case = DVPP__ENVELOPE__BODY_STREAM_CREATED;
    e.stream_created = &sc;
    send_env(c, &e, NULL, 0);
}

static void on_stream_wait(conn *c, uint64_t id, uint64_t stream, bool destroy)
{
    sstream *st = find_stream(c, stream);
    uint64_t *w;

    if (!st || st->destroy_id) {
        send_error(c, id, DVPP_ENOTFOUND, "stream", "no such stream");
        return;
    }
    if (destroy) {
        st->destroy_id = id;
    } else if (st->pending && c->nwaiters >= c->s->set->cfg.sock.max_sync_waiters) {
        dvpp_err err;
        dvpp_err_set(&err, DVPP_ELIMIT, "max_sync_waiters", "%u StreamSyncs are waiting on "
                     "this connection (socket.max_sync_waiters)", c->nwaiters);
        send_err(c, id, &err);
        return;
    } else {
        w = realloc(st->waiters, (st->nwaiters + 1) * sizeof(*w));
        if (!w) {
            send_error(c, id, DVPP_ENOMEM, NULL, "out of memory");
            return;
        }
        st->waiters = w;
        st->waiters[st->nwaiters++] = id;
        c->nwaiters++;
    }
    stream_settle(c, st);
}

/* --- jobs: inputs, outputs ---------------------------------------------------------- */

static void unmap_inputs(sjob *j)
{
    for (size_t i = 0; i < j->nmaps; i++) {
        input_map *m = &j->maps[i];
        if (m->cached >= 0)
            j->c->maps[m->cached].refs--;
        else if (m->addr)
            munmap(m->addr, m->len);
    }
    free(j->maps);
    j->maps = NULL;
    j->nmaps = 0;
}

/* Keep a per-job stream for the connection's next unordered job. */
static void stream_recycle(conn *c, dvpp_stream *ds)
{
    if (!ds)
        return;
    if (!c->closed && c->nidle < STREAM_POOL)
        c->idle[c->nidle++] = ds;
    else
        dvpp_stream_free(ds);
}

static void vdecode_free(vdecode *vd);

static void job_free(sjob *j)
{
    vdecode_free(j->vd);
    dvpp_batchjob_free(j->bj);
    stream_recycle(j->c, j->own_stream);
    unmap_inputs(j);
    if (j->has_slot)
        ipc_ring_abort(j->ring, j->slot);
    ipc_ring_unref(j->ring);
    free(j->inline_out);
    free(j->inputs);
    dvpp_buf_fini(&j->vdata);
    dvpp_buf_fini(&j->out.encoded);
    if (j->env)
        dvpp__envelope__free_unpacked(j->env, NULL);
    conn_unref(j->c);
    free(j);
}

/* --- jobs: input mappings (the connection's cache) ---------------------------------- */

static void cache_entry_drop(conn *c, cached_map *e)
{
    munmap(e->addr, e->len);
    close(e->fd);
    c->maps_bytes -= e->len;
    *e = (cached_map){.fd = -1};
}

/* The entry holding @fd's file with at least @len bytes mapped: 1 (into
 * *k), 0 when none does, -1 when the file's identity cannot be proven
 * (then neither use nor add an entry). */
static int cache_find(conn *c, int fd, const struct stat *sb, size_t len, int *k)
{
    for (int i = 0; i < MAPCACHE; i++) {
        cached_map *e = &c->maps[i];
        int same;
        if (!e->addr || e->dev != sb->st_dev || e->ino != sb->st_ino)
            continue;
        same = ipc_same_file(e->fd, fd);
        if (same < 0)
            return -1;
        if (same && e->len >= len) {
            *k = i;
            return 1;
        }
    }
    return 0;
}

/* Room for a mapping of @len bytes: a free entry (idle ones evicted, least
 * recently used first, until the entry and byte caps allow it), or -1. */
static int cache_make_room(conn *c, size_t len)
{
    if (len > MAPCACHE_BYTES)
        return -1;
    for (;;) {
        int free_k = -1, victim = -1;
        for (int i = 0; i < MAPCACHE; i++) {
            cached_map *e = &c->maps[i];
            if (!e->addr && free_k < 0)
                free_k = i;
            else if (e->addr && e->refs == 0 &&
                     (victim < 0 || e->last_use < c->maps[victim].last_use))
                victim = i;
        }
        if (free_k >= 0 && c->maps_bytes + len <= MAPCACHE_BYTES)
            return free_k;
        if (victim < 0)
            return -1;
        cache_entry_drop(c, &c->maps[victim]);
    }
}

/* Idle entries go (a closing connection; busy ones go with their jobs). */
static void cache_drop_all(conn *c)
{
    for (int i = 0; i < MAPCACHE; i++)
        if (c->maps[i].addr && c->maps[i].refs == 0)
            cache_entry_drop(c, &c->maps[i]);
}

/* Map the first @want bytes of sealed memfd @fd read-only, through the
 * connection's cache when it can. */
static dvpp_status map_input(conn *c, int fd, uint64_t want, input_map *m, dvpp_err *err)
{
    dvppd_sock *s = c->s;
    struct stat sb;
    uint64_t size;
    void *addr;
    int k = -1, found, keep;

    m->cached = -1;
    if (!ipc_memfd_is_sealed(fd, &size) || fstat(fd, &sb) != 0)
        return dvpp_err_set(err, DVPP_EINVAL, "input_fd", "the input fd must be a memfd "
                            "sealed with F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_WRITE");
    if (want == 0 || want > size || want > s->set->cfg.limits.max_encoded_bytes)
        return dvpp_err_set(err, want > size ? DVPP_EINVAL : DVPP_ELIMIT, "input_len",
                            "input_len %llu: the memfd has %llu bytes, the limit is %llu",
                            (unsigned long long)want, (unsigned long long)size,
                            (unsigned long long)s->set->cfg.limits.max_encoded_bytes);
    found = cache_find(c, fd, &sb, (size_t)want, &k);
    if (found == 1) {
        cached_map *e = &c->maps[k];
        e->refs++;
        e->last_use = ++c->map_clock;
        *m = (input_map){e->addr, (size_t)want, k};
        return DVPP_OK;
    }
    /* want <= max_encoded_bytes: never the memfd's claimed size */
    addr = mmap(NULL, (size_t)want, PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED)
        return dvpp_err_set(err, DVPP_ESYS, "input_fd", "cannot map the input: %s",
                            strerror(errno));
    *m = (input_map){addr, (size_t)want, -1};
    keep = found == 0 ? cache_make_room(c, (size_t)want) : -1;
    if (keep >= 0) {
        int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (dup >= 0) {
            c->maps[keep] = (cached_map){dup, sb.st_dev, sb.st_ino, addr, (size_t)want, 1,
                                         ++c->map_clock};
            c->maps_bytes += (size_t)want;
            m->cached = keep;
        }
    }
    return DVPP_OK;
}

static dvppd_spec_kind spec_kind(Dvpp__Kind k)
{
    return k == DVPP__KIND__IMAGE ? DVPPD_SPEC_IMAGE
                                  : k == DVPP__KIND__PIXELS ? DVPPD_SPEC_DECODE
                                                            : DVPPD_SPEC_TENSOR;
}

static bool same_text(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

/* Remember @spec's parse for the next job that repeats it (most clients
 * send one spec many times). */
static void remember_spec(conn *c, int kind, const char *spec, const char *aipp,
                          const dvppd_spec *parsed)
{
    char *a = strdup(spec ? spec : ""), *b = strdup(aipp ? aipp : "");

    if (!a || !b) {
        free(a), free(b);
        return;
    }
    free(c->last_spec), free(c->last_aipp);
    c->last_spec = a, c->last_aipp = b;
    c->last_kind = kind;
    c->last_gen = c->s->set->generation;
    c->last = *parsed;
}

static dvpp_status build_spec(sjob *j, dvppd_spec_kind kind, const char *spec,
                              const char *aipp, dvpp_err *err)
{
    conn *c = j->c;
    dvppd_spec_env env = {kind, dvppd_aipp_find, (void *)&c->s->set->aipp,
                          aipp && *aipp ? aipp : NULL, aipp ? strlen(aipp) : 0};
    dvpp_status st;

    /* A reload may have changed the named AIPP configs or the limits the
     * kept parse was validated with: only a parse of this generation. */
    if (c->last_spec && c->last_kind == (int)kind && c->last_gen == c->s->set->generation &&
        same_text(c->last_spec, spec) && same_text(c->last_aipp, aipp)) {
        j->spec = c->last; /* validated when it was parsed */
        return DVPP_OK;
    }
    st = spec && *spec ? dvppd_spec_from_json(&env, spec, strlen(spec), &j->spec, err)
                       : dvppd_spec_from_query(&env, NULL, 0, &j->spec, err);
    if (st == DVPP_OK && j->spec.ring[0])
        st = dvpp_err_set(err, DVPP_EINVAL, "output.ring",
                          "rings are named in the message, not the spec");
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&j->spec.pipe, &c->s->set->cfg.limits, err);
    if (st == DVPP_OK)
        remember_spec(c, (int)kind, spec, aipp, &j->spec);
    return st;
}

/* A slot of ring @id holding @bytes (or inline room for it). */
static dvpp_status take_output(sjob *j, uint32_t id, uint64_t bytes, uint8_t **dest,
                               dvpp_err *err)
{
    dvppd_sock *s = j->c->s;
    int rc;

    if (id == 0) {
        if (bytes > s->cfg.max_inline)
            return dvpp_err_set(err, DVPP_EINVAL, "ring", "an output of %llu bytes needs "
                                "a ring (inline outputs: at most %llu)",
                                (unsigned long long)bytes,
                                (unsigned long long)s->cfg.max_inline);
        j->inline_out = malloc(bytes ? bytes : 1);
        j->inline_cap = bytes;
        *dest = j->inline_out;
        return j->inline_out ? DVPP_OK : dvpp_err_set(err, DVPP_ENOMEM, NULL, "output");
    }
    j->ring = conn_ring(j->c, id);
    if (!j->ring)
        return dvpp_err_set(err, DVPP_ENOTFOUND, "ring", "no ring %u on this connection", id);
    if (bytes > ipc_ring_slot_bytes(j->ring)) {
        uint64_t have = ipc_ring_slot_bytes(j->ring);
        j->ring = NULL;
        return dvpp_err_set(err, DVPP_ENOSPC, "ring", "the output needs %llu bytes, a slot "
                            "has %llu", (unsigned long long)bytes, (unsigned long long)have);
    }
    ipc_ring_ref(j->ring);
    j->ring_id = id;
    rc = ipc_ring_acquire(j->ring, &j->slot);
    if (rc != 0)
        return dvpp_err_set(err, DVPP_EAGAIN, "ring", "ring %u has no free slot: release "
                            "slots, then retry", id);
    j->has_slot = true;
    *dest = ipc_ring_payload(j->ring, j->slot);
    return DVPP_OK;
}

/* Size the output with a header probe + plan and point the run at it. */
static dvpp_status prepare_output(sjob *j, uint32_t ring, dvpp_err *err)
{
    dvpp_pipeline *p = &j->spec.pipe;
    dvpp_pipe_source src;
    dvpp_pipeline_plan plan;
    uint8_t *dest = NULL;
    dvpp_status st = dvpp_pipeline_probe(p, j->in, j->in_len, &j->c->s->set->cfg.limits, &src, err);

    if (st == DVPP_OK)
        st = dvpp_pipeline_plan_make(p, &src, &plan, err);
    if (st != DVPP_OK)
        return st;
    j->pj.pixels = src.is_jpeg ? (uint64_t)src.jpeg.width * src.jpeg.height
                               : (uint64_t)src.width * src.height;
    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        dvpp_tensor *t = &j->out.tensor;
        st = dvpp_tensor_init(t, plan.dtype, plan.layout, 1, plan.c, plan.h, plan.w, err);
        if (st == DVPP_OK)
            st = take_output(j, ring, t->bytes, &dest, err);
        t->data = dest;
        return st;
    }
    if (p->encoding == DVPP_PIPE_ENC_NONE) {
        st = take_output(j, ring, plan.out_bytes, &dest, err);
        j->out.image.data = dest;
        j->out.image.size = plan.out_bytes;
        return st;
    }
    /* Encoded: the size is known only after the run; the slot is taken
     * now so a full ring refuses at once. */
    return take_output(j, ring, ring ? 1 : 0, &dest, err);
}

/* --- jobs: completion ----------------------------------------------------------------- */

static void post_done(dvppd_sock *s, sjob *j)
{
    uint64_t one = 1;
    ssize_t w;

    pthread_mutex_lock(&s->mu);
    j->next = NULL;
    if (s->done_tail)
        s->done_tail->next = j;
    else
        s->done_head = j;
    s->done_tail = j;
    pthread_mutex_unlock(&s->mu);
    w = write(s->evfd, &one, sizeof(one));
    (void)w; /* the counter only saturates, never loses the wake-up */
}

static void single_done(void *ctx, dvpp_status st, const dvpp_err *err)
{
    sjob *j = ctx;

    j->status = st;
    if (st != DVPP_OK && err)
        j->err = *err;
    post_done(j->c->s, j);
}

static void batch_done(void *ctx)
{
    sjob *j = ctx;

    post_done(j->c->s, j);
}

static const char *dtype_name(dvpp_dtype d)
{
    static const char *const n[] = {"uint8", "int8", "float16", "float32"};
    return (unsigned)d < 4 ? n[d] : "unknown";
}

static const char *layout_name(dvpp_layout l)
{
    static const char *const n[] = {"NCHW", "NHWC", "NC1HWC0"};
    return (unsigned)l < 3 ? n[l] : "";
}

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

/* The output's description into @meta (@shape: storage for it) and @m. */
static void describe_output(sjob *j, Dvpp__TensorMeta *meta, int64_t *shape,
                            ipc_slot_meta *m, size_t *bytes)
{
    const dvpp_pipeline *p = &j->spec.pipe;

    dvpp__tensor_meta__init(meta);
    memset(m, 0, sizeof(*m));
    if (p->output == DVPP_PIPE_OUT_TENSOR) {
        const dvpp_tensor *t = &j->out.tensor;
        dvppd_slot_meta_tensor(m, t, &j->out.geom);
        meta->dtype = (char *)dtype_name(t->dtype);
        meta->layout = (char *)layout_name(t->layout);
        for (unsigned i = 0; i < t->ndim; i++)
            shape[i] = t->shape[i];
        meta->n_shape = t->ndim;
        meta->shape = shape;
        *bytes = t->bytes;
    } else {
        const dvpp_image *img = &j->out.image;
        bool enc = p->encoding != DVPP_PIPE_ENC_NONE;
        *bytes = enc ? j->out.encoded.len : j->out.plan.out_bytes;
        meta->dtype = "uint8";
        meta->layout = "";
        meta->format = enc ? (p->encoding == DVPP_PIPE_ENC_PNG ? "png" : "jpeg")
                           : (char *)dvpp_pixfmt_name(img->format);
        meta->width = j->out.plan.img_w;
        meta->height = j->out.plan.img_h;
        if (!enc) {
            meta->width_stride = img->width_stride;
            meta->height_stride = img->height_stride;
        }
        shape[0] = (int64_t)*bytes;
        meta->n_shape = 1;
        meta->shape = shape;
        m->dtype = DVPP_RING_DTYPE_U8;
        m->layout = DVPP_RING_LAYOUT_IMAGE;
        m->ndim = 1;
        m->shape[0] = (int64_t)*bytes;
        m->scale_x = j->out.geom.scale_x, m->scale_y = j->out.geom.scale_y;
        m->pad_x = j->out.geom.pad_x, m->pad_y = j->out.geom.pad_y;
    }
    m->byte_length = *bytes;
    meta->bytes = *bytes;
}

/* Encoded images are copied into their slot or inline buffer now. */
static dvpp_status place_encoded(sjob *j, dvpp_err *err)
{
    const dvpp_buf *b = &j->out.encoded;
    uint64_t cap = j->ring ? ipc_ring_slot_bytes(j->ring) : j->c->s->cfg.max_inline;
    uint8_t *dest;

    if (b->len > cap)
        return dvpp_err_set(err, DVPP_ENOSPC, "ring", "the encoded image has %zu bytes, "
                            "the %s holds %llu", b->len, j->ring ? "slot" : "inline answer",
                            (unsigned long long)cap);
    if (j->ring) {
        dest = ipc_ring_payload(j->ring, j->slot);
    } else {
        free(j->inline_out);
        j->inline_out = malloc(b->len ? b->len : 1);
        if (!j->inline_out)
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "output");
        dest = j->inline_out;
    }
    memcpy(dest, b->data, b->len);
    j->inline_cap = b->len;
    return DVPP_OK;
}

static void fill_failure(Dvpp__Result *r, const dvpp_err *err, dvpp_status st)
{
    r->status = st;
    r->code = (char *)dvpp_status_name(st);
    r->message = (char *)(err->msg[0] ? err->msg : dvpp_strerror(st));
    r->field = (char *)err->field;
}

static uint64_t us(uint64_t ns)
{
    return ns / 1000;
}

/* The Result of a single job; leases its slot. */
static void answer_single(sjob *j)
{
    conn *c = j->c;
    Dvpp__Envelope e;
    Dvpp__Result r;
    Dvpp__TensorMeta meta;
    Dvpp__Geom g;
    Dvpp__Timings tm;
    ipc_slot_meta m;
    int64_t shape[DVPP_RING_MAX_DIMS];
    size_t bytes = 0;
    dvpp_status st = j->status;

    envelope_init(&e, j->id);
    dvpp__result__init(&r);
    r.origin = "socket";
    if (st == DVPP_OK && j->spec.pipe.output == DVPP_PIPE_OUT_IMAGE &&
        j->spec.pipe.encoding != DVPP_PIPE_ENC_NONE)
        st = place_encoded(j, &j->err);
    if (st == DVPP_OK) {
        describe_output(j, &meta, shape, &m, &bytes);
        if (j->has_slot) {
            st = ipc_ring_lease(j->ring, j->slot, &m,
                                now_ms() + c->s->set->cfg.sock.lease_timeout_ms, &r.generation) == 0
                     ? DVPP_OK
                     : dvpp_err_set(&j->err, DVPP_ECANCELED, "ring",
                                    "the ring was closed before the job finished");
            j->has_slot = false; /* leased, or freed by the closed ring */
            r.ring = j->ring_id;
            r.slot = j->slot;
            r.offset = ipc_ring_payload_offset(j->ring, j->slot);
        } else {
            r.data.data = j->inline_out;
            r.data.len = bytes;
        }
    }
    if (st != DVPP_OK) {
        dvpp__result__init(&r);
        r.origin = "socket";
        fill_failure(&r, &j->err, st);
        atomic_fetch_add(&c->s->n.failed, 1);
    } else {
        dvpp__geom__init(&g);
        g.scale_x = j->out.geom.scale_x, g.scale_y = j->out.geom.scale_y;
        g.pad_x = j->out.geom.pad_x, g.pad_y = j->out.geom.pad_y;
        dvpp__timings__init(&tm);
        tm.queue_us = j->pj.started_ns > j->t_submit ? us(j->pj.started_ns - j->t_submit) : 0;
        tm.decode_us = us(j->out.stage_ns[DVPP_PIPE_STAGE_DECODE]);
        tm.vpc_us = us(j->out.stage_ns[DVPP_PIPE_STAGE_VPC]);
        tm.post_us = us(j->out.stage_ns[DVPP_PIPE_STAGE_POST]);
        tm.total_us = us(dvpp_now_ns() - j->t_submit);
        r.meta = &meta;
        r.geom = &g;
        r.timings = &tm;
    }
    e.body_case = DVPP__ENVELOPE__BODY_RESULT;
    e.result = &r;
    send_env(c, &e, NULL, 0);
    if (j->st) {
        if (st != DVPP_OK && j->st->first_error == DVPP_OK) {
            j->st->first_error = st;
            j->st->first_err = j->err;
            j->st->first_err.status = st;
        }
        j->st->pending--;
        stream_settle(c, j->st);
    }
}

static void unlist_batch(conn *c, sjob *j)
{
    sbatch **pp = &c->batches;

    while (*pp && (*pp)->job != j)
        pp = &(*pp)->next;
    if (*pp) {
        sbatch *b = *pp;
        *pp = b->next;
        free(b);
    }
}

static void answer_batch(sjob *j)
{
    conn *c = j->c;
    Dvpp__Envelope e;
    Dvpp__Result r;
    Dvpp__TensorMeta meta;
    ipc_slot_meta m;
    int64_t shape[DVPP_RING_MAX_DIMS];
    int32_t *items = calloc(j->n, sizeof(*items));
    dvpp_err err;
    dvpp_status st;

    dvpp_err_clear(&err);
    st = dvpp_batchjob_wait(j->bj, &err); /* finished: returns at once */
    envelope_init(&e, j->id);
    dvpp__result__init(&r);
    r.origin = "socket";
    r.batch = dvpp_batchjob_id(j->bj);
    for (size_t i = 0; items && i < j->n; i++)
        items[i] = dvpp_batchjob_item_status(j->bj, i, NULL);
    if (st == DVPP_OK) {
        dvpp__tensor_meta__init(&meta);
        dvppd_slot_meta_tensor(&m, &j->out.tensor, NULL);
        meta.dtype = (char *)dtype_name(j->out.tensor.dtype);
        meta.layout = (char *)layout_name(j->out.tensor.layout);
        for (unsigned i = 0; i < j->out.tensor.ndim; i++)
            shape[i] = j->out.tensor.shape[i];
        meta.n_shape = j->out.tensor.ndim;
        meta.shape = shape;
        meta.bytes = j->out.tensor.bytes;
        if (ipc_ring_lease(j->ring, j->slot, &m, now_ms() + c->s->set->cfg.sock.lease_timeout_ms,
                           &r.generation) != 0)
            st = dvpp_err_set(&err, DVPP_ECANCELED, "ring", "the ring was closed");
        j->has_slot = false;
        r.ring = j->ring_id;
        r.slot = j->slot;
        r.offset = ipc_ring_payload_offset(j->ring, j->slot);
        r.meta = &meta;
    }
    if (st != DVPP_OK) {
        fill_failure(&r, &err, st);
        r.ring = r.slot = r.generation = 0;
        r.meta = NULL;
    }
    r.n_item_status = items ? j->n : 0;
    r.item_status = items;
    e.body_case = DVPP__ENVELOPE__BODY_RESULT;
    e.result = &r;
    send_env(c, &e, NULL, 0);
    free(items);
    unlist_batch(c, j);
}

static void answer_notice(sjob *j)
{
    Dvpp__Envelope e;
    Dvpp__Result r;
    Dvpp__TensorMeta meta;
    Dvpp__Geom g;
    int64_t shape[DVPP_RING_MAX_DIMS];

    envelope_init(&e, 0);
    dvpp__result__init(&r);
    dvpp__tensor_meta__init(&meta);
    dvpp__geom__init(&g);
    r.origin = "http";
    r.ring = j->ring_id;
    r.slot = j->slot;
    r.generation = j->generation;
    r.offset = ipc_ring_payload_offset(j->ring, j->slot);
    meta.dtype = (char *)dtype_name((dvpp_dtype)j->meta.dtype);
    meta.layout = (char *)layout_name((dvpp_layout)j->meta.layout);
    for (unsigned i = 0; i < j->meta.ndim; i++)
        shape[i] = j->meta.shape[i];
    meta.n_shape = j->meta.ndim;
    meta.shape = shape;
    meta.bytes = j->meta.byte_length;
    g.scale_x = j->meta.scale_x, g.scale_y = j->meta.scale_y;
    g.pad_x = j->meta.pad_x, g.pad_y = j->meta.pad_y;
    r.meta = &meta;
    r.geom = &g;
    e.body_case = DVPP__ENVELOPE__BODY_RESULT;
    e.result = &r;
    send_env(j->c, &e, NULL, 0);
}

static void send_video_frame(sjob *j);
static void answer_video(sjob *j);
static void vchan_settle(conn *c, vchan *ch);

static void drain_done(dvppd_sock *s)
{
    uint64_t v;
    sjob *j;
    ssize_t rd = read(s->evfd, &v, sizeof(v));

    (void)rd;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        j = s->done_head;
        if (j) {
            s->done_head = j->next;
            if (!s->done_head)
                s->done_tail = NULL;
        }
        pthread_mutex_unlock(&s->mu);
        if (!j)
            return;
        if (!j->c->closed) {
            if (j->type == JOB_SINGLE)
                answer_single(j);
            else if (j->type == JOB_BATCH)
                answer_batch(j);
            else if (j->type == JOB_VFRAME)
                send_video_frame(j);
            else if (j->type == JOB_VDEC || j->type == JOB_VENC)
                answer_video(j);
            else
                answer_notice(j);
        }
        if (j->type != JOB_NOTICE && j->type != JOB_VFRAME) {
            j->c->inflight--;
            atomic_fetch_sub(&s->inflight, 1);
        }
        if (j->type == JOB_VDEC || j->type == JOB_VENC) {
            vchan *ch = j->vc;
            conn *c = j->c; /* job_free may drop the last reference but the list's */
            ch->busy--;
            if (j->type == JOB_VDEC) { /* the next stream starts afresh */
                dvpp_buf_fini(&ch->bytes);
                dvpp_buf_init(&ch->bytes);
            }
            job_free(j);
            vchan_settle(c, ch);
            continue;
        }
        job_free(j);
    }
}

/* --- jobs: submission ---------------------------------------------------------------- */

static sjob *job_new(conn *c, job_type type, uint64_t id, Dvpp__Envelope *env)
{
    sjob *j = calloc(1, sizeof(*j));

    if (!j)
        return NULL;
    j->type = type;
    j->c = c;
    conn_ref(c);
    j->id = id;
    j->env = env;
    dvpp_buf_init(&j->out.encoded);
    j->status = DVPP_OK;
    return j;
}

/* Refuse a job that may not start now. */
static dvpp_status admit(conn *c, dvpp_err *err)
{
    if (atomic_load(&c->s->draining))
        return dvpp_err_set(err, DVPP_ECANCELED, NULL, "the daemon is stopping");
    if (c->inflight >= c->s->set->cfg.sock.max_inflight)
        return dvpp_err_set(err, DVPP_EAGAIN, "inflight", "%u jobs in flight on this "
                            "connection (Welcome.max_inflight)", c->inflight);
    return DVPP_OK;
}

static dvpp_status single_input(sjob *j, const Dvpp__Submit *m, const int *fds, int nfds,
                                dvpp_err *err)
{
    if (m->input_fd) {
        dvpp_status st;
        j->maps = calloc(1, sizeof(*j->maps));
        if (!j->maps)
            return dvpp_err_set(err, DVPP_ENOMEM, NULL, "input");
        j->nmaps = 1;
        (void)nfds;
        st = map_input(j->c, fds[0], m->input_len, &j->maps[0], err);
        j->in = j->maps[0].addr;
        j->in_len = j->maps[0].len;
        return st;
    }
    if (m->input.len == 0)
        return dvpp_err_set(err, DVPP_EINVAL, "input", "no input");
    j->in = m->input.data;
    j->in_len = m->input.len;
    return DVPP_OK;
}

static dvpp_status submit_single(sjob *j, const Dvpp__Submit *m, const int *fds, int nfds,
                                 dvpp_err *err)
{
    conn *c = j->c;
    dvpp_stream *ds;
    dvpp_status st;

    if ((unsigned)m->kind > DVPP__KIND__PIXELS)
        return dvpp_err_set(err, DVPP_EINVAL, "kind", "unknown kind %d", (int)m->kind);
    st = build_spec(j, spec_kind(m->kind), m->spec, m->aipp_config, err);

    j->kind = m->kind;
    if (st == DVPP_OK)
        st = single_input(j, m, fds, nfds, err);
    if (st == DVPP_OK)
        st = prepare_output(j, m->ring, err);
    if (st == DVPP_OK && m->stream) {
        j->st = find_stream(c, m->stream);
        if (!j->st || j->st->destroy_id)
            st = dvpp_err_set(err, DVPP_ENOTFOUND, "stream", "no such stream");
    }
    if (st == DVPP_OK && !j->st) {
        if (c->nidle)
            j->own_stream = c->idle[--c->nidle];
        else
            st = dvpp_stream_new(c->s->device, 0, &j->own_stream, err);
    }
    if (st != DVPP_OK)
        return st;
    ds = j->st ? j->st->ds : j->own_stream;
    j->pj.pipe = &j->spec.pipe;
    j->pj.input = j->in;
    j->pj.len = j->in_len;
    j->pj.out = &j->out;
    j->pj.bytes = j->in_len + (j->has_slot ? 0 : j->inline_cap);
    j->pj.deadline_ns = m->deadline_ms ? dvpp_now_ns() + (uint64_t)m->deadline_ms * 1000000u
                                       : 0;
    j->pj.done = single_done;
    j->pj.ctx = j;
    j->t_submit = dvpp_now_ns();
    st = dvpp_pipejob_submit(ds, &j->pj, NULL, err);
    if (st == DVPP_OK && j->st)
        j->st->pending++;
    return st;
}

static void on_submit(conn *c, Dvpp__Envelope *env, const int *fds, int nfds)
{
    const Dvpp__Submit *m = env->submit;
    uint64_t id = env->id;
    /* Read now: a refused job frees @env (and @m with it) before the
     * refusal is charged to the stream. */
    uint64_t stream = m->stream;
    dvpp_err err;
    dvpp_status st;
    sjob *j;

    dvpp_err_clear(&err);
    if (nfds != (m->input_fd ? 1 : 0)) {
        dvpp__envelope__free_unpacked(env, NULL);
        violation(c, id, "the packet's fds do not match Submit.input_fd");
        return;
    }
    st = admit(c, &err);
    j = st == DVPP_OK ? job_new(c, JOB_SINGLE, id, env) : NULL;
    if (st == DVPP_OK && !j)
        st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "job");
    if (!j)
        dvpp__envelope__free_unpacked(env, NULL);
    if (st == DVPP_OK)
        st = submit_single(j, m, fds, nfds, &err);
    atomic_fetch_add(&c->s->n.submitted, 1);
    if (st != DVPP_OK) {
        sstream *ss = stream ? find_stream(c, stream) : NULL;
        /* A refusal is a job error of its stream too (StreamSync says so). */
        if (ss && ss->first_error == DVPP_OK) {
            ss->first_error = st;
            ss->first_err = err;
            ss->first_err.status = st;
        }
        atomic_fetch_add(&c->s->n.failed, 1);
        send_err(c, id, &err);
        if (j)
            job_free(j);
        return;
    }
    c->inflight++;
    atomic_fetch_add(&c->s->inflight, 1);
}

/* Batch inputs: inline bytes, or the packet's memfds. */
static dvpp_status batch_inputs(sjob *j, const Dvpp__BatchSubmit *m, const int *fds,
                                int nfds, dvpp_err *err)
{
    size_t n = m->input_fds ? (size_t)nfds : m->n_inputs;

    if (n == 0 || n > j->c->s->set->cfg.http.max_batch_items)
        return dvpp_err_set(err, n ? DVPP_ELIMIT : DVPP_EINVAL, "inputs",
                            "%zu inputs (1..%u)", n, j->c->s->set->cfg.http.max_batch_items);
    if (m->input_fds && m->n_input_lens != n)
        return dvpp_err_set(err, DVPP_EINVAL, "input_lens", "one length per input fd");
    j->inputs = calloc(n, sizeof(*j->inputs));
    j->maps = m->input_fds ? calloc(n, sizeof(*j->maps)) : NULL;
    if (!j->inputs || (m->input_fds && !j->maps))
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "inputs");
    j->n = n;
    for (size_t i = 0; i < n; i++) {
        if (m->input_fds) {
            dvpp_status st = map_input(j->c, fds[i], m->input_lens[i], &j->maps[i], err);
            j->nmaps = i + 1;
            if (st != DVPP_OK)
                return st;
            j->inputs[i] = (dvpp_batchjob_input){j->maps[i].addr, j->maps[i].len};
        } else {
            j->inputs[i] = (dvpp_batchjob_input){m->inputs[i].data, m->inputs[i].len};
        }
    }
    return DVPP_OK;
}

static dvpp_status submit_batch(sjob *j, const Dvpp__BatchSubmit *m, const int *fds,
                                int nfds, dvpp_err *err)
{
    dvpp_batchjob_opts o = {.strict = m->strict, .done = batch_done, .ctx = j};
    uint8_t *dest = NULL;
    dvpp_status st = build_spec(j, DVPPD_SPEC_TENSOR, m->spec, m->aipp_config, err);

    if (st == DVPP_OK && m->ring == 0)
        st = dvpp_err_set(err, DVPP_EINVAL, "ring", "a batch is delivered into a ring");
    if (st == DVPP_OK)
        st = batch_inputs(j, m, fds, nfds, err);
    if (st == DVPP_OK)
        st = dvpp_batchjob_tensor(&j->spec.pipe, (uint32_t)j->n, &j->out.tensor, err);
    if (st == DVPP_OK)
        st = take_output(j, m->ring, j->out.tensor.bytes, &dest, err);
    if (st != DVPP_OK)
        return st;
    j->out.tensor.data = dest;
    j->t_submit = dvpp_now_ns();
    return dvpp_batchjob_start_opts(j->c->s->device, &j->spec.pipe, j->inputs, j->n,
                                    &j->out.tensor, &o, &j->bj, err);
}

static void send_accepted(conn *c, uint64_t id, uint64_t batch, uint32_t items)
{
    Dvpp__Envelope e;
    Dvpp__BatchAccepted a;

    envelope_init(&e, id);
    dvpp__batch_accepted__init(&a);
    a.batch = batch;
    a.items = items;
    e.body_case = DVPP__ENVELOPE__BODY_BATCH_ACCEPTED;
    e.batch_accepted = &a;
    send_env(c, &e, NULL, 0);
}

static void on_batch_submit(conn *c, Dvpp__Envelope *env, const int *fds, int nfds)
{
    const Dvpp__BatchSubmit *m = env->batch_submit;
    uint64_t id = env->id;
    sbatch *b = calloc(1, sizeof(*b));
    dvpp_err err;
    dvpp_status st;
    sjob *j;

    dvpp_err_clear(&err);
    if ((uint32_t)nfds != m->input_fds) {
        free(b);
        dvpp__envelope__free_unpacked(env, NULL);
        violation(c, id, "the packet's fds do not match BatchSubmit.input_fds");
        return;
    }
    st = admit(c, &err);
    j = st == DVPP_OK && b ? job_new(c, JOB_BATCH, id, env) : NULL;
    if (st == DVPP_OK && !j)
        st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "batch");
    if (!j)
        dvpp__envelope__free_unpacked(env, NULL);
    if (st == DVPP_OK)
        st = submit_batch(j, m, fds, nfds, &err);
    atomic_fetch_add(&c->s->n.submitted, 1);
    if (st != DVPP_OK) {
        free(b);
        atomic_fetch_add(&c->s->n.failed, 1);
        send_err(c, id, &err);
        if (j)
            job_free(j);
        return;
    }
    b->id = dvpp_batchjob_id(j->bj);
    b->job = j;
    b->next = c->batches;
    c->batches = b;
    c->inflight++;
    atomic_fetch_add(&c->s->inflight, 1);
    send_accepted(c, id, b->id, (uint32_t)j->n);
}

static sbatch *find_batch(conn *c, uint64_t id)
{
    sbatch *b = c->batches;

    while (b && b->id != id)
        b = b->next;
    return b;
}

static void on_batch_query(conn *c, uint64_t id, uint64_t batch, bool cancel)
{
    sbatch *b = find_batch(c, batch);
    Dvpp__Envelope e;
    Dvpp__BatchProgress bp;
    dvpp_batch_progress p;

    if (!b) {
        send_error(c, id, DVPP_ENOTFOUND, "batch", "no such batch (finished batches are "
                   "answered by their Result)");
        return;
    }
    if (cancel) {
        dvpp_batchjob_cancel(b->job->bj);
        send_ack(c, id);
        return;
    }
    dvpp_batchjob_progress(b->job->bj, &p);
    envelope_init(&e, id);
    dvpp__batch_progress__init(&bp);
    bp.batch = batch;
    bp.total = (uint32_t)p.total;
    bp.done = (uint32_t)p.done;
    bp.failed = (uint32_t)p.failed;
    bp.finished = p.finished;
    e.body_case = DVPP__ENVELOPE__BODY_BATCH_PROGRESS;
    e.batch_progress = &bp;
    send_env(c, &e, NULL, 0);
}

/* --- handshake, stats ------------------------------------------------------------------- */

static void on_hello(conn *c, uint64_t id, const Dvpp__Hello *h)
{
    dvppd_sock *s = c->s;
    Dvpp__Envelope e;
    Dvpp__Welcome w;
    char *engines[DVPP_ENGINE_COUNT];
    char *aipp[DVPPD_MAX_AIPP_CONFIGS];

    if (h->protocol < 1) {
        violation(c, id, "protocol version 0 is not spoken");
        return;
    }
    c->hello = true;
    envelope_init(&e, id);
    dvpp__welcome__init(&w);
    w.protocol = PROTOCOL;
    w.version = DVPP_VERSION;
    w.simd = (char *)dvpp_simd_name(dvpp_simd_active());
    w.max_inline = s->cfg.max_inline;
    w.max_input_bytes = s->set->cfg.limits.max_encoded_bytes;
    w.max_rings = s->cfg.max_rings;
    w.max_slots = s->set->cfg.sock.max_slots;
    w.max_ring_bytes = s->set->cfg.sock.max_ring_bytes;
    w.max_inflight = s->set->cfg.sock.max_inflight;
    w.lease_timeout_ms = s->set->cfg.sock.lease_timeout_ms;
    w.max_batch_items = s->set->cfg.http.max_batch_items;
    w.max_video_channels = s->set->cfg.sock.max_video_channels;
    w.max_video_buffer_bytes = s->set->cfg.sock.max_video_buffer_bytes;
    w.max_streams = s->set->cfg.sock.max_streams;
    w.max_sync_waiters = s->set->cfg.sock.max_sync_waiters;
    w.video_deadline_ms = s->set->cfg.sock.video_deadline_ms;
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++)
        engines[i] = (char *)dvpp_engine_name(i);
    w.n_engines = DVPP_ENGINE_COUNT;
    w.engines = engines;
    for (unsigned i = 0; i < s->set->aipp.n; i++)
        aipp[i] = (char *)s->set->aipp.names[i];
    w.n_aipp_configs = s->set->aipp.n;
    w.aipp_configs = aipp;
    e.body_case = DVPP__ENVELOPE__BODY_WELCOME;
    e.welcome = &w;
    send_env(c, &e, NULL, 0);
}

static void on_stats(conn *c, uint64_t id)
{
    dvppd_sock *s = c->s;
    Dvpp__Envelope e;
    Dvpp__Stats st;
    Dvpp__EngineStats es[DVPP_ENGINE_COUNT], *esp[DVPP_ENGINE_COUNT];
    dvpp_device_counters dc;
    uint64_t rings = 0, leased = 0;

    dvpp_device_get_counters(s->device, &dc);
    for (conn *k = s->conns; k; k = k->next)
        for (uint32_t i = 0; !k->closed && i < s->cfg.max_rings; i++)
            if (k->rings[i].ring) {
                rings++;
                leased += ipc_ring_leased(k->rings[i].ring);
            }
    envelope_init(&e, id);
    dvpp__stats__init(&st);
    for (int i = 0; i < DVPP_ENGINE_COUNT; i++) {
        dvpp__engine_stats__init(&es[i]);
        es[i].name = (char *)dvpp_engine_name(i);
        es[i].queued = dc.engine[i].queued;
        es[i].running = dc.engine[i].running;
        es[i].done = dc.engine[i].done;
        es[i].failed = dc.engine[i].failed;
        esp[i] = &es[i];
    }
    st.n_engines = DVPP_ENGINE_COUNT;
    st.engines = esp;
    st.connections = s->nconns;
    st.rings = rings;
    st.slots_leased = leased;
    st.leases_expired = atomic_load(&s->n.leases_expired);
    st.bad_releases = atomic_load(&s->n.bad_releases);
    st.dropped_connections = atomic_load(&s->n.dropped);
    st.jobs_submitted = atomic_load(&s->n.submitted);
    st.jobs_failed = atomic_load(&s->n.failed);
    st.inflight_pixels = dc.inflight_pixels;
    e.body_case = DVPP__ENVELOPE__BODY_STATS;
    e.stats = &st;
    send_env(c, &e, NULL, 0);
}


/* --- video channels ------------------------------------------------------------------ */

static void vout_free(dvppd_sock *s, vout *o)
{
    dvpp_buf_fini(&o->data);
    free(o);
    atomic_fetch_sub(&s->video_out, 1);
}

static void vchan_free(conn *c, vchan *ch)
{
    vchan **pp = &c->channels;

    while (*pp && *pp != ch)
        pp = &(*pp)->next;
    if (*pp)
        *pp = ch->next;
    while (ch->pending) {
        vout *o = ch->pending;
        ch->pending = o->next;
        vout_free(c->s, o);
    }
    dvpp_stream_free(ch->ds);
    dvpp_venc_close(ch->enc);
    dvpp_buf_fini(&ch->out);
    dvpp_buf_fini(&ch->bytes);
    ipc_ring_unref(ch->ring);
    free(ch);
    c->nchannels--;
}

static vchan *find_channel(conn *c, uint64_t id)
{
    vchan *ch = c->channels;

    while (ch && (ch->id != id || ch->closing))
        ch = ch->next;
    return ch;
}

/* A channel whose last job finished and whose output went out after a
 * close goes now. */
static void vchan_settle(conn *c, vchan *ch)
{
    if (ch->closing && ch->busy == 0 && !ch->pending)
        vchan_free(c, ch);
}

/* The video bytes @c's channels hold: streams being gathered for a decode,
 * MP4s being assembled, encoded bytes waiting to be sent. */
static uint64_t conn_video_bytes(const conn *c)
{
    uint64_t n = 0;

    for (const vchan *ch = c->channels; ch; ch = ch->next) {
        n += ch->bytes.len + ch->out_held;
        for (const vout *o = ch->pending; o; o = o->next)
            n += o->data.len - o->off;
    }
    return n;
}

static dvpp_status decode_options(const Dvpp__VideoOpen *m, dvpp_vdec_opts *o, dvpp_err *err)
{
    dvpp_vdec_opts_init(o);
    if (m->format[0] && (!dvpp_pixfmt_parse(m->format, &o->format) ||
                         (o->format != DVPP_PIXEL_NV12 && o->format != DVPP_PIXEL_NV21 &&
                          o->format != DVPP_PIXEL_RGB && o->format != DVPP_PIXEL_BGR)))
        return dvpp_err_set(err, DVPP_EINVAL, "format", "frames are nv12, nv21, rgb or bgr");
    if (m->fps < 0 || m->start_s < 0 || m->end_s < 0 || !isfinite(m->fps) ||
        !isfinite(m->start_s) || !isfinite(m->end_s))
        return dvpp_err_set(err, DVPP_EINVAL, "fps", "bad sampling values");
    o->every = m->every ? m->every : 1;
    o->fps = m->fps;
    o->keyframes_only = m->keyframes_only;
    o->start_s = m->start_s;
    o->end_s = m->end_s;
    o->max_frames = m->max_frames;
    return DVPP_OK;
}

static dvpp_status encode_options(const Dvpp__VideoOpen *m, vchan *ch, dvpp_err *err)
{
    dvpp_venc_opts *o = &ch->eo;

    dvpp_venc_opts_init(o);
    if (m->codec[0] && !dvpp_video_codec_parse(m->codec, &o->codec))
        return dvpp_err_set(err, DVPP_EINVAL, "codec", "codec h264 or h265");
    if (m->rc[0] && !dvpp_venc_rc_parse(m->rc, &o->rc))
        return dvpp_err_set(err, DVPP_EINVAL, "rc", "rc crf, cbr or vbr");
    ch->infmt = DVPP_PIXEL_NV12;
    if (m->input_format[0] && !dvpp_pixfmt_parse(m->input_format, &ch->infmt))
        return dvpp_err_set(err, DVPP_EINVAL, "input_format", "unknown pixel format");
    if (strlen(m->profile) >= sizeof(o->profile))
        return dvpp_err_set(err, DVPP_EINVAL, "profile", "profile name too long");
    o->width = m->width, o->height = m->height;
    if (m->fps_num)
        o->fps_num = m->fps_num, o->fps_den = m->fps_den ? m->fps_den : 1;
    if (m->gop)
        o->gop = m->gop;
    if (m->bitrate_kbps)
        o->bitrate_kbps = m->bitrate_kbps;
    if (m->crf)
        o->crf = m->crf;
    memcpy(o->profile, m->profile, strlen(m->profile) + 1);
    o->container = m->mp4 ? DVPP_VENC_MP4 : DVPP_VENC_ANNEXB;
    if (o->width < 16 || o->height < 16 || o->width > 8192 || o->height > 8192 ||
        (o->width & 1) || (o->height & 1))
        return dvpp_err_set(err, DVPP_EINVAL, "width", "frames of even sides in 16..8192");
    return DVPP_OK;
}

static void send_opened(conn *c, uint64_t id, uint64_t channel)
{
    Dvpp__Envelope e;
    Dvpp__VideoOpened vo;

    envelope_init(&e, id);
    dvpp__video_opened__init(&vo);
    vo.channel = channel;
    e.body_case = DVPP__ENVELOPE__BODY_VIDEO_OPENED;
    e.video_opened = &vo;
    send_env(c, &e, NULL, 0);
}

/* The decode side of a VideoOpen: its options, its ring, its pipeline. */
static dvpp_status open_decode(conn *c, vchan *ch, const Dvpp__VideoOpen *m, dvpp_err *err)
{
    dvpp_status st = decode_options(m, &ch->vdec, err);
    ipc_ring *r = st == DVPP_OK ? conn_ring(c, m->ring) : NULL;

    if (st != DVPP_OK)
        return st;
    if (!r)
        return dvpp_err_set(err, DVPP_ENOTFOUND, "ring", "decoded frames go into a ring of "
                            "this connection");
    ch->ring = r;
    ipc_ring_ref(r);
    ch->ring_id = m->ring;
    ch->lease_timeout_ms = c->s->set->cfg.sock.lease_timeout_ms;
    ch->deadline_ms = m->deadline_ms;
    if (!m->spec[0])
        return DVPP_OK;
    {
        dvppd_spec_env env = {DVPPD_SPEC_TENSOR, dvppd_aipp_find, (void *)&c->s->set->aipp,
                              NULL, 0};
        st = dvppd_spec_from_json(&env, m->spec, strlen(m->spec), &ch->spec, err);
    }
    ch->spec.pipe.input = DVPP_PIPE_IN_RAW;
    ch->spec.pipe.raw = (dvpp_pipe_raw){ch->vdec.format, 16, 16, 0, 0};
    if (st == DVPP_OK)
        st = dvpp_pipeline_validate(&ch->spec.pipe, &c->s->set->cfg.limits, err);
    ch->has_pipe = true;
    return st;
}

static void on_video_open(conn *c, uint64_t id, const Dvpp__VideoOpen *m)
{
    const dvppd_sock_config *lim = &c->s->set->cfg.sock;
    vchan *ch = calloc(1, sizeof(*ch));
    dvpp_err err;
    dvpp_status st = DVPP_OK;

    dvpp_err_clear(&err);
    if (!ch) {
        send_error(c, id, DVPP_ENOMEM, NULL, "video channel");
        return;
    }
    if (atomic_load(&c->s->draining))
        st = dvpp_err_set(&err, DVPP_ECANCELED, NULL, "the daemon is stopping");
    else if (c->nchannels >= lim->max_video_channels)
        st = dvpp_err_set(&err, DVPP_ELIMIT, "max_video_channels", "%u video channels are "
                          "open on this connection (socket.max_video_channels)",
                          c->nchannels);
    else if (m->encode)
        st = encode_options(m, ch, &err);
    else
        st = open_decode(c, ch, m, &err);
    if (st == DVPP_OK && m->encode)
        st = dvpp_stream_new(c->s->device, 0, &ch->ds, &err);
    if (st != DVPP_OK) {
        ipc_ring_unref(ch->ring);
        dvpp_stream_free(ch->ds);
        free(ch);
        send_err(c, id, &err);
        return;
    }
    ch->id = ++c->next_channel;
    ch->open_id = id;
    ch->encode = m->encode;
    dvpp_buf_init(&ch->bytes);
    dvpp_buf_init(&ch->out);
    ch->next = c->channels;
    c->channels = ch;
    c->nchannels++;
    send_opened(c, id, ch->id);
}

/* --- decode: a thread of its own, a VPC worker while it decodes ---------------------- */

/* A socket decode runs on a thread of its own, so that its decoder (whose
 * state lives on that thread's stack) can wait for ring slots without
 * holding a VPC worker: it decodes only while it holds a baton, a device
 * job on the VPC engine whose function lends the decode its worker (and
 * the worker's dvpp_worker) and waits until the decode hands it back.
 * With no free slot the decode hands the baton back, waits on the ring
 * for a release (or an expired lease), and queues a new baton behind the
 * work that came meanwhile: HTTP requests are served while a consumer
 * sits on its slots. The whole decode obeys a deadline (VideoOpen's
 * deadline_ms, at most socket.video_deadline_ms), so a consumer that never
 * releases ends it with ETIMEDOUT. */
typedef enum baton_state {
    BATON_NONE,                  /* not asked for */
    BATON_QUEUED,                /* submitted, not running yet */
    BATON_HELD,                  /* its function runs: the worker is lent */
    BATON_DONE,                  /* completed (handed back, or ended unrun) */
} baton_state;

struct vdecode {
    pthread_t thread;
    bool started;                /* the thread runs: joined by job_free */
    pthread_mutex_t mu;          /* the baton's fields */
    pthread_cond_t cv;
    baton_state baton;
    bool give_back;              /* the decode is done with the worker */
    dvpp_status result;          /* what the baton given back returns: the
                                    decode's status at its end (the VPC
                                    engine counts a failed decode), else OK */
    dvpp_err result_err;
    dvpp_task *task;             /* the held baton's task */
    dvpp_worker *w;              /* the held baton's worker state */
    dvpp_status unrun;           /* a baton that ended without running: why */
    dvpp_err unrun_err;
    uint64_t deadline_ns;
    uint32_t deadline_ms;        /* as given, for messages */
    dvpp_limits lim;             /* the first worker's, for the whole decode */
    bool have_lim;
};

static dvpp_status baton_fn(dvpp_task *task, void *ctx, void *worker_state, dvpp_err *err)
{
    vdecode *vd = ctx;
    dvpp_status st;

    pthread_mutex_lock(&vd->mu);
    vd->task = task;
    vd->w = worker_state;
    vd->baton = BATON_HELD;
    pthread_cond_broadcast(&vd->cv);
    while (!vd->give_back) /* the decode polls the task for cancellation */
        pthread_cond_wait(&vd->cv, &vd->mu);
    vd->give_back = false;
    vd->task = NULL;
    vd->w = NULL;
    st = vd->result;
    if (st != DVPP_OK)
        *err = vd->result_err;
    pthread_mutex_unlock(&vd->mu);
    return st;
}

/* The device's last touch of the baton (its function ran or not). */
static void baton_done(void *ctx, uint64_t ticket, dvpp_status st, const dvpp_err *err)
{
    vdecode *vd = ctx;

    (void)ticket;
    pthread_mutex_lock(&vd->mu);
    if (vd->baton == BATON_QUEUED) { /* canceled, or past the deadline, unrun */
        vd->unrun = st != DVPP_OK ? st : DVPP_ECANCELED;
        if (err)
            vd->unrun_err = *err;
        else
            dvpp_err_clear(&vd->unrun_err);
    }
    vd->baton = BATON_DONE;
    pthread_cond_broadcast(&vd->cv);
    pthread_mutex_unlock(&vd->mu);
}

/* Why the decode must stop now (the daemon stopping, its deadline), or
 * DVPP_OK. */
static dvpp_status decode_stopping(sjob *j, dvpp_err *err)
{
    if (atomic_load(&j->c->s->video_cancel))
        return dvpp_err_set(err, DVPP_ECANCELED, NULL, "the daemon is stopping");
    if (dvpp_now_ns() >= j->vd->deadline_ns)
        return dvpp_err_set(err, DVPP_ETIMEDOUT, "deadline_ms", "the decode passed its "
                            "deadline of %u ms after %llu frames (release slots sooner, or "
                            "set VideoOpen.deadline_ms)", j->vd->deadline_ms,
                            (unsigned long long)j->frames);
    return DVPP_OK;
}

/* Hand the worker back (if held) and wait until the device is done with
 * the baton. */
static void baton_give(vdecode *vd)
{
    pthread_mutex_lock(&vd->mu);
    vd->result = DVPP_OK;
    if (vd->baton == BATON_HELD) {
        vd->give_back = true;
        pthread_cond_broadcast(&vd->cv);
    }
    while (vd->baton == BATON_HELD || vd->baton == BATON_QUEUED)
        pthread_cond_wait(&vd->cv, &vd->mu);
    vd->baton = BATON_NONE;
    pthread_mutex_unlock(&vd->mu);
}

/* The decode's end: a baton still held returns @st (so the engine counts
 * the decode as it ended), then it is given back. */
static void baton_end(vdecode *vd, dvpp_status st, const dvpp_err *err)
{
    pthread_mutex_lock(&vd->mu);
    if (vd->baton == BATON_HELD) {
        vd->result = st;
        vd->result_err = *err;
        vd->give_back = true;
        pthread_cond_broadcast(&vd->cv);
    }
    while (vd->baton == BATON_HELD || vd->baton == BATON_QUEUED)
        pthread_cond_wait(&vd->cv, &vd->mu);
    vd->baton = BATON_NONE;
    pthread_mutex_unlock(&vd->mu);
}

/* Queue a baton on the job's stream and wait until its function runs:
 * the worker is the decode's until baton_give. */
static dvpp_status baton_take(sjob *j, dvpp_err *err)
{
    struct timespec pause = {0, 5 * 1000 * 1000};
    vdecode *vd = j->vd;
    dvpp_job job = {.engine = DVPP_BATCHJOB_ENGINE, .fn = baton_fn, .done = baton_done,
                    .ctx = vd, .pixels = 1, .bytes = 0, .deadline_ns = vd->deadline_ns};
    dvpp_status st;

    for (;;) {
        st = decode_stopping(j, err);
        if (st != DVPP_OK)
            return st;
        pthread_mutex_lock(&vd->mu);
        vd->baton = BATON_QUEUED;
        pthread_mutex_unlock(&vd->mu);
        st = dvpp_device_submit(j->own_stream, &job, NULL, err);
        if (st == DVPP_OK)
            break;
        pthread_mutex_lock(&vd->mu);
        vd->baton = BATON_NONE;
        pthread_mutex_unlock(&vd->mu);
        if (st != DVPP_EAGAIN) /* a full queue or budget empties: try again */
            return st;
        dvpp_err_clear(err);
        nanosleep(&pause, NULL);
    }
    pthread_mutex_lock(&vd->mu);
    while (vd->baton == BATON_QUEUED)
        pthread_cond_wait(&vd->cv, &vd->mu);
    st = vd->baton == BATON_HELD ? DVPP_OK : vd->unrun;
    if (st != DVPP_OK)
        *err = vd->unrun_err, err->status = st;
    pthread_mutex_unlock(&vd->mu);
    if (st == DVPP_OK && !vd->w) {
        baton_give(vd);
        return dvpp_err_set(err, DVPP_EINVAL, "device", "not a pipeline device");
    }
    if (st == DVPP_OK && !vd->have_lim) {
        vd->lim = *dvpp_worker_limits(vd->w); /* the worker is ours: its thread waits */
        vd->have_lim = true;
    }
    return st;
}

typedef struct vdec_run {
    sjob *j;
    dvpp_worker *w;              /* the held baton's */
    dvpp_pipeline pipe;
    bool planned;
    dvpp_tensor t;               /* one frame's tensor (pipe) */
    dvpp_err stop;               /* why the check stopped the decoder */
} vdec_run;

/* A free slot of the channel's ring. With none, the worker goes back
 * while the decode waits for a release (frames are never dropped), then a
 * baton is queued again. */
static dvpp_status take_slot(vdec_run *v, uint32_t *slot, dvpp_err *err)
{
    sjob *j = v->j;
    ipc_ring *r = j->vc->ring;

    for (;;) {
        int rc = ipc_ring_acquire(r, slot);
        dvpp_status st;
        if (rc == 0)
            return DVPP_OK;
        if (rc == -EPIPE)
            return dvpp_err_set(err, DVPP_ECANCELED, "ring", "the ring was closed");
        baton_give(j->vd);
        v->w = NULL;
        do {
            st = decode_stopping(j, err);
            if (st != DVPP_OK)
                return st;
            rc = ipc_ring_wait_free(r, TICK_MS);
        } while (rc == -ETIMEDOUT);
        if (rc == -EPIPE)
            return dvpp_err_set(err, DVPP_ECANCELED, "ring", "the ring was closed");
        st = baton_take(j, err);
        if (st != DVPP_OK)
            return st;
        v->w = j->vd->w;
    }
}

/* Write frame @f into @slot: its pixels, or the pipeline's output. */
static dvpp_status fill_slot(vdec_run *v, const dvpp_vframe *f, uint32_t slot,
                             sjob *n, dvpp_err *err)
{
    vchan *ch = v->j->vc;
    uint8_t *dst = ipc_ring_payload(ch->ring, slot);
    uint64_t cap = ipc_ring_slot_bytes(ch->ring);
    dvpp_planes pl;
    dvpp_status st = dvpp_image_planes(f->image, &pl, err);

    if (st != DVPP_OK)
        return st;
    if (!ch->has_pipe) {
        if (pl.total > cap)
            return dvpp_err_set(err, DVPP_ENOSPC, "ring", "a frame has %zu bytes, a slot %llu",
                                pl.total, (unsigned long long)cap);
        memcpy(dst, f->image->data, pl.total);
        n->out.image = *f->image;
        n->out.image.data = NULL;
        n->meta = (ipc_slot_meta){DVPP_RING_DTYPE_U8, DVPP_RING_LAYOUT_IMAGE, 1,
                                  {(int64_t)pl.total}, pl.total, 1, 1, 0, 0};
        return DVPP_OK;
    }
    v->pipe.raw = (dvpp_pipe_raw){f->image->format, f->image->width, f->image->height,
                                  f->image->width_stride, f->image->height_stride};
    if (!v->planned) {
        dvpp_pipe_source src = {.width = f->image->width, .height = f->image->height};
        dvpp_pipeline_plan plan;
        st = dvpp_pipeline_plan_make(&v->pipe, &src, &plan, err);
        if (st == DVPP_OK)
            st = dvpp_tensor_init(&v->t, plan.dtype, plan.layout, 1, plan.c, plan.h, plan.w,
                                  err);
        if (st != DVPP_OK)
            return st;
        v->planned = true;
    }
    if (v->t.bytes > cap)
        return dvpp_err_set(err, DVPP_ENOSPC, "ring", "a frame's tensor has %zu bytes, a "
                            "slot %llu", v->t.bytes, (unsigned long long)cap);
    memset(&n->out, 0, sizeof(n->out));
    n->out.tensor = v->t;
    n->out.tensor.data = dst;
    st = dvpp_pipeline_run(v->w, &v->pipe, f->image->data, pl.total, &n->out, err);
    if (st == DVPP_OK)
        dvppd_slot_meta_tensor(&n->meta, &v->t, &n->out.geom);
    return st;
}

static dvpp_status vdec_sink(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    vdec_run *v = ctx;
    sjob *j = v->j, *n;
    uint32_t slot = 0;
    dvpp_status st = take_slot(v, &slot, err);

    if (st != DVPP_OK)
        return st;
    n = job_new(j->c, JOB_VFRAME, j->vc->open_id, NULL);
    if (!n) {
        ipc_ring_abort(j->vc->ring, slot);
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "frame notice");
    }
    st = fill_slot(v, f, slot, n, err);
    if (st == DVPP_OK &&
        ipc_ring_lease(j->vc->ring, slot, &n->meta,
                       now_ms() + j->vc->lease_timeout_ms, &n->generation) != 0)
        st = dvpp_err_set(err, DVPP_ECANCELED, "ring", "the ring was closed");
    else if (st != DVPP_OK)
        ipc_ring_abort(j->vc->ring, slot);
    if (st != DVPP_OK) {
        job_free(n);
        return st;
    }
    n->vc = j->vc;
    n->ring = j->vc->ring;
    ipc_ring_ref(n->ring);
    n->ring_id = j->vc->ring_id;
    n->slot = slot;
    n->vf = *f;
    n->vf.image = NULL;
    n->has_slot = false;
    n->spec.pipe.output = j->vc->has_pipe ? DVPP_PIPE_OUT_TENSOR : DVPP_PIPE_OUT_IMAGE;
    j->frames++;
    post_done(j->c->s, n);
    return DVPP_OK;
}

/* Polled per decoded frame (the baton is held then): a canceled worker, a
 * stopping daemon or the deadline ends the decode. */
static dvpp_status vdec_check(void *ctx)
{
    vdec_run *v = ctx;

    if (v->j->vd->task && dvpp_task_canceled(v->j->vd->task))
        return dvpp_err_set(&v->stop, DVPP_ECANCELED, NULL, "the decode was canceled");
    return decode_stopping(v->j, &v->stop);
}

/* The decode thread: the whole stream, frame by frame into the ring. */
static void *vdec_main(void *arg)
{
    sjob *j = arg;
    vchan *ch = j->vc;
    vdec_run v = {.j = j};
    dvpp_vdec_opts opts;
    dvpp_err err;
    dvpp_status st;

    dvpp_err_clear(&err);
    dvpp_err_clear(&v.stop);
    st = baton_take(j, &err);
    if (st == DVPP_OK) {
        v.w = j->vd->w;
        if (ch->has_pipe)
            v.pipe = ch->spec.pipe;
        opts = ch->vdec;
        opts.check = vdec_check;
        opts.check_ctx = &v;
        st = dvpp_video_decode(ch->bytes.data, ch->bytes.len, &opts, &j->vd->lim, vdec_sink,
                               &v, NULL, &err);
        if (st != DVPP_OK && v.stop.status == st)
            err = v.stop; /* the check's own words */
    }
    if (st != DVPP_OK)
        err.status = st;
    baton_end(j->vd, st, &err);
    j->status = st;
    if (st != DVPP_OK)
        j->err = err;
    post_done(j->c->s, j); /* the last touch of @j on this thread */
    return NULL;
}

/* Start the decode of @ch's gathered stream on its thread. */
static dvpp_status start_decode(conn *c, sjob *j, vchan *ch, dvpp_err *err)
{
    uint32_t cap = c->s->set->cfg.sock.video_deadline_ms;
    uint32_t ms = ch->deadline_ms && ch->deadline_ms < cap ? ch->deadline_ms : cap;
    vdecode *vd = calloc(1, sizeof(*vd));
    pthread_condattr_t ca;
    int rc;

    if (!vd)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "decode");
    pthread_mutex_init(&vd->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&vd->cv, &ca);
    pthread_condattr_destroy(&ca);
    vd->deadline_ms = ms;
    vd->deadline_ns = dvpp_now_ns() + (uint64_t)ms * 1000000u;
    j->vd = vd;
    j->t_submit = dvpp_now_ns();
    rc = pthread_create(&vd->thread, NULL, vdec_main, j);
    if (rc != 0)
        return dvpp_err_set(err, DVPP_EAGAIN, "channel", "cannot start the decode: %s",
                            strerror(rc));
    vd->started = true;
    return DVPP_OK;
}

/* job_free's part: the thread has posted its completion; wait for it to
 * return, then free. */
static void vdecode_free(vdecode *vd)
{
    if (!vd)
        return;
    if (vd->started)
        pthread_join(vd->thread, NULL);
    pthread_mutex_destroy(&vd->mu);
    pthread_cond_destroy(&vd->cv);
    free(vd);
}

static void video_done(void *ctx, uint64_t ticket, dvpp_status st, const dvpp_err *err)
{
    sjob *j = ctx;

    (void)ticket;
    j->status = st;
    if (st != DVPP_OK && err)
        j->err = *err;
    post_done(j->c->s, j);
}

/* --- encode: frames in order on the channel's stream ------------------------------------ */

static dvpp_status venc_fn(dvpp_task *task, void *ctx, void *worker_state, dvpp_err *err)
{
    sjob *j = ctx;
    vchan *ch = j->vc;
    dvpp_status st = DVPP_OK;

    (void)task, (void)worker_state;
    if (!ch->enc)
        st = dvpp_venc_open(&ch->eo, &ch->out, &ch->enc, err);
    if (st == DVPP_OK && j->in_len) {
        dvpp_image img;
        st = dvpp_image_init(&img, ch->infmt, ch->eo.width, ch->eo.height, 1, 1, err);
        img.data = (uint8_t *)(uintptr_t)j->in;
        img.size = j->in_len;
        if (st == DVPP_OK)
            st = dvpp_image_planes(&img, &(dvpp_planes){0}, err);
        if (st == DVPP_OK)
            st = dvpp_venc_frame(ch->enc, &img, j->force_idr, err);
    }
    if (st == DVPP_OK && j->eos)
        st = dvpp_venc_finish(ch->enc, err);
    if (st == DVPP_OK && ch->enc)
        j->frames = dvpp_venc_packets(ch->enc, &j->keyframes);
    /* Annex-B leaves as it is made; an MP4 is whole only at the end. The
     * bytes move to the job (no copy); the encoder appends to ch->out. */
    if (st == DVPP_OK && (ch->eo.container == DVPP_VENC_ANNEXB || j->eos) && ch->out.len) {
        st = dvpp_buf_append(&j->vdata, ch->out.data, ch->out.len);
        ch->out.len = 0;
    }
    j->held = ch->out.len; /* read here: the channel's next frame may run at once */
    return st;
}

static dvpp_status submit_encode(sjob *j, dvpp_err *err)
{
    dvpp_job job = {.engine = DVPP_BATCHJOB_ENGINE, .fn = venc_fn, .done = video_done,
                    .ctx = j, .pixels = 1, .bytes = 0};

    return dvpp_device_submit(j->vc->ds, &job, NULL, err);
}

/* Queue what @ch has to send as the output drains: VideoData packets of at
 * most max_inline bytes while fewer than VIDEO_PUMP_BYTES wait in the
 * connection's queue, then each packet's answer. */
static void vchan_pump(conn *c, vchan *ch)
{
    size_t chunk = c->s->cfg.max_inline;

    while (ch->pending && !c->closed) {
        vout *o = ch->pending;
        while (o->data_msg) {
            Dvpp__Envelope e;
            Dvpp__VideoData vd;
            size_t n = o->data.len - o->off < chunk ? o->data.len - o->off : chunk;
            if (c->outq_bytes >= VIDEO_PUMP_BYTES || c->closed)
                return; /* flush_outq calls again once the reader took some */
            envelope_init(&e, ch->open_id);
            dvpp__video_data__init(&vd);
            vd.channel = ch->id;
            vd.data.data = o->data.data ? o->data.data + o->off : NULL;
            vd.data.len = n;
            vd.eos = o->eos && o->off + n == o->data.len;
            vd.packets = o->packets;
            vd.keyframes = o->keyframes;
            e.body_case = DVPP__ENVELOPE__BODY_VIDEO_DATA;
            e.video_data = &vd;
            send_env(c, &e, NULL, 0);
            o->off += n;
            o->data_msg = o->off < o->data.len;
        }
        if (c->closed)
            return;
        if (o->answer_id && o->ack)
            send_ack(c, o->answer_id);
        else if (o->answer_id)
            send_err(c, o->answer_id, &o->err);
        ch->pending = o->next;
        if (!ch->pending)
            ch->pending_tail = NULL;
        vout_free(c->s, o);
    }
}

/* Every channel's output, as far as the queue allows; channels closed and
 * done go. */
static void pump_video(conn *c)
{
    for (vchan *ch = c->channels, *next; ch && !c->closed; ch = next) {
        next = ch->next;
        if (ch->pending) {
            vchan_pump(c, ch);
            vchan_settle(c, ch);
        }
    }
}

/* A finished encode job's bytes and answer join the channel's output. */
static void queue_encoded(conn *c, sjob *j)
{
    vchan *ch = j->vc;
    vout *o = calloc(1, sizeof(*o));

    if (!o) {
        conn_close(c, "out of memory");
        return;
    }
    atomic_fetch_add(&c->s->video_out, 1);
    o->data = j->vdata; /* moved */
    dvpp_buf_init(&j->vdata);
    /* Every frame is answered with a VideoData, empty while the encoder
     * holds its bytes (an MP4 until eos, look-ahead): its packet count is
     * what a client paces its frames by. */
    o->data_msg = j->status == DVPP_OK;
    o->eos = j->eos;
    o->packets = j->frames;
    o->keyframes = j->keyframes;
    o->answer_id = j->status != DVPP_OK || j->eos ? j->id : 0;
    o->ack = j->status == DVPP_OK;
    o->err = j->err;
    if (ch->pending_tail)
        ch->pending_tail->next = o;
    else
        ch->pending = o;
    ch->pending_tail = o;
    ch->out_held = j->held;
    vchan_pump(c, ch);
}

static void send_video_frame(sjob *j)
{
    Dvpp__Envelope e;
    Dvpp__VideoFrame vf;
    Dvpp__Result r;
    Dvpp__TensorMeta meta;
    Dvpp__Geom g;
    int64_t shape[DVPP_RING_MAX_DIMS];

    envelope_init(&e, j->id);
    dvpp__video_frame__init(&vf);
    dvpp__result__init(&r);
    dvpp__tensor_meta__init(&meta);
    dvpp__geom__init(&g);
    r.origin = "video";
    r.ring = j->ring_id;
    r.slot = j->slot;
    r.generation = j->generation;
    r.offset = ipc_ring_payload_offset(j->ring, j->slot);
    for (unsigned i = 0; i < j->meta.ndim; i++)
        shape[i] = j->meta.shape[i];
    meta.n_shape = j->meta.ndim;
    meta.shape = shape;
    meta.bytes = j->meta.byte_length;
    if (j->spec.pipe.output == DVPP_PIPE_OUT_TENSOR) {
        meta.dtype = (char *)dtype_name((dvpp_dtype)j->meta.dtype);
        meta.layout = (char *)layout_name((dvpp_layout)j->meta.layout);
    } else {
        meta.dtype = "uint8";
        meta.layout = "";
        meta.format = (char *)dvpp_pixfmt_name(j->out.image.format);
        meta.width = j->out.image.width;
        meta.height = j->out.image.height;
        meta.width_stride = j->out.image.width_stride;
        meta.height_stride = j->out.image.height_stride;
    }
    g.scale_x = j->meta.scale_x, g.scale_y = j->meta.scale_y;
    g.pad_x = j->meta.pad_x, g.pad_y = j->meta.pad_y;
    r.meta = &meta;
    r.geom = &g;
    vf.channel = j->vc->id;
    vf.result = &r;
    vf.pts = j->vf.pts;
    vf.index = j->vf.index;
    vf.time_s = j->vf.time_s;
    vf.key = j->vf.key;
    e.body_case = DVPP__ENVELOPE__BODY_VIDEO_FRAME;
    e.video_frame = &vf;
    send_env(j->c, &e, NULL, 0);
}

/* Completion of a channel job, on the socket thread. */
static void answer_video(sjob *j)
{
    conn *c = j->c;

    if (j->type == JOB_VENC)
        queue_encoded(c, j);
    else if (j->status != DVPP_OK)
        send_err(c, j->id, &j->err);
    else
        send_ack(c, j->id);
}

/* The packet's bytes: inline, or its sealed memfd mapped for the job. */
static dvpp_status packet_bytes(sjob *j, const Dvpp__VideoPacket *m, const int *fds,
                                int nfds, dvpp_err *err)
{
    if (!m->data_fd) {
        j->in = m->data.data;
        j->in_len = m->data.len;
        return DVPP_OK;
    }
    if (nfds != 1)
        return dvpp_err_set(err, DVPP_EINVAL, "data_fd", "one memfd expected");
    j->maps = calloc(1, sizeof(*j->maps));
    if (!j->maps)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "input");
    j->nmaps = 1;
    if (map_input(j->c, fds[0], m->data_len, &j->maps[0], err) != DVPP_OK)
        return err ? err->status : DVPP_EINVAL;
    j->in = j->maps[0].addr;
    j->in_len = j->maps[0].len;
    return DVPP_OK;
}

/* The connection's video bytes may not pass socket.max_video_buffer_bytes. */
static dvpp_status video_budget(conn *c, uint64_t more, dvpp_err *err)
{
    uint64_t held = conn_video_bytes(c), cap = c->s->set->cfg.sock.max_video_buffer_bytes;

    if (held + more > cap)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_video_buffer_bytes", "this connection's "
                            "video channels hold %llu bytes, %llu more would pass "
                            "socket.max_video_buffer_bytes (%llu)", (unsigned long long)held,
                            (unsigned long long)more, (unsigned long long)cap);
    return DVPP_OK;
}

static dvpp_status video_packet(conn *c, sjob *j, vchan *ch, const Dvpp__VideoPacket *m,
                                const int *fds, int nfds, dvpp_err *err)
{
    dvpp_status st = packet_bytes(j, m, fds, nfds, err);

    j->vc = ch;
    j->eos = m->eos;
    j->force_idr = m->force_idr;
    if (st != DVPP_OK)
        return st;
    if (ch->encode) {
        st = video_budget(c, j->in_len, err); /* a frame adds at most about its size */
        return st == DVPP_OK ? submit_encode(j, err) : st;
    }
    if (ch->busy)
        return dvpp_err_set(err, DVPP_EBUSY, "channel", "the stream is being decoded");
    if (ch->bytes.len + j->in_len > c->s->set->cfg.limits.max_video_bytes)
        return dvpp_err_set(err, DVPP_ELIMIT, "max_video_bytes", "the stream passes "
                            "max_video_bytes (%llu)",
                            (unsigned long long)c->s->set->cfg.limits.max_video_bytes);
    st = video_budget(c, j->in_len, err);
    if (st != DVPP_OK)
        return st;
    if (j->in_len && dvpp_buf_append(&ch->bytes, j->in, j->in_len) != DVPP_OK)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "stream buffer");
    unmap_inputs(j);
    if (!m->eos)
        return DVPP_EBUSY; /* kept; nothing to run yet (not an error) */
    if (c->nidle)
        j->own_stream = c->idle[--c->nidle];
    else if (dvpp_stream_new(c->s->device, 0, &j->own_stream, err) != DVPP_OK)
        return err->status;
    return start_decode(c, j, ch, err);
}

static void on_video_packet(conn *c, Dvpp__Envelope *env, const int *fds, int nfds)
{
    const Dvpp__VideoPacket *m = env->video_packet;
    uint64_t id = env->id;
    vchan *ch = find_channel(c, m->channel);
    dvpp_err err;
    dvpp_status st;
    sjob *j;

    dvpp_err_clear(&err);
    if (nfds != (m->data_fd ? 1 : 0)) {
        dvpp__envelope__free_unpacked(env, NULL);
        violation(c, id, "the packet's fds do not match VideoPacket.data_fd");
        return;
    }
    st = ch ? admit(c, &err)
            : dvpp_err_set(&err, DVPP_ENOTFOUND, "channel", "no such video channel");
    j = st == DVPP_OK ? job_new(c, ch->encode ? JOB_VENC : JOB_VDEC, id, env) : NULL;
    if (st == DVPP_OK && !j)
        st = dvpp_err_set(&err, DVPP_ENOMEM, NULL, "video job");
    if (!j)
        dvpp__envelope__free_unpacked(env, NULL);
    if (st == DVPP_OK)
        st = video_packet(c, j, ch, m, fds, nfds, &err);
    if (st == DVPP_EBUSY && err.status == DVPP_OK) { /* a chunk kept for later */
        job_free(j);
        return;
    }
    if (st != DVPP_OK) {
        send_err(c, id, &err);
        if (j)
            job_free(j);
        return;
    }
    ch->busy++;
    c->inflight++;
    atomic_fetch_add(&c->s->inflight, 1);
}

static void on_video_close(conn *c, uint64_t id, uint64_t channel)
{
    vchan *ch = find_channel(c, channel);

    if (!ch) {
        send_error(c, id, DVPP_ENOTFOUND, "channel", "no such video channel");
        return;
    }
    ch->closing = true;
    vchan_settle(c, ch);
    send_ack(c, id);
}

/* --- packets ------------------------------------------------------------------------ */

/* Handle one decoded packet; takes @env. */
static void dispatch(conn *c, Dvpp__Envelope *env, const int *fds, int nfds)
{
    uint64_t id = env->id;
    bool takes_fds = env->body_case == DVPP__ENVELOPE__BODY_SUBMIT ||
                     env->body_case == DVPP__ENVELOPE__BODY_BATCH_SUBMIT ||
                     env->body_case == DVPP__ENVELOPE__BODY_VIDEO_PACKET;

    if (nfds && !takes_fds) {
        dvpp__envelope__free_unpacked(env, NULL);
        violation(c, id, "file descriptors on a message that takes none");
        return;
    }
    if (!c->hello && env->body_case != DVPP__ENVELOPE__BODY_HELLO) {
        dvpp__envelope__free_unpacked(env, NULL);
        violation(c, id, "the first message must be Hello");
        return;
    }
    switch (env->body_case) {
    case DVPP__ENVELOPE__BODY_SUBMIT:
        on_submit(c, env, fds, nfds); /* takes env */
        return;
    case DVPP__ENVELOPE__BODY_BATCH_SUBMIT:
        on_batch_submit(c, env, fds, nfds); /* takes env */
        return;
    case DVPP__ENVELOPE__BODY_VIDEO_PACKET:
        on_video_packet(c, env, fds, nfds); /* takes env */
        return;
    case DVPP__ENVELOPE__BODY_HELLO:
        if (c->hello)
            violation(c, id, "Hello twice");
        else
            on_hello(c, id, env->hello);
        break;
    case DVPP__ENVELOPE__BODY_STREAM_CREATE:
        on_stream_create(c, id);
        break;
    case DVPP__ENVELOPE__BODY_STREAM_DESTROY:
        on_stream_wait(c, id, env->stream_destroy->stream, true);
        break;
    case DVPP__ENVELOPE__BODY_STREAM_SYNC:
        on_stream_wait(c, id, env->stream_sync->stream, false);
        break;
    case DVPP__ENVELOPE__BODY_RING_OPEN:
        on_ring_open(c, id, env->ring_open);
        break;
    case DVPP__ENVELOPE__BODY_RING_CLOSE:
        if (conn_ring(c, env->ring_close->ring)) {
            close_ring(c, env->ring_close->ring);
            send_ack(c, id);
        } else {
            send_error(c, id, DVPP_ENOTFOUND, "ring", "no such ring");
        }
        break;
    case DVPP__ENVELOPE__BODY_SLOT_RELEASE:
        on_slot_release(c, id, env->slot_release);
        break;
    case DVPP__ENVELOPE__BODY_BATCH_QUERY:
        on_batch_query(c, id, env->batch_query->batch, false);
        break;
    case DVPP__ENVELOPE__BODY_BATCH_CANCEL:
        on_batch_query(c, id, env->batch_cancel->batch, true);
        break;
    case DVPP__ENVELOPE__BODY_STATS_QUERY:
        on_stats(c, id);
        break;
    case DVPP__ENVELOPE__BODY_VIDEO_OPEN:
        on_video_open(c, id, env->video_open);
        break;
    case DVPP__ENVELOPE__BODY_VIDEO_CLOSE:
        on_video_close(c, id, env->video_close->channel);
        break;
    default:
        violation(c, id, "not a request the daemon takes");
        break;
    }
    dvpp__envelope__free_unpacked(env, NULL);
}

static void read_packets(conn *c)
{
    dvppd_sock *s = c->s;

    /* the rest (if any) waits for the next turn: epoll is level-triggered */
    for (int k = 0; k < READ_BATCH && !c->closed; k++) {
        int fds[IPC_MAX_FDS], nfds = 0;
        ssize_t n = ipc_recv(c->fd, s->rx, s->rx_cap, fds, IPC_MAX_FDS, &nfds);
        Dvpp__Envelope *env;

        if (n == -EAGAIN)
            return;
        if (n <= 0) {
            if (n == -EMSGSIZE || n == -EBADMSG)
                atomic_fetch_add(&s->n.dropped, 1);
            conn_close(c, n == 0 ? NULL
                          : n == -EMSGSIZE ? "packet too large"
                          : n == -EBADMSG ? "bad ancillary data" : "receive failed");
            return;
        }
        env = dvpp__envelope__unpack(NULL, (size_t)n, s->rx);
        if (!env) {
            ipc_close_fds(fds, nfds);
            violation(c, 0, "undecodable packet");
            return;
        }
        dispatch(c, env, fds, nfds);
        ipc_close_fds(fds, nfds); /* inputs are mapped; the fds are not kept */
    }
}

/* --- connections: accept, close --------------------------------------------------------- */

static bool gid_allowed(const dvppd_sock_config *c, gid_t gid)
{
    for (uint32_t i = 0; i < c->n_gids; i++)
        if (c->allow_gids[i] == gid)
            return true;
    for (uint32_t i = 0; i < c->n_groups; i++)
        if (c->group_gids[i] == gid)
            return true;
    return false;
}

/* The allow lists: uids, then the primary gid, then (for allow_groups, the
 * way operators grant access: a "dvpp" group members join) the
 * supplementary groups the kernel recorded at connect. */
static bool peer_allowed(const dvppd_sock *s, int fd, uid_t uid, gid_t gid)
{
    const dvppd_sock_config *c = &s->set->cfg.sock;
    gid_t groups[64];
    int n;

    if (c->n_uids == 0 && c->n_gids == 0 && c->n_groups == 0)
        return uid == getuid() || uid == 0;
    for (uint32_t i = 0; i < c->n_uids; i++)
        if (c->allow_uids[i] == uid)
            return true;
    if (gid_allowed(c, gid))
        return true;
    n = ipc_peer_groups(fd, groups, 64);
    for (int i = 0; i < n && i < 64; i++)
        if (gid_allowed(c, groups[i]))
            return true;
    return false;
}

static void accept_one(dvppd_sock *s, int fd)
{
    pid_t pid;
    uid_t uid;
    gid_t gid;
    conn *c;
    struct epoll_event ev = {.events = EPOLLIN};

    if (ipc_peer_cred(fd, &pid, &uid, &gid) != 0 || !peer_allowed(s, fd, uid, gid)) {
        atomic_fetch_add(&s->n.refused_peers, 1);
        dvpp_log(DVPP_LOG_WARN, "socket: refused peer pid %ld uid %ld gid %ld", (long)pid,
                 (long)uid, (long)gid);
        close(fd);
        return;
    }
    if (s->nconns >= s->cfg.max_connections || atomic_load(&s->draining)) {
        close(fd);
        return;
    }
    c = calloc(1, sizeof(*c));
    if (c)
        c->rings = calloc(s->cfg.max_rings, sizeof(*c->rings));
    if (!c || !c->rings) {
        if (c)
            free(c->rings);
        free(c);
        close(fd);
        return;
    }
    c->s = s;
    c->fd = fd;
    c->pid = pid;
    c->uid = uid;
    c->bad_tokens = BAD_RELEASE_BURST;
    c->bad_refill_ms = now_ms();
    atomic_init(&c->refs, 1);
    ev.data.ptr = c;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        conn_unref(c);
        close(fd);
        return;
    }
    c->next = s->conns;
    s->conns = c;
    s->nconns++;
    atomic_fetch_add(&s->n.connections, 1);
}

static void accept_all(dvppd_sock *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        accept_one(s, fd);
    }
}

/* Close @c now: rings end (leases free; slots being written finish into
 * memory nobody reads), streams, batches and jobs in flight run on and are
 * discarded at completion. The record lives while jobs reference it. */
static void conn_close(conn *c, const char *why)
{
    if (c->closed)
        return;
    c->closed = true;
    if (why)
        dvpp_log(DVPP_LOG_INFO, "socket: closing connection of pid %ld: %s", (long)c->pid,
                 why);
    epoll_ctl(c->s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    for (uint32_t i = 0; i < c->s->cfg.max_rings; i++)
        close_ring(c, c->rings[i].id);
    while (c->outq) {
        outpkt *p = c->outq;
        c->outq = p->next;
        ipc_close_fds(p->fds, p->nfds);
        free(p);
    }
    c->outq_tail = NULL;
    for (sbatch *b = c->batches; b; b = b->next)
        dvpp_batchjob_cancel(b->job->bj);
}

/* Free what a closed, idle connection still holds and drop the list's
 * reference. */
static void conn_release(conn *c)
{
    while (c->streams)
        stream_free(c, c->streams);
    while (c->batches) {
        sbatch *b = c->batches;
        c->batches = b->next;
        free(b);
    }
    while (c->nidle)
        dvpp_stream_free(c->idle[--c->nidle]);
    while (c->channels)
        vchan_free(c, c->channels);
    cache_drop_all(c);
    free(c->last_spec);
    free(c->last_aipp);
    c->last_spec = c->last_aipp = NULL;
    conn_unref(c);
}

/* Unlink closed connections with nothing in flight; their streams are
 * idle then, so freeing them waits for nothing. */
static void reap_conns(dvppd_sock *s)
{
    conn **pp = &s->conns;

    while (*pp) {
        conn *c = *pp;
        if (!c->closed || c->inflight) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        s->nconns--;
        conn_release(c);
    }
}

static void expire_leases(dvppd_sock *s)
{
    uint64_t now = now_ms();

    for (conn *c = s->conns; c; c = c->next)
        for (uint32_t i = 0; !c->closed && i < s->cfg.max_rings; i++)
            if (c->rings[i].ring) {
                unsigned n = ipc_ring_expire(c->rings[i].ring, now);
                if (n)
                    atomic_fetch_add(&s->n.leases_expired, n);
            }
}

/* --- the thread ------------------------------------------------------------------------- */

/* After a reload, the socket thread's work from this wake-up on runs
 * under the new settings (jobs already submitted keep what they took). */
static void refresh_settings(dvppd_sock *s)
{
    if (dvppd_live_generation(s->live) == s->set->generation)
        return;
    dvppd_settings_put(s->set);
    s->set = dvppd_live_get(s->live);
}

static void *sock_main(void *arg)
{
    dvppd_sock *s = arg;
    uint64_t last_tick = now_ms();

    while (!atomic_load(&s->stop)) {
        struct epoll_event evs[64];
        int n = epoll_wait(s->epfd, evs, 64, TICK_MS);
        atomic_fetch_add_explicit(&s->turns, 1, memory_order_relaxed);
        refresh_settings(s);
        for (int i = 0; i < n; i++) {
            void *tag = evs[i].data.ptr;
            if (tag == &k_tag_listen) {
                accept_all(s);
            } else if (tag == &k_tag_event) {
                drain_done(s);
            } else {
                conn *c = tag;
                if (!c->closed && (evs[i].events & EPOLLOUT))
                    flush_outq(c);
                if (!c->closed && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                    read_packets(c);
            }
        }
        if (now_ms() - last_tick >= TICK_MS) {
            last_tick = now_ms();
            expire_leases(s);
        }
        reap_conns(s);
        atomic_store_explicit(&s->open_conns, s->nconns, memory_order_relaxed);
    }
    return NULL;
}

/* --- listening ------------------------------------------------------------------------------ */

/* The parent folder of @path, made if missing (run/ by default). */
static void make_parent(const char *path)
{
    char dir[108];
    char *slash;

    snprintf(dir, sizeof(dir), "%s", path);
    slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return;
    *slash = '\0';
    mkdir(dir, 0755);
}

static dvpp_status listen_path(dvppd_sock *s, const char *path, unsigned mode, dvpp_err *err)
{
    struct sockaddr_un a;
    struct stat sb;

    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(a.sun_path))
        return dvpp_err_set(err, DVPP_EINVAL, "socket.path", "socket.path too long");
    memcpy(a.sun_path, path, strlen(path) + 1);
    make_parent(path);
    /* A stale socket from a previous run is replaced; a live one (another
     * daemon answers on it) or anything that is not a socket is left
     * alone and refused. */
    if (lstat(path, &sb) == 0 && S_ISSOCK(sb.st_mode)) {
        int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        bool live = probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0;
        if (probe >= 0)
            close(probe);
        if (live)
            return dvpp_err_set(err, DVPP_EBUSY, "socket.path", "%s is in use by another "
                                "process (another dvppd?)", path);
        unlink(path);
    }
    s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        chmod(path, mode) != 0 || listen(s->lfd, 128) != 0)
        return dvpp_err_set(err, DVPP_ESYS, "socket.path", "cannot listen on %s: %s", path,
                            strerror(errno));
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->own_path = true;
    return DVPP_OK;
}

static dvpp_status start_loop(dvppd_sock *s, dvpp_err *err)
{
    struct epoll_event ev = {.events = EPOLLIN};

    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    s->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->epfd < 0 || s->evfd < 0)
        return dvpp_err_set(err, DVPP_ESYS, NULL, "epoll/eventfd: %s", strerror(errno));
    ev.data.ptr = &k_tag_listen;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev) != 0)
        return dvpp_err_set(err, DVPP_ESYS, NULL, "epoll_ctl: %s", strerror(errno));
    ev.data.ptr = &k_tag_event;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->evfd, &ev) != 0)
        return dvpp_err_set(err, DVPP_ESYS, NULL, "epoll_ctl: %s", strerror(errno));
    if (pthread_create(&s->thread, NULL, sock_main, s) != 0)
        return dvpp_err_set(err, DVPP_ESYS, NULL, "cannot start the socket thread");
    return DVPP_OK;
}

static void sock_free(dvppd_sock *s)
{
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->epfd >= 0)
        close(s->epfd);
    if (s->evfd >= 0)
        close(s->evfd);
    if (s->own_path)
        unlink(s->path);
    pthread_mutex_destroy(&s->mu);
    registry_fini(&s->names);
    dvppd_settings_put(s->set);
    free(s->rx);
    free(s);
}

dvpp_status dvppd_sock_start(const dvppd_sock_env *env, dvppd_sock **out, dvpp_err *err)
{
    const dvppd_config *c = env->cfg;
    dvppd_sock *s = calloc(1, sizeof(*s));
    dvpp_status st = DVPP_OK;

    *out = NULL;
    if (!s)
        return dvpp_err_set(err, DVPP_ENOMEM, NULL, "socket front end");
    s->lfd = s->epfd = s->evfd = -1;
    pthread_mutex_init(&s->mu, NULL);
    registry_init(&s->names);
    s->cfg = c->sock;
    s->live = env->live;
    s->set = dvppd_live_get(env->live);
    s->device = env->device;
    s->rx_cap = (size_t)c->sock.max_inline + RX_SLACK;
    s->rx = malloc(s->rx_cap);
    if (!s->rx)
        st = dvpp_err_set(err, DVPP_ENOMEM, NULL, "receive buffer");
    if (st == DVPP_OK) {
        s->lfd = env->listen_fd;
        if (s->lfd >= 0)
            fcntl(s->lfd, F_SETFL, fcntl(s->lfd, F_GETFL) | O_NONBLOCK);
        else
            st = listen_path(s, c->socket_path, c->socket_mode, err);
    }
    if (st == DVPP_OK)
        st = start_loop(s, err);
    if (st != DVPP_OK) {
        sock_free(s);
        return st;
    }
    *out = s;
    return DVPP_OK;
}

void dvppd_sock_status(dvppd_sock *s, uint64_t *turns, unsigned *connections)
{
    *turns = atomic_load_explicit(&s->turns, memory_order_relaxed);
    *connections = atomic_load_explicit(&s->open_conns, memory_order_relaxed);
}

const char *dvppd_sock_path(const dvppd_sock *s)
{
    return s->path;
}

void dvppd_sock_drain(dvppd_sock *s)
{
    if (s)
        atomic_store(&s->draining, true);
}

void dvppd_sock_stop(dvppd_sock *s, unsigned timeout_s)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    uint64_t deadline;

    if (!s)
        return;
    dvppd_sock_drain(s);
    deadline = dvpp_now_ns() + (uint64_t)timeout_s * 1000000000u;
    /* jobs, and encoded video still going out to its readers */
    while ((atomic_load(&s->inflight) > 0 || atomic_load(&s->video_out) > 0) &&
           dvpp_now_ns() < deadline)
        nanosleep(&tick, NULL);
    if (atomic_load(&s->inflight) > 0) {
        /* Past the drain time: cancel the device's work, so that the jobs
         * left still answer (a failed Result, ECANCELED) before their
         * connections close, as HTTP requests get their 503. */
        dvpp_log(DVPP_LOG_WARN, "socket: %u job(s) still in flight after %u s; canceling "
                 "them", atomic_load(&s->inflight), timeout_s);
        atomic_store(&s->video_cancel, true); /* decodes waiting for slots too */
        dvpp_device_cancel_all(s->device);
        deadline = dvpp_now_ns() + 5000000000ull;
        while (atomic_load(&s->inflight) > 0 && dvpp_now_ns() < deadline)
            nanosleep(&tick, NULL);
    }
    atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    drain_done(s);
    if (atomic_load(&s->inflight) > 0) {
        /* Jobs past the timeout still hold this record (their completions
         * post here when the device cancels them): it is left to the
         * process's exit rather than freed under them. */
        dvpp_log(DVPP_LOG_ERR, "socket: %u job(s) did not end; leaving them to the "
                 "process exit", atomic_load(&s->inflight));
        return;
    }
    for (conn *c = s->conns; c; c = c->next)
        conn_close(c, NULL);
    for (conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        conn_release(c);
    }
    s->conns = NULL;
    sock_free(s);
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
        conn_unref(e.owner);
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
    } else if (ipc_ring_lease(t->ring, t->slot, m, now_ms() + lease_ms(s), generation) != 0) {
        st = DVPP_ECANCELED;
    } else if ((j = job_new(t->owner, JOB_NOTICE, 0, NULL)) != NULL) {
        j->ring = t->ring;       /* the ticket's reference moves to the notice */
        j->ring_id = t->ring_id;
        j->slot = t->slot;
        j->generation = *generation;
        j->meta = *m;
        t->ring = NULL;
        post_done(s, j);
    }
    ipc_ring_unref(t->ring);
    conn_unref(t->owner);
    memset(t, 0, sizeof(*t));
    return st;
}
