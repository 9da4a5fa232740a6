/* main.c — the `cordon` command: dispatches subcommands. Owns the command table, the top-level
 * usage (the commands, one line each: every command prints its own usage), `cordon --version`
 * and the `policy` word's subcommand dispatch. Uses every command's entry point. Must never:
 * parse a command's own options (each command owns its option syntax and usage text). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/log.h"
#include "base/self_path.h"
#include "base/util.h"
#include "cli/doctor.h"
#include "cli/nc.h"
#include "cli/policy_check.h"
#include "cli/policy_detect.h"
#include "cli/policy_explain.h"
#include "cli/policy_net.h"
#include "cli/policy_test.h"
#include "cli/home_cmd.h"
#include "cli/review_cmd.h"
#include "cli/trust_cmd.h"
#include "client/client_cli.h"
#include "controller/run.h"
#include "controller/run_options.h"
#include "mcp/mcp.h"

#ifndef CORDON_VERSION
#error "CORDON_VERSION is the CMake project's VERSION (engine/cli/CMakeLists.txt passes it)"
#endif

#define TOP_SYNOPSIS "cordon COMMAND [ARG...]"
#define POLICY_SYNOPSIS "cordon policy check|net|detect|explain|test [ARG...]"

static void policy_usage(void)
{
    fputs("usage: " POLICY_SYNOPSIS "\n"
          "Check, explain and test the policy layers with the code cordon run uses.\n"
          "  check [DIR]     load every layer and profile; each problem with its file and line\n"
          "  net HOST PORT   decide one network destination as the proxy would\n"
          "  detect          run refusal detection on a recorded command result\n"
          "  explain         which layer decided a destination or a profile, and why\n"
          "  test [DIR]      run a project's own cases, DIR/.cordon/tests/*.json\n"
          "cordon policy SUBCOMMAND --help prints its usage.\n",
          stdout);
}

static int policy_main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*main)(int argc, char **argv);
    } subcommands[] = {
        {"check", policy_check_main},   {"net", policy_net_main},
        {"detect", policy_detect_main}, {"explain", policy_explain_main},
        {"test", policy_test_main},
    };
    if (argc < 1)
        return cli_usage_error("policy", "missing subcommand (usage: " POLICY_SYNOPSIS ")");
    /* policy has no option of its own: an option before the subcommand is --help or an error */
    if (argv[0][0] == '-' && cli_wants_help(argc, argv)) {
        policy_usage();
        return 0;
    }
    for (size_t i = 0; i < ARRAY_LEN(subcommands); i++)
        if (strcmp(argv[0], subcommands[i].name) == 0)
            return subcommands[i].main(argc - 1, argv + 1);
    return cli_usage_error("policy", "unknown %s '%s' (usage: " POLICY_SYNOPSIS ")",
                           argv[0][0] == '-' ? "option" : "subcommand", argv[0]);
}

/* A session's controller is a program of its own (base/self_path.h says where), linked with
 * libmicrohttpd (which Debian ships for dynamic linking only): `cordon run` stays static and
 * never loads it. It gets the same argv. */
static int exec_helper(const char *program, char **argv)
{
    char path[4096];
    int rc = self_helper_path(program, path, sizeof path);
    if (rc < 0) {
        fprintf(stderr, "cordon: cannot find %s (/proc/self/exe): %s\n", program, strerror(-rc));
        return CORDON_EXIT_SETUP;
    }
    execv(path, argv);
    fprintf(stderr, "cordon: cannot run %s: %s\n", path, strerror(errno));
    return CORDON_EXIT_SETUP;
}

/* `cordon run`: its help is read here, as run_main runs whatever it parsed. */
static int run_command(int argc, char **argv)
{
    if (cli_run_wants_help(argc - 2, argv + 2)) {
        cli_run_usage(stdout);
        return 0;
    }
    return run_main(argc - 2, argv + 2);
}

static int session_command(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "session") == 0 && strcmp(argv[2], "start") == 0)
        return exec_helper("cordon-session", argv);
    return client_cli_main(argc, argv);
}

static int policy_command(int argc, char **argv)
{
    return policy_main(argc - 2, argv + 2);
}

static int trust_command(int argc, char **argv)
{
    return trust_cmd_main(argc - 2, argv + 2);
}

static int home_command(int argc, char **argv)
{
    return home_cmd_main(argc - 2, argv + 2);
}

static int review_command(int argc, char **argv)
{
    return review_cmd_main(argc - 2, argv + 2);
}

static int apply_command(int argc, char **argv)
{
    return apply_cmd_main(argc - 2, argv + 2);
}

static int discard_command(int argc, char **argv)
{
    return discard_cmd_main(argc - 2, argv + 2);
}

static int nc_command(int argc, char **argv)
{
    return nc_main(argc - 2, argv + 2);
}

static int doctor_command(int argc, char **argv)
{
    return doctor_main(argc - 2, argv + 2);
}

