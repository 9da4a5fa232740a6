/* http_exchange.h — one absolute-form request and its response, as the proxy relays them on a
 * kept-alive client connection: which client bytes are this request's body (the rest is the
 * next request, decided anew), where the response ends, and the response head as the client
 * gets it (hop-by-hop fields replaced by the proxy's own Connection). Pure bookkeeping over
 * http_parse.c: no I/O, no policy. */
#ifndef CORDON_HTTP_EXCHANGE_H
#define CORDON_HTTP_EXCHANGE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/http_parse.h"

#define HX_HEAD_MAX (64 * 1024)

/* Where response bytes for the client go; 0 or -1 when they cannot be taken. */
typedef int (*hx_emit_fn)(void *ctx, const char *p, size_t n);

struct http_exchange {
    /* request */
    enum http_body req_body;
    uint64_t req_left;
    struct http_chunked req_chunked;
    bool req_done;
    bool client_keep_alive;
    bool was_head;
    /* response */
    char *rhead; /* response head being read (HX_HEAD_MAX) */
    size_t rhead_len;
    bool head_done;
    enum http_body resp_body;
    uint64_t resp_left;
    struct http_chunked resp_chunked;
    bool resp_done;
    bool resp_close;   /* the client connection must close after this response */
    const char *error; /* set when a message is malformed: close both sides */
};

/* Start an exchange for a parsed request (buf: the bytes req's spans point into). */
void hx_start(struct http_exchange *x, const struct http_request *req, const char *buf);
/* Of the client bytes p[0..n), how many are this request's body (to forward upstream)? The rest
 * belongs to the next request. Sets x->error on a malformed chunked body. */
size_t hx_request_body(struct http_exchange *x, const char *p, size_t n);
/* Upstream bytes p[0..n): emits what the client gets (the rewritten head, then the body as is).
 * Returns 0, or -1 on a malformed response (x->error) or when emit refuses. Bytes after the
 * end of the response are dropped (an upstream connection serves one request). */
int hx_response_bytes(struct http_exchange *x, const char *p, size_t n, hx_emit_fn emit, void *ctx);
/* The upstream closed: ends a response delimited by close; true if the response was complete. */
bool hx_upstream_eof(struct http_exchange *x);
/* May the client connection carry another request after this response? */
bool hx_keep_alive(const struct http_exchange *x);
void hx_free(struct http_exchange *x);
#endif
