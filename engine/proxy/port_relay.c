/* port_relay.c — see port_relay.h.
 * Owns: the host ports' and published ports' listeners and their connections (struct tunnel),
 * each moved WAITING (a published port's connection: init's socket not here yet) -> CONNECTING
 * (the far side's non-blocking connect) -> RELAY (splice both ways, half-closes passed on).
 * Uses: splice_pipe.c for the bytes, audit_log.c for the lines, the event loop.
 * Never: connects anywhere but the host's 127.0.0.1:PORT of a granted host port (inside, init
 * connects); frees a tunnel inside a callback (closed ones are freed after the round, as the
 * proxy's connections are). */
#include "proxy/port_relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
#include "base/shell_quote.h"
#include "base/util.h"
#include "proxy/audit_log.h"
#include "proxy/splice_pipe.h"

#define SWEEP_MS 1000
#define ACCEPT_BURST 64 /* per wake-up, so one listener cannot starve the loop */
#define IDLE_RELEASE_MS 2000

enum listener_kind { LK_HOST_PORT, LK_PUBLISHED };
enum tunnel_state { T_WAITING, T_CONNECTING, T_RELAY };

struct listener {
    struct port_relay *pr;
    enum listener_kind kind;
    int fd;
    struct ev_io w;
    bool paused;           /* out of fds: not watched until the next sweep */
    struct port_binding b; /* host ports: port == host_port, host_addr "127.0.0.1" */
    uint64_t refused_logged_ms;
    bool failure_said; /* a far side's failure is said once per port, then only logged */
    struct listener *next;
};

struct tunnel {
    struct port_relay *pr;
    struct listener *l; /* NULL once closed */
    enum tunnel_state state;
    int a, b; /* a: the accepted side; b: the far side (-1 until there) */
    struct ev_io aw, bw;
    struct splice_pipe a2b, b2a;
    bool a_eof, b_eof, a_shut, b_shut;
    bool a_ended_early; /* the client shut its write side before the far side was there */
    unsigned id;        /* WAITING: the question to init */
    uint64_t started_ms, active_ms;
    bool closed;
    struct tunnel *prev, *next, *next_closed;
};

struct port_relay {
    struct ev_loop *loop;
    struct audit_log *audit;
    char *command;
    struct listener *listeners;
    struct tunnel *tunnels, *closed;
    struct ev_timer sweep;
    bool sweeping;
    port_relay_inside_fn inside;
    void *inside_ctx;
    unsigned next_id;
};

static void tunnel_update(struct tunnel *t);

static void tunnel_close(struct tunnel *t)
{
    if (t->closed)
        return;
    struct port_relay *pr = t->pr;
    t->closed = true;
    ev_io_stop(pr->loop, &t->aw);
    ev_io_stop(pr->loop, &t->bw);
    close(t->a);
    if (t->b >= 0)
        close(t->b);
    splice_pipe_release(&t->a2b);
    splice_pipe_release(&t->b2a);
    splice_pipe_close(&t->a2b);
    splice_pipe_close(&t->b2a);
    if (t->l)
        t->l->b.open--;
    t->l = NULL;
    if (t->prev)
        t->prev->next = t->next;
    else
        pr->tunnels = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->next_closed = pr->closed;
    pr->closed = t;
}

/* ---- relaying ---- */

enum { DIR_A2B = 1, DIR_B2A = 2 };
#define EV_BROKEN (EPOLLERR | EPOLLHUP | EPOLLRDHUP)

/* One direction: only when woken for it or bytes wait in its pipe (no pipe is opened for an
 * EAGAIN). */
static int pump(struct splice_pipe *p, int src, bool *src_eof, int dst, bool woken)
{
    if (!woken && p->len == 0)
        return 0;
    return splice_pump(p, src, src_eof, dst);
}

