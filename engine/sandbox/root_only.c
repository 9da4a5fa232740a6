/* root_only.c — see root_only.h. A root caller's scan when its sandbox cannot be shifted
 * (shifted, root_writes.h, the kernel itself refuses every root-only file outside what the caller
 * owns, and nothing is walked).
 * Owns the walk of the scan roots: every directory is opened
 * relative to its parent's fd (openat, O_NOFOLLOW) and listed with getdents64, every entry
 * judged by fstatat with AT_SYMLINK_NOFOLLOW, so a path is never walked again from / and no
 * symlink is followed (a symlink's target is judged where it lies, if a scan root covers it).
 * An entry the directory itself marks as a symlink (d_type) is never root-only and is not
 * stat'ed; every other entry is (d_type says nothing of owner or mode). Also owns the scan
 * ahead: the same walk cut into one task per entry of a scan root, taken by a thread and, once
 * the profile is resolved, by the caller, and the replay of its answers that decides whether
 * its result may be used. And the kept listings (root_only_cache): the file of folders' entries
 * between runs, read, checked and written here.
 * Uses: util.c for the lists, path containment and whole-file reads; log.c for the one line when
 * the bound is hit.
 * Must never: change the host (it only reads directories; it writes only the kept listings'
 * file it is given), follow a symlink, or show what it could not judge: past the bound the rest
 * is hidden; use a scan ahead whose walk the real inputs could have taken elsewhere; take from
 * the file anything but a listing (every entry is stat'ed and judged each run), or use a file
 * that is not whole, root's own and consistent. */
#include "sandbox/root_only.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/dir_stamp.h"
#include "base/log.h"

/* One getdents64 call's worth: most directories are listed in one call (and the empty one that
 * says the end). */
#define DENTS_BUF 32768

/* The three answers about a path that the walk's way depends on (see root_only.h). */
enum {
    ANS_WAY = 1,     /* a keep path, a visible name, or an ancestor of one */
    ANS_VISIBLE = 2, /* named in visible */
    ANS_INSIDE = 4,  /* inside a keep path */
};

/* Every answer given, in order: one byte of answers, then the path and its NUL. */
struct answers {
    char *buf;
    size_t len, cap;
};

struct walk {
    const struct sandbox_root_only *ro;
    const struct str_list *keep;
    size_t max, left; /* the bound; entries that may still be judged */
    char *warn_at;    /* the directory where the bound was hit first; said once, at the end */
    struct str_list *hidden;
    int added;
    struct answers *record;        /* the scan ahead's record, or NULL */
    atomic_bool *stop;             /* the scan ahead is not wanted any more, or NULL */
    struct root_only_cache *cache; /* the kept listings, or NULL */
    char *path;                    /* the path of the entry at hand */
    size_t len, cap;
};

bool root_only_judge(const struct stat *st)
{
    if (S_ISLNK(st->st_mode) || st->st_uid != 0)
        return false;
    if (S_ISDIR(st->st_mode))
        return (st->st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH);
    return !(st->st_mode & S_IROTH);
}

/* Is path a keep path, a visible name, or an ancestor of one? Then it is never hidden. */
static bool on_way_to_kept(const struct walk *w, const char *path)
{
    const struct str_list *lists[] = {w->keep, &w->ro->visible};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->len; i++)
            if (path_is_within(lists[l]->items[i], path))
                return true;
    return false;
}

/* Is path inside a keep path (the workspace, a writable path, the home)? That area is the
 * caller's own, granted by name: nothing in it is judged, as hiding there would break it. */
static bool inside_kept(const struct walk *w, const char *path)
{
    for (size_t i = 0; i < w->keep->len; i++)
        if (path_is_within(path, w->keep->items[i]))
            return true;
    return false;
}

static unsigned answers_for(const struct walk *w, const char *path)
{
    return (on_way_to_kept(w, path) ? ANS_WAY : 0) |
           (str_list_contains(&w->ro->visible, path) ? ANS_VISIBLE : 0) |
           (inside_kept(w, path) ? ANS_INSIDE : 0);
}

