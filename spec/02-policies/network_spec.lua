-- Specs for the `network` hook and the proxy variables of policies/00-default.lua, run under
-- plain lua5.4 in the same sandbox the engine uses, over the real profiles/.
local sandbox = require("cordon.sandbox")
local cenv = require("cordon.env")

local root = os.getenv("CORDON_SOURCE_DIR") or "."

local api
local host = {
    home = function() return "/home/u" end,
    workspace = function() return nil end,
    exists = function() return false end,
}
function host.profile(name)
    local path = root .. "/profiles/" .. name .. ".lua"
    local f = io.open(path)
    if not f then error("unknown profile '" .. name .. "'", 0) end
    local src = f:read("a")
    f:close()
    local chunk = assert(load(src, "@" .. path, "t", sandbox.env(api)))
    return chunk(), path, src
end
api = sandbox.api(_G, host, require)

local policy = assert(loadfile(root .. "/policies/00-default.lua", "t", sandbox.env(api)))()

local function resolved(name, flags)
    return policy.profile({ name = name, flags = flags or {} })
end

local function net(profile, kind, h, port)
    return policy.network({ kind = kind, host = h, port = port, command = "curl", profile = profile })
end

describe("policies/00-default.lua network hook", function()
    local coding = resolved("coding")
    local flagged = resolved("coding", { network = { allow = { "*.example.com:443", "tcp://git.example.com:22" },
                                                     deny = { "secret.example.com" } } })
    -- profile, kind, host, port -> verdict, rule
    local cases = {
        { coding, "connect", "example.com", 443, "ask", nil },  -- unlisted: ask an owner (network.ask)
        { coding, "http", "169.254.169.254", 80, "deny", "169.254.169.254" },
        { coding, "connect", "169.254.43518", 443, "deny", "169.254.169.254" },
        { coding, "http", "[::ffff:169.254.169.254]", 80, "deny", "169.254.169.254" },
        { coding, "http", "Metadata.Google.Internal.", 80, "deny", "metadata.google.internal" },
        { coding, "socks", "metadata.google.internal", 22, "deny", "metadata.google.internal" },
        { flagged, "connect", "api.example.com", 443, "allow", "*.example.com:443" },
        { flagged, "connect", "api.example.com", 80, "ask", nil },
        { flagged, "socks", "git.example.com", 22, "allow", "tcp://git.example.com:22" },
        { flagged, "connect", "secret.example.com", 443, "deny", "secret.example.com" },
        { flagged, "http", "169.254.169.254", 443, "deny", "169.254.169.254" },
    }
    for i, c in ipairs(cases) do
        it(("case %d: %s %s:%d -> %s"):format(i, c[2], c[3], c[4], c[5]), function()
            local r = net(c[1], c[2], c[3], c[4])
            assert.are.equal(c[5], r.verdict, r.reason)
            assert.are.equal(c[6], r.rule)
        end)
    end

    it("command-line rules are appended to the profile's", function()
        local deny = {}
        for _, r in ipairs(coding.network.deny) do deny[#deny + 1] = r end
        deny[#deny + 1] = "secret.example.com"
        assert.are.same(deny, flagged.network.deny)
        assert.are.same({ "*.example.com:443", "tcp://git.example.com:22" }, flagged.network.allow)
    end)

    it("an unlisted host is asked about (network.ask), with the flag that would allow it", function()
        local r = net(coding, "connect", "pypi.org", 443)
        assert.are.same({ verdict = "ask", reason = "not in the allowlist",
                          suggest = "--network-allow pypi.org:443" }, r)
    end)

    it("an unlisted host is denied when the profile does not ask", function()
        local quiet = resolved("coding", { network = { ask = false } })
        local r = net(quiet, "connect", "pypi.org", 443)
        assert.are.same({ verdict = "deny", reason = "not in the allowlist",
                          suggest = "--network-allow pypi.org:443" }, r)
    end)

    it("an invalid rule raises a message naming it", function()
        local p = resolved("coding", { network = { allow = { "*" } } })
        assert.has_error(function() net(p, "connect", "a.test", 443) end,
            "invalid network rule '*': a bare '*' would allow every host; write '*:443' or a domain")
    end)

    it("every built-in profile's rules compile", function()
        for _, name in ipairs({ "coding", "strict", "readonly", "ops" }) do
            local r = net(resolved(name), "connect", "169.254.169.254", 80)
            assert.are.equal("deny", r.verdict, name)
            assert.is_true(resolved(name).network.loopback, name)
        end
    end)
end)

describe("policies/00-default.lua environment hook: proxy variables", function()
    local proxy_names = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy" }

    it("points every client at the sandbox proxy", function()
        local r = policy.environment({ profile = resolved("coding"), env = {} })
        assert.is_nil(cenv.check_result(r))
        for _, n in ipairs(proxy_names) do assert.are.equal("http://127.0.0.1:18080", r.set[n], n) end
        assert.are.equal("localhost,127.0.0.1,::1", r.set.NO_PROXY)
        assert.are.equal("localhost,127.0.0.1,::1", r.set.no_proxy)
        assert.are.equal("socks5h://127.0.0.1:18081", r.set.CORDON_SOCKS_PROXY)
        -- The binary by its absolute path (here the spec's host stand-in has none: "cordon").
        local nc = r.set.CORDON_SSH_PROXY_COMMAND
        assert.truthy(nc:match("^'.*cordon' nc %%h %%p$"), nc)
        -- ssh and git over ssh have it from the sandbox's ssh_config: GIT_SSH_COMMAND is the caller's
        assert.is_nil(r.set.GIT_SSH_COMMAND)
        assert.are.equal("1", r.set.NODE_USE_ENV_PROXY)
    end)

    it("the caller's proxy variables are replaced (the answer sets every one of them)", function()
        -- that set wins over the caller's value is the engine's part (spec/04-engine)
        local r = policy.environment({ profile = resolved("coding"), env = { HTTPS_PROXY = "http://corp:3128",
                                                                             no_proxy = "*" } })
        assert.are.equal("http://127.0.0.1:18080", r.set.HTTPS_PROXY)
        assert.are.equal("localhost,127.0.0.1,::1", r.set.no_proxy)
    end)

    it("NO_PROXY is empty without loopback", function()
        local r = policy.environment({ profile = resolved("coding", { network = { loopback = false } }), env = {} })
        assert.are.equal("", r.set.NO_PROXY)
        assert.are.equal("", r.set.no_proxy)
        assert.are.equal("http://127.0.0.1:18080", r.set.HTTP_PROXY)
    end)

    it("unrestricted: none of them, the caller's stay", function()
        local p = resolved("coding", { network = { unrestricted = true } })
        local r = policy.environment({ profile = p, env = {} })
        for _, n in ipairs(proxy_names) do assert.is_nil(r.set[n], n) end
        assert.is_nil(r.set.NO_PROXY)
        assert.is_nil(r.set.CORDON_SOCKS_PROXY)
        assert.is_nil(r.set.GIT_SSH_COMMAND)
        assert.is_nil(r.set.NODE_USE_ENV_PROXY)
        for _, pattern in ipairs(r.unset) do assert.is_nil(pattern:find("PROXY", 1, true), pattern) end
    end)
end)
