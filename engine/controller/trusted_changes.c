/* trusted_changes.c — see trusted_changes.h. */
#include "controller/trusted_changes.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "base/name_glob.h"
#include "base/visible.h"
#include "controller/host_trusted.h"

/* Where a new executable or a link out is looked for besides the workspace's top: the
 * conventional folders of a project's own tools (host_trusted.c's table names the rest). */
static const char *const tool_dirs[] = {"bin", "scripts", "tools"};
/* How many folders below where a pattern's trailing `*` starts are looked at (`.claude/` then `*`:
 * `.claude/commands/x.md` and `.claude/a/b/x.md`, not deeper). */
enum { STAR_FOLDERS = 2 };

struct entry {
    char *path;
    mode_t mode;
    ino_t ino;
    off_t size;
    struct timespec ctime;
    char *link; /* a link's target, or NULL */
};

struct entries {
    struct entry *items;
    size_t len, cap;
};

struct trusted_snapshot {
    int root; /* the workspace */
    dev_t dev;
    struct timespec start;
    struct entries before; /* the host-trusted paths, sorted */
    struct entries dirs;   /* every folder walked, the workspace ("") first, sorted */
    bool truncated;
};

struct walk {
    int root;
    dev_t dev;
    size_t visited;
    bool truncated;
    /* called for each non-folder entry; returns whether to keep it */
    void (*each)(struct walk *w, const char *rel, const struct stat *st, const char *link);
    void (*each_dir)(struct walk *w, const char *rel, const struct stat *st);
    /* the second walk: the snapshot's folders, each looked at on its own, not from its parent */
    const struct entries *known_dirs;
    bool names_only; /* the first walk */
    void *ctx;
};

static int entry_cmp(const void *a, const void *b);

static bool known_dir(const struct walk *w, const char *rel)
{
    struct entry key = {.path = (char *)rel};
    return w->known_dirs && w->known_dirs->len &&
           bsearch(&key, w->known_dirs->items, w->known_dirs->len, sizeof key, entry_cmp);
}

static bool in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, list[i]) == 0)
            return true;
    return false;
}

/* Does the folder rel (relative to the workspace, not "") lie where pattern (one of host_trusted.c's
 * with a '/') names a path: its names match the pattern's leading folder names one for one (a `*`
 * there stands for one name), or it lies at most STAR_FOLDERS folders below where the pattern's
 * last name, a glob, starts (`.git/hooks/` then `*`:
 * `.git`, `.git/hooks`, `.git/hooks/x`, `.git/hooks/x/y`)? */
static bool pattern_reaches(const char *pattern, const char *rel)
{
    char pc[NAME_MAX + 1], rc[NAME_MAX + 1];
    const char *p = pattern, *r = rel;
    for (;;) {
        const char *pe = strchr(p, '/');
        if (!pe) {
            if (!strchr(p, '*'))
                return false; /* a fixed file name: no folder below it */
            size_t below = 1;
            for (const char *q = r; *q; q++)
                below += *q == '/';
            return below <= STAR_FOLDERS;
        }
        const char *re = strchr(r, '/');
        size_t pn = (size_t)(pe - p), rn = re ? (size_t)(re - r) : strlen(r);
        if (pn > NAME_MAX || rn > NAME_MAX)
            return false;
        memcpy(pc, p, pn);
        pc[pn] = '\0';
        memcpy(rc, r, rn);
        rc[rn] = '\0';
        if (!name_glob_match(pc, rc))
            return false;
        if (!re)
            return true;
        p = pe + 1;
        r = re + 1;
    }
}

/* Is the folder rel one the walks look into? The workspace's top is; below it, only the folders
 * host_trusted.c's table names (derived from its patterns, not a second list) and tool_dirs.
 * Nothing else: a deeper look is `cordon review`'s (trusted_changes.h). */
