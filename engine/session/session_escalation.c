/* session_escalation.c — the judgement side of a session's foreground commands, asked of its
 * approvers (session_approvers.c; docs/session-api.md, "Approvals"):
 *   - while a command runs, the proxy may ask whether it may reach a host no rule allows; it
 *     asks while an approver is subscribed (the question is also sent, for information, on
 *     every foreground exec's stream); with none, the proxy denies at once;
 *   - when a command has ended, its output goes to the `refusal` hook; each refusal is in the
 *     exit event, and when the `escalate` hook offers a re-run outside the sandbox and an
 *     approver is subscribed, it is asked (the exit event waits for the answer, at most the
 *     permission timeout: then deny). "session" covers that exact command string from then
 *     on. A refusal by the network policy is offered as that destination allowed instead
 *     (once: for the next foreground command; session: for the session), unless it was asked
 *     about while the command ran.
 * The exec's own client is never asked: it is the agent whose command wants more. Nothing runs
 * less sandboxed without a person's answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/session_protocol.h"
#include "proxy/proxy.h"
#include "controller/refusal_report.h"
#include "session/session_asker.h"
#include "session/session_jobs.h"

/* ---- questions on the streams ---------------------------------------------------------- */

/* The question as an event on every foreground exec's stream (only_job: on that one only). */
static void announce(struct session *s, const struct approval *x, struct job *only_job)
{
    for (struct job *j = s->jobs; j; j = j->next) {
        if (!j->req || j->background || (only_job && j != only_job))
            continue;
        struct json_buf b = {0};
        json_buf_lit(&b, "{\"event\":\"" API_EVENT_APPROVAL "\",\"session\":");
        json_buf_cstr_or_null(&b, s->p.name);
        json_buf_lit(&b, ",\"approval\":");
        approval_json(x, &b);
        json_buf_lit(&b, "}");
        job_stream_event(j, &b);
    }
}

/* ---- network questions from the proxy ---------------------------------------------------- */

/* The command a network question came from: the job whose process holds the asking
 * connection (session_asker.h: a background job's question names that job); where that cannot
 * be traced, the only job running, else none (the question then names no command rather than
 * a wrong one). */
static struct job *asking_job(struct session *s, unsigned id)
{
    struct sockaddr_storage client;
    struct job *j =
        s->p.proxy && proxy_question_client(s->p.proxy, id, &client) ? asker_job(s, &client) : NULL;
    if (j)
        return j;
    unsigned running = 0;
    for (struct job *k = s->jobs; k; k = k->next)
        if (job_running(k) && k->pid > 0 && running++ == 0)
            j = k;
    return running == 1 ? j : NULL;
}

static void net_ask(void *ctx, unsigned id, const char *text)
{
    struct session *s = ctx;
    struct job *j = asking_job(s, id);
    struct approval *x = approvals_add(&s->approvals, APPROVAL_NETWORK, text, j ? j->command : NULL,
                                       s->p.cfg->permission_timeout);
    x->proxy_id = id;
    x->job = j ? j->pid : 0;
    if (!proxy_question_target(s->p.proxy, id, x->host, sizeof x->host, &x->port))
        snprintf(x->host, sizeof x->host, "?");
    announce(s, x, NULL);
    approvers_question(s, x);
}

static void net_closed(void *ctx, unsigned id, const char *why)
{
    (void)why; /* the proxy denied it: no answer in time */
    struct session *s = ctx;
    struct approval *x = approvals_find_proxy(&s->approvals, id);
    if (x) {
        approvers_settled(s, x, ANSWER_DENY, "timeout", NULL);
        approvals_remove(&s->approvals, x);
    }
}

void escalation_update_owner(struct session *s)
{
    if (!s->p.proxy || !s->p.cfg->network_ask || s->ended)
        return;
    bool attached = approvers_present(s);
    if (attached == s->owner_set)
        return;
    s->owner_set = attached;
    struct proxy_owner owner = {0};
    if (attached) {
        owner.ctx = s;
        owner.ask = net_ask;
        owner.closed = net_closed;
    }
    /* Without one, a new question is denied at once; pending ones are denied by
     * escalation_deny_pending. */
    proxy_set_owner(s->p.proxy, &owner, s->p.cfg->permission_timeout);
}

/* The key of a destination in the "once" lists: "PORT HOST" (parsed back in
 * escalation_job_done). */
static void once_key(const struct approval *x, char *key, size_t n)
{
    snprintf(key, n, "%u %s", x->port, x->host);
}

/* "allow once" holds while the foreground commands that ran when it was given run. */
static void grant_once(struct session *s, const struct approval *x)
{
    char key[300];
    once_key(x, key, sizeof key);
    for (struct job *j = s->jobs; j; j = j->next)
        if (!j->background && job_running(j) && j->pid > 0 && !str_list_contains(&j->net_once, key))
            str_list_push(&j->net_once, key);
}

