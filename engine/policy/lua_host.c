/* lua_host.c — the one owner of the lua_State. See lua_host.h.
 * Owns: creating and sandboxing the state (base, table, string, math, utf8 only; text chunks
 * only; require over the embedded lua/ modules), the `host` API, loading policy layers and
 * profile files, and the single protected-call path every Lua entry goes through (instruction
 * budget, memory cap, outcome enum, state rebuild after out-of-memory), and the network
 * decision entry (lh_network_decide).
 * Uses: lua_conv.c for values, lua_embedded.c for lua/, util.c for paths, log.c.
 * Must never: run bytecode, open io/os/debug/package, call Lua outside protected_call(), look
 * hooks up by global name (registry refs only), or let a hook error pass as "allow". */
#include "policy/lua_host.h"
#include "sandbox/fsview.h"

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
#include "policy/lua_conv.h"
#include "policy/lua_embedded.h"
#include "sandbox/sandbox_config.h"
#include "base/util.h"

#define LH_UNIT "lua"
#define LH_STEP_INTERVAL 1000                   /* instructions between count-hook calls */
#define LH_STEP_LIMIT (50000000 / LH_STEP_INTERVAL) /* ~50M instructions per call */
#define LH_MEM_PER_CALL ((size_t)32 << 20)      /* bytes a call may grow the state by */
#define LH_DEFAULT_PROFILE "coding"
#define LH_LOADED_KEY "cordon.loaded"

/* Hooks, in the order of cordon.hooks.names. */
enum lh_hook { HOOK_PROFILE, HOOK_ENVIRONMENT, HOOK_NETWORK, HOOK_REFUSAL, HOOK_ESCALATE, HOOK_COUNT };
static const char *const hook_names[HOOK_COUNT] = {"profile", "environment", "network", "refusal",
                                                   "escalate"};

/* Names a policy may read with host.getenv() (documented in lua/HOOKS.md). */
static const char *const getenv_allowed[] = {"HOME", "USER", "PATH", "LANG", "TERM"};

static struct {
    lua_State *L;
    /* memory accounting (lh_alloc) */
    size_t mem_used, mem_limit;
    bool mem_tripped;
    /* instruction budget (count_hook) */
    long steps;
    bool budget_tripped;
    bool validating;        /* errors now are the result's fault: LH_BAD_RESULT */
    bool need_rebuild;      /* after LUA_ERRMEM: rebuild before reuse */
    /* options, copied */
    char *datadir, *user_config_dir, *project_dir, *extra_policy;
    /* lh_check_all: collect layer load errors instead of failing */
    struct str_list *problems;
    /* per-call context for the host API, borrowed (kept in C, not in Lua) */
    const char *home, *workspace;
    /* registry refs */
    int ref_api, ref_env_fn, ref_validate;
    int ref_net_compile;    /* cordon.allowlist.for_profile, looked up with the first rules */
    int ref_unchecked;      /* a profile resolved without its network rules compiled yet */
    int ref_layers;         /* the hooks registry { hook = { fn, ... } }, for explain */
    int ref_chain[HOOK_COUNT], ref_top[HOOK_COUNT];
    /* the profile the last lh_resolve_sandbox() resolved, for lh_network_decide(): a registry
     * ref while the state lives, and its name and network lists copied to C so that a state
     * rebuilt after LUA_ERRMEM can still decide with the same rules */
    int ref_profile;
    bool have_profile;
    char *net_profile_name;
    struct str_list net_allow, net_deny;
    char net_where[PATH_MAX + 32];  /* "file:line" of the top network hook; "" until looked up */
    /* the refusal layers' markers (markers_known: every such layer declared its own) */
    bool markers_known;
    struct str_list marker_list;
    struct marker_set *markers;
} H = {.ref_api = LUA_NOREF, .ref_profile = LUA_NOREF, .ref_unchecked = LUA_NOREF};

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
static enum lh_outcome protected_call(lua_CFunction fn, void *ctx, const char *where, char *err,
                                      size_t errlen)
{
    lua_State *L = H.L;
    int top = lua_gettop(L);
    lua_pushcfunction(L, msgh);                         /* [h] */
    lua_pushcfunction(L, fn);                           /* [h, fn] */
    lua_pushlightuserdata(L, ctx);                      /* [h, fn, ctx] */
    H.steps = 0;
    H.budget_tripped = H.mem_tripped = H.validating = false;
    H.mem_limit = H.mem_used + LH_MEM_PER_CALL;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, LH_STEP_INTERVAL);
    int st = lua_pcall(L, 1, 0, top + 1);               /* [h] or [h, msg] */
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
static long push_file(lua_State *L, const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EISDIR;
    size_t cap = (size_t)st.st_size;
    char *buf = lua_newuserdatauv(L, cap + 1, 0);       /* [ud] (may raise; no fd open yet) */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        lua_pop(L, 1);
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
    return (long)len;
}

/* Load the text chunk in the userdata on top as path, with a fresh sandbox _ENV:
 * [ud] -> [ud, fn]. Raises "path:line: message" on a syntax error or a binary chunk. */
static void load_sandboxed(lua_State *L, const char *path, size_t len)
{
    if (!str_list_contains(&known_chunks, path) && known_chunks.len < 256)
        str_list_push(&known_chunks, path);
    const char *buf = lua_touserdata(L, -1);
    lua_pushfstring(L, "@%s", path);                    /* [ud, name] */
    int st = luaL_loadbufferx(L, buf, len, lua_tostring(L, -1), "t"); /* [ud, name, fn|msg] */
    lua_remove(L, -2);                                  /* [ud, fn|msg] */
    if (st != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        if (msg && strncmp(msg, path, strlen(path)) != 0)
            lua_pushfstring(L, "%s: %s", path, msg);
        lua_error(L);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_env_fn);    /* [ud, fn, envfn] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_api);       /* [ud, fn, envfn, api] */
    lua_call(L, 1, 1);                                  /* [ud, fn, env] */
    if (!lua_setupvalue(L, -2, 1))                      /* [ud, fn] */
        lua_pop(L, 1);
}

static bool valid_profile_name(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* The directories profiles are looked up in, first match wins: the project's (a trusted
 * .cordon, or the one policy check/test name), the user's, the built-in one. Returns the
 * count; strings are owned by the caller. */
