/* run.c — see run.h. The controller's loop is a poll over a signalfd, the control socket to
 * init and, with a pty, the caller's stdin and the pty master. It never exits before init has
 * been reaped, and it restores the caller's terminal on every path. */
#include "controller/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/capture.h"
#include "controller/credentials.h"
#include "controller/run_options.h"
#include "controller/controller_setup.h"
#include "controller/sandbox_start.h"
#include "controller/escalate.h"
#include "controller/guarded_trees.h"
#include "controller/repo_hold.h"
#include "controller/git_publish.h"
#include "base/clock.h"
#include "controller/prompt.h"
#include "base/evloop.h"
#include "sandbox/init.h"
#include "sandbox/init_wire.h"
#include "base/log.h"
#include "policy/lua_host.h"
#include "proxy/cred_rewrite.h"
#include "proxy/port_relay.h"
#include "proxy/proxy.h"
#include "proxy/tls_terminate.h"
#include "sandbox/pty.h"
#include "controller/refusal_report.h"
#include "controller/result_json.h"
#include "controller/trusted_changes.h"
#include "sandbox/root_writes.h"
#include "base/shell_quote.h"
#include "base/visible.h"
#include "sandbox/sandbox_config.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/userns.h"

extern char **environ;

static const int controller_signals[] = {SIGINT,  SIGTERM, SIGHUP,   SIGQUIT,
                                         SIGUSR1, SIGUSR2, SIGWINCH, SIGCHLD};

/* One output stream of the command (no pty): its pipe, where its bytes go, what is kept. */
struct output_stream {
    int fd;   /* read end, -1 when closed or unused */
    int dest; /* cordon's own stdout or stderr */
    bool dest_broken;
    bool mid_line; /* the last byte relayed to dest was not a newline */
    struct capture cap;
    struct ev_io w;
};

static void output_stream_init(struct output_stream *s, int fd, int dest,
                               const struct sandbox_config *cfg)
{
    s->fd = fd;
    s->dest = dest;
    s->dest_broken = false;
    s->mid_line = false;
    capture_init(&s->cap, cfg->capture_head, cfg->capture_tail);
    capture_watch(&s->cap, lh_refusal_markers());
}

/* A command printing faster than the relay fills the pipe; with room for more than the
 * capture's tail, what waits there tells the capture which bytes it need not copy nor scan
 * (capture_feed_ahead). Refused (the user's pipe quota): the default size stays. */
static void widen_output_pipe(int fd)
{
    (void)fcntl(fd, F_SETPIPE_SZ, 1024 * 1024);
}

/* Bytes already waiting in fd after a read (0 when unknown): the capture need not keep what
 * those will push out of its tail. */
static uint64_t bytes_waiting(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 && n > 0 ? (uint64_t)n : 0;
}

/* The caller's terminal as the proxy's owner: one question shown at a time, answered with one
 * key while the relay of stdin to the command is held back. */
struct pending_question {
    unsigned id;
    char text[512];
};

struct terminal_owner {
    int fd; /* where questions are written (a terminal) */
    struct pending_question queue[16];
    size_t n; /* queue[0] is the one shown, when n > 0 */
};

static void owner_show(struct terminal_owner *o)
{
    if (o->n == 0)
        return;
    /* The host name comes from the sandboxed command: prompt_show renders it. */
    prompt_show(o->fd, o->queue[0].text,
                "        [c] allow for this command  [s] allow for the session  [D] deny: ");
}

static void owner_pop(struct terminal_owner *o)
{
    memmove(&o->queue[0], &o->queue[1], (o->n - 1) * sizeof o->queue[0]);
    o->n--;
    owner_show(o);
}

static void owner_ask(void *ctx, unsigned id, const char *text)
{
    struct terminal_owner *o = ctx;
    if (o->n == ARRAY_LEN(o->queue))
        return; /* too many at once: the rest time out (deny) */
    o->queue[o->n].id = id;
    snprintf(o->queue[o->n].text, sizeof o->queue[o->n].text, "%s", text);
    if (++o->n == 1)
        owner_show(o);
}

