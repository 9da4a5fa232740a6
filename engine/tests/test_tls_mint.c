/* test_tls_mint.c — tls_ca.c and tls_mint.c: the CA's PEM is a certificate and nothing else, a
 * minted leaf chains to the CA and names its host (DNS or IP) and no other, bad names get no
 * certificate, and the cache keeps at most its bound, signing again what it let go. */
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "proxy/tls_ca.h"
#include "proxy/tls_mint.h"
#include "test.h"

static struct tls_ca *make_ca(void)
{
    char why[256] = "";
    struct tls_ca *ca = tls_ca_new("cordon test", 30, why, sizeof why);
    if (!ca)
        fprintf(stderr, "  %s\n", why);
    CHECK(ca != NULL);
    return ca;
}

/* Does the leaf ctx serves chain to ca, for host (a name or an IP)? */
static bool leaf_verifies(struct tls_ca *ca, SSL_CTX *ctx, const char *host)
{
    X509 *leaf = SSL_CTX_get0_certificate(ctx);
    X509_STORE *store = X509_STORE_new();
    X509_STORE_add_cert(store, tls_ca_cert(ca));
    X509_STORE_CTX *sc = X509_STORE_CTX_new();
    X509_STORE_CTX_init(sc, store, leaf, NULL);
    X509_VERIFY_PARAM *p = X509_STORE_CTX_get0_param(sc);
    X509_VERIFY_PARAM_set_purpose(p, X509_PURPOSE_SSL_SERVER);
    if (strchr(host, ':') || (host[0] >= '0' && host[0] <= '9'))
        X509_VERIFY_PARAM_set1_ip_asc(p, host);
    else
        X509_VERIFY_PARAM_set1_host(p, host, 0);
    bool ok = X509_verify_cert(sc) == 1;
    X509_STORE_CTX_free(sc);
    X509_STORE_free(store);
    return ok;
}

static void test_ca_pem(void)
{
    struct tls_ca *ca = make_ca();
    const char *pem = tls_ca_cert_pem(ca);
    CHECK(strncmp(pem, "-----BEGIN CERTIFICATE-----", 27) == 0);
    CHECK(strstr(pem, "PRIVATE") == NULL);
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    CHECK(x != NULL);
    CHECK(X509_check_ca(x) == 1);
    CHECK(X509_cmp(x, tls_ca_cert(ca)) == 0);
    EVP_PKEY *pub = X509_get0_pubkey(x);
    CHECK(EVP_PKEY_is_a(pub, "EC"));
    X509_free(x);
    BIO_free(b);
    /* two CAs are two keys */
    struct tls_ca *other = make_ca();
    CHECK(strcmp(tls_ca_cert_pem(other), pem) != 0);
    tls_ca_free(other);
    tls_ca_free(ca);
}

static void test_leaf_dns_and_ip(void)
{
    struct tls_ca *ca = make_ca();
    char why[256];
    struct tls_mint *m = tls_mint_new(ca, 8, why, sizeof why);
    CHECK(m != NULL);
    SSL_CTX *ctx = tls_mint_server_ctx(m, "Api.Example.COM.", why, sizeof why);
    CHECK(ctx != NULL);
    CHECK(leaf_verifies(ca, ctx, "api.example.com"));
    CHECK(!leaf_verifies(ca, ctx, "example.com"));
    CHECK(!leaf_verifies(ca, ctx, "evil.api.example.com"));
    X509 *leaf = SSL_CTX_get0_certificate(ctx);
    CHECK(X509_check_ca(leaf) == 0);
    SSL_CTX_free(ctx);
    ctx = tls_mint_server_ctx(m, "127.0.0.2", why, sizeof why);
    CHECK(ctx != NULL);
    CHECK(leaf_verifies(ca, ctx, "127.0.0.2"));
    CHECK(!leaf_verifies(ca, ctx, "127.0.0.3"));
    SSL_CTX_free(ctx);
    ctx = tls_mint_server_ctx(m, "[::1]", why, sizeof why);
    CHECK(ctx != NULL);
    CHECK(leaf_verifies(ca, ctx, "::1"));
    SSL_CTX_free(ctx);
    /* the same name again: the cached leaf */
    ctx = tls_mint_server_ctx(m, "api.example.com", why, sizeof why);
    CHECK(ctx != NULL);
    SSL_CTX_free(ctx);
    CHECK_EQ_INT(tls_mint_signed(m), 3);
    tls_mint_free(m);
    tls_ca_free(ca);
}