static size_t profile_dirs(char *dirs[3])
{
    size_t n = 0;
    if (H.project_dir)
        dirs[n++] = xasprintf("%s/profiles", H.project_dir);
    if (H.user_config_dir)
        dirs[n++] = xasprintf("%s/profiles", H.user_config_dir);
    dirs[n++] = xasprintf("%s/profiles", H.datadir);
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of every profile file in the lookup directories, sorted, unique. Only for error
 * messages and `policy check`: the run path never scans directories. */
static void list_profile_names(struct str_list *out, struct str_list *bad_files)
{
    char *dirs[3];
    size_t nd = profile_dirs(dirs);
    for (size_t i = 0; i < nd; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (e->d_name[0] == '.' || l < 5 || strcmp(e->d_name + l - 4, ".lua") != 0)
                continue;
            char *name = xasprintf("%.*s", (int)(l - 4), e->d_name);
            if (!valid_profile_name(name)) {
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
    if (out->len)
        qsort(out->items, out->len, sizeof *out->items, cmp_str);
}

/* ---- the host API ------------------------------------------------------------------------ */

/* host.profile(name) -> table, path, source: find and run profiles/NAME.lua in its own sandbox. */
static int host_profile(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    if (!valid_profile_name(name)) {
        lua_pushfstring(L, "invalid profile name '%s' (must match ^[a-z0-9][a-z0-9_-]*$)", name);
        return lua_error(L);
    }
    char *dirs[3];
    size_t nd = profile_dirs(dirs);
    long len = -ENOENT;
    for (size_t i = 0; i < nd; i++) {
        if (len == -ENOENT) {
            lua_pushfstring(L, "%s/%s.lua", dirs[i], name); /* [path] */
            len = push_file(L, lua_tostring(L, -1));        /* [path, ud] */
            if (len < 0)
                lua_pop(L, 1);
        }
        free(dirs[i]);
    }
    if (len == -ENOENT) {
        struct str_list names = {0};
        list_profile_names(&names, NULL);
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (size_t i = 0; i < names.len; i++) {
            if (i)
                luaL_addstring(&b, ", ");
            luaL_addstring(&b, names.items[i]);
        }
        str_list_free(&names);
        luaL_pushresult(&b);
        lua_pushfstring(L, "unknown profile '%s' (known: %s)", name, lua_tostring(L, -1));
        return lua_error(L);
    }
    if (len < 0) {
        lua_pushfstring(L, "%s: %s", lua_tostring(L, -1), strerror((int)-len));
        return lua_error(L);
    }
    const char *path = lua_tostring(L, -2);
    load_sandboxed(L, path, (size_t)len);               /* [path, ud, fn] */
    lua_call(L, 0, 1);                                  /* [path, ud, t] */
    if (!lua_istable(L, -1)) {
        lua_pushfstring(L, "%s: a profile must return a table, got %s", path, luaL_typename(L, -1));
        return lua_error(L);
    }
    lua_pushvalue(L, -3);                               /* [path, ud, t, path] */
    lua_pushlstring(L, lua_touserdata(L, -3), (size_t)len); /* [path, ud, t, path, source] */
    return 3;
}

/* Expand ~ and stat; the file type bits, or 0 when the path does not exist. */
static mode_t host_stat(lua_State *L)
{
    const char *p = luaL_checkstring(L, 1);
    char *path = path_expand_home(p, H.home);
    struct stat st;
    int r = stat(path, &st);
    free(path);
    return r == 0 ? (st.st_mode & S_IFMT) : 0;
}

static int host_exists(lua_State *L)
{
    lua_pushboolean(L, host_stat(L) != 0);
    return 1;
}

static int host_is_dir(lua_State *L)
{
    lua_pushboolean(L, host_stat(L) == S_IFDIR);
    return 1;
}

static int host_is_socket(lua_State *L)
{
    lua_pushboolean(L, host_stat(L) == S_IFSOCK);
    return 1;
}

/* A string that may be absent: [-0, +1]. */
static int push_opt_string(lua_State *L, const char *s)
{
    if (s)
        lua_pushstring(L, s);
    else
        lua_pushnil(L);
    return 1;
}

static int host_home(lua_State *L) { return push_opt_string(L, H.home); }

static int host_workspace(lua_State *L) { return push_opt_string(L, H.workspace); }

/* Where this cordon binary is inside the sandbox (fsview.c binds it there, read-only), so the
 * environment can name `cordon nc` for ssh wherever cordon lives on the host. */
static int host_cordon_exe(lua_State *L)
{
    lua_pushliteral(L, FSVIEW_CORDON_EXE);
    return 1;
}

/* The names the user lets policies read, beyond getenv_allowed: one or more per line in
 * ~/.config/cordon/getenv-allow (the user's own file: a project cannot widen it). */
static struct str_list user_getenv_allowed;

static void load_user_getenv_allowed(void)
{
    str_list_free(&user_getenv_allowed);
    if (!H.user_config_dir)
        return;
    char *path = xasprintf("%s/getenv-allow", H.user_config_dir);
    FILE *f = fopen(path, "re");
    free(path);
    if (!f)
        return;
    char word[128];
    while (user_getenv_allowed.len < 64 && fscanf(f, "%127s", word) == 1) {
        bool ok = word[0] == '_' || (word[0] >= 'A' && word[0] <= 'Z') || (word[0] >= 'a' && word[0] <= 'z');
        for (char *c = word; ok && *c; c++)
            ok = *c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');
        if (ok)
            str_list_push(&user_getenv_allowed, word);
    }
    fclose(f);
}

static int host_getenv(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    bool allowed = str_list_contains(&user_getenv_allowed, name);
    for (size_t i = 0; !allowed && i < ARRAY_LEN(getenv_allowed); i++)
        allowed = strcmp(name, getenv_allowed[i]) == 0;
    if (allowed)
        return push_opt_string(L, getenv(name));
    luaL_where(L, 1); /* where the policy called it: file:line */
    lua_pushfstring(L, "host.getenv: '%s' is not available to policies (allowed: HOME, USER, PATH, "
                       "LANG, TERM, and the names in ~/.config/cordon/getenv-allow)", name);
    lua_concat(L, 2);
    return lua_error(L);
}

static const luaL_Reg host_api[] = {
    {"profile", host_profile}, {"exists", host_exists},       {"is_dir", host_is_dir},
    {"is_socket", host_is_socket}, {"home", host_home},       {"workspace", host_workspace},
    {"getenv", host_getenv},   {"cordon_exe", host_cordon_exe}, {NULL, NULL},
};

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
    LOG_I(LH_UNIT, "%s", lua_tostring(L, -1));
    return 0;
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

/* require(name): only the embedded lua/ modules, each loaded once, as text. */
static int lh_require(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, LH_LOADED_KEY);  /* [name, loaded] */
    if (lua_getfield(L, -1, name) != LUA_TNIL)          /* [name, loaded, mod] */
        return 1;
    lua_pop(L, 1);
    const struct lua_embedded_module *m = lua_embedded_modules;
    while (m->name && strcmp(m->name, name) != 0)
        m++;
    if (!m->name)
        return luaL_error(L, "module '%s' not found (only the embedded cordon.* modules)", name);
    if (luaL_loadbufferx(L, m->source, m->len, m->chunkname, "t") != LUA_OK)
        return lua_error(L);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);                                  /* [name, loaded, mod] */
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, name);
    return 1;
}

static void open_libs(lua_State *L)
{
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},         {LUA_TABLIBNAME, luaopen_table},
        {LUA_STRLIBNAME, luaopen_string},  {LUA_MATHLIBNAME, luaopen_math},
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
    lua_register(L, "load", lh_load);
    lua_register(L, "print", lh_print);
    lua_register(L, "require", lh_require);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LH_LOADED_KEY);
    /* Hide the string metatable: getmetatable("").__index would be the shared string table. */
    lua_pushliteral(L, "");                             /* [s] */
    lua_getmetatable(L, -1);                            /* [s, mt] */
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);
}

/* require(name) then name.field: [-0, +1]. */
static void push_module_field(lua_State *L, const char *mod, const char *field)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, mod);
    lua_call(L, 1, 1);                                  /* [m] */
    lua_getfield(L, -1, field);                         /* [m, f] */
    lua_remove(L, -2);                                  /* [f] */
}

/* Load one policy file and add it as a layer: [reg] -> [reg]. Raises on any problem. */
static void add_layer(lua_State *L, const char *path)
{
    long len = push_file(L, path);                      /* [reg, ud] */
    if (len < 0) {
        lua_pushfstring(L, "%s: %s", path, strerror((int)-len));
        lua_error(L);
    }
    load_sandboxed(L, path, (size_t)len);               /* [reg, ud, fn] */
    lua_call(L, 0, 1);                                  /* [reg, ud, layer] */
    push_module_field(L, "cordon.hooks", "add_layer");  /* [reg, ud, layer, add] */
    lua_pushvalue(L, -4);
    lua_pushvalue(L, -3);
    lua_pushstring(L, path);                            /* [reg, ud, layer, add, reg, layer, path] */
    lua_call(L, 3, 0);                                  /* [reg, ud, layer] */
    lua_pop(L, 2);                                      /* [reg] */
}

static int add_layer_protected(lua_State *L)
{
    const char *path = lua_tostring(L, 2);              /* [reg, path] */
    lua_pushvalue(L, 1);                                /* [reg, path, reg] */
    add_layer(L, path);
    return 0;
}

/* Every policy layer, lowest first: policies/NAME.lua in name order, the user's policy.lua,
 * the project's .cordon/policy.lua (when lh_options named one), then --policy FILE (which
 * must exist: the user named it). */
static void layer_files(lua_State *L, struct str_list *files)
{
    char *dir = xasprintf("%s/policies", H.datadir);
    DIR *d = opendir(dir);
    if (!d) {
        lua_pushfstring(L, "%s: %s", dir, strerror(errno));
        free(dir);
        lua_error(L);
    }
    struct str_list names = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] != '.' && l > 4 && strcmp(e->d_name + l - 4, ".lua") == 0)
            str_list_push(&names, e->d_name);
    }
    closedir(d);
    if (names.len)
        qsort(names.items, names.len, sizeof *names.items, cmp_str);
    for (size_t i = 0; i < names.len; i++)
        str_list_push_owned(files, xasprintf("%s/%s", dir, names.items[i]));
    str_list_free(&names);
    free(dir);
    char *user = H.user_config_dir ? xasprintf("%s/policy.lua", H.user_config_dir) : NULL;
    if (user && access(user, F_OK) == 0)
        str_list_push(files, user);
    free(user);
    char *proj = H.project_dir ? xasprintf("%s/policy.lua", H.project_dir) : NULL;
    if (proj && access(proj, F_OK) == 0)
        str_list_push(files, proj);
    free(proj);
    if (H.extra_policy)
        str_list_push(files, H.extra_policy);
}

