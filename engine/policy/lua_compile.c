/* lua_compile.c — a build-time program: compiles each embedded lua/cordon/NAME.lua with the
 * Lua 5.4 library the engine itself links, strips it (lua_dump with strip=1) and writes the
 * bytecode as C arrays (lua_embedded.c, the tables lua_embedded.h declares), so that no run
 * parses the embedded modules again: loading their bytecode is a copy, their text a parse.
 * Also compiles the built-in policy and profile files as they are in the source tree, unstripped
 * (a policy's errors name its file and line), with their text beside them: lua_host.c uses such
 * a chunk only for a file whose bytes at run time are exactly that text, and gives it the file's
 * own path as its source name (the dump is cut around a placeholder name for that).
 * Owns: the generated file's layout. Uses: liblua5.4 (the one the engine links, so the bytecode
 * is that version's and that build's format; lua_host.c loads it with mode "b", and fails
 * closed on a module it cannot load, falls back to the text of a file), stdio.
 * Must never: write a partial OUT.c (it writes OUT.c.tmp and renames it over OUT.c).
 *   lua_compile OUT.c LUA_DIR NAME... [-- DATA_DIR FILE...] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

struct dump {
    unsigned char *data;
    size_t len, cap;
};

static int dump_writer(lua_State *L, const void *p, size_t n, void *ud)
{
    (void)L;
    struct dump *d = ud;
    if (d->len + n > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + n)
            cap *= 2;
        unsigned char *grown = realloc(d->data, cap);
        if (!grown)
            return 1;
        d->data = grown;
        d->cap = cap;
    }
    memcpy(d->data + d->len, p, n);
    d->len += n;
    return 0;
}

/* The text of path into text, and its bytecode (loaded as chunkname) into d. 0, or -1 with
 * one line on stderr. */
