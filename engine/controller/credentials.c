/* credentials.c — see credentials.h. Reads the caller's environment and files, runs a
 * profile's cmd: source on the host; writes nothing. */
#include "controller/credentials.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "controller/credential_git.h"
#include "proxy/cred_rewrite.h"

#define CRED_VALUE_MAX (64 * 1024)
#define PLACEHOLDER_RANDOM 24 /* hex digits at least: 96 bits, unguessable and unique */

/* The first line of s (s is cut at its first CR or LF). */
static void first_line(char *s)
{
    s[strcspn(s, "\r\n")] = 0;
}

char *credential_read_value(const char *name, const char *from, char *err, size_t errlen)
{
    if (from[0] == '$') {
        const char *v = getenv(from + 1);
        if (!v || !*v) {
            snprintf(err, errlen, "credential %s: the variable %s is not set (or empty)", name,
                     from + 1);
            return NULL;
        }
        return xstrdup(v);
    }
    char *buf = NULL;
    size_t len = 0;
    if (strncmp(from, "file:", 5) == 0) {
        const char *path = from + 5, *home = getenv("HOME");
        char *expanded = NULL; /* "~/x": the caller's home */
        if (strncmp(path, "~/", 2) == 0 && home && home[0] == '/')
            path = expanded = xasprintf("%s%s", home, path + 1);
        int r = read_file(path, 0, CRED_VALUE_MAX, &buf, &len);
        if (r < 0)
            snprintf(err, errlen, "credential %s: cannot read %s: %s", name, path, strerror(-r));
        free(expanded);
        if (r < 0)
            return NULL;
    } else if (strncmp(from, "cmd:", 4) == 0) {
        FILE *p = popen(from + 4, "re");
        if (!p) {
            snprintf(err, errlen, "credential %s: cannot run '%s': %s", name, from + 4,
                     strerror(errno));
            return NULL;
        }
        buf = xmalloc(CRED_VALUE_MAX + 1);
        len = fread(buf, 1, CRED_VALUE_MAX, p);
        buf[len] = 0;
        int st = pclose(p);
        if (st != 0) {
            snprintf(err, errlen, "credential %s: '%s' failed (status %d)", name, from + 4, st);
            free(buf);
            return NULL;
        }
    } else {
        snprintf(err, errlen,
                 "credential %s: from '%s' is not \"$VAR\", \"file:PATH\" or \"cmd:COMMAND\"", name,
                 from);
        return NULL;
    }
    first_line(buf);
    if (!*buf) {
        snprintf(err, errlen, "credential %s: %s gave an empty value", name, from);
        free(buf);
        return NULL;
    }
    return buf;
}

/* "cordon_NAME_<hex>": as long as the value when the value is long enough (a body then keeps
 * its length when the proxy puts the value back), else PLACEHOLDER_RANDOM hex digits. */
static int make_placeholder(const char *name, size_t value_len, char *out, size_t cap)
{
    int k = snprintf(out, cap, "cordon_%s_", name);
    if (k < 0 || (size_t)k >= cap)
        return -1;
    size_t total = (size_t)k + PLACEHOLDER_RANDOM;
    if (value_len > total)
        total = value_len;
    if (total >= cap)
        return -1;
    unsigned char rnd[256];
    size_t need = (total - (size_t)k + 1) / 2;
    if (need > sizeof rnd || getrandom(rnd, need, 0) != (ssize_t)need)
        return -1;
    static const char hex[] = "0123456789abcdef";
    for (size_t i = (size_t)k, j = 0; i < total; i++, j++)
        out[i] = hex[(rnd[j / 2] >> (j % 2 ? 0 : 4)) & 15];
    out[total] = 0;
    return 0;
}

/* Every copy of value in env's items becomes placeholder; NAME= is set to it. */
static void put_placeholder(struct str_list *env, const char *name, const char *value,
                            const char *placeholder)
{
    size_t nl = strlen(name), vl = strlen(value);
    bool set = false;
    for (size_t i = 0; i < env->len; i++) {
        char *item = env->items[i];
        if (strncmp(item, name, nl) == 0 && item[nl] == '=') {
            free(item);
            env->items[i] = xasprintf("%s=%s", name, placeholder);
            set = true;
            continue;
        }
        char *eq = strchr(item, '=');
        if (vl < 8 || !eq || !strstr(eq + 1, value)) /* a short value is no token's */
            continue;
        /* another variable holds the value (GH_TOKEN and GITHUB_TOKEN alike) */
        size_t cap = strlen(item) / vl * strlen(placeholder) + strlen(item) + 1;
        char *nw = xmalloc(cap), *w = nw;
        for (const char *p = item; *p;) {
            const char *hit = p > eq ? strstr(p, value) : NULL;
            if (!hit) {
                if (p <= eq) {
                    size_t n = (size_t)(eq - p) + 1;
                    memcpy(w, p, n);
                    w += n;
                    p += n;
                    continue;
                }
                size_t n = strlen(p);
                memcpy(w, p, n);
                w += n;
                break;
            }
            memcpy(w, p, (size_t)(hit - p));
            w += hit - p;
            memcpy(w, placeholder, strlen(placeholder));
            w += strlen(placeholder);
            p = hit + vl;
        }
        *w = 0;
        explicit_bzero(item, strlen(item));
        free(item);
        env->items[i] = nw;
    }
    if (!set)
        str_list_push_owned(env, xasprintf("%s=%s", name, placeholder));
}

