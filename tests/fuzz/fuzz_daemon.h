/* The daemon's socket front end in the fuzzer's process, for fuzz_sock and
 * fuzz_ring (header only: each target stays one translation unit).
 *
 * fuzz_daemon_start() starts what dvppd's main() starts for the socket:
 * a pipe device, the settings holder and dvppd_sock on a path in /tmp,
 * with small limits (so a job costs milliseconds). Each input then talks
 * to it over a real SOCK_SEQPACKET connection; fuzz_daemon_settle() waits
 * until the daemon has let go of the connection and checks that the
 * process holds no more descriptors than before the input: a descriptor
 * the daemon forgot to close is a bug, reported as one (abort). */
#ifndef FUZZ_DAEMON_H
#define FUZZ_DAEMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "device/dvpp_batchjob.h"
#include "dvpp_log.h"
#include "dvpp_video.h"
#include "dvppd_live.h"
#include "dvppd_sock.h"
#include "ipc_msg.h"
#include "fuzz_util.h"
#include "proto/dvpp.pb-c.h"

/* Inputs the harness attaches as memfds: fixed-size, so a message can
 * name their length (input_len 8192) without knowing the content. */
#define FUZZ_BLOB_BYTES 8192u

#define FUZZ_MAX_FDS 1024

typedef struct fuzz_fdid {
    int fd;
    dev_t dev;
    ino_t ino;
} fuzz_fdid;

typedef struct fuzz_daemon {
    dvppd_config cfg;
    dvpp_device *device;
    dvppd_live *live;
    dvppd_sock *sock;
    char path[108];
    /* JPEG, PNG, H.264 (Annex-B), each zero-padded to FUZZ_BLOB_BYTES */
    uint8_t blob[3][FUZZ_BLOB_BYTES];
    size_t blob_len[3];          /* the real length before the padding */
    /* Descriptors open between inputs, and the files this input sent. A
     * descriptor that appears during an input is the daemon's leak when it
     * is one of those files or a kind the daemon makes (sockets, memfds,
     * eventfds); other newcomers (the sanitizer's symbolizer pipes, opened
     * when libFuzzer prints a new function) are not the daemon's. */
    fuzz_fdid base[FUZZ_MAX_FDS];
    int nbase;
    fuzz_fdid sent[64];
    unsigned nsent;
} fuzz_daemon;

static inline uint64_t fuzz_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline void fuzz_sleep_us(long us)
{
    struct timespec ts = {0, us * 1000};

    nanosleep(&ts, NULL);
}

/* The descriptors open in this process (not the listing's own). */
static inline int fuzz_fd_list(fuzz_fdid *out, int cap)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (!d)
        abort();
    while ((e = readdir(d)) != NULL && n < cap) {
        struct stat sb;
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == dirfd(d) || fstat(fd, &sb) != 0)
            continue;
        out[n++] = (fuzz_fdid){fd, sb.st_dev, sb.st_ino};
    }
    closedir(d);
    return n;
}

static inline void fuzz_fd_name(int fd, char *target, size_t cap)
{
    char path[64];
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    n = readlink(path, target, cap - 1);
    target[n > 0 ? n : 0] = '\0';
}

/* Remember @fd as sent by this input (its file, not its number). */
static inline void fuzz_sent(fuzz_daemon *d, int fd)
{
    struct stat sb;

    if (d->nsent < sizeof(d->sent) / sizeof(d->sent[0]) && fstat(fd, &sb) == 0)
        d->sent[d->nsent++] = (fuzz_fdid){fd, sb.st_dev, sb.st_ino};
}

/* A plain file of its own (a unique inode, unlike /dev/null), unlinked. */
static inline int fuzz_tmpfile(void)
{
    int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

    if (fd < 0)
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        abort();
    return fd;
}

/* Descriptors open now that were not before the input and are the
 * daemon's doing (see fuzz_daemon); printed when @say. */
