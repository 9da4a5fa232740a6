/* mcp_call.h — one tool call of `cordon mcp`, shared by the files of its tools (not an API):
 * its checked arguments, the result being built and how it is sent, and the tools themselves:
 * mcp_run.c (run_command, start_background, a cancelled call), mcp_jobs.c (list_jobs,
 * read_log, stop_job, cancel_turn), mcp_ports.c (publish_port, unpublish_port,
 * session_status), mcp_review.c (review_changes, fork_session, snapshot_workspace, rollback_workspace). Every tool runs on its call's thread and reaches the session through
 * client_call.h. */
#ifndef CORDON_MCP_CALL_H
#define CORDON_MCP_CALL_H
#include <stdbool.h>

#include "base/attrs.h"
#include "base/json_read.h"
#include "base/json_write.h"
#include "mcp/mcp_tools.h"

/* The checked arguments of any tool; absent ones are NULL / has_* false. */
struct args {
    const char *command, *turn;
    double timeout;
    bool has_timeout;
    long long pid, offset, tail_lines;
    bool has_offset, has_tail_lines;
    double wait;               /* read_log: seconds; 0 none */
    long long port, host_port; /* publish_port, unpublish_port */
    bool has_host_port;
    const char *host_addr;
    const char *restart; /* start_background: the restart policy (checked), or NULL */
    double backoff;      /* its backoff in seconds, when has_backoff */
    bool has_backoff;
    const char *name;  /* fork_session: the new session's name (checked) */
    const char *label; /* snapshot_workspace, rollback_workspace: a snapshot's label */
    bool diff;         /* review_changes: text diffs too */
};

/* A call's result being built: its text, and its structuredContent as JSON text (none when
 * empty). */
struct result {
    struct json_buf text;
    struct json_buf structured;
    bool is_error;
};

/* Send r as the result of request id (JSON text), then free what it holds. */
void mcp_result_send(const char *id, struct result *r);
/* Send r as a result with isError true and one line saying why. */
void mcp_result_error(const char *id, struct result *r, const char *fmt, ...) CORDON_PRINTF(3, 4);
/* The session's answer v (an object), trimmed, as r's structuredContent. */
void mcp_result_object(struct result *r, const struct json_value *v);

/* The tools (mcp_tools_call checked their arguments); each sends its call's result. */
void mcp_run_command(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_start_background(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_list_jobs(const struct mcp_server *s, const char *id);
void mcp_read_log(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_stop_job(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_cancel_turn(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_publish_port(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_unpublish_port(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_session_status(const struct mcp_server *s, const char *id);
void mcp_review_changes(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_fork_session(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_snapshot_workspace(const struct mcp_server *s, const struct args *a, const char *id);
void mcp_rollback_workspace(const struct mcp_server *s, const struct args *a, const char *id);
#endif
