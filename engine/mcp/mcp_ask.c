/* mcp_ask.c — the questions for a person that a session asks while a command of ours runs (a
 * network destination no rule covers, a re-run outside the sandbox): put to the MCP client as
 * elicitation/create when it declared that capability, else denied at once; the answer goes
 * to the session as POST /v1/approvals/ID. See mcp_tools.h.
 *
 * Where the questions come from: the exec streams of our run_command calls (the session asks
 * a network question while a foreground exec is attached and sends it on every such stream,
 * and a re-run question on that command's own stream), and, when the client can be asked, the
 * session's approvals subscription (GET /v1/approvals?watch=1, an NDJSON stream of
 * {"event":"question","approval":{...}}); a session whose answer to that is the plain list
 * ({"approvals":[...]}, no subscription yet) is polled with it once a second instead. Each
 * question is asked once (its id is remembered), wherever it was seen first.
 * Uses mcp_wire (the request to the client), client_http. Must never: answer anything but
 * "deny" without the person's answer, or block the exec stream that brought the question. */
#include "mcp/mcp_tools.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/util.h"
#include "base/grant_words.h"
#include "base/session_protocol.h"
#include "base/visible.h"
#include "client/client_http.h"
#include "client/client_ndjson.h"
#include "mcp/mcp_wire.h"

/* How long to wait for the person when the question says no deadline. */
#define ASK_DEFAULT_S 120.0
/* Between two requests of the subscription: when its stream ended, or when the session only
 * answers with the list (a poll). */
#define WATCH_PAUSE_MS 1000
/* The ids of the questions seen: a session asks few, this many are remembered. */
#define SEEN_MAX 4096

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static long long seen[SEEN_MAX];
static size_t seen_len, seen_next;

/* First time this id is seen? */
static bool first_sight(long long id)
{
    bool first = true;
    pthread_mutex_lock(&seen_lock);
    for (size_t i = 0; i < seen_len && first; i++)
        first = seen[i] != id;
    if (first) {
        seen[seen_next] = id;
        seen_next = (seen_next + 1) % SEEN_MAX;
        if (seen_len < SEEN_MAX)
            seen_len++;
    }
    pthread_mutex_unlock(&seen_lock);
    return first;
}

