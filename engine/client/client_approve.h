/* client_approve.h — `cordon approve NAME ID once|session|deny`: POST /v1/approvals/ID with
 * {"answer": ...}, printing the session's reply message when it has one; and `cordon approve
 * --watch NAME`: an approver for a person (docs/session-api.md, "Approvals"): subscribed to
 * GET /v1/approvals?watch=1, it shows each question as it is asked and takes the answer from
 * stdin (o/once, s/session, f D for a time, d/deny), until the session ends or stdin does.
 * Uses client_http, client_reply, client_ndjson (the stream's lines). Must never: decide
 * anything; a person does, or the session denies. */
#ifndef CORDON_CLIENT_APPROVE_H
#define CORDON_CLIENT_APPROVE_H
#include <stdbool.h>

/* "once", "session" or "deny". */
bool capprove_answer_valid(const char *answer);
/* The exit status: 0, or 125 after printing why. for_s > 0 (with "session"): the allow ends
 * that many seconds from now. */
int capprove_send(const char *name, const char *id, const char *answer, double for_s);
/* `cordon approve --watch NAME`. 0 when the session or stdin ended; 125 after printing why
 * (no session, a lost connection). */
int capprove_watch(const char *name);
#endif
