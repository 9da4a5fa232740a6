/* client_http.h — the client's only HTTP: one HTTP/1.1 request per connection to the session's
 * Unix socket (docs/session-api.md), written here and its answer read with base/http_parse
 * (status line and headers; a Content-Length, chunked or until-close body). Owns the connect,
 * the request bytes, collecting or streaming an answer's body, telling a missing or stale
 * session (connect failed with ENOENT / ECONNREFUSED) from a lost connection or a malformed
 * answer, and those lines.
 * Uses session_socket (path, stale files), http_parse, util (allocation). Must never: interpret
 * an answer's JSON (client_reply.c does), connect anywhere but a session's socket, or keep a
 * connection past the request (a session stops only when its clients are gone). */
#ifndef CORDON_CLIENT_HTTP_H
#define CORDON_CLIENT_HTTP_H
#include <stdbool.h>
#include <stddef.h>
#include "base/session_socket.h"

/* Gets each piece of a 2xx answer's body as it arrives. 0 to go on; -1 stops the transfer
 * (the sink has said why). */
typedef int (*chttp_sink)(void *ctx, const char *data, size_t len);

struct chttp {
    const char *cmd;           /* "exec", "session status": the prefix of error lines */
    const char *name;          /* the session's name */
    char path[CSOCK_PATH_MAX]; /* its socket */
    bool quiet_missing;        /* say nothing about a missing session (session list) */
    bool missing;              /* the last request found no session there (or a stale one) */
    int connect_errno;         /* why the connect failed, or 0 */
    long status;               /* HTTP status of the last answer; 0 before one came */
    chttp_sink sink;
    void *sink_ctx;
    bool sink_stopped; /* the sink stopped the transfer (or body_deadline_ms passed) */
    /* clock_mono_ms() after which a streamed body is given up as the sink would stop it
     * (h->timed_out set too); 0: none. Set by the caller before chttp_request. */
    unsigned long long body_deadline_ms;
    bool timed_out;
    char *body; /* a non-streamed answer's body (NUL-terminated), or NULL */
    size_t body_len, body_cap;
    bool malformed;    /* the failure is the answer's framing, not the connection */
    char failure[160]; /* why the last request failed, or "" */
    int fd;            /* the connection during a request, else -1 */
};

/* Set up h for session `name` (a valid name) and command `cmd` (both borrowed for h's life).
 * Nothing is connected yet. 0, or 125 after printing why (a socket path too long). h can be
 * chttp_closed either way. */
int chttp_open(struct chttp *h, const char *cmd, const char *name, bool quiet_missing);
/* One request on a connection of its own: method "GET" or "POST", path "/v1/..." (visible
 * ASCII, escaped by the caller), body (JSON, may be NULL: a POST then sends an empty body).
 * With a sink, a 2xx answer's body goes to it as it arrives; any other body is collected in
 * h->body. 0 when the answer came whole (status in h->status), -1 when it did not (chttp_lost
 * prints why) or the sink stopped it (h->sink_stopped). A session whose socket is missing sets
 * h->missing; so does a stale one (connect refused), after removing its socket and jobs file.
 * No time limit: a command may run silently for hours, and a session that ends closes the
 * connection. */
int chttp_request(struct chttp *h, const char *method, const char *path, const char *body,
                  size_t body_len, chttp_sink sink, void *sink_ctx);
/* Why the last request failed: "cordon: no session named 'NAME' (...)" (unless quiet_missing),
 * "cordon: CMD: cannot connect to session 'NAME' at PATH: <strerror>",
 * "cordon: CMD: lost the connection to session 'NAME': <why>" or
 * "cordon: CMD: session 'NAME' sent a malformed HTTP answer: <why>". Returns 125. */
int chttp_lost(const struct chttp *h);
/* Is the last answer's status 2xx? */
bool chttp_ok(const struct chttp *h);
/* Percent-escape s for a URL path segment (all but RFC 3986's unreserved characters); free
 * it. Never NULL (allocation failure ends the process, as everywhere in the CLI). */
char *chttp_escape(const char *s);
void chttp_close(struct chttp *h);
#endif
