/* session_jobs.c — a session's job state (session_jobs.h): finding jobs, their JSON (GET
 * /v1/jobs, the state file NAME.jobs.json written atomically after a loop round that changed
 * it), moving a job between its phases, freeing and pruning finished ones, and their output: the pipes init hands to a
 * command, read without blocking; a foreground job's bytes streamed to its client as NDJSON
 * events (reading pauses while a slow client catches up), a background job's appended to its
 * capped log. Uses api_server (the streams), job_log, log_stream (readers of a log), capture
 * (what the refusal hook will see). Never signals a process or talks to init: stopping is
 * session_stop.c's, init's reports are session_ctl.c's. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/session_protocol.h"
#include "controller/guarded_trees.h"
#include "controller/trusted_changes.h"
#include "session/log_stream.h"
#include "policy/lua_host.h"
#include "session/session_jobs.h"
#include "session/session_init.h"
#include "base/util.h"
#include "base/visible.h"

/* ---- phases (session_jobs.h) -------------------------------------------------------------- */

static const char *phase_name(enum job_phase phase)
{
    switch (phase) {
    case JOB_STARTING:
        return "starting";
    case JOB_RUNNING:
        return "running";
    case JOB_DRAINING:
        return "draining";
    case JOB_JUDGING:
        return "judging";
    case JOB_ASKING:
        return "asking";
    case JOB_RERUNNING:
        return "re-running";
    case JOB_RESTARTING:
        return "restarting";
    case JOB_FINISHED:
        return "finished";
    }
    return "?";
}

/* The moves of the list at the head of session_jobs.h. */
static bool move_allowed(enum job_phase from, enum job_phase to)
{
    switch (from) {
    case JOB_STARTING:
        return to == JOB_RUNNING || to == JOB_RESTARTING || to == JOB_FINISHED;
    case JOB_RUNNING:
        return to == JOB_DRAINING || to == JOB_RESTARTING || to == JOB_FINISHED;
    case JOB_DRAINING:
        return to == JOB_JUDGING;
    case JOB_JUDGING:
        return to == JOB_ASKING || to == JOB_RERUNNING || to == JOB_FINISHED;
    case JOB_ASKING:
        return to == JOB_RERUNNING || to == JOB_FINISHED;
    case JOB_RERUNNING:
        return to == JOB_FINISHED;
    case JOB_RESTARTING:
        return to == JOB_STARTING || to == JOB_FINISHED;
    case JOB_FINISHED:
        return false;
    }
    return false;
}

void job_move(struct job *j, enum job_phase to)
{
    bool ok = move_allowed(j->phase, to) && (to != JOB_DRAINING || !j->background) &&
              (to != JOB_RESTARTING || j->background);
    if (ok)
        LOG_D("session", "job %u (pid %d): %s -> %s", (unsigned)j->id, (int)j->pid,
              phase_name(j->phase), phase_name(to));
    else
        LOG_E("session", "job %u (pid %d): no move from %s to %s (a bug)", (unsigned)j->id,
              (int)j->pid, phase_name(j->phase), phase_name(to));
    assert(ok);
    j->phase = to;
}

bool job_running(const struct job *j)
{
    return j->phase == JOB_STARTING || j->phase == JOB_RUNNING || j->phase == JOB_RESTARTING;
}

bool job_streaming(const struct job *j)
{
    return !j->background && (j->phase == JOB_RUNNING || j->phase == JOB_DRAINING);
}

/* ---- jobs as JSON ------------------------------------------------------------------------- */

/* "running" ("restarting" while a supervised job waits to start again), or how it ended. */
static const char *state_name(const struct job *j)
{
    if (j->phase == JOB_RESTARTING)
        return "restarting";
    return job_running(j) ? "running" : j->stop_requested ? "stopped" : "exited";
}

/* ---- what a sandbox of its own still holds ------------------------------------------------ */

#define LEFT_SCAN_MAX 4096 /* processes looked at in one sandbox */
#define LEFT_LISTED 32     /* pids listed; the count goes on */

