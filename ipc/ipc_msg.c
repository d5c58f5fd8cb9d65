/* ipc_msg: SCM_RIGHTS packets and sealed memfds. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS, struct ucred */
#endif
#include "ipc_msg.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int ipc_send(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * IPC_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {(void *)buf, len};
    struct msghdr m;
    ssize_t n;

    if (nfds < 0 || nfds > IPC_MAX_FDS)
        return -EINVAL;
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (nfds > 0) {
        struct cmsghdr *c;
        memset(&ctl, 0, sizeof(ctl));
        m.msg_control = ctl.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    do
        n = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    return (size_t)n == len ? 0 : -EMSGSIZE;
}

void ipc_close_fds(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* Walk the control messages: collect SCM_RIGHTS fds (closing any beyond
 * @max_fds), flag anything else. */
static int take_fds(struct msghdr *m, int *fds, int max_fds, int *nfds)
{
    int bad = 0;

    *nfds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        size_t n;
        int tmp[IPC_MAX_FDS * 4];
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
            c->cmsg_len < CMSG_LEN(0)) {
            bad = 1;
            continue; /* SCM_CREDENTIALS etc. carry no fds */
        }
        n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        if (n > sizeof(tmp) / sizeof(tmp[0]))
            n = sizeof(tmp) / sizeof(tmp[0]);
        memcpy(tmp, CMSG_DATA(c), n * sizeof(int));
        for (size_t i = 0; i < n; i++) {
            if (*nfds < max_fds && fds)
                fds[(*nfds)++] = tmp[i];
            else {
                close(tmp[i]);
                bad = 1;
            }
        }
    }
    return bad;
}

ssize_t ipc_recv(int sock, void *buf, size_t cap, int *fds, int max_fds, int *nfds)
{
    union {
        /* room for more than we accept, so an excess is seen (and closed)
         * rather than silently truncated by the kernel */
        char buf[CMSG_SPACE(sizeof(int) * IPC_MAX_FDS * 4)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, cap};
    struct msghdr m;
    ssize_t n;
    int got = 0, bad;

    *nfds = 0;
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl.buf;
    m.msg_controllen = sizeof(ctl.buf);
    do
        n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    bad = take_fds(&m, fds, max_fds, &got);
    /* An empty packet reads as the end of the stream (0), yet may carry
     * descriptors: refused like any packet that brings unannounced fds,
     * never left open behind a 0 the caller takes for EOF. */
    if (n == 0 && got > 0)
        bad = 1;
    if (bad || (m.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
        ipc_close_fds(fds, got);
        return (m.msg_flags & MSG_TRUNC) && !bad && !(m.msg_flags & MSG_CTRUNC)
                   ? -EMSGSIZE : -EBADMSG;
    }
    *nfds = got;
    return n;
}

int ipc_memfd_from(const void *data, size_t len, const char *name, int *fd)
{
    const char *p = data;
    size_t done = 0;
    int f = memfd_create(name ? name : "dvpp-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (f < 0)
        return -errno;
    while (done < len) {
        ssize_t w = write(f, p + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(f);
            return -e;
        }
        done += (size_t)w;
    }
    if (fcntl(f, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        int e = errno;
        close(f);
        return -e;
    }
    *fd = f;
    return 0;
}

bool ipc_memfd_is_sealed(int fd, uint64_t *size)
{
    int need = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
    int seals = fcntl(fd, F_GET_SEALS);
    struct stat sb;

    if (seals < 0 || (seals & need) != need)
        return false;
    /* fstat, not lseek: the file offset is shared with the sender's
     * descriptor (one open file description), and moving it would change
     * where the sender's next read() starts. */
    if (fstat(fd, &sb) != 0 || sb.st_size < 0)
        return false;
    *size = (uint64_t)sb.st_size;
    return true;
}

int ipc_peer_groups(int sock, gid_t *out, int cap)
{
    socklen_t len = (socklen_t)(sizeof(gid_t) * (size_t)cap);

    if (getsockopt(sock, SOL_SOCKET, SO_PEERGROUPS, out, &len) == 0)
        return (int)(len / sizeof(gid_t));
    if (errno == ERANGE) /* len now holds the size needed */
        return (int)(len / sizeof(gid_t));
    return -errno;
}

int ipc_peer_cred(int sock, pid_t *pid, uid_t *uid, gid_t *gid)
{
    struct ucred cr;
    socklen_t len = sizeof(cr);

    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
        return -errno;
    *pid = cr.pid;
    *uid = cr.uid;
    *gid = cr.gid;
    return 0;
}

int ipc_same_file(int a, int b)
{
    pid_t self = getpid();
    long r = syscall(SYS_kcmp, (long)self, (long)self, (long)KCMP_FILE, (long)a, (long)b);

    if (r < 0)
        return -errno;
    return r == 0;
}
