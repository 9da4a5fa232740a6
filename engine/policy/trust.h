/* trust.h — pinning a project's policy files by content hash (the mechanism of `cordon trust`,
 * whose command is cli/trust_cmd.c), and the check every command that would load a project
 * layer makes first.
 * Owns: the scan of DIR/.cordon (regular files only, recursively; symlinks and special files
 * are refused), the trust record ($XDG_CONFIG_HOME/cordon/trusted/<sha256 of the canonical
 * project path>.json, mode 0600, written atomically), and the comparison that says why a
 * project is not trusted. Uses sha256, json_read (the record). Prints nothing.
 * Must never: follow a symlink inside .cordon, load a project layer itself, or treat an
 * unreadable record as a trusted one. */
#ifndef CORDON_TRUST_H
#define CORDON_TRUST_H
#include <stddef.h>
#include "base/sha256.h"

struct trust_entry {
    char *rel; /* path relative to .cordon, e.g. "profiles/web.lua" */
    char hash[SHA256_HEX_LEN + 1];
    /* The bytes that were hashed (a NUL follows them), for a scan; NULL in a loaded record.
     * A trusted layer is loaded from these, never from the path again: a file swapped after
     * the check cannot be the one that runs. */
    char *data;
    size_t len;
};

/* Sorted by rel. */
struct trust_set {
    struct trust_entry *items;
    size_t len, cap;
};

void trust_set_free(struct trust_set *s);

/* Every regular file under policy_dir (a project's .cordon), recursively, with its SHA-256
 * and its content: each file is opened once (O_NOFOLLOW, below a directory fd), read whole,
 * and the bytes read are the ones hashed. 0, or -1 with one line in err (a symlink or special
 * file, an unreadable entry, too many files, a file larger than 4 MiB). */
int trust_scan(const char *policy_dir, struct trust_set *out, char *err, size_t errlen);

/* "<config_dir>/trusted/<sha256 of root>.json"; root must be canonical. New string. */
char *trust_record_path(const char *config_dir, const char *root);
/* Read a record. 0; -ENOENT when there is none; other -errno or -EINVAL (with err) when it
 * cannot be read or parsed. */
int trust_record_load(const char *path, struct trust_set *out, char *err, size_t errlen);
/* Write a record atomically (temp file in the same directory, fsync, rename), mode 0600,
 * creating the directories (0700). 0 or -errno with err. */
int trust_record_save(const char *path, const char *root, const struct trust_set *s, char *err,
                      size_t errlen);
/* Differences between the recorded and the current set, as "policy.lua changed,
 * profiles/x.lua added, tests/a.json removed" in why; "" when equal. */
void trust_compare(const struct trust_set *recorded, const struct trust_set *current, char *why,
                   size_t whylen);

enum trust_state {
    TRUST_NO_PROJECT, /* root has no .cordon */
    TRUST_TRUSTED,    /* the record matches the files exactly */
    TRUST_UNTRUSTED,  /* why says why: not trusted yet, a change, a refused file */
};

/* Is root's .cordon trusted by the user whose config directory is config_dir (may be NULL:
 * nothing is trusted)? root need not be canonical; canon_root (PATH_MAX) gets the canonical
 * path. Cheap: hashes the files, nothing cached. */
enum trust_state trust_check(const char *config_dir, const char *root, char *canon_root, char *why,
                             size_t whylen);
/* The same; when the answer is TRUST_TRUSTED, files (if not NULL) receives the scanned set,
 * contents included, which the caller frees with trust_set_free. Otherwise files is empty. */
enum trust_state trust_check_files(const char *config_dir, const char *root, char *canon_root,
                                   char *why, size_t whylen, struct trust_set *files);
/* The entry of a sorted set whose rel is rel, or NULL. */
const struct trust_entry *trust_set_find(const struct trust_set *s, const char *rel);
#endif
