/* policy_test.c — see policy_test.h. Case files:
 *   { "network":  [ { "kind": "connect", "host": "h", "port": 443, "expect": "allow",
 *                     "profile": "coding" (optional) } ],
 *     "profiles": [ { "name": "web", "expect": { "seccomp.block_unix_sockets": true } } ],
 *     "refusals": [ { "input": { <a recorded result, as for policy detect> },
 *                     "expect": { "kinds": ["write", ...] } | { "none": true },
 *                     "profile": "coding" (optional) } ] }
 * Values are compared as compact JSON, both sides rendered here (an absent key is null); the
 * kinds of a refusal case as a multiset (order-free). */
#include "cli/policy_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/log.h"
#include "policy/layer_dirs.h"
#include "base/json_read.h"
#include "base/json_write.h"
#include "policy/lua_host.h"
#include "cli/policy_detect.h"
#include "sandbox/sandbox_config.h"
#include "base/util.h"

extern char **environ;

#define CASE_FILE_MAX (4 << 20)
#define SYNOPSIS "cordon policy test [--json] [DIR]"

struct tally {
    int passed, failed;
    struct str_list *lines; /* --json: each failure's line, collected instead of printed */
};

/* One failure line: printed, or kept for --json. */
static void say(struct tally *t, const char *fmt, ...) CORDON_PRINTF(2, 3);
static void say(struct tally *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = NULL;
    if (vasprintf(&line, fmt, ap) < 0)
        line = NULL;
    va_end(ap);
    if (!line)
        die("out of memory");
    if (t->lines) {
        str_list_push_owned(t->lines, line);
        return;
    }
    puts(line);
    free(line);
}

static void render_to(FILE *f, const struct json_value *v)
{
    switch (v->type) {
    case JSON_NULL:
        fputs("null", f);
        return;
    case JSON_BOOL:
        fputs(v->boolean ? "true" : "false", f);
        return;
    case JSON_NUMBER:
        if (v->number == floor(v->number) && fabs(v->number) < 1e15)
            fprintf(f, "%lld", (long long)v->number);
        else
            fprintf(f, "%.17g", v->number);
        return;
    case JSON_STRING:
        json_write_stringn(f, v->str, v->len);
        return;
    case JSON_ARRAY:
        fputc('[', f);
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                fputc(',', f);
            render_to(f, &v->items[i]);
        }
        fputc(']', f);
        return;
    case JSON_OBJECT: {
        if (v->len == 0) {
            fputs("[]", f); /* an empty Lua table reads as an empty list */
            return;
        }
        size_t *order = xcalloc(v->len, sizeof *order);
        for (size_t i = 0; i < v->len; i++)
            order[i] = i;
        for (size_t i = 1; i < v->len; i++) /* insertion sort by key: objects are small */
            for (size_t j = i; j > 0 && strcmp(v->keys[order[j - 1]], v->keys[order[j]]) > 0; j--) {
                size_t t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        fputc('{', f);
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                fputc(',', f);
            json_write_string(f, v->keys[order[i]]);
            fputc(':', f);
            render_to(f, &v->items[order[i]]);
        }
        fputc('}', f);
        free(order);
        return;
    }
    }
}

/* v as compact JSON (keys sorted, strings escaped by json_write), in a new string (*s, *len). */
static void render(const struct json_value *v, char **s, size_t *len)
{
    FILE *f = open_memstream(s, len);
    if (!f)
        return;
    render_to(f, v);
    fclose(f);
}

static const char *str_member(const struct json_value *o, const char *key)
{
    const struct json_value *v = json_get(o, key);
    return v && v->type == JSON_STRING ? v->str : NULL;
}

static void fail(struct tally *t, const char *fmt, ...) CORDON_PRINTF(2, 3);
static void fail(struct tally *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = NULL;
    if (vasprintf(&line, fmt, ap) < 0)
        line = NULL;
    va_end(ap);
    if (!line)
        die("out of memory");
    say(t, "%s", line);
    free(line);
    t->failed++;
}

static enum lh_outcome resolve(const char *profile, const char *root, char *err, size_t errlen)
{
    struct run_flags flags = {.profile = profile,
                              .unrestricted_network = FLAG_UNSET,
                              .allow_loopback = FLAG_UNSET,
                              .allow_docker = FLAG_UNSET,
                              .json = FLAG_UNSET};
    struct sandbox_config cfg;
    enum lh_outcome o = lh_resolve_sandbox(&flags, root, NULL, environ, &cfg, err, errlen);
    if (o == LH_OK)
        sandbox_config_free(&cfg);
    return o;
}

