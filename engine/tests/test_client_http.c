/* test_client_http.c — the CLI's HTTP client (client_http.h) against a fake session: a child
 * process listening on the session's socket path (a private XDG_RUNTIME_DIR under $TMPDIR)
 * reads one request, checks its bytes, and writes a scripted answer in pieces, pausing between
 * them so that they arrive as separate reads. Covers the request bytes, Content-Length,
 * chunked and until-close bodies, chunked answers cut at every point (inside the size line,
 * inside a CRLF, an NDJSON line across chunks), events reaching the sink before the answer
 * ends, an interim 1xx, truncated and malformed answers, a head too large, error statuses, a
 * stopping sink, a body given up at its deadline, missing and stale sessions, and path escaping. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "base/clock.h"
#include "base/log.h"
#include "client/client_http.h"
#include "client/client_ndjson.h"
#include "test.h"

#define NAME "fake"

static char runtime[256], sock_path[CSOCK_PATH_MAX];

/* A private runtime directory for this case, with the socket directory in it. */
static void fresh_runtime(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(runtime, sizeof runtime, "%s/client-http.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(runtime) != NULL);
    CHECK_EQ_INT(setenv("XDG_RUNTIME_DIR", runtime, 1), 0);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/cordon", runtime);
    CHECK_EQ_INT(mkdir(dir, 0700), 0);
    CHECK_EQ_INT(csock_path(NAME, sock_path, sizeof sock_path), 0);
}

static void drop_runtime(void)
{
    char dir[300];
    unlink(sock_path);
    snprintf(dir, sizeof dir, "%s/cordon", runtime);
    rmdir(dir);
    rmdir(runtime);
}

struct piece {
    const char *p;
    size_t len;
    bool wait_ack; /* before writing it, wait for a byte on the ack pipe (from the sink) */
};

static int ack_pipe[2] = {-1, -1};

static int bind_listener(void)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    unlink(sock_path);
    memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(l >= 0);
    CHECK_EQ_INT(bind(l, (struct sockaddr *)&addr, sizeof addr), 0);
    return l;
}

/* The fake session, for one connection: the request must be exactly `expect` (NULL: any head
 * through its blank line); then the pieces, 2 ms apart. Exits 0, or 3 for a wrong request.
 * Write errors are ignored: a client may rightly hang up early. */
static pid_t serve(const char *expect, const struct piece *pieces, size_t n)
{
    int l = bind_listener();
    CHECK_EQ_INT(listen(l, 1), 0);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        signal(SIGPIPE, SIG_IGN);
        int c = accept(l, NULL, NULL);
        if (c < 0)
            _exit(2);
        char req[4096];
        size_t have = 0, want = expect ? strlen(expect) : sizeof req - 1;
        while (have < want) {
            ssize_t r = read(c, req + have, want - have);
            if (r <= 0)
                break;
            have += (size_t)r;
            req[have] = '\0';
            if (!expect && strstr(req, "\r\n\r\n"))
                break;
        }
        req[have] = '\0';
        if (expect && strcmp(req, expect) != 0) {
            fprintf(stderr, "  the fake session got:\n%s\n  expected:\n%s\n", req, expect);
            _exit(3);
        }
        for (size_t i = 0; i < n; i++) {
            if (pieces[i].wait_ack) {
                char b;
                if (read(ack_pipe[0], &b, 1) != 1)
                    _exit(4);
            }
            const char *p = pieces[i].p;
            size_t left = pieces[i].len;
            while (left > 0) {
                ssize_t w = write(c, p, left);
                if (w <= 0)
                    break;
                p += w;
                left -= (size_t)w;
            }
            usleep(2000);
        }
        close(c);
        _exit(0);
    }
    close(l);
    return pid;
}

