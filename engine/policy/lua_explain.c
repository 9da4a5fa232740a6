/* lua_explain.c — explain and check: `cordon policy explain` (each layer's own answer to one
 * input, and which layer decided), what `cordon policy test` and `cordon trust` read from the
 * host (a resolved profile's value, the hooks a policy file defines), and `cordon policy
 * check` (every layer and profile, or one file, validated).
 * Owns the walk over the layers of one hook (explain_layers) with a small part per kind
 * (network, profile, refusal), and the compact JSON form values are compared in.
 * Uses: lua_host.c's protected call, loaders and state (lua_host_private.h), lua_decide.c's
 * hook inputs, lua_host_api.c's recorded-case override, lua_conv.c for values.
 * Must never: print (the answers and problems are returned; cli/ prints them), decide
 * anything the run path would not (a layer's answer is its hook chain's), or call Lua outside
 * lh_protected_call(). */
#include "policy/lua_host.h"
#include "policy/lua_host_private.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "base/json_write.h"
#include "base/util.h"
#include "policy/lua_conv.h"
#include "sandbox/sandbox_config.h"

/* Values are compared as compact JSON (json_repr) so that two layers' profiles can be diffed
 * key by key, and a recorded expected value (`policy test`) can be compared with the resolved
 * profile's. */
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

static void rb_sink(void *ctx, const char *p, size_t n)
{
    rb_add(ctx, p, n);
}

/* A JSON string, escaped as every JSON string cordon writes (base/json_write.h). */
static void rb_json_string(struct repr_buf *b, const char *p, size_t n)
{
    json_escape(p, n, rb_sink, b);
}

/* A table whose keys are exactly 1..n (n >= 0): written as a JSON array. */
static bool is_sequence(lua_State *L, int idx)
{
    lua_Unsigned n = lua_rawlen(L, idx), count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) { /* [..., k, v] */
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
    case LUA_TNIL:
        rb_str(b, "null");
        return;
    case LUA_TBOOLEAN:
        rb_str(b, lua_toboolean(L, idx) ? "true" : "false");
        return;
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
    while (lua_next(L, idx)) { /* [..., k, v] */
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        str_list_push(&keys, luaL_tolstring(L, -1, NULL)); /* [..., k, k, s] */
        lua_pop(L, 2);
    }
    str_list_sort(&keys);
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
    while (lua_next(L, idx)) { /* [..., k, v] */
        lua_pushvalue(L, -2);
        char *path = xasprintf("%s%s%s", prefix, *prefix ? "." : "", luaL_tolstring(L, -1, NULL));
        lua_pop(L, 2); /* [..., k, v] */
        if (lua_istable(L, -1) && depth < LH_REPR_MAX_DEPTH && !is_sequence(L, lua_gettop(L))) {
            flatten(L, -1, path, out, depth + 1);
        } else {
            struct repr_buf b = {0};
            json_repr(L, -1, &b, depth);
            str_list_push_owned(out, xasprintf("%s=%s", path, b.s));
            free(b.s);
        }
        free(path);
        lua_pop(L, 1); /* [..., k] */
    }
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

/* ---- the walk over the layers -----------------------------------------------------------
 * A layer's own answer is the chain of layers 1..i (lowest first) called with the input: what
 * the decision would be if no layer above i existed. */

struct walk;

/* What differs between kinds of explanation. */
struct explain_kind {
    enum lh_hook hook;
    /* The layer's answer, into w->ex->layer[w->layer - 1]: a protected function (ctx: walk). */
    lua_CFunction ask;
    /* After a layer answered LH_OK (may be NULL). */
    void (*answered)(struct walk *w, struct lh_explain_layer *l);
    /* Walking down from the top: does layer k add nothing to what layer k - 1 says? */
    bool (*settled_below)(const struct lh_explanation *ex, int k);
    /* ex->outcome is the first failing layer's, not the top layer's. */
    bool first_failure;
};

struct walk {
    const struct explain_kind *kind;
    const void *input;
    struct lh_explanation *ex;
    int layer;                  /* the layer being asked, 1-based */
    struct str_list flat, prev; /* profile: this layer's result and the last good one's */
};

/* ex->n and each layer's "file:line" (ctx: walk). */
static int read_layer_info(lua_State *L)
{
    struct walk *w = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_layers);   /* [ctx, reg] */
    lua_getfield(L, -1, lh_hook_names[w->kind->hook]); /* [ctx, reg, layers] */
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    int count = n > LH_EXPLAIN_MAX_LAYERS ? LH_EXPLAIN_MAX_LAYERS : (int)n;
    for (int i = 0; i < count; i++) {
        lua_Debug ar;
        struct lh_explain_layer *l = &w->ex->layer[i];
        lua_rawgeti(L, -1, i + 1); /* [ctx, reg, layers, fn] */
        if (lua_getinfo(L, ">S", &ar))
            snprintf(l->where, sizeof l->where, "%s:%d",
                     ar.source[0] == '@' ? ar.source + 1 : ar.short_src, ar.linedefined);
    }
    w->ex->n = count;
    return 0;
}

