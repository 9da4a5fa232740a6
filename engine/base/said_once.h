/* said_once.h — runs in the controller (host side): the lines about this machine that are said
 * once, not at every run (a limit the kernel cannot apply here), kept as marker files under
 * cordon's state folder ($XDG_STATE_HOME/cordon/said/NAME, else ~/.local/state/cordon/said/NAME),
 * each holding the line, so `cordon doctor` can list them again. */
#ifndef CORDON_SAID_ONCE_H
#define CORDON_SAID_ONCE_H
#include <stdbool.h>

/* The folder of the markers (malloc'd; cdir_path(CDIR_STATE, "said")), or NULL when there is
 * no state folder (neither an absolute XDG_STATE_HOME nor HOME). */
char *said_once_dir(void);

/* Should line be said now under name ([A-Za-z0-9._-], at most 64 bytes)? true the first time
 * (the marker is made, holding line) and whenever no marker can be kept (no state folder, a
 * write that fails: better said again than never); false once the marker exists. */
bool said_once_first(const char *name, const char *line);
#endif
