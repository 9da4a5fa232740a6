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

#include "base/grant_words.h"
#include "base/log.h"
#include "base/session_protocol.h"
#include "client/client_http.h"
#include "client/client_ndjson.h"
#include "client/client_reply.h"
#include "base/util.h"
#include "base/visible.h"

bool capprove_answer_valid(const char *answer)
{
    return strcmp(answer, "once") == 0 || strcmp(answer, "session") == 0 ||
           strcmp(answer, "deny") == 0;
}

int capprove_send(const char *name, const char *id, const char *answer, double for_s)
{
    struct chttp h;
    struct json_value *v = NULL;
    char *escaped = NULL, *path = NULL, *body = NULL;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "approve", name, false) != 0)
        goto out;
    escaped = chttp_escape(id);
    path = xasprintf("/v1/approvals/%s", escaped);
    if (for_s > 0) /* one of three plain words */
        body = xasprintf("{\"" API_ANSWER "\":\"%s\",\"" API_ANSWER_FOR "\":%.0f}", answer, for_s);
    else
        body = xasprintf("{\"" API_ANSWER "\":\"%s\"}", answer);
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
        status = CORDON_EXIT_SETUP;
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

/* ---- --watch ------------------------------------------------------------------------------ */

#define WATCH_QUEUE 64

/* A question shown and not yet settled. */
struct asked {
    long long id;
    double expires; /* Unix seconds; 0: not known */
};

struct watch {
    const char *name;
    struct chttp *h; /* the stream's connection: news there interrupts a prompt */
    struct ndjson_lines lines;
    char by[64];                     /* how our answers name us in the settled events */
    long long answered;              /* the last question we answered (its settled line is ours) */
    struct asked queue[WATCH_QUEUE]; /* oldest first: the first is the one prompted for */
    size_t queued;
    long long prompted; /* the question whose prompt is on the screen, or -1 */
    char in[256];       /* stdin's bytes not yet taken as an answer */
    size_t in_len;
    bool stdin_ended;
    char ended[64]; /* why the session ended, when its last line said */
};

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void unqueue(struct watch *w, long long id)
{
    for (size_t i = 0; i < w->queued; i++) {
        if (w->queue[i].id == id) {
            memmove(&w->queue[i], &w->queue[i + 1], (w->queued - i - 1) * sizeof w->queue[0]);
            w->queued--;
            if (w->prompted == id)
                w->prompted = -1;
            return;
        }
    }
}

/* "o", "once", "s", "session", "d", "deny" (any case, spaces around) -> the answer word;
 * "f D", "for D", "for=D" (D a duration, grant_words.h) -> "session" with *for_s set. */
static const char *answer_word(const char *line, size_t len, double *for_s)
{
    char word[32];
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < sizeof word; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            word[k++] = (char)tolower((unsigned char)line[i]);
    word[k] = '\0';
    *for_s = 0;
    if (strcmp(word, "o") == 0 || strcmp(word, "once") == 0)
        return "once";
    if (strcmp(word, "s") == 0 || strcmp(word, "session") == 0)
        return "session";
    if (strcmp(word, "d") == 0 || strcmp(word, "deny") == 0)
        return "deny";
    const char *d = strncmp(word, "for=", 4) == 0  ? word + 4
                    : strncmp(word, "for", 3) == 0 ? word + 3
                    : word[0] == 'f'               ? word + 1
                                                   : NULL;
    if (d && gw_parse_duration(d, for_s))
        return "session";
    return NULL;
}

/* POST the answer; 0 when the session took it or said why not (answered meanwhile, timed
 * out), 1 when it could not be reached. */
static int post_answer(struct watch *w, long long id, const char *answer, double for_s)
{
    struct chttp h;
    struct json_value *v = NULL;
    char *path = NULL, *body = NULL;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "approve --watch", w->name, false) != 0)
        goto out;
    path = xasprintf("/v1/approvals/%lld", id);
    char timed[48] = "";
    if (for_s > 0)
        snprintf(timed, sizeof timed, ",\"" API_ANSWER_FOR "\":%.0f", for_s);
    body = xasprintf("{\"" API_ANSWER "\":\"%s\",\"" API_ANSWER_BY "\":\"%s\"%s}", answer, w->by,
                     timed); /* plain words */
    if (chttp_request(&h, "POST", path, body, strlen(body), NULL, NULL) < 0) {
        status = chttp_lost(&h);
        goto out;
    }
    status = 0;
    if (!chttp_ok(&h)) {
        (void)reply_fail(&h);
        goto out;
    }
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

/* Prompt for the oldest question until it is answered, expires, or the stream has news (then
 * 0: the stream is read on, and the prompt comes back after). -1 to stop watching. */
