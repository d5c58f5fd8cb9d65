/* sock_int.h: what the modules of the socket front end (dvppd/sock/) share.
 * Private: only the modules of dvppd/sock/ include it; the rest of the daemon sees
 * dvppd_sock.h.
 *
 * Modules (docs/architecture.md has the map, the threads and the locks):
 *   sock_server.c  listening socket, epoll thread, accept, reap, the
 *                  completion queue, start/drain/stop
 *   sock_conn.c    a connection: its record and references, sending (the
 *                  output queue), receiving, dispatch, Hello/Welcome,
 *                  Stats, peer checks, close and release
 *   sock_ring.c    rings of a connection, slot releases and leases, the
 *                  named-ring registry and the HTTP deliveries through it
 *   sock_stream.c  client streams (StreamSync/Destroy) and the pool of
 *                  per-job device streams
 *   sock_cache.c   the connection's caches: input memfd mappings, the last
 *                  spec parse
 *   sock_jobs.c    job records, Submit/BatchSubmit and their Results
 *   sock_trace.c   a job's trace (Submit/BatchSubmit.trace, captures), TraceGet
 *   sock_video.c   video channels: VideoOpen/Packet/Close, the budget
 *   sock_vdec.c    a channel's decode: its thread and the worker baton
 *   sock_venc.c    a channel's encode jobs and its output, paced by the reader
 *
 * Threads. The epoll thread ("socket thread") owns every connection record
 * and all that hangs off it (rings table, streams, batches, channels,
 * caches, output queue): only it reads or writes them, so none of that has
 * a lock. Other threads reach the front end only through:
 *   - the completion queue (sock_post_done, under dvppd_sock.mu): device
 *     workers, decode threads and HTTP threads hand a finished job to the
 *     socket thread, which answers it (or, for a Submit its worker
 *     answered, only ends it);
 *   - a connection's send lock (conn.send_mu): the worker that ran a
 *     Submit sends its Result on the connection's socket
 *     (sock_send_from_worker), or queues it behind what waits;
 *   - the named-ring registry (its own mutex, sock_ring.c): HTTP threads
 *     find a ring by name without touching a connection;
 *   - the rings (ipc_ring: one mutex per ring, any thread);
 *   - atomics (references, counters, the stop/drain/cancel flags).
 * Locks are leaves: none is held while another is taken, except that the
 * registry's mutex is held while taking references (atomics).
 *
 * References. A connection record (conn) is referenced by the connection
 * list (dropped by sock_conn_release once it is closed and idle), by each
 * job (sjob) and by each registry entry of its named rings (dropped when
 * the ring closes); an HTTP ticket holds one more. The last unref frees
 * the record itself (only memory: everything else went at release), on
 * whichever thread drops it. A ring (ipc_ring) is referenced by its
 * connection's table (owned_ring), by the registry entry, by each job
 * writing into it, each channel delivering into it and each notice naming
 * it; closing it (RingClose, the connection's end) makes later leases fail
 * while the references keep its memory valid.
 */
#ifndef SOCK_INT_H
#define SOCK_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "device/dvpp_batchjob.h"
#include "device/dvpp_device.h"
#include "device/dvpp_videojob.h"
#include "dvppd_sock.h"
#include "dvppd_spec.h"
#include "dvppd_trace.h"
#include "ipc_msg.h"
#include "proto/dvpp.pb-c.h"

/* The loop's tick: the epoll thread wakes at least this often (lease
 * expiry, settings, stop), and a decode waiting for a slot looks at its
 * deadline as often. */
#define SOCK_TICK_MS 100
/* A connection's invalid SlotReleases (wrong ring, slot or generation,
 * double releases) draw on a budget: BAD_RELEASE_BURST at once, refilled
 * at BAD_RELEASE_RATE a second. A consumer whose leases all expired may
 * release them late (four full rings of max_slots at once, within the
 * burst); one that goes past it is abusive: Error ELIMIT, dropped. */
#define SOCK_BAD_RELEASE_BURST 4096u
#define SOCK_BAD_RELEASE_RATE 100u
/* Bytes in a connection's output queue past which a consumer that stopped
 * reading is cut. */
#define SOCK_OUTQ_MAX_BYTES (16u << 20)
/* How long a connection cut for abuse keeps its socket to deliver what was
 * queued for it before the cut (the Error that says why last): time
 * enough for a consumer that reads, while an abuser, whose sends fail from
 * the cut on, holds only a socket and its queue (at most
 * SOCK_OUTQ_MAX_BYTES) that long. */
