/* session_stop.c — stopping a session's jobs (session_ctl.h says how): a job's process group
 * on request (POST /v1/jobs/PID/stop), every group of a turn (POST /v1/turns/TURN/cancel), a
 * foreground command past its timeout; TERM, then a probe every STOP_POLL_MS, KILL once the
 * grace period has passed, probes until the group is gone or STOP_GIVE_UP_MS after KILL. A stop
 * batch answers its request once each of its groups is gone. Also the session's shutdown
 * (POST /v1/session/stop, or the controller's own): init is told to end everything, and
 * killed if it overstays. Uses init_wire (INIT_WIRE_SIGNAL, INIT_WIRE_SHUTDOWN to
 * init) and session_jobs.c (the jobs' JSON, pruning). Never signals a process itself: init
 * does, and only whole groups inside the sandbox; init's pid is the one exception, killed
 * when it does not exit in time. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json_write.h"
#include "base/log.h"
#include "base/session_protocol.h"
#include "session/session_jobs.h"
#include "sandbox/init_wire.h"
#include "base/util.h"

/* ---- stopping groups ---------------------------------------------------------------------- */

static void send_signal(struct session *s, pid_t pgid, int sig)
{
    struct init_wire_msg m = {
        .tag = INIT_WIRE_SIGNAL, .id = ++s->next_seq, .pid = pgid, .value = sig};
    if (init_wire_send(s->p.ctl, &m, NULL, 0, NULL, 0) < 0)
        LOG_W("session", "asking init to signal group %d: %s", (int)pgid, strerror(errno));
}

static void batch_answer(struct stop_batch *b)
{
    if (b->req) {
        api_on_gone(b->req, NULL, NULL);
        if (b->failed && b->job)
            api_respond_error(b->req, 500, "process group %d survived SIGKILL", (int)b->job->pid);
        else if (b->failed)
            api_respond_error(b->req, 500, "a process group of turn '%s' survived SIGKILL",
                              b->turn);
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

void job_stop_done(struct job *j, bool ok)
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
            json_buf_printf(&b->stopped, "%s%d", b->stopped.len ? "," : "", (int)job_shown_pid(j));
        if (--b->pending == 0)
            batch_answer(b);
    }
    restart_group_gone(j); /* a supervised job waiting for its group starts again */
    session_prune(j->s);
}

static void on_stop_tick(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct job *j = t->data;
    uint64_t now = clock_mono_ms();
    if (j->kill_sent && now >= j->give_up_at) {
        job_stop_done(j, false);
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
    if (j->phase == JOB_STARTING && j->pid > 0) {
        /* a restart being started: stopped once init says its pid (session_ctl.c) */
        j->stop_requested = true;
        return;
    }
    j->stopping = true;
    j->kill_sent = false;
    j->found_alive = false;
    if (j->phase == JOB_RUNNING)
        j->stop_requested = true;
    j->kill_at = clock_mono_ms() + (uint64_t)(j->s->p.cfg->grace_seconds * 1000);
    send_signal(j->s, j->pid, SIGTERM);
}

void job_stop_group(struct job *j)
{
    job_stop(j, NULL);
}

void job_stop_signaled(struct session *s, pid_t pgid, int result)
{
    struct job *j = NULL;
    for (struct job *k = s->jobs; k; k = k->next)
        if (k->pid == pgid && k->stopping)
            j = k;
    if (!j)
        return;
    if (result == -ESRCH || result == -EINVAL) {
        job_stop_done(j, result == -ESRCH);
        return;
    }
    j->found_alive = true;
    ev_timer_start(s->loop, &j->stop_t, STOP_POLL_MS, on_stop_tick, j);
}

static void on_timeout(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct job *j = t->data;
    if (!job_running(j))
        return;
    j->timed_out = true;
    job_stop(j, NULL);
}

void job_timeout_arm(struct job *j)
{
    ev_timer_start(j->s->loop, &j->timeout_t, (uint64_t)(j->timeout * 1000), on_timeout, j);
}

void job_stop_release_waiters(struct job *j)
{
    while (j->waiters) {
        struct stop_ref *r = j->waiters;
        j->waiters = r->next;
        if (--r->batch->pending == 0)
            batch_answer(r->batch);
        free(r);
    }
}

/* ---- stop and cancel requests ------------------------------------------------------------ */

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
        api_respond_error(req, 404,
                          "no job with pid %ld in session '%s' (cordon jobs %s lists them)", pid,
                          s->p.name, s->p.name);
        return;
    }
    struct stop_batch *b = batch_new(req);
    b->job = j;
    restart_end(j, "stopped (cordon stop)");
    job_stop(j, b); /* also when it has exited: something of its group may remain */
    batch_release(b);
}

void session_op_cancel_turn(struct session *s, struct api_request *req, const char *turn)
{
    struct stop_batch *b = batch_new(req);
    b->turn = xstrdup(turn);
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->pid > 0 && j->turn && strcmp(j->turn, turn) == 0) {
            restart_end(j, "its turn was cancelled");
            job_stop(j, b);
        }
    batch_release(b);
}

void session_op_stop_session(struct session *s, struct api_request *req)
{
    api_respond(req, 200, NULL, "{\"stopping\":true}", 17);
    session_shut_down(s, SESSION_END_STOPPED, "stopped through the API");
}

/* ---- shutting the session down ----------------------------------------------------------- */

static void on_shutdown_overdue(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct session *s = t->data;
    LOG_W("session", "init did not exit in time: killing it");
    (void)kill(s->p.init_pid, SIGKILL);
}

const char *session_end_name(enum session_end reason)
{
    switch (reason) {
    case SESSION_END_NONE:
        break;
    case SESSION_END_STOPPED:
        return "stopped";
    case SESSION_END_OWNER:
        return "owner exited";
    case SESSION_END_KILLED:
        return "controller killed";
    case SESSION_END_IDLE:
        return "idle";
    case SESSION_END_LIFETIME:
        return "lifetime";
    case SESSION_END_FAILED:
        return "failed";
    }
    return NULL;
}

enum session_end session_end_reason(const struct session *s)
{
    return s->end_reason;
}

void session_ended_event(const struct session *s, struct json_buf *b)
{
    const char *reason = session_end_name(s->end_reason);
    if (!reason)
        return;
    json_buf_lit(b, "{\"" API_EVENT "\":\"" API_EVENT_SESSION_ENDED "\",\"session\":");
    json_buf_cstr_or_null(b, s->p.name);
    json_buf_lit(b, ",\"" API_FIELD_REASON "\":");
    json_buf_cstr_or_null(b, reason);
    json_buf_lit(b, "}\n");
}

void session_shut_down(struct session *s, enum session_end reason, const char *why)
{
    if (s->shutting_down)
        return;
    s->shutting_down = true;
    s->end_reason = reason;
    session_expiry_stop(s);
    LOG_I("session", "session '%s' stopping: %s", s->p.name, why);
    for (struct job *j = s->jobs; j; j = j->next) {
        restart_end(j, "the session is stopping");
        if (job_running(j))
            j->stop_requested = true;
    }
    int grace_ms = (int)(s->p.cfg->grace_seconds * 1000);
    struct init_wire_msg m = {.tag = INIT_WIRE_SHUTDOWN, .value = grace_ms};
    if (init_wire_send(s->p.ctl, &m, NULL, 0, NULL, 0) < 0)
        (void)kill(s->p.init_pid, SIGKILL);
    ev_timer_start(s->loop, &s->shutdown_t, (uint64_t)grace_ms + 5000, on_shutdown_overdue, s);
}
