/* lua_host.c — the one owner of the lua_State. See lua_host.h.
 * Owns: creating and sandboxing the state (base, table, string, math, utf8 opened one by one;
 * text chunks only, but for the embedded lua/ modules' build-time bytecode (and a built-in
 * policy's or profile's, for a file that is byte for byte its text); require over those
 * modules, each loaded on its first require; a fresh _ENV per policy and
 * profile file), the budgets (instruction count hook, allocator cap), the single protected
 * call every Lua entry goes through (outcome enum), loading the policy layers and profile
 * files, and the state's lifetime (rebuild after out-of-memory, close).
 * Uses: lua_host_api.c for the `host` table, lua_decide.c to forget a resolved profile,
 * lua_embedded.c for lua/, util.c, log.c, markers.c (the refusal markers, compiled once),
 * profile_cache.c (the files and listings the loaders read, print()'s lines and math.random
 * noted for the cache of resolved profiles).
 * The decisions are lua_decide.c's, explain and check lua_explain.c's (lua_host_private.h).
 * Must never: run bytecode but the binary's own (the embedded modules; a built-in policy or
 * profile for a file holding exactly its text), never bytecode from a file, a string or a user,
 * open io/os/debug/package, call Lua outside lh_protected_call(),
 * look hooks up by global name (registry refs only), or let a hook error pass as "allow". */
#include "policy/lua_host.h"
#include "policy/lua_host_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "base/log.h"
#include "base/markers.h"
#include "policy/lua_embedded.h"
#include "policy/profile_cache.h"
#include "policy/trust.h"
#include "base/util.h"

#define LH_STEP_INTERVAL 1000                       /* instructions between count-hook calls */
#define LH_STEP_LIMIT (50000000 / LH_STEP_INTERVAL) /* ~50M instructions per call */
#define LH_MEM_PER_CALL ((size_t)32 << 20)          /* bytes a call may grow the state by */
#define LH_LOADED_KEY "cordon.loaded"

const char *const lh_hook_names[HOOK_COUNT] = {"profile", "environment", "network", "refusal",
                                               "escalate"};

struct lh_state lh_state = {
    .ref_api = LUA_NOREF, .ref_profile = LUA_NOREF, .ref_unchecked = LUA_NOREF};

/* ---- allocation and budget -------------------------------------------------------------- */

static void *lh_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        H.mem_used -= old;
        return NULL;
    }
    if (H.mem_limit && nsize > old && H.mem_used - old + nsize > H.mem_limit) {
        H.mem_tripped = true;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (!p)
        return NULL;
    H.mem_used = H.mem_used - old + nsize;
    return p;
}

/* Once the budget is spent the hook fires on every instruction, so a pcall in the policy
 * cannot swallow the error and carry on. */
static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (!H.budget_tripped && ++H.steps < LH_STEP_LIMIT)
        return;
    if (!H.budget_tripped) {
        H.budget_tripped = true;
        lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    }
    luaL_where(L, 0); /* in a hook, level 0 is the running Lua function */
    lua_pushstring(L, "instruction budget exhausted");
    lua_concat(L, 2);
    lua_error(L);
}

/* Message handler: the message with a private traceback (the debug library stays closed). */
static int msgh(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg)
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Every policy and profile file loaded, to undo Lua's shortening of long chunk names. */
static struct str_list known_chunks;

/* Lua shortens a chunk name longer than LUA_IDSIZE to "...tail" in positions; a message must
 * name the policy's file whole. Replace each "...tail:N:" whose tail ends a known file. */
static void expand_chunk_names(char *err, size_t errlen)
{
    char *p = err;
    while ((p = strstr(p, "...")) != NULL) {
        char *tail = p + 3, *colon = strchr(tail, ':');
        if (!colon || colon[1] < '0' || colon[1] > '9') {
            p = tail;
            continue;
        }
        size_t tl = (size_t)(colon - tail);
        const char *full = NULL;
        for (size_t i = 0; i < known_chunks.len && !full; i++) {
            size_t fl = strlen(known_chunks.items[i]);
            if (fl >= tl && strncmp(known_chunks.items[i] + fl - tl, tail, tl) == 0)
                full = known_chunks.items[i];
        }
        if (!full) {
            p = tail;
            continue;
        }
        char *rest = xstrdup(colon);
        size_t at = (size_t)(p - err);
        snprintf(p, errlen - at, "%s%s", full, rest);
        free(rest);
        p = err + at + strlen(full);
        if ((size_t)(p - err) >= errlen - 1)
            break;
    }
}