/* The pids in /proc/PID/task/PID/children (host pids), at most max; -1 when unreadable. */
static int read_children(pid_t pid, pid_t *out, int max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int n = 0;
    long v;
    while (n < max && fscanf(f, "%ld", &v) == 1)
        out[n++] = (pid_t)v;
    fclose(f);
    return n;
}

/* Host pid h's pid in the session's namespace (the second NSpid field), or 0. */
static pid_t session_pid_of(pid_t h)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)h);
    FILE *f = fopen(path, "re");
    long host = 0, inside = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "NSpid: %ld %ld", &host, &inside) >= 1 && strncmp(line, "NSpid:", 6) == 0)
            break;
    if (f)
        fclose(f);
    return (pid_t)inside;
}

/* "left": the number of processes j's own sandbox holds besides its PID 1, and "left_pids":
 * the first of them as the session sees them, read from the host's /proc (the sandbox's
 * PID 1 is a child of the session's init). null when that cannot be read. */
static void left_json(struct json_buf *b, const struct job *j)
{
    static pid_t queue[LEFT_SCAN_MAX];
    pid_t kids[256];
    pid_t root = 0;
    int n = read_children(j->s->p.init_pid, kids, (int)ARRAY_LEN(kids));
    for (int i = 0; i < n && !root; i++)
        if (session_pid_of(kids[i]) == j->pid)
            root = kids[i];
    if (!root) {
        json_buf_lit(b, ",\"left\":null,\"left_pids\":null");
        return;
    }
    int head = 0, tail = 0;
    queue[tail++] = root;
    while (head < tail && tail < LEFT_SCAN_MAX) {
        int got = read_children(queue[head++], queue + tail, LEFT_SCAN_MAX - tail);
        if (got > 0)
            tail += got;
    }
    json_buf_printf(b, ",\"left\":%d,\"left_pids\":[", tail - 1);
    for (int i = 1; i < tail && i <= LEFT_LISTED; i++)
        json_buf_printf(b, "%s%d", i > 1 ? "," : "", (int)session_pid_of(queue[i]));
    json_buf_lit(b, "]");
}

/* 124 for a command its timeout ended, as `cordon exec` and GNU timeout say
 * (docs/exit-status.md); `signal` still names the signal that ended it. The job keeps its real
 * status for the refusal hook and supervision. */
int job_exit_status(const struct job *j)
{
    return j->timed_out ? CORDON_EXIT_TIMEOUT : j->exit_code;
}

/* The fields of supervision: null (0 restarts) for a job that is not supervised. */
static void restart_json(struct json_buf *b, const struct job *j)
{
    bool supervised = j->restart.when != RESTART_NO;
    char policy[RESTART_POLICY_TEXT_MAX];
    restart_policy_format(&j->restart, policy, sizeof policy);
    json_buf_lit(b, ",\"" API_FIELD_RESTART "\":");
    json_buf_cstr_or_null(b, supervised ? policy : NULL);
    if (supervised)
        json_buf_printf(b, ",\"" API_EXEC_BACKOFF "\":%g", j->restart.backoff);
    else
        json_buf_lit(b, ",\"" API_EXEC_BACKOFF "\":null");
    json_buf_printf(b, ",\"" API_FIELD_RESTARTS "\":%lu,\"" API_FIELD_LAST_EXIT "\":", j->restarts);
    if (supervised && j->has_last_exit)
        json_buf_printf(b, "%d", j->last_exit);
    else
        json_buf_lit(b, "null");
    json_buf_lit(b, ",\"" API_FIELD_NEXT_START "\":");
    if (j->phase == JOB_RESTARTING)
        json_buf_printf(b, "%.3f", j->next_start);
    else
        json_buf_lit(b, "null");
    json_buf_lit(b, ",\"" API_FIELD_CURRENT_PID "\":");
    if (j->phase == JOB_RUNNING && j->pid > 0)
        json_buf_printf(b, "%d", (int)j->pid);
    else
        json_buf_lit(b, "null");
}

pid_t job_shown_pid(const struct job *j)
{
    return j->first_pid > 0 ? j->first_pid : j->pid;
}

