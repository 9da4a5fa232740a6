/* devfs.h — the sandbox's minimal /dev (null, zero, full, random, urandom, tty, a private
 * devpts, shm) and its own /proc. Device nodes are the host's, captured before the view
 * changes and attached to a fresh tmpfs; nothing else of the host's /dev is reachable. */
#ifndef CORDON_DEVFS_H
#define CORDON_DEVFS_H
#include "sandbox/mount_ops.h"

#define DEVFS_N_NODES 6
struct devfs_capture {
    int fds[DEVFS_N_NODES];
};

/* Before the view changes. */
int devfs_capture(struct devfs_capture *cap, struct mnt_err *e);
/* Mount the new /dev, its /dev/shm shm_size bytes at most; closes the captured fds. */
int devfs_build(struct devfs_capture *cap, unsigned long long shm_size, struct mnt_err *e);
/* Mount the pid namespace's own /proc, read-only (kernel knobs included). */
int procfs_build(struct mnt_err *e);
/* Mount a read-only sysfs of the sandbox's own network namespace over /sys, so
 * /sys/class/net lists only its loopback. */
int sysfs_build(struct mnt_err *e);
#endif
