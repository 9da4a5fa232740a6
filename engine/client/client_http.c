/* client_http.c — see client_http.h.
 *
 * Why the request is written here: the API is a handful of requests of ours to a server of
 * ours, over a Unix socket, so the whole exchange is one connect, one write and reads parsed by
 * base/http_parse (the proxy's fuzzed parser). `cordon` stays a static binary of libc and our
 * own code, and a `cordon exec` pays for nothing it does not use.
 *
 * One connect per request, and no probe before it: a failed connect has sent nothing, so
 * ENOENT / ECONNREFUSED mean exactly "no session" / "a stale one" without a second
 * connection. The connection is closed when the answer is complete (no keep-alive: every
 * command makes one request per connection). */
#include "client/client_http.h"
#include "client/client_record.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/http_parse.h"
#include "base/log.h"
#include "base/util.h"

/* The largest head http_parse_response accepts: the read buffer holds a whole head. */
#define CHTTP_HEAD_MAX (64 * 1024)
/* A collected (non-streamed) body: far beyond any answer of the API; more fails closed. */
#define CHTTP_BODY_MAX ((size_t)64 << 20)
#define CHTTP_PATH_MAX 2048

static int fail(struct chttp *h, bool malformed, const char *fmt, ...) CORDON_PRINTF(3, 4);

static int fail(struct chttp *h, bool malformed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->failure, sizeof h->failure, fmt, ap);
    va_end(ap);
    h->malformed = malformed;
    return -1;
}

static void body_append(struct chttp *h, const char *data, size_t len)
{
    if (h->body_len + len + 1 > h->body_cap) {
        size_t cap = h->body_cap ? h->body_cap : 1024;
        while (cap < h->body_len + len + 1)
            cap *= 2;
        h->body = xrealloc(h->body, cap);
        h->body_cap = cap;
    }
    memcpy(h->body + h->body_len, data, len);
    h->body_len += len;
    h->body[h->body_len] = '\0';
}

/* Body bytes, to the sink (a 2xx answer with one) or to h->body. 0, or -1 (stopped, too big). */
static int deliver(struct chttp *h, const char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (h->sink && chttp_ok(h)) {
        if (h->sink(h->sink_ctx, p, n) < 0) {
            h->sink_stopped = true;
            return -1;
        }
        return 0;
    }
    if (n > CHTTP_BODY_MAX - h->body_len)
        return fail(h, true, "a body over %zu MiB", CHTTP_BODY_MAX >> 20);
    body_append(h, p, n);
    return 0;
}

struct body_reader {
    enum http_body kind;
    uint64_t left; /* HTTP_BODY_CONTENT_LENGTH: bytes still to come */
    struct http_chunked chunked;
};

/* The next n bytes after the head. 1 when the body is complete (bytes after it are ignored:
 * the connection is not reused), 0 to read on, -1 on failure. */
static int body_feed(struct chttp *h, struct body_reader *b, const char *p, size_t n)
{
    switch (b->kind) {
    case HTTP_BODY_NONE:
        return 1;
    case HTTP_BODY_CONTENT_LENGTH: {
        size_t take = (uint64_t)n < b->left ? n : (size_t)b->left;
        if (deliver(h, p, take) < 0)
            return -1;
        b->left -= take;
        return b->left == 0;
    }
    case HTTP_BODY_UNTIL_CLOSE:
        return deliver(h, p, n) < 0 ? -1 : 0;
    case HTTP_BODY_CHUNKED:
        while (n > 0) {
            /* A run of data goes to the sink as one piece, as soon as it is here (the exec
             * stream's events are printed as they happen); framing bytes are fed one at a
             * time so that the parser says where the next run starts. */
            uint64_t data = http_chunked_data_left(&b->chunked);
            size_t take = data == 0 ? 1 : ((uint64_t)n < data ? n : (size_t)data), used = 0;
            enum http_chunked_result r = http_chunked_feed(&b->chunked, p, take, &used);
            if (r == HTTP_CHUNKED_ERROR)
                return fail(h, true, "%s", b->chunked.error);
            if (data > 0 && deliver(h, p, take) < 0)
                return -1;
            if (r == HTTP_CHUNKED_DONE)
                return 1;
            p += used;
            n -= used;
        }
        return 0;
    }
    return fail(h, true, "a body of unknown framing");
}

static ssize_t read_some(int fd, char *buf, size_t cap)
{
    for (;;) {
        ssize_t n = read(fd, buf, cap);
        if (n >= 0 || errno != EINTR)
            return n < 0 ? -errno : n;
    }
}

/* Until h->body_deadline_ms: true when h->fd is readable (or failed: read tells), false
 * when the time is up. */
