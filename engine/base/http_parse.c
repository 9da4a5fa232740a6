/* http_parse.c — see http_parse.h. Pure functions over caller buffers: no I/O, no allocation,
 * no globals but constant tables. Every length is checked before a byte is read. */
#include "base/http_parse.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"

/* Leading empty lines a request may carry (RFC 9112 §2.2: a client may send a CRLF after a
 * POST body); at most this many are skipped, and they count in head_len. */
#define LEADING_CRLF_MAX 4
#define RESPONSE_HEAD_MAX (64 * 1024)
#define CHUNK_LINE_MAX 4096 /* a chunk-size line with its extensions */
#define CHUNK_TRAILERS_MAX (32 * 1024)

struct http_limits http_limits_default(void)
{
    return (struct http_limits){
        .max_request_line = 8 * 1024, .max_header_bytes = 32 * 1024, .max_headers = 100};
}

/* --- character classes (RFC 9110 §5.6.2) --- */

static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* field-vchar, SP, HTAB (obs-text included): what a field value or reason phrase may hold. */
static bool is_field_char(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* A host name character: letters, digits, '-', '.', '_'. Stricter than RFC 3986 reg-name on
 * purpose: percent-encoding, sub-delims and userinfo have no place in a name the policy matches. */
static bool is_host_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' ||
           c == '.' || c == '_';
}

static bool span_eq_ci(const char *buf, struct http_span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.len == n && strncasecmp(buf + s.off, lit, n) == 0;
}

static bool mem_eq_ci(const char *p, size_t n, const char *lit)
{
    return n == strlen(lit) && strncasecmp(p, lit, n) == 0;
}

/* Call fn on each element of a comma-separated list, trimmed of OWS; empty elements skipped. */
static void for_each_list_item(const char *p, size_t n, void (*fn)(const char *, size_t, void *),
                               void *ctx)
{
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        while (i < n && p[i] != ',')
            i++;
        size_t a = start, b = i;
        while (a < b && (p[a] == ' ' || p[a] == '\t'))
            a++;
        while (b > a && (p[b - 1] == ' ' || p[b - 1] == '\t'))
            b--;
        if (b > a)
            fn(p + a, b - a, ctx);
        i++; /* past the comma */
    }
}

/* --- header field lines, shared by requests and responses --- */

/* Parse one field line buf[start..end) (CRLF excluded). Sets name and value spans. Returns NULL
 * or the reason it is malformed. */
static const char *parse_field_line(const char *buf, size_t start, size_t end,
                                    struct http_header *h)
{
    size_t i = start;
    while (i < end && is_tchar((unsigned char)buf[i]))
        i++;
    if (i == end)
        return "header line without a colon";
    if (buf[i] != ':') {
        if (buf[i] == ' ' || buf[i] == '\t')
            return "whitespace between header name and colon";
        return "invalid character in header name";
    }
    if (i == start)
        return "empty header name";
    h->name = (struct http_span){start, i - start};
    i++;
    while (i < end && (buf[i] == ' ' || buf[i] == '\t'))
        i++;
    size_t vend = end;
    while (vend > i && (buf[vend - 1] == ' ' || buf[vend - 1] == '\t'))
        vend--;
    for (size_t k = i; k < vend; k++)
        if (!is_field_char((unsigned char)buf[k]))
            return "invalid character in header value";
    h->value = (struct http_span){i, vend - i};
    return NULL;
}

/* Content-Length: 1*DIGIT, possibly repeated as a list of identical values (RFC 9110 §8.6).
 * The state accumulates across header lines; bad is set by a malformed or conflicting value. */
struct cl_state {
    bool have, bad;
    size_t items;
    uint64_t value;
};

static void cl_item(const char *p, size_t n, void *ctx)
{
    struct cl_state *cl = ctx;
    uint64_t v = 0;
    cl->items++;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit((unsigned char)p[i]) || v > (UINT64_MAX - 9) / 10) {
            cl->bad = true;
            return;
        }
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    if (cl->have && cl->value != v)
        cl->bad = true;
    cl->have = true;
    cl->value = v;
}

