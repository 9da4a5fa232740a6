/* session_init.c — see session_init.h. One poll over the signalfd and the controller's socket;
 * nothing blocks in between but the vfork of a command (until its exec). Before each command,
 * each readonly_in_workspace path created since the session started is bound read-only.
 *
 * Each command's process is vforked by a thread of init confined once, at the start, with what
 * every command gets (sandbox/spawner.h): attaching the seccomp filter alone cost ~250 us per
 * command when each was confined on its way to exec (command_exec, still the way when the thread
 * cannot be confined). A process made ahead for each command (forked and confined while the
 * last command ran) was tried before: its exec tore down the fork's copy of init's memory
 * (~290 us more than a vfork child's), and the fork competed with the running command. */
#include "session/session_init.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/command.h"
#include "sandbox/mount_ops.h"
#include "sandbox/review_view.h"
#include "sandbox/spawner.h"
#include "session/fresh_sandbox.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "sandbox/init_wire.h"

/* The pids of the commands' bash processes (and fresh sandboxes) still running: their end is
 * reported. A negative entry is a fresh sandbox: its own PID 1 reports its command's end, init
 * reports the sandbox's. */
struct leaders {
    pid_t *pids;
    size_t n, cap;
};

static void leaders_add(struct leaders *l, pid_t pid)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        pid_t *grown = realloc(l->pids, l->cap * sizeof *l->pids);
        if (!grown)
            _exit(CORDON_EXIT_SETUP); /* out of memory in PID 1: the session ends */
        l->pids = grown;
    }
    l->pids[l->n++] = pid;
}

/* 1: a command's bash, 2: a fresh sandbox, 0: neither. */
static int leaders_remove(struct leaders *l, pid_t pid)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->pids[i] == pid || l->pids[i] == -pid) {
            int kind = l->pids[i] > 0 ? 1 : 2;
            l->pids[i] = l->pids[--l->n];
            return kind;
        }
    }
    return 0;
}

/* $TMPDIR/cordon/processes, made on first use by init (the commands' uid): a command may have
 * put something else there, so the log itself is opened without following links. */
static int open_log(pid_t pid)
{
    (void)mkdir_p(SESSION_LOG_DIR, 0700); /* the open below fails if this did */
    char path[64];
    snprintf(path, sizeof path, SESSION_LOG_DIR "/%d.log", (int)pid);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    return fd < 0 ? -errno : fd;
}

/* The bash the sandbox's PATH finds, looked up once: execvp would try every PATH entry before
 * it for every command. "bash" (searched at each exec) when none is found. */
static char *find_bash(const struct sandbox_config *cfg)
{
    static char found[4096] = "bash";
    const char *path = "/usr/local/bin:/usr/bin:/bin";
    for (size_t i = 0; i < cfg->env.len; i++)
        if (strncmp(cfg->env.items[i], "PATH=", 5) == 0)
            path = cfg->env.items[i] + 5;
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char candidate[4096];
        if (n > 0 && p[0] == '/' &&
            snprintf(candidate, sizeof candidate, "%.*s/bash", (int)n, p) < (int)sizeof candidate &&
            access(candidate, X_OK) == 0) {
            memcpy(found, candidate, strlen(candidate) + 1);
            break;
        }
        p += n + (end ? 1 : 0);
    }
    return found;
}

/* The workspace's readonly_in_workspace paths, every entry of the profile's list, that did not
 * exist when the view was built: a command of this session may create one (mkdir .cordon,
 * .claude/settings.json, .vscode/tasks.json), and the host later trusts or runs what it holds
 * (cordon trust, the next git commit, the next editor or agent session). Each that has
 * appeared is bound read-only in the session's mount namespace before the next command
 * starts. A process already running with a descriptor open inside it keeps what that allows. */
struct late_ro {
    bool *done; /* per readonly_in_workspace entry: bound, or nothing to do */
    size_t n;
};

static void late_ro_init(const struct sandbox_config *cfg, struct late_ro *l)
{
    l->n = cfg->readonly_in_workspace.len;
    l->done = calloc(l->n + 1, sizeof *l->done);
    if (!l->done)
        _exit(CORDON_EXIT_SETUP);
    for (size_t i = 0; i < l->n; i++) {
        char *p = xasprintf("%s/%s", cfg->workspace, cfg->readonly_in_workspace.items[i]);
        struct stat st;
        /* Existing ones the view bound (fsview.c); a read-only workspace needs nothing. */
        l->done[i] = cfg->workspace_readonly || (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode));
        free(p);
    }
}

/* Bind each that has appeared since. -1 when one cannot be: then the command is not started
 * (its exec fails with EROFS). */
