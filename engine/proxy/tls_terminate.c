/* tls_terminate.c — one thread per terminated connection: the upstream handshake first (so a
 * server that fails verification is refused before the client is told the tunnel is up), the
 * client's greeting, the client's handshake with a minted leaf, then the pump. Sockets are
 * non-blocking, driven by poll(2); SIGPIPE is blocked in these threads (a write to a closed
 * peer is an EPIPE error). */
#include "proxy/tls_terminate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "base/log.h"
#include "proxy/cred_rewrite.h"
#include "proxy/cred_scan.h"
#include "proxy/socks5.h"
#include "proxy/tls_mint.h"

#define MINT_CACHE 128
#define PUMP_CHUNK (16 * 1024) /* one TLS record */

struct term_conn {
    struct tls_terminator *t;
    int cfd, ufd;
    char host[256];
    unsigned port;
    enum tls_greeting greeting;
    SSL *cs, *us;
    char *pre; /* the client's bytes read before (pre_len), fed to cs ahead of the socket's */
    size_t pre_len;
    bool pre_bio; /* cs still reads from them */
    struct cred_rewrite *rw;
    pthread_t thread;
    struct term_conn *prev, *next;
};

struct tls_terminator {
    struct tls_ca *ca;
    struct tls_mint *mint;
    SSL_CTX *upstream;
    const struct cred_set *creds;
    struct tls_term_hooks hooks;
    pthread_mutex_t lock;
    pthread_cond_t gone; /* signalled when a connection ends */
    struct term_conn *conns;
    size_t n_conns;
    bool closing;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct tls_terminator *tls_terminator_new(const char *upstream_ca, bool system_store,
                                          const struct cred_set *creds, char *why, size_t whylen)
{
    struct tls_terminator *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->gone, NULL);
    t->creds = creds;
    char label[64];
    snprintf(label, sizeof label, "cordon sandbox %ld", (long)getpid());
    t->ca = tls_ca_new(label, 30, why, whylen);
    if (!t->ca || !(t->mint = tls_mint_new(t->ca, MINT_CACHE, why, whylen)))
        goto fail;
    t->upstream = SSL_CTX_new(TLS_client_method());
    if (!t->upstream || SSL_CTX_set_min_proto_version(t->upstream, TLS1_2_VERSION) != 1) {
        snprintf(why, whylen, "cannot make a TLS client context");
        goto fail;
    }
    SSL_CTX_set_verify(t->upstream, SSL_VERIFY_PEER, NULL);
    if (system_store && SSL_CTX_set_default_verify_paths(t->upstream) != 1) {
        snprintf(why, whylen, "cannot read the host's trust store");
        goto fail;
    }
    if (upstream_ca && *upstream_ca) {
        /* load it as a store of its own first: a file with no certificate is an error, not
         * a silently empty addition */
        STACK_OF(X509_INFO) *infos = NULL;
        BIO *b = BIO_new_file(upstream_ca, "r");
        if (b)
            infos = PEM_X509_INFO_read_bio(b, NULL, NULL, NULL);
        BIO_free(b);
        int certs = 0;
        for (int i = 0; infos && i < sk_X509_INFO_num(infos); i++)
            certs += sk_X509_INFO_value(infos, i)->x509 != NULL;
        sk_X509_INFO_pop_free(infos, X509_INFO_free);
        ERR_clear_error();
        if (certs == 0 || SSL_CTX_load_verify_locations(t->upstream, upstream_ca, NULL) != 1) {
            snprintf(why, whylen, "network.upstream_ca: %s: %s", upstream_ca,
                     certs == 0 ? "no PEM certificate in it (or unreadable)" : "cannot load it");
            goto fail;
        }
    }
    /* HTTP/1.1 only: the rewriter reads HTTP/1.x, so neither side is offered h2 */
    static const unsigned char alpn[] = "\x08http/1.1";
    SSL_CTX_set_alpn_protos(t->upstream, alpn, sizeof alpn - 1);
    return t;
fail:
    tls_terminator_free(t);
    return NULL;
}

