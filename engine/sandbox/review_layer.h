/* Runs in: controller (before a review sandbox starts), the CLI (cordon review, apply, discard). */
/* review_layer.h — a workspace's review layer: where it lives, how it is made, what it holds.
 * $XDG_STATE_HOME/cordon/reviews/<sha256 of the workspace>/ holds upper/ and work/ (the overlay's,
 * review_view.h), lock (held by the init that mounts it, and by apply and discard while they
 * change the upper), workspace (the workspace's path, for a person reading the folder), started
 * (its mtime: the last start of a review sandbox) and seen/ (per pending path, the host's copy as
 * it was when the layer first held the path: the base of the conflict rule). One folder per
 * workspace is the base later snapshots and forks build on (a snapshot is a copy of upper/ and
 * seen/ beside them).
 * A pending path is recorded on the first look after the sandbox that wrote it started (that
 * sandbox's controller, the next start, or review/apply/discard): when the host's copy changed
 * since that start (ctime), the record says so, and apply treats it as a conflict (the safe side:
 * the sandbox may have seen either copy). A folder pending as added is recorded "absent", and that
 * record stands for everything below it (the host had nothing there either), so a new tree of
 * thousands of files costs one record; a path below it seen first once the folder is no longer
 * added (applied) gets the folder's "absent" as its own.
 * Uses: cordon_dirs.h, sha256.h. Must never: follow a link inside the layer or the workspace
 * (every name is opened beneath its folder, openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). */
#ifndef CORDON_REVIEW_LAYER_H
#define CORDON_REVIEW_LAYER_H
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

enum review_change { REVIEW_ADDED, REVIEW_CHANGED, REVIEW_REMOVED };

/* One pending change, path relative to the workspace. */
struct review_entry {
    char *path;
    enum review_change change;
    mode_t mode;      /* the pending entry's type and mode (0 when removed) */
    mode_t host_mode; /* the host's (0 when it has none) */
    bool content;     /* a changed regular file whose bytes differ (else only its mode) */
    char *link;       /* a pending link's target, else NULL */
};

struct review_list {
    struct review_entry *items;
    size_t len, cap;
};

/* The folder of every workspace's layer ($XDG_STATE_HOME/cordon/reviews), newly allocated, or NULL. */
char *review_layer_root(void);
/* The layer folder of workspace (canonical), newly allocated, or NULL (no state directory). */
char *review_layer_dir(const char *workspace);
/* Make the layer folder (0700 up from the reviews folder) with upper/, work/ and seen/. The folder
 * in *out. 0, or -1 with one line in err. */
int review_layer_make(const char *workspace, char **out, char *err, size_t errlen);
/* A fork's layer (cordon fork, docs/review.md "Forks for best-of-N"): <layer>/forks/<fork>/, a
 * full layer of its own (upper/ work/ seen/ lock started workspace) over the same workspace.
 * Forks are named by their session and kept flat under the workspace's layer, a fork of a fork
 * too, so `cordon review --fork NAME` finds each. Newly allocated. */
char *review_fork_dir(const char *layer, const char *fork);
/* Make the workspace's layer (as review_layer_make) and the fork's in it; the fork's folder in
 * *out. An existing fork layer is kept as it is. 0, or -1 with one line in err. */
int review_fork_make(const char *workspace, const char *fork, char **out, char *err, size_t errlen);
/* Does the layer exist (a review sandbox ever ran there)? */
bool review_layer_exists(const char *layer);

/* The pending changes of layer over workspace, sorted by path (a folder before what it holds).
 * 0, or -1 with one line in err. */
int review_layer_list(const char *layer, const char *workspace, struct review_list *out, char *err,
                      size_t errlen);
void review_list_free(struct review_list *l);

/* Record the host's copy of each pending path that has no record yet (see above). */
void review_layer_record(const char *layer, const char *workspace, const struct review_list *l);
/* Mark the start of a review sandbox (started's mtime), after review_layer_record. */
void review_layer_mark_start(const char *layer);
/* Has the host's copy of rel changed since its record (or was it recorded as changed)? */
bool review_layer_conflict(const char *layer, const char *workspace, const char *rel);
/* Drop rel's pending change from the layer (its upper entry, recursively, and its record).
 * The caller holds the lock. 0 or -errno. */
int review_layer_drop(const char *layer, const char *rel);

/* Remove name in folder dfd, a folder with everything in it, never following a link. 0 or
 * -errno (ENOENT is no error). */
int review_remove_tree(int dfd, const char *name);

/* The layer's folder of the old views a session stacked its rollbacks on (Linux before 6.5): each
 * stays mounted until the session's init ends, so its upper stays on disk until then. */
#define REVIEW_OLD_DIR "old"
/* At a start of the layer: remove old/ when no sandbox holds the layer's lock (none mounts
 * what is in it then). */
void review_layer_drop_old(const char *layer);

/* The layer's lock, taken exclusively without waiting: the fd, or -1 (errno EWOULDBLOCK: a
 * sandbox holds it). */
int review_layer_lock(const char *layer);

/* openat2 beneath dirfd, never through a link: an fd or -1 with errno. */
int review_open_beneath(int dirfd, const char *rel, int flags, mode_t mode);
#endif