/* The answers about path, recorded when this is the scan ahead. */
static unsigned ask(struct walk *w, const char *path)
{
    unsigned a = answers_for(w, path);
    struct answers *r = w->record;
    if (r) {
        size_t n = strlen(path) + 2;
        if (r->len + n > r->cap) {
            r->cap = (r->len + n) * 2 + 4096;
            r->buf = xrealloc(r->buf, r->cap);
        }
        r->buf[r->len] = (char)a;
        memcpy(r->buf + r->len + 1, path, n - 1);
        r->len += n;
    }
    return a;
}

static void add(struct walk *w, const char *path)
{
    if (str_list_contains(w->hidden, path))
        return;
    str_list_push(w->hidden, path);
    w->added++;
}

/* w->path becomes the entry name of the directory whose path is its first dir_len bytes. */
static void path_enter(struct walk *w, size_t dir_len, const char *name)
{
    size_t n = strlen(name);
    if (dir_len + n + 2 > w->cap) {
        w->cap = (dir_len + n + 2) * 2;
        w->path = xrealloc(w->path, w->cap);
    }
    size_t at = dir_len == 1 ? 0 : dir_len; /* "/" + name is "/name" */
    w->path[at] = '/';
    memcpy(w->path + at + 1, name, n + 1);
    w->len = at + 1 + n;
}

static void path_set(struct walk *w, const char *root)
{
    size_t n = strlen(root);
    if (n + 1 > w->cap) {
        w->cap = n + 1 + 256;
        w->path = xrealloc(w->path, w->cap);
    }
    memcpy(w->path, root, n + 1);
    w->len = n;
}

static void path_leave(struct walk *w, size_t dir_len)
{
    w->len = dir_len;
    w->path[dir_len] = '\0';
}

static int walk_dir(struct walk *w, int dfd, unsigned depth, bool path_only);
static const struct ro_dir *cache_find(const struct root_only_cache *c, const struct stat *st);

/* Judge the entry name of directory dfd (its path in w->path), descending depth - 1 more levels
 * when it is a directory to look into. */
static void walk_entry(struct walk *w, int dfd, const char *name, unsigned depth)
{
    const char *full = w->path;
    unsigned a = ask(w, full);
    if (a & (ANS_VISIBLE | ANS_INSIDE))
        return; /* named visible, or the caller's own: shown as it is, whole */
    bool kept = a & ANS_WAY;
    if (w->left == 0) {
        /* Fail closed: what is not judged is not shown. */
        if (!w->warn_at) {
            size_t dir_len = (size_t)(strrchr(full, '/') - full);
            w->warn_at = dir_len ? strndup(full, dir_len) : xstrdup("/");
        }
        if (!kept)
            add(w, full);
        return;
    }
    w->left--;
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK(st.st_mode))
        return; /* gone since the listing, or a symlink: nothing to hide here */
    bool dir = S_ISDIR(st.st_mode);
    if (!kept && root_only_judge(&st)) {
        add(w, full);
    } else if (dir && depth > 1) {
        /* A folder that looks unchanged is opened as a path only (cheaper: it is not to be
         * listed); walk_dir checks it is the very one and opens it for listing if not. */
        bool path_only = w->cache && cache_find(w->cache, &st);
        int sub = openat(dfd, name,
                         (path_only ? O_PATH : O_RDONLY) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if ((sub < 0 || walk_dir(w, sub, depth - 1, path_only) < 0) && !kept)
            add(w, w->path); /* cannot look inside (as root: rare): do not show it */
    }
}

/* The kept listings (see root_only.h). A folder's entries are a function of the folder while
 * its (dev, ino, ctime) stay the same: adding, removing or renaming an entry sets its ctime to
 * now, and nothing (not utimes) sets a ctime back. So a folder met again with the same three is
 * not listed: its entries (the names that are not symlinks, which is all the walk uses of a
 * listing; a name that becomes a symlink is an unlink and a create, a new ctime) come from the
 * file. Only the listing is taken from it; every entry is stat'ed and judged afresh, since a
 * chmod changes only the file's own ctime.
 * Layout, in this host's byte order (the file never leaves it): "cordon root walk" (16 bytes),
 * u32 version, u32 folders; then per folder, in increasing (dev, ino): u64 dev, u64 ino,
 * i64 ctime seconds, u32 ctime nanoseconds, u32 length of the names, the names (each ends in a
 * NUL). Anything odd (a field out of bounds, a name with a '/', "." or "..", folders out of
 * order, the wrong size, owner or mode) and nothing of the file is used: a full walk. */
