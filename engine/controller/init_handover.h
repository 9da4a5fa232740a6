/* Runs in: controller (`cordon run`, a session's controller). */
/* init_handover.h — the one loop that takes what init hands over during its set-up (the pty
 * master, the proxy's listeners, the host ports' listeners, the rename listener, the resolver's
 * and the transparent listeners) until init says INIT_WIRE_SETUP_DONE. Uses init_wire, the port
 * relay, git_publish and the proxy; never runs a step of the start-up. */
#ifndef CORDON_INIT_HANDOVER_H
#define CORDON_INIT_HANDOVER_H
#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

struct ev_loop;
struct git_publish;
struct port_relay;
struct proxy;
struct sandbox_config;
struct str_list;

struct init_handover {
    /* In: what the caller gives the loop. */
    struct ev_loop *loop;             /* the port relay's, when one is made here */
    char **label;                     /* names the port relay's connections in its logs */
    const char *log_unit;             /* of the line saying a host port cannot be served */
    const struct str_list *git_roots; /* the guarded repositories, for the rename listener */
    const struct sandbox_config *cfg;
    /* Out, -1 or NULL when init sent none; each the caller's to free or close. */
    /* The pty's master: the caller's stdin is put in raw mode at once (tty_raw, saved_tty)
     * and the window size copied to it. */
    int master;
    bool tty_raw; /* stdin was put in raw mode: restore saved_tty */
    struct termios saved_tty;
    int http_fd, socks_fd; /* the proxy's two listeners */
    /* The listeners beside the proxy's two, for init_handover_attach: the resolver's (UDP and
     * TCP) and network.transparent's. */
    int dns_udp, dns_tcp, transparent;
    struct port_relay *ports; /* the caller's, or made on the first host port when NULL */
    struct git_publish *git;  /* answers the rename listener */
};

/* h as the loop expects it before its first message: every out field empty. */
void init_handover_prepare(struct init_handover *h);
/* Give the resolver's and the transparent listeners to the proxy px (closed when px is NULL);
 * h holds none of them afterwards. */
void init_handover_attach(struct init_handover *h, struct proxy *px);
/* Take init's messages from ctl until INIT_WIRE_SETUP_DONE: 0. -1 with one line in err when init
 * sent what is none of the wire's (the caller stops init); -2 when init hung up or the socket
 * failed: init failed its set-up and said why itself. */
int init_handover_receive(int ctl, struct init_handover *h, char *err, size_t errlen);
#endif
