/* credential_git.h — git finds a declared credential with no helper configured: the command's
 * environment gets, for each of the credential's hosts, `credential.https://HOST.helper` set to
 * a shell helper that answers the placeholder (never the value: the proxy puts the value into
 * the request's Authorization header, credentials.h). Given by git's GIT_CONFIG_COUNT,
 * GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n, appended after any the caller had.
 * Must never: replace or renumber the caller's own GIT_CONFIG_KEY_n entries. */
#ifndef CORDON_CREDENTIAL_GIT_H
#define CORDON_CREDENTIAL_GIT_H
#include "base/util.h"

/* Appends the helper entries for placeholder and each host ("host", "host:port", "[v6]:port")
 * to env ("NAME=VALUE" items). A caller's GIT_CONFIG_COUNT that is not a number is left as it
 * is, with no entry added (git refuses it anyway). */
void credential_git_helpers(struct str_list *env, const char *placeholder,
                            const struct str_list *hosts);

/* The caller's own GIT_CONFIG_COUNT for a command re-run outside (escalate.c): there the
 * helpers would send the placeholder itself. NULL when the caller had none. */
const char *credential_git_outside_count(void);
#endif