void job_json(struct json_buf *b, const struct job *j)
{
    /* A sandbox of its own whose command left processes is still running, though its leader
     * (the command's bash) has exited: listed as running, the leader's end beside it. */
    bool leftover = !job_running(j) && j->sandbox_running;
    json_buf_printf(b, "{\"pid\":%d,\"command\":", (int)job_shown_pid(j));
    json_buf_cstr_or_null(b, j->command);
    json_buf_lit(b, ",\"turn\":");
    json_buf_cstr_or_null(b, j->turn);
    json_buf_printf(b, ",\"background\":%s,\"state\":\"%s\",", j->background ? "true" : "false",
                    leftover ? "running" : state_name(j));
    if (leftover)
        json_buf_printf(b,
                        "\"exit_code\":null,\"signal\":null,\"started\":%.3f,\"ended\":null,"
                        "\"duration_ms\":null,\"leader_running\":false,\"leader_exit_code\":%d,"
                        "\"leader_signal\":%d",
                        j->started, j->exit_code, j->signal);
    else if (job_running(j))
        json_buf_printf(b,
                        "\"exit_code\":null,\"signal\":null,\"started\":%.3f,\"ended\":null,"
                        "\"duration_ms\":null",
                        j->started);
    else
        json_buf_printf(b,
                        "\"exit_code\":%d,\"signal\":%d,\"started\":%.3f,\"ended\":%.3f,"
                        "\"duration_ms\":%.1f",
                        job_exit_status(j), j->signal, j->started, j->ended,
                        (double)(j->end_ms - j->start_ms));
    if (leftover)
        left_json(b, j);
    json_buf_printf(b, ",\"timed_out\":%s,\"sandbox_running\":%s,\"log\":",
                    j->timed_out ? "true" : "false", j->sandbox_running ? "true" : "false");
    if (j->background)
        json_buf_printf(b, "\"" SESSION_LOG_DIR "/%d.log\"", (int)job_shown_pid(j));
    else
        json_buf_lit(b, "null");
    restart_json(b, j);
    json_buf_lit(b, "}");
}

/* Listed by GET /v1/jobs: every background job, foreground commands still running, and
 * sandboxes of their own that a command left processes in. */
bool job_listed(const struct job *j)
{
    return j->pid > 0 && (j->background || job_running(j) || j->sandbox_running);
}

void jobs_json(struct session *s, struct json_buf *b)
{
    json_buf_lit(b, "{\"jobs\":[");
    bool first = true;
    for (struct job *j = s->jobs; j; j = j->next) {
        if (!job_listed(j))
            continue;
        if (!first)
            json_buf_lit(b, ",");
        first = false;
        job_json(b, j);
    }
    json_buf_lit(b, "]}");
}

/* ---- persistence ------------------------------------------------------------------------- */

/* NAME.jobs.json, atomically: a temporary file beside it, fsync, rename. */
void jobs_persist(struct session *s)
{
    struct json_buf b = {0};
    jobs_json(s, &b);
    json_buf_lit(&b, "\n");
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->p.state_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || write_all(fd, b.data, b.len) < 0 || fsync(fd) < 0 ||
        rename(tmp, s->p.state_path) < 0)
        LOG_W("session", "saving the job state to %s: %s", s->p.state_path, strerror(errno));
    if (fd >= 0)
        close(fd);
    json_buf_free(&b);
}

/* ---- the repositories' check ------------------------------------------------------------- */

/* Every GUARD_PERIOD_MS, and before each command starts (session_ctl.c): the known
 * repositories, and while a job (or a sandbox of its own) runs now and then all
 * (git_guard_tick), since an editor on the host runs `git status` by itself every few
 * seconds. All of them (the walk) at each foreground job's end, before its exit event, and
 * when init is gone. */
#define GUARD_PERIOD_MS 1000

static bool anything_runs(const struct session *s)
{
    for (const struct job *j = s->jobs; j; j = j->next)
        if (job_running(j) || j->sandbox_running)
            return true;
    return false;
}