/* The refusal markers the layers declared (cordon.hooks.refusal_markers): [reg] -> [reg]. */
static void read_refusal_markers(lua_State *L)
{
    push_module_field(L, "cordon.hooks", "refusal_markers");
    lua_pushvalue(L, -2);
    lua_call(L, 1, 1);                                  /* [reg, markers|nil] */
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

    lua_newtable(L);                                    /* [host] */
    luaL_setfuncs(L, host_api, 0);
    push_module_field(L, "cordon.sandbox", "api");      /* [host, api_fn] */
    lua_pushglobaltable(L);
    lua_pushvalue(L, -3);
    lua_getglobal(L, "require");                        /* [host, api_fn, G, host, require] */
    lua_call(L, 3, 1);                                  /* [host, api] */
    H.ref_api = luaL_ref(L, LUA_REGISTRYINDEX);         /* [host] */
    lua_pop(L, 1);
    push_module_field(L, "cordon.sandbox", "env");
    H.ref_env_fn = luaL_ref(L, LUA_REGISTRYINDEX);
    push_module_field(L, "cordon.profile", "validate");
    H.ref_validate = luaL_ref(L, LUA_REGISTRYINDEX);

    push_module_field(L, "cordon.hooks", "new_registry");
    lua_call(L, 0, 1);                                  /* [reg] */
    struct str_list files = {0};
    layer_files(L, &files);
    /* Each layer loads in a protected call, so that a failing one cannot jump past the
     * freeing of files; a load error is then raised again (or, for policy check, collected). */
    for (size_t i = 0; i < files.len; i++) {
        lua_pushcfunction(L, add_layer_protected);      /* [reg, f] */
        lua_pushvalue(L, -2);
        lua_pushstring(L, files.items[i]);              /* [reg, f, reg, path] */
        if (lua_pcall(L, 2, 0, 0) == LUA_OK)            /* [reg] or [reg, msg] */
            continue;
        if (!H.problems) {
            str_list_free(&files);
            return lua_error(L);                        /* the message is on top */
        }
        const char *msg = lua_tostring(L, -1);
        str_list_push(H.problems, msg ? msg : files.items[i]);
        lua_pop(L, 1);
    }
    str_list_free(&files);

    for (int h = 0; h < HOOK_COUNT; h++) {
        lua_getfield(L, -1, hook_names[h]);             /* [reg, layers] */
        lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
        if (n > 0) {
            lua_rawgeti(L, -1, n);
            H.ref_top[h] = luaL_ref(L, LUA_REGISTRYINDEX);
            push_module_field(L, "cordon.hooks", "chain");
            lua_pushvalue(L, -2);
            lua_call(L, 1, 1);                          /* [reg, layers, chain] */
            H.ref_chain[h] = luaL_ref(L, LUA_REGISTRYINDEX);
        }
        lua_pop(L, 1);                                  /* [reg] */
    }
    read_refusal_markers(L);
    H.ref_layers = luaL_ref(L, LUA_REGISTRYINDEX);      /* [] */
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
    if (protected_call(startup, NULL, "start-up", err, errlen) != LH_OK) {
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
    H.extra_policy = opt->extra_policy ? xstrdup(opt->extra_policy) : NULL;
    load_user_getenv_allowed();
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

static void forget_profile(void)
{
    if (H.L && H.ref_profile != LUA_NOREF)
        luaL_unref(H.L, LUA_REGISTRYINDEX, H.ref_profile);
    H.ref_profile = LUA_NOREF;
    H.have_profile = false;
    free(H.net_profile_name);
    H.net_profile_name = NULL;
    str_list_free(&H.net_allow);
    str_list_free(&H.net_deny);
}

/* The profile lh_resolve_sandbox_config() left for lh_resolve_network(). */
static void forget_unchecked(void)
{
    if (H.L && !H.need_rebuild && H.ref_unchecked != LUA_NOREF)
        luaL_unref(H.L, LUA_REGISTRYINDEX, H.ref_unchecked);
    H.ref_unchecked = LUA_NOREF;
}

void lh_close(void)
{
    forget_unchecked();
    forget_profile();
    state_destroy();
    free(H.datadir);
    free(H.user_config_dir);
    free(H.project_dir);
    free(H.extra_policy);
    H.datadir = H.user_config_dir = H.project_dir = H.extra_policy = NULL;
    str_list_free(&user_getenv_allowed);
    str_list_free(&known_chunks);
    marker_set_free(H.markers);
    H.markers = NULL;
    H.markers_known = false;
    str_list_free(&H.marker_list);
}

/* The state is usable: rebuilt if the last call ran out of memory. */
static bool state_ready(char *err, size_t errlen)
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
static void hook_where(enum lh_hook h, char *buf, size_t n)
{
    lua_Debug ar;
    lua_rawgeti(H.L, LUA_REGISTRYINDEX, H.ref_top[h]);
    if (lua_isfunction(H.L, -1) && lua_getinfo(H.L, ">S", &ar)) {
        snprintf(buf, n, "%s:%d", ar.source[0] == '@' ? ar.source + 1 : ar.short_src, ar.linedefined);
        return;
    }
    lua_pop(H.L, 1);
    snprintf(buf, n, "%s hook", hook_names[h]);
}

/* ---- profile and environment resolution -------------------------------------------------- */

struct resolve_ctx {
    const struct run_flags *flags;
    char *const *environ_in;
    struct sandbox_config *cfg;
    struct lc_profile_extra extra;
    int ref_resolved;
};

/* Call the profile hook function on top with { name, flags }: [f] -> [res]. Raises unless the
 * result is a table (then validation starts: H.validating). */
static void call_profile_fn(lua_State *L, const struct run_flags *flags)
{
    lua_createtable(L, 0, 2);                           /* [f, in] */
    lua_pushstring(L, flags->profile ? flags->profile : LH_DEFAULT_PROFILE);
    lua_setfield(L, -2, "name");
    lc_push_flags(L, flags);
    lua_setfield(L, -2, "flags");
    lua_call(L, 1, 1);                                  /* [res] */
    H.validating = true;
    if (!lua_istable(L, -1))
        luaL_error(L, "profile hook returned %s, expected the resolved profile table", luaL_typename(L, -1));
}

static int call_profile_hook(lua_State *L)
{
    struct resolve_ctx *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_PROFILE]); /* [ctx, f] */
    call_profile_fn(L, c->flags);                       /* [ctx, res] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_validate);
    lua_pushvalue(L, -2);
    lua_call(L, 1, 2);                                  /* [ctx, res, keypath, msg] */
    if (!lua_isnil(L, -2))
        return luaL_error(L, "profile hook result: key '%s': %s", lua_tostring(L, -2),
                          lua_tostring(L, -1));
    lua_pop(L, 2);                                      /* [ctx, res] */
    lc_read_profile(L, -1, c->cfg, &c->extra);
    c->ref_resolved = luaL_ref(L, LUA_REGISTRYINDEX);   /* [ctx] */
    return 0;
}

/* Copy the list profile.network[key] (checked to be strings by the profile validation). */
static void copy_net_list(lua_State *L, int net, const char *key, struct str_list *out)
{
    if (lua_getfield(L, net, key) == LUA_TTABLE) {      /* [..., list] */
        lua_Unsigned n = lua_rawlen(L, -1);
        for (lua_Unsigned i = 1; i <= n; i++) {
            if (lua_rawgeti(L, -1, (lua_Integer)i) == LUA_TSTRING)
                str_list_push(out, lua_tostring(L, -1));
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

/* Compile the resolved profile's network rules (cordon.allowlist.for_profile caches the
 * matcher by the profile table, so the network hook finds it compiled) and keep the profile
 * for lh_network_decide(). Raises the invalid entry's message. */
/* Push cordon.allowlist.for_profile: [-0, +1]. The module (and cordon.ip) loads with the first
 * rules to compile, not at start-up: `cordon run` compiles them while the sandbox is being
 * built (lh_resolve_network). */
static void push_net_compile(lua_State *L)
{
    if (H.ref_net_compile == LUA_NOREF) {
        push_module_field(L, "cordon.allowlist", "for_profile");
        H.ref_net_compile = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_net_compile);
}

static int compile_network(lua_State *L)
{
    struct resolve_ctx *c = lua_touserdata(L, 1);
    push_net_compile(L);                                /* [ctx, f] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref_resolved);   /* [ctx, f, profile] */
    lua_call(L, 1, 0);                                  /* [ctx] */
    forget_profile();
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref_resolved); /* [ctx, profile] */
    if (lua_getfield(L, -1, "name") == LUA_TSTRING)     /* [ctx, profile, name] */
        H.net_profile_name = xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    if (lua_getfield(L, -1, "network") == LUA_TTABLE) { /* [ctx, profile, net] */
        copy_net_list(L, lua_gettop(L), "allow", &H.net_allow);
        copy_net_list(L, lua_gettop(L), "deny", &H.net_deny);
    }
    lua_pop(L, 1);                                      /* [ctx, profile] */
    H.ref_profile = luaL_ref(L, LUA_REGISTRYINDEX);     /* [ctx] */
    H.have_profile = true;
    return 0;
}

static int call_environment_hook(lua_State *L)
{
    struct resolve_ctx *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_ENVIRONMENT]); /* [ctx, f] */
    lua_createtable(L, 0, 2);                           /* [ctx, f, in] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref_resolved);
    lua_setfield(L, -2, "profile");
    lc_push_environ(L, c->environ_in);
    lua_setfield(L, -2, "env");
    lua_call(L, 1, 1);                                  /* [ctx, res] */
    H.validating = true;
    lc_read_env_result(L, -1, c->environ_in, &c->cfg->env);
    return 0;
}

