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

/* The directories of one sandbox's cgroup: one (v2, or pids and memory in one v1 hierarchy)
 * or two (v1's pids and memory hierarchies). */
#define CGROUP_MAX_DIRS 2
struct cgroup {
    size_t n_dirs;
    char dirs[CGROUP_MAX_DIRS][PATH_MAX];
    bool v1[CGROUP_MAX_DIRS];
    int memory_dir;                 /* index of the directory with the memory limit, or -1 */
};

/* Make the cgroup for the sandbox `cordon-<pid>` (pid: the controller's) with pids_max (0: no
 * limit) and memory_max bytes (0: no limit). 1 when made; 0 when no cgroup with those
 * controllers can be used here (why in err: no cgroup file system, the controller is not
 * offered, the caller's cgroup is not writable, ...); -1 when one could be used but making it
 * failed (err says why; nothing is left behind). */
int cgroup_create(struct cgroup *cg, pid_t pid, unsigned long long pids_max,
                  unsigned long long memory_max, char *err, size_t errlen);
/* Move pid (the sandbox's init, before it runs anything) into cg. 0 or -errno. */
int cgroup_enter(const struct cgroup *cg, pid_t pid);
/* How many processes the kernel killed for the memory limit so far (0 without one). */
unsigned long long cgroup_oom_kills(const struct cgroup *cg);
/* Kill what is left in cg (v2's cgroup.kill: nothing of the sandbox may outlive it) and remove
 * its directories, waiting a bounded time for the last processes to be gone. 0, or -errno
 * (EBUSY: still in use). */
int cgroup_remove(struct cgroup *cg);
#endif
