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

-- Add one layer (what a policy file returned) on top of reg. path names the file in errors.
function M.add_layer(reg, layer, path)
    if type(layer) ~= "table" then
        error(("%s: a policy must return a table of hooks { profile = function(input, next) ... end }, got %s")
            :format(path, type(layer)), 0)
    end
    for k, fn in pairs(layer) do
        if not known[k] then
            error(("%s: unknown hook '%s' (known: %s)"):format(path, tostring(k),
                table.concat(M.names, ", ")), 0)
        end
        if type(fn) ~= "function" then
            error(("%s: hook '%s' must be a function(input, next), got %s"):format(path, k, type(fn)), 0)
        end
    end
    for _, n in ipairs(M.names) do
        if layer[n] then table.insert(reg[n], layer[n]) end
    end
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
