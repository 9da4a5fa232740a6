/* controller_env.h — where the controller finds its policy layers: the built-in data directory
 * (CORDON_DATADIR at build time, or $CORDON_DATADIR) and the user's config directory
 * ($XDG_CONFIG_HOME/cordon, else ~/.config/cordon). */
#ifndef CORDON_CONTROLLER_ENV_H
#define CORDON_CONTROLLER_ENV_H
#include "lua_host.h"

/* Fills opt with pointers into static storage or the environment. */
void controller_lua_options(struct lh_options *opt);
#endif
