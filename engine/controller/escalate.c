/* escalate.c — see escalate.h. One question per command (for its first refusal that may be
 * asked about); a network refusal is offered as that destination allowed in a fresh sandbox,
 * never as a re-run outside. */
#include "controller/escalate.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "controller/credential_git.h"
#include "controller/prompt.h"
#include "base/util.h"
#include "base/visible.h"

/* The proxy's variables mean nothing outside the sandbox; CORDON_SANDBOX would lie. */
static const char *const dropped_outside[] = {
    "HTTP_PROXY",         "HTTPS_PROXY",
    "ALL_PROXY",          "http_proxy",
    "https_proxy",        "all_proxy",
    "NO_PROXY",           "no_proxy",
    "CORDON_SOCKS_PROXY", "CORDON_SSH_PROXY_COMMAND",
    "GIT_SSH_COMMAND",    "NODE_USE_ENV_PROXY",
    "CORDON_SANDBOX",
};

void escalate_outside_environment(const struct sandbox_config *cfg, struct str_list *env)
{
    for (size_t i = 0; i < cfg->env.len; i++) {
        const char *kv = cfg->env.items[i];
        size_t n = strcspn(kv, "=");
        bool drop = false;
        for (size_t k = 0; k < ARRAY_LEN(dropped_outside) && !drop; k++)
            drop = strlen(dropped_outside[k]) == n && strncmp(kv, dropped_outside[k], n) == 0;
        if (drop)
            continue;
        /* outside, the credentials' git helpers would send the placeholder: the caller's count */
        if (n == strlen("GIT_CONFIG_COUNT") && strncmp(kv, "GIT_CONFIG_COUNT", n) == 0) {
            const char *own = credential_git_outside_count();
            if (own)
                str_list_push_owned(env, xasprintf("GIT_CONFIG_COUNT=%s", own));
            continue;
        }
        /* NAME=cordon_NAME_...: a declared credential's placeholder (credentials.c) */
        char prefix[160];
        snprintf(prefix, sizeof prefix, "cordon_%.*s_", (int)n, kv);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)n, kv);
        const char *own = n < sizeof name ? getenv(name) : NULL;
        if (kv[n] == '=' && strncmp(kv + n + 1, prefix, strlen(prefix)) == 0 && own)
            str_list_push_owned(env, xasprintf("%s=%s", name, own));
        else
            str_list_push(env, kv);
    }
    str_list_push(env, "CORDON_OUTSIDE_SANDBOX=1");
}

/* The command again, outside: its own process group in the foreground of the terminal, so
 * Ctrl-C stops only it. Returns its exit status (128+N for a signal). */