void escalation_job_done(struct job *j)
{
    struct session *s = j->s;
    for (size_t i = 0; i < j->net_once.len; i++) {
        const char *key = j->net_once.items[i];
        bool still = false;
        for (struct job *k = s->jobs; k && !still; k = k->next)
            still = k != j && job_running(k) && str_list_contains(&k->net_once, key);
        char *host = strchr(key, ' ');
        if (!still && host && s->p.proxy)
            proxy_forget(s->p.proxy, host + 1, (unsigned)atoi(key));
    }
    str_list_free(&j->net_once);
}

void escalation_job_started(struct job *j)
{
    struct session *s = j->s;
    if (s->p.proxy)
        j->denial_mark = proxy_denial_mark(s->p.proxy);
    for (size_t i = 0; i < s->once_next.len; i++)
        if (!str_list_contains(&j->net_once, s->once_next.items[i]))
            str_list_push(&j->net_once, s->once_next.items[i]);
    str_list_free(&s->once_next);
}

/* ---- a command run again outside ---------------------------------------------------------- */

/* j's judging, question or re-run is over: its exit event ends its stream. */
static void finish(struct job *j)
{
    job_move(j, JOB_FINISHED);
    job_finish_stream(j);
}

static void rerun_output(void *ctx, int fd, const char *data, size_t n)
{
    struct job *j = ctx;
    job_stream_output(j, fd == 1 ? &j->rerun_out : &j->rerun_err, data, n, false);
}

static void rerun_done(void *ctx, int exit_code)
{
    struct job *j = ctx;
    job_stream_output(j, &j->rerun_out, "", 0, true);
    job_stream_output(j, &j->rerun_err, "", 0, true);
    j->exit_code = exit_code;
    j->signal = 0;
    j->ran_outside = true;
    rerun_free(j->rerun);
    j->rerun = NULL;
    finish(j);
    session_prune(j->s);
}

static void run_outside(struct job *j, const char *why)
{
    job_move(j, JOB_RERUNNING);
    j->rerun_out.stream = "stdout";
    j->rerun_err.stream = "stderr";
    char note[1024];
    int len =
        snprintf(note, sizeof note, "cordon: ran outside the sandbox, as approved %s, because %s\n",
                 why, j->refusals[j->asked_refusal].reason);
    job_stream_output(j, &j->rerun_err, note,
                      len > 0 && (size_t)len < sizeof note ? (size_t)len : 0, false);
    LOG_I("session", "job %d runs again outside the sandbox, as approved: %s", (int)j->pid,
          j->command);
    char err[256];
    struct rerun_callbacks cb = {.ctx = j, .output = rerun_output, .done = rerun_done};
    j->rerun = rerun_start(j->s->loop, j->s->p.cfg, j->command, &cb, err, sizeof err);
    if (!j->rerun) {
        len = snprintf(note, sizeof note, "cordon: could not run it outside: %s\n", err);
        job_stream_output(j, &j->rerun_err, note,
                          len > 0 && (size_t)len < sizeof note ? (size_t)len : 0, true);
        finish(j);
    }
}

/* ---- judging a finished command ----------------------------------------------------------- */

static void on_question_timeout(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    struct job *j = t->data;
    struct session *s = j->s;
    const char *msg = j->approval && j->approval->kind == APPROVAL_NETWORK
                          ? "cordon: no answer in time: the destination stays blocked\n"
                          : "cordon: no answer in time: not run outside the sandbox\n";
    approvers_settled(s, j->approval, ANSWER_DENY, "timeout", j);
    approvals_remove(&s->approvals, j->approval);
    j->approval = NULL;
    job_stream_output(j, &j->err, msg, strlen(msg), true);
    finish(j);
    session_prune(s);
}

/* Ask the approvers whether the destination r blocked may be reached from now on; false when
 * it is not asked (no approver, no client waiting for the result, or it was asked about while
 * the command ran). */
