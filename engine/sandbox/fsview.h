/* Runs in: init. */
/* fsview.h — the sandbox's filesystem view, exactly as the design says: the host's / read-only
 * (nosuid), the workspace and --allow-write paths writable, a private /tmp, a fresh /run, a
 * minimal /dev, the namespace's own /proc, hidden paths missing, and .git/hooks, .git/config,
 * .cordon (readonly_in_workspace) read-only inside the writable workspace.
 * Runs in init (PID 1, all capabilities of the new user namespace), in the new mount namespace,
 * before any command. Never changes anything outside that namespace. */
#ifndef CORDON_FSVIEW_H
#define CORDON_FSVIEW_H
#include <stddef.h>
#include "sandbox/devfs.h"
#include "sandbox/sandbox-t.h"

/* Where cordon's own binary is inside a sandbox with a network namespace, for `cordon nc` as
 * ssh's ProxyCommand: the binary's host path may be hidden or under the host's /tmp. */
#define FSVIEW_CORDON_EXE "/run/cordon/cordon"

/* What the view takes from the host before the configuration is known, so that init does it
 * while the controller still resolves the profile: every mount made private, the device nodes
 * and cordon's own binary taken detached, the mount points read. */
struct fsview_home;
struct fsview_early {
    struct devfs_nodes dev;
    int self_fd;            /* a read-only bind of cordon's binary, or -1 */
    struct str_list mounts; /* the host's mount points */
    /* Called once, just before /sys is mounted (a sysfs shows the network namespace of the task
     * that mounts it, and may be mounted only from one owned by the sandbox's user namespace):
     * init enters there the network namespace a thread of it made meanwhile. NULL: this task
     * is in its namespace already. 0, or -1 with one line in err. */
    int (*enter_network)(void *ctx, char *err, size_t errlen);
    void *enter_ctx;
    /* A root caller's writable trees as the controller idmapped them (root_writes.h), the
     * workspace first, then the writable paths in their order; NULL: init takes its own. */
    int *trees;
    size_t n_trees;
    struct fsview_home *home; /* begun by fsview_configured, or NULL */
};
/* 0, or -1 with one line in err (early is then released). Leaves enter_network NULL. */
int fsview_prepare(struct fsview_early *early, char *err, size_t errlen);
/* What needs only the configuration, begun as soon as it is known (before the network is set
 * up): the copy-on-write home's detached trees, its overlay built on a thread from here on. A failure
 * is kept, and fsview_build says it where it would have. Before the view changes. */
void fsview_configured(struct fsview_early *early, const struct sandbox_config *cfg);
/* Build the view from early (which it releases, on every path). 0, or -1 with one line in err. */
int fsview_build(const struct sandbox_config *cfg, struct fsview_early *early, char *err,
                 size_t errlen);
#endif
