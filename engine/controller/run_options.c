/* run_options.c — see run_options.h. Options are long-only, as in the design; "--name=value" and
 * "--name value" are both accepted. Every flag maps to one profile key (sandbox-t.h). */
#include <stdio.h>

#include "controller/run_options.h"

#include <stdarg.h>
#include <string.h>

enum opt_id {
    OPT_PROFILE, OPT_WORKSPACE, OPT_ALLOW_WRITE, OPT_HIDE, OPT_UNRESTRICTED_NETWORK,
    OPT_ALLOW_LOOPBACK, OPT_ALLOW_DOCKER, OPT_JSON, OPT_NETWORK_ALLOW, OPT_NETWORK_DENY,
    OPT_ASK_SANDBOX_OFF, OPT_PLAN, OPT_PERMISSION_TIMEOUT,
    OPT_POLICY, OPT_SESSION_EXEC, OPT_DETACH,
};

struct opt_def {
    const char *name;
    enum opt_id id;
    bool takes_value;
};

static const struct opt_def options[] = {
    {"profile", OPT_PROFILE, true},
    {"workspace", OPT_WORKSPACE, true},
    {"allow-write", OPT_ALLOW_WRITE, true},
    {"hide", OPT_HIDE, true},
    {"unrestricted-network", OPT_UNRESTRICTED_NETWORK, false},
    {"allow-loopback", OPT_ALLOW_LOOPBACK, false},
    {"allow-docker", OPT_ALLOW_DOCKER, false},
    {"json", OPT_JSON, false},
    {"network-allow", OPT_NETWORK_ALLOW, true},
    {"network-deny", OPT_NETWORK_DENY, true},
    {"ask-sandbox-off", OPT_ASK_SANDBOX_OFF, false},
    {"plan", OPT_PLAN, false},
    {"permission-timeout", OPT_PERMISSION_TIMEOUT, true},
    {"policy", OPT_POLICY, true},
    {"session-exec", OPT_SESSION_EXEC, false},
    {"detach", OPT_DETACH, false}, /* session start only */
};

