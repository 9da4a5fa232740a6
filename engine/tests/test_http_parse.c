/* test_http_parse.c — the proxy's HTTP parsers (http_parse.h): accepted request forms, every
 * refusal and limit, the smuggling defenses, every split point of a request and of a chunked
 * body (and of its payload), the upstream head, response framing and the proxy's own error
 * responses. */
#include <stdint.h>

#include "base/http_parse.h"
#include "test.h"

static struct http_request req;

static enum http_parse_result parse_n(const char *s, size_t n, const struct http_limits *lim)
{
    return http_parse_request(s, n, lim, &req);
}

static enum http_parse_result parse(const char *s)
{
    return parse_n(s, strlen(s), NULL);
}

static int span_is(const char *buf, struct http_span sp, const char *want)
{
    return sp.len == strlen(want) && memcmp(buf + sp.off, want, sp.len) == 0;
}

/* The request must be refused with this status and an error text containing `why`. */
static void expect_error(const char *s, int status, const char *why)
{
    enum http_parse_result r = parse(s);
    if (r != HTTP_PARSE_ERROR || req.status != status)
        fprintf(stderr, "  request: %s\n  got result %d status %d (%s)\n", s, r, req.status,
                req.error ? req.error : "");
    CHECK_EQ_INT(r, HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, status);
    CHECK_STR_CONTAINS(req.error, why);
}

static void expect_ok(const char *s)
{
    enum http_parse_result r = parse(s);
    if (r != HTTP_PARSE_OK)
        fprintf(stderr, "  request: %s\n  got result %d status %d (%s)\n", s, r, req.status,
                req.error ? req.error : "");
    CHECK_EQ_INT(r, HTTP_PARSE_OK);
    CHECK_EQ_INT(req.head_len, strlen(s));
}

static void test_absolute_form(void)
{
    const char *s = "GET http://example.com/path/x?q=1&r HTTP/1.1\r\nHost: example.com\r\n"
                    "User-Agent: t/1\r\nAccept:*/*\r\nX-Empty:\r\n\r\n";
    expect_ok(s);
    CHECK(span_is(s, req.method, "GET"));
    CHECK(!req.is_connect);
    CHECK(strcmp(req.host, "example.com") == 0);
    CHECK(!req.host_is_ipv6);
    CHECK_EQ_INT(req.port, 80);
    CHECK(span_is(s, req.path, "/path/x?q=1&r"));
    CHECK_EQ_INT(req.version_minor, 1);
    CHECK_EQ_INT(req.n_headers, 4);
    CHECK(span_is(s, req.headers[1].name, "User-Agent"));
    CHECK(span_is(s, req.headers[1].value, "t/1"));
    CHECK(span_is(s, req.headers[2].value, "*/*"));
    CHECK(span_is(s, req.headers[3].value, ""));
    CHECK_EQ_INT(req.body, HTTP_BODY_NONE);
    CHECK(req.keep_alive);

    expect_ok("POST http://Example.COM:8080 HTTP/1.0\r\n\r\n");
    CHECK(strcmp(req.host, "Example.COM") == 0);
    CHECK_EQ_INT(req.port, 8080);
    CHECK_EQ_INT(req.path.len, 0);
    CHECK_EQ_INT(req.version_minor, 0);
    expect_ok("GET HTTP://h:/ HTTP/1.1\r\n\r\n"); /* scheme is case-insensitive; empty port = 80 */
    CHECK_EQ_INT(req.port, 80);
    expect_ok("GET http://[::1]:8080/x HTTP/1.1\r\n\r\n");
    CHECK(strcmp(req.host, "::1") == 0);
    CHECK(req.host_is_ipv6);
    CHECK_EQ_INT(req.port, 8080);
    expect_ok("GET http://[2001:db8::a:1]/ HTTP/1.1\r\n\r\n");
    CHECK(strcmp(req.host, "2001:db8::a:1") == 0);
    CHECK_EQ_INT(req.port, 80);
    expect_ok("GET http://127.0.0.1:65535/a@b HTTP/1.1\r\n\r\n"); /* '@' in the path is fine */
    CHECK_EQ_INT(req.port, 65535);
    expect_ok("M-SEARCH! http://x_y.example/ HTTP/1.2\r\n\r\n"); /* any token; 1.2 reads as 1.1 */
    CHECK_EQ_INT(req.version_minor, 1);
    expect_ok("\r\nGET http://h/ HTTP/1.1\r\n\r\n"); /* one leading empty line is skipped */
}

