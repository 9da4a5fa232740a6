/* cred_rewrite.h — declared credentials and their substitution in HTTP/1.x requests.
 *
 * A sandbox declares credentials (NAME, the hosts[:port] each may go to). Inside, NAME holds a
 * placeholder unique to the sandbox; the real value exists only in the controller's proxy
 * process. The rewriter reads one client->server byte stream of HTTP/1.x requests (plain
 * http_proxy traffic, or what TLS termination decrypted) and, for each request:
 *   - to one of the credential's hosts: replaces its placeholder by the value in the request
 *     line, the header fields (an `Authorization: Basic` field is decoded, rewritten and
 *     re-encoded) and the body (bounded, streamed: Content-Length and chunked bodies; a body
 *     with a Content-Encoding is passed as it is, see docs/network.md);
 *   - to any other destination: refuses the whole request when it carries a placeholder.
 * Pure bytes in, bytes out: no I/O, no global state; the caller owns the sockets.
 * Must never: put a value into a request to a host the credential does not name, or let a
 * placeholder through to another host by splitting it across reads, header lines or chunks. */
#ifndef CORDON_CRED_REWRITE_H
#define CORDON_CRED_REWRITE_H
#include <stdbool.h>
#include <stddef.h>

/* The sandbox's declared credentials (name, placeholder, value, hosts[:port]); built in the
 * controller. */
struct cred_set;

/* A growable output buffer: cred_rewrite_feed appends to it (p reallocated with realloc; the
 * caller frees p and may reset len to 0 after sending). */
struct cred_out {
    char *p;
    size_t len, cap;
};

/* An empty set. */
struct cred_set *cred_set_new(void);
/* Add credential name with its placeholder and value (copied; value may hold any bytes but
 * NUL) allowed to each of hosts[0..n_hosts): "host" (any port) or "host:port" ("[v6]:port").
 * 0, or -1 with a one-line reason in why (a bad name or host, an empty value, a placeholder
 * that is not unique). */
int cred_set_add(struct cred_set *set, const char *name, const char *placeholder, const char *value,
                 const char *const *hosts, size_t n_hosts, char *why, size_t whylen);
size_t cred_set_count(const struct cred_set *set);
void cred_set_free(struct cred_set *set); /* wipes the values before freeing them */

/* The i-th credential's name and placeholder (i < cred_set_count), and whether it may go to
 * host:port. */
const char *cred_set_name(const struct cred_set *set, size_t i);
const char *cred_set_placeholder(const struct cred_set *set, size_t i);
bool cred_set_allows(const struct cred_set *set, size_t i, const char *host, int port);

/* Is host:port one a credential of set may go to (so TLS to it is worth terminating)? */
bool cred_set_matches_host(const struct cred_set *set, const char *host, int port);

/* One client->server byte stream of HTTP/1.x requests. host/port: the destination the
 * connection goes to (CONNECT target, transparent destination), or NULL/0 for a forward
 * proxy stream in which each request names its own absolute-form destination. The set must
 * outlive the rewriter. */
struct cred_rewrite;
struct cred_rewrite *cred_rewrite_new(const struct cred_set *set, const char *host, int port);

/* Called once per request in which a credential was substituted (for the audit log: the name
 * and the destination, never the value). */
typedef void cred_use_fn(void *ctx, const char *name, const char *host, int port);
void cred_rewrite_on_use(struct cred_rewrite *rw, cred_use_fn *fn, void *ctx);

/* Feed n bytes the client sent. Appends to *out what to send upstream. Returns 0, or -1 with
 * a one-line reason in why (the placeholder of credential X went to HOST:PORT, or a
 * malformed/too large head): the caller answers 403 and closes. A request refused for its
 * head put nothing of itself in *out; one refused for its body may have had its head and
 * the body before the placeholder appended (never the whole placeholder): the closed
 * connection leaves that request incomplete upstream. After -1 every later call returns -1. */
int cred_rewrite_feed(struct cred_rewrite *rw, const char *in, size_t n, struct cred_out *out,
                      char *why, size_t whylen);
void cred_rewrite_free(struct cred_rewrite *rw);
/* The destination of the request being read ("" and 0 before the first head), for the caller's
 * log line after a refusal. */
const char *cred_rewrite_destination(const struct cred_rewrite *rw, int *port);

#endif
