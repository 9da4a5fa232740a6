/* Runs in: the controller and init (both ends; nothing here after vfork). */
/* init_wire.h — the one wire between the controller and the sandbox's init (PID 1): every message, in every
 * phase (set-up, a `cordon run`'s command, a session), is one SOCK_SEQPACKET packet on their
 * socketpair made of a fixed header (struct init_wire_msg), a payload of header.len bytes and
 * up to two descriptors (SCM_RIGHTS). One enum names every tag; init ends its set-up with
 * INIT_WIRE_SETUP_DONE, so the controller takes what comes until then instead of computing how
 * many messages to expect. docs/architecture.md lists the messages (tag, direction, phase,
 * payload, descriptors).
 *
 * The receiver checks every packet against the tag's row (payload length, descriptors, flags):
 * a short or truncated packet, an unknown tag or a missing descriptor is an error
 * (init_wire_strerror words it), never a crash. Uses: nothing but the kernel; init_wire_parse
 * is a pure function over bytes (fuzz/fuzz_init_wire.c). Must never: act on a packet its row
 * refuses, or leave a refused packet's descriptors open. */
#ifndef CORDON_INIT_WIRE_H
#define CORDON_INIT_WIRE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum init_wire_tag {
    /* set-up, controller -> init */
    INIT_WIRE_MAPS = 1,      /* a root caller's maps written; value: NS_MAPS_* bits (first) */
    INIT_WIRE_CONFIG,        /* fd: a memfd with the resolved configuration (config_wire.h) */
    INIT_WIRE_IDMAPPED,      /* fd: a writable tree, idmapped (root_writes.h) */
    INIT_WIRE_NO_IDMAP,      /* the trees go without the idmap */
    INIT_WIRE_SHIFT_BIND,    /* fd: a detached tree for the shifted sandbox (root_writes.h) */
    INIT_WIRE_NO_SHIFT_BIND, /* nothing for that entry */
    INIT_WIRE_FILTER,        /* payload: the seccomp filter's BPF instructions */
    INIT_WIRE_ABORT,         /* the controller failed (and says why): run nothing */
    /* set-up, init -> controller */
    INIT_WIRE_HTTP_LISTENER,    /* fd: the proxy's HTTP listener */
    INIT_WIRE_SOCKS_LISTENER,   /* fd: the proxy's SOCKS5 listener */
    INIT_WIRE_DNS_UDP,          /* fd: the resolver's UDP socket */
    INIT_WIRE_DNS_TCP,          /* fd: the resolver's TCP listener */
    INIT_WIRE_TRANSPARENT,      /* fd: the transparent listener (network.transparent) */
    INIT_WIRE_NO_TRANSPARENT,   /* the kernel cannot; the profile goes on without */
    INIT_WIRE_HOST_PORT,        /* fd: a host port's listener on 127.0.0.1 */
    INIT_WIRE_HOST_PORT6,       /* fd: the same port's on [::1] */
    INIT_WIRE_NO_HOST_PORT6,    /* the sandbox has no ::1 */
    INIT_WIRE_PTY,              /* fd: the pty master */
    INIT_WIRE_RENAME_NOTIFY,    /* fd: the rename filter's listener (rename_notify.h) */
    INIT_WIRE_NO_RENAME_NOTIFY, /* the kernel cannot: renames go straight to it */
    INIT_WIRE_SETUP_DONE,       /* the last of the set-up: init serves the socket now */
    /* a command's life (`cordon run` and sessions) */
    INIT_WIRE_CONNECT,   /* controller: id, value = PORT on the sandbox's 127.0.0.1 */
    INIT_WIRE_CONNECTED, /* init: id, value = 0 and fd (connecting), or -errno and none */
    INIT_WIRE_STATUS,    /* init (`cordon run`): payload struct init_wire_status, last */
    /* a session's, controller -> init */
    INIT_WIRE_SPAWN,    /* id: the job; flags; payload: the command; fds: stdout, stderr */
    INIT_WIRE_SIGNAL,   /* id: seq; pid: the group; value: the signal (0: probe) */
    INIT_WIRE_SHUTDOWN, /* value: grace in ms */
    /* a session's, init -> controller */
    INIT_WIRE_STARTED,  /* id: the job; pid: its pid or -errno; value; fd: the log (bg) */
    INIT_WIRE_SIGNALED, /* id: seq; pid: the group; value: 0 / -ESRCH / -EINVAL */
    INIT_WIRE_EXITED,   /* pid: a command's bash; value: its wait status */
    INIT_WIRE_GONE,     /* pid: a fresh sandbox (INIT_WIRE_FRESH) ended */
    /* a review session's rollback (review_view.h) */
    INIT_WIRE_REVIEW_SWAP,    /* controller: payload: the layer's folder of the new upper, work */
    INIT_WIRE_REVIEW_SWAPPED, /* init: value 0 (or INIT_WIRE_SWAP_STACKED), payload: the old
                               * tree's mount ids (uint32); or value -errno, payload: the line
                               * saying why */
    INIT_WIRE_TAG_END         /* not a tag: one past the last */
};

