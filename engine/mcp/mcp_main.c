/* mcp_main.c — `cordon mcp [--session NAME | OPTIONS]`: a Model Context Protocol server on
 * stdin/stdout (JSON-RPC 2.0, one message a line) whose tools run commands in a cordon
 * session. Owns the options, the session it starts for itself (as `cordon session start`
 * would, owned by this process, stopped when stdin ends or a TERM/INT/HUP comes; when it ends
 * by itself, by its idle timeout or lifetime, the server ends too, with one line), the reading
 * of stdin (framing, the size bound, malformed messages), the lifecycle (initialize and the
 * revision negotiated, ping) and the dispatch: each tools/call runs on a thread of its own so
 * that stdin is read on while it runs (the answer to an elicitation it waits for comes there).
 * Uses mcp_wire, mcp_tools, client_session (stopping the session), client_call and
 * client_record (watching its end, and why), base. Must never: write
 * anything but protocol messages on stdout, or stop a session it did not start. */
#include "mcp/mcp.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cli_opt.h"
#include "base/json_write.h"
#include "base/json_read.h"
#include "base/self_path.h"
#include "base/session_socket.h"
#include "base/util.h"
#include "client/client_call.h"
#include "client/client_http.h"
#include "client/client_record.h"
#include "client/client_reply.h"
#include "client/client_session.h"
#include "mcp/mcp_tools.h"
#include "mcp/mcp_wire.h"

/* A message longer than this is answered with an error and skipped: far beyond any tools/call
 * a model makes, and a bound on what one line may cost us. */
#define LINE_MAX_BYTES ((size_t)4 << 20)
/* tools/call running at once; more are refused (a client that floods us). */
#define CALLS_MAX 64

#define SYNOPSIS "cordon mcp [--session NAME | OPTIONS]"

static const char *const revisions[] = {"2025-11-25", "2025-06-18"}; /* newest first */

static struct mcp_server server;
static const char *server_version;
static atomic_int calls_running;

static void usage(void)
{
    fputs(
        "usage: " SYNOPSIS "\n"
        "Serve the Model Context Protocol on stdin/stdout: tools that run commands in a cordon\n"
        "sandbox (run_command, start_background, list_jobs, read_log, stop_job, cancel_turn,\n"
        "session_status) and publish its ports on the host (publish_port, unpublish_port),\n"
        "for an agent such as Claude Code, Codex or Cursor.\n"
        "  --session NAME  use the running session NAME (it keeps running afterwards)\n"
        "  OPTIONS         without --session: start a session of its own with these options of\n"
        "                  cordon session start (cordon session start --help lists them), in the\n"
        "                  current directory; it ends when stdin ends or on TERM, INT or HUP;\n"
        "                  when it ends by itself (--idle-timeout, --max-lifetime), so does\n"
        "                  cordon mcp, with one line on stderr saying why\n"
        "Questions for a person (a network destination no rule allows, a re-run outside the\n"
        "sandbox) go to the client as elicitation requests; without that capability, denied.\n"
        "Diagnostics go to stderr; stdout carries only protocol messages.\n",
        stdout);
}

/* The session of our own: `cordon-session session start NAME OPTIONS...` (base/self_path.h),
 * with our stdout kept for the protocol (its lines go to stderr). It returns once the session
 * answers; the session's owner is this process, so it also ends if we die. 0, or 125. */
