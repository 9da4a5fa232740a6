/* sni_parse.h — the server name a TLS client asks for (the SNI extension of its ClientHello,
 * RFC 6066), read from the first bytes of a connection, for the transparent path
 * (transparent.c) when the DNS stub gave no name for the destination address. Pure function
 * over a byte buffer: no I/O, no allocation. Never decides anything: the name it returns is
 * only a claim, and the caller connects to what the name resolves to, not where the client
 * was going. */
#ifndef CORDON_SNI_PARSE_H
#define CORDON_SNI_PARSE_H
#include <stddef.h>
#include <stdint.h>

enum sni_result {
    SNI_FOUND,     /* name holds the host name (lower case) */
    SNI_NEED_MORE, /* a TLS handshake record so far, not complete: read more */
    SNI_NOT_TLS,   /* not a ClientHello: the connection is something else */
    SNI_NONE,      /* a ClientHello without a (valid) host name */
};

/* Look at the n bytes a client sent first. name: at least 256 bytes. The ClientHello must fit
 * in its first record (up to 16 KiB), as every client's does. */
enum sni_result sni_parse(const uint8_t *p, size_t n, char *name, size_t name_cap);
#endif
