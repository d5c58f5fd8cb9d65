/* sock_conn: a connection of the socket front end: its record and
 * references, sending (the output queue), receiving and dispatch, Hello,
 * Stats, the peer checks, close and release. Socket thread, but for the
 * references. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* struct ucred */
#endif
#include "sock_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dvpp_cpu.h"
#include "dvpp_log.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "dev"
#endif

#define PROTOCOL 1u
/* Packets read from one connection per turn of the loop: a peer that
 * floods cannot starve the others, nor the answers of finished jobs. */
#define READ_BATCH 64

/* --- the record ------------------------------------------------------------------------ */

conn *sock_conn_new(dvppd_sock *s, int fd, pid_t pid, uid_t uid)
{
    conn *c = calloc(1, sizeof(*c));

    if (c)
        c->rings = calloc(s->cfg.max_rings, sizeof(*c->rings));
    if (!c || !c->rings) {
        if (c)
            free(c->rings);
        free(c);
        return NULL;
    }
    if (pthread_mutex_init(&c->send_mu, NULL) != 0) {
        free(c->rings);
        free(c);
        return NULL;
    }
    c->s = s;
    c->fd = fd;
    c->send_open = true;
    c->pid = pid;
    c->uid = uid;
    c->bad_tokens = SOCK_BAD_RELEASE_BURST;
    c->bad_refill_ms = sock_now_ms();
    atomic_init(&c->refs, 1);
    atomic_init(&c->answered, 0);
    return c;
}

void sock_conn_ref(conn *c)
{
    atomic_fetch_add(&c->refs, 1);
}

void sock_conn_unref(conn *c)
{
    if (c && atomic_fetch_sub(&c->refs, 1) == 1) {
        pthread_mutex_destroy(&c->send_mu);
        free(c->rings);
        free(c);
    }
}

/* What closing means to the rest of the front end: nothing more is read,
 * sent or leased; the rings close, batches in flight are canceled. */
static void conn_end(conn *c, const char *why)
{
    c->closed = true;
    pthread_mutex_lock(&c->send_mu);
    c->send_open = false; /* workers answer no more */
    pthread_mutex_unlock(&c->send_mu);
    if (why)
        dvpp_log(DVPP_LOG_INFO, "socket: closing connection of pid %ld: %s", (long)c->pid,
                 why);
    for (uint32_t i = 0; i < c->s->cfg.max_rings; i++)
        sock_conn_ring_close(c, c->rings[i].id);
    for (sbatch *b = c->batches; b; b = b->next)
        dvpp_batchjob_cancel(b->job->bj);
}

