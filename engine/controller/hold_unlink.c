/* hold_unlink.c — see hold_unlink.h. For one removal:
 *   1. the parent as the caller sees it (caller_path.h); the target there, not followed;
 *   2. unless the parent's mount is read-only or the target is a mount point (a hold can only
 *      refuse then), the kernel's;
 *   3. the innermost guarded tree holding the parent; the parent found again from the host's fd
 *      of that tree (beneath it, no link), the same inode, holding the same target;
 *   4. a hold's: anything inside a `hooks` folder that is a mount point in the sandbox (the
 *      folder stays held: nothing can be planted in it); or a mount point named `config`,
 *      `config.worktree`, `commondir`, `gitdir`, `hooks` or a `.git` file (the names
 *      repo_watch.c and init hold; nothing else mounts inside the guarded trees) of a
 *      repository made after the sandbox started (the birth time of the folder holding it, a
 *      `.git` file's own; a file system without birth times: not); else the kernel's (a
 *      read-only `.cordon/`, a start-up file, a held name of a repository that was there
 *      before: EBUSY, as before). Whether the folder is still a git directory is not asked:
 *      `rm -rf` may have removed its HEAD first. One more: a held name in a linked worktree's
 *      admin folder G/worktrees/NAME whose worktree was gone from the host before the sandbox
 *      started (its `gitdir` names a path that is not there): what `git worktree prune`
 *      removes. No git runs in such a folder
 *      (no worktree leads to it), and the folder is remembered once judged, since prune
 *      removes `gitdir` itself in readdir order; and then that folder's own rmdir where it is a
 *      mount point (gone_admin_folder);
 *   5. unlinkat on the host, relative to the parent found in 3 (AT_REMOVEDIR as asked): a held
 *      folder's names cannot change from inside (it is read-only there), and a mount point in
 *      the sandbox's namespace is an ordinary name on the host, whose removal detaches the
 *      sandbox's mounts of it (Linux 3.18). */
#include "controller/hold_unlink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "base/util.h"
#include "controller/caller_path.h"
#include "controller/worktree_admin.h"

#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

static bool held_file_name(const char *n)
{
    return strcmp(n, "config") == 0 || strcmp(n, "config.worktree") == 0 ||
           strcmp(n, "commondir") == 0 || strcmp(n, "gitdir") == 0;
}

