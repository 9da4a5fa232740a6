/* home_create_guard.c — see home_create_guard.h. The cost of a creating call whose new name is
 * a dot-name, with no folder on the way below the home: the path read, nothing resolved. Any
 * other: its parent and the home resolved (two openat2 under the caller's root). */
#include "controller/home_create_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "base/log.h"
#include "base/util.h"
#include "sandbox/create_notify.h"
#include "sandbox/home_own.h"

struct home_create_guard {
    char *home;                /* canonical, as the sandbox names it */
    struct str_list tool_dirs; /* the profile's home_tool_dirs */
    struct str_list ways;      /* the folders on the way to a kept path, absolute */
    int mem_fd;                /* /proc/PID/mem of the last caller */
    pid_t mem_pid;
    int root_fd; /* /proc/PID/root of the last caller (root_pid) */
    pid_t root_pid;
    /* The home and the ways as the last caller's mount namespace (ns_dev, ns_ino) shows them:
     * every process of the sandbox shares init's, so they are found once. */
    dev_t ns_dev;
    ino_t ns_ino;
    bool ns_known;
    struct stat home_st;
    struct stat *ways_st; /* st_ino 0: not there */
};

struct home_create_guard *home_create_guard_new(const struct sandbox_config *cfg)
{
    if (!home_own_applies(cfg))
        return NULL;
    struct str_list visible = {0}, keep = {0};
    if (cfg->workspace)
        str_list_push(&visible, cfg->workspace);
    for (size_t i = 0; i < cfg->writable.len; i++)
        str_list_push(&visible, cfg->writable.items[i]);
    struct home_create_guard *g;
    g = xcalloc(1, sizeof *g);
    g->home = xstrdup(cfg->home);
    g->mem_fd = g->root_fd = -1;
    for (size_t i = 0; i < cfg->home_tool_dirs.len; i++)
        str_list_push(&g->tool_dirs, cfg->home_tool_dirs.items[i]);
    home_own_keep(cfg->home, &visible, &keep);
    for (size_t i = 0; i < keep.len; i++) {
        /* every folder strictly between the home and the kept path */
        char *p = xasprintf("%s/%s", g->home, keep.items[i]);
        for (char *s = p + strlen(g->home) + 1; (s = strchr(s, '/')); s++) {
            *s = '\0';
            if (!str_list_contains(&g->ways, p))
                str_list_push(&g->ways, p);
            *s = '/';
        }
        free(p);
    }
    str_list_free(&visible);
    str_list_free(&keep);
    return g;
}

void home_create_guard_free(struct home_create_guard *g)
{
    if (!g)
        return;
    if (g->mem_fd >= 0)
        close(g->mem_fd);
    if (g->root_fd >= 0)
        close(g->root_fd);
    free(g->home);
    str_list_free(&g->tool_dirs);
    str_list_free(&g->ways);
    free(g->ways_st);
    free(g);
}

/* size bytes at addr of pid's memory (a string: up to its NUL), through fd. 0 or -errno. */
static int read_at(int fd, uint64_t addr, char *buf, size_t size, bool string)
{
    size_t got = 0;
    while (got < size) {
        /* a string up to the end of its page: the next one may be unmapped */
        size_t room = string ? 4096 - (size_t)((addr + got) % 4096) : size - got;
        if (room > size - got)
            room = size - got;
        ssize_t n = pread(fd, buf + got, room, (off_t)(addr + got));
        if (n <= 0)
            return n < 0 ? -errno : -EFAULT;
        if (string && memchr(buf + got, '\0', (size_t)n))
            return 0;
        got += (size_t)n;
    }
    return string ? -ENAMETOOLONG : 0;
}

/* The same, through /proc/PID/mem kept open for the next call of the same pid; opened anew when
 * that reads nothing: the pid exec'd (bash -c runs its last command in its own process), and
 * the old descriptor holds the memory it had before. */
static int read_mem(struct home_create_guard *g, pid_t pid, uint64_t addr, char *buf, size_t size,
                    bool string)
{
    int r = -ESRCH;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (g->mem_fd < 0 || g->mem_pid != pid || attempt > 0) {
            char path[64];
            if (g->mem_fd >= 0)
                close(g->mem_fd);
            snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
            g->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
            g->mem_pid = pid;
            if (g->mem_fd < 0)
                return -errno;
        }
        r = read_at(g->mem_fd, addr, buf, size, string);
        if (r == 0 || r == -ENAMETOOLONG)
            break;
    }
    return r;
}

static int openat2_path(int dirfd, const char *path, unsigned long long resolve)
{
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = resolve};
    long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    return fd < 0 ? -errno : (int)fd;
}