static inline int fuzz_fd_suspects(fuzz_daemon *d, const fuzz_fdid *now, int n, bool say)
{
    int bad = 0;

    for (int i = 0; i < n; i++) {
        bool old = false, sent = false, kind;
        char name[256];
        for (int k = 0; k < d->nbase && !old; k++)
            old = d->base[k].fd == now[i].fd && d->base[k].dev == now[i].dev &&
                  d->base[k].ino == now[i].ino;
        if (old)
            continue;
        for (unsigned k = 0; k < d->nsent && !sent; k++)
            sent = d->sent[k].dev == now[i].dev && d->sent[k].ino == now[i].ino;
        fuzz_fd_name(now[i].fd, name, sizeof(name));
        kind = !strncmp(name, "socket:", 7) || !strncmp(name, "memfd:", 6) ||
               !strncmp(name, "anon_inode:", 11);
        if (sent || kind) {
            bad++;
            if (say)
                fprintf(stderr, "  fd %d -> %s (%s)\n", now[i].fd, name,
                        sent ? "a descriptor the client sent" : "the daemon's kind");
        }
    }
    return bad;
}

static dvpp_status fuzz_venc_sink(void *ctx, const dvpp_vframe *f, dvpp_err *err)
{
    (void)ctx, (void)f, (void)err;
    return DVPP_OK;
}

/* A 32x32, 3-frame H.264 Annex-B stream (libx264), checked to decode. */
static inline void fuzz_make_h264(dvpp_buf *out)
{
    dvpp_venc_opts o;
    dvpp_venc *enc = NULL;
    dvpp_image img = {0};
    dvpp_vdec_opts vo;

    dvpp_buf_init(out);
    dvpp_venc_opts_init(&o);
    o.codec = DVPP_VIDEO_H264;
    o.width = o.height = 32;
    o.gop = 2;
    if (dvpp_image_init(&img, DVPP_PIXEL_NV12, 32, 32, 1, 1, NULL) != DVPP_OK ||
        dvpp_image_alloc(&img, NULL) != DVPP_OK ||
        dvpp_venc_open(&o, out, &enc, NULL) != DVPP_OK)
        abort();
    for (int f = 0; f < 3; f++) {
        for (size_t i = 0; i < img.size; i++)
            img.data[i] = (uint8_t)(i * 3 + (size_t)f * 40);
        if (dvpp_venc_frame(enc, &img, f == 0, NULL) != DVPP_OK)
            abort();
    }
    if (dvpp_venc_finish(enc, NULL) != DVPP_OK)
        abort();
    dvpp_venc_close(enc);
    dvpp_image_free(&img);
    dvpp_vdec_opts_init(&vo);
    if (out->len > FUZZ_BLOB_BYTES ||
        dvpp_video_decode(out->data, out->len, &vo, NULL, fuzz_venc_sink, NULL, NULL, NULL) !=
            DVPP_OK)
        abort();
}

/* A named server-side AIPP config ("rgb") as the daemon loads one. */
static inline void fuzz_aipp_file(fuzz_daemon *d, const char *file)
{
    static const char text[] =
        "aipp_op {\n aipp_mode : static\n input_format : RGB888_U8\n"
        " mean_chn_0 : 10\n var_reci_chn_0 : 0.5\n}\n";
    FILE *f = fopen(file, "w");

    if (!f || fwrite(text, 1, sizeof(text) - 1, f) != sizeof(text) - 1 || fclose(f) != 0)
        abort();
    snprintf(d->cfg.aipp[0].name, sizeof(d->cfg.aipp[0].name), "rgb");
    snprintf(d->cfg.aipp[0].path, sizeof(d->cfg.aipp[0].path), "%s", file);
    d->cfg.naipp = 1;
}

/* Socket and config files of fuzzers that died (a crash skips the
 * cleanup): /tmp/dvppd-fuzz-NAME-PID.* of processes that are gone. */
