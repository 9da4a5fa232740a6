/* policy_detect.c — see policy_detect.h. Owns the case-file format (detect_case_*, shared with
 * `policy explain --input` and `policy test`) and the output of `cordon policy detect`. Uses json_read (the case), lua_host (lh_open, lh_resolve_sandbox,
 * lh_detect_refusals, lh_escalate, the host override), layer_dirs for the policy layers,
 * json_write for JSON strings.
 * Must never decide anything itself: the refusals and the ask are the hooks'. */
#include "cli/policy_detect.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/log.h"
#include "base/clock.h"
#include "base/json_write.h"
#include "base/json_read.h"
#include "base/util.h"
#include "controller/capture.h"
#include "policy/layer_dirs.h"
#include "policy/lua_host.h"
#include "sandbox/sandbox_config.h"

extern char **environ;

#define USAGE                                                                                  \
    "usage: cordon policy detect --input CASE.json [--json] [--profile NAME] [--policy FILE] " \
    "[--repeat N]"
#define MAX_CASE_BYTES ((size_t)64 << 20)
#define MAX_REFUSALS 32

#define usage_error(...) cli_usage_error("policy detect", __VA_ARGS__)

/* The case file ("-": stdin) into a new buffer; NULL with errno set. */
char *detect_read_file(const char *path, size_t *len)
{
    char *buf = NULL;
    int rc = strcmp(path, "-") == 0 ? read_fd(STDIN_FILENO, MAX_CASE_BYTES, &buf, len)
                                    : read_file(path, 0, MAX_CASE_BYTES, &buf, len);
    if (rc < 0) {
        errno = -rc;
        return NULL;
    }
    return buf;
}

/* One line naming the problem into err; always -1. */
static CORDON_PRINTF(3, 4) int case_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *const known_fields[] = {
    "command",
    "exit_code",
    "signal",
    "stdout",
    "stderr",
    "truncated",
    "cwd",
    "writable",
    "hidden",
    "network_denied",
    "host",
    "interactive",
    "plan",
    "background",
    "workspace",
    "workspace_readonly",
    "profile",
    "readonly_in_workspace",
    "block_unix_sockets",
    "root",
    "host_listening",
    "expect",
    "note",
    "args", /* documentation for people and specs: not read here */
};

/* A string without NUL bytes, or an error naming the field. */
static int want_cstring(const struct json_value *v, const char *field, const char **out, char *err,
                        size_t errlen)
{
    if (v->type != JSON_STRING)
        return case_error(err, errlen, "field '%s': expected a string, got %s", field,
                          json_type_name(v->type));
    if (strlen(v->str) != v->len)
        return case_error(err, errlen, "field '%s': NUL byte in string", field);
    *out = v->str;
    return 0;
}

static int want_list(const struct json_value *v, const char *field, struct str_list *out, char *err,
                     size_t errlen)
{
    if (v->type != JSON_ARRAY)
        return case_error(err, errlen, "field '%s': expected an array of strings, got %s", field,
                          json_type_name(v->type));
    for (size_t i = 0; i < v->len; i++) {
        const struct json_value *it = &v->items[i];
        if (it->type != JSON_STRING || strlen(it->str) != it->len)
            return case_error(err, errlen, "field '%s[%zu]': expected a string, got %s", field, i,
                              json_type_name(it->type));
        str_list_push(out, it->str);
    }
    return 0;
}

static int want_int(const struct json_value *v, const char *field, int lo, int hi, int *out,
                    char *err, size_t errlen)
{
    if (v->type != JSON_NUMBER || !v->is_integer || v->number < lo || v->number > hi)
        return case_error(err, errlen, "field '%s': expected an integer %d..%d", field, lo, hi);
    *out = (int)v->number;
    return 0;
}

static int want_bool(const struct json_value *v, const char *field, bool *out, char *err,
                     size_t errlen)
{
    if (v->type != JSON_BOOL)
        return case_error(err, errlen, "field '%s': expected true or false, got %s", field,
                          json_type_name(v->type));
    *out = v->boolean;
    return 0;
}

