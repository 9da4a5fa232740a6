/* sha256.c — see sha256.h. Section numbers refer to FIPS 180-4 (August 2015). */
#include "base/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

/* 4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

/* 4.1.2 */
#define CH(x, y, z) (((x) & (y)) ^ (~(x) & (z)))
#define MAJ(x, y, z) (((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z)))
#define BSIG0(x) (rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22))
#define BSIG1(x) (rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25))
#define SSIG0(x) (rotr(x, 7) ^ rotr(x, 18) ^ ((x) >> 3))
#define SSIG1(x) (rotr(x, 17) ^ rotr(x, 19) ^ ((x) >> 10))

/* 6.2.2: process one 512-bit block. */
static void compress(uint32_t h[8], const uint8_t m[64])
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)m[4 * t] << 24 | (uint32_t)m[4 * t + 1] << 16 |
               (uint32_t)m[4 * t + 2] << 8 | (uint32_t)m[4 * t + 3];
    for (int t = 16; t < 64; t++)
        w[t] = SSIG1(w[t - 2]) + w[t - 7] + SSIG0(w[t - 15]) + w[t - 16];
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = hh + BSIG1(e) + CH(e, f, g) + K[t] + w[t];
        uint32_t t2 = BSIG0(a) + MAJ(a, b, c);
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

void sha256_init(struct sha256_ctx *c)
{
    /* 5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes */
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->total = 0;
    c->used = 0;
}

void sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    c->total += len;
    while (len > 0) {
        size_t n = 64 - c->used < len ? 64 - c->used : len;
        memcpy(c->block + c->used, p, n);
        c->used += n;
        p += n;
        len -= n;
        if (c->used == 64) {
            compress(c->h, c->block);
            c->used = 0;
        }
    }
}

void sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_DIGEST_LEN])
{
    /* 5.1.1: append bit 1, zeros up to 448 mod 512 bits, then the length in bits (64 bits). */
    uint64_t bits = c->total * 8;
    c->block[c->used++] = 0x80;
    if (c->used > 56) {
        memset(c->block + c->used, 0, 64 - c->used);
        compress(c->h, c->block);
        c->used = 0;
    }
    memset(c->block + c->used, 0, 56 - c->used);
    for (int i = 0; i < 8; i++)
        c->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    compress(c->h, c->block);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(c->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)c->h[i];
    }
    memset(c, 0, sizeof *c);
}

static void to_hex(const uint8_t d[SHA256_DIGEST_LEN], char out[SHA256_HEX_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < SHA256_DIGEST_LEN; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[SHA256_HEX_LEN] = '\0';
}

void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
    struct sha256_ctx c;
    uint8_t d[SHA256_DIGEST_LEN];
    sha256_init(&c);
    sha256_update(&c, data, len);
    sha256_final(&c, d);
    to_hex(d, out);
}

int sha256_file_hex(const char *path, char out[SHA256_HEX_LEN + 1])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    struct sha256_ctx c;
    uint8_t buf[16384], d[SHA256_DIGEST_LEN];
    int rc = 0;
    sha256_init(&c);
    for (;;) {
        ssize_t r;
        RETRY_EINTR(r, read(fd, buf, sizeof buf));
        if (r < 0) {
            rc = -errno;
            break;
        }
        if (r == 0)
            break;
        sha256_update(&c, buf, (size_t)r);
    }
    close(fd);
    sha256_final(&c, d);
    if (rc == 0)
        to_hex(d, out);
    return rc;
}
