/* lua_host_api.c — the `host` table policies and profiles are given (lua/HOOKS.md "host"):
 * host.profile, exists, is_dir, is_socket, entries, home, workspace, getenv, cordon_exe, and the
 * recorded-case override of exists / is_socket (lh_set_host_override).
 * Uses: lua_host.c's loaders (lh_push_file, lh_load_sandboxed, the profile directories) and
 * the per-call context in the state (H.home, H.workspace); util.c for ~ expansion;
 * profile_cache.c's probes, through which every answer is also noted while a resolution is
 * recorded for the cache of resolved profiles.
 * Must never: give a policy anything but answers about paths and the allowed variables
 * (no writes, no file contents but a profile's own source, no process or network access),
 * or run Lua outside the protected call its caller is in. */
#include "policy/lua_host.h"
#include "policy/lua_host_private.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>
#include <lua.h>

#include "base/util.h"
#include "policy/profile_cache.h"
#include "sandbox/fsview.h"

/* Names a policy may read with host.getenv() (documented in lua/HOOKS.md). */
static const char *const getenv_allowed[] = {"HOME", "USER", "PATH", "LANG", "TERM"};

/* ---- the host API ------------------------------------------------------------------------ */

/* host.profile(name) -> table, path, source: find and run profiles/NAME.lua in its own sandbox. */
/* A project's profile (a trusted .cordon/profiles) may not declare credentials: the key chooses
 * which of the caller's secrets leave the machine and to which hosts, and its `file:` and `cmd:`
 * sources read files and run commands on the host, powers no other key gives a project. They are
 * the user's to declare (their own profiles, --credential). t is at the top of L's stack. */
static void refuse_project_credentials(lua_State *L, const char *path, const char *source,
                                       size_t len)
{
    size_t n = H.project_dir ? strlen(H.project_dir) : 0;
    if (!n || strncmp(path, H.project_dir, n) != 0 || path[n] != '/')
        return;
    int type = lua_getfield(L, -1, "credentials");
    lua_pop(L, 1);
    if (type == LUA_TNIL)
        return;
    int line = 1;
    const char *at = memmem(source, len, "credentials", strlen("credentials"));
    for (const char *c = source; at && c < at; c++)
        line += *c == '\n';
    lua_pushfstring(L,
                    "%s:%d: key 'credentials': a project's profile may not declare credentials "
                    "(declare them in your own profile under ~/.config/cordon/profiles or with "
                    "--credential)",
                    path, line);
    lua_error(L);
}

