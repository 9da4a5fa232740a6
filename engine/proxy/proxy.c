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
 * connection's other parts (proxy_private.h): connecting out (proxy_connect.c), the buffers,
 * relay and HTTP exchange (proxy_relay.c), the connections network.transparent redirects
 * (proxy_redirected.c), the questions to the owner and the answers kept (proxy_ask.c). */
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

/* Room for at least one more byte of head (up to HEAD_MAX): the number of bytes free. */
size_t proxy_head_room(struct conn *c, size_t want)
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
    (void)proxy_buf_append(&c->u2c, bytes, n);
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
    proxy_conn_update(c);
}

void proxy_http_error(struct conn *c, int status, const char *extra_headers, const char *body)
{
    char out[4096];
    size_t n = http_error_response(status, extra_headers, body, out, sizeof out);
    reply_and_close(c, out, n);
}

void proxy_socks_error(struct conn *c, unsigned char code)
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
void proxy_transparent_reset(struct conn *c)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    proxy_conn_close(c);
}

void proxy_conn_refuse(struct conn *c, const struct net_decision *d)
{
    char where[300], noted[sizeof where + sizeof d->rule + sizeof d->suggest + 16];
    bool v6 = strchr(c->host, ':') != NULL; /* an IPv6 address: in brackets, as a rule writes it */
    snprintf(where, sizeof where, "%s%s%s:%u", v6 ? "[" : "", c->host, v6 ? "]" : "",
             (unsigned)c->port);
    /* "where\tRULE\tVIA\tFLAG": RULE when a deny rule refused it (no flag would allow it,
     * the refusal line names the rule), VIA "socks" when a SOCKS client asked (only a tcp://
     * rule allows that, so the suggestion must name one), FLAG the one that would allow it
     * when the decision named one (for a name whose answer is a special address, a rule for
     * that address: one for the name is there already); any may be empty. */
    bool deny_rule = d->rule[0] && !d->suggest[0] && !d->ask;
    snprintf(noted, sizeof noted, "%s\t%s\t%s\t%s", where, deny_rule ? d->rule : "",
             c->kind == CONN_SOCKS ? "socks" : "", deny_rule ? "" : d->suggest);
    note_denied(c->px, noted);
    if (c->kind == CONN_TRANSPARENT) {
        LOG_I("proxy", "refused a transparent connection to %s (%s): %s", where, c->orig_ip,
              d->suggest[0] ? d->suggest : d->reason);
        proxy_transparent_reset(c);
        return;
    }
    if (c->kind == CONN_SOCKS) {
        proxy_socks_error(c, 0x02);
        return;
    }
    char body[1024];
    snprintf(body, sizeof body,
             "cordon: the sandbox's network policy does not allow %s:%u (%s).\n"
             "To allow it, run the command again with %s\n",
             c->host, (unsigned)c->port, d->reason[0] ? d->reason : "not in the allowlist",
             d->suggest[0] ? d->suggest : "a matching --network-allow rule");
    proxy_http_error(c, 403, "X-Cordon-Error: blocked-by-policy\r\n", body);
}

void proxy_decide_and_go(struct conn *c)
{
    struct net_decision d;
    c->grant = 0; /* each request of a kept-alive connection is decided anew */
    enum lh_outcome o = lh_network_decide(c->net_kind, c->host, c->port, c->px->command, &d);
    if (o == LH_OK && proxy_ask_amend(c, &d)) {
        c->state = ST_ASKING;
        proxy_conn_update(c);
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
            proxy_http_error(c, 431, NULL, "cordon: request head too large\n");
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
        (void)proxy_buf_append(&c->c2u, up, n);
        /* Of the bytes after the head, the body goes upstream; the rest is the next request. */
        hx_start(&c->hx, req, c->head);
        size_t extra = c->head_len - req->head_len;
        size_t body = hx_request_body(&c->hx, c->head + req->head_len, extra);
        if (c->hx.error) {
            proxy_http_error(c, 400, NULL, "cordon: malformed chunked request body\n");
            return;
        }
        (void)proxy_buf_append(&c->c2u, c->head + req->head_len, body);
        memmove(c->head, c->head + req->head_len + body, extra - body);
        c->head_len = extra - body;
        proxy_decide_and_go(c);
        return;
    }
    /* Bytes after a CONNECT head (a TLS ClientHello sent early) go through the tunnel, and so
     * does what the credentials' rewriter gave and was not read yet: a tunnel is spliced from
     * the socket, not read through the rewriter (it passes a tunnel as it is). */
    if (c->head_len > req->head_len)
        (void)proxy_buf_append(&c->c2u, c->head + req->head_len, c->head_len - req->head_len);
    if (c->cred) {
        (void)proxy_buf_append(&c->c2u, c->cred_out.p + c->cred_off, c->cred_out.len - c->cred_off);
        cred_rewrite_free(c->cred);
        c->cred = NULL;
    }
    free(c->head);
    c->head = NULL;
    c->head_cap = c->head_len = 0;
    proxy_decide_and_go(c);
}

