/* session_questions.c — see session_questions.h. */
#include "session/session_questions.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"

struct approval *approvals_add(struct approvals *a, enum approval_kind kind, const char *question,
                               const char *command, double timeout_s)
{
    struct approval *x = xcalloc(1, sizeof *x);
    x->id = ++a->next_id;
    x->kind = kind;
    x->question = xstrdup(question);
    x->command = command ? xstrdup(command) : NULL;
    x->asked = clock_wall_s();
    x->expires = x->asked + timeout_s;
    struct approval **tail = &a->list;
    while (*tail)
        tail = &(*tail)->next;
    *tail = x;
    return x;
}

struct approval *approvals_find(struct approvals *a, unsigned id)
{
    for (struct approval *x = a->list; x; x = x->next)
        if (x->id == id)
            return x;
    return NULL;
}

struct approval *approvals_find_proxy(struct approvals *a, unsigned proxy_id)
{
    for (struct approval *x = a->list; x; x = x->next)
        if (x->kind == APPROVAL_NETWORK && x->proxy_id == proxy_id)
            return x;
    return NULL;
}

void approvals_remove(struct approvals *a, struct approval *x)
{
    for (struct approval **p = &a->list; *p; p = &(*p)->next) {
        if (*p == x) {
            *p = x->next;
            break;
        }
    }
    free(x->question);
    free(x->command);
    free(x);
}

void approvals_free(struct approvals *a)
{
    while (a->list)
        approvals_remove(a, a->list);
}

void approval_json(const struct approval *x, struct json_buf *b)
{
    json_buf_printf(b, "{\"id\":%u,\"kind\":\"%s\",\"question\":", x->id,
                    x->kind == APPROVAL_NETWORK ? "network" : "rerun");
    json_buf_cstr_or_null(b, x->question);
    json_buf_lit(b, ",\"command\":");
    json_buf_cstr_or_null(b, x->command);
    json_buf_lit(b, ",\"host\":");
    json_buf_cstr_or_null(b, x->kind == APPROVAL_NETWORK ? x->host : NULL);
    if (x->kind == APPROVAL_NETWORK)
        json_buf_printf(b, ",\"port\":%u", x->port);
    else
        json_buf_lit(b, ",\"port\":null");
    if (x->job > 0)
        json_buf_printf(b, ",\"job\":%ld", x->job);
    else
        json_buf_lit(b, ",\"job\":null");
    json_buf_printf(b, ",\"asked\":%.3f,\"expires\":%.3f}", x->asked, x->expires);
}

void approvals_json(const struct approvals *a, struct json_buf *b)
{
    json_buf_lit(b, "{\"approvals\":[");
    for (const struct approval *x = a->list; x; x = x->next) {
        if (x != a->list)
            json_buf_lit(b, ",");
        approval_json(x, b);
    }
    json_buf_lit(b, "]}");
}

bool approval_parse_answer(const char *s, enum approval_answer *out)
{
    static const char *const names[] = {"once", "session", "deny"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (enum approval_answer)i;
            return true;
        }
    }
    return false;
}

const char *approval_answer_name(enum approval_answer a)
{
    switch (a) {
    case ANSWER_ONCE:
        return "once";
    case ANSWER_SESSION:
        return "session";
    case ANSWER_DENY:
        return "deny";
    }
    return "?";
}