static int host_profile(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    if (!lh_valid_profile_name(name)) {
        lua_pushfstring(L, "invalid profile name '%s' (must match ^[a-z0-9][a-z0-9_-]*$)", name);
        return lua_error(L);
    }
    char *dirs[LH_PROFILE_DIRS_MAX];
    size_t nd = lh_profile_dirs(dirs);
    long len = -ENOENT;
    for (size_t i = 0; i < nd; i++) {
        if (len == -ENOENT) {
            lua_pushfstring(L, "%s/%s.lua", dirs[i], name); /* [path] */
            len = lh_push_file(L, lua_tostring(L, -1));     /* [path, ud] */
            if (len < 0)
                lua_pop(L, 1);
        }
        free(dirs[i]);
    }
    if (len == -ENOENT) {
        struct str_list names = {0};
        lh_list_profile_names(&names, NULL);
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
    lh_load_sandboxed(L, path, (size_t)len); /* [path, ud, fn] */
    lua_call(L, 0, 1);                       /* [path, ud, t] */
    if (!lua_istable(L, -1)) {
        lua_pushfstring(L, "%s: a profile must return a table, got %s", path, luaL_typename(L, -1));
        return lua_error(L);
    }
    refuse_project_credentials(L, path, lua_touserdata(L, -2), (size_t)len);
    lua_pushvalue(L, -3);                                   /* [path, ud, t, path] */
    lua_pushlstring(L, lua_touserdata(L, -3), (size_t)len); /* [path, ud, t, path, source] */
    return 3;
}

/* Expand ~ and stat; the file type bits, or 0 when the path does not exist. */
static mode_t host_stat(lua_State *L)
{
    const char *p = luaL_checkstring(L, 1);
    char *path = path_expand_home(p, H.home);
    unsigned type = pc_stat_type(path);
    pc_note_stat(path, type);
    free(path);
    return (mode_t)type;
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

/* host.entries(path) -> { names, sorted } | nil: what a directory holds, so that a profile can
 * hide all of it but what it names (coding's ~/.ssh). nil when it is no directory that can be
 * read, or holds more than PC_HOST_ENTRIES_MAX names: a caller then hides it whole. Names only:
 * nothing about the entries themselves. */
static int host_entries(lua_State *L)
{
    const char *p = luaL_checkstring(L, 1);
    char *path = path_expand_home(p, H.home);
    struct str_list names = {0};
    int r = pc_dir_entries(path, PC_HOST_ENTRIES_MAX, &names);
    pc_note_names(PC_ENTRIES, path, r, &names);
    free(path);
    if (r < 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, (int)names.len, 0);
    for (size_t i = 0; i < names.len; i++) {
        lua_pushstring(L, names.items[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    str_list_free(&names);
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

static int host_home(lua_State *L)
{
    pc_note_value(PC_HOME, "", H.home);
    return push_opt_string(L, H.home);
}

static int host_workspace(lua_State *L)
{
    pc_note_value(PC_WORKSPACE, "", H.workspace);
    return push_opt_string(L, H.workspace);
}

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

void lh_api_open(void)
{
    str_list_free(&user_getenv_allowed);
    if (!H.user_config_dir)
        return;
    char *path = xasprintf("%s/getenv-allow", H.user_config_dir);
    pc_note_file(PC_GETENV_ALLOW, path, 0, NULL, 0); /* read and hashed as the replay will */
    FILE *f = fopen(path, "re");
    free(path);
    if (!f)
        return;
    char word[128];
    while (user_getenv_allowed.len < 64 && fscanf(f, "%127s", word) == 1) {
        bool ok = word[0] == '_' || (word[0] >= 'A' && word[0] <= 'Z') ||
                  (word[0] >= 'a' && word[0] <= 'z');
        for (char *c = word; ok && *c; c++)
            ok = *c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                 (*c >= '0' && *c <= '9');
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
    if (allowed) {
        pc_note_value(PC_GETENV, name, getenv(name));
        return push_opt_string(L, getenv(name));
    }
    luaL_where(L, 1); /* where the policy called it: file:line */
    lua_pushfstring(L,
                    "host.getenv: '%s' is not available to policies (allowed: HOME, USER, PATH, "
                    "LANG, TERM, and the names in ~/.config/cordon/getenv-allow)",
                    name);
    lua_concat(L, 2);
    return lua_error(L);
}

static const luaL_Reg host_api[] = {
    {"profile", host_profile},       {"exists", host_exists},
    {"is_dir", host_is_dir},         {"is_socket", host_is_socket},
    {"entries", host_entries},       {"home", host_home},
    {"workspace", host_workspace},   {"getenv", host_getenv},
    {"cordon_exe", host_cordon_exe}, {NULL, NULL},
};

void lh_api_push_host(lua_State *L)
{
    lua_newtable(L);
    luaL_setfuncs(L, host_api, 0);
}

void lh_api_close(void)
{
    str_list_free(&user_getenv_allowed);
}

/* ---- the recorded-case override --------------------------------------------------------------
 * The refusal and escalate hooks (lua_decide.c, lua_explain.c) run through lh_protected_call
 * like every other entry. The host override for recorded cases is installed by
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
    if (!lua_getmetatable(L, -1)) { /* [v, mt] */
        lua_pushnil(L);
        return;
    }
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2); /* [v, mt, t] */
    lua_remove(L, -2); /* [v, t] */
}

/* Wrap host.exists and host.is_socket once per state. [-0, +0]; may raise (memory). */
void lh_api_install_override(lua_State *L)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_api); /* [apiv] */
    push_behind_view(L);                          /* [apiv, api] */
    lua_pushliteral(L, "host");
    lua_rawget(L, -2);   /* [apiv, api, hostv] */
    push_behind_view(L); /* [apiv, api, hostv, host] */
    if (lua_istable(L, -1)) {
        static const struct {
            const char *name;
            lua_CFunction fn;
        } w[] = {{"exists", ov_exists}, {"is_socket", ov_is_socket}};
        for (size_t i = 0; i < ARRAY_LEN(w); i++) {
            lua_pushstring(L, w[i].name);
            lua_rawget(L, -2); /* [..., host, f] */
            if (lua_tocfunction(L, -1) == w[i].fn) {
                lua_pop(L, 1);
                continue;
            }
            lua_pushcclosure(L, w[i].fn, 1); /* [..., host, wrapper] */
            lua_pushstring(L, w[i].name);
            lua_insert(L, -2); /* [..., host, name, wrapper] */
            lua_rawset(L, -3); /* [..., host] */
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
