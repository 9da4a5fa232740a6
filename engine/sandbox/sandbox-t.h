/* Runs in: controller; init (types only, no code). */
/* sandbox-t.h — types only: what the CLI asked for (struct run_flags) and what the policy
 * resolved (struct sandbox_config). Shared by cli.c, lua_conv.c, the sandbox units and run.c.
 * A profile key's field here (and its flag's) is named by the key's row in profile_keys.c,
 * which the conversion, the flags and the wire walk. No functions here. */
#ifndef CORDON_SANDBOX_T_H
#define CORDON_SANDBOX_T_H
#include <stdbool.h>
#include <stddef.h>
#include "base/util.h"

/* A tri-state flag: not given on the command line, or given as false/true. FLAG_UNSET is 0 so
 * that a zero-initialised struct run_flags means "no flag given". */
enum flag_state { FLAG_UNSET = 0, FLAG_FALSE = 1, FLAG_TRUE = 2 };

/* Everything `cordon run` was told on its command line. Every field is a profile key of the
 * same meaning (every flag has a profile key); the profile hook merges these over
 * the named profile. Strings are borrowed from argv. */
struct run_flags {
    const char *profile;                  /* --profile NAME; NULL: the default ("coding") */
    const char *workspace;                /* --workspace DIR; NULL: the current directory */
    struct str_list writable;             /* --allow-write PATH (repeatable) -> writable */
    struct str_list hidden;               /* --hide PATH (repeatable) -> hidden */
    enum flag_state unrestricted_network; /* --unrestricted-network -> network.unrestricted */
    enum flag_state allow_loopback;       /* --allow-loopback -> network.loopback */
    enum flag_state allow_docker;         /* --allow-docker -> allow_docker */
    enum flag_state allow_home_workspace; /* --allow-home-workspace -> allow_home_workspace */
    enum flag_state json;                 /* --json -> json */
    struct str_list network_allow;        /* --network-allow RULE (repeatable) -> network.allow */
    struct str_list network_deny;         /* --network-deny RULE (repeatable) -> network.deny */
    struct str_list host_ports;      /* --allow-host-port PORT (repeatable) -> network.host_ports */
    struct str_list publish;         /* --publish [HOSTADDR:]HOSTPORT:PORT (repeatable); no profile
                                     * key: a port published to the host is the session's, not the
                                     * profile's */
    enum flag_state ask_sandbox_off; /* --ask-sandbox-off -> escalation.ask_sandbox_off */
    enum flag_state plan;            /* --plan -> escalation.plan */
    const char
        *permission_timeout; /* --permission-timeout DURATION -> escalation.permission_timeout */
    const char *home;        /* --home overlay|readonly|tmpfs -> home */
    char **command;          /* argv after "--", NULL-terminated, at least one word */
    const char *policy_file; /* --policy FILE: one more policy layer on top, this run only */
    enum flag_state session_exec;    /* --session-exec=false -> session.exec_per_command = true */
    bool detach;                     /* session start --detach: outlive the starting process */
    const char *owner;               /* session start --owner PID: whose exit ends the session */
    enum flag_state allow_ssh_agent; /* --allow-ssh-agent -> grants.ssh_agent */
    enum flag_state allow_gpg_agent; /* --allow-gpg-agent -> grants.gpg_agent */
    const char *idle_timeout;        /* --idle-timeout DURATION -> session.idle_timeout */
    const char *max_lifetime;        /* --max-lifetime DURATION -> session.max_lifetime */
    const char *expiry_warning;      /* --expiry-warning DURATION -> session.expiry_warning */
    enum flag_state review;          /* --review -> workspace_review */
    const char *upstream_ca;         /* --upstream-ca FILE -> network.upstream_ca */
    struct str_list credentials;     /* --credential NAME=HOST[,HOST...] (repeatable): the
                                      * caller's variable NAME, sent only to those hosts */
    const char *review_fork;         /* session start --review-fork FORK: review mode in the
                                      * workspace's fork layer FORK (cordon fork); no profile key:
                                      * a fork is the session's, not the profile's */
};

/* One resource limit from the profile's `rlimits` table. */
struct sandbox_rlimit {
    int resource;                  /* RLIMIT_* */
    unsigned long long soft, hard; /* RLIM_INFINITY allowed */
};