#define CACHE_MAGIC "cordon root walk"
#define CACHE_VERSION 1u
#define CACHE_HEAD (16 + 4 + 4)
#define CACHE_REC (8 + 8 + 8 + 4 + 4)
#define CACHE_MAX_DIRS ROOT_ONLY_MAX_ENTRIES
#define CACHE_MAX ((size_t)16 << 20)

struct ro_dir {
    uint64_t dev, ino;
    int64_t sec;
    uint32_t nsec, len; /* len: bytes of names */
    char *names;        /* NUL-terminated names, end to end */
};

struct root_only_cache {
    char *path;
    char *buf; /* the file read; old[i].names point into it */
    struct ro_dir *old;
    size_t n_old;
    long long start_ns; /* CLOCK_REALTIME when opened, before any listing */
    pthread_mutex_t mu; /* guards what follows: the walk ahead and the caller add to it */
    struct ro_dir *cur; /* what this run's walks saw, for the next run (names owned) */
    size_t n_cur, cap_cur;
    size_t listed; /* folders listed and worth keeping (settled, trusted) */
    size_t reused; /* folders whose listing came from the file */
};

static bool cache_get(const char **p, const char *end, void *out, size_t n)
{
    if ((size_t)(end - *p) < n)
        return false;
    memcpy(out, *p, n);
    *p += n;
    return true;
}

static bool names_ok(const char *names, uint32_t len)
{
    if (len && names[len - 1] != '\0')
        return false;
    for (const char *q = names, *end = names + len; q < end;) {
        size_t n = strlen(q);
        if (n == 0 || n > NAME_MAX || memchr(q, '/', n) ||
            (q[0] == '.' && (n == 1 || (n == 2 && q[1] == '.'))))
            return false;
        q += n + 1;
    }
    return true;
}

static int dir_cmp(const struct ro_dir *a, const struct ro_dir *b)
{
    if (a->dev != b->dev)
        return a->dev < b->dev ? -1 : 1;
    return a->ino < b->ino ? -1 : a->ino > b->ino;
}

static int dir_cmp_q(const void *a, const void *b)
{
    return dir_cmp(a, b);
}

/* The file's folders, or none at all when anything about it does not fit. */
static void cache_load(struct root_only_cache *c)
{
    size_t len = 0;
    if (read_private_file(c->path, CACHE_MAX, &c->buf, &len) < 0)
        return;
    const char *p = c->buf, *end = c->buf + len;
    char magic[16];
    uint32_t version, n;
    if (!cache_get(&p, end, magic, 16) || memcmp(magic, CACHE_MAGIC, 16) != 0 ||
        !cache_get(&p, end, &version, 4) || version != CACHE_VERSION ||
        !cache_get(&p, end, &n, 4) || n > CACHE_MAX_DIRS)
        goto out;
    c->old = xcalloc(n ? n : 1, sizeof *c->old);
    for (uint32_t i = 0; i < n; i++) {
        struct ro_dir *d = &c->old[i];
        if (!cache_get(&p, end, &d->dev, 8) || !cache_get(&p, end, &d->ino, 8) ||
            !cache_get(&p, end, &d->sec, 8) || !cache_get(&p, end, &d->nsec, 4) ||
            !cache_get(&p, end, &d->len, 4) || d->nsec >= 1000000000u ||
            (size_t)(end - p) < d->len || !names_ok(p, d->len) ||
            (i && dir_cmp(&c->old[i - 1], d) >= 0))
            goto out;
        d->names = (char *)p;
        p += d->len;
    }
    if (p != end)
        goto out;
    c->n_old = n;
out:
    if (c->n_old == 0) {
        free(c->old);
        c->old = NULL;
    }
}

