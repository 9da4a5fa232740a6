/* Runs in: controller (cordon-session); init (the session's PID 1). */
/* session_wire.h — the messages between a session's controller and its init (PID 1), one per
 * SOCK_SEQPACKET packet on their socketpair, each a fixed header, an optional payload and up
 * to two file descriptors (SCM_RIGHTS). The set-up before them is `cordon run`'s (init.h).
 *
 *   controller -> init                          init -> controller
 *   SW_SPAWN  job, flags, command; fds: out, err   SW_STARTED job, pid or -errno; fd: the log (bg)
 *   SW_SIGNAL pgid, signal (0: probe), seq         SW_SIGNALED seq, pgid, 0 / -ESRCH / -EINVAL
 *   SW_SHUTDOWN grace_ms                           SW_EXITED  pid, wait status (a command's bash)
 *                                                  SW_GONE    pid: a fresh sandbox (SW_FRESH) ended
 *   SW_CONNECT id, port                            SW_CONNECTED id, 0 or -errno; fd: a socket
 *                                                  connected (or connecting) to 127.0.0.1:port
 *
 * SW_CONNECT carries a published port's connection into the sandbox: the controller cannot
 * connect in the sandbox's network namespace, init can; only to 127.0.0.1, never elsewhere.
 *
 * Init answers SW_SIGNAL for groups only: kill(-pgid, sig), never pid 0, 1 or their negatives.
 * SW_SHUTDOWN (or the controller's end of the socket closing) makes init TERM everything in the
 * sandbox, KILL what is left after grace_ms, reap it all and exit. */
#ifndef CORDON_SESSION_WIRE_H
#define CORDON_SESSION_WIRE_H
#include <stddef.h>
#include <stdint.h>

enum sw_tag {
    SW_SPAWN = 'X',
    SW_SIGNAL = 'K',
    SW_SHUTDOWN = 'Q',
    SW_STARTED = 's',
    SW_SIGNALED = 'k',
    SW_EXITED = 'e',
    SW_GONE = 'g',
    SW_CONNECT = 'C',
    SW_CONNECTED = 'c',
};

#define SW_BACKGROUND 1u            /* SW_SPAWN flag: log to $TMPDIR/cordon/processes/PID.log */
#define SW_FRESH 2u                 /* SW_SPAWN flag: in a sandbox of its own (fresh_sandbox.h) */
#define SW_MAX_COMMAND (128 * 1024) /* bytes of a shell string */

struct sw_msg {
    uint8_t tag;
    uint8_t flags;
    uint16_t pad;
    uint32_t id;   /* SPAWN/STARTED: the controller's job id; SIGNAL/SIGNALED: seq;
                           * CONNECT/CONNECTED: the connection's */
    int32_t pid;   /* STARTED/EXITED: pid or -errno; SIGNAL(ED): the group;
                           * CONNECTED: 0 or -errno */
    int32_t value; /* SIGNAL: signal; SIGNALED: result; EXITED: wait status;
                           * SHUTDOWN: grace in ms; SPAWN: payload length; CONNECT: port */
};

/* Send msg with payload (may be NULL/0) and nfds descriptors (0..2). 0 or -errno. */
int sw_send(int sock, const struct sw_msg *msg, const void *payload, size_t len, const int *fds,
            int nfds);
/* Receive one message; the payload (up to cap bytes) goes to buf, descriptors to fds (unused
 * slots -1; received ones are O_CLOEXEC). Returns the payload length, -EPIPE on EOF, -EAGAIN,
 * -EBADMSG for a short or truncated packet, or another -errno. */
long sw_recv(int sock, struct sw_msg *msg, void *buf, size_t cap, int fds[2], int flags);
#endif