struct question {
    const struct mcp_server *s;
    long long id;
    char *kind, *text;
    double expires; /* Unix seconds, or 0 */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* POST the answer. The session may have timed the question out meanwhile (404): it denied
 * it then, which is what a late answer is worth. */
static void post_answer(const struct question *q, const char *answer)
{
    struct chttp h;
    char path[64], body[96];
    snprintf(path, sizeof path, "/v1/approvals/%lld", q->id);
    double for_s = 0;
    int n;
    /* "for=10m": allowed as "session" is, until then */
    if (strncmp(answer, "for=", 4) == 0 && gw_parse_duration(answer + 4, &for_s))
        n = snprintf(body, sizeof body,
                     "{\"" API_ANSWER "\":\"session\",\"" API_ANSWER_FOR "\":%.0f}", for_s);
    else
        n = snprintf(body, sizeof body, "{\"" API_ANSWER "\":\"%s\"}", answer);
    if (chttp_open(&h, "mcp", q->s->session, true) != 0)
        return;
    if (chttp_request(&h, "POST", path, body, (size_t)n, NULL, NULL) < 0)
        fprintf(stderr, "cordon: mcp: cannot answer approval %lld: %s\n", q->id,
                h.failure[0] ? h.failure : "the session is not reachable");
    else if (!chttp_ok(&h))
        fprintf(stderr,
                "cordon: mcp: the session did not take the answer to approval %lld "
                "(HTTP %ld; it timed out?)\n",
                q->id, h.status);
    chttp_close(&h);
}

/* Why an elicitation was given up when the question was settled without us. */
static const char settled_elsewhere[] = "the question was settled elsewhere";

/* The person's answer: "once", "session" or "deny" (decline, cancel, no answer, anything
 * else); NULL when the question was settled elsewhere meanwhile (nothing to post). */
static const char *elicit(const struct question *q)
{
    static const char *const choices[] = {"once", "session", "for=10m", "for=1h", "deny"};
    char err[256];
    const char *answer = NULL;
    /* the question names what a sandboxed command chose (a host, a command line): shown through
     * the one renderer, so no control, bidi or zero-width character reaches the person raw */
    char *shown = visible_dup(q->text);
    char *message = xasprintf("cordon (the sandbox running this agent's commands) asks: %s\n"
                              "once: allow it this time; session: allow it for the rest of "
                              "this session; for=10m, for=1h: allow it for that long; deny: "
                              "refuse it.",
                              shown);
    free(shown);
    double wait = q->expires > 0 ? q->expires - now_s() : ASK_DEFAULT_S;
    if (wait < 1)
        wait = 1;
    int rc = mcp_elicit_choice(message,
                               "once: allow it this time; session: for the rest of this "
                               "session; for=10m, for=1h: for that long; deny: refuse it",
                               choices, ARRAY_LEN(choices), q->id, wait, &answer, err, sizeof err);
    free(message);
    if (rc < 0) {
        if (strcmp(err, settled_elsewhere) == 0)
            return NULL;
        fprintf(stderr, "cordon: mcp: approval %lld (%s) denied: %s\n", q->id, q->kind, err);
        return "deny";
    }
    return answer && strcmp(answer, "deny") != 0 ? answer : "deny";
}

/* Does the session have approvers (the subscription GET /v1/approvals?watch=1)? Such a session
 * asks only its approvers and denies at once when there is none, so a client that cannot
 * ask leaves its questions to them (a person at `cordon approve --watch`); a session before
 * approvers asks whoever attached an exec, and waits the permission timeout unless we deny.
 * Told by the answer to a watch value no session takes: 400 from a session that knows the
 * parameter, the plain list from one that ignores it. 1, 0, or -1 unknown. */
static int session_has_approvers(const struct mcp_server *s)
{
    static atomic_int known = -1;
    int v = atomic_load(&known);
    if (v >= 0)
        return v;
    struct chttp h;
    if (chttp_open(&h, "mcp", s->session, true) != 0)
        return -1;
    if (chttp_request(&h, "GET", "/v1/approvals?watch=probe", NULL, 0, NULL, NULL) == 0 &&
        (h.status == 400 || h.status == 200)) {
        v = h.status == 400;
        atomic_store(&known, v);
    }
    chttp_close(&h);
    return v;
}

static void *ask_thread(void *arg)
{
    struct question *q = arg;
    const char *answer = NULL;
    if (q->s->elicitation) {
        answer = elicit(q);
    } else if (session_has_approvers(q->s) == 1) {
        fprintf(stderr,
                "cordon: mcp: approval %lld (%s) left to the session's approvers: the MCP "
                "client cannot ask a person (no elicitation capability)\n",
                q->id, q->kind);
    } else {
        fprintf(stderr,
                "cordon: mcp: approval %lld (%s) denied: the MCP client cannot ask a "
                "person (it did not declare the elicitation capability)\n",
                q->id, q->kind);
        answer = "deny";
    }
    /* an expired question was denied by the session already */
    if (answer && (q->expires <= 0 || now_s() < q->expires))
        post_answer(q, answer);
    free(q->kind);
    free(q->text);
    free(q);
    return NULL;
}

void mcp_ask(const struct mcp_server *s, const struct json_value *approval)
{
    const struct json_value *id = json_get(approval, "id");
    const struct json_value *kind = json_get(approval, "kind");
    const struct json_value *text = json_get(approval, "question");
    const struct json_value *expires = json_get(approval, "expires");
    if (!id || id->type != JSON_NUMBER || !id->is_integer || !first_sight((long long)id->number))
        return;
    struct question *q = xcalloc(1, sizeof *q);
    q->s = s;
    q->id = (long long)id->number;
    q->kind = xstrdup(kind && kind->type == JSON_STRING ? kind->str : "question");
    q->text = xstrdup(text && text->type == JSON_STRING ? text->str : "(no question text)");
    q->expires = expires && expires->type == JSON_NUMBER ? expires->number : 0;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, ask_thread, q) != 0) {
        /* fail closed: without a thread nobody answers, and the session denies at its timeout */
        fprintf(stderr, "cordon: mcp: cannot ask approval %lld: no thread\n", q->id);
        free(q->kind);
        free(q->text);
        free(q);
    }
    pthread_attr_destroy(&at);
}

