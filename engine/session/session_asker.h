/* Runs in: controller (cordon-session). */
/* session_asker.h — which of a session's jobs a network
 * question came from: the proxy knows the asking connection's client address inside the
 * sandbox's network; the socket at that address (the sandbox's /proc/net/tcp, tcp6) is held by
 * a process of the sandbox (its /proc/PID/fd), whose ancestors (or, once it left them, its
 * process group and session) lead to a job's process group leader. So a background job's
 * question names that job's command, not the foreground one's.
 * Uses the host's /proc (the controller may read its sandbox's processes: they are its user
 * namespace's, or it is root). Must never: name a job it did not trace the socket to (a
 * question whose asker is not found names none), change anything, or block long (one pass over
 * /proc per question, bounded). */
#ifndef CORDON_SESSION_ASKER_H
#define CORDON_SESSION_ASKER_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

struct session;
struct job;

/* The running job whose process holds the TCP connection from client, in the sandbox of
 * s's init; NULL when it cannot be told. */
struct job *asker_job(struct session *s, const struct sockaddr_storage *client);

/* The inode of the socket whose local address is client in table (the text of a
 * /proc/net/tcp or tcp6 file of that family); 0 when none, or when several are (ambiguous).
 * Pure: for the unit test. */
unsigned long asker_tcp_inode(const char *table, const struct sockaddr_storage *client);
#endif
