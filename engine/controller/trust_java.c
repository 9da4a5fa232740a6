/* trust_java.c — the sandbox's Java trust store: the host's Java CAs (or its PEM bundle's) and
 * the sandbox's CA, as a PKCS#12 store Java reads as trusted certificates (trust_java.h).
 * Uses OpenSSL's PKCS#12 API (Debian's OpenSSL 3.0 has no `openssl pkcs12 -jdktrust`).
 * Never holds or writes a key. */
#include "controller/trust_java.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "base/util.h"
#include "sandbox/sandbox-t.h"

#define JAVA_STORE_PASSWORD "changeit" /* the password every JDK's cacerts has */
#define JAVA_STORE_MAX (16u << 20)     /* a host store larger than this is not read */
/* Java's PKCS12KeyStore keeps a certificate bag as a trusted entry only when it carries this
 * attribute (Oracle's "trusted key usage"), whose value is the usage it is trusted for:
 * anyExtendedKeyUsage, trusted for everything, as keytool -importcert writes it. */
#define JDK_TRUSTED_KEY_USAGE "2.16.840.1.113894.746875.1.1"
#define ANY_EXTENDED_KEY_USAGE "2.5.29.37.0"

/* The certificates gathered, as DER: no certificate is decoded (OpenSSL 3.0 takes ~0.5 ms to
 * decode one, its public key through the providers' decoders: a host store of 144 CAs took
 * 60-90 ms, against ~5 ms for the whole store as bytes). */
struct der_list {
    struct der {
        unsigned char *p;
        size_t n;
    } * items;
    size_t len, cap;
};

static bool der_push(struct der_list *l, const unsigned char *p, size_t n)
{
    if (n < 2 || p[0] != 0x30) /* a certificate is a SEQUENCE: anything else is left out */
        return true;
    if (l->len == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        struct der *items = realloc(l->items, cap * sizeof *items);
        if (!items)
            return false;
        l->items = items;
        l->cap = cap;
    }
    unsigned char *copy = malloc(n);
    if (!copy)
        return false;
    memcpy(copy, p, n);
    l->items[l->len++] = (struct der){copy, n};
    return true;
}

static void der_clear(struct der_list *l)
{
    for (size_t i = 0; i < l->len; i++)
        free(l->items[i].p);
    l->len = 0;
}

/* Big-endian reads of a JKS file, each checking the bytes are there. */
struct jks_reader {
    const unsigned char *p;
    size_t left;
};

static bool jks_take(struct jks_reader *r, size_t n, const unsigned char **out)
{
    if (r->left < n)
        return false;
    if (out)
        *out = r->p;
    r->p += n;
    r->left -= n;
    return true;
}

static bool jks_u32(struct jks_reader *r, uint32_t *v)
{
    const unsigned char *b;
    if (!jks_take(r, 4, &b))
        return false;
    *v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    return true;
}

/* A Java modified-UTF-8 string (alias, certificate type): skipped. */
static bool jks_skip_utf(struct jks_reader *r)
{
    const unsigned char *b;
    if (!jks_take(r, 2, &b))
        return false;
    return jks_take(r, (size_t)b[0] << 8 | b[1], NULL);
}

/* One certificate (version 2: type, length, DER; version 1 has no type), kept or skipped. */
static bool jks_cert(struct jks_reader *r, uint32_t version, struct der_list *out)
{
    uint32_t len;
    const unsigned char *der;
    if ((version == 2 && !jks_skip_utf(r)) || !jks_u32(r, &len) || !jks_take(r, len, &der))
        return false;
    return !out || der_push(out, der, len);
}

/* The trusted certificates of a JKS store (magic FEEDFEED; its integrity hash is the host's
 * concern, as the PEM bundle's is): entries of tag 2, the certificates of key entries skipped. */
static bool jks_read(const unsigned char *buf, size_t len, struct der_list *out)
{
    struct jks_reader r = {buf, len};
    uint32_t magic, version, count;
    if (!jks_u32(&r, &magic) || magic != 0xFEEDFEEDu || !jks_u32(&r, &version) ||
        (version != 1 && version != 2) || !jks_u32(&r, &count))
        return false;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t tag, n;
        if (!jks_u32(&r, &tag) || !jks_skip_utf(&r) || !jks_take(&r, 8, NULL))
            return false;
        if (tag == 2) {
            if (!jks_cert(&r, version, out))
                return false;
            continue;
        }
        if (tag != 1 || !jks_u32(&r, &n) || !jks_take(&r, n, NULL) || !jks_u32(&r, &n))
            return false;
        for (uint32_t c = 0; c < n; c++)
            if (!jks_cert(&r, version, NULL))
                return false;
    }
    return true;
}

/* The certificates of a PKCS#12 store (a JDK's own cacerts since JDK 9; without a MAC since
 * JDK 18, which PKCS12_parse accepts). Decoded: rarer than JKS on the hosts' own paths. */
