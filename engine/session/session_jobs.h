/* Runs in: controller (cordon-session). */
/* session_jobs.h — the state of a session's controller, shared by its units (not an API):
 * session_ctl.c (the session object, init's reports, the operations that start and list
 * jobs), session_jobs.c (finding jobs, their JSON and state file, their pipes and streams,
 * pruning, moving a job between phases), session_stop.c (stopping groups, stop batches,
 * timeouts, shutdown), session_restart.c (supervised jobs' waits and restarts), session_escalation.c (judging a finished foreground command, the
 * questions for the approvers, re-runs outside), session_approvers.c (who may answer: the
 * subscribed API clients). Single-threaded, on the controller's event loop.
 *
 * A job (one `bash -c` of the session) is moved through these phases, by job_move() only:
 *   STARTING   the exec request was told to init (INIT_WIRE_SPAWN); waiting for its pid
 *              (INIT_WIRE_STARTED)
 *   RUNNING    its bash runs; a foreground job's output is streamed to its client, a
 *              background job's appended to its log
 *   DRAINING   (foreground) its bash ended: what it wrote before is read from the pipes and
 *              streamed, then the end of each stream
 *   JUDGING    (foreground) its output goes to the refusal and escalation hooks
 *   ASKING     (foreground) the approvers are asked whether it may run again outside the
 *              sandbox, or reach the destination the network policy blocked; the exit event
 *              waits for the answer (or the permission timeout)
 *   RERUNNING  (foreground) approved: it runs again outside the sandbox, streamed as before
 *   RESTARTING (background, supervised: exec --restart) its bash ended and its policy wants it
 *              again: its group is stopped (what the run left), and the backoff waited;
 *              then the same command is told to init again (back to STARTING, the job's
 *              first pid, log and counters kept: session_restart.c)
 *   FINISHED   over: a background job once its bash ended (and its policy, if any, wants no
 *              restart), a foreground one once it was judged and any question or re-run
 *              settled (its exit event sent, when its client is still there); a start init
 *              refused, a supervised job stopped, and what was starting, running or waiting
 *              to restart when init went, too
 * The moves: STARTING -> RUNNING | RESTARTING (a restart init refused) | FINISHED; RUNNING ->
 * DRAINING (foreground) | RESTARTING (background) | FINISHED; DRAINING -> JUDGING; JUDGING ->
 * ASKING | RERUNNING | FINISHED; ASKING -> RERUNNING | FINISHED; RERUNNING -> FINISHED;
 * RESTARTING -> STARTING | FINISHED. DRAINING and JUDGING last while init's report of the end
 * is handled (on_exited in session_ctl.c); ASKING and RERUNNING may outlive the sandbox.
 * Beside the phase, and not part of it: stopping the job's process group (stopping,
 * kill_sent: session_stop.c; a group may outlive its leader), a sandbox of its own still
 * there (sandbox_running), and how it ended (exit_code, signal, timed_out, stop_requested,
 * ran_outside). */
#ifndef CORDON_SESSION_JOBS_H
#define CORDON_SESSION_JOBS_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "session/api_server.h"
#include "controller/capture.h"
#include "controller/controller_setup.h"
#include "base/evloop.h"
#include "session/job_log.h"
#include "base/json_write.h"
#include "base/restart_policy.h"
#include "policy/lua_host.h"
#include "session/session_questions.h"
#include "session/session_ctl.h"
#include "session/session_expiry.h"
#include "session/session_grants.h"
#include "session/session_rerun.h"
#include "base/util.h"

#define STOP_POLL_MS 50
#define STOP_GIVE_UP_MS 5000         /* after KILL: then the group is reported as surviving */
#define STREAM_HIGH_WATER (1u << 20) /* bytes queued to a slow client before reading pauses */
#define FINISHED_KEPT 128            /* finished jobs remembered (listed, or for their turn) */

/* The phases above, in the order a job goes through them. */
enum job_phase {
    JOB_STARTING,
    JOB_RUNNING,
    JOB_DRAINING,
    JOB_JUDGING,
    JOB_ASKING,
    JOB_RERUNNING,
    JOB_RESTARTING,
    JOB_FINISHED,
};

struct job;
struct log_stream;
struct approver;

/* One stop or cancel request waiting for its groups to be gone. */
struct stop_batch {
    struct api_request *req; /* NULL once the client left */
    struct job *job;         /* the job of a stop request; NULL for a turn */
    char *turn;              /* the turn of a cancel request */
    int pending;
    bool failed;
    struct json_buf stopped; /* the pids whose group was alive, as a JSON list body */
};

struct stop_ref {
    struct stop_batch *batch;
    struct stop_ref *next;
};

struct job_pipe {
    int fd;
    struct ev_io w;
    struct job *job;
    const char *stream;     /* "stdout" / "stderr" */
    unsigned char carry[4]; /* the start of a UTF-8 sequence cut by the last read */
    size_t carry_len;
};