int detect_case_read(const struct json_value *root, struct detect_case *c, char *err, size_t errlen)
{
    int rc;
    if (root->type != JSON_OBJECT)
        return case_error(err, errlen, "the case must be a JSON object, got %s",
                          json_type_name(root->type));
    for (size_t i = 0; i < root->len; i++) {
        bool known = false;
        for (size_t k = 0; k < ARRAY_LEN(known_fields) && !known; k++)
            known = strcmp(root->keys[i], known_fields[k]) == 0;
        if (!known)
            return case_error(err, errlen, "unknown field '%s'", root->keys[i]);
    }
    static const char *const required[] = {"command", "exit_code", "stdout", "stderr"};
    for (size_t k = 0; k < ARRAY_LEN(required); k++)
        if (!json_get(root, required[k]))
            return case_error(err, errlen, "missing field '%s'", required[k]);

    const struct json_value *v;
    if ((rc = want_cstring(json_get(root, "command"), "command", &c->command, err, errlen)))
        return rc;
    if ((rc = want_int(json_get(root, "exit_code"), "exit_code", 0, 255, &c->exit_code, err,
                       errlen)))
        return rc;
    c->stdout_v = json_get(root, "stdout");
    c->stderr_v = json_get(root, "stderr");
    if (c->stdout_v->type != JSON_STRING)
        return case_error(err, errlen, "field 'stdout': expected a string, got %s",
                          json_type_name(c->stdout_v->type));
    if (c->stderr_v->type != JSON_STRING)
        return case_error(err, errlen, "field 'stderr': expected a string, got %s",
                          json_type_name(c->stderr_v->type));
    if ((v = json_get(root, "signal")) && v->type != JSON_NULL &&
        (rc = want_int(v, "signal", 1, 64, &c->signal, err, errlen)))
        return rc;
    if ((v = json_get(root, "truncated")) &&
        (rc = want_bool(v, "truncated", &c->truncated, err, errlen)))
        return rc;
    if ((v = json_get(root, "cwd"))) {
        if ((rc = want_cstring(v, "cwd", &c->cwd, err, errlen)))
            return rc;
        if (c->cwd[0] != '/')
            return case_error(err, errlen, "field 'cwd': expected an absolute path, got '%s'",
                              c->cwd);
    }
    if ((v = json_get(root, "writable"))) {
        c->have_writable = true;
        if ((rc = want_list(v, "writable", &c->writable, err, errlen)))
            return rc;
    }
    if ((v = json_get(root, "hidden"))) {
        c->have_hidden = true;
        if ((rc = want_list(v, "hidden", &c->hidden, err, errlen)))
            return rc;
    }
    if ((v = json_get(root, "network_denied")) &&
        (rc = want_list(v, "network_denied", &c->network_denied, err, errlen)))
        return rc;
    if ((v = json_get(root, "workspace")) &&
        (rc = want_cstring(v, "workspace", &c->workspace, err, errlen)))
        return rc;
    if ((v = json_get(root, "profile")) &&
        (rc = want_cstring(v, "profile", &c->profile_name, err, errlen)))
        return rc;
    if ((v = json_get(root, "workspace_readonly")) &&
        (rc = want_bool(v, "workspace_readonly", &c->workspace_readonly, err, errlen)))
        return rc;
    if ((v = json_get(root, "block_unix_sockets")) &&
        (rc = want_bool(v, "block_unix_sockets", &c->block_unix_sockets, err, errlen)))
        return rc;
    if ((v = json_get(root, "readonly_in_workspace")) &&
        (rc = want_list(v, "readonly_in_workspace", &c->readonly_in_workspace, err, errlen)))
        return rc;
    if ((v = json_get(root, "root")) && (rc = want_bool(v, "root", &c->root, err, errlen)))
        return rc;
    if ((v = json_get(root, "host_listening")) &&
        (rc = want_list(v, "host_listening", &c->host_listening, err, errlen)))
        return rc;
    c->interactive = true;
    if ((v = json_get(root, "interactive")) &&
        (rc = want_bool(v, "interactive", &c->interactive, err, errlen)))
        return rc;
    if ((v = json_get(root, "plan")) && (rc = want_bool(v, "plan", &c->plan, err, errlen)))
        return rc;
    if ((v = json_get(root, "background")) &&
        (rc = want_bool(v, "background", &c->background, err, errlen)))
        return rc;
    if ((v = json_get(root, "host"))) {
        if (v->type != JSON_OBJECT)
            return case_error(
                err, errlen,
                "field 'host': expected an object {\"exists\": [...], \"sockets\": [...]}, "
                "got %s",
                json_type_name(v->type));
        for (size_t i = 0; i < v->len; i++)
            if (strcmp(v->keys[i], "exists") != 0 && strcmp(v->keys[i], "sockets") != 0)
                return case_error(err, errlen, "unknown field 'host.%s'", v->keys[i]);
        const struct json_value *e = json_get(v, "exists"), *s = json_get(v, "sockets");
        if (e && (rc = want_list(e, "host.exists", &c->host_exists, err, errlen)))
            return rc;
        if (s && (rc = want_list(s, "host.sockets", &c->host_sockets, err, errlen)))
            return rc;
        c->have_host = true;
    }
    return 0;
}

