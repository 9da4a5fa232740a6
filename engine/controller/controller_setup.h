/* controller_setup.h — the steps every controller (`cordon run`, a session) takes while its
 * freshly cloned init waits: resolve the profile through the policy layers, hand init the
 * configuration, build the seccomp filter and hand it over too. On failure the caller kills
 * init (which never runs anything) and reports err. */
#ifndef CORDON_CONTROLLER_SETUP_H
#define CORDON_CONTROLLER_SETUP_H
#include <stddef.h>
#include <sys/types.h>
#include "sandbox/cgroup.h"
#include "sandbox/sandbox-t.h"
#include "sandbox/seccomp_filter.h"

/* The policy layers (built-in, user, trusted project of the workspace, --policy) and the
 * profile hook: flags merged over the named profile. 0, or -1 with the reason in err. The
 * profile's network rules are not compiled yet: controller_compile_network() does that once
 * init has the configuration, so that it overlaps with the building of the sandbox. */
int controller_resolve(const struct run_flags *flags, const char *cwd, struct sandbox_config *cfg,
                       char *err, size_t errlen);
/* The sandbox's own cgroup with limits.pids and limits.memory (sandbox/cgroup.h), init_pid
 * moved into it before init has the configuration, so before anything runs in the sandbox.
 * Where no cgroup can be used: one warning line when a limit only a cgroup gives was asked
 * for, and for a caller other than root, limits.pids as RLIMIT_NPROC (added to cfg) unless the
 * profile sets rlimits.nproc. 1 with a cgroup (cgroup_remove() it after init is gone), 0
 * without, or -1 with the reason in err (a cgroup could be used but setting it up failed). */
int controller_cgroup(struct sandbox_config *cfg, pid_t init_pid, struct cgroup *cg, char *err,
                      size_t errlen);
/* The line reporting out-of-memory kills after the command ended ("killed: out of memory
 * (limit 64M)") into line, or "" when the memory limit killed nothing. */
void controller_oom_line(const struct sandbox_config *cfg, const struct cgroup *cg, char *line,
                         size_t len);
/* The resolved configuration to init in a memfd. 0; -EPIPE/-ECONNRESET when init already failed
 * its set-up (it said why); another -errno otherwise. */
int controller_send_config(int ctl, const struct sandbox_config *cfg);
/* Compile the resolved profile's network rules (an invalid entry fails here) for the proxy;
 * when that fails, tell init to abort. 0, or -1 with the reason in err. */
int controller_compile_network(int ctl, char *err, size_t errlen);
/* Compile the filter and send it (or, when that fails, tell init to abort). 0, -EPIPE as above,
 * or -1 with the reason in err. */
int controller_send_filter(int ctl, const struct sandbox_config *cfg, struct sc_program *prog,
                           char *err, size_t errlen);
#endif
