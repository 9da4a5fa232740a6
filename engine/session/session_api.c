/* session_api.c — the routes of the control API (docs/session-api.md): checks each request's
 * method, path and JSON body, and hands it to the operation in session_ctl.c. Every malformed
 * request gets a 4xx with a JSON error naming what was wrong. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grant_words.h"
#include "base/json_read.h"
#include "base/restart_policy.h"
#include "base/session_socket.h"
#include "base/session_protocol.h"
#include "session/log_stream.h"
#include "session/session_ctl.h"
#include "session/session_fork.h"
#include "session/session_grants.h"
#include "session/session_snapshots.h"

/* "for": a number of seconds, more than 0 and at most GRANT_FOR_MAX_S (null: none). */
static bool for_ok(const struct json_value *x, double *for_s)
{
    if (!x || x->type == JSON_NULL)
        return true;
    if (x->type != JSON_NUMBER || !(x->number > 0) || x->number > GRANT_FOR_MAX_S)
        return false;
    *for_s = x->number;
    return true;
}

/* "12" -> 12; -1 for anything but a positive decimal pid. */
static long parse_pid(const char *s, size_t n)
{
    if (n == 0 || n > 9)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v > 0 ? v : -1;
}

/* The request's body as JSON, or NULL after answering 400. */
static struct json_value *body_json(struct api_request *req)
{
    size_t len;
    const char *body = api_body(req, &len);
    char err[256];
    struct json_value *v = json_parse(body, len, err, sizeof err);
    if (!v)
        api_respond_error(req, 400, "the body is not valid JSON (%s)", err);
    return v;
}

static void route_exec(struct session *s, struct api_request *req)
{
    struct json_value *v = body_json(req);
    if (!v)
        return;
    struct exec_request e = {.restart = {.backoff = RESTART_BACKOFF_DEFAULT}};
    bool has_backoff = false;
    static char msg[240];
    const char *problem = NULL;
    if (v->type != JSON_OBJECT)
        problem = "the body must be a JSON object";
    for (size_t i = 0; !problem && i < v->len; i++) {
        const char *k = v->keys[i];
        const struct json_value *x = &v->items[i];
        if (strcmp(k, API_EXEC_COMMAND) == 0) {
            if (x->type != JSON_STRING || x->len == 0 || strlen(x->str) != x->len)
                problem = "\"command\" must be a non-empty string without NUL bytes";
            else
                e.command = x->str;
        } else if (strcmp(k, API_EXEC_BACKGROUND) == 0) {
            if (x->type != JSON_BOOL)
                problem = "\"background\" must be true or false";
            else
                e.background = x->boolean;
        } else if (strcmp(k, API_EXEC_TIMEOUT) == 0) {
            if (x->type == JSON_NULL)
                continue;
            if (x->type != JSON_NUMBER || !(x->number > 0) || x->number > 7 * 24 * 3600.0)
                problem = "\"timeout\" must be a number of seconds, more than 0 and at most a week";
            else
                e.timeout = x->number;
        } else if (strcmp(k, API_EXEC_TURN) == 0) {
            if (x->type == JSON_NULL)
                continue;
            if (x->type != JSON_STRING || x->len == 0 || x->len > API_TURN_MAX ||
                strlen(x->str) != x->len)
                problem = "\"turn\" must be a string of 1 to 128 bytes";
            else
                e.turn = x->str;
        } else if (strcmp(k, API_EXEC_RESTART) == 0) {
            if (x->type == JSON_NULL)
                continue;
            char err[200];
            if (x->type != JSON_STRING || strlen(x->str) != x->len) {
                problem = "\"restart\" must be \"on-failure\", \"on-failure:N\", \"always\" or "
                          "\"always:N\"";
            } else if (!restart_policy_parse(x->str, &e.restart, err, sizeof err)) {
                snprintf(msg, sizeof msg, "\"restart\": %s", err);
                problem = msg;
            }
        } else if (strcmp(k, API_EXEC_BACKOFF) == 0) {
            if (x->type == JSON_NULL)
                continue;
            if (x->type != JSON_NUMBER || !restart_backoff_valid(x->number)) {
                snprintf(msg, sizeof msg,
                         "\"backoff\" must be a number of seconds from %g to %g (the wait before "
                         "the first restart)",
                         RESTART_BACKOFF_MIN, RESTART_WAIT_CEILING);
                problem = msg;
            } else {
                e.restart.backoff = x->number;
                has_backoff = true;
            }
        } else {
            snprintf(msg, sizeof msg,
                     "unknown field \"%.60s\" (known: command, background, timeout, turn, "
                     "restart, backoff)",
                     k);
            problem = msg;
        }
    }
    if (!problem && !e.command)
        problem = "\"command\" is missing";
    if (!problem && has_backoff && e.restart.when == RESTART_NO)
        problem = "\"backoff\" goes with \"restart\" (the wait before a restart)";
    if (problem)
        api_respond_error(req, 400, "%s", problem);
    else
        session_op_exec(s, req, &e);
    json_free(v);
}

