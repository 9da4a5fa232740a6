/* said_once.h — a line the person needs to read once, not at every run: what this machine's
 * kernel cannot do (a copy-on-write home on Linux before 5.11, ...). The first run on a machine
 * and kernel says it; a marker file under cordon's state folder ($XDG_STATE_HOME/cordon/said/,
 * XDG_STATE_HOME defaulting to ~/.local/state, a folder no sandbox can write) keeps the later
 * runs quiet. `cordon doctor` says it every time it is asked.
 * Uses: the caller's environment, uname(2), base/util. Runs in the controller (the caller's
 * own uid, on the host). Must never: keep a line from being said when the marker cannot be
 * made (then it is said at every run), or write outside that folder. */
#ifndef CORDON_SAID_ONCE_H
#define CORDON_SAID_ONCE_H
#include <stdbool.h>

/* True when the line named `name` (a file name: [a-z0-9_-]) has not been said yet on this
 * machine with this kernel release, and marks it said; false when it has been. */
bool said_once_first(const char *name);
#endif
