/* test_restart_policy.c — the restart policy and backoff a supervised job takes
 * (base/restart_policy.h): what is accepted and said back, what is refused with one line, and
 * the doubling wait with its ceiling. */
#include <string.h>

#include "base/restart_policy.h"
#include "test.h"

static void test_policies(void)
{
    struct restart_policy p = {0};
    char err[200], text[RESTART_POLICY_TEXT_MAX];
    static const char *const good[] = {"on-failure", "on-failure:3", "always", "always:1",
                                       "on-failure:1000000"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        CHECK(restart_policy_parse(good[i], &p, err, sizeof err));
        restart_policy_format(&p, text, sizeof text);
        CHECK(strcmp(text, good[i]) == 0); /* said back as given */
    }
    CHECK(restart_policy_parse("on-failure:3", &p, err, sizeof err));
    CHECK(p.when == RESTART_ON_FAILURE && p.max == 3);
    static const char *const bad[] = {"sometimes",
                                      "on-failure:-1",
                                      "on-failure:0",
                                      "on-failure:",
                                      "on-failure:x",
                                      "always:1000001",
                                      "on-failure:3:4",
                                      "on-failures",
                                      "",
                                      "ALWAYS",
                                      " always",
                                      "on-failure:+3",
                                      "no"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(!restart_policy_parse(bad[i], &p, err, sizeof err));
        CHECK(err[0] != '\0' && !strchr(err, '\n'));
    }
}

static void test_backoff(void)
{
    double v = 0;
    char err[200];
    CHECK(restart_backoff_parse("0.2", &v, err, sizeof err) && v == 0.2);
    CHECK(restart_backoff_parse("0.2s", &v, err, sizeof err) && v == 0.2);
    CHECK(restart_backoff_parse("10s", &v, err, sizeof err) && v == 10);
    CHECK(restart_backoff_parse("5m", &v, err, sizeof err) && v == 300);
    static const char *const bad[] = {"x", "-1",   "0",   "0.05", "6m", "1h",   "",    "s",
                                      ".", "1..2", "1e3", "inf",  " 1", "0x10", "1ms", "nan"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(!restart_backoff_parse(bad[i], &v, err, sizeof err));
        CHECK(err[0] != '\0');
    }
}

static void test_wait_doubles_up_to_the_ceiling(void)
{
    struct restart_policy p = {.when = RESTART_ALWAYS, .backoff = 0.2};
    bool capped = true;
    CHECK(restart_wait(&p, 1, &capped) == 0.2 && !capped);
    CHECK(restart_wait(&p, 2, &capped) == 0.4 && !capped);
    CHECK(restart_wait(&p, 3, &capped) == 0.8 && !capped);
    CHECK(restart_wait(&p, 12, &capped) == RESTART_WAIT_CEILING && capped);
    CHECK(restart_wait(&p, (unsigned long)-1, &capped) == RESTART_WAIT_CEILING && capped);
    char said[32];
    restart_say_seconds(0.4, said, sizeof said);
    CHECK(strcmp(said, "0.4s") == 0);
    restart_say_seconds(300, said, sizeof said);
    CHECK(strcmp(said, "5m") == 0);
    restart_say_seconds(102.4, said, sizeof said);
    CHECK(strcmp(said, "1m42s") == 0);
}

TEST_MAIN({"policies", test_policies}, {"backoff", test_backoff},
          {"wait_doubles_up_to_the_ceiling", test_wait_doubles_up_to_the_ceiling})
