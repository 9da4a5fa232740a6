/* test_lua_decide.c — the Lua host's decisions (policy/lua_decide.c) against the real policies
 * and fixture layers (lua_host_fixture.h): network decisions, rules and hook failures, the
 * environment that points clients at the proxy, refusal detection and escalation. Each test
 * runs in its own child. */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "lua_host_fixture.h"
#include "policy/lua_host.h"
#include "sandbox/fsview.h"
#include "sandbox/sandbox_config.h"
#include "test.h"

/* ---- network decisions ------------------------------------------------------------------- */

static enum lh_outcome decide(enum net_kind kind, const char *host, unsigned port,
                              struct net_decision *d)
{
    return lh_network_decide(kind, host, port, "curl x", d);
}

static void test_network_decide(void)
{
    setup();
    open_ok();
    struct net_decision d;
    /* no profile resolved yet: fail closed */
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "example.com", 443, &d), LH_ERROR);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.reason, "no profile");

    struct run_flags f = flags_for(NULL);
    str_list_push(&f.network_allow, "*.example.com:443");
    str_list_push(&f.network_allow, "tcp://git.example.com:22");
    str_list_push(&f.network_deny, "secret.example.com");
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);

    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "API.example.com.", 443, &d), LH_OK);
    CHECK(d.allow && !d.ask);
    CHECK_STR_CONTAINS(d.rule, "*.example.com:443");
    CHECK_EQ_INT(decide(NET_KIND_HTTP, "api.example.com", 80, &d), LH_OK);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.reason, "not in the allowlist");
    CHECK_STR_CONTAINS(d.suggest, "--network-allow api.example.com:80");
    CHECK_EQ_INT(decide(NET_KIND_SOCKS, "git.example.com", 22, &d), LH_OK);
    CHECK(d.allow);
    CHECK_EQ_INT(decide(NET_KIND_SOCKS, "git.example.com", 443, &d), LH_OK);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.suggest, "--network-allow tcp://git.example.com:443");
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "secret.example.com", 443, &d), LH_OK);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.rule, "secret.example.com");
    CHECK(d.suggest[0] == '\0');
    /* the coding profile denies cloud metadata, in every spelling */
    CHECK_EQ_INT(decide(NET_KIND_HTTP, "0xa9fea9fe", 80, &d), LH_OK);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.rule, "169.254.169.254");
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "a\r\nb", 443, &d), LH_OK);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.reason, "refused host");
    /* bad input from C never reaches Lua */
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "example.com", 0, &d), LH_ERROR);
    CHECK(!d.allow);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, NULL, 443, &d), LH_ERROR);
    CHECK(!d.allow);

    /* a later resolution replaces the rules */
    sandbox_config_free(&cfg);
    struct run_flags g = flags_for("strict");
    CHECK_EQ_INT(resolve(&g, &cfg), LH_OK);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "api.example.com", 443, &d), LH_OK);
    CHECK(!d.allow);
    /* a failed resolution leaves no profile to decide with */
    struct run_flags bad = flags_for("nope");
    sandbox_config_free(&cfg);
    CHECK_EQ_INT(resolve(&bad, &cfg), LH_ERROR);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "api.example.com", 443, &d), LH_ERROR);
    CHECK(!d.allow);
    str_list_free(&f.network_allow);
    str_list_free(&f.network_deny);
    lh_close();
}

static void test_network_invalid_rule(void)
{
    setup();
    open_ok();
    struct run_flags f = flags_for(NULL);
    str_list_push(&f.network_allow, "*");
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    CHECK_EQ_INT(strcmp(err, "invalid network rule '*': a bare '*' would allow every host; "
                             "write '*:443' or a domain"),
                 0);
    str_list_free(&f.network_allow);
    str_list_push(&f.network_deny, "tcp://db");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    CHECK_STR_CONTAINS(err, "invalid network rule 'tcp://db': a tcp:// rule needs a port");
    str_list_free(&f.network_deny);
    /* a profile's own bad entry fails the same way */
    put(data, "profiles/badnet.lua",
        "return { extends = \"coding\", network = { allow = { \"a.*.b\" } } }\n");
    f = flags_for("badnet");
    CHECK_EQ_INT(resolve(&f, &cfg), LH_ERROR);
    CHECK_STR_CONTAINS(err, "invalid network rule 'a.*.b'");
    lh_close();
}

/* `cordon run` resolves in two steps: the configuration first (no rules compiled, no profile to
 * decide with), then the network rules (where a bad entry fails). */
