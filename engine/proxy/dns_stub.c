/* dns_stub.c — see dns_stub.h. One query's way: rate limit (a token bucket per sandbox:
 * DNS_RATE_PER_S, bursts of DNS_RATE_BURST; over it UDP queries are dropped and a TCP client is
 * closed) -> dns_msg_parse_query (malformed: FORMERR, or no reply at all) -> the cache (a name
 * decided in the last DNS_STUB_TTL seconds, allowed with its addresses or refused) -> else the
 * network hook, kind dns, audited -> refused: REFUSED; allowed: one host-side lookup per name
 * (resolver.c's threads; later queries for the same name wait for the same lookup), then each
 * address that is loopback, link-local, private or multicast is decided again as an address
 * (kind dns, audited) and dropped unless a rule allows it. REFUSED, not NXDOMAIN, for a name no
 * rule allows: the name may well exist, and a resolver that sees REFUSED says so rather than
 * "no such host". Uses: dns_msg.c, resolver.c, the policy (lh_network_decide), the audit log.
 * Never: forwards a query's bytes, answers a name no rule could allow, blocks the loop. */
#include "proxy/dns_stub.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "policy/lua_host.h"
#include "proxy/audit_log.h"
#include "proxy/dns_msg.h"
#include "proxy/resolver.h"

#define CACHE_N 256      /* names remembered (direct-mapped by hash) */
#define MAP_N 1024       /* address -> name entries for the transparent path (a ring) */
#define PENDING_MAX 64   /* names being looked up at once; more get SERVFAIL */
#define WAITERS_MAX 16   /* queries waiting for one name; more get SERVFAIL */
#define TCP_MAX 16       /* TCP clients at once; more are closed at once */
#define TCP_MSG_MAX 1024 /* a longer query over TCP closes the connection */
#define TCP_IDLE_MS 10000
#define DNS_RATE_PER_S 1000
#define DNS_RATE_BURST 2000
#define UDP_PER_WAKE 64 /* datagrams read per wake-up: the loop's other work goes on */
#define MAX_ADDRS (2 * DNS_MAX_ANSWERS)

struct cached {
    char name[254];
    uint64_t expires_ms; /* 0: empty */
    int rcode;
    size_t n;
    struct dns_answer_addr addrs[MAX_ADDRS];
};

struct map_entry {
    struct dns_answer_addr addr;
    char name[254];
};

struct tcp_client {
    struct dns_stub *s;
    int fd;
    struct ev_io w;
    uint8_t buf[2 + TCP_MSG_MAX];
    size_t len;
    uint64_t active_ms;
    struct tcp_client *next;
};

struct waiter {
    struct dns_query q;
    struct tcp_client *tc; /* NULL: UDP, to from */
    struct sockaddr_storage from;
    socklen_t fromlen;
};

struct pending {
    struct dns_stub *s;
    char name[254];
    struct resolve_job *job;
    struct waiter w[WAITERS_MAX];
    size_t n;
    struct pending *next;
};

struct dns_stub {
    struct ev_loop *loop;
    int udp_fd, tcp_fd;
    struct ev_io udp_w, tcp_w;
    struct ev_timer sweep;
    struct resolver *res;
    struct audit_log *audit;
    const char *command;
    dns_refused_cb refused;
    bool (*granted)(void *ctx, const char *name);
    void *ctx;
    struct cached cache[CACHE_N];
    struct map_entry map[MAP_N];
    size_t map_next;
    struct pending *pending;
    size_t n_pending;
    struct tcp_client *clients;
    size_t n_clients;
    double tokens;
    uint64_t tokens_ms;
    bool told_rate;
};

/* ---- helpers ---- */

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static bool take_token(struct dns_stub *s)
{
    uint64_t now = clock_mono_ms();
    s->tokens += (double)(now - s->tokens_ms) * DNS_RATE_PER_S / 1000.0;
    s->tokens_ms = now;
    if (s->tokens > DNS_RATE_BURST)
        s->tokens = DNS_RATE_BURST;
    if (s->tokens < 1) {
        if (!s->told_rate)
            LOG_W("dns", "more than %d queries per second from the sandbox: dropping some",
                  DNS_RATE_PER_S);
        s->told_rate = true;
        return false;
    }
    s->tokens -= 1;
    return true;
}

