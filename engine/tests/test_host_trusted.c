/* test_host_trusted.c — what `cordon review` flags (controller/host_trusted.c), from tables:
 * paths at the top and nested, executables new or not, links in and out of the workspace,
 * devices; and the lexical rule of a link that climbs out. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "controller/host_trusted.h"
#include "test.h"

#define REG (S_IFREG | 0644)
#define EXE (S_IFREG | 0755)
#define LNK (S_IFLNK | 0777)

static const struct {
    const char *path;
    mode_t mode, host_mode;
    const char *link;
    const char *why_has; /* NULL: not flagged */
} flagged[] = {
    {".git/hooks/pre-commit", EXE, 0, NULL, "git hook"},
    {"vendor/lib/.git/hooks/post-checkout", REG, 0, NULL, "git hook"},
    {".git/config", REG, REG, NULL, "git's configuration"},
    {".git/index", REG, REG, NULL, NULL},
    {".git/objects/ab/cdef", REG, 0, NULL, NULL},
    {".git/modules/lib/hooks/post-checkout", EXE, 0, NULL, "git hook"},
    {".git/modules/lib/modules/inner/config", REG, 0, NULL, "git's configuration"},
    {".git/modules/lib/index", REG, 0, NULL, NULL},
    {".git/worktrees/side/config.worktree", REG, 0, NULL, "git's configuration"},
    {".git/worktrees/side/gitdir", REG, REG, NULL, "git pointer"},
    {".git/worktrees/side/HEAD", REG, REG, NULL, NULL},
    {".git/commondir", REG, 0, NULL, "git pointer"},
    {"sub/.git", REG, 0, NULL, "git pointer"}, /* a gitdir: file */
    {"sub/.git", LNK, 0, "elsewhere", "git pointer"},
    {"sub/.git", S_IFDIR | 0755, 0, NULL, NULL},
    {".envrc", REG, 0, NULL, "direnv"},
    {"sub/.envrc", REG, 0, NULL, "direnv"},
    {".github/workflows/ci.yml", REG, 0, NULL, "CI"},
    {".github/ISSUE_TEMPLATE/bug.md", REG, 0, NULL, NULL},
    {".gitlab-ci.yml", REG, REG, NULL, "CI"},
    {".claude/settings.json", REG, 0, NULL, "agent"},
    {".vscode/tasks.json", REG, 0, NULL, "editor"},
    {"Makefile", REG, REG, NULL, "build entry point"},
    {"pkg/a/package.json", REG, REG, NULL, "build entry point"},
    {"pyproject.toml", REG, 0, NULL, "build entry point"},
    {"src/main.c", REG, REG, NULL, NULL},
    {"README.md", REG, 0, NULL, NULL},
    {"tool.sh", EXE, 0, NULL, "new executable"},
    {"tool.sh", EXE, REG, NULL, "new executable"}, /* gained its x bit */
    {"tool.sh", EXE, EXE, NULL, NULL},             /* was one already */
    {"link", LNK, 0, "target.txt", NULL},
    {"a/b/link", LNK, 0, "../c", NULL},
    {"a/link", LNK, 0, "../../etc/passwd", "link out"},
    {"link", LNK, 0, "/etc/passwd", "link out"},
    {"fifo", S_IFIFO | 0644, 0, NULL, "fifo"},
    {"gone.txt", 0, REG, NULL, NULL}, /* removed */
};

static void test_table(void)
{
    int bad = 0;
    for (size_t i = 0; i < ARRAY_LEN(flagged); i++) {
        const char *why = host_trusted_why(flagged[i].path, flagged[i].mode, flagged[i].host_mode,
                                           flagged[i].link);
        bool ok = flagged[i].why_has ? why && strstr(why, flagged[i].why_has) : why == NULL;
        if (!ok) {
            fprintf(stderr, "  %s (%o, host %o): %s, expected %s\n", flagged[i].path,
                    (unsigned)flagged[i].mode, (unsigned)flagged[i].host_mode, why ? why : "(none)",
                    flagged[i].why_has ? flagged[i].why_has : "(none)");
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

static void test_link_out(void)
{
    CHECK(!host_trusted_link_out("x", "y"));
    CHECK(!host_trusted_link_out("x", "./y/../z"));
    CHECK(host_trusted_link_out("x", ".."));
    CHECK(host_trusted_link_out("x", "y/../../z"));
    CHECK(!host_trusted_link_out("a/b/x", "../../y"));
    CHECK(host_trusted_link_out("a/b/x", "../../../y"));
    CHECK(host_trusted_link_out("x", "/abs"));
    CHECK(host_trusted_link_out("x", ""));
    CHECK(!host_trusted_link_out("x", "y//z/"));
}

/* The fake knows one bare repository, srv/app.git, and one at the top, top.git. */
static bool fake_git_dir(void *ctx, const char *dir)
{
    (void)ctx;
    return strcmp(dir, "srv/app.git") == 0 || strcmp(dir, "top.git") == 0;
}

static void test_git_dir(void)
{
    const char *why;
    CHECK((why = host_trusted_git_dir_why("srv/app.git/hooks/pre-receive", fake_git_dir, NULL)) &&
          strstr(why, "git hook"));
    CHECK((why = host_trusted_git_dir_why("srv/app.git/hooks/lib/x.sh", fake_git_dir, NULL)) &&
          strstr(why, "git hook"));
    CHECK((why = host_trusted_git_dir_why("top.git/config", fake_git_dir, NULL)) &&
          strstr(why, "git's configuration"));
    CHECK((why = host_trusted_git_dir_why("srv/app.git/commondir", fake_git_dir, NULL)) &&
          strstr(why, "git pointer"));
    CHECK(host_trusted_git_dir_why("srv/app.git/HEAD", fake_git_dir, NULL) == NULL);
    CHECK(host_trusted_git_dir_why("srv/app.git/objects/ab/cd", fake_git_dir, NULL) == NULL);
    /* a hooks folder or a config elsewhere is a project's own */
    CHECK(host_trusted_git_dir_why("src/hooks/useThing.js", fake_git_dir, NULL) == NULL);
    CHECK(host_trusted_git_dir_why("srv/config", fake_git_dir, NULL) == NULL);
    CHECK(host_trusted_git_dir_why("config", fake_git_dir, NULL) == NULL);
    CHECK(host_trusted_git_dir_why("hooks/x", fake_git_dir, NULL) == NULL);
}

TEST_MAIN({"table", test_table}, {"link_out", test_link_out}, {"git_dir", test_git_dir})
