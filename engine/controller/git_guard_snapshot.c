/* git_guard_snapshot.c — the snapshot: for every repository the walk or the watcher found, what
 * in it makes git run a program (pointer files, configs' code-running entries, hooks, a hooks
 * link, the programs and folders configs name in the workspace), each recorded with its bytes
 * and held read-only; and the host's own git configs, read once. Uses: git_guard_access.c,
 * git_guard_digest.c, git_guard_walk.c. Must never: follow a symbolic link, or record a file it
 * cannot read as harmless (too_big: compared by size, inode and time). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "controller/git_guard_private.h"

void gg_item_free(struct gg_item *x)
{
    free(x->rel);
    free(x->repo);
    free(x->bytes);
    free(x->digest);
}

void gg_snap_free(struct gg_snap *s)
{
    for (size_t i = 0; i < s->n; i++)
        gg_item_free(&s->items[i]);
    free(s->items);
    str_list_free(&s->gitdirs);
    str_list_free(&s->hookdirs);
    str_list_free(&s->ro);
    str_list_free(&s->dotgits);
    memset(s, 0, sizeof *s);
}

/* Record rel when it exists (anything but a missing name is recorded). Returns the item or
 * NULL. refs: for a config, what its entries point at. A path reached twice (a hook that a
 * config entry also names) is recorded twice; gg_snapshot() keeps one. */
struct gg_item *gg_record(struct git_guard *g, struct gg_snap *s, const char *rel,
                          enum gg_kind kind, const char *repo, struct cfg_refs *refs)
{
    const char *base;
    struct stat st;
    int pfd = gg_open_parent(g, rel, &base);
    if (pfd < 0)
        return NULL;
    if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        gg_close_parent(g, pfd);
        return NULL;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->items = xrealloc(s->items, s->cap * sizeof *s->items);
    }
    struct gg_item *x = &s->items[s->n++];
    memset(x, 0, sizeof *x);
    x->rel = xstrdup(rel);
    x->repo = xstrdup(repo[0] ? repo : ".");
    x->kind = kind;
    x->type = st.st_mode & S_IFMT;
    x->perm = st.st_mode & 07777;
    x->size = st.st_size;
    x->ino = st.st_ino;
    x->mtime = st.st_mtim;
    x->ctime = st.st_ctim;
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlinkat(pfd, base, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        x->bytes = xstrdup(target);
        x->len = strlen(target);
    } else if (S_ISREG(st.st_mode)) {
        int fd = s->kept > KEPT_BUDGET
                     ? -1
                     : openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        int r = fd < 0 ? -EFBIG : read_fd(fd, MAX_KEPT, &x->bytes, &x->len);
        s->kept += x->len;
        if (fd >= 0)
            close(fd);
        if (r < 0) {
            x->too_big = true; /* unread: compared by size, inode and time; never harmless */
            x->bytes = NULL;
        }
        if (kind == GG_CONFIG && x->bytes)
            x->digest = gg_config_digest(x->bytes, x->len, refs);
    }
    gg_close_parent(g, pfd);
    return x;
}

/* Hold rel read-only in the sandbox when it exists and is no link; never the workspace itself
 * (a core.hooksPath of "." is compared, not bound: the workspace stays writable). */
static void ro_push(struct git_guard *g, struct gg_snap *s, const char *rel)
{
    struct stat st;
    if (rel[0] && gg_lstat_rel(g, rel, &st) && !S_ISLNK(st.st_mode) &&
        !str_list_contains(&s->ro, rel))
        str_list_push(&s->ro, rel);
}

/* ro_push for what gg_record() just found at rel (x: its item, NULL when missing), from the one
 * look record took instead of a second. */
