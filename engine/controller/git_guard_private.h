/* git_guard_private.h — what the files of the git guard (git_guard.h) share and nothing else
 * includes: the snapshot's items, the guard's state, the walk's tree of folders, and each part's
 * functions (prefix gg_). The parts, one concern each:
 *   git_guard.c           the guard's life: making it, the check's rounds, the timer, freeing;
 *   git_guard_access.c    opening names beneath the workspace without following a link;
 *   git_guard_digest.c    a config's guarded entries as a sorted digest, and comparing two;
 *   git_guard_snapshot.c  what in the repositories makes git run a program, recorded;
 *   git_guard_walk.c      the walk that finds the repositories, incremental between walks;
 *   git_guard_cache.c     the walk's tree kept between runs in a file: its format and reader;
 *   git_guard_undo.c      comparing a snapshot with the last one and undoing each difference;
 *   git_guard_view.c      what the host's git would say of each repository, for one line.
 * Runs in: the controller (the host side), never inside the sandbox. */
#ifndef CORDON_GIT_GUARD_PRIVATE_H
#define CORDON_GIT_GUARD_PRIVATE_H
#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "base/util.h"
#include "controller/git_guard.h"

struct git_config;
struct git_config_entry;

/* A hook, a config or a pointer file bigger than this is compared by size, inode and time and
 * cannot be restored (a new or changed one is neutralised instead). */
#define MAX_KEPT (1024 * 1024)
#define HOOKS_DEPTH 3 /* husky's `.husky/_/h` is two levels below the hooks folder */
/* Contents kept per snapshot, in all: past it files are compared by size, inode and time (a new
 * one is still neutralised, a changed one renamed away), so that a command filling a hooks
 * folder costs the check no more memory, and hides nothing. */
#define KEPT_BUDGET (64 * 1024 * 1024)
#define MODULES_DEPTH 4 /* a submodule's name may hold slashes: modules/a/b/c */
#define REFUSED ".cordon-refused"

enum gg_kind { GG_POINTER, GG_CONFIG, GG_HOOK, GG_HOOKS_LINK, GG_PROGRAM };

struct gg_item {
    char *rel;  /* workspace-relative, no leading slash */
    char *repo; /* the repository it belongs to, for the lines ("." for the workspace's own) */
    enum gg_kind kind;
    mode_t type; /* S_IFREG, S_IFLNK, S_IFDIR, ... */
    mode_t perm;
    char *bytes; /* a regular file's content (NULL when too big), a link's target */
    size_t len;
    bool too_big;
    off_t size;
    ino_t ino;
    struct timespec mtime;
    struct timespec ctime; /* when it was last changed: git_guard_add_repo's age test */
    char *digest; /* GG_CONFIG: the guarded entries "key=value\n", sorted (entry_guarded); NULL:
                   * unparseable */
};

struct gg_snap {
    struct gg_item *items;
    size_t n, cap;
    struct str_list gitdirs;  /* git dirs looked into (workspace-relative) */
    struct str_list hookdirs; /* hooks folders looked into */
    struct str_list ro;       /* what the sandbox binds read-only */
    struct str_list dotgits;  /* the folders holding a `.git` the walk found */
    size_t dirs, kept;
    bool bound_hit, hooks_hit;
};

/* What a config's code-running entries point at that could lie in the workspace. */
struct cfg_refs {
    char *hooks_path;         /* the last core.hooksPath */
    struct str_list includes; /* include.path, includeIf.*.path values */
    struct str_list programs; /* the program of an entry that runs one, when it is a path */
};

struct gg_dir;

/* The folder a snapshot last looked in, kept open for the next name in it (a repository's
 * dozen names all lie in its git dir, each recorded and then held read-only: one descriptor
 * instead of an openat2 and a close for each look). Only while gg_snapshot() runs: an undo, and
 * the next check, open afresh. */
struct parent_cache {
    bool on;
    char *rel; /* workspace-relative ("" for the workspace) */
    int fd;    /* O_PATH, opened beneath the workspace as open_parent opens it; -1: none */
};

