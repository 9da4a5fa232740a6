/* Runs in: controller (the clone); init (its id maps, the network namespace). */
/* userns.h — creating the sandbox's namespaces: one clone(2) with user, mount, pid, ipc and uts,
 * the child's own uid/gid maps (caller's ids mapped to themselves, so files it creates belong to
 * the caller), and the network namespace, which the child creates itself: it is the costliest
 * namespace, and made there it overlaps with the controller's own work (the seccomp filter).
 * For a caller of uid 0 the parent writes wider maps instead (ns_write_root_maps,
 * docs/root-callers.md). No setuid helper. Uses only syscalls. */
#ifndef CORDON_USERNS_H
#define CORDON_USERNS_H
#include <stdbool.h>
#include <sys/types.h>

/* fork(2)-like: returns the child's pid in the parent, 0 in the child (which is PID 1 of the
 * new pid namespace), or -errno. Must be called from the main thread (PDEATHSIG follows the
 * forking thread). */
pid_t ns_clone_sandbox(void);
/* In the child: a fresh network namespace (only loopback, still down). 0 or -errno. */
int ns_unshare_net(void);
/* In the child: deny setgroups, map uid -> uid and gid -> gid, but for the maps the parent has
 * already written (NS_MAPS_* bits in done). 0 or -errno. */
int ns_write_id_maps(uid_t uid, gid_t gid, unsigned done);

/* A caller of uid 0 (docs/root-callers.md). Shifted (the usual case): inside ids 0..NS_ROOT_RANGE
 * are the kernel's NS_ROOT_SHIFT + id, root included, so that on the host's tree every file,
 * root's too, is unmapped: shown as nobody, reached through its "other" bits only, and no
 * capability of the sandbox's user namespace applies to it (the kernel grants one over an inode
 * only when its owner and group are mapped). What the caller owns is reached through the
 * controller's idmapped detached trees (root_writes.h), whose idmap is the sandbox's own namespace:
 * there on-disk id k is inside id k. Not shifted (the fallback, root_writes.h says when): inside
 * 0 is 0 and only 1..NS_ROOT_RANGE are shifted. The shifted range is one no host file uses (the
 * upper half of the id space, which systemd's conventions leave unassigned). */
#define NS_ROOT_SHIFT 0x80000000u
#define NS_ROOT_RANGE 65535u
#define NS_MAPS_UID 1u
#define NS_MAPS_GID 2u
#define NS_MAPS_SHIFT 4u /* inside 0 is the kernel's NS_ROOT_SHIFT, not 0 */
/* Does this process hold CAP_SETUID and CAP_SETGID (effective), which wider maps need? */
bool ns_may_write_wide_maps(void);
/* In the parent, right after ns_clone_sandbox, for a caller of uid 0: the child's setgroups
 * denied and its uid and gid maps written, shifted when shift is asked and both maps can be
 * written. Returns the NS_MAPS_* bits (NS_MAPS_SHIFT with the shift; a map the parent may not
 * write, without CAP_SETUID or CAP_SETGID, is left to the child: ns_write_id_maps), or -errno
 * when the child's /proc files cannot be reached (-EPERM: half a shift, refused). */
int ns_write_root_maps(pid_t child, bool shift);
/* One line explaining why namespaces could not be created (which sysctl to change; where
 * AppArmor restricts user namespaces, first how to load cordon's profile). */
const char *ns_explain_clone_error(int err);
#endif