static void run_network(const char *file, const struct json_value *list, const char *root,
                        struct tally *t)
{
    for (size_t i = 0; i < list->len; i++) {
        const struct json_value *c = &list->items[i];
        const char *kind_s = str_member(c, "kind"), *host = str_member(c, "host");
        const char *expect = str_member(c, "expect"), *profile = str_member(c, "profile");
        const struct json_value *port = json_get(c, "port");
        if (!kind_s)
            kind_s = "connect";
        enum net_kind kind = NET_KIND_CONNECT;
        bool kind_ok = true;
        if (strcmp(kind_s, "http") == 0)
            kind = NET_KIND_HTTP;
        else if (strcmp(kind_s, "socks") == 0)
            kind = NET_KIND_SOCKS;
        else if (strcmp(kind_s, "connect") != 0)
            kind_ok = false;
        if (c->type != JSON_OBJECT || !host || !expect || !kind_ok || !port ||
            port->type != JSON_NUMBER || !port->is_integer || port->number < 1 ||
            port->number > 65535 ||
            (strcmp(expect, "allow") && strcmp(expect, "deny") && strcmp(expect, "ask"))) {
            fail(t,
                 "%s: network[%zu]: needs host, port 1..65535, expect allow|deny|ask and kind "
                 "http|connect|socks",
                 file, i);
            continue;
        }
        char err[1024];
        if (resolve(profile, root, err, sizeof err) != LH_OK) {
            fail(t, "%s: network[%zu]: profile %s: %s", file, i, profile ? profile : "coding", err);
            continue;
        }
        struct net_decision d;
        enum lh_outcome o = lh_network_decide(kind, host, (unsigned)port->number, NULL, &d);
        const char *got = o != LH_OK ? "deny" : d.allow ? "allow" : d.ask ? "ask" : "deny";
        if (strcmp(got, expect) == 0)
            t->passed++;
        else
            fail(t, "%s: network[%zu]: %s %s:%u: expected %s, got %s (%s)", file, i, kind_s, host,
                 (unsigned)port->number, expect, got, d.reason[0] ? d.reason : "no reason given");
    }
}

static void run_profiles(const char *file, const struct json_value *list, const char *root,
                         struct tally *t)
{
    for (size_t i = 0; i < list->len; i++) {
        const struct json_value *c = &list->items[i];
        const char *name = str_member(c, "name");
        const struct json_value *expect = json_get(c, "expect");
        if (c->type != JSON_OBJECT || !name || !expect || expect->type != JSON_OBJECT) {
            fail(t, "%s: profiles[%zu]: needs name and an expect object", file, i);
            continue;
        }
        char err[1024];
        if (resolve(name, root, err, sizeof err) != LH_OK) {
            fail(t, "%s: profiles[%zu] %s: %s", file, i, name, err);
            continue;
        }
        bool ok = true;
        for (size_t k = 0; k < expect->len; k++) {
            char got[4096];
            char *want = NULL;
            size_t wl = 0;
            render(&expect->items[k], &want, &wl);
            if (!lh_profile_value(expect->keys[k], got, sizeof got))
                snprintf(got, sizeof got, "(unreadable)");
            /* Both sides through the same renderer: the comparison must not depend on how
             * lh_profile_value escapes its strings. */
            char *canon = NULL, jerr[64];
            size_t cl = 0;
            struct json_value *gv = json_parse(got, strlen(got), jerr, sizeof jerr);
            if (gv)
                render(gv, &canon, &cl);
            json_free(gv);
            const char *have = canon ? canon : got;
            if (!want || strcmp(want, have) != 0) {
                say(t, "%s: profiles[%zu] %s: %s: expected %s, got %s", file, i, name,
                    expect->keys[k], want ? want : "?", have);
                ok = false;
            }
            free(canon);
            free(want);
        }
        if (ok)
            t->passed++;
        else
            t->failed++;
    }
}

#define MAX_CASE_REFUSALS 32

/* The expected kinds of a refusal case, sorted, into want; false when expect is malformed. */
static bool expected_kinds(const struct json_value *expect, struct str_list *want)
{
    if (!expect || expect->type != JSON_OBJECT || expect->len != 1)
        return false;
    const struct json_value *none = json_get(expect, "none"), *kinds = json_get(expect, "kinds");
    if (none)
        return none->type == JSON_BOOL && none->boolean;
    if (!kinds || kinds->type != JSON_ARRAY)
        return false;
    for (size_t k = 0; k < kinds->len; k++) {
        if (kinds->items[k].type != JSON_STRING)
            return false;
        str_list_push(want, kinds->items[k].str);
    }
    str_list_sort(want);
    return true;
}

