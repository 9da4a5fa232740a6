/* mcp_review.c — the tools about review mode and forks (mcp_call.h): review_changes (GET
 * /v1/review: the session's pending changes, host-trusted ones flagged, as `cordon review
 * --json`), fork_session (POST /v1/fork: a new session from this one's workspace and pending
 * changes, for best-of-N), snapshot_workspace (POST /v1/snapshots) and rollback_workspace (POST
 * /v1/rollback). None applies or discards anything: that stays the person's. */
#include "mcp/mcp_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "base/visible.h"
#include "client/client_call.h"
#include "client/client_reply.h"

void mcp_review_changes(const struct mcp_server *s, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    struct json_value *v = ccall_json(&h, s->session, "GET", "/v1/review", NULL, err, sizeof err);
    const struct json_value *changes = reply_array(v, "changes");
    if (!v) {
        mcp_result_error(id, &res, "cordon: %s", err);
    } else if (!changes) {
        mcp_result_error(id, &res, "cordon: the session's answer has no changes");
    } else {
        size_t flagged = 0;
        for (size_t i = 0; i < changes->len; i++) {
            const struct json_value *c = &changes->items[i];
            const char *path = reply_str(c, "path"), *change = reply_str(c, "change");
            const char *why = reply_str(c, "why");
            if (!path || !change)
                continue;
            char *shown = visible_dup(path);
            json_buf_printf(&res.text, "%-7s %s", change, shown);
            if (why) {
                json_buf_printf(&res.text, "  [host-trusted: %s]", why);
                flagged++;
            }
            json_buf_lit(&res.text, "\n");
            free(shown);
        }
        if (changes->len == 0)
            json_buf_lit(&res.text, "no pending changes\n");
        else
            json_buf_printf(&res.text,
                            "%zu pending change%s, %zu host-trusted; the person applies or "
                            "discards them (cordon apply, cordon discard)\n",
                            changes->len, changes->len == 1 ? "" : "s", flagged);
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}

void mcp_fork_session(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct result res = {0};
    struct chttp h;
    char err[512];
    struct json_buf body = {0};
    json_buf_lit(&body, "{\"name\":");
    json_buf_string(&body, a->name, strlen(a->name));
    json_buf_lit(&body, "}");
    struct json_value *v =
        ccall_json(&h, s->session, "POST", "/v1/fork", body.data, err, sizeof err);
    const char *name = v ? reply_str(v, "name") : NULL;
    if (!v) {
        mcp_result_error(id, &res, "cordon: %s", err);
    } else if (!name) {
        mcp_result_error(id, &res, "cordon: the session's answer has no name");
    } else {
        const struct json_value *copied = json_get(v, "pending_copied");
        bool with = copied && copied->type == JSON_BOOL && copied->boolean;
        json_buf_printf(&res.text,
                        "session '%s' started: a fork of '%s' over the same workspace %s, in "
                        "review mode with a layer of its own (cordon exec %s, cordon mcp "
                        "--session %s; its changes: cordon review --fork %s)\n",
                        name, s->session,
                        with ? "with its pending changes" : "from the host's copy", name, name,
                        name);
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
    }
    json_free(v);
    json_buf_free(&body);
    chttp_close(&h);
}

/* POST path with body {"label": label} (no member when label is NULL): the answer, or NULL
 * with the result's error sent. */
static struct json_value *label_call(const struct mcp_server *s, const char *path,
                                     const char *label, struct chttp *h, const char *id)
{
    struct json_buf body = {0};
    char err[512];
    json_buf_lit(&body, "{");
    if (label) {
        json_buf_lit(&body, "\"label\":");
        json_buf_string(&body, label, strlen(label));
    }
    json_buf_lit(&body, "}");
    struct json_value *v = ccall_json(h, s->session, "POST", path, body.data, err, sizeof err);
    json_buf_free(&body);
    struct result res = {0};
    if (!v)
        mcp_result_error(id, &res, "cordon: %s", err);
    else if (!reply_str(v, "label")) {
        mcp_result_error(id, &res, "cordon: the session's answer has no label");
        json_free(v);
        v = NULL;
    }
    return v;
}

void mcp_snapshot_workspace(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct chttp h;
    struct json_value *v = label_call(s, "/v1/snapshots", a->label, &h, id);
    if (v) {
        struct result res = {0};
        long long changes = -1;
        (void)reply_int(v, "changes", &changes);
        json_buf_printf(&res.text, "snapshot %s taken", reply_str(v, "label"));
        if (changes >= 0)
            json_buf_printf(&res.text, ": %lld pending change%s", changes, changes == 1 ? "" : "s");
        json_buf_printf(&res.text, " (rollback_workspace with label %s returns to it)\n",
                        reply_str(v, "label"));
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}

void mcp_rollback_workspace(const struct mcp_server *s, const struct args *a, const char *id)
{
    struct chttp h;
    struct json_value *v = label_call(s, "/v1/rollback", a->label, &h, id);
    if (v) {
        struct result res = {0};
        const char *message = reply_str(v, "message");
        json_buf_printf(&res.text, "the workspace is back at snapshot %s\n", reply_str(v, "label"));
        if (message) {
            char *shown = visible_dup(message);
            json_buf_printf(&res.text, "%s\n", shown);
            free(shown);
        }
        mcp_result_object(&res, v);
        mcp_result_send(id, &res);
    }
    json_free(v);
    chttp_close(&h);
}
