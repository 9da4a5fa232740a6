/* init_handover.c — see init_handover.h. */
#include "controller/init_handover.h"

#include <stdio.h>
#include <unistd.h>

#include "base/log.h"
#include "controller/controller_setup.h"
#include "controller/git_publish.h"
#include "proxy/port_relay.h"
#include "sandbox/init_wire.h"
#include "sandbox/pty.h"

void init_handover_prepare(struct init_handover *h)
{
    h->master = h->http_fd = h->socks_fd = -1;
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
        default:
            if (!controller_take_listener((enum init_wire_tag)m.tag, fd) && fd >= 0)
                close(fd);
            break;
        }
    }
}
