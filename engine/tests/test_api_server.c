/* test_api_server.c — the control API's HTTP server (api_server.h) on a real Unix socket: the
 * test drives the event loop while a forked client speaks raw HTTP/1.1 to it. Covers complete
 * answers given inside the handler and later from a timer, streams (chunked; one ended between
 * rounds goes out whole in the next after_round), keep-alive and
 * pipelining, HEAD, requests MHD refuses itself, bodies at and over 1 MiB, clients that leave
 * mid-stream, stopping with requests in flight, start-up failures, and the peer checks: (as
 * root) another uid; a client in another user namespace; one that connected from another user
 * namespace and exited, its connection kept by a child, its pid then given (as root, clone3's
 * set_tid) to a host process before the server looks at the connection. The binary runs twice
 * under ctest: as is, and with the fallback for kernels without SO_PEERPIDFD forced. After each test no fd of the server's is left open. Every wait is bounded: the loop
 * runs for a fixed budget, the client has its own alarm() and socket timeouts, and the harness
 * kills the whole test after its deadline. Under ASan the test checks for leaks itself, since
 * the harness ends each test with _exit. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include "session/api_server.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "test.h"

/* ---- the server side: a handler with a few behaviours picked by path ---- */

struct tstate {
    struct ev_loop loop;
    struct api_server *srv;
    int handled;                 /* handler calls */
    int gone;                    /* on_gone calls */
    struct api_request *pending; /* /deferred */
    struct ev_timer t_pending;
    struct api_request *never;  /* /never: held, never answered */
    struct api_request *stream; /* /stream, /forever, /quiet */
    int stream_n, stream_max, stream_every_ms;
    struct ev_timer t_stream;
};

static struct tstate st;

static void on_gone(void *ctx, struct api_request *req)
{
    struct tstate *t = ctx;
    t->gone++;
    if (req == t->pending) {
        t->pending = NULL;
        ev_timer_stop(&t->loop, &t->t_pending);
    }
    if (req == t->never)
        t->never = NULL;
    if (req == t->stream) {
        t->stream = NULL;
        ev_timer_stop(&t->loop, &t->t_stream);
    }
}

static void answer_pending(struct ev_loop *loop, struct ev_timer *tm)
{
    struct tstate *t = tm->data;
    (void)loop;
    CHECK(t->pending != NULL);
    api_respond(t->pending, 200, "text/plain", "deferred\n", 9);
    t->pending = NULL;
}

static void stream_tick(struct ev_loop *loop, struct ev_timer *tm)
{
    struct tstate *t = tm->data;
    char line[32];
    CHECK(t->stream != NULL);
    int n = snprintf(line, sizeof line, "line %d\n", t->stream_n++);
    size_t before = api_stream_pending(t->stream);
    if (t->stream_max < 100) /* a reading client: MHD took the last write rounds ago */
        CHECK_EQ_INT(before, 0);
    api_stream_write(t->stream, line, (size_t)n);
    CHECK_EQ_INT(api_stream_pending(t->stream), before + (size_t)n);
    if (t->stream_n > t->stream_max) {
        api_stream_end(t->stream);
        t->stream = NULL;
        return;
    }
    ev_timer_start(loop, &t->t_stream, (uint64_t)t->stream_every_ms, stream_tick, t);
}

static void start_stream(struct tstate *t, struct api_request *req, int max, int every_ms)
{
    CHECK(t->stream == NULL);
    api_stream_begin(req, "application/x-ndjson");
    api_on_gone(req, on_gone, t);
    t->stream = req;
    t->stream_n = 0;
    t->stream_max = max;
    t->stream_every_ms = every_ms;
    if (max > 0) {
        api_stream_write(req, "line 0\n", 7); /* some bytes before the handler returns */
        t->stream_n = 1;
        ev_timer_start(&t->loop, &t->t_stream, (uint64_t)every_ms, stream_tick, t);
    }
}

