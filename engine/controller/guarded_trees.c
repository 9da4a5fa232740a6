/* guarded_trees.c — see guarded_trees.h. Also owns where each tree's walk is kept between runs:
 * "$XDG_STATE_HOME/cordon/git-walks/<sha256 of the tree's canonical path>" (XDG_STATE_HOME
 * defaulting to ~/.local/state, beside the home layers), inside cordon's state directory, which
 * every sandbox has hidden (protect_own_dirs). Must never put that file where a sandbox can
 * write: the next run trusts its stamps. */
#include "controller/guarded_trees.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cordon_dirs.h"
#include "base/log.h"
#include "base/sha256.h"
#include "controller/git_guard.h"
#include "controller/git_publish.h"
#include "controller/repo_hold.h"
#include "controller/repo_watch.h"
#include "sandbox/git_worktree.h"
#include "sandbox/home_own.h"

struct hold_ctx;

struct guarded_trees {
    struct git_guard **guard; /* one per root, in roots' order */
    struct str_list roots;
    bool first_is_workspace;   /* its lines carry no label: the workspace is where the person is */
    long long since_ns;        /* before the first snapshot (repo_watch_now_ns) */
    struct repo_hold *hold;    /* holds inside the running sandbox, or NULL */
    struct repo_watch *watch;  /* finds the repositories as they appear, or NULL: the walk does */
    struct str_list held;      /* absolute paths held by hold (sorted) */
    struct hold_ctx *hold_ctx; /* one per tree, for git_guard_set_hold */
    char *home;                /* a copy-on-write home whose top the watcher holds (or NULL) */
    struct str_list home_tools;
};

/* Review mode (docs/review.md): the workspace is an overlay whose writes wait in its review
 * layer, so no write of a command reaches the host's repositories there before the person applies
 * it. Their own files (a git dir's config, hooks and pointers, a `.git` file) are then part of the
 * pending changes, which `cordon review` flags and `cordon apply` leaves pending without --all:
 * they need no hold, and holding them only broke git inside. What a command in it does to git's
 * files inside is its own risk, not the host's. Still held: what a repository's config points at
 * outside its git dir (a core.hooksPath folder, a program, an included file: `cordon review` does
 * not read configs, so it could not flag them), bare repositories (no `.git` in their path to
 * flag), and everything in a writable path inside the workspace (the host's, as asked). */
static bool workspace_in_review(const struct sandbox_config *cfg)
{
    return cfg->workspace && !cfg->workspace_readonly && cfg->review && cfg->review_layer;
}

/* Does the relative path rel pass through a component named `.git`? */
static bool in_dot_git(const char *rel)
{
    for (const char *p = rel; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
        if (strncmp(p, ".git", 4) == 0 && (p[4] == '\0' || p[4] == '/'))
            return true;
    return false;
}

/* Review mode: the workspace's readonly_in_workspace entries (the profile's and what its guard's
 * walk added) that are a repository's own files dropped, but inside a writable path. */
static void drop_repository_entries(struct sandbox_config *cfg)
{
    struct str_list keep = {0};
    for (size_t i = 0; i < cfg->readonly_in_workspace.len; i++) {
        const char *e = cfg->readonly_in_workspace.items[i];
        char *abs = xasprintf("%s/%s", cfg->workspace, e);
        bool host = false;
        for (size_t j = 0; j < cfg->writable.len && !host; j++)
            host = path_is_within(abs, cfg->writable.items[j]);
        if (host || !in_dot_git(e))
            str_list_push(&keep, e);
        free(abs);
    }
    str_list_free(&cfg->readonly_in_workspace);
    cfg->readonly_in_workspace = keep;
}

/* A writable path worth a guard of its own: a directory (not a link: the controller resolved
 * it) outside the workspace, not inside another writable path already guarded. */
static bool own_tree(const struct sandbox_config *cfg, const struct str_list *roots, const char *p)
{
    struct stat st;
    if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode))
        return false;
    if (cfg->workspace && !cfg->workspace_readonly && path_is_within(p, cfg->workspace))
        return false; /* the workspace's guard walks it */
    for (size_t i = 0; i < roots->len; i++)
        if (path_is_within(p, roots->items[i]))
            return false;
    return true;
}

/* The file keeping root's walk between runs, its folder made (0700); NULL when there is no
 * state directory or it cannot be made: the first walk of each run is then a full one. */
static char *walk_cache(const char *root)
{
    char *dir = cdir_path(CDIR_STATE, "git-walks");
    char hex[SHA256_HEX_LEN + 1];
    if (!dir || mkdir_p(dir, 0700) < 0) {
        free(dir);
        return NULL;
    }
    sha256_hex(root, strlen(root), hex);
    char *path = xasprintf("%s/%s", dir, hex);
    free(dir);
    return path;
}

static struct git_guard *guard_new(const char *root, struct str_list *readonly)
{
    char *cache = walk_cache(root);
    struct git_guard *g = git_guard_new_cached(root, readonly, cache);
    free(cache);
    return g;
}

