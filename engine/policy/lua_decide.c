/* lua_decide.c — the decisions the policy layers make: the profile (the `profile` and
 * `environment` hooks, then the profile's paths and network rules), each new network
 * destination (`network`), refusal detection (`refusal`) and escalation (`escalate`); and
 * the resolved profile they share, kept in the state (and its network lists copied to C so a
 * state rebuilt after out-of-memory decides with the same rules); and `cordon run`'s way
 * through the cache of resolved profiles (lh_resolve_sandbox_config_cached: a hit rebuilds the
 * profile in a small state and runs the same C reads and checks on it).
 * Uses: lua_host.c's protected call and state (lua_host_private.h), lua_host_api.c's
 * recorded-case override, lua_conv.c for values, sandbox_config.c for the profile's paths,
 * profile_cache.c for the key, the transcript and the entries.
 * Must never: call Lua outside lh_protected_call(), let any outcome but LH_OK allow a
 * connection or ask for an escalation (fail closed), serve a cache entry any of whose checks
 * failed, or print (callers report errors; a hit logs the print() lines the miss logged). */
#include "policy/lua_host.h"
#include "policy/lua_host_private.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "base/log.h"
#include "base/markers.h"
#include "base/util.h"
#include "policy/lua_conv.h"
#include "policy/profile_cache.h"
#include "sandbox/sandbox_config.h"

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

void lh_forget_resolved(void)
{
    forget_unchecked();
    forget_profile();
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
void lh_call_profile_fn(lua_State *L, const struct run_flags *flags)
{
    lua_createtable(L, 0, 2); /* [f, in] */
    lua_pushstring(L, flags->profile ? flags->profile : LH_DEFAULT_PROFILE);
    lua_setfield(L, -2, "name");
    lc_push_flags(L, flags);
    lua_setfield(L, -2, "flags");
    lua_call(L, 1, 1); /* [res] */
    H.validating = true;
    if (!lua_istable(L, -1))
        luaL_error(L, "profile hook returned %s, expected the resolved profile table",
                   luaL_typename(L, -1));
}

static int call_profile_hook(lua_State *L)
{
    struct resolve_ctx *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_PROFILE]); /* [ctx, f] */
    lh_call_profile_fn(L, c->flags);                              /* [ctx, res] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_validate);
    lua_pushvalue(L, -2);
    lua_call(L, 1, 2); /* [ctx, res, keypath, msg] */
    if (!lua_isnil(L, -2))
        return luaL_error(L, "profile hook result: key '%s': %s", lua_tostring(L, -2),
                          lua_tostring(L, -1));
    lua_pop(L, 2); /* [ctx, res] */
    lc_read_profile(L, -1, c->cfg, &c->extra);
    c->ref_resolved = luaL_ref(L, LUA_REGISTRYINDEX); /* [ctx] */
    return 0;
}

