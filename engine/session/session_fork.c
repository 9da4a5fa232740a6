/* session_fork.c — see session_fork.h. */
#include "session/session_fork.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/json_write.h"
#include "base/log.h"
#include "base/session_socket.h"
#include "base/util.h"
#include "controller/review_report.h"
#include "sandbox/review_copy.h"
#include "sandbox/review_layer.h"
#include "sandbox/sandbox_config.h"
#include "session/session_ctl.h"
#include "session/session_jobs.h"

/* One fork being started: the child running `session start NEW`, watched by its pidfd. */
struct fork_start {
    struct ev_loop *loop;
    struct api_request *req; /* NULL once the client has gone */
    char *name, *layer, *workspace;
    bool copied;
    pid_t pid;
    int pidfd, out; /* the child's exit; its stdout and stderr (non-blocking) */
    struct ev_io w;
};

/* The fork begins where this session's layer is: every pending path recorded first (the host's
 * copy as the sandbox that wrote it may have seen it: review_layer.h), so the copy carries the
 * records apply judges conflicts by, and the fork's `started` is this layer's, so a path written
 * meanwhile and recorded by the fork's start is judged against the same start. 0, or -1 with
 * one line in err. */
static int copy_from(const char *layer, const char *ws, const char *dst, char *err, size_t errlen)
{
    struct review_list pending = {0};
    if (review_layer_list(layer, ws, &pending, err, errlen) < 0)
        return -1;
    review_layer_record(layer, ws, &pending);
    review_list_free(&pending);
    /* review_copy.h: what is pending only, as it is now */
    if (review_layer_copy(layer, dst, err, errlen) < 0)
        return -1;
    char *from = xasprintf("%s/started", layer), *to = xasprintf("%s/started", dst);
    struct stat st;
    int fd =
        stat(from, &st) == 0 ? open(to, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    if (fd >= 0) {
        struct timespec times[2] = {st.st_atim, st.st_mtim};
        (void)futimens(fd, times);
        close(fd);
    }
    free(from);
    free(to);
    return 0;
}

static void fork_start_free(struct fork_start *f)
{
    if (f->pidfd >= 0) {
        ev_io_stop(f->loop, &f->w);
        close(f->pidfd);
    }
    if (f->out >= 0)
        close(f->out);
    free(f->name);
    free(f->layer);
    free(f->workspace);
    free(f);
}

static void on_client_gone(void *ctx, struct api_request *req)
{
    (void)req;
    struct fork_start *f = ctx;
    f->req = NULL; /* the fork still starts; nobody hears how it went */
}

/* A fork layer this request made and nobody used: gone again (it holds copies only). */
static void drop_layer(const char *layer)
{
    char *forks = xstrdup(layer);
    char *slash = strrchr(forks, '/');
    *slash = '\0';
    int dfd = open(forks, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) {
        (void)review_remove_tree(dfd, slash + 1);
        close(dfd);
    }
    free(forks);
}

static void on_started(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    struct fork_start *f = w->data;
    int st = 0;
    pid_t w_pid = waitpid(f->pid, &st, WNOHANG);
    if (w_pid == 0)
        return;
    char said[1024];
    ssize_t n = read(f->out, said, sizeof said - 1);
    said[n > 0 ? n : 0] = '\0';
    /* the starter's last line says why ("cordon: session start: ...") */
    char *end = said + strlen(said);
    while (end > said && (end[-1] == '\n' || end[-1] == ' '))
        *--end = '\0';
    char *line = strrchr(said, '\n');
    line = line ? line + 1 : said;
    if (strncmp(line, "cordon: ", 8) == 0)
        line += 8;
    char sock_path[PATH_MAX];
    bool ok = w_pid == f->pid ? WIFEXITED(st) && WEXITSTATUS(st) == 0
                              /* reaped elsewhere: the fork started when its socket answers */
                              : csock_path(f->name, sock_path, sizeof sock_path) == 0 &&
                                    csock_probe(sock_path) > 0;
    if (!ok) {
        LOG_W("session", "the fork '%s' did not start: %s", f->name,
              line[0] ? line : "(no reason)");
        drop_layer(f->layer);
    }
    if (f->req) {
        struct api_request *req = f->req;
        f->req = NULL;
        api_on_gone(req, NULL, NULL);
        if (!ok) {
            api_respond_error(req, 500, "the fork '%s' did not start: %s", f->name,
                              line[0] ? line : "session start failed");
        } else {
            char sock[PATH_MAX];
            struct json_buf b = {0};
            json_buf_lit(&b, "{\"name\":");
            json_buf_cstr_or_null(&b, f->name);
            json_buf_lit(&b, ",\"socket\":");
            json_buf_cstr_or_null(&b, csock_path(f->name, sock, sizeof sock) == 0 ? sock : NULL);
            json_buf_lit(&b, ",\"workspace\":");
            json_buf_cstr_or_null(&b, f->workspace);
            json_buf_lit(&b, ",\"layer\":");
            json_buf_cstr_or_null(&b, f->layer);
            json_buf_printf(&b, ",\"pending_copied\":%s}", f->copied ? "true" : "false");
            api_respond(req, 200, NULL, b.data, b.len);
            json_buf_free(&b);
        }
    }
    fork_start_free(f);
}

/* The words of `cordon-session session start NEW ...` (argv[0] the program), newly allocated
 * (the strings borrowed). */
static char **start_words(struct session *s, const char *exe, const char *name, char *owner)
{
    size_t n = 0;
    while (s->p.start_argv && s->p.start_argv[n])
        n++;
    char **w = xcalloc(n + 12, sizeof *w);
    size_t k = 0;
    w[k++] = (char *)exe;
    w[k++] = (char *)"session";
    w[k++] = (char *)"start";
    w[k++] = (char *)name;
    for (size_t i = 0; i < n; i++)
        w[k++] = s->p.start_argv[i];
    w[k++] = (char *)"--review";
    w[k++] = (char *)"--review-fork";
    w[k++] = (char *)name;
    if (s->p.owner_pid > 0) {
        snprintf(owner, 24, "%d", (int)s->p.owner_pid);
        w[k++] = (char *)"--owner";
        w[k++] = owner;
    } else {
        w[k++] = (char *)"--detach";
    }
    w[k] = NULL;
    return w;
}

/* Fork and exec the starter of NEW into f (its pid, pidfd, output). 0, or -1 with errno. */
static int spawn_start(struct session *s, struct fork_start *f)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    int pipe_fd[2];
    if (pipe2(pipe_fd, O_CLOEXEC) < 0)
        return -1;
    char owner[24];
    char **words = start_words(s, exe, f->name, owner);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL); /* the controller's blocked signals are its own */
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(pipe_fd[1], STDOUT_FILENO) < 0 ||
            dup2(pipe_fd[1], STDERR_FILENO) < 0)
            _exit(CORDON_EXIT_SETUP);
        /* nothing of this controller's (its sockets, its link to init) reaches the fork's */
        if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0)
            for (int fd = 3; fd < 1024; fd++)
                close(fd);
        if (s->p.start_cwd && chdir(s->p.start_cwd) < 0)
            _exit(CORDON_EXIT_SETUP);
        execv(exe, words);
        _exit(CORDON_EXIT_SETUP);
    }
    int e = errno;
    free(words);
    close(pipe_fd[1]);
    if (pid < 0) {
        close(pipe_fd[0]);
        errno = e;
        return -1;
    }
    f->pid = pid;
    f->out = pipe_fd[0];
    (void)fcntl(f->out, F_SETFL, O_NONBLOCK);
    f->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (f->pidfd < 0) {
        e = errno;
        (void)kill(pid, SIGKILL);
        (void)waitpid(pid, NULL, 0);
        errno = e;
        return -1;
    }
    return 0;
}

