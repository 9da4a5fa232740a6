/* test_cred_rewrite.c — cred_rewrite.c: a placeholder becomes the value in requests to the
 * credential's hosts (request line, headers, Authorization: Basic, Content-Length and chunked
 * bodies), whole or fed a byte at a time; refused to any other host (header, Basic, body) with
 * one line naming the credential and the destination; keep-alive with two hosts on one forward
 * proxy stream; ports in rules; a compressed body passed as it is; malformed and huge heads;
 * the set's own checks. */
#include <stdint.h>

#include "proxy/cred_rewrite.h"
#include "test.h"

#define PH "cordon_ph_GH_0123456789abcdef0123456789ab"
#define VAL "ghp_realsecretvalue"
/* as long as its placeholder: bodies are rewritten streamed */
#define PH2 "cordon_ph_NPM_00000000000000000000"
#define VAL2 "npm_SAMELENGTHSECRET0123456789abcd"

static struct cred_set *make_set(void)
{
    struct cred_set *s = cred_set_new();
    char why[256];
    const char *gh[] = {"api.example.com", "git.example.com:8080"};
    CHECK_EQ_INT(cred_set_add(s, "GH_TOKEN", PH, VAL, gh, 2, why, sizeof why), 0);
    const char *npm[] = {"*.npm.test"};
    CHECK_EQ_INT(cred_set_add(s, "NPM_TOKEN", PH2, VAL2, npm, 1, why, sizeof why), 0);
    return s;
}

struct uses {
    char last[300];
    int n;
};

static void on_use(void *ctx, const char *name, const char *host, int port)
{
    struct uses *u = ctx;
    snprintf(u->last, sizeof u->last, "%s@%s:%d", name, host, port);
    u->n++;
}

/* Feed in whole (step 0) or step bytes at a time; the output, NUL-terminated, or NULL with why
 * filled on refusal. */
static char *run(struct cred_set *s, const char *host, int port, const char *in, size_t n,
                 size_t step, char *why, size_t whylen, struct uses *u)
{
    struct cred_rewrite *rw = cred_rewrite_new(s, host, port);
    CHECK(rw);
    if (u)
        cred_rewrite_on_use(rw, on_use, u);
    struct cred_out out = {0};
    size_t pos = 0;
    int r = 0;
    while (pos < n && r == 0) {
        size_t k = step && step < n - pos ? step : n - pos;
        r = cred_rewrite_feed(rw, in + pos, k, &out, why, whylen);
        pos += k;
    }
    cred_rewrite_free(rw);
    if (r < 0) {
        free(out.p);
        return NULL;
    }
    char *s2 = malloc(out.len + 1);
    memcpy(s2, out.p ? out.p : "", out.len);
    s2[out.len] = 0;
    free(out.p);
    return s2;
}

static void test_header_substituted(void)
{
    struct cred_set *s = make_set();
    const char req[] = "GET http://api.example.com/repos?t=" PH " HTTP/1.1\r\n"
                       "Host: api.example.com\r\nAuthorization: Bearer " PH "\r\n\r\n";
    char why[256];
    for (size_t step = 0; step <= 7; step++) {
        struct uses u = {0};
        char *o = run(s, NULL, 0, req, sizeof req - 1, step, why, sizeof why, &u);
        CHECK(o);
        CHECK_STR_CONTAINS(o, "GET http://api.example.com/repos?t=" VAL " HTTP/1.1\r\n");
        CHECK_STR_CONTAINS(o, "Authorization: Bearer " VAL "\r\n\r\n");
        CHECK(!strstr(o, PH));
        CHECK_EQ_INT(u.n, 1);
        CHECK(strcmp(u.last, "GH_TOKEN@api.example.com:80") == 0);
        free(o);
    }
    cred_set_free(s);
}

