/* kernel_lacks.h — the one test switch that makes a newer kernel mechanism look missing, so that
 * each fallback for older kernels is exercised on this kernel too. CORDON_TEST_KERNEL_LACKS is a
 * comma-separated list of mechanism names; code that has a fallback asks kernel_lacks_forced(NAME)
 * beside its own probe and takes the fallback when either says the mechanism is missing. A
 * fallback gives the same guarantee as the mechanism, so the switch never weakens a sandbox.
 * Names in use (one per mechanism, with the Linux version that brought it):
 *   overlay_userns      overlayfs mounted in a user namespace (5.11)
 *   mount_setattr       mount_setattr(2), recursive attribute changes (5.12)
 *   idmap               idmapped mounts (5.12)
 *   landlock            Landlock (5.13)
 *   landlock_net        Landlock's TCP rules, ABI 4 (6.7)
 *   peer_pidfd          SO_PEERPIDFD (6.5)
 * (overlayfs' layers are staged in a mount namespace of the builder's own on every kernel: Linux
 * before 6.15 takes no detached mount as a layer, and the staging costs nothing measurable.)
 * Uses only libc. */
#ifndef CORDON_KERNEL_LACKS_H
#define CORDON_KERNEL_LACKS_H
#include <stdbool.h>

/* True when CORDON_TEST_KERNEL_LACKS names `name` (an exact item of its list). */
bool kernel_lacks_forced(const char *name);
/* True when the running kernel's release is older than major.minor (for a mechanism no cheap
 * probe can tell, such as overlayfs in a user namespace before one exists). An unreadable
 * release counts as new: the mechanism is tried, and its own refusal says why. */
bool kernel_older_than(unsigned major, unsigned minor);
#endif