static void test_bad_names(void)
{
    static const char *const bad[] = {
        "",
        ".",
        "a..b",
        "-a.com",
        "a-.com",
        "a.com,DNS:evil.com",
        "a com",
        "*.example.com",
        "a/b",
        "a\nb",
        "1.2.3",
        "999.1.1.1",
        "[1.2.3.4]",
        "[::1",
        "::1]",
        "exa\x80mple.com",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", /* 64 */
    };
    unsigned char norm[256];
    size_t len;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (tls_mint_name(bad[i], norm, sizeof norm, &len) != TLS_NAME_BAD)
            fprintf(stderr, "  accepted: %s\n", bad[i]);
        CHECK_EQ_INT(tls_mint_name(bad[i], norm, sizeof norm, &len), TLS_NAME_BAD);
    }
    char longname[300];
    memset(longname, 'a', sizeof longname);
    for (size_t i = 50; i < 299; i += 50)
        longname[i] = '.';
    longname[254] = '\0';
    CHECK_EQ_INT(tls_mint_name(longname, norm, sizeof norm, &len), TLS_NAME_BAD);
    longname[253] = '\0';
    CHECK_EQ_INT(tls_mint_name(longname, norm, sizeof norm, &len), TLS_NAME_DNS);
    CHECK_EQ_INT(tls_mint_name("git_host-1.internal", norm, sizeof norm, &len), TLS_NAME_DNS);
    CHECK_EQ_INT(tls_mint_name("localhost", norm, sizeof norm, &len), TLS_NAME_DNS);

    struct tls_ca *ca = make_ca();
    char why[256] = "";
    struct tls_mint *m = tls_mint_new(ca, 8, why, sizeof why);
    CHECK(tls_mint_server_ctx(m, "a.com,DNS:evil.com", why, sizeof why) == NULL);
    CHECK_STR_CONTAINS(why, "not a host name");
    CHECK_EQ_INT(tls_mint_signed(m), 0);
    tls_mint_free(m);
    tls_ca_free(ca);
}

static void test_cache_bound(void)
{
    struct tls_ca *ca = make_ca();
    char why[256];
    struct tls_mint *m = tls_mint_new(ca, 2, why, sizeof why);
    static const char *const hosts[] = {"a.test", "b.test", "a.test", "c.test", "a.test", "b.test"};
    for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
        SSL_CTX *ctx = tls_mint_server_ctx(m, hosts[i], why, sizeof why);
        CHECK(ctx != NULL);
        CHECK(leaf_verifies(ca, ctx, hosts[i]));
        SSL_CTX_free(ctx);
        CHECK(tls_mint_cached(m) <= 2);
    }
    /* a, b, (a kept), c evicts b, (a kept), b evicts c */
    CHECK_EQ_INT(tls_mint_signed(m), 4);
    /* a context handed out outlives its eviction */
    SSL_CTX *held = tls_mint_server_ctx(m, "d.test", why, sizeof why);
    SSL_CTX *e = tls_mint_server_ctx(m, "e.test", why, sizeof why);
    SSL_CTX *f = tls_mint_server_ctx(m, "f.test", why, sizeof why);
    CHECK(leaf_verifies(ca, held, "d.test"));
    SSL_CTX_free(held);
    SSL_CTX_free(e);
    SSL_CTX_free(f);
    tls_mint_free(m);
    tls_ca_free(ca);
}

TEST_MAIN({"ca_pem", test_ca_pem}, {"leaf_dns_and_ip", test_leaf_dns_and_ip},
          {"bad_names", test_bad_names}, {"cache_bound", test_cache_bound})
