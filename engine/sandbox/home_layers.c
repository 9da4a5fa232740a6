/* home_layers.c — see home_layers.h. Every name is opened one component at a time beneath a
 * folder of the layer (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so a link a command left
 * in an upper is moved or copied as a link and never followed. Bounded: HL_MAX_PENDING folders
 * are looked at per start, a merge stops (and its pending upper stays) past MAX_ENTRIES entries
 * or MAX_DEPTH levels. */
#include "sandbox/home_layers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

#define HL_MAX_PENDING 256
#define MAX_ENTRIES 200000
#define MAX_DEPTH 128
#define OPAQUE_XATTR "user.overlay.opaque"
#define TMP_NAME ".cordon-merge.tmp"
#define NAMED_CONFLICTS 3

static int open_beneath(int dfd, const char *name, int flags, mode_t mode)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
                           .mode = (flags & O_CREAT) ? mode : 0,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
    long fd;
    do
        fd = syscall(SYS_openat2, dfd, name, &how, sizeof how);
    while (fd < 0 && errno == EINTR);
    return (int)fd;
}

static uint64_t ts_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts_ns(&ts);
}

/* The start time a pending folder's name carries ("p<hex>-<hex>"), or 0 when it is no such name. */
static uint64_t name_start(const char *name)
{
    if (name[0] != 'p')
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(name + 1, &end, 16);
    return errno == 0 && end != name + 1 && *end == '-' ? (uint64_t)v : 0;
}

int hl_remove_tree(int dfd, const char *name)
{
    if (fchmodat(dfd, name, 0700, 0) < 0 && errno != EPERM)
        return -errno;
    /* A path given from outside (`cordon home --reset`) is the caller's; below it, beneath. */
    int fd = dfd == AT_FDCWD ? open(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                             : open_beneath(dfd, name, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0)
        return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    int r = 0;
    struct dirent *de;
    while (r == 0 && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            r = -errno;
        else if (S_ISDIR(st.st_mode))
            r = hl_remove_tree(dirfd(d), de->d_name);
        else if (unlinkat(dirfd(d), de->d_name, 0) < 0)
            r = -errno;
    }
    closedir(d);
    if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
        r = -errno;
    return r;
}

/* Whatever name is in dfd, gone (a folder with all it holds). 0 or -errno. */
static int remove_any(int dfd, const char *name)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (S_ISDIR(st.st_mode))
        return hl_remove_tree(dfd, name);
    return unlinkat(dfd, name, 0) < 0 ? -errno : 0;
}

/* One merge of a pending upper into a target folder. */
struct merge {
    uint64_t start, end; /* the pending sandbox's life */
    uint64_t round;      /* when this round of merges began: what changed since is its own */
    size_t entries;
    size_t n_conflicts;
    struct str_list conflicts; /* the first NAMED_CONFLICTS, relative to the home */
    char *why;                 /* the first failure, for the one line */
};

static int fail(struct merge *m, const char *what, const char *rel, int err)
{
    if (!m->why)
        m->why = xasprintf("%s ~/%s: %s", what, rel, strerror(err));
    return -1;
}

/* Was dst's name (not a folder) changed since the pending sandbox started? Then say it once, and
 * whether the target's is the one to keep (changed after the pending sandbox ended, and not by
 * this round, whose merges go oldest end first). */
static bool keep_target(struct merge *m, int dst, const char *name, const char *rel)
{
    struct stat st;
    if (fstatat(dst, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode) ||
        (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)))
        return false;
    uint64_t c = ts_ns(&st.st_ctim);
    if (c <= m->start)
        return false;
    if (m->n_conflicts++ < NAMED_CONFLICTS)
        str_list_push(&m->conflicts, rel);
    return c > m->end && c < m->round;
}

