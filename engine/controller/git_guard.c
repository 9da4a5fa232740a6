/* git_guard.c — see git_guard.h. Owns the walk that finds the workspace's repositories (and
 * what it keeps of the folders between walks, so that an unchanged one is not listed again, in
 * memory and, between runs, in the cache file: its format, reading and writing),
 * the snapshot of what in them makes git run a program, and the undo of each difference. Uses
 * base/git_config.c (parsing, the code-running judgement) and base/util.c. Must never: open
 * anything but beneath the workspace's descriptor without a symbolic link on the way
 * (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, O_NOFOLLOW for the last name), run git, leave a
 * difference it could not undo unsaid, or take from the cache file more than which entries a
 * folder had at the stamps it gives. */
#include "controller/git_guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/dir_stamp.h"
#include "base/git_config.h"
#include "controller/worktree_admin.h"

/* A hook, a config or a pointer file bigger than this is compared by size, inode and time and
 * cannot be restored (a new or changed one is neutralised instead). */
#define MAX_KEPT (1024 * 1024)
#define HOOKS_DEPTH 3 /* husky's `.husky/_/h` is two levels below the hooks folder */
/* Contents kept per snapshot, in all: past it files are compared by size, inode and time (a new
 * one is still neutralised, a changed one renamed away), so that a command filling a hooks
 * folder costs the check no more memory, and hides nothing. */
#define KEPT_BUDGET (64 * 1024 * 1024)
#define MODULES_DEPTH 4 /* a submodule's name may hold slashes: modules/a/b/c */
#define REFUSED ".cordon-refused"

enum gg_kind { GG_POINTER, GG_CONFIG, GG_HOOK, GG_HOOKS_LINK, GG_PROGRAM };

struct gg_item {
    char *rel;  /* workspace-relative, no leading slash */
    char *repo; /* the repository it belongs to, for the lines ("." for the workspace's own) */
    enum gg_kind kind;
    mode_t type; /* S_IFREG, S_IFLNK, S_IFDIR, ... */
    mode_t perm;
    char *bytes; /* a regular file's content (NULL when too big), a link's target */
    size_t len;
    bool too_big;
    off_t size;
    ino_t ino;
    struct timespec mtime;
    struct timespec ctime; /* when it was last changed: git_guard_add_repo's age test */
    char *digest; /* GG_CONFIG: the guarded entries "key=value\n", sorted (entry_guarded); NULL:
                   * unparseable */
};

struct gg_snap {
    struct gg_item *items;
    size_t n, cap;
    struct str_list gitdirs;  /* git dirs looked into (workspace-relative) */
    struct str_list hookdirs; /* hooks folders looked into */
    struct str_list ro;       /* what the sandbox binds read-only */
    struct str_list dotgits;  /* the folders holding a `.git` the walk found */
    size_t dirs, kept;
    bool bound_hit, hooks_hit;
};

/* What a config's code-running entries point at that could lie in the workspace. */
struct cfg_refs {
    char *hooks_path;         /* the last core.hooksPath */
    struct str_list includes; /* include.path, includeIf.*.path values */
    struct str_list programs; /* the program of an entry that runs one, when it is a path */
};

static void cfg_refs_free(struct cfg_refs *r)
{
    free(r->hooks_path);
    str_list_free(&r->includes);
    str_list_free(&r->programs);
    memset(r, 0, sizeof *r);
}

struct gg_dir;

/* The folder a snapshot last looked in, kept open for the next name in it (a repository's
 * dozen names all lie in its git dir, each recorded and then held read-only: one descriptor
 * instead of an openat2 and a close for each look). Only while snapshot() runs: an undo, and
 * the next check, open afresh. */
struct parent_cache {
    bool on;
    char *rel; /* workspace-relative ("" for the workspace) */
    int fd;    /* O_PATH, opened beneath the workspace as open_parent opens it; -1: none */
};

struct git_guard {
    char *ws;
    int wsfd;
    struct parent_cache *pc;
    struct gg_snap snap;
    struct gg_dir *tree; /* what the last walk saw of the folders, for the next one */
    double last_ms;
    size_t last_dirs, last_listed;
    bool bound_said;
    char *cache;     /* the file keeping tree between runs (NULL: none), git_guard_new_cached */
    bool tree_dirty; /* a walk listed a folder since tree was read from or written to cache */
    double full_at, full_ms;    /* the last walk: when (monotonic ms), and what it cost */
    struct str_list made;       /* what this check renamed things to: not new a round later */
    char *home;                 /* the host's HOME, for `~/` in config values */
    struct cfg_refs host;       /* what the host's own git configs point at */
    struct str_list host_in_ws; /* the host's git configs (and their includes) in the workspace */
    int diffs;                  /* differences this check found */
    struct str_list found;      /* worktree folders the watcher found (repo_watch.h) */
    struct str_list found_bare; /* git dirs it found that are no worktree's `.git` */
    struct str_list made_repos; /* of found, those made during the run: still being made */
    long long since_ns;         /* the sandbox's start (git_guard_since), 0: unknown */
    bool last;                  /* this check is the last of a command: nothing waits */
    size_t n_deferred;          /* pointers left for a later check (undo_differences) */
    git_guard_hold_fn *hold;    /* holds a path read-only inside the sandbox, or NULL */
    void *hold_ctx;
    struct str_list stand_ins; /* empty pointer files put in a plant's place, held inside */
    char *own_common;          /* the linked worktree's common dir, guarded beside (or NULL) */
};

/* ---- file access beneath the workspace ---------------------------------------------------- */

static int open_beneath(int dirfd, const char *rel, int flags)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
                           .resolve =
                               RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, dirfd, rel[0] ? rel : ".", &how, sizeof how);
    return fd < 0 ? -errno : fd;
}

static char *join(const char *a, const char *b)
{
    return a[0] ? xasprintf("%s/%s", a, b) : xstrdup(b);
}

/* The folder rel beneath the workspace, opened for reading its entries (no link followed), or
 * NULL. */
