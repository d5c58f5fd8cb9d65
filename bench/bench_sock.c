/* bench_sock: what it costs to hand a tensor to a local consumer, over
 * dvppd's Unix socket and ring, beside plain sockets and HTTP.
 *
 *   bench_sock pingpong N                 16 B SOCK_SEQPACKET ping-pong between
 *                                         two processes (socketpair + fork)
 *   bench_sock stream BYTES N             SOCK_STREAM: a 16 B request, a BYTES
 *                                         reply read fully into one reused
 *                                         buffer (reference/anchors.md s6)
 *   bench_sock small SOCKET FILE N        dvppd: FILE (a small PNG/JPEG) inline
 *                                         -> 8x8 f32 tensor inline, dvppc_submit
 *   bench_sock ring SOCKET W H N          dvppd: raw RGB WxH in a sealed memfd
 *                                         (made once, reused) -> WxHx3 f32 NCHW
 *                                         (x/255) into a ring slot
 *   bench_sock tput SOCKET FILE N         dvppd throughput: FILE (a JPEG, in a
 *                                         sealed memfd made once) -> 224x224
 *                                         stretch, ImageNet mean/std, f32 NCHW
 *                                         into a ring slot, --inflight K jobs
 *                                         kept in flight (submit_async + wait,
 *                                         oldest first), N completions timed
 *                                         as one span: images/s (the job of
 *                                         /v1/preprocess and of bench_batch)
 *   bench_sock video SOCKET FILE          dvppd VDEC: the video FILE (read into
 *                                         memory first) decoded by the daemon,
 *                                         every frame 224x224 stretch, ImageNet
 *                                         mean/std, f32 NCHW into a ring slot
 *                                         (--slots S, 4), the callback checks
 *                                         the tensor's shape and 224 values and
 *                                         gives the slot back; fps = frames /
 *                                         the wall time of dvppc_video_decode
 *                                         (bytes sent, decode, every frame
 *                                         delivered; connect and ring outside)
 *   bench_sock http PORT W H N            the same raw job as POST
 *                                         /v1/preprocess?...&out=raw on one
 *                                         keep-alive TCP connection to
 *                                         127.0.0.1:PORT, body read into one
 *                                         reused buffer
 * Options (anywhere after the mode): --warmup K (untimed iterations first;
 * default 200, or 30 when a message is >= 4 MiB), --slots S (ring slots, 4),
 * --from WxH (ring: the raw input is WxH and the spec resizes it to the
 * output's WxH, so the input's size is taken out of the comparison; the
 * tensor is then checked for shape only), --pin none|same|cross (pingpong
 * and stream: leave both processes to the scheduler, put both on the first
 * allowed CPU, or the peer there and the client on the second; default
 * none. On the VMs a wake-up across vCPUs costs several times one on the
 * same vCPU, and the scheduler picks either when unpinned).
 *
 * Every iteration is timed alone with CLOCK_MONOTONIC, one call in flight.
 * The output is one JSON line: p50/p99/mean/min/max of the round trips in
 * microseconds, and "runs": the medians of 7 consecutive slices of the
 * timed iterations (the spread inside the pass). The dvppd modes add the
 * pipeline's own time from the Result (or X-Dvpp-Timing): pipe = decode +
 * vpc + post, and handoff = round trip - pipe per iteration, with its
 * p50/p99; queue/total from the daemon; and, for ring, touch = the time the
 * consumer takes to read and check 64 values spread over the tensor right
 * after the call returns (timed apart from the round trip). Every tensor
 * is checked: 64 sampled values per iteration, the whole tensor once at the
 * end, against x/255 of the known input.
 *
 * Nothing here judges a time (bench/run_sock.py prints the goals). Exit
 * status 0, or 1 when a case cannot run (no daemon, a failed job, wrong
 * bytes).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dvppclient.h"

#include "bench_util.h"

#define PING_BYTES 16
#define N_SLICES 7
#define N_SAMPLES 64
#define BIG_MSG (4u << 20)

static volatile uint8_t g_sink;

typedef struct opts {
    long warmup; /* -1: the mode's default */
    unsigned slots;
    unsigned from_w, from_h; /* ring: raw input geometry (0: the output's) */
    const char *pin;         /* pingpong, stream: "none", "same", "cross" */
    unsigned inflight;       /* tput: jobs kept in flight */
} opts;

/* One timed series: the round trips, and for dvppd jobs the pipeline's
 * stage time, the daemon's queue and total time, and the touch time. */