static void owner_closed(void *ctx, unsigned id, const char *why)
{
    struct terminal_owner *o = ctx;
    for (size_t i = 0; i < o->n; i++) {
        if (o->queue[i].id != id)
            continue;
        if (i == 0) {
            prompt_say(o->fd, why);
            prompt_say(o->fd, "\r\n");
            owner_pop(o);
        } else {
            memmove(&o->queue[i], &o->queue[i + 1], (o->n - i - 1) * sizeof o->queue[0]);
            o->n--;
        }
        return;
    }
}

/* The state of one foreground run, owned by run_main. */
struct controller {
    struct ev_loop loop;
    struct sandbox_start st; /* the start-up: init, its socket, the cgroup, the guards */
    int sfd;                 /* signalfd */
    int master;              /* pty master, or -1 */
    bool tty_raw;
    struct termios saved_tty;
    bool have_status;
    struct init_wire_status status;
    int init_wait_status;
    bool init_done;
    struct ev_io sig_w, ctl_w, master_w, stdin_w;
    struct proxy *proxy;           /* NULL without a network namespace */
    struct port_relay *ports;      /* the host ports granted (network.host_ports), or NULL */
    struct git_publish *git;       /* answers the sandbox's renames (git config writes) */
    struct output_stream out, err; /* the command's stdout and stderr without a pty */
    struct terminal_owner owner;   /* questions about network destinations, with a pty */
    struct ev_timer guard_t;
    struct ev_io watch_w;             /* the repositories' watcher found one (guarded_trees_fd) */
    struct trusted_snapshot *trusted; /* the host-trusted paths before the command, or NULL */
};

/* Undo what the command changed in the workspace's repositories that would make the host's git
 * run a program, one line each (guarded_trees.h). */
static void guard_check(struct controller *c, bool tick)
{
    struct str_list lines = {0};
    if (c->st.guard)
        (void)(tick ? guarded_trees_tick(c->st.guard, &lines, true)
                    : guarded_trees_check(c->st.guard, &lines));
    for (size_t i = 0; i < lines.len; i++) {
        char *shown = visible_dup(lines.items[i]); /* names a command chose */
        fprintf(stderr, "cordon: %s%s", shown, c->tty_raw ? "\r\n" : "\n");
        free(shown);
    }
    str_list_free(&lines);
}

/* While the command runs, every GUARD_PERIOD_MS (the known repositories; now and then all:
 * git_guard_tick): an editor on the host runs `git status` by itself every few seconds, so what
 * the command plants is undone within that period, not only when it ends. */
#define GUARD_PERIOD_MS 1000
static void on_guard_timer(struct ev_loop *loop, struct ev_timer *t)
{
    struct controller *c = t->data;
    guard_check(c, true);
    ev_timer_start(loop, &c->guard_t, GUARD_PERIOD_MS, on_guard_timer, c);
}

/* The watcher found repositories (held inside already): looked at now, not at the next tick. */
static void on_repo_found(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    guard_check(w->data, true);
}

static void handle_signal(struct controller *c, int sig)
{
    if (sig == SIGWINCH) {
        if (c->master >= 0)
            pty_copy_winsize(STDIN_FILENO, c->master);
    } else if (sig == SIGCHLD) {
        int st;
        if (waitpid(c->st.init_pid, &st, WNOHANG) == c->st.init_pid) {
            c->init_done = true;
            c->init_wait_status = st;
        }
    } else if (c->st.init_pid > 1) {
        (void)kill(c->st.init_pid, sig); /* init forwards it to the command's process group */
    }
}

static void on_signal(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)loop;
    (void)events;
    struct controller *c = w->data;
    struct signalfd_siginfo si;
    while (read(c->sfd, &si, sizeof si) == (ssize_t)sizeof si)
        handle_signal(c, (int)si.ssi_signo);
}

/* One message from init: its report of the command's end (INIT_WIRE_STATUS), or the answer to
 * a published port's INIT_WIRE_CONNECT (with the socket when it connects). */
