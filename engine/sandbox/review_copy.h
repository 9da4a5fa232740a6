/* Runs in: the session's controller (snapshots, rollback, forks of a review session). */
/* review_copy.h — a copy of a review layer's pending state (review_layer.h): its upper/ and seen/,
 * as they are, into another folder. Only what is pending is copied (unchanged files are not in
 * upper/), so the cost follows the pending changes, not the workspace.
 * Kept: every entry's type, mode, mtime and owner (as far as the caller may chown), hard links
 * between entries, links (as links), overlayfs whiteouts (character devices 0:0) and the
 * `user.*` extended attributes (user.overlay.opaque marks a folder that hides the host's).
 * Regular files are cloned (FICLONE) where the file system shares extents, else copied
 * (copy_file_range, then read/write).
 * Uses: review_layer.h (review_open_beneath). Must never: follow a link in the source or the
 * destination, or leave a half-made copy under dst_dir without saying so. */
#ifndef CORDON_REVIEW_COPY_H
#define CORDON_REVIEW_COPY_H
#include <stddef.h>

/* Copy src_layer/upper and src_layer/seen (a layer folder, or a copy made by this function) into
 * dst_dir/upper and dst_dir/seen. dst_dir is made (0700) when missing; an existing dst_dir/upper
 * or dst_dir/seen must be an empty folder. A source without seen/ gives an empty one.
 * The number of entries copied (every name in upper/, folders included, not seen/'s records),
 * or -1 with one line in err (what was copied so far is left for the caller to remove). */
int review_layer_copy(const char *src_layer, const char *dst_dir, char *err, size_t errlen);
#endif
