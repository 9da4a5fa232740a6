/* proxy.h — the egress proxy: HTTP (absolute-form requests and CONNECT) on one listener, SOCKS5
 * (CONNECT) on the other, both listening inside the sandbox's network namespace and served here,
 * on the controller's event loop, connecting out from the host's namespace. Every new
 * destination is decided by the `network` hook (lh_network_decide); a refusal is a 403 with
 * X-Cordon-Error: blocked-by-policy or SOCKS reply 0x02, and every decision is one JSON line in
 * the audit log. Names are resolved by resolver.c's threads. Never blocks the loop. */
#ifndef CORDON_PROXY_H
#define CORDON_PROXY_H
#include <stdint.h>
#include <sys/socket.h>
#include "base/evloop.h"
#include "base/util.h"

struct proxy;

/* Takes ownership of the two listening fds. command: the sandboxed command's argv (for the
 * decisions and the audit log). NULL on failure (logged). */
struct proxy *proxy_new(struct ev_loop *loop, int http_listen_fd, int socks_listen_fd,
                        char **command);
/* Someone who can answer questions about unlisted destinations (the terminal of `cordon run`).
 * ask: show question id; answer later with proxy_answer(). closed: question id was settled
 * without the owner (it timed out): stop showing it. */
struct proxy_owner {
    void *ctx;
    void (*ask)(void *ctx, unsigned id, const char *text);
    void (*closed)(void *ctx, unsigned id, const char *why);
};
enum proxy_answer { PROXY_ALLOW_COMMAND, PROXY_ALLOW_SESSION, PROXY_DENY };

/* How an allow is given (proxy_answer, proxy_grant). */
struct proxy_grant_terms {
    const char *by; /* who gave it, as `cordon grants` shows it; NULL: "the owner" */
    double for_s;   /* > 0: it ends that many seconds from now; 0: no end of its own */
    bool command;   /* proxy_grant: for the commands running now (or the next one) only */
};

/* At most this many answers and grants are kept; beyond, a new one is refused in one line
 * (an answer still settles the connections that wait for it). */
#define PROXY_GRANTS_MAX 256

/* With an owner, a destination the policy answers "ask" for waits for the owner's answer (all
 * connections to one host:port share one question; the answer is kept for the rest of the
 * run, or until terms->for_s has passed); without one, or after timeout_s seconds, it is
 * denied. terms may be NULL. */
void proxy_set_owner(struct proxy *px, const struct proxy_owner *owner, double timeout_s);
void proxy_answer(struct proxy *px, unsigned id, enum proxy_answer answer,
                  const struct proxy_grant_terms *terms);
/* The destination pending question id is about (host: at most 255 bytes); false when no such
 * question is pending. */
bool proxy_question_target(const struct proxy *px, unsigned id, char *host, size_t n,
                           unsigned *port);
/* The client address (inside the sandbox's network) of the connection that asked pending
 * question id; false when no such question is pending or the address is not known. */
bool proxy_question_client(const struct proxy *px, unsigned id, struct sockaddr_storage *client);
/* Keep an answer for host:port as if the owner had given it (a grant made after a refusal or
 * ahead of a question), replacing the one kept; or forget the one kept (an "allow for this
 * command" whose command has ended). A deny rule of the policy still wins over an allow kept.
 * The grant's id (> 0) for an allow, 0 for a denial, -ENOSPC when PROXY_GRANTS_MAX are kept
 * (said in one line). terms may be NULL. */
int proxy_grant(struct proxy *px, const char *host, unsigned port, bool allow,
                const struct proxy_grant_terms *terms);
void proxy_forget(struct proxy *px, const char *host, unsigned port);

/* One allow in force, as `cordon grants` lists it. */
struct proxy_grant_info {
    unsigned id;
    char host[256];
    unsigned port;
    char by[96];
    double granted, expires; /* Unix seconds; expires 0: no end of its own */
    bool command;            /* for the commands running when it was given (answered "once") */
    unsigned open;           /* connections open under it now */
};
/* The allows in force, oldest first, in out[0..max): their number (which may exceed max).
 * Those whose time is over are dropped first (one audit line each). */
size_t proxy_grants(struct proxy *px, struct proxy_grant_info *out, size_t max);
/* End grant id now: a later connection is decided as if it had never been given, and every
 * connection open under it is closed (one audit line each). The number closed, or -ENOENT. */
int proxy_revoke(struct proxy *px, unsigned id, const char *by);

/* The destinations refused so far ("host:port", each once; "host:port\tRULE" when a deny rule
 * refused it), for refusal detection. */
const struct str_list *proxy_denied(const struct proxy *px);
/* A mark for proxy_denied_since(): the number of refusals so far. */
uint64_t proxy_denial_mark(const struct proxy *px);
/* The destinations refused after mark (each once) appended to out: what one command of a
 * session was refused. */
void proxy_denied_since(const struct proxy *px, uint64_t mark, struct str_list *out);
/* The destinations the owner was asked about so far ("host:port", each once). */
const struct str_list *proxy_asked(const struct proxy *px);

/* Serve the sandbox's resolver (dns_stub.h) on these two listeners (made by init inside the
 * sandbox's namespace; either may be -1), with the proxy's resolver, policy and audit log.
 * Takes ownership of the fds. 0, or -1 (logged: the sandbox has no DNS). */
int proxy_attach_dns(struct proxy *px, int udp_fd, int tcp_fd);

/* network.transparent: accept on listen_fd (made by init; every TCP connection from inside not
 * to the sandbox's loopback is redirected to it) and decide each connection by the name the
 * DNS stub answered its address for, else the TLS server name or HTTP Host it sends, else the
 * address (transparent.c). Takes ownership of the fd. 0, or -1 (logged). */
int proxy_attach_transparent(struct proxy *px, int listen_fd);

/* The sandbox's declared credentials (cred_rewrite.h; the proxy takes set): every plain HTTP
 * request through the HTTP listener gets them substituted for their placeholders when it goes
 * to one of their hosts, and is refused (403) when it carries one elsewhere. Each use and
 * each refusal is one line of the audit log, with the credential's name, never its value. */
struct cred_set;
void proxy_set_credentials(struct proxy *px, struct cred_set *set);
/* TLS termination (tls_terminate.h; the proxy takes t): a CONNECT, HTTP or SOCKS, or a
 * network.transparent connection that starts TLS, to a host one of the credentials may go to
 * (cred_set_matches_host) is handed to t once the server is connected, so that HTTPS requests
 * get their placeholders replaced too; every other connection stays a tunnel, its TLS end to
 * end. Call after proxy_set_credentials. */
struct tls_terminator;
void proxy_set_tls(struct proxy *px, struct tls_terminator *t);

/* Free what closed during the last loop round; call after each ev_run_once(). */
void proxy_after_round(struct proxy *px);
/* Close every connection and the listeners. NULL is fine. */
void proxy_free(struct proxy *px);
#endif