static void test_network_resolved_later(void)
{
    setup();
    open_ok();
    struct net_decision d;
    struct run_flags f = flags_for(NULL);
    str_list_push(&f.network_allow, "*.example.com:443");
    struct sandbox_config cfg;
    CHECK_EQ_INT(lh_resolve_sandbox_config(&f, tmp, home, env_in, &cfg, err, sizeof err), LH_OK);
    CHECK(cfg.workspace != NULL);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "api.example.com", 443, &d), LH_ERROR);
    CHECK(!d.allow);
    CHECK_EQ_INT(lh_resolve_network(err, sizeof err), LH_OK);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "api.example.com", 443, &d), LH_OK);
    CHECK(d.allow);
    /* once: the profile is not kept for a second compilation */
    CHECK_EQ_INT(lh_resolve_network(err, sizeof err), LH_ERROR);
    sandbox_config_free(&cfg);
    str_list_free(&f.network_allow);

    str_list_push(&f.network_allow, "*");
    CHECK_EQ_INT(lh_resolve_sandbox_config(&f, tmp, home, env_in, &cfg, err, sizeof err), LH_OK);
    CHECK_EQ_INT(lh_resolve_network(err, sizeof err), LH_ERROR);
    CHECK_STR_CONTAINS(err, "invalid network rule '*'");
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "api.example.com", 443, &d), LH_ERROR);
    CHECK(!d.allow);
    sandbox_config_free(&cfg);
    str_list_free(&f.network_allow);
    lh_close();
}

/* A user layer over the network hook: its answers are validated strictly; a raise, a bad
 * result, a budget overrun or a memory bomb all deny. */
static void test_network_hook_errors(void)
{
    setup();
    char *ucfg = xasprintf("%s/.config/cordon", home);
    put(ucfg, "policy.lua",
        "return { network = function(input, next)\n"
        "  local h = input.host\n"
        "  if h == \"raise.test\" then error(\"nope\") end\n"
        "  if h == \"verdict.test\" then return { verdict = \"maybe\" } end\n"
        "  if h == \"key.test\" then return { verdict = \"allow\", colour = \"red\" } end\n"
        "  if h == \"type.test\" then return \"allow\" end\n"
        "  if h == \"field.test\" then return { verdict = \"allow\", rule = 3 } end\n"
        "  if h == \"ask.test\" then return { verdict = \"ask\", reason = \"line1\\nline2\" } end\n"
        "  if h == \"loop.test\" then while true do end end\n"
        "  if h == \"bomb.test\" then local t = {} for i = 1, 1e9 do t[i] = i end end\n"
        "  if h == \"cmd.test\" then\n"
        "    return { verdict = input.command == \"curl x\" and \"allow\" or \"deny\" }\n"
        "  end\n"
        "  return next(input)\n"
        "end }\n");
    struct lh_options opt = {.datadir = data, .user_config_dir = ucfg};
    CHECK_EQ_INT(lh_open(&opt, err, sizeof err), 0);
    struct run_flags f = flags_for(NULL);
    str_list_push(&f.network_allow, "*:443");
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    struct net_decision d;

    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "ok.test", 443, &d), LH_OK);
    CHECK(d.allow);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "cmd.test", 1, &d), LH_OK);
    CHECK(d.allow);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "raise.test", 443, &d), LH_ERROR);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.reason, "policy.lua:3: nope");
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "verdict.test", 443, &d), LH_BAD_RESULT);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.reason, "policy.lua:1: network result: verdict must be");
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "key.test", 443, &d), LH_BAD_RESULT);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.reason, "unknown key 'colour'");
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "type.test", 443, &d), LH_BAD_RESULT);
    CHECK(!d.allow);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "field.test", 443, &d), LH_BAD_RESULT);
    CHECK(!d.allow);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "ask.test", 443, &d), LH_OK);
    CHECK(!d.allow && d.ask);
    CHECK_EQ_INT(strcmp(d.reason, "line1?line2"), 0);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "loop.test", 443, &d), LH_TIMEOUT);
    CHECK(!d.allow);
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "bomb.test", 443, &d), LH_NOMEM);
    CHECK(!d.allow);
    CHECK_STR_CONTAINS(d.reason, "memory cap exceeded");
    /* the state is rebuilt and the rules of the resolved profile still apply */
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "ok.test", 443, &d), LH_OK);
    CHECK(d.allow);
    CHECK_STR_CONTAINS(d.rule, "*:443");
    CHECK_EQ_INT(decide(NET_KIND_CONNECT, "ok.test", 80, &d), LH_OK);
    CHECK(!d.allow);
    CHECK_EQ_INT(decide(NET_KIND_HTTP, "169.254.169.254", 443, &d), LH_OK);
    CHECK(!d.allow);
    sandbox_config_free(&cfg);
    str_list_free(&f.network_allow);
    lh_close();
    free(ucfg);
}

