/* test_profile_cache.c — the profile cache's own parts (policy/profile_cache.c): the profile
 * table's dump is canonical and refuses what is not plain data, a dump reads back to the same
 * table and a damaged one is refused whole; an entry parses back, and every truncation, every
 * changed byte and another key is refused; the key moves with each input; a transcript replays
 * only while every answer is the same. Works in a fresh directory under $TMPDIR. */
#include "test.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "base/util.h"
#include "policy/profile_cache.h"
#include "sandbox/profile_keys.h"
#include "sandbox/sandbox_config.h"

/* A copy of n bytes (an entry's parser takes its buffer over). */
static char *xmemdup(const void *p, size_t n)
{
    char *c = xmalloc(n ? n : 1);
    memcpy(c, p, n);
    return c;
}

/* Run chunk (returning a table) and dump its result into out: pc_table_dump's result. */
static int dump_of(lua_State *L, const char *chunk, struct pc_buf *out)
{
    CHECK(luaL_dostring(L, chunk) == LUA_OK);
    int rc = pc_table_dump(L, -1, out);
    lua_pop(L, 1);
    return rc;
}

static void test_table(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    struct pc_buf a = {0}, b = {0}, c = {0};
    const char *t = "return { name = 'x', hidden = { '~/a', '~/b' }, n = 3, f = 1.5, yes = true,"
                    " no = false, sub = { k = 'v', [7] = 'seven' }, ['with\\0nul'] = 's' }";
    CHECK_EQ_INT(dump_of(L, t, &a), 0);
    /* the same table built in another order dumps the same */
    CHECK_EQ_INT(dump_of(L,
                         "local t = { sub = { [7] = 'seven', k = 'v' } } t.no = false t.yes = true "
                         "t.f = 1.5 t.n = 3 t.hidden = { '~/a', '~/b' } t.name = 'x' "
                         "t['with\\0nul'] = 's' return t",
                         &b),
                 0);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    /* read back, it dumps the same again */
    CHECK_EQ_INT(pc_table_push(L, a.data, a.len), 0);
    CHECK_EQ_INT(pc_table_dump(L, -1, &c), 0);
    lua_pop(L, 1);
    CHECK(a.len == c.len && memcmp(a.data, c.data, a.len) == 0);
    /* every truncation of a dump is refused, leaving the stack as it was */
    int top = lua_gettop(L);
    for (size_t n = 0; n < a.len; n++)
        CHECK_EQ_INT(pc_table_push(L, a.data, n), -1);
    CHECK_EQ_INT(lua_gettop(L), top);
    /* a changed byte either reads as some table or is refused, never anything else */
    for (size_t i = 0; i < a.len; i++) {
        unsigned char save = a.data[i];
        a.data[i] ^= 0x5a;
        if (pc_table_push(L, a.data, a.len) == 0) {
            CHECK(lua_istable(L, -1));
            lua_pop(L, 1);
        }
        CHECK_EQ_INT(lua_gettop(L), top);
        a.data[i] = save;
    }
    /* not plain data */
    static const char *const bad[] = {
        "return { f = function() end }",
        "return setmetatable({}, {})",
        "local s = {} return { a = s, b = s }",
        "local t = {} t.me = t return t",
        "return { [1.5] = 'x' }",
        "return { [true] = 'x' }",
        "local t = {} for i = 1, 30 do t = { t } end return t",
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        struct pc_buf x = {0};
        CHECK_EQ_INT(dump_of(L, bad[i], &x), -1);
        pc_buf_free(&x);
    }
    pc_buf_free(&a);
    pc_buf_free(&b);
    pc_buf_free(&c);
    lua_close(L);
}

static char dir[PATH_MAX];