void cli_usage(FILE *out)
{
    fputs("usage: cordon run [OPTIONS] -- COMMAND [ARG...]\n"
          "       cordon session start NAME [OPTIONS] [--detach]\n"
          "       cordon exec NAME [--timeout S] [--background] [--turn ID] -- 'SHELL STRING'\n"
          "       cordon jobs NAME | logs NAME PID | stop NAME PID | cancel NAME TURN\n"
          "       cordon session list | status NAME | stop NAME\n"
          "       cordon policy check [DIR]\n"
          "       cordon policy net [--allow RULE]... [--deny RULE]... [--kind http|connect|socks] HOST PORT [--json]\n"
          "       cordon policy detect --input CASE.json [--json]\n"
          "       cordon policy explain [--kind K HOST PORT] [--profile NAME]\n"
          "       cordon policy test [DIR]\n"
          "       cordon trust [--revoke] [DIR]\n"
          "       cordon nc HOST PORT      (inside a sandbox: relay stdin/stdout through the proxy)\n"
          "options for run and session start:\n"
          "  --profile NAME          profile to use (default: coding)\n"
          "  --workspace DIR         writable workspace (default: the current directory)\n"
          "  --allow-write PATH      also make PATH writable (repeatable)\n"
          "  --hide PATH             make PATH look missing (repeatable)\n"
          "  --unrestricted-network  keep the host network (filesystem rules still apply)\n"
          "  --allow-loopback        commands may serve and use TCP on the sandbox loopback\n"
          "  --allow-docker          bind the Docker socket into the sandbox\n"
          "  --json                  print one JSON result object after the command's output\n"
          "  --network-allow RULE    let commands reach RULE through the proxy (repeatable)\n"
          "  --network-deny RULE     never let commands reach RULE (repeatable; wins over allows)\n"
          "  --ask-sandbox-off       when the sandbox refused the command, ask (on the terminal)\n"
          "                          whether to run it once more outside the sandbox\n"
          "  --plan                  plan mode: never run anything outside the sandbox\n"
          "  --permission-timeout D  how long a question waits for its answer (30s, 5m; then: deny)\n"
          "  --policy FILE           one more policy layer on top, for this run (not trust-checked:\n"
          "                          you named the file yourself)\n"
          "  --session-exec=false    (session start) run each exec in a fresh sandbox of its own\n"
          "  --detach                (session start) outlive the process that started the session\n"
          "see docs/session-api.md for the session commands and their API\n",
          out);
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

/* The options shared by run and session start, from argv[*i] up to "--" or the first word that
 * is not an option (*i is left there). cmd names the command in messages. */
static int parse_options(int argc, char **argv, int *i_io, const char *cmd, bool session,
                         struct run_flags *out, char *err, size_t errlen)
{
    int i = *i_io;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0)
            break;
        if (strncmp(arg, "--", 2) != 0) /* the command starts at the first non-option word */
            break;
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt_def *def = NULL;
        for (size_t k = 0; k < ARRAY_LEN(options); k++)
            if (strlen(options[k].name) == name_len && strncmp(options[k].name, name, name_len) == 0)
                def = &options[k];
        if (!def || (def->id == OPT_DETACH && !session)) {
            snprintf(err, errlen, "%s: unknown option '--%.*s' (see cordon --help)", cmd, (int)name_len, name);
            return -1;
        }
        const char *value = eq ? eq + 1 : NULL;
        if (def->takes_value && !value) {
            if (i + 1 >= argc || strcmp(argv[i + 1], "--") == 0) {
                snprintf(err, errlen, "%s: option '--%s' needs a value", cmd, def->name);
                return -1;
            }
            value = argv[++i];
        }
        if (def->takes_value && value[0] == '\0') {
            snprintf(err, errlen, "%s: option '--%s' needs a non-empty value", cmd, def->name);
            return -1;
        }
        int b = def->takes_value ? 0 : parse_bool_value(value);
        if (b < 0) {
            snprintf(err, errlen, "%s: option '--%s' takes no value other than true or false", cmd, def->name);
            return -1;
        }
        switch (def->id) {
        case OPT_PROFILE: out->profile = value; break;
        case OPT_WORKSPACE: out->workspace = value; break;
        case OPT_ALLOW_WRITE: str_list_push(&out->writable, value); break;
        case OPT_HIDE: str_list_push(&out->hidden, value); break;
        case OPT_UNRESTRICTED_NETWORK: out->unrestricted_network = b; break;
        case OPT_ALLOW_LOOPBACK: out->allow_loopback = b; break;
        case OPT_ALLOW_DOCKER: out->allow_docker = b; break;
        case OPT_JSON: out->json = b; break;
        case OPT_NETWORK_ALLOW: str_list_push(&out->network_allow, value); break;
        case OPT_NETWORK_DENY: str_list_push(&out->network_deny, value); break;
        case OPT_ASK_SANDBOX_OFF: out->ask_sandbox_off = b; break;
        case OPT_PLAN: out->plan = b; break;
        case OPT_PERMISSION_TIMEOUT: out->permission_timeout = value; break;
        case OPT_POLICY: out->policy_file = value; break;
        case OPT_SESSION_EXEC: out->session_exec = b; break;
        case OPT_DETACH: out->detach = b == FLAG_TRUE; break;
        }
    }
    *i_io = i;
    return 0;
}

int cli_parse_run(int argc, char **argv, struct run_flags *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int i = 0;
    if (parse_options(argc, argv, &i, "run", false, out, err, errlen) < 0)
        return -1;
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc) {
        snprintf(err, errlen, "run: missing command (usage: cordon run [OPTIONS] -- COMMAND [ARG...])");
        return -1;
    }
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
    int i = 0;
    if (i < argc && strncmp(argv[i], "--", 2) != 0)
        *name = argv[i++];
    if (parse_options(argc, argv, &i, "session start", true, out, err, errlen) < 0)
        return -1;
    if (!*name && i < argc && strcmp(argv[i], "--") != 0)
        *name = argv[i++];
    if (i < argc) {
        snprintf(err, errlen, "session start: unexpected '%s' (a session runs commands given to cordon exec)", argv[i]);
        return -1;
    }
    if (!*name) {
        snprintf(err, errlen, "session start: missing NAME (usage: cordon session start NAME [OPTIONS])");
        return -1;
    }
    return 0;
}