static void test_connect_forms(void)
{
    const char *s = "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n";
    expect_ok(s);
    CHECK(req.is_connect);
    CHECK(span_is(s, req.method, "CONNECT"));
    CHECK(strcmp(req.host, "example.com") == 0);
    CHECK_EQ_INT(req.port, 443);
    CHECK_EQ_INT(req.path.len, 0);
    expect_ok("CONNECT [::1]:443 HTTP/1.1\r\n\r\n");
    CHECK(strcmp(req.host, "::1") == 0);
    CHECK(req.host_is_ipv6);
    CHECK_EQ_INT(req.port, 443);
    expect_ok("CONNECT [::ffff:127.0.0.1]:22 HTTP/1.0\r\n\r\n");
    CHECK(strcmp(req.host, "::ffff:127.0.0.1") == 0);
    expect_error("CONNECT example.com HTTP/1.1\r\n\r\n", 400, "host:port");
    expect_error("CONNECT example.com: HTTP/1.1\r\n\r\n", 400, "host:port");
    expect_error("CONNECT [::1] HTTP/1.1\r\n\r\n", 400, "host:port");
    expect_error("CONNECT example.com:0 HTTP/1.1\r\n\r\n", 400, "port");
    expect_error("CONNECT example.com:65536 HTTP/1.1\r\n\r\n", 400, "port");
    expect_error("CONNECT example.com:0443x HTTP/1.1\r\n\r\n", 400, "port");
    expect_error("CONNECT example.com:443443 HTTP/1.1\r\n\r\n", 400, "port");
    expect_error("CONNECT http://example.com:443/ HTTP/1.1\r\n\r\n", 400, "host:port");
    expect_error("CONNECT user@example.com:443 HTTP/1.1\r\n\r\n", 400, "host:port");
    expect_error("CONNECT [::1%eth0]:443 HTTP/1.1\r\n\r\n", 400, "IPv6");
    expect_error("CONNECT [::1:443 HTTP/1.1\r\n\r\n", 400, "IPv6");
    expect_error("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", 400, "after IPv6");
    expect_error("CONNECT [1.2.3.4]:443 HTTP/1.1\r\n\r\n", 400, "IPv6");
    expect_error("CONNECT :443 HTTP/1.1\r\n\r\n", 400, "empty host");
    /* Methods are case-sensitive: "connect" is another method, and a bare authority is not an
     * absolute URL. */
    expect_error("connect example.com:443 HTTP/1.1\r\n\r\n", 400, "not a proxy request");
}

static void test_connect_pipelined_bytes(void)
{
    const char head[] = "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n";
    char buf[128];
    memcpy(buf, head, sizeof head - 1);
    memcpy(buf + sizeof head - 1, "\x16\x03\x01\x02\x00\r\n\r\n", 9);
    CHECK_EQ_INT(parse_n(buf, sizeof head - 1 + 9, NULL), HTTP_PARSE_OK);
    CHECK_EQ_INT(req.head_len, sizeof head - 1);
    CHECK_EQ_INT(req.body, HTTP_BODY_NONE);
    /* A CONNECT has no content: whatever its headers say, the tunnel starts after the head. */
    expect_ok("CONNECT h:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n");
    CHECK_EQ_INT(req.body, HTTP_BODY_NONE);
    expect_error(
        "CONNECT h:443 HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
        "both");
    const char get[] = "GET http://h/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET http://x/";
    CHECK_EQ_INT(parse(get), HTTP_PARSE_OK);
    CHECK_EQ_INT(req.head_len, sizeof get - 1 - strlen("abcGET http://x/"));
}

static void test_refused_forms(void)
{
    expect_error("GET /index.html HTTP/1.1\r\nHost: h\r\n\r\n", 400, "not a proxy request");
    expect_error("OPTIONS * HTTP/1.1\r\n\r\n", 400, "not a proxy request");
    expect_error("GET example.com/x HTTP/1.1\r\n\r\n", 400, "not a proxy request");
    expect_error("GET https://example.com/ HTTP/1.1\r\n\r\n", 400, "CONNECT");
    expect_error("GET HTTPS://example.com/ HTTP/1.1\r\n\r\n", 400, "CONNECT");
    expect_error("GET ftp://example.com/ HTTP/1.1\r\n\r\n", 400, "scheme");
    expect_error("GET http://user@example.com/ HTTP/1.1\r\n\r\n", 400, "credentials");
    expect_error("GET http://user:pw@example.com:80/ HTTP/1.1\r\n\r\n", 400, "credentials");
    expect_error("GET http://exa%6dple.com/ HTTP/1.1\r\n\r\n", 400, "host");
    expect_error("GET http://a\\b.com/ HTTP/1.1\r\n\r\n", 400, "host");
    expect_error("GET http://a,b.com/ HTTP/1.1\r\n\r\n", 400, "host");
    expect_error("GET http:///x HTTP/1.1\r\n\r\n", 400, "empty host");
    expect_error("GET http:// HTTP/1.1\r\n\r\n", 400, "empty host");
    expect_error("GET http://h/x#frag HTTP/1.1\r\n\r\n", 400, "fragment");
    expect_error("GET http://h:99999/ HTTP/1.1\r\n\r\n", 400, "port");
    expect_error("GET http://h:8o/ HTTP/1.1\r\n\r\n", 400, "port");
    char longhost[400];
    snprintf(longhost, sizeof longhost, "GET http://%0256d/ HTTP/1.1\r\n\r\n", 0);
    expect_error(longhost, 400, "too long");
    static const char nul[] = "GET http://a\0b/ HTTP/1.1\r\n\r\n";
    CHECK_EQ_INT(parse_n(nul, sizeof nul - 1, NULL), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 400);
    expect_error("GET http://h/\x7f HTTP/1.1\r\n\r\n", 400, "request target");
    expect_error("GET http://h/a\tb HTTP/1.1\r\n\r\n", 400, "request target");
}

static void test_version(void)
{
    expect_error("GET http://h/ HTTP/2.0\r\n\r\n", 505, "HTTP/1.0");
    expect_error("GET http://h/ HTTP/0.9\r\n\r\n", 505, "HTTP/1.0");
    expect_error("GET http://h/ HTTP/1.1x\r\n\r\n", 400, "version");
    expect_error("GET http://h/ http/1.1\r\n\r\n", 400, "version");
    expect_error("GET http://h/ HTTP/11\r\n\r\n", 400, "version");
    expect_error("GET http://h/\r\n\r\n", 400, "request line");
}