void tls_terminator_set_hooks(struct tls_terminator *t, const struct tls_term_hooks *hooks)
{
    t->hooks = *hooks;
}

static void report_refusal(struct term_conn *c, const char *why)
{
    if (c->t->hooks.refused)
        c->t->hooks.refused(c->t->hooks.ctx, c->host, c->port, why);
}

const char *tls_terminator_ca_pem(const struct tls_terminator *t)
{
    return tls_ca_cert_pem(t->ca);
}

size_t tls_terminator_active(struct tls_terminator *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->n_conns;
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* ---- blocking-with-deadline helpers over the non-blocking sockets ---- */

/* Wait for fd to be ready for what SSL error e asks; false on timeout or hang-up. */
static bool wait_for(int fd, int e, uint64_t deadline)
{
    struct pollfd p = {.fd = fd, .events = e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN};
    for (;;) {
        uint64_t now = now_ms();
        if (now >= deadline)
            return false;
        int r = poll(&p, 1, (int)(deadline - now));
        if (r > 0)
            return true;
        if (r == 0 || errno != EINTR)
            return false;
    }
}

/* Run SSL_connect or SSL_accept to its end: true once the handshake is over. *pre_bio: s reads
 * from a memory BIO of bytes read before; once they are used up, from the socket (a record cut
 * between the two is kept by OpenSSL's record layer). */
static bool handshake(SSL *s, int fd, bool accept, bool *pre_bio, uint64_t deadline)
{
    for (;;) {
        int r = accept ? SSL_accept(s) : SSL_connect(s);
        if (r == 1)
            return true;
        int e = SSL_get_error(s, r);
        if (e == SSL_ERROR_WANT_READ && pre_bio && *pre_bio &&
            BIO_ctrl_pending(SSL_get_rbio(s)) == 0) {
            BIO *sock = BIO_new_socket(fd, BIO_NOCLOSE);
            if (!sock)
                return false;
            SSL_set0_rbio(s, sock);
            *pre_bio = false;
            continue;
        }
        if ((e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) || !wait_for(fd, e, deadline))
            return false;
    }
}

static bool write_all_fd(int fd, const char *p, size_t n, uint64_t deadline)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            if (!wait_for(fd, SSL_ERROR_WANT_WRITE, deadline))
                return false;
        } else {
            return false;
        }
    }
    return true;
}

static bool ssl_write_all(SSL *s, int fd, const char *p, size_t n, uint64_t deadline)
{
    while (n) {
        size_t w = 0;
        if (SSL_write_ex(s, p, n, &w)) {
            p += w;
            n -= w;
            continue;
        }
        int e = SSL_get_error(s, 0);
        if ((e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) || !wait_for(fd, e, deadline))
            return false;
    }
    return true;
}

/* ---- the connection's steps ---- */

static bool is_ip(const char *host)
{
    unsigned char norm[256];
    size_t len;
    enum tls_name_kind k = tls_mint_name(host, norm, sizeof norm, &len);
    return k == TLS_NAME_IP4 || k == TLS_NAME_IP6;
}

/* The upstream handshake, verified for c->host. false with the reason in why. */
static bool connect_upstream(struct term_conn *c, char *why, size_t whylen)
{
    c->us = SSL_new(c->t->upstream);
    if (!c->us || SSL_set_fd(c->us, c->ufd) != 1) {
        snprintf(why, whylen, "cannot start TLS");
        return false;
    }
    SSL_set_mode(c->us, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    char bare[256];
    snprintf(bare, sizeof bare, "%s", c->host);
    if (bare[0] == '[') { /* "[v6]" */
        size_t n = strlen(bare);
        memmove(bare, bare + 1, n - 2);
        bare[n - 2] = '\0';
    }
    if (is_ip(c->host)) {
        if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->us), bare) != 1) {
            snprintf(why, whylen, "bad address");
            return false;
        }
    } else if (SSL_set_tlsext_host_name(c->us, bare) != 1 || SSL_set1_host(c->us, bare) != 1) {
        snprintf(why, whylen, "bad host name");
        return false;
    }
    if (handshake(c->us, c->ufd, false, NULL, now_ms() + TLS_TERM_HANDSHAKE_MS))
        return true;
    long v = SSL_get_verify_result(c->us);
    char err[256];
    if (v != X509_V_OK)
        snprintf(why, whylen, "its certificate does not verify: %s",
                 X509_verify_cert_error_string(v));
    else
        snprintf(why, whylen, "TLS handshake failed: %s",
                 *tls_error_line(err, sizeof err) ? err : "the server closed or timed out");
    return false;
}

