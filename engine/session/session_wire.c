/* session_wire.c — see session_wire.h. */
#include "session/session_wire.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/util.h"

int sw_send(int sock, const struct sw_msg *msg, const void *payload, size_t len, const int *fds,
            int nfds)
{
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov[2] = {{.iov_base = (void *)msg, .iov_len = sizeof *msg},
                           {.iov_base = (void *)payload, .iov_len = len}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
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
    RETRY_EINTR(n, sendmsg(sock, &m, MSG_NOSIGNAL));
    return n < 0 ? -errno : 0;
}

long sw_recv(int sock, struct sw_msg *msg, void *buf, size_t cap, int fds[2], int flags)
{
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov[2] = {{.iov_base = msg, .iov_len = sizeof *msg},
                           {.iov_base = buf, .iov_len = cap}};
    struct msghdr m = {.msg_iov = iov,
                       .msg_iovlen = cap ? 2 : 1,
                       .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    fds[0] = fds[1] = -1;
    ssize_t n;
    RETRY_EINTR(n, recvmsg(sock, &m, MSG_CMSG_CLOEXEC | flags));
    if (n < 0)
        return -errno;
    if (n == 0)
        return -EPIPE;
    int got = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (got < 2)
                fds[got++] = fd;
            else
                close(fd);
        }
    }
    if ((size_t)n < sizeof *msg || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        for (int i = 0; i < got; i++)
            close(fds[i]), fds[i] = -1;
        return -EBADMSG;
    }
    return (long)((size_t)n - sizeof *msg);
}
