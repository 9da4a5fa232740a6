/* lua_conv.c — see lua_conv.h. Owns the conversion of a profile key's value by its kind (the
 * key's row in sandbox/profile_keys.c says which kind and which sandbox_config field), and the
 * names of rlimits. Uses lua.h/lauxlib.h, util.h and the table of profile keys.
 * Must never: call into Lua code (only raw table access, so no metamethod runs), keep Lua
 * values, or decide policy (a profile value is taken as given once its type is right). */
#include "policy/lua_conv.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <lauxlib.h>

#include "base/name_glob.h"
#include "base/util.h"
#include "sandbox/profile_keys.h"

/* ---- C -> Lua ---------------------------------------------------------------------------- */

static void push_list(lua_State *L, const struct str_list *l)
{
    lua_createtable(L, (int)l->len, 0); /* [t] */
    for (size_t i = 0; i < l->len; i++) {
        lua_pushstring(L, l->items[i]);         /* [t, s] */
        lua_rawseti(L, -2, (lua_Integer)i + 1); /* [t] */
    }
}

/* The table that holds the last part of the dotted name ("network" for "network.allow") within
 * the table on top, made on the way: [t] -> [t, parent]. Returns that last part. */
static const char *key_parent(lua_State *L, const char *name)
{
    lua_pushvalue(L, -1); /* [t, cur] */
    const char *dot;
    while ((dot = strchr(name, '.'))) {
        lua_pushlstring(L, name, (size_t)(dot - name)); /* [t, cur, part] */
        if (lua_rawget(L, -2) != LUA_TTABLE) {          /* [t, cur, sub?] */
            lua_pop(L, 1);
            lua_newtable(L);                                /* [t, cur, sub] */
            lua_pushlstring(L, name, (size_t)(dot - name)); /* [t, cur, sub, part] */
            lua_pushvalue(L, -2);                           /* [t, cur, sub, part, sub] */
            lua_rawset(L, -4);                              /* [t, cur, sub] */
        }
        lua_remove(L, -2); /* [t, sub] */
        name = dot + 1;
    }
    return name;
}

/* Whether the command line gave the flag of key k (field: its place in struct run_flags). */
static bool flag_given(const struct profile_key *k, const void *field)
{
    if (k->kind == PK_BOOLEAN)
        return *(const enum flag_state *)field != FLAG_UNSET;
    if (pk_kind_is_list(k->kind))
        return ((const struct str_list *)field)->len > 0;
    return *(const char *const *)field != NULL;
}

/* Push the value of key k's flag, as the profile would write it: [-0, +1]. A port or a duration
 * that is a plain number goes as a number, anything else as given, for the profile's validation
 * to name. */
static void push_flag_value(lua_State *L, const struct profile_key *k, const void *field)
{
    if (k->kind == PK_BOOLEAN) {
        lua_pushboolean(L, (*(const enum flag_state *)field == FLAG_TRUE) != k->flag_negates);
    } else if (k->kind == PK_PORTLIST) {
        const struct str_list *l = field;
        lua_createtable(L, (int)l->len, 0); /* [list] */
        for (size_t i = 0; i < l->len; i++) {
            const char *s = l->items[i];
            char *end;
            long v = strtol(s, &end, 10);
            if (*s >= '0' && *s <= '9' && *end == '\0' && strlen(s) <= 6)
                lua_pushinteger(L, v);
            else
                lua_pushstring(L, s);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
    } else if (pk_kind_is_list(k->kind)) {
        push_list(L, field);
    } else if (k->kind == PK_DURATION) {
        const char *s = *(const char *const *)field;
        char *end;
        double v = strtod(s, &end);
        if (*end == '\0' && end != s) /* plain seconds */
            lua_pushnumber(L, v);
        else
            lua_pushstring(L, s); /* "30s", "5m": the profile validates */
    } else {
        lua_pushstring(L, *(const char *const *)field);
    }
}

void lc_push_flags(lua_State *L, const struct run_flags *flags)
{
    lua_newtable(L); /* [t] */
    for (size_t i = 0; i < profile_keys_len; i++) {
        const struct profile_key *k = &profile_keys[i];
        const void *field = (const char *)flags + k->flag_field;
        if (!k->flag || !flag_given(k, field))
            continue;
        const char *last = key_parent(L, k->name); /* [t, parent] */
        push_flag_value(L, k, field);              /* [t, parent, v] */
        lua_setfield(L, -2, last);                 /* [t, parent] */
        lua_pop(L, 1);                             /* [t] */
    }
}

void lc_push_environ(lua_State *L, char *const *environ_in)
{
    lua_newtable(L); /* [t] */
    for (size_t i = 0; environ_in && environ_in[i]; i++) {
        const char *eq = strchr(environ_in[i], '=');
        if (!eq || eq == environ_in[i])
            continue;
        lua_pushlstring(L, environ_in[i], (size_t)(eq - environ_in[i])); /* [t, k] */
        lua_pushstring(L, eq + 1);                                       /* [t, k, v] */
        lua_rawset(L, -3);                                               /* [t] */
    }
}

/* ---- Lua -> C ---------------------------------------------------------------------------- */

/* Raw field of the table at idx onto the stack; returns its type. [-0, +1] */
static int raw_field(lua_State *L, int idx, const char *key)
{
    idx = lua_absindex(L, idx);
    lua_pushstring(L, key);
    return lua_rawget(L, idx);
}

static CORDON_NORETURN void bad(lua_State *L, const char *key, const char *what)
{
    luaL_error(L, "resolved profile: key '%s': expected %s", key, what);
    abort(); /* not reached: luaL_error does not return */
}

/* The value of the dotted key name ("network.loopback") in the table at idx onto the stack: nil
 * when it, or a table on its way, is absent; raises when a table on its way is something else.
 * Returns its type. [-0, +1] */
static int key_value(lua_State *L, int idx, const char *name)
{
    lua_pushvalue(L, idx); /* [t] */
    for (const char *part = name, *dot; (dot = strchr(part, '.')); part = dot + 1) {
        lua_pushlstring(L, part, (size_t)(dot - part)); /* [t, part] */
        int t = lua_rawget(L, -2);                      /* [t, sub] */
        lua_remove(L, -2);                              /* [sub] */
        if (t == LUA_TNIL)
            return LUA_TNIL;
        if (t != LUA_TTABLE) {
            char prefix[128];
            snprintf(prefix, sizeof prefix, "%.*s", (int)(dot - name), name);
            bad(L, prefix, "a table");
        }
        if (!strchr(dot + 1, '.')) {
            int tv = raw_field(L, -1, dot + 1); /* [sub, v] */
            lua_remove(L, -2);                  /* [v] */
            return tv;
        }
    }
    int tv = raw_field(L, -1, name); /* [t, v] */
    lua_remove(L, -2);               /* [v] */
    return tv;
}

/* Check that the value on top is a list of strings (or nil); raises before allocating. */
static void check_list(lua_State *L, const char *path)
{
    if (lua_isnil(L, -1))
        return;
    if (!lua_istable(L, -1))
        bad(L, path, "a list of strings");
    lua_Unsigned n = lua_rawlen(L, -1);
    for (lua_Unsigned i = 1; i <= n; i++) {
        if (lua_rawgeti(L, -1, (lua_Integer)i) != LUA_TSTRING)
            bad(L, path, "a list of strings");
        lua_pop(L, 1);
    }
}

/* The list of strings on top (or nil) appended to out, each item once. */
static void take_list(lua_State *L, const char *path, struct str_list *out)
{
    check_list(L, path);
    if (!lua_istable(L, -1))
        return;
    lua_Unsigned n = lua_rawlen(L, -1);
    for (lua_Unsigned i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i);
        const char *s = lua_tostring(L, -1);
        if (!str_list_contains(out, s))
            str_list_push(out, s);
        lua_pop(L, 1);
    }
}