typedef struct series {
    size_t n;
    double *rt, *pipe, *queue, *total, *touch;
} series;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_sock: %s\n", what);
    exit(1);
}

static void die_errno(const char *what)
{
    fprintf(stderr, "bench_sock: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void die_dvppc(const char *what, int st, const dvppc_error *err)
{
    fprintf(stderr, "bench_sock: %s: %s (%d)%s%s%s%s\n", what, dvppc_status_name(st), st,
            err && err->message[0] ? ": " : "", err ? err->message : "",
            err && err->field[0] ? " field " : "", err ? err->field : "");
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        die("out of memory");
    return p;
}

static void series_init(series *s, size_t n, bool job)
{
    s->n = n;
    s->rt = xcalloc(n, sizeof(double));
    s->pipe = job ? xcalloc(n, sizeof(double)) : NULL;
    s->queue = job ? xcalloc(n, sizeof(double)) : NULL;
    s->total = job ? xcalloc(n, sizeof(double)) : NULL;
    s->touch = job ? xcalloc(n, sizeof(double)) : NULL;
}

/* The @q quantile (0..1) of @v[0..n) sorted ascending, interpolated
 * linearly between ranks (numpy's default). */
static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;

    if (n == 0)
        return 0;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (v[i + 1] - v[i]) * f;
}

static double *sorted_copy(const double *v, size_t n)
{
    double *c = xcalloc(n ? n : 1, sizeof(double));
    memcpy(c, v, n * sizeof(double));
    qsort(c, n, sizeof(double), bench_cmp_double);
    return c;
}

/* "name_p50_us":..,"name_p99_us":.. of @v (and mean/min/max when @full). */
static void print_stats(const char *name, const double *v, size_t n, bool full)
{
    double *c = sorted_copy(v, n), sum = 0;
    size_t i;

    for (i = 0; i < n; i++)
        sum += c[i];
    printf(",\"%s_p50_us\":%.2f,\"%s_p99_us\":%.2f", name, quantile(c, n, 0.5), name,
           quantile(c, n, 0.99));
    if (full)
        printf(",\"%s_mean_us\":%.2f,\"%s_min_us\":%.2f,\"%s_max_us\":%.2f", name,
               n ? sum / (double)n : 0, name, n ? c[0] : 0, name, n ? c[n - 1] : 0);
    free(c);
}

/* The JSON line of a finished series; @extra (may be NULL) is appended
 * before the closing brace (",\"k\":v" pairs). */
static void report(const char *mode, uint64_t bytes, long warmup, const series *s,
                   const char *extra)
{
    size_t k;
    double *hand = NULL;

    printf("{\"mode\":\"%s\",\"bytes\":%llu,\"n\":%zu,\"warmup\":%ld", mode,
           (unsigned long long)bytes, s->n, warmup);
    print_stats("rt", s->rt, s->n, true);
    printf(",\"runs\":[");
    for (k = 0; k < N_SLICES; k++) {
        size_t a = s->n * k / N_SLICES, b = s->n * (k + 1) / N_SLICES;
        double *c = sorted_copy(s->rt + a, b - a);
        printf("%s%.2f", k ? "," : "", quantile(c, b - a, 0.5));
        free(c);
    }
    printf("]");
    if (s->pipe) {
        hand = xcalloc(s->n ? s->n : 1, sizeof(double));
        for (k = 0; k < s->n; k++)
            hand[k] = s->rt[k] - s->pipe[k];
        print_stats("pipe", s->pipe, s->n, false);
        print_stats("handoff", hand, s->n, true);
        print_stats("queue", s->queue, s->n, false);
        print_stats("total", s->total, s->n, false);
        print_stats("touch", s->touch, s->n, false);
        free(hand);
    }
    printf("%s}\n", extra ? extra : "");
    fflush(stdout);
}

/* --- plain sockets ----------------------------------------------------------- */

static void write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;

    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die_errno("write");
        p += w;
        n -= (size_t)w;
    }
}

/* Read exactly @n bytes; false on end of file before the first byte. */
static bool read_all(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            die_errno("read");
        if (r == 0) {
            if (got == 0)
                return false;
            die("short read");
        }
        got += (size_t)r;
    }
    return true;
}

static uint8_t pattern_byte(size_t i)
{
    return (uint8_t)(i * 31u + (i >> 12) * 7u + 1u);
}

/* The peer process of pingpong and stream: answers every 16 B request
 * with @reply_bytes from a buffer filled (touched) once. */