#define SANDBOX_MAX_RLIMITS 16
#define SANDBOX_MAX_HOST_PORTS 32

/* Profile key `home`: what commands see at the caller's home directory. */
enum sandbox_home {
    SANDBOX_HOME_READONLY = 0, /* the host's home, read-only (hidden paths missing) */
    SANDBOX_HOME_OVERLAY,      /* copy-on-write over it; writes kept in the workspace's layer */
    SANDBOX_HOME_TMPFS,        /* copy-on-write over it; writes discarded when the sandbox ends */
};

/* Profile key root_only: what a caller of uid 0 must not read (sandbox/root_only.h). */
struct sandbox_root_only {
    bool hide;               /* root_only.hide: scan and hide (only when the uid is 0) */
    struct str_list scan;    /* root_only.scan: absolute directories looked through */
    unsigned depth;          /* root_only.depth: levels below each scan root */
    struct str_list visible; /* root_only.visible: absolute names never hidden by it */
};

/* network.transparent: off; on where the kernel can (else one line, and the proxy variables
 * only); required (no sandbox without it). */
enum net_transparent { NET_TRANSPARENT_OFF, NET_TRANSPARENT_ON, NET_TRANSPARENT_REQUIRED };

/* TLS termination (proxy/tls_terminate.h): the bundle of the host's CAs and the sandbox's own,
 * made by the controller (controller/trust_bundle.c), bound in as a grant's file at
 * SANDBOX_CA_BUNDLE; init then covers the system's bundle with it (fsview.c). */
#define SANDBOX_CA_BUNDLE "/run/cordon/ca-bundle.crt"
#define SANDBOX_SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
/* Java's own trust store: a PKCS#12 store of the host's Java CAs and the sandbox's
 * (controller/trust_java.c), bound at SANDBOX_JAVA_CACERTS; init covers each of the host's
 * stores that exists with it (Debian's ca-certificates-java, RHEL's update-ca-trust). */
#define SANDBOX_JAVA_CACERTS "/run/cordon/java-cacerts"
#define SANDBOX_JAVA_STORE_DEBIAN "/etc/ssl/certs/java/cacerts"
#define SANDBOX_JAVA_STORE_RHEL "/etc/pki/ca-trust/extracted/java/cacerts"

/* The resolved profile as the sandbox units consume it. Every path is absolute; writable
 * paths and the workspace are canonical (realpath) and exist; hidden paths may not exist.
 * Owned by whoever filled it; freed with sandbox_config_free(). */
