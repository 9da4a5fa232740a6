/* trust_java.h — the Java trust store of a sandbox with TLS termination (proxy/tls_terminate.h).
 * Java reads neither the PEM bundle nor SSL_CERT_FILE: it reads its own store, cacerts, which
 * Debian's ca-certificates-java keeps at /etc/ssl/certs/java/cacerts (each JDK's
 * lib/security/cacerts links there) and RHEL's update-ca-trust at
 * /etc/pki/ca-trust/extracted/java/cacerts. The controller writes a PKCS#12 store of the host's
 * Java store's certificates (or, with none readable, its PEM bundle's) plus the sandbox's CA,
 * each as a trusted certificate Java accepts; trust_bundle.c binds it in at SANDBOX_JAVA_CACERTS
 * and init covers the host's stores with it (fsview.c). Certificates only, never a key.
 * Runs in: the controller. */
#ifndef CORDON_TRUST_JAVA_H
#define CORDON_TRUST_JAVA_H
#include <stddef.h>

/* Write the store into fd (an empty file of the controller's; the caller closes it): the
 * certificates of the first host Java store that exists and reads (JKS or PKCS#12), else those
 * of the host's PEM bundle, then ca_pem's, with the store password "changeit" (Java's
 * default). 0, or -1 with one line in err. */
int trust_java_write(int fd, const char *ca_pem, char *err, size_t errlen);
/* The same from the stores given (tried in turn) and the PEM bundle given. */
int trust_java_write_from(int fd, const char *ca_pem, const char *const *stores, size_t nstores,
                          const char *bundle, char *err, size_t errlen);
#endif
