/* sandbox_config.c — the lifetime of struct sandbox_config and struct run_flags: turns the
 * paths a resolved profile names into what struct sandbox_config promises (canonical, absolute,
 * ~ expanded, deduplicated), and frees what the CLI and the profile resolution filled in.
 * Uses: util.c for ~ expansion, absolute paths and containment; the file system (realpath,
 * stat, access) to check that the workspace and writable paths exist.
 * Must never: create, change or bind anything (this only reads paths), or call into Lua. */
#include "sandbox/sandbox_config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sandbox_config_free(struct sandbox_config *cfg)
{
    free(cfg->profile);
    free(cfg->workspace);
    free(cfg->cwd);
    str_list_free(&cfg->writable);
    str_list_free(&cfg->hidden);
    str_list_free(&cfg->readonly_in_workspace);
    str_list_free(&cfg->run_binds);
    str_list_free(&cfg->seccomp_deny);
    str_list_free(&cfg->env);
    free(cfg->home);
    free(cfg->home_layer);
    memset(cfg, 0, sizeof *cfg);
}

void run_flags_free(struct run_flags *flags)
{
    str_list_free(&flags->writable);
    str_list_free(&flags->hidden);
    str_list_free(&flags->network_allow);
    str_list_free(&flags->network_deny);
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

    struct str_list writable = {0};
    for (size_t i = 0; i < cfg->writable.len; i++) {
        const char *p = cfg->writable.items[i];
        char *r = canonical(p, cwd, home);
        if (!r) {
            int e = errno;
            if (str_list_contains(&flags->writable, p))
                snprintf(err, errlen, "--allow-write %s: %s", p, strerror(e));
            else
                snprintf(err, errlen, "profile '%s': writable %s: %s", pname, p, strerror(e));
            str_list_free(&writable);
            return -1;
        }
        if (!str_list_contains(&writable, r))
            str_list_push(&writable, r);
        free(r);
    }
    str_list_free(&cfg->writable);
    cfg->writable = writable;

    struct str_list hidden = {0};
    for (size_t i = 0; i < cfg->hidden.len; i++) {
        char *e = path_expand_home(cfg->hidden.items[i], home);
        char *a = path_absolute(e, cwd);
        free(e);
        bool docker = strcmp(a, "/run/docker.sock") == 0 || strcmp(a, "/var/run/docker.sock") == 0;
        if ((allow_docker && docker) || str_list_contains(&hidden, a))
            free(a);
        else
            str_list_push_owned(&hidden, a);
    }
    str_list_free(&cfg->hidden);
    cfg->hidden = hidden;

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