static void refuse_client(struct term_conn *c, const char *why)
{
    uint64_t deadline = now_ms() + 2000;
    if (c->greeting == TLS_GREET_NONE)
        return;
    if (c->greeting == TLS_GREET_SOCKS) {
        unsigned char r[10];
        socks5_reply(0x05, r);
        (void)write_all_fd(c->cfd, (const char *)r, sizeof r, deadline);
        return;
    }
    char body[1024], msg[1280];
    snprintf(body, sizeof body, "cordon: refused %s:%u: %.500s\n", c->host, c->port, why);
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 502 Bad Gateway\r\nX-Cordon-Error: upstream-certificate\r\n"
                     "Content-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n"
                     "\r\n%s",
                     strlen(body), body);
    (void)write_all_fd(c->cfd, msg, (size_t)n, deadline);
}

static bool greet_client(struct term_conn *c)
{
    uint64_t deadline = now_ms() + TLS_TERM_HANDSHAKE_MS;
    if (c->greeting == TLS_GREET_NONE)
        return true;
    if (c->greeting == TLS_GREET_SOCKS) {
        unsigned char r[10];
        socks5_reply(0x00, r);
        return write_all_fd(c->cfd, (const char *)r, sizeof r, deadline);
    }
    static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    return write_all_fd(c->cfd, ok, sizeof ok - 1, deadline);
}

static bool accept_client(struct term_conn *c)
{
    char why[512];
    SSL_CTX *ctx = tls_mint_server_ctx(c->t->mint, c->host, why, sizeof why);
    if (!ctx) {
        LOG_W("proxy", "%s", why);
        return false;
    }
    c->cs = SSL_new(ctx);
    SSL_CTX_free(ctx); /* the SSL holds its own reference */
    if (!c->cs || SSL_set_fd(c->cs, c->cfd) != 1)
        return false;
    SSL_set_mode(c->cs, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (c->pre_len) {
        BIO *mem = BIO_new_mem_buf(c->pre, (int)c->pre_len);
        if (!mem)
            return false;
        BIO_set_mem_eof_return(mem, -1); /* drained: "retry", then the socket takes over */
        SSL_set0_rbio(c->cs, mem);
        c->pre_bio = true;
    }
    if (handshake(c->cs, c->cfd, true, &c->pre_bio, now_ms() + TLS_TERM_HANDSHAKE_MS))
        return true;
    char err[256];
    LOG_D("proxy", "TLS from the client to %s:%u failed: %s", c->host, c->port,
          tls_error_line(err, sizeof err));
    return false;
}

/* The client was refused mid-stream by the rewriter: one line, then the end. */
static void refuse_request(struct term_conn *c, const char *why)
{
    char body[1024], msg[1280];
    snprintf(body, sizeof body, "cordon: %.900s\n", why);
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 403 Forbidden\r\nX-Cordon-Error: credential-refused\r\n"
                     "Content-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n"
                     "\r\n%s",
                     strlen(body), body);
    (void)ssl_write_all(c->cs, c->cfd, msg, (size_t)n, now_ms() + 2000);
    LOG_W("proxy", "refused a request: %s", why);
    report_refusal(c, why);
}

/* One direction of the pump. */
struct dir {
    SSL *src, *dst;
    int sfd, dfd;
    bool rewrite; /* client -> server: through the rewriter */
    struct cred_out out;
    size_t off;
    bool eof, shut;
};