static bool offer_destination(struct job *j, const struct lh_refusal *r)
{
    struct session *s = j->s;
    const char *colon = strrchr(r->path, ':');
    if (!j->req || !approvers_present(s) || !s->p.proxy || !colon || colon == r->path ||
        str_list_contains(proxy_asked(s->p.proxy), r->path))
        return false;
    char question[700];
    snprintf(question, sizeof question,
             "the sandbox's network policy blocked %.300s: allow it (then run the "
             "command again)?",
             r->path);
    j->approval = approvals_add(&s->approvals, APPROVAL_NETWORK, question, j->command,
                                s->p.cfg->permission_timeout);
    struct approval *x = j->approval;
    x->job = j->pid;
    x->proxy_id = 0; /* not a question of the proxy's: answered here */
    size_t hn = (size_t)(colon - r->path);
    if (r->path[0] == '[' && hn >= 2 && r->path[hn - 1] == ']') /* [v6]:port */
        snprintf(x->host, sizeof x->host, "%.*s", (int)(hn - 2), r->path + 1);
    else
        snprintf(x->host, sizeof x->host, "%.*s", (int)hn, r->path);
    x->port = (unsigned)atoi(colon + 1);
    ev_timer_start(s->loop, &x->timer, (uint64_t)(s->p.cfg->permission_timeout * 1000),
                   on_question_timeout, j);
    job_move(j, JOB_ASKING);
    announce(s, x, j);
    approvers_question(s, x);
    return true;
}

void escalation_judge(struct job *j)
{
    struct session *s = j->s;
    /* What the proxy refused while it ran (commands running beside it count too). */
    struct str_list denied = {0};
    if (s->p.proxy)
        proxy_denied_since(s->p.proxy, j->denial_mark, &denied);
    j->n_refusals =
        refusal_report(s->p.cfg, j->command, j->exit_code, j->signal, &j->cap_out, &j->cap_err,
                       &denied, false, j->refusals, ARRAY_LEN(j->refusals));
    str_list_free(&denied);
    bool ask_sandbox_off = false, plan = false;
    if (j->n_refusals > 0) /* a Lua call, for the refusals only: none after most commands */
        lh_profile_escalation(&ask_sandbox_off, &plan);
    /* Someone can be asked: an approver, and a client waiting for the result (a re-run's
     * output goes to it). */
    bool can_ask = j->req && approvers_present(s);
    for (size_t i = 0; i < j->n_refusals; i++) {
        struct lh_escalation e;
        char err[512];
        if (lh_escalate(&j->refusals[i], j->command, ask_sandbox_off, plan, false, can_ask, &e, err,
                        sizeof err) != LH_OK) {
            LOG_E("session", "escalation policy failed, denied: %s", err);
            break;
        }
        if (e.ask && strcmp(e.offer, "network") == 0) {
            if (offer_destination(j, &j->refusals[i]))
                return; /* the exit event waits for the answer */
            continue;
        }
        if (!e.ask || strcmp(e.offer, "rerun") != 0)
            continue; /* deny */
        j->asked_refusal = i;
        if (rerun_grant_covers(s, j->command)) {
            run_outside(j, "for this session");
            return;
        }
        if (!can_ask)
            break; /* nobody to ask: denied at once */
        char question[1024];
        /* "session" matches the command string, not what it runs: the approver must know that
         * the same words later run outside whatever the scripts they start have become. */
        snprintf(question, sizeof question,
                 "%s (the sandboxed attempt already ran and may have left "
                 "partial changes; 'session' runs this exact command string outside, unasked, each "
                 "time the sandbox refuses it again, not what it runs: the scripts it starts may "
                 "change)",
                 e.reason);
        j->approval = approvals_add(&s->approvals, APPROVAL_RERUN, question, j->command,
                                    s->p.cfg->permission_timeout);
        j->approval->job = j->pid;
        ev_timer_start(s->loop, &j->approval->timer,
                       (uint64_t)(s->p.cfg->permission_timeout * 1000), on_question_timeout, j);
        job_move(j, JOB_ASKING);
        announce(s, j->approval, j);
        approvers_question(s, j->approval);
        return; /* the exit event waits for the answer */
    }
    finish(j);
}

/* ---- the API ------------------------------------------------------------------------------- */

void session_op_approvals(struct session *s, struct api_request *req)
{
    struct json_buf b = {0};
    approvals_json(&s->approvals, &b);
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
}

static struct job *job_of_approval(struct session *s, const struct approval *x)
{
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->approval == x)
            return j;
    return NULL;
}

/* Settle x with answer a given by `by` (person: an approver's answer, not a deny for want of
 * one); its effect, the settled events, and one line for the person in message. x is freed. */
