/* proxy.c — see proxy.h. One struct conn per client connection, moved through:
 *   HEAD       reading the HTTP request head or the SOCKS handshake (bounded, timed)
 *   ASKING     the policy said "ask": waiting for the owner's answer (or the timeout)
 *   RESOLVING  the destination was allowed; waiting for resolver.c
 *   CONNECTING a non-blocking connect to the next address
 *   RELAY      bytes both ways through two bounded buffers (allocated on first use): CONNECT and
 *              SOCKS tunnels
 *   HTTP       one absolute-form request and its response (http_exchange.c); when both ends
 *              allow it, the client connection returns to HEAD for its next request, which is
 *              decided anew (a new upstream connection per request)
 *   CLOSING    a last reply (403, 502, a SOCKS error) is flushed, then
 *   LINGER     the write side is shut and what the client still sends is read and dropped (for
 *              LINGER_MS or LINGER_MAX bytes at most) before the close: closing with unread
 *              bytes would send a reset, which can destroy the reply before the client read it
 * A connection is never freed inside a callback: it goes on the closed list and is freed by
 * proxy_after_round(), so later events of the same round never touch freed memory. The
 * questions to the owner and the answers kept are proxy_ask.c's (proxy_private.h). */
#include "proxy/proxy.h"
#include "proxy/proxy_private.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proxy/audit_log.h"
#include "proxy/dns_stub.h"
#include "proxy/http_exchange.h"
#include "base/clock.h"
#include "base/http_parse.h"
#include "base/log.h"
#include "policy/lua_host.h"
#include "proxy/resolver.h"
#include "base/shell_quote.h"
#include "proxy/socks5.h"
#include "proxy/splice_pipe.h"
#include "proxy/transparent.h"
#include "base/util.h"

#define RELAY_BUF (128 * 1024) /* per direction; large buffers are most of relay speed */
#define HEAD_MAX (48 * 1024)   /* request line + headers, above the parser's own limits */
#define HEAD_INITIAL 4096      /* most heads fit; the buffer grows up to HEAD_MAX */
#define IDLE_RELEASE_MS 2000   /* a tunnel idle this long gives its buffers back */
#define HEAD_TIMEOUT_MS 30000  /* a client must finish its request head in this time (408) */
#define CONNECT_TIMEOUT_MS 15000
#define MAX_CONNS 1024 /* per sandbox; more are refused at once */
#define SWEEP_MS 1000
#define TRANSPARENT_WAIT_MS \
    1000                        /* a transparent client without a DNS name has this long to
                                    * send a TLS server name or Host; then its address decides */
#define LINGER_MS 2000          /* after an error reply: the client's bytes are drained this long */
#define LINGER_MAX (256 * 1024) /* ... or up to this many (a 200 KB head line is drained whole) */

static void conn_update(struct conn *c);
static void conn_close(struct conn *c);
static void relay(struct conn *c, unsigned dirs);

/* ---- buffers ---- */

static size_t buf_space(const struct relay_buf *b)
{
    return b->data ? RELAY_BUF - b->off - b->len : RELAY_BUF;
}

static int buf_append(struct relay_buf *b, const char *p, size_t n)
{
    if (!b->data)
        b->data = xmalloc(RELAY_BUF);
    if (b->off && b->off + b->len + n > RELAY_BUF) {
        memmove(b->data, b->data + b->off, b->len);
        b->off = 0;
    }
    if (b->off + b->len + n > RELAY_BUF)
        return -1;
    memcpy(b->data + b->off + b->len, p, n);
    b->len += n;
    return 0;
}

static ssize_t buf_flush(struct relay_buf *b, int fd)
{
    if (b->len == 0)
        return 0;
    ssize_t n = send(fd, b->data + b->off, b->len, MSG_NOSIGNAL);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
    b->off += (size_t)n;
    b->len -= (size_t)n;
    if (b->len == 0)
        b->off = 0;
    return n;
}

static void buf_release(struct relay_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->off = b->len = 0;
}

/* Room for at least one more byte of head (up to HEAD_MAX): the number of bytes free. */
static size_t head_room(struct conn *c, size_t want)
{
    size_t need = c->head_len + (want ? want : 1);
    if (need > HEAD_MAX)
        need = HEAD_MAX;
    if (c->head_cap < need) {
        size_t cap = c->head_cap ? c->head_cap : HEAD_INITIAL;
        while (cap < need)
            cap *= 2;
        if (cap > HEAD_MAX)
            cap = HEAD_MAX;
        c->head = xrealloc(c->head, cap);
        c->head_cap = cap;
    }
    return c->head_cap - c->head_len;
}

/* ---- replies ---- */

static void reply_and_close(struct conn *c, const char *bytes, size_t n)
{
    (void)buf_append(&c->u2c, bytes, n);
    c->state = ST_CLOSING;
    if (c->job) {
        resolver_cancel(c->px->resolver, c->job);
        c->job = NULL;
    }
    if (c->ufd >= 0) {
        ev_io_stop(c->px->loop, &c->uw);
        close(c->ufd);
        c->ufd = -1;
    }
    conn_update(c);
}

