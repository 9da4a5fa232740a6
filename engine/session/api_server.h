/* Runs in: controller (cordon-session, on its event loop). */
/* api_server.h — the session's control API as HTTP over a Unix socket (libmicrohttpd), driven
 * by the controller's event loop (no thread of its own). Owns the HTTP mechanics only: reading
 * a request and its body, checking the peer (once per connection), and sending a response
 * now, later, or as a stream. What a request means is the handler's business (session_api.c).
 *
 * A request stays valid from the handler's call until it has been answered (api_respond*, or
 * api_stream_end) AND the server has finished with it, or until the client went away: then the
 * on_gone callback (if set) runs once and the request must not be touched after it. */
#ifndef CORDON_API_SERVER_H
#define CORDON_API_SERVER_H
#include <stdbool.h>
#include <stddef.h>
#include "base/evloop.h"

struct api_server;
struct api_request;

/* Called once per complete request (headers and body read, peer already checked). */
typedef void (*api_handler)(void *ctx, struct api_request *req);

/* Serve on listen_fd (a listening AF_UNIX stream socket, which the server then owns, and
 * closes even when it fails) from
 * loop. Clients whose uid (SO_PEERCRED) differs from this process's, or that are not alive in
 * its user namespace when they connect (asked through their SO_PEERPIDFD; before Linux 6.5
 * through a pidfd opened on SO_PEERCRED's pid and proven to be the process that connected),
 * get 403 with a JSON error and never reach the handler. Request bodies over 1 MiB get 413.
 * NULL with a line in err (also when the kernel can tell clients apart by neither way). */
struct api_server *api_server_start(struct ev_loop *loop, int listen_fd, api_handler handler,
                                    void *ctx, char *err, size_t errlen);
/* Closes the listener and every connection (their on_gone callbacks run). Call it from the
 * loop, not from a handler or an on_gone callback. */
void api_server_stop(struct api_server *s);
/* Let the server make progress on what handlers did outside its callbacks (resumed
 * connections, queued stream data); call after each round of the event loop. */
void api_server_after_round(struct api_server *s);
/* The client connections open now (kept alive between requests or not), less those whose
 * client has gone while they waited (resumed here, so that they are closed). */
unsigned api_server_clients(struct api_server *s);

const char *api_method(const struct api_request *req); /* "GET", "POST", ... */
const char *api_path(const struct api_request *req);   /* "/v1/jobs/12/stop", no query,
                                                            %-escapes decoded */
/* The value of query argument `name`, or NULL. */
const char *api_query(const struct api_request *req, const char *name);
/* The request body (NUL-terminated; len may be 0). */
const char *api_body(const struct api_request *req, size_t *len);

/* One complete response; content_type NULL means application/json. May be called from the
 * handler or later from any event-loop callback. */
void api_respond(struct api_request *req, int status, const char *content_type, const char *body,
                 size_t len);
/* {"error": msg} with status; printf-style. */
void api_respond_error(struct api_request *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A streamed 200 response of unknown length (chunked): begin once, write any number of times
 * (the bytes are copied and sent as the client takes them), end once. */
void api_stream_begin(struct api_request *req, const char *content_type);
void api_stream_write(struct api_request *req, const char *data, size_t len);
void api_stream_end(struct api_request *req);
/* Bytes written to the stream but not yet taken by the client (for back-pressure). */
size_t api_stream_pending(const struct api_request *req);

/* fn(ctx, req) runs once if the client goes away (or the server stops) before the request is
 * finished, i.e. before the handler answered it completely (api_respond*, or api_stream_end);
 * after it the request is gone. Set it while keeping a pointer to req. A client that leaves
 * while its connection waits for the handler (no answer yet, or a stream with nothing to
 * send) is noticed at the next answer or write (libmicrohttpd does not watch a suspended
 * connection). */
void api_on_gone(struct api_request *req, void (*fn)(void *ctx, struct api_request *req),
                 void *ctx);
#endif
