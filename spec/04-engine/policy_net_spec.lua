-- spec/04-engine/policy_net_spec.lua — `cordon policy net` as a user sees it: verdict, deciding
-- rule and suggestion; exit 0 allow, 1 deny, 2 bad usage with one 'cordon:' line; --json.
-- Drives the built binary ($CORDON_BIN); no network is touched (the decision is the policy's).
local h = require("spec.helpers")

local function net(args)
    local full = { "policy", "net" }
    for _, a in ipairs(args) do full[#full + 1] = a end
    return h.cordon(full)
end

local function lines(s)
    local out = {}
    for l in s:gmatch("[^\n]+") do out[#out + 1] = l end
    return out
end

describe("cordon policy net", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
    end)
    after_each(h.cleanup)

    -- args -> exit code, stdout lines (exact)
    local cases = {
        { { "--allow", "*.example.com:443", "api.example.com", "443" }, 0,
          { "allow", "rule: *.example.com:443", "reason: allowed by rule '*.example.com:443'" } },
        { { "--allow", "*.example.com:443", "--kind", "connect", "API.Example.com.", "443" }, 0,
          { "allow", "rule: *.example.com:443", "reason: allowed by rule '*.example.com:443'" } },
        { { "--allow", "*.example.com:443", "example.com", "443" }, 1,
          { "ask", "reason: not in the allowlist", "suggest: --network-allow example.com:443" } },
        { { "--allow", "example.com", "--kind", "http", "example.com", "80" }, 0,
          { "allow", "rule: example.com", "reason: allowed by rule 'example.com'" } },
        { { "--allow", "example.com", "--kind", "socks", "example.com", "22" }, 1,
          { "ask",
            "reason: not in the allowlist (rule 'example.com' allows only HTTP and CONNECT; SOCKS needs a tcp:// entry)",
            "suggest: --network-allow tcp://example.com:22" } },
        { { "--allow", "tcp://git.example.com:22", "--kind=socks", "git.example.com", "22" }, 0,
          { "allow", "rule: tcp://git.example.com:22", "reason: allowed by rule 'tcp://git.example.com:22'" } },
        { { "--allow", "*:443", "--deny", "evil.test", "evil.test", "443" }, 1,
          { "deny", "rule: evil.test", "reason: denied by rule 'evil.test'" } },
        -- the coding profile denies cloud metadata, however it is spelled
        { { "--allow", "*:80", "--kind", "http", "169.254.43518", "80" }, 1,
          { "deny", "rule: 169.254.169.254", "reason: denied by rule '169.254.169.254'" } },
        { { "--allow", "127.0.0.1:8080", "--kind", "http", "0x7f.1", "8080" }, 0,
          { "allow", "rule: 127.0.0.1:8080", "reason: allowed by rule '127.0.0.1:8080'" } },
        { { "--allow", "[::1]:443", "[0:0::1]", "443" }, 0,
          { "allow", "rule: [::1]:443", "reason: allowed by rule '[::1]:443'" } },
        { { "--allow", "*:443", "example.com%2e.evil", "443" }, 1,
          { "deny", "reason: refused host: contains '%' (percent-encoding or an IPv6 zone)" } },
        { { "--allow", "*:443", "a..b", "443" }, 1, { "deny", "reason: refused host: empty label" } },
        -- unlisted: the coding profile asks an owner (network.ask); policy net has none: exit 1
        { { "--", "example.com", "443" }, 1,
          { "ask", "reason: not in the allowlist", "suggest: --network-allow example.com:443" } },
    }
    for i, c in ipairs(cases) do
        it(("case %d: %s -> %d"):format(i, table.concat(c[1], " "), c[2]), function()
            local r = net(c[1])
            assert.are.equal(c[2], r.code, h.describe(r))
            assert.are.same(c[3], lines(r.stdout), h.describe(r))
            assert.are.equal("", r.stderr, h.describe(r))
        end)
    end

    -- args -> stderr pattern; every one exits 2 with one 'cordon: policy net:' line
    local bad = {
        { { "--allow", "*", "a.test", "443" },
          "invalid network rule '*': a bare '*' would allow every host; write '*:443' or a domain" },
        { { "--deny", "a.*.test", "a.test", "443" }, "invalid network rule 'a.*.test'" },
        { { "--allow", "a.test:0", "a.test", "443" }, "port 0 is outside 1..65535" },
        { { "--allow", "ftp://a.test", "a.test", "443" }, "unsupported scheme 'ftp://'" },
        { { "--allow", "tcp://a.test", "a.test", "443" }, "a tcp:// rule needs a port" },
        { { "a.test", "0" }, "invalid port '0'" },
        { { "a.test", "65536" }, "invalid port '65536'" },
        { { "a.test", "https" }, "invalid port 'https'" },
        { { "a.test", "-1" }, "invalid port '-1'" },
        { { "--kind", "udp", "a.test", "443" }, "invalid --kind 'udp'" },
        { { "a.test" }, "expected HOST PORT" },
        { {}, "expected HOST PORT" },
        { { "a.test", "443", "extra" }, "too many arguments" },
        { { "--allow" }, "--allow needs a value" },
        { { "--frobnicate", "a.test", "443" }, "unknown option '--frobnicate'" },
    }
    for i, c in ipairs(bad) do
        it(("bad usage %d: %s -> 2"):format(i, table.concat(c[1], " ")), function()
            local r = net(c[1])
            assert.are.equal(2, r.code, h.describe(r))
            local l = lines(r.stderr)
            assert.are.equal(1, #l, h.describe(r))
            assert.truthy(l[1]:find("^cordon: policy net: "), h.describe(r))
            assert.truthy(l[1]:find(c[2], 1, true), h.describe(r))
            assert.are.equal("", r.stdout, h.describe(r))
        end)
    end

    it("--json prints one object", function()
        local r = net({ "--json", "--allow", "*.example.com:443", "--kind", "http", "api.example.com", "80" })
        assert.are.equal(1, r.code, h.describe(r))
        local v = assert(h.last_json(r.stdout))
        assert.are.equal("ask", v.verdict)
        assert.are.equal("http", v.kind)
        assert.are.equal("api.example.com", v.host)
        assert.are.equal(80, v.port)
        assert.are.equal("not in the allowlist", v.reason)
        assert.are.equal("--network-allow api.example.com:80", v.suggest)
        r = net({ "--json", "--allow", "*.example.com:443", "api.example.com", "443" })
        assert.are.equal(0, r.code, h.describe(r))
        v = assert(h.last_json(r.stdout))
        assert.are.equal("allow", v.verdict)
        assert.are.equal("*.example.com:443", v.rule)
    end)

    it("uses the user's policy layer, like the proxy", function()
        local home = h.tmpdir()
        h.sh_ok("mkdir -p " .. h.quote(home .. "/.config/cordon"))
        h.write_file(home .. "/.config/cordon/policy.lua", [[
return { network = function(input, next)
    if input.host == "ask.test" then return { verdict = "ask", reason = "a person decides" } end
    if input.host == "broken.test" then return { verdict = "yes" } end
    return next(input)
end }
]])
        local r = h.cordon({ "policy", "net", "ask.test", "443" }, { home = home })
        assert.are.equal(1, r.code, h.describe(r))
        assert.are.same({ "ask", "reason: a person decides" }, lines(r.stdout))
        r = h.cordon({ "policy", "net", "--allow", "*:443", "broken.test", "443" }, { home = home })
        assert.are.equal(1, r.code, h.describe(r))
        assert.are.equal("deny", lines(r.stdout)[1], h.describe(r))
        assert.truthy(r.stdout:find("policy error: .*policy.lua:1: network result: verdict must be"), h.describe(r))
        r = h.cordon({ "policy", "net", "--allow", "*:443", "fine.test", "443" }, { home = home })
        assert.are.equal(0, r.code, h.describe(r))
    end)

    it("cordon run refuses an invalid rule with exit 125 and one line naming it", function()
        local r = h.cordon({ "run", "--network-allow", "*", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.are.equal("cordon: invalid network rule '*': a bare '*' would allow every host; "
            .. "write '*:443' or a domain\n", r.stderr)
        r = h.cordon({ "run", "--network-deny", "tcp://x", "--", "true" })
        assert.are.equal(125, r.code, h.describe(r))
        assert.truthy(r.stderr:find("invalid network rule 'tcp://x'", 1, true), h.describe(r))
    end)
end)