void proxy_parse_http_head(struct conn *c)
{
    if (c->head_len == 0)
        return;
    struct http_request req;
    struct http_limits lim = http_limits_default();
    switch (http_parse_request(c->head, c->head_len, &lim, &req)) {
    case HTTP_PARSE_INCOMPLETE:
        if (c->head_len >= HEAD_MAX)
            proxy_http_error(c, 431, NULL, "cordon: request header fields too large\n");
        return;
    case HTTP_PARSE_ERROR:
        proxy_http_error(c, req.status, NULL, req.error);
        return;
    case HTTP_PARSE_OK:
        http_head_done(c, &req);
        return;
    }
}

/* ---- declared credentials (cred_rewrite.h) ---- */

static void on_client(struct ev_loop *loop, struct ev_io *w, uint32_t events);

static void on_cred_use(void *ctx, const char *name, const char *host, int port)
{
    struct conn *c = ctx;
    audit_log_event(c->px->audit, "credential", host, (unsigned)port, true, name,
                    "the credential's value was put in for its placeholder", c->px->command);
}

static void on_cred_wake(struct ev_loop *loop, struct ev_timer *t)
{
    struct conn *c = t->data;
    if (!c->closed)
        on_client(loop, &c->cw, EPOLLIN);
}

/* The rewriter refused the stream: one line in the log and the audit log, a 403 naming the
 * credential and the destination when no response has begun, else the connection closes. */
static void cred_refused(struct conn *c, const char *why)
{
    LOG_W("proxy", "refused a request: %s", why);
    int port;
    const char *host = cred_rewrite_destination(c->cred, &port);
    audit_log_event(c->px->audit, "credential", host[0] ? host : "-", (unsigned)port, false, NULL,
                    why, c->px->command);
    if (c->state == ST_HEAD || (c->state == ST_HTTP && !c->hx.head_done && c->u2c.len == 0)) {
        char body[512];
        snprintf(body, sizeof body, "cordon: %s\n", why);
        proxy_http_error(c, 403, "X-Cordon-Error: credential-refused\r\n", body);
    } else {
        proxy_conn_close(c);
    }
}

ssize_t proxy_client_read(struct conn *c, char *buf, size_t room)
{
    if (!c->cred)
        return read(c->cfd, buf, room);
    if (c->cred_off == c->cred_out.len) {
        c->cred_off = c->cred_out.len = 0;
        if (c->cred_out.cap > 256 * 1024) { /* a body read whole went: give its room back */
            free(c->cred_out.p);
            c->cred_out = (struct cred_out){0};
        }
        if (c->cred_eof)
            return 0;
        char raw[16384];
        ssize_t n = read(c->cfd, raw, sizeof raw);
        if (n <= 0) {
            if (n == 0)
                c->cred_eof = true;
            return n;
        }
        char why[400];
        if (cred_rewrite_feed(c->cred, raw, (size_t)n, &c->cred_out, why, sizeof why) < 0) {
            cred_refused(c, why);
            errno = EACCES;
            return -1;
        }
        if (c->cred_out.len == 0) { /* held back (a body read whole, a split placeholder) */
            errno = EAGAIN;
            return -1;
        }
    }
    size_t k = c->cred_out.len - c->cred_off;
    if (k > room)
        k = room;
    memcpy(buf, c->cred_out.p + c->cred_off, k);
    c->cred_off += k;
    return (ssize_t)k;
}

/* Bytes the rewriter gave that the proxy has not taken: come back for them at once when the
 * connection's state reads the client (the socket itself may have nothing more to say). */
static void cred_wake_if_pending(struct conn *c, uint32_t cev)
{
    if (c->cred && (cev & EPOLLIN) && c->cred_off < c->cred_out.len && !c->cred_wake.active)
        ev_timer_start(c->px->loop, &c->cred_wake, 0, on_cred_wake, c);
}

void proxy_set_credentials(struct proxy *px, struct cred_set *set)
{
    tls_terminator_free(px->tls); /* its threads read the set */
    px->tls = NULL;
    cred_set_free(px->creds);
    px->creds = set;
}

