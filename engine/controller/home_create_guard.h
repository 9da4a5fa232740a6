/* home_create_guard.h — the controller's answer to a creating call of the sandbox
 * (sandbox/create_notify.h) and to a rename's target: a new name at the top of the
 * copy-on-write home, or in a folder on the way from the home to the workspace or a writable
 * path, and the removal of a name at the top (a link, which no bind can hold, or an entry the
 * host added since the start), is refused with EROFS (the read-only file system the rest of the host is, so the
 * command and the refusal detector say what they say of any write outside) unless the layer
 * takes it: at the top, a dot-entry or one of the profile's home_tool_dirs (sandbox/home_own.h).
 * Every other call goes on at once. The parent is found as the caller sees it (its root, cwd or
 * dirfd, through /proc/PID) and compared by device and inode with the home as the caller sees it.
 * A process that rewrites the path between the check and the kernel's own reading of it (a
 * second thread racing) gets a name in its own private layer, never on the host: the guard keeps
 * commands from believing in a write that did not happen, the layer keeps the host safe.
 * Runs on git_publish's thread. Uses base/util, sandbox/create_notify. */
#ifndef CORDON_HOME_CREATE_GUARD_H
#define CORDON_HOME_CREATE_GUARD_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/seccomp.h>

#include "sandbox/sandbox-t.h"

struct home_create_guard;

/* The guard of this sandbox's home, or NULL when there is nothing to guard (a read-only home,
 * none, or one inside the workspace or a writable path). */
struct home_create_guard *home_create_guard_new(const struct sandbox_config *cfg);
void home_create_guard_free(struct home_create_guard *g);
/* Is d a creating call? Then *error is 0 (let the kernel do it) or a positive errno. */
bool home_create_guard_judge(struct home_create_guard *g, pid_t pid, const struct seccomp_data *d,
                             int *error);
/* A rename onto the path at addr (dirfd as the caller passed it): 0 or a positive errno. */
int home_create_guard_rename(struct home_create_guard *g, pid_t pid, int dirfd, uint64_t addr);
/* An unlink, rmdir or a rename's source: the name at addr removed from the home's top, which
 * the layer does not take (not a dot-entry or tool folder): EROFS, as a new name there; else 0. */
int home_create_guard_remove(struct home_create_guard *g, pid_t pid, int dirfd, uint64_t addr);
#endif
