/* fdpass.c — see fdpass.h. */
#include "base/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/util.h"

int fdpass_sendv(int sock, const struct iovec *iov, int iovcnt, const int *fds, int nfds, int flags)
{
    union {
        char buf[CMSG_SPACE(FDPASS_MAX * sizeof(int))];
        struct cmsghdr align;
    } u;
    if (nfds < 0 || nfds > FDPASS_MAX)
        return -EINVAL;
    struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
    if (nfds > 0) {
        memset(u.buf, 0, sizeof u.buf);
        m.msg_control = u.buf;
        m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    }
    ssize_t n;
    RETRY_EINTR(n, sendmsg(sock, &m, MSG_NOSIGNAL | flags));
    return n < 0 ? -errno : 0;
}

long fdpass_recvv(int sock, struct iovec *iov, int iovcnt, int fds[FDPASS_MAX], int flags,
                  bool *cut)
{
    union {
        char buf[CMSG_SPACE(FDPASS_MAX * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = iov,
                       .msg_iovlen = (size_t)iovcnt,
                       .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    for (int i = 0; i < FDPASS_MAX; i++)
        fds[i] = -1;
    *cut = false;
    ssize_t n;
    RETRY_EINTR(n, recvmsg(sock, &m, MSG_CMSG_CLOEXEC | flags));
    if (n < 0)
        return -errno;
    int got = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (got < FDPASS_MAX) {
                fds[got++] = fd;
            } else {
                close(fd);
                *cut = true;
            }
        }
    }
    if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
        *cut = true;
    if (n == 0) { /* the other end is gone */
        for (int i = 0; i < got; i++)
            close(fds[i]), fds[i] = -1;
        return -EPIPE;
    }
    return (long)n;
}