#define SOCK_LINGER_MS 2000u
/* Unread packets of a cut peer dropped at most (its send buffer holds a
 * few hundred; see discard_input). */
#define SOCK_CUT_DISCARD 4096u
/* Input mappings a connection keeps (sock_cache.c): entries, bytes. */
#define SOCK_MAPCACHE 8
#define SOCK_MAPCACHE_BYTES ((size_t)256 << 20) /* 8 x 32 MiB, the default input limit */
/* Per-job device streams a connection keeps for reuse (sock_stream.c). */
#define SOCK_STREAM_POOL 64

/* --- records ---------------------------------------------------------------------- */

typedef struct conn conn;
typedef struct sjob sjob;
typedef struct vchan vchan;
typedef struct vdecode vdecode;     /* sock_vdec.c */
typedef struct named_ring named_ring; /* sock_ring.c */

/* What a channel still has to send, in order: encoded bytes as VideoData
 * packets (queued as the connection's output drains: an MP4 of any size
 * goes out at the reader's pace, never past SOCK_OUTQ_MAX_BYTES), then the
 * answer of the packet that produced them (Ack after eos, or an Error).
 * Socket thread; counted in dvppd_sock.video_out while it lives. */
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

/* A video channel (VideoOpen .. VideoClose), owned by its connection's
 * list. The socket thread owns it, but for what its jobs' threads use
 * while it is busy: a decode thread reads the decode settings and @bytes
 * (not changed while busy: a packet then is EBUSY), encode workers use
 * @enc and @out (one at a time: the frames are ordered on @ds). */
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
    vout *pending, *pending_tail; /* VideoData not yet queued to send */
    vchan *next;
};

/* A client stream: a device stream plus the bookkeeping StreamSync needs.
 * Socket thread. */
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

/* A packet waiting in a connection's output queue, with duplicates of the
 * descriptors it carries. */
typedef struct outpkt {
    struct outpkt *next;
    size_t len;
    int fds[2];
    int nfds;
    uint8_t data[];
} outpkt;

/* A sealed input memfd kept mapped for the connection (sock_cache.c). */
typedef struct cached_map {
    int fd;                      /* a duplicate of the input's fd (identity) */
    dev_t dev;
    ino_t ino;
    void *addr;                  /* NULL = a free entry */
    size_t len;                  /* bytes mapped from offset 0 */
    unsigned refs;               /* jobs using it */
    uint64_t last_use;
} cached_map;

/* A ring of a connection. Ring ids count up per connection and are never
 * reused, so an answer or notice naming a closed ring can never be taken
 * for the ring opened after it. */
typedef struct owned_ring {
    ipc_ring *ring;              /* owned; NULL = a free entry */
    uint32_t id;
    bool named;                  /* listed in the named-ring registry */
} owned_ring;

/* A batch in flight, for BatchQuery/BatchCancel (the job is the batch's). */
typedef struct sbatch {
    uint64_t id;                 /* the device's batch id */
    sjob *job;
    struct sbatch *next;
} sbatch;

/* A connection: made by sock_conn_new, on the server's list until
 * sock_conn_release; the socket thread owns every field but @refs. */
struct conn {
    dvppd_sock *s;
    /* The sending side, shared with device workers that answer their
     * jobs themselves (sock_send_from_worker): @fd's close, @send_open,
     * the output queue (@outq, @outq_tail, @outq_bytes) and the epoll
     * mask of @fd change only under @send_mu, and workers read them only
     * under it. The socket thread reads @fd and @send_open without it (it
     * is their only writer), but not the queue (a worker appends to it,
     * the lock: so the socket thread too takes it for the queue). A
     * leaf lock. */
    pthread_mutex_t send_mu;
    bool send_open;              /* under send_mu: answers may be sent on @fd */
    int fd;                      /* -1 once the socket is closed */
    pid_t pid;
    uid_t uid;
    bool hello, closed;
    bool lingering;              /* cut, its socket kept until its queue is sent */
    uint64_t linger_until_ms;    /* when a lingering socket is closed anyway */
    atomic_uint refs;            /* the connection list's + one per job, registry entry, ticket */
    owned_ring *rings;           /* [max_rings] */
    uint32_t last_ring_id;       /* ids handed out so far */
    sstream *streams;
    uint64_t next_stream;
    uint32_t inflight;           /* job records alive (answered or not) */
    /* Of @inflight: jobs a worker answered whose records the socket
     * thread has not yet freed; inflight - answered is what
     * max_inflight counts. Workers add, the socket thread subtracts. */
    atomic_uint answered;
    uint32_t bad_tokens;         /* invalid releases left (SOCK_BAD_RELEASE_*) */
    uint64_t bad_refill_ms;      /* when tokens were last added */
    sbatch *batches;
    outpkt *outq, *outq_tail;
    size_t outq_bytes;
    cached_map maps[SOCK_MAPCACHE];
    size_t maps_bytes;           /* mapped by the entries */
    uint64_t map_clock;
    dvpp_stream *idle[SOCK_STREAM_POOL]; /* per-job streams kept for reuse */
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
    JOB_VDEC,      /* a decode channel's stream, decoded on its thread */
    JOB_VFRAME,    /* one decoded frame in a slot: a VideoFrame to send */
    JOB_VENC,      /* one raw frame through an encode channel */
} job_type;

