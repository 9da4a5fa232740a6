/* profile_cache.h — the cache of resolved profiles that `cordon run` keeps under
 * $XDG_CACHE_HOME/cordon/profiles (else ~/.cache/cordon/profiles), one file per key.
 * Owns: the key (SHA-256 over a format version, the binary's GNU build-id, the uid, cwd, HOME,
 * every run_flags field the resolution sees, the whole environment in order, and the layer
 * options), the transcript (each question the Lua side had the host answer while the profile
 * was resolved, with its answer, recorded in order and replayed live: any different answer is a
 * miss), the entry's format (key, transcript, the resolved profile table as pure data, the
 * environment hook's result, the refusal markers) with a parser that checks every length and
 * count, and reading and writing entries (read_private_file, write_private_file, 64 at most).
 * Uses: base/sha256, base/util, trust.h (the project layer's trusted files), lua.h for the
 * table's (de)serialisation only.
 * Must never: serve an entry whose replay differs in any answer, cache a failed resolution or
 * one that asked for something the transcript cannot replay (math.random, a directory scan
 * for a message), keep an entry it could not parse whole, or print anything (a cache failure
 * is silent: the run resolves the profile as if there were no cache). */
#ifndef CORDON_PROFILE_CACHE_H
#define CORDON_PROFILE_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "base/sha256.h"
#include "base/util.h"
#include "policy/lua_host.h"

#define PC_KEY_LEN SHA256_DIGEST_LEN

/* The kinds of question a transcript holds. */
enum pc_kind {
    PC_PROJECT = 1,  /* the project layer lh_options names: its trusted files (rel + hash) */
    PC_FILE,         /* a layer or profile read (lh_push_file): errno, or its bytes (a large file:
                      * their SHA-256) */
    PC_LIST,         /* the *.lua names of the built-in policies/ directory, sorted, or errno */
    PC_ACCESS,       /* access(F_OK) of the user's policy.lua */
    PC_STAT,         /* host.exists / is_dir / is_socket: the path after ~, its file type or 0 */
    PC_ENTRIES,      /* host.entries: the sorted names, or nil */
    PC_GETENV,       /* host.getenv: name and value (or nil) */
    PC_HOME,         /* host.home */
    PC_WORKSPACE,    /* host.workspace (checked against the live resolved workspace) */
    PC_GETENV_ALLOW, /* the user's getenv-allow file: errno, or its bytes as PC_FILE */
    PC_PRINT,        /* a line print() logged: shown again on a hit */
    PC_KIND_END
};

/* A growable byte buffer. */
struct pc_buf {
    unsigned char *data;
    size_t len, cap;
};
void pc_buf_put(struct pc_buf *b, const void *p, size_t n); /* append */
void pc_buf_free(struct pc_buf *b);

/* ---- the probes: the host API and the replay ask the file system through these ---------- */

/* host.entries answers nil for a directory of more names than this: it is then hidden whole. */
#define PC_HOST_ENTRIES_MAX 256

/* The file type bits of path (stat, links followed), or 0 when it cannot be stat'ed. */
unsigned pc_stat_type(const char *path);
/* The names in directory path but . and .., sorted; -1 (out empty) when it is no directory
 * that can be read or holds more than max names. */
int pc_dir_entries(const char *path, size_t max, struct str_list *out);
/* The names of dir's *.lua files not starting with '.', sorted. 0 or -errno. */
int pc_lua_names(const char *dir, struct str_list *out);

/* ---- recording ---------------------------------------------------------------------------- */

/* Start a transcript (forgetting any), whose first record is opt's project layer. */
void pc_record_begin(const struct lh_options *opt);
/* Stop recording; the transcript is kept for pc_entry_build(). */
void pc_record_end(void);
bool pc_recording(void);
/* The resolution asked for something no replay can check: nothing of it is cached. */
void pc_uncacheable(const char *why);
/* One question and its answer (no-ops unless recording). err < 0: the read failed. */
void pc_note_file(enum pc_kind kind, const char *path, int err, const void *data, size_t len);
void pc_note_names(enum pc_kind kind, const char *path, int err, const struct str_list *names);
void pc_note_access(const char *path, bool exists);
void pc_note_stat(const char *path, unsigned type);
void pc_note_value(enum pc_kind kind, const char *question, const char *value);
void pc_note_print(const char *line);

/* ---- the key and the entry ---------------------------------------------------------------- */

/* The key of one resolution's inputs. 0, or -ENOTSUP when the binary has no build-id (then
 * nothing is cached). */
int pc_key(const struct run_flags *flags, const char *cwd, const char *home,
           char *const *environ_in, const struct lh_options *opt, uint8_t key[PC_KEY_LEN]);
/* The entry file of key (new string), or NULL when there is no absolute cache directory. */
char *pc_entry_path(const uint8_t key[PC_KEY_LEN]);

/* An entry as parsed: pointers into its buffer. */
struct pc_entry {
    char *buf;
    size_t len;
    const unsigned char *records, *table;
    size_t records_len, table_len;
    uint32_t n_records;
    struct str_list env;     /* the environment hook's result */
    bool markers_known;      /* every refusal layer declared its markers */
    struct str_list markers; /* the refusal markers */
    struct str_list prints;  /* lines to show again, in order */
    char *workspace_seen;    /* a host.workspace answer to check, or NULL */
};
void pc_entry_free(struct pc_entry *e);

/* Serialise the table at idx as pure data (string or integer keys; strings, numbers, booleans,
 * tables; no metatable, no table seen twice; depth and size bounded) into out (appended).
 * 0, or -1 when it is not such data. Raises only on memory. */
int pc_table_dump(lua_State *L, int idx, struct pc_buf *out);
/* Push the table a dump holds: [-0, +1]. 0, or -1 (nothing pushed) on a malformed dump.
 * Raises only on memory. */
int pc_table_push(lua_State *L, const unsigned char *p, size_t len);

/* Build the entry of the transcript recorded last, or false when that is uncacheable or too
 * large. table: pc_table_dump's bytes. */
bool pc_entry_build(const uint8_t key[PC_KEY_LEN], const struct pc_buf *table,
                    const struct str_list *env, bool markers_known, const struct str_list *markers,
                    struct pc_buf *out);
/* Read and parse the entry at path for key. 0, or -1 (nothing kept) when it is missing, not
 * private, malformed, or of another key. */
int pc_entry_load(const char *path, const uint8_t key[PC_KEY_LEN], struct pc_entry *e);
/* Parse an entry's bytes (taken over: freed by pc_entry_free). 0 or -1. For the fuzzer too. */
int pc_entry_parse(char *buf, size_t len, const uint8_t key[PC_KEY_LEN], struct pc_entry *e);
/* Ask every question of e's transcript again, live, with opt's project layer and home; 0 when
 * every answer is the recorded one (e->prints and e->workspace_seen filled), else -1. */
int pc_replay(struct pc_entry *e, const struct lh_options *opt, const char *home);
/* Write an entry (its directories made 0700), then remove the oldest beyond 64. Silent. */
void pc_entry_store(const char *path, const struct pc_buf *entry);
#endif
