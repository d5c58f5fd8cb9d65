/* sock_server: the socket front end's process side: the listening
 * socket, the epoll thread and its loop (accept, read, write, the
 * completion queue, lease expiry, reaping closed connections), and start,
 * drain and stop (dvppd_sock.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4, SOCK_* flags */
#endif
#include "sock_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dvpp_log.h"

#define RX_SLACK (64u << 10) /* packet room beyond max_inline */

/* Epoll tags: the listening socket and the eventfd by these addresses,
 * connections by their record. */
static char k_tag_listen, k_tag_event;

/* --- the completion queue ---------------------------------------------------------------- */

void sock_post_done(dvppd_sock *s, sjob *j, bool wake)
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
    if (!wake)
        return;
    w = write(s->evfd, &one, sizeof(one));
    (void)w; /* the counter only saturates, never loses the wake-up */
}

/* A finished job's answer (nothing for a closed connection), then its end. */
static void complete_job(dvppd_sock *s, sjob *j)
{
    if (j->answered) {
        sock_single_answered(j); /* the worker sent its Result */
    } else if (!j->c->closed) {
        if (j->type == JOB_SINGLE)
            sock_send_single_result(j);
        else if (j->type == JOB_BATCH)
            sock_send_batch_result(j);
        else if (j->type == JOB_VFRAME)
            sock_send_video_frame(j);
        else if (j->type == JOB_VDEC || j->type == JOB_VENC)
            sock_video_answer(j);
        else
            sock_send_notice(j);
    }
    if (j->type != JOB_NOTICE && j->type != JOB_VFRAME) {
        j->c->inflight--;
        atomic_fetch_sub(&s->inflight, 1);
    }
    if (j->type == JOB_VDEC || j->type == JOB_VENC)
        sock_video_job_end(j);
    else
        sock_job_free(j);
}

/* Answer every job the queue holds. Socket thread (or the stopping main
 * thread once the socket thread is joined). */
static void take_completions(dvppd_sock *s)
{
    sjob *j;

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
        complete_job(s, j);
    }
}

/* The same, after the eventfd woke the thread (its counter reset). */
static void drain_completions(dvppd_sock *s)
{
    uint64_t v;
    ssize_t rd = read(s->evfd, &v, sizeof(v));

    (void)rd;
    take_completions(s);
}

/* --- connections: accept, reap ------------------------------------------------------------ */

