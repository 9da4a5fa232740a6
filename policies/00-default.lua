-- policies/00-default.lua — the built-in bottom layer: how a profile name and the command-line
-- flags become the resolved profile, and what environment a sandboxed command gets.
-- A policy file returns a table of hooks; each hook is function(input, next). This is the lowest
-- layer, so `next` here returns nil and is not called. Layers above (the user's
-- ~/.config/cordon/policy.lua, later a trusted project's .cordon/policy.lua) wrap these.
-- Contracts: lua/HOOKS.md.
local profile = require("cordon.profile")
local env = require("cordon.env")

return {
    -- input:  { name = "coding", flags = { <partial profile from CLI flags> } }
    -- result: the resolved profile table (validated by the host).
    profile = function(input, _next)
        -- host.profile(name) finds profiles/NAME.lua (the user's first, then the built-in one),
        -- runs it in its own sandbox and returns its table, path and source.
        local resolved = profile.resolve(input.name, host.profile)
        -- Flags are the top layer of the profile: lists append, scalars override.
        local kp, msg = profile.validate(input.flags)
        if kp then error(("command-line flags: key '%s': %s"):format(kp, msg), 0) end
        local out = profile.merge(resolved, input.flags)
        out.name = input.name
        return out
    end,

    -- input:  { profile = <resolved>, env = { NAME = "value", ... } }
    -- result: { set = { NAME = "value" }, unset = { "NAME", "PATTERN_*" } }
    environment = function(input, _next)
        return env.default(input.profile)
    end,
}
