/* session_ctl.c — see session_ctl.h. The session object, init's reports and the operations
 * that start and list jobs. A job is one `bash -c` of the session: created by an exec request,
 * told to init (INIT_WIRE_SPAWN), known by its pid once init reports it started, and done when
 * init reports its bash ended (its phases: session_jobs.h). Its output comes through pipes whose
 * write ends init hands to the
 * command: a foreground job's is streamed to the client that asked, a background job's is
 * appended to its capped log (session_jobs.c). Stopping jobs, turns and the session is
 * session_stop.c's; judging a finished foreground command is session_escalation.c's. */
#include "session/session_ctl.h"
#include "session/session_snapshots.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/session_protocol.h"
#include "controller/guarded_trees.h"
#include "controller/trusted_changes.h"
#include "session/log_stream.h"
#include "policy/lua_host.h"
#include "proxy/port_relay.h"
#include "session/session_jobs.h"
#include "session/session_record.h"
#include "session/session_init.h"
#include "sandbox/init_wire.h"
#include "base/util.h"

/* What the API takes, init must take. */
_Static_assert(API_COMMAND_MAX <= INIT_WIRE_MAX_COMMAND,
               "a command the API takes is too long for init");

/* ---- init's reports ----------------------------------------------------------------------- */

static void on_started(struct session *s, const struct init_wire_msg *m, int log_fd)
{
    struct job *j = NULL;
    for (struct job *k = s->jobs; k; k = k->next)
        if (k->id == m->id && k->phase == JOB_STARTING)
            j = k;
    if (!j) {
        if (log_fd >= 0)
            close(log_fd);
        return;
    }
    if (j->first_pid > 0) { /* a restart: it goes on in the log it has */
        if (log_fd >= 0)
            close(log_fd);
        if (restart_started(j, m->pid))
            return;
        log_fd = -1;
    }
    if (m->pid <= 0) {
        if (j->req) {
            api_on_gone(j->req, NULL, NULL);
            api_respond_error(j->req, 500, "the session could not start the command: %s",
                              strerror(-m->pid));
        }
        j->req = NULL;
        job_move(j, JOB_FINISHED);
        job_pipe_close(s, &j->out);
        job_pipe_close(s, &j->err);
        job_unlink_free(s, j);
        return;
    }
    j->pid = m->pid;
    job_move(j, JOB_RUNNING);
    j->sandbox_running = j->fresh;
    j->started = clock_wall_s();
    j->start_ms = clock_mono_ms();
    struct json_buf b = {0};
    if (j->background && j->first_pid > 0) {
        /* a restart (restart_started wrote its line): only its output is new */
    } else if (j->background) {
        if (j->restart.when != RESTART_NO)
            j->first_pid = j->pid;
        j->has_log = log_fd >= 0;
        job_log_init(&j->log, log_fd, s->p.cfg->log_cap);
        if (!j->has_log)
            LOG_W("session", "job %d runs without a log: %s", (int)j->pid, strerror(-m->value));
        s->dirty = true;
        if (j->req) {
            char msg[512];
            if (j->restart.when == RESTART_NO) {
                snprintf(msg, sizeof msg,
                         "Background command started.\nPID: %d\nLog: " SESSION_LOG_DIR
                         "/%d.log\nStop: kill -TERM -- -%d\n",
                         (int)j->pid, (int)j->pid, (int)j->pid);
            } else {
                /* a kill inside ends one run, which the policy may restart */
                char policy[RESTART_POLICY_TEXT_MAX], backoff[32];
                restart_policy_format(&j->restart, policy, sizeof policy);
                restart_say_seconds(j->restart.backoff, backoff, sizeof backoff);
                snprintf(msg, sizeof msg,
                         "Background command started.\nPID: %d\nLog: " SESSION_LOG_DIR
                         "/%d.log\nRestart: %s, backoff %s (the same command string and "
                         "environment each time)\nStop: cordon stop %s %d (ends it and its "
                         "restarts)\n",
                         (int)j->pid, (int)j->pid, policy, backoff, s->p.name, (int)j->pid);
            }
            json_buf_printf(&b, "{\"pid\":%d,\"log\":\"" SESSION_LOG_DIR "/%d.log\",\"turn\":",
                            (int)j->pid, (int)j->pid);
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
            json_buf_printf(&b, "{\"event\":\"" API_EVENT_STARTED "\",\"pid\":%d}", (int)j->pid);
            job_stream_event(j, &b);
        }
        if (j->timeout > 0)
            job_timeout_arm(j);
    }
    json_buf_free(&b);
    job_pipes_watch(j);
    if (j->stop_requested && j->restart_over)
        job_stop_group(j); /* stopped while its restart was starting: its waiters wait on */
}