static int copy_file(struct merge *m, int src, int dst, const char *name, const char *rel,
                     const struct stat *st)
{
    int in = open_beneath(src, name, O_RDONLY, 0), out = -1, r = -1;
    if (in < 0)
        return fail(m, "open", rel, errno);
    out = open_beneath(dst, TMP_NAME, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (out < 0) {
        fail(m, "create beside", rel, errno);
        goto out;
    }
    for (;;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL)) {
            char buf[65536];
            n = read(in, buf, sizeof buf);
            if (n > 0 && write_all(out, buf, (size_t)n) < 0)
                n = -1;
        }
        if (n == 0)
            break;
        if (n < 0 && errno != EINTR) {
            fail(m, "copy", rel, errno);
            goto out;
        }
    }
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    if (fchmod(out, st->st_mode & 07777) < 0 || futimens(out, times) < 0) {
        fail(m, "set the mode of", rel, errno);
        goto out;
    }
    r = 0;
out:
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return r;
}

/* The entry name of src, a non-folder, put in place of dst's. */
static int merge_leaf(struct merge *m, int src, int dst, const char *name, const char *rel,
                      const struct stat *st)
{
    bool whiteout = S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
    if (!whiteout && !S_ISREG(st->st_mode) && !S_ISLNK(st->st_mode) && !S_ISFIFO(st->st_mode))
        return 0; /* sockets and devices are not kept */
    if (!whiteout && keep_target(m, dst, name, rel))
        return 0;
    struct stat dt;
    if (fstatat(dst, name, &dt, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(dt.st_mode)) {
        int r = hl_remove_tree(dst, name);
        if (r < 0)
            return fail(m, "remove", rel, -r);
    }
    /* The pending upper is used up: its entry replaces the target's in one rename (both are in
     * the layer folder); a copy only where the kernel will not. */
    if (renameat(src, name, dst, name) == 0)
        return 0;
    if (errno != EXDEV)
        return fail(m, "move", rel, errno);
    int r = remove_any(dst, TMP_NAME); /* whatever a command or a crash left under that name */
    if (r < 0)
        return fail(m, "remove", TMP_NAME, -r);
    if (whiteout) {
        r = mknodat(dst, TMP_NAME, S_IFCHR, makedev(0, 0));
    } else if (S_ISLNK(st->st_mode)) {
        char target[4096];
        ssize_t n = readlinkat(src, name, target, sizeof target - 1);
        if (n < 0)
            return fail(m, "read the link", rel, errno);
        target[n] = 0;
        r = symlinkat(target, dst, TMP_NAME);
    } else if (S_ISFIFO(st->st_mode)) {
        r = mkfifoat(dst, TMP_NAME, st->st_mode & 07777);
    } else if (copy_file(m, src, dst, name, rel, st) < 0) {
        (void)unlinkat(dst, TMP_NAME, 0);
        return -1;
    }
    if (r < 0)
        return fail(m, "make", rel, errno);
    if (renameat(dst, TMP_NAME, dst, name) < 0) {
        int e = errno;
        (void)unlinkat(dst, TMP_NAME, 0);
        return fail(m, "put in place", rel, e);
    }
    return 0;
}

static int merge_dir(struct merge *m, int src, int dst, const char *rel, int depth);

/* Folder name of src into dst: an opaque one replaces dst's whole, another one is merged. */
static int merge_sub(struct merge *m, int src, int dst, const char *name, const char *rel,
                     const struct stat *st, int depth)
{
    int sfd = open_beneath(src, name, O_RDONLY | O_DIRECTORY, 0), dfd = -1, r = -1;
    if (sfd < 0)
        return fail(m, "open", rel, errno);
    char v = 0;
    bool opaque = fgetxattr(sfd, OPAQUE_XATTR, &v, 1) == 1 && v == 'y';
    struct stat dt;
    bool have = fstatat(dst, name, &dt, AT_SYMLINK_NOFOLLOW) == 0;
    if (have && (opaque || !S_ISDIR(dt.st_mode))) {
        int e = remove_any(dst, name);
        if (e < 0) {
            fail(m, "remove", rel, -e);
            goto out;
        }
        have = false;
    }
    /* Not in the target (any more): the whole folder moves in one rename, opaque mark and all. */
    if (!have && renameat(src, name, dst, name) == 0) {
        r = 0;
        goto out;
    }
    if (!have && errno != EXDEV) {
        fail(m, "move", rel, errno);
        goto out;
    }
    if (!have && mkdirat(dst, name, 0700) < 0) {
        fail(m, "make the folder", rel, errno);
        goto out;
    }
    if ((dfd = open_beneath(dst, name, O_RDONLY | O_DIRECTORY, 0)) < 0) {
        fail(m, "open", rel, errno);
        goto out;
    }
    (void)fchmod(dfd, 0700 | (st->st_mode & 07777)); /* writable while it is filled */
    if (opaque && fsetxattr(dfd, OPAQUE_XATTR, "y", 1, 0) < 0) {
        fail(m, "mark opaque", rel, errno);
        goto out;
    }
    if (merge_dir(m, sfd, dfd, rel, depth + 1) < 0)
        goto out;
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    if (fchmod(dfd, st->st_mode & 07777) < 0 || futimens(dfd, times) < 0) {
        fail(m, "set the mode of", rel, errno);
        goto out;
    }
    r = 0;
out:
    if (sfd >= 0)
        close(sfd);
    if (dfd >= 0)
        close(dfd);
    return r;
}

static int merge_dir(struct merge *m, int src, int dst, const char *rel, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(m, "go deeper than 128 folders into", rel, ELOOP);
    int fd = dup(src);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return fail(m, "read", rel, errno);
    }
    int r = 0;
    struct dirent *de;
    while (r == 0 && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            strcmp(de->d_name, TMP_NAME) == 0)
            continue;
        if (++m->entries > MAX_ENTRIES) {
            r = fail(m, "merge more than 200000 entries at", rel, EFBIG);
            break;
        }
        char *sub = rel[0] ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
        struct stat st;
        if (fstatat(src, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            r = fail(m, "stat", sub, errno);
        else if (S_ISDIR(st.st_mode))
            r = merge_sub(m, src, dst, de->d_name, sub, &st, depth);
        else
            r = merge_leaf(m, src, dst, de->d_name, sub, &st);
        free(sub);
    }
    closedir(d);
    return r;
}

/* A pending folder found in pending/: its lock taken exclusively (nobody writes or shows it) or
 * shared (ended, shown by another sandbox). */
struct cand {
    char name[64];
    int lock;
    bool excl;
    uint64_t start, end;
};

static int by_end(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The pending folders of pdfd that no live sandbox writes, locked, oldest end first; leftovers
 * of an interrupted removal (".p...") removed. How many, in c. */
static size_t scan(int pdfd, const char *own, struct cand *c)
{
    int fd = dup(pdfd);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t n = 0;
    struct dirent *de;
    while (n < HL_MAX_PENDING && (de = readdir(d))) {
        if (de->d_name[0] == '.' && name_start(de->d_name + 1)) {
            (void)hl_remove_tree(pdfd, de->d_name);
            continue;
        }
        uint64_t start = name_start(de->d_name);
        size_t len = strlen(de->d_name);
        if (!start || len >= sizeof c->name || strcmp(de->d_name, own) == 0)
            continue;
        char *path = xasprintf("%s/lock", de->d_name);
        int lk = open_beneath(pdfd, path, O_RDONLY, 0);
        free(path);
        struct stat st;
        if (lk < 0)
            continue;
        bool excl = flock(lk, LOCK_EX | LOCK_NB) == 0;
        if ((!excl && flock(lk, LOCK_SH | LOCK_NB) < 0) || fstat(lk, &st) < 0) {
            close(lk); /* a live sandbox writes it, or another one merges it now */
            continue;
        }
        memcpy(c[n].name, de->d_name, len + 1); /* shorter than c->name: checked above */
        c[n].lock = lk;
        c[n].excl = excl;
        c[n].start = start;
        c[n].end = ts_ns(&st.st_mtim);
        n++;
    }
    closedir(d);
    qsort(c, n, sizeof *c, by_end);
    return n;
}

/* Merge the exclusive candidates into target (a folder of the layer), oldest end first; each
 * merged one is removed. The shared ones, and the ones that could not be merged, are taken as
 * lowers (newest end first). *min_start: the earliest start of what was merged. One line per
 * failure, one for all conflicts. */
static void merge_all(int pdfd, int target, struct cand *c, size_t n, struct hl_taken *t,
                      uint64_t *min_start)
{
    uint64_t round = now_ns();
    size_t n_conflicts = 0;
    struct str_list conflicts = {0};
    for (size_t i = 0; i < n; i++) {
        if (!c[i].excl)
            continue;
        struct merge m = {.start = c[i].start, .end = c[i].end, .round = round};
        char *up = xasprintf("%s/upper", c[i].name);
        int src = open_beneath(pdfd, up, O_RDONLY | O_DIRECTORY, 0);
        free(up);
        int r = src < 0 && errno == ENOENT ? 0 : src < 0 ? fail(&m, "open", "", errno) : 0;
        if (src >= 0) {
            r = merge_dir(&m, src, target, "", 0);
            close(src);
        }
        for (size_t j = 0; j < m.conflicts.len; j++)
            if (!str_list_contains(&conflicts, m.conflicts.items[j]))
                str_list_push(&conflicts, m.conflicts.items[j]);
        n_conflicts += m.n_conflicts;
        if (r == 0) {
            char trash[sizeof c->name + 1];
            snprintf(trash, sizeof trash, ".%s", c[i].name);
            if (renameat(pdfd, c[i].name, pdfd, trash) == 0)
                (void)hl_remove_tree(pdfd, trash);
            if (c[i].start < *min_start)
                *min_start = c[i].start;
            close(c[i].lock);
            c[i].lock = -1;
        } else {
            /* Shown beneath, as a lower layer nobody may merge or remove while it is (a shared
             * lock: EX to SH never waits). */
            LOG_W("home",
                  "the home writes of an earlier sandbox of this workspace could not be merged "
                  "(%s): they stay pending, shown beneath this sandbox's",
                  m.why ? m.why : "unknown cause");
            c[i].excl = false;
            if (flock(c[i].lock, LOCK_SH) < 0) {
                close(c[i].lock);
                c[i].lock = -1;
            }
        }
        free(m.why);
        str_list_free(&m.conflicts);
    }
    if (n_conflicts) {
        char names[512] = "";
        size_t off = 0;
        for (size_t j = 0; j < conflicts.len && off < sizeof names; j++)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s~/%s", j ? ", " : "",
                                    conflicts.items[j]);
        LOG_W("home",
              "two sandboxes of this workspace wrote %s%s: the one that ended later is kept", names,
              n_conflicts > conflicts.len ? " and more" : "");
    }
    str_list_free(&conflicts);
    for (size_t k = n; k-- > 0;) {
        if (c[k].lock < 0)
            continue;
        if (t->lowers.len >= HL_MAX_LOWERS) {
            LOG_W("home",
                  "more than %d ended sandboxes' home writes wait to be merged: the "
                  "oldest are not shown here",
                  HL_MAX_LOWERS);
            for (size_t j = 0; j <= k; j++)
                if (c[j].lock >= 0)
                    close(c[j].lock);
            break;
        }
        t->lower_locks[t->lowers.len] = c[k].lock;
        str_list_push_owned(&t->lowers, xasprintf("pending/%s/upper", c[k].name));
    }
}

static int open_pending(int layer_fd, bool make, char *err, size_t errlen)
{
    if (make && mkdirat(layer_fd, "pending", 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot make the home layer's pending folder: %s", strerror(errno));
        return -1;
    }
    int fd = open_beneath(layer_fd, "pending", O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0 && (make || errno != ENOENT))
        snprintf(err, errlen, "cannot open the home layer's pending folder: %s", strerror(errno));
    return fd;
}

static void taken_init(struct hl_taken *t)
{
    memset(t, 0, sizeof *t);
    t->own_lock = -1;
}

int hl_take_holder(int layer_fd, struct hl_taken *t, char *err, size_t errlen)
{
    taken_init(t);
    int pdfd = open_pending(layer_fd, false, err, errlen);
    if (pdfd < 0)
        return errno == ENOENT ? 0 : -1;
    static struct cand c[HL_MAX_PENDING];
    size_t n = scan(pdfd, "", c);
    int target = n ? open_beneath(layer_fd, "upper", O_RDONLY | O_DIRECTORY, 0) : -1;
    if (n && target < 0 && errno == ENOENT && mkdirat(layer_fd, "upper", 0700) == 0)
        target = open_beneath(layer_fd, "upper", O_RDONLY | O_DIRECTORY, 0);
    if (n && target < 0) {
        snprintf(err, errlen, "cannot open the home layer's upper folder: %s", strerror(errno));
        for (size_t i = 0; i < n; i++)
            close(c[i].lock);
        close(pdfd);
        return -1;
    }
    uint64_t min_start = UINT64_MAX;
    merge_all(pdfd, target, c, n, t, &min_start);
    if (target >= 0)
        close(target);
    close(pdfd);
    return 0;
}

/* Take c, a pending folder nobody writes or shows (its lock held exclusively), as this sandbox's
 * own: its upper as it is, its work folder rid of the mark its volatile mount left (overlayfs
 * clears the rest at the mount, as for the layer's own work folder). 0, or -1: not usable. */
static int adopt(int pdfd, const struct cand *c)
{
    static const struct {
        const char *path;
        int flags;
    } marks[] = {{"work/incompat/volatile/dirty", 0},
                 {"work/incompat/volatile", AT_REMOVEDIR},
                 {"work/incompat", AT_REMOVEDIR}};
    char *up = xasprintf("%s/upper", c->name), *wk = xasprintf("%s/work", c->name);
    int ufd = open_beneath(pdfd, up, O_RDONLY | O_DIRECTORY, 0);
    int wfd = ufd < 0 ? -1 : open_beneath(pdfd, wk, O_RDONLY | O_DIRECTORY, 0);
    int r = wfd < 0 ? -1 : 0;
    for (size_t i = 0; r == 0 && i < ARRAY_LEN(marks); i++)
        if (unlinkat(wfd, marks[i].path, marks[i].flags) < 0 && errno != ENOENT)
            r = -1;
    if (ufd >= 0)
        close(ufd);
    if (wfd >= 0)
        close(wfd);
    free(up);
    free(wk);
    return r;
}

int hl_take_pending(int layer_fd, struct hl_taken *t, char *err, size_t errlen)
{
    taken_init(t);
    int pdfd = open_pending(layer_fd, true, err, errlen), own = -1, r = -1;
    if (pdfd < 0)
        return -1;
    static struct cand c[HL_MAX_PENDING];
    size_t n = scan(pdfd, "", c);
    /* The ended pending upper that ended first and that nobody shows becomes this sandbox's own
     * as it is (a rename-free take-over, no copy: a run beside a session after another such run
     * pays nothing for the other's writes); the others nobody shows are merged into it. */
    for (size_t i = 0; i < n && !t->own[0]; i++) {
        if (!c[i].excl || adopt(pdfd, &c[i]) < 0)
            continue;
        memcpy(t->own, c[i].name, sizeof t->own);
        t->own_lock = c[i].lock;
        c[i].lock = -1;
        c[i].excl = false;
    }
    uint64_t start = now_ns();
    unsigned rnd = 0;
    for (int tries = 0; !t->own[0] && tries < 8; tries++) {
        if (getentropy(&rnd, sizeof rnd) < 0)
            rnd = (unsigned)getpid() ^ (unsigned)start;
        snprintf(t->own, sizeof t->own, "p%016llx-%08x", (unsigned long long)start, rnd);
        if (mkdirat(pdfd, t->own, 0700) == 0)
            break;
        t->own[0] = 0;
        if (errno != EEXIST)
            break;
    }
    if (!t->own[0] || (own = open_beneath(pdfd, t->own, O_RDONLY | O_DIRECTORY, 0)) < 0 ||
        (t->own_lock < 0 &&
         (mkdirat(own, "upper", 0700) < 0 || mkdirat(own, "work", 0700) < 0 ||
          (t->own_lock = open_beneath(own, "lock", O_RDONLY | O_CREAT | O_EXCL, 0600)) < 0 ||
          flock(t->own_lock, LOCK_EX | LOCK_NB) < 0))) {
        snprintf(err, errlen, "cannot make a pending upper in the home layer's folder: %s",
                 strerror(errno));
        for (size_t i = 0; i < n; i++)
            if (c[i].lock >= 0)
                close(c[i].lock);
        goto out;
    }
    start = name_start(t->own);
    int target = open_beneath(own, "upper", O_RDONLY | O_DIRECTORY, 0);
    uint64_t min_start = start;
    if (target >= 0) {
        merge_all(pdfd, target, c, n, t, &min_start);
        close(target);
    } else {
        for (size_t i = 0; i < n; i++)
            if (c[i].lock >= 0)
                close(c[i].lock);
    }
    if (min_start < start) {
        /* It holds what started earlier: its name says so, for the conflicts of its merge. */
        char name[sizeof t->own];
        snprintf(name, sizeof name, "p%016llx-%s", (unsigned long long)min_start,
                 strchr(t->own, '-') + 1);
        if (renameat(pdfd, t->own, pdfd, name) == 0)
            snprintf(t->own, sizeof t->own, "%s", name);
    }
    r = 0;
out:
    if (own >= 0)
        close(own);
    if (r < 0 && t->own_lock >= 0)
        close(t->own_lock);
    if (r < 0) {
        t->own_lock = -1;
        t->own[0] = 0;
    }
    close(pdfd);
    return r;
}

void hl_release(struct hl_taken *t, int layer_fd)
{
    if (t->own_lock >= 0 && layer_fd >= 0) {
        /* Its end, for the order of merges: through layer_fd, as the lock's own descriptor is
         * on a mount that is read-only by now. */
        char *path = xasprintf("pending/%s/lock", t->own);
        if (utimensat(layer_fd, path, NULL, AT_SYMLINK_NOFOLLOW) < 0)
            LOG_W("home",
                  "cannot mark the end of this sandbox's home writes (%s): they may lose "
                  "to older writes of the same files",
                  strerror(errno));
        free(path);
    }
    if (t->own_lock >= 0)
        close(t->own_lock);
    t->own_lock = -1;
    for (size_t i = 0; i < t->lowers.len; i++)
        close(t->lower_locks[i]);
    str_list_free(&t->lowers);
}

void hl_list(int layer_fd, struct str_list *names)
{
    char err[128];
    int pdfd = open_pending(layer_fd, false, err, sizeof err);
    DIR *d = pdfd < 0 ? NULL : fdopendir(pdfd);
    if (!d) {
        if (pdfd >= 0)
            close(pdfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) && names->len < HL_MAX_PENDING)
        if (name_start(de->d_name))
            str_list_push(names, de->d_name);
    closedir(d);
}

bool hl_any_live(int layer_fd)
{
    struct str_list names = {0};
    hl_list(layer_fd, &names);
    bool live = false;
    for (size_t i = 0; i < names.len && !live; i++) {
        char *path = xasprintf("pending/%s/lock", names.items[i]);
        int lk = open_beneath(layer_fd, path, O_RDONLY, 0);
        free(path);
        if (lk < 0)
            continue;
        live = flock(lk, LOCK_SH | LOCK_NB) < 0;
        close(lk);
    }
    str_list_free(&names);
    return live;
}
