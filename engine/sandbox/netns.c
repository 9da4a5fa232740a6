/* netns.c — see netns.h. Loopback: one ioctl pair on "lo"; no netlink needed for a single
 * flag. The resolver's sockets: plain binds on 127.0.0.53. Transparent mode (the part below):
 * two netlink route messages and one nf_tables batch (nft_netlink.c: no nft(8) run, which cost
 * a fork and an exec of a few milliseconds on every start). */
#include "sandbox/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/nft_netlink.h"

int netns_loopback_up(void)
{
    struct ifreq ifr;
    int r = 0;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
        r = -errno;
        goto out;
    }
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
        r = -errno;
out:
    close(fd);
    return r;
}

static int bound_socket(int type, const char *addr, unsigned port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int one = 1, r = 0;
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        (type == SOCK_STREAM && listen(fd, 64) < 0)) {
        r = -errno;
        close(fd);
        return r ? r : -EINVAL;
    }
    return fd;
}

int netns_dns_listeners(int *udp_fd, int *tcp_fd)
{
    /* 127.0.0.53 is on lo already (all of 127/8 is); port 53 needs CAP_NET_BIND_SERVICE in the
     * namespace's user namespace, which init has. */
    int u = bound_socket(SOCK_DGRAM, NETNS_DNS_ADDR, 53);
    if (u < 0)
        return u;
    int t = bound_socket(SOCK_STREAM, NETNS_DNS_ADDR, 53);
    if (t < 0) {
        close(u);
        return t;
    }
    *udp_fd = u;
    *tcp_fd = t;
    return 0;
}

/* ---- transparent mode ---- */

/* RTM_NEWROUTE: type local, every address of family, on lo (ifindex from the name). */
static int add_local_route(int family)
{
    struct {
        struct nlmsghdr nh;
        struct rtmsg rt;
        char attrs[64];
    } req;
    memset(&req, 0, sizeof req);
    unsigned ifindex = if_nametoindex("lo");
    if (!ifindex)
        return -errno;
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof req.rt);
    req.nh.nlmsg_type = RTM_NEWROUTE;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
    req.rt.rtm_family = (unsigned char)family;
    req.rt.rtm_dst_len = 0;
    req.rt.rtm_table = RT_TABLE_LOCAL;
    req.rt.rtm_protocol = RTPROT_BOOT;
    req.rt.rtm_scope = RT_SCOPE_HOST;
    req.rt.rtm_type = RTN_LOCAL;
    struct rtattr *a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
    a->rta_type = RTA_OIF;
    a->rta_len = RTA_LENGTH(sizeof ifindex);
    memcpy(RTA_DATA(a), &ifindex, sizeof ifindex);
    req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(a->rta_len);

    int r = 0;
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -errno;
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof sa) < 0) {
        r = -errno;
        goto out;
    }
    char buf[512];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
        r = n < 0 ? -errno : -EPROTO;
        goto out;
    }
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    if (h->nlmsg_type == NLMSG_ERROR)
        r = ((struct nlmsgerr *)NLMSG_DATA(h))->error; /* 0 is the ACK */
out:
    close(fd);
    return r;
}

/* The listener: one dual-stack socket on [::]:PORT (IPv4 connections arrive as mapped
 * addresses), else IPv4 only when the namespace has no IPv6. */
static int transparent_listener(void)
{
    int one = 1, zero = 0;
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        struct sockaddr_in6 sa = {.sin6_family = AF_INET6,
                                  .sin6_port = htons(NETNS_TRANSPARENT_PORT),
                                  .sin6_addr = IN6ADDR_ANY_INIT};
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) == 0 &&
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
            bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 1024) == 0)
            return fd;
        close(fd);
    }
    fd = bound_socket(SOCK_STREAM, "0.0.0.0", NETNS_TRANSPARENT_PORT);
    if (fd >= 0 && listen(fd, 1024) < 0) {
        int r = -errno;
        close(fd);
        return r;
    }
    return fd;
}

int netns_transparent_start(struct netns_transparent *t, char *err, size_t errlen)
{
    t->listen_fd = -1;
    int r;
    if ((r = add_local_route(AF_INET)) < 0 && r != -EEXIST) {
        snprintf(err, errlen, "cannot add a local route for every IPv4 address: %s", strerror(-r));
        return -1;
    }
    if ((r = add_local_route(AF_INET6)) < 0 && r != -EEXIST && r != -EAFNOSUPPORT) {
        snprintf(err, errlen, "cannot add a local route for every IPv6 address: %s", strerror(-r));
        return -1;
    }
    int fd = transparent_listener();
    if (fd < 0) {
        snprintf(err, errlen, "cannot listen on port %d: %s", NETNS_TRANSPARENT_PORT,
                 strerror(-fd));
        return -1;
    }
    /* The rule last: a connection redirected before the listener existed would be refused. */
    if (nft_netlink_add_redirect(NETNS_TRANSPARENT_PORT, err, errlen) < 0) {
        close(fd);
        return -1;
    }
    t->listen_fd = fd;
    return 0;
}