/* home_tool_dirs: names of folders at the home's top (no "/", not "." or "..", not a
 * dot-entry: those take writes anyway). */
static void check_home_tool_dirs(lua_State *L, const struct sandbox_config *cfg)
{
    for (size_t i = 0; i < cfg->home_tool_dirs.len; i++) {
        const char *s = cfg->home_tool_dirs.items[i];
        if (!s[0] || s[0] == '.' || strchr(s, '/'))
            bad(L, "home_tool_dirs", "a list of folder names of the home's top (no '/' or '.')");
    }
}

/* network.host_ports on top: a list of ports (1-65535), each once, at most
 * SANDBOX_MAX_HOST_PORTS. */
static void take_host_ports(lua_State *L, int t, struct sandbox_config *cfg)
{
    if (t == LUA_TNIL)
        return;
    if (t != LUA_TTABLE)
        bad(L, "network.host_ports", "a list of ports");
    lua_Unsigned n = lua_rawlen(L, -1);
    for (lua_Unsigned i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > 65535)
            bad(L, "network.host_ports", "a list of ports (1-65535)");
        unsigned short port = (unsigned short)lua_tointeger(L, -1);
        lua_pop(L, 1);
        bool seen = false;
        for (size_t k = 0; k < cfg->n_host_ports; k++)
            seen = seen || cfg->host_ports[k] == port;
        if (seen)
            continue;
        if (cfg->n_host_ports >= SANDBOX_MAX_HOST_PORTS)
            bad(L, "network.host_ports", "at most 32 ports");
        cfg->host_ports[cfg->n_host_ports++] = port;
    }
}

static const struct {
    const char *name;
    int resource;
} rlimit_names[] = {
    {"core", RLIMIT_CORE},   {"nofile", RLIMIT_NOFILE},   {"fsize", RLIMIT_FSIZE},
    {"as", RLIMIT_AS},       {"nproc", RLIMIT_NPROC},     {"cpu", RLIMIT_CPU},
    {"stack", RLIMIT_STACK}, {"memlock", RLIMIT_MEMLOCK},
};

static unsigned long long rlimit_value(lua_State *L, int idx, const char *name)
{
    if (lua_type(L, idx) == LUA_TSTRING && strcmp(lua_tostring(L, idx), "unlimited") == 0)
        return RLIM_INFINITY;
    if (!lua_isinteger(L, idx) || lua_tointeger(L, idx) < 0)
        bad(L, name, "an integer >= 0, \"unlimited\" or { soft, hard }");
    return (unsigned long long)lua_tointeger(L, idx);
}