void session_guard_check(struct session *s, struct job *j, bool full)
{
    if (!s->p.guard)
        return;
    struct str_list lines = {0};
    if (full)
        (void)guarded_trees_check(s->p.guard, &lines);
    else
        (void)guarded_trees_tick(s->p.guard, &lines, anything_runs(s));
    /* What a check between commands undid (the watcher woke it as the command planted, and the
     * command had ended) goes with the next foreground result. */
    if (j && j->req) {
        for (size_t i = 0; i < s->guard_said.len; i++) {
            char *l = xasprintf("cordon: %s\n", s->guard_said.items[i]);
            job_stream_output(j, &j->err, l, strlen(l), true);
            free(l);
        }
        str_list_free(&s->guard_said);
    }
    for (size_t i = 0; i < lines.len; i++) {
        LOG_W("session", "%s", lines.items[i]);
        if (!(j && j->req) && s->guard_said.len < 64)
            str_list_push(&s->guard_said, lines.items[i]);
        if (j && j->req) {
            char *shown = visible_dup(lines.items[i]); /* names a command chose */
            char *l = xasprintf("cordon: %s\n", shown);
            free(shown);
            job_stream_output(j, &j->err, l, strlen(l), true);
            free(l);
        }
    }
    str_list_free(&lines);
}

/* For the session's whole life: a process a command left behind in the session's sandbox is no
 * job, and may write while nothing runs. */
static void on_guard_timer(struct ev_loop *loop, struct ev_timer *t)
{
    struct session *s = t->data;
    session_guard_check(s, NULL, false);
    if (!s->ended)
        ev_timer_start(loop, &s->guard_t, GUARD_PERIOD_MS, on_guard_timer, s);
}

/* The watcher found repositories (held inside already): looked at now, the lines going with the
 * result of the foreground command running, when one is (a plant it made is its to hear of). */
static void on_repo_found(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    struct session *s = w->data;
    struct job *fg = NULL;
    for (struct job *j = s->jobs; j && !fg; j = j->next)
        if (job_streaming(j) && j->req)
            fg = j;
    session_guard_check(s, fg, false);
}

void session_after_round(struct session *s)
{
    if (guarded_trees_fd(s->p.guard) >= 0 && !s->watch_w.active && !s->ended)
        ev_io_start(s->loop, &s->watch_w, guarded_trees_fd(s->p.guard), EPOLLIN, on_repo_found, s);
    if (s->p.guard && !s->guard_t.active && !s->ended)
        ev_timer_start(s->loop, &s->guard_t, GUARD_PERIOD_MS, on_guard_timer, s);
    if (s->dirty && !s->ended) {
        s->dirty = false;
        jobs_persist(s);
    }
    session_expiry_after_round(s);
}

/* ---- finding, freeing --------------------------------------------------------------------- */

struct job *job_by_pid(struct session *s, long pid)
{
    struct job *found = NULL;
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->pid == pid || j->first_pid == pid)
            found = j; /* the newest: pids are reused; a restarted job by either pid */
    return found;
}

unsigned jobs_running_background(struct session *s)
{
    unsigned n = 0;
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->background && job_running(j) && j->pid > 0)
            n++;
    return n;
}

void job_pipe_close(struct session *s, struct job_pipe *p)
{
    if (p->fd < 0)
        return;
    ev_io_stop(s->loop, &p->w);
    close(p->fd);
    p->fd = -1;
}

void job_unlink_free(struct session *s, struct job *j)
{
    for (struct job **pp = &s->jobs; *pp; pp = &(*pp)->next) {
        if (*pp == j) {
            *pp = j->next;
            break;
        }
    }
    job_pipe_close(s, &j->out);
    job_pipe_close(s, &j->err);
    log_stream_job_gone(s, j);
    job_log_close(&j->log);
    ev_timer_stop(s->loop, &j->timeout_t);
    ev_timer_stop(s->loop, &j->stop_t);
    ev_timer_stop(s->loop, &j->resume_t);
    ev_timer_stop(s->loop, &j->restart_t);
    escalation_job_free(j);
    capture_free(&j->cap_out);
    capture_free(&j->cap_err);
    str_list_free(&j->net_once);
    trusted_snapshot_free(j->trusted); /* never finished: nothing to compare */
    free(j->command);
    free(j->turn);
    free(j);
}

