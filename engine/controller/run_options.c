/* run_options.c — see run_options.h. Options are long-only (-h aside), as in the design;
 * "--name=value" and "--name value" are both accepted. Every flag maps to one profile key
 * (sandbox-t.h). */
#include "controller/run_options.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/cli_opt.h"

enum opt_id {
    OPT_PROFILE,
    OPT_WORKSPACE,
    OPT_ALLOW_HOME_WORKSPACE,
    OPT_ALLOW_WRITE,
    OPT_HIDE,
    OPT_UNRESTRICTED_NETWORK,
    OPT_ALLOW_LOOPBACK,
    OPT_ALLOW_DOCKER,
    OPT_JSON,
    OPT_NETWORK_ALLOW,
    OPT_NETWORK_DENY,
    OPT_ASK_SANDBOX_OFF,
    OPT_PLAN,
    OPT_PERMISSION_TIMEOUT,
    OPT_POLICY,
    OPT_SESSION_EXEC,
    OPT_DETACH,
    OPT_OWNER,
    OPT_ALLOW_HOST_PORT,
    OPT_PUBLISH,
    OPT_HOME,
    OPT_ALLOW_SSH_AGENT,
    OPT_ALLOW_GPG_AGENT,
};

struct opt_def {
    const char *name;
    enum opt_id id;
    bool takes_value;
};

static const struct opt_def options[] = {
    {"profile", OPT_PROFILE, true},
    {"workspace", OPT_WORKSPACE, true},
    {"allow-home-workspace", OPT_ALLOW_HOME_WORKSPACE, false},
    {"allow-write", OPT_ALLOW_WRITE, true},
    {"hide", OPT_HIDE, true},
    {"unrestricted-network", OPT_UNRESTRICTED_NETWORK, false},
    {"allow-loopback", OPT_ALLOW_LOOPBACK, false},
    {"allow-docker", OPT_ALLOW_DOCKER, false},
    {"json", OPT_JSON, false},
    {"network-allow", OPT_NETWORK_ALLOW, true},
    {"network-deny", OPT_NETWORK_DENY, true},
    {"allow-host-port", OPT_ALLOW_HOST_PORT, true},
    {"publish", OPT_PUBLISH, true},
    {"ask-sandbox-off", OPT_ASK_SANDBOX_OFF, false},
    {"plan", OPT_PLAN, false},
    {"permission-timeout", OPT_PERMISSION_TIMEOUT, true},
    {"policy", OPT_POLICY, true},
    {"home", OPT_HOME, true},
    {"session-exec", OPT_SESSION_EXEC, false},
    {"detach", OPT_DETACH, false}, /* session start only */
    {"owner", OPT_OWNER, true},    /* session start only */
    {"allow-ssh-agent", OPT_ALLOW_SSH_AGENT, false},
    {"allow-gpg-agent", OPT_ALLOW_GPG_AGENT, false},
};

/* The synopses, one per command: the first line of its --help and the end of its usage errors. */
#define RUN_SYNOPSIS "cordon run [OPTIONS] -- COMMAND [ARG...]"
#define SESSION_START_SYNOPSIS "cordon session start NAME [OPTIONS] [--detach | --owner PID]"

