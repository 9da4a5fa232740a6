/* userns.h — creating the sandbox's namespaces: one clone(2) with user, mount, pid, ipc and uts,
 * the child's own uid/gid maps (caller's ids mapped to themselves, so files it creates belong to
 * the caller), and the network namespace, which the child creates itself: it is the costliest
 * namespace, and made there it overlaps with the controller's own work (the seccomp filter).
 * No setuid helper. Uses only syscalls. */
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
/* In the child: deny setgroups, map uid -> uid and gid -> gid. 0 or -errno. */
int ns_write_id_maps(uid_t uid, gid_t gid);
/* One line explaining why namespaces could not be created (which sysctl to change). */
const char *ns_explain_clone_error(int err);
#endif