/* [...] -> [..., chain of layers 1..i of hook h] */
static void push_truncated_chain(lua_State *L, enum lh_hook h, int i)
{
    lh_push_module_field(L, "cordon.hooks", "chain"); /* [chainf] */
    lua_createtable(L, i, 0);                         /* [chainf, sub] */
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_layers);  /* [chainf, sub, reg] */
    lua_getfield(L, -1, lh_hook_names[h]);            /* [chainf, sub, reg, layers] */
    for (int k = 1; k <= i; k++) {
        lua_rawgeti(L, -1, k);
        lua_rawseti(L, -4, k);
    }
    lua_pop(L, 2);     /* [chainf, sub] */
    lua_call(L, 1, 1); /* [chain] */
}

/* Ask every layer defining kind->hook about input, lowest first, and find the deciding one.
 * The state is ready (the caller checked). Returns ex->outcome. */
static enum lh_outcome explain_layers(const struct explain_kind *kind, const void *input,
                                      struct str_list *seed, struct lh_explanation *ex)
{
    char err[1024];
    struct walk w = {.kind = kind, .input = input, .ex = ex};
    if (seed) { /* profile: what the layers' changes are measured against (taken over) */
        w.prev = *seed;
        *seed = (struct str_list){0};
    }
    if (lh_protected_call(read_layer_info, &w, "layers", err, sizeof err) != LH_OK)
        ex->n = 0;
    if (ex->n == 0)
        return ex->outcome; /* the caller's "no layer defines the hook" outcome */
    int n = ex->n;
    for (int i = 0; i < n; i++) {
        struct lh_explain_layer *l = &ex->layer[i];
        w.layer = i + 1;
        l->outcome = lh_protected_call(kind->ask, &w, l->where, l->error, sizeof l->error);
        if (l->outcome == LH_OK && kind->answered)
            kind->answered(&w, l);
        if (l->outcome != LH_OK) {
            memset(&l->net, 0, sizeof l->net);
            l->n_refusals = 0;
        }
        if (kind->first_failure && ex->outcome == LH_OK)
            ex->outcome = l->outcome;
        if (H.need_rebuild && !lh_state_ready(err, sizeof err)) {
            ex->n = i + 1;
            break;
        }
    }
    str_list_free(&w.flat);
    str_list_free(&w.prev);
    int k = ex->n - 1;
    if (!kind->first_failure)
        ex->outcome = ex->layer[k].outcome;
    while (k > 0 && kind->settled_below(ex, k))
        k--;
    ex->decided = k;
    return ex->outcome;
}

/* The explanation is empty, and the host ready: false with ex->error when it is not. */
static bool explain_start(struct lh_explanation *ex, enum lh_outcome none)
{
    memset(ex, 0, sizeof *ex);
    ex->layer = xcalloc(LH_EXPLAIN_MAX_LAYERS, sizeof *ex->layer);
    ex->outcome = none;
    if (lh_state_ready(ex->error, sizeof ex->error))
        return true;
    ex->outcome = LH_ERROR;
    return false;
}

