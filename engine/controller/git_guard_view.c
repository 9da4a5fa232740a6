/* git_guard_view.c — the host's view of a repository: what `git rev-parse --git-common-dir
 * --git-path hooks` would say in its worktree, worked out from a snapshot, and one line per
 * repository whose view a command changed. Must never: run git. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "controller/git_guard_private.h"

/* The last core.hookspath of a config item's digest, or NULL. */
static char *digest_hooks_path(const struct gg_item *x)
{
    char *r = NULL;
    static const char key[] = "core.hookspath=";
    for (const char *p = x && x->digest ? x->digest : ""; (p = strstr(p, key));) {
        if (p != x->digest && p[-1] != '\n') {
            p++;
            continue;
        }
        p += sizeof key - 1;
        const char *nl = strchr(p, '\n');
        free(r);
        r = xasprintf("%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
    }
    return r;
}

/* What the host's `git rev-parse --git-common-dir --git-path hooks` says in the worktree dir,
 * worked out from the snapshot (git is never run): "COMMON HOOKS", workspace-relative where
 * they lie in it. */
static char *host_view(const struct git_guard *g, const struct gg_snap *s, const char *dir)
{
    char *dotgit = gg_join(dir, ".git"), *gd = NULL, *common = NULL, *hp = NULL, *p;
    const struct gg_item *x = gg_find_item(s, dotgit);
    if (x && x->type == S_IFREG) {
        gd = gg_pointer_target(g, x, dir, "gitdir: ");
        if (!gd)
            gd = gg_pointer_path(x->bytes, x->len, "gitdir: ");
    }
    if (!gd)
        gd = xstrdup(dotgit);
    p = gg_join(gd, "commondir");
    const struct gg_item *cd = gg_find_item(s, p);
    common = gg_pointer_target(g, cd, gd, "");
    if (!common && cd && cd->type == S_IFREG) /* out of the workspace: as it says */
        common = gg_pointer_path(cd->bytes, cd->len, "");
    free(p);
    if (!common)
        common = xstrdup(gd);
    static const char *const configs[2][2] = {{"c", "config"}, {"g", "config.worktree"}};
    for (int i = 0; i < 2; i++) {
        p = gg_join(configs[i][0][0] == 'c' ? common : gd, configs[i][1]);
        char *v = digest_hooks_path(gg_find_item(s, p));
        if (v) {
            free(hp);
            hp = v;
        }
        free(p);
    }
    char *hooks = hp ? hp : gg_join(common, "hooks");
    char *r = xasprintf("%s %s", common, hooks);
    if (hp != hooks)
        free(hooks);
    free(hp);
    free(dotgit);
    free(gd);
    free(common);
    return r;
}

/* One line per repository whose host view the command changed (the lines after it say how each
 * change was undone). */
void gg_say_views(const struct git_guard *g, const struct gg_snap *now, struct str_list *lines)
{
    for (size_t i = 0; i < g->snap.dotgits.len; i++) {
        const char *dir = g->snap.dotgits.items[i];
        if (str_list_contains(&g->made_repos, dir))
            continue; /* git made it a step at a time: what it undoes is said by itself */
        char *was = host_view(g, &g->snap, dir), *is = host_view(g, now, dir);
        if (strcmp(was, is) != 0)
            str_list_push_owned(lines, xasprintf("git: repository %s: the host's `git rev-parse "
                                                 "--git-common-dir --git-path hooks` would say "
                                                 "\"%s\" instead of \"%s\": undone below",
                                                 dir[0] ? dir : ".", is, was));
        free(was);
        free(is);
    }
}
