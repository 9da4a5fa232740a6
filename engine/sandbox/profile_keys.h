/* Runs in: controller and init (the config wire's two ends read it), and profile_keys_gen at
 * build time; data only. */
/* profile_keys.h — every profile key as one row of one table: its dotted name, its kind, where
 * it lands in struct sandbox_config, the command-line flag of the same meaning (with its help)
 * and whether init gets it on the config wire. The Lua schema (lua/cordon/profile_keys.lua,
 * generated from this table), the conversion of a resolved profile (policy/lua_conv.c), the
 * flags of run and session start (controller/run_options.c) and the config wire
 * (sandbox/config_wire.c) walk it. Data only: no Lua, no kernel. */
#ifndef CORDON_PROFILE_KEYS_H
#define CORDON_PROFILE_KEYS_H
#include <stdbool.h>
#include <stddef.h>
#include "sandbox/sandbox-t.h"

/* The kinds of value a key takes; pk_kind_name() is the name lua/cordon/profile.lua checks it
 * by ("boolean", "list", ...: its comment says what each accepts). */
enum pk_kind {
    PK_STRING,
    PK_NAME,
    PK_BOOLEAN,
    PK_NUMBER,
    PK_INTEGER,
    PK_LIST,
    PK_ABSLIST,
    PK_STRMAP,
    PK_GRANTMAP,
    PK_CREDMAP,
    PK_EXCEPTMAP,
    PK_RLIMIT,
    PK_DURATION,
    PK_SIZE,
    PK_SIZE_OR_UNLIMITED,
    PK_PIDS,
    PK_PORTLIST,
    PK_HOME,
    PK_DEPTH,
    PK_TRANSPARENT,
};

/* A key that is no field of struct sandbox_config (or one that a key's own reader fills). */
#define PK_NO_FIELD ((size_t)-1)

/* The C type of a number key's field (the kind says it for every other key). */
enum pk_ctype { PK_C_NONE = 0, PK_C_DOUBLE, PK_C_UNSIGNED, PK_C_SIZE, PK_C_ULL };

/* Where the flag of a key is for: both commands, or only session start's help (both parse it). */
enum pk_flag_scope { PK_FLAG_ANY = 0, PK_FLAG_SESSION_HELP };

struct profile_key {
    const char *name;  /* dotted: "network.loopback" */
    enum pk_kind kind; /* what profile.lua accepts */
    /* offsetof(struct sandbox_config, ...) that lua_conv.c fills by kind (bool for PK_BOOLEAN,
     * struct str_list for PK_LIST and PK_ABSLIST), or PK_NO_FIELD: read by a reader of its own
     * in lua_conv.c, or not a field (the profile's layers use it, or the host reads it). A number
 * key's field is of type ctype. */
    size_t field;
    bool to_init; /* config_wire.c sends it to init */
    /* A number key (PK_NUMBER, PK_INTEGER, PK_DEPTH, PK_DURATION, PK_SIZE, PK_SIZE_OR_UNLIMITED,
     * PK_PIDS): its field's C type and its value when the profile has none; for PK_NUMBER,
     * PK_INTEGER and PK_DEPTH also the bounds the conversion holds it to, which expect words. */
    enum pk_ctype ctype;
    double dflt, min, max;
    const char *expect;
    /* The command-line flag of the same meaning, or NULL. A PK_BOOLEAN key's flag is an
     * enum flag_state at flag_field; a list kind's a struct str_list (repeatable); any other
     * a const char * (the profile validates it). */
    const char *flag;
    const char *flag_arg; /* its value's name in the help ("PATH"); NULL: a boolean flag */
    size_t flag_field;    /* offsetof(struct run_flags, ...) */
    bool flag_negates;    /* --session-exec=false sets session.exec_per_command = true */
    enum pk_flag_scope flag_scope;
    const char *flag_help; /* lines of help, '\n' between them */
};

extern const struct profile_key profile_keys[];
extern const size_t profile_keys_len;

/* "boolean", "list", ...: the kind as lua/cordon/profile.lua names it. */
const char *pk_kind_name(enum pk_kind kind);
/* The row of dotted name, or NULL. */
const struct profile_key *pk_find(const char *name);
/* The row whose flag is the first len bytes of flag, or NULL. */
const struct profile_key *pk_find_flag(const char *flag, size_t len);
/* Whether a key of this kind is a list of strings (struct str_list as a field or flag). */
bool pk_kind_is_list(enum pk_kind kind);
#endif
