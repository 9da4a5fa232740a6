/* proxy_relay.c — moving a connection's bytes: the two bounded buffers of a connection, the
 * tunnel's relay both ways (buffered bytes first, then splice through a pipe, half-closes passed
 * on; with declared credentials the client's side is read and looked through for their
 * placeholders instead of spliced, cred_scan.h), and one HTTP exchange (http_exchange.c) with
 * the client's connection back to HEAD for its next request when both ends allow it. Must
 * never: free a connection (it is closed through proxy_conn_close, freed after the loop's
 * round). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/http_parse.h"
#include "base/log.h"
#include "proxy/audit_log.h"
#include "proxy/proxy_private.h"

/* ---- buffers ---- */

size_t proxy_buf_space(const struct relay_buf *b)
{
    return b->data ? RELAY_BUF - b->off - b->len : RELAY_BUF;
}

int proxy_buf_append(struct relay_buf *b, const char *p, size_t n)
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

ssize_t proxy_buf_flush(struct relay_buf *b, int fd)
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

void proxy_buf_release(struct relay_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->off = b->len = 0;
}

/* ---- relaying ---- */

/* A placeholder of credential k in the client's side of a tunnel to a destination it may not
 * reach: one line in the log and the audit log, then both sides close at once with a reset (the
 * bytes holding its end are never sent). When the client began an HTTP request and the server
 * has said nothing yet, the client is answered 403 with the same line instead of a reset (it
 * reads it as the answer to its request, as from the HTTP listener). */
