/* mcp_wire.c — see mcp_wire.h.
 *
 * Every thread writes through mcp_send under one lock, and a message is one write of a whole
 * line, so the client never sees two messages interleaved. The requests we send are few (one
 * per question a person answers), so their waiters are a short list under a second lock. */
#include "mcp/mcp_wire.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

int mcp_send(const char *msg, size_t len)
{
    int rc = 0;
    char *line = xmalloc(len + 1);
    memcpy(line, msg, len);
    line[len] = '\n';
    pthread_mutex_lock(&out_lock);
    for (size_t i = 0; i <= len;) {
        ssize_t w = write(STDOUT_FILENO, line + i, len + 1 - i);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = w < 0 ? -errno : -EIO;
            break;
        }
        i += (size_t)w;
    }
    pthread_mutex_unlock(&out_lock);
    free(line);
    return rc;
}

void mcp_wire_close(void)
{
    /* Taken for good: whatever thread is still working, no message starts after this. A
     * thread stuck writing to a client that stopped reading keeps it: then we exit without. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    (void)pthread_mutex_timedlock(&out_lock, &until);
}

void mcp_send_error(const char *id, int code, const char *message)
{
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    json_buf_raw(&b, id ? id : "null", strlen(id ? id : "null"));
    json_buf_printf(&b, ",\"error\":{\"code\":%d,\"message\":", code);
    json_buf_string(&b, message, strlen(message));
    json_buf_lit(&b, "}}");
    (void)mcp_send(b.data, b.len);
    json_buf_free(&b);
}

void mcp_send_result(const char *id, const char *result, size_t len)
{
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    json_buf_raw(&b, id, strlen(id));
    json_buf_lit(&b, ",\"result\":");
    json_buf_raw(&b, result, len);
    json_buf_lit(&b, "}");
    (void)mcp_send(b.data, b.len);
    json_buf_free(&b);
}

static void write_number(struct json_buf *b, double d)
{
    if (!isfinite(d)) { /* json_parse never makes one: defensive */
        json_buf_lit(b, "null");
        return;
    }
    if (d == floor(d) && fabs(d) < 9007199254740992.0) {
        json_buf_printf(b, "%.0f", d);
        return;
    }
    char s[40];
    snprintf(s, sizeof s, "%.15g", d);
    if (strtod(s, NULL) != d)
        snprintf(s, sizeof s, "%.17g", d);
    json_buf_raw(b, s, strlen(s));
}

char *mcp_id_text(const struct json_value *id)
{
    struct json_buf b = {0};
    if (!id || (id->type != JSON_STRING && id->type != JSON_NUMBER))
        return NULL;
    mcp_write_value(&b, id);
    return b.data;
}

void mcp_write_value(struct json_buf *b, const struct json_value *v)
{
    switch (v->type) {
    case JSON_NULL:
        json_buf_lit(b, "null");
        break;
    case JSON_BOOL:
        if (v->boolean)
            json_buf_lit(b, "true");
        else
            json_buf_lit(b, "false");
        break;
    case JSON_NUMBER:
        write_number(b, v->number);
        break;
    case JSON_STRING:
        json_buf_string(b, v->str, v->len);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        json_buf_raw(b, v->type == JSON_ARRAY ? "[" : "{", 1);
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                json_buf_lit(b, ",");
            if (v->type == JSON_OBJECT) {
                json_buf_string(b, v->keys[i], strlen(v->keys[i]));
                json_buf_lit(b, ":");
            }
            mcp_write_value(b, &v->items[i]);
        }
        json_buf_raw(b, v->type == JSON_ARRAY ? "]" : "}", 1);
        break;
    }
}

/* One request of ours waiting for its answer. */
struct waiter {
    long long id;
    long long tag;             /* the caller's key for mcp_request_cancel, or 0 */
    const char *cancelled;     /* why mcp_request_cancel gave it up, or NULL */
    struct json_value *answer; /* the whole answer message, once it came */
    bool done;
    pthread_cond_t cond;
    struct waiter *next;
};

static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
static struct waiter *waiters;
static long long next_id = 1;
static bool shutting_down;

