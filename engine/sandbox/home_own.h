/* Runs in: init (the home's builder thread); controller (home_create_guard.c). */
/* home_own.h — the person's own files in the copy-on-write home (home_view.h): read-only, as the
 * rest of the host is. The layer takes what tools write on their own: the home's dot-entries
 * (~/.cache, ~/.gitconfig, a new ~/.foo) and the profile's home_tool_dirs (~/go). Every other
 * entry of the home's top that exists is bound read-only from the host's tree over the overlay
 * (so an old copy in the layer never shows), except the folders on the way to the workspace or a
 * writable path under the home: in those, every entry but the next one on the way is bound the
 * same. New names at the top that are neither kind are refused by the controller
 * (controller/home_create_guard.h), which the kernel alone cannot tell from new dot-entries.
 * Runs in the home's builder thread (home_view.c), before the overlay is attached: the layer's
 * cleaning before the mount, the binds in its staging namespace after. Uses mount_ops.c,
 * overlay_stage.c.
 * Must never: write to the host's tree, bind a host entry that holds a hidden name (the overlay's
 * own view, with its whiteouts, is bound read-only instead), or follow a link. */
#ifndef CORDON_HOME_OWN_H
#define CORDON_HOME_OWN_H
#include <stdbool.h>
#include "sandbox/mount_ops.h"
#include "base/util.h"

struct sandbox_config;
/* Does cfg's home take the rule at all: a copy-on-write home ("overlay" or "tmpfs") that is not
 * / and not inside the workspace or a writable path. */
bool home_own_applies(const struct sandbox_config *cfg);
/* Does name, an entry of the home's top, take writes into the layer? */
bool home_own_is_tools(const char *name, const struct str_list *tool_dirs);
/* The paths of visible (the workspace and writable paths) inside home but not home itself,
 * relative to it ("proj", "src/proj"), appended to out. */
void home_own_keep(const char *home, const struct str_list *visible, struct str_list *out);
/* The builder, holding the layer's lock, before the mount: remove from the layer's upper/ what
 * an older cordon let commands write outside the rule (entries of the top that are neither
 * dot-entries nor tool folders nor on the way to a kept path, and in the folders on the way
 * every entry but the next one), so that they never mask the host's files. Best effort, no
 * link followed; what stays is covered by home_own_bind anyway. */
void home_own_clean_layer(int layer_fd, const struct str_list *keep,
                          const struct str_list *tool_dirs);
/* The builder, in its staging namespace (overlay_stage.h, working directory the staging tmpfs
 * tmpfs_fd), once the overlay is built: attach overlay_fd there, bind each entry named above
 * read-only on it, a clone of the host's entry (lower: the host's home as staged) when the host
 * has one of the same kind and no hidden name lies in it (rel: the whiteouts, relative to the
 * home), else the overlay's own view of it; and return the whole as one detached tree for init
 * to attach on the home. The tree's fd, or -1 with the cause in e (overlay_fd is the caller's
 * to close either way). */
int home_own_stage(int tmpfs_fd, int overlay_fd, const char *lower, const struct str_list *keep,
                   const struct str_list *tool_dirs, const struct str_list *rel, struct mnt_err *e);
#endif
