/* policy_net.c — see policy_net.h. Owns the argument syntax and output of `cordon policy net`.
 * Uses lua_host (lh_open, lh_resolve_sandbox, lh_network_decide: the proxy's own path),
 * layer_dirs for the policy layers (those a run in the cwd would load), json_write for
 * JSON strings, policy_detect's --repeat helpers.
 * Must never decide anything itself: the verdict is the network hook's. */
#include "cli/policy_net.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/log.h"
#include "base/clock.h"
#include "base/json_write.h"
#include "base/util.h"
#include "cli/policy_detect.h"
#include "policy/layer_dirs.h"
#include "policy/lua_host.h"
#include "sandbox/sandbox_config.h"

extern char **environ;

#define USAGE                                                                             \
    "usage: cordon policy net [--allow RULE]... [--deny RULE]... "                        \
    "[--kind http|connect|socks] [--profile NAME] [--policy FILE] [--repeat N] [--json] " \
    "HOST PORT"

#define usage_error(...) cli_usage_error("policy net", __VA_ARGS__)

static void print_field_json(const char *key, const char *value, bool *first)
{
    if (!*first)
        fputc(',', stdout);
    *first = false;
    json_write_string(stdout, key);
    fputc(':', stdout);
    if (value && *value)
        json_write_string(stdout, value);
    else
        fputs("null", stdout);
}

static void usage(void)
{
    fputs(USAGE
          "\n"
          "Decide one destination with the proxy's own code: the layers cordon run would load\n"
          "here, the profile and the rules given. Prints allow, deny or ask and the rule, reason\n"
          "and suggestion the policy gave; exit 0 allow, 1 deny or ask, 125 bad usage.\n"
          "  --allow RULE, --deny RULE  as cordon run's --network-allow, --network-deny\n"
          "  --kind K         how the command asked: http (a plain HTTP request), connect\n"
          "                   (an HTTPS CONNECT tunnel; the default) or socks\n"
          "  --profile NAME   the profile (default: coding)\n"
          "  --policy FILE    one more policy layer on top\n"
          "  --repeat N       decide N more times and print the time per decision on stderr\n"
          "  --json           one JSON object instead of the lines\n",
          stdout);
}

