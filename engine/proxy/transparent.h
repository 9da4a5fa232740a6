/* transparent.h — what the proxy needs to decide a transparent connection (network.transparent:
 * a TCP connection from inside to any address, redirected by the sandbox's nftables rule to one
 * listener): its original destination, and the name to decide on when the DNS stub gave none
 * for that address (the TLS server name, else the HTTP Host). The connection itself is
 * proxy_redirected.c's (kind CONN_TRANSPARENT). Never connects anywhere, never decides. */
#ifndef CORDON_TRANSPARENT_H
#define CORDON_TRANSPARENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The address the client connected to (SO_ORIGINAL_DST), as text (ip: at least 46 bytes) and
 * port. -errno; -EACCES when it is the sandbox's own loopback, 127.0.0.1 or ::1 (the listener
 * itself, reached directly: nothing to forward). */
int transparent_original_dst(int fd, struct sockaddr_storage *out, char *ip, size_t iplen,
                             uint16_t *port);

enum transparent_name { TN_FOUND, TN_NEED_MORE, TN_NONE };
/* The name in the first n bytes a client sent: a ClientHello's server name, or an HTTP/1 request's
 * Host (without its port). host: at least 256 bytes. */
enum transparent_name transparent_name_from(const uint8_t *p, size_t n, char *host, size_t cap);
#endif
