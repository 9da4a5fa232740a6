/* sha256.h — SHA-256 (FIPS 180-4, section 6.2), written from the standard: used to pin the
 * content of a project's policy files (trust.c) and to name trust records.
 * Owns no global state. Must never be used where a keyed MAC is needed: it is a plain hash. */
#ifndef CORDON_SHA256_H
#define CORDON_SHA256_H
#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32
#define SHA256_HEX_LEN 64

struct sha256_ctx {
    uint32_t h[8];     /* the intermediate hash value H(i) */
    uint64_t total;    /* message bytes so far */
    uint8_t block[64]; /* the partial block */
    size_t used;       /* bytes in block */
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
void sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_DIGEST_LEN]);
/* One-shot: the digest of data[0..len) as 64 lower-case hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);
/* The digest of a regular file's content (opened O_NOFOLLOW: a symlink is refused with
 * -ELOOP). 0, or -errno. */
int sha256_file_hex(const char *path, char out[SHA256_HEX_LEN + 1]);
#endif
