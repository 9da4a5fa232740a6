/* test_git_guard.c — the repositories' check (controller/git_guard.c) on workspaces made here
 * with plain files (no git needed): what it finds to hold read-only, each kind of difference
 * and its undo, and that links a command planted never lead it out of the workspace. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "base/record.h"
#include "controller/git_guard.h"
#include "controller/repo_watch.h"
#include "test.h"

static char ws[4096];

static void mk_ws(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(ws, sizeof ws, "%s/git-guard.XXXXXX", tmp);
    CHECK(mkdtemp(ws) != NULL);
    char *real = realpath(ws, NULL);
    CHECK(real);
    snprintf(ws, sizeof ws, "%s", real);
    free(real);
}

static char *at(const char *rel)
{
    return xasprintf("%s/%s", ws, rel);
}

/* A file at path (its folders made), holding text, with mode. */
static void put_file(const char *path, const char *text, mode_t mode)
{
    CHECK(mkdir_parents(path, 0755) == 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    CHECK(fd >= 0);
    CHECK(write_all(fd, text, strlen(text)) == 0);
    CHECK(fchmod(fd, mode) == 0);
    close(fd);
}

/* The same, at a path relative to the workspace. */
static void put(const char *rel, const char *text, mode_t mode)
{
    char *p = at(rel);
    put_file(p, text, mode);
    free(p);
}

static char *get(const char *rel)
{
    char *p = at(rel), *buf = NULL;
    size_t len;
    int r = read_file(p, O_NOFOLLOW, 1 << 20, &buf, &len);
    free(p);
    return r < 0 ? NULL : buf;
}

static bool exists(const char *rel)
{
    char *p = at(rel);
    struct stat st;
    bool r = lstat(p, &st) == 0;
    free(p);
    return r;
}

static mode_t mode_of(const char *rel)
{
    char *p = at(rel);
    struct stat st;
    CHECK(lstat(p, &st) == 0);
    free(p);
    return st.st_mode & 07777;
}

/* A git dir as `git init` leaves it, enough for the guard (which never runs git). */
static void repo(const char *dir)
{
    char *p = xasprintf("%s%s.git/config", dir, dir[0] ? "/" : "");
    put(p, "[core]\n\trepositoryformatversion = 0\n\tbare = false\n", 0644);
    free(p);
    p = xasprintf("%s%s.git/HEAD", dir, dir[0] ? "/" : "");
    put(p, "ref: refs/heads/main\n", 0644);
    free(p);
    p = xasprintf("%s%s.git/hooks/pre-commit.sample", dir, dir[0] ? "/" : "");
    put(p, "#!/bin/sh\n", 0755);
    free(p);
}

static bool has_line(const struct str_list *l, const char *needle)
{
    for (size_t i = 0; i < l->len; i++)
        if (strstr(l->items[i], needle))
            return true;
    return false;
}

static void dump(const struct str_list *l)
{
    for (size_t i = 0; i < l->len; i++)
        fprintf(stderr, "  line: %s\n", l->items[i]);
}

static void test_readonly_list(void)
{
    mk_ws();
    repo("");
    repo("vendor/lib");
    put(".git/modules/sub/config", "[core]\n\tbare = false\n", 0644);
    put(".git/modules/sub/HEAD", "ref: refs/heads/main\n", 0644);
    put("sub/.git", "gitdir: ../.git/modules/sub\n", 0644);
    put(".husky/pre-commit", "#!/bin/sh\nexit 0\n", 0755);
    put(".git/config", "[core]\n\thooksPath = .husky\n", 0644);
    struct str_list ro = {0};
    struct git_guard *g = git_guard_new(ws, &ro);
    CHECK(g);
    static const char *const want[] = {".git/config",
                                       ".git/hooks",
                                       "vendor/lib/.git/config",
                                       "vendor/lib/.git/hooks",
                                       ".git/modules/sub/config",
                                       "sub/.git",
                                       ".husky"};
    for (size_t i = 0; i < ARRAY_LEN(want); i++) {
        if (!str_list_contains(&ro, want[i]))
            fprintf(stderr, "  missing: %s\n", want[i]);
        CHECK(str_list_contains(&ro, want[i]));
    }
    CHECK(!str_list_contains(&ro, ".git/commondir")); /* only what exists */
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    git_guard_free(g);
    str_list_free(&ro);
    str_list_free(&lines);
}

static void test_new_hook_and_pointer(void)
{
    mk_ws();
    repo("");
    repo("vendor/lib");
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    put("vendor/lib/.git/hooks/pre-commit", "#!/bin/sh\ntouch /x\n", 0755);
    put(".git/commondir", "/elsewhere\n", 0644);
    put("fresh/.git", "gitdir: /outside/repo\n", 0644);
    struct str_list lines = {0};
    int n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK_EQ_INT(n, 3);
    CHECK(!exists("vendor/lib/.git/hooks/pre-commit"));
    CHECK(exists("vendor/lib/.git/hooks/pre-commit.cordon-refused"));
    CHECK_EQ_INT(mode_of("vendor/lib/.git/hooks/pre-commit.cordon-refused") & 0111, 0);
    CHECK(!exists(".git/commondir") && exists(".git/commondir.cordon-refused"));
    CHECK(!exists("fresh/.git") && exists("fresh/.git.cordon-refused"));
    CHECK(has_line(&lines, "repository vendor/lib: vendor/lib/.git/hooks/pre-commit: a new hook"));
    /* the snapshot is now the state after the undo: nothing more to say */
    str_list_free(&lines);
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    git_guard_free(g);
    str_list_free(&lines);
}

static void test_changed_config_restored(void)
{
    mk_ws();
    repo("");
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    char *before = get(".git/config");
    /* a harmless change is not a difference */
    put(".git/config",
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[user]\n\tname = x\n", 0644);
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    put(".git/config", "[core]\n\tfsmonitor = /bin/evil\n", 0644);
    int n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK_EQ_INT(n, 1);
    CHECK(has_line(&lines, "core.fsmonitor=/bin/evil"));
    char *after = get(".git/config");
    CHECK(after && strstr(after, "name = x") && !strstr(after, "fsmonitor"));
    free(before);
    free(after);
    git_guard_free(g);
    str_list_free(&lines);
}

static void test_new_repository_config_defused(void)
{
    mk_ws();
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    put("app/.git/config",
        "[core]\n\tbare = false\n\tfsmonitor = /bin/evil\n[user]\n\tname = kept\n", 0644);
    put("app/.git/HEAD", "ref: refs/heads/main\n", 0644);
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check(g, &lines), 1);
    char *c = get("app/.git/config");
    CHECK(c && strstr(c, "# cordon-refused: \tfsmonitor = /bin/evil") && strstr(c, "name = kept"));
    free(c);
    git_guard_free(g);
    str_list_free(&lines);
}

/* A command replaces the hooks folder of a nested repository with a link out of the workspace
 * and puts one inside pointing at a hook outside: the guard renames the links and touches
 * nothing outside. */
static void test_planted_links(void)
{
    mk_ws();
    repo("");
    repo("n");
    char *outside = xasprintf("%s.outside", ws);
    CHECK(mkdir(outside, 0755) == 0 || errno == EEXIST);
    char *hook = xasprintf("%s/pre-commit", outside);
    int fd = open(hook, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    CHECK(fd >= 0);
    close(fd);
    CHECK(chmod(hook, 0755) == 0);
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    char *nh = at("n/.git/hooks"), *link = at(".git/hooks/post-checkout");
    char *cmd = xasprintf("rm -rf '%s'", nh);
    CHECK(system(cmd) == 0);
    CHECK(symlink(outside, nh) == 0);
    CHECK(symlink(hook, link) == 0);
    struct str_list lines = {0};
    int n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK(n >= 2);
    struct stat st;
    CHECK(lstat(hook, &st) == 0 && (st.st_mode & 0111) == 0111); /* outside: untouched */
    CHECK(!exists(".git/hooks/post-checkout") && exists(".git/hooks/post-checkout.cordon-refused"));
    CHECK(!exists("n/.git/hooks") || !S_ISLNK(mode_of("n/.git/hooks")));
    unlink(hook);
    rmdir(outside);
    free(outside);
    free(hook);
    free(nh);
    free(link);
    free(cmd);
    git_guard_free(g);
    str_list_free(&lines);
}

/* The folder of a removed link: restored, the folder put there renamed away. */
static void test_hooks_link_replaced(void)
{
    mk_ws();
    repo("");
    put(".githooks/pre-commit", "#!/bin/sh\nexit 0\n", 0755);
    char *h = at(".git/hooks"), *cmd = xasprintf("rm -rf '%s'", h);
    CHECK(system(cmd) == 0);
    CHECK(symlink("../.githooks", h) == 0);
    struct str_list ro = {0};
    struct git_guard *g = git_guard_new(ws, &ro);
    CHECK(g);
    CHECK(str_list_contains(&ro, ".githooks"));
    CHECK(unlink(h) == 0);
    put(".git/hooks/pre-commit", "#!/bin/sh\ntouch /x\n", 0755);
    put(".githooks/pre-push", "#!/bin/sh\ntouch /x\n", 0755);
    struct str_list lines = {0};
    git_guard_check(g, &lines);
    dump(&lines);
    char target[64] = "";
    CHECK(readlink(h, target, sizeof target - 1) > 0);
    CHECK(strcmp(target, "../.githooks") == 0);
    CHECK(exists(".git/hooks.cordon-refused/pre-commit"));
    CHECK(!exists(".githooks/pre-push") && exists(".githooks/pre-push.cordon-refused"));
    free(h);
    free(cmd);
    git_guard_free(g);
    str_list_free(&ro);
    str_list_free(&lines);
}

/* A repository the snapshot knew stays checked when a command fills the workspace with folders
 * to push it past the walk's bound. */
static void test_known_past_bound(void)
{
    mk_ws();
    repo("zz");
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    for (int i = 0; i < GIT_GUARD_MAX_DIRS + 10; i++) {
        char *p = xasprintf("%s/a%05d", ws, i);
        CHECK(mkdir(p, 0755) == 0);
        free(p);
    }
    put("zz/.git/hooks/pre-commit", "#!/bin/sh\n", 0755);
    struct str_list lines = {0};
    git_guard_check(g, &lines);
    dump(&lines);
    CHECK(!has_line(&lines, "stopped there")); /* the watcher finds what lies past it */
    CHECK(exists("zz/.git/hooks/pre-commit.cordon-refused"));
    git_guard_free(g);
    str_list_free(&lines);
}

/* A program a config entry runs by path, in the workspace: held read-only, a change undone. */
static void test_program_by_path(void)
{
    mk_ws();
    repo("");
    put(".git/config", "[diff \"pdf\"]\n\ttextconv = ./scripts/conv.sh --x\n", 0644);
    put("scripts/conv.sh", "#!/bin/sh\ncat\n", 0755);
    struct str_list ro = {0};
    struct git_guard *g = git_guard_new(ws, &ro);
    CHECK(g);
    CHECK(str_list_contains(&ro, "scripts/conv.sh"));
    put("scripts/conv.sh", "#!/bin/sh\ntouch /x\n", 0755);
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check(g, &lines), 1);
    dump(&lines);
    char *c = get("scripts/conv.sh");
    CHECK(c && strcmp(c, "#!/bin/sh\ncat\n") == 0);
    free(c);
    git_guard_free(g);
    str_list_free(&ro);
    str_list_free(&lines);
}

/* The host's global config: its relative core.hooksPath applies to every repository, and a
 * global config that lies in the workspace (a dotfiles repository) is guarded itself. */
static void test_host_config(void)
{
    mk_ws();
    repo("proj");
    put("dotfiles/gitconfig", "[core]\n\thooksPath = .githooks\n", 0644);
    put("proj/.githooks/pre-commit", "#!/bin/sh\n", 0755);
    char *home = at("home");
    CHECK(mkdir(home, 0755) == 0);
    char *link = xasprintf("%s/.gitconfig", home), *target = at("dotfiles/gitconfig");
    CHECK(symlink(target, link) == 0);
    setenv("HOME", home, 1);
    unsetenv("GIT_CONFIG_GLOBAL");
    unsetenv("XDG_CONFIG_HOME");
    struct str_list ro = {0};
    struct git_guard *g = git_guard_new(ws, &ro);
    CHECK(g);
    CHECK(str_list_contains(&ro, "dotfiles/gitconfig"));
    CHECK(str_list_contains(&ro, "proj/.githooks"));
    put("proj/.githooks/post-checkout", "#!/bin/sh\n", 0755);
    put("dotfiles/gitconfig", "[core]\n\tfsmonitor = /x\n", 0644);
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check(g, &lines), 2);
    dump(&lines);
    CHECK(exists("proj/.githooks/post-checkout.cordon-refused"));
    char *c = get("dotfiles/gitconfig");
    CHECK(c && strstr(c, "hooksPath") && !strstr(c, "fsmonitor"));
    free(c);
    free(home);
    free(link);
    free(target);
    git_guard_free(g);
    str_list_free(&ro);
    str_list_free(&lines);
}