static void read_status(struct controller *c)
{
    struct init_wire_msg m;
    struct init_wire_status status;
    int fds[2];
    long n = init_wire_recv(c->st.ctl, &m, &status, sizeof status, fds, MSG_DONTWAIT);
    if (n >= 0 && m.tag == INIT_WIRE_STATUS) {
        c->status = status;
        c->have_status = true;
    } else if (n >= 0 && m.tag == INIT_WIRE_CONNECTED && c->ports) {
        int got = fds[0] >= 0 ? fds[0] : m.value < 0 ? m.value : -EBADMSG;
        port_relay_inside_connected(c->ports, m.id, got);
        fds[0] = -1;
    }
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* A published port's connection: ask init for a socket connected inside (port_relay.h). */
static int connect_inside(void *ctx, unsigned id, unsigned port)
{
    struct controller *c = ctx;
    if (c->have_status)
        return -ESHUTDOWN; /* the command has ended: init serves nothing more */
    struct init_wire_msg m = {.tag = INIT_WIRE_CONNECT, .id = id, .value = (int32_t)port};
    return init_wire_send_flags(c->st.ctl, &m, NULL, 0, NULL, 0, MSG_DONTWAIT);
}

static void on_ctl(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    struct controller *c = w->data;
    read_status(c); /* the status, or a connect's answer (the watcher stays for the status) */
    if (c->have_status || (events & (EPOLLHUP | EPOLLERR)))
        ev_io_stop(loop, w);
}

/* Without a pty the command writes to pipes: the bytes go on to cordon's own stdout and stderr
 * unchanged, and a bounded head and tail of each is kept for refusal detection. */
static void on_output(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)events;
    struct output_stream *s = w->data;
    char buf[65536];
    ssize_t n = read(s->fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        ev_io_stop(loop, w);
        close(s->fd);
        s->fd = -1;
        return;
    }
    capture_feed_ahead(&s->cap, buf, (size_t)n, bytes_waiting(s->fd));
    s->mid_line = buf[n - 1] != '\n';
    if (!s->dest_broken && write_all(s->dest, buf, (size_t)n) < 0)
        s->dest_broken = true; /* the reader went away: keep draining so the command is not stuck */
}

/* Move what the pty master holds to cordon's stdout (also kept for refusal detection).
 * false once every slave is closed: the command and its children are done. */
static bool pump_master(struct controller *c)
{
    char buf[16384];
    ssize_t n = read(c->master, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return true;
    if (n <= 0)
        return false; /* EIO on a master whose slaves are all closed */
    capture_feed_ahead(&c->out.cap, buf, (size_t)n, bytes_waiting(c->master));
    c->out.mid_line = buf[n - 1] != '\n';
    if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0) { /* the caller's terminal went away */
    }
    return true;
}

static void on_master(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)events;
    struct controller *c = w->data;
    if (!pump_master(c)) {
        ev_io_stop(loop, w);
        ev_io_stop(loop, &c->stdin_w);
        close(c->master);
        c->master = -1;
    }
}

static void on_stdin(struct ev_loop *loop, struct ev_io *w, uint32_t events)
{
    (void)events;
    struct controller *c = w->data;
    if (c->owner.n > 0) { /* a question is shown: this key answers it */
        char key;
        if (read(STDIN_FILENO, &key, 1) != 1)
            return;
        enum prompt_answer pa = prompt_answer_of(key, "cCo", "sS");
        enum proxy_answer a = pa == PROMPT_ONCE      ? PROXY_ALLOW_COMMAND
                              : pa == PROMPT_SESSION ? PROXY_ALLOW_SESSION
                                                     : PROXY_DENY;
        prompt_say(c->owner.fd, prompt_outcome(true, pa));
        prompt_say(c->owner.fd, "\r\n");
        unsigned id = c->owner.queue[0].id;
        owner_pop(&c->owner);
        struct proxy_grant_terms t = {.by = "the terminal"};
        proxy_answer(c->proxy, id, a, &t);
        return;
    }
    if (pty_pump(STDIN_FILENO, c->master) <= 0)
        ev_io_stop(loop, w); /* caller's stdin ended; the command sees no EOF on a tty */
}

/* Runs until init has reported the command's status (init has then reaped everything else in
 * the sandbox; tearing the namespaces down is the kernel's business and need not be waited
 * for) or until init is gone without a report. Meanwhile the proxy serves the sandbox. */
