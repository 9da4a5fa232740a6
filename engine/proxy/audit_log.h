/* audit_log.h — every network decision as one JSON line: time, kind, host, port, verdict, the
 * rule or reason, the command and cordon's pid. Appended to $XDG_STATE_HOME/cordon/audit.jsonl
 * (else ~/.local/state/cordon/audit.jsonl), or to $CORDON_AUDIT_LOG when set, opened at the first
 * decision. A log that cannot be opened is reported once; decisions are still made (and still
 * fail closed). */
#ifndef CORDON_AUDIT_LOG_H
#define CORDON_AUDIT_LOG_H
#include <stdbool.h>
#include "policy/lua_host.h"

struct audit_log;

struct audit_log *audit_log_open(void);
void audit_log_decision(struct audit_log *log, enum net_kind kind, const char *host, unsigned port,
                        const struct net_decision *d, enum lh_outcome outcome, const char *command);
/* One line of another kind than a proxy decision (the relays of port_relay.c: "host_port",
 * "publish"), in the same form: verdict "allow" or "deny", rule and reason as given. */
void audit_log_event(struct audit_log *log, const char *kind, const char *host, unsigned port,
                     bool allow, const char *rule, const char *reason, const char *command);
void audit_log_close(struct audit_log *log);
/* lh_net_kind_name, "?" for a value outside the enum: for lines and the log. */
const char *net_kind_name(enum net_kind kind);
#endif