/* Canonical existing path: ~ expanded, made absolute against cwd, symlinks resolved.
 * NULL with errno set when it does not exist. */
static char *canonical(const char *p, const char *cwd, const char *home)
{
    char *e = path_expand_home(p, home);
    char *a = path_absolute(e, cwd);
    char *r = realpath(a, NULL);
    int saved = errno;
    free(e);
    free(a);
    errno = saved;
    return r;
}

/* Turn the profile's paths into what sandbox_config promises. 0, or -1 with err. */
static int resolve_paths(const struct run_flags *flags, const char *cwd, const char *home,
                         struct sandbox_config *cfg, struct lc_profile_extra *extra, char *err,
                         size_t errlen)
{
    const char *pname = cfg->profile ? cfg->profile : "?";
    const char *ws = extra->workspace ? extra->workspace : cwd;
    char *w = canonical(ws, cwd, home);
    struct stat st;
    if (!w || stat(w, &st) < 0 || !S_ISDIR(st.st_mode)) {
        const char *why = w ? strerror(ENOTDIR) : strerror(errno);
        if (flags->workspace)
            snprintf(err, errlen, "--workspace %s: %s", ws, why);
        else if (extra->workspace)
            snprintf(err, errlen, "profile '%s': workspace %s: %s", pname, ws, why);
        else
            snprintf(err, errlen, "current directory %s: %s", ws, why);
        free(w);
        return -1;
    }
    cfg->workspace = w;

    struct str_list writable = {0};
    for (size_t i = 0; i < cfg->writable.len; i++) {
        const char *p = cfg->writable.items[i];
        char *r = canonical(p, cwd, home);
        if (!r) {
            int e = errno;
            if (str_list_contains(&flags->writable, p))
                snprintf(err, errlen, "--allow-write %s: %s", p, strerror(e));
            else
                snprintf(err, errlen, "profile '%s': writable %s: %s", pname, p, strerror(e));
            str_list_free(&writable);
            return -1;
        }
        if (!str_list_contains(&writable, r))
            str_list_push(&writable, r);
        free(r);
    }
    str_list_free(&cfg->writable);
    cfg->writable = writable;

    struct str_list hidden = {0};
    for (size_t i = 0; i < cfg->hidden.len; i++) {
        char *e = path_expand_home(cfg->hidden.items[i], home);
        char *a = path_absolute(e, cwd);
        free(e);
        bool docker = strcmp(a, "/run/docker.sock") == 0 || strcmp(a, "/var/run/docker.sock") == 0;
        if ((extra->allow_docker && docker) || str_list_contains(&hidden, a))
            free(a);
        else
            str_list_push_owned(&hidden, a);
    }
    str_list_free(&cfg->hidden);
    cfg->hidden = hidden;

    for (size_t i = 0; i < cfg->run_binds.len; i++) {
        if (cfg->run_binds.items[i][0] != '/') {
            snprintf(err, errlen, "profile '%s': run_binds %s: not an absolute path", pname,
                     cfg->run_binds.items[i]);
            return -1;
        }
    }
    if (extra->allow_docker && access("/run/docker.sock", F_OK) == 0 &&
        !str_list_contains(&cfg->run_binds, "/run/docker.sock"))
        str_list_push(&cfg->run_binds, "/run/docker.sock");

    char *c = realpath(cwd, NULL);
    bool inside = c && path_is_within(c, cfg->workspace);
    for (size_t i = 0; c && !inside && i < cfg->writable.len; i++)
        inside = path_is_within(c, cfg->writable.items[i]);
    if (inside) {
        cfg->cwd = c;
    } else {
        free(c);
        cfg->cwd = xstrdup(cfg->workspace);
    }
    return 0;
}

/* The profile, paths and environment, and the network rules unless defer_network: then the
 * resolved profile is kept for lh_resolve_network(). */
static enum lh_outcome resolve_sandbox(const struct run_flags *flags, const char *cwd, const char *home,
                                       char *const *environ_in, struct sandbox_config *cfg,
                                       bool defer_network, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    forget_unchecked();
    if (!state_ready(err, errlen))
        return LH_ERROR;
    char cwdbuf[PATH_MAX];
    if (!cwd)
        cwd = getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/";
    if (!home)
        home = getenv("HOME");
    if (!home) {
        snprintf(err, errlen, "no home directory to expand ~ against (HOME is not set)");
        return LH_ERROR;
    }
    for (int h = HOOK_PROFILE; h <= HOOK_ENVIRONMENT; h++) {
        if (H.ref_chain[h] == LUA_NOREF) {
            snprintf(err, errlen, "no policy defines the '%s' hook", hook_names[h]);
            return LH_ERROR;
        }
    }

    struct resolve_ctx c = {.flags = flags, .environ_in = environ_in, .cfg = cfg,
                            .ref_resolved = LUA_NOREF};
    char where[PATH_MAX + 32];
    enum lh_outcome o;
    H.home = home;
    H.workspace = NULL;
    hook_where(HOOK_PROFILE, where, sizeof where);
    o = protected_call(call_profile_hook, &c, where, err, errlen);
    /* An invalid rule's message names the entry; no policy position would help. */
    if (o == LH_OK && !defer_network)
        o = protected_call(compile_network, &c, NULL, err, errlen);
    if (o == LH_OK && resolve_paths(flags, cwd, home, cfg, &c.extra, err, errlen) < 0)
        o = LH_ERROR;
    if (o == LH_OK) {
        H.workspace = cfg->workspace;
        hook_where(HOOK_ENVIRONMENT, where, sizeof where);
        o = protected_call(call_environment_hook, &c, where, err, errlen);
    }
    if (o == LH_OK && defer_network) {
        forget_profile(); /* no rules until they are compiled */
        H.ref_unchecked = c.ref_resolved;
        c.ref_resolved = LUA_NOREF;
    }
    if (H.L && !H.need_rebuild && c.ref_resolved != LUA_NOREF)
        luaL_unref(H.L, LUA_REGISTRYINDEX, c.ref_resolved);
    H.home = H.workspace = NULL;
    free(c.extra.workspace);
    if (o != LH_OK) {
        sandbox_config_free(cfg);
        forget_profile();
    }
    return o;
}

enum lh_outcome lh_resolve_sandbox(const struct run_flags *flags, const char *cwd, const char *home,
                                   char *const *environ_in, struct sandbox_config *cfg,
                                   char *err, size_t errlen)
{
    return resolve_sandbox(flags, cwd, home, environ_in, cfg, false, err, errlen);
}

enum lh_outcome lh_resolve_sandbox_config(const struct run_flags *flags, const char *cwd,
                                          const char *home, char *const *environ_in,
                                          struct sandbox_config *cfg, char *err, size_t errlen)
{
    return resolve_sandbox(flags, cwd, home, environ_in, cfg, true, err, errlen);
}

enum lh_outcome lh_resolve_network(char *err, size_t errlen)
{
    if (H.ref_unchecked == LUA_NOREF || !H.L || H.need_rebuild) {
        snprintf(err, errlen, "no resolved profile to compile the network rules of");
        forget_unchecked();
        return LH_ERROR;
    }
    struct resolve_ctx c = {.ref_resolved = H.ref_unchecked};
    enum lh_outcome o = protected_call(compile_network, &c, NULL, err, errlen);
    forget_unchecked();
    if (o != LH_OK)
        forget_profile();
    return o;
}

/* ---- network decisions ------------------------------------------------------------------- */

struct net_ctx {
    const char *kind, *host, *command;
    unsigned port;
    struct net_decision *out;
};

/* After a rebuild the registry ref is gone: rebuild { name, network = { allow, deny } } from
 * the copies (a layer that looked at other profile keys sees only these) and compile it. */
static int restore_profile(lua_State *L)
{
    lua_createtable(L, 0, 2);                           /* [ctx, p] */
    if (H.net_profile_name) {
        lua_pushstring(L, H.net_profile_name);
        lua_setfield(L, -2, "name");
    }
    lua_createtable(L, 0, 2);                           /* [ctx, p, net] */
    const struct str_list *lists[2] = {&H.net_allow, &H.net_deny};
    static const char *const keys[2] = {"allow", "deny"};
    for (int k = 0; k < 2; k++) {
        lua_createtable(L, (int)lists[k]->len, 0);      /* [ctx, p, net, list] */
        for (size_t i = 0; i < lists[k]->len; i++) {
            lua_pushstring(L, lists[k]->items[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, keys[k]);                   /* [ctx, p, net] */
    }
    lua_setfield(L, -2, "network");                     /* [ctx, p] */
    push_net_compile(L);
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);                                  /* [ctx, p] */
    H.ref_profile = luaL_ref(L, LUA_REGISTRYINDEX);     /* [ctx] */
    return 0;
}

static int call_network_hook(lua_State *L)
{
    struct net_ctx *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_NETWORK]); /* [ctx, f] */
    lua_createtable(L, 0, 5);                           /* [ctx, f, in] */
    lua_pushstring(L, c->kind);
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, c->host);
    lua_setfield(L, -2, "host");
    lua_pushinteger(L, (lua_Integer)c->port);
    lua_setfield(L, -2, "port");
    if (c->command) {
        lua_pushstring(L, c->command);
        lua_setfield(L, -2, "command");
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_profile);
    lua_setfield(L, -2, "profile");
    lua_call(L, 1, 1);                                  /* [ctx, res] */
    H.validating = true;
    lc_read_net_decision(L, -1, c->out);
    return 0;
}

