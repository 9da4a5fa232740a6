/* policy_detect.c — see policy_detect.h. Owns the case-file format and the output of
 * `cordon policy detect`. Uses json_read (the case), lua_host (lh_open, lh_resolve_sandbox,
 * lh_detect_refusals, lh_escalate, the host override), controller_env for the policy layers,
 * result_json for JSON strings.
 * Must never decide anything itself: the refusals and the ask are the hooks'. */
#include "policy_detect.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller_env.h"
#include "json_read.h"
#include "lua_host.h"
#include "result_json.h"
#include "sandbox_config.h"
#include "util.h"

extern char **environ;

#define USAGE "usage: cordon policy detect --input CASE.json [--json] [--profile NAME]"
#define MAX_CASE_BYTES ((size_t)64 << 20)
#define MAX_REFUSALS 32

static CORDON_PRINTF(1, 2) int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cordon: policy detect: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

/* The whole file into a new buffer; NULL with errno set. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (n == cap) {
            if (cap >= MAX_CASE_BYTES) {
                free(buf);
                if (f != stdin)
                    fclose(f);
                errno = EFBIG;
                return NULL;
            }
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    if (f != stdin)
        fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return buf;
}

/* The case, checked field by field. Borrowed pointers into the JSON tree. */
struct detect_case {
    const char *command, *cwd;
    const struct json_value *stdout_v, *stderr_v;
    int exit_code, signal;
    bool truncated, interactive, plan, background, have_host;
    struct str_list writable, hidden, network_denied, host_exists, host_sockets;
    bool have_writable, have_hidden;
};

static const char *const known_fields[] = {
    "command", "exit_code", "signal", "stdout", "stderr", "truncated", "cwd", "writable", "hidden",
    "network_denied", "host", "interactive", "plan", "background",
    "expect", "note", /* documentation for people and specs: not read here */
};

/* A string without NUL bytes, or an error naming the field. */
static int want_cstring(const struct json_value *v, const char *field, const char **out)
{
    if (v->type != JSON_STRING)
        return usage_error("field '%s': expected a string, got %s", field, json_type_name(v->type));
    if (strlen(v->str) != v->len)
        return usage_error("field '%s': NUL byte in string", field);
    *out = v->str;
    return 0;
}

static int want_list(const struct json_value *v, const char *field, struct str_list *out)
{
    if (v->type != JSON_ARRAY)
        return usage_error("field '%s': expected an array of strings, got %s", field,
                           json_type_name(v->type));
    for (size_t i = 0; i < v->len; i++) {
        const struct json_value *it = &v->items[i];
        if (it->type != JSON_STRING || strlen(it->str) != it->len)
            return usage_error("field '%s[%zu]': expected a string, got %s", field, i,
                               json_type_name(it->type));
        str_list_push(out, it->str);
    }
    return 0;
}

static int want_int(const struct json_value *v, const char *field, int lo, int hi, int *out)
{
    if (v->type != JSON_NUMBER || !v->is_integer || v->number < lo || v->number > hi)
        return usage_error("field '%s': expected an integer %d..%d", field, lo, hi);
    *out = (int)v->number;
    return 0;
}

static int want_bool(const struct json_value *v, const char *field, bool *out)
{
    if (v->type != JSON_BOOL)
        return usage_error("field '%s': expected true or false, got %s", field,
                           json_type_name(v->type));
    *out = v->boolean;
    return 0;
}

