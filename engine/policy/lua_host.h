/* lua_host.h — the Lua host: one lua_State, created, sandboxed, loaded with lua/ (embedded),
 * policies/ and profiles/, whose hooks are called under an instruction budget and a memory cap.
 * Implemented by lua_host.c (the state owner), lua_host_api.c (the `host` table),
 * lua_decide.c (the decisions) and lua_explain.c (explain and check), which share
 * lua_host_private.h. No other engine file includes lua.h except lua_conv.c (C <-> Lua values).
 * Must never: run bytecode, open io/os/debug/package, let a hook error pass as "allow", or
 * print: explain and check return their lines, and the CLI prints them. */
#ifndef CORDON_LUA_HOST_H
#define CORDON_LUA_HOST_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "sandbox/sandbox-t.h"

struct marker_set;

/* What one protected hook call ended as. Callers switch on it without default:. */
enum lh_outcome {
    LH_OK,         /* a valid result */
    LH_ERROR,      /* the hook raised, or a policy failed to load */
    LH_TIMEOUT,    /* instruction budget exhausted */
    LH_NOMEM,      /* memory cap reached */
    LH_BAD_RESULT, /* result of the wrong shape */
};

/* "ok", "error", "instruction budget exhausted", "memory cap exceeded", "bad result". */
const char *lh_outcome_name(enum lh_outcome o);

/* The layers lh_open() loads, lowest first: datadir's policies/NAME.lua, user_config_dir's
 * policy.lua, project_dir's policy.lua, extra_policy. Profiles are looked up in project_dir's
 * profiles/, then user_config_dir's, then datadir's. Whether a project is trusted is the
 * caller's business (trust.h): lh_open loads whatever it is given. */
struct trust_set;
struct lh_options {
    const char *datadir;         /* holds policies/ and profiles/ (required; layer_dirs.h) */
    const char *user_config_dir; /* ~/.config/cordon, or NULL: no user layer */
    const char *project_dir;     /* a trusted project's .cordon directory, or NULL */
    /* project_dir's files as trust checked them (policy/trust.h), or NULL: then the project
     * layer and its profiles are loaded from these bytes only, never read from project_dir
     * again (a file swapped after the check is not loaded). Borrowed for as long as the state
     * is open. */
    const struct trust_set *project_files;
    const char *extra_policy; /* --policy FILE: one more layer on top, or NULL */
};

/* Create the state and load every policy layer. 0, or -1 with "file:line: message" in err. */
int lh_open(const struct lh_options *opt, char *err, size_t errlen);
void lh_close(void);

/* Run the `profile` hook (flags merged over the named profile) and the `environment` hook
 * (caller's environ in, the command's environment out), then validate paths: the workspace
 * (flags->workspace or cwd) and writable paths must exist and are canonicalised; hidden paths
 * are made absolute with ~ expanded; every network.allow / network.deny entry must parse (one
 * invalid entry fails with "invalid network rule 'ENTRY': why"). The resolved profile stays in
 * the state for lh_network_decide() until the next call or lh_close(). Fills cfg; on failure returns the outcome and puts one
 * line naming the cause (and file:line for policy errors) in err. */
enum lh_outcome lh_resolve_sandbox(const struct run_flags *flags, const char *cwd, const char *home,
                                   char *const *environ_in, struct sandbox_config *cfg, char *err,
                                   size_t errlen);

/* lh_resolve_sandbox in two steps, so that a controller can hand the configuration to the
 * sandbox's init before the network rules are compiled (cordon.allowlist loads only then):
 * _config does everything but the network rules, lh_resolve_network() compiles them (an
 * invalid entry fails it as above) and keeps the profile for lh_network_decide(). Until it
 * succeeds, lh_network_decide() has no profile (and denies). */
enum lh_outcome lh_resolve_sandbox_config(const struct run_flags *flags, const char *cwd,
                                          const char *home, char *const *environ_in,
                                          struct sandbox_config *cfg, char *err, size_t errlen);
enum lh_outcome lh_resolve_network(char *err, size_t errlen);

