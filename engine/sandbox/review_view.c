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

#include "base/util.h"
#include "sandbox/overlay_stage.h"
#include "sandbox/review_layer.h"

#define REVIEW_OVERLAY_OPTS "userxattr,redirect_dir=nofollow,metacopy=off,index=off,xino=off"
#define STAGE_LOWER "ws"
#define STAGE_LAYER "rl"

/* Where init attached a shifted root caller's layer folder, or NULL. */
static const char *staged_layer;
/* Kept from the view's overlay for a session's rollback (review_view_swap): the detached
 * workspace tree (the lower) and the layer folder's tree; -1 until then. */
static int kept_ws = -1, kept_layer = -1;
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

/* A detached copy of the detached tree fd (a staging attaches, and so uses up, the one it is
 * given), or -1. */
static int clone_of(int fd)
{
    return open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
}

/* Copies of ws_fd kept for a rollback and for the overlay now (*now), from a tree another
 * process detached (a root caller's idmapped workspace, the controller's): the kernel clones
 * only a detached tree this namespace made, so it is attached on a fresh folder of the sandbox's
 * /tmp (no command runs yet), cloned twice and detached again. 0 or -1 with errno. */
static int keep_foreign(int ws_fd, int *now)
{
    char dir[] = "/tmp/.cordon-review-XXXXXX";
    if (!mkdtemp(dir))
        return -1;
    int r = move_mount(ws_fd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH);
    if (r == 0) {
        kept_ws = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        *now = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        int e = errno;
        (void)umount2(dir, MNT_DETACH);
        errno = e;
        r = kept_ws >= 0 && *now >= 0 ? 0 : -1;
    }
    int e = errno;
    (void)rmdir(dir);
    errno = e;
    return r;
}

int review_view_mount(const struct sandbox_config *cfg, struct review_view *rv, int ws_fd,
                      struct mnt_err *e)
{
    /* A session may roll back (review_view_swap): it builds the overlay again from copies of
     * these, taken before the staging below uses them up. Without them, no rollback. */
    int now = -1;
    if (keep_for_swap && kept_ws < 0) {
        kept_layer = clone_of(rv->layer_fd);
        kept_ws = clone_of(ws_fd);
        if (kept_ws < 0 && errno == EINVAL && keep_foreign(ws_fd, &now) < 0)
            return mnt_fail(e, "keep a copy of the workspace's tree of", cfg->workspace);
    }
    int ov = overlay_of(cfg->workspace, rv->layer_fd, ".", now >= 0 ? now : ws_fd, e);
    if (now >= 0)
        close(now);
    return ov;
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
    int copy = -1, r = -1;
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
        copy = open_tree(old, rel,
                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
    }
    if (copy < 0 ||
        move_mount(copy, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
        mnt_fail(e, "place again", c->point);
        goto out;
    }
    r = 1;
out:
    if (copy >= 0)
        close(copy);
    if (src >= 0)
        close(src);
    close(target);
    return r;
}

int review_view_swap(const char *workspace, const char *dir, unsigned **ids, size_t *n_ids,
                     struct mnt_err *e)
{
    *ids = NULL;
    *n_ids = 0;
    if (kept_ws < 0 || kept_layer < 0) {
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
    int ws = clone_of(kept_ws), layer = clone_of(kept_layer);
    if (ws < 0 || layer < 0)
        mnt_fail(e, "copy the detached trees of", workspace);
    else
        ov = overlay_of(workspace, layer, dir, ws, e);
    if (ws >= 0)
        close(ws);
    if (layer >= 0)
        close(layer);
    if (ov < 0)
        goto out;
    /* The new overlay goes beneath the old one: the commands see the old view until the old is
     * detached, then the new one whole, with every cover already on it. */
    if (move_mount(ov, "", AT_FDCWD, workspace, MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_BENEATH) < 0) {
        if (errno == EINVAL)
            snprintf(e->buf, e->len,
                     "rollback replaces the workspace's mount beneath the old one, which Linux "
                     "6.5 and later can (move_mount beneath); stop the session and start it "
                     "again to see the snapshot's files (cordon review shows them)");
        else
            mnt_fail(e, "move_mount beneath", workspace);
        goto out;
    }
    n = read_mounts(&rows);
    unsigned *got = xcalloc(n + 1, sizeof *got);
    size_t n_got = 0;
    got[n_got++] = old_id;
    size_t wlen = strlen(workspace);
    for (size_t i = 0; i < n; i++) {
        const struct mount_row *c = &rows[i];
        if (c->parent != old_id || strncmp(c->point, workspace, wlen) != 0 || c->point[wlen] != '/')
            continue;
        got[n_got++] = c->id;
        if (place_child(old, ov, ost.st_dev, c, c->point + wlen + 1, e) < 0) {
            free(got);
            goto out;
        }
    }
    /* Mounts below the children are in the old tree too: their ids, for the holders. */
    for (size_t k = 1; k < n_got; k++)
        for (size_t i = 0; i < n; i++)
            if (rows[i].parent == got[k] && n_got < n + 1)
                got[n_got++] = rows[i].id;
    if (umount2(workspace, MNT_DETACH) < 0) {
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
