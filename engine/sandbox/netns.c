/* netns.c — see netns.h. One ioctl pair on "lo"; no netlink needed for a single flag. */
#include "sandbox/netns.h"

#include <errno.h>
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
