/* Unit tests for ipc/: the ring's layout, seals and lease life cycle
 * (generations, double and forged releases, expiry, close while writing),
 * the consumer's read-only view (every write path refused), and the strict
 * receive path (truncated control data, excess and foreign descriptors are
 * closed, oversize packets refused). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipc_msg.h"
#include "ipc_ring.h"

static int open_fds(void)
{
    int n = 0;

    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) != -1;
    return n;
}

static void test_layout_and_header(void **state)
{
    ipc_ring *r;
    const dvpp_ring_header *h;
    int fd;
    void *map;

    (void)state;
    assert_int_equal(ipc_ring_create(3, 1000, "t", &r), 0);
    assert_int_equal(ipc_ring_slot_bytes(r), 4096);
    assert_int_equal(ipc_ring_data_offset(r), 4096);
    assert_int_equal(ipc_ring_map_bytes(r), 4096 + 3 * 4096);
    assert_int_equal(ipc_ring_payload_offset(r, 2), 4096 + 2 * 4096);
    fd = ipc_ring_consumer_fd(r);
    assert_true(fd >= 0);
    map = mmap(NULL, ipc_ring_map_bytes(r), PROT_READ, MAP_SHARED, fd, 0);
    assert_true(map != MAP_FAILED);
    h = map;
    assert_true(h->magic == DVPP_RING_MAGIC);
    assert_int_equal(h->version, DVPP_RING_VERSION);
    assert_int_equal(h->slot_count, 3);
    assert_int_equal(h->desc_bytes, 128);
    assert_int_equal(h->slot_bytes, 4096);
    assert_int_equal(h->data_offset, 4096);
    assert_int_equal(((const dvpp_ring_slot *)((const char *)map + 64))[1].payload_offset,
                     4096 + 4096);
    munmap(map, ipc_ring_map_bytes(r));
    close(fd);
    ipc_ring_unref(r);
    assert_int_equal(ipc_ring_create(0, 10, "t", &r), -EINVAL);
    assert_int_equal(ipc_ring_create(2, UINT64_MAX / 2, "t", &r), -EINVAL);
}

/* The consumer's descriptor cannot write the ring by any path, and sees
 * what the daemon writes. */
static void test_consumer_is_read_only(void **state)
{
    ipc_ring *r;
    uint32_t slot, gen;
    ipc_slot_meta m = {.dtype = 3, .layout = 0, .ndim = 1, .shape = {16}, .byte_length = 64};
    int fd, seals;
    uint8_t *ro, byte = 7;
    char path[64];

    (void)state;
    assert_int_equal(ipc_ring_create(2, 4096, "t", &r), 0);
    fd = ipc_ring_consumer_fd(r);
    seals = fcntl(fd, F_GET_SEALS);
    assert_int_equal(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL),
                     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL);
    assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
    assert_int_equal(write(fd, &byte, 1), -1);
    assert_int_equal(pwrite(fd, &byte, 1, 4096), -1);
    assert_int_equal(ftruncate(fd, 1 << 20), -1);
    assert_int_equal(ftruncate(fd, 0), -1);
    assert_int_equal(fcntl(fd, F_ADD_SEALS, 0), -1); /* F_SEAL_SEAL */
    /* Reopening for writing: refused by the 0400 mode (root bypasses it),
     * and a descriptor obtained anyway still cannot write. */
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    {
        int rw = open(path, O_RDWR | O_CLOEXEC);
        if (geteuid() != 0)
            assert_int_equal(rw, -1);
        if (rw >= 0) {
            assert_int_equal(write(rw, &byte, 1), -1);
            assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0) ==
                        MAP_FAILED);
            close(rw);
        }
    }
    ro = mmap(NULL, ipc_ring_map_bytes(r), PROT_READ, MAP_SHARED, fd, 0);
    assert_true(ro != MAP_FAILED);
    assert_int_equal(mprotect(ro, 4096, PROT_READ | PROT_WRITE), -1);
    /* the daemon's write is visible through the consumer's mapping */
    assert_int_equal(ipc_ring_acquire(r, &slot), 0);
    memset(ipc_ring_payload(r, slot), 0x5A, 64);
    assert_int_equal(ipc_ring_lease(r, slot, &m, 1000, &gen), 0);
    assert_int_equal(ro[ipc_ring_payload_offset(r, slot) + 63], 0x5A);
    {
        const dvpp_ring_slot *d = (const dvpp_ring_slot *)(ro + dvpp_ring_desc_offset(slot));
        assert_int_equal(d->status, DVPP_RING_SLOT_READY);
        assert_int_equal(d->generation, gen);
        assert_int_equal(d->byte_length, 64);
        assert_int_equal(d->shape[0], 16);
        assert_int_equal(d->sequence, 1);
    }
    munmap(ro, ipc_ring_map_bytes(r));
    close(fd);
    ipc_ring_unref(r);
}

