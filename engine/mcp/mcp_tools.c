/* mcp_tools.c — see mcp_tools.h.
 *
 * Results: a command that ran and exited non-zero is a normal result (isError false): the
 * exit code is the answer the model asked for, and MCP keeps isError for a tool that could not
 * do its work. isError is true when the session could not be reached, refused the request (a
 * 4xx/5xx answer, e.g. a ninth background job), or the exec stream ended without an exit. */
#include "mcp/mcp_tools.h"

#include <arpa/inet.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/session_protocol.h"
#include "base/util.h"
#include "base/visible.h"
#include "client/client_http.h"
#include "client/client_ndjson.h"
#include "mcp/mcp_bound.h"
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
     "\"stdout_truncated\":{\"type\":\"boolean\"},\"stderr_truncated\":{\"type\":\"boolean\"}},"
     "\"required\":[\"exit_code\",\"timed_out\",\"refusals\",\"stdout_truncated\","
     "\"stderr_truncated\"]}"},
    {"start_background",
     "Start a shell command as a background job of the sandbox (a server, a watcher, a long "
     "build) and return at once with its PID, its log file and how to stop it. Read its output "
     "with read_log, list jobs with list_jobs, end it with stop_job. At most eight run at once. " SANDBOX_NOTE,
     "{\"type\":\"object\",\"properties\":{"
     "\"command\":{\"type\":\"string\",\"minLength\":1,\"description\":\"a bash command line\"},"
     "\"turn\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128}},"
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
     "last N lines; wait (seconds, at most 60), when the log has nothing after offset, waits "
     "that long for the job's next output and returns as soon as some comes or the job has "
     "ended. At most 64 KiB come back: the first and last 32 KiB when the log is longer, as "
     "the result says.",
     "{\"type\":\"object\",\"properties\":{"
     "\"pid\":{\"type\":\"integer\",\"minimum\":1},"
     "\"offset\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"bytes to skip\"},"
     "\"tail_lines\":{\"type\":\"integer\",\"minimum\":1},"
     "\"wait\":{\"type\":\"number\",\"minimum\":0,\"maximum\":60,\"description\":\"seconds "
     "to wait for new output when there is none after offset\"}},"
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

/* A call's result being built: its text, and its structuredContent as JSON text (none when
 * empty). */
struct result {
    struct json_buf text;
    struct json_buf structured;
    bool is_error;
};

static void send_result(const char *id, struct result *r)
{
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"content\":[{\"type\":\"text\",\"text\":");
    json_buf_string(&b, r->text.data ? r->text.data : "", r->text.len);
    json_buf_lit(&b, "}]");
    if (r->structured.len && !r->is_error) {
        json_buf_lit(&b, ",\"structuredContent\":");
        json_buf_raw(&b, r->structured.data, r->structured.len);
    }
    if (r->is_error)
        json_buf_lit(&b, ",\"isError\":true");
    else
        json_buf_lit(&b, ",\"isError\":false");
    json_buf_lit(&b, "}");
    mcp_send_result(id, b.data, b.len);
    json_buf_free(&b);
    json_buf_free(&r->text);
    json_buf_free(&r->structured);
}

static void tool_error(const char *id, struct result *r, const char *fmt, ...) CORDON_PRINTF(3, 4);

/* A result with isError true and one line saying why. */
static void tool_error(const char *id, struct result *r, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    r->text.len = 0;
    json_buf_raw(&r->text, line, strlen(line));
    r->is_error = true;
    send_result(id, r);
}