struct job {
    struct job *next;
    struct session *s;
    uint32_t id;
    pid_t pid; /* inside the sandbox; 0 until init reports the start */
    char *command, *turn;
    bool background;
    enum job_phase phase;        /* moved by job_move() only */
    bool fresh, sandbox_running; /* in a sandbox of its own (--session-exec=false), still there */
    int exit_code, signal;
    double started, ended; /* Unix seconds */
    uint64_t start_ms, end_ms;
    bool timed_out;
    bool stop_requested; /* a stop came while it ran: once ended, it is listed "stopped" */
    struct job_pipe out, err;
    struct job_log log;
    bool has_log;
    struct api_request *req; /* the exec request: answered (bg) or streamed to (fg) */
    double timeout;
    struct ev_timer timeout_t;
    /* stopping the group */
    bool stopping, kill_sent, found_alive;
    uint64_t kill_at, give_up_at;
    struct ev_timer stop_t;
    struct stop_ref *waiters;
    struct ev_timer resume_t; /* reading paused while the client catches up */
    /* judging a finished foreground command (session_escalation.c) */
    struct capture cap_out, cap_err; /* head and tail of each stream, for the refusal hook */
    struct lh_refusal refusals[8];
    size_t n_refusals, asked_refusal; /* asked_refusal: the one a re-run was asked about */
    /* a foreground command in direct mode: the host-trusted paths before it (trusted_changes.h) */
    struct trusted_snapshot *trusted;
    struct approval *approval;            /* the pending question about running it outside */
    struct rerun *rerun;                  /* it runs again outside the sandbox, as approved */
    struct job_pipe rerun_out, rerun_err; /* stream names and UTF-8 carry of the re-run */
    bool ran_outside;
    struct str_list net_once; /* "PORT HOST" allowed for this command only */
    uint64_t denial_mark;     /* the proxy's refusals before it started */
    /* supervision (background, exec --restart: session_restart.c) */
    struct restart_policy restart; /* RESTART_NO: not supervised */
    pid_t first_pid;               /* its pid as the person was told it: names the job and log */
    unsigned long restarts;        /* restarts so far */
    bool has_last_exit;            /* a run has ended: last_exit holds its status */
    int last_exit;
    double next_start; /* Unix seconds, while RESTARTING */
    bool backoff_over; /* RESTARTING: the wait is over (the group may still be going) */
    bool said_ceiling; /* the line about the wait's ceiling was written */
    bool restart_over; /* stopped, or the session ends: no more restarts */
    struct ev_timer restart_t;
};

struct session {
    struct ev_loop *loop;
    struct session_params p;
    struct ev_io ctl_w;
    struct job *jobs; /* oldest first */
    uint32_t next_id, next_seq;
    double started;
    bool shutting_down, ended, dirty;
    struct ev_timer shutdown_t;
    struct approvals approvals;      /* questions for the API's clients */
    struct rerun_grants reruns_kept; /* commands a person allowed outside (session_grants.h) */
    bool owner_set;                  /* the proxy may ask (an approver is subscribed) */
    struct approver *approvers;      /* GET /v1/approvals?watch=1 streams (session_approvers.c) */
    struct str_list once_next;       /* "PORT HOST" allowed once after a refusal: for the next
                                      * foreground command */
    struct log_stream *log_streams;  /* GET /v1/jobs/PID/log answers in progress */
    struct ev_timer guard_t;         /* the repositories' check while anything runs */
    struct limit_seen limits_told;   /* the cgroup's limit counters as last said */
    struct ev_io watch_w;            /* the repositories' watcher found one (guarded_trees_fd) */
    struct str_list guard_said;      /* lines of a check no command was there to hear */
    struct session_expiry expiry;    /* idle timeout and maximum lifetime (session_expiry.c) */
    enum session_end end_reason;     /* why it ended or is ending */
    struct rollback *rollback;       /* a rollback waiting for init (session_snapshots.c) */
};

/* session_jobs.c */
/* Move j to phase `to`: a move the list above does not have is a bug (asserted). */
void job_move(struct job *j, enum job_phase to);
/* It has not ended: its bash runs or is starting (STARTING, RUNNING), or it waits to start
 * again (RESTARTING, supervised). Listed "running" ("restarting" while waiting); it holds its
 * background slot. */
bool job_running(const struct job *j);
/* A foreground job whose output goes to its client as it comes (RUNNING or DRAINING). */
bool job_streaming(const struct job *j);
/* The pid a job is known by: its first run's (its log's name), whatever pid a restart got. */
pid_t job_shown_pid(const struct job *j);
/* The exit status the API reports for an ended job (124 after its timeout). */
int job_exit_status(const struct job *j);
/* One job as the API lists it (GET /v1/jobs, a stop's answer). */
void job_json(struct json_buf *b, const struct job *j);
/* Listed by GET /v1/jobs: every background job, foreground commands still running, and
 * sandboxes of their own that a command left processes in. */
