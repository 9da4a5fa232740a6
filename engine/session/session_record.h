/* Runs in: controller (cordon-session). */
/* session_record.h — a session's record beside its socket, NAME.record.json: who it was (pid,
 * profile, workspace, start) and, once it ended, when and why ("reason": session_end_name()).
 * Written when the session starts (reason null: it runs) and again when it has ended, before
 * its socket goes; so a record without a reason and without a live socket is a controller
 * that died (`controller killed`). The clients read it (client_session.c): `session status
 * NAME` and `session list --all` show an ended session and why for a day, and a command for a
 * session that is gone says why it is. */
#ifndef CORDON_SESSION_RECORD_H
#define CORDON_SESSION_RECORD_H

struct session;

/* Write the record now (atomically), as the session is: running, or ended with its reason. */
void session_record_write(struct session *s);
#endif
