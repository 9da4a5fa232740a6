/* Runs in: init (and the controller: hide_link_target, hide_except_hidden_now). */
/* hide.h — making hidden paths look missing (ENOENT), creating nothing on the host or in the
 * workspace. A hidden path's parent directory (or the path itself, for a top-level directory
 * or one that contains a visible path) is covered by a read-only overlayfs whose top layer,
 * on a detached tmpfs, holds whiteouts for the hidden names. A covered directory with mounts
 * below it (a container's /etc/hosts, a volume in a home) cannot be an overlay's lower layer:
 * it is rebuilt instead, on a tmpfs holding a read-only copy of each of its entries (mounts
 * included) but the hidden ones; names the host adds to it later do not show. A hidden path inside a writable area cannot be
 * whited out without making that area read-only: a file there is covered by a dangling symlink
 * (missing to open and stat; lstat shows the link), a directory by a removed directory (every
 * name in it is missing; stat of the directory itself still succeeds). A hidden path that does
 * not exist yet is covered too, so that what the host creates there later stays out of sight:
 * its first missing component gets a whiteout in the overlay of that component's parent. A folder
 * hidden by rule (hidden_except: only the names that match show, whatever is made there later)
 * becomes a tmpfs holding copies of those names. A hidden path inside a writable area is judged
 * once that area is attached (a shifted root caller's init may not search the host's way to it).
 * Runs in init, in the new mount namespace; hide_link_target and hide_except_hidden_now run on
 * the host, in the controller.
 * Must never: create a file on the host or in the workspace, or show a name because it could not
 * be looked at (what init cannot judge is covered or refused). */
#ifndef CORDON_HIDE_H
#define CORDON_HIDE_H
#include <stdbool.h>
#include <sys/types.h>
#include "sandbox/mount_ops.h"
#include "base/util.h"

struct hide_group;

/* What one build has learnt of the host's paths (lstat: exists or not, and its mode): the hidden
 * names share their parents, and each would otherwise look them all up again. Valid only while
 * the host's tree shows unchanged (before the view's mounts); freed with hide_lookup_free. */
struct hide_seen {
    char *path;
    mode_t mode;
    bool exists;
};
struct hide_lookup {
    struct hide_seen *items;
    size_t len;
};
void hide_lookup_free(struct hide_lookup *lk);

struct hide_plan {
    struct hide_group *groups;
    size_t n_groups;
    struct str_list in_writable; /* hidden paths inside writable areas (fallback cover) */
    int layers_fd;               /* hide_apply's detached tmpfs of the overlays' layers, or -1 */
};

/* Decide what to cover, from the host's view (before any mount changes). visible: paths that
 * must stay reachable (workspace, writable paths). fresh: where the sandbox mounts file systems
 * of its own (/tmp, /run, ...): the host's paths below them are not shown there, so there is
 * nothing to cover (unless a visible path shows them again), and covering would make the fresh
 * file system read-only. */
void hide_plan_build(const struct str_list *hidden, const struct str_list *visible,
                     const struct str_list *fresh, struct hide_plan *plan);
/* The mount points of this mount namespace (/proc/self/mountinfo, unescaped), appended to out.
 * Before the view changes. */
int hide_read_mount_points(struct str_list *out, struct mnt_err *e);
/* Mark the covered directories that have mounts (of those listed) below them, to be rebuilt
 * rather than overlaid. Before the view changes. 0. */
int hide_take_submounts(struct hide_plan *plan, const struct str_list *mounts, struct mnt_err *e);
/* Mount the overlays and the rebuilt directories. After the root is read-only. The detached
 * tmpfs of their layers is left in plan->layers_fd, for the caller to close when it suits (its
 * last close waits for the kernel's RCU grace period) or hide_plan_free. */
int hide_apply(struct hide_plan *plan, struct mnt_err *e);
/* Cover hidden paths inside writable areas. After the writable binds. */
int hide_apply_in_writable(struct hide_plan *plan, struct mnt_err *e);
void hide_plan_free(struct hide_plan *plan);
/* Hidden by rule (profile key hidden_except): each of rules, "DIR\tPATTERN[\tPATTERN...]"
 * (DIR absolute), makes DIR show only the entries whose names match a pattern (fnmatch, one
 * level: "known_hosts*", "*.pub", "config.d"), as they are at start; every other name, and every
 * name the host adds later under any name, is missing. DIR becomes a fresh tmpfs holding a
 * detached copy of each matching entry as the view shows it now (the copy-on-write home's, so a
 * write to one goes where it went before); links are made anew. The tmpfs is read-only but where
 * DIR is in a home the sandbox may write (home_writable: overlay or tmpfs): there a name a
 * command makes lives as long as the sandbox. DIR is the host's canonical path (the controller
 * followed the host's links: a ~/.ssh managed by stow is ruled where it leads); no link is followed
 * to it here. A DIR that no longer shows (hidden, in a hidden folder, or replaced by a link a
 * command made in its copy-on-write home: the host's folder does not show through that) is left
 * alone; one init may not list is covered whole by hide_apply_in_writable (pushed
 * to plan->in_writable). A DIR that holds a visible path refuses. After the writable binds, before
 * hide_apply_in_writable. 0, or -1 with one line in e. */
int hide_apply_except(const struct str_list *rules, const struct str_list *visible,
                      const char *home, bool home_writable, struct hide_plan *plan,
                      struct mnt_err *e);
/* Host side, after a command: the names each rule's folder holds on the host now that the
 * sandbox does not show (no pattern matches), appended to out as absolute paths (at most
 * 256 a folder): for the refusal lines, which name a hidden path that exists. */
void hide_except_hidden_now(const struct str_list *rules, struct str_list *out);
/* Host side, before the sandbox starts: the path h names once every symbolic link on the way is
 * followed (as far as its components exist: a link to a missing target gives that target; what
 * follows a missing component is kept as written). A new string, or NULL when it is h itself
 * (no link on the way, or the way cannot be looked into). A hidden link hides this too. */
char *hide_link_target(const char *h);
/* The whiteouts, relative to target (a directory the caller covers with an overlay of its own),
 * that make hidden path h (strictly below target) missing: h itself; for an h that does not
 * exist, its first missing component; for an h that contains a visible path, every entry of h
 * but the ways down to it. Appended to rel without repeats. */
void hide_whiteouts_for(struct hide_lookup *lk, const char *target, const char *h,
                        const struct str_list *visible, struct str_list *rel);
/* Build, in directory layer of the tmpfs tmpfs_fd, an overlay layer for target holding a
 * whiteout for every name of rel (relative to target; their parents exist on the host) and the
 * directories leading to them, each with the host's owner and mode. target_fd: the host's target
 * directory (a detached tree, when its path no longer shows the host's), or -1 to look it up by path. */
int hide_build_layer(const char *target, int target_fd, const struct str_list *rel, int tmpfs_fd,
                     const char *layer, struct mnt_err *e);
#endif