static void print_options(FILE *out, bool session)
{
    fputs(
        "options:\n"
        "  --profile NAME          profile to use (default: coding)\n"
        "  --workspace DIR         writable workspace (default: the current directory)\n"
        "  --allow-home-workspace  let the workspace be your home directory or an ancestor of\n"
        "                          it (refused otherwise: every dotfile would be writable)\n"
        "  --allow-write PATH      also make PATH writable (repeatable)\n"
        "  --hide PATH             make PATH look missing (repeatable)\n"
        "  --unrestricted-network  keep the host network (filesystem rules still apply)\n"
        "  --allow-loopback        commands may serve and use TCP on the sandbox loopback\n"
        "  --allow-docker          bind the Docker socket into the sandbox\n"
        "  --json                  print one JSON result object after the command's output\n"
        "  --network-allow RULE    let commands reach RULE through the proxy (repeatable)\n"
        "  --network-deny RULE     never let commands reach RULE (repeatable; wins over allows)\n"
        "  --allow-host-port PORT  the host's own 127.0.0.1:PORT (a database, an API) is\n"
        "                          reachable inside at 127.0.0.1:PORT and localhost:PORT\n"
        "                          (repeatable; not 18080 or 18081, the proxy's)\n"
        "  --publish [HOSTADDR:]HOSTPORT:PORT\n"
        "                          the sandbox's port PORT is reachable from the host at\n"
        "                          HOSTADDR:HOSTPORT (default address 127.0.0.1; repeatable;\n"
        "                          in a session also cordon publish NAME PORT [HOSTPORT])\n"
        "  --ask-sandbox-off       when the sandbox refused the command, ask (on the terminal)\n"
        "                          whether to run it once more outside the sandbox\n"
        "  --plan                  plan mode: never run anything outside the sandbox\n"
        "  --permission-timeout D  how long a question waits for its answer (30s, 5m; then: deny)\n"
        "  --policy FILE           one more policy layer on top (not trust-checked: you named\n"
        "                          the file yourself)\n"
        "  --home MODE             the home directory: overlay (writes kept in the workspace's\n"
        "                          own layer, see cordon home), tmpfs (writes discarded at the\n"
        "                          end), readonly\n"
        "  --allow-ssh-agent       your ssh-agent ($SSH_AUTH_SOCK) is reachable inside, at a\n"
        "                          fixed path SSH_AUTH_SOCK names (the keys stay in it)\n"
        "  --allow-gpg-agent       your gpg-agent signs inside (commits, tags): its socket and\n"
        "                          your public keyring, never the private keys\n",
        out);
    if (session)
        fputs("  --session-exec=false    run each exec in a fresh sandbox of its own\n"
              "  --detach                outlive the process that started the session; no\n"
              "                          terminal answers its approvals\n"
              "  --owner PID             end the session when process PID exits (one of yours),\n"
              "                          instead of the process that ran session start\n"
              "Without --detach the owner is watched with a pidfd: its end, however it comes\n"
              "(SIGKILL too), stops the session and every process of it. The Python and\n"
              "TypeScript clients rely on this: a program owns the sessions it starts.\n",
              out);
    fputs("A boolean option also takes =true or =false.\n", out);
}

void cli_run_usage(FILE *out)
{
    fputs("usage: " RUN_SYNOPSIS "\n"
          "Run COMMAND in a fresh sandbox of the profile; exit with its status (125: cordon\n"
          "refused or failed before running it). The command starts at \"--\" or at the first\n"
          "word that is not an option; its own words (such as --help) are passed to it.\n",
          out);
    print_options(out, false);
}

void cli_session_start_usage(FILE *out)
{
    fputs("usage: " SESSION_START_SYNOPSIS "\n"
          "Start session NAME: one sandbox that runs the commands given to cordon exec NAME.\n"
          "The session ends with cordon session stop NAME, when its owner exits (the process\n"
          "that ran session start, or --owner PID; none with --detach), or on TERM, INT or HUP.\n"
          "Returns once the session answers; but run in the foreground of a terminal (and not\n"
          "--detach), it stays there as the session's approver: it shows each question a\n"
          "command's network or re-run asks and takes the answer (as cordon approve --watch\n"
          "NAME does; Ctrl-C stops answering, not the session). With no approver, a question\n"
          "is denied at once.\n",
          out);
    print_options(out, true);
    fputs("see docs/session-api.md for the session commands and their API\n", out);
}

/* Parses a boolean flag's optional "=true"/"=false"; -1 on anything else. */
static int parse_bool_value(const char *v)
{
    if (!v || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
        return FLAG_TRUE;
    if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
        return FLAG_FALSE;
    return -1;
}

/* One usage error in err: "<command>: <message> (usage: <its synopsis>)". Returns -1. */
static int CORDON_PRINTF(4, 5)
    usage_err(char *err, size_t errlen, bool session, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s: %s (usage: %s)", session ? "session start" : "run", msg,
             session ? SESSION_START_SYNOPSIS : RUN_SYNOPSIS);
    return -1;
}

/* The option "--NAME" or "--NAME=VALUE" names (name points after the dashes), or NULL; *len_out
 * gets the name's length. */
static const struct opt_def *find_option(const char *name, size_t *len_out)
{
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    *len_out = len;
    for (size_t k = 0; k < ARRAY_LEN(options); k++)
        if (strlen(options[k].name) == len && strncmp(options[k].name, name, len) == 0)
            return &options[k];
    return NULL;
}

/* The options shared by run and session start, from argv[*i] up to "--" or the first word that
 * is not an option (*i is left there). session: the command is session start (--detach). */