/* rlimits.NAME on top: one more entry of cfg->rlimits, RLIMIT_* by NAME (errors name NAME). */
static void take_rlimit(lua_State *L, int t, const char *key, struct sandbox_config *cfg)
{
    const char *name = strchr(key, '.') + 1;
    size_t i = 0;
    while (i < ARRAY_LEN(rlimit_names) && strcmp(rlimit_names[i].name, name) != 0)
        i++;
    assert(i < ARRAY_LEN(rlimit_names)); /* every rlimits.* row has its RLIMIT_* here */
    if (t == LUA_TNIL)
        return;
    struct sandbox_rlimit r = {.resource = rlimit_names[i].resource};
    if (t == LUA_TTABLE) {
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2); /* [v, soft, hard] */
        r.soft = rlimit_value(L, -2, name);
        r.hard = rlimit_value(L, -1, name);
        lua_pop(L, 2); /* [v] */
    } else {
        r.soft = r.hard = rlimit_value(L, -1, name);
    }
    if (cfg->n_rlimits < SANDBOX_MAX_RLIMITS)
        cfg->rlimits[cfg->n_rlimits++] = r;
}

/* limits.* sizes: bytes as an integer, or "512K" / "512M" / "2G" / "1T" (powers of 1024), 1 byte
 * to 1 PiB, as profile.lua validates them; "unlimited" gives 0 where allowed. */
static unsigned long long size_value(lua_State *L, int idx, const char *path, bool unlimited_ok)
{
    const unsigned long long max = 1ull << 50;
    if (lua_isinteger(L, idx) && lua_tointeger(L, idx) > 0 &&
        (unsigned long long)lua_tointeger(L, idx) <= max)
        return (unsigned long long)lua_tointeger(L, idx);
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tostring(L, idx);
        if (unlimited_ok && strcmp(s, "unlimited") == 0)
            return 0;
        char *end;
        unsigned long long n = s[0] >= '0' && s[0] <= '9' ? strtoull(s, &end, 10) : 0;
        int shift = n == 0         ? -1
                    : *end == '\0' ? 0
                    : *end == 'K'  ? 10
                    : *end == 'M'  ? 20
                    : *end == 'G'  ? 30
                    : *end == 'T'  ? 40
                                   : -1;
        if (shift >= 0 && (shift == 0 || end[1] == '\0') && n <= (max >> shift))
            return n << shift;
    }
    bad(L, path,
        unlimited_ok ? "a size, 1 byte to 1 PiB (bytes, \"512M\", \"2G\"), or \"unlimited\""
                     : "a size, 1 byte to 1 PiB (bytes, \"512M\", \"2G\")");
}

/* grants.sockets on top: { NAME = { from = "...", env = "VAR" } }, as profile.lua validates it;
 * each becomes "NAME\tFROM" (sandbox/grants.c resolves them, the environment hook sets each
 * env). */
static void take_grant_sockets(lua_State *L, int t, struct str_list *out)
{
    if (t != LUA_TTABLE && t != LUA_TNIL)
        bad(L, "sockets", "a table");
    if (t != LUA_TTABLE)
        return;
    lua_pushnil(L);
    while (lua_next(L, -2)) { /* [s, name, entry] */
        if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1))
            bad(L, "grants.sockets", "a table of NAME = { from = \"...\" }");
        const char *name = lua_tostring(L, -2);
        if (raw_field(L, -1, "from") != LUA_TSTRING) /* [s, name, entry, from] */
            bad(L, "grants.sockets", "entries with from = \"...\"");
        str_list_push_owned(out, xasprintf("%s\t%s", name, lua_tostring(L, -1)));
        lua_pop(L, 2); /* [s, name] */
    }
}

/* credentials: { NAME = { hosts = { HOST, ... }, from = "..." } } as "NAME\tFROM\tHOST,HOST"
 * (from defaults to "$NAME"); profile.lua checked the shapes, these checks only keep a bad
 * table out. */
static void take_credentials(lua_State *L, int t, struct str_list *out)
{
    if (t != LUA_TTABLE && t != LUA_TNIL)
        bad(L, "credentials", "a table");
    if (t != LUA_TTABLE)
        return;
    lua_pushnil(L);
    while (lua_next(L, -2)) { /* [c, name, entry] */
        if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1))
            bad(L, "credentials", "a table of NAME = { hosts = { ... }, from = \"...\" }");
        const char *name = lua_tostring(L, -2);
        int ft = raw_field(L, -1, "from"); /* [c, name, entry, from] */
        char *from = ft == LUA_TSTRING ? xstrdup(lua_tostring(L, -1)) : xasprintf("$%s", name);
        lua_pop(L, 1);
        if (raw_field(L, -1, "hosts") != LUA_TTABLE) /* [c, name, entry, hosts] */
            bad(L, "credentials", "entries with hosts = { HOST, ... }");
        char *line = xasprintf("%s\t%s\t", name, from);
        free(from);
        lua_Unsigned n = lua_rawlen(L, -1);
        for (lua_Unsigned i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i);
            if (lua_type(L, -1) != LUA_TSTRING)
                bad(L, "credentials", "hosts as strings");
            char *longer = xasprintf("%s%s%s", line, i > 1 ? "," : "", lua_tostring(L, -1));
            free(line);
            line = longer;
            lua_pop(L, 1);
        }
        str_list_push_owned(out, line);
        lua_pop(L, 2); /* [c, name] */
    }
    str_list_sort(out);
}