static char *put(const char *rel, const char *content)
{
    char *p = xasprintf("%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(content, f);
    fclose(f);
    return p;
}

/* A transcript of a layer read, an absent file, a stat and a directory listing, as the host
 * records them, made into an entry of key. */
static void record(const struct lh_options *opt, char *layer, char *absent, const uint8_t *key,
                   struct pc_buf *entry)
{
    struct pc_buf table = {0};
    lua_State *L = luaL_newstate();
    CHECK(luaL_dostring(L, "return { name = 'coding', hidden = { '~/x' } }") == LUA_OK);
    CHECK_EQ_INT(pc_table_dump(L, -1, &table), 0);
    lua_close(L);
    pc_record_begin(opt);
    CHECK(pc_recording());
    pc_note_file(PC_FILE, layer, 0, "return {}\n", 10);
    pc_note_file(PC_FILE, absent, -ENOENT, NULL, 0);
    pc_note_stat(dir, pc_stat_type(dir));
    struct str_list names = {0};
    CHECK_EQ_INT(pc_dir_entries(dir, PC_HOST_ENTRIES_MAX, &names), 0);
    pc_note_names(PC_ENTRIES, dir, 0, &names);
    str_list_free(&names);
    pc_note_value(PC_HOME, "", "/home/x");
    pc_note_print("a line");
    pc_record_end();
    struct str_list env = {0}, markers = {0};
    str_list_push(&env, "PATH=/usr/bin");
    str_list_push(&markers, "denied");
    CHECK(pc_entry_build(key, &table, &env, true, &markers, entry));
    str_list_free(&env);
    str_list_free(&markers);
    pc_buf_free(&table);
}

static void test_entry(void)
{
    snprintf(dir, sizeof dir, "%s/cordon-pc-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    char *layer = put("layer.lua", "return {}\n");
    char *absent = xasprintf("%s/absent.lua", dir);
    struct lh_options opt = {.datadir = dir};
    uint8_t key[PC_KEY_LEN] = {1, 2, 3}, other[PC_KEY_LEN] = {1, 2, 4};
    struct pc_buf entry = {0};
    record(&opt, layer, absent, key, &entry);

    struct pc_entry e;
    CHECK_EQ_INT(pc_entry_parse(xmemdup(entry.data, entry.len), entry.len, key, &e), 0);
    CHECK_EQ_INT(e.env.len, 1);
    CHECK(strcmp(e.env.items[0], "PATH=/usr/bin") == 0);
    CHECK(e.markers_known);
    CHECK_EQ_INT(pc_replay(&e, &opt, "/home/x"), 0);
    CHECK_EQ_INT(e.prints.len, 1);
    CHECK(strcmp(e.prints.items[0], "a line") == 0);
    pc_entry_free(&e);
    /* the answers must be today's: another home, an edit of the layer, the absent file made,
     * a new directory entry */
    CHECK_EQ_INT(pc_entry_parse(xmemdup(entry.data, entry.len), entry.len, key, &e), 0);
    CHECK_EQ_INT(pc_replay(&e, &opt, "/home/y"), -1);
    pc_entry_free(&e);
    static const char *const changes[] = {"layer.lua", "absent.lua", "new"};
    for (size_t i = 0; i < ARRAY_LEN(changes); i++) {
        free(put(changes[i], i == 0 ? "return {}\t" : "x"));
        CHECK_EQ_INT(pc_entry_parse(xmemdup(entry.data, entry.len), entry.len, key, &e), 0);
        CHECK_EQ_INT(pc_replay(&e, &opt, "/home/x"), -1);
        pc_entry_free(&e);
        /* undone, and recorded again */
        if (i == 0)
            free(put("layer.lua", "return {}\n"));
        else {
            char *p = xasprintf("%s/%s", dir, changes[i]);
            unlink(p);
            free(p);
        }
        pc_buf_free(&entry);
        record(&opt, layer, absent, key, &entry);
        CHECK_EQ_INT(pc_entry_parse(xmemdup(entry.data, entry.len), entry.len, key, &e), 0);
        CHECK_EQ_INT(pc_replay(&e, &opt, "/home/x"), 0);
        pc_entry_free(&e);
    }
    /* another key, every truncation, every changed byte: refused */
    CHECK_EQ_INT(pc_entry_parse(xmemdup(entry.data, entry.len), entry.len, other, &e), -1);
    for (size_t n = 0; n < entry.len; n++)
        CHECK_EQ_INT(pc_entry_parse(xmemdup(entry.data, entry.len), n, key, &e), -1);
    for (size_t i = 0; i < entry.len; i++) {
        char *copy = xmemdup(entry.data, entry.len);
        copy[i] ^= 0x01;
        CHECK_EQ_INT(pc_entry_parse(copy, entry.len, key, &e), -1);
    }
    /* an uncacheable resolution builds no entry */
    pc_record_begin(&opt);
    pc_uncacheable("math.random");
    pc_record_end();
    struct pc_buf none = {0}, table = {0};
    struct str_list empty = {0};
    pc_buf_put(&table, "T\0\0\0\0", 5);
    CHECK(!pc_entry_build(key, &table, &empty, false, &empty, &none));
    CHECK(none.data == NULL);

    /* stored privately, read back; a 0644 or linked one is not read */
    char *path = xasprintf("%s/profiles/%s", dir, "ab");
    pc_entry_store(path, &entry);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK_EQ_INT(pc_entry_load(path, key, &e), 0);
    pc_entry_free(&e);
    CHECK(chmod(path, 0644) == 0);
    CHECK_EQ_INT(pc_entry_load(path, key, &e), -1);
    char *link = xasprintf("%s/profiles/link", dir);
    CHECK(chmod(path, 0600) == 0 && symlink(path, link) == 0);
    CHECK_EQ_INT(pc_entry_load(link, key, &e), -1);
    free(link);
    free(path);
    /* at most 64 entries are kept: a write removes the oldest beyond them, nothing else */
    char *other_file = put("profiles/notes", "kept");
    for (int i = 0; i < 70; i++) {
        char name[PC_KEY_LEN * 2 + 1];
        snprintf(name, sizeof name, "%064d", i);
        char *p = xasprintf("%s/profiles/%s", dir, name);
        pc_entry_store(p, &entry);
        struct timespec ts[2] = {{.tv_sec = 1000 + i}, {.tv_sec = 1000 + i}};
        CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
        free(p);
    }
    /* each write beyond 64 removed the oldest (by modification time): 0..5 */
    char *first = xasprintf("%s/profiles/%064d", dir, 6),
         *last = xasprintf("%s/profiles/%064d", dir, 69);
    CHECK(access(first, F_OK) == 0);
    char *one_more = xasprintf("%s/profiles/%064d", dir, 70);
    pc_entry_store(one_more, &entry);
    CHECK(access(first, F_OK) < 0 && access(last, F_OK) == 0 && access(one_more, F_OK) == 0);
    CHECK(access(other_file, F_OK) == 0);
    int kept = 0;
    for (int i = 0; i <= 70; i++) {
        char *p = xasprintf("%s/profiles/%064d", dir, i);
        kept += access(p, F_OK) == 0;
        CHECK(i >= 7 || access(p, F_OK) < 0);
        free(p);
    }
    CHECK_EQ_INT(kept, 64);
    free(first);
    free(last);
    free(one_more);
    free(other_file);
    pc_buf_free(&table);
    pc_buf_free(&entry);
    free(layer);
    free(absent);
}

static void test_key(void)
{
    char a1[] = "A=1", b2[] = "B=2", b3[] = "B=3", t[] = "true";
    char *env1[] = {a1, b2, NULL}, *env2[] = {a1, b3, NULL}, *env3[] = {b2, a1, NULL};
    struct run_flags f = {0}, g = {0};
    struct lh_options o = {.datadir = "/d"}, p = {.datadir = "/d", .user_config_dir = "/u"};
    uint8_t k[6][PC_KEY_LEN];
    if (pc_key(&f, "/w", "/h", env1, &o, k[0]) == -ENOTSUP)
        TEST_SKIP("this binary has no build-id");
    CHECK_EQ_INT(pc_key(&f, "/w", "/h", env2, &o, k[1]), 0);
    CHECK_EQ_INT(pc_key(&f, "/w", "/h", env3, &o, k[2]), 0);
    CHECK_EQ_INT(pc_key(&f, "/v", "/h", env1, &o, k[3]), 0);
    CHECK_EQ_INT(pc_key(&f, "/w", "/h", env1, &p, k[4]), 0);
    g.profile = "strict";
    CHECK_EQ_INT(pc_key(&g, "/w", "/h", env1, &o, k[5]), 0);
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            CHECK(memcmp(k[i], k[j], PC_KEY_LEN) != 0);
    uint8_t again[PC_KEY_LEN];
    CHECK_EQ_INT(pc_key(&f, "/w", "/h", env1, &o, again), 0);
    CHECK(memcmp(again, k[0], PC_KEY_LEN) == 0);
    /* the command is not keyed: no resolution reads it */
    char *cmd[] = {t, NULL};
    f.command = cmd;
    CHECK_EQ_INT(pc_key(&f, "/w", "/h", env1, &o, again), 0);
    CHECK(memcmp(again, k[0], PC_KEY_LEN) == 0);
}

/* Each profile key's flag is keyed, by its row: setting any one changes the key. */
static void test_every_flag_keyed(void)
{
    char a1[] = "A=1";
    char *env[] = {a1, NULL};
    struct lh_options o = {.datadir = "/d"};
    struct run_flags none = {0};
    uint8_t base[PC_KEY_LEN], k[PC_KEY_LEN];
    if (pc_key(&none, "/w", "/h", env, &o, base) == -ENOTSUP)
        TEST_SKIP("this binary has no build-id");
    for (size_t i = 0; i < profile_keys_len; i++) {
        const struct profile_key *key = &profile_keys[i];
        if (!key->flag)
            continue;
        struct run_flags f = {0};
        void *field = (char *)&f + key->flag_field;
        if (key->kind == PK_BOOLEAN)
            *(enum flag_state *)field = FLAG_FALSE;
        else if (pk_kind_is_list(key->kind))
            str_list_push(field, "x");
        else
            *(const char **)field = "x";
        CHECK_EQ_INT(pc_key(&f, "/w", "/h", env, &o, k), 0);
        if (memcmp(k, base, PC_KEY_LEN) == 0)
            fprintf(stderr, "  --%s is not keyed\n", key->flag);
        CHECK(memcmp(k, base, PC_KEY_LEN) != 0);
        run_flags_free(&f);
    }
}

TEST_MAIN({"table", test_table}, {"entry", test_entry}, {"key", test_key},
          {"every flag keyed", test_every_flag_keyed})