/* The one way into Lua: run fn(ctx) under a message handler, the instruction budget
 * and the memory cap. `where` ("file:line" of the code being run) prefixes messages that carry
 * no position of their own; NULL: messages stand as they are (they name their cause). On a non-OK outcome err holds one line. Stack balanced. */
enum lh_outcome lh_protected_call(lua_CFunction fn, void *ctx, const char *where, char *err,
                                  size_t errlen)
{
    lua_State *L = H.L;
    int top = lua_gettop(L);
    lua_pushcfunction(L, msgh);    /* [h] */
    lua_pushcfunction(L, fn);      /* [h, fn] */
    lua_pushlightuserdata(L, ctx); /* [h, fn, ctx] */
    H.steps = 0;
    H.budget_tripped = H.mem_tripped = H.validating = false;
    H.mem_limit = H.mem_used + LH_MEM_PER_CALL;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, LH_STEP_INTERVAL);
    int st = lua_pcall(L, 1, 0, top + 1); /* [h] or [h, msg] */
    lua_sethook(L, NULL, 0, 0);
    H.mem_limit = 0;

    enum lh_outcome o;
    if (H.mem_tripped || st == LUA_ERRMEM)
        o = LH_NOMEM;
    else if (H.budget_tripped)
        o = LH_TIMEOUT;
    else if (st != LUA_OK)
        o = H.validating ? LH_BAD_RESULT : LH_ERROR;
    else
        o = LH_OK;

    if (o == LH_NOMEM) {
        H.need_rebuild = true;
        snprintf(err, errlen, "%s: memory cap exceeded (%zu MiB per decision)", where,
                 LH_MEM_PER_CALL >> 20);
    } else if (o != LH_OK) {
        const char *msg = st != LUA_OK ? lua_tostring(L, -1) : NULL;
        if (!msg)
            msg = "error";
        const char *tb = strstr(msg, "\nstack traceback:");
        int n = tb ? (int)(tb - msg) : (int)strlen(msg);
        /* A message without a Lua position (a C check, error(msg, 0)) gets the hook's. */
        bool has_pos = msg[0] == '/' || strncmp(msg, "lua/", 4) == 0 || strstr(msg, ".lua:");
        if (has_pos || !where)
            snprintf(err, errlen, "%.*s", n, msg);
        else
            snprintf(err, errlen, "%s: %.*s", where, n, msg);
        expand_chunk_names(err, errlen);
        LOG_D(LH_UNIT, "%s", msg);
    }
    lua_settop(L, top);
    return o;
}

/* ---- files ------------------------------------------------------------------------------- */

/* Read path into a new userdata buffer on the stack ([-0, +1] on success). Returns the length,
 * or -errno with nothing pushed. May raise only before opening the file. */
long lh_push_buffer(lua_State *L, const char *data, size_t len)
{
    char *buf = lua_newuserdatauv(L, len + 1, 0);
    memcpy(buf, data, len);
    buf[len] = '\0';
    return (long)len;
}

/* The trusted entry path names when path lies in the trusted project directory: *inside set
 * then, and the entry or NULL (a name trust did not see). */
static const struct trust_entry *trusted_entry(const char *path, bool *inside)
{
    *inside = false;
    if (!H.project_files || !H.project_dir)
        return NULL;
    size_t n = strlen(H.project_dir);
    if (strncmp(path, H.project_dir, n) != 0 || path[n] != '/')
        return NULL;
    *inside = true;
    return trust_set_find(H.project_files, path + n + 1);
}

bool lh_file_exists(const char *path)
{
    bool inside;
    const struct trust_entry *t = trusted_entry(path, &inside);
    return inside ? t != NULL : access(path, F_OK) == 0;
}