static void ro_push_recorded(struct gg_snap *s, const char *rel, const struct gg_item *x)
{
    if (x && rel[0] && x->type != S_IFLNK && !str_list_contains(&s->ro, rel))
        str_list_push(&s->ro, rel);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The hooks in dir and below (HOOKS_DEPTH). samples: a git dir's own hooks folder, where git
 * runs only a hook's exact name, so its *.sample files are inert; elsewhere (core.hooksPath's
 * folder, whose hooks may source any file beside them) every file counts. Names the guard left
 * (NAME.cordon-refused) are recorded like any other: the snapshot after an undo holds them. */
static void scan_hooks(struct git_guard *g, struct gg_snap *s, const char *dir, const char *repo,
                       int depth, bool samples)
{
    if (depth == 0) {
        if (str_list_contains(&s->hookdirs, dir))
            return;
        str_list_push(&s->hookdirs, dir);
        ro_push(g, s, dir);
    }
    DIR *d = gg_opendir_beneath(g, dir);
    if (!d)
        return;
    for (struct dirent *de; (de = readdir(d));) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            (samples && ends_with(de->d_name, ".sample")))
            continue;
        char *p = gg_join(dir, de->d_name);
        if (de->d_type == DT_DIR) {
            if (depth + 1 < HOOKS_DEPTH)
                scan_hooks(g, s, p, repo, depth + 1, samples);
            else
                s->hooks_hit = true;
        } else {
            gg_record(g, s, p, GG_HOOK, repo, NULL);
        }
        free(p);
    }
    closedir(d);
}

/* A `.git` file's `gitdir: PATH` or a commondir's PATH, resolved in the workspace, or NULL. */
char *gg_pointer_target(const struct git_guard *g, const struct gg_item *x, const char *base,
                        const char *prefix)
{
    if (!x || x->type != S_IFREG || !x->bytes || strlen(x->bytes) != x->len)
        return NULL;
    size_t plen = strlen(prefix), len = x->len;
    if (len < plen || strncmp(x->bytes, prefix, plen) != 0)
        return NULL;
    char *p = xasprintf("%.*s", (int)(len - plen), x->bytes + plen);
    size_t n = strlen(p);
    while (n && (p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == ' '))
        p[--n] = '\0';
    char *r = n ? gg_resolve_in_ws(g, base, p) : NULL;
    free(p);
    return r;
}

static void add_gitdir(struct git_guard *g, struct gg_snap *s, const char *gd, const char *repo,
                       const char *worktree);

/* modules/: each folder holding a HEAD or a config is a submodule's git dir. */
static void scan_modules(struct git_guard *g, struct gg_snap *s, const char *dir, int depth)
{
    DIR *d = gg_opendir_beneath(g, dir);
    if (!d)
        return;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *p = gg_join(dir, de->d_name), *head = gg_join(p, "HEAD"), *cfg = gg_join(p, "config");
        struct stat st;
        if (gg_lstat_rel(g, head, &st) || gg_lstat_rel(g, cfg, &st))
            add_gitdir(g, s, p, p, NULL);
        else if (depth + 1 < MODULES_DEPTH)
            scan_modules(g, s, p, depth + 1);
        free(p);
        free(head);
        free(cfg);
    }
    closedir(d);
}

/* A linked worktree's admin folder G/worktrees/NAME: what the worktree elsewhere follows. */
static void add_admin(struct git_guard *g, struct gg_snap *s, const char *admin, const char *repo)
{
    static const char *const names[] = {"commondir", "gitdir", "config.worktree"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        char *p = gg_join(admin, names[i]);
        ro_push_recorded(s, p, gg_record(g, s, p, i == 2 ? GG_CONFIG : GG_POINTER, repo, NULL));
        free(p);
    }
}

/* core.hooksPath (relative to the worktree, where git runs hooks) when it lies in the
 * workspace: its hooks, and for husky 9's `.husky/_` (whose hooks run `../pre-commit`) its
 * parent's too. */