/* Arguments ------------------------------------------------------------------------------ */

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
};

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
        } else if (strcmp(k, "wait") == 0) {
            if (v->type != JSON_NUMBER || !(v->number >= 0) || v->number > MCP_LOG_WAIT_MAX) {
                snprintf(err, errlen, "wait must be a number of seconds from 0 to %d",
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

/* The session's API ---------------------------------------------------------------------- */

/* One request. 0 for a 2xx answer (a non-streamed body in h->body); -1 with the line saying
 * why in err. h is chttp_close'd by the caller either way. */
static int api_until(const struct mcp_server *s, struct chttp *h, const char *method,
                     const char *path, const char *body, size_t body_len, chttp_sink sink,
                     void *ctx, unsigned long long deadline_ms, char *err, size_t errlen)
{
    if (chttp_open(h, "mcp", s->session, true) != 0) {
        snprintf(err, errlen, "the socket path of session '%s' is too long", s->session);
        return -1;
    }
    h->body_deadline_ms = deadline_ms;
    int rc = chttp_request(h, method, path, body, body_len, sink, ctx);
    if (h->sink_stopped)
        return 0; /* the sink stopped it and keeps why */
    if (rc < 0 && !h->status) {
        if (h->missing)
            snprintf(err, errlen, "the sandbox session '%s' is not running (it ended)", s->session);
        else if (h->connect_errno)
            snprintf(err, errlen, "cannot connect to the sandbox session '%s': %s", s->session,
                     strerror(h->connect_errno));
        else
            snprintf(err, errlen, "lost the connection to the sandbox session '%s': %s", s->session,
                     h->failure[0] ? h->failure : "the HTTP exchange failed");
        return -1;
    }
    if (!chttp_ok(h)) {
        char perr[160];
        struct json_value *v = h->body ? json_parse(h->body, h->body_len, perr, sizeof perr) : NULL;
        const struct json_value *e = json_get(v, "error");
        if (e && e->type == JSON_STRING)
            snprintf(err, errlen, "%s", e->str);
        else
            snprintf(err, errlen, "the session answered HTTP %ld", h->status);
        json_free(v);
        return -1;
    }
    if (rc < 0) {
        snprintf(err, errlen, "lost the connection to the sandbox session '%s': %s", s->session,
                 h->failure[0] ? h->failure : "the HTTP exchange failed");
        return -1;
    }
    return 0;
}

/* api_until without a deadline. */
static int api(const struct mcp_server *s, struct chttp *h, const char *method, const char *path,
               const char *body, size_t body_len, chttp_sink sink, void *ctx, char *err,
               size_t errlen)
{
    return api_until(s, h, method, path, body, body_len, sink, ctx, 0, err, errlen);
}

/* A 2xx answer's JSON object, or NULL with why in err. */
static struct json_value *api_json(const struct mcp_server *s, struct chttp *h, const char *method,
                                   const char *path, const char *body, char *err, size_t errlen)
{
    if (api(s, h, method, path, body, body ? strlen(body) : 0, NULL, NULL, err, errlen) < 0)
        return NULL;
    char perr[160];
    struct json_value *v = json_parse(h->body ? h->body : "", h->body_len, perr, sizeof perr);
    if (!v || v->type != JSON_OBJECT) {
        snprintf(err, errlen, "the session answered with malformed JSON: %s",
                 v ? "not an object" : perr);
        json_free(v);
        return NULL;
    }
    return v;
}

static const char *str_of(const struct json_value *o, const char *key)
{
    const struct json_value *v = json_get(o, key);
    return v && v->type == JSON_STRING ? v->str : NULL;
}

static bool int_of(const struct json_value *o, const char *key, long long *out)
{
    const struct json_value *v = json_get(o, key);
    if (!v || v->type != JSON_NUMBER)
        return false;
    *out = (long long)v->number;
    return true;
}

/* run_command ----------------------------------------------------------------------------- */

/* The run_command calls in flight, for notifications/cancelled: the request's id, the
 * command's pid once the session said it, and whether the client cancelled it. */
struct inflight {
    char *id;
    long long pid;
    bool cancelled;
    struct inflight *next;
};

static pthread_mutex_t inflight_lock = PTHREAD_MUTEX_INITIALIZER;
static struct inflight *inflight;

struct stop_req {
    const struct mcp_server *s;
    long long pid;
};

static void *stop_thread(void *arg)
{
    struct stop_req *q = arg;
    struct chttp h;
    char path[64], err[512];
    snprintf(path, sizeof path, "/v1/jobs/%lld/stop", q->pid);
    if (api(q->s, &h, "POST", path, NULL, 0, NULL, NULL, err, sizeof err) < 0)
        fprintf(stderr, "cordon: mcp: cannot stop the cancelled command %lld: %s\n", q->pid, err);
    chttp_close(&h);
    free(q);
    return NULL;
}

/* Stop the command's process group, on a thread of its own (a stop waits out the grace). */
static void stop_async(const struct mcp_server *s, long long pid)
{
    struct stop_req *q = xcalloc(1, sizeof *q);
    q->s = s;
    q->pid = pid;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, stop_thread, q) != 0) {
        fprintf(stderr, "cordon: mcp: cannot stop the cancelled command %lld: no thread\n", pid);
        free(q);
    }
    pthread_attr_destroy(&at);
}

void mcp_tools_cancel(const struct mcp_server *s, const char *id)
{
    long long pid = 0;
    pthread_mutex_lock(&inflight_lock);
    for (struct inflight *e = inflight; e; e = e->next)
        if (strcmp(e->id, id) == 0 && !e->cancelled) {
            e->cancelled = true;
            pid = e->pid;
        }
    pthread_mutex_unlock(&inflight_lock);
    if (pid > 0)
        stop_async(s, pid);
}

struct run {
    const struct mcp_server *s;
    struct inflight *call; /* registered while the exec runs */
    struct ndjson_lines lines;
    struct mcp_bound out, errs;
    bool got_exit, timed_out, stopped, ran_outside;
    int exit_code;
    struct json_buf refusals; /* the exit event's array, as JSON */
    struct json_buf notes;    /* refusal and question lines for the text */
    char failure[256];        /* a malformed stream */
};

static int on_line(void *ctx, const char *line, size_t len)
{
    struct run *r = ctx;
    struct ndjson_event ev;
    int rc = 0;
    if (ndjson_decode(line, len, &ev, r->failure, sizeof r->failure) < 0) {
        rc = -1;
        goto out;
    }
    switch (ev.kind) {
    case NDJSON_OUTPUT:
        mcp_bound_add(ev.fd == 2 ? &r->errs : &r->out, ev.data, ev.len);
        break;
    case NDJSON_EXIT:
        if (r->got_exit)
            break;
        r->got_exit = true;
        /* The CLI's numbers: a timeout is 124 (as GNU timeout), not the TERM that ended it. */
        r->exit_code = ev.timed_out ? CORDON_EXIT_TIMEOUT : ev.exit_code;
        r->timed_out = ev.timed_out;
        r->stopped = ev.stopped;
        r->ran_outside = ev.ran_outside;
        if (ev.refusals)
            mcp_write_value(&r->refusals, ev.refusals);
        for (size_t i = 0; ev.refusals && i < ev.refusals->len; i++) {
            const char *reason = str_of(&ev.refusals->items[i], "reason");
            if (reason)
                json_buf_printf(&r->notes, "cordon: %s%s\n", reason,
                                ev.ran_outside ? " (then run outside, as approved)" : "");
        }
        break;
    case NDJSON_APPROVAL: {
        const char *q = str_of(ev.approval, "question");
        if (q)
            json_buf_printf(&r->notes, "cordon asked the user: %s\n", q);
        mcp_ask(r->s, ev.approval);
        break;
    }
    case NDJSON_STARTED: {
        pthread_mutex_lock(&inflight_lock);
        r->call->pid = ev.pid;
        bool cancelled = r->call->cancelled;
        pthread_mutex_unlock(&inflight_lock);
        if (cancelled) /* cancelled before the session said its pid */
            stop_async(r->s, ev.pid);
        break;
    }
    case NDJSON_OTHER:
        break;
    }
out:
    ndjson_event_free(&ev);
    return rc;
}

static int on_stream(void *ctx, const char *data, size_t len)
{
    struct run *r = ctx;
    return ndjson_feed(&r->lines, data, len, on_line, r) < 0 ? -1 : 0;
}

static void add_stream(struct json_buf *t, const char *label, const struct mcp_bound *b)
{
    size_t n;
    if (b->total == 0)
        return;
    char *text = mcp_bound_text(b, label, &n);
    json_buf_printf(t, "[%s]\n", label);
    json_buf_raw(t, text, n);
    if (n && text[n - 1] != '\n')
        json_buf_lit(t, "\n");
    free(text);
}

static char *exec_body(const struct args *a, bool background)
{
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"command\":");
    json_buf_string(&b, a->command, strlen(a->command));
    if (background)
        json_buf_lit(&b, ",\"background\":true");
    if (a->has_timeout) {
        char secs[40];
        snprintf(secs, sizeof secs, "%.15g", a->timeout);
        if (strtod(secs, NULL) != a->timeout)
            snprintf(secs, sizeof secs, "%.17g", a->timeout);
        json_buf_printf(&b, ",\"timeout\":%s", secs);
    }
    if (a->turn) {
        json_buf_lit(&b, ",\"turn\":");
        json_buf_string(&b, a->turn, strlen(a->turn));
    }
    json_buf_lit(&b, "}");
    return b.data;
}