static void http_error(struct conn *c, int status, const char *extra_headers, const char *body)
{
    char out[4096];
    size_t n = http_error_response(status, extra_headers, body, out, sizeof out);
    reply_and_close(c, out, n);
}

static void socks_error(struct conn *c, unsigned char code)
{
    unsigned char out[10];
    socks5_reply(code, out);
    reply_and_close(c, (const char *)out, sizeof out);
}

/* Remember a refused destination (once each; a full list keeps its first 64) and when. */
static void note_denied(struct proxy *px, const char *where)
{
    px->denials++;
    for (size_t i = 0; i < px->denied.len; i++) {
        if (strcmp(px->denied.items[i], where) == 0) {
            px->denied_at[i] = px->denials;
            return;
        }
    }
    if (px->denied.len < ARRAY_LEN(px->denied_at)) {
        px->denied_at[px->denied.len] = px->denials;
        str_list_push(&px->denied, where);
    }
}

/* A transparent client is refused with a reset: its protocol is unknown, and a reset is what
 * it would see from a firewall (connect() or its first read fails with ECONNRESET). */
static void transparent_reset(struct conn *c)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    conn_close(c);
}

void proxy_conn_refuse(struct conn *c, const struct net_decision *d)
{
    char where[300], noted[600];
    bool v6 = strchr(c->host, ':') != NULL; /* an IPv6 address: in brackets, as a rule writes it */
    snprintf(where, sizeof where, "%s%s%s:%u", v6 ? "[" : "", c->host, v6 ? "]" : "",
             (unsigned)c->port);
    /* A deny rule refused it (no flag would allow it): the refusal line names the rule. */
    if (d->rule[0] && !d->suggest[0] && !d->ask)
        snprintf(noted, sizeof noted, "%s\t%s", where, d->rule);
    else
        snprintf(noted, sizeof noted, "%s", where);
    note_denied(c->px, noted);
    if (c->kind == CONN_TRANSPARENT) {
        LOG_I("proxy", "refused a transparent connection to %s (%s): %s", where, c->orig_ip,
              d->suggest[0] ? d->suggest : d->reason);
        transparent_reset(c);
        return;
    }
    if (c->kind == CONN_SOCKS) {
        socks_error(c, 0x02);
        return;
    }
    char body[1024];
    snprintf(body, sizeof body,
             "cordon: the sandbox's network policy does not allow %s:%u (%s).\n"
             "To allow it, run the command again with %s\n",
             c->host, (unsigned)c->port, d->reason[0] ? d->reason : "not in the allowlist",
             d->suggest[0] ? d->suggest : "a matching --network-allow rule");
    http_error(c, 403, "X-Cordon-Error: blocked-by-policy\r\n", body);
}

/* ---- connecting out ---- */

static void start_connect(struct conn *c);

static void connect_failed(struct conn *c, int err)
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
        transparent_reset(c);
        return;
    }
    if (c->kind == CONN_SOCKS) {
        socks_error(c, err == ECONNREFUSED ? 0x05 : err == ENETUNREACH ? 0x03 : 0x04);
        return;
    }
    char body[512];
    snprintf(body, sizeof body, "cordon: cannot connect to %s:%u: %s\n", c->host, (unsigned)c->port,
             strerror(err));
    http_error(c, 502, NULL, body);
}

static void on_upstream(struct ev_loop *loop, struct ev_io *w, uint32_t events);
static void connected(struct conn *c);

/* The non-blocking connect is over: on to the next address, or relay. */
static void connect_result(struct conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err)
        connect_failed(c, err);
    else
        connected(c);
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
static bool is_unspecified_address(const struct sockaddr *sa)
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
    bool unspecified = is_unspecified_address(ai->ai_addr);
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
            connect_failed(c, EHOSTUNREACH);
        return;
    }
    c->next_addr = ai->ai_next;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        connect_failed(c, errno);
        return;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->ufd = fd;
    c->state = ST_CONNECTING;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
        connect_failed(c, errno);
        return;
    }
    /* To a local destination the handshake is over when connect() returns (or refused): go on
     * at once instead of a loop round later; otherwise wait for the socket to become writable. */
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    if (poll(&pfd, 1, 0) == 1) {
        connect_result(c);
        return;
    }
    if (ev_io_start(c->px->loop, &c->uw, fd, EPOLLOUT, on_upstream, c) < 0)
        connect_failed(c, errno);
}

