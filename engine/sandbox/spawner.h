/* Runs in: init (a thread of its own); the command's process (vforked from it). */
/* spawner.h — a thread of init that carries the commands' confinement, so that a session's
 * commands start already confined. Capabilities, no_new_privs, Landlock domains and seccomp
 * filters are properties of a thread, inherited by every process it makes: the thread puts
 * them on once (command_confine_thread), then vforks each command it is given, whose process
 * only does what differs per command (command_exec_confined). Attaching the filter alone cost
 * ~250 us per command (the kernel checks, translates and compiles it each time).
 * init's other threads keep their privileges (a session's init still binds late read-only
 * paths and starts fresh sandboxes); the commands are init's children as before (a process
 * made by any thread is the process's child: init's waitpid reaps it).
 * Must never: run anything but a command's start on the confined thread, or hand a command a
 * weaker confinement than command_exec would have given it (if the thread could not be
 * confined, spawner_start fails and the caller starts each command with command_exec). */
#ifndef CORDON_SPAWNER_H
#define CORDON_SPAWNER_H
#include <sys/types.h>

#include "sandbox/sandbox-t.h"
#include "sandbox/seccomp_filter.h"

/* Start the thread and wait until it is confined with cfg's confinement and filter (both must
 * stay unchanged while it runs). 0; or -errno with *what naming the step that failed (nothing
 * is then running). */
int spawner_start(const struct sandbox_config *cfg, const struct sc_program *filter,
                  const char **what);

/* Is the thread there (spawner_start succeeded)? */
bool spawner_running(void);

/* Start argv on the confined thread (slave, out_fd, err_fd as command_exec takes them) and wait
 * until its process is made. Its pid, or -errno of the vfork. */
pid_t spawner_spawn(char **argv, int slave, int out_fd, int err_fd);

#endif