/* Copy the list profile.network[key] (checked to be strings by the profile validation). */
static void copy_net_list(lua_State *L, int net, const char *key, struct str_list *out)
{
    if (lua_getfield(L, net, key) == LUA_TTABLE) { /* [..., list] */
        lua_Unsigned n = lua_rawlen(L, -1);
        for (lua_Unsigned i = 1; i <= n; i++) {
            if (lua_rawgeti(L, -1, (lua_Integer)i) == LUA_TSTRING)
                str_list_push(out, lua_tostring(L, -1));
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

/* Push cordon.allowlist.for_profile: [-0, +1]. The module (and cordon.ip) loads with the first
 * rules to compile, not at start-up: `cordon run` compiles them while the sandbox is being
 * built (lh_resolve_network). */
static void push_net_compile(lua_State *L)
{
    if (H.ref_net_compile == LUA_NOREF) {
        lh_push_module_field(L, "cordon.allowlist", "for_profile");
        H.ref_net_compile = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_net_compile);
}

/* Compile the resolved profile's network rules (cordon.allowlist.for_profile caches the
 * matcher by the profile table, so the network hook finds it compiled) and keep the profile
 * for lh_network_decide(). Raises the invalid entry's message. */
static int compile_network(lua_State *L)
{
    struct resolve_ctx *c = lua_touserdata(L, 1);
    push_net_compile(L);                                /* [ctx, f] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref_resolved); /* [ctx, f, profile] */
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
    lua_pop(L, 1);                                  /* [ctx, profile] */
    H.ref_profile = luaL_ref(L, LUA_REGISTRYINDEX); /* [ctx] */
    H.have_profile = true;
    return 0;
}

static int call_environment_hook(lua_State *L)
{
    struct resolve_ctx *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_ENVIRONMENT]); /* [ctx, f] */
    lua_createtable(L, 0, 2);                                         /* [ctx, f, in] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref_resolved);
    lua_setfield(L, -2, "profile");
    lc_push_environ(L, c->environ_in);
    lua_setfield(L, -2, "env");
    lua_call(L, 1, 1); /* [ctx, res] */
    H.validating = true;
    lc_read_env_result(L, -1, c->environ_in, &c->cfg->env);
    return 0;
}

/* env.hide_paths_in: the caller's variables that name credential files (one path, or a list
 * separated by ':', as KUBECONFIG is) add those paths to hidden, before the paths are resolved
 * (so ~ and relative paths are made absolute like every hidden entry). The caller's
 * environment, not cordon's own: a session's commands get the environment of its start. Only
 * C sees the values here, so the profile hook and host.getenv() need not. */
static void hide_named_paths(struct sandbox_config *cfg, const struct str_list *names,
                             char *const *environ_in)
{
    for (size_t i = 0; environ_in && i < names->len; i++) {
        size_t n = strlen(names->items[i]);
        for (char *const *e = environ_in; *e; e++) {
            if (strncmp(*e, names->items[i], n) != 0 || (*e)[n] != '=')
                continue;
            char *copy = xstrdup(*e + n + 1), *save = NULL;
            for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
                if (!str_list_contains(&cfg->hidden, p))
                    str_list_push(&cfg->hidden, p);
            free(copy);
        }
    }
}

/* ---- the cache of resolved profiles (profile_cache.h) -------------------------------------- */

/* What a resolution through the cache leaves for lh_resolve_network(): after a hit, the layer
 * options to open the state with and the profile table to compile the rules of; after a miss
 * that can be cached, the entry to write once the rules compiled. */
static struct {
    struct pc_buf table; /* the resolved profile as dumped (a miss while recording; a hit) */
    bool open_pending;   /* a hit: the state is opened by lh_resolve_network() */
    char *datadir, *user_config_dir, *project_dir, *extra_policy;
    const struct trust_set *project_files;
    char *store_path; /* a miss: where the entry goes */
    struct pc_buf entry;
} cache;

static void cache_forget(void)
{
    pc_buf_free(&cache.table);
    pc_buf_free(&cache.entry);
    free(cache.datadir);
    free(cache.user_config_dir);
    free(cache.project_dir);
    free(cache.extra_policy);
    free(cache.store_path);
    memset(&cache, 0, sizeof cache);
}

struct dump_ctx {
    int ref;
    struct pc_buf *out;
    int rc;
};

static int dump_protected(lua_State *L)
{
    struct dump_ctx *d = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, d->ref);
    d->rc = pc_table_dump(L, -1, d->out);
    return 0;
}

/* The resolved table as pure data into out, or the resolution marked uncacheable. */
static void dump_resolved(int ref, struct pc_buf *out)
{
    struct dump_ctx d = {ref, out, -1};
    char err[256];
    out->len = 0;
    if (lh_protected_call(dump_protected, &d, "profile cache", err, sizeof err) != LH_OK ||
        d.rc < 0)
        pc_uncacheable("the resolved profile is not plain data");
}

/* The profile, paths and environment, and the network rules unless defer_network: then the
 * resolved profile is kept for lh_resolve_network(). */