static void want(struct pollfd *p, int fd, int e)
{
    for (int i = 0; i < 2; i++)
        if (p[i].fd == fd)
            p[i].events |= e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
}

/* Move what can move now in d. -1: the connection is over (an error, a refusal); 1: progress. */
static int step(struct term_conn *c, struct dir *d, struct pollfd *p)
{
    int progress = 0;
    if (d->out.len == d->off && !d->eof) {
        char buf[PUMP_CHUNK];
        size_t n = 0;
        if (SSL_read_ex(d->src, buf, sizeof buf, &n)) {
            progress = 1;
            d->out.len = d->off = 0;
            if (d->rewrite && c->rw) {
                char why[512] = "";
                if (cred_rewrite_feed(c->rw, buf, n, &d->out, why, sizeof why) < 0) {
                    refuse_request(c, why);
                    return -1;
                }
            } else {
                if (d->out.cap < n) {
                    char *np = realloc(d->out.p, PUMP_CHUNK);
                    if (!np)
                        return -1;
                    d->out.p = np;
                    d->out.cap = PUMP_CHUNK;
                }
                memcpy(d->out.p, buf, n);
                d->out.len = n;
            }
        } else {
            int e = SSL_get_error(d->src, 0);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                want(p, d->sfd, e);
            else { /* close_notify, a plain EOF, or an error: this direction is over */
                d->eof = true;
                progress = 1;
            }
        }
    }
    if (d->out.len > d->off) {
        size_t w = 0;
        if (SSL_write_ex(d->dst, d->out.p + d->off, d->out.len - d->off, &w)) {
            d->off += w;
            progress = 1;
        } else {
            int e = SSL_get_error(d->dst, 0);
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                return -1;
            want(p, d->dfd, e);
        }
    }
    if (d->eof && d->out.len == d->off && !d->shut) {
        (void)SSL_shutdown(d->dst); /* close_notify, best effort */
        (void)shutdown(d->dfd, SHUT_WR);
        d->shut = true;
        progress = 1;
    }
    return progress;
}

static void pump(struct term_conn *c)
{
    struct dir up = {.src = c->cs, .dst = c->us, .sfd = c->cfd, .dfd = c->ufd, .rewrite = true};
    struct dir down = {.src = c->us, .dst = c->cs, .sfd = c->ufd, .dfd = c->cfd};
    for (;;) {
        struct pollfd p[2] = {{.fd = c->cfd}, {.fd = c->ufd}};
        int a = step(c, &up, p), b = a < 0 ? -1 : step(c, &down, p);
        if (a < 0 || b < 0 || (up.shut && down.shut))
            break;
        if (a > 0 || b > 0)
            continue;
        if (!p[0].events && !p[1].events)
            break; /* nothing to wait for: should not happen, never spin */
        int r = poll(p, 2, -1);
        if (r < 0 && errno != EINTR)
            break;
        /* a hang-up or error with nothing asked of that socket: the next read sees it */
        if ((p[0].revents | p[1].revents) & POLLNVAL)
            break;
    }
    free(up.out.p);
    free(down.out.p);
}

static void conn_end(struct term_conn *c)
{
    struct tls_terminator *t = c->t;
    SSL_free(c->cs);
    SSL_free(c->us);
    if (c->rw)
        cred_rewrite_free(c->rw);
    pthread_mutex_lock(&t->lock);
    close(c->cfd);
    close(c->ufd);
    c->cfd = c->ufd = -1;
    if (c->prev)
        c->prev->next = c->next;
    else
        t->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    t->n_conns--;
    pthread_cond_broadcast(&t->gone);
    pthread_mutex_unlock(&t->lock);
    free(c->pre);
    free(c);
}

/* What the client sends first, peeked: its first byte, or -1 when it said nothing within
 * wait_ms (a protocol where the server speaks first) or closed. */