static void relay(struct tunnel *t, unsigned dirs)
{
    if (pump(&t->a2b, t->a, &t->a_eof, t->b, dirs & DIR_A2B) < 0 ||
        pump(&t->b2a, t->b, &t->b_eof, t->a, dirs & DIR_B2A) < 0) {
        tunnel_close(t);
        return;
    }
    /* Half-close: once one side ended and its bytes are through, tell the other. */
    if (t->a_eof && t->a2b.len == 0 && !t->b_shut) {
        shutdown(t->b, SHUT_WR);
        t->b_shut = true;
    }
    if (t->b_eof && t->b2a.len == 0 && !t->a_shut) {
        shutdown(t->a, SHUT_WR);
        t->a_shut = true;
    }
    if (t->a_shut && t->b_shut) {
        tunnel_close(t);
        return;
    }
    t->active_ms = clock_mono_ms();
    tunnel_update(t);
}

static void connect_result(struct tunnel *t);

static void on_a(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    struct tunnel *t = w->data;
    if (t->closed)
        return;
    if (t->state != T_RELAY) {
        if (events & (EPOLLHUP | EPOLLERR)) {
            tunnel_close(t); /* the client gave up before the far side was there */
        } else if (events & EPOLLRDHUP) {
            /* Only its write side: what it sent still goes once the far side is there. */
            t->a_ended_early = true;
            tunnel_update(t);
        }
        return;
    }
    relay(t, (events & EV_BROKEN ? DIR_A2B | DIR_B2A : 0) | (events & EPOLLIN ? DIR_A2B : 0) |
                 (events & EPOLLOUT ? DIR_B2A : 0));
}

static void on_b(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    struct tunnel *t = w->data;
    if (t->closed)
        return;
    if (t->state == T_CONNECTING) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            connect_result(t);
        return;
    }
    relay(t, (events & EV_BROKEN ? DIR_A2B | DIR_B2A : 0) | (events & EPOLLIN ? DIR_B2A : 0) |
                 (events & EPOLLOUT ? DIR_A2B : 0));
}

static void tunnel_update(struct tunnel *t)
{
    if (t->closed)
        return;
    uint32_t aev = t->a_ended_early ? 0 : EPOLLRDHUP, bev = 0;
    if (t->state == T_CONNECTING) {
        bev = EPOLLOUT;
    } else if (t->state == T_RELAY) {
        aev = (!t->a_eof && !splice_pipe_full(&t->a2b) ? EPOLLIN : 0) | (t->b2a.len ? EPOLLOUT : 0);
        bev = (!t->b_eof && !splice_pipe_full(&t->b2a) ? EPOLLIN : 0) | (t->a2b.len ? EPOLLOUT : 0);
    }
    if (t->aw.active)
        ev_io_set(t->pr->loop, &t->aw, aev);
    else if (ev_io_start(t->pr->loop, &t->aw, t->a, aev, on_a, t) < 0)
        goto broken;
    if (t->b < 0)
        return;
    if (t->bw.active)
        ev_io_set(t->pr->loop, &t->bw, bev);
    else if (ev_io_start(t->pr->loop, &t->bw, t->b, bev, on_b, t) < 0)
        goto broken;
    return;
broken:
    tunnel_close(t);
}

static const char *kind_name(const struct listener *l)
{
    return l->kind == LK_HOST_PORT ? "host_port" : "publish";
}

/* The far side did not come: said once per port (then logged), and the client's connection is
 * reset, as a refused connect would be (an orderly close could pass for an empty answer). */
static void far_side_failed(struct tunnel *t, int err)
{
    struct listener *l = t->l;
    if (l) {
        char reason[256];
        if (l->kind == LK_HOST_PORT)
            snprintf(reason, sizeof reason, "cannot connect to the host's 127.0.0.1:%u: %s%s",
                     l->b.port, strerror(err),
                     err == ECONNREFUSED ? " (is the service running?)" : "");
        else
            snprintf(reason, sizeof reason, "cannot connect to the sandbox's 127.0.0.1:%u: %s%s",
                     l->b.port, strerror(err),
                     err == ECONNREFUSED ? " (nothing listens there yet?)" : "");
        if (!l->failure_said)
            LOG_W(kind_name(l), "%s", reason);
        else
            LOG_I(kind_name(l), "%s", reason);
        l->failure_said = true;
    }
    struct linger reset = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(t->a, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    tunnel_close(t);
}

static void connect_result(struct tunnel *t)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(t->b, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err) {
        far_side_failed(t, err);
        return;
    }
    t->state = T_RELAY;
    t->active_ms = clock_mono_ms();
    relay(t, DIR_A2B | DIR_B2A); /* bytes the client sent meanwhile go now */
}

