/* test_socks5.c — the SOCKS5 server parser (socks5.h): greetings accepted and refused, CONNECT
 * requests for names, IPv4 and IPv6, every refusal code, every split point, and the bytes a
 * client pipelines after its request. */
#include "proxy/socks5.h"
#include "test.h"

static const unsigned char greeting[] = {5, 2, 2, 0};
static const unsigned char req_domain[] = {5,   1,   0,   3,   11,  'e', 'x', 'a',  'm',
                                           'p', 'l', 'e', '.', 'c', 'o', 'm', 0x01, 0xbb};
static const unsigned char payload[] = "GET / HTTP/1.1\r\n";

static struct socks5_parser p;

/* Feed exactly one complete message; it must be answered with `want`, consuming all of it. */
static void feed_one(const unsigned char *m, size_t n, enum socks5_result want)
{
    size_t used = 999;
    enum socks5_result r = socks5_feed(&p, m, n, &used);
    if (r != want)
        fprintf(stderr, "  result %d (%s), want %d\n", r, p.error ? p.error : "", want);
    CHECK_EQ_INT(r, want);
    CHECK_EQ_INT(used, n);
}

static void expect_request_error(const unsigned char *m, size_t n, unsigned char code,
                                 const char *why)
{
    socks5_init(&p);
    feed_one(greeting, sizeof greeting, SOCKS5_GREETING_REPLY);
    size_t used = 0;
    CHECK_EQ_INT(socks5_feed(&p, m, n, &used), SOCKS5_ERROR);
    CHECK_EQ_INT(p.reply_code, code);
    CHECK_STR_CONTAINS(p.error, why);
}

static void test_greeting(void)
{
    unsigned char out[2];
    socks5_init(&p);
    feed_one((const unsigned char *)"\x05\x01\x00", 3, SOCKS5_GREETING_REPLY);
    socks5_greeting_reply(&p, out);
    CHECK(out[0] == 5 && out[1] == 0x00);
    socks5_init(&p);
    feed_one(greeting, sizeof greeting, SOCKS5_GREETING_REPLY);
    socks5_greeting_reply(&p, out);
    CHECK(out[0] == 5 && out[1] == 0x00);
    /* 255 methods, no-auth last. */
    unsigned char many[257] = {5, 255};
    for (int i = 0; i < 254; i++)
        many[2 + i] = (unsigned char)(i + 1);
    many[256] = 0;
    socks5_init(&p);
    feed_one(many, sizeof many, SOCKS5_GREETING_REPLY);
    socks5_greeting_reply(&p, out);
    CHECK_EQ_INT(out[1], 0x00);
}

static void test_greeting_refused(void)
{
    unsigned char out[2];
    size_t used;
    /* Only username/password (0x02) and GSSAPI (0x01) offered. */
    socks5_init(&p);
    feed_one((const unsigned char *)"\x05\x02\x01\x02", 4, SOCKS5_GREETING_REPLY);
    socks5_greeting_reply(&p, out);
    CHECK(out[0] == 5 && out[1] == 0xFF);
    /* The client may not go on after a refusal. */
    CHECK_EQ_INT(socks5_feed(&p, req_domain, sizeof req_domain, &used), SOCKS5_ERROR);
    /* No method at all. */
    socks5_init(&p);
    feed_one((const unsigned char *)"\x05\x00", 2, SOCKS5_GREETING_REPLY);
    socks5_greeting_reply(&p, out);
    CHECK_EQ_INT(out[1], 0xFF);
    /* SOCKS4, or an HTTP request on the SOCKS port: refused at the first byte. */
    socks5_init(&p);
    CHECK_EQ_INT(socks5_feed(&p, (const unsigned char *)"\x04\x01\x00\x50", 4, &used),
                 SOCKS5_ERROR);
    CHECK_EQ_INT(used, 1);
    CHECK_EQ_INT(p.reply_code, SOCKS5_REP_GENERAL_FAILURE);
    socks5_init(&p);
    CHECK_EQ_INT(socks5_feed(&p, (const unsigned char *)"GET ", 4, &used), SOCKS5_ERROR);
}