long lh_push_file(lua_State *L, const char *path)
{
    bool inside;
    const struct trust_entry *t = trusted_entry(path, &inside);
    if (inside) { /* trust hashed these bytes: never the path again */
        if (!t || !t->data) {
            pc_note_file(PC_FILE, path, -ENOENT, NULL, 0);
            return -ENOENT;
        }
        pc_note_file(PC_FILE, path, 0, t->data, t->len);
        return lh_push_buffer(L, t->data, t->len);
    }
    struct stat st;
    if (stat(path, &st) < 0) {
        int e = errno;
        pc_note_file(PC_FILE, path, -e, NULL, 0);
        return -e;
    }
    if (!S_ISREG(st.st_mode)) {
        pc_note_file(PC_FILE, path, -EISDIR, NULL, 0);
        return -EISDIR;
    }
    size_t cap = (size_t)st.st_size;
    char *buf = lua_newuserdatauv(L, cap + 1, 0); /* [ud] (may raise; no fd open yet) */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        lua_pop(L, 1);
        pc_note_file(PC_FILE, path, -e, NULL, 0);
        return -e;
    }
    size_t len = 0;
    while (len < cap) {
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    pc_note_file(PC_FILE, path, 0, buf, len);
    return (long)len;
}

/* The built-in file whose text buf is, byte for byte, or NULL. */
static const struct lua_builtin_chunk *builtin_of(const char *buf, size_t len)
{
    for (const struct lua_builtin_chunk *b = lua_builtin_chunks; b->name; b++)
        if (b->text_len == len && memcmp(b->text, buf, len) == 0)
            return b;
    return NULL;
}

/* The pieces of a built-in chunk, handed to lua_load in turn: no copy of them is made. */
struct builtin_reader {
    const void *piece[4];
    size_t len[4];
    int next;
};

static const char *read_piece(lua_State *L, void *ud, size_t *size)
{
    (void)L;
    struct builtin_reader *r = ud;
    while (r->next < 4 && r->len[r->next] == 0)
        r->next++;
    if (r->next == 4) {
        *size = 0;
        return NULL;
    }
    *size = r->len[r->next];
    return r->piece[r->next++];
}

/* A file holding exactly a built-in policy's or profile's text: the build's bytecode of that
 * text, named "@path" as the text would be (its messages and positions are the text's), instead
 * of parsing it again. [name] -> [name, fn], true; false, with the stack as it was, when it
 * cannot be loaded (the caller parses the text: the same function). The bytes are the binary's
 * own, never the file's: the file was only compared. */
static bool load_builtin(lua_State *L, const struct lua_builtin_chunk *b)
{
    size_t nl;
    const char *name = lua_tolstring(L, -1, &nl);
    unsigned char size[sizeof(size_t) * 8 / 7 + 1];
    size_t n = 0;
    /* Lua 5.4's dumped size: nl + 1 in 7-bit groups, most significant first, 0x80 on the last. */
    for (size_t x = nl + 1; x || !n; x >>= 7)
        size[sizeof size - ++n] = (unsigned char)(x & 0x7f);
    size[sizeof size - 1] |= 0x80;
    struct builtin_reader r = {.piece = {b->head, size + sizeof size - n, name, b->tail},
                               .len = {b->head_len, n, nl, b->tail_len}};
    if (lua_load(L, read_piece, &r, name, "b") == LUA_OK) /* [name, fn|msg] */
        return true;
    LOG_D(LH_UNIT, "%s: built-in chunk not loaded (%s): parsing the text", b->name,
          lua_tostring(L, -1));
    lua_pop(L, 1);
    return false;
}

/* Load the text chunk in the userdata on top as path, with a fresh sandbox _ENV:
 * [ud] -> [ud, fn]. Raises "path:line: message" on a syntax error or a binary chunk. */
