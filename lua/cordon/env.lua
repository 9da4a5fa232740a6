-- cordon.env — the default environment decision and the shape of an environment answer.
-- Owns: the default { set, unset } answer built from a resolved profile, and the check of an
-- answer's shape. The meaning of an `unset` pattern (a name, or a glob where only `*` is
-- special) belongs to the C host (engine/base/name_glob.c), which applies the answer.
-- Uses only the standard library. Must never read the process environment itself.
local M = {}

-- The default policy's answer for a resolved profile: the profile's env.set plus the variables
-- every sandboxed command gets, and the profile's env.strip patterns unset.
function M.default(profile)
    local penv = profile.env or {}
    local set = {}
    for k, v in pairs(penv.set or {}) do set[k] = v end
    set.CORDON_SANDBOX = "1"
    set.TMPDIR = "/tmp"
    local unset = {}
    for i, p in ipairs(penv.strip or {}) do unset[i] = p end
    return { set = set, unset = unset }
end

-- Validate an environment hook result. nil when fine, else a message.
function M.check_result(r)
    if type(r) ~= "table" then return "expected a table { set = {...}, unset = {...} }, got " .. type(r) end
    for k in pairs(r) do
        if k ~= "set" and k ~= "unset" then return ("unknown key '%s'"):format(tostring(k)) end
    end
    if r.set ~= nil then
        if type(r.set) ~= "table" then return "set: expected a table" end
        for k, v in pairs(r.set) do
            if type(k) ~= "string" or k == "" or k:find("[=%z]") then
                return ("set: bad variable name %s"):format(tostring(k))
            end
            if type(v) ~= "string" then return ("set.%s: expected a string, got %s"):format(k, type(v)) end
            if v:find("%z") then return ("set.%s: value contains NUL"):format(k) end
        end
    end
    if r.unset ~= nil then
        if type(r.unset) ~= "table" then return "unset: expected a list of names or patterns" end
        local n = 0
        for _ in pairs(r.unset) do n = n + 1 end
        if n ~= #r.unset then return "unset: expected a list (array), not a map" end
        for i, p in ipairs(r.unset) do
            if type(p) ~= "string" or p == "" or p:find("[=%z]") then
                return ("unset[%d]: expected a variable name or pattern"):format(i)
            end
        end
    end
    return nil
end

return M
