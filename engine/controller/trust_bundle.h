/* trust_bundle.h — what a sandbox with TLS termination (proxy/tls_terminate.h) trusts: the
 * host's CA bundle plus the sandbox's own CA certificate, in one file the controller writes and
 * init binds read-only over /etc/ssl/certs/ca-certificates.crt (as a grant's file is bound,
 * sandbox/grants.h, at SANDBOX_CA_BUNDLE, which init binds over the system's: fsview.c), with
 * SSL_CERT_FILE, CURL_CA_BUNDLE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS and GIT_SSL_CAINFO
 * naming it in the command's environment. Beside it, on a host with a Java trust store, Java's
 * own store (trust_java.h), bound at SANDBOX_JAVA_CACERTS and over the host's stores. The files
 * hold certificates only, never a key.
 * Runs in: the controller. */
#ifndef CORDON_TRUST_BUNDLE_H
#define CORDON_TRUST_BUNDLE_H
#include <limits.h>
#include <stddef.h>

#include "sandbox/sandbox-t.h"

struct trust_bundle {
    char dir[PATH_MAX - 64]; /* a fresh folder of the controller's; "" when none */
    char file[PATH_MAX];     /* the bundle in it */
    char java[PATH_MAX];     /* Java's store in it; "" on a host without one */
    const char *target;      /* the path the variables name inside */
};

/* Make the (empty) bundle file (and Java's store, when the host has one of its own), add their
 * binds to cfg->grant_binds and the variables to cfg->env
 * (replacing the caller's). Early: before a root caller's trees are taken (the file is filled
 * later, the same inode). 0, or -1 with one line in err. */
int trust_bundle_reserve(struct trust_bundle *b, struct sandbox_config *cfg, char *err,
                         size_t errlen);
/* Write the host's bundle (when it has one), then ca_pem, into the reserved file; Java's store
 * with the same CA. 0 or -1. */
int trust_bundle_fill(struct trust_bundle *b, const char *ca_pem, char *err, size_t errlen);
/* Remove the files and their folder (once init has bound it: the bind keeps the file). */
void trust_bundle_remove(struct trust_bundle *b);
#endif
