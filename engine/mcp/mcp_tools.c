/* mcp_tools.c — see mcp_tools.h: the tools' list with their schemas, checking a call's
 * arguments against them, and sending the call to its tool (mcp_call.h).
 *
 * Results: a command that ran and exited non-zero is a normal result (isError false): the
 * exit code is the answer the model asked for, and MCP keeps isError for a tool that could not
 * do its work. isError is true when the session could not be reached, refused the request (a
 * 4xx/5xx answer, e.g. a ninth background job), or the exec stream ended without an exit. */
#include "mcp/mcp_tools.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/restart_policy.h"
#include "base/session_protocol.h"
#include "base/session_socket.h"
#include "base/util.h"
#include "mcp/mcp_call.h"
#include "mcp/mcp_wire.h"

/* What every tool's description says about where its commands run. */
#define SANDBOX_NOTE                                                                                                                                               \
    "Commands run in cordon's sandbox, one session for every call (the same workspace, /tmp, "                                                                     \
    "loopback services and background jobs), each as a fresh `bash -c COMMAND` in the "                                                                            \
    "workspace with an empty stdin (no cd or variable carries over to the next). The sandbox refuses writes outside the workspace and the temporary directories, " \
    "hides credentials (SSH keys, cloud and package-registry tokens, ...), and lets the network "                                                                  \
    "reach only what the policy's rules allow; a destination no rule covers may be put to the "                                                                    \
    "user as a question, and is denied otherwise. No sudo, no docker socket. A refusal is "                                                                        \
    "reported in the result with the reason; do not try to work around it."

/* read_log's longest wait, in seconds: a call returns once, and blocks the server meanwhile */
#define MCP_LOG_WAIT_MAX 60

struct tool {
    const char *name, *description, *input_schema, *output_schema;
};