/* The upstream connection is up: greet the client the way its protocol expects and relay. */
static void connected(struct conn *c)
{
    c->state = ST_RELAY;
    freeaddrinfo(c->addrs);
    c->addrs = c->next_addr = NULL;
    if (c->kind == CONN_TRANSPARENT) {
        /* what the client sent while its name was looked for goes first */
        if (c->head_len)
            (void)buf_append(&c->c2u, c->head, c->head_len);
        free(c->head);
        c->head = NULL;
        c->head_cap = c->head_len = 0;
    } else if (c->kind == CONN_SOCKS) {
        unsigned char ok[10];
        socks5_reply(0x00, ok);
        (void)buf_append(&c->u2c, (const char *)ok, sizeof ok);
    } else if (c->is_connect) {
        static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        (void)buf_append(&c->u2c, established, sizeof established - 1);
    } else {
        c->state = ST_HTTP;
        conn_update(c);
        return;
    }
    relay(c, 0); /* the greeting (and bytes sent with the head) go out now, not a round later */
}

static void on_resolved(void *data, struct addrinfo *res, int gai_err)
{
    struct conn *c = data;
    c->job = NULL;
    if (!res) {
        if (c->kind == CONN_TRANSPARENT) {
            transparent_reset(c);
            return;
        }
        if (c->kind == CONN_SOCKS) {
            socks_error(c, 0x04);
            return;
        }
        char body[512];
        snprintf(body, sizeof body, "cordon: cannot resolve %s: %s\n", c->host,
                 gai_strerror(gai_err));
        http_error(c, 502, NULL, body);
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
    conn_update(c);
}

static void decide_and_go(struct conn *c)
{
    struct net_decision d;
    enum lh_outcome o = lh_network_decide(c->net_kind, c->host, c->port, c->px->command, &d);
    if (o == LH_OK && proxy_ask_amend(c, &d)) {
        c->state = ST_ASKING;
        conn_update(c);
        return;
    }
    audit_log_decision(c->px->audit, c->net_kind, c->host, c->port, &d, o, c->px->command);
    if (o != LH_OK || !d.allow) {
        proxy_conn_refuse(c, &d);
        return;
    }
    proxy_conn_resolve(c);
}

/* The HTTP request head is complete in c->head: check it, queue what goes upstream. */
static void http_head_done(struct conn *c, const struct http_request *req)
{
    snprintf(c->host, sizeof c->host, "%s", req->host);
    c->port = req->port;
    c->is_connect = req->is_connect;
    c->net_kind = req->is_connect ? NET_KIND_CONNECT : NET_KIND_HTTP;
    if (!req->is_connect) {
        char up[HEAD_MAX + 256];
        size_t n = http_build_upstream(req, c->head, up, sizeof up);
        if (n == 0) {
            http_error(c, 431, NULL, "cordon: request head too large\n");
            return;
        }
        /* Each request gets its own upstream connection (decided anew): ask the origin to close
         * after its response; the client's connection stays open when both ends allow it. */
        static const char ka[] = "Connection: keep-alive\r\n\r\n";
        static const char cl[] = "Connection: close\r\n\r\n";
        if (n >= sizeof ka - 1 && memcmp(up + n - (sizeof ka - 1), ka, sizeof ka - 1) == 0) {
            n -= sizeof ka - 1;
            memcpy(up + n, cl, sizeof cl - 1);
            n += sizeof cl - 1;
        }
        (void)buf_append(&c->c2u, up, n);
        /* Of the bytes after the head, the body goes upstream; the rest is the next request. */
        hx_start(&c->hx, req, c->head);
        size_t extra = c->head_len - req->head_len;
        size_t body = hx_request_body(&c->hx, c->head + req->head_len, extra);
        if (c->hx.error) {
            http_error(c, 400, NULL, "cordon: malformed chunked request body\n");
            return;
        }
        (void)buf_append(&c->c2u, c->head + req->head_len, body);
        memmove(c->head, c->head + req->head_len + body, extra - body);
        c->head_len = extra - body;
        decide_and_go(c);
        return;
    }
    /* Bytes after a CONNECT head (a TLS ClientHello sent early) go through the tunnel. */
    if (c->head_len > req->head_len)
        (void)buf_append(&c->c2u, c->head + req->head_len, c->head_len - req->head_len);
    free(c->head);
    c->head = NULL;
    c->head_cap = c->head_len = 0;
    decide_and_go(c);
}

static void parse_http_head(struct conn *c)
{
    if (c->head_len == 0)
        return;
    struct http_request req;
    struct http_limits lim = http_limits_default();
    switch (http_parse_request(c->head, c->head_len, &lim, &req)) {
    case HTTP_PARSE_INCOMPLETE:
        if (c->head_len >= HEAD_MAX)
            http_error(c, 431, NULL, "cordon: request header fields too large\n");
        return;
    case HTTP_PARSE_ERROR:
        http_error(c, req.status, NULL, req.error);
        return;
    case HTTP_PARSE_OK:
        http_head_done(c, &req);
        return;
    }
}

static void read_http_head(struct conn *c)
{
    size_t room = head_room(c, HEAD_INITIAL);
    if (room == 0) {
        parse_http_head(c);
        return;
    }
    ssize_t n = read(c->cfd, c->head + c->head_len, room);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            conn_close(c);
        return;
    }
    c->head_len += (size_t)n;
    /* The parser re-reads the whole head: run it only when a line may have ended (or on the
     * first bytes, where it refuses binary at once), so a client sending one byte at a time
     * cannot make the head cost quadratic time. */
    if ((size_t)n == c->head_len || memchr(c->head + c->head_len - (size_t)n, '\n', (size_t)n) ||
        c->head_len >= HEAD_MAX)
        parse_http_head(c);
}

