/* client_grants.h — `cordon grant NAME --network HOST:PORT [--for D]`, `cordon grants NAME
 * [--json]` and `cordon revoke NAME ID`: clients of POST /v1/grants, GET /v1/grants and DELETE
 * /v1/grants/ID (docs/session-api.md, "Grants"). Uses client_http, client_reply, client_table,
 * base/grant_words (the words are refused here before the session is asked, and again there).
 * Must never: decide anything; the session keeps and ends the grants. */
#ifndef CORDON_CLIENT_GRANTS_H
#define CORDON_CLIENT_GRANTS_H

/* argv[0] is "grant" / "grants" / "revoke": the whole command (usage, --help, the request).
 * The exit status: 0, or 125 (a usage error, the session refused, the connection was lost). */
int cgrants_grant_main(int argc, char **argv);
int cgrants_list_main(int argc, char **argv);
int cgrants_revoke_main(int argc, char **argv);
#endif
