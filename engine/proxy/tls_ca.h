/* tls_ca.h — the certificate authority one sandbox's TLS termination signs with: an EC P-256
 * key and a self-signed certificate made in memory when the sandbox starts. Only the
 * certificate's PEM ever leaves this process (the trust bundle inside, tls_trust.c); the key
 * lives in the controller, which the sandbox's pid namespace cannot see, and dies with it.
 * OpenSSL (Debian's libssl, docs/network.md says why). */
#ifndef CORDON_TLS_CA_H
#define CORDON_TLS_CA_H
#include <stddef.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

struct tls_ca;

/* A fresh CA named after label (e.g. "cordon sandbox 1234"), valid from an hour ago for
 * valid_days. NULL with a one-line reason in why. */
struct tls_ca *tls_ca_new(const char *label, int valid_days, char *why, size_t whylen);
/* The certificate, PEM encoded, NUL terminated: what the sandbox is given to trust. */
const char *tls_ca_cert_pem(const struct tls_ca *ca);
/* For tls_mint.c: the certificate and key that sign leaves (owned by ca). */
X509 *tls_ca_cert(const struct tls_ca *ca);
EVP_PKEY *tls_ca_key(const struct tls_ca *ca);
void tls_ca_free(struct tls_ca *ca);

/* Set a random positive 128-bit serial number on cert: 0, or -1. */
int tls_random_serial(X509 *cert);
/* Add extension nid (its value in OpenSSL's config syntax, e.g. "critical,CA:TRUE") to cert,
 * as issued by issuer (cert itself for the CA). 0, or -1 with OpenSSL's error queue set. */
int tls_add_ext(X509 *cert, X509 *issuer, int nid, const char *value);
/* The newest OpenSSL error as one line ("" when none), clearing the queue. */
const char *tls_error_line(char *buf, size_t n);
#endif
