/* proxy_private.h — what the files of the proxy's connections share inside the proxy folder: the
 * connection and proxy structs, the limits, and the calls each makes into the others.
 *   proxy.c            the listeners, the states and the one function that moves a connection
 *                      between them (proxy_conn_update), request heads, decisions, replies, the
 *                      lingering close, the sweep;
 *   proxy_connect.c    resolving an allowed destination and connecting out;
 *   proxy_relay.c      the buffers, the tunnel relay and one HTTP exchange;
 *   proxy_redirected.c the connections network.transparent redirects (CONN_TRANSPARENT);
 *   proxy_ask.c        the questions to the owner and the answers kept.
 * Runs in: the controller (the proxy's event loop). Nothing outside engine/proxy/ includes it. */
#ifndef CORDON_PROXY_PRIVATE_H
#define CORDON_PROXY_PRIVATE_H
#include <netdb.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/evloop.h"
#include "base/util.h"
#include "policy/lua_host.h"
#include "proxy/cred_rewrite.h"
#include "proxy/cred_scan.h"
#include "proxy/http_exchange.h"
#include "proxy/proxy.h"
#include "proxy/socks5.h"
#include "proxy/splice_pipe.h"
#include "proxy/tls_terminate.h"

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

/* CONN_TRANSPARENT: network.transparent, a connection redirected from any address (transparent.h) */
enum conn_kind { CONN_HTTP, CONN_SOCKS, CONN_TRANSPARENT };
enum conn_state {
    ST_HEAD,
    ST_ASKING,
    ST_RESOLVING,
    ST_CONNECTING,
    ST_RELAY,
    ST_HTTP,
    ST_CLOSING,
    ST_LINGER
};

struct relay_buf {
    char *data;
    size_t off, len; /* pending bytes are data[off, off+len) */
};

struct conn {
    struct proxy *px;
    enum conn_kind kind;
    enum conn_state state;
    int cfd, ufd;
    struct ev_io cw, uw;
    char *head; /* HEAD state: bytes read so far (and, for HTTP, the next request) */
    size_t head_len, head_cap;
    struct socks5_parser socks;
    char host[256];
    uint16_t port;
    bool is_connect;  /* HTTP CONNECT */
    char orig_ip[46]; /* CONN_TRANSPARENT: the address the client connected to */
    bool pin_orig;    /* connect to orig_ip (the DNS stub's answer for host, or host is it) */
    /* CONN_TRANSPARENT without a DNS name, orig_ip allowed by a rule of its own: its decision
     * (audited if it is the one used) while ufd connects there ahead of the client's first bytes;
     * spec_up once that connection is established */
    struct net_decision *spec_d;
    bool spec_up;
    enum net_kind net_kind;
    struct resolve_job *job;
    struct addrinfo *addrs, *next_addr;
    struct relay_buf c2u, u2c;
    struct splice_pipe c2u_pipe, u2c_pipe; /* RELAY: the bytes after the buffered ones */
    struct http_exchange hx;               /* HTTP state */
    /* RELAY with declared credentials, not TLS-terminated: the client's bytes are read, looked
     * through for a placeholder (cred_scan.h) and sent, not spliced; u_spoke: a byte of the
     * server's reached the relay (a refusal can no longer be answered with a 403). */
    struct cred_scan *scan;
    bool u_spoke;
    /* CONN_HTTP with declared credentials: every client byte goes through the rewriter
     * (cred_rewrite.h) before the proxy reads it; cred_out holds what it gave and the proxy has
     * not taken yet (from cred_off), cred_wake brings the proxy back to take it. */
    struct cred_rewrite *cred;
    struct cred_out cred_out;
    size_t cred_off;
    bool cred_eof;
    struct ev_timer cred_wake;
    bool c_eof, u_eof;   /* read side ended */
    bool c_shut, u_shut; /* write side shut after the peer's EOF was flushed */
    uint64_t started_ms;
    uint64_t active_ms; /* last relayed byte */
    unsigned question;  /* ASKING: the question it waits for */
    unsigned grant;     /* the person's grant it was let through under (proxy_revoke closes
                         * it), 0: the policy's own allow */
    bool closed;
    uint64_t linger_until_ms; /* LINGER: close by then at the latest */
    size_t lingered;          /* LINGER: bytes read and dropped so far */
    struct conn *prev, *next; /* all open connections */
    struct conn *next_closed;
};

/* One question to the owner about host:port, shared by every connection that waits for it
 * (proxy_ask.c). */
struct question {
    unsigned id;
    char host[256];
    uint16_t port;
    /* the address of the connection that asked first, as the sandbox's network sees it: who
     * holds that socket is who asked (the owner tells its commands apart by it) */
    struct sockaddr_storage client;
    socklen_t client_len;
    uint64_t deadline_ms;
    struct question *next;
};

/* An answer or a grant made ahead, kept for the rest of the run, until its end (expires_ms),
 * or until revoked (proxy_revoke) or forgotten (proxy_forget). */
struct grant {
    unsigned id; /* an allow's: what `cordon grants` shows and `revoke` names; 0 for a denial */
    char host[256];
    uint16_t port;
    bool allow;
    bool command;        /* it holds while the commands running when it was given run */
    char by[96];         /* who gave it */
    double granted;      /* Unix seconds */
    double expires;      /* Unix seconds, 0: no end of its own */
    uint64_t expires_ms; /* the same on the monotonic clock, 0: none */
    struct grant *next;
};