static int late_ro_apply(const struct sandbox_config *cfg, struct late_ro *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->done[i])
            continue;
        char *p = xasprintf("%s/%s", cfg->workspace, cfg->readonly_in_workspace.items[i]);
        struct stat st;
        int r = 0;
        if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode)) { /* a link: trust refuses it anyway */
            char err[512];
            struct mnt_err e = {err, sizeof err};
            r = mnt_bind_readonly(&e, p);
            if (r == 0)
                l->done[i] = true;
        }
        free(p);
        if (r < 0)
            return -1;
    }
    return 0;
}

/* After a rollback (review_view_swap) the view is new: bind each path again before the next
 * command (one still bound from the old view gets a second read-only bind, which changes
 * nothing; one the old view lacked and the new one has gets its first). */
static void late_ro_reset(const struct sandbox_config *cfg, struct late_ro *l)
{
    for (size_t i = 0; i < l->n; i++)
        l->done[i] = cfg->workspace_readonly;
}

/* INIT_WIRE_REVIEW_SWAP: the workspace's overlay rebuilt from the layer's folder dir. */
static void review_swap(int ctl, const struct sandbox_config *cfg, struct late_ro *late,
                        const char *dir)
{
    char err[512] = "";
    struct mnt_err e = {err, sizeof err};
    unsigned *ids = NULL;
    size_t n = 0;
    struct init_wire_msg reply = {.tag = INIT_WIRE_REVIEW_SWAPPED};
    bool stacked = false;
    int r = -1;
    if (!dir[0] || strchr(dir, '/') || dir[0] == '.')
        snprintf(err, sizeof err, "a rollback's folder must be a plain name");
    else
        r = review_view_swap(cfg->workspace, dir, &ids, &n, &stacked, &e);
    if (r == 0) {
        reply.value = stacked ? INIT_WIRE_SWAP_STACKED : 0;
        late_ro_reset(cfg, late);
        if (n > INIT_WIRE_MAX_SWAPPED / sizeof *ids)
            n = INIT_WIRE_MAX_SWAPPED / sizeof *ids;
        (void)init_wire_send(ctl, &reply, ids, n * sizeof *ids, NULL, 0);
    } else {
        reply.value = -EIO;
        (void)init_wire_send(ctl, &reply, err, strlen(err), NULL, 0);
    }
    free(ids);
}

/* ---- starting a command ----------------------------------------------------------------- */

static char *bash; /* find_bash's, once */
static char dash_c[] = "-c";

/* The command's process: made by the confined thread (spawner.h) when it runs, else vforked here
 * and confined on its way to exec. -1 with errno set when it could not be made. */
static pid_t start_command(const struct init_ready *ready, char **argv, const int fds[2])
{
    if (spawner_running()) {
        pid_t pid = spawner_spawn(argv, -1, fds[0], fds[1]);
        if (pid < 0) {
            errno = (int)-pid;
            return -1;
        }
        return pid;
    }
    sigset_t none;
    sigemptyset(&none);
    return command_vfork(&ready->cfg, &ready->filter, argv, &none, -1, fds[0], fds[1]);
}

static void spawn(int ctl, const struct init_ready *ready, struct leaders *leaders,
                  struct late_ro *late, const struct init_wire_msg *req, char *command,
                  const int fds[2])
{
    struct init_wire_msg reply = {.tag = INIT_WIRE_STARTED, .id = req->id};
    if (late_ro_apply(&ready->cfg, late) < 0) { /* fail closed: nothing runs unprotected */
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        reply.pid = -EROFS;
        (void)init_wire_send(ctl, &reply, NULL, 0, NULL, 0);
        return;
    }
    if (!bash)
        bash = find_bash(&ready->cfg);
    char *argv[] = {bash, dash_c, command, NULL};
    bool fresh = req->flags & INIT_WIRE_FRESH;
    pid_t pid = fresh ? fresh_sandbox_spawn(ready, command, fds[0], fds[1], ctl)
                      : start_command(ready, argv, fds);
    if (pid < 0 && fresh)
        errno = -pid;
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (pid < 0) {
        reply.pid = -errno;
        (void)init_wire_send(ctl, &reply, NULL, 0, NULL, 0);
        return;
    }
    leaders_add(leaders, fresh ? -pid : pid);
    reply.pid = pid;
    int log = -1;
    if (req->flags & INIT_WIRE_BACKGROUND) {
        log = open_log(pid);
        if (log < 0)
            reply.value = log; /* the controller says why; the command runs unlogged */
    }
    (void)init_wire_send(ctl, &reply, NULL, 0, log >= 0 ? &log : NULL, log >= 0 ? 1 : 0);
    if (log >= 0)
        close(log);
}

static void signal_group(int ctl, const struct init_wire_msg *req)
{
    struct init_wire_msg reply = {.tag = INIT_WIRE_SIGNALED, .id = req->id, .pid = req->pid};
    if (req->pid <= 1 || req->value < 0 || req->value >= NSIG)
        reply.value = -EINVAL; /* never 0, 1, -1 or a negative of them */
    else if (kill(-req->pid, req->value) < 0)
        reply.value = -errno;
    (void)init_wire_send(ctl, &reply, NULL, 0, NULL, 0);
}

