/* Runs in: controller (cordon-session, on its event loop). */
/* session_expiry.h — a session's own end: its idle timeout (session.idle_timeout: no exec, no
 * job and no API client for that long) and its maximum lifetime (session.max_lifetime: that
 * long after its start, whatever runs). Each is announced session.expiry_warning before it
 * comes (a line in the session's log, an event to its subscribers), then ends the session the
 * usual way (session_shut_down: TERM, grace, KILL of every process) with the reason `idle` or
 * `lifetime`. 0 for either: never. */
#ifndef CORDON_SESSION_EXPIRY_H
#define CORDON_SESSION_EXPIRY_H
#include <stdbool.h>
#include <stdint.h>
#include "base/evloop.h"

struct session;
struct api_server;

struct session_expiry {
    struct api_server *api; /* whose clients keep the session from being idle */
    bool started;
    struct ev_timer idle_t, idle_warn_t; /* armed while nothing is there */
    struct ev_timer life_t, life_warn_t;
};

/* Arm the lifetime (from now) and begin watching for idleness; api: the session's server. */
void session_expiry_start(struct session *s, struct api_server *api);
/* After each loop round: something there stops the idle clock, nothing arms it. */
void session_expiry_after_round(struct session *s);
/* The session is ending (or freed): no timer of it fires any more. */
void session_expiry_stop(struct session *s);
#endif
