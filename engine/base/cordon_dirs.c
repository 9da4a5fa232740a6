/* cordon_dirs.c — see cordon_dirs.h. Owns the rules for cordon's folders. Uses getenv and
 * util's string helpers. Never creates anything, never returns a relative path. */
#include "base/cordon_dirs.h"

#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "base/util.h"

static const char *const xdg_var[] = {
    [CDIR_CONFIG] = "XDG_CONFIG_HOME",
    [CDIR_STATE] = "XDG_STATE_HOME",
    [CDIR_CACHE] = "XDG_CACHE_HOME",
};
static const char *const home_rel[] = {
    [CDIR_CONFIG] = ".config",
    [CDIR_STATE] = ".local/state",
    [CDIR_CACHE] = ".cache",
};

/* name's value when it is an absolute path, else NULL. */
static const char *absolute_env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] == '/' ? v : NULL;
}

const char *cdir_home(void)
{
    return absolute_env("HOME");
}

const char *cdir_runtime(void)
{
    return absolute_env("XDG_RUNTIME_DIR");
}

/* base + "/cordon" + ("/" sub), the base's trailing slash not doubled ("/" as HOME). */
static char *join(const char *base, const char *rel, const char *sub)
{
    size_t n = strlen(base);
    while (n > 1 && base[n - 1] == '/')
        n--;
    if (n == 1)
        n = 0; /* "/": the children are "/x", not "//x" */
    return xasprintf("%.*s%s%s/cordon%s%s", (int)n, base, rel ? "/" : "", rel ? rel : "",
                     sub ? "/" : "", sub ? sub : "");
}

char *cdir_xdg_path(enum cdir_kind kind, const char *sub)
{
    const char *x = absolute_env(xdg_var[kind]);
    return x ? join(x, NULL, sub) : NULL;
}

char *cdir_home_path(enum cdir_kind kind, const char *sub)
{
    const char *h = cdir_home();
    return h ? join(h, home_rel[kind], sub) : NULL;
}

char *cdir_path(enum cdir_kind kind, const char *sub)
{
    char *p = cdir_xdg_path(kind, sub);
    return p ? p : cdir_home_path(kind, sub);
}

char *cdir_workspace_path(enum cdir_kind kind, const char *sub, const char *workspace)
{
    char *root = cdir_path(kind, sub);
    if (!root)
        return NULL;
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(workspace, strlen(workspace), hex);
    char *dir = xasprintf("%s/%s", root, hex);
    free(root);
    return dir;
}

char *cdir_base(enum cdir_kind kind)
{
    const char *x = absolute_env(xdg_var[kind]), *h = cdir_home();
    if (x)
        return xstrdup(x);
    if (!h)
        return NULL;
    return xasprintf("%s/%s", strcmp(h, "/") ? h : "", home_rel[kind]);
}