static DIR *opendir_beneath(const struct git_guard *g, const char *rel)
{
    int fd = open_beneath(g->wsfd, rel, O_RDONLY | O_DIRECTORY);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

static void parent_cache_set(struct parent_cache *pc, bool on)
{
    if (pc->fd >= 0)
        close(pc->fd);
    free(pc->rel);
    *pc = (struct parent_cache){.on = on, .fd = -1};
}

/* The directory holding rel, opened O_PATH beneath the workspace (or the snapshot's cached
 * one, the same folder); *base is rel's last name. Given back with close_parent. */
static int open_parent(const struct git_guard *g, const char *rel, const char **base)
{
    const char *slash = strrchr(rel, '/');
    size_t n = slash ? (size_t)(slash - rel) : 0;
    struct parent_cache *pc = g->pc;
    *base = slash ? slash + 1 : rel;
    if (pc->on && pc->fd >= 0 && strlen(pc->rel) == n && strncmp(pc->rel, rel, n) == 0)
        return pc->fd;
    char *dir = xasprintf("%.*s", (int)n, rel);
    int fd = open_beneath(g->wsfd, dir, O_PATH | O_DIRECTORY);
    if (pc->on && fd >= 0) {
        parent_cache_set(pc, true);
        pc->rel = dir;
        pc->fd = fd;
    } else {
        free(dir);
    }
    return fd;
}

static void close_parent(const struct git_guard *g, int fd)
{
    if (fd != g->pc->fd)
        close(fd);
}

static bool lstat_rel(const struct git_guard *g, const char *rel, struct stat *st)
{
    const char *base;
    int pfd = open_parent(g, rel, &base);
    if (pfd < 0)
        return false;
    bool ok = fstatat(pfd, base, st, AT_SYMLINK_NOFOLLOW) == 0;
    close_parent(g, pfd);
    return ok;
}

/* path (absolute, or relative to the workspace-relative dir base) as a workspace-relative path
 * ("" for the workspace itself), lexically normalised; NULL when it leads out of it. */
static char *resolve_in_ws(const struct git_guard *g, const char *base, const char *path)
{
    char *abs = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s/%s", g->ws, base, path);
    char *norm = path_absolute(abs, "/");
    char *r = NULL;
    free(abs);
    if (path_is_within(norm, g->ws)) {
        const char *p = norm + strlen(g->ws);
        r = xstrdup(p[0] == '/' ? p + 1 : p);
    }
    free(norm);
    return r;
}

/* ---- config digests ----------------------------------------------------------------------- */

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The program an entry runs when it names one by path (`/x/fsmon`, `./scripts/conv.sh`,
 * `~/bin/x`, `!./tools/a.sh --flag`); NULL for a command git looks up in PATH. */
static char *program_of(const char *value)
{
    if (!value)
        return NULL;
    const char *p = value;
    while (*p == '!' || *p == ' ' || *p == '\t')
        p++;
    char quote = *p == '"' || *p == '\'' ? *p++ : 0;
    const char *end = p;
    while (*end && (quote ? *end != quote : (*end != ' ' && *end != '\t' && *end != ';')))
        end++;
    if (end == p || !memchr(p, '/', (size_t)(end - p)))
        return NULL;
    return xasprintf("%.*s", (int)(end - p), p);
}

/* An entry the guard undoes when a command adds or changes it: one that runs code, or any
 * other the allowlist of settings refuses (an alias without '!', http.*, url.*, include*: the
 * host's git obeys them as well as a setting written through git_publish). A local remote path
 * or a work tree is judged only where the host can tell the writable areas (git_publish). */
static bool entry_guarded(const struct git_config *c, const struct git_config_entry *x)
{
    if (git_config_key_runs_code(x->key, x->value))
        return true;
    const char *why = NULL, *path = NULL;
    return git_config_judge(c, x, &why, &path) == GIT_CONFIG_REFUSE;
}

/* The guarded entries of a config's text (entry_guarded), one "key=value" a line, sorted;
 * NULL when it does not parse. refs (when not NULL) gets what the code-running ones point at. */
static char *config_digest(const char *text, size_t len, struct cfg_refs *refs)
{
    struct git_config c = {0};
    char err[256];
    if (git_config_parse(text, len, &c, err, sizeof err) < 0)
        return NULL;
    struct str_list l = {0};
    for (size_t i = 0; i < c.len; i++) {
        const struct git_config_entry *x = &c.items[i];
        if (!entry_guarded(&c, x))
            continue;
        str_list_push_owned(&l, x->value ? xasprintf("%s=%s", x->key, x->value) : xstrdup(x->key));
        if (!refs || !x->value || !git_config_key_runs_code(x->key, x->value))
            continue;
        const char *last = strrchr(x->key, '.');
        if (strcmp(x->key, "core.hookspath") == 0) {
            free(refs->hooks_path);
            refs->hooks_path = xstrdup(x->value);
        } else if (strcmp(x->key, "include.path") == 0 ||
                   (strncmp(x->key, "includeif.", 10) == 0 && last && strcmp(last, ".path") == 0)) {
            str_list_push(&refs->includes, x->value);
        } else {
            char *prog = program_of(x->value);
            if (prog)
                str_list_push_owned(&refs->programs, prog);
        }
    }
    if (l.len)
        qsort(l.items, l.len, sizeof *l.items, by_str);
    size_t total = 1;
    for (size_t i = 0; i < l.len; i++)
        total += strlen(l.items[i]) + 1;
    char *d = xmalloc(total), *p = d;
    for (size_t i = 0; i < l.len; i++)
        p += sprintf(p, "%s\n", l.items[i]);
    *p = '\0';
    str_list_free(&l);
    git_config_free(&c);
    return d;
}

/* ---- the snapshot ------------------------------------------------------------------------- */

static void item_free(struct gg_item *x)
{
    free(x->rel);
    free(x->repo);
    free(x->bytes);
    free(x->digest);
}

static void snap_free(struct gg_snap *s)
{
    for (size_t i = 0; i < s->n; i++)
        item_free(&s->items[i]);
    free(s->items);
    str_list_free(&s->gitdirs);
    str_list_free(&s->hookdirs);
    str_list_free(&s->ro);
    str_list_free(&s->dotgits);
    memset(s, 0, sizeof *s);
}

/* Record rel when it exists (anything but a missing name is recorded). Returns the item or
 * NULL. refs: for a config, what its entries point at. A path reached twice (a hook that a
 * config entry also names) is recorded twice; snapshot() keeps one. */
static struct gg_item *record(struct git_guard *g, struct gg_snap *s, const char *rel,
                              enum gg_kind kind, const char *repo, struct cfg_refs *refs)
{
    const char *base;
    struct stat st;
    int pfd = open_parent(g, rel, &base);
    if (pfd < 0)
        return NULL;
    if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        close_parent(g, pfd);
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
            x->digest = config_digest(x->bytes, x->len, refs);
    }
    close_parent(g, pfd);
    return x;
}

/* Hold rel read-only in the sandbox when it exists and is no link; never the workspace itself
 * (a core.hooksPath of "." is compared, not bound: the workspace stays writable). */
static void ro_push(struct git_guard *g, struct gg_snap *s, const char *rel)
{
    struct stat st;
    if (rel[0] && lstat_rel(g, rel, &st) && !S_ISLNK(st.st_mode) && !str_list_contains(&s->ro, rel))
        str_list_push(&s->ro, rel);
}

/* ro_push for what record() just found at rel (x: its item, NULL when missing), from the one
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
    DIR *d = opendir_beneath(g, dir);
    if (!d)
        return;
    for (struct dirent *de; (de = readdir(d));) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            (samples && ends_with(de->d_name, ".sample")))
            continue;
        char *p = join(dir, de->d_name);
        if (de->d_type == DT_DIR) {
            if (depth + 1 < HOOKS_DEPTH)
                scan_hooks(g, s, p, repo, depth + 1, samples);
            else
                s->hooks_hit = true;
        } else {
            record(g, s, p, GG_HOOK, repo, NULL);
        }
        free(p);
    }
    closedir(d);
}

/* A `.git` file's `gitdir: PATH` or a commondir's PATH, resolved in the workspace, or NULL. */
static char *pointer_target(const struct git_guard *g, const struct gg_item *x, const char *base,
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
    char *r = n ? resolve_in_ws(g, base, p) : NULL;
    free(p);
    return r;
}

static char *parent_rel(const char *rel)
{
    const char *slash = strrchr(rel, '/');
    return slash ? xasprintf("%.*s", (int)(slash - rel), rel) : xstrdup("");
}

static void add_gitdir(struct git_guard *g, struct gg_snap *s, const char *gd, const char *repo,
                       const char *worktree);

/* modules/: each folder holding a HEAD or a config is a submodule's git dir. */
static void scan_modules(struct git_guard *g, struct gg_snap *s, const char *dir, int depth)
{
    DIR *d = opendir_beneath(g, dir);
    if (!d)
        return;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *p = join(dir, de->d_name), *head = join(p, "HEAD"), *cfg = join(p, "config");
        struct stat st;
        if (lstat_rel(g, head, &st) || lstat_rel(g, cfg, &st))
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
        char *p = join(admin, names[i]);
        ro_push_recorded(s, p, record(g, s, p, i == 2 ? GG_CONFIG : GG_POINTER, repo, NULL));
        free(p);
    }
}

/* core.hooksPath (relative to the worktree, where git runs hooks) when it lies in the
 * workspace: its hooks, and for husky 9's `.husky/_` (whose hooks run `../pre-commit`) its
 * parent's too. */
static void hooks_path_folders(struct git_guard *g, struct gg_snap *s, const char *hooks_path,
                               const char *worktree, const char *repo)
{
    char *h = resolve_in_ws(g, worktree, hooks_path);
    if (!h)
        return;
    scan_hooks(g, s, h, repo, 0, false);
    const char *last = strrchr(h, '/');
    if (strcmp(last ? last + 1 : h, "_") == 0) {
        char *up = parent_rel(h);
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
        char *rel = resolve_in_ws(g, gd, inc);
        if (rel)
            ro_push_recorded(s, rel, record(g, s, rel, GG_CONFIG, repo, refs));
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
            char *rel = resolve_in_ws(g, worktree ? worktree : gd, e);
            if (rel && rel[0])
                ro_push_recorded(s, rel, record(g, s, rel, GG_PROGRAM, repo, NULL));
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
        p = join(gd, configs[i]);
        ro_push_recorded(s, p, record(g, s, p, GG_CONFIG, repo, &refs));
        free(p);
    }
    p = join(gd, "commondir");
    struct gg_item *cd = record(g, s, p, GG_POINTER, repo, NULL);
    ro_push_recorded(s, p, cd);
    free(p);
    char *common = pointer_target(g, cd, gd, "");
    if (common) /* its config and hooks are this repository's */
        add_gitdir(g, s, common, repo, worktree);
    free(common);
    p = join(gd, "gitdir");
    ro_push_recorded(s, p, record(g, s, p, GG_POINTER, repo, NULL));
    free(p);

    p = join(gd, "hooks");
    struct stat st;
    bool have = lstat_rel(g, p, &st);
    if (have && S_ISLNK(st.st_mode)) {
        /* The link itself cannot hold a mount: its target is bound read-only instead, and the
         * link is compared here after each command. */
        struct gg_item *x = record(g, s, p, GG_HOOKS_LINK, repo, NULL);
        char *target = x && x->bytes ? resolve_in_ws(g, gd, x->bytes) : NULL;
        if (target)
            scan_hooks(g, s, target, repo, 0, true);
        free(target);
    } else if (have && S_ISDIR(st.st_mode)) {
        scan_hooks(g, s, p, repo, 0, true);
    } else {
        record(g, s, p, GG_HOOK, repo, NULL); /* a file named hooks: nothing git reads */
    }
    free(p);
    follow_refs(g, s, &refs, gd, worktree, repo);
    cfg_refs_free(&refs);

    p = join(gd, "worktrees");
    if (lstat_rel(g, p, &st) && S_ISDIR(st.st_mode)) {
        /* Not worktrees/ itself: `git worktree add` makes a folder there. Each admin folder's
         * pointers are held (add_admin); the rest of it stays writable (a commit in that
         * worktree, `git gc`: git_worktree.h). */
        DIR *d = opendir_beneath(g, p);
        for (struct dirent *de; d && (de = readdir(d));) {
            if (de->d_type != DT_DIR || de->d_name[0] == '.')
                continue;
            char *admin = join(p, de->d_name);
            add_admin(g, s, admin, repo);
            free(admin);
        }
        if (d)
            closedir(d);
    }
    free(p);
    p = join(gd, "modules");
    if (lstat_rel(g, p, &st) && S_ISDIR(st.st_mode))
        scan_modules(g, s, p, 0);
    free(p);
}

