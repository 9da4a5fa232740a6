/* host_listening.h — runs in the controller (host side, the host's network namespace): which TCP
 * ports the host listens on at its loopback (or at every address), for the refusal hook's
 * `host_listening` (a connection refused on the sandbox's own 127.0.0.1 while the host serves
 * that port: --allow-host-port PORT is the way in). */
#ifndef CORDON_HOST_LISTENING_H
#define CORDON_HOST_LISTENING_H
#include "base/util.h"

/* Appends each port (decimal, once) listening on 127.0.0.0/8, ::1, 0.0.0.0 or :: in this
 * network namespace, from /proc/net/tcp and /proc/net/tcp6, to out. A file that cannot be read
 * adds nothing. Returns the number of ports added. */
size_t host_listening_ports(struct str_list *out);
#endif