enum lh_outcome lh_network_decide(enum net_kind kind, const char *host, unsigned port,
                                  const char *command, struct net_decision *out)
{
    memset(out, 0, sizeof *out);
    struct net_ctx c = {.host = host, .command = command, .port = port, .out = out};
    switch (kind) {
    case NET_KIND_HTTP: c.kind = "http"; break;
    case NET_KIND_CONNECT: c.kind = "connect"; break;
    case NET_KIND_SOCKS: c.kind = "socks"; break;
    }
    if (!c.kind || !host || port < 1 || port > 65535) {
        snprintf(out->reason, sizeof out->reason, "invalid request (kind %d, port %u)", (int)kind, port);
        return LH_ERROR;
    }
    char err[1024];
    if (!state_ready(err, sizeof err)) {
        snprintf(out->reason, sizeof out->reason, "%.200s", err);
        return LH_ERROR;
    }
    if (H.ref_chain[HOOK_NETWORK] == LUA_NOREF) {
        snprintf(out->reason, sizeof out->reason, "no policy defines the 'network' hook");
        return LH_ERROR;
    }
    if (!H.have_profile) {
        snprintf(out->reason, sizeof out->reason, "no profile has been resolved");
        return LH_ERROR;
    }
    enum lh_outcome o = LH_OK;
    if (H.ref_profile == LUA_NOREF)
        o = protected_call(restore_profile, NULL, "network rules", err, sizeof err);
    if (o == LH_OK) {
        /* where the top network hook is defined, looked up once per state, not per decision */
        if (!H.net_where[0])
            hook_where(HOOK_NETWORK, H.net_where, sizeof H.net_where);
        o = protected_call(call_network_hook, &c, H.net_where, err, sizeof err);
    }
    if (o != LH_OK) {
        memset(out, 0, sizeof *out);
        snprintf(out->reason, sizeof out->reason, "policy error: %.200s", err);
        LOG_W(LH_UNIT, "network hook failed for %s %s:%u: %s", c.kind, host, port, err);
    }
    return o;
}

/* ---- explain (policy explain, policy test, trust) ------------------------------------------
 * A layer's own answer is the chain of layers 1..i (lowest first) called with the input: what
 * the decision would be if no layer above i existed. Values are compared as compact JSON
 * (json_repr) so that two layers' profiles can be diffed key by key, and a recorded expected
 * value (`policy test`) can be compared with the resolved profile's. */

#define LH_EXPLAIN_MAX_LAYERS 32
#define LH_REPR_MAX_DEPTH 16

struct repr_buf {
    char *s;
    size_t len, cap;
};

static void rb_add(struct repr_buf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void rb_str(struct repr_buf *b, const char *p)
{
    rb_add(b, p, strlen(p));
}

static void rb_json_string(struct repr_buf *b, const char *p, size_t n)
{
    rb_add(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            rb_add(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            rb_add(b, esc, 6);
        } else {
            rb_add(b, (const char *)&c, 1);
        }
    }
    rb_add(b, "\"", 1);
}

/* A table whose keys are exactly 1..n (n >= 0): written as a JSON array. */
static bool is_sequence(lua_State *L, int idx)
{
    lua_Unsigned n = lua_rawlen(L, idx), count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {                          /* [..., k, v] */
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 ||
            (lua_Unsigned)lua_tointeger(L, -1) > n) {
            lua_pop(L, 1);
            return false;
        }
        count++;
    }
    return count == n;
}

/* Append the value at idx as compact JSON: objects with sorted string keys (other keys are
 * written with tostring), numbers with integral values as integers. Raises only on memory. */
static void json_repr(lua_State *L, int idx, struct repr_buf *b, int depth)
{
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
    case LUA_TNIL: rb_str(b, "null"); return;
    case LUA_TBOOLEAN: rb_str(b, lua_toboolean(L, idx) ? "true" : "false"); return;
    case LUA_TNUMBER: {
        char num[64];
        double d = lua_tonumber(L, idx);
        if (lua_isinteger(L, idx))
            snprintf(num, sizeof num, "%lld", (long long)lua_tointeger(L, idx));
        else if (d == (double)(long long)d && d < 1e15 && d > -1e15)
            snprintf(num, sizeof num, "%lld", (long long)d);
        else
            snprintf(num, sizeof num, "%.17g", d);
        rb_str(b, num);
        return;
    }
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        rb_json_string(b, s, n);
        return;
    }
    case LUA_TTABLE:
        break;
    default:
        rb_json_string(b, luaL_typename(L, idx), strlen(luaL_typename(L, idx)));
        return;
    }
    if (depth >= LH_REPR_MAX_DEPTH) {
        rb_str(b, "\"...\"");
        return;
    }
    if (is_sequence(L, idx)) {
        lua_Unsigned n = lua_rawlen(L, idx);
        rb_str(b, "[");
        for (lua_Unsigned i = 1; i <= n; i++) {
            if (i > 1)
                rb_str(b, ",");
            lua_rawgeti(L, idx, (lua_Integer)i);
            json_repr(L, -1, b, depth + 1);
            lua_pop(L, 1);
        }
        rb_str(b, "]");
        return;
    }
    struct str_list keys = {0};
    lua_pushnil(L);
    while (lua_next(L, idx)) {                          /* [..., k, v] */
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        str_list_push(&keys, luaL_tolstring(L, -1, NULL)); /* [..., k, k, s] */
        lua_pop(L, 2);
    }
    if (keys.len)
        qsort(keys.items, keys.len, sizeof *keys.items, cmp_str);
    rb_str(b, "{");
    for (size_t i = 0; i < keys.len; i++) {
        if (i)
            rb_str(b, ",");
        rb_json_string(b, keys.items[i], strlen(keys.items[i]));
        rb_str(b, ":");
        lua_getfield(L, idx, keys.items[i]);
        json_repr(L, -1, b, depth + 1);
        lua_pop(L, 1);
    }
    rb_str(b, "}");
    str_list_free(&keys);
}

/* Flatten the table at idx into "key.path=json" items: a non-empty table that is not a
 * sequence is walked into, anything else is a leaf. */
static void flatten(lua_State *L, int idx, const char *prefix, struct str_list *out, int depth)
{
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {                          /* [..., k, v] */
        lua_pushvalue(L, -2);
        char *path = xasprintf("%s%s%s", prefix, *prefix ? "." : "", luaL_tolstring(L, -1, NULL));
        lua_pop(L, 2);                                  /* [..., k, v] */
        if (lua_istable(L, -1) && depth < LH_REPR_MAX_DEPTH && !is_sequence(L, lua_gettop(L))) {
            flatten(L, -1, path, out, depth + 1);
        } else {
            struct repr_buf b = {0};
            json_repr(L, -1, &b, depth);
            str_list_push_owned(out, xasprintf("%s=%s", path, b.s));
            free(b.s);
        }
        free(path);
        lua_pop(L, 1);                                  /* [..., k] */
    }
}

/* The layers of one hook: count and "file:line" of each. */
struct layer_info {
    enum lh_hook hook;
    int n;
    char where[LH_EXPLAIN_MAX_LAYERS][PATH_MAX + 32];
};

static int read_layer_info(lua_State *L)
{
    struct layer_info *li = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_layers);    /* [ctx, reg] */
    lua_getfield(L, -1, hook_names[li->hook]);          /* [ctx, reg, layers] */
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    li->n = n > LH_EXPLAIN_MAX_LAYERS ? LH_EXPLAIN_MAX_LAYERS : (int)n;
    for (int i = 0; i < li->n; i++) {
        lua_Debug ar;
        lua_rawgeti(L, -1, i + 1);                      /* [ctx, reg, layers, fn] */
        if (lua_getinfo(L, ">S", &ar))
            snprintf(li->where[i], sizeof li->where[i], "%s:%d",
                     ar.source[0] == '@' ? ar.source + 1 : ar.short_src, ar.linedefined);
    }
    return 0;
}

/* [...] -> [..., chain of layers 1..i of hook h] */
static void push_truncated_chain(lua_State *L, enum lh_hook h, int i)
{
    push_module_field(L, "cordon.hooks", "chain");      /* [chainf] */
    lua_createtable(L, i, 0);                           /* [chainf, sub] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_layers);    /* [chainf, sub, reg] */
    lua_getfield(L, -1, hook_names[h]);                 /* [chainf, sub, reg, layers] */
    for (int k = 1; k <= i; k++) {
        lua_rawgeti(L, -1, k);
        lua_rawseti(L, -4, k);
    }
    lua_pop(L, 2);                                      /* [chainf, sub] */
    lua_call(L, 1, 1);                                  /* [chain] */
}

