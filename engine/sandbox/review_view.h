/* Runs in: init (its main thread; the overlay is built on a staging thread, overlay_stage.h). */
/* review_view.h — review mode's workspace (profile key workspace_review, --review): an overlayfs
 * over the workspace whose upper layer is the workspace's review layer (review_layer.h), so the
 * commands see the workspace with their own writes while the host's copy does not change.
 * One sandbox at a time mounts a layer: init holds the layer's lock (flock, exclusive) until it
 * exits, and a second sandbox of the workspace in review mode is refused with one line (an upper
 * directory mounted twice is undefined behaviour in overlayfs).
 * Uses: mount_ops.h, overlay_stage.h. Must never: mount the layer's upper without the lock, or
 * fall back to the host's writable workspace when the overlay cannot be built. */
#ifndef CORDON_REVIEW_VIEW_H
#define CORDON_REVIEW_VIEW_H
#include <stdbool.h>
#include <stddef.h>
#include "sandbox/mount_ops.h"
#include "sandbox/sandbox-t.h"

struct review_view {
    int layer_fd; /* a detached tree of the layer folder, taken before the host turns read-only */
    int lock_fd;  /* the layer's lock, held for init's life (never closed before it exits) */
};

/* Before the host's tree turns read-only: take the layer's lock and a detached tree of its folder
 * (cfg->review_layer). Nothing when cfg->review is off. 0, or -1 with one line in e. */
int review_view_take(const struct sandbox_config *cfg, struct review_view *rv, struct mnt_err *e);
/* The overlay of the workspace: lower the detached workspace tree ws_fd (not consumed), upper and
 * work the layer's; a detached mount fd, or -1 with one line in e. */
int review_view_mount(const struct sandbox_config *cfg, struct review_view *rv, int ws_fd,
                      struct mnt_err *e);
/* A shifted root caller's init reaches the layer folder only where it attached the controller's
 * idmapped tree of it (init.c): path, used by review_view_take instead of cfg->review_layer. */
void review_view_use_layer(const char *path);
/* A session's init, before the view is built: keep the workspace's and the layer's trees for
 * review_view_swap, attached in a mount namespace of their own where they can be cloned on
 * every kernel (a run's init takes none). */
void review_view_keep_for_swap(void);
/* A session's rollback (init's main thread, INIT_WIRE_REVIEW_SWAP): a new overlay of the workspace
 * with dir/upper and dir/work of the layer (kept from review_view_mount) takes the place of the
 * one on workspace: it goes beneath it (move_mount beneath, Linux 6.5), every mount on the old
 * one is placed again on it at the same path (a read-only cover as the same cover of the new
 * overlay), then the old one is detached (MNT_DETACH: a process still in it keeps its view).
 * Before 6.5 (EINVAL, asked once; or CORDON_TEST_KERNEL_LACKS=move_mount_beneath) the new
 * overlay is made whole with its covers in a staging of a private namespace and attached on top
 * of the old one in one step; the old one stays mounted beneath it until init ends (*stacked:
 * its upper must stay on disk), at most 16 times a session.
 * The old tree's mount ids (newly allocated, for the controller to find who still holds it) in
 * *ids. 0, or -1 with one line in e (the old view then stays in place). */
int review_view_swap(const char *workspace, const char *dir, unsigned **ids, size_t *n_ids,
                     bool *stacked, struct mnt_err *e);
/* Close the layer's tree (the lock stays held: it goes with init). */
void review_view_release(struct review_view *rv);
#endif
