/* lua_conv.h — C <-> Lua value conversion for the Lua host: run_flags and the
 * environment go in as copied tables, the resolved profile and the environment hook's answer
 * come out into struct sandbox_config, the network hook's answer into struct net_decision. Included only by lua_decide.c, lua_explain.c and lua_conv.c.
 * Every lc_read_* function may raise a Lua error (bad shape, out of memory): call it only inside
 * a protected call. Must never keep a reference to Lua values after returning. */
#ifndef CORDON_LUA_CONV_H
#define CORDON_LUA_CONV_H
#include <stdbool.h>
#include <lua.h>
#include "policy/lua_host.h"
#include "sandbox/sandbox-t.h"

/* Profile values that are not sandbox_config fields but that the host still needs. */
struct lc_profile_extra {
    char *workspace;   /* profile `workspace` as written (may be relative or ~/...), or NULL */
    bool allow_docker; /* profile `allow_docker` */
    struct str_list hide_paths_in; /* profile `env.hide_paths_in`: variables naming hidden files */
};

/* Push the partial profile the flags describe, walking the rows of the profile keys that have a
 * flag: [-0, +1]. Unset flags leave their key absent. */
void lc_push_flags(lua_State *L, const struct run_flags *flags);
/* Push { NAME = "value", ... } from a NULL-terminated "NAME=VALUE" array: [-0, +1]. */
void lc_push_environ(lua_State *L, char *const *environ_in);

/* Read the resolved profile table at idx (raw access, no metamethods) into cfg: every key whose
 * row in the table of profile keys names a field, by its kind (lists as written, paths not yet
 * expanded; absent numbers get the row's default), then the three keys of extra. Raises a Lua
 * error naming the key on a wrong type. Stack balanced. */
void lc_read_profile(lua_State *L, int idx, struct sandbox_config *cfg,
                     struct lc_profile_extra *extra);

/* Read an environment hook answer { set = {...}, unset = {...} } at idx and build out:
 * environ_in minus every name an unset pattern matches (only `*` is special) and minus the names
 * in set, then set's entries in name order. Raises on a wrong shape. Stack balanced. */
void lc_read_env_result(lua_State *L, int idx, char *const *environ_in, struct str_list *out);

/* Read a `network` hook result { verdict = "allow"|"deny"|"ask", rule, reason, suggest } at idx
 * into out (strings truncated to fit, control characters replaced by '?', so they can go into
 * an HTTP response or a log line). Raises on an unknown key, a missing or unknown verdict, or a
 * non-string field. Stack balanced. */
void lc_read_net_decision(lua_State *L, int idx, struct net_decision *out);

/* ---- refusal detection and escalation ---- */
/* Push the refusal hook's input table for in (see lua/HOOKS.md "refusal"): [-0, +1]. */
void lc_push_command_result(lua_State *L, const struct lh_command_result *in);
/* Push { kind, path (absent when ""), line, reason }: [-0, +1]. */
void lc_push_refusal(lua_State *L, const struct lh_refusal *r);
/* Read the refusal hook's result (a list of { kind, path?, line, reason }) at idx: the whole list
 * is checked first (a list, known keys, string values, a known kind, line and reason present),
 * raising on the first problem; then up to max entries are copied. Returns the count copied.
 * Stack balanced. */
size_t lc_read_refusals(lua_State *L, int idx, struct lh_refusal *out, size_t max);
/* Read an escalate result { action = "ask"|"deny", offer = "rerun"|"network", reason } at idx
 * (offer required with ask, ignored with deny). Raises on a bad shape. Stack balanced. */
void lc_read_escalation(lua_State *L, int idx, struct lh_escalation *out);
/* Read profile.escalation.ask_sandbox_off / .plan of the profile table at idx (false when
 * absent or not booleans; the profile was validated at resolution). Stack balanced. */
void lc_read_escalation_settings(lua_State *L, int idx, bool *ask_sandbox_off, bool *plan);
#endif
