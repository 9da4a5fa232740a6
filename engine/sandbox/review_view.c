/* review_view.c — see review_view.h. The overlay's options: `userxattr` (the only xattr
 * namespace a user namespace may use), redirect_dir=nofollow and metacopy=off (both would follow
 * attributes a command could forge, and neither is allowed with userxattr), index=off and
 * xino=off (no inode games on the host's file system). Not `volatile`, unlike the home's layer:
 * pending changes are the person's work, and must survive a crash of the host as the files
 * would have. The upper's root takes the workspace's own mode and owner at each start, since
 * the overlay's root shows the upper directory's. */
#include "sandbox/review_view.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/kernel_lacks.h"
#include "base/util.h"
#include "sandbox/overlay_stage.h"
#include "sandbox/review_layer.h"

#define REVIEW_OVERLAY_OPTS "userxattr,redirect_dir=nofollow,metacopy=off,index=off,xino=off"
#define STAGE_LOWER "ws"
#define STAGE_LAYER "rl"

/* Where init attached a shifted root caller's layer folder, or NULL. */
static const char *staged_layer;
/* Kept from the view's overlay for a session's rollback (review_view_swap): the workspace tree
 * (the lower) and the layer folder's tree, attached in a mount namespace of their own (kept_ns,
 * made by a thread of init's, never entered by a command), where they can be cloned again on
 * every kernel (Linux before 6.15 clones no detached tree another namespace made; a mount is
 * cloned only in its own namespace); folders of them there, or -1 until then. */
static int kept_ns = -1, kept_ws = -1, kept_layer = -1;
static bool keep_for_swap; /* a session's init: review_view_keep_for_swap */

void review_view_keep_for_swap(void)
{
    keep_for_swap = true;
}

void review_view_use_layer(const char *path)
{
    staged_layer = path;
}