static int parse_options(int argc, char **argv, int *i_io, bool session, struct run_flags *out,
                         char *err, size_t errlen)
{
    int i = *i_io;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0)
            break;
        if (strncmp(arg, "--", 2) != 0) /* the command starts at the first non-option word */
            break;
        const char *name = arg + 2;
        size_t name_len;
        const struct opt_def *def = find_option(name, &name_len);
        if (!def || ((def->id == OPT_DETACH || def->id == OPT_OWNER) && !session))
            return usage_err(err, errlen, session, "unknown option '--%.*s'", (int)name_len, name);
        const char *value = name[name_len] == '=' ? name + name_len + 1 : NULL;
        if (def->takes_value && !value) {
            if (i + 1 >= argc || strcmp(argv[i + 1], "--") == 0)
                return usage_err(err, errlen, session, "option '--%s' needs a value", def->name);
            value = argv[++i];
        }
        if (def->takes_value && value[0] == '\0')
            return usage_err(err, errlen, session, "option '--%s' needs a non-empty value",
                             def->name);
        int b = def->takes_value ? 0 : parse_bool_value(value);
        if (b < 0)
            return usage_err(err, errlen, session,
                             "option '--%s' takes no value other than true or false", def->name);
        switch (def->id) {
        case OPT_PROFILE:
            out->profile = value;
            break;
        case OPT_WORKSPACE:
            out->workspace = value;
            break;
        case OPT_ALLOW_HOME_WORKSPACE:
            out->allow_home_workspace = b;
            break;
        case OPT_ALLOW_WRITE:
            str_list_push(&out->writable, value);
            break;
        case OPT_HIDE:
            str_list_push(&out->hidden, value);
            break;
        case OPT_UNRESTRICTED_NETWORK:
            out->unrestricted_network = b;
            break;
        case OPT_ALLOW_LOOPBACK:
            out->allow_loopback = b;
            break;
        case OPT_ALLOW_DOCKER:
            out->allow_docker = b;
            break;
        case OPT_JSON:
            out->json = b;
            break;
        case OPT_NETWORK_ALLOW:
            str_list_push(&out->network_allow, value);
            break;
        case OPT_NETWORK_DENY:
            str_list_push(&out->network_deny, value);
            break;
        case OPT_ASK_SANDBOX_OFF:
            out->ask_sandbox_off = b;
            break;
        case OPT_PLAN:
            out->plan = b;
            break;
        case OPT_PERMISSION_TIMEOUT:
            out->permission_timeout = value;
            break;
        case OPT_POLICY:
            out->policy_file = value;
            break;
        case OPT_SESSION_EXEC:
            out->session_exec = b;
            break;
        case OPT_DETACH:
            out->detach = b == FLAG_TRUE;
            break;
        case OPT_OWNER:
            out->owner = value;
            break;
        case OPT_ALLOW_HOST_PORT:
            str_list_push(&out->host_ports, value);
            break;
        case OPT_PUBLISH:
            str_list_push(&out->publish, value);
            break;
        case OPT_HOME:
            if (strcmp(value, "overlay") && strcmp(value, "readonly") && strcmp(value, "tmpfs"))
                return usage_err(err, errlen, session,
                                 "option '--home' takes overlay, readonly or tmpfs, not '%s'",
                                 value);
            out->home = value;
            break;
        case OPT_ALLOW_SSH_AGENT:
            out->allow_ssh_agent = b;
            break;
        case OPT_ALLOW_GPG_AGENT:
            out->allow_gpg_agent = b;
            break;
        }
    }
    *i_io = i;
    return 0;
}

bool cli_run_wants_help(int argc, char **argv)
{
    /* The words parse_options would read as options: a value is skipped, an unknown option is
     * taken to have none (help still wins over the error it is). */
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            return true;
        if (strcmp(arg, "--") == 0 || strncmp(arg, "--", 2) != 0)
            return false;
        size_t len;
        const struct opt_def *def = find_option(arg + 2, &len);
        if (def && def->takes_value && arg[2 + len] != '=')
            i++;
    }
    return false;
}

int cli_parse_run(int argc, char **argv, struct run_flags *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int i = 0;
    if (parse_options(argc, argv, &i, false, out, err, errlen) < 0)
        return -1;
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc)
        return usage_err(err, errlen, false, "missing command");
    if (argv[i][0] == '\0') {
        snprintf(err, errlen, "run: the command is an empty string");
        return -1;
    }
    out->command = &argv[i];
    return 0;
}

int cli_parse_session_start(int argc, char **argv, struct run_flags *out, const char **name,
                            char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    *name = NULL;
    if (cli_wants_help(argc, argv))
        return 1;
    int i = 0;
    if (i < argc && strncmp(argv[i], "--", 2) != 0)
        *name = argv[i++];
    if (parse_options(argc, argv, &i, true, out, err, errlen) < 0)
        return -1;
    if (!*name && i < argc && strcmp(argv[i], "--") != 0)
        *name = argv[i++];
    if (i < argc)
        return usage_err(err, errlen, true,
                         "unexpected '%s' (a session runs the commands given to "
                         "cordon exec)",
                         argv[i]);
    if (!*name)
        return usage_err(err, errlen, true, "missing NAME");
    if (out->detach && out->owner)
        return usage_err(err, errlen, true, "--detach means no owner: it cannot take --owner");
    return 0;
}