static bool wait_readable(const struct chttp *h)
{
    for (;;) {
        unsigned long long now = clock_mono_ms();
        if (now >= h->body_deadline_ms)
            return false;
        struct pollfd p = {.fd = h->fd, .events = POLLIN};
        unsigned long long left = h->body_deadline_ms - now;
        int r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
        if (r > 0 || (r < 0 && errno != EINTR))
            return true;
    }
}

/* 0 connected (h->fd), or -1 with h->missing / h->connect_errno set. */
static int connect_session(struct chttp *h)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t n = strlen(h->path);
    if (n >= sizeof addr.sun_path) { /* chttp_open checked it: defensive */
        h->connect_errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(addr.sun_path, h->path, n + 1);
    h->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (h->fd < 0) {
        h->connect_errno = errno;
        return -1;
    }
    if (connect(h->fd, (struct sockaddr *)&addr, sizeof addr) == 0)
        return 0;
    h->connect_errno = errno;
    close(h->fd);
    h->fd = -1;
    if (h->connect_errno == ECONNREFUSED)
        csock_remove_stale(h->path);
    h->missing = h->connect_errno == ENOENT || h->connect_errno == ECONNREFUSED;
    return -1;
}

static bool path_ok(const char *path)
{
    size_t n = strlen(path);
    if (n == 0 || n > CHTTP_PATH_MAX || path[0] != '/')
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)path[i] <= 0x20 || (unsigned char)path[i] >= 0x7f)
            return false;
    return true;
}

/* The request: line, Host, the body's type and length for a POST, the blank line, the body. */
static char *build_request(const char *method, const char *path, const char *body, size_t body_len,
                           size_t *len)
{
    bool post = strcmp(method, "POST") == 0;
    char head[CHTTP_PATH_MAX + 256];
    int n;
    if (post)
        n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.1\r\nHost: cordon\r\n%sContent-Length: %zu\r\n\r\n", path,
                     body ? "Content-Type: application/json\r\n" : "", body ? body_len : 0);
    else
        n = snprintf(head, sizeof head, "%s %s HTTP/1.1\r\nHost: cordon\r\n\r\n", method, path);
    if (n < 0 || (size_t)n >= sizeof head)
        return NULL;
    size_t extra = post && body ? body_len : 0;
    char *req = xmalloc((size_t)n + extra);
    memcpy(req, head, (size_t)n);
    if (extra)
        memcpy(req + n, body, extra);
    *len = (size_t)n + extra;
    return req;
}

/* Read up to the end of the answer's head into buf (CHTTP_HEAD_MAX bytes); *len is what was
 * read, head and the body bytes after it. 0 with *resp set, or -1. */
static int read_head(struct chttp *h, char *buf, size_t *len, int send_err,
                     struct http_response *resp)
{
    size_t have = 0, scanned = 0;
    bool first = true, status_line_seen = false;
    for (;;) {
        ssize_t n = read_some(h->fd, buf + have, CHTTP_HEAD_MAX - have);
        if (n < 0 || (n == 0 && have == 0 && send_err)) {
            if (send_err)
                return fail(h, false, "sending to the session failed: %s", strerror(-send_err));
            return fail(h, false, "receiving from the session failed: %s", strerror((int)-n));
        }
        if (n == 0)
            return fail(h, false,
                        have == 0 ? "the session closed the connection without answering"
                                  : "the session closed the connection in the middle of "
                                    "its answer");
        size_t from = scanned > 3 ? scanned - 3 : 0;
        have += (size_t)n;
        scanned = have;
        /* Parse only when the bytes can have changed the verdict: the first read (a wrong
         * status line is refused at once), the status line's end, the blank line after the
         * head, a full buffer. The parser re-reads from the start, so a head trickling in a
         * byte at a time must not be parsed at every byte. */
        bool line_end = !status_line_seen && memchr(buf + have - n, '\n', (size_t)n);
        bool parse = first || line_end || memmem(buf + from, have - from, "\r\n\r\n", 4) ||
                     have == CHTTP_HEAD_MAX;
        first = false;
        status_line_seen = status_line_seen || line_end;
        while (parse) {
            enum http_parse_result r = http_parse_response(buf, have, false, resp);
            if (r == HTTP_PARSE_ERROR)
                return fail(h, true, "%s", resp->error);
            if (r == HTTP_PARSE_INCOMPLETE) {
                if (have == CHTTP_HEAD_MAX)
                    return fail(h, true, "response head too large");
                break;
            }
            if (!resp->interim) {
                *len = have;
                return 0;
            }
            /* A 1xx before the answer (we send no Expect; a server may still): drop it. */
            memmove(buf, buf + resp->head_len, have - resp->head_len);
            have -= resp->head_len;
            scanned = 0;
            status_line_seen = memchr(buf, '\n', have) != NULL;
            parse = have > 0;
        }
    }
}

