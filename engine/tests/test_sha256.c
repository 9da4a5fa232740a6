/* test_sha256.c — SHA-256 against the FIPS 180-2 / NIST CSRC example vectors (one block,
 * two blocks, a million 'a') and the empty message, fed whole and byte by byte. */
#include "test.h"

#include <fcntl.h>

#include "base/sha256.h"

static void check_hex(const char *msg, size_t len, const char *want)
{
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(msg, len, hex);
    if (strcmp(hex, want) != 0) {
        fprintf(stderr, "  sha256 = %s, expected %s\n", hex, want);
        _exit(1);
    }
    /* the same through many small updates */
    struct sha256_ctx c;
    uint8_t d[SHA256_DIGEST_LEN];
    sha256_init(&c);
    for (size_t i = 0; i < len; i++)
        sha256_update(&c, msg + i, 1);
    sha256_final(&c, d);
    char hex2[SHA256_HEX_LEN + 1];
    for (int i = 0; i < SHA256_DIGEST_LEN; i++)
        snprintf(hex2 + 2 * i, 3, "%02x", d[i]);
    CHECK(strcmp(hex2, want) == 0);
}

static void test_abc(void)
{
    check_hex("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_two_blocks(void)
{
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_hex(m, strlen(m), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_empty(void)
{
    check_hex("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_million_a(void)
{
    static char m[1000000];
    memset(m, 'a', sizeof m);
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(m, sizeof m, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
}

/* Lengths around the padding boundary (55, 56, 63, 64 bytes) agree between one-shot and
 * split updates. */
static void test_boundaries(void)
{
    char m[130];
    memset(m, 'x', sizeof m);
    for (size_t len = 50; len <= 130; len++) {
        char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1];
        sha256_hex(m, len, a);
        struct sha256_ctx c;
        uint8_t d[SHA256_DIGEST_LEN];
        sha256_init(&c);
        sha256_update(&c, m, len / 3);
        sha256_update(&c, m + len / 3, len - len / 3);
        sha256_final(&c, d);
        for (int i = 0; i < SHA256_DIGEST_LEN; i++)
            snprintf(b + 2 * i, 3, "%02x", d[i]);
        CHECK(strcmp(a, b) == 0);
    }
}

static void test_file(void)
{
    char path[] = "/tmp/cordon-sha256-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, "abc", 3) == 3);
    close(fd);
    char hex[SHA256_HEX_LEN + 1];
    CHECK_EQ_INT(sha256_file_hex(path, hex), 0);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    char link[] = "/tmp/cordon-sha256-link-XXXXXX";
    CHECK(mkstemp(link) >= 0);
    unlink(link);
    CHECK(symlink(path, link) == 0);
    CHECK(sha256_file_hex(link, hex) < 0); /* a symlink is refused */
    unlink(link);
    unlink(path);
}

TEST_MAIN({"abc", test_abc}, {"two_blocks", test_two_blocks}, {"empty", test_empty},
          {"million_a", test_million_a}, {"boundaries", test_boundaries}, {"file", test_file})