/* Must an address in a name's answer have a rule of its own? Loopback, unspecified, link-local,
 * private (RFC 1918, shared 100.64/10, unique-local fc00::/7), multicast and above: a public
 * name must not become a way to the host's or its network's own services. */
static bool needs_own_rule(const struct dns_answer_addr *a)
{
    const uint8_t *b = a->addr;
    if (a->family == AF_INET6) {
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        static const uint8_t zero[16];
        if (memcmp(b, mapped, 12) == 0)
            b += 12; /* as its IPv4 address */
        else
            return memcmp(b, zero, 15) == 0 /* :: and ::1 */ || (b[0] & 0xfe) == 0xfc ||
                   (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) || b[0] == 0xff;
    }
    return b[0] == 127 || b[0] == 0 || b[0] == 10 || (b[0] == 169 && b[1] == 254) ||
           (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168) ||
           (b[0] == 100 && (b[1] & 0xc0) == 64) || b[0] >= 224;
}

static bool is_unspecified(const struct dns_answer_addr *a)
{
    static const uint8_t zero[16];
    if (a->family == AF_INET)
        return memcmp(a->addr, zero, 4) == 0;
    static const uint8_t mapped0[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0};
    return memcmp(a->addr, zero, 16) == 0 || memcmp(a->addr, mapped0, 16) == 0;
}

static void addr_text(const struct dns_answer_addr *a, char *out, size_t n)
{
    if (!inet_ntop(a->family, a->addr, out, (socklen_t)n))
        snprintf(out, n, "?");
}

static void remember_map(struct dns_stub *s, const struct cached *c)
{
    for (size_t i = 0; i < c->n; i++) {
        /* the same address for the same name again: keep the one entry */
        bool known = false;
        for (size_t k = 0; k < MAP_N && !known; k++)
            known = s->map[k].addr.family == c->addrs[i].family &&
                    memcmp(s->map[k].addr.addr, c->addrs[i].addr, 16) == 0 &&
                    strcmp(s->map[k].name, c->name) == 0;
        if (known)
            continue;
        struct map_entry *m = &s->map[s->map_next];
        s->map_next = (s->map_next + 1) % MAP_N;
        m->addr = c->addrs[i];
        snprintf(m->name, sizeof m->name, "%s", c->name);
    }
}

size_t dns_stub_names_for(const struct dns_stub *s, const struct sockaddr *sa, char (*names)[254],
                          size_t max)
{
    struct dns_answer_addr a = {0};
    size_t found = 0;
    if (!s)
        return 0;
    if (sa->sa_family == AF_INET) {
        a.family = AF_INET;
        memcpy(a.addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            a.family = AF_INET;
            memcpy(a.addr, a6->s6_addr + 12, 4);
        } else {
            a.family = AF_INET6;
            memcpy(a.addr, a6, 16);
        }
    } else {
        return 0;
    }
    /* newest first */
    for (size_t k = 0; k < MAP_N && found < max; k++) {
        const struct map_entry *m = &s->map[(s->map_next + MAP_N - 1 - k) % MAP_N];
        if (m->name[0] && m->addr.family == a.family && memcmp(m->addr.addr, a.addr, 16) == 0)
            snprintf(names[found++], 254, "%s", m->name);
    }
    return found;
}

/* ---- replies ---- */

