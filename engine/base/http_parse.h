/* http_parse.h — the HTTP/1.x message parsers of the egress proxy (RFC 9110, RFC 9112): request
 * heads in the forms a forward proxy accepts (absolute-form, CONNECT authority-form), the
 * upstream request head in origin-form, chunked body tracking, response heads (for
 * keep-alive, and for the CLI's session client), and the proxy's own error responses.
 *
 * Owns no I/O, no allocation and no global state: every function reads the bytes it is given
 * and writes only into its out-parameters. The caller (the proxy's event loop) owns the
 * buffers, the sockets and the policy decision. Must never: trust a length it has not
 * checked, accept a message whose framing two parsers could read differently (request
 * smuggling), or let a header the client names in Connection remove the framing headers.
 *
 * Strictness, on purpose: only CRLF line endings; no obs-fold; no whitespace before a
 * header's colon; a host is letters, digits, '-', '.', '_' (or an IPv6 literal in brackets);
 * Transfer-Encoding in a request is exactly "chunked". */
#ifndef CORDON_HTTP_PARSE_H
#define CORDON_HTTP_PARSE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum http_parse_result {
    HTTP_PARSE_INCOMPLETE, /* the head is not complete yet: accumulate more bytes, call again */
    HTTP_PARSE_OK,         /* the head is complete: head_len bytes, through the blank line */
    HTTP_PARSE_ERROR,      /* refuse: see status (requests) and error */
};

/* How the message body after the head is delimited (RFC 9112 §6.3). */
enum http_body {
    HTTP_BODY_NONE,           /* no body: the next message starts right after the head */
    HTTP_BODY_CONTENT_LENGTH, /* exactly content_length bytes */
    HTTP_BODY_CHUNKED,        /* chunked coding: track it with http_chunked_feed */
    HTTP_BODY_UNTIL_CLOSE,    /* responses only: until the server closes (also 101 tunnels) */
};

struct http_limits {
    size_t max_request_line; /* bytes of the request line, without CRLF; over → 414 */
    size_t max_header_bytes; /* bytes of the header field lines with their CRLFs; over → 431 */
    size_t max_headers; /* number of header field lines; over → 431 (capped at HTTP_MAX_HEADERS) */
};

/* 8 KiB request line, 32 KiB of header lines, 100 headers. */
struct http_limits http_limits_default(void);

#define HTTP_MAX_HEADERS 128
#define HTTP_HOST_MAX 255

/* A byte range of the caller's buffer: buf + off, len bytes (not NUL-terminated). Offsets, not
 * pointers, so the caller may move or grow its buffer between parsing and using them. */
struct http_span {
    size_t off, len;
};

struct http_header {
    struct http_span name;  /* a token, case as sent */
    struct http_span value; /* without the surrounding optional whitespace; may be empty */
};

struct http_request {
    /* On HTTP_PARSE_ERROR: the status the proxy should answer (400, 414, 431, 501, 505) and a
     * short static text for the body or the log. Both unset otherwise. */
    int status;
    const char *error;

    size_t head_len;              /* request line + header lines + the blank line */
    struct http_span method;      /* the method token, case-sensitive ("CONNECT" exactly) */
    bool is_connect;              /* CONNECT host:port (authority-form); path is empty then */
    char host[HTTP_HOST_MAX + 1]; /* as written, NUL-terminated; an IPv6 literal without brackets */
    bool host_is_ipv6;
    uint16_t port;         /* 1..65535; 80 when an http URL has none */
    struct http_span path; /* path and query as in the URI, may be empty or start with '?';
                              * http_build_upstream makes it origin-form */
    int version_minor;     /* HTTP/1.<version_minor>: 0 or 1 */
    size_t n_headers;
    struct http_header headers[HTTP_MAX_HEADERS];
    enum http_body body;     /* NONE, CONTENT_LENGTH (may be 0) or CHUNKED; NONE for CONNECT */
    uint64_t content_length; /* with HTTP_BODY_CONTENT_LENGTH */
    bool keep_alive; /* the client's intent: 1.1 unless "close", 1.0 only with "keep-alive" */
};

