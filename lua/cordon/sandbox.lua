-- cordon.sandbox — the environments policy and profile files run in.
-- Owns: the read-only API table (the only globals a policy sees) and per-file _ENV tables whose
-- reads fall through to it and whose writes to undeclared globals raise.
-- Uses only what it is given (the host injects its globals and `host` table), so plain lua5.4
-- can run it in specs. Must never hand a policy a writable shared table.
local M = {}

-- A read-only view of t: reads, ipairs, pairs and # work; writes raise.
function M.readonly(t, what)
    return setmetatable({}, {
        __index = t,
        __newindex = function(_, k)
            error(("%s is read-only (cannot set '%s')"):format(what or "table", tostring(k)), 2)
        end,
        __pairs = function() return next, t, nil end,
        __len = function() return #t end,
        __metatable = false,
    })
end

M.globals = { "pairs", "ipairs", "type", "tostring", "tonumber", "select", "error", "assert",
              "pcall", "next", "rawequal", "rawget", "rawlen", "setmetatable", "getmetatable" }
M.libraries = { "string", "table", "math", "utf8" }

-- The API table: G supplies the standard functions and libraries, host the `host` table,
-- require the module loader policies may use (only cordon.* modules).
function M.api(G, host, require)
    local api = {}
    for _, n in ipairs(M.globals) do api[n] = G[n] end
    for _, n in ipairs(M.libraries) do api[n] = M.readonly(G[n], n) end
    api.print = G.print
    api.host = M.readonly(host, "host")
    api.require = function(name)
        if type(name) ~= "string" or not name:match("^cordon%.[%w_]+$") then
            error(("require: only cordon.* modules are available, not '%s'"):format(tostring(name)), 2)
        end
        return M.readonly(require(name), name)
    end
    api._VERSION = G._VERSION
    return M.readonly(api, "the policy API")
end

-- A fresh _ENV for one file.
function M.env(api)
    return setmetatable({}, {
        __index = api,
        __newindex = function(_, k)
            error(("assignment to undeclared global '%s' (use local)"):format(tostring(k)), 2)
        end,
        __metatable = false,
    })
end

return M