void lh_load_sandboxed(lua_State *L, const char *path, size_t len)
{
    if (!str_list_contains(&known_chunks, path) && known_chunks.len < 256)
        str_list_push(&known_chunks, path);
    const char *buf = lua_touserdata(L, -1);
    lua_pushfstring(L, "@%s", path); /* [ud, name] */
    const struct lua_builtin_chunk *b = builtin_of(buf, len);
    int st = LUA_OK;
    if (!b || !load_builtin(L, b))                                    /* [ud, name, fn] */
        st = luaL_loadbufferx(L, buf, len, lua_tostring(L, -1), "t"); /* [ud, name, fn|msg] */
    lua_remove(L, -2);                                                /* [ud, fn|msg] */
    if (st != LUA_OK) {
        /* Name the file whole ("path:line: ..."), even when Lua shortened a long chunk name. */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "cannot load");
        expand_chunk_names(msg, sizeof msg);
        if (strncmp(msg, path, strlen(path)) != 0)
            lua_pushfstring(L, "%s: %s", path, msg);
        else
            lua_pushstring(L, msg);
        lua_error(L);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_env_fn); /* [ud, fn, envfn] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_api);    /* [ud, fn, envfn, api] */
    lua_call(L, 1, 1);                               /* [ud, fn, env] */
    if (!lua_setupvalue(L, -2, 1))                   /* [ud, fn] */
        lua_pop(L, 1);
}

bool lh_valid_profile_name(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* The directories profiles are looked up in, first match wins: the one `policy check FILE`
 * names, the project's (a trusted .cordon, or the one policy check/test name), the user's, the
 * built-in one. Returns the count; strings are owned by the caller. */
size_t lh_profile_dirs(char *dirs[LH_PROFILE_DIRS_MAX])
{
    size_t n = 0;
    if (H.check_profile_dir)
        dirs[n++] = xstrdup(H.check_profile_dir);
    if (H.project_dir)
        dirs[n++] = xasprintf("%s/profiles", H.project_dir);
    if (H.user_config_dir)
        dirs[n++] = xasprintf("%s/profiles", H.user_config_dir);
    dirs[n++] = xasprintf("%s/profiles", H.datadir);
    return n;
}

/* Names of every profile file in the lookup directories, sorted, unique. Only for error
 * messages and `policy check`: the run path never scans directories. */
void lh_list_profile_names(struct str_list *out, struct str_list *bad_files)
{
    pc_uncacheable("a scan of the profile directories"); /* no transcript record replays it */
    char *dirs[LH_PROFILE_DIRS_MAX];
    size_t nd = lh_profile_dirs(dirs);
    for (size_t i = 0; i < nd; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (e->d_name[0] == '.' || l < 5 || strcmp(e->d_name + l - 4, ".lua") != 0)
                continue;
            char *name = xasprintf("%.*s", (int)(l - 4), e->d_name);
            if (!lh_valid_profile_name(name)) {
                if (bad_files)
                    str_list_push_owned(bad_files, xasprintf("%s/%s", dirs[i], e->d_name));
                free(name);
            } else if (str_list_contains(out, name)) {
                free(name);
            } else {
                str_list_push_owned(out, name);
            }
        }
        if (d)
            closedir(d);
        free(dirs[i]);
    }
    str_list_sort(out);
}

/* ---- globals for the embedded modules ---------------------------------------------------- */

static int lh_print(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, '\t');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    pc_note_print(lua_tostring(L, -1));
    if (!H.print_muted)
        LOG_I(LH_UNIT, "%s", lua_tostring(L, -1));
    return 0;
}

void lh_log_print(const char *line)
{
    LOG_I(LH_UNIT, "%s", line);
}

/* load(chunk [, chunkname [, mode [, env]]]): strings only, text only, whatever mode says. */
static int lh_load(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    const char *name = luaL_optstring(L, 2, "=(load)");
    if (luaL_loadbufferx(L, s, len, name, "t") != LUA_OK) {
        luaL_pushfail(L);
        lua_insert(L, -2);
        return 2;
    }
    if (!lua_isnone(L, 4)) {
        lua_pushvalue(L, 4);
        if (!lua_setupvalue(L, -2, 1))
            lua_pop(L, 1);
    }
    return 1;
}

/* require(name): only the embedded lua/ modules, each loaded once, on its first require. They
 * are the build's own bytecode (lua_compile.c), so mode "b" here and nowhere else: what a policy,
 * a profile or load() brings is text, always. */