static inline void fuzz_remove_stale(void)
{
    DIR *d = opendir("/tmp");
    struct dirent *e;

    while (d && (e = readdir(d)) != NULL) {
        const char *dash = strrchr(e->d_name, '-');
        char path[300];
        long pid;
        if (strncmp(e->d_name, "dvppd-fuzz-", 11) != 0 || !dash)
            continue;
        pid = strtol(dash + 1, NULL, 10);
        if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
}

/* Start the socket front end as dvppd does, with @lease_ms leases. */
static inline void fuzz_daemon_start(fuzz_daemon *d, const char *name, uint32_t lease_ms)
{
    dvpp_device_config dc;
    dvppd_settings *set = NULL;
    dvppd_sock_env env;
    dvpp_err err;
    char aipp[128];
    dvpp_buf b;

    memset(d, 0, sizeof(*d));
    fuzz_remove_stale();
    dvpp_log_set_level(DVPP_LOG_ERR); /* every dropped peer would log */
    dvppd_config_defaults(&d->cfg);
    d->cfg.log_level = DVPP_LOG_ERR;
    snprintf(d->path, sizeof(d->path), "/tmp/dvppd-fuzz-%s-%ld.sock", name, (long)getpid());
    snprintf(d->cfg.socket_path, sizeof(d->cfg.socket_path), "%s", d->path);
    d->cfg.socket_mode = 0600;
    d->cfg.http_port = 0;
    d->cfg.channels = 2;
    d->cfg.queue_depth = 16;
    d->cfg.limits.max_encoded_bytes = 1u << 20;
    d->cfg.limits.max_pixels = 1u << 20;
    d->cfg.limits.max_side = 4096;
    d->cfg.limits.max_decode_memory = 64u << 20;
    d->cfg.limits.max_video_bytes = 1u << 20;
    d->cfg.limits.max_video_frames = 16;
    d->cfg.sock.max_connections = 4;
    d->cfg.sock.max_inline = 16u << 10;
    d->cfg.sock.max_rings = 4;
    d->cfg.sock.max_slots = 16;
    d->cfg.sock.max_ring_bytes = 4u << 20;
    d->cfg.sock.max_inflight = 8;
    d->cfg.sock.lease_timeout_ms = lease_ms;
    d->cfg.http.max_batch_items = 4;
    snprintf(aipp, sizeof(aipp), "/tmp/dvppd-fuzz-%s-%ld.aipp", name, (long)getpid());
    fuzz_aipp_file(d, aipp);

    fuzz_make_image(false, 24, 16, &b);
    memcpy(d->blob[0], b.data, b.len), d->blob_len[0] = b.len;
    dvpp_buf_fini(&b);
    fuzz_make_image(true, 24, 16, &b);
    memcpy(d->blob[1], b.data, b.len), d->blob_len[1] = b.len;
    dvpp_buf_fini(&b);
    fuzz_make_h264(&b);
    memcpy(d->blob[2], b.data, b.len), d->blob_len[2] = b.len;
    dvpp_buf_fini(&b);

    dvpp_device_config_default(&dc);
    for (int e = 0; e < DVPP_ENGINE_COUNT; e++) {
        dc.channels[e] = e == DVPP_ENGINE_VPC ? d->cfg.channels : 1;
        dc.queue_depth[e] = d->cfg.queue_depth;
    }
    dc.pixel_budget = d->cfg.max_pixels_in_flight;
    dc.byte_budget = d->cfg.max_bytes_in_flight;
    dvpp_err_clear(&err);
    if (dvpp_pipe_device_new(&dc, 0, &d->cfg.limits, &d->device, &err) != DVPP_OK ||
        dvppd_settings_new(&d->cfg, &set, &err) != DVPP_OK ||
        dvppd_live_new(set, &d->live, &err) != DVPP_OK) {
        fprintf(stderr, "fuzz: cannot start the daemon: %s\n", err.msg);
        abort();
    }
    unlink(aipp);
    env = (dvppd_sock_env){&d->cfg, d->device, d->live, -1, NULL}; /* no traces */
    if (dvppd_sock_start(&env, &d->sock, &err) != DVPP_OK) {
        fprintf(stderr, "fuzz: cannot start the socket: %s\n", err.msg);
        abort();
    }
    d->nbase = fuzz_fd_list(d->base, FUZZ_MAX_FDS);
}

static inline void fuzz_daemon_stop(fuzz_daemon *d)
{
    dvppd_sock_stop(d->sock, 10);
    dvpp_pipe_device_free(d->device);
    dvppd_live_free(d->live);
    d->sock = NULL, d->device = NULL, d->live = NULL;
}

/* A connected client socket (non-blocking), or abort. */
static inline int fuzz_connect(const fuzz_daemon *d)
{
    struct sockaddr_un a;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, d->path, strlen(d->path) + 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        perror("fuzz: connect");
        abort();
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* A packet and @nfds descriptors. 0, or -errno (-EPIPE/-ECONNRESET: the
 * daemon dropped us; -EAGAIN: it stopped reading for 2 s). */
static inline int fuzz_send(int fd, const void *buf, size_t len, const int *fds, int nfds)
{
    uint64_t until = fuzz_now_ms() + 2000;

    for (;;) {
        struct pollfd p = {fd, POLLOUT, 0};
        int r = ipc_send(fd, buf, len, fds, nfds); /* the daemon's own transport */
        if (r != -EAGAIN)
            return r;
        if (fuzz_now_ms() > until)
            return -EAGAIN;
        poll(&p, 1, 10);
    }
}

/* One answer: -EAGAIN when none came within @timeout_ms, 0 at the end of
 * the stream, else its length; fds that came with it are closed unless
 * @fd_out takes the first. @env_out (may be NULL) gets it unpacked. */
static inline ssize_t fuzz_recv(int fd, int timeout_ms, Dvpp__Envelope **env_out,
                                int *fd_out)
{
    static uint8_t buf[256u << 10];
    union {
        char buf[CMSG_SPACE(sizeof(int) * 8)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr m;
    uint64_t until = fuzz_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
    ssize_t n;

    if (env_out)
        *env_out = NULL;
    if (fd_out)
        *fd_out = -1;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        uint64_t now;
        memset(&m, 0, sizeof(m));
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = ctl.buf;
        m.msg_controllen = sizeof(ctl.buf);
        n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
        if (n >= 0)
            break;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN)
            return 0; /* ECONNRESET: as good as the end */
        /* poll may return early (EINTR: libFuzzer's timer signal), so the
         * deadline decides, not its result */
        now = fuzz_now_ms();
        if (now >= until)
            return -EAGAIN;
        poll(&p, 1, (int)(until - now));
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int x;
                memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (fd_out && *fd_out < 0)
                    *fd_out = x;
                else
                    close(x);
            }
        }
    }
    if (n > 0 && env_out)
        *env_out = dvpp__envelope__unpack(NULL, (size_t)n, buf);
    return n;
}