static int lc_by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* hidden_except on top: { [DIR] = { PATTERN, ... } } as "DIR\tPATTERN\t...", in DIR order (the
 * profile checked the shapes; these checks only keep a bad table from the wire). */
static void take_hidden_except(lua_State *L, int t, struct str_list *out)
{
    if (t != LUA_TNIL && t != LUA_TTABLE)
        bad(L, "hidden_except", "a table of DIR = { PATTERN, ... }");
    if (t != LUA_TTABLE)
        return;
    struct str_list rules = {0};
    lua_pushnil(L);           /* [m, nil] */
    while (lua_next(L, -2)) { /* [m, dir, pats] */
        if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1))
            bad(L, "hidden_except", "a table of DIR = { PATTERN, ... }");
        char *rule = xstrdup(lua_tostring(L, -2));
        lua_Unsigned n = lua_rawlen(L, -1);
        for (lua_Unsigned i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i); /* [m, dir, pats, pat] */
            const char *p = lua_tostring(L, -1);
            if (!p || !p[0] || strchr(p, '/') || strchr(p, '\t'))
                bad(L, "hidden_except", "patterns of one name (no '/')");
            char *more = xasprintf("%s\t%s", rule, p);
            free(rule);
            rule = more;
            lua_pop(L, 1); /* [m, dir, pats] */
        }
        if (n == 0)
            bad(L, "hidden_except", "at least one pattern per folder");
        str_list_push_owned(&rules, rule);
        lua_pop(L, 1); /* [m, dir] */
    }
    if (rules.len > 1)
        qsort(rules.items, rules.len, sizeof *rules.items, lc_by_string);
    for (size_t i = 0; i < rules.len; i++)
        str_list_push(out, rules.items[i]);
    str_list_free(&rules);
}

/* Store v in a number key's field, of the row's C type. */
static void set_number(const struct profile_key *k, void *field, double v)
{
    switch (k->ctype) {
    case PK_C_DOUBLE:
        *(double *)field = v;
        break;
    case PK_C_UNSIGNED:
        *(unsigned *)field = (unsigned)v;
        break;
    case PK_C_SIZE:
        *(size_t *)field = (size_t)v;
        break;
    case PK_C_ULL:
        *(unsigned long long *)field = (unsigned long long)v;
        break;
    case PK_C_NONE:
        assert(!"a number key without its C type");
        break;
    }
}

/* escalation.permission_timeout on top: a number of seconds or "30s" / "5m" / "1h"; anything
 * else leaves the default (profile.lua refused it already). */
static double duration_value(lua_State *L, int t, double dflt)
{
    if (t == LUA_TNUMBER)
        return lua_tonumber(L, -1);
    if (t != LUA_TSTRING)
        return dflt;
    char *end;
    double v = strtod(lua_tostring(L, -1), &end);
    double unit = *end == 'h' ? 3600 : *end == 'm' ? 60 : 1;
    return v * unit;
}

/* Convert the value of key k (on top, of Lua type t) into its field of cfg, by its kind. A value
 * of the wrong shape raises "resolved profile: key 'NAME': expected ...". */
static void take_key(lua_State *L, int t, const struct profile_key *k, struct sandbox_config *cfg)
{
    void *field = (char *)cfg + k->field;
    switch (k->kind) {
    case PK_BOOLEAN:
        if (t == LUA_TBOOLEAN)
            *(bool *)field = lua_toboolean(L, -1);
        else if (t != LUA_TNIL)
            bad(L, k->name, "a boolean");
        break;
    case PK_STRING:
    case PK_NAME:
        if (t == LUA_TSTRING) {
            free(*(char **)field);
            *(char **)field = xstrdup(lua_tostring(L, -1));
        } else if (t != LUA_TNIL) {
            bad(L, k->name, "a string");
        }
        break;
    case PK_LIST:
        take_list(L, k->name, field);
        break;
    case PK_ABSLIST: {
        struct str_list *l = field;
        take_list(L, k->name, l);
        for (size_t i = 0; i < l->len; i++)
            if (l->items[i][0] != '/')
                bad(L, k->name, "a list of absolute paths");
        break;
    }
    case PK_HOME: /* absent: "readonly", what a profile that does not say gets */
        if (t == LUA_TSTRING && strcmp(lua_tostring(L, -1), "overlay") == 0)
            *(enum sandbox_home *)field = SANDBOX_HOME_OVERLAY;
        else if (t == LUA_TSTRING && strcmp(lua_tostring(L, -1), "tmpfs") == 0)
            *(enum sandbox_home *)field = SANDBOX_HOME_TMPFS;
        else if (t == LUA_TNIL ||
                 (t == LUA_TSTRING && strcmp(lua_tostring(L, -1), "readonly") == 0))
            *(enum sandbox_home *)field = SANDBOX_HOME_READONLY;
        else
            bad(L, k->name, "\"overlay\", \"readonly\" or \"tmpfs\"");
        break;
    case PK_TRANSPARENT: /* false (default), true, or "required" */
        if (t == LUA_TBOOLEAN)
            *(enum net_transparent *)field =
                lua_toboolean(L, -1) ? NET_TRANSPARENT_ON : NET_TRANSPARENT_OFF;
        else if (t == LUA_TSTRING && strcmp(lua_tostring(L, -1), "required") == 0)
            *(enum net_transparent *)field = NET_TRANSPARENT_REQUIRED;
        else if (t != LUA_TNIL)
            bad(L, k->name, "true, false or \"required\"");
        break;
    case PK_EXCEPTMAP:
        take_hidden_except(L, t, field);
        break;
    case PK_GRANTMAP:
        take_grant_sockets(L, t, field);
        break;
    case PK_CREDMAP:
        take_credentials(L, t, field);
        break;
    case PK_PORTLIST:
        take_host_ports(L, t, cfg);
        break;
    case PK_RLIMIT:
        take_rlimit(L, t, k->name, cfg);
        break;
    case PK_NUMBER:
    case PK_INTEGER:
    case PK_DEPTH:
        if (t == LUA_TNUMBER && (k->kind == PK_NUMBER || lua_isinteger(L, -1)) &&
            lua_tonumber(L, -1) >= k->min && lua_tonumber(L, -1) <= k->max)
            set_number(k, field, lua_tonumber(L, -1));
        else if (t != LUA_TNIL)
            bad(L, k->name, k->expect);
        break;
    case PK_DURATION:
        set_number(k, field, duration_value(L, t, k->dflt));
        break;
    case PK_SIZE:
    case PK_SIZE_OR_UNLIMITED:
        if (t != LUA_TNIL)
            *(unsigned long long *)field =
                size_value(L, -1, k->name, k->kind == PK_SIZE_OR_UNLIMITED);
        break;
    case PK_PIDS:
        if (t == LUA_TSTRING && strcmp(lua_tostring(L, -1), "unlimited") == 0)
            *(unsigned long long *)field = 0;
        else if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1)
            *(unsigned long long *)field = (unsigned long long)lua_tointeger(L, -1);
        else if (t != LUA_TNIL)
            bad(L, k->name, "an integer >= 1 or \"unlimited\"");
        break;
    case PK_STRMAP: /* no field: the hooks read it from the profile table */
        break;
    }
}