static void handler(void *ctx, struct api_request *req)
{
    struct tstate *t = ctx;
    const char *path = api_path(req);
    t->handled++;
    if (strcmp(path, "/sync") == 0) {
        size_t blen = 0;
        const char *body = api_body(req, &blen);
        const char *x = api_query(req, "x");
        CHECK(api_query(req, "absent") == NULL);
        CHECK(body[blen] == '\0');
        char out[512];
        int n = snprintf(out, sizeof out,
                         "{\"method\":\"%s\",\"path\":\"%s\",\"x\":\"%s\",\"body\":\"%.100s\"}",
                         api_method(req), path, x ? x : "(none)", body);
        api_respond(req, 200, NULL, out, (size_t)n);
    } else if (strcmp(path, "/len") == 0) {
        size_t blen = 0;
        const char *body = api_body(req, &blen);
        bool all_x = true;
        for (size_t i = 0; i < blen; i++)
            all_x = all_x && body[i] == 'x';
        char out[64];
        int n =
            snprintf(out, sizeof out, "{\"len\":%zu,\"all_x\":%s}", blen, all_x ? "true" : "false");
        api_respond(req, 200, NULL, out, (size_t)n);
    } else if (strcmp(path, "/error") == 0) {
        api_respond_error(req, 404, "no \"%s\" here\\\n\t%c", "such", 1);
    } else if (strcmp(path, "/deferred") == 0) {
        CHECK(t->pending == NULL);
        t->pending = req;
        api_on_gone(req, on_gone, t);
        ev_timer_start(&t->loop, &t->t_pending, 50, answer_pending, t);
    } else if (strcmp(path, "/never") == 0) {
        CHECK(t->never == NULL);
        t->never = req;
        api_on_gone(req, on_gone, t);
    } else if (strcmp(path, "/stream") == 0) {
        start_stream(t, req, 5, 20);
    } else if (strcmp(path, "/forever") == 0) {
        start_stream(t, req, 1000000, 10);
    } else if (strcmp(path, "/quiet") == 0) {
        start_stream(t, req, 0, 0);
    } else if (strcmp(path, "/stream-sync") == 0) {
        api_stream_begin(req, "text/plain");
        api_stream_write(req, "a", 1);
        api_stream_write(req, "bc", 2);
        api_stream_end(req);
    } else {
        api_respond_error(req, 404, "unknown path %s", path);
    }
}

static char dir[256], sock_path[300];
static int fds_before;

static int count_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

static int listen_unix(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    CHECK(strlen(path) < sizeof a.sun_path);
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(fd, 16) == 0);
    return fd;
}

static void setup(void)
{
    fds_before = count_fds();
    if (getenv("API_TEST_DEBUG"))
        log_set_level(LOG_DEBUG);
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/apisrv.XXXXXX", base && *base ? base : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(sock_path, sizeof sock_path, "%s/t.sock", dir);
    CHECK(ev_loop_init(&st.loop) == 0);
    char err[256] = "";
    st.srv = api_server_start(&st.loop, listen_unix(sock_path), handler, &st, err, sizeof err);
    if (!st.srv)
        fprintf(stderr, "  api_server_start: %s\n", err);
    CHECK(st.srv != NULL);
}

static void teardown(void)
{
    api_server_stop(st.srv);
    st.srv = NULL;
    ev_loop_close(&st.loop);
    unlink(sock_path);
    rmdir(dir);
    CHECK_EQ_INT(count_fds(), fds_before); /* the server closed everything it had */
}

/* One loop round the way the controller runs it. */
static void round_once(int timeout_ms)
{
    CHECK(ev_run_once(&st.loop, timeout_ms) >= 0);
    api_server_after_round(st.srv);
}

