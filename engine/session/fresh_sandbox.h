/* Runs in: init (the session's); the fresh sandbox's process. */
/* fresh_sandbox.h — one exec in a sandbox of its own (`--session-exec=false`): made by the
 * session's init, which clones a process into a new pid and mount namespace. That process (the
 * sandbox's own PID 1) mounts a fresh /tmp (the workspace and writable paths under /tmp are
 * put back) and a /proc of its own, then starts the command as init would, reports the end of
 * its bash to the controller itself, forwards TERM/INT/HUP to everything in its namespace, and
 * exits when nothing is left — so a sandbox whose command left processes behind lives on until
 * they end. Its pid (as the session sees it) is the job's pid and process group: signalling
 * that group signals the sandbox; KILL ends it and all in it. The network namespace, and so the
 * loopback and the proxy, are the session's. Its mounts are slaves of init's (shared for such a
 * session, init.c): the repositories' holds the controller's watcher makes in init's namespace
 * while it runs (controller/repo_hold.h) reach it, as they reach the session's own commands. */
#ifndef CORDON_FRESH_SANDBOX_H
#define CORDON_FRESH_SANDBOX_H
#include <sys/types.h>
#include "sandbox/init.h"

/* Returns the new sandbox's pid, or -errno. out_fd/err_fd are the command's stdout and stderr;
 * ctl is the controller's socket (the sandbox sends INIT_WIRE_EXITED for the command on it). */
pid_t fresh_sandbox_spawn(const struct init_ready *ready, char *command, int out_fd, int err_fd,
                          int ctl);
#endif
