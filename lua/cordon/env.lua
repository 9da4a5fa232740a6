-- cordon.env — the default environment decision and the shape of an environment answer.
-- Owns: the default { set, unset } answer built from a resolved profile, and the check of an
-- answer's shape. The meaning of an `unset` pattern (a name, or a glob where only `*` is
-- special) belongs to the C host (engine/base/name_glob.c), which applies the answer.
-- Uses only the standard library. Must never read the process environment itself.
local M = {}

-- Does value hold a URL with a password in its userinfo (`scheme://user:pass@host`)? Every
-- "://" in the value counts, not only a leading one: lists of URLs (PIP_EXTRA_INDEX_URL) and
-- options (`-Dx=https://u:p@h`) carry them too. The authority runs to the first `/`, `?`, `#`
-- or blank; its userinfo is what precedes its last `@` (a raw `@` in a password is common), and
-- a `:` there means a password follows, even an empty one. Errs on the side of yes.
function M.has_url_password(value)
    local from = 1
    while true do
        local _, e = value:find("://", from, true)
        if not e then return false end
        local authority = value:match("^[^/?#%s]*", e + 1)
        local userinfo = authority:match("^(.*)@")
        if userinfo and userinfo:find(":", 1, true) then return true end
        from = e + 1
    end
end

-- The variables that name the profile's granted sockets at their fixed places inside
-- (engine/sandbox/grants.h): SSH_AUTH_SOCK, GNUPGHOME, each grants.sockets entry's env. A set
-- wins over a strip, so the coding profile's stripping of the caller's SSH_AUTH_SOCK stays for
-- every run without the grant.
M.GRANTS_DIR = "/run/cordon/grants"
M.GNUPG_HOME = "/run/cordon/gnupg"
function M.grant_vars(profile)
    local g, vars = profile.grants or {}, {}
    if g.ssh_agent then vars.SSH_AUTH_SOCK = M.GRANTS_DIR .. "/ssh_agent.sock" end
    if g.gpg_agent then vars.GNUPGHOME = M.GNUPG_HOME end
    for name, e in pairs(g.sockets or {}) do
        if type(e) == "table" and type(e.env) == "string" then
            vars[e.env] = M.GRANTS_DIR .. "/" .. name .. ".sock"
        end
    end
    return vars
end

-- The default policy's answer for a resolved profile and the caller's environment: the
-- profile's env.set plus the variables every sandboxed command gets; unset: the profile's
-- env.strip patterns, and with env.strip_url_passwords the name of every caller's variable
-- whose value has a URL password (in name order, so the answer is stable).
function M.default(profile, caller_env)
    local penv = profile.env or {}
    local set = {}
    for k, v in pairs(penv.set or {}) do set[k] = v end
    set.CORDON_SANDBOX = "1"
    set.TMPDIR = "/tmp"
    for k, v in pairs(M.grant_vars(profile)) do set[k] = v end
    local unset = {}
    for i, p in ipairs(penv.strip or {}) do unset[i] = p end
    if penv.strip_url_passwords then
        local names = {}
        for name, value in pairs(caller_env or {}) do
            -- a name holding `=` (impossible in an environment) would be a bad answer
            if type(name) == "string" and name ~= "" and not name:find("[=%z]")
                    and type(value) == "string" and M.has_url_password(value) then
                names[#names + 1] = name
            end
        end
        table.sort(names)
        for _, name in ipairs(names) do unset[#unset + 1] = name end
    end
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