static void supervise(struct controller *c)
{
    ev_io_start(&c->loop, &c->sig_w, c->sfd, EPOLLIN, on_signal, c);
    ev_io_start(&c->loop, &c->ctl_w, c->st.ctl, EPOLLIN, on_ctl, c);
    if (c->master >= 0) {
        ev_io_start(&c->loop, &c->master_w, c->master, EPOLLIN, on_master, c);
        ev_io_start(&c->loop, &c->stdin_w, STDIN_FILENO, EPOLLIN, on_stdin, c);
    }
    struct output_stream *streams[] = {&c->out, &c->err};
    for (int i = 0; i < 2; i++)
        if (streams[i]->fd >= 0)
            ev_io_start(&c->loop, &streams[i]->w, streams[i]->fd, EPOLLIN, on_output, streams[i]);
    if (c->st.guard)
        ev_timer_start(&c->loop, &c->guard_t, GUARD_PERIOD_MS, on_guard_timer, c);
    if (guarded_trees_fd(c->st.guard) >= 0)
        ev_io_start(&c->loop, &c->watch_w, guarded_trees_fd(c->st.guard), EPOLLIN, on_repo_found,
                    c);
    /* Until the status is in and the output pipes ended (init reaped every writer first). */
    while ((!c->init_done && !c->have_status) ||
           (c->have_status && (c->out.fd >= 0 || c->err.fd >= 0))) {
        int r = ev_run_once(&c->loop, -1);
        if (c->proxy)
            proxy_after_round(c->proxy);
        port_relay_after_round(c->ports);
        if (r < 0) {
            LOG_E("run", "event loop: %s", strerror(-r));
            break;
        }
    }
    ev_timer_stop(&c->loop, &c->guard_t);
    if (guarded_trees_fd(c->st.guard) >= 0)
        ev_io_stop(&c->loop, &c->watch_w);
    if (!c->have_status)
        read_status(c);
    /* What the command wrote last may still sit in the master. */
    while (c->master >= 0 && pump_master(c))
        ;
}

CORDON_NORETURN static void stop_init_and_die(struct controller *c, const char *msg);

/* Exit status for cordon itself, from what init reported (or how init died). */
static int final_status(const struct controller *c, int *signal_out)
{
    *signal_out = 0;
    if (c->have_status) {
        *signal_out = c->status.signal;
        return c->status.exit_code;
    }
    if (WIFEXITED(c->init_wait_status))
        return WEXITSTATUS(c->init_wait_status) ? WEXITSTATUS(c->init_wait_status)
                                                : CORDON_EXIT_SETUP;
    LOG_E("run", "the sandbox's init was killed by signal %d", WTERMSIG(c->init_wait_status));
    return CORDON_EXIT_SETUP;
}

/* init is already running and waits for what follows; on any failure it is killed (it never
 * runs the command) and cordon exits with the reason. */
CORDON_NORETURN static void stop_init_and_die(struct controller *c, const char *msg)
{
    sandbox_start_abandon(&c->st);
    die("%s", msg);
}

/* An empty directory runs nothing. */
static bool holds_something(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return false;
    if (!S_ISDIR(st.st_mode))
        return true;
    DIR *d = opendir(path);
    if (!d)
        return true; /* cannot look inside: say so rather than stay silent */
    bool any = false;
    for (struct dirent *de; !any && (de = readdir(d));)
        any = strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return any;
}

/* A repository's own file: held inside the sandbox the moment its repository appears
 * (guarded_trees_watch), and what was planted before undone with its own line. */
static bool in_a_git_dir(const char *rel)
{
    return strncmp(rel, ".git/", 5) == 0 || strstr(rel, "/.git/") != NULL;
}