/* Pack and send @e. */
static inline int fuzz_send_env(int fd, const Dvpp__Envelope *e, const int *fds, int nfds)
{
    uint8_t buf[1024];
    size_t len = dvpp__envelope__get_packed_size(e);

    if (len > sizeof(buf))
        abort();
    dvpp__envelope__pack(e, buf);
    return fuzz_send(fd, buf, len, fds, nfds);
}

static inline int fuzz_hello(int fd, uint64_t id)
{
    Dvpp__Envelope e = DVPP__ENVELOPE__INIT;
    Dvpp__Hello h = DVPP__HELLO__INIT;

    e.protocol = 1;
    e.id = id;
    h.protocol = 1;
    h.client = "fuzz";
    e.body_case = DVPP__ENVELOPE__BODY_HELLO;
    e.hello = &h;
    return fuzz_send_env(fd, &e, NULL, 0);
}

/* RingOpen; @http lets HTTP deliveries (dvppd_sock_ring_reserve) in. */
static inline int fuzz_ring_open(int fd, uint64_t id, uint32_t slots, uint64_t slot_bytes,
                                 const char *name, bool http)
{
    Dvpp__Envelope e = DVPP__ENVELOPE__INIT;
    Dvpp__RingOpen r = DVPP__RING_OPEN__INIT;

    e.protocol = 1;
    e.id = id;
    r.slots = slots;
    r.slot_bytes = slot_bytes;
    r.name = (char *)name;
    r.http = http;
    e.body_case = DVPP__ENVELOPE__BODY_RING_OPEN;
    e.ring_open = &r;
    return fuzz_send_env(fd, &e, NULL, 0);
}

