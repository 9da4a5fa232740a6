/* client_call.h — one request to a session for a program that reports a failure itself (the
 * MCP server: a failure is a tool result, not a line on stderr): client_http's request with
 * its failure as one sentence in a buffer, and a 2xx answer's JSON object. The CLI's commands
 * use client_reply.h, whose failures are the lines they print.
 * Uses client_http, client_reply, json_read. Must never: print, or exit. */
#ifndef CORDON_CLIENT_CALL_H
#define CORDON_CLIENT_CALL_H
#include <stddef.h>

#include "base/json_read.h"
#include "client/client_http.h"

/* One request to session `session` (method, path, body as chttp_request; sink may be NULL);
 * a streamed body is given up at clock_mono_ms() deadline_ms (0: none). 0 for a 2xx answer (a
 * non-streamed body in h->body) or a transfer the sink stopped (h->sink_stopped: the sink keeps
 * why); -1 with the sentence saying why in err (no session, a lost connection, the answer's
 * "error"). h is chttp_close'd by the caller either way. */
int ccall_request(struct chttp *h, const char *session, const char *method, const char *path,
                  const char *body, size_t body_len, chttp_sink sink, void *ctx,
                  unsigned long long deadline_ms, char *err, size_t errlen);
/* One request whose 2xx answer is a JSON object (body NUL-terminated, or NULL): the tree
 * (json_free it), or NULL with why in err. */
struct json_value *ccall_json(struct chttp *h, const char *session, const char *method,
                              const char *path, const char *body, char *err, size_t errlen);
#endif