static void test_lease_life_cycle(void **state)
{
    ipc_ring *r;
    uint32_t a, b, c, ga, gb, gc;
    ipc_slot_meta m = {0};

    (void)state;
    assert_int_equal(ipc_ring_create(2, 4096, "t", &r), 0);
    assert_int_equal(ipc_ring_acquire(r, &a), 0);
    assert_int_equal(ipc_ring_acquire(r, &b), 0);
    assert_int_equal(ipc_ring_acquire(r, &c), -EAGAIN); /* full: never blocks */
    assert_int_equal(ipc_ring_lease(r, a, &m, 100, &ga), 0);
    assert_int_equal(ipc_ring_lease(r, a, &m, 100, &ga), -EINVAL); /* not writing */
    ipc_ring_abort(r, b);
    assert_int_equal(ipc_ring_leased(r), 1);
    /* forged and stale releases change nothing */
    assert_int_equal(ipc_ring_release(r, a, ga + 1), -EINVAL);
    assert_int_equal(ipc_ring_release(r, b, 0), -EINVAL);
    assert_int_equal(ipc_ring_release(r, 99, ga), -EINVAL);
    assert_int_equal(ipc_ring_release(r, a, ga), 0);
    assert_int_equal(ipc_ring_release(r, a, ga), -EINVAL); /* applied once */
    /* a new lease of the same slot has a new generation */
    assert_int_equal(ipc_ring_acquire(r, &a), 0);
    assert_int_equal(ipc_ring_lease(r, a, &m, 100, &gb), 0);
    assert_true(gb != ga);
    assert_int_equal(ipc_ring_release(r, a, ga), -EINVAL);
    /* expiry */
    assert_int_equal(ipc_ring_expire(r, 99), 0);
    assert_int_equal(ipc_ring_expire(r, 100), 1);
    assert_int_equal(ipc_ring_release(r, a, gb), -EINVAL);
    /* close while a slot is being written: the lease is refused, freed */
    assert_int_equal(ipc_ring_acquire(r, &c), 0);
    ipc_ring_ref(r); /* the job's reference */
    ipc_ring_close(r);
    assert_int_equal(ipc_ring_acquire(r, &a), -EPIPE);
    memset(ipc_ring_payload(r, c), 1, 4096); /* still mapped for the writer */
    assert_int_equal(ipc_ring_lease(r, c, &m, 100, &gc), -EPIPE);
    ipc_ring_unref(r);
    ipc_ring_unref(r);
}

/* Send @nfds copies of /dev/null with a 4-byte packet. */
static void send_with_fds(int s, int nfds)
{
    int fds[IPC_MAX_FDS];

    for (int i = 0; i < nfds; i++)
        fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_int_equal(ipc_send(s, "ping", 4, fds, nfds), 0);
    ipc_close_fds(fds, nfds);
}

