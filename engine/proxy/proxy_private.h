/* proxy_private.h — what proxy.c (the connections) and proxy_ask.c (the questions to the owner
 * and the answers kept) share inside the proxy folder: the connection and proxy structs and the
 * calls each makes into the other. Nothing outside engine/proxy/ includes it. */
#ifndef CORDON_PROXY_PRIVATE_H
#define CORDON_PROXY_PRIVATE_H
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/evloop.h"
#include "base/util.h"
#include "policy/lua_host.h"
#include "proxy/http_exchange.h"
#include "proxy/proxy.h"
#include "proxy/socks5.h"
#include "proxy/splice_pipe.h"

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
    bool c_eof, u_eof;                     /* read side ended */
    bool c_shut, u_shut;                   /* write side shut after the peer's EOF was flushed */
    uint64_t started_ms;
    uint64_t active_ms; /* last relayed byte */
    unsigned question;  /* ASKING: the question it waits for */
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

/* An answer, kept for the rest of the run. */
struct grant {
    char host[256];
    uint16_t port;
    bool allow;
    struct grant *next;
};

/* The questions and answers of one proxy (proxy_ask.c). */
struct proxy_asking {
    struct proxy_owner owner; /* ask == NULL: nobody to ask */
    uint64_t timeout_ms;
    struct question *questions;
    unsigned next_question;
    struct grant *grants;
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
};

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
/* Deny every question whose permission timeout passed by now_ms (clock_mono_ms()). */
void proxy_ask_expire(struct proxy *px, uint64_t now_ms);
/* Free the questions, the answers kept and the list of destinations asked about. */
void proxy_ask_free(struct proxy *px);
#endif
