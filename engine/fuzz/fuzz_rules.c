/* fuzz_rules.c — libFuzzer target for the network rule language (lua/cordon/allowlist.lua and
 * lua/cordon/ip.lua), run in a plain Lua 5.4 state like the specs do. The input is split at the
 * first newline: a rule, then a host to decide. Properties: parse either returns a rule or
 * nil and a message naming the entry; a rule that parses compiles; decide never raises and
 * returns "allow" or "deny" with a reason; a deny rule for a host wins over an allow for it.
 * Any other Lua error is a bug (the engine would deny, but for the wrong reason).
 * Built by `make fuzz` with -DCORDON_LUA_DIR pointing at lua/. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lua_State *L;

static const char harness[] =
    "local allowlist = require('cordon.allowlist')\n"
    "return function(rule, host)\n"
    "  local parsed, err = allowlist.parse(rule)\n"
    "  if not parsed then\n"
    "    assert(type(err) == 'string' and err:find('invalid network rule', 1, true), 'bad parse error: ' .. tostring(err))\n"
    "    return\n"
    "  end\n"
    "  local m = allowlist.compile({ rule }, {})\n"
    "  for _, kind in ipairs({ 'http', 'connect', 'socks' }) do\n"
    "    for _, port in ipairs({ 1, 22, 80, 443, 65535 }) do\n"
    "      local d = m:decide(kind, host, port)\n"
    "      assert(d.verdict == 'allow' or d.verdict == 'deny', 'bad verdict')\n"
    "      assert(type(d.reason) == 'string', 'no reason')\n"
    "    end\n"
    "  end\n"
    "  local both = allowlist.compile({ rule }, { rule })\n"
    "  for _, kind in ipairs({ 'http', 'connect', 'socks' }) do\n"
    "    assert(both:decide(kind, host, 443).verdict == 'deny', 'deny did not win')\n"
    "  end\n"
    "end\n";

static void setup(void)
{
    L = luaL_newstate();
    luaL_openlibs(L);
    lua_getglobal(L, "package");
    lua_pushstring(L, CORDON_LUA_DIR "/?.lua");
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);
    if (luaL_loadstring(L, harness) != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK) {
        fprintf(stderr, "fuzz_rules: %s\n", lua_tostring(L, -1));
        abort();
    }
    lua_setglobal(L, "check");
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!L)
        setup();
    const unsigned char *nl = memchr(data, '\n', size);
    size_t rule_len = nl ? (size_t)(nl - data) : size;
    lua_getglobal(L, "check");
    lua_pushlstring(L, (const char *)data, rule_len);
    if (nl)
        lua_pushlstring(L, (const char *)nl + 1, size - rule_len - 1);
    else
        lua_pushliteral(L, "example.com");
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
        fprintf(stderr, "fuzz_rules: %s\n", lua_tostring(L, -1));
        abort();
    }
    lua_settop(L, 0);
    return 0;
}