/* The socket itself and what was still queued for it. */
static void drop_socket(conn *c)
{
    outpkt *q;

    if (c->fd < 0)
        return;
    /* Under the send lock: a worker answering holds it while it uses the
     * descriptor, so the number is never closed (and reused by another
     * open) under its sendmsg. */
    pthread_mutex_lock(&c->send_mu);
    epoll_ctl(c->s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->send_open = false;
    q = c->outq;
    c->outq = c->outq_tail = NULL;
    c->outq_bytes = 0;
    pthread_mutex_unlock(&c->send_mu);
    c->lingering = false;
    while (q) {
        outpkt *p = q;
        q = p->next;
        ipc_close_fds(p->fds, p->nfds);
        free(p);
    }
}

void sock_conn_close(conn *c, const char *why)
{
    if (!c->closed)
        conn_end(c, why);
    drop_socket(c);
}

/* Packets the peer sent before the cut, dropped unread (the descriptors
 * they carry are released by the kernel: no control buffer is given), so
 * that the close to come does not report ECONNRESET to the peer ahead of
 * the answers still queued for it. The peer's send buffer bounds them;
 * SOCK_CUT_DISCARD bounds the loop anyway (what is left only makes that
 * ECONNRESET come back). */
static void discard_input(conn *c)
{
    for (unsigned k = 0; k < SOCK_CUT_DISCARD; k++)
        if (recv(c->fd, NULL, 0, MSG_DONTWAIT | MSG_TRUNC) <= 0)
            return;
}

void sock_conn_cut(conn *c, const char *why)
{
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};

    if (c->closed)
        return;
    conn_end(c, why); /* from here on only this thread touches the queue */
    if (!c->outq) {
        drop_socket(c); /* all it was sent is in the peer's socket: it keeps it */
        return;
    }
    /* The peer's sends fail (EPIPE) from now on: a flood ends here. */
    shutdown(c->fd, SHUT_RD);
    discard_input(c);
    c->lingering = true;
    c->linger_until_ms = sock_now_ms() + SOCK_LINGER_MS;
    pthread_mutex_lock(&c->send_mu);
    epoll_ctl(c->s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    pthread_mutex_unlock(&c->send_mu);
}

void sock_conn_linger_check(conn *c, uint64_t now_ms)
{
    if (!c->lingering || now_ms < c->linger_until_ms)
        return;
    dvpp_log(DVPP_LOG_INFO, "socket: connection of pid %ld cut with %zu bytes of answers "
             "unread after %u ms: closed", (long)c->pid, c->outq_bytes, SOCK_LINGER_MS);
    drop_socket(c);
}

void sock_conn_release(conn *c)
{
    while (c->streams)
        sock_stream_free(c, c->streams);
    while (c->batches) {
        sbatch *b = c->batches;
        c->batches = b->next;
        free(b);
    }
    sock_stream_pool_free(c);
    while (c->channels)
        sock_vchan_free(c, c->channels);
    sock_caches_free(c);
    sock_conn_unref(c);
}

/* --- sending ----------------------------------------------------------------------------- */

/* Append @p to @c's queue and ask for EPOLLOUT. Under c->send_mu. */
static void outq_append(conn *c, outpkt *p)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};

    p->next = NULL;
    if (c->outq_tail)
        c->outq_tail->next = p;
    else
        c->outq = p;
    c->outq_tail = p;
    c->outq_bytes += p->len;
    epoll_ctl(c->s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

void sock_send_env(conn *c, Dvpp__Envelope *e, const int *fds, int nfds)
{
    size_t len = dvpp__envelope__get_packed_size(e);
    outpkt *p;
    int r = -EAGAIN;
    const char *why = NULL;

    if (c->closed)
        return;
    p = malloc(sizeof(*p) + len);
    if (!p) {
        sock_conn_close(c, "out of memory");
        return;
    }
    dvpp__envelope__pack(e, p->data);
    p->len = len;
    p->next = NULL;
    p->nfds = 0;
    pthread_mutex_lock(&c->send_mu);
    if (!c->outq)
        r = ipc_send(c->fd, p->data, len, fds, nfds);
    if (r == 0) {
        why = "";
    } else if (r != -EAGAIN || c->outq_bytes + len > SOCK_OUTQ_MAX_BYTES) {
        why = r == -EAGAIN ? "consumer stopped reading" : "send failed";
    } else {
        for (int i = 0; i < nfds && i < 2; i++)
            p->fds[p->nfds++] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
        outq_append(c, p);
        p = NULL;
    }
    pthread_mutex_unlock(&c->send_mu);
    free(p);
    if (why && *why)
        sock_conn_close(c, why);
}

bool sock_send_from_worker(conn *c, const uint8_t *buf, size_t len, const char **why)
{
    outpkt *p = NULL;
    bool open;
    int r = -EAGAIN;

    pthread_mutex_lock(&c->send_mu);
    open = c->send_open;
    if (open && !c->outq)
        r = ipc_send(c->fd, buf, len, NULL, 0);
    if (!open || r == 0)
        goto out;
    if (r != -EAGAIN) {
        *why = "send failed";
        goto out;
    }
    if (c->outq_bytes + len > SOCK_OUTQ_MAX_BYTES) {
        *why = "consumer stopped reading";
        goto out;
    }
    /* The socket is full, or older answers wait: behind them. */
    p = malloc(sizeof(*p) + len);
    if (!p) {
        *why = "out of memory";
        goto out;
    }
    memcpy(p->data, buf, len);
    p->len = len;
    p->nfds = 0;
    outq_append(c, p);
out:
    pthread_mutex_unlock(&c->send_mu);
    return open;
}

size_t sock_outq_bytes(conn *c)
{
    size_t n;

    pthread_mutex_lock(&c->send_mu);
    n = c->outq_bytes;
    pthread_mutex_unlock(&c->send_mu);
    return n;
}

void sock_flush_outq(conn *c)
{
    const char *why = NULL;
    bool empty;

    pthread_mutex_lock(&c->send_mu);
    while (c->outq && c->fd >= 0) {
        outpkt *p = c->outq;
        int r = ipc_send(c->fd, p->data, p->len, p->fds, p->nfds);
        if (r == -EAGAIN)
            break;
        if (r != 0) {
            why = "send failed";
            break;
        }
        c->outq = p->next;
        if (!c->outq)
            c->outq_tail = NULL;
        c->outq_bytes -= p->len;
        ipc_close_fds(p->fds, p->nfds);
        free(p);
    }
    empty = !c->outq;
    if (!why && !c->lingering && !c->closed && empty) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(c->s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    }
    pthread_mutex_unlock(&c->send_mu);
    if (why) {
        sock_conn_close(c, why);
        return;
    }
    if (c->lingering) {
        if (empty)
            drop_socket(c); /* a cut connection's last answer is out */
        return;
    }
    if (!c->closed)
        sock_video_pump(c); /* room again: encoded video waiting goes on */
}

void sock_envelope_init(Dvpp__Envelope *e, uint64_t id)
{
    dvpp__envelope__init(e);
    e->protocol = PROTOCOL;
    e->id = id;
}

void sock_send_error(conn *c, uint64_t id, dvpp_status st, const char *field, const char *msg)
{
    Dvpp__Envelope e;
    Dvpp__Error er;

    sock_envelope_init(&e, id);
    dvpp__error__init(&er);
    er.status = st;
    er.code = (char *)dvpp_status_name(st);
    er.message = (char *)(msg && *msg ? msg : dvpp_strerror(st));
    er.field = (char *)(field ? field : "");
    e.body_case = DVPP__ENVELOPE__BODY_ERROR;
    e.error = &er;
    sock_send_env(c, &e, NULL, 0);
}

void sock_send_err(conn *c, uint64_t id, const dvpp_err *err)
{
    sock_send_error(c, id, err->status, err->field, err->msg);
}

void sock_send_ack(conn *c, uint64_t id)
{
    Dvpp__Envelope e;
    Dvpp__Ack a;

    sock_envelope_init(&e, id);
    dvpp__ack__init(&a);
    e.body_case = DVPP__ENVELOPE__BODY_ACK;
    e.ack = &a;
    sock_send_env(c, &e, NULL, 0);
}

void sock_violation(conn *c, uint64_t id, const char *why)
{
    sock_send_error(c, id, DVPP_EINVAL, "packet", why);
    atomic_fetch_add(&c->s->n.dropped, 1);
    sock_conn_cut(c, why);
}

bool sock_fds_match(conn *c, Dvpp__Envelope *env, int nfds, uint64_t want, const char *why)
{
    uint64_t id = env->id;

    if (nfds >= 0 && (uint64_t)nfds == want)
        return true;
    dvpp__envelope__free_unpacked(env, NULL);
    sock_violation(c, id, why);
    return false;
}

/* --- handshake, stats -------------------------------------------------------------------- */

static void on_hello(conn *c, uint64_t id, const Dvpp__Hello *h)
{
    dvppd_sock *s = c->s;
    Dvpp__Envelope e;
    Dvpp__Welcome w;
    char *engines[DVPP_ENGINE_COUNT];
    char *aipp[DVPPD_MAX_AIPP_CONFIGS];

    if (h->protocol < 1) {
        sock_violation(c, id, "protocol version 0 is not spoken");
        return;
    }
    c->hello = true;
    sock_envelope_init(&e, id);
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
    sock_send_env(c, &e, NULL, 0);
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
    sock_ring_totals(s, &rings, &leased);
    sock_envelope_init(&e, id);
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
    sock_send_env(c, &e, NULL, 0);
}

/* --- receiving ---------------------------------------------------------------------------- */

/* Handle one decoded packet; takes @env. */
static void dispatch_envelope(conn *c, Dvpp__Envelope *env, const int *fds, int nfds)
{
    uint64_t id = env->id;
    bool takes_fds = env->body_case == DVPP__ENVELOPE__BODY_SUBMIT ||
                     env->body_case == DVPP__ENVELOPE__BODY_BATCH_SUBMIT ||
                     env->body_case == DVPP__ENVELOPE__BODY_VIDEO_PACKET;

    if (nfds && !takes_fds) {
        dvpp__envelope__free_unpacked(env, NULL);
        sock_violation(c, id, "file descriptors on a message that takes none");
        return;
    }
    if (!c->hello && env->body_case != DVPP__ENVELOPE__BODY_HELLO) {
        dvpp__envelope__free_unpacked(env, NULL);
        sock_violation(c, id, "the first message must be Hello");
        return;
    }
    switch (env->body_case) {
    case DVPP__ENVELOPE__BODY_SUBMIT:
        sock_on_submit(c, env, fds, nfds); /* takes env */
        return;
    case DVPP__ENVELOPE__BODY_BATCH_SUBMIT:
        sock_on_batch_submit(c, env, fds, nfds); /* takes env */
        return;
    case DVPP__ENVELOPE__BODY_VIDEO_PACKET:
        sock_on_video_packet(c, env, fds, nfds); /* takes env */
        return;
    case DVPP__ENVELOPE__BODY_HELLO:
        if (c->hello)
            sock_violation(c, id, "Hello twice");
        else
            on_hello(c, id, env->hello);
        break;
    case DVPP__ENVELOPE__BODY_STREAM_CREATE:
        sock_on_stream_create(c, id);
        break;
    case DVPP__ENVELOPE__BODY_STREAM_DESTROY:
        sock_on_stream_wait(c, id, env->stream_destroy->stream, true);
        break;
    case DVPP__ENVELOPE__BODY_STREAM_SYNC:
        sock_on_stream_wait(c, id, env->stream_sync->stream, false);
        break;
    case DVPP__ENVELOPE__BODY_RING_OPEN:
        sock_on_ring_open(c, id, env->ring_open);
        break;
    case DVPP__ENVELOPE__BODY_RING_CLOSE:
        sock_on_ring_close(c, id, env->ring_close->ring);
        break;
    case DVPP__ENVELOPE__BODY_SLOT_RELEASE:
        sock_on_slot_release(c, id, env->slot_release);
        break;
    case DVPP__ENVELOPE__BODY_BATCH_QUERY:
        sock_on_batch_query(c, id, env->batch_query->batch, false);
        break;
    case DVPP__ENVELOPE__BODY_BATCH_CANCEL:
        sock_on_batch_query(c, id, env->batch_cancel->batch, true);
        break;
    case DVPP__ENVELOPE__BODY_STATS_QUERY:
        on_stats(c, id);
        break;
    case DVPP__ENVELOPE__BODY_VIDEO_OPEN:
        sock_on_video_open(c, id, env->video_open);
        break;
    case DVPP__ENVELOPE__BODY_VIDEO_CLOSE:
        sock_on_video_close(c, id, env->video_close->channel);
        break;
    case DVPP__ENVELOPE__BODY_TRACE_GET:
        sock_on_trace_get(c, id, env->trace_get->id);
        break;
    default:
        sock_violation(c, id, "not a request the daemon takes");
        break;
    }
    dvpp__envelope__free_unpacked(env, NULL);
}

void sock_read_packets(conn *c)
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
            if (n == -EMSGSIZE || n == -EBADMSG) {
                /* violations: the answers already queued still go out */
                atomic_fetch_add(&s->n.dropped, 1);
                sock_conn_cut(c, n == -EMSGSIZE ? "packet too large" : "bad ancillary data");
                return;
            }
            sock_conn_close(c, n == 0 ? NULL : "receive failed");
            return;
        }
        env = dvpp__envelope__unpack(NULL, (size_t)n, s->rx);
        if (!env) {
            ipc_close_fds(fds, nfds);
            sock_violation(c, 0, "undecodable packet");
            return;
        }
        dispatch_envelope(c, env, fds, nfds);
        ipc_close_fds(fds, nfds); /* inputs are mapped; the fds are not kept */
    }
}

/* --- peer checks --------------------------------------------------------------------------- */

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
bool sock_peer_allowed(const dvppd_sock *s, int fd, uid_t uid, gid_t gid)
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