static bool in_scope(const char *rel)
{
    if (!strchr(rel, '/') && in_list(rel, tool_dirs, ARRAY_LEN(tool_dirs)))
        return true;
    const char *pattern;
    for (size_t i = 0; (pattern = host_trusted_pattern(i)); i++)
        if (strchr(pattern, '/') && pattern_reaches(pattern, rel))
            return true;
    return false;
}

/* A hook or config the git guard neutralised (git_guard.h: renamed NAME.cordon-refused, exec bits
 * off): cordon's own doing, which the guard's line already told; git never runs it. */
static bool neutralised(const char *name)
{
    static const char suffix[] = ".cordon-refused";
    size_t n = strlen(name);
    return n > sizeof suffix - 1 && strcmp(name + n - (sizeof suffix - 1), suffix) == 0;
}

static void walk_dir(struct walk *w, int dfd, char *rel, size_t rel_len, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *name = de->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
            continue;
        if (neutralised(name))
            continue;
        if (++w->visited > TRUSTED_WALK_ENTRIES) {
            w->truncated = true;
            break;
        }
        size_t n = strlen(name);
        if (rel_len + n + 2 > PATH_MAX)
            continue;
        char *p = rel + rel_len;
        if (rel_len)
            *p++ = '/';
        memcpy(p, name, n + 1);
        size_t len = (size_t)(p - rel) + n;
        /* a folder out of scope costs nothing: its type is in the entry (no stat) */
        if (de->d_type == DT_DIR && !in_scope(rel))
            continue;
        /* The first walk stats a regular file only when its name is a host-trusted one (the
         * cost of a walk is its stats): which files are new executables, the second tells. */
        if (w->names_only && de->d_type == DT_REG &&
            !host_trusted_why(rel, S_IFREG | 0644, S_IFREG | 0644, NULL))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (st.st_dev != w->dev || (de->d_type != DT_DIR && !in_scope(rel)))
                continue;
            if (depth + 1 >= TRUSTED_WALK_DEPTH) {
                w->truncated = true;
                continue;
            }
            if (known_dir(w, rel))
                continue;
            if (w->each_dir)
                w->each_dir(w, rel, &st);
            int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                walk_dir(w, sub, rel, len, depth + 1);
            continue;
        }
        char target[PATH_MAX];
        const char *link = NULL;
        if (S_ISLNK(st.st_mode)) {
            ssize_t t = readlinkat(dirfd(d), name, target, sizeof target - 1);
            if (t < 0)
                continue;
            target[t] = '\0';
            link = target;
        }
        w->each(w, rel, &st, link);
    }
    rel[rel_len] = '\0';
    closedir(d);
}