/* The environment a sandboxed command gets points every client at the proxy, unless the
 * network is unrestricted. */
static void test_network_environment(void)
{
    setup();
    open_ok();
    struct run_flags f = flags_for(NULL);
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    CHECK(str_list_contains(&cfg.env, "HTTPS_PROXY=http://127.0.0.1:18080"));
    CHECK(str_list_contains(&cfg.env, "all_proxy=http://127.0.0.1:18080"));
    CHECK(str_list_contains(&cfg.env, "NO_PROXY=localhost,127.0.0.1,::1"));
    CHECK(str_list_contains(&cfg.env, "CORDON_SOCKS_PROXY=socks5h://127.0.0.1:18081"));
    /* ssh's ProxyCommand names cordon where the sandbox has it (bound in by fsview.c). */
    CHECK(str_list_contains(&cfg.env, "CORDON_SSH_PROXY_COMMAND='" FSVIEW_CORDON_EXE "' nc %h %p"));
    CHECK(str_list_contains(&cfg.env, "NODE_USE_ENV_PROXY=1"));
    CHECK(cfg.net_loopback);
    sandbox_config_free(&cfg);
    f.allow_loopback = FLAG_FALSE;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    CHECK(str_list_contains(&cfg.env, "NO_PROXY="));
    sandbox_config_free(&cfg);
    f.unrestricted_network = FLAG_TRUE;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    for (size_t i = 0; i < cfg.env.len; i++)
        CHECK(strncmp(cfg.env.items[i], "HTTP_PROXY=", 11) != 0 &&
              strncmp(cfg.env.items[i], "CORDON_SOCKS_PROXY=", 19) != 0);
    sandbox_config_free(&cfg);
    lh_close();
}

/* ---- refusal detection and escalation ---------------------------------------------------- */

/* The temp datadir plus the real policies/10-refusal.lua, and optionally a user layer. */
static void open_refusal(const char *user_layer)
{
    setup();
    char *src = xasprintf("%s/policies/10-refusal.lua", CORDON_DATADIR);
    char *text = slurp(src);
    put(data, "policies/10-refusal.lua", text);
    free(text);
    free(src);
    char *ucfg = NULL;
    if (user_layer) {
        ucfg = xasprintf("%s/.config/cordon", home);
        put(ucfg, "policy.lua", user_layer);
    }
    struct lh_options opt = {.datadir = data, .user_config_dir = ucfg};
    int r = lh_open(&opt, err, sizeof err);
    if (r != 0)
        fprintf(stderr, "  lh_open: %s\n", err);
    CHECK_EQ_INT(r, 0);
    free(ucfg);
}

static struct lh_command_result cmd_result(const char *command, int exit_code,
                                           const char *stderr_text)
{
    static struct str_list writable, hidden;
    if (!writable.len) {
        str_list_push(&writable, "/home/dev/app");
        str_list_push(&hidden, "/etc/shadow");
    }
    struct lh_command_result in = {.command = command,
                                   .exit_code = exit_code,
                                   .stderr_text = stderr_text,
                                   .stderr_len = strlen(stderr_text),
                                   .cwd = "/home/dev/app",
                                   .writable = &writable,
                                   .hidden = &hidden};
    return in;
}

