/* mount_ops.c — see mount_ops.h. Only mechanism: no path here is chosen by this file (the
 * fallback of mnt_setattr walks the namespace's own mount points). */
#include "sandbox/mount_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/kernel_lacks.h"
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

int mnt_detached_tree(struct mnt_err *e, const char *path)
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

/* mount_setattr(2) is Linux 5.12. Said once, by the first ENOSYS (or the test switch): from
 * then on the same attributes are set by remounting each mount (MS_REMOUNT | MS_BIND), as
 * bubblewrap does. Written by whichever thread asks first; every thread would learn the same. */
static bool setattr_missing;

bool mnt_setattr_lacking(void)
{
    if (!setattr_missing && kernel_lacks_forced("mount_setattr"))
        setattr_missing = true;
    return setattr_missing;
}

/* MOUNT_ATTR_* as mount(2)'s MS_* flags (only those this file's callers set). */
static unsigned long ms_of_attr(unsigned long long attr)
{
    return (attr & MOUNT_ATTR_RDONLY ? MS_RDONLY : 0) | (attr & MOUNT_ATTR_NOSUID ? MS_NOSUID : 0) |
           (attr & MOUNT_ATTR_NODEV ? MS_NODEV : 0) | (attr & MOUNT_ATTR_NOEXEC ? MS_NOEXEC : 0);
}

/* The mount's flags now, as MS_* flags a bind remount must repeat: in a user namespace the
 * flags it inherited (read-only, nosuid, nodev, noexec, the atime ones) are locked, and a
 * remount that drops one is refused. */
unsigned long mnt_ms_now(const struct statfs *fs)
{
    unsigned long f = 0;
    static const struct {
        unsigned long st, ms;
    } map[] = {{ST_RDONLY, MS_RDONLY},    {ST_NOSUID, MS_NOSUID},   {ST_NODEV, MS_NODEV},
               {ST_NOEXEC, MS_NOEXEC},    {ST_NOATIME, MS_NOATIME}, {ST_NODIRATIME, MS_NODIRATIME},
               {ST_RELATIME, MS_RELATIME}};
    for (size_t i = 0; i < ARRAY_LEN(map); i++)
        if ((unsigned long)fs->f_flags & map[i].st)
            f |= map[i].ms;
    if (!(f & (MS_NOATIME | MS_RELATIME)))
        f |= MS_STRICTATIME;
    return f;
}

/* One mount's attributes by a bind remount of exactly the mount at path: opened with no
 * symbolic link on the way (nothing planted can turn the remount elsewhere) and remounted
 * through its descriptor. A mount the path does not reach (covered by a later mount, under a
 * folder this process may not search) is skipped when skip_unreached: nothing in the sandbox
 * reaches it by a path either. */
static int remount_one(struct mnt_err *e, const char *path, unsigned long set, unsigned long clear,
                       bool skip_unreached)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0 && skip_unreached && (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
        return 0;
    if (fd < 0)
        return mnt_fail(e, "open the mount", path);
    struct statfs fs;
    char proc[40];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    int r = 0;
    if (fstatfs(fd, &fs) < 0)
        r = mnt_fail(e, "statfs", path);
    else if (mount(NULL, proc, NULL, MS_REMOUNT | MS_BIND | ((mnt_ms_now(&fs) | set) & ~clear),
                   NULL) < 0)
        r = mnt_fail(e, "remount (no mount_setattr on this kernel)", path);
    close(fd);
    return r;
}

/* mnt_setattr without mount_setattr: the mount at path and, when recursive, every mount below
 * it (from /proc/self/mountinfo). */
static int remount_attrs(struct mnt_err *e, const char *path, bool recursive,
                         unsigned long long set, unsigned long long clear)
{
    unsigned long ms_set = ms_of_attr(set), ms_clear = ms_of_attr(clear);
    if (remount_one(e, path, ms_set, ms_clear, false) < 0)
        return -1;
    if (!recursive)
        return 0;
    struct str_list points = {0};
    if (mnt_read_mount_points(&points, e) < 0)
        return -1;
    int r = 0;
    for (size_t i = 0; r == 0 && i < points.len; i++)
        if (strcmp(points.items[i], path) != 0 && path_is_within(points.items[i], path))
            r = remount_one(e, points.items[i], ms_set, ms_clear, true);
    str_list_free(&points);
    return r;
}

int mnt_setattr(struct mnt_err *e, const char *path, bool recursive, unsigned long long set,
                unsigned long long clear)
{
    if (!mnt_setattr_lacking()) {
        struct mount_attr attr = {.attr_set = set, .attr_clr = clear};
        if (mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr) == 0)
            return 0;
        if (errno != ENOSYS)
            return mnt_fail(e, "mount_setattr", path);
        setattr_missing = true;
    }
    return remount_attrs(e, path, recursive, set, clear);
}

int mnt_setattr_fd(int fd, unsigned long long set)
{
    if (mnt_setattr_lacking())
        return -ENOSYS;
    struct mount_attr attr = {.attr_set = set};
    if (mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr) == 0)
        return 0;
    if (errno == ENOSYS)
        setattr_missing = true;
    return -errno;
}

int mnt_read_mount_points(struct str_list *out, struct mnt_err *e)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return mnt_fail(e, "open", "/proc/self/mountinfo");
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        char point[4096];
        if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
            continue;
        /* Undo mountinfo's octal escapes (\040 for a space, ...). */
        char *w = point;
        for (char *r = point; *r; r++) {
            if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] && r[3]) {
                *w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
                r += 3;
            } else {
                *w++ = *r;
            }
        }
        *w = '\0';
        str_list_push(out, point);
    }
    free(line);
    fclose(f);
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
