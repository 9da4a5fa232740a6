/* git_guard.c — see git_guard.h. Owns the guard's life and its check: making a guard (the host's
 * configs, the walk's tree from the cache file, the first snapshot), the check's rounds of
 * snapshot and undo, the timer's choice between a quick check and a full walk, the
 * repositories the watcher adds, and freeing it all. Its parts, one concern each, are listed in
 * git_guard_private.h. Uses: base/clock.h. Must never: run git, open anything but beneath the
 * workspace's descriptor, or leave a difference it could not undo unsaid. */
#include "controller/git_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"
#include "controller/git_guard_private.h"

void git_guard_set_hold(struct git_guard *g, git_guard_hold_fn *hold, void *ctx)
{
    g->hold = hold;
    g->hold_ctx = ctx;
}

void git_guard_own_common(struct git_guard *g, const char *common)
{
    free(g->own_common);
    g->own_common = common ? xstrdup(common) : NULL;
}

static void say_bounds(struct git_guard *g, const struct gg_snap *s, struct str_list *lines)
{
    if (g->bound_said || !s->hooks_hit)
        return;
    g->bound_said = true;
    /* The walk's bound (s->bound_hit) is not said: the watcher (repo_watch.h) finds what lies
     * past it. */
    if (s->hooks_hit)
        str_list_push_owned(lines, xasprintf("git: hooks folders hold folders more than %d "
                                             "deep: what is below is not checked",
                                             HOOKS_DEPTH));
}

struct git_guard *git_guard_new(const char *workspace, struct str_list *readonly)
{
    return git_guard_new_cached(workspace, readonly, NULL);
}

struct git_guard *git_guard_new_cached(const char *workspace, struct str_list *readonly,
                                       const char *cache)
{
    struct git_guard *g = xcalloc(1, sizeof *g);
    g->ws = xstrdup(workspace);
    g->pc = xcalloc(1, sizeof *g->pc);
    g->pc->fd = -1;
    g->cache = cache ? xstrdup(cache) : NULL;
    const char *home = getenv("HOME");
    g->home = home && home[0] == '/' ? xstrdup(home) : NULL;
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    g->wsfd = (int)syscall(SYS_openat2, AT_FDCWD, workspace, &how, sizeof how);
    gg_host_configs(g);
    if (g->wsfd >= 0)
        g->tree = gg_cache_load(g);
    if (g->wsfd < 0 || gg_snapshot(g, &g->snap, false) < 0) {
        fprintf(stderr, "cordon: cannot look at the workspace %s for git repositories: %s\n",
                workspace, strerror(errno));
        git_guard_free(g);
        return NULL;
    }
    struct str_list lines = {0};
    say_bounds(g, &g->snap, &lines);
    for (size_t i = 0; i < lines.len; i++)
        fprintf(stderr, "cordon: %s\n", lines.items[i]);
    str_list_free(&lines);
    for (size_t i = 0; readonly && i < g->snap.ro.len; i++)
        if (!str_list_contains(readonly, g->snap.ro.items[i]))
            str_list_push(readonly, g->snap.ro.items[i]);
    return g;
}

/* An undo can change what is looked at (a hooks link put back brings its folder in, with what
 * the command put there): compare again with the same snapshot until nothing differs, so that
 * nothing unseen becomes part of the next snapshot. After MAX_ROUNDS the old snapshot stays
 * (the next check compares with it again), said in one line. */
#define MAX_ROUNDS 4
static int check(struct git_guard *g, struct str_list *lines, bool quick)
{
    struct gg_snap now;
    int found = 0, n = 0;
    double ms = 0;
    str_list_free(&g->made);
    for (int round = 0; round < MAX_ROUNDS; round++) {
        int r = gg_snapshot(g, &now, quick);
        if (r < 0) {
            str_list_push_owned(lines, xasprintf("git: cannot look at the workspace's "
                                                 "repositories (%s): not checked",
                                                 strerror(-r)));
            return found ? found : r;
        }
        ms += g->last_ms;
        if (round == 0) {
            say_bounds(g, &now, lines);
            gg_say_views(g, &now, lines);
        }
        n = gg_undo_differences(g, &now, lines);
        found += n;
        if (n == 0)
            break;
        gg_snap_free(&now);
    }
    g->last_ms = ms;
    gg_cache_save(g); /* the tree the last walk saw (when it changed), for the next run's first */
    if (n) {
        str_list_push_owned(lines, xasprintf("git: the repositories still differ after %d "
                                             "rounds of undoing: checked again next time",
                                             MAX_ROUNDS));
        return found;
    }
    gg_snap_free(&g->snap);
    g->snap = now;
    return found;
}

