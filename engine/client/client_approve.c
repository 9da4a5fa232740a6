/* client_approve.c — see client_approve.h. */
#include "client/client_approve.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/client_http.h"
#include "client/client_ndjson.h"
#include "client/client_reply.h"
#include "base/util.h"

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
    if (msg && *msg)
        reply_print_line(stdout, msg, strlen(msg));
out:
    free(body);
    free(path);
    free(escaped);
    json_free(v);
    chttp_close(&h);
    return status;
}

/* ---- --watch ------------------------------------------------------------------------------ */

struct watch {
    const char *name;
    struct ndjson_lines lines;
    char by[64];              /* how our answers name us in the settled events */
    long long answered;       /* the last question we answered (its settled line is ours) */
    char in[256];             /* stdin's bytes not yet taken as an answer */
    size_t in_len;
    bool stdin_ended;
};

/* One line from stdin, waiting until deadline (Unix seconds; the question's expiry). 1 with
 * the line (no '\n') in out, 0 when the deadline passed, -1 at the end of stdin. */
static int read_answer_line(struct watch *w, double deadline, char *out, size_t n)
{
    for (;;) {
        char *nl = memchr(w->in, '\n', w->in_len);
        if (nl) {
            size_t len = (size_t)(nl - w->in);
            snprintf(out, n, "%.*s", (int)len, w->in);
            memmove(w->in, nl + 1, w->in_len - len - 1);
            w->in_len -= len + 1;
            return 1;
        }
        if (w->in_len == sizeof w->in) /* a line that long is no answer: drop it */
            w->in_len = 0;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double left = deadline - ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
        if (left <= 0)
            return 0;
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        int r = poll(&p, 1, left > 3600 ? 3600 * 1000 : (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            continue; /* the loop checks the deadline */
        ssize_t got = r < 0 ? -1 : read(STDIN_FILENO, w->in + w->in_len, sizeof w->in - w->in_len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            w->stdin_ended = true;
            return -1;
        }
        w->in_len += (size_t)got;
    }
}

/* "o", "once", "s", "session", "d", "deny" (any case, spaces around) -> the answer word. */
static const char *answer_word(const char *line)
{
    char word[16];
    size_t k = 0;
    for (const char *p = line; *p && k + 1 < sizeof word; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r')
            word[k++] = (char)tolower((unsigned char)*p);
    word[k] = '\0';
    if (strcmp(word, "o") == 0 || strcmp(word, "once") == 0)
        return "once";
    if (strcmp(word, "s") == 0 || strcmp(word, "session") == 0)
        return "session";
    if (strcmp(word, "d") == 0 || strcmp(word, "deny") == 0)
        return "deny";
    return NULL;
}

static int post_answer(struct watch *w, long long id, const char *answer)
{
    struct chttp h;
    struct json_value *v = NULL;
    char *path = NULL, *body = NULL;
    int status = 1;
    if (chttp_open(&h, "approve --watch", w->name, false) != 0)
        goto out;
    path = xasprintf("/v1/approvals/%lld", id);
    body = xasprintf("{\"answer\":\"%s\",\"by\":\"%s\"}", answer, w->by); /* plain words */
    if (chttp_request(&h, "POST", path, body, strlen(body), NULL, NULL) < 0) {
        status = chttp_lost(&h);
        goto out;
    }
    if (!chttp_ok(&h)) { /* answered meanwhile, or timed out: the session says which */
        (void)reply_fail(&h);
        status = 0;
        goto out;
    }
    status = 0;
    w->answered = id;
    const char *msg = h.body_len && (v = reply_json(&h)) ? reply_str(v, "message") : NULL;
    if (msg && *msg) {
        printf("cordon: approval %lld: ", id);
        reply_print_line(stdout, msg, strlen(msg));
    }
out:
    fflush(stdout);
    free(body);
    free(path);
    json_free(v);
    chttp_close(&h);
    return status;
}

/* A question: show it, then ask until a valid answer, the question's expiry, or stdin's end. */
static int ask_person(struct watch *w, const struct json_value *a)
{
    long long id = 0;
    double expires = 0;
    const char *question = reply_str(a, "question");
    const char *command = reply_str(a, "command");
    if (!reply_int(a, "id", &id) || !question)
        return 0;
    (void)reply_num(a, "expires", &expires);
    printf("\ncordon: approval %lld in session '%s': %s\n", id, w->name, question);
    if (command)
        printf("        command: %s\n", command);
    if (w->stdin_ended) {
        printf("        (stdin has ended: not answered here)\n");
        fflush(stdout);
        return 0;
    }
    for (;;) {
        printf("        [o] once  [s] session  [d] deny ? ");
        fflush(stdout);
        char line[256];
        int r = read_answer_line(w, expires > 0 ? expires : 1e18, line, sizeof line);
        if (r == 0) {
            printf("\ncordon: approval %lld: no answer in time: denied\n", id);
            break;
        }
        if (r < 0) {
            printf("\ncordon: approve --watch: stdin ended: no longer answering (the question waits "
                   "for another approver)\n");
            break;
        }
        const char *answer = answer_word(line);
        if (answer) {
            fflush(stdout);
            return post_answer(w, id, answer);
        }
        printf("        answer o (once), s (session) or d (deny)\n");
    }
    fflush(stdout);
    return 0;
}

static int watch_line(void *ctx, const char *line, size_t len)
{
    struct watch *w = ctx;
    char err[160];
    struct json_value *v = json_parse(line, len, err, sizeof err);
    int rc = 0;
    if (!v || v->type != JSON_OBJECT) {
        rc = -reply_malformed("approve --watch", v ? "a line that is not an object" : err);
        goto out;
    }
    const char *event = reply_str(v, "event");
    long long id = 0;
    if (event && strcmp(event, "subscribed") == 0) {
        printf("cordon: answering the approvals of session '%s' here (Ctrl-C or the end of stdin "
               "stops)\n", w->name);
        fflush(stdout);
    } else if (event && strcmp(event, "question") == 0) {
        const struct json_value *a = json_get(v, "approval");
        if (a && a->type == JSON_OBJECT && ask_person(w, a) != 0)
            rc = -1;
    } else if (event && strcmp(event, "settled") == 0 && reply_int(v, "id", &id) && id != w->answered) {
        const char *answer = reply_str(v, "answer"), *by = reply_str(v, "by");
        printf("cordon: approval %lld: %s (by %s)\n", id, answer ? answer : "?", by ? by : "?");
        fflush(stdout);
    }
out:
    json_free(v);
    if (w->stdin_ended && rc == 0)
        rc = -2; /* nothing more can be answered here */
    return rc;
}

static int watch_stream(void *ctx, const char *data, size_t len)
{
    struct watch *w = ctx;
    return ndjson_feed(&w->lines, data, len, watch_line, w) < 0 ? -1 : 0;
}

int capprove_watch(const char *name)
{
    struct chttp h;
    struct watch w = {.name = name, .answered = -1};
    snprintf(w.by, sizeof w.by, "cordon approve --watch (pid %d)", (int)getpid());
    int status = 1;
    if (chttp_open(&h, "approve --watch", name, false) != 0)
        goto out;
    int r = chttp_request(&h, "GET", "/v1/approvals?watch=1", NULL, 0, watch_stream, &w);
    if (r < 0 && h.sink_stopped) {
        status = w.stdin_ended ? 0 : 1; /* a malformed line was reported */
        goto out;
    }
    if (r < 0) {
        status = chttp_lost(&h);
        goto out;
    }
    if (!chttp_ok(&h)) {
        status = reply_fail(&h);
        goto out;
    }
    (void)ndjson_finish(&w.lines, watch_line, &w);
    printf("cordon: session '%s' has ended\n", name);
    status = 0;
out:
    fflush(stdout);
    ndjson_lines_free(&w.lines);
    chttp_close(&h);
    return status;
}