/* A mapped input memfd (from the connection's cache, or its own). */
typedef struct input_map {
    void *addr;
    size_t len;
    int cached;                  /* index in conn.maps, -1 = own mapping */
} input_map;

/* A job: made on the socket thread (or by an HTTP delivery or a decode
 * thread for notices), run by the device, handed back through the
 * completion queue and answered and freed on the socket thread. Until it
 * is posted, the thread that made it owns it; between submission and
 * completion the device's callbacks write only @status/@err and the run's
 * outputs. */
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
    uint32_t lease_ms;           /* JOB_SINGLE: the lease timeout it was admitted under */
    bool answered;               /* its Result was sent (or queued) by the worker */
    const char *cut_why;         /* the worker's send failed: the socket thread closes */
    /* batches */
    dvpp_batchjob *bj;
    dvpp_batchjob_input *inputs;
    size_t n;
    dvpp_pipeline *item_pipes;   /* BatchSubmit.item_specs parsed (n), or NULL */
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
    /* traces (sock_trace.c): JOB_SINGLE and JOB_BATCH */
    dvppd_trace_job tj;          /* .trace's own trace and a running capture's */
    uint64_t t_recv;             /* the request taken in: "request" starts */
    int32_t recv_tid;            /* the socket thread, for the spans of its part */
};

/* The named-ring registry (sock_ring.c): what HTTP threads may reach. */
typedef struct ring_registry {
    pthread_mutex_t mu;          /* guards the list; a leaf lock */
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
    /* rings, their slots, leased slots: published at each tick for
     * dvppd_sock_totals_get (other threads cannot walk the connections) */
    atomic_uint_fast64_t pub_rings, pub_slots, pub_leased;
    uint8_t *rx;
    size_t rx_cap;
    pthread_mutex_t mu;          /* the done queue; a leaf lock */
    sjob *done_head, *done_tail;
    ring_registry names;         /* named rings, shared with HTTP threads */
    ipc_ring_gens gens;          /* every ring's generations */
    counters n;
    dvppd_trace_store *traces;   /* borrowed; NULL: tracing off */
};

static inline uint64_t sock_now_ms(void)
{
    return dvpp_now_ns() / 1000000u;
}

/* --- sock_server.c ------------------------------------------------------------------ */

/* Hand finished job @j to the socket thread (which answers and frees it).
 * With @wake false the socket thread is not woken for it: it takes the
 * job at its next turn (a packet, another completion, at the latest the
 * tick), for a job already answered whose end nothing waits for. Any
 * thread; the caller's last touch of @j. */
void sock_post_done(dvppd_sock *s, sjob *j, bool wake);

/* --- sock_conn.c: a connection ------------------------------------------------------- */

/* A record for accepted socket @fd of peer @pid/@uid (one reference: the
 * list's), or NULL out of memory (@fd is the caller's still). Socket
 * thread. */
conn *sock_conn_new(dvppd_sock *s, int fd, pid_t pid, uid_t uid);
/* Any thread; the last unref frees the record (nothing else is left then). */
void sock_conn_ref(conn *c);
void sock_conn_unref(conn *c);
/* Close @c now (@why logged, NULL: the peer left): its socket, rings and
 * output queue go, batches in flight are canceled; jobs in flight run on
 * and are discarded at completion. The record lives while jobs reference
 * it. Socket thread; again (or on a cut @c) closes a lingering socket. */