static void content_length_header(const char *buf, struct http_span v, struct cl_state *cl)
{
    size_t before = cl->items;
    for_each_list_item(buf + v.off, v.len, cl_item, cl);
    if (cl->items == before) /* an empty value, or only commas */
        cl->bad = true;
}

struct conn_state {
    bool close, keep_alive;
};

static void conn_item(const char *p, size_t n, void *ctx)
{
    struct conn_state *c = ctx;
    if (mem_eq_ci(p, n, "close"))
        c->close = true;
    else if (mem_eq_ci(p, n, "keep-alive"))
        c->keep_alive = true;
}

/* --- request --- */

static enum http_parse_result req_error(struct http_request *out, int status, const char *error)
{
    out->status = status;
    out->error = error;
    return HTTP_PARSE_ERROR;
}

/* host [":" port] at s[0..n); IPv6 literals in brackets. The caller has refused '@'. */
static const char *parse_authority(const char *s, size_t n, bool port_required,
                                   struct http_request *out)
{
    size_t i = 0, hlen;
    const char *h;
    if (n > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close)
            return "unterminated IPv6 literal in host";
        h = s + 1;
        hlen = (size_t)(close - h);
        bool colon = false;
        for (size_t k = 0; k < hlen; k++) {
            unsigned char c = (unsigned char)h[k];
            if (c == ':')
                colon = true;
            else if (hex_value(c) < 0 && c != '.')
                return "invalid character in IPv6 literal";
        }
        if (!colon || hlen < 2 || hlen > 45)
            return "invalid IPv6 literal in host";
        out->host_is_ipv6 = true;
        i = (size_t)(close - s) + 1;
        if (i < n && s[i] != ':')
            return "invalid character after IPv6 literal";
    } else {
        while (i < n && s[i] != ':') {
            if (!is_host_char((unsigned char)s[i]))
                return "invalid character in host";
            i++;
        }
        h = s;
        hlen = i;
        if (hlen == 0)
            return "empty host";
    }
    if (hlen > HTTP_HOST_MAX)
        return "host name too long";
    memcpy(out->host, h, hlen);
    out->host[hlen] = '\0';

    if (i == n || i + 1 == n) { /* no port, or "host:" (an empty port, RFC 3986 §3.2.3) */
        if (port_required)
            return "CONNECT needs host:port";
        out->port = 80;
        return NULL;
    }
    i++; /* the colon */
    unsigned long port = 0;
    size_t digits = n - i;
    if (digits > 5)
        return "invalid port";
    for (; i < n; i++) {
        if (!is_digit((unsigned char)s[i]))
            return "invalid port";
        port = port * 10 + (unsigned long)(s[i] - '0');
    }
    if (port == 0 || port > 65535)
        return "port out of range";
    out->port = (uint16_t)port;
    return NULL;
}

