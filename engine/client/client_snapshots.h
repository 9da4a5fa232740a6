/* client_snapshots.h — `cordon snapshot NAME [LABEL] | --list | --drop LABEL` and `cordon
 * rollback NAME LABEL`: clients of POST/GET /v1/snapshots, DELETE /v1/snapshots/LABEL and POST
 * /v1/rollback (docs/session-api.md, "Snapshots and rollback"). Uses client_http, client_reply,
 * client_table. Must never: touch the review layer itself; the session does. */
#ifndef CORDON_CLIENT_SNAPSHOTS_H
#define CORDON_CLIENT_SNAPSHOTS_H

/* argv[0] is "snapshot" / "rollback": the whole command. The exit status: 0, or 125 (usage,
 * a bad label, the session refused, the connection was lost). */
int csnap_snapshot_main(int argc, char **argv);
int csnap_rollback_main(int argc, char **argv);
#endif
