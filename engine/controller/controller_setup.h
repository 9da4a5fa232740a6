/* controller_setup.h — the steps every controller (`cordon run`, a session) takes while its
 * freshly cloned init waits: resolve the profile through the policy layers, hand init the
 * configuration, build the seccomp filter and hand it over too. On failure the caller kills
 * init (which never runs anything) and reports err. */
#ifndef CORDON_CONTROLLER_SETUP_H
#define CORDON_CONTROLLER_SETUP_H
#include <stddef.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/types.h>
#include "sandbox/cgroup.h"
#include "sandbox/init_wire.h"
#include "sandbox/sandbox-t.h"
#include "sandbox/seccomp_filter.h"

struct sandbox_start;

/* The policy layers (built-in, user, trusted project of the workspace, --policy) and the
 * profile hook: want->flags merged over the named profile, through the cache of resolved
 * profiles when want->profile_cache, without root_only's scan for a profile that takes the shift
 * when want->expect_root_shift. 0, or -1 with the reason in err. The profile's network rules are
 * not compiled yet: controller_compile_network() does that once init has the configuration, so
 * that it overlaps with the building of the sandbox. */
int controller_resolve(const struct sandbox_start *want, struct sandbox_config *cfg, char *err,
                       size_t errlen);
/* The shift fell through after controller_resolve skipped the scan: root_only's scan now, its
 * result added to cfg->hidden. 0, or -1 with one line in err. */
int controller_root_only_scan(struct sandbox_config *cfg, char *err, size_t errlen);
/* Is limits.pids to be RLIMIT_NPROC rather than a cgroup? Where the kernel counts it per user
 * namespace (Linux 5.14 on) it bounds each sandbox apart, as a cgroup's pids.max does: all of a
 * sandbox's processes have one uid, which they cannot change. It binds every sandbox but one
 * whose uid 0 is the host's (host_root_inside: a root caller's unshifted sandbox), which the
 * kernel exempts. And it costs nothing, where moving init into a cgroup waits for an RCU grace
 * period (0 to 27 ms on this machine, half the runs over 7 ms). */
bool controller_pids_by_rlimit(bool host_root_inside);
/* The sandbox's cgroup (sandbox/cgroup.h) as it is being made. Moving a process into a cgroup
 * takes the kernel an RCU grace period, so `cordon run` does it in a thread from the clone of
 * init on, when it will need a pids cgroup (nearly every profile has limits.pids), while the
 * profile is resolved and init builds the view; it must be over before init gets its seccomp
 * filter, the last thing init waits for before it runs the command. Zero-initialised: no
 * thread. */
struct controller_cgroup {
    struct cgroup cg;
    pid_t init_pid; /* the init the thread moves */
    bool started, joined;
    int made;            /* the thread's cgroup_create() */
    int entered;         /* the thread's cgroup_enter(): 0 or -errno */
    struct cgroup moved; /* the directories the thread moves init into */
    char why[PATH_MAX + 128];
    sem_t created; /* posted once made and moved are set: cg is main's from then on */
    pthread_t thread;
};
/* Start making a pids cgroup for init_pid and moving init into it, in a thread. */
void controller_cgroup_begin(struct controller_cgroup *cc, pid_t init_pid);
/* Wait for the thread to end, taking nothing it did as done for the init to come: before init
 * is cloned anew (a clone while another thread may hold a lock, of malloc's say, would leave
 * the child stuck on it). */
void controller_cgroup_join(struct controller_cgroup *cc);
/* The set-up failed (init is killed and reaped): finish what controller_cgroup_begin started
 * and remove the cgroup. */
void controller_cgroup_abandon(struct controller_cgroup *cc);
/* Once the profile is resolved, before init has the configuration: the sandbox's own cgroup
 * with limits.pids and limits.memory, every directory made and limited (what the thread of
 * controller_cgroup_begin made is used; without one, all of it is done here). No limits.memory
 * and controller_pids_by_rlimit(host_root_inside): no cgroup, limits.pids is RLIMIT_NPROC
 * (added to cfg) unless the profile sets rlimits.nproc. Where no cgroup can be used: one
 * warning line when a limit only a cgroup gives was asked for, and but for the host's root
 * inside, limits.pids as RLIMIT_NPROC all the same. 1 with a cgroup, 0 without (none is left),
 * or -1 with the reason in err (a cgroup could be used but setting it up failed; none is
 * left). */
int controller_cgroup(struct sandbox_config *cfg, struct controller_cgroup *cc,
                      bool host_root_inside, char *err, size_t errlen);
/* Before init gets its filter (so before anything runs in the sandbox): init_pid is in every
 * directory of the cgroup. 0, or -1 with the reason in err. With a cgroup, cgroup_remove(&cc->cg)
 * once init is gone, on every path. */
int controller_cgroup_enter(struct controller_cgroup *cc, pid_t init_pid, char *err, size_t errlen);
/* The line reporting out-of-memory kills after the command ended ("the command was killed: out
 * of memory (limits.memory = 64M)") into line, or "" when the memory limit killed nothing. */
void controller_oom_line(const struct sandbox_config *cfg, const struct cgroup *cg, char *line,
                         size_t len);
/* The line reporting forks the cgroup's pids limit refused ("fork refused: the sandbox reached
 * limits.pids = 50 (refused 12 times)") into line, or "" when it refused none. Only a cgroup
 * counts them: under RLIMIT_NPROC alone the kernel keeps no count, and nothing is said. */
void controller_pids_line(const struct sandbox_config *cfg, const struct cgroup *cg, char *line,
                          size_t len);
/* A session's counters as last told (controller_limit_news). */
struct limit_seen {
    unsigned long long oom_kills, pids_refused;
};
/* The limit hits since *seen (which is brought up to date), for the command of a session that
 * just ended: oom and pids get a line each ("" when nothing new), naming the session's sandbox,
 * since a hit during the command may have been another job's. */
void controller_limit_news(const struct sandbox_config *cfg, const struct cgroup *cg,
                           struct limit_seen *seen, char *oom, size_t oom_len, char *pids,
                           size_t pids_len);
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

struct port_relay;
/* Publish what --publish [HOSTADDR:]HOSTPORT:PORT asked for (flags->publish) on ports. 0, or -1
 * with one line in err for the first that cannot be (bad syntax, a taken host port, no network
 * namespace: ports NULL). */
int controller_publish(struct port_relay *ports, const struct run_flags *flags, char *err,
                       size_t errlen);
#endif