static const struct tool tools[] = {
    {"run_command",
     "Run a shell command in the sandbox and wait for it to end. Returns its stdout and stderr "
     "(each cut to its first and last 32 KiB when longer, as the result says), the exit code, "
     "and a line for each thing the sandbox refused. A non-zero exit is a normal result, not a "
     "tool error. For servers and other long-running processes use start_background. " SANDBOX_NOTE,
     "{\"type\":\"object\",\"properties\":{"
     "\"command\":{\"type\":\"string\",\"minLength\":1,\"description\":\"a bash command line\"},"
     "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"seconds; then the "
     "command's process group is stopped (TERM, then KILL)\"},"
     "\"turn\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128,\"description\":\"a tag; "
     "cancel_turn stops everything started with it\"}},"
     "\"required\":[\"command\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{"
     "\"exit_code\":{\"type\":\"integer\",\"description\":\"the command's, 128+N for signal N, 124 when it timed out\"},"
     "\"timed_out\":{\"type\":\"boolean\"},\"stopped\":{\"type\":\"boolean\"},"
     "\"ran_outside\":{\"type\":\"boolean\",\"description\":\"re-run outside the sandbox, as the "
     "user approved\"},"
     "\"refusals\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
     "\"kind\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"}}}},"
     "\"host_trusted_changes\":{\"type\":\"array\",\"description\":\"paths of the workspace "
     "the host will run or trust that the command changed (direct mode)\",\"items\":{\"type\":"
     "\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"change\":{\"type\":"
     "\"string\"},\"why\":{\"type\":\"string\"}}}},"
     "\"stdout_truncated\":{\"type\":\"boolean\"},\"stderr_truncated\":{\"type\":\"boolean\"}},"
     "\"required\":[\"exit_code\",\"timed_out\",\"refusals\",\"stdout_truncated\","
     "\"stderr_truncated\"]}"},
    {"start_background",
     "Start a shell command as a background job of the sandbox (a server, a watcher, a long "
     "build) and return at once with its PID, its log file and how to stop it. Read its output "
     "with read_log, list jobs with list_jobs, end it with stop_job. At most eight run at once. "
     "With restart, the sandbox starts the same command again when it ends (on-failure: a "
     "non-zero status; always: any; :N at most N times), waiting backoff seconds (default 1) "
     "doubled at each restart up to 300; stop_job ends it and its restarts. " SANDBOX_NOTE,
     "{\"type\":\"object\",\"properties\":{"
     "\"command\":{\"type\":\"string\",\"minLength\":1,\"description\":\"a bash command line\"},"
     "\"turn\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128},"
     "\"restart\":{\"type\":\"string\",\"pattern\":\"^(on-failure|always)(:[1-9][0-9]{0,6})?$\","
     "\"description\":\"on-failure, on-failure:N, always or always:N\"},"
     "\"backoff\":{\"type\":\"number\",\"minimum\":0.1,\"maximum\":300,"
     "\"description\":\"seconds before the first restart (with restart)\"}},"
     "\"required\":[\"command\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"pid\":{\"type\":\"integer\"},"
     "\"log\":{\"type\":\"string\"}},\"required\":[\"pid\",\"log\"]}"},
    {"list_jobs",
     "List the sandbox's background jobs and the commands still running: PID, state (running, "
     "exited, stopped), exit code, command.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"jobs\":{\"type\":\"array\",\"items\":{\"type\":"
     "\"object\"}}},\"required\":[\"jobs\"]}"},
    {"read_log",
     "Read a background job's log (its stdout and stderr). offset skips that many bytes (pass "
     "the previous result's next_offset to read only what is new); tail_lines keeps only the "
     "last N lines; wait_seconds (at most 60), when the log has nothing after offset, waits "
     "that long for the job's next output and returns as soon as some comes, the job has "
     "ended (with its exit status) or the session has (with the reason). At most 64 KiB come "
     "back: the first and last 32 KiB when the log is longer, as the result says.",
     "{\"type\":\"object\",\"properties\":{"
     "\"pid\":{\"type\":\"integer\",\"minimum\":1},"
     "\"offset\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"bytes to skip\"},"
     "\"tail_lines\":{\"type\":\"integer\",\"minimum\":1},"
     "\"wait_seconds\":{\"type\":\"number\",\"minimum\":0,\"maximum\":60,\"description\":"
     "\"seconds to wait for new output when there is none after offset\"},"
     "\"wait\":{\"type\":\"number\",\"minimum\":0,\"maximum\":60,\"deprecated\":true,"
     "\"description\":\"deprecated: the former name of wait_seconds\"}},"
     "\"required\":[\"pid\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"pid\":{\"type\":\"integer\"},"
     "\"size\":{\"type\":\"integer\",\"description\":\"the log's bytes as read\"},"
     "\"offset\":{\"type\":\"integer\"},\"next_offset\":{\"type\":\"integer\"},"
     "\"truncated\":{\"type\":\"boolean\"}},"
     "\"required\":[\"pid\",\"size\",\"offset\",\"next_offset\",\"truncated\"]}"},
    {"stop_job",
     "Stop a job of the sandbox (a background job, or a running command) by PID: its process "
     "group gets TERM, then KILL after a grace period.",
     "{\"type\":\"object\",\"properties\":{\"pid\":{\"type\":\"integer\",\"minimum\":1}},"
     "\"required\":[\"pid\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"pid\":{\"type\":\"integer\"},"
     "\"state\":{\"type\":\"string\"}},\"required\":[\"pid\",\"state\"]}"},
    {"cancel_turn",
     "Stop everything that commands tagged with this turn started (foreground and background); "
     "jobs of other turns keep running.",
     "{\"type\":\"object\",\"properties\":{\"turn\":{\"type\":\"string\",\"minLength\":1,"
     "\"maxLength\":128}},\"required\":[\"turn\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"turn\":{\"type\":\"string\"},"
     "\"stopped\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}},"
     "\"required\":[\"turn\",\"stopped\"]}"},
    {"session_status",
     "Describe the sandbox session: its name, profile, workspace, running jobs, the sandbox "
     "ports published on the host (publish_port) and the host ports reachable inside.",
     "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
     "\"profile\":{\"type\":\"string\"},\"workspace\":{\"type\":\"string\"},"
     "\"jobs_running\":{\"type\":\"integer\"},"
     "\"ports\":{\"type\":\"array\",\"items\":{\"type\":\"object\"},\"description\":\"the "
     "published ports, as publish_port answers\"},"
     "\"host_ports\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"description\":"
     "\"the host's ports reachable on the sandbox's 127.0.0.1\"}},\"required\":[\"name\"]}"},
    {"publish_port",
     "Publish a port of the sandbox on the host, so that the user can open what listens there: "
     "typically the dev server (a web app, an API, docs) you started with start_background, "
     "listening on the sandbox's 127.0.0.1 or 0.0.0.0. The sandbox has a network of its own, so "
     "without this nothing outside it reaches its servers. The host side listens on 127.0.0.1 "
     "(only this machine) unless host_addr names another address (one other machines can "
     "reach is asked of the user first, and refused when they cannot be asked), at host_port "
     "(by default "
     "the same number; 0 for any free one). Any TCP is carried (HTTP, WebSocket, hot reload). "
     "Tell the user the address the result gives. It stays published until unpublish_port or "
     "the session's end.",
     "{\"type\":\"object\",\"properties\":{"
     "\"port\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":65535,\"description\":\"the "
     "port the server listens on in the sandbox\"},"
     "\"host_port\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":65535,\"description\":"
     "\"the port on the host; default: the same as port; 0: any free port\"},"
     "\"host_addr\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":63,\"description\":"
     "\"the host address to listen on (an IPv4 or IPv6 address); default 127.0.0.1\"}},"
     "\"required\":[\"port\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"port\":{\"type\":\"integer\"},"
     "\"host_addr\":{\"type\":\"string\"},\"host_port\":{\"type\":\"integer\"},"
     "\"open\":{\"type\":\"integer\",\"description\":\"connections open now\"},"
     "\"connections\":{\"type\":\"integer\",\"description\":\"connections accepted so far\"}},"
     "\"required\":[\"port\",\"host_addr\",\"host_port\"]}"},
    {"unpublish_port",
     "Stop publishing a sandbox port on the host (publish_port): its listener on the host and "
     "the connections open through it close. The server in the sandbox keeps running.",
     "{\"type\":\"object\",\"properties\":{\"port\":{\"type\":\"integer\",\"minimum\":1,"
     "\"maximum\":65535,\"description\":\"the sandbox port published\"}},"
     "\"required\":[\"port\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"port\":{\"type\":\"integer\"},"
     "\"unpublished\":{\"type\":\"boolean\"}},\"required\":[\"port\",\"unpublished\"]}"},
    {"review_changes",
     "List the pending changes of a session in review mode: what its commands added, changed "
     "or removed in the workspace, kept off the host until the user applies them. Each path "
     "the host will later run or trust (git hooks and config, .envrc, CI definitions, agents' "
     "and editors' configs, build entry points, new executables, links out of the workspace) "
     "is flagged host_trusted, with why. Only the user applies or discards changes.",
     "{\"type\":\"object\",\"properties\":{\"diff\":{\"type\":\"boolean\",\"description\":"
     "\"true: the text also shows each change as a unified diff against the host's copy "
     "(binary files named as such), as cordon review --diff prints it\"}},"
     "\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"workspace\":{\"type\":\"string\"},"
     "\"layer\":{\"type\":\"string\"},\"fork\":{\"type\":[\"string\",\"null\"]},"
     "\"changes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
     "\"path\":{\"type\":\"string\"},\"change\":{\"type\":\"string\",\"enum\":[\"added\","
     "\"changed\",\"removed\"]},\"host_trusted\":{\"type\":\"boolean\"},"
     "\"why\":{\"type\":[\"string\",\"null\"]}}}}},\"required\":[\"workspace\","
     "\"changes\"]}"},
    {"fork_session",
     "Start a new session from this one's workspace, its pending changes included, for trying "
     "several approaches side by side (best-of-N): the fork runs in review mode with a layer "
     "of its own, so what it writes stays apart from this session and from the host; it gets "
     "this session's options (profile, network rules). The user reviews, applies or discards "
     "each fork on its own (cordon review --fork NAME).",
     "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1,"
     "\"maxLength\":64,\"description\":\"the new session's name (letters, digits, '_', '.', "
     "'-')\"}},\"required\":[\"name\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
     "\"socket\":{\"type\":\"string\"},\"workspace\":{\"type\":\"string\"},"
     "\"layer\":{\"type\":\"string\"},\"pending_copied\":{\"type\":\"boolean\"}},"
     "\"required\":[\"name\"]}"},
    {"snapshot_workspace",
     "Record the pending changes of a session in review mode as they are now, under a label, "
     "so that rollback_workspace can return the workspace to them later (before a risky "
     "change, between attempts). Cheap: unchanged files are not copied.",
     "{\"type\":\"object\",\"properties\":{\"label\":{\"type\":\"string\",\"minLength\":1,"
     "\"maxLength\":64,\"description\":\"the snapshot's name (letters, digits, '_', '.', "
     "'-'; not starting with '.'); default: the next of s1, s2, ...\"}},"
     "\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"label\":{\"type\":\"string\"},"
     "\"changes\":{\"type\":\"integer\",\"description\":\"pending changes it holds\"},"
     "\"entries\":{\"type\":\"integer\"}},\"required\":[\"label\"]}"},
    {"rollback_workspace",
     "Return the workspace of a session in review mode to a snapshot (snapshot_workspace): "
     "what was written since is gone from the session's view, what was removed is back. The "
     "host's workspace is not touched. Processes that still hold the old workspace open keep "
     "seeing it and are named: restart them.",
     "{\"type\":\"object\",\"properties\":{\"label\":{\"type\":\"string\",\"minLength\":1,"
     "\"maxLength\":64,\"description\":\"the snapshot to return to\"}},"
     "\"required\":[\"label\"],\"additionalProperties\":false}",
     "{\"type\":\"object\",\"properties\":{\"label\":{\"type\":\"string\"},"
     "\"holders\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
     "\"pid\":{\"type\":\"integer\"},\"comm\":{\"type\":\"string\"}}}},"
     "\"message\":{\"type\":[\"string\",\"null\"]}},\"required\":[\"label\"]}"},
};

