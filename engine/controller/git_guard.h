/* git_guard.h — the host-side check, after every sandboxed command, that nothing in a git
 * repository of the workspace was changed so that the person's next git command on the host
 * (`git status`, which editors run by themselves every few seconds) would run a program.
 *
 * A snapshot lists, for every repository found in the workspace (the workspace's own, nested
 * ones, submodules' git dirs under .git/modules, linked worktrees' admin folders under
 * .git/worktrees; found at start by a walk of at most GIT_GUARD_MAX_DEPTH levels and
 * GIT_GUARD_MAX_DIRS directories that skips node_modules folders, and, wherever they lie, bare
 * or not, by the watcher (repo_watch.h, git_guard_add_repo), which replaces the bound):
 *   - the pointer files git follows: a `.git` that is a file, `commondir`, `gitdir`;
 *   - the configs git reads (config, config.worktree): only their code-running entries
 *     (git_config_key_runs_code) are compared, their bytes kept to restore them;
 *   - the hooks (not *.sample) of the hooks folder, of the folder it links to when it is a
 *     symbolic link into the workspace, and of the core.hooksPath folder when that lies in the
 *     workspace (husky's `.husky/_` brings its parent `.husky` along: its hooks call those);
 *   - a hooks folder that is a symbolic link: its target.
 * The walks after the first are incremental: a folder whose (st_dev, st_ino, st_ctime) are those
 * the last walk saw has the same entries, so only its sub-folders are looked at (one fstatat for
 * a folder without any); a changed or new folder, one whose ctime was too close to the walk
 * before, and every folder of a file system whose ctime is not trusted (anything but the local
 * ones of dir_stamp_fs_trusted: NFS, SMB, FUSE, 9p, ...) is listed. What is known is kept in
 * memory for the life of the guard (a run, a session) and, for a guard made with a cache file,
 * written there after each check's walk, so that the next run's first walk is incremental too
 * (the file is read with every field checked; anything amiss, or another root, means a full
 * walk).
 * git_guard_check walks again and undoes each difference, one line each naming the repository,
 * the file (and keys) and the action: a changed or removed file gets its previous bytes back;
 * a new hook, a new pointer leading out of the workspace (or anywhere it should not), a new
 * config entry that runs code is neutralised (renamed NAME.cordon-refused with its exec bits
 * off; a new repository's config has those lines commented out instead, so that the
 * repository keeps working). The workspace is compared again with the same snapshot until
 * nothing differs (an undo can bring a folder into view: a hooks link put back), and the
 * snapshot is then the state after the undo.
 * Uses: base/git_config.h, openat2 from a descriptor of the workspace with RESOLVE_BENEATH and
 * RESOLVE_NO_SYMLINKS for every file it reads or writes (the sandbox may have planted links).
 * Must never: run git, follow a symbolic link, touch anything outside the workspace, or treat a
 * file it cannot read or parse as harmless. */
#ifndef CORDON_GIT_GUARD_H
#define CORDON_GIT_GUARD_H
#include <stdbool.h>
#include <stddef.h>
#include "base/util.h"

#define GIT_GUARD_MAX_DEPTH 6    /* directory levels below the workspace looked into */
#define GIT_GUARD_MAX_DIRS 10000 /* directories looked into, in all (0.1-0.25 s listed) */

struct git_guard;

/* Open the workspace (canonical, absolute) and take the first snapshot. The workspace-relative
 * paths the sandbox should bind read-only (each exists, none is a symbolic link) are appended
 * to readonly (when not NULL). NULL (said in one line on stderr) when the workspace cannot be
 * opened: the caller stops, failing closed. */
struct git_guard *git_guard_new(const char *workspace, struct str_list *readonly);

/* git_guard_new, with the tree of folders the last walk saw read from the file cache (when it
 * is one this guard can use) and written there after each check that walked (a new file
 * renamed over it, 0600). cache lies where no sandbox can write: cordon's state directory. */
struct git_guard *git_guard_new_cached(const char *workspace, struct str_list *readonly,
                                       const char *cache);

/* Compare the workspace now with the snapshot and undo each difference. Each line (without
 * "cordon: " and without newline) is appended to lines. Returns how many differences were
 * found (0: none), or -errno when the workspace cannot be read (said in lines too). */
int git_guard_check(struct git_guard *g, struct str_list *lines);

/* git_guard_check of the repositories known (the first walk's and git_guard_add_repo's), without
 * a walk: the watcher found every one. For the check after a command. */
int git_guard_check_known(struct git_guard *g, struct str_list *lines);

/* The sandbox's start (repo_watch_now_ns): a pointer file git is still writing, in a folder born
 * after it, is judged by a tick only when it looks like git's, else by the next check. */
void git_guard_since(struct git_guard *g, long long since_ns);

/* How a check holds a path (workspace-relative) read-only inside the running sandbox: 0 or
 * -errno (controller/repo_hold.h, through guarded_trees). With it, a pointer planted under a new
 * name in a git dir that was there gets an empty stand-in held in its place for the rest of the
 * run (removed by git_guard_free), so that the command cannot plant it again. */
typedef int git_guard_hold_fn(void *ctx, const char *rel);
void git_guard_set_hold(struct git_guard *g, git_guard_hold_fn *hold, void *ctx);

/* The workspace is a linked worktree whose repository's common dir (canonical, copied) is a
 * tree guarded beside it (git_worktree_common_dir): a `.git` file made during the run that names
 * an admin folder there, whose gitdir names that `.git` file back, is what `git worktree add`
 * writes and is kept (the admin folder's pointers are that tree's guard's). */
void git_guard_own_common(struct git_guard *g, const char *common);

/* For a timer: a check of the repositories already known (cheap: their `.git` only), and,
 * with may_walk, now and then a full one (the walk, which finds the new ones): when the last
 * was GIT_GUARD_FULL_MIN_MS ago and GIT_GUARD_FULL_FACTOR times what it cost, so that the walk
 * of a large workspace takes at most 1/FACTOR of the time. Returns as git_guard_check. */
#define GIT_GUARD_FULL_MIN_MS 5000
#define GIT_GUARD_FULL_FACTOR 50
int git_guard_tick(struct git_guard *g, struct str_list *lines, bool may_walk);

/* What the snapshot holds read-only now (workspace-relative): every repository's config, hooks,
 * pointers, ... as git_guard_new's readonly, for the holds made while commands run
 * (repo_hold.h). Valid until the next check. */
const struct str_list *git_guard_readonly(const struct git_guard *g);

/* A repository the watcher found (repo_watch.h), wherever it lies: rel is the folder holding a
 * `.git` or, with bare, a git dir (a bare repository, a submodule's, a linked worktree's admin
 * folder G/worktrees/NAME). From then on every check looks at it. existing: it was there before
 * the sandbox started, and what it holds now is the reference (no line); else the next check
 * compares it with nothing (what runs code in it is undone). */
void git_guard_add_repo(struct git_guard *g, const char *rel, bool bare, bool existing);

/* How long the last walk took, how many directories it looked into, and how many of those it
 * listed (read the entries of): the others were unchanged since the walk before. */
double git_guard_last_ms(const struct git_guard *g);
size_t git_guard_last_dirs(const struct git_guard *g);
size_t git_guard_last_listed(const struct git_guard *g);

void git_guard_free(struct git_guard *g);
#endif
