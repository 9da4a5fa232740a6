/* Runs in: controller (cordon-session). */
/* session_questions.h — the questions a session holds for its approvers (session_approvers.c;
 * `GET /v1/approvals`, `POST /v1/approvals/ID`, `cordon approve`): may a command reach a host
 * no rule allows (asked by the proxy while the command runs), and may a command the sandbox
 * refused run again outside it (asked after it ended). Owns the list, the ids and the JSON;
 * what an answer does is session_ctl.c's. Deny is the answer to every question nobody
 * answers within the permission timeout. */
#ifndef CORDON_SESSION_QUESTIONS_H
#define CORDON_SESSION_QUESTIONS_H
#include <stdbool.h>
#include <stdint.h>
#include "base/evloop.h"
#include "base/json_write.h"

enum approval_kind { APPROVAL_NETWORK, APPROVAL_RERUN };
enum approval_answer { ANSWER_ONCE, ANSWER_SESSION, ANSWER_DENY };

struct approval {
    unsigned id;
    enum approval_kind kind;
    char *question; /* one line for a person */
    char *command;  /* the command that asked (rerun: the one to run outside) */
    char host[256]; /* network: the destination */
    unsigned port;
    unsigned proxy_id;     /* network: the proxy's question */
    long job;              /* the pid of the exec concerned, 0 when not known */
    double asked, expires; /* Unix seconds */
    struct ev_timer timer; /* rerun: the permission timeout (the proxy times its own) */
    struct approval *next;
};

struct approvals {
    struct approval *list; /* oldest first */
    unsigned next_id;
};

/* A new pending question (strings copied; command may be NULL). */
struct approval *approvals_add(struct approvals *a, enum approval_kind kind, const char *question,
                               const char *command, double timeout_s);
struct approval *approvals_find(struct approvals *a, unsigned id);
struct approval *approvals_find_proxy(struct approvals *a, unsigned proxy_id);
/* Unlink and free x (its timer must be stopped by the caller). */
void approvals_remove(struct approvals *a, struct approval *x);
void approvals_free(struct approvals *a);

/* {"id":..,"kind":"network"|"rerun","question":..,"command":..,"host":..,"port":..,"job":..,
 * "asked":..,"expires":..} */
void approval_json(const struct approval *x, struct json_buf *b);
/* {"approvals":[...]} */
void approvals_json(const struct approvals *a, struct json_buf *b);
/* "once" | "session" | "deny" */
bool approval_parse_answer(const char *s, enum approval_answer *out);
const char *approval_answer_name(enum approval_answer a);
#endif