static void add(struct guarded_trees *gs, struct git_guard *g, const char *root)
{
    git_guard_since(g, gs->since_ns);
    gs->guard = xrealloc(gs->guard, (gs->roots.len + 1) * sizeof *gs->guard);
    gs->guard[gs->roots.len] = g;
    str_list_push(&gs->roots, root);
}

struct guarded_trees *guarded_trees_new(struct sandbox_config *cfg)
{
    struct guarded_trees *gs = xcalloc(1, sizeof *gs);
    gs->since_ns = repo_watch_now_ns();
    if (home_own_applies(cfg)) {
        gs->home = xstrdup(cfg->home);
        for (size_t i = 0; i < cfg->home_tool_dirs.len; i++)
            str_list_push(&gs->home_tools, cfg->home_tool_dirs.items[i]);
    }
    /* A linked worktree's repository, a writable path (controller_resolve) with a guard of its
     * own below, so that git works there as in a main worktree (packed-refs, worktree add, gc)
     * while what git follows is held and checked as in any guarded tree. */
    char *common = git_worktree_common_dir(cfg);
    if (cfg->workspace && !cfg->workspace_readonly) {
        struct git_guard *g = guard_new(cfg->workspace, &cfg->readonly_in_workspace);
        if (!g)
            goto fail;
        git_guard_own_common(g, common);
        add(gs, g, cfg->workspace);
        gs->first_is_workspace = true;
        if (workspace_in_review(cfg))
            drop_repository_entries(cfg);
    }
    /* Outermost first, so that a writable path inside another is that one's to walk. */
    struct str_list order = {0};
    for (size_t i = 0; i < cfg->writable.len; i++)
        str_list_push(&order, cfg->writable.items[i]);
    str_list_sort(&order);
    for (size_t i = 0; i < order.len; i++) {
        const char *root = order.items[i];
        if (!own_tree(cfg, &gs->roots, root))
            continue;
        struct str_list ro = {0};
        struct git_guard *g = guard_new(root, &ro);
        if (!g) {
            str_list_free(&ro);
            str_list_free(&order);
            goto fail;
        }
        if (common && path_is_within(common, root)) {
            /* The git dir (the tree itself, or in it), which the walk (looking for `.git`) leaves
             * to the watcher: known now, before any command runs, so that the reference it is
             * compared with is the person's, and its pointers are bound from the start. */
            const char *rel = common + strlen(root);
            git_guard_add_repo(g, rel[0] == '/' ? rel + 1 : rel, true, true);
            const struct str_list *held = git_guard_readonly(g);
            for (size_t j = 0; j < held->len; j++)
                if (!str_list_contains(&ro, held->items[j]))
                    str_list_push(&ro, held->items[j]);
        }
        for (size_t j = 0; j < ro.len; j++) {
            char *abs = xasprintf("%s/%s", root, ro.items[j]);
            if (!str_list_contains(&cfg->protected_paths, abs))
                str_list_push(&cfg->protected_paths, abs);
            free(abs);
        }
        str_list_free(&ro);
        add(gs, g, root);
    }
    str_list_free(&order);
    free(common);
    return gs;
fail:
    free(common);
    guarded_trees_free(gs);
    return NULL;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What the watcher holds itself, once the git dir is complete (repo_watch.h): held here it could
 * be mid-way (`git clone` still copying its hooks). A `.git` file made during the run is not held
 * at all: `git submodule add` writes it twice, and what it may name is a git dir held by itself. */
static bool watcher_holds(const char *rel)
{
    static const char *const names[] = {".git",  "config",    "config.worktree",
                                        "hooks", "commondir", "gitdir"};
    const char *s = strrchr(rel, '/');
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (strcmp(s ? s + 1 : rel, names[i]) == 0)
            return true;
    return false;
}

/* What a tree's snapshot holds read-only and is not held in the sandbox yet (a core.hooksPath
 * folder, a hooks link's target, an included config, a program a config runs by path): held
 * now. At the start (start: init bound them already) only noted. */
static void hold_new(struct guarded_trees *gs, size_t i, bool start)
{
    const struct str_list *ro = git_guard_readonly(gs->guard[i]);
    bool added = false;
    for (size_t k = 0; k < ro->len; k++) {
        char *abs = xasprintf("%s/%s", gs->roots.items[i], ro->items[k]);
        const char *key = abs;
        if ((gs->held.len &&
             bsearch(&key, gs->held.items, gs->held.len, sizeof *gs->held.items, by_str)) ||
            (!start && watcher_holds(ro->items[k]))) {
            free(abs);
            continue;
        }
        int r = start ? 0 : repo_hold_path(gs->hold, abs);
        if (r < 0 && r != -ENOENT && r != -ELOOP)
            LOG_W("git", "holding %s read-only in the sandbox: %s", abs, strerror(-r));
        str_list_push_owned(&gs->held, abs);
        added = true;
    }
    if (added)
        str_list_sort(&gs->held);
}

/* What the watcher found since the last look: each tree's guard told. */
static void take_found(struct guarded_trees *gs, struct str_list *lines)
{
    if (!gs->watch)
        return;
    struct repo_found *f = NULL;
    size_t n = repo_watch_take(gs->watch, &f, lines);
    for (size_t k = 0; k < n; k++) {
        if (f[k].root < gs->roots.len)
            git_guard_add_repo(gs->guard[f[k].root], f[k].rel, f[k].bare, f[k].existing);
        free(f[k].rel);
    }
    free(f);
}

/* Run one check over every tree; a writable path's lines are labelled with it. With the
 * watcher, no check walks: it found every repository, and each is looked at. */
static int each(struct guarded_trees *gs, struct str_list *lines, bool tick, bool may_walk)
{
    int total = 0, first_err = 0;
    take_found(gs, lines);
    for (size_t i = 0; i < gs->roots.len; i++) {
        struct str_list mine = {0};
        git_publish_writes_pause();
        int r = gs->watch && tick ? git_guard_tick(gs->guard[i], &mine, false)
                : gs->watch       ? git_guard_check_known(gs->guard[i], &mine)
                : tick            ? git_guard_tick(gs->guard[i], &mine, may_walk)
                                  : git_guard_check(gs->guard[i], &mine);
        git_publish_writes_resume();
        if (gs->hold)
            hold_new(gs, i, false);
        if (r < 0 && !first_err)
            first_err = r;
        else if (r > 0)
            total += r;
        bool label = !(i == 0 && gs->first_is_workspace);
        for (size_t j = 0; j < mine.len; j++) {
            if (label) {
                char *l = xasprintf("in %s: %s", gs->roots.items[i], mine.items[j]);
                str_list_push_owned(lines, l);
            } else {
                str_list_push(lines, mine.items[j]);
            }
        }
        str_list_free(&mine);
    }
    return first_err ? first_err : total;
}

int guarded_trees_check(struct guarded_trees *gs, struct str_list *lines)
{
    if (!gs)
        return 0;
    repo_watch_flush(gs->watch); /* what the command made is found before it is looked at */
    return each(gs, lines, false, false);
}

/* git_guard_hold_fn for tree i: its relative path held by its absolute one. */
struct hold_ctx {
    struct guarded_trees *gs;
    size_t i;
};

static int hold_rel(void *ctx, const char *rel)
{
    struct hold_ctx *h = ctx;
    char *abs = xasprintf("%s/%s", h->gs->roots.items[h->i], rel);
    int r = repo_hold_path(h->gs->hold, abs);
    free(abs);
    return r;
}

int guarded_trees_watch(struct guarded_trees *gs, struct repo_hold *hold, int hold_err)
{
    if (!gs || !gs->roots.len) {
        repo_hold_stop(hold);
        return 0;
    }
    int err = hold ? 0 : hold_err ? hold_err : -ENOSYS;
    if (err < 0) {
        fprintf(stderr,
                "cordon: git: cannot hold repositories read-only inside the sandbox (%s): what "
                "a command changes in them is undone after it, not refused\n",
                strerror(-err));
        repo_hold_stop(hold);
        hold = NULL;
    }
    gs->hold = hold;
    if (gs->hold) {
        gs->hold_ctx = xcalloc(gs->roots.len, sizeof *gs->hold_ctx);
        for (size_t i = 0; i < gs->roots.len; i++) {
            gs->hold_ctx[i] = (struct hold_ctx){.gs = gs, .i = i};
            git_guard_set_hold(gs->guard[i], hold_rel, &gs->hold_ctx[i]);
        }
    }
    /* What the first snapshots found: init bound it at the start; the watcher leaves it too (no
     * helper forked for what is read-only already). */
    for (size_t i = 0; gs->hold && i < gs->roots.len; i++)
        hold_new(gs, i, true);
    gs->watch =
        repo_watch_start(&gs->roots, gs->hold, gs->since_ns, &gs->held, gs->home, &gs->home_tools);
    return gs->watch ? 0 : -1;
}

int guarded_trees_fd(const struct guarded_trees *gs)
{
    return gs ? repo_watch_fd(gs->watch) : -1;
}

int guarded_trees_tick(struct guarded_trees *gs, struct str_list *lines, bool may_walk)
{
    return gs ? each(gs, lines, true, may_walk) : 0;
}

const struct str_list *guarded_trees_roots(const struct guarded_trees *gs)
{
    static const struct str_list none = {0};
    return gs ? &gs->roots : &none;
}

void guarded_trees_free(struct guarded_trees *gs)
{
    if (!gs)
        return;
    repo_watch_free(gs->watch);
    if (!gs->watch)
        repo_hold_stop(gs->hold); /* else the watcher's, whichever of its sides ends last */
    str_list_free(&gs->held);
    for (size_t i = 0; i < gs->roots.len; i++)
        git_guard_free(gs->guard[i]); /* its stand-ins removed */
    free(gs->hold_ctx);
    free(gs->guard);
    str_list_free(&gs->roots);
    free(gs->home);
    str_list_free(&gs->home_tools);
    free(gs);
}