static void hooks_path_folders(struct git_guard *g, struct gg_snap *s, const char *hooks_path,
                               const char *worktree, const char *repo)
{
    char *h = gg_resolve_in_ws(g, worktree, hooks_path);
    if (!h)
        return;
    scan_hooks(g, s, h, repo, 0, false);
    const char *last = strrchr(h, '/');
    if (strcmp(last ? last + 1 : h, "_") == 0) {
        char *up = gg_parent_rel(h);
        scan_hooks(g, s, up, repo, 0, false);
        free(up);
    }
    free(h);
}

static char *expand_home(const struct git_guard *g, const char *path)
{
    return g->home ? path_expand_home(path, g->home) : xstrdup(path);
}

/* What a repository's configs point at in the workspace, each recorded and held read-only:
 * included configs (relative to the git dir), the folder core.hooksPath names (the
 * repository's own, else the host's: relative to the worktree), and the programs code-running
 * entries name by path (the repository's and the host's: relative to the worktree, where git
 * runs them): a command that rewrote ./scripts/textconv.sh would have the host's next git diff
 * run it. */
static void follow_refs(struct git_guard *g, struct gg_snap *s, struct cfg_refs *refs,
                        const char *gd, const char *worktree, const char *repo)
{
    for (size_t i = 0; i < refs->includes.len && i < 64; i++) { /* grows as includes include */
        char *inc = expand_home(g, refs->includes.items[i]);
        char *rel = gg_resolve_in_ws(g, gd, inc);
        if (rel)
            ro_push_recorded(s, rel, gg_record(g, s, rel, GG_CONFIG, repo, refs));
        free(rel);
        free(inc);
    }
    const char *hp = refs->hooks_path ? refs->hooks_path : g->host.hooks_path;
    if (hp && worktree) {
        char *e = expand_home(g, hp);
        hooks_path_folders(g, s, e, worktree, repo);
        free(e);
    }
    const struct str_list *lists[] = {&refs->programs, &g->host.programs};
    for (size_t l = 0; l < ARRAY_LEN(lists); l++) {
        for (size_t i = 0; i < lists[l]->len; i++) {
            char *e = expand_home(g, lists[l]->items[i]);
            char *rel = gg_resolve_in_ws(g, worktree ? worktree : gd, e);
            if (rel && rel[0])
                ro_push_recorded(s, rel, gg_record(g, s, rel, GG_PROGRAM, repo, NULL));
            free(rel);
            free(e);
        }
    }
}

static void add_gitdir(struct git_guard *g, struct gg_snap *s, const char *gd, const char *repo,
                       const char *worktree)
{
    if (str_list_contains(&s->gitdirs, gd))
        return;
    str_list_push(&s->gitdirs, gd);
    struct cfg_refs refs = {0};
    char *p = NULL;
    static const char *const configs[] = {"config", "config.worktree"};
    for (size_t i = 0; i < ARRAY_LEN(configs); i++) {
        p = gg_join(gd, configs[i]);
        ro_push_recorded(s, p, gg_record(g, s, p, GG_CONFIG, repo, &refs));
        free(p);
    }
    p = gg_join(gd, "commondir");
    struct gg_item *cd = gg_record(g, s, p, GG_POINTER, repo, NULL);
    ro_push_recorded(s, p, cd);
    free(p);
    char *common = gg_pointer_target(g, cd, gd, "");
    if (common) /* its config and hooks are this repository's */
        add_gitdir(g, s, common, repo, worktree);
    free(common);
    p = gg_join(gd, "gitdir");
    ro_push_recorded(s, p, gg_record(g, s, p, GG_POINTER, repo, NULL));
    free(p);

    p = gg_join(gd, "hooks");
    struct stat st;
    bool have = gg_lstat_rel(g, p, &st);
    if (have && S_ISLNK(st.st_mode)) {
        /* The link itself cannot hold a mount: its target is bound read-only instead, and the
         * link is compared here after each command. */
        struct gg_item *x = gg_record(g, s, p, GG_HOOKS_LINK, repo, NULL);
        char *target = x && x->bytes ? gg_resolve_in_ws(g, gd, x->bytes) : NULL;
        if (target)
            scan_hooks(g, s, target, repo, 0, true);
        free(target);
    } else if (have && S_ISDIR(st.st_mode)) {
        scan_hooks(g, s, p, repo, 0, true);
    } else {
        gg_record(g, s, p, GG_HOOK, repo, NULL); /* a file named hooks: nothing git reads */
    }
    free(p);
    follow_refs(g, s, &refs, gd, worktree, repo);
    gg_cfg_refs_free(&refs);

    p = gg_join(gd, "worktrees");
    if (gg_lstat_rel(g, p, &st) && S_ISDIR(st.st_mode)) {
        /* Not worktrees/ itself: `git worktree add` makes a folder there. Each admin folder's
         * pointers are held (add_admin); the rest of it stays writable (a commit in that
         * worktree, `git gc`: git_worktree.h). */
        DIR *d = gg_opendir_beneath(g, p);
        for (struct dirent *de; d && (de = readdir(d));) {
            if (de->d_type != DT_DIR || de->d_name[0] == '.')
                continue;
            char *admin = gg_join(p, de->d_name);
            add_admin(g, s, admin, repo);
            free(admin);
        }
        if (d)
            closedir(d);
    }
    free(p);
    p = gg_join(gd, "modules");
    if (gg_lstat_rel(g, p, &st) && S_ISDIR(st.st_mode))
        scan_modules(g, s, p, 0);
    free(p);
}