static void route_answer(struct session *s, struct api_request *req, const char *idtext)
{
    long id = parse_pid(idtext, strlen(idtext));
    if (id < 0) {
        api_respond_error(req, 404, "no such approval: %s (ids are positive integers)", idtext);
        return;
    }
    struct json_value *v = body_json(req);
    if (!v)
        return;
    const struct json_value *a = v->type == JSON_OBJECT ? json_get(v, API_ANSWER) : NULL;
    const struct json_value *by = v->type == JSON_OBJECT ? json_get(v, API_ANSWER_BY) : NULL;
    const struct json_value *f = v->type == JSON_OBJECT ? json_get(v, API_ANSWER_FOR) : NULL;
    /* "by" is only a label for the settled events (who answered), never a permission */
    bool by_ok = !by || (by->type == JSON_STRING && by->len > 0 && by->len <= 200 &&
                         strlen(by->str) == by->len);
    double for_s = 0;
    if (!a || a->type != JSON_STRING || !by_ok || !for_ok(f, &for_s) ||
        v->len != 1u + (by != NULL) + (f != NULL))
        api_respond_error(req, 400,
                          "the body must be {\"answer\": \"once\" | \"session\" | \"deny\"}, "
                          "optionally with \"by\": a string of 1 to 200 bytes naming who answered, "
                          "and with \"session\", \"for\": the seconds it holds (at most a week)");
    else
        session_op_answer(s, req, (unsigned)id, a->str, by ? by->str : NULL, for_s);
    json_free(v);
}

/* POST /v1/grants {"network": "HOST:PORT", "for": S?, "by": "..."?} */
static void route_grant(struct session *s, struct api_request *req)
{
    struct json_value *v = body_json(req);
    if (!v)
        return;
    const char *problem = NULL, *by = NULL;
    char host[256];
    unsigned port = 0;
    bool have = false;
    double for_s = 0;
    if (v->type != JSON_OBJECT)
        problem = "the body must be a JSON object";
    for (size_t i = 0; !problem && i < v->len; i++) {
        const char *k = v->keys[i];
        const struct json_value *x = &v->items[i];
        if (strcmp(k, "network") == 0) {
            if (x->type != JSON_STRING || strlen(x->str) != x->len ||
                !gw_parse_destination(x->str, host, sizeof host, &port))
                problem = "\"network\" must be one destination, HOST:PORT or [IPV6]:PORT "
                          "(an exact host, a port 1 to 65535)";
            else
                have = true;
        } else if (strcmp(k, "for") == 0) {
            if (!for_ok(x, &for_s))
                problem = "\"for\" must be a number of seconds, more than 0 and at most a week";
        } else if (strcmp(k, "by") == 0) {
            if (x->type != JSON_STRING || x->len == 0 || x->len > 80 || strlen(x->str) != x->len)
                problem = "\"by\" must be a string of 1 to 80 bytes naming who grants";
            else
                by = x->str;
        } else {
            static char msg[160];
            snprintf(msg, sizeof msg, "unknown field \"%.60s\" (known: network, for, by)", k);
            problem = msg;
        }
    }
    if (!problem && !have)
        problem = "\"network\" is missing";
    if (problem)
        api_respond_error(req, 400, "%s", problem);
    else
        session_op_grant(s, req, host, port, for_s, by);
    json_free(v);
}

