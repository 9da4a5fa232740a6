/* api_server.c — see api_server.h. Owns the libmicrohttpd daemon of the session's control
 * socket, and the life of every request on it: reading the body, the peer check (decided once
 * per connection, on the peer's pidfd: the kernel's SO_PEERPIDFD, or before Linux 6.5 one
 * opened on SO_PEERCRED's pid and proven to be the connecting process), parking
 * the connection (MHD_suspend_connection) while the handler works, and feeding a streamed
 * response from a buffer. Uses MHD in external-epoll mode: MHD's epoll fd is one watcher on the
 * controller's loop and MHD's timeout is one timer; it never runs a thread of its own. Never
 * calls MHD_run from an api_* function a handler may call (that would re-enter MHD from inside
 * its own callbacks): those only flag the server dirty, and api_server_after_round runs MHD.
 *
 * A request goes through these phases:
 *   BODY      headers read, collecting the body (access handler called with upload data)
 *   WAITING   the handler has it; the connection is suspended until it answers
 *   ANSWERED  a response is ready (complete, or a stream); queued at MHD's next access call
 *   SENDING   queued; MHD sends it (a stream's reader suspends the connection when it runs
 *             dry and the stream has not ended)
 * MHD's completion callback frees the request on every path; if the handler had not finished
 * answering by then (no api_respond, or a stream not ended), on_gone runs first. */
#include "session/api_server.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/json_write.h"
#include "base/kernel_lacks.h"
#include "base/log.h"
#include "base/unix_peer.h"

#define API_BODY_MAX (1024u * 1024u)
#define API_STREAM_BLOCK (16u * 1024u)
#define API_JSON "application/json"

enum api_phase { PH_BODY, PH_WAITING, PH_ANSWERED, PH_SENDING };

struct api_server {
    struct ev_loop *loop;
    struct MHD_Daemon *d;
    struct ev_io io;       /* MHD's epoll fd */
    struct ev_timer timer; /* MHD_get_timeout */
    api_handler handler;
    void *ctx;
    uid_t uid;
    bool by_cred;             /* no SO_PEERPIDFD: peer_pidfd_by_cred */
    bool dirty;               /* resumed or written since the last MHD_run */
    bool in_run;              /* inside MHD_run: MHD's callbacks are on the stack */
    struct api_request *reqs; /* every live request, for api_server_stop */
    unsigned clients;         /* connections open now (api_server_clients) */
};

struct api_request {
    struct api_server *s;
    struct MHD_Connection *conn;
    struct api_request *prev, *next;
    enum api_phase phase;
    char *method, *path;
    char *body; /* NUL-terminated; NULL until the first byte */
    size_t body_len, body_cap;
    bool too_large;
    bool suspended; /* we suspended it and have not resumed it yet */
    bool peer_gone; /* found hung up while suspended (api_server_clients): no client any more */
    /* The answer, between api_respond/api_stream_begin and MHD_queue_response. */
    struct MHD_Response *resp;
    unsigned int status;
    /* Streaming. */
    bool streaming, stream_ended, stream_failed;
    char *buf;
    size_t off, len, cap; /* pending bytes are buf[off, len) */
    void (*on_gone)(void *ctx, struct api_request *req);
    void *gone_ctx;
};

/* ---- helpers ---- */

static void req_resume(struct api_request *req)
{
    if (!req->suspended)
        return;
    req->suspended = false;
    MHD_resume_connection(req->conn);
    req->s->dirty = true;
}

static void req_suspend(struct api_request *req)
{
    MHD_suspend_connection(req->conn);
    req->suspended = true;
}

/* {"error":"msg"} in a malloc'd string. */
static char *json_error_body(const char *msg, size_t *len)
{
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"error\":");
    json_buf_string(&b, msg, strlen(msg));
    json_buf_lit(&b, "}");
    *len = b.len;
    return b.data;
}

static struct MHD_Response *make_response(const char *content_type, const char *body, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return NULL;
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                content_type ? content_type : API_JSON) != MHD_YES) {
        MHD_destroy_response(r);
        return NULL;
    }
    return r;
}

/* Queue {"error": msg} on conn from inside the access handler (for answers that never reach
 * the handler: wrong uid, body too large). */