void lc_read_profile(lua_State *L, int idx, struct sandbox_config *cfg,
                     struct lc_profile_extra *extra)
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx))
        luaL_error(L, "resolved profile: expected a table, got %s", luaL_typename(L, idx));

    /* Every key with a field, by the table of profile keys: first the defaults, then the
     * profile's values over them. */
    for (size_t i = 0; i < profile_keys_len; i++)
        if (profile_keys[i].field != PK_NO_FIELD && profile_keys[i].ctype != PK_C_NONE)
            set_number(&profile_keys[i], (char *)cfg + profile_keys[i].field, profile_keys[i].dflt);
    for (size_t i = 0; i < profile_keys_len; i++) {
        const struct profile_key *k = &profile_keys[i];
        if (k->field == PK_NO_FIELD)
            continue;
        int t = key_value(L, idx, k->name); /* [v] */
        take_key(L, t, k, cfg);
        lua_pop(L, 1);
    }
    check_home_tool_dirs(L, cfg);

    /* The keys the host reads that are no sandbox_config field. */
    int t = key_value(L, idx, "workspace"); /* [v] */
    if (t == LUA_TSTRING)
        extra->workspace = xstrdup(lua_tostring(L, -1));
    else if (t != LUA_TNIL)
        bad(L, "workspace", "a string");
    lua_pop(L, 1);
    t = key_value(L, idx, "allow_docker"); /* [v] */
    if (t == LUA_TBOOLEAN)
        extra->allow_docker = lua_toboolean(L, -1);
    else if (t != LUA_TNIL)
        bad(L, "allow_docker", "a boolean");
    lua_pop(L, 1);
    key_value(L, idx, "env.hide_paths_in"); /* [v] */
    take_list(L, "env.hide_paths_in", &extra->hide_paths_in);
    lua_pop(L, 1);
}

/* ---- network decision -------------------------------------------------------------------- */