void lh_explanation_free(struct lh_explanation *ex)
{
    for (int i = 0; ex->layer && i < LH_EXPLAIN_MAX_LAYERS; i++) {
        str_list_free(&ex->layer[i].changed);
        free(ex->layer[i].refusals);
    }
    free(ex->layer);
    memset(ex, 0, sizeof *ex);
}

const char *lh_outcome_name(enum lh_outcome o)
{
    switch (o) {
    case LH_OK:
        return "ok";
    case LH_ERROR:
        return "error";
    case LH_TIMEOUT:
        return "instruction budget exhausted";
    case LH_NOMEM:
        return "memory cap exceeded";
    case LH_BAD_RESULT:
        return "bad result";
    }
    return "?";
}

/* ---- network ------------------------------------------------------------------------------ */

struct net_input {
    const char *kind, *host;
    unsigned port;
};

static int ask_network_layer(lua_State *L)
{
    struct walk *w = lua_touserdata(L, 1);
    const struct net_input *in = w->input;
    lh_restore_profile(L);
    push_truncated_chain(L, HOOK_NETWORK, w->layer);              /* [ctx, f] */
    lh_push_network_input(L, in->kind, in->host, in->port, NULL); /* [ctx, f, in] */
    lua_call(L, 1, 1);                                            /* [ctx, res] */
    H.validating = true;
    lc_read_net_decision(L, -1, &w->ex->layer[w->layer - 1].net);
    return 0;
}

/* Layer k - 1 already gives the top layer's outcome, verdict and rule. */
static bool network_settled_below(const struct lh_explanation *ex, int k)
{
    const struct lh_explain_layer *a = &ex->layer[k - 1], *t = &ex->layer[ex->n - 1];
    return a->outcome == t->outcome && a->net.allow == t->net.allow && a->net.ask == t->net.ask &&
           strcmp(a->net.rule, t->net.rule) == 0;
}

static const struct explain_kind network_kind = {
    .hook = HOOK_NETWORK,
    .ask = ask_network_layer,
    .settled_below = network_settled_below,
};

enum lh_outcome lh_explain_network(enum net_kind kind, const char *host, unsigned port,
                                   struct lh_explanation *ex)
{
    bool ready = explain_start(ex, LH_ERROR);
    if (!H.have_profile) {
        snprintf(ex->error, sizeof ex->error, "no profile resolved");
        return ex->outcome = LH_ERROR;
    }
    if (!ready)
        return LH_ERROR;
    struct net_input in = {.kind = lh_net_kind_name(kind), .host = host, .port = port};
    if (!in.kind || !host) {
        snprintf(ex->error, sizeof ex->error, "invalid request (kind %d)", (int)kind);
        return ex->outcome = LH_ERROR;
    }
    return explain_layers(&network_kind, &in, NULL, ex);
}

/* ---- profile ------------------------------------------------------------------------------ */

static int ask_profile_layer(lua_State *L)
{
    struct walk *w = lua_touserdata(L, 1);
    push_truncated_chain(L, HOOK_PROFILE, w->layer); /* [ctx, f] */
    lh_call_profile_fn(L, w->input);                 /* [ctx, res] */
    str_list_free(&w->flat);
    flatten(L, -1, "", &w->flat, 0);
    str_list_sort(&w->flat);
    return 0;
}

/* The keys this layer changed from the last layer that answered. */
static void profile_answered(struct walk *w, struct lh_explain_layer *l)
{
    diff_keys(&w->prev, &w->flat, &l->changed);
    str_list_free(&w->prev);
    w->prev = w->flat;
    w->flat = (struct str_list){0};
}