void sock_conn_close(conn *c, const char *why);
/* Cut @c for abuse (@why logged): closed as by sock_conn_close for the
 * rest of the front end, but the answers queued before the cut (the Error
 * saying why is the last) are still sent: the socket stops reading (the
 * peer's sends fail) and lingers until its queue is sent, the peer leaves
 * or SOCK_LINGER_MS pass (sock_conn_linger_check). Socket thread; no-op on
 * a closed @c. */
void sock_conn_cut(conn *c, const char *why);
/* Close a lingering @c's socket once its deadline is past @now_ms. */
void sock_conn_linger_check(conn *c, uint64_t now_ms);
/* Free what closed, idle @c still holds and drop the list's reference.
 * Socket thread. */
void sock_conn_release(conn *c);

/* Pack @e and send it with @nfds (at most 2) descriptors, borrowed; queue
 * it (the descriptors duplicated) when the socket is full. A queue past
 * SOCK_OUTQ_MAX_BYTES closes @c. No-op on a closed @c. Socket thread. */
void sock_send_env(conn *c, Dvpp__Envelope *e, const int *fds, int nfds);
void sock_envelope_init(Dvpp__Envelope *e, uint64_t id);
/* An Error answer (@msg NULL or "": the status's text). */
void sock_send_error(conn *c, uint64_t id, dvpp_status st, const char *field,
                     const char *msg);
void sock_send_err(conn *c, uint64_t id, const dvpp_err *err);
void sock_send_ack(conn *c, uint64_t id);
/* A protocol violation: say why (best effort), count, cut (sock_conn_cut). */
void sock_violation(conn *c, uint64_t id, const char *why);
/* Whether the packet carries the @want descriptors its message names;
 * when not, @env is freed and @c dropped with @why. */
bool sock_fds_match(conn *c, Dvpp__Envelope *env, int nfds, uint64_t want, const char *why);
/* Send what the output queue holds while the socket takes it, then let
 * encoded video go on (sock_video_pump). Socket thread. */
void sock_flush_outq(conn *c);
/* Send packed envelope @buf (@len bytes, no descriptors) on @c from a
 * device worker, in order after what is queued: sent, or queued when the
 * socket is full (EPOLLOUT then flushes it). False when @c no longer
 * sends (closed, cut): nothing was done. A queue past SOCK_OUTQ_MAX_BYTES
 * or a failed send sets *@why (the socket thread closes @c when it takes
 * the job). Any thread; @c referenced by the caller. */
bool sock_send_from_worker(conn *c, const uint8_t *buf, size_t len, const char **why);
/* The bytes waiting in @c's output queue. Socket thread. */
size_t sock_outq_bytes(conn *c);
/* Read and dispatch up to a batch of packets. Socket thread. */
void sock_read_packets(conn *c);
/* Whether a peer of @uid/@gid (its supplementary groups read off @fd) may
 * connect under the current allow lists. Socket thread. */
bool sock_peer_allowed(const dvppd_sock *s, int fd, uid_t uid, gid_t gid);

/* --- sock_ring.c: rings, leases, the named-ring registry -------------------------------- */

void sock_registry_init(ring_registry *g);
void sock_registry_fini(ring_registry *g);
/* Ring @id of @c (borrowed), or NULL. Socket thread. */
ipc_ring *sock_conn_ring(conn *c, uint32_t id);
/* Close ring @id of @c (unlisted, leases freed, references dropped); no
 * ring @id is a no-op. Socket thread. */
void sock_conn_ring_close(conn *c, uint32_t id);
/* Requests: RingOpen, RingClose, SlotRelease. Socket thread. */
void sock_on_ring_open(conn *c, uint64_t id, const Dvpp__RingOpen *m);
void sock_on_ring_close(conn *c, uint64_t id, uint32_t ring);
void sock_on_slot_release(conn *c, uint64_t id, const Dvpp__SlotRelease *m);
/* Free the slots of every expired lease (counted). Socket thread. */
void sock_expire_leases(dvppd_sock *s);
/* The open rings of all connections and their leased slots. Socket thread. */
void sock_ring_totals(dvppd_sock *s, uint64_t *rings, uint64_t *leased);
/* The Result naming @j's leased slot (ring, slot, generation, offset, its
 * ipc_slot_meta as TensorMeta and Geom) into @r, @meta, @g (@shape:
 * DVPP_RING_MAX_DIMS of storage); the dtype/layout names only for a
 * tensor slot. */