/* b is connected or connecting: on to RELAY when it is through. */
static void far_side_here(struct tunnel *t, int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    t->b = fd;
    t->state = T_CONNECTING;
    /* To a loopback destination the handshake is usually over already. */
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    if (poll(&pfd, 1, 0) == 1) {
        connect_result(t);
        return;
    }
    tunnel_update(t);
}

static void connect_host(struct tunnel *t)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        far_side_failed(t, errno);
        return;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)t->l->b.port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        far_side_failed(t, err);
        return;
    }
    far_side_here(t, fd);
}

/* ---- accepting ---- */

static void peer_name(int fd, char *out, size_t n)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    snprintf(out, n, "?");
    if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
        return;
    if (ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, out, (socklen_t)n);
    else if (ss.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, out, (socklen_t)n);
}

static void audit(struct listener *l, int fd, bool allow, const char *why)
{
    char peer[INET6_ADDRSTRLEN + 1], rule[128], reason[256];
    if (l->kind == LK_HOST_PORT) {
        snprintf(rule, sizeof rule, "network.host_ports");
        snprintf(reason, sizeof reason, "%s: the sandbox's 127.0.0.1:%u to the host's 127.0.0.1:%u",
                 why, l->b.port, l->b.port);
        audit_log_event(l->pr->audit, "host_port", "127.0.0.1", l->b.port, allow, rule, reason,
                        l->pr->command);
        return;
    }
    peer_name(fd, peer, sizeof peer);
    bool v6 = strchr(l->b.host_addr, ':') != NULL;
    snprintf(rule, sizeof rule, "published %s%s%s:%u", v6 ? "[" : "", l->b.host_addr, v6 ? "]" : "",
             l->b.host_port);
    snprintf(reason, sizeof reason, "%s: from %s on the host to the sandbox's 127.0.0.1:%u", why,
             peer, l->b.port);
    audit_log_event(l->pr->audit, "publish", peer, l->b.port, allow, rule, reason, l->pr->command);
}

static void on_listener(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)events;
    struct listener *l = w->data;
    struct port_relay *pr = l->pr;
    for (int i = 0; i < ACCEPT_BURST; i++) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* The backlog would wake the loop at once again: rest until the next sweep. */
                LOG_W(kind_name(l), "port %u: cannot accept: %s", l->b.port, strerror(errno));
                ev_io_set(loop, &l->w, 0);
                l->paused = true;
            }
            return;
        }
        if (l->b.open >= PORT_RELAY_MAX_CONNS) {
            uint64_t now = clock_mono_ms();
            if (now - l->refused_logged_ms > 1000) { /* one line a second, however many */
                LOG_W(kind_name(l), "port %u: %d connections are open: closing new ones", l->b.port,
                      PORT_RELAY_MAX_CONNS);
                l->refused_logged_ms = now;
            }
            audit(l, fd, false, "refused: the port's connection limit is reached");
            close(fd);
            continue;
        }
        if (l->kind == LK_PUBLISHED && !pr->inside) {
            close(fd);
            continue;
        }
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        audit(l, fd, true, "relayed");
        struct tunnel *t = xcalloc(1, sizeof *t);
        t->pr = pr;
        t->l = l;
        t->a = fd;
        t->b = -1;
        splice_pipe_init(&t->a2b);
        splice_pipe_init(&t->b2a);
        t->started_ms = t->active_ms = clock_mono_ms();
        t->next = pr->tunnels;
        if (pr->tunnels)
            pr->tunnels->prev = t;
        pr->tunnels = t;
        l->b.open++;
        l->b.total++;
        t->state = T_WAITING;
        tunnel_update(t);
        if (t->closed)
            continue;
        if (l->kind == LK_HOST_PORT) {
            connect_host(t);
        } else {
            t->id = ++pr->next_id;
            int r = pr->inside(pr->inside_ctx, t->id, l->b.port);
            if (r < 0)
                far_side_failed(t, -r);
        }
    }
}

