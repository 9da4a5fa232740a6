/* client_jobs.c — see client_jobs.h. */
#include "client/client_jobs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/visible.h"
#include "client/client_http.h"
#include "client/client_ndjson.h"
#include "client/client_output.h"
#include "client/client_reply.h"
#include "client/client_table.h"
#include "base/util.h"

bool cjobs_parse_pid(const char *s, long *out)
{
    long v = 0;
    if (!*s)
        return false;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
        if (v > INT_MAX)
            return false;
    }
    if (v == 0)
        return false;
    *out = v;
    return true;
}

char *cjobs_command_line(const char *s)
{
    char *out = xmalloc(strlen(s) * 4 + 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '\n':
            o += sprintf(o, "\\n");
            break;
        case '\r':
            o += sprintf(o, "\\r");
            break;
        case '\t':
            o += sprintf(o, "\\t");
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                o += sprintf(o, "\\x%02x", *p);
            else
                *o++ = (char)*p;
        }
    }
    *o = '\0';
    return out;
}

void cjobs_format_time(double t, bool with_date, char *out, size_t outlen)
{
    time_t secs = (time_t)t;
    struct tm tm;
    if (!localtime_r(&secs, &tm) ||
        strftime(out, outlen, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm) == 0)
        snprintf(out, outlen, "?");
}

/* Is any job supervised (exec --restart)? Then the table has the supervision's columns. */
static bool any_supervised(const struct json_value *jobs)
{
    for (size_t i = 0; i < jobs->len; i++)
        if (reply_str(&jobs->items[i], "restart"))
            return true;
    return false;
}

/* RESTARTS ("2/3", "2" without a limit, "-" unsupervised), LAST_EXIT, NEXT_START. */
static void supervision_cells(struct table *t, const struct json_value *job)
{
    char buf[64];
    long long n = 0, last;
    double next;
    const char *policy = reply_str(job, "restart");
    const char *colon = policy ? strchr(policy, ':') : NULL;
    (void)reply_int(job, "restarts", &n);
    if (!policy)
        snprintf(buf, sizeof buf, "-");
    else if (colon)
        snprintf(buf, sizeof buf, "%lld/%s", n, colon + 1);
    else
        snprintf(buf, sizeof buf, "%lld", n);
    table_cell(t, buf);
    if (reply_int(job, "last_exit", &last))
        snprintf(buf, sizeof buf, "%lld", last);
    else
        snprintf(buf, sizeof buf, "-");
    table_cell(t, buf);
    if (reply_num(job, "next_start", &next))
        cjobs_format_time(next, false, buf, sizeof buf);
    else
        snprintf(buf, sizeof buf, "-");
    table_cell(t, buf);
}

/* One job's cells; false when it lacks what every job has. */
static bool job_row(struct table *t, const struct json_value *job, bool supervision)
{
    long long pid, code, sig;
    double started;
    const char *state = reply_str(job, "state");
    const char *command = reply_str(job, "command");
    if (!reply_int(job, "pid", &pid) || !state || !command)
        return false;
    char buf[64];
    snprintf(buf, sizeof buf, "%lld", pid);
    table_cell(t, buf);
    table_cell(t, state);
    if (reply_int(job, "signal", &sig) && sig > 0)
        snprintf(buf, sizeof buf, "sig %lld", sig);
    else if (reply_int(job, "exit_code", &code))
        snprintf(buf, sizeof buf, "%lld", code);
    else
        snprintf(buf, sizeof buf, "-");
    table_cell(t, buf);
    if (supervision)
        supervision_cells(t, job);
    const char *turn = reply_str(job, "turn");
    char *turn_line = cjobs_command_line(turn ? turn : "-");
    table_cell(t, turn_line);
    free(turn_line);
    if (reply_num(job, "started", &started))
        cjobs_format_time(started, false, buf, sizeof buf);
    else
        snprintf(buf, sizeof buf, "-");
    table_cell(t, buf);
    char *line = cjobs_command_line(command);
    table_cell(t, line);
    free(line);
    return true;
}

int cjobs_list(const char *name, bool json)
{
    static const char *const header[] = {"PID", "STATE", "EXIT", "TURN", "STARTED", "COMMAND"};
    static const char *const header_supervised[] = {"PID",      "STATE",     "EXIT",
                                                    "RESTARTS", "LAST_EXIT", "NEXT_START",
                                                    "TURN",     "STARTED",   "COMMAND"};
    struct chttp h;
    struct json_value *v = NULL;
    struct table t = {0};
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "jobs", name, false) != 0)
        goto out;
    if (!(v = reply_request_json(&h, "GET", "/v1/jobs", NULL, 0, &status)))
        goto out;
    const struct json_value *jobs = reply_array(v, "jobs");
    if (!jobs) {
        status = reply_malformed("jobs", "the answer has no \"jobs\" array");
        goto out;
    }
    if (json) {
        reply_print_line(stdout, h.body, h.body_len);
        status = 0;
        goto out;
    }
    if (jobs->len == 0) {
        puts("no jobs");
        status = 0;
        goto out;
    }
    bool supervision = any_supervised(jobs);
    if (supervision)
        table_init(&t, ARRAY_LEN(header_supervised), header_supervised);
    else
        table_init(&t, ARRAY_LEN(header), header);
    for (size_t i = 0; i < jobs->len; i++) {
        if (!job_row(&t, &jobs->items[i], supervision)) {
            status = reply_malformed("jobs", "a job without \"pid\", \"state\" or \"command\"");
            goto out;
        }
    }
    table_print(&t, stdout);
    status = 0;
out:
    table_free(&t);
    json_free(v);
    chttp_close(&h);
    return status;
}

