/* Runs in: init (the view); controller (git_worktree_common_dir). */
/* git_worktree.h — what the view adds when the workspace is a git worktree, so that git works
 * inside the sandbox without a command being able to change what the host's git runs.
 *
 * A linked worktree (`git worktree add`: its `.git` is a file `gitdir: C/worktrees/NAME`) keeps
 * its index, HEAD and lock files in that admin folder and its objects and refs in the
 * repository's common dir C, both outside the workspace. The controller makes C a writable
 * path with a guard and watcher of its own (git_worktree_common_dir; controller/guarded_trees.h),
 * so that git's renames at C's top (packed-refs.lock onto packed-refs) and `git worktree add`
 * land on the host while what git follows there is held. Inside the sandbox then:
 *   - the admin folder is writable, but its `commondir` and `gitdir` files (which the host's git
 *     follows) and its `config.worktree` are read-only, and the workspace's `.git` file too;
 *   - at C's top, what is there at the start but objects/, refs/, logs/, packed-refs, rr-cache/,
 *     lfs/ and worktrees/ (config, hooks/, info/, modules/, the main worktree's HEAD and
 *     index, ...) is read-only; in worktrees/, the other admin folders as below.
 * Should C not be a writable path (the controller's checks and init's disagree: it changed in
 * between), C is a fresh tmpfs holding C's entries re-attached (the stores and the admin folder
 * writable, the rest read-only): nothing new appears at the top of the host's C, and rewriting
 * packed-refs or shallow fails (a rename over a mount point).
 * When the workspace is the main worktree, .git/worktrees is a writable mount point (it cannot
 * be renamed away) and each admin folder in it stays writable: `git worktree add`, a commit in
 * a linked worktree, `git gc`, `git worktree remove` and `prune` write there. Their pointers
 * (commondir, gitdir, config.worktree) are held read-only by the controller (its first walk's
 * binds, then its watcher as they appear). In both layouts, an admin folder whose worktree lies
 * outside the workspace keeps its HEAD and index read-only, and a linked worktree's folder in
 * the workspace is bound onto itself (`git worktree move` of it fails before it renames).
 * The `.git` file and `commondir` are read here, in init, before the view is built and before
 * any command runs, from the host's file system. A `.git` file that leads anywhere but the admin
 * folder of this very worktree in a repository the caller owns gets no grant: one warning line,
 * and the sandbox starts without it (git then cannot write there; the workspace's files are fine).
 * Never writes anything on the host but an empty config.worktree in the admin folder (so that it
 * can be held read-only); never follows a path a command could have planted after the check.
 * Uses: mount_ops.h. */
#ifndef CORDON_GIT_WORKTREE_H
#define CORDON_GIT_WORKTREE_H
#include <stdbool.h>
#include <stddef.h>
#include "sandbox/mount_ops.h"
#include "sandbox/sandbox-t.h"

struct git_worktree_entry;

struct git_worktree {
    char *git_file;                     /* workspace/.git when a regular file, else NULL */
    char *admin;                        /* the admin folder (canonical), NULL: no grant */
    char *common;                       /* the common dir (canonical) */
    int admin_fd;                       /* the admin folder, a writable detached tree, or -1 */
    struct git_worktree_entry *entries; /* the common dir's entries, as detached trees */
    size_t n_entries;
    char *main_worktrees; /* workspace is the main worktree: its .git/worktrees */
    bool common_writable; /* the common dir is a writable path (git_worktree_common_dir) */
    char *workspace;      /* cfg's, for apply */
};

/* Controller side, before the configuration goes to init: the common dir (canonical, the
 * caller frees it) of the linked worktree that the workspace is, when its `.git` file passes
 * the checks below; else NULL. The controller makes it a writable path when none covers it
 * (controller_resolve), so that the repository's guard and watcher hold what git follows there
 * (controller/guarded_trees.h) and git's renames at its top (packed-refs) land on the host. */
char *git_worktree_common_dir(const struct sandbox_config *cfg);

/* Before the host is made read-only: read and check the paths, take detached trees of what will be attached.
 * 0 (with or without a grant; a refused one said in one warning line), or -1 with one line in
 * e when a detached tree fails. gw is released on -1. */
int git_worktree_prepare(const struct sandbox_config *cfg, struct git_worktree *gw,
                         struct mnt_err *e);
/* After the workspace and the writable paths are attached: build the common dir's view and the
 * read-only binds. 0, or -1 with one line in e. */
int git_worktree_apply(struct git_worktree *gw, struct mnt_err *e);
void git_worktree_release(struct git_worktree *gw);
#endif
