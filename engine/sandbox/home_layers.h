/* Runs in: init (before the view changes); `cordon home`. */
/* home_layers.h — the pending
 * uppers of a workspace's home layer, so that several sandboxes of one workspace write their
 * homes at once without waiting on each other and without one upper directory ever being
 * mounted twice. The layer folder (home_view.h) holds upper/ and work/ for the sandbox that holds
 * its lock; every other sandbox of the workspace writes into pending/<id>/{upper,work} of its own
 * (id: "p" + its start time in hex nanoseconds + "-" + random hex), with the layer's upper and
 * the pending uppers of sandboxes that have ended as lower layers. Each pending folder has a
 * file "lock": its sandbox holds it exclusively while alive, a sandbox that shows it as a lower
 * layer holds it shared, and whoever takes it exclusively (nobody writes or shows it) may merge
 * it: the holder of the layer's lock merges such pending uppers into upper/ before mounting,
 * oldest end first; a pending sandbox takes the one that ended first over as its own, as it is
 * (no copy), and merges the others into it. One that cannot be merged stays, shown beneath (a
 * shared lock). The lock file's mtime is the sandbox's end (set at release; a killed sandbox's is
 * its start).
 * A merge moves files, folders, links and fifos (renames within the layer folder: modes and
 * times stay; a copy where the kernel will not rename) and applies overlayfs' whiteouts
 * (character devices 0:0) and opaque folders (xattr user.overlay.opaque) as
 * removals; names are opened one at a time beneath the layer (openat2 RESOLVE_BENEATH,
 * RESOLVE_NO_SYMLINKS): no link is followed. When a file was changed on both sides since the
 * pending sandbox started, the later end wins and one line names the file(s). A pending upper
 * that cannot be merged stays pending, and one line says so.
 * Must never: write into an upper directory an overlay has mounted, remove a pending upper a
 * live sandbox writes or shows, or follow a link out of the layer folder. */
#ifndef CORDON_HOME_LAYERS_H
#define CORDON_HOME_LAYERS_H
#include <stdbool.h>
#include <stddef.h>
#include "base/util.h"

/* At most this many ended pending uppers are shown as lower layers of one sandbox. */
#define HL_MAX_LOWERS 16

/* What a starting sandbox took: its own pending folder (own[0] == 0 when it holds the layer),
 * and the ended pending uppers it shows beneath its upper, newest end first, each lock held
 * shared ("pending/<id>/upper" relative to the layer folder). */
struct hl_taken {
    char own[64];
    int own_lock;
    struct str_list lowers;
    int lower_locks[HL_MAX_LOWERS];
};

/* The holder of the layer's lock, before mounting upper/: merge every pending upper nobody
 * writes or shows into upper/, and take the ended ones that others show as lowers. layer_fd: the
 * layer folder. 0, or -1 with one line in err (nothing is then taken). */
int hl_take_holder(int layer_fd, struct hl_taken *t, char *err, size_t errlen);
/* A sandbox that found the layer held: take over the pending folder nobody writes or shows that
 * ended first, or make one (upper made with mode 0700), merge into its upper the other pending
 * uppers nobody writes or shows, and take the ended ones that others show as lowers. 0, or -1
 * with one line in err. */
int hl_take_pending(int layer_fd, struct hl_taken *t, char *err, size_t errlen);
/* The sandbox ends (its processes are gone): its own pending folder's end time is set through
 * layer_fd (a writable detached tree of the layer folder, or -1), and every lock it took is let go. */
void hl_release(struct hl_taken *t, int layer_fd);

/* For `cordon home`: the names of the pending folders of layer folder layer_fd (best effort,
 * none on error); whether a live sandbox writes one of them. */
void hl_list(int layer_fd, struct str_list *names);
bool hl_any_live(int layer_fd);
/* Remove folder name of dfd and everything in it, no link followed (overlayfs' work folder holds
 * a folder of mode 0: made searchable first). 0 or -errno. */
int hl_remove_tree(int dfd, const char *name);
#endif