static void serve(int fd, bool seqpacket, size_t reply_bytes)
{
    uint8_t req[PING_BYTES];
    uint8_t *reply = malloc(reply_bytes);
    size_t i;

    if (!reply)
        _exit(2);
    for (i = 0; i < reply_bytes; i++)
        reply[i] = pattern_byte(i);
    for (;;) {
        if (seqpacket) {
            ssize_t r = recv(fd, req, sizeof req, 0);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            if (send(fd, reply, reply_bytes, 0) != (ssize_t)reply_bytes)
                _exit(3);
        } else {
            if (!read_all(fd, req, sizeof req))
                break;
            write_all(fd, reply, reply_bytes);
        }
    }
    _exit(0);
}

static void pin_to(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        die_errno("sched_setaffinity");
}

/* Pinning of the two processes: "same" puts both on the first allowed CPU,
 * "cross" the peer there and the client on the second (anchors.md s6:
 * server cpu0, client cpu1). Returns what was done ("cross" needs 2 CPUs;
 * with one it falls back to "none"). */
static const char *pin_cpus(const char *pin, int *peer_cpu, int *client_cpu)
{
    cpu_set_t set;
    int c, found = 0;

    *peer_cpu = *client_cpu = -1;
    if (strcmp(pin, "none") == 0)
        return "none";
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        die_errno("sched_getaffinity");
    for (c = 0; c < CPU_SETSIZE && found < 2; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        if (found++ == 0)
            *peer_cpu = c;
        else
            *client_cpu = c;
    }
    if (strcmp(pin, "same") == 0) {
        *client_cpu = *peer_cpu;
        return "same";
    }
    if (*client_cpu < 0) {
        *peer_cpu = -1;
        return "none";
    }
    return "cross";
}

static pid_t spawn_peer(int type, size_t reply_bytes, const opts *o, const char **pinned,
                        int *client_fd)
{
    int sv[2], peer_cpu, client_cpu;
    pid_t pid;

    *pinned = pin_cpus(o->pin, &peer_cpu, &client_cpu);
    if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) != 0)
        die_errno("socketpair");
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        die_errno("fork");
    if (pid == 0) {
        close(sv[0]);
        if (peer_cpu >= 0)
            pin_to(peer_cpu);
        serve(sv[1], type == SOCK_SEQPACKET, reply_bytes);
    }
    close(sv[1]);
    if (client_cpu >= 0)
        pin_to(client_cpu);
    *client_fd = sv[0];
    return pid;
}

static void reap(pid_t pid, int fd)
{
    int ws;

    close(fd);
    if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        die("the peer process failed");
}

static int run_pingpong(long n, const opts *o)
{
    long warm = o->warmup >= 0 ? o->warmup : 200, i;
    uint8_t req[PING_BYTES], ans[PING_BYTES];
    series s;
    int fd;
    const char *pinned;
    char extra[96];
    pid_t pid = spawn_peer(SOCK_SEQPACKET, PING_BYTES, o, &pinned, &fd);

    memset(req, 0x5a, sizeof req);
    series_init(&s, (size_t)n, false);
    for (i = -warm; i < n; i++) {
        uint64_t t0 = now_ns();
        ssize_t r;
        if (send(fd, req, sizeof req, 0) != (ssize_t)sizeof req)
            die_errno("send");
        do
            r = recv(fd, ans, sizeof ans, 0);
        while (r < 0 && errno == EINTR);
        if (r != (ssize_t)sizeof ans)
            die("ping-pong: short or failed recv");
        if (i >= 0)
            s.rt[i] = (double)(now_ns() - t0) * 1e-3;
    }
    reap(pid, fd);
    snprintf(extra, sizeof extra, ",\"socket\":\"SOCK_SEQPACKET\",\"pin\":\"%s\"", pinned);
    report("pingpong", PING_BYTES, warm, &s, extra);
    return 0;
}