/* lh_open(opt) and lh_resolve_sandbox_config() through the cache of resolved profiles
 * (profile_cache.h; `cordon run` only): when an entry's key and every answer of its transcript
 * match, the layers are not evaluated: cfg is rebuilt from the entry by the same C code (the
 * paths checked live), its print() lines shown again, and the state is opened only by
 * lh_resolve_network() (off the sandbox's path), which compiles the rules of the cached
 * profile. Otherwise the host is opened and the profile resolved as always, recording a
 * transcript; lh_resolve_network() writes the entry once the rules compiled. Outcomes and
 * messages are lh_open's and lh_resolve_sandbox_config's. */
enum lh_outcome lh_resolve_sandbox_config_cached(const struct lh_options *opt,
                                                 const struct run_flags *flags, const char *cwd,
                                                 const char *home, char *const *environ_in,
                                                 struct sandbox_config *cfg, char *err,
                                                 size_t errlen);
/* Between a hit of lh_resolve_sandbox_config_cached() and lh_resolve_network(): the rules
 * lh_resolve_network() will compile are those of an entry that was written only once they had
 * compiled, from the same inputs, so they compile again (a caller may let the sandbox go on
 * first). False after a miss, or without the cache. */
bool lh_network_rules_cached(void);

/* One new network destination, as the egress proxy sees it. */
enum net_kind {
    NET_KIND_HTTP,    /* an absolute-form HTTP request (port 80 when the URL has none) */
    NET_KIND_CONNECT, /* an HTTP CONNECT tunnel */
    NET_KIND_SOCKS,   /* a SOCKS5 CONNECT */
    NET_KIND_DNS,     /* a name the sandbox's DNS stub was asked for (port 0), or an address
                         * a name's answer holds that needs a rule of its own */
};
/* The name a net_kind has in the network hook's input and the audit log ("http", "connect",
 * "socks", "dns"), or NULL for a value outside the enum. */
const char *lh_net_kind_name(enum net_kind kind);

/* The `network` hook's answer, copied out of Lua (strings truncated to fit, always
 * NUL-terminated; empty when the policy gave none). */
struct net_decision {
    bool allow;        /* forward the connection */
    bool ask;          /* the policy wants a person asked (allow is false meanwhile) */
    char rule[256];    /* the deciding entry as the user wrote it */
    char reason[256];  /* why, for the 403 body, the SOCKS log line and the audit log */
    char suggest[320]; /* the flag that would allow it, e.g. "--network-allow host:443" */
};

/* Decide one destination with the profile resolved by the last lh_resolve_sandbox() (its
 * network.allow / network.deny, command-line rules included, are compiled once and cached in
 * the state). host is the host as the client sent it (IPv6 with or without brackets), port
 * 1..65535, command the command line that asked or NULL. Any outcome but LH_OK leaves
 * out->allow false with the cause in out->reason (fail closed). Loop thread only. */
enum lh_outcome lh_network_decide(enum net_kind kind, const char *host, unsigned port,
                                  const char *command, struct net_decision *out);

/* `cordon policy check [DIR]`: load every layer, every profile under datadir (and DIR's
 * .cordon/profiles/ when given), validate each; push one "file:line: message" per problem onto
 * problems. Returns the number of problems pushed. Opens and closes the host. */
int lh_check_all(const struct lh_options *opt, const char *dir, struct str_list *problems);
/* `cordon policy check FILE`: check one file. A file in a directory named profiles/ is a
 * profile (profiles/NAME.lua): it is resolved as profile NAME, found there first, over the
 * layers opt names. Any other file is a policy: loaded as the top layer over opt's (as --policy
 * FILE would be), then every profile is resolved through it. Problems as lh_check_all. */
int lh_check_file(const struct lh_options *opt, const char *path, struct str_list *problems);

/* ---- explain (cordon policy explain / policy test) ------------------------------------------
 * Each layer's own answer: the hook chain truncated at that layer (layers 1..i, lowest first)
 * is called with the same input, so layer i's answer is what the decision would be if no
 * layer above it existed. Layers that do not define the hook are not listed. The host
 * returns the answers; the CLI prints them (cli/policy_explain.c). */