/* Read answers until the one with @id (unpacked into *out, or NULL: the
 * connection ended or nothing came for @timeout_ms). Others are dropped;
 * the first fd of the awaited one goes to *fd_out (may be NULL). */
static inline Dvpp__Envelope *fuzz_await(int fd, uint64_t id, int timeout_ms, int *fd_out)
{
    uint64_t until = fuzz_now_ms() + (uint64_t)timeout_ms;

    if (fd_out)
        *fd_out = -1;
    for (;;) {
        Dvpp__Envelope *e;
        int got = -1;
        uint64_t now = fuzz_now_ms();
        ssize_t n = fuzz_recv(fd, now < until ? (int)(until - now) : 0, &e, &got);
        if (n == 0 || n == -EAGAIN)
            return NULL;
        if (e && e->id == id) {
            if (fd_out)
                *fd_out = got;
            else if (got >= 0)
                close(got);
            return e;
        }
        if (got >= 0)
            close(got);
        if (e)
            dvpp__envelope__free_unpacked(e, NULL);
    }
}

/* A memfd holding @len bytes of @data; sealed against any change when
 * @seal (what the daemon requires), else left writable. */
static inline int fuzz_memfd(const void *data, size_t len, bool seal)
{
    int fd = memfd_create("fuzz-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0)
        abort();
    if (len && write(fd, data, len) != (ssize_t)len)
        abort();
    if (seal &&
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
        abort();
    return fd;
}

/* After the client's end is closed: wait for the daemon to release the
 * connection (and every job of it), then check that it holds no
 * descriptor it received or made for it. */
static inline void fuzz_daemon_settle(fuzz_daemon *d)
{
    static fuzz_fdid now[FUZZ_MAX_FDS];
    uint64_t until = fuzz_now_ms() + 8000;
    uint64_t turns;
    unsigned conns = 1;
    int n = 0;

    for (;;) {
        dvppd_sock_status(d->sock, &turns, &conns);
        if (conns == 0) {
            n = fuzz_fd_list(now, FUZZ_MAX_FDS);
            if (fuzz_fd_suspects(d, now, n, false) == 0)
                break;
        }
        if (fuzz_now_ms() > until) {
            if (conns) {
                fprintf(stderr, "fuzz: the daemon still holds %u connection(s) 8 s after "
                        "the client left\n", conns);
            } else {
                fprintf(stderr, "fuzz: descriptor leak: open after the input, not before:\n");
                fuzz_fd_suspects(d, now, n, true);
            }
            abort();
        }
        fuzz_sleep_us(50);
    }
    memcpy(d->base, now, sizeof(now[0]) * (size_t)n);
    d->nbase = n;
    d->nsent = 0;
}

/* Connect and wait until the daemon has accepted (so settling later waits
 * for this connection, not for one it has not seen yet). */
static inline int fuzz_open(fuzz_daemon *d)
{
    int fd = fuzz_connect(d);
    uint64_t until = fuzz_now_ms() + 5000;
    uint64_t turns;
    unsigned conns = 0;

    for (;;) {
        dvppd_sock_status(d->sock, &turns, &conns);
        if (conns > 0)
            return fd;
        if (fuzz_now_ms() > until) {
            fprintf(stderr, "fuzz: the daemon did not accept a connection in 5 s\n");
            abort();
        }
        fuzz_sleep_us(20);
    }
}

#endif