static int run_stream(size_t bytes, long n, const opts *o)
{
    long warm = o->warmup >= 0 ? o->warmup : bytes >= BIG_MSG ? 30 : 200, i;
    uint8_t req[PING_BYTES];
    uint8_t *buf = malloc(bytes);
    series s;
    size_t k;
    int fd, sz = 0;
    socklen_t sl = sizeof sz;
    char extra[160];
    const char *pinned;
    pid_t pid;

    if (!buf)
        die("out of memory");
    memset(buf, 0, bytes); /* first touch here, not in the timed loop */
    pid = spawn_peer(SOCK_STREAM, bytes, o, &pinned, &fd);
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, &sl);
    memset(req, 0x5a, sizeof req);
    series_init(&s, (size_t)n, false);
    for (i = -warm; i < n; i++) {
        uint64_t t0 = now_ns();
        write_all(fd, req, sizeof req);
        if (!read_all(fd, buf, bytes))
            die("stream: the peer closed");
        if (i >= 0)
            s.rt[i] = (double)(now_ns() - t0) * 1e-3;
    }
    for (k = 0; k < bytes; k += 4093)
        if (buf[k] != pattern_byte(k))
            die("stream: wrong bytes received");
    if (buf[bytes - 1] != pattern_byte(bytes - 1))
        die("stream: wrong bytes received");
    reap(pid, fd);
    snprintf(extra, sizeof extra,
             ",\"socket\":\"SOCK_STREAM\",\"pin\":\"%s\",\"rcvbuf\":%d,\"check\":\"ok\"",
             pinned, sz);
    report("stream", bytes, warm, &s, extra);
    return 0;
}

/* --- dvppd jobs -------------------------------------------------------------- */

/* The raw RGB input: a known pattern, so every tensor value is known. */
static uint8_t *make_rgb(unsigned w, unsigned h)
{
    size_t n = (size_t)w * h * 3, i;
    uint8_t *p = malloc(n);

    if (!p)
        die("out of memory");
    for (i = 0; i < n; i++)
        p[i] = pattern_byte(i);
    return p;
}

/* A sealed memfd holding @len bytes of @data (F_SEAL_SHRINK|GROW|WRITE, as
 * PROTOCOL.md asks for an input_fd). */
static int sealed_memfd(const void *data, size_t len)
{
    int fd = memfd_create("bench-sock-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0)
        die_errno("memfd_create");
    write_all(fd, data, len);
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0)
        die_errno("F_ADD_SEALS");
    return fd;
}

/* Element @e of the f32 NCHW tensor made from @rgb (WxH, x/255). */
static float expected(const uint8_t *rgb, unsigned w, unsigned h, size_t e)
{
    size_t plane = (size_t)w * h, c = e / plane, yx = e % plane;
    return (float)rgb[yx * 3 + c] / 255.0f;
}

static bool close_enough(float a, float b)
{
    float d = a - b;
    return d <= 1e-6f && d >= -1e-6f;
}

/* Read 64 values spread over the tensor and check them; the consumer
 * proving the bytes are there. Returns the number of wrong values. */
static unsigned touch(const float *t, const uint8_t *rgb, unsigned w, unsigned h)
{
    size_t elems = (size_t)w * h * 3, k;
    unsigned bad = 0;

    for (k = 0; k < N_SAMPLES; k++) {
        size_t e = k * (elems - 1) / (N_SAMPLES - 1);
        if (!close_enough(t[e], expected(rgb, w, h, e)))
            bad++;
    }
    return bad;
}

static size_t check_all(const float *t, const uint8_t *rgb, unsigned w, unsigned h)
{
    size_t elems = (size_t)w * h * 3, e, bad = 0;

    for (e = 0; e < elems; e++)
        if (!close_enough(t[e], expected(rgb, w, h, e)))
            bad++;
    return bad;
}

static void take_timings(series *s, long i, double rt_us, const dvppc_result *r)
{
    if (i < 0)
        return;
    s->rt[i] = rt_us;
    s->pipe[i] = (double)(r->decode_us + r->vpc_us + r->post_us);
    s->queue[i] = (double)r->queue_us;
    s->total[i] = (double)r->total_us;
}

