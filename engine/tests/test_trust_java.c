/* test_trust_java.c — trust_java.c: the store is PKCS#12 under "changeit", every bag a
 * certificate with Java's trusted-usage attribute (anyExtendedKeyUsage), the sandbox's CA last
 * as cordon-sandbox-ca; a JKS store's trusted certificates are taken (its key entries' are not),
 * a truncated or missing store falls back to the PEM bundle, a CA text without a certificate
 * is one line and -1. */
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "base/util.h"
#include "controller/trust_java.h"
#include "test.h"

/* A self-signed certificate named cn. */
static X509 *make_cert(const char *cn)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    CHECK(key && x);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, name);
    X509_set_pubkey(x, key);
    CHECK(X509_sign(x, key, EVP_sha256()) > 0);
    EVP_PKEY_free(key);
    return x;
}

static char *cert_pem(X509 *x)
{
    BIO *b = BIO_new(BIO_s_mem());
    CHECK(PEM_write_bio_X509(b, x) == 1);
    char *data;
    long n = BIO_get_mem_data(b, &data);
    char *out = strndup(data, (size_t)n);
    BIO_free(b);
    return out;
}

static char *tmp_path(const char *name)
{
    const char *tmp = getenv("TMPDIR");
    return xasprintf("%s/trust_java.%d.%s", tmp ? tmp : "/tmp", (int)getpid(), name);
}

static void put_file(const char *path, const void *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    CHECK(write_all(fd, buf, len) == 0);
    close(fd);
}

/* A JKS builder: big-endian fields into a growing buffer. */
struct jks {
    unsigned char buf[16384];
    size_t len;
};

static void jks_u32(struct jks *j, uint32_t v)
{
    CHECK(j->len + 4 <= sizeof j->buf);
    j->buf[j->len++] = (unsigned char)(v >> 24);
    j->buf[j->len++] = (unsigned char)(v >> 16);
    j->buf[j->len++] = (unsigned char)(v >> 8);
    j->buf[j->len++] = (unsigned char)v;
}

static void jks_bytes(struct jks *j, const void *p, size_t n)
{
    CHECK(j->len + n <= sizeof j->buf);
    memcpy(j->buf + j->len, p, n);
    j->len += n;
}

static void jks_utf(struct jks *j, const char *s)
{
    size_t n = strlen(s);
    unsigned char l[2] = {(unsigned char)(n >> 8), (unsigned char)n};
    jks_bytes(j, l, 2);
    jks_bytes(j, s, n);
}

static void jks_cert(struct jks *j, X509 *x)
{
    unsigned char *der = NULL;
    int n = i2d_X509(x, &der);
    CHECK(n > 0);
    jks_utf(j, "X.509");
    jks_u32(j, (uint32_t)n);
    jks_bytes(j, der, (size_t)n);
    OPENSSL_free(der);
}

/* Version 2: a key entry (its chain: keyed), a trusted entry (trusted), a 20-byte trailer. */
static void make_jks(struct jks *j, X509 *keyed, X509 *trusted)
{
    static const unsigned char stamp[8], trailer[20], key[5] = {1, 2, 3, 4, 5};
    j->len = 0;
    jks_u32(j, 0xFEEDFEEDu);
    jks_u32(j, 2);
    jks_u32(j, 2);
    jks_u32(j, 1);
    jks_utf(j, "mykey");
    jks_bytes(j, stamp, sizeof stamp);
    jks_u32(j, sizeof key);
    jks_bytes(j, key, sizeof key);
    jks_u32(j, 1);
    jks_cert(j, keyed);
    jks_u32(j, 2);
    jks_utf(j, "trusted");
    jks_bytes(j, stamp, sizeof stamp);
    jks_cert(j, trusted);
    jks_bytes(j, trailer, sizeof trailer);
}

/* Writes the store from stores/bundle and ca, reads it back: the certificates' subjects' CNs
 * in order into cns (comma-joined), each bag checked. */
