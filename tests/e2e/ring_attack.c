/* ring_attack: a consumer that tries to write into its ring.
 *
 *   ring_attack SOCKET            every attack on a filled ring; exit 0 only
 *                                 if each was refused and the tensor still
 *                                 reads as the daemon wrote it
 *   ring_attack SOCKET --hold N   fill N slots, print "holding N", sleep
 *                                 forever without releasing (for a kill -9
 *                                 test of the daemon's cleanup)
 *
 * PROTOCOL.md promises that a consumer can only read its ring: the memfd
 * comes as a read-only file description, sealed F_SEAL_SHRINK | GROW |
 * FUTURE_WRITE | SEAL. Each attempt below is one way a buggy or hostile
 * consumer could otherwise change bytes the daemon (or another job) relies
 * on; one line per attempt, "NAME: refused (ERRNO)" or "NAME: ALLOWED".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* F_GET_SEALS, fallocate, strerrorname_np */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dvpp_ring.h"
#include "dvppclient.h"

/* An 8x8 raw RGB input: no codec involved, and the expected tensor (x/255,
 * NCHW) is known exactly. */
#define SIDE 8
#define SPEC                                                                             \
    "{\"input\":\"raw\",\"raw\":{\"format\":\"rgb\",\"width\":8,\"height\":8}}"
#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)

typedef struct attack {
    dvppc_conn *c;
    dvppc_ring *ring;
    int fd;                  /* the ring's read-only memfd */
    size_t map_bytes;
    uint64_t payload_off;    /* the filled slot's payload */
    const uint8_t *data;     /* ... in our mapping */
    size_t len;
    uint8_t *snapshot;       /* its bytes before the attacks */
    int allowed;             /* attempts that were not refused */
} attack;

static const char *errname(int e)
{
    const char *n = strerrorname_np(e);

    return n ? n : "?";
}

/* Record one attempt: @refused is true when the kernel refused it. */
static void verdict(attack *a, const char *what, bool refused, int e)
{
    if (refused) {
        printf("%s: refused (%s)\n", what, errname(e));
    } else {
        printf("%s: ALLOWED\n", what);
        a->allowed++;
    }
}

static void input_pixels(uint8_t *px)
{
    for (int i = 0; i < SIDE * SIDE * 3; i++)
        px[i] = (uint8_t)(i * 7 + 3);
}

static int submit(dvppc_conn *c, dvppc_ring *ring, dvppc_result *r)
{
    uint8_t px[SIDE * SIDE * 3];
    dvppc_request q = {.kind = DVPPC_TENSOR, .spec = SPEC, .input = px,
                       .input_len = sizeof(px), .input_fd = -1, .ring = ring};
    dvppc_error err;
    int st;

    input_pixels(px);
    st = dvppc_submit(c, &q, r, &err);
    if (st)
        fprintf(stderr, "submit: %s %s %s\n", err.code, err.message, err.field);
    return st;
}

/* The tensor must hold x/255 of the input, planar: what "reads correctly"
 * means independently of the daemon. */
static bool tensor_matches(const uint8_t *data, size_t len)
{
    uint8_t px[SIDE * SIDE * 3];
    float v;

    if (len != sizeof(float) * 3 * SIDE * SIDE)
        return false;
    input_pixels(px);
    for (int ch = 0; ch < 3; ch++)
        for (int i = 0; i < SIDE * SIDE; i++) {
            memcpy(&v, data + sizeof(float) * (size_t)(ch * SIDE * SIDE + i), sizeof(v));
            float d = v - (float)px[i * 3 + ch] / 255.0f;
            if (d > 1e-6f || d < -1e-6f)
                return false;
        }
    return true;
}

/* --- the attempts --------------------------------------------------------------- */

