/* Runs in: init (and the controller where it mounts: repo holds, root writes). */
/* mount_ops.h — thin, checked wrappers over mount(2) and the new mount API (open_tree,
 * move_mount, mount_setattr, fsopen/fsmount) used by fsview.c, hide.c and devfs.c, and the
 * fallback of mount_setattr for kernels before 5.12.
 * Each returns 0 (or an fd) on success, -1 with one line in the caller's error buffer. */
#ifndef CORDON_MOUNT_OPS_H
#define CORDON_MOUNT_OPS_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/util.h"

/* Where a failing step writes its message. */
struct mnt_err {
    char *buf;
    size_t len;
};

int mnt_fail(struct mnt_err *e, const char *what, const char *path);
int mnt_mount(struct mnt_err *e, const char *src, const char *target, const char *fstype,
              unsigned long flags, const char *data);
/* A detached recursive copy of the mount tree at path (taken before the view changes). */
int mnt_detached_tree(struct mnt_err *e, const char *path);
/* Attach a detached tree at target (creating a missing mount point when create is set). */
int mnt_attach(struct mnt_err *e, int tree_fd, const char *target, bool create);
/* Set or clear MOUNT_ATTR_RDONLY, _NOSUID, _NODEV, _NOEXEC on the mount at path (recursively
 * when recursive). Without mount_setattr (Linux < 5.12, or the test switch "mount_setattr"):
 * a bind remount of that mount and, recursive, of every mount below it that a path reaches,
 * each keeping the flags it has (in a user namespace they are locked); the same attributes. */
int mnt_setattr(struct mnt_err *e, const char *path, bool recursive, unsigned long long set,
                unsigned long long clear);
/* Set MOUNT_ATTR_* on the detached mount fd: 0, -ENOSYS when this kernel has no mount_setattr
 * (then the caller sets them with mnt_setattr once it has attached the mount), another -errno. */
int mnt_setattr_fd(int fd, unsigned long long set);
/* True once mount_setattr is known to be missing (mnt_setattr's fallback is in use). */
bool mnt_setattr_lacking(void);
/* A mount's flags now (from fstatfs) as the MS_* flags a bind remount must repeat: in a user
 * namespace the ones it inherited are locked, and a remount that drops one is refused. Only
 * reads its argument (safe after fork in a process with threads). */
struct statfs;
unsigned long mnt_ms_now(const struct statfs *fs);
/* The mount points of this mount namespace (/proc/self/mountinfo, unescaped), appended to out. */
int mnt_read_mount_points(struct str_list *out, struct mnt_err *e);
/* Bind path onto itself and make that mount read-only. */
int mnt_bind_readonly(struct mnt_err *e, const char *path);
/* A fresh tmpfs (root directory mode, octal string) not attached anywhere; returns its mount fd. */
int mnt_detached_tmpfs(struct mnt_err *e, const char *mode);
/* Create an empty mount point (directory when dir, else file) if missing. 0 or -errno. */
int ensure_mount_point(const char *path, bool dir);
#endif
