/* splice_pipe.c — see splice_pipe.h. */
#include "splice_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#define SPLICE_PIPE_WANT (256 * 1024) /* asked for; the default 64 KiB is kept when refused */

void splice_pipe_init(struct splice_pipe *p)
{
    p->r = p->w = -1;
    p->len = 0;
    p->cap = 0;
}

static int splice_pipe_open(struct splice_pipe *p)
{
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0)
        return -errno;
    p->r = fds[0];
    p->w = fds[1];
    int cap = fcntl(p->w, F_SETPIPE_SZ, SPLICE_PIPE_WANT);
    if (cap < 0)
        cap = fcntl(p->w, F_GETPIPE_SZ);
    p->cap = cap > 0 ? (size_t)cap : 65536;
    return 0;
}

int splice_pump(struct splice_pipe *p, int src, bool *src_eof, int dst)
{
    if (p->r < 0) {
        int r = splice_pipe_open(p);
        if (r < 0)
            return r;
    }
    if (!*src_eof && p->len < p->cap) {
        ssize_t n = splice(src, NULL, p->w, NULL, p->cap - p->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n == 0)
            *src_eof = true;
        else if (n > 0)
            p->len += (size_t)n;
        else if (errno != EAGAIN && errno != EINTR)
            return -errno;
    }
    while (p->len > 0) {
        ssize_t n = splice(p->r, NULL, dst, NULL, p->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
            p->len -= (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        return n < 0 ? -errno : -EPIPE;
    }
    return 0;
}

bool splice_pipe_full(const struct splice_pipe *p) { return p->r >= 0 && p->len >= p->cap; }

void splice_pipe_release(struct splice_pipe *p)
{
    if (p->len > 0 || p->r < 0)
        return;
    close(p->r);
    close(p->w);
    p->r = p->w = -1;
}