static void test_recv_is_strict(void **state)
{
    int sv[2], fds[IPC_MAX_FDS], nfds, before;
    char buf[16];

    (void)state;
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    before = open_fds();
    /* two fds accepted */
    send_with_fds(sv[0], 2);
    assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), fds, 4, &nfds), 4);
    assert_int_equal(nfds, 2);
    ipc_close_fds(fds, nfds);
    assert_int_equal(open_fds(), before);
    /* more fds than the receiver takes: refused, all closed */
    send_with_fds(sv[0], 5);
    assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), fds, 4, &nfds), -EBADMSG);
    assert_int_equal(nfds, 0);
    assert_int_equal(open_fds(), before);
    /* a packet larger than the buffer: refused, its fds closed */
    {
        int one = open("/dev/null", O_RDONLY | O_CLOEXEC);
        char big[64] = {0};
        assert_int_equal(ipc_send(sv[0], big, sizeof(big), &one, 1), 0);
        close(one);
        assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), fds, 4, &nfds), -EMSGSIZE);
        assert_int_equal(open_fds(), before);
    }
    /* credentials are not descriptors: refused */
    {
        int on = 1;
        assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)), 0);
        assert_int_equal(ipc_send(sv[0], "cred", 4, NULL, 0), 0);
        assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), fds, 4, &nfds), -EBADMSG);
        on = 0;
        setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
    }
    /* an empty packet with descriptors: refused (not an end of stream),
     * its fds closed */
    {
        int one = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_int_equal(ipc_send(sv[0], "", 0, &one, 1), 0);
        close(one);
        assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), fds, 4, &nfds), -EBADMSG);
        assert_int_equal(nfds, 0);
        assert_int_equal(open_fds(), before);
    }
    /* end of stream */
    close(sv[0]);
    assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), fds, 4, &nfds), 0);
    close(sv[1]);
    assert_int_equal(open_fds(), before - 2);
}

static void test_sealed_memfd(void **state)
{
    static const char data[] = "jpeg bytes";
    uint64_t size = 0;
    int fd, plain;

    (void)state;
    assert_int_equal(ipc_memfd_from(data, sizeof(data), "in", &fd), 0);
    assert_true(ipc_memfd_is_sealed(fd, &size));
    assert_int_equal(size, sizeof(data));
    assert_int_equal(write(fd, "x", 1), -1);
    close(fd);
    plain = memfd_create("plain", MFD_CLOEXEC);
    assert_int_equal(write(plain, data, sizeof(data)), (ssize_t)sizeof(data));
    assert_false(ipc_memfd_is_sealed(plain, &size)); /* could change under the reader */
    close(plain);
    assert_false(ipc_memfd_is_sealed(open("/dev/null", O_RDONLY | O_CLOEXEC), &size));
}

/* The receiver's descriptor shares the sender's open file description (and
 * so its offset): checking the seals must not move it. */
static void test_sealed_memfd_keeps_offset(void **state)
{
    static const char data[] = "0123456789";
    uint64_t size = 0;
    char c = 0;
    int fd, dup_fd;

    (void)state;
    assert_int_equal(ipc_memfd_from(data, sizeof(data), "in", &fd), 0);
    assert_int_equal(lseek(fd, 3, SEEK_SET), 3);
    dup_fd = dup(fd); /* what SCM_RIGHTS gives the receiver: the same file */
    assert_true(dup_fd >= 0);
    assert_true(ipc_memfd_is_sealed(dup_fd, &size));
    assert_int_equal(size, sizeof(data));
    assert_int_equal(lseek(fd, 0, SEEK_CUR), 3);
    assert_int_equal(read(fd, &c, 1), 1);
    assert_int_equal(c, '3');
    close(dup_fd);
    close(fd);
}

/* Rings sharing one generation counter never repeat a generation, across
 * a close and a new ring too (a stale notice cannot name a new lease). */