static enum MHD_Result queue_error(struct MHD_Connection *conn, unsigned int status,
                                   const char *msg)
{
    size_t len = 0;
    char *body = json_error_body(msg, &len);
    struct MHD_Response *r = body ? make_response(NULL, body, len) : NULL;
    free(body);
    if (!r)
        return MHD_NO; /* out of memory: MHD closes the connection */
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

#ifndef PIDFD_GET_USER_NAMESPACE
#define PIDFD_GET_USER_NAMESPACE _IO(0xFF, 9) /* Linux 6.11 */
#endif

/* The verdict on a connection's peer, decided once when the connection starts and kept as its
 * socket context: peer_ok, or the 403's message. */
static const char peer_ok[] = "";
static const char peer_unknown[] = "this session cannot tell who the client is";
static const char peer_sandboxed[] = "sessions are not driven from inside a sandbox";

static bool same_ns_file(int fd_a, const char *path_b)
{
    struct stat a, b;
    return fstat(fd_a, &a) == 0 && stat(path_b, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* Is the process pidfd refers to alive and in our user namespace? A process inside a sandbox
 * (cordon's or another) is not: it must never drive a session, least of all answer its own
 * questions about running outside. Asked through the pidfd, which names that one process
 * whatever becomes of its pid number: the kernel's own answer (PIDFD_GET_USER_NAMESPACE) where
 * it has it, else /proc/PID/ns/user read while the pidfd shows the process alive with that pid
 * before and after (so the number was not reused in between). 1 yes, 0 no. */
static int pidfd_in_our_user_namespace(int pidfd)
{
    int ns = ioctl(pidfd, PIDFD_GET_USER_NAMESPACE, 0);
    if (ns >= 0) {
        bool same = same_ns_file(ns, "/proc/self/ns/user");
        close(ns);
        return same;
    }
    if (errno == ESRCH)
        return 0; /* exited */
    pid_t pid = unix_peer_pidfd_pid(pidfd);
    if (pid <= 0)
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    bool same = same_ns_file(fd, "/proc/self/ns/user");
    close(fd);
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 || unix_peer_pidfd_pid(pidfd) != pid)
        return 0; /* gone meanwhile: the file read may have been another process's */
    return same;
}

/* The fallback for kernels without SO_PEERPIDFD (Linux < 6.5, or forced by the test switch
 * peer_pidfd): a pidfd for the client that connected on fd, proven to be that client, from
 * SO_PEERCRED's pid. -errno, or 0 with *pidfd_out set.
 *
 * SO_PEERCRED's pid is the number the connecting process had when it called connect(). By now
 * that process may have exited and the number may name another one: a client inside a sandbox
 * could connect, hand its connection to a child, exit, and wait for a host process to be given
 * its pid. So the number alone proves nothing; the steps below do:
 *   1. pidfd_open(pid) (Linux 5.3): from here on one process P, whatever becomes of the number.
 *   2. The inode of the socket at the client's end of fd (sock_diag, UNIX_DIAG_PEER).
 *   3. P's descriptor table (/proc/PID/fd) holds that socket.
 *   4. After 3, P is still alive with that pid (its pidfd's fdinfo). A pid number is not given
 *      to another process until its process is reaped, and a reaped process's pidfd never shows
 *      the number again, so the table read in 3 was P's.
 * Then P holds the client's end of this connection and has the number of the process that
 * connected it. Either P connected, or the connector exited and P, created after it, obtained
 * the client's end from a holder. A process created after the connector's exit inherits only
 * from a parent that holds the end, and every holder is the connector or got it from the
 * connector's side: a process in a sandbox creates processes in the sandbox's user namespace
 * (refused by the user-namespace check that follows, as with SO_PEERPIDFD). What is left is a
 * host process in our user namespace, started after the connector exited and given its
 * recycled pid, that takes descriptors from the sandbox (SCM_RIGHTS) and keeps them open while
 * the session looks: a deputy the sandbox would have to reach through a socket (a thread of a
 * running service is no such process: pidfd_open refuses a thread's id). The session's socket
 * itself is hidden inside every sandbox, so this check stands behind that wall, as with
 * SO_PEERPIDFD, where a host deputy that connects for the sandbox passes as well.
 * (The process's start time against the connection's was considered and not used: the check
 * runs when the connection is accepted, the only time known for it, so every process alive
 * then started before it.) */
static int peer_pidfd_by_cred(int fd, pid_t pid, int *pidfd_out)
{
    *pidfd_out = -1;
    if (pid <= 0)
        return -ESRCH; /* the connector is outside our pid namespace */
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return -errno; /* ESRCH: already gone */
    ino_t peer = 0;
    int rc = unix_peer_inode(fd, &peer);
    if (rc < 0) /* -ENOTCONN: the client closed its end already */
        goto fail;
    rc = unix_peer_pid_holds(pid, peer);
    if (rc == 0)
        rc = -ESRCH; /* another process has the connector's pid now, or it gave the end away */
    if (rc < 0)
        goto fail;
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 ||
        unix_peer_pidfd_pid(pidfd) != pid) {
        rc = -ESRCH; /* gone during the check: the table read may have been another's */
        goto fail;
    }
    *pidfd_out = pidfd;
    return 0;
fail:
    close(pidfd);
    return rc;
}

/* Decide who the client on fd is, once: its uid (SO_PEERCRED) and, through a pidfd for the
 * connecting process, whether it is alive in our user namespace. The pidfd is the kernel's
 * (SO_PEERPIDFD, Linux 6.5) or, without it, one opened on SO_PEERCRED's pid and proven to be
 * the connecting process (peer_pidfd_by_cred). Never the pid number alone: a sandboxed client
 * could connect, exit, and wait for its pid to be reused by a host process. peer_ok or the
 * message. */
static const char *peer_verdict(struct api_server *s, int fd)
{
    struct ucred cred;
    socklen_t clen = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
        LOG_W("api", "SO_PEERCRED: %s; refusing the client", strerror(errno));
        return peer_unknown;
    }
    if (cred.uid != s->uid) {
        LOG_W("api", "refused a client with uid %u (pid %d)", (unsigned)cred.uid, (int)cred.pid);
        return "this session belongs to another user";
    }
    int pidfd = -1;
    int rc = s->by_cred ? peer_pidfd_by_cred(fd, cred.pid, &pidfd) : unix_peer_pidfd(fd, &pidfd);
    if (rc == -ENOTCONN) { /* a client that connects and closes (a liveness probe): no story */
        LOG_D("api", "a client closed its connection before the check (pid %d)", (int)cred.pid);
        return peer_sandboxed;
    }
    if (rc == -ESRCH) {
        LOG_W("api", "refused a client that is gone, or not the process that connected (pid %d)",
              (int)cred.pid);
        return peer_sandboxed;
    }
    if (rc < 0) {
        LOG_W("api", "%s: %s; refusing the client (pid %d)",
              s->by_cred ? "checking the client by SO_PEERCRED and its pidfd" : "SO_PEERPIDFD",
              strerror(-rc), (int)cred.pid);
        return peer_unknown;
    }
    int ours = pidfd_in_our_user_namespace(pidfd);
    close(pidfd);
    if (!ours) {
        LOG_W("api", "refused a client inside a sandbox or already gone (pid %d)", (int)cred.pid);
        return peer_sandboxed;
    }
    return peer_ok;
}

/* How this kernel lets peer_verdict find the client's process, chosen once at start: 0 with
 * s->by_cred set, or -errno with a line in err when it cannot tell clients apart at all. */
static int peer_choose_mechanism(struct api_server *s, char *err, size_t errlen)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        int e = errno;
        snprintf(err, errlen, "control socket: socketpair: %s", strerror(e));
        return -e;
    }
    int pidfd = -1, rc = unix_peer_pidfd(sv[0], &pidfd);
    if (pidfd >= 0)
        close(pidfd);
    s->by_cred = rc < 0 || kernel_lacks_forced("peer_pidfd");
    if (s->by_cred) {
        ino_t ino;
        rc = unix_peer_inode(sv[0], &ino);
        if (rc == 0 && (pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0)) < 0)
            rc = -errno;
        if (rc < 0)
            snprintf(err, errlen,
                     "this kernel cannot tell the control socket's clients apart: it has no "
                     "SO_PEERPIDFD (Linux 6.5) and its fallback needs pidfd_open (Linux 5.3) "
                     "and sock_diag for Unix sockets (%s; `modprobe unix_diag`)",
                     strerror(-rc));
        else
            LOG_I("api", "no SO_PEERPIDFD (Linux 6.5): clients are checked by SO_PEERCRED, a "
                         "pidfd on its pid, and that process holding the connection");
        if (pidfd >= 0)
            close(pidfd);
    }
    close(sv[0]);
    close(sv[1]);
    return rc < 0 && s->by_cred ? rc : 0;
}