static void forget_candidates(struct detect_case *c)
{
    free(c->cand_out);
    free(c->cand_err);
    c->cand_out = c->cand_err = NULL;
}

void detect_case_free(struct detect_case *c)
{
    if (c->have_cfg)
        sandbox_config_free(&c->cfg);
    c->have_cfg = false;
    forget_candidates(c);
    str_list_free(&c->in_writable);
    str_list_free(&c->writable);
    str_list_free(&c->hidden);
    str_list_free(&c->readonly_in_workspace);
    str_list_free(&c->host_listening);
    str_list_free(&c->network_denied);
    str_list_free(&c->host_exists);
    str_list_free(&c->host_sockets);
}

static void print_refusals_json(const struct lh_refusal *r, size_t n, bool ask)
{
    printf("{\"ask\": %s, \"refusals\": [", ask ? "true" : "false");
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {\"kind\": " : "{\"kind\": ", stdout);
        json_write_string(stdout, r[i].kind);
        fputs(", \"path\": ", stdout);
        if (r[i].path[0])
            json_write_string(stdout, r[i].path);
        else
            fputs("null", stdout);
        fputs(", \"line\": ", stdout);
        json_write_string(stdout, r[i].line);
        fputs(", \"reason\": ", stdout);
        json_write_string(stdout, r[i].reason);
        fputc('}', stdout);
    }
    fputs("]}\n", stdout);
}

/* The lines of a recorded text (the kept head and tail already) that hold a marker, through
 * a capture as the controller's: everything is its head. */
static char *recorded_candidates(const struct marker_set *m, const char *text, size_t len,
                                 size_t *out_len)
{
    struct capture cap;
    bool cut;
    capture_init(&cap, len, 0);
    capture_watch(&cap, m);
    capture_feed(&cap, text, len);
    char *out = capture_candidates(&cap, out_len, &cut);
    capture_free(&cap);
    return out;
}