static int client_first_byte(int fd, int wait_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, wait_ms)) < 0 && errno == EINTR)
        ;
    unsigned char b;
    if (r <= 0 || recv(fd, &b, 1, MSG_PEEK) != 1)
        return -1;
    return b;
}

/* A placeholder of credential k in a plain relay's client side (another credential's: this
 * host is one of the set's): one line, a 403 with it when the client began an HTTP request and
 * the server said nothing yet, else both sides reset (proxy_relay.c does the same). */
static void refuse_plain(struct term_conn *c, const struct cred_scan *scan, long k, bool u_spoke)
{
    char why[400];
    cred_scan_refusal(c->t->creds, k, c->host, (int)c->port, why, sizeof why);
    LOG_W("proxy", "refused a connection: %s", why);
    report_refusal(c, why);
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(c->ufd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    if (cred_scan_began_http(scan) && !u_spoke) {
        char body[512], msg[1024];
        snprintf(body, sizeof body, "cordon: %s\n", why);
        int n = snprintf(msg, sizeof msg,
                         "HTTP/1.1 403 Forbidden\r\nX-Cordon-Error: credential-refused\r\n"
                         "Content-Type: text/plain\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n%s",
                         strlen(body), body);
        (void)write_all_fd(c->cfd, msg, (size_t)n, now_ms() + 2000);
        return;
    }
    (void)setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
}

/* relay_plain's loop: *k set when a placeholder was found (nothing of that read sent), *u_spoke
 * once the server sent a byte. */
static void relay_plain_scanned(struct term_conn *c, struct cred_scan *scan, long *k, bool *u_spoke)
{
    struct {
        int from, to;
        bool eof;
    } d[2] = {{c->cfd, c->ufd, false}, {c->ufd, c->cfd, false}};
    char buf[PUMP_CHUNK];
    if (c->pre_len && !write_all_fd(c->ufd, c->pre, c->pre_len, now_ms() + TLS_TERM_HANDSHAKE_MS))
        return;
    while (!d[0].eof || !d[1].eof) {
        struct pollfd p[2];
        for (int i = 0; i < 2; i++)
            p[i] = (struct pollfd){.fd = d[i].eof ? -1 : d[i].from, .events = POLLIN};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        for (int i = 0; i < 2; i++) {
            if (d[i].eof || !p[i].revents)
                continue;
            ssize_t n = read(d[i].from, buf, sizeof buf);
            if (n > 0 && i == 0 && scan && (*k = cred_scan_feed(scan, buf, (size_t)n)) >= 0)
                return;
            if (n > 0 && i == 1)
                *u_spoke = true;
            if (n > 0) {
                if (!write_all_fd(d[i].to, buf, (size_t)n, now_ms() + TLS_TERM_HANDSHAKE_MS))
                    return;
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                d[i].eof = true;
                (void)shutdown(d[i].to, SHUT_WR);
            }
        }
    }
}

/* Not TLS after all (ssh through `cordon nc`, plain HTTP through a CONNECT): the bytes as they
 * are, both ways, as a tunnel would move them; the client's side looked through for another
 * credential's placeholder (cred_scan.h) before it is sent. */
static void relay_plain(struct term_conn *c)
{
    struct cred_scan *scan = c->t->creds ? cred_scan_new(c->t->creds, c->host, (int)c->port) : NULL;
    if (c->t->creds && !scan)
        return; /* out of memory: closed, not relayed unseen */
    long k = scan && c->pre_len ? cred_scan_feed(scan, c->pre, c->pre_len) : -1;
    bool u_spoke = false;
    if (k < 0)
        relay_plain_scanned(c, scan, &k, &u_spoke);
    if (k >= 0)
        refuse_plain(c, scan, k, u_spoke);
    cred_scan_free(scan);
}

#define CLIENT_FIRST_MS 1000 /* a client silent this long after "200" does not start TLS */

static void *conn_thread(void *arg)
{
    struct term_conn *c = arg;
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    char why[512];
    /* A CONNECT to port 443 is TLS: the server is verified before the client hears "200", so a
     * refusal is a 502 with its reason. On any other port (a credential's "host" covers them
     * all: ssh to it through `cordon nc` must still work), and on a transparent connection that
     * has not spoken yet, the client's first byte says whether it starts TLS at all. */
    bool greeted = false, tls = true;
    if (c->greeting == TLS_GREET_NONE || c->port != 443) {
        greeted = greet_client(c);
        int first =
            c->pre_len ? (unsigned char)c->pre[0] : client_first_byte(c->cfd, CLIENT_FIRST_MS);
        tls = greeted && first == 0x16; /* a TLS handshake record */
    }
    if (!tls) {
        if (greeted)
            relay_plain(c);
    } else if (!connect_upstream(c, why, sizeof why)) {
        if (!greeted)
            refuse_client(c, why);
        LOG_W("proxy", "refused %s:%u: %s", c->host, c->port, why);
        report_refusal(c, why);
    } else if ((greeted || greet_client(c)) && accept_client(c)) {
        if (c->t->creds)
            c->rw = cred_rewrite_new(c->t->creds, c->host, (int)c->port);
        if (c->rw && c->t->hooks.used)
            cred_rewrite_on_use(c->rw, c->t->hooks.used, c->t->hooks.ctx);
        if (!c->t->creds || c->rw)
            pump(c);
    }
    ERR_clear_error();
    conn_end(c);
    return NULL;
}

int tls_terminate_start(struct tls_terminator *t, int cfd, int ufd, const char *host, unsigned port,
                        enum tls_greeting greeting, const void *pre, size_t prelen)
{
    struct term_conn *c = calloc(1, sizeof *c);
    if (c && prelen && (prelen > INT_MAX || !(c->pre = malloc(prelen)))) {
        free(c);
        c = NULL;
    }
    if (c && prelen) {
        memcpy(c->pre, pre, prelen);
        c->pre_len = prelen;
    }
    pthread_mutex_lock(&t->lock);
    if (!c || t->closing || t->n_conns >= TLS_TERM_MAX) {
        pthread_mutex_unlock(&t->lock);
        if (c)
            free(c->pre);
        free(c);
        close(cfd);
        close(ufd);
        return -1;
    }
    /* the pump polls: both sockets must be non-blocking whatever the caller made them */
    (void)fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) | O_NONBLOCK);
    (void)fcntl(ufd, F_SETFL, fcntl(ufd, F_GETFL) | O_NONBLOCK);
    c->t = t;
    c->cfd = cfd;
    c->ufd = ufd;
    snprintf(c->host, sizeof c->host, "%s", host);
    c->port = port;
    c->greeting = greeting;
    c->next = t->conns;
    if (t->conns)
        t->conns->prev = c;
    t->conns = c;
    t->n_conns++;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    int err = pthread_create(&c->thread, &attr, conn_thread, c);
    pthread_attr_destroy(&attr);
    if (err) {
        t->conns = c->next;
        if (c->next)
            c->next->prev = NULL;
        t->n_conns--;
        pthread_mutex_unlock(&t->lock);
        close(cfd);
        close(ufd);
        free(c->pre);
        free(c);
        return -1;
    }
    pthread_mutex_unlock(&t->lock);
    return 0;
}

void tls_terminator_free(struct tls_terminator *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->closing = true;
    /* every thread's poll wakes on its shut sockets and ends */
    for (struct term_conn *c = t->conns; c; c = c->next) {
        (void)shutdown(c->cfd, SHUT_RDWR);
        (void)shutdown(c->ufd, SHUT_RDWR);
    }
    while (t->n_conns)
        pthread_cond_wait(&t->gone, &t->lock);
    pthread_mutex_unlock(&t->lock);
    SSL_CTX_free(t->upstream);
    tls_mint_free(t->mint);
    tls_ca_free(t->ca);
    pthread_cond_destroy(&t->gone);
    pthread_mutex_destroy(&t->lock);
    free(t);
}
