/* policy_explain.c — see policy_explain.h.
 * cordon policy explain [--kind http|connect|socks] HOST PORT [--allow R]... [--deny R]...
 *                       [--profile NAME] [--policy FILE]
 * cordon policy explain --profile NAME [--policy FILE]
 * cordon policy explain --input CASE.json [--profile NAME] [--policy FILE]
 * cordon policy explain --help
 * Layers are those `cordon run` would load in the current directory (a project's .cordon only
 * when trusted, with the same one-line notice otherwise). The host returns each layer's
 * answer (struct lh_explanation); this file prints them. */
#include "cli/policy_explain.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/log.h"
#include "base/json_read.h"
#include "base/json_write.h"
#include "base/util.h"
#include "cli/policy_detect.h"
#include "policy/layer_dirs.h"
#include "policy/lua_host.h"
#include "proxy/cred_rewrite.h"
#include "sandbox/sandbox_config.h"

extern char **environ;

/* "file" of a "file:line" (for the decided-by line). */
static int where_file_len(const char *w)
{
    const char *c = strrchr(w, ':');
    return c ? (int)(c - w) : (int)strlen(w);
}

/* Nothing to list: why, or that no layer defines the hook (then `none` says the answer). */
static void print_empty(const struct lh_explanation *ex, const char *hook, const char *none)
{
    if (ex->error[0])
        printf("cannot explain: %s\n", ex->error);
    else
        printf("no layer defines the '%s' hook%s\n", hook, none);
}

static void print_decided_by(const struct lh_explanation *ex, const char *why)
{
    const char *w = ex->layer[ex->decided].where;
    printf("decided by: %.*s (layer %d%s)\n", where_file_len(w), w, ex->decided + 1, why);
}

/* "N. file:line  verdict  rule: ...  reason: ..." per layer, the decision, the deciding layer. */
static void print_network(const struct lh_explanation *ex)
{
    if (ex->n == 0) {
        print_empty(ex, "network", ": deny");
        return;
    }
    for (int i = 0; i < ex->n; i++) {
        const struct lh_explain_layer *l = &ex->layer[i];
        if (l->outcome != LH_OK) {
            printf("%d. %s  deny  policy error (%s): %s\n", i + 1, l->where,
                   lh_outcome_name(l->outcome), l->error);
            continue;
        }
        printf("%d. %s  %s", i + 1, l->where, l->net.allow ? "allow" : l->net.ask ? "ask" : "deny");
        if (l->net.rule[0])
            printf("  rule: %s", l->net.rule);
        if (l->net.reason[0])
            printf("  reason: %s", l->net.reason);
        putchar('\n');
    }
    const struct lh_explain_layer *t = &ex->layer[ex->n - 1];
    printf("decision: %s\n", t->outcome != LH_OK ? "deny"
                             : t->net.allow      ? "allow"
                             : t->net.ask        ? "ask"
                                                 : "deny");
    print_decided_by(ex, "");
}

/* " key.path, ..." or " nothing". */
static void print_keys(const struct str_list *keys)
{
    for (size_t k = 0; k < keys->len; k++)
        printf("%s %s", k ? "," : "", keys->items[k]);
    if (!keys->len)
        fputs(" nothing", stdout);
    putchar('\n');
}

/* "file PATH  sets: ..." per profile file of the extends chain (the base first, then each
 * file's changes), then "N. file:line  changed: key.path, ..." per layer of the profile hook
 * against the files' result, and the deciding one: the last layer that changed the profile,
 * else the top file. Every key is credited to the file or layer that set it. */