static void run_command(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct inflight call = {.id = (char *)id};
    struct run r = {.s = s, .call = &call};
    struct chttp h;
    char err[512];
    char *body = exec_body(a, false);
    mcp_bound_init(&r.out, MCP_STREAM_MAX / 2, MCP_STREAM_MAX / 2);
    mcp_bound_init(&r.errs, MCP_STREAM_MAX / 2, MCP_STREAM_MAX / 2);
    pthread_mutex_lock(&inflight_lock);
    call.next = inflight;
    inflight = &call;
    pthread_mutex_unlock(&inflight_lock);

    int rc = api(s, &h, "POST", "/v1/exec", body, strlen(body), on_stream, &r, err, sizeof err);
    if (rc < 0)
        json_buf_printf(&res.text, "cordon: %s", err);
    else if (h.sink_stopped || (!r.got_exit && ndjson_finish(&r.lines, on_line, &r) < 0))
        json_buf_printf(&res.text, "cordon: the session sent a malformed exec stream: %s",
                        r.failure);
    else if (!r.got_exit)
        json_buf_lit(&res.text, "cordon: the session closed the connection before the command "
                                "finished (the session ended?)");
    res.is_error = res.text.len > 0;
    if (!res.is_error) {
        add_stream(&res.text, "stdout", &r.out);
        add_stream(&res.text, "stderr", &r.errs);
        if (r.out.total == 0 && r.errs.total == 0)
            json_buf_lit(&res.text, "(no output)\n");
        json_buf_printf(&res.text, "[exit code %d]", r.exit_code);
        if (r.timed_out)
            json_buf_lit(&res.text, " timed out: the command was stopped");
        else if (r.stopped)
            json_buf_lit(&res.text, " stopped (stop_job, cancel_turn or the session's end)");
        if (r.ran_outside)
            json_buf_lit(&res.text, " (ran again outside the sandbox, as the user approved)");
        json_buf_lit(&res.text, "\n");
        if (r.notes.len)
            json_buf_raw(&res.text, r.notes.data, r.notes.len);
        json_buf_printf(&res.structured,
                        "{\"exit_code\":%d,\"timed_out\":%s,\"stopped\":%s,\"ran_outside\":%s,"
                        "\"refusals\":%s,\"stdout_truncated\":%s,\"stderr_truncated\":%s}",
                        r.exit_code, r.timed_out ? "true" : "false", r.stopped ? "true" : "false",
                        r.ran_outside ? "true" : "false", r.refusals.len ? r.refusals.data : "[]",
                        mcp_bound_dropped(&r.out) ? "true" : "false",
                        mcp_bound_dropped(&r.errs) ? "true" : "false");
    }

    pthread_mutex_lock(&inflight_lock);
    for (struct inflight **p = &inflight; *p; p = &(*p)->next)
        if (*p == &call) {
            *p = call.next;
            break;
        }
    pthread_mutex_unlock(&inflight_lock);
    /* a cancelled request gets no response (MCP's cancellation) */
    if (call.cancelled) {
        json_buf_free(&res.text);
        json_buf_free(&res.structured);
    } else {
        send_result(id, &res);
    }
    chttp_close(&h);
    free(body);
    mcp_bound_free(&r.out);
    mcp_bound_free(&r.errs);
    ndjson_lines_free(&r.lines);
    json_buf_free(&r.refusals);
    json_buf_free(&r.notes);
}