/* The terminator's reports, from its connections' threads: one write(2) of a whole line each
 * (audit_log.c), to a log the handoff's own "tls" line opened on the loop before. */
static void on_tls_cred_use(void *ctx, const char *name, const char *host, int port)
{
    struct proxy *px = ctx;
    audit_log_event(px->audit, "credential", host, (unsigned)port, true, name,
                    "the credential's value was put in for its placeholder (TLS terminated)",
                    px->command);
}

static void on_tls_refused(void *ctx, const char *host, unsigned port, const char *why)
{
    struct proxy *px = ctx;
    audit_log_event(px->audit, "tls", host, port, false, NULL, why, px->command);
}

void proxy_set_tls(struct proxy *px, struct tls_terminator *t)
{
    tls_terminator_free(px->tls);
    px->tls = t;
    if (t) {
        struct tls_term_hooks hooks = {
            .ctx = px, .used = on_tls_cred_use, .refused = on_tls_refused};
        tls_terminator_set_hooks(t, &hooks);
    }
}

static void read_http_head(struct conn *c)
{
    size_t room = proxy_head_room(c, HEAD_INITIAL);
    if (room == 0) {
        proxy_parse_http_head(c);
        return;
    }
    ssize_t n = proxy_client_read(c, c->head + c->head_len, room);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR && errno != EACCES))
            proxy_conn_close(c);
        return;
    }
    c->head_len += (size_t)n;
    /* The parser re-reads the whole head: run it only when a line may have ended (or on the
     * first bytes, where it refuses binary at once), so a client sending one byte at a time
     * cannot make the head cost quadratic time. */
    if ((size_t)n == c->head_len || memchr(c->head + c->head_len - (size_t)n, '\n', (size_t)n) ||
        c->head_len >= HEAD_MAX)
        proxy_parse_http_head(c);
}

static void read_socks_head(struct conn *c)
{
    size_t room = proxy_head_room(c, HEAD_INITIAL);
    if (room == 0) {
        proxy_socks_error(c, SOCKS5_REP_GENERAL_FAILURE);
        return;
    }
    ssize_t n = read(c->cfd, c->head + c->head_len, room);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            proxy_conn_close(c);
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
            (void)proxy_buf_append(&c->u2c, (const char *)out, 2);
            proxy_conn_update(c);
            continue;
        }
        case SOCKS5_REQUEST:
            snprintf(c->host, sizeof c->host, "%s", c->socks.host);
            c->port = c->socks.port;
            c->net_kind = NET_KIND_SOCKS;
            if (c->head_len > used)
                (void)proxy_buf_append(&c->c2u, c->head + used, c->head_len - used);
            free(c->head);
            c->head = NULL;
            c->head_cap = c->head_len = 0;
            proxy_decide_and_go(c);
            return;
        case SOCKS5_ERROR:
            proxy_socks_error(c, c->socks.reply_code);
            return;
        }
    }
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
    proxy_conn_close(c);
}

/* The reply is written: shut the write side (the client sees the end after the reply) and keep
 * reading for a bounded time, so no reset races the reply. */
static void start_linger(struct conn *c)
{
    if (shutdown(c->cfd, SHUT_WR) < 0) {
        proxy_conn_close(c);
        return;
    }
    c->state = ST_LINGER;
    c->linger_until_ms = clock_mono_ms() + LINGER_MS;
    c->lingered = 0;
    proxy_conn_update(c);
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
            if (proxy_buf_flush(&c->u2c, c->cfd) < -EAGAIN) {
                proxy_conn_close(c);
                return;
            }
        }
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
            if (c->kind == CONN_HTTP)
                read_http_head(c);
            else if (c->kind == CONN_TRANSPARENT)
                proxy_read_transparent_head(c);
            else
                read_socks_head(c);
        }
        if (!c->closed)
            proxy_conn_update(c);
        return;
    case ST_ASKING:
    case ST_RESOLVING:
    case ST_CONNECTING:
        if (events & (EPOLLHUP | EPOLLERR))
            proxy_conn_close(c); /* the client gave up */
        return;
    case ST_RELAY:
        proxy_relay(c, proxy_client_dirs(events));
        return;
    case ST_HTTP:
        if ((events & (EPOLLHUP | EPOLLERR)) && c->u2c.len == 0 && !c->hx.resp_done) {
            proxy_conn_close(c); /* the client is gone */
            return;
        }
        proxy_http_exchange(c);
        return;
    case ST_CLOSING:
        if (proxy_buf_flush(&c->u2c, c->cfd) == -EAGAIN && c->u2c.len > 0)
            return;
        if (c->u2c.len > 0) {
            proxy_conn_close(c); /* the client is gone */
            return;
        }
        start_linger(c);
        return;
    case ST_LINGER:
        linger_read(c);
        return;
    }
}