/* A limit of the session's cgroup hit while foreground command j ran: one line each on its
 * stderr stream and in the session's log (the counters are the sandbox's: another job may have
 * been the one refused or killed, and the line says the session's sandbox). */
static void limit_lines(struct job *j)
{
    struct session *s = j->s;
    if (!s->p.cgroup)
        return;
    char oom[256], pids[256];
    controller_limit_news(s->p.cfg, s->p.cgroup, &s->limits_told, oom, sizeof oom, pids,
                          sizeof pids);
    const char *lines[] = {oom, pids};
    for (size_t i = 0; i < ARRAY_LEN(lines); i++) {
        if (!lines[i][0])
            continue;
        LOG_W("limits", "%s", lines[i]);
        if (j->req) {
            char *l = xasprintf("cordon: %s\n", lines[i]);
            job_stream_output(j, &j->err, l, strlen(l), true);
            free(l);
        }
    }
}

static void on_exited(struct session *s, pid_t pid, int status)
{
    struct job *j = NULL;
    for (struct job *k = s->jobs; k; k = k->next)
        if (k->pid == pid && k->phase == JOB_RUNNING)
            j = k;
    if (!j)
        return;
    j->ended = clock_wall_s();
    j->end_ms = clock_mono_ms();
    if (WIFSIGNALED(status)) {
        j->signal = WTERMSIG(status);
        j->exit_code = 128 + j->signal;
    } else {
        j->exit_code = WEXITSTATUS(status);
    }
    ev_timer_stop(s->loop, &j->timeout_t);
    if (!j->background) {
        /* What the command wrote before it ended is in the pipes: send it, then the result.
         * What it left running may write on: that is read and dropped (once it is judged). */
        ev_timer_stop(s->loop, &j->resume_t);
        job_move(j, JOB_DRAINING);
        struct job_pipe *ps[] = {&j->out, &j->err};
        for (int i = 0; i < 2; i++) {
            while (ps[i]->fd >= 0 && job_pump(j, ps[i]) == PUMP_DATA)
                ;
            if (ps[i]->fd >= 0) {
                job_stream_output(j, ps[i], "", 0, true);
                ev_io_set(s->loop, &ps[i]->w, EPOLLIN);
            }
        }
        limit_lines(j);
        job_move(j, JOB_JUDGING);
        escalation_judge(j); /* finishes the stream, now or after a question */
    } else {
        s->dirty = true;
        if (!restart_after_exit(j))
            job_move(j, JOB_FINISHED);
        log_stream_wake(s, j); /* a follower whose job has nothing more to say ends */
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
        struct init_wire_msg m;
        int fds[2];
        static unsigned char payload[INIT_WIRE_MAX_SWAPPED];
        long n = init_wire_recv(s->p.ctl, &m, payload, sizeof payload, fds, MSG_DONTWAIT);
        if (n == -EAGAIN)
            return;
        if (n < 0) {
            ev_io_stop(s->loop, w); /* init is gone; the controller reaps it (SIGCHLD) */
            return;
        }
        switch (m.tag) {
        case INIT_WIRE_STARTED:
            on_started(s, &m, fds[0]);
            fds[0] = -1;
            break;
        case INIT_WIRE_EXITED:
            on_exited(s, m.pid, m.value);
            break;
        case INIT_WIRE_SIGNALED:
            job_stop_signaled(s, m.pid, m.value);
            break;
        case INIT_WIRE_GONE:
            on_gone(s, m.pid);
            break;
        case INIT_WIRE_REVIEW_SWAPPED:
            session_review_swapped(s, &m, payload, (size_t)n);
            break;
        case INIT_WIRE_CONNECTED:
            if (s->p.ports) {
                int got = m.value < 0 ? m.value : fds[0] >= 0 ? fds[0] : -EBADMSG;
                port_relay_inside_connected(s->p.ports, m.id, got);
                fds[0] = -1;
            }
            break;
        default:
            break;
        }
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    }
}

/* ---- operations --------------------------------------------------------------------------- */

/* The client of a foreground command went away. The command goes on, but, as in a shell
 * pipeline whose reader has gone, its next write to the output gets EPIPE (or SIGPIPE): a
 * `yes | head -1` ends instead of running for ever. */
static void job_req_gone(void *ctx, struct api_request *req)
{
    (void)req;
    struct job *j = ctx;
    j->req = NULL;
    if (job_streaming(j)) {
        ev_timer_stop(j->s->loop, &j->resume_t);
        job_pipe_close(j->s, &j->out);
        job_pipe_close(j->s, &j->err);
    }
}

/* One published port as the API says it. */
static void binding_json(struct json_buf *b, const struct port_binding *p)
{
    json_buf_printf(b, "{\"port\":%u,\"host_addr\":", p->port);
    json_buf_cstr_or_null(b, p->host_addr);
    json_buf_printf(b, ",\"host_port\":%u,\"open\":%u,\"connections\":%llu}", p->host_port, p->open,
                    p->total);
}