static void scan_refused(struct conn *c, long k)
{
    char why[400];
    cred_scan_refusal(c->px->creds, k, c->host, c->port, why, sizeof why);
    LOG_W("proxy", "refused a connection: %s", why);
    audit_log_event(c->px->audit, "credential", c->host, c->port, false, NULL, why, c->px->command);
    proxy_buf_release(&c->c2u);
    struct linger lg = {.l_onoff = 1, .l_linger = 0}; /* at once: a reset, nothing more sent */
    if (c->ufd >= 0)
        (void)setsockopt(c->ufd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    if (cred_scan_began_http(c->scan) && !c->u_spoke) {
        char body[512];
        snprintf(body, sizeof body, "cordon: %s\n", why);
        proxy_http_error(c, 403, "X-Cordon-Error: credential-refused\r\n", body);
        return;
    }
    (void)setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    proxy_conn_close(c);
}

bool proxy_relay_scan_start(struct conn *c)
{
    const struct cred_set *set = c->px->creds;
    size_t n = set ? cred_set_count(set) : 0, looked_for = 0;
    for (size_t i = 0; i < n; i++)
        looked_for += !cred_set_allows(set, i, c->host, (int)c->port);
    if (looked_for == 0)
        return true; /* no credential, or all may go there: spliced as without credentials */
    c->scan = cred_scan_new(set, c->host, (int)c->port);
    if (!c->scan) {
        LOG_W("proxy", "%s:%u: out of memory: refused", c->host, (unsigned)c->port);
        proxy_conn_close(c);
        return false;
    }
    long k = c->c2u.len ? cred_scan_feed(c->scan, c->c2u.data + c->c2u.off, c->c2u.len) : -1;
    if (k >= 0) {
        scan_refused(c, k);
        return false;
    }
    return true;
}

/* The client -> upstream direction of a tunnel looked through (c->scan): what is buffered
 * first (looked through already), then one read, looked through before any of it is sent.
 * 1: refused (c is closing), else as pump. */
static int pump_scanned(struct conn *c, bool woken)
{
    struct relay_buf *b = &c->c2u;
    if (b->len > 0) {
        ssize_t w = proxy_buf_flush(b, c->ufd);
        if (w < 0 && w != -EAGAIN)
            return (int)w;
        if (b->len > 0)
            return 0;
    }
    if (!woken || c->c_eof)
        return 0;
    if (!b->data)
        b->data = xmalloc(RELAY_BUF);
    b->off = 0;
    ssize_t n = read(c->cfd, b->data, RELAY_BUF);
    if (n == 0)
        c->c_eof = true;
    if (n <= 0)
        return n == 0 || errno == EAGAIN || errno == EINTR ? 0 : -errno;
    long k = cred_scan_feed(c->scan, b->data, (size_t)n);
    if (k >= 0) {
        scan_refused(c, k);
        return 1;
    }
    b->len = (size_t)n;
    ssize_t w = proxy_buf_flush(b, c->ufd);
    return w < 0 && w != -EAGAIN ? (int)w : 0;
}

/* One tunnel direction: first what is buffered (a greeting, bytes sent with the head), then
 * src -> pipe -> dst with splice. woken: an event of this direction came (src readable or dst
 * writable); without one only the buffer is flushed, so no splice is tried (and no pipe opened)
 * that can only answer EAGAIN. */
static int pump(struct relay_buf *b, struct splice_pipe *p, int src, bool *src_eof, int dst,
                bool woken)
{
    if (b->len > 0) {
        ssize_t w = proxy_buf_flush(b, dst);
        if (w < 0 && w != -EAGAIN)
            return (int)w;
        if (b->len > 0)
            return 0;
    }
    if (!woken && p->len == 0)
        return 0;
    return splice_pump(p, src, src_eof, dst);
}

bool proxy_direction_drained(const struct relay_buf *b, const struct splice_pipe *p)
{
    return b->len == 0 && p->len == 0;
}

/* The directions an event concerns: c2u when the client is readable or upstream writable, u2c
 * the other way round; an error or hang-up concerns both. */
#define EV_BROKEN (EPOLLERR | EPOLLHUP | EPOLLRDHUP)
unsigned proxy_client_dirs(uint32_t ev)
{
    return (ev & EV_BROKEN ? DIR_C2U | DIR_U2C : 0) | (ev & EPOLLIN ? DIR_C2U : 0) |
           (ev & EPOLLOUT ? DIR_U2C : 0);
}
unsigned proxy_upstream_dirs(uint32_t ev)
{
    return (ev & EV_BROKEN ? DIR_C2U | DIR_U2C : 0) | (ev & EPOLLIN ? DIR_U2C : 0) |
           (ev & EPOLLOUT ? DIR_C2U : 0);
}

void proxy_relay(struct conn *c, unsigned dirs)
{
    int up = c->scan ? pump_scanned(c, dirs & DIR_C2U)
                     : pump(&c->c2u, &c->c2u_pipe, c->cfd, &c->c_eof, c->ufd, dirs & DIR_C2U);
    if (up > 0)
        return; /* a placeholder: refused */
    if (up < 0 || pump(&c->u2c, &c->u2c_pipe, c->ufd, &c->u_eof, c->cfd, dirs & DIR_U2C) < 0) {
        proxy_conn_close(c);
        return;
    }
    if (c->u2c_pipe.took) {
        c->u_spoke = true;
        c->u2c_pipe.took = false;
    }
    /* Half-close: once one side ended and its bytes are through, tell the other. */
    if (c->c_eof && proxy_direction_drained(&c->c2u, &c->c2u_pipe) && !c->u_shut) {
        shutdown(c->ufd, SHUT_WR);
        c->u_shut = true;
    }
    if (c->u_eof && proxy_direction_drained(&c->u2c, &c->u2c_pipe) && !c->c_shut) {
        shutdown(c->cfd, SHUT_WR);
        c->c_shut = true;
    }
    if (c->u_shut && c->c_shut) {
        proxy_conn_close(c);
        return;
    }
    c->active_ms = clock_mono_ms(); /* buffers stay while bytes flow; the sweep frees idle ones */
    proxy_conn_update(c);
}

/* ---- one HTTP exchange ---- */

static int emit_to_client(void *ctx, const char *p, size_t n)
{
    return proxy_buf_append(&((struct conn *)ctx)->u2c, p, n);
}

/* The response is through: back to HEAD for the client's next request, or close. */
static void exchange_finished(struct conn *c)
{
    ev_io_stop(c->px->loop, &c->uw);
    close(c->ufd);
    c->ufd = -1;
    if (!hx_keep_alive(&c->hx)) {
        shutdown(c->cfd, SHUT_WR);
        proxy_conn_close(c);
        return;
    }
    hx_free(&c->hx);
    proxy_buf_release(&c->c2u);
    proxy_buf_release(&c->u2c);
    c->state = ST_HEAD;
    c->started_ms = clock_mono_ms();
    c->c_eof = c->u_eof = false;
    proxy_conn_update(c);
    proxy_parse_http_head(c); /* a pipelined request may be waiting already */
}

void proxy_http_exchange(struct conn *c)
{
    /* client -> upstream: this request's body only; what follows is the next request */
    if (!c->hx.req_done && !c->c_eof && proxy_buf_space(&c->c2u) > 0) {
        char tmp[16384];
        size_t room = proxy_buf_space(&c->c2u) < sizeof tmp ? proxy_buf_space(&c->c2u) : sizeof tmp;
        if (HEAD_MAX - c->head_len < room)
            room = HEAD_MAX - c->head_len;
        ssize_t n = room ? proxy_client_read(c, tmp, room) : -1;
        if (room && n < 0 && errno == EACCES)
            return; /* the credentials' rewriter refused: answered or closed */
        if (n == 0) {
            c->c_eof = true;
        } else if (n > 0) {
            size_t body = hx_request_body(&c->hx, tmp, (size_t)n);
            if (c->hx.error) {
                proxy_conn_close(c);
                return;
            }
            (void)proxy_buf_append(&c->c2u, tmp, body);
            (void)proxy_head_room(c, (size_t)n - body); /* room was bounded by HEAD_MAX above */
            memcpy(c->head + c->head_len, tmp + body, (size_t)n - body);
            c->head_len += (size_t)n - body;
        } else if (n < 0 && room && errno != EAGAIN && errno != EINTR) {
            proxy_conn_close(c);
            return;
        }
    }
    if (proxy_buf_flush(&c->c2u, c->ufd) < -EAGAIN) {
        proxy_conn_close(c);
        return;
    }
    /* upstream -> client: the response, its head rewritten, its end found */
    if (!c->hx.resp_done && proxy_buf_space(&c->u2c) >= HX_HEAD_MAX + 128) {
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
                    proxy_http_error(c, 502, NULL, body);
                } else {
                    proxy_conn_close(c);
                }
                return;
            }
        } else if (errno != EAGAIN && errno != EINTR) {
            c->hx.client_keep_alive = false;
            c->hx.resp_done = true;
        }
    }
    if (proxy_buf_flush(&c->u2c, c->cfd) < -EAGAIN) {
        proxy_conn_close(c);
        return;
    }
    if (c->hx.resp_done && c->u2c.len == 0) {
        exchange_finished(c);
        return;
    }
    proxy_conn_update(c);
}