static void join_kinds(const struct str_list *l, char *out, size_t outlen)
{
    size_t o = 0;
    out[0] = '\0';
    if (l->len == 0)
        snprintf(out, outlen, "none");
    for (size_t i = 0; i < l->len && o < outlen; i++)
        o += (size_t)snprintf(out + o, outlen - o, "%s%s", i ? "," : "", l->items[i]);
}

static void run_refusals(const char *file, const struct json_value *list, const char *root,
                         struct tally *t)
{
    for (size_t i = 0; i < list->len; i++) {
        const struct json_value *c = &list->items[i];
        const struct json_value *input = c->type == JSON_OBJECT ? json_get(c, "input") : NULL;
        const struct json_value *pv = c->type == JSON_OBJECT ? json_get(c, "profile") : NULL;
        const char *profile = str_member(c, "profile");
        struct str_list want = {0}, got = {0};
        struct detect_case dc = {0};
        char err[1024], ws[1024], gs[1024];
        bool shape = c->type == JSON_OBJECT && input && (!pv || profile);
        for (size_t k = 0; shape && k < c->len; k++)
            shape = !strcmp(c->keys[k], "input") || !strcmp(c->keys[k], "expect") ||
                    !strcmp(c->keys[k], "profile");
        if (!shape || !expected_kinds(json_get(c, "expect"), &want)) {
            fail(t,
                 "%s: refusals[%zu]: needs \"input\" (a recorded result) and \"expect\": "
                 "{\"kinds\": [...]} or {\"none\": true}",
                 file, i);
            goto next;
        }
        if (detect_case_read(input, &dc, err, sizeof err) < 0) {
            fail(t, "%s: refusals[%zu]: input: %s", file, i, err);
            goto next;
        }
        if (detect_case_prepare(&dc, profile, root, err, sizeof err) != LH_OK) {
            fail(t, "%s: refusals[%zu]: profile %s: %s", file, i, profile ? profile : "coding",
                 err);
            goto next;
        }
        struct lh_refusal r[MAX_CASE_REFUSALS];
        size_t n = 0;
        detect_case_host(&dc, true);
        enum lh_outcome o = lh_detect_refusals(&dc.in, r, MAX_CASE_REFUSALS, &n, err, sizeof err);
        detect_case_host(&dc, false);
        if (o != LH_OK) {
            fail(t, "%s: refusals[%zu]: %s: refusal hook failed: %s", file, i, dc.command, err);
            goto next;
        }
        for (size_t k = 0; k < n; k++)
            str_list_push(&got, r[k].kind);
        str_list_sort(&got);
        bool same = want.len == got.len;
        for (size_t k = 0; same && k < want.len; k++)
            same = strcmp(want.items[k], got.items[k]) == 0;
        join_kinds(&want, ws, sizeof ws);
        join_kinds(&got, gs, sizeof gs);
        if (same)
            t->passed++;
        else
            fail(t, "%s: refusals[%zu]: %s: expected %s, got %s", file, i, dc.command, ws, gs);
    next:
        detect_case_free(&dc);
        str_list_free(&want);
        str_list_free(&got);
    }
}

/* Read and parse one case file. NULL with the message printed (exit 125 follows). */
static struct json_value *read_case_file(const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = read_file(path, O_NOFOLLOW, CASE_FILE_MAX, &buf, &len);
    if (rc == -EFBIG) {
        fprintf(stderr, "cordon: policy test: %s: larger than %d bytes\n", path, CASE_FILE_MAX);
        return NULL;
    }
    if (rc < 0) {
        fprintf(stderr, "cordon: policy test: %s: %s\n", path, strerror(-rc));
        return NULL;
    }
    char err[256];
    struct json_value *v = NULL;
    if (!(v = json_parse(buf, len, err, sizeof err)))
        fprintf(stderr, "cordon: policy test: %s: %s\n", path, err);
    free(buf);
    return v;
}