/* MHD_OPTION_NOTIFY_CONNECTION: the verdict when the connection starts (the peer has just
 * connected), kept as its socket context; nothing to free at its end (static strings). Counts
 * the connections open too. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct api_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED && s->clients > 0)
        s->clients--;
    if (code != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    s->clients++;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) {
        LOG_W("api", "cannot get a client connection's fd; refusing it");
        *socket_context = (void *)(uintptr_t)peer_unknown;
        return;
    }
    *socket_context = (void *)(uintptr_t)peer_verdict(s, ci->connect_fd);
}

/* NULL: the client may use the API; else why not (a 403's message). */
static const char *peer_refusal(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    const char *v = ci ? ci->socket_context : NULL;
    if (!v)
        return peer_unknown;
    return v == peer_ok ? NULL : v;
}

/* Content-Length beyond the limit: refuse before reading the body (and before MHD sends a
 * "100 Continue" to a client that asked for one). */
static bool declared_too_large(struct MHD_Connection *conn)
{
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!cl)
        return false;
    errno = 0;
    char *end;
    unsigned long long n = strtoull(cl, &end, 10);
    return end != cl && (errno == ERANGE || n > API_BODY_MAX);
}

static bool body_append(struct api_request *req, const char *data, size_t n)
{
    if (req->too_large)
        return true;
    if (n > API_BODY_MAX - req->body_len) {
        req->too_large = true;
        free(req->body);
        req->body = NULL;
        req->body_len = req->body_cap = 0;
        return true;
    }
    if (req->body_len + n + 1 > req->body_cap) {
        size_t cap = req->body_cap ? req->body_cap : 1024;
        while (cap < req->body_len + n + 1)
            cap *= 2;
        char *b = realloc(req->body, cap);
        if (!b)
            return false;
        req->body = b;
        req->body_cap = cap;
    }
    memcpy(req->body + req->body_len, data, n);
    req->body_len += n;
    req->body[req->body_len] = '\0';
    return true;
}

