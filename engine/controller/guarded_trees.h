/* guarded_trees.h — the repositories' check (git_guard.h) for every tree a sandboxed command can
 * write on the host: the workspace, and each writable path (--allow-write, the profile's
 * `writable`) that is a directory outside it. A repository there is one the person's git uses
 * as much as the workspace's, so it gets the same protection: what git follows to find hooks
 * and config held read-only where it exists (the workspace's through readonly_in_workspace,
 * a writable path's through protected_paths, which init binds the same way), compared and
 * undone after each command, and its config writes mediated (git_publish.h, given roots()).
 * Owns: which trees are guarded and the label of their lines ("in PATH: ...").
 * Must never: guard a tree the command cannot write, or start a sandbox whose trees could not
 * be looked at (NULL: the caller stops, failing closed). */
#ifndef CORDON_GUARDED_TREES_H
#define CORDON_GUARDED_TREES_H
#include <stdbool.h>
#include <sys/types.h>
#include "base/util.h"
#include "sandbox/sandbox-t.h"

struct guarded_trees;

/* The first snapshots of cfg's trees; what they hold read-only is appended to
 * cfg->readonly_in_workspace (the workspace's) and cfg->protected_paths (a writable path's).
 * Before init has the configuration. NULL (said on stderr) when a tree cannot be looked at. */
struct guarded_trees *guarded_trees_new(struct sandbox_config *cfg);

/* git_guard_check / git_guard_tick over every tree; lines as theirs, a writable path's prefixed
 * with "in PATH: ". Returns the differences found, or the first -errno. */
int guarded_trees_check(struct guarded_trees *gs, struct str_list *lines);
int guarded_trees_tick(struct guarded_trees *gs, struct str_list *lines, bool may_walk);

/* Once init has built the view: with hold (repo_hold.h, opened before init had its
 * configuration; taken; NULL: none, hold_err says why), hold what the snapshots found read-only inside the running sandbox and start the
 * watcher (repo_watch.h), which finds every repository as it appears, at any depth, and has it
 * held. From then on guarded_trees_check and guarded_trees_tick never walk the trees (the watcher
 * does, off the caller's thread), and guarded_trees_check first waits until the watcher has seen
 * all the command made. Without a holder, one line says so and the undo after the fact
 * remains. -1 (said in one line) when the watcher cannot start: the walks go on. */
struct repo_hold;
int guarded_trees_watch(struct guarded_trees *gs, struct repo_hold *hold, int hold_err);

/* Readable when the watcher found something: call guarded_trees_tick. -1: no watcher. */
int guarded_trees_fd(const struct guarded_trees *gs);

/* The guarded trees, canonical (the workspace first when it is writable): the roots inside
 * which git config writes are mediated. Empty when nothing is guarded. */
const struct str_list *guarded_trees_roots(const struct guarded_trees *gs);

void guarded_trees_free(struct guarded_trees *gs);
#endif
