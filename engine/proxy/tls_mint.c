/* tls_mint.c — leaf certificates signed on the fly. The subjectAltName is built from a checked
 * name as one GENERAL_NAME (never through OpenSSL's "DNS:a,DNS:b" configuration strings, so a
 * host with a comma cannot add a name); a leaf lives a week, is no CA, serves TLS only. */
#include "proxy/tls_mint.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#define LEAF_DAYS 7

struct leaf {
    char key[256]; /* the normalised name (an IP as its text form) */
    SSL_CTX *ctx;
    uint64_t used; /* the use counter's value at the last use */
};

struct tls_mint {
    const struct tls_ca *ca;
    EVP_PKEY *leaf_key;
    pthread_mutex_t lock;
    struct leaf *leaves;
    size_t n, max;
    uint64_t uses;
    size_t signed_count;
};

static bool dns_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
}

enum tls_name_kind tls_mint_name(const char *host, unsigned char *norm, size_t n, size_t *normlen)
{
    if (!host || n < 256)
        return TLS_NAME_BAD;
    size_t len = strnlen(host, 300);
    if (len == 0 || len > 255)
        return TLS_NAME_BAD;
    char text[256];
    memcpy(text, host, len);
    text[len] = '\0';
    if (text[0] == '[') {
        if (len < 3 || text[len - 1] != ']')
            return TLS_NAME_BAD;
        memmove(text, text + 1, len - 2);
        text[len - 2] = '\0';
        if (!strchr(text, ':'))
            return TLS_NAME_BAD;
    }
    struct in6_addr a6;
    struct in_addr a4;
    if (inet_pton(AF_INET6, text, &a6) == 1) {
        memcpy(norm, &a6, 16);
        *normlen = 16;
        return TLS_NAME_IP6;
    }
    if (inet_pton(AF_INET, text, &a4) == 1) {
        memcpy(norm, &a4, 4);
        *normlen = 4;
        return TLS_NAME_IP4;
    }
    if (host[0] == '[')
        return TLS_NAME_BAD;
    if (len > 1 && text[len - 1] == '.')
        text[--len] = '\0';
    if (len > 253)
        return TLS_NAME_BAD;
    size_t label = 0;
    bool all_digits_last = true;
    for (size_t i = 0; i <= len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '.' || ch == '\0') {
            if (label == 0 || label > 63 || text[i - 1] == '-' || text[i - label] == '-')
                return TLS_NAME_BAD;
            label = 0;
            continue;
        }
        if (ch >= 'A' && ch <= 'Z')
            ch = (unsigned char)(ch - 'A' + 'a');
        if (!dns_char(ch))
            return TLS_NAME_BAD;
        if (label == 0)
            all_digits_last = true;
        if (!(ch >= '0' && ch <= '9'))
            all_digits_last = false;
        text[i] = (char)ch;
        label++;
    }
    /* "1.2.3" or "999.1.1.1": not an address, and not a name either (the last label of a
     * name is never all digits) */
    if (all_digits_last)
        return TLS_NAME_BAD;
    memcpy(norm, text, len + 1);
    *normlen = len;
    return TLS_NAME_DNS;
}

struct tls_mint *tls_mint_new(const struct tls_ca *ca, size_t cache_max, char *why, size_t whylen)
{
    struct tls_mint *m = calloc(1, sizeof *m);
    if (!m)
        goto fail;
    m->ca = ca;
    m->max = cache_max ? cache_max : 1;
    m->leaves = calloc(m->max, sizeof *m->leaves);
    m->leaf_key = EVP_EC_gen("P-256");
    if (!m->leaves || !m->leaf_key)
        goto fail;
    pthread_mutex_init(&m->lock, NULL);
    return m;
fail:;
    char err[256];
    snprintf(why, whylen, "cannot make the leaf certificates' key: %s",
             tls_error_line(err, sizeof err));
    if (m) {
        EVP_PKEY_free(m->leaf_key);
        free(m->leaves);
        free(m);
    }
    return NULL;
}