void session_op_fork(struct session *s, struct api_request *req, const char *name)
{
    const struct sandbox_config *cfg = s->p.cfg;
    char sock[PATH_MAX], err[512];
    if (!cfg->workspace || cfg->workspace_readonly) {
        api_respond_error(req, 409,
                          "session '%s' has no writable workspace to fork (a read-only workspace "
                          "has nothing pending)",
                          s->p.name);
        return;
    }
    if (s->shutting_down) {
        api_respond_error(req, 409, "session '%s' is stopping", s->p.name);
        return;
    }
    if (csock_path(name, sock, sizeof sock) < 0) {
        api_respond_error(req, 400, "the socket path of '%s' is too long for a Unix socket", name);
        return;
    }
    struct stat st;
    if (strcmp(name, s->p.name) == 0 || (lstat(sock, &st) == 0 && csock_probe(sock) > 0)) {
        api_respond_error(
            req, 409, "a session named '%s' is already running (a fork needs a new name)", name);
        return;
    }
    char *main_layer = review_layer_dir(cfg->workspace);
    char *dir = main_layer ? review_fork_dir(main_layer, name) : NULL;
    free(main_layer);
    if (!dir) {
        api_respond_error(req, 500, "no state folder for the fork's layer (HOME, XDG_STATE_HOME)");
        return;
    }
    if (review_layer_exists(dir)) {
        struct review_list l = {0};
        int r = review_layer_list(dir, cfg->workspace, &l, err, sizeof err);
        size_t pending = l.len;
        review_list_free(&l);
        if (r < 0 || pending > 0) {
            api_respond_error(req, 409,
                              "the fork layer '%s' of %s still holds pending changes: cordon "
                              "review --fork %s, then apply or discard them (cordon discard "
                              "--fork %s removes it)",
                              name, cfg->workspace, name, name);
            free(dir);
            return;
        }
        drop_layer(dir); /* an applied fork's empty layer: its records begin again */
    }
    free(dir);
    struct fork_start *f = xcalloc(1, sizeof *f);
    f->loop = s->loop;
    f->pidfd = f->out = -1;
    f->name = xstrdup(name);
    f->workspace = xstrdup(cfg->workspace);
    if (review_fork_make(cfg->workspace, name, &f->layer, err, sizeof err) < 0) {
        api_respond_error(req, 500, "%s", err);
        fork_start_free(f);
        return;
    }
    /* What this session has pending is the fork's start; without review mode the host's
     * workspace is its base and its layer starts empty. */
    if (cfg->review && cfg->review_layer) {
        if (copy_from(cfg->review_layer, cfg->workspace, f->layer, err, sizeof err) < 0) {
            drop_layer(f->layer);
            api_respond_error(req, 500, "%s", err);
            fork_start_free(f);
            return;
        }
        f->copied = true;
    }
    if (spawn_start(s, f) < 0) {
        drop_layer(f->layer);
        api_respond_error(req, 500, "cannot start the fork's session: %s", strerror(errno));
        fork_start_free(f);
        return;
    }
    f->req = req;
    api_on_gone(req, on_client_gone, f);
    ev_io_start(f->loop, &f->w, f->pidfd, EPOLLIN, on_started, f);
}

void session_op_review(struct session *s, struct api_request *req)
{
    const struct sandbox_config *cfg = s->p.cfg;
    if (!cfg->review || !cfg->review_layer || !cfg->workspace) {
        api_respond_error(req, 409,
                          "session '%s' is not in review mode: its writes reach the host's "
                          "workspace at once (session start --review keeps them pending)",
                          s->p.name);
        return;
    }
    /* a fork's layer is <the workspace's layer>/forks/NAME (review_fork_dir) */
    char *main_layer = review_layer_dir(cfg->workspace);
    const char *fork = NULL;
    size_t n = main_layer ? strlen(main_layer) : 0;
    if (n && strncmp(cfg->review_layer, main_layer, n) == 0 &&
        strncmp(cfg->review_layer + n, "/forks/", 7) == 0)
        fork = cfg->review_layer + n + 7;
    struct json_buf b = {0};
    char err[512];
    if (review_report_json(cfg->workspace, cfg->review_layer, fork, &b, err, sizeof err) < 0)
        api_respond_error(req, 500, "%s", err);
    else
        api_respond(req, 200, NULL, b.data, b.len);
    json_buf_free(&b);
    free(main_layer);
}
