/* sandbox_config.c — the lifetime of struct sandbox_config and struct run_flags: turns the
 * paths a resolved profile names into what struct sandbox_config promises (canonical, absolute,
 * ~ expanded, deduplicated), and frees what the CLI and the profile resolution filled in.
 * Uses: util.c for ~ expansion, absolute paths and containment; the file system (realpath,
 * stat, lstat, access) to check that the workspace and writable paths exist and which links
 * lead to them.
 * Must never: create, change or bind anything (this only reads paths), or call into Lua. */
#include "sandbox/sandbox_config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "sandbox/hide.h"
#include "sandbox/profile_keys.h"

/* Frees the field of each profile key that owns memory: its string or its list. */
static void free_key_fields(void *base, bool flags)
{
    for (size_t i = 0; i < profile_keys_len; i++) {
        const struct profile_key *k = &profile_keys[i];
        size_t off = flags ? k->flag_field : k->field;
        if (flags ? !k->flag : k->field == PK_NO_FIELD)
            continue;
        void *field = (char *)base + off;
        switch (k->kind) {
        case PK_LIST:
        case PK_ABSLIST:
        case PK_EXCEPTMAP:
        case PK_GRANTMAP:
        case PK_CREDMAP:
            str_list_free(field);
            break;
        case PK_PORTLIST: /* a list of the flag's words; the profile's is an array */
            if (flags)
                str_list_free(field);
            break;
        case PK_STRING:
        case PK_NAME:
            if (!flags) /* a flag's string is argv's */
                free(*(char **)field);
            break;
        case PK_BOOLEAN:
        case PK_NUMBER:
        case PK_INTEGER:
        case PK_STRMAP:
        case PK_RLIMIT:
        case PK_DURATION:
        case PK_SIZE:
        case PK_SIZE_OR_UNLIMITED:
        case PK_PIDS:
        case PK_HOME:
        case PK_DEPTH:
        case PK_TRANSPARENT:
            break;
        }
    }
}

void sandbox_config_free(struct sandbox_config *cfg)
{
    free_key_fields(cfg, false);
    /* the fields that are no profile key's */
    free(cfg->workspace);
    free(cfg->cwd);
    str_list_free(&cfg->protected_paths);
    str_list_free(&cfg->env);
    free(cfg->home);
    free(cfg->home_layer);
    str_list_free(&cfg->grant_binds);
    str_list_free(&cfg->shift_binds);
    memset(cfg, 0, sizeof *cfg);
}

void run_flags_free(struct run_flags *flags)
{
    free_key_fields(flags, true);
    str_list_free(&flags->publish);
    str_list_free(&flags->credentials);
}

/* Canonical existing path: ~ expanded, made absolute against cwd, symlinks resolved.
 * NULL with errno set when it does not exist. */
static char *canonical(const char *p, const char *cwd, const char *home)
{
    char *e = path_expand_home(p, home);
    char *a = path_absolute(e, cwd);
    char *r = realpath(a, NULL);
    int saved = errno;
    free(e);
    free(a);
    errno = saved;
    return r;
}

/* Walks component by component: each name is looked at (lstat) below its parent's canonical
 * path, as the kernel would meet it. */
char *sandbox_config_link_within(const char *abs, const struct str_list *areas)
{
    char *cur = xstrdup("/"), *found = NULL;
    char *copy = xstrdup(abs), *save = NULL;
    for (char *c = strtok_r(copy, "/", &save); c && !found; c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0)
            continue;
        if (strcmp(c, "..") == 0) {
            char *slash = strrchr(cur, '/');
            if (slash && slash != cur)
                *slash = '\0';
            else
                strcpy(cur, "/");
            continue;
        }
        char *next = strcmp(cur, "/") == 0 ? xasprintf("/%s", c) : xasprintf("%s/%s", cur, c);
        struct stat st;
        if (lstat(next, &st) == 0 && S_ISLNK(st.st_mode)) {
            for (size_t i = 0; i < areas->len && !found; i++)
                if (path_is_within(next, areas->items[i]))
                    found = xstrdup(next);
            char *r = realpath(next, NULL);
            free(next);
            next = r;
            if (!next)
                break;
        }
        free(cur);
        cur = next;
    }
    free(cur);
    free(copy);
    return found;
}

