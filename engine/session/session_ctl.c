/* session_ctl.c — see session_ctl.h. A job is one `bash -c` of the session: created by an exec
 * request, told to init (SW_SPAWN), known by its pid once init reports it started, and done when
 * init reports its bash ended. Its output comes through pipes whose write ends init hands to
 * the command: a foreground job's is streamed to the client that asked, a background job's is
 * appended to its capped log. */
#include "session/session_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "session/log_stream.h"
#include "policy/lua_host.h"
#include "session/session_jobs.h"
#include "session/session_init.h"
#include "session/session_wire.h"
#include "base/util.h"

/* ---- jobs as JSON ------------------------------------------------------------------------- */

static const char *state_name(enum job_state st)
{
    switch (st) {
    case JOB_RUNNING: return "running";
    case JOB_EXITED: return "exited";
    case JOB_STOPPED: return "stopped";
    }
    return "?";
}

static void job_json(struct json_buf *b, const struct job *j)
{
    json_buf_printf(b, "{\"pid\":%d,\"command\":", (int)j->pid);
    json_buf_cstr_or_null(b, j->command);
    json_buf_lit(b, ",\"turn\":");
    json_buf_cstr_or_null(b, j->turn);
    json_buf_printf(b, ",\"background\":%s,\"state\":\"%s\",", j->background ? "true" : "false",
                    state_name(j->state));
    if (j->state == JOB_RUNNING)
        json_buf_printf(b, "\"exit_code\":null,\"signal\":null,\"started\":%.3f,\"ended\":null,"
                        "\"duration_ms\":null", j->started);
    else
        json_buf_printf(b, "\"exit_code\":%d,\"signal\":%d,\"started\":%.3f,\"ended\":%.3f,"
                        "\"duration_ms\":%.1f", j->exit_code, j->signal, j->started, j->ended,
                        (double)(j->end_ms - j->start_ms));
    json_buf_printf(b, ",\"timed_out\":%s,\"sandbox_running\":%s,\"log\":", j->timed_out ? "true" : "false",
                    j->sandbox_running ? "true" : "false");
    if (j->background)
        json_buf_printf(b, "\"" SESSION_LOG_DIR "/%d.log\"}", (int)j->pid);
    else
        json_buf_lit(b, "null}");
}

/* Listed by GET /v1/jobs: every background job, foreground commands still running, and
 * sandboxes of their own that a command left processes in. */
static bool job_listed(const struct job *j)
{
    return j->pid > 0 && (j->background || j->state == JOB_RUNNING || j->sandbox_running);
}

static void jobs_json(struct session *s, struct json_buf *b)
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

/* NAME.jobs.json, atomically: a temporary file beside it, fsync, rename. */
static void persist(struct session *s)
{
    struct json_buf b = {0};
    jobs_json(s, &b);
    json_buf_lit(&b, "\n");
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->p.state_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || write_all(fd, b.data, b.len) < 0 || fsync(fd) < 0 || rename(tmp, s->p.state_path) < 0)
        LOG_W("session", "saving the job state to %s: %s", s->p.state_path, strerror(errno));
    if (fd >= 0)
        close(fd);
    json_buf_free(&b);
}

void session_after_round(struct session *s)
{
    if (s->dirty && !s->ended) {
        s->dirty = false;
        persist(s);
    }
}

/* ---- finding, freeing --------------------------------------------------------------------- */

static struct job *job_by_pid(struct session *s, long pid)
{
    struct job *found = NULL;
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->pid == pid)
            found = j; /* the newest: pids are reused */
    return found;
}

static unsigned running_background(struct session *s)
{
    unsigned n = 0;
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->background && j->state == JOB_RUNNING && j->pid > 0)
            n++;
    return n;
}

static void pipe_close(struct session *s, struct job_pipe *p)
{
    if (p->fd < 0)
        return;
    ev_io_stop(s->loop, &p->w);
    close(p->fd);
    p->fd = -1;
}

