/* proxy_redirected.c — the connections network.transparent redirects to the proxy (CONN_TRANSPARENT):
 * the original destination (transparent.c), the name the client gives (the DNS stub's answer,
 * the TLS server name or the Host header), a connection made ahead to the original address
 * while the name is awaited when a rule allows that address by itself, and the decision by
 * name or, after TRANSPARENT_WAIT_MS, by address. Must never: take the client's name as more
 * than a claim (the connection goes where the name resolves, or to the stub's answer). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "proxy/audit_log.h"
#include "proxy/dns_stub.h"
#include "proxy/proxy_private.h"
#include "proxy/transparent.h"

/* ---- transparent connections ---- */

/* The connection made ahead of the name is not the one used: close it. */
static void spec_drop(struct conn *c)
{
    if (c->ufd >= 0) {
        ev_io_stop(c->px->loop, &c->uw);
        close(c->ufd);
        c->ufd = -1;
    }
    free(c->spec_d);
    c->spec_d = NULL;
    c->spec_up = false;
}

/* Decide c by name (NULL, or the address itself as an HTTP Host: by its original address). */
void proxy_transparent_decide(struct conn *c, const char *name)
{
    if (name && strcmp(name, c->orig_ip) == 0)
        name = NULL;
    snprintf(c->host, sizeof c->host, "%s", name ? name : c->orig_ip);
    c->pin_orig = !name;
    c->net_kind = NET_KIND_CONNECT;
    if (!name && c->spec_d) {
        /* decided by its address, which was decided (allowed) at accept: that decision is the
         * one audited, and the connection to it is made or under way */
        audit_log_decision(c->px->audit, c->net_kind, c->host, c->port, c->spec_d, LH_OK,
                           c->px->command);
        free(c->spec_d);
        c->spec_d = NULL;
        if (c->spec_up) {
            proxy_connected(c);
            return;
        }
        c->state = ST_CONNECTING;
        proxy_conn_update(c);
        return;
    }
    spec_drop(c); /* a name decides: it goes where the name resolves */
    proxy_decide_and_go(c);
}

/* A transparent connection without a DNS name to an address a rule allows by itself: connect
 * there now, while the client's first bytes (a TLS server name, a Host) are awaited. A
 * server that speaks first (SSH, SMTP) is then heard at once instead of after
 * TRANSPARENT_WAIT_MS, and a client's name costs no connect round trip after it. The address's
 * decision is kept, unaudited: it is audited only if it is the one used (no name came). */
static void spec_start(struct conn *c, const struct sockaddr_storage *dst)
{
    struct net_decision d;
    if (proxy_is_unspecified_address((const struct sockaddr *)dst) ||
        lh_network_decide(NET_KIND_CONNECT, c->orig_ip, c->port, c->px->command, &d) != LH_OK ||
        !d.allow || d.ask)
        return;
    socklen_t len =
        dst->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    int fd = socket(dst->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    int one = 1, err = 0;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)dst, len) < 0 && errno != EINPROGRESS) {
        close(fd);
        return;
    }
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    socklen_t elen = sizeof err;
    bool up = poll(&pfd, 1, 0) == 1;
    if (up && (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err)) {
        close(fd); /* refused at once: the usual path reports it */
        return;
    }
    if (ev_io_start(c->px->loop, &c->uw, fd, up ? EPOLLIN : EPOLLOUT, proxy_on_upstream, c) < 0) {
        close(fd);
        return;
    }
    c->ufd = fd;
    c->spec_up = up;
    c->spec_d = xmalloc(sizeof d);
    memcpy(c->spec_d, &d, sizeof d);
}

/* An event on the connection made ahead of the name (state HEAD): established, or failed (the
 * usual path decides and connects later), or the server spoke first: decided by its address. */
void proxy_spec_event(struct conn *c, uint32_t events)
{
    if (!c->spec_up) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
            spec_drop(c);
            return;
        }
        c->spec_up = true;
        proxy_conn_update(c);
        if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
            return;
    }
    proxy_transparent_decide(c, NULL);
}

/* The first bytes of a transparent connection the DNS stub gave no name for. */
void proxy_read_transparent_head(struct conn *c)
{
    size_t room = proxy_head_room(c, 0);
    ssize_t n = room ? read(c->cfd, c->head + c->head_len, room) : 0;
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        if (c->head_len == 0) {
            proxy_conn_close(c);
            return;
        }
        c->c_eof = n == 0;
    } else {
        c->head_len += (size_t)n;
    }
    char name[256];
    enum transparent_name r =
        transparent_name_from((const uint8_t *)c->head, c->head_len, name, sizeof name);
    if (r == TN_NEED_MORE && c->head_len < HEAD_MAX && !c->c_eof)
        return;
    proxy_transparent_decide(c, r == TN_FOUND ? name : NULL);
}

/* A new transparent connection: its destination, and its name from the DNS stub's answers. */
void proxy_transparent_start(struct conn *c)
{
    struct sockaddr_storage dst;
    if (transparent_original_dst(c->cfd, &dst, c->orig_ip, sizeof c->orig_ip, &c->port) < 0 ||
        c->port == 0) {
        proxy_conn_close(c);
        return;
    }
    /* Of the names the stub gave this address for, the first a rule allows on this port decides
     * (the others are only tried, not audited); none: the newest, refused as usual. */
    char names[8][254];
    size_t n = dns_stub_names_for(c->px->dns, (struct sockaddr *)&dst, names, 8), pick = 0;
    for (size_t i = 0; i < n && n > 1; i++) {
        struct net_decision d;
        if (lh_network_decide(NET_KIND_CONNECT, names[i], c->port, c->px->command, &d) == LH_OK &&
            d.allow) {
            pick = i;
            break;
        }
    }
    if (n > 0) {
        snprintf(c->host, sizeof c->host, "%.253s", names[pick]);
        c->pin_orig = true;
        c->net_kind = NET_KIND_CONNECT;
        proxy_decide_and_go(c);
        return;
    }
    spec_start(c, &dst);
    proxy_read_transparent_head(c);
}