struct root_only_cache *root_only_cache_open(const char *path)
{
    if (!path)
        return NULL;
    struct root_only_cache *c = xcalloc(1, sizeof *c);
    c->path = xstrdup(path);
    pthread_mutex_init(&c->mu, NULL);
    c->start_ns = dir_stamp_now_ns();
    cache_load(c);
    return c;
}

/* Write what this run saw: a new file beside the old (O_EXCL, 0600), renamed over it, so that a
 * reader sees a whole file. Only when a folder was listed (else the file already says it all). A
 * failure costs the next run its listings only: not said. */
static void cache_save(struct root_only_cache *c)
{
    if (c->listed == 0 && c->n_cur == c->n_old)
        return;
    qsort(c->cur, c->n_cur, sizeof *c->cur, dir_cmp_q);
    size_t total = CACHE_HEAD, n = 0;
    for (size_t i = 0; i < c->n_cur; i++)
        total += CACHE_REC + c->cur[i].len;
    char *buf = xmalloc(total), *p = buf;
#define PUT(v, k) (memcpy(p, (v), (k)), p += (k))
    uint32_t version = CACHE_VERSION, count = 0;
    PUT(CACHE_MAGIC, 16);
    PUT(&version, 4);
    PUT(&count, 4); /* filled in below */
    for (size_t i = 0; i < c->n_cur && n < CACHE_MAX_DIRS; i++) {
        const struct ro_dir *d = &c->cur[i];
        if (i && dir_cmp(&c->cur[i - 1], d) == 0)
            continue; /* the same folder met twice (a bind mount): once */
        PUT(&d->dev, 8);
        PUT(&d->ino, 8);
        PUT(&d->sec, 8);
        PUT(&d->nsec, 4);
        PUT(&d->len, 4);
        PUT(d->names, d->len);
        n++;
    }
#undef PUT
    count = (uint32_t)n;
    memcpy(buf + 20, &count, 4);
    if ((size_t)(p - buf) <= CACHE_MAX)
        (void)write_private_file(c->path, buf, (size_t)(p - buf)); /* a failure: not said */
    free(buf);
}

size_t root_only_cache_reused(struct root_only_cache *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->reused;
    pthread_mutex_unlock(&c->mu);
    return n;
}