static enum lh_outcome resolve_sandbox(const struct run_flags *flags, const char *cwd,
                                       const char *home, char *const *environ_in,
                                       struct sandbox_config *cfg, bool defer_network, char *err,
                                       size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    forget_unchecked();
    if (!lh_state_ready(err, errlen))
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
            snprintf(err, errlen, "no policy defines the '%s' hook", lh_hook_names[h]);
            return LH_ERROR;
        }
    }

    struct resolve_ctx c = {
        .flags = flags, .environ_in = environ_in, .cfg = cfg, .ref_resolved = LUA_NOREF};
    char where[PATH_MAX + 32];
    enum lh_outcome o;
    H.home = home;
    H.workspace = NULL;
    lh_hook_where(HOOK_PROFILE, where, sizeof where);
    o = lh_protected_call(call_profile_hook, &c, where, err, errlen);
    if (o == LH_OK && pc_recording())
        dump_resolved(c.ref_resolved, &cache.table);
    /* An invalid rule's message names the entry; no policy position would help. */
    if (o == LH_OK && !defer_network)
        o = lh_protected_call(compile_network, &c, NULL, err, errlen);
    if (o == LH_OK)
        hide_named_paths(cfg, &c.extra.hide_paths_in, environ_in);
    if (o == LH_OK && sandbox_config_resolve_paths(cfg, flags, cwd, home, c.extra.workspace,
                                                   c.extra.allow_docker, err, errlen) < 0)
        o = LH_ERROR;
    if (o == LH_OK) {
        H.workspace = cfg->workspace;
        lh_hook_where(HOOK_ENVIRONMENT, where, sizeof where);
        o = lh_protected_call(call_environment_hook, &c, where, err, errlen);
    }
    if (o == LH_OK && pc_recording()) {
        /* The environment hook sees the resolved table: one it changed is not what a hit
         * would rebuild for the network rules. */
        struct pc_buf after = {0};
        dump_resolved(c.ref_resolved, &after);
        if (after.len != cache.table.len || memcmp(after.data, cache.table.data, after.len))
            pc_uncacheable("the environment hook changed the profile");
        pc_buf_free(&after);
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
    str_list_free(&c.extra.hide_paths_in);
    if (o != LH_OK) {
        sandbox_config_free(cfg);
        forget_profile();
    }
    return o;
}

enum lh_outcome lh_resolve_sandbox(const struct run_flags *flags, const char *cwd, const char *home,
                                   char *const *environ_in, struct sandbox_config *cfg, char *err,
                                   size_t errlen)
{
    return resolve_sandbox(flags, cwd, home, environ_in, cfg, false, err, errlen);
}

enum lh_outcome lh_resolve_sandbox_config(const struct run_flags *flags, const char *cwd,
                                          const char *home, char *const *environ_in,
                                          struct sandbox_config *cfg, char *err, size_t errlen)
{
    return resolve_sandbox(flags, cwd, home, environ_in, cfg, true, err, errlen);
}

struct hit_ctx {
    const struct pc_entry *e;
    struct sandbox_config *cfg;
    struct lc_profile_extra extra;
    int rc;
};

/* In the small state of a hit: the table rebuilt, then read by the code a miss reads it with. */
static int hit_read(lua_State *L)
{
    struct hit_ctx *h = lua_touserdata(L, 1);
    if (pc_table_push(L, h->e->table, h->e->table_len) < 0)
        return 0;
    lc_read_profile(L, -1, h->cfg, &h->extra);
    h->rc = 0;
    return 0;
}

/* Serve the entry at path when its transcript replays exactly and the live C checks pass on
 * its profile (the paths, the workspace host.workspace answered). 0 with cfg filled, or -1
 * with cfg empty: a miss, silently. */