/* Finished jobs are kept while something refers to them, and then up to FINISHED_KEPT of them
 * (background ones to be listed; foreground ones with a turn, whose group a cancel may still
 * have to stop). */
void session_prune(struct session *s)
{
    if (s->ended)
        return; /* the session is over: session_free() takes everything */
    size_t finished = 0;
    for (struct job *j = s->jobs; j; j = j->next)
        if (!job_running(j))
            finished++;
    for (struct job *j = s->jobs, *next; j; j = next) {
        next = j->next;
        bool idle = !job_running(j) && !j->stopping && !j->req && j->out.fd < 0 && j->err.fd < 0 &&
                    !j->sandbox_running && !j->approval && !j->rerun;
        if (!idle)
            continue;
        if ((!j->background && !j->turn) || finished > FINISHED_KEPT) {
            job_unlink_free(s, j);
            finished--;
        }
    }
}

/* ---- answering ---------------------------------------------------------------------------- */

void job_stream_event(struct job *j, struct json_buf *b)
{
    json_buf_lit(b, "\n");
    if (j->req)
        api_stream_write(j->req, b->data, b->len);
    json_buf_free(b);
}

/* An output event for a foreground job's bytes; a UTF-8 sequence cut at the end of one read
 * is carried over to the next, so text stays text. */
void job_stream_output(struct job *j, struct job_pipe *p, const char *data, size_t n, bool last)
{
    if (!j->req)
        return;
    unsigned char buf[65536 + 4];
    size_t len = p->carry_len;
    memcpy(buf, p->carry, len);
    memcpy(buf + len, data, n);
    len += n;
    p->carry_len = last ? 0 : json_utf8_incomplete_tail(buf, len);
    len -= p->carry_len;
    memcpy(p->carry, buf + len, p->carry_len);
    if (len == 0)
        return;
    struct json_buf b = {0};
    json_buf_printf(&b, "{\"event\":\"" API_EVENT_OUTPUT "\",\"stream\":\"%s\",", p->stream);
    if (json_utf8_valid(buf, len)) {
        json_buf_lit(&b, "\"data\":");
        json_buf_string(&b, (const char *)buf, len);
    } else {
        json_buf_lit(&b, "\"data_base64\":");
        json_buf_base64(&b, buf, len);
    }
    json_buf_lit(&b, "}");
    job_stream_event(j, &b);
}

void job_finish_stream(struct job *j)
{
    escalation_job_done(j);
    session_guard_check(j->s, j, true); /* before the client (if still there) has the result */
    /* What the host will run or trust that changed meanwhile (a background job's writes
     * included: the workspace is shared) */
    struct trusted_changes trusted = {0};
    trusted_changes_find(j->trusted, &trusted);
    j->trusted = NULL;
    if (!j->req) {
        trusted_changes_free(&trusted);
        return;
    }
    struct json_buf b = {0};
    json_buf_printf(&b,
                    "{\"event\":\"" API_EVENT_EXIT
                    "\",\"pid\":%d,\"exit_code\":%d,\"signal\":%d,\"timed_out\":%s,"
                    "\"stopped\":%s,\"duration_ms\":%.1f,\"ran_outside\":%s,\"refusals\":[",
                    (int)j->pid, job_exit_status(j), j->signal, j->timed_out ? "true" : "false",
                    !job_running(j) && j->stop_requested ? "true" : "false",
                    (double)(j->end_ms - j->start_ms), j->ran_outside ? "true" : "false");
    for (size_t i = 0; i < j->n_refusals; i++) {
        const struct lh_refusal *r = &j->refusals[i];
        json_buf_printf(&b, "%s{\"kind\":", i ? "," : "");
        json_buf_cstr_or_null(&b, r->kind);
        json_buf_lit(&b, ",\"path\":");
        json_buf_cstr_or_null(&b, r->path[0] ? r->path : NULL);
        json_buf_lit(&b, ",\"line\":");
        json_buf_cstr_or_null(&b, r->line);
        json_buf_lit(&b, ",\"reason\":");
        json_buf_cstr_or_null(&b, r->reason);
        json_buf_lit(&b, "}");
    }
    json_buf_lit(&b, "],\"host_trusted_changes\":[");
    for (size_t i = 0; i < trusted.len; i++) {
        json_buf_printf(&b, "%s{\"path\":", i ? "," : "");
        json_buf_cstr_or_null(&b, trusted.items[i].path);
        json_buf_lit(&b, ",\"change\":");
        json_buf_cstr_or_null(&b, trusted.items[i].change);
        json_buf_lit(&b, ",\"why\":");
        json_buf_cstr_or_null(&b, trusted.items[i].why);
        json_buf_lit(&b, "}");
    }
    if (trusted.truncated)
        json_buf_lit(&b, "],\"host_trusted_truncated\":true}\n");
    else
        json_buf_lit(&b, "]}\n");
    trusted_changes_free(&trusted);
    session_ended_event(j->s, &b); /* the session's end stopped it: say why, last */
    b.len--;                       /* job_stream_event adds the last newline */
    job_stream_event(j, &b);
    api_on_gone(j->req, NULL, NULL);
    api_stream_end(j->req);
    j->req = NULL;
}

