/* libFuzzer target: the Unix-socket protocol (proto/PROTOCOL.md) against
 * the real socket front end, in process (tests/fuzz/fuzz_daemon.h): any
 * packets, with any descriptors attached.
 *
 * Input: a mode byte, then packet records.
 *   mode bit 0   send a valid Hello first
 *        bit 1   then open a ring (4 x 64 KiB; id 1), named "fz" with bit 2
 *        bit 3   read what has arrived after each packet
 *        bit 4   at the end, wait for answers (20 ms quiet, 1 s at most)
 *        bit 5   send each record PIPELINE times back to back (more jobs
 *                than the daemon's max_inflight of 8: admission refusals)
 *   record: length (2 bytes, big endian), fd byte A, fd byte B, payload
 *        A bits 0-1       how many fds ride along (0-3)
 *        A bits 2i+2..3   fd i: a sealed memfd, an unsealed memfd, the read
 *                         end of a pipe, an unlinked plain file
 *        B bits 2i..2i+1  memfd i holds: a JPEG, a PNG, an H.264 stream
 *                         (each zero-padded to 8192 bytes, so input_len
 *                         8192 names them), or the payload itself
 *        payload          one packet as is (an Envelope, or not)
 * After the input the client leaves; the daemon must let go of the
 * connection and of every descriptor it received or made for it
 * (fuzz_daemon_settle). */
#include "fuzz_daemon.h"

static fuzz_daemon g_d;

/* Copies of a record sent at once with mode bit 5. */
#define PIPELINE 12

static void stop(void)
{
    fuzz_daemon_stop(&g_d);
}

/* Descriptor @kind holding content @what (a blob, or @payload). */
static int make_fd(unsigned kind, unsigned what, const uint8_t *payload, size_t len)
{
    const uint8_t *data = what < 3 ? g_d.blob[what] : payload;
    size_t n = what < 3 ? FUZZ_BLOB_BYTES : len;
    int p[2], fd;

    switch (kind) {
    case 0:
        fd = fuzz_memfd(data, n, true);
        break;
    case 1:
        fd = fuzz_memfd(data, n, false);
        break;
    case 2:
        if (pipe2(p, O_CLOEXEC) != 0)
            abort();
        close(p[1]);
        fd = p[0];
        break;
    default:
        fd = fuzz_tmpfile();
        break;
    }
    fuzz_sent(&g_d, fd);
    return fd;
}

/* Take every answer that is there, waiting up to @wait_ms for the first;
 * false once the daemon has closed the connection. */
static bool drain(int fd, int wait_ms)
{
    for (;;) {
        ssize_t n = fuzz_recv(fd, wait_ms, NULL, NULL);
        if (n == -EAGAIN)
            return true;
        if (n == 0)
            return false;
        wait_ms = 0;
    }
}

static void session(const uint8_t *data, size_t size)
{
    fuzz_reader r = {data, size};
    unsigned mode = fuzz_u8(&r);
    int fd = fuzz_open(&g_d), rfd = -1;
    bool alive = true;

    if (mode & 1) {
        alive = fuzz_hello(fd, 1) == 0;
        if (alive && (mode & 2)) {
            Dvpp__Envelope *e = NULL;
            alive = fuzz_ring_open(fd, 2, 4, 64u << 10, mode & 4 ? "fz" : "", mode & 4) == 0 &&
                    (e = fuzz_await(fd, 2, 2000, &rfd)) != NULL;
            if (e)
                dvpp__envelope__free_unpacked(e, NULL);
            if (rfd >= 0)
                close(rfd);
        }
    }
    while (alive && r.n) {
        size_t want = fuzz_u16(&r), len;
        unsigned a = fuzz_u8(&r), b = fuzz_u8(&r), nfds = a & 3;
        const uint8_t *payload = fuzz_take(&r, want, &len);
        int fds[3];
        for (unsigned i = 0; i < nfds; i++)
            fds[i] = make_fd((a >> (2 + 2 * i)) & 3, (b >> (2 * i)) & 3, payload, len);
        for (unsigned k = 0; alive && k < (mode & 32 ? PIPELINE : 1u); k++)
            alive = fuzz_send(fd, payload, len, fds, (int)nfds) == 0;
        for (unsigned i = 0; i < nfds; i++)
            close(fds[i]);
        if (alive && (mode & 8))
            alive = drain(fd, 0);
    }
    if (alive && (mode & 16)) {
        uint64_t until = fuzz_now_ms() + 1000;
        while (fuzz_now_ms() < until) {
            ssize_t n = fuzz_recv(fd, 20, NULL, NULL);
            if (n == -EAGAIN || n == 0)
                break;
        }
    }
    close(fd);
    fuzz_daemon_settle(&g_d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const uint8_t warmup[] = {0x1b}; /* Hello, ring, wait */

    (void)argc, (void)argv;
    fuzz_daemon_start(&g_d, "sock", 200);
    atexit(stop);
    session(warmup, sizeof(warmup));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    session(data, size);
    return 0;
}
