/* session_rerun.c — see session_rerun.h. The child is watched through a pidfd, so the
 * controller's signal handling (which waits for init only) needs no change; its end is
 * reported once both its output pipes are drained and it has been reaped. */
#include "session/session_rerun.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/escalate.h"
#include "base/log.h"
#include "base/util.h"

struct rerun {
    struct ev_loop *loop;
    struct rerun_callbacks cb;
    pid_t pid;
    int pidfd, out, err;
    struct ev_io pid_w, out_w, err_w;
    int status;
    bool reaped;
};

static void maybe_done(struct rerun *r)
{
    if (!r->reaped || r->out >= 0 || r->err >= 0 || !r->cb.done)
        return;
    int code = WIFSIGNALED(r->status) ? 128 + WTERMSIG(r->status) : WEXITSTATUS(r->status);
    void (*done)(void *, int) = r->cb.done;
    r->cb.done = NULL; /* once */
    done(r->cb.ctx, code);
}

static void on_output(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)events;
    struct rerun *r = w->data;
    int *fd = w == &r->out_w ? &r->out : &r->err;
    char buf[65536];
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        ev_io_stop(loop, w);
        close(*fd);
        *fd = -1;
        maybe_done(r);
        return;
    }
    if (r->cb.output)
        r->cb.output(r->cb.ctx, w == &r->out_w ? 1 : 2, buf, (size_t)n);
}

static void on_child_end(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)events;
    struct rerun *r = w->data;
    if (waitpid(r->pid, &r->status, WNOHANG) != r->pid)
        return;
    ev_io_stop(loop, w);
    close(r->pidfd);
    r->pidfd = -1;
    r->reaped = true;
    /* What it left running may hold the pipes: its group goes with it. */
    (void)kill(-r->pid, SIGKILL);
    maybe_done(r);
}

struct rerun *rerun_start(struct ev_loop *loop, const struct sandbox_config *cfg,
                          const char *command, const struct rerun_callbacks *cb, char *err,
                          size_t errlen)
{
    int o[2], e[2];
    if (pipe2(o, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return NULL;
    }
    if (pipe2(e, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        close(o[0]), close(o[1]);
        return NULL;
    }
    struct str_list env = {0};
    escalate_outside_environment(cfg, &env);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(o[1], 1) < 0 || dup2(e[1], 2) < 0)
            _exit(CORDON_EXIT_SETUP);
        if (chdir(cfg->cwd) < 0) {
            dprintf(2, "cordon: cannot enter %s: %s\n", cfg->cwd, strerror(errno));
            _exit(CORDON_EXIT_SETUP);
        }
        (void)close_range(3, ~0U, 0);
        extern char **environ;
        environ = env.items;
        execlp("bash", "bash", "-c", command, (char *)NULL);
        dprintf(2, "cordon: bash: %s\n", strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    str_list_free(&env);
    close(o[1]);
    close(e[1]);
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(o[0]), close(e[0]);
        return NULL;
    }
    setpgid(pid, pid);
    struct rerun *r = xcalloc(1, sizeof *r);
    r->loop = loop;
    r->cb = *cb;
    r->pid = pid;
    r->out = o[0];
    r->err = e[0];
    (void)fcntl(r->out, F_SETFL, O_NONBLOCK);
    (void)fcntl(r->err, F_SETFL, O_NONBLOCK);
    r->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (r->pidfd < 0) {
        LOG_E("session", "pidfd_open: %s: the re-run is killed", strerror(errno));
        (void)kill(-pid, SIGKILL);
        (void)waitpid(pid, &r->status, 0);
        r->reaped = true;
    } else {
        ev_io_start(loop, &r->pid_w, r->pidfd, EPOLLIN, on_child_end, r);
    }
    ev_io_start(loop, &r->out_w, r->out, EPOLLIN, on_output, r);
    ev_io_start(loop, &r->err_w, r->err, EPOLLIN, on_output, r);
    return r;
}

void rerun_free(struct rerun *r)
{
    if (!r)
        return;
    if (!r->reaped) {
        (void)kill(-r->pid, SIGKILL);
        (void)waitpid(r->pid, NULL, 0);
    }
    ev_io_stop(r->loop, &r->pid_w);
    ev_io_stop(r->loop, &r->out_w);
    ev_io_stop(r->loop, &r->err_w);
    if (r->pidfd >= 0)
        close(r->pidfd);
    if (r->out >= 0)
        close(r->out);
    if (r->err >= 0)
        close(r->err);
    free(r);
}
