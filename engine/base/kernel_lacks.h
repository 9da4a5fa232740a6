/* kernel_lacks.h — the one test switch that makes a newer kernel mechanism look missing, so that
 * each fallback for older kernels is exercised on this kernel too. CORDON_TEST_KERNEL_LACKS is a
 * comma-separated list of mechanism names; code that has a fallback asks kernel_lacks_forced(NAME)
 * beside its own probe and takes the fallback when either says the mechanism is missing. A
 * fallback gives the same guarantee as the mechanism, so the switch never weakens a sandbox.
 * Names in use (one per mechanism, with the Linux version that brought it):
 *   overlay_userns      overlayfs mounted in a user namespace (5.11)
 *   overlay_fd_layers   overlayfs layers given as detached mounts (/proc/self/fd paths)
 *   mount_setattr       mount_setattr(2), recursive attribute changes (5.12)
 *   idmap               idmapped mounts (5.12)
 *   landlock            Landlock (5.13)
 *   landlock_net        Landlock's TCP rules, ABI 4 (6.7)
 *   peer_pidfd          SO_PEERPIDFD (6.5)
 * Uses only libc; reads the environment once. */
#ifndef CORDON_KERNEL_LACKS_H
#define CORDON_KERNEL_LACKS_H
#include <stdbool.h>

/* True when CORDON_TEST_KERNEL_LACKS names `name` (an exact item of its list). */
bool kernel_lacks_forced(const char *name);
#endif
