/* test_sni_parse.c — sni_parse.c: the host name of a real ClientHello (Python's ssl, asking
 * for "Api.Example.com"), read whole and in every prefix; what is not TLS; hostile lengths
 * and names. And transparent.c's name for a connection: the server name, else an HTTP/1
 * request's Host. */
#include <stdint.h>

#include "proxy/sni_parse.h"
#include "proxy/transparent.h"
#include "test.h"

static const uint8_t hello[] =
    "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\xa8\xbc\xd4\x5f\xf6\x5b\xdb\x75\x7a\xc4\x14\xe3\x0d\x3b\x84\x7d\xff\x5f\x84\x0e\xd5\xd1\x6f\x57\x5b\x4f\xb5\x6e\xcc\x41\x55\x1e\x20\xb8\xdc\x6d\x87"
    "\xdf\xa8\x27\x14\x02\x46\x67\x75\xd3\x25\x2e\xe4\xf6\x26\x3c\x0e\xb1\x7b\x48\x00\x3d\x37\x55\xb1\xf0\x64\x17\xa9\x00\x24\x13\x02\x13\x03\x13\x01\xc0\x2c\xc0\x30\xc0\x2b\xc0\x2f\xcc\xa9\xcc\xa8"
    "\xc0\x24\xc0\x28\xc0\x23\xc0\x27\x00\x9f\x00\x9e\x00\x6b\x00\x67\x00\xff\x01\x00\x01\x8f\x00\x00\x00\x14\x00\x12\x00\x00\x0f\x41\x70\x69\x2e\x45\x78\x61\x6d\x70\x6c\x65\x2e\x63\x6f\x6d\x00\x0b"
    "\x00\x04\x03\x00\x01\x02\x00\x0a\x00\x16\x00\x14\x00\x1d\x00\x17\x00\x1e\x00\x19\x00\x18\x01\x00\x01\x01\x01\x02\x01\x03\x01\x04\x00\x23\x00\x00\x00\x16\x00\x00\x00\x17\x00\x00\x00\x0d\x00\x2a"
    "\x00\x28\x04\x03\x05\x03\x06\x03\x08\x07\x08\x08\x08\x09\x08\x0a\x08\x0b\x08\x04\x08\x05\x08\x06\x04\x01\x05\x01\x06\x01\x03\x03\x03\x01\x03\x02\x04\x02\x05\x02\x06\x02\x00\x2b\x00\x05\x04\x03"
    "\x04\x03\x03\x00\x2d\x00\x02\x01\x01\x00\x33\x00\x26\x00\x24\x00\x1d\x00\x20\x9e\xcd\x36\x65\x06\xf2\xa2\x73\x88\x89\x2b\xf5\x88\x81\xa9\x5d\x15\x87\x45\x31\x92\x7e\xb7\xfa\x54\x6c\x38\xe3\x5d"
    "\xb8\xde\x20\x00\x15\x00\xde\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00";

static void test_found(void)
{
    char name[256];
    CHECK_EQ_INT(sni_parse(hello, sizeof hello - 1, name, sizeof name), SNI_FOUND);
    CHECK(strcmp(name, "api.example.com") == 0);
    /* every prefix asks for more, never finds something else */
    for (size_t k = 0; k + 1 < sizeof hello - 1; k++)
        CHECK_EQ_INT(sni_parse(hello, k, name, sizeof name), SNI_NEED_MORE);
}

static void test_not_tls(void)
{
    char name[256];
    static const uint8_t get[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    CHECK_EQ_INT(sni_parse(get, sizeof get - 1, name, sizeof name), SNI_NOT_TLS);
    static const uint8_t ssh[] = "SSH-2.0-OpenSSH_9.6\r\n";
    CHECK_EQ_INT(sni_parse(ssh, sizeof ssh - 1, name, sizeof name), SNI_NOT_TLS);
    /* a handshake record that is not a ClientHello (a ServerHello) */
    uint8_t m[sizeof hello];
    memcpy(m, hello, sizeof m);
    m[5] = 2;
    CHECK_EQ_INT(sni_parse(m, sizeof m - 1, name, sizeof name), SNI_NOT_TLS);
    /* a record length over 16 KiB */
    memcpy(m, hello, sizeof m);
    m[3] = 0x50;
    CHECK_EQ_INT(sni_parse(m, sizeof m - 1, name, sizeof name), SNI_NOT_TLS);
}

static void test_hostile(void)
{
    char name[256];
    uint8_t m[sizeof hello];
    /* a handshake length past the record */
    memcpy(m, hello, sizeof m);
    m[7] = 0xff;
    CHECK_EQ_INT(sni_parse(m, sizeof m - 1, name, sizeof name), SNI_NONE);
    /* every single byte changed to 0xff, anywhere: never a crash, a name only if well formed */
    for (size_t i = 0; i + 1 < sizeof hello; i++) {
        memcpy(m, hello, sizeof m);
        m[i] = 0xff;
        if (sni_parse(m, sizeof m - 1, name, sizeof name) == SNI_FOUND)
            CHECK(strlen(name) >= 1 && strlen(name) <= 253);
    }
    /* a name with a space in it */
    const uint8_t *at = (const uint8_t *)memmem(hello, sizeof hello - 1, "Api.Example", 11);
    CHECK(at != NULL);
    memcpy(m, hello, sizeof m);
    m[at - hello + 3] = ' ';
    CHECK_EQ_INT(sni_parse(m, sizeof m - 1, name, sizeof name), SNI_NONE);
    /* a too small buffer for the name */
    CHECK_EQ_INT(sni_parse(hello, sizeof hello - 1, name, 8), SNI_NONE);
}

static enum transparent_name tn(const char *s, char *host)
{
    return transparent_name_from((const uint8_t *)s, strlen(s), host, 256);
}

static void test_transparent_name(void)
{
    char host[256];
    CHECK_EQ_INT(transparent_name_from(hello, sizeof hello - 1, host, sizeof host), TN_FOUND);
    CHECK(strcmp(host, "api.example.com") == 0);
    CHECK_EQ_INT(tn("GET / HTTP/1.1\r\nUser-Agent: x\r\nhost:  Example.org:8080\r\n\r\n", host),
                 TN_FOUND);
    CHECK(strcmp(host, "Example.org") == 0);
    CHECK_EQ_INT(tn("GET / HTTP/1.1\r\nUser-Agent: x\r\n", host), TN_NEED_MORE);
    CHECK_EQ_INT(tn("GE", host), TN_NEED_MORE);
    CHECK_EQ_INT(tn("GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n", host), TN_NONE); /* no Host */
    CHECK_EQ_INT(tn("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", host), TN_NONE);
    CHECK_EQ_INT(tn("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", host), TN_NONE);
    CHECK_EQ_INT(tn("SSH-2.0-OpenSSH_9.6\r\n", host), TN_NONE);
    CHECK_EQ_INT(tn("\x16", host), TN_NEED_MORE);
}

TEST_MAIN({"found", test_found}, {"not TLS", test_not_tls}, {"hostile", test_hostile},
          {"transparent name", test_transparent_name})
