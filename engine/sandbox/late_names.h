/* Runs in: controller (sends); init (reads). */
/* late_names.h — the root-only names of a shifted root caller's home (root_only.h), sent to init
 * after its configuration: the controller's walk of the home goes on while init builds the
 * view, and the home's builder (home_view.h) takes the names when it lays the home's whiteouts,
 * which is the first thing that needs them. They cross on a socket of their own, one end passed
 * to init right after the configuration (INIT_MSG_LATE_NAMES), so that no reader of the control
 * socket waits for the walk. Records: each name an absolute path, NUL-terminated; then one empty
 * record (a lone NUL) that says the list is whole. Anything else (an end of file before the
 * mark, a name outside the home, one not in canonical form, too much) is refused: the sandbox
 * does not start.
 * Uses: util.c for the lists and path containment.
 * Must never: take a name the controller did not send whole, or one that would lay a whiteout
 * outside the home. */
#ifndef CORDON_LATE_NAMES_H
#define CORDON_LATE_NAMES_H
#include <stddef.h>

#include "base/util.h"

/* Bound on what init reads: the walk's own bound of entries (root_only.h) at a long path each. */
#define LATE_NAMES_MAX_BYTES (16u << 20)

/* Write names, then the end mark, to fd (blocking). 0 or -errno (EPIPE: init is gone). */
int late_names_send(int fd, const struct str_list *names);
/* Read the whole list from fd into out: each name strictly inside home, absolute and canonical
 * (no empty, "." or ".." component, no trailing '/'). 0, or -1 with one line in err. */
int late_names_recv(int fd, const char *home, struct str_list *out, char *err, size_t errlen);
#endif