void mcp_tools_list(struct json_buf *b)
{
    json_buf_lit(b, "{\"tools\":[");
    for (size_t i = 0; i < ARRAY_LEN(tools); i++) {
        if (i)
            json_buf_lit(b, ",");
        json_buf_lit(b, "{\"name\":");
        json_buf_string(b, tools[i].name, strlen(tools[i].name));
        json_buf_lit(b, ",\"description\":");
        json_buf_string(b, tools[i].description, strlen(tools[i].description));
        json_buf_printf(b, ",\"inputSchema\":%s,\"outputSchema\":%s}", tools[i].input_schema,
                        tools[i].output_schema);
    }
    json_buf_lit(b, "]}");
}

int mcp_tools_find(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(tools); i++)
        if (strcmp(name, tools[i].name) == 0)
            return (int)i;
    return -1;
}

/* Arguments ------------------------------------------------------------------------------ */

static bool arg_allowed(int tool, const char *key)
{
    const char *schema = tools[tool].input_schema;
    char quoted[80];
    snprintf(quoted, sizeof quoted, "\"%s\":{", key);
    return strlen(key) < 64 && strstr(schema, quoted) != NULL;
}

static bool whole_number(const struct json_value *v, long long min, long long *out)
{
    if (v->type != JSON_NUMBER || v->number != floor(v->number) || v->number < (double)min ||
        v->number > 9007199254740991.0)
        return false;
    *out = (long long)v->number;
    return true;
}

