/* client_cli.c — see client_cli.h: the session commands of `cordon` (exec, jobs, logs, stop,
 * cancel, session list|status|stop and approve); argv[1] is the command. Owns the
 * command table's dispatch, the simple commands' argument checks and usage texts (each
 * command's synopsis defined once, for its --help and its usage errors), and the exit
 * statuses: a usage error found here, anything the session refused or a lost connection is
 * 125 (CORDON_EXIT_SETUP), exec passes the command's own (124 on its timeout). Uses every client_*.h. Must never: speak HTTP itself. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli_opt.h"
#include "base/grant_words.h"
#include "base/attrs.h"
#include "client/client_approve.h"
#include "base/log.h"
#include "client/client_cli.h"
#include "client/client_exec.h"
#include "client/client_grants.h"
#include "client/client_snapshots.h"
#include "client/client_http.h"
#include "client/client_jobs.h"
#include "client/client_fork.h"
#include "client/client_ports.h"
#include "client/client_session.h"
#include "base/session_socket.h"
#include "base/session_protocol.h"
#include "base/util.h"

/* A simple command: its positional words and whether it takes --json. */
struct command {
    const char *name;   /* as in messages: "jobs", "session status" */
    const char *usage;  /* "cordon jobs NAME [--json]" */
    const char *about;  /* one line */
    const char *pos[4]; /* "NAME", "PID", ...; NULL-terminated */
    bool json;
    bool all; /* takes --all (session list: the ended sessions too) */
};

enum parsed { PARSED_RUN, PARSED_HELP, PARSED_USAGE };

/* argv[0] is the command's last word. Fills pos[] (one per c->pos), *json and (when not NULL)
 * *all. */
static enum parsed parse_words(const struct command *c, int argc, char **argv, const char **pos,
                               bool *json, bool *all)
{
    size_t want = 0, got = 0;
    bool options = true;
    while (c->pos[want])
        want++;
    *json = false;
    if (all)
        *all = false;
    if (cli_wants_help(argc - 1, argv + 1)) { /* before any error the other words would be */
        printf("usage: %s\n%s\n", c->usage, c->about);
        return PARSED_HELP;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && strcmp(a, "--") == 0) {
            options = false;
        } else if (options && c->json && strcmp(a, "--json") == 0) {
            *json = true;
        } else if (options && c->all && all && strcmp(a, "--all") == 0) {
            *all = true;
        } else if (options && a[0] == '-' && a[1] != '\0' && !(a[1] >= '0' && a[1] <= '9')) {
            /* ("-5" is left for the PID check to refuse) */
            cli_usage_error(c->name, "unknown option '%s' (usage: %s)", a, c->usage);
            return PARSED_USAGE;
        } else if (got < want) {
            pos[got++] = a;
        } else {
            cli_usage_error(c->name, "unexpected argument '%s' (usage: %s)", a, c->usage);
            return PARSED_USAGE;
        }
    }
    if (got < want) {
        cli_usage_error(c->name, "missing %s (usage: %s)", c->pos[got], c->usage);
        return PARSED_USAGE;
    }
    for (size_t k = 0; k < want; k++) {
        if (strcmp(c->pos[k], "NAME") == 0 && !csock_name_valid(pos[k])) {
            cli_usage_error(
                c->name, "invalid session name '%s' (letters, digits, '_', '.', '-'; at most %d)",
                pos[k], CSOCK_NAME_MAX);
            return PARSED_USAGE;
        }
    }
    return PARSED_RUN;
}

static const struct command cmd_jobs = {"jobs",
                                        "cordon jobs NAME [--json]",
                                        "List session NAME's background jobs and running commands.",
                                        {"NAME"},
                                        true};
static const struct command cmd_logs = {
    "logs",
    "cordon logs NAME PID [--tail N] [--follow]",
    "Print a background job's log as it is now: --tail N its last N lines; --follow goes on\n"
    "with what the job writes until it has ended and its output is drained (exit 0), Ctrl-C\n"
    "(130), or the session's end (one line saying why, 125).",
    {"NAME", "PID"},
    false};
