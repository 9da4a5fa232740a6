/* caller_path.c — see caller_path.h. */
#include "controller/caller_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "base/util.h"

int cp_openat2(int dirfd, const char *path, int flags, unsigned long long resolve)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC), .resolve = resolve};
    long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    return fd < 0 ? -errno : (int)fd;
}

int cp_open_parent(pid_t pid, int dirfd, const char *path, char **abs)
{
    int r, anchor = -1;
    char *dir = xstrdup(path), anchor_path[64], where[PATH_MAX];
    char *slash = strrchr(dir, '/');
    if (!slash)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    unsigned long long resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    if (dir[0] == '/') {
        snprintf(anchor_path, sizeof anchor_path, "/proc/%d/root", (int)pid);
        snprintf(where, sizeof where, "/");
        resolve |= RESOLVE_IN_ROOT;
    } else {
        if (dirfd == AT_FDCWD)
            snprintf(anchor_path, sizeof anchor_path, "/proc/%d/cwd", (int)pid);
        else
            snprintf(anchor_path, sizeof anchor_path, "/proc/%d/fd/%d", (int)pid, dirfd);
        /* the directory's path as the sandbox names it (its mount namespace's own paths) */
        ssize_t n = readlink(anchor_path, where, sizeof where - 1);
        if (n <= 0 || where[0] != '/') {
            r = n < 0 ? -errno : -ENOENT;
            goto out;
        }
        where[n] = '\0';
    }
    anchor = open(anchor_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (anchor < 0) {
        r = -errno;
        goto out;
    }
    r = cp_openat2(anchor, dir[0] == '/' ? dir + 1 : dir, O_PATH | O_DIRECTORY, resolve);
    if (r >= 0)
        *abs = path_absolute(dir, where);
out:
    if (anchor >= 0)
        close(anchor);
    free(dir);
    return r;
}