/* Layer k answered and changed nothing (layer 1 always counts: it sets the profile). */
static bool profile_settled_below(const struct lh_explanation *ex, int k)
{
    return ex->layer[k].outcome == LH_OK && ex->layer[k].changed.len == 0;
}

static const struct explain_kind profile_kind = {
    .hook = HOOK_PROFILE,
    .ask = ask_profile_layer,
    .answered = profile_answered,
    .settled_below = profile_settled_below,
    .first_failure = true,
};

/* The profile files of a name's `extends` chain, found by host.profile as the profile hook
 * finds them. ex->layer[i] is the i-th file from the base: its path, and the keys it set (the
 * base) or changed against the files below it, merged as cordon.profile.resolve merges them;
 * flat ends as the whole chain's result, as resolve returns it (ctx: files_walk). */
struct files_walk {
    const char *name;
    struct lh_explanation *ex;
    struct str_list flat, prev; /* owned here, so a raise in the walk leaks nothing */
};

static int ask_profile_files(lua_State *L)
{
    struct files_walk *w = lua_touserdata(L, 1);
    lh_api_push_host(L); /* [ctx, host] */
    int host = lua_gettop(L);
    lua_newtable(L); /* [ctx, host, chain] */
    int chain = lua_gettop(L), n = 0;
    lua_pushstring(L, w->name); /* [ctx, host, chain, name] */
    /* a cycle stops at the cap: the profile hook reports it */
    while (lua_type(L, -1) == LUA_TSTRING && n < LH_EXPLAIN_MAX_LAYERS) {
        lua_getfield(L, host, "profile"); /* [.., name, f] */
        lua_insert(L, -2);                /* [.., f, name] */
        lua_call(L, 1, 2);                /* [.., t, path] */
        snprintf(w->ex->layer[n].where, sizeof w->ex->layer[n].where, "%s",
                 lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_pop(L, 1); /* [.., t] */
        if (!lua_istable(L, -1))
            return luaL_error(L, "profile '%s': its file returns no table", w->name);
        lua_pushvalue(L, -1);
        lua_rawseti(L, chain, ++n);     /* [.., t] */
        lua_getfield(L, -1, "extends"); /* [.., t, ext] */
        lua_remove(L, -2);              /* [.., ext] */
    }
    lua_pop(L, 1);                                /* [ctx, host, chain] */
    for (int a = 0, b = n - 1; a < b; a++, b--) { /* base first */
        struct lh_explain_layer t = w->ex->layer[a];
        w->ex->layer[a] = w->ex->layer[b];
        w->ex->layer[b] = t;
    }
    w->ex->n = n;
    lua_newtable(L); /* [ctx, host, chain, acc] */
    for (int i = n; i >= 1; i--) {
        lh_push_module_field(L, "cordon.profile", "merge"); /* [.., acc, merge] */
        lua_insert(L, -2);                                  /* [.., merge, acc] */
        lua_rawgeti(L, chain, i);                           /* [.., merge, acc, t] */
        lua_call(L, 2, 1);                                  /* [.., acc] */
        str_list_free(&w->flat);
        flatten(L, -1, "", &w->flat, 0);
        str_list_sort(&w->flat);
        diff_keys(&w->prev, &w->flat, &w->ex->layer[n - i].changed);
        str_list_free(&w->prev);
        w->prev = w->flat;
        w->flat = (struct str_list){0};
    }
    lua_pushnil(L);
    lua_setfield(L, -2, "extends");
    lua_pushstring(L, w->name);
    lua_setfield(L, -2, "name");
    flatten(L, -1, "", &w->flat, 0);
    str_list_sort(&w->flat);
    return 0;
}

enum lh_outcome lh_explain_profile_layers(const struct run_flags *flags,
                                          struct lh_explanation *files, struct lh_explanation *ex)
{
    struct files_walk fw = {.name = flags->profile ? flags->profile : "coding", .ex = files};
    if (files && explain_start(files, LH_OK)) {
        files->outcome = lh_protected_call(ask_profile_files, &fw, "profile files", files->error,
                                           sizeof files->error);
        str_list_free(&fw.prev);
        if (files->outcome != LH_OK) {
            files->n = 0;
            str_list_free(&fw.flat);
        }
    }
    if (!explain_start(ex, LH_OK)) {
        str_list_free(&fw.flat);
        return LH_ERROR;
    }
    if (explain_layers(&profile_kind, flags, files ? &fw.flat : NULL, ex) == LH_OK && ex->n == 0)
        ex->outcome = LH_ERROR; /* no layer defines `profile`: nothing resolves */
    str_list_free(&fw.flat);
    return ex->outcome;
}

enum lh_outcome lh_explain_profile(const struct run_flags *flags, struct lh_explanation *ex)
{
    return lh_explain_profile_layers(flags, NULL, ex);
}

/* ---- refusal ------------------------------------------------------------------------------ */

static int ask_refusal_layer(lua_State *L)
{
    struct walk *w = lua_touserdata(L, 1);
    struct lh_explain_layer *l = &w->ex->layer[w->layer - 1];
    if (!l->refusals)
        l->refusals = xcalloc(LH_EXPLAIN_MAX_REFUSALS, sizeof *l->refusals);
    lh_api_install_override(L);
    push_truncated_chain(L, HOOK_REFUSAL, w->layer); /* [ctx, f] */
    lc_push_command_result(L, w->input);             /* [ctx, f, in] */
    lua_call(L, 1, 1);                               /* [ctx, res] */
    H.validating = true;
    l->n_refusals = lc_read_refusals(L, -1, l->refusals, LH_EXPLAIN_MAX_REFUSALS);
    return 0;
}

/* Layer k - 1 already gives the top layer's outcome and list (kinds and paths, in order). */
static bool refusal_settled_below(const struct lh_explanation *ex, int k)
{
    const struct lh_explain_layer *a = &ex->layer[k - 1], *t = &ex->layer[ex->n - 1];
    if (a->outcome != t->outcome || a->n_refusals != t->n_refusals)
        return false;
    for (size_t i = 0; i < a->n_refusals; i++)
        if (strcmp(a->refusals[i].kind, t->refusals[i].kind) ||
            strcmp(a->refusals[i].path, t->refusals[i].path))
            return false;
    return true;
}

static const struct explain_kind refusal_kind = {
    .hook = HOOK_REFUSAL,
    .ask = ask_refusal_layer,
    .settled_below = refusal_settled_below,
};

enum lh_outcome lh_explain_refusals(const struct lh_command_result *in, struct lh_explanation *ex)
{
    /* no layer defining `refusal`: no refusal, as lh_detect_refusals */
    if (!explain_start(ex, LH_OK))
        return LH_ERROR;
    return explain_layers(&refusal_kind, in, NULL, ex);
}

/* ---- what policy test and trust read ------------------------------------------------------ */

struct value_ctx {
    const char *keypath;
    struct repr_buf b;
};

static int read_profile_value(lua_State *L)
{
    struct value_ctx *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, H.ref_profile); /* [ctx, v] */
    const char *p = c->keypath;
    while (*p) {
        size_t n = strcspn(p, ".");
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            lua_pushnil(L);
            break;
        }
        lua_pushlstring(L, p, n); /* [ctx, t, k] */
        lua_rawget(L, -2);        /* [ctx, t, v] */
        lua_remove(L, -2);        /* [ctx, v] */
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
    bool ok =
        lh_protected_call(read_profile_value, &c, "profile value", err, sizeof err) == LH_OK &&
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
    lh_push_module_field(L, "cordon.hooks", "new_registry");
    lua_call(L, 0, 1);        /* [ctx, reg] */
    lh_add_layer(L, c->path); /* [ctx, reg] */
    size_t used = 0;
    c->out[0] = '\0';
    for (int h = 0; h < HOOK_COUNT; h++) {
        lua_getfield(L, -1, lh_hook_names[h]); /* [ctx, reg, list] */
        if (lua_rawlen(L, -1) > 0 && used < c->outlen) {
            int w = snprintf(c->out + used, c->outlen - used, "%s%s", used ? ", " : "",
                             lh_hook_names[h]);
            used += w > 0 ? (size_t)w : 0;
        }
        lua_pop(L, 1);
    }
    return 0;
}