static void copy_clean(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++) {
        unsigned char ch = (unsigned char)src[i];
        dst[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    dst[i] = '\0';
}

/* A hook result that must be a table whose keys are among keys[] and whose values are all
 * strings; raises "<hook> result: ..." otherwise. idx absolute. Stack balanced. */
static void check_string_fields(lua_State *L, int idx, const char *hook, const char *shape,
                                const char *const *keys, size_t n_keys)
{
    if (!lua_istable(L, idx))
        luaL_error(L, "%s result: expected a table %s, got %s", hook, shape, luaL_typename(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) { /* [k, v] */
        bool known = false;
        for (size_t i = 0; lua_type(L, -2) == LUA_TSTRING && i < n_keys && !known; i++)
            known = strcmp(lua_tostring(L, -2), keys[i]) == 0;
        if (!known)
            luaL_error(L, "%s result: unknown key '%s'", hook, luaL_tolstring(L, -2, NULL));
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "%s result: '%s' must be a string, got %s", hook, lua_tostring(L, -2),
                       luaL_typename(L, -1));
        lua_pop(L, 1); /* [k] */
    }
}

void lc_read_net_decision(lua_State *L, int idx, struct net_decision *out)
{
    static const char *const keys[] = {"verdict", "rule", "reason", "suggest"};
    idx = lua_absindex(L, idx);
    check_string_fields(L, idx, "network", "{ verdict = \"allow\"|\"deny\"|\"ask\", ... }", keys,
                        ARRAY_LEN(keys));
    raw_field(L, idx, "verdict"); /* [verdict] */
    const char *v = lua_tostring(L, -1);
    bool allow = v && strcmp(v, "allow") == 0, ask = v && strcmp(v, "ask") == 0;
    if (!v || !(allow || ask || strcmp(v, "deny") == 0))
        luaL_error(L, "network result: verdict must be \"allow\", \"deny\" or \"ask\", got %s",
                   v ? v : "nil");
    lua_pop(L, 1);
    struct {
        const char *key;
        char *dst;
        size_t n;
    } fields[] = {{"rule", out->rule, sizeof out->rule},
                  {"reason", out->reason, sizeof out->reason},
                  {"suggest", out->suggest, sizeof out->suggest}};
    for (size_t i = 0; i < ARRAY_LEN(fields); i++) {
        if (raw_field(L, idx, fields[i].key) == LUA_TSTRING)
            copy_clean(fields[i].dst, fields[i].n, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    out->allow = allow;
    out->ask = ask;
}

/* ---- environment ------------------------------------------------------------------------- */

static bool env_name_ok(const char *s, size_t len)
{
    return len > 0 && !memchr(s, '=', len) && strlen(s) == len;
}

void lc_read_env_result(lua_State *L, int idx, char *const *environ_in, struct str_list *out)
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx))
        luaL_error(L, "environment result: expected a table { set = {...}, unset = {...} }, got %s",
                   luaL_typename(L, idx));
    /* First pass: check every type, so the second pass (which allocates) cannot raise. */
    int ts = raw_field(L, idx, "set");   /* [set] */
    int tu = raw_field(L, idx, "unset"); /* [set, unset] */
    if (ts != LUA_TNIL && ts != LUA_TTABLE)
        luaL_error(L, "environment result: set: expected a table");
    if (tu != LUA_TNIL && tu != LUA_TTABLE)
        luaL_error(L, "environment result: unset: expected a list");
    if (ts == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -3)) { /* [set, unset, k, v] */
            size_t kl, vl;
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                luaL_error(L, "environment result: set: expected NAME = \"value\" strings");
            const char *k = lua_tolstring(L, -2, &kl);
            const char *v = lua_tolstring(L, -1, &vl);
            if (!env_name_ok(k, kl) || strlen(v) != vl)
                luaL_error(L, "environment result: set: bad variable '%s'", k);
            lua_pop(L, 1);
        }
    }
    if (tu == LUA_TTABLE) {
        lua_Unsigned n = lua_rawlen(L, -1);
        for (lua_Unsigned i = 1; i <= n; i++) {
            size_t l;
            if (lua_rawgeti(L, -1, (lua_Integer)i) != LUA_TSTRING)
                luaL_error(L, "environment result: unset[%d]: expected a string", (int)i);
            const char *s = lua_tolstring(L, -1, &l);
            if (!env_name_ok(s, l))
                luaL_error(L, "environment result: unset[%d]: bad name or pattern", (int)i);
            lua_pop(L, 1);
        }
    }

    /* Second pass: no Lua errors from here on. */
    struct str_list unset = {0}, set = {0};
    if (tu == LUA_TTABLE) {
        lua_Unsigned n = lua_rawlen(L, -1);
        for (lua_Unsigned i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i);
            str_list_push(&unset, lua_tostring(L, -1));
            lua_pop(L, 1);
        }
    }
    if (ts == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -3)) { /* [set, unset, k, v] */
            str_list_push_owned(&set, xasprintf("%s=%s", lua_tostring(L, -2), lua_tostring(L, -1)));
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 2);
    str_list_sort(&set);

    for (size_t i = 0; environ_in && environ_in[i]; i++) {
        const char *e = environ_in[i];
        const char *eq = strchr(e, '=');
        if (!eq || eq == e)
            continue;
        char *name = xasprintf("%.*s", (int)(eq - e), e);
        bool drop = false;
        for (size_t j = 0; j < unset.len && !drop; j++)
            drop = name_glob_match(unset.items[j], name);
        size_t nl = strlen(name);
        for (size_t j = 0; j < set.len && !drop; j++)
            drop = strncmp(set.items[j], name, nl) == 0 && set.items[j][nl] == '=';
        if (!drop)
            str_list_push(out, e);
        free(name);
    }
    for (size_t j = 0; j < set.len; j++)
        str_list_push(out, set.items[j]);
    str_list_free(&unset);
    str_list_free(&set);
}

/* ---- refusal detection and escalation ------------------------------------------------------ */

/* Copy src into dst (size n) like copy_clean, but never cut a UTF-8 sequence in half (the
 * strings end up in JSON and on terminals). */
static void copy_clean_utf8(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len >= n) {
        len = n - 1;
        while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
            len--; /* src[len] would start the cut: back up to a lead byte */
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)src[i];
        dst[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    dst[len] = '\0';
}

static void push_list_or_empty(lua_State *L, const struct str_list *l)
{
    if (l)
        push_list(L, l);
    else
        lua_newtable(L);
}

/* The proxy's refused destinations: "host:port" (a name the resolver refused: "NAME"), or
 * "host:port\tRULE\tVIA[\tFLAG]" where RULE is the deny rule that refused it (empty when it
 * was the lack of an allow rule), VIA "socks" when a SOCKS client asked (else empty) and FLAG
 * the flag that would allow it, as the proxy's decision named it (else empty). Sets
 * network_denied (the destinations), network_denied_rules (destination -> the deny rule as
 * written), network_denied_via (destination -> "socks") and network_denied_allow (destination
 * -> the flag) on the table at the top. */