static int start_session(const char *name, int argc, char **argv)
{
    char path[4096];
    int rc = self_helper_path("cordon-session", path, sizeof path);
    if (rc < 0) {
        fprintf(stderr, "cordon: mcp: cannot find cordon-session (/proc/self/exe): %s\n",
                strerror(-rc));
        return CORDON_EXIT_SETUP;
    }
    char *program = xstrdup(path);
    char **args = xcalloc((size_t)argc + 5, sizeof *args);
    static char word_cordon[] = "cordon", word_session[] = "session", word_start[] = "start";
    args[0] = word_cordon;
    args[1] = word_session;
    args[2] = word_start;
    args[3] = (char *)name;
    for (int i = 0; i < argc; i++)
        args[4 + i] = argv[i];
    int status = CORDON_EXIT_SETUP;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "cordon: mcp: fork: %s\n", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        /* Our signal dispositions are not the session's: an ignored SIGPIPE and a blocked mask
         * survive exec, and every command of the session would inherit them (`yes | head`
         * would not end by SIGPIPE, a stop's TERM would wait). */
        sigset_t none;
        sigemptyset(&none);
        signal(SIGPIPE, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(STDERR_FILENO, STDOUT_FILENO);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        execv(program, args);
        fprintf(stderr, "cordon: mcp: cannot run %s: %s\n", program, strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        status = 0;
    else if (!(WIFEXITED(st) && WEXITSTATUS(st) == CORDON_EXIT_SETUP)) /* it said why */
        fprintf(stderr, "cordon: mcp: the sandbox session '%s' did not start\n", name);
out:
    free(args);
    free(program);
    return status;
}

/* Does session `name` answer? 0, or 125 after saying why: a client whose every call would fail
 * is better told at once. */
static int probe_session(const char *name)
{
    struct chttp h;
    int status = CORDON_EXIT_SETUP;
    if (chttp_open(&h, "mcp", name, false) != 0)
        goto out;
    if (chttp_request(&h, "GET", "/v1/session", NULL, 0, NULL, NULL) < 0)
        status = chttp_lost(&h);
    else if (!chttp_ok(&h))
        fprintf(stderr, "cordon: mcp: session '%s' answered HTTP %ld\n", name, h.status);
    else
        status = 0;
out:
    chttp_close(&h);
    return status;
}

/* A descriptor that becomes readable when session `name`'s controller ends (pidfd_open of the
 * pid it reports), or -1 (no answer, or a kernel before 5.3): then nothing watches it. */
static int watch_session_end(const char *name)
{
    struct chttp h;
    char err[256];
    long long pid = 0;
    struct json_value *v = ccall_json(&h, name, "GET", "/v1/session", NULL, err, sizeof err);
    int fd = -1;
    if (v && reply_int(v, "pid", &pid) && pid > 0)
        fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (fd < 0)
        fprintf(stderr,
                "cordon: mcp: cannot watch session '%s' for its end (%s): once it ends, tool "
                "calls say so\n",
                name, v ? strerror(errno) : err);
    json_free(v);
    chttp_close(&h);
    return fd;
}

/* Our session ended by itself (idle timeout, lifetime): one line with why, from its record. */
static void say_session_ended(const char *name)
{
    struct crecord r;
    char ended[160] = "ended";
    if (crecord_read(name, &r)) {
        crecord_describe(&r, ended, sizeof ended);
        crecord_free(&r);
    }
    fprintf(stderr, "cordon: mcp: session '%s' %s: stopping\n", name, ended);
}

/* initialize ---------------------------------------------------------------------------- */

static void initialize(const char *id, const struct json_value *params)
{
    const struct json_value *want = json_get(params, "protocolVersion");
    const char *revision = revisions[0];
    for (size_t i = 0; want && want->type == JSON_STRING && i < ARRAY_LEN(revisions); i++)
        if (strcmp(want->str, revisions[i]) == 0)
            revision = revisions[i];
    const struct json_value *caps = json_get(params, "capabilities");
    const struct json_value *elicit = json_get(caps, "elicitation");
    server.elicitation = elicit && elicit->type == JSON_OBJECT;
    if (server.elicitation)
        mcp_watch_start(&server);
    /* SEP-1303: from 2025-11-25 on, bad tool arguments are a result the model can read */
    server.args_as_results = strcmp(revision, "2025-06-18") != 0;
    struct json_buf b = {0};
    json_buf_lit(&b, "{\"protocolVersion\":");
    json_buf_string(&b, revision, strlen(revision));
    json_buf_lit(&b, ",\"capabilities\":{\"tools\":{\"listChanged\":false}},"
                     "\"serverInfo\":{\"name\":\"cordon\",\"title\":\"cordon sandbox\","
                     "\"version\":");
    json_buf_string(&b, server_version, strlen(server_version));
    json_buf_lit(&b, "},\"instructions\":");
    static const char instructions[] =
        "cordon runs your shell commands in a sandbox: run_command for a command that ends, "
        "start_background plus read_log for servers and long jobs. Writes outside the "
        "workspace, credentials and network destinations that no rule allows are refused, and "
        "the result says so; do not work around a refusal, tell the user what was refused.";
    json_buf_string(&b, instructions, sizeof instructions - 1);
    json_buf_lit(&b, "}");
    mcp_send_result(id, b.data, b.len);
    json_buf_free(&b);
}

/* tools/call ---------------------------------------------------------------------------- */

struct call {
    struct json_value *msg; /* the request, owned */
    char *id;
    int tool;
};

static void *call_thread(void *arg)
{
    struct call *c = arg;
    const struct json_value *args = json_get(json_get(c->msg, "params"), "arguments");
    mcp_tools_call(&server, c->tool, args, c->id);
    json_free(c->msg);
    free(c->id);
    free(c);
    atomic_fetch_sub(&calls_running, 1);
    return NULL;
}

/* Takes msg. */
static void tools_call(const char *id, struct json_value *msg)
{
    const struct json_value *params = json_get(msg, "params");
    const struct json_value *name = json_get(params, "name");
    if (!name || name->type != JSON_STRING) {
        mcp_send_error(id, MCP_INVALID_PARAMS, "tools/call needs params.name, a tool's name");
        goto drop;
    }
    int tool = mcp_tools_find(name->str);
    if (tool < 0) {
        char *m = xasprintf("unknown tool '%.100s' (tools/list lists them)", name->str);
        mcp_send_error(id, MCP_INVALID_PARAMS, m);
        free(m);
        goto drop;
    }
    if (atomic_fetch_add(&calls_running, 1) >= CALLS_MAX) {
        atomic_fetch_sub(&calls_running, 1);
        mcp_send_error(id, MCP_INTERNAL_ERROR, "too many tool calls running at once");
        goto drop;
    }
    struct call *c = xcalloc(1, sizeof *c);
    c->msg = msg;
    c->id = xstrdup(id);
    c->tool = tool;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &at, call_thread, c);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        atomic_fetch_sub(&calls_running, 1);
        mcp_send_error(id, MCP_INTERNAL_ERROR, "cannot start the tool call (no thread)");
        free(c->id);
        free(c);
        goto drop;
    }
    return;
drop:
    json_free(msg);
}