int lh_layer_hooks(const char *path, char *out, size_t outlen)
{
    char err[1024];
    if (!lh_state_ready(err, sizeof err)) {
        snprintf(out, outlen, "%s", err);
        return -1;
    }
    struct layer_hooks_ctx c = {.path = path, .out = out, .outlen = outlen};
    if (lh_protected_call(read_layer_hooks, &c, path, err, sizeof err) != LH_OK) {
        snprintf(out, outlen, "%s", err);
        return -1;
    }
    return 0;
}

/* ---- policy check ------------------------------------------------------------------------ */

/* The file a profile name resolves to, searched as lh_resolve_sandbox does (lh_profile_dirs).
 * NULL when none exists. */
static char *profile_file(const char *name)
{
    char *dirs[LH_PROFILE_DIRS_MAX], *found = NULL;
    size_t nd = lh_profile_dirs(dirs);
    for (size_t i = 0; i < nd; i++) {
        char *path = xasprintf("%s/%s.lua", dirs[i], name);
        if (!found && access(path, F_OK) == 0)
            found = path;
        else
            free(path);
        free(dirs[i]);
    }
    return found;
}

/* The line of path that quotes entry ("entry" or 'entry'), or 0. */
static int quoted_entry_line(const char *path, const char *entry)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    char *dq = xasprintf("\"%s\"", entry), *sq = xasprintf("'%s'", entry);
    char buf[4096];
    int line = 0;
    for (int n = 1; fgets(buf, sizeof buf, f); n++) {
        if (strstr(buf, dq) || strstr(buf, sq)) {
            line = n;
            break;
        }
    }
    fclose(f);
    free(dq);
    free(sq);
    return line;
}