/* The one path a pointer file's text holds after prefix, trailing newlines removed; or NULL. */
char *gg_pointer_path(const char *text, size_t len, const char *prefix)
{
    size_t plen = strlen(prefix);
    if (!text || strlen(text) != len || len < plen || strncmp(text, prefix, plen) != 0)
        return NULL;
    char *p = xasprintf("%.*s", (int)(len - plen), text + plen);
    size_t n = strlen(p);
    while (n && (p[n - 1] == '\n' || p[n - 1] == '\r'))
        p[--n] = '\0';
    if (!n) {
        free(p);
        return NULL;
    }
    return p;
}

/* A `.git` file leading out of the workspace (a linked worktree of a repository elsewhere):
 * that repository's config and the worktree's config.worktree may name a core.hooksPath
 * relative to this worktree, so in the workspace (husky's `.husky`). They are read from the
 * host as they are (the sandbox holds them read-only: git_worktree.h). */
static void outside_hooks_path(struct git_guard *g, struct gg_snap *s, const struct gg_item *x,
                               const char *dir)
{
    char *raw = gg_pointer_path(x->bytes, x->len, "gitdir: "), *base = NULL, *gd = NULL,
         *common = NULL, *f = NULL, *text = NULL;
    struct cfg_refs refs = {0};
    size_t len = 0;
    if (!raw)
        return;
    base = dir[0] ? xasprintf("%s/%s", g->ws, dir) : xstrdup(g->ws);
    gd = path_absolute(raw, base);
    f = xasprintf("%s/commondir", gd);
    if (read_file(f, O_NOFOLLOW, 4096, &text, &len) == 0) {
        char *c = gg_pointer_path(text, len, "");
        common = c ? path_absolute(c, gd) : NULL;
        free(c);
    }
    free(text);
    text = NULL;
    const char *files[2] = {common ? common : gd, gd};
    static const char *const names[2] = {"config", "config.worktree"};
    for (int i = 0; i < 2; i++) {
        free(f);
        f = xasprintf("%s/%s", files[i], names[i]);
        if (read_file(f, O_NOFOLLOW, MAX_KEPT, &text, &len) == 0)
            free(gg_config_digest(text, len, &refs));
        free(text);
        text = NULL;
    }
    str_list_free(&refs.includes); /* outside the workspace: the sandbox cannot change them */
    char *p = gg_join(dir, ".git");
    follow_refs(g, s, &refs, p, dir, dir);
    free(p);
    gg_cfg_refs_free(&refs);
    free(raw);
    free(base);
    free(gd);
    free(common);
    free(f);
}

