/* session_start.c — `cordon session start NAME [OPTIONS] [--detach | --owner PID]`: checks
 * the name and its socket, then forks the session's controller, which makes the sandbox (init
 * as PID 1, as `cordon run` does), serves the control API and the egress proxy from one event
 * loop, and answers until `session stop`, its owner's exit (the process that ran `session
 * start`, or --owner PID; none with --detach), or a TERM/INT/HUP. The starting process fails
 * with the reason the controller or init printed, or, once the session answers, returns; but
 * when it runs in the foreground of a terminal (and not --detach), it becomes the session's
 * approver on that terminal instead: it execs `cordon approve --watch NAME` (same pid, same
 * terminal), so a person there answers the questions. It is not the owner: Ctrl-C there stops
 * answering, and the session's questions are then denied at once. */
#include "base/cli_opt.h"
#include "session/session_start.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/evloop.h"
#include "sandbox/root_writes.h"
#include "base/log.h"
#include "base/session_socket.h"
#include "controller/controller_setup.h"
#include "controller/sandbox_start.h"
#include "controller/guarded_trees.h"
#include "controller/repo_hold.h"
#include "controller/git_publish.h"
#include "controller/run_options.h"
#include "policy/lua_host.h"
#include "proxy/cred_rewrite.h"
#include "proxy/port_relay.h"
#include "proxy/proxy.h"
#include "proxy/tls_terminate.h"
#include "sandbox/init.h"
#include "sandbox/sandbox_config.h"
#include "sandbox/userns.h"
#include "session/api_server.h"
#include "session/session_ctl.h"
#include "session/session_expiry.h"
#include "session/session_init.h"
#include "session/session_paths.h"
#include "sandbox/init_wire.h"
#include "base/util.h"

struct controller {
    struct ev_loop loop;
    const char *name;
    char socket_path[PATH_MAX], state_path[PATH_MAX], log_path[PATH_MAX];
    pid_t init_pid;
    int ctl, sfd, owner_fd;
    struct ev_io sig_w, owner_w;
    struct proxy *proxy;
    struct port_relay *ports; /* host ports and published ports (with a network namespace) */
    struct git_publish *git;  /* answers the sandbox's renames (git config writes) */
    struct api_server *api;
    struct session *session;
    bool ended;
};

/* Listen on path. The socket is bound and listening under a temporary name first and then
 * linked to path, so that no client ever finds a socket there that refuses connections (which
 * would look stale), and link() fails if another session took the name meanwhile. */
static int listen_on(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char tmp[sizeof sa.sun_path];
    int n = snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp) {
        snprintf(err, errlen, "the socket path %.200s is too long for a Unix socket", path);
        return -1;
    }
    memcpy(sa.sun_path, tmp, (size_t)n + 1);
    (void)unlink(tmp);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    mode_t old = umask(077); /* the socket is 0600 from its creation */
    int r = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (r == 0)
        r = listen(fd, 128);
    if (r == 0 && (r = link(tmp, path)) < 0 && errno == EEXIST)
        snprintf(err, errlen, "a session with this name has just been started");
    else if (r < 0)
        snprintf(err, errlen, "cannot listen on %.200s: %s", path, strerror(errno));
    (void)unlink(tmp);
    if (r < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void on_session_ended(void *ctx)
{
    struct controller *c = ctx;
    c->ended = true;
}

static void on_signal(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    struct controller *c = w->data;
    struct signalfd_siginfo si;
    while (read(c->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD) {
            if (waitpid(c->init_pid, NULL, WNOHANG) == c->init_pid)
                session_init_gone(c->session);
        } else {
            session_shut_down(c->session, SESSION_END_KILLED, "the controller got a signal");
        }
    }
}

static void on_owner_exit(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)events;
    struct controller *c = w->data;
    ev_io_stop(loop, w);
    session_shut_down(c->session, SESSION_END_OWNER, "its owner exited");
}

/* A published port's connection into the sandbox, through the session's link to init (none
 * arrives before the session exists: the loop runs only then). */