static bool p12_read(const unsigned char *buf, size_t len, struct der_list *out)
{
    const unsigned char *p = buf;
    PKCS12 *p12 = d2i_PKCS12(NULL, &p, (long)len);
    if (!p12)
        return false;
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    STACK_OF(X509) *ca = NULL;
    bool ok = PKCS12_parse(p12, JAVA_STORE_PASSWORD, &key, &cert, &ca) == 1;
    PKCS12_free(p12);
    EVP_PKEY_free(key);
    X509_free(cert); /* a key's own certificate: not a trust anchor */
    for (int i = 0; ok && ca && i < sk_X509_num(ca); i++) {
        unsigned char *der = NULL;
        int n = i2d_X509(sk_X509_value(ca, i), &der);
        ok = n > 0 && der_push(out, der, (size_t)n);
        OPENSSL_free(der);
    }
    sk_X509_pop_free(ca, X509_free);
    return ok;
}

/* Every CERTIFICATE block of a PEM text, as DER (other blocks skipped). */
static bool pem_read(const char *pem, size_t len, struct der_list *out)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    bool ok = bio != NULL;
    char *name = NULL, *header = NULL;
    unsigned char *data = NULL;
    long n = 0;
    while (ok && PEM_read_bio(bio, &name, &header, &data, &n) == 1) {
        if (strcmp(name, PEM_STRING_X509) == 0)
            ok = der_push(out, data, (size_t)n);
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_free(data);
    }
    BIO_free(bio);
    ERR_clear_error(); /* the end of the text reads as an error */
    return ok;
}

/* The host's CAs as Java sees them: its first Java store that reads, else its PEM bundle. */
static void host_certificates(const char *const *stores, size_t nstores, const char *bundle,
                              struct der_list *out)
{
    for (size_t i = 0; i < nstores; i++) {
        char *buf = NULL;
        size_t len = 0;
        if (read_file(stores[i], 0, JAVA_STORE_MAX, &buf, &len) < 0)
            continue;
        bool ok = jks_read((unsigned char *)buf, len, out);
        if (!ok) {
            der_clear(out); /* a store read in part: the next reading or source instead */
            ok = p12_read((unsigned char *)buf, len, out);
        }
        free(buf);
        if (ok && out->len > 0)
            return;
        der_clear(out);
        ERR_clear_error();
    }
    char *buf = NULL;
    size_t len = 0;
    if (read_file(bundle, 0, JAVA_STORE_MAX, &buf, &len) == 0 && !pem_read(buf, len, out))
        der_clear(out);
    free(buf);
}

/* A DER header (tag, definite length) at p, which has room for 6 bytes; its size. */
static size_t der_header(unsigned char *p, unsigned char tag, size_t len)
{
    p[0] = tag;
    if (len < 0x80) {
        p[1] = (unsigned char)len;
        return 2;
    }
    size_t bytes = len > 0xffffff ? 4 : len > 0xffff ? 3 : len > 0xff ? 2 : 1;
    p[1] = (unsigned char)(0x80 | bytes);
    for (size_t i = 0; i < bytes; i++)
        p[2 + i] = (unsigned char)(len >> (8 * (bytes - 1 - i)));
    return 2 + bytes;
}

static size_t der_header_len(size_t len)
{
    unsigned char scratch[6];
    return der_header(scratch, 0, len);
}

/* A certificate bag of one certificate's DER (RFC 7292 4.2.3), without attributes:
 *   SafeBag { certBag, [0] CertBag { x509Certificate, [0] OCTET STRING der } }
 * built as bytes and read back, so that the certificate is never decoded. */
static PKCS12_SAFEBAG *cert_bag(const struct der *cert)
{
    static const unsigned char cert_bag_oid[] = {0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7,
                                                 0x0d, 0x01, 0x0c, 0x0a, 0x01, 0x03};
    static const unsigned char x509_cert_oid[] = {0x06, 0x0a, 0x2a, 0x86, 0x48, 0x86,
                                                  0xf7, 0x0d, 0x01, 0x09, 0x16, 0x01};
    size_t octets = der_header_len(cert->n) + cert->n;
    size_t inner = sizeof x509_cert_oid + der_header_len(octets) + octets;
    size_t value = der_header_len(inner) + inner;
    size_t bag = sizeof cert_bag_oid + der_header_len(value) + value;
    size_t total = der_header_len(bag) + bag;
    unsigned char *buf = malloc(total), *p = buf;
    if (!buf)
        return NULL;
    p += der_header(p, 0x30, bag);
    memcpy(p, cert_bag_oid, sizeof cert_bag_oid);
    p += sizeof cert_bag_oid;
    p += der_header(p, 0xa0, value);
    p += der_header(p, 0x30, inner);
    memcpy(p, x509_cert_oid, sizeof x509_cert_oid);
    p += sizeof x509_cert_oid;
    p += der_header(p, 0xa0, octets);
    p += der_header(p, 0x04, cert->n);
    memcpy(p, cert->p, cert->n);
    const unsigned char *in = buf;
    PKCS12_SAFEBAG *b = d2i_PKCS12_SAFEBAG(NULL, &in, (long)total);
    free(buf);
    return b;
}

