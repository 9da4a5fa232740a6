/* profile_keys.c — the table of profile keys (profile_keys.h). A key is added here, once: the
 * Lua schema is generated from this table at build time, and the conversion, the flags and
 * the config wire read it. The rows with a flag come in the order of the options' help. */
#include "sandbox/profile_keys.h"

#include <string.h>

#include "base/util.h"

#define CFG(f) offsetof(struct sandbox_config, f)
#define FLG(f) offsetof(struct run_flags, f)

/* One row, one key, its fields in the same order in every row: kept as written. */
/* clang-format off */
/* A key without a flag; KEY_INIT: one that init gets too. */
#define KEY(n, k, f) {.name = n, .kind = k, .field = f}
#define KEY_INIT(n, k, f) {.name = n, .kind = k, .field = f, .to_init = true}

const struct profile_key profile_keys[] = {
    KEY("description", PK_STRING, PK_NO_FIELD),
    KEY("extends", PK_NAME, PK_NO_FIELD),
    KEY("name", PK_NAME, CFG(profile)),
    /* read into lc_profile_extra: the controller resolves it into cfg->workspace */
    {.name = "workspace", .kind = PK_STRING, .field = PK_NO_FIELD,
     .flag = "workspace", .flag_arg = "DIR", .flag_field = FLG(workspace),
     .flag_help = "writable workspace (default: the current directory)"},
    {.name = "workspace_review", .kind = PK_BOOLEAN, .field = CFG(review), .to_init = true,
     .flag = "review", .flag_field = FLG(review),
     .flag_help = "review mode: the workspace is copy-on-write, the host's copy\n"
                  "does not change; writes stay pending until `cordon apply`\n"
                  "or `cordon discard` (see cordon review)"},
    {.name = "allow_home_workspace", .kind = PK_BOOLEAN, .field = CFG(allow_home_workspace),
     .flag = "allow-home-workspace", .flag_field = FLG(allow_home_workspace),
     .flag_help = "let the workspace be your home directory or an ancestor of\n"
                  "it (refused otherwise: every dotfile would be writable)"},
    {.name = "writable", .kind = PK_LIST, .field = CFG(writable), .to_init = true,
     .flag = "allow-write", .flag_arg = "PATH", .flag_field = FLG(writable),
     .flag_help = "also make PATH writable (repeatable)"},
    {.name = "hidden", .kind = PK_LIST, .field = CFG(hidden), .to_init = true,
     .flag = "hide", .flag_arg = "PATH", .flag_field = FLG(hidden),
     .flag_help = "make PATH look missing (repeatable)"},
    {.name = "network.unrestricted", .kind = PK_BOOLEAN, .field = CFG(net_unrestricted),
     .to_init = true,
     .flag = "unrestricted-network", .flag_field = FLG(unrestricted_network),
     .flag_help = "keep the host network (filesystem rules still apply)"},
    {.name = "network.loopback", .kind = PK_BOOLEAN, .field = CFG(net_loopback), .to_init = true,
     .flag = "allow-loopback", .flag_field = FLG(allow_loopback),
     .flag_help = "commands may serve and use TCP on the sandbox loopback"},
    /* read into lc_profile_extra: the controller hides or binds the socket */
    {.name = "allow_docker", .kind = PK_BOOLEAN, .field = PK_NO_FIELD,
     .flag = "allow-docker", .flag_field = FLG(allow_docker),
     .flag_help = "bind the Docker socket into the sandbox"},
    {.name = "json", .kind = PK_BOOLEAN, .field = CFG(json),
     .flag = "json", .flag_field = FLG(json),
     .flag_help = "print one JSON result object after the command's output"},
    /* the network hook reads the rules from the profile table itself */
    {.name = "network.allow", .kind = PK_LIST, .field = PK_NO_FIELD,
     .flag = "network-allow", .flag_arg = "RULE", .flag_field = FLG(network_allow),
     .flag_help = "let commands reach RULE through the proxy (repeatable)"},
    {.name = "network.deny", .kind = PK_LIST, .field = PK_NO_FIELD,
     .flag = "network-deny", .flag_arg = "RULE", .flag_field = FLG(network_deny),
     .flag_help = "never let commands reach RULE (repeatable; wins over allows)"},
    /* into cfg->host_ports[] and n_host_ports */
    {.name = "network.host_ports", .kind = PK_PORTLIST, .field = CFG(host_ports), .to_init = true,
     .flag = "allow-host-port", .flag_arg = "PORT", .flag_field = FLG(host_ports),
     .flag_help = "the host's own 127.0.0.1:PORT (a database, an API) is\n"
                  "reachable inside at 127.0.0.1:PORT and localhost:PORT\n"
                  "(repeatable; not 18080 or 18081, the proxy's)"},
    /* the controller's TLS termination for credential hosts (proxy/tls_terminate.h) */
    {.name = "network.upstream_ca", .kind = PK_STRING, .field = CFG(upstream_ca),
     .flag = "upstream-ca", .flag_arg = "FILE", .flag_field = FLG(upstream_ca),
     .flag_help = "PEM certificates of authorities the proxy also trusts when\n"
                  "it verifies the server of a --credential host over HTTPS\n"
                  "(a team's own CA; the host's trust store always counts)"},
    /* the escalation reads these from the profile table itself */
    {.name = "escalation.ask_sandbox_off", .kind = PK_BOOLEAN, .field = PK_NO_FIELD,
     .flag = "ask-sandbox-off", .flag_field = FLG(ask_sandbox_off),
     .flag_help = "when the sandbox refused the command, ask (on the terminal)\n"
                  "whether to run it once more outside the sandbox"},
    {.name = "escalation.plan", .kind = PK_BOOLEAN, .field = PK_NO_FIELD,
     .flag = "plan", .flag_field = FLG(plan),
     .flag_help = "plan mode: never run anything outside the sandbox"},
    {.name = "escalation.permission_timeout", .kind = PK_DURATION, .field = CFG(permission_timeout),
     .ctype = PK_C_DOUBLE, .dflt = 300,
     .flag = "permission-timeout", .flag_arg = "D", .flag_field = FLG(permission_timeout),
     .flag_help = "how long a question waits for its answer (30s, 5m; then: deny)"},
    {.name = "home", .kind = PK_HOME, .field = CFG(home_mode), .to_init = true,
     .flag = "home", .flag_arg = "MODE", .flag_field = FLG(home),
     .flag_help = "the home directory: overlay (writes kept in the workspace's\n"
                  "own layer, see cordon home), tmpfs (writes discarded at the\n"
                  "end), readonly"},
    {.name = "grants.ssh_agent", .kind = PK_BOOLEAN, .field = CFG(grant_ssh_agent),
     .flag = "allow-ssh-agent", .flag_field = FLG(allow_ssh_agent),
     .flag_help = "your ssh-agent ($SSH_AUTH_SOCK) is reachable inside, at a\n"
                  "fixed path SSH_AUTH_SOCK names (the keys stay in it)"},
    {.name = "grants.gpg_agent", .kind = PK_BOOLEAN, .field = CFG(grant_gpg_agent),
     .flag = "allow-gpg-agent", .flag_field = FLG(allow_gpg_agent),
     .flag_help = "your gpg-agent signs inside (commits, tags): its socket and\n"
                  "your public keyring, never the private keys"},
    /* init shares its view with each exec's fresh sandbox */
    {.name = "session.exec_per_command", .kind = PK_BOOLEAN, .field = CFG(exec_per_command),
     .to_init = true,
     .flag = "session-exec", .flag_field = FLG(session_exec), .flag_negates = true,
     .flag_scope = PK_FLAG_SESSION_HELP,
     .flag_help = "run each exec in a fresh sandbox of its own"},
    /* the session's own end (session/session_expiry.c); 0: none */
    {.name = "session.idle_timeout", .kind = PK_DURATION, .field = CFG(idle_timeout),
     .ctype = PK_C_DOUBLE, .dflt = 0,
     .flag = "idle-timeout", .flag_arg = "D", .flag_field = FLG(idle_timeout),
     .flag_scope = PK_FLAG_SESSION_HELP,
     .flag_help = "end the session once no exec, no job and no API client\n"
                  "was there for D (30s, 5m, 1h; 0: never)"},
    {.name = "session.max_lifetime", .kind = PK_DURATION, .field = CFG(max_lifetime),
     .ctype = PK_C_DOUBLE, .dflt = 0,
     .flag = "max-lifetime", .flag_arg = "D", .flag_field = FLG(max_lifetime),
     .flag_scope = PK_FLAG_SESSION_HELP,
     .flag_help = "end the session D after its start, whatever runs (0: never)"},
    {.name = "session.expiry_warning", .kind = PK_DURATION, .field = CFG(expiry_warning),
     .ctype = PK_C_DOUBLE, .dflt = 60,
     .flag = "expiry-warning", .flag_arg = "D", .flag_field = FLG(expiry_warning),
     .flag_scope = PK_FLAG_SESSION_HELP,
     .flag_help = "announce either end D before it comes (default 60s)"},

    KEY_INIT("workspace_readonly", PK_BOOLEAN, CFG(workspace_readonly)),
    KEY_INIT("home_tool_dirs", PK_LIST, CFG(home_tool_dirs)), /* names checked after */
    KEY_INIT("hidden_except", PK_EXCEPTMAP, CFG(hidden_except)), /* "DIR\tPATTERN..." */
    KEY_INIT("readonly_in_workspace", PK_LIST, CFG(readonly_in_workspace)),
    KEY("network.ask", PK_BOOLEAN, CFG(network_ask)),
    KEY("network.wildcard_special", PK_BOOLEAN, PK_NO_FIELD), /* the network hook's */
    KEY_INIT("network.transparent", PK_TRANSPARENT, CFG(net_transparent)),
    KEY_INIT("run_binds", PK_ABSLIST, CFG(run_binds)),
    KEY("seccomp.block_unix_sockets", PK_BOOLEAN, CFG(block_unix_sockets)),
    KEY("seccomp.deny", PK_LIST, CFG(seccomp_deny)),
    /* rlimits.*: each one more entry of cfg->rlimits[], RLIMIT_* by its name */
    KEY_INIT("rlimits.core", PK_RLIMIT, CFG(rlimits)),
    KEY_INIT("rlimits.nofile", PK_RLIMIT, CFG(rlimits)),
    KEY_INIT("rlimits.fsize", PK_RLIMIT, CFG(rlimits)),
    KEY_INIT("rlimits.as", PK_RLIMIT, CFG(rlimits)),
    KEY_INIT("rlimits.nproc", PK_RLIMIT, CFG(rlimits)),
    KEY_INIT("rlimits.cpu", PK_RLIMIT, CFG(rlimits)),
    KEY_INIT("rlimits.stack", PK_RLIMIT, CFG(rlimits)),
    KEY_INIT("rlimits.memlock", PK_RLIMIT, CFG(rlimits)),
    /* env.*: the environment hook reads them from the profile table (hide_paths_in: the host) */
    KEY("env.set", PK_STRMAP, PK_NO_FIELD),
    KEY("env.strip", PK_LIST, PK_NO_FIELD),
    KEY("env.strip_url_passwords", PK_BOOLEAN, PK_NO_FIELD),
    KEY("env.hide_paths_in", PK_LIST, PK_NO_FIELD),
    {.name = "session.grace", .kind = PK_NUMBER, .field = CFG(grace_seconds),
     .ctype = PK_C_DOUBLE, .dflt = 3, .min = 0, .max = 3600,
     .expect = "a number of seconds, 0 to 3600"},
    {.name = "session.max_background", .kind = PK_INTEGER, .field = CFG(max_background),
     .ctype = PK_C_UNSIGNED, .dflt = SANDBOX_MAX_BACKGROUND_DEFAULT, .min = 0, .max = 1024,
     .expect = "an integer, 0 to 1024"},
    {.name = "session.log_cap", .kind = PK_INTEGER, .field = CFG(log_cap),
     .ctype = PK_C_SIZE, .dflt = SANDBOX_LOG_CAP_DEFAULT, .min = 4096,
     .max = 1024.0 * 1024 * 1024 * 1024, .expect = "a number of bytes, 4096 to 1 TiB"},
    /* what refusal detection sees of each output stream */
    {.name = "capture.head", .kind = PK_INTEGER, .field = CFG(capture_head),
     .ctype = PK_C_SIZE, .dflt = SANDBOX_CAPTURE_DEFAULT, .min = 0, .max = SANDBOX_CAPTURE_MAX,
     .expect = "a number of bytes, 0 to 64 MiB"},
    {.name = "capture.tail", .kind = PK_INTEGER, .field = CFG(capture_tail),
     .ctype = PK_C_SIZE, .dflt = SANDBOX_CAPTURE_DEFAULT, .min = 0, .max = SANDBOX_CAPTURE_MAX,
     .expect = "a number of bytes, 0 to 64 MiB"},
    /* the whole sandbox's bounds: pids and memory need a cgroup (0: none), the sizes are the
     * tmpfs mounts' options (bytes) */
    {.name = "limits.pids", .kind = PK_PIDS, .field = CFG(pids_max),
     .ctype = PK_C_ULL, .dflt = SANDBOX_PIDS_DEFAULT},
    {.name = "limits.memory", .kind = PK_SIZE_OR_UNLIMITED, .field = CFG(memory_max),
     .ctype = PK_C_ULL},
    {.name = "limits.tmp_size", .kind = PK_SIZE, .field = CFG(tmp_size), .to_init = true,
     .ctype = PK_C_ULL, .dflt = SANDBOX_TMP_SIZE_DEFAULT},
    {.name = "limits.shm_size", .kind = PK_SIZE, .field = CFG(shm_size), .to_init = true,
     .ctype = PK_C_ULL, .dflt = SANDBOX_SHM_SIZE_DEFAULT},
    KEY("root_only.hide", PK_BOOLEAN, CFG(root_only.hide)),
    KEY("root_only.scan", PK_ABSLIST, CFG(root_only.scan)),
    {.name = "root_only.depth", .kind = PK_DEPTH, .field = CFG(root_only.depth),
     .ctype = PK_C_UNSIGNED, .dflt = 3, .min = 1, .max = 16, .expect = "an integer, 1 to 16"},
    KEY("root_only.visible", PK_ABSLIST, CFG(root_only.visible)),
    KEY("root_writes", PK_BOOLEAN, CFG(root_writes)), /* the controller's only */
    KEY("grants.sockets", PK_GRANTMAP, CFG(grant_sockets)), /* "NAME\tFROM" */
    /* "NAME\tFROM\tHOST,HOST": read by the controller, never sent to init */
    KEY("credentials", PK_CREDMAP, CFG(credentials)),
};
/* clang-format on */

