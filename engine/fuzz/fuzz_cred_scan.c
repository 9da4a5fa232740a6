/* fuzz_cred_scan.c — libFuzzer target for cred_scan.c. Byte 0: bits 0-3 a piece size (1..16),
 * bit 4 the destination (a.test, whose credential A is not looked for, or other.test); the
 * rest is a tunnel's client->server stream, scanned whole and in pieces. Beyond no crash: both
 * find a placeholder exactly when memmem finds one (of a credential looked for) in the
 * stream, however it is split. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "proxy/cred_scan.h"

#define PH_A "PH_A_0123456789abcdef"
#define PH_B "PH_B_0123456789abcdef0123456789ab"

static struct cred_set *make_set(void)
{
    struct cred_set *s = cred_set_new();
    char why[200];
    const char *ha[] = {"a.test"};
    const char *hb[] = {"b.test:80"};
    ASSERT(cred_set_add(s, "A", PH_A, "VALUE_A_secret", ha, 1, why, sizeof why) == 0);
    ASSERT(cred_set_add(s, "B", PH_B, "VALUE_B_secret", hb, 1, why, sizeof why) == 0);
    return s;
}

static bool scan(const struct cred_set *s, const char *host, const uint8_t *p, size_t n,
                 size_t piece)
{
    struct cred_scan *sc = cred_scan_new(s, host, 80);
    ASSERT(sc);
    long k = -1;
    for (size_t pos = 0; pos < n && k < 0; pos += piece)
        k = cred_scan_feed(sc, (const char *)p + pos, n - pos < piece ? n - pos : piece);
    cred_scan_free(sc);
    ASSERT(k >= -1 && k <= 1);
    return k >= 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t piece = (size_t)(data[0] & 15) + 1;
    bool to_a = data[0] & 16;
    const char *host = to_a ? "a.test" : "other.test";
    struct cred_set *s = make_set();
    const uint8_t *in = data + 1;
    size_t n = size - 1;
    bool want = memmem(in, n, PH_B, strlen(PH_B)) || (!to_a && memmem(in, n, PH_A, strlen(PH_A)));
    ASSERT(scan(s, host, in, n, n ? n : 1) == want);
    ASSERT(scan(s, host, in, n, piece) == want);
    cred_set_free(s);
    return 0;
}