static void ro_appeared_report(const struct sandbox_config *cfg, const bool *absent, bool git_held)
{
    char line[1024];
    size_t len = 0;
    for (size_t i = 0; absent && i < cfg->readonly_in_workspace.len; i++) {
        if (!absent[i])
            continue;
        const char *rel = cfg->readonly_in_workspace.items[i];
        /* the repository's own: a hooks folder made where there was none is recorded missing
         * by the git guard, which undoes it in a line of its own; the rest of a repository's
         * files are held inside the moment it appears (guarded_trees_watch) */
        if (strncmp(rel, ".git/", 5) == 0 || (git_held && in_a_git_dir(rel)))
            continue;
        char *p = xasprintf("%s/%s", cfg->workspace, rel);
        if (holds_something(p) && len < sizeof line)
            len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", len ? ", " : "", rel);
        free(p);
    }
    if (len)
        fprintf(stderr,
                "cordon: appeared in the workspace during the command, not read-only on "
                "the host, where an editor or agent may run it without asking (look first): %s\n",
                line);
}

/* While init builds the view (sandbox_start.h): the output streams are needed once the command
 * prints (supervise), not by init. */
static void init_output_streams(void *ctx, const struct sandbox_config *cfg)
{
    struct controller *c = ctx;
    output_stream_init(&c->out, c->out.fd, STDOUT_FILENO, cfg);
    output_stream_init(&c->err, c->err.fd, STDERR_FILENO, cfg);
    /* Before the command runs (init builds its view meanwhile): in direct mode, the host-trusted
     * paths as they are, to tell afterwards which the command changed. */
    if (!cfg->review && !cfg->workspace_readonly && cfg->workspace)
        c->trusted = trusted_snapshot_take(cfg->workspace);
}

/* A person allowed a blocked destination (escalate.c): the same `cordon run`, in a fresh sandbox,
 * with --network-allow RULE added. Returns only when that cannot be started. */
static void run_again_allowing(int argc, char **argv, const char *rule)
{
    char **again = xcalloc((size_t)argc + 5, sizeof *again);
    static char self[] = "cordon", run[] = "run", flag[] = "--network-allow";
    again[0] = self;
    again[1] = run;
    again[2] = flag;
    again[3] = (char *)rule;
    for (int i = 0; i < argc; i++)
        again[4 + i] = argv[i];
    fprintf(stderr, "cordon: running it again in a fresh sandbox with --network-allow %s\n", rule);
    fflush(NULL);
    execv("/proc/self/exe", again);
    LOG_E("run", "cannot run cordon again: %s", strerror(errno));
    free(again);
}

