/* tls_terminate.h — TLS termination of a CONNECT to a credential host (issue 32): the client's
 * TLS ends here with a leaf the sandbox's CA signed for the host (tls_mint.h), a second TLS
 * connection goes to the real server, verified against the host's trust store plus
 * network.upstream_ca (hostname or IP checked), and the client's plaintext goes through the
 * credential rewriter (cred_rewrite.h) on its way up; the server's comes back as it is.
 * On a port other than 443 the client's first byte decides: what does not start TLS is
 * relayed as it is (ssh to a credential's host through `cordon nc`).
 * Each terminated connection is pumped by a thread of its own (blocking the proxy's loop on
 * handshakes is not an option, and OpenSSL's objects are simplest owned by one thread); the
 * threads touch only the two sockets, the terminator's read-only contexts, the mint (locked),
 * the credential set (read-only) and the hooks (the audit log: one write(2) a line). Never Lua
 * or the loop. Runs in: the controller. */
#ifndef CORDON_TLS_TERMINATE_H
#define CORDON_TLS_TERMINATE_H
#include <stdbool.h>
#include <stddef.h>

#include "proxy/tls_ca.h"

struct cred_set;
struct tls_terminator;

#define TLS_TERM_MAX 256            /* terminated connections at once; more are refused */
#define TLS_TERM_HANDSHAKE_MS 30000 /* each handshake must be over in this time */

/* A terminator signing with a fresh CA of its own. upstream_ca: a PEM file of extra
 * authorities the real servers may chain to (network.upstream_ca), or NULL. system_store:
 * trust the host's default store too (false only in tests). creds: the set the rewriter
 * applies (outlives the terminator; NULL: pass the plaintext through). NULL with a one-line
 * reason in why (the upstream CA file unreadable or holding no certificate, ...). */
struct tls_terminator *tls_terminator_new(const char *upstream_ca, bool system_store,
                                          const struct cred_set *creds, char *why, size_t whylen);
/* The PEM of the CA the client is to trust (the trust bundle inside). */
const char *tls_terminator_ca_pem(const struct tls_terminator *t);

/* How the client learns the tunnel is up: a CONNECT's 200, SOCKS reply 0, nothing (a
 * network.transparent connection, which sent its ClientHello already). */
enum tls_greeting { TLS_GREET_HTTP, TLS_GREET_SOCKS, TLS_GREET_NONE };

/* Terminate the connection: cfd the client's (a CONNECT allowed, not answered yet), ufd the
 * server's (connected), both owned by the terminator from now on, whatever the result; pre:
 * what the client sent already (its ClientHello, or part of it), read before the socket's.
 * Once the server's certificate verifies, the client gets its protocol's success (a 200 to a
 * CONNECT, SOCKS reply 0); when it does not, one line saying why on cordon's stderr and to the
 * client (a 502 with X-Cordon-Error: upstream-certificate; SOCKS reply 0x05; a transparent
 * connection is closed). 0, or -1 when no thread could take it (both fds closed). */
int tls_terminate_start(struct tls_terminator *t, int cfd, int ufd, const char *host, unsigned port,
                        enum tls_greeting greeting, const void *pre, size_t prelen);
/* What the connections' threads report, for the audit log: a credential put in for its
 * placeholder (name, destination; never the value), and a refusal (a server that failed
 * verification, a placeholder bound elsewhere) with its one-line reason. Called on those
 * threads: both must be safe to call from any thread. */
struct tls_term_hooks {
    void *ctx;
    void (*used)(void *ctx, const char *name, const char *host, int port);
    void (*refused)(void *ctx, const char *host, unsigned port, const char *why);
};
/* Set before the first tls_terminate_start. */
void tls_terminator_set_hooks(struct tls_terminator *t, const struct tls_term_hooks *hooks);
/* Connections being pumped now. */
size_t tls_terminator_active(struct tls_terminator *t);
/* End every connection (their sockets shut), wait for their threads, free. NULL is fine. */
void tls_terminator_free(struct tls_terminator *t);
#endif
