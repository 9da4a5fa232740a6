/* Runs in: the command's process (between init's fork and exec). */
/* command.h — the last steps in the command's own process, between init's fork and exec:
 * a new session (no TIOCSTI into any terminal of the caller), the pty as controlling terminal,
 * only fds 0-2 left, the working directory, rlimits, no capabilities, no_new_privs, the seccomp
 * filter, then exec. A failed exec exits 127 (not found) or 126 (not runnable), as a shell does. */
#ifndef CORDON_COMMAND_H
#define CORDON_COMMAND_H
#include <signal.h>
#include <sys/types.h>

#include "base/attrs.h"
#include "sandbox/sandbox-t.h"
#include "sandbox/seccomp_filter.h"

/* Which signals this process ignores, noted now so that command_exec resets just those (one
 * call each instead of a look at every signal, on the way to the command's exec). Only in a
 * process that sets no disposition to SIG_IGN between this call and command_exec; without it,
 * command_exec looks at every signal itself. */
void command_note_ignored_signals(void);

/* slave: the pty slave to attach, or -1 to keep the inherited fds 0-2; out_fd, err_fd: what
 * becomes fds 1 and 2 without a pty (-1: keep the inherited one). Never returns. */
CORDON_NORETURN void command_exec(const struct sandbox_config *cfg,
                                  const struct sc_program *seccomp, char **argv, int slave,
                                  int out_fd, int err_fd);

/* command_exec's confinement but the resource limits, on the calling thread: what the processes
 * it makes inherit (sandbox/spawner.h). 0, or -errno with *what naming the step that failed. */
int command_confine_thread(const struct sandbox_config *cfg, const struct sc_program *seccomp,
                           const char **what);

/* command_exec in a process made by a thread that command_confine_thread confined: the same
 * steps and limits, without putting the confinement on again. Never returns. */
CORDON_NORETURN void command_exec_confined(const struct sandbox_config *cfg, char **argv, int slave,
                                           int out_fd, int err_fd);

/* The command's process, vforked: the child takes mask as its signal mask, then command_exec
 * with seccomp, or, made by a thread that command_confine_thread confined (seccomp NULL),
 * command_exec_confined. vfork: the child only makes system calls until exec, and copying the
 * caller's page tables would cost more than the rest of the start. Its pid, or -1 with errno. */
pid_t command_vfork(const struct sandbox_config *cfg, const struct sc_program *seccomp, char **argv,
                    const sigset_t *mask, int slave, int out_fd, int err_fd);

#endif
