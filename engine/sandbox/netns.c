/* netns.c — see netns.h. Loopback: one ioctl pair on "lo"; no netlink needed for a single
 * flag. The resolver's sockets: plain binds on 127.0.0.53. Transparent mode (netns_transparent.c
 * part below): two netlink route messages and one nft(8) run. */
#include "sandbox/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

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
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || (type == SOCK_STREAM && listen(fd, 64) < 0)) {
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
