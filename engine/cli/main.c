/* main.c — the `cordon` command: dispatches subcommands. Owns nothing else. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/run_options.h"
#include "client/client_cli.h"
#include "policy/layer_dirs.h"
#include "base/log.h"
#include "policy/lua_host.h"
#include "cli/policy_check.h"
#include "cli/policy_detect.h"
#include "cli/policy_explain.h"
#include "cli/policy_test.h"
#include "cli/policy_net.h"
#include "cli/nc.h"
#include "controller/run.h"
#include "policy/trust.h"

static int policy_main(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "net") == 0)
        return policy_net_main(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "detect") == 0)
        return policy_detect_main(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "explain") == 0)
        return policy_explain_main(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "test") == 0)
        return policy_test_main(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "check") == 0)
        return policy_check_main(argc - 1, argv + 1);
    fprintf(stderr, "cordon: policy: unknown or missing subcommand (available: check, net, detect, explain, test)\n");
    return 2;
}

/* A session's controller is a program beside this one, linked with libmicrohttpd (which Debian
 * ships for dynamic linking only): `cordon run` stays static and never loads it. It gets the
 * same argv. */
static int exec_sibling(const char *program, char **argv)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        die_errno("cannot find the cordon binary (/proc/self/exe)");
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    char path[4096 + 32];
    snprintf(path, sizeof path, "%.*s/%s", (int)(slash - self), self, program);
    execv(path, argv);
    die_errno("cannot run %s", path);
}

static bool is_session_command(const char *cmd)
{
    static const char *const names[] = {"session", "exec", "jobs", "logs", "stop", "cancel", "approve"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (strcmp(cmd, names[i]) == 0)
            return true;
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        cli_usage(stdout);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "session") == 0 && strcmp(argv[2], "start") == 0)
        return exec_sibling("cordon-session", argv);
    if (is_session_command(argv[1]))
        return client_cli_main(argc, argv);
    if (strcmp(argv[1], "run") == 0)
        return run_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "policy") == 0)
        return policy_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "trust") == 0)
        return trust_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "nc") == 0)
        return nc_main(argc - 2, argv + 2);
    fprintf(stderr, "cordon: unknown command '%s' (try cordon --help)\n", argv[1]);
    return 2;
}