static int block_controller_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < ARRAY_LEN(controller_signals); i++)
        sigaddset(&set, controller_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int run_main(int argc, char **argv)
{
    char err[1024];
    struct run_flags flags;
    struct sandbox_config cfg = {0};
    struct sc_program prog = {0};
    struct controller c = {.master = -1, .sfd = -1};
    if (ev_loop_init(&c.loop) < 0)
        die_errno("epoll");
    char cwd[PATH_MAX];

    if (cli_parse_run(argc, argv, &flags, err, sizeof err) < 0)
        die("%s", err);
    if (!getcwd(cwd, sizeof cwd))
        die_errno("cannot read the current directory");

    /* Everything init needs from before the clone; the profile is resolved after it. */
    bool want_pty = isatty(STDIN_FILENO);
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    if (!want_pty && (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0))
        die_errno("pipe");
    if (!want_pty)
        widen_output_pipe(out_pipe[0]);
    int alive[2];
    if (pipe2(alive, O_CLOEXEC) < 0)
        die_errno("pipe");
    sigset_t old_mask;
    if ((c.sfd = block_controller_signals(&old_mask)) < 0)
        die_errno("signalfd");

    /* Clone init now, while this process is small (its pages are what the clone copies and
     * init's first writes fault on), so that init starts, maps its ids, makes the network
     * namespace and waits while the Lua policy resolves the profile here. alive[1] stays open
     * until we exit: init watches for its hang-up. */
    uid_t uid =
        getuid(); /* read before the clone: inside, they are unmapped until init maps them */
    gid_t gid = getgid();
    double start = clock_mono_ms_f();
    struct sandbox_start *st = &c.st;
    sandbox_start_prepare(st, SANDBOX_START_RUN);
    st->flags = &flags;
    st->cwd = cwd;
    st->profile_cache = true;
    st->maps_at_clone = true;
    /* A root caller asks for the shift unless the last run like this one could not keep it. */
    st->no_shift = uid == 0 && root_writes_hint_no_shift(flags.profile, flags.workspace, cwd);
    st->cgroup_ahead = true;
    st->init_main = init_main;
    st->ip = (struct init_params){.argv = flags.command,
                                  .ctl_sock = -1,
                                  .parent_alive_fd = alive[0],
                                  .want_pty = want_pty,
                                  .command_mask = old_mask,
                                  .out_pipe = out_pipe[1],
                                  .err_pipe = err_pipe[1],
                                  .uid = uid,
                                  .gid = gid,
                                  .early_network = flags.unrestricted_network != FLAG_TRUE};
    st->alive_w = alive[1];
    st->child_close[0] = c.sfd;
    st->while_init_builds = init_output_streams;
    st->ctx = &c;
    st->handover.loop = &c.loop;
    st->handover.label = flags.command;
    st->handover.log_unit = "run";
    st->cfg = &cfg;
    st->prog = &prog;
    c.out.fd = out_pipe[0];
    c.err.fd = err_pipe[0];
    if (sandbox_start_up(st) == -1)
        stop_init_and_die(&c, st->err);
    c.master = st->handover.master;
    c.tty_raw = st->handover.tty_raw;
    c.saved_tty = st->handover.saved_tty;
    c.ports = st->handover.ports;
    c.git = st->handover.git;
    int http_fd = st->handover.http_fd, socks_fd = st->handover.socks_fd;
    bool *ro_absent = st->ro_absent;
    /* The view is built (the rename listener comes after it): from now on every repository
     * is held inside as it appears, found off this thread. */
    (void)guarded_trees_watch(c.st.guard, c.st.hold, c.st.hold_err);
    c.st.hold = NULL; /* the guards' now */
    if (flags.publish.len) {
        if (!c.ports && !cfg.net_unrestricted)
            c.ports = port_relay_new(&c.loop, flags.command);
        if (c.ports)
            port_relay_set_inside(c.ports, connect_inside, &c);
        if (controller_publish(c.ports, &flags, err, sizeof err) < 0)
            stop_init_and_die(&c, err);
    }
    if (http_fd >= 0 && socks_fd >= 0) {
        c.proxy = proxy_new(&c.loop, http_fd, socks_fd, flags.command);
        init_handover_attach(&c.st.handover, c.proxy);
        if (!c.proxy)
            LOG_E("run", "the proxy could not start: commands get no network");
        else
            proxy_set_credentials(c.proxy, c.st.creds);
        if (c.proxy)
            proxy_set_tls(c.proxy, c.st.tls);
        else
            tls_terminator_free(c.st.tls);
        c.st.tls = NULL;
        c.st.creds = c.proxy ? NULL : c.st.creds;
        /* The terminal of cordon run can answer questions (a pty relay holds its input). */
        c.owner.fd = isatty(STDERR_FILENO)   ? STDERR_FILENO
                     : isatty(STDOUT_FILENO) ? STDOUT_FILENO
                                             : -1;
        if (c.proxy && c.master >= 0 && c.owner.fd >= 0 && cfg.network_ask) {
            struct proxy_owner po = {.ctx = &c.owner, .ask = owner_ask, .closed = owner_closed};
            proxy_set_owner(c.proxy, &po, cfg.permission_timeout);
        }
    }
    supervise(&c);
    if (c.tty_raw)
        pty_restore_mode(STDIN_FILENO, &c.saved_tty);
    if (c.st.have_cgroup) {
        /* The kernel counts its kills for the memory limit: a command that died of one (or
         * whose init did) is told so, not left to guess from a bare SIGKILL. */
        char oom[160], pids[160];
        controller_oom_line(&cfg, &c.st.cgroup.cg, oom, sizeof oom);
        controller_pids_line(&cfg, &c.st.cgroup.cg, pids, sizeof pids);
        if (oom[0])
            fprintf(stderr, "cordon: %s\n", oom);
        if (pids[0])
            fprintf(stderr, "cordon: %s\n", pids);
    }
    ro_appeared_report(&cfg, ro_absent, guarded_trees_fd(c.st.guard) >= 0);
    free(ro_absent);
    /* init reported the status after reaping everything in the sandbox: nothing writes now */
    guard_check(&c, false);
    guarded_trees_free(c.st.guard);
    repo_hold_stop(c.st.hold); /* when the guards never took it */
    c.st.guard = NULL;

    int sig;
    int code = final_status(&c, &sig);
    struct lh_refusal refusals[8];
    size_t n_refusals = 0;
    struct escalation_result esc = {0};
    double detect_ms = 0;
    if (c.have_status) { /* the command ran: judge what it printed */
        char *line = shell_join(flags.command);
        static const struct str_list none = {0};
        double detect_start = clock_mono_ms_f();
        n_refusals = refusal_report(&cfg, line, code, sig, &c.out.cap, &c.err.cap,
                                    c.proxy ? proxy_denied(c.proxy) : &none, want_pty, refusals,
                                    ARRAY_LEN(refusals));
        detect_ms = clock_mono_ms_f() - detect_start;
        if (n_refusals) {
            escalate_refusals(&cfg, flags.command, line, refusals, n_refusals,
                              isatty(STDIN_FILENO) && isatty(STDERR_FILENO),
                              c.proxy ? proxy_asked(c.proxy) : &none, &esc);
            if (esc.ran_outside)
                code = esc.exit_code, sig = 0;
        }
        free(line);
    }
    struct trusted_changes trusted = {0};
    trusted_changes_find(c.trusted, &trusted); /* nothing in the sandbox writes any more */
    c.trusted = NULL;
    if (!cfg.json)
        trusted_changes_tell(&trusted);
    git_publish_stop(c.git); /* init reaped every process that could rename */
    c.git = NULL;
    proxy_free(c.proxy);
    c.proxy = NULL;
    port_relay_free(c.ports);
    c.ports = NULL;
    if (cfg.json) {
        /* The result is a line of its own, for a reader taking the last line: after output
         * without a final newline (`printf x`) one comes first. A command re-run outside the
         * sandbox wrote to stdout directly, unseen: a newline first, at worst an empty line. */
        if (c.out.mid_line || esc.ran_outside)
            fputc('\n', stdout);
        struct str_list creds = {0};
        credentials_summary(&cfg.credentials, &flags.credentials, &creds);
        struct run_result res = {.exit_code = code,
                                 .signal = sig,
                                 .duration_ms = clock_mono_ms_f() - start,
                                 .detect_ms = detect_ms,
                                 .profile = cfg.profile,
                                 .refusals = refusals,
                                 .n_refusals = n_refusals,
                                 .ran_outside = esc.ran_outside,
                                 .credentials = &creds,
                                 .trusted = &trusted};
        result_json_print(stdout, &res);
        str_list_free(&creds);
    }
    /* init exits right after its report, having reaped everything: once it is gone the cgroup
     * is empty and can go (last, so that init's exit overlaps with the above). In review mode
     * init holds the layer's lock until it exits: the next --review run, `cordon apply` or
     * `cordon discard` started right after this one returns must find it free. */
    if ((c.st.have_cgroup || cfg.review_layer) && !c.init_done) {
        (void)waitpid(c.st.init_pid, &c.init_wait_status, 0);
        c.init_done = true;
    }
    if (c.st.have_cgroup) {
        int r = cgroup_remove(&c.st.cgroup.cg);
        if (r < 0)
            LOG_W("limits", "cannot remove the sandbox's cgroup %s: %s", c.st.cgroup.cg.dirs[0],
                  strerror(-r));
    }
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (esc.network_allow[0])
        run_again_allowing(argc, argv, esc.network_allow);
    /* The Lua state is left to the exit (it stays reachable, so no leak checker minds): closing
     * it frees every object one by one, a measurable part of a short command's run, for memory
     * the kernel takes back at once. */
    sc_program_free(&prog);
    trusted_changes_free(&trusted);
    capture_free(&c.out.cap);
    capture_free(&c.err.cap);
    sandbox_config_free(&cfg);
    run_flags_free(&flags);
    return code;
}
