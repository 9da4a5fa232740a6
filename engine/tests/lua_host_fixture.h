/* lua_host_fixture.h — what the Lua host's unit tests (test_lua_host.c, test_lua_decide.c) share:
 * a temp datadir holding the real default policy and profiles, the paths and environment they
 * resolve with, and helpers to write a fixture file and open the host. Included by one test
 * file per binary (each its own translation unit), so the helpers are static. */
#ifndef CORDON_TESTS_LUA_HOST_FIXTURE_H
#define CORDON_TESTS_LUA_HOST_FIXTURE_H
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "policy/lua_host.h"
#include "sandbox/sandbox_config.h"
#include "test.h"

static char tmp[PATH_MAX];       /* scratch root: datadir, home, workspace live under it */
static char data[PATH_MAX + 16]; /* fixture datadir */
static char home[PATH_MAX + 16];
static char err[2048];
static char e0[] = "PATH=/usr/bin:/bin", e1[] = "OPENAI_API_KEY=sk-1", e2[] = "GITHUB_TOKEN=gh",
            e3[] = "DB_PASSWORD=pw", e4[] = "SSH_AUTH_SOCK=/tmp/a", e5[] = "LANG=C.UTF-8",
            e6[] = "TMPDIR=/var/x";
static char *env_in[] = {e0, e1, e2, e3, e4, e5, e6, NULL};

static inline void put(const char *dir, const char *rel, const char *text)
{
    char *p = xasprintf("%s/%s", dir, rel);
    CHECK(mkdir_parents(p, 0755) == 0);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
    free(p);
}

static inline char *slurp(const char *path)
{
    char *text = NULL;
    size_t n = 0;
    CHECK(read_file(path, 0, 1 << 20, &text, &n) == 0);
    return text;
}

/* A temp datadir holding the real default policy and the real profiles. */
static inline void setup(void)
{
    const char *base = getenv("TMPDIR"); /* ctest points it into the build tree */
    snprintf(tmp, sizeof tmp, "%s/cordon-lh-XXXXXX", base && *base ? base : "/tmp");
    CHECK(mkdtemp(tmp) != NULL);
    char *real = realpath(tmp, NULL);
    snprintf(tmp, sizeof tmp, "%s", real);
    free(real);
    snprintf(data, sizeof data, "%s/data", tmp);
    snprintf(home, sizeof home, "%s/home", tmp);
    mkdir(data, 0755);
    mkdir(home, 0755);
    static const char *const files[] = {"policies/00-default.lua", "profiles/coding.lua",
                                        "profiles/strict.lua", "profiles/readonly.lua",
                                        "profiles/ops.lua"};
    for (size_t i = 0; i < ARRAY_LEN(files); i++) {
        char *src = xasprintf("%s/%s", CORDON_DATADIR, files[i]);
        char *text = slurp(src);
        put(data, files[i], text);
        free(text);
        free(src);
    }
}

static inline void open_ok(void)
{
    struct lh_options opt = {.datadir = data};
    int r = lh_open(&opt, err, sizeof err);
    if (r != 0)
        fprintf(stderr, "  lh_open: %s\n", err);
    CHECK_EQ_INT(r, 0);
}

static inline struct run_flags flags_for(const char *profile)
{
    struct run_flags f = {.profile = profile,
                          .unrestricted_network = FLAG_UNSET,
                          .allow_loopback = FLAG_UNSET,
                          .allow_docker = FLAG_UNSET,
                          .json = FLAG_UNSET};
    return f;
}

static inline enum lh_outcome resolve(struct run_flags *f, struct sandbox_config *cfg)
{
    return lh_resolve_sandbox(f, tmp, home, env_in, cfg, err, sizeof err);
}
#endif
