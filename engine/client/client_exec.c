/* client_exec.c — see client_exec.h.
 *
 * Speed: `cordon exec S -- true` is measured against `bash -c true`, so the path from main to
 * exit is one connect, one request, two small events: output is written with write(2) straight
 * from the read buffer when a line arrived whole, and nothing else is allocated per event but
 * the JSON tree. */
#include "client/client_exec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client_http.h"
#include "client/client_ndjson.h"
#include "client/client_output.h"
#include "client/client_reply.h"
#include "base/session_socket.h"
#include "base/session_protocol.h"
#include "base/log.h"
#include "base/restart_policy.h"
#include "base/json_write.h"
#include "base/util.h"
#include "base/visible.h"

void cexec_usage(void)
{
    fputs("usage: cordon exec NAME [--timeout S] [--background] [--restart POLICY] [--backoff D]\n"
          "                 [--turn ID] [--json] -- 'shell string'\n"
          "Run a shell string in session NAME (a fresh bash -c in the workspace).\n"
          "  --timeout S    stop it (TERM, then KILL) after S seconds; exit status 124\n"
          "  --background   start it as a job: prints its PID, log and how to stop it\n"
          "  --restart POLICY  with --background: start the job again when it ends:\n"
          "                 on-failure[:N] (a non-zero status) or always[:N], at most N times\n"
          "                 (no limit without :N); cordon stop ends it and its restarts. Each\n"
          "                 restart runs the same shell string with the session's environment\n"
          "                 (files it runs are read anew) and writes one line in the job's log\n"
          "  --backoff D    the wait before the first restart (default 1s; 0.5, 10s, 2m), doubled\n"
          "                 at each next one, up to 5m\n"
          "  --turn ID      tag it with a turn, for cordon cancel NAME ID\n"
          "  --json         after the output, print the exit event (or the job) as JSON\n"
          "Options may also follow the shell string; other words after it are joined to it.\n"
          "When the session ends while the command runs, one line says why (the exit status is\n"
          "still the command's).\n",
          stdout);
}

bool cexec_parse_timeout(const char *s, double *out)
{
    char *end;
    /* strtod also takes leading blanks, signs, "inf", "nan" and hex: only a plain decimal */
    if (!((s[0] >= '0' && s[0] <= '9') || s[0] == '.') || s[strspn(s, "0123456789.eE+-")] != '\0')
        return false;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v) || !(v > 0))
        return false;
    *out = v;
    return true;
}

void cexec_format_seconds(double s, char *out, size_t outlen)
{
    snprintf(out, outlen, "%.15g", s);
    if (strtod(out, NULL) != s)
        snprintf(out, outlen, "%.17g", s);
}

/* An exec option at argv[*i] (advancing *i past its value): 1 handled, 0 not an option of
 * ours, -1 usage error in err. */
static int take_option(int argc, char **argv, int *i, struct cexec_args *a, char *err,
                       size_t errlen)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--background") == 0) {
        a->background = true;
        return 1;
    }
    if (strcmp(arg, "--json") == 0) {
        a->json = true;
        return 1;
    }
    static const char *const with_value[] = {"--timeout", "--turn", "--restart", "--backoff"};
    for (size_t k = 0; k < ARRAY_LEN(with_value); k++) {
        size_t n = strlen(with_value[k]);
        const char *value;
        if (strncmp(arg, with_value[k], n) != 0)
            continue;
        if (arg[n] == '=') {
            value = arg + n + 1;
        } else if (arg[n] == '\0') {
            if (*i + 1 >= argc) {
                snprintf(err, errlen, "%s needs a value", with_value[k]);
                return -1;
            }
            value = argv[++*i];
        } else {
            continue;
        }
        if (k == 0) {
            if (!cexec_parse_timeout(value, &a->timeout)) {
                snprintf(err, errlen, "invalid --timeout '%s' (a positive number of seconds)",
                         value);
                return -1;
            }
            a->has_timeout = true;
        } else if (k == 2) {
            struct restart_policy p;
            if (!restart_policy_parse(value, &p, err, errlen))
                return -1;
            a->restart = value;
        } else if (k == 3) {
            if (!restart_backoff_parse(value, &a->backoff, err, errlen))
                return -1;
            a->has_backoff = true;
        } else {
            if (value[0] == '\0' || strlen(value) > API_TURN_MAX) {
                snprintf(err, errlen, "invalid --turn '%s' (1 to %d characters)", value,
                         API_TURN_MAX);
                return -1;
            }
            a->turn = value;
        }
        return 1;
    }
    return 0;
}