static void store_cns(const char *const *stores, size_t n, const char *bundle, const char *ca_pem,
                      char *cns, size_t cnslen)
{
    char *out = tmp_path("out.p12");
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    char err[256] = "";
    if (trust_java_write_from(fd, ca_pem, stores, n, bundle, err, sizeof err) != 0)
        fprintf(stderr, "  %s\n", err);
    close(fd);
    FILE *f = fopen(out, "rb");
    CHECK(f != NULL);
    PKCS12 *p12 = d2i_PKCS12_fp(f, NULL);
    fclose(f);
    unlink(out);
    free(out);
    CHECK(p12 != NULL);
    CHECK(PKCS12_verify_mac(p12, "changeit", -1) == 1);
    STACK_OF(PKCS7) *safes = PKCS12_unpack_authsafes(p12);
    CHECK(safes && sk_PKCS7_num(safes) == 1);
    STACK_OF(PKCS12_SAFEBAG) *bags = PKCS12_unpack_p7data(sk_PKCS7_value(safes, 0));
    CHECK(bags != NULL);
    ASN1_OBJECT *attr = OBJ_txt2obj("2.16.840.1.113894.746875.1.1", 1);
    ASN1_OBJECT *any = OBJ_txt2obj("2.5.29.37.0", 1);
    cns[0] = '\0';
    for (int i = 0; i < sk_PKCS12_SAFEBAG_num(bags); i++) {
        const PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, i);
        CHECK(PKCS12_SAFEBAG_get_nid(bag) == NID_certBag);
        const STACK_OF(X509_ATTRIBUTE) *attrs = PKCS12_SAFEBAG_get0_attrs(bag);
        int at = X509at_get_attr_by_OBJ(attrs, attr, -1);
        CHECK(at >= 0);
        ASN1_TYPE *v = X509_ATTRIBUTE_get0_type(X509at_get_attr(attrs, at), 0);
        CHECK(v && v->type == V_ASN1_OBJECT && OBJ_cmp(v->value.object, any) == 0);
        char *alias = PKCS12_get_friendlyname((PKCS12_SAFEBAG *)bag);
        CHECK(alias != NULL);
        if (i == sk_PKCS12_SAFEBAG_num(bags) - 1)
            CHECK(strcmp(alias, "cordon-sandbox-ca") == 0);
        OPENSSL_free(alias);
        X509 *x = PKCS12_SAFEBAG_get1_cert(bag);
        CHECK(x != NULL);
        char cn[64];
        X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof cn);
        size_t used = strlen(cns);
        snprintf(cns + used, cnslen - used, "%s%s", used ? "," : "", cn);
        X509_free(x);
    }
    ASN1_OBJECT_free(attr);
    ASN1_OBJECT_free(any);
    sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
    sk_PKCS7_pop_free(safes, PKCS7_free);
    PKCS12_free(p12);
}

static void test_jks_trusted_entries(void)
{
    X509 *keyed = make_cert("keyed"), *trusted = make_cert("trusted"), *ca = make_cert("ca");
    struct jks j;
    make_jks(&j, keyed, trusted);
    char *jks = tmp_path("cacerts");
    put_file(jks, j.buf, j.len);
    char *pem = cert_pem(ca);
    const char *stores[] = {"/nonexistent/cacerts", jks};
    char cns[256];
    store_cns(stores, 2, "/nonexistent/bundle", pem, cns, sizeof cns);
    CHECK(strcmp(cns, "trusted,ca") == 0);
    unlink(jks);
    free(jks);
    free(pem);
    X509_free(keyed);
    X509_free(trusted);
    X509_free(ca);
}

static void test_bad_store_falls_back_to_bundle(void)
{
    X509 *keyed = make_cert("keyed"), *trusted = make_cert("trusted"), *ca = make_cert("ca");
    X509 *b1 = make_cert("bundle1"), *b2 = make_cert("bundle2");
    struct jks j;
    make_jks(&j, keyed, trusted);
    char *jks = tmp_path("cacerts"), *bundle = tmp_path("bundle.crt");
    put_file(jks, j.buf, j.len - 40); /* cut inside the trusted entry */
    char *p1 = cert_pem(b1), *p2 = cert_pem(b2), *pem = cert_pem(ca);
    char *text = xasprintf("# a comment\n%s\n%s", p1, p2);
    put_file(bundle, text, strlen(text));
    const char *stores[] = {jks};
    char cns[256];
    store_cns(stores, 1, bundle, pem, cns, sizeof cns);
    CHECK(strcmp(cns, "bundle1,bundle2,ca") == 0);
    /* no store at all: the bundle too */
    store_cns(NULL, 0, bundle, pem, cns, sizeof cns);
    CHECK(strcmp(cns, "bundle1,bundle2,ca") == 0);
    /* nothing on the host: the sandbox's CA alone */
    store_cns(NULL, 0, "/nonexistent/bundle", pem, cns, sizeof cns);
    CHECK(strcmp(cns, "ca") == 0);
    unlink(jks);
    unlink(bundle);
    free(jks);
    free(bundle);
    free(text);
    free(p1);
    free(p2);
    free(pem);
    X509_free(keyed);
    X509_free(trusted);
    X509_free(ca);
    X509_free(b1);
    X509_free(b2);
}

static void test_no_ca_is_an_error(void)
{
    char *out = tmp_path("none.p12");
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    char err[256] = "";
    CHECK(trust_java_write_from(fd, "not a certificate", NULL, 0, "/nonexistent", err,
                                sizeof err) == -1);
    CHECK_STR_CONTAINS(err, "cannot make the sandbox's Java trust store");
    close(fd);
    unlink(out);
    free(out);
}

TEST_MAIN({"jks_trusted_entries", test_jks_trusted_entries},
          {"bad_store_falls_back_to_bundle", test_bad_store_falls_back_to_bundle},
          {"no_ca_is_an_error", test_no_ca_is_an_error})
