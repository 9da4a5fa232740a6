/* proxy_connect.c — a connection's way out, once the policy allowed it: its destination resolved
 * (an IP literal at once, a name by resolver.c off the loop), each address checked (no special
 * address unless a rule named it), and a non-blocking connect to each in turn until one answers;
 * then the relay, the HTTP exchange, or the SOCKS success reply. The only code of cordon that
 * connects out. Must never: connect to an address the decision did not permit. */
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
#include "proxy/proxy_private.h"
#include "proxy/resolver.h"

/* ---- connecting out ---- */

static void start_connect(struct conn *c);

void proxy_connect_failed(struct conn *c, int err)
{
    if (c->ufd >= 0) {
        ev_io_stop(c->px->loop, &c->uw);
        close(c->ufd);
        c->ufd = -1;
    }
    if (c->next_addr) {
        start_connect(c);
        return;
    }
    if (c->kind == CONN_TRANSPARENT) {
        proxy_transparent_reset(c);
        return;
    }
    if (c->kind == CONN_SOCKS) {
        proxy_socks_error(c, err == ECONNREFUSED ? 0x05 : err == ENETUNREACH ? 0x03 : 0x04);
        return;
    }
    char body[512];
    snprintf(body, sizeof body, "cordon: cannot connect to %s:%u: %s\n", c->host, (unsigned)c->port,
             strerror(err));
    proxy_http_error(c, 502, NULL, body);
}

/* The non-blocking connect is over: on to the next address, or relay. */
void proxy_connect_result(struct conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err)
        proxy_connect_failed(c, err);
    else
        proxy_connected(c);
}

/* Is addr one a name must not lead to unless that address itself is allowed: loopback (the
 * host's own services), link-local (cloud metadata), unspecified, multicast? Otherwise a rule
 * such as '*.example.com' plus a DNS answer of 127.0.0.1 would reach the host's loopback. */
static bool is_special_address(const struct sockaddr *sa)
{
    const unsigned char *b;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a6) || IN6_IS_ADDR_UNSPECIFIED(a6) || IN6_IS_ADDR_LINKLOCAL(a6) ||
            IN6_IS_ADDR_MULTICAST(a6))
            return true;
        if (!IN6_IS_ADDR_V4MAPPED(a6))
            return false;
        b = a6->s6_addr + 12;
    } else if (sa->sa_family == AF_INET) {
        b = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
    } else {
        return true;
    }
    return b[0] == 127 || b[0] == 0 || (b[0] == 169 && b[1] == 254) || b[0] >= 224;
}

/* Is addr the unspecified address (0.0.0.0, ::, ::ffff:0.0.0.0)? A connect() to it reaches the
 * connecting host's own services (Linux treats it as a local address), so the proxy never
 * connects there, whatever the rules or a policy layer say. */
bool proxy_is_unspecified_address(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (sa->sa_family != AF_INET6)
        return false;
    const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    static const unsigned char zero4[4];
    return IN6_IS_ADDR_UNSPECIFIED(a6) ||
           (IN6_IS_ADDR_V4MAPPED(a6) && memcmp(a6->s6_addr + 12, zero4, 4) == 0);
}

