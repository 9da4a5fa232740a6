/* git_guard_digest.c — a config's digest: its guarded entries (those that run code, and those
 * the allowlist of settings refuses) one "key=value" a line, sorted, with what the code-running
 * ones point at (cfg_refs); and the comparisons of two digests the undo makes. Uses:
 * base/git_config.h (parsing, the judgement). Must never: treat a config that does not parse
 * as one that runs nothing (its digest is NULL then). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/git_config.h"
#include "controller/git_guard_private.h"

void gg_cfg_refs_free(struct cfg_refs *r)
{
    free(r->hooks_path);
    str_list_free(&r->includes);
    str_list_free(&r->programs);
    memset(r, 0, sizeof *r);
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The program an entry runs when it names one by path (`/x/fsmon`, `./scripts/conv.sh`,
 * `~/bin/x`, `!./tools/a.sh --flag`); NULL for a command git looks up in PATH. */
static char *program_of(const char *value)
{
    if (!value)
        return NULL;
    const char *p = value;
    while (*p == '!' || *p == ' ' || *p == '\t')
        p++;
    char quote = *p == '"' || *p == '\'' ? *p++ : 0;
    const char *end = p;
    while (*end && (quote ? *end != quote : (*end != ' ' && *end != '\t' && *end != ';')))
        end++;
    if (end == p || !memchr(p, '/', (size_t)(end - p)))
        return NULL;
    return xasprintf("%.*s", (int)(end - p), p);
}

/* An entry the guard undoes when a command adds or changes it: one that runs code, or any
 * other the allowlist of settings refuses (an alias without '!', http.*, url.*, include*: the
 * host's git obeys them as well as a setting written through git_publish). A local remote path
 * or a work tree is judged only where the host can tell the writable areas (git_publish). */
bool gg_entry_guarded(const struct git_config *c, const struct git_config_entry *x)
{
    if (git_config_key_runs_code(x->key, x->value))
        return true;
    const char *why = NULL, *path = NULL;
    return git_config_judge(c, x, &why, &path) == GIT_CONFIG_REFUSE;
}

/* The guarded entries of a config's text (entry_guarded), one "key=value" a line, sorted;
 * NULL when it does not parse. refs (when not NULL) gets what the code-running ones point at. */
char *gg_config_digest(const char *text, size_t len, struct cfg_refs *refs)
{
    struct git_config c = {0};
    char err[256];
    if (git_config_parse(text, len, &c, err, sizeof err) < 0)
        return NULL;
    struct str_list l = {0};
    for (size_t i = 0; i < c.len; i++) {
        const struct git_config_entry *x = &c.items[i];
        if (!gg_entry_guarded(&c, x))
            continue;
        str_list_push_owned(&l, x->value ? xasprintf("%s=%s", x->key, x->value) : xstrdup(x->key));
        if (!refs || !x->value || !git_config_key_runs_code(x->key, x->value))
            continue;
        const char *last = strrchr(x->key, '.');
        if (strcmp(x->key, "core.hookspath") == 0) {
            free(refs->hooks_path);
            refs->hooks_path = xstrdup(x->value);
        } else if (strcmp(x->key, "include.path") == 0 ||
                   (strncmp(x->key, "includeif.", 10) == 0 && last && strcmp(last, ".path") == 0)) {
            str_list_push(&refs->includes, x->value);
        } else {
            char *prog = program_of(x->value);
            if (prog)
                str_list_push_owned(&refs->programs, prog);
        }
    }
    if (l.len)
        qsort(l.items, l.len, sizeof *l.items, by_str);
    size_t total = 1;
    for (size_t i = 0; i < l.len; i++)
        total += strlen(l.items[i]) + 1;
    char *d = xmalloc(total), *p = d;
    for (size_t i = 0; i < l.len; i++)
        p += sprintf(p, "%s\n", l.items[i]);
    *p = '\0';
    str_list_free(&l);
    git_config_free(&c);
    return d;
}

/* The entries of digest a that are not in b, at most max of them, for a line. */
void gg_digest_minus(const char *a, const char *b, char *out, size_t outlen)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = a ? a : ""; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        bool in_b = false;
        for (const char *q = b ? b : ""; *q && !in_b;) {
            const char *nq = strchr(q, '\n');
            size_t m = nq ? (size_t)(nq - q) : strlen(q);
            in_b = m == n && memcmp(p, q, n) == 0;
            q += m + (nq ? 1 : 0);
        }
        if (!in_b && o + 4 < outlen) {
            int w =
                snprintf(out + o, outlen - o, "%s%.*s", o ? ", " : "", (int)(n > 80 ? 80 : n), p);
            o += w > 0 ? (size_t)w : 0;
            if (o >= outlen)
                o = outlen - 1;
        }
        p += n + (nl ? 1 : 0);
    }
    for (size_t i = 0; i < o; i++)
        if ((unsigned char)out[i] < 0x20)
            out[i] = '?';
}

/* Whether the "key=value" line (n bytes at p) is one of digest d's lines. */
static bool digest_has(const char *d, const char *p, size_t n)
{
    for (const char *q = d; *q;) {
        const char *nq = strchr(q, '\n');
        size_t m = nq ? (size_t)(nq - q) : strlen(q);
        if (m == n && memcmp(p, q, n) == 0)
            return true;
        q += m + (nq ? 1 : 0);
    }
    return false;
}

/* A config's guarded entries unchanged in what matters: nothing added or changed, and no
 * code-running entry removed. Removing another refused entry (the person's own alias, say)
 * runs nothing, and git_publish writes such removals for a command. */
bool gg_digest_same(const char *o, const char *n)
{
    for (const char *p = n; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (!digest_has(o, p, len))
            return false;
        p += len + (nl ? 1 : 0);
    }
    for (const char *p = o; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (!digest_has(n, p, len)) {
            char *line = xasprintf("%.*s", (int)len, p);
            /* the first '=' ends the key (one in a subsection cuts it short: then the
             * removal is let be, and a removal runs nothing either) */
            char *eq = strchr(line, '=');
            if (eq)
                *eq = '\0';
            bool runs = git_config_key_runs_code(line, eq ? eq + 1 : NULL) != NULL;
            free(line);
            if (runs)
                return false;
        }
        p += len + (nl ? 1 : 0);
    }
    return true;
}