void sock_slot_result(const sjob *j, const char *origin, Dvpp__Result *r,
                      Dvpp__TensorMeta *meta, Dvpp__Geom *g, int64_t *shape);
/* The unsolicited Result of an HTTP delivery (a JOB_NOTICE). Socket thread. */
void sock_send_notice(sjob *j);

/* --- sock_stream.c: client streams, the per-job stream pool ---------------------------- */

/* Stream @id of @c, or NULL. Socket thread (as all of this section). */
sstream *sock_find_stream(conn *c, uint64_t id);
void sock_stream_free(conn *c, sstream *st);
/* Answer the StreamSync/StreamDestroy waiting once @st has nothing pending. */
void sock_stream_settle(conn *c, sstream *st);
/* Charge failure @st (@err) to @ss's next StreamSync unless one is. */
void sock_stream_fail(sstream *ss, dvpp_status st, const dvpp_err *err);
void sock_on_stream_create(conn *c, uint64_t id);
/* StreamSync (@destroy false) or StreamDestroy of @stream. */
void sock_on_stream_wait(conn *c, uint64_t id, uint64_t stream, bool destroy);
/* A device stream for one unordered job: from @c's pool, or new (owned by
 * the caller; back with sock_stream_recycle). */
dvpp_status sock_stream_take(conn *c, dvpp_stream **out, dvpp_err *err);
/* Keep @ds (may be NULL) for @c's next job, or free it. */
void sock_stream_recycle(conn *c, dvpp_stream *ds);
void sock_stream_pool_free(conn *c);

/* --- sock_cache.c: input mappings, the spec parse ---------------------------------------- */

/* Map the first @want bytes of sealed memfd @fd (borrowed) read-only,
 * through @c's cache when it can. Socket thread. */
dvpp_status sock_map_input(conn *c, int fd, uint64_t want, input_map *m, dvpp_err *err);
/* @j's one input: @len bytes of memfd @fd, mapped (j->maps, j->in). */
dvpp_status sock_map_job_input(sjob *j, int fd, uint64_t len, dvpp_err *err);
/* Let go of @j's mappings (cached ones stay for the next job). */
void sock_unmap_inputs(sjob *j);
/* @j's spec parsed and validated (a repeat of @c's last one under the same
 * settings generation reuses that parse). Socket thread. */
dvpp_status sock_job_spec(sjob *j, dvppd_spec_kind kind, const char *spec, const char *aipp,
                          dvpp_err *err);

/* --- sock_items.c: BatchSubmit.item_specs ------------------------------------------------- */

/* Before anything is allocated: none, or one spec per input (@inputs),
 * each at most DVPPD_SPEC_MAX_BYTES ("item_specs", "item_specs[i]"). */
dvpp_status sock_check_item_specs(char *const *specs, size_t n, size_t inputs,
                                  dvpp_err *err);
/* The @n item specs parsed as the batch's spec (@aipp too), validated,
 * each making the batch's tensor j->out.tensor, into j->item_pipes
 * (freed with @j); refused naming "item_specs[i]". Socket thread. */
dvpp_status sock_job_item_specs(sjob *j, char *const *specs, size_t n, const char *aipp,
                                dvpp_err *err);
/* Idle mappings and the kept spec parse go (a closing connection; busy
 * mappings go with their jobs). */
void sock_caches_free(conn *c);

/* --- sock_jobs.c: jobs, Submit, BatchSubmit ----------------------------------------------- */

/* A job record of @c (referenced) owning @env, or NULL. Any thread. */
sjob *sock_job_new(conn *c, job_type type, uint64_t id, Dvpp__Envelope *env);
/* Free @j and what it holds (a slot not yet leased goes back). Socket
 * thread; or the thread that made a job never posted. */
void sock_job_free(sjob *j);
/* The job of request @env once it may start (the connection under
 * max_inflight, the daemon not draining): @env moves to it. NULL, with the
 * refusal in *st and @err, when it may not or memory is short; @env is
 * freed then. A refusal already in *st is kept (only @env freed). */
sjob *sock_job_admit(conn *c, job_type type, Dvpp__Envelope *env, const char *what,
                     dvpp_status *st, dvpp_err *err);
/* Record @j's outcome (@err read when @st fails; may be NULL) and post it
 * to the socket thread. Any thread; the caller's last touch of @j. */