static void job_unlink_free(struct session *s, struct job *j)
{
    for (struct job **pp = &s->jobs; *pp; pp = &(*pp)->next) {
        if (*pp == j) {
            *pp = j->next;
            break;
        }
    }
    pipe_close(s, &j->out);
    pipe_close(s, &j->err);
    log_stream_job_gone(s, j);
    job_log_close(&j->log);
    ev_timer_stop(s->loop, &j->timeout_t);
    ev_timer_stop(s->loop, &j->stop_t);
    ev_timer_stop(s->loop, &j->resume_t);
    escalation_job_free(j);
    capture_free(&j->cap_out);
    capture_free(&j->cap_err);
    str_list_free(&j->net_once);
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
        if (j->state != JOB_RUNNING)
            finished++;
    for (struct job *j = s->jobs, *next; j; j = next) {
        next = j->next;
        bool idle = j->state != JOB_RUNNING && !j->stopping && !j->req && j->out.fd < 0 && j->err.fd < 0 &&
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

/* The client of a foreground command went away. The command goes on, but, as in a shell
 * pipeline whose reader has gone, its next write to the output gets EPIPE (or SIGPIPE): a
 * `yes | head -1` ends instead of running for ever. */
static void job_req_gone(void *ctx, struct api_request *req)
{
    (void)req;
    struct job *j = ctx;
    j->req = NULL;
    escalation_update_owner(j->s);
    if (!j->background && j->leader_running) {
        ev_timer_stop(j->s->loop, &j->resume_t);
        pipe_close(j->s, &j->out);
        pipe_close(j->s, &j->err);
    }
}

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
    json_buf_printf(&b, "{\"event\":\"output\",\"stream\":\"%s\",", p->stream);
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
    if (!j->req)
        return;
    struct json_buf b = {0};
    json_buf_printf(&b, "{\"event\":\"exit\",\"pid\":%d,\"exit_code\":%d,\"signal\":%d,\"timed_out\":%s,"
                    "\"stopped\":%s,\"duration_ms\":%.1f,\"ran_outside\":%s,\"refusals\":[",
                    (int)j->pid, j->exit_code, j->signal, j->timed_out ? "true" : "false",
                    j->state == JOB_STOPPED ? "true" : "false", (double)(j->end_ms - j->start_ms),
                    j->ran_outside ? "true" : "false");
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
    json_buf_lit(&b, "]}");
    job_stream_event(j, &b);
    api_on_gone(j->req, NULL, NULL);
    api_stream_end(j->req);
    j->req = NULL;
    escalation_update_owner(j->s);
}

/* ---- output ------------------------------------------------------------------------------- */

static void on_resume(struct ev_loop *loop, struct ev_timer *t);

enum pump_result { PUMP_END, PUMP_EMPTY, PUMP_DATA };

/* Read once from a job's pipe (non-blocking). */
static enum pump_result pump(struct job *j, struct job_pipe *p)
{
    char buf[65536];
    ssize_t n = read(p->fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return PUMP_EMPTY;
    if (n <= 0) {
        if (!j->background && j->leader_running)
            job_stream_output(j, p, "", 0, true);
        pipe_close(j->s, p);
        return PUMP_END;
    }
    if (j->background) {
        int r = job_log_append(&j->log, buf, (size_t)n);
        if (r < 0 && j->has_log) {
            LOG_W("session", "the log of job %d stopped growing: %s", (int)j->pid, strerror(-r));
            j->has_log = false;
        }
    } else if (j->leader_running) {
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
    if (pump(j, p) == PUMP_END)
        session_prune(j->s);
}

/* ---- stopping groups ---------------------------------------------------------------------- */

static void send_signal(struct session *s, pid_t pgid, int sig)
{
    struct sw_msg m = {.tag = SW_SIGNAL, .id = ++s->next_seq, .pid = pgid, .value = sig};
    if (sw_send(s->p.ctl, &m, NULL, 0, NULL, 0) < 0)
        LOG_W("session", "asking init to signal group %d: %s", (int)pgid, strerror(errno));
}

static void batch_answer(struct stop_batch *b)
{
    if (b->req) {
        api_on_gone(b->req, NULL, NULL);
        if (b->failed && b->job)
            api_respond_error(b->req, 500, "process group %d survived SIGKILL", (int)b->job->pid);
        else if (b->failed)
            api_respond_error(b->req, 500, "a process group of turn '%s' survived SIGKILL", b->turn);
        else if (b->job) {
            struct json_buf out = {0};
            job_json(&out, b->job);
            api_respond(b->req, 200, NULL, out.data, out.len);
            json_buf_free(&out);
        } else {
            struct json_buf out = {0};
            json_buf_lit(&out, "{\"turn\":");
            json_buf_cstr_or_null(&out, b->turn);
            json_buf_printf(&out, ",\"stopped\":[%s]}", b->stopped.data ? b->stopped.data : "");
            api_respond(b->req, 200, NULL, out.data, out.len);
            json_buf_free(&out);
        }
    }
    json_buf_free(&b->stopped);
    free(b->turn);
    free(b);
}

static void batch_gone(void *ctx, struct api_request *req)
{
    (void)req;
    struct stop_batch *b = ctx;
    b->req = NULL;
}

static void stop_done(struct job *j, bool ok)
{
    j->stopping = false;
    ev_timer_stop(j->s->loop, &j->stop_t);
    if (!ok)
        LOG_E("session", "process group %d survived SIGKILL", (int)j->pid);
    while (j->waiters) {
        struct stop_ref *r = j->waiters;
        j->waiters = r->next;
        struct stop_batch *b = r->batch;
        free(r);
        if (!ok)
            b->failed = true;
        /* The group is gone, so init has reaped its bash and reported that before this. */
        if (j->found_alive && !b->job)
            json_buf_printf(&b->stopped, "%s%d", b->stopped.len ? "," : "", (int)j->pid);
        if (--b->pending == 0)
            batch_answer(b);
    }
    session_prune(j->s);
}

static void on_stop_tick(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct job *j = t->data;
    uint64_t now = clock_mono_ms();
    if (j->kill_sent && now >= j->give_up_at) {
        stop_done(j, false);
        return;
    }
    if (!j->kill_sent && now >= j->kill_at) {
        j->kill_sent = true;
        j->give_up_at = now + STOP_GIVE_UP_MS;
        send_signal(j->s, j->pid, SIGKILL);
    } else {
        send_signal(j->s, j->pid, 0);
    }
}

/* Stop j's group; batch (may be NULL) is told when it is gone. */
static void job_stop(struct job *j, struct stop_batch *batch)
{
    if (batch) {
        struct stop_ref *r = xmalloc(sizeof *r);
        r->batch = batch;
        r->next = j->waiters;
        j->waiters = r;
        batch->pending++;
    }
    if (j->stopping)
        return;
    j->stopping = true;
    j->kill_sent = false;
    j->found_alive = false;
    if (j->leader_running)
        j->stop_requested = true;
    j->kill_at = clock_mono_ms() + (uint64_t)(j->s->p.cfg->grace_seconds * 1000);
    send_signal(j->s, j->pid, SIGTERM);
}

/* Init's answer to a signal or probe of group pgid. */
static void on_signaled(struct session *s, pid_t pgid, int result)
{
    struct job *j = NULL;
    for (struct job *k = s->jobs; k; k = k->next)
        if (k->pid == pgid && k->stopping)
            j = k;
    if (!j)
        return;
    if (result == -ESRCH || result == -EINVAL) {
        stop_done(j, result == -ESRCH);
        return;
    }
    j->found_alive = true;
    ev_timer_start(s->loop, &j->stop_t, STOP_POLL_MS, on_stop_tick, j);
}

static void on_timeout(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct job *j = t->data;
    if (j->state != JOB_RUNNING)
        return;
    j->timed_out = true;
    job_stop(j, NULL);
}

/* ---- init's reports ----------------------------------------------------------------------- */

static void on_started(struct session *s, const struct sw_msg *m, int log_fd)
{
    struct job *j = NULL;
    for (struct job *k = s->jobs; k; k = k->next)
        if (k->id == m->id && k->pid == 0)
            j = k;
    if (!j) {
        if (log_fd >= 0)
            close(log_fd);
        return;
    }
    if (m->pid <= 0) {
        if (j->req) {
            api_on_gone(j->req, NULL, NULL);
            api_respond_error(j->req, 500, "the session could not start the command: %s", strerror(-m->pid));
        }
        j->req = NULL;
        j->state = JOB_EXITED;
        pipe_close(s, &j->out);
        pipe_close(s, &j->err);
        job_unlink_free(s, j);
        return;
    }
    j->pid = m->pid;
    j->leader_running = true;
    j->sandbox_running = j->fresh;
    j->started = clock_wall_s();
    j->start_ms = clock_mono_ms();
    struct json_buf b = {0};
    if (j->background) {
        j->has_log = log_fd >= 0;
        job_log_init(&j->log, log_fd, s->p.cfg->log_cap);
        if (!j->has_log)
            LOG_W("session", "job %d runs without a log: %s", (int)j->pid, strerror(-m->value));
        s->dirty = true;
        if (j->req) {
            char msg[256];
            snprintf(msg, sizeof msg, "Background command started.\nPID: %d\nLog: " SESSION_LOG_DIR
                     "/%d.log\nStop: kill -TERM -- -%d\n", (int)j->pid, (int)j->pid, (int)j->pid);
            json_buf_printf(&b, "{\"pid\":%d,\"log\":\"" SESSION_LOG_DIR "/%d.log\",\"turn\":", (int)j->pid,
                            (int)j->pid);
            json_buf_cstr_or_null(&b, j->turn);
            json_buf_lit(&b, ",\"message\":");
            json_buf_string(&b, msg, strlen(msg));
            json_buf_lit(&b, "}");
            api_on_gone(j->req, NULL, NULL);
            api_respond(j->req, 200, NULL, b.data, b.len);
            j->req = NULL;
        }
    } else {
        if (log_fd >= 0)
            close(log_fd);
        escalation_job_started(j);
        capture_init(&j->cap_out, s->p.cfg->capture_head, s->p.cfg->capture_tail);
        capture_init(&j->cap_err, s->p.cfg->capture_head, s->p.cfg->capture_tail);
        capture_watch(&j->cap_out, lh_refusal_markers());
        capture_watch(&j->cap_err, lh_refusal_markers());
        if (j->req) {
            api_stream_begin(j->req, "application/x-ndjson");
            json_buf_printf(&b, "{\"event\":\"started\",\"pid\":%d}", (int)j->pid);
            job_stream_event(j, &b);
            escalation_update_owner(s);
        }
        if (j->timeout > 0)
            ev_timer_start(s->loop, &j->timeout_t, (uint64_t)(j->timeout * 1000), on_timeout, j);
    }
    json_buf_free(&b);
    if (j->out.fd >= 0)
        ev_io_start(s->loop, &j->out.w, j->out.fd, EPOLLIN, on_pipe, &j->out);
    if (j->err.fd >= 0)
        ev_io_start(s->loop, &j->err.w, j->err.fd, EPOLLIN, on_pipe, &j->err);
}

static void on_exited(struct session *s, pid_t pid, int status)
{
    struct job *j = NULL;
    for (struct job *k = s->jobs; k; k = k->next)
        if (k->pid == pid && k->leader_running)
            j = k;
    if (!j)
        return;
    j->leader_running = false;
    j->ended = clock_wall_s();
    j->end_ms = clock_mono_ms();
    if (WIFSIGNALED(status)) {
        j->signal = WTERMSIG(status);
        j->exit_code = 128 + j->signal;
    } else {
        j->exit_code = WEXITSTATUS(status);
    }
    j->state = j->stop_requested ? JOB_STOPPED : JOB_EXITED;
    ev_timer_stop(s->loop, &j->timeout_t);
    if (!j->background) {
        /* What the command wrote before it ended is in the pipes: send it, then the result.
         * What it left running may write on: that is read and dropped. */
        ev_timer_stop(s->loop, &j->resume_t);
        j->leader_running = true; /* so that pump streams it */
        struct job_pipe *ps[] = {&j->out, &j->err};
        for (int i = 0; i < 2; i++) {
            while (ps[i]->fd >= 0 && pump(j, ps[i]) == PUMP_DATA)
                ;
            if (ps[i]->fd >= 0) {
                job_stream_output(j, ps[i], "", 0, true);
                ev_io_set(s->loop, &ps[i]->w, EPOLLIN);
            }
        }
        j->leader_running = false;
        escalation_judge(j); /* finishes the stream, now or after a question */
    } else {
        s->dirty = true;
    }
    session_prune(s);
}

/* A sandbox of its own ended: everything its command left is gone. */
static void on_gone(struct session *s, pid_t pid)
{
    for (struct job *j = s->jobs; j; j = j->next) {
        if (j->pid == pid && j->sandbox_running) {
            j->sandbox_running = false;
            s->dirty |= j->background;
        }
    }
    session_prune(s);
}

static void on_ctl(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    struct session *s = w->data;
    for (int rounds = 0; rounds < 4096; rounds++) {
        struct sw_msg m;
        int fds[2];
        long n = sw_recv(s->p.ctl, &m, NULL, 0, fds, MSG_DONTWAIT);
        if (n == -EAGAIN)
            return;
        if (n < 0) {
            ev_io_stop(s->loop, w); /* init is gone; the controller reaps it (SIGCHLD) */
            return;
        }
        switch (m.tag) {
        case SW_STARTED: on_started(s, &m, fds[0]); fds[0] = -1; break;
        case SW_EXITED: on_exited(s, m.pid, m.value); break;
        case SW_SIGNALED: on_signaled(s, m.pid, m.value); break;
        case SW_GONE: on_gone(s, m.pid); break;
        default: break;
        }
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    }
}

/* ---- operations --------------------------------------------------------------------------- */

void session_op_info(struct session *s, struct api_request *req)
{
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"name\":");
    json_buf_cstr_or_null(&b, s->p.name);
    json_buf_printf(&b, ",\"pid\":%d,\"profile\":", (int)getpid());
    json_buf_cstr_or_null(&b, s->p.cfg->profile);
    json_buf_lit(&b, ",\"workspace\":");
    json_buf_cstr_or_null(&b, s->p.cfg->workspace);
    json_buf_lit(&b, ",\"socket\":");
    json_buf_cstr_or_null(&b, s->p.socket_path);
    json_buf_printf(&b, ",\"started\":%.3f,", s->started);
    if (s->p.owner_pid > 0)
        json_buf_printf(&b, "\"owner_pid\":%d,\"detached\":false,", (int)s->p.owner_pid);
    else
        json_buf_lit(&b, "\"owner_pid\":null,\"detached\":true,");
    unsigned running = 0;
    for (struct job *j = s->jobs; j; j = j->next)
        running += j->pid > 0 && j->state == JOB_RUNNING;
    json_buf_printf(&b, "\"jobs_running\":%u,\"session_exec\":%s,\"stopping\":%s}", running,
                    s->p.cfg->exec_per_command ? "false" : "true", s->shutting_down ? "true" : "false");
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
}

static void refuse_busy(struct session *s, struct api_request *req)
{
    struct json_buf names = {0};
    for (struct job *j = s->jobs; j; j = j->next) {
        if (!(j->background && j->state == JOB_RUNNING && j->pid > 0))
            continue;
        json_buf_printf(&names, "%s%d (%.60s%s)", names.len ? ", " : "", (int)j->pid, j->command,
                        strlen(j->command) > 60 ? "..." : "");
    }
    api_respond_error(req, 409, "at most %u background jobs may run at once in a session; running: %s "
                      "(stop one with: cordon stop %s PID)", s->p.cfg->max_background,
                      names.data ? names.data : "none", s->p.name);
    json_buf_free(&names);
}

static int job_pipe_open(struct job *j, struct job_pipe *p, const char *stream, int *write_end)
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

void session_op_exec(struct session *s, struct api_request *req, const struct exec_request *e)
{
    if (s->shutting_down) {
        api_respond_error(req, 409, "the session is stopping");
        return;
    }
    if (e->background && e->timeout > 0) {
        api_respond_error(req, 400, "a background command cannot take a timeout; stop it when it "
                          "is no longer needed (cordon stop %s PID)", s->p.name);
        return;
    }
    if (e->background && running_background(s) >= s->p.cfg->max_background) {
        refuse_busy(s, req);
        return;
    }
    size_t len = strlen(e->command);
    if (len == 0 || len > SW_MAX_COMMAND) {
        api_respond_error(req, 400, "the command must be 1 to %d bytes", SW_MAX_COMMAND);
        return;
    }
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        die("out of memory");
    j->s = s;
    j->id = ++s->next_id;
    j->command = xstrdup(e->command);
    j->turn = e->turn ? xstrdup(e->turn) : NULL;
    j->background = e->background;
    j->fresh = s->p.cfg->exec_per_command;
    j->timeout = e->timeout;
    j->out.fd = j->err.fd = -1;
    j->log.fd = -1;
    int w[2] = {-1, -1};
    int r = job_pipe_open(j, &j->out, "stdout", &w[0]);
    if (r == 0 && !e->background)
        r = job_pipe_open(j, &j->err, "stderr", &w[1]);
    if (r == 0) {
        if (w[1] < 0)
            w[1] = w[0]; /* a background job logs both streams to one file */
        struct sw_msg m = {.tag = SW_SPAWN, .id = j->id, .value = (int32_t)len,
                           .flags = (e->background ? SW_BACKGROUND : 0) | (j->fresh ? SW_FRESH : 0)};
        r = sw_send(s->p.ctl, &m, e->command, len, w, 2);
    }
    if (w[0] >= 0)
        close(w[0]);
    if (w[1] >= 0 && w[1] != w[0])
        close(w[1]);
    if (r < 0) {
        api_respond_error(req, 500, "the session could not start the command: %s", strerror(-r));
        job_unlink_free(s, j); /* not linked yet: frees */
        return;
    }
    struct job **tail = &s->jobs;
    while (*tail)
        tail = &(*tail)->next;
    *tail = j;
    j->req = req;
    api_on_gone(req, job_req_gone, j);
}

void session_op_jobs(struct session *s, struct api_request *req)
{
    struct json_buf b = {0};
    jobs_json(s, &b);
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
}

void session_op_log(struct session *s, struct api_request *req, long pid)
{
    struct job *j = job_by_pid(s, pid);
    if (!j || !j->background) {
        api_respond_error(req, 404, "no background job with pid %ld in session '%s' (cordon jobs %s "
                          "lists them)", pid, s->p.name, s->p.name);
        return;
    }
    if (j->log.fd < 0) {
        api_respond(req, 200, "text/plain", "", 0);
        return;
    }
    log_stream_start(s, j, req);
}

static struct stop_batch *batch_new(struct api_request *req)
{
    struct stop_batch *b = calloc(1, sizeof *b);
    if (!b)
        die("out of memory");
    b->req = req;
    b->pending = 1; /* held until every job of the batch was asked */
    api_on_gone(req, batch_gone, b);
    return b;
}

static void batch_release(struct stop_batch *b)
{
    if (--b->pending == 0)
        batch_answer(b);
}

void session_op_stop_job(struct session *s, struct api_request *req, long pid)
{
    struct job *j = job_by_pid(s, pid);
    if (!j || !job_listed(j)) {
        api_respond_error(req, 404, "no job with pid %ld in session '%s' (cordon jobs %s lists them)",
                          pid, s->p.name, s->p.name);
        return;
    }
    struct stop_batch *b = batch_new(req);
    b->job = j;
    job_stop(j, b); /* also when it has exited: something of its group may remain */
    batch_release(b);
}

void session_op_cancel_turn(struct session *s, struct api_request *req, const char *turn)
{
    struct stop_batch *b = batch_new(req);
    b->turn = xstrdup(turn);
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->pid > 0 && j->turn && strcmp(j->turn, turn) == 0)
            job_stop(j, b);
    batch_release(b);
}

void session_op_stop_session(struct session *s, struct api_request *req)
{
    api_respond(req, 200, NULL, "{\"stopping\":true}", 17);
    session_shut_down(s, "stopped through the API");
}

/* ---- the session's life ------------------------------------------------------------------- */

static void on_shutdown_overdue(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct session *s = t->data;
    LOG_W("session", "init did not exit in time: killing it");
    (void)kill(s->p.init_pid, SIGKILL);
}

void session_shut_down(struct session *s, const char *why)
{
    if (s->shutting_down)
        return;
    s->shutting_down = true;
    LOG_I("session", "session '%s' stopping: %s", s->p.name, why);
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->state == JOB_RUNNING)
            j->stop_requested = true;
    int grace_ms = (int)(s->p.cfg->grace_seconds * 1000);
    struct sw_msg m = {.tag = SW_SHUTDOWN, .value = grace_ms};
    if (sw_send(s->p.ctl, &m, NULL, 0, NULL, 0) < 0)
        (void)kill(s->p.init_pid, SIGKILL);
    ev_timer_start(s->loop, &s->shutdown_t, (uint64_t)grace_ms + 5000, on_shutdown_overdue, s);
}