static const struct command cmd_stop = {
    "stop",
    "cordon stop NAME PID [--json]",
    "Stop a job's process group: TERM, then KILL after the grace period.",
    {"NAME", "PID"},
    true};
static const struct command cmd_cancel = {
    "cancel",
    "cordon cancel NAME TURN [--json]",
    "Stop every process group that commands tagged with TURN started.",
    {"NAME", "TURN"},
    true};
static const struct command cmd_approve = {
    "approve",
    "cordon approve NAME ID once|session|deny|for=D",
    "Answer a pending approval; for=D (90s, 10m, 2h, 1d; at most a week) allows as\n"
    "\"session\" does, until D has passed (cordon grants NAME lists it, revoke ends it).",
    {"NAME", "ID", "ANSWER"},
    false};
static const struct command cmd_watch = {
    "approve --watch",
    "cordon approve --watch NAME",
    "Be session NAME's approver: show each question as it is asked and read the answer\n"
    "(o once, s session, f D for D, d deny) from stdin, until the session or stdin ends.",
    {"NAME"},
    false};
static const struct command cmd_list = {
    "session list",
    "cordon session list [--all] [--json]",
    "List the running sessions; --all: and those that ended in the last day, and why.",
    {NULL},
    true,
    true};
static const struct command cmd_status = {
    "session status",
    "cordon session status NAME [--json]",
    "Show session NAME's controller, profile, workspace and running jobs; of a session\n"
    "that ended in the last day, when and why.",
    {"NAME"},
    true};
static const struct command cmd_sstop = {
    "session stop",
    "cordon session stop NAME",
    "Stop session NAME and everything running in it; waits until it is gone.",
    {"NAME"},
    false};

static int run_exec(int argc, char **argv)
{
    struct cexec_args a = {0};
    char err[512];
    int status = CORDON_EXIT_SETUP;
    /* --help before "--" wins over an error in the other words (after it, it is the command's) */
    enum cexec_parse parsed = cli_wants_help(argc - 1, argv + 1)
                                  ? CEXEC_HELP
                                  : cexec_parse_args(argc, argv, &a, err, sizeof err);
    switch (parsed) {
    case CEXEC_RUN:
        status = cexec_run(&a);
        break;
    case CEXEC_HELP:
        cexec_usage();
        status = 0;
        break;
    case CEXEC_USAGE:
        status = cli_usage_error("exec", "%s", err);
        break;
    }
    cexec_args_free(&a);
    return status;
}

/* `cordon logs NAME PID [--tail N] [--follow]`: the options are taken out (before any "--"),
 * the rest is the simple command's words. */
static int run_logs(int argc, char **argv)
{
    char *rest[16];
    int n = 0;
    struct cjobs_log_opts o = {.tail = -1};
    bool options = true;
    if (cli_wants_help(argc - 1, argv + 1)) {
        printf("usage: %s\n%s\n", cmd_logs.usage, cmd_logs.about);
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        bool missing = false;
        const char *v = NULL;
        if (i > 0 && options && strcmp(argv[i], "--") == 0)
            options = false;
        if (i > 0 && options && (strcmp(argv[i], "--follow") == 0 || strcmp(argv[i], "-f") == 0)) {
            o.follow = true;
            continue;
        }
        if (i > 0 && options && (v = cli_opt_value(argc, argv, &i, "--tail", &missing))) {
            char *end;
            errno = 0;
            long t = strtol(v, &end, 10);
            if (v[0] < '0' || v[0] > '9' || *end || errno || t > API_LOG_TAIL_MAX)
                return cli_usage_error("logs",
                                       "--tail takes a number of lines from 0 to %ld, not '%s'",
                                       API_LOG_TAIL_MAX, v);
            o.tail = t;
            continue;
        }
        if (missing)
            return cli_usage_error("logs", "--tail needs a number of lines (usage: %s)",
                                   cmd_logs.usage);
        if (n == (int)ARRAY_LEN(rest))
            return cli_usage_error("logs", "too many arguments (usage: %s)", cmd_logs.usage);
        rest[n++] = argv[i];
    }
    const char *pos[2];
    bool json;
    long pid;
    switch (parse_words(&cmd_logs, n, rest, pos, &json, NULL)) {
    case PARSED_RUN:
        break;
    case PARSED_HELP:
        return 0;
    case PARSED_USAGE:
        return CORDON_EXIT_SETUP;
    }
    if (!cjobs_parse_pid(pos[1], &pid))
        return cli_usage_error(
            "logs", "invalid PID '%s' (a positive integer, as cordon jobs shows)", pos[1]);
    return cjobs_log(pos[0], pid, &o);
}

