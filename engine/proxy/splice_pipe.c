/* splice_pipe.c — see splice_pipe.h. */
#include "proxy/splice_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SPLICE_PIPE_WANT (256 * 1024) /* asked for; the default 64 KiB is kept when refused */
#define SPLICE_PIPE_SPARE 8           /* empty pipes kept for the next tunnels */

/* Empty pipes given back, reused before a new one is made: a tunnel costs no pipe2, fcntl and
 * close per direction. Only pipes known to be empty come here (one tunnel's bytes must never
 * reach another), and an empty pipe holds no pages. The event loop's thread only. */
static struct splice_pipe spare[SPLICE_PIPE_SPARE];
static size_t n_spare;

void splice_pipe_init(struct splice_pipe *p)
{
    p->r = p->w = -1;
    p->len = 0;
    p->cap = 0;
    p->took = false;
}

static int splice_pipe_open(struct splice_pipe *p)
{
    if (n_spare > 0) {
        *p = spare[--n_spare];
        p->took = false;
        return 0;
    }
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
        ssize_t n =
            splice(src, NULL, p->w, NULL, p->cap - p->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n == 0)
            *src_eof = true;
        else if (n > 0) {
            p->len += (size_t)n;
            p->took = true;
        } else if (errno != EAGAIN && errno != EINTR)
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

bool splice_pipe_full(const struct splice_pipe *p)
{
    return p->r >= 0 && p->len >= p->cap;
}

void splice_pipe_close(struct splice_pipe *p)
{
    if (p->r >= 0) {
        close(p->r);
        close(p->w);
    }
    splice_pipe_init(p);
}

void splice_pipe_release(struct splice_pipe *p)
{
    if (p->len > 0 || p->r < 0)
        return;
    int queued = -1; /* the kernel's word that it is empty, not only the count kept here */
    if (n_spare < SPLICE_PIPE_SPARE && ioctl(p->r, FIONREAD, &queued) == 0 && queued == 0) {
        spare[n_spare++] = *p;
        splice_pipe_init(p);
        return;
    }
    splice_pipe_close(p);
}

void splice_pipe_drop_spares(void)
{
    while (n_spare > 0)
        splice_pipe_close(&spare[--n_spare]);
}
