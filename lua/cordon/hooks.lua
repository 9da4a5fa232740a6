-- cordon.hooks — the hook names, layer registration and chaining (see lua/HOOKS.md).
-- Owns: which hook names exist, what a layer may return, and how layers wrap each other
-- (`function(input, next)`, `next(input)` calls the layer below; below the lowest layer `next`
-- returns nil). Uses only the standard library. Must never call a hook itself: the C host does,
-- under a budget.
local M = {}

-- Hooks the host calls today, then the planned ones (a layer may already define them).
M.names = { "profile", "environment", "network", "refusal", "escalate" }
local known = {}
for _, n in ipairs(M.names) do known[n] = true end

function M.new_registry()
    local reg = {}
    for _, n in ipairs(M.names) do reg[n] = {} end
    return reg
end

-- A canonical text of v (tables with their keys sorted), to tell whether two values hold the
-- same; depth-bounded, so a table that holds itself ends in "...".
local function canonical(v, depth)
    if type(v) ~= "table" then return type(v) .. ":" .. tostring(v) end
    if depth > 8 then return "..." end
    local keys, parts = {}, {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return canonical(a, 9) < canonical(b, 9) end)
    for _, k in ipairs(keys) do
        parts[#parts + 1] = canonical(k, depth + 1) .. "=" .. canonical(v[k], depth + 1)
    end
    return "{" .. table.concat(parts, ",") .. "}"
end

-- The function a layer defined, for each wrapper made of one: the host names the file and line
-- of the top layer's own function in an error without a position (M.origin).
local origins = setmetatable({}, { __mode = "k" })

-- The function fn wraps (a layer's own), or fn itself.
function M.origin(fn)
    return origins[fn] or fn
end

-- A project's profile hook may choose and shape the profile, but not its credentials: which of
-- the user's secrets leave the machine, for which hosts, is the user's to declare (their own
-- profiles and policy, --credential), as a project's profile file may not declare them either.
-- The wrapped hook's result must carry the credentials the layers below it resolved, unchanged
-- (read as they were when next returned, so a change made in place is seen too).
local function keep_credentials(fn, path)
    local wrapper
    wrapper = function(input, next)
        local below, called = nil, false
        local res = fn(input, function(i)
            local r = next(i)
            called = true
            below = canonical(type(r) == "table" and r.credentials or nil, 0)
            return r
        end)
        local got = canonical(type(res) == "table" and res.credentials or nil, 0)
        if got ~= (called and below or canonical(nil, 0)) then
            error(("%s: hook 'profile': a project's policy may not add or change credentials "
                .. "(declare them in your own profile under ~/.config/cordon/profiles or with "
                .. "--credential)"):format(path), 0)
        end
        return res
    end
    origins[wrapper] = fn
    return wrapper
end

-- Add one layer (what a policy file returned) on top of reg. path names the file in errors;
-- project says it is a project's .cordon/policy.lua (its profile hook keeps the credentials).
function M.add_layer(reg, layer, path, project)
    if type(layer) ~= "table" then
        error(("%s: a policy must return a table of hooks { profile = function(input, next) ... end }, got %s")
            :format(path, type(layer)), 0)
    end
    for k, fn in pairs(layer) do
        if k == M.MARKERS_KEY then
            M.check_markers(fn, layer.refusal, path)
        elseif not known[k] then
            error(("%s: unknown hook '%s' (known: %s)"):format(path, tostring(k),
                table.concat(M.names, ", ")), 0)
        elseif type(fn) ~= "function" then
            error(("%s: hook '%s' must be a function(input, next), got %s"):format(path, k, type(fn)), 0)
        end
    end
    for _, n in ipairs(M.names) do
        local fn = layer[n]
        if fn and n == "profile" and project then fn = keep_credentials(fn, path) end
        if fn then table.insert(reg[n], fn) end
    end
    if layer.refusal then
        local markers = layer[M.MARKERS_KEY]
        if markers == nil then
            reg.refusal_whole_text = true
        else
            reg.refusal_markers = reg.refusal_markers or {}
            for _, m in ipairs(markers) do table.insert(reg.refusal_markers, m) end
        end
    end
end

-- A layer that defines `refusal` may declare, next to it, the plain strings its detector keys
-- on: `refusal_markers = { "Read-only file system", ... }`. A line of output holding none of
-- them cannot show that layer a refusal. When every layer defining `refusal` declared its
-- markers, the hook is given only the lines holding one of them (all layers' markers together;
-- `input.candidates` is then true); else it gets the whole kept text. See lua/HOOKS.md.
M.MARKERS_KEY = "refusal_markers"
M.MARKER_MIN, M.MARKER_MAX, M.MARKERS_MAX = 2, 64, 256

function M.check_markers(markers, refusal, path)
    local function bad(why)
        error(("%s: %s %s"):format(path, M.MARKERS_KEY, why), 0)
    end
    if refusal == nil then bad("needs a refusal hook in the same layer") end
    if type(markers) ~= "table" then bad("must be a list of strings, got " .. type(markers)) end
    local n = 0
    for k in pairs(markers) do
        n = n + 1
        if math.type(k) ~= "integer" or k < 1 then bad("must be a list of strings (keys 1..n)") end
    end
    if n ~= #markers then bad("must be a list of strings (keys 1..n)") end
    if n > M.MARKERS_MAX then bad(("has %d entries, at most %d"):format(n, M.MARKERS_MAX)) end
    for i, m in ipairs(markers) do
        if type(m) ~= "string" or #m < M.MARKER_MIN or #m > M.MARKER_MAX or m:find("\n", 1, true) then
            bad(("[%d]: each must be a string of %d to %d bytes without a newline")
                :format(i, M.MARKER_MIN, M.MARKER_MAX))
        end
    end
end

-- The markers of all layers defining `refusal` (repeats removed), or nil when one of them
-- declared none (its hook sees the whole kept text, and so do the others).
function M.refusal_markers(reg)
    if reg.refusal_whole_text then return nil end
    local out, seen = {}, {}
    for _, m in ipairs(reg.refusal_markers or {}) do
        if not seen[m] then seen[m] = true; out[#out + 1] = m end
    end
    if #out > M.MARKERS_MAX then return nil end
    return out
end

local function bottom() return nil end

-- Compose layers (lowest first) into one function(input); nil when no layer defines the hook.
function M.chain(layers)
    if #layers == 0 then return nil end
    local below = bottom
    for i = 1, #layers do
        local fn, lower = layers[i], below
        below = function(input) return fn(input, lower) end
    end
    return below
end

return M