static int read_case(const struct json_value *root, struct detect_case *c)
{
    int rc;
    if (root->type != JSON_OBJECT)
        return usage_error("the case must be a JSON object, got %s", json_type_name(root->type));
    for (size_t i = 0; i < root->len; i++) {
        bool known = false;
        for (size_t k = 0; k < ARRAY_LEN(known_fields) && !known; k++)
            known = strcmp(root->keys[i], known_fields[k]) == 0;
        if (!known)
            return usage_error("unknown field '%s'", root->keys[i]);
    }
    static const char *const required[] = {"command", "exit_code", "stdout", "stderr"};
    for (size_t k = 0; k < ARRAY_LEN(required); k++)
        if (!json_get(root, required[k]))
            return usage_error("missing field '%s'", required[k]);

    const struct json_value *v;
    if ((rc = want_cstring(json_get(root, "command"), "command", &c->command)))
        return rc;
    if ((rc = want_int(json_get(root, "exit_code"), "exit_code", 0, 255, &c->exit_code)))
        return rc;
    c->stdout_v = json_get(root, "stdout");
    c->stderr_v = json_get(root, "stderr");
    if (c->stdout_v->type != JSON_STRING)
        return usage_error("field 'stdout': expected a string, got %s", json_type_name(c->stdout_v->type));
    if (c->stderr_v->type != JSON_STRING)
        return usage_error("field 'stderr': expected a string, got %s", json_type_name(c->stderr_v->type));
    if ((v = json_get(root, "signal")) && v->type != JSON_NULL &&
        (rc = want_int(v, "signal", 1, 64, &c->signal)))
        return rc;
    if ((v = json_get(root, "truncated")) && (rc = want_bool(v, "truncated", &c->truncated)))
        return rc;
    if ((v = json_get(root, "cwd"))) {
        if ((rc = want_cstring(v, "cwd", &c->cwd)))
            return rc;
        if (c->cwd[0] != '/')
            return usage_error("field 'cwd': expected an absolute path, got '%s'", c->cwd);
    }
    if ((v = json_get(root, "writable"))) {
        c->have_writable = true;
        if ((rc = want_list(v, "writable", &c->writable)))
            return rc;
    }
    if ((v = json_get(root, "hidden"))) {
        c->have_hidden = true;
        if ((rc = want_list(v, "hidden", &c->hidden)))
            return rc;
    }
    if ((v = json_get(root, "network_denied")) &&
        (rc = want_list(v, "network_denied", &c->network_denied)))
        return rc;
    c->interactive = true;
    if ((v = json_get(root, "interactive")) && (rc = want_bool(v, "interactive", &c->interactive)))
        return rc;
    if ((v = json_get(root, "plan")) && (rc = want_bool(v, "plan", &c->plan)))
        return rc;
    if ((v = json_get(root, "background")) && (rc = want_bool(v, "background", &c->background)))
        return rc;
    if ((v = json_get(root, "host"))) {
        if (v->type != JSON_OBJECT)
            return usage_error("field 'host': expected an object {\"exists\": [...], \"sockets\": [...]}, "
                               "got %s", json_type_name(v->type));
        for (size_t i = 0; i < v->len; i++)
            if (strcmp(v->keys[i], "exists") != 0 && strcmp(v->keys[i], "sockets") != 0)
                return usage_error("unknown field 'host.%s'", v->keys[i]);
        const struct json_value *e = json_get(v, "exists"), *s = json_get(v, "sockets");
        if (e && (rc = want_list(e, "host.exists", &c->host_exists)))
            return rc;
        if (s && (rc = want_list(s, "host.sockets", &c->host_sockets)))
            return rc;
        c->have_host = true;
    }
    return 0;
}