/* The workspace is a linked worktree of a repository elsewhere whose config names
 * core.hooksPath = .husky: relative to the worktree, so in the workspace. */
static void test_worktree_hooks_path(void)
{
    mk_ws();
    char *main = xasprintf("%s.main", ws), *f = NULL;
    f = xasprintf("%s/.git/worktrees/wt/commondir", main);
    put_file(f, "../..\n", 0644);
    free(f);
    f = xasprintf("%s/.git/config", main);
    put_file(f, "[core]\n\thooksPath = .husky\n", 0644);
    free(f);
    f = xasprintf("gitdir: %s/.git/worktrees/wt\n", main);
    put(".git", f, 0644);
    free(f);
    put(".husky/pre-commit", "#!/bin/sh\n", 0755);
    struct str_list ro = {0};
    struct git_guard *g = git_guard_new(ws, &ro);
    CHECK(g);
    CHECK(str_list_contains(&ro, ".husky"));
    CHECK(str_list_contains(&ro, ".git"));
    put(".husky/pre-commit", "#!/bin/sh\ntouch /x\n", 0755);
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check(g, &lines), 1);
    dump(&lines);
    char *c = get(".husky/pre-commit");
    CHECK(c && strcmp(c, "#!/bin/sh\n") == 0);
    free(c);
    f = xasprintf("rm -rf '%s'", main);
    CHECK(system(f) == 0);
    free(f);
    free(main);
    git_guard_free(g);
    str_list_free(&ro);
    str_list_free(&lines);
}