int session_connect_inside(void *ctx, unsigned id, unsigned port)
{
    struct session *s = ctx;
    if (s->shutting_down)
        return -ESHUTDOWN;
    struct init_wire_msg m = {.tag = INIT_WIRE_CONNECT, .id = id, .value = (int32_t)port};
    return init_wire_send(s->p.ctl, &m, NULL, 0, NULL, 0);
}

void session_op_publish(struct session *s, struct api_request *req, const char *host_addr,
                        long host_port, long port)
{
    if (s->shutting_down) {
        api_respond_error(req, 409, "the session is stopping");
        return;
    }
    if (!s->p.ports) {
        api_respond_error(req, 409,
                          "this session has no network of its own (network.unrestricted): its "
                          "ports are the host's already");
        return;
    }
    if (port < 1 || port > 65535) {
        api_respond_error(req, 400, "\"port\" must be a port in the sandbox, 1 to 65535 (got %ld)",
                          port);
        return;
    }
    if (host_port < -1 || host_port > 65535) {
        api_respond_error(req, 400,
                          "\"host_port\" must be a port on the host, 1 to 65535, or 0 for any free "
                          "one (got %ld)",
                          host_port);
        return;
    }
    char err[256];
    struct port_binding b;
    int r = port_relay_publish(s->p.ports, host_addr,
                               host_port < 0 ? (unsigned)port : (unsigned)host_port, (unsigned)port,
                               &b, err, sizeof err);
    if (r < 0) {
        int code = r == -EINVAL                                        ? 400
                   : r == -EEXIST || r == -EADDRINUSE || r == -ENOTSUP ? 409
                                                                       : 500;
        api_respond_error(req, code, "%s", err);
        return;
    }
    LOG_I("session", "published the sandbox's port %u at %s:%u on the host", b.port, b.host_addr,
          b.host_port);
    struct json_buf out = {0};
    binding_json(&out, &b);
    api_respond(req, 200, NULL, out.data, out.len);
    json_buf_free(&out);
}

void session_op_unpublish(struct session *s, struct api_request *req, long port)
{
    if (!s->p.ports || port < 1 || port > 65535 ||
        port_relay_unpublish(s->p.ports, (unsigned)port) < 0) {
        api_respond_error(req, 404, "port %ld is not published (see cordon session status %s)",
                          port, s->p.name);
        return;
    }
    LOG_I("session", "unpublished the sandbox's port %ld", port);
    struct json_buf out = {0};
    json_buf_printf(&out, "{\"port\":%ld,\"unpublished\":true}", port);
    api_respond(req, 200, NULL, out.data, out.len);
    json_buf_free(&out);
}

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
        running += j->pid > 0 && job_running(j);
    json_buf_printf(&b, "\"jobs_running\":%u,\"session_exec\":%s,\"stopping\":%s,", running,
                    s->p.cfg->exec_per_command ? "false" : "true",
                    s->shutting_down ? "true" : "false");
    json_buf_lit(&b, "\"host_ports\":[");
    for (size_t i = 0; i < s->p.cfg->n_host_ports; i++)
        json_buf_printf(&b, "%s%u", i ? "," : "", s->p.cfg->host_ports[i]);
    json_buf_lit(&b, "],\"ports\":[");
    struct port_binding ports[64];
    size_t n = port_relay_published(s->p.ports, ports, ARRAY_LEN(ports));
    for (size_t i = 0; i < n && i < ARRAY_LEN(ports); i++) {
        json_buf_printf(&b, "%s", i ? "," : "");
        binding_json(&b, &ports[i]);
    }
    json_buf_lit(&b, "]}");
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
}

static void refuse_busy(struct session *s, struct api_request *req)
{
    struct json_buf names = {0};
    for (struct job *j = s->jobs; j; j = j->next) {
        if (!(j->background && job_running(j) && j->pid > 0))
            continue;
        json_buf_printf(&names, "%s%d (%.60s%s)", names.len ? ", " : "", (int)j->pid, j->command,
                        strlen(j->command) > 60 ? "..." : "");
    }
    api_respond_error(req, 409,
                      "at most %u background jobs may run at once in a session; running: %s "
                      "(stop one with: cordon stop %s PID)",
                      s->p.cfg->max_background, names.data ? names.data : "none", s->p.name);
    json_buf_free(&names);
}