/* A `.git` in the worktree folder dir: a git dir, or a file (or link) naming one. */
void gg_add_dotgit(struct git_guard *g, struct gg_snap *s, const char *dir, unsigned char type)
{
    char *p = gg_join(dir, ".git");
    if (!str_list_contains(&s->dotgits, dir))
        str_list_push(&s->dotgits, dir);
    if (type == DT_DIR) {
        add_gitdir(g, s, p, dir, dir);
    } else {
        struct gg_item *x = gg_record(g, s, p, GG_POINTER, dir, NULL);
        if (x && x->type == S_IFREG)
            ro_push(g, s, p);
        char *gd = gg_pointer_target(g, x, dir, "gitdir: ");
        if (gd)
            add_gitdir(g, s, gd, dir, dir);
        else if (x && x->type == S_IFREG)
            outside_hooks_path(g, s, x, dir);
        free(gd);
    }
    free(p);
}

static int by_rel(const void *a, const void *b)
{
    const struct gg_item *x = a, *y = b;
    int c = strcmp(x->rel, y->rel);
    return c ? c : (int)x->kind - (int)y->kind;
}

/* Sorted by path, each path once (the first kind in enum order: a config over a hook). */
void gg_sort_unique(struct gg_snap *s)
{
    if (!s->n)
        return;
    qsort(s->items, s->n, sizeof *s->items, by_rel);
    size_t k = 0;
    for (size_t i = 1; i < s->n; i++) {
        if (strcmp(s->items[i].rel, s->items[k].rel) == 0)
            gg_item_free(&s->items[i]);
        else
            s->items[++k] = s->items[i];
    }
    s->n = k + 1;
}

/* The host's own git configs (system, global, and what they include): what they point at
 * applies to every repository (a global core.hooksPath, a program named by path); one that
 * lies in the workspace (a dotfiles repository, a workspace that is the home) is itself
 * recorded and held read-only. Read once, before the sandbox: outside the workspace it cannot
 * change them, inside it they are bound read-only. */
#define HOST_CONFIGS_MAX 16
void gg_host_configs(struct git_guard *g)
{
    struct str_list files = {0};
    const char *sys = getenv("GIT_CONFIG_SYSTEM"), *glob = getenv("GIT_CONFIG_GLOBAL");
    const char *xdg = getenv("XDG_CONFIG_HOME");
    str_list_push(&files, sys && sys[0] ? sys : "/etc/gitconfig");
    if (glob && glob[0]) {
        str_list_push(&files, glob);
    } else {
        if (xdg && xdg[0])
            str_list_push_owned(&files, xasprintf("%s/git/config", xdg));
        else if (g->home)
            str_list_push_owned(&files, xasprintf("%s/.config/git/config", g->home));
        if (g->home)
            str_list_push_owned(&files, xasprintf("%s/.gitconfig", g->home));
    }
    for (size_t i = 0; i < files.len && i < HOST_CONFIGS_MAX; i++) {
        char *real = realpath(files.items[i], NULL), *text = NULL;
        size_t len = 0;
        if (!real)
            continue;
        char *rel = gg_resolve_in_ws(g, "", real);
        if (rel && !str_list_contains(&g->host_in_ws, rel))
            str_list_push(&g->host_in_ws, rel);
        free(rel);
        if (read_file(real, 0, MAX_KEPT, &text, &len) == 0) {
            size_t before = g->host.includes.len;
            free(gg_config_digest(text, len, &g->host));
            char *dir = gg_parent_rel(real);
            for (size_t k = before; k < g->host.includes.len; k++) {
                char *e = expand_home(g, g->host.includes.items[k]);
                str_list_push_owned(&files, path_absolute(e, dir[0] ? dir : "/"));
                free(e);
            }
            free(dir);
        }
        free(text);
        free(real);
    }
    str_list_free(&g->host.includes); /* followed here */
    str_list_free(&files);
}

