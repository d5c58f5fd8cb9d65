/* dvppclient.c: the connection of libdvppclient: connect and handshake,
 * sending, and the leader/follower reading of answers (client_int.h).
 *
 * Why leader/follower: several threads may wait on one socket for
 * different answers that come back in any order. Letting exactly one of
 * them read at a time, and park what it reads for the others, needs no
 * extra thread in the library and no callback into the application.
 */
#include "client_int.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ipc_msg.h"

#ifndef DVPP_VERSION
#define DVPP_VERSION "unknown"
#endif

/* --- status names and error detail ------------------------------------------- */

/* A copy of core/dvpp_status.h's names: the library must not link libdvpp,
 * and the values are a wire contract that never changes. */
static const struct {
    int status;
    const char *name;
} status_names[] = {
    {DVPPC_OK, "OK"},
    {DVPPC_EINVAL, "EINVAL"},
    {DVPPC_ENOMEM, "ENOMEM"},
    {DVPPC_EAGAIN, "EAGAIN"},
    {DVPPC_ELIMIT, "ELIMIT"},
    {DVPPC_ECORRUPT, "ECORRUPT"},
    {DVPPC_EUNSUPPORTED, "EUNSUPPORTED"},
    {DVPPC_EFORMAT, "EFORMAT"},
    {DVPPC_EOVERFLOW, "EOVERFLOW"},
    {DVPPC_ECODEC, "ECODEC"},
    {DVPPC_EIO, "EIO"},
    {DVPPC_ESYS, "ESYS"},
    {DVPPC_ESTRIDE, "ESTRIDE"},
    {DVPPC_ENOSPC, "ENOSPC"},
    {DVPPC_ECANCELED, "ECANCELED"},
    {DVPPC_ETIMEDOUT, "ETIMEDOUT"},
    {DVPPC_ENOTFOUND, "ENOTFOUND"},
    {DVPPC_EBUSY, "EBUSY"},
    {DVPPC_EPROFILE, "EPROFILE"},
};

const char *dvppc_status_name(int status)
{
    for (size_t i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++)
        if (status_names[i].status == status)
            return status_names[i].name;
    return "UNKNOWN";
}