/* POST /v1/ports {"port": P, "host_port": H?, "host_addr": A?} */
static void route_publish(struct session *s, struct api_request *req)
{
    struct json_value *v = body_json(req);
    if (!v)
        return;
    long port = -1, host_port = -1;
    const char *host_addr = NULL, *problem = NULL;
    if (v->type != JSON_OBJECT)
        problem = "the body must be a JSON object";
    for (size_t i = 0; !problem && i < v->len; i++) {
        const char *k = v->keys[i];
        const struct json_value *x = &v->items[i];
        bool whole = x->type == JSON_NUMBER && x->number == (double)(long)x->number;
        if (strcmp(k, "port") == 0) {
            if (!whole || x->number < 1 || x->number > 65535)
                problem = "\"port\" must be a port in the sandbox, 1 to 65535";
            else
                port = (long)x->number;
        } else if (strcmp(k, "host_port") == 0) {
            if (x->type == JSON_NULL)
                continue;
            if (!whole || x->number < 0 || x->number > 65535)
                problem =
                    "\"host_port\" must be a port on the host, 1 to 65535, or 0 for any free one";
            else
                host_port = (long)x->number;
        } else if (strcmp(k, "host_addr") == 0) {
            if (x->type == JSON_NULL)
                continue;
            if (x->type != JSON_STRING || x->len == 0 || x->len > 63 || strlen(x->str) != x->len)
                problem = "\"host_addr\" must be an IP address on the host (default 127.0.0.1)";
            else
                host_addr = x->str;
        } else {
            static char msg[160];
            snprintf(msg, sizeof msg, "unknown field \"%.60s\" (known: port, host_port, host_addr)",
                     k);
            problem = msg;
        }
    }
    if (!problem && port < 0)
        problem = "\"port\" is missing";
    if (problem)
        api_respond_error(req, 400, "%s", problem);
    else
        session_op_publish(s, req, host_addr, host_port, port);
    json_free(v);
}

/* POST /v1/fork {"name": NEW} */
static void route_fork(struct session *s, struct api_request *req)
{
    struct json_value *v = body_json(req);
    if (!v)
        return;
    const char *problem = NULL, *name = NULL;
    if (v->type != JSON_OBJECT)
        problem = "the body must be a JSON object";
    for (size_t i = 0; !problem && i < v->len; i++) {
        const char *k = v->keys[i];
        const struct json_value *x = &v->items[i];
        if (strcmp(k, "name") == 0) {
            if (x->type != JSON_STRING || strlen(x->str) != x->len || !csock_name_valid(x->str))
                problem = "\"name\" must be the new session's name (letters, digits, '_', '.', "
                          "'-'; not starting with '.' or '-')";
            else
                name = x->str;
        } else {
            static char msg[160];
            snprintf(msg, sizeof msg, "unknown field \"%.60s\" (known: name)", k);
            problem = msg;
        }
    }
    if (!problem && !name)
        problem = "\"name\" is missing";
    if (problem)
        api_respond_error(req, 400, "%s", problem);
    else
        session_op_fork(s, req, name);
    json_free(v);
}

/* The "label" of POST /v1/snapshots (optional) and /v1/rollback (required) bodies; NULL after
 * answering 400, or when it may be missing and is (*missing set then). */