/* The request target (RFC 9112 §3.2) at buf[off..off+n). */
static enum http_parse_result parse_target(const char *buf, size_t off, size_t n,
                                           struct http_request *out)
{
    const char *t = buf + off;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c <= 0x20 || c == 0x7f)
            return req_error(out, 400, "invalid character in request target");
    }
    const char *err;
    if (out->is_connect) {
        if (memchr(t, '@', n) || memchr(t, '/', n))
            return req_error(out, 400, "CONNECT target must be host:port");
        err = parse_authority(t, n, true, out);
        return err ? req_error(out, 400, err) : HTTP_PARSE_OK;
    }
    if (t[0] == '/' || (n == 1 && t[0] == '*'))
        return req_error(out, 400, "not a proxy request: send an absolute URL (http://host/path)");
    size_t s = 0;
    while (s < n && ((t[s] >= 'a' && t[s] <= 'z') || (t[s] >= 'A' && t[s] <= 'Z') ||
                     (s > 0 && (is_digit((unsigned char)t[s]) || t[s] == '+' || t[s] == '-' ||
                                t[s] == '.'))))
        s++;
    if (s == 0 || n - s < 3 || memcmp(t + s, "://", 3) != 0)
        return req_error(out, 400, "not a proxy request: send an absolute URL (http://host/path)");
    if (mem_eq_ci(t, s, "https"))
        return req_error(out, 400,
                         "https:// URLs go through a CONNECT tunnel, not a plain proxy request");
    if (!mem_eq_ci(t, s, "http"))
        return req_error(out, 400, "unsupported URL scheme: only http:// (and CONNECT for TLS)");
    if (memchr(t, '#', n))
        return req_error(out, 400, "fragment in request target");
    size_t a = s + 3, e = a;
    while (e < n && t[e] != '/' && t[e] != '?')
        e++;
    if (memchr(t + a, '@', e - a))
        return req_error(out, 400, "credentials (user@) in the URL are not accepted");
    err = parse_authority(t + a, e - a, false, out);
    if (err)
        return req_error(out, 400, err);
    out->path = (struct http_span){off + e, n - e};
    return HTTP_PARSE_OK;
}

/* The request line at buf[start..end) (CRLF excluded). */
static enum http_parse_result parse_request_line(const char *buf, size_t start, size_t end,
                                                 struct http_request *out)
{
    const char *line = buf + start;
    size_t n = end - start;
    const char *sp1 = memchr(line, ' ', n);
    if (!sp1 || sp1 == line)
        return req_error(out, 400, "malformed request line");
    size_t mlen = (size_t)(sp1 - line);
    for (size_t i = 0; i < mlen; i++)
        if (!is_tchar((unsigned char)line[i]))
            return req_error(out, 400, "invalid method");
    out->method = (struct http_span){start, mlen};
    out->is_connect = mlen == 7 && memcmp(line, "CONNECT", 7) == 0;

    size_t tstart = mlen + 1;
    const char *sp2 = memchr(line + tstart, ' ', n - tstart);
    if (!sp2 || (size_t)(sp2 - line) == tstart)
        return req_error(out, 400, "malformed request line");
    size_t tlen = (size_t)(sp2 - line) - tstart;
    const char *v = sp2 + 1;
    size_t vlen = n - (size_t)(v - line);
    if (vlen != 8 || memcmp(v, "HTTP/", 5) != 0 || !is_digit((unsigned char)v[5]) || v[6] != '.' ||
        !is_digit((unsigned char)v[7]))
        return req_error(out, 400, "malformed HTTP version");
    if (v[5] != '1')
        return req_error(out, 505, "only HTTP/1.0 and HTTP/1.1 are supported");
    out->version_minor = v[7] == '0' ? 0 : 1; /* 1.x above 1.1 is read as 1.1 (RFC 9110 §2.5) */
    return parse_target(buf, start + tstart, tlen, out);
}