/* Parse the request head at the start of buf[0..len). The caller accumulates bytes and calls
 * again with the whole buffer until the result is not INCOMPLETE; errors in complete lines
 * and exceeded limits are reported as soon as the bytes show them. lim NULL = defaults.
 * Spans in *out point into buf. Bytes after head_len (a body, or a TLS hello after CONNECT)
 * are not looked at. Each call re-reads the buffer from its start; so that a client sending
 * a byte at a time cannot cost quadratic time, call on the first read (binary is refused at
 * once), then when the new bytes hold a '\n' (nothing else completes a line), and when the
 * buffer reaches max_request_line + max_header_bytes + 12 (by then a limit is exceeded). */
enum http_parse_result http_parse_request(const char *buf, size_t len,
                                          const struct http_limits *lim, struct http_request *out);

/* The head to send upstream for a parsed non-CONNECT request: "METHOD /path?q HTTP/1.1", a
 * Host header from the URI (":port" only when not 80), the client's headers minus Host and
 * the hop-by-hop ones (Connection, Keep-Alive, Proxy-Connection, Proxy-Authorization,
 * Proxy-Authenticate, TE, Trailer, Upgrade, and every header Connection names — except
 * Content-Length and Transfer-Encoding, which the body relay depends on), then
 * "Connection: keep-alive" and the blank line. Returns the bytes written to out, or 0 when
 * cap is too small (out is then unspecified). The body is not included. */
size_t http_build_upstream(const struct http_request *req, const char *buf, char *out, size_t cap);

/* --- chunked bodies (RFC 9112 §7.1), tracked so the caller can forward bytes unchanged --- */

enum http_chunked_result {
    HTTP_CHUNKED_MORE,  /* all n bytes belong to the body; the body goes on */
    HTTP_CHUNKED_DONE,  /* the body ended after *consumed bytes of this piece */
    HTTP_CHUNKED_ERROR, /* malformed at p[*consumed]; st->error says why; close the connection */
};

struct http_chunked {
    int state;
    uint64_t remaining; /* bytes of chunk data still to pass */
    size_t line_bytes;  /* bytes of the current size line or trailer line so far */
    size_t trailer_bytes;
    bool seen_digit;
    const char *error;
};

void http_chunked_init(struct http_chunked *st);
/* Feed the next n bytes of the body, split anywhere. Chunk extensions and trailer fields are
 * passed over (checked for CRLF framing and control bytes, not interpreted). *consumed is
 * always set. After DONE or ERROR, re-initialise before the next body. */
enum http_chunked_result http_chunked_feed(struct http_chunked *st, const char *p, size_t n,
                                           size_t *consumed);
/* For a reader that wants the payload (the CLI's session client), not just the framing: how
 * many of the next bytes are chunk data. Non-zero only inside a chunk's data; those bytes are
 * then fed like any others. Framing bytes (size lines, CRLFs, trailers) show 0. */
uint64_t http_chunked_data_left(const struct http_chunked *st);

/* --- response heads, to know where a response ends on a kept-alive upstream connection --- */

struct http_response {
    const char *error; /* on HTTP_PARSE_ERROR (the proxy answers 502) */
    size_t head_len;
    int status_code; /* 100..999 */
    int version_minor;
    bool interim; /* 1xx but 101: relay the head, then parse the next response */
    enum http_body body;
    uint64_t content_length;
    bool close; /* the upstream connection cannot be reused after this response */
};

/* Parse a response head at the start of buf[0..len) (the head may be at most 64 KiB).
 * Framing: a response to HEAD, 1xx, 204 and 304 have no body; 101 is a tunnel
 * (UNTIL_CLOSE, close); Transfer-Encoding ending in chunked is CHUNKED (and wins over
 * Content-Length, then close is set), other codings and no length are UNTIL_CLOSE. */
enum http_parse_result http_parse_response(const char *buf, size_t len, bool request_was_head,
                                           struct http_response *out);

/* --- the proxy's own answers --- */

/* The reason phrase of a status code ("Error" for codes this proxy does not send). */
const char *http_reason(int status);
/* A complete response: "HTTP/1.1 <status> <reason>", Content-Type: text/plain; charset=utf-8,
 * Content-Length, Connection: close, then extra_headers (each line ending in CRLF; may be
 * NULL), the blank line and body (NULL = the reason phrase and a newline), NUL-terminated.
 * Returns the bytes written without the NUL, or 0 when cap cannot hold them and the NUL. */
size_t http_error_response(int status, const char *extra_headers, const char *body, char *out,
                           size_t cap);
#endif
