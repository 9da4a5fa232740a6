/* Runs in: controller (cordon-session). */
/* session_ctl.h — the controller's side of a session: its jobs, and the link to init. It turns
 * API requests into messages to init (sandbox/init_wire.h) and init's reports into job states,
 * streamed output, capped logs and answers. Single-threaded, on the controller's event loop.
 *
 * Stopping a group (a job, a turn, a timeout): TERM, a probe every 50 ms, KILL once the grace
 * period has passed, probes until the group is gone — an error if it outlives KILL by 5 s.
 * Init signals groups only (never 0, 1 or their negatives); ESRCH means already gone. */
#ifndef CORDON_SESSION_CTL_H
#define CORDON_SESSION_CTL_H
#include <stdbool.h>
#include <sys/types.h>
#include "session/api_server.h"
#include "base/evloop.h"
#include "base/restart_policy.h"
#include "base/json_write.h"
#include "sandbox/sandbox-t.h"

struct log_query;

struct session;
struct cgroup;

struct session_params {
    const char *name;
    const char *socket_path;
    const char *state_path;           /* NAME.jobs.json */
    const struct sandbox_config *cfg; /* borrowed for the session's life */
    int ctl;                          /* the socket to init (non-blocking) */
    pid_t init_pid;                   /* host pid */
    pid_t owner_pid;                  /* 0 with --detach */
    struct proxy *proxy;              /* the egress proxy, NULL without a network namespace */
    struct port_relay *ports;         /* host ports and published ports, NULL without one */
    void (*on_ended)(void *ctx);      /* init is gone: the controller may exit */
    void *ctx;
    struct guarded_trees *guard; /* the writable trees' repositories (guarded_trees.h), or NULL */
    const struct cgroup *cgroup; /* the session's cgroup (its limit counters), or NULL */
    char **start_argv;           /* the options session start was given, NULL-terminated: all
                                  * but NAME, --detach, --owner and --review-fork (a fork repeats
                                  * them: session_fork.h); in record.json as "argv" */
    const char *start_cwd;       /* the folder session start ran in */
};

struct session *session_new(struct ev_loop *loop, const struct session_params *p);
void session_free(struct session *s);

/* The API's entry (an api_handler): session_api.c routes the request to one of the operations
 * below, which answer it now or later. */
void session_handle_request(void *session, struct api_request *req);

struct exec_request {
    const char *command;
    bool background;
    double timeout;                /* seconds; 0: none */
    const char *turn;              /* NULL: none */
    struct restart_policy restart; /* RESTART_NO: not supervised (background only) */
};
void session_op_info(struct session *s, struct api_request *req);
void session_op_exec(struct session *s, struct api_request *req, const struct exec_request *e);
void session_op_jobs(struct session *s, struct api_request *req);
void session_op_log(struct session *s, struct api_request *req, long pid,
                    const struct log_query *q);
void session_op_stop_job(struct session *s, struct api_request *req, long pid);
void session_op_cancel_turn(struct session *s, struct api_request *req, const char *turn);
void session_op_stop_session(struct session *s, struct api_request *req);
void session_op_approvals(struct session *s, struct api_request *req);
/* POST /v1/ports, DELETE /v1/ports/PORT (port_relay.h). host_addr NULL: 127.0.0.1; host_port
 * -1: the same as port. */
void session_op_publish(struct session *s, struct api_request *req, const char *host_addr,
                        long host_port, long port);
void session_op_unpublish(struct session *s, struct api_request *req, long port);
/* port_relay's inside_connect for the session's init (ctx: the session). */
int session_connect_inside(void *ctx, unsigned id, unsigned port);
/* GET /v1/approvals?watch=1: subscribe req as an approver (session_approvers.c). */
void session_op_watch_approvals(struct session *s, struct api_request *req);
/* by: who answered, as the settled events say it (NULL: "api"); for_s > 0 (with "session"
 * only): the allow ends that many seconds from now (session_grants.h). */
void session_op_answer(struct session *s, struct api_request *req, unsigned id, const char *answer,
                       const char *by, double for_s);

/* Why a session ended, as its record keeps it (session_end_name: "idle", "stopped", ...). */
enum session_end {
    SESSION_END_NONE = 0, /* it has not (or a record without a reason: the controller died) */
    SESSION_END_STOPPED,  /* session stop, POST /v1/session/stop */
    SESSION_END_OWNER,    /* its owner exited */
    SESSION_END_KILLED,   /* the controller got TERM, INT or HUP, or died */
    SESSION_END_IDLE,     /* session.idle_timeout */
    SESSION_END_LIFETIME, /* session.max_lifetime */
    SESSION_END_FAILED,   /* the controller's loop or the sandbox's init failed */
};
const char *session_end_name(enum session_end reason);

/* TERM to everything in the sandbox, KILL after the grace period, init exits; on_ended runs
 * when it has. Idempotent: the first reason is the one kept. */
void session_shut_down(struct session *s, enum session_end reason, const char *why);
/* The reason the session ended or is ending (SESSION_END_NONE while it runs). */
enum session_end session_end_reason(const struct session *s);
struct json_buf;
/* Append the session_ended event line ({"event":"session_ended","session","reason"} and '\n')
 * to b when the session is ending or has ended: the last line of a stream its end closes. */
void session_ended_event(const struct session *s, struct json_buf *b);
/* init exited (the controller reaped it). */
void session_init_gone(struct session *s);
/* Persist the job state if it changed since the last call (after each loop round). */
void session_after_round(struct session *s);
#endif