/* The others ------------------------------------------------------------------------------ */

static void start_background(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    long long pid;
    char *body = exec_body(a, true);
    struct json_value *v = api_json(s, &h, "POST", "/v1/exec", body, err, sizeof err);
    const char *msg = str_of(v, "message"), *log = str_of(v, "log");
    if (!v) {
        tool_error(id, &res, "cordon: %s", err);
    } else if (!msg || !log || !int_of(v, "pid", &pid)) {
        tool_error(id, &res, "cordon: the session's answer has no pid, log or message");
    } else {
        json_buf_raw(&res.text, msg, strlen(msg));
        json_buf_printf(&res.structured, "{\"pid\":%lld,\"log\":", pid);
        json_buf_string(&res.structured, log, strlen(log));
        json_buf_lit(&res.structured, "}");
        send_result(id, &res);
    }
    json_free(v);
    chttp_close(&h);
    free(body);
}

static void job_line(struct json_buf *t, const struct json_value *j)
{
    long long pid = 0, code;
    const char *state = str_of(j, "state"), *command = str_of(j, "command");
    const char *turn = str_of(j, "turn"), *log = str_of(j, "log");
    const struct json_value *bg = json_get(j, "background");
    (void)int_of(j, "pid", &pid);
    json_buf_printf(t, "%lld %s", pid, state ? state : "?");
    if (int_of(j, "exit_code", &code))
        json_buf_printf(t, " (exit %lld)", code);
    json_buf_printf(t, " %s",
                    bg && bg->type == JSON_BOOL && bg->boolean ? "background" : "foreground");
    if (turn)
        json_buf_printf(t, " turn=%s", turn);
    if (log)
        json_buf_printf(t, " log=%s", log);
    json_buf_printf(t, ": %s\n", command ? command : "");
}