static void test_refusal_detect(void)
{
    open_refusal(NULL);
    struct lh_refusal r[4];
    size_t n = 99;
    struct lh_command_result in = cmd_result(
        "touch /etc/motd", 1, "touch: cannot touch '/etc/motd': Read-only file system\n");
    CHECK_EQ_INT(lh_detect_refusals(&in, r, 4, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(n, 1);
    CHECK(strcmp(r[0].kind, "write") == 0);
    CHECK(strcmp(r[0].path, "/etc/motd") == 0);
    CHECK(strcmp(r[0].line, "touch: cannot touch '/etc/motd': Read-only file system") == 0);
    CHECK_STR_CONTAINS(r[0].reason, "refused a write to /etc/motd");

    /* the same output of a command that succeeded, and a grep through a log: no refusal */
    in.exit_code = 0;
    CHECK_EQ_INT(lh_detect_refusals(&in, r, 4, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(n, 0);
    struct lh_command_result g = cmd_result("grep -r denied log; false", 1, "");
    g.stdout_text = "log: touch: cannot touch '/etc/motd': Read-only file system\n";
    g.stdout_len = strlen(g.stdout_text);
    CHECK_EQ_INT(lh_detect_refusals(&g, r, 4, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(n, 0);

    /* escalation: deny without --ask-sandbox-off, ask (rerun) with it when interactive */
    struct lh_escalation e;
    CHECK_EQ_INT(
        lh_escalate(&r[0], "touch /etc/motd", false, false, false, true, &e, err, sizeof err),
        LH_OK);
    CHECK(!e.ask);
    CHECK_STR_CONTAINS(e.reason, "--ask-sandbox-off");
    in.exit_code = 1;
    CHECK_EQ_INT(lh_detect_refusals(&in, r, 4, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(
        lh_escalate(&r[0], "touch /etc/motd", true, false, false, true, &e, err, sizeof err),
        LH_OK);
    CHECK(e.ask);
    CHECK(strcmp(e.offer, "rerun") == 0);
    CHECK_EQ_INT(
        lh_escalate(&r[0], "touch /etc/motd", true, true, false, true, &e, err, sizeof err), LH_OK);
    CHECK(!e.ask);
    CHECK_EQ_INT(
        lh_escalate(&r[0], "touch /etc/motd", true, false, true, true, &e, err, sizeof err), LH_OK);
    CHECK(!e.ask);
    lh_close();
}

static void test_refusal_host_override(void)
{
    open_refusal(NULL);
    struct lh_refusal r[4];
    size_t n;
    struct lh_command_result in =
        cmd_result("cat /etc/shadow", 1, "cat: /etc/shadow: No such file or directory\n");
    struct str_list exists = {0}, sockets = {0}, none = {0};
    str_list_push(&exists, "/etc/shadow");
    lh_set_host_override(&exists, &sockets);
    CHECK_EQ_INT(lh_detect_refusals(&in, r, 4, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(n, 1);
    CHECK(strcmp(r[0].kind, "hidden") == 0);
    lh_set_host_override(&none, &none);
    CHECK_EQ_INT(lh_detect_refusals(&in, r, 4, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(n, 0);
    /* a socket: the Docker client, and its parent directories exist */
    str_list_push(&sockets, "/run/docker.sock");
    lh_set_host_override(&none, &sockets);
    struct lh_command_result d = cmd_result(
        "docker ps", 1,
        "Cannot connect to the Docker daemon at unix:///run/docker.sock. Is the docker daemon running?\n");
    CHECK_EQ_INT(lh_detect_refusals(&d, r, 4, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(n, 1);
    CHECK(strcmp(r[0].kind, "docker") == 0);
    CHECK(strcmp(r[0].path, "/run/docker.sock") == 0);
    lh_clear_host_override();
    /* the live host: this path does not exist */
    struct lh_command_result m = cmd_result(
        "cat /etc/cordon-no-such", 1, "cat: /etc/cordon-no-such: No such file or directory\n");
    CHECK_EQ_INT(lh_detect_refusals(&m, r, 4, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(n, 0);
    str_list_free(&exists);
    str_list_free(&sockets);
    lh_close();
}

/* A user layer over refusal/escalate that misbehaves by command: each failure reports no
 * refusal (detection) or denies (escalation), with the policy's file:line. */
static void test_refusal_hook_errors(void)
{
    open_refusal(
        "return {\n"
        "  refusal = function(input, next)\n"
        "    local c = input.command\n"
        "    if c == \"raise\" then error(\"detector broke\") end\n" /* line 4 */
        "    if c == \"kind\" then return { { kind = \"bogus\", line = \"l\", reason = \"r\" } } end\n"
        "    if c == \"key\" then return { { kind = \"write\", line = \"l\", reason = \"r\", x = 1 } } end\n"
        "    if c == \"type\" then return \"write\" end\n"
        "    if c == \"sparse\" then return { [2] = { kind = \"write\", line = \"l\", reason = \"r\" } } end\n"
        "    if c == \"noreason\" then return { { kind = \"write\", line = \"l\" } } end\n"
        "    if c == \"loop\" then while true do end end\n"
        "    if c == \"bomb\" then local t = {} for i = 1, 1e9 do t[i] = i end end\n"
        "    if c == \"many\" then local t = {} for i = 1, 5 do\n"
        "      t[i] = { kind = \"sudo\", line = \"l\\tx\" .. i, reason = (\"\\u{e9}\"):rep(400) } end return t end\n"
        "    return next(input)\n"
        "  end,\n"
        "  escalate = function(input, next)\n"
        "    if input.command == \"maybe\" then return { action = \"maybe\" } end\n"
        "    if input.command == \"nooffer\" then return { action = \"ask\" } end\n"
        "    if input.command == \"raise\" then error(\"no\") end\n"
        "    return next(input)\n"
        "  end,\n"
        "}\n");
    struct lh_refusal r[4];
    size_t n;
    static const struct {
        const char *command;
        enum lh_outcome o;
        const char *msg;
    } cases[] = {
        {"raise", LH_ERROR, "policy.lua:4: detector broke"},
        {"kind", LH_BAD_RESULT, "kind must be"},
        {"key", LH_BAD_RESULT, "unknown key 'x'"},
        {"type", LH_BAD_RESULT, "expected a list"},
        {"sparse", LH_BAD_RESULT, "expected a list"},
        {"noreason", LH_BAD_RESULT, "'reason' is required"},
        {"loop", LH_TIMEOUT, "instruction budget"},
        {"bomb", LH_NOMEM, "memory cap"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct lh_command_result in = cmd_result(cases[i].command, 1, "x\n");
        n = 99;
        CHECK_EQ_INT(lh_detect_refusals(&in, r, 4, &n, err, sizeof err), cases[i].o);
        CHECK_EQ_INT(n, 0);
        CHECK_STR_CONTAINS(err, cases[i].msg);
        CHECK_STR_CONTAINS(err, "policy.lua:");
    }
    /* more than max: the first max, strings cleaned and cut at a UTF-8 boundary */
    struct lh_command_result many = cmd_result("many", 0, "");
    CHECK_EQ_INT(lh_detect_refusals(&many, r, 2, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(n, 2);
    CHECK(strcmp(r[1].line, "l?x2") == 0);
    CHECK(strlen(r[0].reason) == 510); /* 255 two-byte characters fit in 511 bytes */

    struct lh_escalation e;
    CHECK_EQ_INT(lh_escalate(&r[0], "maybe", true, false, false, true, &e, err, sizeof err),
                 LH_BAD_RESULT);
    CHECK(!e.ask);
    CHECK_STR_CONTAINS(e.reason, "policy error: ");
    CHECK_EQ_INT(lh_escalate(&r[0], "nooffer", true, false, false, true, &e, err, sizeof err),
                 LH_BAD_RESULT);
    CHECK(!e.ask);
    CHECK_EQ_INT(lh_escalate(&r[0], "raise", true, false, false, true, &e, err, sizeof err),
                 LH_ERROR);
    CHECK(!e.ask);
    CHECK_STR_CONTAINS(err, "policy.lua:");
    /* after the memory bomb the state was rebuilt and works */
    struct lh_command_result ok =
        cmd_result("touch /etc/x", 1, "touch: cannot touch '/etc/x': Read-only file system\n");
    CHECK_EQ_INT(lh_detect_refusals(&ok, r, 4, &n, err, sizeof err), LH_OK);
    CHECK_EQ_INT(n, 1);
    lh_close();
}

static void test_profile_escalation(void)
{
    open_refusal(NULL);
    bool ask, plan;
    lh_profile_escalation(&ask, &plan);
    CHECK(!ask && !plan); /* nothing resolved yet */
    struct run_flags f = flags_for("ops");
    struct sandbox_config cfg;
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    sandbox_config_free(&cfg);
    lh_profile_escalation(&ask, &plan);
    CHECK(ask);
    f = flags_for(NULL);
    CHECK_EQ_INT(resolve(&f, &cfg), LH_OK);
    sandbox_config_free(&cfg);
    lh_profile_escalation(&ask, &plan);
    CHECK(!ask);
    lh_close();
}

TEST_MAIN({"lh_network_decide: allow, deny, suggest, fail closed", test_network_decide},
          {"an invalid network rule fails resolution naming it", test_network_invalid_rule},
          {"network rules compiled after the configuration", test_network_resolved_later},
          {"network hook errors and bad results deny", test_network_hook_errors},
          {"the environment points clients at the proxy", test_network_environment},
          {"refusal hook: detect, traps, escalate", test_refusal_detect},
          {"refusal hook: host override for recorded cases", test_refusal_host_override},
          {"refusal/escalate hook errors: no refusal, deny, file:line", test_refusal_hook_errors},
          {"escalation settings of the resolved profile", test_profile_escalation})