/* One problem of `policy check` for profile name: a message without a position (an invalid
 * network rule, a missing path) gets the profile's file and, when the quoted entry is found
 * there, its line. */
static void push_profile_problem(struct str_list *problems, const char *name, const char *err)
{
    char *path = strstr(err, ".lua:") ? NULL : profile_file(name);
    if (!path) {
        str_list_push(problems, err);
        return;
    }
    int line = 0;
    const char *q = strchr(err, '\'');
    const char *q2 = q ? strchr(q + 1, '\'') : NULL;
    if (q2) {
        char *entry = xasprintf("%.*s", (int)(q2 - q - 1), q + 1);
        line = quoted_entry_line(path, entry);
        free(entry);
    }
    if (line)
        str_list_push_owned(problems, xasprintf("%s:%d: %s", path, line, err));
    else
        str_list_push_owned(problems, xasprintf("%s: profile '%s': %s", path, name, err));
    free(path);
}

/* Resolve profile name as `cordon run --profile name` in cwd would; a failure is a problem. */
static int check_profile(const char *name, const char *cwd, struct str_list *problems)
{
    extern char **environ;
    char err[1024];
    struct run_flags flags = {.profile = name,
                              .unrestricted_network = FLAG_UNSET,
                              .allow_loopback = FLAG_UNSET,
                              .allow_docker = FLAG_UNSET,
                              .json = FLAG_UNSET};
    struct sandbox_config cfg;
    if (lh_resolve_sandbox(&flags, cwd, NULL, environ, &cfg, err, sizeof err) == LH_OK) {
        sandbox_config_free(&cfg);
        return 0;
    }
    push_profile_problem(problems, name, err);
    return 1;
}

/* Open the host with opt, collecting each layer that fails to load as a problem instead of
 * failing. Returns the number of problems; *opened whether the host is open. */