static int run_ring(const char *path, unsigned w, unsigned h, long n, const opts *o)
{
    unsigned iw = o->from_w ? o->from_w : w, ih = o->from_h ? o->from_h : h;
    bool same = iw == w && ih == h;
    size_t in_len = (size_t)iw * ih * 3, out_len = (size_t)w * h * 3 * sizeof(float);
    long warm = o->warmup >= 0 ? o->warmup : out_len >= BIG_MSG ? 30 : 200, i;
    uint8_t *rgb = make_rgb(iw, ih);
    int fd = sealed_memfd(rgb, in_len), st;
    char spec[320], resize[96] = "", extra[320];
    dvppc_conn *c;
    dvppc_ring *ring;
    dvppc_error err;
    dvppc_request q;
    series s;
    size_t bad_all = 0;
    unsigned bad = 0;

    if (!same)
        snprintf(resize, sizeof resize, "\"ops\":[{\"resize\":{\"w\":%u,\"h\":%u}}],", w, h);
    snprintf(spec, sizeof spec,
             "{\"input\":\"raw\",\"raw\":{\"format\":\"rgb\",\"width\":%u,\"height\":%u},"
             "%s\"normalize\":{\"dtype\":\"float32\"}}", iw, ih, resize);
    if ((st = dvppc_connect(path, &c, &err)) != 0)
        die_dvppc("connect", st, &err);
    if ((st = dvppc_ring_open(c, NULL, o->slots, out_len, &ring, &err)) != 0)
        die_dvppc("ring open", st, &err);
    memset(&q, 0, sizeof q);
    q.kind = DVPPC_TENSOR;
    q.spec = spec;
    q.input_len = in_len;
    q.input_fd = fd;
    q.ring = ring;
    series_init(&s, (size_t)n, true);
    for (i = -warm; i < n; i++) {
        dvppc_result r;
        uint64_t t0 = now_ns(), t1, t2;
        st = dvppc_submit(c, &q, &r, &err);
        t1 = now_ns();
        if (st != 0)
            die_dvppc("ring job", st, &err);
        if (!r.data || r.len != out_len || r.meta.ndim != 4 || r.meta.shape[1] != 3 ||
            r.meta.shape[2] != (int64_t)h || r.meta.shape[3] != (int64_t)w ||
            strcmp(r.meta.dtype, "float32") != 0)
            die("ring job: unexpected result (shape, dtype or length)");
        if (same)
            bad += touch(r.data, rgb, w, h);
        else
            g_sink += ((const volatile uint8_t *)r.data)[r.len / 2];
        t2 = now_ns();
        if (i == n - 1 && same)
            bad_all = check_all(r.data, rgb, w, h);
        take_timings(&s, i, (double)(t1 - t0) * 1e-3, &r);
        if (i >= 0)
            s.touch[i] = (double)(t2 - t1) * 1e-3;
        dvppc_release(c, &r);
    }
    if (bad || bad_all) {
        fprintf(stderr, "bench_sock: ring: %u sampled and %zu values of the last tensor "
                "differ from x/255\n", bad, bad_all);
        return 1;
    }
    snprintf(extra, sizeof extra,
             ",\"w\":%u,\"h\":%u,\"from\":\"%ux%u\",\"input_bytes\":%zu,\"slots\":%u,"
             "\"slot_bytes\":%llu,\"check\":\"%s\"", w, h, iw, ih, in_len,
             dvppc_ring_slots(ring), (unsigned long long)dvppc_ring_slot_bytes(ring),
             same ? "ok" : "shape");
    dvppc_close(c);
    close(fd);
    report("ring", out_len, warm, &s, extra);
    free(rgb);
    return 0;
}

static uint8_t *read_file(const char *path, size_t *len);

/* The tensor of one tput job: 3 x 224 x 224 f32, every value finite and
 * within what ImageNet mean/std make of 0..255 ((0 - 0.485) / 0.229 =
 * -2.12 .. (1 - 0.406) / 0.225 = 2.64). */
static bool tput_tensor_ok(const dvppc_result *r, size_t out_len)
{
    const float *t = r->data;

    if (!t || r->len != out_len || r->meta.ndim != 4 || r->meta.shape[1] != 3 ||
        r->meta.shape[2] != 224 || r->meta.shape[3] != 224 ||
        strcmp(r->meta.dtype, "float32") != 0)
        return false;
    for (size_t i = 0; i < out_len / sizeof(float); i += 997)
        if (!(t[i] >= -2.2f && t[i] <= 2.7f))
            return false;
    return true;
}

/* The spec of the tput and video modes: /v1/preprocess?w=224&h=224 with
 * ImageNet mean/std. */
static const char k_spec224[] =
    "{\"ops\":[{\"resize\":{\"w\":224,\"h\":224}}],"
    "\"normalize\":{\"mean\":[0.485,0.456,0.406],\"std\":[0.229,0.224,0.225],"
    "\"layout\":\"nchw\",\"dtype\":\"float32\"}}";

typedef struct video_count {
    uint64_t frames, bad;
} video_count;

static int video_frame(void *ctx, const dvppc_frame *f)
{
    video_count *v = ctx;

    if (f->index < v->frames || !tput_tensor_ok(&f->result, (size_t)3 * 224 * 224 * 4))
        v->bad++; /* out of order, or not the tensor asked for */
    v->frames = f->index + 1;
    return 0;
}