static int to_stdout(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    int w = cout_write(1, data, len);
    if (w < 0) {
        fprintf(stderr, "cordon: logs: cannot write the log: %s\n", strerror(-w));
        return -1;
    }
    return 0;
}

/* A followed log comes as events (format=ndjson): its bytes go to stdout as they are, and the
 * last line says why the stream ended when the session's end closed it. */
struct follow {
    struct ndjson_lines lines;
    bool mid_line;      /* the last byte written was not a newline */
    char *ended_reason; /* the session ended: why */
};

static int follow_line(void *ctx, const char *line, size_t len)
{
    struct follow *f = ctx;
    struct ndjson_event ev;
    char err[160];
    int rc = 0;
    if (ndjson_decode(line, len, &ev, err, sizeof err) < 0) {
        rc = -reply_malformed("logs", err);
        goto out;
    }
    switch (ev.kind) {
    case NDJSON_OUTPUT:
        if (ev.len) {
            rc = to_stdout(NULL, ev.data, ev.len);
            f->mid_line = ev.data[ev.len - 1] != '\n';
        }
        break;
    case NDJSON_DROPPED: { /* the same line as the text stream's */
        char text[128];
        int n = snprintf(text, sizeof text,
                         "%s[cordon: %llu bytes of this log were dropped while it was read]\n",
                         f->mid_line ? "\n" : "", ev.bytes);
        f->mid_line = false;
        rc = to_stdout(NULL, text, (size_t)n);
        break;
    }
    case NDJSON_SESSION_ENDED:
        free(f->ended_reason);
        f->ended_reason = xstrdup(ev.reason);
        break;
    case NDJSON_EXIT: /* the job has ended: the stream ends after it */
    case NDJSON_STARTED:
    case NDJSON_APPROVAL:
    case NDJSON_OTHER:
        break;
    }
out:
    ndjson_event_free(&ev);
    return rc;
}

static int follow_stream(void *ctx, const char *data, size_t len)
{
    struct follow *f = ctx;
    return ndjson_feed(&f->lines, data, len, follow_line, f) < 0 ? -1 : 0;
}

int cjobs_log(const char *name, long pid, const struct cjobs_log_opts *o)
{
    struct chttp h;
    struct follow f = {0};
    char path[128];
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "logs", name, false) != 0)
        goto out;
    int n = snprintf(path, sizeof path, "/v1/jobs/%ld/log", pid);
    if (o->tail >= 0)
        n += snprintf(path + n, sizeof path - (size_t)n, "?tail=%ld", o->tail);
    if (o->follow) /* to its end: ended by the job's end, the session's, or a signal */
        snprintf(path + n, sizeof path - (size_t)n, "%cfollow=1&format=ndjson",
                 o->tail >= 0 ? '&' : '?');
    int rc = o->follow ? chttp_request(&h, "GET", path, NULL, 0, follow_stream, &f)
                       : chttp_request(&h, "GET", path, NULL, 0, to_stdout, NULL);
    if (h.sink_stopped)
        goto out;
    if (rc < 0)
        status = chttp_lost(&h);
    else if (!chttp_ok(&h))
        status = reply_fail(&h);
    else if (o->follow && ndjson_finish(&f.lines, follow_line, &f) < 0)
        status = CORDON_EXIT_SETUP;
    else
        status = 0;
    if (status == 0 && f.ended_reason) { /* the session's end, not the job's, ended it */
        char *why = visible_dup(f.ended_reason);
        fprintf(stderr, "cordon: logs: session '%s' ended (%s) while the log was followed\n", name,
                why);
        free(why);
        status = CORDON_EXIT_SETUP;
    }
out:
    free(f.ended_reason);
    ndjson_lines_free(&f.lines);
    chttp_close(&h);
    return status;
}

int cjobs_stop(const char *name, long pid, bool json)
{
    struct chttp h;
    struct json_value *v = NULL;
    char path[64];
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "stop", name, false) != 0)
        goto out;
    snprintf(path, sizeof path, "/v1/jobs/%ld/stop", pid);
    if (!(v = reply_request_json(&h, "POST", path, NULL, 0, &status)))
        goto out;
    const char *state = reply_str(v, "state");
    if (!state) {
        status = reply_malformed("stop", "the job has no \"state\" string");
        goto out;
    }
    if (json)
        reply_print_line(stdout, h.body, h.body_len);
    else
        printf("%ld: %s\n", pid, strcmp(state, "exited") == 0 ? "had already exited" : "stopped");
    status = 0;
out:
    json_free(v);
    chttp_close(&h);
    return status;
}

int cjobs_cancel(const char *name, const char *turn, bool json)
{
    struct chttp h;
    struct json_value *v = NULL;
    char *escaped = NULL, *path = NULL;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "cancel", name, false) != 0)
        goto out;
    escaped = chttp_escape(turn);
    path = xasprintf("/v1/turns/%s/cancel", escaped);
    if (!(v = reply_request_json(&h, "POST", path, NULL, 0, &status)))
        goto out;
    const struct json_value *stopped = reply_array(v, "stopped");
    if (!stopped) {
        status = reply_malformed("cancel", "the answer has no \"stopped\" array");
        goto out;
    }
    if (json) {
        reply_print_line(stdout, h.body, h.body_len);
        status = 0;
        goto out;
    }
    char *turn_line = cjobs_command_line(turn);
    if (stopped->len == 0) {
        printf("%s: nothing was running\n", turn_line);
    } else {
        printf("%s: stopped", turn_line);
        for (size_t i = 0; i < stopped->len; i++) {
            const struct json_value *p = &stopped->items[i];
            if (p->type == JSON_NUMBER)
                printf(" %.0f", p->number);
        }
        putchar('\n');
    }
    free(turn_line);
    status = 0;
out:
    free(path);
    free(escaped);
    json_free(v);
    chttp_close(&h);
    return status;
}
