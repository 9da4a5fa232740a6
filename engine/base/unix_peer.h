/* unix_peer.h — what the kernel says about the other end of a connected AF_UNIX stream socket:
 * the pidfd of the process that connected (SO_PEERPIDFD, Linux 6.5), the inode of the peer's
 * socket (sock_diag's UNIX_DIAG_PEER), and whether a process holds a given socket in its
 * descriptor table (/proc/PID/fd). Runs in whichever process asks (the session controller;
 * `cordon doctor` probes the same calls). Owns no state; decides nothing: who may use a socket
 * is the caller's business (session/api_server.c). Uses libc, netlink and /proc only. */
#ifndef CORDON_UNIX_PEER_H
#define CORDON_UNIX_PEER_H
#include <stdbool.h>
#include <sys/types.h>

/* The pidfd of the process that connected fd's peer (SO_PEERPIDFD), in *pidfd (close it).
 * 0, or -errno (-ENOPROTOOPT: the kernel has no SO_PEERPIDFD). */
int unix_peer_pidfd(int fd, int *pidfd);
/* The inode of the socket at the other end of fd (sock_diag, UNIX_DIAG_PEER), in *ino.
 * 0, -ENOTCONN when it has none (closed), or -errno (-ENOENT: no sock_diag for AF_UNIX). */
int unix_peer_inode(int fd, ino_t *ino);
/* 1 when process pid has socket inode ino among its open descriptors, 0 when not, -errno when
 * its descriptor table cannot be read. The answer is about whatever process has that pid at
 * the time of the call: the caller proves it was the one it meant. */
int unix_peer_pid_holds(pid_t pid, ino_t ino);
/* The pid a pidfd refers to (its fdinfo's Pid:): 0 or less once that process has been reaped,
 * -1 when the fdinfo cannot be read. */
pid_t unix_peer_pidfd_pid(int pidfd);
#endif
