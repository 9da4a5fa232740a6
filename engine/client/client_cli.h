/* client_cli.h — the session commands of the CLI: clients of a session's control API
 * (docs/session-api.md), HTTP/1.1 over its Unix socket (client_http.c), in `cordon` itself. */
#ifndef CORDON_CLIENT_CLI_H
#define CORDON_CLIENT_CLI_H
/* argv as main() got it (argv[1] is exec, jobs, logs, stop, cancel, session or approve);
 * returns the exit status. */
int client_cli_main(int argc, char **argv);
#endif