/* Framing and connection intent from the parsed header list (RFC 9112 §6.1-6.3). */
static enum http_parse_result request_semantics(const char *buf, struct http_request *out)
{
    struct cl_state cl = {0};
    struct conn_state conn = {0};
    bool have_te = false, te_bad = false;
    for (size_t i = 0; i < out->n_headers; i++) {
        const struct http_header *h = &out->headers[i];
        if (span_eq_ci(buf, h->name, "content-length")) {
            content_length_header(buf, h->value, &cl);
        } else if (span_eq_ci(buf, h->name, "transfer-encoding")) {
            /* A second Transfer-Encoding line means "chunked, chunked" or worse. */
            if (have_te || !span_eq_ci(buf, h->value, "chunked"))
                te_bad = true;
            have_te = true;
        } else if (span_eq_ci(buf, h->name, "connection") ||
                   span_eq_ci(buf, h->name, "proxy-connection")) {
            for_each_list_item(buf + h->value.off, h->value.len, conn_item, &conn);
        }
    }
    if (have_te && cl.have)
        return req_error(out, 400, "both Content-Length and Transfer-Encoding");
    if (cl.bad)
        return req_error(out, 400, "invalid or conflicting Content-Length");
    if (have_te && te_bad)
        return req_error(out, 501, "Transfer-Encoding other than chunked is not supported");
    if (have_te && out->version_minor == 0)
        return req_error(out, 400, "Transfer-Encoding in an HTTP/1.0 request");
    if (out->is_connect) {
        out->body = HTTP_BODY_NONE; /* RFC 9110 §9.3.6: what follows the head is the tunnel */
    } else if (have_te) {
        out->body = HTTP_BODY_CHUNKED;
    } else if (cl.have) {
        out->body = HTTP_BODY_CONTENT_LENGTH;
        out->content_length = cl.value;
    } else {
        out->body = HTTP_BODY_NONE;
    }
    out->keep_alive = out->version_minor == 1 ? !conn.close : (conn.keep_alive && !conn.close);
    return HTTP_PARSE_OK;
}

/* Could buf[0..n) still become a valid request line? Lets a TLS hello or other binary sent to
 * the HTTP port be refused at once instead of after 8 KiB. */
static bool request_line_prefix_ok(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == ' ')
            return i > 0;
        if (!is_tchar((unsigned char)p[i]))
            return false;
    }
    return true;
}

enum http_parse_result http_parse_request(const char *buf, size_t len,
                                          const struct http_limits *lim, struct http_request *out)
{
    struct http_limits def = http_limits_default();
    if (!lim)
        lim = &def;
    size_t max_headers = lim->max_headers < HTTP_MAX_HEADERS ? lim->max_headers : HTTP_MAX_HEADERS;
    memset(out, 0, sizeof *out);

    size_t pos = 0;
    for (int k = 0; k < LEADING_CRLF_MAX && pos < len && buf[pos] == '\r'; k++) {
        if (pos + 1 == len)
            return HTTP_PARSE_INCOMPLETE;
        if (buf[pos + 1] != '\n')
            return req_error(out, 400, "bare CR before the request line");
        pos += 2;
    }

    /* The request line: at most max_request_line bytes, then CRLF. */
    size_t avail = len - pos;
    size_t window = lim->max_request_line + 2 < avail ? lim->max_request_line + 2 : avail;
    const char *lf = memchr(buf + pos, '\n', window);
    if (!lf) {
        if (!request_line_prefix_ok(buf + pos, window))
            return req_error(out, 400, "malformed request line");
        if (avail >= lim->max_request_line + 2)
            return req_error(out, 414, "request line too long");
        return HTTP_PARSE_INCOMPLETE;
    }
    size_t lfpos = (size_t)(lf - buf);
    if (lfpos == pos || buf[lfpos - 1] != '\r')
        return req_error(out, 400, "request line not terminated by CRLF");
    if (lfpos - 1 - pos > lim->max_request_line)
        return req_error(out, 414, "request line too long");
    enum http_parse_result r = parse_request_line(buf, pos, lfpos - 1, out);
    if (r != HTTP_PARSE_OK)
        return r;
    pos = lfpos + 1;

    /* Header field lines, each ending in CRLF, at most max_header_bytes in all, then CRLF. */
    size_t hstart = pos;
    size_t hend =
        lim->max_header_bytes > SIZE_MAX - hstart ? SIZE_MAX : hstart + lim->max_header_bytes;
    for (;;) {
        if (pos == len)
            return HTTP_PARSE_INCOMPLETE;
        if (buf[pos] == '\r') {
            if (pos + 1 == len)
                return HTTP_PARSE_INCOMPLETE;
            if (buf[pos + 1] != '\n')
                return req_error(out, 400, "bare CR in header section");
            out->head_len = pos + 2;
            break;
        }
        if (buf[pos] == '\n')
            return req_error(out, 400, "header line not terminated by CRLF");
        if (buf[pos] == ' ' || buf[pos] == '\t')
            return req_error(out, 400, "obsolete line folding (or whitespace before a header)");
        size_t limit_end = hend < len ? hend : len;
        lf = pos < limit_end ? memchr(buf + pos, '\n', limit_end - pos) : NULL;
        if (!lf) {
            if (len >= hend)
                return req_error(out, 431, "request header section too large");
            return HTTP_PARSE_INCOMPLETE;
        }
        lfpos = (size_t)(lf - buf);
        if (buf[lfpos - 1] != '\r')
            return req_error(out, 400, "header line not terminated by CRLF");
        if (out->n_headers == max_headers)
            return req_error(out, 431, "too many request headers");
        const char *err = parse_field_line(buf, pos, lfpos - 1, &out->headers[out->n_headers]);
        if (err)
            return req_error(out, 400, err);
        out->n_headers++;
        pos = lfpos + 1;
    }
    return request_semantics(buf, out);
}