struct explain_net_ctx {
    struct net_ctx net;
    int layer;
};

static int call_network_layer(lua_State *L)
{
    struct explain_net_ctx *c = lua_touserdata(L, 1);
    if (H.ref_profile == LUA_NOREF)
        restore_profile(L);
    push_truncated_chain(L, HOOK_NETWORK, c->layer);    /* [ctx, f] */
    lua_createtable(L, 0, 5);                           /* [ctx, f, in] */
    lua_pushstring(L, c->net.kind);
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, c->net.host);
    lua_setfield(L, -2, "host");
    lua_pushinteger(L, (lua_Integer)c->net.port);
    lua_setfield(L, -2, "port");
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_profile);
    lua_setfield(L, -2, "profile");
    lua_call(L, 1, 1);                                  /* [ctx, res] */
    H.validating = true;
    lc_read_net_decision(L, -1, c->net.out);
    return 0;
}

static const char *outcome_name(enum lh_outcome o)
{
    switch (o) {
    case LH_OK: return "ok";
    case LH_ERROR: return "error";
    case LH_TIMEOUT: return "instruction budget exhausted";
    case LH_NOMEM: return "memory cap exceeded";
    case LH_BAD_RESULT: return "bad result";
    }
    return "?";
}

/* "file" of a "file:line" (for the decided-by line). */
static int where_file_len(const char *w)
{
    const char *c = strrchr(w, ':');
    return c ? (int)(c - w) : (int)strlen(w);
}

enum lh_outcome lh_explain_network(enum net_kind kind, const char *host, unsigned port,
                                   FILE *out, bool *allow)
{
    static const char *const kinds[] = {"http", "connect", "socks"};
    char err[1024];
    *allow = false;
    if (!state_ready(err, sizeof err) || !H.have_profile) {
        fprintf(out, "cannot explain: %s\n", H.have_profile ? err : "no profile resolved");
        return LH_ERROR;
    }
    struct layer_info li = {.hook = HOOK_NETWORK};
    if (protected_call(read_layer_info, &li, "layers", err, sizeof err) != LH_OK || li.n == 0) {
        fprintf(out, "no layer defines the 'network' hook: deny\n");
        return LH_ERROR;
    }
    struct net_decision d[LH_EXPLAIN_MAX_LAYERS];
    enum lh_outcome o[LH_EXPLAIN_MAX_LAYERS] = {LH_OK};
    for (int i = 0; i < li.n; i++) {
        memset(&d[i], 0, sizeof d[i]);
        struct explain_net_ctx c = {.net = {.kind = kinds[kind], .host = host, .port = port,
                                            .out = &d[i]},
                                    .layer = i + 1};
        o[i] = protected_call(call_network_layer, &c, li.where[i], err, sizeof err);
        if (o[i] == LH_OK) {
            const char *v = d[i].allow ? "allow" : d[i].ask ? "ask" : "deny";
            fprintf(out, "%d. %s  %s", i + 1, li.where[i], v);
            if (d[i].rule[0])
                fprintf(out, "  rule: %s", d[i].rule);
            if (d[i].reason[0])
                fprintf(out, "  reason: %s", d[i].reason);
            fputc('\n', out);
        } else {
            memset(&d[i], 0, sizeof d[i]);
            fprintf(out, "%d. %s  deny  policy error (%s): %s\n", i + 1, li.where[i],
                    outcome_name(o[i]), err);
        }
        if (H.need_rebuild && !state_ready(err, sizeof err)) {
            li.n = i + 1;
            break;
        }
    }
    int top = li.n - 1, k = top;
    while (k > 0 && o[k - 1] == o[top] && d[k - 1].allow == d[top].allow &&
           d[k - 1].ask == d[top].ask && strcmp(d[k - 1].rule, d[top].rule) == 0)
        k--;
    const char *verdict = o[top] != LH_OK ? "deny" : d[top].allow ? "allow" : d[top].ask ? "ask" : "deny";
    fprintf(out, "decision: %s\ndecided by: %.*s (layer %d)\n", verdict,
            where_file_len(li.where[k]), li.where[k], k + 1);
    *allow = o[top] == LH_OK && d[top].allow;
    return o[top];
}

struct explain_profile_ctx {
    const struct run_flags *flags;
    int layer;
    struct str_list flat;
};

static int call_profile_layer(lua_State *L)
{
    struct explain_profile_ctx *c = lua_touserdata(L, 1);
    push_truncated_chain(L, HOOK_PROFILE, c->layer);    /* [ctx, f] */
    call_profile_fn(L, c->flags);                       /* [ctx, res] */
    flatten(L, -1, "", &c->flat, 0);
    if (c->flat.len)
        qsort(c->flat.items, c->flat.len, sizeof *c->flat.items, cmp_str);
    return 0;
}

/* Keys (the part before '=') whose item differs between two sorted flat lists. */
static void diff_keys(const struct str_list *a, const struct str_list *b, struct str_list *out)
{
    size_t i = 0, j = 0;
    while (i < a->len || j < b->len) {
        const char *x = i < a->len ? a->items[i] : NULL, *y = j < b->len ? b->items[j] : NULL;
        size_t xl = x ? strcspn(x, "=") : 0, yl = y ? strcspn(y, "=") : 0;
        int c = !x ? 1 : !y ? -1 : strncmp(x, y, xl < yl ? xl + 1 : yl + 1);
        if (c == 0) {
            if (strcmp(x, y) != 0)
                str_list_push_owned(out, xasprintf("%.*s", (int)xl, x));
            i++, j++;
        } else if (c < 0) {
            str_list_push_owned(out, xasprintf("%.*s", (int)xl, x));
            i++;
        } else {
            str_list_push_owned(out, xasprintf("%.*s", (int)yl, y));
            j++;
        }
    }
}

enum lh_outcome lh_explain_profile(const struct run_flags *flags, FILE *out)
{
    char err[1024];
    if (!state_ready(err, sizeof err)) {
        fprintf(out, "cannot explain: %s\n", err);
        return LH_ERROR;
    }
    struct layer_info li = {.hook = HOOK_PROFILE};
    if (protected_call(read_layer_info, &li, "layers", err, sizeof err) != LH_OK || li.n == 0) {
        fprintf(out, "no layer defines the 'profile' hook\n");
        return LH_ERROR;
    }
    struct str_list prev = {0};
    enum lh_outcome result = LH_OK;
    int decided = 1;
    fprintf(out, "profile %s\n", flags->profile ? flags->profile : LH_DEFAULT_PROFILE);
    for (int i = 0; i < li.n; i++) {
        struct explain_profile_ctx c = {.flags = flags, .layer = i + 1};
        enum lh_outcome o = protected_call(call_profile_layer, &c, li.where[i], err, sizeof err);
        if (o != LH_OK) {
            fprintf(out, "%d. %s  policy error (%s): %s\n", i + 1, li.where[i], outcome_name(o), err);
            str_list_free(&c.flat);
            if (result == LH_OK)
                result = o;
            decided = i + 1;
            if (H.need_rebuild && !state_ready(err, sizeof err))
                break;
            continue;
        }
        struct str_list changed = {0};
        diff_keys(&prev, &c.flat, &changed);
        fprintf(out, "%d. %s  %s", i + 1, li.where[i], i == 0 ? "sets:" : "changed:");
        for (size_t k = 0; k < changed.len; k++)
            fprintf(out, "%s %s", k ? "," : "", changed.items[k]);
        if (!changed.len)
            fputs(" nothing", out);
        fputc('\n', out);
        if (changed.len || i == 0)
            decided = i + 1;
        str_list_free(&changed);
        str_list_free(&prev);
        prev = c.flat;
    }
    str_list_free(&prev);
    fprintf(out, "decided by: %.*s (layer %d: the last layer that changed the profile)\n",
            where_file_len(li.where[decided - 1]), li.where[decided - 1], decided);
    return result;
}

struct value_ctx {
    const char *keypath;
    struct repr_buf b;
};

static int read_profile_value(lua_State *L)
{
    struct value_ctx *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_profile);   /* [ctx, v] */
    const char *p = c->keypath;
    while (*p) {
        size_t n = strcspn(p, ".");
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            lua_pushnil(L);
            break;
        }
        lua_pushlstring(L, p, n);                       /* [ctx, t, k] */
        lua_rawget(L, -2);                              /* [ctx, t, v] */
        lua_remove(L, -2);                              /* [ctx, v] */
        p += n;
        if (*p == '.')
            p++;
    }
    json_repr(L, -1, &c->b, 0);
    return 0;
}

bool lh_profile_value(const char *keypath, char *out, size_t outlen)
{
    char err[256];
    if (!H.L || H.need_rebuild || H.ref_profile == LUA_NOREF)
        return false;
    struct value_ctx c = {.keypath = keypath};
    bool ok = protected_call(read_profile_value, &c, "profile value", err, sizeof err) == LH_OK &&
              c.b.s && c.b.len < outlen;
    if (ok)
        memcpy(out, c.b.s, c.b.len + 1);
    free(c.b.s);
    return ok;
}