/* Check the top-level shape; false with the message printed. */
static bool valid_shape(const char *path, const struct json_value *v)
{
    if (v->type != JSON_OBJECT) {
        fprintf(stderr,
                "cordon: policy test: %s: expected an object with network, profiles, refusals\n",
                path);
        return false;
    }
    for (size_t i = 0; i < v->len; i++) {
        const char *k = v->keys[i];
        if (strcmp(k, "network") && strcmp(k, "profiles") && strcmp(k, "refusals")) {
            fprintf(
                stderr,
                "cordon: policy test: %s: unknown key \"%s\" (known: network, profiles, refusals)\n",
                path, k);
            return false;
        }
        if (v->items[i].type != JSON_ARRAY) {
            fprintf(stderr, "cordon: policy test: %s: \"%s\" must be an array\n", path, k);
            return false;
        }
    }
    return true;
}

static void usage(void)
{
    fputs(
        "usage: " SYNOPSIS "\n"
        "Run the project's own policy cases, DIR/.cordon/tests/*.json (default: the current\n"
        "directory), against the layers cordon run would load, the project's as if trusted.\n"
        "Exit 0 when every case passed, 1 when one failed, 125 for bad usage or a bad case file.\n"
        "--json: one JSON object, {\"passed\", \"failed\", \"failures\": [\"line\", ...]}.\n",
        stdout);
}

int policy_test_main(int argc, char **argv)
{
    const char *dir = ".";
    int ndirs, status;
    bool json = false;
    struct str_list failures = {0};
    const struct cli_flag flags[] = {{"--json", &json}};
    if (cli_wants_help(argc, argv)) {
        usage();
        return 0;
    }
    if ((status = cli_read_words(argc, argv, "policy test", SYNOPSIS, flags, ARRAY_LEN(flags), &dir,
                                 1, &ndirs)) >= 0)
        return status;
    char *root = realpath(dir, NULL);
    if (!root) {
        fprintf(stderr, "cordon: policy test: %s: %s\n", dir, strerror(errno));
        return CORDON_EXIT_SETUP;
    }
    char *pdir = xasprintf("%s/.cordon", root);
    char *tdir = xasprintf("%s/tests", pdir);
    struct str_list files = {0};
    struct json_value **docs = NULL;
    struct tally t = {0, 0, json ? &failures : NULL};
    int rc = CORDON_EXIT_SETUP;
    bool opened = false;

    DIR *d = opendir(tdir);
    if (!d && errno != ENOENT) {
        fprintf(stderr, "cordon: policy test: %s: %s\n", tdir, strerror(errno));
        goto out;
    }
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] != '.' && l > 5 && strcmp(e->d_name + l - 5, ".json") == 0)
            str_list_push_owned(&files, xasprintf("%s/%s", tdir, e->d_name));
    }
    if (d)
        closedir(d);
    str_list_sort(&files);
    /* Parse every file before deciding anything: a bad file is exit 125, not a failure. */
    docs = xcalloc(files.len + 1, sizeof *docs);
    for (size_t i = 0; i < files.len; i++)
        if (!(docs[i] = read_case_file(files.items[i])) || !valid_shape(files.items[i], docs[i]))
            goto out;

    struct lh_options opt;
    char err[1024];
    layer_dirs_default(&opt);
    opt.project_dir = pdir; /* as if trusted: these are the project's own cases */
    if (lh_open(&opt, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: policy test: %s\n", err);
        rc = CORDON_EXIT_SETUP;
        goto out;
    }
    opened = true;
    if (!files.len && !json)
        printf("no test cases in %s (files tests/*.json)\n", pdir);
    for (size_t i = 0; i < files.len; i++) {
        const char *rel = files.items[i] + strlen(root) + 1;
        const struct json_value *v;
        if ((v = json_get(docs[i], "network")))
            run_network(rel, v, root, &t);
        if ((v = json_get(docs[i], "profiles")))
            run_profiles(rel, v, root, &t);
        if ((v = json_get(docs[i], "refusals")))
            run_refusals(rel, v, root, &t);
    }
    if (json) {
        printf("{\"passed\":%d,\"failed\":%d,\"failures\":[", t.passed, t.failed);
        for (size_t i = 0; i < failures.len; i++) {
            if (i)
                fputc(',', stdout);
            json_write_string(stdout, failures.items[i]);
        }
        fputs("]}\n", stdout);
    } else {
        printf("%d passed, %d failed\n", t.passed, t.failed);
    }
    rc = t.failed ? 1 : 0;
out:
    str_list_free(&failures);
    if (opened)
        lh_close();
    for (size_t i = 0; docs && i < files.len; i++)
        json_free(docs[i]);
    free(docs);
    str_list_free(&files);
    free(tdir);
    free(pdir);
    free(root);
    return rc;
}
