/* credentials.h — a sandbox's declared credentials (`--credential NAME=HOST[,HOST...]`), made
 * in the controller before init gets its configuration: each value read on the host (the
 * caller's variable NAME, or a profile's "$VAR", "file:PATH", "cmd:..."), a placeholder made
 * for this sandbox, and the command's environment given the placeholder where the value was.
 * The values go only into the proxy's cred_set (proxy/cred_rewrite.h), in this process.
 * Must never: put a value into the configuration init gets, or start a sandbox whose
 * credential could not be read (one line, the run fails closed). */
#ifndef CORDON_CREDENTIALS_H
#define CORDON_CREDENTIALS_H
#include <stddef.h>
#include "base/util.h"

struct cred_set;

/* The value a source names: "$VAR" (the caller's environment), "file:PATH" (the file's first
 * line), "cmd:COMMAND" (its output's first line, run by /bin/sh on the host). A new string, or
 * NULL with one line in err. */
char *credential_read_value(const char *name, const char *from, char *err, size_t errlen);

/* Build the set for the profile's credentials (profile: "NAME\tFROM\tHOST,HOST", the
 * `credentials` key as lua_conv.c gives it) and the flags' (specs: "NAME=HOST[,HOST...]", each
 * value from the caller's variable NAME; a flag replaces the profile's entry of its name), and
 * rewrite env ("NAME=VALUE" items): NAME= the placeholder, and every other item's copy of a
 * value replaced by its placeholder. *out NULL when there is none. 0, or -1 with one line in
 * err. */
int credentials_prepare(const struct str_list *profile, const struct str_list *specs,
                        struct str_list *env, struct cred_set **out, char *err, size_t errlen);

/* What a run's --json tells of the credentials (never a value): "NAME\tHOST,HOST" per
 * credential into out, the profile's first and then the flags', a flag replacing the profile's
 * entry of its name, as credentials_prepare declares them. */
void credentials_summary(const struct str_list *profile, const struct str_list *specs,
                         struct str_list *out);
#endif
