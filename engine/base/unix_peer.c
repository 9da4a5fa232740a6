/* unix_peer.c — see unix_peer.h. */
#include "base/unix_peer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; older libc headers lack it */
#endif

int unix_peer_pidfd(int fd, int *pidfd)
{
    int p = -1;
    socklen_t len = sizeof p;
    *pidfd = -1;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &p, &len) < 0)
        return -errno;
    if (p < 0)
        return -ESRCH;
    *pidfd = p;
    return 0;
}

/* One request for the one socket with inode `self` (not a dump), asking for its peer. */
struct unix_peer_req {
    struct nlmsghdr nh;
    struct unix_diag_req r;
};

int unix_peer_inode(int fd, ino_t *ino)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISSOCK(st.st_mode) || st.st_ino > UINT32_MAX)
        return -ENOTSOCK;
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0)
        return -errno;
    int ret;
    struct unix_peer_req req = {
        .nh = {.nlmsg_len = sizeof req,
               .nlmsg_type = SOCK_DIAG_BY_FAMILY,
               .nlmsg_flags = NLM_F_REQUEST,
               .nlmsg_seq = 1},
        .r = {.sdiag_family = AF_UNIX,
              .udiag_states = UINT32_MAX,
              .udiag_ino = (uint32_t)st.st_ino,
              .udiag_show = UDIAG_SHOW_PEER,
              .udiag_cookie = {UINT32_MAX, UINT32_MAX}},
    };
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    ssize_t n;
    RETRY_EINTR(n, sendto(nl, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel));
    if (n < 0) {
        ret = -errno;
        goto out;
    }
    union {
        struct nlmsghdr nh;
        char bytes[8192];
    } buf;
    RETRY_EINTR(n, recv(nl, &buf, sizeof buf, 0));
    if (n < 0) {
        ret = -errno;
        goto out;
    }
    ret = -EPROTO;
    struct nlmsghdr *h = &buf.nh;
    size_t left = (size_t)n;
    if (!NLMSG_OK(h, left))
        goto out;
    if (h->nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *e = NLMSG_DATA(h);
        if (h->nlmsg_len >= NLMSG_LENGTH(sizeof *e))
            ret = e->error < 0 ? e->error : -EPROTO;
        goto out;
    }
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
        h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
        goto out;
    const struct unix_diag_msg *m = NLMSG_DATA(h);
    if (m->udiag_ino != (uint32_t)st.st_ino)
        goto out; /* not the socket asked about */
    int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
    ret = -ENOTCONN; /* no UNIX_DIAG_PEER: the socket has no peer now */
    for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
        if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
            uint32_t peer;
            memcpy(&peer, RTA_DATA(a), sizeof peer);
            if (peer != 0) {
                *ino = (ino_t)peer;
                ret = 0;
            }
            break;
        }
    }
out:
    close(nl);
    return ret;
}

int unix_peer_pid_holds(pid_t pid, ino_t ino)
{
    char path[64], want[48], link[64];
    if (pid <= 0)
        return -ESRCH;
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    snprintf(want, sizeof want, "socket:[%llu]", (unsigned long long)ino);
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    int found = 0;
    struct dirent *e;
    errno = 0;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        ssize_t n = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
        if (n < 0)
            continue; /* closed meanwhile */
        link[n] = '\0';
        found = strcmp(link, want) == 0;
        errno = 0;
    }
    int err = errno;
    closedir(d);
    if (!found && err != 0)
        return -err;
    return found;
}

pid_t unix_peer_pidfd_pid(int pidfd)
{
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    long pid = -1;
    bool seen = false;
    while (!seen && fgets(line, sizeof line, f))
        seen = sscanf(line, "Pid: %ld", &pid) == 1;
    fclose(f);
    return seen ? (pid_t)pid : -1;
}