static int lh_require(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, LH_LOADED_KEY); /* [name, loaded] */
    if (lua_getfield(L, -1, name) != LUA_TNIL)         /* [name, loaded, mod] */
        return 1;
    lua_pop(L, 1);
    const struct lua_embedded_module *m = lua_embedded_modules;
    while (m->name && strcmp(m->name, name) != 0)
        m++;
    if (!m->name)
        return luaL_error(L, "module '%s' not found (only the embedded cordon.* modules)", name);
    if (luaL_loadbufferx(L, (const char *)m->code, m->len, m->chunkname, "b") != LUA_OK)
        return lua_error(L); /* "lua/cordon/NAME.lua: bad binary format ...": a broken build */
    lua_pushstring(L, name);
    lua_call(L, 1, 1); /* [name, loaded, mod] */
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, name);
    return 1;
}

/* math.random and math.randomseed: a state's generator starts from a random seed, so what a
 * policy draws is no function of its inputs: such a resolution is never cached. Upvalue 1 is
 * the library's function. */
static int lh_math_random(lua_State *L)
{
    pc_uncacheable("math.random");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static void wrap_math_random(lua_State *L)
{
    static const char *const names[] = {"random", "randomseed"};
    lua_getglobal(L, LUA_MATHLIBNAME); /* [math] */
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        lua_getfield(L, -1, names[i]); /* [math, f] */
        lua_pushcclosure(L, lh_math_random, 1);
        lua_setfield(L, -2, names[i]);
    }
    lua_pop(L, 1);
}

static void open_libs(lua_State *L)
{
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},        {LUA_TABLIBNAME, luaopen_table},
        {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8},
    };
    for (size_t i = 0; i < ARRAY_LEN(libs); i++) {
        luaL_requiref(L, libs[i].name, libs[i].func, 1);
        lua_pop(L, 1);
    }
    static const char *const drop[] = {"dofile", "loadfile", "collectgarbage"};
    for (size_t i = 0; i < ARRAY_LEN(drop); i++) {
        lua_pushnil(L);
        lua_setglobal(L, drop[i]);
    }
    wrap_math_random(L);
    lua_register(L, "load", lh_load);
    lua_register(L, "print", lh_print);
    lua_register(L, "require", lh_require);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LH_LOADED_KEY);
    /* Hide the string metatable: getmetatable("").__index would be the shared string table. */
    lua_pushliteral(L, "");  /* [s] */
    lua_getmetatable(L, -1); /* [s, mt] */
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);
}

/* require(name) then name.field: [-0, +1]. */
void lh_push_module_field(lua_State *L, const char *mod, const char *field)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, mod);
    lua_call(L, 1, 1);          /* [m] */
    lua_getfield(L, -1, field); /* [m, f] */
    lua_remove(L, -2);          /* [f] */
}

/* Load one policy file and add it as a layer: [reg] -> [reg]. Raises on any problem. */
void lh_add_layer(lua_State *L, const char *path)
{
    long len = lh_push_file(L, path); /* [reg, ud] */
    if (len < 0) {
        lua_pushfstring(L, "%s: %s", path, strerror((int)-len));
        lua_error(L);
    }
    lh_load_sandboxed(L, path, (size_t)len);              /* [reg, ud, fn] */
    lua_call(L, 0, 1);                                    /* [reg, ud, layer] */
    lh_push_module_field(L, "cordon.hooks", "add_layer"); /* [reg, ud, layer, add] */
    lua_pushvalue(L, -4);
    lua_pushvalue(L, -3);
    lua_pushstring(L, path); /* [reg, ud, layer, add, reg, layer, path] */
    size_t n = H.project_dir ? strlen(H.project_dir) : 0;
    lua_pushboolean(L, n && strncmp(path, H.project_dir, n) == 0 && path[n] == '/');
    lua_call(L, 4, 0); /* [reg, ud, layer] */
    lua_pop(L, 2);           /* [reg] */
}

static int add_layer_protected(lua_State *L)
{
    const char *path = lua_tostring(L, 2); /* [reg, path] */
    lua_pushvalue(L, 1);                   /* [reg, path, reg] */
    lh_add_layer(L, path);
    return 0;
}

/* Every policy layer, lowest first: policies/NAME.lua in name order, the user's policy.lua,
 * the project's .cordon/policy.lua (when lh_options named one), then --policy FILE (which
 * must exist: the user named it). */
