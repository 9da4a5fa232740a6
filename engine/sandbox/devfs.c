/* devfs.c — see devfs.h. */
#include "sandbox/devfs.h"

#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const device_nodes[DEVFS_N_NODES] = {"null", "zero", "full", "random", "urandom", "tty"};

int devfs_capture(struct devfs_capture *cap, struct mnt_err *e)
{
    for (int i = 0; i < DEVFS_N_NODES; i++) {
        char path[32];
        snprintf(path, sizeof path, "/dev/%s", device_nodes[i]);
        if ((cap->fds[i] = mnt_capture(e, path)) < 0) {
            while (i-- > 0)
                close(cap->fds[i]);
            return -1;
        }
    }
    return 0;
}

int devfs_build(struct devfs_capture *cap, unsigned long long shm_size, struct mnt_err *e)
{
    static const char *const links[][2] = {
        {"/proc/self/fd", "/dev/fd"},     {"/proc/self/fd/0", "/dev/stdin"},
        {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"},
        {"pts/ptmx", "/dev/ptmx"},
    };
    int r = -1;
    /* Unsized, a tmpfs may take half the host's RAM, and every sandbox has its own. */
    char shm_opts[48];
    snprintf(shm_opts, sizeof shm_opts, "mode=1777,size=%llu", shm_size);
    if (mnt_mount(e, "cordon-dev", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") < 0)
        goto out;
    for (int i = 0; i < DEVFS_N_NODES; i++) {
        char path[32];
        snprintf(path, sizeof path, "/dev/%s", device_nodes[i]);
        if (mnt_attach(e, cap->fds[i], path, true) < 0)
            goto out;
    }
    if (mkdir("/dev/pts", 0755) < 0 || mkdir("/dev/shm", 01777) < 0) {
        mnt_fail(e, "mkdir", "/dev/pts, /dev/shm");
        goto out;
    }
    if (mnt_mount(e, "devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                  "newinstance,ptmxmode=0666,mode=0620") < 0 ||
        mnt_mount(e, "cordon-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, shm_opts) < 0)
        goto out;
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        if (symlink(links[i][0], links[i][1]) < 0) {
            mnt_fail(e, "symlink", links[i][1]);
            goto out;
        }
    }
    /* Nothing may be added to /dev afterwards. */
    if (mnt_mount(e, NULL, "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) < 0)
        goto out;
    r = 0;
out:
    for (int i = 0; i < DEVFS_N_NODES; i++) {
        if (cap->fds[i] >= 0)
            close(cap->fds[i]);
        cap->fds[i] = -1;
    }
    return r;
}

int procfs_build(struct mnt_err *e)
{
    /* Read-only as a whole: a caller who is root maps to the host's uid 0, and root-owned
     * kernel knobs (/proc/sys, /proc/sysrq-trigger) check only the owner's mode bits. One
     * read-only mount costs one system call where bubblewrap's per-path binds cost six. */
    return mnt_mount(e, "proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

int sysfs_build(struct mnt_err *e)
{
    return mnt_mount(e, "sysfs", "/sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}