static void send_reply(struct dns_stub *s, const struct waiter *w, int rcode,
                       const struct cached *c)
{
    uint8_t out[2 + 4096];
    size_t limit = w->tc ? sizeof out - 2 : dns_msg_udp_limit(&w->q);
    size_t n = dns_msg_build_reply(&w->q, rcode, c ? c->addrs : NULL, c ? c->n : 0, DNS_STUB_TTL,
                                   limit, out + 2, sizeof out - 2);
    if (n == 0)
        return;
    if (!w->tc) {
        (void)sendto(s->udp_fd, out + 2, n, MSG_DONTWAIT | MSG_NOSIGNAL,
                     (const struct sockaddr *)&w->from, w->fromlen);
        return;
    }
    out[0] = (uint8_t)(n >> 8);
    out[1] = (uint8_t)n;
    /* A reply is small; a client that does not read it is not waited for. Shut down, not
     * closed here: other waiters may hold tc; its read event (EOF) closes it. */
    if (send(w->tc->fd, out, n + 2, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(n + 2))
        shutdown(w->tc->fd, SHUT_RDWR);
}

static struct cached *cache_slot(struct dns_stub *s, const char *name)
{
    return &s->cache[name_hash(name) % CACHE_N];
}

static struct cached *cache_find(struct dns_stub *s, const char *name)
{
    struct cached *c = cache_slot(s, name);
    if (c->expires_ms && c->expires_ms > clock_mono_ms() && strcmp(c->name, name) == 0)
        return c;
    return NULL;
}

static struct cached *cache_put(struct dns_stub *s, const char *name, int rcode)
{
    struct cached *c = cache_slot(s, name);
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->rcode = rcode;
    c->expires_ms = clock_mono_ms() + DNS_STUB_TTL * 1000;
    return c;
}

static void answer_from(struct dns_stub *s, const struct waiter *w, const struct cached *c)
{
    send_reply(s, w, c->rcode, c);
    if (c->rcode == DNS_RCODE_NOERROR)
        remember_map(s, c);
}

/* ---- lookups ---- */

/* The host's answer for p's name: keep the addresses the policy lets through, cache, reply. */
static void on_resolved(void *data, struct addrinfo *res, int gai_err)
{
    struct pending *p = data;
    struct dns_stub *s = p->s;
    p->job = NULL;
    int rcode = DNS_RCODE_NOERROR;
    struct dns_answer_addr got[MAX_ADDRS];
    size_t n = 0, dropped = 0;
    if (!res)
        rcode = gai_err == EAI_NONAME ? DNS_RCODE_NXDOMAIN :
#ifdef EAI_NODATA
                gai_err == EAI_NODATA ? DNS_RCODE_NOERROR
                                      :
#endif
                                      DNS_RCODE_SERVFAIL;
    for (struct addrinfo *ai = res; ai && n < MAX_ADDRS; ai = ai->ai_next) {
        struct dns_answer_addr a = {.family = ai->ai_family};
        if (ai->ai_family == AF_INET)
            memcpy(a.addr, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
        else if (ai->ai_family == AF_INET6)
            memcpy(a.addr, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
        else
            continue;
        bool dup = false;
        for (size_t i = 0; i < n && !dup; i++)
            dup = got[i].family == a.family && memcmp(got[i].addr, a.addr, 16) == 0;
        if (dup)
            continue;
        if (is_unspecified(&a)) {
            dropped++;
            continue;
        }
        if (needs_own_rule(&a)) {
            char ip[INET6_ADDRSTRLEN];
            struct net_decision d;
            addr_text(&a, ip, sizeof ip);
            enum lh_outcome o = lh_network_decide(NET_KIND_DNS, ip, 0, s->command, &d);
            if (o == LH_OK && !d.allow)
                snprintf(d.reason, sizeof d.reason,
                         "%.120s resolves to %s, a loopback, link-local or private "
                         "address, which needs a rule of its own",
                         p->name, ip);
            audit_log_decision(s->audit, NET_KIND_DNS, ip, 0, &d, o, s->command);
            if (o != LH_OK || !d.allow) {
                dropped++;
                continue;
            }
        }
        got[n++] = a;
    }
    if (res)
        freeaddrinfo(res);
    if (rcode == DNS_RCODE_NOERROR && n == 0 && dropped > 0)
        rcode = DNS_RCODE_REFUSED;
    struct cached tmp = {0}, *c = &tmp;
    if (rcode != DNS_RCODE_SERVFAIL)
        c = cache_put(s, p->name, rcode);
    c->rcode = rcode;
    snprintf(c->name, sizeof c->name, "%s", p->name);
    memcpy(c->addrs, got, n * sizeof got[0]);
    c->n = n;
    for (size_t i = 0; i < p->n; i++)
        answer_from(s, &p->w[i], c);
    for (struct pending **pp = &s->pending; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    s->n_pending--;
    free(p);
}

/* Queue w behind the lookup of its name (started when none runs). false: over a bound. */
static bool wait_for_lookup(struct dns_stub *s, const struct waiter *w)
{
    struct pending *p;
    for (p = s->pending; p; p = p->next)
        if (strcmp(p->name, w->q.name) == 0)
            break;
    if (!p) {
        if (s->n_pending >= PENDING_MAX)
            return false;
        p = xcalloc(1, sizeof *p);
        p->s = s;
        snprintf(p->name, sizeof p->name, "%s", w->q.name);
        p->next = s->pending;
        s->pending = p;
        s->n_pending++;
        p->w[p->n++] = *w;
        p->job = resolver_lookup(s->res, p->name, 53, on_resolved, p);
        return true;
    }
    if (p->n >= WAITERS_MAX)
        return false;
    p->w[p->n++] = *w;
    return true;
}

static bool lookup_pending(const struct dns_stub *s, const char *name)
{
    for (const struct pending *p = s->pending; p; p = p->next)
        if (strcmp(p->name, name) == 0)
            return true;
    return false;
}

/* One query (len bytes) from w's client. */
static void handle_query(struct dns_stub *s, const uint8_t *msg, size_t len, struct waiter *w)
{
    int rc = dns_msg_parse_query(msg, len, &w->q);
    if (rc < 0)
        return;
    if (rc != DNS_RCODE_NOERROR) {
        send_reply(s, w, rc, NULL);
        return;
    }
    if (!w->q.name_ok) {
        send_reply(s, w, DNS_RCODE_REFUSED, NULL);
        return;
    }
    struct cached *c = cache_find(s, w->q.name);
    if (c) {
        answer_from(s, w, c);
        return;
    }
    if (!lookup_pending(s, w->q.name)) {
        struct net_decision d;
        enum lh_outcome o = lh_network_decide(NET_KIND_DNS, w->q.name, 0, s->command, &d);
        if (o == LH_OK && !d.allow && s->granted && s->granted(s->ctx, w->q.name)) {
            d.allow = true;
            snprintf(d.reason, sizeof d.reason,
                     "a destination of this name was granted by a person");
        }
        audit_log_decision(s->audit, NET_KIND_DNS, w->q.name, 0, &d, o, s->command);
        if (o != LH_OK || !d.allow) {
            if (o == LH_OK) /* a policy error is not remembered: the next query decides again */
                (void)cache_put(s, w->q.name, DNS_RCODE_REFUSED);
            if (s->refused)
                s->refused(s->ctx, w->q.name);
            send_reply(s, w, DNS_RCODE_REFUSED, NULL);
            return;
        }
    }
    if (!wait_for_lookup(s, w))
        send_reply(s, w, DNS_RCODE_SERVFAIL, NULL);
}

/* ---- UDP ---- */

static void on_udp(struct ev_loop *loop, struct ev_io *io, uint32_t events)
{
    (void)loop;
    (void)events;
    struct dns_stub *s = io->data;
    for (int i = 0; i < UDP_PER_WAKE; i++) {
        uint8_t buf[4096];
        struct waiter w = {.fromlen = sizeof w.from};
        ssize_t n = recvfrom(s->udp_fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC,
                             (struct sockaddr *)&w.from, &w.fromlen);
        if (n < 0)
            return;
        if (!take_token(s))
            continue;
        if ((size_t)n > sizeof buf) { /* oversized: FORMERR from its header */
            struct dns_query q;
            if (dns_msg_parse_query(buf, DNS_HEADER_LEN, &q) >= 0) {
                w.q = q;
                w.q.has_question = false;
                send_reply(s, &w, DNS_RCODE_FORMERR, NULL);
            }
            continue;
        }
        handle_query(s, buf, (size_t)n, &w);
    }
}

/* ---- TCP (RFC 7766: two-byte length, several queries per connection) ---- */

static void tcp_close(struct tcp_client *tc)
{
    struct dns_stub *s = tc->s;
    if (tc->fd < 0)
        return;
    ev_io_stop(s->loop, &tc->w);
    close(tc->fd);
    tc->fd = -1;
    /* queries waiting for a lookup lose their way back */
    for (struct pending *p = s->pending; p; p = p->next)
        for (size_t i = 0; i < p->n; i++)
            if (p->w[i].tc == tc) {
                p->w[i] = p->w[--p->n];
                i--;
            }
    for (struct tcp_client **pp = &s->clients; *pp; pp = &(*pp)->next) {
        if (*pp == tc) {
            *pp = tc->next;
            break;
        }
    }
    s->n_clients--;
    free(tc);
}

static void on_tcp_client(struct ev_loop *loop, struct ev_io *io, uint32_t events)
{
    (void)loop;
    (void)events;
    struct tcp_client *tc = io->data;
    struct dns_stub *s = tc->s;
    ssize_t n = read(tc->fd, tc->buf + tc->len, sizeof tc->buf - tc->len);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            tcp_close(tc);
        return;
    }
    tc->len += (size_t)n;
    tc->active_ms = clock_mono_ms();
    while (tc->len >= 2) {
        size_t mlen = (size_t)tc->buf[0] << 8 | tc->buf[1];
        if (mlen > TCP_MSG_MAX || mlen < DNS_HEADER_LEN) {
            tcp_close(tc);
            return;
        }
        if (tc->len < 2 + mlen)
            return;
        if (!take_token(s)) {
            tcp_close(tc);
            return;
        }
        struct waiter w = {.tc = tc};
        handle_query(s, tc->buf + 2, mlen, &w);
        memmove(tc->buf, tc->buf + 2 + mlen, tc->len - 2 - mlen);
        tc->len -= 2 + mlen;
    }
}

static void on_tcp_listener(struct ev_loop *loop, struct ev_io *io, uint32_t events)
{
    (void)events;
    struct dns_stub *s = io->data;
    for (int i = 0; i < 16; i++) {
        int fd = accept4(s->tcp_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (s->n_clients >= TCP_MAX) {
            close(fd);
            continue;
        }
        struct tcp_client *tc = xcalloc(1, sizeof *tc);
        tc->s = s;
        tc->fd = fd;
        tc->active_ms = clock_mono_ms();
        tc->next = s->clients;
        s->clients = tc;
        s->n_clients++;
        if (ev_io_start(loop, &tc->w, fd, EPOLLIN, on_tcp_client, tc) < 0)
            tcp_close(tc);
    }
}

static void on_sweep(struct ev_loop *loop, struct ev_timer *t)
{
    struct dns_stub *s = t->data;
    uint64_t now = clock_mono_ms();
    for (struct tcp_client *tc = s->clients, *next; tc; tc = next) {
        next = tc->next;
        if (now - tc->active_ms > TCP_IDLE_MS)
            tcp_close(tc);
    }
    ev_timer_start(loop, t, 1000, on_sweep, s);
}

struct dns_stub *dns_stub_new(struct ev_loop *loop, int udp_fd, int tcp_fd, struct resolver *res,
                              struct audit_log *audit, const char *command, dns_refused_cb refused,
                              void *ctx)
{
    struct dns_stub *s = xcalloc(1, sizeof *s);
    s->loop = loop;
    s->udp_fd = udp_fd;
    s->tcp_fd = tcp_fd;
    s->res = res;
    s->audit = audit;
    s->command = command;
    s->refused = refused;
    s->ctx = ctx;
    s->tokens = DNS_RATE_BURST;
    s->tokens_ms = clock_mono_ms();
    if (udp_fd >= 0) {
        fcntl(udp_fd, F_SETFL, O_NONBLOCK);
        if (ev_io_start(loop, &s->udp_w, udp_fd, EPOLLIN, on_udp, s) < 0)
            goto fail;
    }
    if (tcp_fd >= 0) {
        fcntl(tcp_fd, F_SETFL, O_NONBLOCK);
        if (ev_io_start(loop, &s->tcp_w, tcp_fd, EPOLLIN, on_tcp_listener, s) < 0)
            goto fail;
    }
    ev_timer_start(loop, &s->sweep, 1000, on_sweep, s);
    return s;
fail:
    LOG_E("dns", "cannot start the sandbox's resolver: %s", strerror(errno));
    dns_stub_free(s);
    return NULL;
}

void dns_stub_set_granted(struct dns_stub *s, bool (*granted)(void *ctx, const char *name))
{
    if (s)
        s->granted = granted;
}

void dns_stub_forget(struct dns_stub *s, const char *name)
{
    if (!s)
        return;
    struct cached *c = cache_slot(s, name);
    if (strcmp(c->name, name) == 0)
        memset(c, 0, sizeof *c);
}

void dns_stub_free(struct dns_stub *s)
{
    if (!s)
        return;
    while (s->clients)
        tcp_close(s->clients);
    while (s->pending) {
        struct pending *p = s->pending;
        s->pending = p->next;
        if (p->job)
            resolver_cancel(s->res, p->job);
        free(p);
    }
    ev_io_stop(s->loop, &s->udp_w);
    ev_io_stop(s->loop, &s->tcp_w);
    ev_timer_stop(s->loop, &s->sweep);
    if (s->udp_fd >= 0)
        close(s->udp_fd);
    if (s->tcp_fd >= 0)
        close(s->tcp_fd);
    free(s);
}