static void req_unlink(struct api_request *req)
{
    struct api_server *s = req->s;
    if (req->prev)
        req->prev->next = req->next;
    else
        s->reqs = req->next;
    if (req->next)
        req->next->prev = req->prev;
    req->prev = req->next = NULL;
}

static void req_free(struct api_request *req)
{
    if (req->resp)
        MHD_destroy_response(req->resp);
    free(req->method);
    free(req->path);
    free(req->body);
    free(req->buf);
    free(req);
}

/* ---- MHD callbacks ---- */

static enum MHD_Result queue_answer(struct api_request *req)
{
    struct MHD_Response *r = req->resp;
    req->resp = NULL;
    req->phase = PH_SENDING;
    if (!r)
        return MHD_NO; /* creating it failed (logged): close the connection */
    enum MHD_Result ret = MHD_queue_response(req->conn, req->status, r);
    MHD_destroy_response(r); /* MHD holds its own reference */
    if (ret != MHD_YES)
        LOG_E("api", "%s %s: MHD refused the response", req->method, req->path);
    return ret;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
    struct api_server *s = cls;
    struct api_request *req = *con_cls;
    (void)version;

    if (!req) { /* headers are in: the first call of this request */
        const char *refused = peer_refusal(conn);
        if (refused)
            return queue_error(conn, MHD_HTTP_FORBIDDEN, refused);
        if (declared_too_large(conn))
            return queue_error(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                               "the request body is larger than 1 MiB");
        req = calloc(1, sizeof *req);
        if (!req)
            return MHD_NO;
        req->s = s;
        req->conn = conn;
        req->phase = PH_BODY;
        req->method = strdup(method);
        req->path = strdup(url);
        if (!req->method || !req->path) {
            req_free(req);
            return MHD_NO;
        }
        req->next = s->reqs;
        if (s->reqs)
            s->reqs->prev = req;
        s->reqs = req;
        *con_cls = req;
        if (*upload_data_size == 0) /* MHD's usual first call: no body bytes yet */
            return MHD_YES;
    }

