-- .luacheckrc — luacheck's settings for the Lua of cordon (`make lint`).
-- lua/ and spec/ run in plain Lua 5.4; policies/ and profiles/ run in the policy sandbox
-- (lua/cordon/sandbox.lua), which offers only the names listed below.
std = "lua54"
max_line_length = 120

-- The specs keep whole command lines, outputs and case tables on one line each, where a wrapped
-- line would be harder to compare with what the program prints: no length limit there.
files["spec/"] = { std = "+busted", max_line_length = false }

-- The policy environment: what cordon.sandbox's api() hands a policy or profile file.
local policy_env = {
    read_globals = {
        "pairs", "ipairs", "type", "tostring", "tonumber", "select", "error", "assert", "pcall",
        "next", "rawequal", "rawget", "rawlen", "setmetatable", "getmetatable",
        "string", "table", "math", "utf8", "print", "host", "require", "_VERSION",
    },
}
files["policies/"] = { std = policy_env }
files["profiles/"] = { std = policy_env }
-- the specs' policy and profile files run in the same environment
files["spec/fixtures/policies/"] = { std = policy_env }
files["spec/fixtures/project/"] = { std = policy_env }