static void print_profile(const struct lh_explanation *files, const struct lh_explanation *ex,
                          const char *profile)
{
    if (ex->n == 0) {
        print_empty(ex, "profile", "");
        return;
    }
    printf("profile %s\n", profile);
    if (files->n == 0 && files->error[0])
        printf("files: cannot list: %s\n", files->error);
    for (int i = 0; i < files->n; i++) {
        printf("file %s  %s", files->layer[i].where, i == 0 ? "sets:" : "changed:");
        print_keys(&files->layer[i].changed);
    }
    for (int i = 0; i < ex->n; i++) {
        const struct lh_explain_layer *l = &ex->layer[i];
        if (l->outcome != LH_OK) {
            printf("%d. %s  policy error (%s): %s\n", i + 1, l->where, lh_outcome_name(l->outcome),
                   l->error);
            continue;
        }
        printf("%d. %s  %s", i + 1, l->where, i == 0 && files->n == 0 ? "sets:" : "changed:");
        print_keys(&l->changed);
    }
    const struct lh_explain_layer *d = &ex->layer[ex->decided];
    if (files->n > 0 && ex->decided == 0 && d->outcome == LH_OK && d->changed.len == 0)
        printf("decided by: %s (the profile file; no policy layer changed it)\n",
               files->layer[files->n - 1].where);
    else
        print_decided_by(ex, ": the last layer that changed the profile");
}

/* "write /etc/x, hidden /root" or "no refusal". */
static void print_refusal_list(const struct lh_refusal *r, size_t n)
{
    if (n == 0)
        fputs("no refusal", stdout);
    for (size_t i = 0; i < n; i++)
        printf("%s%s%s%s", i ? ", " : "", r[i].kind, r[i].path[0] ? " " : "", r[i].path);
}

/* "N. file:line  KIND PATH, ..." per layer, the top layer's list, the deciding layer. */
static void print_refusals(const struct lh_explanation *ex)
{
    if (ex->n == 0) {
        print_empty(ex, "refusal", ": no refusal");
        return;
    }
    for (int i = 0; i < ex->n; i++) {
        const struct lh_explain_layer *l = &ex->layer[i];
        printf("%d. %s  ", i + 1, l->where);
        if (l->outcome == LH_OK) {
            print_refusal_list(l->refusals, l->n_refusals);
            putchar('\n');
        } else {
            /* as lh_detect_refusals: a failed detector reports no refusal */
            printf("no refusal  policy error (%s): %s\n", lh_outcome_name(l->outcome), l->error);
        }
    }
    const struct lh_explain_layer *t = &ex->layer[ex->n - 1];
    fputs("refusals: ", stdout);
    print_refusal_list(t->refusals, t->n_refusals);
    putchar('\n');
    print_decided_by(ex, "");
}

/* ---- the declared credentials: names, sources and hosts (never a value: none is read) ---- */

/* The credentials a sandbox of these flags would have, "NAME\tFROM\tHOST,HOST": the profile's
 * (cfg: its `credentials` key) but those a --credential flag replaces, then the flags'. */
static struct str_list explain_creds;

static void collect_credentials(const struct sandbox_config *cfg, const struct run_flags *flags)
{
    for (size_t i = 0; cfg && i < cfg->credentials.len; i++) {
        const char *e = cfg->credentials.items[i];
        size_t n = strcspn(e, "\t");
        bool by_flag = false;
        for (size_t k = 0; k < flags->credentials.len; k++)
            by_flag = by_flag || (strncmp(flags->credentials.items[k], e, n) == 0 &&
                                  flags->credentials.items[k][n] == '=');
        if (!by_flag)
            str_list_push(&explain_creds, e);
    }
    for (size_t k = 0; k < flags->credentials.len; k++) {
        const char *s = flags->credentials.items[k], *eq = strchr(s, '=');
        if (eq && eq > s)
            str_list_push_owned(&explain_creds, xasprintf("%.*s\t$%.*s\t%s", (int)(eq - s), s,
                                                          (int)(eq - s), s, eq + 1));
    }
}

