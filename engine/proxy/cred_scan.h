/* cred_scan.h — looking for the sandbox's placeholders in a byte stream the proxy does not
 * read as HTTP: the client->server side of a CONNECT or SOCKS5 tunnel, or of a connection
 * network.transparent redirects, that is not TLS-terminated. Any protocol (ssh, git over ssh,
 * a database) passes; a stream that carries the placeholder of a credential that may not go to
 * the destination is refused by the caller (docs/network.md).
 * A placeholder split across reads is found: the last (longest placeholder - 1) bytes are kept
 * between calls. Pure bytes in, no I/O; the set must outlive the scanner.
 * Must never: miss a whole placeholder of the set in the stream, however it is split. */
#ifndef CORDON_CRED_SCAN_H
#define CORDON_CRED_SCAN_H
#include <stdbool.h>
#include <stddef.h>

#include "proxy/cred_rewrite.h"

struct cred_scan;

/* A scanner of one stream to host:port: the credentials that may go there are not looked for
 * (their placeholder is passed as it is, as before). NULL when out of memory. */
struct cred_scan *cred_scan_new(const struct cred_set *set, const char *host, int port);
/* Scan the stream's next n bytes: the index of a credential whose placeholder ends in them
 * (begun in them or in the bytes before), or -1. */
long cred_scan_feed(struct cred_scan *s, const char *p, size_t n);
/* Did the stream begin like an HTTP/1.x request ("METHOD " in capitals)? */
bool cred_scan_began_http(const struct cred_scan *s);
/* The one line of a refusal of credential k to host:port, as the rewriter's. */
void cred_scan_refusal(const struct cred_set *set, long k, const char *host, int port, char *why,
                       size_t whylen);
void cred_scan_free(struct cred_scan *s);
#endif