/* The questions and answers of one proxy (proxy_ask.c). */
struct proxy_asking {
    struct proxy_owner owner; /* ask == NULL: nobody to ask */
    uint64_t timeout_ms;
    struct question *questions;
    unsigned next_question;
    struct grant *grants;
    size_t n_grants;       /* at most PROXY_GRANTS_MAX */
    unsigned next_grant;   /* the last grant id given */
    struct str_list asked; /* "host:port" the owner was asked about */
};

struct proxy {
    struct ev_loop *loop;
    int http_fd, socks_fd;
    int transparent_fd; /* -1 without network.transparent */
    struct ev_io http_w, socks_w, resolver_w, transparent_w;
    struct ev_timer sweep;
    struct resolver *resolver;
    struct dns_stub *dns; /* the sandbox's resolver (dns_stub.c), NULL without one */
    char *command;
    struct conn *conns, *closed;
    size_t n_conns;
    struct audit_log *audit;
    struct proxy_asking asking; /* proxy_ask.c's */
    struct str_list denied;     /* "host:port" refused ("host:port\tRULE" when a deny rule did),
                                 * for refusal detection (at most 64) */
    uint64_t denied_at[64];     /* the refusal count when denied.items[i] was last refused */
    uint64_t denials;           /* refusals so far */
    struct cred_set *creds;     /* the sandbox's declared credentials, NULL: none */
    struct tls_terminator *tls; /* TLS termination of CONNECTs to their hosts, NULL: none */
};

/* ---- proxy.c, for the other parts ---- */

/* Register the events each side of c needs in its state now. */
void proxy_conn_update(struct conn *c);
/* Close c: off its watches now, freed by proxy_after_round (never inside a callback). */
void proxy_conn_close(struct conn *c);
/* Room for at least one more byte of head (up to HEAD_MAX): the number of bytes free. */
size_t proxy_head_room(struct conn *c, size_t want);
void proxy_http_error(struct conn *c, int status, const char *extra_headers, const char *body);
void proxy_socks_error(struct conn *c, unsigned char code);
void proxy_transparent_reset(struct conn *c);
/* Ask the policy about c's destination and act on the answer (connect, refuse or ask). */
void proxy_decide_and_go(struct conn *c);
void proxy_parse_http_head(struct conn *c);
/* read(2) of the client's bytes of a CONN_HTTP connection, through the credentials' rewriter
 * when there is one: -1 with errno EACCES when the rewriter refused the stream (then the
 * connection is answered or closed here). */
ssize_t proxy_client_read(struct conn *c, char *buf, size_t room);
void proxy_on_upstream(struct ev_loop *loop, struct ev_io *w, uint32_t events);

/* ---- proxy_connect.c ---- */

void proxy_connect_failed(struct conn *c, int err);
/* The non-blocking connect is over: on to the next address, or relay. */
void proxy_connect_result(struct conn *c);
void proxy_connected(struct conn *c);
bool proxy_is_unspecified_address(const struct sockaddr *sa);

/* ---- proxy_relay.c ---- */

size_t proxy_buf_space(const struct relay_buf *b);
int proxy_buf_append(struct relay_buf *b, const char *p, size_t n);
ssize_t proxy_buf_flush(struct relay_buf *b, int fd);
void proxy_buf_release(struct relay_buf *b);
bool proxy_direction_drained(const struct relay_buf *b, const struct splice_pipe *p);
/* The relay directions (DIR_C2U, DIR_U2C) an event on the client's or upstream's socket
 * concerns. */
enum { DIR_C2U = 1, DIR_U2C = 2 };
unsigned proxy_client_dirs(uint32_t ev);
unsigned proxy_upstream_dirs(uint32_t ev);
void proxy_relay(struct conn *c, unsigned dirs);
/* The relay of c is about to start (ST_RELAY, not TLS-terminated): with declared credentials,
 * look through the client's side for their placeholders from now on, beginning with what is
 * buffered. false: a placeholder was there already and c was refused (closed). */
bool proxy_relay_scan_start(struct conn *c);
void proxy_http_exchange(struct conn *c);

/* ---- proxy_redirected.c ---- */

void proxy_transparent_start(struct conn *c);
void proxy_transparent_decide(struct conn *c, const char *name);
void proxy_spec_event(struct conn *c, uint32_t events);
void proxy_read_transparent_head(struct conn *c);

/* ---- proxy.c, for proxy_ask.c ---- */

/* A decision to allow c: resolve its destination and connect (or relay). */
void proxy_conn_resolve(struct conn *c);
/* A decision to refuse c: a 403 or a SOCKS refusal, remembered for refusal detection. */
void proxy_conn_refuse(struct conn *c, const struct net_decision *d);

/* ---- proxy_ask.c, for proxy.c ---- */

/* The policy answered d for c (lh_network_decide, LH_OK): amend it with what a person said
 * earlier in this run (an answer or a grant), or, for an "ask" nobody answered yet with an
 * owner to ask, ask (once per host:port) and return true: c then waits (c->question). */
bool proxy_ask_amend(struct conn *c, struct net_decision *d);
/* Deny every question whose permission timeout passed by now_ms (clock_mono_ms()), and end
 * every grant whose time is over (one audit line each; what it let through stays open). */
void proxy_ask_expire(struct proxy *px, uint64_t now_ms);
/* A grant in force names host (any port): the DNS stub answers it (ctx: the proxy). */
bool proxy_name_granted(void *ctx, const char *host);
/* Free the questions, the answers kept and the list of destinations asked about. */
void proxy_ask_free(struct proxy *px);
#endif
