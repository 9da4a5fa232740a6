/* Runs in: controller (`cordon run`, a session's controller); init's first code runs in the
 * child of the clone made here (s->init_main). */
/* sandbox_start.h — one start-up for every sandbox: sandbox_start_up() brings a sandbox up from
 * a struct of what the caller wants, as one ordered list of steps that each return on failure
 * (nsjail's RETURN_ON_FAILURE list). `cordon run` and a session fill the struct and keep only
 * what differs (a run's pty and output, a session's API socket). Uses controller_setup (the
 * profile, the cgroup, the configuration and the filter to init), root_writes (a root caller's
 * maps), the git guards and init_handover; never serves the sandbox once it is up. */
#ifndef CORDON_SANDBOX_START_H
#define CORDON_SANDBOX_START_H
#include "controller/trust_bundle.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "controller/controller_setup.h"
#include "controller/init_handover.h"
#include "sandbox/init.h"

struct guarded_trees;
struct repo_hold;
struct run_flags;
struct sandbox_config;
struct sc_program;

/* Who starts the sandbox: the steps that differ between them are named after it. */
enum sandbox_start_for {
    SANDBOX_START_RUN,     /* `cordon run`: one command, a one-shot controller */
    SANDBOX_START_SESSION, /* `cordon session start`: init serves a session's commands */
};

#define SANDBOX_START_MAX_CLOSE 4

struct sandbox_start {
    /* What the caller wants, filled before sandbox_start_up. */
    enum sandbox_start_for kind;
    const struct run_flags *flags; /* what the command line asked for */
    const char *cwd;               /* the caller's current directory */
    /* Resolve the profile through the cache of resolved profiles
     * (lh_resolve_sandbox_config_cached): `cordon run`; a session resolves without it. */
    bool profile_cache;
    /* A root caller's sandbox is to have the shifted maps (sandbox/root_writes.h): then the
     * resolution neither starts nor runs root_only's scan for a profile that takes the shift
     * (the kernel refuses root-only files itself). A run sets it from the maps written at the
     * clone; a session from what the kernel allows. */
    bool expect_root_shift;
    /* A root caller's maps are written right after the clone (a run: it can clone init anew
     * when the profile refuses the shift), else once the profile is resolved (a session's init
     * cannot be cloned anew: the shift is tried on a throwaway namespace first). */
    bool maps_at_clone;
    bool no_shift; /* maps_at_clone: ask for the unshifted maps (the last such run lost them) */
    /* Make the pids cgroup and move init into it on a thread from the clone on (a run: it
     * overlaps the resolution); else all of it once the profile is known, and init is moved at
     * once, before it has its configuration (a session: every exec shares the cgroup). */
    bool cgroup_ahead;
    void (*init_main)(const struct init_params *); /* in the clone's child; never returns */
    struct init_params ip;                         /* init's parameters but ctl_sock (made here) */
    int alive_w; /* the write end of ip.parent_alive_fd: init's child closes it */
    int child_close[SANDBOX_START_MAX_CLOSE]; /* the caller's own fds init must not keep, or -1 */
    /* Called once init has its configuration, while it builds the view: what the caller needs
     * only later (a run's output capture). NULL: nothing. */
    void (*while_init_builds)(void *ctx, const struct sandbox_config *cfg);
    void *ctx;
    struct init_handover handover; /* its In fields: the loop, the label, the log unit */
    struct sandbox_config *cfg;    /* the caller's, filled by the resolution */
    struct sc_program *prog;       /* the caller's, the compiled filter */

    /* What the start-up made, the caller's from then on. */
    pid_t init_pid; /* 0 before the clone */
    int ctl;        /* the socket to init, -1 before the clone */
    int root_maps;  /* a root caller's: the NS_MAPS_* bits written for init (root_writes.h) */
    int owner_ns;   /* maps_at_clone and shifted: root_writes_owner_userns, made while small */
    bool shifted;   /* a root caller's maps are shifted */
    /* The profile came from the cache, whose network rules compiled before from the same inputs
     * (lh_network_rules_cached): they are compiled after the filter is sent, not before. */
    bool rules_after_filter;
    struct controller_cgroup cgroup; /* the sandbox's own, with limits.pids and limits.memory */
    bool have_cgroup;
    struct guarded_trees *guard; /* the writable trees' repositories (guarded_trees.h) */
    struct repo_hold *hold;      /* init's namespaces (repo_hold.h), until guarded_trees_watch */
    int hold_err;                /* why there is no hold */
    struct cred_set *creds;      /* the declared credentials (credentials.h) for the proxy, or
                                  * NULL; the caller's (proxy_set_credentials takes it) */
    struct tls_terminator *tls;  /* TLS termination for the credentials' hosts, or NULL; the
                                  * caller's (proxy_set_tls takes it) */
    struct trust_bundle trust;   /* the CA bundle the sandbox reads (trust_bundle.h) */
    bool *ro_absent;             /* a run's: readonly_in_workspace entries absent before init had
                                 its configuration (one bool each) */
    char err[1024];
};

/* s as sandbox_start_up expects it: every field that is made empty, no fd to close. The caller
 * then fills what it wants. */
void sandbox_start_prepare(struct sandbox_start *s, enum sandbox_start_for kind);
/* Bring the sandbox up: clone init, resolve the profile, hand init its configuration and its
 * filter, take what it hands over, until it says its set-up is done. 0; -1 with one line in
 * s->err (the caller stops init: sandbox_start_abandon); -2 when init failed its set-up and
 * said why itself. A run goes on where init hung up (its exit is seen and reported later), a
 * session stops there. */
int sandbox_start_up(struct sandbox_start *s);
/* The start-up failed: init killed and reaped (when there is one), the cgroup's thread ended
 * and the cgroup removed. */
void sandbox_start_abandon(struct sandbox_start *s);
#endif