static void walk(struct walk *w)
{
    char rel[PATH_MAX] = "";
    int fd = openat(w->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
        walk_dir(w, fd, rel, 0, 0);
}

static void entries_push(struct entries *e, const char *rel, const struct stat *st,
                         const char *link)
{
    if (e->len == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 16;
        e->items = xrealloc(e->items, e->cap * sizeof *e->items);
    }
    e->items[e->len++] = (struct entry){.path = xstrdup(rel),
                                        .mode = st->st_mode,
                                        .ino = st->st_ino,
                                        .size = st->st_size,
                                        .ctime = st->st_ctim,
                                        .link = link ? xstrdup(link) : NULL};
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static void entries_free(struct entries *e)
{
    for (size_t i = 0; i < e->len; i++) {
        free(e->items[i].path);
        free(e->items[i].link);
    }
    free(e->items);
    *e = (struct entries){0};
}

static void collect_dir(struct walk *w, const char *rel, const struct stat *st)
{
    struct trusted_snapshot *s = w->ctx;
    entries_push(&s->dirs, rel, st, NULL);
}

static void collect_before(struct walk *w, const char *rel, const struct stat *st, const char *link)
{
    /* host_mode 0: every executable counts, so that the second walk knows which were already */
    if (host_trusted_why(rel, st->st_mode, 0, link))
        entries_push(&((struct trusted_snapshot *)w->ctx)->before, rel, st, link);
}

struct trusted_snapshot *trusted_snapshot_take(const char *workspace)
{
    struct trusted_snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    struct stat st;
    s->root = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->root < 0 || fstat(s->root, &st) < 0) {
        if (s->root >= 0)
            close(s->root);
        free(s);
        return NULL;
    }
    s->dev = st.st_dev;
    clock_gettime(CLOCK_REALTIME_COARSE, &s->start);
    entries_push(&s->dirs, "", &st, NULL);
    struct walk w = {.root = s->root,
                     .dev = s->dev,
                     .each = collect_before,
                     .each_dir = collect_dir,
                     .names_only = true,
                     .ctx = s};
    walk(&w);
    s->truncated = w.truncated;
    if (s->before.len)
        qsort(s->before.items, s->before.len, sizeof *s->before.items, entry_cmp);
    qsort(s->dirs.items, s->dirs.len, sizeof *s->dirs.items, entry_cmp);
    return s;
}

struct after {
    struct trusted_snapshot *snap;
    struct trusted_changes *out;
    bool *seen; /* per snapshot entry */
};

static struct entry *snapshot_find(struct trusted_snapshot *s, const char *rel, size_t *idx)
{
    struct entry key = {.path = (char *)rel};
    struct entry *e = s->before.len ? bsearch(&key, s->before.items, s->before.len,
                                              sizeof *s->before.items, entry_cmp)
                                    : NULL;
    if (e)
        *idx = (size_t)(e - s->before.items);
    return e;
}

static bool ts_before(struct timespec a, struct timespec b)
{
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

static void change_push(struct trusted_changes *c, const char *rel, const char *change,
                        const char *why)
{
    c->items = xrealloc(c->items, (c->len + 1) * sizeof *c->items);
    c->items[c->len++] =
        (struct trusted_change){.path = xstrdup(rel), .change = change, .why = why};
}

/* Not in the snapshot, yet there before the command? (a file made executable): its birth time
 * says, where the file system keeps one. */
static bool born_before(int root, const char *rel, struct timespec start)
{
    struct statx sx;
    if (statx(root, rel, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) < 0 || !(sx.stx_mask & STATX_BTIME))
        return false;
    struct timespec b = {.tv_sec = sx.stx_btime.tv_sec, .tv_nsec = sx.stx_btime.tv_nsec};
    return ts_before(b, start);
}

static void compare_after(struct walk *w, const char *rel, const struct stat *st, const char *link)
{
    struct after *a = w->ctx;
    size_t idx = 0;
    struct entry *e = snapshot_find(a->snap, rel, &idx);
    const char *why = host_trusted_why(rel, st->st_mode, e ? e->mode : 0, link);
    if (e)
        a->seen[idx] = true;
    if (!why)
        return;
    if (!e) {
        /* Not in the snapshot: new (a host-trusted name renamed into place included), unless it
         * counts only as an executable and was born before (one that was there, or a file made
         * executable in place: not told, see trusted_changes.h). */
        bool by_name = host_trusted_why(rel, st->st_mode, st->st_mode, link) != NULL;
        if (!by_name && (ts_before(st->st_ctim, a->snap->start) ||
                         born_before(a->snap->root, rel, a->snap->start)))
            return;
        change_push(a->out, rel, "added", why);
        return;
    }
    bool same = e->ino == st->st_ino && e->size == st->st_size && e->mode == st->st_mode &&
                e->ctime.tv_sec == st->st_ctim.tv_sec && e->ctime.tv_nsec == st->st_ctim.tv_nsec &&
                ((!e->link && !link) || (e->link && link && strcmp(e->link, link) == 0));
    if (!same)
        change_push(a->out, rel, "changed", why);
}

static bool same_stat(const struct entry *e, const struct stat *st)
{
    return e->ino == st->st_ino && e->mode == st->st_mode &&
           e->ctime.tv_sec == st->st_ctim.tv_sec && e->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* One folder of the snapshot after the command: its entries are looked at only when it changed
 * (an entry added, removed or renamed changes the folder's ctime); the host-trusted paths in an
 * unchanged one are looked at from the snapshot. */
static void after_dir(struct walk *w, const struct entry *d, char *rel)
{
    struct stat st;
    int fd = d->path[0] ? openat(w->root, d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                        : openat(w->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return; /* gone: its host-trusted paths are found removed */
    if (fstat(fd, &st) < 0 || st.st_dev != w->dev || same_stat(d, &st)) {
        close(fd);
        return;
    }
    size_t len = strlen(d->path);
    memcpy(rel, d->path, len + 1);
    int depth = len ? 1 : 0;
    for (const char *p = d->path; *p; p++)
        depth += *p == '/';
    walk_dir(w, fd, rel, len, depth);
}

static int change_cmp(const void *a, const void *b)
{
    return strcmp(((const struct trusted_change *)a)->path,
                  ((const struct trusted_change *)b)->path);
}

void trusted_changes_find(struct trusted_snapshot *snap, struct trusted_changes *out)
{
    *out = (struct trusted_changes){0};
    if (!snap)
        return;
    struct after a = {.snap = snap, .out = out, .seen = calloc(snap->before.len + 1, 1)};
    if (!a.seen)
        die("out of memory");
    struct walk w = {.root = snap->root,
                     .dev = snap->dev,
                     .each = compare_after,
                     .known_dirs = &snap->dirs,
                     .ctx = &a};
    char rel[PATH_MAX];
    for (size_t i = 0; i < snap->dirs.len; i++)
        after_dir(&w, &snap->dirs.items[i], rel);
    for (size_t i = 0; i < snap->before.len; i++) {
        const struct entry *e = &snap->before.items[i];
        struct stat st;
        char target[PATH_MAX];
        if (a.seen[i])
            continue;
        if (fstatat(snap->root, e->path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            const char *why = host_trusted_why(e->path, 0, e->mode, NULL);
            if (why)
                change_push(out, e->path, "removed", why);
            continue;
        }
        /* in a folder whose entries did not change: edited in place, or not at all */
        const char *link = NULL;
        if (S_ISLNK(st.st_mode)) {
            ssize_t t = readlinkat(snap->root, e->path, target, sizeof target - 1);
            if (t < 0)
                continue;
            target[t] = '\0';
            link = target;
        }
        compare_after(&w, e->path, &st, link);
    }
    out->truncated = snap->truncated || w.truncated;
    if (out->len > 1)
        qsort(out->items, out->len, sizeof *out->items, change_cmp);
    free(a.seen);
    trusted_snapshot_free(snap);
}

void trusted_snapshot_free(struct trusted_snapshot *snap)
{
    if (!snap)
        return;
    entries_free(&snap->before);
    entries_free(&snap->dirs);
    close(snap->root);
    free(snap);
}

void trusted_changes_free(struct trusted_changes *c)
{
    for (size_t i = 0; i < c->len; i++)
        free(c->items[i].path);
    free(c->items);
    *c = (struct trusted_changes){0};
}

enum { TELL_AT_MOST = 5 };

void trusted_changes_tell(const struct trusted_changes *c)
{
    for (size_t i = 0; i < c->len && i < TELL_AT_MOST; i++) {
        char *shown = visible_dup(c->items[i].path); /* a name cannot forge or hide a line */
        fprintf(stderr, "cordon: %s what the host runs or trusts: %s (%s)\n", c->items[i].change,
                shown, c->items[i].why);
        free(shown);
    }
    if (c->len > TELL_AT_MOST)
        fprintf(stderr, "cordon: and %zu more host-trusted paths changed (--json lists them)\n",
                c->len - TELL_AT_MOST);
}