bool job_listed(const struct job *j);
/* {"jobs":[...]}: the listed jobs, oldest first. */
void jobs_json(struct session *s, struct json_buf *b);
/* Write NAME.jobs.json now (atomically); session_after_round() does it when dirty. */
void jobs_persist(struct session *s);
/* The newest job with that pid (pids are reused); NULL when none. */
struct job *job_by_pid(struct session *s, long pid);
/* Undo what the commands changed in the workspace's repositories that would make the host's
 * git run a program (git_guard.h; full: the walk, else git_guard_tick): each line logged, and
 * sent to j's client (when not NULL) as its stderr, before its exit event. */
void session_guard_check(struct session *s, struct job *j, bool full);
/* Background jobs running now. */
unsigned jobs_running_background(struct session *s);
/* A non-blocking pipe for p's stream of j: p gets the read end, *write_end the other. */
int job_pipe_open(struct job *j, struct job_pipe *p, const char *stream, int *write_end);
/* Stop watching p and close it (no-op when closed). */
void job_pipe_close(struct session *s, struct job_pipe *p);
/* Start reading j's open pipes on the loop. */
void job_pipes_watch(struct job *j);
enum job_pump_result { PUMP_END, PUMP_EMPTY, PUMP_DATA };
/* Read once from one of j's pipes (non-blocking): log, stream or drop what came. */
enum job_pump_result job_pump(struct job *j, struct job_pipe *p);
/* Unlink j from its session (when linked) and free it with everything it holds. */
void job_unlink_free(struct session *s, struct job *j);
/* One NDJSON event (b, freed) to the job's client, if it still has one. */
void job_stream_event(struct job *j, struct json_buf *b);
/* An output event of n bytes on p's stream (text, or base64 when not UTF-8). */
void job_stream_output(struct job *j, struct job_pipe *p, const char *data, size_t n, bool last);
/* The exit event (with the refusals and whether it ran outside) and the end of the stream. */
void job_finish_stream(struct job *j);
/* Free what nobody needs any more. */
void session_prune(struct session *s);

/* session_restart.c */
/* j (background) ended with its status in exit_code: true when its policy restarts it (j is
 * then RESTARTING: its group stopped, the backoff timer set), false when it is over (a line in
 * its log says why when its policy ends). */
bool restart_after_exit(struct job *j);
/* A person stopped j (stop, cancel) or the session ends: no more restarts; a job waiting to
 * restart is FINISHED now, one in another phase ends as it would unsupervised. */
void restart_end(struct job *j, const char *why);
/* j's group is gone (job_stop_done): a waiting restart may go now. */
void restart_group_gone(struct job *j);
/* Init answered a restart's start (RESTARTING -> STARTING before): pid or -errno. true when
 * the job was handled (a refused start is counted and waited on again, or ends it). */
bool restart_started(struct job *j, pid_t pid);

/* session_stop.c */
/* Init's answer to a signal or probe of group pgid (INIT_WIRE_SIGNALED). */
void job_stop_signaled(struct session *s, pid_t pgid, int result);
/* j's group is gone (ok) or survived KILL: its stop batches are told, then pruning. */
void job_stop_done(struct job *j, bool ok);
/* Stop j's group (TERM, KILL after the grace) with no request waiting: a supervised job's
 * leftovers before its restart. A job whose restart is starting is stopped once started. */
void job_stop_group(struct job *j);
/* Stop j's group once its timeout (j->timeout seconds, > 0) has passed. */
void job_timeout_arm(struct job *j);
/* j is freed with the session: the batches waiting for it no longer do (answered when it
 * was their last job). */
void job_stop_release_waiters(struct job *j);

/* session_escalation.c */
/* A foreground command's bash ended and its output is drained: find refusals, maybe ask about
 * a re-run outside; finishes the job's stream now or once that is settled. */
void escalation_judge(struct job *j);
/* The proxy may ask while an approver is subscribed; without one it denies at once. */
void escalation_update_owner(struct session *s);
/* Deny every pending question now, settled by `by` (the last approver left). */
void escalation_deny_pending(struct session *s, const char *by);
/* j's foreground command ended or went away: drop what it was allowed for itself only. */
void escalation_job_done(struct job *j);
/* A foreground command started: it gets what was allowed "once" for the next command. */
void escalation_job_started(struct job *j);
/* The job is being freed or the session ends: its question and re-run go. */
void escalation_job_free(struct job *j);
void escalation_free(struct session *s);

/* session_approvers.c */
/* Is anybody subscribed who can answer a question? */
bool approvers_present(const struct session *s);
/* A new question, to every approver. */
void approvers_question(struct session *s, const struct approval *x);
/* x was settled (answer, by whom): to every approver, and to the exec streams that were told
 * the question (only_job's alone when not NULL). Call before x is removed. */
void approvers_settled(struct session *s, const struct approval *x, enum approval_answer answer,
                       const char *by, struct job *only_job);
/* End every approver's stream (the session is over). */
void approvers_end(struct session *s);
/* The session ends in `left` seconds (reason "idle" or "lifetime"): an event to every
 * approver. */
void approvers_expiry_warning(struct session *s, const char *reason, double left);
#endif