static void test_basic_auth(void)
{
    struct cred_set *s = make_set();
    /* base64("x-access-token:" PH) as git sends it */
    const char *plain = "x-access-token:" PH;
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char enc[256] = {0};
    size_t n = strlen(plain), w = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)(unsigned char)plain[i] << 16 |
                     (i + 1 < n ? (unsigned)(unsigned char)plain[i + 1] << 8 : 0) |
                     (i + 2 < n ? (unsigned char)plain[i + 2] : 0);
        enc[w++] = b64[v >> 18 & 63];
        enc[w++] = b64[v >> 12 & 63];
        enc[w++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        enc[w++] = i + 2 < n ? b64[v & 63] : '=';
    }
    char req[512];
    snprintf(req, sizeof req,
             "GET /r.git/info/refs HTTP/1.1\r\nHost: git.example.com:8080\r\n"
             "Authorization: Basic %s\r\n\r\n",
             enc);
    char why[256];
    /* TLS termination form: origin-form, the connection's destination given */
    char *o = run(s, "git.example.com", 8080, req, strlen(req), 0, why, sizeof why, NULL);
    CHECK(o);
    /* base64("x-access-token:ghp_realsecretvalue") */
    CHECK_STR_CONTAINS(o,
                       "Authorization: Basic eC1hY2Nlc3MtdG9rZW46Z2hwX3JlYWxzZWNyZXR2YWx1ZQ==\r\n");
    free(o);
    /* the same to another port of that host: refused, named */
    CHECK(!run(s, "git.example.com", 443, req, strlen(req), 0, why, sizeof why, NULL));
    CHECK_STR_CONTAINS(why, "credential GH_TOKEN");
    CHECK_STR_CONTAINS(why, "git.example.com:443");
    cred_set_free(s);
}

static void test_other_host_refused(void)
{
    struct cred_set *s = make_set();
    const char req[] = "GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\nX-A: " PH "\r\n\r\n";
    char why[256];
    for (size_t step = 0; step <= 3; step++) {
        CHECK(!run(s, NULL, 0, req, sizeof req - 1, step, why, sizeof why, NULL));
        CHECK_STR_CONTAINS(why, "GH_TOKEN");
        CHECK_STR_CONTAINS(why, "evil.test:80");
        CHECK(!strstr(why, VAL));
    }
    /* NPM's placeholder to GH's host */
    const char req2[] =
        "GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nX-A: " PH2 "\r\n\r\n";
    CHECK(!run(s, NULL, 0, req2, sizeof req2 - 1, 0, why, sizeof why, NULL));
    CHECK_STR_CONTAINS(why, "NPM_TOKEN");
    /* a wildcard rule: below npm.test, not npm.test itself */
    const char req3[] = "GET http://registry.npm.test/ HTTP/1.1\r\nHost: registry.npm.test\r\n"
                        "Authorization: Bearer " PH2 "\r\n\r\n";
    char *o = run(s, NULL, 0, req3, sizeof req3 - 1, 0, why, sizeof why, NULL);
    CHECK(o);
    CHECK_STR_CONTAINS(o, VAL2);
    free(o);
    const char req4[] = "GET http://npm.test/ HTTP/1.1\r\nHost: npm.test\r\nA: " PH2 "\r\n\r\n";
    CHECK(!run(s, NULL, 0, req4, sizeof req4 - 1, 0, why, sizeof why, NULL));
    cred_set_free(s);
}

static void test_keep_alive_two_hosts(void)
{
    struct cred_set *s = make_set();
    const char ok[] = "POST http://api.example.com/a HTTP/1.1\r\nHost: api.example.com\r\n"
                      "Content-Length: 5\r\n\r\nhello"
                      "GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n"
                      "GET http://api.example.com/b HTTP/1.1\r\nHost: api.example.com\r\n"
                      "Authorization: token " PH "\r\n\r\n";
    char why[256];
    for (size_t step = 0; step <= 5; step++) {
        char *o = run(s, NULL, 0, ok, sizeof ok - 1, step, why, sizeof why, NULL);
        CHECK(o);
        CHECK_STR_CONTAINS(o, "helloGET http://other.test/");
        CHECK_STR_CONTAINS(o, "Authorization: token " VAL "\r\n\r\n");
        free(o);
    }
    /* the second request, to the other host, carries it: refused there */
    const char bad[] = "GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n"
                       "Authorization: token " PH "\r\n\r\n"
                       "GET http://other.test/?k=" PH " HTTP/1.1\r\nHost: other.test\r\n\r\n";
    struct cred_rewrite *rw = cred_rewrite_new(s, NULL, 0);
    struct cred_out out = {0};
    CHECK_EQ_INT(cred_rewrite_feed(rw, bad, sizeof bad - 1, &out, why, sizeof why), -1);
    CHECK_STR_CONTAINS(why, "other.test:80");
    /* what went out is the first request only */
    CHECK(!memmem(out.p, out.len, "other.test", 10));
    CHECK_EQ_INT(cred_rewrite_feed(rw, "x", 1, &out, why, sizeof why), -1);
    free(out.p);
    cred_rewrite_free(rw);
    cred_set_free(s);
}