/* --- the upstream request --- */

struct obuf {
    char *p;
    size_t len, cap;
    bool full;
};

static void put(struct obuf *o, const char *s, size_t n)
{
    if (o->full || n > o->cap - o->len) {
        o->full = true;
        return;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void puts_(struct obuf *o, const char *s)
{
    put(o, s, strlen(s));
}

static bool is_hop_by_hop(const char *buf, struct http_span name)
{
    static const char *const hop[] = {"connection",
                                      "keep-alive",
                                      "proxy-connection",
                                      "proxy-authorization",
                                      "proxy-authenticate",
                                      "te",
                                      "trailer",
                                      "upgrade",
                                      "host"};
    for (size_t i = 0; i < ARRAY_LEN(hop); i++)
        if (span_eq_ci(buf, name, hop[i]))
            return true;
    return false;
}

struct named_state {
    const char *buf;
    struct http_span name;
    bool found;
};

static void named_item(const char *p, size_t n, void *ctx)
{
    struct named_state *s = ctx;
    if (n == s->name.len && strncasecmp(p, s->buf + s->name.off, n) == 0)
        s->found = true;
}

/* Does a Connection header of req name this header? Content-Length and Transfer-Encoding are
 * never dropped this way: the body relay frames the body by them, and dropping them would let
 * a client make the origin read the body as the next request. */
static bool named_in_connection(const struct http_request *req, const char *buf,
                                struct http_span name)
{
    if (span_eq_ci(buf, name, "content-length") || span_eq_ci(buf, name, "transfer-encoding"))
        return false;
    struct named_state s = {buf, name, false};
    for (size_t i = 0; i < req->n_headers && !s.found; i++)
        if (span_eq_ci(buf, req->headers[i].name, "connection"))
            for_each_list_item(buf + req->headers[i].value.off, req->headers[i].value.len,
                               named_item, &s);
    return s.found;
}

size_t http_build_upstream(const struct http_request *req, const char *buf, char *out, size_t cap)
{
    struct obuf o = {out, 0, cap, false};
    put(&o, buf + req->method.off, req->method.len);
    puts_(&o, " ");
    if (req->path.len == 0 || buf[req->path.off] == '?')
        puts_(&o, "/");
    put(&o, buf + req->path.off, req->path.len);
    puts_(&o, " HTTP/1.1\r\nHost: ");
    if (req->host_is_ipv6)
        puts_(&o, "[");
    puts_(&o, req->host);
    if (req->host_is_ipv6)
        puts_(&o, "]");
    if (req->port != 80) {
        char port[8];
        snprintf(port, sizeof port, ":%u", (unsigned)req->port);
        puts_(&o, port);
    }
    puts_(&o, "\r\n");
    for (size_t i = 0; i < req->n_headers; i++) {
        const struct http_header *h = &req->headers[i];
        if (is_hop_by_hop(buf, h->name) || named_in_connection(req, buf, h->name))
            continue;
        put(&o, buf + h->name.off, h->name.len);
        puts_(&o, ": ");
        put(&o, buf + h->value.off, h->value.len);
        puts_(&o, "\r\n");
    }
    puts_(&o, "Connection: keep-alive\r\n\r\n");
    return o.full ? 0 : o.len;
}

/* --- chunked bodies --- */

enum {
    CK_SIZE,    /* hex digits of the chunk size */
    CK_SIZE_WS, /* whitespace after the size: only ';' or CR may follow */
    CK_EXT,     /* a chunk extension, up to CR */
    CK_SIZE_LF, /* the LF ending the size line */
    CK_DATA,    /* chunk data */
    CK_DATA_CR, /* the CRLF after chunk data */
    CK_DATA_LF,
    CK_TRAILER_START, /* the start of a trailer line, or the final CRLF */
    CK_TRAILER,
    CK_TRAILER_LF,
    CK_FINAL_LF,
    CK_DONE,
};

void http_chunked_init(struct http_chunked *st)
{
    memset(st, 0, sizeof *st);
}

static enum http_chunked_result ck_error(struct http_chunked *st, const char *why, size_t at,
                                         size_t *consumed)
{
    st->error = why;
    *consumed = at;
    return HTTP_CHUNKED_ERROR;
}

enum http_chunked_result http_chunked_feed(struct http_chunked *st, const char *p, size_t n,
                                           size_t *consumed)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)p[i];
        switch (st->state) {
        case CK_SIZE: {
            int v = hex_value(c);
            if (v >= 0) {
                if (st->remaining > (UINT64_MAX >> 4))
                    return ck_error(st, "chunk size overflows", i, consumed);
                st->remaining = st->remaining << 4 | (uint64_t)v;
                st->seen_digit = true;
            } else if (!st->seen_digit) {
                return ck_error(st, "chunk size expected", i, consumed);
            } else if (c == ';') {
                st->state = CK_EXT;
            } else if (c == ' ' || c == '\t') {
                st->state = CK_SIZE_WS;
            } else if (c == '\r') {
                st->state = CK_SIZE_LF;
            } else {
                return ck_error(st, "invalid character in chunk size", i, consumed);
            }
            break;
        }
        case CK_SIZE_WS:
            if (c == ';')
                st->state = CK_EXT;
            else if (c == '\r')
                st->state = CK_SIZE_LF;
            else if (c != ' ' && c != '\t')
                return ck_error(st, "invalid character after chunk size", i, consumed);
            break;
        case CK_EXT:
            if (c == '\r')
                st->state = CK_SIZE_LF;
            else if (!is_field_char(c))
                return ck_error(st, "invalid character in chunk extension", i, consumed);
            break;
        case CK_SIZE_LF:
            if (c != '\n')
                return ck_error(st, "chunk size line not terminated by CRLF", i, consumed);
            st->line_bytes = 0;
            st->seen_digit = false;
            st->state = st->remaining ? CK_DATA : CK_TRAILER_START;
            i++;
            continue;
        case CK_DATA: {
            size_t take = n - i;
            if ((uint64_t)take > st->remaining)
                take = (size_t)st->remaining;
            st->remaining -= take;
            i += take;
            if (st->remaining == 0)
                st->state = CK_DATA_CR;
            continue;
        }
        case CK_DATA_CR:
            if (c != '\r')
                return ck_error(st, "chunk data not followed by CRLF", i, consumed);
            st->state = CK_DATA_LF;
            break;
        case CK_DATA_LF:
            if (c != '\n')
                return ck_error(st, "chunk data not followed by CRLF", i, consumed);
            st->state = CK_SIZE;
            break;
        case CK_TRAILER_START:
            if (c == '\r') {
                st->state = CK_FINAL_LF;
                break;
            }
            st->state = CK_TRAILER; /* and look at this byte again, as its first */
            continue;
        case CK_TRAILER:
            if (c == '\r')
                st->state = CK_TRAILER_LF;
            else if (!is_field_char(c))
                return ck_error(st, "invalid character in trailer", i, consumed);
            if (++st->trailer_bytes > CHUNK_TRAILERS_MAX)
                return ck_error(st, "trailer section too large", i, consumed);
            break;
        case CK_TRAILER_LF:
            if (c != '\n')
                return ck_error(st, "trailer line not terminated by CRLF", i, consumed);
            st->state = CK_TRAILER_START;
            break;
        case CK_FINAL_LF:
            if (c != '\n')
                return ck_error(st, "chunked body not terminated by CRLF", i, consumed);
            st->state = CK_DONE;
            *consumed = i + 1;
            return HTTP_CHUNKED_DONE;
        case CK_DONE:
        default:
            return ck_error(st, "bytes fed after the end of the chunked body", i, consumed);
        }
        if ((st->state == CK_SIZE || st->state == CK_SIZE_WS || st->state == CK_EXT) &&
            ++st->line_bytes > CHUNK_LINE_MAX)
            return ck_error(st, "chunk size line too long", i, consumed);
        i++;
    }
    *consumed = n;
    return HTTP_CHUNKED_MORE;
}