    switch (req->phase) {
    case PH_BODY:
        if (*upload_data_size) {
            if (!body_append(req, upload_data, *upload_data_size)) {
                LOG_E("api", "%s %s: out of memory for the body", req->method, req->path);
                return MHD_NO;
            }
            *upload_data_size = 0;
            return MHD_YES;
        }
        if (req->too_large) {
            req->phase = PH_SENDING;
            return queue_error(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                               "the request body is larger than 1 MiB");
        }
        if (!req->body && !body_append(req, "", 0))
            return MHD_NO;
        req->phase = PH_WAITING;
        s->handler(s->ctx, req);
        if (req->phase == PH_ANSWERED) /* answered inside the handler */
            return queue_answer(req);
        req_suspend(req);
        return MHD_YES;
    case PH_WAITING:
        /* Called again with no answer yet: nothing resumes such a request but
         * api_server_stop, after which MHD calls no access handler; should it happen, park the
         * connection again rather than have MHD call us in a loop. */
        req_suspend(req);
        return MHD_YES;
    case PH_ANSWERED:
        return queue_answer(req);
    case PH_SENDING:
        break;
    }
    LOG_E("api", "%s %s: called back after the response was queued", req->method, req->path);
    return MHD_NO;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
    struct api_request *req = cls;
    (void)pos;
    if (req->stream_failed)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t have = req->len - req->off;
    if (have) {
        size_t n = have < max ? have : max;
        memcpy(out, req->buf + req->off, n);
        req->off += n;
        if (req->off == req->len)
            req->off = req->len = 0;
        return (ssize_t)n;
    }
    if (req->stream_ended)
        return MHD_CONTENT_READER_END_OF_STREAM;
    /* Nothing to send yet: park the connection (returning 0 without it makes MHD poll us in a
     * busy loop); api_stream_write or api_stream_end resumes it. */
    req_suspend(req);
    return 0;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct api_request *req = *con_cls;
    (void)cls;
    (void)conn;
    if (!req)
        return;
    *con_cls = NULL;
    req_unlink(req);
    /* The handler is done with a request once it answered it completely: after that it holds
     * no pointer to it, and its on_gone context may be gone too. Before that it must hear of
     * the end, whatever the cause: MHD also completes a stream without reading it to the end
     * when it need not send a body (HEAD). */
    bool answered = (req->phase == PH_ANSWERED || req->phase == PH_SENDING) &&
                    (!req->streaming || req->stream_ended);
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && req->phase != PH_BODY)
        LOG_D("api", "%s %s: ended early (%d)", req->method, req->path, (int)toe);
    if (!answered && req->on_gone) {
        void (*fn)(void *, struct api_request *) = req->on_gone;
        req->on_gone = NULL;
        fn(req->gone_ctx, req);
    }
    req_free(req);
}

__attribute__((format(printf, 2, 0))) static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    (void)cls;
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    LOG_D("api", "libmicrohttpd: %s", line);
}

/* ---- driving MHD from the loop ---- */

static void on_timer(struct ev_loop *loop, struct ev_timer *t);

/* MHD_run passes over each ready connection once: sending a stream's next chunk, the headers
 * before a stream's first bytes, or the last chunk after its end each take a pass of their
 * own, and MHD says so with a timeout of 0. Passes run back to back while it does, at most
 * this many: waiting for the loop's next round (a 1 ms timer) put a millisecond between the
 * headers and the first event, and another before the end of every exec's stream. */
#define MHD_PASSES_MAX 8

static void run_mhd(struct api_server *s)
{
    MHD_UNSIGNED_LONG_LONG ms = 0;
    for (int pass = 0; pass < MHD_PASSES_MAX; pass++) {
        s->dirty = false;
        s->in_run = true;
        if (MHD_run(s->d) != MHD_YES)
            LOG_E("api", "MHD_run failed");
        s->in_run = false;
        if (MHD_get_timeout(s->d, &ms) != MHD_YES) {
            ev_timer_stop(s->loop, &s->timer);
            return;
        }
        if (ms != 0)
            break;
    }
    if (ms == 0) {
        /* Still work pending after that many passes: after_round runs it at the end of this
         * round; the timer (not 0 ms, which would fire again within the same round) covers
         * owners that do not call after_round. */
        s->dirty = true;
        ms = 1;
    }
    ev_timer_start(s->loop, &s->timer, ms, on_timer, s);
}

