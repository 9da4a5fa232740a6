/* Runs in: the command's process (Landlock); controller (loopback_guard_check). */
/* loopback_guard.h — network.loopback = false (no --allow-loopback): the command may not serve
 * or use TCP on the sandbox's own loopback. Its only peers there are the egress proxy's two
 * listeners and the relays of the host ports granted (network.host_ports, listened on by init).
 * Landlock (ABI 4, Linux 6.7) refuses every TCP bind (listen's implicit bind to an ephemeral
 * port included) and every TCP connect except to those ports, with EACCES; the seccomp filter
 * refuses the inet sockets Landlock does not cover (UDP, raw, SCTP, MPTCP: seccomp_filter.c).
 * Without Landlock's network rules the sandbox is not started at all. */
#ifndef CORDON_LOOPBACK_GUARD_H
#define CORDON_LOOPBACK_GUARD_H
#include <stdbool.h>
#include <stddef.h>
#include "sandbox/sandbox-t.h"

/* Whether cfg asks for the guard: a network namespace of our own without loopback service. */
bool loopback_guard_wanted(const struct sandbox_config *cfg);

/* In the controller, before anything runs: 0 when this kernel can enforce the guard, or -1 with
 * one line in err naming what is missing and what to do. */
int loopback_guard_check(char *err, size_t errlen);

/* In the command's process after no_new_privs and before exec (async-signal-safe): restrict
 * this process and its descendants (TCP connect to the proxy's ports and cfg's host ports, whose
 * listeners init holds, only). 0 or -errno. */
int loopback_guard_apply(const struct sandbox_config *cfg);
#endif
