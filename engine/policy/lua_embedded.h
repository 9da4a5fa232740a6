/* lua_embedded.h — what lua_compile.c compiled into the binary at build time, with the Lua 5.4
 * library the engine links: the lua/ modules' stripped bytecode (never text parsed at run
 * time), and the built-in policy and profile files' bytecode beside their text (a file whose
 * bytes are that text at run time is loaded from it; any other stays text). Never bytecode
 * from a file. Owns nothing; read only by lua_host.c, which loads these, and only these, with
 * mode "b". */
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

/* A built-in policy or profile file as it was in the source tree, and its bytecode with line
 * information, cut where the dump holds its source name: head, then the file's "@path" (as
 * Lua 5.4 dumps a string: its size, then its bytes), then tail is the chunk of that file. */
struct lua_builtin_chunk {
    const char *name;          /* "policies/00-default.lua": which file it was, for the record */
    const unsigned char *text; /* the file's bytes */
    size_t text_len;
    const unsigned char *head;
    size_t head_len;
    const unsigned char *tail;
    size_t tail_len;
};

/* Terminated by an entry whose name is NULL; empty when the build could not cut the dumps. */
extern const struct lua_builtin_chunk lua_builtin_chunks[];
#endif