static int run_video(const char *path, const char *file, const opts *o)
{
    const size_t out_len = (size_t)3 * 224 * 224 * sizeof(float);
    size_t len = 0;
    uint8_t *data = read_file(file, &len);
    video_count v = {0, 0};
    dvppc_vdec_opts vo;
    dvppc_conn *c;
    dvppc_ring *ring;
    dvppc_error err;
    uint64_t t0;
    double s;
    int st;

    if (!data)
        die_errno(file);
    if ((st = dvppc_connect(path, &c, &err)) != 0)
        die_dvppc("connect", st, &err);
    if ((st = dvppc_ring_open(c, NULL, o->slots, out_len, &ring, &err)) != 0)
        die_dvppc("ring open", st, &err);
    memset(&vo, 0, sizeof vo);
    vo.spec = k_spec224;
    t0 = now_ns();
    st = dvppc_video_decode(c, &vo, data, len, ring, video_frame, &v, &err);
    s = (double)(now_ns() - t0) * 1e-9;
    if (st != 0)
        die_dvppc("video decode", st, &err);
    if (v.bad || !v.frames)
        die("video: frames out of order or not the 224x224 f32 tensor asked for");
    printf("{\"mode\":\"video\",\"file\":\"%s\",\"input_bytes\":%zu,\"slots\":%u,"
           "\"frames\":%llu,\"s\":%.6f,\"fps\":%.3f,\"check\":\"ok\"}\n", file, len,
           dvppc_ring_slots(ring), (unsigned long long)v.frames, s, (double)v.frames / s);
    dvppc_close(c);
    free(data);
    return 0;
}

static int run_tput(const char *path, const char *file, long n, const opts *o)
{
    const size_t out_len = (size_t)3 * 224 * 224 * sizeof(float);
    unsigned k = o->inflight, head = 0;
    long warm = o->warmup >= 0 ? o->warmup : 32, done = 0, sent = 0, total = warm + n;
    size_t len = 0;
    uint8_t *img = read_file(file, &len);
    uint64_t *ticket, t0 = 0;
    dvppc_conn *c;
    dvppc_ring *ring;
    dvppc_error err;
    dvppc_request q;
    double s;
    int fd, st;

    if (!img)
        die_errno(file);
    fd = sealed_memfd(img, len);
    ticket = xcalloc(k, sizeof(*ticket));
    if ((st = dvppc_connect(path, &c, &err)) != 0)
        die_dvppc("connect", st, &err);
    if ((st = dvppc_ring_open(c, NULL, k, out_len, &ring, &err)) != 0)
        die_dvppc("ring open", st, &err);
    memset(&q, 0, sizeof q);
    q.kind = DVPPC_TENSOR;
    q.spec = k_spec224;
    q.input_len = len;
    q.input_fd = fd;
    q.ring = ring;
    for (; sent < k && sent < total; sent++)
        if ((st = dvppc_submit_async(c, &q, &ticket[sent], &err)) != 0)
            die_dvppc("submit", st, &err);
    while (done < total) {
        dvppc_result r;
        if ((st = dvppc_wait(c, ticket[head], &r, -1, &err)) != 0)
            die_dvppc("tput job", st, &err);
        if (!tput_tensor_ok(&r, out_len))
            die("tput job: unexpected tensor (shape, dtype, length or values)");
        dvppc_release(c, &r);
        if (++done == warm)
            t0 = now_ns(); /* the span starts once the warm-up jobs are back */
        if (sent < total) {
            if ((st = dvppc_submit_async(c, &q, &ticket[head], &err)) != 0)
                die_dvppc("submit", st, &err);
            sent++;
        }
        head = (head + 1) % k;
    }
    s = (double)(now_ns() - t0) * 1e-9;
    printf("{\"mode\":\"tput\",\"file\":\"%s\",\"input_bytes\":%zu,\"inflight\":%u,"
           "\"warmup\":%ld,\"images\":%ld,\"s\":%.6f,\"img_s\":%.3f,\"check\":\"ok\"}\n",
           file, len, k, warm, n, s, (double)n / s);
    dvppc_close(c);
    close(fd);
    free(ticket);
    free(img);
    return 0;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

static int run_small(const char *path, const char *file, long n, const opts *o)
{
    static const char spec[] = "{\"ops\":[{\"resize\":{\"w\":8,\"h\":8}}],"
                               "\"normalize\":{\"dtype\":\"float32\"}}";
    long warm = o->warmup >= 0 ? o->warmup : 200, i;
    size_t len = 0;
    uint8_t *img = read_file(file, &len);
    dvppc_conn *c;
    dvppc_error err;
    dvppc_request q;
    series s;
    char extra[160];
    int st;

    if (!img)
        die_errno(file);
    if ((st = dvppc_connect(path, &c, &err)) != 0)
        die_dvppc("connect", st, &err);
    memset(&q, 0, sizeof q);
    q.kind = DVPPC_TENSOR;
    q.spec = spec;
    q.input = img;
    q.input_len = len;
    q.input_fd = -1;
    series_init(&s, (size_t)n, true);
    for (i = -warm; i < n; i++) {
        dvppc_result r;
        uint64_t t0 = now_ns();
        st = dvppc_submit(c, &q, &r, &err);
        if (st != 0)
            die_dvppc("small job", st, &err);
        if (!r.data || r.len != 8 * 8 * 3 * sizeof(float) || r.ring)
            die("small job: not an inline 8x8x3 f32 tensor");
        take_timings(&s, i, (double)(now_ns() - t0) * 1e-3, &r);
        dvppc_release(c, &r);
    }
    dvppc_close(c);
    snprintf(extra, sizeof extra, ",\"input_bytes\":%zu,\"out\":\"inline\",\"check\":\"ok\"",
             len);
    report("small", 8 * 8 * 3 * sizeof(float), warm, &s, extra);
    free(img);
    return 0;
}

/* --- HTTP: one keep-alive connection, raw POST, raw answer -------------------------- */

#define HDR_MAX 16384

/* The value of header @name in the header block @h (NUL-terminated), or NULL. */
static const char *header(const char *h, const char *name)
{
    size_t nl = strlen(name);
    const char *p = strstr(h, "\r\n");

    while (p && p[2] != '\r' && p[2] != '\0') {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            p += nl + 1;
            while (*p == ' ')
                p++;
            return p;
        }
        p = strstr(p, "\r\n");
    }
    return NULL;
}