int review_view_take(const struct sandbox_config *cfg, struct review_view *rv, struct mnt_err *e)
{
    rv->layer_fd = rv->lock_fd = -1;
    if (!cfg->review || cfg->workspace_readonly)
        return 0;
    if (!cfg->review_layer) {
        snprintf(e->buf, e->len, "review mode: the controller named no review layer");
        return -1;
    }
    const char *layer = staged_layer ? staged_layer : cfg->review_layer;
    char *lock = xasprintf("%s/lock", layer);
    /* Read-only: a descriptor open for writing would keep the host's mount from turning
     * read-only (EBUSY); flock needs none. */
    rv->lock_fd = open(lock, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    free(lock);
    if (rv->lock_fd < 0)
        return mnt_fail(e, "open the review layer's lock in", cfg->review_layer);
    if (flock(rv->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        snprintf(e->buf, e->len,
                 "the review layer of %s is in use by another sandbox in review mode (a session "
                 "or a run): one at a time writes it; wait for it to end, or run without --review",
                 cfg->workspace);
        return -1;
    }
    rv->layer_fd = open_tree(AT_FDCWD, layer, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (rv->layer_fd < 0)
        return mnt_fail(e, "open_tree", cfg->review_layer);
    return 0;
}

struct staged_review {
    int tmpfs_fd, ws_fd, layer_fd;
    const char *dir; /* the folder of upper/ and work/ in the layer: "." or a rollback's */
    int mnt_fd;
    char err[512];
};

/* On a staging thread: the workspace and the layer folder attached on a private tmpfs, the
 * overlay built detached from their staging names. */
static int build(void *arg)
{
    struct staged_review *s = arg;
    struct mnt_err e = {s->err, sizeof s->err};
    struct overlay_stage sg = {.saved_ns = -1};
    s->mnt_fd = -1;
    /* A rollback's staging comes once the view may be shared (a session whose execs each get a
     * fresh sandbox, session.exec_per_command): a copy of init's namespace would then share its
     * mounts, and the staging would show in init's and every fresh sandbox's. A private copy of
     * its own first (this thread ends with it). */
    if (strcmp(s->dir, ".") != 0 &&
        (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)) {
        mnt_fail(&e, "make a private namespace to stage", "the workspace");
        return 0;
    }
    if (overlay_stage_begin(&sg, s->tmpfs_fd, true, &e) == 0 &&
        overlay_stage_attach(s->tmpfs_fd, s->ws_fd, STAGE_LOWER, &e) == 0 &&
        overlay_stage_attach(s->tmpfs_fd, s->layer_fd, STAGE_LAYER, &e) == 0) {
        char *opts = xasprintf("lowerdir=./" STAGE_LOWER ",upperdir=./" STAGE_LAYER
                               "/%s/upper,workdir=./" STAGE_LAYER "/%s/work," REVIEW_OVERLAY_OPTS,
                               s->dir, s->dir);
        s->mnt_fd =
            overlay_stage_mount(opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the workspace", &e);
        free(opts);
    }
    overlay_stage_end(&sg);
    return 0;
}

/* The overlay of ws_fd with dir/upper and dir/work of the layer's tree layer_fd: a detached
 * mount fd, or -1 with one line in e. */
static int overlay_of(const char *workspace, int layer_fd, const char *dir, int ws_fd,
                      struct mnt_err *e)
{
    struct stat ws, up;
    if (fstat(ws_fd, &ws) < 0)
        return mnt_fail(e, "stat", workspace);
    /* The overlay's root shows the upper's mode and owner: the workspace's own. */
    char *upper = xasprintf("%s/upper", dir);
    int st = fstatat(layer_fd, upper, &up, AT_SYMLINK_NOFOLLOW);
    if (st == 0 && !S_ISDIR(up.st_mode)) {
        st = -1;
        errno = ENOTDIR;
    }
    if (st == 0 && (up.st_mode & 07777) != (ws.st_mode & 07777))
        st = fchmodat(layer_fd, upper, ws.st_mode & 07777, 0);
    free(upper);
    if (st < 0)
        return mnt_fail(e, "prepare the review layer's upper of", workspace);
    struct staged_review s = {.ws_fd = ws_fd, .layer_fd = layer_fd, .dir = dir, .mnt_fd = -1};
    if ((s.tmpfs_fd = mnt_detached_tmpfs(e, "0755")) < 0)
        return -1;
    int r = overlay_stage_run(build, &s);
    close(s.tmpfs_fd);
    if (r < 0) {
        errno = -r;
        return mnt_fail(e, "start the review overlay's builder for", workspace);
    }
    if (s.mnt_fd < 0) {
        snprintf(e->buf, e->len,
                 "review mode: cannot mount the copy-on-write workspace over %s: %s", workspace,
                 s.err);
        return -1;
    }
    return s.mnt_fd;
}

/* The keeper's work, on a thread of init's: its own namespace (a private copy of init's), a
 * tmpfs on its "/", the workspace's and the layer's detached trees attached on folders of it
 * (taken from in_ws, in_layer), a copy of each for the overlay now (out_ws, out_layer), and the
 * namespace kept open by kept_ns so that it outlives the thread. */
struct keeper {
    int in_ws, in_layer, out_ws, out_layer;
    char err[256];
};

static int clone_at(int dir)
{
    return open_tree(dir, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
}

static int keep(void *arg)
{
    struct keeper *k = arg;
    struct mnt_err e = {k->err, sizeof k->err};
    int t = -1;
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        mnt_fail(&e, "make a namespace to keep", "the workspace's tree");
        return 0;
    }
    /* the namespace's handle before anything is mounted on its "/" */
    if ((kept_ns = open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC)) < 0) {
        mnt_fail(&e, "open", "/proc/thread-self/ns/mnt");
        return 0;
    }
    if ((t = mnt_detached_tmpfs(&e, "0700")) < 0)
        return 0;
    if (move_mount(t, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0 ||
        overlay_stage_attach(t, k->in_ws, STAGE_LOWER, &e) < 0 ||
        overlay_stage_attach(t, k->in_layer, STAGE_LAYER, &e) < 0) {
        mnt_fail(&e, "keep", "the workspace's tree");
        close(t);
        return 0;
    }
    kept_ws = openat(t, STAGE_LOWER, O_PATH | O_DIRECTORY | O_CLOEXEC);
    kept_layer = openat(t, STAGE_LAYER, O_PATH | O_DIRECTORY | O_CLOEXEC);
    close(t);
    if (kept_ws >= 0 && kept_layer >= 0 && kept_ns >= 0) {
        k->out_ws = clone_at(kept_ws);
        k->out_layer = clone_at(kept_layer);
    }
    if (k->out_ws < 0 || k->out_layer < 0)
        mnt_fail(&e, "copy the kept trees of", "the workspace");
    return 0;
}

/* Copies of the kept trees, cloned in their namespace on a thread of init's. */
struct kept_copy {
    int ws, layer, err;
};

static int copy_kept(void *arg)
{
    struct kept_copy *c = arg;
    /* the thread's own fs first (setns refuses a mount namespace to a thread sharing it) */
    if (unshare(CLONE_NEWNS) < 0 || setns(kept_ns, CLONE_NEWNS) < 0) {
        c->err = errno;
        return 0;
    }
    c->ws = clone_at(kept_ws);
    c->layer = clone_at(kept_layer);
    if (c->ws < 0 || c->layer < 0)
        c->err = errno;
    return 0;
}

int review_view_mount(const struct sandbox_config *cfg, struct review_view *rv, int ws_fd,
                      struct mnt_err *e)
{
    /* A session may roll back (review_view_swap): it builds the overlay again from copies of
     * these, kept attached in a namespace of their own, and the overlay now is built from a
     * copy too. Without them, no rollback. */
    if (keep_for_swap && kept_ns < 0) {
        struct keeper k = {.in_ws = ws_fd, .in_layer = rv->layer_fd, .out_ws = -1, .out_layer = -1};
        int r = overlay_stage_run(keep, &k);
        if (r < 0 || k.out_ws < 0 || k.out_layer < 0) {
            if (k.out_ws >= 0)
                close(k.out_ws);
            if (k.out_layer >= 0)
                close(k.out_layer);
            snprintf(e->buf, e->len, "review mode: cannot keep the trees of %s for a rollback: %s",
                     cfg->workspace, r < 0 ? strerror(-r) : k.err);
            return -1;
        }
        /* the originals are attached in the keeper now: the copies take their place */
        close(rv->layer_fd);
        rv->layer_fd = k.out_layer;
        int ov = overlay_of(cfg->workspace, rv->layer_fd, ".", k.out_ws, e);
        close(k.out_ws);
        return ov;
    }
    return overlay_of(cfg->workspace, rv->layer_fd, ".", ws_fd, e);
}

void review_view_release(struct review_view *rv)
{
    if (rv->layer_fd >= 0)
        close(rv->layer_fd);
    rv->layer_fd = -1;
}

/* ---- a session's rollback ------------------------------------------------------------------ */

#ifndef MOVE_MOUNT_BENEATH
#define MOVE_MOUNT_BENEATH 0x00000200 /* Linux 6.5 */
#endif

/* One mount of /proc/self/mountinfo. */
struct mount_row {
    unsigned id, parent;
    dev_t dev;
    char *point; /* unescaped */
};

/* "\040" and the like back to bytes, in place. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

static size_t read_mounts(struct mount_row **out)
{
    char *text = NULL;
    size_t len = 0, n = 0, cap = 0;
    *out = NULL;
    if (read_file("/proc/self/mountinfo", 0, 16 << 20, &text, &len) < 0)
        return 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned id, parent, major, minor;
        char root[16], point[4096];
        if (sscanf(line, "%u %u %u:%u %15s %4095s", &id, &parent, &major, &minor, root, point) != 6)
            continue;
        unescape(point);
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            *out = xrealloc(*out, cap * sizeof **out);
        }
        (*out)[n++] = (struct mount_row){id, parent, makedev(major, minor), xstrdup(point)};
    }
    free(text);
    return n;
}

static unsigned mount_id_of(int fd)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
        return 0;
    return (unsigned)sx.stx_mnt_id;
}

/* The mount attributes a child mount had (read-only and the like), from its statfs flags. */
static unsigned long long attrs_of(int fd)
{
    struct statfs fs;
    unsigned long long a = 0;
    if (fstatfs(fd, &fs) < 0)
        return MOUNT_ATTR_RDONLY; /* fail closed: a protection we cannot read stays one */
    if (fs.f_flags & ST_RDONLY)
        a |= MOUNT_ATTR_RDONLY;
    if (fs.f_flags & ST_NOSUID)
        a |= MOUNT_ATTR_NOSUID;
    if (fs.f_flags & ST_NODEV)
        a |= MOUNT_ATTR_NODEV;
    if (fs.f_flags & ST_NOEXEC)
        a |= MOUNT_ATTR_NOEXEC;
    return a;
}

/* Put the copy of old's child mount c (at rel below the workspace) on the new overlay ov:
 * a bind of the old overlay itself (a read-only cover of a readonly_in_workspace path) becomes
 * the same bind of the new one, any other mount (a writable path inside the workspace, a
 * hidden path's cover) is cloned with what is mounted below it. The target is opened beneath
 * ov and never through a link. 1 placed, 0 skipped (its place is gone in the new view), -1. */
static int place_child(int old, int ov, dev_t old_dev, const struct mount_row *c, const char *rel,
                       struct mnt_err *e)
{
    int target = review_open_beneath(ov, rel, O_PATH, 0);
    if (target < 0)
        return errno == ENOENT || errno == ELOOP || errno == EXDEV ? 0
                                                                   : mnt_fail(e, "open", c->point);
    int src = open_tree(old, rel, OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
    int copy = -1, dead = -1, r = -1;
    if (src < 0) {
        mnt_fail(e, "open_tree", c->point);
        goto out;
    }
    if (c->dev == old_dev) {
        copy = open_tree(ov, rel, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
        struct mount_attr attr = {.attr_set = attrs_of(src)};
        if (copy >= 0 && mount_setattr(copy, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
            close(copy);
            copy = -1;
        }
    } else {
        /* A hidden folder's cover, a folder removed once mounted (hide.c), is made again the
         * same way: a copy of it could not be mounted (its root is gone). */
        struct stat sst;
        if (fstat(src, &sst) == 0 && S_ISDIR(sst.st_mode) && sst.st_nlink == 0)
            dead = mnt_detached_tmpfs(e, "0755");
        else
            copy = open_tree(
                old, rel, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
        if (dead >= 0 && mkdirat(dead, "dir", 0555) == 0)
            copy = open_tree(dead, "dir", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    }
    if (copy < 0) {
        mnt_fail(e, "copy the mount at", c->point);
        goto out;
    }
    if (move_mount(copy, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
        mnt_fail(e, "place again", c->point);
        goto out;
    }
    /* the cover's folder removed now it is mounted: nothing can be looked up or made in it */
    if (dead >= 0 && unlinkat(dead, "dir", AT_REMOVEDIR) < 0) {
        mnt_fail(e, "remove the cover of", c->point);
        goto out;
    }
    r = 1;
out:
    if (dead >= 0)
        close(dead);
    if (copy >= 0)
        close(copy);
    if (src >= 0)
        close(src);
    close(target);
    return r;
}

/* ---- a rollback on Linux before 6.5: the new view stacked on the old ----------------------- */

/* Rollbacks a session may stack (each old view stays mounted beneath the new one). */
#define STACKED_MAX 16
#define STAGE_VIEW "view"

/* Whether move_mount beneath works here: 0 not tried yet, 1 yes, -1 no (the kernel's EINVAL,
 * or the test switch): asked once, then every rollback of the session goes the same way. */
static int beneath_works;
static unsigned stacked_count;

/* How one child mount of the old view is made again on the staged new one. */
enum child_kind {
    CHILD_SELF, /* a bind of the overlay itself (a read-only cover): the same bind of the new */
    CHILD_DEAD, /* a hidden folder's cover whose folder is gone: a fresh one */
    CHILD_COPY, /* anything else (a writable path, a hidden file's cover): a copy of it */
};

struct child_plan {
    const char *rel, *point; /* below the workspace; the whole path, for messages */
    enum child_kind kind;
    unsigned long long attrs; /* CHILD_SELF: the mount attributes it had */
    int copy;                 /* CHILD_COPY: a detached copy, made in init's namespace */
};

struct staged_stack {
    int tmpfs_fd, ov;
    struct child_plan *plan;
    size_t n_plan;
    int tree; /* out: a detached copy of the staged view with every child on it */
    char err[512];
};

/* The plan's child p placed on the staged view (folder fd view) at p->rel. 1, 0 skipped (its
 * place is gone in the new view), -1 with e set. */
static int stage_child(struct staged_stack *s, int view, const struct child_plan *p, size_t i,
                       struct mnt_err *e)
{
    int target = review_open_beneath(view, p->rel, O_PATH, 0);
    if (target < 0)
        return errno == ENOENT || errno == ELOOP || errno == EXDEV ? 0
                                                                   : mnt_fail(e, "open", p->point);
    int copy = -1, r = -1;
    char dead[32] = "";
    if (p->kind == CHILD_SELF) {
        copy = open_tree(view, p->rel, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
        struct mount_attr attr = {.attr_set = p->attrs};
        if (copy >= 0 && mount_setattr(copy, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
            close(copy);
            copy = -1;
        }
    } else if (p->kind == CHILD_DEAD) {
        /* A fresh tmpfs attached in the staging (a detached one is not cloned before 6.15),
         * a folder of it bound, then removed once mounted, as hide.c makes it. */
        snprintf(dead, sizeof dead, "dead%zu", i);
        int t = mnt_detached_tmpfs(e, "0755");
        if (t < 0 || overlay_stage_attach(s->tmpfs_fd, t, dead, e) < 0) {
            if (t >= 0)
                close(t);
            close(target);
            return -1;
        }
        close(t);
        char *d = xasprintf("%s/dir", dead);
        if (mkdirat(s->tmpfs_fd, d, 0555) == 0)
            copy = open_tree(s->tmpfs_fd, d, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        free(d);
    } else {
        copy = p->copy;
    }
    if (copy < 0) {
        mnt_fail(e, "copy the mount at", p->point);
        goto out;
    }
    if (move_mount(copy, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
        mnt_fail(e, "place again", p->point);
        goto out;
    }
    if (dead[0]) {
        char *d = xasprintf("%s/dir", dead);
        int u = unlinkat(s->tmpfs_fd, d, AT_REMOVEDIR);
        free(d);
        if (u < 0) {
            mnt_fail(e, "remove the cover of", p->point);
            goto out;
        }
    }
    r = 1;
out:
    if (copy >= 0 && copy != p->copy)
        close(copy);
    close(target);
    return r;
}

/* On a staging thread: the new overlay attached on a folder of a private tmpfs in a mount
 * namespace of the thread's own (a private copy of init's: no command is in it, and init is not
 * dumpable, so none reaches it by /proc/PID/root either), every child placed on it there, then a
 * detached copy of the whole tree taken for init to attach in one step. */
static int build_stack(void *arg)
{
    struct staged_stack *s = arg;
    struct mnt_err e = {s->err, sizeof s->err};
    struct overlay_stage sg = {.saved_ns = -1};
    int view = -1;
    s->tree = -1;
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        mnt_fail(&e, "make a private namespace to stage", "the workspace");
        return 0;
    }
    if (overlay_stage_begin(&sg, s->tmpfs_fd, true, &e) < 0 ||
        overlay_stage_attach(s->tmpfs_fd, s->ov, STAGE_VIEW, &e) < 0)
        goto out;
    if ((view = openat(s->tmpfs_fd, STAGE_VIEW, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
        mnt_fail(&e, "open the staged view of", "the workspace");
        goto out;
    }
    for (size_t i = 0; i < s->n_plan; i++)
        if (stage_child(s, view, &s->plan[i], i, &e) < 0)
            goto out;
    s->tree =
        open_tree(view, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    if (s->tree < 0)
        mnt_fail(&e, "copy the staged view of", "the workspace");
out:
    if (view >= 0)
        close(view);
    overlay_stage_end(&sg);
    return 0;
}

static bool beneath_refused(void)
{
    return kernel_lacks_forced("move_mount_beneath");
}

/* The fallback: the new overlay ov made whole (every child of old on it) in a staging nobody
 * else sees, then attached on workspace in one step, on top of the old one, which stays mounted
 * beneath it (it cannot be detached without what is on it). rows: init's mounts. The old tree's
 * ids into got (as many as n + 1). 0 or -1 with e set (nothing changed then). */
static int stack_swap(const char *workspace, int old, unsigned old_id, dev_t old_dev, int ov,
                      const struct mount_row *rows, size_t n, unsigned *got, size_t *n_got,
                      struct mnt_err *e)
{
    if (stacked_count >= STACKED_MAX) {
        snprintf(e->buf, e->len,
                 "this session has rolled back %u times on a kernel before Linux 6.5, where each "
                 "old view stays mounted beneath the new one; stop the session and start it again "
                 "to roll back further (cordon review shows the pending changes)",
                 stacked_count);
        return -1;
    }
    struct child_plan *plan = xcalloc(n + 1, sizeof *plan);
    size_t n_plan = 0, wlen = strlen(workspace);
    int r = -1;
    for (size_t i = 0; i < n; i++) {
        const struct mount_row *c = &rows[i];
        if (c->parent != old_id || strncmp(c->point, workspace, wlen) != 0 || c->point[wlen] != '/')
            continue;
        struct child_plan *p = &plan[n_plan++];
        *p = (struct child_plan){.rel = c->point + wlen + 1, .point = c->point, .copy = -1};
        got[(*n_got)++] = c->id;
        int src = open_tree(old, p->rel, OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
        struct stat sst;
        if (src < 0) {
            mnt_fail(e, "open_tree", c->point);
            goto out;
        }
        if (c->dev == old_dev) {
            p->kind = CHILD_SELF;
            p->attrs = attrs_of(src);
        } else if (fstat(src, &sst) == 0 && S_ISDIR(sst.st_mode) && sst.st_nlink == 0) {
            p->kind = CHILD_DEAD;
        } else {
            /* copied here, in init's namespace: the staging's own could not clone it */
            p->kind = CHILD_COPY;
            p->copy =
                open_tree(old, p->rel,
                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
            if (p->copy < 0) {
                mnt_fail(e, "copy the mount at", c->point);
                close(src);
                goto out;
            }
        }
        close(src);
    }
    struct staged_stack s = {.ov = ov, .plan = plan, .n_plan = n_plan, .tree = -1};
    if ((s.tmpfs_fd = mnt_detached_tmpfs(e, "0700")) < 0)
        goto out;
    int t = overlay_stage_run(build_stack, &s);
    close(s.tmpfs_fd);
    if (t < 0) {
        errno = -t;
        mnt_fail(e, "start the rollback's builder for", workspace);
        goto out;
    }
    if (s.tree < 0) {
        snprintf(e->buf, e->len, "cannot build the new view of %s: %s", workspace, s.err);
        goto out;
    }
    /* One step: commands see the old view whole until here, the new one whole after. */
    if (move_mount(s.tree, "", AT_FDCWD, workspace, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        mnt_fail(e, "attach the new view on", workspace);
    else
        r = 0, stacked_count++;
    close(s.tree);
out:
    for (size_t i = 0; i < n_plan; i++)
        if (plan[i].copy >= 0)
            close(plan[i].copy);
    free(plan);
    return r;
}

int review_view_swap(const char *workspace, const char *dir, unsigned **ids, size_t *n_ids,
                     bool *stacked, struct mnt_err *e)
{
    *ids = NULL;
    *n_ids = 0;
    *stacked = false;
    if (kept_ns < 0) {
        snprintf(e->buf, e->len, "this sandbox's workspace is not a review overlay");
        return -1;
    }
    int old = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (old < 0)
        return mnt_fail(e, "open", workspace);
    struct stat ost;
    unsigned old_id = mount_id_of(old);
    struct mount_row *rows = NULL;
    size_t n = 0;
    int ov = -1, r = -1;
    if (fstat(old, &ost) < 0 || old_id == 0) {
        mnt_fail(e, "statx", workspace);
        goto out;
    }
    struct kept_copy kc = {.ws = -1, .layer = -1};
    int t = overlay_stage_run(copy_kept, &kc);
    int ws = kc.ws, layer = kc.layer;
    if (t < 0 || ws < 0 || layer < 0) {
        errno = t < 0 ? -t : kc.err;
        mnt_fail(e, "copy the kept trees of", workspace);
    } else {
        ov = overlay_of(workspace, layer, dir, ws, e);
    }
    if (ws >= 0)
        close(ws);
    if (layer >= 0)
        close(layer);
    if (ov < 0)
        goto out;
    if (beneath_works == 0 && beneath_refused())
        beneath_works = -1;
    /* The new overlay goes beneath the old one: the commands see the old view until the old is
     * detached, then the new one whole, with every cover already on it. */
    if (beneath_works >= 0 &&
        move_mount(ov, "", AT_FDCWD, workspace, MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_BENEATH) < 0) {
        if (errno != EINVAL || beneath_works > 0) {
            mnt_fail(e, "move_mount beneath", workspace);
            goto out;
        }
        beneath_works = -1; /* Linux before 6.5: the new view is stacked on the old instead */
    }
    n = read_mounts(&rows);
    unsigned *got = xcalloc(n + 1, sizeof *got);
    size_t n_got = 0;
    got[n_got++] = old_id;
    if (beneath_works < 0) {
        if (stack_swap(workspace, old, old_id, ost.st_dev, ov, rows, n, got, &n_got, e) < 0) {
            free(got);
            goto out;
        }
        *stacked = true;
        goto below;
    }
    beneath_works = 1;
    size_t wlen = strlen(workspace);
    for (size_t i = 0; i < n; i++) {
        const struct mount_row *c = &rows[i];
        if (c->parent != old_id || strncmp(c->point, workspace, wlen) != 0 || c->point[wlen] != '/')
            continue;
        int placed = place_child(old, ov, ost.st_dev, c, c->point + wlen + 1, e);
        if (placed < 0) {
            free(got);
            goto out;
        }
        got[n_got++] = c->id;
    }
below:
    /* Mounts below the children are in the old tree too: their ids, for the holders. */
    for (size_t k = 1; k < n_got; k++)
        for (size_t i = 0; i < n; i++)
            if (rows[i].parent == got[k] && n_got < n + 1)
                got[n_got++] = rows[i].id;
    if (!*stacked && umount2(workspace, MNT_DETACH) < 0) {
        free(got);
        mnt_fail(e, "detach the old overlay of", workspace);
        goto out;
    }
    *ids = got;
    *n_ids = n_got;
    r = 0;
out:
    for (size_t i = 0; i < n; i++)
        free(rows[i].point);
    free(rows);
    if (ov >= 0)
        close(ov);
    close(old);
    return r;
}
