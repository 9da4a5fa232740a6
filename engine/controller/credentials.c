/* credentials.c — see credentials.h. Reads the caller's environment and files, runs a
 * profile's cmd: source on the host; writes nothing. */
#include "controller/credentials.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

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
        int r = read_file(from + 5, 0, CRED_VALUE_MAX, &buf, &len);
        if (r < 0) {
            snprintf(err, errlen, "credential %s: cannot read %s: %s", name, from + 5,
                     strerror(-r));
            return NULL;
        }
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

int credentials_prepare(const struct str_list *specs, struct str_list *env, struct cred_set **out,
                        char *err, size_t errlen)
{
    *out = NULL;
    if (!specs || specs->len == 0)
        return 0;
    struct cred_set *set = cred_set_new();
    if (!set) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < specs->len; i++) {
        const char *spec = specs->items[i];
        const char *eq = strchr(spec, '=');
        if (!eq || eq == spec || !eq[1]) {
            snprintf(err, errlen, "--credential '%s': write NAME=HOST[,HOST...]", spec);
            goto fail;
        }
        char name[128];
        if ((size_t)(eq - spec) >= sizeof name) {
            snprintf(err, errlen, "--credential '%s': the name is too long", spec);
            goto fail;
        }
        memcpy(name, spec, (size_t)(eq - spec));
        name[eq - spec] = 0;
        struct str_list hosts = {0};
        for (const char *h = eq + 1; *h;) {
            size_t n = strcspn(h, ",");
            if (n == 0) {
                snprintf(err, errlen, "--credential '%s': an empty host", spec);
                str_list_free(&hosts);
                goto fail;
            }
            str_list_push_owned(&hosts, xasprintf("%.*s", (int)n, h));
            h += n + (h[n] == ',');
        }
        char from[140];
        snprintf(from, sizeof from, "$%s", name);
        char *value = credential_read_value(name, from, err, errlen);
        if (!value) {
            str_list_free(&hosts);
            goto fail;
        }
        char ph[600];
        if (make_placeholder(name, strlen(value), ph, sizeof ph) < 0) {
            snprintf(err, errlen, "credential %s: cannot make its placeholder", name);
            explicit_bzero(value, strlen(value));
            free(value);
            str_list_free(&hosts);
            goto fail;
        }
        int r = cred_set_add(set, name, ph, value, (const char *const *)hosts.items, hosts.len, err,
                             errlen);
        if (r == 0)
            put_placeholder(env, name, value, ph);
        explicit_bzero(value, strlen(value));
        free(value);
        str_list_free(&hosts);
        if (r < 0)
            goto fail;
    }
    *out = set;
    return 0;
fail:
    cred_set_free(set);
    return -1;
}