uint64_t http_chunked_data_left(const struct http_chunked *st)
{
    return st->state == CK_DATA ? st->remaining : 0;
}

/* --- responses --- */

static enum http_parse_result resp_error(struct http_response *out, const char *error)
{
    out->error = error;
    return HTTP_PARSE_ERROR;
}

struct te_state {
    bool last_chunked;
};

static void te_item(const char *p, size_t n, void *ctx)
{
    struct te_state *t = ctx;
    t->last_chunked = mem_eq_ci(p, n, "chunked");
}

enum http_parse_result http_parse_response(const char *buf, size_t len, bool request_was_head,
                                           struct http_response *out)
{
    memset(out, 0, sizeof *out);
    size_t scan = len < RESPONSE_HEAD_MAX ? len : RESPONSE_HEAD_MAX;
    const char *lf = memchr(buf, '\n', scan);
    if (!lf) {
        if (len >= 5 && memcmp(buf, "HTTP/", 5) != 0)
            return resp_error(out, "not an HTTP/1.x response");
        return len >= RESPONSE_HEAD_MAX ? resp_error(out, "response head too large")
                                        : HTTP_PARSE_INCOMPLETE;
    }
    size_t lfpos = (size_t)(lf - buf);
    if (lfpos == 0 || buf[lfpos - 1] != '\r')
        return resp_error(out, "status line not terminated by CRLF");
    size_t n = lfpos - 1;
    /* "HTTP/1.1 200 OK": version, SP, three digits, then SP and a reason (a missing SP and
     * reason is tolerated: some servers send "HTTP/1.1 200"). */
    if (n < 12 || memcmp(buf, "HTTP/", 5) != 0 || !is_digit((unsigned char)buf[5]) ||
        buf[6] != '.' || !is_digit((unsigned char)buf[7]) || buf[8] != ' ' ||
        !is_digit((unsigned char)buf[9]) || !is_digit((unsigned char)buf[10]) ||
        !is_digit((unsigned char)buf[11]) || (n > 12 && buf[12] != ' '))
        return resp_error(out, "malformed status line");
    if (buf[5] != '1')
        return resp_error(out, "unsupported HTTP version in response");
    for (size_t i = 13; i < n; i++)
        if (!is_field_char((unsigned char)buf[i]))
            return resp_error(out, "invalid character in reason phrase");
    out->version_minor = buf[7] == '0' ? 0 : 1;
    out->status_code = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    if (out->status_code < 100)
        return resp_error(out, "invalid status code");

