/* mcp_jobs.c — the tools about jobs (mcp_call.h): list_jobs (GET /v1/jobs), read_log (GET
 * /v1/jobs/PID/log, bounded, from an offset or its last lines, and for up to `wait_seconds`
 * followed as events until new bytes come, the job's exit or the session's end), stop_job and
 * cancel_turn. */
#include "mcp/mcp_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/util.h"
#include "client/client_call.h"
#include "client/client_ndjson.h"
#include "client/client_reply.h"
#include "mcp/mcp_bound.h"

static void job_line(struct json_buf *t, const struct json_value *j)
{
    long long pid = 0, code;
    const char *state = reply_str(j, "state"), *command = reply_str(j, "command");
    const char *turn = reply_str(j, "turn"), *log = reply_str(j, "log");
    const struct json_value *bg = json_get(j, "background");
    (void)reply_int(j, "pid", &pid);
    json_buf_printf(t, "%lld %s", pid, state ? state : "?");
    if (reply_int(j, "exit_code", &code))
        json_buf_printf(t, " (exit %lld)", code);
    json_buf_printf(t, " %s",
                    bg && bg->type == JSON_BOOL && bg->boolean ? "background" : "foreground");
    if (turn)
        json_buf_printf(t, " turn=%s", turn);
    if (log)
        json_buf_printf(t, " log=%s", log);
    const char *restart = reply_str(j, "restart");
    long long restarts = 0, last;
    double next;
    if (restart) { /* supervised: its policy and counters */
        (void)reply_int(j, "restarts", &restarts);
        json_buf_printf(t, " restart=%s restarts=%lld", restart, restarts);
        if (reply_int(j, "last_exit", &last))
            json_buf_printf(t, " last_exit=%lld", last);
        if (reply_num(j, "next_start", &next))
            json_buf_printf(t, " next_start_in=%.1fs",
                            next - clock_wall_s() > 0 ? next - clock_wall_s() : 0);
    }
    json_buf_printf(t, ": %s\n", command ? command : "");
}

void mcp_list_jobs(const struct mcp_server *s, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    struct json_value *v = ccall_json(&h, s->session, "GET", "/v1/jobs", NULL, err, sizeof err);
    const struct json_value *jobs = reply_array(v, "jobs");
    if (!v) {
        mcp_result_error(id, &res, "cordon: %s", err);
    } else if (!jobs) {
        mcp_result_error(id, &res, "cordon: the session's answer has no jobs array");
    } else {
        for (size_t i = 0; i < jobs->len; i++)
            job_line(&res.text, &jobs->items[i]);
        if (jobs->len == 0)
            json_buf_lit(&res.text, "no jobs\n");
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
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

/* Following the log as events (format=ndjson): stop at the first bytes after the skip, and
 * keep how the stream ended when nothing came. */
struct log_wait {
    struct log_read *l;
    struct ndjson_lines lines;
    char ended[96]; /* "the job has ended (exit 3)", "the session ended (lifetime)" */
};

static int on_wait_line(void *ctx, const char *line, size_t len)
{
    struct log_wait *w = ctx;
    struct ndjson_event ev;
    char err[160];
    int rc = 0;
    if (ndjson_decode(line, len, &ev, err, sizeof err) < 0) {
        snprintf(w->ended, sizeof w->ended, "the session sent a malformed line: %.60s", err);
        rc = -1;
        goto out;
    }
    switch (ev.kind) {
    case NDJSON_OUTPUT:
        on_log(w->l, ev.data, ev.len);
        rc = w->l->fresh > 0 ? -1 : 0;
        break;
    case NDJSON_EXIT:
        if (ev.signal > 0)
            snprintf(w->ended, sizeof w->ended, "the job has ended (exit %d, signal %d)",
                     ev.exit_code, ev.signal);
        else
            snprintf(w->ended, sizeof w->ended, "the job has ended (exit %d)", ev.exit_code);
        break;
    case NDJSON_SESSION_ENDED: /* the last word: it ended the job too */
        snprintf(w->ended, sizeof w->ended, "the session ended (%.40s)", ev.reason);
        break;
    case NDJSON_STARTED:
    case NDJSON_APPROVAL:
    case NDJSON_DROPPED:
    case NDJSON_OTHER:
        break;
    }
out:
    ndjson_event_free(&ev);
    return rc;
}

static int on_log_wait(void *ctx, const char *data, size_t len)
{
    struct log_wait *w = ctx;
    return ndjson_feed(&w->lines, data, len, on_wait_line, w) < 0 ? -1 : 0;
}

void mcp_read_log(const struct mcp_server *s, const struct args *a, const char *id)
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
    char ended[96];
    if (ccall_request(&h, s->session, "GET", path, NULL, 0, on_log, &l, 0, err, sizeof err) < 0) {
        mcp_result_error(id, &res, "cordon: %s", err);
        goto out;
    }
    if (a->wait > 0 && l.fresh == 0) {
        /* nothing after offset: follow the log (from its start, skipping what was read) until
         * the first new bytes, the job's end or the wait's */
        unsigned long long skip = (unsigned long long)a->offset; /* >= l.size: none was fresh */
        struct log_read w = {.skip = skip};
        struct log_wait lw = {.l = &w};
        mcp_bound_init(&w.kept, 0, MCP_STREAM_MAX);
        chttp_close(&h);
        snprintf(path, sizeof path, "/v1/jobs/%lld/log?follow=1&format=ndjson", a->pid);
        int rc =
            ccall_request(&h, s->session, "GET", path, NULL, 0, on_log_wait, &lw,
                          clock_mono_ms() + (unsigned long long)(a->wait * 1000), err, sizeof err);
        if (rc >= 0 && !h.timed_out && !w.fresh)
            (void)ndjson_finish(&lw.lines, on_wait_line, &lw);
        ndjson_lines_free(&lw.lines);
        if (rc < 0) {
            mcp_bound_free(&w.kept);
            mcp_result_error(id, &res, "cordon: %s", err);
            goto out;
        }
        snprintf(ended, sizeof ended, "%s", lw.ended[0] ? lw.ended : "the job has ended");
        waited = w.fresh ? NULL : h.timed_out ? "none came while waiting" : ended;
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
    mcp_result_send(id, &res);
out:
    free(text);
    mcp_bound_free(&l.kept);
    chttp_close(&h);
}

void mcp_stop_job(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512], path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/stop", a->pid);
    struct json_value *v = ccall_json(&h, s->session, "POST", path, NULL, err, sizeof err);
    if (!v) {
        mcp_result_error(id, &res, "cordon: %s", err);
    } else {
        job_line(&res.text, v);
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}

void mcp_cancel_turn(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    char *turn = chttp_escape(a->turn);
    char *path = xasprintf("/v1/turns/%s/cancel", turn);
    struct json_value *v = ccall_json(&h, s->session, "POST", path, NULL, err, sizeof err);
    const struct json_value *stopped = reply_array(v, "stopped");
    if (!v) {
        mcp_result_error(id, &res, "cordon: %s", err);
    } else {
        json_buf_printf(&res.text, "turn %s: stopped", a->turn);
        for (size_t i = 0; stopped && i < stopped->len; i++)
            json_buf_printf(&res.text, " %lld", (long long)stopped->items[i].number);
        if (!stopped || stopped->len == 0)
            json_buf_lit(&res.text, " nothing (no running command of this turn)");
        json_buf_lit(&res.text, "\n");
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
    }
    json_free(v);
    free(path);
    free(turn);
    chttp_close(&h);
}
