/* session_restart.c — supervised background jobs (`exec --background --restart
 * on-failure[:N]|always [--backoff D]`): when a run ends and the job's policy wants it again,
 * the job waits (RESTARTING): what the run left in its process group is stopped (TERM, KILL
 * after the grace: a job restarting for ever must not pile up the processes each run left),
 * and the backoff passes (doubling from D at each restart, up to RESTART_WAIT_CEILING); then the
 * controller asks init again to start the same command (INIT_WIRE_SPAWN, as the first time).
 *
 * Why the controller and not init: the controller already owns the job (its phases, its pipes
 * and its log, its stop requests, the state file) and the event loop its timers need; init stays
 * the small PID 1 that starts, reaps and signals, and keeps no job of its own (a supervisor
 * must not die: the less it holds, the less can go wrong). What is kept from the first start,
 * and only that: the shell string as given, the session's environment (fixed at its start),
 * the workspace as working folder, the turn, the log (the job's first pid names it) and the
 * counters. What the shell string names (a script in the workspace) is read again at each
 * start, as it would be by hand; each restart's line in the log says so.
 *
 * Bounded: a job holds one timer and its counters whatever the number of restarts; its log is
 * capped as any job's (session.log_cap); each limit reached is said in one line in its log and
 * the session's (the wait's ceiling once, the last restart allowed, a start init refused).
 * Uses session_jobs.c (pipes, phases), session_stop.c (stopping the group), job_log,
 * log_stream. Never signals a process itself. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "sandbox/init_wire.h"
#include "session/log_stream.h"
#include "session/session_jobs.h"

/* One line in j's log (after what its runs wrote) and in the session's log. */
CORDON_PRINTF(2, 3) static void say(struct job *j, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    LOG_I("session", "job %d: %s", (int)job_shown_pid(j), line);
    line[n++] = '\n';
    if (j->has_log && job_log_append(&j->log, "cordon: ", 8) == 0)
        (void)job_log_append(&j->log, line, (size_t)n);
    log_stream_wake(j->s, j);
}

static void restart_now(struct job *j);

static void on_backoff_over(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct job *j = t->data;
    j->backoff_over = true;
    if (j->phase == JOB_RESTARTING && !j->stopping)
        restart_now(j);
}

/* The next restart is allowed: wait for it (RESTARTING). false, with its line, when the
 * policy's count is used up. */
static bool plan_next(struct job *j)
{
    char policy[RESTART_POLICY_TEXT_MAX];
    restart_policy_format(&j->restart, policy, sizeof policy);
    if (j->restart.max > 0 && j->restarts >= j->restart.max) {
        say(j, "exit status %d after %lu restart%s: %s allows no more; the job stays ended",
            j->last_exit, j->restarts, j->restarts == 1 ? "" : "s", policy);
        return false;
    }
    bool capped;
    double wait = restart_wait(&j->restart, j->restarts + 1, &capped);
    if (capped && !j->said_ceiling) {
        char ceiling[32];
        restart_say_seconds(RESTART_WAIT_CEILING, ceiling, sizeof ceiling);
        say(j, "the wait between restarts has reached its ceiling, %s: it stays there", ceiling);
        j->said_ceiling = true;
    }
    job_move(j, JOB_RESTARTING);
    j->backoff_over = false;
    j->next_start = clock_wall_s() + wait;
    j->s->dirty = true;
    ev_timer_start(j->s->loop, &j->restart_t, (uint64_t)(wait * 1000 + 0.5), on_backoff_over, j);
    return true;
}

bool restart_after_exit(struct job *j)
{
    if (j->restart.when == RESTART_NO)
        return false;
    j->has_last_exit = true;
    j->last_exit = j->exit_code;
    /* what the run wrote before its end goes in the log before any line about it */
    while (j->out.fd >= 0 && job_pump(j, &j->out) == PUMP_DATA)
        ;
    if (j->restart_over || j->stop_requested || j->s->shutting_down)
        return false;
    if (j->restart.when == RESTART_ON_FAILURE && j->exit_code == 0) {
        say(j, "exit status 0: on-failure restarts only a failed run; the job is over");
        return false;
    }
    if (!plan_next(j))
        return false;
    job_stop_group(j); /* what the run left in its group goes before the next run */
    return true;
}

/* The same command, asked of init again (its answer: restart_started). */
static void restart_now(struct job *j)
{
    struct session *s = j->s;
    /* what the last run wrote is read to its end before the pipe is replaced */
    while (j->out.fd >= 0 && job_pump(j, &j->out) == PUMP_DATA)
        ;
    job_pipe_close(s, &j->out);
    int w = -1;
    int r = job_pipe_open(j, &j->out, "stdout", &w);
    if (r == 0) {
        session_guard_check(s, NULL, false); /* what the last run planted is undone */
        int fds[2] = {w, w};                 /* both streams to the one log, as at the start */
        /* without INIT_WIRE_BACKGROUND: init opens no new log, the job goes on in its own */
        struct init_wire_msg m = {
            .tag = INIT_WIRE_SPAWN, .id = j->id, .flags = j->fresh ? INIT_WIRE_FRESH : 0};
        r = init_wire_send(s->p.ctl, &m, j->command, strlen(j->command), fds, 2);
    }
    if (w >= 0)
        close(w);
    j->restarts++;
    s->dirty = true;
    job_move(j, JOB_STARTING);
    if (r < 0)
        (void)restart_started(j, r);
}

bool restart_started(struct job *j, pid_t pid)
{
    char of[32] = "";
    if (j->restart.max > 0)
        snprintf(of, sizeof of, " of %u", j->restart.max);
    if (pid > 0) {
        char waited[32];
        bool capped;
        restart_say_seconds(restart_wait(&j->restart, j->restarts, &capped), waited, sizeof waited);
        say(j,
            "restart %lu%s (pid %d) after exit status %d and a wait of %s: the command string and "
            "environment of its first start; files it runs are read anew",
            j->restarts, of, (int)pid, j->last_exit, waited);
        return false; /* on_started goes on: RUNNING */
    }
    say(j, "restart %lu%s could not start: %s", j->restarts, of, strerror((int)-pid));
    job_pipe_close(j->s, &j->out);
    j->s->dirty = true;
    if (j->restart_over || j->stop_requested || j->s->shutting_down || !plan_next(j)) {
        job_move(j, JOB_FINISHED);
        log_stream_wake(j->s, j);
        job_stop_done(j, true); /* a stop that waited for the start is answered */
    }
    return true;
}

void restart_group_gone(struct job *j)
{
    if (j->phase == JOB_RESTARTING && j->backoff_over)
        restart_now(j);
}

void restart_end(struct job *j, const char *why)
{
    if (j->restart.when == RESTART_NO || j->phase == JOB_FINISHED || j->restart_over)
        return;
    j->restart_over = true;
    say(j, "%s: no more restarts (%lu so far)", why, j->restarts);
    if (j->phase != JOB_RESTARTING)
        return; /* a run (or its start) goes on: it ends as stopped */
    ev_timer_stop(j->s->loop, &j->restart_t);
    j->stop_requested = true;
    job_move(j, JOB_FINISHED);
    j->s->dirty = true;
    log_stream_wake(j->s, j);
}