static int add_san(X509 *cert, enum tls_name_kind kind, const unsigned char *norm, size_t len)
{
    GENERAL_NAMES *names = GENERAL_NAMES_new();
    GENERAL_NAME *gn = GENERAL_NAME_new();
    ASN1_IA5STRING *dns = NULL;
    ASN1_OCTET_STRING *ip = NULL;
    int ok = 0;
    if (!names || !gn)
        goto out;
    if (kind == TLS_NAME_DNS) {
        dns = ASN1_IA5STRING_new();
        if (!dns || ASN1_STRING_set(dns, norm, (int)len) != 1)
            goto out;
        GENERAL_NAME_set0_value(gn, GEN_DNS, dns);
        dns = NULL;
    } else {
        ip = ASN1_OCTET_STRING_new();
        if (!ip || ASN1_OCTET_STRING_set(ip, norm, (int)len) != 1)
            goto out;
        GENERAL_NAME_set0_value(gn, GEN_IPADD, ip);
        ip = NULL;
    }
    if (sk_GENERAL_NAME_push(names, gn) <= 0)
        goto out;
    gn = NULL;
    ok = X509_add1_ext_i2d(cert, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1;
out:
    ASN1_IA5STRING_free(dns);
    ASN1_OCTET_STRING_free(ip);
    GENERAL_NAME_free(gn);
    GENERAL_NAMES_free(names);
    return ok ? 0 : -1;
}

static X509 *sign_leaf(struct tls_mint *m, enum tls_name_kind kind, const unsigned char *norm,
                       size_t len, const char *cn)
{
    X509 *ca_cert = tls_ca_cert(m->ca);
    X509 *cert = X509_new();
    if (!cert || X509_set_version(cert, 2) != 1 || tls_random_serial(cert) < 0)
        goto fail;
    X509_NAME *name = X509_get_subject_name(cert);
    /* a CN longer than 64 bytes is not allowed: the SAN alone names such a host */
    if (strlen(cn) <= 64 && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                                       (const unsigned char *)cn, -1, -1, 0) != 1)
        goto fail;
    if (X509_set_issuer_name(cert, X509_get_subject_name(ca_cert)) != 1 ||
        !X509_gmtime_adj(X509_getm_notBefore(cert), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(cert), LEAF_DAYS * 86400L) ||
        X509_set_pubkey(cert, m->leaf_key) != 1)
        goto fail;
    if (tls_add_ext(cert, ca_cert, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
        tls_add_ext(cert, ca_cert, NID_key_usage, "critical,digitalSignature") < 0 ||
        tls_add_ext(cert, ca_cert, NID_ext_key_usage, "serverAuth") < 0 ||
        tls_add_ext(cert, ca_cert, NID_authority_key_identifier, "keyid:always") < 0 ||
        add_san(cert, kind, norm, len) < 0)
        goto fail;
    if (X509_sign(cert, tls_ca_key(m->ca), EVP_sha256()) <= 0)
        goto fail;
    return cert;
fail:
    X509_free(cert);
    return NULL;
}

static SSL_CTX *server_ctx(struct tls_mint *m, X509 *leaf)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return NULL;
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, m->leaf_key) != 1 ||
        SSL_CTX_add1_chain_cert(ctx, tls_ca_cert(m->ca)) != 1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    /* no session tickets: a terminated connection is never resumed across sandboxes */
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(ctx, 0);
    return ctx;
}

static struct leaf *lookup(struct tls_mint *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->leaves[i].key, key) == 0)
            return &m->leaves[i];
    return NULL;
}

/* A slot for a new leaf: a free one, else the least recently used one's, emptied. */
static struct leaf *slot(struct tls_mint *m)
{
    if (m->n < m->max)
        return &m->leaves[m->n++];
    struct leaf *old = &m->leaves[0];
    for (size_t i = 1; i < m->n; i++)
        if (m->leaves[i].used < old->used)
            old = &m->leaves[i];
    SSL_CTX_free(old->ctx); /* connections still using it hold their own reference */
    memset(old, 0, sizeof *old);
    return old;
}

SSL_CTX *tls_mint_server_ctx(struct tls_mint *m, const char *host, char *why, size_t whylen)
{
    unsigned char norm[256];
    size_t len = 0;
    enum tls_name_kind kind = tls_mint_name(host, norm, sizeof norm, &len);
    if (kind == TLS_NAME_BAD) {
        snprintf(why, whylen, "no certificate for %.255s: not a host name or IP address", host);
        return NULL;
    }
    char key[256];
    if (kind == TLS_NAME_DNS)
        snprintf(key, sizeof key, "%s", (const char *)norm);
    else
        inet_ntop(kind == TLS_NAME_IP4 ? AF_INET : AF_INET6, norm, key, sizeof key);
    pthread_mutex_lock(&m->lock);
    struct leaf *l = lookup(m, key);
    if (!l) {
        X509 *cert = sign_leaf(m, kind, norm, len, key);
        SSL_CTX *ctx = cert ? server_ctx(m, cert) : NULL;
        X509_free(cert);
        if (!ctx) {
            pthread_mutex_unlock(&m->lock);
            char err[256];
            snprintf(why, whylen, "cannot sign a certificate for %s: %s", key,
                     tls_error_line(err, sizeof err));
            return NULL;
        }
        l = slot(m);
        snprintf(l->key, sizeof l->key, "%s", key);
        l->ctx = ctx;
        m->signed_count++;
    }
    l->used = ++m->uses;
    SSL_CTX *ctx = l->ctx;
    SSL_CTX_up_ref(ctx);
    pthread_mutex_unlock(&m->lock);
    return ctx;
}

size_t tls_mint_cached(struct tls_mint *m)
{
    pthread_mutex_lock(&m->lock);
    size_t n = m->n;
    pthread_mutex_unlock(&m->lock);
    return n;
}

size_t tls_mint_signed(struct tls_mint *m)
{
    pthread_mutex_lock(&m->lock);
    size_t n = m->signed_count;
    pthread_mutex_unlock(&m->lock);
    return n;
}

void tls_mint_free(struct tls_mint *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        SSL_CTX_free(m->leaves[i].ctx);
    free(m->leaves);
    EVP_PKEY_free(m->leaf_key);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