void root_only_cache_close(struct root_only_cache *c, bool save)
{
    if (!c)
        return;
    if (save)
        cache_save(c);
    for (size_t i = 0; i < c->n_cur; i++)
        free(c->cur[i].names);
    free(c->cur);
    free(c->old);
    free(c->buf);
    free(c->path);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* The kept listing of the folder st describes, when its (dev, ino, ctime) are the same. */
static const struct ro_dir *cache_find(const struct root_only_cache *c, const struct stat *st)
{
    struct ro_dir key = {.dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino};
    const struct ro_dir *d =
        c->n_old ? bsearch(&key, c->old, c->n_old, sizeof key, dir_cmp_q) : NULL;
    if (!d || d->sec != (int64_t)st->st_ctim.tv_sec || d->nsec != (uint32_t)st->st_ctim.tv_nsec)
        return NULL;
    return d;
}

/* Keep the listing names (len bytes) of the folder st describes for the next run. */
static void cache_keep(struct root_only_cache *c, const struct stat *st, const char *names,
                       size_t len, bool listed)
{
    if (len > UINT32_MAX)
        return;
    pthread_mutex_lock(&c->mu);
    if (c->n_cur == c->cap_cur) {
        c->cap_cur = c->cap_cur ? c->cap_cur * 2 : 256;
        c->cur = xrealloc(c->cur, c->cap_cur * sizeof *c->cur);
    }
    struct ro_dir *d = &c->cur[c->n_cur++];
    *d = (struct ro_dir){.dev = (uint64_t)st->st_dev,
                         .ino = (uint64_t)st->st_ino,
                         .sec = (int64_t)st->st_ctim.tv_sec,
                         .nsec = (uint32_t)st->st_ctim.tv_nsec,
                         .len = (uint32_t)len,
                         .names = xmalloc(len ? len : 1)};
    if (len) /* an empty folder's names may be NULL: memcpy's arguments must not be */
        memcpy(d->names, names, len);
    if (listed)
        c->listed++;
    else
        c->reused++;
    pthread_mutex_unlock(&c->mu);
}

struct names {
    char *buf;
    size_t len, cap;
};

/* The names (not symlinks, not "." or "..") of directory dfd, end to end. 0, or -1 when it could
 * not be listed to the end. */
static int list_names(int dfd, struct names *out)
{
    char *buf = xmalloc(DENTS_BUF);
    ssize_t n;
    while ((n = getdents64(dfd, buf, DENTS_BUF)) > 0) {
        for (ssize_t off = 0; off < n;) {
            struct dirent64 *de = (struct dirent64 *)(void *)(buf + off);
            off += de->d_reclen;
            const char *name = de->d_name;
            if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
                continue;
            if (de->d_type == DT_LNK)
                continue; /* a symlink, from the directory itself: no stat needed (/etc/alternatives) */
            size_t k = strlen(name) + 1;
            if (out->len + k > out->cap) {
                out->cap = (out->len + k) * 2 + 4096;
                out->buf = xrealloc(out->buf, out->cap);
            }
            memcpy(out->buf + out->len, name, k);
            out->len += k;
        }
    }
    free(buf);
    return n < 0 ? -1 : 0;
}

/* Judge the entries of directory dfd (its path in w->path; taken over, closed here; path_only:
 * opened O_PATH), descending depth - 1 more levels: its kept listing when it is unchanged, else it
 * is listed (and kept for the next run when that may be trusted). 0, or -1 when it could not be
 * listed to the end. */
static int walk_dir(struct walk *w, int dfd, unsigned depth, bool path_only)
{
    struct names own = {0};
    const char *names;
    size_t len;
    int r = 0;
    struct stat st;
    bool have_st = w->cache && fstat(dfd, &st) == 0;
    const struct ro_dir *kept = have_st ? cache_find(w->cache, &st) : NULL;
    if (kept) {
        names = kept->names;
        len = kept->len;
        cache_keep(w->cache, &st, names, len, false);
    } else {
        if (path_only) {
            /* Changed since its stat: the fd cannot list, open the same folder for that. */
            int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            close(dfd);
            if (fd < 0)
                return -1;
            dfd = fd;
        }
        r = list_names(dfd, &own);
        names = own.buf;
        len = own.len;
        if (r == 0 && have_st && dir_stamp_settled(&st, w->cache->start_ns) &&
            dir_stamp_fs_trusted(dfd))
            cache_keep(w->cache, &st, names, len, true);
    }
    size_t dir_len = w->len;
    for (size_t off = 0; off < len;) {
        const char *name = names + off;
        off += strlen(name) + 1;
        if (w->stop && atomic_load_explicit(w->stop, memory_order_relaxed)) {
            r = 0;
            break;
        }
        path_enter(w, dir_len, name);
        walk_entry(w, dfd, name, depth);
        path_leave(w, dir_len);
    }
    free(own.buf);
    close(dfd);
    return r;
}

static int walk_roots(struct walk *w, char *err, size_t errlen)
{
    const struct sandbox_root_only *ro = w->ro;
    for (size_t i = 0; i < ro->scan.len; i++) {
        const char *root = ro->scan.items[i];
        int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && (errno == ENOENT || errno == ELOOP || errno == ENOTDIR))
            continue; /* missing, a symlink or not a directory: nothing below it to scan */
        if (fd < 0) {
            snprintf(err, errlen, "root_only: cannot read the scan root %s: %s", root,
                     strerror(errno));
            return -errno;
        }
        struct stat st;
        if (fstat(fd, &st) < 0) {
            int r = -errno;
            close(fd);
            snprintf(err, errlen, "root_only: cannot stat the scan root %s: %s", root,
                     strerror(-r));
            return r;
        }
        unsigned a = ask(w, root);
        if (a & ANS_INSIDE) {
            close(fd);
            continue;
        }
        bool kept = a & (ANS_WAY | ANS_VISIBLE);
        if (!kept && root_only_judge(&st)) {
            close(fd);
            add(w, root);
            continue;
        }
        if (ro->depth == 0) {
            close(fd);
            continue;
        }
        path_set(w, root);
        if (walk_dir(w, fd, ro->depth, false) < 0 && !kept)
            add(w, root);
    }
    return 0;
}

