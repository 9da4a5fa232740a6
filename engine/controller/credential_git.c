/* credential_git.c — see credential_git.h. Only edits the environment list it is given. */
#include "controller/credential_git.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIT_CONFIG_COUNT_MAX 100000 /* far above any real count; a bigger one is not a count */

/* The item NAME=... of env, or -1. */
static long env_find(const struct str_list *env, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < env->len; i++)
        if (strncmp(env->items[i], name, n) == 0 && env->items[i][n] == '=')
            return (long)i;
    return -1;
}

/* NAME=value in env, replacing any item of that name (a stale GIT_CONFIG_KEY_n past the count). */
static void env_put_owned(struct str_list *env, const char *name, char *item)
{
    long i = env_find(env, name);
    if (i < 0) {
        str_list_push_owned(env, item);
        return;
    }
    free(env->items[i]);
    env->items[i] = item;
}

/* The caller's count (0 when unset), or -1 when it is not a plain number. */
static long current_count(const struct str_list *env)
{
    long at = env_find(env, "GIT_CONFIG_COUNT");
    if (at < 0)
        return 0;
    const char *v = strchr(env->items[at], '=') + 1;
    if (!*v)
        return 0;
    long count = 0;
    for (; *v; v++) {
        if (*v < '0' || *v > '9' || count > GIT_CONFIG_COUNT_MAX)
            return -1;
        count = count * 10 + (*v - '0');
    }
    return count;
}

/* The helper git runs as `sh -c '<it> "$@"' get|store|erase` with the request on its stdin: to
 * `get` it answers the placeholder as the password, and x-access-token (GitHub's name for a
 * token's user; other hosts take any name) unless the URL gave a user. The placeholder is
 * "cordon_NAME_<hex>" (letters, digits, '_'), safe inside single quotes. */
static char *helper_script(const char *placeholder)
{
    return xasprintf("!f() { test \"$1\" = get || return 0; u=; "
                     "while read -r l; do case \"$l\" in username=?*) u=1;; esac; done; "
                     "test -n \"$u\" || echo username=x-access-token; "
                     "echo 'password=%s'; }; f",
                     placeholder);
}

void credential_git_helpers(struct str_list *env, const char *placeholder,
                            const struct str_list *hosts)
{
    long count = current_count(env);
    if (count < 0 || hosts->len == 0)
        return;
    char *script = helper_script(placeholder);
    for (size_t i = 0; i < hosts->len; i++, count++) {
        char name[40];
        snprintf(name, sizeof name, "GIT_CONFIG_KEY_%ld", count);
        env_put_owned(env, name,
                      xasprintf("%s=credential.https://%s.helper", name, hosts->items[i]));
        snprintf(name, sizeof name, "GIT_CONFIG_VALUE_%ld", count);
        env_put_owned(env, name, xasprintf("%s=%s", name, script));
    }
    free(script);
    env_put_owned(env, "GIT_CONFIG_COUNT", xasprintf("GIT_CONFIG_COUNT=%ld", count));
}

const char *credential_git_outside_count(void)
{
    return getenv("GIT_CONFIG_COUNT");
}
