/* git_guard_access.c — the git guard's file access: every name it reads or writes is opened
 * beneath the workspace's descriptor (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), the
 * folder a snapshot last looked in kept open for the next name in it, and paths a config or a
 * pointer file names resolved lexically within the workspace. Must never: follow a symbolic
 * link, or give back a path leading out of the workspace. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "controller/git_guard_private.h"

int gg_open_beneath(int dirfd, const char *rel, int flags)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
                           .resolve =
                               RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, dirfd, rel[0] ? rel : ".", &how, sizeof how);
    return fd < 0 ? -errno : fd;
}

char *gg_join(const char *a, const char *b)
{
    return a[0] ? xasprintf("%s/%s", a, b) : xstrdup(b);
}

/* The folder rel beneath the workspace, opened for reading its entries (no link followed), or
 * NULL. */
DIR *gg_opendir_beneath(const struct git_guard *g, const char *rel)
{
    int fd = gg_open_beneath(g->wsfd, rel, O_RDONLY | O_DIRECTORY);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

void gg_parent_cache_set(struct parent_cache *pc, bool on)
{
    if (pc->fd >= 0)
        close(pc->fd);
    free(pc->rel);
    *pc = (struct parent_cache){.on = on, .fd = -1};
}

/* The directory holding rel, opened O_PATH beneath the workspace (or the snapshot's cached
 * one, the same folder); *base is rel's last name. Given back with close_parent. */
int gg_open_parent(const struct git_guard *g, const char *rel, const char **base)
{
    const char *slash = strrchr(rel, '/');
    size_t n = slash ? (size_t)(slash - rel) : 0;
    struct parent_cache *pc = g->pc;
    *base = slash ? slash + 1 : rel;
    if (pc->on && pc->fd >= 0 && strlen(pc->rel) == n && strncmp(pc->rel, rel, n) == 0)
        return pc->fd;
    char *dir = xasprintf("%.*s", (int)n, rel);
    int fd = gg_open_beneath(g->wsfd, dir, O_PATH | O_DIRECTORY);
    if (pc->on && fd >= 0) {
        gg_parent_cache_set(pc, true);
        pc->rel = dir;
        pc->fd = fd;
    } else {
        free(dir);
    }
    return fd;
}

void gg_close_parent(const struct git_guard *g, int fd)
{
    if (fd != g->pc->fd)
        close(fd);
}

bool gg_lstat_rel(const struct git_guard *g, const char *rel, struct stat *st)
{
    const char *base;
    int pfd = gg_open_parent(g, rel, &base);
    if (pfd < 0)
        return false;
    bool ok = fstatat(pfd, base, st, AT_SYMLINK_NOFOLLOW) == 0;
    gg_close_parent(g, pfd);
    return ok;
}

/* path (absolute, or relative to the workspace-relative dir base) as a workspace-relative path
 * ("" for the workspace itself), lexically normalised; NULL when it leads out of it. */
char *gg_resolve_in_ws(const struct git_guard *g, const char *base, const char *path)
{
    char *abs = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s/%s", g->ws, base, path);
    char *norm = path_absolute(abs, "/");
    char *r = NULL;
    free(abs);
    if (path_is_within(norm, g->ws)) {
        const char *p = norm + strlen(g->ws);
        r = xstrdup(p[0] == '/' ? p + 1 : p);
    }
    free(norm);
    return r;
}

char *gg_parent_rel(const char *rel)
{
    const char *slash = strrchr(rel, '/');
    return slash ? xasprintf("%.*s", (int)(slash - rel), rel) : xstrdup("");
}
