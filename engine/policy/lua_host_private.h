/* lua_host_private.h — what the four files of the Lua host share, and nothing else includes:
 * lua_host.c (the state owner), lua_host_api.c (the `host` table), lua_decide.c (the
 * decisions) and lua_explain.c (explain and check). Owns the one state struct and the names
 * of the hooks; declares the protected-call helper every Lua entry goes through and the
 * loaders the others reuse. Must never be included outside engine/policy/lua_host*.c,
 * lua_decide.c and lua_explain.c: callers use lua_host.h. */
#ifndef CORDON_LUA_HOST_PRIVATE_H
#define CORDON_LUA_HOST_PRIVATE_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

#include "base/util.h"
#include "policy/lua_host.h"

#define LH_UNIT "lua"
#define LH_DEFAULT_PROFILE "coding"

/* Hooks, in the order of cordon.hooks.names. */
enum lh_hook {
    HOOK_PROFILE,
    HOOK_ENVIRONMENT,
    HOOK_NETWORK,
    HOOK_REFUSAL,
    HOOK_ESCALATE,
    HOOK_COUNT
};
extern const char *const lh_hook_names[HOOK_COUNT];

/* The one Lua state and what lives beside it. Defined in lua_host.c; the others read and set
 * the fields their concern names (lua_decide.c the resolved profile, lua_explain.c `problems`). */
struct lh_state {
    lua_State *L;
    /* memory accounting (lh_alloc) */
    size_t mem_used, mem_limit;
    bool mem_tripped;
    /* instruction budget (count_hook) */
    long steps;
    bool budget_tripped;
    bool validating;   /* errors now are the result's fault: LH_BAD_RESULT */
    bool need_rebuild; /* after LUA_ERRMEM: rebuild before reuse */
    bool print_muted;  /* print() logs nothing: the layers loaded again after a cache hit,
                        * whose lines the hit already showed (profile_cache.h) */
    /* options, copied */
    char *datadir, *user_config_dir, *project_dir, *extra_policy;
    const struct trust_set *project_files; /* lh_options.project_files, borrowed */
    /* `policy check FILE` of a profile: the file's profiles/ directory, looked in first */
    char *check_profile_dir;
    /* lh_check_all: collect layer load errors instead of failing */
    struct str_list *problems;
    /* per-call context for the host API, borrowed (kept in C, not in Lua) */
    const char *home, *workspace;
    /* registry refs */
    int ref_api, ref_env_fn, ref_validate;
    int ref_net_compile; /* cordon.allowlist.for_profile, looked up with the first rules */
    int ref_unchecked;   /* a profile resolved without its network rules compiled yet */
    int ref_layers;      /* the hooks registry { hook = { fn, ... } }, for explain */
    int ref_chain[HOOK_COUNT], ref_top[HOOK_COUNT];
    /* the profile the last lh_resolve_sandbox() resolved, for lh_network_decide(): a registry
     * ref while the state lives, and its name and network lists copied to C so that a state
     * rebuilt after LUA_ERRMEM can still decide with the same rules */
    int ref_profile;
    bool have_profile;
    char *net_profile_name;
    struct str_list net_allow, net_deny;
    char net_where[PATH_MAX + 32]; /* "file:line" of the top network hook; "" until looked up */
    /* the refusal layers' markers (markers_known: every such layer declared its own) */
    bool markers_known;
    struct str_list marker_list;
    struct marker_set *markers;
};
extern struct lh_state lh_state;
#define H lh_state /* short: every access to the state reads H.field */

/* ---- lua_host.c: the state owner ---------------------------------------------------------- */

/* The one way into Lua: run fn(ctx) (ctx as a light userdata at index 1) under a message
 * handler, the instruction budget and the memory cap. `where` ("file:line" of the code being
 * run) prefixes messages that carry no position of their own; NULL: messages stand as they are.
 * On a non-OK outcome err holds one line. Stack balanced. */
enum lh_outcome lh_protected_call(lua_CFunction fn, void *ctx, const char *where, char *err,
                                  size_t errlen);
/* The state is usable: rebuilt if the last call ran out of memory. false with err otherwise. */
bool lh_state_ready(char *err, size_t errlen);
/* "file:line" where the top layer of a hook is defined, for messages without a position. */
void lh_hook_where(enum lh_hook h, char *buf, size_t n);
/* require(mod) then mod.field: [-0, +1]. Raises. */
void lh_push_module_field(lua_State *L, const char *mod, const char *field);
/* Read path into a new userdata on the stack ([-0, +1] on success). The length, or -errno with
 * nothing pushed. May raise only before opening the file. A path inside the trusted project
 * directory (H.project_files set) is not read: its trusted bytes are pushed (lh_push_buffer),
 * and a name the trusted set does not hold is -ENOENT. */
long lh_push_file(lua_State *L, const char *path);
/* Copy data[0..len) into a new userdata (NUL-terminated) for lh_load_sandboxed, which loads it
 * under the file's name (text mode only): [-0, +1]. Returns len. May raise (memory). */
long lh_push_buffer(lua_State *L, const char *data, size_t len);
/* Does path exist for the loaders? Through the trusted set inside the project directory (as
 * lh_push_file reads it), else on disk. */
bool lh_file_exists(const char *path);
/* Load the text chunk in the userdata on top as path, with a fresh sandbox _ENV:
 * [ud] -> [ud, fn]. Raises "path:line: message" on a syntax error or a binary chunk. */
void lh_load_sandboxed(lua_State *L, const char *path, size_t len);
/* Load one policy file and add it as a layer of the hooks registry on top: [reg] -> [reg]. */
void lh_add_layer(lua_State *L, const char *path);
/* ^[a-z0-9][a-z0-9_-]*$ */
bool lh_valid_profile_name(const char *s);
/* The directories profiles are looked up in, first match wins; strings owned by the caller. */
#define LH_PROFILE_DIRS_MAX 4
size_t lh_profile_dirs(char *dirs[LH_PROFILE_DIRS_MAX]);
/* Names of every profile file in the lookup directories, sorted, unique; files whose name is
 * not a valid profile name go to bad_files (may be NULL). Scans directories: messages and
 * `policy check` only. */
void lh_list_profile_names(struct str_list *out, struct str_list *bad_files);

/* A line print() logged, as print() logs it: a cache hit shows the lines of the resolution. */
void lh_log_print(const char *line);

/* ---- lua_host_api.c: the `host` table ------------------------------------------------------ */

/* Push a new table of the host functions: [-0, +1]. */
void lh_api_push_host(lua_State *L);
/* Read the user's ~/.config/cordon/getenv-allow (H.user_config_dir) / forget it. */
void lh_api_open(void);
void lh_api_close(void);
/* Wrap host.exists and host.is_socket for the recorded-case override, once per state.
 * [-0, +0]; may raise (memory). Call inside a protected call before running a hook. */
void lh_api_install_override(lua_State *L);

/* ---- lua_decide.c: the decisions ----------------------------------------------------------- */

/* Call the profile hook function on top with { name, flags }: [f] -> [res]. Raises unless the
 * result is a table (then validation starts: H.validating). */
void lh_call_profile_fn(lua_State *L, const struct run_flags *flags);
/* Make sure H.ref_profile is set, rebuilding it from the C copies after a state rebuild. */
void lh_restore_profile(lua_State *L);
/* Push the network hook's input { kind, host, port, command?, profile }: [-0, +1]. */
void lh_push_network_input(lua_State *L, const char *kind, const char *host, unsigned port,
                           const char *command);
/* Forget the resolved profile (and one left for lh_resolve_network). lh_close() calls it. */
void lh_forget_resolved(void);
#endif