/* ---- the incremental walk ----------------------------------------------------------------- */

/* The folders made so far get a ctime older than the guard's margin for a ctime too close to a
 * walk (which it lists again): only then are they taken as unchanged. */
static void settle(void)
{
    usleep(250 * 1000);
}

static void mkdir_rel(const char *rel)
{
    char *p = at(rel);
    CHECK(mkdir_parents(p, 0755) == 0);
    CHECK(mkdir(p, 0755) == 0 || errno == EEXIST);
    free(p);
}

static void rm_rf(const char *abs)
{
    char *cmd = xasprintf("rm -rf '%s'", abs);
    CHECK(system(cmd) == 0);
    free(cmd);
}

/* A workspace of 1 + 3 + 9 + 27 folders (t/a.. t/a/a.. t/a/a/a..) plus a repository. */
static void tree(void)
{
    static const char *const n[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) {
                char *p = xasprintf("t/%s/%s/%s", n[i], n[j], n[k]);
                mkdir_rel(p);
                free(p);
            }
    repo("");
}

/* Nothing changed: no folder is listed again, every one is looked at. A repository made deep
 * inside then (its folder's ctime changed, its ancestors' did not) is still found. */
static void test_incremental_deep_repository(void)
{
    mk_ws();
    tree();
    settle();
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    size_t all = git_guard_last_dirs(g);
    CHECK_EQ_INT(all, 41);
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    CHECK_EQ_INT(git_guard_last_dirs(g), all);
    CHECK_EQ_INT(git_guard_last_listed(g), 0);
    put("t/b/c/a/.git/config", "[core]\n\tfsmonitor = /bin/evil\n", 0644);
    put("t/b/c/a/.git/HEAD", "ref: refs/heads/main\n", 0644);
    int n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(git_guard_last_listed(g), 1); /* t/b/c/a only */
    char *c = get("t/b/c/a/.git/config");
    CHECK(c && strstr(c, "# cordon-refused: \tfsmonitor"));
    free(c);
    git_guard_free(g);
    str_list_free(&lines);
}

