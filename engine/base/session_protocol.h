/* session_protocol.h — the session's control API as both of its ends see it
 * (docs/session-api.md): its limits, the fields of an exec request and the events of its
 * NDJSON streams, with the fields the clients read. Included by session/ (the server), client/
 * (the CLI's session commands) and mcp/ (`cordon mcp`), so that a limit or a name is written
 * once. Constants only: no code, no state. */
#ifndef CORDON_SESSION_PROTOCOL_H
#define CORDON_SESSION_PROTOCOL_H

/* ---- limits ---- */
#define API_TURN_MAX 128             /* bytes of a turn's id (--turn, POST /v1/turns/ID/cancel) */
#define API_COMMAND_MAX (128 * 1024) /* bytes of an exec's shell string */
#define API_LOG_TAIL_MAX 100000000L  /* lines of GET /v1/jobs/PID/log?tail=N */
#define API_LOG_STREAMS_MAX 32       /* GET /v1/jobs/PID/log answers in progress, per session */

/* ---- POST /v1/exec: the request's fields ---- */
#define API_EXEC_COMMAND "command"
#define API_EXEC_BACKGROUND "background"
#define API_EXEC_TIMEOUT "timeout"
#define API_EXEC_TURN "turn"
#define API_EXEC_RESTART "restart" /* "on-failure[:N]" | "always[:N]" (base/restart_policy.h) */
#define API_EXEC_BACKOFF "backoff" /* seconds before the first restart (default 1) */

/* ---- POST /v1/approvals/ID: the answer's fields ---- */
#define API_ANSWER "answer"  /* "once" | "session" | "deny" */
#define API_ANSWER_BY "by"   /* who answered: a label for the settled events, never a permission */
#define API_ANSWER_FOR "for" /* with "session": the seconds the allow holds (docs/session-api.md) */

/* ---- the events of a stream: {"event": KIND, ...} ---- */
#define API_EVENT "event"
/* a foreground exec's stream */
#define API_EVENT_STARTED "started" /* "pid" */
#define API_EVENT_OUTPUT "output"   /* "stream" ("stdout" | "stderr"), "data" | "data_base64" */
#define API_EVENT_EXIT \
    "exit"                            /* "pid", "exit_code", "signal", "timed_out", "stopped",
                                       * "duration_ms", "ran_outside", "refusals" */
#define API_EVENT_APPROVAL "approval" /* "session", "approval": a question asked */
/* GET /v1/approvals?watch=1 */
#define API_EVENT_SUBSCRIBED "subscribed" /* "session"; then a question line for each pending */
#define API_EVENT_QUESTION "question"     /* "session", "approval" */
#define API_EVENT_SETTLED "settled"       /* "id", "answer", "by" */
#define API_EVENT_EXPIRING "expiring"     /* "session", "reason", "in_seconds" */
/* GET /v1/jobs/PID/log?format=ndjson: output events (no "stream"), then, once the job has
 * ended, an exit event ("pid", "exit_code", "signal", "stopped") */
#define API_EVENT_DROPPED "dropped" /* "bytes": not yet sent, dropped by the log's cap */
/* the last line of every stream (exec, log, approvals) that the session's end closed */
#define API_EVENT_SESSION_ENDED "session_ended" /* "session", "reason" */

/* ---- the fields the clients read ---- */
#define API_FIELD_PID "pid"
#define API_FIELD_STREAM "stream"
#define API_FIELD_DATA "data"
#define API_FIELD_DATA_BASE64 "data_base64"
#define API_FIELD_EXIT_CODE "exit_code"
#define API_FIELD_SIGNAL "signal"
#define API_FIELD_TIMED_OUT "timed_out"
#define API_FIELD_STOPPED "stopped"
#define API_FIELD_DURATION_MS "duration_ms"
#define API_FIELD_RAN_OUTSIDE "ran_outside"
#define API_FIELD_REFUSALS "refusals"
#define API_FIELD_HOST_TRUSTED_CHANGES "host_trusted_changes"
#define API_FIELD_APPROVAL "approval"
#define API_FIELD_ID "id"
#define API_FIELD_QUESTION "question"
/* GET /v1/jobs: a supervised job's (null or 0 for others) */
#define API_FIELD_RESTART "restart"         /* the policy, as given */
#define API_FIELD_RESTARTS "restarts"       /* restarts so far */
#define API_FIELD_LAST_EXIT "last_exit"     /* the status the last run ended with */
#define API_FIELD_NEXT_START "next_start"   /* Unix seconds, while it waits to start again */
#define API_FIELD_CURRENT_PID "current_pid" /* the pid of the run now ("pid" is its first) */
#define API_FIELD_REASON "reason"
#define API_FIELD_BYTES "bytes"
#define API_FIELD_ERROR "error" /* the one line of every 4xx/5xx answer */
#endif
