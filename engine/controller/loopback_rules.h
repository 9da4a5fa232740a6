/* loopback_rules.h — runs in the controller, at start: says once, for each --network-allow rule
 * that names what the sandbox's NO_PROXY sends straight to its own loopback (127.0.0.1,
 * localhost, ::1), that only a client using the proxy anyway reaches the host's service with
 * it, and which --allow-host-port reaches it for every client. */
#ifndef CORDON_LOOPBACK_RULES_H
#define CORDON_LOOPBACK_RULES_H
#include "base/util.h"
#include "sandbox/sandbox-t.h"

/* The port of a loopback rule ("127.0.0.1:8080", "tcp://localhost:5432", "[::1]:80"): 1-65535;
 * 0 for a loopback rule without a port; -1 when rule names another host (127.0.0.2 too: the
 * proxy takes it to the host's). */
int loopback_rule_port(const char *rule);

/* One line on stderr per rule of allow naming the loopback at a port cfg does not already
 * grant with network.host_ports. Returns the number of lines said. */
size_t loopback_rules_say(const struct str_list *allow, const struct sandbox_config *cfg);
#endif
