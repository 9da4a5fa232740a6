/* client_output.c — see client_output.h. */
#include "client/client_output.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

int cout_write(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                    return -errno;
                continue;
            }
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}
