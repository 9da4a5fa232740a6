/* root_only.h — profile key root_only: for a caller of uid 0, the files and directories that
 * only root may read (owned by uid 0, no read permission for others; a directory without r or x
 * for others), found under the profile's scan roots, become hidden paths. A uid-0 command has no
 * capabilities, but the owner bit alone lets it read them: /etc/shadow-, ssh host keys, debconf's
 * passwords. Runs on the host side, before the configuration goes to init; nothing is cached: a
 * file changed since the last run is judged anew. */
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
 * descended into). Not hidden: names in ro->visible; keep paths (the workspace, writable paths)
 * and everything inside them (not even looked at: the caller's granted area); the home and the
 * ancestors of all of these, which are descended into instead. Inside home (may be NULL)
 * directories are descended into, not hidden whole: the home's own folders hold toolchains
 * (~/.local/bin) and are often 0700. max_entries: the bound (ROOT_ONLY_MAX_ENTRIES); when it is
 * hit, one line says so and every entry not yet judged is hidden (fail closed). Returns the
 * number of paths added, or -errno with one line in err for a scan root that cannot be read. */
int root_only_scan(const struct sandbox_root_only *ro, const struct str_list *keep,
                   const char *home, size_t max_entries, struct str_list *hidden, char *err,
                   size_t errlen);
#endif