int chttp_request(struct chttp *h, const char *method, const char *path, const char *body,
                  size_t body_len, chttp_sink sink, void *sink_ctx)
{
    char *req = NULL, *buf = NULL;
    size_t req_len = 0, have = 0;
    struct http_response resp;
    struct body_reader b = {0};
    int rc = -1, done, send_err;
    h->status = 0;
    h->sink = sink;
    h->sink_ctx = sink_ctx;
    h->sink_stopped = false;
    h->timed_out = false;
    h->missing = false;
    h->connect_errno = 0;
    h->malformed = false;
    h->failure[0] = '\0';
    h->body_len = 0;
    if (h->body)
        h->body[0] = '\0';
    if ((strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0 &&
         strcmp(method, "DELETE") != 0) ||
        !path_ok(path) || !(req = build_request(method, path, body, body_len, &req_len))) {
        fail(h, false, "cannot send the request %s %.64s", method, path);
        goto out;
    }
    if (connect_session(h) < 0)
        goto out;
    /* A session may answer and close before it has read everything (a body over its limit):
     * its answer, if one comes, says more than the failed write. */
    /* MSG_NOSIGNAL: a session gone mid-write is a line of ours, not a SIGPIPE (which stays
     * for a closed stdout, as in any command of a pipeline). */
    send_err = sock_send_all(h->fd, req, req_len);
    buf = xmalloc(CHTTP_HEAD_MAX);
    if (read_head(h, buf, &have, send_err, &resp) < 0)
        goto out;
    h->status = resp.status_code;
    b.kind = resp.body;
    b.left = resp.content_length;
    http_chunked_init(&b.chunked);
    if (b.kind == HTTP_BODY_CONTENT_LENGTH && b.left == 0)
        b.kind = HTTP_BODY_NONE;
    done = body_feed(h, &b, buf + resp.head_len, have - resp.head_len);
    while (done == 0) {
        if (h->body_deadline_ms && h->sink && chttp_ok(h) && !wait_readable(h)) {
            h->timed_out = h->sink_stopped = true;
            goto out;
        }
        ssize_t n = read_some(h->fd, buf, CHTTP_HEAD_MAX);
        if (n < 0) {
            fail(h, false, "receiving from the session failed: %s", strerror((int)-n));
            goto out;
        }
        if (n == 0) {
            if (b.kind == HTTP_BODY_UNTIL_CLOSE)
                break;
            fail(h, false, "the session closed the connection in the middle of its answer");
            goto out;
        }
        done = body_feed(h, &b, buf, (size_t)n);
    }
    if (done < 0)
        goto out;
    rc = 0;
out:
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
    free(buf);
    free(req);
    return rc;
}

int chttp_open(struct chttp *h, const char *cmd, const char *name, bool quiet_missing)
{
    memset(h, 0, sizeof *h);
    h->fd = -1;
    h->cmd = cmd;
    h->name = name;
    h->quiet_missing = quiet_missing;
    if (csock_path(name, h->path, sizeof h->path) < 0) {
        fprintf(stderr,
                "cordon: %s: the socket path of session '%s' is too long for a Unix socket"
                " (set XDG_RUNTIME_DIR to a shorter directory)\n",
                cmd, name);
        return CORDON_EXIT_SETUP;
    }
    return 0;
}

int chttp_lost(const struct chttp *h)
{
    struct crecord r;
    if (h->missing && !h->quiet_missing && crecord_read(h->name, &r)) {
        char ended[128];
        crecord_describe(&r, ended, sizeof ended);
        fprintf(stderr, "cordon: no session named '%s': it %s\n", h->name, ended);
        crecord_free(&r);
        return CORDON_EXIT_SETUP;
    }
    if (h->missing) {
        if (!h->quiet_missing)
            fprintf(stderr,
                    "cordon: no session named '%s' (cordon session list shows the running"
                    " ones)\n",
                    h->name);
        return CORDON_EXIT_SETUP;
    }
    if (h->connect_errno) {
        fprintf(stderr, "cordon: %s: cannot connect to session '%s' at %s: %s\n", h->cmd, h->name,
                h->path, strerror(h->connect_errno));
        return CORDON_EXIT_SETUP;
    }
    if (h->malformed)
        fprintf(stderr, "cordon: %s: session '%s' sent a malformed HTTP answer: %s\n", h->cmd,
                h->name, h->failure);
    else
        fprintf(stderr, "cordon: %s: lost the connection to session '%s': %s\n", h->cmd, h->name,
                h->failure[0] ? h->failure : "the HTTP exchange failed");
    return CORDON_EXIT_SETUP;
}

bool chttp_ok(const struct chttp *h)
{
    return h->status >= 200 && h->status < 300;
}

char *chttp_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *out = xmalloc(n * 3 + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = '\0';
    return out;
}

void chttp_close(struct chttp *h)
{
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
    free(h->body);
    h->body = NULL;
}