static void walk_init(struct walk *w, const struct sandbox_root_only *ro,
                      const struct str_list *keep, size_t max_entries, struct str_list *hidden)
{
    *w = (struct walk){
        .ro = ro, .keep = keep, .max = max_entries, .left = max_entries, .hidden = hidden};
}

static void warn_bound(const struct walk *w, const char *at)
{
    LOG_W("root_only",
          "more than %zu entries under the root_only scan roots; the rest of %s and of the "
          "directories not yet scanned is hidden",
          w->max, at);
}

int root_only_scan(const struct sandbox_root_only *ro, const struct str_list *keep,
                   size_t max_entries, struct root_only_cache *cache, struct str_list *hidden,
                   char *err, size_t errlen)
{
    struct walk w;
    walk_init(&w, ro, keep, max_entries, hidden);
    w.cache = cache;
    int r = walk_roots(&w, err, errlen);
    if (w.warn_at)
        warn_bound(&w, w.warn_at);
    free(w.warn_at);
    free(w.path);
    return r < 0 ? r : w.added;
}

/* The built-in guess: profiles/coding.lua's root_only (test_root_only checks they agree). */
static const char *const guess_scan[] = {"/etc", "/var", "/root",         "/boot",
                                         "/opt", "/srv", "/usr/local/etc"};
static const char *const guess_visible[] = {"/var/tmp"};
#define GUESS_DEPTH 3

void root_only_guess(struct sandbox_root_only *ro)
{
    memset(ro, 0, sizeof *ro);
    ro->hide = true;
    ro->depth = GUESS_DEPTH;
    for (size_t i = 0; i < ARRAY_LEN(guess_scan); i++)
        str_list_push(&ro->scan, guess_scan[i]);
    for (size_t i = 0; i < ARRAY_LEN(guess_visible); i++)
        str_list_push(&ro->visible, guess_visible[i]);
}

/* The scan ahead is cut into tasks, one per entry of a scan root (the entry judged, and the
 * tree below it walked), taken in turn by the thread and, once the profile is resolved, by
 * the caller too (/etc alone is half the walk: one task per root would leave the caller
 * waiting). Each task has its own result and record; put
 * end to end in task order they are the sequential walk's, as long as the bound is not reached
 * (each task counts on its own; finish scans in place when their sum could have reached it). */
struct task {
    int dfd;          /* the scan root's directory (the ahead's), or -1 */
    const char *root; /* the scan root's path */
    char *name;       /* the entry; NULL: a task that only adds path */
    char *path;       /* a root hidden by the walk of the roots (owned) */
    struct str_list hidden;
    struct answers record;
    size_t judged; /* entries it looked at (stat) */
    bool bound;    /* it reached the bound on its own */
};

/* One thread: while the profile resolves, init takes the other core (its namespaces, the
 * early detached trees), so a second thread would only slow the resolution down; once it is resolved
 * the caller takes tasks too. */
#define AHEAD_THREADS 1

struct root_only_ahead {
    pthread_t threads[AHEAD_THREADS];
    size_t n_threads;
    atomic_bool stop;
    atomic_size_t next; /* the next task to take */
    /* The guessed inputs (copies) and what the walk with them found. */
    struct sandbox_root_only ro;
    struct str_list keep;
    size_t max;
    struct answers record; /* the answers about the scan roots themselves */
    struct task *tasks;
    size_t n_tasks, cap_tasks;
    int *fds; /* the scan roots' directories, closed at the end */
    size_t n_fds;
    struct root_only_cache *cache; /* owned; may be NULL */
    int r;
    char err[512];
};

static struct task *task_new(struct root_only_ahead *a)
{
    if (a->n_tasks == a->cap_tasks) {
        a->cap_tasks = a->cap_tasks ? a->cap_tasks * 2 : 256;
        a->tasks = xrealloc(a->tasks, a->cap_tasks * sizeof *a->tasks);
    }
    struct task *t = &a->tasks[a->n_tasks++];
    memset(t, 0, sizeof *t);
    t->dfd = -1;
    return t;
}

