-- policies/00-default.lua — the built-in bottom layer: how a profile name and the command-line
-- flags become the resolved profile, what environment a sandboxed command gets, and whether
-- a network destination is allowed (the profile's allowlist).
-- A policy file returns a table of hooks; each hook is function(input, next). This is the lowest
-- layer, so `next` here returns nil and is not called. Layers above (the user's
-- ~/.config/cordon/policy.lua, later a trusted project's .cordon/policy.lua) wrap these.
-- Contracts: lua/HOOKS.md.
local profile = require("cordon.profile")
local env = require("cordon.env")
-- cordon.allowlist loads when first needed: the engine compiles the profile's rules while the
-- sandbox is being built, not before (it is the largest module).
local allowlist

-- What a sandboxed command reaches the egress proxy through: the HTTP
-- proxy and the SOCKS5 proxy listen on the sandbox's own loopback.
local HTTP_PROXY = "http://127.0.0.1:18080"
local SOCKS_PROXY = "socks5h://127.0.0.1:18081"
-- Is the caller's home writable in this profile (the workspace may be the home or hold it, or a
-- writable path holds it)?
local function home_writable(p)
    local home = host.home and host.home()
    if p.allow_home_workspace or not home then return p.allow_home_workspace == true end
    for _, w in ipairs(p.writable or {}) do
        if type(w) == "string" then
            if w == "~" or w:sub(1, 2) == "~/" then w = home .. w:sub(2) end
            w = w:gsub("/+$", "")
            if w == "" or home == w or home:sub(1, #w + 1) == w .. "/" then return true end
        end
    end
    return false
end

-- ssh runs ProxyCommand through a shell: the binary is named by its absolute path (quoted).
local function nc_command()
    local exe = host.cordon_exe and host.cordon_exe() or "cordon"
    return "'" .. exe:gsub("'", "'\\''") .. "' nc %h %p"
end

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
        -- coding shows ~/.ssh's known_hosts and config and hides the rest by rule; where the
        -- home is writable, ~/.ssh would be too (a command could plant authorized_keys or a
        -- ProxyCommand for the host's next ssh): there it is hidden whole
        if home_writable(out) then
            out.hidden = out.hidden or {}
            out.hidden[#out.hidden + 1] = "~/.ssh"
        end
        return out
    end,

    -- input:  { profile = <resolved>, env = { NAME = "value", ... } }
    -- result: { set = { NAME = "value" }, unset = { "NAME", "PATTERN_*" } }
    -- unset: the profile's env.strip, and (env.strip_url_passwords) the caller's variables whose
    -- value holds a URL with a password: cordon.env.default.
    -- Unless the network is unrestricted, every proxy variable points at the sandbox proxy
    -- (HTTP clients, SOCKS-capable tools, tools given a ProxyCommand, Node's fetch); with
    -- `network.loopback` the sandbox's own loopback bypasses it. Unrestricted: the caller's
    -- proxy variables stay as they were.
    environment = function(input, _next)
        local r = env.default(input.profile, input.env)
        local net = input.profile.network or {}
        if not net.unrestricted then
            for _, name in ipairs({ "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",
                                    "https_proxy", "all_proxy" }) do
                r.set[name] = HTTP_PROXY
            end
            local no_proxy = net.loopback and "localhost,127.0.0.1,::1" or ""
            r.set.NO_PROXY, r.set.no_proxy = no_proxy, no_proxy
            r.set.CORDON_SOCKS_PROXY = SOCKS_PROXY
            -- for tools that take a ProxyCommand of their own; ssh itself (plain ssh, git, rsync)
            -- has it from the sandbox's /etc/ssh/ssh_config, so GIT_SSH_COMMAND is the caller's
            -- (an -o ProxyCommand there would win over the user's ~/.ssh/config)
            r.set.CORDON_SSH_PROXY_COMMAND = nc_command()
            r.set.NODE_USE_ENV_PROXY = "1"
        end
        return r
    end,

    -- input:  { kind = "http"|"connect"|"socks"|"dns", host = "api.example.com", port = 443,
    --           command = "npm ci" or nil, profile = <the resolved profile> }
    -- result: { verdict = "allow"|"deny"|"ask", rule = "...", reason = "...", suggest = "..." }
    -- The profile's network.allow / network.deny (command-line rules already appended) are
    -- compiled once per resolved profile and cached; a decision is a few hash lookups.
    -- An unlisted destination (no rule matched, none denied it) is "ask" when the profile's
    -- network.ask is on: the engine asks an interactive owner and denies at once without one.
    network = function(input, _next)
        allowlist = allowlist or require("cordon.allowlist")
        local m = allowlist.for_profile(input.profile)
        local d = m:decide(input.kind, input.host, input.port)
        -- kind dns (port 0) is a lookup by the sandbox's DNS stub: answerable when a rule could
        -- allow the name on some port. Never asked about: the name itself is what would leak.
        if d.verdict == "deny" and d.suggest and input.kind ~= "dns" and (input.profile.network or {}).ask then
            d.verdict = "ask"
        end
        return d
    end,
}