/* Reap every zombie; report the commands' ends. true when init has no child left. */
static bool reap(int ctl, struct leaders *leaders)
{
    int st;
    pid_t w;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
        int kind = leaders_remove(leaders, w);
        if (kind == 0)
            continue; /* an orphan the sandbox left to PID 1 */
        struct init_wire_msg m = {
            .tag = kind == 1 ? INIT_WIRE_EXITED : INIT_WIRE_GONE, .pid = w, .value = st};
        (void)init_wire_send(ctl, &m, NULL, 0, NULL, 0);
    }
    return w < 0 && errno == ECHILD;
}

/* Wait up to ms for a signal (a child's end) and take it off the signalfd. */
static void await_signal(int sfd, int ms)
{
    struct pollfd p = {.fd = sfd, .events = POLLIN};
    if (poll(&p, 1, ms) > 0) {
        struct signalfd_siginfo si;
        (void)!read(sfd, &si, sizeof si);
    }
}

/* TERM to everything in the sandbox, KILL after grace_ms to what is left, reap, exit. The end
 * of each command's bash is still reported, so a command that handles TERM is seen to. */
CORDON_NORETURN static void shut_down(int ctl, int sfd, struct leaders *leaders, int grace_ms)
{
    (void)kill(-1, SIGTERM);
    uint64_t deadline = clock_mono_ms() + (uint64_t)(grace_ms > 0 ? grace_ms : 0);
    for (;;) {
        if (reap(ctl, leaders))
            _exit(0); /* nothing is left: every process of the sandbox descends from PID 1 */
        uint64_t now = clock_mono_ms();
        if (now >= deadline)
            break;
        await_signal(sfd, (int)(deadline - now));
    }
    (void)kill(-1, SIGKILL);
    while (!reap(ctl, leaders))
        await_signal(sfd, 100);
    _exit(0);
}

void session_init_main(const struct init_params *p)
{
    struct init_ready ready;
    /* Nothing in a session's init sets a disposition to SIG_IGN either (see init_main). */
    command_note_ignored_signals();
    review_view_keep_for_swap(); /* a rollback builds the workspace's overlay again */
    init_prepare(p, &ready);
    /* Confined once: each command then starts without attaching the filter again. If the thread
     * cannot be confined, each command is confined itself (and says why it cannot be). */
    const char *what = NULL;
    (void)spawner_start(&ready.cfg, &ready.filter, &what);
    /* From here on init writes nothing itself: the starter's terminal is let go. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        for (int fd = 0; fd <= 2; fd++)
            (void)dup2(null, fd);
        close(null);
    }
    /* The controller waits for this before it answers anyone: the set-up is done, and what
     * init had to say on the starter's terminal is said. */
    init_setup_done(p->ctl_sock);
    struct leaders leaders = {0};
    struct late_ro late;
    late_ro_init(&ready.cfg, &late);
    static char command[INIT_WIRE_MAX_COMMAND + 1];
    struct pollfd pfd[2] = {{.fd = ready.sfd, .events = POLLIN},
                            {.fd = p->ctl_sock, .events = POLLIN}};
    for (;;) {
        if (poll(pfd, 2, -1) < 0)
            continue; /* EINTR */
        if (pfd[0].revents) {
            /* One read (the signalfd blocks); other signals are ignored: the controller
             * stops the session through the socket. Reaping is cheap, so always reap. */
            struct signalfd_siginfo si;
            (void)!read(ready.sfd, &si, sizeof si);
            reap(p->ctl_sock, &leaders);
        }
        if (!pfd[1].revents)
            continue;
        struct init_wire_msg m;
        int fds[2];
        long len =
            init_wire_recv(p->ctl_sock, &m, command, INIT_WIRE_MAX_COMMAND, fds, MSG_DONTWAIT);
        if (len == -EAGAIN)
            continue;
        if (len < 0 || m.tag == INIT_WIRE_SHUTDOWN) /* EOF: the controller is gone or done */
            shut_down(p->ctl_sock, ready.sfd, &leaders, len < 0 ? 0 : m.value);
        switch (m.tag) {
        case INIT_WIRE_SPAWN:
            command[len] = '\0';
            if ((size_t)len == strlen(command) && len > 0) {
                spawn(p->ctl_sock, &ready, &leaders, &late, &m, command, fds);
                continue;
            }
            break;
        case INIT_WIRE_SIGNAL:
            signal_group(p->ctl_sock, &m);
            break;
        case INIT_WIRE_CONNECT:
            init_answer_connect(p->ctl_sock, &m, 0); /* a published port's connection */
            break;
        case INIT_WIRE_REVIEW_SWAP:
            command[len] = '\0';
            review_swap(p->ctl_sock, &ready.cfg, &late, command);
            break;
        default:
            break;
        }
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    }
}