void dvppc__copy(char *dst, size_t cap, const char *src)
{
    size_t n;

    if (!cap)
        return;
    n = src ? strnlen(src, cap - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

static void fill_errv(dvppc_error *err, int status, const char *field, const char *fmt,
                      va_list ap)
{
    err->status = status;
    dvppc__copy(err->code, sizeof(err->code), dvppc_status_name(status));
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    dvppc__copy(err->field, sizeof(err->field), field);
}

int dvppc__fail(dvppc_error *err, int status, const char *field, const char *fmt, ...)
{
    va_list ap;

    if (err) {
        va_start(ap, fmt);
        fill_errv(err, status, field, fmt, ap);
        va_end(ap);
    }
    return status;
}

int dvppc__from_error(const Dvpp__Error *e, dvppc_error *err)
{
    /* a daemon that sends a non-negative status in an Error is confused;
     * the caller must still see a failure */
    int status = e->status < 0 ? e->status : DVPPC_EIO;

    if (err) {
        err->status = status;
        dvppc__copy(err->code, sizeof(err->code),
                    e->code && e->code[0] ? e->code : dvppc_status_name(status));
        dvppc__copy(err->message, sizeof(err->message), e->message);
        dvppc__copy(err->field, sizeof(err->field), e->field);
    }
    return status;
}

int dvppc__expect(const cl_msg *m, Dvpp__Envelope__BodyCase want, dvppc_error *err)
{
    const Dvpp__Envelope *env = m->env;

    /* protobuf-c sets the case only with the submessage present; the
     * pointer test (the union's members share storage, so any one will
     * do) is belt and braces against a generator change */
    if (env->body_case == want && env->welcome)
        return 0;
    if (env->body_case == DVPP__ENVELOPE__BODY_ERROR && env->error)
        return dvppc__from_error(env->error, err);
    return dvppc__fail(err, DVPPC_EIO, NULL,
                       "dvppd answered request %llu with message %d, expected %d",
                       (unsigned long long)env->id, (int)env->body_case, (int)want);
}

void dvppc__break(dvppc_conn *c, int status, const char *fmt, ...)
{
    va_list ap;

    if (!c->broken) {
        c->broken = status;
        va_start(ap, fmt);
        fill_errv(&c->broken_err, status, NULL, fmt, ap);
        va_end(ap);
        if (c->fatal.status) {
            /* the daemon said why before it hung up: keep its words */
            size_t n = strlen(c->broken_err.message);
            snprintf(c->broken_err.message + n, sizeof(c->broken_err.message) - n,
                     " (dvppd: %.24s %.180s)", c->fatal.code, c->fatal.message);
            memcpy(c->broken_err.field, c->fatal.field, sizeof(c->broken_err.field));
        }
        /* the stream cannot be trusted any more; tell the daemon at once */
        shutdown(c->fd, SHUT_RDWR);
    }
    pthread_cond_broadcast(&c->turn);
}

int dvppc__broken(dvppc_conn *c, dvppc_error *err)
{
    if (err)
        *err = c->broken_err;
    return c->broken;
}

/* --- pending requests and parked answers ------------------------------------ */

void dvppc__msg_free(cl_msg *m)
{
    if (!m)
        return;
    if (m->env)
        dvpp__envelope__free_unpacked(m->env, NULL);
    if (m->fd >= 0)
        close(m->fd);
    free(m);
}

static void msgs_free(cl_msg *m)
{
    while (m) {
        cl_msg *next = m->next;
        dvppc__msg_free(m);
        m = next;
    }
}

int dvppc__register(dvppc_conn *c, uint64_t *id, dvppc_error *err)
{
    cl_pend *p = calloc(1, sizeof(*p));

    if (!p)
        return dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for a request");
    p->id = c->next_id++;
    p->last = p->id;
    p->next = c->pend;
    c->pend = p;
    *id = p->id;
    return 0;
}

int dvppc__register_block(dvppc_conn *c, uint64_t n, uint64_t *id, dvppc_error *err)
{
    uint64_t last;
    int st;

    if (!n || __builtin_add_overflow(c->next_id, n - 1, &last) || last == UINT64_MAX)
        return dvppc__fail(err, DVPPC_EOVERFLOW, NULL, "no block of %llu request ids left",
                           (unsigned long long)n);
    st = dvppc__register(c, id, err);
    if (st)
        return st;
    c->pend->last = last;
    c->next_id = last + 1;
    return 0;
}

cl_pend *dvppc__find(dvppc_conn *c, uint64_t id)
{
    for (cl_pend *p = c->pend; p; p = p->next)
        if (id >= p->id && id <= p->last)
            return p;
    return NULL;
}

void dvppc__forget(dvppc_conn *c, uint64_t id)
{
    for (cl_pend **pp = &c->pend; *pp; pp = &(*pp)->next) {
        cl_pend *p = *pp;
        if (p->id == id) {
            *pp = p->next;
            msgs_free(p->head);
            free(p);
            return;
        }
    }
}

static void queue_push(cl_msg **head, cl_msg **tail, cl_msg *m)
{
    m->next = NULL;
    if (*tail)
        (*tail)->next = m;
    else
        *head = m;
    *tail = m;
}

static cl_msg *queue_pop(cl_msg **head, cl_msg **tail)
{
    cl_msg *m = *head;

    if (m) {
        *head = m->next;
        if (!*head)
            *tail = NULL;
        m->next = NULL;
    }
    return m;
}

void dvppc__unpop(dvppc_conn *c, uint64_t id, cl_msg *m)
{
    cl_pend *p = dvppc__find(c, id);

    if (!p) {
        dvppc__msg_free(m);
        return;
    }
    m->next = p->head;
    p->head = m;
    if (!p->tail)
        p->tail = m;
}

/* --- reading: the leader's turn ------------------------------------------------- */

/* Tag a Result with the ring it names as the connection stands now: ids
 * may be reused after a RingClose, so the ring is pinned by address and
 * serial on arrival (the socket's order) rather than on delivery. A notice
 * for a ring whose RingOpened is still being mapped by its opener finds no
 * ring and is delivered with data NULL (its lease then expires). */
static void tag_ring(dvppc_conn *c, cl_msg *m)
{
    const Dvpp__Envelope *env = m->env;
    const Dvpp__Result *res = NULL;
    dvppc_ring *r;

    if (env->body_case == DVPP__ENVELOPE__BODY_RESULT)
        res = env->result;
    else if (env->body_case == DVPP__ENVELOPE__BODY_VIDEO_FRAME && env->video_frame)
        res = env->video_frame->result;
    if (!res || !res->ring)
        return;
    r = dvppc__ring_by_id(c, res->ring);
    if (r) {
        m->ring = r;
        m->ring_serial = r->serial;
    }
}

/* Give back the slot of a notice dropped past DVPPC_MAX_NOTICES. This is
 * the reading thread with the lock held, so the SlotRelease is sent
 * without blocking; a full socket (EAGAIN) or a failed send leaves the
 * slot to its lease timeout, as before. Its id is one nobody waits for, so
 * an Error answering it is dropped on arrival. Lock held. */
static void release_dropped(dvppc_conn *c, const Dvpp__Result *res)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__SlotRelease sr = DVPP__SLOT_RELEASE__INIT;
    uint8_t buf[64];
    size_t len;
    ssize_t n;

    env.id = c->next_id++;
    env.protocol = DVPPC_PROTOCOL;
    env.body_case = DVPP__ENVELOPE__BODY_SLOT_RELEASE;
    env.slot_release = &sr;
    sr.ring = res->ring;
    sr.slot = res->slot;
    sr.generation = res->generation;
    len = dvpp__envelope__get_packed_size(&env);
    if (len > sizeof(buf))
        return;
    dvpp__envelope__pack(&env, buf);
    do
        n = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
}

/* An unsolicited packet (id 0): HTTP deliveries are queued for
 * dvppc_wait(0), up to DVPPC_MAX_NOTICES; past it a delivery is counted
 * and its slot given back (when it names a ring of ours that is open and
 * it succeeded: a failed one holds no slot). An Error is the daemon's last
 * word before it hangs up. */
static void take_unsolicited(dvppc_conn *c, cl_msg *m)
{
    const Dvpp__Envelope *env = m->env;

    if (env->body_case == DVPP__ENVELOPE__BODY_RESULT && env->result) {
        tag_ring(c, m);
        if (c->notices < DVPPC_MAX_NOTICES) {
            queue_push(&c->notice_head, &c->notice_tail, m);
            c->notices++;
            return;
        }
        c->notices_dropped++;
        if (m->ring && env->result->status == 0)
            release_dropped(c, env->result);
    }
    if (env->body_case == DVPP__ENVELOPE__BODY_ERROR && env->error)
        dvppc__from_error(env->error, &c->fatal);
    dvppc__msg_free(m);
}

/* Decode one packet and park it. Lock held. */
static void park(dvppc_conn *c, const uint8_t *buf, size_t len, int fd)
{
    Dvpp__Envelope *env = dvpp__envelope__unpack(NULL, len, buf);
    cl_msg *m;
    cl_pend *p;

    if (!env) {
        if (fd >= 0)
            close(fd);
        dvppc__break(c, DVPPC_EIO, "dvppd sent an undecodable packet");
        return;
    }
    /* only RingOpened carries a descriptor, and it always does */
    if ((env->body_case == DVPP__ENVELOPE__BODY_RING_OPENED) != (fd >= 0)) {
        if (fd >= 0)
            close(fd);
        dvppc__break(c, DVPPC_EIO, "dvppd sent message %d with %s descriptor",
                     (int)env->body_case, fd >= 0 ? "an unannounced" : "no");
        dvpp__envelope__free_unpacked(env, NULL);
        return;
    }
    m = calloc(1, sizeof(*m));
    if (!m) {
        if (fd >= 0)
            close(fd);
        dvpp__envelope__free_unpacked(env, NULL);
        /* a lost answer would leave its waiter blocked forever */
        dvppc__break(c, DVPPC_ENOMEM, "no memory for an answer");
        return;
    }
    m->env = env;
    m->fd = fd;
    if (env->id == 0) {
        take_unsolicited(c, m);
        return;
    }
    p = dvppc__find(c, env->id);
    if (!p) {
        /* answers nobody waits for: an invalid SlotRelease's Error, the
         * Ack of a fire-and-forget RingClose */
        dvppc__msg_free(m);
        return;
    }
    tag_ring(c, m);
    queue_push(&p->head, &p->tail, m);
}

/* What a failed receive means for the connection. Lock held. */
static void recv_failed(dvppc_conn *c, ssize_t n)
{
    if (n == 0)
        dvppc__break(c, DVPPC_EIO, "dvppd closed the connection");
    else if (n == -EMSGSIZE)
        dvppc__break(c, DVPPC_EIO, "dvppd sent a packet larger than %zu bytes",
                     c->rx_cap);
    else if (n == -EBADMSG)
        dvppc__break(c, DVPPC_EIO, "dvppd sent malformed ancillary data");
    else if (n == -ECONNRESET || n == -EPIPE)
        dvppc__break(c, DVPPC_EIO, "dvppd reset the connection");
    else
        dvppc__break(c, DVPPC_ESYS, "recvmsg: %s", strerror((int)-n));
}

/* One turn as the leader: wait up to @timeout_ms (-1 forever) for a
 * packet, read and park it. The lock is held on entry and exit but not
 * around the system calls, so other threads can send and park meanwhile.
 * Returns false when nothing came in time. */
static bool lead(dvppc_conn *c, int timeout_ms)
{
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    int fds[1] = {-1}, nfds = 0, pr, perr = 0;
    ssize_t n = 0;

    c->reading = true;
    pthread_mutex_unlock(&c->mu);
    pr = poll(&pfd, 1, timeout_ms);
    if (pr < 0)
        perr = errno;
    else if (pr > 0)
        n = ipc_recv(c->fd, c->rx, c->rx_cap, fds, 1, &nfds);
    pthread_mutex_lock(&c->mu);
    c->reading = false;
    pthread_cond_broadcast(&c->turn);
    if (pr == 0 || perr == EINTR)
        return false;
    if (pr < 0) {
        dvppc__break(c, DVPPC_ESYS, "poll: %s", strerror(perr));
        return true;
    }
    if (n == -EAGAIN || n == -EINTR)
        return true;
    if (n <= 0) {
        recv_failed(c, n);
        return true;
    }
    park(c, c->rx, (size_t)n, nfds ? fds[0] : -1);
    return true;
}

static struct timespec deadline_in(int ms)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* Milliseconds left until @d, rounded up (so a waiter never spins on a
 * sub-millisecond remainder), 0 once passed. */
static int ms_left(const struct timespec *d)
{
    struct timespec now;
    long long ns;

    clock_gettime(CLOCK_MONOTONIC, &now);
    ns = (long long)(d->tv_sec - now.tv_sec) * 1000000000LL + (d->tv_nsec - now.tv_nsec);
    if (ns <= 0)
        return 0;
    return ns / 1000000LL >= 0x7fffffffLL ? 0x7fffffff : (int)((ns + 999999LL) / 1000000LL);
}

static cl_msg *take_answer(dvppc_conn *c, cl_pend *p)
{
    cl_msg *m;

    if (p)
        return queue_pop(&p->head, &p->tail);
    m = queue_pop(&c->notice_head, &c->notice_tail);
    if (m)
        c->notices--;
    return m;
}

int dvppc__await(dvppc_conn *c, uint64_t id, int timeout_ms, cl_msg **out,
                 dvppc_error *err)
{
    struct timespec deadline;
    bool timed = timeout_ms >= 0;
    cl_pend *p = NULL;
    int st;

    *out = NULL;
    if (timed)
        deadline = deadline_in(timeout_ms);
    if (id) {
        p = dvppc__find(c, id);
        if (!p)
            return dvppc__fail(err, DVPPC_EINVAL, "ticket",
                               "no request %llu is waiting for an answer",
                               (unsigned long long)id);
        /* two waiters on one entry could free it under each other */
        if (p->waiting)
            return dvppc__fail(err, DVPPC_EBUSY, "ticket",
                               "another thread waits for request %llu",
                               (unsigned long long)id);
        p->waiting = true;
    }
    for (;;) {
        int left = timed ? ms_left(&deadline) : -1;

        *out = take_answer(c, p);
        if (*out) {
            st = 0;
            break;
        }
        if (c->broken) {
            st = dvppc__broken(c, err);
            break;
        }
        if (!c->reading) {
            if (!lead(c, left) && left == 0)
                goto timeout;
            continue;
        }
        if (!timed)
            pthread_cond_wait(&c->turn, &c->mu);
        else if (left == 0)
            goto timeout;
        else
            pthread_cond_timedwait(&c->turn, &c->mu, &deadline);
    }
    if (p)
        p->waiting = false;
    return st;

timeout:
    if (p)
        p->waiting = false;
    return dvppc__fail(err, DVPPC_ETIMEDOUT, NULL, "no answer within %d ms", timeout_ms);
}

/* --- sending -------------------------------------------------------------------- */

/* What a failed sendmsg means: a dead peer breaks the connection; anything
 * else failed before a byte left, so the connection stays usable. */
static int send_failed(dvppc_conn *c, int e, size_t len, dvppc_error *err)
{
    int st;

    if (e == -EMSGSIZE)
        return dvppc__fail(err, DVPPC_ELIMIT, NULL,
                           "a %zu-byte packet does not fit the socket's send buffer", len);
    if (e != -EPIPE && e != -ECONNRESET && e != -ENOTCONN)
        return dvppc__fail(err, DVPPC_ESYS, NULL, "sendmsg: %s", strerror(-e));
    pthread_mutex_lock(&c->mu);
    dvppc__break(c, DVPPC_EIO, "dvppd closed the connection");
    st = dvppc__broken(c, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

int dvppc__send(dvppc_conn *c, const Dvpp__Envelope *env, const int *fds, int nfds,
                dvppc_error *err)
{
    size_t len = dvpp__envelope__get_packed_size(env);
    uint8_t *buf;
    int st;

    if (len > c->max_packet)
        return dvppc__fail(err, DVPPC_ELIMIT, NULL,
                           "request of %zu bytes exceeds the %zu-byte packet limit", len,
                           c->max_packet);
    pthread_mutex_lock(&c->mu);
    st = c->broken ? dvppc__broken(c, err) : 0;
    pthread_mutex_unlock(&c->mu);
    if (st)
        return st;
    buf = malloc(len ? len : 1);
    if (!buf)
        return dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for a %zu-byte request", len);
    dvpp__envelope__pack(env, buf);
    st = ipc_send(c->fd, buf, len, fds, nfds);
    free(buf);
    return st ? send_failed(c, st, len, err) : 0;
}

int dvppc__call(dvppc_conn *c, Dvpp__Envelope *env, cl_msg **answer, dvppc_error *err)
{
    uint64_t id = 0;
    int st;

    *answer = NULL;
    pthread_mutex_lock(&c->mu);
    st = dvppc__register(c, &id, err);
    pthread_mutex_unlock(&c->mu);
    if (st)
        return st;
    env->protocol = DVPPC_PROTOCOL;
    env->id = id;
    st = dvppc__send(c, env, NULL, 0, err);
    pthread_mutex_lock(&c->mu);
    if (!st)
        st = dvppc__await(c, id, -1, answer, err);
    dvppc__forget(c, id);
    pthread_mutex_unlock(&c->mu);
    return st;
}

/* --- connection ----------------------------------------------------------------- */

static dvppc_conn *conn_new(void)
{
    dvppc_conn *c = calloc(1, sizeof(*c));
    pthread_condattr_t ca;

    if (!c)
        return NULL;
    c->fd = -1;
    c->next_id = 1;
    c->next_serial = 1;
    /* the Welcome is small; the buffer grows to the negotiated size */
    c->max_packet = DVPPC_PACKET_SLACK;
    c->rx_cap = DVPPC_PACKET_SLACK;
    c->rx = malloc(c->rx_cap);
    if (!c->rx)
        goto err_free;
    if (pthread_mutex_init(&c->mu, NULL))
        goto err_free_rx;
    /* timed waits must not jump with the wall clock */
    if (pthread_condattr_init(&ca))
        goto err_mutex;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_cond_init(&c->turn, &ca)) {
        pthread_condattr_destroy(&ca);
        goto err_mutex;
    }
    pthread_condattr_destroy(&ca);
    return c;

err_mutex:
    pthread_mutex_destroy(&c->mu);
err_free_rx:
    free(c->rx);
err_free:
    free(c);
    return NULL;
}

static int open_socket(const char *path, int *fd, dvppc_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    int s, e;

    /* a path that does not fit sun_path would be silently cut */
    if (n == 0 || n >= sizeof(sa.sun_path))
        return dvppc__fail(err, DVPPC_EINVAL, "path", "socket path of %zu bytes (1..%zu)",
                           n, sizeof(sa.sun_path) - 1);
    memcpy(sa.sun_path, path, n);
    s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return dvppc__fail(err, DVPPC_ESYS, NULL, "socket: %s", strerror(errno));
    if (connect(s, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
        e = errno;
        close(s);
        return dvppc__fail(err, DVPPC_ESYS, "path", "connect %s: %s", path, strerror(e));
    }
    *fd = s;
    return 0;
}

/* Adopt the daemon's Welcome: its limits size the receive buffer. */
static int take_welcome(dvppc_conn *c, const Dvpp__Welcome *w, dvppc_error *err)
{
    dvppc_server_info *i = &c->info;
    uint8_t *rx;
    int sndbuf = 0;
    socklen_t sl = sizeof(sndbuf);

    if (w->protocol != DVPPC_PROTOCOL)
        return dvppc__fail(err, DVPPC_EUNSUPPORTED, "protocol",
                           "dvppd speaks protocol %u, this library %u", w->protocol,
                           DVPPC_PROTOCOL);
    if (w->max_inline > DVPPC_MAX_INLINE_CAP)
        return dvppc__fail(err, DVPPC_EIO, "max_inline",
                           "dvppd announces max_inline %llu (at most %u accepted)",
                           (unsigned long long)w->max_inline, DVPPC_MAX_INLINE_CAP);
    i->protocol = w->protocol;
    dvppc__copy(i->version, sizeof(i->version), w->version);
    dvppc__copy(i->simd, sizeof(i->simd), w->simd);
    i->max_inline = w->max_inline;
    i->max_input_bytes = w->max_input_bytes;
    i->max_rings = w->max_rings;
    i->max_slots = w->max_slots;
    i->max_inflight = w->max_inflight;
    i->lease_timeout_ms = w->lease_timeout_ms;
    i->max_batch_items = w->max_batch_items;
    i->max_ring_bytes = w->max_ring_bytes;
    c->max_packet = (size_t)w->max_inline + DVPPC_PACKET_SLACK;
    rx = realloc(c->rx, c->max_packet);
    if (!rx)
        return dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for a %zu-byte buffer",
                           c->max_packet);
    c->rx = rx;
    c->rx_cap = c->max_packet;
    /* a seqpacket send fails with EMSGSIZE above the send buffer; ask for
     * room for the largest packet (best effort: the kernel caps it) */
    if (getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) == 0 &&
        (size_t)sndbuf < c->max_packet + 4096 && c->max_packet < 0x40000000u) {
        sndbuf = (int)c->max_packet + 4096;
        setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    }
    return 0;
}

static int handshake(dvppc_conn *c, dvppc_error *err)
{
    Dvpp__Envelope env = DVPP__ENVELOPE__INIT;
    Dvpp__Hello hello = DVPP__HELLO__INIT;
    cl_msg *m = NULL;
    uint64_t id = 0;
    int st;

    pthread_mutex_lock(&c->mu);
    st = dvppc__register(c, &id, err);
    pthread_mutex_unlock(&c->mu);
    if (st)
        return st;
    hello.protocol = DVPPC_PROTOCOL;
    hello.client = (char *)"libdvppclient " DVPP_VERSION;
    env.protocol = DVPPC_PROTOCOL;
    env.id = id;
    env.body_case = DVPP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    st = dvppc__send(c, &env, NULL, 0, err);
    pthread_mutex_lock(&c->mu);
    if (!st)
        st = dvppc__await(c, id, DVPPC_HELLO_TIMEOUT_MS, &m, err);
    dvppc__forget(c, id);
    pthread_mutex_unlock(&c->mu);
    if (st == DVPPC_EIO && err && !c->fatal.status) {
        /* gone without a word: what a peer refused by SO_PEERCRED sees */
        size_t n = strnlen(err->message, sizeof(err->message) - 1);
        snprintf(err->message + n, sizeof(err->message) - n,
                 " before its Welcome (is this uid/gid in socket.allow_uids/"
                 "allow_gids?)");
    }
    if (st)
        goto out;
    st = dvppc__expect(m, DVPP__ENVELOPE__BODY_WELCOME, err);
    if (!st)
        st = take_welcome(c, m->env->welcome, err);
out:
    dvppc__msg_free(m);
    return st;
}

int dvppc_connect(const char *path, dvppc_conn **out, dvppc_error *err)
{
    dvppc_conn *c;
    int st;

    if (!out)
        return dvppc__fail(err, DVPPC_EINVAL, "out", "no place for the connection");
    *out = NULL;
    if (!path)
        return dvppc__fail(err, DVPPC_EINVAL, "path", "no socket path");
    c = conn_new();
    if (!c)
        return dvppc__fail(err, DVPPC_ENOMEM, NULL, "no memory for a connection");
    st = open_socket(path, &c->fd, err);
    if (st)
        goto err_close;
    st = handshake(c, err);
    if (st)
        goto err_close;
    *out = c;
    return 0;

err_close:
    dvppc_close(c);
    return st;
}

void dvppc_close(dvppc_conn *c)
{
    if (!c)
        return;
    /* closing the socket ends every ring and lease in the daemon */
    if (c->fd >= 0)
        close(c->fd);
    dvppc__rings_free(c);
    while (c->pend) {
        cl_pend *p = c->pend;
        c->pend = p->next;
        msgs_free(p->head);
        free(p);
    }
    msgs_free(c->notice_head);
    free(c->rx);
    pthread_cond_destroy(&c->turn);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

const dvppc_server_info *dvppc_info(const dvppc_conn *c)
{
    return c ? &c->info : NULL;
}

int dvppc_fd(const dvppc_conn *c)
{
    return c ? c->fd : -1;
}

uint64_t dvppc_notices_dropped(dvppc_conn *c)
{
    uint64_t n;

    if (!c)
        return 0;
    pthread_mutex_lock(&c->mu);
    n = c->notices_dropped;
    pthread_mutex_unlock(&c->mu);
    return n;
}