static void test_request_domain(void)
{
    socks5_init(&p);
    feed_one(greeting, sizeof greeting, SOCKS5_GREETING_REPLY);
    feed_one(req_domain, sizeof req_domain, SOCKS5_REQUEST);
    CHECK_EQ_INT(p.cmd, SOCKS5_CMD_CONNECT);
    CHECK_EQ_INT(p.atyp, SOCKS5_ATYP_DOMAIN);
    CHECK(strcmp(p.host, "example.com") == 0);
    CHECK_EQ_INT(p.port, 443);
    /* A 255-byte name is the longest. */
    unsigned char m[4 + 1 + 255 + 2] = {5, 1, 0, 3, 255};
    memset(m + 5, 'a', 255);
    m[5 + 255] = 0;
    m[5 + 256] = 22;
    socks5_init(&p);
    feed_one(greeting, sizeof greeting, SOCKS5_GREETING_REPLY);
    feed_one(m, sizeof m, SOCKS5_REQUEST);
    CHECK_EQ_INT(strlen(p.host), 255);
    CHECK_EQ_INT(p.port, 22);
    /* An IPv6 literal sent as a name is passed on as text. */
    socks5_init(&p);
    feed_one(greeting, sizeof greeting, SOCKS5_GREETING_REPLY);
    feed_one((const unsigned char *)"\x05\x01\x00\x03\x03::1\x00\x50", 10, SOCKS5_REQUEST);
    CHECK(strcmp(p.host, "::1") == 0);
    CHECK_EQ_INT(p.port, 80);
}

static void test_request_ip(void)
{
    socks5_init(&p);
    feed_one(greeting, sizeof greeting, SOCKS5_GREETING_REPLY);
    feed_one((const unsigned char *)"\x05\x01\x00\x01\x7f\x00\x00\x01\x1f\x90", 10, SOCKS5_REQUEST);
    CHECK_EQ_INT(p.atyp, SOCKS5_ATYP_IPV4);
    CHECK(strcmp(p.host, "127.0.0.1") == 0);
    CHECK_EQ_INT(p.port, 8080);
    unsigned char v6[22] = {5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8};
    v6[19] = 1;
    v6[20] = 0xff;
    v6[21] = 0xff;
    socks5_init(&p);
    feed_one(greeting, sizeof greeting, SOCKS5_GREETING_REPLY);
    feed_one(v6, sizeof v6, SOCKS5_REQUEST);
    CHECK_EQ_INT(p.atyp, SOCKS5_ATYP_IPV6);
    CHECK(strcmp(p.host, "2001:db8::1") == 0);
    CHECK_EQ_INT(p.port, 65535);
    unsigned char lo[22] = {5, 1, 0, 4};
    lo[19] = 1;
    lo[21] = 22;
    socks5_init(&p);
    feed_one(greeting, sizeof greeting, SOCKS5_GREETING_REPLY);
    feed_one(lo, sizeof lo, SOCKS5_REQUEST);
    CHECK(strcmp(p.host, "::1") == 0);
}

/* Greeting, request and payload in one stream, split at every point (and byte by byte): the
 * parser answers the same way and leaves exactly the payload unconsumed. */
static void run_stream(const unsigned char *s, size_t n, const size_t *cuts, size_t ncuts)
{
    socks5_init(&p);
    int replies = 0, requests = 0;
    size_t payload_at = 0;
    size_t start = 0;
    for (size_t c = 0; c <= ncuts; c++) {
        size_t end = c < ncuts ? cuts[c] : n;
        while (start < end && !requests) {
            size_t used = 0;
            enum socks5_result r = socks5_feed(&p, s + start, end - start, &used);
            CHECK(used > 0 && used <= end - start);
            start += used;
            if (r == SOCKS5_GREETING_REPLY) {
                replies++;
                CHECK_EQ_INT(start, sizeof greeting);
            } else if (r == SOCKS5_REQUEST) {
                requests++;
                payload_at = start;
            } else {
                CHECK_EQ_INT(r, SOCKS5_NEED_MORE);
                CHECK_EQ_INT(start, end);
            }
        }
    }
    CHECK_EQ_INT(replies, 1);
    CHECK_EQ_INT(requests, 1);
    CHECK_EQ_INT(payload_at, sizeof greeting + sizeof req_domain);
    CHECK(strcmp(p.host, "example.com") == 0);
    CHECK_EQ_INT(p.port, 443);
}

