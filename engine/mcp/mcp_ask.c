/* mcp_ask.c — the questions for a person that a session asks while a command of ours runs (a
 * network destination no rule covers, a re-run outside the sandbox): put to the MCP client as
 * elicitation/create when it declared that capability, else denied at once; the answer goes
 * to the session as POST /v1/approvals/ID. See mcp_tools.h.
 *
 * Where the questions come from: the exec streams of our run_command calls. The session asks
 * a network question only while a foreground exec is attached and sends it on every such
 * stream, and a re-run question on that command's own stream, so the streams we hold carry
 * every question this client could answer; each is asked once (its id is remembered).
 * Uses mcp_wire (the request to the client), client_http. Must never: answer anything but
 * "deny" without the person's answer, or block the exec stream that brought the question. */
#include "mcp/mcp_tools.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "client/client_http.h"
#include "mcp/mcp_wire.h"

/* How long to wait for the person when the question says no deadline. */
#define ASK_DEFAULT_S 120.0
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
    double expires;             /* Unix seconds, or 0 */
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
    char path[64], body[64];
    snprintf(path, sizeof path, "/v1/approvals/%lld", q->id);
    int n = snprintf(body, sizeof body, "{\"answer\":\"%s\"}", answer);
    if (chttp_open(&h, "mcp", q->s->session, true) != 0)
        return;
    if (chttp_request(&h, "POST", path, body, (size_t)n, NULL, NULL) < 0)
        fprintf(stderr, "cordon: mcp: cannot answer approval %lld: %s\n", q->id,
                h.failure[0] ? h.failure : "the session is not reachable");
    else if (!chttp_ok(&h))
        fprintf(stderr, "cordon: mcp: the session did not take the answer to approval %lld "
                        "(HTTP %ld; it timed out?)\n", q->id, h.status);
    chttp_close(&h);
}

/* The person's answer: "once", "session" or "deny" (decline, cancel, no answer, anything
 * else). */
static const char *elicit(const struct question *q)
{
    struct json_buf p = {0};
    struct json_value *res = NULL;
    char err[256];
    const char *answer = "deny";
    char *message = xasprintf("cordon (the sandbox running this agent's commands) asks: %s\n"
                              "once: allow it this time; session: allow it for the rest of "
                              "this session; deny: refuse it.", q->text);
    json_buf_lit(&p, "{\"message\":");
    json_buf_string(&p, message, strlen(message));
    json_buf_lit(&p, ",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"answer\":{"
                     "\"type\":\"string\",\"title\":\"Answer\",\"description\":\"once: allow it "
                     "this time; session: for the rest of this session; deny: refuse it\","
                     "\"enum\":[\"once\",\"session\",\"deny\"]}},\"required\":[\"answer\"]}}");
    double wait = q->expires > 0 ? q->expires - now_s() : ASK_DEFAULT_S;
    if (wait < 1)
        wait = 1;
    if (mcp_request("elicitation/create", p.data, wait, &res, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: mcp: approval %lld (%s) denied: %s\n", q->id, q->kind, err);
        goto out;
    }
    const struct json_value *r = json_get(res, "result");
    const struct json_value *action = json_get(r, "action");
    const struct json_value *a = json_get(json_get(r, "content"), "answer");
    if (action && action->type == JSON_STRING && strcmp(action->str, "accept") == 0 && a &&
        a->type == JSON_STRING &&
        (strcmp(a->str, "once") == 0 || strcmp(a->str, "session") == 0))
        answer = strcmp(a->str, "once") == 0 ? "once" : "session";
out:
    json_free(res);
    json_buf_free(&p);
    free(message);
    return answer;
}

static void *ask_thread(void *arg)
{
    struct question *q = arg;
    const char *answer;
    if (q->s->elicitation) {
        answer = elicit(q);
    } else {
        fprintf(stderr, "cordon: mcp: approval %lld (%s) denied: the MCP client cannot ask a "
                        "person (it did not declare the elicitation capability)\n", q->id, q->kind);
        answer = "deny";
    }
    /* an expired question was denied by the session already */
    if (q->expires <= 0 || now_s() < q->expires)
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
