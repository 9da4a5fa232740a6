/* fresh_sandbox.c — see fresh_sandbox.h. */
#include "session/fresh_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/command.h"
#include "sandbox/devfs.h"
#include "base/log.h"
#include "sandbox/mount_ops.h"
#include "sandbox/init_wire.h"

#define MAX_PUT_BACK 64

static bool under_tmp(const char *path)
{
    return strncmp(path, "/tmp/", 5) == 0;
}

/* fd 2 is init's (/dev/null): a failure is said on the command's stderr instead. */
CORDON_NORETURN static void fail(int err_fd, const char *what)
{
    dprintf(err_fd, "cordon: fresh sandbox: %s: %s\n", what, strerror(errno));
    _exit(CORDON_EXIT_SETUP);
}

/* A fresh /tmp, with what must stay visible under it (workspace, writable paths) put back,
 * and a /proc that shows this namespace's processes. */
static void build_view(const struct sandbox_config *cfg, int err_fd)
{
    char msg[512];
    struct mnt_err e = {msg, sizeof msg};
    const char *paths[MAX_PUT_BACK];
    int fds[MAX_PUT_BACK];
    size_t n = 0;
    /* init's view is shared (init.c): a slave copy here gets the holds init's namespace is
     * given later, and sends nothing back */
    if (mnt_mount(&e, NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
        goto failed;
    if (under_tmp(cfg->workspace))
        paths[n++] = cfg->workspace;
    for (size_t i = 0; i < cfg->writable.len && n < MAX_PUT_BACK; i++)
        if (under_tmp(cfg->writable.items[i]))
            paths[n++] = cfg->writable.items[i];
    for (size_t i = 0; i < n; i++)
        if ((fds[i] = mnt_detached_tree(&e, paths[i])) < 0)
            goto failed;
    if (mnt_mount(&e, "cordon-tmp", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
        goto failed;
    /* outermost first: the paths were sorted when the session's view was built, but not here */
    for (size_t done = 0; done < n; done++) {
        size_t best = n;
        for (size_t i = 0; i < n; i++)
            if (fds[i] >= 0 && (best == n || strlen(paths[i]) < strlen(paths[best])))
                best = i;
        if (mnt_attach(&e, fds[best], paths[best], true) < 0)
            goto failed;
        close(fds[best]);
        fds[best] = -1;
    }
    if (procfs_build(&e) < 0)
        goto failed;
    return;
failed:
    dprintf(err_fd, "cordon: fresh sandbox: %s\n", msg);
    _exit(CORDON_EXIT_SETUP);
}

CORDON_NORETURN static void sandbox_main(const struct init_ready *ready, char *command, int out_fd,
                                         int err_fd, int ctl)
{
    /* Our pid as the session sees it (its /proc is still mounted): the job's pid. */
    char self[32] = "";
    ssize_t len = readlink("/proc/self", self, sizeof self - 1);
    int outer = len > 0 ? atoi(self) : 0;
    (void)setsid();
    build_view(&ready->cfg, err_fd);

    sigset_t set;
    sigemptyset(&set);
    int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < ARRAY_LEN(forwarded); i++)
        sigaddset(&set, forwarded[i]);
    sigaddset(&set, SIGCHLD);
    /* PID 1 of a namespace gets only signals it handles: they all come through the signalfd */
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (sfd < 0)
        fail(err_fd, "signalfd");
    static char bash[] = "bash", dash_c[] = "-c";
    char *argv[] = {bash, dash_c, command, NULL};
    sigset_t none;
    sigemptyset(&none);
    pid_t cmd = vfork();
    if (cmd < 0)
        fail(err_fd, "vfork");
    if (cmd == 0) {
        sigprocmask(SIG_SETMASK, &none, NULL);
        command_exec(&ready->cfg, &ready->filter, argv, -1, out_fd, err_fd);
    }
    close(out_fd);
    close(err_fd);
    bool cmd_done = false;
    for (;;) {
        struct signalfd_siginfo si;
        if (read(sfd, &si, sizeof si) != (ssize_t)sizeof si)
            continue;
        if (si.ssi_signo != SIGCHLD) {
            (void)kill(-1, (int)si.ssi_signo); /* everything in this sandbox but us */
            continue;
        }
        int st;
        pid_t w;
        while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
            if (w == cmd) {
                struct init_wire_msg m = {.tag = INIT_WIRE_EXITED, .pid = outer, .value = st};
                (void)init_wire_send(ctl, &m, NULL, 0, NULL, 0);
                cmd_done = true;
            }
        }
        if (w < 0 && errno == ECHILD && cmd_done)
            _exit(0); /* nothing is left in this sandbox */
    }
}

pid_t fresh_sandbox_spawn(const struct init_ready *ready, char *command, int out_fd, int err_fd,
                          int ctl)
{
    /* Raw clone with a NULL stack behaves like fork() (copying init is cheap: it is small). */
    long pid = syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        /* init's own signal handling is not ours: the mask stays (all blocked), the signalfd
         * above replaces init's */
        close(ready->sfd);
        sandbox_main(ready, command, out_fd, err_fd, ctl);
    }
    return (pid_t)pid;
}