static int connect_inside(void *ctx, unsigned id, unsigned port)
{
    struct controller *c = ctx;
    return c->session ? session_connect_inside(c->session, id, port) : -EAGAIN;
}

static int block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE};
    for (size_t i = 0; i < ARRAY_LEN(sigs); i++)
        sigaddset(&set, sigs[i]);
    sigprocmask(SIG_BLOCK, &set, NULL);
    sigdelset(&set, SIGPIPE);
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The session is over: say whether the memory limit killed anything in it (the session's
 * log), make sure init is gone (it is killed when the session ends; nothing outlives it) and
 * remove the cgroup. init_pid is this process's child, so no other process can have its pid
 * until it is reaped here. */
static void remove_cgroup(const struct sandbox_config *cfg, struct cgroup *cg, pid_t init_pid)
{
    char oom[160], pids[160];
    controller_oom_line(cfg, cg, oom, sizeof oom);
    controller_pids_line(cfg, cg, pids, sizeof pids);
    if (oom[0])
        LOG_W("session", "%s", oom);
    if (pids[0])
        LOG_W("session", "%s", pids);
    if (waitpid(init_pid, NULL, WNOHANG) == 0) {
        (void)kill(init_pid, SIGKILL);
        (void)waitpid(init_pid, NULL, 0);
    }
    int r = cgroup_remove(cg);
    if (r < 0)
        LOG_W("limits", "cannot remove the session's cgroup %s: %s", cg->dirs[0], strerror(-r));
}

/* The options session start was given, to repeat in a fork (session_fork.h): every word but
 * NAME, --detach, --owner PID and --review-fork FORK (each also as --opt=value). Newly
 * allocated, NULL-terminated; the strings borrowed from argv. */
static char **start_options(int argc, char **argv, const char *name)
{
    char **out = xcalloc((size_t)argc + 1, sizeof *out);
    size_t k = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (a == name || strcmp(a, "--detach") == 0 || strncmp(a, "--detach=", 9) == 0 ||
            strncmp(a, "--owner=", 8) == 0 || strncmp(a, "--review-fork=", 14) == 0)
            continue;
        if (strcmp(a, "--owner") == 0 || strcmp(a, "--review-fork") == 0) {
            i++;
            continue;
        }
        out[k++] = argv[i];
    }
    return out;
}