/* The approvals subscription --------------------------------------------------------------- */

struct watch {
    const struct mcp_server *s;
    struct ndjson_lines lines;
};

static int on_watch_line(void *ctx, const char *line, size_t len)
{
    struct watch *w = ctx;
    char err[160];
    struct json_value *v = json_parse(line, len, err, sizeof err);
    const struct json_value *event = json_get(v, API_EVENT);
    const struct json_value *list = json_get(v, "approvals");
    if (event && event->type == JSON_STRING && strcmp(event->str, API_EVENT_QUESTION) == 0) {
        const struct json_value *a = json_get(v, API_FIELD_APPROVAL);
        if (a && a->type == JSON_OBJECT)
            mcp_ask(w->s, a);
    } else if (list && list->type == JSON_ARRAY) {
        for (size_t i = 0; i < list->len; i++)
            if (list->items[i].type == JSON_OBJECT)
                mcp_ask(w->s, &list->items[i]);
    }
    const struct json_value *id = json_get(v, "id");
    if (event && event->type == JSON_STRING && strcmp(event->str, API_EVENT_SETTLED) == 0 && id &&
        id->type == JSON_NUMBER && id->is_integer) {
        /* answered by another approver or timed out: not to be asked (again) */
        (void)first_sight((long long)id->number);
        mcp_request_cancel((long long)id->number, settled_elsewhere);
    }
    /* anything else ("subscribed", ...): nothing to do */
    json_free(v);
    return 0;
}

static int on_watch(void *ctx, const char *data, size_t len)
{
    struct watch *w = ctx;
    return ndjson_feed(&w->lines, data, len, on_watch_line, w);
}

/* The subscription's connection while it is open, for mcp_watch_stop: our own session must
 * not wait for it when we stop it. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct chttp *watching;
static bool watch_stopped;

static void *watch_thread(void *arg)
{
    const struct mcp_server *s = arg;
    bool said = false;
    for (;;) {
        struct chttp h;
        struct watch w = {.s = s};
        if (chttp_open(&h, "mcp", s->session, true) != 0)
            break;
        pthread_mutex_lock(&watch_lock);
        bool stop = watch_stopped;
        watching = stop ? NULL : &h;
        pthread_mutex_unlock(&watch_lock);
        if (stop) {
            chttp_close(&h);
            break;
        }
        int rc = chttp_request(&h, "GET", "/v1/approvals?watch=1", NULL, 0, on_watch, &w);
        pthread_mutex_lock(&watch_lock);
        watching = NULL;
        stop = watch_stopped;
        pthread_mutex_unlock(&watch_lock);
        if (stop) {
            ndjson_lines_free(&w.lines);
            chttp_close(&h);
            break;
        }
        if (rc == 0 && chttp_ok(&h))
            (void)ndjson_finish(&w.lines, on_watch_line, &w);
        else if (!said) {
            /* the exec streams still bring questions: this only says the subscription failed */
            fprintf(stderr,
                    "cordon: mcp: cannot subscribe to session '%s''s approvals (%s); "
                    "retrying\n",
                    s->session,
                    h.status ? "an HTTP error" : (h.failure[0] ? h.failure : "not reachable"));
            said = true;
        }
        ndjson_lines_free(&w.lines);
        chttp_close(&h);
        struct timespec pause = {WATCH_PAUSE_MS / 1000, (WATCH_PAUSE_MS % 1000) * 1000000L};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

void mcp_watch_start(const struct mcp_server *s)
{
    static atomic_bool started;
    if (atomic_exchange(&started, true))
        return;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, watch_thread, (void *)s) != 0)
        fprintf(stderr, "cordon: mcp: cannot watch the session's approvals: no thread (the exec "
                        "streams still bring them)\n");
    pthread_attr_destroy(&at);
}

void mcp_watch_stop(void)
{
    pthread_mutex_lock(&watch_lock);
    watch_stopped = true;
    /* h.fd is the connection's while chttp_request runs; shutting it down ends that read */
    if (watching && watching->fd >= 0)
        shutdown(watching->fd, SHUT_RDWR);
    pthread_mutex_unlock(&watch_lock);
}