/* INIT_WIRE_SPAWN's flags (no other message has any). */
#define INIT_WIRE_BACKGROUND 1u /* log to $TMPDIR/cordon/processes/PID.log (not on a restart) */
#define INIT_WIRE_FRESH 2u      /* in a sandbox of its own (session/fresh_sandbox.h) */
#define INIT_WIRE_MAX_COMMAND (128 * 1024) /* bytes of a session's shell string */
#define INIT_WIRE_MAX_SWAPPED 16384        /* bytes of INIT_WIRE_REVIEW_SWAPPED's payload */
/* INIT_WIRE_REVIEW_SWAPPED's value when the old view stays mounted beneath (Linux before 6.5) */
#define INIT_WIRE_SWAP_STACKED 1

struct init_wire_msg {
    uint8_t tag;   /* enum init_wire_tag */
    uint8_t flags; /* INIT_WIRE_SPAWN only */
    uint8_t nfds;  /* descriptors the sender attached: a missing one is seen */
    uint8_t pad;
    uint32_t id;   /* the controller's job, signal seq or connection, echoed in answers */
    int32_t pid;   /* STARTED/EXITED/GONE: a pid or -errno; SIGNAL(ED): the group */
    int32_t value; /* the message's number (the comment of its tag) */
    uint32_t len;  /* payload bytes after the header */
};

/* INIT_WIRE_STATUS's payload: how the command ended. */
struct init_wire_status {
    int32_t exit_code; /* the command's, or 128+signal */
    int32_t signal;    /* the terminating signal, 0 if it exited */
};

/* Send one message: msg (its len and nfds are set here), payload (NULL/0 for none) and nfds
 * descriptors (0..2). 0 or -errno (-EPIPE: the other end is gone). */
int init_wire_send(int sock, const struct init_wire_msg *msg, const void *payload, size_t len,
                   const int *fds, int nfds);
/* The same with sendmsg's flags (MSG_DONTWAIT: a loop that must not block). */
int init_wire_send_flags(int sock, const struct init_wire_msg *msg, const void *payload, size_t len,
                         const int *fds, int nfds, int flags);
/* A message with only a tag, a value and one descriptor (-1: none). 0 or -errno. */
int init_wire_send_fd(int sock, enum init_wire_tag tag, int32_t value, int fd);

/* Receive one message: the payload (up to cap bytes) into buf, its descriptors into fds (unused
 * slots -1, received ones O_CLOEXEC). Returns the payload length; -EPIPE on EOF, -EAGAIN, an
 * error of init_wire_parse (every descriptor then closed) or another -errno. */
long init_wire_recv(int sock, struct init_wire_msg *msg, void *buf, size_t cap, int fds[2],
                    int flags);
/* Check one packet as received: n bytes at packet, nfds descriptors came with it, truncated
 * when the kernel cut it or its descriptors. The header is copied to msg. Returns the payload
 * length, or -EBADMSG (a bad length or flag), -EPROTO (an unknown tag) or -EBADFD (descriptors
 * other than the tag's: one missing). */
long init_wire_parse(const void *packet, size_t n, int nfds, int truncated,
                     struct init_wire_msg *msg);
/* Is r one of init_wire_parse's refusals (a packet that is none of the wire's), rather than
 * the socket's end or the kernel's error? */
bool init_wire_refused(long r);
/* What went wrong, in a few words, for an error of init_wire_recv: the three of
 * init_wire_parse, the end of the socket, or the kernel's. */
const char *init_wire_strerror(long r);
/* The tag's name ("INIT_WIRE_CONFIG"), or "an unknown tag". */
const char *init_wire_tag_name(unsigned tag);
#endif