int policy_net_main(int argc, char **argv)
{
    struct run_flags flags = {.unrestricted_network = FLAG_UNSET,
                              .allow_loopback = FLAG_UNSET,
                              .allow_docker = FLAG_UNSET,
                              .json = FLAG_UNSET};
    const char *kind_s = "connect", *pos[2] = {NULL, NULL};
    bool json = false, only_positional = false;
    int npos = 0, rc = CORDON_EXIT_SETUP;
    long repeat = 0;
    struct sandbox_config cfg;
    bool have_cfg = false;

    if (cli_wants_help(argc, argv)) {
        usage();
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        bool missing = false;
        if (!only_positional && strcmp(a, "--") == 0) {
            only_positional = true;
        } else if (!only_positional && a[0] == '-' && a[1] == '-') {
            if ((v = cli_opt_value(argc, argv, &i, "--allow", &missing)))
                str_list_push(&flags.network_allow, v);
            else if ((v = cli_opt_value(argc, argv, &i, "--deny", &missing)))
                str_list_push(&flags.network_deny, v);
            else if ((v = cli_opt_value(argc, argv, &i, "--kind", &missing)))
                kind_s = v;
            else if ((v = cli_opt_value(argc, argv, &i, "--profile", &missing)))
                flags.profile = v;
            else if ((v = cli_opt_value(argc, argv, &i, "--policy", &missing)))
                flags.policy_file = v;
            else if ((v = cli_opt_value(argc, argv, &i, "--repeat", &missing))) {
                if ((repeat = policy_repeat_count(v)) < 0) {
                    rc = usage_error("invalid --repeat '%s' (1..1000000000)", v);
                    goto out;
                }
            } else if (strcmp(a, "--json") == 0)
                json = true;
            else if (missing) {
                rc = usage_error("%s needs a value (" USAGE ")", a);
                goto out;
            } else {
                rc = usage_error("unknown option '%s' (" USAGE ")", a);
                goto out;
            }
        } else if (npos < 2) {
            pos[npos++] = a;
        } else {
            rc = usage_error("too many arguments at '%s' (" USAGE ")", a);
            goto out;
        }
    }
    if (npos != 2) {
        rc = usage_error("expected HOST PORT, got %s (" USAGE ")", npos ? "only HOST" : "neither");
        goto out;
    }

    enum net_kind kind;
    if (strcmp(kind_s, "http") == 0)
        kind = NET_KIND_HTTP;
    else if (strcmp(kind_s, "connect") == 0)
        kind = NET_KIND_CONNECT;
    else if (strcmp(kind_s, "socks") == 0)
        kind = NET_KIND_SOCKS;
    else {
        rc = usage_error("invalid --kind '%s' (http, connect or socks)", kind_s);
        goto out;
    }

    const char *ps = pos[1];
    char *end = NULL;
    long port = strtol(ps, &end, 10);
    if (!*ps || *end || ps[0] < '0' || ps[0] > '9' || strlen(ps) > 5 || port < 1 || port > 65535) {
        rc = usage_error("invalid port '%s' (1..65535)", ps);
        goto out;
    }

    struct lh_options opt;
    char err[1024], here[PATH_MAX];
    /* The layers a run in this directory would load: a trusted project's, and --policy. */
    if (!getcwd(here, sizeof here))
        snprintf(here, sizeof here, "/");
    layer_dirs_default(&opt);
    layer_dirs_add_project(&opt, here);
    opt.extra_policy = flags.policy_file;
    if (lh_open(&opt, err, sizeof err) < 0) {
        rc = usage_error("%s", err);
        goto out;
    }
    /* The workspace does not matter for a network decision: resolve against "/" so the
     * command works from any directory. */
    if (lh_resolve_sandbox(&flags, "/", NULL, environ, &cfg, err, sizeof err) != LH_OK) {
        rc = usage_error("%s", err);
        goto out_close;
    }
    have_cfg = true;

    struct net_decision d;
    enum lh_outcome o = lh_network_decide(kind, pos[0], (unsigned)port, NULL, &d);
    if (repeat > 0) {
        /* The call above was the warm-up; the same call again, timed (a measuring aid). */
        struct net_decision scratch;
        double t0 = clock_mono_ms_f();
        for (long k = 0; k < repeat; k++)
            (void)lh_network_decide(kind, pos[0], (unsigned)port, NULL, &scratch);
        policy_repeat_report(repeat, clock_mono_ms_f() - t0);
    }
    const char *verdict = d.allow ? "allow" : d.ask ? "ask" : "deny";
    if (o != LH_OK)
        verdict = "deny"; /* fail closed; the reason says why */
    if (json) {
        bool first = true;
        fputc('{', stdout);
        print_field_json("verdict", verdict, &first);
        print_field_json("kind", kind_s, &first);
        print_field_json("host", pos[0], &first);
        printf(",\"port\":%ld", port);
        print_field_json("rule", d.rule, &first);
        print_field_json("reason", d.reason, &first);
        print_field_json("suggest", d.suggest, &first);
        fputs("}\n", stdout);
    } else {
        printf("%s\n", verdict);
        if (d.rule[0])
            printf("rule: %s\n", d.rule);
        if (d.reason[0])
            printf("reason: %s\n", d.reason);
        if (d.suggest[0])
            printf("suggest: %s\n", d.suggest);
    }
    rc = strcmp(verdict, "allow") == 0 ? 0 : 1;

out_close:
    if (have_cfg)
        sandbox_config_free(&cfg);
    lh_close();
out:
    str_list_free(&flags.network_allow);
    str_list_free(&flags.network_deny);
    return rc;
}
