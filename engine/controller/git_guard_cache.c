/* git_guard_cache.c — the kept file of the git guard: the tree of folders the last walk saw,
 * written after a check and read back by the next run's guard of the same tree, so that its
 * first walk is incremental too. Owns the payload's format, its writer and its reader, which
 * checks every field; the file around it is base/record.h's (magic, version, length, check).
 * Must never: take from the file more than which sub-folders a folder had at the stamps it
 * gives (anything amiss: a full walk). */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/dir_stamp.h"
#include "base/record.h"
#include "controller/git_guard_private.h"

/* Every `cordon run` is a new process: without this its first walk lists every folder. The
 * tree the last run's check left is kept in cordon's state directory (which no sandbox can see
 * or write: protect_own_dirs) and read back by the next guard of the same tree. All it is
 * trusted for is what the tree in memory is: "this folder's entries were these when it had this
 * (dev, ino, ctime)"; a folder changed since is listed, every `.git` found is read afresh, and
 * anything odd in the file (a field out of bounds, another device or root inode, another
 * format or version, a failed check, a size past the cap) makes the walk a full one.
 * A kept file of base/record.h (magic "cordgwk\n"), its payload:
 *   u32 records, u64 dev, u64 the root's inode;
 *   records, depth first (a folder, then its sub-folders' records): u64 ino, i64 ctime
 *   seconds, u32 ctime nanoseconds, u32 sub-folders, u8 flags, u8 the `.git`'s DT_ type,
 *   u16 name length, the name.
 * Version 1 was a file of its own format ("cordon git walk\n"): read as absent. */
#define CACHE_MAGIC "cordgwk\n"
#define CACHE_VERSION 2u
#define CACHE_HEAD (4 + 8 + 8)
#define CACHE_REC (8 + 8 + 4 + 4 + 1 + 1 + 2)
#define CACHE_MAX_RECS (NAMES_MAX + 1) /* every name a tree holds, and its root */
#define CACHE_MAX (CACHE_HEAD + (size_t)CACHE_MAX_RECS * (CACHE_REC + NAME_MAX))
#define CACHE_LISTED 1u
#define CACHE_RACY 2u

struct cache_out {
    struct rec_out o;
    uint32_t recs;
    dev_t dev;
};

/* d and what is below it; a folder of another file system or one whose ctime is not trusted
 * goes in as a name only (listed when next reached). */
static void cache_put(struct cache_out *c, const struct gg_dir *d)
{
    bool keep = d->listed && d->trusted && d->dev == c->dev;
    uint32_t subs = keep ? (uint32_t)d->n : 0;
    uint16_t nlen = (uint16_t)strlen(d->name);
    rec_put_u64(&c->o, keep ? (uint64_t)d->ino : 0);
    rec_put_i64(&c->o, keep ? (int64_t)d->ctime.tv_sec : 0);
    rec_put_u32(&c->o, keep ? (uint32_t)d->ctime.tv_nsec : 0);
    rec_put_u32(&c->o, subs);
    rec_put_u8(&c->o, keep ? (uint8_t)(CACHE_LISTED | (d->racy ? CACHE_RACY : 0)) : 0);
    rec_put_u8(&c->o, keep ? d->dotgit : 0);
    rec_put_u16(&c->o, nlen);
    rec_put(&c->o, d->name, nlen);
    c->recs++;
    for (size_t i = 0; i < subs; i++)
        cache_put(c, d->subs[i]);
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
    struct cache_out c = {.dev = st.st_dev};
    rec_put_u32(&c.o, 0); /* the records: filled in below */
    rec_put_u64(&c.o, (uint64_t)st.st_dev);
    rec_put_u64(&c.o, (uint64_t)st.st_ino);
    cache_put(&c, g->tree);
    memcpy(c.o.data, &c.recs, 4);
    if (c.recs <= CACHE_MAX_RECS && c.o.len <= CACHE_MAX &&
        rec_file_write(g->cache, CACHE_MAGIC, CACHE_VERSION, &c.o) == 0)
        g->tree_dirty = false;
    rec_out_free(&c.o);
}

struct cache_in {
    struct rec_in in;
    uint32_t left; /* records not read yet */
    dev_t dev;
};

/* One record and those below it, each field checked; NULL when anything is off. */
static struct gg_dir *cache_get(struct cache_in *c, int depth)
{
    if (c->left == 0 || depth > GIT_GUARD_MAX_DEPTH + 1)
        return NULL;
    struct rec_in *in = &c->in;
    uint64_t ino = rec_get_u64(in);
    int64_t sec = rec_get_i64(in);
    uint32_t nsec = rec_get_u32(in), subs = rec_get_u32(in);
    uint8_t flags = rec_get_u8(in), dotgit = rec_get_u8(in);
    uint16_t nlen = rec_get_u16(in);
    const unsigned char *name = nlen <= NAME_MAX ? rec_get_raw(in, nlen) : NULL;
    if (in->bad || !name)
        return NULL;
    c->left--;
    if (nlen == 0 || memchr(name, '/', nlen) || memchr(name, '\0', nlen) || nsec >= 1000000000u ||
        (flags & ~(CACHE_LISTED | CACHE_RACY)) || dotgit > DT_WHT || subs > c->left ||
        (!(flags & CACHE_LISTED) && (subs || dotgit || ino || sec || nsec)))
        return NULL;
    bool dot = nlen == 1 && name[0] == '.', dotdot = nlen == 2 && memcmp(name, "..", 2) == 0;
    if (dotdot || dot != (depth == 0)) /* "." is the root's name, and only the root's */
        return NULL;
    struct gg_dir *d = xcalloc(1, sizeof *d);
    d->name = xasprintf("%.*s", (int)nlen, (const char *)name);
    if (flags & CACHE_LISTED) {
        d->listed = d->trusted = true; /* the root's file system, trusted (gg_cache_load) */
        d->racy = flags & CACHE_RACY;
        d->dev = c->dev;
        d->ino = (ino_t)ino;
        d->ctime = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = (long)nsec};
        d->dotgit = dotgit;
    }
    if (subs)
        d->subs = xcalloc(subs, sizeof *d->subs);
    for (uint32_t i = 0; i < subs; i++) {
        if (!(d->subs[d->n] = cache_get(c, depth + 1))) {
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
    struct cache_in c = {.dev = 0};
    struct gg_dir *root = NULL;
    if (!g->cache || fstat(g->wsfd, &ws) < 0 || !dir_stamp_fs_trusted(g->wsfd) ||
        rec_file_read(g->cache, CACHE_MAGIC, CACHE_VERSION, CACHE_MAX, &buf, &c.in) < 0)
        return NULL;
    c.dev = ws.st_dev;
    uint32_t recs = rec_get_u32(&c.in);
    uint64_t dev = rec_get_u64(&c.in), ino = rec_get_u64(&c.in);
    if (c.in.bad || recs == 0 || recs > CACHE_MAX_RECS || dev != (uint64_t)ws.st_dev ||
        ino != (uint64_t)ws.st_ino)
        goto out;
    c.left = recs;
    root = cache_get(&c, 0);
    if (root && (c.left || !rec_in_done(&c.in) || !root->listed || root->ino != ws.st_ino)) {
        gg_dir_free(root); /* records left over, or a root of another inode */
        root = NULL;
    }
out:
    free(buf);
    return root;
}
