/* session_approvers.c — who may answer a session's questions (docs/session-api.md,
 * "Approvals"): the API clients subscribed with `GET /v1/approvals?watch=1` (`cordon approve
 * --watch NAME`, the terminal of a `cordon session start` that stays in the foreground, an MCP
 * client that can ask its user). Owns the subscribers' list and their NDJSON stream: a
 * "subscribed" line, each pending question once when it subscribes, then one "question" line per question asked and
 * one "settled" line per question answered, timed out or denied, and an "expiring" line before
 * the session's idle timeout or maximum lifetime ends it (session_expiry.c). Also tells the questions'
 * outcome to the exec streams that were told the question.
 *
 * The client of a foreground exec is never an approver: it is the agent whose command asked,
 * and an agent must not approve itself. A sandboxed command cannot subscribe either: the
 * socket is not in its view of the filesystem, and where it is made visible the API's peer
 * check refuses every client from another user namespace (api_server.c).
 *
 * With no subscriber a question is denied at once (session_escalation.c checks
 * approvers_present() before it asks); when the last one leaves, the questions it was shown
 * are denied at once too, so a command never waits for an answer nobody can give.
 * Uses api_server (the streams), session_questions (the JSON). Must never: decide an answer
 * itself, other than deny. */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/session_protocol.h"
#include "session/session_jobs.h"

struct approver {
    struct session *s;
    struct api_request *req;
    struct approver *next;
};

bool approvers_present(const struct session *s)
{
    return s->approvers != NULL;
}

static void unlink_approver(struct session *s, struct approver *a)
{
    for (struct approver **p = &s->approvers; *p; p = &(*p)->next) {
        if (*p == a) {
            *p = a->next;
            break;
        }
    }
    free(a);
}

/* An approver that stopped reading would keep every later line queued for it: past
 * STREAM_HIGH_WATER its stream is ended, with one line in the session's log, and it no longer
 * counts (the questions it was shown wait for another approver or their timeout, as questions
 * do). Its client sees the stream end and may subscribe again. */
static bool drop_if_stuck(struct session *s, struct approver *a)
{
    if (api_stream_pending(a->req) <= STREAM_HIGH_WATER)
        return false;
    LOG_W("session", "an approver stopped reading (%u KiB queued): its stream is ended",
          (unsigned)(api_stream_pending(a->req) >> 10));
    api_on_gone(a->req, NULL, NULL);
    api_stream_end(a->req);
    unlink_approver(s, a);
    return true;
}

static void send_all(struct session *s, struct json_buf *b)
{
    json_buf_lit(b, "\n");
    bool dropped = false;
    for (struct approver *a = s->approvers, *next; a; a = next) {
        next = a->next;
        api_stream_write(a->req, b->data, b->len);
        dropped |= drop_if_stuck(s, a);
    }
    json_buf_free(b);
    if (dropped && !approvers_present(s))
        escalation_update_owner(s);
}

static void question_line(struct json_buf *b, const struct session *s, const struct approval *x)
{
    json_buf_lit(b, "{\"event\":\"" API_EVENT_QUESTION "\",\"session\":");
    json_buf_cstr_or_null(b, s->p.name);
    json_buf_lit(b, ",\"approval\":");
    approval_json(x, b);
    json_buf_lit(b, "}");
}

static void settled_line(struct json_buf *b, unsigned id, enum approval_answer answer,
                         const char *by)
{
    json_buf_printf(b,
                    "{\"event\":\"" API_EVENT_SETTLED "\",\"id\":%u,\"answer\":\"%s\",\"by\":", id,
                    approval_answer_name(answer));
    json_buf_cstr_or_null(b, by);
    json_buf_lit(b, "}");
}

void approvers_question(struct session *s, const struct approval *x)
{
    struct json_buf b = {0};
    question_line(&b, s, x);
    send_all(s, &b);
}

void approvers_settled(struct session *s, const struct approval *x, enum approval_answer answer,
                       const char *by, struct job *only_job)
{
    struct json_buf b = {0};
    settled_line(&b, x->id, answer, by);
    send_all(s, &b);
    /* The exec streams that were told the question hear its outcome (job_stream_event frees) */
    for (struct job *j = s->jobs; j; j = j->next) {
        if (!j->req || j->background || (only_job && j != only_job))
            continue;
        struct json_buf e = {0};
        settled_line(&e, x->id, answer, by);
        job_stream_event(j, &e);
    }
}

static void approver_gone(void *ctx, struct api_request *req)
{
    (void)req;
    struct approver *a = ctx;
    struct session *s = a->s;
    unlink_approver(s, a);
    if (approvers_present(s))
        return;
    LOG_I("session", "the last approver left: its pending questions are denied");
    escalation_update_owner(s);
    escalation_deny_pending(s, "nobody: the last approver left");
}

void session_op_watch_approvals(struct session *s, struct api_request *req)
{
    if (s->ended || s->shutting_down) {
        api_respond_error(req, 409, "the session is stopping");
        return;
    }
    struct approver *a = calloc(1, sizeof *a);
    if (!a)
        die("out of memory");
    a->s = s;
    a->req = req;
    api_stream_begin(req, "application/x-ndjson");
    /* The first line says the subscription holds: from here on, questions come to it. */
    struct json_buf hello = {0};
    json_buf_lit(&hello, "{\"event\":\"" API_EVENT_SUBSCRIBED "\",\"session\":");
    json_buf_cstr_or_null(&hello, s->p.name);
    json_buf_lit(&hello, "}\n");
    api_stream_write(req, hello.data, hello.len);
    json_buf_free(&hello);
    for (const struct approval *x = s->approvals.list; x; x = x->next) {
        struct json_buf b = {0};
        question_line(&b, s, x);
        json_buf_lit(&b, "\n");
        api_stream_write(req, b.data, b.len);
        json_buf_free(&b);
    }
    a->next = s->approvers;
    s->approvers = a;
    api_on_gone(req, approver_gone, a);
    escalation_update_owner(s);
}

void approvers_expiry_warning(struct session *s, const char *reason, double left)
{
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"event\":\"" API_EVENT_EXPIRING "\",\"session\":");
    json_buf_cstr_or_null(&b, s->p.name);
    json_buf_lit(&b, ",\"reason\":");
    json_buf_cstr_or_null(&b, reason);
    json_buf_printf(&b, ",\"in_seconds\":%.0f}", left);
    send_all(s, &b);
}

void approvers_end(struct session *s)
{
    struct json_buf b = {0};
    session_ended_event(s, &b); /* why the stream ends, when the session's end closes it */
    while (s->approvers) {
        struct approver *a = s->approvers;
        api_on_gone(a->req, NULL, NULL);
        if (b.len)
            api_stream_write(a->req, b.data, b.len);
        api_stream_end(a->req);
        unlink_approver(s, a);
    }
    json_buf_free(&b);
}