static void push_network_denied(lua_State *L, const struct str_list *l)
{
    size_t n = l ? l->len : 0;
    lua_createtable(L, (int)n, 0); /* network_denied */
    lua_createtable(L, 0, 0);      /* network_denied_rules */
    lua_createtable(L, 0, 0);      /* network_denied_via */
    lua_createtable(L, 0, 0);      /* network_denied_allow */
    for (size_t i = 0; i < n; i++) {
        const char *item = l->items[i], *field = strchr(item, '\t');
        size_t len = field ? (size_t)(field - item) : strlen(item);
        lua_pushlstring(L, item, len);
        lua_rawseti(L, -5, (lua_Integer)i + 1);
        /* each later field, non-empty, into its table: rules (-3), via (-2), allow (-1) */
        for (int t = -3; field && t <= -1; t++) {
            const char *text = field + 1, *next = strchr(text, '\t');
            size_t text_len = next ? (size_t)(next - text) : strlen(text);
            if (text_len > 0) {
                lua_pushlstring(L, item, len);
                lua_pushlstring(L, text, text_len);
                lua_rawset(L, t - 2);
            }
            field = next;
        }
    }
    lua_setfield(L, -5, "network_denied_allow");
    lua_setfield(L, -4, "network_denied_via");
    lua_setfield(L, -3, "network_denied_rules");
    lua_setfield(L, -2, "network_denied");
}

void lc_push_command_result(lua_State *L, const struct lh_command_result *in)
{
    lua_createtable(L, 0, 20); /* [t] */
    lua_pushstring(L, in->command ? in->command : "");
    lua_setfield(L, -2, "command");
    lua_pushinteger(L, in->exit_code);
    lua_setfield(L, -2, "exit_code");
    if (in->signal) {
        lua_pushinteger(L, in->signal);
        lua_setfield(L, -2, "signal");
    }
    lua_pushlstring(L, in->stdout_text ? in->stdout_text : "",
                    in->stdout_text ? in->stdout_len : 0);
    lua_setfield(L, -2, "stdout");
    lua_pushlstring(L, in->stderr_text ? in->stderr_text : "",
                    in->stderr_text ? in->stderr_len : 0);
    lua_setfield(L, -2, "stderr");
    lua_pushboolean(L, in->truncated);
    lua_setfield(L, -2, "truncated");
    lua_pushboolean(L, in->merged);
    lua_setfield(L, -2, "merged");
    lua_pushboolean(L, in->candidates);
    lua_setfield(L, -2, "candidates");
    lua_pushstring(L, in->cwd ? in->cwd : "/");
    lua_setfield(L, -2, "cwd");
    push_list_or_empty(L, in->writable);
    lua_setfield(L, -2, "writable");
    push_list_or_empty(L, in->hidden);
    lua_setfield(L, -2, "hidden");
    push_network_denied(L, in->network_denied);
    if (in->workspace) {
        lua_pushstring(L, in->workspace);
        lua_setfield(L, -2, "workspace");
    }
    lua_pushboolean(L, in->workspace_readonly);
    lua_setfield(L, -2, "workspace_readonly");
    if (in->profile) {
        lua_pushstring(L, in->profile);
        lua_setfield(L, -2, "profile");
    }
    push_list_or_empty(L, in->readonly_in_workspace);
    lua_setfield(L, -2, "readonly_in_workspace");
    lua_pushboolean(L, in->block_unix_sockets);
    lua_setfield(L, -2, "block_unix_sockets");
    lua_createtable(L, 0, 2); /* grants = { ssh_agent, gpg_agent } */
    lua_pushboolean(L, in->grant_ssh_agent);
    lua_setfield(L, -2, "ssh_agent");
    lua_pushboolean(L, in->grant_gpg_agent);
    lua_setfield(L, -2, "gpg_agent");
    lua_setfield(L, -2, "grants");
    lua_pushboolean(L, in->root);
    lua_setfield(L, -2, "root");
    lua_createtable(L, in->host_listening ? (int)in->host_listening->len : 0, 0);
    for (size_t i = 0; in->host_listening && i < in->host_listening->len; i++) {
        lua_pushinteger(L, strtol(in->host_listening->items[i], NULL, 10));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "host_listening");
}

void lc_push_refusal(lua_State *L, const struct lh_refusal *r)
{
    lua_createtable(L, 0, 4); /* [t] */
    lua_pushstring(L, r->kind);
    lua_setfield(L, -2, "kind");
    if (r->path[0]) {
        lua_pushstring(L, r->path);
        lua_setfield(L, -2, "path");
    }
    lua_pushstring(L, r->line);
    lua_setfield(L, -2, "line");
    lua_pushstring(L, r->reason);
    lua_setfield(L, -2, "reason");
}

static const char *const refusal_kinds[] = {
    "write",  "hidden",      "protected",        "sudo",  "docker",    "dbus",   "network",
    "ptrace", "unix-socket", "nested-namespace", "grant", "host-port", "system", "git-dir"};

