/* mcp_review.c — the tools about review mode and forks (mcp_call.h): review_changes (GET
 * /v1/review: the session's pending changes, host-trusted ones flagged, as `cordon review
 * --json`; with diff, the text is what `cordon review --diff` prints of the session's layer), fork_session (POST /v1/fork: a new session from this one's workspace and pending
 * changes, for best-of-N), snapshot_workspace (POST /v1/snapshots) and rollback_workspace (POST
 * /v1/rollback). None applies or discards anything: that stays the person's. */
#include "mcp/mcp_call.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "base/visible.h"
#include "client/client_call.h"
#include "client/client_reply.h"
#include "mcp/mcp_bound.h"
#include "mcp/mcp_tools.h"

/* `cordon review WS --layer LAYER --diff` (this binary), its output kept as a result's text is
 * (the head and the tail): the list with each change's diff, as the person sees it. 0, or -1
 * with why in err (the program could not run, or exited with an error). */
static int review_diff_text(const char *ws, const char *layer, struct mcp_bound *out, char *err,
                            size_t errlen)
{
    char self[PATH_MAX];
    ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    int p[2];
    if (sn <= 0 || pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot run cordon review: %s", strerror(errno));
        return -1;
    }
    self[sn] = '\0';
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    char cmd[] = "cordon", sub[] = "review", opt_layer[] = "--layer", opt_diff[] = "--diff";
    char *argv[] = {cmd, sub, (char *)ws, opt_layer, (char *)layer, opt_diff, NULL};
    pid_t pid;
    int r = posix_spawn(&pid, self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (r != 0) {
        close(p[0]);
        snprintf(err, errlen, "cannot run cordon review: %s", strerror(r));
        return -1;
    }
    char buf[8192];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            mcp_bound_add(out, buf, (size_t)n);
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, errlen, "cordon review --diff failed (status %d)", status);
        return -1;
    }
    return 0;
}

/* The list of changes as text: a line each, host-trusted ones flagged. */
static void changes_text(const struct json_value *changes, struct json_buf *text)
{
    size_t flagged = 0;
    for (size_t i = 0; i < changes->len; i++) {
        const struct json_value *c = &changes->items[i];
        const char *path = reply_str(c, "path"), *change = reply_str(c, "change");
        const char *why = reply_str(c, "why");
        if (!path || !change)
            continue;
        char *shown = visible_dup(path);
        json_buf_printf(text, "%-7s %s", change, shown);
        if (why) {
            json_buf_printf(text, "  [host-trusted: %s]", why);
            flagged++;
        }
        json_buf_lit(text, "\n");
        free(shown);
    }
    if (changes->len == 0)
        json_buf_lit(text, "no pending changes\n");
    else
        json_buf_printf(text,
                        "%zu pending change%s, %zu host-trusted; the person applies or "
                        "discards them (cordon apply, cordon discard)\n",
                        changes->len, changes->len == 1 ? "" : "s", flagged);
}

void mcp_review_changes(const struct mcp_server *s, const struct args *a, const char *id)
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
        const char *ws = reply_str(v, "workspace"), *layer = reply_str(v, "layer");
        struct mcp_bound diffs;
        mcp_bound_init(&diffs, MCP_STREAM_MAX / 2, MCP_STREAM_MAX / 2);
        char why[300] = "the session's answer names no layer";
        if (a->diff && ws && layer && changes->len > 0 &&
            review_diff_text(ws, layer, &diffs, why, sizeof why) == 0) {
            size_t len;
            char *text = mcp_bound_text(&diffs, "the diffs", &len);
            json_buf_raw(&res.text, text, len); /* JSON-encoded as a command's output is */
            free(text);
        } else {
            changes_text(changes, &res.text);
            if (a->diff && changes->len > 0)
                json_buf_printf(&res.text, "cordon: no diffs: %s\n", why);
        }
        mcp_bound_free(&diffs);
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