/* X-Dvpp-Timing: read=..;queue=..;decode=..;vpc=..;post=..;total=.. */
static unsigned long long timing_field(const char *t, const char *key)
{
    size_t kl = strlen(key);
    const char *p = t;

    while (p && *p && *p != '\r') {
        if (strncmp(p, key, kl) == 0 && p[kl] == '=')
            return strtoull(p + kl + 1, NULL, 10);
        p = strchr(p, ';');
        if (p)
            p++;
    }
    return 0;
}

static int run_http(int port, unsigned w, unsigned h, long n, const opts *o)
{
    size_t in_len = (size_t)w * h * 3, out_len = in_len * sizeof(float);
    long warm = o->warmup >= 0 ? o->warmup : out_len >= BIG_MSG ? 30 : 200, i;
    uint8_t *rgb = make_rgb(w, h);
    float *body = malloc(out_len);
    char *hdr = malloc(HDR_MAX + 1), req[512], extra[160];
    struct sockaddr_in sa;
    series s;
    int fd, one = 1, reqlen;
    unsigned bad = 0;
    size_t bad_all = 0;

    if (!body || !hdr)
        die("out of memory");
    memset(body, 0, out_len); /* first touch here */
    reqlen = snprintf(req, sizeof req,
                      "POST /v1/preprocess?input=raw&raw=rgb:%ux%u&dtype=float32&out=raw "
                      "HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: "
                      "application/octet-stream\r\nContent-Length: %zu\r\n\r\n",
                      w, h, port, in_len);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die_errno("socket");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        die_errno("connect 127.0.0.1");
    series_init(&s, (size_t)n, true);
    for (i = -warm; i < n; i++) {
        uint64_t t0 = now_ns(), t1;
        size_t got = 0, have, clen;
        char *end = NULL;
        const char *v;
        write_all(fd, req, (size_t)reqlen);
        write_all(fd, rgb, in_len);
        while (!end) { /* the header block, and what follows it */
            ssize_t r = read(fd, hdr + got, HDR_MAX - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                die(r == 0 ? "http: the server closed the connection" : "http: read");
            got += (size_t)r;
            hdr[got] = '\0';
            end = strstr(hdr, "\r\n\r\n");
            if (!end && got == HDR_MAX)
                die("http: header block too large");
        }
        end[2] = '\0'; /* header() stops at the blank line */
        if (strncmp(hdr, "HTTP/1.1 200", 12) != 0) {
            fprintf(stderr, "bench_sock: http: %.200s\n", hdr);
            return 1;
        }
        v = header(hdr, "Content-Length");
        clen = v ? strtoull(v, NULL, 10) : 0;
        if (clen != out_len)
            die("http: unexpected Content-Length");
        have = got - (size_t)(end + 4 - hdr);
        if (have > clen)
            die("http: more bytes than the answer");
        memcpy(body, end + 4, have);
        if (have < clen)
            read_all(fd, (uint8_t *)body + have, clen - have);
        t1 = now_ns();
        if (i >= 0) {
            const char *tm = header(hdr, "X-Dvpp-Timing");
            if (!tm)
                die("http: no X-Dvpp-Timing");
            s.rt[i] = (double)(t1 - t0) * 1e-3;
            s.pipe[i] = (double)(timing_field(tm, "decode") + timing_field(tm, "vpc") +
                                 timing_field(tm, "post"));
            s.queue[i] = (double)timing_field(tm, "queue");
            s.total[i] = (double)timing_field(tm, "total");
        }
        bad += touch(body, rgb, w, h);
        if (i >= 0)
            s.touch[i] = (double)(now_ns() - t1) * 1e-3;
    }
    bad_all = check_all(body, rgb, w, h);
    close(fd);
    if (bad || bad_all) {
        fprintf(stderr, "bench_sock: http: %u sampled and %zu values of the last tensor "
                "differ from x/255\n", bad, bad_all);
        return 1;
    }
    snprintf(extra, sizeof extra, ",\"w\":%u,\"h\":%u,\"input_bytes\":%zu,\"check\":\"ok\"",
             w, h, in_len);
    report("http", out_len, warm, &s, extra);
    free(rgb);
    free(body);
    free(hdr);
    return 0;
}

/* --- main ---------------------------------------------------------------------- */

static long num(const char *s, long lo, long hi)
{
    char *e;
    long v;

    errno = 0;
    v = strtol(s, &e, 10);
    if (errno || e == s || *e || v < lo || v > hi) {
        fprintf(stderr, "bench_sock: '%s' is not a number in %ld..%ld\n", s, lo, hi);
        exit(2);
    }
    return v;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: bench_sock pingpong N\n"
            "       bench_sock stream BYTES N\n"
            "       bench_sock small SOCKET FILE N\n"
            "       bench_sock ring SOCKET W H N\n"
            "       bench_sock tput SOCKET FILE N\n"
            "       bench_sock video SOCKET FILE\n"
            "       bench_sock http PORT W H N\n"
            "options: --warmup K  --slots S  --from WxH (ring: raw input size, resized)\n"
            "         --pin none|same|cross (pingpong, stream)  --inflight K (tput, 8)\n");
    return 2;
}

