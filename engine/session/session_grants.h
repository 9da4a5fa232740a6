/* Runs in: controller (cordon-session). */
/* session_grants.h — the grants in force in a session (docs/session-api.md, "Grants"): the
 * network ones the proxy keeps (a person's answer to a network question, an allow offered after
 * a refusal, a grant made ahead of any question with `cordon grant`; ids "gN", proxy.h), and the
 * re-runs outside the sandbox a person allowed for the session ("session" to a re-run question,
 * ids "rN"), each with who gave it, when, and when it ends. GET /v1/grants lists them, POST
 * /v1/grants makes a network one, DELETE /v1/grants/ID ends one at once (the proxy closes the
 * connections it let through). Owns the re-run grants (at most RERUN_GRANTS_MAX; a grant whose
 * time is over counts as never given and is dropped with one line in the session's log).
 * Must never: let a re-run outside the sandbox go unasked once its grant has ended. */
#ifndef CORDON_SESSION_GRANTS_H
#define CORDON_SESSION_GRANTS_H
#include <stdbool.h>
#include <stddef.h>

#include "session/api_server.h"

#define RERUN_GRANTS_MAX 64

struct session;

/* One command string a person allowed to run outside the sandbox, unasked, for the session. */
struct rerun_grant {
    unsigned id;
    char *command;
    char by[96];
    double granted, expires; /* Unix seconds; expires 0: until the session ends */
    struct rerun_grant *next;
};

struct rerun_grants {
    struct rerun_grant *list; /* oldest first */
    size_t n;
    unsigned next_id;
};

/* command may run outside unasked (for_s > 0: for that long); false when RERUN_GRANTS_MAX are
 * kept (said in the session's log): the re-run asked about still runs, once. */
bool rerun_grant_add(struct session *s, const char *command, const char *by, double for_s);
/* A re-run grant in force covers command. */
bool rerun_grant_covers(struct session *s, const char *command);
void rerun_grants_free(struct rerun_grants *g);

/* GET /v1/grants: {"grants":[...]}. */
void session_op_grants(struct session *s, struct api_request *req);
/* POST /v1/grants {"network": "HOST:PORT", "for": S?, "by": "..."?}: host already checked
 * (grant_words.h), for_s 0: until the session ends. */
void session_op_grant(struct session *s, struct api_request *req, const char *host, unsigned port,
                      double for_s, const char *by);
/* DELETE /v1/grants/ID. */
void session_op_revoke(struct session *s, struct api_request *req, const char *id);
#endif