static void append_word(struct cexec_args *a, const char *word)
{
    size_t n = strlen(a->command), m = strlen(word);
    a->command = xrealloc(a->command, n + 1 + m + 1);
    a->command[n] = ' ';
    memcpy(a->command + n + 1, word, m + 1);
}

enum cexec_parse cexec_parse_args(int argc, char **argv, struct cexec_args *a, char *err,
                                  size_t errlen)
{
    bool dashdash = false;
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (dashdash && !a->command) {
            a->command = xstrdup(arg);
            continue;
        }
        int r = take_option(argc, argv, &i, a, err, errlen);
        if (r < 0)
            return CEXEC_USAGE;
        if (r > 0)
            continue;
        if (dashdash) {
            append_word(a, arg);
        } else if (strcmp(arg, "--") == 0) {
            dashdash = true;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            return CEXEC_HELP;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            snprintf(err, errlen, "unknown option '%s' (cordon exec --help lists them)", arg);
            return CEXEC_USAGE;
        } else if (!a->name) {
            a->name = arg;
        } else {
            snprintf(err, errlen,
                     "unexpected '%s' before '--' (cordon exec NAME [options] -- "
                     "'shell string')",
                     arg);
            return CEXEC_USAGE;
        }
    }
    if (!a->name) {
        snprintf(err, errlen, "missing NAME (cordon exec NAME [options] -- 'shell string')");
        return CEXEC_USAGE;
    }
    if (!csock_name_valid(a->name)) {
        snprintf(err, errlen,
                 "invalid session name '%s' (letters, digits, '_', '.', '-'; at most %d)", a->name,
                 CSOCK_NAME_MAX);
        return CEXEC_USAGE;
    }
    if (!dashdash) {
        snprintf(err, errlen,
                 "missing '--' before the shell string (cordon exec NAME [options] -- "
                 "'shell string')");
        return CEXEC_USAGE;
    }
    if (!a->command || a->command[0] == '\0') {
        snprintf(err, errlen,
                 "the command is empty (cordon exec NAME [options] -- 'shell string')");
        return CEXEC_USAGE;
    }
    if (a->restart && !a->background) {
        snprintf(err, errlen,
                 "--restart is for background jobs (add --background): a foreground command "
                 "ends with its answer");
        return CEXEC_USAGE;
    }
    if (a->has_backoff && !a->restart) {
        snprintf(err, errlen, "--backoff goes with --restart (the wait before a restart)");
        return CEXEC_USAGE;
    }
    if (a->background && a->has_timeout) {
        snprintf(err, errlen,
                 "--timeout is for foreground commands; a background one runs until it "
                 "ends or is stopped");
        return CEXEC_USAGE;
    }
    return CEXEC_RUN;
}

void cexec_args_free(struct cexec_args *a)
{
    free(a->command);
    a->command = NULL;
}

char *cexec_body(const struct cexec_args *a, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        die_errno("exec: open_memstream");
    fputs("{\"" API_EXEC_COMMAND "\":", f);
    json_write_string(f, a->command);
    if (a->background)
        fputs(",\"" API_EXEC_BACKGROUND "\":true", f);
    if (a->has_timeout) {
        char secs[40];
        cexec_format_seconds(a->timeout, secs, sizeof secs);
        fprintf(f, ",\"" API_EXEC_TIMEOUT "\":%s", secs);
    }
    if (a->turn) {
        fputs(",\"" API_EXEC_TURN "\":", f);
        json_write_string(f, a->turn);
    }
    if (a->restart) {
        fputs(",\"" API_EXEC_RESTART "\":", f);
        json_write_string(f, a->restart);
    }
    if (a->has_backoff) {
        char secs[40];
        cexec_format_seconds(a->backoff, secs, sizeof secs);
        fprintf(f, ",\"" API_EXEC_BACKOFF "\":%s", secs);
    }
    fputc('}', f);
    if (fclose(f) != 0)
        die_errno("exec: open_memstream");
    *len = n;
    return buf;
}

