/* client_approve.c — see client_approve.h. */
#include "client/client_approve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_http.h"
#include "client/client_reply.h"
#include "base/util.h"
#include "base/visible.h"

bool capprove_answer_valid(const char *answer)
{
    return strcmp(answer, "once") == 0 || strcmp(answer, "session") == 0 ||
           strcmp(answer, "deny") == 0;
}

int capprove_send(const char *name, const char *id, const char *answer)
{
    struct chttp h;
    struct json_value *v = NULL;
    char *escaped = NULL, *path = NULL, *body = NULL;
    int status = 1;
    if (chttp_open(&h, "approve", name, false) != 0)
        goto out;
    escaped = chttp_escape(id);
    path = xasprintf("/v1/approvals/%s", escaped);
    body = xasprintf("{\"answer\":\"%s\"}", answer); /* one of three plain words */
    if (chttp_request(&h, "POST", path, body, strlen(body), NULL, NULL) < 0) {
        status = chttp_lost(&h);
        goto out;
    }
    if (!chttp_ok(&h)) {
        status = reply_fail(&h);
        goto out;
    }
    status = 0;
    if (h.body_len == 0)
        goto out; /* nothing to say */
    if (!(v = reply_json(&h))) {
        status = 1;
        goto out;
    }
    const char *msg = reply_str(v, "message");
    if (msg && *msg) {
        char *shown = visible_dup(msg); /* from the session: no byte of it acts on the terminal */
        reply_print_line(stdout, shown, strlen(shown));
        free(shown);
    }
out:
    free(body);
    free(path);
    free(escaped);
    json_free(v);
    chttp_close(&h);
    return status;
}