static bool host_is_ip_literal(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/* May the connection go to this resolved address? Never to the unspecified address (refused
 * and audited here: the decision that allowed the host did not see the address); a name's
 * other special addresses need a rule of their own (decided, and audited, like any
 * destination). */
static bool address_permitted(struct conn *c, const struct addrinfo *ai, struct net_decision *d)
{
    bool unspecified = proxy_is_unspecified_address(ai->ai_addr);
    if (!unspecified && (host_is_ip_literal(c->host) || !is_special_address(ai->ai_addr)))
        return true;
    char ip[INET6_ADDRSTRLEN] = "";
    const void *src = ai->ai_family == AF_INET6
                          ? (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr
                          : (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
    inet_ntop(ai->ai_family, src, ip, sizeof ip);
    if (unspecified) {
        memset(d, 0, sizeof *d);
        if (strcmp(c->host, ip) == 0)
            snprintf(d->reason, sizeof d->reason,
                     "%s is the unspecified address, which reaches the host's "
                     "own services; the proxy never connects to it",
                     ip);
        else
            snprintf(d->reason, sizeof d->reason,
                     "%.100s resolves to %s, the unspecified address, which reaches the "
                     "host's own services; the proxy never connects to it",
                     c->host, ip);
        audit_log_decision(c->px->audit, c->net_kind, ip, c->port, d, LH_OK, c->px->command);
        return false;
    }
    enum lh_outcome o = lh_network_decide(c->net_kind, ip, c->port, c->px->command, d);
    audit_log_decision(c->px->audit, c->net_kind, ip, c->port, d, o, c->px->command);
    if (o == LH_OK && d->allow)
        return true;
    snprintf(d->reason, sizeof d->reason,
             "%.120s resolves to %s, a loopback, link-local or multicast "
             "address, which needs a rule of its own",
             c->host, ip);
    bool v6 = ai->ai_family == AF_INET6;
    snprintf(d->suggest, sizeof d->suggest, "--network-allow %s%s%s%s:%u",
             c->net_kind == NET_KIND_SOCKS ? "tcp://" : "", v6 ? "[" : "", ip, v6 ? "]" : "",
             (unsigned)c->port);
    return false;
}

static void start_connect(struct conn *c)
{
    struct addrinfo *ai = c->next_addr;
    struct net_decision refused;
    bool any_refused = false;
    while (ai && !address_permitted(c, ai, &refused)) {
        any_refused = true;
        ai = ai->ai_next;
    }
    if (!ai) {
        c->next_addr = NULL;
        if (any_refused)
            proxy_conn_refuse(c, &refused);
        else
            proxy_connect_failed(c, EHOSTUNREACH);
        return;
    }
    c->next_addr = ai->ai_next;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        proxy_connect_failed(c, errno);
        return;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->ufd = fd;
    c->state = ST_CONNECTING;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
        proxy_connect_failed(c, errno);
        return;
    }
    /* To a local destination the handshake is over when connect() returns (or refused): go on
     * at once instead of a loop round later; otherwise wait for the socket to become writable. */
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    if (poll(&pfd, 1, 0) == 1) {
        proxy_connect_result(c);
        return;
    }
    if (ev_io_start(c->px->loop, &c->uw, fd, EPOLLOUT, proxy_on_upstream, c) < 0)
        proxy_connect_failed(c, errno);
}

/* A CONNECT (HTTP or SOCKS), or a network.transparent connection that speaks TLS, to a host a
 * declared credential may go to: TLS termination takes both sockets and what the client sent
 * already (tls_terminate.h), and this connection is done with. false: relay as a tunnel. */
static bool hand_to_tls(struct conn *c)
{
    struct proxy *px = c->px;
    if (!px->tls || !px->creds || (c->kind == CONN_HTTP && !c->is_connect) ||
        !cred_set_matches_host(px->creds, c->host, (int)c->port))
        return false;
    const char *pre = c->c2u.data ? c->c2u.data + c->c2u.off : NULL;
    size_t prelen = c->c2u.len;
    enum tls_greeting greeting = c->kind == CONN_SOCKS ? TLS_GREET_SOCKS : TLS_GREET_HTTP;
    if (c->kind == CONN_TRANSPARENT) {
        /* a transparent client spoke first: TLS (a handshake record) or not at all yet (the
         * terminator then waits for its first byte) is terminated; anything else (plain HTTP
         * on a credential's host) is relayed here */
        pre = c->head;
        prelen = c->head_len;
        greeting = TLS_GREET_NONE;
        if (prelen && (unsigned char)pre[0] != 0x16)
            return false;
    }
    audit_log_event(px->audit, "tls", c->host, c->port, true, NULL,
                    "TLS terminated: a credential's host", px->command);
    char host[sizeof c->host];
    memcpy(host, c->host, sizeof host);
    unsigned port = c->port;
    int cfd = c->cfd, ufd = c->ufd;
    ev_io_stop(px->loop, &c->cw);
    ev_io_stop(px->loop, &c->uw);
    c->cfd = c->ufd = -1; /* the terminator's now */
    int r = tls_terminate_start(px->tls, cfd, ufd, host, port, greeting, pre, prelen);
    proxy_conn_close(c);
    if (r < 0)
        LOG_W("proxy", "%s:%u: no room for one more TLS-terminated connection: refused", host,
              port);
    return true;
}

/* The upstream connection is up: greet the client the way its protocol expects and relay. */
void proxy_connected(struct conn *c)
{
    c->state = ST_RELAY;
    freeaddrinfo(c->addrs);
    c->addrs = c->next_addr = NULL;
    if (hand_to_tls(c))
        return;
    if (c->kind == CONN_TRANSPARENT) {
        /* what the client sent while its name was looked for goes first */
        if (c->head_len)
            (void)proxy_buf_append(&c->c2u, c->head, c->head_len);
        free(c->head);
        c->head = NULL;
        c->head_cap = c->head_len = 0;
    } else if (c->kind == CONN_SOCKS) {
        unsigned char ok[10];
        socks5_reply(0x00, ok);
        (void)proxy_buf_append(&c->u2c, (const char *)ok, sizeof ok);
    } else if (c->is_connect) {
        static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        (void)proxy_buf_append(&c->u2c, established, sizeof established - 1);
    } else {
        c->state = ST_HTTP;
        proxy_conn_update(c);
        return;
    }
    if (!proxy_relay_scan_start(c))
        return; /* a placeholder in what the client sent already: refused */
    proxy_relay(c,
                0); /* the greeting (and bytes sent with the head) go out now, not a round later */
}

static void on_resolved(void *data, struct addrinfo *res, int gai_err)
{
    struct conn *c = data;
    c->job = NULL;
    if (!res) {
        if (c->kind == CONN_TRANSPARENT) {
            proxy_transparent_reset(c);
            return;
        }
        if (c->kind == CONN_SOCKS) {
            proxy_socks_error(c, 0x04);
            return;
        }
        char body[512];
        snprintf(body, sizeof body, "cordon: cannot resolve %s: %s\n", c->host,
                 gai_strerror(gai_err));
        proxy_http_error(c, 502, NULL, body);
        return;
    }
    c->addrs = c->next_addr = res;
    start_connect(c);
}

/* ---- deciding ---- */

void proxy_conn_resolve(struct conn *c)
{
    /* An IP literal needs no resolver round trip: connect at once. */
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)c->port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST}, *res = NULL;
    /* A transparent connection named by the DNS stub goes where the client was going: an
     * address the stub gave for that name. One named by its TLS server name or Host goes where
     * the name resolves (the claim could be anything; the address could be anywhere). */
    const char *target = c->kind == CONN_TRANSPARENT && c->pin_orig ? c->orig_ip : c->host;
    if (getaddrinfo(target, port, &hints, &res) == 0) {
        c->addrs = c->next_addr = res;
        start_connect(c);
        return;
    }
    c->state = ST_RESOLVING;
    c->job = resolver_lookup(c->px->resolver, c->host, c->port, on_resolved, c);
    proxy_conn_update(c);
}