static void test_every_split_point(void)
{
    unsigned char s[128];
    size_t n = 0;
    memcpy(s + n, greeting, sizeof greeting);
    n += sizeof greeting;
    memcpy(s + n, req_domain, sizeof req_domain);
    n += sizeof req_domain;
    memcpy(s + n, payload, sizeof payload - 1);
    n += sizeof payload - 1;
    for (size_t a = 0; a <= n; a++)
        for (size_t b = a; b <= n; b++) {
            size_t cuts[2] = {a, b};
            run_stream(s, n, cuts, 2);
        }
    size_t bytes[128];
    for (size_t i = 0; i < n; i++)
        bytes[i] = i + 1;
    run_stream(s, n, bytes, n);
}

static void test_refused_requests(void)
{
    expect_request_error((const unsigned char *)"\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50", 10,
                         SOCKS5_REP_CMD_NOT_SUPPORTED, "BIND");
    expect_request_error((const unsigned char *)"\x05\x03\x00\x01\x00\x00\x00\x00\x00\x00", 10,
                         SOCKS5_REP_CMD_NOT_SUPPORTED, "UDP ASSOCIATE");
    expect_request_error((const unsigned char *)"\x05\x09\x00", 3, SOCKS5_REP_CMD_NOT_SUPPORTED,
                         "unknown");
    expect_request_error((const unsigned char *)"\x05\x01\x00\x05\x00", 5,
                         SOCKS5_REP_ATYP_NOT_SUPPORTED, "address type");
    expect_request_error((const unsigned char *)"\x05\x01\x00\x00\x00", 5,
                         SOCKS5_REP_ATYP_NOT_SUPPORTED, "address type");
    expect_request_error((const unsigned char *)"\x04\x01\x00\x01", 4, SOCKS5_REP_GENERAL_FAILURE,
                         "version");
    expect_request_error((const unsigned char *)"\x05\x01\x01\x01", 4, SOCKS5_REP_GENERAL_FAILURE,
                         "reserved");
    expect_request_error((const unsigned char *)"\x05\x01\x00\x03\x00\x00\x50", 7,
                         SOCKS5_REP_GENERAL_FAILURE, "empty");
    expect_request_error((const unsigned char *)"\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x00", 10,
                         SOCKS5_REP_GENERAL_FAILURE, "port 0");
    static const char refused[] = {'\0', '\r', '\n', ' ',    '%',    '/',
                                   '@',  '\\', '[',  '\x80', '\x7f', '\t'};
    for (size_t i = 0; i < sizeof refused; i++) {
        unsigned char m[] = {5, 1, 0, 3, 5, 'a', 'b', 'c', 'd', 'e', 0, 80};
        m[7] = (unsigned char)refused[i];
        expect_request_error(m, sizeof m, SOCKS5_REP_GENERAL_FAILURE, "host name");
    }
    /* Nothing is accepted after the request: the rest belongs to the relay. */
    socks5_init(&p);
    feed_one(greeting, sizeof greeting, SOCKS5_GREETING_REPLY);
    feed_one(req_domain, sizeof req_domain, SOCKS5_REQUEST);
    size_t used;
    CHECK_EQ_INT(socks5_feed(&p, payload, 1, &used), SOCKS5_ERROR);
}

static void test_reply(void)
{
    unsigned char out[10];
    for (unsigned c = 0; c <= 8; c++) {
        memset(out, 0xAA, sizeof out);
        socks5_reply((unsigned char)c, out);
        const unsigned char want[10] = {5, (unsigned char)c, 0, 1, 0, 0, 0, 0, 0, 0};
        CHECK(memcmp(out, want, 10) == 0);
    }
    CHECK_EQ_INT(SOCKS5_REP_NOT_ALLOWED, 0x02);
    CHECK_EQ_INT(SOCKS5_REP_TTL_EXPIRED, 0x06);
}

TEST_MAIN({"greeting", test_greeting}, {"greeting_refused", test_greeting_refused},
          {"request_domain", test_request_domain}, {"request_ip", test_request_ip},
          {"every_split_point", test_every_split_point},
          {"refused_requests", test_refused_requests}, {"reply", test_reply})
