/* git_guard_cache.c — the kept file of the git guard: the tree of folders the last walk saw,
 * written after a check and read back by the next run's guard of the same tree, so that its
 * first walk is incremental too. Owns the file's format, its writer and its reader, which checks
 * every field. Must never: take from the file more than which sub-folders a folder had at the
 * stamps it gives (anything amiss: a full walk). */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/dir_stamp.h"
#include "controller/git_guard_private.h"

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
void gg_cache_save(struct git_guard *g)
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
            gg_dir_free(d);
            return NULL;
        }
        d->n++;
    }
    return d;
}

/* The tree g->cache holds for this workspace, or NULL (a full walk) when there is none, it
 * cannot be read whole, or anything in it does not fit. */
struct gg_dir *gg_cache_load(const struct git_guard *g)
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
        gg_dir_free(root); /* records left over, or a root of another inode */
        root = NULL;
    }
out:
    free(buf);
    return root;
}