void session_init_gone(struct session *s)
{
    if (s->ended)
        return;
    /* What init reported before it exited (the ends of commands it stopped) is still queued:
     * take it before settling the rest. */
    if (s->ctl_w.active)
        on_ctl(s->loop, &s->ctl_w, EPOLLIN);
    s->ended = true;
    ev_timer_stop(s->loop, &s->shutdown_t);
    ev_io_stop(s->loop, &s->ctl_w);
    if (!s->shutting_down)
        LOG_E("session", "the sandbox's init ended unexpectedly: the session is over");
    /* Everything in the sandbox died with init: settle every job and every waiting client. */
    double now = clock_wall_s();
    for (struct job *j = s->jobs; j; j = j->next) {
        if (j->state == JOB_RUNNING && j->pid > 0) {
            j->state = JOB_STOPPED;
            j->signal = SIGKILL;
            j->exit_code = 128 + SIGKILL;
            j->ended = now;
            j->end_ms = clock_mono_ms();
        }
        j->leader_running = false;
        j->sandbox_running = false;
        if (j->req && !j->background && j->pid > 0) {
            job_finish_stream(j);
        } else if (j->req) {
            api_on_gone(j->req, NULL, NULL);
            api_respond_error(j->req, 409, "the session stopped");
            j->req = NULL;
        }
        if (j->stopping)
            stop_done(j, true);
    }
    s->p.on_ended(s->p.ctx);
}

struct session *session_new(struct ev_loop *loop, const struct session_params *p)
{
    struct session *s = calloc(1, sizeof *s);
    if (!s)
        die("out of memory");
    s->loop = loop;
    s->p = *p;
    s->started = clock_wall_s();
    persist(s); /* the state file exists once `session start` has returned */
    ev_io_start(loop, &s->ctl_w, p->ctl, EPOLLIN, on_ctl, s);
    return s;
}

void session_free(struct session *s)
{
    if (!s)
        return;
    while (s->jobs) {
        struct job *j = s->jobs;
        while (j->waiters) {
            struct stop_ref *r = j->waiters;
            j->waiters = r->next;
            if (--r->batch->pending == 0)
                batch_answer(r->batch);
            free(r);
        }
        job_unlink_free(s, j);
    }
    escalation_free(s);
    ev_io_stop(s->loop, &s->ctl_w);
    ev_timer_stop(s->loop, &s->shutdown_t);
    free(s);
}
