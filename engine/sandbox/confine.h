/* confine.h — the last steps of the command's process before exec: resource limits, dropping
 * every capability (bounding, ambient, securebits so uid 0 gains none at exec), no_new_privs.
 * Called in the forked command child inside the sandbox, after setsid and the fd set-up, before
 * sc_load(). Each returns 0 or -errno; async-signal-safe (no malloc, no stdio). */
#ifndef CORDON_CONFINE_H
#define CORDON_CONFINE_H
#include "sandbox/sandbox-t.h"

int confine_rlimits(const struct sandbox_config *cfg);
int confine_drop_capabilities(void);
int confine_no_new_privs(void);
#endif
