/* overlay_stage.c — see overlay_stage.h. */
#include "sandbox/overlay_stage.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

int overlay_stage_begin(struct overlay_stage *sg, int tmpfs_fd, bool come_back, struct mnt_err *e)
{
    /* Without a way back the thread stays in its copy, which goes when the thread ends:
     * nothing else a builder does needs init's namespace (what it touches later, it reaches by
     * descriptors). */
    sg->saved_ns = come_back ? open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC) : -1;
    sg->unshared = false;
    if (unshare(CLONE_NEWNS) < 0)
        return mnt_fail(e, "unshare a mount namespace to stage", "overlay layers");
    sg->unshared = true;
    if (move_mount(tmpfs_fd, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0 ||
        fchdir(tmpfs_fd) < 0)
        return mnt_fail(e, "stage overlay layers on", "/");
    return 0;
}

int overlay_stage_attach(int tmpfs_fd, int fd, const char *name, struct mnt_err *e)
{
    if ((mkdirat(tmpfs_fd, name, 0755) < 0 && errno != EEXIST) ||
        move_mount(fd, "", tmpfs_fd, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        return mnt_fail(e, "stage the overlay layer", name);
    return 0;
}

void overlay_stage_end(struct overlay_stage *sg)
{
    if (sg->saved_ns < 0)
        return;
    if (sg->unshared)
        (void)setns(sg->saved_ns, CLONE_NEWNS);
    close(sg->saved_ns);
    sg->saved_ns = -1;
    sg->unshared = false;
}

/* A refusal of fsconfig on fs: the kernel's own message when it left one ("e overlayfs: ..."). */
static int fs_fail(int fs, struct mnt_err *e, const char *what, const char *arg)
{
    int err = errno;
    char msg[256];
    ssize_t n = read(fs, msg, sizeof msg - 1);
    if (n > 2) {
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\0'))
            n--;
        msg[n] = '\0';
        snprintf(e->buf, e->len, "%s (%s)", msg + 2, strerror(err));
        errno = err;
        return -1;
    }
    errno = err;
    return mnt_fail(e, what, arg);
}

int overlay_stage_mount(const char *opts, unsigned long long attrs, const char *what,
                        struct mnt_err *e)
{
    int fs = fsopen("overlay", FSOPEN_CLOEXEC), mfd = -1, err = 0;
    if (fs < 0)
        return mnt_fail(e, "fsopen", "overlay");
    char *copy = xstrdup(opts), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq)
            *eq = '\0';
        if (fsconfig(fs, eq ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, kv, eq ? eq + 1 : NULL, 0) <
            0) {
            fs_fail(fs, e, "overlay option", kv);
            goto out;
        }
    }
    if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
        fs_fail(fs, e, "mount overlayfs on", what);
        goto out;
    }
    mfd = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned int)attrs);
    if (mfd < 0)
        mnt_fail(e, "fsmount overlayfs on", what);
out:
    err = errno;
    free(copy);
    close(fs);
    errno = err;
    return mfd;
}

struct run_arg {
    int (*fn)(void *);
    void *arg;
    int r;
};

static void *run_thread(void *p)
{
    struct run_arg *ra = p;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    ra->r = ra->fn(ra->arg);
    return NULL;
}

int overlay_stage_run(int (*fn)(void *), void *arg)
{
    struct run_arg ra = {fn, arg, 0};
    pthread_t t;
    int r = pthread_create(&t, NULL, run_thread, &ra);
    if (r != 0)
        return -r;
    pthread_join(t, NULL);
    return ra.r;
}
