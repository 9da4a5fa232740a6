/* mcp_tools.h — the tools `cordon mcp` offers (run_command, start_background, list_jobs,
 * read_log, stop_job, cancel_turn, session_status, publish_port, unpublish_port, review_changes, fork_session):
 * their list with schemas and descriptions,
 * checking a call's arguments, and running a call against the session's API, whose answer
 * becomes the call's result (text, structuredContent, isError). Also the questions for a
 * person that a running command raises (mcp_ask.c).
 * The tools themselves are mcp_run.c's, mcp_jobs.c's, mcp_ports.c's and mcp_review.c's
 * (mcp_call.h).
 * Uses the client library (client_call: requests and answers; client_exec: the exec request;
 * client_ndjson: the exec stream; client_reply: an answer's members), mcp_wire, mcp_bound.
 * Must never: run anything itself (every command runs in the session's sandbox), answer a
 * question for a person on its own other than "deny", or carry more than MCP_STREAM_MAX bytes
 * of one stream in a result. */
#ifndef CORDON_MCP_TOOLS_H
#define CORDON_MCP_TOOLS_H
#include <stdatomic.h>
#include <stdbool.h>

#include "base/json_write.h"
#include "base/json_read.h"

/* What one result carries of a command's stdout, of its stderr, or of a log: the first and
 * the last half of this many bytes. */
#define MCP_STREAM_MAX (64 * 1024)

struct mcp_server {
    const char *session; /* the session's name */
    /* set by initialize on the reading thread, read by the calls' threads */
    atomic_bool elicitation;     /* the client declared the elicitation capability */
    atomic_bool args_as_results; /* bad arguments are a tool result with isError (2025-11-25),
                                    not a JSON-RPC error (2025-06-18) */
};

/* {"tools":[...]} */
void mcp_tools_list(struct json_buf *b);
/* The tool's index, or -1 for an unknown name. */
int mcp_tools_find(const char *name);
/* Run tool `tool` with args (an object, or NULL for none) and send the answer to request id
 * (JSON text): a result, or for bad arguments under 2025-06-18 a -32602 error. Blocks for as
 * long as the call takes: run it on a thread of its own. */
void mcp_tools_call(const struct mcp_server *s, int tool, const struct json_value *args,
                    const char *id);

/* The client cancelled request id (notifications/cancelled): a run_command of that id is
 * stopped (its process group, as stop_job does) and gets no response. Returns at once. */
void mcp_tools_cancel(const struct mcp_server *s, const char *id);

/* A question from the session (an APPROVAL object of docs/session-api.md) seen on an exec
 * stream: asked of the client with elicitation/create on a thread of its own, the answer
 * posted to the session; denied at once when the client cannot be asked. A question already
 * seen (it comes on every stream attached) is not asked again. Returns at once. */
void mcp_ask(const struct mcp_server *s, const struct json_value *approval);
/* Subscribe to the session's questions (once; a thread of its own for the server's life), for
 * a client that can be asked: questions not on any exec stream of ours reach it too. */
void mcp_watch_start(const struct mcp_server *s);
/* End the subscription (the server is stopping). */
void mcp_watch_stop(void);
#endif