/* Entry e's three fields, borrowed into the caller's buffer. */
static void cred_fields(const char *e, char *buf, size_t cap, const char **name, const char **from,
                        const char **hosts)
{
    snprintf(buf, cap, "%s", e);
    char *t1 = strchr(buf, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    *name = buf;
    *from = *hosts = "";
    if (t2) {
        *t1 = *t2 = 0;
        *from = t1 + 1;
        *hosts = t2 + 1;
    }
}

/* Does entry e's credential go to host:port? (its host rules, as the proxy reads them) */
static bool cred_goes_to(const char *name, const char *hosts, const char *host, int port)
{
    struct str_list l = {0};
    for (const char *h = hosts; *h;) {
        size_t n = strcspn(h, ",");
        str_list_push_owned(&l, xasprintf("%.*s", (int)n, h));
        h += n + (h[n] == ',');
    }
    struct cred_set *set = cred_set_new();
    char why[256];
    bool yes = set &&
               cred_set_add(set, name, "cordon_explain_placeholder", "x",
                            (const char *const *)l.items, l.len, why, sizeof why) == 0 &&
               cred_set_matches_host(set, host, port);
    cred_set_free(set);
    str_list_free(&l);
    return yes;
}

/* "credential NAME  from FROM  to HOST, HOST" per credential (nothing without any). With host,
 * what becomes of each there: its value put in, or its placeholder refused. */
static void print_credentials(const char *host, long port)
{
    for (size_t i = 0; i < explain_creds.len; i++) {
        char buf[4096];
        const char *name, *from, *hosts;
        cred_fields(explain_creds.items[i], buf, sizeof buf, &name, &from, &hosts);
        if (host)
            printf("credential %s  %s\n", name,
                   cred_goes_to(name, hosts, host, (int)port)
                       ? "its value is put in for its placeholder here"
                       : "its placeholder is refused here (403)");
        else
            printf("credential %s  from %s  to %s\n", name, from, hosts);
    }
}

/* ,"credentials":[{"name","from","hosts":[...]}, with host also "here": "value" | "refused"] */
static void json_credentials(const char *host, long port)
{
    fputs(",\"credentials\":[", stdout);
    for (size_t i = 0; i < explain_creds.len; i++) {
        char buf[4096];
        const char *name, *from, *hosts;
        cred_fields(explain_creds.items[i], buf, sizeof buf, &name, &from, &hosts);
        fputs(i ? ",{\"name\":" : "{\"name\":", stdout);
        json_write_string(stdout, name);
        fputs(",\"from\":", stdout);
        json_write_string(stdout, from);
        fputs(",\"hosts\":[", stdout);
        for (const char *h = hosts; *h;) {
            size_t n = strcspn(h, ",");
            if (h != hosts)
                fputc(',', stdout);
            json_write_stringn(stdout, h, n);
            h += n + (h[n] == ',');
        }
        fputc(']', stdout);
        if (host)
            printf(",\"here\":\"%s\"",
                   cred_goes_to(name, hosts, host, (int)port) ? "value" : "refused");
        fputc('}', stdout);
    }
    fputc(']', stdout);
}

/* ---- --json: one object per explanation, the same facts as the lines above ---------------- */

static void jstr(const char *key, const char *v, bool comma)
{
    printf("%s\"%s\":", comma ? "," : "", key);
    if (v && v[0])
        json_write_string(stdout, v);
    else
        fputs("null", stdout);
}

/* A layer's "where" and, when it failed, "error" {"outcome", "message"} (else null). */
static void json_layer_head(const struct lh_explain_layer *l)
{
    jstr("where", l->where, false);
    if (l->outcome == LH_OK) {
        fputs(",\"error\":null", stdout);
    } else {
        printf(",\"error\":{\"outcome\":\"%s\"", lh_outcome_name(l->outcome));
        jstr("message", l->error, true);
        fputc('}', stdout);
    }
}

/* "layers" has been written: "decided_by" {"file", "layer" (1-based)} or null, and "error"
 * (why nothing could be explained) or null; closes the object. */
static void json_tail(const struct lh_explanation *ex)
{
    if (ex->n > 0) {
        const char *w = ex->layer[ex->decided].where;
        fputs(",\"decided_by\":{\"file\":", stdout);
        json_write_stringn(stdout, w, (size_t)where_file_len(w));
        printf(",\"layer\":%d}", ex->decided + 1);
    } else {
        fputs(",\"decided_by\":null", stdout);
    }
    jstr("error", ex->error, true);
    fputs("}\n", stdout);
}

static const char *net_verdict(const struct lh_explain_layer *l)
{
    return l->outcome != LH_OK ? "deny" : l->net.allow ? "allow" : l->net.ask ? "ask" : "deny";
}

static void json_network(const struct lh_explanation *ex, const char *kind, const char *host,
                         long port, const char *profile)
{
    fputs("{\"explain\":\"network\",\"kind\":", stdout);
    json_write_string(stdout, kind);
    fputs(",\"host\":", stdout);
    json_write_string(stdout, host);
    printf(",\"port\":%ld,\"profile\":", port);
    json_write_string(stdout, profile);
    fputs(",\"layers\":[", stdout);
    for (int i = 0; i < ex->n; i++) {
        const struct lh_explain_layer *l = &ex->layer[i];
        fputs(i ? ",{" : "{", stdout);
        json_layer_head(l);
        printf(",\"verdict\":\"%s\"", net_verdict(l));
        jstr("rule", l->outcome == LH_OK ? l->net.rule : NULL, true);
        jstr("reason", l->outcome == LH_OK ? l->net.reason : NULL, true);
        fputc('}', stdout);
    }
    printf("],\"decision\":\"%s\"", ex->n ? net_verdict(&ex->layer[ex->n - 1]) : "deny");
    json_credentials(host, port);
    json_tail(ex);
}

static void json_keys(const struct str_list *keys)
{
    fputc('[', stdout);
    for (size_t k = 0; k < keys->len; k++) {
        if (k)
            fputc(',', stdout);
        json_write_string(stdout, keys->items[k]);
    }
    fputc(']', stdout);
}

/* As print_profile: the profile's files ("files": [{"file", "changed"}], "files_error"),
 * then the policy layers; decided_by is the last file when no layer changed the profile. */
static void json_profile(const struct lh_explanation *files, const struct lh_explanation *ex,
                         const char *profile)
{
    fputs("{\"explain\":\"profile\",\"profile\":", stdout);
    json_write_string(stdout, profile);
    fputs(",\"files\":[", stdout);
    for (int i = 0; i < files->n; i++) {
        fputs(i ? ",{\"file\":" : "{\"file\":", stdout);
        json_write_string(stdout, files->layer[i].where);
        fputs(",\"changed\":", stdout);
        json_keys(&files->layer[i].changed);
        fputc('}', stdout);
    }
    fputc(']', stdout);
    jstr("files_error", files->n == 0 ? files->error : NULL, true);
    fputs(",\"layers\":[", stdout);
    for (int i = 0; i < ex->n; i++) {
        const struct lh_explain_layer *l = &ex->layer[i];
        fputs(i ? ",{" : "{", stdout);
        json_layer_head(l);
        fputs(",\"changed\":", stdout);
        if (l->outcome == LH_OK)
            json_keys(&l->changed);
        else
            fputs("[]", stdout);
        fputc('}', stdout);
    }
    fputc(']', stdout);
    json_credentials(NULL, 0);
    const struct lh_explain_layer *d = ex->n ? &ex->layer[ex->decided] : NULL;
    if (files->n > 0 && d && ex->decided == 0 && d->outcome == LH_OK && d->changed.len == 0) {
        const char *w = files->layer[files->n - 1].where;
        fputs(",\"decided_by\":{\"file\":", stdout);
        json_write_string(stdout, w);
        fputs(",\"layer\":null}", stdout);
        jstr("error", ex->error, true);
        fputs("}\n", stdout);
        return;
    }
    json_tail(ex);
}

static void json_refusal_list(const struct lh_refusal *r, size_t n)
{
    fputc('[', stdout);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{" : "{", stdout);
        jstr("kind", r[i].kind, false);
        jstr("path", r[i].path, true);
        jstr("reason", r[i].reason, true);
        fputc('}', stdout);
    }
    fputc(']', stdout);
}

static void json_refusals(const struct lh_explanation *ex, const struct detect_case *c,
                          const char *profile)
{
    fputs("{\"explain\":\"refusal\",\"command\":", stdout);
    json_write_string(stdout, c->command);
    printf(",\"exit_code\":%d,\"profile\":", c->exit_code);
    json_write_string(stdout, profile);
    fputs(",\"layers\":[", stdout);
    for (int i = 0; i < ex->n; i++) {
        const struct lh_explain_layer *l = &ex->layer[i];
        fputs(i ? ",{" : "{", stdout);
        json_layer_head(l);
        fputs(",\"refusals\":", stdout);
        json_refusal_list(l->refusals, l->outcome == LH_OK ? l->n_refusals : 0);
        fputc('}', stdout);
    }
    fputs("],\"refusals\":", stdout);
    const struct lh_explain_layer *t = ex->n ? &ex->layer[ex->n - 1] : NULL;
    json_refusal_list(t ? t->refusals : NULL, t && t->outcome == LH_OK ? t->n_refusals : 0);
    json_tail(ex);
}

/* A recorded command result (policy detect's case format) through each layer's `refusal`
 * chain. The Lua host is open. Exit code: 0, 1 when the top layer failed, 125 bad case. */
static int explain_refusals(const char *input, const char *profile, const char *cwd, bool json)
{
    char err[2048];
    size_t len = 0;
    int rc = CORDON_EXIT_SETUP;
    struct detect_case c = {0};
    struct json_value *root = NULL;
    char *text = detect_read_file(input, &len);
    if (!text) {
        fprintf(stderr, "cordon: policy explain: %s: %s\n", input, strerror(errno));
        goto out;
    }
    if (!(root = json_parse(text, len, err, sizeof err))) {
        fprintf(stderr, "cordon: policy explain: %s: malformed JSON at %s\n", input, err);
        goto out;
    }
    if (detect_case_read(root, &c, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: policy explain: %s: %s\n", input, err);
        goto out;
    }
    if (detect_case_prepare(&c, profile, cwd, err, sizeof err) != LH_OK) {
        fprintf(stderr, "cordon: policy explain: %s\n", err);
        rc = 1;
        goto out;
    }
    struct lh_explanation ex;
    detect_case_host(&c, true);
    enum lh_outcome o = lh_explain_refusals(&c.in, &ex);
    detect_case_host(&c, false);
    if (json) {
        json_refusals(&ex, &c, profile ? profile : "coding");
    } else {
        printf("refusal %s (exit %d, profile %s)\n", c.command, c.exit_code,
               profile ? profile : "coding");
        print_refusals(&ex);
    }
    lh_explanation_free(&ex);
    rc = o == LH_OK ? 0 : 1; /* as the controller: a failed detector reports no refusal */
out:
    detect_case_free(&c);
    json_free(root);
    free(text);
    return rc;
}

#define USAGE                                                                               \
    "usage: cordon policy explain [--kind http|connect|socks] HOST PORT [--allow RULE]... " \
    "[--deny RULE]... [--profile NAME] [--policy FILE] | --profile NAME [--policy FILE] | " \
    "--input CASE.json [--profile NAME] [--policy FILE] | --help; each takes --json, and "  \
    "--credential NAME=HOST[,HOST...] (as cordon run) to see where credentials may go"

int policy_explain_main(int argc, char **argv)
{
    struct run_flags flags = {.unrestricted_network = FLAG_UNSET,
                              .allow_loopback = FLAG_UNSET,
                              .allow_docker = FLAG_UNSET,
                              .json = FLAG_UNSET};
    const char *kind_s = "connect", *pos[2] = {NULL, NULL}, *input = NULL;
    int npos = 0, rc = CORDON_EXIT_SETUP;
    bool opened = false, json = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        bool missing = false;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf(USAGE "\n");
            rc = 0;
            goto out;
        }
        if (a[0] == '-' && a[1] == '-') {
            if (strcmp(a, "--json") == 0)
                json = true;
            else if ((v = cli_opt_value(argc, argv, &i, "--allow", &missing)))
                str_list_push(&flags.network_allow, v);
            else if ((v = cli_opt_value(argc, argv, &i, "--deny", &missing)))
                str_list_push(&flags.network_deny, v);
            else if ((v = cli_opt_value(argc, argv, &i, "--kind", &missing)))
                kind_s = v;
            else if ((v = cli_opt_value(argc, argv, &i, "--profile", &missing)))
                flags.profile = v;
            else if ((v = cli_opt_value(argc, argv, &i, "--policy", &missing)))
                flags.policy_file = v;
            else if ((v = cli_opt_value(argc, argv, &i, "--input", &missing)))
                input = v;
            else if ((v = cli_opt_value(argc, argv, &i, "--credential", &missing)))
                str_list_push(&flags.credentials, v);
            else {
                fprintf(stderr, "cordon: policy explain: %s '%s' (" USAGE ")\n",
                        missing ? "missing value for" : "unknown option", a);
                goto out;
            }
        } else if (npos < 2) {
            pos[npos++] = a;
        } else {
            fprintf(stderr, "cordon: policy explain: too many arguments (" USAGE ")\n");
            goto out;
        }
    }
    if (input && npos) {
        fprintf(stderr, "cordon: policy explain: --input takes no HOST PORT (" USAGE ")\n");
        goto out;
    }
    if (!input && (npos == 1 || (npos == 0 && !flags.profile))) {
        fprintf(stderr,
                "cordon: policy explain: expected HOST PORT or --profile NAME (" USAGE ")\n");
        goto out;
    }
    enum net_kind kind = NET_KIND_CONNECT;
    long port = 0;
    if (npos == 2) {
        if (strcmp(kind_s, "http") == 0)
            kind = NET_KIND_HTTP;
        else if (strcmp(kind_s, "connect") == 0)
            kind = NET_KIND_CONNECT;
        else if (strcmp(kind_s, "socks") == 0)
            kind = NET_KIND_SOCKS;
        else {
            fprintf(stderr,
                    "cordon: policy explain: invalid --kind '%s' (http, connect or socks)\n",
                    kind_s);
            goto out;
        }
        char *end = NULL;
        port = strtol(pos[1], &end, 10);
        if (!*pos[1] || *end || pos[1][0] < '0' || pos[1][0] > '9' || port < 1 || port > 65535) {
            fprintf(stderr, "cordon: policy explain: invalid port '%s' (1..65535)\n", pos[1]);
            goto out;
        }
    }

    char cwd[PATH_MAX], err[1024];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "/");
    struct lh_options opt;
    layer_dirs_default(&opt);
    layer_dirs_add_project(&opt, cwd);
    opt.extra_policy = flags.policy_file;
    if (lh_open(&opt, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: policy explain: %s\n", err);
        rc = 1;
        goto out;
    }
    opened = true;
    if (input) {
        rc = explain_refusals(input, flags.profile, cwd, json);
        goto out;
    }
    struct lh_explanation ex;
    if (npos == 0) {
        struct sandbox_config pcfg;
        if (lh_resolve_sandbox(&flags, "/", NULL, environ, &pcfg, err, sizeof err) == LH_OK) {
            collect_credentials(&pcfg, &flags);
            sandbox_config_free(&pcfg);
        } else {
            collect_credentials(NULL, &flags); /* the explanation below says what failed */
        }
        struct lh_explanation files;
        rc = lh_explain_profile_layers(&flags, &files, &ex) == LH_OK ? 0 : 1;
        if (json)
            json_profile(&files, &ex, flags.profile ? flags.profile : "coding");
        else
            print_profile(&files, &ex, flags.profile ? flags.profile : "coding");
        if (!json)
            print_credentials(NULL, 0);
        lh_explanation_free(&files);
        lh_explanation_free(&ex);
        goto out;
    }
    struct sandbox_config cfg;
    if (lh_resolve_sandbox(&flags, "/", NULL, environ, &cfg, err, sizeof err) != LH_OK) {
        fprintf(stderr, "cordon: policy explain: %s\n", err);
        rc = 1;
        goto out;
    }
    collect_credentials(&cfg, &flags);
    sandbox_config_free(&cfg);
    enum lh_outcome o = lh_explain_network(kind, pos[0], (unsigned)port, &ex);
    if (json) {
        json_network(&ex, kind_s, pos[0], port, flags.profile ? flags.profile : "coding");
    } else {
        printf("network %s %s:%ld (profile %s)\n", kind_s, pos[0], port,
               flags.profile ? flags.profile : "coding");
        print_network(&ex);
        print_credentials(pos[0], port);
    }
    /* allowed only when every step succeeded: fail closed, as the proxy does */
    rc = o == LH_OK && ex.n > 0 && ex.layer[ex.n - 1].net.allow ? 0 : 1;
    lh_explanation_free(&ex);
out:
    if (opened)
        lh_close();
    str_list_free(&flags.network_allow);
    str_list_free(&flags.network_deny);
    str_list_free(&flags.credentials);
    str_list_free(&explain_creds);
    return rc;
}
