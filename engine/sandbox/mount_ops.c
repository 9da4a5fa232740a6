/* mount_ops.c — see mount_ops.h. Only mechanism: no path here is chosen by this file. */
#include "sandbox/mount_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

int mnt_fail(struct mnt_err *e, const char *what, const char *path)
{
    snprintf(e->buf, e->len, "sandbox set-up: %s %s: %s", what, path ? path : "", strerror(errno));
    return -1;
}

int mnt_mount(struct mnt_err *e, const char *src, const char *target, const char *fstype,
              unsigned long flags, const char *data)
{
    if (mount(src, target, fstype, flags, data) < 0)
        return mnt_fail(e, "mount", target);
    return 0;
}

int mnt_capture(struct mnt_err *e, const char *path)
{
    int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (fd < 0)
        return mnt_fail(e, "open_tree", path);
    return fd;
}

int ensure_mount_point(const char *path, bool dir)
{
    struct stat st;
    if (lstat(path, &st) == 0)
        return 0;
    int r = mkdir_parents(path, 0755);
    if (r < 0)
        return r;
    if (dir)
        return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

int mnt_attach(struct mnt_err *e, int tree_fd, const char *target, bool create)
{
    if (create) {
        struct stat st;
        int r = fstat(tree_fd, &st) < 0 ? -errno : ensure_mount_point(target, S_ISDIR(st.st_mode));
        if (r < 0) {
            errno = -r;
            return mnt_fail(e, "create mount point", target);
        }
    }
    if (move_mount(tree_fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        return mnt_fail(e, "move_mount", target);
    return 0;
}

int mnt_setattr(struct mnt_err *e, const char *path, bool recursive, unsigned long long set,
                unsigned long long clear)
{
    struct mount_attr attr = {.attr_set = set, .attr_clr = clear};
    if (mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr) < 0)
        return mnt_fail(e, "mount_setattr", path);
    return 0;
}

int mnt_bind_readonly(struct mnt_err *e, const char *path)
{
    if (mnt_mount(e, path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
        return -1;
    return mnt_setattr(e, path, true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0);
}

int mnt_detached_tmpfs(struct mnt_err *e, const char *mode)
{
    int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0)
        return mnt_fail(e, "fsopen", "tmpfs");
    int mfd = -1;
    if (mode && fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0) {
        mnt_fail(e, "fsconfig", "tmpfs");
        goto out;
    }
    if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
        mnt_fail(e, "fsconfig create", "tmpfs");
        goto out;
    }
    mfd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    if (mfd < 0)
        mnt_fail(e, "fsmount", "tmpfs");
out:
    close(fs);
    return mfd;
}
