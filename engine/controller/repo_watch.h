/* repo_watch.h — runs in the controller, on a thread of its own. Finds every git repository of
 * the trees a sandboxed command can write (the workspace, writable paths), at any depth and in
 * any folder (node_modules too), bare or not, from the sandbox's start on and the moment one
 * appears, and has what the host's git follows in it held read-only inside the sandbox at once
 * (repo_hold.h): the git dir's config, config.worktree, hooks, commondir and gitdir, and a
 * worktree's `.git` file that was there before the sandbox (a new one is compared by the check:
 * `git submodule add` writes it twice). The rest (a core.hooksPath folder, what was planted before the hold,
 * the comparison) is git_guard's, on the caller's loop, told of each repository found.
 *
 * Why inotify, not fanotify: fanotify's FAN_CREATE|FAN_ONDIR|FAN_EVENT_ON_CHILD with
 * FAN_REPORT_DFID_NAME on a whole file system needs CAP_SYS_ADMIN in the initial user namespace,
 * which an unprivileged caller never has, and one mechanism for every caller is one to test.
 * inotify works unprivileged: a watch on every folder of the trees, added as the first walk
 * reaches it and as a folder is made or moved in (each then walked, since what was made in it
 * before its watch came is seen by no event). A full queue (IN_Q_OVERFLOW) means a walk of
 * everything again. The watches a user may have (fs.inotify.max_user_watches) can run out: one
 * line says so, the walk goes on without watches, and every repo_watch_flush walks all again,
 * so nothing is missed, only seen later.
 * A folder is a repository's git dir when it holds HEAD, objects/ and refs/ (git init makes
 * objects/ last: by then its hooks and config are written, so `git init` works and is then
 * held), or a linked worktree's admin folder (a folder of a `worktrees` folder holding gitdir or
 * commondir). objects/, refs/ and logs/ of a git dir are not watched: nothing git runs lies
 * there.
 * Paths are opened beneath each tree's root with no symbolic link followed; the sandbox sees
 * the trees at the same paths, where the holds are made.
 * Must never: block the caller's loop (the walks run on the thread), follow a link, or look
 * outside the trees. */
#ifndef CORDON_REPO_WATCH_H
#define CORDON_REPO_WATCH_H
#include <stdbool.h>
#include <stddef.h>
#include "base/util.h"
#include "controller/repo_hold.h"

struct repo_watch;

/* A repository found: in roots[root], rel (relative to it) is a folder holding a `.git`, or a
 * git dir (bare). existing: its config and hooks were there, unchanged, before since_ns
 * (repo_watch_now_ns before the sandbox started). */
struct repo_found {
    size_t root;
    char *rel;
    bool bare;
    bool existing;
};

/* The clock file systems stamp ctimes with (CLOCK_REALTIME_COARSE), in ns: taken before the
 * sandbox starts, anything made after it carries a ctime at or past it. */
long long repo_watch_now_ns(void);

/* Start the thread over roots (canonical absolute paths, copied), holding through hold (may be
 * NULL: found only; stopped by whichever side of the watcher ends last, after repo_watch_free:
 * the caller may use it until then) what is not in bound (absolute paths, sorted, copied: read-only since the
 * start). home (NULL: none): a copy-on-write home whose person's entries are read-only
 * (sandbox/home_own.h); a name the host adds at its top later, but a dot-name or one of
 * home_tools, is held read-only too as it appears. NULL (said in one line on stderr) when
 * inotify or the thread cannot start. */
struct repo_watch *repo_watch_start(const struct str_list *roots, struct repo_hold *hold,
                                    long long since_ns, const struct str_list *bound,
                                    const char *home, const struct str_list *home_tools);

/* Readable (an eventfd) when repositories or lines wait for repo_watch_take. */
int repo_watch_fd(const struct repo_watch *w);

/* What was found since the last call (the caller frees each rel and the array), and the lines to
 * say (appended to lines, without "cordon: "). Returns how many were found. */
size_t repo_watch_take(struct repo_watch *w, struct repo_found **out, struct str_list *lines);

/* Wait until the first walk is done and every event queued now is handled (after a command
 * ended: what it made is found before its last check). */
void repo_watch_flush(struct repo_watch *w);

/* Stop the thread and free it. NULL is fine. */
void repo_watch_free(struct repo_watch *w);
#endif
