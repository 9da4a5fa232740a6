/* tls_ca.c — the sandbox's certificate authority: an EC P-256 key made in memory (never written
 * anywhere) and its self-signed certificate (CA:TRUE, pathlen 0, keyCertSign). */
#include "proxy/tls_ca.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

struct tls_ca {
    EVP_PKEY *key;
    X509 *cert;
    char *pem;
};

const char *tls_error_line(char *buf, size_t n)
{
    unsigned long e = ERR_peek_last_error();
    if (!e)
        snprintf(buf, n, "%s", "");
    else
        ERR_error_string_n(e, buf, n);
    ERR_clear_error();
    return buf;
}

int tls_random_serial(X509 *cert)
{
    unsigned char raw[16];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return -1;
    raw[0] &= 0x7f; /* positive, as RFC 5280 wants */
    raw[0] |= 0x01; /* and never zero */
    BIGNUM *bn = BN_bin2bn(raw, sizeof raw, NULL);
    int ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL;
    BN_free(bn);
    return ok ? 0 : -1;
}

int tls_add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (!ext)
        return -1;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

static char *cert_pem(X509 *cert)
{
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio || PEM_write_bio_X509(bio, cert) != 1) {
        BIO_free(bio);
        return NULL;
    }
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    char *pem = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (pem) {
        memcpy(pem, data, (size_t)n);
        pem[n] = '\0';
    }
    BIO_free(bio);
    return pem;
}

static int build(struct tls_ca *ca, const char *label, int valid_days)
{
    ca->key = EVP_EC_gen("P-256");
    ca->cert = X509_new();
    if (!ca->key || !ca->cert || X509_set_version(ca->cert, 2) != 1 ||
        tls_random_serial(ca->cert) < 0)
        return -1;
    X509_NAME *name = X509_get_subject_name(ca->cert);
    if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)"cordon", -1,
                                   -1, 0) != 1 ||
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)label, -1, -1,
                                   0) != 1 ||
        X509_set_issuer_name(ca->cert, name) != 1)
        return -1;
    /* an hour back: a clock inside a little behind the host's still accepts it */
    if (!X509_gmtime_adj(X509_getm_notBefore(ca->cert), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(ca->cert), (long)valid_days * 86400L) ||
        X509_set_pubkey(ca->cert, ca->key) != 1)
        return -1;
    if (tls_add_ext(ca->cert, ca->cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
        tls_add_ext(ca->cert, ca->cert, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
        tls_add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") < 0 ||
        tls_add_ext(ca->cert, ca->cert, NID_authority_key_identifier, "keyid:always") < 0)
        return -1;
    if (X509_sign(ca->cert, ca->key, EVP_sha256()) <= 0)
        return -1;
    ca->pem = cert_pem(ca->cert);
    return ca->pem ? 0 : -1;
}

struct tls_ca *tls_ca_new(const char *label, int valid_days, char *why, size_t whylen)
{
    struct tls_ca *ca = calloc(1, sizeof *ca);
    if (!ca) {
        snprintf(why, whylen, "cannot make the sandbox's certificate authority: out of memory");
        return NULL;
    }
    if (valid_days < 1 || build(ca, label && *label ? label : "cordon sandbox", valid_days) < 0) {
        char err[256];
        snprintf(why, whylen, "cannot make the sandbox's certificate authority: %s",
                 valid_days < 1 ? "bad validity" : tls_error_line(err, sizeof err));
        tls_ca_free(ca);
        return NULL;
    }
    return ca;
}

const char *tls_ca_cert_pem(const struct tls_ca *ca)
{
    return ca->pem;
}

X509 *tls_ca_cert(const struct tls_ca *ca)
{
    return ca->cert;
}

EVP_PKEY *tls_ca_key(const struct tls_ca *ca)
{
    return ca->key;
}

void tls_ca_free(struct tls_ca *ca)
{
    if (!ca)
        return;
    EVP_PKEY_free(ca->key); /* OpenSSL clears the private scalar as it frees it */
    X509_free(ca->cert);
    free(ca->pem);
    free(ca);
}
