/* mcp_run.c — the tools that run a command (mcp_call.h): run_command (POST /v1/exec, its
 * NDJSON stream decoded by client_ndjson into a bounded stdout and stderr, the exit, the
 * refusals and the questions, which go to mcp_ask.c), start_background, and a run_command the
 * client cancelled (its process group stopped as stop_job does). The calls in flight are the
 * only state shared between the calls' threads, under inflight_lock. */
#include "mcp/mcp_call.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "base/visible.h"
#include "client/client_call.h"
#include "client/client_exec.h"
#include "client/client_ndjson.h"
#include "client/client_reply.h"
#include "mcp/mcp_bound.h"
#include "mcp/mcp_wire.h"

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
    if (ccall_request(&h, q->s->session, "POST", path, NULL, 0, NULL, NULL, 0, err, sizeof err) < 0)
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
    struct json_buf trusted;  /* its host_trusted_changes, as JSON */
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
        if (ev.host_trusted)
            mcp_write_value(&r->trusted, ev.host_trusted);
        /* one line per host-trusted path changed, for the agent to show the person */
        for (size_t i = 0; ev.host_trusted && i < ev.host_trusted->len; i++) {
            const struct json_value *c = &ev.host_trusted->items[i];
            const char *path = reply_str(c, "path"), *change = reply_str(c, "change"),
                       *why = reply_str(c, "why");
            char *shown = path && change && why ? visible_dup(path) : NULL; /* one line each */
            if (shown)
                json_buf_printf(&r->notes, "cordon: %s what the host runs or trusts: %s (%s)\n",
                                change, shown, why);
            free(shown);
        }
        for (size_t i = 0; ev.refusals && i < ev.refusals->len; i++) {
            const char *reason = reply_str(&ev.refusals->items[i], "reason");
            if (reason)
                json_buf_printf(&r->notes, "cordon: %s%s\n", reason,
                                ev.ran_outside ? " (then run outside, as approved)" : "");
        }
        break;
    case NDJSON_APPROVAL: {
        const char *q = reply_str(ev.approval, "question");
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
    case NDJSON_SESSION_ENDED:
        json_buf_printf(&r->notes, "cordon: the session ended (%s) while the command ran\n",
                        ev.reason);
        break;
    case NDJSON_DROPPED:
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

/* The POST /v1/exec body of a run_command or start_background call: client_exec's. */
static char *exec_body(const struct args *a, bool background)
{
    struct cexec_args e = {.command = (char *)a->command,
                           .background = background,
                           .has_timeout = a->has_timeout,
                           .timeout = a->timeout,
                           .turn = a->turn,
                           .restart = a->restart,
                           .has_backoff = a->has_backoff,
                           .backoff = a->backoff};
    size_t len;
    return cexec_body(&e, &len);
}

void mcp_run_command(const struct mcp_server *s, const struct args *a, const char *id)
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

    int rc = ccall_request(&h, s->session, "POST", "/v1/exec", body, strlen(body), on_stream, &r, 0,
                           err, sizeof err);
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
                        "\"refusals\":%s,\"host_trusted_changes\":%s,\"stdout_truncated\":%s,"
                        "\"stderr_truncated\":%s}",
                        r.exit_code, r.timed_out ? "true" : "false", r.stopped ? "true" : "false",
                        r.ran_outside ? "true" : "false", r.refusals.len ? r.refusals.data : "[]",
                        r.trusted.len ? r.trusted.data : "[]",
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
        mcp_result_send(id, &res);
    }
    chttp_close(&h);
    free(body);
    mcp_bound_free(&r.out);
    mcp_bound_free(&r.errs);
    ndjson_lines_free(&r.lines);
    json_buf_free(&r.refusals);
    json_buf_free(&r.trusted);
    json_buf_free(&r.notes);
}

void mcp_start_background(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    long long pid;
    char *body = exec_body(a, true);
    struct json_value *v = ccall_json(&h, s->session, "POST", "/v1/exec", body, err, sizeof err);
    const char *msg = reply_str(v, "message"), *log = reply_str(v, "log");
    if (!v) {
        mcp_result_error(id, &res, "cordon: %s", err);
    } else if (!msg || !log || !reply_int(v, "pid", &pid)) {
        mcp_result_error(id, &res, "cordon: the session's answer has no pid, log or message");
    } else {
        json_buf_raw(&res.text, msg, strlen(msg));
        json_buf_printf(&res.structured, "{\"pid\":%lld,\"log\":", pid);
        json_buf_string(&res.structured, log, strlen(log));
        json_buf_lit(&res.structured, "}");
        mcp_result_send(id, &res);
    }
    json_free(v);
    chttp_close(&h);
    free(body);
}
