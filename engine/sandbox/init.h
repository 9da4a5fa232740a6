/* Runs in: init. */
/* init.h — cordon's PID 1 inside the sandbox. It finishes the set-up that needs the new
 * namespaces' privileges (id maps, the filesystem view, loopback, hostname, the pty), starts
 * the command in its own session and process group with every privilege dropped, then
 * supervises: reaps every zombie, forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 to the
 * command's group, and when the command ends reports its status and exits — which makes the
 * kernel kill everything left in the pid namespace. It dies with the controller
 * (PR_SET_PDEATHSIG), so nothing in the sandbox outlives `cordon`. */
#ifndef CORDON_INIT_H
#define CORDON_INIT_H
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include "base/attrs.h"
#include "sandbox/sandbox-t.h"
#include "sandbox/seccomp_filter.h"

struct init_params {
    char **argv;         /* the command */
    int ctl_sock;        /* to the controller: the pty master (fd passing) and the status out,
                              * the seccomp filter in (built by the controller meanwhile) */
    int parent_alive_fd; /* read end of a pipe the controller keeps open: HUP = it is gone */
    bool want_pty;
    int out_pipe, err_pipe; /* write ends for the command's stdout and stderr, or -1: keep 1, 2 */
    sigset_t command_mask;  /* the caller's signal mask, before cordon blocked its own */
    uid_t uid;
    gid_t gid;
    /* Make the network namespace (loopback up, proxy listeners handed over) on a thread from
     * init's start, while the controller still resolves the profile and init builds the view,
     * which enters it before /sys: `cordon run`
     * sets it and clones init anew, without it, when the profile turns out to want the host's
     * network (network.unrestricted). A configuration asking for that anyway is refused. */
    bool early_network;
};

/* Everything init and the controller say to each other goes on ctl_sock as the messages of
 * sandbox/init_wire.h (docs/architecture.md has their table): the controller clones init
 * first, resolves the profile meanwhile and sends the result (INIT_WIRE_CONFIG); then it
 * compiles the seccomp filter while init builds the view, and sends it (INIT_WIRE_FILTER) or
 * INIT_WIRE_ABORT. Init hands over the proxy's, the resolver's, the host ports' and the
 * transparent listeners, the pty master and the rename filter's listener (those that apply)
 * and ends its set-up with INIT_WIRE_SETUP_DONE (init_setup_done). While the command runs, the
 * controller may ask for a socket connected to the sandbox's 127.0.0.1:PORT
 * (INIT_WIRE_CONNECT); `cordon run`'s init reports the command's end (INIT_WIRE_STATUS). */

/* Where the proxy listens inside every sandbox with a network namespace. */
#define PROXY_HTTP_PORT 18080
#define PROXY_SOCKS_PORT 18081

/* What the set-up shared by `cordon run` and sessions leaves for the supervisor. */
struct init_ready {
    struct sandbox_config cfg; /* as the controller resolved it */
    struct sc_program filter;  /* the seccomp filter each command loads before exec */
    int sfd;                   /* signalfd: SIGCHLD and the forwarded signals, all blocked */
    int slave;                 /* the pty slave with want_pty, else -1 */
};

/* The set-up: id maps, network namespace (loopback up, proxy listeners handed over; made on a
 * thread alongside the view with early_network), configuration, filesystem view, hostname, pty,
 * filter.
 * A failure prints one line and exits CORDON_EXIT_SETUP. */
void init_prepare(const struct init_params *p, struct init_ready *out);

/* Runs in the child of ns_clone_sandbox(); never returns. A set-up failure prints one line
 * and exits CORDON_EXIT_SETUP without running the command. */
CORDON_NORETURN void init_main(const struct init_params *p);
/* The end of the set-up, told to the controller on ctl (INIT_WIRE_SETUP_DONE): after
 * init_prepare and what the caller adds to it, before init serves the socket. */
void init_setup_done(int ctl);
/* Answer INIT_WIRE_CONNECT req on ctl (`cordon run`'s init and a session's): a socket
 * connecting to the sandbox's 127.0.0.1:PORT, passed back at once (init never waits for a
 * connect; the controller sees it through), or the error. Only 127.0.0.1, never elsewhere.
 * send_flags: sendmsg's (MSG_DONTWAIT: never block the supervisor). */
struct init_wire_msg;
void init_answer_connect(int ctl, const struct init_wire_msg *req, int send_flags);
#endif
