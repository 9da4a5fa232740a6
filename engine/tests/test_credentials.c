/* test_credentials.c — credentials.c: a flag's value from the caller's variable, a profile's
 * from a file and a command, the placeholder (unique, as long as a long value) put into the
 * command's environment for NAME and wherever else the value was, a flag replacing the
 * profile's entry, and the one-line errors (bad spec, unset variable, missing file, failing
 * command); and git's helper entries (credential_git.c) appended after the caller's own. */
#include <stdlib.h>

#include "controller/credential_git.h"
#include "controller/credentials.h"
#include "proxy/cred_rewrite.h"
#include "test.h"

#define LONG_VALUE "ghp_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"

static const char *env_get(const struct str_list *env, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < env->len; i++)
        if (strncmp(env->items[i], name, n) == 0 && env->items[i][n] == '=')
            return env->items[i] + n + 1;
    return NULL;
}

static void test_flag_and_env(void)
{
    setenv("GH_TOKEN", LONG_VALUE, 1);
    struct str_list env = {0}, specs = {0};
    str_list_push(&env, "PATH=/usr/bin");
    str_list_push(&env, "GH_TOKEN=" LONG_VALUE);
    str_list_push(&env, "GITHUB_TOKEN=x" LONG_VALUE "y");
    str_list_push(&specs, "GH_TOKEN=api.example.com,example.com:443");
    struct cred_set *set = NULL;
    char err[512];
    CHECK_EQ_INT(credentials_prepare(NULL, &specs, &env, &set, err, sizeof err), 0);
    CHECK(set && cred_set_count(set) == 1);
    const char *ph = env_get(&env, "GH_TOKEN");
    CHECK(ph && strncmp(ph, "cordon_GH_TOKEN_", 16) == 0);
    CHECK_EQ_INT(strlen(ph), strlen(LONG_VALUE)); /* a long value: as long as it */
    const char *other = env_get(&env, "GITHUB_TOKEN");
    CHECK(other && other[0] == 'x' && strncmp(other + 1, ph, strlen(ph)) == 0);
    for (size_t i = 0; i < env.len; i++)
        CHECK(!strstr(env.items[i], LONG_VALUE));
    CHECK(cred_set_matches_host(set, "example.com", 443));
    CHECK(!cred_set_matches_host(set, "example.com", 80));
    /* a second sandbox gets another placeholder */
    struct str_list env2 = {0};
    struct cred_set *set2 = NULL;
    CHECK_EQ_INT(credentials_prepare(NULL, &specs, &env2, &set2, err, sizeof err), 0);
    CHECK(strcmp(env_get(&env2, "GH_TOKEN"), ph) != 0);
    cred_set_free(set);
    cred_set_free(set2);
    str_list_free(&env);
    str_list_free(&env2);
    str_list_free(&specs);
}

static void test_profile_sources(void)
{
    const char *tmp = getenv("TMPDIR");
    char file[512];
    snprintf(file, sizeof file, "%s/cred-token", tmp ? tmp : "/tmp");
    FILE *f = fopen(file, "w");
    CHECK(f);
    fputs("file_value_0123456789\nsecond line\n", f);
    fclose(f);
    struct str_list profile = {0}, specs = {0}, env = {0};
    str_list_push_owned(&profile, xasprintf("FT\tfile:%s\th.test", file));
    str_list_push(&profile, "CT\tcmd:echo cmd_value_0123456789\th.test:8080");
    str_list_push(&profile, "GH_TOKEN\tcmd:echo not_this_one_0123456789\th.test");
    setenv("GH_TOKEN", LONG_VALUE, 1);
    str_list_push(&specs, "GH_TOKEN=api.example.com");
    struct cred_set *set = NULL;
    char err[512];
    CHECK_EQ_INT(credentials_prepare(&profile, &specs, &env, &set, err, sizeof err), 0);
    CHECK_EQ_INT(cred_set_count(set), 3);
    CHECK(env_get(&env, "FT") && env_get(&env, "CT"));
    /* the flag's GH_TOKEN, not the profile's: api.example.com, not h.test */
    CHECK(cred_set_matches_host(set, "api.example.com", 80));
    /* the value is put back from the file's first line */
    char ph[200];
    snprintf(ph, sizeof ph, "%s", env_get(&env, "FT"));
    struct cred_rewrite *rw = cred_rewrite_new(set, "h.test", 80);
    struct cred_out out = {0};
    char req[512];
    snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: h.test\r\nX: %s\r\n\r\n", ph);
    CHECK_EQ_INT(cred_rewrite_feed(rw, req, strlen(req), &out, err, sizeof err), 0);
    CHECK(memmem(out.p, out.len, "X: file_value_0123456789\r\n", 26));
    free(out.p);
    cred_rewrite_free(rw);
    cred_set_free(set);
    str_list_free(&profile);
    str_list_free(&specs);
    str_list_free(&env);
    unlink(file);
}