/* The answer's object, trimmed, as structuredContent. */
static void structured_body(struct result *res, const struct json_value *v)
{
    mcp_write_value(&res->structured, v);
}

static void list_jobs(const struct mcp_server *s, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    struct json_value *v = api_json(s, &h, "GET", "/v1/jobs", NULL, err, sizeof err);
    const struct json_value *jobs = json_get(v, "jobs");
    if (!v) {
        tool_error(id, &res, "cordon: %s", err);
    } else if (!jobs || jobs->type != JSON_ARRAY) {
        tool_error(id, &res, "cordon: the session's answer has no jobs array");
    } else {
        for (size_t i = 0; i < jobs->len; i++)
            job_line(&res.text, &jobs->items[i]);
        if (jobs->len == 0)
            json_buf_lit(&res.text, "no jobs\n");
        structured_body(&res, v);
        send_result(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}

struct log_read {
    unsigned long long skip;  /* bytes still to skip (offset) */
    unsigned long long size;  /* every byte of the log */
    unsigned long long fresh; /* bytes after the skip */
    struct mcp_bound kept;
};

static int on_log(void *ctx, const char *data, size_t len)
{
    struct log_read *l = ctx;
    l->size += len;
    if (l->skip >= len) {
        l->skip -= len;
        return 0;
    }
    data += l->skip;
    len -= (size_t)l->skip;
    l->skip = 0;
    l->fresh += len;
    mcp_bound_add(&l->kept, data, len);
    return 0;
}

/* Following the log: stop at the first bytes after the skip. */
static int on_log_wait(void *ctx, const char *data, size_t len)
{
    struct log_read *l = ctx;
    on_log(ctx, data, len);
    return l->fresh > 0 ? -1 : 0;
}

static void read_log(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    char path[64];
    struct log_read l = {.skip = (unsigned long long)a->offset};
    size_t n;
    /* tail_lines wants the end: keep the last bytes only */
    if (a->has_tail_lines)
        mcp_bound_init(&l.kept, 0, MCP_STREAM_MAX);
    else
        mcp_bound_init(&l.kept, MCP_STREAM_MAX / 2, MCP_STREAM_MAX / 2);
    snprintf(path, sizeof path, "/v1/jobs/%lld/log", a->pid);
    char *text = NULL;
    const char *waited = NULL; /* how a wait ended, when there was one */
    if (api(s, &h, "GET", path, NULL, 0, on_log, &l, err, sizeof err) < 0) {
        tool_error(id, &res, "cordon: %s", err);
        goto out;
    }
    if (a->wait > 0 && l.fresh == 0) {
        /* nothing after offset: follow the log (from its start, skipping what was read) until
         * the first new bytes, the job's end or the wait's */
        unsigned long long skip = (unsigned long long)a->offset; /* >= l.size: none was fresh */
        struct log_read w = {.skip = skip};
        mcp_bound_init(&w.kept, 0, MCP_STREAM_MAX);
        chttp_close(&h);
        snprintf(path, sizeof path, "/v1/jobs/%lld/log?follow=1", a->pid);
        int rc = api_until(s, &h, "GET", path, NULL, 0, on_log_wait, &w,
                           clock_mono_ms() + (unsigned long long)(a->wait * 1000), err, sizeof err);
        if (rc < 0) {
            mcp_bound_free(&w.kept);
            tool_error(id, &res, "cordon: %s", err);
            goto out;
        }
        waited = w.fresh ? NULL : h.timed_out ? "none came while waiting" : "the job has ended";
        mcp_bound_free(&l.kept);
        l = w;
        l.size = w.fresh ? w.size : skip;
    }
    text = mcp_bound_text(&l.kept, "the log", &n);
    const char *from = text;
    bool cut = mcp_bound_dropped(&l.kept) > 0;
    if (a->has_tail_lines) {
        /* the start of the last tail_lines lines (a last line without '\n' counts) */
        long long lines = 0;
        const char *p = text + n;
        if (p > text && p[-1] == '\n')
            p--;
        while (p > text) {
            if (p[-1] == '\n' && ++lines == a->tail_lines)
                break;
            p--;
        }
        /* lines before them were left out as asked: cut only when fewer than asked were kept */
        cut = p == text && mcp_bound_dropped(&l.kept) > 0;
        from = p;
    }
    unsigned long long offset = (unsigned long long)a->offset;
    if (offset > l.size)
        offset = l.size;
    json_buf_raw(&res.text, from, n - (size_t)(from - text));
    if (cut)
        json_buf_printf(&res.text, "%s[cordon: only the last %d KiB of the log were read]\n",
                        n && text[n - 1] != '\n' ? "\n" : "", MCP_STREAM_MAX / 1024);
    if (l.size == offset && waited)
        json_buf_printf(&res.text, "[cordon: the log has no bytes after offset %llu; %s]\n", offset,
                        waited);
    else if (l.size == offset)
        json_buf_printf(&res.text, "[cordon: the log has no bytes after offset %llu]\n", offset);
    json_buf_printf(&res.structured,
                    "{\"pid\":%lld,\"size\":%llu,\"offset\":%llu,\"next_offset\":%llu,"
                    "\"truncated\":%s}",
                    a->pid, l.size, offset, l.size, mcp_bound_dropped(&l.kept) ? "true" : "false");
    send_result(id, &res);
out:
    free(text);
    mcp_bound_free(&l.kept);
    chttp_close(&h);
}

static void stop_job(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512], path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/stop", a->pid);
    struct json_value *v = api_json(s, &h, "POST", path, NULL, err, sizeof err);
    if (!v) {
        tool_error(id, &res, "cordon: %s", err);
    } else {
        job_line(&res.text, v);
        structured_body(&res, v);
        send_result(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}

static void cancel_turn(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    char *turn = chttp_escape(a->turn);
    char *path = xasprintf("/v1/turns/%s/cancel", turn);
    struct json_value *v = api_json(s, &h, "POST", path, NULL, err, sizeof err);
    const struct json_value *stopped = json_get(v, "stopped");
    if (!v) {
        tool_error(id, &res, "cordon: %s", err);
    } else {
        json_buf_printf(&res.text, "turn %s: stopped", a->turn);
        for (size_t i = 0; stopped && stopped->type == JSON_ARRAY && i < stopped->len; i++)
            json_buf_printf(&res.text, " %lld", (long long)stopped->items[i].number);
        if (!stopped || stopped->type != JSON_ARRAY || stopped->len == 0)
            json_buf_lit(&res.text, " nothing (no running command of this turn)");
        json_buf_lit(&res.text, "\n");
        structured_body(&res, v);
        send_result(id, &res);
    }
    json_free(v);
    free(path);
    free(turn);
    chttp_close(&h);
}

/* ADDR:PORT as a URL's authority: an IPv6 address in brackets. */
static void host_and_port(struct json_buf *t, const char *addr, long long port)
{
    bool v6 = strchr(addr, ':') != NULL;
    json_buf_printf(t, "%s%s%s:%lld", v6 ? "[" : "", addr, v6 ? "]" : "", port);
}

/* Whether addr is an IP address other than loopback (127.0.0.0/8, ::1, ::ffff:127.x.y.z): one
 * that other machines may reach. A string that is no address is the session's to refuse. */
static bool beyond_loopback(const char *addr)
{
    unsigned char b[16];
    if (inet_pton(AF_INET, addr, b) == 1)
        return b[0] != 127;
    if (inet_pton(AF_INET6, addr, b) != 1)
        return false;
    static const unsigned char loop6[16] = {[15] = 1};
    static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
    if (memcmp(b, loop6, 16) == 0)
        return false;
    return !(memcmp(b, mapped, 12) == 0 && b[12] == 127);
}

/* How long the person has to answer whether a port may be published beyond loopback. */
#define PUBLISH_ASK_S 120.0

/* A port published on an address other than loopback is reachable from other machines: the
 * agent asked for it, so a person says yes (an elicitation) or it is refused. 0 when the person
 * allowed it, else -1 with the one line in err (declined, no answer, a client that cannot ask). */
static int publish_asked(const struct mcp_server *s, const struct args *a, char *err, size_t errlen)
{
    static atomic_llong next_tag = -1; /* approvals' tags are their (positive) ids */
    char *addr = visible_dup(a->host_addr);
    char port[24] = "the same port";
    if (a->has_host_port)
        snprintf(port, sizeof port, "port %lld", a->host_port);
    snprintf(err, errlen,
             "publishing sandbox port %lld on %s (not loopback: other machines could reach it) "
             "needs a person's yes",
             a->port, addr);
    if (!s->elicitation) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n,
                 ", and this MCP client cannot ask one: refused (publish on 127.0.0.1, or run "
                 "`cordon publish %s %lld --host-addr %s` yourself)",
                 s->session, a->port, addr);
        free(addr);
        return -1;
    }
    char *message = xasprintf("cordon (the sandbox running this agent's commands) asks: the "
                              "agent wants sandbox port %lld published on the host at %s, %s: "
                              "not loopback, so other machines on that network can reach it. "
                              "allow: publish it; deny: refuse it.",
                              a->port, addr, port);
    static const char *const choices[] = {"allow", "deny"};
    const char *answer = NULL;
    char why[256];
    int rc = -1;
    if (mcp_elicit_choice(message, NULL, choices, 2, atomic_fetch_sub(&next_tag, 1), PUBLISH_ASK_S,
                          &answer, why, sizeof why) < 0) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, ": refused (%s)", why);
    } else if (answer && strcmp(answer, "allow") == 0) {
        rc = 0;
    } else {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, ": the person did not allow it, refused");
    }
    free(message);
    free(addr);
    return rc;
}

