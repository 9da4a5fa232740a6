/* git_guards.c — see git_guards.h. Also owns where each tree's walk is kept between runs:
 * "$XDG_STATE_HOME/cordon/git-walks/<sha256 of the tree's canonical path>" (XDG_STATE_HOME
 * defaulting to ~/.local/state, beside the home layers), inside cordon's state directory, which
 * every sandbox has hidden (protect_own_dirs). Must never put that file where a sandbox can
 * write: the next run trusts its stamps. */
#include "controller/git_guards.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cordon_dirs.h"
#include "base/sha256.h"
#include "controller/git_guard.h"

struct git_guards {
    struct git_guard **guard; /* one per root, in roots' order */
    struct str_list roots;
    bool first_is_workspace; /* its lines carry no label: the workspace is where the person is */
};

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

static void add(struct git_guards *gs, struct git_guard *g, const char *root)
{
    gs->guard = xrealloc(gs->guard, (gs->roots.len + 1) * sizeof *gs->guard);
    gs->guard[gs->roots.len] = g;
    str_list_push(&gs->roots, root);
}

struct git_guards *git_guards_new(struct sandbox_config *cfg)
{
    struct git_guards *gs = xcalloc(1, sizeof *gs);
    if (cfg->workspace && !cfg->workspace_readonly) {
        struct git_guard *g = guard_new(cfg->workspace, &cfg->readonly_in_workspace);
        if (!g)
            goto fail;
        add(gs, g, cfg->workspace);
        gs->first_is_workspace = true;
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
    return gs;
fail:
    git_guards_free(gs);
    return NULL;
}

/* Run one check over every tree; a writable path's lines are labelled with it. */
static int each(struct git_guards *gs, struct str_list *lines, bool tick, bool may_walk)
{
    int total = 0, first_err = 0;
    for (size_t i = 0; i < gs->roots.len; i++) {
        struct str_list mine = {0};
        int r = tick ? git_guard_tick(gs->guard[i], &mine, may_walk)
                     : git_guard_check(gs->guard[i], &mine);
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

int git_guards_check(struct git_guards *gs, struct str_list *lines)
{
    return gs ? each(gs, lines, false, false) : 0;
}

int git_guards_tick(struct git_guards *gs, struct str_list *lines, bool may_walk)
{
    return gs ? each(gs, lines, true, may_walk) : 0;
}

const struct str_list *git_guards_roots(const struct git_guards *gs)
{
    static const struct str_list none = {0};
    return gs ? &gs->roots : &none;
}

void git_guards_free(struct git_guards *gs)
{
    if (!gs)
        return;
    for (size_t i = 0; i < gs->roots.len; i++)
        git_guard_free(gs->guard[i]);
    free(gs->guard);
    str_list_free(&gs->roots);
    free(gs);
}