bool hold_unlink_maybe(pid_t pid, int dirfd, const char *path)
{
    if (strchr(path, '/') || held_file_name(path) || strcmp(path, "hooks") == 0 ||
        strcmp(path, ".git") == 0)
        return true;
    char where[64];
    if (dirfd == AT_FDCWD)
        snprintf(where, sizeof where, "/proc/%d/cwd", (int)pid);
    else
        snprintf(where, sizeof where, "/proc/%d/fd/%d", (int)pid, dirfd);
    struct statfs fs;
    /* ST_RDONLY: the flags of the mount the directory is on */
    return statfs(where, &fs) < 0 || (fs.f_flags & ST_RDONLY);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

enum held_as { NOT_HELD, HELD_INSIDE, HELD_POINT };

/* Whether the folder or file rel's first len bytes name was made after since_ns (its birth
 * time; a file system that does not keep one: not). */
static bool born_after(int root_fd, const char *rel, size_t len, long long since_ns)
{
    char *p = len ? xasprintf("%.*s", (int)len, rel) : xstrdup(".");
    struct statx stx;
    bool yes = statx(root_fd, p, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &stx) == 0 &&
               (stx.stx_mask & STATX_BTIME) &&
               (long long)stx.stx_btime.tv_sec * 1000000000LL + stx.stx_btime.tv_nsec >= since_ns;
    free(p);
    return yes;
}

/* Whether the folder abs (as pid sees it) is the root of a mount there: a hold. */
static bool mount_root_at(pid_t pid, const char *abs)
{
    char anchor_path[64];
    snprintf(anchor_path, sizeof anchor_path, "/proc/%d/root", (int)pid);
    int anchor = open(anchor_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (anchor < 0)
        return false;
    int fd = cp_openat2(anchor, abs[0] == '/' ? abs + 1 : abs, O_PATH | O_DIRECTORY,
                        RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    close(anchor);
    struct statx stx;
    bool yes = fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_TYPE, &stx) == 0 &&
               (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
               (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
    if (fd >= 0)
        close(fd);
    return yes;
}

/* Step 4: rel (the target, relative to the tree root, no "." or ".." in it) as a hold has it.
 * Only holds mount anything inside the guarded trees, so a mount point of a held name is one,
 * and so is a folder `hooks` that is a mount point on the way; whether the folder around it is
 * still a git directory does not matter (`rm -rf` may have taken its HEAD first). In *point_of:
 * how many bytes of rel name what decides whether a held name may go (its git directory, or a
 * `.git` file itself). */
static enum held_as held(pid_t pid, const char *root, const char *rel, const struct stat *target,
                         bool mount_root, size_t *point_of)
{
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    *point_of = base > rel ? (size_t)(base - rel - 1) : 0;
    if (mount_root) {
        if (strcmp(base, ".git") == 0 && S_ISREG(target->st_mode)) {
            *point_of = strlen(rel);
            return HELD_POINT;
        }
        return held_file_name(base) || strcmp(base, "hooks") == 0 ? HELD_POINT : NOT_HELD;
    }
    /* on a read-only mount: inside a held `hooks` folder? (the innermost one on the way) */
    for (size_t end = (size_t)(base - rel); end > 0;) {
        end--; /* at the '/' before base, or before the next component up */
        size_t start = end;
        while (start > 0 && rel[start - 1] != '/')
            start--;
        if (end - start == 5 && strncmp(rel + start, "hooks", 5) == 0) {
            char *abs = xasprintf("%s/%.*s", root, (int)end, rel);
            bool yes = mount_root_at(pid, abs);
            free(abs);
            return yes ? HELD_INSIDE : NOT_HELD;
        }
        end = start;
    }
    return NOT_HELD;
}

/* The rmdir of an admin folder whose worktree is gone, emptied by `git worktree prune` (its
 * held names removed here before): in a common dir that is a writable path the folder is a
 * mount point of its own (bound onto itself so that it cannot be renamed: fsview.c). */
static bool gone_admin_folder(int host, const char *name, const char *rel,
                              const struct stat *target, bool mount_root, int flags,
                              long long since_ns, struct str_list *dead)
{
    if (!mount_root || !S_ISDIR(target->st_mode) || !(flags & AT_REMOVEDIR) ||
        !worktree_admin_rel(rel))
        return false;
    int fd = cp_openat2(host, name, O_PATH | O_DIRECTORY, BENEATH);
    bool gone = fd >= 0 && worktree_admin_gone(fd, rel, since_ns, dead);
    if (fd >= 0)
        close(fd);
    return gone;
}

int hold_unlink(pid_t pid, int dirfd, const char *path, int flags, size_t n, char *const *root,
                const int *root_fd, long long since_ns, struct str_list *dead)
{
    int r = 1, parent = -1, host = -1;
    char *abs = NULL, *rel = NULL, *copy = xstrdup(path);
    /* "dir/" names dir, as the kernel takes it for rmdir */
    size_t len = strlen(copy);
    while (len > 1 && copy[len - 1] == '/')
        copy[--len] = '\0';
    const char *name = strrchr(copy, '/') ? strrchr(copy, '/') + 1 : copy;
    if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        goto out;
    /* 1, 2 */
    if ((parent = cp_open_parent(pid, dirfd, copy, &abs)) < 0)
        goto out;
    struct statx stx;
    struct statvfs vfs;
    if (statx(parent, name, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO, &stx) < 0 ||
        fstatvfs(parent, &vfs) < 0)
        goto out;
    bool mount_root = (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
                      (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
    if (!mount_root && !(vfs.f_flag & ST_RDONLY))
        goto out;
    /* 3 */
    size_t best = n;
    for (size_t i = 0; i < n; i++)
        if (root_fd[i] >= 0 && path_is_within(abs, root[i]) &&
            (best == n || strlen(root[i]) > strlen(root[best])))
            best = i;
    if (best == n)
        goto out;
    const char *prel = abs + strlen(root[best]);
    while (*prel == '/')
        prel++;
    struct stat st_parent, st_host, st_target, st_host_target;
    host = cp_openat2(root_fd[best], *prel ? prel : ".", O_PATH | O_DIRECTORY, BENEATH);
    if (host < 0 || fstat(host, &st_host) < 0 || fstat(parent, &st_parent) < 0 ||
        !same_file(&st_host, &st_parent))
        goto out; /* a view of the sandbox's own (an overlay): the kernel's */
    if (fstatat(parent, name, &st_target, AT_SYMLINK_NOFOLLOW) < 0 ||
        fstatat(host, name, &st_host_target, AT_SYMLINK_NOFOLLOW) < 0 ||
        !same_file(&st_target, &st_host_target))
        goto out;
    /* 4 */
    rel = *prel ? xasprintf("%s/%s", prel, name) : xstrdup(name);
    size_t point_of;
    enum held_as as = held(pid, root[best], rel, &st_target, mount_root, &point_of);
    if (as == NOT_HELD &&
        !gone_admin_folder(host, name, rel, &st_target, mount_root, flags, since_ns, dead))
        goto out;
    /* A held name itself, of a repository that was there before the sandbox: the kernel's
     * (EBUSY), as before, unless it lies in the admin folder of a worktree that is gone. Its place would be a new name, open to a plant until the watcher
     * holds it again and the check undoes it: in the person's own repository, for the rest of
     * the run. A repository a command made is its own (docs/git.md). */
    if (as == HELD_POINT && !born_after(root_fd[best], rel, point_of, since_ns) &&
        !worktree_admin_gone(host, prel, since_ns, dead))
        goto out;
    /* 5: with the controller's own credentials, the caller's (docs/git.md) */
    r = unlinkat(host, name, flags & AT_REMOVEDIR) < 0 ? -errno : 0;
out:
    if (parent >= 0)
        close(parent);
    if (host >= 0)
        close(host);
    free(abs);
    free(rel);
    free(copy);
    return r;
}