static void publish_port(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    if (a->host_addr && beyond_loopback(a->host_addr) && publish_asked(s, a, err, sizeof err) < 0) {
        tool_error(id, &res, "cordon: %s", err);
        return;
    }
    struct json_buf body = {0};
    json_buf_printf(&body, "{\"port\":%lld", a->port);
    if (a->has_host_port)
        json_buf_printf(&body, ",\"host_port\":%lld", a->host_port);
    if (a->host_addr) {
        json_buf_lit(&body, ",\"host_addr\":");
        json_buf_string(&body, a->host_addr, strlen(a->host_addr));
    }
    json_buf_lit(&body, "}");
    struct json_value *v = api_json(s, &h, "POST", "/v1/ports", body.data, err, sizeof err);
    const char *addr = str_of(v, "host_addr");
    long long port, host_port;
    if (!v) {
        tool_error(id, &res, "cordon: %s", err);
    } else if (!addr || !int_of(v, "port", &port) || !int_of(v, "host_port", &host_port)) {
        tool_error(id, &res, "cordon: the session's answer has no port, host_addr or host_port");
    } else {
        json_buf_printf(&res.text, "sandbox port %lld is published on the host at ", port);
        host_and_port(&res.text, addr, host_port);
        json_buf_lit(&res.text, " (open it at http://");
        host_and_port(&res.text, addr, host_port);
        json_buf_lit(&res.text, "/ for a web server)\n");
        structured_body(&res, v);
        send_result(id, &res);
    }
    json_free(v);
    json_buf_free(&body);
    chttp_close(&h);
}

