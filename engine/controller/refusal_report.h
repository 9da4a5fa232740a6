/* refusal_report.h — after a foreground command: hand what it printed (the kept head and tail
 * of each stream), its exit status and the refused network destinations to the `refusal` hook,
 * and say each refusal in one line on stderr. Asking to re-run the command outside the sandbox
 * is not done here (nothing is ever re-run less sandboxed without a person's answer). */
#ifndef CORDON_REFUSAL_REPORT_H
#define CORDON_REFUSAL_REPORT_H
#include <stddef.h>

#include "controller/capture.h"
#include "policy/lua_host.h"
#include "sandbox/sandbox-t.h"

/* Fills up to max refusals into found and returns their number (0 when the hook failed: that
 * failure is reported as one line naming the policy's file:line). */
size_t refusal_report(const struct sandbox_config *cfg, const char *command, int exit_code, int sig,
                      const struct capture *out, const struct capture *err,
                      const struct str_list *network_denied, bool merged, struct lh_refusal *found,
                      size_t max);
#endif
