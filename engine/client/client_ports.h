/* client_ports.h — `cordon publish NAME PORT [HOSTPORT] [--host-addr ADDR]` and `cordon unpublish
 * NAME PORT`: clients of POST /v1/ports and DELETE /v1/ports/PORT (docs/session-api.md); and
 * the published ports' lines of `cordon session status`. Uses client_http and client_reply.
 * Must never: know how the session relays (a client knows the API, not the sandbox). */
#ifndef CORDON_CLIENT_PORTS_H
#define CORDON_CLIENT_PORTS_H
#include "base/json_read.h"

/* argv[0] is "publish" / "unpublish": the whole command (usage, --help, the request). The exit
 * status: 0, or 125 (the session refused, the connection was lost, a usage error). */
int cports_publish_main(int argc, char **argv);
int cports_unpublish_main(int argc, char **argv);
/* session status's lines for the session's "host_ports" and "ports" (GET /v1/session). */
void cports_print_status(const struct json_value *session);
#endif