/* 0, or -1 with why in err. */
static int check_args(int tool, const struct json_value *args, struct args *a, char *err,
                      size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (args && args->type != JSON_OBJECT) {
        snprintf(err, errlen, "arguments must be an object");
        return -1;
    }
    for (size_t i = 0; args && i < args->len; i++) {
        const char *k = args->keys[i];
        const struct json_value *v = &args->items[i];
        if (!arg_allowed(tool, k)) {
            snprintf(err, errlen, "unknown argument '%.64s' for %s", k, tools[tool].name);
            return -1;
        }
        if (strcmp(k, "command") == 0) {
            if (v->type != JSON_STRING || v->len == 0 || strlen(v->str) != v->len) {
                snprintf(err, errlen, "command must be a non-empty string");
                return -1;
            }
            a->command = v->str;
        } else if (strcmp(k, "turn") == 0) {
            if (v->type != JSON_STRING || v->len == 0 || v->len > API_TURN_MAX ||
                strlen(v->str) != v->len) {
                snprintf(err, errlen, "turn must be a string of 1 to %d characters", API_TURN_MAX);
                return -1;
            }
            a->turn = v->str;
        } else if (strcmp(k, "restart") == 0) {
            struct restart_policy p;
            char why[200];
            if (v->type != JSON_STRING || strlen(v->str) != v->len ||
                !restart_policy_parse(v->str, &p, why, sizeof why)) {
                snprintf(err, errlen,
                         "restart must be on-failure, on-failure:N, always or always:N");
                return -1;
            }
            a->restart = v->str;
        } else if (strcmp(k, "backoff") == 0) {
            if (v->type != JSON_NUMBER || !restart_backoff_valid(v->number)) {
                snprintf(err, errlen, "backoff must be a number of seconds from %g to %g",
                         RESTART_BACKOFF_MIN, RESTART_WAIT_CEILING);
                return -1;
            }
            a->backoff = v->number;
            a->has_backoff = true;
        } else if (strcmp(k, "timeout") == 0) {
            if (v->type != JSON_NUMBER || !(v->number > 0) || !isfinite(v->number)) {
                snprintf(err, errlen, "timeout must be a positive number of seconds");
                return -1;
            }
            a->timeout = v->number;
            a->has_timeout = true;
        } else if (strcmp(k, "pid") == 0) {
            if (!whole_number(v, 1, &a->pid)) {
                snprintf(err, errlen, "pid must be a positive integer");
                return -1;
            }
        } else if (strcmp(k, "offset") == 0) {
            if (!whole_number(v, 0, &a->offset)) {
                snprintf(err, errlen, "offset must be an integer >= 0 (bytes)");
                return -1;
            }
            a->has_offset = true;
        } else if (strcmp(k, "wait_seconds") == 0 || strcmp(k, "wait") == 0) {
            /* "wait" is the deprecated name: the same value, under either name */
            if (v->type != JSON_NUMBER || !(v->number >= 0) || v->number > MCP_LOG_WAIT_MAX) {
                snprintf(err, errlen, "%s must be a number of seconds from 0 to %d", k,
                         MCP_LOG_WAIT_MAX);
                return -1;
            }
            a->wait = v->number;
        } else if (strcmp(k, "tail_lines") == 0) {
            if (!whole_number(v, 1, &a->tail_lines)) {
                snprintf(err, errlen, "tail_lines must be a positive integer");
                return -1;
            }
            a->has_tail_lines = true;
        } else if (strcmp(k, "port") == 0) {
            if (!whole_number(v, 1, &a->port) || a->port > 65535) {
                snprintf(err, errlen,
                         "port must be an integer from 1 to 65535 (a port in the sandbox)");
                return -1;
            }
        } else if (strcmp(k, "host_port") == 0) {
            if (!whole_number(v, 0, &a->host_port) || a->host_port > 65535) {
                snprintf(err, errlen,
                         "host_port must be an integer from 0 to 65535 (a port on the "
                         "host; 0 for any free one)");
                return -1;
            }
            a->has_host_port = true;
        } else if (strcmp(k, "host_addr") == 0) {
            if (v->type != JSON_STRING || v->len == 0 || v->len > 63 || strlen(v->str) != v->len) {
                snprintf(err, errlen,
                         "host_addr must be an IP address (a string such as 127.0.0.1 "
                         "or ::1)");
                return -1;
            }
            a->host_addr = v->str;
        } else if (strcmp(k, "name") == 0) {
            if (v->type != JSON_STRING || strlen(v->str) != v->len || !csock_name_valid(v->str)) {
                snprintf(err, errlen,
                         "name must be a session name (letters, digits, '_', '.', '-'; at "
                         "most %d; not starting with '.' or '-')",
                         CSOCK_NAME_MAX);
                return -1;
            }
            a->name = v->str;
        } else if (strcmp(k, "diff") == 0) {
            if (v->type != JSON_BOOL) {
                snprintf(err, errlen, "diff must be true or false");
                return -1;
            }
            a->diff = v->boolean;
        } else if (strcmp(k, "label") == 0) {
            /* the session checks the characters and answers with one line */
            if (v->type != JSON_STRING || v->len == 0 || v->len > 64 || strlen(v->str) != v->len) {
                snprintf(err, errlen,
                         "label must be a snapshot's name (letters, digits, '_', '.', '-'; "
                         "at most 64)");
                return -1;
            }
            a->label = v->str;
        }
    }
    const char *need = strstr(tools[tool].input_schema, "\"required\":[\"");
    if (need) {
        need += strlen("\"required\":[\"");
        const char *end = strchr(need, '"');
        char key[32];
        snprintf(key, sizeof key, "%.*s", (int)(end - need), need);
        if (!json_get(args, key)) {
            snprintf(err, errlen, "missing argument '%s'", key);
            return -1;
        }
    }
    return 0;
}

