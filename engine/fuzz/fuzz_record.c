/* fuzz_record.c — libFuzzer target for base/record.c, the reader under cordon's kept files. Byte
 * 0 picks the mode, the rest is the input:
 *   0  a whole kept file (magic "fuzzrec\n", version 1): the target seals the rest of the input
 *      as a payload too, so that the accepting path is reached;
 *   1  a payload read as typed fields, the types taken from the input's first bytes.
 * Beyond no crash, leak or undefined behaviour, it aborts when a property readers rely on
 * breaks:
 *   - an opened file's payload lies within the input, and sealing that payload again gives
 *     the input byte for byte (one file per payload); the input one byte shorter is refused;
 *   - a read never goes past the end, a failed read leaves bad set for good and gives zeros,
 *     and rec_in_done holds only when every byte was read and nothing failed.
 * Built and run by `make fuzz` (engine/fuzz/README.md). No I/O. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/record.h"
#include "fuzz/fuzz.h"

#define MAGIC "fuzzrec\n"

static void check_file(const uint8_t *data, size_t size)
{
    struct rec_in in;
    if (!rec_file_open(data, size, MAGIC, 1, &in))
        return;
    ASSERT(in.p >= data + REC_HEAD_LEN && in.end <= data + size && in.p <= in.end);
    struct rec_out payload = {0}, file = {0};
    rec_put(&payload, in.p, rec_left(&in));
    rec_file_seal(&file, MAGIC, 1, &payload);
    ASSERT(file.len == size && memcmp(file.data, data, size) == 0);
    ASSERT(!rec_file_open(data, size - 1, MAGIC, 1, &in));
    rec_out_free(&payload);
    rec_out_free(&file);
}

static void read_fields(const uint8_t *data, size_t size)
{
    size_t ntypes = size ? data[0] % 32 : 0;
    if (ntypes + 1 > size)
        return;
    const uint8_t *types = data + 1;
    struct rec_in in = rec_in_of(data + 1 + ntypes, size - 1 - ntypes);
    const unsigned char *end = in.end;
    for (size_t i = 0; i < ntypes; i++) {
        bool was_bad = in.bad;
        size_t left = rec_left(&in), n = 0;
        uint64_t v = 0;
        switch (types[i] % 7) {
        case 0:
            v = rec_get_u8(&in);
            break;
        case 1:
            v = rec_get_u16(&in);
            break;
        case 2:
            v = rec_get_u32(&in);
            break;
        case 3:
            v = rec_get_u64(&in);
            break;
        case 4:
            v = (uint64_t)rec_get_i64(&in);
            break;
        case 5: {
            const unsigned char *b = rec_get_blob(&in, types[i], &n);
            ASSERT(b ? (b >= data && b + n <= end && n <= types[i]) : n == 0);
            break;
        }
        default: {
            const unsigned char *b = rec_get_raw(&in, types[i] % 16);
            ASSERT(!b || b + types[i] % 16 <= end);
            break;
        }
        }
        ASSERT(in.p <= in.end && in.end == end && rec_left(&in) <= left);
        if (was_bad)
            ASSERT(in.bad && v == 0 && n == 0);
        if (in.bad)
            ASSERT(v == 0);
    }
    ASSERT(rec_in_done(&in) == (!in.bad && rec_left(&in) == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] == 0) {
        check_file(data + 1, size - 1);
        struct rec_out payload = {0}, file = {0};
        rec_put(&payload, data + 1, size - 1);
        rec_file_seal(&file, MAGIC, 1, &payload);
        check_file(file.data, file.len);
        rec_out_free(&payload);
        rec_out_free(&file);
    } else {
        read_fields(data + 1, size - 1);
    }
    return 0;
}
