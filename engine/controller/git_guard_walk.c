/* git_guard_walk.c — the walk that finds the workspace's repositories: at most
 * GIT_GUARD_MAX_DEPTH levels and GIT_GUARD_MAX_DIRS folders, node_modules skipped, each `.git`
 * handed to the snapshot (gg_add_dotgit). Incremental: a folder whose (dev, ino, ctime) are
 * those the last walk saw, on a file system whose ctime is trusted (base/dir_stamp.h), is not
 * listed again. Must never: follow a symbolic link, or trust a stamp too close to the walk. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir_stamp.h"
#include "controller/git_guard_private.h"

/* A ctime too close to the walk's start (dir_stamp_settled) may be shared by a change made just
 * after the folder was listed: such a folder is listed again next time. */

void gg_dir_free(struct gg_dir *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        gg_dir_free(d->subs[i]);
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
        gg_dir_free(o);
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
        gg_dir_free(old);
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
                gg_add_dotgit(w->g, w->s, w->rel, type);
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
                gg_dir_free(visit_sub(w, fd, d, dir_stub(de->d_name), depth));
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
    gg_dir_free(old); /* what was not matched by name */
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
                    gg_add_dotgit(w->g, w->s, w->rel, old->dotgit);
                return old;
            }
        } else {
            int fd = gg_open_beneath(pfd, old->name, O_PATH | O_DIRECTORY);
            if (fd >= 0 && fstat(fd, &st) == 0 && same_stamp(old, &st)) {
                w->s->dirs++;
                w->names += old->n;
                if (old->dotgit)
                    gg_add_dotgit(w->g, w->s, w->rel, old->dotgit);
                visit_subs(w, fd, old, depth);
                close(fd);
                return old;
            }
            if (fd >= 0)
                close(fd);
        }
    }
    int fd = gg_open_beneath(pfd, old->name, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        int e = errno;
        gg_dir_free(old);
        errno = e;
        return NULL;
    }
    return list_dir(w, fd, old, depth, pdev, ptrusted);
}

int gg_walk(struct git_guard *g, struct gg_snap *s)
{
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
    return r;
}
