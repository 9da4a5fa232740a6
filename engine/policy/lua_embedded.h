/* lua_embedded.h — the lua/ modules compiled into the binary: their stripped Lua 5.4 bytecode,
 * made at build time by lua_compile.c with the library the engine links (never text parsed at
 * run time, never bytecode from a file). Owns nothing; read only by lua_host.c, which loads
 * these, and only these, with mode "b". */
#ifndef CORDON_LUA_EMBEDDED_H
#define CORDON_LUA_EMBEDDED_H
#include <stddef.h>

struct lua_embedded_module {
    const char *name;      /* module name for require, e.g. "cordon.profile" */
    const char *chunkname; /* "=lua/cordon/profile.lua": names the module if its load fails */
    const unsigned char *code; /* stripped bytecode (lua_dump with strip=1) */
    size_t len;
};

/* Terminated by an entry whose name is NULL. */
extern const struct lua_embedded_module lua_embedded_modules[];
#endif
