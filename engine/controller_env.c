/* controller_env.c — see controller_env.h. */
#include "controller_env.h"

#include <stdio.h>
#include <stdlib.h>

void controller_lua_options(struct lh_options *opt)
{
    static char user_dir[4096];
    const char *datadir = getenv("CORDON_DATADIR");
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    opt->datadir = datadir && *datadir ? datadir : CORDON_DATADIR;
    opt->user_config_dir = NULL;
    if (xdg && *xdg)
        snprintf(user_dir, sizeof user_dir, "%s/cordon", xdg);
    else if (home && *home)
        snprintf(user_dir, sizeof user_dir, "%s/.config/cordon", home);
    else
        return;
    opt->user_config_dir = user_dir;
}
