/* Runs in: init (a thread of its own: the home's builder, hidden folders' overlays). */
/* overlay_stage.h — overlayfs mounts whose layers are
 * detached mounts (the detached trees init takes before the view changes, tmpfs layers of whiteouts),
 * built the same way on every kernel. overlayfs takes a layer only from a mount of the mount
 * namespace of the process that builds it (clone_private_mount's check): Linux before 6.15
 * refuses a detached one ("overlayfs: failed to clone lowerpath/upperpath", EINVAL), which kept
 * the default profile from starting on Debian 12 and 13. So the builder, on a thread of its own,
 * unshares a mount namespace (a copy of init's that nothing else sees or can reach), attaches
 * the layers' tmpfs on its "/" and the other detached trees on folders of that tmpfs, names them
 * relative to its working directory (the tmpfs), builds the overlay detached (fsopen, fsmount),
 * and goes back to init's namespace: the copy and its staging go with it; the overlay keeps
 * private clones of its layers, and init attaches it where it belongs. Measured on 6.18 against
 * naming the detached layers by /proc/self/fd/N: within the noise (docs/kernels.md).
 * Uses: mount_ops.h. Must never: stage anything in init's own namespace (a command would see
 * it), put a path of the host's into the options where a staging name serves, or leave the
 * calling thread in the copy when it can go back. */
#ifndef CORDON_OVERLAY_STAGE_H
#define CORDON_OVERLAY_STAGE_H
#include <stdbool.h>
#include "sandbox/mount_ops.h"

struct overlay_stage {
    int saved_ns; /* the namespace the thread came from; -1 */
    bool unshared;
};

/* On the calling thread (never init's main thread: it would leave init's namespace): unshare a
 * mount namespace, attach tmpfs_fd (a detached tmpfs, the layers' folder) on its "/" and make
 * it the thread's working directory, so "./NAME" names a folder of it. sg is set up here.
 * come_back: overlay_stage_end returns the thread to init's namespace (the copy is torn down
 * then, on this thread); else the thread stays in the copy until it ends, and the teardown
 * happens as it exits, after pthread_join has returned. 0, or -1 with e set; call
 * overlay_stage_end either way. */
int overlay_stage_begin(struct overlay_stage *sg, int tmpfs_fd, bool come_back, struct mnt_err *e);
/* Attach the detached mount fd at name (a new folder) in the staged tmpfs_fd. 0 or -1. */
int overlay_stage_attach(int tmpfs_fd, int fd, const char *name, struct mnt_err *e);
/* A detached overlay from "key=value,flag,..." options (no value holds a ','), mounted with
 * MOUNT_ATTR_* attrs; what: for the message. The mount fd, or -1 with the kernel's own message
 * (or errno's) in e and errno set. */
int overlay_stage_mount(const char *opts, unsigned long long attrs, const char *what,
                        struct mnt_err *e);
/* Back to init's namespace (the copy goes with its last reference). */
void overlay_stage_end(struct overlay_stage *sg);
/* For init's main thread: fn(arg) on a thread of its own (all signals blocked), which may stage
 * (and need not come back); waits for it. fn's result, or -errno when no thread can be had. */
int overlay_stage_run(int (*fn)(void *), void *arg);
#endif
