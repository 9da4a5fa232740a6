/* test_grant_words.c — the words of a grant: durations (a unit or none, more than 0, at most a
 * week) and one destination (an exact host or IP literal, a port 1..65535), everything else
 * refused. */
#include <string.h>

#include "base/grant_words.h"
#include "test.h"

static void test_durations(void)
{
    static const struct {
        const char *in;
        double s;
    } good[] = {{"90", 90},    {"90s", 90},    {"10m", 600},     {"2h", 7200},
                {"1d", 86400}, {"7d", 604800}, {"168h", 604800}, {"1", 1}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double s = -1;
        CHECK(gw_parse_duration(good[i].in, &s));
        CHECK(s == good[i].s);
    }
    static const char *const bad[] = {"",     "0",  "0s",   "x", "10x",        "10 m",   "-5",
                                      "1.5h", "8d", "10mm", "m", "1234567890", "605000", " 5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double s = -1;
        CHECK(!gw_parse_duration(bad[i], &s));
        CHECK(s == -1);
    }
}

static void test_destinations(void)
{
    char host[256];
    unsigned port = 0;
    CHECK(gw_parse_destination("API.Example.com:443", host, sizeof host, &port));
    CHECK(strcmp(host, "api.example.com") == 0 && port == 443);
    CHECK(gw_parse_destination("127.0.0.2:8080", host, sizeof host, &port));
    CHECK(strcmp(host, "127.0.0.2") == 0 && port == 8080);
    CHECK(gw_parse_destination("[::1]:22", host, sizeof host, &port));
    CHECK(strcmp(host, "::1") == 0 && port == 22);
    CHECK(gw_parse_destination("my_host-1:65535", host, sizeof host, &port));
    static const char *const bad[] = {
        "nohostport",        "host:",         ":80",     "host:0",   "host:65536", "host:8o",
        "*.example.com:443", "tcp://host:22", "::1:22",  "[::1]",    "[]:80",      "[::1:80",
        "host:123456",       "ho st:80",      "host:-1", "[x::1]:80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(!gw_parse_destination(bad[i], host, sizeof host, &port));
    char small[4];
    CHECK(!gw_parse_destination("abcd:80", small, sizeof small, &port)); /* does not fit */
}

TEST_MAIN({"durations", test_durations}, {"destinations", test_destinations})