static void test_shared_generations(void **state)
{
    static const ipc_slot_meta m = {0};
    ipc_ring_gens gens = {0};
    ipc_ring *a, *b;
    uint32_t slot, g1, g2, g3, g4;

    (void)state;
    assert_int_equal(ipc_ring_create(1, 4096, "a", &a), 0);
    assert_int_equal(ipc_ring_create(1, 4096, "b", &b), 0);
    ipc_ring_share_generations(a, &gens);
    ipc_ring_share_generations(b, &gens);
    assert_int_equal(ipc_ring_acquire(a, &slot), 0);
    assert_int_equal(ipc_ring_lease(a, slot, &m, UINT64_MAX, &g1), 0);
    assert_int_equal(ipc_ring_acquire(b, &slot), 0);
    assert_int_equal(ipc_ring_lease(b, slot, &m, UINT64_MAX, &g2), 0);
    assert_int_equal(ipc_ring_release(a, 0, g1), 0);
    assert_int_equal(ipc_ring_acquire(a, &slot), 0);
    assert_int_equal(ipc_ring_lease(a, slot, &m, UINT64_MAX, &g3), 0);
    assert_true(g1 != 0 && g2 > g1 && g3 > g2);
    ipc_ring_close(a);
    ipc_ring_unref(a);
    assert_int_equal(ipc_ring_create(1, 4096, "c", &a), 0); /* a new ring: no restart at 1 */
    ipc_ring_share_generations(a, &gens);
    assert_int_equal(ipc_ring_acquire(a, &slot), 0);
    assert_int_equal(ipc_ring_lease(a, slot, &m, UINT64_MAX, &g4), 0);
    assert_true(g4 > g3);
    assert_int_equal(ipc_ring_release(a, 0, g1), -EINVAL);
    /* the counter wraps past 0 (0 names no lease) */
    atomic_store(&gens.next, UINT32_MAX);
    assert_int_equal(ipc_ring_release(a, 0, g4), 0);
    assert_int_equal(ipc_ring_acquire(a, &slot), 0);
    assert_int_equal(ipc_ring_lease(a, slot, &m, UINT64_MAX, &g1), 0);
    assert_int_equal(g1, 1);
    ipc_ring_unref(a);
    ipc_ring_unref(b);
}

/* ipc_ring_wait_free: at once when a slot is free, -ETIMEDOUT when none
 * is released in time, 0 after a release, -EPIPE once closed. */
static void test_wait_free(void **state)
{
    static const ipc_slot_meta m = {0};
    ipc_ring *r;
    uint32_t slot, gen;

    (void)state;
    assert_int_equal(ipc_ring_create(1, 4096, "w", &r), 0);
    assert_int_equal(ipc_ring_wait_free(r, 0), 0);
    assert_int_equal(ipc_ring_acquire(r, &slot), 0);
    assert_int_equal(ipc_ring_wait_free(r, 20), -ETIMEDOUT);
    assert_int_equal(ipc_ring_lease(r, slot, &m, 5, &gen), 0);
    assert_int_equal(ipc_ring_wait_free(r, 1), -ETIMEDOUT);
    assert_int_equal(ipc_ring_expire(r, 10), 1);
    assert_int_equal(ipc_ring_wait_free(r, 1000), 0);
    assert_int_equal(ipc_ring_acquire(r, &slot), 0);
    ipc_ring_close(r);
    assert_int_equal(ipc_ring_wait_free(r, 1000), -EPIPE);
    ipc_ring_unref(r);
}

/* ipc_same_file: one open file description (a dup, or the same memfd
 * passed again) is the same file; another memfd, or the same file opened
 * anew, is not. */
static void test_same_file(void **state)
{
    int a, b, c, d;
    char path[64];

    (void)state;
    assert_int_equal(ipc_memfd_from("x", 1, "a", &a), 0);
    assert_int_equal(ipc_memfd_from("x", 1, "b", &b), 0);
    c = dup(a);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", a);
    d = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(c >= 0 && d >= 0);
    assert_int_equal(ipc_same_file(a, c), 1);
    assert_int_equal(ipc_same_file(a, b), 0);
    assert_int_equal(ipc_same_file(a, d), 0);
    assert_true(ipc_same_file(a, 1000) < 0); /* not open: the kernel cannot tell */
    close(a), close(b), close(c), close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_and_header),
        cmocka_unit_test(test_consumer_is_read_only),
        cmocka_unit_test(test_lease_life_cycle),
        cmocka_unit_test(test_recv_is_strict),
        cmocka_unit_test(test_sealed_memfd),
        cmocka_unit_test(test_sealed_memfd_keeps_offset),
        cmocka_unit_test(test_shared_generations),
        cmocka_unit_test(test_wait_free),
        cmocka_unit_test(test_same_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