int sandbox_config_resolve_paths(struct sandbox_config *cfg, const struct run_flags *flags,
                                 const char *cwd, const char *home, const char *workspace,
                                 bool allow_docker, char *err, size_t errlen)
{
    const char *pname = cfg->profile ? cfg->profile : "?";
    const char *ws = workspace ? workspace : cwd;
    char *w = canonical(ws, cwd, home);
    struct stat st;
    if (!w || stat(w, &st) < 0 || !S_ISDIR(st.st_mode)) {
        const char *why = w ? strerror(ENOTDIR) : strerror(errno);
        if (flags->workspace)
            snprintf(err, errlen, "--workspace %s: %s", ws, why);
        else if (workspace)
            snprintf(err, errlen, "profile '%s': workspace %s: %s", pname, ws, why);
        else
            snprintf(err, errlen, "current directory %s: %s", ws, why);
        free(w);
        return -1;
    }
    cfg->workspace = w;

    /* Pass 1: each entry exists; its canonical path. A relative profile entry ("build") is
     * the workspace's; a command-line one is the caller's current directory's. */
    struct str_list writable = {0}, canon = {0};
    for (size_t i = 0; i < cfg->writable.len; i++) {
        const char *p = cfg->writable.items[i];
        bool cli = str_list_contains(&flags->writable, p);
        bool ws_rel = !cli && p[0] != '/' && p[0] != '~';
        char *r = canonical(p, ws_rel ? cfg->workspace : cwd, home);
        if (!r) {
            int e = errno;
            if (cli)
                snprintf(err, errlen, "--allow-write %s: %s", p, strerror(e));
            else
                snprintf(err, errlen, "profile '%s': writable %s: %s", pname, p, strerror(e));
            str_list_free(&canon);
            return -1;
        }
        str_list_push_owned(&canon, r);
    }
    /* Pass 2: a link is followed only when the person named it on the command line (and then
     * one line says where it leads), and only when it lies outside every writable area. A
     * profile's entry must not lead out of the workspace when
     * it is relative, nor pass a link that lies where a sandboxed command could have planted
     * it (the workspace, a writable area): the next run would make the link's target writable,
     * wherever it points. The view opens each canonical path again with no link allowed on the
     * way (fsview.c), so a link planted after this check is refused there. */
    struct str_list areas = {0};
    str_list_push(&areas, cfg->workspace);
    for (size_t i = 0; i < canon.len; i++)
        str_list_push(&areas, canon.items[i]);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < cfg->writable.len; i++) {
        const char *p = cfg->writable.items[i], *r = canon.items[i];
        bool cli = str_list_contains(&flags->writable, p);
        bool ws_rel = !cli && p[0] != '/' && p[0] != '~';
        char *e = path_expand_home(p, home);
        char *a = path_absolute(e, ws_rel ? cfg->workspace : cwd);
        free(e);
        char *link = sandbox_config_link_within(a, &areas);
        if (cli && link) {
            /* the person named the link, but not where a command pointed it meanwhile */
            snprintf(err, errlen,
                     "--allow-write %s passes the symbolic link %s, which lies in a writable "
                     "area where a sandboxed command could have planted it: refused (it leads to "
                     "%s; name that path if it is the one meant)",
                     p, link, r);
            rc = -1;
        } else if (cli) {
            if (strcmp(a, r) != 0)
                LOG_W("config", "--allow-write %s resolves to %s: that is what is writable", p, r);
        } else if (ws_rel && !path_is_within(r, cfg->workspace)) {
            snprintf(err, errlen,
                     "profile '%s': writable %s leads outside the workspace (to %s): "
                     "refused",
                     pname, p, r);
            rc = -1;
        } else if (link) {
            snprintf(err, errlen,
                     "profile '%s': writable %s passes the symbolic link %s, which a "
                     "sandboxed command could have planted: refused (name the real path)",
                     pname, p, link);
            rc = -1;
        }
        free(link);
        free(a);
        if (rc == 0 && !str_list_contains(&writable, r))
            str_list_push(&writable, r);
    }
    str_list_free(&areas);
    str_list_free(&canon);
    if (rc < 0) {
        str_list_free(&writable);
        return -1;
    }
    str_list_free(&cfg->writable);
    cfg->writable = writable;

    /* hidden_except: a folder that is missing (or no folder) now is hidden whole, so that one
     * the host makes later stays missing; the rest keep their rule, by the canonical path the
     * host's links give (a ~/.ssh managed by stow: where it leads). init follows no link to it,
     * so one a command planted in its copy-on-write home leads the rule nowhere. */
    struct str_list except = {0};
    for (size_t i = 0; i < cfg->hidden_except.len; i++) {
        const char *rule = cfg->hidden_except.items[i], *tab = strchr(rule, '\t');
        char *dir = tab ? strndup(rule, (size_t)(tab - rule)) : xstrdup(rule);
        char *e = path_expand_home(dir, home);
        char *a = path_absolute(e, cwd);
        char *real = tab && stat(a, &st) == 0 && S_ISDIR(st.st_mode) ? realpath(a, NULL) : NULL;
        if (!real)
            str_list_push(&cfg->hidden, a);
        else
            str_list_push_owned(&except, xasprintf("%s%s", real, tab));
        free(real);
        free(dir);
        free(e);
        free(a);
    }
    str_list_free(&cfg->hidden_except);
    cfg->hidden_except = except;

    /* Each hidden path, and what it names through a link on the way (a home managed by stow:
     * ~/.aws -> dotfiles/aws), which would show the same secret under its own name. */
    struct str_list hidden = {0};
    for (size_t i = 0; i < cfg->hidden.len; i++) {
        char *e = path_expand_home(cfg->hidden.items[i], home);
        char *a = path_absolute(e, cwd);
        free(e);
        for (int k = 0; a && k < 2; k++) {
            char *next = k == 0 ? hide_link_target(a) : NULL;
            if (next &&
                (path_is_within(cfg->workspace, next) || (home && path_is_within(home, next)))) {
                LOG_W("config",
                      "hidden %s is a link to %s, which holds the workspace or the home: that "
                      "is not hidden (hide what it should instead)",
                      a, next);
                free(next);
                next = NULL;
            }
            bool docker =
                strcmp(a, "/run/docker.sock") == 0 || strcmp(a, "/var/run/docker.sock") == 0;
            if ((allow_docker && docker) || str_list_contains(&hidden, a))
                free(a);
            else
                str_list_push_owned(&hidden, a);
            a = next;
        }
    }
    str_list_free(&cfg->hidden);
    cfg->hidden = hidden;
    /* A rule's folder hidden whole (a writable home hides ~/.ssh so) needs no rule. */
    for (size_t i = 0; i < cfg->hidden_except.len;) {
        const char *rule = cfg->hidden_except.items[i];
        char *dir = strndup(rule, strcspn(rule, "\t"));
        bool whole = false;
        for (size_t k = 0; k < cfg->hidden.len && !whole; k++)
            whole = path_is_within(dir, cfg->hidden.items[k]);
        free(dir);
        if (!whole) {
            i++;
            continue;
        }
        free(cfg->hidden_except.items[i]);
        memmove(&cfg->hidden_except.items[i], &cfg->hidden_except.items[i + 1],
                (cfg->hidden_except.len - i - 1) * sizeof *cfg->hidden_except.items);
        cfg->hidden_except.len--;
    }

    for (size_t i = 0; i < cfg->run_binds.len; i++) {
        if (cfg->run_binds.items[i][0] != '/') {
            snprintf(err, errlen, "profile '%s': run_binds %s: not an absolute path", pname,
                     cfg->run_binds.items[i]);
            return -1;
        }
    }
    if (allow_docker && access("/run/docker.sock", F_OK) == 0 &&
        !str_list_contains(&cfg->run_binds, "/run/docker.sock"))
        str_list_push(&cfg->run_binds, "/run/docker.sock");

    char *c = realpath(cwd, NULL);
    bool inside = c && path_is_within(c, cfg->workspace);
    for (size_t i = 0; c && !inside && i < cfg->writable.len; i++)
        inside = path_is_within(c, cfg->writable.items[i]);
    if (inside) {
        cfg->cwd = c;
    } else {
        free(c);
        cfg->cwd = xstrdup(cfg->workspace);
    }
    return 0;
}