static void test_request_line_syntax(void)
{
    expect_error("GET  http://h/ HTTP/1.1\r\n\r\n", 400, "request line");
    expect_error(" GET http://h/ HTTP/1.1\r\n\r\n", 400, "request line");
    expect_error("GET http://h/  HTTP/1.1\r\n\r\n", 400, "version");
    expect_error("GET http://h/ HTTP/1.1 \r\n\r\n", 400, "version");
    expect_error("GE(T http://h/ HTTP/1.1\r\n\r\n", 400, "method");
    expect_error("GET http://h/ HTTP/1.1\n\r\n", 400, "CRLF");
    expect_error("\r\r\n", 400, "bare CR");
    /* Binary on the HTTP port (a TLS hello) is refused before a line ends. */
    CHECK_EQ_INT(parse_n("\x16\x03\x01\x02", 4, NULL), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 400);
    CHECK_EQ_INT(parse("GET"), HTTP_PARSE_INCOMPLETE);
    CHECK_EQ_INT(parse("GET http"), HTTP_PARSE_INCOMPLETE);
    CHECK_EQ_INT(parse(""), HTTP_PARSE_INCOMPLETE);
}

static void test_request_line_limit(void)
{
    struct http_limits lim = http_limits_default();
    CHECK_EQ_INT(lim.max_request_line, 8192);
    CHECK_EQ_INT(lim.max_header_bytes, 32768);
    CHECK_EQ_INT(lim.max_headers, 100);
    lim.max_request_line = 40;
    /* "GET http://h/" + path + " HTTP/1.1" is 22 + pathlen bytes. */
    char buf[256];
    snprintf(buf, sizeof buf, "GET http://h/%018d HTTP/1.1\r\n\r\n", 0); /* exactly 40 */
    CHECK_EQ_INT(parse_n(buf, strlen(buf), &lim), HTTP_PARSE_OK);
    snprintf(buf, sizeof buf, "GET http://h/%019d HTTP/1.1\r\n\r\n", 0); /* 41 */
    CHECK_EQ_INT(parse_n(buf, strlen(buf), &lim), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 414);
    /* Without a line end: incomplete up to 41 bytes (40 could still be followed by CRLF),
     * 414 from 42 on. */
    snprintf(buf, sizeof buf, "GET http://h/%060d", 0);
    CHECK_EQ_INT(parse_n(buf, 41, &lim), HTTP_PARSE_INCOMPLETE);
    CHECK_EQ_INT(parse_n(buf, 42, &lim), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 414);
    /* The default: 8 KiB. */
    static char big[9000];
    memset(big, 'a', sizeof big);
    memcpy(big, "GET http://h/", 13);
    CHECK_EQ_INT(parse_n(big, sizeof big, NULL), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 414);
}