struct sandbox_config {
    char *profile;             /* name of the resolved profile */
    char *workspace;           /* writable unless workspace_readonly */
    bool workspace_readonly;   /* profile key workspace_readonly (the `readonly` profile) */
    bool allow_home_workspace; /* profile key allow_home_workspace: the workspace may be the
                                     * caller's home or one of its ancestors */
    char *cwd;                 /* directory the command starts in */
    struct str_list writable;  /* extra writable paths (--allow-write, profile `writable`) */
    struct str_list hidden;    /* paths that must look missing (ENOENT) */
    /* hidden_except: "DIR\tPATTERN[\tPATTERN...]", DIR showing only the names that match
     * (hide.h, hide_apply_except); DIR absolute, existing (a missing one is in hidden instead). */
    struct str_list hidden_except;
    struct sandbox_root_only root_only; /* for a uid-0 caller, added to hidden by the controller */
    struct str_list readonly_in_workspace; /* relative to workspace: ".git/hooks", ".cordon", ... */
    struct str_list run_binds;             /* absolute host paths re-bound into the fresh /run */
    /* cordon's own directories (config, state, session sockets; canonical, existing) that lie
     * inside a writable area: bound read-only, every directory between them and that area made
     * a mount point so that none can be renamed away and replaced. The controller fills it. */
    struct str_list protected_paths;
    bool net_unrestricted; /* no network namespace at all */
    bool net_loopback;     /* commands may serve TCP on the sandbox loopback */
    /* network.upstream_ca: a PEM file of authorities the proxy also trusts when it verifies a
     * credential host's server (proxy/tls_terminate.h); NULL: the host's trust store only.
     * The controller's only, never on the wire. */
    char *upstream_ca;
    enum net_transparent
        net_transparent; /* network.transparent: TCP to any address via the policy */
    unsigned short host_ports[SANDBOX_MAX_HOST_PORTS]; /* network.host_ports: the host's
                                     * 127.0.0.1:PORT reachable inside at 127.0.0.1:PORT */
    size_t n_host_ports;
    bool block_unix_sockets;      /* seccomp refuses socket(AF_UNIX, ...) */
    struct str_list seccomp_deny; /* extra syscall names refused with EPERM */
    struct sandbox_rlimit rlimits[SANDBOX_MAX_RLIMITS];
    size_t n_rlimits;
    /* profile key `limits`: the whole sandbox's bounds. pids_max and memory_max need a cgroup
     * (controller/controller_setup.c; 0: none); the tmpfs sizes are mount options (bytes). */
    unsigned long long pids_max;
    unsigned long long memory_max;
    unsigned long long tmp_size, shm_size;
    struct str_list env;               /* the command's whole environment, "NAME=VALUE" */
    bool json;                         /* print one JSON result object after the command */
    double grace_seconds;              /* TERM -> KILL grace period (session.grace) */
    size_t capture_head, capture_tail; /* bytes of each output stream kept for refusal detection */
    double permission_timeout;         /* seconds a question may wait for its answer (then: deny) */
    bool network_ask;                  /* network.ask: unlisted destinations may be asked about */
    bool exec_per_command;             /* session.exec_per_command: each exec in a fresh sandbox */
    unsigned max_background;           /* session.max_background: live background jobs at most */
    size_t log_cap;                    /* session.log_cap: bytes of a background job's log kept */
    double idle_timeout;               /* session.idle_timeout: seconds idle, then end; 0: none */
    double max_lifetime;               /* session.max_lifetime: seconds at most; 0: none */
    double expiry_warning;             /* session.expiry_warning: seconds of notice before either */
    enum sandbox_home home_mode;       /* profile key home */
    char *home;                        /* the caller's home, canonical; NULL: no home view */
    char *home_layer;                  /* overlay: the workspace's layer folder (upper/, work/) */
    /* profile key workspace_review: the workspace is copy-on-write, its writes pending in
     * review_layer (upper/, work/, lock; sandbox/review_layer.h) until applied or discarded */
    bool review;
    char *review_layer;
    /* profile key home_tool_dirs: names of the home's top folders, not dot-entries, that tools
     * write on their own ("go"): they take writes into the layer like the dot-entries do */
    struct str_list home_tool_dirs;
    /* profile key grants (sandbox/grants.h): the caller's agent sockets bound in by name */
    bool grant_ssh_agent;          /* grants.ssh_agent: $SSH_AUTH_SOCK */
    bool grant_gpg_agent;          /* grants.gpg_agent: gpg-agent's socket, public keyring */
    struct str_list grant_sockets; /* grants.sockets as written: "NAME\tFROM" */
    struct str_list credentials;   /* credentials: "NAME\tFROM\tHOST,HOST" (controller only) */
    struct str_list grant_binds;   /* grants_resolve: "sTARGET\tSOURCE" (s socket, f file) */
    /* profile key root_writes: a caller of uid 0 writes in files of other owners inside the
     * writable set (sandbox/root_writes.h). Read by the controller only, never on the wire. */
    bool root_writes;
    /* Set by the controller once it sent init idmapped writable trees, and by init once it got
     * them (never on the wire): the command keeps CONFINE_ROOT_WRITE_CAPS, and its seccomp
     * filter refuses set-id mode bits. */
    bool root_write_caps;
    /* A root caller's shifted sandbox (sandbox/root_writes.h): the paths init attaches from the
     * controller's idmapped detached trees before the view is built (the home, root_only.visible). */
    struct str_list shift_binds;
};

/* limits.* when the resolved profile has none (the values of `coding`). */
#define SANDBOX_PIDS_DEFAULT 4096ull
#define SANDBOX_TMP_SIZE_DEFAULT (2ull << 30)
#define SANDBOX_SHM_SIZE_DEFAULT (512ull << 20)

#define SANDBOX_LOG_CAP_DEFAULT (64u * 1024 * 1024)
#define SANDBOX_MAX_BACKGROUND_DEFAULT 8

#define SANDBOX_CAPTURE_DEFAULT (256 * 1024)
#define SANDBOX_CAPTURE_MAX (64 * 1024 * 1024)
#endif