static void case_free(struct detect_case *c)
{
    str_list_free(&c->writable);
    str_list_free(&c->hidden);
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

int policy_detect_main(int argc, char **argv)
{
    const char *input = NULL, *profile = NULL;
    bool json = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--input") == 0 || strcmp(a, "--profile") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", a);
            *(a[2] == 'i' ? &input : &profile) = argv[++i];
        } else if (strncmp(a, "--input=", 8) == 0) {
            input = a + 8;
        } else if (strncmp(a, "--profile=", 10) == 0) {
            profile = a + 10;
        } else {
            return usage_error("unexpected argument '%s' (" USAGE ")", a);
        }
    }
    if (!input)
        return usage_error("--input FILE is required (" USAGE ")");

    int rc = 2;
    size_t len = 0;
    char err[2048];
    struct detect_case c = {0};
    struct json_value *root = NULL;
    struct sandbox_config cfg;
    bool have_cfg = false, opened = false;
    struct str_list writable = {0};

    char *text = read_all(input, &len);
    if (!text) {
        rc = usage_error("%s: %s", input, strerror(errno));
        goto out;
    }
    root = json_parse(text, len, err, sizeof err);
    if (!root) {
        rc = usage_error("%s: malformed JSON at %s", input, err);
        goto out;
    }
    if ((rc = read_case(root, &c)))
        goto out;
    rc = 2;

    char cwdbuf[PATH_MAX];
    const char *cwd = c.cwd ? c.cwd : (getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/");
    struct stat st;
    /* The profile resolves with the case's cwd as the workspace when that directory exists
     * here; a recorded case from another machine resolves against "/" (the writable set below
     * still names the case's cwd). */
    const char *resolve_cwd = stat(cwd, &st) == 0 && S_ISDIR(st.st_mode) ? cwd : "/";

    struct lh_options opt;
    controller_lua_options(&opt);
    if (lh_open(&opt, err, sizeof err) < 0) {
        rc = usage_error("%s", err);
        goto out;
    }
    opened = true;
    struct run_flags flags = {.profile = profile, .unrestricted_network = FLAG_UNSET,
                              .allow_loopback = FLAG_UNSET, .allow_docker = FLAG_UNSET,
                              .json = FLAG_UNSET};
    if (lh_resolve_sandbox(&flags, resolve_cwd, NULL, environ, &cfg, err, sizeof err) != LH_OK) {
        rc = usage_error("%s", err);
        goto out;
    }
    have_cfg = true;

    /* What the controller passes: the workspace, the writable paths and the private /tmp. */
    if (c.have_writable) {
        for (size_t i = 0; i < c.writable.len; i++)
            str_list_push(&writable, c.writable.items[i]);
    } else {
        str_list_push(&writable, strcmp(resolve_cwd, "/") == 0 ? cwd : cfg.workspace);
        for (size_t i = 0; i < cfg.writable.len; i++)
            str_list_push(&writable, cfg.writable.items[i]);
        str_list_push(&writable, "/tmp");
    }

    struct lh_command_result in = {
        .command = c.command, .exit_code = c.exit_code, .signal = c.signal,
        .stdout_text = c.stdout_v->str, .stdout_len = c.stdout_v->len,
        .stderr_text = c.stderr_v->str, .stderr_len = c.stderr_v->len,
        .truncated = c.truncated, .cwd = cwd, .writable = &writable,
        .hidden = c.have_hidden ? &c.hidden : &cfg.hidden, .network_denied = &c.network_denied,
    };
    if (c.have_host)
        lh_set_host_override(&c.host_exists, &c.host_sockets);
    struct lh_refusal refusals[MAX_REFUSALS];
    size_t n = 0;
    bool policy_failed = false;
    enum lh_outcome o = lh_detect_refusals(&in, refusals, MAX_REFUSALS, &n, err, sizeof err);
    switch (o) {
    case LH_OK:
        break;
    case LH_ERROR:
    case LH_TIMEOUT:
    case LH_NOMEM:
    case LH_BAD_RESULT:
        fprintf(stderr, "cordon: policy detect: refusal hook failed, no refusal reported: %s\n", err);
        policy_failed = true;
        break;
    }

    bool ask_sandbox_off, plan;
    lh_profile_escalation(&ask_sandbox_off, &plan);
    bool ask = false;
    struct lh_escalation esc[MAX_REFUSALS];
    for (size_t i = 0; i < n; i++) {
        o = lh_escalate(&refusals[i], c.command, ask_sandbox_off, plan || c.plan, c.background,
                        c.interactive, &esc[i], err, sizeof err);
        switch (o) {
        case LH_OK:
            ask = ask || esc[i].ask;
            break;
        case LH_ERROR:
        case LH_TIMEOUT:
        case LH_NOMEM:
        case LH_BAD_RESULT:
            fprintf(stderr, "cordon: policy detect: escalate hook failed, denied: %s\n", err);
            policy_failed = true;
            break;
        }
    }
    lh_clear_host_override();

    if (json) {
        print_refusals_json(refusals, n, ask);
    } else if (n == 0) {
        printf("no refusal\n");
    } else {
        for (size_t i = 0; i < n; i++) {
            printf("%s%s%s: %s [%s%s%s]\n", refusals[i].kind, refusals[i].path[0] ? " " : "",
                   refusals[i].path, refusals[i].reason, esc[i].ask ? "ask: " : "deny: ",
                   esc[i].ask ? esc[i].offer : "", esc[i].ask ? "" : esc[i].reason);
        }
    }
    rc = policy_failed ? 1 : 0;

out:
    if (have_cfg)
        sandbox_config_free(&cfg);
    if (opened)
        lh_close();
    str_list_free(&writable);
    case_free(&c);
    json_free(root);
    free(text);
    return rc;
}