static void read_socks_head(struct conn *c)
{
    size_t room = head_room(c, HEAD_INITIAL);
    if (room == 0) {
        socks_error(c, SOCKS5_REP_GENERAL_FAILURE);
        return;
    }
    ssize_t n = read(c->cfd, c->head + c->head_len, room);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            conn_close(c);
        return;
    }
    c->head_len += (size_t)n;
    size_t used = 0;
    for (;;) {
        size_t consumed = 0;
        enum socks5_result st = socks5_feed(&c->socks, (const unsigned char *)c->head + used,
                                            c->head_len - used, &consumed);
        used += consumed;
        switch (st) {
        case SOCKS5_NEED_MORE:
            memmove(c->head, c->head + used, c->head_len - used);
            c->head_len -= used;
            return;
        case SOCKS5_GREETING_REPLY: {
            unsigned char out[2];
            socks5_greeting_reply(&c->socks, out);
            if (out[1] == 0xFF) {
                reply_and_close(c, (const char *)out, 2);
                return;
            }
            (void)buf_append(&c->u2c, (const char *)out, 2);
            conn_update(c);
            continue;
        }
        case SOCKS5_REQUEST:
            snprintf(c->host, sizeof c->host, "%s", c->socks.host);
            c->port = c->socks.port;
            c->net_kind = NET_KIND_SOCKS;
            if (c->head_len > used)
                (void)buf_append(&c->c2u, c->head + used, c->head_len - used);
            free(c->head);
            c->head = NULL;
            c->head_cap = c->head_len = 0;
            decide_and_go(c);
            return;
        case SOCKS5_ERROR:
            socks_error(c, c->socks.reply_code);
            return;
        }
    }
}

/* ---- relaying ---- */

/* One tunnel direction: first what is buffered (a greeting, bytes sent with the head), then
 * src -> pipe -> dst with splice. woken: an event of this direction came (src readable or dst
 * writable); without one only the buffer is flushed, so no splice is tried (and no pipe opened)
 * that can only answer EAGAIN. */
static int pump(struct relay_buf *b, struct splice_pipe *p, int src, bool *src_eof, int dst,
                bool woken)
{
    if (b->len > 0) {
        ssize_t w = buf_flush(b, dst);
        if (w < 0 && w != -EAGAIN)
            return (int)w;
        if (b->len > 0)
            return 0;
    }
    if (!woken && p->len == 0)
        return 0;
    return splice_pump(p, src, src_eof, dst);
}

static bool direction_drained(const struct relay_buf *b, const struct splice_pipe *p)
{
    return b->len == 0 && p->len == 0;
}

/* The directions an event concerns: c2u when the client is readable or upstream writable, u2c
 * the other way round; an error or hang-up concerns both. */
enum { DIR_C2U = 1, DIR_U2C = 2 };
#define EV_BROKEN (EPOLLERR | EPOLLHUP | EPOLLRDHUP)
static unsigned client_dirs(uint32_t ev)
{
    return (ev & EV_BROKEN ? DIR_C2U | DIR_U2C : 0) | (ev & EPOLLIN ? DIR_C2U : 0) |
           (ev & EPOLLOUT ? DIR_U2C : 0);
}
static unsigned upstream_dirs(uint32_t ev)
{
    return (ev & EV_BROKEN ? DIR_C2U | DIR_U2C : 0) | (ev & EPOLLIN ? DIR_U2C : 0) |
           (ev & EPOLLOUT ? DIR_C2U : 0);
}

static void relay(struct conn *c, unsigned dirs)
{
    if (pump(&c->c2u, &c->c2u_pipe, c->cfd, &c->c_eof, c->ufd, dirs & DIR_C2U) < 0 ||
        pump(&c->u2c, &c->u2c_pipe, c->ufd, &c->u_eof, c->cfd, dirs & DIR_U2C) < 0) {
        conn_close(c);
        return;
    }
    /* Half-close: once one side ended and its bytes are through, tell the other. */
    if (c->c_eof && direction_drained(&c->c2u, &c->c2u_pipe) && !c->u_shut) {
        shutdown(c->ufd, SHUT_WR);
        c->u_shut = true;
    }
    if (c->u_eof && direction_drained(&c->u2c, &c->u2c_pipe) && !c->c_shut) {
        shutdown(c->cfd, SHUT_WR);
        c->c_shut = true;
    }
    if (c->u_shut && c->c_shut) {
        conn_close(c);
        return;
    }
    c->active_ms = clock_mono_ms(); /* buffers stay while bytes flow; the sweep frees idle ones */
    conn_update(c);
}

