/* fuzz_tls_mint.c — libFuzzer target for tls_mint.c's names: the input is a CONNECT's host as
 * the proxy would hand it over (any bytes up to a NUL). Beyond no crash: a DNS name accepted is
 * 1..253 bytes of lower-case letters, digits, '-' and '_' in dot-separated labels of 1..63
 * bytes, and reads back as itself; an address is 4 or 16 bytes; and a certificate minted for an
 * accepted name carries exactly one subjectAltName, that name. Built and run by `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/x509v3.h>

#include "fuzz/fuzz.h"
#include "proxy/tls_ca.h"
#include "proxy/tls_mint.h"

static struct tls_ca *ca;
static struct tls_mint *mint;

static void check_dns(const unsigned char *norm, size_t len)
{
    ASSERT(len >= 1 && len <= 253 && strlen((const char *)norm) == len);
    size_t label = 0;
    for (size_t i = 0; i <= len; i++) {
        unsigned char ch = norm[i];
        if (ch == '.' || ch == '\0') {
            ASSERT(label >= 1 && label <= 63);
            label = 0;
            continue;
        }
        ASSERT((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_');
        label++;
    }
    unsigned char again[256];
    size_t len2 = 0;
    ASSERT(tls_mint_name((const char *)norm, again, sizeof again, &len2) == TLS_NAME_DNS);
    ASSERT(len2 == len && memcmp(again, norm, len) == 0);
}

/* The leaf's subjectAltName: one entry, of the kind and value expected. */
static void check_leaf(SSL_CTX *ctx, enum tls_name_kind kind, const unsigned char *norm, size_t len)
{
    X509 *leaf = SSL_CTX_get0_certificate(ctx);
    GENERAL_NAMES *names = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
    ASSERT(names && sk_GENERAL_NAME_num(names) == 1);
    GENERAL_NAME *gn = sk_GENERAL_NAME_value(names, 0);
    int type;
    ASN1_STRING *v = GENERAL_NAME_get0_value(gn, &type);
    ASSERT(type == (kind == TLS_NAME_DNS ? GEN_DNS : GEN_IPADD));
    ASSERT((size_t)ASN1_STRING_length(v) == len &&
           memcmp(ASN1_STRING_get0_data(v), norm, len) == 0);
    GENERAL_NAMES_free(names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ca) {
        char why[256];
        ca = tls_ca_new("fuzz", 1, why, sizeof why);
        mint = ca ? tls_mint_new(ca, 4, why, sizeof why) : NULL;
        ASSERT(ca && mint);
    }
    char host[512];
    size_t n = size < sizeof host - 1 ? size : sizeof host - 1;
    memcpy(host, data, n);
    host[n] = '\0';
    unsigned char norm[256];
    size_t len = 0;
    enum tls_name_kind kind = tls_mint_name(host, norm, sizeof norm, &len);
    switch (kind) {
    case TLS_NAME_BAD:
        break;
    case TLS_NAME_DNS:
        check_dns(norm, len);
        break;
    case TLS_NAME_IP4:
        ASSERT(len == 4);
        break;
    case TLS_NAME_IP6:
        ASSERT(len == 16);
        break;
    }
    char why[512];
    SSL_CTX *ctx = tls_mint_server_ctx(mint, host, why, sizeof why);
    ASSERT((ctx != NULL) == (kind != TLS_NAME_BAD));
    if (ctx) {
        check_leaf(ctx, kind, norm, len);
        SSL_CTX_free(ctx);
    }
    return 0;
}