static void on_timer(struct ev_loop *loop, struct ev_timer *t)
{
    (void)loop;
    run_mhd(t->data);
}

static void on_epoll(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    run_mhd(w->data);
}

/* ---- public ---- */

/* MHD closes the listening socket it was given when it fails late in MHD_start_daemon, but not
 * when it fails early. So it gets a duplicate: after a failure, the duplicate is closed here
 * only if it is still open on the same socket as listen_fd (another thread may have reused the
 * number); listen_fd itself is always closed here. */
static struct MHD_Daemon *start_daemon(struct api_server *s, int listen_fd)
{
    struct stat ours, now;
    int fd = fcntl(listen_fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || fstat(listen_fd, &ours) < 0) {
        LOG_E("api", "control socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_access, s,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s, /* first, or MHD warns */
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
    if (!d && fstat(fd, &now) == 0 && now.st_dev == ours.st_dev && now.st_ino == ours.st_ino)
        close(fd);
    return d;
}

struct api_server *api_server_start(struct ev_loop *loop, int listen_fd, api_handler handler,
                                    void *ctx, char *err, size_t errlen)
{
    struct api_server *s = calloc(1, sizeof *s);
    const union MHD_DaemonInfo *di;
    int fl, rc;
    if (!s) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    s->loop = loop;
    s->handler = handler;
    s->ctx = ctx;
    s->uid = getuid();
    if (peer_choose_mechanism(s, err, errlen) < 0)
        goto fail;
    fl = fcntl(listen_fd, F_GETFL);
    if (fl < 0 || fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "control socket: %s", strerror(errno));
        goto fail;
    }
    s->d = start_daemon(s, listen_fd);
    if (!s->d) {
        snprintf(err, errlen, "cannot start the HTTP server (libmicrohttpd)");
        goto fail;
    }
    di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
    if (!di) {
        snprintf(err, errlen, "libmicrohttpd has no epoll fd");
        goto fail;
    }
    rc = ev_io_start(loop, &s->io, di->epoll_fd, EPOLLIN, on_epoll, s);
    if (rc < 0) {
        snprintf(err, errlen, "watching the HTTP server: %s", strerror(-rc));
        goto fail;
    }
    close(listen_fd); /* the daemon has its duplicate */
    run_mhd(s);       /* arm the timer */
    return s;

fail:
    if (s && s->d)
        MHD_stop_daemon(s->d); /* closes the duplicate */
    if (listen_fd >= 0)
        close(listen_fd);
    free(s);
    return NULL;
}

void api_server_stop(struct api_server *s)
{
    if (!s)
        return;
    assert(!s->in_run); /* not from a handler or on_gone: MHD would be stopped under itself */
    ev_io_stop(s->loop, &s->io);
    ev_timer_stop(s->loop, &s->timer);
    /* MHD_stop_daemon must not find suspended connections; resumed ones it closes, and its
     * completion callbacks free the requests (running on_gone for unfinished ones). */
    for (struct api_request *req = s->reqs; req; req = req->next)
        req_resume(req);
    MHD_stop_daemon(s->d);
    free(s);
}

void api_server_after_round(struct api_server *s)
{
    if (s && s->dirty)
        run_mhd(s);
}

const char *api_method(const struct api_request *req)
{
    return req->method;
}
const char *api_path(const struct api_request *req)
{
    return req->path;
}

const char *api_query(const struct api_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *api_body(const struct api_request *req, size_t *len)
{
    if (len)
        *len = req->body_len;
    return req->body ? req->body : "";
}

/* The handler's answer is ready: queue it at MHD's next access call (now, when the handler is
 * still running inside it; else after resuming the connection). */
static void answer(struct api_request *req, unsigned int status, struct MHD_Response *r)
{
    req->resp = r;
    req->status = status;
    req->phase = PH_ANSWERED;
    req_resume(req);
}

static bool may_answer(const struct api_request *req, const char *what)
{
    if (req->phase == PH_WAITING)
        return true;
    LOG_E("api", "%s %s: %s after the request was answered", req->method, req->path, what);
    return false;
}

void api_respond(struct api_request *req, int status, const char *content_type, const char *body,
                 size_t len)
{
    if (!may_answer(req, "api_respond"))
        return;
    struct MHD_Response *r = make_response(content_type, body ? body : "", body ? len : 0);
    if (!r)
        LOG_E("api", "%s %s: cannot build the response", req->method, req->path);
    answer(req, (unsigned int)status, r);
}

void api_respond_error(struct api_request *req, int status, const char *fmt, ...)
{
    if (!may_answer(req, "api_respond_error"))
        return;
    char *msg = NULL, *body = NULL;
    size_t len = 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (n >= 0)
        body = json_error_body(msg, &len);
    struct MHD_Response *r = body ? make_response(NULL, body, len) : NULL;
    if (!r)
        LOG_E("api", "%s %s: cannot build the error response", req->method, req->path);
    answer(req, (unsigned int)status, r);
    free(body);
    if (n >= 0)
        free(msg);
}

void api_stream_begin(struct api_request *req, const char *content_type)
{
    if (!may_answer(req, "api_stream_begin"))
        return;
    /* A HEAD gets the headers only; MHD 0.9.75 would still send a chunked response's last
     * chunk ("0\r\n\r\n") after them, so it gets an empty complete response instead, and
     * the stream's writes pile up unread until MHD is done with it (soon: on_gone). */
    struct MHD_Response *r = strcmp(req->method, MHD_HTTP_METHOD_HEAD) == 0
                                 ? MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT)
                                 : MHD_create_response_from_callback(
                                       MHD_SIZE_UNKNOWN, API_STREAM_BLOCK, stream_read, req, NULL);
    if (r && MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                     content_type ? content_type : API_JSON) != MHD_YES) {
        MHD_destroy_response(r);
        r = NULL;
    }
    if (!r)
        LOG_E("api", "%s %s: cannot build the stream", req->method, req->path);
    req->streaming = true;
    answer(req, MHD_HTTP_OK, r);
}