static int serve(const char *path, const uint8_t key[PC_KEY_LEN], const struct lh_options *opt,
                 const struct run_flags *flags, const char *cwd, const char *home,
                 char *const *environ_in, struct sandbox_config *cfg)
{
    struct pc_entry e;
    struct hit_ctx h = {.cfg = cfg, .rc = -1};
    struct marker_set *markers = NULL;
    char err[1024];
    int rc = -1;
    memset(cfg, 0, sizeof *cfg);
    if (pc_entry_load(path, key, &e) < 0)
        return -1;
    h.e = &e;
    if (pc_replay(&e, opt, home) < 0)
        goto out;
    lua_State *L = luaL_newstate(); /* no layers: only the table and lc_read_profile */
    if (!L)
        goto out;
    lua_pushcfunction(L, hit_read);
    lua_pushlightuserdata(L, &h);
    int st = lua_pcall(L, 1, 0, 0);
    lua_close(L);
    if (st != LUA_OK || h.rc < 0)
        goto out;
    hide_named_paths(cfg, &h.extra.hide_paths_in, environ_in);
    if (sandbox_config_resolve_paths(cfg, flags, cwd, home, h.extra.workspace, h.extra.allow_docker,
                                     err, sizeof err) < 0)
        goto out;
    if (e.workspace_seen && strcmp(e.workspace_seen, cfg->workspace) != 0)
        goto out;
    if (e.markers_known && !(markers = marker_set_new(&e.markers, err, sizeof err)))
        goto out;
    for (size_t i = 0; i < e.env.len; i++)
        str_list_push(&cfg->env, e.env.items[i]);
    /* A hit: the state stays closed until lh_resolve_network(); the refusal markers the layers
     * declared are known now, as after lh_open(). */
    lh_close();
    H.markers = markers;
    H.markers_known = e.markers_known;
    H.marker_list = e.markers;
    e.markers = (struct str_list){0};
    cache.open_pending = true;
    cache.datadir = xstrdup(opt->datadir);
    cache.user_config_dir = opt->user_config_dir ? xstrdup(opt->user_config_dir) : NULL;
    cache.project_dir = opt->project_dir ? xstrdup(opt->project_dir) : NULL;
    cache.project_files = opt->project_files;
    cache.extra_policy = opt->extra_policy ? xstrdup(opt->extra_policy) : NULL;
    cache.table.len = 0;
    pc_buf_put(&cache.table, e.table, e.table_len);
    for (size_t i = 0; i < e.prints.len; i++)
        lh_log_print(e.prints.items[i]);
    rc = 0;
out:
    free(h.extra.workspace);
    str_list_free(&h.extra.hide_paths_in);
    if (rc < 0)
        sandbox_config_free(cfg);
    pc_entry_free(&e);
    return rc;
}

enum lh_outcome lh_resolve_sandbox_config_cached(const struct lh_options *opt,
                                                 const struct run_flags *flags, const char *cwd,
                                                 const char *home, char *const *environ_in,
                                                 struct sandbox_config *cfg, char *err,
                                                 size_t errlen)
{
    cache_forget();
    char cwdbuf[PATH_MAX];
    if (!cwd)
        cwd = getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/";
    if (!home)
        home = getenv("HOME");
    uint8_t key[PC_KEY_LEN];
    char *path =
        home && pc_key(flags, cwd, home, environ_in, opt, key) == 0 ? pc_entry_path(key) : NULL;
    if (path && serve(path, key, opt, flags, cwd, home, environ_in, cfg) == 0) {
        free(path);
        return LH_OK;
    }
    if (path)
        pc_record_begin(opt);
    enum lh_outcome o = LH_ERROR;
    if (lh_open(opt, err, errlen) == 0)
        o = resolve_sandbox(flags, cwd, home, environ_in, cfg, true, err, errlen);
    pc_record_end();
    if (o == LH_OK && path && cache.table.len &&
        pc_entry_build(key, &cache.table, &cfg->env, H.markers_known, &H.marker_list,
                       &cache.entry)) {
        cache.store_path = path; /* written once the rules compiled (lh_resolve_network) */
        path = NULL;
    }
    pc_buf_free(&cache.table);
    free(path);
    return o;
}

bool lh_network_rules_cached(void)
{
    return cache.open_pending;
}