const size_t profile_keys_len = ARRAY_LEN(profile_keys);

const char *pk_kind_name(enum pk_kind kind)
{
    switch (kind) {
    case PK_STRING:
        return "string";
    case PK_NAME:
        return "name";
    case PK_BOOLEAN:
        return "boolean";
    case PK_NUMBER:
        return "number";
    case PK_INTEGER:
        return "integer";
    case PK_LIST:
        return "list";
    case PK_ABSLIST:
        return "abslist";
    case PK_STRMAP:
        return "strmap";
    case PK_GRANTMAP:
        return "grantmap";
    case PK_CREDMAP:
        return "credmap";
    case PK_EXCEPTMAP:
        return "exceptmap";
    case PK_RLIMIT:
        return "rlimit";
    case PK_DURATION:
        return "duration";
    case PK_SIZE:
        return "size";
    case PK_SIZE_OR_UNLIMITED:
        return "size_or_unlimited";
    case PK_PIDS:
        return "pids";
    case PK_PORTLIST:
        return "portlist";
    case PK_HOME:
        return "home";
    case PK_DEPTH:
        return "depth";
    case PK_TRANSPARENT:
        return "transparent";
    }
    return "?";
}

bool pk_kind_is_list(enum pk_kind kind)
{
    return kind == PK_LIST || kind == PK_ABSLIST || kind == PK_PORTLIST;
}

const struct profile_key *pk_find(const char *name)
{
    for (size_t i = 0; i < profile_keys_len; i++)
        if (strcmp(profile_keys[i].name, name) == 0)
            return &profile_keys[i];
    return NULL;
}

const struct profile_key *pk_find_flag(const char *flag, size_t len)
{
    for (size_t i = 0; i < profile_keys_len; i++) {
        const char *f = profile_keys[i].flag;
        if (f && strlen(f) == len && strncmp(f, flag, len) == 0)
            return &profile_keys[i];
    }
    return NULL;
}
