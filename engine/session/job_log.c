/* job_log.c — see job_log.h. The file lives in the sandbox's /tmp; the controller reaches it
 * only through the descriptor init opened there (read-write), with pwrite, pread, ftruncate. */
#include "session/job_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

void job_log_init(struct job_log *l, int fd, size_t cap)
{
    l->fd = fd;
    l->size = 0;
    l->dropped = 0;
    l->marker = 0;
    l->cap = cap < 4096 ? 4096 : cap;
}

static int pwrite_all(int fd, const char *p, size_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t w;
        RETRY_EINTR(w, pwrite(fd, p, n, (off_t)off));
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        p += w, n -= (size_t)w, off += (uint64_t)w;
    }
    return 0;
}

/* Keep the newest `keep` bytes of the file behind a marker line, in place. */
static int drop_oldest(struct job_log *l, uint64_t keep)
{
    char marker[96];
    if (keep > l->size - l->marker)
        keep = l->size - l->marker; /* output only: the old marker line is replaced */
    l->dropped += l->size - l->marker - keep;
    int mlen =
        snprintf(marker, sizeof marker,
                 "[cordon: %" PRIu64 " earlier bytes of this log were dropped]\n", l->dropped);
    uint64_t from = l->size - keep, to = (uint64_t)mlen;
    char *buf = malloc(1 << 16);
    if (!buf)
        return -ENOMEM;
    int r = 0;
    for (uint64_t done = 0; done < keep && r == 0;) {
        size_t chunk = keep - done < (1 << 16) ? (size_t)(keep - done) : (1 << 16);
        ssize_t got = pread(l->fd, buf, chunk, (off_t)(from + done));
        if (got <= 0) {
            r = got < 0 ? -errno : -EIO;
            break;
        }
        r = pwrite_all(l->fd, buf, (size_t)got, to + done);
        done += (uint64_t)got;
    }
    free(buf);
    if (r == 0)
        r = pwrite_all(l->fd, marker, (size_t)mlen, 0);
    if (r == 0 && ftruncate(l->fd, (off_t)(to + keep)) < 0)
        r = -errno;
    if (r == 0) {
        l->size = to + keep;
        l->marker = (uint64_t)mlen;
    }
    return r;
}

int job_log_append(struct job_log *l, const char *data, size_t n)
{
    if (l->fd < 0)
        return 0;
    size_t half = l->cap / 2;
    bool cut = n > half;
    if (cut) { /* only the newest half of the cap of this write can stay */
        l->dropped += n - half;
        data += n - half;
        n = half;
    }
    /* a cut write drops what came before it too, and needs the marker even when the file has
     * room (a first write of more than half the cap) */
    if (cut || l->size + n > l->cap) {
        uint64_t keep = half > n ? half - n : 0;
        if (keep > l->size)
            keep = l->size;
        int r = drop_oldest(l, keep);
        if (r < 0) {
            job_log_close(l);
            return r;
        }
    }
    int r = pwrite_all(l->fd, data, n, l->size);
    if (r < 0) {
        job_log_close(l);
        return r;
    }
    l->size += n;
    return 0;
}

void job_log_close(struct job_log *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
}