struct stream {
    const struct cexec_args *args;
    struct ndjson_lines lines;
    bool got_exit;
    bool timed_out, stopped;
    int exit_code;
    char *exit_line;    /* --json: the exit event as it came */
    char *ended_reason; /* the session's end closed the stream: why */
    size_t exit_len;
};

/* A question asked of the session's approver, on our stderr (for information: we cannot answer). */
static void print_approval(const char *session, const struct json_value *a)
{
    long long id = 0;
    double expires = 0;
    const char *question = reply_str(a, "question");
    if (!reply_int(a, "id", &id) || !question)
        return;
    (void)reply_num(a, "expires", &expires);
    char when[32] = "";
    time_t t = (time_t)expires;
    struct tm tm;
    if (expires > 0 && localtime_r(&t, &tm))
        strftime(when, sizeof when, " by %H:%M:%S", &tm);
    char *shown = visible_dup(question); /* from the session: no byte of it acts on the terminal */
    /* Not "answer with cordon approve": this stream's reader is the agent whose command asked,
     * and the answer is a person's (docs/session-api.md, "Approvals"). */
    fprintf(stderr,
            "cordon: approval %lld: %s\n"
            "        asked of an approver of session '%s' (denied if nobody answers%s)\n",
            id, shown, session, when);
    free(shown);
}

/* One line per refusal the sandbox made, as `cordon run` says them. */
static void print_refusals(const struct json_value *refusals, bool ran_outside)
{
    for (size_t i = 0; refusals && i < refusals->len; i++) {
        const char *reason = reply_str(&refusals->items[i], "reason");
        if (reason) {
            char *shown = visible_dup(reason);
            fprintf(stderr, "cordon: %s%s\n", shown,
                    ran_outside ? " (then run outside, as approved)" : "");
            free(shown);
        }
    }
}

/* Without --json, as `cordon run` says them (trusted_changes_tell): a line per path, a few. */
static void print_trusted(const struct json_value *changes)
{
    enum { AT_MOST = 5 };
    size_t n = changes ? changes->len : 0;
    for (size_t i = 0; i < n && i < AT_MOST; i++) {
        const char *path = reply_str(&changes->items[i], "path");
        const char *change = reply_str(&changes->items[i], "change");
        const char *why = reply_str(&changes->items[i], "why");
        if (!path || !change || !why)
            continue;
        char *shown = visible_dup(path), *shown_why = visible_dup(why);
        fprintf(stderr, "cordon: %s what the host runs or trusts: %s (%s)\n",
                strcmp(change, "removed") == 0 ? "removed"
                : strcmp(change, "added") == 0 ? "added"
                                               : "changed",
                shown, shown_why);
        free(shown);
        free(shown_why);
    }
    if (n > AT_MOST)
        fprintf(stderr, "cordon: and %zu more host-trusted paths changed (--json lists them)\n",
                n - AT_MOST);
}

static int on_line(void *ctx, const char *line, size_t len)
{
    struct stream *st = ctx;
    struct ndjson_event ev;
    char err[160];
    int rc = 0;
    if (ndjson_decode(line, len, &ev, err, sizeof err) < 0) {
        rc = -reply_malformed("exec", err);
        goto out;
    }
    switch (ev.kind) {
    case NDJSON_OUTPUT: {
        int w = cout_write(ev.fd, ev.data, ev.len);
        if (w < 0) {
            fprintf(stderr, "cordon: exec: cannot write the command's output: %s\n", strerror(-w));
            rc = -1;
        }
        break;
    }
    case NDJSON_EXIT:
        if (st->got_exit)
            break;
        st->got_exit = true;
        st->exit_code = ev.exit_code;
        st->timed_out = ev.timed_out;
        st->stopped = ev.stopped;
        print_refusals(ev.refusals, ev.ran_outside);
        if (!st->args->json)
            print_trusted(ev.host_trusted);
        if (st->args->json) {
            st->exit_line = xmalloc(len + 1);
            memcpy(st->exit_line, line, len);
            st->exit_line[len] = '\n';
            st->exit_len = len + 1;
        }
        break;
    case NDJSON_APPROVAL:
        print_approval(st->args->name, ev.approval);
        break;
    case NDJSON_SESSION_ENDED:
        free(st->ended_reason);
        st->ended_reason = xstrdup(ev.reason);
        break;
    case NDJSON_STARTED:
    case NDJSON_DROPPED:
    case NDJSON_OTHER:
        break;
    }
out:
    ndjson_event_free(&ev);
    return rc;
}

