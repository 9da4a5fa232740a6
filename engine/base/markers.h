/* markers.h — a set of literal byte strings that the refusal detectors key on (each policy layer
 * declares its own: `refusal_markers`, lua/HOOKS.md). Output lines without any of them cannot
 * show a refusal, so the capture keeps track of the lines that have one while output arrives
 * and the detector is handed just those. Matching is case-sensitive, on bytes. */
#ifndef CORDON_MARKERS_H
#define CORDON_MARKERS_H
#include <stddef.h>
#include <sys/types.h>

#include "base/util.h"

#define MARKER_MIN_LEN 2
#define MARKER_MAX_LEN 64
#define MARKER_MAX_COUNT 256

struct marker_set;

/* Compile markers (each MARKER_MIN_LEN..MARKER_MAX_LEN bytes, no newline; at most
 * MARKER_MAX_COUNT). NULL with a message in err when one is not acceptable. An empty list is a
 * valid set that matches nothing. */
struct marker_set *marker_set_new(const struct str_list *markers, char *err, size_t errlen);
void marker_set_free(struct marker_set *s);
size_t marker_set_max_len(const struct marker_set *s);
/* Where the last marker that lies wholly inside p[0, n) starts, or -1 when none does. */
ssize_t marker_last(const struct marker_set *s, const char *p, size_t n);
#endif
