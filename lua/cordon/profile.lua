-- cordon.profile — the profile schema, strict validation, merging and `extends` resolution.
-- Owns: what a profile key means as data (its type) and how layers combine (lists append, tables
-- merge, scalars override). Uses nothing but the standard library: file loading is injected as a
-- function (`load(name) -> table, path, source`), so plain lua5.4 can run it in specs.
-- Must never: read files, touch globals, or accept a key it does not know.
local M = {}

-- Kinds: "string", "boolean", "number" (>= 0), "integer" (>= 0), "list" (array of non-empty
-- strings; merge appends), "abslist" (list of absolute paths), "strmap" (string -> string;
-- merge by key), "rlimit" (integer >= 0, "unlimited", or { soft, hard }), "duration" (seconds as
-- a number, or "30s", "5m", "1h"), "name" (a profile name), "size" (bytes > 0: an integer, or
-- "512K", "512M", "2G", "1T"), "size_or_unlimited" (a size or "unlimited"), "pids" (an integer
-- >= 1 or "unlimited"), "portlist" (a list of TCP ports 1-65535 but the sandbox proxy's own
-- 18080 and 18081; merge appends), "home" ("overlay", "readonly" or "tmpfs"), "depth" (an
-- integer 1 to 16: levels a scan goes below its roots), "transparent" (true, false or
-- "required": network.transparent). A nested table is a sub-schema.
-- The schema is made from cordon.profile_keys, the rows of the one C table of profile keys
-- (engine/sandbox/profile_keys.c): { "network.allow", "list" } becomes schema.network.allow.
M.schema = {}
for _, row in ipairs(require("cordon.profile_keys")) do
    local t, name = M.schema, row[1]
    for part, rest in name:gmatch("([^.]+)(%.?)") do
        if rest == "" then
            t[part] = row[2]
        else
            t[part] = t[part] or {}
            t = t[part]
        end
    end
end

M.NAME_PATTERN = "^[a-z0-9][a-z0-9_-]*$"

function M.valid_name(s)
    return type(s) == "string" and s:match(M.NAME_PATTERN) ~= nil
end

local function is_list(v)
    if type(v) ~= "table" then return false end
    local n = 0
    for k in pairs(v) do
        if math.type(k) ~= "integer" or k < 1 then return false end
        n = n + 1
    end
    return n == #v
end

local function sorted_keys(t)
    local keys = {}
    for k in pairs(t) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    return keys
end

-- Check one value against a kind; nil when fine, else the complaint (without the key).
local checks = {
    string = function(v) if type(v) ~= "string" then return "expected a string" end end,
    boolean = function(v) if type(v) ~= "boolean" then return "expected a boolean" end end,
    number = function(v)
        if type(v) ~= "number" or v < 0 or v ~= v then return "expected a number >= 0" end
    end,
    integer = function(v)
        if math.type(v) ~= "integer" or v < 0 then return "expected an integer >= 0" end
    end,
    name = function(v)
        if not M.valid_name(v) then return "expected a profile name matching " .. M.NAME_PATTERN end
    end,
    list = function(v)
        if not is_list(v) then return "expected a list of strings" end
        for i, s in ipairs(v) do
            if type(s) ~= "string" or s == "" then
                return ("item %d: expected a non-empty string"):format(i)
            end
        end
    end,
    strmap = function(v)
        if type(v) ~= "table" then return "expected a table of NAME = \"value\"" end
        for k, s in pairs(v) do
            if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
                return ("bad name %s: expected [A-Za-z_][A-Za-z0-9_]*"):format(tostring(k))
            end
            if type(s) ~= "string" then return ("%s: expected a string value"):format(k) end
        end
    end,
    duration = function(v)
        if type(v) == "number" and v >= 0 then return end
        if type(v) == "string" and v:match("^%d+[smh]?$") then return end
        return "expected seconds (a number) or a duration like \"30s\", \"5m\", \"1h\""
    end,
}
-- network.transparent: true (on where the kernel can; else the sandbox says so in one line and
-- goes on with the proxy variables), "required" (no sandbox without it), false.
checks.transparent = function(v)
    if type(v) == "boolean" or v == "required" then return end
    return 'expected true, false or "required"'
