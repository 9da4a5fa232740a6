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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "sandbox/overlay_stage.h"

#define REVIEW_OVERLAY_OPTS "userxattr,redirect_dir=nofollow,metacopy=off,index=off,xino=off"
#define STAGE_LOWER "ws"
#define STAGE_LAYER "rl"

/* Where init attached a shifted root caller's layer folder, or NULL. */
static const char *staged_layer;

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
    if (overlay_stage_begin(&sg, s->tmpfs_fd, true, &e) == 0 &&
        overlay_stage_attach(s->tmpfs_fd, s->ws_fd, STAGE_LOWER, &e) == 0 &&
        overlay_stage_attach(s->tmpfs_fd, s->layer_fd, STAGE_LAYER, &e) == 0)
        s->mnt_fd =
            overlay_stage_mount("lowerdir=./" STAGE_LOWER ",upperdir=./" STAGE_LAYER
                                "/upper,workdir=./" STAGE_LAYER "/work," REVIEW_OVERLAY_OPTS,
                                MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the workspace", &e);
    overlay_stage_end(&sg);
    return 0;
}

int review_view_mount(const struct sandbox_config *cfg, struct review_view *rv, int ws_fd,
                      struct mnt_err *e)
{
    struct stat ws, up;
    if (fstat(ws_fd, &ws) < 0)
        return mnt_fail(e, "stat", cfg->workspace);
    /* The overlay's root shows the upper's mode and owner: the workspace's own. */
    if (fstatat(rv->layer_fd, "upper", &up, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(up.st_mode))
        return mnt_fail(e, "stat the review layer's upper of", cfg->workspace);
    if ((up.st_mode & 07777) != (ws.st_mode & 07777) &&
        fchmodat(rv->layer_fd, "upper", ws.st_mode & 07777, 0) < 0)
        return mnt_fail(e, "chmod the review layer's upper of", cfg->workspace);
    struct staged_review s = {.ws_fd = ws_fd, .layer_fd = rv->layer_fd, .mnt_fd = -1};
    if ((s.tmpfs_fd = mnt_detached_tmpfs(e, "0755")) < 0)
        return -1;
    int r = overlay_stage_run(build, &s);
    close(s.tmpfs_fd);
    if (r < 0) {
        errno = -r;
        return mnt_fail(e, "start the review overlay's builder for", cfg->workspace);
    }
    if (s.mnt_fd < 0) {
        snprintf(e->buf, e->len,
                 "review mode: cannot mount the copy-on-write workspace over %s: %s",
                 cfg->workspace, s.err);
        return -1;
    }
    return s.mnt_fd;
}

void review_view_release(struct review_view *rv)
{
    if (rv->layer_fd >= 0)
        close(rv->layer_fd);
    rv->layer_fd = -1;
}
