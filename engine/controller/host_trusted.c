/* host_trusted.c — see host_trusted.h. A pattern with a '/' is matched against the whole path and
 * against every tail of it after a '/' (a repository, a package or a CI folder nested anywhere);
 * one without is matched against the last name. `*` matches any run of bytes, '/' included. */
#include "controller/host_trusted.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/name_glob.h"
#include "base/util.h"

static const char WHY_HOOK[] = "a git hook: git runs it";
static const char WHY_GIT[] = "git's configuration: git obeys it (aliases, filters, hooks' folder)";
static const char WHY_GIT_POINTER[] = "a git pointer: git obeys the config and hooks of the "
                                      "repository it names";
static const char WHY_ENVRC[] = "direnv runs it when a shell enters the folder";
static const char WHY_CI[] = "a CI definition: CI runs it with the repository's secrets";
static const char WHY_AGENT[] = "an agent's configuration or instructions: the agent trusts it";
static const char WHY_EDITOR[] = "an editor's project settings: the editor runs tasks and tools "
                                 "from it";
static const char WHY_CORDON[] = "cordon's project policy";
static const char WHY_BUILD[] = "a build entry point: builds and installs run what it says";

static const struct row {
    const char *pattern;
    const char *why;
} rows[] = {
    {".git/hooks/*", WHY_HOOK},
    {".husky/*", WHY_HOOK},
    {".pre-commit-config.yaml", WHY_HOOK},
    {".git/config", WHY_GIT},
    {".git/config.worktree", WHY_GIT},
    {".git/info/attributes", WHY_GIT},
    /* a submodule's git dir and a linked worktree's admin folder ('*' spans folders) */
    {".git/modules/*/hooks/*", WHY_HOOK},
    {".git/modules/*/config", WHY_GIT},
    {".git/modules/*/config.worktree", WHY_GIT},
    {".git/modules/*/info/attributes", WHY_GIT},
    {".git/worktrees/*/config.worktree", WHY_GIT},
    {".git/commondir", WHY_GIT_POINTER},
    {".git/modules/*/commondir", WHY_GIT_POINTER},
    {".git/worktrees/*/commondir", WHY_GIT_POINTER},
    {".git/worktrees/*/gitdir", WHY_GIT_POINTER},
    {".gitmodules", WHY_GIT},
    {".gitattributes", WHY_GIT},
    {".envrc", WHY_ENVRC},
    {".github/workflows/*", WHY_CI},
    {".github/actions/*", WHY_CI},
    {".gitlab-ci.yml", WHY_CI},
    {".gitlab/*", WHY_CI},
    {".circleci/*", WHY_CI},
    {".travis.yml", WHY_CI},
    {"Jenkinsfile", WHY_CI},
    {"azure-pipelines.yml", WHY_CI},
    {".buildkite/*", WHY_CI},
    {".drone.yml", WHY_CI},
    {"bitbucket-pipelines.yml", WHY_CI},
    {".woodpecker.yml", WHY_CI},
    {".woodpecker/*", WHY_CI},
    {".claude/*", WHY_AGENT},
    {"CLAUDE.md", WHY_AGENT},
    {"CLAUDE.local.md", WHY_AGENT},
    {"AGENTS.md", WHY_AGENT},
    {"GEMINI.md", WHY_AGENT},
    {".mcp.json", WHY_AGENT},
    {".cursor/*", WHY_AGENT},
    {".cursorrules", WHY_AGENT},
    {".codex/*", WHY_AGENT},
    {".gemini/*", WHY_AGENT},
    {".aider*", WHY_AGENT},
    {".continue/*", WHY_AGENT},
    {".windsurf/*", WHY_AGENT},
    {".windsurfrules", WHY_AGENT},
    {".clinerules", WHY_AGENT},
    {".github/copilot-instructions.md", WHY_AGENT},
    {".vscode/*", WHY_EDITOR},
    {".idea/*", WHY_EDITOR},
    {".zed/*", WHY_EDITOR},
    {".helix/*", WHY_EDITOR},
    {".nvim.lua", WHY_EDITOR},
    {".nvimrc", WHY_EDITOR},
    {".exrc", WHY_EDITOR},
    {".vimrc", WHY_EDITOR},
    {".dir-locals.el", WHY_EDITOR},
    {".cordon/*", WHY_CORDON},
    {"Makefile", WHY_BUILD},
    {"makefile", WHY_BUILD},
    {"GNUmakefile", WHY_BUILD},
    {"*.mk", WHY_BUILD},
    {"Makefile.am", WHY_BUILD},
    {"configure", WHY_BUILD},
    {"configure.ac", WHY_BUILD},
    {"CMakeLists.txt", WHY_BUILD},
    {"*.cmake", WHY_BUILD},
    {"meson.build", WHY_BUILD},
    {"package.json", WHY_BUILD},
    {".npmrc", WHY_BUILD},
    {".yarnrc", WHY_BUILD},
    {".yarnrc.yml", WHY_BUILD},
    {"setup.py", WHY_BUILD},
    {"setup.cfg", WHY_BUILD},
    {"pyproject.toml", WHY_BUILD},
    {"conftest.py", WHY_BUILD},
    {"noxfile.py", WHY_BUILD},
    {"tox.ini", WHY_BUILD},
    {"Cargo.toml", WHY_BUILD},
    {"build.rs", WHY_BUILD},
    {".cargo/config", WHY_BUILD},
    {".cargo/config.toml", WHY_BUILD},
    {"build.gradle", WHY_BUILD},
    {"build.gradle.kts", WHY_BUILD},
    {"settings.gradle", WHY_BUILD},
    {"settings.gradle.kts", WHY_BUILD},
    {"gradlew", WHY_BUILD},
    {"pom.xml", WHY_BUILD},
    {"Gemfile", WHY_BUILD},
    {"Rakefile", WHY_BUILD},
    {"*.gemspec", WHY_BUILD},
    {"justfile", WHY_BUILD},
    {"Justfile", WHY_BUILD},
    {"Taskfile.yml", WHY_BUILD},
    {"Dockerfile", WHY_BUILD},
    {"docker-compose.yml", WHY_BUILD},
    {"compose.yaml", WHY_BUILD},
    {"flake.nix", WHY_BUILD},
    {"shell.nix", WHY_BUILD},
    {"default.nix", WHY_BUILD},
    {"Vagrantfile", WHY_BUILD},
};