int mcp_request(const char *method, const char *params, long long tag, double timeout_s,
                struct json_value **result, char *err, size_t errlen)
{
    struct waiter w = {.tag = tag};
    struct json_buf b = {0};
    int rc = -1;
    *result = NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w.cond, &ca);
    pthread_condattr_destroy(&ca);

    pthread_mutex_lock(&wait_lock);
    if (shutting_down) {
        pthread_mutex_unlock(&wait_lock);
        snprintf(err, errlen, "the server is stopping");
        goto out;
    }
    w.id = next_id++;
    w.next = waiters;
    waiters = &w;
    pthread_mutex_unlock(&wait_lock);

    json_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":", w.id);
    json_buf_string(&b, method, strlen(method));
    json_buf_lit(&b, ",\"params\":");
    json_buf_raw(&b, params, strlen(params));
    json_buf_lit(&b, "}");
    bool sent = mcp_send(b.data, b.len) == 0;

    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    double whole = floor(timeout_s);
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((timeout_s - whole) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&wait_lock);
    while (sent && !w.done && !w.cancelled && !shutting_down)
        if (pthread_cond_timedwait(&w.cond, &wait_lock, &until) == ETIMEDOUT)
            break;
    for (struct waiter **p = &waiters; *p; p = &(*p)->next)
        if (*p == &w) {
            *p = w.next;
            break;
        }
    pthread_mutex_unlock(&wait_lock);

    if (sent && !w.done) {
        /* the client may still be showing the question: tell it nobody waits any more */
        struct json_buf c = {0};
        json_buf_printf(&c,
                        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                        "\"params\":{\"requestId\":%lld,\"reason\":\"%s\"}}",
                        w.id,
                        w.cancelled     ? w.cancelled
                        : shutting_down ? "the server is stopping"
                                        : "no answer in time");
        (void)mcp_send(c.data, c.len);
        json_buf_free(&c);
    }
    if (!sent) {
        snprintf(err, errlen, "cannot write to the client");
    } else if (!w.done) {
        snprintf(err, errlen, "%s",
                 w.cancelled     ? w.cancelled
                 : shutting_down ? "the server is stopping"
                                 : "no answer in time");
    } else {
        const struct json_value *e = json_get(w.answer, "error");
        const struct json_value *r = json_get(w.answer, "result");
        if (e) {
            const struct json_value *m = json_get(e, "message");
            snprintf(err, errlen, "the client answered with an error: %s",
                     m && m->type == JSON_STRING ? m->str : "(no message)");
        } else if (!r || r->type != JSON_OBJECT) {
            snprintf(err, errlen, "the client's answer has no result object");
        } else {
            *result = w.answer;
            w.answer = NULL;
            rc = 0;
        }
    }
out:
    json_free(w.answer);
    json_buf_free(&b);
    pthread_cond_destroy(&w.cond);
    return rc;
}

void mcp_answer(struct json_value *msg)
{
    const struct json_value *id = json_get(msg, "id");
    bool taken = false;
    if (id && id->type == JSON_NUMBER && id->is_integer) {
        pthread_mutex_lock(&wait_lock);
        for (struct waiter *w = waiters; w; w = w->next)
            if (w->id == (long long)id->number && !w->done) {
                w->answer = msg;
                w->done = true;
                taken = true;
                pthread_cond_signal(&w->cond);
                break;
            }
        pthread_mutex_unlock(&wait_lock);
    }
    if (!taken) {
        /* an answer to nothing we asked, or one that came after we stopped waiting */
        fprintf(stderr, "cordon: mcp: ignored an answer to no pending request\n");
        json_free(msg);
    }
}

bool mcp_request_cancel(long long tag, const char *reason)
{
    bool found = false;
    pthread_mutex_lock(&wait_lock);
    for (struct waiter *w = waiters; w; w = w->next)
        if (tag && w->tag == tag && !w->done && !w->cancelled) {
            w->cancelled = reason;
            pthread_cond_signal(&w->cond);
            found = true;
        }
    pthread_mutex_unlock(&wait_lock);
    return found;
}

void mcp_wire_shutdown(void)
{
    pthread_mutex_lock(&wait_lock);
    shutting_down = true;
    for (struct waiter *w = waiters; w; w = w->next)
        pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&wait_lock);
}

int mcp_elicit_choice(const char *message, const char *description, const char *const *choices,
                      size_t n, long long tag, double timeout_s, const char **answer, char *err,
                      size_t errlen)
{
    struct json_buf p = {0};
    json_buf_lit(&p, "{\"message\":");
    json_buf_string(&p, message, strlen(message));
    json_buf_lit(&p, ",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"answer\":{"
                     "\"type\":\"string\",\"title\":\"Answer\",");
    if (description) {
        json_buf_lit(&p, "\"description\":");
        json_buf_string(&p, description, strlen(description));
        json_buf_lit(&p, ",");
    }
    json_buf_lit(&p, "\"enum\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            json_buf_lit(&p, ",");
        json_buf_string(&p, choices[i], strlen(choices[i]));
    }
    json_buf_lit(&p, "]}},\"required\":[\"answer\"]}}");
    struct json_value *res = NULL;
    *answer = NULL;
    int rc = mcp_request("elicitation/create", p.data, tag, timeout_s, &res, err, errlen);
    json_buf_free(&p);
    if (rc < 0)
        return -1;
    const struct json_value *r = json_get(res, "result");
    const struct json_value *action = json_get(r, "action");
    const struct json_value *a = json_get(json_get(r, "content"), "answer");
    if (action && action->type == JSON_STRING && strcmp(action->str, "accept") == 0 && a &&
        a->type == JSON_STRING)
        for (size_t i = 0; i < n && !*answer; i++)
            if (strcmp(a->str, choices[i]) == 0)
                *answer = choices[i];
    json_free(res);
    return 0;
}