int git_guard_check(struct git_guard *g, struct str_list *lines)
{
    g->last = true;
    int r = check(g, lines, false);
    g->last = false;
    return r;
}

int git_guard_check_known(struct git_guard *g, struct str_list *lines)
{
    g->last = true;
    int r = check(g, lines, true);
    g->last = false;
    return r;
}

void git_guard_since(struct git_guard *g, long long since_ns)
{
    g->since_ns = since_ns;
}

int git_guard_tick(struct git_guard *g, struct str_list *lines, bool may_walk)
{
    double since = clock_mono_ms_f() - g->full_at;
    bool full =
        may_walk && since >= GIT_GUARD_FULL_MIN_MS && since >= GIT_GUARD_FULL_FACTOR * g->full_ms;
    return check(g, lines, !full);
}

const struct str_list *git_guard_readonly(const struct git_guard *g)
{
    return &g->snap.ro;
}

/* A file of a repository that was there before the sandbox, changed (or made) since the
 * sandbox started: the watcher may report such a repository a moment after the command began
 * (a bare one, one past the walk's bound or in node_modules), and what the command wrote in it
 * meanwhile is not the person's. Left out of the reference, it is new to the next check, which
 * undoes it. ctime, not mtime: a command cannot set it back (utimes sets it to now), and a link
 * or rename of an older file sets it too. The sandbox's start is read from the same coarse clock
 * the file systems stamp with (repo_watch_now_ns); a change in the same tick counts as the
 * run's. Folders are left alone: a name added to the person's hooks folder changes its ctime,
 * and the names in it are judged one by one. */
static bool changed_during_run(const struct git_guard *g, const struct gg_item *x)
{
    if (!g->since_ns || x->type == S_IFDIR)
        return false;
    return (long long)x->ctime.tv_sec * 1000000000LL + x->ctime.tv_nsec >= g->since_ns;
}

void git_guard_add_repo(struct git_guard *g, const char *rel, bool bare, bool existing)
{
    struct str_list *l = bare ? &g->found_bare : &g->found;
    if (str_list_contains(l, rel))
        return;
    str_list_push(l, rel);
    if (!existing) {
        if (!bare)
            str_list_push(&g->made_repos, rel);
        return; /* the next check compares it with nothing: what it holds is new */
    }
    /* There before the sandbox: what it holds now is the person's, the reference to compare
     * with from now on, but for what changed since the sandbox started (changed_during_run). */
    struct gg_snap add;
    memset(&add, 0, sizeof add);
    gg_parent_cache_set(g->pc, true);
    gg_found_repos_one(g, &add, rel, bare);
    gg_parent_cache_set(g->pc, false);
    struct gg_snap known = g->snap; /* sorted: what it already holds stays as it was */
    for (size_t i = 0; i < add.n; i++) {
        if (gg_find_item(&known, add.items[i].rel) || changed_during_run(g, &add.items[i])) {
            gg_item_free(&add.items[i]);
            continue;
        }
        if (g->snap.n == g->snap.cap) {
            g->snap.cap = g->snap.cap ? g->snap.cap * 2 : 64;
            g->snap.items = xrealloc(g->snap.items, g->snap.cap * sizeof *g->snap.items);
            known.items = g->snap.items;
        }
        g->snap.items[g->snap.n++] = add.items[i];
    }
    add.n = 0;
    for (size_t i = 0; i < add.ro.len; i++)
        if (!str_list_contains(&g->snap.ro, add.ro.items[i]))
            str_list_push(&g->snap.ro, add.ro.items[i]);
    gg_snap_free(&add);
    gg_sort_unique(&g->snap);
}

double git_guard_last_ms(const struct git_guard *g)
{
    return g->last_ms;
}

size_t git_guard_last_dirs(const struct git_guard *g)
{
    return g->last_dirs;
}

size_t git_guard_last_listed(const struct git_guard *g)
{
    return g->last_listed;
}

void git_guard_free(struct git_guard *g)
{
    if (!g)
        return;
    gg_stand_ins_remove(g);
    gg_snap_free(&g->snap);
    gg_dir_free(g->tree);
    gg_parent_cache_set(g->pc, false);
    free(g->pc);
    if (g->wsfd >= 0)
        close(g->wsfd);
    str_list_free(&g->made);
    free(g->own_common);
    str_list_free(&g->found);
    str_list_free(&g->found_bare);
    str_list_free(&g->made_repos);
    gg_cfg_refs_free(&g->host);
    str_list_free(&g->host_in_ws);
    free(g->home);
    free(g->cache);
    free(g->ws);
    free(g);
}