/* The controller, in the forked child. Returns the exit status of the controller process. */
static int controller_main(struct controller *c, struct run_flags *flags, const char *cwd,
                           int ready_fd, pid_t owner, char **start_argv)
{
    char err[1024];
    struct sandbox_config cfg = {0};
    struct sc_program prog = {0};
    if (ev_loop_init(&c->loop) < 0)
        die_errno("epoll");
    int listen_fd = listen_on(c->socket_path, err, sizeof err);
    if (listen_fd < 0)
        die("session start: %s", err);
    int alive[2];
    if (pipe2(alive, O_CLOEXEC) < 0)
        die_errno("socketpair");
    if ((c->sfd = block_signals()) < 0)
        die_errno("signalfd");

    /* The start-up (sandbox_start.h): init first, while this process is small, as `cordon run`
     * does; a root caller's maps once the profile is resolved (the shift depends on it:
     * root_writes.h); the session's sandbox (init, every exec, the fresh sandboxes init forks
     * for exec_per_command) shares one cgroup, entered before init has its configuration. */
    uid_t uid = getuid();
    struct sandbox_start start;
    sandbox_start_prepare(&start, SANDBOX_START_SESSION);
    start.flags = flags;
    start.cwd = cwd;
    start.expect_root_shift = uid == 0 && ns_may_write_wide_maps();
    start.init_main = session_init_main;
    start.ip.parent_alive_fd = alive[0];
    start.ip.uid = uid;
    start.ip.gid = getgid();
    sigemptyset(&start.ip.command_mask);
    start.alive_w = alive[1];
    start.child_close[0] = c->sfd;
    start.child_close[1] = listen_fd;
    start.child_close[2] = ready_fd;
    start.child_close[3] = c->owner_fd;
    char session_word[] = "session";
    char *label[] = {session_word, (char *)c->name, NULL};
    start.handover.loop = &c->loop;
    start.handover.label = label;
    start.handover.log_unit = "session";
    start.cfg = &cfg;
    start.prog = &prog;
    int r = sandbox_start_up(&start);
    c->init_pid = start.init_pid;
    c->ctl = start.ctl;
    c->git = start.handover.git;
    c->ports = start.handover.ports;
    struct guarded_trees *guard = start.guard;
    bool have_cgroup = start.have_cgroup;
    pid_t pid = start.init_pid;
    int http_fd = start.handover.http_fd, socks_fd = start.handover.socks_fd;
    /* Published ports and a published port's connections (with a network namespace). */
    if (r == 0 && !cfg.net_unrestricted && !c->ports)
        c->ports = port_relay_new(&c->loop, label);
    if (r == 0 && c->ports)
        port_relay_set_inside(c->ports, connect_inside, c);
    if (r == 0 && controller_publish(c->ports, flags, start.err, sizeof start.err) < 0)
        r = -1;
    /* The view is built: every repository held inside as it appears (guarded_trees.h). */
    if (r == 0) {
        (void)guarded_trees_watch(guard, start.hold, start.hold_err);
        start.hold = NULL;
    }
    if (r < 0) {
        sandbox_start_abandon(&start);
        repo_hold_stop(start.hold);
        git_publish_stop(c->git);
        unlink(c->socket_path);
        if (r == -1)
            fprintf(stderr, "cordon: %s\n", start.err);
        guarded_trees_free(guard);
        port_relay_free(c->ports);
        free(start.ro_absent);
        return CORDON_EXIT_SETUP;
    }
    sc_program_free(&prog);
    if (http_fd >= 0 && socks_fd >= 0) {
        c->proxy = proxy_new(&c->loop, http_fd, socks_fd, label);
        init_handover_attach(&start.handover, c->proxy);
        if (!c->proxy)
            LOG_E("session", "the proxy could not start: commands get no network");
        else
            proxy_set_credentials(c->proxy, start.creds);
        if (c->proxy)
            proxy_set_tls(c->proxy, start.tls);
        start.tls = c->proxy ? NULL : start.tls;
        start.creds = c->proxy ? NULL : start.creds;
    }
    tls_terminator_free(start.tls); /* before the set its threads would read */
    cred_set_free(start.creds);
    (void)fcntl(c->ctl, F_SETFL, O_NONBLOCK);
    /* Room for several commands of up to INIT_WIRE_MAX_COMMAND bytes queued to init at once. */
    int sndbuf = 4 * INIT_WIRE_MAX_COMMAND;
    (void)setsockopt(c->ctl, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    struct session_params sp_ = {.name = c->name,
                                 .socket_path = c->socket_path,
                                 .state_path = c->state_path,
                                 .cfg = &cfg,
                                 .guard = guard,
                                 .cgroup = have_cgroup ? &start.cgroup.cg : NULL,
                                 .ctl = c->ctl,
                                 .init_pid = pid,
                                 .owner_pid = owner,
                                 .proxy = c->proxy,
                                 .ports = c->ports,
                                 .on_ended = on_session_ended,
                                 .start_argv = start_argv,
                                 .start_cwd = cwd,
                                 .ctx = c};
    c->session = session_new(&c->loop, &sp_);
    c->api =
        api_server_start(&c->loop, listen_fd, session_handle_request, c->session, err, sizeof err);
    if (!c->api) {
        unlink(c->socket_path);
        die("session start: %s", err);
    }
    session_expiry_start(c->session, c->api);
    ev_io_start(&c->loop, &c->sig_w, c->sfd, EPOLLIN, on_signal, c);
    if (c->owner_fd >= 0)
        ev_io_start(&c->loop, &c->owner_w, c->owner_fd, EPOLLIN, on_owner_exit, c);

    /* Ready: the starter returns; from now on the controller's diagnostics go to its log. */
    (void)write_all(ready_fd, "R", 1);
    close(ready_fd);
    int logfd = open(c->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (logfd >= 0) {
        dup2(logfd, STDERR_FILENO);
        close(logfd);
    }

    while (!c->ended) {
        int n = ev_run_once(&c->loop, -1);
        if (c->proxy)
            proxy_after_round(c->proxy);
        port_relay_after_round(c->ports);
        api_server_after_round(c->api);
        session_after_round(c->session);
        if (n < 0 && n != -EINTR) {
            LOG_E("session", "event loop: %s", strerror(-n));
            session_shut_down(c->session, SESSION_END_FAILED, "the event loop failed");
            break;
        }
    }
    /* The published ports go before the socket does: once session stop sees the session gone,
     * nothing listens on the host for it. */
    port_relay_close_all(c->ports);
    /* Let the last answers (the stop request's among them) go out. */
    for (int i = 0; i < 20; i++) {
        api_server_after_round(c->api);
        if (ev_run_once(&c->loop, 5) <= 0)
            break;
    }
    if (have_cgroup) /* before the log is looked at: it may say something */
        remove_cgroup(&cfg, &start.cgroup.cg, pid);
    git_publish_stop(c->git);
    unlink(c->socket_path);
    unlink(c->state_path);
    struct stat st;
    if (stat(c->log_path, &st) == 0 && st.st_size == 0)
        unlink(c->log_path); /* the controller had nothing to say */
    api_server_stop(c->api);
    session_free(c->session);
    port_relay_free(c->ports);
    proxy_free(c->proxy);
    lh_close();
    sandbox_config_free(&cfg);
    close(alive[1]);
    return 0;
}

/* --owner PID: a live process of this user (its real uid), not the starter itself (which
 * returns at once). 0 with *pid, or -1 with one line in err. */
static int owner_check(const char *text, pid_t *pid, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v <= 0 || v > INT_MAX) {
        snprintf(err, errlen, "--owner takes a process id (a positive integer), not '%.60s'", text);
        return -1;
    }
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", v);
    FILE *f = fopen(path, "re");
    long uid = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Uid: %ld", &uid) == 1)
            break;
    if (f)
        fclose(f);
    if (!f || uid < 0) {
        snprintf(err, errlen, "--owner %ld: no such process", v);
        return -1;
    }
    if ((uid_t)uid != getuid()) {
        snprintf(err, errlen, "--owner %ld: the process belongs to another user (uid %ld)", v, uid);
        return -1;
    }
    if ((pid_t)v == getpid()) {
        snprintf(err, errlen,
                 "--owner %ld: that is session start itself, which returns once the session "
                 "answers",
                 v);
        return -1;
    }
    *pid = (pid_t)v;
    return 0;
}

/* The starter stays on its terminal as the session's approver: `cordon approve --watch NAME`
 * of the cordon beside this program, in this process. 0 when it cannot (said why): the
 * session runs on, without this approver. */
static int become_approver(const char *name)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0)
        self[n] = '\0';
    char *slash = n > 0 ? strrchr(self, '/') : NULL;
    if (slash) {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%.*s/cordon", (int)(slash - self), self);
        printf(
            "cordon: session '%s' started; this terminal answers its approvals (Ctrl-C stops answering, "
            "not the session: cordon session stop %s ends it)\n",
            name, name);
        fflush(stdout);
        char *argv[] = {path, (char *)"approve", (char *)"--watch", (char *)name, NULL};
        execv(path, argv);
    }
    fprintf(
        stderr,
        "cordon: session start: the session runs, but this terminal cannot answer its approvals "
        "(cannot run cordon approve --watch: %s)\n",
        strerror(errno));
    return 0;
}

