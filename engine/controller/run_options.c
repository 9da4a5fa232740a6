/* run_options.c — see run_options.h. Options are long-only (-h aside), as in the design;
 * "--name=value" and "--name value" are both accepted. Every flag but --profile, --policy,
 * --publish, --detach, --owner and --review-fork is a profile key's, read from its row of the table of profile
 * keys (sandbox/profile_keys.c), with its help. */
#include "controller/run_options.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/cli_opt.h"
#include "sandbox/profile_keys.h"

/* The options that are no profile key; every other option is the flag of a profile key
 * (sandbox/profile_keys.c, where its help is too). */
enum opt_id {
    OPT_PROFILE,
    OPT_PUBLISH,
    OPT_POLICY,
    OPT_DETACH,
    OPT_OWNER,
    OPT_CREDENTIAL,
    OPT_REVIEW_FORK
};

struct opt_def {
    const char *name;
    enum opt_id id;
    const char *arg;   /* its value's name in the help; NULL: none */
    const char *after; /* in the help, after this key's flag (NULL: first; "": session's) */
    bool session_only; /* session start only */
    const char *help;
};

static const struct opt_def options[] = {
    {"profile", OPT_PROFILE, "NAME", NULL, false, "profile to use (default: coding)"},
    {"publish", OPT_PUBLISH, "[HOSTADDR:]HOSTPORT:PORT", "allow-host-port", false,
     "the sandbox's port PORT is reachable from the host at\n"
     "HOSTADDR:HOSTPORT (default address 127.0.0.1; repeatable;\n"
     "in a session also cordon publish NAME PORT [HOSTPORT])"},
    {"credential", OPT_CREDENTIAL, "NAME=HOST[,HOST...]", "network-deny", false,
     "the caller's variable NAME, kept out of the sandbox: inside,\n"
     "NAME holds a placeholder, which the proxy replaces with the\n"
     "value in requests to HOST (host or host:port) only, and\n"
     "refuses anywhere else (repeatable)"},
    {"policy", OPT_POLICY, "FILE", "permission-timeout", false,
     "one more policy layer on top (not trust-checked: you named\n"
     "the file yourself)"},
    {"detach", OPT_DETACH, NULL, "", true,
     "outlive the process that started the session; no\n"
     "terminal answers its approvals"},
    {"owner", OPT_OWNER, "PID", "", true,
     "end the session when process PID exits (one of yours),\n"
     "instead of the process that ran session start"},
    {"review-fork", OPT_REVIEW_FORK, "FORK", "", true,
     "review mode in the workspace's fork layer FORK (made by\n"
     "cordon fork; cordon review --fork FORK lists it)"},
};

/* One option found on the command line: a profile key's flag, or one of options[]. */
struct found_opt {
    const char *name;
    bool takes_value;
    const struct profile_key *key; /* NULL: def */
    const struct opt_def *def;
};

/* The synopses, one per command: the first line of its --help and the end of its usage errors. */
#define RUN_SYNOPSIS "cordon run [OPTIONS] -- COMMAND [ARG...]"
#define SESSION_START_SYNOPSIS "cordon session start NAME [OPTIONS] [--detach | --owner PID]"

/* "  --NAME ARG  help", the help's lines at column 26 (on a line of their own below a long
 * NAME ARG). */
static void print_option(FILE *out, const char *name, const char *arg, const char *help)
{
    char head[64];
    snprintf(head, sizeof head, "--%s%s%s", name, arg ? " " : "", arg ? arg : "");
    if (strlen(head) > 22)
        fprintf(out, "  %s\n%26s", head, "");
    else
        fprintf(out, "  %-22s  ", head);
    for (const char *line = help; *line;) {
        size_t len = strcspn(line, "\n");
        fprintf(out, "%.*s\n", (int)len, line);
        line += len;
        if (*line == '\n' && *++line)
            fprintf(out, "%26s", "");
    }
}

/* The options not of a profile key that come after `after` in the help. */
static void print_options_after(FILE *out, const char *after)
{
    for (size_t k = 0; k < ARRAY_LEN(options); k++)
        if (after ? options[k].after && strcmp(options[k].after, after) == 0 : !options[k].after)
            print_option(out, options[k].name, options[k].arg, options[k].help);
}