static void accept_one(dvppd_sock *s, int fd)
{
    pid_t pid;
    uid_t uid;
    gid_t gid;
    conn *c;
    struct epoll_event ev = {.events = EPOLLIN};

    if (ipc_peer_cred(fd, &pid, &uid, &gid) != 0 || !sock_peer_allowed(s, fd, uid, gid)) {
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
    c = sock_conn_new(s, fd, pid, uid);
    if (!c) {
        close(fd);
        return;
    }
    ev.data.ptr = c;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        sock_conn_unref(c);
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

/* Unlink closed connections with nothing in flight and their socket
 * closed (a cut one's, once its last answers are out or its linger time
 * is over); their streams are idle then, so freeing them waits for
 * nothing. */
static void reap_conns(dvppd_sock *s)
{
    conn **pp = &s->conns;
    uint64_t now = sock_now_ms();

    while (*pp) {
        conn *c = *pp;
        sock_conn_linger_check(c, now);
        if (!c->closed || c->inflight || c->fd >= 0) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        s->nconns--;
        sock_conn_release(c);
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

/* The ring gauges for other threads (dvppd_sock_totals_get). */
static void publish_ring_totals(dvppd_sock *s)
{
    uint64_t rings = 0, slots = 0, leased = 0;

    for (conn *k = s->conns; k; k = k->next)
        for (uint32_t i = 0; !k->closed && i < s->cfg.max_rings; i++)
            if (k->rings[i].ring) {
                rings++;
                slots += ipc_ring_slots(k->rings[i].ring);
                leased += ipc_ring_leased(k->rings[i].ring);
            }
    atomic_store_explicit(&s->pub_rings, rings, memory_order_relaxed);
    atomic_store_explicit(&s->pub_slots, slots, memory_order_relaxed);
    atomic_store_explicit(&s->pub_leased, leased, memory_order_relaxed);
}

static void *epoll_thread_main(void *arg)
{
    dvppd_sock *s = arg;
    uint64_t last_tick = sock_now_ms();

    while (!atomic_load(&s->stop)) {
        struct epoll_event evs[64];
        int n = epoll_wait(s->epfd, evs, 64, SOCK_TICK_MS);
        atomic_fetch_add_explicit(&s->turns, 1, memory_order_relaxed);
        refresh_settings(s);
        /* Jobs their workers answered are posted without a wake-up: their
         * records end here, before this turn's packets are admitted (so
         * max_inflight and the stream pool see them). */
        take_completions(s);
        for (int i = 0; i < n; i++) {
            void *tag = evs[i].data.ptr;
            if (tag == &k_tag_listen) {
                accept_all(s);
            } else if (tag == &k_tag_event) {
                drain_completions(s);
            } else {
                conn *c = tag;
                if (c->fd >= 0 && (evs[i].events & EPOLLOUT))
                    sock_flush_outq(c); /* a cut connection's last answers too */
                if (c->lingering && (evs[i].events & (EPOLLHUP | EPOLLERR)))
                    sock_conn_close(c, NULL); /* the peer left */
                if (!c->closed && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                    sock_read_packets(c);
            }
        }
        if (sock_now_ms() - last_tick >= SOCK_TICK_MS) {
            last_tick = sock_now_ms();
            sock_expire_leases(s);
            publish_ring_totals(s);
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
    if (pthread_create(&s->thread, NULL, epoll_thread_main, s) != 0)
        return dvpp_err_set(err, DVPP_ESYS, NULL, "cannot start the socket thread");
    return DVPP_OK;
}

static void free_front_end(dvppd_sock *s)
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
    sock_registry_fini(&s->names);
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
    sock_registry_init(&s->names);
    s->cfg = c->sock;
    s->live = env->live;
    s->set = dvppd_live_get(env->live);
    s->device = env->device;
    s->traces = env->traces;
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
        free_front_end(s);
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

void dvppd_sock_totals_get(dvppd_sock *s, dvppd_sock_totals *t)
{
    memset(t, 0, sizeof(*t));
    if (!s)
        return;
    t->connections = atomic_load_explicit(&s->open_conns, memory_order_relaxed);
    t->rings = atomic_load_explicit(&s->pub_rings, memory_order_relaxed);
    t->slots = atomic_load_explicit(&s->pub_slots, memory_order_relaxed);
    t->slots_leased = atomic_load_explicit(&s->pub_leased, memory_order_relaxed);
    t->connections_total = atomic_load(&s->n.connections);
    t->submitted = atomic_load(&s->n.submitted);
    t->failed = atomic_load(&s->n.failed);
    t->leases_expired = atomic_load(&s->n.leases_expired);
    t->bad_releases = atomic_load(&s->n.bad_releases);
    t->dropped = atomic_load(&s->n.dropped);
    t->refused_peers = atomic_load(&s->n.refused_peers);
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
    drain_completions(s);
    if (atomic_load(&s->inflight) > 0) {
        /* Jobs past the timeout still hold this record (their completions
         * post here when the device cancels them): it is left to the
         * process's exit rather than freed under them. */
        dvpp_log(DVPP_LOG_ERR, "socket: %u job(s) did not end; leaving them to the "
                 "process exit", atomic_load(&s->inflight));
        return;
    }
    for (conn *c = s->conns; c; c = c->next)
        sock_conn_close(c, NULL);
    for (conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        sock_conn_release(c);
    }
    s->conns = NULL;
    free_front_end(s);
}
