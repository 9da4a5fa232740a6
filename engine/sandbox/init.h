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

/* What init reports on ctl_sock when the command has ended (tag 'S'). */
struct init_status {
    char tag;
    int32_t exit_code; /* the command's, or 128+signal */
    int32_t signal;    /* the terminating signal, 0 if it exited */
};

/* The controller clones init first, resolves the profile meanwhile and sends the result
 * (INIT_MSG_CONFIG); then it compiles the seccomp filter while init builds the view, and sends
 * it as one message: INIT_MSG_FILTER followed by the BPF instructions, or INIT_MSG_ABORT. */
#define INIT_MSG_CONFIG 'C' /* first, with a memfd holding the resolved configuration */
#define INIT_MSG_FILTER 'F'
#define INIT_MSG_ABORT 'A'
/* Messages from init, each carrying one fd: the proxy's two listeners, the resolver's two, the
 * host ports' listeners, the transparent listener and the pty master (in this order, those that
 * apply), then the status (struct init_status, no fd). */
#define INIT_MSG_PTY 'P'
#define INIT_MSG_HTTP_LISTENER 'H'
#define INIT_MSG_SOCKS_LISTENER 'S'
/* The sandbox's resolver (UDP and TCP on NETNS_DNS_ADDR:53) and, with network.transparent, the
 * listener every other TCP connection is redirected to, or INIT_MSG_NO_TRANSPARENT (with a
 * placeholder fd) when the kernel cannot and the profile goes on without. */
#define INIT_MSG_DNS_UDP 'D'
#define INIT_MSG_DNS_TCP 'd'
#define INIT_MSG_TRANSPARENT 'X'
#define INIT_MSG_NO_TRANSPARENT 'x'

/* After the configuration, two per host port granted (network.host_ports, in its order): the
 * listeners on the sandbox's 127.0.0.1:PORT and [::1]:PORT whose connections the controller
 * carries to the host's 127.0.0.1:PORT (a client that tries localhost's ::1 first finds it too).
 * A sandbox without ::1 sends INIT_MSG_NO_HOST_PORT6 instead of the second, with the first
 * listener again (a message must carry an fd): the controller closes it. */
#define INIT_MSG_HOST_PORT 'T'
#define INIT_MSG_HOST_PORT6 'U'
#define INIT_MSG_NO_HOST_PORT6 'N'

/* Last of the set-up, after the filter came: the listener of init's rename filter
 * (sandbox/rename_notify.h), which the controller answers (controller/git_publish.h), or
 * INIT_MSG_NO_RENAME_NOTIFY with /dev/null when the kernel cannot: renames then go straight to
 * the kernel, and a write of a protected git config fails as before. */
#define INIT_MSG_RENAME_NOTIFY 'R'
#define INIT_MSG_NO_RENAME_NOTIFY 'r'

/* While the command runs, the controller may ask init (cordon run's; a session's has its own
 * wire, session_wire.h) for a socket connected to the sandbox's 127.0.0.1:PORT, for a port
 * published to the host: INIT_MSG_CONNECT with value = PORT; init answers INIT_MSG_CONNECTED
 * with value = 0 and the socket (connecting, non-blocking), or value = -errno and no fd. */
#define INIT_MSG_CONNECT 'O'
#define INIT_MSG_CONNECTED 'o'
struct init_connect {
    char tag;
    uint32_t id; /* the controller's, echoed */
    int32_t value;
};

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
#endif
