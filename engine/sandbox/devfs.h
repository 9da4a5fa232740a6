/* Runs in: init (and a fresh sandbox's process of a session: fresh_sandbox.h). */
/* devfs.h — the sandbox's minimal /dev (null, zero, full, random, urandom, tty, a private
 * devpts, shm) and its own /proc. Device nodes are the host's, taken detached before the view
 * changes and attached to a fresh tmpfs; nothing else of the host's /dev is reachable.
 * In a container that masks parts of /proc and /sys (Docker's and Podman's defaults) the kernel
 * refuses a user namespace a procfs or sysfs of its own: then the container's stay, read-only,
 * and each command gets a Landlock domain that keeps it out of other processes' /proc/PID. */
#ifndef CORDON_DEVFS_H
#define CORDON_DEVFS_H
#include <stdbool.h>
#include "sandbox/mount_ops.h"

#define DEVFS_N_NODES 6
struct devfs_nodes {
    int fds[DEVFS_N_NODES];
};

/* Before the view changes. */
int devfs_take_nodes(struct devfs_nodes *cap, struct mnt_err *e);
/* Mount the new /dev, its /dev/shm shm_size bytes at most; closes the detached trees' fds. */
int devfs_build(struct devfs_nodes *cap, unsigned long long shm_size, struct mnt_err *e);
/* Mount the pid namespace's own /proc, read-only (kernel knobs included). When the kernel refuses
 * (EPERM: the existing /proc is a container's, with masks) keep that one, read-only already,
 * if Landlock can guard it (procfs_guard_apply), and say so through procfs_is_shared(). 0, or
 * -1 with one line in e. */
int procfs_build(struct mnt_err *e);
/* Whether this process's sandbox shows the container's /proc (procfs_build kept it). */
bool procfs_is_shared(void);
/* In the command's process after no_new_privs, before exec, when procfs_is_shared(): a Landlock
 * domain that restricts nothing but ptrace access, so /proc/PID of every process outside the
 * command's own (the agent's, cordon's) keeps its memory, environment, open files and root to
 * itself. Async-signal-safe. 0 or -errno. */
int procfs_guard_apply(void);
/* Mount a read-only sysfs of the sandbox's own network namespace over /sys, so
 * /sys/class/net lists only its loopback. When the kernel refuses as for /proc, keep the
 * container's (read-only already): sysfs_is_shared() says so. 0, or -1 with one line in e. */
int sysfs_build(struct mnt_err *e);
bool sysfs_is_shared(void);
#endif
