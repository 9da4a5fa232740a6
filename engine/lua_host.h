/* lua_host.h — the one owner of the lua_State (STYLE 3): create, sandbox, load lua/ (embedded),
 * policies/ and profiles/, call hooks under an instruction budget and a memory cap, close.
 * No other engine file includes lua.h except lua_conv.c (C <-> Lua values).
 * Must never: run bytecode, open io/os/debug/package, let a hook error pass as "allow". */
#ifndef CORDON_LUA_HOST_H
#define CORDON_LUA_HOST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "sandbox-t.h"

/* What one protected hook call ended as (STYLE 13). Callers switch on it without default:. */
enum lh_outcome {
    LH_OK,          /* a valid result */
    LH_ERROR,       /* the hook raised, or a policy failed to load */
    LH_TIMEOUT,     /* instruction budget exhausted */
    LH_NOMEM,       /* memory cap reached */
    LH_BAD_RESULT,  /* result of the wrong shape */
};

struct lh_options {
    const char *datadir;          /* holds policies/ and profiles/ (CORDON_DATADIR by default) */
    const char *user_config_dir;  /* ~/.config/cordon, or NULL: no user layer */
};

/* Create the state and load every policy layer. 0, or -1 with "file:line: message" in err. */
int lh_open(const struct lh_options *opt, char *err, size_t errlen);
void lh_close(void);

/* Run the `profile` hook (flags merged over the named profile) and the `environment` hook
 * (caller's environ in, the command's environment out), then validate paths: the workspace
 * (flags->workspace or cwd) and writable paths must exist and are canonicalised; hidden paths
 * are made absolute with ~ expanded; every network.allow / network.deny entry must parse (one
 * invalid entry fails with "invalid network rule 'ENTRY': why"). The resolved profile stays in
 * the state for lh_network_decide() until the next call or lh_close(). Fills cfg; on failure returns the outcome and puts one
 * line naming the cause (and file:line for policy errors) in err. */
enum lh_outcome lh_resolve_sandbox(const struct run_flags *flags, const char *cwd, const char *home,
                                   char *const *environ_in, struct sandbox_config *cfg,
                                   char *err, size_t errlen);

/* One new network destination, as the egress proxy sees it. */
enum net_kind {
    NET_KIND_HTTP,      /* an absolute-form HTTP request (port 80 when the URL has none) */
    NET_KIND_CONNECT,   /* an HTTP CONNECT tunnel */
    NET_KIND_SOCKS,     /* a SOCKS5 CONNECT */
};

/* The `network` hook's answer, copied out of Lua (strings truncated to fit, always
 * NUL-terminated; empty when the policy gave none). */
struct net_decision {
    bool allow;         /* forward the connection */
    bool ask;           /* the policy wants a person asked (allow is false meanwhile) */
    char rule[256];     /* the deciding entry as the user wrote it */
    char reason[256];   /* why, for the 403 body, the SOCKS log line and the audit log */
    char suggest[320];  /* the flag that would allow it, e.g. "--network-allow host:443" */
};

/* Decide one destination with the profile resolved by the last lh_resolve_sandbox() (its
 * network.allow / network.deny, command-line rules included, are compiled once and cached in
 * the state). host is the host as the client sent it (IPv6 with or without brackets), port
 * 1..65535, command the command line that asked or NULL. Any outcome but LH_OK leaves
 * out->allow false with the cause in out->reason (fail closed). Loop thread only. */
enum lh_outcome lh_network_decide(enum net_kind kind, const char *host, unsigned port,
                                  const char *command, struct net_decision *out);

/* `cordon policy check [DIR]`: load every layer, every profile under datadir (and DIR's
 * .cordon/profiles/ when given), validate each; print "file:line: message" per problem to out.
 * Returns the number of problems. */
int lh_check_all(const struct lh_options *opt, const char *dir, FILE *out);
#endif
