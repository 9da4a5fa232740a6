/* fuzz_profile_cache.c — libFuzzer target for policy/profile_cache.c's parsers, the readers of
 * the cache entries a later `cordon run` trusts: the entry (pc_entry_parse) and the resolved
 * profile's table dump (pc_table_push). The input is an entry without its last 8 bytes: the
 * target appends the check they hold, so that what follows it is reached; the key is taken
 * from the input (bytes 8..39), as a matching entry would have it. Beyond no crash, leak or
 * undefined behaviour, it aborts when a property the cache relies on breaks:
 *   - an accepted entry is refused when one byte shorter, and under another key;
 *   - its record walk and lists stay within the input;
 *   - a table dump either reads back to one table (the stack one higher) or is refused with
 *     the stack as it was; an accepted one dumps again canonically: read back once more, it
 *     dumps to the same bytes.
 * The input is also tried as a table dump alone. Built and run by `make fuzz`
 * (engine/fuzz/README.md). No I/O: the replay, which asks the file system, is not run. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "fuzz/fuzz.h"
#include "base/util.h"
#include "policy/profile_cache.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lua_State *L = luaL_newstate();
    ASSERT(L);
    check_table(L, data, size);

    uint8_t key[PC_KEY_LEN] = {0};
    if (size >= 8 + PC_KEY_LEN)
        memcpy(key, data + 8, PC_KEY_LEN);
    char *buf = xmalloc(size + 8);
    memcpy(buf, data, size);
    uint64_t sum = pc_entry_check(buf, size);
    for (int i = 0; i < 8; i++)
        buf[size + (size_t)i] = (char)(sum >> (8 * i));
    struct pc_entry e;
    if (pc_entry_parse(buf, size + 8, key, &e) == 0) {
        ASSERT(e.records + e.records_len <= (const unsigned char *)e.buf + e.len);
        ASSERT(e.table + e.table_len <= (const unsigned char *)e.buf + e.len);
        check_table(L, e.table, e.table_len);
        /* one byte shorter (its check made to match again) and another key: refused */
        char *shorter = xmalloc(size + 8);
        memcpy(shorter, data, size);
        if (size > 0) {
            uint64_t s2 = pc_entry_check(shorter, size - 1);
            for (int i = 0; i < 8; i++)
                shorter[size - 1 + (size_t)i] = (char)(s2 >> (8 * i));
            struct pc_entry f;
            ASSERT(pc_entry_parse(shorter, size + 7, key, &f) < 0);
        } else {
            free(shorter);
        }
        char *again = xmalloc(size + 8);
        memcpy(again, e.buf, size + 8);
        key[0] ^= 1;
        struct pc_entry g;
        ASSERT(pc_entry_parse(again, size + 8, key, &g) < 0);
        pc_entry_free(&e);
    }
    lua_close(L);
    return 0;
}