/* Run the loop until the client exits; its exit status must be 0. */
static void drive_until_exit(pid_t pid)
{
    uint64_t end = clock_mono_ms() + 8000;
    int status;
    for (;;) {
        round_once(10);
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (clock_mono_ms() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fprintf(stderr, "  client did not finish in time\n");
            CHECK(0);
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "  client failed (status 0x%x)\n", status);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void drive_ms(int ms)
{
    uint64_t end = clock_mono_ms() + (uint64_t)ms;
    while (clock_mono_ms() < end)
        round_once(5);
}

/* ---- the client side (runs in a forked child; CHECK failures end it with 1) ---- */

struct client {
    int fd;
    bool head; /* the next response answers a HEAD: no body follows */
    char buf[8192];
    size_t len;
};

struct http_resp {
    int status;
    char head[4096]; /* status line and headers, lower-cased, NUL-terminated */
    bool chunked;
    char *body;
    size_t body_len;
    bool eof; /* the server closed the connection after it */
};

static int connect_to(const char *path, bool abstract)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    socklen_t alen = sizeof a;
    if (abstract) {
        size_t n = strlen(path);
        memcpy(a.sun_path + 1, path, n);
        alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    } else {
        strcpy(a.sun_path, path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, alen) < 0) {
        fprintf(stderr, "  connect %s: %s\n", path, strerror(errno));
        CHECK(0);
    }
    return fd;
}

/* Write all of it; false when the server closed (EPIPE/ECONNRESET). */
static bool send_all(int fd, const char *p, size_t n)
{
    int rc = write_all(fd, p, n);
    if (rc == -EPIPE || rc == -ECONNRESET)
        return false;
    if (rc < 0)
        fprintf(stderr, "  write: %s\n", strerror(-rc));
    CHECK(rc == 0);
    return true;
}

static void send_str(struct client *c, const char *s)
{
    CHECK(send_all(c->fd, s, strlen(s)));
}

/* Read more into the buffer; 0 at EOF (a reset after the server's response counts as EOF:
 * closing with our unread request bytes in its queue makes the kernel report ECONNRESET). */
static size_t fill(struct client *c)
{
    CHECK(c->len < sizeof c->buf);
    ssize_t n;
    RETRY_EINTR(n, read(c->fd, c->buf + c->len, sizeof c->buf - c->len));
    if (n < 0 && errno == ECONNRESET)
        return 0;
    if (n < 0)
        fprintf(stderr, "  read: %s\n", strerror(errno));
    CHECK(n >= 0);
    c->len += (size_t)n;
    return (size_t)n;
}

static void consume(struct client *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
}

/* One CRLF-terminated line into out (without the CRLF). */
static void read_line(struct client *c, char *out, size_t max)
{
    char *e;
    while (!(e = memmem(c->buf, c->len, "\r\n", 2)))
        CHECK(fill(c) > 0);
    size_t n = (size_t)(e - c->buf);
    CHECK(n < max);
    memcpy(out, c->buf, n);
    out[n] = '\0';
    consume(c, n + 2);
}

static void body_add(struct http_resp *r, const char *p, size_t n)
{
    r->body = realloc(r->body, r->body_len + n + 1);
    CHECK(r->body != NULL);
    memcpy(r->body + r->body_len, p, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
}

static void read_n(struct client *c, struct http_resp *r, size_t n)
{
    while (n) {
        if (!c->len)
            CHECK(fill(c) > 0);
        size_t k = c->len < n ? c->len : n;
        body_add(r, c->buf, k);
        consume(c, k);
        n -= k;
    }
}

static void read_response(struct client *c, struct http_resp *r)
{
    memset(r, 0, sizeof *r);
    body_add(r, "", 0);
    char line[1024];
    read_line(c, line, sizeof line);
    CHECK(strncmp(line, "HTTP/1.", 7) == 0);
    r->status = atoi(line + 9);
    long long clen = -1;
    size_t hl = 0;
    for (;;) {
        read_line(c, line, sizeof line);
        if (!line[0])
            break;
        for (char *p = line; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        size_t n = strlen(line);
        CHECK(hl + n + 2 < sizeof r->head);
        memcpy(r->head + hl, line, n);
        memcpy(r->head + hl + n, "\n", 2);
        hl += n + 1;
        if (strncmp(line, "content-length:", 15) == 0)
            clen = atoll(line + 15);
        if (strncmp(line, "transfer-encoding:", 18) == 0 && strstr(line, "chunked"))
            r->chunked = true;
    }
    if (c->head) {
        c->head = false;
    } else if (r->chunked) {
        for (;;) {
            read_line(c, line, sizeof line);
            size_t n = strtoul(line, NULL, 16);
            if (!n)
                break;
            read_n(c, r, n);
            read_line(c, line, sizeof line);
            CHECK(line[0] == '\0');
        }
        do /* trailer */
            read_line(c, line, sizeof line);
        while (line[0]);
    } else if (clen >= 0) {
        read_n(c, r, (size_t)clen);
    } else {
        while (c->len || fill(c)) {
            body_add(r, c->buf, c->len);
            c->len = 0;
        }
        r->eof = true;
    }
}

static void expect_eof(struct client *c)
{
    CHECK(c->len == 0);
    CHECK(fill(c) == 0);
}

static void client_begin(struct client *c)
{
    alarm(10);
    signal(SIGPIPE, SIG_IGN);
    memset(c, 0, sizeof *c);
    c->fd = connect_to(sock_path, false);
}

/* Fork a client running fn; drive the loop until it is done. */
static void run_client(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    drive_until_exit(pid);
}

static void get(struct client *c, const char *path, struct http_resp *r)
{
    char req[512];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: cordon\r\n\r\n", path);
    send_str(c, req);
    read_response(c, r);
}

/* ---- tests ---- */

static void client_sync(void)
{
    struct client c;
    struct http_resp r;
    client_begin(&c);
    get(&c, "/sync?x=a%20b&y=2", &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK_STR_CONTAINS(r.head, "content-type: application/json");
    CHECK_STR_CONTAINS(r.body, "\"method\":\"GET\",\"path\":\"/sync\",\"x\":\"a b\",\"body\":\"\"");
    send_str(&c,
             "POST /sync HTTP/1.1\r\nHost: cordon\r\nContent-Length: 11\r\n\r\n{\"a\":\"b c\"}");
    read_response(&c, &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK_STR_CONTAINS(
        r.body,
        "\"method\":\"POST\",\"path\":\"/sync\",\"x\":\"(none)\",\"body\":\"{\"a\":\"b c\"}\"");
    /* A chunked request body. */
    send_str(&c, "POST /sync HTTP/1.1\r\nHost: cordon\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
    read_response(&c, &r);
    CHECK_STR_CONTAINS(r.body, "\"body\":\"abcde\"");
    get(&c, "/s%79nc?x=%2F", &r); /* the path comes decoded, as the query values do */
    CHECK_EQ_INT(r.status, 200);
    CHECK_STR_CONTAINS(r.body, "\"path\":\"/sync\",\"x\":\"/\"");
    get(&c, "/error", &r);
    CHECK_EQ_INT(r.status, 404);
    CHECK_STR_CONTAINS(r.head, "content-type: application/json");
    CHECK(strcmp(r.body, "{\"error\":\"no \\\"such\\\" here\\\\\\n\\t\\u0001\"}") == 0);
    get(&c, "/nope", &r);
    CHECK_EQ_INT(r.status, 404);
    CHECK(strcmp(r.body, "{\"error\":\"unknown path /nope\"}") == 0);
    free(r.body);
}

static void test_sync_response(void)
{
    setup();
    run_client(client_sync);
    CHECK_EQ_INT(st.handled, 6);
    CHECK_EQ_INT(st.gone, 0);
    teardown();
}

static void client_deferred(void)
{
    struct client c;
    struct http_resp r;
    client_begin(&c);
    get(&c, "/deferred", &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK_STR_CONTAINS(r.head, "content-type: text/plain");
    CHECK(strcmp(r.body, "deferred\n") == 0);
    free(r.body);
}

static void test_deferred_response(void)
{
    setup();
    uint64_t t0 = clock_mono_ms();
    run_client(client_deferred);
    CHECK(clock_mono_ms() - t0 >= 50);
    CHECK_EQ_INT(st.handled, 1);
    CHECK(st.pending == NULL);
    CHECK_EQ_INT(st.gone, 0);
    teardown();
}

static void client_stream(void)
{
    struct client c;
    struct http_resp r;
    client_begin(&c);
    get(&c, "/stream", &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK(r.chunked);
    CHECK_STR_CONTAINS(r.head, "content-type: application/x-ndjson");
    CHECK(strcmp(r.body, "line 0\nline 1\nline 2\nline 3\nline 4\nline 5\n") == 0);
    get(&c, "/stream-sync", &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK(strcmp(r.body, "abc") == 0);
    free(r.body);
}

static void test_streamed_response(void)
{
    setup();
    uint64_t t0 = clock_mono_ms();
    run_client(client_stream);
    CHECK(clock_mono_ms() - t0 >= 100); /* five writes 20 ms apart */
    CHECK_EQ_INT(st.handled, 2);
    CHECK_EQ_INT(st.gone, 0);
    teardown();
}

static void client_keepalive(void)
{
    struct client c;
    struct http_resp r;
    client_begin(&c);
    for (int i = 0; i < 2; i++) {
        get(&c, "/sync", &r);
        CHECK_EQ_INT(r.status, 200);
        CHECK(!strstr(r.head, "connection: close"));
        get(&c, "/deferred", &r);
        CHECK(strcmp(r.body, "deferred\n") == 0);
        get(&c, "/stream", &r);
        CHECK(strcmp(r.body, "line 0\nline 1\nline 2\nline 3\nline 4\nline 5\n") == 0);
    }
    /* Two requests in one write (pipelined). */
    send_str(
        &c,
        "GET /sync?x=1 HTTP/1.1\r\nHost: cordon\r\n\r\nGET /sync?x=2 HTTP/1.1\r\nHost: cordon\r\n\r\n");
    read_response(&c, &r);
    CHECK_STR_CONTAINS(r.body, "\"x\":\"1\"");
    read_response(&c, &r);
    CHECK_STR_CONTAINS(r.body, "\"x\":\"2\"");
    /* The client asks to close: the server answers, then closes. */
    send_str(&c, "GET /sync HTTP/1.1\r\nHost: cordon\r\nConnection: close\r\n\r\n");
    read_response(&c, &r);
    CHECK_EQ_INT(r.status, 200);
    expect_eof(&c);
    free(r.body);
}

static void test_keepalive(void)
{
    setup();
    run_client(client_keepalive);
    CHECK_EQ_INT(st.handled, 9);
    CHECK_EQ_INT(st.gone, 0);
    teardown();
}

static void client_head(void)
{
    struct client c;
    struct http_resp r;
    client_begin(&c);
    c.head = true;
    send_str(&c, "HEAD /sync HTTP/1.1\r\nHost: cordon\r\n\r\n");
    read_response(&c, &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK_EQ_INT(r.body_len, 0);
    c.head = true;
    send_str(&c, "HEAD /stream HTTP/1.1\r\nHost: cordon\r\n\r\n");
    read_response(&c, &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK_EQ_INT(r.body_len, 0);
    get(&c, "/stream", &r); /* the same connection goes on */
    CHECK(strcmp(r.body, "line 0\nline 1\nline 2\nline 3\nline 4\nline 5\n") == 0);
    free(r.body);
}

/* HEAD: MHD sends no body, so a stream is never read to its end; the handler must still hear
 * that the request is over (else it would write to a freed request). */
static void test_head_request(void)
{
    setup();
    run_client(client_head);
    CHECK_EQ_INT(st.handled, 3);
    CHECK_EQ_INT(st.gone, 1);
    CHECK(st.stream == NULL);
    teardown();
}

static void client_malformed(void)
{
    /* MHD answers each of these with 400 itself. */
    static const char *bad[] = {
        "GET /\r\n\r\n",                                     /* no version */
        "GET / HTTQ/1.1\r\nHost: cordon\r\n\r\n",            /* bad version */
        "GET / HTTP/1.1 x\r\nHost: cordon\r\n\r\n",          /* four words */
        "GET / HTTP/1.1\r\nHost: cordon\r\nNoColon\r\n\r\n", /* bad header line */
        "POST / HTTP/1.1\r\nHost: cordon\r\nContent-Length: abc\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: cordon\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        /* MHD 0.9.75 closes on a request line without a space, without a word: either is a
         * refusal, as long as nothing reaches the handler. */
        "GET\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct client c;
        struct http_resp r;
        client_begin(&c);
        send_str(&c, bad[i]);
        if (!strchr(bad[i], ' ')) {
            while (fill(&c))
                ;
            if (!c.len) { /* closed without an answer */
                close(c.fd);
                continue;
            }
        }
        read_response(&c, &r);
        if (r.status != 400)
            fprintf(stderr, "  request %zu: status %d\n", i, r.status);
        CHECK_EQ_INT(r.status, 400);
        free(r.body);
        close(c.fd);
    }
    /* Still serving. */
    client_sync();
}

static void test_malformed_request(void)
{
    setup();
    run_client(client_malformed);
    CHECK_EQ_INT(st.handled, 6); /* only client_sync's requests reached the handler */
    teardown();
}

static void send_body_request(struct client *c, const char *head, size_t body_len, bool chunked)
{
    static char block[65536];
    memset(block, 'x', sizeof block);
    if (!send_all(c->fd, head, strlen(head)))
        return;
    while (body_len) {
        size_t n = body_len < sizeof block ? body_len : sizeof block;
        char size_line[32];
        if (chunked) {
            snprintf(size_line, sizeof size_line, "%zx\r\n", n);
            if (!send_all(c->fd, size_line, strlen(size_line)))
                return;
        }
        if (!send_all(c->fd, block, n) || (chunked && !send_all(c->fd, "\r\n", 2)))
            return; /* the server answered early and closed */
        body_len -= n;
    }
    if (chunked)
        (void)send_all(c->fd, "0\r\n\r\n", 5);
}

static void client_large(void)
{
    struct client c;
    struct http_resp r;
    char head[256];
    const size_t mib = 1024 * 1024;

    /* Exactly 1 MiB is accepted. */
    client_begin(&c);
    snprintf(head, sizeof head, "POST /len HTTP/1.1\r\nHost: cordon\r\nContent-Length: %zu\r\n\r\n",
             mib);
    send_body_request(&c, head, mib, false);
    read_response(&c, &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK(strcmp(r.body, "{\"len\":1048576,\"all_x\":true}") == 0);
    free(r.body);
    close(c.fd);

    /* One byte more, declared: refused from the headers alone. */
    client_begin(&c);
    snprintf(head, sizeof head, "POST /len HTTP/1.1\r\nHost: cordon\r\nContent-Length: %zu\r\n\r\n",
             mib + 1);
    send_body_request(&c, head, mib + 1, false);
    read_response(&c, &r);
    CHECK_EQ_INT(r.status, 413);
    CHECK_STR_CONTAINS(r.head, "content-type: application/json");
    CHECK_STR_CONTAINS(r.body, "{\"error\":\"");
    free(r.body);
    close(c.fd);

    /* Declared, with Expect: 100-continue: refused without the body ever being sent. */
    client_begin(&c);
    snprintf(head, sizeof head,
             "POST /len HTTP/1.1\r\nHost: cordon\r\nContent-Length: %zu\r\n"
             "Expect: 100-continue\r\n\r\n",
             5 * mib);
    send_str(&c, head);
    read_response(&c, &r);
    CHECK_EQ_INT(r.status, 413);
    free(r.body);
    close(c.fd);

    /* Chunked, so only counting finds it: the body is read and dropped, then 413. */
    client_begin(&c);
    send_body_request(&c,
                      "POST /len HTTP/1.1\r\nHost: cordon\r\nTransfer-Encoding: chunked\r\n\r\n",
                      mib + 70000, true);
    read_response(&c, &r);
    CHECK_EQ_INT(r.status, 413);
    CHECK_STR_CONTAINS(r.body, "larger than 1 MiB");
    free(r.body);
    close(c.fd);

    client_sync(); /* still serving */
}

static void test_body_limit(void)
{
    setup();
    run_client(client_large);
    CHECK_EQ_INT(st.handled, 1 + 6);
    teardown();
}

static void client_leaves_mid_stream(void)
{
    struct client c;
    client_begin(&c);
    send_str(&c, "GET /forever HTTP/1.1\r\nHost: cordon\r\n\r\n");
    while (!memmem(c.buf, c.len, "line 2\n", 7))
        CHECK(fill(&c) > 0);
    close(c.fd);
}

static void test_client_gone_mid_stream(void)
{
    setup();
    run_client(client_leaves_mid_stream);
    uint64_t end = clock_mono_ms() + 3000;
    while (st.gone == 0 && clock_mono_ms() < end)
        round_once(10);
    CHECK_EQ_INT(st.gone, 1);
    CHECK(st.stream == NULL);
    drive_ms(100);
    CHECK_EQ_INT(st.gone, 1);
    run_client(client_sync);
    CHECK_EQ_INT(st.gone, 1);
    teardown();
    CHECK_EQ_INT(st.gone, 1);
}

/* The client waits for the server to stop under it. */
static void client_waits(void)
{
    struct client c;
    client_begin(&c);
    send_str(&c, "GET /never HTTP/1.1\r\nHost: cordon\r\n\r\n");
    struct client c2;
    memset(&c2, 0, sizeof c2);
    c2.fd = connect_to(sock_path, false);
    send_str(&c2, "GET /quiet HTTP/1.1\r\nHost: cordon\r\n\r\n");
    struct client c3;
    memset(&c3, 0, sizeof c3);
    c3.fd = connect_to(sock_path, false);
    send_str(&c3, "GET /deferred HTTP/1.1\r\nHost: cordon\r\n\r\n");
    struct http_resp r;
    read_response(&c3, &r); /* answered before the stop */
    CHECK_EQ_INT(r.status, 200);
    free(r.body);
    /* /never gets nothing, /quiet at most its headers; both end when the server stops. */
    expect_eof(&c);
    while (fill(&c2))
        c2.len = 0;
}

static void test_stop_with_requests_in_flight(void)
{
    setup();
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        client_waits();
        _exit(0);
    }
    uint64_t end = clock_mono_ms() + 5000;
    while (!(st.handled == 3 && st.never && st.stream && !st.pending) && clock_mono_ms() < end)
        round_once(10);
    CHECK_EQ_INT(st.handled, 3);
    CHECK(st.never && st.stream && !st.pending);
    drive_ms(50); /* the /deferred answer goes out */
    CHECK_EQ_INT(st.gone, 0);
    api_server_stop(st.srv);
    st.srv = NULL;
    CHECK_EQ_INT(st.gone, 2); /* /never and /quiet, not the answered /deferred */
    CHECK(st.never == NULL && st.stream == NULL);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ev_loop_close(&st.loop);
    unlink(sock_path);
    rmdir(dir);
    CHECK_EQ_INT(count_fds(), fds_before); /* the server closed everything it had */
}

static const char abstract_name[] = "cordon-test-api-server-uid";

static void client_other_uid(void)
{
    alarm(10);
    signal(SIGPIPE, SIG_IGN);
    CHECK(setgroups(0, NULL) == 0);
    CHECK(setgid(65534) == 0);
    CHECK(setuid(65534) == 0);
    struct client c;
    memset(&c, 0, sizeof c);
    char name[64];
    snprintf(name, sizeof name, "%s-%d", abstract_name, (int)getppid());
    c.fd = connect_to(name, true);
    struct http_resp r;
    send_str(&c, "POST /sync HTTP/1.1\r\nHost: cordon\r\nContent-Length: 2\r\n\r\n{}");
    read_response(&c, &r);
    CHECK_EQ_INT(r.status, 403);
    CHECK_STR_CONTAINS(r.head, "content-type: application/json");
    CHECK_STR_CONTAINS(r.body, "{\"error\":\"");
    free(r.body);
}

static void test_peer_uid_refused(void)
{
    if (getuid() != 0)
        TEST_SKIP("needs root to connect as another uid");
    /* An abstract socket: no file permissions stand between uid 65534 and the server, so the
     * refusal seen is the server's own. */
    fds_before = count_fds();
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    char name[64];
    snprintf(name, sizeof name, "%s-%d", abstract_name, (int)getpid());
    memcpy(a.sun_path + 1, name, strlen(name));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    CHECK(bind(fd, (struct sockaddr *)&a,
               (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))) == 0);
    CHECK(listen(fd, 4) == 0);
    char err[256];
    CHECK(ev_loop_init(&st.loop) == 0);
    st.srv = api_server_start(&st.loop, fd, handler, &st, err, sizeof err);
    CHECK(st.srv != NULL);
    snprintf(dir, sizeof dir, "/nonexistent"); /* nothing on disk to clean */
    snprintf(sock_path, sizeof sock_path, "/nonexistent/t.sock");
    run_client(client_other_uid);
    CHECK_EQ_INT(st.handled, 0);
    teardown();
}

/* A client in another user namespace (as inside a sandbox): refused, whatever it asks. */
static void client_other_userns(void)
{
    alarm(10);
    signal(SIGPIPE, SIG_IGN);
    if (unshare(CLONE_NEWUSER) < 0) {
        fprintf(stderr, "  unshare(CLONE_NEWUSER): %s\n", strerror(errno));
        _exit(2);
    }
    struct client c;
    memset(&c, 0, sizeof c);
    c.fd = connect_to(sock_path, false);
    struct http_resp r;
    get(&c, "/sync", &r);
    CHECK_EQ_INT(r.status, 403);
    CHECK_STR_CONTAINS(r.body, "not driven from inside a sandbox");
    free(r.body);
}

static void test_peer_other_userns_refused(void)
{
    setup();
    run_client(client_other_userns);
    CHECK_EQ_INT(st.handled, 0);
    teardown();
}

/* The client that connects from another user namespace, hands its connection to a child and
 * exits, so that its pid can be given to a host process before the child sends a request. */
/* A stream ended between rounds (as a session ends an exec's stream when init reports the
 * command's end) goes out whole, through its last chunk, in the one after_round that follows:
 * no further loop round (nor MHD's timer) is needed for the client to have the response. The
 * client is this process: everything it reads was sent before the read. */
static void test_stream_end_same_round(void)
{
    setup();
    struct client c;
    memset(&c, 0, sizeof c);
    c.fd = connect_to(sock_path, false);
    send_str(&c, "GET /quiet HTTP/1.1\r\nHost: cordon\r\n\r\n");
    for (int i = 0; i < 200 && !st.stream; i++)
        round_once(10);
    CHECK(st.stream != NULL);
    for (int i = 0; i < 20; i++) /* the headers go out; MHD settles with the stream dry */
        round_once(1);
    api_stream_write(st.stream, "last\n", 5);
    api_stream_end(st.stream);
    st.stream = NULL;
    api_server_after_round(st.srv);
    ssize_t n;
    while ((n = recv(c.fd, c.buf + c.len, sizeof c.buf - 1 - c.len, MSG_DONTWAIT)) > 0)
        c.len += (size_t)n;
    c.buf[c.len] = '\0';
    CHECK_STR_CONTAINS(c.buf, "HTTP/1.1 200");
    CHECK_STR_CONTAINS(c.buf, "\r\n5\r\nlast\n\r\n0\r\n\r\n");
    CHECK(c.len >= 5 && memcmp(c.buf + c.len - 5, "0\r\n\r\n", 5) == 0);
    close(c.fd);
    drive_ms(50);
    CHECK_EQ_INT(st.gone, 0);
    teardown();
}

static int go_pipe[2], pid_pipe[2];

static void client_exits_keeps_connection(void)
{
    alarm(10);
    signal(SIGPIPE, SIG_IGN);
    if (unshare(CLONE_NEWUSER) < 0) {
        fprintf(stderr, "  unshare(CLONE_NEWUSER): %s\n", strerror(errno));
        _exit(2);
    }
    struct client c;
    memset(&c, 0, sizeof c);
    c.fd = connect_to(sock_path, false);
    pid_t b = fork();
    CHECK(b >= 0);
    if (b == 0) { /* keeps the connection; asks once the connector's pid is a host process's */
        char x;
        CHECK(read(go_pipe[0], &x, 1) == 1);
        struct http_resp r;
        get(&c, "/sync", &r);
        CHECK_EQ_INT(r.status, 403);
        free(r.body);
        _exit(0);
    }
    CHECK(write(pid_pipe[1], &b, sizeof b) == (ssize_t)sizeof b);
}

/* A host process (in our user namespace) with exactly this pid, or -1 (clone3's set_tid needs
 * CAP_SYS_ADMIN, and the pid must be free). It waits to be killed. */
static pid_t host_process_with_pid(pid_t pid)
{
    struct clone_args args = {
        .exit_signal = SIGCHLD, .set_tid = (uint64_t)(uintptr_t)&pid, .set_tid_size = 1};
    long r = syscall(SYS_clone3, &args, sizeof args);
    if (r == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a test that failed before the kill */
        for (;;)
            pause();
    }
    return r < 0 ? -1 : (pid_t)r;
}

static void test_peer_gone_pid_reused_refused(void)
{
    setup();
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0); /* the child comes back to us */
    CHECK(pipe2(go_pipe, O_CLOEXEC) == 0 && pipe2(pid_pipe, O_CLOEXEC) == 0);
    fflush(NULL);
    pid_t a = fork();
    CHECK(a >= 0);
    if (a == 0) {
        client_exits_keeps_connection();
        _exit(0);
    }
    /* The loop is not driven until a has exited and its pid is a host process's: the
     * connection waits in the listener's backlog, so the server checks it only then (with a
     * driven loop it would mostly check a itself, alive, and the reuse would go untested). */
    int status;
    CHECK(waitpid(a, &status, 0) == a && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pid_t b = -1;
    CHECK(read(pid_pipe[0], &b, sizeof b) == (ssize_t)sizeof b);
    pid_t host = host_process_with_pid(a);
    if (host < 0)
        printf("# peer_gone_pid_reused_refused: pid %d not reused (%s); the gone peer is still "
               "checked\n",
               (int)a, strerror(errno));
    else
        CHECK_EQ_INT(host, a);
    CHECK(write(go_pipe[1], "g", 1) == 1);
    drive_until_exit(b);
    if (host > 0) {
        kill(host, SIGKILL);
        waitpid(host, NULL, 0);
    }
    CHECK_EQ_INT(st.handled, 0); /* a host process's pid never made the old peer a host client */
    close(go_pipe[0]), close(go_pipe[1]), close(pid_pipe[0]), close(pid_pipe[1]);
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 0) == 0);
    teardown();
}

static void test_start_failure(void)
{
    struct ev_loop loop;
    CHECK(ev_loop_init(&loop) == 0);
    char err[256] = "";
    /* A socket that does not listen: MHD takes it (it cannot tell); it must stop cleanly. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    struct api_server *s = api_server_start(&loop, fd, handler, &st, err, sizeof err);
    CHECK(s != NULL);
    CHECK(fcntl(fd, F_GETFD) < 0); /* the server owns it: closed (it has its own copy) */
    api_server_stop(s);
    /* Not an fd at all: an error, nothing left behind. */
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    close(fd);
    s = api_server_start(&loop, fd, handler, &st, err, sizeof err);
    CHECK(s == NULL);
    CHECK_STR_CONTAINS(err, "control socket");
    ev_loop_close(&loop);
}

TEST_MAIN({"sync_response", test_sync_response}, {"deferred_response", test_deferred_response},
          {"streamed_response", test_streamed_response},
          {"stream_end_same_round", test_stream_end_same_round}, {"keepalive", test_keepalive},
          {"head_request", test_head_request}, {"malformed_request", test_malformed_request},
          {"body_limit", test_body_limit}, {"client_gone_mid_stream", test_client_gone_mid_stream},
          {"stop_with_requests_in_flight", test_stop_with_requests_in_flight},
          {"peer_uid_refused", test_peer_uid_refused},
          {"peer_other_userns_refused", test_peer_other_userns_refused},
          {"peer_gone_pid_reused_refused", test_peer_gone_pid_reused_refused},
          {"start_failure", test_start_failure})
