/* devfs.c — see devfs.h.
 * Owns: the sandbox's /dev, /proc and /sys, and the Landlock guard a command gets when /proc is
 * the container's (procfs_guard_apply).
 * Uses: mount_ops, the raw Landlock system calls.
 * Never: keeps the container's /proc without the guard being possible (procfs_build checks it),
 * or allocates in procfs_guard_apply (it runs between fork and exec). */
#include "sandbox/devfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/magic.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Set by procfs_build / sysfs_build when the kernel refused a file system of our own and the
 * container's stays (read-only, as the whole host tree already is). */
static bool proc_shared, sys_shared;

static const char *const device_nodes[DEVFS_N_NODES] = {"null",   "zero",    "full",
                                                        "random", "urandom", "tty"};

int devfs_take_nodes(struct devfs_nodes *cap, struct mnt_err *e)
{
    for (int i = 0; i < DEVFS_N_NODES; i++) {
        char path[32];
        snprintf(path, sizeof path, "/dev/%s", device_nodes[i]);
        if ((cap->fds[i] = mnt_detached_tree(e, path)) < 0) {
            while (i-- > 0)
                close(cap->fds[i]);
            return -1;
        }
    }
    return 0;
}

int devfs_build(struct devfs_nodes *cap, unsigned long long shm_size, struct mnt_err *e)
{
    static const char *const links[][2] = {
        {"/proc/self/fd", "/dev/fd"},       {"/proc/self/fd/0", "/dev/stdin"},
        {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"},
        {"pts/ptmx", "/dev/ptmx"},
    };
    int r = -1;
    /* Unsized, a tmpfs may take half the host's RAM, and every sandbox has its own. */
    char shm_opts[48];
    snprintf(shm_opts, sizeof shm_opts, "mode=1777,size=%llu", shm_size);
    if (mnt_mount(e, "cordon-dev", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") <
        0)
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
    if (mnt_mount(e, NULL, "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC,
                  NULL) < 0)
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

/* The Landlock ABI the guard needs: 2 (Linux 5.19), for LANDLOCK_ACCESS_FS_REFER. A ruleset
 * that handles any file-system right without it refuses every rename or link across
 * directories (EXDEV). */
#define GUARD_ABI 2
#define GUARD_ACCESS (LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_REFER)

/* Is the file system at path of this type? Only then can the container's stand in for ours. */
static bool is_fs_type(const char *path, long magic)
{
    struct statfs sf;
    return statfs(path, &sf) == 0 && sf.f_type == magic;
}

int procfs_build(struct mnt_err *e)
{
    /* Read-only as a whole: a caller who is root maps to the host's uid 0, and root-owned
     * kernel knobs (/proc/sys, /proc/sysrq-trigger) check only the owner's mode bits. One
     * read-only mount costs one system call where bubblewrap's per-path binds cost six. */
    if (mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
        return 0;
    if (errno != EPERM || !is_fs_type("/proc", PROC_SUPER_MAGIC))
        return mnt_fail(e, "mount", "/proc");
    /* EPERM for a procfs in a user namespace: the kernel gives one only when a procfs is already
     * fully visible in this mount namespace (fs/namespace.c, mount_too_revealing), and a
     * container runtime's masks (/proc/kcore, /proc/keys, ... covered, /proc/sys read-only)
     * are locked mounts over it. subset=pid and hidepid= are refused all the same (measured on
     * Linux 6.18). What stays is the container's /proc, read-only since step 3: its pid
     * directories are every process of the container's, so the command must be kept from their
     * memory, environment, open files and root (where hidden paths are not hidden): ptrace
     * access, which all of those require, is refused by Landlock outside the command's own
     * domain. Without Landlock the sandbox does not start. */
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < GUARD_ABI) {
        snprintf(e->buf, e->len,
                 "sandbox set-up: mount /proc: refused (this container masks parts of its /proc), "
                 "and the container's /proc cannot be shared safely without Landlock ABI %d "
                 "(this kernel: %s); run the container with --security-opt unmask=ALL (Podman) "
                 "or --security-opt systempaths=unconfined (Docker)",
                 GUARD_ABI, abi < 0 ? "none" : "ABI 1");
        return -1;
    }
    proc_shared = true;
    return 0;
}

bool procfs_is_shared(void)
{
    return proc_shared;
}

int procfs_guard_apply(void)
{
    struct landlock_ruleset_attr attr = {.handled_access_fs = GUARD_ACCESS};
    int ruleset = -1, root = -1, r = 0;
    if ((ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0)) < 0 ||
        (root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
        r = -errno;
        goto out;
    }
    /* Everything it handles is allowed everywhere: the domain restricts nothing on its own, but
     * Landlock refuses ptrace access (and so /proc/PID's sensitive files) to any process outside
     * it. */
    struct landlock_path_beneath_attr beneath = {.allowed_access = GUARD_ACCESS, .parent_fd = root};
    if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) < 0 ||
        syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
        r = -errno;
out:
    if (root >= 0)
        close(root);
    if (ruleset >= 0)
        close(ruleset);
    return r;
}

int sysfs_build(struct mnt_err *e)
{
    if (mount("sysfs", "/sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
        return 0;
    /* The same refusal as procfs_build's, for the container's masks over /sys (/sys/firmware,
     * ...). The container's /sys has no per-process files: it stays, read-only; its
     * /sys/class/net lists the container's interfaces instead of the sandbox's loopback. */
    if (errno != EPERM || !is_fs_type("/sys", SYSFS_MAGIC))
        return mnt_fail(e, "mount", "/sys");
    sys_shared = true;
    return 0;
}

bool sysfs_is_shared(void)
{
    return sys_shared;
}