int session_start_main(int argc, char **argv)
{
    char err[1024];
    struct run_flags flags;
    const char *name;
    int parsed = cli_parse_session_start(argc, argv, &flags, &name, err, sizeof err);
    if (parsed != 0) {
        if (parsed > 0)
            cli_session_start_usage(stdout);
        else
            fprintf(stderr, "cordon: %s\n", err);
        run_flags_free(&flags);
        return parsed > 0 ? 0 : CORDON_EXIT_SETUP;
    }
    if (!csock_name_valid(name)) {
        run_flags_free(&flags);
        return cli_usage_error("session start",
                               "invalid session name '%s' (letters, digits, '_', "
                               "'.', '-'; at most %d; not starting with '.' or '-')",
                               name, CSOCK_NAME_MAX);
    }
    struct controller c = {.name = name, .ctl = -1, .sfd = -1, .owner_fd = -1};
    err[0] = '\0'; /* only session_dir_ensure says why; the others fail for a too long path */
    if (session_dir_ensure(err, sizeof err) < 0 ||
        csock_path(name, c.socket_path, sizeof c.socket_path) < 0 || /* the clients' rule */
        session_file(name, "jobs.json", c.state_path, sizeof c.state_path) < 0 ||
        session_file(name, "log", c.log_path, sizeof c.log_path) < 0) {
        fprintf(stderr, "cordon: session start: %s\n",
                err[0] ? err
                       : "the session's socket path is too long "
                         "for a Unix socket (a shorter XDG_RUNTIME_DIR or name)");
        run_flags_free(&flags);
        return CORDON_EXIT_SETUP;
    }
    struct stat st;
    if (lstat(c.socket_path, &st) == 0) {
        /* one that answers is a live session; one that refuses, the stale socket of one that died */
        int alive = csock_probe(c.socket_path);
        if (alive != 0) {
            if (alive > 0)
                fprintf(stderr,
                        "cordon: session start: a session named '%s' is already running (stop "
                        "it with: cordon session stop %s)\n",
                        name, name);
            else
                fprintf(stderr,
                        "cordon: session start: cannot tell whether %s is a running session: "
                        "%s\n",
                        c.socket_path, strerror(-alive));
            run_flags_free(&flags);
            return CORDON_EXIT_SETUP;
        }
        csock_remove_stale(c.socket_path);
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        die_errno("cannot read the current directory");
    pid_t owner = 0;
    if (flags.owner && owner_check(flags.owner, &owner, err, sizeof err) < 0) {
        fprintf(stderr, "cordon: session start: %s\n", err);
        run_flags_free(&flags);
        return CORDON_EXIT_SETUP;
    }
    if (!flags.detach) {
        /* The owner is --owner PID, or the process that ran us; its exit ends the session. */
        if (!owner)
            owner = getppid();
        c.owner_fd = (int)syscall(SYS_pidfd_open, owner, 0);
        if (c.owner_fd < 0)
            die_errno("session start: cannot watch the owner process %d (use --detach?)",
                      (int)owner);
    }
    /* A person at this terminal can answer the session's questions (see the top comment). */
    bool approver = !flags.detach && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
                    tcgetpgrp(STDIN_FILENO) == getpgrp();
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) < 0)
        die_errno("pipe");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        die_errno("fork");
    if (pid == 0) {
        close(ready[0]);
        setsid(); /* no terminal, no job control of the caller's shell */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            close(null);
        }
        char **start_argv = start_options(argc, argv, name);
        int code = controller_main(&c, &flags, cwd, ready[1], owner, start_argv);
        free(start_argv);
        run_flags_free(&flags);
        _exit(code);
    }
    close(ready[1]);
    if (c.owner_fd >= 0)
        close(c.owner_fd);
    run_flags_free(&flags);
    char byte = 0;
    ssize_t n;
    RETRY_EINTR(n, read(ready[0], &byte, 1));
    close(ready[0]);
    if (n == 1 && byte == 'R')
        return approver ? become_approver(name) : 0;
    int st2 = 0;
    (void)waitpid(pid, &st2, 0);
    if (WIFEXITED(st2) && WEXITSTATUS(st2) == 0)
        fprintf(stderr, "cordon: session start: the session '%s' failed to start\n", name);
    return CORDON_EXIT_SETUP;
}