#define LH_EXPLAIN_MAX_LAYERS 32
#define LH_EXPLAIN_MAX_REFUSALS 32

struct lh_refusal;

/* One layer's answer. */
struct lh_explain_layer {
    char where[PATH_MAX + 32]; /* "file:line" of the layer's hook */
    enum lh_outcome outcome;
    char error[1024];            /* outcome != LH_OK: the message */
    struct net_decision net;     /* network: the layer's decision (zero on error) */
    struct str_list changed;     /* profile: key paths whose value differs from the result
                                     * of the layers below (layer 1: every key it sets) */
    struct lh_refusal *refusals; /* refusal: the layer's list (none on error) */
    size_t n_refusals;
};

/* What the layers say about one input. n == 0: nothing to list, because the host could not
 * explain (error says why) or, error empty, because no layer defines the hook. */
struct lh_explanation {
    int n;
    struct lh_explain_layer *layer; /* [n], lowest first */
    int decided;             /* index of the deciding layer: network and refusal, the lowest layer
                         * from which the answer (and outcome) no longer changes; profile, the
                         * last layer that changed the profile (or failed) */
    enum lh_outcome outcome; /* network and refusal: the top layer's; profile: the first failing
                              * layer's, else LH_OK */
    char error[1024];
};
void lh_explanation_free(struct lh_explanation *ex);

/* For the profile the last lh_resolve_sandbox() resolved: each layer defining `network`.
 * Returns ex->outcome (LH_ERROR when n == 0). Allowed only when it is LH_OK and the top
 * layer's net.allow. */
enum lh_outcome lh_explain_network(enum net_kind kind, const char *host, unsigned port,
                                   struct lh_explanation *ex);
/* For profile `flags->profile` (with flags): each layer defining `profile`, with the keys it
 * changed. Returns ex->outcome (LH_ERROR when n == 0). */
enum lh_outcome lh_explain_profile(const struct run_flags *flags, struct lh_explanation *ex);
/* The same, with the profile files first: files->layer[i] is the i-th file of the profile's
 * `extends` chain from the base (its path in `where`, the keys it set or changed against the
 * files below), and each layer of ex then lists the keys it changed against the files' result
 * (layer 1 included), so every key is credited to the file or layer that set it. files->n == 0
 * (files->error says why) when the chain could not be read. */
enum lh_outcome lh_explain_profile_layers(const struct run_flags *flags,
                                          struct lh_explanation *files, struct lh_explanation *ex);
/* The value at dotted `keypath` of the profile the last lh_resolve_sandbox() resolved, as
 * compact JSON (objects with sorted keys; a Lua sequence as an array; absent = null) in out.
 * false when no profile is resolved or the value does not fit. */
bool lh_profile_value(const char *keypath, char *out, size_t outlen);
/* The hooks the policy file at path defines, comma-separated in out ("" when none). Loads
 * the file in a fresh sandboxed environment of the open state. 0, or -1 with
 * "file:line: message" in out. */
int lh_layer_hooks(const char *path, char *out, size_t outlen);
/* ---- refusal detection and escalation (lua/HOOKS.md "refusal", "escalate") ------------------ */

/* One refusal the `refusal` hook reported, copied out of Lua (strings truncated to fit at a
 * UTF-8 boundary, control characters replaced by '?', always NUL-terminated; path "" when the
 * policy gave none). kind is one of write, hidden, protected, sudo, docker, dbus, network,
 * ptrace, unix-socket, nested-namespace, grant, host-port, system, git-dir. */
struct lh_refusal {
    char kind[24];
    char path[1024];
    char line[512];
    char reason[512];
};

/* A finished foreground command, as the refusal hook sees it. Everything is borrowed for the
 * call. stdout_text/stderr_text are the captured head and tail (may hold NUL bytes; NULL = "");
 * signal 0 = the command exited (the hook sees signal = nil); cwd absolute; the lists may be
 * NULL (empty): writable roots, hidden paths, and "host:port" destinations the proxy refused. */