static void layer_files(lua_State *L, struct str_list *files)
{
    char *dir = xasprintf("%s/policies", H.datadir);
    struct str_list names = {0};
    int err = pc_lua_names(dir, &names);
    pc_note_names(PC_LIST, dir, err, &names);
    if (err < 0) {
        str_list_free(&names);
        lua_pushfstring(L, "%s: %s", dir, strerror(-err));
        free(dir);
        lua_error(L);
    }
    for (size_t i = 0; i < names.len; i++)
        str_list_push_owned(files, xasprintf("%s/%s", dir, names.items[i]));
    str_list_free(&names);
    free(dir);
    char *user = H.user_config_dir ? xasprintf("%s/policy.lua", H.user_config_dir) : NULL;
    bool user_exists = user && access(user, F_OK) == 0;
    if (user)
        pc_note_access(user, user_exists);
    if (user_exists)
        str_list_push(files, user);
    free(user);
    char *proj = H.project_dir ? xasprintf("%s/policy.lua", H.project_dir) : NULL;
    if (proj && lh_file_exists(proj))
        str_list_push(files, proj);
    free(proj);
    if (H.extra_policy)
        str_list_push(files, H.extra_policy);
}

/* The refusal markers the layers declared (cordon.hooks.refusal_markers): [reg] -> [reg]. */
static void read_refusal_markers(lua_State *L)
{
    lh_push_module_field(L, "cordon.hooks", "refusal_markers");
    lua_pushvalue(L, -2);
    lua_call(L, 1, 1); /* [reg, markers|nil] */
    str_list_free(&H.marker_list);
    H.markers_known = lua_istable(L, -1);
    for (lua_Integer i = 1; H.markers_known && i <= (lua_Integer)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        if (lua_type(L, -1) == LUA_TSTRING)
            str_list_push(&H.marker_list, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* All start-up Lua work, in one protected function. */
static int startup(lua_State *L)
{
    open_libs(L);

    lh_api_push_host(L);                              /* [host] */
    lh_push_module_field(L, "cordon.sandbox", "api"); /* [host, api_fn] */
    lua_pushglobaltable(L);
    lua_pushvalue(L, -3);
    lua_getglobal(L, "require");                /* [host, api_fn, G, host, require] */
    lua_call(L, 3, 1);                          /* [host, api] */
    H.ref_api = luaL_ref(L, LUA_REGISTRYINDEX); /* [host] */
    lua_pop(L, 1);
    lh_push_module_field(L, "cordon.sandbox", "env");
    H.ref_env_fn = luaL_ref(L, LUA_REGISTRYINDEX);
    lh_push_module_field(L, "cordon.profile", "validate");
    H.ref_validate = luaL_ref(L, LUA_REGISTRYINDEX);

    lh_push_module_field(L, "cordon.hooks", "new_registry");
    lua_call(L, 0, 1); /* [reg] */
    struct str_list files = {0};
    layer_files(L, &files);
    /* Each layer loads in a protected call, so that a failing one cannot jump past the
     * freeing of files; a load error is then raised again (or, for policy check, collected). */
    for (size_t i = 0; i < files.len; i++) {
        lua_pushcfunction(L, add_layer_protected); /* [reg, f] */
        lua_pushvalue(L, -2);
        lua_pushstring(L, files.items[i]);   /* [reg, f, reg, path] */
        if (lua_pcall(L, 2, 0, 0) == LUA_OK) /* [reg] or [reg, msg] */
            continue;
        if (!H.problems) {
            str_list_free(&files);
            return lua_error(L); /* the message is on top */
        }
        const char *msg = lua_tostring(L, -1);
        str_list_push(H.problems, msg ? msg : files.items[i]);
        lua_pop(L, 1);
    }
    str_list_free(&files);

    for (int h = 0; h < HOOK_COUNT; h++) {
        lua_getfield(L, -1, lh_hook_names[h]); /* [reg, layers] */
        lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
        if (n > 0) {
            /* the top layer's own function (not a wrapper of it), for lh_hook_where */
            lh_push_module_field(L, "cordon.hooks", "origin");
            lua_rawgeti(L, -2, n);
            lua_call(L, 1, 1);
            H.ref_top[h] = luaL_ref(L, LUA_REGISTRYINDEX);
            lh_push_module_field(L, "cordon.hooks", "chain");
            lua_pushvalue(L, -2);
            lua_call(L, 1, 1); /* [reg, layers, chain] */
            H.ref_chain[h] = luaL_ref(L, LUA_REGISTRYINDEX);
        }
        lua_pop(L, 1); /* [reg] */
    }
    read_refusal_markers(L);
    H.ref_layers = luaL_ref(L, LUA_REGISTRYINDEX); /* [] */
    return 0;
}

/* ---- state lifetime ---------------------------------------------------------------------- */

static int state_create(char *err, size_t errlen)
{
    H.mem_used = H.mem_limit = 0;
    H.need_rebuild = false;
    H.net_where[0] = '\0';
    H.ref_api = H.ref_env_fn = H.ref_validate = H.ref_net_compile = H.ref_profile = LUA_NOREF;
    H.ref_unchecked = LUA_NOREF;
    H.ref_layers = LUA_NOREF;
    for (int h = 0; h < HOOK_COUNT; h++)
        H.ref_chain[h] = H.ref_top[h] = LUA_NOREF;
    H.L = lua_newstate(lh_alloc, NULL);
    if (!H.L) {
        snprintf(err, errlen, "cannot create the Lua state");
        return -1;
    }
    if (lh_protected_call(startup, NULL, "start-up", err, errlen) != LH_OK) {
        lua_close(H.L);
        H.L = NULL;
        return -1;
    }
    return 0;
}

static void state_destroy(void)
{
    if (H.L)
        lua_close(H.L);
    H.L = NULL;
}

int lh_open(const struct lh_options *opt, char *err, size_t errlen)
{
    lh_close();
    if (!opt->datadir) { /* no default compiled in: layer_dirs_default() finds it */
        snprintf(err, errlen, "no data directory (policies/, profiles/) was given");
        return -1;
    }
    H.datadir = xstrdup(opt->datadir);
    H.user_config_dir = opt->user_config_dir ? xstrdup(opt->user_config_dir) : NULL;
    H.project_dir = opt->project_dir ? xstrdup(opt->project_dir) : NULL;
    H.project_files = opt->project_dir ? opt->project_files : NULL;
    H.extra_policy = opt->extra_policy ? xstrdup(opt->extra_policy) : NULL;
    lh_api_open();
    if (state_create(err, errlen) < 0) {
        lh_close();
        return -1;
    }
    /* Compiled once per open: a state rebuilt later loads the same layers. */
    if (H.markers_known && !(H.markers = marker_set_new(&H.marker_list, err, errlen))) {
        lh_close();
        return -1;
    }
    return 0;
}

const struct marker_set *lh_refusal_markers(void)
{
    return H.markers;
}

void lh_close(void)
{
    lh_forget_resolved();
    state_destroy();
    free(H.datadir);
    free(H.user_config_dir);
    free(H.project_dir);
    free(H.extra_policy);
    free(H.check_profile_dir);
    H.datadir = H.user_config_dir = H.project_dir = H.extra_policy = H.check_profile_dir = NULL;
    H.project_files = NULL;
    lh_api_close();
    str_list_free(&known_chunks);
    marker_set_free(H.markers);
    H.markers = NULL;
    H.markers_known = false;
    str_list_free(&H.marker_list);
}

/* The state is usable: rebuilt if the last call ran out of memory. */
bool lh_state_ready(char *err, size_t errlen)
{
    if (H.L && !H.need_rebuild)
        return true;
    if (!H.datadir) {
        snprintf(err, errlen, "the Lua host is not open");
        return false;
    }
    LOG_D(LH_UNIT, "rebuilding the Lua state");
    state_destroy();
    return state_create(err, errlen) == 0;
}

/* "file:line" where the top layer of a hook is defined, for messages without a position. */
void lh_hook_where(enum lh_hook h, char *buf, size_t n)
{
    lua_Debug ar;
    lua_rawgeti(H.L, LUA_REGISTRYINDEX, H.ref_top[h]);
    if (lua_isfunction(H.L, -1) && lua_getinfo(H.L, ">S", &ar)) {
        snprintf(buf, n, "%s:%d", ar.source[0] == '@' ? ar.source + 1 : ar.short_src,
                 ar.linedefined);
        return;
    }
    lua_pop(H.L, 1);
    snprintf(buf, n, "%s hook", lh_hook_names[h]);
}