/* ---- one HTTP exchange ---- */

static int emit_to_client(void *ctx, const char *p, size_t n)
{
    return buf_append(&((struct conn *)ctx)->u2c, p, n);
}

/* The response is through: back to HEAD for the client's next request, or close. */
static void exchange_finished(struct conn *c)
{
    ev_io_stop(c->px->loop, &c->uw);
    close(c->ufd);
    c->ufd = -1;
    if (!hx_keep_alive(&c->hx)) {
        shutdown(c->cfd, SHUT_WR);
        conn_close(c);
        return;
    }
    hx_free(&c->hx);
    buf_release(&c->c2u);
    buf_release(&c->u2c);
    c->state = ST_HEAD;
    c->started_ms = clock_mono_ms();
    c->c_eof = c->u_eof = false;
    conn_update(c);
    parse_http_head(c); /* a pipelined request may be waiting already */
}

static void http_exchange(struct conn *c)
{
    /* client -> upstream: this request's body only; what follows is the next request */
    if (!c->hx.req_done && !c->c_eof && buf_space(&c->c2u) > 0) {
        char tmp[16384];
        size_t room = buf_space(&c->c2u) < sizeof tmp ? buf_space(&c->c2u) : sizeof tmp;
        if (HEAD_MAX - c->head_len < room)
            room = HEAD_MAX - c->head_len;
        ssize_t n = room ? read(c->cfd, tmp, room) : -1;
        if (n == 0) {
            c->c_eof = true;
        } else if (n > 0) {
            size_t body = hx_request_body(&c->hx, tmp, (size_t)n);
            if (c->hx.error) {
                conn_close(c);
                return;
            }
            (void)buf_append(&c->c2u, tmp, body);
            (void)head_room(c, (size_t)n - body); /* room was bounded by HEAD_MAX above */
            memcpy(c->head + c->head_len, tmp + body, (size_t)n - body);
            c->head_len += (size_t)n - body;
        } else if (n < 0 && room && errno != EAGAIN && errno != EINTR) {
            conn_close(c);
            return;
        }
    }
    if (buf_flush(&c->c2u, c->ufd) < -EAGAIN) {
        conn_close(c);
        return;
    }
    /* upstream -> client: the response, its head rewritten, its end found */
    if (!c->hx.resp_done && buf_space(&c->u2c) >= HX_HEAD_MAX + 128) {
        char tmp[32768];
        ssize_t n = read(c->ufd, tmp, sizeof tmp);
        if (n == 0) {
            if (!hx_upstream_eof(&c->hx))
                c->hx.client_keep_alive = false; /* truncated: the client must see the close */
            c->hx.resp_done = true;
        } else if (n > 0) {
            if (hx_response_bytes(&c->hx, tmp, (size_t)n, emit_to_client, c) < 0) {
                if (!c->hx.head_done) {
                    char body[256];
                    snprintf(body, sizeof body, "cordon: bad response from %.120s: %s\n", c->host,
                             c->hx.error ? c->hx.error : "malformed");
                    http_error(c, 502, NULL, body);
                } else {
                    conn_close(c);
                }
                return;
            }
        } else if (errno != EAGAIN && errno != EINTR) {
            c->hx.client_keep_alive = false;
            c->hx.resp_done = true;
        }
    }
    if (buf_flush(&c->u2c, c->cfd) < -EAGAIN) {
        conn_close(c);
        return;
    }
    if (c->hx.resp_done && c->u2c.len == 0) {
        exchange_finished(c);
        return;
    }
    conn_update(c);
}

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
static void transparent_decide(struct conn *c, const char *name)
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
            connected(c);
            return;
        }
        c->state = ST_CONNECTING;
        conn_update(c);
        return;
    }
    spec_drop(c); /* a name decides: it goes where the name resolves */
    decide_and_go(c);
}

/* A transparent connection without a DNS name to an address a rule allows by itself: connect
 * there now, while the client's first bytes (a TLS server name, a Host) are awaited. A
 * server that speaks first (SSH, SMTP) is then heard at once instead of after
 * TRANSPARENT_WAIT_MS, and a client's name costs no connect round trip after it. The address's
 * decision is kept, unaudited: it is audited only if it is the one used (no name came). */