/* ---- output ------------------------------------------------------------------------------- */

int job_pipe_open(struct job *j, struct job_pipe *p, const char *stream, int *write_end)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -errno;
    (void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
    p->fd = fds[0];
    p->job = j;
    p->stream = stream;
    *write_end = fds[1];
    return 0;
}

static void on_resume(struct ev_loop *loop, struct ev_timer *t);

enum job_pump_result job_pump(struct job *j, struct job_pipe *p)
{
    char buf[65536];
    ssize_t n = read(p->fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return PUMP_EMPTY;
    if (n <= 0) {
        if (job_streaming(j))
            job_stream_output(j, p, "", 0, true);
        job_pipe_close(j->s, p);
        if (j->background)
            log_stream_wake(j->s, j);
        return PUMP_END;
    }
    if (j->background) {
        int r = job_log_append(&j->log, buf, (size_t)n);
        if (r < 0 && j->has_log) {
            LOG_W("session", "the log of job %d stopped growing: %s", (int)j->pid, strerror(-r));
            j->has_log = false;
        }
        log_stream_wake(j->s, j);
    } else if (job_streaming(j)) {
        capture_feed(p == &j->out ? &j->cap_out : &j->cap_err, buf, (size_t)n);
        job_stream_output(j, p, buf, (size_t)n, false);
        if (j->req && api_stream_pending(j->req) > STREAM_HIGH_WATER) {
            /* a slow client: stop reading (the command blocks on a full pipe) for a while */
            if (j->out.fd >= 0)
                ev_io_set(j->s->loop, &j->out.w, 0);
            if (j->err.fd >= 0)
                ev_io_set(j->s->loop, &j->err.w, 0);
            ev_timer_start(j->s->loop, &j->resume_t, 10, on_resume, j);
        }
    } /* else: what a finished foreground command left running writes to nobody */
    return PUMP_DATA;
}

static void on_resume(struct ev_loop *loop, struct ev_timer *t)
{
    struct job *j = t->data;
    if (j->req && api_stream_pending(j->req) > STREAM_HIGH_WATER / 2) {
        ev_timer_start(loop, &j->resume_t, 10, on_resume, j);
        return;
    }
    if (j->out.fd >= 0)
        ev_io_set(loop, &j->out.w, EPOLLIN);
    if (j->err.fd >= 0)
        ev_io_set(loop, &j->err.w, EPOLLIN);
}

static void on_pipe(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    struct job_pipe *p = w->data;
    struct job *j = p->job;
    if (job_pump(j, p) == PUMP_END)
        session_prune(j->s);
}

void job_pipes_watch(struct job *j)
{
    if (j->out.fd >= 0)
        ev_io_start(j->s->loop, &j->out.w, j->out.fd, EPOLLIN, on_pipe, &j->out);
    if (j->err.fd >= 0)
        ev_io_start(j->s->loop, &j->err.w, j->err.fd, EPOLLIN, on_pipe, &j->err);
}