/* One message ---------------------------------------------------------------------------- */

static void handle_line(const char *line, size_t len)
{
    char err[160];
    char *id = NULL;
    while (len > 0 && strchr(" \t\r", line[len - 1]))
        len--;
    if (len == 0)
        return; /* a blank line between messages: nothing to answer */
    struct json_value *msg = json_parse(line, len, err, sizeof err);
    if (!msg) {
        char *m = xasprintf("parse error: %s", err);
        mcp_send_error(NULL, MCP_PARSE_ERROR, m);
        free(m);
        return;
    }
    if (msg->type == JSON_ARRAY) {
        mcp_send_error(NULL, MCP_INVALID_REQUEST,
                       "batches are not supported (MCP sends one "
                       "message a line)");
        goto drop;
    }
    if (msg->type != JSON_OBJECT) {
        mcp_send_error(NULL, MCP_INVALID_REQUEST, "a message must be a JSON object");
        goto drop;
    }
    const struct json_value *idv = json_get(msg, "id");
    const struct json_value *method = json_get(msg, "method");
    const struct json_value *jsonrpc = json_get(msg, "jsonrpc");
    id = mcp_id_text(idv);
    if (!jsonrpc || jsonrpc->type != JSON_STRING || strcmp(jsonrpc->str, "2.0") != 0) {
        mcp_send_error(id, MCP_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
        goto drop;
    }
    if (!method) {
        if (id && (json_get(msg, "result") || json_get(msg, "error"))) {
            mcp_answer(msg); /* an answer to a request of ours */
            free(id);
            return;
        }
        mcp_send_error(id, MCP_INVALID_REQUEST, "a request needs a \"method\"");
        goto drop;
    }
    if (method->type != JSON_STRING) {
        mcp_send_error(id, MCP_INVALID_REQUEST, "\"method\" must be a string");
        goto drop;
    }
    if (!idv) {
        /* a notification: never answered; a cancelled one stops the call it names */
        if (strcmp(method->str, "notifications/cancelled") == 0) {
            char *target = mcp_id_text(json_get(json_get(msg, "params"), "requestId"));
            if (target)
                mcp_tools_cancel(&server, target);
            free(target);
        }
        goto drop;
    }
    if (!id) {
        mcp_send_error(NULL, MCP_INVALID_REQUEST, "\"id\" must be a string or a number");
        goto drop;
    }
    const struct json_value *params = json_get(msg, "params");
    if (params && params->type != JSON_OBJECT) {
        mcp_send_error(id, MCP_INVALID_PARAMS, "\"params\" must be an object");
        goto drop;
    }
    if (strcmp(method->str, "initialize") == 0) {
        initialize(id, params);
    } else if (strcmp(method->str, "ping") == 0) {
        mcp_send_result(id, "{}", 2);
    } else if (strcmp(method->str, "tools/list") == 0) {
        struct json_buf b = {0};
        mcp_tools_list(&b);
        mcp_send_result(id, b.data, b.len);
        json_buf_free(&b);
    } else if (strcmp(method->str, "tools/call") == 0) {
        tools_call(id, msg);
        free(id);
        return;
    } else {
        char *m = xasprintf("method not found: '%.100s'", method->str);
        mcp_send_error(id, MCP_METHOD_NOT_FOUND, m);
        free(m);
    }
drop:
    free(id);
    json_free(msg);
}

/* The read loop ------------------------------------------------------------------------- */

/* Reads stdin until it ends, a signal in sfd comes or (end_fd >= 0) the session ends: true
 * for the last. */
static bool serve(int sfd, int end_fd)
{
    bool session_ended = false;
    size_t cap = 64 * 1024, len = 0;
    char *buf = xmalloc(cap);
    bool skipping = false; /* inside a line over the bound: dropped up to its '\n' */
    for (;;) {
        struct pollfd p[3] = {{.fd = STDIN_FILENO, .events = POLLIN},
                              {.fd = sfd, .events = POLLIN},
                              {.fd = end_fd, .events = POLLIN}};
        if (poll(p, end_fd >= 0 ? 3 : 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "cordon: mcp: poll: %s\n", strerror(errno));
            break;
        }
        if (p[1].revents) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                fprintf(stderr, "cordon: mcp: %s: stopping\n", strsignal((int)si.ssi_signo));
            break;
        }
        if (end_fd >= 0 && p[2].revents) {
            session_ended = true;
            break;
        }
        if (!p[0].revents)
            continue;
        if (cap - len < 64 * 1024) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t n = read(STDIN_FILENO, buf + len, cap - len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            if (n < 0)
                fprintf(stderr, "cordon: mcp: reading stdin: %s\n", strerror(errno));
            else if (len > 0 && !skipping)
                handle_line(buf, len); /* a last message without its '\n' */
            break;
        }
        size_t start = 0, scan = len;
        len += (size_t)n;
        for (size_t i = scan; i < len; i++) {
            if (buf[i] != '\n')
                continue;
            if (!skipping && i - start > LINE_MAX_BYTES) /* came whole in one read */
                mcp_send_error(NULL, MCP_INVALID_REQUEST,
                               "message too large (over 4 MiB); "
                               "it was skipped");
            else if (!skipping)
                handle_line(buf + start, i - start);
            skipping = false;
            start = i + 1;
        }
        memmove(buf, buf + start, len - start);
        len -= start;
        if (len > LINE_MAX_BYTES) {
            if (!skipping)
                mcp_send_error(NULL, MCP_INVALID_REQUEST,
                               "message too large (over 4 MiB); "
                               "it was skipped");
            skipping = true;
            len = 0;
        }
        if (len == 0 && cap > 1024 * 1024) { /* give back what a huge line took */
            cap = 64 * 1024;
            buf = xrealloc(buf, cap);
        }
    }
    free(buf);
    return session_ended;
}