static int check_open(const struct lh_options *opt, struct str_list *problems, bool *opened)
{
    char err[1024];
    struct str_list layer_problems = {0};
    H.problems = &layer_problems;
    int r = lh_open(opt, err, sizeof err);
    H.problems = NULL;
    int n = (int)layer_problems.len;
    for (size_t i = 0; i < layer_problems.len; i++)
        str_list_push(problems, layer_problems.items[i]);
    str_list_free(&layer_problems);
    if (r < 0) {
        str_list_push(problems, err);
        n++;
    }
    *opened = r == 0;
    return n;
}

/* Every profile in the lookup directories, resolved in cwd; bad file names are problems. */
static int check_every_profile(const char *cwd, struct str_list *problems)
{
    int n = 0;
    struct str_list names = {0}, bad = {0};
    lh_list_profile_names(&names, &bad);
    for (size_t i = 0; i < bad.len; i++, n++)
        str_list_push_owned(problems, xasprintf("%s: invalid profile name (must match "
                                                "^[a-z0-9][a-z0-9_-]*$)",
                                                bad.items[i]));
    for (size_t i = 0; i < names.len; i++)
        n += check_profile(names.items[i], cwd, problems);
    str_list_free(&names);
    str_list_free(&bad);
    return n;
}

int lh_check_all(const struct lh_options *opt, const char *dir, struct str_list *problems)
{
    char cwdbuf[PATH_MAX];
    const char *cwd = dir ? dir : (getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/");
    bool opened;

    /* DIR names the project: its .cordon is checked whether trusted or not (a lint the user
     * asks for, like `policy test`); without DIR the caller's options decide. */
    struct lh_options copt = *opt;
    char *projdir = dir ? xasprintf("%s/.cordon", dir) : NULL;
    if (projdir) { /* read from disk: not the trusted set of another directory */
        copt.project_dir = projdir;
        copt.project_files = NULL;
    }
    int n = check_open(&copt, problems, &opened);
    free(projdir);
    if (opened)
        n += check_every_profile(cwd, problems);
    lh_close();
    return n;
}

/* "DIR/profiles/NAME.lua" -> DIR/profiles and NAME; false for any other path. */
static bool split_profile_path(const char *path, char **dir, char **name)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t bl = strlen(base);
    size_t dl = slash ? (size_t)(slash - path) : 0;
    static const char sub[] = "profiles";
    size_t sl = sizeof sub - 1;
    if (bl < 5 || strcmp(base + bl - 4, ".lua") != 0 || dl < sl ||
        strncmp(path + dl - sl, sub, sl) != 0 || (dl > sl && path[dl - sl - 1] != '/'))
        return false;
    *dir = xasprintf("%.*s", (int)dl, path);
    *name = xasprintf("%.*s", (int)(bl - 4), base);
    return true;
}

int lh_check_file(const struct lh_options *opt, const char *path, struct str_list *problems)
{
    char cwdbuf[PATH_MAX];
    const char *cwd = getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/";
    char *dir = NULL, *name = NULL;
    bool opened;
    int n;
    if (access(path, R_OK) < 0) {
        str_list_push_owned(problems, xasprintf("%s: %s", path, strerror(errno)));
        return 1;
    }
    if (!split_profile_path(path, &dir, &name)) {
        /* a policy: the top layer, as `cordon run --policy FILE` loads it */
        struct lh_options copt = *opt;
        copt.extra_policy = path;
        n = check_open(&copt, problems, &opened);
        if (opened)
            n += check_every_profile(cwd, problems);
        goto out;
    }
    if (!lh_valid_profile_name(name)) {
        str_list_push_owned(problems, xasprintf("%s: invalid profile name (must match "
                                                "^[a-z0-9][a-z0-9_-]*$)",
                                                path));
        n = 1;
        goto out;
    }
    n = check_open(opt, problems, &opened);
    if (opened) {
        H.check_profile_dir = dir; /* looked in first; freed by lh_close() */
        dir = NULL;
        n += check_profile(name, cwd, problems);
    }
out:
    lh_close();
    free(dir);
    free(name);
    return n;
}