/* The repositories the watcher found, wherever they lie (past the walk's bound, in
 * node_modules), and the git dirs that are no worktree's: bare ones, submodules' and linked
 * worktrees' elsewhere in the tree. */
void gg_found_repos_one(struct git_guard *g, struct gg_snap *s, const char *rel, bool bare)
{
    if (!bare) {
        char *p = gg_join(rel, ".git");
        struct stat st;
        if (!str_list_contains(&s->dotgits, rel) && gg_lstat_rel(g, p, &st))
            gg_add_dotgit(g, s, rel, S_ISDIR(st.st_mode) ? DT_DIR : DT_REG);
        free(p);
        return;
    }
    /* G/worktrees/NAME: a linked worktree's admin folder, its pointers only */
    const char *slash = strrchr(rel, '/');
    size_t at = slash ? (size_t)(slash - rel) : 0;
    if (slash && at >= 9 && strncmp(slash - 9, "worktrees", 9) == 0 &&
        (at == 9 || slash[-10] == '/'))
        add_admin(g, s, rel, rel);
    else
        add_gitdir(g, s, rel, rel, NULL);
}

static void found_repos(struct git_guard *g, struct gg_snap *s)
{
    for (size_t i = 0; i < g->found.len; i++)
        gg_found_repos_one(g, s, g->found.items[i], false);
    for (size_t i = 0; i < g->found_bare.len; i++)
        gg_found_repos_one(g, s, g->found_bare.items[i], true);
}

/* The whole walk, or (quick) only the repositories the last snapshot knew: no new one is
 * found then, but what a command plants in a known `.git` is, at a cost that does not grow with
 * the workspace. */
static int snapshot_in(struct git_guard *g, struct gg_snap *s, bool quick)
{
    memset(s, 0, sizeof *s);
    double t0 = clock_mono_ms_f();
    for (size_t i = 0; i < g->host_in_ws.len; i++) {
        const char *rel = g->host_in_ws.items[i];
        ro_push_recorded(s, rel,
                         gg_record(g, s, rel, GG_CONFIG, "~ (the host's own git config)", NULL));
    }
    found_repos(g, s);
    if (quick) {
        for (size_t i = 0; i < g->snap.dotgits.len; i++) {
            const char *dir = g->snap.dotgits.items[i];
            char *p = gg_join(dir, ".git");
            struct stat st;
            if (gg_lstat_rel(g, p, &st))
                gg_add_dotgit(g, s, dir, S_ISDIR(st.st_mode) ? DT_DIR : DT_REG);
            free(p);
        }
    } else {
        int r = gg_walk(g, s);
        if (r < 0) {
            gg_snap_free(s);
            return r;
        }
        /* A repository the last snapshot knew stays looked at, even past the walk's bound (a
         * command may fill the workspace with folders to push it out). */
        for (size_t i = 0; i < g->snap.dotgits.len; i++) {
            const char *dir = g->snap.dotgits.items[i];
            char *p = gg_join(dir, ".git");
            struct stat st;
            if (!str_list_contains(&s->dotgits, dir) && gg_lstat_rel(g, p, &st))
                gg_add_dotgit(g, s, dir, S_ISDIR(st.st_mode) ? DT_DIR : DT_REG);
            free(p);
        }
        g->full_at = t0;
        g->full_ms = clock_mono_ms_f() - t0;
    }
    gg_sort_unique(s);
    g->last_ms = clock_mono_ms_f() - t0;
    g->last_dirs = s->dirs;
    return 0;
}

int gg_snapshot(struct git_guard *g, struct gg_snap *s, bool quick)
{
    gg_parent_cache_set(g->pc, true);
    int r = snapshot_in(g, s, quick);
    gg_parent_cache_set(g->pc, false);
    return r;
}

const struct gg_item *gg_find_item(const struct gg_snap *s, const char *rel)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s->items[mid].rel, rel);
        if (c == 0)
            return &s->items[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