enum lh_outcome detect_case_prepare(struct detect_case *c, const char *profile,
                                    const char *default_cwd, char *err, size_t errlen)
{
    forget_candidates(c);
    const char *cwd = c->cwd ? c->cwd : default_cwd;
    snprintf(c->cwdbuf, sizeof c->cwdbuf, "%s", cwd);
    struct stat st;
    /* The profile resolves with the case's cwd as the workspace when that directory exists
     * here; a recorded case from another machine resolves against "/" (the writable set below
     * still names the case's cwd). */
    const char *resolve_cwd = stat(cwd, &st) == 0 && S_ISDIR(st.st_mode) ? cwd : "/";
    struct run_flags flags = {.profile = profile,
                              .unrestricted_network = FLAG_UNSET,
                              .allow_loopback = FLAG_UNSET,
                              .allow_docker = FLAG_UNSET,
                              .json = FLAG_UNSET};
    if (c->have_cfg)
        sandbox_config_free(&c->cfg);
    c->have_cfg = false;
    str_list_free(&c->in_writable);
    enum lh_outcome o =
        lh_resolve_sandbox(&flags, resolve_cwd, NULL, environ, &c->cfg, err, errlen);
    if (o != LH_OK)
        return o;
    c->have_cfg = true;

    /* What the controller passes: the workspace, the writable paths and the private /tmp. */
    if (c->have_writable) {
        for (size_t i = 0; i < c->writable.len; i++)
            str_list_push(&c->in_writable, c->writable.items[i]);
    } else {
        str_list_push(&c->in_writable, strcmp(resolve_cwd, "/") == 0 ? cwd : c->cfg.workspace);
        for (size_t i = 0; i < c->cfg.writable.len; i++)
            str_list_push(&c->in_writable, c->cfg.writable.items[i]);
        str_list_push(&c->in_writable, "/tmp");
    }
    c->in = (struct lh_command_result){
        .command = c->command,
        .exit_code = c->exit_code,
        .signal = c->signal,
        .stdout_text = c->stdout_v->str,
        .stdout_len = c->stdout_v->len,
        .stderr_text = c->stderr_v->str,
        .stderr_len = c->stderr_v->len,
        .truncated = c->truncated,
        .cwd = c->cwdbuf,
        .writable = &c->in_writable,
        .hidden = c->have_hidden ? &c->hidden : &c->cfg.hidden,
        .network_denied = &c->network_denied,
        .workspace = c->workspace,
        .workspace_readonly = c->workspace_readonly,
        .profile = c->profile_name,
        .readonly_in_workspace = &c->readonly_in_workspace,
        .block_unix_sockets = c->block_unix_sockets,
        .root = c->root,
        .host_listening = &c->host_listening,
    };
    const struct marker_set *m = lh_refusal_markers();
    if (m) { /* what the controller's capture hands the hook: the lines with a marker */
        c->cand_out = recorded_candidates(m, c->stdout_v->str, c->stdout_v->len, &c->in.stdout_len);
        c->cand_err = recorded_candidates(m, c->stderr_v->str, c->stderr_v->len, &c->in.stderr_len);
        c->in.stdout_text = c->cand_out;
        c->in.stderr_text = c->cand_err;
        c->in.candidates = true;
    }
    return LH_OK;
}

void detect_case_host(const struct detect_case *c, bool on)
{
    if (!c->have_host)
        return;
    if (on)
        lh_set_host_override(&c->host_exists, &c->host_sockets);
    else
        lh_clear_host_override();
}

long policy_repeat_count(const char *s)
{
    char *end = NULL;
    long n = strtol(s, &end, 10);
    if (!*s || *end || s[0] < '0' || s[0] > '9' || n < 1 || n > 1000000000L)
        return -1;
    return n;
}

void policy_repeat_report(long n, double elapsed_ms)
{
    fprintf(stderr, "decisions: %ld, per decision: %.2f us\n", n, elapsed_ms * 1e3 / (double)n);
}

static void usage(void)
{
    fputs(USAGE
          "\n"
          "Run refusal detection and the escalation decision on a recorded command result\n"
          "(CASE.json; - reads stdin) with the controller's own code, over the layers cordon run\n"
          "would load here. Prints one line per refusal or \"no refusal\"; exit 0, 1 when a\n"
          "policy failed, 125 for bad usage or a bad case file.\n"
          "  --json           {\"ask\":BOOL,\"refusals\":[...]} instead of the lines\n"
          "  --profile NAME   the profile (default: coding)\n"
          "  --policy FILE    one more policy layer on top\n"
          "  --repeat N       detect N more times and print the time per decision on stderr\n",
          stdout);
}

