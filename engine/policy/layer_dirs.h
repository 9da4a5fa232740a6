/* layer_dirs.h — where the controller finds its policy layers: the built-in data directory
 * (CORDON_DATADIR at build time, or $CORDON_DATADIR), the user's config directory
 * ($XDG_CONFIG_HOME/cordon, else ~/.config/cordon), and a project's .cordon when the user
 * trusts it (trust.h). */
#ifndef CORDON_LAYER_DIRS_H
#define CORDON_LAYER_DIRS_H
#include "policy/lua_host.h"

/* Fills opt with pointers into static storage or the environment; no project, no --policy. */
void layer_dirs_default(struct lh_options *opt);

/* Add the project layer of workspace (its .cordon) to opt when the user trusts it. When the
 * workspace has a .cordon that is not trusted, print the one line
 * "cordon: project policy in DIR/.cordon is not trusted (why); review it and run: cordon trust DIR"
 * on stderr and leave opt->project_dir NULL (the lower layers still apply). opt->project_dir
 * points into static storage. */
void layer_dirs_add_project(struct lh_options *opt, const char *workspace);
#endif