/* One trusted certificate bag: the certificate, its alias, Java's trusted-usage attribute. */
static PKCS12_SAFEBAG *trusted_bag(const struct der *cert, const char *alias,
                                   const ASN1_OBJECT *usage)
{
    PKCS12_SAFEBAG *bag = cert_bag(cert);
    if (!bag)
        return NULL;
    /* len -1: the value is the ASN1_OBJECT itself, set as an OBJECT IDENTIFIER */
    if (!PKCS12_add_friendlyname_asc(bag, alias, -1) ||
        !PKCS12_add1_attr_by_txt(bag, JDK_TRUSTED_KEY_USAGE, V_ASN1_OBJECT,
                                 (const unsigned char *)usage, -1)) {
        PKCS12_SAFEBAG_free(bag);
        return NULL;
    }
    return bag;
}

/* The DER of a store of certs, each trusted, under aliases host-N and the last as
 * cordon-sandbox-ca; NULL on failure. */
static unsigned char *store_der(const struct der_list *certs, int *len)
{
    unsigned char *der = NULL;
    STACK_OF(PKCS12_SAFEBAG) *bags = sk_PKCS12_SAFEBAG_new_null();
    STACK_OF(PKCS7) *safes = NULL;
    PKCS12 *p12 = NULL;
    ASN1_OBJECT *usage = OBJ_txt2obj(ANY_EXTENDED_KEY_USAGE, 1);
    if (!bags || !usage)
        goto out;
    for (size_t i = 0; i < certs->len; i++) {
        char alias[32];
        if (i == certs->len - 1)
            snprintf(alias, sizeof alias, "cordon-sandbox-ca");
        else
            snprintf(alias, sizeof alias, "host-%zu", i + 1);
        PKCS12_SAFEBAG *bag = trusted_bag(&certs->items[i], alias, usage);
        if (!bag || !sk_PKCS12_SAFEBAG_push(bags, bag)) {
            PKCS12_SAFEBAG_free(bag);
            goto out;
        }
    }
    /* nid -1: an unencrypted safe (certificates are public; the default would be RC2, which
     * OpenSSL 3 keeps in its legacy provider) */
    if (!PKCS12_add_safe(&safes, bags, -1, 0, NULL) || !(p12 = PKCS12_add_safes(safes, 0)) ||
        !PKCS12_set_mac(p12, JAVA_STORE_PASSWORD, -1, NULL, 0, PKCS12_DEFAULT_ITER, NULL))
        goto out;
    *len = i2d_PKCS12(p12, &der);
    if (*len <= 0)
        der = NULL;
out:
    PKCS12_free(p12);
    sk_PKCS7_pop_free(safes, PKCS7_free);
    sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
    ASN1_OBJECT_free(usage);
    return der;
}

int trust_java_write(int fd, const char *ca_pem, char *err, size_t errlen)
{
    static const char *const stores[] = {SANDBOX_JAVA_STORE_DEBIAN, SANDBOX_JAVA_STORE_RHEL};
    return trust_java_write_from(fd, ca_pem, stores, ARRAY_LEN(stores), SANDBOX_SYSTEM_CA_BUNDLE,
                                 err, errlen);
}

int trust_java_write_from(int fd, const char *ca_pem, const char *const *stores, size_t nstores,
                          const char *bundle, char *err, size_t errlen)
{
    int rc = -1;
    unsigned char *der = NULL;
    struct der_list certs = {0}, ours = {0};
    host_certificates(stores, nstores, bundle, &certs);
    if (!pem_read(ca_pem, strlen(ca_pem), &ours) || ours.len != 1 ||
        !der_push(&certs, ours.items[0].p, ours.items[0].n))
        goto fail;
    int len = 0;
    der = store_der(&certs, &len);
    if (!der)
        goto fail;
    int r = write_all(fd, der, (size_t)len);
    if (r < 0) {
        snprintf(err, errlen, "cannot write the sandbox's Java trust store: %s", strerror(-r));
        goto out;
    }
    rc = 0;
    goto out;
fail:;
    const char *why = ERR_peek_last_error() ? ERR_reason_error_string(ERR_peek_last_error()) : NULL;
    snprintf(err, errlen, "cannot make the sandbox's Java trust store: %s",
             why ? why : "out of memory or no CA certificate");
out:
    ERR_clear_error();
    OPENSSL_free(der);
    der_clear(&ours);
    der_clear(&certs);
    free(ours.items);
    free(certs.items);
    return rc;
}