struct layer_hooks_ctx {
    const char *path;
    char *out;
    size_t outlen;
};

static int read_layer_hooks(lua_State *L)
{
    struct layer_hooks_ctx *c = lua_touserdata(L, 1);
    push_module_field(L, "cordon.hooks", "new_registry");
    lua_call(L, 0, 1);                                  /* [ctx, reg] */
    add_layer(L, c->path);                              /* [ctx, reg] */
    size_t used = 0;
    c->out[0] = '\0';
    for (int h = 0; h < HOOK_COUNT; h++) {
        lua_getfield(L, -1, hook_names[h]);             /* [ctx, reg, list] */
        if (lua_rawlen(L, -1) > 0 && used < c->outlen) {
            int w = snprintf(c->out + used, c->outlen - used, "%s%s", used ? ", " : "", hook_names[h]);
            used += w > 0 ? (size_t)w : 0;
        }
        lua_pop(L, 1);
    }
    return 0;
}

int lh_layer_hooks(const char *path, char *out, size_t outlen)
{
    char err[1024];
    if (!state_ready(err, sizeof err)) {
        snprintf(out, outlen, "%s", err);
        return -1;
    }
    struct layer_hooks_ctx c = {.path = path, .out = out, .outlen = outlen};
    if (protected_call(read_layer_hooks, &c, path, err, sizeof err) != LH_OK) {
        snprintf(out, outlen, "%s", err);
        return -1;
    }
    return 0;
}

/* ---- policy check ------------------------------------------------------------------------ */

/* The file a profile name resolves to, searched as lh_resolve_sandbox does: the project's,
 * the user's, then the built-in one. NULL when none exists. */
static char *profile_file(const char *name)
{
    const char *dirs[3] = {H.project_dir, H.user_config_dir, H.datadir};
    for (int i = 0; i < 3; i++) {
        if (!dirs[i])
            continue;
        char *path = xasprintf("%s/profiles/%s.lua", dirs[i], name);
        if (access(path, F_OK) == 0)
            return path;
        free(path);
    }
    return NULL;
}

/* One problem of `policy check` for profile name: a message without a position (an invalid
 * network rule, a missing path) gets the profile's file and, when the quoted entry is found
 * there, its line. */
static void print_profile_problem(FILE *out, const char *name, const char *err)
{
    char *path = strstr(err, ".lua:") ? NULL : profile_file(name);
    if (!path) {
        fprintf(out, "%s\n", err);
        return;
    }
    int line = 0;
    const char *q = strchr(err, '\'');
    const char *q2 = q ? strchr(q + 1, '\'') : NULL;
    FILE *f = q2 ? fopen(path, "re") : NULL;
    if (f) {
        char *entry = strndup(q + 1, (size_t)(q2 - q - 1));
        char *dq = xasprintf("\"%s\"", entry), *sq = xasprintf("'%s'", entry);
        char buf[4096];
        for (int n = 1; fgets(buf, sizeof buf, f); n++) {
            if (strstr(buf, dq) || strstr(buf, sq)) {
                line = n;
                break;
            }
        }
        fclose(f);
        free(entry);
        free(dq);
        free(sq);
    }
    if (line)
        fprintf(out, "%s:%d: %s\n", path, line, err);
    else
        fprintf(out, "%s: profile '%s': %s\n", path, name, err);
    free(path);
}

int lh_check_all(const struct lh_options *opt, const char *dir, FILE *out)
{
    int problems = 0;
    char err[1024];
    struct str_list layer_problems = {0}, names = {0}, bad = {0};
    char cwdbuf[PATH_MAX];
    const char *cwd = dir ? dir : (getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/");
    extern char **environ;

    /* DIR names the project: its .cordon is checked whether trusted or not (a lint the user
     * asks for, like `policy test`); without DIR the caller's options decide. */
    struct lh_options copt = *opt;
    char *projdir = dir ? xasprintf("%s/.cordon", dir) : NULL;
    if (projdir)
        copt.project_dir = projdir;
    H.problems = &layer_problems;
    int r = lh_open(&copt, err, sizeof err);
    free(projdir);
    H.problems = NULL;
    for (size_t i = 0; i < layer_problems.len; i++, problems++)
        fprintf(out, "%s\n", layer_problems.items[i]);
    if (r < 0) {
        fprintf(out, "%s\n", err);
        problems++;
        goto out;
    }
    list_profile_names(&names, &bad);
    for (size_t i = 0; i < bad.len; i++, problems++)
        fprintf(out, "%s: invalid profile name (must match ^[a-z0-9][a-z0-9_-]*$)\n", bad.items[i]);
    for (size_t i = 0; i < names.len; i++) {
        struct run_flags flags = {.profile = names.items[i], .unrestricted_network = FLAG_UNSET,
                                  .allow_loopback = FLAG_UNSET, .allow_docker = FLAG_UNSET,
                                  .json = FLAG_UNSET};
        struct sandbox_config cfg;
        enum lh_outcome o = lh_resolve_sandbox(&flags, cwd, NULL, environ, &cfg, err, sizeof err);
        if (o == LH_OK) {
            sandbox_config_free(&cfg);
        } else {
            print_profile_problem(out, names.items[i], err);
            problems++;
        }
    }
out:
    lh_close();
    str_list_free(&layer_problems);
    str_list_free(&names);
    str_list_free(&bad);
    return problems;
}

/* ---- refusal detection and escalation ------------------------------------------------------
 * lh_detect_refusals / lh_escalate run the `refusal` and `escalate` hooks through
 * protected_call like every other entry. The host override for recorded cases is installed by
 * wrapping the raw host table's `exists` and `is_socket` (reached through the read-only views'
 * metatables, which C can read even though Lua cannot): the wrappers answer from the override
 * lists while one is set and call the real function otherwise. They are (re)installed at each
 * call, so a state rebuilt after out-of-memory gets them too. */

static struct {
    bool active;
    struct str_list exists, sockets;
} OV;

static bool ov_listed(const struct str_list *l, const char *p)
{
    for (size_t i = 0; i < l->len; i++)
        if (strcmp(l->items[i], p) == 0)
            return true;
    return false;
}

/* A listed path, or a directory above one (its parents exist too). */
static bool ov_exists_path(const char *p)
{
    const struct str_list *lists[2] = {&OV.exists, &OV.sockets};
    size_t pl = strlen(p);
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < lists[k]->len; i++) {
            const char *e = lists[k]->items[i];
            if (strcmp(e, p) == 0 || (strcmp(p, "/") == 0 && e[0] == '/') ||
                (strncmp(e, p, pl) == 0 && e[pl] == '/'))
                return true;
        }
    }
    return false;
}

/* Wrapper for host.exists / host.is_socket; upvalue 1 is the real function. */
static int ov_host_check(lua_State *L, bool socket)
{
    if (!OV.active) {
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_insert(L, 1);
        lua_call(L, lua_gettop(L) - 1, 1);
        return 1;
    }
    const char *p = luaL_checkstring(L, 1);
    char *e = path_expand_home(p, getenv("HOME"));
    lua_pushboolean(L, socket ? ov_listed(&OV.sockets, e) : ov_exists_path(e));
    free(e);
    return 1;
}

static int ov_exists(lua_State *L)
{
    return ov_host_check(L, false);
}

static int ov_is_socket(lua_State *L)
{
    return ov_host_check(L, true);
}

/* The table behind a read-only view (cordon.sandbox.readonly): [v] -> [v, t]. */
static void push_behind_view(lua_State *L)
{
    if (!lua_getmetatable(L, -1)) {                     /* [v, mt] */
        lua_pushnil(L);
        return;
    }
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2);                                  /* [v, mt, t] */
    lua_remove(L, -2);                                  /* [v, t] */
}

/* Wrap host.exists and host.is_socket once per state. [-0, +0]; may raise (memory). */
static void ov_install(lua_State *L)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_api);       /* [apiv] */
    push_behind_view(L);                                /* [apiv, api] */
    lua_pushliteral(L, "host");
    lua_rawget(L, -2);                                  /* [apiv, api, hostv] */
    push_behind_view(L);                                /* [apiv, api, hostv, host] */
    if (lua_istable(L, -1)) {
        static const struct {
            const char *name;
            lua_CFunction fn;
        } w[] = {{"exists", ov_exists}, {"is_socket", ov_is_socket}};
        for (size_t i = 0; i < ARRAY_LEN(w); i++) {
            lua_pushstring(L, w[i].name);
            lua_rawget(L, -2);                          /* [..., host, f] */
            if (lua_tocfunction(L, -1) == w[i].fn) {
                lua_pop(L, 1);
                continue;
            }
            lua_pushcclosure(L, w[i].fn, 1);            /* [..., host, wrapper] */
            lua_pushstring(L, w[i].name);
            lua_insert(L, -2);                          /* [..., host, name, wrapper] */
            lua_rawset(L, -3);                          /* [..., host] */
        }
    }
    lua_pop(L, 4);
}

