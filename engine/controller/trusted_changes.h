/* trusted_changes.h — in direct mode (no --review), which host-trusted paths of the workspace a
 * command added, changed or removed: what `cordon run --json` lists as "host_trusted_changes"
 * and, without --json, names on stderr. host_trusted.h says which paths count and why (one source
 * of truth); this file only finds them, twice: a snapshot before the command runs, and a second
 * walk after it ended, compared.
 * Cheap (a command's start-up pays for it), so it looks only where the names are: the workspace's
 * top folder; the folders host_trusted.c's patterns name at the top (derived from its table: its
 * leading folder names, and up to two folders below a trailing `*`); bin/, scripts/ and tools/,
 * their own entries. Nothing deeper or elsewhere (a new executable in src/, a nested repository's
 * hooks): that is `cordon review`'s job (docs/cli-json.md says so). At most TRUSTED_WALK_ENTRIES
 * entries are read; the look stays on the workspace's file system.
 * Changed: the (inode, size, ctime, mode, link target) differ from the snapshot: no clock in
 * that, since a kernel with multigrain timestamps stamps a file just stat()ed finer than, and
 * ahead of, the coarse clock (a file the last command wrote looked changed again). Without
 * them, a rewrite to the same size within the clock tick of a write just before the snapshot
 * keeps its ctime and is missed. New: not in the snapshot and stamped (ctime, birth time) not
 * before the coarse real-time clock read before it, the clock files are stamped with.
 * Cost: the first look reads those folders but stats only folders in scope, links and host-trusted
 * names; the second stats the snapshot's folders and reads only those whose entries changed (an entry
 * added, removed or renamed changes a folder's ctime). So a new executable is one created during
 * the command (its birth time, or its ctime where the file system keeps no birth time); a file
 * that was there and only made executable (chmod +x) is not told.
 * Uses: host_trusted.h. Must never: follow a link, or read a file's contents. */
#ifndef CORDON_TRUSTED_CHANGES_H
#define CORDON_TRUSTED_CHANGES_H
#include <stdbool.h>
#include <stddef.h>

#define TRUSTED_WALK_DEPTH 8
#define TRUSTED_WALK_ENTRIES 50000

struct trusted_snapshot;

struct trusted_change {
    char *path;         /* relative to the workspace */
    const char *change; /* "added", "changed" or "removed" */
    const char *why;    /* host_trusted_why's words */
};

struct trusted_changes {
    struct trusted_change *items; /* sorted by path */
    size_t len;
    bool truncated; /* a walk hit a bound: there may be more */
};

/* Before the command runs: the clock, then the host-trusted paths now in workspace. NULL when the
 * workspace cannot be opened. */
struct trusted_snapshot *trusted_snapshot_take(const char *workspace);
/* After the command ended: what changed since snap (which this frees). */
void trusted_changes_find(struct trusted_snapshot *snap, struct trusted_changes *out);
void trusted_changes_free(struct trusted_changes *c);
/* A snapshot never compared (NULL: nothing). */
void trusted_snapshot_free(struct trusted_snapshot *snap);
/* Without --json: one stderr line per change, at most a few, then how many more. */
void trusted_changes_tell(const struct trusted_changes *c);
#endif