static void on_sweep(struct ev_loop *loop, struct ev_timer *timer)
{
    struct port_relay *pr = timer->data;
    uint64_t now = clock_mono_ms();
    for (struct listener *l = pr->listeners; l; l = l->next) {
        if (l->paused && ev_io_set(loop, &l->w, EPOLLIN) == 0)
            l->paused = false;
    }
    for (struct tunnel *t = pr->tunnels, *next; t; t = next) {
        next = t->next;
        if (t->state != T_RELAY && now - t->started_ms > PORT_RELAY_CONNECT_MS) {
            far_side_failed(t, ETIMEDOUT);
        } else if (t->state == T_RELAY && now - t->active_ms > IDLE_RELEASE_MS) {
            splice_pipe_release(&t->a2b); /* an idle connection keeps no pipe */
            splice_pipe_release(&t->b2a);
        }
    }
    ev_timer_start(loop, timer, SWEEP_MS, on_sweep, pr);
}

/* ---- listeners ---- */

static struct listener *listener_add(struct port_relay *pr, enum listener_kind kind, int fd)
{
    struct listener *l = xcalloc(1, sizeof *l);
    l->pr = pr;
    l->kind = kind;
    l->fd = fd;
    if (ev_io_start(pr->loop, &l->w, fd, EPOLLIN, on_listener, l) < 0) {
        free(l);
        return NULL;
    }
    /* Kept in the order added: the API lists them so. */
    struct listener **end = &pr->listeners;
    while (*end)
        end = &(*end)->next;
    *end = l;
    if (!pr->sweeping) {
        ev_timer_start(pr->loop, &pr->sweep, SWEEP_MS, on_sweep, pr);
        pr->sweeping = true;
    }
    return l;
}

static void listener_remove(struct port_relay *pr, struct listener *l)
{
    for (struct tunnel *t = pr->tunnels, *next; t; t = next) {
        next = t->next;
        if (t->l == l)
            tunnel_close(t);
    }
    ev_io_stop(pr->loop, &l->w);
    close(l->fd);
    for (struct listener **p = &pr->listeners; *p; p = &(*p)->next) {
        if (*p == l) {
            *p = l->next;
            break;
        }
    }
    free(l);
}

struct port_relay *port_relay_new(struct ev_loop *loop, char **command)
{
    struct port_relay *pr = xcalloc(1, sizeof *pr);
    pr->loop = loop;
    pr->audit = audit_log_open();
    pr->command = shell_join(command);
    return pr;
}

int port_relay_add_host_port(struct port_relay *pr, int listen_fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(listen_fd, (struct sockaddr *)&ss, &len) < 0 ||
        (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
        close(listen_fd);
        return -EINVAL;
    }
    unsigned port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                  : ((struct sockaddr_in6 *)&ss)->sin6_port);
    (void)fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    struct listener *l = listener_add(pr, LK_HOST_PORT, listen_fd);
    if (!l) {
        close(listen_fd);
        return -ENOMEM;
    }
    l->b.port = l->b.host_port = port;
    snprintf(l->b.host_addr, sizeof l->b.host_addr, "127.0.0.1");
    return 0;
}

void port_relay_set_inside(struct port_relay *pr, port_relay_inside_fn fn, void *ctx)
{
    pr->inside = fn;
    pr->inside_ctx = ctx;
}

