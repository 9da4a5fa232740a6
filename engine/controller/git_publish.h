/* git_publish.h — the host side of the sandbox's rename filter (sandbox/rename_notify.h):
 * answers every rename of the sandbox. A rename of git's lock file onto a git config file of
 * a writable tree (config or config.worktree in a git directory), which the sandbox sees
 * read-only, is mediated: the new text is read on the host and written into the host's file in
 * place, the rename reported done, when every setting it adds or changes is on the allowlist
 * (base/git_config.h) with a value that fits (a remote URL's local path outside every writable
 * area, as the host resolves it); else refused (EPERM) with one line per key on the command's
 * stderr naming the key, why, and the `git config` that sets it outside. Every other rename is
 * left to the kernel. Every unlink, unlinkat and rmdir is answered too (hold_unlink.h): one
 * that lands on a repository's hold is done on the host, the rest left to the kernel.
 * Used by `cordon run` (controller/run.c) and cordon-session (session_start.c). Must
 * never block on the sandbox, write through a link on the host, write outside the workspace, or let a
 * command's rename wait unanswered: any failure while mediating refuses, with one line. */
#ifndef CORDON_GIT_PUBLISH_H
#define CORDON_GIT_PUBLISH_H
#include "base/util.h"

struct git_publish;

/* Start answering listener (the fd init handed over, taken), from a thread of its own that
 * touches nothing of the caller's (no event loop, no Lua, no proxy). roots: the canonical host
 * paths of the trees whose git configs are mediated (the workspace and writable paths outside
 * it: guarded_trees_roots), which the sandbox sees at the same paths; none (a read-only
 * workspace, no writable path): nothing is mediated, every rename goes to the kernel. A tree
 * that cannot be opened is not mediated, said once; a thread that cannot start ends cordon
 * (die): a rename nobody answers would hang the command. cfg (read here, not kept; NULL: the
 * roots only) says what else the sandbox writes on the host (writable paths, the home's
 * layer): a remote URL naming a local path into any of it is refused. */
struct sandbox_config;
struct git_publish *git_publish_start(int listener, const struct str_list *roots,
                                      const struct sandbox_config *cfg);

/* The guard's check (guarded_trees.c) holds this while it reads and undoes: a config this
 * thread is writing is then never seen half written (made empty, or grown with zeros before
 * its bytes land), which the check would take for the command's change and put back. A write
 * judged meanwhile waits for the check's end. Process-wide; any thread. */
void git_publish_writes_pause(void);
void git_publish_writes_resume(void);

/* Stop the thread and close the listener (renames still waiting then fail with ENOSYS: call it
 * once the sandbox is gone). NULL is fine. */
void git_publish_stop(struct git_publish *g);
#endif
