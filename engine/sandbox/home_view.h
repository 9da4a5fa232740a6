/* Runs in: init (the home's builder thread); controller (the layer's folder); `cordon home`. */
/* home_view.h — the caller's home inside the sandbox, for profile key `home` = "overlay" or
 * "tmpfs": an overlayfs mounted on the home whose lowest layer is the host's home (read-only,
 * never written), above it a layer of whiteouts for every hidden name under the home (existing on
 * the host or not: a hidden name stays missing whatever the host creates there later), and on top
 * a writable layer: the workspace's persistent layer (overlay) or a fresh tmpfs (tmpfs). Creating
 * something where a hidden name is puts it in the writable layer only; the host's file stays out
 * of sight behind the whiteout.
 * One sandbox at a time writes the layer's upper: the one that mounted it holds an flock on the
 * layer's lock file for its whole life (init keeps the descriptor, until it has killed the rest).
 * A concurrent sandbox of the workspace does not wait: it writes a pending upper of its own, with
 * the layer's upper as one more read-only layer beneath it, merged into the layer later
 * (home_layers.h): overlayfs must not have one upper directory mounted twice. The layer folder
 * holds upper/, work/ (overlayfs' work directory), work.spare/ (the next start's, see
 * home_view.c), pending/ and the lock.
 * Uses: hide.c (the whiteouts), home_layers.c (pending uppers), home_own.c (the person's own
 * entries read-only on the overlay, before it is attached), mount_ops.c, overlay_stage.c. Runs
 * in init, in the new mount
 * namespace (its builder thread in a copy of it, overlay_stage.h).
 * Must never: write to the host's home, fall back to a writable host home, or show the layer's
 * own path inside (the layer is reached through a descriptor taken detached before the view changes). */
#ifndef CORDON_HOME_VIEW_H
#define CORDON_HOME_VIEW_H
#include <pthread.h>
#include <stdbool.h>
#include "sandbox/mount_ops.h"
#include "sandbox/sandbox-t.h"
#include "base/util.h"

struct home_view {
    enum sandbox_home mode;    /* SANDBOX_HOME_READONLY: nothing to build */
    const char *home;          /* borrowed from the configuration */
    struct str_list rel;       /* whiteouts, relative to home */
    int home_fd;               /* detached clone of the host's home mount: the lowest layer */
    int layer_fd;              /* detached read-write clone of the layer folder, or -1 */
    bool shared;               /* the layer is another sandbox's: a pending upper on top */
    struct str_list sub_paths; /* mounts below the home, put back on top of the overlay */
    int *sub_fds;
    pthread_t builder; /* builds the overlay while init builds the rest of the view */
    bool building;
    int mnt_fd; /* the built overlay, detached; -1: see err */
    /* home_own.h: the kept paths under the home (relative) and the profile's tool folders */
    struct str_list keep;
    struct str_list tool_dirs;
    bool own; /* the rule applies (home_own_applies): the person's entries bound read-only */
    char err[512];
};

/* The layer folder of a workspace (canonical path): "$XDG_STATE_HOME/cordon/homes/<sha256 of
 * the workspace>", XDG_STATE_HOME defaulting to ~/.local/state. A new string, or NULL when
 * neither XDG_STATE_HOME nor HOME is set. */
char *home_view_layer_dir(const char *workspace);
/* The folder holding every workspace's layer (hidden inside sandboxes). A new string or NULL. */
char *home_view_layers_root(void);
/* Take the layer's lock (its file "lock", made if missing) as a running sandbox holds it: the
 * descriptor holding it, -EBUSY when a sandbox holds it, another -errno. */
int home_view_layer_lock(const char *layer);

/* A root caller's shifted sandbox (root_writes.h): init may not reach the layer folder by its
 * path, so init attaches the controller's idmapped detached tree of it at path (a staging folder of
 * its own) and the view takes the layer, and its lock, from there. Borrowed; before home_view_prepare. */
void home_view_use_layer(const char *path);
/* Start the overlay's builder thread before the configuration is known (init waits for it
 * then): it makes its tmpfs, stages it in its own copy of init's mount namespace
 * (overlay_stage.h) and waits for home_view_prepare. Optional; once, before it. */
void home_view_start_early(void);
/* Before the view changes (the detached trees need the host's read-write tree): take the hidden paths
 * under the home out of cfg->hidden into the view's whiteouts (the rest are appended to
 * hidden_rest, for hide.c), lock or share the layer, take detached trees of the home, the layer and the mounts
 * below the home (mounts: the namespace's mount points), and start building the overlay,
 * detached, on a thread (it reaches every layer through the detached trees, staged in a mount
 * namespace of its own, overlay_stage.h, so what the view does meanwhile does not change it). visible: the workspace and writable paths, bound on top
 * later. 0, or -1 with the reason in e. */
int home_view_prepare(struct home_view *hv, const struct sandbox_config *cfg,
                      const struct str_list *visible, const struct str_list *mounts,
                      struct str_list *hidden_rest, struct mnt_err *e);
/* Attach the built overlay on the home, after hide.c's overlays and before the writable binds.
 * 0, or -1 with one line in e naming the cause and the profile key that avoids it. */
int home_view_apply(struct home_view *hv, struct mnt_err *e);
/* Waits until the builder has built, releases what apply did not consume (never the layer's
 * lock). The builder goes on emptying the layer's spare work directory (home_view.c), for
 * home_view_release to wait for. */
void home_view_free(struct home_view *hv);
/* Close fd (a detached mount the view no longer needs) off init's path: the builder does once it
 * is done, as it does its own detached trees (a detached mount's last close waits for the kernel's RCU
 * grace period); at once when there is no builder, or it is done already. */
void home_view_close_later(int fd);
/* Let go of the layer's lock, once nothing in the sandbox can write any more (init has killed
 * and reaped everything): the next sandbox of the workspace need not wait for this init's exit.
 * First waits for the builder's tidy of the layer, which only the lock's holder may do, not for
 * the builder's end: its way back from its staging namespace and its last closes (each may wait
 * for an RCU grace period) go on while init reports, and end with init's exit. */
void home_view_release(void);
#endif