static int push_cached_table(lua_State *L)
{
    if (pc_table_push(L, cache.table.data, cache.table.len) < 0)
        return luaL_error(L, "the cached profile cannot be rebuilt");
    H.ref_unchecked = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

/* After a hit: open the state as the miss would have (its print() lines were shown already),
 * keeping the refusal markers the hit compiled (the run's captures hold them), and make the
 * cached table the profile whose rules are compiled. */
static enum lh_outcome open_after_hit(char *err, size_t errlen)
{
    struct lh_options opt = {.datadir = cache.datadir,
                             .user_config_dir = cache.user_config_dir,
                             .project_dir = cache.project_dir,
                             .project_files = cache.project_files,
                             .extra_policy = cache.extra_policy};
    struct marker_set *markers = H.markers;
    struct str_list marker_list = H.marker_list;
    bool known = H.markers_known;
    H.markers = NULL;
    H.marker_list = (struct str_list){0};
    H.print_muted = true;
    int r = lh_open(&opt, err, errlen);
    H.print_muted = false;
    marker_set_free(H.markers);
    str_list_free(&H.marker_list);
    H.markers = markers;
    H.marker_list = marker_list;
    H.markers_known = known;
    if (r < 0)
        return LH_ERROR;
    return lh_protected_call(push_cached_table, NULL, "profile cache", err, errlen);
}

enum lh_outcome lh_resolve_network(char *err, size_t errlen)
{
    if (cache.open_pending) {
        cache.open_pending = false;
        enum lh_outcome o = open_after_hit(err, errlen);
        cache_forget();
        if (o != LH_OK)
            return o;
    }
    if (H.ref_unchecked == LUA_NOREF || !H.L || H.need_rebuild) {
        snprintf(err, errlen, "no resolved profile to compile the network rules of");
        forget_unchecked();
        return LH_ERROR;
    }
    struct resolve_ctx c = {.ref_resolved = H.ref_unchecked};
    enum lh_outcome o = lh_protected_call(compile_network, &c, NULL, err, errlen);
    forget_unchecked();
    if (o != LH_OK)
        forget_profile();
    if (o == LH_OK && cache.store_path)
        pc_entry_store(cache.store_path, &cache.entry);
    cache_forget();
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
void lh_restore_profile(lua_State *L)
{
    if (H.ref_profile != LUA_NOREF)
        return;
    lua_createtable(L, 0, 2); /* [ctx, p] */
    if (H.net_profile_name) {
        lua_pushstring(L, H.net_profile_name);
        lua_setfield(L, -2, "name");
    }
    lua_createtable(L, 0, 2); /* [ctx, p, net] */
    const struct str_list *lists[2] = {&H.net_allow, &H.net_deny};
    static const char *const keys[2] = {"allow", "deny"};
    for (int k = 0; k < 2; k++) {
        lua_createtable(L, (int)lists[k]->len, 0); /* [ctx, p, net, list] */
        for (size_t i = 0; i < lists[k]->len; i++) {
            lua_pushstring(L, lists[k]->items[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, keys[k]); /* [ctx, p, net] */
    }
    lua_setfield(L, -2, "network"); /* [ctx, p] */
    push_net_compile(L);
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);                              /* [ctx, p] */
    H.ref_profile = luaL_ref(L, LUA_REGISTRYINDEX); /* [ctx] */
}

static int restore_profile(lua_State *L)
{
    lh_restore_profile(L);
    return 0;
}

void lh_push_network_input(lua_State *L, const char *kind, const char *host, unsigned port,
                           const char *command)
{
    lua_createtable(L, 0, 5); /* [in] */
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, host);
    lua_setfield(L, -2, "host");
    lua_pushinteger(L, (lua_Integer)port);
    lua_setfield(L, -2, "port");
    if (command) {
        lua_pushstring(L, command);
        lua_setfield(L, -2, "command");
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_profile);
    lua_setfield(L, -2, "profile");
}

const char *lh_net_kind_name(enum net_kind kind)
{
    switch (kind) {
    case NET_KIND_HTTP:
        return "http";
    case NET_KIND_CONNECT:
        return "connect";
    case NET_KIND_SOCKS:
        return "socks";
    case NET_KIND_DNS:
        return "dns";
    }
    return NULL;
}

static int call_network_hook(lua_State *L)
{
    struct net_ctx *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_NETWORK]);    /* [ctx, f] */
    lh_push_network_input(L, c->kind, c->host, c->port, c->command); /* [ctx, f, in] */
    lua_call(L, 1, 1);                                               /* [ctx, res] */
    H.validating = true;
    lc_read_net_decision(L, -1, c->out);
    return 0;
}

