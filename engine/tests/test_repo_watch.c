/* test_repo_watch.c — the repositories' watcher (controller/repo_watch.c) on trees made here
 * with plain files (no git, no sandbox: found only, nothing held): a repository there before
 * it started, one made deep in node_modules while it runs, a bare one, a `.git` file, and a
 * git dir still being made, which is no repository until its objects/ come. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "controller/repo_watch.h"
#include "test.h"

static char ws[4096];

static void mk_ws(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(ws, sizeof ws, "%s/repo-watch.XXXXXX", tmp);
    CHECK(mkdtemp(ws) != NULL);
    char *real = realpath(ws, NULL);
    CHECK(real);
    snprintf(ws, sizeof ws, "%s", real);
    free(real);
}

static void put(const char *rel, const char *text)
{
    char *p = xasprintf("%s/%s", ws, rel);
    CHECK(mkdir_parents(p, 0755) == 0);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write_all(fd, text, strlen(text)) == 0);
    close(fd);
    free(p);
}

static void dir(const char *rel)
{
    char *p = xasprintf("%s/%s/x", ws, rel);
    CHECK(mkdir_parents(p, 0755) == 0);
    free(p);
}

/* A git dir at gd (relative), objects/ last as `git init` makes it. */
static void gitdir(const char *gd, bool complete)
{
    char *p = xasprintf("%s/config", gd);
    put(p, "[core]\n\tbare = false\n");
    free(p);
    p = xasprintf("%s/HEAD", gd);
    put(p, "ref: refs/heads/main\n");
    free(p);
    p = xasprintf("%s/refs", gd);
    dir(p);
    free(p);
    if (complete) {
        p = xasprintf("%s/objects", gd);
        dir(p);
        free(p);
    }
}

static void rm_rf(const char *path)
{
    char *cmd = xasprintf("rm -rf '%s'", path);
    CHECK(system(cmd) == 0);
    free(cmd);
}

/* Everything found until now (after a flush), as "w:REL:e" / "b:REL:n" lines. */
static void take_all(struct repo_watch *w, struct str_list *got)
{
    repo_watch_flush(w);
    struct repo_found *f = NULL;
    struct str_list lines = {0};
    size_t n = repo_watch_take(w, &f, &lines);
    for (size_t i = 0; i < n; i++) {
        str_list_push_owned(
            got, xasprintf("%c:%s:%c", f[i].bare ? 'b' : 'w', f[i].rel, f[i].existing ? 'e' : 'n'));
        fprintf(stderr, "  found %s\n", got->items[got->len - 1]);
        free(f[i].rel);
    }
    free(f);
    for (size_t i = 0; i < lines.len; i++)
        fprintf(stderr, "  line: %s\n", lines.items[i]);
    str_list_free(&lines);
}

static void test_found_everywhere(void)
{
    mk_ws();
    gitdir("old/.git", true);
    usleep(20 * 1000); /* its ctimes before the start, whatever the clock's grain */
    long long since = repo_watch_now_ns();
    struct str_list roots = {0}, got = {0};
    str_list_push(&roots, ws);
    struct repo_watch *w = repo_watch_start(&roots, NULL, since, NULL, NULL, NULL);
    CHECK(w);
    take_all(w, &got);
    CHECK(str_list_contains(&got, "w:old:e"));

    const char *deep = "a/b/c/d/e/f/g/h/node_modules/pkg/node_modules/x";
    char *gd = xasprintf("%s/.git", deep);
    gitdir(gd, false);
    take_all(w, &got);
    CHECK(!str_list_contains(&got, "w:a/b/c/d/e/f/g/h/node_modules/pkg/node_modules/x:n"));
    char *obj = xasprintf("%s/objects", gd);
    dir(obj); /* complete now: a repository */
    take_all(w, &got);
    char *want = xasprintf("w:%s:n", deep);
    CHECK(str_list_contains(&got, want));

    gitdir("cache/pack.git", true); /* bare */
    put("sub/.git", "gitdir: ../old/.git\n");
    take_all(w, &got);
    CHECK(str_list_contains(&got, "b:cache/pack.git:n"));
    CHECK(str_list_contains(&got, "w:sub:n"));

    /* a folder moved in from elsewhere, a repository inside it */
    char *out = xasprintf("%s.out", ws), *in = xasprintf("%s/moved", ws);
    char *p = xasprintf("%s/deep/er/.git/objects/x", out);
    CHECK(mkdir_parents(p, 0755) == 0);
    free(p);
    p = xasprintf("mkdir -p %s/deep/er/.git/refs && echo ref > %s/deep/er/.git/HEAD && "
                  "touch %s/deep/er/.git/config",
                  out, out, out);
    CHECK(system(p) == 0);
    free(p);
    CHECK(rename(out, in) == 0);
    take_all(w, &got);
    CHECK(str_list_contains(&got, "w:moved/deep/er:n"));

    repo_watch_free(w);
    free(want);
    free(obj);
    free(gd);
    free(out);
    free(in);
    str_list_free(&roots);
    str_list_free(&got);
    rm_rf(ws);
}

TEST_MAIN({"found wherever and whenever it appears, complete", test_found_everywhere})