/* The one path a pointer file's text holds after prefix, trailing newlines removed; or NULL. */
static char *pointer_path(const char *text, size_t len, const char *prefix)
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
    char *raw = pointer_path(x->bytes, x->len, "gitdir: "), *base = NULL, *gd = NULL,
         *common = NULL, *f = NULL, *text = NULL;
    struct cfg_refs refs = {0};
    size_t len = 0;
    if (!raw)
        return;
    base = dir[0] ? xasprintf("%s/%s", g->ws, dir) : xstrdup(g->ws);
    gd = path_absolute(raw, base);
    f = xasprintf("%s/commondir", gd);
    if (read_file(f, O_NOFOLLOW, 4096, &text, &len) == 0) {
        char *c = pointer_path(text, len, "");
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
            free(config_digest(text, len, &refs));
        free(text);
        text = NULL;
    }
    str_list_free(&refs.includes); /* outside the workspace: the sandbox cannot change them */
    char *p = join(dir, ".git");
    follow_refs(g, s, &refs, p, dir, dir);
    free(p);
    cfg_refs_free(&refs);
    free(raw);
    free(base);
    free(gd);
    free(common);
    free(f);
}

/* A `.git` in the worktree folder dir: a git dir, or a file (or link) naming one. */
static void add_dotgit(struct git_guard *g, struct gg_snap *s, const char *dir, unsigned char type)
{
    char *p = join(dir, ".git");
    if (!str_list_contains(&s->dotgits, dir))
        str_list_push(&s->dotgits, dir);
    if (type == DT_DIR) {
        add_gitdir(g, s, p, dir, dir);
    } else {
        struct gg_item *x = record(g, s, p, GG_POINTER, dir, NULL);
        if (x && x->type == S_IFREG)
            ro_push(g, s, p);
        char *gd = pointer_target(g, x, dir, "gitdir: ");
        if (gd)
            add_gitdir(g, s, gd, dir, dir);
        else if (x && x->type == S_IFREG)
            outside_hooks_path(g, s, x, dir);
        free(gd);
    }
    free(p);
}

/* ---- the walk ----------------------------------------------------------------------------- */

/* What the last walk saw of a folder it listed: its identity and change stamp, whether it held
 * a `.git` (and of what type), and its sub-folders in listing order. A later walk that finds
 * the same (dev, ino, ctime) knows the entries are the same without listing them: adding,
 * removing or renaming a name changes the folder's ctime, which a command cannot put back
 * (utimes(2) sets the mtime it is given, and the ctime to now). */
struct gg_dir {
    char *name; /* in its parent; "." for the workspace */
    dev_t dev;
    ino_t ino;
    struct timespec ctime;
    bool listed;          /* the fields below are known (false: never listed, or cut by a bound) */
    bool racy;            /* its ctime was too close to the walk: list it again next time */
    bool trusted;         /* on a file system whose ctime this trusts */
    unsigned char dotgit; /* 0, or the DT_ type of its `.git` */
    struct gg_dir **subs; /* its sub-folders (not node_modules), each listed or not */
    size_t n;
};

/* A ctime too close to the walk's start (dir_stamp_settled) may be shared by a change made just
 * after the folder was listed: such a folder is listed again next time. */

static void dir_free(struct gg_dir *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        dir_free(d->subs[i]);
    free(d->subs);
    free(d->name);
    free(d);
}

static struct gg_dir *dir_stub(const char *name)
{
    struct gg_dir *d = xcalloc(1, sizeof *d);
    d->name = xstrdup(name);
    return d;
}

static bool same_stamp(const struct gg_dir *d, const struct stat *st)
{
    return S_ISDIR(st->st_mode) && d->dev == st->st_dev && d->ino == st->st_ino &&
           d->ctime.tv_sec == st->st_ctim.tv_sec && d->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static int by_dir_name(const void *a, const void *b)
{
    return strcmp((*(struct gg_dir *const *)a)->name, (*(struct gg_dir *const *)b)->name);
}

struct walk {
    struct git_guard *g;
    struct gg_snap *s;
    long long start_ns; /* CLOCK_REALTIME at the walk's start */
    size_t listed;      /* folders whose entries were read this time */
    size_t names;       /* sub-folders the new tree holds */
    char rel[(GIT_GUARD_MAX_DEPTH + 1) * (NAME_MAX + 1)]; /* the folder visited, from the top */
    size_t rel_len;
    char *buf[GIT_GUARD_MAX_DEPTH + 1]; /* getdents64's, one per depth */
};

#define DENTS_BUF (32 * 1024)

/* Sub-folders a tree holds at most (a command may make a million in one folder): past it a
 * folder's sub-folders are looked into as it is listed, and it is listed again next time. */
#define NAMES_MAX (4 * GIT_GUARD_MAX_DIRS)

static struct gg_dir *visit(struct walk *w, int pfd, struct gg_dir *old, int depth, dev_t pdev,
                            bool ptrusted);

/* Visit the sub-folder o of d (what the last walk knew of it, a stub when nothing; consumed)
 * from d's descriptor fd: what this walk saw of it, a stub when it was not looked into. */
static struct gg_dir *visit_sub(struct walk *w, int fd, const struct gg_dir *d, struct gg_dir *o,
                                int depth)
{
    if (depth >= GIT_GUARD_MAX_DEPTH || w->s->dirs >= GIT_GUARD_MAX_DIRS) {
        w->s->bound_hit = true; /* not looked into: listed in full when next reached */
        if (!o->listed)
            return o;
        struct gg_dir *stub = dir_stub(o->name);
        dir_free(o);
        return stub;
    }
    size_t len = w->rel_len, n = strlen(o->name);
    if (len)
        w->rel[w->rel_len++] = '/';
    const char *name = w->rel + w->rel_len;      /* o's name, which outlives o (consumed) */
    memcpy(w->rel + w->rel_len, o->name, n + 1); /* depth and NAME_MAX bound it */
    w->rel_len += n;
    struct gg_dir *v = visit(w, fd, o, depth + 1, d->dev, d->trusted);
    if (!v)
        v = dir_stub(name);
    w->rel_len = len;
    w->rel[len] = '\0';
    return v;
}

static void visit_subs(struct walk *w, int fd, struct gg_dir *d, int depth)
{
    for (size_t i = 0; i < d->n; i++)
        d->subs[i] = visit_sub(w, fd, d, d->subs[i], depth);
}

/* List the folder open at fd (O_RDONLY, consumed; its name is old's): its `.git` and its
 * sub-folders. getdents64 straight into a buffer of this depth: a DIR costs two fcntl more. */
static struct gg_dir *list_dir(struct walk *w, int fd, struct gg_dir *old, int depth, dev_t pdev,
                               bool ptrusted)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
        close(fd);
        dir_free(old);
        return NULL;
    }
    struct gg_dir *d = xcalloc(1, sizeof *d);
    d->name = old->name; /* taken: old is freed below */
    old->name = NULL;
    d->dev = st.st_dev;
    d->ino = st.st_ino;
    d->ctime = st.st_ctim;
    d->listed = true;
    d->trusted = st.st_dev == pdev && depth > 0 ? ptrusted : dir_stamp_fs_trusted(fd);
    d->racy = !dir_stamp_settled(&st, w->start_ns);
    w->s->dirs++;
    w->listed++;
    if (!w->buf[depth])
        w->buf[depth] = xmalloc(DENTS_BUF);
    char *buf = w->buf[depth];
    size_t cap = 0;
    for (;;) {
        ssize_t got = getdents64(fd, buf, DENTS_BUF);
        if (got <= 0) {
            if (got < 0)
                d->racy = true; /* not read to its end: listed again next time */
            break;
        }
        for (ssize_t off = 0; off < got;) {
            struct dirent64 *de = (struct dirent64 *)(buf + off);
            off += de->d_reclen;
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            unsigned char type = de->d_type;
            if (type == DT_UNKNOWN) {
                struct stat cst;
                if (fstatat(fd, de->d_name, &cst, AT_SYMLINK_NOFOLLOW) < 0)
                    continue;
                type = S_ISDIR(cst.st_mode) ? DT_DIR : S_ISLNK(cst.st_mode) ? DT_LNK : DT_REG;
            }
            if (strcmp(de->d_name, ".git") == 0) {
                d->dotgit = type;
                add_dotgit(w->g, w->s, w->rel, type);
                continue;
            }
            /* node_modules: tens of thousands of folders in a JavaScript project, alone past
             * the bound; the person's git and editors do not look for repositories there (VS
             * Code's git.repositoryScanIgnoredFolders) and packages arrive without their .git. */
            if (type != DT_DIR || strcmp(de->d_name, "node_modules") == 0)
                continue;
            if (w->names >= NAMES_MAX) {
                /* past what a walk keeps: looked into now, as it comes, and d listed again */
                d->racy = true;
                dir_free(visit_sub(w, fd, d, dir_stub(de->d_name), depth));
                continue;
            }
            if (d->n == cap) {
                cap = cap ? cap * 2 : 8;
                d->subs = xrealloc(d->subs, cap * sizeof *d->subs);
            }
            d->subs[d->n++] = dir_stub(de->d_name);
            w->names++;
        }
    }
    /* what the last walk knew of each sub-folder, by name (the rest of old is freed) */
    if (old->n && d->n) {
        qsort(old->subs, old->n, sizeof *old->subs, by_dir_name);
        for (size_t i = 0; i < d->n; i++) {
            struct gg_dir **hit =
                bsearch(&d->subs[i], old->subs, old->n, sizeof *old->subs, by_dir_name);
            if (hit && (*hit)->listed) {
                struct gg_dir *t = d->subs[i];
                d->subs[i] = *hit;
                *hit = t; /* the stub takes its place, freed with old */
            }
        }
    }
    dir_free(old); /* what was not matched by name */
    visit_subs(w, fd, d, depth);
    close(fd);
    return d;
}

