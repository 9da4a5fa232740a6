/* worktree_admin.c — see worktree_admin.h. */
#include "controller/worktree_admin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool worktree_admin_rel(const char *rel)
{
    const char *name = strrchr(rel, '/');
    if (!name || !name[1])
        return false;
    size_t up = (size_t)(name - rel);
    return up >= 9 && strncmp(name - 9, "worktrees", 9) == 0 && (up == 9 || name[-10] == '/');
}

/* Whether the deepest folder of path that exists (relative to dirfd when path is) was last
 * changed before since_ns: what removed the rest did so before the sandbox started. */
static bool gone_before(int dirfd, char *path, long long since_ns)
{
    for (;;) {
        char *slash = strrchr(path, '/');
        if (!slash)
            return false; /* a relative name: its folder is the admin folder, which exists */
        *slash = '\0';
        struct stat st;
        if (fstatat(dirfd, path[0] ? path : "/", &st, 0) == 0)
            return (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec < since_ns;
        if (errno != ENOENT && errno != ENOTDIR)
            return false;
    }
}

bool worktree_admin_points_nowhere(int admin_fd, const char *text, size_t len, long long since_ns)
{
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        len--;
    if (!len || len >= 4096 || memchr(text, '\0', len))
        return false;
    char *path = xasprintf("%.*s", (int)len, text);
    struct stat st;
    /* followed, as git's own test (file_exists) follows it */
    bool gone = fstatat(admin_fd, path, &st, 0) < 0 && (errno == ENOENT || errno == ENOTDIR) &&
                gone_before(admin_fd, path, since_ns);
    free(path);
    return gone;
}

bool worktree_admin_gone(int admin_fd, const char *rel, long long since_ns, struct str_list *dead)
{
    if (!worktree_admin_rel(rel))
        return false;
    struct stat st;
    if (fstat(admin_fd, &st) < 0)
        return false;
    char key[64];
    snprintf(key, sizeof key, "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    if (str_list_contains(dead, key))
        return true;
    int fd = openat(admin_fd, "gitdir", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    char *text = NULL;
    size_t len = 0;
    bool gone = read_fd(fd, 4096, &text, &len) == 0 &&
                worktree_admin_points_nowhere(admin_fd, text, len, since_ns);
    close(fd);
    free(text);
    if (gone)
        str_list_push(dead, key);
    return gone;
}