static int mcp_command(int argc, char **argv)
{
    return mcp_main(argc - 2, argv + 2, CORDON_VERSION);
}

/* Every command: its name, what it does in one line (for cordon --help) and its entry, which
 * gets main's argv (argv[1] is the command). */
static const struct {
    const char *name, *about;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"run", "run one command in a fresh sandbox", run_command},
    {"session", "start, list, show and stop sessions (one sandbox for many commands)",
     session_command},
    {"exec", "run a shell string in a session", session_command},
    {"jobs", "list a session's background jobs and running commands", session_command},
    {"logs", "print a background job's log", session_command},
    {"stop", "stop a job of a session", session_command},
    {"cancel", "stop everything that one turn of a session started", session_command},
    {"approve", "answer a session's pending approval", session_command},
    {"publish", "make a session's port reachable from the host", session_command},
    {"unpublish", "stop publishing a session's port", session_command},
    {"grant", "allow a session's commands to reach a destination, ahead of a question",
     session_command},
    {"grants", "list a session's grants in force: scope, author, expiry", session_command},
    {"revoke", "end a session's grant now (its open connections close)", session_command},
    {"snapshot", "record, --list or --drop a --review session's pending changes", session_command},
    {"rollback", "return a --review session's workspace to a snapshot", session_command},
    {"policy", "check, explain and test the policy (check, net, detect, explain, test)",
     policy_command},
    {"trust", "trust a project's .cordon policy files, or --revoke the trust", trust_command},
    {"home", "show, --diff or --reset a workspace's copy-on-write home layer", home_command},
    {"review", "list a --review workspace's pending changes, host-trusted ones flagged",
     review_command},
    {"apply", "write a --review workspace's pending changes to the host", apply_command},
    {"discard", "drop a --review workspace's pending changes", discard_command},
    {"fork", "start a session from another's workspace and pending changes (best-of-N)",
     session_command},
    {"mcp", "serve a session's sandbox to an agent as an MCP server on stdio", mcp_command},
    {"doctor", "what this machine's kernel offers: each capability full, fallback or off",
     doctor_command},
    {"nc", "inside a sandbox: relay stdin and stdout to HOST PORT through the proxy", nc_command},
};

static void usage(void)
{
    printf("usage: " TOP_SYNOPSIS "\n"
           "Runs commands in a sandbox; a policy says what they may read, write and reach.\n"
           "commands:\n");
    for (size_t i = 0; i < ARRAY_LEN(commands); i++)
        printf("  %-9s %s\n", commands[i].name, commands[i].about);
    printf(
        "cordon help COMMAND (or cordon COMMAND --help) prints a command's usage;\n"
        "cordon --version the version. Exit status: the command's own, 128+N for signal N,\n"
        "124 for a timeout, 126/127 as a shell does, 125 when cordon itself refused or failed.\n");
}

static int find_command(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(commands); i++)
        if (strcmp(name, commands[i].name) == 0)
            return (int)i;
    return -1;
}

/* `cordon help [COMMAND [SUBCOMMAND]]`: the top-level usage, or exactly what
 * `cordon COMMAND [SUBCOMMAND] --help` prints (one text for both, and for the man pages). */
static int help_command(int argc, char **argv)
{
    if (argc < 3) {
        usage();
        return 0;
    }
    if (argc > 4)
        return cli_usage_error("help", "too many arguments (usage: cordon help [COMMAND "
                                       "[SUBCOMMAND]])");
    if (strcmp(argv[2], "help") == 0 && argc == 3) {
        puts("usage: cordon help [COMMAND [SUBCOMMAND]]\n"
             "Print COMMAND's usage, as cordon COMMAND [SUBCOMMAND] --help does; without one,\n"
             "the list of commands. An unknown COMMAND is an error (exit 125).");
        return 0;
    }
    int c = find_command(argv[2]);
    if (c < 0)
        return cli_usage_error("help", "unknown command '%s' (cordon --help lists them)", argv[2]);
    char help[] = "--help";
    char *args[] = {argv[0], argv[2], argc == 4 ? argv[3] : help, argc == 4 ? help : NULL, NULL};
    return commands[c].run(argc == 4 ? 4 : 3, args);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs("cordon: missing command (usage: " TOP_SYNOPSIS "; cordon --help lists them)\n",
              stderr);
        return CORDON_EXIT_SETUP;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0)
        return help_command(argc, argv);
    if (cmd[0] == '-' && cli_wants_help(argc - 1, argv + 1)) {
        usage();
        return 0;
    }
    /* The word as well as the option, as for help: whichever a caller tries answers. */
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("cordon %s\n", CORDON_VERSION);
        return 0;
    }
    int c = find_command(cmd);
    if (c >= 0)
        return commands[c].run(argc, argv);
    fprintf(stderr, "cordon: unknown %s '%s' (usage: " TOP_SYNOPSIS "; cordon --help lists them)\n",
            cmd[0] == '-' ? "option" : "command", cmd);
    return CORDON_EXIT_SETUP;
}
