/* fuzz_record.c — the libFuzzer target for the readers of cordon's kept files: base/record.c
 * (the envelope and the typed reads every kept file uses) and the profile cache's entries and
 * table dumps (policy/profile_cache.c, whose reads are record.c's). Byte 0 picks the mode, the
 * rest is the input:
 *   0  a whole kept file (magic "fuzzrec\n", version 1): the target seals the rest of the input
 *      as a payload too, so that the accepting path is reached;
 *   1  a payload read as typed fields, the types taken from the input's first bytes;
 *   2  a profile cache entry's payload (the target seals it as the cache does; the key is its
 *      first 32 bytes), and the same bytes as a table dump alone.
 * Beyond no crash, leak or undefined behaviour, it aborts when a property readers rely on
 * breaks:
 *   - an opened file's payload lies within the input, and sealing that payload again gives
 *     the input byte for byte (one file per payload); the input one byte shorter is refused;
 *   - a read never goes past the end, a failed read leaves bad set for good and gives zeros,
 *     and rec_in_done holds only when every byte was read and nothing failed;
 *   - an accepted profile entry is refused when one byte shorter, and under another key; its
 *     record walk and lists stay within the input; a table dump either reads back to one table
 *     (the stack one higher) or is refused with the stack as it was; an accepted one dumps
 *     again canonically: read back once more, it dumps to the same bytes.
 * Built and run by `make fuzz` (engine/fuzz/README.md). No I/O: the profile cache's replay,
 * which asks the file system, is not run. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "base/record.h"
#include "base/util.h"
#include "fuzz/fuzz.h"
#include "policy/profile_cache.h"

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

/* A dump read back and dumped again is canonical: the same bytes once more. */
static void check_table(lua_State *L, const unsigned char *p, size_t n)
{
    int top = lua_gettop(L);
    if (pc_table_push(L, p, n) < 0) {
        ASSERT(lua_gettop(L) == top);
        return;
    }
    ASSERT(lua_gettop(L) == top + 1 && lua_istable(L, -1));
    struct pc_buf a = {0}, b = {0};
    if (pc_table_dump(L, -1, &a) == 0) {
        ASSERT(pc_table_push(L, a.data, a.len) == 0);
        ASSERT(pc_table_dump(L, -1, &b) == 0);
        ASSERT(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        lua_pop(L, 1);
    }
    pc_buf_free(&a);
    pc_buf_free(&b);
    lua_settop(L, top);
}

/* A profile cache entry's bytes sealed as a kept file (magic and version the cache's). */
static char *sealed_entry(const uint8_t *payload, size_t n, size_t *len)
{
    struct rec_out p = {0}, f = {0};
    rec_put(&p, payload, n);
    rec_file_seal(&f, "CORDPC2\n", 2, &p);
    rec_out_free(&p);
    *len = f.len;
    return (char *)f.data;
}

/* A profile cache entry's payload (policy/profile_cache.c): the target seals it, so that what
 * follows the envelope is reached; the key is its first 32 bytes, as a matching entry would
 * have it. The input is also tried as a table dump alone. */
static void check_profile_entry(const uint8_t *data, size_t size)
{
    lua_State *L = luaL_newstate();
    ASSERT(L);
    check_table(L, data, size);

    uint8_t key[PC_KEY_LEN] = {0};
    if (size >= PC_KEY_LEN)
        memcpy(key, data, PC_KEY_LEN);
    size_t len;
    char *buf = sealed_entry(data, size, &len);
    struct pc_entry e;
    if (pc_entry_parse(buf, len, key, &e) == 0) {
        ASSERT(e.records + e.records_len <= (const unsigned char *)e.buf + e.len);
        ASSERT(e.table + e.table_len <= (const unsigned char *)e.buf + e.len);
        check_table(L, e.table, e.table_len);
        /* one byte shorter (sealed again) and another key: refused */
        ASSERT(size > 0);
        size_t slen;
        char *shorter = sealed_entry(data, size - 1, &slen);
        struct pc_entry f;
        ASSERT(pc_entry_parse(shorter, slen, key, &f) < 0);
        size_t alen;
        char *again = sealed_entry(data, size, &alen);
        key[0] ^= 1;
        struct pc_entry g;
        ASSERT(pc_entry_parse(again, alen, key, &g) < 0);
        pc_entry_free(&e);
    }
    lua_close(L);
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
    } else if (data[0] == 1) {
        read_fields(data + 1, size - 1);
    } else if (data[0] == 2) {
        check_profile_entry(data + 1, size - 1);
    }
    return 0;
}
