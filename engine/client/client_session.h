/* client_session.h — `cordon session list [--all] [--json]`, `session status NAME [--json]`,
 * `session stop NAME`: the socket directory's sessions, GET /v1/session, POST
 * /v1/session/stop and the wait until the controller is gone.
 * Uses client_socket, client_http, client_reply, client_table. Must never: start a session
 * (cordon-session does), or remove anything but stale sockets (client_socket decides). */
#ifndef CORDON_CLIENT_SESSION_H
#define CORDON_CLIENT_SESSION_H
#include <stdbool.h>

/* How long `session stop` waits for the socket to go, and how often it looks. */
#define CSESS_STOP_WAIT_MS 30000
#define CSESS_STOP_POLL_MS 20

/* Each returns the exit status: 0, or 125 after printing why. */
/* all: the sessions that ended in the last day too (client_record.h), with why. */
int csess_list(bool json, bool all);
int csess_status(const char *name, bool json);
int csess_stop(const char *name);
#endif
