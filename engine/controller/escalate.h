/* escalate.h — after the sandbox refused a command: ask the `escalate` hook whether a person
 * should be asked, ask on the terminal of `cordon run` (the default answer, and the answer when
 * nobody answers within the permission timeout, is deny), and on "allow" run that one command
 * again outside the sandbox, as a separate process in the workspace with the sandbox's
 * environment minus secrets and proxy variables, announced by one line. Never runs anything
 * less sandboxed without that answer. */
#ifndef CORDON_ESCALATE_H
#define CORDON_ESCALATE_H
#include <stdbool.h>
#include <stddef.h>

#include "policy/lua_host.h"
#include "sandbox/sandbox-t.h"

struct escalation_result {
    bool asked;              /* a person was asked */
    bool ran_outside;        /* the command ran again outside the sandbox */
    int exit_code;           /* the re-run's, when ran_outside */
    char network_allow[300]; /* the rule a person allowed for a re-run IN the sandbox, or "" */
};

/* The environment of a command run again outside: the sandbox's (secrets already stripped by
 * the environment hook) minus the variables that only make sense inside (the proxy's,
 * CORDON_SANDBOX), plus CORDON_OUTSIDE_SANDBOX=1. A declared credential's placeholder means
 * nothing without the proxy: NAME gets the caller's own $NAME back when it has one.
 * Appended to env. */
void escalate_outside_environment(const struct sandbox_config *cfg, struct str_list *env);

/* interactive: stdin and stderr are the caller's terminal. asked: the destinations the proxy
 * already asked the terminal about during the run (a network refusal of one of those is not
 * asked about again). A blocked destination is offered as a grant, not as a re-run outside:
 * on "yes", out->network_allow is the --network-allow rule for running the command again in a
 * fresh sandbox (the caller does that). */
void escalate_refusals(const struct sandbox_config *cfg, char **argv, const char *line,
                       const struct lh_refusal *refusals, size_t n, bool interactive,
                       const struct str_list *asked, struct escalation_result *out);
#endif