static void test_bodies(void)
{
    struct cred_set *s = make_set();
    char why[256];
    /* lengths differ: the body is read whole and Content-Length says the new length */
    const char cl[] = "POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n"
                      "Content-Length: 53\r\n\r\n{\"token\":\"" PH "\"}";
    for (size_t step = 0; step <= 4; step++) {
        char *o = run(s, NULL, 0, cl, sizeof cl - 1, step, why, sizeof why, NULL);
        CHECK(o);
        CHECK_STR_CONTAINS(o, "Content-Length: 31\r\n\r\n{\"token\":\"" VAL "\"}");
        free(o);
    }
    /* two such requests on one stream: the second is read whole as the first was */
    char twice[2 * sizeof cl];
    memcpy(twice, cl, sizeof cl - 1);
    memcpy(twice + sizeof cl - 1, cl, sizeof cl - 1);
    for (size_t step = 0; step <= 9; step += 9) {
        char *o = run(s, NULL, 0, twice, 2 * (sizeof cl - 1), step, why, sizeof why, NULL);
        CHECK(o);
        char *second = strstr(o, "{\"token\":\"" VAL "\"}");
        CHECK(second && strstr(second + 1, "Content-Length: 31\r\n\r\n{\"token\":\"" VAL "\"}"));
        free(o);
    }
    /* equal lengths: streamed, a placeholder split anywhere */
    const char eq[] = "PUT http://r.npm.test/p HTTP/1.1\r\nHost: r.npm.test\r\n"
                      "Content-Length: 36\r\n\r\n<" PH2 ">";
    for (size_t step = 0; step <= 6; step++) {
        char *o = run(s, NULL, 0, eq, sizeof eq - 1, step, why, sizeof why, NULL);
        CHECK(o);
        CHECK_STR_CONTAINS(o, "Content-Length: 36\r\n\r\n<" VAL2 ">");
        free(o);
    }
    /* chunked: rewritten and sent as chunks of the rewriter's own */
    const char ch[] = "POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n"
                      "a\r\ncordon_ph_\r\n1f\r\nGH_0123456789abcdef0123456789ab\r\n0\r\n\r\n";
    for (size_t step = 0; step <= 5; step++) {
        char *o = run(s, NULL, 0, ch, sizeof ch - 1, step, why, sizeof why, NULL);
        CHECK(o);
        char *b = strstr(o, "\r\n\r\n");
        CHECK(b);
        /* the chunks' data put together is the value */
        char data[128] = {0};
        size_t dl = 0;
        char *p = b + 4;
        for (;;) {
            unsigned long k = strtoul(p, &p, 16);
            CHECK(p[0] == '\r' && p[1] == '\n');
            p += 2;
            if (k == 0)
                break;
            memcpy(data + dl, p, k);
            dl += k;
            p += k + 2;
        }
        CHECK(strcmp(data, VAL) == 0);
        CHECK(strcmp(p, "\r\n") == 0);
        free(o);
    }
    /* a body to another host that carries it, split across reads: refused */
    const char other[] = "POST http://other.test/ HTTP/1.1\r\nHost: other.test\r\n"
                         "Content-Length: 41\r\n\r\n" PH;
    for (size_t step = 0; step <= 9; step += 3)
        CHECK(!run(s, NULL, 0, other, sizeof other - 1, step, why, sizeof why, NULL));
    /* a compressed body is passed as it is, placeholder and all */
    const char gz[] = "POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n"
                      "Content-Encoding: gzip\r\nContent-Length: 41\r\n\r\n" PH;
    char *o = run(s, NULL, 0, gz, sizeof gz - 1, 0, why, sizeof why, NULL);
    CHECK(o);
    CHECK_STR_CONTAINS(o, "Content-Length: 41\r\n\r\n" PH);
    free(o);
    cred_set_free(s);
}