static int compile_file(lua_State *L, const char *path, const char *chunkname, int strip,
                        struct dump *text, struct dump *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "lua_compile: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char buf[8192];
    size_t n;
    int rc = 0;
    text->len = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        if (dump_writer(L, buf, n, text) != 0) {
            rc = -1;
            break;
        }
    if (ferror(f))
        rc = -1;
    fclose(f);
    if (rc < 0) {
        fprintf(stderr, "lua_compile: %s: cannot read it\n", path);
        return -1;
    }
    if (luaL_loadbufferx(L, (const char *)text->data, text->len, chunkname, "t") != LUA_OK) {
        fprintf(stderr, "lua_compile: %s\n", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    d->len = 0;
    if (lua_dump(L, dump_writer, d, strip) != 0) {
        fprintf(stderr, "lua_compile: %s: cannot dump its bytecode\n", path);
        rc = -1;
    }
    lua_pop(L, 1);
    return rc;
}

static void put_array(FILE *f, const char *name, const unsigned char *p, size_t n)
{
    fprintf(f, "static const unsigned char %s[] = {", name);
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s0x%02x,", k % 16 ? "" : "\n  ", p[k]);
    fprintf(f, "%s0};\n", n % 16 ? "" : "\n  "); /* a trailing 0: never an empty array */
}

/* The main function's source name, a placeholder here: Lua 5.4 dumps it once, as one byte of
 * length (len + 1, with the high bit marking the last byte of the size) and its bytes; every
 * inner function's is left out as its parent's. */
#define PLACEHOLDER "=cordon:builtin-chunk-source-name"

/* Where the placeholder's length byte starts in d, and so where the dump is cut; -1 when it is
 * not there exactly once as that (another Lua dump format: the file is then not built in). */
static long placeholder_at(const struct dump *d)
{
    size_t pl = strlen(PLACEHOLDER);
    long at = -1;
    for (size_t i = 1; i + pl <= d->len; i++) {
        if (memcmp(d->data + i, PLACEHOLDER, pl) != 0)
            continue;
        if (at >= 0 || d->data[i - 1] != (unsigned char)((pl + 1) | 0x80))
            return -1;
        at = (long)(i - 1);
    }
    return at;
}

/* One built-in policy or profile file: its text and its dump cut around the source name. */
static int put_builtin(FILE *f, lua_State *L, const char *data_dir, const char *name, int i,
                       struct dump *text, struct dump *d)
{
    char path[4096], id[32];
    snprintf(path, sizeof path, "%s/%s", data_dir, name);
    if (compile_file(L, path, PLACEHOLDER, 0, text, d) < 0)
        return -1;
    long at = placeholder_at(d);
    if (at < 0) {
        fprintf(stderr, "lua_compile: %s: not built in (no single source name in its dump)\n",
                path);
        return 0;
    }
    size_t tail = (size_t)at + 1 + strlen(PLACEHOLDER);
    snprintf(id, sizeof id, "text_%d", i);
    put_array(f, id, text->data, text->len);
    snprintf(id, sizeof id, "head_%d", i);
    put_array(f, id, d->data, (size_t)at);
    snprintf(id, sizeof id, "tail_%d", i);
    put_array(f, id, d->data + tail, d->len - tail);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: lua_compile OUT.c LUA_DIR NAME... [-- DATA_DIR FILE...]\n");
        return 2;
    }
    const char *out = argv[1], *lua_dir = argv[2], *data_dir = NULL;
    int n_modules = argc - 3, first_data = argc;
    for (int i = 3; i < argc; i++)
        if (strcmp(argv[i], "--") == 0 && i + 1 < argc) {
            n_modules = i - 3;
            data_dir = argv[i + 1];
            first_data = i + 2;
            break;
        }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    lua_State *L = luaL_newstate();
    FILE *f = fopen(tmp, "w");
    if (!L || !f) {
        fprintf(stderr, "lua_compile: %s: %s\n", tmp, L ? strerror(errno) : "no Lua state");
        if (f)
            fclose(f);
        if (L)
            lua_close(L);
        remove(tmp);
        return 1;
    }
    struct dump text = {0}, d = {0};
    int rc = 0;
    fprintf(f,
            "/* Generated by lua_compile from lua/, policies/ and profiles/: do not edit. The "
            "bytecode of %s. */\n#include <stddef.h>\n#include \"policy/lua_embedded.h\"\n",
            LUA_RELEASE);
    for (int i = 0; i < n_modules; i++) {
        char path[4096], chunkname[256], id[32];
        snprintf(path, sizeof path, "%s/cordon/%s.lua", lua_dir, argv[3 + i]);
        /* A stripped chunk keeps no name, but a syntax error here names the file as before. */
        snprintf(chunkname, sizeof chunkname, "@lua/cordon/%s.lua", argv[3 + i]);
        if (compile_file(L, path, chunkname, 1, &text, &d) < 0) {
            rc = 1;
            break;
        }
        snprintf(id, sizeof id, "mod_%d", i);
        put_array(f, id, d.data, d.len);
    }
    if (rc == 0) {
        fprintf(f, "const struct lua_embedded_module lua_embedded_modules[] = {\n");
        for (int i = 0; i < n_modules; i++)
            fprintf(f, "  { \"cordon.%s\", \"=lua/cordon/%s.lua\", mod_%d, sizeof mod_%d - 1 },\n",
                    argv[3 + i], argv[3 + i], i, i);
        fprintf(f, "  { NULL, NULL, NULL, 0 }\n};\n");
    }
    int n_data = first_data < argc ? argc - first_data : 0;
    char *built = calloc((size_t)n_data + 1, 1);
    if (!built)
        rc = 1;
    for (int i = 0; rc == 0 && i < n_data; i++) {
        int r = put_builtin(f, L, data_dir, argv[first_data + i], i, &text, &d);
        if (r < 0)
            rc = 1;
        else
            built[i] = (char)r;
    }
    if (rc == 0) {
        fprintf(f, "const struct lua_builtin_chunk lua_builtin_chunks[] = {\n");
        for (int i = 0; i < n_data; i++)
            if (built[i])
                fprintf(f,
                        "  { \"%s\", text_%d, sizeof text_%d - 1, head_%d, sizeof head_%d - 1, "
                        "tail_%d, sizeof tail_%d - 1 },\n",
                        argv[first_data + i], i, i, i, i, i, i);
        fprintf(f, "  { NULL, NULL, 0, NULL, 0, NULL, 0 }\n};\n");
    }
    free(built);
    free(text.data);
    free(d.data);
    lua_close(L);
    if (fclose(f) != 0 && rc == 0) {
        fprintf(stderr, "lua_compile: %s: %s\n", tmp, strerror(errno));
        rc = 1;
    }
    if (rc == 0 && rename(tmp, out) != 0) {
        fprintf(stderr, "lua_compile: %s: %s\n", out, strerror(errno));
        rc = 1;
    }
    if (rc != 0)
        remove(tmp);
    return rc;
}