void proxy_on_upstream(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    struct conn *c = w->data;
    if (c->closed)
        return;
    if (c->state == ST_CONNECTING) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            proxy_connect_result(c);
        return;
    }
    if (c->state == ST_HEAD && c->spec_d) {
        proxy_spec_event(c, events);
        return;
    }
    if (c->state == ST_RELAY)
        proxy_relay(c, proxy_upstream_dirs(events));
    else if (c->state == ST_HTTP)
        proxy_http_exchange(c);
}

/* Register the events each side needs now. */
void proxy_conn_update(struct conn *c)
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
              (proxy_direction_drained(&c->u2c, &c->u2c_pipe) ? 0 : EPOLLOUT);
        uev = (!c->u_eof && c->u2c.len == 0 && !splice_pipe_full(&c->u2c_pipe) ? EPOLLIN : 0) |
              (proxy_direction_drained(&c->c2u, &c->c2u_pipe) ? 0 : EPOLLOUT);
        break;
    case ST_HTTP:
        cev = (!c->hx.req_done && !c->c_eof && proxy_buf_space(&c->c2u) && c->head_len < HEAD_MAX
                   ? EPOLLIN
                   : 0) |
              (c->u2c.len ? EPOLLOUT : 0);
        uev = (!c->hx.resp_done && proxy_buf_space(&c->u2c) >= HX_HEAD_MAX + 128 ? EPOLLIN : 0) |
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
    cred_wake_if_pending(c, cev);
    if (c->ufd >= 0 && c->uw.active)
        ev_io_set(loop, &c->uw, uev);
    else if (c->ufd >= 0 && uev)
        ev_io_start(loop, &c->uw, c->ufd, uev, proxy_on_upstream, c);
}

void proxy_conn_close(struct conn *c)
{
    if (c->closed)
        return;
    struct proxy *px = c->px;
    c->closed = true;
    ev_timer_stop(px->loop, &c->cred_wake);
    ev_io_stop(px->loop, &c->cw);
    ev_io_stop(px->loop, &c->uw);
    if (c->cfd >= 0)
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
        if (kind == CONN_HTTP && px->creds && cred_set_count(px->creds) > 0) {
            c->cred = cred_rewrite_new(px->creds, NULL, 0);
            if (!c->cred) {
                LOG_W("proxy", "out of memory: refusing a new connection");
                close(fd);
                free(c);
                continue;
            }
            cred_rewrite_on_use(c->cred, on_cred_use, c);
        }
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
            proxy_conn_close(c);
            continue;
        }
        /* A client sends its request right after connecting: it is often here already. */
        if (kind == CONN_TRANSPARENT)
            proxy_transparent_start(c);
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
                proxy_transparent_decide(c, NULL);
        } else if (c->state == ST_HEAD && now - c->started_ms > HEAD_TIMEOUT_MS) {
            if (c->kind == CONN_HTTP)
                proxy_http_error(c, 408, NULL, "cordon: request head not received in time\n");
            else
                proxy_conn_close(c);
        } else if (c->state == ST_LINGER && now >= c->linger_until_ms) {
            proxy_conn_close(c);
        } else if (c->state == ST_CONNECTING &&
                   now - c->started_ms > HEAD_TIMEOUT_MS + CONNECT_TIMEOUT_MS) {
            proxy_connect_failed(c, ETIMEDOUT);
        } else if (c->state == ST_RELAY && now - c->active_ms > IDLE_RELEASE_MS) {
            /* An idle tunnel keeps no buffer: 1,000 held tunnels cost a few MiB. */
            if (c->c2u.len == 0 && c->c2u.data)
                proxy_buf_release(&c->c2u);
            if (c->u2c.len == 0 && c->u2c.data)
                proxy_buf_release(&c->u2c);
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
    dns_stub_set_granted(px->dns, proxy_name_granted);
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
        cred_rewrite_free(c->cred);
        cred_scan_free(c->scan);
        free(c->cred_out.p);
        proxy_buf_release(&c->c2u);
        proxy_buf_release(&c->u2c);
        free(c);
    }
}

void proxy_free(struct proxy *px)
{
    if (!px)
        return;
    while (px->conns)
        proxy_conn_close(px->conns);
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
    tls_terminator_free(px->tls); /* first: its threads read the credentials */
    cred_set_free(px->creds);
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