/* One credential: its value read from from, its placeholder made, added to set, put in env. */
static int add_one(struct cred_set *set, const char *name, const char *from, const char *hosts_csv,
                   const char *what, struct str_list *env, char *err, size_t errlen)
{
    struct str_list hosts = {0};
    for (const char *h = hosts_csv; *h;) {
        size_t n = strcspn(h, ",");
        if (n == 0) {
            snprintf(err, errlen, "%s: an empty host", what);
            str_list_free(&hosts);
            return -1;
        }
        str_list_push_owned(&hosts, xasprintf("%.*s", (int)n, h));
        h += n + (h[n] == ',');
    }
    if (hosts.len == 0) {
        snprintf(err, errlen, "%s: no host", what);
        return -1;
    }
    char *value = credential_read_value(name, from, err, errlen);
    if (!value) {
        str_list_free(&hosts);
        return -1;
    }
    char ph[600];
    int r = make_placeholder(name, strlen(value), ph, sizeof ph);
    if (r < 0)
        snprintf(err, errlen, "credential %s: cannot make its placeholder", name);
    else
        r = cred_set_add(set, name, ph, value, (const char *const *)hosts.items, hosts.len, err,
                         errlen);
    if (r == 0) {
        put_placeholder(env, name, value, ph);
        credential_git_helpers(env, ph, &hosts);
    }
    explicit_bzero(value, strlen(value));
    free(value);
    str_list_free(&hosts);
    return r;
}

/* The flag of spec names name (spec "NAME=..."). */
static bool spec_names(const char *spec, const char *name)
{
    size_t n = strlen(name);
    return strncmp(spec, name, n) == 0 && spec[n] == '=';
}

int credentials_prepare(const struct str_list *profile, const struct str_list *specs,
                        struct str_list *env, struct cred_set **out, char *err, size_t errlen)
{
    *out = NULL;
    size_t n_profile = profile ? profile->len : 0, n_specs = specs ? specs->len : 0;
    if (n_profile + n_specs == 0)
        return 0;
    struct cred_set *set = cred_set_new();
    if (!set) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n_profile; i++) {
        /* "NAME\tFROM\tHOST,HOST" */
        char *line = xstrdup(profile->items[i]);
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t2) {
            snprintf(err, errlen, "credentials: a malformed entry");
            free(line);
            goto fail;
        }
        *t1 = *t2 = 0;
        bool by_flag = false;
        for (size_t k = 0; k < n_specs; k++)
            by_flag = by_flag || spec_names(specs->items[k], line);
        char what[200];
        snprintf(what, sizeof what, "credentials.%s", line);
        int r = by_flag ? 0 : add_one(set, line, t1 + 1, t2 + 1, what, env, err, errlen);
        free(line);
        if (r < 0)
            goto fail;
    }
    for (size_t i = 0; i < n_specs; i++) {
        const char *spec = specs->items[i];
        const char *eq = strchr(spec, '=');
        char what[300];
        snprintf(what, sizeof what, "--credential '%.200s'", spec);
        if (!eq || eq == spec || !eq[1]) {
            snprintf(err, errlen, "%s: write NAME=HOST[,HOST...]", what);
            goto fail;
        }
        char name[128], from[140];
        if ((size_t)(eq - spec) >= sizeof name) {
            snprintf(err, errlen, "%s: the name is too long", what);
            goto fail;
        }
        memcpy(name, spec, (size_t)(eq - spec));
        name[eq - spec] = 0;
        snprintf(from, sizeof from, "$%s", name);
        if (add_one(set, name, from, eq + 1, what, env, err, errlen) < 0)
            goto fail;
    }
    *out = set;
    return 0;
fail:
    cred_set_free(set);
    return -1;
}

void credentials_summary(const struct str_list *profile, const struct str_list *specs,
                         struct str_list *out)
{
    size_t n_specs = specs ? specs->len : 0;
    for (size_t i = 0; profile && i < profile->len; i++) {
        /* "NAME\tFROM\tHOST,HOST" */
        const char *line = profile->items[i];
        const char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t2)
            continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(t1 - line), line);
        bool by_flag = false;
        for (size_t k = 0; k < n_specs; k++)
            by_flag = by_flag || spec_names(specs->items[k], name);
        if (!by_flag)
            str_list_push_owned(out, xasprintf("%s\t%s", name, t2 + 1));
    }
    for (size_t i = 0; i < n_specs; i++) {
        const char *spec = specs->items[i], *eq = strchr(spec, '=');
        if (eq && eq != spec)
            str_list_push_owned(out, xasprintf("%.*s\t%s", (int)(eq - spec), spec, eq + 1));
    }
}
