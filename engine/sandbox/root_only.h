/* Runs in: controller. */
/* root_only.h — profile key root_only: for a caller of uid 0, the files and directories that
 * only root may read (owned by uid 0, no read permission for others; a directory without r or x
 * for others), found under the profile's scan roots, become hidden paths. A uid-0 command has no
 * capabilities, but the owner bit alone lets it read them: /etc/shadow-, ssh host keys, debconf's
 * passwords. Only for a sandbox that is not shifted (root_writes.h: shifted, the kernel refuses
 * them itself); the caller's home is never walked (its files are the caller's own, its
 * credentials hidden by the list any home's are). Runs on the host side, before the
 * configuration goes to init. Every entry is judged
 * anew at every run (a file made root-only since the last run is hidden at the next); only the
 * listings of folders unchanged since the last run may come from a file (root_only_cache). */
#ifndef CORDON_ROOT_ONLY_H
#define CORDON_ROOT_ONLY_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include "base/util.h"
#include "sandbox/sandbox-t.h"

/* Entries looked at (stat) in one scan at most; past it, what is not yet judged is hidden. */
#define ROOT_ONLY_MAX_ENTRIES 20000

/* Does st (an lstat) describe something only root may read? Symlinks never. */
bool root_only_judge(const struct stat *st);

/* Scan ro->scan (absolute directories; a missing one or a symlink is skipped) to ro->depth
 * levels and append to hidden (without repeats) every root-only entry, a directory whole (not
 * descended into). Not hidden: names in ro->visible; keep paths (the workspace, writable paths,
 * the home) and everything inside them (not even looked at: the caller's own); the ancestors of
 * all of these, which are descended into instead. A directory that cannot be listed is hidden whole (unless
 * it is one of the ways down). max_entries: the bound (ROOT_ONLY_MAX_ENTRIES); when it is hit,
 * one line says so and every entry not yet judged is hidden (fail closed). Returns the number of
 * paths added, or -errno with one line in err for a scan root that cannot be read. */
struct root_only_cache;
int root_only_scan(const struct sandbox_root_only *ro, const struct str_list *keep,
                   size_t max_entries, struct root_only_cache *cache, struct str_list *hidden,
                   char *err, size_t errlen);

/* The listings kept between runs (cache, may be NULL above): per folder the walk listed, its
 * (st_dev, st_ino, st_ctim) and the names in it. A folder met with the same three is not listed
 * again (a change of its entries moves its ctime, and nothing moves a ctime back); its entries
 * are still stat'ed and judged, since a chmod changes only the file's own ctime. Kept only for
 * folders on a file system whose ctime is trusted and whose ctime is not within 100 ms (2 s for
 * whole-second stamps) of the walk. The file (path, in a folder no sandbox can see or write) is
 * read only when it is a regular file of this euid, mode 0600 or less, not a symlink, bounded,
 * and every field fits; else it is ignored: a full walk. NULL when path is NULL. */
struct root_only_cache *root_only_cache_open(const char *path);
/* How many folders' listings came from the file so far (not NULL). */
size_t root_only_cache_reused(struct root_only_cache *c);
/* Free c (may be NULL), first writing (save) what this run's walks saw when a folder was listed:
 * by rename from a temporary file beside it, 0600. */
void root_only_cache_close(struct root_only_cache *c, bool save);

/* The scan done ahead, on a thread, while the profile is still being resolved: started with
 * inputs guessed before the profile is known (root_only_guess, the workspace the flags name),
 * it is used only when the real inputs would have taken the walk down the very same way. The
 * walk depends on its inputs only through three answers about each path it meets (named
 * visible? inside a keep path? on the way to one or to a visible name?), so every such answer is
 * recorded and asked again with the real inputs; one different answer, or different scan roots,
 * depth or bound, and the scan is done again in place.
 * What the files are is read once, by the walk that is used; only folders' listings outlive the
 * run (root_only_cache). */
struct root_only_ahead;

/* The coding profile's root_only scan roots, depth and visible names (profiles/coding.lua), the
 * guess for a scan ahead. A profile that changes them only loses the head start. */
void root_only_guess(struct sandbox_root_only *ro);
/* Start the scan ahead with copies of the guessed inputs; it takes over cache (may be NULL),
 * used by root_only_finish's walk too and saved there. NULL when no thread can be had (then
 * root_only_finish scans in place, without the cache). */
struct root_only_ahead *root_only_ahead(const struct sandbox_root_only *ro,
                                        const struct str_list *keep, size_t max_entries,
                                        struct root_only_cache *cache);
/* Finish the scan ahead (ahead may be NULL), taking here what the thread has not taken yet
 * rather than waiting, and, with the real inputs, give what root_only_scan would: its result
 * when every answer it rested on is the same and the bound was not reached, else a scan done
 * now. *used (may be NULL) says which. Frees ahead. */
int root_only_finish(struct root_only_ahead *ahead, const struct sandbox_root_only *ro,
                     const struct str_list *keep, size_t max_entries, struct str_list *hidden,
                     char *err, size_t errlen, bool *used);
/* No scan is wanted after all (root_only off, or the set-up failed): stop the thread at its next
 * entry, wait for it and free ahead (may be NULL). Before any fork or clone: no thread may run. */
void root_only_cancel(struct root_only_ahead *ahead);
#endif