static void try_mmap_shared_write(attack *a, int fd, const char *what)
{
    void *p = mmap(NULL, a->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;

    if (p != MAP_FAILED) {
        /* do not actually scribble: the refusal is what is tested */
        munmap(p, a->map_bytes);
    }
    verdict(a, what, p == MAP_FAILED, e);
}

static void try_mprotect(attack *a)
{
    void *p = mmap(NULL, a->map_bytes, PROT_READ, MAP_SHARED, a->fd, 0);
    int r, e;

    if (p == MAP_FAILED) {
        printf("mprotect PROT_WRITE: cannot map read-only (%s)\n", errname(errno));
        a->allowed++;
        return;
    }
    r = mprotect(p, a->map_bytes, PROT_READ | PROT_WRITE);
    e = errno;
    munmap(p, a->map_bytes);
    verdict(a, "mprotect PROT_WRITE", r != 0, e);
}

static void try_write(attack *a, int fd, const char *what)
{
    static const uint8_t junk[16] = {0xde, 0xad, 0xbe, 0xef};
    ssize_t n = write(fd, junk, sizeof(junk));

    verdict(a, what, n < 0, errno);
}

static void try_pwrite(attack *a, int fd, const char *what)
{
    static const uint8_t junk[16] = {0xde, 0xad, 0xbe, 0xef};
    ssize_t n = pwrite(fd, junk, sizeof(junk), (off_t)a->payload_off);

    verdict(a, what, n < 0, errno);
}

static void try_truncate(attack *a, int fd, off_t size, const char *what)
{
    int r = ftruncate(fd, size);

    verdict(a, what, r != 0, errno);
}

static void try_fallocate(attack *a, int fd, int mode, const char *what)
{
    int r = fallocate(fd, mode, (off_t)a->payload_off, 4096);

    verdict(a, what, r != 0, errno);
}

static void check_seals(attack *a)
{
    int s = fcntl(a->fd, F_GET_SEALS);
    int r;

    if (s < 0 || (s & SEALS) != SEALS) {
        printf("F_GET_SEALS: MISSING (0x%x, want 0x%x)\n", s, SEALS);
        a->allowed++;
    } else {
        printf("F_GET_SEALS: sealed (0x%x)\n", s);
    }
    /* sealing further would let a consumer block the daemon's own writes */
    r = fcntl(a->fd, F_ADD_SEALS, F_SEAL_WRITE);
    verdict(a, "F_ADD_SEALS F_SEAL_WRITE", r != 0, errno);
}

/* A MAP_PRIVATE writable mapping is allowed (copy on write): what matters
 * is that writing it leaves the shared pages alone. */
static void try_private_copy(attack *a)
{
    uint8_t *p = mmap(NULL, a->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, a->fd, 0);

    if (p == MAP_FAILED) {
        printf("mmap MAP_PRIVATE write: refused (%s)\n", errname(errno));
        return;
    }
    memset(p + a->payload_off, 0xab, a->len);
    munmap(p, a->map_bytes);
    if (memcmp(a->data, a->snapshot, a->len) == 0) {
        printf("mmap MAP_PRIVATE write: private copy only (shared bytes unchanged)\n");
    } else {
        printf("mmap MAP_PRIVATE write: CHANGED the shared bytes\n");
        a->allowed++;
    }
}

/* Reopen the memfd through /proc, asking for write access: the kernel
 * may grant the open (memfds are 0777), but then the seals must refuse
 * every write through it. */
static void try_proc_reopen(attack *a)
{
    char path[64];
    int fd2;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", a->fd);
    fd2 = open(path, O_RDWR | O_CLOEXEC);
    if (fd2 < 0) {
        verdict(a, "open /proc/self/fd O_RDWR", true, errno);
        return;
    }
    printf("open /proc/self/fd O_RDWR: opened; its writes must fail:\n");
    try_mmap_shared_write(a, fd2, "  reopened: mmap PROT_WRITE MAP_SHARED");
    try_write(a, fd2, "  reopened: write");
    try_pwrite(a, fd2, "  reopened: pwrite");
    try_truncate(a, fd2, (off_t)a->map_bytes * 2, "  reopened: ftruncate bigger");
    try_truncate(a, fd2, 0, "  reopened: ftruncate smaller");
    try_fallocate(a, fd2, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  "  reopened: fallocate punch hole");
    close(fd2);
}

static void run_attacks(attack *a)
{
    try_mmap_shared_write(a, a->fd, "mmap PROT_WRITE MAP_SHARED");
    try_mprotect(a);
    try_write(a, a->fd, "write");
    try_pwrite(a, a->fd, "pwrite");
    try_truncate(a, a->fd, (off_t)a->map_bytes * 2, "ftruncate bigger");
    try_truncate(a, a->fd, (off_t)a->map_bytes / 2, "ftruncate smaller");
    try_fallocate(a, a->fd, 0, "fallocate grow");
    try_fallocate(a, a->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  "fallocate punch hole");
    check_seals(a);
    try_private_copy(a);
    try_proc_reopen(a);
}

/* After everything: the header, the slot and the tensor as before. */
static bool still_reads(const attack *a)
{
    dvpp_ring_header h;
    const void *base = dvppc_ring_base(a->ring, NULL);

    memcpy(&h, base, sizeof(h));
    if (h.magic != DVPP_RING_MAGIC || h.map_bytes != a->map_bytes) {
        printf("ring header changed\n");
        return false;
    }
    if (memcmp(a->data, a->snapshot, a->len) != 0 || !tensor_matches(a->data, a->len)) {
        printf("tensor changed\n");
        return false;
    }
    printf("data: intact (%zu bytes, x/255 as sent)\n", a->len);
    return true;
}

static int attack_mode(dvppc_conn *c)
{
    attack a = {.c = c, .fd = -1};
    dvppc_result r;
    dvppc_error err;
    int rc = 1;

    if (dvppc_ring_open(c, NULL, 2, 4096, &a.ring, &err) != 0) {
        fprintf(stderr, "ring: %s %s\n", err.code, err.message);
        return 1;
    }
    if (submit(c, a.ring, &r) != 0)
        goto out_close;
    a.fd = dvppc_ring_fd(a.ring);
    dvppc_ring_base(a.ring, &a.map_bytes);
    a.data = r.data;
    a.len = r.len;
    a.payload_off = (uint64_t)(a.data - (const uint8_t *)dvppc_ring_base(a.ring, NULL));
    if (!a.data || !tensor_matches(a.data, a.len)) {
        fprintf(stderr, "the filled slot does not hold the expected tensor (%zu bytes)\n",
                a.len);
        goto out_release;
    }
    a.snapshot = malloc(a.len);
    if (!a.snapshot)
        goto out_release;
    memcpy(a.snapshot, a.data, a.len);
    run_attacks(&a);
    rc = still_reads(&a) && a.allowed == 0 ? 0 : 1;
    printf("%s: %d attempt(s) not refused\n", rc ? "FAIL" : "OK", a.allowed);
    free(a.snapshot);
out_release:
    dvppc_release(c, &r);
out_close:
    dvppc_ring_close(a.ring);
    return rc;
}

/* Fill @n slots and never give them back: the daemon must reclaim them
 * when this process dies (or the leases expire). */
static int hold_mode(dvppc_conn *c, unsigned long n)
{
    dvppc_ring *ring;
    dvppc_result r;
    dvppc_error err;

    if (n < 1 || n > 1024) {
        fprintf(stderr, "--hold 1..1024\n");
        return 2;
    }
    if (dvppc_ring_open(c, NULL, (uint32_t)n, 4096, &ring, &err) != 0) {
        fprintf(stderr, "ring: %s %s\n", err.code, err.message);
        return 1;
    }
    for (unsigned long i = 0; i < n; i++)
        if (submit(c, ring, &r) != 0)
            return 1;
    printf("holding %lu\n", n);
    fflush(stdout);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    dvppc_conn *c;
    dvppc_error err;
    int rc;

    if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "--hold"))) {
        fprintf(stderr, "usage: %s SOCKET [--hold N]\n", argv[0]);
        return 2;
    }
    if (dvppc_connect(argv[1], &c, &err) != 0) {
        fprintf(stderr, "connect %s: %s %s\n", argv[1], err.code, err.message);
        return 1;
    }
    rc = argc == 4 ? hold_mode(c, strtoul(argv[3], NULL, 10)) : attack_mode(c);
    dvppc_close(c);
    return rc;
}