static int on_stream(void *ctx, const char *data, size_t len)
{
    struct stream *st = ctx;
    return ndjson_feed(&st->lines, data, len, on_line, st) < 0 ? -1 : 0;
}

static int run_foreground(struct chttp *h, const struct cexec_args *a, const char *body,
                          size_t body_len)
{
    struct stream st = {.args = a};
    int status = CORDON_EXIT_SETUP;
    int rc = chttp_request(h, "POST", "/v1/exec", body, body_len, on_stream, &st);
    if (h->sink_stopped)
        goto out;
    if (!chttp_ok(h)) {
        status = rc < 0 ? chttp_lost(h) : reply_fail(h);
        goto out;
    }
    /* A last line without '\n' counts only when the stream ended properly. */
    if (!st.got_exit && rc == 0 && ndjson_finish(&st.lines, on_line, &st) < 0)
        goto out;
    /* The session's end stopped the command: say why in the line that says it was stopped;
     * the status stays the command's own (it may have cleaned up and exited), 125 when the
     * session ended before it could say. */
    bool ended_it = st.ended_reason && (!st.got_exit || st.stopped);
    if (ended_it) {
        char *why = visible_dup(st.ended_reason);
        fprintf(stderr, "cordon: exec: session '%s' ended (%s) while the command ran\n", a->name,
                why);
        free(why);
    }
    if (ended_it && !st.got_exit)
        goto out;
    if (!st.got_exit) {
        if (rc < 0)
            status = chttp_lost(h);
        else
            fputs("cordon: the session closed the connection before the command finished\n",
                  stderr);
        goto out;
    }
    /* An exit event came: a connection that broke after it changes nothing. */
    if (st.exit_line) {
        int w = cout_write(1, st.exit_line, st.exit_len);
        if (w < 0) {
            fprintf(stderr, "cordon: exec: cannot write the result: %s\n", strerror(-w));
            goto out;
        }
    }
    status = st.exit_code;
    if (st.timed_out) {
        if (a->has_timeout) {
            char secs[40];
            cexec_format_seconds(a->timeout, secs, sizeof secs);
            fprintf(stderr, "cordon: the command timed out after %s s and was stopped\n", secs);
        } else {
            fputs("cordon: the command timed out and was stopped\n", stderr);
        }
        status = CORDON_EXIT_TIMEOUT; /* as GNU timeout */
    } else if (st.stopped && !ended_it) {
        fputs("cordon: the command was stopped (cordon stop, cordon cancel or the session's end)\n",
              stderr);
    }
out:
    free(st.ended_reason);
    free(st.exit_line);
    ndjson_lines_free(&st.lines);
    return status;
}

static int run_background(struct chttp *h, const struct cexec_args *a, const char *body,
                          size_t body_len)
{
    if (chttp_request(h, "POST", "/v1/exec", body, body_len, NULL, NULL) < 0)
        return chttp_lost(h);
    if (!chttp_ok(h))
        return reply_fail(h);
    struct json_value *v = reply_json(h);
    if (!v)
        return CORDON_EXIT_SETUP;
    int status = 0;
    const struct json_value *msg = json_get(v, "message");
    if (!msg || msg->type != JSON_STRING) {
        status = reply_malformed("exec", "the background answer has no \"message\" string");
    } else {
        fwrite(msg->str, 1, msg->len, stdout);
        if (a->json)
            reply_print_line(stdout, h->body, h->body_len);
    }
    json_free(v);
    return status;
}

int cexec_run(const struct cexec_args *a)
{
    struct chttp h;
    size_t body_len;
    int status;
    char *body = NULL;
    if (chttp_open(&h, "exec", a->name, false) != 0) {
        status = CORDON_EXIT_SETUP;
        goto out;
    }
    body = cexec_body(a, &body_len);
    if (a->background)
        status = run_background(&h, a, body, body_len);
    else
        status = run_foreground(&h, a, body, body_len);
out:
    free(body);
    chttp_close(&h);
    return status;
}