int policy_detect_main(int argc, char **argv)
{
    const char *input = NULL, *profile = NULL, *policy = NULL;
    long repeat = 0;
    bool json = false;
    if (cli_wants_help(argc, argv)) {
        usage();
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        bool missing = false;
        if (strcmp(a, "--json") == 0)
            json = true;
        else if ((v = cli_opt_value(argc, argv, &i, "--input", &missing)))
            input = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--profile", &missing)))
            profile = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--policy", &missing)))
            policy = v;
        else if ((v = cli_opt_value(argc, argv, &i, "--repeat", &missing))) {
            if ((repeat = policy_repeat_count(v)) < 0)
                return usage_error("invalid --repeat '%s' (1..1000000000)", v);
        } else if (missing)
            return usage_error("%s needs a value (" USAGE ")", a);
        else
            return usage_error("unexpected argument '%s' (" USAGE ")", a);
    }
    if (!input)
        return usage_error("--input FILE is required (" USAGE ")");

    int rc = CORDON_EXIT_SETUP;
    size_t len = 0;
    char err[2048];
    struct detect_case c = {0};
    struct json_value *root = NULL;
    bool opened = false;

    char *text = detect_read_file(input, &len);
    if (!text) {
        rc = usage_error("%s: %s", input, strerror(errno));
        goto out;
    }
    root = json_parse(text, len, err, sizeof err);
    if (!root) {
        rc = usage_error("%s: malformed JSON at %s", input, err);
        goto out;
    }
    if (detect_case_read(root, &c, err, sizeof err) < 0) {
        rc = usage_error("%s", err);
        goto out;
    }

    char cwdbuf[PATH_MAX];
    const char *here = getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/";
    struct lh_options opt;
    layer_dirs_default(&opt);
    layer_dirs_add_project(&opt, here);
    opt.extra_policy = policy;
    if (lh_open(&opt, err, sizeof err) < 0) {
        rc = usage_error("%s", err);
        goto out;
    }
    opened = true;
    if (detect_case_prepare(&c, profile, here, err, sizeof err) != LH_OK) {
        rc = usage_error("%s", err);
        goto out;
    }

    detect_case_host(&c, true);
    struct lh_refusal refusals[MAX_REFUSALS];
    size_t n = 0;
    bool policy_failed = false;
    enum lh_outcome o = lh_detect_refusals(&c.in, refusals, MAX_REFUSALS, &n, err, sizeof err);
    if (o != LH_OK) {
        fprintf(stderr, "cordon: policy detect: refusal hook failed, no refusal reported: %s\n",
                err);
        policy_failed = true;
    }
    if (repeat > 0) {
        /* The call above was the warm-up; the same call again, timed (a measuring aid). */
        struct lh_refusal scratch[MAX_REFUSALS];
        size_t sn;
        double t0 = clock_mono_ms_f();
        for (long k = 0; k < repeat; k++)
            (void)lh_detect_refusals(&c.in, scratch, MAX_REFUSALS, &sn, err, sizeof err);
        policy_repeat_report(repeat, clock_mono_ms_f() - t0);
    }

    bool ask_sandbox_off, plan;
    lh_profile_escalation(&ask_sandbox_off, &plan);
    bool ask = false;
    struct lh_escalation esc[MAX_REFUSALS];
    for (size_t i = 0; i < n; i++) {
        o = lh_escalate(&refusals[i], c.command, ask_sandbox_off, plan || c.plan, c.background,
                        c.interactive, &esc[i], err, sizeof err);
        if (o == LH_OK) {
            ask = ask || esc[i].ask;
        } else {
            fprintf(stderr, "cordon: policy detect: escalate hook failed, denied: %s\n", err);
            policy_failed = true;
        }
    }
    detect_case_host(&c, false);

    if (json) {
        print_refusals_json(refusals, n, ask);
    } else if (n == 0) {
        printf("no refusal\n");
    } else {
        for (size_t i = 0; i < n; i++) {
            printf("%s%s%s: %s [%s%s%s]\n", refusals[i].kind, refusals[i].path[0] ? " " : "",
                   refusals[i].path, refusals[i].reason,
                   esc[i].ask ? "ask: " : "deny: ", esc[i].ask ? esc[i].offer : "",
                   esc[i].ask ? "" : esc[i].reason);
        }
    }
    rc = policy_failed ? 1 : 0;

out:
    detect_case_free(&c);
    if (opened)
        lh_close();
    json_free(root);
    free(text);
    return rc;
}
