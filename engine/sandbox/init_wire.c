/* init_wire.c — see init_wire.h. */
#include "sandbox/init_wire.h"

#include <errno.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/fdpass.h"

/* The wire's two descriptors are what fdpass carries at most. */
_Static_assert(FDPASS_MAX == 2, "init_wire_recv's fds[2] is fdpass_recvv's array");

/* What each tag may carry: payload bytes and descriptors (min..max), flags allowed. */
struct tag_row {
    const char *name;
    uint32_t min_len, max_len;
    uint8_t min_fds, max_fds;
    uint8_t flags;
};

#define ROW(tag, lo, hi, flo, fhi, fl) [tag] = {#tag, lo, hi, flo, fhi, fl}
static const struct tag_row rows[INIT_WIRE_TAG_END] = {
    ROW(INIT_WIRE_MAPS, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_CONFIG, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_IDMAPPED, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_NO_IDMAP, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_SHIFT_BIND, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_NO_SHIFT_BIND, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_FILTER, sizeof(struct sock_filter), BPF_MAXINSNS * sizeof(struct sock_filter), 0,
        0, 0),
    ROW(INIT_WIRE_ABORT, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_HTTP_LISTENER, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_SOCKS_LISTENER, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_DNS_UDP, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_DNS_TCP, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_TRANSPARENT, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_NO_TRANSPARENT, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_HOST_PORT, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_HOST_PORT6, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_NO_HOST_PORT6, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_PTY, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_RENAME_NOTIFY, 0, 0, 1, 1, 0),
    ROW(INIT_WIRE_NO_RENAME_NOTIFY, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_SETUP_DONE, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_CONNECT, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_CONNECTED, 0, 0, 0, 1, 0),
    ROW(INIT_WIRE_STATUS, sizeof(struct init_wire_status), sizeof(struct init_wire_status), 0, 0,
        0),
    ROW(INIT_WIRE_SPAWN, 1, INIT_WIRE_MAX_COMMAND, 2, 2, INIT_WIRE_BACKGROUND | INIT_WIRE_FRESH),
    ROW(INIT_WIRE_SIGNAL, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_SHUTDOWN, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_STARTED, 0, 0, 0, 1, 0),
    ROW(INIT_WIRE_SIGNALED, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_EXITED, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_GONE, 0, 0, 0, 0, 0),
    ROW(INIT_WIRE_REVIEW_SWAP, 1, 64, 0, 0, 0),
    ROW(INIT_WIRE_REVIEW_SWAPPED, 0, INIT_WIRE_MAX_SWAPPED, 0, 0, 0),
};
#undef ROW

const char *init_wire_tag_name(unsigned tag)
{
    return tag < INIT_WIRE_TAG_END && rows[tag].name ? rows[tag].name : "an unknown tag";
}

/* The header (already copied out) of a packet of n bytes that came with nfds descriptors. */
static long check_head(const struct init_wire_msg *head, size_t n, int nfds, int truncated,
                       struct init_wire_msg *msg)
{
    *msg = *head;
    if (truncated)
        return -EBADMSG;
    if (msg->tag >= INIT_WIRE_TAG_END || !rows[msg->tag].name)
        return -EPROTO;
    const struct tag_row *row = &rows[msg->tag];
    if (msg->len != n - sizeof *msg || msg->len < row->min_len || msg->len > row->max_len ||
        (msg->flags & ~row->flags) || msg->pad)
        return -EBADMSG;
    if (nfds != msg->nfds || nfds < row->min_fds || nfds > row->max_fds)
        return -EBADFD;
    return (long)msg->len;
}

long init_wire_parse(const void *packet, size_t n, int nfds, int truncated,
                     struct init_wire_msg *msg)
{
    struct init_wire_msg head;
    memset(msg, 0, sizeof *msg);
    if (n < sizeof head)
        return -EBADMSG;
    memcpy(&head, packet, sizeof head);
    return check_head(&head, n, nfds, truncated, msg);
}

bool init_wire_refused(long r)
{
    return r == -EBADMSG || r == -EPROTO || r == -EBADFD;
}

const char *init_wire_strerror(long r)
{
    switch (r) {
    case -EBADMSG:
        return "a message of the wrong length";
    case -EPROTO:
        return "a message of an unknown kind";
    case -EBADFD:
        return "a message without the descriptors it carries";
    case -EPIPE:
        return "the other end is gone";
    default:
        return strerror((int)-r);
    }
}

int init_wire_send(int sock, const struct init_wire_msg *msg, const void *payload, size_t len,
                   const int *fds, int nfds)
{
    return init_wire_send_flags(sock, msg, payload, len, fds, nfds, 0);
}

int init_wire_send_flags(int sock, const struct init_wire_msg *msg, const void *payload, size_t len,
                         const int *fds, int nfds, int flags)
{
    if (nfds < 0 || nfds > 2 || len > UINT32_MAX)
        return -EINVAL;
    struct init_wire_msg head = *msg;
    head.len = (uint32_t)len;
    head.nfds = (uint8_t)nfds;
    head.pad = 0;
    struct iovec iov[2] = {{.iov_base = &head, .iov_len = sizeof head},
                           {.iov_base = (void *)payload, .iov_len = len}};
    return fdpass_sendv(sock, iov, len ? 2 : 1, fds, nfds, flags);
}

int init_wire_send_fd(int sock, enum init_wire_tag tag, int32_t value, int fd)
{
    struct init_wire_msg m = {.tag = (uint8_t)tag, .value = value};
    return init_wire_send(sock, &m, NULL, 0, fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0);
}

long init_wire_recv(int sock, struct init_wire_msg *msg, void *buf, size_t cap, int fds[2],
                    int flags)
{
    struct init_wire_msg head;
    struct iovec iov[2] = {{.iov_base = &head, .iov_len = sizeof head},
                           {.iov_base = buf, .iov_len = cap}};
    bool cut;
    memset(msg, 0, sizeof *msg);
    long n = fdpass_recvv(sock, iov, cap ? 2 : 1, fds, flags, &cut);
    if (n < 0)
        return n;
    int got = (fds[0] >= 0) + (fds[1] >= 0);
    long r = (size_t)n < sizeof head ? -EBADMSG : check_head(&head, (size_t)n, got, cut, msg);
    if (r < 0)
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]), fds[i] = -1;
    return r;
}
