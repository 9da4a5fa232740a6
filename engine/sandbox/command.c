/* command.c — see command.h. Runs after fork in a process that will exec: no allocation after
 * the confinement starts, messages written with write(2). */
#include "sandbox/command.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/confine.h"
#include "sandbox/devfs.h"
#include "base/log.h"
#include "sandbox/loopback_guard.h"
#include "sandbox/pty.h"

extern char **environ;

CORDON_NORETURN static void fail(const char *what, const char *arg, int err, int code)
{
    const char *msg = strerror(err);
    (void)!write(2, "cordon: ", 8);
    (void)!write(2, what, strlen(what));
    if (arg) {
        (void)!write(2, arg, strlen(arg));
    }
    (void)!write(2, ": ", 2);
    (void)!write(2, msg, strlen(msg));
    (void)!write(2, "\n", 1);
    _exit(code);
}

/* A signal ignored by whoever started cordon (an MCP client, `nohup`, a shell's `trap '' PIPE`)
 * stays ignored across fork and exec: every command would inherit it, and `yes | head` would
 * end in EPIPE errors instead of SIGPIPE. A command starts with every disposition at default,
 * as in a fresh login. (Handlers are reset by exec itself; only SIG_IGN survives it.) */

/* The kernel's struct sigaction, through the raw call: glibc's sigaction() refuses the real-time
 * signals it reserves (32 and 33), which a caller may have ignored too. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

#define COMMAND_NSIG 64

/* Bit sig-1: found ignored by command_note_ignored_signals, once it ran (ignored_known). */
static uint64_t ignored;
static bool ignored_known;

static bool is_ignored(int sig)
{
    struct kernel_sigaction cur;
    return syscall(SYS_rt_sigaction, sig, NULL, &cur, sizeof cur.mask) == 0 &&
           cur.handler == SIG_IGN;
}

void command_note_ignored_signals(void)
{
    ignored = 0;
    for (int sig = 1; sig <= COMMAND_NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && is_ignored(sig))
            ignored |= 1ull << (sig - 1);
    ignored_known = true;
}

static void reset_ignored_signals(void)
{
    struct kernel_sigaction dfl = {.handler = SIG_DFL};
    for (int sig = 1; sig <= COMMAND_NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        if (ignored_known ? (ignored >> (sig - 1)) & 1 : is_ignored(sig))
            (void)syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
    }
}

/* The confinement every command of a sandbox gets alike, but for the resource limits (which
 * belong to the process, not the thread): capabilities, no_new_privs, the Landlock guards, the
 * seccomp filter, in that order. Each is a property of the calling thread that the processes it
 * makes inherit. 0, or -errno with *what naming the step that failed. */
int command_confine_thread(const struct sandbox_config *cfg, const struct sc_program *seccomp,
                           const char **what)
{
    int r;
    unsigned long long keep = cfg->root_write_caps ? CONFINE_ROOT_WRITE_CAPS : 0;
    if ((r = confine_keep_capabilities(keep)) < 0) {
        *what = "dropping capabilities";
    } else if ((r = confine_no_new_privs()) < 0) {
        *what = "setting no_new_privs";
    } else if (loopback_guard_wanted(cfg) && (r = loopback_guard_apply(cfg)) < 0) {
        *what = "restricting loopback TCP (Landlock)";
    } else if (procfs_is_shared() && (r = procfs_guard_apply()) < 0) {
        *what = "guarding the container's /proc (Landlock)";
    } else if ((r = sc_load(seccomp)) < 0) {
        *what = "loading the seccomp filter";
    }
    return r;
}

CORDON_NORETURN static void exec_command(const struct sandbox_config *cfg, char **argv)
{
    /* execvp searches the PATH of the environment it runs in: the sandbox's. */
    static char *empty_env[] = {NULL};
    environ = cfg->env.items ? cfg->env.items : empty_env;
    execvp(argv[0], argv);
    int err = errno;
    fail(argv[0], NULL, err, err == ENOENT ? 127 : 126);
}

/* The steps of every command's process before its confinement: signals, a new session, the
 * terminal or the output, only fds 0-2, the working directory. */
static void start_command(const struct sandbox_config *cfg, int slave, int out_fd, int err_fd)
{
    int r;
    reset_ignored_signals();
    if (setsid() < 0)
        fail("setsid", NULL, errno, CORDON_EXIT_SETUP);
    if (slave >= 0 && (r = pty_attach_slave(slave)) < 0)
        fail("attaching the pseudo-terminal", NULL, -r, CORDON_EXIT_SETUP);
    if ((out_fd >= 0 && dup2(out_fd, 1) < 0) || (err_fd >= 0 && dup2(err_fd, 2) < 0))
        fail("redirecting the output", NULL, errno, CORDON_EXIT_SETUP);
    if (close_range(3, ~0U, 0) < 0)
        fail("close_range", NULL, errno, CORDON_EXIT_SETUP);
    if (chdir(cfg->cwd) < 0)
        fail("cannot enter ", cfg->cwd, errno, CORDON_EXIT_SETUP);
    if ((r = confine_rlimits(cfg)) < 0)
        fail("setting resource limits", NULL, -r, CORDON_EXIT_SETUP);
}

void command_exec(const struct sandbox_config *cfg, const struct sc_program *seccomp, char **argv,
                  int slave, int out_fd, int err_fd)
{
    const char *what = NULL;
    start_command(cfg, slave, out_fd, err_fd);
    int r = command_confine_thread(cfg, seccomp, &what);
    if (r < 0)
        fail(what, NULL, -r, CORDON_EXIT_SETUP);
    exec_command(cfg, argv);
}

void command_exec_confined(const struct sandbox_config *cfg, char **argv, int slave, int out_fd,
                           int err_fd)
{
    start_command(cfg, slave, out_fd, err_fd);
    exec_command(cfg, argv);
}

pid_t command_vfork(const struct sandbox_config *cfg, const struct sc_program *seccomp, char **argv,
                    const sigset_t *mask, int slave, int out_fd, int err_fd)
{
    pid_t pid = vfork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, mask, NULL);
        if (seccomp)
            command_exec(cfg, seccomp, argv, slave, out_fd, err_fd);
        command_exec_confined(cfg, argv, slave, out_fd, err_fd);
    }
    return pid;
}