static void print_options(FILE *out, bool session)
{
    fputs("options:\n", out);
    print_options_after(out, NULL);
    for (size_t i = 0; i < profile_keys_len; i++) {
        const struct profile_key *k = &profile_keys[i];
        if (!k->flag || k->flag_scope != PK_FLAG_ANY)
            continue;
        print_option(out, k->flag, k->flag_arg, k->flag_help);
        print_options_after(out, k->flag);
    }
    if (session) {
        for (size_t i = 0; i < profile_keys_len; i++) {
            const struct profile_key *k = &profile_keys[i];
            if (!k->flag || k->flag_scope != PK_FLAG_SESSION_HELP)
                continue;
            char name[64]; /* --session-exec=false: the value that does something */
            snprintf(name, sizeof name, "%s%s", k->flag, k->flag_negates ? "=false" : "");
            print_option(out, name, k->flag_arg, k->flag_help);
        }
        print_options_after(out, "");
        fputs("Without --detach the owner is watched with a pidfd: its end, however it comes\n"
              "(SIGKILL too), stops the session and every process of it. The Python and\n"
              "TypeScript clients rely on this: a program owns the sessions it starts.\n",
              out);
    }
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

/* The option "--NAME" or "--NAME=VALUE" names (name points after the dashes) into *found;
 * false when none. *len_out gets the name's length. */
static bool find_option(const char *name, size_t *len_out, struct found_opt *found)
{
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    *len_out = len;
    memset(found, 0, sizeof *found);
    for (size_t k = 0; k < ARRAY_LEN(options); k++)
        if (strlen(options[k].name) == len && strncmp(options[k].name, name, len) == 0) {
            found->def = &options[k];
            found->name = options[k].name;
            found->takes_value = options[k].arg != NULL;
            return true;
        }
    found->key = pk_find_flag(name, len);
    if (!found->key)
        return false;
    found->name = found->key->flag;
    found->takes_value = found->key->flag_arg != NULL;
    return true;
}

/* Sets the run_flags field of a profile key's flag: a tri-state for a boolean, one more item
 * for a list, the value as given for any other (the profile validates it). */
static int set_key_flag(const struct profile_key *key, const char *value, int b, bool session,
                        struct run_flags *out, char *err, size_t errlen)
{
    void *field = (char *)out + key->flag_field;
    if (key->kind == PK_BOOLEAN) {
        *(enum flag_state *)field = (enum flag_state)b;
        return 0;
    }
    if (pk_kind_is_list(key->kind)) {
        str_list_push(field, value);
        return 0;
    }
    if (key->kind == PK_HOME && strcmp(value, "overlay") && strcmp(value, "readonly") &&
        strcmp(value, "tmpfs"))
        return usage_err(err, errlen, session,
                         "option '--%s' takes overlay, readonly or tmpfs, not '%s'", key->flag,
                         value);
    *(const char **)field = value;
    return 0;
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
        struct found_opt opt;
        if (!find_option(name, &name_len, &opt) || (opt.def && opt.def->session_only && !session))
            return usage_err(err, errlen, session, "unknown option '--%.*s'", (int)name_len, name);
        const char *value = name[name_len] == '=' ? name + name_len + 1 : NULL;
        if (opt.takes_value && !value) {
            if (i + 1 >= argc || strcmp(argv[i + 1], "--") == 0)
                return usage_err(err, errlen, session, "option '--%s' needs a value", opt.name);
            value = argv[++i];
        }
        if (opt.takes_value && value[0] == '\0')
            return usage_err(err, errlen, session, "option '--%s' needs a non-empty value",
                             opt.name);
        int b = opt.takes_value ? 0 : parse_bool_value(value);
        if (b < 0)
            return usage_err(err, errlen, session,
                             "option '--%s' takes no value other than true or false", opt.name);
        if (opt.key) {
            if (set_key_flag(opt.key, value, b, session, out, err, errlen) < 0)
                return -1;
            continue;
        }
        switch (opt.def->id) {
        case OPT_PROFILE:
            out->profile = value;
            break;
        case OPT_POLICY:
            out->policy_file = value;
            break;
        case OPT_DETACH:
            out->detach = b == FLAG_TRUE;
            break;
        case OPT_OWNER:
            out->owner = value;
            break;
        case OPT_PUBLISH:
            str_list_push(&out->publish, value);
            break;
        case OPT_CREDENTIAL:
            str_list_push(&out->credentials, value);
            break;
        case OPT_REVIEW_FORK:
            out->review_fork = value;
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
        struct found_opt opt;
        if (find_option(arg + 2, &len, &opt) && opt.takes_value && arg[2 + len] != '=')
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
