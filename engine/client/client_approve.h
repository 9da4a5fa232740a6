/* client_approve.h — `cordon approve NAME ID once|session|deny`: POST /v1/approvals/ID with
 * {"answer": ...}, printing the session's reply message when it has one.
 * Uses client_http, client_reply. Must never: decide anything; the session does. */
#ifndef CORDON_CLIENT_APPROVE_H
#define CORDON_CLIENT_APPROVE_H
#include <stdbool.h>

/* "once", "session" or "deny". */
bool capprove_answer_valid(const char *answer);
/* The exit status: 0, or 1 after printing why. */
int capprove_send(const char *name, const char *id, const char *answer);
#endif