static void task_run(struct root_only_ahead *a, struct task *t)
{
    if (!t->name)
        return;
    struct walk w;
    walk_init(&w, &a->ro, &a->keep, a->max, &t->hidden);
    w.record = &t->record;
    w.stop = &a->stop;
    w.cache = a->cache;
    path_set(&w, t->root);
    path_enter(&w, w.len, t->name);
    walk_entry(&w, t->dfd, t->name, a->ro.depth);
    t->judged = a->max - w.left;
    t->bound = w.warn_at != NULL;
    free(w.warn_at);
    free(w.path);
}

/* Take and run tasks until none is left (or the scan is not wanted any more). */
static void take_tasks(struct root_only_ahead *a)
{
    while (!atomic_load_explicit(&a->stop, memory_order_relaxed)) {
        size_t i = atomic_fetch_add(&a->next, 1);
        if (i >= a->n_tasks)
            break;
        task_run(a, &a->tasks[i]);
    }
}

static void *ahead_main(void *arg)
{
    take_tasks(arg);
    return NULL;
}

/* The walk of the scan roots themselves, as walk_roots does it, with one task per entry of
 * each root instead of the walk below it. Cheap (a listing of each root): done by the caller. */
static void plan(struct root_only_ahead *a)
{
    struct walk w;
    walk_init(&w, &a->ro, &a->keep, a->max, NULL);
    w.record = &a->record;
    a->fds = xcalloc(a->ro.scan.len + 1, sizeof *a->fds);
    char *buf = xmalloc(DENTS_BUF);
    for (size_t i = 0; i < a->ro.scan.len; i++) {
        const char *root = a->ro.scan.items[i];
        int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && (errno == ENOENT || errno == ELOOP || errno == ENOTDIR))
            continue;
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
            /* As walk_roots: the one line, and no further root. */
            a->r = -errno;
            snprintf(a->err, sizeof a->err, "root_only: cannot %s the scan root %s: %s",
                     fd < 0 ? "read" : "stat", root, strerror(-a->r));
            if (fd >= 0)
                close(fd);
            break;
        }
        unsigned ans = ask(&w, root);
        bool kept = ans & (ANS_WAY | ANS_VISIBLE);
        bool whole = !(ans & ANS_INSIDE) && !kept && root_only_judge(&st);
        if (whole)
            task_new(a)->path = xstrdup(root);
        if (whole || (ans & ANS_INSIDE) || a->ro.depth == 0) {
            close(fd);
            continue;
        }
        a->fds[a->n_fds++] = fd;
        ssize_t n;
        while ((n = getdents64(fd, buf, DENTS_BUF)) > 0) {
            for (ssize_t off = 0; off < n;) {
                struct dirent64 *de = (struct dirent64 *)(void *)(buf + off);
                off += de->d_reclen;
                const char *name = de->d_name;
                if ((name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))) ||
                    de->d_type == DT_LNK)
                    continue;
                struct task *t = task_new(a);
                t->dfd = fd;
                t->root = root;
                t->name = xstrdup(name);
            }
        }
        if (n < 0 && !kept)
            task_new(a)->path = xstrdup(root);
    }
    free(buf);
}

static void copy_list(struct str_list *to, const struct str_list *from)
{
    for (size_t i = 0; i < from->len; i++)
        str_list_push(to, from->items[i]);
}

static void ahead_free(struct root_only_ahead *a)
{
    for (size_t i = 0; i < a->n_tasks; i++) {
        free(a->tasks[i].name);
        free(a->tasks[i].path);
        str_list_free(&a->tasks[i].hidden);
        free(a->tasks[i].record.buf);
    }
    free(a->tasks);
    for (size_t i = 0; i < a->n_fds; i++)
        close(a->fds[i]);
    free(a->fds);
    str_list_free(&a->ro.scan);
    str_list_free(&a->ro.visible);
    str_list_free(&a->keep);
    free(a->record.buf);
    root_only_cache_close(a->cache, false);
    free(a);
}