static void unpublish_port(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512], path[48];
    snprintf(path, sizeof path, "/v1/ports/%lld", a->port);
    struct json_value *v = api_json(s, &h, "DELETE", path, NULL, err, sizeof err);
    if (!v) {
        tool_error(id, &res, "cordon: %s", err);
    } else {
        json_buf_printf(&res.text, "sandbox port %lld is no longer published on the host\n",
                        a->port);
        structured_body(&res, v);
        send_result(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}

/* The session's published ports and granted host ports, for session_status's text. */
static void ports_lines(struct json_buf *t, const struct json_value *v)
{
    const struct json_value *ports = json_get(v, "ports");
    if (ports && ports->type == JSON_ARRAY) {
        json_buf_lit(t, "published ports:");
        if (ports->len == 0)
            json_buf_lit(t, " none");
        json_buf_lit(t, "\n");
        for (size_t i = 0; i < ports->len; i++) {
            const struct json_value *p = &ports->items[i];
            const char *addr = str_of(p, "host_addr");
            long long port, host_port, open;
            if (!addr || !int_of(p, "port", &port) || !int_of(p, "host_port", &host_port))
                continue;
            json_buf_printf(t, "  %lld -> ", port);
            host_and_port(t, addr, host_port);
            if (int_of(p, "open", &open))
                json_buf_printf(t, " (%lld open)", open);
            json_buf_lit(t, "\n");
        }
    }
    const struct json_value *hp = json_get(v, "host_ports");
    if (hp && hp->type == JSON_ARRAY) {
        json_buf_lit(t, "host ports reachable inside:");
        size_t n = 0;
        for (size_t i = 0; i < hp->len; i++)
            if (hp->items[i].type == JSON_NUMBER) {
                json_buf_printf(t, " %.0f", hp->items[i].number);
                n++;
            }
        json_buf_printf(t, "%s\n", n ? "" : " none");
    }
}

static void session_status(const struct mcp_server *s, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    long long n;
    struct json_value *v = api_json(s, &h, "GET", "/v1/session", NULL, err, sizeof err);
    if (!v) {
        tool_error(id, &res, "cordon: %s", err);
    } else {
        static const char *const keys[] = {"name", "profile", "workspace"};
        for (size_t i = 0; i < ARRAY_LEN(keys); i++) {
            const char *val = str_of(v, keys[i]);
            json_buf_printf(&res.text, "%s: %s\n", keys[i], val ? val : "-");
        }
        if (int_of(v, "jobs_running", &n))
            json_buf_printf(&res.text, "jobs_running: %lld\n", n);
        ports_lines(&res.text, v);
        structured_body(&res, v);
        send_result(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}

void mcp_tools_call(const struct mcp_server *s, int tool, const struct json_value *args,
                    const char *id)
{
    struct args a;
    char err[256];
    if (check_args(tool, args, &a, err, sizeof err) < 0) {
        if (s->args_as_results) {
            struct result res = {0};
            tool_error(id, &res, "invalid arguments for %s: %s", tools[tool].name, err);
        } else {
            char *msg = xasprintf("invalid arguments for %s: %s", tools[tool].name, err);
            mcp_send_error(id, MCP_INVALID_PARAMS, msg);
            free(msg);
        }
        return;
    }
    const char *name = tools[tool].name;
    if (strcmp(name, "run_command") == 0)
        run_command(s, &a, id);
    else if (strcmp(name, "start_background") == 0)
        start_background(s, &a, id);
    else if (strcmp(name, "list_jobs") == 0)
        list_jobs(s, id);
    else if (strcmp(name, "read_log") == 0)
        read_log(s, &a, id);
    else if (strcmp(name, "stop_job") == 0)
        stop_job(s, &a, id);
    else if (strcmp(name, "cancel_turn") == 0)
        cancel_turn(s, &a, id);
    else if (strcmp(name, "publish_port") == 0)
        publish_port(s, &a, id);
    else if (strcmp(name, "unpublish_port") == 0)
        unpublish_port(s, &a, id);
    else
        session_status(s, id);
}