    struct cl_state cl = {0};
    struct conn_state conn = {0};
    struct te_state te = {0};
    bool have_te = false;
    size_t pos = lfpos + 1;
    for (;;) {
        if (pos == len)
            return pos >= RESPONSE_HEAD_MAX ? resp_error(out, "response head too large")
                                            : HTTP_PARSE_INCOMPLETE;
        if (buf[pos] == '\r') {
            if (pos + 1 == len)
                return HTTP_PARSE_INCOMPLETE;
            if (buf[pos + 1] != '\n')
                return resp_error(out, "bare CR in response head");
            out->head_len = pos + 2;
            break;
        }
        if (buf[pos] == '\n')
            return resp_error(out, "header line not terminated by CRLF");
        if (buf[pos] == ' ' || buf[pos] == '\t')
            return resp_error(out, "obsolete line folding in response");
        size_t limit_end = len < RESPONSE_HEAD_MAX ? len : RESPONSE_HEAD_MAX;
        lf = pos < limit_end ? memchr(buf + pos, '\n', limit_end - pos) : NULL;
        if (!lf)
            return len >= RESPONSE_HEAD_MAX ? resp_error(out, "response head too large")
                                            : HTTP_PARSE_INCOMPLETE;
        lfpos = (size_t)(lf - buf);
        if (buf[lfpos - 1] != '\r')
            return resp_error(out, "header line not terminated by CRLF");
        struct http_header h;
        const char *err = parse_field_line(buf, pos, lfpos - 1, &h);
        if (err)
            return resp_error(out, err);
        if (span_eq_ci(buf, h.name, "content-length")) {
            content_length_header(buf, h.value, &cl);
        } else if (span_eq_ci(buf, h.name, "transfer-encoding")) {
            have_te = true;
            for_each_list_item(buf + h.value.off, h.value.len, te_item, &te);
        } else if (span_eq_ci(buf, h.name, "connection")) {
            for_each_list_item(buf + h.value.off, h.value.len, conn_item, &conn);
        }
        pos = lfpos + 1;
    }