enum lh_outcome lh_network_decide(enum net_kind kind, const char *host, unsigned port,
                                  const char *command, struct net_decision *out)
{
    memset(out, 0, sizeof *out);
    struct net_ctx c = {
        .kind = lh_net_kind_name(kind), .host = host, .command = command, .port = port, .out = out};
    /* a name looked up has no port: kind dns asks about every port at once */
    bool port_ok = kind == NET_KIND_DNS ? port == 0 : port >= 1 && port <= 65535;
    if (!c.kind || !host || !port_ok) {
        snprintf(out->reason, sizeof out->reason, "invalid request (kind %d, port %u)", (int)kind,
                 port);
        return LH_ERROR;
    }
    char err[1024];
    if (!lh_state_ready(err, sizeof err)) {
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
        o = lh_protected_call(restore_profile, NULL, "network rules", err, sizeof err);
    if (o == LH_OK) {
        /* where the top network hook is defined, looked up once per state, not per decision */
        if (!H.net_where[0])
            lh_hook_where(HOOK_NETWORK, H.net_where, sizeof H.net_where);
        o = lh_protected_call(call_network_hook, &c, H.net_where, err, sizeof err);
    }
    if (o != LH_OK) {
        memset(out, 0, sizeof *out);
        snprintf(out->reason, sizeof out->reason, "policy error: %.200s", err);
        LOG_W(LH_UNIT, "network hook failed for %s %s:%u: %s", c.kind, host, port, err);
    }
    return o;
}

/* ---- refusal detection and escalation ------------------------------------------------------
 * Both hooks see host.exists / host.is_socket through the recorded-case override when one is
 * set (lh_set_host_override, for `policy detect` and `policy test`). */

struct detect_ctx {
    const struct lh_command_result *in;
    struct lh_refusal *out;
    size_t max, n;
};

static int call_refusal_hook(lua_State *L)
{
    struct detect_ctx *c = lua_touserdata(L, 1);
    lh_api_install_override(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_REFUSAL]); /* [ctx, f] */
    lc_push_command_result(L, c->in);                             /* [ctx, f, in] */
    lua_call(L, 1, 1);                                            /* [ctx, res] */
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
    if (!lh_state_ready(err, errlen))
        return LH_ERROR;
    if (H.ref_chain[HOOK_REFUSAL] == LUA_NOREF)
        return LH_OK; /* nobody asked for detection: nothing to report */
    struct detect_ctx c = {.in = in, .out = out, .max = max};
    char where[PATH_MAX + 32];
    lh_hook_where(HOOK_REFUSAL, where, sizeof where);
    /* A failure is the caller's to report (once): err says where. */
    enum lh_outcome o = lh_protected_call(call_refusal_hook, &c, where, err, errlen);
    if (o == LH_OK)
        *n = c.n;
    return o;
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
    lh_api_install_override(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_chain[HOOK_ESCALATE]); /* [ctx, f] */
    lua_createtable(L, 0, 6);                                      /* [ctx, f, in] */
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
    lua_call(L, 1, 1); /* [ctx, res] */
    H.validating = true;
    lc_read_escalation(L, -1, c->out);
    return 0;
}

enum lh_outcome lh_escalate(const struct lh_refusal *r, const char *command, bool ask_sandbox_off,
                            bool plan, bool background, bool interactive, struct lh_escalation *out,
                            char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (errlen)
        err[0] = '\0';
    enum lh_outcome o = LH_ERROR;
    if (!lh_state_ready(err, errlen)) {
        /* err says why */
    } else if (H.ref_chain[HOOK_ESCALATE] == LUA_NOREF) {
        snprintf(err, errlen, "no policy defines the 'escalate' hook");
    } else {
        struct escalate_ctx c = {.r = r,
                                 .command = command,
                                 .ask_sandbox_off = ask_sandbox_off,
                                 .plan = plan,
                                 .background = background,
                                 .interactive = interactive,
                                 .out = out};
        char where[PATH_MAX + 32];
        lh_hook_where(HOOK_ESCALATE, where, sizeof where);
        o = lh_protected_call(call_escalate_hook, &c, where, err, errlen);
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
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_profile); /* [ctx, profile] */
    lc_read_escalation_settings(L, -1, &c->ask_sandbox_off, &c->plan);
    return 0;
}

void lh_profile_escalation(bool *ask_sandbox_off, bool *plan)
{
    struct esc_settings_ctx c = {false, false};
    char err[256];
    if (H.L && !H.need_rebuild && H.ref_profile != LUA_NOREF &&
        lh_protected_call(read_escalation_settings, &c, "escalation settings", err, sizeof err) !=
            LH_OK)
        c.ask_sandbox_off = c.plan = false;
    *ask_sandbox_off = c.ask_sandbox_off;
    *plan = c.plan;
}