static void test_malformed_and_huge(void)
{
    struct cred_set *s = make_set();
    char why[256];
    const char bad[] = "GET /relative HTTP/1.1\r\nHost: x\r\n\r\n";
    CHECK(!run(s, NULL, 0, bad, sizeof bad - 1, 0, why, sizeof why, NULL));
    CHECK_STR_CONTAINS(why, "malformed");
    const char smug[] = "POST http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n"
                        "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n";
    CHECK(!run(s, NULL, 0, smug, sizeof smug - 1, 0, why, sizeof why, NULL));
    size_t n = 70 * 1024;
    char *huge = malloc(n);
    memcpy(huge, "GET http://a.test/ HTTP/1.1\r\nX: ", 32);
    memset(huge + 32, 'a', n - 32);
    CHECK(!run(s, NULL, 0, huge, n, 1000, why, sizeof why, NULL));
    CHECK_STR_CONTAINS(why, "request head over");
    free(huge);
    /* an Upgrade on a forward proxy stream (the proxy drops it): the next request is still read */
    const char up[] = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\n\r\n"
                      "GET http://other.test/?k=" PH " HTTP/1.1\r\nHost: other.test\r\n\r\n";
    CHECK(!run(s, NULL, 0, up, sizeof up - 1, 0, why, sizeof why, NULL));
    CHECK_STR_CONTAINS(why, "other.test:80");
    /* CONNECT: the tunnel after it passes as it is */
    const char conn[] =
        "CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\n\r\n\x16\x03\x01";
    char *o = run(s, NULL, 0, conn, sizeof conn - 1, 0, why, sizeof why, NULL);
    CHECK(o);
    CHECK_EQ_INT(strlen(o), sizeof conn - 1);
    free(o);
    cred_set_free(s);
}

static void test_set_checks(void)
{
    struct cred_set *s = cred_set_new();
    char why[256];
    const char *h[] = {"api.example.com"};
    const char *bad_host[] = {"a b"};
    const char *v6[] = {"[::1]:8080"};
    CHECK_EQ_INT(cred_set_add(s, "1X", PH, VAL, h, 1, why, sizeof why), -1);
    CHECK_EQ_INT(cred_set_add(s, "X", "short", VAL, h, 1, why, sizeof why), -1);
    CHECK_EQ_INT(cred_set_add(s, "X", PH, "", h, 1, why, sizeof why), -1);
    CHECK_EQ_INT(cred_set_add(s, "X", PH, "a\r\nb", h, 1, why, sizeof why), -1);
    CHECK_STR_CONTAINS(why, "control character");
    CHECK_EQ_INT(cred_set_add(s, "X", PH, VAL, h, 0, why, sizeof why), -1);
    CHECK_EQ_INT(cred_set_add(s, "X", PH, VAL, bad_host, 1, why, sizeof why), -1);
    CHECK_STR_CONTAINS(why, "host 'a b'");
    CHECK_EQ_INT(cred_set_add(s, "X", PH, VAL, v6, 1, why, sizeof why), 0);
    CHECK_EQ_INT(cred_set_add(s, "X", PH2, VAL, h, 1, why, sizeof why), -1);
    CHECK_STR_CONTAINS(why, "twice");
    CHECK_EQ_INT(cred_set_add(s, "Y", PH, VAL, h, 1, why, sizeof why), -1);
    CHECK_STR_CONTAINS(why, "not unique");
    CHECK(cred_set_matches_host(s, "::1", 8080));
    CHECK(!cred_set_matches_host(s, "::1", 80));
    CHECK_EQ_INT(cred_set_count(s), 1);
    cred_set_free(s);
    struct cred_set *t = make_set();
    CHECK(cred_set_matches_host(t, "API.example.com", 443));
    CHECK(cred_set_matches_host(t, "git.example.com", 8080));
    CHECK(!cred_set_matches_host(t, "git.example.com", 443));
    CHECK(cred_set_matches_host(t, "a.b.npm.test", 443));
    CHECK(!cred_set_matches_host(t, "npm.test", 443));
    cred_set_free(t);
}

TEST_MAIN({"header_substituted", test_header_substituted}, {"basic_auth", test_basic_auth},
          {"other_host_refused", test_other_host_refused},
          {"keep_alive_two_hosts", test_keep_alive_two_hosts}, {"bodies", test_bodies},
          {"malformed_and_huge", test_malformed_and_huge}, {"set_checks", test_set_checks})