static void reap(pid_t pid)
{
    int st;
    CHECK_EQ_INT(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "  the fake session ended with status 0x%x\n", st);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

#define P(s)                   \
    {                          \
        s, sizeof s - 1, false \
    }

/* What a sink got: the bytes, how many pieces, the NDJSON lines they make. */
struct got {
    char bytes[8192];
    size_t len, pieces;
    struct ndjson_lines lines;
    char line[8][128];
    size_t n_lines;
    bool ack_first_line; /* write to the ack pipe when the first line is complete */
    int stop_after;      /* return -1 at this piece (1-based); 0 never */
};

static int on_line(void *ctx, const char *line, size_t len)
{
    struct got *g = ctx;
    CHECK(g->n_lines < 8 && len < sizeof g->line[0]);
    memcpy(g->line[g->n_lines], line, len);
    g->line[g->n_lines][len] = '\0';
    if (g->n_lines++ == 0 && g->ack_first_line)
        CHECK_EQ_INT(write(ack_pipe[1], "k", 1), 1);
    return 0;
}

static int sink(void *ctx, const char *data, size_t len)
{
    struct got *g = ctx;
    g->pieces++;
    if (g->stop_after && (int)g->pieces == g->stop_after)
        return -1;
    CHECK(g->len + len <= sizeof g->bytes);
    memcpy(g->bytes + g->len, data, len);
    g->len += len;
    return ndjson_feed(&g->lines, data, len, on_line, g) < 0 ? -1 : 0;
}

/* One request against a fake session answering with pieces; returns chttp_request's result. */
static int exchange(struct chttp *h, const char *expect, const struct piece *pieces, size_t n,
                    const char *method, const char *path, const char *body, struct got *g)
{
    CHECK_EQ_INT(chttp_open(h, "test", NAME, false), 0);
    pid_t pid = serve(expect, pieces, n);
    int rc = chttp_request(h, method, path, body, body ? strlen(body) : 0, g ? sink : NULL, g);
    reap(pid);
    CHECK_EQ_INT(h->fd, -1); /* the connection is closed after every request */
    return rc;
}

static void test_content_length(void)
{
    fresh_runtime();
    struct chttp h;
    const struct piece pieces[] = {
        P("HTTP/1.1 200 OK\r\nContent-Type: appli"),
        P("cation/json\r\nContent-Length: 11\r"),
        P("\n\r\n{\"a\":"),
        P("true}\n"),
        P("bytes after the body are not read as it"),
    };
    const char *expect =
        "POST /v1/exec HTTP/1.1\r\nHost: cordon\r\nContent-Type: application/json\r\n"
        "Content-Length: 18\r\n\r\n{\"command\":\"true\"}";
    CHECK_EQ_INT(
        exchange(&h, expect, pieces, 5, "POST", "/v1/exec", "{\"command\":\"true\"}", NULL), 0);
    CHECK_EQ_INT(h.status, 200);
    CHECK(chttp_ok(&h));
    CHECK_EQ_INT(h.body_len, 11);
    CHECK(strcmp(h.body, "{\"a\":true}\n") == 0);
    chttp_close(&h);

    /* A GET has no body headers; a POST without a body says Content-Length: 0. An empty
     * Content-Length body, and a 204, complete at the head. */
    const struct piece empty[] = {P("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")};
    CHECK_EQ_INT(exchange(&h, "GET /v1/jobs HTTP/1.1\r\nHost: cordon\r\n\r\n", empty, 1, "GET",
                          "/v1/jobs", NULL, NULL),
                 0);
    CHECK_EQ_INT(h.body_len, 0);
    chttp_close(&h);
    const struct piece no_content[] = {P("HTTP/1.1 204 No Content\r\n\r\n")};
    CHECK_EQ_INT(
        exchange(&h, "POST /v1/session/stop HTTP/1.1\r\nHost: cordon\r\nContent-Length: 0\r\n\r\n",
                 no_content, 1, "POST", "/v1/session/stop", NULL, NULL),
        0);
    CHECK_EQ_INT(h.status, 204);
    chttp_close(&h);
    drop_runtime();
}

/* An exec stream: three NDJSON lines in chunks that do not follow the lines. */
static const char stream_head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n";
static const char line1[] = "{\"event\":\"started\",\"pid\":3}\n";
static const char line2[] = "{\"event\":\"output\",\"stream\":\"stdout\",\"data\":\"hi\\n\"}\n";
static const char line3[] = "{\"event\":\"exit\",\"pid\":3,\"exit_code\":0}\n";

static size_t chunked_stream(char *out)
{
    char payload[512];
    int n = snprintf(payload, sizeof payload, "%s%s%s", line1, line2, line3);
    /* chunks of 10, 17 (line 1 ends inside), 1, the rest; a chunk extension on one */
    size_t cut[] = {0, 10, 27, 28, (size_t)n};
    size_t len = (size_t)sprintf(out, "%s", stream_head);
    for (int k = 0; k < 4; k++) {
        len += (size_t)sprintf(out + len, k == 2 ? "%zx;x=y\r\n" : "%zx\r\n", cut[k + 1] - cut[k]);
        memcpy(out + len, payload + cut[k], cut[k + 1] - cut[k]);
        len += cut[k + 1] - cut[k];
        len += (size_t)sprintf(out + len, "\r\n");
    }
    len += (size_t)sprintf(out + len, "0\r\nX-Trailer: t\r\n\r\n");
    return len;
}

static void check_three_lines(const struct got *g)
{
    CHECK_EQ_INT(g->n_lines, 3);
    CHECK(strncmp(g->line[0], line1, sizeof line1 - 2) == 0);
    CHECK(strncmp(g->line[1], line2, sizeof line2 - 2) == 0);
    CHECK(strncmp(g->line[2], line3, sizeof line3 - 2) == 0);
    CHECK_EQ_INT(g->len, strlen(line1) + strlen(line2) + strlen(line3));
}

static void test_chunked_every_split(void)
{
    fresh_runtime();
    char resp[1024];
    size_t len = chunked_stream(resp);
    /* Two pieces cut at every point: inside the head, a size line, a CRLF, the data, the
     * trailer, the final CRLF. */
    for (size_t cut = 1; cut < len; cut++) {
        struct chttp h;
        struct got g = {0};
        const struct piece pieces[] = {{resp, cut, false}, {resp + cut, len - cut, false}};
        CHECK_EQ_INT(exchange(&h, NULL, pieces, 2, "POST", "/v1/exec", "{}", &g), 0);
        CHECK_EQ_INT(h.status, 200);
        check_three_lines(&g);
        CHECK_EQ_INT(h.body_len, 0); /* streamed, not collected */
        ndjson_lines_free(&g.lines);
        chttp_close(&h);
    }
    drop_runtime();
}

static void test_chunked_awkward_pieces(void)
{
    fresh_runtime();
    struct chttp h;
    struct got g = {0};
    /* The size line "1c" split between its digits, CRLFs split, a line across chunks. */
    const struct piece pieces[] = {
        P("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1"),
        P("c\r"),
        P("\n{\"event\":\"started\",\"pid\":3}\n\r"),
        P("\n5\r\n{\"eve\r\n"),
        P("2e\r\nnt\":\"output\",\"stream\":\"stdout\",\"data\":\"hi\\n\"}\n\r\n"),
        P("27\r\n{\"event\":\"exit\",\"pid\":3,\"exit_code\":0}\n\r"),
        P("\n0\r"),
        P("\n\r"),
        P("\n"),
    };
    CHECK_EQ_INT(exchange(&h, NULL, pieces, 9, "POST", "/v1/exec", "{}", &g), 0);
    check_three_lines(&g);
    CHECK(g.pieces >= 4); /* handed over as they came, not joined at the end */
    ndjson_lines_free(&g.lines);
    chttp_close(&h);
    drop_runtime();
}

/* The fake session sends the rest only after the sink has had the first line: a client that
 * held the stream back until its end would never finish (the harness's deadline fails it). */
static void test_events_arrive_as_sent(void)
{
    fresh_runtime();
    CHECK_EQ_INT(pipe(ack_pipe), 0);
    struct chttp h;
    struct got g = {.ack_first_line = true};
    const struct piece pieces[] = {
        P("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1c\r\n{\"event\":\"started\",\"pid\":3}\n\r\n"),
        {"33\r\n{\"event\":\"output\",\"stream\":\"stdout\",\"data\":\"hi\\n\"}\n\r\n"
         "27\r\n{\"event\":\"exit\",\"pid\":3,\"exit_code\":0}\n\r\n0\r\n\r\n",
         0, true},
    };
    struct piece p[2] = {pieces[0], pieces[1]};
    p[1].len = strlen(p[1].p);
    CHECK_EQ_INT(exchange(&h, NULL, p, 2, "POST", "/v1/exec", "{}", &g), 0);
    check_three_lines(&g);
    ndjson_lines_free(&g.lines);
    chttp_close(&h);
    drop_runtime();
}

static void test_until_close(void)
{
    fresh_runtime();
    struct chttp h;
    struct got g = {0};
    const struct piece pieces[] = {P("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nline one\n"),
                                   P("line "), P("two\n")};
    CHECK_EQ_INT(exchange(&h, NULL, pieces, 3, "GET", "/v1/jobs/4/log", NULL, &g), 0);
    CHECK_EQ_INT(g.len, 18);
    CHECK(memcmp(g.bytes, "line one\nline two\n", 18) == 0);
    ndjson_lines_free(&g.lines);
    chttp_close(&h);
    /* Collected too, and an HTTP/1.0 answer is read the same way. */
    const struct piece old[] = {P("HTTP/1.0 200 OK\r\n\r\n{\"x\":1}")};
    CHECK_EQ_INT(exchange(&h, NULL, old, 1, "GET", "/v1/session", NULL, NULL), 0);
    CHECK(strcmp(h.body, "{\"x\":1}") == 0);
    chttp_close(&h);
    drop_runtime();
}

static void test_interim_answer(void)
{
    fresh_runtime();
    struct chttp h;
    const struct piece pieces[] = {P("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"),
                                   P("Content-Length: 2\r\n\r\nok")};
    CHECK_EQ_INT(exchange(&h, NULL, pieces, 2, "POST", "/v1/exec", "{}", NULL), 0);
    CHECK_EQ_INT(h.status, 201);
    CHECK(strcmp(h.body, "ok") == 0);
    chttp_close(&h);
    drop_runtime();
}

/* rc -1, a failure text containing why, malformed or not. */
static void expect_failure(const struct piece *pieces, size_t n, const char *why, bool malformed,
                           struct got *g)
{
    struct chttp h;
    CHECK_EQ_INT(exchange(&h, NULL, pieces, n, "POST", "/v1/exec", "{}", g), -1);
    CHECK_STR_CONTAINS(h.failure, why);
    CHECK_EQ_INT(h.malformed, malformed);
    CHECK(!h.missing);
    CHECK_EQ_INT(h.connect_errno, 0);
    CHECK(!h.sink_stopped);
    CHECK_EQ_INT(chttp_lost(&h), CORDON_EXIT_SETUP);
    chttp_close(&h);
}

static void test_truncated(void)
{
    fresh_runtime();
    expect_failure(NULL, 0, "without answering", false, NULL);
    const struct piece head[] = {P("HTTP/1.1 200 OK\r\nContent-Le")};
    expect_failure(head, 1, "in the middle of its answer", false, NULL);
    const struct piece cl[] = {P("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"), P("abcd")};
    expect_failure(cl, 2, "in the middle of its answer", false, NULL);
    /* A session gone mid-stream: the lines before are out; the end is missing. */
    struct got g = {0};
    const struct piece chunked[] = {
        P("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1c\r\n{\"event\":\"started\",\"pid\":3}\n\r\n"),
        P("27\r\n{\"event\":\"exit\""),
    };
    expect_failure(chunked, 2, "in the middle of its answer", false, &g);
    CHECK_EQ_INT(g.n_lines, 1);
    ndjson_lines_free(&g.lines);
    drop_runtime();
}

static void test_malformed(void)
{
    fresh_runtime();
    const struct piece status[] = {P("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n")};
    expect_failure(status, 1, "malformed status line", true, NULL);
    const struct piece not_http[] = {P("SSH-2.0-OpenSSH_9.2")};
    expect_failure(not_http, 1, "not an HTTP/1.x response", true, NULL);
    const struct piece bare_lf[] = {P("HTTP/1.1 200 OK\nContent-Length: 0\n\n")};
    expect_failure(bare_lf, 1, "CRLF", true, NULL);
    const struct piece two_lengths[] = {
        P("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok")};
    expect_failure(two_lengths, 1, "Content-Length", true, NULL);
    const struct piece chunk[] = {P("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
                                  P("zz\r\n")};
    expect_failure(chunk, 2, "chunk size expected", true, NULL);
    const struct piece no_crlf[] = {
        P("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX")};
    expect_failure(no_crlf, 1, "CRLF", true, NULL);
    drop_runtime();
}

static void test_head_too_large(void)
{
    fresh_runtime();
    static char big[80 * 1024];
    size_t n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nX-Big: ");
    memset(big + n, 'a', sizeof big - n);
    const struct piece pieces[] = {{big, sizeof big, false}};
    expect_failure(pieces, 1, "too large", true, NULL);
    /* The same in many pieces, none with a line end. */
    struct piece many[80];
    for (size_t i = 0; i < 80; i++)
        many[i] = (struct piece){big + i * 1024, 1024, false};
    expect_failure(many, 80, "too large", true, NULL);
    drop_runtime();
}

static void test_error_status_is_collected(void)
{
    fresh_runtime();
    struct chttp h;
    struct got g = {0};
    const struct piece pieces[] = {
        P("HTTP/1.1 404 Not Found\r\nContent-Length: 14\r\n\r\n{\"error\":\"no\"}")};
    CHECK_EQ_INT(exchange(&h, NULL, pieces, 1, "POST", "/v1/exec", "{}", &g), 0);
    CHECK_EQ_INT(h.status, 404);
    CHECK(!chttp_ok(&h));
    CHECK_EQ_INT(g.pieces, 0);
    CHECK(strcmp(h.body, "{\"error\":\"no\"}") == 0);
    chttp_close(&h);
    drop_runtime();
}

static void test_sink_stops(void)
{
    fresh_runtime();
    struct chttp h;
    struct got g = {.stop_after = 1};
    const struct piece pieces[] = {
        P("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n"),
        P("2\r\ncd\r\n0\r\n\r\n")};
    CHECK_EQ_INT(exchange(&h, NULL, pieces, 2, "POST", "/v1/exec", "{}", &g), -1);
    CHECK(h.sink_stopped);
    CHECK_EQ_INT(g.pieces, 1);
    ndjson_lines_free(&g.lines);
    chttp_close(&h);
    drop_runtime();
}

/* A streamed body that stops coming (a followed log) is given up at body_deadline_ms, as a
 * sink stopping it would be; what came before was delivered. */
static void test_body_deadline(void)
{
    fresh_runtime();
    CHECK_EQ_INT(pipe(ack_pipe), 0);
    struct chttp h;
    struct got g = {0};
    const struct piece pieces[] = {
        P("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n"),
        {"0\r\n\r\n", 5, true}, /* only once the client gave up: never in time */
    };
    CHECK_EQ_INT(chttp_open(&h, "test", NAME, false), 0);
    pid_t pid = serve(NULL, pieces, 2);
    uint64_t t0 = clock_mono_ms();
    h.body_deadline_ms = t0 + 200;
    int rc = chttp_request(&h, "GET", "/v1/jobs/3/log?follow=1", NULL, 0, sink, &g);
    CHECK_EQ_INT(rc, -1);
    CHECK(h.timed_out && h.sink_stopped);
    CHECK(clock_mono_ms() >= t0 + 200);
    CHECK_EQ_INT(g.len, 2);
    CHECK(memcmp(g.bytes, "ab", 2) == 0);
    CHECK_EQ_INT(write(ack_pipe[1], "k", 1), 1);
    reap(pid);
    close(ack_pipe[0]);
    close(ack_pipe[1]);
    ndjson_lines_free(&g.lines);
    chttp_close(&h);
    drop_runtime();
}

static void test_missing_and_stale(void)
{
    fresh_runtime();
    struct chttp h;
    /* No socket: missing, nothing sent. */
    CHECK_EQ_INT(chttp_open(&h, "test", NAME, true), 0);
    CHECK_EQ_INT(chttp_request(&h, "GET", "/v1/session", NULL, 0, NULL, NULL), -1);
    CHECK(h.missing);
    CHECK_EQ_INT(h.connect_errno, ENOENT);
    CHECK_EQ_INT(chttp_lost(&h), CORDON_EXIT_SETUP); /* quiet: prints nothing */
    chttp_close(&h);
    /* A socket nobody listens on (a controller that died): refused, then removed. */
    int l = bind_listener();
    close(l);
    struct stat st;
    CHECK_EQ_INT(lstat(sock_path, &st), 0);
    CHECK_EQ_INT(chttp_open(&h, "test", NAME, false), 0);
    CHECK_EQ_INT(chttp_request(&h, "POST", "/v1/exec", "{}", 2, NULL, NULL), -1);
    CHECK(h.missing);
    CHECK_EQ_INT(h.connect_errno, ECONNREFUSED);
    CHECK(lstat(sock_path, &st) < 0 && errno == ENOENT);
    chttp_close(&h);
    /* A path that would break the request line is refused before any connect. */
    CHECK_EQ_INT(chttp_open(&h, "test", NAME, false), 0);
    CHECK_EQ_INT(chttp_request(&h, "GET", "/v1/jobs HTTP/1.0\r\nX: y", NULL, 0, NULL, NULL), -1);
    CHECK(!h.missing);
    CHECK_EQ_INT(h.connect_errno, 0);
    CHECK_STR_CONTAINS(h.failure, "cannot send the request");
    chttp_close(&h);
    drop_runtime();
}

static void test_escape(void)
{
    char *e = chttp_escape("turn-7_a.b~c");
    CHECK(strcmp(e, "turn-7_a.b~c") == 0);
    free(e);
    e = chttp_escape("a b/c?%\xc3\xa9");
    CHECK(strcmp(e, "a%20b%2Fc%3F%25%C3%A9") == 0);
    free(e);
    e = chttp_escape("");
    CHECK(strcmp(e, "") == 0);
    free(e);
}

TEST_MAIN({"content_length", test_content_length},
          {"chunked_every_split", test_chunked_every_split},
          {"chunked_awkward_pieces", test_chunked_awkward_pieces},
          {"events_arrive_as_sent", test_events_arrive_as_sent}, {"until_close", test_until_close},
          {"interim_answer", test_interim_answer}, {"truncated", test_truncated},
          {"malformed", test_malformed}, {"head_too_large", test_head_too_large},
          {"error_status_is_collected", test_error_status_is_collected},
          {"sink_stops", test_sink_stops}, {"body_deadline", test_body_deadline},
          {"missing_and_stale", test_missing_and_stale}, {"escape", test_escape})