static int run_pid_command(const struct command *c, int argc, char **argv)
{
    const char *pos[2];
    bool json;
    long pid;
    switch (parse_words(c, argc, argv, pos, &json, NULL)) {
    case PARSED_RUN:
        break;
    case PARSED_HELP:
        return 0;
    case PARSED_USAGE:
        return CORDON_EXIT_SETUP;
    }
    if (!cjobs_parse_pid(pos[1], &pid))
        return cli_usage_error(
            c->name, "invalid PID '%s' (a positive integer, as cordon jobs shows)", pos[1]);
    return cjobs_stop(pos[0], pid, json);
}

static int run_simple(const struct command *c, int argc, char **argv)
{
    const char *pos[3];
    bool json, all;
    switch (parse_words(c, argc, argv, pos, &json, &all)) {
    case PARSED_RUN:
        break;
    case PARSED_HELP:
        return 0;
    case PARSED_USAGE:
        return CORDON_EXIT_SETUP;
    }
    if (c == &cmd_jobs)
        return cjobs_list(pos[0], json);
    if (c == &cmd_cancel) {
        if (pos[1][0] == '\0' || strlen(pos[1]) > API_TURN_MAX)
            return cli_usage_error(c->name, "invalid turn '%s' (1 to %d characters)", pos[1],
                                   API_TURN_MAX);
        return cjobs_cancel(pos[0], pos[1], json);
    }
    if (c == &cmd_approve) {
        if (pos[1][0] == '\0')
            return cli_usage_error(c->name, "the approval ID is empty (usage: %s)", c->usage);
        double for_s = 0;
        if (strncmp(pos[2], "for=", 4) == 0) {
            if (!gw_parse_duration(pos[2] + 4, &for_s))
                return cli_usage_error(c->name,
                                       "invalid duration in '%s' (for=90s, for=10m, for=2h, "
                                       "for=1d; more than 0, at most a week)",
                                       pos[2]);
            return capprove_send(pos[0], pos[1], "session", for_s);
        }
        if (!capprove_answer_valid(pos[2]))
            return cli_usage_error(c->name, "the answer is once, session, deny or for=D, not '%s'",
                                   pos[2]);
        return capprove_send(pos[0], pos[1], pos[2], 0);
    }
    if (c == &cmd_list)
        return csess_list(json, all);
    if (c == &cmd_status)
        return csess_status(pos[0], json);
    return csess_stop(pos[0]);
}

/* `cordon approve NAME ID ANSWER`, or with --watch (anywhere before "--") `cordon approve
 * --watch NAME`. */
static int run_approve(int argc, char **argv)
{
    int watch_at = 0;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--watch") == 0)
            watch_at = i;
    if (!watch_at) {
        if (cli_wants_help(argc - 1, argv + 1)) {
            printf("usage: %s\n%s\n   or: %s\n%s\n", cmd_approve.usage, cmd_approve.about,
                   cmd_watch.usage, cmd_watch.about);
            return 0;
        }
        return run_simple(&cmd_approve, argc, argv);
    }
    char *rest[8];
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i == watch_at)
            continue;
        if (n == (int)ARRAY_LEN(rest))
            return cli_usage_error(cmd_watch.name, "too many arguments (usage: %s)",
                                   cmd_watch.usage);
        rest[n++] = argv[i];
    }
    const char *pos[1];
    bool json;
    switch (parse_words(&cmd_watch, n, rest, pos, &json, NULL)) {
    case PARSED_RUN:
        break;
    case PARSED_HELP:
        return 0;
    case PARSED_USAGE:
        return CORDON_EXIT_SETUP;
    }
    return capprove_watch(pos[0]);
}