void session_op_exec(struct session *s, struct api_request *req, const struct exec_request *e)
{
    if (s->shutting_down) {
        api_respond_error(req, 409, "the session is stopping");
        return;
    }
    if (e->background && e->timeout > 0) {
        api_respond_error(req, 400,
                          "a background command cannot take a timeout; stop it when it "
                          "is no longer needed (cordon stop %s PID)",
                          s->p.name);
        return;
    }
    if (!e->background && e->restart.when != RESTART_NO) {
        api_respond_error(req, 400,
                          "\"restart\" is for background jobs (\"background\": true): a "
                          "foreground command ends with its answer");
        return;
    }
    if (e->background && jobs_running_background(s) >= s->p.cfg->max_background) {
        refuse_busy(s, req);
        return;
    }
    size_t len = strlen(e->command);
    if (len == 0 || len > API_COMMAND_MAX) {
        api_respond_error(req, 400, "the command must be 1 to %d bytes", API_COMMAND_MAX);
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
    j->restart = e->restart;
    j->fresh = s->p.cfg->exec_per_command;
    j->timeout = e->timeout;
    j->out.fd = j->err.fd = -1;
    j->log.fd = -1;
    int w[2] = {-1, -1};
    int r = job_pipe_open(j, &j->out, "stdout", &w[0]);
    if (r == 0 && !e->background)
        r = job_pipe_open(j, &j->err, "stderr", &w[1]);
    if (r == 0) {
        session_guard_check(s, NULL, false); /* what a background job planted is undone */
        const struct sandbox_config *cfg = s->p.cfg;
        if (!e->background && !cfg->review && !cfg->workspace_readonly && cfg->workspace)
            j->trusted = trusted_snapshot_take(cfg->workspace);
        if (w[1] < 0)
            w[1] = w[0]; /* a background job logs both streams to one file */
        struct init_wire_msg m = {.tag = INIT_WIRE_SPAWN,
                                  .id = j->id,
                                  .flags = (e->background ? INIT_WIRE_BACKGROUND : 0) |
                                           (j->fresh ? INIT_WIRE_FRESH : 0)};
        r = init_wire_send(s->p.ctl, &m, e->command, len, w, 2);
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

void session_op_log(struct session *s, struct api_request *req, long pid, const struct log_query *q)
{
    struct job *j = job_by_pid(s, pid);
    if (!j || !j->background) {
        api_respond_error(req, 404,
                          "no background job with pid %ld in session '%s' (cordon jobs %s "
                          "lists them)",
                          pid, s->p.name, s->p.name);
        return;
    }
    if (j->log.fd < 0) {
        api_respond(req, 200, "text/plain", "", 0);
        return;
    }
    log_stream_start(s, j, req, q);
}

/* ---- the session's life ------------------------------------------------------------------- */

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
    ev_timer_stop(s->loop, &s->guard_t);
    ev_io_stop(s->loop, &s->watch_w);
    session_guard_check(s, NULL, true); /* the last word of what ran in the background */
    if (!s->shutting_down) {
        LOG_E("session", "the sandbox's init ended unexpectedly: the session is over");
        s->end_reason = SESSION_END_FAILED;
    }
    approvers_end(s); /* their streams end with the reason: `cordon approve --watch` returns */
    session_expiry_stop(s);
    /* Everything in the sandbox died with init: settle every job and every waiting client. */
    double now = clock_wall_s();
    for (struct job *j = s->jobs; j; j = j->next) {
        restart_end(j, "the session ended");
        if (j->phase == JOB_RUNNING) {
            j->stop_requested = true;
            j->signal = SIGKILL;
            j->exit_code = 128 + SIGKILL;
            j->ended = now;
            j->end_ms = clock_mono_ms();
        }
        /* A question or a re-run outside goes on: its end finishes the job. */
        if (job_running(j))
            job_move(j, JOB_FINISHED);
        j->sandbox_running = false;
        if (j->req && !j->background && j->pid > 0) {
            job_finish_stream(j);
        } else if (j->req) {
            api_on_gone(j->req, NULL, NULL);
            api_respond_error(j->req, 409, "the session stopped");
            j->req = NULL;
        }
        if (j->stopping)
            job_stop_done(j, true);
        log_stream_wake(s, j);
    }
    session_record_write(s); /* before the socket goes (session_record.h) */
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
    jobs_persist(s); /* the state file exists once `session start` has returned */
    session_record_write(s);
    ev_io_start(loop, &s->ctl_w, p->ctl, EPOLLIN, on_ctl, s);
    return s;
}

void session_free(struct session *s)
{
    if (!s)
        return;
    while (s->jobs) {
        struct job *j = s->jobs;
        job_stop_release_waiters(j);
        job_unlink_free(s, j);
    }
    approvers_end(s);
    escalation_free(s);
    session_expiry_stop(s);
    ev_io_stop(s->loop, &s->ctl_w);
    ev_timer_stop(s->loop, &s->shutdown_t);
    ev_timer_stop(s->loop, &s->guard_t);
    ev_io_stop(s->loop, &s->watch_w);
    str_list_free(&s->guard_said);
    guarded_trees_free(s->p.guard);
    free(s);
}