/* Check one refusal table at idx (raises naming the index i). */
static void check_refusal(lua_State *L, int idx, lua_Integer i)
{
    static const char *const keys[] = {"kind", "path", "line", "reason"};
    if (!lua_istable(L, idx))
        luaL_error(L, "refusal result[%d]: expected a table, got %s", (int)i,
                   luaL_typename(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) { /* [k, v] */
        bool known = false;
        for (size_t k = 0; lua_type(L, -2) == LUA_TSTRING && k < ARRAY_LEN(keys) && !known; k++)
            known = strcmp(lua_tostring(L, -2), keys[k]) == 0;
        if (!known)
            luaL_error(L, "refusal result[%d]: unknown key '%s'", (int)i,
                       luaL_tolstring(L, -2, NULL));
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "refusal result[%d]: '%s' must be a string, got %s", (int)i,
                       lua_tostring(L, -2), luaL_typename(L, -1));
        lua_pop(L, 1); /* [k] */
    }
    raw_field(L, idx, "kind");
    const char *kind = lua_tostring(L, -1);
    bool ok = false;
    for (size_t k = 0; kind && k < ARRAY_LEN(refusal_kinds) && !ok; k++)
        ok = strcmp(kind, refusal_kinds[k]) == 0;
    if (!ok)
        luaL_error(
            L,
            "refusal result[%d]: kind must be write, hidden, protected, sudo, "
            "docker, dbus, network, ptrace, unix-socket, nested-namespace, grant, host-port, system or git-dir, got %s",
            (int)i, kind ? kind : "nil");
    lua_pop(L, 1);
    if (raw_field(L, idx, "reason") != LUA_TSTRING)
        luaL_error(L, "refusal result[%d]: 'reason' is required", (int)i);
    if (raw_field(L, idx, "line") != LUA_TSTRING)
        luaL_error(L, "refusal result[%d]: 'line' is required", (int)i);
    lua_pop(L, 2);
}

size_t lc_read_refusals(lua_State *L, int idx, struct lh_refusal *out, size_t max)
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx))
        luaL_error(L,
                   "refusal result: expected a list of refusals { { kind = ..., line = ..., "
                   "reason = ... }, ... } ({} for none), got %s",
                   luaL_typename(L, idx));
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    /* A list only: every key is 1..len. Checked fully before anything is copied. */
    lua_pushnil(L);
    while (lua_next(L, idx)) { /* [k, v] */
        if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > len)
            luaL_error(L, "refusal result: expected a list, found key '%s'",
                       luaL_tolstring(L, -2, NULL));
        lua_pop(L, 1);
    }
    for (lua_Integer i = 1; i <= len; i++) {
        lua_rawgeti(L, idx, i); /* [r] */
        check_refusal(L, lua_gettop(L), i);
        lua_pop(L, 1);
    }
    size_t n = 0;
    for (lua_Integer i = 1; i <= len && n < max; i++, n++) {
        lua_rawgeti(L, idx, i); /* [r] */
        struct {
            const char *key;
            char *dst;
            size_t size;
        } f[] = {{"kind", out[n].kind, sizeof out[n].kind},
                 {"path", out[n].path, sizeof out[n].path},
                 {"line", out[n].line, sizeof out[n].line},
                 {"reason", out[n].reason, sizeof out[n].reason}};
        for (size_t k = 0; k < ARRAY_LEN(f); k++) {
            f[k].dst[0] = '\0';
            if (raw_field(L, -1, f[k].key) == LUA_TSTRING)
                copy_clean_utf8(f[k].dst, f[k].size, lua_tostring(L, -1));
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return n;
}

void lc_read_escalation(lua_State *L, int idx, struct lh_escalation *out)
{
    static const char *const keys[] = {"action", "offer", "reason"};
    idx = lua_absindex(L, idx);
    check_string_fields(L, idx, "escalate", "{ action = \"ask\"|\"deny\", ... }", keys,
                        ARRAY_LEN(keys));
    raw_field(L, idx, "action");
    raw_field(L, idx, "offer"); /* [action, offer] */
    const char *a = lua_tostring(L, -2), *o = lua_tostring(L, -1);
    bool ask = a && strcmp(a, "ask") == 0;
    if (!a || !(ask || strcmp(a, "deny") == 0))
        luaL_error(L, "escalate result: action must be \"ask\" or \"deny\", got %s", a ? a : "nil");
    if (o && strcmp(o, "rerun") != 0 && strcmp(o, "network") != 0)
        luaL_error(L, "escalate result: offer must be \"rerun\" or \"network\", got %s", o);
    if (ask && !o)
        luaL_error(L, "escalate result: action \"ask\" needs an offer (\"rerun\" or \"network\")");
    out->ask = ask;
    copy_clean_utf8(out->offer, sizeof out->offer, ask ? o : "");
    lua_pop(L, 2);
    out->reason[0] = '\0';
    if (raw_field(L, idx, "reason") == LUA_TSTRING)
        copy_clean_utf8(out->reason, sizeof out->reason, lua_tostring(L, -1));
    lua_pop(L, 1);
}

void lc_read_escalation_settings(lua_State *L, int idx, bool *ask_sandbox_off, bool *plan)
{
    *ask_sandbox_off = *plan = false;
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx))
        return;
    if (raw_field(L, idx, "escalation") == LUA_TTABLE) { /* [esc] */
        if (raw_field(L, -1, "ask_sandbox_off") == LUA_TBOOLEAN)
            *ask_sandbox_off = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (raw_field(L, -1, "plan") == LUA_TBOOLEAN)
            *plan = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}
