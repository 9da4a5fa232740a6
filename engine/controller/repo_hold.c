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
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "base/util.h"
#include "sandbox/mount_ops.h"

struct repo_hold {
    int ns[2];            /* init's user and mount namespaces */
    pid_t pid;            /* the helper, 0 until the first hold */
    int sock;             /* to it, or -1 */
    int failed;           /* -errno when it could not be forked */
    pthread_mutex_t lock; /* one request and its answer at a time */
};

/* Where the kernel has no mount_setattr (before 5.12): the clone is attached first and then
 * made read-only by a bind remount of exactly that mount, named through the helper's own
 * descriptor of it in the host's /proc (procfd: the sandbox's /proc does not know the helper,
 * which is not in its pid namespace), repeating the flags the mount has locked. Between the two
 * the path is what it was before the hold: writable. */
static int32_t hold_by_remount(int tree, int target, int procfd)
{
    char proc[32];
    struct statfs fs;
    if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ||
        fstatfs(tree, &fs) < 0 || fchdir(procfd) < 0)
        return -errno;
    snprintf(proc, sizeof proc, "self/fd/%d", tree);
    int32_t r = mount(NULL, proc, NULL,
                      MS_REMOUNT | MS_BIND | mnt_ms_now(&fs) | MS_RDONLY | MS_NOSUID, NULL) < 0
                    ? -errno
                    : 0;
    if (r < 0) /* never leave a writable clone standing as a hold */
        (void)umount2(proc, MNT_DETACH);
    (void)!chdir("/");
    return r;
}

/* The helper: hold one path (by remount when no_setattr: hold_by_remount). */
static int32_t hold_one(const char *path, bool no_setattr, int procfd)
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
    if (tree < 0) {
        r = -errno;
    } else if (!no_setattr &&
               mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) == 0) {
        if (move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
            r = -errno;
    } else if (no_setattr || errno == ENOSYS) {
        r = procfd >= 0 ? hold_by_remount(tree, fd, procfd) : -ENOSYS;
    } else {
        r = -errno;
    }
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
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* The helper's life: into the namespaces (the view is built by the first hold), then one answer
 * per request until the controller's end closes (or the thread that forked it ends:
 * PR_SET_PDEATHSIG). */
static _Noreturn void hold_serve(int sock, int userns, int mntns, pid_t parent, bool no_setattr)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
        _exit(1);
    /* the host's /proc, for hold_by_remount (before setns: the sandbox's is another) */
    int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    int32_t joined =
        setns(userns, CLONE_NEWUSER) < 0 || setns(mntns, CLONE_NEWNS) < 0 || chdir("/") < 0 ? -errno
                                                                                            : 0;
    /* nothing of the controller's stays open here but the socket, at 3 (moved out of the way
     * first: it may be 3 already, or the copy would land on it) */
    int s_hi = fcntl(sock, F_DUPFD, 10), p_hi = proc < 0 ? -1 : fcntl(proc, F_DUPFD, 10);
    if (s_hi < 0 || dup2(s_hi, 3) < 0 || (p_hi >= 0 && dup2(p_hi, 4) < 0))
        _exit(1);
    int procfd = p_hi >= 0 ? 4 : -1;
    (void)syscall(SYS_close_range, 5u, ~0u, 0u);
    for (;;) {
        char path[PATH_MAX + 1];
        ssize_t n = recv(3, path, PATH_MAX, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(0);
        path[n] = '\0';
        int32_t r = joined < 0 ? joined
                    : path[0] == '/' && (size_t)n == strlen(path)
                        ? hold_one(path, no_setattr, procfd)
                        : -EINVAL;
        if (send(3, &r, sizeof r, MSG_NOSIGNAL) < 0)
            _exit(0);
    }
}

int repo_hold_open(pid_t init_pid, struct repo_hold **out)
{
    int userns = open_ns(init_pid, "user"), mntns = userns < 0 ? -1 : open_ns(init_pid, "mnt");
    *out = NULL;
    if (userns < 0 || mntns < 0) {
        if (userns >= 0)
            close(userns);
        return userns < 0 ? userns : mntns;
    }
    struct repo_hold *h = xcalloc(1, sizeof *h);
    h->ns[0] = userns;
    h->ns[1] = mntns;
    h->sock = -1;
    pthread_mutex_init(&h->lock, NULL);
    *out = h;
    return 0;
}

/* The helper, forked at the first hold (under h->lock). 0 or -errno. */
static int hold_fork(struct repo_hold *h)
{
    int sv[2];
    if (h->failed)
        return h->failed;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return h->failed = -errno;
    bool no_setattr = mnt_setattr_lacking(); /* read here: the child only makes system calls */
    pid_t self = getpid(), pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return h->failed = -errno;
    }
    if (pid == 0)
        hold_serve(sv[1], h->ns[0], h->ns[1], self, no_setattr);
    close(sv[1]);
    h->pid = pid;
    h->sock = sv[0];
    return 0;
}

int repo_hold_path(struct repo_hold *h, const char *path)
{
    if (!h)
        return -ENOSYS;
    size_t len = strlen(path);
    if (path[0] != '/' || len > PATH_MAX)
        return -EINVAL;
    int32_t r = -EPIPE;
    pthread_mutex_lock(&h->lock);
    if (!h->pid && (r = hold_fork(h)) < 0) {
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
    if (h->pid > 0) {
        close(h->sock);
        (void)kill(h->pid, SIGKILL);
        (void)waitpid(h->pid, NULL, 0);
    }
    close(h->ns[0]);
    close(h->ns[1]);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
