/* session_expiry.c — see session_expiry.h. The idle clock runs while the session has no job
 * that is not finished (a foreground exec is a job too, as is a sandbox of its own still
 * there) and no open API connection; session_expiry_after_round() looks after every loop
 * round, so anything that comes (a connection, an exec) stops the clock before it can fire,
 * and the clock starts again from zero once all of it is gone. Processes left without a job
 * (a `setsid` daemon) do not keep a session: they end with it. Uses session_jobs (the jobs),
 * api_server (its connections), session_approvers (the warning event). */
#include "session/session_expiry.h"

#include <stdio.h>

#include "base/log.h"
#include "session/session_jobs.h"

/* Anything the idle timeout waits for to be gone. */
static bool session_busy(struct session *s)
{
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->phase != JOB_FINISHED || j->sandbox_running || j->stopping)
            return true;
    return api_server_clients(s->expiry.api) > 0;
}

/* "90 s", "5 min", "2 h": a duration for a line. */
static void say_duration(double seconds, char *buf, size_t n)
{
    if (seconds >= 7200)
        snprintf(buf, n, "%.0f h", seconds / 3600);
    else if (seconds >= 120)
        snprintf(buf, n, "%.0f min", seconds / 60);
    else
        snprintf(buf, n, "%.0f s", seconds);
}

static uint64_t to_ms(double seconds)
{
    return seconds <= 0 ? 0 : (uint64_t)(seconds * 1000 + 0.5);
}

static void warn(struct session *s, enum session_end reason, double left)
{
    char in[32], after[32];
    say_duration(left, in, sizeof in);
    if (reason == SESSION_END_IDLE) {
        say_duration(s->p.cfg->idle_timeout, after, sizeof after);
        LOG_W("session", "session '%s' ends in %s: nothing ran and no client was there for %s",
              s->p.name, in, after);
    } else {
        say_duration(s->p.cfg->max_lifetime, after, sizeof after);
        LOG_W("session", "session '%s' ends in %s: its maximum lifetime (%s) is reached", s->p.name,
              in, after);
    }
    approvers_expiry_warning(s, session_end_name(reason), left);
}

static void on_idle_warn(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct session *s = t->data;
    warn(s, SESSION_END_IDLE, s->p.cfg->expiry_warning);
}

static void on_life_warn(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct session *s = t->data;
    warn(s, SESSION_END_LIFETIME, s->p.cfg->expiry_warning);
}

static void on_idle(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct session *s = t->data;
    char d[32];
    say_duration(s->p.cfg->idle_timeout, d, sizeof d);
    LOG_W("session", "session '%s' ends: idle for %s", s->p.name, d);
    session_shut_down(s, SESSION_END_IDLE, "idle timeout");
}

static void on_lifetime(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct session *s = t->data;
    char d[32];
    say_duration(s->p.cfg->max_lifetime, d, sizeof d);
    LOG_W("session", "session '%s' ends: its maximum lifetime (%s) is reached", s->p.name, d);
    session_shut_down(s, SESSION_END_LIFETIME, "maximum lifetime");
}

/* Arm the end after `seconds` and, when the warning time is shorter, its warning before. */
static void arm(struct session *s, double seconds, struct ev_timer *end, ev_timer_cb end_cb,
                struct ev_timer *warning, ev_timer_cb warn_cb)
{
    double w = s->p.cfg->expiry_warning;
    ev_timer_start(s->loop, end, to_ms(seconds), end_cb, s);
    if (w > 0 && w < seconds)
        ev_timer_start(s->loop, warning, to_ms(seconds - w), warn_cb, s);
}

void session_expiry_start(struct session *s, struct api_server *api)
{
    struct session_expiry *e = &s->expiry;
    e->api = api;
    e->started = true;
    if (s->p.cfg->max_lifetime > 0)
        arm(s, s->p.cfg->max_lifetime, &e->life_t, on_lifetime, &e->life_warn_t, on_life_warn);
    session_expiry_after_round(s);
}

void session_expiry_after_round(struct session *s)
{
    struct session_expiry *e = &s->expiry;
    if (!e->started || s->shutting_down || s->ended || s->p.cfg->idle_timeout <= 0)
        return;
    if (session_busy(s)) {
        ev_timer_stop(s->loop, &e->idle_t);
        ev_timer_stop(s->loop, &e->idle_warn_t);
    } else if (!e->idle_t.active) {
        arm(s, s->p.cfg->idle_timeout, &e->idle_t, on_idle, &e->idle_warn_t, on_idle_warn);
    }
}

void session_expiry_stop(struct session *s)
{
    struct session_expiry *e = &s->expiry;
    ev_timer_stop(s->loop, &e->idle_t);
    ev_timer_stop(s->loop, &e->idle_warn_t);
    ev_timer_stop(s->loop, &e->life_t);
    ev_timer_stop(s->loop, &e->life_warn_t);
}