    out->close = out->version_minor == 1 ? conn.close : (!conn.keep_alive || conn.close);
    int code = out->status_code;
    if (code == 101) {
        out->body = HTTP_BODY_UNTIL_CLOSE;
        out->close = true;
    } else if (code < 200) {
        out->interim = true;
        out->body = HTTP_BODY_NONE;
        out->close = false;
    } else if (request_was_head || code == 204 || code == 304) {
        out->body = HTTP_BODY_NONE;
    } else if (have_te) {
        if (te.last_chunked) {
            out->body = HTTP_BODY_CHUNKED;
            if (cl.have || cl.bad) /* RFC 9112 §6.3: TE wins, and the connection is suspect */
                out->close = true;
        } else {
            out->body = HTTP_BODY_UNTIL_CLOSE;
            out->close = true;
        }
    } else if (cl.bad) {
        return resp_error(out, "invalid or conflicting Content-Length in response");
    } else if (cl.have) {
        out->body = HTTP_BODY_CONTENT_LENGTH;
        out->content_length = cl.value;
    } else {
        out->body = HTTP_BODY_UNTIL_CLOSE;
        out->close = true;
    }
    return HTTP_PARSE_OK;
}

/* --- the proxy's own answers --- */

const char *http_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 407:
        return "Proxy Authentication Required";
    case 408:
        return "Request Timeout";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Error";
    }
}

size_t http_error_response(int status, const char *extra_headers, const char *body, char *out,
                           size_t cap)
{
    if (status < 100 || status > 999)
        status = 500;
    const char *reason = http_reason(status);
    char deflt[64];
    if (!body) {
        snprintf(deflt, sizeof deflt, "%s\n", reason);
        body = deflt;
    }
    int n = snprintf(out, cap,
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n%s\r\n%s",
                     status, reason, strlen(body), extra_headers ? extra_headers : "", body);
    if (n < 0 || (size_t)n >= cap)
        return 0;
    return (size_t)n;
}