/* base: path's last name. The walk of trusted_changes.c asks this for every name of a workspace:
 * the last name is found once per path, not once per row. */
static bool path_matches(const char *pattern, bool whole_path, const char *path, const char *base)
{
    if (!whole_path)
        return name_glob_match(pattern, base);
    for (const char *p = path; p;) {
        if (name_glob_match(pattern, p))
            return true;
        p = strchr(p, '/');
        p = p ? p + 1 : NULL;
    }
    return false;
}

bool host_trusted_link_out(const char *path, const char *target)
{
    if (target[0] == '/' || target[0] == '\0')
        return true;
    /* Depth of the link's folder, then each component of the target, lexically. */
    long depth = 0;
    for (const char *p = path; *p; p++)
        depth += *p == '/';
    const char *t = target;
    while (*t) {
        const char *end = strchr(t, '/');
        size_t n = end ? (size_t)(end - t) : strlen(t);
        if (n == 2 && t[0] == '.' && t[1] == '.') {
            if (--depth < 0)
                return true;
        } else if (n > 0 && !(n == 1 && t[0] == '.')) {
            depth++;
        }
        t += n;
        while (*t == '/')
            t++;
    }
    return false;
}

/* dir: path's first len bytes, asked of is_git_dir */
static bool git_dir_at(const char *path, size_t len, bool (*is_git_dir)(void *, const char *),
                       void *ctx)
{
    if (len == 0)
        return false; /* the workspace itself: its files are judged by name */
    char *dir = xasprintf("%.*s", (int)len, path);
    bool yes = is_git_dir(ctx, dir);
    free(dir);
    return yes;
}

const char *host_trusted_git_dir_why(const char *path,
                                     bool (*is_git_dir)(void *ctx, const char *dir), void *ctx)
{
    static const char *const configs[] = {"config", "config.worktree", "commondir"};
    const char *base = strrchr(path, '/');
    for (size_t i = 0; base && i < ARRAY_LEN(configs); i++)
        if (strcmp(base + 1, configs[i]) == 0 &&
            git_dir_at(path, (size_t)(base - path), is_git_dir, ctx))
            return i == 2 ? WHY_GIT_POINTER : WHY_GIT;
    /* a hooks folder at any depth below the git dir: git runs a hook by its name in hooks/, and
     * a hook may run what lies beside it */
    for (const char *h = strstr(path, "/hooks/"); h; h = strstr(h + 1, "/hooks/"))
        if (git_dir_at(path, (size_t)(h - path), is_git_dir, ctx))
            return WHY_HOOK;
    return NULL;
}

const char *host_trusted_pattern(size_t i)
{
    return i < ARRAY_LEN(rows) ? rows[i].pattern : NULL;
}

const char *host_trusted_why(const char *path, mode_t mode, mode_t host_mode, const char *link)
{
    if (link && host_trusted_link_out(path, link))
        return "a link out of the workspace: never applied";
    if (mode && !S_ISREG(mode) && !S_ISDIR(mode) && !S_ISLNK(mode))
        return "a device, fifo or socket: never applied";
    /* which patterns hold a '/', found once (the same answer whoever finds it first) */
    static bool whole_path[ARRAY_LEN(rows)], known;
    if (!known) {
        for (size_t i = 0; i < ARRAY_LEN(rows); i++)
            whole_path[i] = strchr(rows[i].pattern, '/') != NULL;
        known = true;
    }
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    /* a `.git` that is a file or a link (`gitdir: PATH`): git follows it; a `.git` folder is
     * judged by what it holds */
    if (mode && !S_ISDIR(mode) && path_matches(".git", false, path, base))
        return WHY_GIT_POINTER;
    for (size_t i = 0; i < ARRAY_LEN(rows); i++)
        if (path_matches(rows[i].pattern, whole_path[i], path, base))
            return rows[i].why;
    if (S_ISREG(mode) && (mode & 0111) && !(S_ISREG(host_mode) && (host_mode & 0111)))
        return "a new executable: the host may run it";
    return NULL;
}