/* A `.git` added to a known folder whose mtime is then put back: its ctime still changed. */
static void test_incremental_mtime_put_back(void)
{
    mk_ws();
    tree();
    settle();
    char *dir = at("t/c/a");
    struct stat before;
    CHECK(stat(dir, &before) == 0);
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    put("t/c/a/.git", "gitdir: /outside/repo\n", 0644);
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    CHECK(utimensat(AT_FDCWD, dir, times, AT_SYMLINK_NOFOLLOW) == 0);
    struct stat after;
    CHECK(stat(dir, &after) == 0);
    CHECK(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
          after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    struct str_list lines = {0};
    int n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK_EQ_INT(n, 1);
    CHECK(!exists("t/c/a/.git") && exists("t/c/a/.git.cordon-refused"));
    free(dir);
    git_guard_free(g);
    str_list_free(&lines);
}

/* A sub-tree moved in from outside the workspace, over a known (empty) folder's name: its
 * folders are new to the walk, whatever their ctime. */
static void test_incremental_moved_in(void)
{
    mk_ws();
    tree();
    char *out = xasprintf("%s.out", ws);
    rm_rf(out);
    char *hook = xasprintf("%s/m/n/.git/hooks/pre-commit", out);
    put_file(hook, "#!/bin/sh\ntouch /x\n", 0755);
    char *from = xasprintf("%s/m", out), *to = at("t/a/b/c");
    settle();
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    CHECK(rename(from, to) == 0);
    struct str_list lines = {0};
    int n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK(n >= 1);
    CHECK(exists("t/a/b/c/n/.git/hooks/pre-commit.cordon-refused"));
    rm_rf(out);
    free(out);
    free(hook);
    free(from);
    free(to);
    git_guard_free(g);
    str_list_free(&lines);
}

/* A known folder replaced by a symbolic link to a repository outside: not followed, nothing
 * outside touched; a folder put back there later is listed, not taken from what was known. */
static void test_incremental_folder_to_link(void)
{
    mk_ws();
    tree();
    char *out = xasprintf("%s.out", ws);
    rm_rf(out);
    char *hook = xasprintf("%s/.git/hooks/pre-commit", out);
    put_file(hook, "#!/bin/sh\n", 0755);
    settle();
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    char *b = at("t/b");
    rm_rf(b);
    CHECK(symlink(out, b) == 0);
    struct str_list lines = {0};
    int n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK_EQ_INT(n, 0);
    struct stat st;
    CHECK(lstat(hook, &st) == 0 && (st.st_mode & 0111) == 0111); /* outside: untouched */
    CHECK(lstat(b, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(git_guard_last_dirs(g) < 41);
    CHECK(unlink(b) == 0);
    put("t/b/a/.git/hooks/post-checkout", "#!/bin/sh\n", 0755);
    n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK_EQ_INT(n, 1);
    CHECK(exists("t/b/a/.git/hooks/post-checkout.cordon-refused"));
    rm_rf(out);
    free(out);
    free(hook);
    free(b);
    git_guard_free(g);
    str_list_free(&lines);
}

/* A known folder removed, then one of the same name made (its inode may be the freed one): what
 * was known of it is not used. */
static void test_incremental_removed(void)
{
    mk_ws();
    tree();
    repo("t/c/b/c");
    settle();
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    char *c = at("t/c");
    rm_rf(c);
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    CHECK_EQ_INT(git_guard_last_dirs(g), 41 - 13);
    put("t/c/b/c/.git/config", "[core]\n\tfsmonitor = /bin/evil\n", 0644);
    int n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK_EQ_INT(n, 1);
    char *cfg = get("t/c/b/c/.git/config");
    CHECK(cfg && strstr(cfg, "# cordon-refused: \tfsmonitor"));
    free(cfg);
    free(c);
    git_guard_free(g);
    str_list_free(&lines);
}

/* The bound holds in the incremental walk too: folders added to an unchanged workspace push it
 * past GIT_GUARD_MAX_DIRS, which is said, and the known repository is still checked. */
static void test_incremental_bound(void)
{
    mk_ws();
    repo("zz");
    for (int i = 0; i < GIT_GUARD_MAX_DIRS - 200; i++) {
        char *p = xasprintf("%s/d%02d/a%05d", ws, i % 50, i);
        CHECK(mkdir_parents(p, 0755) == 0);
        CHECK(mkdir(p, 0755) == 0);
        free(p);
    }
    settle();
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    CHECK(git_guard_last_dirs(g) < GIT_GUARD_MAX_DIRS);
    for (int i = 0; i < 200; i++) {
        char *p = xasprintf("%s/e%03d", ws, i);
        CHECK(mkdir(p, 0755) == 0);
        free(p);
    }
    put("zz/.git/hooks/pre-commit", "#!/bin/sh\n", 0755);
    struct str_list lines = {0};
    git_guard_check(g, &lines);
    dump(&lines);
    CHECK(!has_line(&lines, "stopped there"));
    CHECK_EQ_INT(git_guard_last_dirs(g), GIT_GUARD_MAX_DIRS);
    CHECK(git_guard_last_listed(g) <= 1 + 200); /* the workspace, and what was added */
    CHECK(exists("zz/.git/hooks/pre-commit.cordon-refused"));
    git_guard_free(g);
    str_list_free(&lines);
}

/* A folder with more sub-folders than a walk keeps names of: looked into as it is listed, and
 * listed again by the next walk, unchanged or not; the workspace's repository is still checked. */
static void test_incremental_names_past_budget(void)
{
    struct stat st;
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode))
        setenv("TMPDIR", "/dev/shm", 1); /* 40000 folders: made in a second there */
    mk_ws();
    repo(""); /* found before any bound */
    for (int i = 0; i < 4 * GIT_GUARD_MAX_DIRS + 10; i++) {
        char *p = xasprintf("%s/big/%05d", ws, i);
        if (i == 0)
            CHECK(mkdir_parents(p, 0755) == 0);
        CHECK(mkdir(p, 0755) == 0);
        free(p);
    }
    settle();
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    CHECK(git_guard_last_listed(g) >= 1); /* big, again */
    put(".git/hooks/pre-commit", "#!/bin/sh\n", 0755);
    CHECK_EQ_INT(git_guard_check(g, &lines), 1);
    CHECK(exists(".git/hooks/pre-commit.cordon-refused"));
    git_guard_free(g);
    str_list_free(&lines);
    rm_rf(ws); /* not left for later walks of the build tree */
}

/* ---- the walk kept between runs (git_guard_new_cached) ------------------------------------ */

static char *cache_path(void)
{
    return xasprintf("%s.walk", ws); /* beside the workspace: not walked */
}

/* A guard's walk is written to its cache by a check; the guard made next with it (the next
 * run) lists no folder unchanged since, yet finds a repository the host made deep inside in
 * between (its folder's ctime changed), and one made while it runs, as a run of its own would. */
static void test_cache_next_run(void)
{
    mk_ws();
    tree();
    settle();
    char *cache = cache_path();
    struct str_list lines = {0}, ro = {0};
    struct git_guard *g = git_guard_new_cached(ws, NULL, cache);
    CHECK(g);
    CHECK_EQ_INT(git_guard_last_listed(g), 41);
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    git_guard_free(g);
    struct stat st;
    CHECK(lstat(cache, &st) == 0 && S_ISREG(st.st_mode));
    CHECK_EQ_INT(st.st_mode & 0777, 0600);
    repo("t/b/c/a"); /* the host's, between the runs */
    settle();
    g = git_guard_new_cached(ws, &ro, cache);
    CHECK(g);
    CHECK_EQ_INT(git_guard_last_dirs(g), 41);
    CHECK_EQ_INT(git_guard_last_listed(g), 1); /* t/b/c/a only */
    CHECK(str_list_contains(&ro, "t/b/c/a/.git/config"));
    /* read afresh, though the folder holding it was not listed */
    CHECK(str_list_contains(&ro, ".git/config"));
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    CHECK_EQ_INT(git_guard_last_listed(g), 0);
    put("t/c/a/b/.git/config", "[core]\n\tfsmonitor = /bin/evil\n", 0644); /* the command's */
    put("t/c/a/b/.git/HEAD", "ref: refs/heads/main\n", 0644);
    int n = git_guard_check(g, &lines);
    dump(&lines);
    CHECK_EQ_INT(n, 1);
    char *c = get("t/c/a/b/.git/config");
    CHECK(c && strstr(c, "# cordon-refused: \tfsmonitor"));
    free(c);
    git_guard_free(g);
    /* The next run's first walk: the defused repository is known, its folder (changed by the
     * undo, too close to that check's walk) listed once more. */
    settle();
    str_list_free(&ro);
    g = git_guard_new_cached(ws, &ro, cache);
    CHECK(g);
    CHECK(str_list_contains(&ro, "t/c/a/b/.git/config"));
    CHECK(git_guard_last_listed(g) <= 2);
    git_guard_free(g);
    unlink(cache);
    free(cache);
    str_list_free(&ro);
    str_list_free(&lines);
    rm_rf(ws);
}

/* The kept walk is a file of base/record.h around a payload: u32 records, u64 dev, u64 the
 * root's inode, then the root's record at ROOT (u64 ino, i64 and u32 ctime, u32 sub-folders at
 * +20, u8 flags at +24, u8 `.git` type, u16 name length at +26, the name at +28). */
#define WALK_MAGIC "cordgwk\n"
#define WALK_VERSION 2u
#define ROOT 20

/* The payload of a whole kept walk, checked. */
static char *payload_of(char *buf, size_t len)
{
    struct rec_in in;
    CHECK(rec_file_open(buf, len, WALK_MAGIC, WALK_VERSION, &in));
    CHECK(rec_left(&in) > ROOT + 28);
    return (char *)in.p;
}

/* Write payload (plen bytes) over path as a kept walk with a good check: what a reader then
 * refuses, it refuses for the field, not for the check. */
static void reseal(const char *path, const char *payload, size_t plen)
{
    struct rec_out o = {0};
    rec_put(&o, payload, plen);
    CHECK(rec_file_write(path, WALK_MAGIC, WALK_VERSION, &o) == 0);
    rec_out_free(&o);
}

/* A folder whose ctime was too close to the walk that listed it (marked so in the file: made
 * here, the margin of a real one depends on how fast the walks come) is listed again by the
 * next run's first walk, though its stamps are unchanged. */
static void test_cache_racy(void)
{
    mk_ws();
    tree();
    settle();
    char *cache = cache_path(), *buf = NULL;
    size_t len = 0;
    struct str_list lines = {0};
    struct git_guard *g = git_guard_new_cached(ws, NULL, cache);
    CHECK(g);
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    git_guard_free(g);
    CHECK(read_file(cache, 0, 1 << 24, &buf, &len) == 0);
    char *p = payload_of(buf, len);
    CHECK(p[ROOT + 24] == 1); /* the root's flags: listed */
    p[ROOT + 24] = 3;         /* listed, too close */
    reseal(cache, p, len - REC_FILE_OVERHEAD);
    g = git_guard_new_cached(ws, NULL, cache);
    CHECK(g);
    CHECK_EQ_INT(git_guard_last_listed(g), 1); /* the root only */
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    git_guard_free(g);
    g = git_guard_new_cached(ws, NULL, cache); /* that check kept it, settled: not again */
    CHECK(g);
    CHECK_EQ_INT(git_guard_last_listed(g), 0);
    git_guard_free(g);
    unlink(cache);
    free(cache);
    free(buf);
    str_list_free(&lines);
    rm_rf(ws);
}

/* Write bytes [0, len) of buf, then extra, over path. */
static void rewrite(const char *path, const char *buf, size_t len, const char *extra, size_t xlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(write_all(fd, buf, len) == 0);
    if (xlen)
        CHECK(write_all(fd, extra, xlen) == 0);
    close(fd);
}

/* A full walk, and what it finds is what a guard without a cache finds. */
static void expect_full_walk(const char *cache, const struct str_list *want, const char *what)
{
    struct str_list ro = {0}, lines = {0};
    struct git_guard *g = git_guard_new_cached(ws, &ro, cache);
    CHECK(g);
    if (git_guard_last_listed(g) != 41)
        fprintf(stderr, "  %s: %zu listed\n", what, git_guard_last_listed(g));
    CHECK_EQ_INT(git_guard_last_listed(g), 41);
    CHECK_EQ_INT(ro.len, want->len);
    for (size_t i = 0; i < want->len; i++)
        CHECK(str_list_contains(&ro, want->items[i]));
    git_guard_free(g); /* no check: the file stays as this case made it */
    str_list_free(&ro);
    str_list_free(&lines);
}

/* A cache file that is truncated, corrupt, of another version, too big, a link, or another
 * tree's (another root inode) is not used: a full walk, with the same result. */
static void test_cache_ignored(void)
{
    mk_ws();
    tree();
    repo("t/a/b/c");
    settle();
    char *cache = cache_path(), *buf = NULL;
    size_t len = 0;
    struct str_list want = {0}, lines = {0};
    struct git_guard *g = git_guard_new_cached(ws, &want, cache);
    CHECK(g);
    CHECK_EQ_INT(git_guard_check(g, &lines), 0);
    git_guard_free(g);
    CHECK(read_file(cache, 0, 1 << 24, &buf, &len) == 0);
    CHECK(len > 64);
    str_list_free(&want);
    g = git_guard_new_cached(ws, &want, cache); /* the file works: nothing listed */
    CHECK_EQ_INT(git_guard_last_listed(g), 0);
    git_guard_free(g);

    rewrite(cache, buf, len / 2, NULL, 0);
    expect_full_walk(cache, &want, "truncated");
    rewrite(cache, buf, len - 1, NULL, 0);
    expect_full_walk(cache, &want, "one byte short");
    rewrite(cache, buf, len, "x", 1);
    expect_full_walk(cache, &want, "a byte more");
    char *bad = xmalloc(len);
    memcpy(bad, buf, len);
    bad[0] ^= 0x20;
    rewrite(cache, bad, len, NULL, 0);
    expect_full_walk(cache, &want, "magic");
    memcpy(bad, buf, len);
    bad[8] ^= 0x3; /* version */
    rewrite(cache, bad, len, NULL, 0);
    expect_full_walk(cache, &want, "version");
    memcpy(bad, buf, len);
    bad[len / 2] ^= 0x1; /* a byte of the payload: the check fails */
    rewrite(cache, bad, len, NULL, 0);
    expect_full_walk(cache, &want, "check");
    /* the format before record.h: its own magic, no check */
    static const char v1[] = "cordon git walk\n\1\0\0\0";
    rewrite(cache, v1, sizeof v1 - 1, buf + 16, len - 16);
    expect_full_walk(cache, &want, "version 1");

    /* fields the check covers, changed and sealed again: refused for what they say */
    size_t plen = len - REC_FILE_OVERHEAD;
    char *p = payload_of(buf, len);
    memcpy(bad, p, plen);
    bad[0] ^= 0x1; /* record count */
    reseal(cache, bad, plen);
    expect_full_walk(cache, &want, "count");
    memcpy(bad, p, plen);
    bad[4] ^= 0x1; /* device */
    reseal(cache, bad, plen);
    expect_full_walk(cache, &want, "device");
    memcpy(bad, p, plen);
    bad[ROOT + 24] = 0x10; /* the root's flags: an unknown bit */
    reseal(cache, bad, plen);
    expect_full_walk(cache, &want, "flags");
    memcpy(bad, p, plen);
    bad[ROOT + 26] = (char)0xff; /* the root's name length, past the file */
    bad[ROOT + 27] = (char)0x00;
    reseal(cache, bad, plen);
    expect_full_walk(cache, &want, "name length");
    memcpy(bad, p, plen);
    bad[ROOT + 28] = '/'; /* the root's name */
    reseal(cache, bad, plen);
    expect_full_walk(cache, &want, "name");
    memcpy(bad, p, plen);
    bad[ROOT + 20] = (char)0xff; /* the root's sub-folders: more than there are records */
    reseal(cache, bad, plen);
    expect_full_walk(cache, &want, "sub-folders");
    memcpy(bad, p, plen);
    bad[12] ^= 0x1;   /* another root inode, in the header and the root's record alike: taken */
    bad[ROOT] ^= 0x1; /* as it is, only the root would be listed (its stamp differs), not all */
    reseal(cache, bad, plen);
    expect_full_walk(cache, &want, "root inode");
    free(bad);

    /* too big: past any tree's size (read no further than its size) */
    rewrite(cache, buf, len, NULL, 0);
    CHECK(truncate(cache, 64 << 20) == 0);
    expect_full_walk(cache, &want, "oversized");

    /* a symbolic link to a good copy */
    char *copy = xasprintf("%s.copy", cache);
    rewrite(copy, buf, len, NULL, 0);
    CHECK(unlink(cache) == 0 && symlink(copy, cache) == 0);
    expect_full_walk(cache, &want, "symbolic link");
    unlink(cache);

    /* another tree at the same path: the workspace made again (another root inode) */
    char *old = xasprintf("%s.old", ws);
    CHECK(rename(ws, old) == 0);
    char *cmd = xasprintf("cp -a '%s' '%s'", old, ws);
    CHECK(system(cmd) == 0);
    free(cmd);
    rm_rf(old);
    settle();
    rewrite(cache, buf, len, NULL, 0);
    expect_full_walk(cache, &want, "another root");

    unlink(cache);
    unlink(copy);
    free(copy);
    free(old);
    free(buf);
    free(cache);
    str_list_free(&want);
    str_list_free(&lines);
    rm_rf(ws);
}

/* ---- repositories the watcher found (git_guard_add_repo), stand-ins (git_guard_set_hold) ---- */

/* Past the walk's bound and in node_modules: a repository the person had is the reference (its
 * own core.fsmonitor stays, no line); one made during the run is compared with nothing (its
 * code-running line commented out); a bare one's new hook is renamed away. */
static void test_found_repositories(void)
{
    mk_ws();
    const char *old = "a/b/c/d/e/f/g/node_modules/old", *made = "a/b/c/d/e/f/g/node_modules/made";
    char *p = xasprintf("%s/.git/config", old);
    put(p, "[core]\n\tfsmonitor = /usr/bin/watcher\n", 0644);
    free(p);
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    git_guard_add_repo(g, old, false, true);
    p = xasprintf("%s/.git/config", made);
    put(p, "[core]\n\tfsmonitor = /bin/evil\n", 0644);
    free(p);
    git_guard_add_repo(g, made, false, false);
    put("pack.git/HEAD", "ref: refs/heads/main\n", 0644);
    put("pack.git/config", "[core]\n\tbare = true\n", 0644);
    git_guard_add_repo(g, "pack.git", true, false);
    struct str_list lines = {0};
    CHECK_EQ_INT(git_guard_check_known(g, &lines), 1); /* the made one's config */
    dump(&lines);
    CHECK(!has_line(&lines, "node_modules/old"));
    p = xasprintf("%s/.git/config", made);
    char *c = get(p);
    CHECK(c && strstr(c, "# cordon-refused"));
    free(c);
    free(p);
    p = xasprintf("%s/.git/config", old);
    c = get(p);
    CHECK(c && !strstr(c, "cordon-refused"));
    free(c);
    free(p);
    str_list_free(&lines);
    put("pack.git/hooks/pre-receive", "#!/bin/sh\n", 0755);
    CHECK_EQ_INT(git_guard_check_known(g, &lines), 1);
    dump(&lines);
    CHECK(exists("pack.git/hooks/pre-receive.cordon-refused"));
    git_guard_free(g);
    str_list_free(&lines);
}

static int holds_made;
static int hold_ok(void *ctx, const char *rel)
{
    (void)ctx;
    CHECK(strstr(rel, ".cordon-stand-in") != NULL);
    holds_made++;
    return 0;
}

/* A commondir planted in a git dir that was there: renamed away, an empty stand-in held in its
 * place while commands run (a tick), gone with the guard; at a command's last check none. */
static void test_stand_in(void)
{
    mk_ws();
    repo("");
    struct git_guard *g = git_guard_new(ws, NULL);
    CHECK(g);
    git_guard_set_hold(g, hold_ok, NULL);
    usleep(20 * 1000);
    git_guard_since(g, repo_watch_now_ns()); /* .git was there before */
    put(".git/commondir", "/elsewhere\n", 0644);
    struct str_list lines = {0};
    CHECK(git_guard_tick(g, &lines, false) >= 1);
    dump(&lines);
    CHECK_EQ_INT(holds_made, 1);
    CHECK(has_line(&lines, "an empty commondir is held in its place"));
    CHECK(exists(".git/commondir.cordon-refused"));
    char *c = get(".git/commondir");
    CHECK(c && c[0] == '\0');
    free(c);
    CHECK_EQ_INT(mode_of(".git/commondir"), 0444);
    str_list_free(&lines);
    CHECK_EQ_INT(git_guard_tick(g, &lines, false), 0); /* its own: no line */
    git_guard_free(g);
    CHECK(!exists(".git/commondir"));
    str_list_free(&lines);
}

TEST_MAIN(
    {"what exists is listed to hold read-only", test_readonly_list},
    {"a new hook, commondir and .git file are renamed away", test_new_hook_and_pointer},
    {"a config's code-running change is undone, other changes are not",
     test_changed_config_restored},
    {"a new repository's code-running lines are commented out", test_new_repository_config_defused},
    {"planted links are renamed, nothing outside is touched", test_planted_links},
    {"a hooks link replaced by a folder is restored", test_hooks_link_replaced},
    {"a known repository past the bound is still checked", test_known_past_bound},
    {"a program a config entry runs by path is guarded", test_program_by_path},
    {"the host's global config: its hooksPath, and itself in the workspace", test_host_config},
    {"a linked worktree's core.hooksPath folder in the workspace", test_worktree_hooks_path},
    {"incremental: nothing listed again; a repository made deep inside is found",
     test_incremental_deep_repository},
    {"incremental: a .git added, the folder's mtime put back", test_incremental_mtime_put_back},
    {"incremental: a sub-tree moved in from outside", test_incremental_moved_in},
    {"incremental: a folder replaced by a symbolic link", test_incremental_folder_to_link},
    {"incremental: a known folder removed, one of its name made", test_incremental_removed},
    {"incremental: the bound", test_incremental_bound},
    {"incremental: more sub-folders than a walk keeps", test_incremental_names_past_budget},
    {"cached: the next guard lists no unchanged folder, finds what is new", test_cache_next_run},
    {"cached: a corrupt, foreign or oversized file means a full walk", test_cache_ignored},
    {"cached: a stamp too close to the walk that kept it is listed again", test_cache_racy},
    {"found by the watcher: the person's kept, a new one's defused, a bare one's hook",
     test_found_repositories},
    {"a commondir planted under a new name: a held stand-in until the end", test_stand_in})