static void test_errors(void)
{
    struct str_list env = {0}, specs = {0}, profile = {0};
    struct cred_set *set = NULL;
    char err[512];
    str_list_push(&specs, "NOEQUALS");
    CHECK_EQ_INT(credentials_prepare(NULL, &specs, &env, &set, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "write NAME=HOST");
    CHECK(!set);
    str_list_free(&specs);
    unsetenv("CORDON_TEST_UNSET");
    str_list_push(&specs, "CORDON_TEST_UNSET=h.test");
    CHECK_EQ_INT(credentials_prepare(NULL, &specs, &env, &set, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "the variable CORDON_TEST_UNSET is not set");
    str_list_free(&specs);
    setenv("X", "v", 1);
    str_list_push(&specs, "X=h.test,,b");
    CHECK_EQ_INT(credentials_prepare(NULL, &specs, &env, &set, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "an empty host");
    str_list_free(&specs);
    str_list_push(&profile, "F\tfile:/nonexistent/cordon-test\th.test");
    CHECK_EQ_INT(credentials_prepare(&profile, NULL, &env, &set, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "cannot read /nonexistent/cordon-test");
    str_list_free(&profile);
    str_list_push(&profile, "C\tcmd:exit 3\th.test");
    CHECK_EQ_INT(credentials_prepare(&profile, NULL, &env, &set, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "failed");
    str_list_free(&profile);
    /* none declared: nothing made, env untouched */
    CHECK_EQ_INT(credentials_prepare(NULL, NULL, &env, &set, err, sizeof err), 0);
    CHECK(!set && env.len == 0);
}

/* env's NAME is want (a missing NAME fails too). */
#define CHECK_ENV(env, name, want) \
    CHECK(env_get(env, name) && strcmp(env_get(env, name), want) == 0)

static void test_git_helpers(void)
{
    struct str_list env = {0}, hosts = {0};
    str_list_push(&env, "GIT_CONFIG_COUNT=1");
    str_list_push(&env, "GIT_CONFIG_KEY_0=user.name");
    str_list_push(&env, "GIT_CONFIG_VALUE_0=me");
    str_list_push(&env, "GIT_CONFIG_KEY_2=stale.key"); /* past the count: git ignores it */
    str_list_push(&hosts, "github.com");
    str_list_push(&hosts, "127.0.0.2:8443");
    credential_git_helpers(&env, "cordon_GH_abc123", &hosts);
    CHECK_ENV(&env, "GIT_CONFIG_COUNT", "3");
    CHECK_ENV(&env, "GIT_CONFIG_KEY_0", "user.name");
    CHECK_ENV(&env, "GIT_CONFIG_VALUE_0", "me");
    CHECK_ENV(&env, "GIT_CONFIG_KEY_1", "credential.https://github.com.helper");
    CHECK_ENV(&env, "GIT_CONFIG_KEY_2", "credential.https://127.0.0.2:8443.helper");
    CHECK(env_get(&env, "GIT_CONFIG_VALUE_2"));
    CHECK_STR_CONTAINS(env_get(&env, "GIT_CONFIG_VALUE_2"), "password=cordon_GH_abc123");
    CHECK_EQ_INT((int)env.len, 7); /* the stale KEY_2 replaced, not doubled */
    str_list_free(&env);
    /* a count that is no number: left as it is, nothing added */
    str_list_push(&env, "GIT_CONFIG_COUNT=x1");
    credential_git_helpers(&env, "cordon_GH_abc123", &hosts);
    CHECK_EQ_INT((int)env.len, 1);
    CHECK_ENV(&env, "GIT_CONFIG_COUNT", "x1");
    str_list_free(&env);
    str_list_free(&hosts);
}

TEST_MAIN({"flag_and_env", test_flag_and_env}, {"profile_sources", test_profile_sources},
          {"errors", test_errors}, {"git_helpers", test_git_helpers})