end
-- The size syntax lua_conv.c parses too (K, M, G, T: powers of 1024), 1 byte to 1 PiB.
local size_units = { [""] = 1, K = 2 ^ 10, M = 2 ^ 20, G = 2 ^ 30, T = 2 ^ 40 }
local function size_ok(v)
    if math.type(v) == "integer" then return v > 0 and v <= 2 ^ 50 end
    if type(v) ~= "string" then return false end
    local n, unit = v:match("^(%d+)([KMGT]?)$")
    if not n then return false end
    local bytes = tonumber(n) * size_units[unit]
    return bytes > 0 and bytes <= 2 ^ 50
end
checks.size = function(v)
    if not size_ok(v) then return "expected a size, 1 byte to 1 PiB: bytes, or \"512M\", \"2G\" (K, M, G, T)" end
end
checks.size_or_unlimited = function(v)
    if v ~= "unlimited" and not size_ok(v) then
        return "expected a size, 1 byte to 1 PiB (bytes, or \"512M\", \"2G\"), or \"unlimited\""
    end
end
checks.pids = function(v)
    if v == "unlimited" then return end
    if math.type(v) ~= "integer" or v < 1 then return "expected an integer >= 1 or \"unlimited\"" end
end
-- The ports the sandbox's own services hold inside (the egress proxy's HTTP and SOCKS5 listeners).
M.RESERVED_PORTS = { [18080] = "the sandbox proxy's HTTP port", [18081] = "the sandbox proxy's SOCKS5 port" }
checks.portlist = function(v)
    if not is_list(v) then return "expected a list of ports" end
    if #v > 32 then return "at most 32 ports" end
    for i, p in ipairs(v) do
        if math.type(p) ~= "integer" or p < 1 or p > 65535 then
            return ("item %d: expected a port 1-65535, got %s"):format(i, tostring(p)), true
        end
        if M.RESERVED_PORTS[p] then
            return ("port %d is %s inside the sandbox: it cannot also be the host's"):format(
                p, M.RESERVED_PORTS[p]), true
        end
    end
end
checks.depth = function(v)
    if math.type(v) ~= "integer" or v < 1 or v > 16 then return "expected an integer, 1 to 16" end
end
checks.home = function(v)
    if v ~= "overlay" and v ~= "readonly" and v ~= "tmpfs" then
        return 'expected "overlay", "readonly" or "tmpfs"'
    end
end
checks.abslist = function(v)
    local e = checks.list(v)
    if e then return e end
    for i, s in ipairs(v) do
        if s:sub(1, 1) ~= "/" then return ("item %d: expected an absolute path"):format(i) end
    end
end
local function rlimit_value(x)
    return x == "unlimited" or (math.type(x) == "integer" and x >= 0)
end
checks.rlimit = function(v)
    if rlimit_value(v) then return end
    if is_list(v) and #v == 2 and rlimit_value(v[1]) and rlimit_value(v[2]) then
        local s, h = v[1], v[2]
        if h ~= "unlimited" and (s == "unlimited" or s > h) then return "soft limit above hard limit" end
        return
    end
    return "expected an integer >= 0, \"unlimited\", or { soft, hard }"
end

local function type_name(v)
    local t = type(v)
    if t == "number" then return math.type(v) end
    return t
end

-- Validate t against schema (M.schema by default). Returns nil when valid, else
-- keypath ("network.allow"), message. Checks keys in sorted order so errors are stable.
function M.validate(t, schema, prefix)
    schema = schema or M.schema
    if type(t) ~= "table" then return prefix or "(profile)", "expected a table, got " .. type_name(t) end
    for _, k in ipairs(sorted_keys(t)) do
        local v = t[k]
        local path = prefix and (prefix .. "." .. tostring(k)) or tostring(k)
        local kind = type(k) == "string" and schema[k] or nil
        if kind == nil then
            return path, "unknown key"
        elseif type(kind) == "table" then
            if type(v) ~= "table" then return path, "expected a table, got " .. type_name(v) end
            local kp, msg = M.validate(v, kind, path)
            if kp then return kp, msg end
        else
            local msg, whole, sub = checks[kind](v)
            if sub then path = path .. "." .. sub end -- the entry at fault, for its line
            if msg then return path, whole and msg or (msg .. ", got " .. type_name(v)) end
        end
    end
    return nil
end

