/* repo_hold.c — see repo_hold.h. The helper's half (hold_serve, hold_one) runs after fork() in
 * a copy of a process with threads: only system calls and stack buffers there. */
#include "controller/repo_hold.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "base/util.h"

struct repo_hold {
    pid_t pid;
    int sock;
    int32_t opened;       /* the helper's word on init's namespaces: 1 not yet, 0, -errno */
    pthread_mutex_t lock; /* one request and its answer at a time */
};

/* The helper: hold one path. */
static int32_t hold_one(const char *path)
{
    struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int32_t r = 0;
    int tree = -1, fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    struct stat st;
    struct statvfs vfs;
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0) {
        r = -errno;
        goto out;
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        r = S_ISLNK(st.st_mode) ? -ELOOP : -EINVAL;
        goto out;
    }
    if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
        goto out; /* held already (or read-only anyway): no second mount */
    tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID};
    if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0 ||
        move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        r = -errno;
out:
    if (tree >= 0)
        close(tree);
    close(fd);
    return r;
}

static int open_ns(pid_t pid, const char *which)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/ns/%s", (int)pid, which);
    return open(p, O_RDONLY | O_CLOEXEC);
}

/* The helper's life: init's namespaces opened at once (it is dumpable until its view is built),
 * said on the socket; joined at the first request (the view is built by then: a hold before it
 * would be covered); then one answer per request until the controller's end closes (or it dies:
 * PR_SET_PDEATHSIG). */
static _Noreturn void hold_serve(int sock, pid_t init_pid, pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
        _exit(1);
    int userns = open_ns(init_pid, "user"), mntns = userns < 0 ? -1 : open_ns(init_pid, "mnt");
    int32_t opened = userns < 0 || mntns < 0 ? -errno : 0;
    /* nothing of the controller's stays open here but the socket and the namespaces */
    if (dup2(sock, 3) < 0 || (userns >= 0 && dup2(userns, 4) < 0) ||
        (mntns >= 0 && dup2(mntns, 5) < 0))
        _exit(1);
    (void)syscall(SYS_close_range, 6u, ~0u, 0u);
    (void)send(3, &opened, sizeof opened, MSG_NOSIGNAL);
    if (opened < 0)
        _exit(1);
    int32_t joined = 1; /* not yet */
    for (;;) {
        char path[PATH_MAX + 1];
        ssize_t n = recv(3, path, PATH_MAX, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(0);
        path[n] = '\0';
        if (joined == 1) {
            joined = setns(4, CLONE_NEWUSER) < 0 || setns(5, CLONE_NEWNS) < 0 || chdir("/") < 0
                         ? -errno
                         : 0;
            close(4);
            close(5);
        }
        int32_t r = joined < 0                                    ? joined
                    : path[0] == '/' && (size_t)n == strlen(path) ? hold_one(path)
                    : path[0] == '\0'                             ? 0 /* a ping */
                                                                  : -EINVAL;
        if (send(3, &r, sizeof r, MSG_NOSIGNAL) < 0)
            _exit(0);
    }
}

struct repo_hold *repo_hold_fork(pid_t init_pid)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return NULL;
    pid_t self = getpid(), pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return NULL;
    }
    if (pid == 0)
        hold_serve(sv[1], init_pid, self);
    close(sv[1]);
    struct repo_hold *h = xcalloc(1, sizeof *h);
    h->pid = pid;
    h->sock = sv[0];
    h->opened = 1; /* not heard yet */
    pthread_mutex_init(&h->lock, NULL);
    return h;
}

int repo_hold_ready(struct repo_hold *h)
{
    if (!h)
        return -ENOSYS;
    if (h->opened == 1) {
        int32_t v = -EPIPE;
        ssize_t n;
        RETRY_EINTR(n, recv(h->sock, &v, sizeof v, 0));
        h->opened = n == (ssize_t)sizeof v ? v : -EPIPE;
    }
    return h->opened;
}

int repo_hold_path(struct repo_hold *h, const char *path)
{
    if (!h)
        return -ENOSYS;
    size_t len = strlen(path);
    if ((len && path[0] != '/') || len > PATH_MAX)
        return -EINVAL;
    if (!len) /* a ping: send() of nothing on a SOCK_SEQPACKET still makes a packet */
        len = 1;
    int32_t r = -EPIPE;
    pthread_mutex_lock(&h->lock);
    if (repo_hold_ready(h) < 0) {
        r = h->opened;
        pthread_mutex_unlock(&h->lock);
        return r;
    }
    ssize_t n;
    RETRY_EINTR(n, send(h->sock, path, len, MSG_NOSIGNAL));
    if (n == (ssize_t)len) {
        RETRY_EINTR(n, recv(h->sock, &r, sizeof r, 0));
        if (n != (ssize_t)sizeof r)
            r = -EPIPE;
    }
    pthread_mutex_unlock(&h->lock);
    return r;
}

void repo_hold_stop(struct repo_hold *h)
{
    if (!h)
        return;
    close(h->sock);
    (void)kill(h->pid, SIGKILL);
    (void)waitpid(h->pid, NULL, 0);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