/* path (absolute, in the caller's view) opened under its root, as the caller resolves it. */
static int open_in_root(int root, const char *path)
{
    while (*path == '/')
        path++;
    return openat2_path(root, *path ? path : ".", RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

static bool same_dir(const struct stat *a, const struct stat *b)
{
    return a->st_ino != 0 && a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The device and inode of path under root, or st_ino 0. */
static void identify(int root, const char *path, struct stat *st)
{
    int fd = open_in_root(root, path);
    if (fd < 0 || fstat(fd, st) < 0)
        memset(st, 0, sizeof *st);
    if (fd >= 0)
        close(fd);
}

/* g's home and ways as pid's mount namespace shows them (found again when it is another). */
static void learn(struct home_create_guard *g, pid_t pid, int root)
{
    char path[64];
    struct stat ns;
    snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
    if (stat(path, &ns) < 0)
        memset(&ns, 0, sizeof ns);
    if (g->ns_known && ns.st_ino != 0 && ns.st_dev == g->ns_dev && ns.st_ino == g->ns_ino)
        return;
    identify(root, g->home, &g->home_st);
    if (!g->ways_st)
        g->ways_st = xcalloc(g->ways.len + 1, sizeof *g->ways_st);
    for (size_t i = 0; i < g->ways.len; i++)
        identify(root, g->ways.items[i], &g->ways_st[i]);
    g->ns_known = ns.st_ino != 0;
    g->ns_dev = ns.st_dev;
    g->ns_ino = ns.st_ino;
}

/* The new name path (dirfd as the caller passed it) of pid, or with removal the name it
 * removes: 0 or EROFS. */
static int judge_name(struct home_create_guard *g, pid_t pid, int dirfd, char *path, bool removal)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        path[--len] = '\0';
    char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return 0;
    if (base[0] == '.' && (g->ways.len == 0 || removal))
        return 0; /* a dot-name, and only the top is guarded: the layer takes it */
    /* the parent, absolute in the caller's view */
    char where[PATH_MAX], anchor[64];
    char *dir = xstrdup(slash ? path : ".");
    if (slash)
        dir[slash - path] = '\0';
    if (!*dir) {
        free(dir);
        dir = xstrdup("/");
    }
    int r = 0, root = -1, parent = -1;
    if (dir[0] != '/') {
        if (dirfd == AT_FDCWD)
            snprintf(anchor, sizeof anchor, "/proc/%d/cwd", (int)pid);
        else
            snprintf(anchor, sizeof anchor, "/proc/%d/fd/%d", (int)pid, dirfd);
        ssize_t n = readlink(anchor, where, sizeof where - 1);
        if (n <= 0 || where[0] != '/')
            goto out; /* gone, or not a folder of its tree: the kernel answers */
        where[n] = '\0';
        char *abs = xasprintf("%s/%s", where, dir);
        free(dir);
        dir = abs;
    }
    if (g->root_fd < 0 || g->root_pid != pid) {
        /* a process creating many files costs one open (and one look at its namespace) */
        if (g->root_fd >= 0)
            close(g->root_fd);
        snprintf(anchor, sizeof anchor, "/proc/%d/root", (int)pid);
        g->root_fd = open(anchor, O_PATH | O_DIRECTORY | O_CLOEXEC);
        g->root_pid = pid;
        if (g->root_fd < 0)
            goto out; /* the caller is gone */
        learn(g, pid, g->root_fd);
    }
    root = g->root_fd;
    /* the kernel resolves links and ".." as for the caller: its own root is the root */
    parent = open_in_root(root, dir);
    struct stat pst;
    if (parent < 0 || fstat(parent, &pst) < 0)
        goto out; /* no such folder: the kernel fails the call the same way */
    bool top = same_dir(&g->home_st, &pst), guarded = top;
    for (size_t i = 0; !guarded && !removal && i < g->ways.len; i++)
        guarded = same_dir(&g->ways_st[i], &pst);
    if (!guarded || (top && home_own_is_tools(base, &g->tool_dirs)))
        goto out;
    struct stat st;
    bool exists = fstatat(parent, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (exists != removal)
        goto out; /* not new (or, to remove, not there): the kernel answers */
    /* A removal at the top: the person's entries are bound from the host (EBUSY already),
     * but a link, or what the host added since the start, comes through the layer, where
     * its removal would succeed and change nothing on the host. */
    r = EROFS;
    LOG_D("home", "refused %s %s/%s in the home: not a dot-entry or a tool folder",
          removal ? "removing" : "a new name", dir, base);
out:
    if (parent >= 0)
        close(parent);
    free(dir);
    return r;
}

bool home_create_guard_judge(struct home_create_guard *g, pid_t pid, const struct seccomp_data *d,
                             int *error)
{
    struct create_call c;
    if (!create_notify_call(d->arch, d->nr, &c))
        return false;
    *error = 0;
    if (!g)
        return true;
    if (c.how_arg >= 0) {
        /* openat2: its flags are the first field of its struct open_how */
        uint64_t flags = 0;
        if (read_mem(g, pid, d->args[c.how_arg], (char *)&flags, sizeof flags, false) < 0 ||
            !(flags & O_CREAT))
            return true;
    }
    char path[PATH_MAX];
    if (read_mem(g, pid, d->args[c.path_arg], path, sizeof path, true) < 0)
        return true; /* unreadable: the kernel reads it too, and fails the same way */
    int dirfd = c.dirfd_arg < 0 ? AT_FDCWD : (int)d->args[c.dirfd_arg];
    *error = judge_name(g, pid, dirfd, path, false);
    return true;
}

int home_create_guard_rename(struct home_create_guard *g, pid_t pid, int dirfd, uint64_t addr)
{
    char path[PATH_MAX];
    if (!g || read_mem(g, pid, addr, path, sizeof path, true) < 0)
        return 0;
    return judge_name(g, pid, dirfd, path, false);
}

int home_create_guard_remove(struct home_create_guard *g, pid_t pid, int dirfd, uint64_t addr)
{
    char path[PATH_MAX];
    if (!g || read_mem(g, pid, addr, path, sizeof path, true) < 0)
        return 0;
    return judge_name(g, pid, dirfd, path, true);
}