int main(int argc, char **argv)
{
    opts o = {-1, 4, 0, 0, "none", 8};
    char *pos[8];
    int np = 0, i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
            o.warmup = num(argv[++i], 0, 1000000);
        else if (strcmp(argv[i], "--inflight") == 0 && i + 1 < argc)
            o.inflight = (unsigned)num(argv[++i], 1, 256);
        else if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc)
            o.slots = (unsigned)num(argv[++i], 1, 1024);
        else if (strcmp(argv[i], "--pin") == 0 && i + 1 < argc) {
            o.pin = argv[++i];
            if (strcmp(o.pin, "none") != 0 && strcmp(o.pin, "same") != 0 &&
                strcmp(o.pin, "cross") != 0)
                return usage();
        } else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%ux%u", &o.from_w, &o.from_h) != 2 || !o.from_w ||
                !o.from_h || o.from_w > 16384 || o.from_h > 16384)
                return usage();
        }
        else if (np < 8)
            pos[np++] = argv[i];
        else
            return usage();
    }
    if (np == 2 && strcmp(pos[0], "pingpong") == 0)
        return run_pingpong(num(pos[1], 1, 100000000), &o);
    if (np == 3 && strcmp(pos[0], "stream") == 0)
        return run_stream((size_t)num(pos[1], 1, 1L << 30), num(pos[2], 1, 100000000), &o);
    if (np == 4 && strcmp(pos[0], "small") == 0)
        return run_small(pos[1], pos[2], num(pos[3], 1, 100000000), &o);
    if (np == 3 && strcmp(pos[0], "video") == 0)
        return run_video(pos[1], pos[2], &o);
    if (np == 4 && strcmp(pos[0], "tput") == 0)
        return run_tput(pos[1], pos[2], num(pos[3], 1, 100000000), &o);
    if (np == 5 && strcmp(pos[0], "ring") == 0)
        return run_ring(pos[1], (unsigned)num(pos[2], 1, 16384),
                        (unsigned)num(pos[3], 1, 16384), num(pos[4], 1, 100000000), &o);
    if (np == 5 && strcmp(pos[0], "http") == 0)
        return run_http((int)num(pos[1], 1, 65535), (unsigned)num(pos[2], 1, 16384),
                        (unsigned)num(pos[3], 1, 16384), num(pos[4], 1, 100000000), &o);
    return usage();
}