void mcp_tools_call(const struct mcp_server *s, int tool, const struct json_value *args,
                    const char *id)
{
    struct args a;
    char err[256];
    if (check_args(tool, args, &a, err, sizeof err) < 0) {
        if (s->args_as_results) {
            struct result res = {0};
            mcp_result_error(id, &res, "invalid arguments for %s: %s", tools[tool].name, err);
        } else {
            char *msg = xasprintf("invalid arguments for %s: %s", tools[tool].name, err);
            mcp_send_error(id, MCP_INVALID_PARAMS, msg);
            free(msg);
        }
        return;
    }
    const char *name = tools[tool].name;
    if (strcmp(name, "run_command") == 0)
        mcp_run_command(s, &a, id);
    else if (strcmp(name, "start_background") == 0)
        mcp_start_background(s, &a, id);
    else if (strcmp(name, "list_jobs") == 0)
        mcp_list_jobs(s, id);
    else if (strcmp(name, "read_log") == 0)
        mcp_read_log(s, &a, id);
    else if (strcmp(name, "stop_job") == 0)
        mcp_stop_job(s, &a, id);
    else if (strcmp(name, "cancel_turn") == 0)
        mcp_cancel_turn(s, &a, id);
    else if (strcmp(name, "publish_port") == 0)
        mcp_publish_port(s, &a, id);
    else if (strcmp(name, "unpublish_port") == 0)
        mcp_unpublish_port(s, &a, id);
    else if (strcmp(name, "review_changes") == 0)
        mcp_review_changes(s, &a, id);
    else if (strcmp(name, "fork_session") == 0)
        mcp_fork_session(s, &a, id);
    else if (strcmp(name, "snapshot_workspace") == 0)
        mcp_snapshot_workspace(s, &a, id);
    else if (strcmp(name, "rollback_workspace") == 0)
        mcp_rollback_workspace(s, &a, id);
    else
        mcp_session_status(s, id);
}
