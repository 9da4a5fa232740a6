/* Runs in: the command's process (and, for a session, init's spawner thread: spawner.h). */
/* confine.h — the last steps of the command's process before exec: resource limits, dropping
 * every capability (bounding, ambient, securebits so uid 0 gains none at exec) but, for a root
 * caller whose writable trees are idmapped, three file-ownership ones (root writes,
 * docs/root-callers.md), no_new_privs.
 * Called in the forked command child inside the sandbox, after setsid and the fd set-up, before
 * sc_load(). Each returns 0 or -errno; async-signal-safe (no malloc, no stdio). */
#ifndef CORDON_CONFINE_H
#define CORDON_CONFINE_H
#include <linux/capability.h>
#include "sandbox/sandbox-t.h"

int confine_rlimits(const struct sandbox_config *cfg);
/* Every capability dropped: confine_keep_capabilities(0). */
int confine_drop_capabilities(void);
/* What a root caller's command may keep (root writes): permission and owner checks and chown,
 * only on files whose owner and group are mapped in the sandbox's user namespace. Not
 * CAP_FSETID: without it a write or a chown clears set-id bits as for anyone (the seccomp
 * filter refuses setting them, seccomp_filter.c). Never SYS_ADMIN, SETUID/SETGID, MKNOD, NET_*,
 * SYS_*, DAC_READ_SEARCH (file handles reach past every mount). */
#define CONFINE_ROOT_WRITE_CAPS \
    ((1ull << CAP_CHOWN) | (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_FOWNER))
/* Drop every capability but those of keep that CONFINE_ROOT_WRITE_CAPS allows, which stay
 * permitted, effective, inheritable and ambient (so they survive exec despite NOROOT), with
 * every securebit still set and locked: no other capability can come back. A non-zero keep
 * needs CAP_SETPCAP (-EPERM without). */
int confine_keep_capabilities(unsigned long long keep);
int confine_no_new_privs(void);
#endif