void api_stream_write(struct api_request *req, const char *data, size_t len)
{
    if (!req->streaming || req->stream_ended) {
        LOG_E("api", "%s %s: api_stream_write outside a stream", req->method, req->path);
        return;
    }
    if (!len || req->stream_failed)
        return;
    if (req->off && req->len + len > req->cap) { /* reclaim what the client took */
        memmove(req->buf, req->buf + req->off, req->len - req->off);
        req->len -= req->off;
        req->off = 0;
    }
    if (req->len + len > req->cap) {
        size_t cap = req->cap ? req->cap : 4096;
        while (cap < req->len + len)
            cap *= 2;
        char *b = realloc(req->buf, cap);
        if (!b) {
            LOG_E("api", "%s %s: out of memory for the stream; ending it", req->method, req->path);
            req->stream_failed = true; /* the reader aborts the response */
            req_resume(req);
            return;
        }
        req->buf = b;
        req->cap = cap;
    }
    memcpy(req->buf + req->len, data, len);
    req->len += len;
    req_resume(req);
}

void api_stream_end(struct api_request *req)
{
    if (!req->streaming || req->stream_ended) {
        LOG_E("api", "%s %s: api_stream_end outside a stream", req->method, req->path);
        return;
    }
    req->stream_ended = true;
    req_resume(req);
}

size_t api_stream_pending(const struct api_request *req)
{
    return req->len - req->off;
}

void api_on_gone(struct api_request *req, void (*fn)(void *ctx, struct api_request *req), void *ctx)
{
    req->on_gone = fn;
    req->gone_ctx = ctx;
}

/* A suspended connection is not watched by MHD (api_server.h, api_on_gone): a client that left
 * one (an approver's Ctrl-C) would count for ever. Its socket says so (POLLHUP once the peer
 * closed it); resuming it lets MHD see the end and close it (on_gone runs). */
static bool peer_hung_up(struct api_request *req)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct pollfd p = {.fd = ci ? ci->connect_fd : -1, .events = 0};
    return p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

unsigned api_server_clients(struct api_server *s)
{
    if (!s)
        return 0;
    unsigned gone = 0;
    for (struct api_request *req = s->reqs; req; req = req->next) {
        if (req->suspended && !req->peer_gone && peer_hung_up(req)) {
            req->peer_gone = true;
            req_resume(req);
        }
        gone += req->peer_gone;
    }
    return s->clients > gone ? s->clients - gone : 0;
}
