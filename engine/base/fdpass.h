/* fdpass.h — sending and receiving file descriptors over a Unix socket (SCM_RIGHTS): the
 * mechanics under the wire between the sandbox's init and the controller
 * (sandbox/init_wire.h). */
#ifndef CORDON_FDPASS_H
#define CORDON_FDPASS_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* The most descriptors one message carries here. */
#define FDPASS_MAX 2

/* Send iov (iovcnt pieces, as one message) with nfds descriptors (0..FDPASS_MAX), flags for
 * sendmsg beside MSG_NOSIGNAL. 0 or -errno. */
int fdpass_sendv(int sock, const struct iovec *iov, int iovcnt, const int *fds, int nfds,
                 int flags);
/* Receive one message into iov; its descriptors (O_CLOEXEC) into fds[0..FDPASS_MAX), unused
 * slots -1 (more than FDPASS_MAX: the rest closed, *cut set). *cut is also set when the
 * message or its descriptors did not fit. Returns the bytes received; -EPIPE on EOF, -errno. */
long fdpass_recvv(int sock, struct iovec *iov, int iovcnt, int fds[FDPASS_MAX], int flags,
                  bool *cut);
#endif