struct lh_command_result {
    const char *command;
    int exit_code;
    int signal;
    const char *stdout_text;
    size_t stdout_len;
    const char *stderr_text;
    size_t stderr_len;
    bool truncated;
    const char *cwd;
    const struct str_list *writable;
    const struct str_list *hidden;
    const struct str_list *network_denied;
    bool merged;     /* stdout holds both streams (a pty); stderr is empty */
    bool candidates; /* the texts hold only the kept lines with a marker (lh_refusal_markers) */
    /* Where the command's paths stand, for the refusal's wording (absent fields: unknown). */
    const char *workspace;   /* NULL: not known (a recorded case without one) */
    bool workspace_readonly; /* the profile makes the workspace read-only (`readonly`) */
    const char *profile;     /* the resolved profile's name, or NULL */
    const struct str_list *readonly_in_workspace; /* absolute: the protected paths inside it */
    bool block_unix_sockets; /* seccomp refuses socket(AF_UNIX) (the `strict` profile) */
    bool grant_ssh_agent, grant_gpg_agent; /* grants.ssh_agent, grants.gpg_agent (grants.h) */
    bool root; /* the caller is root (its apt-get is refused by the sandbox, not by its uid) */
    const struct str_list *host_listening; /* ports the host serves on its loopback, or NULL */
};

/* The markers the refusal layers key on (`refusal_markers`, lua/HOOKS.md), compiled by
 * lh_open(); NULL when a layer defining `refusal` declared none: the hook then needs the whole
 * kept text. Valid until lh_close(). */
const struct marker_set *lh_refusal_markers(void);

/* Run the `refusal` hook on one result; copy up to max refusals into out and set *n (refusals
 * past max are dropped). No layer defining the hook: LH_OK with *n = 0. Any other outcome but
 * LH_OK sets *n = 0 ("no refusal reported": a broken detector must not invent refusals nor
 * block the command's result) and puts "file:line: message" in err. Loop thread only. */
enum lh_outcome lh_detect_refusals(const struct lh_command_result *in, struct lh_refusal *out,
                                   size_t max, size_t *n, char *err, size_t errlen);

/* Explain one result (cordon policy explain --input): each layer defining `refusal`, with
 * its list (a failing layer: none, as a failed detector reports no refusal). The host override
 * applies as for lh_detect_refusals. Returns ex->outcome (LH_OK when no layer defines the
 * hook); the top layer's list is ex->layer[ex->n - 1]'s. */
enum lh_outcome lh_explain_refusals(const struct lh_command_result *in, struct lh_explanation *ex);

/* The `escalate` hook's answer. ask false = deny. offer is "rerun" or "network" when ask,
 * else "". reason is one line for the user. */
struct lh_escalation {
    bool ask;
    char offer[16];
    char reason[512];
};

/* Ask the `escalate` hook about one refusal of `command`. Any outcome but LH_OK (no layer
 * defines the hook, a raise, a bad result, budget, memory) leaves out->ask false with
 * "policy error: file:line: message" in out->reason and the message in err (fail closed). */
enum lh_outcome lh_escalate(const struct lh_refusal *r, const char *command, bool ask_sandbox_off,
                            bool plan, bool background, bool interactive, struct lh_escalation *out,
                            char *err, size_t errlen);

/* The `escalation.ask_sandbox_off` and `escalation.plan` keys of the profile the last
 * lh_resolve_sandbox() resolved (false when absent, or when no profile is resolved). */
void lh_profile_escalation(bool *ask_sandbox_off, bool *plan);

/* Recorded cases: from now until lh_clear_host_override(), host.exists(path) answers true
 * exactly for the listed paths (exists or sockets), their parent directories, and nothing
 * else; host.is_socket(path) for the listed sockets only. The lists are copied. */
void lh_set_host_override(const struct str_list *exists, const struct str_list *sockets);
void lh_clear_host_override(void);
#endif
