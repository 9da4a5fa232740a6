/* test_cred_scan.c — cred_scan.c: a placeholder in a tunnel's stream is found whole, split at
 * every point across two feeds, fed a byte at a time, and among other credentials'; the
 * credential that may go to the destination is not looked for; a stream without one (or with
 * only its prefix) passes; the refusal line names the credential and the destination; a stream
 * that begins like an HTTP request is told from one that does not. */
#include <string.h>

#include "proxy/cred_scan.h"
#include "test.h"

#define PH "cordon_ph_GH_0123456789abcdef0123456789ab"
#define PH2 "cordon_ph_NPM_00000000000000000000"

static struct cred_set *make_set(void)
{
    struct cred_set *s = cred_set_new();
    char why[256];
    const char *gh[] = {"api.example.com"};
    CHECK_EQ_INT(cred_set_add(s, "GH_TOKEN", PH, "ghp_value", gh, 1, why, sizeof why), 0);
    const char *npm[] = {"registry.npm.test:443"};
    CHECK_EQ_INT(cred_set_add(s, "NPM_TOKEN", PH2, "npm_value", npm, 1, why, sizeof why), 0);
    return s;
}

/* Feed in steps of step bytes (0: whole): the credential found, or -1. */
static long scan(const struct cred_set *set, const char *host, int port, const char *in,
                 size_t step)
{
    struct cred_scan *s = cred_scan_new(set, host, port);
    CHECK(s);
    size_t n = strlen(in), pos = 0;
    long k = -1;
    while (pos < n && k < 0) {
        size_t len = step && step < n - pos ? step : n - pos;
        k = cred_scan_feed(s, in + pos, len);
        pos += len;
    }
    cred_scan_free(s);
    return k;
}

static void test_found_however_split(void)
{
    struct cred_set *set = make_set();
    const char *in = "GET / HTTP/1.1\r\nAuthorization: Bearer " PH "\r\n\r\n";
    CHECK_EQ_INT(scan(set, "other.test", 80, in, 0), 0);
    for (size_t step = 1; step < 50; step++)
        CHECK_EQ_INT(scan(set, "other.test", 80, in, step), 0);
    /* split at every point across two feeds */
    size_t n = strlen(in);
    for (size_t cut = 1; cut < n; cut++) {
        struct cred_scan *s = cred_scan_new(set, "other.test", 80);
        long k = cred_scan_feed(s, in, cut);
        if (k < 0)
            k = cred_scan_feed(s, in + cut, n - cut);
        CHECK_EQ_INT(k, 0);
        cred_scan_free(s);
    }
    CHECK_EQ_INT(scan(set, "other.test", 80, "binary\x01\x02" PH2 "tail", 3), 1);
    cred_set_free(set);
}

static void test_passes(void)
{
    struct cred_set *set = make_set();
    /* a prefix only, a near miss, nothing */
    CHECK_EQ_INT(scan(set, "other.test", 22, "SSH-2.0-x\r\ncordon_ph_GH_0123", 1), -1);
    CHECK_EQ_INT(scan(set, "other.test", 22, "cordon_ph_GH_0123456789abcdef0123456789aX", 0), -1);
    CHECK_EQ_INT(scan(set, "other.test", 22, "", 0), -1);
    /* the credential's own destination: its placeholder is not looked for, the other's is */
    CHECK_EQ_INT(scan(set, "API.example.com", 80, "x " PH " y", 7), -1);
    CHECK_EQ_INT(scan(set, "api.example.com", 80, "x " PH2 " y", 7), 1);
    CHECK_EQ_INT(scan(set, "registry.npm.test", 80, "x " PH2 " y", 7), 1);
    CHECK_EQ_INT(scan(set, "registry.npm.test", 443, "x " PH2 " y", 7), -1);
    cred_set_free(set);
}

static void test_refusal_and_http(void)
{
    struct cred_set *set = make_set();
    char why[300];
    cred_scan_refusal(set, 1, "127.0.0.3", 8080, why, sizeof why);
    CHECK_STR_CONTAINS(why, "the placeholder of credential NPM_TOKEN went to 127.0.0.3:8080");
    struct cred_scan *s = cred_scan_new(set, "h", 80);
    (void)cred_scan_feed(s, "GE", 2);
    (void)cred_scan_feed(s, "T /x HTTP/1.1\r\n", 15);
    CHECK(cred_scan_began_http(s));
    cred_scan_free(s);
    s = cred_scan_new(set, "h", 22);
    (void)cred_scan_feed(s, "SSH-2.0-OpenSSH\r\n", 17);
    CHECK(!cred_scan_began_http(s));
    cred_scan_free(s);
    s = cred_scan_new(set, "h", 443);
    (void)cred_scan_feed(s, "\x16\x03\x01", 3);
    CHECK(!cred_scan_began_http(s));
    cred_scan_free(s);
    cred_set_free(set);
}

TEST_MAIN({"found_however_split", test_found_however_split}, {"passes", test_passes},
          {"refusal_and_http", test_refusal_and_http})
