/* http_exchange.c — see http_exchange.h. */
#include "proxy/http_exchange.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

void hx_start(struct http_exchange *x, const struct http_request *req, const char *buf)
{
    free(x->rhead);
    memset(x, 0, sizeof *x);
    x->req_body = req->body;
    x->req_left = req->content_length;
    x->req_done = req->body == HTTP_BODY_NONE ||
                  (req->body == HTTP_BODY_CONTENT_LENGTH && req->content_length == 0);
    http_chunked_init(&x->req_chunked);
    x->client_keep_alive = req->keep_alive;
    x->was_head = req->method.len == 4 && memcmp(buf + req->method.off, "HEAD", 4) == 0;
}

size_t hx_request_body(struct http_exchange *x, const char *p, size_t n)
{
    if (x->req_done || n == 0)
        return 0;
    if (x->req_body == HTTP_BODY_CONTENT_LENGTH) {
        size_t take = x->req_left < n ? (size_t)x->req_left : n;
        x->req_left -= take;
        x->req_done = x->req_left == 0;
        return take;
    }
    size_t consumed = 0;
    switch (http_chunked_feed(&x->req_chunked, p, n, &consumed)) {
    case HTTP_CHUNKED_MORE:
        return n;
    case HTTP_CHUNKED_DONE:
        x->req_done = true;
        return consumed;
    case HTTP_CHUNKED_ERROR:
        x->error = x->req_chunked.error ? x->req_chunked.error : "malformed chunked request body";
        return 0;
    }
    return 0;
}

static bool header_is(const char *line, size_t len, const char *name)
{
    size_t n = strlen(name);
    return len > n && line[n] == ':' && strncasecmp(line, name, n) == 0;
}

/* Copy the response head without hop-by-hop fields (RFC 9110 §7.6.1), ending with the
 * proxy's own Connection field. */
static int emit_head(struct http_exchange *x, const struct http_response *r, hx_emit_fn emit,
                     void *ctx)
{
    static const char *const hop[] = {"Connection", "Keep-Alive", "Proxy-Connection",  "TE",
                                      "Trailer",    "Upgrade",    "Proxy-Authenticate"};
    char *out = xmalloc(r->head_len + 64);
    size_t o = 0;
    const char *p = x->rhead, *end = x->rhead + r->head_len - 2; /* before the blank line */
    bool first = true;
    while (p < end) {
        const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
        size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);
        bool drop = false;
        for (size_t i = 0; !first && i < ARRAY_LEN(hop); i++)
            drop |= header_is(p, len, hop[i]) && !(r->status_code == 101 && i == 5);
        if (!drop) {
            memcpy(out + o, p, len);
            o += len;
            memcpy(out + o, "\r\n", 2);
            o += 2;
        }
        first = false;
        p += len + 2;
    }
    const char *conn = r->status_code == 101 ? "Connection: Upgrade\r\n\r\n"
                       : hx_keep_alive(x)    ? "Connection: keep-alive\r\n\r\n"
                                             : "Connection: close\r\n\r\n";
    memcpy(out + o, conn, strlen(conn));
    o += strlen(conn);
    int rc = emit(ctx, out, o);
    free(out);
    return rc;
}

int hx_response_bytes(struct http_exchange *x, const char *p, size_t n, hx_emit_fn emit, void *ctx)
{
    while (n > 0 && !x->resp_done) {
        if (!x->head_done) {
            if (!x->rhead)
                x->rhead = xmalloc(HX_HEAD_MAX);
            size_t take = HX_HEAD_MAX - x->rhead_len < n ? HX_HEAD_MAX - x->rhead_len : n;
            memcpy(x->rhead + x->rhead_len, p, take);
            x->rhead_len += take;
            struct http_response r;
            enum http_parse_result pr =
                http_parse_response(x->rhead, x->rhead_len, x->was_head, &r);
            if (pr == HTTP_PARSE_INCOMPLETE) {
                if (x->rhead_len == HX_HEAD_MAX) {
                    x->error = "response head too large";
                    return -1;
                }
                return 0; /* all n bytes are in rhead */
            }
            if (pr == HTTP_PARSE_ERROR) {
                x->error = r.error ? r.error : "malformed response head";
                return -1;
            }
            /* Bytes of this feed past the head go on below. */
            size_t past = x->rhead_len - r.head_len;
            p += take - past;
            n -= take - past;
            x->resp_close = r.close || r.body == HTTP_BODY_UNTIL_CLOSE;
            if (!r.interim)
                x->head_done = true;
            x->resp_body = r.body;
            x->resp_left = r.content_length;
            http_chunked_init(&x->resp_chunked);
            if (emit_head(x, &r, emit, ctx) < 0)
                return -1;
            x->rhead_len = 0;
            if (r.interim)
                continue;
            x->resp_done = r.body == HTTP_BODY_NONE ||
                           (r.body == HTTP_BODY_CONTENT_LENGTH && r.content_length == 0);
            continue;
        }
        size_t take = n;
        if (x->resp_body == HTTP_BODY_CONTENT_LENGTH) {
            if (x->resp_left < take)
                take = (size_t)x->resp_left;
            x->resp_left -= take;
            x->resp_done = x->resp_left == 0;
        } else if (x->resp_body == HTTP_BODY_CHUNKED) {
            size_t consumed = 0;
            enum http_chunked_result cr = http_chunked_feed(&x->resp_chunked, p, n, &consumed);
            if (cr == HTTP_CHUNKED_ERROR) {
                x->error =
                    x->resp_chunked.error ? x->resp_chunked.error : "malformed chunked response";
                return -1;
            }
            take = consumed;
            x->resp_done = cr == HTTP_CHUNKED_DONE;
        }
        if (take && emit(ctx, p, take) < 0)
            return -1;
        p += take;
        n -= take;
    }
    return 0;
}

bool hx_upstream_eof(struct http_exchange *x)
{
    if (x->head_done && x->resp_body == HTTP_BODY_UNTIL_CLOSE)
        x->resp_done = true;
    return x->resp_done;
}

bool hx_keep_alive(const struct http_exchange *x)
{
    return x->client_keep_alive && !x->resp_close && x->req_done;
}

void hx_free(struct http_exchange *x)
{
    free(x->rhead);
    x->rhead = NULL;
}