/* Give the calls in flight a moment to answer (their streams end with the session's). */
static void wait_calls(void)
{
    for (int i = 0; i < 100 && atomic_load(&calls_running) > 0; i++)
        (void)poll(NULL, 0, 50);
}

int mcp_main(int argc, char **argv, const char *version)
{
    const char *session = NULL;
    char own_name[CSOCK_NAME_MAX + 1];
    int status = 0;
    int rest = 0;
    char **options = xcalloc((size_t)argc + 1, sizeof *options);
    server_version = version;
    if (cli_wants_help(argc, argv)) {
        usage();
        free(options);
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        bool missing = false;
        const char *v = cli_opt_value(argc, argv, &i, "--session", &missing);
        if (missing) {
            free(options);
            return cli_usage_error("mcp", "--session needs a value (usage: " SYNOPSIS ")");
        }
        if (v) {
            session = v;
            continue;
        }
        if (strcmp(argv[i], "--detach") == 0 || strncmp(argv[i], "--detach=", 9) == 0) {
            free(options);
            return cli_usage_error("mcp", "--detach does not apply: the session of cordon mcp "
                                          "ends with it (use --session NAME for one of your own)");
        }
        options[rest++] = argv[i];
    }
    if (session && rest > 0) {
        const char *first = options[0];
        free(options);
        return cli_usage_error("mcp",
                               "'%s': options are for a session cordon mcp starts, not "
                               "with --session (usage: " SYNOPSIS ")",
                               first);
    }
    if (session && !csock_name_valid(session)) {
        free(options);
        return cli_usage_error("mcp",
                               "invalid session name '%s' (letters, digits, '_', '.', "
                               "'-'; at most %d)",
                               session, CSOCK_NAME_MAX);
    }
    /* Signals are read in the loop (signalfd): every thread made after this has them blocked. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN); /* a client gone is EPIPE on stdout, then stdin's end */
    int sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
    if (sfd < 0) {
        fprintf(stderr, "cordon: mcp: signalfd: %s\n", strerror(errno));
        free(options);
        return CORDON_EXIT_SETUP;
    }
    if (session) {
        status = probe_session(session);
        if (status != 0)
            goto out;
    } else {
        snprintf(own_name, sizeof own_name, "mcp-%d", (int)getpid());
        status = start_session(own_name, rest, options);
        if (status != 0)
            goto out;
        fprintf(stderr, "cordon: mcp: serving session '%s'\n", own_name);
    }
    server.session = session ? session : own_name;
    /* Our own session may end by itself (--idle-timeout, --max-lifetime): then so do we, rather
     * than answer every later call with an error. One started by others is theirs to end. */
    int end_fd = session ? -1 : watch_session_end(own_name);
    bool ended = serve(sfd, end_fd);
    if (ended) {
        wait_calls();
        say_session_ended(own_name);
    }
    mcp_watch_stop();
    mcp_wire_shutdown();
    if (!session && !ended && csess_stop(own_name) != 0)
        status = CORDON_EXIT_SETUP;
    if (end_fd >= 0)
        close(end_fd);
    mcp_wire_close();
out:
    close(sfd);
    free(options);
    return status;
}