struct git_guard {
    char *ws;
    int wsfd;
    struct parent_cache *pc;
    struct gg_snap snap;
    struct gg_dir *tree; /* what the last walk saw of the folders, for the next one */
    double last_ms;
    size_t last_dirs, last_listed;
    bool bound_said;
    char *cache;     /* the file keeping tree between runs (NULL: none), git_guard_new_cached */
    bool tree_dirty; /* a walk listed a folder since tree was read from or written to cache */
    double full_at, full_ms;    /* the last walk: when (monotonic ms), and what it cost */
    struct str_list made;       /* what this check renamed things to: not new a round later */
    char *home;                 /* the host's HOME, for `~/` in config values */
    struct cfg_refs host;       /* what the host's own git configs point at */
    struct str_list host_in_ws; /* the host's git configs (and their includes) in the workspace */
    int diffs;                  /* differences this check found */
    struct str_list found;      /* worktree folders the watcher found (repo_watch.h) */
    struct str_list found_bare; /* git dirs it found that are no worktree's `.git` */
    struct str_list made_repos; /* of found, those made during the run: still being made */
    long long since_ns;         /* the sandbox's start (git_guard_since), 0: unknown */
    bool last;                  /* this check is the last of a command: nothing waits */
    size_t n_deferred;          /* pointers left for a later check (undo_differences) */
    git_guard_hold_fn *hold;    /* holds a path read-only inside the sandbox, or NULL */
    void *hold_ctx;
    struct str_list stand_ins; /* empty pointer files put in a plant's place, held inside */
    char *own_common;          /* the linked worktree's common dir, guarded beside (or NULL) */
};

/* What the last walk saw of a folder it listed: its identity and change stamp, whether it held
 * a `.git` (and of what type), and its sub-folders in listing order. A later walk that finds
 * the same (dev, ino, ctime) knows the entries are the same without listing them: adding,
 * removing or renaming a name changes the folder's ctime, which a command cannot put back
 * (utimes(2) sets the mtime it is given, and the ctime to now). */
struct gg_dir {
    char *name; /* in its parent; "." for the workspace */
    dev_t dev;
    ino_t ino;
    struct timespec ctime;
    bool listed;          /* the fields below are known (false: never listed, or cut by a bound) */
    bool racy;            /* its ctime was too close to the walk: list it again next time */
    bool trusted;         /* on a file system whose ctime this trusts */
    unsigned char dotgit; /* 0, or the DT_ type of its `.git` */
    struct gg_dir **subs; /* its sub-folders (not node_modules), each listed or not */
    size_t n;
};

/* Sub-folders a tree holds at most (a command may make a million in one folder): past it a
 * folder's sub-folders are looked into as it is listed, and it is listed again next time. */
#define NAMES_MAX (4 * GIT_GUARD_MAX_DIRS)

/* git_guard_access.c: every name is opened beneath the workspace's descriptor, no link followed. */
int gg_open_beneath(int dirfd, const char *rel, int flags);
char *gg_join(const char *a, const char *b);
DIR *gg_opendir_beneath(const struct git_guard *g, const char *rel);
void gg_parent_cache_set(struct parent_cache *pc, bool on);
int gg_open_parent(const struct git_guard *g, const char *rel, const char **base);
void gg_close_parent(const struct git_guard *g, int fd);
bool gg_lstat_rel(const struct git_guard *g, const char *rel, struct stat *st);
char *gg_resolve_in_ws(const struct git_guard *g, const char *base, const char *path);
char *gg_parent_rel(const char *rel);

/* git_guard_digest.c */
void gg_cfg_refs_free(struct cfg_refs *r);
bool gg_entry_guarded(const struct git_config *c, const struct git_config_entry *x);
char *gg_config_digest(const char *text, size_t len, struct cfg_refs *refs);
void gg_digest_minus(const char *a, const char *b, char *out, size_t outlen);
bool gg_digest_same(const char *o, const char *n);

/* git_guard_snapshot.c */
void gg_item_free(struct gg_item *x);
void gg_snap_free(struct gg_snap *s);
struct gg_item *gg_record(struct git_guard *g, struct gg_snap *s, const char *rel,
                          enum gg_kind kind, const char *repo, struct cfg_refs *refs);
char *gg_pointer_target(const struct git_guard *g, const struct gg_item *x, const char *base,
                        const char *prefix);
char *gg_pointer_path(const char *text, size_t len, const char *prefix);
void gg_add_dotgit(struct git_guard *g, struct gg_snap *s, const char *dir, unsigned char type);
void gg_sort_unique(struct gg_snap *s);
void gg_host_configs(struct git_guard *g);
void gg_found_repos_one(struct git_guard *g, struct gg_snap *s, const char *rel, bool bare);
int gg_snapshot(struct git_guard *g, struct gg_snap *s, bool quick);
const struct gg_item *gg_find_item(const struct gg_snap *s, const char *rel);

/* git_guard_walk.c: the walk of the workspace into s from g->tree (replaced by what this walk
 * saw): 0, or -errno when the workspace cannot be looked into. */
int gg_walk(struct git_guard *g, struct gg_snap *s);
void gg_dir_free(struct gg_dir *d);

/* git_guard_cache.c */
void gg_cache_save(struct git_guard *g);
struct gg_dir *gg_cache_load(const struct git_guard *g);

/* git_guard_undo.c */
int gg_undo_differences(struct git_guard *g, struct gg_snap *now, struct str_list *lines);
void gg_stand_ins_remove(struct git_guard *g);

/* git_guard_view.c */
void gg_say_views(const struct git_guard *g, const struct gg_snap *now, struct str_list *lines);
#endif
