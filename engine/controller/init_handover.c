/* init_handover.c — see init_handover.h. */
#include "controller/init_handover.h"

#include <stdio.h>
#include <unistd.h>

#include "base/log.h"
#include "controller/git_publish.h"
#include "proxy/port_relay.h"
#include "proxy/proxy.h"
#include "sandbox/init_wire.h"
#include "sandbox/pty.h"

void init_handover_prepare(struct init_handover *h)
{
    h->master = h->http_fd = h->socks_fd = -1;
    h->dns_udp = h->dns_tcp = h->transparent = -1;
    h->tty_raw = false;
    h->git = NULL;
}

/* A host port's listener to serve: the relay made on the first one when the caller has none. */
static void take_host_port(struct init_handover *h, int fd)
{
    if (!h->ports)
        h->ports = port_relay_new(h->loop, h->label);
    if (port_relay_add_host_port(h->ports, fd) < 0)
        LOG_E(h->log_unit, "a host port's listener cannot be served: its connections fail");
}

/* A listener taken: one sent twice keeps the last. */
static void replace_fd(int *slot, int fd)
{
    if (*slot >= 0)
        close(*slot);
    *slot = fd;
}

void init_handover_attach(struct init_handover *h, struct proxy *px)
{
    if (px && (h->dns_udp >= 0 || h->dns_tcp >= 0))
        (void)proxy_attach_dns(px, h->dns_udp, h->dns_tcp);
    else {
        if (h->dns_udp >= 0)
            close(h->dns_udp);
        if (h->dns_tcp >= 0)
            close(h->dns_tcp);
    }
    if (px && h->transparent >= 0)
        (void)proxy_attach_transparent(px, h->transparent);
    else if (h->transparent >= 0)
        close(h->transparent);
    h->dns_udp = h->dns_tcp = h->transparent = -1;
}

int init_handover_receive(int ctl, struct init_handover *h, char *err, size_t errlen)
{
    for (;;) {
        struct init_wire_msg m;
        int fds[2];
        long r = init_wire_recv(ctl, &m, NULL, 0, fds, 0);
        if (init_wire_refused(r)) {
            snprintf(err, errlen, "the sandbox's init sent %s during its set-up",
                     init_wire_strerror(r));
            return -1;
        }
        if (r < 0)
            return -2;
        int fd = fds[0];
        switch (m.tag) {
        case INIT_WIRE_SETUP_DONE:
            return 0;
        case INIT_WIRE_PTY:
            /* at once: the command starts as soon as init's set-up is done */
            h->master = fd;
            pty_copy_winsize(STDIN_FILENO, h->master);
            h->tty_raw = pty_raw_mode(STDIN_FILENO, &h->saved_tty) == 0;
            break;
        case INIT_WIRE_HTTP_LISTENER:
            h->http_fd = fd;
            break;
        case INIT_WIRE_SOCKS_LISTENER:
            h->socks_fd = fd;
            break;
        case INIT_WIRE_HOST_PORT:
        case INIT_WIRE_HOST_PORT6:
            take_host_port(h, fd);
            break;
        case INIT_WIRE_RENAME_NOTIFY:
            if (!h->git)
                h->git = git_publish_start(fd, h->git_roots, h->cfg);
            else if (fd >= 0) /* a second one is none of ours */
                close(fd);
            break;
        case INIT_WIRE_DNS_UDP:
            replace_fd(&h->dns_udp, fd);
            break;
        case INIT_WIRE_DNS_TCP:
            replace_fd(&h->dns_tcp, fd);
            break;
        case INIT_WIRE_TRANSPARENT:
            replace_fd(&h->transparent, fd);
            break;
        case INIT_WIRE_NO_TRANSPARENT:
            break; /* the kernel cannot: the profile goes on without (init said so if required) */
        default:
            if (fd >= 0)
                close(fd);
            break;
        }
    }
}
