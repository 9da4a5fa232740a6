/* hold_unlink.h — runs in the controller's thread that answers the sandbox's seccomp
 * notifications (git_publish.c). A repository's hold (repo_hold.h) keeps its hooks, config and
 * pointers read-only inside the sandbox, which also kept a command from deleting them: `rm -rf`
 * of a clone failed (EROFS inside hooks/, EBUSY on the held names). Here an unlink, unlinkat or
 * rmdir that lands on a hold is done on the host instead, on the same file, and answered with
 * its result; every other one is left to the kernel.
 * Removal never runs code. What lies inside a held hooks folder may go (the folder stays held);
 * a held name itself only in a repository a command made (its place is then a new name, which
 * the watcher holds again and the check compares with its snapshot, as for any repository a
 * command makes by hand), or in the admin folder of a linked worktree that is gone (`git
 * worktree prune`), never in one that was there before (docs/git.md).
 * Owns: which removals are a hold's (a held name under a git directory, or inside a held hooks
 * folder, in a guarded tree, the same inode on both sides).
 * Uses: controller/caller_path.h, statx, openat2 beneath the tree's host fd.
 * Must never: remove anything outside the guarded trees, anything that is not what the caller's
 * own path names, or anything the kernel would not have refused the caller by a hold alone; act
 * with more than the controller's own credentials (the caller's). */
#ifndef CORDON_HOLD_UNLINK_H
#define CORDON_HOLD_UNLINK_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/util.h"

/* Whether a removal of path (from the caller's memory) may need looking at: false for a single
 * name that no hold has, in a directory (dirfd, or the cwd) whose mount is writable: the kernel
 * answers it (the cost of most removals is this test). */
bool hold_unlink_maybe(pid_t pid, int dirfd, const char *path);

/* The removal of path by pid (dirfd as it passed it; flags: unlinkat's, AT_REMOVEDIR for rmdir),
 * with the n guarded trees root[] (canonical, as the sandbox names them) and their host O_PATH
 * fds root_fd[] (-1: not guarded); since_ns: a time before any command of the sandbox ran (a
 * repository born later is a command's); dead: the admin folders of gone worktrees judged so
 * far (worktree_admin.h), kept by the caller for the sandbox's life. 1: the kernel's to do
 * (CONTINUE); 0: removed on the host; -errno: the host's refusal, the caller's answer. */
int hold_unlink(pid_t pid, int dirfd, const char *path, int flags, size_t n, char *const *root,
                const int *root_fd, long long since_ns, struct str_list *dead);
#endif