static const char *label_of(struct api_request *req, struct json_value *v, bool required,
                            bool *missing)
{
    const char *problem = NULL;
    const char *label = NULL;
    static char msg[200];
    *missing = false;
    if (v->type != JSON_OBJECT)
        problem = "the body must be a JSON object";
    for (size_t i = 0; !problem && i < v->len; i++) {
        const struct json_value *x = &v->items[i];
        if (strcmp(v->keys[i], "label") != 0) {
            snprintf(msg, sizeof msg, "unknown field \"%.60s\" (known: label)", v->keys[i]);
            problem = msg;
        } else if (x->type == JSON_NULL && !required) {
            continue;
        } else if (x->type != JSON_STRING || strlen(x->str) != x->len ||
                   !snapshot_label_valid(x->str)) {
            problem = "\"label\" must be a plain name: letters, digits, '.', '_' and '-', 1 to 64 "
                      "bytes, not starting with '.'";
        } else {
            label = x->str;
        }
    }
    if (!problem && !label && required)
        problem = "\"label\" is missing";
    if (problem) {
        api_respond_error(req, 400, "%s", problem);
        return NULL;
    }
    *missing = !label;
    return label;
}

/* POST /v1/snapshots {"label": L?} and POST /v1/rollback {"label": L}. */
static void route_snapshot(struct session *s, struct api_request *req, bool rollback)
{
    struct json_value *v = body_json(req);
    if (!v)
        return;
    bool missing;
    const char *label = label_of(req, v, rollback, &missing);
    if (label && rollback)
        session_op_rollback(s, req, label);
    else if (label || missing)
        session_op_snapshot(s, req, label);
    json_free(v);
}

/* GET /v1/jobs/PID/log[?tail=N][&follow=1][&format=ndjson]. */
static void route_log(struct session *s, struct api_request *req, long pid)
{
    struct log_query q = {.tail = -1};
    const char *tail = api_query(req, "tail"), *follow = api_query(req, "follow");
    if (tail) {
        size_t n = strlen(tail);
        long v = 0;
        bool ok = n > 0 && n <= 9;
        for (size_t i = 0; ok && i < n; i++) {
            ok = tail[i] >= '0' && tail[i] <= '9';
            v = v * 10 + (tail[i] - '0');
        }
        if (!ok || v > API_LOG_TAIL_MAX) {
            api_respond_error(req, 400, "tail must be a number of lines from 0 to %ld, not '%.32s'",
                              API_LOG_TAIL_MAX, tail);
            return;
        }
        q.tail = v;
    }
    if (follow && strcmp(follow, "1") != 0 && strcmp(follow, "0") != 0) {
        api_respond_error(
            req, 400, "follow must be 1 (go on until the job has ended) or 0, not '%.32s'", follow);
        return;
    }
    q.follow = follow && strcmp(follow, "1") == 0;
    const char *format = api_query(req, "format");
    if (format && strcmp(format, "ndjson") != 0 && strcmp(format, "text") != 0) {
        api_respond_error(req, 400,
                          "format must be text (the log's bytes) or ndjson (events), not '%.32s'",
                          format);
        return;
    }
    q.ndjson = format && strcmp(format, "ndjson") == 0;
    session_op_log(s, req, pid, &q);
}