static void settle(struct session *s, struct approval *x, enum approval_answer a, const char *by,
                   double for_s, bool person, char *message, size_t mlen)
{
    struct proxy_grant_terms terms = {.by = by, .for_s = for_s};
    struct job *j = job_of_approval(s, x);
    approvers_settled(s, x, a, by, x->proxy_id ? NULL : j);
    if (x->kind == APPROVAL_NETWORK && x->proxy_id == 0) {
        /* offered after a refusal: from the next command on */
        ev_timer_stop(s->loop, &x->timer);
        if (a != ANSWER_DENY) {
            terms.command = a == ANSWER_ONCE;
            (void)proxy_grant(s->p.proxy, x->host, x->port, true, &terms); /* full: said */
            if (a == ANSWER_ONCE) {
                char key[300];
                once_key(x, key, sizeof key);
                str_list_push(&s->once_next, key);
            }
        }
        char timed[96];
        snprintf(timed, sizeof timed, "allowed for %.0f s: run the command again", for_s);
        snprintf(message, mlen, "%s:%u %s", x->host, x->port,
                 a == ANSWER_ONCE ? "allowed for the next command: run it again"
                 : a == ANSWER_SESSION
                     ? (for_s > 0 ? timed : "allowed for the session: run the command again")
                     : "stays blocked");
        approvals_remove(&s->approvals, x);
        if (j) {
            j->approval = NULL;
            char note[600];
            int len = snprintf(note, sizeof note, "cordon: %s\n", message);
            job_stream_output(j, &j->err, note,
                              len > 0 && (size_t)len < sizeof note ? (size_t)len : 0, true);
            finish(j);
            session_prune(s);
        }
    } else if (x->kind == APPROVAL_NETWORK) {
        if (a == ANSWER_ONCE)
            grant_once(s, x);
        proxy_answer(s->p.proxy, x->proxy_id,
                     a == ANSWER_ONCE      ? PROXY_ALLOW_COMMAND
                     : a == ANSWER_SESSION ? PROXY_ALLOW_SESSION
                                           : PROXY_DENY,
                     &terms);
        if (a == ANSWER_DENY && !person) /* nobody said no: the next attempt is judged afresh */
            proxy_forget(s->p.proxy, x->host, x->port);
        char timed[64];
        snprintf(timed, sizeof timed, "allowed for %.0f s", for_s);
        snprintf(message, mlen, "%s:%u %s", x->host, x->port,
                 a == ANSWER_ONCE      ? "allowed while the commands running now run"
                 : a == ANSWER_SESSION ? (for_s > 0 ? timed : "allowed for the session")
                                       : "denied");
        approvals_remove(&s->approvals, x);
    } else {
        ev_timer_stop(s->loop, &x->timer);
        if (a == ANSWER_SESSION)
            (void)rerun_grant_add(s, x->command, by, for_s); /* full: said; it runs once */
        snprintf(message, mlen, "%s",
                 a == ANSWER_DENY ? "denied: not run outside the sandbox"
                                  : "running it outside the sandbox");
        approvals_remove(&s->approvals, x);
        if (j) {
            j->approval = NULL;
            if (a == ANSWER_DENY) {
                finish(j);
                session_prune(s);
            } else {
                run_outside(j, a == ANSWER_ONCE ? "once" : "for this session");
            }
        }
    }
}

void session_op_answer(struct session *s, struct api_request *req, unsigned id, const char *answer,
                       const char *by, double for_s)
{
    enum approval_answer a;
    if (!approval_parse_answer(answer, &a)) {
        api_respond_error(req, 400, "\"answer\" must be \"once\", \"session\" or \"deny\"");
        return;
    }
    if (for_s > 0 && a != ANSWER_SESSION) {
        api_respond_error(req, 400,
                          "\"for\" goes with the answer \"session\" only (allowed until then)");
        return;
    }
    struct approval *x = approvals_find(&s->approvals, id);
    if (!x) {
        api_respond_error(req, 404,
                          "no pending approval %u in session '%s' (answered, timed out, or "
                          "never asked; cordon approve lists none: GET /v1/approvals)",
                          id, s->p.name);
        return;
    }
    char message[512];
    settle(s, x, a, by ? by : "api", for_s, true, message, sizeof message);
    struct json_buf b = {0};
    json_buf_printf(&b, "{\"id\":%u,\"answer\":\"%s\",\"message\":", id, approval_answer_name(a));
    json_buf_cstr_or_null(&b, message);
    json_buf_lit(&b, "}");
    api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
}

void escalation_deny_pending(struct session *s, const char *by)
{
    while (s->approvals.list) {
        char message[512];
        settle(s, s->approvals.list, ANSWER_DENY, by, 0, false, message, sizeof message);
    }
}

void escalation_job_free(struct job *j)
{
    if (j->approval) {
        ev_timer_stop(j->s->loop, &j->approval->timer);
        approvals_remove(&j->s->approvals, j->approval);
        j->approval = NULL;
    }
    rerun_free(j->rerun);
    j->rerun = NULL;
}

void escalation_free(struct session *s)
{
    approvals_free(&s->approvals);
    rerun_grants_free(&s->reruns_kept);
    str_list_free(&s->once_next);
    if (s->owner_set && s->p.proxy) {
        struct proxy_owner none = {0};
        proxy_set_owner(s->p.proxy, &none, 0);
    }
}
