/* fsview.h — the sandbox's filesystem view, exactly as the design says: the host's / read-only
 * (nosuid), the workspace and --allow-write paths writable, a private /tmp, a fresh /run, a
 * minimal /dev, the namespace's own /proc, hidden paths missing, and .git/hooks, .git/config,
 * .cordon (readonly_in_workspace) read-only inside the writable workspace.
 * Runs in init (PID 1, all capabilities of the new user namespace), in the new mount namespace,
 * before any command. Never changes anything outside that namespace. */
#ifndef CORDON_FSVIEW_H
#define CORDON_FSVIEW_H
#include <stddef.h>
#include "sandbox-t.h"

/* Where cordon's own binary is inside a sandbox with a network namespace, for `cordon nc` as
 * ssh's ProxyCommand: the binary's host path may be hidden or under the host's /tmp. */
#define FSVIEW_CORDON_EXE "/run/cordon/cordon"

/* 0, or -1 with one line in err. */
int fsview_build(const struct sandbox_config *cfg, char *err, size_t errlen);
#endif