/* The folder old->name in pfd: unchanged since old was listed (same dev, ino and ctime), its
 * entries are old's, and only its sub-folders are visited (a folder without any costs one
 * fstatat); else it is listed. Consumes old; NULL when it cannot be looked into. */
static struct gg_dir *visit(struct walk *w, int pfd, struct gg_dir *old, int depth, dev_t pdev,
                            bool ptrusted)
{
    struct stat st;
    if (old->listed && !old->racy && old->trusted && w->names + old->n <= NAMES_MAX) {
        if (old->n == 0) {
            if (fstatat(pfd, old->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && same_stamp(old, &st)) {
                w->s->dirs++; /* a folder without sub-folders: one fstatat */
                if (old->dotgit)
                    add_dotgit(w->g, w->s, w->rel, old->dotgit);
                return old;
            }
        } else {
            int fd = open_beneath(pfd, old->name, O_PATH | O_DIRECTORY);
            if (fd >= 0 && fstat(fd, &st) == 0 && same_stamp(old, &st)) {
                w->s->dirs++;
                w->names += old->n;
                if (old->dotgit)
                    add_dotgit(w->g, w->s, w->rel, old->dotgit);
                visit_subs(w, fd, old, depth);
                close(fd);
                return old;
            }
            if (fd >= 0)
                close(fd);
        }
    }
    int fd = open_beneath(pfd, old->name, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        int e = errno;
        dir_free(old);
        errno = e;
        return NULL;
    }
    return list_dir(w, fd, old, depth, pdev, ptrusted);
}

static int by_rel(const void *a, const void *b)
{
    const struct gg_item *x = a, *y = b;
    int c = strcmp(x->rel, y->rel);
    return c ? c : (int)x->kind - (int)y->kind;
}

/* Sorted by path, each path once (the first kind in enum order: a config over a hook). */
static void sort_unique(struct gg_snap *s)
{
    if (!s->n)
        return;
    qsort(s->items, s->n, sizeof *s->items, by_rel);
    size_t k = 0;
    for (size_t i = 1; i < s->n; i++) {
        if (strcmp(s->items[i].rel, s->items[k].rel) == 0)
            item_free(&s->items[i]);
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
static void host_configs(struct git_guard *g)
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
        char *rel = resolve_in_ws(g, "", real);
        if (rel && !str_list_contains(&g->host_in_ws, rel))
            str_list_push(&g->host_in_ws, rel);
        free(rel);
        if (read_file(real, 0, MAX_KEPT, &text, &len) == 0) {
            size_t before = g->host.includes.len;
            free(config_digest(text, len, &g->host));
            char *dir = parent_rel(real);
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
static void found_repos_one(struct git_guard *g, struct gg_snap *s, const char *rel, bool bare)
{
    if (!bare) {
        char *p = join(rel, ".git");
        struct stat st;
        if (!str_list_contains(&s->dotgits, rel) && lstat_rel(g, p, &st))
            add_dotgit(g, s, rel, S_ISDIR(st.st_mode) ? DT_DIR : DT_REG);
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
        found_repos_one(g, s, g->found.items[i], false);
    for (size_t i = 0; i < g->found_bare.len; i++)
        found_repos_one(g, s, g->found_bare.items[i], true);
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
                         record(g, s, rel, GG_CONFIG, "~ (the host's own git config)", NULL));
    }
    found_repos(g, s);
    if (quick) {
        for (size_t i = 0; i < g->snap.dotgits.len; i++) {
            const char *dir = g->snap.dotgits.items[i];
            char *p = join(dir, ".git");
            struct stat st;
            if (lstat_rel(g, p, &st))
                add_dotgit(g, s, dir, S_ISDIR(st.st_mode) ? DT_DIR : DT_REG);
            free(p);
        }
    } else {
        struct walk *w = xcalloc(1, sizeof *w);
        *w = (struct walk){.g = g, .s = s, .start_ns = dir_stamp_now_ns()};
        struct gg_dir *root = g->tree ? g->tree : dir_stub(".");
        g->tree = visit(w, g->wsfd, root, 0, 0, false);
        int r = g->tree ? 0 : errno ? -errno : -EIO;
        g->last_listed = w->listed;
        if (w->listed)
            g->tree_dirty = true;
        for (size_t i = 0; i < ARRAY_LEN(w->buf); i++)
            free(w->buf[i]);
        free(w);
        if (r < 0) {
            snap_free(s);
            return r;
        }
        /* A repository the last snapshot knew stays looked at, even past the walk's bound (a
         * command may fill the workspace with folders to push it out). */
        for (size_t i = 0; i < g->snap.dotgits.len; i++) {
            const char *dir = g->snap.dotgits.items[i];
            char *p = join(dir, ".git");
            struct stat st;
            if (!str_list_contains(&s->dotgits, dir) && lstat_rel(g, p, &st))
                add_dotgit(g, s, dir, S_ISDIR(st.st_mode) ? DT_DIR : DT_REG);
            free(p);
        }
        g->full_at = t0;
        g->full_ms = clock_mono_ms_f() - t0;
    }
    sort_unique(s);
    g->last_ms = clock_mono_ms_f() - t0;
    g->last_dirs = s->dirs;
    return 0;
}

static int snapshot(struct git_guard *g, struct gg_snap *s, bool quick)
{
    parent_cache_set(g->pc, true);
    int r = snapshot_in(g, s, quick);
    parent_cache_set(g->pc, false);
    return r;
}

/* ---- the walk's tree between runs --------------------------------------------------------- */

/* Every `cordon run` is a new process: without this its first walk lists every folder. The
 * tree the last run's check left is kept in cordon's state directory (which no sandbox can see
 * or write: protect_own_dirs) and read back by the next guard of the same tree. All it is
 * trusted for is what the tree in memory is: "this folder's entries were these when it had this
 * (dev, ino, ctime)"; a folder changed since is listed, every `.git` found is read afresh, and
 * anything odd in the file (a field out of bounds, another device or root inode, another
 * version, a size past the cap) makes the walk a full one.
 * Layout, in this host's byte order (the file never leaves it):
 *   header: "cordon git walk\n", u32 version, u32 records, u64 dev, u64 the root's inode;
 *   records, depth first (a folder, then its sub-folders' records): u64 ino, i64 ctime
 *   seconds, u32 ctime nanoseconds, u32 sub-folders, u8 flags, u8 the `.git`'s DT_ type,
 *   u16 name length, the name. */
#define CACHE_MAGIC "cordon git walk\n"
#define CACHE_VERSION 1u
#define CACHE_HEAD (16 + 4 + 4 + 8 + 8)
#define CACHE_REC (8 + 8 + 4 + 4 + 1 + 1 + 2)
#define CACHE_MAX_RECS (NAMES_MAX + 1) /* every name a tree holds, and its root */
#define CACHE_MAX (CACHE_HEAD + (size_t)CACHE_MAX_RECS * (CACHE_REC + NAME_MAX))
#define CACHE_LISTED 1u
#define CACHE_RACY 2u

struct cache_out {
    char *buf;
    size_t len, cap;
    uint32_t recs;
    dev_t dev;
};

static void out_put(struct cache_out *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2;
        o->buf = xrealloc(o->buf, o->cap);
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

/* d and what is below it; a folder of another file system or one whose ctime is not trusted
 * goes in as a name only (listed when next reached). */
static void cache_put(struct cache_out *o, const struct gg_dir *d)
{
    bool keep = d->listed && d->trusted && d->dev == o->dev;
    uint64_t ino = keep ? (uint64_t)d->ino : 0;
    int64_t sec = keep ? (int64_t)d->ctime.tv_sec : 0;
    uint32_t nsec = keep ? (uint32_t)d->ctime.tv_nsec : 0, subs = keep ? (uint32_t)d->n : 0;
    uint8_t flags = keep ? (uint8_t)(CACHE_LISTED | (d->racy ? CACHE_RACY : 0)) : 0;
    uint8_t dotgit = keep ? d->dotgit : 0;
    uint16_t nlen = (uint16_t)strlen(d->name);
    out_put(o, &ino, 8);
    out_put(o, &sec, 8);
    out_put(o, &nsec, 4);
    out_put(o, &subs, 4);
    out_put(o, &flags, 1);
    out_put(o, &dotgit, 1);
    out_put(o, &nlen, 2);
    out_put(o, d->name, nlen);
    o->recs++;
    for (size_t i = 0; i < subs; i++)
        cache_put(o, d->subs[i]);
}

/* Write the tree to g->cache: a new file beside it (O_EXCL, 0600), renamed over it, so that a
 * reader sees a whole file, the last writer's. A failure costs the next run a full walk only:
 * it is not said. */
static void cache_save(struct git_guard *g)
{
    struct stat st;
    if (!g->cache || !g->tree || !g->tree_dirty || fstat(g->wsfd, &st) < 0 ||
        !dir_stamp_fs_trusted(g->wsfd))
        return;
    struct cache_out o = {.dev = st.st_dev};
    uint32_t version = CACHE_VERSION, recs = 0;
    uint64_t dev = (uint64_t)st.st_dev, ino = (uint64_t)st.st_ino;
    out_put(&o, CACHE_MAGIC, 16);
    out_put(&o, &version, 4);
    out_put(&o, &recs, 4); /* filled in below */
    out_put(&o, &dev, 8);
    out_put(&o, &ino, 8);
    cache_put(&o, g->tree);
    memcpy(o.buf + 20, &o.recs, 4);
    if (o.recs <= CACHE_MAX_RECS && write_private_file(g->cache, o.buf, o.len) == 0)
        g->tree_dirty = false;
    free(o.buf);
}

struct cache_in {
    const char *p, *end;
    uint32_t left; /* records not read yet */
    dev_t dev;
};

static bool in_get(struct cache_in *in, void *out, size_t n)
{
    if ((size_t)(in->end - in->p) < n)
        return false;
    memcpy(out, in->p, n);
    in->p += n;
    return true;
}

/* One record and those below it, each field checked; NULL when anything is off. */
static struct gg_dir *cache_get(struct cache_in *in, int depth)
{
    uint64_t ino;
    int64_t sec;
    uint32_t nsec, subs;
    uint8_t flags, dotgit;
    uint16_t nlen;
    if (in->left == 0 || depth > GIT_GUARD_MAX_DEPTH + 1 || !in_get(in, &ino, 8) ||
        !in_get(in, &sec, 8) || !in_get(in, &nsec, 4) || !in_get(in, &subs, 4) ||
        !in_get(in, &flags, 1) || !in_get(in, &dotgit, 1) || !in_get(in, &nlen, 2))
        return NULL;
    in->left--;
    if (nlen == 0 || nlen > NAME_MAX || (size_t)(in->end - in->p) < nlen ||
        memchr(in->p, '/', nlen) || memchr(in->p, '\0', nlen) || nsec >= 1000000000u ||
        (flags & ~(CACHE_LISTED | CACHE_RACY)) || dotgit > DT_WHT || subs > in->left ||
        (!(flags & CACHE_LISTED) && (subs || dotgit || ino || sec || nsec)))
        return NULL;
    bool dot = nlen == 1 && in->p[0] == '.', dotdot = nlen == 2 && memcmp(in->p, "..", 2) == 0;
    if (dotdot || dot != (depth == 0)) /* "." is the root's name, and only the root's */
        return NULL;
    struct gg_dir *d = xcalloc(1, sizeof *d);
    d->name = xasprintf("%.*s", (int)nlen, in->p);
    in->p += nlen;
    if (flags & CACHE_LISTED) {
        d->listed = d->trusted = true; /* the root's file system, trusted (cache_load) */
        d->racy = flags & CACHE_RACY;
        d->dev = in->dev;
        d->ino = (ino_t)ino;
        d->ctime = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = (long)nsec};
        d->dotgit = dotgit;
    }
    if (subs)
        d->subs = xcalloc(subs, sizeof *d->subs);
    for (uint32_t i = 0; i < subs; i++) {
        if (!(d->subs[d->n] = cache_get(in, depth + 1))) {
            dir_free(d);
            return NULL;
        }
        d->n++;
    }
    return d;
}

/* The tree g->cache holds for this workspace, or NULL (a full walk) when there is none, it
 * cannot be read whole, or anything in it does not fit. */
static struct gg_dir *cache_load(const struct git_guard *g)
{
    struct stat ws;
    char *buf = NULL;
    size_t len = 0;
    struct gg_dir *root = NULL;
    if (!g->cache || fstat(g->wsfd, &ws) < 0 || !dir_stamp_fs_trusted(g->wsfd) ||
        read_private_file(g->cache, CACHE_MAX, &buf, &len) < 0)
        return NULL;
    struct cache_in in = {.p = buf, .end = buf + len, .dev = ws.st_dev};
    char magic[16];
    uint32_t version, recs;
    uint64_t dev, ino;
    if (!in_get(&in, magic, 16) || memcmp(magic, CACHE_MAGIC, 16) != 0 ||
        !in_get(&in, &version, 4) || version != CACHE_VERSION || !in_get(&in, &recs, 4) ||
        recs == 0 || recs > CACHE_MAX_RECS || !in_get(&in, &dev, 8) || dev != (uint64_t)ws.st_dev ||
        !in_get(&in, &ino, 8) || ino != (uint64_t)ws.st_ino)
        goto out;
    in.left = recs;
    root = cache_get(&in, 0);
    if (root && (in.left || in.p != in.end || !root->listed || root->ino != ws.st_ino)) {
        dir_free(root); /* records left over, or a root of another inode */
        root = NULL;
    }
out:
    free(buf);
    return root;
}

/* ---- undoing ------------------------------------------------------------------------------ */

/* One line for a difference (counted in g->diffs even when a later round repeats it). */
CORDON_PRINTF(4, 5)
static void say(struct git_guard *g, struct str_list *lines, const struct gg_item *x,
                const char *fmt, ...)
{
    g->diffs++;
    char what[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char *line = xasprintf("git: repository %s: %s: %s", x->repo, x->rel, what);
    if (str_list_contains(lines, line)) /* the same failure in a later round */
        free(line);
    else
        str_list_push_owned(lines, line);
}

/* Rename rel out of git's way (NAME.cordon-refused, or .2 ... .9 when taken), exec bits off
 * for a regular file. The new name, or NULL. */
/* Rename from (a name in the folder pfd, rel's) to rel's name with REFUSED, or REFUSED.N when
 * that is taken, its exec bits off first: the new name (malloc'd), or NULL. */
static char *neutralise_at(struct git_guard *g, int pfd, const char *from, const char *rel)
{
    const char *slash = strrchr(rel, '/');
    const char *base = slash ? slash + 1 : rel;
    int fd = openat(pfd, from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        (void)fchmod(fd, st.st_mode & 07666);
    if (fd >= 0)
        close(fd);
    char *to = NULL;
    for (int i = 1; i < 10; i++) {
        free(to);
        to = i == 1 ? xasprintf("%s" REFUSED, base) : xasprintf("%s" REFUSED ".%d", base, i);
        if (renameat2(pfd, from, pfd, to, RENAME_NOREPLACE) == 0) {
            char *dir = parent_rel(rel);
            str_list_push_owned(&g->made, join(dir, to));
            free(dir);
            break;
        }
        if (errno != EEXIST) {
            free(to);
            to = NULL;
            break;
        }
        if (i == 9) {
            free(to);
            to = NULL;
        }
    }
    return to;
}

static char *neutralise(struct git_guard *g, const char *rel)
{
    const char *base;
    int pfd = open_parent(g, rel, &base);
    if (pfd < 0)
        return NULL;
    char *to = neutralise_at(g, pfd, base, rel);
    close(pfd);
    return to;
}

/* Put x back as it was: its bytes (and mode), or its link. 0 or -errno. A folder in its place
 * is renamed away first: *away (when not NULL) gets its new name. */
static int restore(struct git_guard *g, const struct gg_item *x, char **away_out)
{
    const char *base;
    if (x->type != S_IFLNK && (x->type != S_IFREG || !x->bytes))
        return -EOPNOTSUPP;
    int pfd = open_parent(g, x->rel, &base);
    if (pfd < 0)
        return pfd;
    struct stat st;
    int r = 0;
    if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        close(pfd);
        char *away = neutralise(g, x->rel); /* a folder where the file was */
        if (!away)
            return -EEXIST;
        if (away_out)
            *away_out = away;
        else
            free(away);
        if ((pfd = open_parent(g, x->rel, &base)) < 0)
            return pfd;
    }
    char *tmp = xasprintf(".%s.cordon-new", base);
    (void)unlinkat(pfd, tmp, 0);
    if (x->type == S_IFLNK) {
        if (symlinkat(x->bytes, pfd, tmp) < 0)
            r = -errno;
    } else {
        int fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            r = -errno;
        if (r == 0)
            r = write_all(fd, x->bytes, x->len);
        if (r == 0 && fchmod(fd, x->perm) < 0)
            r = -errno;
        if (fd >= 0)
            close(fd);
    }
    if (r == 0 && renameat(pfd, tmp, pfd, base) < 0)
        r = -errno;
    if (r < 0)
        (void)unlinkat(pfd, tmp, 0);
    free(tmp);
    close(pfd);
    return r;
}

/* A new config whose guarded entries (entry_guarded) are commented out; NULL when that leaves
 * it with one or unparseable (the caller renames it then). */
static char *config_defused(const struct gg_item *x, size_t *outlen)
{
    struct git_config c = {0};
    char err[256];
    if (!x->bytes || git_config_parse(x->bytes, x->len, &c, err, sizeof err) < 0)
        return NULL;
    size_t n_lines = 1;
    for (size_t i = 0; i < x->len; i++)
        n_lines += x->bytes[i] == '\n';
    bool *off = xcalloc(n_lines + 1, sizeof *off);
    for (size_t i = 0; i < c.len; i++)
        if (entry_guarded(&c, &c.items[i]) && c.items[i].line > 0 &&
            (size_t)c.items[i].line <= n_lines)
            off[c.items[i].line - 1] = true;
    git_config_free(&c);
    static const char mark[] = "# cordon-refused: ";
    char *out = xmalloc(x->len + n_lines * (sizeof mark - 1) + 1);
    size_t o = 0, line = 0;
    for (size_t i = 0; i < x->len; i++) {
        if ((i == 0 || x->bytes[i - 1] == '\n') && off[line]) {
            memcpy(out + o, mark, sizeof mark - 1);
            o += sizeof mark - 1;
        }
        out[o++] = x->bytes[i];
        if (x->bytes[i] == '\n')
            line++;
    }
    out[o] = '\0';
    free(off);
    char *d = config_digest(out, o, NULL);
    bool clean = d && !d[0];
    free(d);
    if (!clean) {
        free(out);
        return NULL;
    }
    *outlen = o;
    return out;
}

static int write_over(struct git_guard *g, const struct gg_item *x, const char *bytes, size_t len)
{
    struct gg_item y = *x;
    y.bytes = (char *)bytes;
    y.len = len;
    y.type = S_IFREG;
    return restore(g, &y, NULL);
}

/* The entries of digest a that are not in b, at most max of them, for a line. */
static void digest_minus(const char *a, const char *b, char *out, size_t outlen)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = a ? a : ""; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        bool in_b = false;
        for (const char *q = b ? b : ""; *q && !in_b;) {
            const char *nq = strchr(q, '\n');
            size_t m = nq ? (size_t)(nq - q) : strlen(q);
            in_b = m == n && memcmp(p, q, n) == 0;
            q += m + (nq ? 1 : 0);
        }
        if (!in_b && o + 4 < outlen) {
            int w =
                snprintf(out + o, outlen - o, "%s%.*s", o ? ", " : "", (int)(n > 80 ? 80 : n), p);
            o += w > 0 ? (size_t)w : 0;
            if (o >= outlen)
                o = outlen - 1;
        }
        p += n + (nl ? 1 : 0);
    }
    for (size_t i = 0; i < o; i++)
        if ((unsigned char)out[i] < 0x20)
            out[i] = '?';
}

/* Whether the "key=value" line (n bytes at p) is one of digest d's lines. */
static bool digest_has(const char *d, const char *p, size_t n)
{
    for (const char *q = d; *q;) {
        const char *nq = strchr(q, '\n');
        size_t m = nq ? (size_t)(nq - q) : strlen(q);
        if (m == n && memcmp(p, q, n) == 0)
            return true;
        q += m + (nq ? 1 : 0);
    }
    return false;
}

/* A config's guarded entries unchanged in what matters: nothing added or changed, and no
 * code-running entry removed. Removing another refused entry (the person's own alias, say)
 * runs nothing, and git_publish writes such removals for a command. */
static bool digest_same(const char *o, const char *n)
{
    for (const char *p = n; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (!digest_has(o, p, len))
            return false;
        p += len + (nl ? 1 : 0);
    }
    for (const char *p = o; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (!digest_has(n, p, len)) {
            char *line = xasprintf("%.*s", (int)len, p);
            /* the first '=' ends the key (one in a subsection cuts it short: then the
             * removal is let be, and a removal runs nothing either) */
            char *eq = strchr(line, '=');
            if (eq)
                *eq = '\0';
            bool runs = git_config_key_runs_code(line, eq ? eq + 1 : NULL) != NULL;
            free(line);
            if (runs)
                return false;
        }
        p += len + (nl ? 1 : 0);
    }
    return true;
}

static bool same(const struct gg_item *o, const struct gg_item *n)
{
    if (o->type != n->type)
        return false;
    if (o->kind == GG_CONFIG && o->type == S_IFREG && o->digest && n->digest)
        return digest_same(o->digest, n->digest);
    if (o->type == S_IFREG) {
        if (o->too_big || n->too_big)
            return o->too_big == n->too_big && o->size == n->size && o->ino == n->ino &&
                   o->mtime.tv_sec == n->mtime.tv_sec && o->mtime.tv_nsec == n->mtime.tv_nsec;
        if ((o->kind == GG_HOOK || o->kind == GG_PROGRAM) && (o->perm & 0111) != (n->perm & 0111))
            return false;
        return o->len == n->len && memcmp(o->bytes, n->bytes, o->len) == 0;
    }
    if (o->type == S_IFLNK)
        return strcmp(o->bytes, n->bytes) == 0;
    return true; /* a folder, a fifo: nothing git reads as code by itself */
}

static void say_neutralised(struct git_guard *g, struct str_list *lines, const struct gg_item *x,
                            const char *what)
{
    struct stat st;
    if (!lstat_rel(g, x->rel, &st))
        return; /* gone with its folder, which an earlier line named */
    char *to = neutralise(g, x->rel);
    if (to)
        say(g, lines, x, "%s: renamed to %s (exec bits off), so that git does not run it", what,
            to);
    else
        say(g, lines, x, "%s: could NOT be renamed away; look at it before running git there",
            what);
    free(to);
}

/* A new name in a git dir that was there (a planted commondir, which no mount can refuse: it was
 * not there to be held) is taken for the rest of the run: an empty file, read-only (so that no
 * command without capabilities can open it for writing), made under a name of its own and held
 * read-only inside the sandbox, then swapped with the plant in one step (RENAME_EXCHANGE: the
 * hold moves with its file, and the name is never free for a command to plant again), and the
 * plant, now under the stand-in's first name, renamed away as any plant is. Re-planting it
 * inside then fails (EROFS, or EBUSY for a rename or unlink). The host's git refuses that
 * repository (an empty commondir) until the command ends, when it is removed
 * (git_guard_free); one line says so. Not for a `.git` file (a folder, not a git dir), not at
 * the last check, not without a holder: false then, and the caller neutralises the plant. */
static bool stand_in(struct git_guard *g, struct str_list *lines, const struct gg_item *x,
                     const char *what)
{
    const char *base = strrchr(x->rel, '/');
    base = base ? base + 1 : x->rel;
    if (!g->hold || g->last || x->kind != GG_POINTER || strcmp(base, ".git") == 0 ||
        str_list_contains(&g->stand_ins, x->rel))
        return false;
    char *tmp = xasprintf("%s.cordon-stand-in", x->rel);
    const char *tbase;
    int pfd = open_parent(g, tmp, &tbase), fd = -1, r = -1;
    bool swapped = false;
    if (pfd >= 0)
        fd = openat(pfd, tbase, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
    if (fd >= 0) {
        close(fd);
        r = g->hold(g->hold_ctx, tmp);
        if (r == 0) {
            swapped = renameat2(pfd, tbase, pfd, base, RENAME_EXCHANGE) == 0;
            /* the plant gone meanwhile: the stand-in takes the free name */
            r = swapped || renameat2(pfd, tbase, pfd, base, RENAME_NOREPLACE) == 0 ? 0 : -errno;
        }
        if (r < 0)
            (void)unlinkat(pfd, tbase, 0);
    }
    if (r == 0 && swapped) {
        char *to = neutralise_at(g, pfd, tbase, x->rel);
        if (to)
            say(g, lines, x, "%s: renamed to %s (exec bits off), so that git does not run it", what,
                to);
        else
            say(g, lines, x,
                "%s: could NOT be renamed away (it is %s); look at it before running "
                "git there",
                what, tbase);
        free(to);
    }
    if (pfd >= 0)
        close_parent(g, pfd);
    free(tmp);
    if (r < 0)
        return false;
    str_list_push(&g->stand_ins, x->rel);
    say(g, lines, x,
        "an empty %s is held in its place until the command ends (git on the host refuses "
        "this repository until then)",
        base);
    return true;
}

static void stand_ins_remove(struct git_guard *g)
{
    for (size_t i = 0; i < g->stand_ins.len; i++) {
        const char *base;
        int pfd = open_parent(g, g->stand_ins.items[i], &base);
        struct stat st;
        if (pfd >= 0 && fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_size == 0)
            (void)unlinkat(pfd, base, 0);
        if (pfd >= 0)
            close(pfd);
    }
    str_list_free(&g->stand_ins);
}

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

/* A `.git` file at rel (workspace-relative) whose text names target, outside the workspace: is
 * it one `git worktree add` made in a linked-worktree workspace, naming a new admin folder
 * own_common/worktrees/NAME (no link on the way) whose gitdir names this file back? */
static bool own_admin_gitfile(const struct git_guard *g, const char *rel, const char *text,
                              size_t len)
{
    static const char prefix[] = "gitdir: ";
    if (!g->own_common || !text || strlen(text) != len || strncmp(text, prefix, 8) != 0)
        return false;
    char *target = xasprintf("%.*s", (int)(len - 8), text + 8);
    size_t n = strlen(target);
    while (n && (target[n - 1] == '\n' || target[n - 1] == '\r'))
        target[--n] = '\0';
    char *wts = xasprintf("%s/worktrees/", g->own_common);
    const char *name = target + strlen(wts);
    bool ok = false;
    if (strncmp(target, wts, strlen(wts)) == 0 && name[0] && !strchr(name, '/') &&
        strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        int cfd = (int)syscall(SYS_openat2, AT_FDCWD, g->own_common, &how, sizeof how);
        char *admin_gitdir = xasprintf("worktrees/%s/gitdir", name);
        int fd = cfd >= 0 ? open_beneath(cfd, admin_gitdir, O_RDONLY | O_NOFOLLOW) : -1;
        char back[PATH_MAX + 2];
        ssize_t got = fd >= 0 ? read(fd, back, sizeof back - 1) : -1;
        if (got > 0) {
            back[got] = '\0';
            while (got && (back[got - 1] == '\n' || back[got - 1] == '\r'))
                back[--got] = '\0';
            char *self = rel[0] ? xasprintf("%s/%s", g->ws, rel) : xstrdup(g->ws);
            ok = strcmp(back, self) == 0;
            free(self);
        }
        if (fd >= 0)
            close(fd);
        if (cfd >= 0)
            close(cfd);
        free(admin_gitdir);
    }
    free(wts);
    free(target);
    return ok;
}

/* Is a new pointer file one git itself writes and harmless: a `.git` file or a worktree's
 * commondir naming a git dir inside the workspace (which the guard then looks into), or a
 * worktree's gitdir (the worktree's place, which git reads no program from)? */
static bool new_pointer_ok(struct git_guard *g, const struct gg_item *x)
{
    if (x->type != S_IFREG)
        return false;
    const char *base = strrchr(x->rel, '/');
    base = base ? base + 1 : x->rel;
    char *dir = parent_rel(x->rel);
    bool ok = false;
    if (strcmp(base, "gitdir") == 0) {
        ok = true;
    } else if (strcmp(base, ".git") == 0) {
        char *t = pointer_target(g, x, dir, "gitdir: ");
        int fd = t ? open_beneath(g->wsfd, t, O_PATH | O_DIRECTORY) : -1;
        ok = fd >= 0 || (!t && own_admin_gitfile(g, x->rel, x->bytes, x->len));
        if (fd >= 0)
            close(fd);
        free(t);
    } else if (strcmp(base, "commondir") == 0) {
        /* G/worktrees/NAME/commondir naming G, as `git worktree add` writes it */
        char *t = pointer_target(g, x, dir, "");
        char *up = parent_rel(dir), *upup = parent_rel(up);
        const char *wt = strrchr(up, '/');
        ok = t && strcmp(wt ? wt + 1 : up, "worktrees") == 0 && strcmp(t, upup) == 0;
        free(t);
        free(up);
        free(upup);
    }
    free(dir);
    return ok;
}

static const char *kind_name(const struct gg_item *x)
{
    switch (x->kind) {
    case GG_CONFIG:
        return "config";
    case GG_HOOK:
        return "hook";
    case GG_HOOKS_LINK:
        return "hooks folder link";
    case GG_PROGRAM:
        return "program a config entry runs";
    case GG_POINTER:
        break;
    }
    return "pointer file";
}

/* rel is (or is inside) what this check renamed something to. */
static bool made_here(const struct git_guard *g, const char *rel)
{
    for (size_t i = 0; i < g->made.len; i++) {
        size_t n = strlen(g->made.items[i]);
        if (strncmp(rel, g->made.items[i], n) == 0 && (rel[n] == '\0' || rel[n] == '/'))
            return true;
    }
    return false;
}

static void undo_new(struct git_guard *g, struct str_list *lines, const struct gg_item *x)
{
    if (made_here(g, x->rel))
        return;
    char what[512];
    if (x->kind == GG_CONFIG) {
        if (x->type == S_IFREG && x->digest && !x->digest[0])
            return; /* a new repository's config that runs nothing */
        size_t len = 0;
        char *fixed = x->type == S_IFREG ? config_defused(x, &len) : NULL;
        if (fixed) {
            char keys[512];
            digest_minus(x->digest, "", keys, sizeof keys);
            int r = write_over(g, x, fixed, len);
            free(fixed);
            if (r == 0) {
                say(g, lines, x,
                    "a new config with entries refused for a command (%s): those lines "
                    "commented out (# cordon-refused)",
                    keys);
                return;
            }
        }
        snprintf(what, sizeof what, "a new config git would run code from (%s)",
                 x->type != S_IFREG ? "not a regular file"
                 : x->digest        ? "entries refused for a command"
                                    : "it does not parse");
        say_neutralised(g, lines, x, what);
        return;
    }
    if (x->kind == GG_POINTER && new_pointer_ok(g, x))
        return;
    if (str_list_contains(&g->stand_ins, x->rel) && x->type == S_IFREG && x->size == 0)
        return; /* this guard's own, still empty */
    snprintf(what, sizeof what, "a new %s%s", kind_name(x),
             x->type == S_IFLNK ? " (a symbolic link)" : "");
    if (!stand_in(g, lines, x, what))
        say_neutralised(g, lines, x, what);
}

static void undo_changed(struct git_guard *g, struct str_list *lines, const struct gg_item *o,
                         const struct gg_item *n)
{
    char what[1536], keys[1024] = "";
    /* A pointer git itself writes twice while it makes a repository (`git submodule add` makes
     * the `.git` file absolute, then relative; `git worktree add` the admin folder's gitdir):
     * what an existing repository holds is read-only inside, so a change is one of a repository
     * made during the run, judged as a new one would be. */
    if (o->kind == GG_POINTER && n->kind == GG_POINTER && new_pointer_ok(g, n))
        return;
    if (o->kind == GG_CONFIG && o->digest && n->digest && o->type == n->type) {
        char added[256], gone[256];
        digest_minus(n->digest, o->digest, added, sizeof added);
        digest_minus(o->digest, n->digest, gone, sizeof gone);
        snprintf(keys, sizeof keys, " (refused entries%s%s%s%s)", added[0] ? " set: " : "", added,
                 gone[0] ? " removed: " : "", gone);
    }
    snprintf(what, sizeof what, "%s changed by the command%s", kind_name(o), keys);
    char *away = NULL;
    int r = restore(g, o, &away);
    if (r == 0) {
        say(g, lines, o, "%s: its previous content restored%s%s%s", what,
            away ? " (the folder there renamed to " : "", away ? away : "", away ? ")" : "");
        free(away);
        return;
    }
    free(away);
    if (n->type == S_IFDIR && o->type != S_IFDIR) /* restore moved it away and failed after */
        snprintf(what + strlen(what), sizeof what - strlen(what), " (became a folder)");
    say_neutralised(g, lines, n, what);
}

static bool folder_made_during_run(const struct git_guard *g, const char *rel);
static const struct gg_item *find_item(const struct gg_snap *s, const char *rel);

/* Whether rel lies in a linked worktree's admin folder (open as pfd) whose worktree is gone, by
 * the gitdir the snapshot kept: `git worktree prune` removes such a folder a file at a time,
 * its gitdir among them (worktree_admin.h). */
static bool in_gone_admin(const struct git_guard *g, int pfd, const char *rel)
{
    char *admin = parent_rel(rel);
    bool gone = false;
    if (worktree_admin_rel(admin)) {
        char *gitdir = join(admin, "gitdir");
        const struct gg_item *x = find_item(&g->snap, gitdir);
        gone = x && x->type == S_IFREG && x->bytes &&
               worktree_admin_points_nowhere(pfd, x->bytes, x->len,
                                             g->since_ns ? g->since_ns : LLONG_MAX);
        free(gitdir);
    }
    free(admin);
    return gone;
}

/* o is not in the new snapshot: removed, or not looked at this time (its hooks folder is no
 * longer the one git uses, which a line of its own undoes). */
static void undo_removed(struct git_guard *g, struct str_list *lines, const struct gg_item *o)
{
    const char *base;
    int pfd = open_parent(g, o->rel, &base);
    if (pfd < 0)
        return; /* its repository is gone with it: nothing to run */
    bool pruned = in_gone_admin(g, pfd, o->rel);
    close(pfd);
    if (pruned)
        return; /* git's own prune, part way: nothing of a live worktree to put back */
    struct gg_snap here = {0};
    struct gg_item *n = record(g, &here, o->rel, o->kind, o->repo, NULL);
    bool present = n != NULL;
    if (present && !same(o, n))
        undo_changed(g, lines, o, n);
    snap_free(&here);
    if (present)
        return;
    /* A repository the command made holds nothing of the person's to put back: its held names
     * are removed from the host side when a command removes it (hold_unlink.c), and putting
     * one back in the middle of that rm -rf would leave the folder behind. */
    if (str_list_contains(&g->made_repos, o->repo) || folder_made_during_run(g, o->rel))
        return;
    char *away = NULL;
    int r = restore(g, o, &away);
    if (r == 0)
        say(g, lines, o, "%s removed by the command: restored%s%s%s", kind_name(o),
            away ? " (the folder there renamed to " : "", away ? away : "", away ? ")" : "");
    free(away);
    if (r < 0 && r != -EOPNOTSUPP)
        say(g, lines, o, "%s removed by the command: could not be restored (%s)", kind_name(o),
            strerror(-r));
}

/* ---- the interface ------------------------------------------------------------------------ */

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
    host_configs(g);
    if (g->wsfd >= 0)
        g->tree = cache_load(g);
    if (g->wsfd < 0 || snapshot(g, &g->snap, false) < 0) {
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

/* ---- the host's view: git rev-parse --git-common-dir --git-path hooks ------------------- */

static const struct gg_item *find_item(const struct gg_snap *s, const char *rel)
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
    char *dotgit = join(dir, ".git"), *gd = NULL, *common = NULL, *hp = NULL, *p;
    const struct gg_item *x = find_item(s, dotgit);
    if (x && x->type == S_IFREG) {
        gd = pointer_target(g, x, dir, "gitdir: ");
        if (!gd)
            gd = pointer_path(x->bytes, x->len, "gitdir: ");
    }
    if (!gd)
        gd = xstrdup(dotgit);
    p = join(gd, "commondir");
    const struct gg_item *cd = find_item(s, p);
    common = pointer_target(g, cd, gd, "");
    if (!common && cd && cd->type == S_IFREG) /* out of the workspace: as it says */
        common = pointer_path(cd->bytes, cd->len, "");
    free(p);
    if (!common)
        common = xstrdup(gd);
    static const char *const configs[2][2] = {{"c", "config"}, {"g", "config.worktree"}};
    for (int i = 0; i < 2; i++) {
        p = join(configs[i][0][0] == 'c' ? common : gd, configs[i][1]);
        char *v = digest_hooks_path(find_item(s, p));
        if (v) {
            free(hp);
            hp = v;
        }
        free(p);
    }
    char *hooks = hp ? hp : join(common, "hooks");
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
static void say_views(const struct git_guard *g, const struct gg_snap *now, struct str_list *lines)
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

/* Was rel's folder made during the run (its birth time at or after the sandbox's start)? */
static bool folder_made_during_run(const struct git_guard *g, const char *rel)
{
    if (!g->since_ns)
        return false;
    char *dir = parent_rel(rel);
    struct statx sx;
    bool made = statx(g->wsfd, dir[0] ? dir : ".", AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) == 0 &&
                (sx.stx_mask & STATX_BTIME) &&
                (long long)sx.stx_btime.tv_sec * 1000000000LL + sx.stx_btime.tv_nsec >= g->since_ns;
    free(dir);
    return made;
}

/* While commands run, a pointer file git has not finished (`git submodule add` writes the
 * `.git` file twice, `git worktree add` its admin folder's files one by one, each created
 * empty and then written) in a folder made during the run (its birth time after the
 * sandbox's start) is judged only when it looks like one git writes, or at the command's end
 * (g->last). A new name in a folder that was there (`.git/commondir`) is judged at once. */
static bool defer_pointer(const struct git_guard *g, const struct gg_item *x)
{
    return !g->last && x->kind == GG_POINTER && !new_pointer_ok((struct git_guard *)g, x) &&
           folder_made_during_run(g, x->rel);
}

/* Compare now with the snapshot and undo each difference: the number of lines said. A deferred
 * pointer stays what the snapshot said (new: left out of now; changed: the old item kept). */
static int undo_differences(struct git_guard *g, struct gg_snap *now, struct str_list *lines)
{
    int before = g->diffs;
    struct gg_snap *o = &g->snap;
    size_t i = 0, k = 0;
    g->n_deferred = 0;
    while (i < o->n || k < now->n) {
        int c = i == o->n ? 1 : k == now->n ? -1 : strcmp(o->items[i].rel, now->items[k].rel);
        if (c < 0) {
            /* a pointer of a repository made during the run, removed (`git worktree remove`
             * deletes its admin folder a file at a time): git's own undoing, nothing to put
             * back */
            if (!(o->items[i].kind == GG_POINTER && folder_made_during_run(g, o->items[i].rel)))
                undo_removed(g, lines, &o->items[i]);
            i++;
        } else if (c > 0) {
            struct gg_item *x = &now->items[k++];
            if (defer_pointer(g, x)) {
                item_free(x);
                x->rel = NULL; /* dropped from now below */
                g->n_deferred++;
            } else {
                undo_new(g, lines, x);
            }
        } else {
            if (!same(&o->items[i], &now->items[k])) {
                if (defer_pointer(g, &now->items[k])) {
                    struct gg_item t = o->items[i];
                    o->items[i] = now->items[k];
                    now->items[k] = t;
                    g->n_deferred++;
                } else {
                    undo_changed(g, lines, &o->items[i], &now->items[k]);
                }
            }
            i++, k++;
        }
    }
    if (g->n_deferred) {
        size_t m = 0;
        for (size_t j = 0; j < now->n; j++)
            if (now->items[j].rel)
                now->items[m++] = now->items[j];
        now->n = m;
    }
    return g->diffs - before;
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
        int r = snapshot(g, &now, quick);
        if (r < 0) {
            str_list_push_owned(lines, xasprintf("git: cannot look at the workspace's "
                                                 "repositories (%s): not checked",
                                                 strerror(-r)));
            return found ? found : r;
        }
        ms += g->last_ms;
        if (round == 0) {
            say_bounds(g, &now, lines);
            say_views(g, &now, lines);
        }
        n = undo_differences(g, &now, lines);
        found += n;
        if (n == 0)
            break;
        snap_free(&now);
    }
    g->last_ms = ms;
    cache_save(g); /* the tree the last walk saw (when it changed), for the next run's first */
    if (n) {
        str_list_push_owned(lines, xasprintf("git: the repositories still differ after %d "
                                             "rounds of undoing: checked again next time",
                                             MAX_ROUNDS));
        return found;
    }
    snap_free(&g->snap);
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
    parent_cache_set(g->pc, true);
    found_repos_one(g, &add, rel, bare);
    parent_cache_set(g->pc, false);
    struct gg_snap known = g->snap; /* sorted: what it already holds stays as it was */
    for (size_t i = 0; i < add.n; i++) {
        if (find_item(&known, add.items[i].rel) || changed_during_run(g, &add.items[i])) {
            item_free(&add.items[i]);
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
    snap_free(&add);
    sort_unique(&g->snap);
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
    stand_ins_remove(g);
    snap_free(&g->snap);
    dir_free(g->tree);
    parent_cache_set(g->pc, false);
    free(g->pc);
    if (g->wsfd >= 0)
        close(g->wsfd);
    str_list_free(&g->made);
    free(g->own_common);
    str_list_free(&g->found);
    str_list_free(&g->found_bare);
    str_list_free(&g->made_repos);
    cfg_refs_free(&g->host);
    str_list_free(&g->host_in_ws);
    free(g->home);
    free(g->cache);
    free(g->ws);
    free(g);
}