int port_relay_publish(struct port_relay *pr, const char *host_addr, unsigned host_port,
                       unsigned port, struct port_binding *out, char *err, size_t errlen)
{
    if (!pr->inside) {
        snprintf(err, errlen, "this sandbox cannot publish ports (it has no network of its own)");
        return -ENOTSUP;
    }
    if (port < 1 || port > 65535) {
        snprintf(err, errlen, "port %u: expected a port 1-65535 in the sandbox", port);
        return -EINVAL;
    }
    if (host_port > 65535) {
        snprintf(err, errlen, "host port %u: expected a port 1-65535 on the host (0: any free one)",
                 host_port);
        return -EINVAL;
    }
    for (struct listener *l = pr->listeners; l; l = l->next) {
        if (l->kind == LK_PUBLISHED && l->b.port == port) {
            snprintf(err, errlen, "port %u is published already (at %s:%u)", port, l->b.host_addr,
                     l->b.host_port);
            return -EEXIST;
        }
    }
    const char *addr = host_addr && *host_addr ? host_addr : "127.0.0.1";
    struct sockaddr_storage ss = {0};
    socklen_t sslen;
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)host_port);
        sslen = sizeof *s4;
    } else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)host_port);
        sslen = sizeof *s6;
    } else {
        snprintf(err, errlen, "host address '%.64s': expected an IPv4 or IPv6 address", addr);
        return -EINVAL;
    }
    int one = 1, r = 0;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        (ss.ss_family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0) ||
        bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, 128) < 0) {
        r = -errno;
        if (r == -EADDRINUSE)
            snprintf(err, errlen, "%s:%u is taken on the host (%s)", addr, host_port, strerror(-r));
        else
            snprintf(err, errlen, "cannot listen on %s:%u on the host: %s", addr, host_port,
                     strerror(-r));
        if (fd >= 0)
            close(fd);
        return r;
    }
    socklen_t len = sslen;
    (void)getsockname(fd, (struct sockaddr *)&ss, &len);
    struct listener *l = listener_add(pr, LK_PUBLISHED, fd);
    if (!l) {
        close(fd);
        snprintf(err, errlen, "cannot watch the listener");
        return -ENOMEM;
    }
    l->b.port = port;
    l->b.host_port = ntohs(ss.ss_family == AF_INET ? s4->sin_port : s6->sin6_port);
    snprintf(l->b.host_addr, sizeof l->b.host_addr, "%s", addr);
    if (out)
        *out = l->b;
    return 0;
}

int port_relay_unpublish(struct port_relay *pr, unsigned port)
{
    for (struct listener *l = pr->listeners; l; l = l->next) {
        if (l->kind == LK_PUBLISHED && l->b.port == port) {
            listener_remove(pr, l);
            return 0;
        }
    }
    return -ENOENT;
}

size_t port_relay_published(const struct port_relay *pr, struct port_binding *out, size_t max)
{
    size_t n = 0;
    for (const struct listener *l = pr ? pr->listeners : NULL; l; l = l->next) {
        if (l->kind != LK_PUBLISHED)
            continue;
        if (n < max)
            out[n] = l->b;
        n++;
    }
    return n;
}

void port_relay_inside_connected(struct port_relay *pr, unsigned id, int fd_or_err)
{
    for (struct tunnel *t = pr->tunnels; t; t = t->next) {
        if (t->state == T_WAITING && t->id == id) {
            if (fd_or_err < 0)
                far_side_failed(t, -fd_or_err);
            else
                far_side_here(t, fd_or_err);
            return;
        }
    }
    if (fd_or_err >= 0)
        close(fd_or_err); /* its client is gone (closed, timed out, unpublished) */
}

void port_relay_after_round(struct port_relay *pr)
{
    while (pr && pr->closed) {
        struct tunnel *t = pr->closed;
        pr->closed = t->next_closed;
        free(t);
    }
}

void port_relay_close_all(struct port_relay *pr)
{
    if (!pr)
        return;
    while (pr->listeners)
        listener_remove(pr, pr->listeners);
    while (pr->tunnels)
        tunnel_close(pr->tunnels);
    pr->inside = NULL; /* nothing is published any more */
}

void port_relay_free(struct port_relay *pr)
{
    if (!pr)
        return;
    port_relay_close_all(pr);
    port_relay_after_round(pr);
    if (pr->sweeping)
        ev_timer_stop(pr->loop, &pr->sweep);
    audit_log_close(pr->audit);
    free(pr->command);
    free(pr);
}
