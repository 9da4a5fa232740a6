/* fuzz.h — what every libFuzzer target here shares: the entry point's declaration and an
 * assertion that aborts (so that libFuzzer reports the input) in every build, NDEBUG or not. */
#ifndef CORDON_FUZZ_H
#define CORDON_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)    \
    do {             \
        if (!(c))    \
            abort(); \
    } while (0)

#endif