#define SESSION_SYNOPSIS "cordon session start|list|status|stop [ARG...]"

static void session_usage(void)
{
    static const struct command *const subs[] = {&cmd_list, &cmd_status, &cmd_sstop};
    /* start is cordon-session's: its options are its own --help's */
    printf("usage: " SESSION_SYNOPSIS "\n"
           "  cordon session start NAME [OPTIONS]\n"
           "      Start a session: one sandbox for many commands (cordon session start --help).\n");
    for (size_t i = 0; i < ARRAY_LEN(subs); i++)
        printf("  %s\n      %s\n", subs[i]->usage, subs[i]->about);
}

static int run_session(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("session", "missing subcommand (usage: " SESSION_SYNOPSIS ")");
    const char *sub = argv[1];
    /* session has no option of its own: an option before the subcommand is --help or an error */
    if (sub[0] == '-' && cli_wants_help(argc - 1, argv + 1)) {
        session_usage();
        return 0;
    }
    if (strcmp(sub, "start") == 0) {
        fputs("cordon: session start is handled by cordon-session\n", stderr);
        return CORDON_EXIT_SETUP;
    }
    if (strcmp(sub, "list") == 0)
        return run_simple(&cmd_list, argc - 1, argv + 1);
    if (strcmp(sub, "status") == 0)
        return run_simple(&cmd_status, argc - 1, argv + 1);
    if (strcmp(sub, "stop") == 0)
        return run_simple(&cmd_sstop, argc - 1, argv + 1);
    return cli_usage_error("session", "unknown %s '%s' (usage: " SESSION_SYNOPSIS ")",
                           sub[0] == '-' ? "option" : "subcommand", sub);
}

static int dispatch(int argc, char **argv)
{
    const char *cmd = argv[0];
    if (strcmp(cmd, "exec") == 0)
        return run_exec(argc, argv);
    if (strcmp(cmd, "jobs") == 0)
        return run_simple(&cmd_jobs, argc, argv);
    if (strcmp(cmd, "logs") == 0)
        return run_logs(argc, argv);
    if (strcmp(cmd, "stop") == 0)
        return run_pid_command(&cmd_stop, argc, argv);
    if (strcmp(cmd, "cancel") == 0)
        return run_simple(&cmd_cancel, argc, argv);
    if (strcmp(cmd, "approve") == 0)
        return run_approve(argc, argv);
    if (strcmp(cmd, "session") == 0)
        return run_session(argc, argv);
    if (strcmp(cmd, "publish") == 0)
        return cports_publish_main(argc, argv);
    if (strcmp(cmd, "fork") == 0)
        return cfork_main(argc, argv);
    if (strcmp(cmd, "unpublish") == 0)
        return cports_unpublish_main(argc, argv);
    if (strcmp(cmd, "grant") == 0)
        return cgrants_grant_main(argc, argv);
    if (strcmp(cmd, "grants") == 0)
        return cgrants_list_main(argc, argv);
    if (strcmp(cmd, "revoke") == 0)
        return cgrants_revoke_main(argc, argv);
    if (strcmp(cmd, "snapshot") == 0)
        return csnap_snapshot_main(argc, argv);
    if (strcmp(cmd, "rollback") == 0)
        return csnap_rollback_main(argc, argv);
    return cli_usage_error(cmd, "unknown command (cordon --help lists them)");
}

int client_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        fputs("cordon: missing command (exec, jobs, logs, stop, cancel, session, approve, publish, "
              "unpublish, grant, grants, revoke, snapshot, rollback, fork)\n",
              stderr);
        return CORDON_EXIT_SETUP;
    }
    int status = dispatch(argc - 1, argv + 1);
    /* Output that did not reach stdout (a full disk, a closed descriptor) is a failure. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "cordon: %s: cannot write the output: %s\n", argv[1], strerror(errno));
        if (status == 0)
            status = CORDON_EXIT_SETUP;
    }
    return status;
}
