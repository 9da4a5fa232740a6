/* Runs in: controller (and the policy commands of `cordon`). */
/* sandbox_config.h — lifetime of struct sandbox_config and struct run_flags: the profile's
 * paths resolved against the file system, and freeing. No Lua here: the profile resolution
 * (policy/lua_decide.c) fills cfg, then calls sandbox_config_resolve_paths(). */
#ifndef CORDON_SANDBOX_CONFIG_H
#define CORDON_SANDBOX_CONFIG_H
#include <stdbool.h>
#include <stddef.h>
#include "sandbox/sandbox-t.h"

/* Turn the paths a resolved profile named into what struct sandbox_config promises: the
 * workspace (`workspace`, the profile's as written, or cwd when NULL) and every writable path
 * must exist and are canonicalised (~ expanded against home, made absolute against cwd,
 * symlinks resolved, duplicates dropped); hidden paths are made absolute with ~ expanded (the
 * docker socket is dropped from them when allow_docker, and bound when it exists); run_binds
 * must be absolute; cfg->cwd is cwd when inside the workspace or a writable path, else the
 * workspace. A writable path is resolved before it is granted: a relative profile entry is the
 * workspace's and must stay inside it; a profile entry that passes a symbolic link inside the
 * workspace or a writable area is refused; a command-line one is followed, with one line saying
 * to what. flags says which paths came from the command line, for the message. 0, or -1 with
 * one line naming the path (as the user wrote it, and where) in err. */
int sandbox_config_resolve_paths(struct sandbox_config *cfg, const struct run_flags *flags,
                                 const char *cwd, const char *home, const char *workspace,
                                 bool allow_docker, char *err, size_t errlen);

/* The first symbolic link on the way to abs (absolute, maybe with links and ..) that lies
 * inside one of areas (canonical directories), by its canonical place, as a new string; NULL
 * when there is none. A link there is one a sandboxed command could have planted or could
 * replace. */
char *sandbox_config_link_within(const char *abs, const struct str_list *areas);

void sandbox_config_free(struct sandbox_config *cfg);
void run_flags_free(struct run_flags *flags);
#endif