static int rerun_outside(const struct sandbox_config *cfg, char **argv, const char *line,
                         bool interactive)
{
    struct str_list env = {0};
    escalate_outside_environment(cfg, &env);
    char *shown = visible_dup(line);
    fprintf(stderr, "cordon: running outside the sandbox, as approved: %s\n", shown);
    free(shown);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        LOG_E("escalate", "fork: %s", strerror(errno));
        str_list_free(&env);
        return CORDON_EXIT_SETUP;
    }
    if (pid == 0) {
        setpgid(0, 0);
        if (interactive) {
            signal(SIGTTOU, SIG_IGN);
            (void)tcsetpgrp(STDIN_FILENO, getpid());
            signal(SIGTTOU, SIG_DFL);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (chdir(cfg->cwd) < 0)
            _exit(CORDON_EXIT_SETUP);
        extern char **environ;
        environ = env.items;
        execvp(argv[0], argv);
        fprintf(stderr, "cordon: %s: %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    setpgid(pid, pid);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (interactive) {
        signal(SIGTTOU, SIG_IGN);
        (void)tcsetpgrp(STDIN_FILENO, getpgrp());
        signal(SIGTTOU, SIG_DFL);
    }
    str_list_free(&env);
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* The --network-allow rule for a blocked destination ("host:port"): a tcp:// rule when the
 * refusal came from the SOCKS proxy (its line names that flag). */
static void allow_rule(const struct lh_refusal *r, char *out, size_t n)
{
    char tcp[300];
    snprintf(tcp, sizeof tcp, "tcp://%.280s", r->path);
    snprintf(out, n, "%s", strstr(r->line, tcp) ? tcp : r->path);
}

/* Offer a blocked destination as a grant: the command again, in a fresh sandbox, allowed to
 * reach it. true when the person said yes (out->network_allow is set). */
static bool offer_destination(const struct sandbox_config *cfg, const struct lh_refusal *r,
                              const char *line, struct escalation_result *out)
{
    char rule[300];
    allow_rule(r, rule, sizeof rule);
    out->asked = true;
    /* What the person reads is what runs: no byte of the command may act on the terminal. */
    char *where = visible_dup(r->path), *shown = visible_dup(line), *shown_rule = visible_dup(rule);
    fprintf(stderr,
            "cordon: the sandbox's network policy blocked %s.\n"
            "        Run `%s` again in a fresh sandbox that may reach it (--network-allow %s)?\n"
            "        [o] yes, this once  [D] deny: ",
            where, shown, shown_rule);
    free(where);
    free(shown);
    free(shown_rule);
    fflush(stderr);
    char key = prompt_read_key(STDIN_FILENO, cfg->permission_timeout);
    enum prompt_answer a = prompt_answer_of(key, "oOyY", "sS");
    bool allow = a != PROMPT_DENY;
    fprintf(stderr, "%s\n", prompt_outcome(key != 0, a));
    if (allow)
        snprintf(out->network_allow, sizeof out->network_allow, "%s", rule);
    return allow;
}

void escalate_refusals(const struct sandbox_config *cfg, char **argv, const char *line,
                       const struct lh_refusal *refusals, size_t n, bool interactive,
                       const struct str_list *asked, struct escalation_result *out)
{
    memset(out, 0, sizeof *out);
    bool ask_sandbox_off = false, plan = false;
    lh_profile_escalation(&ask_sandbox_off, &plan);
    for (size_t i = 0; i < n; i++) {
        struct lh_escalation e;
        char err[512];
        enum lh_outcome o = lh_escalate(&refusals[i], line, ask_sandbox_off, plan, false,
                                        interactive, &e, err, sizeof err);
        if (o != LH_OK) {
            LOG_E("escalate", "escalation policy failed, denied: %s", err);
            return;
        }
        if (e.ask && strcmp(e.offer, "network") == 0) {
            /* asked while it ran already: that answer (or its timeout) stands */
            if (!interactive || !refusals[i].path[0] ||
                (asked && str_list_contains(asked, refusals[i].path)))
                continue;
            offer_destination(cfg, &refusals[i], line, out);
            return;
        }
        if (!e.ask || strcmp(e.offer, "rerun") != 0)
            continue;
        if (!interactive)
            return;
        out->asked = true;
        /* What the person reads is what runs: no byte of the command may act on the terminal
         * (an ESC[8m hiding part of it, a cursor movement, a bidi override). */
        char *reason = visible_dup(refusals[i].reason), *shown = visible_dup(line);
        fprintf(
            stderr,
            "cordon: %s\n"
            "        The sandboxed attempt already ran and may have left partial changes.\n"
            "        Run `%s` outside the sandbox?\n"
            "        \"Session\" covers this exact command line, not what it runs (the scripts it\n"
            "        starts may change).\n"
            "        [o] allow once  [s] allow for this session  [D] deny: ",
            reason, shown);
        free(reason);
        free(shown);
        fflush(stderr);
        char key = prompt_read_key(STDIN_FILENO, cfg->permission_timeout);
        enum prompt_answer a = prompt_answer_of(key, "oO", "sS");
        fprintf(stderr, "%s\n", prompt_outcome(key != 0, a));
        if (a == PROMPT_DENY)
            return;
        out->exit_code = rerun_outside(cfg, argv, line, interactive);
        out->ran_outside = true;
        return;
    }
}
