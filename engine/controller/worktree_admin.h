/* worktree_admin.h — runs in the controller (the seccomp answerer's thread and the git guard's
 * check). A linked worktree's admin folder G/worktrees/NAME keeps the pointers git follows
 * from the worktree (commondir, gitdir), which the sandbox holds read-only. Once the worktree
 * itself is gone (its folder removed on the host), git calls the admin folder prunable and
 * `git worktree prune` removes it: here is the one test both sides share, so that the removal
 * is let through (hold_unlink.c) and not put back (git_guard.c).
 * Owns: "is this an admin folder" (by its path) and "is its worktree gone" (by what its
 * gitdir file names, as git's own prune asks it: the path there does not exist).
 * Must never: call a worktree gone on an error that is not "no such file" (a folder the caller
 * cannot search is someone's worktree), or when it went while commands ran; follow anything
 * but the gitdir's own path. */
#ifndef CORDON_WORKTREE_ADMIN_H
#define CORDON_WORKTREE_ADMIN_H
#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

/* Whether rel (a folder, relative to a guarded tree, no trailing slash) is G/worktrees/NAME. */
bool worktree_admin_rel(const char *rel);

/* Whether the gitdir text (the file's content, len bytes) of the admin folder open as admin_fd
 * names a path that does not exist (ENOENT or ENOTDIR; relative to the admin folder when it is
 * relative, as git writes it with worktree.useRelativePaths), gone before since_ns: the deepest
 * folder of that path that exists unchanged since (its ctime). A worktree that vanished while
 * commands ran may have been moved by one (`mv` of a folder above it): then it is not gone,
 * since the admin folder's pointers would be open to a plant that the move back revives. */
bool worktree_admin_points_nowhere(int admin_fd, const char *text, size_t len, long long since_ns);

/* Whether the folder open as admin_fd, at rel, is an admin folder whose worktree is gone: read
 * from its gitdir file now, or remembered in dead ("dev:ino") from an earlier look, since
 * prune removes the gitdir file itself among the others. A folder judged gone is added. */
bool worktree_admin_gone(int admin_fd, const char *rel, long long since_ns, struct str_list *dead);
#endif
