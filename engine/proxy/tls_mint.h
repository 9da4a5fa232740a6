/* tls_mint.h — the leaf certificates TLS termination shows a client: one per host name or IP
 * address, signed by the sandbox's CA (tls_ca.h) on first use, with the host as its only
 * subjectAltName, kept in a bounded cache (least recently used out). All leaves share one
 * EC P-256 key made with the cache. Safe to call from several threads. */
#ifndef CORDON_TLS_MINT_H
#define CORDON_TLS_MINT_H
#include <stdbool.h>
#include <stddef.h>
#include <openssl/ssl.h>

#include "proxy/tls_ca.h"

enum tls_name_kind { TLS_NAME_BAD, TLS_NAME_DNS, TLS_NAME_IP4, TLS_NAME_IP6 };

/* What host is as a certificate's subjectAltName: a DNS name (1..253 bytes, labels of 1..63
 * letters, digits, '-' not at an end, '_'; a '*' is refused; a final dot is dropped), an IPv4
 * or IPv6 literal ("[v6]" too), else TLS_NAME_BAD. norm (n >= 256) gets the name lower-cased
 * and without brackets or final dot, or the address's bytes for an IP (16 bytes at most). */
enum tls_name_kind tls_mint_name(const char *host, unsigned char *norm, size_t n, size_t *normlen);

struct tls_mint;

/* cache_max: the most leaves kept (at least 1). NULL with a one-line reason in why. ca must
 * outlive the mint. */
struct tls_mint *tls_mint_new(const struct tls_ca *ca, size_t cache_max, char *why, size_t whylen);
/* A server context presenting host's leaf (from the cache, else signed now), a reference the
 * caller frees with SSL_CTX_free. NULL with a one-line reason in why (a bad name). */
SSL_CTX *tls_mint_server_ctx(struct tls_mint *m, const char *host, char *why, size_t whylen);
/* How many leaves the cache holds now; how many were ever signed. */
size_t tls_mint_cached(struct tls_mint *m);
size_t tls_mint_signed(struct tls_mint *m);
void tls_mint_free(struct tls_mint *m);
#endif
