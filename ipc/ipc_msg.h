/* ipc_msg: packets with file descriptors over a SOCK_SEQPACKET Unix
 * socket, and sealed memfds. Shared by the daemon and libdvppclient; plain
 * POSIX + Linux, no other dependency (errors are -errno).
 *
 * A packet is one protobuf Envelope (proto/dvpp.proto) plus at most
 * IPC_MAX_FDS descriptors as SCM_RIGHTS. Receiving is strict: a packet
 * larger than the buffer (MSG_TRUNC), truncated ancillary data
 * (MSG_CTRUNC), or any control message that is not SCM_RIGHTS is refused,
 * and every descriptor that did arrive is closed first, so a hostile peer
 * cannot leak fds into the receiver.
 */
#ifndef IPC_MSG_H
#define IPC_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IPC_MAX_FDS 64

/* Send @len bytes and @nfds descriptors (borrowed) as one packet.
 * MSG_NOSIGNAL; blocking or not as the socket is. 0, or -errno (-EAGAIN
 * on a full non-blocking socket). */
int ipc_send(int sock, const void *buf, size_t len, const int *fds, int nfds);

/* Receive one packet into @buf (@cap bytes) and up to @max_fds descriptors
 * (close-on-exec) into @fds, their count into *nfds. Returns the packet's
 * length (> 0), 0 at end of stream, or: -EMSGSIZE (packet larger than
 * @cap), -EBADMSG (truncated or foreign ancillary data, more fds than
 * @max_fds, or fds on an empty packet), -EAGAIN / -EINTR / other -errno.
 * On any failure, and at end of stream, no descriptor is left open. */
ssize_t ipc_recv(int sock, void *buf, size_t cap, int *fds, int max_fds, int *nfds);

/* Close @n descriptors (ignoring -1). */
void ipc_close_fds(const int *fds, int n);

/* A memfd holding @len bytes of @data, sealed against any change
 * (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL): what a
 * client sends as a large input. The fd (close-on-exec) into *fd; 0 or
 * -errno. */
int ipc_memfd_from(const void *data, size_t len, const char *name, int *fd);

/* True when @fd is a memfd sealed against shrinking, growing and writing
 * (so its bytes cannot change while the daemon reads them); *size = its
 * size. Leaves the file offset (shared with the sender's descriptor)
 * where it was. */
bool ipc_memfd_is_sealed(int fd, uint64_t *size);

/* Whether descriptors @a and @b of this process refer to one open file
 * description (kcmp KCMP_FILE): 1 yes, 0 no, -errno when the kernel cannot
 * tell (no kcmp, or a seccomp filter refuses it). Two descriptors that a
 * peer sent of the same memfd share one; an inode number alone proves
 * nothing (memfd inode numbers may repeat once they wrap). */
int ipc_same_file(int a, int b);

/* The peer's credentials (SO_PEERCRED). 0 or -errno. */
int ipc_peer_cred(int sock, pid_t *pid, uid_t *uid, gid_t *gid);

/* The peer's supplementary groups as the kernel recorded them at connect
 * (SO_PEERGROUPS), at most @cap into @out. Returns the count (which may
 * exceed @cap: only the first @cap are stored) or -errno. */
int ipc_peer_groups(int sock, gid_t *out, int cap);

#endif
