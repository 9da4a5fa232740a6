/* fdpass.c — see fdpass.h. */
#include "base/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "base/util.h"

int fdpass_send(int sock, int fd, char tag)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = &tag, .iov_len = 1};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    memset(u.buf, 0, sizeof u.buf);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    ssize_t n;
    RETRY_EINTR(n, sendmsg(sock, &msg, MSG_NOSIGNAL));
    return n < 0 ? -errno : 0;
}

int fdpass_recv(int sock, char *tag)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = tag, .iov_len = 1};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    ssize_t n;
    RETRY_EINTR(n, recvmsg(sock, &msg, MSG_CMSG_CLOEXEC));
    if (n < 0)
        return -errno;
    if (n == 0)
        return -EPIPE;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int fd;
            memcpy(&fd, CMSG_DATA(c), sizeof(int));
            return fd;
        }
    }
    return -EBADMSG;
}
