/* host_trusted.h — which workspace paths the host will later run or trust (git hooks and config,
 * .envrc, CI definitions, agents' and editors' configs, build entry points, new executables,
 * links out of the workspace), and why: what `cordon review` flags and `cordon apply` leaves
 * pending without --all.
 * A C table, not a Lua hook: `cordon review` and `apply` run without a sandbox or a resolved
 * profile, on the host's side, and must answer the same whatever policy a project ships (a
 * project's policy is written by the very commands whose writes are being reviewed). The table is
 * the one place to extend; each row says why in the words `cordon review` prints.
 * Uses: name_glob.h. Must never: read the file, or follow a link. */
#ifndef CORDON_HOST_TRUSTED_H
#define CORDON_HOST_TRUSTED_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Why path (relative to the workspace) is one the host will run or trust, or NULL. mode: the
 * pending entry's type and mode (0: removed); host_mode: the host's (0: none); link: a pending
 * link's target or NULL. */
const char *host_trusted_why(const char *path, mode_t mode, mode_t host_mode, const char *link);
/* Why path (relative to the workspace) is a hook or a config (config, config.worktree,
 * commondir) of a git dir whose path says nothing of git (a bare repository, `x.git/hooks/...`),
 * or NULL. is_git_dir(ctx, dir) tells whether dir (relative) is one, from what the caller knows
 * (cordon review: the pending changes); for a path host_trusted_why left unflagged. */
const char *host_trusted_git_dir_why(const char *path,
                                     bool (*is_git_dir)(void *ctx, const char *dir), void *ctx);
/* The table's i-th name pattern (see host_trusted.c), NULL past its end: for a caller that looks
 * only where the table names (trusted_changes.c derives its candidate folders from it). */
const char *host_trusted_pattern(size_t i);
/* Does the link at path (relative to the workspace) with target lead out of the workspace (an
 * absolute target, or a relative one that climbs above the workspace's root)? */
bool host_trusted_link_out(const char *path, const char *target);
#endif