static int serve_queue(struct watch *w)
{
    while (w->queued > 0 && !w->stdin_ended) {
        struct asked *q = &w->queue[0];
        /* the session settles it at its expiry; a little later it is dropped here anyway */
        double left = q->expires > 0 ? q->expires + 2 - wall_now() : 3600;
        if (left <= 0) {
            printf("\ncordon: approval %lld: no answer in time: denied\n", q->id);
            unqueue(w, q->id);
            continue;
        }
        if (w->prompted != q->id) {
            printf("        approval %lld: [o] once  [s] session  [f 10m] for a time  [d] deny ? ",
                   q->id);
            fflush(stdout);
            w->prompted = q->id;
        }
        char *nl = memchr(w->in, '\n', w->in_len);
        if (nl) {
            size_t len = (size_t)(nl - w->in);
            double for_s = 0;
            const char *answer = answer_word(w->in, len, &for_s);
            memmove(w->in, nl + 1, w->in_len - len - 1);
            w->in_len -= len + 1;
            if (!answer) {
                printf("        answer o (once), s (session), f D (for D: 90s, 10m, 2h, 1d) or d "
                       "(deny)\n");
                w->prompted = -1;
                continue;
            }
            long long id = q->id;
            unqueue(w, id);
            if (post_answer(w, id, answer, for_s) != 0)
                return -1;
            continue;
        }
        if (w->in_len == sizeof w->in) /* a line that long is no answer */
            w->in_len = 0;
        struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN},
                              {.fd = w->h->fd, .events = POLLIN}};
        int r = poll(p, 2, left > 3600 ? 3600 * 1000 : (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0)
            continue;
        if (p[1].revents)
            return 0; /* news on the stream first: a settled line, a question, or its end */
        ssize_t got = read(STDIN_FILENO, w->in + w->in_len, sizeof w->in - w->in_len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            w->stdin_ended = true;
            printf(
                "\ncordon: approve --watch: stdin ended: no longer answering (the questions wait for "
                "another approver)\n");
            fflush(stdout);
            return -1;
        }
        w->in_len += (size_t)got;
    }
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
    const char *event = reply_str(v, API_EVENT);
    const struct json_value *a = json_get(v, API_FIELD_APPROVAL);
    long long id = 0;
    if (event && strcmp(event, API_EVENT_SUBSCRIBED) == 0) {
        printf("cordon: answering the approvals of session '%s' here (Ctrl-C or the end of stdin "
               "stops)\n",
               w->name);
    } else if (event && strcmp(event, API_EVENT_QUESTION) == 0 && a && a->type == JSON_OBJECT &&
               reply_int(a, "id", &id) && reply_str(a, "question")) {
        /* The question and the command come from the session: no byte of them may act on the
         * terminal the person answers on. */
        char *question = visible_dup(reply_str(a, "question"));
        const char *command = reply_str(a, "command");
        printf("%scordon: approval %lld in session '%s': %s\n", w->prompted >= 0 ? "\n" : "", id,
               w->name, question);
        free(question);
        if (command) {
            char *shown = visible_dup(command);
            printf("        command: %s\n", shown);
            free(shown);
        }
        w->prompted = -1; /* the prompt is printed again below the question */
        if (w->queued < WATCH_QUEUE) {
            w->queue[w->queued].id = id;
            w->queue[w->queued].expires = 0;
            (void)reply_num(a, "expires", &w->queue[w->queued].expires);
            w->queued++;
        }
    } else if (event && strcmp(event, API_EVENT_SETTLED) == 0 && reply_int(v, "id", &id)) {
        bool shown = w->prompted == id;
        unqueue(w, id);
        if (id != w->answered) {
            const char *answer = reply_str(v, API_ANSWER), *by = reply_str(v, API_ANSWER_BY);
            char *by_shown = visible_dup(by ? by : "?");
            printf("%scordon: approval %lld: %s (by %s)\n", shown ? "\n" : "", id,
                   answer ? answer : "?", by_shown);
            free(by_shown);
        }
        if (w->prompted >= 0)
            w->prompted = -1;
    } else if (event && strcmp(event, API_EVENT_SESSION_ENDED) == 0 &&
               reply_str(v, API_FIELD_REASON)) {
        char *why = visible_dup(reply_str(v, API_FIELD_REASON));
        snprintf(w->ended, sizeof w->ended, "%s", why);
        free(why);
    }
    fflush(stdout);
out:
    json_free(v);
    return rc;
}

static int watch_stream(void *ctx, const char *data, size_t len)
{
    struct watch *w = ctx;
    if (ndjson_feed(&w->lines, data, len, watch_line, w) < 0)
        return -1;
    return serve_queue(w);
}

int capprove_watch(const char *name)
{
    struct chttp h;
    struct watch w = {.name = name, .h = &h, .answered = -1, .prompted = -1};
    snprintf(w.by, sizeof w.by, "cordon approve --watch (pid %d)", (int)getpid());
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "approve --watch", name, false) != 0)
        goto out;
    int r = chttp_request(&h, "GET", "/v1/approvals?watch=1", NULL, 0, watch_stream, &w);
    if (r < 0 && h.sink_stopped) {
        status = w.stdin_ended ? 0 : 1; /* else a malformed line or a lost session was said */
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
    printf("%scordon: session '%s' has ended%s%s%s\n", w.prompted >= 0 ? "\n" : "", name,
           w.ended[0] ? " (" : "", w.ended, w.ended[0] ? ")" : "");
    status = 0;
out:
    fflush(stdout);
    ndjson_lines_free(&w.lines);
    chttp_close(&h);
    return status;
}
