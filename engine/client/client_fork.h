/* client_fork.h — `cordon fork NAME NEW [--json]`: a client of POST /v1/fork (docs/session-api.md,
 * docs/review.md "Forks for best-of-N"): session NAME starts session NEW over its workspace with
 * its pending changes and its start options. Uses client_http and client_reply.
 * Must never: start a session itself (NAME's controller does, with NAME's options). */
#ifndef CORDON_CLIENT_FORK_H
#define CORDON_CLIENT_FORK_H

/* argv[0] is "fork": the whole command (usage, --help, the request). The exit status: 0, or 125
 * (the session refused, NEW exists, NAME is unknown, the connection was lost, a usage error). */
int cfork_main(int argc, char **argv);
#endif
