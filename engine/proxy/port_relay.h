/* port_relay.h — plain TCP relays between the sandbox's loopback and the host's, served on the
 * controller's event loop like the proxy's tunnels (splice_pipe.c), each connection one audit
 * line (audit_log.c):
 *   host ports  (network.host_ports, --allow-host-port PORT): init listens on the sandbox's
 *               127.0.0.1:PORT (and [::1]:PORT) and hands the listeners over; each connection accepted there is
 *               connected here, from the host's namespace, to the host's 127.0.0.1:PORT and
 *               nowhere else (kind "host_port");
 *   published   (--publish, POST /v1/ports): a listener on the host (127.0.0.1 unless named);
 *               each connection accepted there is carried to the sandbox's 127.0.0.1:PORT
 *               through a socket init connected inside (the controller cannot connect in the
 *               sandbox's namespace): asked for through inside_connect, answered with
 *               port_relay_inside_connected() (kind "publish").
 * At most PORT_RELAY_MAX_CONNS connections per port at once; beyond that a connection is
 * accepted and closed at once (logged, audited). A connection not through within
 * PORT_RELAY_CONNECT_MS is closed. Never blocks the loop; never connects anywhere but the two
 * loopback addresses named. */
#ifndef CORDON_PORT_RELAY_H
#define CORDON_PORT_RELAY_H
#include <stdbool.h>
#include <stddef.h>

#include "base/evloop.h"

#define PORT_RELAY_MAX_CONNS 256
#define PORT_RELAY_CONNECT_MS 15000

struct port_relay;

/* A published port as the API shows it. */
struct port_binding {
    unsigned port;      /* in the sandbox */
    char host_addr[64]; /* on the host: the address listened on */
    unsigned host_port;
    unsigned open;            /* connections open now */
    unsigned long long total; /* connections accepted so far */
};

/* Asks init for a socket connected (or connecting) to the sandbox's 127.0.0.1:port; the answer
 * is port_relay_inside_connected(id, ...). 0, or -errno when it cannot be asked. */
typedef int (*port_relay_inside_fn)(void *ctx, unsigned id, unsigned port);

/* command: what the audit lines name (as the proxy's). NULL on failure. */
struct port_relay *port_relay_new(struct ev_loop *loop, char **command);
/* Serve a host port's listener (from init; ownership taken): its port is the listener's own. */
int port_relay_add_host_port(struct port_relay *pr, int listen_fd);
/* Who connects inside for published ports (a session's init); without one, nothing can be
 * published. */
void port_relay_set_inside(struct port_relay *pr, port_relay_inside_fn fn, void *ctx);
/* Listen on host_addr (NULL: 127.0.0.1):host_port (0: any free port) for the sandbox's port.
 * 0 with *out filled, or -errno with one line in err: -EINVAL (bad port or address), -EEXIST
 * (port already published), -EADDRINUSE (the host port is taken), -ENOTSUP (nothing connects
 * inside), another -errno. */
int port_relay_publish(struct port_relay *pr, const char *host_addr, unsigned host_port,
                       unsigned port, struct port_binding *out, char *err, size_t errlen);
/* Stop publishing port: its listener and its open connections close. 0 or -ENOENT. */
int port_relay_unpublish(struct port_relay *pr, unsigned port);
/* The published ports, up to max of them into out (in the order published); returns how many
 * there are. */
size_t port_relay_published(const struct port_relay *pr, struct port_binding *out, size_t max);
/* init's answer to inside_connect id: a socket (ownership taken) or -errno. */
void port_relay_inside_connected(struct port_relay *pr, unsigned id, int fd_or_err);
/* Close every listener and connection now (the session is ending: its ports go before it
 * says it is gone); pr stays valid and publishes nothing more. NULL is fine. */
void port_relay_close_all(struct port_relay *pr);
/* Free what closed during the last loop round; call after each ev_run_once(). */
void port_relay_after_round(struct port_relay *pr);
/* Close every listener and connection. NULL is fine. */
void port_relay_free(struct port_relay *pr);
#endif
