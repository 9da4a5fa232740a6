/* layer_dirs.c — see layer_dirs.h. */
#include "policy/layer_dirs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy/trust.h"

void layer_dirs_default(struct lh_options *opt)
{
    static char user_dir[4096];
    const char *datadir = getenv("CORDON_DATADIR");
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    opt->datadir = datadir && *datadir ? datadir : CORDON_DATADIR;
    opt->user_config_dir = NULL;
    opt->project_dir = NULL;
    opt->extra_policy = NULL;
    if (xdg && *xdg)
        snprintf(user_dir, sizeof user_dir, "%s/cordon", xdg);
    else if (home && *home)
        snprintf(user_dir, sizeof user_dir, "%s/.config/cordon", home);
    else
        return;
    opt->user_config_dir = user_dir;
}

void layer_dirs_add_project(struct lh_options *opt, const char *workspace)
{
    static char project[PATH_MAX + 16];
    char root[PATH_MAX], why[1024];
    opt->project_dir = NULL;
    switch (trust_check(opt->user_config_dir, workspace, root, why, sizeof why)) {
    case TRUST_NO_PROJECT:
        break;
    case TRUST_TRUSTED:
        snprintf(project, sizeof project, "%s/.cordon", root);
        opt->project_dir = project;
        break;
    case TRUST_UNTRUSTED:
        fprintf(stderr, "cordon: project policy in %s/.cordon is not trusted (%s); review it and "
                        "run: cordon trust %s\n", root, why, root);
        break;
    }
}