static void spec_start(struct conn *c, const struct sockaddr_storage *dst)
{
    struct net_decision d;
    if (is_unspecified_address((const struct sockaddr *)dst) ||
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
    if (ev_io_start(c->px->loop, &c->uw, fd, up ? EPOLLIN : EPOLLOUT, on_upstream, c) < 0) {
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
static void spec_event(struct conn *c, uint32_t events)
{
    if (!c->spec_up) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
            spec_drop(c);
            return;
        }
        c->spec_up = true;
        conn_update(c);
        if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
            return;
    }
    transparent_decide(c, NULL);
}

/* The first bytes of a transparent connection the DNS stub gave no name for. */
static void read_transparent_head(struct conn *c)
{
    size_t room = head_room(c, 0);
    ssize_t n = room ? read(c->cfd, c->head + c->head_len, room) : 0;
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        if (c->head_len == 0) {
            conn_close(c);
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
    transparent_decide(c, r == TN_FOUND ? name : NULL);
}

/* A new transparent connection: its destination, and its name from the DNS stub's answers. */
static void transparent_start(struct conn *c)
{
    struct sockaddr_storage dst;
    if (transparent_original_dst(c->cfd, &dst, c->orig_ip, sizeof c->orig_ip, &c->port) < 0 ||
        c->port == 0) {
        conn_close(c);
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
        decide_and_go(c);
        return;
    }
    spec_start(c, &dst);
    read_transparent_head(c);
}

/* ---- the lingering close after an error reply ---- */

/* Read and drop what the client still sends; close at its end of file, at LINGER_MAX bytes, or
 * (on the sweep) at linger_until_ms. */
static void linger_read(struct conn *c)
{
    char tmp[16384];
    for (;;) {
        ssize_t n = read(c->cfd, tmp, sizeof tmp);
        if (n > 0) {
            c->lingered += (size_t)n;
            if (c->lingered >= LINGER_MAX)
                break;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        break; /* end of file or an error: the client has what it will get */
    }
    conn_close(c);
}

/* The reply is written: shut the write side (the client sees the end after the reply) and keep
 * reading for a bounded time, so no reset races the reply. */
static void start_linger(struct conn *c)
{
    if (shutdown(c->cfd, SHUT_WR) < 0) {
        conn_close(c);
        return;
    }
    c->state = ST_LINGER;
    c->linger_until_ms = clock_mono_ms() + LINGER_MS;
    c->lingered = 0;
    conn_update(c);
    linger_read(c);
}

/* ---- events ---- */

static void on_client(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    struct conn *c = w->data;
    if (c->closed)
        return;
    switch (c->state) {
    case ST_HEAD:
        if (events & EPOLLOUT) { /* a SOCKS greeting reply waits */
            if (buf_flush(&c->u2c, c->cfd) < -EAGAIN) {
                conn_close(c);
                return;
            }
        }
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
            if (c->kind == CONN_HTTP)
                read_http_head(c);
            else if (c->kind == CONN_TRANSPARENT)
                read_transparent_head(c);
            else
                read_socks_head(c);
        }
        if (!c->closed)
            conn_update(c);
        return;
    case ST_ASKING:
    case ST_RESOLVING:
    case ST_CONNECTING:
        if (events & (EPOLLHUP | EPOLLERR))
            conn_close(c); /* the client gave up */
        return;
    case ST_RELAY:
        relay(c, client_dirs(events));
        return;
    case ST_HTTP:
        if ((events & (EPOLLHUP | EPOLLERR)) && c->u2c.len == 0 && !c->hx.resp_done) {
            conn_close(c); /* the client is gone */
            return;
        }
        http_exchange(c);
        return;
    case ST_CLOSING:
        if (buf_flush(&c->u2c, c->cfd) == -EAGAIN && c->u2c.len > 0)
            return;
        if (c->u2c.len > 0) {
            conn_close(c); /* the client is gone */
            return;
        }
        start_linger(c);
        return;
    case ST_LINGER:
        linger_read(c);
        return;
    }
}

static void on_upstream(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    struct conn *c = w->data;
    if (c->closed)
        return;
    if (c->state == ST_CONNECTING) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            connect_result(c);
        return;
    }
    if (c->state == ST_HEAD && c->spec_d) {
        spec_event(c, events);
        return;
    }
    if (c->state == ST_RELAY)
        relay(c, upstream_dirs(events));
    else if (c->state == ST_HTTP)
        http_exchange(c);
}

/* Register the events each side needs now. */
static void conn_update(struct conn *c)
{
    if (c->closed)
        return;
    struct ev_loop *loop = c->px->loop;
    uint32_t cev = 0, uev = 0;
    switch (c->state) {
    case ST_HEAD:
        cev = EPOLLIN | (c->u2c.len ? EPOLLOUT : 0);
        if (c->spec_d) /* transparent: the connection made ahead of the name */
            uev = c->spec_up ? EPOLLIN | EPOLLRDHUP : EPOLLOUT;
        break;
    case ST_ASKING:
    case ST_RESOLVING:
    case ST_CONNECTING:
        cev = EPOLLRDHUP;
        uev = EPOLLOUT;
        break;
    case ST_RELAY:
        cev = (!c->c_eof && c->c2u.len == 0 && !splice_pipe_full(&c->c2u_pipe) ? EPOLLIN : 0) |
              (direction_drained(&c->u2c, &c->u2c_pipe) ? 0 : EPOLLOUT);
        uev = (!c->u_eof && c->u2c.len == 0 && !splice_pipe_full(&c->u2c_pipe) ? EPOLLIN : 0) |
              (direction_drained(&c->c2u, &c->c2u_pipe) ? 0 : EPOLLOUT);
        break;
    case ST_HTTP:
        cev =
            (!c->hx.req_done && !c->c_eof && buf_space(&c->c2u) && c->head_len < HEAD_MAX ? EPOLLIN
                                                                                          : 0) |
            (c->u2c.len ? EPOLLOUT : 0);
        uev = (!c->hx.resp_done && buf_space(&c->u2c) >= HX_HEAD_MAX + 128 ? EPOLLIN : 0) |
              (c->c2u.len ? EPOLLOUT : 0);
        break;
    case ST_CLOSING:
        cev = EPOLLOUT;
        break;
    case ST_LINGER:
        cev = EPOLLIN | EPOLLRDHUP;
        break;
    }
    ev_io_set(loop, &c->cw, cev);
    if (c->ufd >= 0 && c->uw.active)
        ev_io_set(loop, &c->uw, uev);
    else if (c->ufd >= 0 && uev)
        ev_io_start(loop, &c->uw, c->ufd, uev, on_upstream, c);
}

static void conn_close(struct conn *c)
{
    if (c->closed)
        return;
    struct proxy *px = c->px;
    c->closed = true;
    ev_io_stop(px->loop, &c->cw);
    ev_io_stop(px->loop, &c->uw);
    close(c->cfd);
    if (c->ufd >= 0)
        close(c->ufd);
    if (c->job)
        resolver_cancel(px->resolver, c->job);
    if (c->addrs)
        freeaddrinfo(c->addrs);
    /* An empty pipe is kept for the next tunnel; one with bytes in it is closed, and the bytes
     * are dropped with the connection. */
    splice_pipe_release(&c->c2u_pipe);
    splice_pipe_release(&c->u2c_pipe);
    splice_pipe_close(&c->c2u_pipe);
    splice_pipe_close(&c->u2c_pipe);
    if (c->prev)
        c->prev->next = c->next;
    else
        px->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    px->n_conns--;
    c->next_closed = px->closed;
    px->closed = c;
}

static void accept_on(struct proxy *px, int lfd, enum conn_kind kind)
{
    for (int i = 0; i < 64; i++) { /* bounded per wake-up, so one listener cannot starve the loop */
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (px->n_conns >= MAX_CONNS) {
            LOG_W("proxy", "connection limit (%d) reached: refusing a new connection", MAX_CONNS);
            close(fd);
            continue;
        }
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = xcalloc(1, sizeof *c);
        c->px = px;
        c->kind = kind;
        c->state = ST_HEAD;
        c->cfd = fd;
        c->ufd = -1;
        c->head = NULL; /* allocated at the first read (head_room) */
        splice_pipe_init(&c->c2u_pipe);
        splice_pipe_init(&c->u2c_pipe);
        c->started_ms = clock_mono_ms();
        socks5_init(&c->socks);
        c->next = px->conns;
        if (px->conns)
            px->conns->prev = c;
        px->conns = c;
        px->n_conns++;
        if (ev_io_start(px->loop, &c->cw, fd, EPOLLIN, on_client, c) < 0) {
            conn_close(c);
            continue;
        }
        /* A client sends its request right after connecting: it is often here already. */
        if (kind == CONN_TRANSPARENT)
            transparent_start(c);
        else
            on_client(px->loop, &c->cw, EPOLLIN);
    }
}

static void on_http_listener(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    struct proxy *px = w->data;
    accept_on(px, px->http_fd, CONN_HTTP);
}

static void on_socks_listener(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    struct proxy *px = w->data;
    accept_on(px, px->socks_fd, CONN_SOCKS);
}

static void on_transparent_listener(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    struct proxy *px = w->data;
    accept_on(px, px->transparent_fd, CONN_TRANSPARENT);
}

static void on_resolver(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    resolver_dispatch(((struct proxy *)w->data)->resolver);
}

/* Slow or silent clients cannot hold a connection slot for ever while sending their head. */
static void on_sweep(struct ev_loop *loop, struct ev_timer *t)
{
    struct proxy *px = t->data;
    uint64_t now = clock_mono_ms();
    proxy_ask_expire(px, now);
    for (struct conn *c = px->conns, *next; c; c = next) {
        next = c->next;
        if (c->state == ST_HEAD && c->kind == CONN_TRANSPARENT) {
            /* a client that waits for the server (SSH, SMTP): decided by its address */
            if (now - c->started_ms > TRANSPARENT_WAIT_MS)
                transparent_decide(c, NULL);
        } else if (c->state == ST_HEAD && now - c->started_ms > HEAD_TIMEOUT_MS) {
            if (c->kind == CONN_HTTP)
                http_error(c, 408, NULL, "cordon: request head not received in time\n");
            else
                conn_close(c);
        } else if (c->state == ST_LINGER && now >= c->linger_until_ms) {
            conn_close(c);
        } else if (c->state == ST_CONNECTING &&
                   now - c->started_ms > HEAD_TIMEOUT_MS + CONNECT_TIMEOUT_MS) {
            connect_failed(c, ETIMEDOUT);
        } else if (c->state == ST_RELAY && now - c->active_ms > IDLE_RELEASE_MS) {
            /* An idle tunnel keeps no buffer: 1,000 held tunnels cost a few MiB. */
            if (c->c2u.len == 0 && c->c2u.data)
                buf_release(&c->c2u);
            if (c->u2c.len == 0 && c->u2c.data)
                buf_release(&c->u2c);
            splice_pipe_release(&c->c2u_pipe);
            splice_pipe_release(&c->u2c_pipe);
        }
    }
    ev_timer_start(loop, t, SWEEP_MS, on_sweep, px);
}

struct proxy *proxy_new(struct ev_loop *loop, int http_listen_fd, int socks_listen_fd,
                        char **command)
{
    struct proxy *px = xcalloc(1, sizeof *px);
    px->loop = loop;
    px->http_fd = http_listen_fd;
    px->socks_fd = socks_listen_fd;
    px->transparent_fd = -1;
    px->command = shell_join(command);
    px->resolver = resolver_new(2);
    px->audit = audit_log_open();
    if (!px->resolver)
        goto fail;
    fcntl(http_listen_fd, F_SETFL, O_NONBLOCK);
    fcntl(socks_listen_fd, F_SETFL, O_NONBLOCK);
    if (ev_io_start(loop, &px->http_w, http_listen_fd, EPOLLIN, on_http_listener, px) < 0 ||
        ev_io_start(loop, &px->socks_w, socks_listen_fd, EPOLLIN, on_socks_listener, px) < 0 ||
        ev_io_start(loop, &px->resolver_w, resolver_fd(px->resolver), EPOLLIN, on_resolver, px) < 0)
        goto fail;
    ev_timer_start(loop, &px->sweep, SWEEP_MS, on_sweep, px);
    return px;
fail:
    LOG_E("proxy", "cannot start: %s", strerror(errno));
    proxy_free(px);
    return NULL;
}

/* A name the resolver refused is reported like a refused destination: "NAME" alone (a rule
 * naming it, on any port, makes it answerable). */
static void dns_refused(void *ctx, const char *name)
{
    note_denied(ctx, name);
}

int proxy_attach_dns(struct proxy *px, int udp_fd, int tcp_fd)
{
    px->dns = dns_stub_new(px->loop, udp_fd, tcp_fd, px->resolver, px->audit, px->command,
                           dns_refused, px);
    return px->dns ? 0 : -1;
}

const struct str_list *proxy_denied(const struct proxy *px)
{
    return &px->denied;
}

uint64_t proxy_denial_mark(const struct proxy *px)
{
    return px->denials;
}

void proxy_denied_since(const struct proxy *px, uint64_t mark, struct str_list *out)
{
    for (size_t i = 0; i < px->denied.len; i++)
        if (px->denied_at[i] > mark)
            str_list_push(out, px->denied.items[i]);
}

void proxy_after_round(struct proxy *px)
{
    while (px->closed) {
        struct conn *c = px->closed;
        px->closed = c->next_closed;
        free(c->head);
        free(c->spec_d);
        hx_free(&c->hx);
        buf_release(&c->c2u);
        buf_release(&c->u2c);
        free(c);
    }
}

void proxy_free(struct proxy *px)
{
    if (!px)
        return;
    while (px->conns)
        conn_close(px->conns);
    proxy_after_round(px);
    ev_io_stop(px->loop, &px->http_w);
    ev_io_stop(px->loop, &px->socks_w);
    ev_io_stop(px->loop, &px->resolver_w);
    ev_io_stop(px->loop, &px->transparent_w);
    ev_timer_stop(px->loop, &px->sweep);
    if (px->transparent_fd >= 0)
        close(px->transparent_fd);
    close(px->http_fd);
    close(px->socks_fd);
    dns_stub_free(px->dns); /* before the resolver: it cancels its lookups */
    resolver_free(px->resolver);
    splice_pipe_drop_spares();
    audit_log_close(px->audit);
    proxy_ask_free(px);
    str_list_free(&px->denied);
    free(px->command);
    free(px);
}

int proxy_attach_transparent(struct proxy *px, int listen_fd)
{
    fcntl(listen_fd, F_SETFL, O_NONBLOCK);
    if (ev_io_start(px->loop, &px->transparent_w, listen_fd, EPOLLIN, on_transparent_listener, px) <
        0) {
        LOG_E("proxy", "cannot serve transparent connections: %s", strerror(errno));
        close(listen_fd);
        return -1;
    }
    px->transparent_fd = listen_fd;
    return 0;
}