static void test_header_limits(void)
{
    struct http_limits lim = {.max_request_line = 100, .max_header_bytes = 20, .max_headers = 3};
    /* "A: 123456789012345\r\n" is 20 bytes. */
    const char *exact = "GET http://h/ HTTP/1.1\r\nA: 123456789012345\r\n\r\n";
    CHECK_EQ_INT(parse_n(exact, strlen(exact), &lim), HTTP_PARSE_OK);
    const char *over = "GET http://h/ HTTP/1.1\r\nA: 1234567890123456\r\n\r\n";
    CHECK_EQ_INT(parse_n(over, strlen(over), &lim), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 431);
    const char *two = "GET http://h/ HTTP/1.1\r\nA: 1234567890\r\nB: 12345\r\n\r\n";
    CHECK_EQ_INT(parse_n(two, strlen(two), &lim), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 431);
    /* Incomplete, but already over: refused without waiting for the end. */
    const char *slow = "GET http://h/ HTTP/1.1\r\nA: 1234567890123456789";
    CHECK_EQ_INT(parse_n(slow, strlen(slow), &lim), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 431);
    /* 20 bytes without a line end cannot fit (the line needs its CRLF too); 19 still might. */
    CHECK_EQ_INT(parse_n(slow, strlen(slow) - 2, &lim), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(parse_n(slow, strlen(slow) - 3, &lim), HTTP_PARSE_INCOMPLETE);

    lim.max_header_bytes = 1000;
    const char *three = "GET http://h/ HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    CHECK_EQ_INT(parse_n(three, strlen(three), &lim), HTTP_PARSE_OK);
    CHECK_EQ_INT(req.n_headers, 3);
    const char *four = "GET http://h/ HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n";
    CHECK_EQ_INT(parse_n(four, strlen(four), &lim), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 431);
    CHECK_STR_CONTAINS(req.error, "too many");

    /* Defaults: 100 headers pass, 101 do not; 32 KiB of header lines. */
    static char buf[40000];
    size_t n = (size_t)sprintf(buf, "GET http://h/ HTTP/1.1\r\n");
    for (int i = 0; i < 100; i++)
        n += (size_t)sprintf(buf + n, "X-%d: v\r\n", i);
    memcpy(buf + n, "\r\n", 2);
    CHECK_EQ_INT(parse_n(buf, n + 2, NULL), HTTP_PARSE_OK);
    CHECK_EQ_INT(req.n_headers, 100);
    n += (size_t)sprintf(buf + n, "X-last: v\r\n\r\n");
    CHECK_EQ_INT(parse_n(buf, n, NULL), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 431);
    n = (size_t)sprintf(buf, "GET http://h/ HTTP/1.1\r\nCookie: ");
    memset(buf + n, 'c', 33000);
    memcpy(buf + n + 33000, "\r\n\r\n", 4);
    CHECK_EQ_INT(parse_n(buf, n + 33004, NULL), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 431);
}

static void test_content_length(void)
{
    expect_ok("POST http://h/ HTTP/1.1\r\nContent-Length: 42\r\n\r\n");
    CHECK_EQ_INT(req.body, HTTP_BODY_CONTENT_LENGTH);
    CHECK_EQ_INT(req.content_length, 42);
    expect_ok("POST http://h/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    CHECK_EQ_INT(req.body, HTTP_BODY_CONTENT_LENGTH);
    CHECK_EQ_INT(req.content_length, 0);
    expect_ok("POST http://h/ HTTP/1.1\r\ncontent-length: 7\r\nCONTENT-LENGTH: 7\r\n\r\n");
    CHECK_EQ_INT(req.content_length, 7);
    expect_ok("POST http://h/ HTTP/1.1\r\nContent-Length: 7, 7\r\n\r\n");
    CHECK_EQ_INT(req.content_length, 7);
    expect_ok("POST http://h/ HTTP/1.1\r\nContent-Length: 1844674407370955160\r\n\r\n");
    CHECK(req.content_length == 1844674407370955160ULL);
    expect_error("POST http://h/ HTTP/1.1\r\nContent-Length: 7\r\nContent-Length: 8\r\n\r\n", 400,
                 "Content-Length");
    expect_error("POST http://h/ HTTP/1.1\r\nContent-Length: 7, 8\r\n\r\n", 400, "Content-Length");
    const char *bad[] = {"+5",
                         "-1",
                         "5a",
                         "0x5",
                         "5 5",
                         "",
                         ",",
                         "5.0",
                         "99999999999999999999999",
                         "18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[200];
        snprintf(buf, sizeof buf, "POST http://h/ HTTP/1.1\r\nContent-Length: %s\r\n\r\n", bad[i]);
        expect_error(buf, 400, "Content-Length");
    }
}

static void test_transfer_encoding(void)
{
    expect_ok("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    CHECK_EQ_INT(req.body, HTTP_BODY_CHUNKED);
    expect_ok("POST http://h/ HTTP/1.1\r\ntransfer-encoding:   ChUnKeD  \r\n\r\n");
    CHECK_EQ_INT(req.body, HTTP_BODY_CHUNKED);
    expect_error("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "chunked");
    expect_error("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501,
                 "chunked");
    expect_error("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 501,
                 "chunked");
    expect_error(
        "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        501, "chunked");
    expect_error("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n", 501, "chunked");
    expect_error("POST http://h/ HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", 501, "chunked");
    expect_error("POST http://h/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0");
}

static void test_smuggling(void)
{
    expect_error(
        "POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
        "both");
    expect_error(
        "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400,
        "both");
    expect_error("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\n",
                 400, "both");
    /* obs-fold, and whitespace before the first header. */
    expect_error("GET http://h/ HTTP/1.1\r\nX-A: 1\r\n  continued\r\n\r\n", 400, "folding");
    expect_error("GET http://h/ HTTP/1.1\r\n\tX-A: 1\r\n\r\n", 400, "folding");
    expect_error("GET http://h/ HTTP/1.1\r\n Transfer-Encoding: chunked\r\n\r\n", 400, "folding");
    /* Bare LF and bare CR. */
    expect_error("GET http://h/ HTTP/1.1\r\nX-A: 1\nX-B: 2\r\n\r\n", 400, "CRLF");
    expect_error("GET http://h/ HTTP/1.1\r\nX-A: 1\r\n\n", 400, "CRLF");
    expect_error("GET http://h/ HTTP/1.1\r\nX-A: 1\r\n\rX", 400, "bare CR");
    expect_error("GET http://h/ HTTP/1.1\r\nX-A: a\rb\r\n\r\n", 400, "header value");
    /* Header names. */
    expect_error("GET http://h/ HTTP/1.1\r\nContent-Length : 5\r\n\r\n", 400, "whitespace");
    expect_error("GET http://h/ HTTP/1.1\r\nContent-Length\t: 5\r\n\r\n", 400, "whitespace");
    expect_error("GET http://h/ HTTP/1.1\r\nX(A): 5\r\n\r\n", 400, "header name");
    expect_error("GET http://h/ HTTP/1.1\r\n: 5\r\n\r\n", 400, "empty header name");
    expect_error("GET http://h/ HTTP/1.1\r\nNoColon\r\n\r\n", 400, "colon");
    static const char nul[] = "GET http://h/ HTTP/1.1\r\nX-A: a\0b\r\n\r\n";
    CHECK_EQ_INT(parse_n(nul, sizeof nul - 1, NULL), HTTP_PARSE_ERROR);
    CHECK_EQ_INT(req.status, 400);
    /* obs-text in a value is accepted and passed on. */
    expect_ok("GET http://h/ HTTP/1.1\r\nX-A: caf\xc3\xa9\r\n\r\n");
}

static void test_keep_alive(void)
{
    expect_ok("GET http://h/ HTTP/1.1\r\n\r\n");
    CHECK(req.keep_alive);
    expect_ok("GET http://h/ HTTP/1.1\r\nConnection: close\r\n\r\n");
    CHECK(!req.keep_alive);
    expect_ok("GET http://h/ HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n");
    CHECK(!req.keep_alive);
    expect_ok("GET http://h/ HTTP/1.1\r\nProxy-Connection: close\r\n\r\n");
    CHECK(!req.keep_alive);
    expect_ok("GET http://h/ HTTP/1.0\r\n\r\n");
    CHECK(!req.keep_alive);
    expect_ok("GET http://h/ HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
    CHECK(req.keep_alive);
    expect_ok("GET http://h/ HTTP/1.0\r\nProxy-Connection: keep-alive\r\n\r\n");
    CHECK(req.keep_alive);
    expect_ok("GET http://h/ HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n");
    CHECK(!req.keep_alive);
}

/* Every prefix of a valid request is INCOMPLETE; the whole is OK and the same. */
static void check_every_split(const char *s)
{
    size_t n = strlen(s);
    for (size_t k = 0; k < n; k++) {
        enum http_parse_result r = parse_n(s, k, NULL);
        if (r != HTTP_PARSE_INCOMPLETE)
            fprintf(stderr, "  prefix %zu of %s: %d (%s)\n", k, s, r, req.error ? req.error : "");
        CHECK_EQ_INT(r, HTTP_PARSE_INCOMPLETE);
    }
    CHECK_EQ_INT(parse_n(s, n, NULL), HTTP_PARSE_OK);
    CHECK_EQ_INT(req.head_len, n);
}

static void test_every_split_point(void)
{
    check_every_split("POST http://[::1]:8080/up?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n"
                      "Transfer-Encoding-X: a\r\nConnection: keep-alive\r\n\r\n");
    check_every_split("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    check_every_split("\r\nGET http://h/ HTTP/1.0\r\n\r\n");
    /* A malformed request: no prefix is ever OK; once the bad line is complete it is an error. */
    const char *bad = "GET http://h/ HTTP/1.1\r\nX-A: 1\r\nBad Name: 2\r\n\r\n";
    size_t bad_at = strlen("GET http://h/ HTTP/1.1\r\nX-A: 1\r\nBad Name: 2\r\n");
    for (size_t k = 0; k <= strlen(bad); k++) {
        enum http_parse_result r = parse_n(bad, k, NULL);
        CHECK(r != HTTP_PARSE_OK);
        CHECK_EQ_INT(r == HTTP_PARSE_ERROR, k >= bad_at);
    }
}

static size_t upstream(const char *s, char *out, size_t cap)
{
    CHECK_EQ_INT(parse(s), HTTP_PARSE_OK);
    return http_build_upstream(&req, s, out, cap);
}

static void test_build_upstream(void)
{
    const char *s = "POST http://example.com:8080/api/v1?x=1 HTTP/1.1\r\n"
                    "Host: evil.example\r\n"
                    "User-Agent: curl/8\r\n"
                    "Connection: close, X-Drop-Me, content-length, Transfer-Encoding\r\n"
                    "X-Drop-Me: 1\r\n"
                    "Keep-Alive: timeout=5\r\n"
                    "Proxy-Connection: keep-alive\r\n"
                    "Proxy-Authorization: Basic Zm9vOmJhcg==\r\n"
                    "Proxy-Authenticate: Basic\r\n"
                    "TE: trailers\r\n"
                    "Trailer: X-Sum\r\n"
                    "Upgrade: websocket\r\n"
                    "Transfer-Encoding: chunked\r\n"
                    "x-keep: a b \r\n"
                    "\r\n";
    const char *want = "POST /api/v1?x=1 HTTP/1.1\r\n"
                       "Host: example.com:8080\r\n"
                       "User-Agent: curl/8\r\n"
                       "Transfer-Encoding: chunked\r\n"
                       "x-keep: a b\r\n"
                       "Connection: keep-alive\r\n\r\n";
    char out[1024];
    size_t n = upstream(s, out, sizeof out);
    CHECK_EQ_INT(n, strlen(want));
    out[n] = '\0';
    if (strcmp(out, want) != 0)
        fprintf(stderr, "  got:\n%s\n", out);
    CHECK(strcmp(out, want) == 0);
    /* Every capacity below the size fails cleanly; the exact size works. */
    for (size_t cap = 0; cap < n; cap++)
        CHECK_EQ_INT(http_build_upstream(&req, s, out, cap), 0);
    CHECK_EQ_INT(http_build_upstream(&req, s, out, n), n);

    /* Content-Length survives being named in Connection (it frames the relayed body). */
    const char *cl =
        "PUT http://h/f HTTP/1.1\r\nConnection: Content-Length\r\nContent-Length: 3\r\n\r\n";
    n = upstream(cl, out, sizeof out);
    out[n] = '\0';
    CHECK(
        strcmp(
            out,
            "PUT /f HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\n") ==
        0);

    n = upstream("GET http://h HTTP/1.0\r\n\r\n", out, sizeof out);
    out[n] = '\0';
    CHECK(strcmp(out, "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n\r\n") == 0);
    n = upstream("GET http://h?q=1 HTTP/1.1\r\n\r\n", out, sizeof out);
    out[n] = '\0';
    CHECK_STR_CONTAINS(out, "GET /?q=1 HTTP/1.1\r\nHost: h\r\n");
    n = upstream("GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]\r\n\r\n", out, sizeof out);
    out[n] = '\0';
    CHECK(strcmp(out, "GET / HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: keep-alive\r\n\r\n") == 0);
    n = upstream("GET http://[::1]:80/ HTTP/1.1\r\n\r\n", out, sizeof out);
    out[n] = '\0';
    CHECK_STR_CONTAINS(out, "Host: [::1]\r\n");
}

/* --- chunked --- */

static const char chunked_body[] =
    "4;ext=1;q=\"a b\"\r\nWiki\r\n5 \r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n"
    "a ; x\r\n0123456789\r\n000\r\nX-Trailer: a\r\nX-Other: b\r\n\r\n";
static const char chunked_next[] = "GET http://next/ HTTP/1.1\r\n";

static enum http_chunked_result feed_all(const char *p, size_t n, size_t *consumed)
{
    struct http_chunked st;
    http_chunked_init(&st);
    return http_chunked_feed(&st, p, n, consumed);
}

static void test_chunked_whole(void)
{
    char buf[512];
    size_t blen = sizeof chunked_body - 1;
    memcpy(buf, chunked_body, blen);
    memcpy(buf + blen, chunked_next, sizeof chunked_next - 1);
    size_t consumed = 99;
    CHECK_EQ_INT(feed_all(buf, blen + sizeof chunked_next - 1, &consumed), HTTP_CHUNKED_DONE);
    CHECK_EQ_INT(consumed, blen);
    CHECK_EQ_INT(feed_all("0\r\n\r\n", 5, &consumed), HTTP_CHUNKED_DONE);
    CHECK_EQ_INT(consumed, 5);
    CHECK_EQ_INT(feed_all("A\r\n0123456789\r\n0\r\n\r\n", 20, &consumed), HTTP_CHUNKED_DONE);
    CHECK_EQ_INT(feed_all("ffffffffffffffff\r\n", 18, &consumed), HTTP_CHUNKED_MORE);
    CHECK_EQ_INT(consumed, 18);
    CHECK_EQ_INT(feed_all("3\r\nab", 5, &consumed), HTTP_CHUNKED_MORE);
    /* After DONE, more bytes are an error. */
    struct http_chunked st;
    http_chunked_init(&st);
    CHECK_EQ_INT(http_chunked_feed(&st, "0\r\n\r\n", 5, &consumed), HTTP_CHUNKED_DONE);
    CHECK_EQ_INT(http_chunked_feed(&st, "x", 1, &consumed), HTTP_CHUNKED_ERROR);
}

static void test_chunked_every_split(void)
{
    size_t n = sizeof chunked_body - 1;
    char buf[512];
    memcpy(buf, chunked_body, n);
    memcpy(buf + n, chunked_next, sizeof chunked_next - 1);
    size_t total = n + sizeof chunked_next - 1;
    /* Every pair of split points: three pieces. */
    for (size_t a = 0; a <= total; a++) {
        for (size_t b = a; b <= total; b++) {
            struct http_chunked st;
            http_chunked_init(&st);
            size_t cuts[4] = {0, a, b, total}, at = 0;
            enum http_chunked_result r = HTTP_CHUNKED_MORE;
            for (int k = 0; k < 3 && r == HTTP_CHUNKED_MORE; k++) {
                size_t used = 0;
                r = http_chunked_feed(&st, buf + cuts[k], cuts[k + 1] - cuts[k], &used);
                at = cuts[k] + used;
                if (r == HTTP_CHUNKED_MORE)
                    CHECK_EQ_INT(used, cuts[k + 1] - cuts[k]);
            }
            CHECK_EQ_INT(r, HTTP_CHUNKED_DONE);
            CHECK_EQ_INT(at, n);
        }
    }
    /* Byte by byte. */
    struct http_chunked st;
    http_chunked_init(&st);
    for (size_t i = 0; i < n; i++) {
        size_t used = 0;
        enum http_chunked_result r = http_chunked_feed(&st, buf + i, 1, &used);
        CHECK_EQ_INT(used, 1);
        CHECK_EQ_INT(r, i + 1 == n ? HTTP_CHUNKED_DONE : HTTP_CHUNKED_MORE);
    }
}

/* The payload a reader gets by feeding framing bytes one at a time and each run of data
 * (http_chunked_data_left) whole, from pieces cut at a and b. */
static size_t chunked_payload(const char *buf, size_t total, size_t a, size_t b, char *out)
{
    struct http_chunked st;
    http_chunked_init(&st);
    size_t cuts[4] = {0, a, b, total}, got = 0;
    for (int k = 0; k < 3; k++) {
        const char *p = buf + cuts[k];
        size_t n = cuts[k + 1] - cuts[k];
        while (n > 0) {
            uint64_t data = http_chunked_data_left(&st);
            size_t take = data == 0 ? 1 : (n < data ? n : (size_t)data), used = 0;
            enum http_chunked_result r = http_chunked_feed(&st, p, take, &used);
            CHECK(r != HTTP_CHUNKED_ERROR);
            if (data > 0) {
                CHECK_EQ_INT(used, take);
                memcpy(out + got, p, take);
                got += take;
            }
            p += used;
            n -= used;
            if (r == HTTP_CHUNKED_DONE) {
                CHECK_EQ_INT(http_chunked_data_left(&st), 0);
                return got;
            }
        }
    }
    CHECK(!"the chunked body did not end");
    return got;
}

static void test_chunked_data_left(void)
{
    static const char want[] = "Wikipedia in\r\n\r\nchunks.0123456789";
    size_t n = sizeof chunked_body - 1;
    char out[512];
    for (size_t a = 0; a <= n; a++) {
        for (size_t b = a; b <= n; b++) {
            size_t got = chunked_payload(chunked_body, n, a, b, out);
            CHECK_EQ_INT(got, sizeof want - 1);
            CHECK(memcmp(out, want, got) == 0);
        }
    }
    /* Inside data, the count is what is left of the chunk; on framing bytes it is 0. */
    struct http_chunked st;
    http_chunked_init(&st);
    size_t used;
    CHECK_EQ_INT(http_chunked_data_left(&st), 0);
    CHECK_EQ_INT(http_chunked_feed(&st, "a", 1, &used), HTTP_CHUNKED_MORE);
    CHECK_EQ_INT(http_chunked_data_left(&st), 0); /* a size being read is not data yet */
    CHECK_EQ_INT(http_chunked_feed(&st, "\r\n0123", 6, &used), HTTP_CHUNKED_MORE);
    CHECK_EQ_INT(http_chunked_data_left(&st), 6);
    CHECK_EQ_INT(http_chunked_feed(&st, "456789", 6, &used), HTTP_CHUNKED_MORE);
    CHECK_EQ_INT(http_chunked_data_left(&st), 0); /* the CRLF after the data */
}

static void chunked_error(const char *s, const char *why, size_t at)
{
    size_t consumed = 9999;
    struct http_chunked st;
    http_chunked_init(&st);
    enum http_chunked_result r = http_chunked_feed(&st, s, strlen(s), &consumed);
    if (r != HTTP_CHUNKED_ERROR)
        fprintf(stderr, "  body %s: %d\n", s, r);
    CHECK_EQ_INT(r, HTTP_CHUNKED_ERROR);
    CHECK_STR_CONTAINS(st.error, why);
    CHECK_EQ_INT(consumed, at);
}

static void test_chunked_errors(void)
{
    chunked_error("4\nWiki\r\n0\r\n\r\n", "chunk size", 1);
    chunked_error("4\r\nWikiX\r\n", "CRLF", 7);
    chunked_error("4\r\nWiki\n0\r\n\r\n", "CRLF", 7);
    chunked_error("g\r\n", "chunk size expected", 0);
    chunked_error("\r\n", "chunk size expected", 0);
    chunked_error(";x\r\n", "chunk size expected", 0);
    chunked_error("-1\r\n", "chunk size expected", 0);
    chunked_error("4x\r\n", "invalid character in chunk size", 1);
    chunked_error("4 x\r\n", "after chunk size", 2);
    chunked_error("10000000000000000\r\n", "overflows", 16);
    chunked_error("4;a\x01\r\n", "extension", 3);
    chunked_error("4;a\nb\r\n", "extension", 3);
    chunked_error("0\r\nX-T: a\nb\r\n\r\n", "trailer", 9);
    chunked_error("0\r\nX-T: a\rb\r\n\r\n", "CRLF", 10);
    chunked_error("0\r\n\rx", "CRLF", 4);
    chunked_error("0\r\n\n", "trailer", 3);
    static char longline[5000];
    memset(longline, ' ', sizeof longline - 1);
    longline[0] = '1';
    longline[1] = ';';
    chunked_error(longline, "too long", 4096);
}

/* --- responses --- */

static struct http_response resp;

static enum http_parse_result presp(const char *s, bool head)
{
    return http_parse_response(s, strlen(s), head, &resp);
}

static void test_response_framing(void)
{
    const char *s = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\nhello";
    CHECK_EQ_INT(presp(s, false), HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.status_code, 200);
    CHECK_EQ_INT(resp.head_len, strlen(s) - 5);
    CHECK_EQ_INT(resp.body, HTTP_BODY_CONTENT_LENGTH);
    CHECK_EQ_INT(resp.content_length, 5);
    CHECK(!resp.close && !resp.interim);
    CHECK_EQ_INT(presp(s, true), HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.body, HTTP_BODY_NONE);
    CHECK(!resp.close);

    CHECK_EQ_INT(presp("HTTP/1.1 204 No Content\r\n\r\n", false), HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.body, HTTP_BODY_NONE);
    CHECK_EQ_INT(presp("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", false),
                 HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.body, HTTP_BODY_NONE);
    CHECK_EQ_INT(presp("HTTP/1.1 100 Continue\r\n\r\n", false), HTTP_PARSE_OK);
    CHECK(resp.interim);
    CHECK_EQ_INT(resp.body, HTTP_BODY_NONE);
    CHECK_EQ_INT(presp("HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n", false), HTTP_PARSE_OK);
    CHECK(resp.interim);
    CHECK_EQ_INT(
        presp(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            false),
        HTTP_PARSE_OK);
    CHECK(!resp.interim);
    CHECK_EQ_INT(resp.body, HTTP_BODY_UNTIL_CLOSE);
    CHECK(resp.close);

    CHECK_EQ_INT(presp("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false),
                 HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.body, HTTP_BODY_CHUNKED);
    CHECK(!resp.close);
    CHECK_EQ_INT(presp("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false),
                 HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.body, HTTP_BODY_CHUNKED);
    CHECK_EQ_INT(
        presp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", false),
        HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.body, HTTP_BODY_CHUNKED);
    CHECK(resp.close);
    CHECK_EQ_INT(presp("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", false),
                 HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.body, HTTP_BODY_UNTIL_CLOSE);
    CHECK(resp.close);
    CHECK_EQ_INT(presp("HTTP/1.1 200 OK\r\n\r\n", false), HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.body, HTTP_BODY_UNTIL_CLOSE);
    CHECK(resp.close);
    CHECK_EQ_INT(presp("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", false),
                 HTTP_PARSE_OK);
    CHECK(resp.close);
    CHECK_EQ_INT(presp("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", false), HTTP_PARSE_OK);
    CHECK(resp.close);
    CHECK_EQ_INT(resp.version_minor, 0);
    CHECK_EQ_INT(
        presp("HTTP/1.0 200 OK\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\n", false),
        HTTP_PARSE_OK);
    CHECK(!resp.close);
    CHECK_EQ_INT(presp("HTTP/1.1 404\r\nContent-Length: 2\r\n\r\n", false), HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.status_code, 404);
    CHECK_EQ_INT(presp("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n", false), HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.content_length, 2);
}

static void test_response_errors(void)
{
    const char *bad[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
        "HTTP/1.1 200 OK\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\n",
        "HTTP/1.1 200 OK\r\n Folded: x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
        "HTTP/2 200 OK\r\n\r\n",
        "HTTP/2.0 200 OK\r\n\r\n",
        "HTTP/1.1 20 OK\r\n\r\n",
        "HTTP/1.1 099 OK\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1 200 O\x01K\r\n\r\n",
        "SSH-2.0-OpenSSH\r\n",
        "<html>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        enum http_parse_result r = presp(bad[i], false);
        if (r != HTTP_PARSE_ERROR)
            fprintf(stderr, "  response %zu accepted\n", i);
        CHECK_EQ_INT(r, HTTP_PARSE_ERROR);
        CHECK(resp.error != NULL);
    }
    /* Every prefix of a valid response is incomplete. */
    const char *s = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
    for (size_t k = 0; k < strlen(s); k++)
        CHECK_EQ_INT(http_parse_response(s, k, false, &resp), HTTP_PARSE_INCOMPLETE);
    /* A head over 64 KiB is refused. */
    static char big[70000];
    memset(big, 'a', sizeof big);
    memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
    CHECK_EQ_INT(http_parse_response(big, sizeof big, false, &resp), HTTP_PARSE_ERROR);
    CHECK_STR_CONTAINS(resp.error, "too large");
}

static void test_error_response(void)
{
    char out[512];
    size_t n = http_error_response(403, "X-Cordon-Error: blocked-by-policy\r\n", "blocked: h:443\n",
                                   out, sizeof out);
    const char *want =
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 15\r\nConnection: close\r\nX-Cordon-Error: blocked-by-policy\r\n"
        "\r\nblocked: h:443\n";
    CHECK_EQ_INT(n, strlen(want));
    CHECK(strcmp(out, want) == 0);
    n = http_error_response(431, NULL, NULL, out, sizeof out);
    CHECK(n > 0);
    CHECK_STR_CONTAINS(out, "HTTP/1.1 431 Request Header Fields Too Large\r\n");
    CHECK_STR_CONTAINS(out, "Content-Length: 32\r\n");
    CHECK_STR_CONTAINS(out, "\r\n\r\nRequest Header Fields Too Large\n");
    /* The response parser reads it back. */
    CHECK_EQ_INT(http_parse_response(out, n, false, &resp), HTTP_PARSE_OK);
    CHECK_EQ_INT(resp.status_code, 431);
    CHECK(resp.close);
    CHECK_EQ_INT(resp.head_len + resp.content_length, n);
    CHECK_EQ_INT(http_error_response(400, NULL, NULL, out, 10), 0);
    CHECK_EQ_INT(http_error_response(431, NULL, NULL, out, n), 0); /* no room for the NUL */
    CHECK_EQ_INT(http_error_response(431, NULL, NULL, out, n + 1), n);
    CHECK(strcmp(http_reason(414), "URI Too Long") == 0);
    CHECK(strcmp(http_reason(505), "HTTP Version Not Supported") == 0);
    CHECK(strcmp(http_reason(501), "Not Implemented") == 0);
    CHECK(strcmp(http_reason(999), "Error") == 0);
}

TEST_MAIN({"absolute_form", test_absolute_form}, {"connect_forms", test_connect_forms},
          {"connect_pipelined_bytes", test_connect_pipelined_bytes},
          {"refused_forms", test_refused_forms}, {"version", test_version},
          {"request_line_syntax", test_request_line_syntax},
          {"request_line_limit", test_request_line_limit}, {"header_limits", test_header_limits},
          {"content_length", test_content_length}, {"transfer_encoding", test_transfer_encoding},
          {"smuggling", test_smuggling}, {"keep_alive", test_keep_alive},
          {"every_split_point", test_every_split_point}, {"build_upstream", test_build_upstream},
          {"chunked_whole", test_chunked_whole}, {"chunked_every_split", test_chunked_every_split},
          {"chunked_data_left", test_chunked_data_left}, {"chunked_errors", test_chunked_errors},
          {"response_framing", test_response_framing}, {"response_errors", test_response_errors},
          {"error_response", test_error_response})