void sock_job_done(sjob *j, dvpp_status st, const dvpp_err *err);
/* Count a started job in flight (its completion uncounts it). */
void sock_job_started(conn *c);
/* Requests: Submit, BatchSubmit (take @env), BatchQuery/BatchCancel. */
void sock_on_submit(conn *c, Dvpp__Envelope *env, const int *fds, int nfds);
void sock_on_batch_submit(conn *c, Dvpp__Envelope *env, const int *fds, int nfds);
void sock_on_batch_query(conn *c, uint64_t id, uint64_t batch, bool cancel);
/* The Result of a finished Submit (leasing its slot) or BatchSubmit. */
void sock_send_single_result(sjob *j);
/* The socket thread's part of a Submit its worker answered (j->answered):
 * the count of answered jobs, the client stream's settling, or the close
 * a failed send asked for. */
void sock_single_answered(sjob *j);
void sock_send_batch_result(sjob *j);

/* --- sock_trace.c: traces ----------------------------------------------------------------- */

/* Begin @j's trace (Submit/BatchSubmit.trace: its own; and the running
 * capture's, traced or not) from @t_recv, when its request was taken.
 * DVPP_EUNSUPPORTED (field "trace") when asked for with tracing off,
 * DVPP_ENOMEM. Socket thread. */
dvpp_status sock_trace_begin(sjob *j, bool traced, uint64_t t_recv, dvpp_err *err);
/* Point @p (the job's own copy: never the connection's kept parse) at
 * @j's watch; a no-op when @j records nothing. */
void sock_trace_watch(sjob *j, dvpp_pipeline *p);
/* A span of @j on the calling thread (no-op when it records nothing). */
void sock_trace_span(sjob *j, const char *name, uint64_t t0_ns, uint64_t t1_ns);
/* @j's Result is built (from @t_write on) and about to be sent: its
 * front-end spans (queue, write, request) are added and its own trace
 * stored, before the send, so a TraceGet that follows the Result finds
 * it. Any thread that owns @j; once (later calls are no-ops). */
void sock_trace_answer(sjob *j, uint64_t t_write);
/* TraceGet: TraceData, or an Error (ENOTFOUND, ELIMIT past max_inline). */
void sock_on_trace_get(conn *c, uint64_t id, uint64_t trace);

/* --- sock_video.c: video channels ------------------------------------------------------ */

/* Requests: VideoOpen, VideoPacket (takes @env), VideoClose. Socket thread. */
void sock_on_video_open(conn *c, uint64_t id, const Dvpp__VideoOpen *m);
void sock_on_video_packet(conn *c, Dvpp__Envelope *env, const int *fds, int nfds);
void sock_on_video_close(conn *c, uint64_t id, uint64_t channel);
/* The answer of a finished channel job (JOB_VDEC, JOB_VENC). */
void sock_video_answer(sjob *j);
/* A finished channel job's end: the channel un-busied, @j freed, the
 * channel freed if it was closed and is done. */
void sock_video_job_end(sjob *j);
/* Free @ch (unlinked) with its pending output. */
void sock_vchan_free(conn *c, vchan *ch);
/* Free @ch now if it is closing, idle and has sent everything. */
void sock_vchan_settle(conn *c, vchan *ch);
void sock_vout_free(dvppd_sock *s, vout *o);

/* --- sock_vdec.c: a channel's decode ------------------------------------------------------ */

/* Start the decode of @ch's gathered stream for job @j on a thread of its
 * own (it posts @j when done). Socket thread. */
dvpp_status sock_vdec_start(conn *c, sjob *j, vchan *ch, dvpp_err *err);
/* sock_job_free's part: join the finished thread, free. NULL is a no-op. */
void sock_vdec_free(vdecode *vd);
/* The VideoFrame of a decoded frame leased in its slot (a JOB_VFRAME). */
void sock_send_video_frame(sjob *j);

/* --- sock_venc.c: a channel's encode --------------------------------------------------------- */

/* Queue frame job @j on its channel's ordered stream. Socket thread. */
dvpp_status sock_venc_submit(sjob *j, dvpp_err *err);
/* A finished encode job's bytes and answer join its channel's output. */
void sock_venc_queue(conn *c, sjob *j);
/* Every channel's output of @c, as far as the queue allows; channels
 * closed and done go. Socket thread. */
void sock_video_pump(conn *c);

#endif
