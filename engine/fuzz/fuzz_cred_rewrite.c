/* fuzz_cred_rewrite.c — libFuzzer target for cred_rewrite.c. Byte 0: bit 0 picks the stream
 * (0: a forward proxy stream, each request naming its destination; 1: a TLS-terminated stream
 * to other.test:80, a host no credential names), bits 1-4 a piece size (1..16); the rest is
 * what a client sends, fed whole and in pieces. Beyond no crash: the two feedings are refused
 * alike, and a stream to other.test never carries a credential's value it did not hold. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "proxy/cred_rewrite.h"

#define VALUE_A "VALUE_A_secret"
#define VALUE_B "VALUE_B_secret_as_long_as_its_ph"

static struct cred_set *make_set(void)
{
    struct cred_set *s = cred_set_new();
    char why[200];
    const char *ha[] = {"a.test", "*.w.test:8080"};
    const char *hb[] = {"b.test:80"};
    ASSERT(cred_set_add(s, "A", "PH_A_0123456789abcdef", VALUE_A, ha, 2, why, sizeof why) == 0);
    ASSERT(cred_set_add(s, "B", "PH_B_0123456789abcdef0123456789ab", VALUE_B, hb, 1, why,
                        sizeof why) == 0);
    return s;
}

static int feed(struct cred_set *s, bool terminated, const uint8_t *p, size_t n, size_t piece,
                struct cred_out *out)
{
    struct cred_rewrite *rw = cred_rewrite_new(s, terminated ? "other.test" : NULL, 80);
    ASSERT(rw);
    char why[300];
    int r = 0;
    for (size_t pos = 0; pos < n && r == 0; pos += piece) {
        size_t k = n - pos < piece ? n - pos : piece;
        r = cred_rewrite_feed(rw, (const char *)p + pos, k, out, why, sizeof why);
        if (r < 0)
            ASSERT(why[0] && strlen(why) < sizeof why - 1);
    }
    cred_rewrite_free(rw);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool terminated = data[0] & 1;
    size_t piece = (size_t)((data[0] >> 1) & 15) + 1;
    struct cred_set *s = make_set();
    struct cred_out whole = {0}, pieces = {0};
    int rw = feed(s, terminated, data + 1, size - 1, size, &whole);
    int rp = feed(s, terminated, data + 1, size - 1, piece, &pieces);
    ASSERT(rw == rp);
    if (terminated) {
        const char *in = (const char *)data + 1;
        if (!memmem(in, size - 1, VALUE_A, strlen(VALUE_A)))
            ASSERT(!whole.len || !memmem(whole.p, whole.len, VALUE_A, strlen(VALUE_A)));
        if (!memmem(in, size - 1, VALUE_B, strlen(VALUE_B)))
            ASSERT(!whole.len || !memmem(whole.p, whole.len, VALUE_B, strlen(VALUE_B)));
    }
    free(whole.p);
    free(pieces.p);
    cred_set_free(s);
    return 0;
}