void lh_set_host_override(const struct str_list *exists, const struct str_list *sockets)
{
    lh_clear_host_override();
    for (size_t i = 0; exists && i < exists->len; i++)
        str_list_push(&OV.exists, exists->items[i]);
    for (size_t i = 0; sockets && i < sockets->len; i++)
        str_list_push(&OV.sockets, sockets->items[i]);
    OV.active = true;
}

void lh_clear_host_override(void)
{
    OV.active = false;
    str_list_free(&OV.exists);
    str_list_free(&OV.sockets);
}

struct detect_ctx {
    const struct lh_command_result *in;
    struct lh_refusal *out;
    size_t max, n;
};

static int call_refusal_hook(lua_State *L)
{
    struct detect_ctx *c = lua_touserdata(L, 1);
    ov_install(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_REFUSAL]); /* [ctx, f] */
    lc_push_command_result(L, c->in);                   /* [ctx, f, in] */
    lua_call(L, 1, 1);                                  /* [ctx, res] */
    H.validating = true;
    c->n = lc_read_refusals(L, -1, c->out, c->max);
    return 0;
}

enum lh_outcome lh_detect_refusals(const struct lh_command_result *in, struct lh_refusal *out,
                                   size_t max, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    if (errlen)
        err[0] = '\0';
    if (!state_ready(err, errlen))
        return LH_ERROR;
    if (H.ref_chain[HOOK_REFUSAL] == LUA_NOREF)
        return LH_OK; /* nobody asked for detection: nothing to report */
    struct detect_ctx c = {.in = in, .out = out, .max = max};
    char where[PATH_MAX + 32];
    hook_where(HOOK_REFUSAL, where, sizeof where);
    /* A failure is the caller's to report (once): err says where. */
    enum lh_outcome o = protected_call(call_refusal_hook, &c, where, err, errlen);
    if (o == LH_OK)
        *n = c.n;
    return o;
}

/* ---- explain a refusal decision (cordon policy explain --input) ----------------------------
 * As lh_explain_network: layer i's answer is the chain of layers 1..i called with the result. */

#define LH_EXPLAIN_MAX_REFUSALS 32

struct explain_refusal_ctx {
    const struct lh_command_result *in;
    int layer;
    struct lh_refusal *out;
    size_t n;
};

static int call_refusal_layer(lua_State *L)
{
    struct explain_refusal_ctx *c = lua_touserdata(L, 1);
    ov_install(L);
    push_truncated_chain(L, HOOK_REFUSAL, c->layer);    /* [ctx, f] */
    lc_push_command_result(L, c->in);                   /* [ctx, f, in] */
    lua_call(L, 1, 1);                                  /* [ctx, res] */
    H.validating = true;
    c->n = lc_read_refusals(L, -1, c->out, LH_EXPLAIN_MAX_REFUSALS);
    return 0;
}

/* "write /etc/x, hidden /root" or "no refusal". */
static void print_refusal_list(FILE *out, const struct lh_refusal *r, size_t n)
{
    if (n == 0)
        fputs("no refusal", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s%s%s", i ? ", " : "", r[i].kind, r[i].path[0] ? " " : "", r[i].path);
}

static bool same_refusals(const struct lh_refusal *a, size_t na, const struct lh_refusal *b,
                          size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i].kind, b[i].kind) || strcmp(a[i].path, b[i].path))
            return false;
    return true;
}

enum lh_outcome lh_explain_refusals(const struct lh_command_result *in, FILE *out, size_t *n)
{
    char err[1024];
    *n = 0;
    if (!state_ready(err, sizeof err)) {
        fprintf(out, "cannot explain: %s\n", err);
        return LH_ERROR;
    }
    struct layer_info li = {.hook = HOOK_REFUSAL};
    if (protected_call(read_layer_info, &li, "layers", err, sizeof err) != LH_OK || li.n == 0) {
        fprintf(out, "no layer defines the 'refusal' hook: no refusal\n");
        return LH_OK;
    }
    struct lh_refusal *r = xcalloc((size_t)li.n * LH_EXPLAIN_MAX_REFUSALS, sizeof *r);
    size_t cnt[LH_EXPLAIN_MAX_LAYERS] = {0};
    enum lh_outcome o[LH_EXPLAIN_MAX_LAYERS] = {LH_OK};
    for (int i = 0; i < li.n; i++) {
        struct explain_refusal_ctx c = {.in = in, .layer = i + 1,
                                        .out = r + (size_t)i * LH_EXPLAIN_MAX_REFUSALS};
        o[i] = protected_call(call_refusal_layer, &c, li.where[i], err, sizeof err);
        fprintf(out, "%d. %s  ", i + 1, li.where[i]);
        if (o[i] == LH_OK) {
            cnt[i] = c.n;
            print_refusal_list(out, c.out, c.n);
            fputc('\n', out);
        } else {
            /* as lh_detect_refusals: a failed detector reports no refusal */
            fprintf(out, "no refusal  policy error (%s): %s\n", outcome_name(o[i]), err);
        }
        if (H.need_rebuild && !state_ready(err, sizeof err)) {
            li.n = i + 1;
            break;
        }
    }
    int top = li.n - 1, k = top;
    const struct lh_refusal *rt = r + (size_t)top * LH_EXPLAIN_MAX_REFUSALS;
    while (k > 0 && o[k - 1] == o[top] &&
           same_refusals(r + (size_t)(k - 1) * LH_EXPLAIN_MAX_REFUSALS, cnt[k - 1], rt, cnt[top]))
        k--;
    fputs("refusals: ", out);
    print_refusal_list(out, rt, cnt[top]);
    fprintf(out, "\ndecided by: %.*s (layer %d)\n", where_file_len(li.where[k]), li.where[k],
            k + 1);
    *n = cnt[top];
    free(r);
    return o[top];
}

struct escalate_ctx {
    const struct lh_refusal *r;
    const char *command;
    bool ask_sandbox_off, plan, background, interactive;
    struct lh_escalation *out;
};

static int call_escalate_hook(lua_State *L)
{
    struct escalate_ctx *c = lua_touserdata(L, 1);
    ov_install(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_ESCALATE]); /* [ctx, f] */
    lua_createtable(L, 0, 6);                           /* [ctx, f, in] */
    lc_push_refusal(L, c->r);
    lua_setfield(L, -2, "refusal");
    lua_pushstring(L, c->command ? c->command : "");
    lua_setfield(L, -2, "command");
    static const char *const names[] = {"ask_sandbox_off", "plan", "background", "interactive"};
    const bool vals[] = {c->ask_sandbox_off, c->plan, c->background, c->interactive};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        lua_pushboolean(L, vals[i]);
        lua_setfield(L, -2, names[i]);
    }
    lua_call(L, 1, 1);                                  /* [ctx, res] */
    H.validating = true;
    lc_read_escalation(L, -1, c->out);
    return 0;
}

enum lh_outcome lh_escalate(const struct lh_refusal *r, const char *command, bool ask_sandbox_off,
                            bool plan, bool background, bool interactive,
                            struct lh_escalation *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (errlen)
        err[0] = '\0';
    enum lh_outcome o = LH_ERROR;
    if (!state_ready(err, errlen)) {
        /* err says why */
    } else if (H.ref_chain[HOOK_ESCALATE] == LUA_NOREF) {
        snprintf(err, errlen, "no policy defines the 'escalate' hook");
    } else {
        struct escalate_ctx c = {.r = r, .command = command, .ask_sandbox_off = ask_sandbox_off,
                                 .plan = plan, .background = background,
                                 .interactive = interactive, .out = out};
        char where[PATH_MAX + 32];
        hook_where(HOOK_ESCALATE, where, sizeof where);
        o = protected_call(call_escalate_hook, &c, where, err, errlen);
    }
    if (o != LH_OK) {
        memset(out, 0, sizeof *out);
        snprintf(out->reason, sizeof out->reason, "policy error: %.480s", err);
        /* reported once, by the caller (err says where) */
    }
    return o;
}

struct esc_settings_ctx {
    bool ask_sandbox_off, plan;
};

static int read_escalation_settings(lua_State *L)
{
    struct esc_settings_ctx *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_profile);   /* [ctx, profile] */
    lc_read_escalation_settings(L, -1, &c->ask_sandbox_off, &c->plan);
    return 0;
}

void lh_profile_escalation(bool *ask_sandbox_off, bool *plan)
{
    struct esc_settings_ctx c = {false, false};
    char err[256];
    if (H.L && !H.need_rebuild && H.ref_profile != LUA_NOREF &&
        protected_call(read_escalation_settings, &c, "escalation settings", err, sizeof err) != LH_OK)
        c.ask_sandbox_off = c.plan = false;
    *ask_sandbox_off = c.ask_sandbox_off;
    *plan = c.plan;
}