struct root_only_ahead *root_only_ahead(const struct sandbox_root_only *ro,
                                        const struct str_list *keep, size_t max_entries,
                                        struct root_only_cache *cache)
{
    struct root_only_ahead *a = xcalloc(1, sizeof *a);
    a->cache = cache;
    atomic_init(&a->stop, false);
    atomic_init(&a->next, 0);
    a->ro.hide = ro->hide;
    a->ro.depth = ro->depth;
    copy_list(&a->ro.scan, &ro->scan);
    copy_list(&a->ro.visible, &ro->visible);
    copy_list(&a->keep, keep);
    a->max = max_entries;
    plan(a);
    while (a->n_threads < AHEAD_THREADS &&
           pthread_create(&a->threads[a->n_threads], NULL, ahead_main, a) == 0)
        a->n_threads++;
    if (a->n_threads == 0) {
        root_only_cache_close(a->cache, false);
        a->cache = NULL;
        ahead_free(a);
        return NULL;
    }
    return a;
}

static void ahead_join(struct root_only_ahead *a)
{
    for (size_t i = 0; i < a->n_threads; i++)
        (void)pthread_join(a->threads[i], NULL);
    a->n_threads = 0;
}

static bool same_list(const struct str_list *x, const struct str_list *y)
{
    if (x->len != y->len)
        return false;
    for (size_t i = 0; i < x->len; i++)
        if (strcmp(x->items[i], y->items[i]) != 0)
            return false;
    return true;
}

/* Would the real inputs (in real) have given every answer of record the same? */
static bool same_answers(const struct walk *real, const struct answers *record)
{
    for (size_t off = 0; off < record->len;) {
        unsigned was = (unsigned char)record->buf[off];
        const char *path = record->buf + off + 1;
        if (answers_for(real, path) != was)
            return false;
        off += strlen(path) + 2;
    }
    return true;
}

/* Would the real inputs have taken the walk of a down the same way? The walk reads its inputs
 * only through the answers it recorded (and the roots, depth and bound), so: are they all the
 * same? And would the sequential walk have stayed below the bound, as every task did? */
static bool same_way(const struct root_only_ahead *a, const struct sandbox_root_only *ro,
                     const struct str_list *keep, size_t max_entries)
{
    if (!same_list(&a->ro.scan, &ro->scan) || a->ro.depth != ro->depth || a->max != max_entries)
        return false;
    struct walk real;
    walk_init(&real, ro, keep, max_entries, NULL);
    if (!same_answers(&real, &a->record))
        return false;
    size_t judged = 0;
    for (size_t i = 0; i < a->n_tasks; i++) {
        const struct task *t = &a->tasks[i];
        judged += t->judged;
        if (t->bound || judged > max_entries || !same_answers(&real, &t->record))
            return false;
    }
    return true;
}

int root_only_finish(struct root_only_ahead *a, const struct sandbox_root_only *ro,
                     const struct str_list *keep, size_t max_entries, struct str_list *hidden,
                     char *err, size_t errlen, bool *used)
{
    if (used)
        *used = false;
    if (!a)
        return root_only_scan(ro, keep, max_entries, NULL, hidden, err, errlen);
    take_tasks(a); /* what the threads have not taken yet, here rather than waiting */
    ahead_join(a);
    struct root_only_cache *cache = a->cache;
    a->cache = NULL;
    if (!same_way(a, ro, keep, max_entries)) {
        ahead_free(a);
        int n = root_only_scan(ro, keep, max_entries, cache, hidden, err, errlen);
        root_only_cache_close(cache, n >= 0);
        return n;
    }
    if (used)
        *used = true;
    int r = a->r;
    if (r < 0) {
        snprintf(err, errlen, "%s", a->err);
    } else {
        struct walk w;
        walk_init(&w, ro, keep, max_entries, hidden);
        for (size_t i = 0; i < a->n_tasks; i++) {
            const struct task *t = &a->tasks[i];
            if (t->path)
                add(&w, t->path);
            for (size_t k = 0; k < t->hidden.len; k++)
                add(&w, t->hidden.items[k]);
        }
        r = w.added;
    }
    ahead_free(a);
    root_only_cache_close(cache, r >= 0);
    return r;
}

void root_only_cancel(struct root_only_ahead *a)
{
    if (!a)
        return;
    atomic_store(&a->stop, true);
    ahead_join(a);
    ahead_free(a);
}
