/* Runs in: controller (it makes the cgroup, moves init into it; `cordon doctor` probes). */
/* cgroup.h — one control group per sandbox (a `cordon run`, a session), holding its init and so
 * every process of it, with the bounds no rlimit can give: pids.max (RLIMIT_NPROC counts the
 * real uid's processes on the whole host and is not enforced for root) and the memory limit.
 * Uses the caller's own cgroup, as the kernel lets it: cgroup v2 where the unified hierarchy
 * has the controller, else the v1 hierarchy that has it. Must never: move a process other than
 * the sandbox's init, or leave its directory behind once the sandbox is gone. */
#ifndef CORDON_CGROUP_H
#define CORDON_CGROUP_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The controllers a cgroup is asked for. */
#define CGROUP_PIDS 1u
#define CGROUP_MEMORY 2u

/* The directories of one sandbox's cgroup: one (v2, or pids and memory in one v1 hierarchy)
 * or two (v1's pids and memory hierarchies). Zero-initialised: no directory yet. */
#define CGROUP_MAX_DIRS 2
struct cgroup {
    size_t n_dirs;
    char dirs[CGROUP_MAX_DIRS][PATH_MAX];
    bool v1[CGROUP_MAX_DIRS];
    unsigned controllers[CGROUP_MAX_DIRS]; /* CGROUP_PIDS | CGROUP_MEMORY served by each */
    bool entered[CGROUP_MAX_DIRS];         /* the sandbox's init is in it */
};

/* Add to cg what the sandbox `cordon-<pid>` (pid: the controller's) needs to serve the
 * controllers asked for and not served yet, with no limit set. 1 when all of them are served;
 * 0 when one cannot be here (why in err: no cgroup file system, the controller is not offered,
 * the caller's cgroup is not writable, ...; what could be made stays); -1 when a cgroup could
 * be used but making it failed (err says why; nothing of this call is left behind). */
int cgroup_create(struct cgroup *cg, pid_t pid, unsigned controllers, char *err, size_t errlen);
/* The controllers cg serves. */
unsigned cgroup_controllers(const struct cgroup *cg);
/* Set pids.max (0: leave it unlimited) and the memory limit (0: likewise) where cg has them.
 * 0 or -errno. */
int cgroup_set_limits(const struct cgroup *cg, unsigned long long pids_max,
                      unsigned long long memory_max);
/* Move pid (the sandbox's init, before it runs anything) into each directory of cg it is not
 * in yet. Slow (the kernel waits for an RCU grace period, about 10 ms): `cordon run` does it
 * while the profile is resolved. 0 or -errno. */
int cgroup_enter(struct cgroup *cg, pid_t pid);
/* How many processes the kernel killed for the memory limit so far (0 without one). */
unsigned long long cgroup_oom_kills(const struct cgroup *cg);
/* How many forks the kernel refused for pids.max so far (pids.events "max"; 0 without one). */
unsigned long long cgroup_pids_refused(const struct cgroup *cg);
/* Kill what is left in cg (v2's cgroup.kill, v1: what its cgroup.procs lists: nothing of the
 * sandbox may outlive it) and remove its directories, waiting a bounded time for the last
 * processes to be gone. 0, or -errno (EBUSY: still in use). */
int cgroup_remove(struct cgroup *cg);
#endif