-- Line of the first assignment to the last component of keypath in source, for file:line errors
-- (a table has no line of its own). 1 when it cannot be found.
function M.locate(source, keypath)
    if type(source) ~= "string" then return 1 end
    local comps = {}
    for c in keypath:gmatch("[^.]+") do comps[#comps + 1] = c end
    for i = #comps, 1, -1 do
        local key = comps[i]:gsub("%p", "%%%0")
        local n = 0
        for line in (source .. "\n"):gmatch("([^\n]*)\n") do
            n = n + 1
            if line:find("%f[%w_]" .. key .. "%f[^%w_]%s*=") then return n end
        end
    end
    return 1
end

local function copy(v)
    if type(v) ~= "table" then return v end
    local out = {}
    for k, x in pairs(v) do out[k] = copy(x) end
    return out
end
M.copy = copy

-- Merge over onto base (neither modified), guided by the schema: lists append (without
-- repeating an item), sub-schemas and string maps merge key by key, everything else overrides.
function M.merge(base, over, schema)
    schema = schema or M.schema
    local out = copy(base) or {}
    for k, v in pairs(over or {}) do
        local kind = schema[k]
        if (kind == "list" or kind == "abslist" or kind == "portlist") and type(out[k]) == "table" then
            local seen = {}
            for _, s in ipairs(out[k]) do seen[s] = true end
            for _, s in ipairs(v) do
                if not seen[s] then out[k][#out[k] + 1] = s; seen[s] = true end
            end
        elseif type(kind) == "table" and type(out[k]) == "table" then
            out[k] = M.merge(out[k], v, kind)
        elseif (kind == "strmap" or kind == "grantmap" or kind == "exceptmap" or kind == "credmap")
                and type(out[k]) == "table" then
            for name, s in pairs(v) do out[k][name] = s end
        else
            out[k] = copy(v)
        end
    end
    return out
end

-- Resolve a profile by name through its `extends` chain. load(name) returns the file's table,
-- its path and its source (and raises for an unknown name). Each file is validated on its own,
-- so an error names the file that has the bad key. Raises "path:line: message" (level 0).
function M.resolve(name, load)
    local chain, seen, order = {}, {}, {}
    local cur, from = name, nil
    while cur do
        if seen[cur] then
            order[#order + 1] = cur
            error(("%s:%d: extends cycle: %s"):format(from.path, M.locate(from.source, "extends"),
                table.concat(order, " -> ")), 0)
        end
        seen[cur] = true
        order[#order + 1] = cur
        local t, path, source = load(cur)
        path = path or ("profile '" .. cur .. "'")
        local kp, msg = M.validate(t)
        if kp then
            error(("%s:%d: key '%s': %s"):format(path, M.locate(source, kp), kp, msg), 0)
        end
        from = { path = path, source = source }
        chain[#chain + 1] = t
        cur = t.extends
    end
    local out = {}
    for i = #chain, 1, -1 do out = M.merge(out, chain[i]) end
    out.extends = nil
    out.name = name
    return out
end

-- grants: the caller's agent sockets bound in by name, each at a fixed path under
-- /run/cordon/grants (engine/sandbox/grants.h, docs/grants.md). ssh_agent binds $SSH_AUTH_SOCK
-- (--allow-ssh-agent), gpg_agent gpg-agent's socket and the public keyring (--allow-gpg-agent);
-- sockets = { NAME = { from = "/abs" | "~/x" | "$VAR", env = "VAR" } } any other socket, merged by
-- NAME. "grantmap" is that table.
M.GRANT_BUILTINS = { ssh_agent = true, gpg_agent = true }
M.GRANTS_MAX = 16
-- credentials = { NAME = { hosts = { "host", "host:port", "*.name", ... }, from = "$VAR" |
-- "file:PATH" | "cmd:COMMAND" } }: the caller's secrets the proxy puts into requests to those
-- hosts only (docs/network.md); from defaults to "$NAME". "credmap" is that table, merged by NAME.
M.CREDENTIALS_MAX = 32
checks.credmap = function(v)
    local expect = 'expected a table of NAME = { hosts = { "host", ... }, from = "$VAR" | "file:PATH" | "cmd:..." }'
    if type(v) ~= "table" or is_list(v) and #v > 0 then return expect end
    local names = sorted_keys(v)
    if #names > M.CREDENTIALS_MAX then return ("at most %d credentials"):format(M.CREDENTIALS_MAX), true end
    for _, name in ipairs(names) do
        local e = v[name]
        if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
            return ("bad name %s: expected a variable name"):format(tostring(name)), true
        end
        if type(e) ~= "table" then
            return "expected a table { hosts = ..., from = ... }, got " .. type_name(e), true, name
        end
        for k in pairs(e) do
            if k ~= "from" and k ~= "hosts" then return ("unknown key '%s'"):format(tostring(k)), true, name end
        end
        if type(e.hosts) ~= "table" or #e.hosts == 0 then
            return 'hosts: expected a list of "host" or "host:port", got ' .. type_name(e.hosts), true, name
        end
        for _, host in ipairs(e.hosts) do
            if type(host) ~= "string" or host == "" or host:find("[%s,/@]") then
                return 'hosts: expected "host" or "host:port", got ' .. tostring(host), true, name
            end
        end
        local from = e.from
        if from ~= nil and (type(from) ~= "string" or not (from:match("^%$[%a_][%w_]*$")
                or from:match("^file:.") or from:match("^cmd:."))) then
            return 'from: expected "$VAR", "file:PATH" or "cmd:COMMAND", got ' .. tostring(from), true, name
        end
    end
end

checks.grantmap = function(v)
    if type(v) ~= "table" or is_list(v) and #v > 0 then
        return 'expected a table of NAME = { from = "/path" | "~/path" | "$VAR", env = "VAR" }'
    end
    local names = sorted_keys(v)
    if #names > M.GRANTS_MAX then return ("at most %d sockets"):format(M.GRANTS_MAX), true end
    for _, name in ipairs(names) do
        local e = v[name]
        if not M.valid_name(name) then
            return ("bad name %s: expected %s"):format(tostring(name), M.NAME_PATTERN), true
        end
        if M.GRANT_BUILTINS[name] then
            return ("%s is a built-in grant: grants.%s = true"):format(name, name), true, name
        end
        if type(e) ~= "table" then
            return "expected a table { from = ..., env = ... }, got " .. type_name(e), true, name
        end
        for k in pairs(e) do
            if k ~= "from" and k ~= "env" then return ("unknown key '%s'"):format(tostring(k)), true, name end
        end
        local from = e.from
        if type(from) ~= "string" or not (from:match("^/.") or from:match("^~/.")
                or from:match("^%$[%a_][%w_]*$")) then
            return 'from: expected an absolute path, "~/path" or "$VAR", got ' .. tostring(from), true, name
        end
        if e.env ~= nil and (type(e.env) ~= "string" or not e.env:match("^[%a_][%w_]*$")) then
            return "env: expected a variable name, got " .. tostring(e.env), true, name
        end
    end
end

-- hidden_except: folders hidden by rule (engine/sandbox/hide.h, hide_apply_except). Each
-- DIR = { PATTERN, ... } shows only DIR's entries whose names match a pattern (fnmatch: *, ?,
-- [...]; one name, no '/'), as they are at start: every other name, made at any time, is
-- missing. DIR is absolute or "~/..."; merged by DIR (a later layer's list replaces).
M.HIDDEN_EXCEPT_MAX = 16
checks.exceptmap = function(v)
    if type(v) ~= "table" or is_list(v) and #v > 0 then
        return 'expected a table of DIR = { "PATTERN", ... }'
    end
    local dirs = sorted_keys(v)
    if #dirs > M.HIDDEN_EXCEPT_MAX then return ("at most %d folders"):format(M.HIDDEN_EXCEPT_MAX), true end
    for _, dir in ipairs(dirs) do
        if type(dir) ~= "string" or not (dir:match("^/.") or dir:match("^~/.")) then
            return ('bad folder %s: expected an absolute path or "~/path"'):format(tostring(dir)), true
        end
        local pats = v[dir]
        if not is_list(pats) or #pats == 0 then
            return "expected a non-empty list of name patterns", true, dir
        end
        for i, p in ipairs(pats) do
            if type(p) ~= "string" or p == "" or p:find("[/\t]") then
                return ("item %d: expected a name pattern (no '/')"):format(i), true, dir
            end
        end
    end
end

return M