void session_handle_request(void *ctx, struct api_request *req)
{
    struct session *s = ctx;
    const char *method = api_method(req);
    const char *path = api_path(req);
    bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    bool del = strcmp(method, "DELETE") == 0;
    const char *want = NULL; /* the method the path takes, when it was another */

    if (strcmp(path, "/v1/session") == 0) {
        if (get)
            return session_op_info(s, req);
        want = "GET";
    } else if (strcmp(path, "/v1/exec") == 0) {
        if (post)
            return route_exec(s, req);
        want = "POST";
    } else if (strcmp(path, "/v1/jobs") == 0) {
        if (get)
            return session_op_jobs(s, req);
        want = "GET";
    } else if (strcmp(path, "/v1/session/stop") == 0) {
        if (post)
            return session_op_stop_session(s, req);
        want = "POST";
    } else if (strncmp(path, "/v1/jobs/", 9) == 0) {
        const char *rest = path + 9, *slash = strchr(rest, '/');
        long pid = slash ? parse_pid(rest, (size_t)(slash - rest)) : -1;
        if (pid < 0) {
            api_respond_error(req, 404,
                              "no such path: %s (a job is /v1/jobs/PID/log or /v1/jobs/PID/stop)",
                              path);
            return;
        }
        if (strcmp(slash, "/log") == 0) {
            if (get)
                return route_log(s, req, pid);
            want = "GET";
        } else if (strcmp(slash, "/stop") == 0) {
            if (post)
                return session_op_stop_job(s, req, pid);
            want = "POST";
        }
    } else if (strcmp(path, "/v1/fork") == 0) {
        if (post)
            return route_fork(s, req);
        want = "POST";
    } else if (strcmp(path, "/v1/review") == 0) {
        if (get)
            return session_op_review(s, req);
        want = "GET";
    } else if (strcmp(path, "/v1/ports") == 0) {
        if (post)
            return route_publish(s, req);
        want = "POST";
    } else if (strncmp(path, "/v1/ports/", 10) == 0) {
        long port = parse_pid(path + 10, strlen(path + 10));
        if (port < 1 || port > 65535) {
            api_respond_error(req, 404,
                              "no such path: %s (a published port is /v1/ports/PORT, 1 to 65535)",
                              path);
            return;
        }
        if (del)
            return session_op_unpublish(s, req, port);
        want = "DELETE";
    } else if (strcmp(path, "/v1/approvals") == 0) {
        const char *watch = api_query(req, "watch");
        if (get && watch && strcmp(watch, "1") != 0 && strcmp(watch, "0") != 0) {
            api_respond_error(req, 400, "watch must be 1 (a stream of the questions) or 0");
            return;
        }
        if (get && watch && strcmp(watch, "1") == 0)
            return session_op_watch_approvals(s, req);
        if (get)
            return session_op_approvals(s, req);
        want = "GET";
    } else if (strncmp(path, "/v1/approvals/", 14) == 0 && !strchr(path + 14, '/')) {
        if (post)
            return route_answer(s, req, path + 14);
        want = "POST";
    } else if (strcmp(path, "/v1/grants") == 0) {
        if (get)
            return session_op_grants(s, req);
        if (post)
            return route_grant(s, req);
        want = "GET or POST";
    } else if (strncmp(path, "/v1/grants/", 11) == 0 && path[11] && !strchr(path + 11, '/')) {
        if (del)
            return session_op_revoke(s, req, path + 11);
        want = "DELETE";
    } else if (strcmp(path, "/v1/snapshots") == 0) {
        if (get)
            return session_op_snapshots(s, req);
        if (post)
            return route_snapshot(s, req, false);
        want = "GET or POST";
    } else if (strncmp(path, "/v1/snapshots/", 14) == 0 && !strchr(path + 14, '/')) {
        if (del && !snapshot_label_valid(path + 14)) {
            api_respond_error(req, 400, "not a snapshot's label: %.80s", path + 14);
            return;
        }
        if (del)
            return session_op_drop_snapshot(s, req, path + 14);
        want = "DELETE";
    } else if (strcmp(path, "/v1/rollback") == 0) {
        if (post)
            return route_snapshot(s, req, true);
        want = "POST";
    } else if (strncmp(path, "/v1/turns/", 10) == 0) {
        /* libmicrohttpd has already decoded %XX in the path; a turn may contain '/'. */
        const char *rest = path + 10;
        const char *slash = strrchr(rest, '/');
        size_t n = slash ? (size_t)(slash - rest) : 0;
        if (slash && strcmp(slash, "/cancel") == 0 && n > 0 && n <= API_TURN_MAX) {
            char turn[API_TURN_MAX + 1];
            memcpy(turn, rest, n);
            turn[n] = '\0';
            if (post)
                return session_op_cancel_turn(s, req, turn);
            want = "POST";
        }
    }
    if (want)
        api_respond_error(req, 405, "%s takes %s, not %s", path, want, method);
    else
        api_respond_error(req, 404, "no such path: %s (see docs/session-api.md)", path);
}
